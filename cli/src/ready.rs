//! The launch line of `shepherd serve --ready-json`: the one JSON object a launcher in any
//! language (a Java or Go test helper, a script) reads to find a server it started, printed
//! once every listener is bound (docs/cli.md, "The launch line").
//!
//! Invariants: one line, every field always present (`null` for a listener that was not asked
//! for), `ports` in member order `1..=n`; field names and meanings only ever grow, since
//! launchers outside this repository parse them.

use std::net::SocketAddr;
use std::path::Path;

use serde::Serialize;
use shepherd_server::Server;

/// The launch line for `server`, without its newline. `data_dir` is the data directory the
/// server keeps its state in, `None` in memory.
pub(crate) fn launch_line(server: &Server, data_dir: Option<&Path>) -> String {
    let secure = server.secure_addr();
    // A member's plain client address; a secure-only server's one address is its secure port.
    let ports: Vec<SocketAddr> = server
        .members()
        .ids()
        .into_iter()
        .filter_map(|id| server.members().addr(id))
        .filter(|addr| Some(*addr) != secure)
        .collect();
    let url =
        |addr: Option<SocketAddr>, path: &str| addr.map(|addr| format!("http://{addr}{path}"));
    let line = LaunchLine {
        shepherd: "ready",
        version: env!("CARGO_PKG_VERSION"),
        pid: std::process::id(),
        ports: ports.iter().map(SocketAddr::port).collect(),
        connect_string: ports
            .iter()
            .map(SocketAddr::to_string)
            .collect::<Vec<_>>()
            .join(","),
        secure_port: secure.map(|addr| addr.port()),
        admin_url: url(server.admin_addr(), "/commands"),
        metrics_url: url(server.metrics_addr(), "/metrics"),
        controls_url: url(server.controls().http_addr(), ""),
        controls_token: server.controls().http_token(),
        data_dir: data_dir.map(|dir| dir.display().to_string()),
    };
    // Nothing in it can fail to serialize (strings, numbers, options).
    serde_json::to_string(&line).unwrap_or_default()
}

/// The launch line's fields, in the order they are printed: `shepherd` first, so that a
/// launcher without a JSON parser can recognise the line by its start.
#[derive(Serialize)]
struct LaunchLine<'a> {
    shepherd: &'static str,
    version: &'static str,
    pid: u32,
    ports: Vec<u16>,
    connect_string: String,
    secure_port: Option<u16>,
    admin_url: Option<String>,
    metrics_url: Option<String>,
    controls_url: Option<String>,
    controls_token: Option<&'a str>,
    data_dir: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;
    use shepherd_server::Server;

    #[tokio::test]
    async fn every_field_is_present_and_null_when_not_asked_for() {
        let server = Server::builder().members(2).start().await.expect("start");
        let line = launch_line(&server, Some(Path::new("/tmp/d")));
        server.shutdown().await;
        assert!(!line.contains('\n'), "{line}");
        assert!(line.starts_with(r#"{"shepherd":"ready","#), "{line}");
        let value: Value = serde_json::from_str(&line).expect("JSON");
        let ports = value["ports"].as_array().expect("ports");
        assert_eq!(ports.len(), 2, "{line}");
        let expected: Vec<String> = [1, 2]
            .iter()
            .map(|id| server.members().addr(*id).unwrap().to_string())
            .collect();
        assert_eq!(value["connect_string"], expected.join(","));
        assert_eq!(value["pid"], std::process::id());
        assert_eq!(value["shepherd"], "ready");
        assert_eq!(value["data_dir"], "/tmp/d");
        for field in [
            "secure_port",
            "admin_url",
            "metrics_url",
            "controls_url",
            "controls_token",
        ] {
            assert_eq!(value[field], Value::Null, "{field} in {line}");
            assert!(value.get(field).is_some(), "{field} missing from {line}");
        }
    }
}
