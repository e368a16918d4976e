//! Ending a session on purpose, on either kind of server.
//!
//! The embedded server has a control for it ([`Controls::expire_session`]). Real ZooKeeper
//! has none, and waiting for a timeout is slow; instead a second connection takes the session
//! over with its id and password (the server drops the first connection) and closes it. The
//! session's own client must talk through a [`Proxy`] so that its reconnects can be held
//! meanwhile: it must not win the session back before the close.
//!
//! Invariant: when these return, the session is gone on the server; [`TestServer::expire`] also
//! waits until the client has seen `Expired`.
//!
//! [`Controls::expire_session`]: shepherd_server::Controls::expire_session

use std::future::Future;

use shepherd_client::{Client, SessionState, SessionStatus};
use tokio::sync::watch;

use crate::proxy::Proxy;
use crate::servers::TestServer;
use crate::wait::within;

impl TestServer {
    /// Ends `client`'s session the way the server itself would, and returns once the client has
    /// seen `Expired`. On the embedded server: `expire_session` (ephemerals deleted, the
    /// connection closed, the client told on reconnecting). On real ZooKeeper:
    /// [`expire_by_take_over`], so `client` must talk through `proxy` there.
    pub async fn expire(&self, client: &Client, proxy: &Proxy) {
        match self.embedded() {
            Some(server) => {
                let status = client.status_watch();
                server.controls().expire_session(client.session_id());
                seen_expired(status).await;
            }
            None => expire_by_take_over(client, &self.connect, proxy).await,
        }
    }

    /// Ends session `id` (password `password`), for a client of any library: on the embedded
    /// server by `expire_session`, on real ZooKeeper by [`take_over_and_close`] (the session's
    /// client must talk through `proxy`, and `disconnected` must resolve once it has lost its
    /// connection).
    pub async fn expire_session(
        &self,
        id: i64,
        password: &[u8],
        proxy: &Proxy,
        disconnected: impl Future<Output = ()>,
    ) {
        match self.embedded() {
            Some(server) => server.controls().expire_session(id),
            None => take_over_and_close(&self.connect, id, password, proxy, disconnected).await,
        }
    }
}

/// Ends `client`'s session on the server at `connect` (of either kind) by
/// [`take_over_and_close`], and returns once the client has seen `Expired`. `client` must talk
/// through `proxy`. [`TestServer::expire`] uses it on real ZooKeeper; a test that means the
/// take-over itself uses it on the embedded server too.
pub async fn expire_by_take_over(client: &Client, connect: &str, proxy: &Proxy) {
    let status = client.status_watch();
    let mut lost = status.clone();
    let disconnected = async move {
        lost.wait_for(|s| s.state == SessionState::Disconnected)
            .await
            .expect("status");
    };
    take_over_and_close(
        connect,
        client.session_id(),
        client.session_password(),
        proxy,
        disconnected,
    )
    .await;
    seen_expired(status).await;
}

/// Waits until `status` says `Expired` (a session's last state, so the current one counts).
async fn seen_expired(mut status: watch::Receiver<SessionStatus>) {
    within(
        "the client to see its session expired",
        status.wait_for(|s| s.state == SessionState::Expired),
    )
    .await
    .expect("status");
}

/// Ends session `id` on the server at `connect` by taking it over: new connections through
/// `proxy` are held, a second client attaches to the session (the server drops the first
/// connection; `disconnected` resolves once the session's own client has noticed) and closes
/// it, then the proxy admits connections again, so the first client learns of the expiry on
/// reconnecting.
pub async fn take_over_and_close(
    connect: &str,
    id: i64,
    password: &[u8],
    proxy: &Proxy,
    disconnected: impl Future<Output = ()>,
) {
    proxy.hold();
    let twin = within(
        "the session take-over",
        Client::builder().session(id, password).connect(connect),
    )
    .await
    .expect("take the session over");
    assert_eq!(
        twin.session_id(),
        id,
        "the twin attached to the same session"
    );
    within("the first connection to drop", disconnected).await;
    within("closing the taken-over session", twin.close())
        .await
        .expect("close the twin");
    proxy.admit();
}
