//! Sessions (docs/protocol.md §2.4-§2.5, §13): ids, passwords, negotiated timeouts, the connection each is
//! bound to, and the tick-wide expiry buckets of ZooKeeper's `ExpiryQueue`.
//!
//! Invariants: every live session sits in exactly one bucket, keyed by its expiry time
//! `((now + timeout) / tick + 1) · tick` on the monotonic clock (docs/protocol.md §13.1); ids are handed out in
//! increasing order from the standalone seed, skipping live ones; a password is a pure
//! function of the id and the configured secret (HMAC-SHA256), so the core stays deterministic
//! and a restart with the same secret keeps every session's password.

use std::collections::{BTreeMap, BTreeSet};

use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::{ConnId, SessionId};

/// One live session.
#[derive(Debug, Clone)]
pub(crate) struct Session {
    pub timeout_ms: i32,
    /// The bucket this session expires in (monotonic ms).
    pub expires_at: u64,
    /// The connection currently bound to it, if any.
    pub conn: Option<ConnId>,
}

/// All live sessions and their expiry buckets.
#[derive(Debug)]
pub(crate) struct Sessions {
    map: BTreeMap<SessionId, Session>,
    buckets: BTreeMap<u64, BTreeSet<SessionId>>,
    next_id: SessionId,
    tick_ms: u64,
    secret: [u8; 32],
}

/// The password of session `id` under `secret`: the first 16 bytes of HMAC-SHA256(secret,
/// id as 8 big-endian bytes).
fn mac(secret: &[u8; 32], id: SessionId) -> Hmac<Sha256> {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret).expect("HMAC takes any key length");
    mac.update(&id.to_be_bytes());
    mac
}

/// The bits of a session id below the member's top byte.
const LOW_56: u64 = (1 << 56) - 1;

/// The first session id of a standalone server started at `wall_ms` (docs/protocol.md §2.5):
/// `(1 << 56) | ((wall_ms << 24) >>> 8)`. Its top byte is 0x01, so it is never 0, never the
/// container marker and never looks like a TTL owner.
pub(crate) fn first_session_id(wall_ms: i64) -> SessionId {
    let low = ((wall_ms as u64) << 24) >> 8;
    ((1u64 << 56) | low) as i64
}

impl Sessions {
    pub fn new(wall_ms: i64, tick_ms: u32, secret: [u8; 32]) -> Sessions {
        Sessions {
            map: BTreeMap::new(),
            buckets: BTreeMap::new(),
            next_id: first_session_id(wall_ms),
            tick_ms: u64::from(tick_ms.max(1)),
            secret,
        }
    }

    /// Session `id`'s password: a pure function of the id and the secret, so it needs no
    /// storing and survives a restart with the same secret.
    pub fn password(&self, id: SessionId) -> [u8; 16] {
        let tag = mac(&self.secret, id).finalize().into_bytes();
        let mut out = [0u8; 16];
        out.copy_from_slice(&tag[..16]);
        out
    }

    /// Whether `passwd` is session `id`'s password, compared in constant time (a wrong
    /// length is refused first, so a short prefix cannot pass).
    pub fn password_matches(&self, id: SessionId, passwd: &[u8]) -> bool {
        passwd.len() == 16 && mac(&self.secret, id).verify_truncated_left(passwd).is_ok()
    }

    /// Creates a session bound to `conn` and returns its id: the next id from the standalone
    /// seed, with `member` (1 for a single server) in its top byte as a ZooKeeper peer puts its
    /// `myid` there, that no live session has (a restored or replayed session may hold one).
    /// The low 56 bits come from one counter whatever the member, so no two members' ids meet.
    pub fn create(&mut self, timeout_ms: i32, conn: ConnId, now_ms: u64, member: u8) -> SessionId {
        let of_member = |low: SessionId| ((low as u64 & LOW_56) | (u64::from(member) << 56)) as i64;
        while self.map.contains_key(&of_member(self.next_id)) {
            self.next_id = self.next_id.wrapping_add(1);
        }
        let id = of_member(self.next_id);
        self.next_id = self.next_id.wrapping_add(1);
        let session = Session {
            timeout_ms,
            expires_at: 0,
            conn: Some(conn),
        };
        self.map.insert(id, session);
        self.touch(id, now_ms);
        id
    }

