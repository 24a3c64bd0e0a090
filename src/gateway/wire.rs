//! The wire as witness: the tool calls each model reply asked for, and the tool results the
//! agent sent back, read from the bytes that crossed the gateway — evidence the agent can
//! not write, unlike its own output stream and session files.
//!
//! | protocol | a reply's tool calls | a request's history and results |
//! |---|---|---|
//! | Anthropic Messages | `content_block_start` `tool_use` {id, name} + `input_json_delta`s (or a whole message's `content[]`); also `server_tool_use` and `mcp_tool_use` (a tool the API runs itself: web search, tool search, an MCP connector), which agents show as calls | `messages[]`: assistant `tool_use` (`server_tool_use`, `mcp_tool_use`) blocks; user `tool_result` {tool_use_id, content, is_error} |
//! | OpenAI Responses | `response.output_item.done` `function_call` / `custom_tool_call` / `local_shell_call` / `shell_call` / `apply_patch_call` / `computer_call` {call_id} (or `response.completed`'s `output[]`); also the tools OpenAI runs itself, by their `id`: `web_search_call`, `file_search_call`, `code_interpreter_call`, `image_generation_call`, `mcp_call` | `input[]`: those items, and `*_output` {call_id, output} |
//! | OpenAI Chat Completions | `delta.tool_calls[]` by index {id, function {name, arguments}} (or a whole `message.tool_calls`) | `messages[]`: assistant `tool_calls`; `tool` {tool_call_id, content} |
//! | Gemini | `parts[].functionCall` {name, args, id?} | `contents[]`: model `functionCall`s; user `functionResponse` {name, id?, response}, paired by id or else by position |
//!
//! [`Wire`] keeps, per run, every call the model was served and the first result the agent
//! sent for each, and notes what can only be tampering:
//! - a request whose history holds a tool call no reply of the run asked for (a forged
//!   history: a conversation the gateway never served);
//! - one id used for two different calls;
//! - two requests answering the same turn with different results for one call (the turn's
//!   new results, not later re-sends of old ones, which agents may compact).
//!
//! Memory is bounded: at most [`MAX_CALLS`] calls and [`MAX_RESULT_BYTES`] of results are
//! kept; past that the wire is `partial` and says so.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use super::protocol::Protocol;
use super::sse::SseReader;

/// The most calls kept per run.
pub const MAX_CALLS: usize = 20_000;
/// The most bytes of tool results kept per run (each result's first 256 KiB).
pub const MAX_RESULT_BYTES: usize = 32 * 1024 * 1024;
/// The most bytes of one result kept.
const MAX_ONE_RESULT: usize = 256 * 1024;

/// A tool call as the model asked for it.
#[derive(Debug, Clone, PartialEq)]
pub struct WireCall {
    /// The call's id (`toolu_…`, `call_…`); `None` for a Gemini call that has none.
    pub id: Option<String>,
    /// The tool's name as the model called it.
    pub name: String,
    /// Its input; arguments that are not JSON are kept as a string.
    pub input: Value,
}

/// A tool result as the agent sent it back to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct WireResult {
    /// Its text (text parts joined with `\n`, images as `[image]`, a Gemini response's
    /// string values one per line), at most 256 KiB of it.
    pub text: String,
    /// The protocol's error flag where it has one (Anthropic's `is_error`, a Gemini
    /// response's `error`); `None` where the protocol carries none.
    pub is_error: Option<bool>,
}

/// What the wire shows that only tampering explains.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WireFinding {
    /// A request's history holds a call no reply asked for.
    ForgedHistory(String),
    /// One id was used for two different calls.
    DuplicateId(String),
    /// Two requests answered one call differently.
    ConflictingResult(String),
}

impl std::fmt::Display for WireFinding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WireFinding::ForgedHistory(s)
            | WireFinding::DuplicateId(s)
            | WireFinding::ConflictingResult(s) => f.write_str(s),
        }
    }
}

