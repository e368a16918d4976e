//! A history written to a file for other tools: EDN (one Jepsen-style map per line, for
//! Knossos or Elle) or JSON (an array of objects), chosen by the file's extension.
//!
//! Interim, as [`interim_check`](crate::proof::interim_check) is: the checkers' branch brings
//! its own formats, which replace this file when it is merged.
//!
//! Invariant: every event is written with every field; times are nanoseconds since the run
//! began, as Jepsen writes them.

use std::fmt::Write as _;
use std::io;
use std::path::Path;

use crate::proof::history::{Event, History, Value};

/// Writes `history` to `path`: `.edn` or `.json`.
///
/// # Errors
/// An unknown extension (`InvalidInput`), or the file's own error.
pub fn write(path: &Path, history: &History) -> io::Result<()> {
    let text = match path.extension().and_then(|e| e.to_str()) {
        Some("edn") => {
            history
                .events
                .iter()
                .map(edn)
                .collect::<Vec<_>>()
                .join("\n")
                + "\n"
        }
        Some("json") => format!(
            "[\n{}\n]\n",
            history
                .events
                .iter()
                .map(json)
                .collect::<Vec<_>>()
                .join(",\n")
        ),
        _ => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a history file ends in .edn or .json",
            ));
        }
    };
    std::fs::write(path, text)
}

/// A value in EDN and JSON alike (nil/null aside): numbers, vectors of numbers.
fn value(v: &Value, nil: &str) -> String {
    let list = |ns: &[i64], sep: &str| {
        let parts: Vec<String> = ns.iter().map(i64::to_string).collect();
        format!("[{}]", parts.join(sep))
    };
    match v {
        Value::Nil => nil.to_owned(),
        Value::Int(n) | Value::Token(n) => n.to_string(),
        Value::Ints(ns) => list(ns, if nil == "nil" { " " } else { "," }),
        Value::Cas(a, b) => list(&[*a, *b], if nil == "nil" { " " } else { "," }),
    }
}

fn edn(e: &Event) -> String {
    let mut out = format!(
        "{{:index {}, :type :{}, :process {}, :f :{}, :value {}, :time {}",
        e.index,
        e.kind.name(),
        e.process,
        e.f.name(),
        value(&e.value, "nil"),
        e.time.as_nanos()
    );
    if let Some(key) = &e.key {
        let _ = write!(out, ", :key {key:?}");
    }
    out.push('}');
    out
}

fn json(e: &Event) -> String {
    let key = match &e.key {
        Some(key) => format!("{key:?}"),
        None => "null".to_owned(),
    };
    format!(
        "{{\"index\": {}, \"type\": \"{}\", \"process\": {}, \"f\": \"{}\", \"key\": {key}, \"value\": {}, \"time\": {}}}",
        e.index,
        e.kind.name(),
        e.process,
        e.f.name(),
        value(&e.value, "null"),
        e.time.as_nanos()
    )
}
