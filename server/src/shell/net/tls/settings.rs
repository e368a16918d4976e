//! From settings to a rustls `ServerConfig`: the key material (zoo.cfg's key and trust stores, or
//! the embedded builder's [`ServerTls`](crate::config::ServerTls)), the client-certificate policy,
//! the protocol versions and the cipher suites. Built once, at start; every problem is a
//! [`TlsError`].
//!
//! Mapping (docs/security.md, "TLS"): `ssl.protocol`/`ssl.enabledProtocols` name Java's protocols,
//! of which `TLSv1.2` and `TLSv1.3` exist in rustls (older ones are warned about and left out);
//! `ssl.ciphersuites` names suites by their IANA names, which are Java's, and those rustls lacks
//! (CBC, RSA key exchange) are warned about and left out.

use std::sync::Arc;

use rustls::crypto::CryptoProvider;
use rustls::pki_types::CertificateDer;
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig, SupportedProtocolVersion};

use crate::config::{ClientAuth, TlsSettings};
use crate::shell::net::tls::store::{self, KeyMaterial, TlsError};

/// Maps Java protocol names to rustls versions; unknown or unsupported ones go to `warnings`.
fn versions(
    settings: &TlsSettings,
    warnings: &mut Vec<String>,
) -> Result<Vec<&'static SupportedProtocolVersion>, TlsError> {
    let protocol = settings.protocol.as_deref().unwrap_or("TLSv1.2");
    let names = match &settings.enabled_protocols {
        Some(names) => names.clone(),
        // ZooKeeper's SSLContextAndOptions: the context's protocol alone; "TLS" is a context
        // that speaks every version.
        None if protocol.eq_ignore_ascii_case("TLS") => vec!["TLSv1.3".into(), "TLSv1.2".into()],
        None => vec![protocol.to_string()],
    };
    let mut out = Vec::new();
    for name in &names {
        let version: &'static SupportedProtocolVersion = match name.as_str() {
            "TLSv1.3" => &rustls::version::TLS13,
            "TLSv1.2" => &rustls::version::TLS12,
            other => {
                warnings.push(format!(
                    "ssl.enabledProtocols: {other} is not offered (only TLSv1.2 and TLSv1.3)"
                ));
                continue;
            }
        };
        if !out
            .iter()
            .any(|v: &&SupportedProtocolVersion| v.version == version.version)
        {
            out.push(version);
        }
    }
    if out.is_empty() {
        return Err(TlsError::new(
            "ssl.enabledProtocols",
            format!("none of {names:?} is TLSv1.2 or TLSv1.3"),
        ));
    }
    Ok(out)
}

/// The suite's IANA name, as Java names it (rustls calls TLS 1.3 suites `TLS13_...`).
fn iana_name(suite: &rustls::SupportedCipherSuite) -> String {
    let name = format!("{:?}", suite.suite());
    match name.strip_prefix("TLS13_") {
        Some(rest) => format!("TLS_{rest}"),
        None => name,
    }
}

fn provider(
    settings: &TlsSettings,
    warnings: &mut Vec<String>,
) -> Result<CryptoProvider, TlsError> {
    let mut provider = rustls::crypto::ring::default_provider();
    if let Some(wanted) = &settings.cipher_suites {
        let mut kept = Vec::new();
        for name in wanted {
            match provider
                .cipher_suites
                .iter()
                .find(|s| iana_name(s) == *name)
            {
                Some(suite) => kept.push(*suite),
                None => warnings.push(format!("ssl.ciphersuites: {name} is not offered")),
            }
        }
        if kept.is_empty() {
            return Err(TlsError::new(
                "ssl.ciphersuites",
                "none of the listed suites is offered; rustls has the AES-GCM and \
                 ChaCha20-Poly1305 suites (e.g. TLS_AES_128_GCM_SHA256, \
                 TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)",
            ));
        }
        provider.cipher_suites = kept;
    }
    Ok(provider)
}

fn key_material(
    settings: &TlsSettings,
) -> Result<(KeyMaterial, Vec<CertificateDer<'static>>), TlsError> {
    match &settings.embedded {
        Some(tls) => {
            let key = store::private_key_from_pem(&tls.key_pem)
                .and_then(|key| Ok((store::certs_from_pem(&tls.cert_chain_pem)?, key)))
                .map_err(|reason| TlsError::new("ServerTls", reason))?;
            let roots = match &tls.client_ca_pem {
                Some(pem) => store::certs_from_pem(pem)
                    .map_err(|reason| TlsError::new("ServerTls client CA", reason))?,
                None => Vec::new(),
            };
            Ok((key, roots))
        }
        None => Ok((
            store::load_key_store(&settings.key_store)?,
            store::load_trust_store(&settings.trust_store)?,
        )),
    }
}

/// A built configuration and the warnings about settings that did not map.
pub type Built = (Arc<ServerConfig>, Vec<String>);

