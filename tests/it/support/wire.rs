//! The scripted model's other wire protocols: the OpenAI Responses API, the OpenAI Chat
//! Completions API and Gemini's `streamGenerateContent`, as the pinned agent CLIs speak them
//! (`../shared/AGENT_CLIS.md`):
//!
//! | route | protocol | clients |
//! |---|---|---|
//! | `POST /v1/responses` | Responses, SSE `response.created`, `response.output_item.added` / `.done`, `response.output_text.delta`, `response.completed` | Codex CLI 0.169.0 |
//! | `POST /v1/chat/completions` | Chat Completions, SSE `chat.completion.chunk` deltas, a usage chunk, `data: [DONE]` | Qwen Code 0.24.4, Copilot CLI 1.0.102, opencode 1.18.33, pi 0.73.1 Aider 0.86.2 |
//! | `POST /v1beta/models/{model}:streamGenerateContent?alt=sse` | Gemini, SSE `data:` chunks of `candidates` + `usageMetadata` | Gemini CLI 0.61.0 |
//!
//! Scripts are shared with the Anthropic protocol ([`super::model`]): a [`Turn`] names the
//! agent's own tool (`exec_command`, `run_shell_command`, `bash`…) with its own arguments.
//! The marker is looked for in the user messages before the first reply (agents put their
//! context in a first user message and the prompt in the next), and turn N answers the
//! request that already holds N replies. A request that offers no tools while the script's
//! turn is a tool call (opencode's title request, a one-shot grading call) gets a short
//! text instead of consuming nothing it could act on; one that asks for structured output
//! (Gemini's `responseJsonSchema`: Gemini CLI's model router) gets JSON that follows the
//! schema, as a real model sends.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

use super::model::{Shared, Turn};

/// Adds the routes of the three protocols.
pub(super) fn routes(router: Router<Arc<Shared>>) -> Router<Arc<Shared>> {
    router
        .route("/v1/responses", post(responses))
        .route("/v1/chat/completions", post(chat_completions))
        .route("/v1beta/models/{*model_and_method}", post(gemini))
}

/// The three protocols.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Protocol {
    Responses,
    Chat,
    Gemini,
}

/// What every handler reads off a request before the protocol's encoder runs.
struct Parsed {
    /// The user text before the first reply (where markers are looked for).
    first: String,
    /// How many replies the conversation already holds.
    turn: usize,
    /// Whether the request offers tools.
    has_tools: bool,
    /// The model asked for.
    model: String,
    /// Whether an event stream is asked for.
    stream: bool,
    /// The JSON schema the reply must follow (Gemini's
    /// `generationConfig.responseJsonSchema`), when the request asks for structured output.
    schema: Option<Value>,
}

/// Splits a conversation into (user text before the first reply, number of replies),
/// where consecutive reply items count as one reply (a turn with several tool calls).
///
/// The conversation starts at the first user item holding a scripted marker, when one
/// does: Aider sends few-shot example exchanges (user, assistant, …) before the real
/// prompt, and those replies are not the script's.
fn conversation<'a>(
    items: impl Iterator<Item = &'a Value>,
    is_reply: impl Fn(&Value) -> bool,
    is_user: impl Fn(&Value) -> bool,
    is_scripted: impl Fn(&str) -> bool,
) -> (String, usize) {
    let items: Vec<&Value> = items.collect();
    let start = items
        .iter()
        .position(|i| is_user(i) && is_scripted(&i.to_string()))
        .unwrap_or(0);
    let mut first = String::new();
    let mut replies = 0;
    let mut in_reply = false;
    for item in &items[start..] {
        if is_reply(item) {
            if !in_reply {
                replies += 1;
            }
            in_reply = true;
        } else {
            in_reply = false;
            if replies == 0 && is_user(item) {
                first.push_str(&item.to_string());
            }
        }
    }
    (first, replies)
}

fn role(item: &Value) -> Option<&str> {
    item.get("role").and_then(Value::as_str)
}

