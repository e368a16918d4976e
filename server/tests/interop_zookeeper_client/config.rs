//! The configuration node and reconfig on a standalone server.

use crate::*;
use shepherd_testkit::on_both_servers;

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn config_node_and_reconfig(server) {
        everywhere(server, "config", config_node_and_reconfig_on).await;
    }
}

async fn config_node_and_reconfig_on(ctx: Ctx) {
    let client = ctx.client().await;
    // Standalone: /zookeeper/config is empty, all zeros except aversion -1 (docs/protocol.md §16).
    let empty_config = (
        Vec::new(),
        Stat {
            czxid: 0,
            mzxid: 0,
            pzxid: 0,
            ctime: 0,
            mtime: 0,
            version: 0,
            cversion: 0,
            aversion: -1,
            ephemeral_owner: 0,
            data_length: 0,
            num_children: 0,
        },
    );
    assert_eq!(client.get_config().await.unwrap(), empty_config);
    assert_eq!(
        client.get_acl("/zookeeper/config").await.unwrap().0,
        vec![acl(Permission::READ, "world", "anyone")]
    );
    // getConfig ignores the chroot.
    let chrooted = client.clone().chroot(ctx.root.as_str()).unwrap();
    assert_eq!(chrooted.get_config().await.unwrap(), empty_config);
    let (data, stat, watcher) = client.get_and_watch_config().await.unwrap();
    assert_eq!((data, stat), empty_config);
    let mut watcher = oneshot(watcher);
    // reconfig is disabled by default (docs/protocol.md §11).
    assert_eq!(
        within(
            "reconfig",
            client.update_ensemble(
                EnsembleUpdate::New {
                    ensemble: ["server.1=127.0.0.1:2888:3888:participant;127.0.0.1:2181"]
                        .into_iter()
                },
                None
            )
        )
        .await
        .unwrap_err(),
        Error::ReconfigDisabled
    );
    assert_eq!(
        within(
            "reconfig",
            client.update_ensemble(
                EnsembleUpdate::Incremental {
                    joinings: ["server.2=127.0.0.1:2889:3889:participant"].into_iter(),
                    // The crate skips empty entries: no server leaves.
                    leavings: [""].into_iter(),
                },
                Some(0)
            )
        )
        .await
        .unwrap_err(),
        Error::ReconfigDisabled
    );
    barrier(&client).await;
    assert_pending(&mut watcher, "the config watch");
    assert_eq!(client.state(), SessionState::SyncConnected);
}
