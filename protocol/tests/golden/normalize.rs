//! The differences between a fixture frame and its re-encoding that the crate makes on purpose,
//! and the comparison that tolerates those and nothing else.
//!
//! Invariant: a difference is accepted only when every differing window is a null length (-1)
//! written back as 0, the decoded value holds at least as many empty vectors or empty ACL-id
//! strings as there are such windows, and the re-encoding decodes to the same value.

use shepherd_protocol::{MultiResult, Request, Response};

use crate::fixture::hex;

/// A difference between fixture and re-encoding that the crate produces deliberately.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Normalization {
    /// A null vector (count -1) is decoded as an empty `Vec` (documented on `impl Codec for
    /// Vec<T>`): the re-encoding writes count 0.
    NullVectorAsEmpty,
    /// A null ustring in an ACL `Id` (or a whoAmI `ClientInfo`) is decoded as "" (documented on
    /// `Id`): kazoo writes the `auth` ACL's empty id as null.
    NullIdStringAsEmpty,
}

/// What checking one frame established.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// Re-encoded byte for byte.
    Exact,
    /// Re-encoded with the listed, explained differences only.
    Normalized(Vec<Normalization>),
    /// A request whose opcode the crate refuses (the header still round-trips); allowed only
    /// where the fixture says the opcode is unknown or invalid.
    RejectedOpcode(i32),
}

/// Position of the first differing byte, with both sides around it, for failure messages.
pub(crate) fn diff(expected: &[u8], actual: &[u8]) -> String {
    let pos = expected
        .iter()
        .zip(actual)
        .position(|(a, b)| a != b)
        .unwrap_or(expected.len().min(actual.len()));
    let from = pos.saturating_sub(8);
    let window = |b: &[u8]| hex(&b[from.min(b.len())..(pos + 16).min(b.len())]);
    format!(
        "first difference at byte {pos} (hex offset {}); lengths fixture {} / re-encoded {}\n    \
         fixture    [{from}..]: {}\n    re-encoded [{from}..]: {}",
        pos * 2,
        expected.len(),
        actual.len(),
        window(expected),
        window(actual),
    )
}

/// The 4-byte-aligned (relative to the first difference) windows where the fixture has a null
/// length (-1) and the re-encoding a zero length; `None` if any difference is of another sort.
pub(crate) fn null_to_zero_windows(expected: &[u8], actual: &[u8]) -> Option<usize> {
    if expected.len() != actual.len() {
        return None;
    }
    let mut windows = 0;
    let mut i = 0;
    while i < expected.len() {
        if expected[i] == actual[i] {
            i += 1;
            continue;
        }
        // A -1 length differs from 0 in all four bytes, so the window starts here.
        let end = i + 4;
        if end > expected.len() || expected[i..end] != [0xff; 4] || actual[i..end] != [0; 4] {
            return None;
        }
        windows += 1;
        i = end;
    }
    Some(windows)
}

/// Counts what in a decoded value could be the result of each normalization: empty vectors and
/// empty strings in ACL ids.
#[derive(Default)]
pub(crate) struct Normalizable {
    empty_vectors: usize,
    empty_id_strings: usize,
}

impl Normalizable {
    pub(crate) fn acl(&mut self, acl: &[shepherd_protocol::Acl]) {
        if acl.is_empty() {
            self.empty_vectors += 1;
        }
        for entry in acl {
            self.empty_id_strings += usize::from(entry.id.scheme.is_empty());
            self.empty_id_strings += usize::from(entry.id.id.is_empty());
        }
    }

    pub(crate) fn strings(&mut self, list: &[String]) {
        self.empty_vectors += usize::from(list.is_empty());
    }

    pub(crate) fn request(&mut self, request: &Request) {
        use shepherd_protocol::MultiOp;
        match request {
            Request::Create(r) | Request::Create2(r) | Request::CreateContainer(r) => {
                self.acl(&r.acl)
            }
            Request::CreateTTL(r) => self.acl(&r.acl),
            Request::SetACL(r) => self.acl(&r.acl),
            Request::SetWatches(w) => {
                for list in [&w.data_watches, &w.exist_watches, &w.child_watches] {
                    self.strings(list);
                }
            }
            Request::SetWatches2(w) => {
                for list in [
                    &w.data_watches,
                    &w.exist_watches,
                    &w.child_watches,
                    &w.persistent_watches,
                    &w.persistent_recursive_watches,
                ] {
                    self.strings(list);
                }
            }
            Request::Multi(m) | Request::MultiRead(m) => {
                for op in &m.ops {
                    match op {
                        MultiOp::Create(r) | MultiOp::Create2(r) | MultiOp::CreateContainer(r) => {
                            self.acl(&r.acl)
                        }
                        MultiOp::CreateTTL(r) => self.acl(&r.acl),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }

    pub(crate) fn response(&mut self, response: &Response) {
        match response {
            Response::GetACL(r) => self.acl(&r.acl),
            Response::GetChildren(r) => self.strings(&r.children),
            Response::GetChildren2(r) => self.strings(&r.children),
            Response::GetEphemerals(r) => self.strings(&r.ephemerals),
            Response::WhoAmI(r) => {
                self.empty_vectors += usize::from(r.client_info.is_empty());
                for info in &r.client_info {
                    self.empty_id_strings += usize::from(info.auth_scheme.is_empty());
                    self.empty_id_strings += usize::from(info.user.is_empty());
                }
            }
            Response::Multi(m) | Response::MultiRead(m) => {
                for result in &m.results {
                    if let MultiResult::GetChildren(names) = result {
                        self.strings(names);
                    }
                }
            }
            _ => {}
        }
    }

    /// Attributes `windows` null-to-zero differences to the normalizations this value allows,
    /// or says why it cannot.
    pub(crate) fn explain(&self, windows: usize) -> Result<Vec<Normalization>, String> {
        if windows > self.empty_vectors + self.empty_id_strings {
            return Err(format!(
                "{windows} null lengths became 0, but the decoded value has only {} empty \
                 vectors and {} empty ACL-id strings",
                self.empty_vectors, self.empty_id_strings
            ));
        }
        // Which one it was cannot be told from the decoded value when both are present; ids
        // are the documented case for kazoo, so they are attributed first.
        let ids = windows.min(self.empty_id_strings);
        let mut out = vec![Normalization::NullIdStringAsEmpty; ids];
        out.extend(vec![Normalization::NullVectorAsEmpty; windows - ids]);
        Ok(out)
    }
}

/// Compares a re-encoding with the fixture frame, accepting only explained normalizations.
///
/// `redecode` decodes the re-encoded frame again and says whether it equals the first decoding,
/// so that a tolerated difference is proven to be invisible to the decoder.
pub(crate) fn compare(
    expected: &[u8],
    actual: &[u8],
    normalizable: &Normalizable,
    redecode: impl FnOnce(&[u8]) -> bool,
) -> Result<Outcome, String> {
    if expected == actual {
        return Ok(Outcome::Exact);
    }
    let Some(windows) = null_to_zero_windows(expected, actual) else {
        return Err(format!("re-encoding differs: {}", diff(expected, actual)));
    };
    let explained = normalizable
        .explain(windows)
        .map_err(|e| format!("{e}: {}", diff(expected, actual)))?;
    if !redecode(&actual[4..]) {
        return Err(format!(
            "normalized re-encoding decodes to a different value: {}",
            diff(expected, actual)
        ));
    }
    Ok(Outcome::Normalized(explained))
}
