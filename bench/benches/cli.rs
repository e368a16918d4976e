//! Time per client command: `shepherd ls/get/create/delete` against `zkCli.sh -server ADDR
//! <cmd>` (Debian's ZooKeeper 3.8 client), both against the same server, each the wall time
//! of one process from spawn to exit (connect, one request, close), median of several runs.
//!
//! The server is a `shepherd serve` started for the run, or with `--real-zk` the ZooKeeper
//! named by `SHEPHERD_REAL_ZK` (`source .ci/real-zk.sh` starts one). Without zkCli installed
//! only the shepherd column is measured.
//!
//! Run: `cargo build --release --bin shepherd && cargo bench -p shepherd-bench --bench cli`
//! (the binary is found by `shepherd_cli::binary::shepherd`; options after `--`: `--real-zk`,
//! `--runs N` for shepherd, default 30, `--zkcli-runs N`, default 5).
//!
//! A benchmark, not a harness binary: it spawns the release `shepherd` binary as a user
//! would.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use shepherd_testkit::spawn_serve;

const ZKCLI: &str = "/usr/share/zookeeper/bin/zkCli.sh";
/// The bound on one command's run; a run that takes longer fails the benchmark.
const RUN_LIMIT: Duration = Duration::from_secs(60);

/// Runs `command` to its end, bounded by [`RUN_LIMIT`]; its wall time and output.
fn timed(mut command: Command) -> (Duration, Output) {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let child = command.spawn().expect("spawn");
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(RUN_LIMIT) {
        Ok(output) => (started.elapsed(), output.expect("wait")),
        Err(_) => {
            let _ = Command::new("kill").arg(pid.to_string()).status();
            panic!("{command:?} ran longer than {RUN_LIMIT:?}");
        }
    }
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The `shepherd` binary, looked up (and named on stderr) once.
fn shepherd_bin() -> &'static Path {
    static BIN: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    BIN.get_or_init(|| shepherd_cli::binary::shepherd().expect("the shepherd binary"))
}

/// `shepherd serve --port 0`, and the address it announces.
fn start_shepherd() -> (Child, String) {
    spawn_serve(Command::new(shepherd_bin()).args(["serve", "--port", "0"]))
}

/// One client command, as shepherd and as zkCli spell it.
struct Case {
    name: &'static str,
    shepherd: Vec<String>,
    zkcli: Vec<String>,
}

fn cases(root: &str, i: usize) -> Vec<Case> {
    let node = format!("{root}/node");
    let fresh = format!("{root}/c-{i}");
    let both = |name, args: &[&str]| Case {
        name,
        shepherd: args.iter().map(|s| s.to_string()).collect(),
        zkcli: args.iter().map(|s| s.to_string()).collect(),
    };
    vec![
        both("ls", &["ls", root]),
        both("get", &["get", &node]),
        both("create", &["create", &fresh, "data"]),
        both("delete", &["delete", &fresh]),
    ]
}

fn shepherd_cmd(addr: &str, args: &[String]) -> Command {
    let mut command = Command::new(shepherd_bin());
    command.args(args).args(["--server", addr]);
    command
}

fn zkcli_cmd(addr: &str, args: &[String]) -> Command {
    let mut command = Command::new(ZKCLI);
    command.args(["-server", addr]).args(args);
    command
}

/// Times every case `runs` times with `make`, checking each run succeeded.
fn measure(
    runs: usize,
    root: &str,
    make: impl Fn(&Case) -> Command,
    ok: impl Fn(&Output) -> bool,
) -> Vec<Duration> {
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); 4];
    for i in 0..runs {
        for (k, case) in cases(root, i).iter().enumerate() {
            let (took, output) = timed(make(case));
            assert!(ok(&output), "{}: {output:?}", case.name);
            samples[k].push(took);
        }
    }
    samples.into_iter().map(median).collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str, default: usize| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let runs = flag("--runs", 30).max(1);
    let zkcli_runs = flag("--zkcli-runs", 5).max(1);
    let (server, addr, name) = if args.iter().any(|a| a == "--real-zk") {
        let addr = std::env::var("SHEPHERD_REAL_ZK")
            .expect("--real-zk needs SHEPHERD_REAL_ZK (source .ci/real-zk.sh)");
        (None, addr, "ZooKeeper 3.8 (SHEPHERD_REAL_ZK)")
    } else {
        let (child, addr) = start_shepherd();
        (Some(child), addr, "shepherd serve")
    };
    let root = format!("/bench-cli-{}", std::process::id());
    let setup = |args: &[&str]| {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let (_, out) = timed(shepherd_cmd(&addr, &args));
        assert!(out.status.success(), "{args:?}: {out:?}");
    };
    setup(&["create", &root]);
    setup(&["create", &format!("{root}/node"), "hello"]);

    let shepherd = measure(
        runs,
        &root,
        |c| shepherd_cmd(&addr, &c.shepherd),
        |o| o.status.success(),
    );
    // zkCli exits 0 whatever the server answered: a failed command prints its exception.
    let zkcli = Path::new(ZKCLI).exists().then(|| {
        measure(
            zkcli_runs,
            &root,
            |c| zkcli_cmd(&addr, &c.zkcli),
            |o| o.status.success() && !String::from_utf8_lossy(&o.stdout).contains("Exception"),
        )
    });
    setup(&["delete", "-r", &root]);

    println!("Client command wall time against {name} at {addr}, median per command");
    println!("(shepherd: {runs} runs each, release build; zkCli.sh: {zkcli_runs} runs each)");
    println!();
    println!("| command | shepherd ms | zkCli.sh ms | zkCli / shepherd |");
    println!("|---|---:|---:|---:|");
    for (k, case) in cases(&root, 0).iter().enumerate() {
        match &zkcli {
            Some(z) => println!(
                "| {} | {:.1} | {:.0} | {:.0}× |",
                case.name,
                ms(shepherd[k]),
                ms(z[k]),
                ms(z[k]) / ms(shepherd[k])
            ),
            None => println!("| {} | {:.1} | (no zkCli) | |", case.name, ms(shepherd[k])),
        }
    }
    if let Some(mut child) = server {
        let _ = child.kill();
        let _ = child.wait();
    }
}
