//! A history on disk that survives `kill -9`, and its loading into a
//! checkable [`Operation`] list spanning every crash.
//!
//! Layout: one directory; each process run is a *segment* (numbered from 1),
//! and each client thread of a segment appends to its own file
//! `seg-<segment>-c<client>.jsonl`, so the op path shares no lock. A file is
//! opened with `O_APPEND` and written unbuffered: each event is one JSON line
//! written by one `write(2)`, so once written it is in the page cache, which
//! outlives a killed process. (A machine crash could tear a last line; the
//! loader ignores an unparsable last line of a file.)
//!
//! Events, with times in nanoseconds of the segment's own [`Clock`]:
//! - `{"e":"w","id":N,"call":T,"w":[[key,value-or-null],...]}`: a write
//!   (one key, or a batch) is about to be called; written before the call;
//! - `{"e":"a","id":N,"ret":T}`: write N returned Ok;
//! - `{"e":"r","call":T,"ret":T,"r":[[key,value-or-null],...]}`: a read that
//!   completed (one key, or several at one snapshot), written after it.
//!
//! Loading: segments in order, each shifted to start after the previous
//! one's last recorded time. A write without an ack was cut by the end of its
//! segment (a kill, or a failure): it becomes an optional op bounded by the
//! segment's end ([`Operation::cut_by_crash`]); any effect it had happened
//! before the next segment's process started. The shift keeps every order
//! between recorded events; the gap between a segment's last event and the
//! kill shrinks to one nanosecond, which moves no recorded event.
//!
//! Thread safety: a [`SegmentWriter`] belongs to one thread; loading is done
//! when no segment is being written.

use std::collections::{BTreeMap, HashMap};
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::lincheck::{OpKind, Operation};

/// One key of an event: the key and the value written or read (None:
/// delete, or read as absent).
pub type KeyValue = (String, Option<String>);

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "e")]
enum Event {
    #[serde(rename = "w")]
    Write {
        id: u64,
        call: u64,
        w: Vec<KeyValue>,
    },
    #[serde(rename = "a")]
    Ack { id: u64, ret: u64 },
    #[serde(rename = "r")]
    Read {
        call: u64,
        ret: u64,
        r: Vec<KeyValue>,
    },
}

/// A history directory.
pub struct HistoryDir {
    dir: PathBuf,
}

/// The appender of one client thread of one segment.
pub struct SegmentWriter {
    file: File,
    next_id: u64,
}

/// A loaded history with its statistics.
#[derive(Debug, Default)]
pub struct LoadedHistory {
    /// Every operation, per key (multi-key ones share a group id).
    pub ops: Vec<Operation>,
    /// Segments (process runs) found.
    pub segments: u32,
    /// Write calls (single or batch) and those acknowledged.
    pub writes: u64,
    /// Write calls acknowledged.
    pub acked: u64,
    /// Read calls (single or multi-key).
    pub reads: u64,
}

fn invalid(m: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, m)
}

impl HistoryDir {
    /// Opens (creating if needed) the history directory `dir`.
    pub fn open(dir: &Path) -> io::Result<HistoryDir> {
        std::fs::create_dir_all(dir)?;
        Ok(HistoryDir {
            dir: dir.to_path_buf(),
        })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// `(segment, client)` of each history file, unordered.
    fn files(&self) -> io::Result<Vec<(u32, usize, PathBuf)>> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(&self.dir)? {
            let e = e?;
            let name = e.file_name();
            let Some(name) = name.to_str() else { continue };
            let parsed = name
                .strip_prefix("seg-")
                .and_then(|r| r.strip_suffix(".jsonl"))
                .and_then(|r| r.split_once("-c"))
                .and_then(|(s, c)| Some((s.parse().ok()?, c.parse().ok()?)));
            if let Some((s, c)) = parsed {
                out.push((s, c, e.path()));
            }
        }
        Ok(out)
    }

    /// The number for a new segment: one past the highest present.
    pub fn next_segment(&self) -> io::Result<u32> {
        Ok(self.files()?.iter().map(|f| f.0).max().unwrap_or(0) + 1)
    }

    /// The writer of `client` in `segment` (appending if it exists).
    pub fn writer(&self, segment: u32, client: usize) -> io::Result<SegmentWriter> {
        let path = self
            .dir
            .join(format!("seg-{segment:06}-c{client:03}.jsonl"));
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(SegmentWriter { file, next_id: 0 })
    }

