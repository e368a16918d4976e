//! For the benchmarks' own tests: a server embedded in the test process, on a runtime of its
//! own, so that a benchmark that reads "the server's process" (`--server-pid`) reads this one.

use shepherd_cli::runtime::{self, Threads};
use shepherd_server::{Server, ServerBuilder};

/// A running embedded server, its runtime, and the two arguments a benchmark needs to reach it.
pub(crate) struct TestServer {
    runtime: tokio::runtime::Runtime,
    server: Server,
    /// `--connect`.
    pub connect: String,
    /// `--server-pid`: this process.
    pub pid: String,
}

impl TestServer {
    /// Starts `builder`'s server on a one-worker runtime.
    pub fn start(builder: ServerBuilder) -> TestServer {
        let runtime = runtime::start(Threads::Workers(Some(1))).unwrap();
        let server = runtime.block_on(builder.start()).unwrap();
        let connect = server.connect_string();
        TestServer {
            runtime,
            server,
            connect,
            pid: std::process::id().to_string(),
        }
    }

    /// Runs `future` on the server's runtime.
    pub fn block_on<F: std::future::Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }

    /// Shuts the server down.
    pub fn stop(self) {
        self.runtime.block_on(self.server.shutdown());
    }
}
