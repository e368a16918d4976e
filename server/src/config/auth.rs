//! Client authentication beyond `digest`: SASL DIGEST-MD5 users (a JAAS file, or the
//! builder's), `superUser`, the `authProvider.*` keys and `enforce.auth.*`, as ZooKeeper 3.8
//! reads them (docs/security.md, "SASL DIGEST-MD5").
//!
//! ZooKeeper turns a `zoo.cfg` key it does not know into the system property
//! `zookeeper.<key>`, which is how `authProvider.1=…`, `superUser=…` and `enforce.auth.enabled=…`
//! in `zoo.cfg` reach it; each key is accepted here with or without that prefix. The JAAS file is
//! a JVM flag on ZooKeeper (`-Djava.security.auth.login.config=FILE`); here it is
//! `shepherd serve --jaas FILE`, [`ServerBuilder::jaas_file`](crate::ServerBuilder::jaas_file),
//! or the same key in `zoo.cfg`.
//!
//! Invariant: settings are only collected here; [`AuthSettings::resolve`] reads the JAAS file
//! and checks the whole at start, so that every error surfaces before the server serves.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use super::durability::KeyOutcome;
use super::jaas::Jaas;
use super::values::{comma_list, java_bool};
use crate::core::AuthPolicy;

/// ZooKeeper's authentication provider classes, by the scheme each registers.
const PROVIDERS: [(&str, &str); 4] = [
    (
        "sasl",
        "org.apache.zookeeper.server.auth.SASLAuthenticationProvider",
    ),
    (
        "x509",
        "org.apache.zookeeper.server.auth.X509AuthenticationProvider",
    ),
    (
        "digest",
        "org.apache.zookeeper.server.auth.DigestAuthenticationProvider",
    ),
    (
        "ip",
        "org.apache.zookeeper.server.auth.IPAuthenticationProvider",
    ),
];

/// Which authentication a server offers and requires. The default: digest and ip only, nothing
/// enforced, no SASL.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct AuthSettings {
    /// The JAAS file whose `Server` section lists the DIGEST-MD5 users.
    pub jaas_file: Option<PathBuf>,
    /// The JAAS section read (`zookeeper.sasl.serverconfig`); `Server` when `None`.
    pub login_context: Option<String>,
    /// DIGEST-MD5 users given directly (the builder's), added to the JAAS file's.
    pub sasl_users: BTreeMap<String, String>,
    /// `superUser` / `superUser.*`: SASL user names that also get `super`.
    pub super_users: Vec<String>,
    /// `SASLAuthenticationProvider.superPassword`: the password of SASL user `super`.
    pub super_password: Option<String>,
    /// The extra schemes registered by `authProvider.N` (`sasl`, `x509`).
    pub providers: Vec<String>,
    /// `enforce.auth.enabled`.
    pub enforce_enabled: bool,
    /// `enforce.auth.schemes`.
    pub enforce_schemes: Vec<String>,
    /// `sessionRequireClientSASLAuth` (3.6's switch): enforces `sasl`, overriding the two above.
    pub session_require_sasl: bool,
}

impl std::fmt::Debug for AuthSettings {
    // Passwords stay out of logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthSettings")
            .field("jaas_file", &self.jaas_file)
            .field("login_context", &self.login_context)
            .field("sasl_users", &self.sasl_users.keys().collect::<Vec<_>>())
            .field("super_users", &self.super_users)
            .field("providers", &self.providers)
            .field("enforce_enabled", &self.enforce_enabled)
            .field("enforce_schemes", &self.enforce_schemes)
            .field("session_require_sasl", &self.session_require_sasl)
            .finish_non_exhaustive()
    }
}

impl AuthSettings {
    /// Registers a provider's scheme once.
    pub fn add_provider(&mut self, scheme: &str) {
        if !self.providers.iter().any(|p| p == scheme) {
            self.providers.push(scheme.to_string());
        }
    }

