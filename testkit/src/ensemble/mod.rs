//! An ensemble a test can stop a member of: [`TestEnsemble`], one type over the embedded
//! Shepherd ensemble (`Server::builder().members(n)`) and a real ZooKeeper ensemble
//! (`.ci/real-zk-ensemble.sh`, named by `SHEPHERD_REAL_ENSEMBLE_MEMBERS`), so that a failover
//! test body is written once and runs on both.
//!
//! | Control | Embedded | Real ZooKeeper |
//! |---|---|---|
//! | [`stop_member`](TestEnsemble::stop_member) | the member's listener and connections go; sessions live on | `kill -9` on the member's JVM |
//! | [`start_member`](TestEnsemble::start_member) | listens again | the JVM is started again and rejoins |
//! | [`partition_member`](TestEnsemble::partition_member) | connections stay open, unanswered | `SIGSTOP` on the JVM |
//! | [`heal_member`](TestEnsemble::heal_member) | answered again | `SIGCONT` |
//!
//! Invariants: every control returns once its effect holds (a stopped member refuses
//! connections, a started or healed one serves); a real ensemble is used by one test at a time
//! in a process (the [`TestEnsemble`] holds a process-wide lock) and is whole again when a test
//! gets it, whatever the test before it left.

pub mod real;

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use shepherd_client::{Client, Connector, TcpConnector};
use shepherd_server::Server;
use tokio::net::TcpStream;
use tokio::sync::{Mutex, MutexGuard};

use real::RealEnsemble;

/// Tests that stop members of the one real ensemble take turns.
static REAL_TURN: Mutex<()> = Mutex::const_new(());

/// An ensemble of servers whose members a test can stop, start, partition and heal.
#[derive(Debug)]
pub struct TestEnsemble {
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    InProcess(Server),
    Real {
        ensemble: RealEnsemble,
        _turn: MutexGuard<'static, ()>,
    },
}

impl TestEnsemble {
    /// A fresh embedded ensemble of `members` members, configured as
    /// [`embedded_builder`](crate::embedded_builder) configures a single server but with the
    /// real ensemble's 500 ms tick (sessions of 1 to 10 s).
    pub async fn in_process(members: usize) -> TestEnsemble {
        let server = crate::embedded_builder()
            .tick_time(Duration::from_millis(500))
            .members(members)
            .start()
            .await
            .expect("the embedded ensemble starts");
        TestEnsemble {
            kind: Kind::InProcess(server),
        }
    }

    /// The embedded ensemble's handle, with its other test controls; `None` on a real one.
    pub fn embedded(&self) -> Option<&Server> {
        match &self.kind {
            Kind::InProcess(server) => Some(server),
            Kind::Real { .. } => None,
        }
    }

    /// Stops the embedded ensemble (a real one is left running, whole or not: the next test
    /// to get it restores it).
    pub async fn shutdown(&self) {
        if let Kind::InProcess(server) = &self.kind {
            server.shutdown().await;
        }
    }

    /// The real ensemble that `SHEPHERD_REAL_ENSEMBLE_MEMBERS` names, whole, once no other
    /// test of this process uses it; `None` (with a note on stderr) when none is named.
    pub async fn real() -> Option<TestEnsemble> {
        let Some(ensemble) = RealEnsemble::from_env() else {
            eprintln!(
                "note: SHEPHERD_REAL_ENSEMBLE_MEMBERS is not set; skipping the real ensemble run \
                 (.ci/real-zk-ensemble.sh starts one)"
            );
            return None;
        };
        let turn = REAL_TURN.lock().await;
        ensemble.restore().await;
        Some(TestEnsemble {
            kind: Kind::Real {
                ensemble,
                _turn: turn,
            },
        })
    }

