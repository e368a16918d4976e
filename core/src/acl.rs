//! ACLs and authentication identities (docs/protocol.md §12): digest hashing, `ip` matching, the ACL fixup that
//! create and setACL apply, permission checks, getACL masking and whoAmI.
//!
//! Invariants: a connection's identities are a set in insertion order that always starts with
//! its `ip:<address>` identity and never holds more than [`MAX_IDENTITIES`]; a stored ACL has
//! been through `fixup`, so it is non-empty and holds only `world:anyone`, `digest`, `ip`,
//! `x509` and (when its provider is registered) `sasl` entries, `auth` expanded at write time.
//! `fixup` is linear in the ACL's length because a create may carry tens of thousands of
//! entries, and the core must not spend a quadratic scan on one request.

use std::collections::HashSet;
use std::net::IpAddr;
use std::sync::Arc;

use shepherd_protocol::{Acl, ClientInfo, Id, perms};

use super::java_int;

/// Standard base64 with `=` padding, as Java's `Base64.getEncoder()`.
pub(crate) fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The digest identity for a `user:password` credential (docs/protocol.md §12.4): the user (everything before
/// the first colon) plus base64(SHA-1 of the *whole* credential). Any bytes are accepted, as
/// the Java server does (`new String(authData)`, invalid UTF-8 replaced).
pub fn digest_identity(credential: &[u8]) -> String {
    let credential = String::from_utf8_lossy(credential);
    let user = credential.split(':').next().unwrap_or("");
    let hash = sha1_smol::Sha1::from(credential.as_bytes())
        .digest()
        .bytes();
    format!("{user}:{}", base64(&hash))
}

/// Java's `String.split(":")`: trailing empty parts are dropped.
fn java_split_colon(s: &str) -> Vec<&str> {
    let mut parts: Vec<&str> = s.split(':').collect();
    while parts.len() > 1 && parts.last() == Some(&"") {
        parts.pop();
    }
    parts
}

/// Parses an address the way ZooKeeper 3.8's `IPAuthenticationProvider.addr2Bytes` does
/// (docs/protocol.md §12.3): IPv4 only (its IPv6 parser is a TODO that returns null), four
/// `.`-separated parts, each an `Integer.parseInt` number in 0..=255, so `+127` and `0127` pass.
fn addr_bytes(s: &str) -> Option<[u8; 4]> {
    let mut bytes = [0u8; 4];
    let mut parts = s.split('.');
    for byte in &mut bytes {
        *byte = u8::try_from(java_int::parse_int(parts.next()?)?).ok()?;
    }
    parts.next().is_none().then_some(bytes)
}

/// Splits `addr[/bits]` (at the first `/`) as `isValid` and `matches` do: the mask is an
/// `Integer.parseInt` number in 0..=32, so `/-0` and `/+8` pass.
fn ip_expr(expr: &str) -> Option<([u8; 4], u32)> {
    let (addr, bits) = match expr.split_once('/') {
        Some((a, b)) => (a, Some(b)),
        None => (expr, None),
    };
    let bytes = addr_bytes(addr)?;
    let bits = match bits {
        Some(b) => u32::try_from(java_int::parse_int(b)?)
            .ok()
            .filter(|&b| b <= 32)?,
        None => 32,
    };
    Some((bytes, bits))
}

fn masked(mut bytes: [u8; 4], bits: u32) -> [u8; 4] {
    for (i, byte) in bytes.iter_mut().enumerate() {
        let start = i as u32 * 8;
        if bits <= start {
            *byte = 0;
        } else if bits < start + 8 {
            *byte &= 0xffu8 << (start + 8 - bits);
        }
    }
    bytes
}

/// Whether the client address `id` (as in an `ip` identity) lies within the ACL expression.
/// An IPv6 client matches no `ip` entry, as on ZooKeeper 3.8.
fn ip_matches(id: &str, expr: &str) -> bool {
    let Some((acl, bits)) = ip_expr(expr) else {
        return false;
    };
    let Some(remote) = addr_bytes(id) else {
        return false;
    };
    masked(remote, bits) == masked(acl, bits)
}

/// The text Java's `InetAddress.getHostAddress()` gives, which is what `ip` identities hold:
/// IPv6 as eight uncompressed hex groups (`0:0:0:0:0:0:0:1`), IPv4-mapped addresses as IPv4.
pub(crate) fn java_host_address(addr: IpAddr) -> String {
    match addr {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let groups: Vec<String> = v6.segments().iter().map(|g| format!("{g:x}")).collect();
                groups.join(":")
            }
        },
    }
}

