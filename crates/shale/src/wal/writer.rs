//! [`LogWriter`]: appends logical records to a log file (WAL or MANIFEST),
//! fragmenting them across 32 KiB blocks (see `docs/format/wal.md`).
//!
//! Thread safety: `&mut self`; the DB serialises writers (the write-group
//! leader owns the WAL writer). Durability: `add_record` only appends (the
//! file may buffer in process); `flush` hands the bytes to the OS and `sync`
//! makes them durable. Invariant: `block_offset` is the position inside the
//! current block of the next byte appended. After any IO error the writer
//! refuses further work (`Error::Poisoned`): a partially appended record must
//! not be followed by more records.

use super::format::{
    CrcSeeds, PredecessorWal, RecordType, BLOCK_SIZE, HEADER_LEN, PADDING_TYPE,
    PREDECESSOR_WAL_TYPE, RECYCLED_WAL_TYPE,
};
use crate::error::{Error, Result};
use crate::fs::WritableFile;

/// Zeros for a block tail too short for a header, or for the payload of a
/// padding record (shorter than a header plus the longest metadata
/// payload written after a log's first records).
const ZEROES: [u8; 64] = [0; 64];

/// Writes records to one log file.
pub(crate) struct LogWriter {
    file: Box<dyn WritableFile>,
    log_number: u64,
    seeds: CrcSeeds,
    /// Offset inside the current block of the next byte written.
    block_offset: usize,
    /// Set after an IO error; every later call fails.
    failed: bool,
    /// Bytes of metadata records at the start of the file (a log holding
    /// no more than this has no logical records).
    preamble: u64,
}

impl LogWriter {
    /// Writes log `log_number` into `file`, which must be empty: records
    /// start at a block boundary.
    pub(crate) fn new(file: Box<dyn WritableFile>, log_number: u64) -> Self {
        debug_assert!(file.is_empty(), "a log starts at a block boundary");
        LogWriter {
            block_offset: (file.len() % BLOCK_SIZE as u64) as usize,
            file,
            log_number,
            seeds: CrcSeeds::new(log_number),
            failed: false,
            preamble: 0,
        }
    }

    /// Writes the predecessor-WAL record: must be the first record of the
    /// log (recovery reads it from the first block only).
    pub(crate) fn add_predecessor(&mut self, p: &PredecessorWal) -> Result<()> {
        self.check()?;
        debug_assert_eq!(self.file_size(), 0, "the predecessor record comes first");
        let r = self.emit(PREDECESSOR_WAL_TYPE, &p.encode());
        self.preamble = self.file_size();
        self.latch(r)
    }

    /// Writes the recycled-log record (the file held log `old_number`
    /// before): right after the predecessor-WAL record, before any logical
    /// record, in the first block.
    pub(crate) fn add_recycled(&mut self, old_number: u64) -> Result<()> {
        self.check()?;
        debug_assert_eq!(self.file_size(), self.preamble, "metadata comes first");
        let r = self.emit(RECYCLED_WAL_TYPE, &old_number.to_le_bytes());
        self.preamble = self.file_size();
        self.latch(r)
    }

    /// Appends a metadata record of type `typ` (bit 7 set) between logical
    /// records: one physical record, so when it does not fit in what is
    /// left of the block, that rest is filled first (zeros when shorter
    /// than a header, else a padding record).
    pub(crate) fn add_metadata(&mut self, typ: u8, payload: &[u8]) -> Result<()> {
        self.check()?;
        debug_assert!(typ & super::format::METADATA_BIT != 0);
        debug_assert!(payload.len() + HEADER_LEN <= ZEROES.len());
        let r = self.add_metadata_inner(typ, payload);
        self.latch(r)
    }

    fn add_metadata_inner(&mut self, typ: u8, payload: &[u8]) -> Result<()> {
        let leftover = BLOCK_SIZE - self.block_offset;
        if leftover < HEADER_LEN + payload.len() {
            if leftover < HEADER_LEN {
                self.file.append(&ZEROES[..leftover])?;
            } else {
                self.emit(PADDING_TYPE, &ZEROES[..leftover - HEADER_LEN])?;
            }
            self.block_offset = 0;
        }
        self.emit(typ, payload)
    }

