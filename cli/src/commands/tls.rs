//! `shepherd tls make-test-certs DIR`: writes the throw-away test CA and certificates
//! (`shepherd_server::tls::TestPki`) as PEM and PKCS#12 files with stable names, so that
//! Shepherd, real ZooKeeper, kazoo and the Java client can be configured with the same files
//! (docs/security.md, "Test certificates").

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use shepherd_server::tls::{TEST_PASSWORD, TestPki};

/// `shepherd tls ...`.
#[derive(Subcommand, Debug)]
pub enum TlsCommand {
    /// Write a throw-away CA and certificates into DIR (created if missing): ca.pem,
    /// truststore.p12, server.pem/server-key.pem/server.p12 (localhost, 127.0.0.1, ::1),
    /// client.* (CN=client,O=Shepherd), other.* (CN=other,O=Shepherd) and untrusted.* (signed
    /// by a CA the trust store does not hold), and server-keystore.pem/client-keystore.pem
    /// (key and certificate in one file, ZooKeeper's PEM key store). Keys are PKCS#8 PEM;
    /// every .p12 has the password "shepherd". For tests only.
    MakeTestCerts {
        /// The directory to write into; files of the same names are replaced.
        dir: PathBuf,
    },
}

/// Runs a `shepherd tls` command: exit 0 on success, 1 if the files cannot be made or written.
pub fn main(command: &TlsCommand) -> ExitCode {
    match command {
        TlsCommand::MakeTestCerts { dir } => {
            let written = TestPki::generate().and_then(|pki| pki.write_to(dir));
            match written {
                Ok(()) => {
                    println!(
                        "test certificates in {} (PKCS#12 password \"{TEST_PASSWORD}\")",
                        dir.display()
                    );
                    ExitCode::SUCCESS
                }
                Err(error) => {
                    eprintln!("error: {error}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}
