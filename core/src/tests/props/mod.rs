//! Property-based robustness of the core: no input makes it panic, and its invariants hold after
//! every call.
//!
//! A run is a random sequence of steps over a small path alphabet (`/a`..`/c/c/c`, the system
//! nodes, and invalid paths): connections opened and closed, handshakes (new sessions, resumes
//! with the right, a wrong or no password, both the 44- and 45-byte forms, a lastZxidSeen from
//! the future, garbage), every request type with odd flags, versions, TTLs, ACLs and xids,
//! well-formed and truncated or junk-extended payloads, raw bytes, fault-harness rejections,
//! create counters set near the 32-bit limit, time passing with or without a tick, and forced
//! expiry. Each call's actions are checked against what the reference promises:
//! * nothing is sent to a connection that is closed, or closed earlier in the same list, and a
//!   closed connection is forgotten by the core (docs/protocol.md §13.3);
//! * every payload decodes, and re-encodes to the same bytes: notifications with zxid -1 (docs/protocol.md §9.5),
//!   replies with the opcode of their request (a body exactly when err is 0, docs/protocol.md §4.2);
//! * a request's notifications precede its reply (docs/protocol.md §9.6), which comes last for its connection;
//! * the zxid moves by exactly one per write that is answered, failed or not, and one per
//!   createSession, closeSession, expiry and reap (docs/protocol.md §3.3); replies carry the last zxid, 0 for
//!   auth and sasl, -1 for refusals (docs/protocol.md §4.1);
//! * handshakes and refusals close exactly when docs/protocol.md §2.4, §4.1, §12.5 and §13.4 say so;
//! * reads, refusals and failed writes (a failed multi included) leave the tree as it was and
//!   notify no one; a successful write's reply shows the Stat now in the tree.
//!
//! And after every step the state is checked: numChildren matches the tree, node_count and the
//! approximate data size match dump_tree, every ephemeral belongs to a live session that lists
//! it, sessions and watches only point at open connections, no Stat zxid is ahead of the last
//! zxid, and nothing is due before the next deadline. From time to time (and at the end) a
//! super-user session walks the tree with getChildren2 and compares it with dump_tree.
//!
//! The parts: `requests.rs` and `steps.rs` generate a run, `model.rs` drives it, `calls.rs`
//! checks each call's actions, `invariants.rs` checks the state, and `expect.rs` holds the
//! reference's expectations that both checkers share.

mod calls;
mod durable;
mod expect;
mod invariants;
mod model;
mod requests;
mod steps;

use proptest::prelude::*;

use super::T0;
use model::Model;
use steps::{config, step};

/// The credential whose digest is configured as the super user.
const SUPER: &[u8] = b"super:secret";

/// How often the audit walks the tree.
const AUDIT_EVERY: usize = 50;

// 256 runs of up to 200 steps take about 3 s unoptimised; raise the count locally to hunt.

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_runs_keep_the_invariants(
        config in config(),
        steps in prop::collection::vec(step(), 1..200),
    ) {
        let n = steps.len();
        let mut model = Model::new(config);
        model.check_state();
        for (i, step) in steps.into_iter().enumerate() {
            model.run(step);
            if (i + 1) % AUDIT_EVERY == 0 {
                model.audit();
            }
        }
        model.audit();
        eprintln!("STATS steps={} zxid={} nodes={} sessions={} live={} conns={} watches={} notes={}",
            n, model.core.last_zxid(), model.core.node_count(), model.passwords.len(),
            model.core.sessions().len(), model.conns.len(), model.core.watch_count(),
            model.core.metrics().notifications_total());
    }
}
