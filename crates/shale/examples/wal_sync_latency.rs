//! Sync latency of WAL-like appends by how the file's blocks were prepared
//! (docs/PERFORMANCE.md, "Write shaping"): APPENDS appends of 1 KiB, each
//! followed by `fdatasync`, timed per sync; median, p99 and total printed per
//! case. Not a test: a measurement to run by hand on the disk in question.
//!
//!     cargo run --release -p shale --example wal_sync_latency [DIR] [APPENDS]
//!
//! Cases:
//! - `fallocate+mmap`: today's default WAL (`wal_mmap_writes`): 1 MiB windows
//!   reserved with `fallocate` (unwritten extents) and written through a
//!   shared mapping.
//! - `zeroed+write`: the file first filled with zeros (written, synced), then
//!   overwritten from offset 0 with `write(2)`.
//! - `recycled+write`: a file left by an earlier run of the `append+write`
//!   case (written blocks holding old data), overwritten from 0 with `write(2)`.
//! - `recycled+mmap`: the same, written through `FileSystem::reuse_writable`
//!   (what `recycle_log_file_num` does with `wal_mmap_writes`).
//! - `append+write`: a new empty file appended with `write(2)`.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use shale::fs::{FileSystem, PosixFileSystem, WritableFile};

const RECORD: usize = 1024;

fn report(name: &str, mut lat: Vec<Duration>) {
    lat.sort();
    let total: Duration = lat.iter().sum();
    let pick = |q: f64| lat[((lat.len() as f64 * q) as usize).min(lat.len() - 1)];
    println!(
        "{name:<16} syncs={:<6} median_us={:<7.1} p99_us={:<7.1} max_us={:<8.1} total_s={:.2}",
        lat.len(),
        pick(0.5).as_secs_f64() * 1e6,
        pick(0.99).as_secs_f64() * 1e6,
        lat[lat.len() - 1].as_secs_f64() * 1e6,
        total.as_secs_f64()
    );
}

/// Appends `n` records to `w`, syncing after each; the sync latencies.
fn run(w: &mut dyn WritableFile, n: usize) -> Vec<Duration> {
    let mut rec = vec![0u8; RECORD];
    let mut lat = Vec::with_capacity(n);
    for i in 0..n {
        rec[..8].copy_from_slice(&(i as u64).to_le_bytes());
        rec[8] = rec[8].wrapping_add(1);
        w.append(&rec).unwrap();
        let t = Instant::now();
        w.sync().unwrap();
        lat.push(t.elapsed());
    }
    lat
}

/// `write(2)` over an existing file from offset 0, as `run` does.
fn run_overwrite(path: &Path, n: usize) -> Vec<Duration> {
    let mut f = OpenOptions::new().write(true).open(path).unwrap();
    let mut rec = vec![0u8; RECORD];
    let mut lat = Vec::with_capacity(n);
    for i in 0..n {
        rec[..8].copy_from_slice(&(i as u64).to_le_bytes());
        f.write_all(&rec).unwrap();
        let t = Instant::now();
        f.sync_data().unwrap();
        lat.push(t.elapsed());
    }
    lat
}

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(args.next().unwrap_or_else(|| "/tmp/shale-wal-sync".into()));
    let n: usize = args.next().map_or(10_000, |a| a.parse().unwrap());
    std::fs::create_dir_all(&dir).unwrap();
    let fs = PosixFileSystem::default();
    let size = (n * RECORD + (1 << 20)) as u64;

    let a = dir.join("a.log");
    let mut w = fs.create_mapped(&a).unwrap();
    report("fallocate+mmap", run(w.as_mut(), n));
    drop(w);

    let b = dir.join("b.log");
    {
        let mut f = std::fs::File::create(&b).unwrap();
        let zeros = vec![0u8; 1 << 20];
        let mut left = size;
        while left > 0 {
            let k = left.min(zeros.len() as u64) as usize;
            f.write_all(&zeros[..k]).unwrap();
            left -= k as u64;
        }
        f.sync_all().unwrap();
    }
    report("zeroed+write", run_overwrite(&b, n));

    let d = dir.join("d.log");
    let mut w = fs.create(&d).unwrap();
    report("append+write", run(w.as_mut(), n));
    drop(w);

    // The append case's file, old data in written blocks, as a recycled WAL.
    let c = dir.join("c.log");
    std::fs::rename(&d, &c).unwrap();
    std::fs::File::open(&c).unwrap().sync_all().unwrap();
    report("recycled+write", run_overwrite(&c, n));

    let e = dir.join("e.log");
    let mut w = fs.reuse_writable(&c, &e, true).unwrap();
    report("recycled+mmap", run(w.as_mut(), n));
    drop(w);

    for p in [&a, &b, &c, &e] {
        let _ = std::fs::remove_file(p);
    }
}
