//! A DB of 10,000+ SSTs read back under a small open-file limit: the proof
//! that `max_open_files` bounds the table files a DB keeps open. Driven by
//! `bench/many_files.sh`, which runs it under `ulimit -n 256`.
//!
//! Usage:
//!   many_files build  DIR KEYS MAX_OPEN_FILES
//!   many_files verify DIR KEYS MAX_OPEN_FILES
//!
//! `build` writes KEYS keys in a scattered order with 8 KiB target files
//! (so the DB has about KEYS / 65 SSTs) and waits for compaction. `verify` reopens the
//! DB (paranoid checks open every table once), reads every key in a
//! scattered order and then scans them all, checking each value, and
//! prints the SST count, timings, the peak of the process's open
//! descriptors (sampled from /proc/self/fd every 10,000 operations; stdio
//! and the sampling's own descriptor included), the peak of
//! `shale.num-open-tables` and the peak RSS. Exits non-zero on any error or
//! wrong value.

use std::time::Instant;

use shale::{Db, Options, ReadOptions};

fn key(i: u64) -> Vec<u8> {
    format!("key{i:013}").into_bytes()
}

fn value(i: u64) -> Vec<u8> {
    let mut v = format!("value-{i}-").into_bytes();
    v.resize(100, b'a' + (i % 26) as u8);
    v
}

fn opts(max_open_files: i32) -> Options {
    Options {
        create_if_missing: true,
        max_open_files,
        cf: shale::CfOptions {
            write_buffer_size: 1 << 20,
            target_file_size_base: 8 << 10,
            max_bytes_for_level_base: 4 << 20,
            ..Default::default()
        },
        cache_size: 8 << 20,
        ..Options::default()
    }
}

/// A step prime to `keys` (visiting every key once) that jumps far.
fn scatter_step(keys: u64) -> u64 {
    let gcd = |mut a: u64, mut b: u64| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    (keys / 3 + 1..).find(|&s| gcd(s, keys) == 1).unwrap_or(1)
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count())
}

/// A line of /proc/self/status (e.g. `VmHWM`), in KiB.
fn status_kib(field: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn prop(db: &Db, name: &str) -> u64 {
    db.property(name).and_then(|v| v.parse().ok()).unwrap_or(0)
}

fn num_ssts(db: &Db) -> u64 {
    (0..7)
        .map(|l| prop(db, &format!("shale.num-files-at-level{l}")))
        .sum()
}

type Res = Result<(), Box<dyn std::error::Error>>;

fn build(dir: &str, keys: u64, max_open_files: i32) -> Res {
    let t = Instant::now();
    let db = Db::open(dir, opts(max_open_files))?;
    // A scattered order, so that compaction rewrites (and cuts) every file
    // instead of trivially moving sequential flushes down.
    let step = scatter_step(keys);
    let mut i = 0;
    let mut peak_fds = 0;
    for n in 0..keys {
        db.put(&key(i), &value(i))?;
        i = (i + step) % keys;
        if n.is_multiple_of(10_000) {
            peak_fds = peak_fds.max(open_fds());
        }
    }
    db.flush()?;
    db.wait_for_compaction()?;
    println!(
        "build: {keys} keys, {} SSTs in {:.1} s, peak open fds {} (sampled)",
        num_ssts(&db),
        t.elapsed().as_secs_f64(),
        peak_fds.max(open_fds())
    );
    println!("{}", db.property("shale.levelstats").unwrap_or_default());
    Ok(db.close()?)
}

fn verify(dir: &str, keys: u64, max_open_files: i32) -> Res {
    let t = Instant::now();
    let db = Db::open(
        dir,
        Options {
            create_if_missing: false,
            ..opts(max_open_files)
        },
    )?;
    let open_secs = t.elapsed().as_secs_f64();
    let ssts = num_ssts(&db);
    let mut peak_fds = open_fds();
    let mut peak_tables = prop(&db, "shale.num-open-tables");
    let mut sample = |db: &Db| {
        peak_fds = peak_fds.max(open_fds());
        peak_tables = peak_tables.max(prop(db, "shale.num-open-tables"));
    };

    // Every key once, in a scattered order (a step prime to `keys`), so
    // consecutive reads land in different tables.
    let t = Instant::now();
    let step = scatter_step(keys);
    let mut i = 0u64;
    for n in 0..keys {
        let got = db.get(&key(i))?;
        if got.as_deref() != Some(&value(i)[..]) {
            return Err(format!("key {i}: wrong value {got:?}").into());
        }
        if n.is_multiple_of(10_000) {
            sample(&db);
        }
        i = (i + step) % keys;
    }
    let get_secs = t.elapsed().as_secs_f64();

    let t = Instant::now();
    let mut it = db.iter(&ReadOptions::new());
    it.seek_to_first();
    let mut n = 0u64;
    while it.valid() {
        if it.key() != &key(n)[..] || it.value() != &value(n)[..] {
            return Err(format!("scan: entry {n} is not key {n} with its value").into());
        }
        n += 1;
        if n.is_multiple_of(10_000) {
            sample(&db);
        }
        it.next();
    }
    it.status()?;
    drop(it);
    let scan_secs = t.elapsed().as_secs_f64();
    sample(&db);
    if n != keys {
        return Err(format!("scan saw {n} keys, want {keys}").into());
    }
    println!(
        "verify: max_open_files {max_open_files}, {ssts} SSTs, {keys} keys: open {open_secs:.2} s, \
         {keys} gets {get_secs:.2} s ({:.1} us/get), scan {scan_secs:.2} s",
        get_secs * 1e6 / keys as f64
    );
    println!(
        "verify: peak open fds {peak_fds}, peak num-open-tables {peak_tables} (capacity {}), \
         table readers mem {} KiB, peak RSS {} MiB",
        db.property("shale.table-cache-capacity")
            .unwrap_or_default(),
        prop(&db, "shale.estimate-table-readers-mem") >> 10,
        status_kib("VmHWM") >> 10
    );
    Ok(db.close()?)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: many_files build|verify DIR KEYS MAX_OPEN_FILES";
    let (Some(cmd), Some(dir), Some(keys), Some(mof)) =
        (args.get(1), args.get(2), args.get(3), args.get(4))
    else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let (Ok(keys), Ok(mof)) = (keys.parse::<u64>(), mof.parse::<i32>()) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let r = match cmd.as_str() {
        "build" => build(dir, keys, mof),
        "verify" => verify(dir, keys, mof),
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    };
    if let Err(e) = r {
        eprintln!("many_files {cmd}: {e}");
        std::process::exit(1);
    }
}
