//! [`LogReader`]: reads the logical records of a log file (WAL or MANIFEST)
//! and classifies every irregularity as a clean end, a torn tail or
//! corruption (the rules are in `docs/format/wal.md`, "What the reader
//! reports").
//!
//! Thread safety: `&mut self`, one reader per file. The file is read in
//! [`BLOCK_SIZE`] blocks into one buffer allocated at construction; records are
//! reassembled into the caller's `Vec`, so reading allocates only when that
//! vector grows.
//!
//! A recycled log (one holding the recycled-log record) ends at the first
//! physical record that fails its checks: the bytes after are the old log's
//! (their checksums are seeded with the old number, and a header of theirs
//! may claim more bytes than the file has), so they read as `Eof`, or
//! `TornTail` inside a fragmented record (docs/format/wal.md, "Recycled
//! logs"). After that every call returns `Eof`.
//!
//! Invariants: `pos <= block_len <= BLOCK_SIZE`; `block_start` is the file
//! offset of `block[0]`; `eof` implies `block_len < BLOCK_SIZE` and that the
//! file has no bytes after the buffer. Never panics on file contents; `Err`
//! is returned only for IO errors, after which the reader must be dropped.

use super::format::{
    CrcSeeds, PredecessorWal, RecordType, SeqTime, BLOCK_SIZE, FAMILY_TYPE, HEADER_LEN,
    INGESTED_TYPE, METADATA_BIT, PREDECESSOR_WAL_TYPE, RECYCLED_WAL_TYPE, TIME_TYPE, UNLOGGED_TYPE,
};
use crate::error::Result;
use crate::fs::SequentialFile;

/// The result of [`LogReader::read_record`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ReadOutcome {
    /// A complete record; the payload is in `out`. `offset` is the file
    /// offset of the header of its first fragment.
    Record {
        /// File offset of the record's first fragment.
        offset: u64,
    },
    /// Clean end: no bytes left, or only zero padding / zero-filled space.
    Eof,
    /// The file ends inside a record (incomplete header or payload, or a
    /// FIRST/MIDDLE sequence without its LAST): the writer died mid-record.
    /// `offset` is where that record starts; everything after it is dropped.
    /// The next call returns `Eof`.
    TornTail {
        /// File offset of the incomplete record.
        offset: u64,
    },
    /// Damage inside the file: `dropped_bytes` bytes starting at `offset` were
    /// skipped. The next call resumes after them (at the next block after a
    /// checksum or length failure).
    Corrupt {
        /// File offset of the first skipped byte.
        offset: u64,
        /// What check failed.
        what: String,
        /// Number of bytes skipped.
        dropped_bytes: u64,
    },
}

/// One physical record or event, as seen by [`LogReader::read_physical`].
enum Physical {
    /// A fragment that passed its checksum; positions are in `block`.
    Fragment {
        typ: RecordType,
        header_pos: usize,
        start: usize,
        end: usize,
    },
    /// A metadata record (type byte with [`METADATA_BIT`]) that passed its
    /// checksum; positions are in `block`.
    Metadata {
        typ: u8,
        header_pos: usize,
        start: usize,
        end: usize,
    },
    /// A zero header followed by zeros to the end of the block (preallocated
    /// or zero-filled space), starting at `offset`.
    Zeros { offset: u64 },
    /// End of file (possibly after a zero tail shorter than a header).
    Eof,
    /// Incomplete header or payload at end of file, starting at `offset`.
    Torn { offset: u64 },
    /// Damage starting at `offset`; reading resumes at file offset `end`.
    Bad { offset: u64, end: u64, what: String },
}

/// Reads records from one log file.
pub(crate) struct LogReader {
    file: Box<dyn SequentialFile>,
    file_name: String,
    seeds: CrcSeeds,
    /// The current block (`BLOCK_SIZE` bytes, `block_len` of them valid).
    block: Box<[u8]>,
    block_len: usize,
    /// Position in `block` of the next physical record.
    pos: usize,
    /// File offset of `block[0]`.
    block_start: u64,
    /// The file has no bytes after the current block.
    eof: bool,
    /// File offset just past the last logical or metadata record read
    /// whole.
    valid_end: u64,
    /// The predecessor-WAL record, once read.
    predecessor: Option<PredecessorWal>,
    /// The old log number of a recycled log, once its record was read.
    recycled_from: Option<u64>,
    /// A recycled log reached its end (old bytes): nothing more is read.
    ended: bool,
    /// Time and unlogged-writes records read since the last
    /// [`LogReader::take_marks`], when collected (`collect_marks`).
    marks: Option<Vec<Mark>>,
}

