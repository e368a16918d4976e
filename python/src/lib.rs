//! `shepherd_zk._native`: the native half of the Python package shepherd-zk. It owns the
//! embedded server's runtime inside the Python process ([`server`]), turns a panic on one of its
//! threads into a Python exception ([`panics`]), and runs the `shepherd` command
//! ([`cli`]). The Python half (`shepherd_zk/__init__.py`) gives it its public shape.
//!
//! Invariant: no call into this module holds the GIL while it waits on the server, and no
//! failure of the server (a Rust error or a panic) aborts the interpreter: each is a Python
//! exception.

use pyo3::prelude::*;

mod cli;
mod error;
mod panics;
mod server;

use error::ServerError;

/// The module as Python imports it.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    panics::install();
    m.add("ServerError", m.py().get_type::<ServerError>())?;
    m.add_class::<server::NativeServer>()?;
    m.add_function(wrap_pyfunction!(server::check_settings, m)?)?;
    m.add_function(wrap_pyfunction!(cli::run_cli, m)?)?;
    Ok(())
}
