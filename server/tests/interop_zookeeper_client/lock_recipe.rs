//! The lock recipe (multi with a check) as a user of the crate's recipes sees it.

use crate::*;
use shepherd_testkit::on_both_servers;

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn lock_recipe(server) {
        everywhere(server, "lock", lock_recipe_on).await;
    }
}

async fn lock_recipe_on(ctx: Ctx) {
    let client = ctx.client().await;
    let contender = ctx.client().await;
    let dir = ctx.path("locks/job");
    let options = || {
        zk::LockOptions::new(Acls::anyone_all())
            .with_ancestor_options(PERSISTENT)
            .unwrap()
    };

    let prefix = zk::LockPrefix::new_curator(&dir, "lock-").unwrap();
    let lock = within("the free lock", client.lock(prefix, b"a", options()))
        .await
        .unwrap();
    let path = lock.lock_path().to_string();
    assert!(path.starts_with(&format!("{dir}/_c_")), "{path}");
    assert!(path.ends_with("-lock-0000000000"), "{path}");
    let (_, stat) = client.get_data(&path).await.unwrap();
    assert_eq!(stat.ephemeral_owner, client.session_id().0);

    // The second contender waits for the first.
    let (_, queue) = client.list_and_watch_children(&dir).await.unwrap();
    let waiting = tokio::spawn({
        let dir = dir.clone();
        async move {
            let prefix = zk::LockPrefix::new_curator(&dir, "lock-").unwrap();
            let lock = contender
                .lock(prefix, b"b", zk::LockOptions::new(Acls::anyone_all()))
                .await
                .unwrap();
            lock.lock_path().to_string()
        }
    });
    assert_eq!(
        within("the second contender's node", oneshot(queue)).await,
        event(EventType::NodeChildrenChanged, &dir)
    );

    // Writes guarded by the lock: a multi of check(lock) + op. The crate sends create2 inside the
    // multi; 3.8 answers with a plain create result, so the Stat is invalid (ZOOKEEPER-4026).
    let data = ctx.path("locks/data");
    let (stat, sequence) = lock.create(&data, b"0", &PERSISTENT).await.unwrap();
    assert!(stat.is_invalid(), "{stat:?}");
    assert_eq!(stat, invalid_stat());
    assert_eq!(sequence.into_i64(), -1);
    let stat = lock.set_data(&data, b"1", Some(0)).await.unwrap();
    assert_eq!((stat.version, stat.data_length), (1, 1));
    assert_eq!(client.get_data(&data).await.unwrap(), (b"1".to_vec(), stat));
    lock.delete(&data, Some(1)).await.unwrap();
    assert_eq!(client.check_stat(&data).await.unwrap(), None);
    assert!(!waiting.is_finished());

    // Release: the waiter gets the lock.
    drop(lock);
    let second = within("the second contender's lock", waiting)
        .await
        .unwrap();
    assert!(second.ends_with("-lock-0000000001"), "{second}");
    assert_eq!(client.check_stat(&path).await.unwrap(), None);

    // A lock whose node vanished guards nothing. A shared prefix does not match the curator
    // nodes, so this contender is first in its own queue.
    let shared = format!("{dir}/shared-");
    let prefix = zk::LockPrefix::new_shared(&shared).unwrap();
    let lock = within("a shared-prefix lock", client.lock(prefix, b"", options()))
        .await
        .unwrap();
    assert_eq!(lock.lock_path(), format!("{dir}/shared-0000000002"));
    client.delete(lock.lock_path(), None).await.unwrap();
    assert_eq!(
        lock.set_data(&dir, b"x", None).await.unwrap_err(),
        Error::RuntimeInconsistent
    );
    assert_eq!(client.get_data(&dir).await.unwrap().1.version, 0);
}
