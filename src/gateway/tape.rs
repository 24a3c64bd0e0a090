//! The gateway's side of cassettes: a request as it is recorded and compared, a reply
//! taped as it streams to the agent, and a reply given back from a cassette — its status,
//! headers and bytes as recorded, and, for a reply the upstream cut, its bytes up to the
//! cut and then a dropped connection.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Response;
use hyper::header::{self, HeaderValue};
use serde_json::Value;

use super::cassette::{Exchange, MAX_CASSETTE_BYTES};
use super::normalize::Normalizer;

/// An error of a reply body.
pub(super) type BoxError = Box<dyn std::error::Error + Send + Sync>;
/// A reply body to the agent.
pub(super) type Body = http_body_util::combinators::BoxBody<Bytes, BoxError>;

/// `path_and_query` without a `key=` parameter (Gemini's API key in the query): what a
/// cassette records and compares.
pub(super) fn key_free(path_and_query: &str) -> String {
    let Some((path, query)) = path_and_query.split_once('?') else {
        return path_and_query.to_owned();
    };
    let kept: Vec<&str> = query
        .split('&')
        .filter(|pair| !pair.starts_with("key="))
        .collect();
    if kept.is_empty() {
        path.to_owned()
    } else {
        format!("{path}?{}", kept.join("&"))
    }
}

/// A request body as cassettes hold it: its JSON (or its text, for a body that is not
/// JSON) normalised and redacted.
pub(super) fn taped_request(
    body: &[u8],
    normalizer: &Normalizer,
    redactor: &crate::shared::redact::Redactor,
) -> Value {
    let mut value = match serde_json::from_slice::<Value>(body) {
        Ok(json) => normalizer.request_json(&json),
        Err(_) => Value::String(normalizer.request_text(&String::from_utf8_lossy(body))),
    };
    redactor.redact_json(&mut value);
    value
}

/// A reply being taped as it streams to the agent.
#[derive(Debug)]
pub(super) struct Taping {
    /// The recorder's slot.
    pub(super) slot: usize,
    pub(super) method: String,
    pub(super) path: String,
    pub(super) request: Value,
    pub(super) content_type: Option<String>,
    /// The reply's headers as the agent got them (names lowercase).
    pub(super) headers: Vec<(String, String)>,
    reply: Vec<u8>,
    too_big: bool,
}

impl Taping {
    /// Starts taping the reply to a request.
    pub(super) fn new(slot: usize, method: String, path: String, request: Value) -> Self {
        Taping {
            slot,
            method,
            path,
            request,
            content_type: None,
            headers: Vec::new(),
            reply: Vec::new(),
            too_big: false,
        }
    }

    /// Keeps the next piece of the reply (up to the cassette bound).
    pub(super) fn push(&mut self, bytes: &[u8]) {
        if self.too_big || self.reply.len() + bytes.len() > MAX_CASSETTE_BYTES {
            self.too_big = true;
            self.reply = Vec::new();
        } else {
            self.reply.extend_from_slice(bytes);
        }
    }

    /// The exchange, once the reply ended (`cut`: before its end); `Err` with the size
    /// seen for a reply over the cassette bound.
    pub(super) fn finish(
        self,
        status: u16,
        cut: bool,
        normalizer: &Normalizer,
    ) -> Result<Exchange, usize> {
        if self.too_big {
            return Err(MAX_CASSETTE_BYTES);
        }
        // The run's paths become tokens in a text reply; other bytes are kept as they are.
        let reply = match String::from_utf8(self.reply) {
            Ok(text) => normalizer.paths(&text).into_bytes(),
            Err(bytes) => bytes.into_bytes(),
        };
        Ok(Exchange {
            method: self.method,
            path: self.path,
            request: self.request,
            status,
            content_type: self.content_type,
            headers: self.headers,
            reply,
            cut,
        })
    }
}

/// How long a reply that is cut is held open after its last bytes, in ms: hyper drops a
/// connection whose body fails at once, with what it had not yet flushed — the status line
/// and the bytes before the cut — so the error waits until they reached the agent.
pub(super) const CUT_LINGER_MS: u64 = 100;

