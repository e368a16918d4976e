//! The proxy's controls against the embedded server, through shepherd-client: a cut after an
//! armed request (applied, reply withheld), pause and resume, and a held connection.

use std::time::Duration;

use shepherd_client::{CreateOptions, Error, SessionState};
use shepherd_protocol::OpCode;
use shepherd_testkit::{CutAfter, Proxy, connect, embedded, unique, wait_state, within};

#[tokio::test]
async fn a_cut_after_the_nth_matching_request_applies_it_and_withholds_its_reply() {
    let server = embedded().await;
    let proxy = Proxy::start(&server.connect).await;
    let client = connect(proxy.addr()).await;
    let observer = connect(&server.connect).await;
    let root = unique("cut");
    client
        .create(&root, b"", &CreateOptions::persistent())
        .await
        .unwrap();
    let mut cuts = proxy.cuts_watch();
    proxy.cut_after(
        CutAfter::request([OpCode::Create, OpCode::Create2])
            .path_contains("marked")
            .nth(2),
    );
    for name in ["plain", "marked-1"] {
        let path = format!("{root}/{name}");
        client
            .create(&path, b"", &CreateOptions::persistent())
            .await
            .unwrap();
    }
    let lost = client
        .create(
            &format!("{root}/marked-2"),
            b"",
            &CreateOptions::persistent(),
        )
        .await;
    assert!(matches!(lost, Err(Error::ConnectionLoss)), "{lost:?}");
    within("the cut", cuts.wait_for(|n| *n == 1)).await.unwrap();
    assert_eq!(proxy.cuts(), 1);
    // Applied all the same; spent, so the next one goes through.
    let marked = format!("{root}/marked-2");
    assert!(observer.exists(&marked).await.unwrap().is_some());
    wait_state(&mut client.status_watch(), SessionState::Connected).await;
    client
        .create(
            &format!("{root}/marked-3"),
            b"",
            &CreateOptions::persistent(),
        )
        .await
        .unwrap();
    assert_eq!(proxy.cuts(), 1);
}

#[tokio::test]
async fn paused_forwarding_delays_and_resume_delivers() {
    let server = embedded().await;
    let proxy = Proxy::start(&server.connect).await;
    let client = connect(proxy.addr()).await;
    proxy.pause();
    let mut pending = Box::pin(client.exists("/"));
    // Nothing can come back while paused.
    assert!(
        tokio::time::timeout(Duration::from_millis(200), &mut pending)
            .await
            .is_err()
    );
    proxy.resume();
    assert!(
        within("the reply after resume", pending)
            .await
            .unwrap()
            .is_some()
    );
}

#[tokio::test]
async fn held_connections_wait_for_admit_and_cut_all_closes_them() {
    let server = embedded().await;
    let proxy = Proxy::start(&server.connect).await;
    proxy.hold();
    let connecting = tokio::spawn({
        let addr = proxy.addr().to_owned();
        async move { connect(&addr).await }
    });
    within("the accept", async {
        while proxy.accepted() == 0 {
            tokio::task::yield_now().await;
        }
    })
    .await;
    assert!(!connecting.is_finished());
    proxy.admit();
    let client = within("the admitted session", connecting).await.unwrap();
    let mut status = client.status_watch();
    proxy.cut_all();
    wait_state(&mut status, SessionState::Disconnected).await;
    wait_state(&mut status, SessionState::Connected).await;
    assert_eq!(proxy.accepted(), 2);
}
