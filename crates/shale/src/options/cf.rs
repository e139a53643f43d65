//! `CfOptions`: the options of one column family (memtables, table format,
//! LSM shape and compaction triggers), validated at open and at create, and
//! their `name=value` text, persisted in the MANIFEST with the family's
//! create (and again when the family is opened with other options).
//!
//! The flat fields of `Options` configure the `default` family
//! (`Options::cf_options`); every other family has its own `CfOptions`.

use std::fmt::Write as _;
use std::sync::Arc;

use crate::base::PrefixExtractor;
use crate::build::cuts::{SstPartitioner, StreamDetector};
use crate::build::user_filter::CompactionFilter;
use crate::error::{Error, Result};
use crate::merge::MergeOperator;
use crate::sst::TableOptions;

use super::blob::{self, BlobOptions};
use super::compaction_style::{
    self, CompactionStyle, FifoCompactionOptions, UniversalCompactionOptions,
};
use super::Compression;

/// The options `Db::set_options` changes (besides the universal, FIFO and
/// blob options, which all do).
const CHANGEABLE_WHILE_OPEN: [&str; 27] = [
    "write_buffer_size",
    "max_write_buffer_number",
    "memtable_bloom_size_ratio",
    "memtable_whole_key_filtering",
    "block_size",
    "block_restart_interval",
    "block_restart_bytes",
    "block_size_deviation",
    "bloom_bits_per_key",
    "bloom_bits_per_key_per_level",
    "whole_key_filtering",
    "prefix_extractor",
    "compression_per_level",
    "bottommost_compression",
    "disable_auto_compactions",
    "level0_file_num_compaction_trigger",
    "level0_slowdown_writes_trigger",
    "level0_stop_writes_trigger",
    "max_bytes_for_level_base",
    "max_bytes_for_level_multiplier",
    "target_file_size_base",
    "target_file_size_multiplier",
    "max_compaction_bytes",
    "level_compaction_dynamic_file_size",
    "soft_pending_compaction_bytes_limit",
    "hard_pending_compaction_bytes_limit",
    "default_ttl_secs",
];

/// The options that change only on reopen: they shape what is already
/// written (block alignment, partitions, level sizing, the compaction
/// style) or are code (merge operator, compaction filter). The prefix
/// extractor changes while open: every memtable and table records the
/// extractor its prefix filter was built with and answers "maybe" to
/// another (RocksDB's rule), and each read takes the family's extractor
/// once.
const FIXED_WHILE_OPEN: [&str; 6] = [
    "block_align",
    "sst_partitioner_factory",
    "detect_insert_streams",
    "level_compaction_dynamic_level_bytes",
    "merge_operator",
    "compaction_filter",
];

