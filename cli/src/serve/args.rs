//! [`ServeArgs`]: what `shepherd serve` accepts on its command line. Apart from the code that
//! acts on them so that the command line ([`crate::command`]) can name them without depending
//! on the server they start.

use std::net::IpAddr;
use std::path::PathBuf;

use clap::Args;

/// `shepherd serve`'s flags; [`super::serve`] turns them into a running server.
#[derive(Args)]
pub(crate) struct ServeArgs {
    /// Port to listen on (0 picks a free one). Overrides clientPort from --config.
    #[arg(long)]
    pub(crate) port: Option<u16>,
    /// Address to bind. Loopback unless you say otherwise.
    #[arg(long)]
    pub(crate) bind: Option<IpAddr>,
    /// tickTime in milliseconds (session timeouts are bounded to 2 and 20 ticks).
    #[arg(long = "tick-time")]
    pub(crate) tick_time: Option<u64>,
    /// A zoo.cfg to read; unknown keys are warned about, not fatal.
    #[arg(long)]
    pub(crate) config: Option<PathBuf>,
    /// Serve ZooKeeper's AdminServer (JSON at /commands/<name>) on this port (0 picks a
    /// free one), on loopback unless --config's admin.serverAddress says otherwise.
    #[arg(long = "admin-port")]
    pub(crate) admin_port: Option<u16>,
    /// Serve Prometheus /metrics on this port (0 picks a free one), on loopback unless
    /// --config's metricsProvider.httpHost says otherwise.
    #[arg(long = "metrics-port")]
    pub(crate) metrics_port: Option<u16>,
    /// Keep the tree, sessions and zxid in DIR/version-2, in ZooKeeper 3.8's own format,
    /// and recover them at start. Overrides --config's dataDir. Without it (or dataDir),
    /// everything is kept in memory.
    #[arg(long = "data-dir", value_name = "DIR")]
    pub(crate) data_dir: Option<PathBuf>,
    /// A JAAS file whose `Server` section's `user_<name>="<password>"` options are the
    /// SASL DIGEST-MD5 users (ZooKeeper's -Djava.security.auth.login.config); also
    /// registers the `sasl` ACL scheme (docs/security.md). Overrides --config's.
    #[arg(long, value_name = "FILE")]
    pub(crate) jaas: Option<PathBuf>,
    /// An in-process ensemble (docs/ensemble.md): N client endpoints sharing one state,
    /// members 1..=N, each reporting leader or follower. With --port P member i listens on
    /// P+i-1 (port 0: each on a free port). One `listening on` line per member, in order.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=254))]
    pub(crate) members: u16,
    /// An in-process ensemble with one port per member, member 1 first (0: a free one), in
    /// place of --members and --port: how a launcher brings back an ensemble that first
    /// started on free ports, which need not be consecutive.
    #[arg(
        long = "member-ports",
        value_name = "PORT,PORT,…",
        value_delimiter = ',',
        num_args = 1..=254,
        conflicts_with_all = ["members", "port"]
    )]
    pub(crate) member_ports: Vec<u16>,
    /// Serve the test controls (docs/test-controls.md): JSON endpoints to expire sessions,
    /// cut or freeze connections, inject faults and inspect the server, for tests in any
    /// language. Loopback only; a random token, printed once at start, is required on
    /// every call. Never on a server others depend on.
    #[arg(long = "test-controls")]
    pub(crate) test_controls: bool,
    /// The test controls' port (0, the default, picks a free one), on --test-controls-bind.
    #[arg(
        long = "test-controls-port",
        default_value_t = 0,
        requires = "test_controls"
    )]
    pub(crate) test_controls_port: u16,
    /// The test controls' address: a loopback address (anything else is refused).
    #[arg(
        long = "test-controls-bind",
        default_value = "127.0.0.1",
        requires = "test_controls"
    )]
    pub(crate) test_controls_bind: IpAddr,
    /// Let ZooKeeper 3.8's ControllerService URLs on the test controls (/command/<action>,
    /// docs/test-controls.md) answer without the token, as ZooKeeper's own command client
    /// sends none. Every other route still needs it.
    #[arg(long = "test-controls-open-commands", requires = "test_controls")]
    pub(crate) test_controls_open_commands: bool,
    /// Set a zoo.cfg key (repeatable), after --config and before the other flags (so --port
    /// still wins over clientPort). An unknown key is an error naming it.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub(crate) set: Vec<String>,
    /// Print one JSON line on stdout once every listener is bound (pid, ports, connect string,
    /// the HTTP listeners' URLs, the test controls' token; docs/cli.md), and nothing else on
    /// stdout: the launch contract for test harnesses in any language.
    #[arg(long = "ready-json")]
    pub(crate) ready_json: bool,
    /// Stop cleanly, as on SIGTERM, when standard input reaches end of file: a launcher keeps
    /// the pipe open, and the server goes when the launcher does, however it ended.
    #[arg(long = "exit-with-stdin")]
    pub(crate) exit_with_stdin: bool,
}
