//! Transactions: [`MultiBuilder`] for multi (op 14, all-or-nothing writes) and
//! [`MultiReadBuilder`] for multiRead (op 22, independent reads).
//!
//! Invariants: ops are sent in the order they were added, chrooted; results come back one per
//! op in that order, chroot stripped. A rolled-back multi is one error naming the first failing
//! op ([`Error::MultiFailed`]); a multiRead never fails as a whole for one op's outcome.

use shepherd_protocol::{
    CheckVersionRequest, DeleteRequest, MultiOp, MultiRequest, MultiResult, PathWatchRequest,
    Request, Response, SetDataRequest, Stat,
};

use crate::client::{Client, unexpected};
use crate::error::Error;
use crate::ops::CreateOptions;

/// The result of one op of a successful multi.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteResult {
    /// A create: the path, and the stat when the server sent one (ZooKeeper 3.8 sends none for
    /// plain creates, docs/protocol.md §10.2; containers and TTL nodes always have one).
    Created {
        /// The created path, chroot stripped.
        path: String,
        /// Its stat, if the server sent it.
        stat: Option<Stat>,
    },
    /// A delete.
    Deleted,
    /// A setData, with the new stat.
    DataSet(Stat),
    /// A check that passed.
    Checked,
}

/// The result of one op of a multiRead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadResult {
    /// A getData: data (null reads as empty) and stat.
    Data(Vec<u8>, Stat),
    /// A getChildren: the names.
    Children(Vec<String>),
}

/// Collects write ops for one atomic multi. Build it with [`Client::multi`].
#[derive(Debug)]
#[must_use = "a multi does nothing until committed"]
pub struct MultiBuilder<'a> {
    client: &'a Client,
    ops: Vec<MultiOp>,
    /// The first local error (a relative path, a bad TTL), reported by `commit`.
    error: Option<Error>,
}

/// Collects read ops for one multiRead. Build it with [`Client::multi_read`].
#[derive(Debug)]
#[must_use = "a multiRead does nothing until run"]
pub struct MultiReadBuilder<'a> {
    client: &'a Client,
    ops: Vec<MultiOp>,
    error: Option<Error>,
}

impl Client {
    /// Starts an atomic multi.
    pub fn multi(&self) -> MultiBuilder<'_> {
        MultiBuilder {
            client: self,
            ops: Vec::new(),
            error: None,
        }
    }

    /// Starts a multiRead.
    pub fn multi_read(&self) -> MultiReadBuilder<'_> {
        MultiReadBuilder {
            client: self,
            ops: Vec::new(),
            error: None,
        }
    }
}

