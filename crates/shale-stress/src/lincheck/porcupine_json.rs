//! Histories as Porcupine operation JSON, for offline cross-checks with the
//! Go tool (`github.com/anishathalye/porcupine`).
//!
//! The file is a JSON array of `porcupine.Operation` objects with Go's
//! default field names:
//!
//! ```json
//! [{"ClientId":0,"Input":{"Op":"put","Key":"k1","Value":"v-0-1"},
//!   "Call":10,"Output":{"Exists":false,"Value":"","Unknown":false},"Return":20}]
//! ```
//!
//! `Op` is `put`, `delete` or `get`; for a `get`, `Output.Exists`/`Value` is
//! what it read. A maybe-applied write has `"Unknown":true` and `Return` =
//! `math.MaxInt64`, so Porcupine may linearize it anywhere after its call,
//! including last (no effect). Keys and values must be UTF-8 (Shale's stress
//! histories use ASCII); other bytes are rejected on write.
//!
//! A matching Go model: state `{Exists bool; Value string}`, initially absent;
//! partition by `Input.Key`; `Step`: put → `(true, {true, in.Value})`,
//! delete → `(true, {false, ""})`, get → `(out.Exists == st.Exists &&
//! out.Value == st.Value, st)`.
//!
//! Two extensions, in fields Go's decoder ignores unless the struct has them:
//! a write cut by a crash has `"Unknown":true` and `Return` = its crash
//! bound (not `MaxInt64`); a Go model must then treat it as "effect or
//! no-op" (Porcupine's nondeterministic models do this). `"Group":n` marks
//! the operations of one multi-key operation (batch or snapshot read).
//!
//! Times are nanoseconds; they must fit in an `int64` (they do: ~292 years).

use std::io::{Read, Write};

use serde::{Deserialize, Serialize};

use super::history::{OpKind, Operation};

/// Errors reading or writing a history file.
#[derive(Debug)]
pub enum JsonError {
    /// Malformed JSON or an IO failure.
    Json(serde_json::Error),
    /// Valid JSON that is not a history (bad op name, non-UTF-8 bytes, ...).
    Invalid(String),
}

impl std::fmt::Display for JsonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JsonError::Json(e) => write!(f, "history JSON: {e}"),
            JsonError::Invalid(m) => write!(f, "invalid history: {m}"),
        }
    }
}

impl std::error::Error for JsonError {}