fn array<'a>(body: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    body.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// What an OpenAI request (Responses or Chat Completions) says: its conversation is the
/// array under `key`, whose reply items `is_reply` tells apart.
fn openai_request(
    shared: &Shared,
    body: &Value,
    key: &str,
    is_reply: impl Fn(&Value) -> bool,
) -> Parsed {
    let (first, turn) = conversation(
        array(body, key),
        is_reply,
        |item| role(item) == Some("user"),
        |text| shared.is_scripted(text),
    );
    Parsed {
        first,
        turn,
        has_tools: array(body, "tools").next().is_some(),
        model: model_of(body),
        stream: body.get("stream").and_then(Value::as_bool).unwrap_or(false),
        schema: None,
    }
}

async fn responses(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: axum::http::HeaderMap,
    body: Bytes,
) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let parsed = openai_request(&shared, &body, "input", |item| {
        matches!(
            item.get("type").and_then(Value::as_str),
            Some("function_call" | "reasoning")
        ) || role(item) == Some("assistant")
    });
    handle(&shared, uri, &headers, body, parsed, Protocol::Responses).await
}

async fn chat_completions(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: axum::http::HeaderMap,
    body: Bytes,
) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let parsed = openai_request(&shared, &body, "messages", |m| role(m) == Some("assistant"));
    handle(&shared, uri, &headers, body, parsed, Protocol::Chat).await
}

async fn gemini(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: axum::http::HeaderMap,
    body: Bytes,
) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let (first, turn) = conversation(
        array(&body, "contents"),
        |c| role(c) == Some("model"),
        |c| role(c) == Some("user"),
        |text| shared.is_scripted(text),
    );
    // `models/{model}:{method}`: only the streaming method streams.
    let path = uri.path().rsplit('/').next().unwrap_or("");
    let (model, method) = path.split_once(':').unwrap_or((path, ""));
    let has_tools = array(&body, "tools").any(|t| {
        t.get("functionDeclarations")
            .and_then(Value::as_array)
            .is_some_and(|d| !d.is_empty())
    });
    let parsed = Parsed {
        first,
        turn,
        has_tools,
        model: model.to_owned(),
        stream: method == "streamGenerateContent",
        schema: body
            .pointer("/generationConfig/responseJsonSchema")
            .or(body.pointer("/generationConfig/responseSchema"))
            .cloned(),
    };
    handle(&shared, uri, &headers, body, parsed, Protocol::Gemini).await
}