/// A run's wire: what its model was served and sent.
#[derive(Debug, Default)]
pub struct Wire {
    /// Every call the model asked for, in order.
    pub calls: Vec<WireCall>,
    by_id: HashMap<String, usize>,
    /// The first result sent for each call (by index in `calls`), and whether it came as
    /// a turn's new result.
    results: HashMap<usize, (WireResult, bool)>,
    /// Findings, in the order seen.
    pub findings: Vec<WireFinding>,
    /// Model requests read.
    pub requests: u32,
    /// Requests whose body could not be read as their protocol's JSON.
    pub unreadable: u32,
    result_bytes: usize,
    /// Whether a bound was reached (calls or results not kept).
    pub partial: bool,
    /// Of the skills looked for ([`Wire::look_for_skills`]), those some model request
    /// showed, in the order found; `None` when none was looked for.
    pub skills_shown: Option<Vec<String>>,
    /// The tools the model requests offered, with their parameter names
    /// ([`shown::note_tools`]).
    pub tools_shown: shown::ShownTools,
}

/// Every string of `value`, each followed by a space.
fn strings_of(value: &Value, out: &mut String) {
    match value {
        Value::String(s) => {
            out.push_str(s);
            out.push(' ');
        }
        Value::Array(items) => items.iter().for_each(|v| strings_of(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings_of(v, out)),
        _ => {}
    }
}

/// A short description of a call for findings: `Bash {"command":"rm -f x"}` (cut).
pub fn describe(name: &str, input: &Value) -> String {
    let input = input.to_string();
    format!("{name} {}", crate::shared::cut::chars(&input, 160).kept)
}

impl Wire {
    /// Notes which of `skills` — (name, text a request that showed it holds) — the model
    /// request `body` (its JSON) showed: a skill is shown when the request's text (every
    /// string of the body, whitespace runs as single spaces, so that an agent's line
    /// breaks do not hide it) holds its text. Agents show the skills they loaded in the
    /// system prompt, a skill tool's description or a first message.
    pub fn look_for_skills(&mut self, skills: &[(String, String)], body: &[u8]) {
        if let Some(shown) = &self.skills_shown
            && skills.iter().all(|(name, _)| shown.contains(name))
        {
            return;
        }
        let Ok(value) = serde_json::from_slice::<Value>(body) else {
            return;
        };
        let shown = self.skills_shown.get_or_insert_with(Vec::new);
        let mut text = String::new();
        strings_of(&value, &mut text);
        let text = crate::spec::routing::one_line(&text);
        for (name, needle) in skills {
            if !shown.contains(name) && text.contains(needle.as_str()) {
                shown.push(name.clone());
            }
        }
    }

    /// The result the agent sent for call `index` of [`Wire::calls`], if any.
    pub fn result(&self, index: usize) -> Option<&WireResult> {
        self.results.get(&index).map(|(r, _)| r)
    }

    /// The index of the call with `id`.
    pub fn by_id(&self, id: &str) -> Option<usize> {
        self.by_id.get(id).copied()
    }

    /// Notes the calls one reply asked for.
    pub fn served(&mut self, calls: Vec<WireCall>) {
        for call in calls {
            if let Some(id) = &call.id
                && let Some(&known) = self.by_id.get(id)
            {
                let was = &self.calls[known];
                if was.name != call.name || was.input != call.input {
                    self.findings.push(WireFinding::DuplicateId(format!(
                        "the model used the id `{id}` for two calls: {} and {}",
                        describe(&was.name, &was.input),
                        describe(&call.name, &call.input)
                    )));
                    self.calls.push(call);
                }
                // The same call again (a reply retried after a cut) is one call.
                continue;
            }
            if self.calls.len() >= MAX_CALLS {
                self.partial = true;
                return;
            }
            if let Some(id) = &call.id {
                self.by_id.insert(id.clone(), self.calls.len());
            }
            self.calls.push(call);
        }
    }

    /// The served call `call` stands for: by id, else (a call without an id, or an agent
    /// that renumbers ids) the first served call of the same name and input.
    fn find(&self, call: &WireCall) -> Option<usize> {
        if let Some(i) = call.id.as_deref().and_then(|id| self.by_id.get(id)) {
            return Some(*i);
        }
        self.calls
            .iter()
            .position(|c| c.name == call.name && same_input(&c.input, &call.input))
    }

    /// Notes model request number `number` of the run (1-based), as [`read_request`]
    /// read it (`None`: its body was not its protocol's JSON).
    pub fn sent(&mut self, number: u32, sent: Option<Sent>) {
        self.requests = self.requests.saturating_add(1);
        let Some(sent) = sent else {
            self.unreadable = self.unreadable.saturating_add(1);
            return;
        };
        let mut served_as = Vec::with_capacity(sent.calls.len());
        for call in &sent.calls {
            let found = self.find(call);
            match found {
                Some(i)
                    if self.calls[i].name == call.name
                        && same_input(&self.calls[i].input, &call.input) => {}
                Some(i) => {
                    let was = &self.calls[i];
                    self.findings.push(WireFinding::ForgedHistory(format!(
                        "model request {number} holds the call `{}` as {}, but the model asked for {}",
                        call.id.as_deref().unwrap_or("?"),
                        describe(&call.name, &call.input),
                        describe(&was.name, &was.input)
                    )));
                }
                None if self.partial => {}
                None => self.findings.push(WireFinding::ForgedHistory(format!(
                    "model request {number} holds a call no reply of the run asked for: {}",
                    describe(&call.name, &call.input)
                ))),
            }
            served_as.push(found);
        }
        for result in sent.results {
            let Some(Some(index)) = result.call.map(|c| served_as.get(c).copied().flatten()) else {
                continue;
            };
            self.note_result(number, index, result.result, result.tail);
        }
    }

    fn note_result(&mut self, number: u32, index: usize, result: WireResult, tail: bool) {
        match self.results.get_mut(&index) {
            Some((first, first_tail)) => {
                if tail && *first_tail && !same_result(first, &result) {
                    let call = &self.calls[index];
                    self.findings.push(WireFinding::ConflictingResult(format!(
                        "model request {number} answers {} with another result than an earlier request did",
                        describe(&call.name, &call.input)
                    )));
                } else if tail && !*first_tail {
                    *first = result;
                    *first_tail = true;
                }
            }
            None => {
                if self.result_bytes.saturating_add(result.text.len()) > MAX_RESULT_BYTES {
                    self.partial = true;
                    return;
                }
                self.result_bytes += result.text.len();
                self.results.insert(index, (result, tail));
            }
        }
    }
}

/// Whether two inputs are the same call's: equal JSON, a JSON string equal to the other's
/// value (arguments sent as a string), equal once `null` members are dropped, or one
/// holding every member of the other with the same value (an agent that fills in a
/// tool's defaults when it echoes or records the call: `{"command": "ls"}` and
/// `{"command": "ls", "timeout": 120000}`).
pub fn same_input(a: &Value, b: &Value) -> bool {
    if a == b {
        return true;
    }
    let parsed = |v: &Value| match v {
        Value::String(s) => serde_json::from_str::<Value>(s).ok(),
        other => Some(other.clone()),
    };
    match (parsed(a), parsed(b)) {
        (Some(a), Some(b)) => {
            let (a, b) = (without_nulls(&a), without_nulls(&b));
            a == b || subsumes(&a, &b) || subsumes(&b, &a)
        }
        _ => false,
    }
}

/// Whether `whole` holds every member of `part` with the same value (objects, at any
/// depth); other values must be equal.
fn subsumes(part: &Value, whole: &Value) -> bool {
    match (part, whole) {
        (Value::Object(p), Value::Object(w)) => p
            .iter()
            .all(|(k, v)| w.get(k).is_some_and(|wv| subsumes(v, wv))),
        (p, w) => p == w,
    }
}

fn without_nulls(v: &Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), without_nulls(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_nulls).collect()),
        other => other.clone(),
    }
}

