//! Codex CLI transcripts: `codex exec --json` events and rollout logs.
//!
//! - **exec JSON** (0.169.0, also the 2025 events in the corpus; and `codex app-server`'s
//!   messages, read as the exec events they stand for: [`super::codex_app_server`]): `thread.started`,
//!   `turn.started`, `item.started` / `item.completed` with item types `command_execution`
//!   {command, aggregated_output, exit_code, status}, `file_change` {changes}, `mcp_tool_call`,
//!   `web_search`, `todo_list`, `agent_message` {text}, `reasoning`, `error`;
//!   `turn.completed` {usage}, `turn.failed` {error}. No cost and no turn count.
//! - **rollout** (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`, 0.36–0.169):
//!   `{timestamp, type, payload}` lines; `response_item` payloads `function_call` {name,
//!   arguments (a JSON string), call_id}, `custom_tool_call` {name, input}, their `*_output`
//!   (plain text with "Exit code: N" / "Process exited with code N", or a JSON string with
//!   `metadata.exit_code`), `message` (assistant `output_text`); `event_msg` payloads
//!   `token_count` (cumulative `total_token_usage`), `task_complete`, `turn_aborted`.
//!
//! Codex counts cached tokens inside `input_tokens`; they are moved to
//! `cache_read_input_tokens` so usage means the same for every agent.

use serde_json::Value;

use super::builder::{Builder, Parts, ToolResult};
use super::json::{EventParser, str_of, u64_of};
use super::turns::TurnLog;
use super::{Format, Outcome, Transcript, Usage};

/// Codex usage objects: `input_tokens` includes `cached_input_tokens`.
fn usage_of(v: &Value) -> Usage {
    let cached = u64_of(v, "cached_input_tokens");
    Usage {
        input_tokens: u64_of(v, "input_tokens").saturating_sub(cached),
        output_tokens: u64_of(v, "output_tokens"),
        cache_creation_input_tokens: u64_of(v, "cache_write_input_tokens"),
        cache_read_input_tokens: cached,
        ..Usage::default()
    }
}

/// `codex exec --json`.
pub(crate) struct ExecParser {
    b: Builder,
    session_id: Option<String>,
    runs: u32,
    usage: Usage,
    turns: u32,
    final_text: Option<String>,
    failed: Option<String>,
    last_error: Option<String>,
    turn_open: bool,
    /// The assistant's messages, each with the calls that follow it (exec JSON records
    /// no reply boundaries and no usage per request: a turn here is a message and its
    /// calls).
    replies: TurnLog,
    reply: Option<usize>,
    /// A run driven through `codex app-server`: its messages in order.
    app: super::codex_app_server::AppServer,
}

impl ExecParser {
    pub(crate) fn new() -> Self {
        ExecParser {
            b: Builder::default().with_vocabulary(crate::spec::tools::Vocabulary::Codex),
            session_id: None,
            runs: 0,
            usage: Usage::default(),
            turns: 0,
            final_text: None,
            failed: None,
            last_error: None,
            turn_open: false,
            replies: TurnLog::default(),
            reply: None,
            app: Default::default(),
        }
    }

    /// One `codex exec --json` event.
    fn exec_event(&mut self, event: &Value) {
        match str_of(event, "type").unwrap_or("") {
            "thread.started" => {
                self.runs = self.runs.saturating_add(1);
                self.session_id = str_of(event, "thread_id").map(str::to_owned);
            }
            "turn.started" => {
                self.runs = self.runs.max(1);
                self.turn_open = true;
                self.failed = None;
                self.reply = None;
            }
            "turn.completed" => {
                self.turn_open = false;
                self.turns = self.turns.saturating_add(1);
                if let Some(u) = event.get("usage") {
                    self.usage.add(&usage_of(u));
                }
            }
            "turn.failed" => {
                self.turn_open = false;
                self.failed = event
                    .get("error")
                    .and_then(|e| str_of(e, "message"))
                    .map(str::to_owned)
                    .or_else(|| self.last_error.clone())
                    .or_else(|| Some("turn failed".into()));
            }
            "error" => self.last_error = str_of(event, "message").map(str::to_owned),
            "item.started" | "item.updated" => {
                if let Some(item) = event.get("item") {
                    self.item(item, false);
                }
            }
            "item.completed" => {
                if let Some(item) = event.get("item") {
                    self.item(item, true);
                }
            }
            _ => {}
        }
    }

