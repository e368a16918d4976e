//! Each test-only broken mode does exactly the lie it is named for, seen from a client: what
//! the checkers' tests in `broken.rs` rely on.

use shepherd_client::{CreateMode, CreateOptions};
use shepherd_protocol::OpCode;
use shepherd_server::{Fault, FaultRule};
use shepherd_testkit::{connect, embedded, unique, within};

#[tokio::test]
async fn ack_before_apply_answers_a_set_data_it_never_applied() {
    let server = embedded().await;
    let client = connect(&server.connect).await;
    let path = unique("ack");
    within(
        "create",
        client.create(&path, b"old", &CreateOptions::persistent()),
    )
    .await
    .expect("create");
    let handle = server.embedded().expect("embedded");
    handle.controls().add_fault(
        FaultRule::new(Fault::AckBeforeApply)
            .opcode(OpCode::SetData)
            .always(),
    );
    let stat = within("set", client.set_data(&path, b"new", Some(0)))
        .await
        .expect("the broken server acknowledges the write");
    assert_eq!(stat.version, 0, "the stat is the unchanged node's");
    let (data, _) = within("get", client.get_data(&path)).await.expect("get");
    assert_eq!(data, b"old", "the acknowledged write was never applied");
    server.shutdown().await;
}

#[tokio::test]
async fn stale_read_answers_the_first_read_again() {
    let server = embedded().await;
    let client = connect(&server.connect).await;
    let path = unique("stale");
    within(
        "create",
        client.create(&path, b"1", &CreateOptions::persistent()),
    )
    .await
    .expect("create");
    let handle = server.embedded().expect("embedded");
    handle.controls().add_fault(
        FaultRule::new(Fault::stale_read())
            .opcode(OpCode::GetData)
            .always(),
    );
    let (first, _) = within("get", client.get_data(&path)).await.expect("get");
    within("set", client.set_data(&path, b"2", None))
        .await
        .expect("set");
    let (again, stat) = within("get", client.get_data(&path)).await.expect("get");
    assert_eq!((first.as_slice(), again.as_slice()), (&b"1"[..], &b"1"[..]));
    assert_eq!(stat.version, 0, "the stat is the first answer's too");
    server.shutdown().await;
}

#[tokio::test]
async fn hide_lowest_child_hides_another_sessions_lowest_ephemeral_only() {
    let server = embedded().await;
    let (holder, contender) = (
        connect(&server.connect).await,
        connect(&server.connect).await,
    );
    let dir = unique("hide");
    within(
        "dir",
        holder.create(&dir, b"", &CreateOptions::persistent()),
    )
    .await
    .expect("create the folder");
    let seq = CreateOptions::new(CreateMode::EphemeralSequential);
    let prefix = format!("{dir}/lock-");
    let (first, _) = within("first", holder.create(&prefix, b"", &seq))
        .await
        .expect("create");
    let (second, _) = within("second", contender.create(&prefix, b"", &seq))
        .await
        .expect("create");
    let name = |p: &str| p.rsplit('/').next().unwrap_or_default().to_owned();
    let handle = server.embedded().expect("embedded");
    handle
        .controls()
        .add_fault(FaultRule::new(Fault::HideLowestChild).always());
    let mut seen_by_holder = within("list", holder.get_children(&dir))
        .await
        .expect("list");
    seen_by_holder.sort();
    assert_eq!(seen_by_holder, vec![name(&first), name(&second)]);
    let seen_by_contender = within("list", contender.get_children(&dir))
        .await
        .expect("list");
    assert_eq!(
        seen_by_contender,
        vec![name(&second)],
        "the holder's node is hidden"
    );
    server.shutdown().await;
}
