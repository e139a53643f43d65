//! The LSM shape picture (`shale stats --svg`, `shale render-stats`): one
//! panel per column family, one row per level with L0 on top, each with
//! its table files, bytes (binary units) and compaction score, and a bar
//! as wide as its bytes (to scale within the family), drawn by
//! shale-chart.
//!
//! The input is the typed statistics as `shale stats --typed` prints them
//! (`Db::stats()` serialized): a live DB is rendered through the same JSON,
//! so a picture made later from a saved `--typed` output is the same
//! picture. Only the fields drawn are read; others are ignored, so outputs
//! of older or newer engines render as long as those fields are there.

use std::path::Path;

use serde::Deserialize;
use shale_chart::{format_bytes, Figure, LevelChart, LevelRow};

use crate::error::CliError;

/// The part of `Db::stats()` the picture needs.
#[derive(Debug, Deserialize)]
struct StatsDoc {
    families: Vec<FamilyDoc>,
}

#[derive(Debug, Deserialize)]
struct FamilyDoc {
    name: String,
    levels: Vec<LevelDoc>,
    #[serde(default)]
    base_level: Option<usize>,
    #[serde(default)]
    pending_compaction_bytes: Option<u64>,
    #[serde(default)]
    estimated_num_keys: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct LevelDoc {
    level: usize,
    files: u64,
    #[serde(default)]
    files_compacting: u64,
    bytes: u64,
    score: f64,
}

fn family_chart(f: &FamilyDoc) -> LevelChart {
    let files: u64 = f.levels.iter().map(|l| l.files).sum();
    let bytes: u64 = f.levels.iter().map(|l| l.bytes).sum();
    let mut note = format!(
        "{files} {} · {}",
        if files == 1 { "file" } else { "files" },
        format_bytes(bytes)
    );
    if let Some(k) = f.estimated_num_keys {
        note.push_str(&format!(" · ~{k} keys"));
    }
    if let Some(b) = f.base_level {
        note.push_str(&format!(" · L0 compacts into L{b}"));
    }
    if let Some(p) = f.pending_compaction_bytes {
        note.push_str(&format!(" · pending compaction {}", format_bytes(p)));
    }
    let mut levels: Vec<&LevelDoc> = f.levels.iter().collect();
    levels.sort_by_key(|l| l.level);
    LevelChart {
        title: format!("column family {}", f.name),
        note,
        rows: levels
            .into_iter()
            .map(|l| LevelRow {
                label: format!("L{}", l.level),
                files: l.files,
                compacting: l.files_compacting,
                bytes: l.bytes,
                score: l.score,
            })
            .collect(),
    }
}

/// The picture of `stats` (the JSON of `Db::stats()`), titled `title`;
/// `only` keeps one family. `source` names the input in errors.
pub fn figure(
    stats: serde_json::Value,
    title: &str,
    only: Option<&str>,
    source: &str,
) -> Result<Figure, CliError> {
    let doc: StatsDoc = serde_json::from_value(stats).map_err(|e| {
        CliError::Usage(format!(
            "{source}: not the output of `shale stats --typed`: {e}"
        ))
    })?;
    let mut fig = Figure::new(title);
    fig.note(
        "Per level, L0 on top: table files, bytes and compaction score; bar width is bytes, \
         to scale within a family.",
    );
    let mut drawn = 0;
    for f in doc
        .families
        .iter()
        .filter(|f| only.is_none_or(|n| n == f.name))
    {
        fig.push(family_chart(f));
        drawn += 1;
    }
    if let (Some(n), 0) = (only, drawn) {
        return Err(CliError::Usage(format!("{source}: no column family '{n}'")));
    }
    if drawn == 0 {
        fig.note("no column family");
    }
    Ok(fig)
}

/// Writes `fig` to `path`.
pub fn write(path: &Path, fig: &Figure) -> Result<(), CliError> {
    std::fs::write(path, fig.to_svg()).map_err(|e| CliError::Write(path.to_path_buf(), e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_only_the_fields_it_draws() {
        let stats = json!({
            "uptime_secs": 1.0,
            "families": [{
                "name": "users",
                "levels": [
                    {"level": 1, "files": 2, "bytes": 3072, "score": 1.5, "extra": true},
                    {"level": 0, "files": 1, "files_compacting": 1, "bytes": 100, "score": 0.25}
                ]
            }]
        });
        let fig = figure(stats.clone(), "t", None, "s.json").unwrap();
        let shale_chart::Panel::Levels(c) = &fig.panels[0] else {
            panic!("not a level chart");
        };
        assert_eq!(c.title, "column family users");
        assert_eq!(c.note, "3 files · 3.1 KiB");
        assert_eq!(c.rows[0].label, "L0");
        assert_eq!(c.rows[0].compacting, 1);
        assert_eq!(c.rows[1].details(), "2 files · 3.0 KiB · score 1.50");
        let err = figure(stats, "t", Some("nope"), "s.json").unwrap_err();
        assert!(err.to_string().contains("no column family 'nope'"), "{err}");
        let err = figure(json!({"families": [{"name": 1}]}), "t", None, "s.json").unwrap_err();
        assert!(
            err.to_string()
                .contains("s.json: not the output of `shale stats --typed`"),
            "{err}"
        );
    }
}