    fn item(&mut self, item: &Value, completed: bool) {
        let Some(id) = str_of(item, "id") else {
            return;
        };
        let kind = str_of(item, "type").unwrap_or("");
        let (name, input) = match kind {
            "command_execution" => (
                "command_execution".to_owned(),
                serde_json::json!({ "command": item.get("command").cloned().unwrap_or(Value::Null) }),
            ),
            "file_change" => (
                "file_change".to_owned(),
                serde_json::json!({ "changes": item.get("changes").cloned().unwrap_or(Value::Null) }),
            ),
            "mcp_tool_call" => (
                format!(
                    "mcp__{}__{}",
                    str_of(item, "server").unwrap_or("unknown"),
                    str_of(item, "tool").unwrap_or("unknown")
                ),
                item.get("arguments").cloned().unwrap_or(Value::Null),
            ),
            // Started with an empty query, completed with the real one: the started item
            // is the call announced without its input, filled in when it completes.
            "web_search" => (
                "web_search".to_owned(),
                match item.get("query") {
                    Some(Value::String(q)) if !q.is_empty() => serde_json::json!({ "query": q }),
                    _ => serde_json::json!({}),
                },
            ),
            // Only in `codex app-server` runs: its request to the client
            // ([`super::codex_app_server`]), completed when it is resolved.
            "request_user_input" => (
                "request_user_input".to_owned(),
                match item.get("questions") {
                    Some(q) if !q.is_null() => serde_json::json!({ "questions": q }),
                    _ => serde_json::json!({}),
                },
            ),
            "todo_list" => (
                "update_plan".to_owned(),
                serde_json::json!({ "items": item.get("items").cloned().unwrap_or(Value::Null) }),
            ),
            "agent_message" => {
                if completed {
                    self.final_text = str_of(item, "text").map(str::to_owned);
                    self.reply = self.replies.reply(Some(id), super::MAIN_AGENT, None, None);
                    if let (Some(turn), Some(text)) = (self.reply, &self.final_text) {
                        self.replies.text(turn, text);
                    }
                }
                return;
            }
            "error" => {
                self.last_error = str_of(item, "message").map(str::to_owned);
                return;
            }
            _ => return,
        };
        self.b.call(id, &name, || input, None, None);
        if kind == "web_search" {
            // OpenAI runs the search, not Codex.
            self.b.server_side(id);
        }
        if self.reply.is_none() {
            self.reply = self.replies.reply(None, super::MAIN_AGENT, None, None);
        }
        if let (Some(turn), Some(index)) = (self.reply, self.b.index_of(id)) {
            self.replies.call(turn, index);
        }
        self.final_text = None;
        if !completed {
            return;
        }
        let status = str_of(item, "status").unwrap_or("completed");
        let exit_code = item
            .get("exit_code")
            .and_then(Value::as_i64)
            .and_then(|c| i32::try_from(c).ok());
        let output = match kind {
            "command_execution" => str_of(item, "aggregated_output").unwrap_or("").to_owned(),
            "mcp_tool_call" => item
                .get("result")
                .or_else(|| item.get("error"))
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                .unwrap_or_default(),
            _ => String::new(),
        };
        // `declined`: the approval was refused, so the command never ran.
        let blocked = (status == "declined")
            .then(|| format!("declined: {}", crate::shared::text::truncate(&output, 200)));
        self.b.result(
            id,
            ToolResult {
                output,
                is_error: status == "failed" || exit_code.is_some_and(|c| c != 0),
                exit_code,
                blocked,
                ..ToolResult::default()
            },
        );
    }
}

impl EventParser for ExecParser {
    fn calls(&self) -> &[super::ToolCall] {
        self.b.calls()
    }

    fn builder(&mut self) -> &mut Builder {
        &mut self.b
    }

    fn event(&mut self, _line_no: u64, event: &Value) {
        if super::codex_app_server::AppServer::is_message(event) {
            if let Some(event) = self.app.event(event) {
                self.exec_event(&event);
            }
            return;
        }
        self.exec_event(event);
    }

    fn finish(self) -> Transcript {
        let outcome = if let Some(message) = self.failed {
            Outcome::ApiError {
                message,
                http_status: None,
            }
        } else if self.turn_open || self.turns == 0 {
            Outcome::Incomplete {
                message: "no `turn.completed` event (the agent was killed or crashed)".into(),
            }
        } else {
            Outcome::Completed
        };
        let mut usage = self.usage;
        usage.turns = None;
        let (turns, turns_left_out) = self.replies.finish();
        let mut transcript = self.b.into_transcript(Parts {
            format: Format::CodexExecJson,
            session_id: self.session_id,
            agent_version: None,
            model: None,
            final_text: self.final_text,
            usage,
            outcome,
            runs: self.runs.max(1),
        });
        transcript.turns = turns;
        transcript.turns_left_out = turns_left_out;
        transcript
    }
}

