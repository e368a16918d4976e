//! Server configuration: the embedded builder's settings and the subset of `zoo.cfg` that a
//! standalone, in-memory server can honour.
//!
//! A `zoo.cfg` key we do not know is reported back as a warning, never an error: configuration
//! files written for a real ensemble (dataDir, initLimit, server.N, …) must start a dev server.

use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use shepherd_protocol::{DEFAULT_MAX_BUFFER, FourLetterWord};

use crate::core::CoreConfig;

/// Which four-letter words a server answers (`4lw.commands.whitelist`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FourLetterWhitelist {
    /// `*`: every word.
    All,
    /// Only these; ZooKeeper's default is `srvr` alone.
    Only(HashSet<FourLetterWord>),
}

impl FourLetterWhitelist {
    /// ZooKeeper's default: `srvr` only.
    pub fn zookeeper_default() -> FourLetterWhitelist {
        FourLetterWhitelist::Only([FourLetterWord::Srvr].into_iter().collect())
    }

    /// Parses a comma-separated list; `*` means all. Unknown words are returned separately.
    pub fn parse(list: &str) -> (FourLetterWhitelist, Vec<String>) {
        let mut words = HashSet::new();
        let mut unknown = Vec::new();
        for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            if item == "*" {
                return (FourLetterWhitelist::All, unknown);
            }
            match FourLetterWord::from_name(item) {
                Some(word) => {
                    words.insert(word);
                }
                None => unknown.push(item.to_string()),
            }
        }
        (FourLetterWhitelist::Only(words), unknown)
    }

    /// Whether `word` may run.
    pub fn allows(&self, word: FourLetterWord) -> bool {
        match self {
            FourLetterWhitelist::All => true,
            FourLetterWhitelist::Only(words) => words.contains(&word),
        }
    }
}

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
    /// `4lw.commands.whitelist`.
    pub four_letter_words: FourLetterWhitelist,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            core: CoreConfig::default(),
            bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 0,
            max_buffer: DEFAULT_MAX_BUFFER,
            max_client_cnxns: 60,
            four_letter_words: FourLetterWhitelist::zookeeper_default(),
        }
    }
}

impl Config {
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
        let mut warnings = Vec::new();
        let mut min_timeout = None;
        let mut max_timeout = None;
        for (number, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let Some((key, value)) = line.split_once('=') else {
                warnings.push(format!("line {}: not key=value: {line}", number + 1));
                continue;
            };
            let (key, value) = (key.trim(), value.trim());
            let bad = |what: &str| format!("line {}: {key}={value}: {what}", number + 1);
            let num = || value.parse::<u64>().map_err(|_| bad("expected a number"));
            match key {
                "tickTime" => self.set_tick_time(Duration::from_millis(num()?)),
                "minSessionTimeout" => min_timeout = Some(num()?),
                "maxSessionTimeout" => max_timeout = Some(num()?),
                "clientPort" => {
                    self.port = value.parse().map_err(|_| bad("expected a port"))?;
                }
                "clientPortAddress" => {
                    self.bind = value.parse().map_err(|_| bad("expected an IP address"))?;
                }
                "maxClientCnxns" => self.max_client_cnxns = num()? as usize,
                "jute.maxbuffer" => self.max_buffer = num()? as usize,
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
                    self.core.container_max_per_minute = num()? as u32;
                }
                "znode.container.maxNeverUsedIntervalMs" => {
                    self.core.max_never_used_interval_ms = num()?;
                }
                // Keys of a persistent or replicated server: meaningless in memory, but
                // harmless, so a real zoo.cfg still starts.
                "dataDir"
                | "dataLogDir"
                | "initLimit"
                | "syncLimit"
                | "admin.enableServer"
                | "admin.serverPort"
                | "autopurge.snapRetainCount"
                | "autopurge.purgeInterval"
                | "standaloneEnabled"
                | "reconfigEnabled"
                | "preAllocSize"
                | "snapCount" => {
                    warnings.push(format!("{key} is ignored: Shepherd keeps state in memory"));
                }
                other => warnings.push(format!("unknown zoo.cfg key {other} ignored")),
            }
        }
        let tick = u64::from(self.core.tick_time_ms);
        self.core.min_session_timeout_ms = min_timeout.unwrap_or(tick * 2) as u32;
        self.core.max_session_timeout_ms = max_timeout.unwrap_or(tick * 20) as u32;
        Ok(warnings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zoo_cfg_known_and_unknown_keys() {
        let mut config = Config::default();
        let warnings = config
            .apply_zoo_cfg(
                "# sample\ntickTime=500\nclientPort=2181\ndataDir=/tmp/zk\nfoo.bar=1\n\
                 4lw.commands.whitelist=srvr, mntr,nope\n",
            )
            .unwrap();
        assert_eq!(config.core.tick_time_ms, 500);
        assert_eq!(config.core.min_session_timeout_ms, 1000);
        assert_eq!(config.core.max_session_timeout_ms, 10000);
        assert_eq!(config.port, 2181);
        assert!(config.four_letter_words.allows(FourLetterWord::Mntr));
        assert!(!config.four_letter_words.allows(FourLetterWord::Ruok));
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        assert!(config.apply_zoo_cfg("tickTime=abc").is_err());
    }
}
