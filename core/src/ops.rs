//! The tree operations themselves: the checks of every write in ZooKeeper's exact error order
//! (docs/protocol.md §6.2-§6.7), the mutation that follows them, and the reads (§6.5-§6.9).
//!
//! Invariants: a write either fails before mutating anything or succeeds completely, recording
//! its undo steps and its events in the [`Txn`] (see `txn.rs`), which are delivered only once
//! the txn is committed (see `delivery.rs`); a read mutates nothing but the watch it leaves, and
//! leaves it only where docs/protocol.md §6.5 says (on success, or for exists also on NoNode).

use shepherd_protocol::txn::{DeleteTxn, SetACLTxn, SetDataTxn, TxnBody};
use shepherd_protocol::{
    CheckVersionRequest, Codec, CreateMode, CreateRequest, ErrorCode, GetACLResponse,
    GetDataResponse, Id, OpCode, ReplyHeader, SetACLRequest, SetDataRequest, Stat, perms,
};

use super::tree::Owner;
use super::txn::{Fired, Txn};
use super::watch::Mode;
use super::{ConnId, Core, SessionId, acl, path};

/// The result of one check or operation: a ZooKeeper error code is a value, not a Rust error.
pub(crate) type OpResult<T> = Result<T, ErrorCode>;

/// Encoded sizes of a reply header (xid, zxid, err) and of a Stat, for exact reply buffers.
const REPLY_HEADER_LEN: usize = 4 + 8 + 4;
const STAT_LEN: usize = 4 * 8 + 3 * 4 + 8 + 2 * 4 + 8;

/// The largest TTL a node may have: the 40 bits below the TTL marker (docs/protocol.md §6.2 step 3).
use super::owner::MAX_TTL;

fn check_version(expected: i32, actual: i32) -> OpResult<()> {
    if expected == -1 || expected == actual {
        Ok(())
    } else {
        Err(ErrorCode::BadVersion)
    }
}

impl Core {
    /// create, create2, createContainer, createTTL (docs/protocol.md §6.2), checks in the verified order.
    /// `ttl` is -1 for every op but createTTL.
    pub(crate) fn create(
        &mut self,
        op: OpCode,
        req: &CreateRequest,
        ttl: i64,
        ids: &[Id],
        txn: &mut Txn,
    ) -> OpResult<(String, Stat)> {
        use ErrorCode::{
            BadArguments, InvalidACL, NoAuth, NoChildrenForEphemerals, NoNode, NodeExists,
            Unimplemented,
        };
        let mode = CreateMode::try_from(req.flags).map_err(|_| BadArguments)?;
        if mode.is_ttl() && !self.config.extended_types_enabled {
            return Err(Unimplemented);
        }
        let ttl_ok = if mode.is_ttl() {
            ttl > 0 && ttl <= MAX_TTL
        } else {
            ttl < 0
        };
        // createTTL stores its TTL as the owner whatever the flags say, and ZooKeeper's apply
        // step throws on a TTL outside 1..=MAX_TTL; refuse that up front instead of storing a
        // node the reaper would delete at once.
        let ttl_op_ok = op != OpCode::CreateTTL || (ttl > 0 && ttl <= MAX_TTL);
        if !ttl_ok || !ttl_op_ok {
            return Err(BadArguments);
        }
        let parent = path::parent_for_write(&req.path).ok_or(BadArguments)?;
        // The ACL is judged before the parent is even looked up (docs/protocol.md §6.2 step 6).
        let acl = acl::fixup_with(&req.acl, ids, self.config.auth.sasl_scheme).ok_or(InvalidACL)?;
        let parent_node = self.tree.get(parent).ok_or(NoNode)?;
        if !acl::allows(parent_node.acl(), ids, perms::CREATE) {
            return Err(NoAuth);
        }
        // The suffix is the create counter before this create, %010d, signed (docs/protocol.md §8.1); the full
        // validation runs on the suffixed path, so `/p/` + sequential is fine.
        let path = if mode.is_sequential() {
            format!("{}{:010}", req.path, parent_node.creates)
        } else {
            req.path.clone()
        };
        if !path::is_valid(&path) {
            return Err(BadArguments);
        }
        if self.tree.get(&path).is_some() {
            return Err(NodeExists);
        }
        if matches!(parent_node.owner, Owner::Ephemeral(_)) {
            return Err(NoChildrenForEphemerals);
        }
        // The opcode, not the flags, makes containers and TTL nodes (docs/protocol.md §6.2, last note).
        let owner = match op {
            OpCode::CreateContainer => Owner::Container,
            OpCode::CreateTTL => Owner::Ttl(ttl),
            _ if mode.is_ephemeral() => Owner::Ephemeral(txn.session),
            _ => Owner::Persistent,
        };
        let parent_acl = parent_node.acl_ref().clone();
        let (stat, node_acl) = self.tree.create(
            &path,
            req.data.clone(),
            acl.clone(),
            owner,
            (txn.zxid, txn.time),
            &mut txn.undo,
        );
        if txn.records.is_some() {
            self.record_create(op, mode, (&path, &req.data, &acl, ttl), txn);
        }
        txn.fired.push(Fired::Created {
            path: path.clone(),
            acl: node_acl,
            parent_acl,
        });
        Ok((path, stat))
    }

