//! The invariants: what a request may do to the tree, what the whole state must look like
//! after every step, and the audit that compares the tree a client reads with `dump_tree`.
//!
//! Invariants checked: reads, refusals and failed writes leave the tree as it was and notify no
//! one, and a success shows the Stat now in the tree; numChildren, node_count and the
//! approximate data size match the tree; every ephemeral belongs to a live session that lists
//! it; sessions and watches only point at open connections; no Stat zxid is ahead of the last
//! zxid; nothing is due before the next deadline.

use std::collections::BTreeMap;

use shepherd_protocol::{
    AuthPacket, MultiResult, PathWatchRequest, Reply, Request, Response, decode_request,
};

use super::SUPER;
use super::expect::{is_event, java_len, parent_of, takes_zxid};
use super::model::Model;
use crate::{Action, NodeInfo};

impl Model {
    /// What a request did to the tree, against what its reply says: reads, refusals and failed
    /// writes change nothing and notify no one; a success shows the state it produced.
    pub(super) fn check_effects(
        &self,
        before: &[NodeInfo],
        payload: &[u8],
        reply: &Reply,
        actions: &[Action],
    ) {
        let after = self.core.dump_tree();
        let Ok((_, Ok(request))) = decode_request(payload) else {
            assert_eq!(
                after, before,
                "a request that does not decode changed the tree"
            );
            return;
        };
        let write = takes_zxid(&request);
        let succeeded = match reply {
            Reply::Ok(_, Response::Multi(m)) => m
                .results
                .iter()
                .all(|r| !matches!(r, MultiResult::Error(_))),
            Reply::Ok(..) => true,
            Reply::Err(_) | Reply::Event(..) => false,
        };
        if !write {
            assert_eq!(after, before, "{request:?} changed the tree");
        } else if !succeeded {
            assert_eq!(after, before, "failed {request:?} changed the tree");
            let events = actions
                .iter()
                .filter(|a| matches!(a, Action::Send(_, p) if is_event(p)))
                .count();
            assert_eq!(events, 0, "failed {request:?} notified");
        }
        let Reply::Ok(h, body) = reply else {
            return;
        };
        // Reads look "" up as "/" (docs/protocol.md §6.1).
        let stat_of = |path: &str| {
            let path = if path.is_empty() { "/" } else { path };
            after
                .iter()
                .find(|n| n.path == path)
                .map(|n| n.stat.clone())
        };
        let path = match &request {
            Request::Delete(r) => r.path.as_str(),
            Request::SetData(r) => &r.path,
            Request::SetACL(r) => &r.path,
            Request::Exists(r)
            | Request::GetData(r)
            | Request::GetChildren(r)
            | Request::GetChildren2(r) => &r.path,
            Request::GetACL(r) => &r.path,
            _ => "",
        };
        match body {
            Response::Create(c) => {
                let stat = stat_of(&c.path).expect("created");
                assert_eq!(stat.czxid, h.zxid, "{request:?}");
            }
            Response::Create2(c) | Response::CreateContainer(c) | Response::CreateTTL(c) => {
                assert_eq!(stat_of(&c.path).as_ref(), Some(&c.stat), "{request:?}");
                let s = &c.stat;
                assert_eq!((s.czxid, s.mzxid, s.pzxid), (h.zxid, h.zxid, h.zxid));
                assert_eq!((s.version, s.aversion, s.num_children), (0, 0, 0));
            }
            Response::Delete => assert_eq!(stat_of(path), None, "{request:?}"),
            Response::SetData(s) => {
                assert_eq!(stat_of(path).as_ref(), Some(&s.stat), "{request:?}");
                assert_eq!(s.stat.mzxid, h.zxid);
            }
            Response::SetACL(s) | Response::Exists(s) => {
                assert_eq!(stat_of(path).as_ref(), Some(&s.stat), "{request:?}");
            }
            Response::GetData(d) => {
                assert_eq!(stat_of(path).as_ref(), Some(&d.stat), "{request:?}");
                let len = d.data.as_ref().map_or(0, Vec::len);
                assert_eq!(len, d.stat.data_length as usize);
            }
            Response::GetChildren2(c) => {
                assert_eq!(stat_of(path).as_ref(), Some(&c.stat), "{request:?}");
                assert_eq!(c.children.len(), c.stat.num_children as usize);
            }
            Response::GetACL(a) => {
                assert_eq!(stat_of(path).as_ref(), Some(&a.stat), "{request:?}");
                assert!(!a.acl.is_empty(), "a stored ACL is never empty");
            }
            _ => {}
        }
    }