    /// `"shepherd"` or `"zookeeper"`, for messages.
    pub fn name(&self) -> &'static str {
        match &self.kind {
            Kind::InProcess(_) => "shepherd",
            Kind::Real { .. } => "zookeeper",
        }
    }

    /// The members' ids, ascending.
    pub fn member_ids(&self) -> Vec<u64> {
        match &self.kind {
            Kind::InProcess(server) => server.members().ids(),
            Kind::Real { ensemble, .. } => ensemble.members().iter().map(|m| m.id).collect(),
        }
    }

    /// Member `id`'s client address, `host:port`.
    pub fn member_addr(&self, id: u64) -> String {
        match &self.kind {
            Kind::InProcess(server) => server
                .members()
                .addr(id)
                .unwrap_or_else(|| panic!("no member {id}"))
                .to_string(),
            Kind::Real { ensemble, .. } => format!("127.0.0.1:{}", ensemble.member(id).port),
        }
    }

    /// Every member's address, comma-separated.
    pub fn connect_string(&self) -> String {
        self.member_ids()
            .into_iter()
            .map(|id| self.member_addr(id))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// A client of the whole ensemble whose session starts on member `first` (a client
    /// shuffles its hosts; until its first connection, every other member's attempt fails),
    /// and that fails over to the others as any client would. Its session timeout is
    /// `session`; like ZooKeeper's Java client, which splits the session timeout among the
    /// hosts, one attempt on one host may take a third of it, so that a partitioned member
    /// does not hold a reconnection past the session.
    pub async fn connect_from(&self, first: u64, session: Duration) -> Client {
        let first = self.member_addr(first);
        let landed = Arc::new(AtomicBool::new(false));
        let connector = move |host: &str| {
            let (host, first, landed) = (host.to_owned(), first.clone(), landed.clone());
            async move {
                if host != first && !landed.load(Ordering::SeqCst) {
                    return Err(io::Error::other("not the first member yet"));
                }
                let stream = TcpStream::connect(&host).await?;
                stream.set_nodelay(true)?;
                landed.store(true, Ordering::SeqCst);
                Ok(stream)
            }
        };
        self.connect_with(&self.connect_string(), session, connector)
            .await
    }

    /// A client of member `id` alone: it cannot fail over.
    pub async fn connect_only(&self, id: u64, session: Duration) -> Client {
        self.connect_with(&self.member_addr(id), session, TcpConnector)
            .await
    }

    async fn connect_with(
        &self,
        connect: &str,
        session: Duration,
        connector: impl Connector,
    ) -> Client {
        crate::within(
            &format!("a session with {connect}"),
            Client::builder()
                .session_timeout(session)
                .connect_timeout(session / 3)
                .connect_with(connect, connector),
        )
        .await
        .unwrap_or_else(|e| panic!("connect to {connect}: {e}"))
    }

    /// The member `client` is connected to now, if any.
    pub fn member_of(&self, client: &Client) -> Option<u64> {
        let host = client.status().host?;
        self.member_ids()
            .into_iter()
            .find(|&id| self.member_addr(id) == host)
    }

    /// The leader's id (waits for one, bounded, while a real election runs).
    pub async fn leader(&self) -> u64 {
        if let Kind::InProcess(server) = &self.kind {
            return server
                .members()
                .leader()
                .expect("an embedded ensemble has a leader");
        }
        crate::within("a leader", async {
            loop {
                for id in self.member_ids() {
                    if self.mode(id).await.as_deref() == Some("leader") {
                        return id;
                    }
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
        .await
    }

    /// A member that is not the leader.
    pub async fn follower(&self) -> u64 {
        let leader = self.leader().await;
        self.member_ids()
            .into_iter()
            .find(|&id| id != leader)
            .expect("an ensemble of more than one member")
    }

    /// A real member's `Mode:` (`leader`, `follower`), `None` while it does not serve; always
    /// `None` in process, whose roles the embedded handle tells.
    pub async fn mode(&self, id: u64) -> Option<String> {
        match &self.kind {
            Kind::InProcess(_) => None,
            Kind::Real { ensemble, .. } => ensemble.mode(id).await,
        }
    }

    /// Stops member `id`: it refuses connections when this returns.
    pub async fn stop_member(&self, id: u64) {
        match &self.kind {
            Kind::InProcess(server) => server.members().stop(id).await.expect("stop a member"),
            Kind::Real { ensemble, .. } => ensemble.stop(id).await,
        }
    }

    /// Starts member `id` again: it serves when this returns.
    pub async fn start_member(&self, id: u64) {
        match &self.kind {
            Kind::InProcess(server) => server.members().start(id).await.expect("start a member"),
            Kind::Real { ensemble, .. } => ensemble.start(id).await,
        }
    }

    /// Partitions member `id`: its connections stay open and go unanswered.
    pub async fn partition_member(&self, id: u64) {
        match &self.kind {
            Kind::InProcess(server) => server.members().partition(id).expect("partition a member"),
            Kind::Real { ensemble, .. } => ensemble.partition(id),
        }
    }

    /// Heals member `id`'s partition: it serves when this returns.
    pub async fn heal_member(&self, id: u64) {
        match &self.kind {
            Kind::InProcess(server) => server.members().heal(id).expect("heal a member"),
            Kind::Real { ensemble, .. } => ensemble.heal(id).await,
        }
    }
}
