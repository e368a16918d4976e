//! The registry of every watch the session holds, owned by the connection task.
//!
//! Invariants kept by [`WatchRegistry`]:
//! * a one-shot watch is registered only when its reply arrives, before the reply is handed to
//!   the caller, so no event for it can be missed or seen early (docs/protocol.md §9.6);
//! * a one-shot watch fires at most once and is then forgotten; persistent ones stay until
//!   removed, their handle is dropped, or the session ends;
//! * keys are server paths (chroot included); event paths are stripped before delivery;
//! * watches outlive connections: everything registered is re-armed with setWatches(2) after a
//!   reconnect, and only a terminal session state resolves the remaining ones with an error.
//!
//! The handles callers hold ([`crate::OneshotWatcher`], [`crate::PersistentWatcher`]) live in
//! `crate::watch` and know nothing of this registry: the dependency goes one way, from the
//! connection task to the handles.

use std::collections::HashMap;

use shepherd_protocol::{
    EventType, KeeperState, Request, SetWatches, SetWatches2, WatcherEvent, WatcherType,
};
use tokio::sync::mpsc;

use crate::chroot::Chroot;
use crate::error::Error;
use crate::watch::{OneshotTx, WatchedEvent};

/// What a request asks to register once its reply is in.
#[derive(Debug)]
pub(crate) enum WatchReg {
    /// getData: a data watch on success.
    Data(OneshotTx),
    /// exists: a data watch if the node exists, an exist watch on NoNode.
    Exists(OneshotTx),
    /// getChildren: a child watch on success.
    Child(OneshotTx),
    /// addWatch: a persistent watch on success.
    Persistent {
        recursive: bool,
        id: u64,
        tx: mpsc::UnboundedSender<WatchedEvent>,
    },
    /// removeWatches: drop local watchers of that type on success.
    Remove(WatcherType),
}

type PersistentMap = HashMap<String, Vec<(u64, mpsc::UnboundedSender<WatchedEvent>)>>;

/// Every watch the session holds, by server path.
#[derive(Debug, Default)]
pub(crate) struct WatchRegistry {
    data: HashMap<String, Vec<OneshotTx>>,
    exist: HashMap<String, Vec<OneshotTx>>,
    child: HashMap<String, Vec<OneshotTx>>,
    persistent: PersistentMap,
    recursive: PersistentMap,
}

/// Paths per setWatches packet, as Java does (docs/protocol.md §9.7): about 128 KiB of path bytes.
const SET_WATCHES_BATCH_BYTES: usize = 128 * 1024;

fn event(event_type: EventType, path: String) -> WatchedEvent {
    WatchedEvent {
        event_type,
        state: KeeperState::SyncConnected,
        path,
    }
}

impl WatchRegistry {
    /// Registers what a reply allows. `ok` is whether the reply succeeded, `no_node` whether it
    /// failed with NoNode.
    pub(crate) fn register(
        &mut self,
        path: &str,
        reg: WatchReg,
        ok: bool,
        no_node: bool,
        chroot: &Chroot,
    ) {
        let path = path.to_owned();
        match reg {
            WatchReg::Data(tx) if ok => self.data.entry(path).or_default().push(tx),
            WatchReg::Exists(tx) if ok => self.data.entry(path).or_default().push(tx),
            WatchReg::Exists(tx) if no_node => self.exist.entry(path).or_default().push(tx),
            WatchReg::Child(tx) if ok => self.child.entry(path).or_default().push(tx),
            WatchReg::Persistent { recursive, id, tx } if ok => {
                let map = if recursive {
                    &mut self.recursive
                } else {
                    &mut self.persistent
                };
                map.entry(path).or_default().push((id, tx));
            }
            WatchReg::Remove(kind) if ok => self.remove_local(&path, kind, chroot),
            _ => {}
        }
    }

