//! `VersionEdit`: one MANIFEST record, the difference between two versions
//! (files added and removed per level) plus counters.
//!
//! Encoding (docs/format/manifest.md): a sequence of `(varint32 tag, field)`.
//! The first field of every edit is the format version. Tags whose value has
//! bit 13 ([`tag::SAFE_IGNORE_MASK`]) set carry a length-prefixed value and are
//! skipped by readers that do not know them; any other unknown tag is
//! `Corruption`. New-file records end with a list of length-prefixed
//! sub-fields with the same rule (bit 6 = safe to ignore).
//!
//! `decode` never panics on arbitrary bytes. Plain data, no thread-safety
//! concerns.

use crate::base::{compare_internal, FileNum, SeqNo, MAX_SEQNO, TRAILER_LEN};
use crate::codec::{
    get_length_prefixed, get_varint32, get_varint64, put_length_prefixed, put_varint32,
    put_varint64,
};
use crate::error::{Error, Result};

use super::file_meta::FileMeta;

/// The newest edit encoding this build reads. Version 2 added column
/// families (tags 10, 11, 12, 14 and [`tag::CF_OPTIONS`]); version 3 the
/// DB-wide [`tag::MIN_LOG_NUMBER_TO_KEEP`]; version 4 blob files
/// ([`tag::BLOB_FILE_ADDITION`], [`tag::BLOB_FILE_GARBAGE`]); version 5
/// the global sequence number of an ingested table
/// ([`file_tag::GLOBAL_SEQNO`]); version 6 the number an imported table
/// was written as ([`file_tag::WRITTEN_AS`]). An edit is
/// written with the oldest version that holds its fields, so DBs that
/// never need them stay readable by older builds (and a build without
/// blob files refuses a DB that has them with `NotSupported`); version 1
/// edits stay readable (default family only).
pub(crate) const EDIT_FORMAT_VERSION: u32 = 6;

/// The version an edit with an ingested table's global sequence number and
/// no imported table is written with.
const EDIT_FORMAT_VERSION_INGEST: u32 = 5;

/// The version an edit with blob fields and no ingested table's global
/// sequence number is written with.
const EDIT_FORMAT_VERSION_BLOB: u32 = 4;

/// The version an edit with `MIN_LOG_NUMBER_TO_KEEP` and no blob field is
/// written with.
const EDIT_FORMAT_VERSION_MIN_LOG: u32 = 3;

/// The version an edit without version-3 fields is written with.
const EDIT_FORMAT_VERSION_CF: u32 = 2;

/// Levels an edit may name; larger level numbers are corruption.
pub(crate) const MAX_LEVELS_ON_DISK: usize = 64;

