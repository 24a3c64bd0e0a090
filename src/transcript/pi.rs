//! pi transcripts: `pi --mode json` events and session logs
//! (`$PI_CODING_AGENT_DIR/sessions/--<cwd>--/<ts>_<uuid>.jsonl`), as written by
//! `@mariozechner/pi-coding-agent` 0.73.1.
//!
//! Both open with a `session` header {version, id, timestamp, cwd}.
//! - **events**: `agent_start`/`agent_end`, `turn_start`/`turn_end`,
//!   `message_start`/`message_update`/`message_end` {message}, `tool_execution_start`
//!   {toolCallId, toolName, args}, `tool_execution_update`, `tool_execution_end`
//!   {toolCallId, toolName, result {content}, isError}, `auto_retry_start`/`auto_retry_end`.
//!   `turn_end` and `agent_end` repeat the messages: only `message_end` is read.
//! - **session log**: `message` {id, parentId, timestamp, message} entries, `model_change`,
//!   `thinking_level_change`.
//!
//! A message is {role: user|assistant|toolResult, content [{type: text|toolCall|thinking}],
//! usage {input, output, cacheRead, cacheWrite, totalTokens, cost {total}}, stopReason,
//! errorMessage, model}; a tool call is {type: toolCall, id, name, arguments}.
//!
//! **pi exits 0 when the model API fails**: the failure shows only as the last assistant
//! message's `stopReason: "error"` with `errorMessage` (`500 fake upstream failure`); that
//! is a failed outcome here. A command that exits 3 is `isError: true` with "Command exited
//! with code 3" at the end of its output.

use serde_json::Value;

use super::builder::{Builder, Parts, ToolResult};
use super::json::{EventParser, content_text, f64_of, leading_http_status, str_of, u64_of};
use super::{Format, Outcome, Transcript, Usage};
use crate::spec::tools::Vocabulary;

/// pi events or session log (the parser switches to `pi-session` at its first `message`
/// entry: both open with the same header).
pub(crate) struct PiParser {
    format: Format,
    b: Builder,
    session_id: Option<String>,
    model: Option<String>,
    usage: Usage,
    turns: u32,
    final_text: Option<String>,
    stop_reason: Option<String>,
    error_message: Option<String>,
    agent_open: bool,
    agent_runs: u32,
}

impl PiParser {
    pub(crate) fn new(format: Format) -> Self {
        PiParser {
            format,
            b: Builder::new(true).with_vocabulary(Vocabulary::Pi),
            session_id: None,
            model: None,
            usage: Usage::default(),
            turns: 0,
            final_text: None,
            stop_reason: None,
            error_message: None,
            agent_open: false,
            agent_runs: 0,
        }
    }

    fn message(&mut self, m: &Value, ts: Option<String>) {
        match str_of(m, "role").unwrap_or("") {
            "assistant" => self.assistant(m, ts),
            "toolResult" => {
                if let Some(id) = str_of(m, "toolCallId") {
                    self.result(id, m.get("content"), m.get("isError"));
                }
            }
            _ => {}
        }
    }

    fn assistant(&mut self, m: &Value, ts: Option<String>) {
        self.turns = self.turns.saturating_add(1);
        if let Some(model) = str_of(m, "model") {
            self.model = Some(model.to_owned());
        }
        if let Some(u) = m.get("usage") {
            self.usage.add(&Usage {
                input_tokens: u64_of(u, "input"),
                output_tokens: u64_of(u, "output"),
                cache_creation_input_tokens: u64_of(u, "cacheWrite"),
                cache_read_input_tokens: u64_of(u, "cacheRead"),
                cost_usd: u.get("cost").and_then(|c| f64_of(c, "total")),
                ..Usage::default()
            });
        }
        self.stop_reason = str_of(m, "stopReason").map(str::to_owned);
        self.error_message = str_of(m, "errorMessage").map(str::to_owned);
        let mut text = Vec::new();
        for part in m
            .get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            match str_of(part, "type") {
                Some("toolCall") => {
                    if let Some(id) = str_of(part, "id") {
                        let name = str_of(part, "name").unwrap_or("unknown");
                        let input = part.get("arguments").cloned().unwrap_or(Value::Null);
                        self.b.call(id, name, || input, None, ts.clone());
                        self.final_text = None;
                    }
                }
                Some("text") => text.extend(str_of(part, "text")),
                _ => {}
            }
        }
        let text = text.join("");
        if !text.trim().is_empty() {
            self.final_text = Some(text);
        }
    }

    fn result(&mut self, id: &str, content: Option<&Value>, is_error: Option<&Value>) {
        self.b.result(
            id,
            ToolResult {
                output: content_text(content),
                is_error: is_error.and_then(Value::as_bool).unwrap_or(false),
                ..ToolResult::default()
            },
        );
    }

    fn handle(&mut self, event: &Value) {
        let ts = str_of(event, "timestamp").map(str::to_owned);
        match str_of(event, "type").unwrap_or("") {
            "session" => {
                if let Some(id) = str_of(event, "id") {
                    self.session_id = Some(id.to_owned());
                }
            }
            "model_change" => {
                self.format = Format::PiSession;
                if let Some(m) = str_of(event, "modelId") {
                    self.model = Some(m.to_owned());
                }
            }
            "message" => {
                self.format = Format::PiSession;
                if let Some(m) = event.get("message") {
                    self.message(m, ts);
                }
            }
            "message_end" => {
                if let Some(m) = event.get("message") {
                    self.message(m, None);
                }
            }
            "tool_execution_start" => {
                if let Some(id) = str_of(event, "toolCallId") {
                    let name = str_of(event, "toolName").unwrap_or("unknown");
                    let input = event.get("args").cloned().unwrap_or(Value::Null);
                    self.b.call(id, name, || input, None, None);
                }
            }
            "tool_execution_end" => {
                if let Some(id) = str_of(event, "toolCallId") {
                    let content = event.get("result").and_then(|r| r.get("content"));
                    self.result(id, content, event.get("isError"));
                }
            }
            "agent_start" | "auto_retry_start" => {
                self.agent_open = true;
                self.agent_runs = self.agent_runs.saturating_add(1);
            }
            "agent_end" => self.agent_open = false,
            _ => {}
        }
    }
}

