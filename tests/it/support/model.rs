//! The scripted model: aptitude's one test double.
//!
//! A model server on 127.0.0.1 that speaks each provider's wire protocol as the real agent
//! CLIs use it. This file holds the scripts and the Anthropic Messages API as Claude Code
//! 2.1.328 uses it (`POST /v1/messages?beta=true`, `stream: true`, SSE events
//! `message_start`, `content_block_start` / `content_block_delta` / `content_block_stop`,
//! `message_delta`, `message_stop`; `POST /v1/messages/count_tokens`); [`super::wire`]
//! holds the OpenAI Responses and Chat Completions APIs and Gemini's
//! `streamGenerateContent`. The agent is real; only its model is scripted.
//!
//! A script is a list of turns, chosen by a marker word found in the conversation's first
//! user message (so that tests running at once each get their own script). Turn N is the
//! reply to the request holding N assistant messages, which makes a retried request get
//! the same reply again. Turns script tool calls, text, HTTP errors, delays, dropped
//! connections and hangs, and branch on what the request holds. Every request is recorded.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

/// One scripted reply.
#[derive(Debug, Clone)]
pub enum Turn {
    /// One `tool_use` block.
    Tool(&'static str, Value),
    /// One `tool_use` block with the id given (Messages only): a model that reuses an id.
    ToolId(&'static str, &'static str, Value),
    /// Several `tool_use` blocks in one message.
    Tools(Vec<(&'static str, Value)>),
    /// A tool the API runs itself, then a text answer, in one reply (Messages only), as
    /// Anthropic streams it: a `server_tool_use` block {id `srvtoolu_…`, name, input}, its
    /// result block (type, e.g. `web_search_tool_result`, and content, whole in its
    /// `content_block_start`), then the text; `usage.server_tool_use` counts web searches.
    Server {
        name: &'static str,
        input: Value,
        result: &'static str,
        content: Value,
        text: String,
    },
    /// A text answer (ends the agent's turn).
    Text(String),
    /// An HTTP error with the Anthropic error body.
    Http(u16, &'static str),
    /// The same error with a `retry-after` header (whole seconds, RFC 9110 §10.2.3), as a
    /// provider sends it with a 503 or 429: CLIs whose retries can not be turned off
    /// (opencode 1.18.33, Qwen Code 0.24.4 on 429/503) wait that long instead of their
    /// exponential back-off, so a failing model is still retried, just not for minutes.
    HttpRetryAfter(u16, u32, &'static str),
    /// Waits, then replies with the inner turn (scripted latency, as the run-overhead
    /// benchmark uses it).
    Delay(Duration, Box<Turn>),
    /// Starts the event stream, then drops the connection.
    Drop,
    /// Never answers.
    Hang,
    /// Successive requests for this turn get successive replies (the last one repeats):
    /// a retried request, or several grading calls with the same prompt (judge votes).
    Sequence(Vec<Turn>),
    /// Waits until a request of another script's turn has come in, then replies with the
    /// inner turn: orders agents running at once by an event, not by a delay.
    After(&'static str, usize, Box<Turn>),
    /// Branches on what the agent sent: the first turn when the request's JSON body (system
    /// prompt, messages, tools) contains the text, else the second — a model that obeys an
    /// instruction only when the agent passed it on (CLAUDE.md, AGENTS.md, a skill).
    IfRequestHas(&'static str, Box<Turn>, Box<Turn>),
    /// A real API's reply as it was recorded ([`super::recorded`]): its status, headers and
    /// bytes, in whatever protocol it was recorded in.
    Recorded(Arc<super::recorded::Recorded>),
}

/// A recorded request.
#[derive(Debug, Clone)]
pub struct Request {
    /// Path and query.
    pub path: String,
    /// The script it matched, if any.
    pub script: Option<String>,
    /// Assistant messages it held (the turn it asked for).
    pub turn: usize,
    /// Whether it offered tools (one-shot grading calls offer none).
    pub has_tools: bool,
    /// The JSON body.
    pub body: Value,
    /// The request's headers (names lowercase), as the server got them.
    pub headers: Vec<(String, String)>,
}

impl Request {
    /// Every header value, for checks on the credentials a request carried.
    pub fn header_values(&self) -> impl Iterator<Item = &str> {
        self.headers.iter().map(|(_, v)| v.as_str())
    }

    /// Whether a header carried one of the gateway's placeholder keys: the agent's key
    /// reached the model without the gateway's swap.
    pub fn carries_placeholder(&self) -> bool {
        self.header_values()
            .any(|v| v.contains("aptitude-gateway-placeholder"))
    }
}

#[derive(Default)]
pub(super) struct Shared {
    scripts: Mutex<Vec<(String, Vec<Turn>)>>,
    requests: Mutex<Vec<Request>>,
    /// How many requests each (script, turn) holding a [`Turn::Sequence`] has served.
    served: Mutex<std::collections::HashMap<(String, usize), usize>>,
    /// Woken whenever a request is recorded (for [`Turn::After`]).
    recorded: tokio::sync::Notify,
}

impl Shared {
    /// Waits out every [`Turn::After`] gate of `turn`, returning the turn to reply with.
    pub(super) async fn ungate(&self, mut turn: Turn) -> Turn {
        while let Turn::After(marker, wanted, then) = turn {
            loop {
                let notified = self.recorded.notified();
                tokio::pin!(notified);
                notified.as_mut().enable();
                let seen = self
                    .requests
                    .lock()
                    .unwrap()
                    .iter()
                    .any(|r| r.script.as_deref() == Some(marker) && r.turn >= wanted);
                if seen {
                    break;
                }
                notified.await;
            }
            turn = *then;
        }
        turn
    }

    /// Whether `text` holds a scripted marker.
    pub(super) fn is_scripted(&self, text: &str) -> bool {
        self.scripts
            .lock()
            .unwrap()
            .iter()
            .any(|(marker, _)| text.contains(marker.as_str()))
    }

    /// Records a request and returns its scripted reply: the turn numbered `turn` of the
    /// script whose marker is in `first` (the conversation's first user text), or a text
    /// saying that nothing was scripted.
    pub(super) fn next_turn(
        &self,
        path: String,
        headers: &axum::http::HeaderMap,
        first: &str,
        turn: usize,
        has_tools: bool,
        body: Value,
    ) -> Turn {
        let script = {
            let scripts = self.scripts.lock().unwrap();
            scripts
                .iter()
                .find(|(marker, _)| first.contains(marker.as_str()))
                .map(|(marker, turns)| (marker.clone(), turns.get(turn).cloned()))
        };
        // Branches resolve against the whole request, whatever turn they are nested in.
        let sent = body.to_string();
        let branch = |turn: Turn| resolve_branches(turn, &sent);
        self.requests.lock().unwrap().push(Request {
            path,
            script: script.as_ref().map(|(m, _)| m.clone()),
            turn,
            has_tools,
            body,
            headers: headers
                .iter()
                .map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap_or("").to_owned()))
                .collect(),
        });
        self.recorded.notify_waiters();
        branch(match script {
            Some((marker, Some(Turn::Sequence(replies)))) => {
                let mut served = self.served.lock().unwrap();
                let count = served.entry((marker, turn)).or_insert(0);
                let reply = replies
                    .get(*count)
                    .or(replies.last())
                    .cloned()
                    .unwrap_or(Turn::Text("(scripted model: empty sequence)".into()));
                *count += 1;
                reply
            }
            Some((_, Some(turn))) => turn,
            Some((marker, None)) => Turn::Text(format!(
                "(scripted model: script `{marker}` has no turn {turn})"
            )),
            None => Turn::Text("(scripted model: no script matches this conversation)".into()),
        })
    }
}

/// `turn` with every [`Turn::IfRequestHas`] (at its top, or under a delay or a gate)
/// replaced by the branch that `sent`, the request's JSON text, selects.
fn resolve_branches(turn: Turn, sent: &str) -> Turn {
    match turn {
        Turn::IfRequestHas(needle, then, otherwise) => {
            // JSON escapes quotes and line breaks in the body: look for the text as JSON
            // would write it.
            let escaped = Value::String(needle.to_owned()).to_string();
            let needle = escaped.trim_matches('"');
            resolve_branches(
                if sent.contains(needle) {
                    *then
                } else {
                    *otherwise
                },
                sent,
            )
        }
        Turn::Delay(d, inner) => Turn::Delay(d, Box::new(resolve_branches(*inner, sent))),
        Turn::After(marker, wanted, inner) => {
            Turn::After(marker, wanted, Box::new(resolve_branches(*inner, sent)))
        }
        other => other,
    }
}

/// A running scripted model; stops when dropped.
pub struct ScriptedModel {
    addr: SocketAddr,
    shared: Arc<Shared>,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl ScriptedModel {
    /// Starts a server on a free port of 127.0.0.1.
    pub fn start() -> Self {
        let shared = Arc::new(Shared::default());
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let state = Arc::clone(&shared);
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .expect("bind");
                addr_tx
                    .send(listener.local_addr().expect("addr"))
                    .expect("send addr");
                let app = super::wire::routes(
                    Router::new()
                        .route("/v1/messages", post(messages))
                        .route("/v1/messages/count_tokens", post(count_tokens)),
                )
                .fallback(not_found)
                .with_state(state);
                let _ = axum::serve(listener, app)
                    .with_graceful_shutdown(async {
                        let _ = stop_rx.await;
                    })
                    .await;
            });
        });
        let addr = addr_rx.recv().expect("server address");
        ScriptedModel {
            addr,
            shared,
            _stop: stop_tx,
        }
    }

    /// `http://127.0.0.1:PORT`, for `ANTHROPIC_BASE_URL`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Scripts the conversation whose first user message contains `marker`.
    pub fn script(&self, marker: &str, turns: Vec<Turn>) -> &Self {
        self.shared
            .scripts
            .lock()
            .unwrap()
            .push((marker.to_owned(), turns));
        self
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Request> {
        self.shared.requests.lock().unwrap().clone()
    }

    /// Requests that matched `marker`'s script.
    pub fn requests_for(&self, marker: &str) -> Vec<Request> {
        self.requests()
            .into_iter()
            .filter(|r| r.script.as_deref() == Some(marker))
            .collect()
    }

    /// The environment that points Claude Code at this server, with retries turned down
    /// so that scripted failures fail fast.
    pub fn claude_env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("ANTHROPIC_BASE_URL", self.base_url()),
            ("ANTHROPIC_API_KEY", "sk-ant-test-scripted".to_owned()),
            ("CLAUDE_CODE_MAX_RETRIES", "1".to_owned()),
        ]
    }
}

async fn not_found(uri: Uri) -> Response {
    (
        StatusCode::NOT_FOUND,
        format!("scripted model: no route for {uri}"),
    )
        .into_response()
}

async fn count_tokens() -> Response {
    axum::Json(json!({"input_tokens": 10})).into_response()
}

fn first_user_text(body: &Value) -> String {
    body.get("messages")
        .and_then(Value::as_array)
        .and_then(|m| {
            m.iter()
                .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
        })
        .map(Value::to_string)
        .unwrap_or_default()
}

async fn messages(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: axum::http::HeaderMap,
    body: Bytes,
) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let turn = body
        .get("messages")
        .and_then(Value::as_array)
        .map_or(0, |m| {
            m.iter()
                .filter(|m| m.get("role").and_then(Value::as_str) == Some("assistant"))
                .count()
        });
    let first = first_user_text(&body);
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("scripted")
        .to_owned();
    let stream = body.get("stream").and_then(Value::as_bool).unwrap_or(false);
    let has_tools = body
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty());
    let sent = body.to_string();
    let reply = shared.next_turn(uri.to_string(), &headers, &first, turn, has_tools, body);
    let reply = shared.ungate(reply).await;
    let reply = match working_directory(&sent) {
        Some(dir) => absolute_paths(reply, &dir),
        None => reply,
    };
    respond(reply, turn, &model, stream).await
}