    /// Adds (or updates) a session with a known id and no connection, its timeout counted
    /// from `now_ms`: a session restored from a snapshot or a replayed createSession.
    pub fn insert(&mut self, id: SessionId, timeout_ms: i32, now_ms: u64) {
        if let Some(session) = self.map.get_mut(&id) {
            session.timeout_ms = timeout_ms;
        } else {
            let session = Session {
                timeout_ms,
                expires_at: 0,
                conn: None,
            };
            self.map.insert(id, session);
        }
        self.touch(id, now_ms);
    }

    pub fn get(&self, id: SessionId) -> Option<&Session> {
        self.map.get(&id)
    }

    pub fn get_mut(&mut self, id: SessionId) -> Option<&mut Session> {
        self.map.get_mut(&id)
    }

    /// How many sessions are live.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&SessionId, &Session)> {
        self.map.iter()
    }

    /// The sessions whose id is above `after` (all when `None`), by id: a walk that resumes
    /// where it stopped, for the bounded slices of `dump`.
    pub fn after(&self, after: Option<SessionId>) -> impl Iterator<Item = (&SessionId, &Session)> {
        use std::ops::Bound::{Excluded, Unbounded};
        self.map
            .range((after.map_or(Unbounded, Excluded), Unbounded))
    }

    /// Moves the session to the bucket for `now + timeout` (docs/protocol.md §13.1). False if it is gone.
    pub fn touch(&mut self, id: SessionId, now_ms: u64) -> bool {
        let Some(session) = self.map.get_mut(&id) else {
            return false;
        };
        let timeout = u64::try_from(session.timeout_ms).unwrap_or(0);
        let expires_at = ((now_ms + timeout) / self.tick_ms + 1) * self.tick_ms;
        if expires_at != session.expires_at {
            if let Some(bucket) = self.buckets.get_mut(&session.expires_at) {
                bucket.remove(&id);
                if bucket.is_empty() {
                    self.buckets.remove(&session.expires_at);
                }
            }
            session.expires_at = expires_at;
            self.buckets.entry(expires_at).or_default().insert(id);
        }
        true
    }

    /// Forgets a session (closed or expired).
    pub fn remove(&mut self, id: SessionId) -> Option<Session> {
        let session = self.map.remove(&id)?;
        if let Some(bucket) = self.buckets.get_mut(&session.expires_at) {
            bucket.remove(&id);
            if bucket.is_empty() {
                self.buckets.remove(&session.expires_at);
            }
        }
        Some(session)
    }

    /// Sessions whose bucket is due at `now_ms`, oldest bucket first.
    pub fn due(&self, now_ms: u64) -> Vec<SessionId> {
        self.buckets
            .range(..=now_ms)
            .flat_map(|(_, ids)| ids.iter().copied())
            .collect()
    }

    /// The earliest bucket, if any session is live.
    pub fn next_expiry(&self) -> Option<u64> {
        self.buckets.keys().next().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_buckets() {
        assert_eq!(first_session_id(0x0006_153f), 0x0100_0006_153f_0000);
        let id = first_session_id(0x0006_153f);
        assert_eq!(id >> 56, 1);
        let mut sessions = Sessions::new(1_700_000_000_000, 2000, [42; 32]);
        let a = sessions.create(4000, 1, 1000, 1);
        let b = sessions.create(4000, 2, 1000, 1);
        assert_eq!(b, a + 1);
        assert_ne!(sessions.password(a), sessions.password(b));
        assert!(sessions.password_matches(a, &sessions.password(a)));
        assert!(!sessions.password_matches(a, &sessions.password(b)));
        assert!(!sessions.password_matches(a, &sessions.password(a)[..8]));
        // The same secret gives the same passwords after a restart; another does not.
        let again = Sessions::new(0, 2000, [42; 32]);
        assert_eq!(again.password(a), sessions.password(a));
        assert_ne!(
            Sessions::new(0, 2000, [7; 32]).password(a),
            sessions.password(a)
        );
        // (1000 + 4000) / 2000 + 1 = 3 ticks → 6000.
        assert_eq!(sessions.get(a).unwrap().expires_at, 6000);
        assert!(sessions.due(5999).is_empty());
        assert_eq!(sessions.due(6000), vec![a, b]);
        sessions.touch(a, 2500);
        assert_eq!(sessions.due(6000), vec![b]);
        assert_eq!(sessions.next_expiry(), Some(6000));
        sessions.remove(b);
        assert_eq!(sessions.next_expiry(), Some(8000));
    }
}
