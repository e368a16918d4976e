//! One HTTP GET through hyper's client, bounded in time: what each test needs of HTTP.

use std::net::SocketAddr;
use std::time::Duration;

use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;

/// What a GET returned.
pub struct Got {
    pub status: u16,
    pub content_type: String,
    pub body: String,
}

/// GETs `path` from `addr`; panics (failing the test) on any transport error or after 10 s.
pub async fn get(addr: SocketAddr, path: &str) -> Got {
    let fetch = async {
        let stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .expect("handshake");
        tokio::spawn(connection);
        let request = hyper::Request::get(path)
            .header("host", addr.to_string())
            .body(Empty::<Bytes>::new())
            .expect("request");
        let response = sender.send_request(request).await.expect("response");
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let body = response.into_body().collect().await.expect("body");
        Got {
            status,
            content_type,
            body: String::from_utf8_lossy(&body.to_bytes()).into_owned(),
        }
    };
    tokio::time::timeout(Duration::from_secs(10), fetch)
        .await
        .expect("the HTTP answer within 10 s")
}
