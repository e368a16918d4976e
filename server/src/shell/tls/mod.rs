//! TLS on client connections (docs/security.md, "TLS"): key material, the rustls server
//! configuration, the handshake inside each connection's task, port unification, and the
//! client certificate's x509 identity. Also the throw-away test PKI.
//!
//! The test PKI is not behind a cargo feature: `shepherd tls make-test-certs` needs it in the
//! binary, and rcgen on the ring provider the server already links adds little to the build.

mod test_pki;

pub use test_pki::{
    CLIENT_SUBJECT, OTHER_CLIENT_SUBJECT, TEST_PASSWORD, TestCert, TestPki, TestPkiError,
};
