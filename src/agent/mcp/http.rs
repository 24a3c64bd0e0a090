//! aptitude's front for a run's MCP HTTP servers: a port of 127.0.0.1 (which the sandbox
//! forwards) that the agent is given instead of each server's URL, as
//! `http://127.0.0.1:PORT/mcp/<token>/<server>` (the run's random token: no other process
//! of the machine can call through it), serving at most 32 connections at once.
//!
//! - **Forwarding**: each request is forwarded to the server's URL with the test's
//!   `headers` put on outside the sandbox (a token in them never reaches the agent), and
//!   the reply is given back. When the run is recorded (`run --record-model`), the
//!   JSON-RPC messages of both sides — a `POST`'s body, its reply as `application/json` or
//!   as the events of a `text/event-stream` — are copied into the run's cassette like a
//!   stdio server's ([`crate::gateway::mcp_record`]). Replies stream through as they
//!   come (a server may ask the client something mid-reply); a copy of a `POST`'s reply (at
//!   most [`MAX_BODY_BYTES`]) is written down with its request once the reply ends. A `GET`
//!   stream (the server's own messages) is not recorded.
//! - **Replaying**: the front answers each `POST` from the recording ([`super::serve`]):
//!   `200` with the JSON-RPC response(s) as `application/json`, `202` for a body of only
//!   notifications; `GET` and `DELETE` get `405`, which MCP's streamable HTTP transport
//!   (spec 2025-06-18) allows.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{self, HeaderName, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use tokio_util::sync::CancellationToken;

use super::serve::Served;
use crate::gateway::mcp_record::{McpTraffic, from_tap};
use crate::gateway::sse::SseReader;

/// The largest request or `POST` reply the front reads, in bytes.
pub const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;

type Body = crate::gateway::server::HttpBody;

/// What the front does for one server.
#[derive(Debug)]
pub enum Front {
    /// Forwards to the server, with its headers.
    Forward {
        /// The server's URL.
        url: String,
        /// The test's `headers`, `${VAR}` expanded.
        headers: BTreeMap<String, String>,
        /// Whether the exchange is recorded.
        record: bool,
    },
    /// Answers from the recording (a [`Served::Replay`]).
    Replay(Served),
}

#[derive(Debug)]
struct Server {
    front: Front,
    /// The recording so far, in a tap's lines (`> MESSAGE`, `< MESSAGE`).
    log: String,
}

#[derive(Debug, Default)]
struct State {
    servers: BTreeMap<String, Server>,
    divergences: Vec<String>,
    /// The run's token, the first segment of every path (`/mcp/TOKEN/NAME`): another
    /// process of the machine can not guess it.
    token: String,
}

/// A running front.
#[derive(Debug)]
pub struct McpFront {
    serving: super::Serving,
    state: Arc<Mutex<State>>,
}

