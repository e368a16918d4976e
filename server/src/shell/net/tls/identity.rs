//! A client certificate's x509 identity: its subject in the form Java's
//! `X500Principal.getName()` gives (RFC 2253), which is what ZooKeeper 3.8's
//! `X509AuthenticationProvider.getClientId` makes the `x509:` id.
//!
//! Java's rules, followed here: the RDNs last to first, joined by `,`; the AVAs of one RDN
//! joined by `+`; the RFC 2253 keywords (CN, C, L, ST, O, OU, STREET, DC, UID) by name and any
//! other attribute as its dotted OID with the value as `#` and the DER's hex; in a string value
//! each of `,=+<>#;"\` is escaped with `\`, as are leading and trailing spaces.

use x509_parser::der_parser::asn1_rs::Tag;
use x509_parser::prelude::{FromDer, X509Certificate};

/// The keyword Java's RFC 2253 form uses for an attribute, by OID.
fn keyword(oid: &str) -> Option<&'static str> {
    Some(match oid {
        "2.5.4.3" => "CN",
        "2.5.4.6" => "C",
        "2.5.4.7" => "L",
        "2.5.4.8" => "ST",
        "2.5.4.10" => "O",
        "2.5.4.11" => "OU",
        "2.5.4.9" => "STREET",
        "0.9.2342.19200300.100.1.25" => "DC",
        "0.9.2342.19200300.100.1.1" => "UID",
        _ => return None,
    })
}

/// A DirectoryString's text, for the string types Java's `isDerString` accepts.
fn text(tag: Tag, data: &[u8]) -> Option<String> {
    match tag {
        Tag::Utf8String | Tag::PrintableString | Tag::Ia5String | Tag::GeneralString => {
            String::from_utf8(data.to_vec()).ok()
        }
        // Java reads T61String as ISO-8859-1.
        Tag::T61String => Some(data.iter().map(|b| char::from(*b)).collect()),
        Tag::BmpString => {
            let units: Vec<u16> = data
                .chunks(2)
                .map(|c| u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]))
                .collect();
            String::from_utf16(&units).ok()
        }
        _ => None,
    }
}

fn escape(value: &str) -> String {
    const ESCAPEES: &str = ",=+<>#;\"\\";
    let chars: Vec<char> = value.chars().collect();
    let blank = |c: &char| *c == ' ' || *c == '\r';
    let lead = chars.iter().take_while(|c| blank(c)).count();
    let trail = chars.len() - chars.iter().rev().take_while(|c| blank(c)).count();
    let mut out = String::with_capacity(value.len() + 4);
    for (i, c) in chars.iter().enumerate() {
        if *c == '\0' {
            out.push_str("\\00");
            continue;
        }
        if ESCAPEES.contains(*c) || i < lead || i >= trail {
            out.push('\\');
        }
        out.push(*c);
    }
    out
}

/// The DER of a value: its tag (universal, short form), its length, its contents.
fn der_hex(tag: Tag, constructed: bool, data: &[u8]) -> String {
    let mut der = vec![(tag.0 as u8 & 0x1f) | if constructed { 0x20 } else { 0 }];
    let len = data.len();
    if len < 0x80 {
        der.push(len as u8);
    } else {
        let bytes: Vec<u8> = len
            .to_be_bytes()
            .into_iter()
            .skip_while(|b| *b == 0)
            .collect();
        der.push(0x80 | bytes.len() as u8);
        der.extend(bytes);
    }
    der.extend_from_slice(data);
    der.iter().map(|b| format!("{b:02x}")).collect()
}