    /// delete (docs/protocol.md §6.3).
    pub(crate) fn delete(
        &mut self,
        path: &str,
        version: i32,
        ids: &[Id],
        txn: &mut Txn,
    ) -> OpResult<()> {
        use ErrorCode::{BadArguments, NoAuth, NoNode, NotEmpty};
        let parent = path::parent_for_write(path)
            .filter(|_| !path::SYSTEM_NODES.contains(&path))
            .ok_or(BadArguments)?;
        let parent_node = self.tree.get(parent).ok_or(NoNode)?;
        // Deleting needs DELETE on the parent; the node's own ACL does not matter.
        if !acl::allows(parent_node.acl(), ids, perms::DELETE) {
            return Err(NoAuth);
        }
        let node = self.tree.get(path).ok_or(NoNode)?;
        check_version(version, node.version)?;
        if node.num_children() > 0 {
            return Err(NotEmpty);
        }
        self.remove_node(path, txn);
        txn.record(OpCode::Delete.into(), || {
            TxnBody::Delete(DeleteTxn {
                path: path.to_string(),
            })
        });
        Ok(())
    }

    /// Deletes a childless node with no checks (delete, session close, reaping) and records
    /// its events with the ACLs they are filtered by.
    pub(crate) fn remove_node(&mut self, path: &str, txn: &mut Txn) {
        let (parent, _) = path::split(path);
        let parent_acl = self
            .tree
            .get(parent)
            .map(|n| n.acl_ref().clone())
            .unwrap_or_default();
        let acl = self.tree.delete(path, txn.zxid, &mut txn.undo);
        txn.fired.push(Fired::Deleted {
            path: path.to_string(),
            acl,
            parent_acl,
        });
    }

    /// setData (docs/protocol.md §6.4).
    pub(crate) fn set_data(
        &mut self,
        req: &SetDataRequest,
        ids: &[Id],
        txn: &mut Txn,
    ) -> OpResult<Stat> {
        use ErrorCode::{BadArguments, NoAuth, NoNode};
        if !path::is_valid(&req.path) {
            return Err(BadArguments);
        }
        let node = self.tree.get(&req.path).ok_or(NoNode)?;
        if !acl::allows(node.acl(), ids, perms::WRITE) {
            return Err(NoAuth);
        }
        check_version(req.version, node.version)?;
        let acl = node.acl_ref().clone();
        let stat = self.tree.set_data(
            &req.path,
            req.data.clone(),
            (txn.zxid, txn.time),
            &mut txn.undo,
        );
        txn.fired.push(Fired::DataChanged {
            path: req.path.clone(),
            acl,
        });
        txn.record(OpCode::SetData.into(), || {
            TxnBody::SetData(SetDataTxn {
                path: req.path.clone(),
                data: req.data.clone(),
                version: stat.version,
            })
        });
        Ok(stat)
    }

    /// setACL (docs/protocol.md §6.7): the ACL is judged before the node is looked up; no event fires. Never
    /// inside a multi, so nothing to undo.
    pub(crate) fn set_acl(
        &mut self,
        req: &SetACLRequest,
        ids: &[Id],
        txn: &mut Txn,
    ) -> OpResult<Stat> {
        use ErrorCode::{BadArguments, InvalidACL, NoAuth, NoNode};
        if !path::is_valid(&req.path) {
            return Err(BadArguments);
        }
        let acl = acl::fixup_with(&req.acl, ids, self.config.auth.sasl_scheme).ok_or(InvalidACL)?;
        let node = self.tree.get(&req.path).ok_or(NoNode)?;
        if !acl::allows(node.acl(), ids, perms::ADMIN) {
            return Err(NoAuth);
        }
        check_version(req.version, node.aversion)?;
        let aversion = node.aversion.wrapping_add(1);
        txn.record(OpCode::SetACL.into(), || {
            TxnBody::SetACL(SetACLTxn {
                path: req.path.clone(),
                acl: acl.clone(),
                version: aversion,
            })
        });
        self.tree.set_acl(&req.path, acl, aversion);
        Ok(self.tree.get(&req.path).ok_or(NoNode)?.stat())
    }

