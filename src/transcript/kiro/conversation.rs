//! Kiro CLI v1 conversations: the `ConversationState` JSON the v1 engine keeps in the
//! `conversations_v2` table of its `data.sqlite3` (one row per conversation), and that
//! `/save` writes as a file.
//!
//! Shape (`aws/amazon-q-developer-cli`@sync-prod-from-main `crates/chat-cli/src/cli/chat/
//! conversation.rs`, `message.rs`; Kiro's own recorded fixtures, Kiro CLI 1.28):
//! `{conversation_id, next_message, history: [{user, assistant, request_metadata}],
//! tools: {<origin>: [{ToolSpecification: {name, …}}]}, model_info: {model_id}, latest_summary,
//! …}`, where
//! - `user.content` is `{"Prompt": {prompt}}`, `{"ToolUseResults": {tool_use_results}}` or
//!   `{"CancelledToolUses": {prompt, tool_use_results}}` (tools that did not run: denied in
//!   non-interactive mode, or cancelled); `user.timestamp` is RFC 3339 or null;
//! - a result is `{tool_use_id, content: [{"Text": s} | {"Json": v}], status: "Success" |
//!   "Error"}`; a shell command's JSON is `{exit_status: "0", stdout, stderr}`;
//! - `assistant` is `{"Response": {message_id, content}}` or `{"ToolUse": {message_id,
//!   content, tool_uses: [{id, name, orig_name, args, orig_args}]}}`: `name` as the model saw
//!   it (an MCP tool's bare name); its server is the `tools` key listing it (`native___`
//!   holds the built-ins);
//! - `next_message` holds results the model has not been sent yet (a run stopped mid-turn).
//!
//! A conversation whose history was compacted (`latest_summary` set) no longer holds the
//! calls made before: it is marked as having lost calls, so that no guardrail passes on it.

use std::collections::HashMap;

use serde_json::Value;

use super::super::builder::{Builder, Parts};
use super::super::json::{EventParser, str_of};
use super::super::{Format, Outcome, ToolCall, Transcript, Usage};
use super::{Calls, KiroCall, tool_result};

/// v1 conversations, one JSON document per line (a recorded run has one).
pub(crate) struct ConversationParser {
    b: Builder,
    calls: Calls,
    servers: HashMap<String, String>,
    session_id: Option<String>,
    model: Option<String>,
    final_text: Option<String>,
    outcome: Option<Outcome>,
    usage: Usage,
    runs: u32,
}

impl ConversationParser {
    pub(crate) fn new() -> Self {
        ConversationParser {
            b: super::builder(),
            calls: Calls::default(),
            servers: HashMap::new(),
            session_id: None,
            model: None,
            final_text: None,
            outcome: None,
            usage: Usage::default(),
            runs: 0,
        }
    }

    /// Reads one conversation (from line `line_no`, 0 for a database row).
    pub(crate) fn conversation(&mut self, line_no: u64, doc: &Value) {
        let Some(history) = doc.get("history").and_then(Value::as_array) else {
            self.b.warn_lost(
                line_no,
                "a Kiro conversation without a `history` list; skipped",
            );
            return;
        };
        self.runs = self.runs.saturating_add(1);
        self.session_id = str_of(doc, "conversation_id").map(str::to_owned);
        self.servers.extend(mcp_servers(doc.get("tools")));
        if let Some(m) = doc
            .get("model_info")
            .and_then(|m| str_of(m, "model_id"))
            .or_else(|| doc.get("model").and_then(Value::as_str))
        {
            self.model = Some(m.to_owned());
        }
        let mut last_answered = true;
        let mut turns = 0u32;
        let mut started: Option<u64> = None;
        let mut ended: Option<u64> = None;
        for entry in history {
            self.user(entry.get("user"));
            let ts = entry
                .get("user")
                .and_then(|u| str_of(u, "timestamp"))
                .map(str::to_owned);
            last_answered = self.assistant(entry.get("assistant"), ts);
            if let Some(meta) = entry.get("request_metadata") {
                turns = turns.saturating_add(1);
                if let Some(m) = str_of(meta, "model_id") {
                    self.model = Some(m.to_owned());
                }
                let start = meta
                    .get("request_start_timestamp_ms")
                    .and_then(Value::as_u64);
                started = started.or(start);
                ended = meta
                    .get("stream_end_timestamp_ms")
                    .and_then(Value::as_u64)
                    .or(ended);
            }
        }
        let pending = doc.get("next_message").filter(|m| !m.is_null());
        self.user(pending);
        self.usage.turns = Some(self.usage.turns.unwrap_or(0).saturating_add(turns));
        if let (Some(a), Some(b)) = (started, ended) {
            self.usage.duration_ms = Some(
                self.usage
                    .duration_ms
                    .unwrap_or(0)
                    .saturating_add(b.saturating_sub(a)),
            );
        }
        if doc.get("latest_summary").is_some_and(|s| !s.is_null()) {
            self.b.warn_lost(
                line_no,
                "the Kiro conversation was compacted: the tool calls made before its summary \
                 are no longer in it",
            );
        }
        self.outcome = Some(
            if last_answered && pending.is_none() && !history.is_empty() {
                Outcome::Completed
            } else {
                Outcome::Incomplete {
                    message: "the Kiro conversation ends before the agent's final answer".into(),
                }
            },
        );
    }

