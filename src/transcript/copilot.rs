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
//!
//! Many other events (deltas, `session.background_tasks_changed`, …) carry nothing a
//! transcript keeps. The `--usage-output-file` JSON (token totals, no calls) is not a
//! transcript; [`usage_file`] reads it.

use serde_json::Value;

use super::builder::{Builder, ToolResult};
use super::json::{f64_of, i32_of, parse_line, str_of, u64_of};
use super::{Format, LineParser, Outcome, Transcript, Usage};
use crate::tools::Vocabulary;

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
    final_text: Option<String>,
    error: Option<Outcome>,
    exit_code: Option<i64>,
    ended: bool,
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
            final_text: None,
            error: None,
            exit_code: None,
            ended: false,
        }
    }

    fn tool_request(&mut self, req: &Value, agent: Option<&str>, ts: Option<String>) {
        let Some(id) = str_of(req, "toolCallId") else {
            return;
        };
        let raw = str_of(req, "name")
            .or_else(|| str_of(req, "toolName"))
            .unwrap_or("unknown");
        // An MCP tool: its server and tool name are given apart.
        let name = match (str_of(req, "mcpServerName"), str_of(req, "mcpToolName")) {
            (Some(server), Some(tool)) => format!("mcp__{server}__{tool}"),
            _ => raw.to_owned(),
        };
        let input = req.get("arguments").cloned().unwrap_or(Value::Null);
        self.b.call(id, &name, || input, agent, ts);
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
        self.b.result(
            id,
            ToolResult {
                output,
                is_error: !success || exit_code.is_some_and(|c| c != 0),
                exit_code,
                ..ToolResult::default()
            },
        );
    }

    fn event(&mut self, event: &Value) {
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
                    self.usage.add(&Usage {
                        input_tokens: u64_of(u, "inputTokens"),
                        output_tokens: u64_of(u, "outputTokens"),
                        cache_creation_input_tokens: u64_of(u, "cacheWriteTokens"),
                        cache_read_input_tokens: u64_of(u, "cacheReadTokens"),
                        cost_usd: f64_of(u, "cost"),
                        ..Usage::default()
                    });
                }
            }
            "session.shutdown" => {
                self.ended = true;
                if self.usage_records == 0
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

impl LineParser for CopilotParser {
    fn calls(&self) -> &[super::ToolCall] {
        self.b.calls()
    }

    fn line(&mut self, line_no: u64, text: &str) {
        if let Some(event) = parse_line(&mut self.b, line_no, text) {
            self.event(&event);
        }
    }

    fn finish(self: Box<Self>) -> Transcript {
        let outcome = match (self.error, self.exit_code) {
            (Some(error), _) => error,
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
        if self.turns > 0 {
            usage.turns = Some(self.turns);
        }
        let (tool_calls, log) = self.b.finish();
        Transcript {
            format: self.format,
            session_id: self.session_id,
            agent_version: self.agent_version,
            model: self.model,
            tool_calls,
            final_text: self.final_text,
            usage,
            outcome,
            runs: 1,
            warnings: log.kept,
            warnings_total: log.total,
            lost: log.lost,
            records_only: None,
        }
    }
}