/// Edit field tags.
///
/// FROZEN: these numbers are on disk. Never renumber or reuse one; add new
/// tags with new numbers (and document them in docs/format/manifest.md).
pub(crate) mod tag {
    /// varint32 format version; always the first field.
    pub(crate) const FORMAT_VERSION: u32 = 1;
    /// Length-prefixed comparator name.
    pub(crate) const COMPARATOR: u32 = 2;
    /// varint64: WALs with a smaller number are no longer needed.
    pub(crate) const LOG_NUMBER: u32 = 3;
    /// varint64: the WAL of the memtable being flushed (legacy, kept for room).
    pub(crate) const PREV_LOG_NUMBER: u32 = 4;
    /// varint64: the next file number to hand out.
    pub(crate) const NEXT_FILE_NUMBER: u32 = 5;
    /// varint64: the last sequence number used.
    pub(crate) const LAST_SEQUENCE: u32 = 6;
    /// varint32: the column family the file changes apply to (0 = default).
    pub(crate) const COLUMN_FAMILY: u32 = 7;
    /// varint32 level, varint64 file number.
    pub(crate) const DELETED_FILE: u32 = 8;
    /// A new file (see `encode_new_file`).
    pub(crate) const NEW_FILE: u32 = 9;
    /// Length-prefixed name: the edit creates family `COLUMN_FAMILY` (format 2).
    pub(crate) const COLUMN_FAMILY_ADD: u32 = 10;
    /// No value: the edit drops family `COLUMN_FAMILY` (format 2).
    pub(crate) const COLUMN_FAMILY_DROP: u32 = 11;
    /// varint32: the largest family id ever handed out (format 2).
    pub(crate) const MAX_COLUMN_FAMILY: u32 = 12;
    /// varint32: edits that follow this one in the same atomic group; a group
    /// cut short by the end of the MANIFEST is discarded whole (format 2).
    pub(crate) const ATOMIC_GROUP: u32 = 14;
    /// varint64, DB-wide: WALs numbered below this hold no unflushed write
    /// of any family, whatever the families' own log numbers say; recovery
    /// does not read them (format 3). Written by flushes while more than
    /// one family is live: an idle family's log number stays where it was,
    /// and the WALs between it and this one may have been deleted (or
    /// never synced) by the time of a power loss.
    pub(crate) const MIN_LOG_NUMBER_TO_KEEP: u32 = 13;
    /// A blob file joins the family (format 4): varint64 file number,
    /// varint64 blob count, varint64 blob bytes (whole records), varint64
    /// file size.
    pub(crate) const BLOB_FILE_ADDITION: u32 = 15;
    /// Blobs of a family's blob file became garbage (format 4): varint64
    /// file number, varint64 count, varint64 bytes, added to what earlier
    /// edits said. A file whose garbage reaches its count leaves the
    /// family.
    pub(crate) const BLOB_FILE_GARBAGE: u32 = 16;
    // Reserved, not yet written or read (unknown → Corruption until then):
    // 17 compact cursor.
    /// Bit 13: the field's value is length-prefixed and may be ignored.
    pub(crate) const SAFE_IGNORE_MASK: u32 = 1 << 13;
    /// Length-prefixed DB id (safe to ignore).
    pub(crate) const DB_ID: u32 = SAFE_IGNORE_MASK | 1;
    /// Length-prefixed text: the family's options as `name=value` lines
    /// (safe to ignore; format 2).
    pub(crate) const CF_OPTIONS: u32 = SAFE_IGNORE_MASK | 2;
}

/// Sub-field tags ending a `NEW_FILE` record. FROZEN like [`tag`].
pub(crate) mod file_tag {
    /// Ends the sub-field list.
    pub(crate) const END: u32 = 0;
    /// The global sequence number of an ingested (external) table
    /// (varint64, > 0; edit format 5): every entry of the table reads as
    /// written at this sequence number (its stored ones are 0). NOT safe
    /// to ignore: a reader that ignored it would order the table's entries
    /// below older ones.
    pub(crate) const GLOBAL_SEQNO: u32 = 1;
    /// Bit 6: the sub-field may be ignored by readers that do not know it.
    pub(crate) const SAFE_IGNORE_MASK: u32 = 1 << 6;
    // Reserved: 65 file checksum, 66 unique id, 68 creation time (all safe
    // to ignore).
    /// The smallest blob file number the table references (varint64),
    /// when it references any. Safe to ignore: only the forced blob
    /// garbage collection reads it.
    pub(crate) const OLDEST_BLOB_FILE: u32 = 67;
    /// Number of range tombstones in the table (varint64), when > 0. Safe
    /// to ignore: the table's own block is what readers use.
    pub(crate) const NUM_RANGE_DELETIONS: u32 = 69;
    /// Latest expiry among the table's expiring values (varint64, Unix
    /// seconds), when it has some. Safe to ignore.
    pub(crate) const EXPIRY_MAX: u32 = 70;
    /// Number of expiring values in the table (varint64), when > 0. Safe
    /// to ignore.
    pub(crate) const EXPIRY_ENTRIES: u32 = 71;
    /// Upper bound of the newest entry's write time (varint64, Unix
    /// seconds), when known (`FileMeta::newest_key_time`). Safe to
    /// ignore: a reader without it never drops the file by FIFO's TTL.
    pub(crate) const NEWEST_KEY_TIME: u32 = 72;
    /// The user keys the table's range tombstones span
    /// (`FileMeta::range_del_span`): two length-prefixed slices, the first
    /// tombstone's start and the last one's end, when known. Safe to
    /// ignore: without it the file's whole key range stands in.
    pub(crate) const RANGE_DEL_SPAN: u32 = 73;
    /// The number an imported table was written as (varint64,
    /// `FileMeta::written_as`), which its properties record. Edits that
    /// carry it are written as version 6, so a version-5 reader refuses
    /// them (`NotSupported`) rather than calling the table corrupt.
    pub(crate) const WRITTEN_AS: u32 = 74;
}

