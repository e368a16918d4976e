//! Binding the members' client listeners: on consecutive ports from a first one (or free
//! ports), or each on a port of its own, so that an ensemble that started on free ports comes
//! back on the same ones.
//!
//! Invariant: member `i` is the `i`-th listener returned; a listener the caller bound is
//! always member 1's.

use std::io;

use tokio::net::TcpListener;

use crate::config::Config;

/// Binds the members' client listeners: member 1 on `given` if the caller bound one, else on
/// the configured address and port; member `i` on `port + i - 1` for a fixed port, else (and
/// after a given listener) on a free port of the same address.
pub(crate) async fn consecutive(
    given: Option<TcpListener>,
    config: &Config,
    n: usize,
) -> io::Result<Vec<TcpListener>> {
    let mut out = Vec::with_capacity(n);
    let (ip, port) = match given {
        Some(listener) => {
            let ip = listener.local_addr()?.ip();
            out.push(listener);
            (ip, 0)
        }
        None => (config.bind, config.port),
    };
    while out.len() < n {
        let port = if port == 0 {
            0
        } else {
            u16::try_from(usize::from(port) + out.len()).map_err(|_| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{n} members from port {port} pass port 65535"),
                )
            })?
        };
        out.push(TcpListener::bind((ip, port)).await?);
    }
    Ok(out)
}

/// Binds member `i` on `ports[i - 1]` of the configured address (member 1 on `given` if the
/// caller bound one).
pub(crate) async fn each(
    given: Option<TcpListener>,
    config: &Config,
    ports: &[u16],
) -> io::Result<Vec<TcpListener>> {
    let mut out = Vec::with_capacity(ports.len());
    let ip = match given {
        Some(listener) => {
            let ip = listener.local_addr()?.ip();
            out.push(listener);
            ip
        }
        None => config.bind,
    };
    for &port in &ports[out.len()..] {
        out.push(TcpListener::bind((ip, port)).await?);
    }
    Ok(out)
}
