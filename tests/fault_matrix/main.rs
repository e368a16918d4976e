//! The fault matrix: every lock recipe × every step of acquiring, holding and releasing × every
//! fault, each case against its own fresh embedded server, the cases run in parallel.
//!
//! The matrix is data: [`rows`] (one [`LockRow`] per lock type, strategy and half), [`STEPS`]
//! and [`FAULTS`]; [`not_applicable`] says which cells do not exist and why. Adding a lock adds
//! a row. The test prints the table at the end; with `SHEPHERD_WRITE_FAULT_MATRIX=1` it also
//! writes it to `docs/fault-matrix.md`. `SHEPHERD_FAULT_CASE=<substring>` runs only the cases
//! whose id (`<lock>/<step>/<fault>`) contains it.
//!
//! Each case checks:
//! * (a) no orphan: once every contender has released (or its session is gone), the lock
//!   folders hold no node of any contender's session (read from the server's tree);
//! * (b) never two holders: every contender counts itself into a shared counter when its
//!   acquire returns and out just before it releases (or when its loss is forced on it); the
//!   counter must never exceed one, and a waiter must still be waiting while the holder holds;
//! * (c) no hang: every await is bounded ([`WAIT`]) and a timed-out wait fails the case with a
//!   message naming lock × step × fault and what was awaited; a fresh contender must then take
//!   the lock (not wedged);
//! * (d) `lost()`: fires (with the right reason) on expiry or deletion of the node while
//!   holding, and does not fire after a mere reconnect (connection cut, or a lost reply, while
//!   holding: checked after the monitor's watch is back and a quiet period), nor for the
//!   unfaulted holder.
//!
//! Faults: connection loss is `Fault::DropBeforeApply` on the step's request (while holding:
//! `close_connection`); lost reply is `Fault::ApplyThenDrop` (while holding: the guard monitor's
//! exists-with-watch); expiry is `Fault::Delay` on the step's request (applied, reply held) then
//! `close_connection` + `expire_session` as soon as the rule fires, so the session ends right
//! after that request was applied and before the client hears of it (while holding:
//! `expire_session`); node deleted (holding only) is a delete by an admin client.

use std::fmt::Write as _;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex as StdMutex};
use std::time::{Duration, Instant};

use shepherd_client::Client;
use shepherd_protocol::OpCode;
use shepherd_recipes::{
    AnyGuard, Error as RecipeError, Guard, Lock, LockKind, LostReason, WaitStrategy,
};
use shepherd_server::core::{Core, NodeInfo, WatchKind};
use shepherd_server::{Fault, FaultId, FaultRule, Server, ServerHandle};
use tokio::sync::Semaphore;
use tokio::task::{JoinHandle, JoinSet};

// ---- Settings ------------------------------------------------------------------------------

/// The bound on every single wait for something that must happen.
const WAIT: Duration = Duration::from_secs(10);
/// The bound on a whole case (a backstop: every wait inside is bounded by [`WAIT`]).
const CASE_LIMIT: Duration = Duration::from_secs(40);
/// How long a holder must stay quiet (no `lost()`, no second holder) after a reconnect.
const QUIET: Duration = Duration::from_millis(300);
/// The session timeout every client asks for. Expiry is always forced, never waited for, so
/// this only has to be long enough not to expire anything by accident on a loaded machine.
const SESSION_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the reply of a request hit by an "expiry" fault is held (the session is expired and
/// the connection closed long before).
const HELD_REPLY: Duration = Duration::from_secs(120);
/// Cases in flight at once (each has its own server and three or four clients).
const PARALLEL: usize = 24;

/// Every lock of a case lives under this path (each case has a server of its own).
const BASE: &str = "/lock";
/// [`LockKind::Ephemeral`]'s node on [`BASE`].
const EPHEMERAL_NODE: &str = "/lock/lock";

/// Cells that fail because of a recipe bug, with the reason: still run, shown as
/// `FAIL (known)`, and not failing the test. `(lock slug, step, fault, reason)`.
const KNOWN_BUGS: &[(&str, Step, FaultKind, &str)] = &[];

// ---- The data: locks, steps, faults --------------------------------------------------------

/// Takes a lock of `kind` on [`BASE`] with a client, waiting as long as it takes.
async fn take(kind: LockKind, client: Client) -> shepherd_recipes::Result<AnyGuard> {
    kind.build(&client, BASE).acquire().await
}

/// How a lock type's contenders talk to the server: what each step's request is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
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
    fn node_prefix(self) -> String {
        match self {
            Shape::Fixed { node } => node.to_owned(),
            Shape::Herd { dir } | Shape::Predecessor { dir } => format!("{dir}/"),
        }
    }
}