/// What the front's servers did.
#[derive(Debug, Default)]
pub struct FrontReport {
    /// Each recorded server's traffic (the run's paths tokenised).
    pub recorded: BTreeMap<String, McpTraffic>,
    /// Each replayed request the recording did not hold, in order.
    pub divergences: Vec<String>,
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    state
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl McpFront {
    /// Serves `servers` (by name) on a fresh port of 127.0.0.1.
    ///
    /// # Errors
    /// When no port can be bound.
    pub async fn start(servers: BTreeMap<String, Front>) -> std::io::Result<McpFront> {
        let state = Arc::new(Mutex::new(State {
            servers: servers
                .into_iter()
                .map(|(name, front)| {
                    let server = Server {
                        front,
                        log: String::new(),
                    };
                    (name, server)
                })
                .collect(),
            divergences: Vec::new(),
            token: crate::shared::random_hex(16),
        }));
        let shared = Arc::clone(&state);
        let serving =
            super::Serving::start(move |listener, shutdown| serve(listener, shared, shutdown))
                .await?;
        Ok(McpFront { serving, state })
    }

    /// The URL the agent is given for `server`.
    pub fn url(&self, server: &str) -> String {
        format!(
            "http://{}/mcp/{}/{server}",
            self.serving.addr,
            lock(&self.state).token
        )
    }

    /// Stops serving and returns what was recorded (`paths` tokenises the run's paths)
    /// and the divergences.
    pub fn finish(self, paths: &dyn Fn(&str) -> String) -> FrontReport {
        self.serving.shutdown.cancel();
        let mut state = lock(&self.state);
        let recorded = state
            .servers
            .iter()
            .filter(|(_, s)| matches!(s.front, Front::Forward { record: true, .. }))
            .map(|(name, s)| (name.clone(), from_tap(&s.log, paths)))
            .collect();
        FrontReport {
            recorded,
            divergences: std::mem::take(&mut state.divergences),
        }
    }
}

async fn serve(
    listener: tokio::net::TcpListener,
    state: Arc<Mutex<State>>,
    shutdown: CancellationToken,
) {
    let handler: crate::gateway::server::Handler =
        Arc::new(move |request| Box::pin(handle(Arc::clone(&state), request)));
    crate::gateway::server::serve_http(listener, handler, super::host::MAX_SESSIONS, shutdown)
        .await;
}

fn full(status: StatusCode, content_type: Option<&str>, body: impl Into<Bytes>) -> Response<Body> {
    let mut response = Response::new(
        Full::new(body.into())
            .map_err(|never| match never {})
            .boxed(),
    );
    *response.status_mut() = status;
    if let Some(t) = content_type.and_then(|t| HeaderValue::from_str(t).ok()) {
        response.headers_mut().insert(header::CONTENT_TYPE, t);
    }
    response
}

/// `text` as one line of a tap's log: compact JSON when it is JSON.
fn log_line(log: &mut String, prefix: &str, text: &str) {
    let line = serde_json::from_str::<serde_json::Value>(text)
        .map_or_else(|_| text.replace('\n', " "), |v| v.to_string());
    if log.len() + line.len() + 3 <= super::helper::MAX_TAP_BYTES as usize {
        log.push_str(prefix);
        log.push_str(&line);
        log.push('\n');
    }
}

async fn handle(
    state: Arc<Mutex<State>>,
    request: Request<Incoming>,
) -> Result<Response<Body>, Infallible> {
    let token = lock(&state).token.clone();
    let name = request
        .uri()
        .path()
        .strip_prefix("/mcp/")
        .and_then(|rest| rest.strip_prefix(token.as_str()))
        .and_then(|rest| rest.strip_prefix('/'))
        .unwrap_or_default()
        .to_owned();
    let upstream = match lock(&state).servers.get(&name).map(|s| &s.front) {
        None => return Ok(full(StatusCode::NOT_FOUND, None, "no such MCP server")),
        Some(Front::Forward {
            url,
            headers,
            record,
        }) => Some((url.clone(), headers.clone(), *record)),
        Some(Front::Replay(_)) => None,
    };
    let (parts, body) = request.into_parts();
    let body = match Limited::new(body, MAX_BODY_BYTES).collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => {
            let why = format!("aptitude's MCP front could not read the request: {e}");
            return Ok(full(StatusCode::PAYLOAD_TOO_LARGE, None, why));
        }
    };
    Ok(match upstream {
        None => replay(&state, &name, &parts.method, &body),
        Some((url, headers, recorded)) => {
            let to = Upstream {
                url: &url,
                headers: &headers,
                recorded,
            };
            forward(&state, &name, parts, body, to).await
        }
    })
}

/// A replayed server's answer.
fn replay(state: &Mutex<State>, name: &str, method: &Method, body: &Bytes) -> Response<Body> {
    if method != Method::POST {
        let mut r = full(StatusCode::METHOD_NOT_ALLOWED, None, "");
        r.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("POST"));
        return r;
    }
    let text = String::from_utf8_lossy(body);
    let mut state = lock(state);
    let State {
        servers,
        divergences,
        ..
    } = &mut *state;
    let Some(Server {
        front: Front::Replay(served),
        ..
    }) = servers.get_mut(name)
    else {
        return full(StatusCode::NOT_FOUND, None, "no such MCP server");
    };
    let answered = served.answer_line(&text);
    let room = 16usize.saturating_sub(divergences.len());
    divergences.extend(answered.divergences.into_iter().take(room));
    let Some(reply) = answered.reply else {
        return full(StatusCode::ACCEPTED, None, "");
    };
    // A request the server refused at the HTTP level is refused the same way.
    if let Some(status) = reply["error"]["data"][HTTP_STATUS]
        .as_u64()
        .and_then(|s| u16::try_from(s).ok())
        .and_then(|s| StatusCode::from_u16(s).ok())
    {
        let mut error = reply["error"].clone();
        if let Some(e) = error.as_object_mut() {
            e.remove("data");
        }
        let body = serde_json::json!({"jsonrpc": "2.0", "id": null, "error": error});
        return full(status, Some("application/json"), body.to_string());
    }
    full(StatusCode::OK, Some("application/json"), reply.to_string())
}

