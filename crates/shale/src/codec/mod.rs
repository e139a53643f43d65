//! Byte encodings shared by every on-disk format: little-endian fixed-width
//! integers, LEB128 varints, length-prefixed slices and masked CRC32C.
//!
//! Decoders never panic: they return `None` on truncated or overlong input and
//! the caller turns that into `Error::Corruption` with its file and offset.

mod crc;
mod varint;

pub(crate) use crc::{crc32c, crc32c_extend, mask_crc, unmask_crc};
pub(crate) use varint::{
    decode_fixed32, decode_fixed64, get_length_prefixed, get_varint32, get_varint64, put_fixed32,
    put_fixed64, put_length_prefixed, put_varint32, put_varint64, varint_len,
};
