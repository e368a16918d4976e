//! The `shepherd` command inside the wheel: the console script `shepherd` calls [`run_cli`],
//! which runs the very function the Rust binary's `main` runs (`shepherd_cli::run`), so that
//! `pip install shepherd-zk` gives the same command with no Rust toolchain.

use std::process::ExitCode;

use pyo3::prelude::*;

/// Runs the `shepherd` command with `argv` (the program name first, as `sys.argv`) and
/// returns its exit status. The GIL is released for the whole run (`shepherd serve` runs until
/// interrupted).
#[pyfunction]
pub(crate) fn run_cli(py: Python<'_>, argv: Vec<String>) -> i32 {
    let code = py.allow_threads(|| shepherd_cli::run(argv));
    status(code)
}

/// The number in an `ExitCode`, which std does not expose: the one byte it equals.
fn status(code: ExitCode) -> i32 {
    (0..=u8::MAX)
        .find(|n| code == ExitCode::from(*n))
        .map_or(1, i32::from)
}

#[cfg(test)]
mod tests {
    use std::process::ExitCode;

    #[test]
    fn exit_codes_read_back() {
        assert_eq!(super::status(ExitCode::SUCCESS), 0);
        assert_eq!(super::status(ExitCode::from(2)), 2);
    }
}
