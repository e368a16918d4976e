//! [`Probe`] and [`Reading`]: how the herd benchmark counts watch notifications and
//! getChildren calls.
//!
//! Notifications are counted by the server, never by the clients (a client cannot see the
//! notifications its neighbours receive): the embedded server's [`CoreMetrics`]
//! (`Server::inspect`), or, with `--connect`, the `mntr` four-letter word (ZooKeeper
//! 3.6+ prints its per-event-type watch counters as summaries; the `zk_sum_node_*_watch_count`
//! keys are the numbers of watchers notified). getChildren calls are counted by the recipes
//! themselves, in the [`LockStats`] every contender of a run shares.
//!
//! Invariant: a [`Reading`] takes both counts together, so that the difference of two
//! readings is what happened between them, and "nothing moved" compares both.
//!
//! [`CoreMetrics`]: shepherd_server::core::CoreMetrics

use std::collections::HashMap;
use std::time::Duration;

use shepherd_recipes::{LockStats, StatsSnapshot};
use shepherd_server::Server;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;

use crate::error::{Error, Result};

/// Where the server's count of watch notifications sent is read.
pub enum Probe<'a> {
    /// The embedded server's metrics.
    Embedded(&'a Server),
    /// `mntr` sent to this `host:port`.
    Mntr(String),
}

/// ZooKeeper's watch counters, one per event type, as `mntr` names them.
const WATCH_COUNTERS: [&str; 4] = [
    "node_created_watch_count",
    "node_deleted_watch_count",
    "node_changed_watch_count",
    "node_children_watch_count",
];

/// Both counts at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reading {
    /// The contenders' shared lock counters (waiting, getChildren calls…).
    pub stats: StatsSnapshot,
    /// The server's notifications sent so far.
    pub notifications: u64,
}

impl Reading {
    /// getChildren calls since `before`.
    pub fn get_children_since(&self, before: &Reading) -> u64 {
        self.stats.get_children - before.stats.get_children
    }

    /// Notifications since `before` (a server restarted in between counts from zero).
    pub fn notifications_since(&self, before: &Reading) -> u64 {
        self.notifications.saturating_sub(before.notifications)
    }
}

impl Probe<'_> {
    /// The probe for a `--connect` string: `mntr` to its first host.
    pub fn mntr(connect: &str) -> Probe<'static> {
        Probe::Mntr(first_host(connect))
    }

    /// Reads `stats` and the server's notification count.
    pub async fn read(&self, stats: &LockStats) -> Result<Reading> {
        let stats = stats.snapshot();
        Ok(Reading {
            stats,
            notifications: self.notifications().await?,
        })
    }

    /// The server's count of watch notifications sent.
    pub async fn notifications(&self) -> Result<u64> {
        match self {
            Probe::Embedded(server) => {
                Ok(server.inspect(|core| core.metrics().clone().notifications_total()))
            }
            Probe::Mntr(addr) => {
                let text = mntr(addr).await?;
                mntr_notifications(&text)
                    .ok_or_else(|| Error::MntrNoCounters { addr: addr.clone() })
            }
        }
    }

    /// The server's name and version, for the plot's title (checks that the counters are
    /// readable).
    pub async fn version(&self) -> Result<String> {
        self.notifications().await?;
        match self {
            Probe::Embedded(_) => Ok("embedded Shepherd".to_owned()),
            Probe::Mntr(addr) => {
                let text = mntr(addr).await?;
                let version = mntr_values(&text)
                    .get("zk_version")
                    .map(|v| v.split([',', '-']).next().unwrap_or(v).trim().to_owned())
                    .unwrap_or_default();
                Ok(format!("ZooKeeper {version}"))
            }
        }
    }
}

/// `host:port` of the first host of a connect string (for `mntr`).
fn first_host(connect: &str) -> String {
    let hosts = connect.split('/').next().unwrap_or(connect);
    let first = hosts.split(',').next().unwrap_or(hosts).trim();
    let has_port = match first.rfind(']') {
        Some(close) => first[close..].contains(':'),
        None => first.contains(':'),
    };
    if has_port {
        first.to_owned()
    } else {
        format!("{first}:2181")
    }
}

/// Sends `mntr` to `addr` and returns the reply, within 10 s.
async fn mntr(addr: &str) -> Result<String> {
    let exchange = async {
        let mut stream = TcpStream::connect(addr).await?;
        stream.write_all(b"mntr").await?;
        let mut reply = String::new();
        stream.read_to_string(&mut reply).await?;
        Ok::<_, std::io::Error>(reply)
    };
    match timeout(Duration::from_secs(10), exchange).await {
        Ok(Ok(reply)) if reply.is_empty() => Err(Error::MntrEmpty {
            addr: addr.to_owned(),
        }),
        Ok(Ok(reply)) => Ok(reply),
        Ok(Err(source)) => Err(Error::Mntr {
            addr: addr.to_owned(),
            source,
        }),
        Err(_) => Err(Error::TimedOut(format!("waiting for mntr of {addr}"))),
    }
}

/// An `mntr` reply's `key value` lines.
fn mntr_values(text: &str) -> HashMap<&str, &str> {
    text.lines()
        .filter_map(|line| {
            let mut parts = line.split_whitespace();
            Some((parts.next()?, parts.next()?))
        })
        .collect()
}

/// The sum of the watch counters in an `mntr` reply: `zk_sum_<counter>` (ZooKeeper 3.6+,
/// where each counter is a summary of watchers notified per trigger) or else `zk_<counter>`.
fn mntr_notifications(text: &str) -> Option<u64> {
    let values = mntr_values(text);
    let mut found = false;
    let mut total = 0u64;
    for counter in WATCH_COUNTERS {
        let value = [format!("zk_sum_{counter}"), format!("zk_{counter}")]
            .iter()
            .find_map(|key| values.get(key.as_str())?.parse::<f64>().ok());
        if let Some(value) = value {
            found = true;
            total += value.round() as u64;
        }
    }
    found.then_some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mntr_counters_are_summed() {
        let text = "zk_version\t3.8.0-debian, built on 2022\n\
                    zk_sum_node_created_watch_count\t2\n\
                    zk_cnt_node_created_watch_count\t1\n\
                    zk_sum_node_deleted_watch_count\t5\n\
                    zk_sum_node_children_watch_count\t7\n";
        assert_eq!(mntr_notifications(text), Some(14));
        assert_eq!(
            mntr_notifications("zk_node_deleted_watch_count\t3\n"),
            Some(3)
        );
        assert_eq!(mntr_notifications("zk_version\t3.8.0\n"), None);
        assert_eq!(first_host("a:1,b:2/chroot"), "a:1");
        assert_eq!(first_host("localhost"), "localhost:2181");
    }
}
