//! TLS for client connections, as ZooKeeper 3.8 reads it from `zoo.cfg`: `secureClientPort`,
//! the `ssl.*` keys and `client.portUnification` (docs/security.md, "TLS").

use super::durability::KeyOutcome;

/// How client connections are secured with TLS. The default serves plaintext only.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsSettings {}

impl TlsSettings {
    /// Applies one `zoo.cfg` key, if it is one of ours.
    pub(crate) fn apply_key(&mut self, key: &str, _value: &str) -> Result<KeyOutcome, String> {
        let _ = key;
        Ok(KeyOutcome::Unknown)
    }
}
