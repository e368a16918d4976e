//! The setup the client's test binaries share: a session and a fresh node for a test's nodes
//! to live under, so that tests on one server never see each other's nodes.

use shepherd_client::{Client, CreateOptions};
use shepherd_testkit::{TestServer, connect, unique};

/// A fresh persistent node named after `name`, created by `client`; panics if it cannot be.
pub async fn root(client: &Client, name: &str) -> String {
    let root = unique(name);
    client
        .create(&root, b"", &CreateOptions::persistent())
        .await
        .expect("create test root");
    root
}

/// A session on `server` and a fresh [`root`] it created.
pub async fn session_with_root(server: &TestServer, name: &str) -> (Client, String) {
    let client = connect(&server.connect).await;
    let root = root(&client, name).await;
    (client, root)
}
