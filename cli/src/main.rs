//! The `shepherd` command: `shepherd serve` runs a ZooKeeper-compatible dev coordinator; the
//! client commands (`ls`, `get`, `create`, `dump`, `locks`, …) reach any ZooKeeper; `shepherd tls
//! make-test-certs` writes throw-away certificates; `shepherd datadir check|repair` inspects and
//! mends a data directory a server refused. The benchmarks are the `shepherd-bench`
//! command (the shepherd-bench package).

mod commands;
mod shutdown;

use std::net::IpAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use shepherd_cli::logging;
use shepherd_cli::runtime::{self, Threads};
use shepherd_server::storage::StorageError;
use shepherd_server::{Config, Server};

#[derive(Parser)]
#[command(
    name = "shepherd",
    version,
    about = "A ZooKeeper-compatible coordination server"
)]
struct Cli {
    #[command(flatten)]
    log: logging::LogOptions,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a standalone ZooKeeper-compatible server: in memory, or durable with --data-dir.
    Serve {
        /// Port to listen on (0 picks a free one). Overrides clientPort from --config.
        #[arg(long)]
        port: Option<u16>,
        /// Address to bind. Loopback unless you say otherwise.
        #[arg(long)]
        bind: Option<IpAddr>,
        /// tickTime in milliseconds (session timeouts are bounded to 2 and 20 ticks).
        #[arg(long = "tick-time")]
        tick_time: Option<u64>,
        /// A zoo.cfg to read; unknown keys are warned about, not fatal.
        #[arg(long)]
        config: Option<PathBuf>,
        /// Serve ZooKeeper's AdminServer (JSON at /commands/<name>) on this port (0 picks a
        /// free one), on loopback unless --config's admin.serverAddress says otherwise.
        #[arg(long = "admin-port")]
        admin_port: Option<u16>,
        /// Serve Prometheus /metrics on this port (0 picks a free one), on loopback unless
        /// --config's metricsProvider.httpHost says otherwise.
        #[arg(long = "metrics-port")]
        metrics_port: Option<u16>,
        /// Keep the tree, sessions and zxid in DIR/version-2, in ZooKeeper 3.8's own format,
        /// and recover them at start. Overrides --config's dataDir. Without it (or dataDir),
        /// everything is kept in memory.
        #[arg(long = "data-dir", value_name = "DIR")]
        data_dir: Option<PathBuf>,
        /// A JAAS file whose `Server` section's `user_<name>="<password>"` options are the
        /// SASL DIGEST-MD5 users (ZooKeeper's -Djava.security.auth.login.config); also
        /// registers the `sasl` ACL scheme (docs/security.md). Overrides --config's.
        #[arg(long, value_name = "FILE")]
        jaas: Option<PathBuf>,
        /// An in-process ensemble (docs/ensemble.md): N client endpoints sharing one state,
        /// members 1..=N, each reporting leader or follower. With --port P member i listens on
        /// P+i-1 (port 0: each on a free port). One `listening on` line per member, in order.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=255))]
        members: u16,
        /// Serve the test controls (docs/test-controls.md): JSON endpoints to expire sessions,
        /// cut or freeze connections, inject faults and inspect the server, for tests in any
        /// language. Loopback only; a random token, printed once at start, is required on
        /// every call. Never on a server others depend on.
        #[arg(long = "test-controls")]
        test_controls: bool,
        /// The test controls' port (0, the default, picks a free one), on --test-controls-bind.
        #[arg(
            long = "test-controls-port",
            default_value_t = 0,
            requires = "test_controls"
        )]
        test_controls_port: u16,
        /// The test controls' address: a loopback address (anything else is refused).
        #[arg(
            long = "test-controls-bind",
            default_value = "127.0.0.1",
            requires = "test_controls"
        )]
        test_controls_bind: IpAddr,
    },
    /// TLS helpers: `shepherd tls make-test-certs DIR` writes throw-away test certificates.
    Tls {
        #[command(subcommand)]
        tls: commands::tls::TlsCommand,
    },
    /// Data directory tools: `check DIR` says whether a server would start from it and why
    /// not; `repair DIR --truncate-after ZXID` cuts a damaged log, keeping a copy of what goes.
    Datadir {
        #[command(subcommand)]
        datadir: commands::datadir::DatadirCommand,
    },
    #[command(flatten)]
    Client(commands::ClientCommand),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let default_level = match cli.command {
        Command::Serve { .. } => "info",
        // A client command prints its own errors; the client's logs would only repeat them.
        Command::Client(_) => "error",
        Command::Tls { .. } | Command::Datadir { .. } => "warn",
    };
    logging::init(cli.log.format, default_level);
    match cli.command {
        Command::Serve {
            port,
            bind,
            tick_time,
            config,
            admin_port,
            metrics_port,
            data_dir,
            jaas,
            members,
            test_controls,
            test_controls_port,
            test_controls_bind,
        } => serve(
            (port, members),
            bind,
            tick_time,
            config,
            (admin_port, metrics_port),
            (data_dir, jaas),
            test_controls
                .then(|| std::net::SocketAddr::new(test_controls_bind, test_controls_port)),
        ),
        Command::Client(command) => commands::main(&command),
        Command::Tls { tls } => commands::tls::main(&tls),
        Command::Datadir { datadir } => commands::datadir::main(&datadir),
    }
}

