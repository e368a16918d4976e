//! Server configuration: the embedded builder's settings and the subset of `zoo.cfg` that a
//! standalone server can honour, the data directory's keys included ([`Durability`]).
//!
//! A `zoo.cfg` is read exactly as ZooKeeper reads it ([`properties`]). A key we do not know is
//! reported back as a warning (with the known key it most resembles), never an error:
//! configuration files written for a real ensemble (initLimit, server.N, …) must start a dev
//! server.

mod auth;
mod client_auth;
mod durability;
pub mod jaas;
mod keys;
pub mod properties;
mod server_tls;
mod tls;
mod values;
mod whitelist;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use shepherd_protocol::DEFAULT_MAX_BUFFER;

use crate::core::CoreConfig;
pub use auth::AuthSettings;
pub use client_auth::ClientAuth;
use durability::KeyOutcome;
pub use durability::{
    DEFAULT_PREALLOC_BYTES, DEFAULT_SNAP_COUNT, DEFAULT_SNAP_SIZE_LIMIT_KB, Durability,
    MIN_SNAP_RETAIN_COUNT,
};
use properties::Property;
pub use server_tls::ServerTls;
pub use tls::{DEFAULT_HANDSHAKE_LIMIT, StoreFile, StoreType, TlsSettings};
pub use whitelist::FourLetterWhitelist;

/// Everything a server needs to start.
#[derive(Debug, Clone)]
pub struct Config {
    /// The deterministic core's settings.
    pub core: CoreConfig,
    /// Where to listen when no listener is given.
    pub bind: IpAddr,
    /// The port; 0 picks a free one.
    pub port: u16,
    /// `jute.maxbuffer`: the largest frame accepted.
    pub max_buffer: usize,
    /// `maxClientCnxns`: connections per client IP, 0 for no limit.
    pub max_client_cnxns: usize,
    /// `maxCnxns`: client connections to the whole server, 0 (ZooKeeper's default) for none. The
    /// open-file limit keeps a reserve besides (docs/operations.md, "Descriptors").
    pub max_cnxns: usize,
    /// The most bytes queued for one connection and not yet written (replies and
    /// notifications: their bytes on the wire, and 64 per frame still queued); a connection
    /// that would pass it is closed. `None`, the default, for [`Config::outbound_limit`].
    pub max_outbound_bytes: Option<usize>,
    /// `4lw.commands.whitelist`.
    pub four_letter_words: FourLetterWhitelist,
    /// Where the AdminServer (`/commands`) listens; `None`, the default, for off.
    /// `admin.enableServer=true` with `admin.serverAddress` (default 127.0.0.1) and
    /// `admin.serverPort` (default 8080).
    pub admin_server: Option<SocketAddr>,
    /// Where Prometheus `/metrics` is served; `None`, the default, for off.
    /// `metricsProvider.className` naming ZooKeeper's Prometheus provider, with
    /// `metricsProvider.httpHost` (default 127.0.0.1) and `metricsProvider.httpPort` (default
    /// 7000). When it equals [`Config::admin_server`], one listener serves both.
    pub metrics_server: Option<SocketAddr>,
    /// The `zoo.cfg` text the server started from (the AdminServer's
    /// `initial_configuration`), if any.
    pub initial_configuration: Option<String>,
    /// Where and how state is kept on disk; in memory by default.
    pub durability: Durability,
    /// TLS for client connections; plaintext only by default.
    pub tls: TlsSettings,
    /// SASL and the other authentication settings; digest and ip only by default.
    pub auth: AuthSettings,
    /// An in-process ensemble's election: how long its members stay LOOKING, once a quorum is
    /// up, before the new leader serves. `None`, the default, for one tick, what a 3.8
    /// ensemble of three takes on loopback (docs/ensemble.md); zero is allowed.
    pub election_time: Option<Duration>,
    /// `syncLimit`, in ticks (default 5): how long an in-process ensemble's members wait
    /// before they count a partitioned or isolated peer lost.
    pub sync_limit_ticks: u32,
}

/// The largest `jute.maxbuffer` accepted: 256 MiB. ZooKeeper sets no bound, but each
/// connection may hold a whole frame of this size while it is read, and its outbound queue
/// several more, so the bound is what keeps one client's memory
/// bounded; znodes are meant to be small (ZooKeeper's default is just under 1 MiB), and a
/// larger setting is far more likely a typo than a need.
pub const MAX_JUTE_BUFFER: usize = 256 << 20;