    /// A history entry's user message: the results of the previous entry's tool uses.
    fn user(&mut self, user: Option<&Value>) {
        let Some(content) = user.and_then(|u| u.get("content")) else {
            return;
        };
        for (key, failed) in [("ToolUseResults", false), ("CancelledToolUses", true)] {
            let results = content
                .get(key)
                .and_then(|c| c.get("tool_use_results"))
                .and_then(Value::as_array);
            for r in results.into_iter().flatten() {
                let Some(id) = str_of(r, "tool_use_id") else {
                    continue;
                };
                let status_error =
                    str_of(r, "status").is_some_and(|s| s.eq_ignore_ascii_case("error"));
                self.calls
                    .result(id, tool_result(r.get("content"), failed || status_error));
            }
        }
    }

    /// A history entry's assistant message; `true` when it is a final answer (no tool use).
    fn assistant(&mut self, assistant: Option<&Value>, ts: Option<String>) -> bool {
        let Some(assistant) = assistant else {
            return false;
        };
        if let Some(response) = assistant.get("Response") {
            if let Some(text) = str_of(response, "content").filter(|t| !t.trim().is_empty()) {
                self.final_text = Some(text.to_owned());
            }
            return true;
        }
        let Some(tool_use) = assistant.get("ToolUse") else {
            return false;
        };
        self.final_text = None;
        for u in tool_use
            .get("tool_uses")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let (Some(id), Some(name)) = (str_of(u, "id"), str_of(u, "name")) else {
                continue;
            };
            self.calls.call(KiroCall {
                id: id.to_owned(),
                name: name.to_owned(),
                orig_name: str_of(u, "orig_name")
                    .filter(|o| *o != name)
                    .map(str::to_owned),
                input: u.get("args").cloned().unwrap_or(Value::Null),
                timestamp: ts.clone(),
                ..KiroCall::default()
            });
        }
        false
    }
}

/// The server of each MCP tool a conversation's `tools` map lists: `{<origin>:
/// [{"ToolSpecification": {name}}]}`, where the origin `native___` holds the built-ins.
fn mcp_servers(tools: Option<&Value>) -> HashMap<String, String> {
    let mut servers = HashMap::new();
    for (origin, specs) in tools.and_then(Value::as_object).into_iter().flatten() {
        if origin == "native___" || origin.eq_ignore_ascii_case("native") {
            continue;
        }
        for spec in specs.as_array().into_iter().flatten() {
            let spec = spec.get("ToolSpecification").unwrap_or(spec);
            if let Some(name) = str_of(spec, "name") {
                servers
                    .entry(name.to_owned())
                    .or_insert_with(|| origin.clone());
            }
        }
    }
    servers
}

impl EventParser for ConversationParser {
    fn calls(&self) -> &[ToolCall] {
        self.b.calls()
    }

    fn builder(&mut self) -> &mut Builder {
        &mut self.b
    }

