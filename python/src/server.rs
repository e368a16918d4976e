//! [`NativeServer`]: one embedded Shepherd server and the tokio runtime it runs on, owned by a
//! Python object.
//!
//! Invariants: every blocking call releases the GIL while it waits; the runtime's threads are
//! named `shepherd-zk-<id>-worker`, so that a panic on them is reported to this server's next
//! call ([`crate::panics`]); after [`NativeServer::close`] every call raises
//! [`ServerError`] saying so, and nothing of the server is left running. The test controls are
//! reached through [`Controls::call`](shepherd_server::Controls::call), the same code and JSON as the HTTP test
//! controls (docs/test-controls.md), so that the Python methods and the HTTP routes cannot
//! drift apart.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use shepherd_server::{Config, Server};
use tokio::runtime::Runtime;

use crate::error::ServerError;
use crate::panics;

/// Ids for the runtime threads' names; never reused within a process.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// How many passes [`NativeServer::reset`] makes over the tree before it gives up: nodes
/// created while it deletes (by a client still running) need another pass.
const RESET_PASSES: usize = 10;

/// The running server and what it runs on.
struct Inner {
    runtime: Runtime,
    handle: Server,
    /// `user:password` of the super user that [`NativeServer::reset`] authenticates as;
    /// `None` when the settings named their own superDigest.
    super_credential: Option<String>,
}

/// One embedded server, started by [`NativeServer::start`]. `shepherd_zk.Server` wraps it.
#[pyclass(module = "shepherd_zk._native", frozen)]
pub(crate) struct NativeServer {
    id: u64,
    inner: Mutex<Option<Arc<Inner>>>,
    ports: Vec<u16>,
    connect_string: String,
}

impl NativeServer {
    /// The running server, or the exception the call raises: an unreported panic on one of
    /// its threads first, then "closed".
    fn inner(&self) -> PyResult<Arc<Inner>> {
        if let Some(message) = panics::take(self.id) {
            return Err(ServerError::new_err(format!(
                "the embedded server panicked on one of its threads: {message}"
            )));
        }
        let inner = self.inner.lock().map_err(|_| closed())?;
        inner.clone().ok_or_else(closed)
    }
}

fn closed() -> PyErr {
    ServerError::new_err("the server is closed: call no method on it after close()")
}

/// A zoo.cfg made of `settings`, or a `ValueError` naming the key that is unknown or whose
/// value does not parse.
fn config_of(settings: &[(String, String)]) -> PyResult<Config> {
    let mut config = Config::default();
    for (key, value) in settings {
        // One key per line: a newline or `=` in a key would smuggle in another key.
        if key.is_empty() || key.contains(['=', '\n', '\r']) || value.contains(['\n', '\r']) {
            return Err(PyValueError::new_err(format!(
                "not a zoo.cfg setting: {key:?} = {value:?}"
            )));
        }
        let warnings = config
            .apply_zoo_cfg(&format!("{key}={value}"))
            .map_err(|message| PyValueError::new_err(format!("setting {key}: {message}")))?;
        if warnings
            .iter()
            .any(|w| w.starts_with("unknown zoo.cfg key"))
        {
            return Err(PyValueError::new_err(format!(
                "unknown setting {key:?}: not a zoo.cfg key the server reads (docs/python.md, \"Settings\")"
            )));
        }
    }
    Ok(config)
}

/// Checks zoo.cfg `settings` as [`NativeServer::start`] reads them, without starting
/// anything: `ValueError` names the first unknown key or bad value.
#[pyfunction]
pub(crate) fn check_settings(settings: Vec<(String, String)>) -> PyResult<()> {
    config_of(&settings).map(drop)
}

#[pymethods]
impl NativeServer {
    /// Starts a server: `members` members on `port` (0: free ports; else `port..port+n`),
    /// in memory or in `data_dir`, with the zoo.cfg `settings` as (key, value) text pairs.
    /// Raises `ValueError` for a bad setting and `OSError` when a port cannot be bound.
    #[staticmethod]
    #[pyo3(signature = (port, data_dir, members, settings))]
    fn start(
        py: Python<'_>,
        port: u16,
        data_dir: Option<PathBuf>,
        members: usize,
        settings: Vec<(String, String)>,
    ) -> PyResult<NativeServer> {
        let config = config_of(&settings)?;
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name(format!("{}{id}-worker", panics::THREAD_PREFIX))
            .enable_all()
            .build()?;
        let super_credential = config
            .core
            .super_digest
            .is_none()
            .then(|| format!("shepherd-zk-reset:{:032x}", rand::random::<u128>()));
        let mut builder = Server::builder().config(config).members(members);
        if port != 0 {
            builder = builder.port(port);
        }
        if let Some(dir) = data_dir {
            builder = builder.data_dir(dir);
        }
        if let Some(credential) = &super_credential {
            builder = builder.super_user(credential);
        }
        let handle = py.allow_threads(|| runtime.block_on(builder.start()))?;
        let ports = handle
            .members()
            .ids()
            .into_iter()
            .filter_map(|m| handle.members().addr(m).map(|a| a.port()))
            .collect();
        let connect_string = handle.connect_string();
        Ok(NativeServer {
            id,
            inner: Mutex::new(Some(Arc::new(Inner {
                runtime,
                handle,
                super_credential,
            }))),
            ports,
            connect_string,
        })
    }

