//! The startup header: db_bench's stderr lines (engine version, date, CPU)
//! and its stdout block (`Keys:` … dashes), with shale-bench additions
//! (engine, seed) on lines db_bench's parsers do not look at.

use crate::clock::ctime_string;
use crate::flags::Flags;
use crate::sysinfo::cpu_info;

/// RocksDB's display name of a `--compression_type` value.
pub fn compression_name(t: &str) -> &'static str {
    match t.to_ascii_lowercase().as_str() {
        "none" => "NoCompression",
        "snappy" => "Snappy",
        "zlib" => "Zlib",
        "bzip2" => "BZip2",
        "lz4" => "LZ4",
        "lz4hc" => "LZ4HC",
        "xpress" => "Xpress",
        "zstd" => "ZSTD",
        _ => "Unknown",
    }
}

/// The stderr part (`<Engine>:    version <v>`, `Date:`, `CPU:`, `CPUCache:`).
pub fn stderr_lines(engine_label: &str, version: &str, unix_secs: i64) -> String {
    let (cpu, cache) = cpu_info();
    let label = format!("{engine_label}:");
    format!(
        "{label:<12}version {version}\nDate:       {}\nCPU:        {cpu}\nCPUCache:   {cache}\n",
        ctime_string(unix_secs)
    )
}

/// The stdout block, up to and including the dashes.
pub fn stdout_block(f: &Flags, compression: &str, warnings: &[String]) -> String {
    let ks = f.key_size as f64;
    let vs = f.value_size as f64;
    let n = f.num as f64;
    let mut s = String::new();
    s.push_str(&format!(
        "Keys:       {} bytes each (+ 0 bytes user-defined timestamp)\n",
        f.key_size
    ));
    s.push_str(&format!(
        "Values:     {} bytes each ({} bytes after compression)\n",
        f.value_size,
        (vs * f.compression_ratio + 0.5) as i64
    ));
    s.push_str(&format!("Entries:    {}\n", f.num));
    s.push_str(&format!("Prefix:    {} bytes\n", f.prefix_size));
    s.push_str(&format!("Keys per prefix:    {}\n", f.keys_per_prefix));
    s.push_str(&format!(
        "RawSize:    {:.1} MB (estimated)\n",
        (ks + vs) * n / 1_048_576.0
    ));
    s.push_str(&format!(
        "FileSize:   {:.1} MB (estimated)\n",
        (ks + vs * f.compression_ratio) * n / 1_048_576.0
    ));
    s.push_str(&format!(
        "Write rate: {} bytes/second\n",
        f.benchmark_write_rate_limit
    ));
    s.push_str(&format!(
        "Read rate: {} ops/second\n",
        f.benchmark_read_rate_limit
    ));
    s.push_str(&format!("Compression: {}\n", compression_name(compression)));
    s.push_str("Compression sampling rate: 0\n");
    s.push_str("Memtablerep: SkipListFactory\n");
    s.push_str("Perf Level: 1\n");
    s.push_str(&format!("Engine:     {}\n", f.engine));
    if f.arrival_rate > 0.0 {
        s.push_str(&format!(
            "Open loop:  {} ops/second arrival rate\n",
            f.arrival_rate
        ));
    }
    if cfg!(debug_assertions) {
        s.push_str("WARNING: Optimization is disabled: benchmarks unnecessarily slow\n");
    }
    for w in warnings {
        s.push_str(&format!("WARNING: {w}\n"));
    }
    s.push_str("------------------------------------------------\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_block_matches_db_bench() {
        let f = Flags::parse::<&str>(&[]).unwrap();
        let b = stdout_block(&f, &f.compression_type, &[]);
        let lines: Vec<&str> = b.lines().collect();
        assert_eq!(
            lines[0],
            "Keys:       16 bytes each (+ 0 bytes user-defined timestamp)"
        );
        assert_eq!(
            lines[1],
            "Values:     100 bytes each (50 bytes after compression)"
        );
        assert_eq!(lines[2], "Entries:    1000000");
        assert_eq!(lines[5], "RawSize:    110.6 MB (estimated)");
        assert_eq!(lines[6], "FileSize:   62.9 MB (estimated)");
        assert_eq!(lines[9], "Compression: Snappy");
        assert_eq!(*lines.last().unwrap(), "-".repeat(48));
        let e = stderr_lines("RocksDB", "7.8.3", 0);
        assert!(e.starts_with("RocksDB:    version 7.8.3\nDate:       "));
    }
}
