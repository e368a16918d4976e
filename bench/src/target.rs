//! The server a benchmark measures ([`Target`]) and what `/proc` says about its process: CPU
//! time ([`cpu_time`]), resident memory ([`rss_bytes`]) and the open-file limit
//! ([`open_files_limit`]), and the options that name it ([`TargetArgs`]), which every
//! subcommand takes.
//!
//! A target is either a `shepherd serve` child process that the benchmark starts (the default:
//! its CPU and memory are then the server's alone, apart from the client's) or any ZooKeeper
//! given by `--connect`, whose process is known only if `--server-pid` names it.
//!
//! Invariants: a child is always stopped when its [`Target`] is dropped (SIGTERM, then SIGKILL
//! after [`STOP_GRACE`]), so a failed benchmark leaves no server behind; `/proc` figures are
//! read only on Linux, and every reader says so in its error elsewhere.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use shepherd_cli::runtime::{self, Threads};

use crate::error::{Error, Result};

/// How long a stopped child gets to exit cleanly (a durable server flushes its log) before it
/// is killed.
pub const STOP_GRACE: Duration = Duration::from_secs(30);

/// Clock ticks per second of `/proc/PID/stat`'s utime and stime: Linux's `USER_HZ`, which is
/// part of its user-space ABI and 100 on every architecture Rust targets.
const USER_HZ: u64 = 100;

/// Which server a benchmark measures, as every subcommand takes it on the command line (a
/// running ZooKeeper, or `shepherd serve` children started for the run), with the clients'
/// threads and the name it is reported under. A benchmark refuses those it has no use for
/// ([`TargetArgs::refuse`]): `herd` and `connect` read no process and start no child,
/// `latencies` reads no process, and `herd` and `latencies` run their clients on one thread.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct TargetArgs {
    /// Measure this ZooKeeper (`host:port`; maxClientCnxns must allow the sessions) instead of
    /// a server the benchmark starts: `shepherd serve` children (herd: an embedded server;
    /// connect: none, mode plain needs it).
    #[arg(long, value_name = "HOST:PORT")]
    pub connect: Option<String>,
    /// The process id of the --connect server, read for its CPU time (load) or memory (scale,
    /// tree, watches, stall, pressure; not herd, connect, latencies).
    #[arg(long = "server-pid", value_name = "PID", requires = "connect")]
    pub server_pid: Option<u32>,
    /// An argument for every `shepherd serve` child (repeat for several: `--serve-arg=--config
    /// --serve-arg=zoo.cfg`; not herd, connect).
    #[arg(
        long = "serve-arg",
        value_name = "ARG",
        allow_hyphen_values = true,
        conflicts_with = "connect"
    )]
    pub serve_args: Vec<String>,
    /// Threads of the clients' runtime (default: one per CPU; connect: 1; not herd, latencies).
    #[arg(long = "client-threads", value_name = "N")]
    pub client_threads: Option<usize>,
    /// The server's name in the table and CSV (default: how it was reached; connect:
    /// `server`), or in herd's plot title.
    #[arg(long)]
    pub label: Option<String>,
    /// A shell command run before each memory reading, e.g. `jcmd PID GC.run` for a JVM (not
    /// herd, connect, latencies).
    #[arg(long = "before-reading", value_name = "COMMAND")]
    pub before_reading: Option<String>,
}

impl TargetArgs {
    /// Refuses the options among `unused` that were given: a benchmark that has no use for
    /// one (it reads nothing of the server's process, starts no `shepherd serve`, or runs its
    /// clients on one thread by design) says so rather than ignoring it.
    ///
    /// # Errors
    /// [`Error::Refused`] naming `bench` and the first such option given.
    pub fn refuse(&self, bench: &str, unused: &[Unused]) -> Result<()> {
        let given = |option: &Unused| match option {
            Unused::ServerPid => self.server_pid.is_some(),
            Unused::ServeArg => !self.serve_args.is_empty(),
            Unused::BeforeReading => self.before_reading.is_some(),
            Unused::ClientThreads => self.client_threads.is_some(),
        };
        match unused.iter().find(|option| given(option)) {
            Some(option) => Err(Error::Refused(format!(
                "{} does not apply to {bench}, which {}",
                option.flag(),
                option.why()
            ))),
            None => Ok(()),
        }
    }

