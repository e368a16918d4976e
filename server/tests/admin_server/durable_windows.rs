//! With a data directory, the windows on the core that are not replies (four-letter words, the
//! AdminServer, `/metrics`) show only what is on disk, as the replies do: while the log is held
//! none of them answers with a write it does not have yet; once the disk has it, they all do.

use std::time::Duration;

use shepherd_protocol::{CreateMode, FourLetterWord};
use shepherd_server::Server;
use shepherd_testkit::{Peer, create, four_letter_word, hello, within};

use crate::{any_port, http};

/// How long "no answer" is checked for while the log is held.
const QUIET: Duration = Duration::from_millis(300);

/// The number `name` has in a line `name<sep>number` of `text`.
fn figure(text: &str, name: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let rest = line.strip_prefix(name)?;
        rest.trim_start_matches(['\t', ' ', ':'])
            .trim()
            .parse()
            .ok()
    })
}

/// While a create waits for the disk, `mntr` and `cons` over the client port, the
/// AdminServer's `monitor` and a `/metrics` scrape are all held; after the thaw each answers,
/// and shows the node. (They used to answer at once with the node the disk did not have: a
/// crash then would have taken back what they showed.)
#[tokio::test]
async fn windows_on_the_core_answer_only_once_what_they_show_is_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::builder()
        .all_four_letter_words()
        .data_dir(dir.path())
        .admin_server(any_port())
        .metrics_server(any_port())
        .start()
        .await
        .expect("server starts");
    let addr = server.connect_string();
    let (admin, metrics) = (server.admin_addr().unwrap(), server.metrics_addr().unwrap());
    let before = figure(
        &four_letter_word(&addr, FourLetterWord::Mntr).await,
        "zk_znode_count",
    )
    .expect("a znode count");

    let mut peer = Peer::tcp(&addr).await;
    peer.handshake(&hello()).await.expect("a session");
    assert!(server.controls().freeze_log());
    peer.send(&create("/held", b"v", CreateMode::Persistent))
        .await;
    within(
        "the create applied",
        server.wait_for(|_| server.controls().held_for_disk() >= 1),
    )
    .await;

    let mntr = tokio::spawn({
        let addr = addr.clone();
        async move { four_letter_word(&addr, FourLetterWord::Mntr).await }
    });
    let cons = tokio::spawn({
        let addr = addr.clone();
        async move { four_letter_word(&addr, FourLetterWord::Cons).await }
    });
    let monitor = tokio::spawn(async move { http::get(admin, "/commands/monitor").await });
    let scrape = tokio::spawn(async move { http::get(metrics, "/metrics").await });
    tokio::time::sleep(QUIET).await;
    for (name, done) in [
        ("mntr", mntr.is_finished()),
        ("cons", cons.is_finished()),
        ("the AdminServer", monitor.is_finished()),
        ("/metrics", scrape.is_finished()),
    ] {
        assert!(!done, "{name} answered before the disk had what it shows");
    }

    assert!(server.controls().thaw_log());
    let mntr = within("mntr after the thaw", mntr).await.unwrap();
    assert_eq!(figure(&mntr, "zk_znode_count"), Some(before + 1), "{mntr}");
    let cons = within("cons after the thaw", cons).await.unwrap();
    assert!(cons.contains("queued="), "{cons}");
    let monitor = within("monitor after the thaw", monitor).await.unwrap();
    assert_eq!(monitor.status, 200);
    let json: serde_json::Value = serde_json::from_str(&monitor.body).unwrap();
    assert_eq!(json["znode_count"].as_u64(), Some(before + 1), "{json}");
    let scrape = within("/metrics after the thaw", scrape).await.unwrap();
    assert_eq!(scrape.status, 200);
    assert_eq!(
        figure(&scrape.body, "znode_count "),
        Some(before + 1),
        "{}",
        scrape.body
    );
    server.shutdown().await;
}