/// A session timeout bound as read from `zoo.cfg` (checked to be -1..=`i32::MAX`): `None`
/// for -1, ZooKeeper's "derive it from tickTime".
fn session_timeout(value: i64) -> Option<u32> {
    u32::try_from(value).ok()
}

/// ZooKeeper's Prometheus metrics provider class, whose name in `metricsProvider.className`
/// turns `/metrics` on.
pub const PROMETHEUS_PROVIDER: &str =
    "org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider";
/// ZooKeeper's default `admin.serverPort`.
pub const DEFAULT_ADMIN_PORT: u16 = 8080;
/// ZooKeeper's default `metricsProvider.httpPort`.
pub const DEFAULT_METRICS_PORT: u16 = 7000;

impl Default for Config {
    fn default() -> Self {
        Config {
            core: CoreConfig::default(),
            bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 0,
            max_buffer: DEFAULT_MAX_BUFFER,
            max_client_cnxns: 60,
            max_cnxns: 0,
            max_outbound_bytes: None,
            four_letter_words: FourLetterWhitelist::zookeeper_default(),
            admin_server: None,
            metrics_server: None,
            initial_configuration: None,
            durability: Durability::default(),
            tls: TlsSettings::default(),
            auth: AuthSettings::default(),
            election_time: None,
            sync_limit_ticks: 5,
        }
    }
}

impl Config {
    /// Offers a key no general arm took to each section in turn: durability, TLS, auth.
    fn apply_section_key(&mut self, key: &str, value: &str) -> Result<KeyOutcome, String> {
        let outcome = self.durability.apply_key(key, value)?;
        if !matches!(outcome, KeyOutcome::Unknown) {
            return Ok(outcome);
        }
        let outcome = self.tls.apply_key(key, value)?;
        if !matches!(outcome, KeyOutcome::Unknown) {
            return Ok(outcome);
        }
        self.auth.apply_key(key, value)
    }

    /// An in-process ensemble's election time: [`Config::election_time`], or one tick.
    pub fn election_time(&self) -> Duration {
        self.election_time
            .unwrap_or_else(|| Duration::from_millis(u64::from(self.core.tick_time_ms)))
    }

    /// How long a partitioned or isolated member's peers wait before they count it lost:
    /// `syncLimit` ticks.
    pub fn sync_limit(&self) -> Duration {
        Duration::from_millis(
            u64::from(self.core.tick_time_ms).saturating_mul(u64::from(self.sync_limit_ticks)),
        )
    }

    /// The outbound limit per connection: [`Config::max_outbound_bytes`], or by default eight
    /// times `jute.maxbuffer` (8 MiB at ZooKeeper's default); never below one frame of
    /// `jute.maxbuffer`.
    pub fn outbound_limit(&self) -> usize {
        let one_frame = self.max_buffer.saturating_add(4);
        self.max_outbound_bytes
            .unwrap_or_else(|| self.max_buffer.saturating_mul(8))
            .max(one_frame)
    }

    /// Sets `tickTime` and, as ZooKeeper does when they are not given explicitly, the session
    /// timeout bounds to 2 and 20 ticks.
    pub fn set_tick_time(&mut self, tick: Duration) {
        let ms = u32::try_from(tick.as_millis()).unwrap_or(u32::MAX).max(1);
        self.core.tick_time_ms = ms;
        self.core.min_session_timeout_ms = ms.saturating_mul(2);
        self.core.max_session_timeout_ms = ms.saturating_mul(20);
    }

    /// Reads `zoo.cfg` text on top of the defaults. Returns the warnings (unknown or ignored
    /// keys); a malformed value of a known key is an error.
    ///
    /// # Errors
    /// A message naming the line, for a value that does not parse.
    pub fn apply_zoo_cfg(&mut self, text: &str) -> Result<Vec<String>, String> {
        self.apply_zoo_cfg_and_settings(text, &[])
    }

