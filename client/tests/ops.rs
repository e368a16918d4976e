//! Every operation against every test server: results, errors, chroot.

use std::time::Duration;

use shepherd_client::{
    Acl, Client, CreateMode, CreateOptions, Error, ErrorCode, Id, ReadResult, WriteResult, perms,
};
use shepherd_testkit::on_both_servers;
use shepherd_testkit::{connect, within};

mod common;
use common::{root, session_with_root};

on_both_servers! {
    #[tokio::test]
    async fn create_in_every_mode(server) {
        let (zk, root) = session_with_root(&server, "create").await;

        let (path, stat) = zk
            .create(&format!("{root}/p"), b"data", &CreateOptions::persistent())
            .await
            .unwrap();
        assert_eq!(path, format!("{root}/p"), "{}", server.name);
        assert_eq!(
            (stat.version, stat.data_length, stat.ephemeral_owner),
            (0, 4, 0)
        );

        let (_, stat) = zk
            .create(&format!("{root}/e"), b"", &CreateOptions::ephemeral())
            .await
            .unwrap();
        assert_eq!(stat.ephemeral_owner, zk.session_id());

        for mode in [
            CreateMode::PersistentSequential,
            CreateMode::EphemeralSequential,
        ] {
            let (path, _) = zk
                .create(&format!("{root}/s-"), b"", &CreateOptions::new(mode))
                .await
                .unwrap();
            let suffix = path.strip_prefix(&format!("{root}/s-")).unwrap();
            assert_eq!(suffix.len(), 10, "sequence suffix of {path}");
        }

        let (path, _) = zk
            .create(
                &format!("{root}/c"),
                b"",
                &CreateOptions::new(CreateMode::Container),
            )
            .await
            .unwrap();
        assert_eq!(path, format!("{root}/c"));

        let ttl =
            CreateOptions::new(CreateMode::PersistentWithTTL).with_ttl(Duration::from_secs(60));
        let (_, stat) = zk.create(&format!("{root}/ttl"), b"t", &ttl).await.unwrap();
        assert_eq!(stat.data_length, 1);
        let seq_ttl = CreateOptions::new(CreateMode::PersistentSequentialWithTTL)
            .with_ttl(Duration::from_secs(60));
        let (path, _) = zk
            .create(&format!("{root}/ttl-"), b"", &seq_ttl)
            .await
            .unwrap();
        assert!(path.len() > format!("{root}/ttl-").len());

        // Server outcomes.
        let err = zk
            .create(&format!("{root}/p"), b"", &CreateOptions::persistent())
            .await
            .unwrap_err();
        assert!(err.is_node_exists(), "{err}");
        let err = zk
            .create(&format!("{root}/none/x"), b"", &CreateOptions::persistent())
            .await
            .unwrap_err();
        assert!(err.is_no_node(), "{err}");
        let err = zk
            .create(&format!("{root}/e/x"), b"", &CreateOptions::persistent())
            .await
            .unwrap_err();
        assert_eq!(err.keeper_code(), Some(ErrorCode::NoChildrenForEphemerals));

        // Misuse is caught before sending.
        let err = zk
            .create("relative", b"", &CreateOptions::persistent())
            .await
            .unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
        let bad = CreateOptions::persistent().with_ttl(Duration::from_secs(1));
        let err = zk
            .create(&format!("{root}/x"), b"", &bad)
            .await
            .unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
        zk.close().await.unwrap();
    }
}

