//! The `OPTIONS-NNNNNN` file: the options a DB was opened with, as a
//! versioned, line-oriented `name=value` text in RocksDB's INI-like layout
//! (see the OPTIONS section of docs/FORMAT.md).

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use crate::base::declare::Section;
use crate::error::Result;
use crate::fs::FileSystem;
use crate::options::{db_text, CfOptions, Options};
use crate::version::filename::{options_file_name, parse_file_name, FileType};

use crate::events::info_log::InfoLog;

/// Format version of the options file.
pub(crate) const OPTIONS_FILE_VERSION: u32 = 1;

/// The `default` family's `[CFOptions]` section opens with these (RocksDB's
/// names, `num_levels` the DB-wide one), in this order; its compaction
/// style lines and its other options follow, in declaration order.
const DEFAULT_CF_HEAD: [&str; 18] = [
    "write_buffer_size",
    "max_write_buffer_number",
    "num_levels",
    "disable_auto_compactions",
    "level0_file_num_compaction_trigger",
    "level0_slowdown_writes_trigger",
    "level0_stop_writes_trigger",
    "max_bytes_for_level_base",
    "max_bytes_for_level_multiplier",
    "level_compaction_dynamic_level_bytes",
    "target_file_size_base",
    "target_file_size_multiplier",
    "max_compaction_bytes",
    "level_compaction_dynamic_file_size",
    "soft_pending_compaction_bytes_limit",
    "hard_pending_compaction_bytes_limit",
    "compression_per_level",
    "bottommost_compression",
];

/// The `default` family's table section: these, then the DB-wide options
/// of that section (`Section::DefaultTable`).
const DEFAULT_TABLE_HEAD: [&str; 4] = [
    "block_size",
    "block_restart_interval",
    "block_size_deviation",
    "bloom_bits_per_key",
];

/// Renders `o` (the DB-wide options and the `default` family's) and the
/// other column families' (`families`, by name): one `[section]` per group,
/// one `name=value` line per option, every value as its declaration writes
/// it. Each family has a `[CFOptions "name"]` section and a
/// `[TableOptions/BlockBasedTable "name"]` one with its table format
/// options (`Section::Table`), every persisted option of `CfOptions`
/// listed (the `default` family's in the layout of `DEFAULT_CF_HEAD` and
/// `DEFAULT_TABLE_HEAD`, its other options after the head of its
/// `[CFOptions]` section).
pub(crate) fn render(o: &Options, families: &[(String, CfOptions)]) -> String {
    let cf_lines = o.cf.lines();
    let db_cf = db_text::cf_section_lines(o);
    let value = |name: &str| -> String {
        cf_lines
            .iter()
            .map(|(k, v, _)| (k, v))
            .chain(db_cf.iter().map(|(k, v)| (k, v)))
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.clone())
            .expect("the OPTIONS layout names a declared, always-written option")
    };
    let head = |names: &[&'static str]| -> Vec<(String, String)> {
        names.iter().map(|n| (n.to_string(), value(n))).collect()
    };
    let style = o.cf.style_lines();
    // The default family's options the heads and style lines do not name.
    let extra: Vec<(String, String)> = cf_lines
        .iter()
        .filter(|(k, _, _)| {
            let k = k.as_str();
            !DEFAULT_CF_HEAD.contains(&k)
                && !DEFAULT_TABLE_HEAD.contains(&k)
                && !style.iter().any(|(s, _)| s == k)
        })
        .map(|(k, v, _)| (k.clone(), v.clone()))
        .collect();
    let sections: [(&str, Vec<(String, String)>); 4] = [
        (
            "Version",
            vec![
                (
                    "shale_version".into(),
                    env!("CARGO_PKG_VERSION").to_string(),
                ),
                (
                    "options_file_version".into(),
                    OPTIONS_FILE_VERSION.to_string(),
                ),
            ],
        ),
        ("DBOptions", db_text::db_lines(o)),
        (
            "CFOptions \"default\"",
            head(&DEFAULT_CF_HEAD)
                .into_iter()
                .chain(style)
                .chain(extra)
                .collect(),
        ),
        (
            "TableOptions/BlockBasedTable \"default\"",
            head(&DEFAULT_TABLE_HEAD)
                .into_iter()
                .chain(db_text::table_lines(o))
                .collect(),
        ),
    ];
    let mut s = String::from("# Shale options file\n");
    for (name, lines) in &sections {
        let _ = writeln!(s, "[{name}]");
        for (k, v) in lines {
            let _ = writeln!(s, "{k}={v}");
        }
        s.push('\n');
    }
    for (name, cf) in families {
        let (table, rest): (Vec<_>, Vec<_>) = cf
            .lines()
            .into_iter()
            .partition(|(_, _, section)| *section == Section::Table);
        for (section, lines) in [("CFOptions", rest), ("TableOptions/BlockBasedTable", table)] {
            let _ = writeln!(s, "[{section} \"{name}\"]");
            for (k, v, _) in lines {
                let _ = writeln!(s, "{k}={v}");
            }
            s.push('\n');
        }
    }
    s
}

