//! `Client::create_all` against every test server: missing ancestors made top down, an existing
//! node answered `Ok(None)`, the ancestors' ACL, and the chroot it never creates.

use shepherd_client::{Acl, CreateMode, CreateOptions, ErrorCode, Id, perms};
use shepherd_testkit::connect;
use shepherd_testkit::on_both_servers;

mod common;
use common::{root, session_with_root};

on_both_servers! {
    #[tokio::test]
    async fn makes_missing_ancestors_then_the_leaf(server) {
        let (zk, root) = session_with_root(&server, "create-all").await;
        let leaf = format!("{root}/a/b/c");

        let (path, stat) = zk
            .create_all(&leaf, b"leaf", &CreateOptions::persistent())
            .await
            .unwrap()
            .expect("the leaf was missing: it is created");
        assert_eq!(path, leaf, "{}", server.name);
        assert_eq!(stat.data_length, 4);
        // Top down: each ancestor was created before its child.
        let a = zk.exists(&format!("{root}/a")).await.unwrap().unwrap();
        let b = zk.exists(&format!("{root}/a/b")).await.unwrap().unwrap();
        assert!(a.czxid < b.czxid && b.czxid < stat.czxid, "{a:?} {b:?} {stat:?}");
        assert_eq!(zk.get_data(&format!("{root}/a/b")).await.unwrap().0, b"");
        assert_eq!((b.ephemeral_owner, b.num_children), (0, 1));

        // Existing: nothing is created, nothing changes.
        let again = zk
            .create_all(&leaf, b"other", &CreateOptions::persistent())
            .await
            .unwrap();
        assert_eq!(again, None);
        assert_eq!(zk.get_data(&leaf).await.unwrap().0, b"leaf");

        // An existing parent: the leaf alone, here an ephemeral one under persistent ancestors.
        let (_, e) = zk
            .create_all(&format!("{root}/a/e"), b"", &CreateOptions::ephemeral())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(e.ephemeral_owner, zk.session_id());

        // A sequential leaf under missing ancestors gets its suffix.
        let (path, _) = zk
            .create_all(
                &format!("{root}/q/s-"),
                b"",
                &CreateOptions::new(CreateMode::PersistentSequential),
            )
            .await
            .unwrap()
            .unwrap();
        assert!(path.starts_with(&format!("{root}/q/s-")), "{path}");
        zk.close().await.unwrap();
    }
}

on_both_servers! {
    #[tokio::test]
    async fn ancestors_take_the_leafs_acl(server) {
        let (zk, root) = session_with_root(&server, "create-all-mode").await;
        let read_create = vec![Acl {
            perms: perms::READ | perms::CREATE,
            id: Id::new("world", "anyone"),
        }];
        let options = CreateOptions::new(CreateMode::Container).with_acl(read_create.clone());
        zk.create_all(&format!("{root}/x/y"), b"", &options)
            .await
            .unwrap()
            .unwrap();
        let (acl, _) = zk.get_acl(&format!("{root}/x")).await.unwrap();
        assert_eq!(acl, read_create, "{}", server.name);
        // (Whether it is a container the client cannot see: the stat's ephemeral owner is 0.)

        // Under an ephemeral node, no ancestor can be made.
        zk.create(&format!("{root}/eph"), b"", &CreateOptions::ephemeral())
            .await
            .unwrap();
        let err = zk
            .create_all(&format!("{root}/eph/a/b"), b"", &CreateOptions::persistent())
            .await
            .unwrap_err();
        assert_eq!(err.keeper_code(), Some(ErrorCode::NoChildrenForEphemerals));
        zk.close().await.unwrap();
    }
}

on_both_servers! {
    #[tokio::test]
    async fn the_chroot_is_never_created(server) {
        let plain = connect(&server.connect).await;
        let root = root(&plain, "create-all-chroot").await;
        let zk = connect(&format!("{}{root}/missing", server.connect)).await;
        let err = zk
            .create_all("/a/b", b"", &CreateOptions::persistent())
            .await
            .unwrap_err();
        assert_eq!(err.keeper_code(), Some(ErrorCode::NoNode), "{}", server.name);
        assert!(plain.exists(&format!("{root}/missing")).await.unwrap().is_none());

        // Once the chroot exists, paths below it are made and answered without it.
        plain
            .create(&format!("{root}/missing"), b"", &CreateOptions::persistent())
            .await
            .unwrap();
        let (path, _) = zk
            .create_all("/a/b", b"", &CreateOptions::persistent())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(path, "/a/b");
        assert!(plain.exists(&format!("{root}/missing/a")).await.unwrap().is_some());
        zk.close().await.unwrap();
        plain.close().await.unwrap();
    }
}
