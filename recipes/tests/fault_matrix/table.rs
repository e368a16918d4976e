//! The case table: one row per lock type (strategy, half), the steps of acquiring, holding and
//! releasing, the faults, and which cells do not exist and why.
//!
//! Invariants: the table is data, so adding a lock adds a row and nothing else; a cell is
//! either run or carries the reason it does not apply ([`not_applicable`]), never silently
//! dropped; a case's id (`<lock>/<step>/<fault>`) names it everywhere (the filter, failures,
//! [`KNOWN_BUGS`]).

use shepherd_recipes::{LockKind, WaitStrategy};
use shepherd_server::Fault;

use crate::HELD_REPLY;

/// Every lock of a case lives under this path (each case has a server of its own).
pub const BASE: &str = "/lock";
/// [`LockKind::Ephemeral`]'s node on [`BASE`].
pub const EPHEMERAL_NODE: &str = "/lock/lock";

/// Cells that fail because of a recipe bug, with the reason: still run, shown as
/// `FAIL (known)`, and not failing the test. `(lock slug, step, fault, reason)`.
pub const KNOWN_BUGS: &[(&str, Step, FaultKind, &str)] = &[];

/// How a lock type's contenders talk to the server: what each step's request is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// One fixed ephemeral node: the create is the check (NodeExists while held), a waiter
    /// leaves an exists watch on the node, and its re-check after the wake is the create again.
    Fixed { node: &'static str },
    /// Ephemeral-sequential nodes in `dir`: one getChildren2 with watch on `dir` both lists and
    /// registers the wait; the re-check is the next getChildren2.
    Herd { dir: &'static str },
    /// Ephemeral-sequential nodes in `dir`: getChildren (no watch) lists, an exists watch on
    /// the blocking node registers the wait, the re-check is the next getChildren.
    Predecessor { dir: &'static str },
}

impl Shape {
    /// A prefix of the path of every lock node a contender creates (and of nothing else it
    /// names with a create, exists or delete).
    pub fn node_prefix(self) -> String {
        match self {
            Shape::Fixed { node } => node.to_owned(),
            Shape::Herd { dir } | Shape::Predecessor { dir } => format!("{dir}/"),
        }
    }
}

/// One row of the matrix: a lock type (strategy, half) and what it contends with.
#[derive(Clone, Copy)]
pub struct LockRow {
    /// For the table.
    pub name: &'static str,
    /// For case ids and [`KNOWN_BUGS`].
    pub slug: &'static str,
    /// What the faulted contender takes. Its rival is [`LockKind::exclusive`], the exclusive
    /// kind of the same lock: what the faulted contender waits behind on the acquire steps,
    /// and what waits behind it on the hold and release steps (a reader is faulted against a
    /// writer, so that the two must never hold together).
    pub kind: LockKind,
    /// Where this row's steps are hit.
    pub shape: Shape,
    /// What a contender of this row waits on while the rival holds (normally `shape`).
    pub waits_on: Shape,
    /// The steps hit a lock taken and released inside the acquisition (the semaphore's inner
    /// mutex): it never waits, no guard ever holds it, and its delete comes before the
    /// acquisition returns.
    pub inner: bool,
    /// Where the shape's steps happen, for the notes.
    pub layout: &'static str,
}

/// Every lock type, every strategy, both halves of every read/write lock.
pub fn rows() -> Vec<LockRow> {
    let row = |kind: LockKind, shape, layout| LockRow {
        name: kind.title(),
        slug: kind.as_str(),
        kind,
        shape,
        waits_on: shape,
        inner: false,
        layout,
    };
    let dir = Shape::Predecessor { dir: BASE };
    let herd = Shape::Herd { dir: BASE };
    use WaitStrategy::{Herd, Predecessor};
    vec![
        row(
            LockKind::Ephemeral,
            Shape::Fixed {
                node: EPHEMERAL_NODE,
            },
            "node `/lock/lock`",
        ),
        row(
            LockKind::Sequential(Herd),
            herd,
            "`/lock/<uuid>-lock-<seq>`",
        ),
        row(
            LockKind::Sequential(Predecessor),
            dir,
            "`/lock/<uuid>-lock-<seq>`",
        ),
        row(
            LockKind::WriteLock,
            dir,
            "`/lock/x-<session>-<nonce>-<seq>`",
        ),
        row(
            LockKind::SharedRead(Herd),
            herd,
            "`/lock/<uuid>-read-<seq>` against a writer",
        ),
        row(
            LockKind::SharedRead(Predecessor),
            dir,
            "`/lock/<uuid>-read-<seq>` against a writer",
        ),
        row(
            LockKind::SharedWrite(Herd),
            herd,
            "`/lock/<uuid>-write-<seq>`",
        ),
        row(
            LockKind::SharedWrite(Predecessor),
            dir,
            "`/lock/<uuid>-write-<seq>`",
        ),
        row(LockKind::Mutex, dir, "`/lock/_c_<uuid>-lock-<seq>`"),
        row(
            LockKind::SemaphoreMutex,
            Shape::Herd {
                dir: "/lock/leases",
            },
            "the lease `/lock/leases/_c_<uuid>-lease-<seq>` (the inner mutex in `/lock/locks` is the next row)",
        ),
        LockRow {
            name: "SemaphoreMutex inner mutex",
            slug: "semaphore-inner",
            waits_on: Shape::Herd {
                dir: "/lock/leases",
            },
            inner: true,
            ..row(
                LockKind::SemaphoreMutex,
                Shape::Predecessor { dir: "/lock/locks" },
                "`/lock/locks/_c_<uuid>-lock-<seq>`, taken before the lease and deleted once the lease is granted (delete: that delete, inside the acquisition)",
            )
        },
        row(
            LockKind::RwRead,
            dir,
            "`/lock/_c_<uuid>-__READ__<seq>` against a writer",
        ),
        row(LockKind::RwWrite, dir, "`/lock/_c_<uuid>-__WRIT__<seq>`"),
        row(
            LockKind::MultiLock,
            Shape::Predecessor { dir: "/lock/a" },
            "mutexes on `/lock/a` then `/lock/b`; steps are hit on `/lock/a` (release: its delete, the second one)",
        ),
    ]
}

/// A step of acquiring, holding or releasing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Step {
    /// The lock node's create.
    Create,
    /// The first look at the contenders (getChildren, or the herd's getChildren2).
    List,
    /// The request that registers the wait (exists with watch; the herd's getChildren2).
    Watch,
    /// The re-check after the watch fired.
    Wake,
    /// Holding the lock (no request of the recipe's own but the guard monitor's exists watch).
    Hold,
    /// The release's delete.
    Delete,
}

pub const STEPS: [Step; 6] = [
    Step::Create,
    Step::List,
    Step::Watch,
    Step::Wake,
    Step::Hold,
    Step::Delete,
];

impl Step {
    pub fn slug(self) -> &'static str {
        match self {
            Step::Create => "create",
            Step::List => "list",
            Step::Watch => "watch",
            Step::Wake => "wake",
            Step::Hold => "hold",
            Step::Delete => "delete",
        }
    }
}

