//! The member controls: addresses, stop and start on the same port, partitions, leadership.

use std::time::Duration;

use shepherd_client::{Client, CreateOptions};
use shepherd_protocol::FourLetterWord;
use shepherd_server::{ControlError, MemberState, Server};
use shepherd_testkit::{Peer, four_letter_word, hello, within};
use tokio::net::TcpStream;

use crate::{addr_of, ensemble};

#[tokio::test]
async fn members_have_their_own_ports_and_the_connect_string_lists_them_all() {
    let server = ensemble(3).await;
    assert_eq!(server.members().ids(), vec![1, 2, 3]);
    let addrs: Vec<_> = (1..=3)
        .map(|id| server.members().addr(id).unwrap())
        .collect();
    assert_eq!(server.local_addr(), addrs[0], "local_addr is member 1's");
    assert_ne!(addrs[0].port(), addrs[1].port());
    assert_ne!(addrs[1].port(), addrs[2].port());
    let listed: Vec<String> = addrs.iter().map(ToString::to_string).collect();
    assert_eq!(server.connect_string(), listed.join(","));
    assert_eq!(server.members().addr(0), None);
    assert_eq!(server.members().addr(4), None);
    for id in 1..=3 {
        assert_eq!(server.members().state(id), Some(MemberState::Up));
    }
    server.shutdown().await;
}

#[tokio::test]
async fn a_single_server_is_member_1_of_1() {
    let server = Server::builder().start().await.unwrap();
    assert_eq!(server.members().ids(), vec![1]);
    assert_eq!(server.members().addr(1), Some(server.local_addr()));
    assert_eq!(server.connect_string(), server.local_addr().to_string());
    assert_eq!(server.members().leader(), None, "standalone: nobody leads");
    server.shutdown().await;
}

#[tokio::test]
async fn a_fixed_port_gives_consecutive_ports() {
    // A free base port, released before the ensemble binds it and the two after it; another
    // process may take one meanwhile, so a bind error is not this test's failure.
    let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = probe.local_addr().unwrap().port();
    drop(probe);
    if base > 65_000 {
        return;
    }
    let Ok(server) = Server::builder().members(3).port(base).start().await else {
        return;
    };
    let ports: Vec<u16> = (1..=3)
        .map(|id| server.members().addr(id).unwrap().port())
        .collect();
    assert_eq!(ports, vec![base, base + 1, base + 2]);
    server.shutdown().await;
}

#[tokio::test]
async fn a_stopped_member_refuses_connections_and_starts_again_on_the_same_port() {
    let server = ensemble(3).await;
    let addr = server.members().addr(2).unwrap();
    server.members().stop(2).await.unwrap();
    assert_eq!(server.members().state(2), Some(MemberState::Stopped));
    assert_eq!(server.members().addr(2), Some(addr), "kept while stopped");
    assert!(
        TcpStream::connect(addr).await.is_err(),
        "its port is closed"
    );
    // The others serve meanwhile.
    let word = four_letter_word(&addr_of(&server, 1), FourLetterWord::Ruok).await;
    assert_eq!(word, "imok");
    // Stopping twice is harmless.
    server.members().stop(2).await.unwrap();

    server.members().start(2).await.unwrap();
    assert_eq!(server.members().state(2), Some(MemberState::Up));
    assert_eq!(server.members().addr(2), Some(addr));
    let word = four_letter_word(&addr.to_string(), FourLetterWord::Ruok).await;
    assert_eq!(word, "imok", "the same port answers again");
    server.members().start(2).await.unwrap();
    server.shutdown().await;
}

