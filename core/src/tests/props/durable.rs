//! Durability properties: the log a random run emits replays, onto a fresh core, to the very
//! same state (every node's path, data, Stat and ACL, the sessions, the zxid, the digest); and
//! a snapshot taken in slices while the run goes on, restored and followed by the entries
//! after its zxid, gives that state too.
//!
//! Runs use the same steps as `random_runs_keep_the_invariants`, less the test control that
//! sets a create counter behind the log's back.

use proptest::prelude::*;
use shepherd_protocol::txn::{StatPersisted, TxnEntry};
use shepherd_protocol::{Acl, Codec};

use super::super::T0;
use super::model::Model;
use super::steps::{Step, config, step};
use crate::{Core, CoreConfig, Now, Restore, SessionId, SnapshotCursor};

/// One node as compared: path, data, Stat, ACL.
type NodeState = (String, Option<Vec<u8>>, shepherd_protocol::Stat, Vec<Acl>);

/// Everything replay must reproduce. Sessions by id only: a resume's new timeout is not
/// logged (ZooKeeper's `reopenSession` writes no txn either), so after a restart a session has
/// the timeout it was created (or snapshotted) with.
#[derive(Debug, PartialEq)]
pub(super) struct State {
    nodes: Vec<NodeState>,
    sessions: Vec<SessionId>,
    zxid: i64,
    digest: Option<i64>,
}

pub(super) fn state(core: &Core) -> State {
    let mut nodes: Vec<NodeState> = Vec::new();
    core.tree.walk(|p, _, n| {
        nodes.push((p.to_string(), n.data_vec(), n.stat(), n.acl().to_vec()));
    });
    nodes.sort_by(|a, b| a.0.cmp(&b.0));
    State {
        nodes,
        sessions: core.sessions.iter().map(|(&id, _)| id).collect(),
        zxid: core.last_zxid(),
        digest: core.tree_digest(),
    }
}

/// Steps that go through the core's inputs only.
pub(super) fn logged_step() -> impl Strategy<Value = Step> {
    step().prop_filter("a counter set behind the log's back", |s| {
        !matches!(s, Step::SetCounter(..))
    })
}

pub(super) fn logging(config: CoreConfig) -> CoreConfig {
    CoreConfig {
        log_txns: true,
        ..config
    }
}

/// Takes what the core logged since the last call, checking one entry per zxid, in order.
pub(super) fn take(core: &mut Core, log: &mut Vec<TxnEntry>) {
    let from = log.len();
    core.take_log(log);
    let mut expected = log.get(from.wrapping_sub(1)).map_or(0, |e| e.header.zxid) + 1;
    for e in &log[from..] {
        assert_eq!(
            e.header.zxid, expected,
            "a gap or a repeat in the log: {e:?}"
        );
        expected += 1;
    }
    assert_eq!(expected - 1, core.last_zxid(), "a zxid without an entry");
    assert_eq!(core.tree_digest(), Some(core.tree.recompute_digest()));
}

/// Replays entries, checking each logged digest against the replica's tree as ZooKeeper's
/// `compareDigest` does. Creates (1, 15, 19) and failed multis (-1) may log the digest
/// ZooKeeper prepared rather than the tree's (see `Core::record_create` and `multi.rs`).
pub(super) fn replay(replica: &mut Core, entries: &[TxnEntry], now: Now) {
    for e in entries {
        replica.replay(e, now).expect("replayable");
        if let Some(d) = &e.digest
            && ![1, 15, 19, -1].contains(&e.header.op_type)
        {
            assert_eq!(
                Some(d.tree_digest),
                replica.tree_digest(),
                "digest after {e:?}"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn the_log_replays_to_the_same_state(
        config in config(),
        steps in prop::collection::vec(logged_step(), 1..150),
    ) {
        let config = logging(config);
        let mut model = Model::new(config.clone());
        let mut log = Vec::new();
        for step in steps {
            model.run(step);
            take(&mut model.core, &mut log);
        }
        let mut replica = Core::new(config, T0);
        replay(&mut replica, &log, model.now);
        prop_assert_eq!(state(&replica), state(&model.core));
    }
}

/// Restores a snapshot's records (as `snapshot_slice` wrote them) into a core.
pub(super) fn restore(
    config: &CoreConfig,
    cursor: &SnapshotCursor,
    bytes: &[u8],
    now: Now,
) -> Core {
    let mut restore = Restore::new(config.clone(), now);
    for &(id, timeout) in cursor.sessions() {
        restore.session(id, timeout);
    }
    for (id, acl) in cursor.acls() {
        restore.acl(id, acl.to_vec());
    }
    let mut buf = bytes;
    while !buf.is_empty() {
        let path = String::decode(&mut buf).expect("a path");
        let data = Option::<Vec<u8>>::decode(&mut buf).expect("data");
        let acl = i64::decode(&mut buf).expect("an ACL id");
        let stat = StatPersisted::decode(&mut buf).expect("a stat");
        restore
            .node(&path, data, acl, stat)
            .expect("a node that fits");
    }
    restore.finish(cursor.zxid()).expect("a root")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// A snapshot taken a few nodes at a time while the run goes on, restored, then the log
    /// after its zxid replayed: the state of the live core. The snapshot's digest is checked
    /// where ZooKeeper checks it, once replay reaches its zxid.
    #[test]
    fn a_snapshot_in_slices_and_the_log_restore_the_same_state(
        config in config(),
        before in prop::collection::vec(logged_step(), 0..100),
        during in prop::collection::vec(logged_step(), 0..100),
        slice in 1..6usize,
    ) {
        let config = logging(config);
        let mut model = Model::new(config.clone());
        let mut log = Vec::new();
        for step in before {
            model.run(step);
            take(&mut model.core, &mut log);
        }
        let mut cursor = model.core.snapshot_begin();
        let mut bytes = Vec::new();
        let mut done = false;
        for step in during {
            if !done {
                done = model.core.snapshot_slice(&mut cursor, slice, &mut bytes);
            }
            model.run(step);
            take(&mut model.core, &mut log);
        }
        while !done {
            done = model.core.snapshot_slice(&mut cursor, slice, &mut bytes);
        }
        let mut replica = restore(&config, &cursor, &bytes, model.now);
        let (digest_zxid, digest) = cursor.digest().expect("a digest");
        let after: Vec<TxnEntry> =
            log.into_iter().filter(|e| e.header.zxid > cursor.zxid()).collect();
        let (fuzzy, exact): (Vec<TxnEntry>, Vec<TxnEntry>) =
            after.into_iter().partition(|e| e.header.zxid <= digest_zxid);
        for e in &fuzzy {
            replica.replay(e, model.now).expect("replayable");
        }
        prop_assert_eq!(replica.tree_digest(), Some(digest));
        replay(&mut replica, &exact, model.now);
        prop_assert_eq!(state(&replica), state(&model.core));
    }
}
