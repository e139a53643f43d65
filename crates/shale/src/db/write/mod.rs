//! The write path: group commit with pipelined, concurrent memtable inserts.
//!
//! Each `write` call queues a request. The request at the head of the queue
//! becomes the leader: it makes room (memtable switch, stalls), takes the
//! requests behind it into one group (up to `MAX_GROUP_BYTES`, never mixing a
//! sync request into a non-sync leader's group), and under the WAL lock
//! assigns the group's sequence numbers, appends one WAL record per request
//! with one `write(2)` and at most one fsync for the group, and registers the
//! group as in flight. Then it leaves the queue, so the next group's leader
//! writes the WAL while this group inserts into the memtable (RocksDB's
//! pipelined write).
//!
//! With `allow_concurrent_memtable_write` (default, as RocksDB) every member
//! of a group inserts its own batch (`Request::insert`), outside the WAL lock,
//! at the same time as the members of other groups. A group publishes its
//! sequence numbers once all its members have inserted and every earlier
//! group has published (`publish`), so readers see writes in sequence order
//! and never part of a group. Without it the leader inserts the whole group
//! under the WAL lock, one group at a time.
//!
//! A non-sync write with nothing to share with a group skips the queue
//! (`write_unqueued`): without the WAL, or with a memory-mapped WAL
//! (`Options::wal_mmap_writes`), where appending a record is a copy into the
//! page cache, it takes its sequence numbers and appends its record under
//! the WAL lock itself, then inserts and publishes like a group of one. The
//! queue remains for sync writes (one fsync per group) and for WALs written
//! with `write(2)` (one system call per group).
//!
//! Column families: a batch names families by id; each record goes to the
//! active memtable of its family (`MemRouter`). A batch naming a dropped
//! family is refused before it is queued; a family dropped after that check
//! loses the batch's records for it (the write is ordered before the drop).
//! A family's memtable that fills is reported in `DbInner::full_cfs` and
//! switched by the next leader, which also enforces `max_total_wal_size`,
//! `db_write_buffer_size` and the memtables' share of `memory_budget`.
//!
//! Invariants: only a leader holding the WAL lock touches `WalState`
//! (sequence allocation included); a group is in flight from its sequence
//! allocation (under the WAL lock) until it is published (`visible_seq`
//! reaches its last number), and a memtable switch takes the WAL lock and
//! then waits for no group in flight (`lock_wal_quiesced`), so no insert
//! ever goes
//! into a memtable after it became immutable and a flushed memtable's
//! entries are all visible; sequence numbers become visible in order.
//!
//! Files: `commit` (the entry and the leader's group commit), `queue`
//! (requests and their slots), `insert` (a group's memtable inserts),
//! `publish` (the WAL write and the publication), `room` (memtable
//! switches and stalls before a group). The memtable switch itself is
//! `shared::memtables::switch_memtable` (flushes and recovery switch too).

mod commit;
mod insert;
mod publish;
mod queue;
mod room;

pub(crate) use commit::write;
pub(crate) use insert::{insert_batch, MemTarget};
pub(crate) use publish::flush_wal;
pub(crate) use queue::WriteQueue;