/// One MANIFEST record.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct VersionEdit {
    /// Name of the key comparator (checked on recovery).
    pub comparator: Option<String>,
    /// WALs numbered below this are obsolete.
    pub log_number: Option<FileNum>,
    /// DB-wide: WALs numbered below this are obsolete for every family.
    pub min_log_number_to_keep: Option<FileNum>,
    /// Previous log number (0 when unused).
    pub prev_log_number: Option<FileNum>,
    /// Next file number to hand out.
    pub next_file_number: Option<FileNum>,
    /// Last sequence number used.
    pub last_sequence: Option<SeqNo>,
    /// Identity of the DB.
    pub db_id: Option<String>,
    /// Column family the edit applies to (0 = default): its files, its log
    /// number, and the add/drop/options fields below.
    pub column_family: u32,
    /// Creates family `column_family` with this name.
    pub cf_add: Option<String>,
    /// Drops family `column_family`.
    pub cf_drop: bool,
    /// The family's options (`name=value` lines), persisted with its create
    /// and whenever it is opened with other options.
    pub cf_options: Option<String>,
    /// Largest family id handed out.
    pub max_column_family: Option<u32>,
    /// Edits after this one in the same atomic group (`None`: not grouped).
    pub atomic_group: Option<u32>,
    /// Files removed: (level, file number).
    pub deleted_files: Vec<(usize, FileNum)>,
    /// Files added: (level, metadata).
    pub new_files: Vec<(usize, FileMeta)>,
    /// Blob files added to the family.
    pub blob_file_additions: Vec<BlobFileAddition>,
    /// Garbage found in the family's blob files.
    pub blob_file_garbage: Vec<BlobFileGarbage>,
}

/// A blob file joining a family (tag [`tag::BLOB_FILE_ADDITION`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct BlobFileAddition {
    pub number: FileNum,
    /// Blobs in the file.
    pub count: u64,
    /// Bytes of those blobs' whole records.
    pub bytes: u64,
    pub file_size: u64,
}

/// Blobs of a file that no table references any more (tag
/// [`tag::BLOB_FILE_GARBAGE`]): added to the file's earlier garbage.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct BlobFileGarbage {
    pub number: FileNum,
    pub count: u64,
    pub bytes: u64,
}

impl VersionEdit {
    /// Records that file `number` leaves `level`.
    pub(crate) fn delete_file(&mut self, level: usize, number: FileNum) {
        self.deleted_files.push((level, number));
    }

    /// Records that `meta` joins `level`.
    pub(crate) fn add_file(&mut self, level: usize, meta: FileMeta) {
        self.new_files.push((level, meta));
    }

    /// Numbers of the files this edit adds (tables and blob files).
    pub(crate) fn new_file_numbers(&self) -> Vec<FileNum> {
        self.new_files
            .iter()
            .map(|(_, f)| f.number)
            .chain(self.blob_file_additions.iter().map(|b| b.number))
            .collect()
    }

