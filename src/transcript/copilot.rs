//! GitHub Copilot CLI transcripts: `copilot -p … --output-format json` events and the
//! session-state log (`$COPILOT_HOME/session-state/<id>/events.jsonl`), as written by
//! `@github/copilot` 1.0.102.
//!
//! Both are one JSON object per line, `{type, data, id, timestamp, parentId}`:
//! - `assistant.message` {content, toolRequests [{toolCallId, name, arguments,
//!   mcpServerName, mcpToolName}], parentToolCallId} — the tool calls and the text;
//! - `tool.execution_start` {toolCallId, toolName, arguments} (the call again);
//! - `tool.execution_complete` {toolCallId, success, result.content, error.message,
//!   shellExecution.exitCode}. A shell command that exited 3 has `success: true`: the exit
//!   code comes from `shellExecution.exitCode` only;
//! - `session.error` {errorType, message, statusCode}: the run failed (after its retries;
//!   each failed attempt is a `model.call_failure`, which alone is not a failure);
//! - `assistant.turn_start`: one model turn;
//! - stdout only: a last line `{type: "result", sessionId, exitCode, usage {premiumRequests,
//!   totalApiDurationMs, sessionDurationMs}}` (top level, no `data`). stdout has no tokens;
//! - session log only: `session.start` {sessionId, copilotVersion, selectedModel},
//!   `session.usage_record` {usage {inputTokens, outputTokens, cacheReadTokens,
//!   cacheWriteTokens, cost}} per model call, `session.shutdown` at the end.
//! - in the event schema the package ships, not in the captures: `assistant.usage` {the same
//!   token fields} per model call (used when there are no usage records), `abort` and
//!   `agent.interrupted` (the user stopped the run).
//!
//! Many other events (deltas, `session.background_tasks_changed`, …) carry nothing a
//! transcript keeps. The `--usage-output-file` JSON (token totals, no calls) is not a
//! transcript; [`usage_file`] reads it.

use serde_json::Value;

use super::builder::{Builder, Parts, ToolResult};
use super::json::{EventParser, f64_of, i32_of, str_of, u64_of};
use super::{Format, Outcome, Transcript, Usage};
use crate::spec::tools::Vocabulary;

/// Copilot CLI events, from stdout or the session log (the format says which).
pub(crate) struct CopilotParser {
    format: Format,
    b: Builder,
    session_id: Option<String>,
    agent_version: Option<String>,
    model: Option<String>,
    usage: Usage,
    turns: u32,
    usage_records: u32,
    /// Tokens of `assistant.usage` events, used only without `session.usage_record`s
    /// (which count the same calls).
    assistant_usage: Option<Usage>,
    interrupted: bool,
    final_text: Option<String>,
    error: Option<Outcome>,
    exit_code: Option<i64>,
    ended: bool,
    /// The enabled skills of the last `session.skills_loaded` event.
    skills: Option<Vec<String>>,
}

impl CopilotParser {
    pub(crate) fn new(format: Format) -> Self {
        CopilotParser {
            format,
            b: Builder::default().with_vocabulary(Vocabulary::Copilot),
            session_id: None,
            agent_version: None,
            model: None,
            usage: Usage::default(),
            turns: 0,
            usage_records: 0,
            assistant_usage: None,
            interrupted: false,
            final_text: None,
            error: None,
            exit_code: None,
            ended: false,
            skills: None,
        }
    }

    fn tool_request(&mut self, req: &Value, agent: Option<&str>, ts: Option<String>) {
        let Some(id) = str_of(req, "toolCallId") else {
            return;
        };
        let raw = str_of(req, "name")
            .or_else(|| str_of(req, "toolName"))
            .unwrap_or("unknown");
        let input = req.get("arguments").cloned().unwrap_or(Value::Null);
        // An MCP tool: its server and tool name are given apart.
        match (str_of(req, "mcpServerName"), str_of(req, "mcpToolName")) {
            (Some(server), Some(tool)) => {
                self.b
                    .mcp_call(id, raw, (server, tool), input, None, agent, ts);
            }
            _ => self.b.call(id, raw, || input, agent, ts),
        }
    }

