//! Building and starting a server: [`Server::builder`] gathers the settings, and
//! [`ServerBuilder::start`] binds (or takes the caller's listener), builds the core and the
//! shared state, and spawns the accept and tick loops.
//!
//! The caller owns the listener and the shutdown token if it wants to: a listener it bound is
//! served as given, and cancelling its token stops the server as [`Server::shutdown`]
//! does. Every task is tracked, so shutdown can wait for all of them.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use rand::TryRngCore;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::config::Config;
use crate::core::Core;
use crate::shell::durable::lifecycle;
use crate::shell::durable::recovery::recover_and_snapshot;
use crate::shell::durable::store::Durable;
use crate::shell::ensemble::bind;
use crate::shell::ensemble::member::Members;
use crate::shell::handle::{self, Server};
#[cfg(feature = "http")]
use crate::shell::http;
use crate::shell::state::clock::{self, Clock};
use crate::shell::state::shared::Shared;
use crate::shell::state::{sweeper, ticker};

impl Server {
    /// A builder with ZooKeeper's defaults, listening on 127.0.0.1 and a free port.
    pub fn builder() -> ServerBuilder {
        ServerBuilder {
            config: Config::default(),
            listener: None,
            shutdown: None,
            initial_zxid: None,
            test_controls: None,
            open_commands: false,
            members: 1,
            member_ports: Vec::new(),
        }
    }
}

/// Settings for a server; [`ServerBuilder::start`] starts it.
#[derive(Debug)]
pub struct ServerBuilder {
    config: Config,
    listener: Option<TcpListener>,
    shutdown: Option<CancellationToken>,
    /// The zxid given to [`ServerBuilder::initial_zxid`], which wins over the clock's epoch.
    initial_zxid: Option<i64>,
    /// Where the test controls listen, when on.
    test_controls: Option<SocketAddr>,
    /// ZooKeeper's `/command/*` on the test controls answer without the token.
    open_commands: bool,
    /// How many client endpoints (ensemble members) share the state.
    members: usize,
    /// Each member's port, member 1 first, when given one by one.
    member_ports: Vec<u16>,
}

/// The most members an in-process ensemble may have: ZooKeeper's largest `myid` with TTL nodes
/// on, 254, since a session id carries its member in its top byte and 0xFF marks a TTL owner.
pub const MAX_MEMBERS: usize = 254;

impl ServerBuilder {
    /// `tickTime` (default 2000 ms); also sets the session timeout bounds to 2 and 20 ticks.
    pub fn tick_time(mut self, tick: Duration) -> Self {
        self.config.set_tick_time(tick);
        self
    }

    /// An ensemble's election time: how long every member stays LOOKING, once a quorum is up
    /// again after the leader or the quorum was lost, before the new leader serves (default
    /// one tick, as a 3.8 ensemble of three on loopback takes; zero is allowed). Nothing for a
    /// single server.
    pub fn election_time(mut self, time: Duration) -> Self {
        self.config.election_time = Some(time);
        self
    }

    /// `minSessionTimeout` and `maxSessionTimeout`.
    pub fn session_timeout_bounds(mut self, min: Duration, max: Duration) -> Self {
        self.config.core.min_session_timeout_ms = min.as_millis().min(u32::MAX as u128) as u32;
        self.config.core.max_session_timeout_ms = max.as_millis().min(u32::MAX as u128) as u32;
        self
    }

    /// The port to bind (0, the default, picks a free one).
    pub fn port(mut self, port: u16) -> Self {
        self.config.port = port;
        self
    }

    /// The address to bind (default 127.0.0.1).
    pub fn bind(mut self, addr: IpAddr) -> Self {
        self.config.bind = addr;
        self
    }

