//! Client authentication beyond `digest`: SASL DIGEST-MD5 users, `superUser`, the
//! `authProvider.*` keys and `enforce.auth.*`, as ZooKeeper 3.8 reads them
//! (docs/security.md, "SASL").

use super::durability::KeyOutcome;

/// Which authentication a server offers and requires. The default: digest and ip only, nothing
/// enforced.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthSettings {}

impl AuthSettings {
    /// Applies one `zoo.cfg` key, if it is one of ours.
    pub(crate) fn apply_key(&mut self, key: &str, _value: &str) -> Result<KeyOutcome, String> {
        let _ = key;
        Ok(KeyOutcome::Unknown)
    }
}
