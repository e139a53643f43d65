//! `Stats` as Prometheus metrics: a registry built afresh from one
//! `Stats`, encoded with `prometheus-client`'s text encoder. Every name is
//! `shale_` prefixed; counters get the encoder's `_total` suffix. The names,
//! types and labels are listed in docs/METRICS.md (keep the two in step).
//!
//! Labels: `cf` (column family name) on per-family metrics, `level`, `cause`
//! (a `StallReason` name), `type` (block type: data, index, filter),
//! `component` (memory), `purpose` (file IO: user, flush, compaction, wal, other, blob).

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use shale::{StallReason, StallState, Stats};
use std::sync::atomic::AtomicU64;

type Labels = Vec<(&'static str, String)>;
type FGauge = Gauge<f64, AtomicU64>;

/// A registry under construction.
struct Builder(Registry);

impl Builder {
    fn counter(&mut self, name: &str, help: &str, v: u64) {
        let c: Counter = Counter::default();
        c.inc_by(v);
        self.0.register(name, help, c);
    }

    fn gauge(&mut self, name: &str, help: &str, v: f64) {
        let g = FGauge::default();
        g.set(v);
        self.0.register(name, help, g);
    }

    fn gauges(&mut self, name: &str, help: &str, rows: Vec<(Labels, f64)>) {
        let f = Family::<Labels, FGauge>::default();
        for (l, v) in rows {
            f.get_or_create(&l).set(v);
        }
        self.0.register(name, help, f);
    }

    fn counters(&mut self, name: &str, help: &str, rows: Vec<(Labels, u64)>) {
        let f = Family::<Labels, Counter>::default();
        for (l, v) in rows {
            f.get_or_create(&l).inc_by(v);
        }
        self.0.register(name, help, f);
    }
}

fn cf(name: &str) -> Labels {
    vec![("cf", name.to_string())]
}

/// The text exposition of `s` (what `GET /metrics` answers).
pub fn render(s: &Stats) -> String {
    let mut b = Builder(Registry::default());
    // Per family and level.
    let mut files = Vec::new();
    let mut bytes = Vec::new();
    let mut score = Vec::new();
    for f in &s.families {
        for l in &f.levels {
            let labels = vec![("cf", f.name.clone()), ("level", l.level.to_string())];
            files.push((labels.clone(), l.files as f64));
            bytes.push((labels.clone(), l.bytes as f64));
            score.push((labels, l.score));
        }
    }
    b.gauges("shale_level_files", "Table files per level.", files);
    b.gauges("shale_level_bytes", "Bytes of the tables per level.", bytes);
    b.gauges(
        "shale_level_score",
        "Compaction score per level (>= 1 asks for a compaction).",
        score,
    );
    let per_cf = |g: &dyn Fn(&shale::CfStats) -> f64| -> Vec<(Labels, f64)> {
        s.families.iter().map(|f| (cf(&f.name), g(f))).collect()
    };
    b.gauges(
        "shale_pending_compaction_bytes",
        "Bytes compaction must rewrite to bring every level under its target.",
        per_cf(&|f| f.pending_compaction_bytes as f64),
    );
    b.gauges(
        "shale_memtable_bytes",
        "Bytes of the family's memtables.",
        per_cf(&|f| f.memtable_bytes as f64),
    );
    b.gauges(
        "shale_immutable_memtables",
        "Immutable memtables waiting for or in a flush.",
        per_cf(&|f| f.immutable_memtables as f64),
    );
    b.gauges(
        "shale_estimated_num_keys",
        "Entries in memtables and tables (overwrites and tombstones included): an estimate of the key count.",
        per_cf(&|f| f.estimated_num_keys as f64),
    );
    b.gauges(
        "shale_write_stall_state",
        "What the family's LSM shape asks of writers: 0 normal, 1 delayed, 2 stopped.",
        per_cf(&|f| match f.write_stall {
            StallState::Normal => 0.0,
            StallState::Delayed => 1.0,
            StallState::Stopped => 2.0,
        }),
    );

    // Flushes and compactions.
    let c = &s.compaction;
    b.counter("shale_flushes", "Flushes finished.", c.flushes);
    b.counter(
        "shale_flush_bytes",
        "Bytes written by flushes.",
        c.flush_bytes,
    );
    b.counter(
        "shale_compactions",
        "Compaction jobs finished (delete-only included, trivial moves not).",
        c.compactions,
    );
    b.counter(
        "shale_compaction_read_bytes",
        "Bytes compactions read.",
        c.compaction_bytes_read,
    );
    b.counter(
        "shale_compaction_written_bytes",
        "Bytes compactions wrote.",
        c.compaction_bytes_written,
    );
    b.counter(
        "shale_compaction_moved_bytes",
        "Bytes moved down a level without a rewrite.",
        c.compaction_bytes_moved,
    );
    b.gauge(
        "shale_write_amplification",
        "Bytes written by flushes and compactions over the bytes flushed.",
        c.write_amp,
    );

    // Operations and WAL.
    let o = &s.ops;
    b.counter("shale_writes", "Write calls.", o.writes);
    b.counter("shale_keys_written", "Keys written.", o.keys_written);
    b.counter(
        "shale_keys_read",
        "Keys looked up by get and multi_get.",
        o.keys_read,
    );
    b.counter(
        "shale_ingest_bytes",
        "Bytes of the batches written.",
        o.ingest_bytes,
    );
    b.counter(
        "shale_commit_groups",
        "Write groups committed.",
        o.commit_groups,
    );
    b.counter("shale_wal_writes", "WAL writes.", s.wal.writes);
    b.counter("shale_wal_bytes", "Bytes appended to the WAL.", s.wal.bytes);
    b.counter("shale_wal_syncs", "WAL syncs.", s.wal.syncs);
    b.gauge(
        "shale_wal_live_files",
        "WAL files not yet deleted.",
        s.wal.live_files as f64,
    );
    b.gauge(
        "shale_wal_live_bytes",
        "Bytes of the live WAL files.",
        s.wal.live_bytes as f64,
    );

    // Stalls.
    let cause = |r: StallReason| vec![("cause", r.name().to_string())];
    b.counters(
        "shale_stalls",
        "Write stalls begun, by cause.",
        s.stalls
            .causes
            .iter()
            .map(|c| (cause(c.cause), c.count))
            .collect(),
    );
    b.counters(
        "shale_stall_micros",
        "Microseconds writers spent delayed or stopped, by cause.",
        s.stalls
            .causes
            .iter()
            .map(|c| (cause(c.cause), c.micros))
            .collect(),
    );
    b.gauges(
        "shale_stalls_active",
        "Write slowdowns or stops in force now, by cause (see Db::stats().stalls_now for why).",
        StallReason::ALL
            .iter()
            .map(|&r| {
                let n = s.stalls_now.iter().filter(|e| e.reason == r).count();
                (cause(r), n as f64)
            })
            .collect(),
    );

    // Block cache and reads.
    let k = &s.cache;
    let ty = |t: &str| vec![("type", t.to_string())];
    b.counters(
        "shale_block_cache_hits",
        "Block cache lookups that hit, by block type.",
        vec![
            (ty("data"), k.data_hits),
            (ty("index"), k.index_hits),
            (ty("filter"), k.filter_hits),
        ],
    );
    b.counters(
        "shale_block_cache_misses",
        "Block cache lookups that missed, by block type.",
        vec![
            (ty("data"), k.data_misses),
            (ty("index"), k.index_misses),
            (ty("filter"), k.filter_misses),
        ],
    );
    b.gauge(
        "shale_block_cache_capacity_bytes",
        "Block cache capacity (0: no block cache).",
        k.capacity as f64,
    );
    b.counter(
        "shale_block_reads",
        "Blocks read from table files.",
        k.blocks_read,
    );
    b.counter(
        "shale_block_read_bytes",
        "Bytes of blocks read from table files.",
        k.block_read_bytes,
    );
    b.counter("shale_bloom_checks", "Bloom filter checks.", k.bloom_checks);
    b.counter(
        "shale_bloom_useful",
        "Bloom filter checks that answered absent and saved a table read.",
        k.bloom_useful,
    );

    // Memory and background.
    let m = &s.memory;
    let comp = |c: &str| vec![("component", c.to_string())];
    b.gauges(
        "shale_memory_bytes",
        "Memory by component.",
        vec![
            (comp("memtables"), m.memtables as f64),
            (comp("block_cache"), m.block_cache as f64),
            (comp("block_cache_pinned"), m.block_cache_pinned as f64),
            (comp("table_readers"), m.table_readers as f64),
            (comp("buffers"), m.buffers as f64),
        ],
    );
    b.gauge(
        "shale_memory_budget_bytes",
        "memory_budget (0: none).",
        m.budget as f64,
    );
    b.gauge(
        "shale_block_cache_capacity_bytes",
        "The block cache's capacity now (under a memory budget, what the other components leave).",
        m.block_cache_capacity as f64,
    );
    b.gauge(
        "shale_open_tables",
        "Open table readers.",
        m.open_tables as f64,
    );
    let g = &s.background;
    b.gauge(
        "shale_compactions_running",
        "Compactions running.",
        g.compactions_running as f64,
    );
    b.gauge(
        "shale_flushes_running",
        "Flushes running.",
        g.flushes_running as f64,
    );
    b.counter(
        "shale_background_errors",
        "Background errors since open.",
        g.errors,
    );
    b.gauge(
        "shale_writes_stopped",
        "1 while a background error refuses writes.",
        if g.writes_stopped { 1.0 } else { 0.0 },
    );
    b.gauge("shale_uptime_seconds", "Seconds since open.", s.uptime_secs);

    // File IO by purpose.
    let io = |f: fn(&shale::IoPurposeStats) -> u64| {
        s.io.purposes
            .iter()
            .map(|p| (vec![("purpose", p.purpose.to_string())], f(p)))
            .collect::<Vec<_>>()
    };
    b.counters(
        "shale_io_read_bytes",
        "Bytes read from files, by purpose.",
        io(|p| p.read_bytes),
    );
    b.counters(
        "shale_io_read_requests",
        "Read requests to files, by purpose.",
        io(|p| p.read_requests),
    );
    b.counters(
        "shale_io_write_bytes",
        "Bytes written to files, by purpose.",
        io(|p| p.write_bytes),
    );
    b.counters(
        "shale_io_write_requests",
        "Write requests (hand-offs to the OS), by purpose.",
        io(|p| p.write_requests),
    );

    let mut out = String::new();
    // Writing into a String cannot fail.
    let _ = encode(&mut out, &b.0);
    out
}