    /// The invariants of the whole state.
    pub(super) fn check_state(&self) {
        let core = &self.core;
        let zxid = core.last_zxid();
        let nodes = core.dump_tree();
        let sessions = self.sessions();
        assert_eq!(nodes.len(), core.node_count());
        let by_path: BTreeMap<&str, _> = nodes.iter().map(|n| (n.path.as_str(), n)).collect();
        assert_eq!(by_path.len(), nodes.len(), "duplicate paths");
        let mut children: BTreeMap<&str, i32> = BTreeMap::new();
        let mut size = 0;
        let mut ephemerals = 0;
        for n in &nodes {
            if n.path != "/" {
                let parent = parent_of(&n.path);
                assert!(by_path.contains_key(parent), "orphan {}", n.path);
                *children.entry(parent).or_default() += 1;
            }
            let s = &n.stat;
            assert_eq!(s.data_length as usize, n.data_len, "{}", n.path);
            assert!(
                s.czxid <= zxid && s.mzxid <= zxid && s.pzxid <= zxid,
                "{} {s:?} ahead of {zxid}",
                n.path
            );
            size += java_len(&n.path) + n.data_len as u64;
            if s.ephemeral_owner != 0 {
                ephemerals += 1;
                let owner = sessions
                    .get(&s.ephemeral_owner)
                    .unwrap_or_else(|| panic!("{} owned by a dead session", n.path));
                assert!(owner.ephemerals.contains(&n.path), "{} not listed", n.path);
            }
        }
        for n in &nodes {
            let count = children.get(n.path.as_str()).copied().unwrap_or(0);
            assert_eq!(n.stat.num_children, count, "numChildren of {}", n.path);
            if n.stat.ephemeral_owner != 0 {
                assert_eq!(count, 0, "ephemeral {} has children", n.path);
            }
        }
        // The root's data counts twice (ZooKeeper's "" alias).
        size += by_path["/"].data_len as u64;
        assert_eq!(core.approximate_data_size(), size);
        assert_eq!(core.ephemerals_count(), ephemerals);
        let listed: usize = sessions.values().map(|s| s.ephemerals.len()).sum();
        assert_eq!(listed, ephemerals);
        for s in sessions.values() {
            for p in &s.ephemerals {
                assert_eq!(by_path[p.as_str()].stat.ephemeral_owner, s.id);
            }
            if let Some(conn) = s.conn {
                assert!(self.open.contains(&conn), "{s:?} bound to a closed conn");
                assert_eq!(core.connection_session(conn), Some(s.id));
            }
            // Anything due was expired by the last tick.
            assert!(
                !self.ticked || s.expires_at_ms > self.now.mono_ms,
                "{s:?} overdue"
            );
        }
        // A connection the core closed, or was told is closed, is forgotten (docs/protocol.md §13.3).
        for &conn in &self.conns {
            if let Some(s) = core.connection_session(conn) {
                assert!(self.open.contains(&conn), "closed {conn} still has {s:#x}");
                assert_eq!(sessions.get(&s).and_then(|s| s.conn), Some(conn));
            }
        }
        for w in core.dump_watches() {
            assert!(self.open.contains(&w.conn), "watch of a closed conn: {w:?}");
            assert_eq!(w.session, core.connection_session(w.conn));
        }
        if let Some(deadline) = core.next_deadline().filter(|_| self.ticked) {
            assert!(deadline > self.now.mono_ms, "deadline {deadline} passed");
        }
        if !sessions.is_empty() {
            assert!(core.next_deadline().is_some());
        }
    }

    /// A super user lists every node with getChildren2 and compares names and Stat with
    /// dump_tree, then closes its session.
    pub(super) fn audit(&mut self) {
        let conn = self.new_session();
        let auth = Request::Auth(AuthPacket {
            auth_type: 0,
            scheme: "digest".into(),
            auth: Some(SUPER.to_vec()),
        });
        self.send(conn, &auth);
        self.check_state();
        let nodes = self.core.dump_tree();
        for n in &nodes {
            let mut expected: Vec<&str> = nodes
                .iter()
                .filter(|c| c.path != "/" && parent_of(&c.path) == n.path)
                .map(|c| &c.path[c.path.rfind('/').expect("absolute") + 1..])
                .collect();
            expected.sort_unstable();
            let request = Request::GetChildren2(PathWatchRequest {
                path: n.path.clone(),
                watch: false,
            });
            match self.send(conn, &request) {
                Some(Reply::Ok(_, Response::GetChildren2(r))) => {
                    assert_eq!(r.children, expected, "children of {}", n.path);
                    assert_eq!(r.stat, n.stat, "stat of {}", n.path);
                }
                other => panic!("getChildren2 {} as super: {other:?}", n.path),
            }
        }
        self.send(conn, &Request::CloseSession);
        self.check_state();
    }
}
