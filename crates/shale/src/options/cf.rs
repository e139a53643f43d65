//! `CfOptions`: the options of one column family (memtables, table format,
//! LSM shape and compaction triggers), declared once with their text
//! (`declare_options!`), validated at open and at create, and persisted as
//! `name=value` text in the MANIFEST with the family's create (and again
//! when the family is opened with other options or changed while open).
//!
//! [`Options`](crate::Options) holds the `default` family's in its field
//! `cf`; every other family has its own `CfOptions`.

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
use crate::base::declare::{declare_options, flatten, OptionInfo, Section};

declare_options! {
    /// Options of one column family (RocksDB's `ColumnFamilyOptions`, with
    /// its `BlockBasedTableOptions`). The `default` family's are
    /// [`Options::cf`](crate::Options::cf).
    #[derive(Clone, Debug, PartialEq)]
    pub struct CfOptions;
    /// A change of one option of a family while the DB is open
    /// (`Db::set_options`): a variant for each option that may change then
    /// (RocksDB's mutable column family options, with its table options),
    /// documented as the field it sets. Each takes effect at the next
    /// decision that reads it (the next memtable, table, compaction pick or
    /// stall check). The other options shape what is already written
    /// (compaction style, partitioner, block alignment, level sizing) or are
    /// code (merge operator, compaction filter) and change only on reopen.
    #[derive(Clone, Debug, PartialEq)]
    pub enum CfOption;
    {
        /// Bytes in a memtable before it is switched and flushed. Default 64 MiB.
        write_buffer_size / WriteBufferSize: usize = 64 << 20,
            mutable always Cf "write_buffer_size",
            check(v) *v < 4096 => format!("write_buffer_size {v} < 4096");
        /// Memtables (active + immutable) kept before writes stall. Default 2.
        max_write_buffer_number / MaxWriteBufferNumber: usize = 2,
            mutable always Cf "max_write_buffer_number",
            check(v) *v < 2 => format!("max_write_buffer_number {v} < 2");
        /// Size of each memtable's bloom filter over its user keys, as a share
        /// of `write_buffer_size` (RocksDB's `memtable_prefix_bloom_size_ratio`:
        /// whole keys without a `prefix_extractor`; with one, prefixes, and
        /// whole keys too per `memtable_whole_key_filtering`).
        /// Point reads of keys a memtable does not hold skip its skiplist. The
        /// filter counts toward the memtable's size. 0 disables; at most 0.25.
        /// Default 0.02 (RocksDB: 0, off).
        memtable_bloom_size_ratio / MemtableBloomSizeRatio: f64 = 0.02,
            mutable always Cf "memtable_bloom_size_ratio",
            check(v) !(0.0..=0.25).contains(v) => format!("memtable_bloom_size_ratio {v} not in [0, 0.25]");
        /// Target size of an uncompressed data block. Default 4 KiB.
        block_size / BlockSize: usize = 4096,
            mutable always Table "block_size",
            check(v) *v == 0 || *v > (1 << 30) => format!("block_size {v} out of range");
        /// Keys between restart points in a data block. Default 16.
        block_restart_interval / BlockRestartInterval: usize = 16,
            mutable always Table "block_restart_interval",
            check(v) *v == 0 => "block_restart_interval must be > 0".into();
        /// A data block also starts a new restart point once the entries since
        /// the last one span this many bytes; 0 restarts by count only (as
        /// RocksDB). A point lookup binary-searches the restart points and then
        /// scans one interval entry by entry, so with large values a byte bound
        /// turns a scan of up to `block_restart_interval` cache-missing entries
        /// into a few more binary-search steps, at the cost of 4 bytes and the
        /// shared key prefix per extra restart. Default 1024.
        block_restart_bytes / BlockRestartBytes: usize = 1024,
            mutable always Table "block_restart_bytes";
        /// Aligned data blocks (RocksDB's `block_align`): each starts at a
        /// multiple of min(`block_size`, 4 KiB) and, with its 5-byte trailer,
        /// fits in `block_size` unless one entry is larger; zeros pad the gap.
        /// A point read of a block is then one page from the device instead of
        /// the two an unaligned 4 KiB block straddles, at the cost of the
        /// padding. Requires no compression on any level and a power-of-two
        /// `block_size` (else `InvalidArgument`). Default false.
        block_align / BlockAlign: bool = false,
            fixed always Table "block_align";
        /// A data block is cut before an entry that would take it past
        /// `block_size` once it is at least `100 - block_size_deviation` percent
        /// full (RocksDB's `block_size_deviation`; otherwise it is cut after the
        /// entry that reaches `block_size`), so blocks stay near `block_size`
        /// rather than one entry over it. 0 turns this off (as does 100, as in
        /// RocksDB); above 100 is `InvalidArgument`. Ignored with `block_align`,
        /// which always cuts before. Default 10.
        block_size_deviation / BlockSizeDeviation: u32 = 10,
            mutable always Table "block_size_deviation",
            check(v) *v > 100 => format!("block_size_deviation {v} > 100");
        /// Bloom filter bits per key; 0 disables the filter. Default 10.
        bloom_bits_per_key / BloomBitsPerKey: u32 = 10,
            mutable always Table "bloom_bits_per_key",
            check(v) *v > 100 => format!("bloom_bits_per_key {v} > 100");
        /// Bloom bits per key by output level, Monkey-style (more bits where
        /// fewer keys live): flushes use entry 0, a compaction the entry of its
        /// output level, the last entry applies to deeper levels. Empty (the
        /// default) uses `bloom_bits_per_key` for every level. Each in [0, 100].
        bloom_bits_per_key_per_level / BloomBitsPerKeyPerLevel: Vec<f64> = Vec::new(),
            mutable sparse Table "bloom_bits_per_key_per_level",
            check(v) v.iter().any(|b| !(0.0..=100.0).contains(b)) => format!(
                "bloom_bits_per_key_per_level entry {} not in [0, 100]",
                v.iter().find(|b| !(0.0..=100.0).contains(*b)).unwrap_or(&0.0)
            );
        /// Maps user keys to prefixes (RocksDB's `prefix_extractor`): SST and
        /// memtable filters then hold each key's prefix, seeks with
        /// `ReadOptions::prefix_same_as_start` skip tables and memtables whose
        /// filter rules the seek key's prefix out, and stop at the first key
        /// with another prefix. Persisted by name (`rocksdb.FixedPrefix.8`);
        /// tables written with another extractor are read without their prefix
        /// filter. Changes while open: every memtable and table records the
        /// extractor its prefix filter was built with and answers "maybe" to
        /// another (RocksDB's rule), and each read takes the family's
        /// extractor once. Default `None`.
        prefix_extractor / PrefixExtractor: Option<PrefixExtractor> = None,
            mutable sparse Cf "prefix_extractor",
            check(v) v.is_some_and(|e| e.is_empty() || e.len() > 1 << 20) => format!(
                "prefix_extractor {}: length must be in 1..=1048576",
                v.map(|e| e.name()).unwrap_or_default()
            );
        /// Compaction outputs below L0 never span two of its partitions
        /// (RocksDB's `sst_partitioner_factory`); in leveled families flush
        /// outputs neither (RocksDB cuts no flush). Outputs written to L0 by a
        /// compaction (intra-L0 merges) are never cut: a merge that reduces
        /// the L0 file count must make fewer files. Default `None`.
        sst_partitioner_factory / SstPartitionerFactory: Option<SstPartitioner> = None,
            fixed sparse Cf "sst_partitioner_factory";
        /// Flush outputs, and compaction outputs below L0, end where an
        /// ascending insert stream of the memtable (of the merged inputs) ends
        /// (`build::cuts`), so interleaved streams land in disjoint tables
        /// that later move down levels without rewrites. `None` (the
        /// default): on for leveled families, off for universal (each L0 file
        /// is a sorted run there) and FIFO; `Some(true)` with those styles is
        /// refused.
        detect_insert_streams / DetectInsertStreams: Option<bool> = None,
            fixed sparse Cf "detect_insert_streams";
        /// With a prefix extractor, SST filters also hold whole keys, so point
        /// reads are filtered by key (`false`: by prefix only, smaller
        /// filters). Without an extractor filters are always whole-key.
        /// Default true.
        whole_key_filtering / WholeKeyFiltering: bool = true,
            mutable sparse Table "whole_key_filtering";
        /// With a prefix extractor, memtable blooms also hold whole keys (for
        /// point reads). Default false, as RocksDB. Without an extractor the
        /// memtable bloom always holds whole keys.
        memtable_whole_key_filtering / MemtableWholeKeyFiltering: bool = false,
            mutable sparse Cf "memtable_whole_key_filtering";
        /// Compression per level (the last entry applies to deeper levels).
        /// Default: none for every level.
        compression_per_level / CompressionPerLevel: Vec<Compression> = vec![Compression::None],
            mutable always Cf "compression_per_level",
            check(v) v.is_empty() => "compression_per_level must not be empty".into();
        /// Compression for the bottommost level, overriding
        /// `compression_per_level` there. Default: same as the level's.
        bottommost_compression / BottommostCompression: Option<Compression> = None,
            mutable always Cf "bottommost_compression";
        /// No automatic compaction of this family (RocksDB's
        /// `disable_auto_compactions`): the picker, delete-only drops and FIFO
        /// drops leave it alone, and its writes do not stall on L0 files or
        /// pending compaction bytes (memtable stalls remain); `compact_range`
        /// still compacts it. For bulk loads: load, `compact_range`, reopen
        /// without it. Default false.
        disable_auto_compactions / DisableAutoCompactions: bool = false,
            mutable always Cf "disable_auto_compactions";
        /// L0 file count that triggers a compaction. Default 4.
        level0_file_num_compaction_trigger / Level0FileNumCompactionTrigger: usize = 4,
            mutable always Cf "level0_file_num_compaction_trigger",
            check(v) *v == 0 => "level0_file_num_compaction_trigger must be > 0".into();
        /// L0 file count that slows writes. Default 20.
        level0_slowdown_writes_trigger / Level0SlowdownWritesTrigger: usize = 20,
            mutable always Cf "level0_slowdown_writes_trigger";
        /// L0 file count that stops writes. Default 36.
        level0_stop_writes_trigger / Level0StopWritesTrigger: usize = 36,
            mutable always Cf "level0_stop_writes_trigger";
        /// Target size of L1 (or the base level). Default 256 MiB.
        max_bytes_for_level_base / MaxBytesForLevelBase: u64 = 256 << 20,
            mutable always Cf "max_bytes_for_level_base",
            check(v) *v == 0 => "max_bytes_for_level_base and target_file_size_base must be > 0".into();
        /// Growth factor between levels (finite, >= 2). Default 10.
        max_bytes_for_level_multiplier / MaxBytesForLevelMultiplier: f64 = 10.0,
            mutable always Cf "max_bytes_for_level_multiplier",
            check(v) !v.is_finite() || *v < 2.0 => format!(
                "max_bytes_for_level_multiplier {v} must be a finite number >= 2"
            );
        /// Size levels backwards from the last one. Default true.
        level_compaction_dynamic_level_bytes / LevelCompactionDynamicLevelBytes: bool = true,
            fixed always Cf "level_compaction_dynamic_level_bytes";
        /// Target SST size of L1. Default 64 MiB.
        target_file_size_base / TargetFileSizeBase: u64 = 64 << 20,
            mutable always Cf "target_file_size_base",
            check(v) *v == 0 => "max_bytes_for_level_base and target_file_size_base must be > 0".into();
        /// Growth of the target SST size per level. Default 1.
        target_file_size_multiplier / TargetFileSizeMultiplier: u64 = 1,
            mutable always Cf "target_file_size_multiplier",
            check(v) *v == 0 => "target_file_size_multiplier must be > 0".into();
        /// Most bytes one compaction may read, and the grandparent-overlap limit
        /// at which compaction outputs are cut early and above which a file is
        /// not trivially moved; 0 = 25 × `target_file_size_base` (RocksDB's
        /// default). Larger values allow bigger, longer compactions.
        max_compaction_bytes / MaxCompactionBytes: u64 = 0,
            mutable always Cf "max_compaction_bytes";
        /// Cut compaction outputs at the next level's file boundaries once they
        /// hold 50-90% of the target file size (RocksDB's option of that name),
        /// so each output overlaps few files below and later compactions out of
        /// its level rewrite less; the cost is files of varying size. Default
        /// true.
        level_compaction_dynamic_file_size / LevelCompactionDynamicFileSize: bool = true,
            mutable always Cf "level_compaction_dynamic_file_size";
        /// Writes are delayed (at `delayed_write_rate`) once the estimated bytes
        /// compaction must rewrite reach this; 0 disables. Default 64 GiB.
        soft_pending_compaction_bytes_limit / SoftPendingCompactionBytesLimit: u64 = 64 << 30,
            mutable always Cf "soft_pending_compaction_bytes_limit";
        /// Writes stop until compaction catches up once the estimated pending
        /// compaction bytes reach this; 0 disables. Default 256 GiB.
        hard_pending_compaction_bytes_limit / HardPendingCompactionBytesLimit: u64 = 256 << 30,
            mutable always Cf "hard_pending_compaction_bytes_limit";
        /// The merge operator (`Db::merge`): combines a key's operands, oldest
        /// first, with its value, on reads and where flush and compaction can.
        /// `None` (the default) refuses merges with `InvalidArgument`.
        /// Shipped: [`UInt64AddOperator`](crate::UInt64AddOperator),
        /// [`StringAppendOperator`](crate::StringAppendOperator),
        /// [`MaxOperator`](crate::MaxOperator). Persisted by name: the
        /// shipped operators come back when the family is opened with its
        /// persisted options.
        merge_operator / MergeOperator: Option<Arc<dyn MergeOperator>> = None,
            fixed sparse Cf "merge_operator";
        /// Every put in the family (not merges) expires this many seconds
        /// after it is written. 0 (the default): puts do not expire unless
        /// written with `put_with_ttl`.
        default_ttl_secs / DefaultTtlSecs: u64 = 0,
            mutable sparse Cf "default_ttl_secs";
        /// The compaction filter: asked about each key's newest value that no
        /// snapshot can see, as flush and compaction rewrite it (keep, remove,
        /// change). Written by name; code the program supplies at each open.
        /// Default `None`.
        compaction_filter / CompactionFilter: Option<Arc<dyn CompactionFilter>> = None,
            fixed sparse Cf "compaction_filter";
        /// How the family's tables are compacted. Default `Level`.
        compaction_style / CompactionStyle: CompactionStyle = CompactionStyle::Level,
            fixed sparse Cf "compaction_style";
        /// Options of universal compaction (used when `compaction_style` is
        /// `Universal`).
        compaction_options_universal / CompactionOptionsUniversal: UniversalCompactionOptions =
            UniversalCompactionOptions::default(),
            mutable group Cf "compaction_options_universal.";
        /// Options of FIFO compaction (used when `compaction_style` is `Fifo`).
        compaction_options_fifo / CompactionOptionsFifo: FifoCompactionOptions =
            FifoCompactionOptions::default(),
            mutable group Cf "compaction_options_fifo.";
        /// Key-value separation: large values in blob files (RocksDB's
        /// integrated BlobDB). Default off.
        blob / Blob: BlobOptions = BlobOptions::default(),
            mutable group Cf "";
    }
}