/// A fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FaultKind {
    /// The connection drops before the request is applied (`close_connection` while holding).
    ConnLoss,
    /// The request is applied and its reply lost with the connection.
    LostReply,
    /// The session expires right after the request was applied (while holding: at once).
    Expiry,
    /// Another client deletes the lock node (while holding only).
    NodeDeleted,
}

pub const FAULTS: [FaultKind; 4] = [
    FaultKind::ConnLoss,
    FaultKind::LostReply,
    FaultKind::Expiry,
    FaultKind::NodeDeleted,
];

impl FaultKind {
    pub fn slug(self) -> &'static str {
        match self {
            FaultKind::ConnLoss => "conn-loss",
            FaultKind::LostReply => "lost-reply",
            FaultKind::Expiry => "expiry",
            FaultKind::NodeDeleted => "node-deleted",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            FaultKind::ConnLoss => "connection loss",
            FaultKind::LostReply => "lost reply",
            FaultKind::Expiry => "expiry",
            FaultKind::NodeDeleted => "node deleted",
        }
    }

    /// What the server does to the step's request.
    pub fn server_fault(self) -> Fault {
        match self {
            FaultKind::ConnLoss => Fault::DropBeforeApply,
            FaultKind::LostReply => Fault::ApplyThenDrop,
            FaultKind::Expiry => Fault::Delay(HELD_REPLY),
            FaultKind::NodeDeleted => unreachable!("node deletion is not a request fault"),
        }
    }
}

/// Why a cell does not exist, if it does not.
pub fn not_applicable(row: &LockRow, step: Step, fault: FaultKind) -> Option<&'static str> {
    match (row.shape, step, fault) {
        (_, Step::Hold, _) if row.inner => Some(
            "held only inside the acquisition (while waiting for a lease), by no guard: no lost() to check; its faults are the other cells of the row",
        ),
        (_, Step::Hold, _) => None,
        (_, _, FaultKind::NodeDeleted) => {
            Some("another client deleting the lock node matters only while it is held")
        }
        (_, Step::Watch | Step::Wake, _) if row.inner => {
            Some("never waits: every holder of a lease has already released the inner mutex")
        }
        (Shape::Fixed { .. }, Step::List, _) => Some(
            "no listing: the create itself is the check (NodeExists); the exists-with-watch that follows is the watch column",
        ),
        (Shape::Herd { .. }, Step::Watch, _) => Some(
            "merged with list: one getChildren2 with watch both lists the contenders and registers the wait",
        ),
        _ => None,
    }
}

/// The reason listed in [`KNOWN_BUGS`] for this cell, if any.
pub fn known_bug(slug: &str, step: Step, fault: FaultKind) -> Option<&'static str> {
    KNOWN_BUGS
        .iter()
        .find(|(s, st, f, _)| *s == slug && *st == step && *f == fault)
        .map(|(.., why)| *why)
}

/// A case's id: `<lock>/<step>/<fault>`, the slugs of its row, step and fault.
pub fn case_id(row: &LockRow, step: Step, fault: FaultKind) -> String {
    format!("{}/{}/{}", row.slug, step.slug(), fault.slug())
}
