//! A request that a fault rule matched, applied (or not) as the rule says: rejected with an
//! error, dropped with the connection, applied with its reply lost, or delayed; or, test-only,
//! answered wrongly on purpose (`broken.rs`). What results is routed under the core lock, as
//! for any request, and turned into messages by the write path's one conversion
//! (`route/outbound.rs`), so that a close that owes a peer nothing aborts here as anywhere. The
//! one difference is the faulted connection's own end, said where it is made.

use tokio::time::Instant;

use crate::core::ConnId;
use crate::shell::controls::faults::Fault;
use crate::shell::net::conn::broken;
use crate::shell::route::outbound::{Outbound, from_actions};
use crate::shell::state::shared::Shared;

/// Applies (or not) one request under a fault, routing what results while the core lock is
/// held, as for any request. Returns true when the connection is now closing: its task must
/// read no further request.
pub(crate) fn apply_fault(shared: &Shared, conn: ConnId, payload: &[u8], fault: Fault) -> bool {
    shared.with_core(|core, router| {
        let now = shared.clock.now();
        match fault {
            Fault::Reject(code) => {
                router.route(core.reply_error(conn, payload, code, now));
                false
            }
            Fault::DropBeforeApply => {
                core.close_connection(conn);
                router.route_outbound(vec![(conn, Outbound::Close)]);
                true
            }
            Fault::ApplyThenDrop => {
                let mut routed: Vec<_> = from_actions(core.request(conn, payload, now)).collect();
                // The reply and everything after it for this connection go; the notifications
                // this request raised for it (before its reply) stay.
                if let Some(at) = reply_index(&routed, conn) {
                    let mut i = 0;
                    routed.retain(|(c, _)| {
                        i += 1;
                        *c != conn || i - 1 < at
                    });
                }
                // The difference from the plain path: whatever end the request itself gave this
                // connection, its end here is a Close, never an Abort, so that the notifications
                // kept above are written before the stream closes, as the lost reply's would
                // have been.
                routed
                    .retain(|(c, o)| *c != conn || !matches!(o, Outbound::Close | Outbound::Abort));
                routed.push((conn, Outbound::Close));
                core.close_connection(conn);
                router.route_outbound(routed);
                true
            }
            Fault::AckBeforeApply => {
                let payload = broken::ack_without_apply(payload);
                router.route(core.request(conn, payload.as_ref(), now));
                false
            }
            Fault::StaleRead(_) | Fault::HideLowestChild => {
                let mut routed: Vec<_> = from_actions(core.request(conn, payload, now)).collect();
                if let Some(at) = reply_index(&routed, conn) {
                    if let Outbound::Frame(reply) = &mut routed[at].1 {
                        let requester = core.connection_session(conn);
                        // Test-only and on small trees: a walk of the tree per lookup is fine.
                        let owner = |path: &str| {
                            core.dump_tree()
                                .into_iter()
                                .find(|n| n.path == path)
                                .map(|n| n.stat.ephemeral_owner)
                        };
                        *reply = broken::rewrite_reply(&fault, payload, reply, requester, &owner);
                    }
                }
                router.route_outbound(routed);
                false
            }
            Fault::Delay(delay) => {
                let mut routed: Vec<_> = from_actions(core.request(conn, payload, now)).collect();
                if let Some(at) = reply_index(&routed, conn) {
                    routed.insert(at, (conn, Outbound::Delay(Instant::now() + delay)));
                }
                router.route_outbound(routed);
                false
            }
        }
    })
}

/// Where this connection's reply is among the routed frames: its last frame that is not a
/// notification (xid -1), if any.
fn reply_index(routed: &[(ConnId, Outbound)], conn: ConnId) -> Option<usize> {
    routed.iter().rposition(|(c, o)| {
        *c == conn
            && matches!(o, Outbound::Frame(p) if p.get(..4) != Some(&(-1i32).to_be_bytes()[..]))
    })
}