/// Options of one column family. `Default` gives the same defaults as the
/// matching fields of [`Options`](crate::Options); see those fields for
/// the meaning of each.
#[derive(Clone, Debug, PartialEq)]
pub struct CfOptions {
    /// Bytes in a memtable before it is switched and flushed. Default 64 MiB.
    pub write_buffer_size: usize,
    /// Memtables (active + immutable) kept before writes stall. Default 2.
    pub max_write_buffer_number: usize,
    /// Memtable bloom filter size as a share of `write_buffer_size`
    /// (0 = none, at most 0.25). Default 0.02.
    pub memtable_bloom_size_ratio: f64,
    /// Target size of an uncompressed data block. Default 4 KiB.
    pub block_size: usize,
    /// Keys between restart points in a data block. Default 16.
    pub block_restart_interval: usize,
    /// Bytes between restart points (0 = by count only). Default 1024.
    pub block_restart_bytes: usize,
    /// Aligned data blocks (RocksDB's `block_align`): each starts at a
    /// multiple of min(`block_size`, 4 KiB) and, with its 5-byte trailer,
    /// fits in `block_size` unless one entry is larger; zeros pad the gap.
    /// A point read of a block is then one page from the device instead of
    /// the two an unaligned 4 KiB block straddles, at the cost of the
    /// padding. Requires no compression on any level and a power-of-two
    /// `block_size` (else `InvalidArgument`). Default false.
    pub block_align: bool,
    /// A data block is cut before an entry that would take it past
    /// `block_size` once it is at least `100 - block_size_deviation` percent
    /// full (RocksDB's `block_size_deviation`; otherwise it is cut after the
    /// entry that reaches `block_size`), so blocks stay near `block_size`
    /// rather than one entry over it. 0 turns this off (as does 100, as in
    /// RocksDB); above 100 is `InvalidArgument`. Ignored with `block_align`,
    /// which always cuts before. Default 10.
    pub block_size_deviation: u32,
    /// Bloom filter bits per key; 0 disables the filter. Default 10.
    pub bloom_bits_per_key: u32,
    /// Bloom bits per key by output level (flush writes L0; compaction its
    /// output level); the last entry applies to deeper levels; empty (the
    /// default) uses `bloom_bits_per_key` everywhere. Each in [0, 100].
    pub bloom_bits_per_key_per_level: Vec<f64>,
    /// Maps keys to prefixes for prefix bloom filters and
    /// `ReadOptions::prefix_same_as_start`. Default `None`.
    pub prefix_extractor: Option<PrefixExtractor>,
    /// SST filters hold whole keys (point reads use them); with an
    /// extractor and `false`, only prefixes. Default true.
    pub whole_key_filtering: bool,
    /// With an extractor, memtable blooms also hold whole keys. Default
    /// false (RocksDB's). Without an extractor they always hold whole keys.
    pub memtable_whole_key_filtering: bool,
    /// Compression per level (the last entry applies to deeper levels).
    pub compression_per_level: Vec<Compression>,
    /// Compression of the bottommost level, overriding the level's.
    pub bottommost_compression: Option<Compression>,
    /// No automatic compaction of this family (RocksDB's
    /// `disable_auto_compactions`): the picker, delete-only drops and FIFO
    /// drops leave it alone, and its writes do not stall on L0 files or
    /// pending compaction bytes (memtable stalls remain); `compact_range`
    /// still compacts it. For bulk loads: load, `compact_range`, reopen
    /// without it. Default false.
    pub disable_auto_compactions: bool,
    /// L0 file count that triggers a compaction. Default 4.
    pub level0_file_num_compaction_trigger: usize,
    /// L0 file count that slows writes. Default 20.
    pub level0_slowdown_writes_trigger: usize,
    /// L0 file count that stops writes. Default 36.
    pub level0_stop_writes_trigger: usize,
    /// Target size of L1 (or the base level). Default 256 MiB.
    pub max_bytes_for_level_base: u64,
    /// Growth factor between levels (finite, >= 2). Default 10.
    pub max_bytes_for_level_multiplier: f64,
    /// Size levels backwards from the last one. Default true.
    pub level_compaction_dynamic_level_bytes: bool,
    /// Target SST size of L1. Default 64 MiB.
    pub target_file_size_base: u64,
    /// Growth of the target SST size per level. Default 1.
    pub target_file_size_multiplier: u64,
    /// Most bytes one compaction reads; 0 = 25 × `target_file_size_base`.
    pub max_compaction_bytes: u64,
    /// Cut compaction outputs at the next level's file boundaries once they
    /// hold 50-90% of the target file size (RocksDB's option of that name):
    /// smaller files, less rewriting in later compactions. Default true.
    pub level_compaction_dynamic_file_size: bool,
    /// Pending compaction bytes that delay writes; 0 disables. Default 64 GiB.
    pub soft_pending_compaction_bytes_limit: u64,
    /// Pending compaction bytes that stop writes; 0 disables. Default 256 GiB.
    pub hard_pending_compaction_bytes_limit: u64,
    /// Combines merge operands (`Db::merge`); `None` refuses merges.
    /// Persisted by name: the shipped operators come back when the family
    /// is opened with its persisted options. Default `None`.
    pub merge_operator: Option<Arc<dyn MergeOperator>>,
    /// Per-key hook of flush and compaction; not persisted. Default `None`.
    pub compaction_filter: Option<Arc<dyn CompactionFilter>>,
    /// Every put in the family expires this many seconds after it is
    /// written (0: only `put_with_ttl` puts expire). Default 0.
    pub default_ttl_secs: u64,
    /// How the family's tables are compacted. Default `Level`.
    pub compaction_style: CompactionStyle,
    /// Options of universal compaction (used when `compaction_style` is
    /// `Universal`).
    pub compaction_options_universal: UniversalCompactionOptions,
    /// Options of FIFO compaction (used when `compaction_style` is `Fifo`).
    pub compaction_options_fifo: FifoCompactionOptions,
    /// Key-value separation: large values in blob files (RocksDB's
    /// integrated BlobDB). Default off.
    pub blob: BlobOptions,
    /// Compaction outputs below L0 never span two of its partitions
    /// (RocksDB's `sst_partitioner_factory`); in leveled families flush
    /// outputs neither (RocksDB cuts no flush). Outputs written to L0 by a
    /// compaction (intra-L0 merges) are never cut: a merge that reduces
    /// the L0 file count must make fewer files. Default `None`.
    pub sst_partitioner_factory: Option<SstPartitioner>,
    /// Flush outputs, and compaction outputs below L0, end where an
    /// ascending insert stream of the memtable (of the merged inputs) ends
    /// (`build::cuts`), so interleaved streams land in disjoint tables
    /// that later move down levels without rewrites. `None` (the
    /// default): on for leveled families, off for universal (each L0 file
    /// is a sorted run there) and FIFO; `Some(true)` with those styles is
    /// refused.
    pub detect_insert_streams: Option<bool>,
}