    /// Delivers a server notification to every matching watcher (Java's `materialize`).
    pub(crate) fn dispatch(&mut self, ev: &WatcherEvent, chroot: &Chroot) {
        let user = event(ev.event_type, chroot.strip(&ev.path));
        let fire = |map: &mut HashMap<String, Vec<OneshotTx>>| {
            for tx in map.remove(&ev.path).unwrap_or_default() {
                let _ = tx.send(Ok(user.clone()));
            }
        };
        match ev.event_type {
            EventType::NodeCreated | EventType::NodeDataChanged => {
                fire(&mut self.data);
                fire(&mut self.exist);
            }
            EventType::NodeChildrenChanged => fire(&mut self.child),
            EventType::NodeDeleted => {
                fire(&mut self.data);
                fire(&mut self.exist);
                fire(&mut self.child);
            }
            _ => {}
        }
        send_persistent(&mut self.persistent, &ev.path, &user);
        if ev.event_type != EventType::NodeChildrenChanged {
            let mut at = ev.path.as_str();
            loop {
                send_persistent(&mut self.recursive, at, &user);
                if at == "/" {
                    break;
                }
                at = match at.rfind('/') {
                    Some(0) => "/",
                    Some(i) => &at[..i],
                    None => break,
                };
            }
        }
    }

    /// Tells persistent watchers about a session state change.
    pub(crate) fn session_event(&mut self, state: KeeperState) {
        let ev = WatchedEvent {
            event_type: EventType::None,
            state,
            path: String::new(),
        };
        for map in [&mut self.persistent, &mut self.recursive] {
            for list in map.values_mut() {
                list.retain(|(_, tx)| tx.send(ev.clone()).is_ok());
            }
            map.retain(|_, list| !list.is_empty());
        }
    }

    /// Ends every watch: one-shots resolve with `err`, persistent streams get a last session
    /// event and end.
    pub(crate) fn end_session(&mut self, err: &Error, state: KeeperState) {
        self.session_event(state);
        self.persistent.clear();
        self.recursive.clear();
        for map in [&mut self.data, &mut self.exist, &mut self.child] {
            for tx in map.drain().flat_map(|(_, v)| v) {
                let _ = tx.send(Err(err.session_level()));
            }
        }
    }

    /// Forgets one persistent watcher whose handle was dropped. Returns whether the server-side
    /// watch should be removed (nothing else local watches that path).
    pub(crate) fn drop_persistent(&mut self, path: &str, id: u64) -> bool {
        for map in [&mut self.persistent, &mut self.recursive] {
            if let Some(list) = map.get_mut(path) {
                list.retain(|(i, _)| *i != id);
                if list.is_empty() {
                    map.remove(path);
                }
            }
        }
        ![&self.persistent, &self.recursive]
            .iter()
            .any(|m| m.contains_key(path))
            && ![&self.data, &self.exist, &self.child]
                .iter()
                .any(|m| m.contains_key(path))
    }

    /// Removes local watchers after a successful removeWatches, telling each one (the server
    /// sends nothing, docs/protocol.md §9.8).
    fn remove_local(&mut self, path: &str, kind: WatcherType, chroot: &Chroot) {
        let user_path = chroot.strip(path);
        let children = matches!(kind, WatcherType::Children | WatcherType::Any);
        let data = matches!(kind, WatcherType::Data | WatcherType::Any);
        let fire = |map: &mut HashMap<String, Vec<OneshotTx>>, t: EventType| {
            for tx in map.remove(path).unwrap_or_default() {
                let _ = tx.send(Ok(event(t, user_path.clone())));
            }
        };
        if children {
            fire(&mut self.child, EventType::ChildWatchRemoved);
        }
        if data {
            fire(&mut self.data, EventType::DataWatchRemoved);
            fire(&mut self.exist, EventType::DataWatchRemoved);
        }
        let removed = event(EventType::PersistentWatchRemoved, user_path.clone());
        let end = |map: &mut PersistentMap| {
            for (_, tx) in map.remove(path).unwrap_or_default() {
                let _ = tx.send(removed.clone());
            }
        };
        match kind {
            WatcherType::Any => {
                end(&mut self.persistent);
                end(&mut self.recursive);
            }
            WatcherType::Persistent => end(&mut self.persistent),
            WatcherType::PersistentRecursive => end(&mut self.recursive),
            _ => {}
        }
    }