/// Writes `text` as `OPTIONS-<number>` (through a synced temporary file
/// renamed into place) and removes older options files.
pub(crate) fn write(
    fs: &Arc<dyn FileSystem>,
    dir: &Path,
    number: u64,
    text: &str,
    log: &InfoLog,
) -> Result<()> {
    let tmp = dir.join(format!("{number:06}.dbtmp"));
    let mut f = fs.create(&tmp)?;
    f.append(text.as_bytes())?;
    f.sync()?;
    drop(f);
    crate::sync_point!("OptionsFile::BeforeRename");
    fs.rename(&tmp, &dir.join(options_file_name(number)))?;
    for name in fs.list(dir)? {
        if let Some((FileType::Options, n)) = parse_file_name(&name) {
            if n < number {
                if let Err(e) = fs.remove(&dir.join(&name)) {
                    log.warn(&format!("could not remove {name}: {e}"));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::{
        CacheType, CompactionStyle, Compression, InfoLogLevel, PrepopulateBlobCache,
        SstPartitioner, UniversalStopStyle,
    };

    #[test]
    fn renders_every_section_and_value() {
        let o = Options {
            cf: CfOptions {
                write_buffer_size: 12345,
                ..Default::default()
            },
            max_open_files: 300,
            use_direct_io_for_flush_and_compaction: true,
            max_log_file_size: 1 << 20,
            keep_log_file_num: 7,
            bytes_per_sync: 1 << 20,
            recycle_log_file_num: 2,
            info_log_level: crate::options::InfoLogLevel::Warn,
            ..Options::default()
        };
        let s = render(&o, &[]);
        assert!(s.contains("[Version]\nshale_version="), "{s}");
        assert!(s.contains("options_file_version=1\n"), "{s}");
        assert!(
            s.contains(
                "\nmax_open_files=300\nuse_direct_reads=false\nuse_direct_io_for_flush_and_compaction=true\n"
            ),
            "{s}"
        );
        assert!(
            s.contains("\nbytes_per_sync=1048576\nwal_bytes_per_sync=0\nrecycle_log_file_num=2\n"),
            "{s}"
        );
        assert!(
            s.contains(
                "\ninfo_log_level=WARN_LEVEL\nmax_log_file_size=1048576\nkeep_log_file_num=7\n"
            ),
            "{s}"
        );
        assert!(
            s.contains("[CFOptions \"default\"]\nwrite_buffer_size=12345\n"),
            "{s}"
        );
        assert!(s.contains("compression_per_level=NoCompression\n"), "{s}");
        assert!(
            s.contains("[TableOptions/BlockBasedTable \"default\"]\nblock_size=4096\n"),
            "{s}"
        );
    }
    /// Options with every kind of line set (render only: not validated),
    /// by assignments (as the build that rendered `testdata/` could too).
    #[allow(clippy::field_reassign_with_default)]
    fn golden_configs() -> Vec<Options> {
        let mut v = vec![Options::default()];
        let mut o = Options::default();
        o.write_buffer_size = 12345;
        o.max_open_files = 300;
        o.bytes_per_sync = 1 << 20;
        o.recycle_log_file_num = 2;
        o.num_levels = 5;
        o.cache_size = 7;
        o.cache_type = CacheType::Clock;
        o.info_log_level = InfoLogLevel::Warn;
        o.compression_per_level = vec![Compression::None, Compression::Lz4];
        o.bottommost_compression = Some(Compression::Zstd);
        o.bloom_bits_per_key_per_level = vec![12.5, 9.0];
        o.prefix_extractor = Some(crate::base::PrefixExtractor::Capped(5));
        o.whole_key_filtering = false;
        o.memtable_whole_key_filtering = true;
        o.sst_partitioner_factory = Some(SstPartitioner::FixedPrefix(6));
        o.detect_insert_streams = Some(false);
        o.merge_operator = Some(Arc::new(crate::UInt64AddOperator));
        o.default_ttl_secs = 60;
        o.block_align = true;
        o.compaction_style = CompactionStyle::Universal;
        o.compaction_options_universal.size_ratio = 10;
        o.compaction_options_universal.stop_style = UniversalStopStyle::SimilarSize;
        o.compaction_options_fifo.ttl_secs = 5;
        o.blob.enable_blob_files = true;
        o.blob.min_blob_size = 100;
        o.blob.prepopulate_blob_cache = PrepopulateBlobCache::FlushOnly;
        o.memtable_bloom_size_ratio = 0.1;
        o.block_restart_bytes = 7;
        let mut fam = o.cf.clone();
        fam.write_buffer_size = 999;
        fam.compaction_style = CompactionStyle::Fifo;
        fam.blob.enable_blob_files = false;
        o.column_families = vec![("a".into(), CfOptions::default()), ("b".into(), fam)];
        v.push(o);
        v
    }

    /// The OPTIONS text and the MANIFEST's options text of options that set
    /// every kind of line are byte for byte what the build before
    /// `declare_options!` wrote (`testdata/`, rendered by that build).
    #[test]
    fn renders_as_before_the_declaration() {
        for (i, o) in golden_configs().iter().enumerate() {
            let r = render(o, &o.column_families);
            let r: String = r
                .lines()
                .filter(|l| !l.starts_with("shale_version"))
                .map(|l| format!("{l}\n"))
                .collect();
            let want = [
                include_str!("testdata/render0.txt"),
                include_str!("testdata/render1.txt"),
            ][i];
            assert_eq!(r, want, "config {i}");
        }
        let o = &golden_configs()[1];
        assert_eq!(o.cf.to_text(), include_str!("testdata/text1_default.txt"));
        assert_eq!(
            o.column_families[0].1.to_text(),
            include_str!("testdata/text1_a.txt")
        );
        assert_eq!(
            o.column_families[1].1.to_text(),
            include_str!("testdata/text1_b.txt")
        );
    }
}
