//! The `zoo.cfg` keys this server reads, for one purpose: when a key is unknown, name the known
//! key it most resembles (`tickTme` → `tickTime`), as a typo in a configuration file would
//! otherwise be ignored in silence. The list only feeds suggestions; which keys are applied is
//! decided where each is read, and a test keeps every name here recognised there.

/// Every key some part of the configuration reads (prefix families such as `superUser.N` and
/// `authProvider.N` by their first member).
pub(crate) const KNOWN: &[&str] = &[
    "4lw.commands.whitelist",
    "SASLAuthenticationProvider.superPassword",
    "X509AuthenticationProvider.superUser",
    "admin.enableServer",
    "admin.serverAddress",
    "admin.serverPort",
    "allowSaslFailedClients",
    "authProvider.1",
    "autopurge.purgeInterval",
    "autopurge.snapRetainCount",
    "client.portUnification",
    "clientPort",
    "clientPortAddress",
    "dataDir",
    "dataLogDir",
    "enforce.auth.enabled",
    "enforce.auth.schemes",
    "extendedTypesEnabled",
    "forceSync",
    "initLimit",
    "java.security.auth.login.config",
    "jute.maxbuffer",
    "letAnySaslUserDoX",
    "maxClientCnxns",
    "maxCnxns",
    "maxSessionTimeout",
    "metricsProvider.className",
    "metricsProvider.exportJvmInfo",
    "metricsProvider.httpHost",
    "metricsProvider.httpPort",
    "minSessionTimeout",
    "netty.server.outstandingHandshake.limit",
    "preAllocSize",
    "reconfigEnabled",
    "sasl.serverconfig",
    "secureClientPort",
    "secureClientPortAddress",
    "serverCnxnFactory",
    "sessionRequireClientSASLAuth",
    "snapCount",
    "snapSizeLimitInKb",
    "snapshot.trust.empty",
    "ssl.authProvider",
    "ssl.ciphersuites",
    "ssl.clientAuth",
    "ssl.clientHostnameVerification",
    "ssl.enabledProtocols",
    "ssl.hostnameVerification",
    "ssl.keyStore.location",
    "ssl.keyStore.password",
    "ssl.keyStore.type",
    "ssl.protocol",
    "ssl.trustStore.location",
    "ssl.trustStore.password",
    "ssl.trustStore.type",
    "standaloneEnabled",
    "superDigest",
    "superUser",
    "syncLimit",
    "tickTime",
    "znode.container.checkIntervalMs",
    "znode.container.maxNeverUsedIntervalMs",
    "znode.container.maxPerMinute",
];

/// The warning for an unknown key, with the closest known key when one is close enough to be
/// a typo: the same letters in another case, or a few edits apart for the key's length.
pub(crate) fn unknown(key: &str) -> String {
    format!("unknown zoo.cfg key {key} ignored{}", did_you_mean(key))
}

/// `; did you mean KNOWN?` when a known key is close to `key`, else nothing.
pub(crate) fn did_you_mean(key: &str) -> String {
    suggestion(key)
        .map(|known| format!("; did you mean {known}?"))
        .unwrap_or_default()
}

fn suggestion(key: &str) -> Option<&'static str> {
    let lower = key.to_ascii_lowercase();
    KNOWN
        .iter()
        .map(|known| {
            let distance = strsim::damerau_levenshtein(&lower, &known.to_ascii_lowercase());
            (distance, *known)
        })
        .filter(|(distance, _)| *distance <= (key.len() / 6).clamp(1, 3))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, known)| known)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;

    #[test]
    fn every_listed_key_is_read_somewhere() {
        for key in KNOWN {
            // A known key either applies, warns about itself, or refuses a bad value; it is
            // never reported as unknown.
            if let Ok(warnings) = Config::default().apply_zoo_cfg(&format!("{key}=x")) {
                let unknown = warnings
                    .iter()
                    .find(|w| w.starts_with("unknown zoo.cfg key"));
                assert!(unknown.is_none(), "{key}: {unknown:?}");
            }
        }
    }

    #[test]
    fn typos_get_the_key_they_resemble_and_strangers_get_none() {
        assert_eq!(suggestion("tickTme"), Some("tickTime"));
        assert_eq!(suggestion("ticktime"), Some("tickTime"));
        assert_eq!(suggestion("clientport"), Some("clientPort"));
        assert_eq!(suggestion("maxClientCnxn"), Some("maxClientCnxns"));
        assert_eq!(
            suggestion("ssl.keystore.location"),
            Some("ssl.keyStore.location")
        );
        assert_eq!(suggestion("server.1"), None);
        assert_eq!(suggestion("foo.bar"), None);
        assert_eq!(
            unknown("tickTme"),
            "unknown zoo.cfg key tickTme ignored; did you mean tickTime?"
        );
    }
}
