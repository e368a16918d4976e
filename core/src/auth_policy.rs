//! [`AuthPolicy`]: who may authenticate with SASL, and what a connection must have done before
//! anything else. Plain configuration, apart from the exchange that applies it (`sasl.rs`), so
//! that the core's configuration does not depend on the exchange.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

/// Who may authenticate with SASL and what a connection must have done before anything else.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct AuthPolicy {
    /// DIGEST-MD5 users and their passwords (a JAAS `Server` section's `user_<name>`
    /// entries). `None`: SASL is not configured, and a sasl request is answered with a null
    /// token (ZooKeeper without a JAAS login).
    pub sasl_users: Option<Arc<HashMap<String, String>>>,
    /// `superUser` (`zookeeper.superUser` and `zookeeper.superUser.*`): SASL users who also get
    /// `super`.
    pub super_users: Vec<String>,
    /// Whether the `sasl` ACL scheme is registered (`authProvider.N` naming
    /// `SASLAuthenticationProvider`, or a builder's SASL user): without it a `sasl:` ACL entry
    /// is InvalidACL and `sasl` identities are not expanded by `auth`.
    pub sasl_scheme: bool,
    /// `enforce.auth.schemes` when `enforce.auth.enabled` (or `sasl` alone for
    /// `sessionRequireClientSASLAuth`); empty when nothing is enforced.
    pub enforce_schemes: Vec<String>,
}

impl fmt::Debug for AuthPolicy {
    // Passwords stay out of logs and panics.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let users: Option<Vec<&String>> = self.sasl_users.as_ref().map(|u| u.keys().collect());
        f.debug_struct("AuthPolicy")
            .field("sasl_users", &users)
            .field("super_users", &self.super_users)
            .field("sasl_scheme", &self.sasl_scheme)
            .field("enforce_schemes", &self.enforce_schemes)
            .finish()
    }
}

impl AuthPolicy {
    /// `AuthenticationHelper.isSaslAuthRequired`: enforcement names `sasl`.
    pub(crate) fn sasl_required(&self) -> bool {
        self.enforce_schemes.iter().any(|s| s == "sasl")
    }
}