    /// [`Config::apply_zoo_cfg`] of `text`, then of `settings` (`KEY=VALUE` each, as `shepherd
    /// serve --set` gives them) as if they were the file's last lines, so that they win over
    /// it and combine with it (`admin.serverPort` from a setting, `admin.enableServer` from the
    /// file). A setting whose key no section knows is an error naming it, not a warning: a
    /// typed typo would otherwise change nothing in silence.
    ///
    /// # Errors
    /// A message naming the line (`line N` of `text`, `setting N`) and the key, for a value
    /// that does not parse, or a setting that is not `KEY=VALUE` or whose key is unknown.
    pub fn apply_zoo_cfg_and_settings(
        &mut self,
        text: &str,
        settings: &[String],
    ) -> Result<Vec<String>, String> {
        let mut warnings = Vec::new();
        let mut min_timeout = None;
        let mut max_timeout = None;
        let loopback = IpAddr::V4(Ipv4Addr::LOCALHOST);
        let (mut admin_on, mut admin_ip, mut admin_port) = (false, loopback, DEFAULT_ADMIN_PORT);
        let (mut metrics_on, mut metrics_ip, mut metrics_port) =
            (false, loopback, DEFAULT_METRICS_PORT);
        let parsed = properties::parse(text)?;
        for (key, line) in &parsed.replaced {
            warnings.push(format!(
                "line {line}: {key} is given again later; the last value wins"
            ));
        }
        let file = parsed
            .entries
            .into_iter()
            .map(|Property { key, value, line }| Ok((format!("line {line}"), key, value, false)));
        let typed = settings.iter().enumerate().map(|(n, line)| {
            let place = format!("setting {}", n + 1);
            // A typed setting is one line: a newline in it would smuggle in another key.
            let trimmed = line.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.contains('\n') {
                return Err(format!("{place}: not key=value: {trimmed:?}"));
            }
            let (key, value) = trimmed
                .split_once('=')
                .ok_or_else(|| format!("{place}: not key=value: {trimmed}"))?;
            Ok((place, key.trim().to_owned(), value.trim().to_owned(), true))
        });
        for entry in file.chain(typed) {
            let (place, key, value, strict) = entry?;
            let (key, value) = (key.as_str(), value.as_str());
            let bad = |what: &str| format!("{place}: {key}={value}: {what}");
            let num = || value.parse::<u64>().map_err(|_| bad("expected a number"));
            // ZooKeeper reads these with `Integer.parseInt`, which refuses what an `int`
            // cannot hold; so do we, rather than truncate (4294967296 must not become 0).
            let int = |min: i64| match value.parse::<i64>() {
                Ok(n) if (min..=i64::from(i32::MAX)).contains(&n) => Ok(n),
                _ => Err(bad(&format!(
                    "expected a whole number from {min} to {}",
                    i32::MAX
                ))),
            };
            match key {
                "tickTime" => self.set_tick_time(Duration::from_millis(int(1)?.unsigned_abs())),
                // -1 is ZooKeeper's "not set": 2 and 20 ticks.
                "minSessionTimeout" => min_timeout = session_timeout(int(-1)?),
                "maxSessionTimeout" => max_timeout = session_timeout(int(-1)?),
                "clientPort" => {
                    self.port = value.parse().map_err(|_| bad("expected a port"))?;
                    self.tls.client_port_given = true;
                }
                "clientPortAddress" => {
                    self.bind = value.parse().map_err(|_| bad("expected an IP address"))?;
                }
                "maxClientCnxns" => {
                    self.max_client_cnxns = usize::try_from(int(0)?).unwrap_or(usize::MAX);
                }
                "maxCnxns" => {
                    self.max_cnxns = usize::try_from(int(0)?).unwrap_or(usize::MAX);
                }
                "jute.maxbuffer" => {
                    self.max_buffer = usize::try_from(num()?)
                        .ok()
                        .filter(|n| (1..=MAX_JUTE_BUFFER).contains(n))
                        .ok_or_else(|| {
                            bad(&format!(
                                "expected a size from 1 to {MAX_JUTE_BUFFER} bytes"
                            ))
                        })?;
                }
                "4lw.commands.whitelist" => {
                    let (list, unknown) = FourLetterWhitelist::parse(value);
                    self.four_letter_words = list;
                    for word in unknown {
                        warnings.push(format!("unknown four-letter word in whitelist: {word}"));
                    }
                }
                "superDigest" | "zookeeper.DigestAuthenticationProvider.superDigest" => {
                    self.core.super_digest = Some(value.to_string());
                }
                "extendedTypesEnabled" | "zookeeper.extendedTypesEnabled" => {
                    self.core.extended_types_enabled = value == "true";
                }
                "znode.container.checkIntervalMs" => {
                    self.core.container_check_interval_ms = num()?;
                }
                "znode.container.maxPerMinute" => {
                    self.core.container_max_per_minute = value
                        .parse()
                        .map_err(|_| bad(&format!("expected a number up to {}", u32::MAX)))?;
                }
                "znode.container.maxNeverUsedIntervalMs" => {
                    self.core.max_never_used_interval_ms = num()?;
                }
                "admin.enableServer" => admin_on = value == "true",
                "admin.serverAddress" => {
                    admin_ip = value.parse().map_err(|_| bad("expected an IP address"))?;
                }
                "admin.serverPort" => {
                    admin_port = value.parse().map_err(|_| bad("expected a port"))?;
                }
                "metricsProvider.className" => {
                    metrics_on = value == PROMETHEUS_PROVIDER;
                    if !metrics_on && !value.ends_with(".NullMetricsProvider") {
                        warnings.push(format!(
                            "metrics provider {value} is not supported; only {PROMETHEUS_PROVIDER}"
                        ));
                    }
                }
                "metricsProvider.httpHost" => {
                    metrics_ip = value.parse().map_err(|_| bad("expected an IP address"))?;
                }
                "metricsProvider.httpPort" => {
                    metrics_port = value.parse().map_err(|_| bad("expected a port"))?;
                }
                "metricsProvider.exportJvmInfo" => {
                    warnings.push(format!("{key} is ignored: there is no JVM"));
                }
                // How long an in-process ensemble waits for a silent peer (docs/ensemble.md).
                "syncLimit" => {
                    // Any integer, as ZooKeeper reads it; below 1 tick counts as none.
                    let ticks: i64 = value
                        .parse()
                        .map_err(|_| bad("expected a number of ticks"))?;
                    self.sync_limit_ticks = u32::try_from(ticks.max(0)).unwrap_or(u32::MAX);
                }
                // Keys of a replicated server with no meaning here (no peer joins by syncing,
                // and there is no reconfig yet), but harmless, so a real zoo.cfg still starts.
                "initLimit" | "standaloneEnabled" | "reconfigEnabled" => {
                    warnings.push(format!(
                        "{key} is ignored: the in-process ensemble's members share one state"
                    ));
                }
                other => match self.apply_section_key(other, value).map_err(|e| bad(&e))? {
                    KeyOutcome::Applied => {}
                    KeyOutcome::Warning(warning) => warnings.push(warning),
                    KeyOutcome::Unknown if strict => {
                        return Err(bad(&format!(
                            "unknown zoo.cfg key {other}{}",
                            keys::did_you_mean(other)
                        )));
                    }
                    KeyOutcome::Unknown => warnings.push(keys::unknown(other)),
                },
            }
        }
        if admin_on {
            self.admin_server = Some(SocketAddr::new(admin_ip, admin_port));
        }
        if metrics_on {
            self.metrics_server = Some(SocketAddr::new(metrics_ip, metrics_port));
        }
        // What the server started from, as the AdminServer shows it: the settings included.
        let mut initial = text.to_string();
        for setting in settings {
            if !initial.is_empty() && !initial.ends_with('\n') {
                initial.push('\n');
            }
            initial.push_str(setting);
            initial.push('\n');
        }
        self.initial_configuration = Some(initial);
        let tick = u64::from(self.core.tick_time_ms);
        let ticks = |n: u64| u32::try_from(tick * n).unwrap_or(u32::MAX);
        let min = min_timeout.unwrap_or_else(|| ticks(2));
        let max = max_timeout.unwrap_or_else(|| ticks(20));
        if min > max {
            return Err(format!(
                "minSessionTimeout ({min}) must not be larger than maxSessionTimeout ({max})"
            ));
        }
        self.core.min_session_timeout_ms = min;
        self.core.max_session_timeout_ms = max;
        Ok(warnings)
    }
}

#[cfg(test)]
mod tests;
