//! Gemini CLI transcripts: `-o stream-json` events, session logs and chat recordings.
//!
//! - **stream-json** (0.61.0): `init` {session_id, model}, `message` {role, content, delta},
//!   `tool_use` {tool_name, tool_id, parameters}, `tool_result` {tool_id, status, output,
//!   error}, `result` {status, error, stats}. A shell command that exits 3 still has
//!   `status: success`; the exit code is not in the event, so it is left unknown.
//! - **session logs** (`$GEMINI_CLI_HOME/.gemini/tmp/<project>/chats/session-*.jsonl`,
//!   0.61.0): a metadata line {sessionId, projectHash, …}, `{"$set": …}` updates (which may
//!   carry a whole `messages` list), and message lines {id, type: user|gemini|info|error,
//!   content, tokens, model, toolCalls}. A message is written again when its tool calls
//!   finish: calls are kept once per id and tokens counted once per message.
//! - **chat recordings** (2025, one JSON document): {sessionId, projectHash, messages} with
//!   the same message shape.
//! - **`-o json`** (0.61.0, one JSON document): {session_id, response, stats {models {…
//!   tokens {prompt, candidates, cached}}, tools {totalCalls, byName}}}. It lists how many
//!   calls each tool got but not the calls themselves, so it yields no tool calls and a
//!   warning saying so.
//!
//! Tool results are `functionResponse` parts whose `response` holds `output` or `error`;
//! shell output carries an `Exit Code: N` line.

use std::collections::HashSet;

use serde_json::Value;

use super::builder::{Builder, Parts, ToolResult};
use super::json::{EventParser, str_of, u64_of};
use super::{Format, Outcome, Transcript, Usage};

fn api_failure(message: String) -> Outcome {
    if message.contains("API Error") || message.contains("api error") {
        Outcome::ApiError {
            message,
            http_status: None,
        }
    } else {
        Outcome::Error { message }
    }
}

/// `gemini -o stream-json`.
pub(crate) struct StreamParser {
    b: Builder,
    session_id: Option<String>,
    model: Option<String>,
    runs: u32,
    usage: Usage,
    final_text: Option<String>,
    assistant_open: bool,
    outcome: Option<Outcome>,
}

impl StreamParser {
    pub(crate) fn new() -> Self {
        StreamParser {
            b: Builder::default().with_vocabulary(crate::spec::tools::Vocabulary::Gemini),
            session_id: None,
            model: None,
            runs: 0,
            usage: Usage::default(),
            final_text: None,
            assistant_open: false,
            outcome: None,
        }
    }
}

impl EventParser for StreamParser {
    fn calls(&self) -> &[super::ToolCall] {
        self.b.calls()
    }

    fn builder(&mut self) -> &mut Builder {
        &mut self.b
    }

    fn event(&mut self, line_no: u64, event: &Value) {
        let ts = str_of(event, "timestamp").map(str::to_owned);
        match str_of(event, "type").unwrap_or("") {
            "init" => {
                self.runs = self.runs.saturating_add(1);
                self.session_id = str_of(event, "session_id").map(str::to_owned);
                self.model = str_of(event, "model").map(str::to_owned);
                self.final_text = None;
                self.outcome = None;
            }
            "message" if str_of(event, "role") == Some("assistant") => {
                let content = str_of(event, "content").unwrap_or("");
                let delta = event.get("delta").and_then(Value::as_bool).unwrap_or(false);
                match (&mut self.final_text, delta && self.assistant_open) {
                    (Some(text), true) => text.push_str(content),
                    _ => self.final_text = Some(content.to_owned()),
                }
                self.assistant_open = true;
            }
            "tool_use" => {
                self.assistant_open = false;
                self.final_text = None;
                let (Some(id), Some(name)) = (str_of(event, "tool_id"), str_of(event, "tool_name"))
                else {
                    self.b
                        .warn_lost(line_no, "tool_use without tool_id or tool_name");
                    return;
                };
                let input = event.get("parameters").cloned().unwrap_or(Value::Null);
                self.b.call(id, name, || input, None, ts);
            }
            "tool_result" => {
                self.assistant_open = false;
                let Some(id) = str_of(event, "tool_id") else {
                    return;
                };
                let is_error = str_of(event, "status") == Some("error");
                let mut output = str_of(event, "output").unwrap_or("").to_owned();
                let error = event.get("error");
                if let Some(message) = error.and_then(|e| str_of(e, "message"))
                    && !output.contains(message)
                {
                    if !output.is_empty() {
                        output.push('\n');
                    }
                    output.push_str(message);
                }
                // Refused before it ran: a policy said no, or the tool is not offered in
                // this mode (a shell without --yolo in non-interactive mode, 0.61).
                let blocked = error
                    .and_then(|e| str_of(e, "type"))
                    .filter(|t| matches!(*t, "policy_violation" | "tool_not_registered"))
                    .map(|t| {
                        let message = error.and_then(|e| str_of(e, "message")).unwrap_or("");
                        format!("{t}: {}", crate::shared::text::truncate(message, 200))
                    })
                    // Its shell's own guard: a `success` whose output says it blocked.
                    .or_else(|| super::blocked::gemini_guard(&output));
                self.b.result(
                    id,
                    ToolResult {
                        output,
                        is_error,
                        blocked,
                        ..ToolResult::default()
                    },
                );
            }
            "result" => {
                self.assistant_open = false;
                if let Some(stats) = event.get("stats") {
                    let cached = u64_of(stats, "cached");
                    self.usage.add(&Usage {
                        input_tokens: u64_of(stats, "input_tokens").saturating_sub(cached),
                        output_tokens: u64_of(stats, "output_tokens"),
                        cache_read_input_tokens: cached,
                        duration_ms: stats.get("duration_ms").and_then(Value::as_u64),
                        ..Usage::default()
                    });
                }
                self.outcome = Some(if str_of(event, "status") == Some("success") {
                    Outcome::Completed
                } else {
                    let message = event
                        .get("error")
                        .and_then(|e| str_of(e, "message"))
                        .unwrap_or("the agent reported an error")
                        .to_owned();
                    api_failure(message)
                });
            }
            _ => {}
        }
    }