/// The directory Claude Code names in its environment reminder (`Primary working
/// directory: /…`, Claude Code 2.1.x), if the request's JSON text names one.
fn working_directory(sent: &str) -> Option<String> {
    let (_, rest) = sent.split_once("Primary working directory: ")?;
    let dir = rest.split(['\n', '\\', '"']).next()?.trim();
    dir.starts_with('/').then(|| dir.to_owned())
}

/// `turn` with the relative `file_path` of each Read, Write, Edit or NotebookEdit call
/// made absolute under `dir`: a real model gives Claude Code's file tools the absolute
/// paths their schemas ask for (`/tmp/aptitude-ws-…/workspace/counter.txt`), so the
/// scripted one does too — a replay or a witness that only works for relative paths
/// fails the tests.
fn absolute_paths(turn: Turn, dir: &str) -> Turn {
    let fix = |name: &str, mut input: Value| {
        if matches!(
            name,
            "Read" | "Write" | "Edit" | "MultiEdit" | "NotebookEdit"
        ) && let Some(path) = input.get("file_path").and_then(Value::as_str)
            && !path.starts_with('/')
        {
            let absolute = format!("{}/{path}", dir.trim_end_matches('/'));
            input["file_path"] = Value::String(absolute);
        }
        input
    };
    match turn {
        Turn::Tool(name, input) => Turn::Tool(name, fix(name, input)),
        Turn::ToolId(id, name, input) => Turn::ToolId(id, name, fix(name, input)),
        Turn::Tools(calls) => Turn::Tools(
            calls
                .into_iter()
                .map(|(name, input)| (name, fix(name, input)))
                .collect(),
        ),
        other => other,
    }
}

