//! The endpoint over loopback (127.0.0.1, an ephemeral port): every line
//! of the scrape is well-formed text exposition, the values match
//! `Db::stats()` after a known workload, other paths get 404, stopping
//! joins the thread and closes the port; and every query of the Grafana
//! dashboard (docs/grafana/shale.json) names only metrics the endpoint
//! exposes.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};

use shale::{Db, Options};

/// One sample: name, labels, value.
type Sample = (String, BTreeMap<String, String>, f64);

fn get(addr: SocketAddr, path: &str) -> (u16, String, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut resp = String::new();
    s.read_to_string(&mut resp).unwrap();
    let (head, body) = resp.split_once("\r\n\r\n").expect("a header");
    let status: u16 = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, head.to_string(), body.to_string())
}

/// The port stops accepting (tiny_http's accept thread, woken by the
/// server's drop, closes the listener on its way out).
fn assert_closes(addr: SocketAddr) {
    let t = std::time::Instant::now();
    while TcpStream::connect(addr).is_ok() {
        assert!(
            t.elapsed() < std::time::Duration::from_secs(5),
            "still listening"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

fn is_name(s: &str) -> bool {
    let mut c = s.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_' || f == ':')
        && c.all(|x| x.is_ascii_alphanumeric() || x == '_' || x == ':')
}

/// Parses the exposition, asserting every line is well-formed: `# HELP`,
/// `# TYPE` (a known type), `# UNIT`, the final `# EOF`, or a sample
/// `name{k="v",...} value` of a declared metric family.
fn parse(body: &str) -> Vec<Sample> {
    let lines: Vec<&str> = body.lines().collect();
    assert_eq!(lines.last(), Some(&"# EOF"), "ends with # EOF");
    let mut declared = BTreeSet::new();
    let mut out = Vec::new();
    for line in &lines[..lines.len() - 1] {
        if let Some(rest) = line.strip_prefix("# ") {
            let mut p = rest.splitn(3, ' ');
            let kind = p.next().unwrap();
            let name = p.next().expect("a metric name");
            assert!(is_name(name), "{line}");
            match kind {
                "HELP" => assert!(p.next().is_some_and(|h| !h.is_empty()), "{line}"),
                "TYPE" => {
                    let t = p.next().unwrap();
                    assert!(["counter", "gauge"].contains(&t), "{line}");
                    declared.insert(name.to_string());
                }
                "UNIT" => {}
                _ => panic!("unknown comment {line}"),
            }
            continue;
        }
        let (series, value) = line.rsplit_once(' ').expect(line);
        let value: f64 = value.parse().unwrap_or_else(|_| panic!("{line}"));
        let (name, labels) = match series.split_once('{') {
            Some((n, rest)) => {
                let inner = rest.strip_suffix('}').expect(line);
                let mut m = BTreeMap::new();
                for kv in inner.split(',') {
                    let (k, v) = kv.split_once('=').expect(line);
                    assert!(is_name(k), "{line}");
                    let v = v
                        .strip_prefix('"')
                        .and_then(|v| v.strip_suffix('"'))
                        .expect(line);
                    m.insert(k.to_string(), v.to_string());
                }
                (n, m)
            }
            None => (series, BTreeMap::new()),
        };
        assert!(is_name(name), "{line}");
        assert!(name.starts_with("shale_"), "{line}");
        let family = name.strip_suffix("_total").unwrap_or(name);
        assert!(
            declared.contains(family) || declared.contains(name),
            "{line}: no # TYPE"
        );
        out.push((name.to_string(), labels, value));
    }
    out
}

fn value(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> f64 {
    let want: BTreeMap<String, String> = labels
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let hits: Vec<f64> = samples
        .iter()
        .filter(|(n, l, _)| n == name && *l == want)
        .map(|s| s.2)
        .collect();
    assert_eq!(hits.len(), 1, "{name} {labels:?}");
    hits[0]
}

fn workload_db(dir: &std::path::Path) -> Db {
    let opts = Options {
        create_if_missing: true,
        cache_size: 8 << 20,
        cf: shale::CfOptions {
            level0_file_num_compaction_trigger: 100,
            level0_slowdown_writes_trigger: 100,
            level0_stop_writes_trigger: 100,
            ..Default::default()
        },
        ..Options::default()
    };
    let db = Db::open(dir, opts).unwrap();
    let cf = db.create_cf("users", Default::default()).unwrap();
    for round in 0..3u32 {
        for i in 0..200u32 {
            db.put(format!("k{i:05}").as_bytes(), &[b'v'; 64]).unwrap();
        }
        db.put_cf(&cf, format!("u{round}").as_bytes(), b"x")
            .unwrap();
        db.flush().unwrap();
    }
    for _ in 0..4 {
        db.get(b"k00007").unwrap().unwrap();
    }
    db.get(b"absent").unwrap();
    db.wait_for_compaction().unwrap();
    db
}

#[test]
fn scrape_matches_stats() {
    let dir = tempfile::tempdir().unwrap();
    let db = workload_db(dir.path());
    let server = shale_metrics::serve(&db, "127.0.0.1:0").unwrap();
    let addr = server.local_addr();
    assert!(addr.ip().is_loopback() && addr.port() != 0);
    let (status, head, body) = get(addr, "/metrics");
    assert_eq!(status, 200);
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: application/openmetrics-text"),
        "{head}"
    );
    let samples = parse(&body);
    let s = db.stats();
    let v = |n: &str, l: &[(&str, &str)]| value(&samples, n, l);
    assert_eq!(v("shale_flushes_total", &[]), 3.0);
    assert_eq!(v("shale_flushes_total", &[]), s.compaction.flushes as f64);
    assert_eq!(
        v("shale_flush_bytes_total", &[]),
        s.compaction.flush_bytes as f64
    );
    assert_eq!(
        v("shale_level_files", &[("cf", "default"), ("level", "0")]),
        3.0
    );
    assert_eq!(
        v("shale_level_bytes", &[("cf", "default"), ("level", "0")]),
        s.families[0].levels[0].bytes as f64
    );
    // The users family's memtable holds its three unflushed keys.
    assert_eq!(
        v("shale_estimated_num_keys", &[("cf", "users")]),
        s.families[1].estimated_num_keys as f64
    );
    assert_eq!(s.families[1].estimated_num_keys, 3);
    assert_eq!(v("shale_writes_total", &[]), 603.0);
    assert_eq!(v("shale_keys_read_total", &[]), 5.0);
    assert_eq!(
        v("shale_block_cache_hits_total", &[("type", "data")]),
        s.cache.data_hits as f64
    );
    assert!(s.cache.data_hits >= 3);
    assert_eq!(
        v("shale_block_cache_misses_total", &[("type", "index")]),
        s.cache.index_misses as f64
    );
    assert_eq!(
        v("shale_bloom_useful_total", &[]),
        s.cache.bloom_useful as f64
    );
    assert_eq!(v("shale_wal_bytes_total", &[]), s.wal.bytes as f64);
    assert_eq!(v("shale_write_amplification", &[]), 1.0);
    assert_eq!(
        v("shale_memory_bytes", &[("component", "block_cache")]),
        s.memory.block_cache as f64
    );
    assert_eq!(v("shale_stalls_total", &[("cause", "l0_slowdown")]), 0.0);
    assert_eq!(
        v("shale_stalls_active", &[("cause", "background_error")]),
        0.0
    );
    assert_eq!(v("shale_write_stall_state", &[("cf", "users")]), 0.0);
    let wal = s.io.purpose("wal").unwrap();
    assert!(wal.write_bytes > 0);
    assert_eq!(
        v("shale_io_write_bytes_total", &[("purpose", "wal")]),
        wal.write_bytes as f64
    );

    assert_eq!(get(addr, "/nothing").0, 404);
    server.stop();
    assert_closes(addr);
    drop(db);
}

#[test]
fn dropping_the_server_stops_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(
        dir.path(),
        Options {
            create_if_missing: true,
            ..Options::default()
        },
    )
    .unwrap();
    let server = shale_metrics::serve(&db, "127.0.0.1:0").unwrap();
    let addr = server.local_addr();
    assert_eq!(get(addr, "/metrics").0, 200);
    drop(server);
    assert_closes(addr);
    assert!(matches!(
        shale_metrics::serve(&db, "256.0.0.1:0"),
        Err(shale_metrics::Error::Bind(_))
    ));
}

/// Every `shale_*` name in a panel query of docs/grafana/shale.json is one
/// the endpoint exposes (a sample name of a real scrape).
#[test]
fn dashboard_queries_name_exposed_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let db = workload_db(dir.path());
    let server = shale_metrics::serve(&db, "127.0.0.1:0").unwrap();
    let (_, _, body) = get(server.local_addr(), "/metrics");
    let exposed: BTreeSet<String> = parse(&body).into_iter().map(|s| s.0).collect();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/grafana/shale.json");
    let dash: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let panels = dash["panels"].as_array().expect("panels");
    let mut used = BTreeSet::new();
    for p in panels {
        let targets = p["targets"].as_array().expect("targets");
        assert!(!targets.is_empty(), "{}", p["title"]);
        for t in targets {
            let expr = t["expr"].as_str().expect("expr");
            let names: Vec<&str> = expr
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .filter(|w| w.starts_with("shale_"))
                .collect();
            assert!(!names.is_empty(), "{expr}");
            for n in names {
                assert!(exposed.contains(n), "{}: {n} is not exposed", p["title"]);
                used.insert(n.to_string());
            }
        }
    }
    // The dashboard covers what it is for.
    for n in [
        "shale_stalls_active",
        "shale_level_files",
        "shale_pending_compaction_bytes",
        "shale_write_amplification",
        "shale_block_cache_hits_total",
        "shale_writes_total",
        "shale_keys_read_total",
    ] {
        assert!(used.contains(n), "no panel shows {n}");
    }
}