    /// Applies one `zoo.cfg` key, if it is one of ours.
    pub(crate) fn apply_key(&mut self, key: &str, value: &str) -> Result<KeyOutcome, String> {
        if key == "java.security.auth.login.config" {
            self.jaas_file = Some(PathBuf::from(value.trim()));
            return Ok(KeyOutcome::Applied);
        }
        let key = key.strip_prefix("zookeeper.").unwrap_or(key);
        match key {
            "sasl.serverconfig" => self.login_context = Some(value.trim().to_string()),
            "superUser" => self.super_users.push(value.trim().to_string()),
            k if k.starts_with("superUser.") => self.super_users.push(value.trim().to_string()),
            "SASLAuthenticationProvider.superPassword" => {
                self.super_password = Some(value.to_string());
            }
            k if k.starts_with("authProvider.") => {
                let class = value.trim();
                return Ok(match PROVIDERS.iter().find(|(_, c)| *c == class) {
                    Some(("digest" | "ip", _)) => KeyOutcome::Applied,
                    Some((scheme, _)) => {
                        self.add_provider(scheme);
                        KeyOutcome::Applied
                    }
                    None => KeyOutcome::Warning(format!(
                        "{key}: authentication provider {class} is not supported and is ignored \
                         (known: SASL, X509, Digest, IP)"
                    )),
                });
            }
            "enforce.auth.enabled" => self.enforce_enabled = java_bool(value),
            "enforce.auth.schemes" => {
                self.enforce_schemes = comma_list(value);
            }
            "sessionRequireClientSASLAuth" => self.session_require_sasl = java_bool(value),
            "allowSaslFailedClients" | "letAnySaslUserDoX" => {
                return Ok(KeyOutcome::Warning(format!(
                    "{key} is not supported and is ignored"
                )));
            }
            _ => return Ok(KeyOutcome::Unknown),
        }
        Ok(KeyOutcome::Applied)
    }

