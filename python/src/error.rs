//! [`ServerError`], the one Python exception of the native module, in a file of its own so
//! that the module root and the server that raises it do not use each other.

pyo3::create_exception!(
    _native,
    ServerError,
    pyo3::exceptions::PyRuntimeError,
    "The embedded server failed: it panicked, was closed, or could not do what was asked."
);
