//! Memory per idle session: the server's resident memory before and after opening S sessions
//! that then only ping (the client pings every third of the session timeout) for a hold
//! period, after which every one must still be connected and never have been disconnected.
//!
//! Each session is its own connection, so S sessions take S file descriptors here and S in the
//! server, and S local ports of one (source, destination) address pair: the sessions are
//! spread over `127.0.0.1 ..= 127.0.0.N` source addresses (`--source-addrs N`) when the server
//! is on loopback, since Linux gives one source address about 28 000 ports
//! (`net.ipv4.ip_local_port_range`).
//!
//! Invariants: the file limits of both processes are checked before any session is opened, so
//! that a limit is reported as such rather than as a failed connect; every session is closed
//! at the end (in parallel, bounded in time), so a `--connect` server does not keep them until
//! they expire.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use futures_util::{StreamExt, TryStreamExt, stream};
use shepherd_client::{Client, SessionState};
use tokio::net::{TcpSocket, TcpStream};

use super::measurement::Measurement;
use crate::error::{Error, Result};
use crate::rss;
use crate::target::{Target, open_files_limit};

/// Sessions connecting at once.
const CONNECT_PARALLELISM: usize = 128;
/// File descriptors a process needs besides the sessions' (runtime, listeners, files).
const SPARE_FILES: u64 = 64;

/// How the sessions are opened and held.
#[derive(Debug, Clone)]
pub struct Hold {
    /// Sessions to open.
    pub sessions: usize,
    /// The session timeout asked for (the server bounds it to 2..20 ticks).
    pub timeout: Duration,
    /// How long to hold them, pinging, before the second reading.
    pub hold: Duration,
    /// Spread over this many loopback source addresses (1: the system's choice).
    pub source_addrs: u8,
    /// Waited before each memory reading.
    pub settle: Duration,
}

/// Opens, holds and closes the sessions, measuring the server's memory before and after.
///
/// # Errors
/// [`Error::Refused`] when a file limit is too low, the server's process is unknown, or a
/// session was lost during the hold; [`Error::Client`] when a session cannot be opened.
pub async fn measure(target: &Target, hold: &Hold) -> Result<Measurement> {
    let needed = hold.sessions as u64 + SPARE_FILES;
    let mut processes = vec![("this process", std::process::id())];
    processes.extend(target.pid.map(|pid| ("the server", pid)));
    for (who, pid) in processes {
        let limit = open_files_limit(pid)?;
        if let Some(limit) = limit.filter(|&limit| limit < needed) {
            return Err(Error::Refused(format!(
                "{} sessions need {needed} open files in {who} (pid {pid}), whose limit is \
                 {limit}: raise it (ulimit -n) or measure fewer sessions",
                hold.sessions
            )));
        }
    }
    let ((clients, statuses, seconds), rss) = rss::around(target, hold.settle, async {
        let opened = std::time::Instant::now();
        let clients = open(&target.connect, hold).await?;
        let seconds = opened.elapsed().as_secs_f64();
        // Any change of the status (a disconnection, even one healed since) marks a lost
        // session.
        let mut statuses: Vec<_> = clients.iter().map(Client::status_watch).collect();
        for status in &mut statuses {
            status.mark_unchanged();
        }
        tokio::time::sleep(hold.hold).await;
        Ok((clients, statuses, seconds))
    })
    .await?;
    let lost = clients
        .iter()
        .zip(&statuses)
        .filter(|(client, status)| {
            client.status().state != SessionState::Connected || status.has_changed().unwrap_or(true)
        })
        .count();
    stream::iter(&clients)
        .for_each_concurrent(CONNECT_PARALLELISM, |client| async move {
            let _ = tokio::time::timeout(Duration::from_secs(10), client.close()).await;
        })
        .await;
    Ok(Measurement {
        what: "sessions",
        count: hold.sessions,
        value_size: None,
        rss,
        seconds,
        lost,
    })
}

/// Opens every session, session `i` from source address `127.0.0.(1 + i % source_addrs)`
/// when that spread is asked for and the server is on loopback.
async fn open(connect: &str, hold: &Hold) -> Result<Vec<Client>> {
    let server: Option<SocketAddr> = connect.parse().ok();
    let spread = match server {
        Some(addr) if addr.ip().is_loopback() && addr.is_ipv4() && hold.source_addrs > 1 => {
            hold.source_addrs
        }
        _ => 1,
    };
    stream::iter(0..hold.sessions)
        .map(|i| async move {
            let builder = Client::builder()
                .session_timeout(hold.timeout)
                .connect_timeout(Duration::from_secs(30));
            let connected = if spread > 1 {
                let source = Ipv4Addr::new(127, 0, 0, 1 + (i % usize::from(spread)) as u8);
                builder
                    .connect_with(connect, move |host: &str| {
                        let host = host.to_owned();
                        async move { connect_from(IpAddr::V4(source), &host).await }
                    })
                    .await
            } else {
                builder.connect(connect).await
            };
            connected.map_err(|source| Error::Client {
                what: format!(
                    "cannot open session {} of {} (ZooKeeper's maxClientCnxns must allow them)",
                    i + 1,
                    hold.sessions
                ),
                source,
            })
        })
        .buffer_unordered(CONNECT_PARALLELISM)
        .try_collect()
        .await
}

/// A TCP connection to `host` (`ip:port`) from `source`, with TCP_NODELAY as the client's
/// default connector sets it.
async fn connect_from(source: IpAddr, host: &str) -> std::io::Result<TcpStream> {
    let addr: SocketAddr = host
        .parse()
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    let socket = TcpSocket::new_v4()?;
    socket.bind(SocketAddr::new(source, 0))?;
    let stream = socket.connect(addr).await?;
    stream.set_nodelay(true)?;
    Ok(stream)
}
