//! The container/TTL reaper (docs/protocol.md §8.3, §8.4): deletes childless containers that once had a child
//! (or never-used ones past `max_never_used_interval_ms`) and childless TTL nodes unmodified for
//! longer than their TTL.
//!
//! Invariants: each deletion is its own deleteContainer txn, taking one zxid and firing its
//! events like any delete; a run deletes at most `interval × maxPerMinute / 60 000` nodes (at
//! least one), the Java reaper's pacing; candidates are taken in path order, containers first.
//! Runs are every `container_check_interval_ms` (never when it is 0), at fixed rate from the
//! core's start (ZooKeeper's `ContainerManager` timer): a timer that fell behind runs once,
//! then resumes its cadence. The next run is part of `next_deadline` whenever there is a
//! container or TTL node, so a TTL node goes on the first run after its TTL has passed since
//! its mtime (docs/protocol.md §8.4), not whenever the shell next happens to tick.

use shepherd_protocol::OpCode;
use shepherd_protocol::txn::{DeleteTxn, TxnBody};

use super::tree::Owner;
use super::txn::Txn;
use super::{Action, Core, Now};

impl Core {
    /// Runs the reaper if its time has come, and schedules the next run.
    pub(super) fn reap_if_due(&mut self, now: Now, out: &mut Vec<Action>) {
        let interval = self.config.container_check_interval_ms;
        if interval > 0 && now.mono_ms >= self.next_container_check {
            // A fixed-rate timer that fell behind runs once, then resumes its cadence.
            let behind = (now.mono_ms - self.next_container_check) / interval + 1;
            self.next_container_check += behind * interval;
            self.reap(now, out);
        }
    }

    /// Keeps the reaper on its fixed-rate grid across an idle spell. While there is nothing to
    /// look at, its runs are skipped (a run with no candidates does nothing) and its deadline
    /// is left out of `next_deadline`; when a request gives it a first candidate, the skipped
    /// runs are passed over, so the next run is the first grid point after `now`, as
    /// ZooKeeper's timer, which never stopped, would have it.
    pub(super) fn resume_reaper(&mut self, now: Now, was_idle: bool) {
        let interval = self.config.container_check_interval_ms;
        if was_idle && interval > 0 && self.next_container_check <= now.mono_ms {
            let skipped = (now.mono_ms - self.next_container_check) / interval + 1;
            self.next_container_check += skipped * interval;
        }
    }

    /// When the reaper next has work: its next run, if it runs at all and there is a container
    /// or TTL node to look at. Any container counts, one that never had a child included: the
    /// run it costs is a no-op, and knowing better would take a scan.
    pub(super) fn reaper_deadline(&self) -> Option<u64> {
        (self.config.container_check_interval_ms > 0
            && !(self.tree.containers().is_empty() && self.tree.ttls().is_empty()))
        .then_some(self.next_container_check)
    }

    /// One run of the reaper (docs/protocol.md §8.3, §8.4): childless containers that once had a child (or
    /// never-used ones past `max_never_used_interval_ms`), and childless TTL nodes unmodified
    /// for longer than their TTL. Each deletion is its own deleteContainer txn with a zxid; at
    /// most `interval × maxPerMinute / 60 000` (at least one) per run, the Java reaper's pacing.
    fn reap(&mut self, now: Now, out: &mut Vec<Action>) {
        let never_used = i64::try_from(self.config.max_never_used_interval_ms).unwrap_or(i64::MAX);
        let elapsed = |mtime: i64| now.wall_ms.saturating_sub(mtime);
        let containers = self.tree.containers().iter().filter(|p| {
            self.tree.get(p).is_some_and(|n| {
                n.num_children() == 0
                    && (n.creates > 0 || (never_used != 0 && elapsed(n.mtime) > never_used))
            })
        });
        let ttls = self.tree.ttls().iter().filter(|p| {
            self.tree.get(p).is_some_and(|n| {
                n.num_children() == 0
                    && matches!(n.owner, Owner::Ttl(ttl) if ttl != 0 && elapsed(n.mtime) > ttl)
            })
        });
        let budget = (u128::from(self.config.container_check_interval_ms)
            * u128::from(self.config.container_max_per_minute)
            / 60_000)
            .max(1);
        let budget = usize::try_from(budget).unwrap_or(usize::MAX);
        let candidates: Vec<String> = containers.chain(ttls).take(budget).cloned().collect();
        for path in candidates {
            self.zxid += 1;
            // ZooKeeper's ContainerManager submits deleteContainer as session 0, xid 0, for
            // containers and TTL nodes alike.
            let mut txn = Txn::new(self.zxid, now.wall_ms, 0, 0, false);
            self.remove_node(&path, &mut txn);
            let body = || TxnBody::Delete(DeleteTxn { path });
            self.log_txn(&txn, OpCode::DeleteContainer.into(), body, Some(0));
            self.deliver(txn.fired, out);
        }
    }
}
