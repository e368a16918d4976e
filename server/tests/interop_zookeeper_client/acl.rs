//! ACLs and authentication: getACL/setACL, digest identities, missing permissions, and an
//! unknown auth scheme failing the session.

use crate::*;
use shepherd_testkit::on_both_servers;

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn acl_get_and_set(server) {
        everywhere(server, "acl", acl_get_and_set_on).await;
    }
}

async fn acl_get_and_set_on(ctx: Ctx) {
    let client = ctx.client().await;
    let n = ctx.path("n");
    let (created, _) = client.create(&n, b"", &PERSISTENT).await.unwrap();
    let (acls, stat) = client.get_acl(&n).await.unwrap();
    assert_eq!(acls, vec![acl(Permission::ALL, "world", "anyone")]);
    assert_eq!(stat, created);

    let (_, _, data_watch) = client.get_and_watch_data(&n).await.unwrap();
    let mut data_watch = oneshot(data_watch);
    let read_only = [acl(Permission::READ, "world", "anyone")];
    assert_eq!(
        client.set_acl(&n, &read_only, Some(1)).await.unwrap_err(),
        Error::BadVersion,
        "the expected version is the aversion"
    );
    let stat = client.set_acl(&n, &read_only, Some(0)).await.unwrap();
    assert_eq!(
        stat,
        Stat {
            aversion: 1,
            ..created
        },
        "setACL moves only the aversion"
    );
    assert_eq!(
        client.get_acl(&n).await.unwrap(),
        (read_only.to_vec(), stat)
    );
    barrier(&client).await;
    assert_pending(
        &mut data_watch,
        "setACL fires no watch (docs/protocol.md §6.7)",
    );

    // READ only: reads pass, the rest is refused.
    assert_eq!(client.get_data(&n).await.unwrap().1, stat);
    assert!(client.list_children(&n).await.unwrap().is_empty());
    assert_eq!(
        client.set_data(&n, b"x", None).await.unwrap_err(),
        Error::NoAuth
    );
    assert_eq!(
        client
            .create(&ctx.path("n/c"), b"", &PERSISTENT)
            .await
            .unwrap_err(),
        Error::NoAuth
    );
    assert_eq!(
        client.set_acl(&n, &read_only, None).await.unwrap_err(),
        Error::NoAuth,
        "setACL needs ADMIN"
    );
    // setACL validates the list before looking the node up (docs/protocol.md §6.7).
    assert_eq!(
        client
            .set_acl(&ctx.path("missing"), &[], None)
            .await
            .unwrap_err(),
        Error::InvalidAcl
    );
    assert_eq!(
        client
            .set_acl(&ctx.path("missing"), &read_only, None)
            .await
            .unwrap_err(),
        Error::NoNode
    );
    assert_eq!(
        client.get_acl(&ctx.path("missing")).await.unwrap_err(),
        Error::NoNode
    );

    // A digest id is masked for a reader without ADMIN (docs/protocol.md §6.6).
    let mixed = [
        acl(Permission::READ, "world", "anyone"),
        acl(Permission::ALL, "digest", ALICE_ID),
    ];
    let q = ctx.path("q");
    client
        .create(
            &q,
            b"",
            &CreateMode::Persistent.with_acls(Acls::new(&mixed)),
        )
        .await
        .unwrap();
    assert_eq!(
        client.get_acl(&q).await.unwrap().0,
        vec![
            acl(Permission::READ, "world", "anyone"),
            acl(Permission::ALL, "digest", "alice:x"),
        ]
    );
    let alice = ctx.alice().await;
    assert_eq!(alice.get_acl(&q).await.unwrap().0, mixed.to_vec());

    // No permission at all: even getACL is refused; exists is not checked on 3.8.0 (docs/protocol.md §12.2).
    let none = ctx.path("none");
    let nothing = [acl(Permission::NONE, "world", "anyone")];
    client
        .create(
            &none,
            b"",
            &CreateMode::Persistent.with_acls(Acls::new(&nothing)),
        )
        .await
        .unwrap();
    assert_eq!(client.get_acl(&none).await.unwrap_err(), Error::NoAuth);
    assert_eq!(client.get_data(&none).await.unwrap_err(), Error::NoAuth);
    assert!(client.check_stat(&none).await.unwrap().is_some());

    // ip ACLs match the client's address.
    let local = [acl(Permission::ALL, "ip", "127.0.0.1")];
    client
        .create(
            &ctx.path("local"),
            b"l",
            &CreateMode::Persistent.with_acls(Acls::new(&local)),
        )
        .await
        .unwrap();
    assert_eq!(client.get_data(&ctx.path("local")).await.unwrap().0, b"l");
    let elsewhere = [acl(Permission::ALL, "ip", "10.0.0.0/8")];
    client
        .create(
            &ctx.path("far"),
            b"",
            &CreateMode::Persistent.with_acls(Acls::new(&elsewhere)),
        )
        .await
        .unwrap();
    assert_eq!(
        client.get_data(&ctx.path("far")).await.unwrap_err(),
        Error::NoAuth
    );
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn digest_auth_and_no_auth(server) {
        everywhere(server, "auth", digest_auth_and_no_auth_on).await;
    }
}