impl EventParser for PiParser {
    fn calls(&self) -> &[super::ToolCall] {
        self.b.calls()
    }

    fn builder(&mut self) -> &mut Builder {
        &mut self.b
    }

    fn event(&mut self, _line_no: u64, event: &Value) {
        self.handle(event);
    }

    fn finish(self) -> Transcript {
        let events = self.format == Format::PiJson;
        let outcome = match self.stop_reason.as_deref() {
            Some("error") => {
                let message = self
                    .error_message
                    .unwrap_or_else(|| "the model API failed".to_owned());
                Outcome::ApiError {
                    http_status: leading_http_status(&message),
                    message,
                }
            }
            Some("aborted") => Outcome::Interrupted,
            _ if events && (self.agent_open || self.agent_runs == 0) => Outcome::Incomplete {
                message: "the output ends without `agent_end` (the agent was killed or crashed)"
                    .into(),
            },
            Some("stop") => Outcome::Completed,
            Some("length") => Outcome::Error {
                message: "the model's answer was cut at its output limit".into(),
            },
            Some(_) => Outcome::Incomplete {
                message: "the record ends after tool calls, without the model's answer".into(),
            },
            None => Outcome::Incomplete {
                message: "the record holds no answer of the model".into(),
            },
        };
        let mut usage = self.usage;
        if self.turns > 0 {
            usage.turns = Some(self.turns);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(lines: &[&str]) -> Transcript {
        let mut p = PiParser::new(Format::PiJson);
        for line in lines {
            let event: Value = serde_json::from_str(line).unwrap();
            p.event(0, &event);
        }
        p.finish()
    }

    const HEADER: &str = r#"{"type":"session","version":3,"id":"p1","cwd":"/w"}"#;

    #[test]
    fn an_aborted_run_is_interrupted_and_a_killed_one_incomplete() {
        let aborted = parse(&[
            HEADER,
            r#"{"type":"agent_start"}"#,
            r#"{"type":"message_end","message":{"role":"assistant","content":[],"stopReason":"aborted"}}"#,
            r#"{"type":"agent_end"}"#,
        ]);
        assert_eq!(aborted.outcome, Outcome::Interrupted);
        let killed = parse(&[
            HEADER,
            r#"{"type":"agent_start"}"#,
            r#"{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"hi"}],"stopReason":"stop"}}"#,
        ]);
        assert!(
            matches!(killed.outcome, Outcome::Incomplete { .. }),
            "{:?}",
            killed.outcome
        );
        assert_eq!(killed.final_text.as_deref(), Some("hi"));
    }

    #[test]
    fn a_retry_that_succeeds_is_a_completed_run() {
        let t = parse(&[
            HEADER,
            r#"{"type":"agent_start"}"#,
            r#"{"type":"message_end","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"500 boom"}}"#,
            r#"{"type":"agent_end"}"#,
            r#"{"type":"auto_retry_start","attempt":1}"#,
            r#"{"type":"agent_start"}"#,
            r#"{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"Done."}],"stopReason":"stop"}}"#,
            r#"{"type":"agent_end"}"#,
            r#"{"type":"auto_retry_end","success":true}"#,
        ]);
        assert!(t.outcome.is_completed(), "{:?}", t.outcome);
        assert_eq!(t.final_text.as_deref(), Some("Done."));
    }
}
