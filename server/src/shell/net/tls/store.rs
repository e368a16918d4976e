//! Reading key material: a key store (the server's certificate chain and private key) and a
//! trust store (the CAs that vouch for client certificates), from JKS, PKCS#12 or PEM files,
//! every format ZooKeeper 3.8 reads but BCFKS (a FIPS provider's, refused with how to convert
//! it). The type is `ssl.*.type`, else the file name's extension, else the file's content.
//!
//! Every failure is a [`TlsError`] naming the file and the reason, for `shepherd serve` to
//! print before it exits.

use std::path::Path;

use p12_keystore::{KeyStore, KeyStoreEntry};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::config::{StoreFile, StoreType};

/// Why TLS could not be set up: the file (or `zoo.cfg` key) and the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what}: {reason}")]
pub struct TlsError {
    /// The file or key at fault.
    pub what: String,
    /// What is wrong with it.
    pub reason: String,
}

impl TlsError {
    pub(crate) fn new(what: impl Into<String>, reason: impl Into<String>) -> TlsError {
        TlsError {
            what: what.into(),
            reason: reason.into(),
        }
    }
}

/// A certificate chain (leaf first) and its private key.
pub type KeyMaterial = (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>);

/// JKS's magic number (`0xFEEDFEED`), to name the format even when the file is called `.p12`.
const JKS_MAGIC: [u8; 4] = [0xFE, 0xED, 0xFE, 0xED];

fn read(path: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|e| TlsError::new(path.display().to_string(), e.to_string()))
}

/// The store's type: as configured, else by the file name (as ZooKeeper's
/// `KeyStoreFileType.fromPropertyValueOrFileName`), else by the content. A JKS file is read as
/// JKS whatever it is called: Java's PKCS12 key store reads JKS files too.
fn store_type(
    file: &StoreFile,
    path: &Path,
    bytes: &[u8],
    key: &str,
) -> Result<StoreType, TlsError> {
    if bytes.starts_with(&JKS_MAGIC) {
        return Ok(StoreType::Jks);
    }
    let by_content = || {
        if bytes.windows(11).any(|w| w == b"-----BEGIN ") {
            Some(StoreType::Pem)
        } else if bytes.first() == Some(&0x30) {
            // A DER SEQUENCE: PKCS#12's PFX.
            Some(StoreType::Pkcs12)
        } else {
            None
        }
    };
    file.store_type
        .or_else(|| StoreType::from_file_name(path))
        .or_else(by_content)
        .ok_or_else(|| {
            TlsError::new(
                path.display().to_string(),
                format!(
                    "cannot tell the store type from the file name (.jks, .p12 or .pem) or its \
                     content; set ssl.{key}.type to JKS, PKCS12 or PEM"
                ),
            )
        })
}

fn refuse_bcfks(kind: StoreType, path: &Path) -> Result<(), TlsError> {
    if kind == StoreType::Bcfks {
        return Err(TlsError::new(
            path.display().to_string(),
            "BCFKS stores are not read; export the entries to PKCS12, JKS or PEM",
        ));
    }
    Ok(())
}

/// Reads a key store file (`ssl.keyStore.*`, or a client's `zookeeper.ssl.keyStore.*`).
///
/// # Errors
/// The file (or the missing location) and the reason.
pub fn load_key_store(file: &StoreFile) -> Result<KeyMaterial, TlsError> {
    let Some(path) = &file.location else {
        return Err(TlsError::new(
            "ssl.keyStore.location",
            "TLS is on (secureClientPort or client.portUnification) but no key store is given",
        ));
    };
    let bytes = read(path)?;
    let kind = store_type(file, path, &bytes, "keyStore")?;
    refuse_bcfks(kind, path)?;
    let what = path.display().to_string();
    let password = file.password.as_deref().unwrap_or("");
    match kind {
        StoreType::Jks => key_from_jks(&bytes, password),
        StoreType::Pkcs12 => key_from_p12(&bytes, password),
        _ => key_from_pem(&bytes),
    }
    .map_err(|reason| TlsError::new(what, reason))
}

/// Reads a trust store file (`ssl.trustStore.*`): the certificates it holds; none without a
/// location.
///
/// # Errors
/// The file and the reason.
pub fn load_trust_store(file: &StoreFile) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let Some(path) = &file.location else {
        return Ok(Vec::new());
    };
    let bytes = read(path)?;
    let kind = store_type(file, path, &bytes, "trustStore")?;
    refuse_bcfks(kind, path)?;
    let what = path.display().to_string();
    let password = file.password.as_deref().unwrap_or("");
    match kind {
        StoreType::Jks => certs_from_jks(&bytes, password),
        StoreType::Pkcs12 => certs_from_p12(&bytes, password),
        _ => certs_from_pem(&bytes),
    }
    .map_err(|reason| TlsError::new(what, reason))
}

/// The certificates of PEM text, in order.
pub(crate) fn certs_from_pem(bytes: &[u8]) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_slice_iter(bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("not PEM certificates: {e}"))?;
    if certs.is_empty() {
        return Err("no certificate (-----BEGIN CERTIFICATE-----) in it".into());
    }
    Ok(certs)
}

