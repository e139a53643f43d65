//! The `OPTIONS-NNNNNN` file: the options a DB was opened with, as a
//! versioned, line-oriented `name=value` text (see docs/format/options.md).

use crate::options::Options;

/// Format version of the options file.
pub(crate) const OPTIONS_FILE_VERSION: u32 = 1;

pub(crate) fn render(o: &Options) -> String {
    let comp: Vec<&str> = o.compression_per_level.iter().map(|c| c.name()).collect();
    let mut s = String::new();
    s.push_str("# Shale options file\n");
    s.push_str(&format!(
        "[Version]\nshale_version={}\noptions_file_version={OPTIONS_FILE_VERSION}\n\n",
        env!("CARGO_PKG_VERSION")
    ));
    s.push_str("[DBOptions]\n");
    s.push_str(&format!("paranoid_checks={}\n", o.paranoid_checks));
    s.push_str(&format!("max_background_jobs={}\n", o.max_background_jobs));
    s.push_str(&format!("wal_recovery_mode={:?}\n", o.wal_recovery_mode));
    s.push_str(&format!("manual_wal_flush={}\n\n", o.manual_wal_flush));
    s.push_str("[CFOptions \"default\"]\n");
    s.push_str(&format!("write_buffer_size={}\n", o.write_buffer_size));
    s.push_str(&format!(
        "max_write_buffer_number={}\n",
        o.max_write_buffer_number
    ));
    s.push_str(&format!("num_levels={}\n", o.num_levels));
    s.push_str(&format!(
        "level0_file_num_compaction_trigger={}\n",
        o.level0_file_num_compaction_trigger
    ));
    s.push_str(&format!(
        "level0_slowdown_writes_trigger={}\n",
        o.level0_slowdown_writes_trigger
    ));
    s.push_str(&format!(
        "level0_stop_writes_trigger={}\n",
        o.level0_stop_writes_trigger
    ));
    s.push_str(&format!(
        "max_bytes_for_level_base={}\n",
        o.max_bytes_for_level_base
    ));
    s.push_str(&format!(
        "max_bytes_for_level_multiplier={}\n",
        o.max_bytes_for_level_multiplier
    ));
    s.push_str(&format!(
        "level_compaction_dynamic_level_bytes={}\n",
        o.level_compaction_dynamic_level_bytes
    ));
    s.push_str(&format!(
        "target_file_size_base={}\n",
        o.target_file_size_base
    ));
    s.push_str(&format!(
        "target_file_size_multiplier={}\n",
        o.target_file_size_multiplier
    ));
    s.push_str(&format!("compression_per_level={}\n", comp.join(":")));
    s.push_str(&format!(
        "bottommost_compression={}\n\n",
        o.bottommost_compression.map_or("Disabled", |c| c.name())
    ));
    s.push_str("[TableOptions/BlockBasedTable \"default\"]\n");
    s.push_str(&format!("block_size={}\n", o.block_size));
    s.push_str(&format!(
        "block_restart_interval={}\n",
        o.block_restart_interval
    ));
    s.push_str(&format!("bloom_bits_per_key={}\n", o.bloom_bits_per_key));
    s.push_str(&format!("cache_size={}\n", o.cache_size));
    s.push_str(&format!("cache_type={:?}\n", o.cache_type));
    s
}