    /// The core's policy: the JAAS file read, users merged, enforcement checked.
    ///
    /// # Errors
    /// As ZooKeeper refuses to start: a JAAS file that cannot be read or parsed, or has no
    /// `Server` section (or the one `sasl.serverconfig` names); `enforce.auth.enabled` without
    /// schemes; an enforced scheme whose provider is not registered.
    pub fn resolve(&self) -> Result<AuthPolicy, String> {
        let mut users = BTreeMap::new();
        if let Some(path) = &self.jaas_file {
            let section = self.login_context.as_deref().unwrap_or("Server");
            let jaas = Jaas::read(path)?;
            users = jaas
                .users(section)
                .map_err(|e| format!("JAAS file {}: {e}", path.display()))?;
        }
        users.extend(self.sasl_users.iter().map(|(u, p)| (u.clone(), p.clone())));
        if let Some(password) = &self.super_password
            && let Some(entry) = users.get_mut("super")
        {
            // ZooKeeper's callback handler gives user `super` this password instead.
            entry.clone_from(password);
        }
        let configured = self.jaas_file.is_some() || !self.sasl_users.is_empty();
        let enforce_schemes = if self.session_require_sasl {
            vec!["sasl".to_string()]
        } else if self.enforce_enabled {
            if self.enforce_schemes.is_empty() {
                return Err(
                    "enforce.auth.enabled is true: enforce.auth.schemes must be configured".into(),
                );
            }
            self.enforce_schemes.clone()
        } else {
            Vec::new()
        };
        for scheme in &enforce_schemes {
            // x509 is always registered here: TLS connections carry it (docs/security.md).
            let known = ["digest", "ip", "x509"].contains(&scheme.as_str())
                || self.providers.contains(scheme);
            if !known {
                return Err(format!(
                    "authentication scheme {scheme} is not available (enforce.auth.schemes); \
                     register its provider with authProvider.N"
                ));
            }
        }
        Ok(AuthPolicy {
            sasl_users: configured.then(|| Arc::new(users.into_iter().collect())),
            super_users: self.super_users.clone(),
            sasl_scheme: self.providers.iter().any(|p| p == "sasl"),
            enforce_schemes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(pairs: &[(&str, &str)]) -> (AuthSettings, Vec<String>) {
        let mut s = AuthSettings::default();
        let mut warnings = Vec::new();
        for (k, v) in pairs {
            match s.apply_key(k, v).unwrap() {
                KeyOutcome::Applied => {}
                KeyOutcome::Warning(w) => warnings.push(w),
                KeyOutcome::Unknown => panic!("{k} unknown"),
            }
        }
        (s, warnings)
    }

    #[test]
    fn zoo_cfg_keys() {
        let (s, warnings) = apply(&[
            ("authProvider.1", PROVIDERS[0].1),
            (
                "zookeeper.authProvider.2",
                "org.apache.zookeeper.server.auth.IPAuthenticationProvider",
            ),
            ("authProvider.3", "com.example.Custom"),
            ("superUser", "admin"),
            ("zookeeper.superUser.2", "root"),
            ("enforce.auth.enabled", "TRUE"),
            ("enforce.auth.schemes", "sasl, digest"),
        ]);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("com.example.Custom"));
        let policy = s.resolve().unwrap();
        assert!(policy.sasl_scheme);
        assert_eq!(policy.super_users, ["admin", "root"]);
        assert_eq!(policy.enforce_schemes, ["sasl", "digest"]);
        assert_eq!(policy.sasl_users, None, "no JAAS file, no SASL");
        assert_eq!(
            AuthSettings::default().apply_key("tickTime", "1").unwrap(),
            KeyOutcome::Unknown
        );
    }

    #[test]
    fn enforcement_checks() {
        let (s, _) = apply(&[("enforce.auth.enabled", "true")]);
        assert!(s.resolve().unwrap_err().contains("enforce.auth.schemes"));
        let (s, _) = apply(&[
            ("enforce.auth.enabled", "true"),
            ("enforce.auth.schemes", "sasl"),
        ]);
        assert!(s.resolve().unwrap_err().contains("sasl is not available"));
        let (s, _) = apply(&[
            ("enforce.auth.enabled", "true"),
            ("enforce.auth.schemes", "x509"),
        ]);
        assert_eq!(s.resolve().unwrap().enforce_schemes, ["x509"]);
        let (s, _) = apply(&[
            ("enforce.auth.enabled", "false"),
            ("enforce.auth.schemes", "sasl"),
        ]);
        assert!(s.resolve().unwrap().enforce_schemes.is_empty());
        let (s, _) = apply(&[
            ("sessionRequireClientSASLAuth", "true"),
            ("authProvider.1", PROVIDERS[0].1),
        ]);
        assert_eq!(s.resolve().unwrap().enforce_schemes, ["sasl"]);
    }

    #[test]
    fn jaas_file_users_and_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("jaas.conf");
        std::fs::write(
            &path,
            "Server { org.apache.zookeeper.server.auth.DigestLoginModule required \
             user_bob=\"pw\" user_super=\"old\"; };\nOther { m required user_x=y; };",
        )
        .unwrap();
        let (mut s, _) = apply(&[
            ("java.security.auth.login.config", path.to_str().unwrap()),
            ("SASLAuthenticationProvider.superPassword", "new"),
        ]);
        s.sasl_users.insert("carol".into(), "c".into());
        let users = s.resolve().unwrap().sasl_users.unwrap();
        assert_eq!(users.get("bob").map(String::as_str), Some("pw"));
        assert_eq!(users.get("super").map(String::as_str), Some("new"));
        assert_eq!(users.get("carol").map(String::as_str), Some("c"));
        s.apply_key("zookeeper.sasl.serverconfig", "Missing")
            .unwrap();
        let err = s.resolve().unwrap_err();
        assert!(
            err.contains("no 'Missing' section") && err.contains("jaas.conf"),
            "{err}"
        );
        s.jaas_file = Some(dir.path().join("absent.conf"));
        assert!(s.resolve().unwrap_err().contains("absent.conf"));
    }
}
