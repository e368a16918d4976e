//! TLS and SASL for the client commands, from the same inputs zkCli takes: a client
//! configuration file with ZooKeeper's client keys (`zkCli.sh -client-configuration FILE`:
//! `zookeeper.client.secure`, `zookeeper.ssl.keyStore.*`, `zookeeper.ssl.trustStore.*`), a
//! JAAS file's `Client` section (`-Djava.security.auth.login.config`), or flags for the same
//! things. Key and trust stores are read by the server's own reader, so every format the server
//! takes (JKS, PKCS#12, PEM) works here too.
//!
//! Invariant: nothing is half-secured. TLS is on when any TLS input is given, and then it needs
//! trust roots (there is no JVM trust store to fall back on) or the command stops with a usage
//! error naming what to give; a SASL credential that the server refuses fails the command.

use std::path::{Path, PathBuf};

use clap::Args;
use shepherd_client::ClientBuilder;
use shepherd_server::config::{StoreFile, StoreType, jaas::Jaas, properties};
use shepherd_server::tls::{KeyMaterial, key_from_pem, load_key_store, load_trust_store};

use super::error::CliError;

/// The TLS and SASL options of every client command.
#[derive(Args, Debug, Clone, Default)]
pub struct Security {
    /// Trust the CA certificate(s) in this file (PEM, PKCS#12 or JKS) and speak TLS.
    #[arg(long = "tls-ca", value_name = "FILE")]
    pub tls_ca: Option<PathBuf>,
    /// Present this client certificate: a PEM chain (with its key, or see --tls-key), or a
    /// PKCS#12 or JKS key store.
    #[arg(long = "tls-cert", value_name = "FILE")]
    pub tls_cert: Option<PathBuf>,
    /// The PEM private key of a PEM --tls-cert.
    #[arg(long = "tls-key", value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// The password of PKCS#12 and JKS stores given by flag.
    #[arg(long = "tls-password", value_name = "PASSWORD")]
    pub tls_password: Option<String>,
    /// Verify the server's certificate against this name instead of the host of --server.
    #[arg(long = "tls-server-name", value_name = "NAME")]
    pub tls_server_name: Option<String>,
    /// A client configuration file as zkCli takes it (-client-configuration):
    /// zookeeper.client.secure, zookeeper.ssl.keyStore.*, zookeeper.ssl.trustStore.*,
    /// zookeeper.sasl.clientconfig.
    #[arg(long = "client-config", value_name = "FILE")]
    pub client_config: Option<PathBuf>,
    /// A JAAS file whose Client section (or the one zookeeper.sasl.clientconfig names) has the
    /// DigestLoginModule's username and password: SASL DIGEST-MD5, as zkCli with
    /// -Djava.security.auth.login.config.
    #[arg(long, value_name = "FILE")]
    pub jaas: Option<PathBuf>,
}

/// What the client configuration file says, flags not yet applied.
#[derive(Debug, Default)]
struct ClientConfig {
    secure: bool,
    key_store: StoreFile,
    trust_store: StoreFile,
    sasl_section: Option<String>,
    jaas: Option<PathBuf>,
}

impl ClientConfig {
    fn read(path: &Path) -> Result<ClientConfig, CliError> {
        let usage = |why: String| CliError::Usage(format!("{}: {why}", path.display()));
        let bytes = std::fs::read(path).map_err(|e| usage(e.to_string()))?;
        let parsed = properties::parse(&properties::latin1(&bytes)).map_err(usage)?;
        let mut config = ClientConfig::default();
        for entry in parsed.entries {
            let (key, value) = (entry.key.as_str(), entry.value);
            let store_type =
                |v: &str| StoreType::parse(v).map_err(|e| usage(format!("{key}: {e}")));
            match key.strip_prefix("zookeeper.").unwrap_or(key) {
                "client.secure" => config.secure = value.eq_ignore_ascii_case("true"),
                "ssl.keyStore.location" => config.key_store.location = Some(value.into()),
                "ssl.keyStore.password" => config.key_store.password = Some(value),
                "ssl.keyStore.type" => config.key_store.store_type = store_type(&value)?,
                "ssl.trustStore.location" => config.trust_store.location = Some(value.into()),
                "ssl.trustStore.password" => config.trust_store.password = Some(value),
                "ssl.trustStore.type" => config.trust_store.store_type = store_type(&value)?,
                "sasl.clientconfig" => config.sasl_section = Some(value),
                "java.security.auth.login.config" => config.jaas = Some(value.into()),
                // The Java client's socket class: TLS needs Netty there, not here.
                "clientCnxnSocket" | "ssl.hostnameVerification" | "sasl.client" => {}
                other => eprintln!(
                    "warning: {}: {other} is not read by the shepherd client",
                    path.display()
                ),
            }
        }
        Ok(config)
    }
}