/// Codex rollout logs.
pub(crate) struct RolloutParser {
    b: Builder,
    session_id: Option<String>,
    agent_version: Option<String>,
    model: Option<String>,
    runs: u32,
    usage: Usage,
    final_text: Option<String>,
    completed: bool,
    aborted: bool,
    last_was_call: bool,
    first_ts: Option<String>,
    last_ts: Option<String>,
    duration_ms: Option<u64>,
}

impl RolloutParser {
    pub(crate) fn new() -> Self {
        RolloutParser {
            b: Builder::default().with_vocabulary(crate::spec::tools::Vocabulary::Codex),
            session_id: None,
            agent_version: None,
            model: None,
            runs: 0,
            usage: Usage::default(),
            final_text: None,
            completed: false,
            aborted: false,
            last_was_call: false,
            first_ts: None,
            last_ts: None,
            duration_ms: None,
        }
    }

    fn response_item(&mut self, payload: &Value, ts: Option<String>) {
        match str_of(payload, "type").unwrap_or("") {
            "function_call" | "custom_tool_call" | "local_shell_call" => {
                let Some(id) = str_of(payload, "call_id").or_else(|| str_of(payload, "id")) else {
                    return;
                };
                let name = str_of(payload, "name").unwrap_or("local_shell");
                let input = match (
                    payload.get("arguments"),
                    payload.get("input"),
                    payload.get("action"),
                ) {
                    // `arguments` is JSON text; keep it as text if it is not.
                    (Some(Value::String(args)), _, _) => {
                        serde_json::from_str(args).unwrap_or_else(|_| Value::String(args.clone()))
                    }
                    (_, Some(Value::String(input)), _) if name == "apply_patch" => {
                        serde_json::json!({ "patch": input })
                    }
                    (_, Some(input), _) => input.clone(),
                    (_, _, Some(action)) => action.clone(),
                    _ => Value::Null,
                };
                self.b.call(id, name, || input, None, ts);
                self.final_text = None;
                self.last_was_call = true;
                self.completed = false;
            }
            "function_call_output" | "custom_tool_call_output" | "local_shell_call_output" => {
                let Some(id) = str_of(payload, "call_id") else {
                    return;
                };
                let raw = match payload.get("output") {
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                    None => String::new(),
                };
                // Newer outputs are JSON text: {"output": "...", "metadata": {"exit_code": N}}.
                let (output, exit_code) = match serde_json::from_str::<Value>(&raw) {
                    Ok(v) if v.get("output").is_some() => (
                        str_of(&v, "output").unwrap_or("").to_owned(),
                        v.get("metadata")
                            .and_then(|m| m.get("exit_code"))
                            .and_then(Value::as_i64)
                            .and_then(|c| i32::try_from(c).ok()),
                    ),
                    _ => {
                        let code = super::exit_code_in_text(&raw);
                        (raw, code)
                    }
                };
                let is_error = exit_code.is_some_and(|c| c != 0);
                self.b.result(
                    id,
                    ToolResult {
                        output,
                        is_error,
                        exit_code,
                        ..ToolResult::default()
                    },
                );
            }
            "message" if str_of(payload, "role") == Some("assistant") => {
                let text: Vec<&str> = payload
                    .get("content")
                    .and_then(Value::as_array)
                    .map(|parts| {
                        parts
                            .iter()
                            .filter(|p| str_of(p, "type") == Some("output_text"))
                            .filter_map(|p| str_of(p, "text"))
                            .collect()
                    })
                    .unwrap_or_default();
                if !text.is_empty() {
                    self.final_text = Some(text.join("\n"));
                    self.last_was_call = false;
                }
            }
            _ => {}
        }
    }
}

impl EventParser for RolloutParser {
    fn calls(&self) -> &[super::ToolCall] {
        self.b.calls()
    }

    fn builder(&mut self) -> &mut Builder {
        &mut self.b
    }

