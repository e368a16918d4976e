//! A throw-away public key infrastructure for tests: one CA, a server certificate for
//! `localhost`/`127.0.0.1`/`::1`, two client certificates it signed, and one client certificate
//! from a second CA that the trust store does not hold. Written as PEM and PKCS#12 files with
//! stable names (docs/security.md, "Test certificates") so that real ZooKeeper, kazoo and the
//! Java client can be configured with the same files as Shepherd.
//!
//! Every key is a fresh ECDSA P-256 key, made at each call; nothing here is fit for production.

use std::fmt;
use std::path::Path;

use p12_keystore::{Certificate as P12Certificate, KeyStore, KeyStoreEntry, PrivateKeyChain};
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose, SanType,
};

/// The password of every PKCS#12 file [`TestPki::write_to`] writes.
pub const TEST_PASSWORD: &str = "shepherd";

/// The subject of [`TestPki::client`], as ZooKeeper's x509 provider names it.
pub const CLIENT_SUBJECT: &str = "CN=client,O=Shepherd";
/// The subject of [`TestPki::other_client`].
pub const OTHER_CLIENT_SUBJECT: &str = "CN=other,O=Shepherd";

/// One certificate with its private key, in PEM and DER.
#[derive(Clone)]
pub struct TestCert {
    /// The certificate, PEM (`-----BEGIN CERTIFICATE-----`).
    pub cert_pem: String,
    /// The certificate, DER.
    pub cert_der: Vec<u8>,
    /// The private key, PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).
    pub key_pem: String,
    /// The private key, PKCS#8 DER.
    pub key_der: Vec<u8>,
    /// A PKCS#12 file holding the key and the certificate, under [`TEST_PASSWORD`].
    pub p12: Vec<u8>,
}

impl fmt::Debug for TestCert {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Keys stay out of logs even in tests.
        f.debug_struct("TestCert").finish_non_exhaustive()
    }
}

/// A test CA and the certificates it signed; see the module docs.
#[derive(Clone, Debug)]
pub struct TestPki {
    /// The CA certificate (its key is not kept); `ca.pem`.
    pub ca_pem: String,
    /// The CA certificate, DER.
    pub ca_der: Vec<u8>,
    /// A PKCS#12 trust store holding the CA certificate as a trusted entry (with the attribute
    /// Java's `PKCS12KeyStore` needs to treat it as trusted); `truststore.p12`.
    pub truststore_p12: Vec<u8>,
    /// The server: `CN=localhost,O=Shepherd`, names `localhost`, `127.0.0.1`, `::1`.
    pub server: TestCert,
    /// A client, subject [`CLIENT_SUBJECT`].
    pub client: TestCert,
    /// A second client, subject [`OTHER_CLIENT_SUBJECT`].
    pub other_client: TestCert,
    /// A client certificate signed by another CA, which the trust store does not hold.
    pub untrusted_client: TestCert,
}