    /// Appends the encoding of this edit to `dst`.
    pub(crate) fn encode(&self, dst: &mut Vec<u8>) {
        put_varint32(dst, tag::FORMAT_VERSION);
        let version = if self.new_files.iter().any(|(_, f)| f.written_as != 0) {
            EDIT_FORMAT_VERSION
        } else if self.new_files.iter().any(|(_, f)| f.global_seqno.is_some()) {
            EDIT_FORMAT_VERSION_INGEST
        } else if !self.blob_file_additions.is_empty() || !self.blob_file_garbage.is_empty() {
            EDIT_FORMAT_VERSION_BLOB
        } else if self.min_log_number_to_keep.is_some() {
            EDIT_FORMAT_VERSION_MIN_LOG
        } else {
            EDIT_FORMAT_VERSION_CF
        };
        put_varint32(dst, version);
        if self.column_family != 0 {
            put_varint32(dst, tag::COLUMN_FAMILY);
            put_varint32(dst, self.column_family);
        }
        if let Some(name) = &self.cf_add {
            put_varint32(dst, tag::COLUMN_FAMILY_ADD);
            put_length_prefixed(dst, name.as_bytes());
        }
        if self.cf_drop {
            put_varint32(dst, tag::COLUMN_FAMILY_DROP);
        }
        if let Some(m) = self.max_column_family {
            put_varint32(dst, tag::MAX_COLUMN_FAMILY);
            put_varint32(dst, m);
        }
        if let Some(g) = self.atomic_group {
            put_varint32(dst, tag::ATOMIC_GROUP);
            put_varint32(dst, g);
        }
        if let Some(o) = &self.cf_options {
            put_varint32(dst, tag::CF_OPTIONS);
            put_length_prefixed(dst, o.as_bytes());
        }
        if let Some(c) = &self.comparator {
            put_varint32(dst, tag::COMPARATOR);
            put_length_prefixed(dst, c.as_bytes());
        }
        let counters = [
            (tag::LOG_NUMBER, self.log_number),
            (tag::PREV_LOG_NUMBER, self.prev_log_number),
            (tag::NEXT_FILE_NUMBER, self.next_file_number),
            (tag::LAST_SEQUENCE, self.last_sequence),
            (tag::MIN_LOG_NUMBER_TO_KEEP, self.min_log_number_to_keep),
        ];
        for (t, v) in counters {
            if let Some(v) = v {
                put_varint32(dst, t);
                put_varint64(dst, v);
            }
        }
        if let Some(id) = &self.db_id {
            put_varint32(dst, tag::DB_ID);
            put_length_prefixed(dst, id.as_bytes());
        }
        for &(level, number) in &self.deleted_files {
            put_varint32(dst, tag::DELETED_FILE);
            put_varint32(dst, level as u32);
            put_varint64(dst, number);
        }
        for (level, f) in &self.new_files {
            put_varint32(dst, tag::NEW_FILE);
            encode_new_file(dst, *level, f);
        }
        for b in &self.blob_file_additions {
            put_varint32(dst, tag::BLOB_FILE_ADDITION);
            for v in [b.number, b.count, b.bytes, b.file_size] {
                put_varint64(dst, v);
            }
        }
        for g in &self.blob_file_garbage {
            put_varint32(dst, tag::BLOB_FILE_GARBAGE);
            for v in [g.number, g.count, g.bytes] {
                put_varint64(dst, v);
            }
        }
    }

