//! The differences from ZooKeeper 3.8 that `docs/compatibility.md` lists as deliberate, and what
//! the oracle does about each: never send what provokes it ([`forbidden`], checked before any
//! request leaves), or normalise it away (named in [`normalise`](super::normalise)).
//!
//! Invariant: every entry cites the compatibility document; nothing here hides a difference that
//! document does not list. The generator avoids these steps, and the runner refuses them
//! anyway, so that no shrinking or replay can send them to a real server.

use shepherd_protocol::{MultiOp, Request};

use super::step::{Action, Step};

/// A documented, deliberate difference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownDifference {
    /// A short name.
    pub name: &'static str,
    /// Where `docs/compatibility.md` says so.
    pub cites: &'static str,
    /// How the oracle keeps it out of the comparison.
    pub handling: Handling,
}

/// How a known difference is kept out of the comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handling {
    /// Never generated, and refused by the runner.
    NeverSent,
    /// Normalised (the rule of that name in `normalise`).
    Normalised(&'static str),
    /// The oracle cannot provoke it (it needs expiry, persistence or a configuration the
    /// oracle does not use).
    OutOfReach,
}

/// Every deliberate difference of `docs/compatibility.md`, "Where Shepherd knowingly differs".
pub const KNOWN: &[KnownDifference] = &[
    KnownDifference {
        name: "top-level check (13)",
        cites: "docs/compatibility.md: Top-level check (13) and a client's deleteContainer (20)",
        // ZooKeeper 3.8.0 never answers it: the session would hang until its timeout.
        handling: Handling::NeverSent,
    },
    KnownDifference {
        name: "deleteContainer (20) from a client",
        cites: "docs/compatibility.md: Top-level check (13) and a client's deleteContainer (20)",
        handling: Handling::NeverSent,
    },
    KnownDifference {
        name: "createTTL with a non-TTL mode and a negative TTL",
        cites: "docs/compatibility.md: createTTL (21) with a non-TTL mode and a negative TTL",
        // ZooKeeper 3.8.0 exits while applying it: it would end the whole run.
        handling: Handling::NeverSent,
    },
    KnownDifference {
        name: "unspecified orders",
        cites: "docs/compatibility.md: Unspecified orders are deterministic",
        handling: Handling::Normalised("UNORDERED_LISTS, SESSION_CLOSE_EVENTS"),
    },
    KnownDifference {
        name: "session passwords",
        cites: "docs/compatibility.md: Session passwords",
        handling: Handling::Normalised("PASSWORDS"),
    },
    KnownDifference {
        name: "a wrong password leaves the live connection alone",
        cites: "docs/compatibility.md: A wrong password leaves the live connection alone",
        // The oracle drops the session's own connection before it tries a wrong password.
        handling: Handling::OutOfReach,
    },
    KnownDifference {
        name: "characters outside the BMP",
        cites: "docs/compatibility.md: Characters outside the BMP are echoed as standard UTF-8",
        handling: Handling::Normalised("NON_BMP"),
    },
    KnownDifference {
        name: "persistence, replication, reconfig",
        cites: "docs/compatibility.md: Persistence and replication",
        handling: Handling::OutOfReach,
    },
    KnownDifference {
        name: "watches dropped before ephemerals on expiry",
        cites: "docs/compatibility.md: On expiry, the dying connection's watches are dropped",
        // The oracle closes sessions; it never lets one expire.
        handling: Handling::OutOfReach,
    },
    KnownDifference {
        name: "reaping pace",
        cites: "docs/compatibility.md: Container and TTL reaping pace",
        // One reapable node at a time: the pace never shows.
        handling: Handling::OutOfReach,
    },
    KnownDifference {
        name: "four-letter words",
        cites: "docs/compatibility.md: Four-letter words",
        handling: Handling::NeverSent,
    },
    KnownDifference {
        name: "quotas",
        cites: "docs/compatibility.md: Quotas",
        // Nothing is generated under /zookeeper.
        handling: Handling::NeverSent,
    },
    KnownDifference {
        name: "SASL, TLS, x509 and sasl schemes",
        cites: "docs/compatibility.md: SASL, TLS, read-only mode, local sessions",
        // Only a SASL packet is sent, which both answer as a server without SASL.
        handling: Handling::NeverSent,
    },
];

/// The known difference `step` would provoke, if any: such a step is never sent.
pub fn forbidden(step: &Step) -> Option<&'static KnownDifference> {
    let Action::Request(request) = &step.action else {
        return None;
    };
    let by_name = |name: &str| KNOWN.iter().find(|k| k.name == name);
    match request {
        Request::Check(_) => by_name("top-level check (13)"),
        Request::DeleteContainer(_) => by_name("deleteContainer (20) from a client"),
        Request::CreateTTL(r) if crashing_ttl(r.flags, r.ttl) => {
            by_name("createTTL with a non-TTL mode and a negative TTL")
        }
        Request::Multi(m) | Request::MultiRead(m)
            if m.ops
                .iter()
                .any(|op| matches!(op, MultiOp::CreateTTL(r) if crashing_ttl(r.flags, r.ttl))) =>
        {
            by_name("createTTL with a non-TTL mode and a negative TTL")
        }
        _ => None,
    }
}

/// A TTL create ZooKeeper 3.8.0 may die on: any mode but the two TTL modes, with a negative
/// TTL (whether the mode is valid or not: the whole family is kept away from the server).
pub fn crashing_ttl(flags: i32, ttl: i64) -> bool {
    !matches!(flags, 5 | 6) && ttl < 0
}