/// The smallest value that follows `schema` (OpenAPI-style types, upper or lower case):
/// every required property, the first of an `enum`, a `minimum` or 1 for numbers,
/// `"scripted"` for strings.
fn schema_instance(schema: &Value) -> Value {
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    let kind = schema["type"]
        .as_str()
        .unwrap_or("object")
        .to_ascii_lowercase();
    match kind.as_str() {
        "string" => json!("scripted"),
        "integer" | "number" => schema.get("minimum").cloned().unwrap_or(json!(1)),
        "boolean" => json!(false),
        "array" => json!([]),
        _ => {
            let properties = schema["properties"].as_object();
            let required: Vec<&str> = schema["required"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let object: serde_json::Map<String, Value> = properties
                .into_iter()
                .flatten()
                .filter(|(name, _)| required.is_empty() || required.contains(&name.as_str()))
                .map(|(name, property)| (name.clone(), schema_instance(property)))
                .collect();
            Value::Object(object)
        }
    }
}

fn model_of(body: &Value) -> String {
    body.get("model")
        .and_then(Value::as_str)
        .unwrap_or("scripted")
        .to_owned()
}

async fn handle(
    shared: &Shared,
    uri: Uri,
    headers: &axum::http::HeaderMap,
    body: Value,
    parsed: Parsed,
    protocol: Protocol,
) -> Response {
    let turn = shared.next_turn(
        uri.to_string(),
        headers,
        &parsed.first,
        parsed.turn,
        parsed.has_tools,
        body,
    );
    let turn = shared.ungate(turn).await;
    respond(turn, &parsed, protocol).await
}

/// An HTTP error with `protocol`'s error body: Gemini's `{"error": {code, message,
/// status}}`, OpenAI's `{"error": {message, type, code}}`.
fn http_error(status: u16, message: &str, protocol: Protocol) -> impl IntoResponse {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let body = match protocol {
        Protocol::Gemini => json!({"error": {
            "code": status.as_u16(), "message": message,
            "status": match status {
                StatusCode::TOO_MANY_REQUESTS => "RESOURCE_EXHAUSTED",
                StatusCode::SERVICE_UNAVAILABLE => "UNAVAILABLE",
                _ => "INTERNAL",
            }
        }}),
        Protocol::Responses | Protocol::Chat => json!({"error": {
            "message": message,
            "type": match status.as_u16() {
                429 => "rate_limit_exceeded",
                400..=499 => "invalid_request_error",
                _ => "server_error",
            },
            "code": null
        }}),
    };
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
}

/// A scripted reply in `protocol`'s form.
async fn respond(turn: Turn, parsed: &Parsed, protocol: Protocol) -> Response {
    match turn {
        Turn::Delay(d, inner) => {
            tokio::time::sleep(d).await;
            Box::pin(respond(*inner, parsed, protocol)).await
        }
        Turn::Sequence(_) | Turn::After(..) | Turn::IfRequestHas(..) => {
            Box::pin(respond(
                Turn::Text("(scripted model: nested sequence)".into()),
                parsed,
                protocol,
            ))
            .await
        }
        Turn::Hang => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            StatusCode::GATEWAY_TIMEOUT.into_response()
        }
        Turn::Recorded(recorded) => super::recorded::response(&recorded),
        Turn::Http(status, message) => http_error(status, message, protocol).into_response(),
        Turn::HttpRetryAfter(status, seconds, message) => {
            let mut response = http_error(status, message, protocol).into_response();
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, header::HeaderValue::from(seconds));
            response
        }
        Turn::Drop => {
            let first = match protocol {
                Protocol::Responses => sse_event(
                    "response.created",
                    &json!({"type": "response.created", "response": response_object(parsed, "in_progress", &[])}),
                ),
                Protocol::Chat | Protocol::Gemini => "data: {}\n\n".to_owned(),
            };
            let chunks: Vec<Result<Bytes, std::io::Error>> = vec![
                Ok(Bytes::from(first)),
                Err(std::io::Error::new(
                    std::io::ErrorKind::ConnectionReset,
                    "scripted drop",
                )),
            ];
            event_stream(Body::from_stream(futures_util::stream::iter(chunks)))
        }
        // A tools-less request for structured output (Gemini CLI's model router asks a
        // flash-lite model for `{complexity_reasoning, complexity_score}` before each
        // turn when no model is given) gets what a real model sends: JSON that follows
        // the schema. A text that is not would be retried with back-off, five times.
        Turn::Tool(..) | Turn::Tools(..) if !parsed.has_tools && parsed.schema.is_some() => {
            let instance = schema_instance(parsed.schema.as_ref().unwrap_or(&Value::Null));
            encode(&[], Some(&instance.to_string()), parsed, protocol)
        }
        Turn::Tool(..) | Turn::Tools(..) if !parsed.has_tools => {
            Box::pin(respond(
                Turn::Text("(scripted model: this request offers no tools)".into()),
                parsed,
                protocol,
            ))
            .await
        }
        Turn::Tool(name, input) => encode(&[(name, input)], None, parsed, protocol),
        Turn::Tools(calls) => encode(&calls, None, parsed, protocol),
        Turn::Text(text) => encode(&[], Some(&text), parsed, protocol),
        Turn::ToolId(..) => encode(
            &[],
            Some("(scripted model: a tool call with a given id is Messages-only)"),
            parsed,
            protocol,
        ),
        // Responses' web search, as OpenAI streams it (Codex CLI 0.169.0 offers the
        // `web_search` tool on every request): a `web_search_call` item whose `action`
        // holds no query when it is added, then the query when it is done.
        Turn::Server {
            name: "web_search",
            input,
            text,
            ..
        } if protocol == Protocol::Responses => {
            let search = json!({"type": "web_search_call", "id": format!("ws_{:02}_0", parsed.turn),
                "status": "completed", "action": {"type": "search", "query": input["query"]}});
            let (whole, events) = responses_items(&[search], &[], Some(&text), parsed);
            if !parsed.stream {
                return axum::Json(whole).into_response();
            }
            let chunks: Vec<Result<Bytes, Infallible>> = vec![Ok(Bytes::from(events))];
            event_stream(Body::from_stream(futures_util::stream::iter(chunks)))
        }
        Turn::Server { .. } => encode(
            &[],
            Some("(scripted model: this server tool is not scripted in this protocol)"),
            parsed,
            protocol,
        ),
    }
}

