//! The HTTP listeners a server was configured with, bound before it serves (so that a taken
//! port fails the start) and served once its handle exists: the AdminServer's and `/metrics`'s
//! (one listener for both on the same fixed address), and the test controls' own.

use std::io;

use tokio::net::TcpListener;

use crate::config::Config;
use crate::shell::handle::Server;
use crate::shell::http::{Endpoints, accept_loop, controls};

/// Bound and not yet served.
pub(crate) struct Listeners {
    endpoints: Vec<(TcpListener, Endpoints)>,
    controls: Option<TcpListener>,
}

impl Listeners {
    /// Binds what `config` and the test-controls address ask for.
    ///
    /// # Errors
    /// The bind error; `InvalidInput` for a test-controls address that is not loopback.
    pub(crate) async fn bind(
        config: &Config,
        test_controls: Option<std::net::SocketAddr>,
    ) -> io::Result<Listeners> {
        let endpoints = bind_endpoints(config).await?;
        let controls = match test_controls {
            Some(addr) => Some(controls::bind(addr).await?),
            None => None,
        };
        Ok(Listeners {
            endpoints,
            controls,
        })
    }

    /// Spawns an accept loop per listener on the handle's tracker and records the bound
    /// addresses (and the controls' token) in the handle.
    ///
    /// # Errors
    /// A listener's address could not be read.
    /// `open_commands`: ZooKeeper's `/command/*` on the test controls answer without the token.
    pub(crate) fn serve(self, handle: &mut Server, open_commands: bool) -> io::Result<()> {
        for (listener, endpoints) in self.endpoints {
            let addr = Some(listener.local_addr()?);
            if endpoints.admin {
                handle.http_addrs.0 = addr;
            }
            if endpoints.metrics {
                handle.http_addrs.1 = addr;
            }
            handle.tracker.spawn(accept_loop(
                listener,
                handle.shared.clone(),
                endpoints,
                handle.shutdown.clone(),
                handle.tracker.clone(),
            ));
        }
        if let Some(listener) = self.controls {
            handle.test_controls = Some(controls::start(listener, handle, open_commands)?);
        }
        Ok(())
    }
}

/// Binds the AdminServer's and `/metrics`'s listeners: one for both when they are configured on
/// the same address with a fixed port (port 0 means "any free port", twice).
async fn bind_endpoints(config: &Config) -> io::Result<Vec<(TcpListener, Endpoints)>> {
    let (admin, metrics) = (config.admin_server, config.metrics_server);
    let mut out = Vec::new();
    match (admin, metrics) {
        (Some(a), Some(m)) if a == m && a.port() != 0 => {
            let both = Endpoints {
                admin: true,
                metrics: true,
            };
            out.push((TcpListener::bind(a).await?, both));
        }
        _ => {
            if let Some(a) = admin {
                let only = Endpoints {
                    admin: true,
                    metrics: false,
                };
                out.push((TcpListener::bind(a).await?, only));
            }
            if let Some(m) = metrics {
                let only = Endpoints {
                    admin: false,
                    metrics: true,
                };
                out.push((TcpListener::bind(m).await?, only));
            }
        }
    }
    Ok(out)
}