    /// Decodes one edit. `file` and `offset` (the record's offset in the
    /// MANIFEST) go into `Corruption` errors. A format version newer than
    /// [`EDIT_FORMAT_VERSION`] is `NotSupported`.
    pub(crate) fn decode(src: &[u8], file: &str, offset: u64) -> Result<VersionEdit> {
        let mut d = Decoder {
            src,
            total: src.len(),
            file,
            offset,
        };
        let mut e = VersionEdit::default();
        match d.varint32("tag")? {
            tag::FORMAT_VERSION => {}
            t => return Err(d.err(format!("edit starts with tag {t}, not the format version"))),
        }
        let version = d.varint32("format version")?;
        if version == 0 || version > EDIT_FORMAT_VERSION {
            return Err(Error::NotSupported(format!(
                "version edit format version {version} in {file} at offset {offset} \
                 (this build reads versions 1..={EDIT_FORMAT_VERSION})"
            )));
        }
        let mut seen_cf = false;
        while !d.src.is_empty() {
            let t = d.varint32("tag")?;
            match t {
                tag::FORMAT_VERSION => return Err(d.err("second format version field".into())),
                tag::COMPARATOR => {
                    let s = d.string("comparator name")?;
                    d.set_once(&mut e.comparator, s, "comparator")?;
                }
                tag::LOG_NUMBER => {
                    let v = d.varint64("log number")?;
                    d.set_once(&mut e.log_number, v, "log number")?;
                }
                tag::PREV_LOG_NUMBER => {
                    let v = d.varint64("prev log number")?;
                    d.set_once(&mut e.prev_log_number, v, "prev log number")?;
                }
                tag::NEXT_FILE_NUMBER => {
                    let v = d.varint64("next file number")?;
                    d.set_once(&mut e.next_file_number, v, "next file number")?;
                }
                tag::LAST_SEQUENCE => {
                    let v = d.varint64("last sequence")?;
                    if v > MAX_SEQNO {
                        return Err(d.err(format!("last sequence {v} exceeds 56 bits")));
                    }
                    d.set_once(&mut e.last_sequence, v, "last sequence")?;
                }
                tag::COLUMN_FAMILY => {
                    if seen_cf {
                        return Err(d.err("duplicate column family".into()));
                    }
                    seen_cf = true;
                    e.column_family = d.varint32("column family")?;
                }
                tag::DB_ID => {
                    let s = d.string("db id")?;
                    d.set_once(&mut e.db_id, s, "db id")?;
                }
                tag::COLUMN_FAMILY_ADD if version >= 2 => {
                    let s = d.string("column family name")?;
                    d.set_once(&mut e.cf_add, s, "column family add")?;
                }
                tag::COLUMN_FAMILY_DROP if version >= 2 => {
                    if e.cf_drop {
                        return Err(d.err("duplicate column family drop".into()));
                    }
                    e.cf_drop = true;
                }
                tag::MAX_COLUMN_FAMILY if version >= 2 => {
                    let v = d.varint32("max column family")?;
                    d.set_once(&mut e.max_column_family, v, "max column family")?;
                }
                tag::MIN_LOG_NUMBER_TO_KEEP if version >= 3 => {
                    let v = d.varint64("min log number to keep")?;
                    d.set_once(&mut e.min_log_number_to_keep, v, "min log number to keep")?;
                }
                tag::ATOMIC_GROUP if version >= 2 => {
                    let v = d.varint32("atomic group")?;
                    d.set_once(&mut e.atomic_group, v, "atomic group")?;
                }
                tag::CF_OPTIONS => {
                    let s = d.string("column family options")?;
                    d.set_once(&mut e.cf_options, s, "column family options")?;
                }
                tag::DELETED_FILE => {
                    let level = d.level()?;
                    let number = d.varint64("deleted file number")?;
                    e.deleted_files.push((level, number));
                }
                tag::NEW_FILE => {
                    let (level, f) = d.new_file()?;
                    e.new_files.push((level, f));
                }
                tag::BLOB_FILE_ADDITION if version >= 4 => {
                    let b = BlobFileAddition {
                        number: d.varint64("blob file number")?,
                        count: d.varint64("blob count")?,
                        bytes: d.varint64("blob bytes")?,
                        file_size: d.varint64("blob file size")?,
                    };
                    if b.count == 0 || b.bytes == 0 || b.bytes > b.file_size {
                        return Err(d.err(format!("blob file {}: bad counts {b:?}", b.number)));
                    }
                    e.blob_file_additions.push(b);
                }
                tag::BLOB_FILE_GARBAGE if version >= 4 => {
                    let g = BlobFileGarbage {
                        number: d.varint64("blob file number")?,
                        count: d.varint64("garbage count")?,
                        bytes: d.varint64("garbage bytes")?,
                    };
                    e.blob_file_garbage.push(g);
                }
                t if t & tag::SAFE_IGNORE_MASK != 0 => {
                    d.bytes("ignorable field")?;
                }
                t => return Err(d.err(format!("unknown tag {t}"))),
            }
        }
        Ok(e)
    }
}

