//! Cursor CLI transcripts: `cursor-agent -p --output-format stream-json`, as captured from
//! cursor-agent 2026.01.28 (the shared corpus; the CLI can not be installed here).
//!
//! One JSON object per line: `system/init` {session_id, model, cwd, apiKeySource,
//! permissionMode} (no `tools` list, unlike Claude Code's), `user` and `assistant`
//! {message {content [{type: text, text}]}} in Claude Code's shapes, `thinking`
//! delta/completed, `tool_call` started/completed {call_id, tool_call {`<kind>ToolCall`
//! {args, result {success {exitCode, stdout, stderr} | failure {…} | rejected {…}}}},
//! timestamp_ms}, and `result` {subtype, is_error, duration_ms, result, session_id,
//! request_id}. The kinds seen or documented: `shellToolCall` {command},
//! `readToolCall` {path}, `editToolCall` {path}, `writeToolCall`, `globToolCall`,
//! `grepToolCall`, `lsToolCall`, `deleteToolCall`, `updateTodosToolCall`, `mcpToolCall`
//! {providerIdentifier, toolName, args} (canonical `mcp__<server>__<tool>` with `args` as
//! its parameters), and a
//! generic `function` {name, arguments}.
//!
//! `call_id` can contain a line break (`call_…\nfc_…`); it is kept as it is. On errors the
//! stream can stop without a `result` line: the transcript is then incomplete.

use serde_json::Value;

use super::builder::{Builder, Parts, ToolResult};
use super::json::{EventParser, i32_of, millis_to_rfc3339, str_of};
use super::{Format, Outcome, Transcript, Usage};
use crate::spec::tools::Vocabulary;

/// `cursor-agent --output-format stream-json`.
pub(crate) struct CursorParser {
    b: Builder,
    session_id: Option<String>,
    model: Option<String>,
    usage: Usage,
    final_text: Option<String>,
    outcome: Option<Outcome>,
    runs: u32,
}

impl CursorParser {
    pub(crate) fn new() -> Self {
        CursorParser {
            b: Builder::default().with_vocabulary(Vocabulary::Cursor),
            session_id: None,
            model: None,
            usage: Usage::default(),
            final_text: None,
            outcome: None,
            runs: 0,
        }
    }

    fn tool_call(&mut self, event: &Value, completed: bool) {
        let Some(id) = str_of(event, "call_id") else {
            return;
        };
        let Some((kind, body)) = event
            .get("tool_call")
            .and_then(Value::as_object)
            .and_then(|m| m.iter().next())
        else {
            return;
        };
        let null = Value::Null;
        let args = body.get("args").unwrap_or(&null);
        let ts = millis_to_rfc3339(event.get("timestamp_ms"));
        if kind == "mcpToolCall" {
            // The raw call is `mcpToolCall` {providerIdentifier, toolName, args}.
            let server = str_of(args, "providerIdentifier").unwrap_or("unknown");
            let tool = str_of(args, "toolName")
                .or_else(|| str_of(args, "name"))
                .unwrap_or("unknown");
            let arguments = args.get("args").cloned();
            self.b.mcp_call(
                id,
                kind,
                (server, tool),
                args.clone(),
                arguments,
                None,
                ts.clone(),
            );
        }
        let (name, input) = match kind.as_str() {
            "function" => (
                str_of(body, "name").unwrap_or("function").to_owned(),
                body.get("arguments")
                    .map(|a| match a {
                        Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| a.clone()),
                        other => other.clone(),
                    })
                    .unwrap_or(Value::Null),
            ),
            _ => (kind.clone(), args.clone()),
        };
        self.b.call(id, &name, || input, None, ts);
        self.final_text = None;
        if !completed {
            return;
        }
        let result = body.get("result").unwrap_or(&null);
        let (status, detail) = ["success", "failure", "rejected", "error"]
            .iter()
            .find_map(|s| result.get(*s).map(|d| (*s, d)))
            .unwrap_or(("success", result));
        let exit_code = i32_of(detail, "exitCode");
        let stdout = str_of(detail, "stdout").map(str::to_owned);
        let stderr = str_of(detail, "stderr").map(str::to_owned);
        let output = str_of(detail, "interleavedOutput")
            .filter(|o| !o.is_empty())
            .or_else(|| str_of(detail, "content"))
            .or_else(|| str_of(detail, "message"))
            .or_else(|| str_of(detail, "error"))
            .or_else(|| str_of(detail, "reason"))
            .map(str::to_owned)
            .unwrap_or_else(|| {
                let joined = [stdout.as_deref(), stderr.as_deref()]
                    .into_iter()
                    .flatten()
                    .filter(|s| !s.is_empty())
                    .collect::<Vec<_>>()
                    .join("\n");
                if joined.is_empty() && status != "success" {
                    detail.to_string()
                } else {
                    joined
                }
            });
        let output_for_block = crate::shared::text::truncate(&output, 200);
        self.b.result(
            id,
            ToolResult {
                output,
                is_error: status != "success" || exit_code.is_some_and(|c| c != 0),
                exit_code,
                stdout,
                stderr,
                blocked: (status == "rejected").then(|| format!("rejected: {output_for_block}")),
            },
        );
    }

    fn handle(&mut self, event: &Value) {
        match str_of(event, "type").unwrap_or("") {
            "system" => {
                if str_of(event, "subtype") == Some("init") {
                    self.runs = self.runs.saturating_add(1);
                    self.outcome = None;
                }
                if let Some(id) = str_of(event, "session_id") {
                    self.session_id = Some(id.to_owned());
                }
                if let Some(m) = str_of(event, "model") {
                    self.model = Some(m.to_owned());
                }
            }
            "assistant" => {
                let text: Vec<&str> = event
                    .get("message")
                    .and_then(|m| m.get("content"))
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter(|p| str_of(p, "type") == Some("text"))
                    .filter_map(|p| str_of(p, "text"))
                    .collect();
                let text = text.join("");
                if !text.trim().is_empty() {
                    self.final_text = Some(text);
                }
            }
            "tool_call" => {
                let completed = str_of(event, "subtype") == Some("completed");
                self.tool_call(event, completed);
            }
            "result" => {
                if let Some(ms) = event.get("duration_ms").and_then(Value::as_u64) {
                    self.usage.duration_ms =
                        Some(self.usage.duration_ms.unwrap_or(0).saturating_add(ms));
                }
                let is_error = event
                    .get("is_error")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                let subtype = str_of(event, "subtype").unwrap_or("success");
                // `result` is every assistant message of the run joined: the last message
                // is the answer, when there was one.
                if let Some(text) = str_of(event, "result").filter(|t| !t.trim().is_empty())
                    && !is_error
                    && self.final_text.is_none()
                {
                    self.final_text = Some(text.to_owned());
                }
                self.outcome = Some(if is_error || subtype != "success" {
                    Outcome::Error {
                        message: str_of(event, "result")
                            .or_else(|| str_of(event, "error"))
                            .unwrap_or(subtype)
                            .to_owned(),
                    }
                } else {
                    Outcome::Completed
                });
            }
            _ => {}
        }
    }
}

