//! The options every client command shares ([`Conn`]: server, credentials, JSON, timeout) and
//! the session a command runs in.
//!
//! Invariant: one command, one session: opened with the command's credentials before its first
//! request, closed (its ephemerals deleted) when the command ends, whether it succeeded or not.
//! Credentials therefore last for the command alone, as zkCli's `addauth` lasts for its
//! session.

use std::time::Duration;

use clap::Args;
use shepherd_client::Client;

use super::error::{AtPath, CliError};
use super::security::Security;

/// Options of every client command.
#[derive(Args, Debug, Clone)]
pub struct Conn {
    /// The ZooKeeper to talk to: `host:port[,host:port…][/chroot]`.
    #[arg(
        long,
        value_name = "HOST:PORT[/CHROOT]",
        default_value = "127.0.0.1:2181"
    )]
    pub server: String,
    /// A credential for this command's session, as `scheme:auth` (`digest:alice:secret`), or
    /// `sasl:user:password` for SASL DIGEST-MD5. Repeatable. It lasts as long as the command,
    /// as zkCli's addauth lasts for its session.
    #[arg(long = "auth", value_name = "SCHEME:AUTH")]
    pub auth: Vec<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Give up connecting after this many milliseconds.
    #[arg(long = "connect-timeout", value_name = "MS", default_value_t = 5000)]
    pub connect_timeout_ms: u64,
    /// TLS and SASL.
    #[command(flatten)]
    pub security: Security,
}

/// The session timeout asked for: short, since nothing survives the command anyway, but long
/// enough for `watch` and `create --hold` to ride out a brief disconnection.
const SESSION_TIMEOUT: Duration = Duration::from_secs(10);

/// Splits `scheme:auth` at its first colon.
///
/// # Errors
/// [`CliError::Usage`] without a colon or with an empty scheme.
pub fn parse_auth(text: &str) -> Result<(&str, &str), CliError> {
    match text.split_once(':') {
        Some((scheme, auth)) if !scheme.is_empty() => Ok((scheme, auth)),
        _ => Err(CliError::Usage(format!(
            "--auth {text:?} is not scheme:auth (e.g. digest:alice:secret)"
        ))),
    }
}

impl Conn {
    /// Opens the command's session, its credentials sent before anything else.
    ///
    /// # Errors
    /// [`CliError::Usage`] for a bad `--auth` or connect string; [`CliError::Keeper`] when no
    /// server could be reached in time (`ConnectionLoss`) or a credential was refused
    /// (`AuthFailed`).
    pub async fn connect(&self) -> Result<Client, CliError> {
        let mut builder = Client::builder()
            .session_timeout(SESSION_TIMEOUT)
            .connect_timeout(Duration::from_millis(self.connect_timeout_ms.max(1)));
        for auth in &self.auth {
            builder = match parse_auth(auth)? {
                ("sasl", credential) => {
                    let (user, password) = credential.split_once(':').ok_or_else(|| {
                        CliError::Usage(format!("--auth {auth:?} is not sasl:user:password"))
                    })?;
                    builder.sasl_digest_md5(user, password)
                }
                (scheme, credential) => builder.auth(scheme, credential.as_bytes()),
            };
        }
        builder = self.security.apply(builder)?;
        let client = builder.connect(&self.server).await.at(&self.server)?;
        // A refused credential ends the session right after the handshake; a cheap request
        // makes sure the user hears of it before the command's own requests fail with it.
        if !self.auth.is_empty() {
            client.exists("/").await.at(&self.server)?;
        }
        Ok(client)
    }
}
