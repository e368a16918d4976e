//! `shepherd serve`: the flags, zoo.cfg and `--set` settings turned into a [`Config`], the
//! server started, its addresses announced on stdout (scripts read them: the first line's
//! shape is kept; `--ready-json` prints the launch line instead), then a clean stop on SIGINT
//! or SIGTERM (or the end of stdin, with `--exit-with-stdin`), or exit 5 when the transaction
//! log fails.
//!
//! Its flags are [`ServeArgs`] (`args.rs`); this file acts on them.

mod args;

use std::process::ExitCode;
use std::time::Duration;

use shepherd_server::storage::StorageError;
use shepherd_server::{Config, Server};

pub(crate) use args::ServeArgs;

use crate::logging;
use crate::ready;
use crate::runtime::{self, Threads};
use crate::shutdown;

pub(crate) fn serve(args: ServeArgs) -> ExitCode {
    let ServeArgs {
        port,
        bind,
        tick_time,
        config: config_file,
        admin_port,
        metrics_port,
        data_dir,
        jaas,
        members,
        member_ports,
        test_controls,
        test_controls_port,
        test_controls_bind,
        test_controls_open_commands,
        set,
        ready_json,
        exit_with_stdin,
    } = args;
    // --member-ports is an ensemble of as many members (clap keeps it apart from --members).
    let members = match u16::try_from(member_ports.len()) {
        Ok(0) | Err(_) => members,
        Ok(n) => n,
    };
    let test_controls =
        test_controls.then(|| std::net::SocketAddr::new(test_controls_bind, test_controls_port));
    raise_open_files_limit();
    let mut config = Config {
        port: 2181,
        ..Config::default()
    };
    // The file first, then the settings as if they were its last lines: they win over it.
    let text = match &config_file {
        // Bytes, not UTF-8: ZooKeeper reads zoo.cfg as ISO 8859-1 (`Properties.load`).
        Some(path) => match std::fs::read(path) {
            Ok(bytes) => shepherd_server::config::properties::latin1(&bytes),
            Err(error) => {
                eprintln!("error: cannot read {}: {error}", path.display());
                return ExitCode::from(2);
            }
        },
        None => String::new(),
    };
    if config_file.is_some() || !set.is_empty() {
        // A file's messages name it; a setting's name itself (`setting N: KEY=VALUE: …`).
        let source = config_file
            .as_ref()
            .map(|path| format!("{}: ", path.display()))
            .unwrap_or_default();
        match config.apply_zoo_cfg_and_settings(&text, &set) {
            Ok(warnings) => {
                for warning in warnings {
                    tracing::warn!("{source}{warning}");
                }
            }
            Err(error) => {
                eprintln!("error: {source}{error}");
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
        if exit_with_stdin {
            if let Err(error) = signals.watch_input() {
                eprintln!("error: cannot watch standard input: {error}");
                return ExitCode::FAILURE;
            }
        }
        let (bind, port) = (config.bind, config.port);
        let durable = config.durability.is_durable();
        let data_dir = config.durability.data_dir.clone();
        let mut builder = Server::builder()
            .config(config)
            .members(usize::from(members))
            .member_ports(&member_ports);
        if let Some(addr) = test_controls {
            builder = builder
                .test_controls(addr)
                .test_controls_open_commands(test_controls_open_commands);
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
        if ready_json {
            // The launch line alone on stdout, flushed: the launcher waits for it.
            println!("{}", ready::launch_line(&server, data_dir.as_deref()));
            logging::flush();
        } else {
            announce(&server);
        }
        if !durable {
            tracing::info!(
                "in memory: nothing is kept when the process ends (--data-dir DIR keeps it)"
            );
        }
        if members > 1 {
            tracing::info!(
                members,
                leader = ?server.members().leader(),
                connect = %server.connect_string(),
                "an in-process ensemble: one state behind every member"
            );
        }
        tracing::info!(addr = %server.local_addr(), "serving; Ctrl-C or SIGTERM to stop");
        // The clean stop, in order; a second signal during it exits at once.
        let stop = shutdown::on_signal(&mut signals, server.stopping(), async {
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

/// The human lines on stdout. Scripts read the port from the first line; keep its shape. An
/// ensemble prints one line per member, in id order.
fn announce(server: &Server) {
    for id in server.members().ids() {
        if let Some(addr) = server
            .members()
            .addr(id)
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
    // Printed once, on stdout only (never logged): tests parse it for the address and the
    // token (docs/test-controls.md).
    if let (Some(addr), Some(token)) = (
        server.controls().http_addr(),
        server.controls().http_token(),
    ) {
        println!("shepherd test controls on http://{addr} token {token}");
    }
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
    use crate::command::{Cli, Command};
    use clap::Parser;
    use std::net::IpAddr;
    use std::path::PathBuf;

    /// `shepherd serve ARGS`, parsed.
    fn parse(args: &[&str]) -> Result<ServeArgs, clap::Error> {
        let cli = Cli::try_parse_from([&["shepherd", "serve"], args].concat())?;
        match cli.command {
            Command::Serve(args) => Ok(args),
            _ => panic!("not serve"),
        }
    }

    #[test]
    fn serve_test_controls_are_off_by_default_and_loopback_only() {
        let serve = |args: &[&str]| {
            parse(args).map(|a| (a.test_controls, a.test_controls_port, a.test_controls_bind))
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
        let everywhere = parse(&[
            "--port",
            "0",
            "--test-controls",
            "--test-controls-bind",
            "0.0.0.0",
        ]);
        assert_eq!(super::serve(everywhere.unwrap()), ExitCode::from(2));
    }

    #[test]
    fn serve_refuses_a_jaas_file_it_cannot_use() {
        let jaas = parse(&["--jaas", "/etc/jaas.conf"]).unwrap().jaas;
        assert_eq!(jaas, Some(PathBuf::from("/etc/jaas.conf")));
        // Unreadable: a configuration error, before anything listens.
        let missing = parse(&["--port", "0", "--jaas", "/nonexistent/shepherd-jaas.conf"]);
        assert_eq!(super::serve(missing.unwrap()), ExitCode::from(2));
    }

    #[test]
    fn serve_settings_repeat_in_order_and_a_bad_one_is_a_configuration_error() {
        let args = parse(&["--set", "tickTime=500", "--set", "a=b=c"]).unwrap();
        assert_eq!(args.set, ["tickTime=500", "a=b=c"]);
        assert!(!args.ready_json && !args.exit_with_stdin);
        for bad in ["tickTme=500", "tickTime", "tickTime=abc"] {
            let args = parse(&["--port", "0", "--set", bad]).unwrap();
            assert_eq!(super::serve(args), ExitCode::from(2), "--set {bad}");
        }
    }
}
