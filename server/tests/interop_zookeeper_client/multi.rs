//! multi and multiRead: a write transaction committed whole or failed whole, and reads reported
//! op by op.

use crate::*;
use shepherd_testkit::on_both_servers;

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn multi_write_commits_all(server) {
        everywhere(server, "multi", multi_write_commits_all_on).await;
    }
}

async fn multi_write_commits_all_on(ctx: Ctx) {
    let client = ctx.client().await;
    let m = ctx.path("m");
    client.create(&m, b"v0", &PERSISTENT).await.unwrap();
    client
        .create(&ctx.path("m/old"), b"", &PERSISTENT)
        .await
        .unwrap();

    let mut writer = client.new_multi_writer();
    writer.add_check_version(&m, 0).unwrap();
    writer
        .add_create(&ctx.path("m/new"), b"n", &PERSISTENT)
        .unwrap();
    writer
        .add_create(&ctx.path("m/seq-"), b"", &SEQUENTIAL)
        .unwrap();
    writer.add_set_data(&m, b"v1", Some(0)).unwrap();
    writer.add_delete(&ctx.path("m/old"), None).unwrap();
    writer
        .add_create(&ctx.path("m/box"), b"", &CONTAINER)
        .unwrap();
    writer
        .add_create(
            &ctx.path("m/ttl"),
            b"t",
            &ttl_options(CreateMode::Persistent, HOUR),
        )
        .unwrap();
    // Later ops see earlier ones.
    writer
        .add_create(&ctx.path("m/new/child"), b"", &EPHEMERAL)
        .unwrap();
    let results = within("multi", writer.commit()).await.unwrap();
    assert_eq!(results.len(), 8, "{results:?}");

    let (_, m_stat) = client.get_data(&m).await.unwrap();
    let zxid = m_stat.mzxid;
    let stat_of = |path: &str| {
        let path = ctx.path(path);
        let client = &client;
        async move { client.get_data(&path).await.unwrap().1 }
    };
    let new = stat_of("m/new").await;
    let box_stat = stat_of("m/box").await;
    let ttl = stat_of("m/ttl").await;
    let child = stat_of("m/new/child").await;
    // One zxid for the whole multi (docs/protocol.md §10.3).
    for stat in [new, box_stat, ttl, child] {
        assert_eq!(stat.czxid, zxid, "{stat:?}");
    }
    assert_eq!(child.ephemeral_owner, client.session_id().0);
    assert_eq!(m_stat.pzxid, zxid);
    // The crate sends create2 (op 15) inside multi and expects a Stat back (3.9). A 3.8 server
    // answers create2 inside multi with a plain create result, path only (ZOOKEEPER-4026), so
    // the crate reports an invalid Stat (czxid -1): that is what users of the crate see on 3.8.
    // Containers and TTL nodes come back with their Stat on both versions (docs/protocol.md §10.2).
    assert_eq!(
        results,
        vec![
            MultiWriteResult::Check,
            MultiWriteResult::Create {
                path: ctx.path("m/new"),
                stat: invalid_stat(),
            },
            MultiWriteResult::Create {
                path: ctx.path("m/seq-0000000002"),
                stat: invalid_stat(),
            },
            // The Stat as of the setData op: m then had old, new and seq-.
            MultiWriteResult::SetData {
                stat: Stat {
                    num_children: 3,
                    cversion: 3,
                    ..m_stat
                }
            },
            MultiWriteResult::Delete,
            MultiWriteResult::Create {
                path: ctx.path("m/box"),
                stat: box_stat,
            },
            MultiWriteResult::Create {
                path: ctx.path("m/ttl"),
                stat: ttl,
            },
            MultiWriteResult::Create {
                path: ctx.path("m/new/child"),
                stat: invalid_stat(),
            },
        ]
    );
    assert_eq!(
        (m_stat.version, m_stat.data_length, m_stat.num_children),
        (1, 2, 4)
    );
    // old (1), new, seq, box, ttl: five creates and one delete.
    assert_eq!(m_stat.cversion, 6);
    assert_eq!(
        sorted(client.list_children(&m).await.unwrap()),
        ["box", "new", "seq-0000000002", "ttl"]
    );
    assert_eq!((ttl.ephemeral_owner, box_stat.ephemeral_owner), (0, 0));
    assert_eq!(ttl.data_length, 1);

    // An empty multi never reaches the server.
    let mut empty = client.new_multi_writer();
    assert_eq!(empty.commit().await.unwrap(), vec![]);

    // CheckWriter: a multi whose first op checks a path.
    let mut guarded = client.new_check_writer(&m, Some(1)).unwrap();
    guarded.add_set_data(&m, b"v2", Some(1)).unwrap();
    let results = within("check writer", guarded.commit()).await.unwrap();
    let (_, now) = client.get_data(&m).await.unwrap();
    assert_eq!(results, vec![MultiWriteResult::SetData { stat: now }]);
    assert_eq!(now.version, 2);
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn multi_write_fails_whole(server) {
        everywhere(server, "multifail", multi_write_fails_whole_on).await;
    }
}