    /// An in-process ensemble of `n` members (default 1, a single server; kept within
    /// 1..=[`MAX_MEMBERS`]): `n` client endpoints, each its own listener, sharing one state,
    /// so that one session and one zxid order span them all. Member ids are `1..=n`, like
    /// ZooKeeper's `myid`. With [`ServerBuilder::port`] `P` (non-zero) member `i` listens on
    /// `P + i - 1`; with port 0 each takes a free port. With [`ServerBuilder::listener`], that
    /// listener is member 1's and the others take free ports on its address.
    ///
    /// Each member's `srvr`, `stat` and `mntr` report `Mode: leader` or `follower`
    /// (`standalone` with one member), and `/zookeeper/config` lists the members in
    /// ZooKeeper's dynamic-config form. See docs/ensemble.md and the member controls of
    /// [`Server::members`] ([`Members::stop`](crate::Members::stop) and the rest).
    pub fn members(mut self, n: usize) -> Self {
        self.members = n.clamp(1, MAX_MEMBERS);
        self
    }

    /// An in-process ensemble with one port per member, member 1 first (0: a free one): as
    /// many members as ports, whatever [`ServerBuilder::members`] and
    /// [`ServerBuilder::port`] say. This is how an ensemble that started on free ports, which
    /// need not be consecutive, comes back on the same ones.
    pub fn member_ports(mut self, ports: &[u16]) -> Self {
        self.member_ports = ports.iter().copied().take(MAX_MEMBERS).collect();
        if !self.member_ports.is_empty() {
            self.members = self.member_ports.len();
        }
        self
    }

    /// Serve on a listener the caller already bound; `port` and `bind` are then ignored.
    pub fn listener(mut self, listener: TcpListener) -> Self {
        self.listener = Some(listener);
        self
    }

    /// A super user from a `user:password` credential: its digest becomes the superDigest.
    pub fn super_user(mut self, credential: &str) -> Self {
        self.config.core.super_digest =
            Some(crate::core::acl::digest_identity(credential.as_bytes()));
        self
    }

    /// A SASL DIGEST-MD5 user (as a JAAS `Server` section's `user_<name>="<password>"`). Also
    /// registers the `sasl` ACL scheme, as `authProvider.1=…SASLAuthenticationProvider` does.
    pub fn sasl_user(mut self, name: impl Into<String>, password: impl Into<String>) -> Self {
        self.config
            .auth
            .sasl_users
            .insert(name.into(), password.into());
        self.config.auth.add_provider("sasl");
        self
    }

    /// The JAAS file whose `Server` section lists the SASL DIGEST-MD5 users (ZooKeeper's
    /// `-Djava.security.auth.login.config`). Also registers the `sasl` ACL scheme. The file is
    /// read by [`ServerBuilder::start`], which fails with `InvalidInput` when it cannot be read
    /// or has no `Server` section.
    pub fn jaas_file(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.config.auth.jaas_file = Some(path.into());
        self.config.auth.add_provider("sasl");
        self
    }

    /// A SASL user name that also gets `super` (`zookeeper.superUser`).
    pub fn sasl_super_user(mut self, name: impl Into<String>) -> Self {
        self.config.auth.super_users.push(name.into());
        self
    }

    /// `enforce.auth.enabled` with these `enforce.auth.schemes`: a connection holding no
    /// identity of one of them is answered SessionClosedRequireSaslAuth and closed on any
    /// request but auth and sasl. `sasl` needs SASL users; an unregistered scheme makes
    /// [`ServerBuilder::start`] fail with `InvalidInput`.
    pub fn enforce_auth<S: Into<String>>(mut self, schemes: impl IntoIterator<Item = S>) -> Self {
        self.config.auth.enforce_enabled = true;
        self.config.auth.enforce_schemes = schemes.into_iter().map(Into::into).collect();
        self
    }

    /// The superDigest as ZooKeeper configures it: `user:base64(sha1(user:password))`.
    pub fn super_digest(mut self, digest: impl Into<String>) -> Self {
        self.config.core.super_digest = Some(digest.into());
        self
    }

    /// `zookeeper.extendedTypesEnabled`: whether TTL nodes may be created. Off by default, as
    /// on ZooKeeper 3.8, where a TTL create is then answered Unimplemented.
    pub fn extended_types(mut self, on: bool) -> Self {
        self.config.core.extended_types_enabled = on;
        self
    }