on_both_servers! {
    #[tokio::test]
    async fn exists_get_set_delete(server) {
        let (zk, root) = session_with_root(&server, "crud").await;
        let node = format!("{root}/n");

        assert_eq!(zk.exists(&node).await.unwrap(), None, "{}", server.name);
        zk.create(&node, b"one", &CreateOptions::persistent())
            .await
            .unwrap();
        let stat = zk.exists(&node).await.unwrap().expect("exists");
        assert_eq!(stat.version, 0);

        let (data, stat) = zk.get_data(&node).await.unwrap();
        assert_eq!((data.as_slice(), stat.version), (&b"one"[..], 0));
        let stat = zk.set_data(&node, b"two", Some(0)).await.unwrap();
        assert_eq!(stat.version, 1);
        let err = zk.set_data(&node, b"x", Some(0)).await.unwrap_err();
        assert!(err.is_bad_version(), "{err}");
        let stat = zk.set_data(&node, b"three", None).await.unwrap();
        assert_eq!(stat.version, 2);
        assert_eq!(zk.get_data(&node).await.unwrap().0, b"three");
        assert!(
            zk.get_data(&format!("{root}/missing"))
                .await
                .unwrap_err()
                .is_no_node()
        );

        zk.create(&format!("{node}/child"), b"", &CreateOptions::persistent())
            .await
            .unwrap();
        assert!(zk.delete(&node, None).await.unwrap_err().is_not_empty());
        zk.delete(&format!("{node}/child"), None).await.unwrap();
        assert!(
            zk.delete(&node, Some(0))
                .await
                .unwrap_err()
                .is_bad_version()
        );
        zk.delete(&node, Some(2)).await.unwrap();
        assert!(zk.delete(&node, None).await.unwrap_err().is_no_node());
        assert_eq!(zk.exists(&node).await.unwrap(), None);
        zk.close().await.unwrap();
    }
}

on_both_servers! {
    #[tokio::test]
    async fn children_counts_ephemerals_sync(server) {
        let (zk, root) = session_with_root(&server, "children").await;
        for name in ["a", "b", "c"] {
            zk.create(&format!("{root}/{name}"), b"", &CreateOptions::persistent())
                .await
                .unwrap();
        }
        zk.create(&format!("{root}/a/x"), b"", &CreateOptions::ephemeral())
            .await
            .unwrap();

        let mut names = zk.get_children(&root).await.unwrap();
        names.sort();
        assert_eq!(names, ["a", "b", "c"], "{}", server.name);
        let (names, stat) = zk.get_children_with_stat(&root).await.unwrap();
        assert_eq!((names.len(), stat.num_children), (3, 3));
        assert_eq!(zk.get_all_children_number(&root).await.unwrap(), 4);
        assert!(
            zk.get_children(&format!("{root}/zz"))
                .await
                .unwrap_err()
                .is_no_node()
        );

        let ephemerals = zk.get_ephemerals(&root).await.unwrap();
        assert_eq!(ephemerals, [format!("{root}/a/x")]);
        zk.sync(&root).await.unwrap();
        zk.close().await.unwrap();
    }
}

on_both_servers! {
    #[tokio::test]
    async fn acls_auth_and_who_am_i(server) {
        let alice = Client::builder()
            .digest("alice:secret")
            .connect(&server.connect)
            .await
            .unwrap();
        let root = root(&alice, "acl").await;
        let node = format!("{root}/private");
        alice
            .create(
                &node,
                b"s",
                &CreateOptions::persistent().with_acl(Acl::creator_all()),
            )
            .await
            .unwrap();
        let (acl, _) = alice.get_acl(&node).await.unwrap();
        assert_eq!(acl.len(), 1, "{}", server.name);
        assert_eq!(acl[0].id.scheme, "digest");
        assert!(acl[0].id.id.starts_with("alice:"));
        let who = alice.who_am_i().await.unwrap();
        assert!(
            who.iter()
                .any(|c| c.auth_scheme == "digest" && c.user == "alice"),
            "{who:?}"
        );

        let bob = connect(&server.connect).await;
        assert!(bob.get_data(&node).await.unwrap_err().is_no_auth());
        bob.add_digest("alice:secret").await.unwrap();
        assert_eq!(bob.get_data(&node).await.unwrap().0, b"s");

        let (_, stat) = alice.get_acl(&root).await.unwrap();
        let read_only = vec![Acl {
            perms: perms::READ,
            id: Id::new("world", "anyone"),
        }];
        let err = alice
            .set_acl(&root, read_only.clone(), Some(5))
            .await
            .unwrap_err();
        assert!(err.is_bad_version(), "{err}");
        let stat = alice
            .set_acl(&root, read_only.clone(), Some(stat.aversion))
            .await
            .unwrap();
        assert_eq!(stat.aversion, 1);
        assert_eq!(alice.get_acl(&root).await.unwrap().0, read_only);
        // Without ADMIN now, NoAuth comes before any version check.
        assert!(
            alice
                .set_acl(&root, read_only, None)
                .await
                .unwrap_err()
                .is_no_auth()
        );
        let err = bob
            .create(&format!("{root}/x"), b"", &CreateOptions::persistent())
            .await
            .unwrap_err();
        assert!(err.is_no_auth(), "{err}");
        alice.close().await.unwrap();
        bob.close().await.unwrap();
    }
}