async fn digest_auth_and_no_auth_on(ctx: Ctx) {
    let alice = ctx.alice().await;
    let anonymous = ctx.client().await;
    let wrong = ctx.client().await;
    wrong.auth("digest", b"alice:wrong").await.unwrap();

    let s = ctx.path("s");
    alice
        .create(
            &s,
            b"secret",
            &CreateMode::Persistent.with_acls(Acls::creator_all()),
        )
        .await
        .unwrap();
    // The auth scheme is expanded into the creator's digest identity (docs/protocol.md §12.3).
    assert_eq!(
        alice.get_acl(&s).await.unwrap().0,
        vec![acl(Permission::ALL, "digest", ALICE_ID)]
    );
    alice
        .create(&ctx.path("s/child"), b"", &PERSISTENT)
        .await
        .unwrap();

    for client in [&anonymous, &wrong] {
        assert_eq!(client.get_data(&s).await.unwrap_err(), Error::NoAuth);
        assert_eq!(
            client.set_data(&s, b"x", None).await.unwrap_err(),
            Error::NoAuth
        );
        assert_eq!(client.list_children(&s).await.unwrap_err(), Error::NoAuth);
        assert_eq!(client.get_children(&s).await.unwrap_err(), Error::NoAuth);
        assert_eq!(
            client.count_descendants_number(&s).await.unwrap_err(),
            Error::NoAuth
        );
        assert_eq!(client.get_acl(&s).await.unwrap_err(), Error::NoAuth);
        assert_eq!(
            client
                .set_acl(&s, &[acl(Permission::ALL, "world", "anyone")], None)
                .await
                .unwrap_err(),
            Error::NoAuth
        );
        assert_eq!(
            client
                .create(&ctx.path("s/x"), b"", &PERSISTENT)
                .await
                .unwrap_err(),
            Error::NoAuth
        );
        assert_eq!(
            client.delete(&ctx.path("s/child"), None).await.unwrap_err(),
            Error::NoAuth,
            "delete needs DELETE on the parent"
        );
        assert_eq!(
            client.get_and_watch_data(&s).await.unwrap_err(),
            Error::NoAuth
        );
        // 3.8.0 checks no ACL on exists (docs/protocol.md §0, §12.2).
        assert_eq!(
            client.check_stat(&s).await.unwrap().map(|s| s.num_children),
            Some(1)
        );
    }

    // check inside multi needs READ; create needs CREATE on the parent (docs/protocol.md §10.3, §12.2).
    let mut writer = anonymous.new_multi_writer();
    writer.add_check_version(&s, -1).unwrap();
    assert_eq!(
        within("multi", writer.commit()).await.unwrap_err(),
        MultiWriteError::OperationFailed {
            index: 0,
            source: Error::NoAuth
        }
    );
    let mut writer = anonymous.new_multi_writer();
    writer
        .add_create(&ctx.path("fine"), b"", &PERSISTENT)
        .unwrap();
    writer
        .add_create(&ctx.path("s/x"), b"", &PERSISTENT)
        .unwrap();
    assert_eq!(
        within("multi", writer.commit()).await.unwrap_err(),
        MultiWriteError::OperationFailed {
            index: 1,
            source: Error::NoAuth
        }
    );
    assert_eq!(anonymous.check_stat(&ctx.path("fine")).await.unwrap(), None);
    let mut writer = alice.new_multi_writer();
    writer.add_check_version(&s, 0).unwrap();
    writer
        .add_create(&ctx.path("s/x"), b"", &PERSISTENT)
        .unwrap();
    writer.add_delete(&ctx.path("s/x"), None).unwrap();
    assert_eq!(
        within("multi", writer.commit()).await.unwrap(),
        vec![
            MultiWriteResult::Check,
            MultiWriteResult::Create {
                path: ctx.path("s/x"),
                stat: invalid_stat(),
            },
            MultiWriteResult::Delete,
        ]
    );

    // whoami (docs/protocol.md §6.10): ip always, digest once authenticated, identities deduplicated.
    assert_eq!(
        users(anonymous.list_auth_users().await.unwrap()),
        vec![user("ip", "127.0.0.1")]
    );
    assert_eq!(
        users(alice.list_auth_users().await.unwrap()),
        vec![user("digest", "alice"), user("ip", "127.0.0.1")]
    );
    // Auth applies to later requests of the same connection.
    anonymous.auth("digest", ALICE).await.unwrap();
    anonymous.auth("digest", ALICE).await.unwrap();
    assert_eq!(
        users(anonymous.list_auth_users().await.unwrap()),
        vec![user("digest", "alice"), user("ip", "127.0.0.1")]
    );
    assert_eq!(anonymous.get_data(&s).await.unwrap().0, b"secret");
    anonymous.delete(&ctx.path("s/child"), None).await.unwrap();
    // The node's own ACL does not guard its deletion: the parent's does.
    wrong.delete(&s, None).await.unwrap();
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn unknown_auth_scheme_fails_the_session(server) {
        everywhere(server, "authfailed", unknown_auth_scheme_fails_the_session_on).await;
    }
}

async fn unknown_auth_scheme_fails_the_session_on(ctx: Ctx) {
    // `super` is not an auth scheme either (docs/protocol.md §12.5).
    for scheme in ["bogus", "super"] {
        let client = ctx.client().await;
        let mut states = client.state_watcher();
        assert_eq!(
            within("auth", client.auth(scheme, b"x")).await.unwrap_err(),
            Error::AuthFailed
        );
        assert_eq!(next_state(&mut states).await, SessionState::AuthFailed);
        assert_eq!(
            client.get_data(&ctx.root).await.unwrap_err(),
            Error::AuthFailed
        );
        // Given to the connector, the same auth makes the connect fail.
        assert_eq!(
            within(
                "connect",
                zk::Client::connector()
                    .with_auth(scheme, b"x")
                    .connect(&ctx.connect)
            )
            .await
            .unwrap_err(),
            Error::AuthFailed
        );
    }
}
