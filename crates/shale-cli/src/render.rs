//! Keys and values on the command line and in output: as UTF-8 with escapes
//! (the default, like `ldb`) or as hex (`--hex`), and errors as JSON.
//!
//! Escaped form: printable ASCII stays as is except `\`, which doubles;
//! every other byte is `\xNN`. Hex form: two lowercase digits per byte.
//! Input keys are the argument's UTF-8 bytes, or with `--hex` its hex
//! digits (an optional `0x` prefix is accepted).

use serde_json::{json, Value};

use crate::error::CliError;

/// How bytes are shown and read.
#[derive(Debug, Clone, Copy)]
pub struct Render {
    /// Hex instead of escaped UTF-8.
    pub hex: bool,
}

impl Render {
    /// `b` as the output shows it.
    pub fn bytes(&self, b: &[u8]) -> String {
        if self.hex {
            hex(b)
        } else {
            escape(b)
        }
    }

    /// The bytes of a key or value argument.
    pub fn parse(&self, arg: &str) -> Result<Vec<u8>, CliError> {
        if !self.hex {
            return Ok(arg.as_bytes().to_vec());
        }
        let digits = arg.strip_prefix("0x").unwrap_or(arg);
        if !digits.len().is_multiple_of(2) {
            return Err(CliError::Usage(format!(
                "'{arg}': odd number of hex digits"
            )));
        }
        (0..digits.len())
            .step_by(2)
            .map(|i| {
                digits
                    .get(i..i + 2)
                    .and_then(|d| u8::from_str_radix(d, 16).ok())
                    .ok_or_else(|| CliError::Usage(format!("'{arg}': not hex (--hex is given)")))
            })
            .collect()
    }
}

/// Lowercase hex.
pub fn hex(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() * 2);
    for x in b {
        s.push_str(&format!("{x:02x}"));
    }
    s
}

/// Printable ASCII as is (`\` doubled), other bytes as `\xNN`.
pub fn escape(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len());
    for &x in b {
        match x {
            b'\\' => s.push_str("\\\\"),
            0x20..=0x7e => s.push(x as char),
            _ => s.push_str(&format!("\\x{x:02x}")),
        }
    }
    s
}

/// An engine error as JSON: corruption with its file, offset and what.
pub fn error_json(e: &shale::Error) -> Value {
    match e {
        shale::Error::Corruption { file, offset, what } => {
            json!({"kind": "corruption", "file": file, "offset": offset, "what": what})
        }
        other => json!({"kind": "error", "message": other.to_string()}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_hex_round_trip() {
        assert_eq!(escape(b"a\\b\x00\xff~"), "a\\\\b\\x00\\xff~");
        let r = Render { hex: true };
        assert_eq!(r.bytes(b"\x01\xab"), "01ab");
        assert_eq!(r.parse("0x01ab").unwrap(), b"\x01\xab");
        assert!(r.parse("abc").is_err());
        assert!(r.parse("zz").is_err());
        assert_eq!(Render { hex: false }.parse("k\\x").unwrap(), b"k\\x");
    }
}