    fn event(&mut self, line_no: u64, event: &Value) {
        self.conversation(line_no, event);
    }

    fn finish(mut self) -> Transcript {
        let calls = std::mem::take(&mut self.calls);
        calls.into_builder(&mut self.b, &self.servers);
        self.b.into_transcript(Parts {
            format: Format::KiroConversation,
            session_id: self.session_id,
            agent_version: None,
            model: self.model,
            final_text: self.final_text,
            usage: self.usage,
            outcome: self.outcome.unwrap_or(Outcome::Incomplete {
                message: "no Kiro conversation was read".into(),
            }),
            runs: self.runs.max(1),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(doc: &Value) -> Transcript {
        let mut p = ConversationParser::new();
        p.conversation(1, doc);
        EventParser::finish(p)
    }

    #[test]
    fn results_pair_with_calls_and_cancelled_uses_did_not_run() {
        let doc = serde_json::json!({
            "conversation_id": "c1",
            "history": [
                {"user": {"content": {"Prompt": {"prompt": "go"}}, "timestamp": "2026-03-27T17:15:26.081410-07:00"},
                 "assistant": {"ToolUse": {"message_id": "m1", "content": "", "tool_uses": [
                     {"id": "a", "name": "execute_bash", "orig_name": "execute_bash", "args": {"command": "git push origin main"}}]}},
                 "request_metadata": {"model_id": "claude-sonnet-4.5", "request_start_timestamp_ms": 1000, "stream_end_timestamp_ms": 1500}},
                {"user": {"content": {"CancelledToolUses": {"prompt": "no", "tool_use_results": [
                     {"tool_use_id": "a", "content": [{"Text": "Tool use was cancelled by the user"}], "status": "Error"}]}}, "timestamp": null},
                 "assistant": {"Response": {"message_id": "m2", "content": "I did not push."}},
                 "request_metadata": {"request_start_timestamp_ms": 2000, "stream_end_timestamp_ms": 3000}}
            ],
            "tools": {"native___": [{"ToolSpecification": {"name": "execute_bash"}}]}
        });
        let t = parse(&doc);
        assert_eq!(t.format, Format::KiroConversation);
        assert!(t.outcome.is_completed(), "{:?}", t.outcome);
        assert_eq!(t.session_id.as_deref(), Some("c1"));
        assert_eq!(t.model.as_deref(), Some("claude-sonnet-4.5"));
        assert_eq!(t.final_text.as_deref(), Some("I did not push."));
        assert_eq!((t.usage.turns, t.usage.duration_ms), (Some(2), Some(2000)));
        let push = &t.tool_calls[0];
        assert_eq!(push.canonical, "Bash");
        assert_eq!(push.command().as_deref(), Some("git push origin main"));
        assert_eq!(
            (push.is_error, push.exit_code),
            (true, None),
            "it never ran"
        );
        assert_eq!(
            push.timestamp.as_deref(),
            Some("2026-03-27T17:15:26.081410-07:00")
        );
    }

    #[test]
    fn a_compacted_or_unfinished_conversation_is_not_whole() {
        let doc = serde_json::json!({
            "conversation_id": "c2",
            "history": [
                {"user": {"content": {"Prompt": {"prompt": "go"}}},
                 "assistant": {"ToolUse": {"message_id": "m1", "tool_uses": [
                     {"id": "a", "name": "fs_read", "args": {"operations": [{"mode": "Line", "path": "/w/.env"}]}}]}}}
            ],
            "next_message": {"content": {"ToolUseResults": {"tool_use_results": [
                {"tool_use_id": "a", "content": [{"Text": "KEY=1"}], "status": "Success"}]}}},
            "latest_summary": "the user asked …"
        });
        let t = parse(&doc);
        assert!(matches!(t.outcome, Outcome::Incomplete { .. }));
        assert_eq!(t.tool_calls[0].output.as_deref(), Some("KEY=1"));
        assert_eq!(t.tool_calls[0].params()["file_path"], "/w/.env");
        assert!(
            t.lost_tool_calls().is_some(),
            "compacted: calls may be gone"
        );
    }
}