impl EventParser for CursorParser {
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
        self.b.into_transcript(Parts {
            format: Format::CursorStreamJson,
            session_id: self.session_id,
            agent_version: None,
            model: self.model,
            final_text: self.final_text,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(lines: &[&str]) -> Transcript {
        let mut p = CursorParser::new();
        for line in lines {
            let event: Value = serde_json::from_str(line).unwrap();
            p.handle(&event);
        }
        p.finish()
    }

    #[test]
    fn mcp_calls_failures_and_rejections() {
        let t = parse(&[
            r#"{"type":"system","subtype":"init","session_id":"s","model":"m","apiKeySource":"login","permissionMode":"default"}"#,
            r#"{"type":"tool_call","subtype":"started","call_id":"a\nb","tool_call":{"mcpToolCall":{"args":{"providerIdentifier":"github","toolName":"get_issue","args":{"n":1}}}}}"#,
            r#"{"type":"tool_call","subtype":"completed","call_id":"a\nb","tool_call":{"mcpToolCall":{"args":{"providerIdentifier":"github","toolName":"get_issue","args":{"n":1}},"result":{"success":{"content":"issue 1"}}}}}"#,
            r#"{"type":"tool_call","subtype":"completed","call_id":"c","tool_call":{"shellToolCall":{"args":{"command":"false"},"result":{"failure":{"exitCode":1,"stdout":"","stderr":"boom"}}}}}"#,
            r#"{"type":"tool_call","subtype":"completed","call_id":"d","tool_call":{"readToolCall":{"args":{"path":"/etc/x"},"result":{"rejected":{"reason":"outside the workspace"}}}}}"#,
        ]);
        let mcp = &t.tool_calls[0];
        assert_eq!(
            (mcp.name.as_str(), mcp.canonical.as_str()),
            ("mcpToolCall", "mcp__github__get_issue")
        );
        assert_eq!(mcp.params(), &serde_json::json!({"n": 1}));
        assert_eq!(mcp.output.as_deref(), Some("issue 1"));
        let shell = &t.tool_calls[1];
        assert_eq!((shell.exit_code, shell.is_error), (Some(1), true));
        assert_eq!(shell.stderr.as_deref(), Some("boom"));
        let read = &t.tool_calls[2];
        assert_eq!(read.canonical, "Read");
        assert_eq!(read.params()["file_path"], "/etc/x");
        assert!(read.is_error);
        assert_eq!(read.output.as_deref(), Some("outside the workspace"));
        assert!(
            matches!(t.outcome, Outcome::Incomplete { .. }),
            "no `result` line"
        );
    }
}
