//! ACLs as the commands read and write them: `scheme:id:perms`, comma-separated
//! (`world:anyone:cdrwa,digest:alice:HASH:r`), as zkCli's `setAcl` takes them, and the JSON
//! form `{"scheme", "id", "perms"}` of `getacl --json` and dump lines.
//!
//! Invariant: text and JSON name permissions by zkCli's letters (`c` create, `d` delete, `r`
//! read, `w` write, `a` admin), always in that order, so that what `getacl` prints can be
//! given back to `setacl` unchanged.

use serde::{Deserialize, Serialize};
use shepherd_client::{Acl, Id, perms};

/// The permission bits in zkCli's order, with their letters.
const LETTERS: [(char, i32); 5] = [
    ('c', perms::CREATE),
    ('d', perms::DELETE),
    ('r', perms::READ),
    ('w', perms::WRITE),
    ('a', perms::ADMIN),
];

/// One ACL entry, for JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AclJson {
    /// `world`, `digest`, `ip`, `auth`, `sasl`, `x509`…
    pub scheme: String,
    /// The id within the scheme (`anyone`, `alice:HASH`, `10.0.0.0/8`).
    pub id: String,
    /// Permission letters, `cdrwa` order.
    pub perms: String,
}

/// `cdrwa`-style letters for permission bits.
pub fn perms_text(bits: i32) -> String {
    LETTERS
        .iter()
        .filter(|(_, bit)| bits & bit != 0)
        .map(|(c, _)| *c)
        .collect()
}

/// Permission bits for `cdrwa`-style letters.
///
/// # Errors
/// A message naming a letter that is not one of `cdrwa`.
pub fn parse_perms(text: &str) -> Result<i32, String> {
    text.chars().try_fold(0, |bits, c| {
        LETTERS
            .iter()
            .find(|(l, _)| *l == c)
            .map(|(_, bit)| bits | bit)
            .ok_or_else(|| format!("unknown permission {c:?} in {text:?} (use cdrwa)"))
    })
}

impl From<&Acl> for AclJson {
    fn from(acl: &Acl) -> AclJson {
        AclJson {
            scheme: acl.id.scheme.clone(),
            id: acl.id.id.clone(),
            perms: perms_text(acl.perms),
        }
    }
}

impl AclJson {
    /// The wire ACL.
    ///
    /// # Errors
    /// A message for bad permission letters.
    pub fn to_acl(&self) -> Result<Acl, String> {
        Ok(Acl {
            perms: parse_perms(&self.perms)?,
            id: Id::new(self.scheme.clone(), self.id.clone()),
        })
    }
}

/// `scheme:id:perms` for one entry.
pub fn acl_text(acl: &Acl) -> String {
    format!("{}:{}:{}", acl.id.scheme, acl.id.id, perms_text(acl.perms))
}

/// Parses `scheme:id:perms[,scheme:id:perms…]`. The id is everything between the first and the
/// last colon, so that digest (`user:hash`) and IPv6 ids keep theirs.
///
/// # Errors
/// A message naming the entry that is not `scheme:id:perms` or has bad permission letters.
pub fn parse_acl(text: &str) -> Result<Vec<Acl>, String> {
    text.split(',')
        .map(|entry| {
            let (scheme, rest) = entry
                .split_once(':')
                .ok_or_else(|| format!("ACL entry {entry:?} is not scheme:id:perms"))?;
            let (id, letters) = rest
                .rsplit_once(':')
                .ok_or_else(|| format!("ACL entry {entry:?} is not scheme:id:perms"))?;
            if scheme.is_empty() {
                return Err(format!("ACL entry {entry:?} has no scheme"));
            }
            Ok(Acl {
                perms: parse_perms(letters)?,
                id: Id::new(scheme, id),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acls_parse_and_print_back() {
        let text = "world:anyone:cdrwa,digest:alice:x1y2=:r,ip:10.0.0.0/8:rw,auth::cdrwa";
        let acl = parse_acl(text).unwrap();
        assert_eq!(acl.len(), 4);
        assert_eq!(acl[1].id, Id::new("digest", "alice:x1y2="));
        assert_eq!(acl[1].perms, perms::READ);
        assert_eq!(acl[3].id, Id::new("auth", ""));
        let back: Vec<String> = acl.iter().map(acl_text).collect();
        assert_eq!(back.join(","), text);
        assert_eq!(perms_text(perms::ALL), "cdrwa");
        assert_eq!(perms_text(0), "");
    }

    #[test]
    fn bad_acls_are_refused_with_a_reason() {
        for bad in ["world", "world:anyone", ":x:r", "world:anyone:rq"] {
            assert!(parse_acl(bad).is_err(), "{bad}");
        }
    }
}
