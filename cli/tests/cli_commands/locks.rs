//! `locks`: per lock folder, the holder and the waiters in queue order, with recipe, mode and
//! owning session, for a real recipe (the Curator mutex of `shepherd-recipes`) and for names
//! another library would make (kazoo's read and write locks).

use shepherd_client::{CreateMode, CreateOptions};
use shepherd_recipes::{Guard, LockStats};
use shepherd_testkit::locks::{LockKind, spawn_take, take};
use shepherd_testkit::on_both_servers;
use shepherd_testkit::{connect, unique, wait_children, within};

use crate::run;

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn locks_show_holder_waiters_recipe_and_session(server) {
        let root = unique("cli-locks");
        let c = &server.connect;
        let stats = LockStats::new();
        let holder = connect(c).await;
        let waiter = connect(c).await;
        let mutex = format!("{root}/job");
        let guard = take(LockKind::Mutex, &holder, &mutex, &stats).await;
        let queued = spawn_take(LockKind::Mutex, &waiter, &mutex, &stats);
        wait_children(&holder, &mutex, |c| c.len() == 2).await;
        // kazoo's names: two readers share the lock, the writer after them waits.
        let kazoo = format!("{root}/rw");
        holder
            .create(&kazoo, b"", &CreateOptions::persistent())
            .await
            .unwrap();
        let es = CreateOptions::new(CreateMode::EphemeralSequential);
        for name in ["r1__rlock__", "r2__rlock__", "w1__lock__"] {
            holder
                .create(&format!("{kazoo}/{name}"), b"me", &es)
                .await
                .unwrap();
        }

        let ran = run(c, &["locks", "--json", &root]).await;
        let locks: Vec<serde_json::Value> = ran
            .ok()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(locks.len(), 2, "{}: {locks:?}", server.name);
        assert_eq!(locks[0]["lock"], mutex.as_str());
        let [first, second] = [&locks[0]["contenders"][0], &locks[0]["contenders"][1]];
        assert_eq!(first["role"], "holder");
        assert_eq!(first["recipe"], "Curator InterProcessMutex");
        assert_eq!(first["session"], format!("0x{:x}", holder.session_id()));
        assert_eq!(second["role"], "waiter");
        assert_eq!(second["position"], 1);
        assert_eq!(second["session"], format!("0x{:x}", waiter.session_id()));
        assert_eq!(second["waits_for"], first["name"]);
        let rw = locks[1]["contenders"].as_array().unwrap();
        let roles: Vec<(&str, &str, &str)> = rw
            .iter()
            .map(|c| {
                (
                    c["role"].as_str().unwrap(),
                    c["mode"].as_str().unwrap(),
                    c["recipe"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            roles,
            [
                ("holder", "read", "kazoo ReadLock"),
                ("holder", "read", "kazoo ReadLock"),
                ("waiter", "write", "kazoo Lock"),
            ]
        );
        assert_eq!(rw[2]["data"], "me");

        let text = run(c, &["locks", &root]).await;
        assert!(
            text.ok().starts_with(&format!(
                "{mutex}: held by {}; 1 waiting\n  holder ",
                first["name"].as_str().unwrap()
            )),
            "{text:?}"
        );
        assert!(
            text.ok().contains(&format!("{kazoo}: held by ")),
            "{text:?}"
        );

        // Released: the waiter holds, alone.
        guard.release().await.unwrap();
        let next = within("the waiter's turn", queued).await.unwrap();
        let ran = run(c, &["locks", "--json", &mutex]).await;
        let lock: serde_json::Value =
            serde_json::from_str(ran.ok().lines().next().unwrap()).unwrap();
        assert_eq!(lock["contenders"].as_array().unwrap().len(), 1);
        assert_eq!(
            lock["contenders"][0]["session"],
            format!("0x{:x}", waiter.session_id())
        );
        next.release().await.unwrap();
        server.shutdown().await;
    }
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn no_locks_is_said_plainly(server) {
        let root = unique("cli-nolocks");
        let client = connect(&server.connect).await;
        client
            .create(&root, b"", &CreateOptions::persistent())
            .await
            .unwrap();
        // Look-alikes that are no locks: a persistent-sequential folder of jobs, ephemeral
        // queue items of no lock recipe's layout, and persistent nodes named as lock nodes are.
        let sequential = |mode| CreateOptions::new(mode);
        for (name, mode) in [
            ("/jobs/job-", CreateMode::PersistentSequential),
            ("/jobs/job-", CreateMode::PersistentSequential),
            ("/queue/qn-", CreateMode::EphemeralSequential),
            ("/queue/qn-", CreateMode::EphemeralSequential),
            ("/stale/_c_u-lock-", CreateMode::PersistentSequential),
            ("/stale/lock", CreateMode::Persistent),
        ] {
            let path = format!("{root}{name}");
            let parent = &path[..path.rfind('/').unwrap()];
            let _ = client
                .create(parent, b"", &CreateOptions::persistent())
                .await;
            client.create(&path, b"", &sequential(mode)).await.unwrap();
        }
        let ran = run(&server.connect, &["locks", &root]).await;
        assert_eq!(ran.ok(), format!("no lock nodes under {root}\n"));
        assert_eq!(
            run(&server.connect, &["locks", "--json", &root]).await.ok(),
            ""
        );
        server.shutdown().await;
    }
}
