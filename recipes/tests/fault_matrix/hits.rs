//! Where a case's fault hits, read from the server: the fault rule that catches one step's
//! request of one contender, and how the server shows that a contender is waiting.
//!
//! Invariant: a rule names an opcode and a path prefix that only the step's request of the
//! row's lock matches (the case adds the session), so it fires exactly once; "waiting" is read
//! from the server's watch table, so a case never guesses from timing that a contender queued.

use shepherd_protocol::OpCode;
use shepherd_server::core::{Core, WatchKind};
use shepherd_server::{Fault, FaultRule};

use crate::table::{Shape, Step};

/// The rule that hits `step`'s request of one contender (session not set yet). `blocker`: the
/// node the contender waits behind.
pub fn step_rule(shape: Shape, step: Step, fault: Fault, blocker: &str) -> FaultRule {
    let rule = FaultRule::new(fault);
    match (shape, step) {
        (_, Step::Create) => rule.opcode(OpCode::Create).path_prefix(shape.node_prefix()),
        (Shape::Fixed { node }, Step::Watch) => rule.opcode(OpCode::Exists).path_prefix(node),
        (Shape::Fixed { node }, Step::Wake) => rule.opcode(OpCode::Create).path_prefix(node),
        (Shape::Herd { dir }, Step::List | Step::Watch | Step::Wake) => {
            rule.opcode(OpCode::GetChildren2).path_prefix(dir)
        }
        (Shape::Predecessor { dir }, Step::List | Step::Wake) => {
            rule.opcode(OpCode::GetChildren).path_prefix(dir)
        }
        (Shape::Predecessor { .. }, Step::Watch) => {
            rule.opcode(OpCode::Exists).path_prefix(blocker)
        }
        (_, Step::Hold) => rule.opcode(OpCode::Exists).path_prefix(shape.node_prefix()),
        (_, Step::Delete) => rule.opcode(OpCode::Delete).path_prefix(shape.node_prefix()),
        (Shape::Fixed { .. }, Step::List) => unreachable!("not applicable"),
    }
}

/// Whether `session` is waiting: its current connection has the watch the shape waits on.
pub fn waiting(core: &Core, session: i64, shape: Shape, blocker: &str) -> bool {
    let Some(conn) = core.session_connection(session) else {
        return false;
    };
    core.dump_watches().iter().any(|w| {
        w.conn == conn
            && match shape {
                Shape::Fixed { node } => w.path == node && w.kind == WatchKind::Data,
                Shape::Herd { dir } => w.path == dir && w.kind == WatchKind::Child,
                Shape::Predecessor { .. } => w.path == blocker && w.kind == WatchKind::Data,
            }
    })
}