    /// `jute.maxbuffer`: the largest frame accepted (default 1,048,575), kept within
    /// 1..=[`MAX_JUTE_BUFFER`](crate::config::MAX_JUTE_BUFFER) (256 MiB).
    pub fn max_buffer(mut self, bytes: usize) -> Self {
        self.config.max_buffer = bytes.clamp(1, crate::config::MAX_JUTE_BUFFER);
        self
    }

    /// The most bytes queued for one connection and not yet written, replies and notifications
    /// together (default eight times `jute.maxbuffer`, 8 MiB; never below one `jute.maxbuffer`).
    /// A connection that would pass it, a client that stopped reading while its requests or
    /// watches keep producing, is closed, and counted in
    /// [`ServerStats::closed_outbound_limit`](crate::ServerStats::closed_outbound_limit).
    pub fn max_outbound_bytes(mut self, bytes: usize) -> Self {
        self.config.max_outbound_bytes = Some(bytes);
        self
    }

    /// `maxClientCnxns`: connections per client IP (default 60; 0 for no limit).
    pub fn max_client_connections(mut self, n: usize) -> Self {
        self.config.max_client_cnxns = n;
        self
    }

    /// Answer every four-letter word (ZooKeeper answers only `srvr` by default).
    pub fn all_four_letter_words(mut self) -> Self {
        self.config.four_letter_words = crate::config::FourLetterWhitelist::All;
        self
    }

    /// `znode.container.checkIntervalMs`: how often containers and TTL nodes are reaped
    /// (default 60 s).
    pub fn container_check_interval(mut self, interval: Duration) -> Self {
        self.config.core.container_check_interval_ms = interval.as_millis() as u64;
        self
    }

    /// The zxid to start from when there is nothing to recover. By default the epoch (the
    /// high 32 bits) is the wall clock's seconds since the Unix epoch, so that a fresh server
    /// is above anything an earlier run handed out and does not refuse clients that saw a
    /// higher zxid there (docs/protocol.md §2.4 step 2).
    pub fn initial_zxid(mut self, zxid: i64) -> Self {
        self.initial_zxid = Some(zxid);
        self
    }

    /// `dataDir`: keep the tree, the sessions and the zxid in `dir/version-2`, in ZooKeeper
    /// 3.8's own transaction log and snapshot format, and recover them at start. Without it a
    /// server keeps everything in memory.
    pub fn data_dir(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.config.durability.data_dir = Some(dir.into());
        self
    }

    /// `forceSync` (default true): fsync the transaction log before anything that depends on
    /// a write is sent. False only flushes to the OS: faster, and safe against a crash of the
    /// process but not of the machine.
    pub fn force_sync(mut self, on: bool) -> Self {
        self.config.durability.force_sync = on;
        self
    }

    /// `snapCount` (default 100,000): about how many transactions between snapshots
    /// (randomised between half and all of it, as ZooKeeper does). At least 2.
    pub fn snap_count(mut self, n: u32) -> Self {
        self.config.durability.snap_count = n.max(2);
        self
    }

    /// Serve ZooKeeper's AdminServer (`/commands`, `/commands/<name>`) on `addr`; port 0 picks
    /// a free one, which [`Server::admin_addr`] then tells. Off by default.
    pub fn admin_server(mut self, addr: SocketAddr) -> Self {
        self.config.admin_server = Some(addr);
        self
    }

    /// Serve Prometheus `/metrics` on `addr`; port 0 picks a free one, which
    /// [`Server::metrics_addr`] then tells. The same non-zero address as
    /// [`ServerBuilder::admin_server`] shares its listener. Off by default.
    pub fn metrics_server(mut self, addr: SocketAddr) -> Self {
        self.config.metrics_server = Some(addr);
        self
    }

    /// Serve the test controls (docs/test-controls.md): JSON endpoints over HTTP for what this
    /// server's [`Server::controls`] can do (expire a session, cut or freeze a connection, fault
    /// rules, inspection), for tests in any language. `addr` must be loopback; port 0 picks a
    /// free one. [`Controls::http_addr`](crate::Controls::http_addr) and
    /// [`Controls::http_token`](crate::Controls::http_token) tell where, and the token every call needs. Off by
    /// default; never for a server others depend on.
    pub fn test_controls(mut self, addr: SocketAddr) -> Self {
        self.test_controls = Some(addr);
        self
    }