/// Level, number, size, smallest, largest, seqs, counts, compression, then
/// sub-fields ending with `file_tag::END`.
fn encode_new_file(dst: &mut Vec<u8>, level: usize, f: &FileMeta) {
    put_varint32(dst, level as u32);
    put_varint64(dst, f.number);
    put_varint64(dst, f.file_size);
    put_length_prefixed(dst, &f.smallest);
    put_length_prefixed(dst, &f.largest);
    put_varint64(dst, f.smallest_seq);
    put_varint64(dst, f.largest_seq);
    put_varint64(dst, f.num_entries);
    put_varint64(dst, f.num_deletions);
    dst.push(f.compression);
    for (tag, n) in [
        (file_tag::NUM_RANGE_DELETIONS, f.num_range_deletions),
        (file_tag::EXPIRY_MAX, f.expiry_max),
        (file_tag::EXPIRY_ENTRIES, f.expiry_entries),
        (file_tag::NEWEST_KEY_TIME, f.newest_key_time),
        (file_tag::OLDEST_BLOB_FILE, f.oldest_blob_file),
        (file_tag::WRITTEN_AS, f.written_as),
    ] {
        if n > 0 {
            put_varint32(dst, tag);
            let mut v = Vec::with_capacity(10);
            put_varint64(&mut v, n);
            put_length_prefixed(dst, &v);
        }
    }
    if let Some(g) = f.global_seqno {
        put_varint32(dst, file_tag::GLOBAL_SEQNO);
        let mut v = Vec::with_capacity(10);
        put_varint64(&mut v, g);
        put_length_prefixed(dst, &v);
    }
    if let Some((start, end)) = f.range_del_span.get() {
        put_varint32(dst, file_tag::RANGE_DEL_SPAN);
        let mut v = Vec::with_capacity(start.len() + end.len() + 10);
        put_length_prefixed(&mut v, start);
        put_length_prefixed(&mut v, end);
        put_length_prefixed(dst, &v);
    }
    put_varint32(dst, file_tag::END);
}

struct Decoder<'a> {
    src: &'a [u8],
    total: usize,
    file: &'a str,
    offset: u64,
}

impl<'a> Decoder<'a> {
    fn err(&self, what: String) -> Error {
        let pos = self.total - self.src.len();
        Error::corruption(
            self.file,
            self.offset,
            format!("version edit: {what} (at byte {pos} of the edit)"),
        )
    }

    fn varint32(&mut self, what: &str) -> Result<u32> {
        get_varint32(&mut self.src).ok_or_else(|| self.err(format!("bad or truncated {what}")))
    }

    fn varint64(&mut self, what: &str) -> Result<u64> {
        get_varint64(&mut self.src).ok_or_else(|| self.err(format!("bad or truncated {what}")))
    }

