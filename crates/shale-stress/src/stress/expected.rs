//! The expected state: what each key must hold, in a file that survives
//! `kill -9` (RocksDB db_stress's `ExpectedState`, with `pwrite` instead of
//! mmap).
//!
//! Layout (little-endian): a 32-byte header — magic `SHSTRESS`, format
//! version u32, num_levels u32 (chosen when the DB was created: a DB cannot be
//! reopened with fewer levels), max_key u64, column families u32, no-overwrite
//! percent u32 (version 3; version 2 had column families as a u64, whose high
//! half, 0, reads as percent 0) — then one u64 slot per (family, key),
//! family-major:
//! - low 32 bits: the committed state, 0 = absent, else the value base;
//! - high 32 bits: 0 = nothing pending, else `PENDING | new state`;
//!
//! then one u64 *batch tag* per (family, key), in the same order: the tag of
//! the last multi-key batch that marked the key pending (0: a single-key
//! write), so that after a kill the pending keys of one batch can be found
//! again, across families, and checked to be all applied or all not.
//!
//! No-overwrite keys ([`ExpectedState::no_overwrite`], a fixed share of the
//! keys chosen when the file is created, like RocksDB db_stress's
//! `--nooverwritepercent`) are put only while absent and removed only with
//! `single_delete`, so every single delete meets exactly one put (its
//! contract), also across kills: verification resolves a pending write to
//! what the DB holds before the next write.
//!
//! Protocol: before a write, the key's tag and then its slot get the batch
//! tag and the pending new state; after the write returns, the slot gets the
//! committed new state. Each update is one aligned 8-byte `pwrite`, which a
//! process kill cannot tear. After a kill, a pending key may hold either
//! state, but all pending keys of one batch the same choice.
//!
//! Thread safety: slots are atomics mirrored to the file; callers serialize
//! writers of one key (see `key_locks`).

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

const MAGIC: &[u8; 8] = b"SHSTRESS";
const VERSION: u32 = 3;
const HEADER: u64 = 32;
const PENDING: u32 = 1 << 31;

/// A key's state: 0 = absent, else a value base in `1..2^31`.
pub type ValueState = u32;

/// One key's slot, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// The state after the last acknowledged write.
    pub committed: ValueState,
    /// The state of a write that started but was not acknowledged.
    pub pending: Option<ValueState>,
}

impl Slot {
    fn decode(raw: u64) -> Slot {
        let hi = (raw >> 32) as u32;
        Slot {
            committed: raw as u32,
            pending: (hi & PENDING != 0).then_some(hi & !PENDING),
        }
    }

    fn encode(self) -> u64 {
        let hi = self.pending.map_or(0, |p| PENDING | p);
        (u64::from(hi) << 32) | u64::from(self.committed)
    }

    /// True if `state` is allowed by this slot.
    pub fn allows(&self, state: ValueState) -> bool {
        state == self.committed || self.pending == Some(state)
    }
}

/// The expected state of every key of every family, in memory and in its
/// file. Keys are addressed by their *index* `cf * max_key + key`
/// ([`ExpectedState::index`]).
pub struct ExpectedState {
    file: File,
    slots: Vec<AtomicU64>,
    tags: Vec<AtomicU64>,
    num_levels: u32,
    max_key: u64,
    num_cfs: u32,
    no_overwrite_percent: u32,
}

