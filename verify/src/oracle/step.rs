//! What a sequence is made of: [`Sequence`], [`Step`] and [`Action`], with the substitution of
//! the sequence's root into their paths and a short, readable rendering of each step.
//!
//! Invariants: a step's paths hold the placeholder [`ROOT`] where the run's root goes, so that
//! one sequence can run under a fresh root on every attempt; rendering never prints more than a
//! short prefix of a data buffer, so a near-limit node prints as its length.

use std::fmt;

use shepherd_protocol::{Acl, CreateRequest, CreateTTLRequest, MultiOp, Request, SetDataRequest};

/// The placeholder for the sequence's root in every generated path.
pub const ROOT: &str = "{root}";

/// One generated sequence: the sessions it opens and the steps they take, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sequence {
    /// The seed it was generated from.
    pub seed: u64,
    /// How many sessions (slots) it uses, 2 or 3.
    pub sessions: usize,
    /// The steps, in order.
    pub steps: Vec<Step>,
}

/// One step: an action by one session (slot).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// The slot acting, `0..sessions`.
    pub session: usize,
    /// What it does.
    pub action: Action,
}

/// What a session does in a step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Sends the request and reads its reply. auth goes under xid -4 and setWatches(2) under
    /// xid -8, as clients send them; a setWatches' `relative_zxid` is an offset from the
    /// sequence's start zxid, made absolute by the runner.
    Request(Request),
    /// Drops the connection and resumes the session on a new one (its id, password and the
    /// last zxid it saw), as a client does after a connection loss.
    Reconnect,
    /// Opens a second connection that tries to resume the session with a wrong password; the
    /// slot's own connection is left alone.
    BadPasswordReconnect,
    /// closeSession, then a fresh session in the same slot.
    CloseSession,
    /// exists with a watch on the path, then waits (bounded) for the server's reaper to delete
    /// it: a container that lost its last child, or a TTL node past its TTL.
    AwaitDeleted(String),
}

impl Step {
    /// The step with [`ROOT`] replaced by `root` in every path.
    pub fn rooted(&self, root: &str) -> Step {
        let fix = |p: &mut String| {
            if let Some(rest) = p.strip_prefix(ROOT) {
                *p = format!("{root}{rest}");
            }
        };
        let mut step = self.clone();
        match &mut step.action {
            Action::Request(request) => for_each_path(request, fix),
            Action::AwaitDeleted(path) => fix(path),
            Action::Reconnect | Action::BadPasswordReconnect | Action::CloseSession => {}
        }
        step
    }
}

/// Calls `f` on every path a request carries.
fn for_each_path(request: &mut Request, mut f: impl FnMut(&mut String)) {
    match request {
        Request::Create(r) | Request::Create2(r) | Request::CreateContainer(r) => f(&mut r.path),
        Request::CreateTTL(r) => f(&mut r.path),
        Request::Delete(r) => f(&mut r.path),
        Request::Exists(r)
        | Request::GetData(r)
        | Request::GetChildren(r)
        | Request::GetChildren2(r) => f(&mut r.path),
        Request::SetData(r) => f(&mut r.path),
        Request::GetACL(r)
        | Request::Sync(r)
        | Request::GetEphemerals(r)
        | Request::GetAllChildrenNumber(r) => f(&mut r.path),
        Request::SetACL(r) => f(&mut r.path),
        Request::Check(r) => f(&mut r.path),
        Request::CheckWatches(r) | Request::RemoveWatches(r) => f(&mut r.path),
        Request::AddWatch(r) => f(&mut r.path),
        Request::Multi(m) | Request::MultiRead(m) => {
            for op in &mut m.ops {
                match op {
                    MultiOp::Create(r) | MultiOp::Create2(r) | MultiOp::CreateContainer(r) => {
                        f(&mut r.path)
                    }
                    MultiOp::CreateTTL(r) => f(&mut r.path),
                    MultiOp::Delete(r) => f(&mut r.path),
                    MultiOp::SetData(r) => f(&mut r.path),
                    MultiOp::Check(r) => f(&mut r.path),
                    MultiOp::GetData(r) | MultiOp::GetChildren(r) => f(&mut r.path),
                }
            }
        }
        Request::SetWatches(w) => {
            for p in w
                .data_watches
                .iter_mut()
                .chain(&mut w.exist_watches)
                .chain(&mut w.child_watches)
            {
                f(p)
            }
        }
        Request::SetWatches2(w) => {
            for p in w
                .data_watches
                .iter_mut()
                .chain(&mut w.exist_watches)
                .chain(&mut w.child_watches)
                .chain(&mut w.persistent_watches)
                .chain(&mut w.persistent_recursive_watches)
            {
                f(p)
            }
        }
        Request::Ping
        | Request::Reconfig(_)
        | Request::DeleteContainer(_)
        | Request::Auth(_)
        | Request::Sasl(_)
        | Request::WhoAmI
        | Request::CreateSession
        | Request::CloseSession => {}
    }
}