fn same_result(a: &WireResult, b: &WireResult) -> bool {
    a.text == b.text && a.is_error.unwrap_or(false) == b.is_error.unwrap_or(false)
}

/// A request's conversation as far as the witness reads it ([`read_request`]).
#[derive(Debug, Default)]
pub struct Sent {
    /// The tool calls of the history's assistant turns, in order.
    calls: Vec<WireCall>,
    /// The tool results, each with the index of its call in `calls`.
    results: Vec<SentResult>,
}

#[derive(Debug)]
struct SentResult {
    call: Option<usize>,
    result: WireResult,
    /// Whether it is among the request's new results (after its last assistant turn).
    tail: bool,
}

fn str_at<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// Arguments sent as a JSON string, parsed (kept as the string when they are not JSON).
fn arguments(v: Option<&Value>) -> Value {
    match v {
        Some(Value::String(s)) if s.trim().is_empty() => Value::Object(Default::default()),
        Some(Value::String(s)) => {
            serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone()))
        }
        Some(other) => other.clone(),
        None => Value::Object(Default::default()),
    }
}

/// The text of a tool result's content: a string, or parts whose text is joined.
fn content_text(v: &Value) -> String {
    let text = match v {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .map(|p| match p {
                Value::String(s) => s.clone(),
                _ => match str_at(p, "text") {
                    Some(t) => t.to_owned(),
                    None if str_at(p, "type").is_some_and(|t| t.contains("image")) => {
                        "[image]".to_owned()
                    }
                    None => String::new(),
                },
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    crate::shared::cut::chars(&text, MAX_ONE_RESULT)
        .kept
        .to_owned()
}

/// Every string (and number) inside a value, one per line: a Gemini function response.
fn leaves(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        Value::Number(n) => {
            out.push_str(&n.to_string());
            out.push('\n');
        }
        Value::Array(items) => items.iter().for_each(|i| leaves(i, out)),
        Value::Object(map) => map.values().for_each(|i| leaves(i, out)),
        _ => {}
    }
}

/// Reads a model request's body in `protocol`: the calls of its history and the results
/// it sends; `None` when it is not that protocol's JSON.
pub fn read_request(protocol: Protocol, body: &[u8]) -> Option<Sent> {
    let v: Value = serde_json::from_slice(body).ok()?;
    Some(match protocol {
        Protocol::Anthropic => anthropic_request(v.get("messages")?.as_array()?),
        Protocol::Responses => responses_request(match v.get("input")? {
            Value::Array(items) => items,
            // A bare string prompt: no history.
            _ => return Some(Sent::default()),
        }),
        Protocol::Chat => chat_request(v.get("messages")?.as_array()?),
        Protocol::Gemini => gemini_request(v.get("contents")?.as_array()?),
    })
}

/// Index of the last item that is the assistant's, for telling a request's new results.
fn last_assistant(items: &[Value], is_assistant: impl Fn(&Value) -> bool) -> Option<usize> {
    items.iter().rposition(is_assistant)
}

/// Whether an Anthropic content block is a tool call: the agent's own (`tool_use`) or one the
/// API runs itself (`server_tool_use`: web search, web fetch, tool search, code execution;
/// `mcp_tool_use`: the MCP connector), which Claude Code shows as a call all the same.
fn is_anthropic_call(kind: &str) -> bool {
    matches!(kind, "tool_use" | "server_tool_use" | "mcp_tool_use")
}

fn anthropic_request(messages: &[Value]) -> Sent {
    let mut sent = Sent::default();
    let last = last_assistant(messages, |m| str_at(m, "role") == Some("assistant"));
    for (i, message) in messages.iter().enumerate() {
        let Some(blocks) = message.get("content").and_then(Value::as_array) else {
            continue;
        };
        let assistant = str_at(message, "role") == Some("assistant");
        for block in blocks {
            match str_at(block, "type") {
                Some(kind) if assistant && is_anthropic_call(kind) => sent.calls.push(WireCall {
                    id: str_at(block, "id").map(str::to_owned),
                    name: str_at(block, "name").unwrap_or_default().to_owned(),
                    input: block.get("input").cloned().unwrap_or(Value::Null),
                }),
                Some("tool_result") if !assistant => {
                    let id = str_at(block, "tool_use_id");
                    sent.results.push(SentResult {
                        call: id.and_then(|id| find_call(&sent.calls, id)),
                        result: WireResult {
                            text: content_text(block.get("content").unwrap_or(&Value::Null)),
                            is_error: Some(
                                block
                                    .get("is_error")
                                    .and_then(Value::as_bool)
                                    .unwrap_or(false),
                            ),
                        },
                        tail: last.is_none_or(|l| i > l),
                    });
                }
                _ => {}
            }
        }
    }
    sent
}

fn find_call(calls: &[WireCall], id: &str) -> Option<usize> {
    calls.iter().rposition(|c| c.id.as_deref() == Some(id))
}

/// A Responses `function_call`'s name, with its `namespace` when it has one: Codex CLI
/// 0.169.0 offers each MCP server's tools as a namespace `mcp__<server>`, so that the
/// call of `echo` in `mcp__everything` is `mcp__everything__echo`, as its stream names it.
fn namespaced(item: &Value) -> String {
    let name = str_at(item, "name").unwrap_or_default();
    match str_at(item, "namespace").filter(|n| !n.is_empty()) {
        Some(namespace) => format!("{namespace}__{name}"),
        None => name.to_owned(),
    }
}

/// A Responses output item that is a tool call, as a [`WireCall`]: the agent's own
/// (`function_call`, `custom_tool_call`, `local_shell_call`, `shell_call`,
/// `apply_patch_call`, `computer_call`: by `call_id`, answered by a `…_output` item) and
/// the ones OpenAI runs itself (`web_search_call` — Codex CLI 0.169.0 offers `web_search`
/// on every request —, `file_search_call`, `code_interpreter_call`,
/// `image_generation_call`, `mcp_call`: by their `id`, answered by no item). `None` for
/// any other item (messages, reasoning, `mcp_list_tools`).
fn responses_call(item: &Value) -> Option<WireCall> {
    let call_id = || str_at(item, "call_id").map(str::to_owned);
    let own_id = || str_at(item, "id").map(str::to_owned);
    let field = |key: &str| item.get(key).cloned().unwrap_or(Value::Null);
    let (id, name, input) = match str_at(item, "type")? {
        "function_call" => (
            call_id(),
            namespaced(item),
            arguments(item.get("arguments")),
        ),
        "custom_tool_call" => (
            call_id(),
            str_at(item, "name").unwrap_or_default().to_owned(),
            field("input"),
        ),
        "local_shell_call" => (call_id(), "local_shell".to_owned(), field("action")),
        "shell_call" => (call_id(), "shell".to_owned(), field("action")),
        "apply_patch_call" => (call_id(), "apply_patch".to_owned(), field("operation")),
        "computer_call" => (call_id(), "computer".to_owned(), field("action")),
        "web_search_call" => (own_id(), "web_search".to_owned(), field("action")),
        "file_search_call" => (own_id(), "file_search".to_owned(), field("queries")),
        "code_interpreter_call" => (own_id(), "code_interpreter".to_owned(), field("code")),
        "image_generation_call" => (
            own_id(),
            "image_generation".to_owned(),
            Value::Object(Default::default()),
        ),
        "mcp_call" => (
            own_id(),
            format!(
                "mcp__{}__{}",
                str_at(item, "server_label").unwrap_or("unknown"),
                str_at(item, "name").unwrap_or_default()
            ),
            arguments(item.get("arguments")),
        ),
        _ => return None,
    };
    Some(WireCall { id, name, input })
}

fn responses_request(items: &[Value]) -> Sent {
    let mut sent = Sent::default();
    let is_assistant = |item: &Value| {
        responses_call(item).is_some()
            || (str_at(item, "type") == Some("message")
                && str_at(item, "role") == Some("assistant"))
    };
    let last = last_assistant(items, is_assistant);
    for (i, item) in items.iter().enumerate() {
        let call_id = str_at(item, "call_id").map(str::to_owned);
        // A tool OpenAI ran itself comes back with no result the agent could have
        // changed, and agents re-send it their own way (Codex CLI drops its `id` and the
        // fields of `action` it does not know): the reply that asked for it is its witness.
        if let Some(call) = responses_call(item) {
            if call.id.is_some() && str_at(item, "call_id").is_some() {
                sent.calls.push(call);
            }
            continue;
        }
        if let Some(
            "function_call_output"
            | "custom_tool_call_output"
            | "local_shell_call_output"
            | "shell_call_output"
            | "apply_patch_call_output"
            | "computer_call_output",
        ) = str_at(item, "type")
        {
            sent.results.push(SentResult {
                call: call_id.as_deref().and_then(|id| find_call(&sent.calls, id)),
                result: WireResult {
                    text: content_text(item.get("output").unwrap_or(&Value::Null)),
                    is_error: None,
                },
                tail: last.is_none_or(|l| i > l),
            });
        }
    }
    sent
}

fn chat_request(messages: &[Value]) -> Sent {
    let mut sent = Sent::default();
    let last = last_assistant(messages, |m| str_at(m, "role") == Some("assistant"));
    for (i, message) in messages.iter().enumerate() {
        match str_at(message, "role") {
            Some("assistant") => {
                for call in message
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let function = call.get("function").unwrap_or(&Value::Null);
                    sent.calls.push(WireCall {
                        id: str_at(call, "id").map(str::to_owned),
                        name: str_at(function, "name").unwrap_or_default().to_owned(),
                        input: arguments(function.get("arguments")),
                    });
                }
            }
            Some("tool") => {
                let id = str_at(message, "tool_call_id");
                sent.results.push(SentResult {
                    call: id.and_then(|id| find_call(&sent.calls, id)),
                    result: WireResult {
                        text: content_text(message.get("content").unwrap_or(&Value::Null)),
                        is_error: None,
                    },
                    tail: last.is_none_or(|l| i > l),
                });
            }
            _ => {}
        }
    }
    sent
}

fn gemini_request(contents: &[Value]) -> Sent {
    let mut sent = Sent::default();
    let last = last_assistant(contents, |c| str_at(c, "role") == Some("model"));
    // The calls of the latest model turn, for pairing responses without ids.
    let mut turn_calls: Vec<usize> = Vec::new();
    for (i, content) in contents.iter().enumerate() {
        let parts = content.get("parts").and_then(Value::as_array);
        if str_at(content, "role") == Some("model") {
            turn_calls.clear();
            for call in parts
                .into_iter()
                .flatten()
                .filter_map(|p| p.get("functionCall"))
            {
                turn_calls.push(sent.calls.len());
                sent.calls.push(WireCall {
                    id: str_at(call, "id").map(str::to_owned),
                    name: str_at(call, "name").unwrap_or_default().to_owned(),
                    input: call
                        .get("args")
                        .cloned()
                        .unwrap_or(Value::Object(Default::default())),
                });
            }
            continue;
        }
        for (position, response) in parts
            .into_iter()
            .flatten()
            .filter_map(|p| p.get("functionResponse"))
            .enumerate()
        {
            let by_id = str_at(response, "id").and_then(|id| find_call(&sent.calls, id));
            let by_position = turn_calls
                .get(position)
                .copied()
                .filter(|&c| str_at(response, "name").is_none_or(|n| sent.calls[c].name == n));
            let body = response.get("response").unwrap_or(&Value::Null);
            let mut text = String::new();
            leaves(body, &mut text);
            sent.results.push(SentResult {
                call: by_id.or(by_position),
                result: WireResult {
                    text: crate::shared::cut::chars(&text, MAX_ONE_RESULT)
                        .kept
                        .to_owned(),
                    is_error: Some(body.get("error").is_some_and(|e| !e.is_null())),
                },
                tail: last.is_none_or(|l| i > l),
            });
        }
    }
    sent
}

/// Reads the tool calls out of one reply fed in pieces (see the module table).
#[derive(Debug)]
pub struct ReplyCalls {
    protocol: Protocol,
    sse: Option<SseReader>,
    json: Vec<u8>,
    json_too_big: bool,
    /// Anthropic blocks and Chat deltas being assembled, by index: (id, name, input so far).
    open: BTreeMap<u64, (Option<String>, String, String, Option<Value>)>,
    /// Responses: whether `output_item.done` events were seen (then `response.completed`'s
    /// list is not read again).
    items_done: bool,
    calls: Vec<WireCall>,
}

impl ReplyCalls {
    /// A reader of a reply in `protocol`, streamed as server-sent events when `sse`.
    pub fn new(protocol: Protocol, sse: bool) -> Self {
        ReplyCalls {
            protocol,
            sse: sse.then(SseReader::default),
            json: Vec::new(),
            json_too_big: false,
            open: BTreeMap::new(),
            items_done: false,
            calls: Vec::new(),
        }
    }

    /// Feeds the next piece of the reply; returns the calls it completed. They are noted
    /// before the piece is passed on, so that the agent's next request, which may follow
    /// the moment it has the piece, never finds them missing.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<WireCall> {
        match self.sse.take() {
            Some(mut reader) => {
                reader.push(bytes, |event| self.event(&event.name, &event.data));
                self.sse = Some(reader);
            }
            None if self.json_too_big => {}
            None if self.json.len() + bytes.len() > super::meter::MAX_JSON_BYTES => {
                self.json_too_big = true;
                self.json = Vec::new();
            }
            None => {
                self.json.extend_from_slice(bytes);
                // A whole reply is read as soon as it parses: its last piece may be all
                // the agent waits for.
                let ends = self
                    .json
                    .iter()
                    .rev()
                    .find(|b| !b.is_ascii_whitespace())
                    .is_some_and(|b| matches!(b, b'}' | b']'));
                if ends && let Ok(body) = serde_json::from_slice::<Value>(&self.json) {
                    self.json = Vec::new();
                    self.json_too_big = true;
                    match body {
                        Value::Array(items) => items.iter().for_each(|i| self.whole(i)),
                        one => self.whole(&one),
                    }
                }
            }
        }
        std::mem::take(&mut self.calls)
    }

    /// The calls of the reply not returned yet (all of them for a reply cut short).
    pub fn finish(mut self) -> Vec<WireCall> {
        match self.sse.take() {
            Some(mut reader) => reader.finish(|event| self.event(&event.name, &event.data)),
            None => {
                if let Ok(body) = serde_json::from_slice::<Value>(&self.json) {
                    match body {
                        Value::Array(items) => items.iter().for_each(|i| self.whole(i)),
                        one => self.whole(&one),
                    }
                }
            }
        }
        self.close_all();
        self.calls
    }

    fn event(&mut self, name: &str, data: &str) {
        let wanted = match self.protocol {
            Protocol::Anthropic => {
                name.starts_with("content_block") || data.contains("\"content_block")
            }
            Protocol::Responses => {
                data.contains("output_item.done") || data.contains("response.completed")
            }
            Protocol::Chat => {
                data.contains("tool_calls")
                    || data.contains("\"finish_reason\":\"")
                    || data.contains("\"finish_reason\": \"")
            }
            Protocol::Gemini => data.contains("functionCall"),
        };
        if !wanted {
            return;
        }
        let Ok(v) = serde_json::from_str::<Value>(data.trim()) else {
            return;
        };
        match self.protocol {
            Protocol::Anthropic => self.anthropic_event(&v),
            Protocol::Responses => match str_at(&v, "type") {
                Some("response.output_item.done") => {
                    self.items_done = true;
                    if let Some(item) = v.get("item") {
                        self.responses_item(item);
                    }
                }
                Some("response.completed") if !self.items_done => {
                    for item in v["response"]["output"].as_array().into_iter().flatten() {
                        self.responses_item(item);
                    }
                }
                _ => {}
            },
            Protocol::Chat => self.chat_chunk(&v),
            Protocol::Gemini => self.gemini_chunk(&v),
        }
    }

    fn anthropic_event(&mut self, v: &Value) {
        let index = v.get("index").and_then(Value::as_u64).unwrap_or(0);
        match str_at(v, "type") {
            Some("content_block_start") => {
                let block = &v["content_block"];
                if str_at(block, "type").is_some_and(is_anthropic_call) {
                    self.open.insert(
                        index,
                        (
                            str_at(block, "id").map(str::to_owned),
                            str_at(block, "name").unwrap_or_default().to_owned(),
                            String::new(),
                            block.get("input").cloned(),
                        ),
                    );
                }
            }
            Some("content_block_delta") => {
                if let (Some(open), Some(partial)) = (
                    self.open.get_mut(&index),
                    v["delta"].get("partial_json").and_then(Value::as_str),
                ) {
                    open.2.push_str(partial);
                }
            }
            Some("content_block_stop") => self.close(index),
            _ => {}
        }
    }

    fn close(&mut self, index: u64) {
        let Some((id, name, partial, start)) = self.open.remove(&index) else {
            return;
        };
        let input = if partial.trim().is_empty() {
            start.unwrap_or(Value::Object(Default::default()))
        } else {
            arguments(Some(&Value::String(partial)))
        };
        self.calls.push(WireCall { id, name, input });
    }

    fn close_all(&mut self) {
        let open: Vec<u64> = self.open.keys().copied().collect();
        for index in open {
            self.close(index);
        }
    }

    fn responses_item(&mut self, item: &Value) {
        if let Some(call) = responses_call(item) {
            self.calls.push(call);
        }
    }

    fn chat_chunk(&mut self, v: &Value) {
        let finished = v["choices"].as_array().is_some_and(|choices| {
            choices
                .iter()
                .any(|c| c.get("finish_reason").is_some_and(|f| !f.is_null()))
        });
        self.chat_deltas(v);
        if finished {
            self.close_all();
        }
    }

    fn chat_deltas(&mut self, v: &Value) {
        for choice in v["choices"].as_array().into_iter().flatten() {
            let deltas = choice["delta"]["tool_calls"]
                .as_array()
                .or_else(|| choice["message"]["tool_calls"].as_array());
            for (n, delta) in deltas.into_iter().flatten().enumerate() {
                let index = delta
                    .get("index")
                    .and_then(Value::as_u64)
                    .unwrap_or(n as u64);
                let open = self
                    .open
                    .entry(index)
                    .or_insert_with(|| (None, String::new(), String::new(), None));
                if let Some(id) = str_at(delta, "id").filter(|id| !id.is_empty()) {
                    open.0 = Some(id.to_owned());
                }
                let function = &delta["function"];
                if let Some(name) = str_at(function, "name") {
                    open.1.push_str(name);
                }
                match function.get("arguments") {
                    Some(Value::String(piece)) => open.2.push_str(piece),
                    Some(whole) if !whole.is_null() => open.3 = Some(whole.clone()),
                    _ => {}
                }
            }
        }
    }

    fn gemini_chunk(&mut self, v: &Value) {
        for candidate in v["candidates"].as_array().into_iter().flatten() {
            for part in candidate["content"]["parts"]
                .as_array()
                .into_iter()
                .flatten()
            {
                if let Some(call) = part.get("functionCall") {
                    self.calls.push(WireCall {
                        id: str_at(call, "id").map(str::to_owned),
                        name: str_at(call, "name").unwrap_or_default().to_owned(),
                        input: call
                            .get("args")
                            .cloned()
                            .unwrap_or(Value::Object(Default::default())),
                    });
                }
            }
        }
    }

    /// A whole (non-streamed) reply.
    fn whole(&mut self, v: &Value) {
        match self.protocol {
            Protocol::Anthropic => {
                for block in v["content"].as_array().into_iter().flatten() {
                    if str_at(block, "type").is_some_and(is_anthropic_call) {
                        self.calls.push(WireCall {
                            id: str_at(block, "id").map(str::to_owned),
                            name: str_at(block, "name").unwrap_or_default().to_owned(),
                            input: block.get("input").cloned().unwrap_or(Value::Null),
                        });
                    }
                }
            }
            Protocol::Responses => {
                for item in v["output"].as_array().into_iter().flatten() {
                    self.responses_item(item);
                }
            }
            Protocol::Chat => self.chat_chunk(v),
            Protocol::Gemini => self.gemini_chunk(v),
        }
    }
}

pub mod shown;

#[cfg(test)]
mod tests;