on_both_servers! {
    #[tokio::test]
    async fn multi_and_multi_read(server) {
        let (zk, root) = session_with_root(&server, "multi").await;
        let (a, b) = (format!("{root}/a"), format!("{root}/b"));
        let results = zk
            .multi()
            .create(&a, b"1", &CreateOptions::persistent())
            .create(&b, b"2", &CreateOptions::persistent())
            .set_data(&a, b"11", Some(0))
            .check(&b, 0)
            .commit()
            .await
            .unwrap();
        assert_eq!(results.len(), 4, "{}", server.name);
        assert!(matches!(&results[0], WriteResult::Created { path, .. } if *path == a));
        assert!(matches!(&results[2], WriteResult::DataSet(stat) if stat.version == 1));
        assert_eq!(results[3], WriteResult::Checked);

        let err = zk
            .multi()
            .delete(&b, None)
            .check(&a, 7)
            .create(&format!("{root}/c"), b"", &CreateOptions::persistent())
            .commit()
            .await
            .unwrap_err();
        assert!(
            matches!(
                err,
                Error::MultiFailed {
                    index: 1,
                    code: ErrorCode::BadVersion
                }
            ),
            "{err}"
        );
        assert!(err.is_bad_version());
        assert!(zk.exists(&b).await.unwrap().is_some(), "rolled back");
        assert!(zk.exists(&format!("{root}/c")).await.unwrap().is_none());

        let results = zk
            .multi_read()
            .get_data(&a)
            .get_children(&root)
            .get_data(&format!("{root}/missing"))
            .run()
            .await
            .unwrap();
        assert!(matches!(&results[0], Ok(ReadResult::Data(d, _)) if d == b"11"));
        assert!(matches!(&results[1], Ok(ReadResult::Children(c)) if c.len() == 2));
        assert!(results[2].as_ref().unwrap_err().is_no_node());

        let results = zk
            .multi()
            .delete(&a, None)
            .delete(&b, None)
            .commit()
            .await
            .unwrap();
        assert_eq!(results, [WriteResult::Deleted, WriteResult::Deleted]);
        assert!(zk.multi().delete("bad", None).commit().await.is_err());
        zk.close().await.unwrap();
    }
}

on_both_servers! {
    #[tokio::test]
    async fn chroot_prefixes_and_strips(server) {
        let plain = connect(&server.connect).await;
        let root = root(&plain, "chroot").await;
        let zk = connect(&format!("{}{root}", server.connect)).await;
        assert_eq!(zk.chroot(), Some(root.as_str()));

        let (path, _) = zk
            .create("/a", b"x", &CreateOptions::persistent())
            .await
            .unwrap();
        assert_eq!(path, "/a", "{}", server.name);
        assert_eq!(plain.get_data(&format!("{root}/a")).await.unwrap().0, b"x");
        let (path, _) = zk
            .create(
                "/a/s-",
                b"",
                &CreateOptions::new(CreateMode::EphemeralSequential),
            )
            .await
            .unwrap();
        assert!(path.starts_with("/a/s-"), "{path}");
        assert_eq!(zk.get_ephemerals("/").await.unwrap(), [path]);
        assert_eq!(zk.get_children("/").await.unwrap(), ["a"]);
        let results = zk
            .multi()
            .create("/b", b"", &CreateOptions::persistent())
            .commit()
            .await
            .unwrap();
        assert!(matches!(&results[0], WriteResult::Created { path, .. } if path == "/b"));

        let (_, _, watcher) = zk.get_data_w("/b").await.unwrap();
        plain
            .set_data(&format!("{root}/b"), b"y", None)
            .await
            .unwrap();
        assert_eq!(within("event", watcher).await.unwrap().path, "/b");

        // getConfig ignores the chroot.
        assert_eq!(
            zk.get_config().await.unwrap(),
            plain.get_config().await.unwrap()
        );
        zk.close().await.unwrap();
        plain.close().await.unwrap();
    }
}
