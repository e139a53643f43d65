//! Per-block compression: the frozen type bytes of the block trailer and the
//! stored layout of compressed blocks.
//!
//! A compressed block is stored as `varint32 uncompressed_len ++ payload`,
//! where the payload is an LZ4 *block* (lz4_flex block format, no frame) or
//! a zstd frame (level 3). A block is stored compressed only when that saves
//! at least 12.5% and when its ratio is within what the reader accepts
//! (see [`max_uncompressed_len`]), so every block the builder writes can be
//! read back.
//!
//! Decompression is bounded: the declared size is checked against
//! [`max_uncompressed_len`] before anything is allocated, and the output
//! must have exactly the declared size; anything else is `Corruption`.
//!
//! Thread-safety: [`Compressor`] is owned by one builder; decompression uses
//! a per-thread zstd context.

use std::cell::RefCell;
use std::io::Cursor;

use crate::base::declare::{bad_value, TextValue};
use crate::codec::{get_varint32, put_varint32, varint_len};
use crate::error::{Error, Result};

/// Per-block compression of SST files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Compression {
    /// Blocks stored as is.
    None,
    /// LZ4 block format (fast).
    Lz4,
    /// Zstandard (better ratio, more CPU).
    Zstd,
}

impl Compression {
    /// Parses RocksDB's names (`none`, `lz4`, `zstd`); other codecs are
    /// rejected with `InvalidArgument` rather than silently replaced.
    pub fn parse(s: &str) -> Result<Compression> {
        match s.to_ascii_lowercase().as_str() {
            "none" | "no" | "nocompression" => Ok(Compression::None),
            "lz4" | "lz4compression" => Ok(Compression::Lz4),
            "zstd" | "zstdcompression" => Ok(Compression::Zstd),
            other => Err(Error::InvalidArgument(format!(
                "unknown or unsupported compression '{other}' (supported: none, lz4, zstd)"
            ))),
        }
    }

    /// The on-disk code (the SST block trailer's compression byte).
    pub(crate) fn code(self) -> u8 {
        match self {
            Compression::None => 0,
            Compression::Lz4 => 1,
            Compression::Zstd => 2,
        }
    }

    /// The name used in properties and logs.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "NoCompression",
            Compression::Lz4 => "LZ4",
            Compression::Zstd => "ZSTD",
        }
    }
}

/// Trailer type byte: stored as is. FROZEN.
pub(crate) const TYPE_NONE: u8 = 0;
/// Trailer type byte: LZ4 block with varint32 size prefix. FROZEN.
pub(crate) const TYPE_LZ4: u8 = 1;
/// Trailer type byte: zstd frame with varint32 size prefix. FROZEN.
pub(crate) const TYPE_ZSTD: u8 = 2;

/// zstd level used for blocks.
const ZSTD_LEVEL: i32 = 3;

/// Declared sizes up to this are always accepted.
const ALWAYS_OK_LEN: usize = 64 << 20;
/// Above `ALWAYS_OK_LEN`, the largest accepted expansion ratio.
const MAX_RATIO: usize = 256;

/// The largest uncompressed size a reader accepts for a payload of
/// `stored_len` bytes: 64 MiB, or 256 × the stored size if that is more.
pub(crate) fn max_uncompressed_len(stored_len: usize) -> usize {
    ALWAYS_OK_LEN
        .max(stored_len.saturating_mul(MAX_RATIO))
        .min(u32::MAX as usize)
}

/// Reusable compression state of one table builder.
pub(crate) struct Compressor {
    kind: Compression,
    zstd: Option<zstd::bulk::Compressor<'static>>,
}

/// One compression as the persisted options text writes it (RocksDB's
/// name, `LZ4`): a blob file's; per-level lists are `options`'.
impl TextValue for Compression {
    fn text(&self) -> String {
        self.name().to_string()
    }
    fn set(&mut self, name: &str, v: &str) -> Result<()> {
        *self = Compression::parse(v).map_err(|_| bad_value(name, v))?;
        Ok(())
    }
}

impl Compressor {
    pub(crate) fn new(kind: Compression) -> Compressor {
        Compressor { kind, zstd: None }
    }