    fn complete(&mut self, data: &Value) {
        let Some(id) = str_of(data, "toolCallId") else {
            return;
        };
        let success = data.get("success").and_then(Value::as_bool).unwrap_or(true);
        let exit_code = data
            .get("shellExecution")
            .and_then(|s| i32_of(s, "exitCode"));
        let output = data
            .get("result")
            .and_then(|r| r.get("content"))
            .map(|c| super::json::content_text(Some(c)))
            .or_else(|| {
                data.get("error")
                    .and_then(|e| str_of(e, "message"))
                    .map(str::to_owned)
            })
            .unwrap_or_default();
        // Refused before it ran (1.0.102 without --allow-all: `error.code: "denied"`).
        let blocked = data
            .get("error")
            .filter(|e| str_of(e, "code") == Some("denied"))
            .map(|e| {
                format!(
                    "denied: {}",
                    crate::shared::text::truncate(str_of(e, "message").unwrap_or(""), 200)
                )
            });
        self.b.result(
            id,
            ToolResult {
                output,
                is_error: !success || exit_code.is_some_and(|c| c != 0),
                exit_code,
                blocked,
                ..ToolResult::default()
            },
        );
    }

    fn handle(&mut self, event: &Value) {
        let kind = str_of(event, "type").unwrap_or("");
        let ts = str_of(event, "timestamp").map(str::to_owned);
        let null = Value::Null;
        let data = event.get("data").unwrap_or(&null);
        match kind {
            "session.start" => {
                self.format = Format::CopilotSession;
                self.session_id = str_of(data, "sessionId").map(str::to_owned);
                self.agent_version = str_of(data, "copilotVersion").map(|v| format!("copilot {v}"));
                if let Some(m) = str_of(data, "selectedModel") {
                    self.model = Some(m.to_owned());
                }
            }
            "session.skills_loaded" => {
                // Copilot CLI 1.0.x: `data.skills: [{name, enabled, source, …}]`.
                let names = data
                    .get("skills")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter(|s| s.get("enabled").and_then(Value::as_bool) != Some(false))
                    .filter_map(|s| str_of(s, "name").map(str::to_owned))
                    .collect();
                self.skills = Some(names);
            }
            "session.tools_updated" | "model.call_start" => {
                if let Some(m) = str_of(data, "model") {
                    self.model = Some(m.to_owned());
                }
            }
            "assistant.turn_start" => self.turns = self.turns.saturating_add(1),
            "assistant.message" => {
                let agent = str_of(data, "parentToolCallId");
                let requests = data.get("toolRequests").and_then(Value::as_array);
                if let Some(requests) = requests {
                    for req in requests {
                        self.tool_request(req, agent, ts.clone());
                    }
                }
                if agent.is_none() {
                    if requests.is_some_and(|r| !r.is_empty()) {
                        self.final_text = None;
                    }
                    if let Some(text) = str_of(data, "content").filter(|t| !t.trim().is_empty()) {
                        self.final_text = Some(text.to_owned());
                    }
                }
            }
            "tool.execution_start" => {
                let agent = str_of(data, "parentToolCallId");
                self.tool_request(data, agent, ts);
            }
            "tool.execution_complete" => self.complete(data),
            "session.error" => {
                let message = str_of(data, "message")
                    .unwrap_or("session error")
                    .to_owned();
                let http_status = data
                    .get("statusCode")
                    .and_then(Value::as_u64)
                    .and_then(|s| u16::try_from(s).ok());
                self.error = Some(
                    if http_status.is_some() || str_of(data, "errorType") == Some("query") {
                        Outcome::ApiError {
                            message,
                            http_status,
                        }
                    } else {
                        Outcome::Error { message }
                    },
                );
            }
            "session.usage_record" => {
                if let Some(u) = data.get("usage") {
                    self.usage_records = self.usage_records.saturating_add(1);
                    self.usage.add(&call_usage(u));
                }
            }
            "assistant.usage" => {
                self.assistant_usage
                    .get_or_insert_with(Usage::default)
                    .add(&call_usage(data));
            }
            "abort" | "agent.interrupted" => self.interrupted = true,
            "session.shutdown" => {
                self.ended = true;
                if self.usage_records == 0
                    && self.assistant_usage.is_none()
                    && let Some(totals) = data
                        .get("accountingSnapshot")
                        .and_then(|a| a.get("modelMetrics"))
                {
                    self.usage.add(&usage_of_model_metrics(totals));
                }
            }
            "result" => {
                self.ended = true;
                if let Some(id) = str_of(event, "sessionId") {
                    self.session_id = Some(id.to_owned());
                }
                self.exit_code = event.get("exitCode").and_then(Value::as_i64);
                if let Some(u) = event.get("usage")
                    && let Some(ms) = u.get("sessionDurationMs").and_then(Value::as_u64)
                {
                    self.usage.duration_ms = Some(ms);
                }
            }
            _ => {}
        }
    }
}