    /// Loads every segment (see the module comment).
    pub fn load(&self) -> io::Result<LoadedHistory> {
        let mut by_segment: BTreeMap<u32, Vec<(usize, PathBuf)>> = BTreeMap::new();
        for (s, c, p) in self.files()? {
            by_segment.entry(s).or_default().push((c, p));
        }
        let mut out = LoadedHistory::default();
        let mut offset = 0u64;
        let mut next_group = 0u64;
        for (&segment, files) in &by_segment {
            out.segments += 1;
            let mut seg_events: Vec<(usize, Event)> = Vec::new();
            for (client, path) in files {
                for e in read_events(path)? {
                    seg_events.push((*client, e));
                }
            }
            let last = seg_events
                .iter()
                .map(|(_, e)| match e {
                    Event::Write { call, .. } => *call,
                    Event::Ack { ret, .. } | Event::Read { ret, .. } => *ret,
                })
                .max()
                .unwrap_or(0);
            let end = offset + last + 1;
            let acks: HashMap<(usize, u64), u64> = seg_events
                .iter()
                .filter_map(|(c, e)| match e {
                    Event::Ack { id, ret } => Some(((*c, *id), *ret)),
                    _ => None,
                })
                .collect();
            for (client, e) in seg_events {
                let client_id = segment as usize * 1000 + client;
                let (kvs, ops) = match e {
                    Event::Ack { .. } => continue,
                    Event::Write { id, call, w } => {
                        out.writes += 1;
                        let ret = acks.get(&(client, id)).map(|r| r + offset);
                        out.acked += u64::from(ret.is_some());
                        let ops: Vec<Operation> = w
                            .iter()
                            .map(|(k, v)| {
                                let kind = match v {
                                    Some(v) => OpKind::Put(v.clone().into_bytes()),
                                    None => OpKind::Delete,
                                };
                                let call = call + offset;
                                match ret {
                                    Some(r) => {
                                        Operation::new(client_id, k.as_bytes(), kind, call, r)
                                    }
                                    None => Operation::cut_by_crash(
                                        client_id,
                                        k.as_bytes(),
                                        kind,
                                        call,
                                        end,
                                    ),
                                }
                            })
                            .collect();
                        (w.len(), ops)
                    }
                    Event::Read { call, ret, r } => {
                        out.reads += 1;
                        let ops: Vec<Operation> = r
                            .iter()
                            .map(|(k, v)| {
                                let kind = OpKind::Get(v.clone().map(String::into_bytes));
                                Operation::new(
                                    client_id,
                                    k.as_bytes(),
                                    kind,
                                    call + offset,
                                    ret + offset,
                                )
                            })
                            .collect();
                        (r.len(), ops)
                    }
                };
                if kvs > 1 {
                    next_group += 1;
                    out.ops
                        .extend(ops.into_iter().map(|o| o.in_group(next_group)));
                } else {
                    out.ops.extend(ops);
                }
            }
            offset = end + 1;
        }
        Ok(out)
    }
}

/// The events of one file; an unparsable last line (torn) is ignored.
fn read_events(path: &Path) -> io::Result<Vec<Event>> {
    let lines: Vec<String> = BufReader::new(File::open(path)?)
        .lines()
        .collect::<io::Result<_>>()?;
    let mut out = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        match serde_json::from_str(line) {
            Ok(e) => out.push(e),
            Err(_) if i + 1 == lines.len() => {}
            Err(e) => return Err(invalid(format!("{} line {}: {e}", path.display(), i + 1))),
        }
    }
    Ok(out)
}

impl SegmentWriter {
    fn append(&mut self, e: &Event) -> io::Result<()> {
        let mut line = serde_json::to_vec(e).map_err(|e| invalid(e.to_string()))?;
        line.push(b'\n');
        // One write call per event (`write_all` loops only on a short
        // write, which a regular file does not do short of a full disk).
        self.file.write_all(&line)
    }

    /// Records that a write of `kvs` is about to be called at `call`;
    /// returns its id for [`SegmentWriter::ack`].
    pub fn invoke_write(&mut self, call: u64, kvs: &[KeyValue]) -> io::Result<u64> {
        let id = self.next_id;
        self.next_id += 1;
        self.append(&Event::Write {
            id,
            call,
            w: kvs.to_vec(),
        })?;
        Ok(id)
    }

    /// Records that write `id` returned Ok at `ret`.
    pub fn ack(&mut self, id: u64, ret: u64) -> io::Result<()> {
        self.append(&Event::Ack { id, ret })
    }

    /// Records a completed read of `kvs` (the values seen) over
    /// `call..ret`.
    pub fn read(&mut self, call: u64, ret: u64, kvs: Vec<KeyValue>) -> io::Result<()> {
        self.append(&Event::Read { call, ret, r: kvs })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(k: &str, v: Option<&str>) -> KeyValue {
        (k.to_string(), v.map(String::from))
    }

    #[test]
    fn segments_load_in_order_with_cut_writes() {
        let d = tempfile::tempdir().unwrap();
        let h = HistoryDir::open(d.path()).unwrap();
        assert_eq!(h.next_segment().unwrap(), 1);
        let mut w = h.writer(1, 0).unwrap();
        let a = w.invoke_write(10, &[kv("a", Some("1"))]).unwrap();
        w.ack(a, 20).unwrap();
        // A batch cut by the kill.
        w.invoke_write(30, &[kv("a", Some("2")), kv("b", None)])
            .unwrap();
        drop(w);
        assert_eq!(h.next_segment().unwrap(), 2);
        let mut w = h.writer(2, 0).unwrap();
        w.read(0, 5, vec![kv("a", Some("1")), kv("b", None)])
            .unwrap();
        drop(w);
        // A torn last line is ignored.
        let mut f = OpenOptions::new()
            .append(true)
            .open(d.path().join("seg-000002-c000.jsonl"))
            .unwrap();
        f.write_all(b"{\"e\":\"r\",\"ca").unwrap();
        let l = h.load().unwrap();
        assert_eq!((l.segments, l.writes, l.acked, l.reads), (2, 2, 1, 1));
        let cut: Vec<&Operation> = l.ops.iter().filter(|o| o.crash.is_some()).collect();
        assert_eq!(cut.len(), 2);
        // Segment 1 ends at 31 (last time 30, + 1); segment 2 starts at 32.
        assert!(cut.iter().all(|o| o.crash == Some(31) && o.group.is_some()));
        let reads: Vec<&Operation> = l
            .ops
            .iter()
            .filter(|o| matches!(o.kind, OpKind::Get(_)))
            .collect();
        assert!(reads.iter().all(|o| o.call == 32 && o.ret == Some(37)));
        assert_ne!(reads[0].group, cut[0].group);
        let report = crate::lincheck::check(&l.ops, std::time::Duration::from_secs(5));
        assert_eq!(report.result, crate::lincheck::CheckResult::Ok);
    }
}