impl MultiBuilder<'_> {
    fn push(mut self, op: Result<MultiOp, Error>) -> Self {
        match op {
            Ok(op) => self.ops.push(op),
            Err(e) => {
                self.error.get_or_insert(e);
            }
        }
        self
    }

    /// Adds a create (create2, or createContainer/createTTL for those modes).
    pub fn create(self, path: &str, data: &[u8], options: &CreateOptions) -> Self {
        let op = self
            .client
            .server_path(path)
            .and_then(|p| options.request(p, data))
            .map(|request| match request {
                Request::CreateContainer(r) => MultiOp::CreateContainer(r),
                Request::CreateTTL(r) => MultiOp::CreateTTL(r),
                Request::Create2(r) => MultiOp::Create2(r),
                _ => unreachable!("CreateOptions builds only create requests"),
            });
        self.push(op)
    }

    /// Adds a delete (`None`: any version).
    pub fn delete(self, path: &str, version: Option<i32>) -> Self {
        let op = self.client.server_path(path).map(|path| {
            MultiOp::Delete(DeleteRequest {
                path,
                version: version.unwrap_or(-1),
            })
        });
        self.push(op)
    }

    /// Adds a setData (`None`: any version).
    pub fn set_data(self, path: &str, data: &[u8], version: Option<i32>) -> Self {
        let op = self.client.server_path(path).map(|path| {
            MultiOp::SetData(SetDataRequest {
                path,
                data: Some(data.to_vec()),
                version: version.unwrap_or(-1),
            })
        });
        self.push(op)
    }

    /// Adds a version check (`-1` only checks that the node exists).
    pub fn check(self, path: &str, version: i32) -> Self {
        let op = self
            .client
            .server_path(path)
            .map(|path| MultiOp::Check(CheckVersionRequest { path, version }));
        self.push(op)
    }

    /// Sends the multi: either every op is applied, or none.
    ///
    /// # Errors
    /// [`Error::MultiFailed`] with the first failing op's index and code when the server rolled
    /// it back; the first local error recorded while building; the common errors of
    /// [`Client`] (after a `ConnectionLoss` the multi may or may not have been applied).
    pub async fn commit(self) -> Result<Vec<WriteResult>, Error> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let client = self.client;
        let request = Request::Multi(MultiRequest { ops: self.ops });
        let results = match client.call(request, String::new(), None).await? {
            Response::Multi(r) => r.results,
            other => return Err(unexpected(&other)),
        };
        let failed = results
            .iter()
            .enumerate()
            .find(|(_, r)| matches!(r, MultiResult::Error(c) if *c != 0));
        if let Some((index, MultiResult::Error(code))) = failed {
            return Err(match Error::from_code(*code) {
                Error::Keeper(code) => Error::MultiFailed { index, code },
                other => other,
            });
        }
        results
            .into_iter()
            .map(|r| match r {
                MultiResult::Create(path) => Ok(WriteResult::Created {
                    path: client.user_path(&path),
                    stat: None,
                }),
                MultiResult::Create2(r) => Ok(WriteResult::Created {
                    path: client.user_path(&r.path),
                    stat: Some(r.stat),
                }),
                MultiResult::Delete => Ok(WriteResult::Deleted),
                MultiResult::SetData(stat) => Ok(WriteResult::DataSet(stat)),
                MultiResult::Check => Ok(WriteResult::Checked),
                other => Err(Error::Protocol(format!(
                    "unexpected multi result {other:?}"
                ))),
            })
            .collect()
    }
}

impl MultiReadBuilder<'_> {
    fn push(mut self, path: &str, op: fn(PathWatchRequest) -> MultiOp) -> Self {
        match self.client.server_path(path) {
            Ok(path) => self.ops.push(op(PathWatchRequest { path, watch: false })),
            Err(e) => {
                self.error.get_or_insert(e);
            }
        }
        self
    }

    /// Adds a getData.
    pub fn get_data(self, path: &str) -> Self {
        self.push(path, MultiOp::GetData)
    }

    /// Adds a getChildren.
    pub fn get_children(self, path: &str) -> Self {
        self.push(path, MultiOp::GetChildren)
    }

    /// Sends the multiRead. Each op succeeds or fails on its own: a missing node is an
    /// `Err(Error::Keeper(NoNode))` in its slot. No watch is left (docs/protocol.md §10.1).
    ///
    /// # Errors
    /// The first local error recorded while building; the common errors of [`Client`].
    pub async fn run(self) -> Result<Vec<Result<ReadResult, Error>>, Error> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let request = Request::MultiRead(MultiRequest { ops: self.ops });
        let results = match self.client.call(request, String::new(), None).await? {
            Response::MultiRead(r) => r.results,
            other => return Err(unexpected(&other)),
        };
        results
            .into_iter()
            .map(|r| match r {
                MultiResult::GetData(r) => {
                    Ok(Ok(ReadResult::Data(r.data.unwrap_or_default(), r.stat)))
                }
                MultiResult::GetChildren(names) => Ok(Ok(ReadResult::Children(names))),
                MultiResult::Error(code) => Ok(Err(Error::from_code(code))),
                other => Err(Error::Protocol(format!(
                    "unexpected multiRead result {other:?}"
                ))),
            })
            .collect()
    }
}