/// Why the test certificates could not be made or written.
#[derive(Debug, thiserror::Error)]
pub enum TestPkiError {
    /// Certificate generation failed.
    #[error("making a test certificate: {0}")]
    Generate(#[from] rcgen::Error),
    /// Writing a PKCS#12 file failed.
    #[error("writing a PKCS#12 file: {0}")]
    Pkcs12(#[from] p12_keystore::error::Error),
    /// Writing a file failed.
    #[error("writing {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        source: std::io::Error,
    },
}

fn name(common: &str) -> DistinguishedName {
    let mut dn = DistinguishedName::new();
    // rcgen writes the RDNs in insertion order: O first, so that Java's RFC 2253 form (most
    // specific first) reads `CN=...,O=Shepherd`.
    dn.push(DnType::OrganizationName, "Shepherd");
    dn.push(DnType::CommonName, common);
    dn
}

fn ca(common: &str) -> Result<(rcgen::Certificate, KeyPair), rcgen::Error> {
    let key = KeyPair::generate()?;
    let mut params = CertificateParams::new(Vec::<String>::new())?;
    params.distinguished_name = name(common);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let cert = params.self_signed(&key)?;
    Ok((cert, key))
}

fn leaf(
    common: &str,
    sans: Vec<SanType>,
    usage: ExtendedKeyUsagePurpose,
    issuer: &rcgen::Certificate,
    issuer_key: &KeyPair,
) -> Result<TestCert, TestPkiError> {
    let key = KeyPair::generate()?;
    let mut params = CertificateParams::new(Vec::<String>::new())?;
    params.distinguished_name = name(common);
    params.subject_alt_names = sans;
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = vec![usage];
    let cert = params.signed_by(&key, issuer, issuer_key)?;
    let cert_der = cert.der().to_vec();
    let key_der = key.serialize_der();
    let chain = [P12Certificate::from_der(&cert_der)?];
    let mut store = KeyStore::new();
    let local_id: Vec<u8> = common.as_bytes().to_vec();
    store.add_entry(
        common,
        KeyStoreEntry::PrivateKeyChain(PrivateKeyChain::new(key_der.clone(), local_id, chain)),
    );
    let p12 = store.writer(TEST_PASSWORD).write()?;
    Ok(TestCert {
        cert_pem: cert.pem(),
        cert_der,
        key_pem: key.serialize_pem(),
        key_der,
        p12,
    })
}

impl TestPki {
    /// Makes a fresh CA and certificates.
    ///
    /// # Errors
    /// [`TestPkiError`] if key generation or encoding fails (it does not, short of a broken OS
    /// random source).
    pub fn generate() -> Result<Self, TestPkiError> {
        let (ca_cert, ca_key) = ca("Shepherd Test CA")?;
        let (rogue_cert, rogue_key) = ca("Untrusted Test CA")?;
        let server_names = vec![
            SanType::DnsName("localhost".try_into()?),
            SanType::IpAddress([127, 0, 0, 1].into()),
            SanType::IpAddress(std::net::Ipv6Addr::LOCALHOST.into()),
        ];
        let server = leaf(
            "localhost",
            server_names,
            ExtendedKeyUsagePurpose::ServerAuth,
            &ca_cert,
            &ca_key,
        )?;
        let client_usage = || ExtendedKeyUsagePurpose::ClientAuth;
        let client = leaf("client", Vec::new(), client_usage(), &ca_cert, &ca_key)?;
        let other_client = leaf("other", Vec::new(), client_usage(), &ca_cert, &ca_key)?;
        let untrusted_client = leaf(
            "client",
            Vec::new(),
            client_usage(),
            &rogue_cert,
            &rogue_key,
        )?;
        let ca_der = ca_cert.der().to_vec();
        let mut trust = KeyStore::new();
        trust.add_entry(
            "ca",
            KeyStoreEntry::Certificate(P12Certificate::from_der(&ca_der)?),
        );
        let truststore_p12 = trust.writer(TEST_PASSWORD).write()?;
        Ok(Self {
            ca_pem: ca_cert.pem(),
            ca_der,
            truststore_p12,
            server,
            client,
            other_client,
            untrusted_client,
        })
    }

    /// The files [`write_to`](Self::write_to) writes, as (name, contents).
    pub fn files(&self) -> Vec<(&'static str, Vec<u8>)> {
        let mut files = vec![
            ("ca.pem", self.ca_pem.clone().into_bytes()),
            ("truststore.p12", self.truststore_p12.clone()),
        ];
        for (stem, cert) in [
            ("server", &self.server),
            ("client", &self.client),
            ("other", &self.other_client),
            ("untrusted", &self.untrusted_client),
        ] {
            let [pem, key, p12] = match stem {
                "server" => ["server.pem", "server-key.pem", "server.p12"],
                "client" => ["client.pem", "client-key.pem", "client.p12"],
                "other" => ["other.pem", "other-key.pem", "other.p12"],
                _ => ["untrusted.pem", "untrusted-key.pem", "untrusted.p12"],
            };
            files.push((pem, cert.cert_pem.clone().into_bytes()));
            files.push((key, cert.key_pem.clone().into_bytes()));
            files.push((p12, cert.p12.clone()));
        }
        // ZooKeeper's PEM key store is one file holding the key and the chain.
        for (name, cert) in [
            ("server-keystore.pem", &self.server),
            ("client-keystore.pem", &self.client),
        ] {
            files.push((
                name,
                format!("{}{}", cert.key_pem, cert.cert_pem).into_bytes(),
            ));
        }
        files
    }

    /// Writes every file into `dir` (created if missing), replacing files of the same names.
    ///
    /// # Errors
    /// [`TestPkiError::Io`] with the path that could not be written.
    pub fn write_to(&self, dir: &Path) -> Result<(), TestPkiError> {
        std::fs::create_dir_all(dir).map_err(|source| TestPkiError::Io {
            path: dir.display().to_string(),
            source,
        })?;
        for (file, bytes) in self.files() {
            let path = dir.join(file);
            std::fs::write(&path, bytes).map_err(|source| TestPkiError::Io {
                path: path.display().to_string(),
                source,
            })?;
        }
        Ok(())
    }
}