/// One model call's tokens and cost (USD): {inputTokens, outputTokens, cacheReadTokens,
/// cacheWriteTokens, cost}.
fn call_usage(u: &Value) -> Usage {
    Usage {
        input_tokens: u64_of(u, "inputTokens"),
        output_tokens: u64_of(u, "outputTokens"),
        cache_creation_input_tokens: u64_of(u, "cacheWriteTokens"),
        cache_read_input_tokens: u64_of(u, "cacheReadTokens"),
        cost_usd: f64_of(u, "cost"),
        ..Usage::default()
    }
}

/// Token totals of a `modelMetrics` map {model: {requests {count, cost}, usage {inputTokens,
/// outputTokens, cacheReadTokens, cacheWriteTokens}}}.
fn usage_of_model_metrics(metrics: &Value) -> Usage {
    let mut usage = Usage::default();
    for m in metrics.as_object().into_iter().flat_map(|m| m.values()) {
        let u = m.get("usage").unwrap_or(&Value::Null);
        let requests = m.get("requests").unwrap_or(&Value::Null);
        usage.add(&Usage {
            input_tokens: u64_of(u, "inputTokens"),
            output_tokens: u64_of(u, "outputTokens"),
            cache_creation_input_tokens: u64_of(u, "cacheWriteTokens"),
            cache_read_input_tokens: u64_of(u, "cacheReadTokens"),
            cost_usd: f64_of(requests, "cost"),
            turns: u32::try_from(u64_of(requests, "count")).ok(),
            ..Usage::default()
        });
    }
    usage
}

/// Whether a JSON document is a Copilot CLI `--usage-output-file` (token totals).
pub(crate) fn is_usage_file(doc: &Value) -> bool {
    doc.get("modelMetrics").is_some() && doc.get("totalPremiumRequestCost").is_some()
}

/// The usage in a Copilot CLI 1.0.102 `--usage-output-file` JSON document
/// {totalApiDurationMs, modelMetrics {model: {requests {count, cost}, usage {inputTokens,
/// outputTokens, cacheReadTokens, cacheWriteTokens}}}}: tokens, cost (USD) and requests
/// (as turns). `None` when the document is not one. It holds no tool calls, so it is not a
/// transcript; an adapter adds its usage to the stdout transcript's (which has no tokens).
pub fn usage_file(doc: &Value) -> Option<Usage> {
    is_usage_file(doc)
        .then(|| usage_of_model_metrics(doc.get("modelMetrics").unwrap_or(&Value::Null)))
}