impl CfOptions {
    /// Checks every option; `InvalidArgument` names the first bad one.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::InvalidArgument(m));
        self.check_fields()?;
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
    /// Checks what depends on the DB's `num_levels` and
    /// `allow_ingest_behind`.
    pub(crate) fn validate_levels(&self, num_levels: usize, ingest_behind: bool) -> Result<()> {
        compaction_style::validate_levels(
            self.compaction_style,
            &self.compaction_options_universal,
            num_levels,
            ingest_behind,
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
        self.lines()
            .into_iter()
            .filter(|(k, _, _)| k == "compaction_style" || k.starts_with("compaction_options_"))
            .map(|(k, v, _)| (k, v))
            .collect()
    }

    /// The persisted lines: name, text, and the OPTIONS file section.
    pub(crate) fn lines(&self) -> Vec<(String, String, Section)> {
        self.text_lines()
            .into_iter()
            .map(|l| (l.name, l.value, l.section))
            .collect()
    }

    /// The options as `name=value` lines (the MANIFEST's persisted form).
    pub(crate) fn to_text(&self) -> String {
        self.text_lines()
            .into_iter()
            .map(|l| format!("{}={}\n", l.name, l.value))
            .collect()
    }

    /// Parses `to_text` output: options missing from `text` keep their
    /// defaults (a merge operator that is not a shipped one, and any
    /// compaction filter, are left unset); an unknown name or a bad value
    /// is `InvalidArgument` (the caller reports it and falls back to the
    /// defaults). The result is validated.
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
    /// (those with a [`CfOption`] variant, and the members of the
    /// universal, FIFO and blob groups).
    pub(crate) fn changeable_while_open(name: &str) -> bool {
        flatten(Self::DECLARED)
            .iter()
            .any(|(n, _, mutable, _)| n == name && *mutable)
    }

    /// True when `name` is an option of a family (changeable while open or
    /// not).
    pub(crate) fn is_option(name: &str) -> bool {
        flatten(Self::DECLARED).iter().any(|(n, ..)| n == name)
    }

    /// Every option of a family, in the order the persisted text lists
    /// them: see [`OptionInfo`].
    pub fn option_infos() -> Vec<OptionInfo> {
        OptionInfo::of(Self::DECLARED)
    }

    /// Sets option `k` from its text `v`, in the form of the OPTIONS file
    /// and `Db::set_options_from_strings` (`set_option("compression_per_level",
    /// "NoCompression:LZ4")`); does not validate the whole (see
    /// [`CfOptions::validate`]). An unknown name or a bad value is
    /// `InvalidArgument`.
    pub fn set_option(&mut self, k: &str, v: &str) -> Result<()> {
        if self.set_text(k, k, v)? {
            return Ok(());
        }
        Err(Error::InvalidArgument(format!("unknown option {k:?}")))
    }
}

impl CfOption {
    /// The typed change that `Db::set_options_from_strings(&[(name,
    /// value)])` makes to a family whose options are `current` (a member of
    /// a group, `compaction_options_universal.size_ratio`, gives the whole
    /// group with it changed): the string form parsed. An unknown name, a
    /// bad value or an option that changes only on reopen is
    /// `InvalidArgument`.
    pub fn parse(name: &str, value: &str, current: &CfOptions) -> Result<CfOption> {
        crate::base::declare::parse_change(
            CfOptions::DECLARED,
            current,
            name,
            value,
            |o, n, v| o.set_text(n, n, v),
            CfOption::from_field,
            "set_options",
        )
    }
}

#[cfg(test)]
mod tests;
