//! The ZooKeeper operations on [`Client`], one method per request kind.
//!
//! Invariants: every path is chrooted before it leaves and every returned path is stripped;
//! each method sends exactly one request (none when a local check fails) and expects exactly
//! one reply variant, anything else being [`Error::Protocol`]. The crate-level "errors",
//! "ordering" and "cancellation" rules on [`Client`] apply to every method here; each method
//! lists only what is specific to it.

use std::time::Duration;

use shepherd_protocol::{
    Acl, AddWatchMode, AddWatchRequest, ClientInfo, CreateMode, CreateRequest, CreateTTLRequest,
    DeleteRequest, ErrorCode, PathRequest, PathWatchRequest, RemoveWatchesRequest, Request,
    Response, SetACLRequest, SetDataRequest, Stat, WatcherType,
};
use tokio::sync::mpsc;

use crate::client::{Client, unexpected};
use crate::conn::WatchReg;
use crate::error::Error;
use crate::watch::{OneshotWatcher, PersistentWatcher};

/// How to create a node: its mode, ACL and, for TTL modes, its time to live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateOptions {
    /// The create mode.
    pub mode: CreateMode,
    /// The ACL (default: `world:anyone` with every permission).
    pub acl: Vec<Acl>,
    /// Required for the TTL modes, refused for the others.
    pub ttl: Option<Duration>,
}

impl CreateOptions {
    /// Options for `mode` with the open ACL.
    pub fn new(mode: CreateMode) -> CreateOptions {
        CreateOptions {
            mode,
            acl: Acl::open_unsafe(),
            ttl: None,
        }
    }

    /// A persistent node with the open ACL.
    pub fn persistent() -> CreateOptions {
        CreateOptions::new(CreateMode::Persistent)
    }

    /// An ephemeral node with the open ACL.
    pub fn ephemeral() -> CreateOptions {
        CreateOptions::new(CreateMode::Ephemeral)
    }

    /// Replaces the ACL.
    pub fn with_acl(mut self, acl: Vec<Acl>) -> CreateOptions {
        self.acl = acl;
        self
    }

    /// Sets the time to live (TTL modes only).
    pub fn with_ttl(mut self, ttl: Duration) -> CreateOptions {
        self.ttl = Some(ttl);
        self
    }

    /// The request for this create, checking the TTL against the mode.
    pub(crate) fn request(&self, path: String, data: &[u8]) -> Result<Request, Error> {
        let flags = i32::from(self.mode);
        let data = Some(data.to_vec());
        let acl = self.acl.clone();
        match (self.mode.is_ttl(), self.ttl) {
            (true, Some(ttl)) => Ok(Request::CreateTTL(CreateTTLRequest {
                path,
                data,
                acl,
                flags,
                ttl: i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX),
            })),
            (true, None) => Err(Error::InvalidArgument("a TTL mode needs a ttl".into())),
            (false, Some(_)) => Err(Error::InvalidArgument(
                "a ttl needs a TTL create mode".into(),
            )),
            (false, None) => {
                let create = CreateRequest {
                    path,
                    data,
                    acl,
                    flags,
                };
                Ok(if self.mode == CreateMode::Container {
                    Request::CreateContainer(create)
                } else {
                    Request::Create2(create)
                })
            }
        }
    }
}

fn version(v: Option<i32>) -> i32 {
    v.unwrap_or(-1)
}

impl Client {
    /// Creates a node and returns its path (with the sequence suffix, chroot stripped) and its
    /// stat. Uses create2 (op 15), createContainer (19) for `Container`, createTTL (21) for
    /// the TTL modes.
    ///
    /// # Errors
    /// `NodeExists`, `NoNode` (no parent), `NoChildrenForEphemerals`, `NoAuth`,
    /// `BadArguments`, `InvalidACL`; `Unimplemented` for TTL when the server has extended types
    /// off; [`Error::InvalidArgument`] for a TTL without a TTL mode, or the reverse.
    pub async fn create(
        &self,
        path: &str,
        data: &[u8],
        options: &CreateOptions,
    ) -> Result<(String, Stat), Error> {
        let request = options.request(self.server_path(path)?, data)?;
        match self.call(request, String::new(), None).await? {
            Response::Create2(r) | Response::CreateContainer(r) | Response::CreateTTL(r) => {
                Ok((self.user_path(&r.path), r.stat))
            }
            other => Err(unexpected(&other)),
        }
    }