impl EventParser for CopilotParser {
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
        let outcome = match (self.error, self.exit_code) {
            (Some(error), _) => error,
            (None, _) if self.interrupted => Outcome::Interrupted,
            (None, Some(code)) if code != 0 => Outcome::Error {
                message: format!("copilot exited with code {code}"),
            },
            (None, _) if self.ended => Outcome::Completed,
            (None, _) => Outcome::Incomplete {
                message:
                    "the output ends without a `result` event (the agent was killed or crashed)"
                        .into(),
            },
        };
        let mut usage = self.usage;
        if self.usage_records == 0
            && let Some(per_call) = &self.assistant_usage
        {
            usage.add(per_call);
        }
        if self.turns > 0 {
            usage.turns = Some(self.turns);
        }
        let mut transcript = self.b.into_transcript(Parts {
            format: self.format,
            session_id: self.session_id,
            agent_version: self.agent_version,
            model: self.model,
            final_text: self.final_text,
            usage,
            outcome,
            runs: 1,
        });
        transcript.skills = self.skills;
        transcript
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(lines: &[&str]) -> Transcript {
        let mut p = CopilotParser::new(Format::CopilotJson);
        for line in lines {
            let event: Value = serde_json::from_str(line).unwrap();
            p.handle(&event);
        }
        p.finish()
    }

    #[test]
    fn usage_events_count_once_and_an_abort_is_an_interruption() {
        let t = parse(&[
            r#"{"type":"assistant.usage","data":{"inputTokens":5,"outputTokens":2}}"#,
            r#"{"type":"assistant.usage","data":{"inputTokens":5,"outputTokens":2}}"#,
            r#"{"type":"abort","data":{"reason":"user_initiated"}}"#,
            r#"{"type":"result","sessionId":"s","exitCode":0}"#,
        ]);
        assert_eq!((t.usage.input_tokens, t.usage.output_tokens), (10, 4));
        assert_eq!(t.outcome, Outcome::Interrupted);
        // With usage records (the session log), `assistant.usage` is not counted again.
        let t = parse(&[
            r#"{"type":"assistant.usage","data":{"inputTokens":5,"outputTokens":2}}"#,
            r#"{"type":"session.usage_record","data":{"usage":{"inputTokens":5,"outputTokens":2}}}"#,
            r#"{"type":"session.shutdown","data":{}}"#,
        ]);
        assert_eq!((t.usage.input_tokens, t.usage.output_tokens), (5, 2));
        assert!(t.outcome.is_completed());
    }

    #[test]
    fn mcp_tools_get_the_shared_spelling() {
        let t = parse(&[
            r#"{"type":"assistant.message","data":{"content":"","toolRequests":[{"toolCallId":"c1","name":"github-get_issue","mcpServerName":"github","mcpToolName":"get_issue","arguments":{"n":1}}]}}"#,
            r#"{"type":"tool.execution_complete","data":{"toolCallId":"c1","success":false,"error":{"message":"not found"}}}"#,
            r#"{"type":"assistant.message","data":{"content":"It failed.","toolRequests":[]}}"#,
            r#"{"type":"result","sessionId":"s","exitCode":0}"#,
        ]);
        let call = &t.tool_calls[0];
        assert_eq!(call.name, "github-get_issue", "the raw name stays");
        assert_eq!(call.canonical, "mcp__github__get_issue");
        assert!(call.is_error);
        assert_eq!(call.output.as_deref(), Some("not found"));
        assert_eq!(call.exit_code, None, "not a shell call");
        assert_eq!(t.final_text.as_deref(), Some("It failed."));
    }

    #[test]
    fn the_loaded_skills_are_kept() {
        let t = parse(&[
            r#"{"type":"session.skills_loaded","data":{"skills":[{"name":"greet","enabled":true},{"name":"off","enabled":false},{"name":"wave"}]}}"#,
        ]);
        assert_eq!(t.skills, Some(vec!["greet".to_owned(), "wave".to_owned()]));
    }
}
