//! `mntr` polled in a loop while writers and watchers load the server: every answer comes,
//! each 4lw connection is closed after its answer (the limit a poller meets), the figures are
//! counters that agree with the load once it is done, and the writers are served throughout.

use shepherd_protocol::{CreateMode, FourLetterWord};
use shepherd_testkit::{create, four_letter_word, get_data, set_data};

use super::{err, server, session};

/// One mntr figure.
fn figure(mntr: &str, key: &str) -> i64 {
    mntr.lines()
        .find_map(|line| line.strip_prefix(key)?.strip_prefix('\t')?.parse().ok())
        .unwrap_or_else(|| panic!("{key} in {mntr}"))
}

#[tokio::test]
async fn mntr_polled_under_load_answers_every_time_and_writers_are_served() {
    let server = server().await;
    let addr = server.local_addr().to_string();
    let mut writer = session(&server).await;
    let mut watcher = session(&server).await;
    const NODES: usize = 200;

    let load = async {
        for i in 0..NODES {
            let path = format!("/load{i}");
            let reply = writer
                .call(&create(&path, b"", CreateMode::Persistent))
                .await;
            assert_eq!(err(&reply), 0, "create {path}");
            assert_eq!(err(&watcher.call(&get_data(&path)).await), 0);
            // A watch on each node, fired by the set below.
            let watch = shepherd_testkit::exists(&path, true);
            assert_eq!(err(&watcher.call(&watch).await), 0);
            assert_eq!(err(&writer.call(&set_data(&path, b"x")).await), 0);
        }
    };
    let poll = async {
        let mut answers = 0;
        for _ in 0..100 {
            let mntr = four_letter_word(&addr, FourLetterWord::Mntr).await;
            assert!(mntr.contains("zk_znode_count\t"), "a whole answer: {mntr}");
            answers += 1;
        }
        answers
    };
    let ((), answers) = tokio::join!(load, poll);
    assert_eq!(answers, 100);

    // Every watch fired: the counters agree with the load, read once it is done.
    let mntr = four_letter_word(&addr, FourLetterWord::Mntr).await;
    assert_eq!(
        figure(&mntr, "zk_watch_count"),
        0,
        "every exists watch fired"
    );
    assert_eq!(figure(&mntr, "zk_znode_count"), 5 + NODES as i64);
    assert_eq!(
        figure(&mntr, "zk_cnt_node_changed_watch_count"),
        NODES as i64
    );
    let wchs = four_letter_word(&addr, FourLetterWord::Wchs).await;
    assert!(wchs.contains("Total watches:0"), "{wchs}");
    server.shutdown().await;
}
