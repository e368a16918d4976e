//! An async ZooKeeper client for tokio, speaking the 3.8 wire protocol through
//! `shepherd-protocol`.
//!
//! One spawned task per session owns the connection (TCP by default, or any stream a
//! [`Connector`] opens): it pipelines requests (matched to replies by their order, which must
//! equal the send order, as in the Java client), pings when idle, drops a connection that stays
//! silent for two thirds of the session timeout, and on a drop fails what was in flight with
//! [`Error::ConnectionLoss`], reconnects to the next host with the same session, re-sends
//! credentials and re-arms every watch. Handles ([`Client`]) are cheap clones talking to that
//! task.
//!
//! ```no_run
//! # async fn demo() -> Result<(), shepherd_client::Error> {
//! use shepherd_client::{Client, CreateOptions};
//! let zk = Client::connect("127.0.0.1:2181/app").await?;
//! zk.create("/lock", b"me", &CreateOptions::ephemeral()).await?;
//! let (data, stat, changed) = zk.get_data_w("/lock").await?;
//! let event = changed.await?; // NodeDataChanged or NodeDeleted
//! zk.close().await?;
//! # Ok(()) }
//! ```
//!
//! # Errors: why ZooKeeper outcomes are `Error::Keeper`
//!
//! Every call returns `Result<T, Error>`. ZooKeeper's own outcomes (`NoNode`, `NodeExists`,
//! `BadVersion`, …) are [`Error::Keeper`] carrying the server's [`ErrorCode`] unchanged, next
//! to the variants for what this side observed (connection loss, expiry, close, broken frames,
//! I/O, misuse). A nested `Result<Result<T, ErrorCode>, Error>` was considered and rejected:
//! recipes branch on a handful of codes and propagate the rest, and one level with `?` and
//! helpers ([`Error::is_no_node`], [`Error::is_node_exists`], …) reads like the Java recipes
//! it ports, while keeping the outcome a plain value that is matched, never a panic or a
//! string. The exceptions are deliberate and documented where they occur: [`Client::exists`]
//! answers `Ok(None)` for a missing node, [`Client::create_all`] `Ok(None)` for an existing
//! one (it creates what is missing, parents included), and a multiRead reports each op's outcome in its own
//! slot.
//!
//! # Security: TLS and SASL
//! [`ClientBuilder::tls_ca_pem`] (with [`ClientBuilder::tls_identity_pem`] for mutual TLS)
//! makes every connection of the session TLS, as a `secureClientPort` wants; the server's
//! certificate is verified against the connect string's host (a DNS name or an IP address)
//! unless [`ClientBuilder::tls_server_name`] names another. Bad PEM is an
//! [`Error::InvalidArgument`] from `connect`; a failed TLS handshake fails that attempt like a
//! refused connection, with rustls' reason in the [`Error::Io`].
//! [`ClientBuilder::sasl_digest_md5`] authenticates each connection with SASL DIGEST-MD5 before
//! anything else is sent on it, as ZooKeeper's Java client does; refused credentials end the
//! session as [`SessionState::AuthFailed`]. Kerberos (GSSAPI) is not offered.
//!
//! ```no_run
//! # async fn demo(ca: &[u8], cert: &[u8], key: &[u8]) -> Result<(), shepherd_client::Error> {
//! let zk = shepherd_client::Client::builder()
//!     .tls_ca_pem(ca)
//!     .tls_identity_pem(cert, key)
//!     .sasl_digest_md5("alice", "alice-secret")
//!     .connect("zk1.example:2281,zk2.example:2281/app")
//!     .await?;
//! # Ok(()) }
//! ```
//!
//! # Not supported
//! SASL mechanisms other than DIGEST-MD5, read-only mode beyond the handshake flag (no search for a read-write server),
//! reconfig, checkWatches, and local (client-only) watch removal.

mod chroot;
mod client;
mod config;
mod conn;
mod connector;
mod create_all;
mod error;
mod multi;
mod ops;
mod sasl;
mod session;
mod tls;
mod watch;

pub use client::Client;
pub use config::{ClientBuilder, DEFAULT_CONNECT_TIMEOUT, DEFAULT_SESSION_TIMEOUT};
pub use connector::{Connector, TcpConnector};
pub use error::{Error, Result};
pub use multi::{MultiBuilder, MultiReadBuilder, ReadResult, WriteResult};
pub use ops::CreateOptions;
pub use session::{SessionState, SessionStatus};
pub use watch::{OneshotWatcher, PersistentWatcher, WatchedEvent};

/// The rustls crate this client's TLS is built on, for [`ClientBuilder::tls_config`].
pub use tokio_rustls::rustls;

pub use shepherd_protocol::{
    Acl, AddWatchMode, ClientInfo, CreateMode, ErrorCode, EventType, Id, KeeperState, Stat,
    WatcherType, perms,
};