    /// The --connect server, if one was named.
    pub fn remote(&self) -> Option<Target> {
        let connect = self.connect.as_deref()?;
        let mut target = Target::remote(connect, self.server_pid);
        target.before_reading.clone_from(&self.before_reading);
        Some(target)
    }

    /// The clients' runtime, with --client-threads workers (one per CPU by default).
    ///
    /// # Errors
    /// [`Error::Io`] when the OS refuses its threads.
    pub fn client_runtime(&self) -> Result<tokio::runtime::Runtime> {
        runtime::start(Threads::Workers(self.client_threads)).map_err(|source| Error::Io {
            what: "start the clients' runtime".to_owned(),
            source,
        })
    }

    /// The --connect server, else a new `shepherd serve` child.
    ///
    /// # Errors
    /// As [`Target::spawn_serve`].
    pub fn open(&self) -> Result<Target> {
        match self.remote() {
            Some(target) => Ok(target),
            None => Target::spawn_serve(&self.serve_args).map(|mut target| {
                target.before_reading.clone_from(&self.before_reading);
                target
            }),
        }
    }
}

/// An option of [`TargetArgs`] that a benchmark may have no use for ([`TargetArgs::refuse`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unused {
    /// `--server-pid`.
    ServerPid,
    /// `--serve-arg`.
    ServeArg,
    /// `--before-reading`.
    BeforeReading,
    /// `--client-threads`.
    ClientThreads,
}

impl Unused {
    fn flag(self) -> &'static str {
        match self {
            Unused::ServerPid => "--server-pid",
            Unused::ServeArg => "--serve-arg",
            Unused::BeforeReading => "--before-reading",
            Unused::ClientThreads => "--client-threads",
        }
    }

    fn why(self) -> &'static str {
        match self {
            Unused::ServerPid | Unused::BeforeReading => "reads nothing of the server's process",
            Unused::ServeArg => "starts no shepherd serve",
            Unused::ClientThreads => "runs its clients on one thread",
        }
    }
}

/// The server under test.
pub struct Target {
    /// `host:port` to connect to.
    pub connect: String,
    /// Its process, when known: read for CPU time and memory.
    pub pid: Option<u32>,
    /// What it is, for the report: `shepherd serve (child)` or `--connect HOST:PORT`.
    pub name: String,
    /// A shell command run before each memory reading (e.g. `jcmd PID GC.run`, so that a JVM
    /// gives back the heap it no longer uses).
    pub before_reading: Option<String>,
    child: Option<Child>,
}

impl Target {
    /// The server at `connect`, whose process is `pid` if given.
    pub fn remote(connect: &str, pid: Option<u32>) -> Target {
        Target {
            connect: connect.to_owned(),
            pid,
            name: format!("--connect {connect}"),
            before_reading: None,
            child: None,
        }
    }