    /// check, inside a multi (docs/protocol.md §10.3): READ is required. Returns the node's
    /// version.
    pub(crate) fn check(&self, req: &CheckVersionRequest, ids: &[Id]) -> OpResult<i32> {
        use ErrorCode::{BadArguments, NoAuth, NoNode};
        if !path::is_valid(&req.path) {
            return Err(BadArguments);
        }
        let node = self.tree.get(&req.path).ok_or(NoNode)?;
        if !acl::allows(node.acl(), ids, perms::READ) {
            return Err(NoAuth);
        }
        check_version(req.version, node.version)?;
        Ok(node.version)
    }

    /// getData (docs/protocol.md §6.5): the watch is left only on success, under the path as sent.
    pub(crate) fn get_data(
        &mut self,
        path: &str,
        watch: Option<ConnId>,
        ids: &[Id],
    ) -> OpResult<GetDataResponse> {
        let node = self
            .tree
            .get(path::lookup_key(path))
            .ok_or(ErrorCode::NoNode)?;
        if !acl::allows(node.acl(), ids, perms::READ) {
            return Err(ErrorCode::NoAuth);
        }
        let response = GetDataResponse {
            data: node.data_vec(),
            stat: node.stat(),
        };
        if let Some(conn) = watch {
            self.data_watches.add(path, conn, Mode::Standard);
        }
        Ok(response)
    }

    /// exists (docs/protocol.md §6.5): no ACL check in 3.8.0, and the watch is left even when the node is
    /// missing (it is then an exist watch waiting for NodeCreated).
    pub(crate) fn exists(&mut self, path: &str, watch: Option<ConnId>) -> OpResult<Stat> {
        if path.contains('\0') {
            return Err(ErrorCode::BadArguments);
        }
        if let Some(conn) = watch {
            self.data_watches.add(path, conn, Mode::Standard);
        }
        self.tree
            .get(path::lookup_key(path))
            .map(|n| n.stat())
            .ok_or(ErrorCode::NoNode)
    }

    /// getChildren inside a multiRead (docs/protocol.md §10.4): the sorted names, no watch.
    pub(crate) fn get_children(&self, path: &str, ids: &[Id]) -> OpResult<Vec<String>> {
        let node = self
            .tree
            .get(path::lookup_key(path))
            .ok_or(ErrorCode::NoNode)?;
        if !acl::allows(node.acl(), ids, perms::READ) {
            return Err(ErrorCode::NoAuth);
        }
        Ok(self.tree.child_names(node).map(str::to_string).collect())
    }

    /// getChildren and getChildren2 (docs/protocol.md §6.5): sorted names, the watch only on success. Returns
    /// the whole reply payload (header with `xid` and the last zxid, the names, and the stat
    /// for getChildren2), the same bytes as encoding a [`GetChildrenResponse`] or
    /// [`GetChildren2Response`] with [`encode_reply`]. It is written straight from the node's
    /// cached list into one buffer of the exact size: herd waiters all read lists of N names
    /// after every release, and cloning every name into a response only to encode and drop it
    /// was most of the server's time under the core lock.
    ///
    /// [`GetChildrenResponse`]: shepherd_protocol::GetChildrenResponse
    /// [`GetChildren2Response`]: shepherd_protocol::GetChildren2Response
    /// [`encode_reply`]: shepherd_protocol::encode_reply
    pub(crate) fn get_children_reply(
        &mut self,
        xid: i32,
        path: &str,
        watch: Option<ConnId>,
        ids: &[Id],
        with_stat: bool,
    ) -> OpResult<Vec<u8>> {
        let header = ReplyHeader {
            xid,
            zxid: self.zxid,
            err: ErrorCode::Ok.into(),
        };
        let index = self
            .tree
            .lookup(path::lookup_key(path))
            .ok_or(ErrorCode::NoNode)?;
        let node = self.tree.get_index(index).ok_or(ErrorCode::NoNode)?;
        if !acl::allows(node.acl(), ids, perms::READ) {
            return Err(ErrorCode::NoAuth);
        }
        let stat = with_stat.then(|| node.stat());
        let names = self.tree.children_wire(index);
        let stat_len = if with_stat { STAT_LEN } else { 0 };
        let mut payload = Vec::with_capacity(REPLY_HEADER_LEN + names.len() + stat_len);
        header.encode(&mut payload);
        payload.extend_from_slice(names);
        if let Some(stat) = stat {
            stat.encode(&mut payload);
        }
        debug_assert_eq!(payload.len(), payload.capacity());
        if let Some(conn) = watch {
            self.child_watches.add(path, conn, Mode::Standard);
        }
        Ok(payload)
    }