    /// Lets ZooKeeper 3.8's `ControllerService` URLs on the test controls
    /// (`/command/<action>[/<parameter>]`, docs/test-controls.md) answer without the token, as
    /// ZooKeeper's own command client sends none. Every other test-controls route still needs
    /// it. Off by default; meaningless without [`ServerBuilder::test_controls`].
    pub fn test_controls_open_commands(mut self, open: bool) -> Self {
        self.open_commands = open;
        self
    }

    /// Serves TLS with this certificate and key (docs/security.md, "TLS"): on a secure port
    /// beside the plain one ([`Server::secure_addr`]), or only there
    /// ([`ServerTls::secure_only`]); client certificates are checked against the given CA and
    /// give `x509:<subject>` identities. Wins over `zoo.cfg`'s key and trust stores.
    ///
    /// [`ServerTls::secure_only`]: crate::tls::ServerTls::secure_only
    pub fn tls(mut self, tls: crate::tls::ServerTls) -> Self {
        self.config.tls.embedded = Some(tls);
        self
    }

    /// Replace the whole configuration (for example one read from `zoo.cfg`).
    pub fn config(mut self, config: Config) -> Self {
        self.config = config;
        self
    }

    /// Mutate the configuration in place.
    pub fn with_config(mut self, f: impl FnOnce(&mut Config)) -> Self {
        f(&mut self.config);
        self
    }

    /// A token the caller cancels to stop the server; [`Server::shutdown`] cancels it
    /// too.
    pub fn shutdown_token(mut self, token: CancellationToken) -> Self {
        self.shutdown = Some(token);
        self
    }

