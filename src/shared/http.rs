//! aptitude's one HTTP client, for `http` and `https` alike: the model gateway's upstream
//! requests, MCP servers reached over HTTP and the OTLP export all go through it (one
//! connection pool, one TLS stack in the binary: rustls with the system's roots).

use std::sync::OnceLock;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

type HttpsClient = Client<hyper_rustls::HttpsConnector<HttpConnector>, Full<Bytes>>;

/// The one client for `http` and `https` upstreams (one pool, one instantiation in the
/// binary), made on first use with the system's root certificates; with why they could not
/// be loaded, when they could not (an `https` upstream then fails, saying so).
fn client() -> &'static (HttpsClient, Option<String>) {
    static CLIENT: OnceLock<(HttpsClient, Option<String>)> = OnceLock::new();
    CLIENT.get_or_init(|| {
        let (builder, no_roots) =
            match hyper_rustls::HttpsConnectorBuilder::new().with_native_roots() {
                Ok(builder) => (builder, None),
                Err(e) => (
                    hyper_rustls::HttpsConnectorBuilder::new().with_tls_config(
                        rustls::ClientConfig::builder()
                            .with_root_certificates(rustls::RootCertStore::empty())
                            .with_no_client_auth(),
                    ),
                    Some(format!("no TLS root certificates could be loaded: {e}")),
                ),
            };
        let mut http = HttpConnector::new();
        http.set_nodelay(true);
        http.enforce_http(false);
        let connector = builder.https_or_http().enable_http1().wrap_connector(http);
        (
            Client::builder(TokioExecutor::new()).build(connector),
            no_roots,
        )
    })
}

/// Why a request got no reply: the client's error with its sources, as one line, and on
/// TLS why no root certificate could be loaded, when none was.
#[derive(Debug, thiserror::Error)]
#[error("{chain}{}", roots.as_ref().map(|r| format!(" ({r})")).unwrap_or_default())]
pub struct SendError {
    /// The error and its sources, joined by `: `.
    chain: String,
    /// Why no root certificate could be loaded (TLS requests only).
    roots: Option<String>,
}

/// Sends `request` upstream (`https`: whether it goes over TLS, for the message when no
/// root certificates could be loaded).
///
/// # Errors
/// [`SendError`]: the client's error with its sources.
pub async fn send(
    https: bool,
    request: Request<Full<Bytes>>,
) -> Result<Response<Incoming>, SendError> {
    let (client, no_roots) = client();
    client.request(request).await.map_err(|e| {
        let mut chain = e.to_string();
        let mut source = std::error::Error::source(&e);
        while let Some(s) = source {
            chain.push_str(&format!(": {s}"));
            source = s.source();
        }
        SendError {
            chain,
            roots: no_roots.as_ref().filter(|_| https).cloned(),
        }
    })
}