impl From<serde_json::Error> for JsonError {
    fn from(e: serde_json::Error) -> Self {
        JsonError::Json(e)
    }
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct JsonInput {
    op: String,
    key: String,
    #[serde(default)]
    value: String,
}

#[derive(Serialize, Deserialize, Default)]
#[serde(rename_all = "PascalCase")]
struct JsonOutput {
    #[serde(default)]
    exists: bool,
    #[serde(default)]
    value: String,
    #[serde(default)]
    unknown: bool,
}

#[derive(Serialize, Deserialize)]
struct JsonOperation {
    #[serde(rename = "ClientId")]
    client_id: usize,
    #[serde(rename = "Input")]
    input: JsonInput,
    #[serde(rename = "Call")]
    call: i64,
    #[serde(rename = "Output", default)]
    output: JsonOutput,
    #[serde(rename = "Return")]
    ret: i64,
    #[serde(rename = "Group", default, skip_serializing_if = "Option::is_none")]
    group: Option<u64>,
}

fn text(bytes: &[u8], what: &str) -> Result<String, JsonError> {
    String::from_utf8(bytes.to_vec())
        .map_err(|_| JsonError::Invalid(format!("{what} is not UTF-8: {bytes:?}")))
}

fn time(t: u64) -> Result<i64, JsonError> {
    i64::try_from(t).map_err(|_| JsonError::Invalid(format!("time {t} overflows int64")))
}

fn to_json(op: &Operation) -> Result<JsonOperation, JsonError> {
    let key = text(&op.key, "key")?;
    let (name, value, output) = match &op.kind {
        OpKind::Put(v) => ("put", text(v, "value")?, JsonOutput::default()),
        OpKind::Delete => ("delete", String::new(), JsonOutput::default()),
        OpKind::Get(v) => {
            let read = match v {
                Some(v) => JsonOutput {
                    exists: true,
                    value: text(v, "value")?,
                    unknown: false,
                },
                None => JsonOutput::default(),
            };
            ("get", String::new(), read)
        }
    };
    let (ret, output) = match op.ret {
        Some(r) => (time(r)?, output),
        None => (
            op.crash.map_or(Ok(i64::MAX), time)?,
            JsonOutput {
                unknown: true,
                ..output
            },
        ),
    };
    Ok(JsonOperation {
        client_id: op.client_id,
        input: JsonInput {
            op: name.to_string(),
            key,
            value,
        },
        call: time(op.call)?,
        output,
        ret,
        group: op.group,
    })
}

fn from_json(j: JsonOperation) -> Result<Operation, JsonError> {
    let kind = match j.input.op.as_str() {
        "put" => OpKind::Put(j.input.value.into_bytes()),
        "delete" => OpKind::Delete,
        "get" => OpKind::Get(j.output.exists.then(|| j.output.value.into_bytes())),
        other => return Err(JsonError::Invalid(format!("unknown op {other:?}"))),
    };
    let call = u64::try_from(j.call)
        .map_err(|_| JsonError::Invalid(format!("negative call time {}", j.call)))?;
    let ret_time = || {
        u64::try_from(j.ret)
            .map_err(|_| JsonError::Invalid(format!("negative return time {}", j.ret)))
    };
    let (ret, crash) = if j.ret == i64::MAX {
        (None, None)
    } else if j.output.unknown {
        (None, Some(ret_time()?))
    } else {
        (Some(ret_time()?), None)
    };
    Ok(Operation {
        client_id: j.client_id,
        key: j.input.key.into_bytes(),
        kind,
        call,
        ret,
        crash,
        group: j.group,
    })
}

/// Writes `history` as a Porcupine operation array.
pub fn write_history(history: &[Operation], out: impl Write) -> Result<(), JsonError> {
    let ops = history.iter().map(to_json).collect::<Result<Vec<_>, _>>()?;
    serde_json::to_writer(out, &ops)?;
    Ok(())
}

/// Reads a history written by [`write_history`] (or by a Go program using the
/// same input/output structs).
pub fn read_history(input: impl Read) -> Result<Vec<Operation>, JsonError> {
    let ops: Vec<JsonOperation> = serde_json::from_reader(input)?;
    ops.into_iter().map(from_json).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_shape() {
        let h = vec![
            Operation::new(0, b"k", OpKind::Put(b"v1".to_vec()), 1, 5),
            Operation::maybe(1, b"k", OpKind::Delete, 2),
            Operation::new(2, b"k", OpKind::Get(Some(b"v1".to_vec())), 6, 7),
            Operation::new(2, b"j", OpKind::Get(None), 8, 9).in_group(4),
            Operation::cut_by_crash(3, b"j", OpKind::Put(b"v2".to_vec()), 8, 30).in_group(5),
        ];
        let mut buf = Vec::new();
        write_history(&h, &mut buf).unwrap();
        let s = String::from_utf8(buf.clone()).unwrap();
        assert!(s.contains(r#""ClientId":0"#), "{s}");
        assert!(
            s.contains(r#""Input":{"Op":"put","Key":"k","Value":"v1"}"#),
            "{s}"
        );
        assert!(s.contains(r#""Return":9223372036854775807"#), "{s}");
        assert_eq!(read_history(&buf[..]).unwrap(), h);
    }

    #[test]
    fn rejects_bad_input() {
        let bad = Operation::new(0, &[0xff], OpKind::Delete, 1, 2);
        assert!(matches!(
            write_history(&[bad], Vec::new()),
            Err(JsonError::Invalid(_))
        ));
        let j = r#"[{"ClientId":0,"Input":{"Op":"cas","Key":"k"},"Call":1,"Return":2}]"#;
        assert!(matches!(
            read_history(j.as_bytes()),
            Err(JsonError::Invalid(_))
        ));
        assert!(matches!(read_history(&b"{"[..]), Err(JsonError::Json(_))));
    }
}