/// One row of the matrix: a lock type (strategy, half) and what it contends with.
#[derive(Clone, Copy)]
struct LockRow {
    /// For the table.
    name: &'static str,
    /// For case ids and [`KNOWN_BUGS`].
    slug: &'static str,
    /// What the faulted contender takes. Its rival is [`LockKind::exclusive`], the exclusive
    /// kind of the same lock: what the faulted contender waits behind on the acquire steps,
    /// and what waits behind it on the hold and release steps (a reader is faulted against a
    /// writer, so that the two must never hold together).
    kind: LockKind,
    /// Where this row's steps are hit.
    shape: Shape,
    /// What a contender of this row waits on while the rival holds (normally `shape`).
    waits_on: Shape,
    /// The steps hit a lock taken and released inside the acquisition (the semaphore's inner
    /// mutex): it never waits, no guard ever holds it, and its delete comes before the
    /// acquisition returns.
    inner: bool,
    /// Where the shape's steps happen, for the notes.
    layout: &'static str,
}

/// Every lock type, every strategy, both halves of every read/write lock.
fn rows() -> Vec<LockRow> {
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
enum Step {
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

const STEPS: [Step; 6] = [
    Step::Create,
    Step::List,
    Step::Watch,
    Step::Wake,
    Step::Hold,
    Step::Delete,
];

impl Step {
    fn slug(self) -> &'static str {
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
enum FaultKind {
    /// The connection drops before the request is applied (`close_connection` while holding).
    ConnLoss,
    /// The request is applied and its reply lost with the connection.
    LostReply,
    /// The session expires right after the request was applied (while holding: at once).
    Expiry,
    /// Another client deletes the lock node (while holding only).
    NodeDeleted,
}

const FAULTS: [FaultKind; 4] = [
    FaultKind::ConnLoss,
    FaultKind::LostReply,
    FaultKind::Expiry,
    FaultKind::NodeDeleted,
];

impl FaultKind {
    fn slug(self) -> &'static str {
        match self {
            FaultKind::ConnLoss => "conn-loss",
            FaultKind::LostReply => "lost-reply",
            FaultKind::Expiry => "expiry",
            FaultKind::NodeDeleted => "node-deleted",
        }
    }

    fn title(self) -> &'static str {
        match self {
            FaultKind::ConnLoss => "connection loss",
            FaultKind::LostReply => "lost reply",
            FaultKind::Expiry => "expiry",
            FaultKind::NodeDeleted => "node deleted",
        }
    }

    /// What the server does to the step's request.
    fn server_fault(self) -> Fault {
        match self {
            FaultKind::ConnLoss => Fault::DropBeforeApply,
            FaultKind::LostReply => Fault::ApplyThenDrop,
            FaultKind::Expiry => Fault::Delay(HELD_REPLY),
            FaultKind::NodeDeleted => unreachable!("node deletion is not a request fault"),
        }
    }
}

/// Why a cell does not exist, if it does not.
fn not_applicable(row: &LockRow, step: Step, fault: FaultKind) -> Option<&'static str> {
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

/// The rule that hits `step`'s request of one contender (session not set yet). `blocker`: the
/// node the contender waits behind.
fn step_rule(shape: Shape, step: Step, fault: Fault, blocker: &str) -> FaultRule {
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
fn waiting(core: &Core, session: i64, shape: Shape, blocker: &str) -> bool {
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

// ---- Case machinery ------------------------------------------------------------------------

/// Awaits `fut`, or fails with a "hang" naming `what`.
async fn within<T>(what: &str, fut: impl Future<Output = T>) -> Result<T, String> {
    tokio::time::timeout(WAIT, fut)
        .await
        .map_err(|_| format!("HANG: nothing after {WAIT:?} waiting for {what}"))
}

/// The shared holder count: (b) never two holders.
#[derive(Default)]
struct Holders {
    count: AtomicUsize,
    violations: StdMutex<Vec<String>>,
}

impl Holders {
    fn enter(&self, who: &str) {
        let before = self.count.fetch_add(1, Ordering::SeqCst);
        if before != 0 {
            self.violations.lock().unwrap().push(format!(
                "TWO HOLDERS: {who} acquired while {before} other holder(s) held the lock"
            ));
        }
    }

    fn leave(&self) {
        self.count.fetch_sub(1, Ordering::SeqCst);
    }

    fn check(&self) -> Result<(), String> {
        let v = self.violations.lock().unwrap();
        if v.is_empty() {
            Ok(())
        } else {
            Err(v.join("; "))
        }
    }
}

/// A spawned task, aborted if the case ends before it.
struct Task<T>(JoinHandle<T>);

impl<T> Task<T> {
    async fn join(&mut self) -> Result<T, String> {
        (&mut self.0).await.map_err(|e| format!("task failed: {e}"))
    }

    fn is_finished(&self) -> bool {
        self.0.is_finished()
    }
}

impl<T> Drop for Task<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A contender taking the lock in the background, counting itself in as a holder.
fn contender(
    kind: LockKind,
    client: Client,
    holders: Arc<Holders>,
    who: &'static str,
) -> Task<shepherd_recipes::Result<AnyGuard>> {
    Task(tokio::spawn(async move {
        let taken = take(kind, client).await;
        if taken.is_ok() {
            holders.enter(who);
        }
        taken
    }))
}

async fn connect(server: &ServerHandle) -> Result<Client, String> {
    within(
        "a client to connect",
        Client::builder()
            .session_timeout(SESSION_TIMEOUT)
            .connect(&server.connect_string()),
    )
    .await?
    .map_err(|e| format!("connect: {e}"))
}

/// Ends a session right now: its connection is cut (so that no held reply can still reach
/// it) and the session expired before the client can reconnect.
fn expire_now(server: &ServerHandle, session: i64) {
    let _ = server.close_connection(session);
    server.expire_session(session);
}

async fn fired(server: &ServerHandle, id: FaultId, what: &str) -> Result<(), String> {
    if within(
        &format!("the fault on {what} to fire"),
        server.fault_fired(id),
    )
    .await?
    {
        Ok(())
    } else {
        Err(format!("the fault rule on {what} vanished before firing"))
    }
}

fn fired_once(server: &ServerHandle, id: FaultId, what: &str) -> Result<(), String> {
    match server.fault_fire_count(id) {
        Some(1) => Ok(()),
        n => Err(format!("the fault on {what} fired {n:?} times, not once")),
    }
}

/// The nodes under [`BASE`] owned by one of `sessions`, described.
fn nodes_of(tree: Vec<NodeInfo>, sessions: &[i64]) -> Vec<String> {
    let prefix = format!("{BASE}/");
    tree.into_iter()
        .filter(|n| n.path.starts_with(&prefix) && sessions.contains(&n.stat.ephemeral_owner))
        .map(|n| format!("{} (session 0x{:x})", n.path, n.stat.ephemeral_owner))
        .collect()
}

/// (a): waits until no lock node of these sessions is left; names the orphans otherwise.
async fn no_nodes_of(server: &ServerHandle, sessions: &[i64]) -> Result<(), String> {
    let gone = server.wait_for(|core| nodes_of(core.dump_tree(), sessions).is_empty());
    match tokio::time::timeout(WAIT, gone).await {
        Ok(()) => Ok(()),
        Err(_) => Err(format!(
            "ORPHAN: {:?} still there after {WAIT:?}",
            nodes_of(server.dump_tree(), sessions)
        )),
    }
}

/// The holder's guard must not have reported the lock lost.
fn not_lost(held: &AnyGuard, who: &str) -> Result<(), String> {
    match held.lost_reason() {
        None => Ok(()),
        Some(r) => Err(format!("SPURIOUS lost(): {who}'s guard reports {r:?}")),
    }
}

/// Releases a holder (counting it out first: its delete is what lets the next one in).
async fn release(holders: &Holders, held: AnyGuard, who: &str) -> Result<(), String> {
    not_lost(&held, who)?;
    holders.leave();
    within(&format!("{who}'s release"), held.release())
        .await?
        .map_err(|e| format!("{who}'s release failed: {e}"))
}

/// (c): a fresh contender takes the lock, so nothing was left wedged; then nothing of it is
/// left either.
async fn not_wedged(server: &ServerHandle, row: &LockRow, holders: &Holders) -> Result<(), String> {
    let c = connect(server).await?;
    let held = within(
        "a fresh contender C to take the lock afterwards",
        take(row.kind, c.clone()),
    )
    .await?
    .map_err(|e| format!("C's acquire failed: {e}"))?;
    holders.enter("C");
    release(holders, held, "C").await?;
    no_nodes_of(server, &[c.session_id()]).await?;
    let _ = tokio::time::timeout(WAIT, c.close()).await;
    Ok(())
}

/// Acquire steps: A holds the rival kind; B, of this row's kind, is faulted while it queues.
async fn waiter_case(
    server: &ServerHandle,
    row: &LockRow,
    step: Step,
    fault: FaultKind,
) -> Result<(), String> {
    let holders = Arc::new(Holders::default());
    let a = connect(server).await?;
    let b = connect(server).await?;
    let (a_sid, b_sid) = (a.session_id(), b.session_id());
    let a_held = within(
        "A to take the free lock",
        take(row.kind.exclusive(), a.clone()),
    )
    .await?
    .map_err(|e| format!("A's acquire failed: {e}"))?;
    holders.enter("A");
    let blocker = a_held.paths()[0].to_owned();
    let rule = step_rule(row.shape, step, fault.server_fault(), &blocker).session(b_sid);
    let what = format!("B's {} request", step.slug());

    let mut a_held = Some(a_held);
    // The re-check looks like the first look, and the inner mutex's delete comes only once A
    // has released: arm these rules once B is waiting, then release A.
    let late = step == Step::Wake || (row.inner && step == Step::Delete);
    let (mut b_task, fault_id) = if late {
        let b_task = contender(row.kind, b.clone(), holders.clone(), "B");
        within(
            "B to wait behind A (its watch registered)",
            server.wait_for(|core| waiting(core, b_sid, row.waits_on, &blocker)),
        )
        .await?;
        let id = server.add_fault(rule);
        release(&holders, a_held.take().expect("held"), "A").await?;
        (b_task, id)
    } else {
        let id = server.add_fault(rule);
        (contender(row.kind, b.clone(), holders.clone(), "B"), id)
    };
    fired(server, fault_id, &what).await?;
    if fault == FaultKind::Expiry {
        expire_now(server, b_sid);
    }

    let outcome = if let Some(a_held) = a_held.take() {
        if fault == FaultKind::Expiry {
            let outcome = within("B's acquire to fail after its expiry", b_task.join()).await??;
            release(&holders, a_held, "A").await?;
            outcome
        } else {
            within(
                "B to wait behind A again after the fault",
                server.wait_for(|core| waiting(core, b_sid, row.waits_on, &blocker)),
            )
            .await?;
            if b_task.is_finished() {
                return Err("B's acquire ended while A still held the lock".into());
            }
            release(&holders, a_held, "A").await?;
            within("B to take the lock A released", b_task.join()).await??
        }
    } else {
        within("B's acquire to end", b_task.join()).await??
    };
    match (fault, outcome) {
        (FaultKind::Expiry, Err(RecipeError::Client(e))) if e.is_session_ended() => {}
        (FaultKind::Expiry, Err(e)) => {
            return Err(format!(
                "B's acquire failed with {e:?}, not with the end of its session"
            ));
        }
        // Acquired just before the expiry (the inner mutex's delete comes after the lease is
        // granted): then the guard must report the loss.
        (FaultKind::Expiry, Ok(held)) => {
            let reason = within("B's lost() after its expiry", held.lost()).await?;
            if reason != LostReason::SessionExpired {
                return Err(format!("B's lost() said {reason:?} after its expiry"));
            }
            holders.leave();
            within("B's release of a lost lock", held.release())
                .await?
                .map_err(|e| format!("B's release of a lost lock failed: {e}"))?;
        }
        (_, Ok(held)) => release(&holders, held, "B").await?,
        (_, Err(e)) => return Err(format!("B's acquire failed: {e}")),
    }
    fired_once(server, fault_id, &what)?;
    no_nodes_of(server, &[a_sid, b_sid]).await?;
    holders.check()?;
    not_wedged(server, row, &holders).await?;
    holders.check()?;
    for c in [a, b] {
        let _ = tokio::time::timeout(WAIT, c.close()).await;
    }
    Ok(())
}

/// Hold and release steps: A holds this row's kind and is faulted; B (the rival kind) waits.
async fn holder_case(
    server: &ServerHandle,
    row: &LockRow,
    step: Step,
    fault: FaultKind,
) -> Result<(), String> {
    let holders = Arc::new(Holders::default());
    let admin = connect(server).await?;
    let a = connect(server).await?;
    let b = connect(server).await?;
    let (a_sid, b_sid) = (a.session_id(), b.session_id());
    let first_conn = server.session(a_sid).and_then(|s| s.conn);
    // The guard monitor's exists watch is sent as the lock is granted: arm before acquiring.
    let monitor_rule = (step == Step::Hold && fault == FaultKind::LostReply).then(|| {
        server.add_fault(step_rule(row.shape, Step::Hold, Fault::ApplyThenDrop, "").session(a_sid))
    });
    let a_held = within("A to take the free lock", take(row.kind, a.clone()))
        .await?
        .map_err(|e| format!("A's acquire failed: {e}"))?;
    holders.enter("A");
    let a_node = a_held.paths()[0].to_owned();
    let mut b_task = contender(row.kind.exclusive(), b.clone(), holders.clone(), "B");
    within(
        "B to wait behind A (its watch registered)",
        server.wait_for(|core| waiting(core, b_sid, row.waits_on, &a_node)),
    )
    .await?;

    // After a mere reconnect: the monitor's watch is back, A keeps the lock, B keeps waiting.
    let quiet = |a_held: &AnyGuard, b_task: &Task<_>| {
        if b_task.is_finished() {
            return Err("TWO HOLDERS: B's acquire ended while A still held the lock".to_string());
        }
        not_lost(a_held, "A (after a mere reconnect)")
    };
    let monitor_back = |core: &Core| {
        core.session_connection(a_sid)
            .is_some_and(|c| Some(c) != first_conn)
            && waiting(core, a_sid, Shape::Predecessor { dir: BASE }, &a_node)
    };
    match (step, fault) {
        (Step::Hold, FaultKind::ConnLoss) => {
            server
                .close_connection(a_sid)
                .map_err(|e| format!("close_connection: {e}"))?;
            within(
                "A to reconnect and its guard monitor to watch its node again",
                server.wait_for(monitor_back),
            )
            .await?;
            tokio::time::sleep(QUIET).await;
            quiet(&a_held, &b_task)?;
            release(&holders, a_held, "A").await?;
        }
        (Step::Hold, FaultKind::LostReply) => {
            let id = monitor_rule.expect("armed");
            fired(server, id, "A's guard monitor exists").await?;
            within(
                "A to reconnect and its guard monitor to watch its node again",
                server.wait_for(monitor_back),
            )
            .await?;
            tokio::time::sleep(QUIET).await;
            quiet(&a_held, &b_task)?;
            fired_once(server, id, "A's guard monitor exists")?;
            release(&holders, a_held, "A").await?;
        }
        (Step::Hold, FaultKind::Expiry | FaultKind::NodeDeleted) => {
            // A's hold ends here by fiat: B may take the lock from now on.
            holders.leave();
            let expected = if fault == FaultKind::Expiry {
                expire_now(server, a_sid);
                LostReason::SessionExpired
            } else {
                within(
                    "the admin's delete of A's node",
                    admin.delete(&a_node, None),
                )
                .await?
                .map_err(|e| format!("admin delete: {e}"))?;
                LostReason::NodeDeleted
            };
            let reason = within("A's lost() to fire", a_held.lost()).await?;
            if reason != expected {
                return Err(format!("A's lost() said {reason:?}, not {expected:?}"));
            }
            within("A's release of a lost lock", a_held.release())
                .await?
                .map_err(|e| format!("A's release of a lost lock failed: {e}"))?;
        }
        (Step::Delete, _) => {
            let rule = step_rule(row.shape, Step::Delete, fault.server_fault(), "").session(a_sid);
            let id = server.add_fault(rule);
            not_lost(&a_held, "A")?;
            holders.leave();
            let mut releasing = Task(tokio::spawn(a_held.release()));
            fired(server, id, "A's delete").await?;
            if fault == FaultKind::Expiry {
                expire_now(server, a_sid);
            }
            within("A's release", releasing.join())
                .await??
                .map_err(|e| format!("A's release failed: {e}"))?;
            fired_once(server, id, "A's delete")?;
        }
        _ => unreachable!("not a holder step"),
    }
    let b_held = within("B to take the lock after A", b_task.join())
        .await??
        .map_err(|e| format!("B's acquire failed: {e}"))?;
    release(&holders, b_held, "B").await?;
    no_nodes_of(server, &[a_sid, b_sid]).await?;
    holders.check()?;
    not_wedged(server, row, &holders).await?;
    holders.check()?;
    for c in [admin, a, b] {
        let _ = tokio::time::timeout(WAIT, c.close()).await;
    }
    Ok(())
}

async fn run_case(row: LockRow, step: Step, fault: FaultKind) -> Result<(), String> {
    let server = Server::builder()
        .start()
        .await
        .map_err(|e| format!("server start: {e}"))?;
    let result = match step {
        Step::Hold | Step::Delete if !row.inner => holder_case(&server, &row, step, fault).await,
        _ => waiter_case(&server, &row, step, fault).await,
    };
    let _ = tokio::time::timeout(WAIT, server.shutdown()).await;
    result
}

// ---- The matrix ----------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum Cell {
    Pass,
    NotApplicable(&'static str),
    Fail(String),
    KnownFail(&'static str, String),
    /// Listed in [`KNOWN_BUGS`] but passed.
    KnownPassed(&'static str),
    Skipped,
}

fn known_bug(slug: &str, step: Step, fault: FaultKind) -> Option<&'static str> {
    KNOWN_BUGS
        .iter()
        .find(|(s, st, f, _)| *s == slug && *st == step && *f == fault)
        .map(|(.., why)| *why)
}

fn case_id(row: &LockRow, step: Step, fault: FaultKind) -> String {
    format!("{}/{}/{}", row.slug, step.slug(), fault.slug())
}

fn panic_message(e: tokio::task::JoinError) -> String {
    match e.try_into_panic() {
        Ok(p) => p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_else(|| "a panic".to_owned()),
        Err(e) => e.to_string(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fault_matrix() {
    let started = Instant::now();
    let rows = rows();
    let filter = std::env::var("SHEPHERD_FAULT_CASE")
        .ok()
        .filter(|f| !f.is_empty());
    let permits = Arc::new(Semaphore::new(PARALLEL));
    let mut cells = vec![vec![Cell::Skipped; STEPS.len() * FAULTS.len()]; rows.len()];
    let mut cases = JoinSet::new();
    for (r, row) in rows.iter().enumerate() {
        for (s, step) in STEPS.into_iter().enumerate() {
            for (f, fault) in FAULTS.into_iter().enumerate() {
                let at = s * FAULTS.len() + f;
                if let Some(why) = not_applicable(row, step, fault) {
                    cells[r][at] = Cell::NotApplicable(why);
                    continue;
                }
                let id = case_id(row, step, fault);
                if filter.as_ref().is_some_and(|f| !id.contains(f.as_str())) {
                    continue;
                }
                let (row, permits) = (*row, permits.clone());
                cases.spawn(async move {
                    let _permit = permits.acquire_owned().await.expect("semaphore");
                    let t = Instant::now();
                    let result =
                        match tokio::time::timeout(CASE_LIMIT, run_case(row, step, fault)).await {
                            Ok(Ok(())) => Ok(()),
                            Ok(Err(e)) => Err(e),
                            Err(_) => Err(format!("HANG: the whole case took over {CASE_LIMIT:?}")),
                        };
                    (r, at, id, result, t.elapsed())
                });
            }
        }
    }
    let mut slowest = Vec::new();
    while let Some(joined) = cases.join_next().await {
        let (r, at, id, result, took) = match joined {
            Ok(done) => done,
            Err(e) => panic!(
                "a case task failed outside its own checks: {}",
                panic_message(e)
            ),
        };
        slowest.push((took, id.clone()));
        let (step, fault) = (STEPS[at / FAULTS.len()], FAULTS[at % FAULTS.len()]);
        let known = known_bug(rows[r].slug, step, fault);
        cells[r][at] = match (result, known) {
            (Ok(()), None) => Cell::Pass,
            (Ok(()), Some(why)) => Cell::KnownPassed(why),
            (Err(e), None) => Cell::Fail(format!("{id}: {e}")),
            (Err(e), Some(why)) => Cell::KnownFail(why, format!("{id}: {e}")),
        };
    }
    let elapsed = started.elapsed();
    slowest.sort();
    slowest.reverse();

    let table = markdown(&rows, &cells, elapsed, filter.is_some());
    println!("{table}");
    println!("slowest cases: {:?}", &slowest[..slowest.len().min(5)]);
    if filter.is_none() && std::env::var_os("SHEPHERD_WRITE_FAULT_MATRIX").is_some() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/fault-matrix.md");
        std::fs::write(path, &table).expect("write docs/fault-matrix.md");
        println!("wrote {path}");
    }
    let failures: Vec<&String> = cells
        .iter()
        .flatten()
        .filter_map(|c| match c {
            Cell::Fail(e) => Some(e),
            _ => None,
        })
        .collect();
    for c in cells.iter().flatten() {
        match c {
            Cell::KnownFail(why, e) => println!("known bug ({why}): {e}"),
            Cell::KnownPassed(why) => {
                println!("warning: a cell listed in KNOWN_BUGS passed ({why}); remove it")
            }
            _ => {}
        }
    }
    assert!(
        failures.is_empty(),
        "{} fault-matrix case(s) failed:\n{}",
        failures.len(),
        failures
            .iter()
            .map(|e| e.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The table and its notes, as markdown.
fn markdown(rows: &[LockRow], cells: &[Vec<Cell>], elapsed: Duration, partial: bool) -> String {
    let mut notes: Vec<&'static str> = Vec::new();
    let mut note = |why: &'static str| {
        let n = match notes.iter().position(|n| *n == why) {
            Some(i) => i,
            None => {
                notes.push(why);
                notes.len() - 1
            }
        };
        format!("n/a [{}]", n + 1)
    };
    let mut out = String::new();
    let _ = writeln!(out, "# Fault matrix of the lock recipes\n");
    let _ = writeln!(
        out,
        "Generated by `SHEPHERD_WRITE_FAULT_MATRIX=1 cargo test --test fault_matrix -- --nocapture` \
         (the single test `fault_matrix` in `tests/fault_matrix.rs` runs every cell, each against \
         its own embedded server; `SHEPHERD_FAULT_CASE=<lock>/<step>/<fault>` runs one cell, the \
         slugs being those in backticks below). Do not edit by hand.\n"
    );
    if partial {
        let _ = writeln!(out, "**Partial run** (`SHEPHERD_FAULT_CASE` set).\n");
    }
    let _ = writeln!(
        out,
        "Last run: {} cases (every cell that applies) in {:.1} s.\n",
        cells
            .iter()
            .flatten()
            .filter(|c| !matches!(c, Cell::NotApplicable(_) | Cell::Skipped))
            .count(),
        elapsed.as_secs_f64()
    );
    let _ = write!(out, "| lock | step |");
    for f in FAULTS {
        let _ = write!(out, " {} (`{}`) |", f.title(), f.slug());
    }
    let _ = write!(out, "\n|---|---|");
    for _ in FAULTS {
        let _ = write!(out, "---|");
    }
    out.push('\n');
    for (r, row) in rows.iter().enumerate() {
        for (s, step) in STEPS.into_iter().enumerate() {
            let _ = write!(out, "| {} (`{}`) | `{}` |", row.name, row.slug, step.slug());
            for f in 0..FAULTS.len() {
                let text = match &cells[r][s * FAULTS.len() + f] {
                    Cell::Pass => "pass".to_owned(),
                    Cell::NotApplicable(why) => note(why),
                    Cell::Fail(_) => "**FAIL**".to_owned(),
                    Cell::KnownFail(..) => "**FAIL (known)**".to_owned(),
                    Cell::KnownPassed(_) => "pass (listed in KNOWN_BUGS)".to_owned(),
                    Cell::Skipped => "not run".to_owned(),
                };
                let _ = write!(out, " {text} |");
            }
            out.push('\n');
        }
    }
    let _ = writeln!(out, "\n## Not applicable\n");
    for (i, why) in notes.iter().enumerate() {
        let _ = writeln!(out, "{}. {why}", i + 1);
    }
    let _ = writeln!(out, "\n## Known bugs\n");
    if KNOWN_BUGS.is_empty() {
        let _ = writeln!(out, "None listed in `KNOWN_BUGS`.");
    }
    for (slug, step, fault, why) in KNOWN_BUGS {
        let _ = writeln!(out, "* `{slug}/{}/{}`: {why}", step.slug(), fault.slug());
    }
    let failed: Vec<&String> = cells
        .iter()
        .flatten()
        .filter_map(|c| match c {
            Cell::Fail(e) | Cell::KnownFail(_, e) => Some(e),
            _ => None,
        })
        .collect();
    if !failed.is_empty() {
        let _ = writeln!(out, "\nFailures of this run:\n");
        for e in failed {
            let _ = writeln!(out, "* {e}");
        }
    }
    let _ = writeln!(out, "\n## Locks and where their steps are hit\n");
    for row in rows {
        let how = match row.shape {
            _ if row.inner => {
                "create: its sequential create; list: its getChildren; delete: its delete, whose \
                 rule is armed once B waits for its lease (after A's release lets B have the lease)"
            }
            Shape::Fixed { .. } => {
                "create: the create of the node; watch: exists with watch on it; wake: the create \
                 again after NodeDeleted; hold: the guard monitor's exists; delete: the release's delete"
            }
            Shape::Herd { .. } => {
                "create: the sequential create; list: the first getChildren2 with watch on the folder \
                 (also the watch); wake: the next getChildren2, its rule armed once the child watch \
                 is registered; hold: the guard monitor's exists; delete: the release's delete"
            }
            Shape::Predecessor { .. } => {
                "create: the sequential create; list: the first getChildren; watch: exists with \
                 watch on the blocking node; wake: the next getChildren, its rule armed once that \
                 watch is registered; hold: the guard monitor's exists; delete: the release's delete"
            }
        };
        let _ = writeln!(
            out,
            "* **{}** (`{}`), {}: {how}.",
            row.name, row.slug, row.layout
        );
    }
    let _ = writeln!(
        out,
        "\n## How a case runs\n\n\
         Each case has a fresh embedded server and clients with a 10 s session timeout; expiry is \
         always forced with `expire_session`, never waited for. Fault rules are restricted to the \
         faulted session, an opcode and a path prefix, and each must fire exactly once.\n\n\
         * **create, list, watch, wake**: A takes the lock's exclusive kind (a writer, for the read \
         rows); B, of the row's kind, queues behind it and its request of that step is faulted; then \
         A releases (for expiry: after B's acquire has failed; otherwise once B is waiting again on a \
         fresh connection). B must get the lock; after an expiry its acquire must fail with the \
         end of its session, or, for the one step after the grant (the inner mutex's delete), \
         return a guard whose `lost()` reports `SessionExpired`.\n\
         * **hold**: A holds the row's kind, B (the exclusive kind) waits. Connection loss: \
         `close_connection(A)`; lost reply: the guard monitor's exists-with-watch is applied and its \
         reply lost; in both, once A has reconnected and its monitor watches its node again, and \
         after a further {QUIET:?}, A's `lost()` must not have fired and B must still wait. Expiry: \
         `expire_session(A)`, node deleted: an admin client deletes A's node; `lost()` must fire with \
         `SessionExpired` / `NodeDeleted` and B then gets the lock.\n\
         * **delete**: A holds the row's kind, B waits; A's release's delete is faulted; the release \
         must succeed and B get the lock.\n\n\
         Faults on a request: connection loss = `Fault::DropBeforeApply`; lost reply = \
         `Fault::ApplyThenDrop`; expiry = `Fault::Delay` (applied, reply held) then, as the rule \
         fires, `close_connection` and `expire_session`: the session ends right after the request \
         was applied and before its reply.\n\n\
         Every case then checks: no node of A's or B's session is left under `/lock` (the server's \
         tree); the shared holder count never exceeded one; the unfaulted holder's `lost()` never \
         fired; a fresh contender C takes and releases the lock and leaves nothing. Every wait is \
         bounded ({WAIT:?}); a wait that runs out fails the case as a HANG, naming lock/step/fault \
         and what was awaited."
    );
    out
}
