//! One HTTP call through hyper's client, bounded in time: what each test needs of HTTP.

use std::net::SocketAddr;
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use serde_json::Value;

/// What a call returned.
pub struct Got {
    pub status: u16,
    pub content_type: String,
    pub www_authenticate: Option<String>,
    pub allow: Option<String>,
    pub body: String,
}

impl Got {
    /// The body as JSON; panics (failing the test) if it is not.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

/// Sends one request with an optional `Authorization` value; panics (failing the test) on any
/// transport error or after 10 s.
pub async fn call(
    addr: SocketAddr,
    method: &str,
    path: &str,
    authorization: Option<&str>,
    body: &[u8],
) -> Got {
    let fetch = async {
        let stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .expect("handshake");
        tokio::spawn(connection);
        let mut request = hyper::Request::builder()
            .method(method)
            .uri(path)
            .header("host", addr.to_string());
        if let Some(value) = authorization {
            request = request.header("authorization", value);
        }
        let request = request
            .body(Full::new(Bytes::copy_from_slice(body)))
            .expect("request");
        let response = sender.send_request(request).await.expect("response");
        let status = response.status().as_u16();
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let content_type = header("content-type").unwrap_or_default();
        let www_authenticate = header("www-authenticate");
        let allow = header("allow");
        let body = response.into_body().collect().await.expect("body");
        Got {
            status,
            content_type,
            www_authenticate,
            allow,
            body: String::from_utf8_lossy(&body.to_bytes()).into_owned(),
        }
    };
    tokio::time::timeout(Duration::from_secs(10), fetch)
        .await
        .expect("the HTTP answer within 10 s")
}
