//! [`Client::create_all`]: a create that first makes the missing ancestors, and that takes an
//! existing node as done: the "create unless it exists" every recipe and benchmark needs for
//! its folders. The ancestors are kazoo's `ensure_path`/`makepath` ones (the leaf's ACL), and
//! Curator's `creatingParentsIfNeeded().withACL(acl, true)` ones, or, for a container leaf,
//! `creatingParentContainersIfNeeded()`'s. Unlike both, an existing leaf is no error.
//!
//! Invariant: only a `NoNode` answer moves the walk up (to the parent), and only a created or
//! already existing ancestor moves it down again; so no request is sent for an ancestor that
//! was not found missing, and the leaf is created last.

use shepherd_protocol::{CreateMode, Stat};

use crate::client::Client;
use crate::error::Error;
use crate::ops::CreateOptions;

impl Client {
    /// Creates `path` with `data` and `options` after creating each missing ancestor (empty,
    /// with `options`' ACL, as kazoo's `makepath` and Curator's `withACL(acl, true)` give it;
    /// a container when `options` makes a container, as Curator's
    /// `creatingParentContainersIfNeeded`, else persistent), and answers `Ok(None)` when `path`
    /// already exists: nothing was created then, and its ancestors exist too. A created node is
    /// answered as [`Client::create`] answers it. Since the ancestors take the leaf's ACL, an
    /// ACL that does not give this session CREATE stops the walk with `NoAuth` below the first
    /// ancestor made: create such a leaf's ancestors first, with an ACL of their own.
    ///
    /// Costs one create when the parent exists; otherwise two per missing ancestor (the one
    /// that found it missing and the one that makes it), found from the leaf up.
    ///
    /// # Errors
    /// As [`Client::create`], except that `NodeExists` for `path` is `Ok(None)` and for an
    /// ancestor is taken as done, and `NoNode` for an ancestor is answered by creating it;
    /// `NoNode` still comes back when the top-level ancestor cannot be made, that is when the
    /// client's chroot node does not exist (it is never created here, as ZooKeeper's own
    /// clients never create it). `NoChildrenForEphemerals` when an ancestor is ephemeral.
    ///
    /// # Ordering
    /// The ancestors are created top down, then `path`: another session sees an ancestor before
    /// its child. The walk is not atomic: a concurrent delete of an ancestor is answered by
    /// creating it again; a concurrent create of any of these nodes is taken as done.
    ///
    /// # Cancellation
    /// Dropping the future, or an [`Error::ConnectionLoss`], may leave some ancestors created
    /// and `path` created or not. Calling again with the same arguments finishes the job and
    /// is safe for a non-sequential `path`: if the first call created it, the second answers
    /// `Ok(None)`. A sequential `path` may have been created once already, as with
    /// [`Client::create`].
    pub async fn create_all(
        &self,
        path: &str,
        data: &[u8],
        options: &CreateOptions,
    ) -> Result<Option<(String, Stat)>, Error> {
        let ancestor = CreateOptions::new(if options.mode == CreateMode::Container {
            CreateMode::Container
        } else {
            CreateMode::Persistent
        })
        .with_acl(options.acl.clone());
        // The ancestors found missing and not yet made, the deepest first: the last one is the
        // highest, the next to create.
        let mut missing: Vec<&str> = Vec::new();
        loop {
            match missing.last() {
                None => match self.create(path, data, options).await {
                    Ok(created) => return Ok(Some(created)),
                    Err(e) if e.is_node_exists() => return Ok(None),
                    Err(e) if e.is_no_node() => missing.push(parent(path).ok_or(e)?),
                    Err(e) => return Err(e),
                },
                Some(&at) => match self.create(at, b"", &ancestor).await {
                    Ok(_) => {
                        missing.pop();
                    }
                    Err(e) if e.is_node_exists() => {
                        missing.pop();
                    }
                    Err(e) if e.is_no_node() => missing.push(parent(at).ok_or(e)?),
                    Err(e) => return Err(e),
                },
            }
        }
    }
}

/// The parent of an absolute path, `None` when it is the root: the root always exists, so a
/// `NoNode` there is the chroot's, which is not ours to create.
fn parent(path: &str) -> Option<&str> {
    match path.rfind('/') {
        Some(0) | None => None,
        Some(at) => Some(&path[..at]),
    }
}

#[cfg(test)]
mod tests {
    use super::parent;

    #[test]
    fn parent_stops_below_the_root() {
        assert_eq!(parent("/a/b/c"), Some("/a/b"));
        assert_eq!(parent("/a/b"), Some("/a"));
        assert_eq!(parent("/a"), None);
        assert_eq!(parent("/"), None);
    }
}