/// A data buffer, short: the bytes when they are few and printable, else the length.
pub fn show_data(data: &Option<Vec<u8>>) -> String {
    match data {
        None => "null".into(),
        Some(d) if d.len() <= 24 && d.iter().all(|b| b.is_ascii_graphic() || *b == b' ') => {
            format!("{:?}", String::from_utf8_lossy(d))
        }
        Some(d) => format!("<{} bytes>", d.len()),
    }
}

/// An ACL list, short: `[31:world:anyone]`.
pub fn show_acl(acl: &[Acl]) -> String {
    let parts: Vec<String> = acl
        .iter()
        .map(|a| format!("{}:{}:{}", a.perms, a.id.scheme, a.id.id))
        .collect();
    format!("[{}]", parts.join(", "))
}

fn show_create(name: &str, r: &CreateRequest) -> String {
    format!(
        "{name} {:?} {} {} flags={}",
        r.path,
        show_data(&r.data),
        show_acl(&r.acl),
        r.flags
    )
}

fn show_create_ttl(r: &CreateTTLRequest) -> String {
    format!(
        "createTTL {:?} {} {} flags={} ttl={}",
        r.path,
        show_data(&r.data),
        show_acl(&r.acl),
        r.flags,
        r.ttl
    )
}

fn show_set_data(r: &SetDataRequest) -> String {
    format!(
        "setData {:?} {} v={}",
        r.path,
        show_data(&r.data),
        r.version
    )
}

fn show_multi_op(op: &MultiOp) -> String {
    match op {
        MultiOp::Create(r) => show_create("create", r),
        MultiOp::Create2(r) => show_create("create2", r),
        MultiOp::CreateContainer(r) => show_create("createContainer", r),
        MultiOp::CreateTTL(r) => show_create_ttl(r),
        MultiOp::Delete(r) => format!("delete {:?} v={}", r.path, r.version),
        MultiOp::SetData(r) => show_set_data(r),
        MultiOp::Check(r) => format!("check {:?} v={}", r.path, r.version),
        MultiOp::GetData(r) => format!("getData {:?}", r.path),
        MultiOp::GetChildren(r) => format!("getChildren {:?}", r.path),
    }
}

/// A request, short and readable.
pub fn show_request(request: &Request) -> String {
    match request {
        Request::Create(r) | Request::Create2(r) | Request::CreateContainer(r) => {
            show_create(&op_name(request), r)
        }
        Request::CreateTTL(r) => show_create_ttl(r),
        Request::Delete(r) => format!("delete {:?} v={}", r.path, r.version),
        Request::Exists(r)
        | Request::GetData(r)
        | Request::GetChildren(r)
        | Request::GetChildren2(r) => {
            format!("{} {:?} watch={}", op_name(request), r.path, r.watch)
        }
        Request::SetData(r) => show_set_data(r),
        Request::GetACL(r)
        | Request::Sync(r)
        | Request::GetEphemerals(r)
        | Request::GetAllChildrenNumber(r) => format!("{} {:?}", op_name(request), r.path),
        Request::SetACL(r) => format!("setACL {:?} {} v={}", r.path, show_acl(&r.acl), r.version),
        Request::Check(r) => format!("check {:?} v={}", r.path, r.version),
        Request::CheckWatches(r) | Request::RemoveWatches(r) => {
            format!("{} {:?} type={}", op_name(request), r.path, r.watcher_type)
        }
        Request::AddWatch(r) => format!("addWatch {:?} mode={}", r.path, r.mode),
        Request::Multi(m) | Request::MultiRead(m) => {
            let ops: Vec<String> = m.ops.iter().map(show_multi_op).collect();
            format!("{} [{}]", op_name(request), ops.join("; "))
        }
        Request::SetWatches(w) => format!(
            "setWatches since=start+{} data={:?} exist={:?} child={:?}",
            w.relative_zxid, w.data_watches, w.exist_watches, w.child_watches
        ),
        Request::SetWatches2(w) => format!(
            "setWatches2 since=start+{} data={:?} exist={:?} child={:?} persistent={:?} recursive={:?}",
            w.relative_zxid,
            w.data_watches,
            w.exist_watches,
            w.child_watches,
            w.persistent_watches,
            w.persistent_recursive_watches
        ),
        Request::Auth(a) => format!("auth {:?} {}", a.scheme, show_data(&a.auth)),
        Request::Sasl(t) => format!("sasl {}", show_data(&t.token)),
        Request::Reconfig(r) => format!(
            "reconfig joining={:?} leaving={:?} members={:?} config={}",
            r.joining_servers, r.leaving_servers, r.new_members, r.cur_config_id
        ),
        other => op_name(other).to_string(),
    }
}

/// The operation's name as ZooKeeper's `OpCode` spells it, first letter lower case.
pub fn op_name(request: &Request) -> String {
    let name = request.op_code().name();
    let mut chars = name.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "s{}: ", self.session)?;
        match &self.action {
            Action::Request(r) => f.write_str(&show_request(r)),
            Action::Reconnect => f.write_str("reconnect (resume the session on a new connection)"),
            Action::BadPasswordReconnect => f.write_str(
                "drop the connection, resume with a wrong password, then with the right one",
            ),
            Action::CloseSession => f.write_str("closeSession, then a new session"),
            Action::AwaitDeleted(path) => write!(f, "await the reaper deleting {path:?}"),
        }
    }
}