/// The error that ends a body at its cut, once [`CUT_LINGER_MS`] have passed: what was
/// sent before it reaches the agent first.
pub(super) struct Cut {
    sleep: std::pin::Pin<Box<tokio::time::Sleep>>,
    why: Option<BoxError>,
}

impl Cut {
    /// A cut that fails with `why`.
    pub(super) fn new(why: BoxError) -> Self {
        Cut {
            sleep: Box::pin(tokio::time::sleep(std::time::Duration::from_millis(
                CUT_LINGER_MS,
            ))),
            why: Some(why),
        }
    }

    /// `Ready` with the error once the bytes before the cut had their time.
    pub(super) fn poll(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<BoxError> {
        use std::future::Future;
        std::task::ready!(self.sleep.as_mut().poll(cx));
        std::task::Poll::Ready(self.why.take().unwrap_or_else(|| {
            Box::new(std::io::Error::new(
                std::io::ErrorKind::ConnectionReset,
                "the reply was cut",
            ))
        }))
    }
}

/// A recorded reply that was cut: its data, then a dropped connection.
struct CutReply {
    data: Option<Bytes>,
    cut: Option<Cut>,
}

impl http_body::Body for CutReply {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, BoxError>>> {
        if let Some(data) = self.data.take().filter(|d| !d.is_empty()) {
            return std::task::Poll::Ready(Some(Ok(http_body::Frame::data(data))));
        }
        match self.cut.as_mut() {
            Some(cut) => {
                let why = std::task::ready!(cut.poll(cx));
                self.cut = None;
                std::task::Poll::Ready(Some(Err(why)))
            }
            None => std::task::Poll::Ready(None),
        }
    }
}

/// The body of `exchange`'s reply as a replay serves it: the recorded bytes with the
/// replaying run's own paths and names put back (`@@aptitude:workspace@@/counter.txt` →
/// `/tmp/aptitude-ws-…/workspace/counter.txt`). The witness reads its calls from these
/// bytes, the ones the agent got, so that it compares like with like.
pub(super) fn served(exchange: &Exchange, normalizer: &Normalizer) -> Bytes {
    match std::str::from_utf8(&exchange.reply) {
        Ok(text) => Bytes::from(normalizer.restore(text)),
        Err(_) => Bytes::from(exchange.reply.clone()),
    }
}

/// The recorded reply of `exchange`, with the replaying run's own paths: its status and
/// headers as recorded (a version 1 cassette's: its content type), and its body whole, or —
/// for a reply that was cut — its recorded part and then a dropped connection.
pub(super) fn replayed(exchange: &Exchange, normalizer: &Normalizer) -> Response<Body> {
    let bytes = served(exchange, normalizer);
    let body: Body = if exchange.cut {
        CutReply {
            data: Some(bytes),
            cut: Some(Cut::new(Box::new(std::io::Error::new(
                std::io::ErrorKind::ConnectionReset,
                "the recorded reply was cut here",
            )))),
        }
        .boxed()
    } else {
        Full::new(bytes).map_err(|never| match never {}).boxed()
    };
    let mut response = Response::new(body);
    *response.status_mut() =
        hyper::StatusCode::from_u16(exchange.status).unwrap_or(hyper::StatusCode::BAD_GATEWAY);
    let headers = response.headers_mut();
    for (name, value) in &exchange.headers {
        if !super::cassette::kept_reply_header(name) {
            continue;
        }
        if let (Ok(name), Ok(value)) = (
            header::HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            headers.append(name, value);
        }
    }
    if let Some(value) = exchange
        .content_type
        .as_deref()
        .filter(|_| !headers.contains_key(header::CONTENT_TYPE))
        .and_then(|c| HeaderValue::from_str(c).ok())
    {
        headers.insert(header::CONTENT_TYPE, value);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_in_the_query_is_never_taped() {
        assert_eq!(
            key_free("/v1beta/models/m:streamGenerateContent?alt=sse&key=AIzaSECRET"),
            "/v1beta/models/m:streamGenerateContent?alt=sse"
        );
        assert_eq!(key_free("/x?key=1"), "/x");
        assert_eq!(key_free("/v1/messages?beta=true"), "/v1/messages?beta=true");
    }
}