    fn bytes(&mut self, what: &str) -> Result<&'a [u8]> {
        get_length_prefixed(&mut self.src)
            .ok_or_else(|| self.err(format!("bad or truncated {what}")))
    }

    fn string(&mut self, what: &str) -> Result<String> {
        let b = self.bytes(what)?;
        match std::str::from_utf8(b) {
            Ok(s) => Ok(s.to_string()),
            Err(_) => Err(self.err(format!("{what} is not UTF-8"))),
        }
    }

    fn set_once<T>(&self, slot: &mut Option<T>, v: T, what: &str) -> Result<()> {
        if slot.is_some() {
            return Err(self.err(format!("duplicate {what}")));
        }
        *slot = Some(v);
        Ok(())
    }

    fn level(&mut self) -> Result<usize> {
        let level = self.varint32("level")? as usize;
        if level >= MAX_LEVELS_ON_DISK {
            return Err(self.err(format!("level {level} out of range")));
        }
        Ok(level)
    }

    fn internal_key(&mut self, what: &str) -> Result<Vec<u8>> {
        let k = self.bytes(what)?;
        if k.len() < TRAILER_LEN {
            return Err(self.err(format!(
                "{what} is {} bytes, shorter than an internal key",
                k.len()
            )));
        }
        Ok(k.to_vec())
    }

    fn new_file(&mut self) -> Result<(usize, FileMeta)> {
        let level = self.level()?;
        let number = self.varint64("file number")?;
        let file_size = self.varint64("file size")?;
        let smallest = self.internal_key("smallest key")?;
        let largest = self.internal_key("largest key")?;
        let smallest_seq = self.varint64("smallest seqno")?;
        let largest_seq = self.varint64("largest seqno")?;
        let num_entries = self.varint64("entry count")?;
        let num_deletions = self.varint64("deletion count")?;
        let Some((&compression, rest)) = self.src.split_first() else {
            return Err(self.err("truncated compression type".into()));
        };
        self.src = rest;
        let mut num_range_deletions = 0;
        let mut expiry_max = 0;
        let mut expiry_entries = 0;
        let mut newest_key_time = 0;
        let mut oldest_blob_file = 0;
        let mut written_as = 0;
        let mut range_del_span = None;
        let mut global_seqno = None;
        loop {
            match self.varint32("file sub-field tag")? {
                file_tag::END => break,
                file_tag::GLOBAL_SEQNO => {
                    let mut v = self.bytes("global seqno")?;
                    let g = crate::codec::get_varint64(&mut v)
                        .filter(|&g| v.is_empty() && g > 0 && g <= MAX_SEQNO)
                        .ok_or_else(|| self.err(format!("file {number}: bad global seqno")))?;
                    global_seqno = Some(g);
                }
                file_tag::RANGE_DEL_SPAN => {
                    let mut v = self.bytes("range tombstone span")?;
                    let bad = || self.err(format!("file {number}: bad range tombstone span"));
                    let start = get_length_prefixed(&mut v).ok_or_else(bad)?;
                    let end = get_length_prefixed(&mut v).ok_or_else(bad)?;
                    if !v.is_empty() {
                        return Err(bad());
                    }
                    range_del_span = Some((start.to_vec(), end.to_vec()));
                }
                t @ (file_tag::NUM_RANGE_DELETIONS
                | file_tag::EXPIRY_MAX
                | file_tag::EXPIRY_ENTRIES
                | file_tag::NEWEST_KEY_TIME
                | file_tag::OLDEST_BLOB_FILE
                | file_tag::WRITTEN_AS) => {
                    let mut v = self.bytes("file sub-field")?;
                    let n = crate::codec::get_varint64(&mut v)
                        .filter(|_| v.is_empty())
                        .ok_or_else(|| self.err(format!("file {number}: bad sub-field {t}")))?;
                    match t {
                        file_tag::EXPIRY_MAX => expiry_max = n,
                        file_tag::EXPIRY_ENTRIES => expiry_entries = n,
                        file_tag::NEWEST_KEY_TIME => newest_key_time = n,
                        file_tag::OLDEST_BLOB_FILE => oldest_blob_file = n,
                        file_tag::WRITTEN_AS => written_as = n,
                        _ => num_range_deletions = n,
                    }
                }
                t if t & file_tag::SAFE_IGNORE_MASK != 0 => {
                    self.bytes("ignorable file sub-field")?;
                }
                t => {
                    return Err(self.err(format!("unknown file sub-field tag {t} in file {number}")))
                }
            }
        }
        if compare_internal(&smallest, &largest).is_gt() {
            return Err(self.err(format!("file {number}: smallest key > largest key")));
        }
        if smallest_seq > largest_seq || largest_seq > MAX_SEQNO {
            return Err(self.err(format!(
                "file {number}: bad seqno range {smallest_seq}..={largest_seq}"
            )));
        }
        let f = FileMeta {
            number,
            file_size,
            smallest,
            largest,
            smallest_seq,
            largest_seq,
            num_entries,
            num_deletions,
            num_range_deletions,
            expiry_max,
            expiry_entries,
            newest_key_time,
            oldest_blob_file,
            compression,
            global_seqno,
            written_as,
            ..Default::default()
        };
        if let Some(span) = range_del_span {
            let _ = f.range_del_span.set(span);
        }
        Ok((level, f))
    }
}

#[cfg(test)]
mod tests;
