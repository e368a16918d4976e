//! What each member reports: its mode in `srvr`, `stat` and `mntr`, its id in `conf`, and the
//! membership in `/zookeeper/config`, in the forms a real 3.8 ensemble prints.

use std::collections::BTreeMap;

use shepherd_client::Client;
use shepherd_protocol::FourLetterWord;
use shepherd_server::Server;
use shepherd_testkit::{four_letter_word, within};
use tokio::net::TcpStream;

use crate::{addr_of, ensemble};

/// The `Mode:` line of a member's `srvr`.
async fn mode(server: &shepherd_server::Server, id: u64) -> String {
    let srvr = four_letter_word(&addr_of(server, id), FourLetterWord::Srvr).await;
    srvr.lines()
        .find_map(|l| l.strip_prefix("Mode: "))
        .unwrap_or_else(|| panic!("no Mode line in {srvr:?}"))
        .to_string()
}

/// A member's `mntr` as key → value.
async fn mntr(server: &shepherd_server::Server, id: u64) -> BTreeMap<String, String> {
    let text = four_letter_word(&addr_of(server, id), FourLetterWord::Mntr).await;
    text.lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[tokio::test]
async fn each_member_reports_leader_or_follower() {
    let server = ensemble(3).await;
    assert_eq!(mode(&server, 1).await, "follower");
    assert_eq!(mode(&server, 2).await, "follower");
    assert_eq!(mode(&server, 3).await, "leader");
    let srvr = four_letter_word(&addr_of(&server, 3), FourLetterWord::Srvr).await;
    assert!(
        srvr.ends_with("Proposal sizes last/min/max: -1/-1/-1\n"),
        "a leader's srvr ends with its proposal sizes: {srvr:?}"
    );
    let stat = four_letter_word(&addr_of(&server, 1), FourLetterWord::Stat).await;
    assert!(stat.contains("\nMode: follower\n"), "{stat:?}");

    let leader = mntr(&server, 3).await;
    assert_eq!(leader["zk_server_state"], "leader");
    assert_eq!(leader["zk_peer_state"], "leading - broadcast");
    assert_eq!(leader["zk_quorum_size"], "3");
    assert_eq!(leader["zk_synced_followers"], "2");
    let follower = mntr(&server, 2).await;
    assert_eq!(follower["zk_server_state"], "follower");
    assert_eq!(follower["zk_peer_state"], "following - broadcast");
    assert!(!follower.contains_key("zk_synced_followers"));

    // Stopping the leader puts every member into LOOKING, as 3.8's peers go (measured on a
    // three-JVM ensemble): every word but ruok, envi and the masks says it is not serving,
    // isro says null. After the election the lead has moved, and the words follow.
    server.members().stop(3).await.unwrap();
    if server.members().leader().is_none() {
        let srvr = four_letter_word(&addr_of(&server, 2), FourLetterWord::Srvr).await;
        assert_eq!(
            srvr,
            "This ZooKeeper instance is not currently serving requests\n"
        );
        let isro = four_letter_word(&addr_of(&server, 1), FourLetterWord::Isro).await;
        assert_eq!(isro, "null");
        let ruok = four_letter_word(&addr_of(&server, 1), FourLetterWord::Ruok).await;
        assert_eq!(ruok, "imok");
    }
    within("the election", server.members().until_serving()).await;
    assert_eq!(mode(&server, 2).await, "leader");
    assert_eq!(mode(&server, 1).await, "follower");
    assert_eq!(mntr(&server, 2).await["zk_synced_followers"], "1");
    server.shutdown().await;
}

#[tokio::test]
async fn conf_shows_the_member_id_and_the_membership() {
    let server = ensemble(3).await;
    let conf = four_letter_word(&addr_of(&server, 2), FourLetterWord::Conf).await;
    let port = server.members().addr(2).unwrap().port();
    assert!(conf.contains(&format!("clientPort={port}\n")), "{conf}");
    assert!(conf.contains("serverId=2\n"), "{conf}");
    assert!(conf.contains("membership: \nserver.1="), "{conf}");
    assert!(conf.ends_with("version=0"), "{conf}");
    server.shutdown().await;
}

#[tokio::test]
async fn a_single_server_stays_standalone() {
    let server = Server::builder().start().await.unwrap();
    let srvr = four_letter_word(&server.connect_string(), FourLetterWord::Srvr).await;
    assert!(srvr.contains("\nMode: standalone\n"), "{srvr:?}");
    let client = within("connect", Client::connect(&server.connect_string()))
        .await
        .unwrap();
    let (config, _) = client.get_config().await.unwrap();
    assert!(config.is_empty(), "a standalone /zookeeper/config is empty");
    client.close().await.unwrap();
    server.shutdown().await;
}

/// `/zookeeper/config` as Curator's EnsembleTracker reads it: one `server.<id>` line per
/// member, `host:quorumPort:electionPort:participant;host:clientPort`, then `version=<hex>`.
#[tokio::test]
async fn zookeeper_config_lists_the_members_in_dynamic_config_form() {
    let server = ensemble(3).await;
    let client = within("connect", Client::connect(&server.connect_string()))
        .await
        .unwrap();
    let (data, stat) = client.get_config().await.unwrap();
    let text = String::from_utf8(data).unwrap();
    let mut lines = text.lines().collect::<Vec<_>>();
    assert_eq!(lines.pop(), Some("version=0"), "{text}");
    assert!(
        !text.ends_with('\n'),
        "no newline at the end, as ZooKeeper writes it"
    );
    assert_eq!(lines.len(), 3, "{text}");
    let client_ports: Vec<u16> = (1..=3)
        .map(|id| server.members().addr(id).unwrap().port())
        .collect();
    let mut peer_ports = Vec::new();
    for (line, id) in lines.iter().zip(1u64..) {
        let (key, value) = line.split_once('=').unwrap();
        assert_eq!(key, format!("server.{id}"));
        let (peer, client_addr) = value.split_once(';').unwrap();
        assert_eq!(client_addr, addr_of(&server, id));
        let fields: Vec<&str> = peer.split(':').collect();
        assert_eq!(fields.len(), 4, "{peer}");
        assert_eq!((fields[0], fields[3]), ("127.0.0.1", "participant"));
        for port in &fields[1..3] {
            let port: u16 = port.parse().unwrap();
            assert!(
                !client_ports.contains(&port),
                "a peer port is no client port"
            );
            peer_ports.push(port);
        }
    }
    peer_ports.sort_unstable();
    peer_ports.dedup();
    assert_eq!(peer_ports.len(), 6, "every peer port is distinct");
    // Reserved, never served.
    let refused = TcpStream::connect(("127.0.0.1", peer_ports[0])).await;
    assert!(refused.is_err(), "nothing listens on a peer port");
    assert_eq!(
        stat.version, -1,
        "ZooKeeper writes the config with version -1"
    );
    assert_eq!(
        stat.mzxid, 0,
        "and the static configuration's version as its mzxid"
    );
    client.close().await.unwrap();
    server.shutdown().await;
}
