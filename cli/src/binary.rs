//! Where the `shepherd` command is, for the benchmarks that start `shepherd serve` as a user
//! would: cargo builds it into `target/<profile>/`, beside the `shepherd-bench` command, while
//! a cargo bench or test runs from `target/<profile>/deps/`.
//!
//! Invariant: the binary found is named on stderr with its age, because nothing here builds it:
//! a benchmark of a stale build must be visible as one.

use std::io;
use std::path::PathBuf;
use std::time::SystemTime;

/// The `shepherd` binary: `SHEPHERD_BIN` when set, else the `shepherd` in the profile directory
/// above the running executable (`target/<profile>/shepherd`).
///
/// # Errors
/// `NotFound` when there is no such file, naming the command that builds it.
pub fn shepherd() -> io::Result<PathBuf> {
    let path = match std::env::var_os("SHEPHERD_BIN") {
        Some(path) => PathBuf::from(path),
        None => {
            let exe = std::env::current_exe()?;
            let profile_dir = exe
                .ancestors()
                .skip(1)
                .find(|dir| !dir.ends_with("deps") && !dir.ends_with("examples"))
                .ok_or_else(|| io::Error::other("no directory above the running executable"))?;
            let release = if profile_dir.ends_with("release") {
                " --release"
            } else {
                ""
            };
            let candidate = profile_dir.join("shepherd");
            if !candidate.is_file() {
                return Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    format!(
                        "no {}: build it with `cargo build{release} --bin shepherd`, or set SHEPHERD_BIN",
                        candidate.display()
                    ),
                ));
            }
            candidate
        }
    };
    let age = std::fs::metadata(&path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|built| SystemTime::now().duration_since(built).ok());
    match age {
        Some(age) => eprintln!(
            "shepherd binary: {} (built {}s ago)",
            path.display(),
            age.as_secs()
        ),
        None => eprintln!("shepherd binary: {}", path.display()),
    }
    Ok(path)
}