/// Whether a scheme's identities count as "authenticated" for `auth` expansion (docs/protocol.md §12.3): digest
/// does, ip does not, and `super` has no provider at all; `sasl` does when its provider is
/// registered (ZooKeeper 3.8 `SASLAuthenticationProvider.isAuthenticated`).
fn is_authenticated_scheme(scheme: &str, sasl_scheme: bool) -> bool {
    // x509: `X509AuthenticationProvider.isAuthenticated` is true.
    scheme == "digest" || scheme == "x509" || (sasl_scheme && scheme == "sasl")
}

/// Whether `id` is a valid `sasl` ACL id: ZooKeeper 3.8's `SASLAuthenticationProvider.isValid`
/// accepts what `KerberosName` parses, `name[/host]@REALM` or any name without `@`.
fn sasl_id_valid(id: &str) -> bool {
    let Some((principal, realm)) = id.split_once('@') else {
        return true;
    };
    let no_separators = |s: &str| !s.contains(['/', '@']);
    let (name, host) = principal.split_once('/').unwrap_or((principal, ""));
    no_separators(name) && no_separators(host) && no_separators(realm)
}

/// [`fixup_with`] with only the default providers (digest, ip) registered.
#[cfg(test)]
pub(crate) fn fixup(acl: &[Acl], identities: &[Id]) -> Option<Vec<Acl>> {
    fixup_with(acl, identities, false)
}

/// `PrepRequestProcessor.fixupACL` (docs/protocol.md §12.3): dedup, reject empty, validate each entry, expand
/// `auth` into the caller's authenticated identities. `None` means InvalidACL.
///
/// Duplicates go as in ZooKeeper 3.8's `removeDuplicates` (the first of equal entries stays, in
/// the order given), but through a hash set: its list scan is quadratic, and a 1 MB request
/// carries up to about 80 000 entries. Entries made by `auth` expansion are not de-duplicated, as
/// ZooKeeper adds them after its dedup.
///
/// `sasl_scheme`: whether the `sasl` provider is registered (`authProvider.N`), which makes
/// `sasl:` entries valid and `sasl` identities count for `auth`.
pub(crate) fn fixup_with(acl: &[Acl], identities: &[Id], sasl_scheme: bool) -> Option<Vec<Acl>> {
    if acl.is_empty() {
        return None;
    }
    // One pass: duplicates are skipped as they are met, and the first invalid entry ends the
    // pass, so a huge list with an early invalid entry costs nothing more (any invalid entry
    // makes the whole list InvalidACL, whatever its place).
    let mut seen: HashSet<(i32, &str, &str)> = HashSet::with_capacity(acl.len());
    let mut out = Vec::with_capacity(acl.len());
    for entry in acl {
        if !seen.insert((entry.perms, entry.id.scheme.as_str(), entry.id.id.as_str())) {
            continue;
        }
        let id = &entry.id;
        match id.scheme.as_str() {
            "world" if id.id == "anyone" => out.push(entry.clone()),
            "auth" => {
                let before = out.len();
                for ident in identities
                    .iter()
                    .filter(|i| is_authenticated_scheme(&i.scheme, sasl_scheme))
                {
                    out.push(Acl {
                        perms: entry.perms,
                        id: ident.clone(),
                    });
                }
                if out.len() == before {
                    return None;
                }
            }
            "digest" if java_split_colon(&id.id).len() == 2 => out.push(entry.clone()),
            "ip" if ip_expr(&id.id).is_some() => out.push(entry.clone()),
            "sasl" if sasl_scheme && sasl_id_valid(&id.id) => out.push(entry.clone()),
            // `X509AuthenticationProvider.isValid`: what `X500Principal` parses; here a
            // non-empty `attribute=value` list. ZooKeeper registers the provider only on a
            // server with TLS; this one accepts x509 entries on any (docs/security.md).
            "x509" if id.id.contains('=') => out.push(entry.clone()),
            // `world:<other>`, `super`, and schemes with no provider are invalid.
            _ => return None,
        }
    }
    Some(out)
}

/// Whether these identities include `super`, which passes every check (docs/protocol.md §12.1).
pub(crate) fn is_super(identities: &[Id]) -> bool {
    identities.iter().any(|i| i.scheme == "super")
}