impl Default for CfOptions {
    fn default() -> Self {
        CfOptions {
            write_buffer_size: 64 << 20,
            max_write_buffer_number: 2,
            memtable_bloom_size_ratio: 0.02,
            block_size: 4096,
            block_restart_interval: 16,
            block_restart_bytes: 1024,
            block_align: false,
            block_size_deviation: 10,
            bloom_bits_per_key: 10,
            bloom_bits_per_key_per_level: Vec::new(),
            prefix_extractor: None,
            whole_key_filtering: true,
            memtable_whole_key_filtering: false,
            compression_per_level: vec![Compression::None],
            bottommost_compression: None,
            disable_auto_compactions: false,
            level0_file_num_compaction_trigger: 4,
            level0_slowdown_writes_trigger: 20,
            level0_stop_writes_trigger: 36,
            max_bytes_for_level_base: 256 << 20,
            max_bytes_for_level_multiplier: 10.0,
            level_compaction_dynamic_level_bytes: true,
            target_file_size_base: 64 << 20,
            target_file_size_multiplier: 1,
            max_compaction_bytes: 0,
            level_compaction_dynamic_file_size: true,
            soft_pending_compaction_bytes_limit: 64 << 30,
            hard_pending_compaction_bytes_limit: 256 << 30,
            merge_operator: None,
            compaction_filter: None,
            default_ttl_secs: 0,
            compaction_style: CompactionStyle::Level,
            compaction_options_universal: UniversalCompactionOptions::default(),
            compaction_options_fifo: FifoCompactionOptions::default(),
            blob: BlobOptions::default(),
            sst_partitioner_factory: None,
            detect_insert_streams: None,
        }
    }
}