fn sse(event: &str, data: &Value) -> String {
    format!("event: {event}\ndata: {data}\n\n")
}

fn message_start(turn: usize, model: &str) -> String {
    sse(
        "message_start",
        &json!({"type": "message_start", "message": {
            "id": format!("msg_{turn}"), "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 100, "output_tokens": 1, "cache_read_input_tokens": 20, "cache_creation_input_tokens": 0}
        }}),
    )
}

fn blocks(turn: &Turn, index: usize) -> (Vec<Value>, &'static str) {
    match turn {
        Turn::Tool(name, input) => (
            vec![json!({"type": "tool_use", "id": format!("toolu_{index:02}_0"), "name": name, "input": input})],
            "tool_use",
        ),
        Turn::Tools(calls) => (
            calls
                .iter()
                .enumerate()
                .map(|(i, (name, input))| json!({"type": "tool_use", "id": format!("toolu_{index:02}_{i}"), "name": name, "input": input}))
                .collect(),
            "tool_use",
        ),
        Turn::ToolId(id, name, input) => (
            vec![json!({"type": "tool_use", "id": id, "name": name, "input": input})],
            "tool_use",
        ),
        Turn::Text(text) => (vec![json!({"type": "text", "text": text})], "end_turn"),
        Turn::Server {
            name,
            input,
            result,
            content,
            text,
        } => {
            let id = format!("srvtoolu_{index:02}_0");
            (
                vec![
                    json!({"type": "server_tool_use", "id": id, "name": name, "input": input}),
                    json!({"type": result, "tool_use_id": id, "content": content}),
                    json!({"type": "text", "text": text}),
                ],
                "end_turn",
            )
        }
        _ => (Vec::new(), "end_turn"),
    }
}