/// A time or unlogged-writes record (WAL archiving), with the file offset
/// just past it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mark {
    /// Every write before it was made by `micros` (Unix microseconds); the
    /// last of them had sequence number `seq`.
    Time { seq: u64, micros: u64, end: u64 },
    /// Sequence numbers `first..=last` were used by writes not in any WAL.
    Unlogged { first: u64, last: u64, end: u64 },
    /// An ingestion took sequence numbers `first..=last` (its files are in
    /// the MANIFEST).
    Ingested { first: u64, last: u64, end: u64 },
    /// A column family was created or dropped after every write up to
    /// `seq`.
    Family { seq: u64, end: u64 },
}

impl LogReader {
    /// Reads log `log_number` from `file`; `file_name` names it in reports.
    pub(crate) fn new(file: Box<dyn SequentialFile>, file_name: String, log_number: u64) -> Self {
        LogReader {
            file,
            file_name,
            seeds: CrcSeeds::new(log_number),
            block: vec![0u8; BLOCK_SIZE].into_boxed_slice(),
            block_len: 0,
            pos: 0,
            block_start: 0,
            eof: false,
            valid_end: 0,
            predecessor: None,
            recycled_from: None,
            ended: false,
            marks: None,
        }
    }

    /// Keeps the time and unlogged-writes records read from now on, for
    /// [`LogReader::take_marks`] (other readers skip them).
    pub(crate) fn collect_marks(&mut self) {
        self.marks = Some(Vec::new());
    }

