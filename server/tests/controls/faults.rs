//! Fault rules: a request dropped before or after it is applied, rejected with a code, or
//! delayed, matched by session, opcode and path.

use std::time::Duration;

use shepherd_client::{CreateOptions, Error, SessionState};
use shepherd_protocol::{CreateMode, ErrorCode, EventType, OpCode, Reply};
use shepherd_server::{Fault, FaultRule};
use shepherd_testkit::{
    connect, create, exists, get_data, reply_header, set_data, wait_state, within,
};

use crate::{exists_in, raw, server};

#[tokio::test]
async fn apply_then_drop_is_the_lost_create() {
    let server = server().await;
    let c = connect(&server.connect_string()).await;
    c.create("/locks", b"", &CreateOptions::persistent())
        .await
        .unwrap();
    let rule = server.controls().add_fault(
        FaultRule::new(Fault::ApplyThenDrop)
            .opcode(OpCode::Create)
            .path_prefix("/locks")
            .times(1),
    );
    let lost = c.create("/locks/a", b"", &CreateOptions::ephemeral()).await;
    assert!(matches!(lost, Err(Error::ConnectionLoss)), "{lost:?}");
    assert!(within("the rule", server.controls().fault_fired(rule)).await);
    assert_eq!(server.controls().fault_fire_count(rule), Some(1));
    // Applied, in the same session: the client finds it once reconnected.
    assert!(exists_in(&server, "/locks/a"));
    wait_state(&mut c.status_watch(), SessionState::Connected).await;
    let stat = c.exists("/locks/a").await.unwrap().expect("created");
    assert_eq!(stat.ephemeral_owner, c.session_id());
    // Spent: the next create goes through.
    c.create("/locks/b", b"", &CreateOptions::persistent())
        .await
        .unwrap();
    assert!(server.controls().remove_fault(rule));
    assert!(!server.controls().fault_fired(rule).await);
}

#[tokio::test]
async fn drop_before_apply_closes_without_applying() {
    let server = server().await;
    let mut raw = raw(&server, 30_000).await;
    let rule = server.controls().add_fault(
        FaultRule::new(Fault::DropBeforeApply)
            .session(raw.session_id())
            .path_prefix("/x"),
    );
    let zxid = server.controls().last_zxid();
    raw.send(&create("/x", b"d", CreateMode::Persistent)).await;
    assert!(raw.next().await.is_none(), "closed, no reply");
    assert!(server.controls().fault_fired(rule).await);
    assert!(!exists_in(&server, "/x"));
    assert_eq!(server.controls().last_zxid(), zxid);
    // The session lives on.
    assert!(server.controls().session(raw.session_id()).is_some());
}

#[tokio::test]
async fn a_multi_matches_by_any_sub_op_path() {
    let server = server().await;
    let c = connect(&server.connect_string()).await;
    server.controls().add_fault(
        FaultRule::new(Fault::Reject(ErrorCode::SystemError))
            .opcode(OpCode::Multi)
            .path_prefix("/m/"),
    );
    c.create("/m", b"", &CreateOptions::persistent())
        .await
        .unwrap();
    let result = c
        .multi()
        .create("/elsewhere", b"", &CreateOptions::persistent())
        .create("/m/a", b"", &CreateOptions::persistent())
        .commit()
        .await;
    assert!(
        matches!(result, Err(Error::Keeper(ErrorCode::SystemError))),
        "{result:?}"
    );
    assert!(!exists_in(&server, "/elsewhere"));
}

#[tokio::test]
async fn reject_answers_the_code_with_the_current_zxid_and_applies_nothing() {
    let server = server().await;
    let mut raw = raw(&server, 30_000).await;
    raw.call(&create("/r", b"d", CreateMode::Persistent)).await;
    let rule = server.controls().add_fault(
        FaultRule::new(Fault::Reject(ErrorCode::BadVersion))
            .opcode(OpCode::SetData)
            .always(),
    );
    let zxid = server.controls().last_zxid();
    for _ in 0..2 {
        let reply = raw.call(&set_data("/r", b"new")).await;
        assert!(matches!(reply, Reply::Err(_)));
        assert_eq!(reply_header(&reply).err, i32::from(ErrorCode::BadVersion));
        assert_eq!(reply_header(&reply).zxid, zxid);
    }
    assert_eq!(server.controls().last_zxid(), zxid);
    assert_eq!(server.controls().fault_fire_count(rule), Some(2));
    // Pings do not match a rule without an opcode filter; other opcodes do not match this one.
    assert!(matches!(raw.call(&get_data("/r")).await, Reply::Ok(..)));
    let stat = server
        .controls()
        .dump_tree()
        .into_iter()
        .find(|n| n.path == "/r")
        .unwrap();
    assert_eq!(stat.stat.version, 0);
}

#[tokio::test]
async fn a_delayed_reply_holds_later_frames_behind_it_but_not_later_requests() {
    let server = server().await;
    let mut slow = raw(&server, 30_000).await;
    let mut watcher = raw(&server, 30_000).await;
    slow.call(&create("/d", b"d", CreateMode::Persistent)).await;
    watcher.call(&exists("/d2", true)).await;
    let delay = Duration::from_millis(400);
    server.controls().add_fault(
        FaultRule::new(Fault::Delay(delay))
            .session(slow.session_id())
            .opcode(OpCode::GetData),
    );
    let first = slow.send(&get_data("/d")).await;
    let second = slow
        .send(&create("/d2", b"d", CreateMode::Persistent))
        .await;
    // The create behind the delayed read is applied at once: the other session hears of it
    // while the read's reply is still held. Shown by which comes first, not by a clock: the
    // slow session's reader (checked first) must not have had a frame by then. (Peer buffers
    // what it reads, so the losing read, dropped, loses nothing.)
    let event = tokio::select! {
        biased;
        early = slow.next() => panic!("the delayed reply came before the event: {early:?}"),
        event = watcher.next() => event.unwrap(),
    };
    match event {
        Reply::Event(_, e) => assert_eq!(e.event_type, EventType::NodeCreated),
        other => panic!("{other:?}"),
    }
    let replies = [slow.next().await.unwrap(), slow.next().await.unwrap()];
    assert_eq!(
        [reply_header(&replies[0]).xid, reply_header(&replies[1]).xid],
        [first, second]
    );
}