    /// Deletes a node, if its version matches (`None`: any version).
    ///
    /// # Errors
    /// `NoNode`, `BadVersion`, `NotEmpty`, `NoAuth`.
    pub async fn delete(&self, path: &str, version: Option<i32>) -> Result<(), Error> {
        let request = Request::Delete(DeleteRequest {
            path: self.server_path(path)?,
            version: self::version(version),
        });
        match self.call(request, String::new(), None).await? {
            Response::Delete => Ok(()),
            other => Err(unexpected(&other)),
        }
    }

    /// The node's stat, or `None` if it does not exist (NoNode is not an error here).
    pub async fn exists(&self, path: &str) -> Result<Option<Stat>, Error> {
        self.exists_inner(path, None).await
    }

    /// As [`Client::exists`], leaving a one-shot watch: NodeCreated if the node is missing;
    /// NodeDataChanged or NodeDeleted if it exists.
    pub async fn exists_w(&self, path: &str) -> Result<(Option<Stat>, OneshotWatcher), Error> {
        let (watcher, tx) = OneshotWatcher::new();
        let stat = self.exists_inner(path, Some(WatchReg::Exists(tx))).await?;
        Ok((stat, watcher))
    }

    async fn exists_inner(
        &self,
        path: &str,
        watch: Option<WatchReg>,
    ) -> Result<Option<Stat>, Error> {
        let server = self.server_path(path)?;
        let request = Request::Exists(PathWatchRequest {
            path: server.clone(),
            watch: watch.is_some(),
        });
        match self.call(request, server, watch).await {
            Ok(Response::Exists(r)) => Ok(Some(r.stat)),
            Ok(other) => Err(unexpected(&other)),
            Err(Error::Keeper(ErrorCode::NoNode)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The node's data (null data reads as empty) and stat.
    ///
    /// # Errors
    /// `NoNode`, `NoAuth`.
    pub async fn get_data(&self, path: &str) -> Result<(Vec<u8>, Stat), Error> {
        self.get_data_inner(self.server_path(path)?, None).await
    }

    /// As [`Client::get_data`], leaving a one-shot watch that fires on NodeDataChanged or
    /// NodeDeleted. No watch is left when the call fails.
    ///
    /// # Errors
    /// As [`Client::get_data`].
    pub async fn get_data_w(&self, path: &str) -> Result<(Vec<u8>, Stat, OneshotWatcher), Error> {
        let (watcher, tx) = OneshotWatcher::new();
        let server = self.server_path(path)?;
        let (data, stat) = self
            .get_data_inner(server, Some(WatchReg::Data(tx)))
            .await?;
        Ok((data, stat, watcher))
    }

    async fn get_data_inner(
        &self,
        path: String,
        watch: Option<WatchReg>,
    ) -> Result<(Vec<u8>, Stat), Error> {
        let request = Request::GetData(PathWatchRequest {
            path: path.clone(),
            watch: watch.is_some(),
        });
        match self.call(request, path, watch).await? {
            Response::GetData(r) => Ok((r.data.unwrap_or_default(), r.stat)),
            other => Err(unexpected(&other)),
        }
    }

    /// Replaces the node's data if its version matches (`None`: any), returning the new stat.
    ///
    /// # Errors
    /// `NoNode`, `BadVersion`, `NoAuth`.
    pub async fn set_data(
        &self,
        path: &str,
        data: &[u8],
        version: Option<i32>,
    ) -> Result<Stat, Error> {
        let request = Request::SetData(SetDataRequest {
            path: self.server_path(path)?,
            data: Some(data.to_vec()),
            version: self::version(version),
        });
        match self.call(request, String::new(), None).await? {
            Response::SetData(r) => Ok(r.stat),
            other => Err(unexpected(&other)),
        }
    }

    /// The node's ACL and stat.
    ///
    /// # Errors
    /// `NoNode`, `NoAuth`.
    pub async fn get_acl(&self, path: &str) -> Result<(Vec<Acl>, Stat), Error> {
        let request = Request::GetACL(PathRequest {
            path: self.server_path(path)?,
        });
        match self.call(request, String::new(), None).await? {
            Response::GetACL(r) => Ok((r.acl, r.stat)),
            other => Err(unexpected(&other)),
        }
    }

    /// Replaces the node's ACL if its ACL version (`aversion`) matches (`None`: any).
    ///
    /// # Errors
    /// `NoNode`, `BadVersion`, `NoAuth`, `InvalidACL`.
    pub async fn set_acl(
        &self,
        path: &str,
        acl: Vec<Acl>,
        version: Option<i32>,
    ) -> Result<Stat, Error> {
        let request = Request::SetACL(SetACLRequest {
            path: self.server_path(path)?,
            acl,
            version: self::version(version),
        });
        match self.call(request, String::new(), None).await? {
            Response::SetACL(r) => Ok(r.stat),
            other => Err(unexpected(&other)),
        }
    }

    /// The names of the node's children, in the server's order (getChildren, op 8).
    ///
    /// # Errors
    /// `NoNode`, `NoAuth`.
    pub async fn get_children(&self, path: &str) -> Result<Vec<String>, Error> {
        let request = Request::GetChildren(PathWatchRequest {
            path: self.server_path(path)?,
            watch: false,
        });
        match self.call(request, String::new(), None).await? {
            Response::GetChildren(r) => Ok(r.children),
            other => Err(unexpected(&other)),
        }
    }

    /// The children's names and the node's own stat (getChildren2, op 12).
    ///
    /// # Errors
    /// `NoNode`, `NoAuth`.
    pub async fn get_children_with_stat(&self, path: &str) -> Result<(Vec<String>, Stat), Error> {
        let request = Request::GetChildren2(PathWatchRequest {
            path: self.server_path(path)?,
            watch: false,
        });
        match self.call(request, String::new(), None).await? {
            Response::GetChildren2(r) => Ok((r.children, r.stat)),
            other => Err(unexpected(&other)),
        }
    }

    /// As [`Client::get_children_with_stat`], leaving a one-shot child watch that fires on
    /// NodeChildrenChanged or NodeDeleted.
    ///
    /// # Errors
    /// As [`Client::get_children`].
    pub async fn get_children_w(
        &self,
        path: &str,
    ) -> Result<(Vec<String>, Stat, OneshotWatcher), Error> {
        let (watcher, tx) = OneshotWatcher::new();
        let server = self.server_path(path)?;
        let request = Request::GetChildren2(PathWatchRequest {
            path: server.clone(),
            watch: true,
        });
        match self
            .call(request, server, Some(WatchReg::Child(tx)))
            .await?
        {
            Response::GetChildren2(r) => Ok((r.children, r.stat, watcher)),
            other => Err(unexpected(&other)),
        }
    }

    /// The number of descendants of the node, itself excluded.
    ///
    /// # Errors
    /// `NoNode`, `NoAuth`.
    pub async fn get_all_children_number(&self, path: &str) -> Result<i32, Error> {
        let request = Request::GetAllChildrenNumber(PathRequest {
            path: self.server_path(path)?,
        });
        match self.call(request, String::new(), None).await? {
            Response::GetAllChildrenNumber(r) => Ok(r.total_number),
            other => Err(unexpected(&other)),
        }
    }

    /// The session's ephemeral nodes whose paths start with `prefix` (`/` for all), chroot
    /// stripped.
    pub async fn get_ephemerals(&self, prefix: &str) -> Result<Vec<String>, Error> {
        let request = Request::GetEphemerals(PathRequest {
            path: self.server_path(prefix)?,
        });
        match self.call(request, String::new(), None).await? {
            Response::GetEphemerals(r) => {
                Ok(r.ephemerals.iter().map(|p| self.user_path(p)).collect())
            }
            other => Err(unexpected(&other)),
        }
    }

    /// Waits until the server this client talks to has applied every write the leader had
    /// committed when the sync was issued (a no-op in standalone mode, but ordered like any
    /// request).
    ///
    /// # Errors
    /// `NoNode` is not checked by ZooKeeper 3.8; only the common errors apply.
    pub async fn sync(&self, path: &str) -> Result<(), Error> {
        let request = Request::Sync(PathRequest {
            path: self.server_path(path)?,
        });
        match self.call(request, String::new(), None).await? {
            Response::Sync(_) => Ok(()),
            other => Err(unexpected(&other)),
        }
    }

    /// Adds a persistent watch (or a persistent recursive one) and returns its event stream.
    /// The node need not exist. See [`PersistentWatcher`] for what the stream yields.
    ///
    /// # Errors
    /// `Unimplemented` from servers older than 3.6.
    pub async fn add_watch(
        &self,
        path: &str,
        mode: AddWatchMode,
    ) -> Result<PersistentWatcher, Error> {
        let server = self.server_path(path)?;
        let (tx, rx) = mpsc::unbounded_channel();
        let id = self.next_watch_id();
        let request = Request::AddWatch(AddWatchRequest {
            path: server.clone(),
            mode: mode.into(),
        });
        let reg = WatchReg::Persistent {
            recursive: mode == AddWatchMode::PersistentRecursive,
            id,
            tx,
        };
        match self.call(request, server.clone(), Some(reg)).await? {
            Response::AddWatch(_) => {
                let unwatch = Box::new(self.shared.commands.downgrade());
                Ok(PersistentWatcher::new(rx, id, server, unwatch))
            }
            other => Err(unexpected(&other)),
        }
    }

    /// Removes this session's watches of `kind` on `path` (removeWatches, op 18). Local
    /// watchers of that kind resolve with `DataWatchRemoved`/`ChildWatchRemoved`; with
    /// [`WatcherType::Any`], persistent streams get `PersistentWatchRemoved` and end.
    ///
    /// # Errors
    /// `NoWatcher` when the server holds no such watch; `MarshallingError` for the 3.9-only
    /// types `Persistent` and `PersistentRecursive` on a 3.8 server.
    pub async fn remove_watches(&self, path: &str, kind: WatcherType) -> Result<(), Error> {
        let server = self.server_path(path)?;
        let request = Request::RemoveWatches(RemoveWatchesRequest {
            path: server.clone(),
            watcher_type: kind.into(),
        });
        match self
            .call(request, server, Some(WatchReg::Remove(kind)))
            .await?
        {
            Response::RemoveWatches => Ok(()),
            other => Err(unexpected(&other)),
        }
    }

    /// The identities of this connection (whoAmI, op 107), e.g. `ip:127.0.0.1` and
    /// `digest:alice`.
    pub async fn who_am_i(&self) -> Result<Vec<ClientInfo>, Error> {
        match self.call(Request::WhoAmI, String::new(), None).await? {
            Response::WhoAmI(r) => Ok(r.client_info),
            other => Err(unexpected(&other)),
        }
    }

    /// The ensemble configuration: getData on `/zookeeper/config`, never chrooted. Empty on a
    /// standalone server.
    pub async fn get_config(&self) -> Result<(Vec<u8>, Stat), Error> {
        self.get_data_inner("/zookeeper/config".to_owned(), None)
            .await
    }
}