impl ExpectedState {
    /// Creates a fresh file (every key of `num_cfs` families absent),
    /// replacing any old one; `no_overwrite_percent` (at most 100) of the
    /// keys are never overwritten.
    pub fn create(
        path: &Path,
        max_key: u64,
        num_cfs: u32,
        num_levels: u32,
        no_overwrite_percent: u32,
    ) -> io::Result<ExpectedState> {
        if no_overwrite_percent > 100 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("no-overwrite percent {no_overwrite_percent} over 100"),
            ));
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        let mut header = [0u8; HEADER as usize];
        header[..8].copy_from_slice(MAGIC);
        header[8..12].copy_from_slice(&VERSION.to_le_bytes());
        header[12..16].copy_from_slice(&num_levels.to_le_bytes());
        header[16..24].copy_from_slice(&max_key.to_le_bytes());
        header[24..28].copy_from_slice(&num_cfs.to_le_bytes());
        header[28..32].copy_from_slice(&no_overwrite_percent.to_le_bytes());
        file.write_all_at(&header, 0)?;
        let n = max_key * u64::from(num_cfs);
        file.set_len(HEADER + 16 * n)?;
        file.sync_all()?;
        Ok(ExpectedState {
            file,
            slots: (0..n).map(|_| AtomicU64::new(0)).collect(),
            tags: (0..n).map(|_| AtomicU64::new(0)).collect(),
            num_levels,
            max_key,
            num_cfs,
            no_overwrite_percent,
        })
    }

    /// Opens an existing file (format version 2 or 3).
    pub fn open(path: &Path) -> io::Result<ExpectedState> {
        let bad = |m: String| io::Error::new(io::ErrorKind::InvalidData, m);
        let file = OpenOptions::new().read(true).write(true).open(path)?;
        let mut header = [0u8; HEADER as usize];
        file.read_exact_at(&mut header, 0)?;
        // `header` is a fixed-size array: the constant ranges below are in bounds.
        if &header[0..8] != MAGIC {
            return Err(bad(format!(
                "{}: not an expected-state file",
                path.display()
            )));
        }
        let u32_at =
            |o: usize| u32::from_le_bytes([header[o], header[o + 1], header[o + 2], header[o + 3]]);
        if u32_at(8) != VERSION && u32_at(8) != 2 {
            return Err(bad(format!("{}: version {}", path.display(), u32_at(8))));
        }
        let num_levels = u32_at(12);
        let u64_at = |o: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&header[o..o + 8]);
            u64::from_le_bytes(b)
        };
        let (max_key, num_cfs, no_overwrite_percent) = (u64_at(16), u32_at(24), u32_at(28));
        if max_key == 0
            || max_key > u64::from(u32::MAX)
            || num_cfs == 0
            || num_cfs > 1024
            || no_overwrite_percent > 100
        {
            return Err(bad(format!(
                "{}: bad header: max_key {max_key}, column families {num_cfs}, \
                 no-overwrite percent {no_overwrite_percent}",
                path.display()
            )));
        }
        let n = max_key * u64::from(num_cfs);
        let mut body = vec![0u8; (16 * n) as usize];
        file.read_exact_at(&mut body, HEADER)?;
        let mut words = body.chunks_exact(8).map(|c| {
            let mut b = [0u8; 8];
            b.copy_from_slice(c);
            AtomicU64::new(u64::from_le_bytes(b))
        });
        let slots = words.by_ref().take(n as usize).collect();
        let tags = words.collect();
        Ok(ExpectedState {
            file,
            slots,
            tags,
            num_levels,
            max_key,
            num_cfs,
            no_overwrite_percent,
        })
    }

    /// The share of keys never overwritten (percent), fixed at creation.
    pub fn no_overwrite_percent(&self) -> u32 {
        self.no_overwrite_percent
    }

    /// True if `key` (in every family) is a no-overwrite key: put only while
    /// absent, removed only with `single_delete`, never merged.
    pub fn no_overwrite(&self, key: u64) -> bool {
        let h = key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32;
        h % 100 < u64::from(self.no_overwrite_percent)
    }

    /// Number of keys per family.
    pub fn max_key(&self) -> u64 {
        self.max_key
    }

    /// Number of column families.
    pub fn num_cfs(&self) -> u32 {
        self.num_cfs
    }

    /// The index of `key` of family `cf` (`cf < num_cfs`, `key < max_key`).
    pub fn index(&self, cf: u32, key: u64) -> u64 {
        u64::from(cf) * self.max_key + key
    }

    /// Number of indexes (families × keys).
    pub fn len(&self) -> u64 {
        self.slots.len() as u64
    }

    /// The batch tag last recorded for index `i` (0: none).
    pub fn tag(&self, i: u64) -> u64 {
        self.tags[i as usize].load(Ordering::Acquire)
    }

    /// The DB's number of levels, fixed at creation.
    pub fn num_levels(&self) -> u32 {
        self.num_levels
    }

    /// The slot of index `key` (see [`ExpectedState::index`]).
    pub fn get(&self, key: u64) -> Slot {
        Slot::decode(self.slots[key as usize].load(Ordering::Acquire))
    }

    fn store(&self, key: u64, slot: Slot) -> io::Result<()> {
        let raw = slot.encode();
        self.slots[key as usize].store(raw, Ordering::Release);
        self.file.write_all_at(&raw.to_le_bytes(), HEADER + 8 * key)
    }

    /// Marks a write of `new` to index `key` as started, by the batch with
    /// `tag` (0: a single-key write).
    pub fn begin(&self, key: u64, new: ValueState, tag: u64) -> io::Result<()> {
        self.tags[key as usize].store(tag, Ordering::Release);
        self.file
            .write_all_at(&tag.to_le_bytes(), HEADER + 8 * (self.len() + key))?;
        let committed = self.get(key).committed;
        self.store(
            key,
            Slot {
                committed,
                pending: Some(new),
            },
        )
    }

    /// Records `state` as the key's acknowledged state, clearing pending.
    pub fn commit(&self, key: u64, state: ValueState) -> io::Result<()> {
        self.store(
            key,
            Slot {
                committed: state,
                pending: None,
            },
        )
    }

    /// Makes the file durable (for a clean exit).
    pub fn sync(&self) -> io::Result<()> {
        self.file.sync_data()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_survive_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("e");
        let e = ExpectedState::create(&p, 10, 2, 5, 30).unwrap();
        e.commit(3, 77).unwrap();
        e.begin(4, 0, 0).unwrap();
        e.begin(5, 9, 0).unwrap();
        e.begin(e.index(1, 5), 11, 42).unwrap();
        drop(e);
        let e = ExpectedState::open(&p).unwrap();
        assert_eq!((e.max_key(), e.num_cfs(), e.num_levels()), (10, 2, 5));
        assert_eq!(e.no_overwrite_percent(), 30);
        let n = (0..1000).filter(|&k| e.no_overwrite(k)).count();
        assert!((200..400).contains(&n), "{n} no-overwrite keys of 1000");
        assert_eq!(e.index(1, 5), 15);
        assert_eq!((e.tag(15), e.tag(5)), (42, 0));
        assert_eq!(e.get(15).pending, Some(11));
        assert_eq!(
            e.get(3),
            Slot {
                committed: 77,
                pending: None
            }
        );
        assert_eq!(
            e.get(4),
            Slot {
                committed: 0,
                pending: Some(0)
            }
        );
        assert!(e.get(5).allows(0) && e.get(5).allows(9) && !e.get(5).allows(8));
        assert!(ExpectedState::open(&dir.path().join("missing")).is_err());
        assert!(ExpectedState::create(&p, 10, 1, 5, 101).is_err());
    }

    /// A version-2 file (column families as a u64) opens with no
    /// no-overwrite keys.
    #[test]
    fn version_2_files_open() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("e");
        let e = ExpectedState::create(&p, 10, 3, 4, 0).unwrap();
        e.commit(e.index(2, 9), 5).unwrap();
        drop(e);
        let f = OpenOptions::new().write(true).open(&p).unwrap();
        f.write_all_at(&2u32.to_le_bytes(), 8).unwrap();
        f.write_all_at(&3u64.to_le_bytes(), 24).unwrap();
        let e = ExpectedState::open(&p).unwrap();
        assert_eq!((e.num_cfs(), e.no_overwrite_percent()), (3, 0));
        assert_eq!(e.get(29).committed, 5);
        assert!(!(0..10).any(|k| e.no_overwrite(k)));
    }
}