/// `checkACL` (docs/protocol.md §12.1): an empty ACL or a super identity passes; otherwise some entry with one of
/// the wanted bits must match an identity.
pub(crate) fn allows(acl: &[Acl], identities: &[Id], wanted: i32) -> bool {
    if acl.is_empty() || is_super(identities) {
        return true;
    }
    acl.iter()
        .filter(|entry| entry.perms & wanted != 0)
        .any(|entry| {
            let id = &entry.id;
            match id.scheme.as_str() {
                "world" => id.id == "anyone",
                "digest" => identities
                    .iter()
                    .any(|i| i.scheme == "digest" && i.id == id.id),
                "ip" => identities
                    .iter()
                    .any(|i| i.scheme == "ip" && ip_matches(&i.id, &id.id)),
                // SASLAuthenticationProvider.matches: equality, and a user named `super`
                // matches every sasl entry. A sasl identity exists only where SASL is
                // configured, so the provider check is left to fixup.
                "sasl" => identities
                    .iter()
                    .any(|i| i.scheme == "sasl" && (i.id == id.id || i.id == "super")),
                // X509AuthenticationProvider.matches: the certificate's subject, exactly (its
                // superUser also holds `super`, which passed above).
                "x509" => identities
                    .iter()
                    .any(|i| i.scheme == "x509" && i.id == id.id),
                _ => false,
            }
        })
}

/// The ACL getACL returns: digest ids masked to `user:x` unless the caller has ADMIN (docs/protocol.md §6.6).
pub(crate) fn for_get_acl(acl: &[Acl], identities: &[Id]) -> Vec<Acl> {
    if allows(acl, identities, perms::ADMIN) {
        return acl.to_vec();
    }
    acl.iter()
        .map(|entry| {
            let mut entry = entry.clone();
            if entry.id.scheme == "digest" {
                // Java: id.replaceAll(":.*", ":x"), from the first colon on.
                if let Some(i) = entry.id.id.find(':') {
                    entry.id.id.replace_range(i.., ":x");
                }
            }
            entry
        })
        .collect()
}

/// whoAmI's view of identities (docs/protocol.md §6.10): digest ids show just the user, super shows `""`.
pub(crate) fn who_am_i(identities: &[Id]) -> Vec<ClientInfo> {
    identities
        .iter()
        .map(|i| ClientInfo {
            auth_scheme: i.scheme.clone(),
            user: match i.scheme.as_str() {
                "digest" => i.id.split(':').next().unwrap_or("").to_string(),
                "super" => String::new(),
                _ => i.id.clone(),
            },
        })
        .collect()
}

/// The most identities one connection holds, its `ip` identity included (docs/protocol.md
/// §12.5). ZooKeeper 3.8 keeps a connection's identities in an unbounded set, so a client that
/// authenticates in a loop with fresh credentials grows the server's memory and the cost of
/// every permission check without end. Real clients hold one or two (a digest, perhaps
/// `super`); 16 leaves room for any honest use and keeps each check a short scan.
pub const MAX_IDENTITIES: usize = 16;

/// A connection's identities: a set in insertion order, at most [`MAX_IDENTITIES`] long.
///
/// Shared behind an `Arc`, so that a request borrows them for its whole execution with a
/// reference-count bump instead of a copy, while the core is free to change other connections;
/// they change only on a successful auth, which copies them only if a request still holds
/// them (it never does: requests run one at a time).
#[derive(Debug, Clone)]
pub(crate) struct Identities(Arc<Vec<Id>>);

impl Identities {
    /// A new connection's identities: its `ip:<address>` alone.
    pub fn new(ip: Id) -> Identities {
        Identities(Arc::new(vec![ip]))
    }

    /// A shared handle on the identities as they are now.
    pub fn share(&self) -> Arc<Vec<Id>> {
        Arc::clone(&self.0)
    }

    /// The identities, for checks.
    pub fn as_slice(&self) -> &[Id] {
        &self.0
    }

