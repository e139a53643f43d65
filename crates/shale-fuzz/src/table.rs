//! The `table` check: a whole SST through `Table::open`, the two-level
//! iterator in both directions, point lookups and offset estimates; raw,
//! then with every checksum reachable from the footer recomputed
//! ([`repair_sst`]) so that mutations reach the metaindex, properties,
//! filter, index, data and compressed blocks behind the checksums.
//!
//! Invariants checked: no panic or hang in open, iteration, `get`, `seek`,
//! `seek_for_prev`, `approximate_offset_of`, `may_contain`; every error is
//! `Corruption` naming [`SST_FILE`]. A walk visits at most
//! [`MAX_TABLE_STEPS`] entries (an index may point many times at one
//! block; that is legal-looking, not a hang).
//!
//! Thread-safety: plain functions.

use std::sync::Arc;

use shale::fs::RandomAccessFile;
use shale::testing::{decode_block_handle, Block, Sst, SST_FORMAT_VERSION, SST_MAGIC};
use shale::{Error, Result};

use crate::codec::{decode_fixed32, get_varint32, masked_crc32c};
use crate::{is_corruption_in, SST_FILE};

/// Footer layout (docs/format/sst.md): 60 bytes: two block handles padded
/// to 40 bytes, checksum base at 40, format version at 44, crc at 48, magic
/// at 52.
const FOOTER_LEN: usize = 60;
/// Block trailer: compression type (1) + masked crc (4).
const TRAILER: usize = 5;
/// Internal key trailer: fixed64(seq << 8 | kind).
const IKEY_TRAILER_LEN: usize = 8;
/// Most entries a table walk visits before giving up.
const MAX_TABLE_STEPS: usize = 20_000;

/// Opens `data` as an SST, iterates it both ways and looks up the keys
/// found; then does the same with the checksums repaired. Returns the number
/// of entries of the repaired table.
pub fn table(data: &[u8]) -> Result<usize> {
    let _ = check_table(data.to_vec());
    let mut fixed = data.to_vec();
    repair_sst(&mut fixed);
    check_table(fixed)
}

/// An in-memory `RandomAccessFile`.
struct MemRandom(Vec<u8>);

impl RandomAccessFile for MemRandom {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let src = usize::try_from(offset)
            .ok()
            .and_then(|o| self.0.get(o..)?.get(..buf.len()));
        match src {
            Some(s) => {
                buf.copy_from_slice(s);
                Ok(())
            }
            None => {
                let kind = std::io::ErrorKind::UnexpectedEof;
                Err(Error::Io {
                    context: "read".into(),
                    kind,
                    message: std::io::Error::from(kind).to_string(),
                })
            }
        }
    }
    fn len(&self) -> u64 {
        self.0.len() as u64
    }
}

fn check_table(data: Vec<u8>) -> Result<usize> {
    let file: Arc<dyn RandomAccessFile> = Arc::new(MemRandom(data));
    let t = Sst::open(file, SST_FILE, 1)?;
    let mut it = t.iter();
    it.seek_to_first();
    let mut keys = Vec::new();
    while it.valid() && keys.len() < MAX_TABLE_STEPS {
        keys.push(it.key().to_vec());
        let _ = it.value();
        it.next();
    }
    let fwd_status = it.status();
    it.seek_to_last();
    let mut back = 0usize;
    while it.valid() && back < MAX_TABLE_STEPS {
        back += 1;
        it.prev();
    }
    for k in keys.iter().step_by(1 + keys.len() / 256) {
        if k.len() >= IKEY_TRAILER_LEN {
            // Must not panic; the entry found is copied out (key and value).
            let _ = t.get(k);
        }
        it.seek(k);
        it.seek_for_prev(k);
        let _ = t.approximate_offset_of(k);
    }
    let fixed = shale::PrefixExtractor::Fixed(2);
    let _ = (
        t.memory_usage(),
        t.may_contain(b"k", None),
        t.may_contain(b"k1", Some(fixed)),
        t.may_contain_prefix(b"k1", fixed),
    );
    for s in [&it.status(), &fwd_status] {
        if let Err(e) = s {
            assert!(is_corruption_in(e, SST_FILE), "table error {e:?}");
        }
    }
    fwd_status.map(|()| keys.len())
}

/// Decompresses a stored block the way docs/format/sst.md describes, with a
/// small cap (only used to find handles while repairing).
fn decode_stored(ctype: u8, stored: &[u8]) -> Option<Vec<u8>> {
    if ctype == 0 {
        return Some(stored.to_vec());
    }
    let mut p = stored;
    let n = get_varint32(&mut p)? as usize;
    if n > (1 << 20) {
        return None;
    }
    match ctype {
        1 => lz4_flex::block::decompress(p, n).ok(),
        2 => zstd::bulk::decompress(p, n).ok(),
        _ => None,
    }
}

/// Recomputes the footer crc (after forcing the magic and version) and the
/// trailer checksum of every block reachable from the footer, metaindex and
/// index, so that mutations reach the decoders behind them. Best effort;
/// never panics. On a valid SST it changes nothing.
pub fn repair_sst(d: &mut [u8]) {
    let Some(fo) = d.len().checked_sub(FOOTER_LEN) else {
        return;
    };
    let Some(footer) = d.get_mut(fo..) else {
        return;
    };
    footer[52..60].copy_from_slice(&SST_MAGIC.to_le_bytes());
    // Every version from 1 to the newest is readable (engine tables are
    // written at 2, external ones at 3): keep one in range.
    let version = decode_fixed32(&footer[44..48]).unwrap_or_default();
    if !(1..=SST_FORMAT_VERSION).contains(&version) {
        footer[44..48].copy_from_slice(&SST_FORMAT_VERSION.to_le_bytes());
    }
    let crc = masked_crc32c(&[&footer[..48]]);
    footer[48..52].copy_from_slice(&crc.to_le_bytes());
    let base = decode_fixed32(&footer[40..44]).unwrap_or_default();
    let mut handles = &footer[..40];
    let (Some(meta), Some(index)) = (
        decode_block_handle(&mut handles),
        decode_block_handle(&mut handles),
    ) else {
        return;
    };
    for top in [meta, index] {
        let Some(raw) = fix_block(d, top, base, fo) else {
            continue;
        };
        let Ok(b) = Block::new(raw, SST_FILE, top.0) else {
            continue;
        };
        let mut it = b.iter();
        it.seek_to_first();
        let mut n = 0;
        while it.valid() && n < 4096 {
            // Index and metaindex values are exactly one handle.
            let mut v = it.value();
            if let Some(h) = decode_block_handle(&mut v).filter(|_| v.is_empty()) {
                fix_block(d, h, base, fo);
            }
            n += 1;
            it.next();
        }
    }
}

/// Rewrites the trailer checksum of the block at `(offset, size)`: masked
/// crc32c(stored bytes ++ type ++ fixed64 offset ++ fixed32 checksum base).
/// Returns its (decompressed) contents.
fn fix_block(d: &mut [u8], (offset, size): (u64, u64), base: u32, limit: usize) -> Option<Vec<u8>> {
    let start = usize::try_from(offset).ok()?;
    let end = start.checked_add(usize::try_from(size).ok()?)?;
    if end.checked_add(TRAILER)? > limit {
        return None;
    }
    let stored = d.get(start..end)?;
    let ctype = *d.get(end)?;
    let crc = masked_crc32c(&[stored, &[ctype], &offset.to_le_bytes(), &base.to_le_bytes()]);
    let out = decode_stored(ctype, stored);
    d.get_mut(end + 1..end + TRAILER)?
        .copy_from_slice(&crc.to_le_bytes());
    out
}
