//! The launch line of `shepherd serve --ready-json`: the one JSON object a launcher in any
//! language (a Java or Go test helper, a script) reads to find a server it started, printed
//! once every listener is bound (docs/cli.md, "The launch line"), and [`parse`], the one
//! reader of it in Rust (`shepherd-bench` starts its servers through it), kept beside the
//! writer so that the two cannot drift apart.
//!
//! Invariants: one line, every field always present (`null` for a listener that was not asked
//! for), `ports` in member order `1..=n`; field names and meanings only ever grow, since
//! launchers outside this repository parse them.

use std::net::SocketAddr;
use std::path::Path;

use serde::{Deserialize, Serialize};
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
        shepherd: READY.to_owned(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
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
        controls_token: server.controls().http_token().map(str::to_owned),
        data_dir: data_dir.map(|dir| dir.display().to_string()),
    };
    // Nothing in it can fail to serialize (strings, numbers, options).
    serde_json::to_string(&line).unwrap_or_default()
}

/// The value of the launch line's first field, `shepherd`.
const READY: &str = "ready";

/// Reads a launch line (with or without its newline); `None` when `line` is not one (another
/// line, or not JSON). Fields added by a newer `shepherd` are ignored.
pub fn parse(line: &str) -> Option<LaunchLine> {
    let launch: LaunchLine = serde_json::from_str(line.trim_end()).ok()?;
    (launch.shepherd == READY).then_some(launch)
}

/// The launch line's fields, in the order they are printed: `shepherd` first, so that a
/// launcher without a JSON parser can recognise the line by its start.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct LaunchLine {
    /// Always `ready`.
    pub shepherd: String,
    /// The `shepherd` version that printed it.
    pub version: String,
    /// The server's process id.
    pub pid: u32,
    /// Each member's plain client port, in member order.
    pub ports: Vec<u16>,
    /// `host:port,…` of those ports, ready for a client.
    pub connect_string: String,
    /// The TLS client port, if one was asked for.
    pub secure_port: Option<u16>,
    /// The AdminServer's `/commands` URL, if it listens.
    pub admin_url: Option<String>,
    /// The `/metrics` URL, if it listens.
    pub metrics_url: Option<String>,
    /// The test controls' base URL, if they listen.
    pub controls_url: Option<String>,
    /// The token the test controls want, if they listen.
    pub controls_token: Option<String>,
    /// The data directory, `None` in memory.
    pub data_dir: Option<String>,
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

    #[tokio::test]
    async fn parse_reads_back_what_launch_line_wrote() {
        let server = Server::builder().start().await.expect("start");
        let line = launch_line(&server, None);
        let addr = server.local_addr();
        server.shutdown().await;
        let launch = parse(&format!("{line}\n")).expect("a launch line");
        assert_eq!(launch.connect_string, addr.to_string());
        assert_eq!(launch.ports, [addr.port()]);
        assert_eq!(launch.pid, std::process::id());
        assert_eq!(launch.data_dir, None);
        assert_eq!(serde_json::to_string(&launch).unwrap(), line);

        // Newer fields are ignored; another line, or another JSON object, is not a launch line.
        let grown = line.replacen('{', r#"{"later":1,"#, 1);
        assert_eq!(parse(&grown), Some(launch));
        assert_eq!(parse("shepherd listening on 127.0.0.1:2181"), None);
        assert_eq!(parse(&line.replacen("ready", "starting", 1)), None);
    }
}
