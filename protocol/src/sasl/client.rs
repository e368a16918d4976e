//! The client side of DIGEST-MD5: an empty first token, the challenge → the digest response,
//! `rspauth` → checked, done.
//!
//! Invariants: the state machine only moves forward (start → responded → complete, or → over on
//! any error); after the response it keeps only the expected `rspauth` (32 bytes), not the
//! password.

use super::digest::{Exchange, latin1_or_utf8, same, user_key};
use super::directives::{Directives, push_quoted, push_token};
use super::{DigestParams, MAX_CHALLENGE_LEN, SaslError};

/// What the client does after one server token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientStep {
    /// Send this token; the exchange continues.
    Respond(Vec<u8>),
    /// The server proved it knows the password: authenticated, send nothing more.
    Complete,
}

#[derive(Debug)]
enum State {
    Start { password: String },
    Responded { rspauth: [u8; 32] },
    Over,
}

/// One client-side DIGEST-MD5 exchange.
#[derive(Debug)]
pub struct DigestMd5Client {
    params: DigestParams,
    username: String,
    cnonce: String,
    state: State,
}

impl DigestMd5Client {
    /// A new exchange for `username` with `password`. `cnonce` must be unpredictable and fresh
    /// for each exchange (RFC 2831 §2.1.2); the caller draws it, so that this type reads no
    /// randomness.
    pub fn new(
        params: DigestParams,
        username: impl Into<String>,
        password: impl Into<String>,
        cnonce: impl Into<String>,
    ) -> DigestMd5Client {
        DigestMd5Client {
            params,
            username: username.into(),
            cnonce: cnonce.into(),
            state: State::Start {
                password: password.into(),
            },
        }
    }

    /// The token that opens the exchange: empty (DIGEST-MD5 has no initial response).
    pub fn initial_token(&self) -> Vec<u8> {
        Vec::new()
    }

    /// Takes the server's next token: first the challenge (→ [`ClientStep::Respond`]), then the
    /// `rspauth` token (→ [`ClientStep::Complete`]).
    ///
    /// # Errors
    /// [`SaslError::Malformed`], [`SaslError::Missing`], [`SaslError::Repeated`] or
    /// [`SaslError::Unacceptable`] for a challenge this client cannot answer (no `auth` qop, an
    /// algorithm other than `md5-sess`) or any token longer than [`MAX_CHALLENGE_LEN`]; [`SaslError::BadServerProof`] for a wrong
    /// `rspauth`; [`SaslError::Finished`] for a token after the end. After an error the
    /// exchange is over.
    pub fn step(&mut self, token: &[u8]) -> Result<ClientStep, SaslError> {
        let state = std::mem::replace(&mut self.state, State::Over);
        // Every server token, `rspauth` included, is bounded by RFC 2831's challenge size.
        if token.len() > MAX_CHALLENGE_LEN {
            return Err(SaslError::Unacceptable("challenge length"));
        }
        match state {
            State::Start { password } => {
                let (response, rspauth) = self.respond(token, &password)?;
                self.state = State::Responded { rspauth };
                Ok(ClientStep::Respond(response))
            }
            State::Responded { rspauth } => {
                let d = Directives::parse(token)?;
                if same(d.required("rspauth")?, &rspauth) {
                    Ok(ClientStep::Complete)
                } else {
                    Err(SaslError::BadServerProof)
                }
            }
            State::Over => Err(SaslError::Finished),
        }
    }

    fn respond(&self, challenge: &[u8], password: &str) -> Result<(Vec<u8>, [u8; 32]), SaslError> {
        let d = Directives::parse(challenge)?;
        let nonce = d.required("nonce")?;
        // Several realms may be offered; the first is taken, and ZooKeeper offers one.
        let realm = d
            .all("realm")
            .next()
            .map_or_else(|| self.params.realm.as_bytes().to_vec(), <[u8]>::to_vec);
        if let Some(qops) = d.single("qop")? {
            if !qops
                .split(|&b| b == b',')
                .any(|q| q.trim_ascii().eq_ignore_ascii_case(b"auth"))
            {
                return Err(SaslError::Unacceptable("qop"));
            }
        }
        if !d.required("algorithm")?.eq_ignore_ascii_case(b"md5-sess") {
            return Err(SaslError::Unacceptable("algorithm"));
        }
        let utf8 = d.utf8_charset()?;
        let encode = |s: &str| {
            if utf8 {
                s.as_bytes().to_vec()
            } else {
                latin1_or_utf8(s)
            }
        };
        let username = encode(&self.username);
        let digest_uri = self.params.digest_uri();
        let exchange = Exchange {
            key: user_key(&username, &realm, &encode(password)),
            nonce,
            cnonce: self.cnonce.as_bytes(),
            nc: b"00000001",
            authzid: None,
            digest_uri: digest_uri.as_bytes(),
        };
        let mut out = Vec::with_capacity(256);
        if utf8 {
            push_token(&mut out, "charset", b"utf-8");
        }
        push_quoted(&mut out, "username", &username);
        push_quoted(&mut out, "realm", &realm);
        push_quoted(&mut out, "nonce", nonce);
        push_token(&mut out, "nc", b"00000001");
        push_quoted(&mut out, "cnonce", self.cnonce.as_bytes());
        push_quoted(&mut out, "digest-uri", digest_uri.as_bytes());
        push_token(&mut out, "response", &exchange.response());
        push_token(&mut out, "qop", b"auth");
        Ok((out, exchange.rspauth()))
    }
}