    /// Every member's `host:port`, comma-separated, in member order.
    #[getter]
    fn connect_string(&self) -> String {
        self.connect_string.clone()
    }

    /// Every member's port, in member order.
    #[getter]
    fn ports(&self) -> Vec<u16> {
        self.ports.clone()
    }

    /// One test-controls call (docs/test-controls.md): the status and the JSON text.
    fn control(
        &self,
        py: Python<'_>,
        method: &str,
        path: &str,
        body: &str,
    ) -> PyResult<(u16, String)> {
        let inner = self.inner()?;
        Ok(py.allow_threads(|| {
            let call = inner.handle.controls().call(method, path, body.as_bytes());
            inner.runtime.block_on(call)
        }))
    }

    /// Restarts the server on the same ports, keeping its tree, sessions and zxid.
    fn restart(&self, py: Python<'_>) -> PyResult<()> {
        let inner = self.inner()?;
        py.allow_threads(|| inner.runtime.block_on(inner.handle.restart()))?;
        Ok(())
    }

    /// Deletes every node but `/` and `/zookeeper`'s, as the super user, and removes every
    /// fault rule: what the shared pytest fixtures do between tests.
    fn reset(&self, py: Python<'_>) -> PyResult<()> {
        let inner = self.inner()?;
        py.allow_threads(|| inner.runtime.block_on(reset(&inner)))
            .map_err(ServerError::new_err)
    }

    /// Stops the server and frees its ports and threads. Calling it again does nothing.
    fn close(&self, py: Python<'_>) {
        let taken = self.inner.lock().ok().and_then(|mut inner| inner.take());
        if let Some(inner) = taken {
            py.allow_threads(|| shut_down(inner));
        }
    }

    /// Whether [`NativeServer::close`] was called.
    #[getter]
    fn closed(&self) -> bool {
        self.inner.lock().map_or(true, |inner| inner.is_none())
    }

    /// Panics on one of the server's threads, for the test that a panic there becomes an
    /// exception in the next call rather than an abort.
    fn _panic_on_server_thread(&self, py: Python<'_>) -> PyResult<()> {
        let inner = self.inner()?;
        py.allow_threads(|| {
            let task = inner
                .runtime
                .spawn(async { panic!("a panic on a server thread, on purpose") });
            // The task's panic is caught by tokio and reported by the hook, not here.
            let _ = inner.runtime.block_on(task);
        });
        Ok(())
    }
}

impl Drop for NativeServer {
    fn drop(&mut self) {
        let taken = self.inner.get_mut().ok().and_then(Option::take);
        if let Some(inner) = taken {
            shut_down(inner);
        }
    }
}

/// Shuts the server down (a data directory is flushed and closed) and stops its threads.
fn shut_down(inner: Arc<Inner>) {
    inner.runtime.block_on(inner.handle.shutdown());
    // A call still running on another Python thread holds the last reference; the runtime
    // then goes when it returns.
    if let Ok(inner) = Arc::try_unwrap(inner) {
        let Inner {
            runtime, handle, ..
        } = inner;
        // The data directory's lock is released with the handle, before the threads go.
        drop(handle);
        runtime.shutdown_timeout(Duration::from_secs(5));
    }
}

/// [`NativeServer::reset`]'s work: a super-user client deletes the tree leaves first.
async fn reset(inner: &Inner) -> Result<(), String> {
    let handle = &inner.handle;
    handle.controls().clear_faults();
    let user_nodes = || -> Vec<String> {
        let mut paths: Vec<String> = handle
            .controls()
            .dump_tree()
            .into_iter()
            .map(|node| node.path)
            .filter(|p| p != "/" && p != "/zookeeper" && !p.starts_with("/zookeeper/"))
            .collect();
        // Deepest first: a node goes after its children.
        paths.sort_by_key(|p| std::cmp::Reverse(p.matches('/').count()));
        paths
    };
    if user_nodes().is_empty() {
        return Ok(());
    }
    let client = shepherd_client::Client::connect(&handle.connect_string())
        .await
        .map_err(|e| format!("reset: could not connect: {e}"))?;
    if let Some(credential) = &inner.super_credential {
        client
            .add_auth("digest", credential.as_bytes())
            .await
            .map_err(|e| format!("reset: the super user was refused: {e}"))?;
    }
    for _ in 0..RESET_PASSES {
        let left = user_nodes();
        if left.is_empty() {
            break;
        }
        for path in &left {
            // NoNode (gone meanwhile) and NotEmpty (a child created meanwhile) are for the
            // next pass to settle.
            let _ = client.delete(path, None).await;
        }
    }
    let _ = client.close().await;
    let left = user_nodes();
    match left.first() {
        None => Ok(()),
        Some(path) => Err(format!(
            "reset: {} nodes could not be deleted, {path} among them (an ACL, with the \
             settings' own superDigest?)",
            left.len()
        )),
    }
}