fn event_stream(body: Body) -> Response {
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(body)
        .unwrap()
}

fn sse_event(event: &str, data: &Value) -> String {
    format!("event: {event}\ndata: {data}\n\n")
}

fn sse_data(data: &Value) -> String {
    format!("data: {data}\n\n")
}

fn call_id(parsed: &Parsed, i: usize) -> String {
    format!("call_{:02}_{i}", parsed.turn)
}

/// A Responses API `response` object.
fn response_object(parsed: &Parsed, status: &str, output: &[Value]) -> Value {
    json!({
        "id": format!("resp_{:02}", parsed.turn), "object": "response", "created_at": 1_700_000_000,
        "status": status, "model": parsed.model, "output": output,
        "usage": {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 20},
                  "output_tokens": 7, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 107}
    })
}

/// Tool calls or a text answer, streamed or whole.
fn encode(
    calls: &[(&'static str, Value)],
    text: Option<&str>,
    parsed: &Parsed,
    protocol: Protocol,
) -> Response {
    let (whole, events) = match protocol {
        Protocol::Responses => responses_reply(calls, text, parsed),
        Protocol::Chat => chat_reply(calls, text, parsed),
        Protocol::Gemini => gemini_reply(calls, text, parsed),
    };
    if !parsed.stream {
        return axum::Json(whole).into_response();
    }
    let chunks: Vec<Result<Bytes, Infallible>> = vec![Ok(Bytes::from(events))];
    event_stream(Body::from_stream(futures_util::stream::iter(chunks)))
}

fn responses_reply(
    calls: &[(&'static str, Value)],
    text: Option<&str>,
    parsed: &Parsed,
) -> (Value, String) {
    responses_items(&[], calls, text, parsed)
}

/// A Responses reply: the server-side items given (`web_search_call`), then the function
/// calls, then the text.
fn responses_items(
    server: &[Value],
    calls: &[(&'static str, Value)],
    text: Option<&str>,
    parsed: &Parsed,
) -> (Value, String) {
    let mut items: Vec<Value> = server.to_vec();
    items.extend(calls.iter().enumerate().map(|(i, (name, input))| {
        let mut item = json!({"type": "function_call", "id": format!("fc_{:02}_{i}", parsed.turn),
                   "call_id": call_id(parsed, i), "name": name,
                   "arguments": input.to_string(), "status": "completed"});
        // `namespace::tool` is a tool of a namespace (Codex offers each MCP server's
        // tools as a `namespace` tool `mcp__<server>`).
        if let Some((namespace, tool)) = name.split_once("::") {
            item["namespace"] = json!(namespace);
            item["name"] = json!(tool);
        }
        item
    }));
    if let Some(text) = text {
        items.push(
            json!({"type": "message", "id": format!("msg_{:02}", parsed.turn),
            "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}),
        );
    }
    let mut events = sse_event(
        "response.created",
        &json!({"type": "response.created", "response": response_object(parsed, "in_progress", &[])}),
    );
    for (index, item) in items.iter().enumerate() {
        let mut added = item.clone();
        added["status"] = json!("in_progress");
        if item["type"] == "message" {
            added["content"] = json!([]);
        } else if item["type"] == "web_search_call" {
            added["action"] = json!({"type": "search"});
        } else {
            added["arguments"] = json!("");
        }
        events.push_str(&sse_event(
            "response.output_item.added",
            &json!({"type": "response.output_item.added", "output_index": index, "item": added}),
        ));
        if item["type"] == "message" {
            let delta = &item["content"][0]["text"];
            events.push_str(&sse_event(
                "response.output_text.delta",
                &json!({"type": "response.output_text.delta", "item_id": item["id"],
                        "output_index": index, "content_index": 0, "delta": delta}),
            ));
        } else if item["type"] == "web_search_call" {
            for stage in ["in_progress", "searching", "completed"] {
                let kind = format!("response.web_search_call.{stage}");
                events.push_str(&sse_event(
                    &kind,
                    &json!({"type": kind, "item_id": item["id"], "output_index": index}),
                ));
            }
        } else {
            events.push_str(&sse_event(
                "response.function_call_arguments.delta",
                &json!({"type": "response.function_call_arguments.delta", "item_id": item["id"],
                        "output_index": index, "delta": item["arguments"]}),
            ));
        }
        events.push_str(&sse_event(
            "response.output_item.done",
            &json!({"type": "response.output_item.done", "output_index": index, "item": item}),
        ));
    }
    let whole = response_object(parsed, "completed", &items);
    events.push_str(&sse_event(
        "response.completed",
        &json!({"type": "response.completed", "response": whole}),
    ));
    (whole, events)
}

fn chat_reply(
    calls: &[(&'static str, Value)],
    text: Option<&str>,
    parsed: &Parsed,
) -> (Value, String) {
    let id = format!("chatcmpl-{:02}", parsed.turn);
    let tool_calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, input))| {
            json!({"index": i, "id": call_id(parsed, i), "type": "function",
                   "function": {"name": name, "arguments": input.to_string()}})
        })
        .collect();
    let finish = if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    let usage = json!({"prompt_tokens": 100, "completion_tokens": 7, "total_tokens": 107,
                       "prompt_tokens_details": {"cached_tokens": 20}});
    let chunk = |choices: Value, usage: Value| {
        json!({"id": id, "object": "chat.completion.chunk", "created": 1_700_000_000,
               "model": parsed.model, "choices": choices, "usage": usage})
    };
    let mut delta = json!({"role": "assistant", "content": text});
    if !tool_calls.is_empty() {
        delta["tool_calls"] = json!(tool_calls);
    }
    let mut events = sse_data(&chunk(
        json!([{"index": 0, "delta": delta, "finish_reason": null}]),
        Value::Null,
    ));
    events.push_str(&sse_data(&chunk(
        json!([{"index": 0, "delta": {}, "finish_reason": finish}]),
        Value::Null,
    )));
    events.push_str(&sse_data(&chunk(json!([]), usage.clone())));
    events.push_str("data: [DONE]\n\n");
    let mut message = json!({"role": "assistant", "content": text});
    if !tool_calls.is_empty() {
        let whole_calls: Vec<Value> = tool_calls
            .into_iter()
            .map(|mut c| {
                c.as_object_mut().map(|o| o.remove("index"));
                c
            })
            .collect();
        message["tool_calls"] = json!(whole_calls);
    }
    let whole = json!({"id": id, "object": "chat.completion", "created": 1_700_000_000,
        "model": parsed.model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage});
    (whole, events)
}

fn gemini_reply(
    calls: &[(&'static str, Value)],
    text: Option<&str>,
    parsed: &Parsed,
) -> (Value, String) {
    let mut parts: Vec<Value> = calls
        .iter()
        .map(|(name, args)| json!({"functionCall": {"name": name, "args": args}}))
        .collect();
    if let Some(text) = text {
        parts.push(json!({"text": text}));
    }
    let whole = json!({
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 7, "totalTokenCount": 107,
                          "cachedContentTokenCount": 20},
        "modelVersion": parsed.model
    });
    (whole.clone(), sse_data(&whole))
}
