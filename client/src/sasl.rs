//! SASL for the client: the credentials a session authenticates with after every handshake.

/// SASL credentials, fixed at build time.
#[derive(Clone)]
pub(crate) struct SaslOptions {
    pub(crate) username: String,
    pub(crate) password: String,
}

impl SaslOptions {
    pub(crate) fn digest_md5(username: &str, password: &str) -> Self {
        SaslOptions {
            username: username.to_owned(),
            password: password.to_owned(),
        }
    }
}

impl std::fmt::Debug for SaslOptions {
    // The password stays out of logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SaslOptions")
            .field("mechanism", &"DIGEST-MD5")
            .field("username", &self.username)
            .finish_non_exhaustive()
    }
}
