//! Qwen Code session logs (0.24.4): Claude-like envelopes (`uuid`, `sessionId`, `type`
//! `user` / `assistant` / `tool_result` / `system`, `provenance`) around Gemini-style
//! `message.parts`: `{text}`, `{functionCall {id, name, args}}`,
//! `{functionResponse {id, name, response {output | error}}}`. Usage is in
//! `usageMetadata` (`promptTokenCount` includes `cachedContentTokenCount`). Tool results
//! also carry `toolCallResult.resultDisplay.exitCode` for shell commands.
//!
//! Qwen Code's stream-json output uses Claude's event shapes and is parsed by
//! [`super::claude`].

use serde_json::Value;

use super::builder::{Builder, Parts, ToolResult};
use super::json::{EventParser, str_of};
use super::{Format, Outcome, Transcript, Usage};

pub(crate) struct QwenSessionParser {
    b: Builder,
    session_id: Option<String>,
    agent_version: Option<String>,
    model: Option<String>,
    usage: Usage,
    final_text: Option<String>,
    last_was_call: bool,
    first_ts: Option<String>,
    last_ts: Option<String>,
}

impl QwenSessionParser {
    pub(crate) fn new() -> Self {
        QwenSessionParser {
            b: Builder::new(true).with_vocabulary(crate::spec::tools::Vocabulary::Qwen),
            session_id: None,
            agent_version: None,
            model: None,
            usage: Usage::default(),
            final_text: None,
            last_was_call: false,
            first_ts: None,
            last_ts: None,
        }
    }
}

impl EventParser for QwenSessionParser {
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
        if let Some(v) = str_of(line, "version") {
            self.agent_version = Some(format!("qwen-code {v}"));
        }
        let ts = str_of(line, "timestamp").map(str::to_owned);
        if let Some(t) = &ts {
            if self.first_ts.is_none() {
                self.first_ts = Some(t.clone());
            }
            self.last_ts = Some(t.clone());
        }
        let parts = line
            .get("message")
            .and_then(|m| m.get("parts"))
            .and_then(Value::as_array);
        match str_of(line, "type").unwrap_or("") {
            "assistant" => {
                if let Some(m) = str_of(line, "model") {
                    self.model = Some(m.to_owned());
                }
                if let Some(u) = line.get("usageMetadata") {
                    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
                    let cached = n("cachedContentTokenCount");
                    self.usage.input_tokens = self
                        .usage
                        .input_tokens
                        .saturating_add(n("promptTokenCount").saturating_sub(cached));
                    self.usage.output_tokens = self
                        .usage
                        .output_tokens
                        .saturating_add(n("candidatesTokenCount"));
                    self.usage.cache_read_input_tokens =
                        self.usage.cache_read_input_tokens.saturating_add(cached);
                    self.usage.turns = Some(self.usage.turns.unwrap_or(0).saturating_add(1));
                }
                for part in parts.into_iter().flatten() {
                    if let Some(text) = str_of(part, "text") {
                        if !text.trim().is_empty() && part.get("thought").is_none() {
                            self.final_text = Some(text.to_owned());
                            self.last_was_call = false;
                        }
                    } else if let Some(call) = part.get("functionCall") {
                        let (Some(id), Some(name)) = (str_of(call, "id"), str_of(call, "name"))
                        else {
                            continue;
                        };
                        let input = call.get("args").cloned().unwrap_or(Value::Null);
                        self.b.call(id, name, || input, None, ts.clone());
                        self.final_text = None;
                        self.last_was_call = true;
                    }
                }
            }
            "tool_result" | "user" => {
                let exit_code = line
                    .get("toolCallResult")
                    .and_then(|r| r.get("resultDisplay"))
                    .and_then(|d| d.get("exitCode"))
                    .and_then(Value::as_i64)
                    .and_then(|c| i32::try_from(c).ok());
                for part in parts.into_iter().flatten() {
                    let Some(response) = part.get("functionResponse") else {
                        continue;
                    };
                    let Some(id) = str_of(response, "id") else {
                        continue;
                    };
                    let body = response.get("response");
                    let error = body.and_then(|b| b.get("error"));
                    let output = body
                        .and_then(|b| b.get("output").or(error))
                        .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                        .unwrap_or_default();
                    self.b.result(
                        id,
                        ToolResult {
                            output,
                            is_error: error.is_some(),
                            exit_code,
                            ..ToolResult::default()
                        },
                    );
                }
            }
            _ => {}
        }
    }

    fn finish(self) -> Transcript {
        let outcome = if self.final_text.is_some() && !self.last_was_call {
            Outcome::Completed
        } else {
            Outcome::Incomplete {
                message: "the session ends without a final answer".into(),
            }
        };
        let mut usage = self.usage;
        if let (Some(a), Some(b)) = (&self.first_ts, &self.last_ts) {
            usage.duration_ms = super::millis_between(a, b);
        }
        self.b.into_transcript(Parts {
            format: Format::QwenSession,
            session_id: self.session_id,
            agent_version: self.agent_version,
            model: self.model,
            final_text: self.final_text,
            usage,
            outcome,
            runs: 1,
        })
    }
}