    fn finish(self) -> Transcript {
        self.b.into_transcript(Parts {
            format: Format::GeminiStreamJson,
            session_id: self.session_id,
            agent_version: None,
            model: self.model,
            final_text: self.final_text.filter(|t| !t.is_empty()),
            usage: self.usage,
            outcome: self.outcome.unwrap_or(Outcome::Incomplete {
                message:
                    "the output ends without a `result` event (the agent was killed or crashed)"
                        .into(),
            }),
            runs: self.runs.max(1),
        })
    }
}

/// Gemini session logs (JSONL) and chat recordings (one document).
pub(crate) struct SessionParser {
    format: Format,
    b: Builder,
    session_id: Option<String>,
    model: Option<String>,
    usage: Usage,
    counted: HashSet<String>,
    final_text: Option<String>,
    last_was_call: bool,
    error: Option<String>,
    first_ts: Option<String>,
    last_ts: Option<String>,
}

impl SessionParser {
    pub(crate) fn new(format: Format) -> Self {
        SessionParser {
            format,
            b: Builder::default().with_vocabulary(crate::spec::tools::Vocabulary::Gemini),
            session_id: None,
            model: None,
            usage: Usage::default(),
            counted: HashSet::new(),
            final_text: None,
            last_was_call: false,
            error: None,
            first_ts: None,
            last_ts: None,
        }
    }

    fn message(&mut self, m: &Value) {
        let ts = str_of(m, "timestamp").map(str::to_owned);
        if let Some(t) = &ts {
            if self.first_ts.is_none() {
                self.first_ts = Some(t.clone());
            }
            self.last_ts = Some(t.clone());
        }
        let id = str_of(m, "id").unwrap_or("");
        match str_of(m, "type").unwrap_or("") {
            "gemini" => {
                if !id.is_empty() && self.counted.insert(id.to_owned()) {
                    if let Some(tokens) = m.get("tokens") {
                        let cached = u64_of(tokens, "cached");
                        self.usage.input_tokens = self
                            .usage
                            .input_tokens
                            .saturating_add(u64_of(tokens, "input").saturating_sub(cached));
                        self.usage.output_tokens = self
                            .usage
                            .output_tokens
                            .saturating_add(u64_of(tokens, "output"));
                        self.usage.cache_read_input_tokens =
                            self.usage.cache_read_input_tokens.saturating_add(cached);
                    }
                    self.usage.turns = Some(self.usage.turns.unwrap_or(0).saturating_add(1));
                }
                if let Some(model) = str_of(m, "model") {
                    self.model = Some(model.to_owned());
                }
                let text = content_text(m.get("content"));
                let calls = m.get("toolCalls").and_then(Value::as_array);
                if !text.trim().is_empty() {
                    self.final_text = Some(text);
                    self.last_was_call = false;
                }
                for call in calls.into_iter().flatten() {
                    self.tool_call(call, ts.clone());
                }
                if calls.is_some_and(|c| !c.is_empty()) {
                    self.final_text = None;
                    self.last_was_call = true;
                }
            }
            "user" => {
                // Tool results may come back as user `functionResponse` parts.
                for part in m
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let Some(response) = part.get("functionResponse") {
                        self.function_response(response, None);
                    }
                }
            }
            "error" => self.error = Some(content_text(m.get("content"))),
            _ => {}
        }
    }

    fn tool_call(&mut self, call: &Value, ts: Option<String>) {
        let (Some(id), Some(name)) = (str_of(call, "id"), str_of(call, "name")) else {
            return;
        };
        let input = call.get("args").cloned().unwrap_or(Value::Null);
        let ts = str_of(call, "timestamp").map(str::to_owned).or(ts);
        self.b.call(id, name, || input, None, ts);
        let status = str_of(call, "status");
        for part in call
            .get("result")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(response) = part.get("functionResponse") {
                self.function_response(response, status);
            }
        }
    }

    fn function_response(&mut self, response: &Value, status: Option<&str>) {
        let Some(id) = str_of(response, "id") else {
            return;
        };
        let body = response.get("response");
        let error = body.and_then(|b| b.get("error"));
        let output = body
            .and_then(|b| b.get("output").or_else(|| b.get("error")))
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
            .unwrap_or_default();
        self.b.result(
            id,
            ToolResult {
                output,
                is_error: status == Some("error") || error.is_some(),
                ..ToolResult::default()
            },
        );
    }

    fn into_transcript(self) -> Transcript {
        let outcome = match (&self.error, &self.final_text) {
            (Some(message), _) => api_failure(message.clone()),
            (None, Some(_)) if !self.last_was_call => Outcome::Completed,
            _ => Outcome::Incomplete {
                message: "the session ends without a final answer".into(),
            },
        };
        let mut usage = self.usage;
        if let (Some(a), Some(b)) = (&self.first_ts, &self.last_ts) {
            usage.duration_ms = super::millis_between(a, b);
        }
        self.b.into_transcript(Parts {
            format: self.format,
            session_id: self.session_id,
            agent_version: None,
            model: self.model,
            final_text: self.final_text,
            usage,
            outcome,
            runs: 1,
        })
    }
}

