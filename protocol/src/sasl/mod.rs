//! SASL DIGEST-MD5 (RFC 2831) as ZooKeeper 3.8 uses it for its `sasl` request (op 102): both
//! sides of the mechanism, sans-IO. Tokens go in, tokens come out; the caller carries them in
//! `SaslToken` records and supplies the randomness (the server's nonce, the client's cnonce).
//!
//! The exchange, as a ZooKeeper client and server run it:
//!
//! 1. the client sends an empty token ([`DigestMd5Client::initial_token`]);
//! 2. the server answers a challenge ([`DigestMd5Server::step`] →
//!    [`ServerStep::Challenge`]): `realm="zk-sasl-md5",nonce="…",charset=utf-8,algorithm=md5-sess`
//!    (ZooKeeper's bytes; no `qop`, which means `auth`);
//! 3. the client answers the digest ([`DigestMd5Client::step`] → [`ClientStep::Respond`]);
//! 4. the server checks it and answers `rspauth=…` ([`ServerStep::Done`], carrying the
//!    authenticated user); the client checks that ([`ClientStep::Complete`]) and sends nothing
//!    more.
//!
//! Only quality of protection `auth` is offered or accepted (ZooKeeper wraps nothing), so there
//! is no integrity or privacy layer. The realm and `digest-uri` are ZooKeeper's fixed ones
//! ([`DigestParams::zookeeper`]: realm `zk-sasl-md5`, `zookeeper/zk-sasl-md5`; ZooKeeper 3.8
//! `ZooKeeperSaslServer.java` and `SecurityUtils.java`), not the host's name.
//!
//! Invariants: no input panics; every token is checked against RFC 2831's bound before it is
//! parsed (a server refuses any token longer than [`MAX_RESPONSE_LEN`], a client any longer than
//! [`MAX_CHALLENGE_LEN`], `rspauth` included); each state machine holds a bounded amount of state (its nonce, a user name and
//! a 16-byte hash); digests are compared in constant time.

mod client;
mod digest;
mod directives;
mod server;

pub use client::{ClientStep, DigestMd5Client};
pub use server::{DigestMd5Server, ServerStep};

/// The SASL mechanism name, as clients name it.
pub const MECHANISM: &str = "DIGEST-MD5";

/// The longest response a server reads (RFC 2831 §2.1.2: "the size of a digest-response is
/// less than 4096 bytes").
pub const MAX_RESPONSE_LEN: usize = 4096;

/// The longest challenge a client reads (RFC 2831 §2.1.1: less than 2048 bytes).
pub const MAX_CHALLENGE_LEN: usize = 2048;

/// Where an exchange takes place: the realm the server offers and the `digest-uri` both sides
/// use (`service/host`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DigestParams {
    /// The realm offered in the challenge and hashed into the user's key.
    pub realm: String,
    /// The `serv-type` half of `digest-uri`.
    pub service: String,
    /// The `host` half of `digest-uri`.
    pub host: String,
}

impl DigestParams {
    /// ZooKeeper's: realm `zk-sasl-md5`, digest-uri `zookeeper/zk-sasl-md5`.
    pub fn zookeeper() -> DigestParams {
        DigestParams {
            realm: "zk-sasl-md5".into(),
            service: "zookeeper".into(),
            host: "zk-sasl-md5".into(),
        }
    }

    fn digest_uri(&self) -> String {
        format!("{}/{}", self.service, self.host)
    }
}

/// Why an exchange failed. Every variant ends the exchange: a ZooKeeper server answers
/// `AuthFailed` and closes the connection, a client reports authentication failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SaslError {
    /// A token that is not a well-formed directive list.
    #[error("malformed DIGEST-MD5 token: {0}")]
    Malformed(&'static str),
    /// A required directive is absent.
    #[error("DIGEST-MD5 directive {0} is missing")]
    Missing(&'static str),
    /// A directive that may appear once appears again.
    #[error("DIGEST-MD5 directive {0} is repeated")]
    Repeated(&'static str),
    /// A directive has a value this side does not accept (a foreign nonce or realm, a qop other
    /// than `auth`, an `nc` other than 1 (an absent `nc` counts as 1), another `digest-uri`, a response that is not 32 hex
    /// digits, an oversized token).
    #[error("DIGEST-MD5 directive {0} has an unacceptable value")]
    Unacceptable(&'static str),
    /// The user is unknown or the digest does not match the password (one outcome, so that a
    /// client learns nothing about which names exist).
    #[error("DIGEST-MD5 authentication failed")]
    BadCredentials,
    /// The server's `rspauth` does not prove knowledge of the password.
    #[error("the server's DIGEST-MD5 rspauth does not match")]
    BadServerProof,
    /// A token after the exchange completed (or after it failed).
    #[error("the DIGEST-MD5 exchange is already over")]
    Finished,
}

#[cfg(test)]
mod tests;
