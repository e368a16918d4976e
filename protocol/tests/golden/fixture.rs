//! The `.frames` fixtures: their line format (see `README.md` beside them), parsed into frames
//! with their direction, kind and opcode, and what their comments say about refused opcodes.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Direction of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Dir {
    C2s,
    S2c,
}

/// The `kind` column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Kind {
    Connect,
    Request,
    Reply,
    Event,
}

/// One frame line of a `.frames` file.
pub(crate) struct FrameLine {
    pub(crate) file: String,
    pub(crate) line: usize,
    pub(crate) dir: Dir,
    pub(crate) kind: Kind,
    /// `None` for `-`.
    pub(crate) op: Option<i32>,
    /// The whole frame, length prefix included.
    pub(crate) frame: Vec<u8>,
}

impl FrameLine {
    pub(crate) fn at(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }
}

/// A parsed fixture: its comment lines (without `#`) and its frames.
pub(crate) struct Fixture {
    pub(crate) name: String,
    pub(crate) comments: Vec<String>,
    pub(crate) frames: Vec<FrameLine>,
}

pub(crate) fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

pub(crate) fn unhex(s: &str) -> Result<Vec<u8>, String> {
    if s.len() % 2 != 0 {
        return Err(format!("odd hex length {}", s.len()));
    }
    s.as_bytes()
        .chunks(2)
        .map(|pair| {
            let digit = |c: u8| match c {
                b'0'..=b'9' => Ok(c - b'0'),
                b'a'..=b'f' => Ok(c - b'a' + 10),
                _ => Err(format!("bad hex digit {:?}", c as char)),
            };
            Ok(digit(pair[0])? << 4 | digit(pair[1])?)
        })
        .collect()
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

pub(crate) fn load(path: &Path) -> Fixture {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut fixture = Fixture {
        name: name.clone(),
        comments: Vec::new(),
        frames: Vec::new(),
    };
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let raw = raw.trim();
        if raw.is_empty() {
            continue;
        }
        if let Some(comment) = raw.strip_prefix('#') {
            fixture.comments.push(comment.trim().to_owned());
            continue;
        }
        let fields: Vec<&str> = raw.split_whitespace().collect();
        let [dir, kind, op, hex] = fields[..] else {
            panic!("{name}:{line}: expected 4 fields, got {}", fields.len());
        };
        let dir = match dir {
            "c2s" => Dir::C2s,
            "s2c" => Dir::S2c,
            other => panic!("{name}:{line}: bad dir {other:?}"),
        };
        let kind = match kind {
            "connect" => Kind::Connect,
            "request" => Kind::Request,
            "reply" => Kind::Reply,
            "event" => Kind::Event,
            other => panic!("{name}:{line}: bad kind {other:?}"),
        };
        let op = match op {
            "-" => None,
            n => Some(
                n.parse::<i32>()
                    .unwrap_or_else(|e| panic!("{name}:{line}: bad op {n:?}: {e}")),
            ),
        };
        let frame = unhex(hex).unwrap_or_else(|e| panic!("{name}:{line}: {e}"));
        fixture.frames.push(FrameLine {
            file: name.clone(),
            line,
            dir,
            kind,
            op,
            frame,
        });
    }
    fixture
}

/// Whether the fixture's comments call opcode `op` unknown or invalid: a comment line that says
/// "unknown" or "invalid" and names `op` within a few words after "op", "opcode" or "opcodes".
pub(crate) fn comments_call_invalid(comments: &[String], op: i32) -> bool {
    let wanted = op.to_string();
    comments.iter().any(|c| {
        let lower = c.to_lowercase();
        if !(lower.contains("unknown") || lower.contains("invalid")) {
            return false;
        }
        let words: Vec<&str> = lower
            .split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '-'))
            .filter(|w| !w.is_empty())
            .collect();
        words.iter().enumerate().any(|(i, w)| {
            matches!(*w, "op" | "opcode" | "opcodes")
                && words[i + 1..].iter().take(3).any(|n| *n == wanted)
        })
    })
}