#[tokio::test]
async fn unknown_members_are_errors() {
    let server = ensemble(2).await;
    assert_eq!(
        server.members().stop(3).await,
        Err(ControlError::UnknownMember(3))
    );
    assert_eq!(
        server.members().start(0).await,
        Err(ControlError::UnknownMember(0))
    );
    assert_eq!(
        server.members().partition(9),
        Err(ControlError::UnknownMember(9))
    );
    assert_eq!(
        server.members().heal(9),
        Err(ControlError::UnknownMember(9))
    );
    assert_eq!(server.members().state(3), None);
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn the_highest_id_leads_and_leadership_moves_as_an_election_would() {
    let server = ensemble(3).await;
    assert_eq!(
        server.members().leader(),
        Some(3),
        "a fresh ensemble elects the highest myid"
    );
    server.members().stop(3).await.unwrap();
    assert_eq!(
        server.members().leader(),
        None,
        "a lost leader leaves every member looking until the election ends"
    );
    within("the election", server.members().until_serving()).await;
    assert_eq!(
        server.members().leader(),
        Some(2),
        "the highest member still up"
    );
    server.members().start(3).await.unwrap();
    assert_eq!(
        server.members().leader(),
        Some(2),
        "a member that comes back follows"
    );
    server.members().partition(2).unwrap();
    assert_eq!(server.members().state(2), Some(MemberState::Partitioned));
    assert_eq!(
        server.members().leader(),
        Some(2),
        "its peers count a partitioned leader lost only after syncLimit"
    );
    // syncLimit is 5 ticks, the ticks ZooKeeper's default 2 s.
    tokio::time::sleep(Duration::from_secs(11)).await;
    within("the election", server.members().until_serving()).await;
    assert_eq!(
        server.members().leader(),
        Some(3),
        "a partitioned leader loses the lead"
    );
    server.members().heal(2).unwrap();
    assert_eq!(server.members().state(2), Some(MemberState::Up));
    assert_eq!(server.members().leader(), Some(3));
    server.shutdown().await;
}

/// Two of three stopped, as on a real three-JVM ensemble with 4 s sessions and a 27 s outage
/// (docs/ensemble.md): the survivor serves nothing, no session expires, and once a member is
/// back an election brings the same sessions back under a new epoch.
#[tokio::test(start_paused = true)]
async fn without_a_quorum_nothing_serves_and_no_session_expires() {
    let server = Server::builder()
        .members(3)
        .tick_time(Duration::from_millis(500))
        .all_four_letter_words()
        .start()
        .await
        .unwrap();
    let client = within(
        "connect",
        Client::builder()
            .session_timeout(Duration::from_secs(4))
            .connect(&addr_of(&server, 1)),
    )
    .await
    .unwrap();
    let session = client.session_id();
    let epoch = server.controls().last_zxid() >> 32;
    server.members().stop(3).await.unwrap();
    server.members().stop(2).await.unwrap();
    assert_eq!(server.members().leader(), None);
    // A handshake with the survivor is closed unanswered, as by a server that is not running.
    let mut peer = Peer::tcp(addr_of(&server, 1)).await;
    assert!(
        within("the close", peer.handshake(&hello()))
            .await
            .is_none(),
        "a looking member closes a new connection at its handshake"
    );
    tokio::time::sleep(Duration::from_secs(27)).await;
    assert!(
        server.controls().session(session).is_some(),
        "no session expires without a quorum"
    );
    server.members().start(2).await.unwrap();
    within("the election", server.members().until_serving()).await;
    assert_eq!(server.members().leader(), Some(2));
    assert_eq!(
        server.controls().last_zxid() >> 32,
        epoch + 1,
        "a new leader's epoch"
    );
    within(
        "the client back",
        client.create("/back", b"", &CreateOptions::persistent()),
    )
    .await
    .unwrap();
    assert_eq!(client.session_id(), session, "the same session");
    client.close().await.unwrap();
    server.shutdown().await;
}

#[tokio::test]
async fn a_restart_keeps_stopped_members_stopped() {
    let server = ensemble(3).await;
    server.members().stop(1).await.unwrap();
    server.restart().await.unwrap();
    assert_eq!(server.members().state(1), Some(MemberState::Stopped));
    for id in [2, 3] {
        assert_eq!(server.members().state(id), Some(MemberState::Up));
        let word = four_letter_word(&addr_of(&server, id), FourLetterWord::Ruok).await;
        assert_eq!(word, "imok", "member {id} listens again after the restart");
    }
    server.members().start(1).await.unwrap();
    server.shutdown().await;
}

/// One port per member, in any order: member 1 on the first, and so on (0 picks a free one).
#[tokio::test]
async fn member_ports_put_each_member_on_its_own_port() {
    // Two free ports, released before the ensemble binds them; another process may take one
    // meanwhile, so a bind error is not this test's failure.
    let probes: Vec<_> = (0..2)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    let ports: Vec<u16> = probes
        .iter()
        .map(|p| p.local_addr().unwrap().port())
        .collect();
    drop(probes);
    let asked = [ports[1], 0, ports[0]];
    let Ok(server) = Server::builder().member_ports(&asked).start().await else {
        return;
    };
    let bound: Vec<u16> = (1..=3)
        .map(|id| server.members().addr(id).unwrap().port())
        .collect();
    assert_eq!((bound[0], bound[2]), (ports[1], ports[0]));
    assert!(bound[1] != 0 && !ports.contains(&bound[1]), "{bound:?}");
    assert_eq!(server.members().addr(4), None, "as many members as ports");
    server.shutdown().await;
}

/// A member cut off from its peers, not its clients: it serves until syncLimit, then looks
/// alone; an isolated leader is replaced by the others; healed, it follows again.
#[tokio::test(start_paused = true)]
async fn an_isolated_member_looks_alone_after_sync_limit() {
    let server = ensemble(3).await;
    let serving = |id: u64| {
        let server = &server;
        async move {
            let srvr = four_letter_word(&addr_of(server, id), FourLetterWord::Srvr).await;
            srvr.contains("Mode: ")
        }
    };
    server.members().isolate(1).unwrap();
    assert_eq!(server.members().state(1), Some(MemberState::Isolated));
    assert!(serving(1).await, "it has not noticed yet");
    // syncLimit is 5 ticks of ZooKeeper's default 2 s.
    tokio::time::sleep(Duration::from_secs(11)).await;
    assert!(!serving(1).await, "an isolated follower looks alone");
    assert_eq!(server.members().role(1), Some("looking"));
    assert_eq!(server.members().leader(), Some(3), "the others serve on");
    assert!(serving(2).await);
    server.members().heal(1).unwrap();
    assert!(serving(1).await, "healed, it follows again");

    server.members().isolate(3).unwrap();
    tokio::time::sleep(Duration::from_secs(11)).await;
    within("the election", server.members().until_serving()).await;
    assert_eq!(
        server.members().leader(),
        Some(2),
        "the others replace an isolated leader"
    );
    assert!(!serving(3).await, "the old leader looks alone");
    server.members().heal(3).unwrap();
    assert_eq!(
        server.members().leader(),
        Some(2),
        "and follows once healed"
    );
    assert_eq!(server.members().role(3), Some("follower"));
    assert_eq!(
        server.members().isolate(9),
        Err(ControlError::UnknownMember(9))
    );
    server.shutdown().await;
}

/// A partitioned member healed while the others are looking is out of date: its clients see a
/// connection loss then, instead of being served with no leader.
#[tokio::test(start_paused = true)]
async fn a_member_healed_during_an_election_drops_its_clients() {
    let server = ensemble(3).await;
    let client = within("connect", Client::connect(&addr_of(&server, 1)))
        .await
        .unwrap();
    let mut status = client.status_watch();
    server.members().partition(1).unwrap();
    server.members().stop(3).await.unwrap();
    assert_eq!(
        server.members().leader(),
        None,
        "the leader is gone: looking"
    );
    assert_eq!(
        status.borrow_and_update().state,
        shepherd_client::SessionState::Connected,
        "a partitioned member's connections stay frozen"
    );
    server.members().heal(1).unwrap();
    within(
        "the connection loss",
        status.wait_for(|s| s.state != shepherd_client::SessionState::Connected),
    )
    .await
    .unwrap();
    within("the election", server.members().until_serving()).await;
    server.shutdown().await;
}