    /// Starts `shepherd serve --port 0 --ready-json ARGS…` (the `shepherd` beside this
    /// executable, or `SHEPHERD_BIN`) as a child and waits for its launch line
    /// ([`shepherd_cli::ready`]), which names where it listens. Unless ARGS
    /// has its own `--config`, the child reads a zoo.cfg of `maxClientCnxns=0` (written to the
    /// temporary directory), since every session of a benchmark comes from one address.
    ///
    /// # Errors
    /// [`Error::Io`] when it cannot be started or its output cannot be read;
    /// [`Error::Refused`] when it exits before listening or its first line is not a launch
    /// line.
    pub fn spawn_serve(args: &[String]) -> Result<Target> {
        let io = |what: &str| {
            let what = what.to_owned();
            move |source| Error::Io { what, source }
        };
        let exe = shepherd_cli::binary::shepherd().map_err(io("find the shepherd executable"))?;
        let mut command = Command::new(exe);
        command.args(["serve", "--port", "0", "--ready-json"]);
        // Our own configuration, unless the caller gave one. `serve` reads it before it
        // listens; the file is removed when this returns, whichever way.
        let config = if args
            .iter()
            .any(|a| a == "--config" || a.starts_with("--config="))
        {
            None
        } else {
            let mut file = tempfile::Builder::new()
                .prefix("shepherd-bench-")
                .suffix(".cfg")
                .tempfile()
                .map_err(io("create a configuration file"))?;
            file.write_all(b"maxClientCnxns=0\n")
                .map_err(io(&format!("write {}", file.path().display())))?;
            Some(file)
        };
        if let Some(file) = &config {
            command.arg("--config").arg(file.path());
        }
        let mut child = command
            .args(args)
            // Only problems: a benchmark opens thousands of sessions.
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(io("start shepherd serve"))?;
        let pid = child.id();
        let mut target = Target {
            connect: String::new(),
            pid: Some(pid),
            name: "shepherd serve (child)".to_owned(),
            before_reading: None,
            child: None,
        };
        let Some(stdout) = child.stdout.take() else {
            target.child = Some(child);
            return Err(Error::Refused("shepherd serve has no stdout".to_owned()));
        };
        target.child = Some(child);
        let mut lines = BufReader::new(stdout).lines();
        // With --ready-json the launch line is the first line on stdout.
        let launch = match lines.next() {
            Some(Ok(line)) => shepherd_cli::ready::parse(&line).ok_or_else(|| {
                Error::Refused(format!(
                    "shepherd serve printed {line:?}, not its launch line"
                ))
            })?,
            Some(Err(source)) => return Err(io("read shepherd serve's output")(source)),
            None => {
                return Err(Error::Refused(
                    "shepherd serve exited before listening (see its errors above)".to_owned(),
                ));
            }
        };
        // Drain what else it prints, so that a full pipe never blocks it.
        std::thread::spawn(move || lines.for_each(drop));
        target.connect = launch.connect_string;
        Ok(target)
    }

    /// The server's CPU time so far, if its process is known.
    ///
    /// # Errors
    /// When `/proc/PID/stat` cannot be read or parsed (not Linux, process gone).
    pub fn cpu(&self) -> Result<Option<Duration>> {
        self.pid.map(cpu_time).transpose()
    }

    /// The server's resident memory, if its process is known, after running
    /// [`Target::before_reading`] if set.
    ///
    /// # Errors
    /// When `/proc/PID/status` cannot be read or has no VmRSS, or the command cannot be run or
    /// fails.
    pub fn rss(&self) -> Result<Option<u64>> {
        if let Some(command) = &self.before_reading {
            let status = Command::new("sh")
                .args(["-c", command])
                .stdout(Stdio::null())
                .status()
                .map_err(|source| Error::Io {
                    what: format!("run {command:?}"),
                    source,
                })?;
            if !status.success() {
                return Err(Error::Refused(format!("{command:?} failed: {status}")));
            }
        }
        self.pid.map(rss_bytes).transpose()
    }

    /// Stops a child (clean stop first); a remote server is left alone.
    ///
    /// # Errors
    /// When the child cannot be signalled or waited for.
    pub fn stop(&mut self) -> Result<()> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        // SIGTERM is serve's clean stop; std only sends SIGKILL, so ask kill(1).
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        let deadline = Instant::now() + STOP_GRACE;
        loop {
            match child.try_wait() {
                Ok(Some(_)) => return Ok(()),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Ok(None) => break,
                Err(source) => {
                    return Err(Error::Io {
                        what: "wait for shepherd serve".to_owned(),
                        source,
                    });
                }
            }
        }
        let _ = child.kill();
        child.wait().map(drop).map_err(|source| Error::Io {
            what: "wait for shepherd serve".to_owned(),
            source,
        })
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// A process's CPU time (user + system, all threads) from `/proc/PID/stat`.
///
/// # Errors
/// When the file cannot be read or parsed.
pub fn cpu_time(pid: u32) -> Result<Duration> {
    let path = format!("/proc/{pid}/stat");
    let text = std::fs::read_to_string(&path).map_err(|source| Error::Io {
        what: format!("read {path}"),
        source,
    })?;
    parse_cpu(&text).ok_or_else(|| Error::Refused(format!("{path} has no utime and stime")))
}

/// utime + stime from a `/proc/PID/stat` line. The command name (field 2) may hold spaces and
/// parentheses, so fields are counted from the last `)`: utime and stime are fields 14 and 15.
fn parse_cpu(stat: &str) -> Option<Duration> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    let ticks = utime + stime;
    Some(Duration::from_millis(ticks * 1000 / USER_HZ))
}