/// The `error` data key that keeps the HTTP status of an answer that was no JSON-RPC
/// response to its request.
pub const HTTP_STATUS: &str = "aptitude_http_status";

/// For each request of `body` (a JSON-RPC message or batch) that no message of `reply`
/// answers — a server that refused it at the HTTP level (`400 Bad Request: Server not
/// initialized`, with `id: null`) — a response to it that keeps what it got: the reply's
/// JSON-RPC error (or `-32603` and the status) with the status under [`HTTP_STATUS`], so
/// that a replay refuses it the same way.
fn unanswered(body: &[u8], reply: &[String], status: u16) -> Vec<serde_json::Value> {
    use serde_json::{Value, json};
    let parse = |text: &[u8]| match serde_json::from_slice::<Value>(text) {
        Ok(Value::Array(batch)) => batch,
        Ok(one) => vec![one],
        Err(_) => Vec::new(),
    };
    let replies: Vec<Value> = reply.iter().flat_map(|r| parse(r.as_bytes())).collect();
    let answered = |id: &Value| replies.iter().any(|r| r.get("id") == Some(id));
    let refusal = replies
        .iter()
        .find(|r| r.get("id").is_none_or(Value::is_null))
        .and_then(|r| r.get("error"))
        .cloned()
        .unwrap_or_else(|| json!({"code": -32603, "message": format!("HTTP {status}")}));
    parse(body)
        .iter()
        .filter(|m| m.get("method").is_some())
        .filter_map(|m| m.get("id").filter(|id| !id.is_null()))
        .filter(|id| !answered(id))
        .map(|id| {
            let mut error = refusal.clone();
            error["data"] = json!({ HTTP_STATUS: status });
            json!({"jsonrpc": "2.0", "id": id, "error": error})
        })
        .collect()
}

/// Where a forwarded request goes.
struct Upstream<'a> {
    url: &'a str,
    headers: &'a BTreeMap<String, String>,
    /// Whether the exchange is recorded.
    recorded: bool,
}

/// A forwarded server's answer: the request forwarded, the exchange copied when recorded.
async fn forward(
    state: &Arc<Mutex<State>>,
    name: &str,
    parts: hyper::http::request::Parts,
    body: Bytes,
    to: Upstream<'_>,
) -> Response<Body> {
    let Upstream {
        url,
        headers,
        recorded,
    } = to;
    let is_post = parts.method == Method::POST;
    let mut request = Request::builder().method(parts.method).uri(url);
    for (k, v) in &parts.headers {
        if crate::gateway::server::forwarded_request_header(k)
            && !headers.keys().any(|h| h.eq_ignore_ascii_case(k.as_str()))
        {
            request = request.header(k, v);
        }
    }
    for (k, v) in headers {
        if let (Ok(k), Ok(v)) = (
            HeaderName::try_from(k.as_str()),
            HeaderValue::try_from(v.as_str()),
        ) {
            request = request.header(k, v);
        }
    }
    request = request.header(header::ACCEPT_ENCODING, "identity");
    let Ok(request) = request.body(Full::new(body.clone())) else {
        let why = format!(
            "aptitude's MCP front: MCP server `{name}` has a URL or header it can not send"
        );
        return full(StatusCode::BAD_GATEWAY, None, why);
    };
    let reply = match crate::gateway::server::send(url.starts_with("https://"), request).await {
        Ok(reply) => reply,
        Err(why) => {
            let why = format!("aptitude's MCP front could not reach MCP server `{name}`: {why}");
            return full(StatusCode::BAD_GATEWAY, None, why);
        }
    };
    let (parts, reply_body) = reply.into_parts();
    let mut response = if recorded && is_post {
        // The reply streams to the agent as it comes (a server may ask the client
        // something mid-reply); the exchange is logged whole once it ends, request and
        // replies together, so that concurrent sessions' ids never cross.
        let event_stream = parts
            .headers
            .get(header::CONTENT_TYPE)
            .and_then(|t| t.to_str().ok())
            .is_some_and(|t| t.starts_with("text/event-stream"));
        let (state, name, status) = (Arc::clone(state), name.to_owned(), parts.status.as_u16());
        let done = move |seen: Option<Vec<u8>>| {
            // A reply past the bound is not logged: its replay diverges, saying so.
            let Some(seen) = seen else { return };
            let messages = messages_of(&seen, event_stream);
            let mut state = lock(&state);
            let Some(s) = state.servers.get_mut(&name) else {
                return;
            };
            log_line(&mut s.log, "> ", &String::from_utf8_lossy(&body));
            for m in &messages {
                log_line(&mut s.log, "< ", m);
            }
            for m in unanswered(&body, &messages, status) {
                log_line(&mut s.log, "< ", &m.to_string());
            }
        };
        Response::new(
            Tee {
                inner: reply_body,
                seen: Some(Vec::new()),
                done: Some(Box::new(done)),
            }
            .boxed(),
        )
    } else {
        Response::new(
            reply_body
                .map_err(|e| Box::new(e) as Box<dyn std::error::Error + Send + Sync>)
                .boxed(),
        )
    };
    *response.status_mut() = parts.status;
    for (k, v) in &parts.headers {
        let hop = crate::gateway::cassette::HOP_BY_HOP.contains(&k.as_str());
        if !hop && k != header::CONTENT_LENGTH {
            response.headers_mut().append(k, v.clone());
        }
    }
    response
}

