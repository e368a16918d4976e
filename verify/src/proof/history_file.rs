//! A history written to a file for other tools, in the form its extension names: `.edn`,
//! Jepsen's (one map per line, for Knossos or Elle; [`to_edn`]), or `.json`, Porcupine's
//! key-value model (the register's operations; [`to_porcupine_json`]).
//!
//! Invariant: the formats are written by [`format`](crate::proof::format) alone; this file only
//! picks one and writes the file.

use std::io;
use std::path::Path;

use crate::proof::History;
use crate::proof::format::{to_edn, to_porcupine_json};

/// Writes `history` to `path`: `.edn` or `.json`.
///
/// # Errors
/// An unknown extension (`InvalidInput`), or the file's own error.
pub fn write(path: &Path, history: &History) -> io::Result<()> {
    let text = match path.extension().and_then(|e| e.to_str()) {
        Some("edn") => to_edn(history),
        Some("json") => to_porcupine_json(history),
        _ => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{}: a history file ends in .edn or .json", path.display()),
            ));
        }
    };
    std::fs::write(path, text)
}