impl CfOptions {
    /// Checks every option; `InvalidArgument` names the first bad one.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::InvalidArgument(m));
        if !(0.0..=0.25).contains(&self.memtable_bloom_size_ratio) {
            return bad(format!(
                "memtable_bloom_size_ratio {} not in [0, 0.25]",
                self.memtable_bloom_size_ratio
            ));
        }
        if self.write_buffer_size < 4096 {
            return bad(format!(
                "write_buffer_size {} < 4096",
                self.write_buffer_size
            ));
        }
        if self.max_write_buffer_number < 2 {
            return bad(format!(
                "max_write_buffer_number {} < 2",
                self.max_write_buffer_number
            ));
        }
        if self.block_size == 0 || self.block_size > (1 << 30) {
            return bad(format!("block_size {} out of range", self.block_size));
        }
        if self.block_restart_interval == 0 {
            return bad("block_restart_interval must be > 0".into());
        }
        if self.block_size_deviation > 100 {
            return bad(format!(
                "block_size_deviation {} > 100",
                self.block_size_deviation
            ));
        }
        if self.block_align {
            if !self.block_size.is_power_of_two() {
                return bad(format!(
                    "block_align needs a power-of-two block_size, not {}",
                    self.block_size
                ));
            }
            let compressed = self
                .compression_per_level
                .iter()
                .chain(self.bottommost_compression.iter())
                .any(|c| *c != Compression::None);
            if compressed {
                return bad("block_align needs no compression on every level \
                            (compression_per_level and bottommost_compression)"
                    .into());
            }
        }
        if self.bloom_bits_per_key > 100 {
            return bad(format!(
                "bloom_bits_per_key {} > 100",
                self.bloom_bits_per_key
            ));
        }
        if let Some(b) = self
            .bloom_bits_per_key_per_level
            .iter()
            .find(|b| !(0.0..=100.0).contains(*b))
        {
            return bad(format!(
                "bloom_bits_per_key_per_level entry {b} not in [0, 100]"
            ));
        }
        if let Some(e) = self.prefix_extractor {
            if e.is_empty() || e.len() > 1 << 20 {
                return bad(format!(
                    "prefix_extractor {}: length must be in 1..=1048576",
                    e.name()
                ));
            }
        }
        if self.compression_per_level.is_empty() {
            return bad("compression_per_level must not be empty".into());
        }
        if self.level0_file_num_compaction_trigger == 0 {
            return bad("level0_file_num_compaction_trigger must be > 0".into());
        }
        if self.level0_slowdown_writes_trigger < self.level0_file_num_compaction_trigger
            || self.level0_stop_writes_trigger < self.level0_slowdown_writes_trigger
        {
            return bad(format!(
                "L0 triggers must satisfy compaction ({}) <= slowdown ({}) <= stop ({})",
                self.level0_file_num_compaction_trigger,
                self.level0_slowdown_writes_trigger,
                self.level0_stop_writes_trigger
            ));
        }
        let m = self.max_bytes_for_level_multiplier;
        if !m.is_finite() || m < 2.0 {
            return bad(format!(
                "max_bytes_for_level_multiplier {m} must be a finite number >= 2"
            ));
        }
        if self.max_bytes_for_level_base == 0 || self.target_file_size_base == 0 {
            return bad("max_bytes_for_level_base and target_file_size_base must be > 0".into());
        }
        if self.target_file_size_multiplier == 0 {
            return bad("target_file_size_multiplier must be > 0".into());
        }
        if self.soft_pending_compaction_bytes_limit > 0
            && self.hard_pending_compaction_bytes_limit > 0
            && self.soft_pending_compaction_bytes_limit > self.hard_pending_compaction_bytes_limit
        {
            return bad(format!(
                "soft_pending_compaction_bytes_limit ({}) > hard_pending_compaction_bytes_limit ({})",
                self.soft_pending_compaction_bytes_limit, self.hard_pending_compaction_bytes_limit
            ));
        }
        compaction_style::validate(
            &self.compaction_options_universal,
            &self.compaction_options_fifo,
        )?;
        if let Some(p) = self.sst_partitioner_factory {
            p.validate()?;
        }
        if self.detect_insert_streams == Some(true)
            && self.compaction_style != CompactionStyle::Level
        {
            return bad(format!(
                "detect_insert_streams=true needs leveled compaction (style {:?}: \
                 each L0 file is a sorted run or is dropped whole)",
                self.compaction_style
            ));
        }
        blob::validate(&self.blob, self.compaction_style)
    }

    /// The partitioner of flush outputs: the family's, for leveled
    /// families only. Universal counts each L0 file as a sorted run and
    /// FIFO merges small L0 files: cut flushes would only be merged again
    /// (RocksDB cuts no flush at all).
    pub(crate) fn flush_partitioner(&self) -> Option<SstPartitioner> {
        self.sst_partitioner_factory
            .filter(|_| self.compaction_style == CompactionStyle::Level)
    }

    /// The detector that ends flush or compaction outputs of about
    /// `output_size` bytes (the write buffer, the level's target file size)
    /// at insert-stream boundaries, when `detect_insert_streams` (resolved
    /// for the style) is on.
    pub(crate) fn stream_detector(&self, output_size: u64) -> Option<StreamDetector> {
        let on = self
            .detect_insert_streams
            .unwrap_or(self.compaction_style == CompactionStyle::Level);
        (on && self.compaction_style == CompactionStyle::Level)
            .then(|| StreamDetector::for_output_size(output_size))
    }

    /// Checks what depends on the DB's `num_levels` (set once for every
    /// family): incremental universal compaction needs a level between L0
    /// and the last.
    pub(crate) fn validate_levels(&self, num_levels: usize) -> Result<()> {
        compaction_style::validate_levels(
            self.compaction_style,
            &self.compaction_options_universal,
            num_levels,
        )
    }

    /// The SST writer's options for a file of `level` written with
    /// `compression` in the DB `db_id`.
    pub(crate) fn table_options(
        &self,
        level: usize,
        compression: Compression,
        db_id: &str,
    ) -> TableOptions {
        TableOptions {
            block_size: self.block_size,
            block_restart_interval: self.block_restart_interval,
            block_restart_bytes: self.block_restart_bytes,
            bloom_bits_per_key: self.bloom_bits_for_level(level),
            prefix_extractor: self.prefix_extractor,
            whole_key_filtering: self.whole_key_filtering,
            compression,
            db_id: db_id.to_string(),
            column_family: None,
            block_align: self.block_align,
            block_size_deviation: self.block_size_deviation,
        }
    }

    /// Bloom bits per key of tables written to `level` (Monkey's
    /// allocation when `bloom_bits_per_key_per_level` is set).
    pub(crate) fn bloom_bits_for_level(&self, level: usize) -> f64 {
        match self.bloom_bits_per_key_per_level.as_slice() {
            [] => f64::from(self.bloom_bits_per_key),
            v => v[level.min(v.len() - 1)],
        }
    }

    /// The most the family's memtables hold at once: `write_buffer_size`
    /// times `max_write_buffer_number`.
    pub(crate) fn memtables_max(&self) -> usize {
        self.write_buffer_size
            .saturating_mul(self.max_write_buffer_number)
    }

    /// Bytes of each memtable's bloom filter (0 = none) in a DB whose
    /// memtables share `db_budget` bytes (0: no DB-wide budget).
    pub(crate) fn memtable_bloom_bytes(&self, db_budget: usize) -> usize {
        // A DB-wide memtable budget smaller than the write buffer flushes
        // the memtable before it fills: size the filter for what it holds.
        let holds = match db_budget {
            0 => self.write_buffer_size,
            b => self.write_buffer_size.min(b),
        };
        (holds as f64 * self.memtable_bloom_size_ratio) as usize
    }

    /// What level sizing (targets, scores, pending bytes) reads of these
    /// options, in a DB of `num_levels` levels.
    pub(crate) fn level_sizing(&self, num_levels: usize) -> crate::version::sizing::LevelSizing {
        crate::version::sizing::LevelSizing {
            num_levels,
            l0_trigger: self.level0_file_num_compaction_trigger,
            max_bytes_for_level_base: self.max_bytes_for_level_base,
            multiplier: self.max_bytes_for_level_multiplier,
            dynamic: self.level_compaction_dynamic_level_bytes,
        }
    }

    /// `max_compaction_bytes` with 0 resolved to 25 × `target_file_size_base`.
    pub(crate) fn max_compaction_bytes(&self) -> u64 {
        if self.max_compaction_bytes == 0 {
            self.target_file_size_base.saturating_mul(25)
        } else {
            self.max_compaction_bytes
        }
    }

    /// Compression used for SSTs written to `level` (bottommost when
    /// `is_bottommost`).
    pub(crate) fn compression_for_level(&self, level: usize, is_bottommost: bool) -> Compression {
        if is_bottommost {
            if let Some(c) = self.bottommost_compression {
                return c;
            }
        }
        let i = level.min(self.compression_per_level.len().saturating_sub(1));
        self.compression_per_level
            .get(i)
            .copied()
            .unwrap_or(Compression::None)
    }

    /// Target size of output files on `level`.
    pub(crate) fn target_file_size(&self, level: usize) -> u64 {
        let mut t = self.target_file_size_base;
        for _ in 1..level.max(1) {
            t = t.saturating_mul(self.target_file_size_multiplier);
        }
        t
    }

    /// The compaction style's `name=value` lines (only what differs from
    /// the defaults).
    pub(crate) fn style_lines(&self) -> Vec<(String, String)> {
        compaction_style::text_lines(
            self.compaction_style,
            &self.compaction_options_universal,
            &self.compaction_options_fifo,
        )
    }

    /// The options as `name=value` lines (the MANIFEST's persisted form).
    pub(crate) fn to_text(&self) -> String {
        let comp: Vec<&str> = self
            .compression_per_level
            .iter()
            .map(|c| c.name())
            .collect();
        let mut s = String::new();
        let mut line = |k: &str, v: String| {
            let _ = writeln!(s, "{k}={v}");
        };
        line("write_buffer_size", self.write_buffer_size.to_string());
        line(
            "max_write_buffer_number",
            self.max_write_buffer_number.to_string(),
        );
        line(
            "memtable_bloom_size_ratio",
            self.memtable_bloom_size_ratio.to_string(),
        );
        line("block_size", self.block_size.to_string());
        line(
            "block_restart_interval",
            self.block_restart_interval.to_string(),
        );
        line("block_restart_bytes", self.block_restart_bytes.to_string());
        line("block_align", self.block_align.to_string());
        line(
            "block_size_deviation",
            self.block_size_deviation.to_string(),
        );
        line("bloom_bits_per_key", self.bloom_bits_per_key.to_string());
        if !self.bloom_bits_per_key_per_level.is_empty() {
            let v: Vec<String> = self
                .bloom_bits_per_key_per_level
                .iter()
                .map(f64::to_string)
                .collect();
            line("bloom_bits_per_key_per_level", v.join(":"));
        }
        if let Some(e) = self.prefix_extractor {
            line("prefix_extractor", e.name());
        }
        if let Some(p) = self.sst_partitioner_factory {
            line("sst_partitioner_factory", p.name());
        }
        if let Some(d) = self.detect_insert_streams {
            line("detect_insert_streams", d.to_string());
        }
        // Written when not the default, so older options text reads the same.
        if !self.whole_key_filtering {
            line("whole_key_filtering", "false".into());
        }
        if self.memtable_whole_key_filtering {
            line("memtable_whole_key_filtering", "true".into());
        }
        line("compression_per_level", comp.join(":"));
        line(
            "bottommost_compression",
            self.bottommost_compression
                .map_or("Disabled", |c| c.name())
                .to_string(),
        );
        line(
            "disable_auto_compactions",
            self.disable_auto_compactions.to_string(),
        );
        line(
            "level0_file_num_compaction_trigger",
            self.level0_file_num_compaction_trigger.to_string(),
        );
        line(
            "level0_slowdown_writes_trigger",
            self.level0_slowdown_writes_trigger.to_string(),
        );
        line(
            "level0_stop_writes_trigger",
            self.level0_stop_writes_trigger.to_string(),
        );
        line(
            "max_bytes_for_level_base",
            self.max_bytes_for_level_base.to_string(),
        );
        line(
            "max_bytes_for_level_multiplier",
            self.max_bytes_for_level_multiplier.to_string(),
        );
        line(
            "level_compaction_dynamic_level_bytes",
            self.level_compaction_dynamic_level_bytes.to_string(),
        );
        line(
            "target_file_size_base",
            self.target_file_size_base.to_string(),
        );
        line(
            "target_file_size_multiplier",
            self.target_file_size_multiplier.to_string(),
        );
        line(
            "max_compaction_bytes",
            self.max_compaction_bytes.to_string(),
        );
        line(
            "level_compaction_dynamic_file_size",
            self.level_compaction_dynamic_file_size.to_string(),
        );
        line(
            "soft_pending_compaction_bytes_limit",
            self.soft_pending_compaction_bytes_limit.to_string(),
        );
        line(
            "hard_pending_compaction_bytes_limit",
            self.hard_pending_compaction_bytes_limit.to_string(),
        );
        if let Some(m) = &self.merge_operator {
            line("merge_operator", m.name().to_string());
        }
        if self.default_ttl_secs > 0 {
            line("default_ttl_secs", self.default_ttl_secs.to_string());
        }
        if let Some(f) = &self.compaction_filter {
            line("compaction_filter", f.name().to_string());
        }
        for (k, v) in self
            .style_lines()
            .into_iter()
            .chain(blob::text_lines(&self.blob))
        {
            line(&k, v);
        }
        s
    }

    /// Parses `to_text` output: options missing from `text` keep their
    /// defaults (a merge operator that is not a shipped one, and any
    /// compaction filter, are left unset); an unknown name or a bad value is `InvalidArgument` (the
    /// caller reports it and falls back to the defaults). The result is
    /// validated.
    pub(crate) fn from_text(text: &str) -> Result<CfOptions> {
        let mut o = CfOptions::default();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let Some((k, v)) = line.split_once('=') else {
                return Err(Error::InvalidArgument(format!(
                    "options line {line:?}: no '='"
                )));
            };
            o.set_option(k, v)?;
        }
        o.validate()?;
        Ok(o)
    }

    /// True for the options `Db::set_options` changes while the DB is open
    /// (RocksDB's mutable column family options, with its table options):
    /// each takes effect at the next decision that reads it (the next
    /// memtable, table, compaction pick or stall check). The rest shape
    /// what is already written (compaction style, partitioner, block
    /// alignment, level sizing) or are code (merge
    /// operator, compaction filter) and change only on reopen.
    pub(crate) fn changeable_while_open(name: &str) -> bool {
        CHANGEABLE_WHILE_OPEN.contains(&name)
            || (name != "compaction_style" && compaction_style::is_option(name))
            || blob::is_option(name)
    }

    /// True when `name` is an option of a family (changeable while open or
    /// not).
    pub(crate) fn is_option(name: &str) -> bool {
        Self::changeable_while_open(name)
            || FIXED_WHILE_OPEN.contains(&name)
            || compaction_style::is_option(name)
    }

    /// Sets option `k` from its text `v`, in the form of the OPTIONS file
    /// and `Db::set_options` (`set_option("compression_per_level",
    /// "NoCompression:LZ4")`); does not validate the whole (see
    /// [`CfOptions::validate`]). An unknown name or a bad value is
    /// `InvalidArgument`.
    pub fn set_option(&mut self, k: &str, v: &str) -> Result<()> {
        let o = self;
        let bad = || Error::InvalidArgument(format!("option {k}: bad value {v:?}"));
        fn num<T: std::str::FromStr>(v: &str, bad: impl Fn() -> Error) -> Result<T> {
            v.parse().map_err(|_| bad())
        }
        match k {
            "write_buffer_size" => o.write_buffer_size = num(v, bad)?,
            "max_write_buffer_number" => o.max_write_buffer_number = num(v, bad)?,
            "memtable_bloom_size_ratio" => o.memtable_bloom_size_ratio = num(v, bad)?,
            "block_size" => o.block_size = num(v, bad)?,
            "block_restart_interval" => o.block_restart_interval = num(v, bad)?,
            "block_restart_bytes" => o.block_restart_bytes = num(v, bad)?,
            "block_align" => o.block_align = num(v, bad)?,
            "block_size_deviation" => o.block_size_deviation = num(v, bad)?,
            "bloom_bits_per_key" => o.bloom_bits_per_key = num(v, bad)?,
            "bloom_bits_per_key_per_level" => {
                o.bloom_bits_per_key_per_level = v
                    .split(':')
                    .map(|x| num(x, bad))
                    .collect::<Result<Vec<f64>>>()?
            }
            "prefix_extractor" => {
                o.prefix_extractor = match v {
                    "nullptr" | "" => None,
                    n => Some(PrefixExtractor::parse(n).ok_or_else(bad)?),
                }
            }
            "sst_partitioner_factory" => {
                o.sst_partitioner_factory = match v {
                    "nullptr" | "" => None,
                    t => Some(SstPartitioner::parse(t)?),
                }
            }
            "detect_insert_streams" => o.detect_insert_streams = Some(num(v, bad)?),
            "whole_key_filtering" => o.whole_key_filtering = num(v, bad)?,
            "memtable_whole_key_filtering" => o.memtable_whole_key_filtering = num(v, bad)?,
            "compression_per_level" => {
                o.compression_per_level = v
                    .split(':')
                    .map(Compression::parse)
                    .collect::<Result<Vec<_>>>()?
            }
            "bottommost_compression" => {
                o.bottommost_compression = match v {
                    "Disabled" => None,
                    c => Some(Compression::parse(c)?),
                }
            }
            "disable_auto_compactions" => o.disable_auto_compactions = num(v, bad)?,
            "level0_file_num_compaction_trigger" => {
                o.level0_file_num_compaction_trigger = num(v, bad)?
            }
            "level0_slowdown_writes_trigger" => o.level0_slowdown_writes_trigger = num(v, bad)?,
            "level0_stop_writes_trigger" => o.level0_stop_writes_trigger = num(v, bad)?,
            "max_bytes_for_level_base" => o.max_bytes_for_level_base = num(v, bad)?,
            "max_bytes_for_level_multiplier" => o.max_bytes_for_level_multiplier = num(v, bad)?,
            "level_compaction_dynamic_level_bytes" => {
                o.level_compaction_dynamic_level_bytes = num(v, bad)?
            }
            "target_file_size_base" => o.target_file_size_base = num(v, bad)?,
            "target_file_size_multiplier" => o.target_file_size_multiplier = num(v, bad)?,
            "max_compaction_bytes" => o.max_compaction_bytes = num(v, bad)?,
            "level_compaction_dynamic_file_size" => {
                o.level_compaction_dynamic_file_size = num(v, bad)?
            }
            "soft_pending_compaction_bytes_limit" => {
                o.soft_pending_compaction_bytes_limit = num(v, bad)?
            }
            "hard_pending_compaction_bytes_limit" => {
                o.hard_pending_compaction_bytes_limit = num(v, bad)?
            }
            "default_ttl_secs" => o.default_ttl_secs = num(v, bad)?,
            // A shipped operator comes back; another must be supplied.
            "merge_operator" => o.merge_operator = crate::merge::from_name(v),
            // Code, not data: the caller supplies it again.
            "compaction_filter" => {}
            _ => {
                if !compaction_style::parse_line(
                    k,
                    v,
                    &mut o.compaction_style,
                    &mut o.compaction_options_universal,
                    &mut o.compaction_options_fifo,
                )? && !blob::parse_line(k, v, &mut o.blob)?
                {
                    return Err(Error::InvalidArgument(format!("unknown option {k:?}")));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