/// The JSON-RPC messages of a reply body: the events' data of an event stream, else the
/// body.
fn messages_of(bytes: &[u8], event_stream: bool) -> Vec<String> {
    if event_stream {
        let mut reader = SseReader::default();
        let mut events = Vec::new();
        reader.push(bytes, |e| events.push(e.data));
        reader.finish(|e| events.push(e.data));
        events.retain(|d| !d.trim().is_empty());
        events
    } else if bytes.is_empty() {
        Vec::new()
    } else {
        vec![String::from_utf8_lossy(bytes).into_owned()]
    }
}

/// What a tee hands over when its body ends: the bytes it saw, `None` past the bound.
type Done = Box<dyn FnOnce(Option<Vec<u8>>) + Send + Sync>;

/// A reply body passed through as it comes, keeping a copy of its bytes (up to
/// [`MAX_BODY_BYTES`]) for `done`, called once when the body ends, fails or is dropped.
struct Tee {
    inner: Incoming,
    seen: Option<Vec<u8>>,
    done: Option<Done>,
}

impl Tee {
    fn finish(&mut self) {
        if let Some(done) = self.done.take() {
            done(self.seen.take());
        }
    }
}

impl Drop for Tee {
    fn drop(&mut self) {
        self.finish();
    }
}

impl hyper::body::Body for Tee {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        use std::task::Poll;
        let this = &mut *self;
        match std::pin::Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let (Some(data), Some(seen)) = (frame.data_ref(), this.seen.as_mut()) {
                    if seen.len() + data.len() > MAX_BODY_BYTES {
                        this.seen = None;
                    } else {
                        seen.extend_from_slice(data);
                    }
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => {
                this.finish();
                Poll::Ready(Some(Err(Box::new(e))))
            }
            Poll::Ready(None) => {
                this.finish();
                Poll::Ready(None)
            }
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_request_refused_at_the_http_level_is_recorded_with_its_status() {
        let body = br#"{"jsonrpc":"2.0","id":0,"method":"server/discover"}"#;
        let reply = vec![
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: Server not initialized"}}"#.to_owned(),
        ];
        let made = unanswered(body, &reply, 400);
        assert_eq!(
            made,
            vec![
                json!({"jsonrpc": "2.0", "id": 0, "error": {"code": -32000, "message": "Bad Request: Server not initialized", "data": {HTTP_STATUS: 400}}})
            ]
        );
        // An answered request, and a notification, need nothing.
        let answered = vec![r#"{"jsonrpc":"2.0","id":0,"result":{}}"#.to_owned()];
        assert!(unanswered(body, &answered, 200).is_empty());
        assert!(
            unanswered(
                br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                &[],
                202
            )
            .is_empty()
        );
        // No JSON-RPC error to keep: the status says it.
        let bare = unanswered(body, &[], 502);
        assert_eq!(bare[0]["error"]["message"], "HTTP 502");
    }
}