    /// Adds those of `ids` the connection does not already have, all or none: false, with
    /// nothing added, when that would pass [`MAX_IDENTITIES`]. A scan of at most 16 entries
    /// is cheaper than hashing each id, and keeps the insertion order whoAmI reports.
    pub fn add(&mut self, ids: &[Id]) -> bool {
        let current = self.0.as_slice();
        let mut new: Vec<&Id> = Vec::new();
        for id in ids {
            if !current.contains(id) && !new.contains(&id) {
                new.push(id);
            }
        }
        if new.is_empty() {
            return true;
        }
        if current.len() + new.len() > MAX_IDENTITIES {
            return false;
        }
        let all = Arc::make_mut(&mut self.0);
        all.extend(new.into_iter().cloned());
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acl(perms: i32, scheme: &str, id: &str) -> Acl {
        Acl {
            perms,
            id: Id::new(scheme, id),
        }
    }

    #[test]
    fn digest_matches_zookeeper() {
        assert_eq!(
            digest_identity(b"alice:secret"),
            "alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E="
        );
        assert_eq!(
            digest_identity(b"super:test"),
            "super:D/InIHSb7yEEbrWz8b9l71RjZJU="
        );
        assert!(digest_identity(b"nocolon").starts_with("nocolon:"));
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
    }

    #[test]
    fn fixup_rules() {
        let ip = vec![Id::new("ip", "127.0.0.1")];
        assert_eq!(fixup(&[], &ip), None);
        assert_eq!(fixup(&[acl(31, "world", "someone")], &ip), None);
        assert_eq!(fixup(&[acl(31, "auth", "")], &ip), None);
        assert_eq!(fixup(&[acl(31, "super", "x")], &ip), None);
        assert_eq!(fixup(&[acl(31, "digest", "nocolon")], &ip), None);
        assert_eq!(fixup(&[acl(31, "digest", "user:")], &ip), None);
        assert_eq!(fixup(&[acl(31, "digest", "a:b:c")], &ip), None);
        assert_eq!(fixup(&[acl(31, "ip", "10.0.0.0/33")], &ip), None);
        assert!(fixup(&[acl(31, "ip", "10.0.0.0/8")], &ip).is_some());
        // ZooKeeper 3.8 knows IPv4 only.
        assert_eq!(fixup(&[acl(31, "ip", "::1/128")], &ip), None);
        assert_eq!(
            fixup(&[acl(0, "world", "anyone"), acl(0, "world", "anyone")], &ip)
                .unwrap()
                .len(),
            1
        );
        let mut ids = ip.clone();
        ids.push(Id::new("digest", "alice:h"));
        ids.push(Id::new("super", ""));
        assert_eq!(
            fixup(&[acl(31, "auth", "")], &ids),
            Some(vec![acl(31, "digest", "alice:h")])
        );
    }

    #[test]
    fn sasl_scheme() {
        let ids = vec![Id::new("ip", "127.0.0.1"), Id::new("sasl", "bob")];
        // Without the provider, sasl entries are invalid and sasl identities do not expand.
        assert_eq!(fixup_with(&[acl(31, "sasl", "bob")], &ids, false), None);
        assert_eq!(fixup_with(&[acl(31, "auth", "")], &ids, false), None);
        assert_eq!(
            fixup_with(&[acl(31, "auth", "")], &ids, true),
            Some(vec![acl(31, "sasl", "bob")])
        );
        for valid in ["bob", "zk/host@EXAMPLE.COM", "a@R", "a/b/c"] {
            assert!(
                fixup_with(&[acl(31, "sasl", valid)], &ids, true).is_some(),
                "{valid}"
            );
        }
        for invalid in ["a@b@c", "a/b/c@R"] {
            assert_eq!(
                fixup_with(&[acl(31, "sasl", invalid)], &ids, true),
                None,
                "{invalid}"
            );
        }
        assert!(allows(&[acl(1, "sasl", "bob")], &ids, perms::READ));
        assert!(!allows(&[acl(1, "sasl", "alice")], &ids, perms::READ));
        let superuser = [Id::new("sasl", "super")];
        assert!(allows(&[acl(1, "sasl", "alice")], &superuser, perms::READ));
    }

    #[test]
    fn permission_checks() {
        let local = vec![Id::new("ip", "127.0.0.1")];
        assert!(allows(&[acl(1, "ip", "127.0.0.0/8")], &local, perms::READ));
        assert!(!allows(&[acl(1, "ip", "10.0.0.0/8")], &local, perms::READ));
        assert!(!allows(&[acl(2, "world", "anyone")], &local, perms::READ));
        assert!(allows(&[], &local, perms::READ));
        assert!(allows(
            &[acl(0, "world", "anyone")],
            &[Id::new("super", "")],
            perms::READ
        ));
        assert!(!ip_matches("0:0:0:0:0:0:0:1", "::1"));
        assert!(!ip_matches("0:0:0:0:0:0:0:1", "0.0.0.0/0"));
        assert!(ip_matches("127.0.0.1", "+127.0.0.1/-0"));
        let masked = for_get_acl(
            &[acl(1, "world", "anyone"), acl(31, "digest", "alice:h=")],
            &local,
        );
        assert_eq!(masked[1].id.id, "alice:x");
    }

    #[test]
    fn java_addresses() {
        assert_eq!(java_host_address("::1".parse().unwrap()), "0:0:0:0:0:0:0:1");
        assert_eq!(
            java_host_address("::ffff:1.2.3.4".parse().unwrap()),
            "1.2.3.4"
        );
        assert_eq!(java_host_address("127.0.0.1".parse().unwrap()), "127.0.0.1");
    }
}
