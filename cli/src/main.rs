//! The `shepherd` command: `shepherd serve` runs a ZooKeeper-compatible dev coordinator; the
//! client commands (`ls`, `get`, `create`, `dump`, `locks`, …) reach any ZooKeeper; `shepherd tls
//! make-test-certs` writes throw-away certificates; `shepherd datadir check|repair` inspects and
//! mends a data directory a server refused. The command lives in the library
//! (`shepherd_cli::run`); the benchmarks are the `shepherd-bench` command.

fn main() -> std::process::ExitCode {
    shepherd_cli::run(std::env::args_os())
}