/// An HTTP error with the Anthropic error body: `{"type": "error", "error": {"type", "message"}}`.
fn http_error(status: u16, message: &str) -> impl IntoResponse {
    let kind = match status {
        429 => "rate_limit_error",
        529 => "overloaded_error",
        _ => "api_error",
    };
    let body = json!({"type": "error", "error": {"type": kind, "message": message}});
    (
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
}

async fn respond(turn: Turn, index: usize, model: &str, stream: bool) -> Response {
    match turn {
        Turn::Delay(d, inner) => {
            tokio::time::sleep(d).await;
            Box::pin(respond(*inner, index, model, stream)).await
        }
        // Sequences, gates and branches are resolved by `Shared`; one nested elsewhere is
        // a scripting mistake, answered as such.
        Turn::Sequence(_) | Turn::After(..) | Turn::IfRequestHas(..) => {
            Box::pin(respond(
                Turn::Text("(scripted model: nested sequence)".into()),
                index,
                model,
                stream,
            ))
            .await
        }
        Turn::Hang => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            StatusCode::GATEWAY_TIMEOUT.into_response()
        }
        Turn::Recorded(recorded) => super::recorded::response(&recorded),
        Turn::Http(status, message) => http_error(status, message).into_response(),
        Turn::HttpRetryAfter(status, seconds, message) => {
            let mut response = http_error(status, message).into_response();
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, header::HeaderValue::from(seconds));
            response
        }
        Turn::Drop => {
            let first = Bytes::from(message_start(index, model));
            let chunks: Vec<Result<Bytes, std::io::Error>> = vec![
                Ok(first),
                Err(std::io::Error::new(
                    std::io::ErrorKind::ConnectionReset,
                    "scripted drop",
                )),
            ];
            let body = Body::from_stream(futures_util::stream::iter(chunks));
            Response::builder()
                .header(header::CONTENT_TYPE, "text/event-stream")
                .body(body)
                .unwrap()
        }
        ref t @ (Turn::Tool(..)
        | Turn::Tools(..)
        | Turn::ToolId(..)
        | Turn::Text(_)
        | Turn::Server { .. }) => {
            let (content, stop) = blocks(t, index);
            if !stream {
                let message = json!({
                    "id": format!("msg_{index}"), "type": "message", "role": "assistant", "model": model,
                    "content": content, "stop_reason": stop, "stop_sequence": null,
                    "usage": {"input_tokens": 100, "output_tokens": 7, "cache_read_input_tokens": 20, "cache_creation_input_tokens": 0}
                });
                return axum::Json(message).into_response();
            }
            let mut events = message_start(index, model);
            for (i, block) in content.iter().enumerate() {
                let (start, delta) = match block["type"].as_str() {
                    Some(kind @ ("tool_use" | "server_tool_use")) => (
                        json!({"type": kind, "id": block["id"], "name": block["name"], "input": {}}),
                        Some(
                            json!({"type": "input_json_delta", "partial_json": block["input"].to_string()}),
                        ),
                    ),
                    Some("text") => (
                        json!({"type": "text", "text": ""}),
                        Some(json!({"type": "text_delta", "text": block["text"]})),
                    ),
                    // A server tool's result comes whole in its start event.
                    _ => (block.clone(), None),
                };
                events.push_str(&sse(
                    "content_block_start",
                    &json!({"type": "content_block_start", "index": i, "content_block": start}),
                ));
                if let Some(delta) = delta {
                    events.push_str(&sse(
                        "content_block_delta",
                        &json!({"type": "content_block_delta", "index": i, "delta": delta}),
                    ));
                }
                events.push_str(&sse(
                    "content_block_stop",
                    &json!({"type": "content_block_stop", "index": i}),
                ));
            }
            let searches = content
                .iter()
                .filter(|b| b["type"] == "server_tool_use" && b["name"] == "web_search")
                .count();
            let mut usage = json!({"output_tokens": 7});
            if searches > 0 {
                usage["server_tool_use"] = json!({"web_search_requests": searches});
            }
            events.push_str(&sse(
                "message_delta",
                &json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": usage}),
            ));
            events.push_str(&sse("message_stop", &json!({"type": "message_stop"})));
            let chunks: Vec<Result<Bytes, Infallible>> = vec![Ok(Bytes::from(events))];
            Response::builder()
                .header(header::CONTENT_TYPE, "text/event-stream")
                .header(header::CACHE_CONTROL, "no-cache")
                .body(Body::from_stream(futures_util::stream::iter(chunks)))
                .unwrap()
        }
    }
}