fn serve(
    (port, members): (Option<u16>, u16),
    bind: Option<IpAddr>,
    tick_time: Option<u64>,
    config_file: Option<PathBuf>,
    (admin_port, metrics_port): (Option<u16>, Option<u16>),
    (data_dir, jaas): (Option<PathBuf>, Option<PathBuf>),
    test_controls: Option<std::net::SocketAddr>,
) -> ExitCode {
    raise_open_files_limit();
    let mut config = Config {
        port: 2181,
        ..Config::default()
    };
    if let Some(path) = &config_file {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) => {
                eprintln!("error: cannot read {}: {error}", path.display());
                return ExitCode::from(2);
            }
        };
        match config.apply_zoo_cfg(&text) {
            Ok(warnings) => {
                for warning in warnings {
                    tracing::warn!("{}: {warning}", path.display());
                }
            }
            Err(error) => {
                eprintln!("error: {}: {error}", path.display());
                return ExitCode::from(2);
            }
        }
    }
    if let Some(tick) = tick_time {
        if tick == 0 {
            eprintln!("error: --tick-time must be at least 1 ms");
            return ExitCode::from(2);
        }
        config.set_tick_time(Duration::from_millis(tick));
    }
    if let Some(port) = port {
        config.port = port;
        // An explicit plain port is served, even beside a zoo.cfg secureClientPort.
        config.tls.client_port_given = true;
    }
    if let Some(bind) = bind {
        config.bind = bind;
    }
    if let Some(dir) = data_dir {
        config.durability.data_dir = Some(dir);
    }
    if let Some(file) = jaas {
        config.auth.jaas_file = Some(file);
        config.auth.add_provider("sasl");
    }
    // A bad JAAS file or enforce.auth setting is a configuration error, reported before
    // anything listens (the server's start checks the same).
    if let Err(error) = config.auth.resolve() {
        eprintln!("error: {error}");
        return ExitCode::from(2);
    }
    // A flag's port on the configured address, or on loopback.
    let on_port = |addr: Option<std::net::SocketAddr>, port: u16| {
        let mut addr = addr.unwrap_or_else(|| ([127, 0, 0, 1], 0).into());
        addr.set_port(port);
        Some(addr)
    };
    if let Some(addr) = test_controls.filter(|addr| !addr.ip().is_loopback()) {
        eprintln!(
            "error: --test-controls listens on loopback only (127.0.0.1 or ::1), not {}",
            addr.ip()
        );
        return ExitCode::from(2);
    }
    if let Some(port) = admin_port {
        config.admin_server = on_port(config.admin_server, port);
    }
    if let Some(port) = metrics_port {
        config.metrics_server = on_port(config.metrics_server, port);
    }
    let Some(runtime) = runtime::start_or_report(Threads::Workers(None), "the runtime") else {
        return ExitCode::FAILURE;
    };
    runtime.block_on(async move {
        // Before the server announces itself: a signal sent as soon as the `listening` line is
        // read must find the clean stop, not the default (fatal) action.
        let mut signals = match shutdown::StopSignals::install() {
            Ok(signals) => signals,
            Err(error) => {
                eprintln!("error: cannot handle SIGINT and SIGTERM: {error}");
                return ExitCode::FAILURE;
            }
        };
        let (bind, port) = (config.bind, config.port);
        let durable = config.durability.is_durable();
        let mut builder = Server::builder()
            .config(config)
            .members(usize::from(members));
        if let Some(addr) = test_controls {
            builder = builder.test_controls(addr);
        }
        let server = match builder.start().await {
            Ok(server) => server,
            Err(error) if error.kind() == std::io::ErrorKind::AddrInUse => {
                eprintln!("error: {bind}:{port} is already in use (is another ZooKeeper running?)");
                return ExitCode::from(3);
            }
            // A key or trust store that cannot be used: a configuration error, like a bad key.
            Err(error)
                if error
                    .get_ref()
                    .is_some_and(|e| e.is::<shepherd_server::tls::TlsError>()) =>
            {
                eprintln!("error: TLS: {error}");
                return ExitCode::from(2);
            }
            Err(error) if error.get_ref().is_some_and(|e| e.is::<StorageError>()) => {
                // Already names the path and what could not be done with it.
                eprintln!("error: {error}");
                return ExitCode::from(4);
            }
            Err(error) => {
                eprintln!("error: cannot listen on {bind}:{port}: {error}");
                return ExitCode::from(3);
            }
        };
        // Scripts read the port from the first line; keep its shape. An ensemble prints one
        // line per member, in id order.
        for id in server.member_ids() {
            if let Some(addr) = server
                .member_addr(id)
                .filter(|a| Some(*a) != server.secure_addr())
            {
                println!("shepherd listening on {addr}");
            }
        }
        if let Some(addr) = server.secure_addr() {
            println!("shepherd listening on {addr} (TLS)");
        }
        if let Some(addr) = server.admin_addr() {
            println!("shepherd admin server on http://{addr}/commands");
        }
        if let Some(addr) = server.metrics_addr() {
            println!("shepherd metrics on http://{addr}/metrics");
        }
        // Printed once, on stdout only (never logged): tests parse it for the address and
        // the token (docs/test-controls.md).
        if let (Some(addr), Some(token)) =
            (server.test_controls_addr(), server.test_controls_token())
        {
            println!("shepherd test controls on http://{addr} token {token}");
        }
        if !durable {
            tracing::info!(
                "in memory: nothing is kept when the process ends (--data-dir DIR keeps it)"
            );
        }
        if members > 1 {
            tracing::info!(
                members,
                leader = ?server.leader(),
                connect = %server.connect_string(),
                "an in-process ensemble: one state behind every member"
            );
        }
        tracing::info!(addr = %server.local_addr(), "serving; Ctrl-C or SIGTERM to stop");
        // The clean stop, in order; a second signal during it exits at once.
        let stop = shutdown::on_signal(&mut signals, async {
            // 1. Stop accepting, close every connection, wait for their tasks to end.
            // 2. With a data directory, write and fsync the transaction log and close it, so
            //    that everything acknowledged is on disk before `stopped` is logged.
            server.shutdown().await;
        });
        tokio::select! {
            code = stop => code,
            // ZooKeeper halts when it cannot write its log; so does this, with the reason.
            reason = server.failed() => {
                tracing::error!(%reason, "the transaction log failed; stopping");
                server.shutdown().await;
                logging::flush();
                ExitCode::from(5)
            }
        }
    })
}