    /// The setWatches (or setWatches2, when persistent watches exist) packets that re-arm
    /// everything after a reconnect. Dropped persistent handles are pruned first.
    pub(crate) fn set_watches(&mut self, last_zxid: i64) -> Vec<Request> {
        for map in [&mut self.persistent, &mut self.recursive] {
            for list in map.values_mut() {
                list.retain(|(_, tx)| !tx.is_closed());
            }
            map.retain(|_, list| !list.is_empty());
        }
        let v2 = !self.persistent.is_empty() || !self.recursive.is_empty();
        let lists = [
            keys(&self.data),
            keys(&self.exist),
            keys(&self.child),
            keys(&self.persistent),
            keys(&self.recursive),
        ];
        let mut packets = Vec::new();
        let mut batch: [Vec<String>; 5] = Default::default();
        let mut bytes = 0;
        for (i, list) in lists.into_iter().enumerate() {
            for path in list {
                if bytes + path.len() > SET_WATCHES_BATCH_BYTES && bytes > 0 {
                    packets.push(std::mem::take(&mut batch));
                    bytes = 0;
                }
                bytes += path.len();
                batch[i].push(path);
            }
        }
        if bytes > 0 {
            packets.push(batch);
        }
        packets
            .into_iter()
            .map(|[data, exist, child, persistent, recursive]| {
                if v2 {
                    Request::SetWatches2(SetWatches2 {
                        relative_zxid: last_zxid,
                        data_watches: data,
                        exist_watches: exist,
                        child_watches: child,
                        persistent_watches: persistent,
                        persistent_recursive_watches: recursive,
                    })
                } else {
                    Request::SetWatches(SetWatches {
                        relative_zxid: last_zxid,
                        data_watches: data,
                        exist_watches: exist,
                        child_watches: child,
                    })
                }
            })
            .collect()
    }
}

fn keys<V>(map: &HashMap<String, V>) -> Vec<String> {
    map.keys().cloned().collect()
}

fn send_persistent(map: &mut PersistentMap, path: &str, ev: &WatchedEvent) {
    if let Some(list) = map.get_mut(path) {
        list.retain(|(_, tx)| tx.send(ev.clone()).is_ok());
        if list.is_empty() {
            map.remove(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::FutureExt;

    #[test]
    fn recursive_watches_see_descendants_but_not_child_events() {
        let mut reg = WatchRegistry::default();
        let chroot = Chroot::new(Some("/app")).unwrap();
        let (tx, mut rx) = mpsc::unbounded_channel();
        let persistent = WatchReg::Persistent {
            recursive: true,
            id: 1,
            tx,
        };
        reg.register("/app", persistent, true, false, &chroot);
        let created = WatcherEvent {
            event_type: EventType::NodeCreated,
            state: KeeperState::SyncConnected,
            path: "/app/a/b".into(),
        };
        reg.dispatch(&created, &chroot);
        let changed = WatcherEvent {
            event_type: EventType::NodeChildrenChanged,
            path: "/app/a".into(),
            ..created.clone()
        };
        reg.dispatch(&changed, &chroot);
        assert_eq!(rx.try_recv().unwrap().path, "/a/b");
        assert!(rx.try_recv().is_err());
        assert!(matches!(reg.set_watches(7)[0], Request::SetWatches2(_)));
    }

    #[test]
    fn one_shot_watches_fire_once() {
        let mut reg = WatchRegistry::default();
        let chroot = Chroot::default();
        let (w, tx) = crate::watch::OneshotWatcher::new();
        reg.register("/x", WatchReg::Exists(tx), false, true, &chroot);
        let ev = WatcherEvent {
            event_type: EventType::NodeCreated,
            state: KeeperState::SyncConnected,
            path: "/x".into(),
        };
        reg.dispatch(&ev, &chroot);
        assert_eq!(
            w.now_or_never().unwrap().unwrap().event_type,
            EventType::NodeCreated
        );
        assert!(reg.set_watches(0).is_empty());
    }
}
