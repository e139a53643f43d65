//! Helpers shared by the bench's integration tests: run `shale-bench` in
//! process on parsed flags, capturing its stdout.

use shale_bench::runner::{self, Out};
use shale_bench::{BenchRecord, Flags};

/// Runs the bench with `args`; the records (or the error) and its stdout.
pub fn run(args: &[String]) -> (shale_bench::Result<Vec<BenchRecord>>, String) {
    let flags = match Flags::parse(args) {
        Ok(f) => f,
        Err(e) => return (Err(e), String::new()),
    };
    let (mut o, mut e) = (Vec::new(), Vec::new());
    let r = runner::run(
        &flags,
        &mut Out {
            stdout: &mut o,
            stderr: &mut e,
        },
    );
    (r, String::from_utf8_lossy(&o).into_owned())
}

/// [`run`] that must succeed.
pub fn run_ok(args: &[String]) -> (Vec<BenchRecord>, String) {
    let (r, out) = run(args);
    match r {
        Ok(recs) => (recs, out),
        Err(e) => panic!("run failed: {e}\nstdout:\n{out}"),
    }
}

/// Flags of a small Shale run on `db` (no compression, 64 KiB memtables:
/// flushes and compactions at test sizes), then `extra`.
#[allow(dead_code)] // not every test binary uses it
pub fn shale_args(db: &std::path::Path, extra: &[&str]) -> Vec<String> {
    let mut a = vec![
        "--engine=shale".to_string(),
        format!("--db={}", db.display()),
        "--compression_type=none".to_string(),
        "--write_buffer_size=65536".to_string(),
    ];
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}