async fn multi_write_fails_whole_on(ctx: Ctx) {
    let client = ctx.client().await;
    let m = ctx.path("m");
    client.create(&m, b"", &PERSISTENT).await.unwrap();
    client
        .create(&ctx.path("m/y"), b"", &PERSISTENT)
        .await
        .unwrap();
    let (_, before) = client.get_children(&m).await.unwrap();
    let (_, _, watch) = client.get_and_watch_data(&ctx.path("m/y")).await.unwrap();
    let mut watch = oneshot(watch);

    let mut writer = client.new_multi_writer();
    writer
        .add_create(&ctx.path("m/x"), b"", &PERSISTENT)
        .unwrap();
    writer.add_check_version(&m, 7).unwrap();
    writer.add_delete(&ctx.path("m/y"), None).unwrap();
    writer
        .add_create(&ctx.path("m/z"), b"", &PERSISTENT)
        .unwrap();
    assert_eq!(
        within("multi", writer.commit()).await.unwrap_err(),
        MultiWriteError::OperationFailed {
            index: 1,
            source: Error::BadVersion
        }
    );
    // Nothing applied, nothing fired.
    assert_pending(&mut watch, "a watch on a node a failed multi would delete");
    assert_eq!(client.check_stat(&ctx.path("m/x")).await.unwrap(), None);
    assert_eq!(client.check_stat(&ctx.path("m/z")).await.unwrap(), None);
    assert!(client.check_stat(&ctx.path("m/y")).await.unwrap().is_some());
    let (children, after) = client.get_children(&m).await.unwrap();
    assert_eq!(children, ["y"]);
    assert_eq!(after, before);

    let failures: [(&str, usize, Error); 4] = [
        ("check missing", 0, Error::NoNode),
        ("create existing", 2, Error::NodeExists),
        ("delete non-empty", 1, Error::NotEmpty),
        ("child of ephemeral", 2, Error::NoChildrenForEphemerals),
    ];
    for (case, index, source) in failures {
        let mut writer = client.new_multi_writer();
        match case {
            "check missing" => {
                writer.add_check_version(&ctx.path("nope"), -1).unwrap();
                writer
                    .add_create(&ctx.path("m/a"), b"", &PERSISTENT)
                    .unwrap();
            }
            "create existing" => {
                writer
                    .add_create(&ctx.path("m/a"), b"", &PERSISTENT)
                    .unwrap();
                writer.add_set_data(&ctx.path("m/y"), b"1", None).unwrap();
                writer
                    .add_create(&ctx.path("m/y"), b"", &PERSISTENT)
                    .unwrap();
            }
            "delete non-empty" => {
                writer
                    .add_create(&ctx.path("m/y/c"), b"", &PERSISTENT)
                    .unwrap();
                writer.add_delete(&ctx.path("m/y"), None).unwrap();
            }
            _ => {
                writer
                    .add_create(&ctx.path("m/e"), b"", &EPHEMERAL)
                    .unwrap();
                writer
                    .add_set_data(&ctx.path("m/e"), b"1", Some(0))
                    .unwrap();
                writer
                    .add_create(&ctx.path("m/e/c"), b"", &PERSISTENT)
                    .unwrap();
            }
        }
        assert_eq!(
            within("multi", writer.commit()).await.unwrap_err(),
            MultiWriteError::OperationFailed { index, source },
            "{case}"
        );
        let (_, after) = client.get_children(&m).await.unwrap();
        assert_eq!(after, before, "{case}: nothing applied");
    }
    let (_, y) = client.get_data(&ctx.path("m/y")).await.unwrap();
    assert_eq!(y.version, 0);

    // CheckWriter reports its own check apart.
    let mut guarded = client.new_check_writer(&m, Some(9)).unwrap();
    guarded
        .add_create(&ctx.path("m/q"), b"", &PERSISTENT)
        .unwrap();
    assert_eq!(
        within("check writer", guarded.commit()).await.unwrap_err(),
        CheckWriteError::CheckFailed {
            source: Error::BadVersion
        }
    );
    let mut guarded = client.new_check_writer(&m, None).unwrap();
    guarded.add_delete(&ctx.path("m/q"), None).unwrap();
    assert_eq!(
        within("check writer", guarded.commit()).await.unwrap_err(),
        CheckWriteError::OperationFailed {
            index: 0,
            source: Error::NoNode
        }
    );
    barrier(&client).await;
    assert_pending(&mut watch, "a watch on a node no multi touched");
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn multi_read_reports_each_op(server) {
        everywhere(server, "multiread", multi_read_reports_each_op_on).await;
    }
}