/// `content`: a string, or a list of `{text}` parts.
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| str_of(p, "text"))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

impl EventParser for SessionParser {
    fn calls(&self) -> &[super::ToolCall] {
        self.b.calls()
    }

    fn builder(&mut self) -> &mut Builder {
        &mut self.b
    }

    fn event(&mut self, _line_no: u64, line: &Value) {
        if let Some(sid) = str_of(line, "sessionId") {
            self.session_id = Some(sid.to_owned());
        }
        if let Some(set) = line.get("$set") {
            for m in set
                .get("messages")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                self.message(m);
            }
            return;
        }
        if line.get("type").is_some() {
            self.message(line);
        }
    }

    fn finish(self) -> Transcript {
        self.into_transcript()
    }
}

/// A Gemini CLI chat recording: one JSON document with a `messages` list.
pub(crate) fn parse_chat(doc: &Value) -> Transcript {
    let mut parser = SessionParser::new(Format::GeminiChat);
    parser.session_id = str_of(doc, "sessionId").map(str::to_owned);
    for m in doc
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        parser.message(m);
    }
    parser.into_transcript()
}

/// `gemini -o json` output: the answer and token statistics; tool calls only as counts.
pub(crate) fn parse_json_output(doc: &Value) -> Transcript {
    let mut usage = Usage::default();
    let mut model = None;
    if let Some(models) = doc
        .get("stats")
        .and_then(|s| s.get("models"))
        .and_then(Value::as_object)
    {
        for (name, stats) in models {
            model = Some(name.clone());
            if let Some(tokens) = stats.get("tokens") {
                let cached = u64_of(tokens, "cached");
                usage.input_tokens = usage
                    .input_tokens
                    .saturating_add(u64_of(tokens, "prompt").saturating_sub(cached));
                usage.output_tokens = usage
                    .output_tokens
                    .saturating_add(u64_of(tokens, "candidates"));
                usage.cache_read_input_tokens =
                    usage.cache_read_input_tokens.saturating_add(cached);
            }
            if let Some(api) = stats.get("api") {
                usage.turns = Some(usage.turns.unwrap_or(0).saturating_add(
                    u32::try_from(u64_of(api, "totalRequests")).unwrap_or(u32::MAX),
                ));
            }
        }
    }
    let mut b = Builder::default().with_vocabulary(crate::spec::tools::Vocabulary::Gemini);
    let tools = doc.get("stats").and_then(|s| s.get("tools"));
    if tools.is_some_and(|t| u64_of(t, "totalCalls") > 0) {
        let by_name: Vec<String> = tools
            .and_then(|t| t.get("byName"))
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .map(|(k, v)| format!("{k} ×{}", u64_of(v, "count")))
                    .collect()
            })
            .unwrap_or_default();
        b.warn_lost(
            0,
            format!(
                "`gemini -o json` records only tool-call counts ({}); use `-o stream-json` to assert on tool calls",
                by_name.join(", ")
            ),
        );
    }
    let error = doc.get("error").filter(|e| !e.is_null());
    let outcome = match error {
        Some(e) => api_failure(str_of(e, "message").map_or_else(|| e.to_string(), str::to_owned)),
        None => Outcome::Completed,
    };
    b.into_transcript(Parts {
        format: Format::GeminiJson,
        session_id: str_of(doc, "session_id").map(str::to_owned),
        agent_version: None,
        model,
        final_text: str_of(doc, "response").map(str::to_owned),
        usage,
        outcome,
        runs: 1,
    })
}