    /// Binds (unless given a listener) and starts serving. Ready when it returns: a client may
    /// connect at once.
    ///
    /// With a data directory, the state is recovered from it first (blocking work, run off
    /// the async workers), and one line says what was recovered and how long it took.
    ///
    /// # Errors
    /// The bind error, e.g. `AddrInUse` for a taken port (or, for an ensemble on a fixed
    /// port, `InvalidInput` when `port + n - 1` passes 65535), of a client listener or of the
    /// AdminServer's or `/metrics`'s or the test controls' (`InvalidInput` for a test-controls
    /// address that is not loopback); with a data directory, a
    /// [`StorageError`](crate::storage::StorageError) (inside the `io::Error`) naming the path
    /// that could not be created, read or written; `InvalidInput` for an unreadable or
    /// malformed JAAS file, one without its `Server` section, or an `enforce.auth` scheme
    /// with no provider.
    pub async fn start(mut self) -> io::Result<Server> {
        let secure = crate::shell::net::tls::prepare(&self.config)?;
        let tls = &self.config.tls;
        let mut secure_listener = None;
        if secure.is_some() && !tls.serves_plain() {
            // Secure-only: member 1's port is the secure one.
            self.config.port = tls.secure_port().unwrap_or(0);
            self.config.bind = tls.secure_bind.unwrap_or(self.config.bind);
        } else if let (Some(secure), Some(port)) = (&secure, tls.secure_port()) {
            let ip = tls.secure_bind.unwrap_or(self.config.bind);
            secure_listener = Some((TcpListener::bind((ip, port)).await?, secure.clone()));
        }
        let listeners = match self.member_ports.as_slice() {
            [] => bind::consecutive(self.listener, &self.config, self.members).await?,
            ports => bind::each(self.listener, &self.config, ports).await?,
        };
        #[cfg(feature = "http")]
        let http_listeners = http::Listeners::bind(&self.config, self.test_controls).await?;
        #[cfg(not(feature = "http"))]
        http_refused(&self.config, self.test_controls)?;
        let addrs = listeners
            .iter()
            .map(TcpListener::local_addr)
            .collect::<io::Result<Vec<_>>>()?;
        let clock = Clock::new();
        let mut core_config = self.config.core.clone();
        // SASL users (the JAAS file read now) and enforce.auth, checked before serving.
        core_config.auth = self
            .config
            .auth
            .resolve()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        core_config.initial_zxid = match self.initial_zxid {
            Some(zxid) => zxid,
            // A configuration that names a zxid (`Config::core`) keeps it.
            None if core_config.initial_zxid != 0 => core_config.initial_zxid,
            None => clock::epoch_zxid(clock.now().wall_ms),
        };
        // Session passwords must not be guessable from the session id: their key comes from
        // the OS random source (a durable server then takes the one kept in its data dir).
        rand::rngs::OsRng
            .try_fill_bytes(&mut core_config.session_secret)
            .map_err(io::Error::other)?;
        // SASL nonces: fresh at every start, so that they stay unique even when a durable
        // server (whose session secret is kept) restarts with its wall clock set back.
        rand::rngs::OsRng
            .try_fill_bytes(&mut core_config.boot_salt)
            .map_err(io::Error::other)?;
        let (mut core, durable) = if self.config.durability.is_durable() {
            let settings = self.config.durability.clone();
            let now = clock.now();
            // Recovery reads and writes files: off the async workers.
            let (core, durable) = tokio::task::spawn_blocking(move || {
                let durable = Durable::open(settings, core_config)?;
                recover_and_snapshot(&durable, now).map(|core| (core, durable))
            })
            .await
            .map_err(|e| io::Error::other(format!("recovery did not finish: {e}")))??;
            (core, Some(durable))
        } else {
            (Core::new(core_config, clock.now()), None)
        };
        let recovered_zxid = core.last_zxid();
        let shutdown = self.shutdown.unwrap_or_default();
        let generation = shutdown.child_token();
        let members = Members::new(&addrs, &generation)?;
        if members.len() > 1 {
            core.set_config_node(members.dynamic_config().into_bytes(), clock.now());
        }
        let shared = Arc::new(Shared::new(
            self.config,
            core,
            clock,
            durable,
            generation,
            members,
            secure.clone(),
        ));
        lifecycle::start(&shared, recovered_zxid)?;
        let tracker = TaskTracker::new();
        for (id, listener) in (1..).zip(listeners) {
            handle::serve(&shared, &tracker, id, listener)?;
        }
        handle::first_leader(&shared);
        let mut secure_addr = None;
        if let Some((listener, secure)) = secure_listener {
            secure_addr = Some(listener.local_addr()?);
            tracker.spawn(crate::shell::net::listener::secure_accept_loop(
                listener,
                shared.clone(),
                shutdown.child_token(),
                tracker.clone(),
                secure,
            ));
        } else if secure.is_some() && !shared.config.tls.serves_plain() {
            secure_addr = addrs.first().copied();
        }
        tracker.spawn(ticker::tick_loop(shared.clone(), shutdown.clone()));
        tracker.spawn(sweeper::sweep_loop(shared.clone(), shutdown.clone()));
        if shared.durable.is_some() {
            tracker.spawn(lifecycle::purge_loop(shared.clone(), shutdown.clone()));
        }
        let mut handle = Server::new(shared, addrs, shutdown, tracker);
        handle.secure_addr = secure_addr;
        #[cfg(feature = "http")]
        http_listeners.serve(&mut handle, self.open_commands)?;
        Ok(handle)
    }
}

/// Without the `http` feature there is no AdminServer, `/metrics` or HTTP test controls: a
/// configuration that asks for one is refused rather than silently served without it.
#[cfg(not(feature = "http"))]
fn http_refused(config: &Config, test_controls: Option<std::net::SocketAddr>) -> io::Result<()> {
    let asked = [
        (config.admin_server.is_some(), "the AdminServer"),
        (config.metrics_server.is_some(), "/metrics"),
        (test_controls.is_some(), "the HTTP test controls"),
    ];
    match asked.iter().find(|(on, _)| *on) {
        Some((_, what)) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{what} needs shepherd-server's `http` feature"),
        )),
        None => Ok(()),
    }
}
