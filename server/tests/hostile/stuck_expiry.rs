//! The end of a session reaches its connection at once, however stuck the connection's
//! writing is.

use shepherd_testkit::{get_data, within};
use tokio::io::AsyncReadExt;

use crate::pipe::{BIG, bystander_is_served, bytes_until_closed, create_big, server, session};

/// A peer asks for a 1 MB reply through a 4 KiB pipe and stops reading after its first four
/// bytes, so the server is mid-write. Expiring the session closes the connection at once: the
/// peer gets what was already in the pipe, then the end of the stream, not the rest of the
/// reply. Other sessions go on.
#[tokio::test]
async fn an_expired_session_stuck_mid_write_is_closed_at_once() {
    let server = server().await;
    create_big(&server).await;
    let mut stuck = session(&server, 4096, 30_000).await;
    let id = stuck.session_id();
    stuck.send(&get_data("/big")).await;
    let mut stream = stuck.into_inner();
    // The reply's length prefix: the server has started writing it.
    let mut prefix = [0; 4];
    within("the reply to start", stream.read_exact(&mut prefix))
        .await
        .expect("readable");
    assert!(i32::from_be_bytes(prefix) as usize > BIG);

    server.controls().expire_session(id);
    let rest = bytes_until_closed(&mut stream).await;
    assert!(rest <= 4096, "{rest} bytes came after the expiry");
    assert!(server.controls().session(id).is_none());
    bystander_is_served(&server, "after-expiry").await;
}
