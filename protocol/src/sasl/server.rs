//! The server side of DIGEST-MD5: an empty first token → a challenge with the caller's nonce →
//! the client's digest response checked against the user's password → `rspauth`.
//!
//! Invariants: the state machine only moves forward (start → challenged → done, or → failed
//! from anywhere); once failed or done every further token is refused with
//! [`SaslError::Finished`]; the state it keeps is the nonce it was given, nothing per token.

use super::digest::{Exchange, latin1_or_utf8, same, user_key};
use super::directives::{Directives, push_quoted, push_token};
use super::{DigestParams, MAX_RESPONSE_LEN, SaslError};

/// What the server sends back for one client token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerStep {
    /// Send this challenge; the exchange continues.
    Challenge(Vec<u8>),
    /// Send this final token (`rspauth=…`); the client is authenticated as `user` (ZooKeeper's
    /// authorization id: the authentication id, whatever `authzid` the client named).
    Done {
        /// The `rspauth` token to send.
        token: Vec<u8>,
        /// The authenticated user name.
        user: String,
    },
}

#[derive(Debug)]
enum State {
    Start,
    Challenged,
    Over,
}

/// One server-side DIGEST-MD5 exchange (one per connection).
#[derive(Debug)]
pub struct DigestMd5Server {
    params: DigestParams,
    nonce: String,
    state: State,
}

impl DigestMd5Server {
    /// A new exchange that will challenge with `nonce`. The nonce must be unpredictable to
    /// clients and never reused (RFC 2831 §2.1.1); the caller draws it, so that this type reads
    /// no randomness.
    pub fn new(params: DigestParams, nonce: String) -> DigestMd5Server {
        DigestMd5Server {
            params,
            nonce,
            state: State::Start,
        }
    }

    /// Whether the exchange has ended (authenticated or failed).
    pub fn is_over(&self) -> bool {
        matches!(self.state, State::Over)
    }

    /// Takes the client's next token. `password_of` looks a user name up (it is called at most
    /// once per exchange, with the name as the client sent it).
    ///
    /// Ordering: the first token gets the challenge (clients send it empty; its content is
    /// ignored, as ZooKeeper does); the second is the digest response and gets `rspauth`.
    /// Every token longer than [`MAX_RESPONSE_LEN`] is refused before it is looked at.
    ///
    /// # Errors
    /// Any [`SaslError`]: an oversized token, malformed, missing, repeated or unacceptable
    /// directives, an unknown
    /// user or a wrong password ([`SaslError::BadCredentials`]), or a token after the end
    /// ([`SaslError::Finished`]). After an error the exchange is over.
    pub fn step<F, P>(&mut self, token: &[u8], password_of: F) -> Result<ServerStep, SaslError>
    where
        F: FnOnce(&str) -> Option<P>,
        P: AsRef<str>,
    {
        let state = std::mem::replace(&mut self.state, State::Over);
        // Every token, the ignored first one included: a peer cannot make the caller hold
        // more than RFC 2831's bound.
        if token.len() > MAX_RESPONSE_LEN {
            return Err(SaslError::Unacceptable("response length"));
        }
        match state {
            State::Start => {
                // DIGEST-MD5 has no initial response. ZooKeeper 3.8 answers the challenge
                // whatever the first token holds (checked against a real server: a non-empty
                // token, even a whole digest response, gets the challenge), so its content is
                // ignored here too.
                let _ = token;
                self.state = State::Challenged;
                Ok(ServerStep::Challenge(self.challenge()))
            }
            State::Challenged => self.verify(token, password_of),
            State::Over => Err(SaslError::Finished),
        }
    }

    fn challenge(&self) -> Vec<u8> {
        // The directives and their order are those ZooKeeper 3.8 (the JDK's DIGEST-MD5
        // server) sends; it leaves `qop` out, which means `auth` (RFC 2831 §2.1.1).
        let mut out = Vec::with_capacity(128);
        push_quoted(&mut out, "realm", self.params.realm.as_bytes());
        push_quoted(&mut out, "nonce", self.nonce.as_bytes());
        push_token(&mut out, "charset", b"utf-8");
        push_token(&mut out, "algorithm", b"md5-sess");
        out
    }

    fn verify<F, P>(&self, token: &[u8], password_of: F) -> Result<ServerStep, SaslError>
    where
        F: FnOnce(&str) -> Option<P>,
        P: AsRef<str>,
    {
        let d = Directives::parse(token)?;
        let utf8 = d.utf8_charset()?;
        let username = d.required("username")?;
        let realm = d.single("realm")?.unwrap_or(b"");
        if realm != self.params.realm.as_bytes() {
            return Err(SaslError::Unacceptable("realm"));
        }
        if d.required("nonce")? != self.nonce.as_bytes() {
            return Err(SaslError::Unacceptable("nonce"));
        }
        let cnonce = d.required("cnonce")?;
        // The first and only use of the nonce. The JDK's DIGEST-MD5 server, which ZooKeeper 3.8
        // runs, also takes a response without `nc` and hashes it as 00000001 (checked against a
        // real server).
        let nc = match d.single("nc")? {
            None | Some(b"00000001") => b"00000001".as_slice(),
            Some(_) => return Err(SaslError::Unacceptable("nc")),
        };
        if let Some(qop) = d.single("qop")? {
            if !qop.eq_ignore_ascii_case(b"auth") {
                return Err(SaslError::Unacceptable("qop"));
            }
        }
        let digest_uri = d.required("digest-uri")?;
        let expected_uri = self.params.digest_uri();
        if !digest_uri.eq_ignore_ascii_case(expected_uri.as_bytes()) {
            return Err(SaslError::Unacceptable("digest-uri"));
        }
        let response = d.required("response")?;
        if response.len() != 32 || !response.iter().all(u8::is_ascii_hexdigit) {
            return Err(SaslError::Unacceptable("response"));
        }
        let authzid = d.single("authzid")?;

        // The name in the client's character set: UTF-8 when agreed, else ISO-8859-1, which
        // maps every byte to the character of the same number.
        let user: String = if utf8 {
            std::str::from_utf8(username)
                .map_err(|_| SaslError::Malformed("username is not UTF-8"))?
                .to_owned()
        } else {
            username.iter().map(|&b| char::from(b)).collect()
        };
        let password = password_of(&user);
        // An unknown user costs the same hashing as a known one with a wrong password.
        let known = password.is_some();
        let password = password.as_ref().map_or("", |p| p.as_ref());
        let password = if utf8 {
            password.as_bytes().to_vec()
        } else {
            latin1_or_utf8(password)
        };
        let exchange = Exchange {
            key: user_key(username, realm, &password),
            nonce: self.nonce.as_bytes(),
            cnonce,
            nc,
            authzid,
            digest_uri,
        };
        let expected = exchange.response();
        let given = response.to_ascii_lowercase();
        if !(same(&expected, &given) && known) {
            return Err(SaslError::BadCredentials);
        }
        let mut token = Vec::with_capacity(40);
        push_token(&mut token, "rspauth", &exchange.rspauth());
        Ok(ServerStep::Done { token, user })
    }
}