    /// True when no logical record was added (metadata records aside).
    pub(crate) fn has_no_records(&self) -> bool {
        self.file_size() == self.preamble
    }

    /// The log number the checksums are bound to.
    pub(crate) fn log_number(&self) -> u64 {
        self.log_number
    }

    /// Appends one logical record (of any length, including 0). Does not
    /// flush: call [`LogWriter::flush`] or [`LogWriter::sync`].
    pub(crate) fn add_record(&mut self, payload: &[u8]) -> Result<()> {
        self.check()?;
        let r = self.add_record_inner(payload);
        self.latch(r)
    }

    fn add_record_inner(&mut self, payload: &[u8]) -> Result<()> {
        let mut left = payload;
        let mut begin = true;
        loop {
            let leftover = BLOCK_SIZE - self.block_offset;
            if leftover < HEADER_LEN {
                // Too small for a header: zero-fill and start a new block.
                self.file.append(&ZEROES[..leftover])?;
                self.block_offset = 0;
            }
            let avail = BLOCK_SIZE - self.block_offset - HEADER_LEN;
            let n = left.len().min(avail);
            let (frag, rest) = left.split_at(n);
            let end = rest.is_empty();
            let typ = match (begin, end) {
                (true, true) => RecordType::Full,
                (true, false) => RecordType::First,
                (false, false) => RecordType::Middle,
                (false, true) => RecordType::Last,
            };
            self.emit(typ as u8, frag)?;
            left = rest;
            begin = false;
            if end {
                return Ok(());
            }
        }
    }

    fn emit(&mut self, typ: u8, frag: &[u8]) -> Result<()> {
        debug_assert!(self.block_offset + HEADER_LEN + frag.len() <= BLOCK_SIZE);
        let len = frag.len() as u16; // <= MAX_FRAGMENT_LEN < 65536
        let crc = self.seeds.record_crc(typ, frag);
        let mut header = [0u8; HEADER_LEN];
        header[..4].copy_from_slice(&crc.to_le_bytes());
        header[4..6].copy_from_slice(&len.to_le_bytes());
        header[6] = typ;
        self.file.append_parts(&[&header, frag])?;
        self.block_offset += HEADER_LEN + frag.len();
        Ok(())
    }

    /// Hands appended bytes to the OS (they survive a process crash).
    pub(crate) fn flush(&mut self) -> Result<()> {
        self.check()?;
        let r = self.file.flush();
        self.latch(r)
    }

    /// The log is complete: hands its bytes to the OS and releases what
    /// appending held (see `WritableFile::finish_appends`); `sync` still
    /// works.
    pub(crate) fn finish(&mut self) -> Result<()> {
        self.check()?;
        let r = self.file.finish_appends();
        self.latch(r)
    }

    /// Makes appended bytes durable (they survive power loss).
    pub(crate) fn sync(&mut self) -> Result<()> {
        self.check()?;
        let r = self.file.sync();
        self.latch(r)
    }

    /// True when `add_record` alone hands records to the OS (a
    /// memory-mapped file): `flush` is free and records need no grouping.
    pub(crate) fn appends_reach_os(&self) -> bool {
        self.file.appends_reach_os()
    }

    /// Bytes written to the log so far (flushed or not).
    pub(crate) fn file_size(&self) -> u64 {
        self.file.len()
    }

    fn check(&self) -> Result<()> {
        if self.failed {
            return Err(Error::Poisoned(format!(
                "log {} had an earlier write error",
                self.log_number
            )));
        }
        Ok(())
    }

    fn latch(&mut self, r: Result<()>) -> Result<()> {
        if r.is_err() {
            self.failed = true;
        }
        r
    }
}

#[cfg(test)]
mod tests;