    /// Compresses `raw` into `out` (cleared first) and returns the type byte
    /// to store, or returns `TYPE_NONE` (and leaves `out` unspecified) when
    /// the block should be stored as is.
    pub(crate) fn compress(&mut self, raw: &[u8], out: &mut Vec<u8>) -> u8 {
        out.clear();
        let Ok(raw_len) = u32::try_from(raw.len()) else {
            return TYPE_NONE;
        };
        let prefix = varint_len(u64::from(raw_len));
        let ctype = match self.kind {
            Compression::None => return TYPE_NONE,
            Compression::Lz4 => {
                put_varint32(out, raw_len);
                out.resize(
                    prefix + lz4_flex::block::get_maximum_output_size(raw.len()),
                    0,
                );
                match lz4_flex::block::compress_into(raw, &mut out[prefix..]) {
                    Ok(n) => out.truncate(prefix + n),
                    Err(_) => return TYPE_NONE,
                }
                TYPE_LZ4
            }
            Compression::Zstd => {
                if self.zstd.is_none() {
                    self.zstd = zstd::bulk::Compressor::new(ZSTD_LEVEL).ok();
                }
                let Some(z) = self.zstd.as_mut() else {
                    return TYPE_NONE;
                };
                put_varint32(out, raw_len);
                out.reserve(zstd::zstd_safe::compress_bound(raw.len()));
                let mut cur = Cursor::new(&mut *out);
                cur.set_position(prefix as u64);
                if z.compress_to_buffer(raw, &mut cur).is_err() {
                    return TYPE_NONE;
                }
                TYPE_ZSTD
            }
        };
        // Keep compression only when it saves at least 1/8 and the reader
        // will accept the ratio.
        let worth_it = out.len() < raw.len() - raw.len() / 8;
        let readable = raw.len() <= max_uncompressed_len(out.len().saturating_sub(prefix));
        if worth_it && readable {
            ctype
        } else {
            TYPE_NONE
        }
    }
}

thread_local! {
    static ZSTD_DCTX: RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { RefCell::new(None) };
}

/// Decompresses a stored block of type `ctype` (not `TYPE_NONE`). Errors
/// name `file` and the block `offset`.
pub(crate) fn decompress(ctype: u8, stored: &[u8], file: &str, offset: u64) -> Result<Vec<u8>> {
    let corrupt = |what: String| Error::corruption(file, offset, what);
    let mut payload = stored;
    let raw_len = get_varint32(&mut payload)
        .ok_or_else(|| corrupt("bad uncompressed-size prefix of compressed block".into()))?
        as usize;
    if raw_len > max_uncompressed_len(payload.len()) {
        return Err(corrupt(format!(
            "compressed block declares {raw_len} bytes from {} stored bytes",
            payload.len()
        )));
    }
    match ctype {
        TYPE_LZ4 => {
            let mut out = vec![0u8; raw_len];
            match lz4_flex::block::decompress_into(payload, &mut out) {
                Ok(n) if n == raw_len => Ok(out),
                Ok(n) => Err(corrupt(format!(
                    "lz4 block gave {n} bytes, expected {raw_len}"
                ))),
                Err(e) => Err(corrupt(format!("lz4 block does not decode: {e}"))),
            }
        }
        TYPE_ZSTD => {
            let mut out = Vec::with_capacity(raw_len);
            let res = ZSTD_DCTX.with(|cell| {
                let mut slot = cell.borrow_mut();
                if slot.is_none() {
                    *slot = zstd::bulk::Decompressor::new().ok();
                }
                match slot.as_mut() {
                    Some(d) => d.decompress_to_buffer(payload, &mut out),
                    None => Err(std::io::Error::other("cannot create a zstd context")),
                }
            });
            match res {
                Ok(n) if n == raw_len && out.len() == raw_len => Ok(out),
                Ok(n) => Err(corrupt(format!(
                    "zstd block gave {n} bytes, expected {raw_len}"
                ))),
                Err(e) => Err(corrupt(format!("zstd block does not decode: {e}"))),
            }
        }
        other => Err(corrupt(format!("unknown block compression type {other}"))),
    }
}

#[cfg(test)]
mod tests;
