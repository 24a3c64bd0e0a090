//! Auggie transcripts, as written by `@augmentcode/auggie` 0.36.0.
//!
//! - **`--output-format json`**: one line `{type: "result", result, is_error, subtype,
//!   session_id, num_turns, request_id}`. It holds the answer but no tool calls, so the
//!   transcript says it may have lost some (like `gemini -o json`).
//! - **session file** (`<cache-dir>/sessions/<id>.json`, one JSON document): {sessionId,
//!   created, modified, chatHistory [{exchange {request_message, response_text, request_id,
//!   request_nodes [{type: 1, tool_result_node {tool_use_id, content, is_error}}],
//!   response_nodes [{type: 5, tool_use {tool_use_id, tool_name, input_json (a JSON string),
//!   started_at_ms}} | {type: 0, content}]}, completed, finishedAt}]}. A shell result's
//!   content holds `<return-code>\n3\n</return-code>`.

use serde_json::Value;

use super::builder::{Builder, Parts, ToolResult};
use super::json::{EventParser, millis_to_rfc3339, str_of};
use super::{Format, Outcome, Transcript, Usage};
use crate::spec::tools::Vocabulary;

/// `auggie --output-format json` (its one `result` line).
pub(crate) struct AuggieResultParser {
    b: Builder,
    session_id: Option<String>,
    final_text: Option<String>,
    outcome: Option<Outcome>,
}

impl AuggieResultParser {
    pub(crate) fn new() -> Self {
        AuggieResultParser {
            b: Builder::default().with_vocabulary(Vocabulary::Auggie),
            session_id: None,
            final_text: None,
            outcome: None,
        }
    }
}

impl EventParser for AuggieResultParser {
    fn calls(&self) -> &[super::ToolCall] {
        self.b.calls()
    }

    fn builder(&mut self) -> &mut Builder {
        &mut self.b
    }

    fn event(&mut self, _line_no: u64, event: &Value) {
        if str_of(event, "type") != Some("result") {
            return;
        }
        self.session_id = str_of(event, "session_id").map(str::to_owned);
        let is_error = event
            .get("is_error")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let text = str_of(event, "result").map(str::to_owned);
        if is_error {
            self.outcome = Some(Outcome::Error {
                message: text.unwrap_or_else(|| "auggie reported an error".into()),
            });
        } else {
            self.final_text = text.filter(|t| !t.trim().is_empty());
            self.outcome = Some(Outcome::Completed);
        }
    }

    fn finish(mut self) -> Transcript {
        self.b.warn_lost(
            0,
            "auggie --output-format json records no tool calls (its session file does)",
        );
        self.b.into_transcript(Parts {
            format: Format::AuggieJson,
            session_id: self.session_id,
            agent_version: None,
            model: None,
            final_text: self.final_text,
            usage: Usage::default(),
            outcome: self.outcome.unwrap_or(Outcome::Incomplete {
                message: "no `result` line".into(),
            }),
            runs: 1,
        })
    }
}

/// Whether a JSON document is an Auggie session file.
pub(crate) fn is_session(doc: &Value) -> bool {
    doc.get("sessionId").is_some() && doc.get("chatHistory").is_some_and(Value::is_array)
}

/// The exit code in a `launch-process` result: `<return-code>\n3\n</return-code>`.
fn return_code(content: &str) -> Option<i32> {
    let (_, rest) = content.split_once("<return-code>")?;
    let (code, _) = rest.split_once("</return-code>")?;
    code.trim().parse().ok()
}

/// An Auggie session file (0.36.0).
pub(crate) fn parse_session(doc: &Value) -> Transcript {
    let mut b = Builder::default().with_vocabulary(Vocabulary::Auggie);
    let mut final_text = None;
    let mut completed = false;
    let mut turns = 0u32;
    for entry in doc
        .get("chatHistory")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(exchange) = entry.get("exchange") else {
            b.warn(0, "a chat history entry without its exchange");
            continue;
        };
        turns = turns.saturating_add(1);
        completed = entry
            .get("completed")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        // Results answer the previous exchange's calls: attach them first.
        for node in exchange
            .get("request_nodes")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(r) = node.get("tool_result_node") else {
                continue;
            };
            let Some(id) = str_of(r, "tool_use_id") else {
                continue;
            };
            let content = str_of(r, "content").unwrap_or("").to_owned();
            let is_error = r.get("is_error").and_then(Value::as_bool).unwrap_or(false);
            b.result(
                id,
                ToolResult {
                    exit_code: return_code(&content),
                    output: content,
                    is_error,
                    ..ToolResult::default()
                },
            );
        }
        for node in exchange
            .get("response_nodes")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(t) = node.get("tool_use") else {
                continue;
            };
            let Some(id) = str_of(t, "tool_use_id") else {
                continue;
            };
            let name = str_of(t, "tool_name").unwrap_or("unknown");
            let input = match t.get("input_json") {
                Some(Value::String(s)) => serde_json::from_str(s).unwrap_or_else(|e| {
                    b.warn(0, format!("tool call {id}: its input is not JSON: {e}"));
                    Value::String(s.clone())
                }),
                Some(other) => other.clone(),
                None => Value::Null,
            };
            let ts = millis_to_rfc3339(t.get("started_at_ms"));
            b.call(id, name, || input, None, ts);
            final_text = None;
        }
        if let Some(text) = str_of(exchange, "response_text").filter(|t| !t.trim().is_empty()) {
            final_text = Some(text.to_owned());
        }
    }
    b.into_transcript(Parts {
        format: Format::AuggieSession,
        session_id: str_of(doc, "sessionId").map(str::to_owned),
        agent_version: None,
        model: doc
            .get("agentState")
            .and_then(|a| str_of(a, "modelId"))
            .filter(|m| !m.is_empty())
            .map(str::to_owned),
        final_text,
        usage: Usage {
            turns: (turns > 0).then_some(turns),
            ..Usage::default()
        },
        outcome: if completed {
            Outcome::Completed
        } else {
            Outcome::Incomplete {
                message: "the last exchange did not complete".into(),
            }
        },
        runs: 1,
    })
}
