//! The `OPTIONS-NNNNNN` file: the options a DB was opened with, as a
//! versioned, line-oriented `name=value` text in RocksDB's INI-like layout
//! (see the OPTIONS section of docs/FORMAT.md).

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use crate::error::Result;
use crate::fs::FileSystem;
use crate::options::{db_text, CfOptions, Options};
use crate::version::filename::{options_file_name, parse_file_name, FileType};

use crate::events::info_log::InfoLog;

/// Format version of the options file.
pub(crate) const OPTIONS_FILE_VERSION: u32 = 1;

/// Renders `o` (the DB-wide options and the `default` family's) and the
/// other column families' (`families`, by name): one `[section]` per group,
/// one `name=value` line per option. Each family has a `[CFOptions "name"]`
/// section and a `[TableOptions/BlockBasedTable "name"]` one with its table
/// format options, every option of `CfOptions` listed (the `default`
/// family's beyond the RocksDB-named ones first).
pub(crate) fn render(o: &Options, families: &[(String, CfOptions)]) -> String {
    let comp: Vec<&str> = o.compression_per_level.iter().map(|c| c.name()).collect();
    let sections: [(&str, Vec<(&str, String)>); 4] = [
        (
            "Version",
            vec![
                ("shale_version", env!("CARGO_PKG_VERSION").to_string()),
                ("options_file_version", OPTIONS_FILE_VERSION.to_string()),
            ],
        ),
        ("DBOptions", db_text::db_lines(o)),
        (
            "CFOptions \"default\"",
            vec![
                ("write_buffer_size", o.write_buffer_size.to_string()),
                (
                    "max_write_buffer_number",
                    o.max_write_buffer_number.to_string(),
                ),
                ("num_levels", o.num_levels.to_string()),
                (
                    "disable_auto_compactions",
                    o.disable_auto_compactions.to_string(),
                ),
                (
                    "level0_file_num_compaction_trigger",
                    o.level0_file_num_compaction_trigger.to_string(),
                ),
                (
                    "level0_slowdown_writes_trigger",
                    o.level0_slowdown_writes_trigger.to_string(),
                ),
                (
                    "level0_stop_writes_trigger",
                    o.level0_stop_writes_trigger.to_string(),
                ),
                (
                    "max_bytes_for_level_base",
                    o.max_bytes_for_level_base.to_string(),
                ),
                (
                    "max_bytes_for_level_multiplier",
                    o.max_bytes_for_level_multiplier.to_string(),
                ),
                (
                    "level_compaction_dynamic_level_bytes",
                    o.level_compaction_dynamic_level_bytes.to_string(),
                ),
                ("target_file_size_base", o.target_file_size_base.to_string()),
                (
                    "target_file_size_multiplier",
                    o.target_file_size_multiplier.to_string(),
                ),
                ("max_compaction_bytes", o.max_compaction_bytes.to_string()),
                (
                    "level_compaction_dynamic_file_size",
                    o.level_compaction_dynamic_file_size.to_string(),
                ),
                (
                    "soft_pending_compaction_bytes_limit",
                    o.soft_pending_compaction_bytes_limit.to_string(),
                ),
                (
                    "hard_pending_compaction_bytes_limit",
                    o.hard_pending_compaction_bytes_limit.to_string(),
                ),
                ("compression_per_level", comp.join(":")),
                (
                    "bottommost_compression",
                    o.bottommost_compression
                        .map_or("Disabled", |c| c.name())
                        .to_string(),
                ),
            ],
        ),
        (
            "TableOptions/BlockBasedTable \"default\"",
            vec![
                ("block_size", o.block_size.to_string()),
                (
                    "block_restart_interval",
                    o.block_restart_interval.to_string(),
                ),
                ("block_size_deviation", o.block_size_deviation.to_string()),
                ("bloom_bits_per_key", o.bloom_bits_per_key.to_string()),
            ]
            .into_iter()
            .chain(db_text::table_lines(o))
            .collect(),
        ),
    ];
    let style = o.cf_options().style_lines();
    // The default family's options the sections above do not name.
    let named: Vec<&str> = sections
        .iter()
        .flat_map(|(_, lines)| lines.iter().map(|(k, _)| *k))
        .chain(style.iter().map(|(k, _)| k.as_str()))
        .collect();
    let default_text = o.cf_options().to_text();
    let extra: Vec<(&str, &str)> = option_lines(&default_text)
        .filter(|(k, _)| !named.contains(k))
        .collect();
    let mut s = String::from("# Shale options file\n");
    for (name, lines) in &sections {
        let _ = writeln!(s, "[{name}]");
        for (k, v) in lines {
            let _ = writeln!(s, "{k}={v}");
        }
        if name.starts_with("CFOptions") {
            for (k, v) in &style {
                let _ = writeln!(s, "{k}={v}");
            }
            for (k, v) in &extra {
                let _ = writeln!(s, "{k}={v}");
            }
        }
        s.push('\n');
    }
    for (name, cf) in families {
        let text = cf.to_text();
        let (table, rest): (Vec<_>, Vec<_>) =
            option_lines(&text).partition(|(k, _)| is_table_option(k));
        for (section, lines) in [("CFOptions", rest), ("TableOptions/BlockBasedTable", table)] {
            let _ = writeln!(s, "[{section} \"{name}\"]");
            for (k, v) in lines {
                let _ = writeln!(s, "{k}={v}");
            }
            s.push('\n');
        }
    }
    s
}

/// The `name=value` lines of `CfOptions::to_text` output.
fn option_lines(text: &str) -> impl Iterator<Item = (&str, &str)> {
    text.lines().filter_map(|l| l.split_once('='))
}

/// Options of the table format (RocksDB's `BlockBasedTableOptions`).
fn is_table_option(name: &str) -> bool {
    name.starts_with("block_") || name.starts_with("bloom_") || name == "whole_key_filtering"
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
}