/// A process's resident set size, bytes, from `/proc/PID/status`' VmRSS.
///
/// # Errors
/// When the file cannot be read or has no VmRSS line.
pub fn rss_bytes(pid: u32) -> Result<u64> {
    let path = format!("/proc/{pid}/status");
    let text = std::fs::read_to_string(&path).map_err(|source| Error::Io {
        what: format!("read {path}"),
        source,
    })?;
    status_kib(&text, "VmRSS:")
        .map(|kib| kib * 1024)
        .ok_or_else(|| Error::Refused(format!("{path} has no VmRSS")))
}

/// A `Name:   123 kB` field of `/proc/PID/status`, in KiB.
fn status_kib(status: &str, name: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with(name))?;
    line[name.len()..].split_whitespace().next()?.parse().ok()
}

/// A process's soft limit on open files (`Max open files` of `/proc/PID/limits`); `None` when
/// unlimited.
///
/// # Errors
/// When the file cannot be read or has no such line.
pub fn open_files_limit(pid: u32) -> Result<Option<u64>> {
    let path = format!("/proc/{pid}/limits");
    let text = std::fs::read_to_string(&path).map_err(|source| Error::Io {
        what: format!("read {path}"),
        source,
    })?;
    let line = text
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .ok_or_else(|| Error::Refused(format!("{path} has no Max open files")))?;
    let soft = line["Max open files".len()..].split_whitespace().next();
    Ok(soft.and_then(|s| s.parse().ok()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_is_read_after_the_command_name() {
        let stat = "42 (a) b) S 1 42 42 0 -1 4194560 100 0 0 0 250 70 0 0 20 0 3 0";
        assert_eq!(parse_cpu(stat), Some(Duration::from_millis(3200)));
        assert_eq!(parse_cpu("42 (x"), None);
        let own = cpu_time(std::process::id()).unwrap();
        assert!(own < Duration::from_secs(3600));
    }

    #[test]
    fn refuse_names_an_unused_option_given() {
        let address = TargetArgs {
            connect: Some("127.0.0.1:2181".to_owned()),
            label: Some("zk".to_owned()),
            ..TargetArgs::default()
        };
        let all = [
            Unused::ServerPid,
            Unused::ServeArg,
            Unused::BeforeReading,
            Unused::ClientThreads,
        ];
        assert!(address.refuse("herd", &all).is_ok());
        let with_pid = TargetArgs {
            server_pid: Some(1),
            ..address.clone()
        };
        let refused = with_pid.refuse("herd", &all).unwrap_err().to_string();
        assert!(
            refused.contains("--server-pid") && refused.contains("herd"),
            "{refused}"
        );
        assert!(with_pid.refuse("latencies", &[Unused::ServeArg]).is_ok());
        let with_threads = TargetArgs {
            client_threads: Some(4),
            ..TargetArgs::default()
        };
        let refused = with_threads
            .refuse("latencies", &all)
            .unwrap_err()
            .to_string();
        assert!(refused.contains("--client-threads"), "{refused}");
    }

    #[test]
    fn rss_and_limits_of_this_process() {
        assert_eq!(status_kib("VmRSS:\t  1234 kB\n", "VmRSS:"), Some(1234));
        assert!(rss_bytes(std::process::id()).unwrap() > 0);
        let _ = open_files_limit(std::process::id()).unwrap();
    }
}