/// Raises the soft open-file limit to the hard one, as the JVM does for ZooKeeper: the server's
/// share of descriptors for connections is read from it (`server/src/shell/net/descriptors.rs`),
/// and a distribution's default soft limit (1024) is far below what a coordinator serves.
fn raise_open_files_limit() {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    if limit.current < limit.maximum {
        let raised = rustix::process::Rlimit {
            current: limit.maximum,
            maximum: limit.maximum,
        };
        match setrlimit(Resource::Nofile, raised) {
            Ok(()) => tracing::debug!(
                from = ?limit.current,
                to = ?limit.maximum,
                "raised the open-file limit"
            ),
            Err(error) => tracing::warn!(%error, "cannot raise the open-file limit"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serve_test_controls_are_off_by_default_and_loopback_only() {
        let serve = |args: &[&str]| {
            let cli = Cli::try_parse_from([&["shepherd", "serve"], args].concat())?;
            match cli.command {
                Command::Serve {
                    test_controls,
                    test_controls_port,
                    test_controls_bind,
                    ..
                } => Ok::<_, clap::Error>((test_controls, test_controls_port, test_controls_bind)),
                _ => panic!("not serve"),
            }
        };
        let loopback = IpAddr::from([127, 0, 0, 1]);
        assert_eq!(serve(&[]).unwrap(), (false, 0, loopback));
        assert_eq!(serve(&["--test-controls"]).unwrap(), (true, 0, loopback));
        let on = serve(&["--test-controls", "--test-controls-port", "7001"]).unwrap();
        assert_eq!(on, (true, 7001, loopback));
        let v6 = serve(&["--test-controls", "--test-controls-bind", "::1"]).unwrap();
        assert_eq!(v6.2, "::1".parse::<IpAddr>().unwrap());
        // The port and address go with the flag, never alone.
        assert!(serve(&["--test-controls-port", "7001"]).is_err());
        assert!(serve(&["--test-controls-bind", "127.0.0.1"]).is_err());
        // A non-loopback address is refused before anything starts.
        let everywhere = std::net::SocketAddr::from(([0, 0, 0, 0], 0));
        let code = super::serve(
            (Some(0), 1),
            None,
            None,
            None,
            (None, None),
            (None, None),
            Some(everywhere),
        );
        assert_eq!(code, ExitCode::from(2));
    }

    #[test]
    fn serve_refuses_a_jaas_file_it_cannot_use() {
        let jaas = Cli::try_parse_from(["shepherd", "serve", "--jaas", "/etc/jaas.conf"]).unwrap();
        let Command::Serve { jaas, .. } = jaas.command else {
            panic!("not serve")
        };
        assert_eq!(jaas, Some(PathBuf::from("/etc/jaas.conf")));
        // Unreadable: a configuration error, before anything listens.
        let missing = PathBuf::from("/nonexistent/shepherd-jaas.conf");
        let code = super::serve(
            (Some(0), 1),
            None,
            None,
            None,
            (None, None),
            (None, Some(missing)),
            None,
        );
        assert_eq!(code, ExitCode::from(2));
    }
}
