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
            // The layout names declared, always-written options only
            // (`renders_as_before_the_declaration` compares the text).
            .unwrap_or_default()
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
mod tests;
