//! Contender names: random ids, sequence suffixes, and the rule deciding who goes first.
//!
//! Invariants:
//! * a contender is any child whose name ends in the 10-digit sequence suffix ZooKeeper
//!   appends; other children (Curator's `locks`/`leases` folders, a fixed lock node) are
//!   ignored;
//! * contenders are ordered by that suffix alone, never by the whole name (ZOOKEEPER-2931:
//!   prefixes differ per client, so a plain string sort mixes up the queue), ties broken by
//!   name only to keep the order total;
//! * a contender is a *reader* when its name carries one of the read markers of the layouts
//!   below, and a *writer* (exclusive) otherwise, so that locks of other implementations on
//!   the same path exclude ours: ZooKeeper's `x-<session>-`, Curator's `-lock-`, `__WRIT__`
//!   and `-lease-`, kazoo's `__lock__` are writers; Curator's `__READ__`, kazoo's `__rlock__`
//!   and our `-read-` are readers.
//!
//! Sequence numbers past `i32::MAX` (ZooKeeper then prints a negative number) are not
//! supported: the counter would have to pass two billion creations under one lock path.

/// Markers that make a contender a reader.
const READ_MARKERS: [&str; 3] = ["__READ__", "__rlock__", "-read-"];

/// What a contender asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Shared with other readers.
    Read,
    /// Exclusive.
    Write,
}

/// The sequence suffix of a contender name, if it has one.
pub(crate) fn sequence(name: &str) -> Option<u32> {
    let digits = name.get(name.len().checked_sub(10)?..)?;
    if digits.bytes().all(|b| b.is_ascii_digit()) {
        digits.parse().ok()
    } else {
        None
    }
}

/// Whether a contender name is a reader's.
pub(crate) fn kind_of(name: &str) -> Kind {
    if READ_MARKERS.iter().any(|m| name.contains(m)) {
        Kind::Read
    } else {
        Kind::Write
    }
}

/// Where a contender stands among the children of its lock folder.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Nothing lower blocks us: the lock is ours.
    Acquired,
    /// Wait for this child (the highest blocking one below us) to go away.
    Wait(String),
    /// Our own node is not among the children.
    Missing,
}

/// The rule of every sequential recipe here: a writer waits for the last lower contender of
/// any kind, a reader for the last lower writer. `ignore` names a node that never blocks (the
/// owner's own write node when a [`crate::ReadWriteLock`] downgrades).
pub(crate) fn evaluate(
    children: &[String],
    own: &str,
    kind: Kind,
    ignore: Option<&str>,
) -> Verdict {
    let Some(own_seq) = sequence(own) else {
        return Verdict::Missing;
    };
    if !children.iter().any(|c| c == own) {
        return Verdict::Missing;
    }
    children
        .iter()
        .filter(|c| Some(c.as_str()) != ignore && c.as_str() != own)
        .filter_map(|c| sequence(c).map(|s| (s, c)))
        .filter(|(s, c)| (*s, c.as_str()) < (own_seq, own))
        .filter(|(_, c)| kind == Kind::Write || kind_of(c) == Kind::Write)
        .max()
        .map_or(Verdict::Acquired, |(_, c)| Verdict::Wait(c.clone()))
}

/// A random (version 4) UUID, `8-4-4-4-12` lowercase hex, drawn from the OS random source:
/// the unique part of every contender name, by which our node is found after a lost reply.
pub(crate) fn uuid_v4() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// `dir/name` (with `/` as the root).
pub(crate) fn join(dir: &str, name: &str) -> String {
    if dir == "/" {
        format!("/{name}")
    } else {
        format!("{dir}/{name}")
    }
}

/// The parent of a path (`/` for a top-level node).
pub(crate) fn parent(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &path[..i],
    }
}

/// The last component of a path.
pub(crate) fn base(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn sequences_and_kinds() {
        assert_eq!(sequence("_c_ab-lock-0000000012"), Some(12));
        assert_eq!(sequence("x-1-0000000003"), Some(3));
        assert_eq!(sequence("leases"), None);
        assert_eq!(sequence("lock"), None);
        assert_eq!(kind_of("abc__rlock__0000000001"), Kind::Read);
        assert_eq!(kind_of("_c_x-__READ__0000000001"), Kind::Read);
        assert_eq!(kind_of("abc__lock__0000000001"), Kind::Write);
        assert_eq!(kind_of("_c_x-__WRIT__0000000001"), Kind::Write);
    }

    #[test]
    fn sorts_by_suffix_not_name() {
        // ZOOKEEPER-2931: "x-9-…" sorts after "x-10-…" as a string, but not by sequence.
        let c = v(&["x-9-0000000001", "x-10-0000000002", "zz__lock__0000000000"]);
        assert_eq!(
            evaluate(&c, "x-9-0000000001", Kind::Write, None),
            Verdict::Wait("zz__lock__0000000000".into())
        );
        assert_eq!(
            evaluate(&c, "x-10-0000000002", Kind::Write, None),
            Verdict::Wait("x-9-0000000001".into())
        );
    }

    #[test]
    fn readers_wait_for_writers_only() {
        let c = v(&[
            "a-read-0000000001",
            "b-write-0000000002",
            "c-read-0000000003",
            "d-read-0000000004",
            "e-write-0000000005",
        ]);
        assert_eq!(
            evaluate(&c, "a-read-0000000001", Kind::Read, None),
            Verdict::Acquired
        );
        assert_eq!(
            evaluate(&c, "c-read-0000000003", Kind::Read, None),
            Verdict::Wait("b-write-0000000002".into())
        );
        assert_eq!(
            evaluate(&c, "d-read-0000000004", Kind::Read, None),
            Verdict::Wait("b-write-0000000002".into())
        );
        assert_eq!(
            evaluate(&c, "b-write-0000000002", Kind::Write, None),
            Verdict::Wait("a-read-0000000001".into())
        );
        assert_eq!(
            evaluate(&c, "e-write-0000000005", Kind::Write, None),
            Verdict::Wait("d-read-0000000004".into())
        );
        assert_eq!(
            evaluate(
                &c,
                "c-read-0000000003",
                Kind::Read,
                Some("b-write-0000000002")
            ),
            Verdict::Acquired
        );
        assert_eq!(
            evaluate(&c, "z-read-0000000009", Kind::Read, None),
            Verdict::Missing
        );
    }

    #[test]
    fn uuids_look_right_and_differ() {
        let (a, b) = (uuid_v4(), uuid_v4());
        assert_ne!(a, b);
        let parts: Vec<_> = a.split('-').map(str::len).collect();
        assert_eq!(parts, [8, 4, 4, 4, 12]);
        assert_eq!(&a[14..15], "4");
        assert!(matches!(&a[19..20], "8" | "9" | "a" | "b"));
    }
}