    /// The marks read since the last call, in log order: all of them come
    /// before the record the last `read_record` returned.
    pub(crate) fn take_marks(&mut self) -> Vec<Mark> {
        self.marks.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// File offset just past the last record read whole (logical records
    /// and metadata records alike): what a writer that stopped after it
    /// had written.
    pub(crate) fn valid_end(&self) -> u64 {
        self.valid_end
    }

    /// The predecessor-WAL record, if one was read (it is the first record
    /// of a WAL created by a memtable switch).
    pub(crate) fn predecessor(&self) -> Option<PredecessorWal> {
        self.predecessor
    }

    /// The number of the log whose file this log reused, if it says so.
    #[cfg(test)]
    pub(crate) fn recycled_from(&self) -> Option<u64> {
        self.recycled_from
    }

    /// The file name given at construction.
    pub(crate) fn file_name(&self) -> &str {
        &self.file_name
    }

    /// File offset up to which the reader has consumed the file. After
    /// `TornTail` or `Eof` this is the file size.
    pub(crate) fn consumed(&self) -> u64 {
        self.block_start + self.pos as u64
    }

    /// Reads the next logical record into `out` (cleared first). See
    /// [`ReadOutcome`]; `Err` means an IO error.
    pub(crate) fn read_record(&mut self, out: &mut Vec<u8>) -> Result<ReadOutcome> {
        out.clear();
        // Start of a fragmented record being reassembled into `out`.
        let mut frag_start: Option<u64> = None;
        // Start of MIDDLE/LAST fragments seen without a FIRST.
        let mut orphan_start: Option<u64> = None;
        // Start of zero-filled blocks skipped so far.
        let mut zero_start: Option<u64> = None;
        loop {
            let phys = self.read_physical()?;
            // Earliest byte consumed by this call and not returned: at most
            // one of frag/orphan is set, and either precedes zero_start.
            let lost = frag_start.or(orphan_start).or(zero_start);
            match phys {
                Physical::Fragment {
                    typ,
                    header_pos,
                    start,
                    end,
                } => {
                    let off = self.offset_of(header_pos);
                    let starts_record = matches!(typ, RecordType::Full | RecordType::First);
                    if let Some(lost) = lost {
                        let what = if zero_start.is_some() {
                            Some("zero-filled gap inside the log")
                        } else if starts_record && frag_start.is_some() {
                            Some("record without its LAST fragment")
                        } else if starts_record {
                            Some("fragments without a FIRST fragment")
                        } else {
                            None
                        };
                        if let Some(what) = what {
                            // Report what was lost; this fragment is read
                            // again by the next call.
                            self.pos = header_pos;
                            out.clear();
                            return Ok(corrupt(lost, off, what));
                        }
                    }
                    let payload = self.block.get(start..end).unwrap_or_default();
                    match typ {
                        RecordType::Full => {
                            out.extend_from_slice(payload);
                            self.valid_end = self.offset_of(end);
                            return Ok(ReadOutcome::Record { offset: off });
                        }
                        RecordType::First => {
                            out.extend_from_slice(payload);
                            frag_start = Some(off);
                        }
                        RecordType::Middle | RecordType::Last => match frag_start {
                            Some(first) => {
                                out.extend_from_slice(payload);
                                if typ == RecordType::Last {
                                    self.valid_end = self.offset_of(end);
                                    return Ok(ReadOutcome::Record { offset: first });
                                }
                            }
                            None => {
                                let o = *orphan_start.get_or_insert(off);
                                if typ == RecordType::Last {
                                    let what = "fragments without a FIRST fragment";
                                    return Ok(corrupt(o, self.offset_of(end), what));
                                }
                            }
                        },
                    }
                }
                Physical::Metadata {
                    typ,
                    header_pos,
                    start,
                    end,
                } => {
                    let off = self.offset_of(header_pos);
                    if let Some(lost) = lost {
                        // Metadata sits between logical records only.
                        let what = if zero_start.is_some() && frag_start.is_none() {
                            "zero-filled gap inside the log"
                        } else if frag_start.is_some() {
                            "record without its LAST fragment"
                        } else {
                            "fragments without a FIRST fragment"
                        };
                        self.pos = header_pos;
                        out.clear();
                        return Ok(corrupt(lost, off, what));
                    }
                    if typ == RECYCLED_WAL_TYPE {
                        let payload = self.block.get(start..end).unwrap_or_default();
                        match <[u8; 8]>::try_from(payload) {
                            Ok(b) => self.recycled_from = Some(u64::from_le_bytes(b)),
                            Err(_) => {
                                let what = "recycled-log record of the wrong length";
                                return Ok(corrupt(off, self.offset_of(end), what));
                            }
                        }
                    }
                    if typ == PREDECESSOR_WAL_TYPE {
                        let payload = self.block.get(start..end).unwrap_or_default();
                        match PredecessorWal::decode(payload) {
                            Some(p) => self.predecessor = Some(p),
                            None => {
                                let what = "predecessor-WAL record of the wrong length";
                                return Ok(corrupt(off, self.offset_of(end), what));
                            }
                        }
                    }
                    let end_off = self.offset_of(end);
                    if let Some(marks) = self.marks.as_mut() {
                        if matches!(typ, TIME_TYPE | UNLOGGED_TYPE | INGESTED_TYPE | FAMILY_TYPE) {
                            let payload = self.block.get(start..end).unwrap_or_default();
                            let end = end_off;
                            match (typ, SeqTime::decode(payload)) {
                                (TIME_TYPE, Some(p)) => marks.push(Mark::Time {
                                    seq: p.first,
                                    micros: p.second,
                                    end,
                                }),
                                (UNLOGGED_TYPE, Some(p)) => marks.push(Mark::Unlogged {
                                    first: p.first,
                                    last: p.second,
                                    end,
                                }),
                                (FAMILY_TYPE, Some(p)) => {
                                    marks.push(Mark::Family { seq: p.first, end })
                                }
                                (_, Some(p)) => marks.push(Mark::Ingested {
                                    first: p.first,
                                    last: p.second,
                                    end,
                                }),
                                (_, None) => {
                                    let what = "point-in-time record of the wrong length";
                                    return Ok(corrupt(off, end, what));
                                }
                            }
                        }
                    }
                    // Unknown metadata types are skipped.
                    self.valid_end = self.offset_of(end);
                }
                Physical::Zeros { offset } => {
                    zero_start.get_or_insert(offset);
                }
                Physical::Eof => {
                    out.clear();
                    if let Some(o) = orphan_start {
                        let what = "fragments without a FIRST fragment";
                        return Ok(corrupt(o, self.consumed(), what));
                    }
                    return Ok(match frag_start {
                        Some(f) => ReadOutcome::TornTail { offset: f },
                        None => ReadOutcome::Eof,
                    });
                }
                Physical::Torn { offset } => {
                    out.clear();
                    if self.recycled_from.is_some()
                        && orphan_start.is_none()
                        && frag_start.is_none()
                    {
                        // Old bytes cut off by the end of the file (the cut
                        // of a recycled log that a power loss undid): the
                        // end of this log, as a failed checksum is.
                        self.ended = true;
                        return Ok(ReadOutcome::Eof);
                    }
                    if let Some(o) = orphan_start {
                        let what = "fragments without a FIRST fragment";
                        return Ok(corrupt(o, self.consumed(), what));
                    }
                    if let (None, Some(z)) = (frag_start, zero_start) {
                        let what = "zero-filled gap inside the log";
                        return Ok(corrupt(z, self.consumed(), what));
                    }
                    return Ok(ReadOutcome::TornTail {
                        offset: frag_start.unwrap_or(offset),
                    });
                }
                Physical::Bad { offset, end, what } => {
                    out.clear();
                    if self.recycled_from.is_some() && orphan_start.is_none() {
                        // The old log's bytes: the end of this one.
                        self.ended = true;
                        return Ok(match frag_start {
                            Some(f) => ReadOutcome::TornTail { offset: f },
                            None => ReadOutcome::Eof,
                        });
                    }
                    return Ok(corrupt(lost.unwrap_or(offset), end, &what));
                }
            }
        }
    }

    #[inline]
    fn offset_of(&self, pos: usize) -> u64 {
        self.block_start + pos as u64
    }

    /// Reads the next block into the buffer, setting `eof` when the file
    /// has no more bytes after it.
    fn fill_block(&mut self) -> Result<()> {
        self.block_start += self.block_len as u64;
        self.block_len = 0;
        self.pos = 0;
        while self.block_len < BLOCK_SIZE {
            let buf = self.block.get_mut(self.block_len..).unwrap_or_default();
            let room = buf.len();
            let n = self.file.read(buf)?;
            debug_assert!(n <= room, "SequentialFile::read returned too much");
            if n == 0 {
                self.eof = true;
                break;
            }
            self.block_len += n.min(room);
        }
        Ok(())
    }

    /// Reads the next physical record, checking header, length and checksum.
    fn read_physical(&mut self) -> Result<Physical> {
        if self.ended {
            return Ok(Physical::Eof);
        }
        loop {
            if self.block_len - self.pos < HEADER_LEN {
                if !self.eof {
                    // A block tail shorter than a header is padding.
                    self.fill_block()?;
                    continue;
                }
                let off = self.offset_of(self.pos);
                let tail = self.block.get(self.pos..self.block_len).unwrap_or_default();
                let zero = tail.iter().all(|&b| b == 0);
                self.pos = self.block_len;
                return Ok(if zero {
                    Physical::Eof
                } else {
                    Physical::Torn { offset: off }
                });
            }
            let hp = self.pos;
            let mut h = [0u8; HEADER_LEN];
            h.copy_from_slice(
                self.block
                    .get(hp..hp + HEADER_LEN)
                    .unwrap_or(&[0; HEADER_LEN]),
            );
            let crc = u32::from_le_bytes([h[0], h[1], h[2], h[3]]);
            let len = usize::from(u16::from_le_bytes([h[4], h[5]]));
            let typ = h[6];
            let off = self.offset_of(hp);
            let block_end = self.offset_of(self.block_len);
            if h == [0; HEADER_LEN] {
                let rest = self.block.get(hp..self.block_len).unwrap_or_default();
                let all_zero = rest.iter().all(|&b| b == 0);
                self.pos = self.block_len;
                if all_zero {
                    return Ok(Physical::Zeros { offset: off });
                }
                let what = "zero header followed by data".to_string();
                return Ok(Physical::Bad {
                    offset: off,
                    end: block_end,
                    what,
                });
            }
            let end = hp + HEADER_LEN + len;
            if end > self.block_len {
                self.pos = self.block_len;
                if self.eof && end <= BLOCK_SIZE {
                    return Ok(Physical::Torn { offset: off });
                }
                let what = format!("record length {len} exceeds its block");
                return Ok(Physical::Bad {
                    offset: off,
                    end: block_end,
                    what,
                });
            }
            let payload = self.block.get(hp + HEADER_LEN..end).unwrap_or_default();
            if self.seeds.record_crc(typ, payload) != crc {
                self.pos = self.block_len;
                let what = "checksum mismatch".to_string();
                return Ok(Physical::Bad {
                    offset: off,
                    end: block_end,
                    what,
                });
            }
            self.pos = end;
            return Ok(match RecordType::from_u8(typ) {
                Some(typ) => Physical::Fragment {
                    typ,
                    header_pos: hp,
                    start: hp + HEADER_LEN,
                    end,
                },
                None if typ & METADATA_BIT != 0 => Physical::Metadata {
                    typ,
                    header_pos: hp,
                    start: hp + HEADER_LEN,
                    end,
                },
                None => Physical::Bad {
                    offset: off,
                    end: self.offset_of(end),
                    what: format!("unknown record type {typ}"),
                },
            });
        }
    }
}

fn corrupt(start: u64, end: u64, what: &str) -> ReadOutcome {
    debug_assert!(end >= start);
    ReadOutcome::Corrupt {
        offset: start,
        what: what.to_string(),
        dropped_bytes: end.saturating_sub(start),
    }
}