    fn event(&mut self, _line_no: u64, line: &Value) {
        let ts = str_of(line, "timestamp").map(str::to_owned);
        if let Some(t) = &ts {
            if self.first_ts.is_none() {
                self.first_ts = Some(t.clone());
            }
            self.last_ts = Some(t.clone());
        }
        let Some(payload) = line.get("payload") else {
            return;
        };
        match str_of(line, "type").unwrap_or("") {
            "session_meta" => {
                self.runs = self.runs.saturating_add(1);
                self.session_id = str_of(payload, "id")
                    .map(str::to_owned)
                    .or(self.session_id.take());
                if let Some(v) = str_of(payload, "cli_version") {
                    self.agent_version = Some(format!("codex {v}"));
                }
            }
            "turn_context" => {
                if let Some(m) = str_of(payload, "model") {
                    self.model = Some(m.to_owned());
                }
            }
            "response_item" => self.response_item(payload, ts),
            "event_msg" => match str_of(payload, "type").unwrap_or("") {
                "token_count" => {
                    if let Some(total) =
                        payload.get("info").and_then(|i| i.get("total_token_usage"))
                    {
                        self.usage = usage_of(total);
                    }
                }
                "task_complete" => {
                    self.completed = true;
                    self.aborted = false;
                    if let Some(t) = str_of(payload, "last_agent_message") {
                        self.final_text = Some(t.to_owned());
                    }
                    self.duration_ms = payload.get("duration_ms").and_then(Value::as_u64);
                }
                "turn_aborted" => self.aborted = true,
                "user_message" => self.aborted = false,
                _ => {}
            },
            _ => {}
        }
    }

    fn finish(self) -> Transcript {
        let outcome = if self.aborted {
            Outcome::Interrupted
        } else if self.completed || (self.final_text.is_some() && !self.last_was_call) {
            Outcome::Completed
        } else {
            Outcome::Incomplete {
                message: "the rollout ends without a final answer".into(),
            }
        };
        let mut usage = self.usage;
        usage.duration_ms = self
            .duration_ms
            .or_else(|| match (&self.first_ts, &self.last_ts) {
                (Some(a), Some(b)) => super::millis_between(a, b),
                _ => None,
            });
        self.b.into_transcript(Parts {
            format: Format::CodexRollout,
            session_id: self.session_id,
            agent_version: self.agent_version,
            model: self.model,
            final_text: self.final_text,
            usage,
            outcome,
            runs: self.runs.max(1),
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::transcript::parse_reader;

    /// `codex exec --json` has no reply boundaries: each assistant message is a turn with
    /// the calls that follow it; calls before any message make a turn without text.
    #[test]
    fn exec_json_turns_are_messages_with_the_calls_that_follow() {
        let text = [
            r#"{"type":"thread.started","thread_id":"t"}"#,
            r#"{"type":"turn.started"}"#,
            r#"{"type":"item.completed","item":{"id":"i0","type":"command_execution","command":"ls","aggregated_output":"a","exit_code":0,"status":"completed"}}"#,
            r#"{"type":"item.completed","item":{"id":"i1","type":"agent_message","text":"I will run the tests."}}"#,
            r#"{"type":"item.started","item":{"id":"i2","type":"command_execution","command":"pytest -q","status":"in_progress"}}"#,
            r#"{"type":"item.completed","item":{"id":"i2","type":"command_execution","command":"pytest -q","aggregated_output":"1 failed","exit_code":1,"status":"failed"}}"#,
            r#"{"type":"item.completed","item":{"id":"i3","type":"agent_message","text":"One test fails."}}"#,
            r#"{"type":"turn.completed","usage":{"input_tokens":10,"output_tokens":2}}"#,
        ]
        .join("\n");
        let t = parse_reader(text.as_bytes()).unwrap();
        let turns: Vec<(Option<&str>, &[u32])> = t
            .turns
            .iter()
            .map(|t| (t.text.as_deref(), t.calls.as_slice()))
            .collect();
        assert_eq!(
            turns,
            [
                (None, &[0][..]),
                (Some("I will run the tests."), &[1][..]),
                (Some("One test fails."), &[][..]),
            ]
        );
    }

    /// Codex CLI 0.169.0 announces a web search with an empty query and completes it with
    /// the real one: one call under its id, with the real query, marked server-side.
    #[test]
    fn a_web_search_is_one_call_with_its_real_query() {
        let text = [
            r#"{"type":"thread.started","thread_id":"t"}"#,
            r#"{"type":"turn.started"}"#,
            r#"{"type":"item.started","item":{"id":"item_1","type":"web_search","query":""}}"#,
            r#"{"type":"item.completed","item":{"id":"item_1","type":"web_search","query":"rust 2024 edition","action":{"type":"search","query":"rust 2024 edition"}}}"#,
            r#"{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"Found it."}}"#,
            r#"{"type":"turn.completed","usage":{"input_tokens":10,"output_tokens":2}}"#,
        ]
        .join("\n");
        let t = parse_reader(text.as_bytes()).unwrap();
        assert_eq!(t.tool_calls.len(), 1, "{:#?}", t.tool_calls);
        let search = &t.tool_calls[0];
        assert_eq!(
            search.input,
            serde_json::json!({"query": "rust 2024 edition"})
        );
        assert!(search.server_side);
        assert!(
            t.warnings.is_empty() && t.lost.is_empty(),
            "{:?}",
            t.warnings
        );
    }
}
