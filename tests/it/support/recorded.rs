//! Real recorded model traffic, served by the scripted model as it was recorded.
//!
//! `tests/data/recorded/` keeps public VCR cassettes of the Anthropic, OpenAI and Gemini
//! APIs, each with its provenance in `SOURCES.tsv` (repository, path, commit, licence).
//! They are vcrpy's YAML as pydantic-ai writes it: `interactions: [{request: {method, uri,
//! parsed_body}, response: {status: {code}, headers: {name: [values]}, body: {string}
//! | parsed_body}}]` (pydantic-ai's later `version: 1` cassettes: `status: N`, `body: {type:
//! text, content}`). A streamed reply's `body.string` is the bytes the API sent; a JSON
//! reply is kept parsed (`parsed_body`) and served as its compact JSON.
//!
//! [`Recorded`] is one reply as a scripted turn ([`super::model::Turn::Recorded`]): its
//! status, its headers (without those of the recording's connection) and its body, served
//! whole, gzip-compressed (an upstream that ignores `accept-encoding: identity`), or cut
//! after some bytes (an upstream that dropped the connection).

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

/// One recorded reply and how it is served.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The HTTP status.
    pub status: u16,
    /// The reply's headers as recorded (names lowercase), without the recording's
    /// connection headers (`content-length`, `transfer-encoding`, `connection`).
    pub headers: Vec<(String, String)>,
    /// The body as the API sent it.
    pub body: Bytes,
    /// Serve only this many bytes, then drop the connection.
    pub cut_at: Option<usize>,
    /// Serve the body gzip-compressed, with `content-encoding: gzip`.
    pub gzip: bool,
}

/// One recorded request and its reply.
#[derive(Debug, Clone)]
pub struct Interaction {
    /// The request's URI (`https://api.anthropic.com/v1/messages?beta=true`).
    pub uri: String,
    /// The reply.
    pub reply: Arc<Recorded>,
}

/// Reads the cassette `tests/data/recorded/<rel>`.
pub fn load(rel: &str) -> Vec<Interaction> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/recorded")
        .join(rel);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let yaml: Value = serde_saphyr::from_str(&text)
        .unwrap_or_else(|e| panic!("{}: not YAML: {e}", path.display()));
    yaml["interactions"]
        .as_array()
        .unwrap_or_else(|| panic!("{}: no interactions", path.display()))
        .iter()
        .map(|i| {
            let response = &i["response"];
            // vcrpy's `body.string`; pydantic-ai's later cassettes (`version: 1`) write a
            // text body as `body: {type: text, content}`.
            let text = response["body"]["string"]
                .as_str()
                .or_else(|| response["body"]["content"].as_str());
            let body = match text {
                Some(s) => Bytes::from(s.to_owned()),
                None => Bytes::from(response["parsed_body"].to_string()),
            };
            let headers = response["headers"]
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(name, _)| {
                    !matches!(
                        name.to_ascii_lowercase().as_str(),
                        "content-length" | "transfer-encoding" | "connection" | "content-encoding"
                    )
                })
                .flat_map(|(name, values)| {
                    values
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|v| v.as_str())
                        .map(|v| (name.to_ascii_lowercase(), v.to_owned()))
                        .collect::<Vec<_>>()
                })
                .collect();
            Interaction {
                uri: i["request"]["uri"].as_str().unwrap_or_default().to_owned(),
                reply: Arc::new(Recorded {
                    status: response["status"]["code"]
                        .as_u64()
                        .or_else(|| response["status"].as_u64())
                        .unwrap_or(200) as u16,
                    headers,
                    body,
                    cut_at: None,
                    gzip: false,
                }),
            }
        })
        .collect()
}

/// The reply `r` as the scripted model serves it.
pub fn response(r: &Recorded) -> Response {
    let mut builder =
        Response::builder().status(StatusCode::from_u16(r.status).unwrap_or(StatusCode::OK));
    for (name, value) in &r.headers {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            builder = builder.header(name, value);
        }
    }
    let body = match (r.cut_at, r.gzip) {
        (Some(at), _) => {
            // The bytes up to the cut, then (once they left: a server that fails its body
            // at once drops what it has not flushed) a dropped connection.
            let first = r.body.slice(..at.min(r.body.len()));
            let pieces = futures_util::stream::unfold(Some(Some(first)), |step| async move {
                match step? {
                    Some(bytes) => Some((Ok(bytes), Some(None))),
                    None => {
                        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                        Some((
                            Err(std::io::Error::new(
                                std::io::ErrorKind::ConnectionReset,
                                "the recorded reply, cut",
                            )),
                            None,
                        ))
                    }
                }
            });
            Body::from_stream(pieces)
        }
        (None, true) => {
            use std::io::Write;
            builder = builder.header("content-encoding", "gzip");
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            let packed = match gz.write_all(&r.body).and_then(|()| gz.finish()) {
                Ok(packed) => Bytes::from(packed),
                Err(_) => return StatusCode::INTERNAL_SERVER_ERROR.into_response(),
            };
            let (a, b) = (
                packed.slice(..packed.len() / 2),
                packed.slice(packed.len() / 2..),
            );
            Body::from_stream(futures_util::stream::iter([
                Ok::<_, std::io::Error>(a),
                Ok(b),
            ]))
        }
        (None, false) => Body::from(r.body.clone()),
    };
    builder
        .body(body)
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}