/// Builds the rustls configuration, or `None` when TLS is off. Warnings (settings that do not
/// map) are returned to be logged.
///
/// # Errors
/// [`TlsError`]: a file that cannot be read or is not what its type says, a JKS store (with how
/// to convert it), no protocol or suite left, or client auth asked for without a trust store.
pub fn server_config(settings: &TlsSettings) -> Result<Option<Built>, TlsError> {
    if !settings.is_enabled() {
        return Ok(None);
    }
    let mut warnings = Vec::new();
    let ((chain, key), roots) = key_material(settings)?;
    let versions = versions(settings, &mut warnings)?;
    let provider = Arc::new(provider(settings, &mut warnings)?);
    let configured = settings
        .embedded
        .as_ref()
        .map_or(settings.client_auth, |tls| tls.client_auth);
    // ZooKeeper's default is `need`, checked against the JVM's trust store when none is given.
    // There is no such store here, so a zoo.cfg that leaves both unset is refused at start (TLS
    // fails closed) rather than served without asking for certificates. The embedded builder's
    // key material without client CAs is the caller's explicit choice of no client auth.
    let auth = match (configured, roots.is_empty()) {
        (Some(ClientAuth::None), _) => ClientAuth::None,
        (None, true) if settings.embedded.is_some() => ClientAuth::None,
        (None, true) => {
            return Err(TlsError::new(
                "ssl.clientAuth",
                "defaults to need, as on ZooKeeper, which needs ssl.trustStore.location (the CAs \
                 that vouch for client certificates): set it, or set ssl.clientAuth=none to \
                 serve TLS without client certificates"
                    .to_owned(),
            ));
        }
        (Some(mode), true) => {
            return Err(TlsError::new(
                "ssl.clientAuth",
                format!(
                    "{} needs ssl.trustStore.location (the CAs that vouch for client \
                     certificates)",
                    if mode == ClientAuth::Need {
                        "need"
                    } else {
                        "want"
                    }
                ),
            ));
        }
        (Some(mode), false) => mode,
        (None, false) => ClientAuth::Need,
    };
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&versions)
        .map_err(|e| TlsError::new("ssl.enabledProtocols", e.to_string()))?;
    let builder = if auth == ClientAuth::None {
        builder.with_no_client_auth()
    } else {
        let mut store = RootCertStore::empty();
        for root in roots {
            store
                .add(root)
                .map_err(|e| TlsError::new("ssl.trustStore.location", e.to_string()))?;
        }
        let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(store), provider);
        let verifier = if auth == ClientAuth::Want {
            verifier.allow_unauthenticated()
        } else {
            verifier
        };
        let verifier = verifier
            .build()
            .map_err(|e| TlsError::new("ssl.trustStore.location", e.to_string()))?;
        builder.with_client_cert_verifier(verifier)
    };
    let config = builder.with_single_cert(chain, key).map_err(|e| {
        TlsError::new(
            "ssl.keyStore.location",
            format!("the key does not fit: {e}"),
        )
    })?;
    Ok(Some((Arc::new(config), warnings)))
}

#[cfg(test)]
mod tests {
    use rustls::ProtocolVersion;

    use super::*;

    fn mapped(settings: &TlsSettings, warnings: &mut Vec<String>) -> Vec<ProtocolVersion> {
        versions(settings, warnings)
            .expect("a version")
            .iter()
            .map(|v| v.version)
            .collect()
    }

    #[test]
    fn protocols_map_from_java_names() {
        let mut warnings = Vec::new();
        // ZooKeeper 3.8's default context protocol is TLSv1.2, and alone it is all it speaks.
        let default = TlsSettings::default();
        assert_eq!(mapped(&default, &mut warnings), [ProtocolVersion::TLSv1_2]);
        // "TLS" is a context that speaks every version.
        let any = TlsSettings {
            protocol: Some("TLS".into()),
            ..TlsSettings::default()
        };
        assert_eq!(
            mapped(&any, &mut warnings),
            [ProtocolVersion::TLSv1_3, ProtocolVersion::TLSv1_2]
        );
        assert!(warnings.is_empty(), "{warnings:?}");
        // enabledProtocols wins over protocol; a version rustls lacks is warned about.
        let listed = TlsSettings {
            protocol: Some("TLSv1.2".into()),
            enabled_protocols: Some(vec!["TLSv1.1".into(), "TLSv1.3".into()]),
            ..TlsSettings::default()
        };
        assert_eq!(mapped(&listed, &mut warnings), [ProtocolVersion::TLSv1_3]);
        assert!(
            warnings.len() == 1 && warnings[0].contains("TLSv1.1"),
            "{warnings:?}"
        );
        // Nothing usable is an error that names the key.
        let none = TlsSettings {
            enabled_protocols: Some(vec!["SSLv3".into()]),
            ..TlsSettings::default()
        };
        let error = versions(&none, &mut Vec::new()).expect_err("no version");
        assert!(
            error.to_string().contains("ssl.enabledProtocols"),
            "{error}"
        );
    }

    #[test]
    fn cipher_suites_are_picked_by_their_java_names() {
        let mut warnings = Vec::new();
        let listed = TlsSettings {
            cipher_suites: Some(vec![
                "TLS_AES_128_GCM_SHA256".into(),
                "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384".into(),
                "TLS_RSA_WITH_AES_128_CBC_SHA".into(),
            ]),
            ..TlsSettings::default()
        };
        let kept: Vec<String> = provider(&listed, &mut warnings)
            .expect("a provider")
            .cipher_suites
            .iter()
            .map(iana_name)
            .collect();
        assert_eq!(
            kept,
            [
                "TLS_AES_128_GCM_SHA256",
                "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"
            ]
        );
        assert!(
            warnings.len() == 1 && warnings[0].contains("TLS_RSA_WITH_AES_128_CBC_SHA"),
            "{warnings:?}"
        );
        // Without the key, rustls's own list; with nothing usable, an error naming the key.
        let all = provider(&TlsSettings::default(), &mut Vec::new()).expect("a provider");
        assert!(all.cipher_suites.len() > 2);
        let unusable = TlsSettings {
            cipher_suites: Some(vec!["TLS_RSA_WITH_AES_128_CBC_SHA".into()]),
            ..TlsSettings::default()
        };
        let error = provider(&unusable, &mut Vec::new()).expect_err("no suite");
        assert!(error.to_string().contains("ssl.ciphersuites"), "{error}");
    }
}