/// The subject of a DER certificate as `X500Principal.getName()` gives it; `None` for bytes
/// that are not a certificate.
pub fn subject_rfc2253(cert_der: &[u8]) -> Option<String> {
    let (_, cert) = X509Certificate::from_der(cert_der).ok()?;
    let rdns: Vec<String> = cert
        .subject()
        .iter_rdn()
        .map(|rdn| {
            rdn.iter()
                .map(|ava| {
                    let oid = ava.attr_type().to_id_string();
                    let value = ava.attr_value();
                    let header = &value.header;
                    match (keyword(&oid), text(header.tag(), value.data)) {
                        (Some(name), Some(text)) => format!("{name}={}", escape(&text)),
                        (name, _) => format!(
                            "{}=#{}",
                            name.map_or(oid.clone(), String::from),
                            der_hex(header.tag(), header.is_constructed(), value.data)
                        ),
                    }
                })
                .collect::<Vec<_>>()
                .join("+")
        })
        .collect();
    Some(rdns.into_iter().rev().collect::<Vec<_>>().join(","))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tls::TestPki;
    use rustls::pki_types::pem::PemObject;

    #[test]
    fn escapes_as_java_does() {
        assert_eq!(escape("a,b=c+d"), "a\\,b\\=c\\+d");
        assert_eq!(escape(" x "), "\\ x\\ ");
        assert_eq!(escape("#x#"), "\\#x\\#");
        assert_eq!(escape("plain"), "plain");
    }

    /// Made by `openssl req -subj '/DC=example/O=Shep, Inc/OU=a\+b/CN= x=y#z; <q> "w" \\
    /// /emailAddress=a@b.c'`; the expected name is what Java 17's
    /// `X509Certificate.getSubjectX500Principal().getName()` printed for it.
    const ODD_SUBJECT: &str = "-----BEGIN CERTIFICATE-----
MIICMjCCAdegAwIBAgIUETWfYtagjUSMmnv2lVk/LEVPhlcwCgYIKoZIzj0EAwIw
bjEXMBUGCgmSJomT8ixkARkWB2V4YW1wbGUxEjAQBgNVBAoMCVNoZXAsIEluYzEM
MAoGA1UECwwDYStiMRswGQYDVQQDDBIgeD15I3o7IDxxPiAidyIgXCAxFDASBgkq
hkiG9w0BCQEWBWFAYi5jMB4XDTI2MTEyMzEzNTM0N1oXDTI2MTEyNTEzNTM0N1ow
bjEXMBUGCgmSJomT8ixkARkWB2V4YW1wbGUxEjAQBgNVBAoMCVNoZXAsIEluYzEM
MAoGA1UECwwDYStiMRswGQYDVQQDDBIgeD15I3o7IDxxPiAidyIgXCAxFDASBgkq
hkiG9w0BCQEWBWFAYi5jMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEk3IxA5so
RC8MmCPnFz4vcQJed/peSdCL3VHZ0CPu5OAG4rqPA7GtJX1KbzHdy7PmaOzxqSXb
Q0Ir4DSwP8ZWYqNTMFEwHQYDVR0OBBYEFDsGK3TtBYsao75YzQzOqhyXehcjMB8G
A1UdIwQYMBaAFDsGK3TtBYsao75YzQzOqhyXehcjMA8GA1UdEwEB/wQFMAMBAf8w
CgYIKoZIzj0EAwIDSQAwRgIhAMViMvmm03VWW3vJV30KZqlps7Z6vU+Cn8xZ7sFu
Ats+AiEAyl70A0ir6yOLopIN3GKQBpNS5nF48A+tEe/duNpQDQo=
-----END CERTIFICATE-----";

    #[test]
    fn an_odd_subject_is_named_as_java_names_it() {
        let der =
            rustls::pki_types::CertificateDer::from_pem_slice(ODD_SUBJECT.as_bytes()).expect("PEM");
        assert_eq!(
            subject_rfc2253(&der).as_deref(),
            Some(
                r#"1.2.840.113549.1.9.1=#16056140622e63,CN=\ x\=y\#z\; \<q\> \"w\" \\\ ,OU=a\+b,O=Shep\, Inc,DC=example"#
            )
        );
    }

    #[test]
    fn test_certificates_name_their_subjects() {
        let pki = TestPki::generate().expect("test pki");
        assert_eq!(
            subject_rfc2253(&pki.client.cert_der).as_deref(),
            Some(crate::tls::CLIENT_SUBJECT)
        );
        assert_eq!(subject_rfc2253(b"not a certificate"), None);
    }
}
