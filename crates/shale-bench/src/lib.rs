//! shale-bench: a db_bench-compatible benchmark driver for Shale (and, for
//! comparison, RocksDB), as a library with a thin binary.
//!
//! `run(args)` parses gflags-style flags and runs the `--benchmarks` list,
//! printing db_bench's header, result lines and histograms plus a resource
//! summary per benchmark; `shale-bench compare A.json B.json [--plot
//! FILE]` compares `--json` outputs (and overlays them in an SVG). See the
//! module headers for each concept.

#![warn(missing_docs)]

pub mod benchmarks;
pub mod blob_stats;
pub mod chart;
pub mod clock;
pub mod compare_cmd;
pub mod engine;
pub mod error;
pub mod flags;
pub mod header;
pub mod histogram;
pub mod keys;
pub mod level_amp;
pub mod livekeys;
pub mod merge_operator;
pub mod mt19937;
pub mod pacer;
pub mod plot;
pub mod ratelimit;
pub mod repeat;
pub mod report;
pub mod reporter;
pub mod runner;
pub mod seeds;
pub mod space_sampler;
pub mod stats;
pub mod sysinfo;
pub mod values;

pub use error::{Error, Result};
pub use flags::Flags;
pub use report::BenchRecord;

/// Runs the tool with `args` (without the program name), printing to the
/// process's stdout and stderr. Returns the process exit code.
pub fn run<S: AsRef<str>>(args: &[S]) -> Result<i32> {
    let mut stdout = std::io::stdout().lock();
    let mut stderr = std::io::stderr();
    if args.first().map(|a| a.as_ref()) == Some("compare") {
        let text = compare_cmd::run(&args[1..])?;
        use std::io::Write;
        stdout.write_all(text.as_bytes())?;
        return Ok(0);
    }
    if args
        .iter()
        .any(|a| matches!(a.as_ref(), "--help" | "-help" | "-h"))
    {
        use std::io::Write;
        stdout.write_all(Flags::help().as_bytes())?;
        return Ok(0);
    }
    let flags = Flags::parse(args)?;
    let mut out = runner::Out {
        stdout: &mut stdout,
        stderr: &mut stderr,
    };
    runner::run(&flags, &mut out)?;
    Ok(0)
}
