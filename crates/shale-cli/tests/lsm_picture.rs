//! The LSM shape picture on a real DB made by the engine: `shale stats DB
//! --svg FILE` and `shale render-stats STATS.json --svg FILE` (from a saved
//! `stats --typed`) draw the same picture, one panel per family, whose rows
//! (L0 on top) carry the files, bytes and scores of `Db::stats()`, with
//! bars to scale and every text inside the viewBox.

mod common;

use common::*;
use shale_chart::verify::{parse, Parsed};

fn picture(path: &std::path::Path) -> Parsed {
    let svg = std::fs::read_to_string(path).unwrap();
    let p = parse(&svg).unwrap_or_else(|e| panic!("{e}\n{svg}"));
    assert!(p.texts_outside().is_empty(), "{:?}", p.texts_outside());
    p
}

#[test]
fn stats_svg_and_render_stats_draw_the_lsm_shape() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("db");
    // Three families with tables, all compacted to the bottom, then new
    // L0 tables in default: two non-empty levels there.
    make_db(&dir);
    let db = path_str(&dir);
    ok(&["compact", db]);
    make_tables_db(&dir, 30, 10);

    let svg1 = d.path().join("shape.svg");
    assert_eq!(ok(&["stats", db, "--svg", path_str(&svg1)]), "");
    let typed = ok(&["stats", db, "--typed"]);
    let saved = d.path().join("stats.json");
    std::fs::write(&saved, &typed).unwrap();
    let svg2 = d.path().join("from-json.svg");
    assert_eq!(
        ok(&["render-stats", path_str(&saved), "--svg", path_str(&svg2)]),
        ""
    );

    let stats = &json_lines(&typed)[0];
    let (p1, p2) = (picture(&svg1), picture(&svg2));
    assert_eq!(p1.title, format!("LSM shape of {db}"));
    assert_eq!(
        p1.panels, p2.panels,
        "the DB and its saved stats draw alike"
    );
    let families = stats["families"].as_array().unwrap();
    assert_eq!(p1.panels.len(), families.len());
    assert_eq!(families.len(), 3);
    for (panel, fam) in p1.panels.iter().zip(families) {
        assert_eq!(panel.kind, "level-chart");
        assert_eq!(
            panel.title,
            format!("column family {}", fam["name"].as_str().unwrap())
        );
        assert_eq!(panel.legend.len(), 2);
        let levels = fam["levels"].as_array().unwrap();
        assert_eq!(panel.levels.len(), levels.len());
        // L0 on top, then L1, L2...
        assert!(panel.levels.windows(2).all(|w| w[0].y < w[1].y));
        let largest = levels
            .iter()
            .map(|l| l["bytes"].as_u64().unwrap())
            .max()
            .unwrap();
        let widest = panel
            .levels
            .iter()
            .filter_map(|l| l.bar_width)
            .fold(0.0, f64::max);
        for (i, (row, lv)) in panel.levels.iter().zip(levels).enumerate() {
            let bytes = lv["bytes"].as_u64().unwrap();
            assert_eq!(row.label, format!("L{i}"));
            assert_eq!(row.files, lv["files"].as_u64().unwrap());
            assert_eq!(row.bytes, bytes);
            assert!((row.score - lv["score"].as_f64().unwrap()).abs() < 1e-9);
            assert!(
                row.details.starts_with(&format!("{} file", row.files)),
                "{}",
                row.details
            );
            assert!(row.details.contains(" · score "), "{}", row.details);
            match row.bar_width {
                None => assert_eq!(bytes, 0),
                Some(w) => {
                    let want = (bytes as f64 / largest as f64 * widest).max(2.0);
                    assert!((w - want).abs() < 0.2, "L{i}: {w} vs {want}");
                }
            }
        }
    }
    let default = &p1.panels[0];
    let non_empty = default.levels.iter().filter(|l| l.files > 0).count();
    assert!(non_empty >= 2, "{:?}", default.levels);
    assert!(default.levels[0].files >= 3, "{:?}", default.levels[0]);
    assert!(
        default.levels[0].details.contains(" KiB"),
        "{}",
        default.levels[0].details
    );

    // One family only.
    let one = d.path().join("users.svg");
    ok(&["stats", db, "--cf", "users", "--svg", path_str(&one)]);
    let p = picture(&one);
    assert_eq!(p.panels.len(), 1);
    assert_eq!(p.panels[0].title, "column family users");
}

#[test]
fn render_stats_reports_bad_input_and_unwritable_output() {
    let d = tempfile::tempdir().unwrap();
    let junk = d.path().join("junk.json");
    std::fs::write(&junk, "not json").unwrap();
    let out = d.path().join("o.svg");
    let r = shale(&["render-stats", path_str(&junk), "--svg", path_str(&out)]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("not the output of `shale stats --typed`"),
        "{}",
        r.stderr
    );
    let wrong = d.path().join("wrong.json");
    std::fs::write(&wrong, r#"{"families": [{"name": "x"}]}"#).unwrap();
    let r = shale(&["render-stats", path_str(&wrong), "--svg", path_str(&out)]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("missing field `levels`"), "{}", r.stderr);
    let missing = shale(&[
        "render-stats",
        "/no/such/stats.json",
        "--svg",
        path_str(&out),
    ]);
    assert_eq!(missing.code, 2);
    assert!(!out.exists());

    let dir = d.path().join("db");
    make_tables_db(&dir, 10, 5);
    let r = shale(&["stats", path_str(&dir), "--svg", "/no/such/dir/o.svg"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("cannot write /no/such/dir/o.svg"),
        "{}",
        r.stderr
    );
    let r = shale(&["stats", path_str(&dir), "--svg", path_str(&out), "--typed"]);
    assert_eq!(r.code, 2, "--svg and --typed conflict");
}
