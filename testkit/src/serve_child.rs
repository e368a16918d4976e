//! `shepherd serve` as a child process, met as a user meets it: spawned, and its address read
//! from the first line it prints (`shepherd listening on ADDR`).

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// The `shepherd` binary, for a benchmark or test outside the package that builds it (cargo gives
/// `CARGO_BIN_EXE_shepherd` to that package's own tests only): `SHEPHERD_BIN` when set, else the
/// `shepherd` beside the running executable's profile directory (`target/<profile>/shepherd`,
/// which `cargo build [--release] --bin shepherd` writes).
///
/// # Panics
/// If there is no such file: the message names the command that builds it.
pub fn shepherd_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("SHEPHERD_BIN") {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().expect("the running executable's path");
    // target/<profile>/deps/<name>-<hash> for benches and tests; target/<profile>/<name> else.
    let profile_dir = exe
        .ancestors()
        .skip(1)
        .find(|dir| !dir.ends_with("deps") && !dir.ends_with("examples"))
        .expect("a profile directory above the executable");
    let candidate = profile_dir.join("shepherd");
    let release = if profile_dir.ends_with("release") {
        " --release"
    } else {
        ""
    };
    assert!(
        candidate.is_file(),
        "no shepherd binary at {}: run `cargo build{release} --bin shepherd` first, or set SHEPHERD_BIN",
        candidate.display()
    );
    candidate
}

/// The address in a `shepherd listening on ADDR` line (`ADDR` alone, without the ` (TLS)` a
/// secure port's line adds), or `None` for any other line.
pub fn listening_addr(line: &str) -> Option<&str> {
    let rest = line.trim().strip_prefix("shepherd listening on ")?;
    Some(rest.strip_suffix(" (TLS)").unwrap_or(rest))
}

/// Spawns `serve` (a `shepherd serve …` command) with its output on a pipe (kept open in the
/// returned child) and its log dropped, and returns it with the address of its first line. Blocks until that line comes:
/// meant for tests and benchmarks whose server starts at once.
///
/// # Panics
/// If the process cannot be spawned, or its first line is not the listening line (the child
/// is killed first).
pub fn spawn_serve(serve: &mut Command) -> (Child, String) {
    let mut child = serve
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn shepherd serve");
    let mut line = String::new();
    let mut stdout = child.stdout.take().map(BufReader::new);
    let read = stdout.as_mut().map(|out| out.read_line(&mut line));
    // Kept open in the child's handle: a closed pipe would fail the server's later lines.
    child.stdout = stdout.map(BufReader::into_inner);
    match (read, listening_addr(&line)) {
        (Some(Ok(_)), Some(addr)) => {
            let addr = addr.to_owned();
            (child, addr)
        }
        _ => {
            let _ = child.kill();
            let _ = child.wait();
            panic!("shepherd serve's first line is not `shepherd listening on ADDR`: {line:?}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::listening_addr;

    #[test]
    fn the_address_of_a_listening_line_and_nothing_else() {
        let plain = "shepherd listening on 127.0.0.1:2181\n";
        assert_eq!(listening_addr(plain), Some("127.0.0.1:2181"));
        let secure = "shepherd listening on 127.0.0.1:2281 (TLS)";
        assert_eq!(listening_addr(secure), Some("127.0.0.1:2281"));
        assert_eq!(listening_addr("shepherd metrics on http://x"), None);
    }
}