/// A flag's store file, with the type from its name or content.
fn flag_store(path: &Path, password: Option<&String>) -> StoreFile {
    StoreFile {
        location: Some(path.to_owned()),
        password: password.cloned(),
        store_type: None,
    }
}

impl Security {
    /// Adds TLS and SASL DIGEST-MD5 to the builder as the options say.
    ///
    /// # Errors
    /// [`CliError::Usage`] for a file that cannot be read or used, TLS without trust roots, or
    /// a JAAS section without a username and password.
    pub fn apply(&self, mut builder: ClientBuilder) -> Result<ClientBuilder, CliError> {
        let mut config = match &self.client_config {
            Some(path) => ClientConfig::read(path)?,
            None => ClientConfig::default(),
        };
        let password = self.tls_password.as_ref();
        if let Some(ca) = &self.tls_ca {
            config.trust_store = flag_store(ca, password);
        }
        let tls_error = |e: shepherd_server::tls::TlsError| CliError::Usage(format!("TLS: {e}"));
        let identity = match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => {
                let mut pem = read(cert)?;
                pem.extend(read(key)?);
                Some(pem_identity(&pem, cert)?)
            }
            (Some(cert), None) => {
                Some(load_key_store(&flag_store(cert, password)).map_err(tls_error)?)
            }
            _ if config.key_store.location.is_some() => {
                Some(load_key_store(&config.key_store).map_err(tls_error)?)
            }
            _ => None,
        };
        let tls = config.secure
            || self.tls_ca.is_some()
            || identity.is_some()
            || self.tls_server_name.is_some();
        if tls {
            let roots = load_trust_store(&config.trust_store).map_err(tls_error)?;
            if roots.is_empty() {
                return Err(CliError::Usage(
                    "TLS needs the CA that signed the server's certificate: give --tls-ca FILE \
                     or zookeeper.ssl.trustStore.location in --client-config"
                        .into(),
                ));
            }
            builder = builder.tls_ca_der(roots);
            if let Some((chain, key)) = &identity {
                builder = builder.tls_identity_der(chain.clone(), key);
            }
            if let Some(name) = &self.tls_server_name {
                builder = builder.tls_server_name(name);
            }
        }
        if let Some(jaas) = self.jaas.as_ref().or(config.jaas.as_ref()) {
            let section = config.sasl_section.as_deref().unwrap_or("Client");
            let (user, password) = jaas_credentials(jaas, section)?;
            builder = builder.sasl_digest_md5(&user, &password);
        }
        Ok(builder)
    }
}

fn read(path: &Path) -> Result<Vec<u8>, CliError> {
    std::fs::read(path).map_err(|e| CliError::Usage(format!("{}: {e}", path.display())))
}

/// A PEM chain and key given as two files, read as one PEM key store.
fn pem_identity(pem: &[u8], cert: &Path) -> Result<KeyMaterial, CliError> {
    key_from_pem(pem).map_err(|e| CliError::Usage(format!("TLS: {}: {e}", cert.display())))
}

/// The username and password of a JAAS section's DigestLoginModule entry.
fn jaas_credentials(path: &Path, section: &str) -> Result<(String, String), CliError> {
    let usage = |why: String| CliError::Usage(format!("{}: {why}", path.display()));
    let jaas = Jaas::read(path).map_err(usage)?;
    let entries = jaas
        .sections
        .get(section)
        .ok_or_else(|| usage(format!("no {section} section")))?;
    let option = |name: &str| {
        entries
            .iter()
            .flat_map(|e| e.options.iter())
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    match (option("username"), option("password")) {
        (Some(user), Some(password)) => Ok((user, password)),
        _ => Err(usage(format!(
            "the {section} section needs username=\"…\" and password=\"…\""
        ))),
    }
}