/// The certificate chain and the private key (PKCS#8, PKCS#1 RSA or SEC1 EC) of PEM text.
///
/// # Errors
/// Why the text holds no usable chain or key.
pub fn key_from_pem(bytes: &[u8]) -> Result<KeyMaterial, String> {
    let key = private_key_from_pem(bytes)?;
    Ok((certs_from_pem(bytes)?, key))
}

/// The private key (PKCS#8, PKCS#1 RSA or SEC1 EC) of PEM text.
pub(crate) fn private_key_from_pem(bytes: &[u8]) -> Result<PrivateKeyDer<'static>, String> {
    if bytes.windows(9).any(|w| w == b"ENCRYPTED") {
        return Err(
            "encrypted PEM keys are not read; decrypt the key (`openssl pkcs8 -in \
                    key.pem -out plain.pem`) or use a PKCS12 key store"
                .into(),
        );
    }
    PrivateKeyDer::from_pem_slice(bytes)
        .map_err(|e| format!("no private key (PKCS#8, RSA or EC) in it: {e}"))
}

fn open_p12(bytes: &[u8], password: &str) -> Result<KeyStore, String> {
    KeyStore::from_pkcs12(bytes, password)
        .map_err(|e| format!("not a PKCS12 store this password opens: {e}"))
}

/// The first private key entry of a PKCS#12 store, with its chain.
pub(crate) fn key_from_p12(bytes: &[u8], password: &str) -> Result<KeyMaterial, String> {
    let store = open_p12(bytes, password)?;
    let (_, chain) = store
        .private_key_chain()
        .ok_or("no private key entry in the PKCS12 store")?;
    let certs: Vec<_> = chain
        .chain()
        .iter()
        .map(|c| CertificateDer::from(c.as_der().to_vec()))
        .collect();
    if certs.is_empty() {
        return Err("the private key entry has no certificate".into());
    }
    let key = PrivateKeyDer::try_from(chain.key().to_vec())
        .map_err(|e| format!("the private key is not PKCS#8: {e}"))?;
    Ok((certs, key))
}

/// Every certificate of a PKCS#12 store: its trusted entries and its key entries' chains, as
/// Java's trust manager takes them from a key store.
pub(crate) fn certs_from_p12(
    bytes: &[u8],
    password: &str,
) -> Result<Vec<CertificateDer<'static>>, String> {
    let store = open_p12(bytes, password)?;
    let mut certs = Vec::new();
    for (_, entry) in store.entries() {
        match entry {
            KeyStoreEntry::Certificate(cert) => certs.push(cert.as_der().to_vec().into()),
            KeyStoreEntry::PrivateKeyChain(chain) => {
                certs.extend(chain.chain().iter().map(|c| c.as_der().to_vec().into()));
            }
            KeyStoreEntry::Secret(_) => {}
        }
    }
    if certs.is_empty() {
        return Err("no certificate in the PKCS12 store".into());
    }
    Ok(certs)
}

/// A JKS store, its integrity checked with the password (as Java's `KeyStore.load` does).
fn open_jks(bytes: &[u8], password: &str) -> Result<jks::KeyStore, String> {
    let mut store = jks::KeyStore::new();
    store
        .load(bytes, password.as_bytes())
        .map_err(|e| format!("not a JKS store this password opens: {e}"))?;
    Ok(store)
}

/// The first private key entry of a JKS store (by alias), decrypted with the store's password
/// as ZooKeeper's `X509Util` does, with its chain.
pub(crate) fn key_from_jks(bytes: &[u8], password: &str) -> Result<KeyMaterial, String> {
    let store = open_jks(bytes, password)?;
    let mut aliases = store.aliases();
    aliases.sort();
    let alias = aliases
        .into_iter()
        .find(|alias| store.is_private_key_entry(alias))
        .ok_or("no private key entry in the JKS store")?;
    let entry = store
        .get_private_key_entry(&alias, password.as_bytes())
        .map_err(|e| format!("the key entry {alias:?} does not open with the password: {e}"))?;
    let certs: Vec<_> = entry
        .certificate_chain
        .iter()
        .map(|c| CertificateDer::from(c.content.clone()))
        .collect();
    if certs.is_empty() {
        return Err(format!("the key entry {alias:?} has no certificate"));
    }
    let key = PrivateKeyDer::try_from(entry.private_key)
        .map_err(|e| format!("the private key of {alias:?} is not PKCS#8: {e}"))?;
    Ok((certs, key))
}

/// Every certificate of a JKS store: its trusted entries and its key entries' chains.
pub(crate) fn certs_from_jks(
    bytes: &[u8],
    password: &str,
) -> Result<Vec<CertificateDer<'static>>, String> {
    let store = open_jks(bytes, password)?;
    let mut aliases = store.aliases();
    aliases.sort();
    let mut certs = Vec::new();
    for alias in aliases {
        if let Ok(entry) = store.get_trusted_certificate_entry(&alias) {
            certs.push(entry.certificate.content.into());
        } else if let Ok(chain) = store.get_private_key_entry_certificate_chain(&alias) {
            certs.extend(chain.into_iter().map(|c| CertificateDer::from(c.content)));
        }
    }
    if certs.is_empty() {
        return Err("no certificate in the JKS store".into());
    }
    Ok(certs)
}