    /// getAllChildrenNumber (docs/protocol.md §6.5): all descendants. Java counts the keys that start with
    /// `path + "/"`, so for the `""` alias it counts every real node.
    pub(crate) fn all_children_number(&self, path: &str, ids: &[Id]) -> OpResult<i32> {
        let node = self
            .tree
            .get(path::lookup_key(path))
            .ok_or(ErrorCode::NoNode)?;
        if !acl::allows(node.acl(), ids, perms::READ) {
            return Err(ErrorCode::NoAuth);
        }
        let count = if path.is_empty() {
            self.tree.len()
        } else {
            self.tree.descendants(path)
        };
        Ok(i32::try_from(count).unwrap_or(i32::MAX))
    }

    /// getACL (docs/protocol.md §6.6): READ or ADMIN, digest ids masked without ADMIN.
    pub(crate) fn get_acl(&self, path: &str, ids: &[Id]) -> OpResult<GetACLResponse> {
        let node = self
            .tree
            .get(path::lookup_key(path))
            .ok_or(ErrorCode::NoNode)?;
        if !acl::allows(node.acl(), ids, perms::READ | perms::ADMIN) {
            return Err(ErrorCode::NoAuth);
        }
        Ok(GetACLResponse {
            acl: acl::for_get_acl(node.acl(), ids),
            stat: node.stat(),
        })
    }

    /// getEphemerals (docs/protocol.md §6.9): the session's ephemerals whose path string-starts-with the prefix.
    pub(crate) fn ephemerals(&self, session: SessionId, prefix: &str) -> Vec<String> {
        let all = prefix.is_empty() || prefix == "/";
        self.tree
            .ephemerals_of(session)
            .filter(|p| all || p.starts_with(prefix))
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use shepherd_protocol::{GetChildren2Response, GetChildrenResponse, Response, encode_reply};

    use shepherd_protocol::Acl;

    use super::*;
    use crate::{CoreConfig, Now};

    /// The reply written straight from the tree is byte for byte the encoded response.
    #[test]
    fn children_reply_is_the_encoded_response() {
        let now = Now {
            mono_ms: 0,
            wall_ms: 1_700_000_000_000,
        };
        let mut core = Core::new(CoreConfig::default(), now);
        let mut undo = Vec::new();
        for (i, p) in ["/d", "/d/β-2", "/d/a-10", "/d/a-9"]
            .into_iter()
            .enumerate()
        {
            let at = (i as i64 + 1, now.wall_ms);
            let acl = Acl::open_unsafe();
            core.tree
                .create(p, Some(vec![1]), acl, Owner::Persistent, at, &mut undo);
        }
        core.zxid = 4;
        for path in ["/d", "/d/a-9", "/"] {
            let node = core.tree.get(path).unwrap();
            let children: Vec<String> = core.tree.child_names(node).map(str::to_string).collect();
            let stat = node.stat();
            let header = ReplyHeader {
                xid: 7,
                zxid: 4,
                err: 0,
            };
            let mut plain = Vec::new();
            let response = Response::GetChildren(GetChildrenResponse {
                children: children.clone(),
            });
            encode_reply(&header, Some(&response), &mut plain);
            let mut with_stat = Vec::new();
            let response = Response::GetChildren2(GetChildren2Response { children, stat });
            encode_reply(&header, Some(&response), &mut with_stat);
            assert_eq!(
                core.get_children_reply(7, path, None, &[], false),
                Ok(plain)
            );
            assert_eq!(
                core.get_children_reply(7, path, Some(1), &[], true),
                Ok(with_stat)
            );
        }
        assert_eq!(
            core.get_children_reply(7, "/nope", None, &[], false),
            Err(ErrorCode::NoNode)
        );
        assert_eq!(core.child_watches.count(), 3);
    }
}
