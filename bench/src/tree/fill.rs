//! Creates a [`Shape`]'s tree on a server: the folders first, in order, on one session (a
//! session's requests are applied in the order sent, so each folder's create follows its
//! parent's even with many in flight), then the leaves, spread over every session, each
//! keeping `in_flight` creates outstanding.
//!
//! Invariant: a create that fails (NodeExists included: the tree must be new) is counted and
//! the first such error kept, so that a partial tree is never reported as the whole one.

use futures_util::{StreamExt, stream};
use shepherd_client::{Client, CreateOptions};

use super::shape::Shape;

/// Data bytes: every node's data is a prefix of this.
static DATA: [u8; super::shape::MAX_DATA] = [b'd'; super::shape::MAX_DATA];

/// How a fill went.
#[derive(Debug, Default)]
pub struct Filled {
    /// Nodes created.
    pub created: usize,
    /// Creates that failed.
    pub failed: usize,
    /// The first failure.
    pub first_error: Option<String>,
}

impl Filled {
    fn count(&mut self, path: &str, outcome: Result<(), shepherd_client::Error>) {
        match outcome {
            Ok(()) => self.created += 1,
            Err(error) => {
                self.failed += 1;
                self.first_error
                    .get_or_insert_with(|| format!("create {path}: {error}"));
            }
        }
    }
}

/// Creates the whole tree of `shape` through `clients`.
pub async fn fill(shape: &Shape, clients: &[Client], in_flight: usize) -> Filled {
    let mut filled = Filled::default();
    let options = CreateOptions::persistent();
    let create = |client: &Client, path: String, data: usize| {
        let options = &options;
        let client = client.clone();
        async move {
            let outcome = client.create(&path, &DATA[..data], options).await;
            (path, outcome.map(|_| ()))
        }
    };
    let mut folders = stream::iter(shape.folders())
        .map(|(path, data)| create(&clients[0], path, data))
        .buffered(in_flight);
    while let Some((path, outcome)) = folders.next().await {
        filled.count(&path, outcome);
    }
    if filled.failed > 0 {
        return filled;
    }
    let sessions = clients.len();
    let lanes = clients.iter().enumerate().map(|(number, client)| {
        let create = &create;
        stream::iter((number..shape.leaves()).step_by(sessions))
            .map(move |index| {
                let (path, data) = shape.leaf(index);
                create(client, path, data)
            })
            .buffer_unordered(in_flight)
    });
    let mut leaves = stream::select_all(lanes);
    while let Some((path, outcome)) = leaves.next().await {
        filled.count(&path, outcome);
    }
    filled
}
