//! A create of about 1 MB carrying 45 000 ACL entries, all distinct and valid but the last:
//! before any other check, ZooKeeper's duplicate removal scans the list once per entry (about
//! 10⁹ comparisons here). Shepherd's is one pass, which must run to the end to meet the invalid
//! entry, so the request is answered (InvalidACL, as ZooKeeper answers too) and the bystander is
//! served as before. How long the core lock is
//! held for it is measured by a benchmark, not asserted.

use shepherd_testkit::huge_acl_create;

use super::{bystander_is_served, err, send, server, session};

#[tokio::test]
async fn a_create_with_45_000_acl_entries_is_answered_and_others_are_served() {
    let server = server().await;
    let mut attacker = session(&server).await;
    let mut bystander = session(&server).await;
    for round in 0..5 {
        send(&mut attacker, &huge_acl_create(&format!("/huge{round}"))).await;
    }
    for round in 0..5 {
        let reply = attacker
            .next()
            .await
            .expect("an answer to each huge create");
        assert_eq!(err(&reply), -114, "InvalidACL, round {round}");
        bystander_is_served(&mut bystander, &format!("/by{round}")).await;
    }
    // The attacker's session is fine; it was only told no.
    let ok = attacker
        .call(&shepherd_testkit::exists("/by0", false))
        .await;
    assert_eq!(err(&ok), 0);
    server.shutdown().await;
}