async fn multi_read_reports_each_op_on(ctx: Ctx) {
    let client = ctx.client().await;
    let alice = ctx.alice().await;
    let r = ctx.path("r");
    client.create(&r, b"rd", &PERSISTENT).await.unwrap();
    for name in ["r/b", "r/a"] {
        client
            .create(&ctx.path(name), b"", &PERSISTENT)
            .await
            .unwrap();
    }
    let s = ctx.path("s");
    alice
        .create(
            &s,
            b"",
            &CreateMode::Persistent.with_acls(Acls::creator_all()),
        )
        .await
        .unwrap();
    let (_, r_stat) = client.get_data(&r).await.unwrap();

    let mut reader = client.new_multi_reader();
    reader.add_get_data(&r).unwrap();
    reader.add_get_children(&r).unwrap();
    reader.add_get_data(&ctx.path("nope")).unwrap();
    reader.add_get_children(&ctx.path("nope")).unwrap();
    reader.add_get_data(&s).unwrap();
    reader.add_get_children(&s).unwrap();
    reader.add_get_data(&ctx.path("r/a")).unwrap();
    let results = within("multiRead", reader.commit()).await.unwrap();
    assert_eq!(results.len(), 7, "{results:?}");
    let mut results = results.into_iter();
    match results.next().unwrap() {
        MultiReadResult::Data { data, stat } => {
            assert_eq!(data, b"rd");
            assert_eq!(stat, r_stat);
        }
        other => panic!("getData: {other:?}"),
    }
    match results.next().unwrap() {
        MultiReadResult::Children { children } => assert_eq!(sorted(children), ["a", "b"]),
        other => panic!("getChildren: {other:?}"),
    }
    for expected in [Error::NoNode, Error::NoNode, Error::NoAuth, Error::NoAuth] {
        match results.next().unwrap() {
            MultiReadResult::Error { err } => assert_eq!(err, expected),
            other => panic!("expected {expected:?}, got {other:?}"),
        }
    }
    match results.next().unwrap() {
        MultiReadResult::Data { data, stat } => {
            assert!(data.is_empty());
            assert_eq!(stat.num_children, 0);
        }
        other => panic!("getData: {other:?}"),
    }
    let mut empty = client.new_multi_reader();
    assert!(empty.commit().await.unwrap().is_empty());
}
