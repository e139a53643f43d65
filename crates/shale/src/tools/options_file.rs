//! [`OptionsFile`]: an `OPTIONS-NNNNNN` file parsed into its sections
//! (docs/FORMAT.md, OPTIONS): `# comment` lines, `[section]` headers and
//! `name=value` lines; blank lines are ignored.
//!
//! Anything else (a line before the first section, a line without `=`, a
//! name given twice in a section, a file over 1 MiB) is `Corruption` naming
//! the file and the line's byte offset.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::fs::default_fs;
use crate::version::filename::{parse_file_name, FileType};

/// Largest OPTIONS file read (the engine writes a few KiB).
const MAX_OPTIONS_FILE: u64 = 1 << 20;

/// One `[section]` of an OPTIONS file, its lines in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionsSection {
    /// The text between the brackets, e.g. `CFOptions "default"`.
    pub name: String,
    /// `(name, value)` pairs.
    pub entries: Vec<(String, String)>,
}

/// A parsed OPTIONS file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionsFile {
    /// The sections in file order.
    pub sections: Vec<OptionsSection>,
}

impl OptionsFile {
    /// Reads and parses the file at `path`.
    pub fn read(path: &Path) -> Result<OptionsFile> {
        let fs = default_fs();
        let name = path.display().to_string();
        if fs.file_size(path)? > MAX_OPTIONS_FILE {
            return Err(Error::corruption(
                name,
                0,
                format!("OPTIONS file larger than {MAX_OPTIONS_FILE} bytes"),
            ));
        }
        let bytes = fs.read_all(path)?;
        let text = std::str::from_utf8(&bytes).map_err(|e| {
            Error::corruption(
                name.as_str(),
                e.valid_up_to() as u64,
                "OPTIONS file is not UTF-8",
            )
        })?;
        Self::parse(text, &name)
    }

    /// Parses `text`; errors name `file`.
    pub fn parse(text: &str, file: &str) -> Result<OptionsFile> {
        let mut sections: Vec<OptionsSection> = Vec::new();
        let mut offset = 0u64;
        for raw in text.split_inclusive('\n') {
            let line = raw.trim();
            let bad = |what: &str| Error::corruption(file, offset, what);
            if line.is_empty() || line.starts_with('#') {
            } else if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                sections.push(OptionsSection {
                    name: name.to_string(),
                    entries: Vec::new(),
                });
            } else {
                let (k, v) = line
                    .split_once('=')
                    .ok_or_else(|| bad("line is neither [section] nor name=value"))?;
                let s = sections
                    .last_mut()
                    .ok_or_else(|| bad("name=value before the first [section]"))?;
                let k = k.trim();
                if s.entries.iter().any(|(n, _)| n == k) {
                    return Err(bad(&format!("{k} given twice in [{}]", s.name)));
                }
                s.entries.push((k.to_string(), v.trim().to_string()));
            }
            offset += raw.len() as u64;
        }
        Ok(OptionsFile { sections })
    }

    /// The value of `name` in `section`, if present.
    pub fn get(&self, section: &str, name: &str) -> Option<&str> {
        self.sections
            .iter()
            .find(|s| s.name == section)?
            .entries
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The newest `OPTIONS-NNNNNN` file of the DB in `dir`.
    pub fn latest_in(dir: &Path) -> Result<PathBuf> {
        let newest = default_fs()
            .list(dir)?
            .into_iter()
            .filter_map(|n| match parse_file_name(&n) {
                Some((FileType::Options, num)) => Some((num, n)),
                _ => None,
            })
            .max();
        match newest {
            Some((_, n)) => Ok(dir.join(n)),
            None => Err(Error::InvalidArgument(format!(
                "{}: no OPTIONS-NNNNNN file",
                dir.display()
            ))),
        }
    }
}

#[cfg(test)]
mod tests;
