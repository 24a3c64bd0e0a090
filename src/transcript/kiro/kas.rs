//! Kiro CLI v3 sessions (the KAS engine): `~/.kiro/sessions/<workspace>/sess_<id>/
//! messages.jsonl`, with `session.json` beside it.
//!
//! The v3 engine is not in Kiro's public source; the shapes are those of sessions recorded
//! by Kiro CLI 2.25.0 in public harnesses (`aws-bench/aws-bench`
//! `tests/agents/test_kiro_cli_trajectory.py`, its reader `aws_bench/agents/kiro_cli.py`).
//! Every line is `{"id", "timestamp": RFC 3339, "payload": {"type", …}}`, payload types:
//! - `user` {content}, `assistant` {content, operationType: "Say" | "Reasoning"};
//! - `tool_call` {toolCallId, toolName, args (an object, or a JSON string), status:
//!   "completed" | "failed", kind: "execute" | "read" | "edit" | "other" | …, actionType,
//!   title, _meta: {kiro: {serverName?, toolOrigin, disclosedContext?}}}. An MCP call is
//!   `toolName: "tool_call"` with `title: "@<server>/<tool>"` (and `serverName`); a skill
//!   is `disclose_context` {name} with `disclosedContext.type: "skill"`;
//! - `tool_result` {toolCallId, content: string, success: bool} (shell output ends `Exit
//!   Code: N`);
//! - `turn_start`, `turn_end` {stopReason: "end_turn" | "cancelled" | …},
//!   `usage_summary` {elapsedTime (ms), promptTurnSummaries}, `pending_interaction`,
//!   `interaction_resolved`, `steering_inclusion`, `session_start`.
//!
//! `session.json`: `{schemaVersion, id: "sess_…", createdAt, lastModifiedAt, modelId,
//! status}`.

use serde_json::Value;

use super::super::builder::{Builder, Parts, ToolResult};
use super::super::json::{EventParser, str_of};
use super::super::{Format, Outcome, ToolCall, Transcript, Usage};
use super::{Calls, KiroCall};

/// The payload types of a v3 line.
pub(crate) const TYPES: [&str; 12] = [
    "user",
    "assistant",
    "tool_call",
    "tool_result",
    "turn_start",
    "turn_end",
    "usage_summary",
    "pending_interaction",
    "interaction_resolved",
    "steering_inclusion",
    "session_start",
    "tool_load",
];

/// A v3 `messages.jsonl`.
pub(crate) struct KasParser {
    b: Builder,
    calls: Calls,
    final_text: Option<String>,
    outcome: Option<Outcome>,
    usage: Usage,
    turns: u32,
}

impl KasParser {
    pub(crate) fn new() -> Self {
        KasParser {
            b: super::builder(),
            calls: Calls::default(),
            final_text: None,
            outcome: None,
            usage: Usage::default(),
            turns: 0,
        }
    }

    fn tool_call(&mut self, line_no: u64, p: &Value, ts: Option<String>) {
        let Some(id) = str_of(p, "toolCallId") else {
            self.b
                .warn_lost(line_no, "a Kiro tool call without a `toolCallId`; skipped");
            return;
        };
        let name = str_of(p, "toolName").unwrap_or("unknown");
        let input = match p.get("args") {
            Some(Value::String(s)) => {
                serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone()))
            }
            Some(v) => v.clone(),
            None => Value::Null,
        };
        let kiro = p.get("_meta").and_then(|m| m.get("kiro"));
        let disclosed = kiro.and_then(|k| k.get("disclosedContext"));
        self.final_text = None;
        self.calls.call(KiroCall {
            id: id.to_owned(),
            name: name.to_owned(),
            mcp: mcp_of(name, p, kiro),
            kind: str_of(p, "kind").map(str::to_owned),
            not_a_skill: disclosed
                .and_then(|d| str_of(d, "type"))
                .is_some_and(|t| !t.eq_ignore_ascii_case("skill")),
            failed: str_of(p, "status").is_some_and(|s| s == "failed"),
            input,
            timestamp: ts,
            orig_name: None,
        });
    }

    fn turn_end(&mut self, p: &Value) {
        let reason = str_of(p, "stopReason").unwrap_or("end_turn");
        self.outcome = Some(match reason {
            "end_turn" => Outcome::Completed,
            "cancelled" => Outcome::Interrupted,
            "max_turn_requests" | "max_tokens" => Outcome::MaxTurns {
                message: format!("Kiro stopped the turn: {reason}"),
            },
            other => Outcome::Error {
                message: format!("Kiro stopped the turn: {other}"),
            },
        });
    }
}

/// The `(server, tool)` of an MCP call: the title `@<server>/<tool>`, else
/// `_meta.kiro.serverName` with the tool from the title or from `actionType`
/// (`mcp_<server>_<tool>`, the server's name with `-` as `_`).
fn mcp_of(name: &str, p: &Value, kiro: Option<&Value>) -> Option<(String, String)> {
    let title = str_of(p, "title").unwrap_or("");
    let server = kiro.and_then(|k| str_of(k, "serverName"));
    if let Some((s, tool)) = title.strip_prefix('@').and_then(|t| t.split_once('/'))
        && !s.is_empty()
        && !tool.is_empty()
        && (name == "tool_call" || server.is_some())
    {
        return Some((server.unwrap_or(s).to_owned(), tool.to_owned()));
    }
    let server = server?;
    let action = str_of(p, "actionType").unwrap_or("");
    let prefix = format!("mcp_{}_", server.replace(['-', '.', ' '], "_"));
    let tool = action
        .strip_prefix(&prefix)
        .filter(|t| !t.is_empty())
        .unwrap_or(if name == "tool_call" { action } else { name });
    (!tool.is_empty()).then(|| (server.to_owned(), tool.to_owned()))
}

impl EventParser for KasParser {
    fn calls(&self) -> &[ToolCall] {
        self.b.calls()
    }

    fn builder(&mut self) -> &mut Builder {
        &mut self.b
    }

    fn event(&mut self, line_no: u64, event: &Value) {
        let ts = str_of(event, "timestamp").map(str::to_owned);
        let Some(p) = event.get("payload") else {
            self.b
                .warn(line_no, "a Kiro session line without a `payload`; skipped");
            return;
        };
        match str_of(p, "type").unwrap_or("") {
            "user" => {
                self.outcome = None;
                self.final_text = None;
            }
            "assistant" => {
                if str_of(p, "operationType") != Some("Reasoning")
                    && let Some(text) = str_of(p, "content").filter(|t| !t.trim().is_empty())
                {
                    self.final_text = Some(text.to_owned());
                }
            }
            "tool_call" => self.tool_call(line_no, p, ts),
            "tool_result" => {
                if let Some(id) = str_of(p, "toolCallId") {
                    let content = match p.get("content") {
                        Some(Value::String(s)) => s.clone(),
                        Some(Value::Null) | None => String::new(),
                        Some(other) => other.to_string(),
                    };
                    let success = p.get("success").and_then(Value::as_bool).unwrap_or(true);
                    self.calls.result(
                        id,
                        ToolResult {
                            output: content,
                            is_error: !success,
                            ..ToolResult::default()
                        },
                    );
                }
            }
            "turn_start" => self.turns = self.turns.saturating_add(1),
            "turn_end" => self.turn_end(p),
            "usage_summary" => {
                if let Some(ms) = p.get("elapsedTime").and_then(Value::as_u64) {
                    self.usage.duration_ms =
                        Some(self.usage.duration_ms.unwrap_or(0).saturating_add(ms));
                }
            }
            other => {
                // A line of a newer Kiro about a tool call must not vanish silently.
                if !TYPES.contains(&other) && p.get("toolCallId").is_some() {
                    self.b.warn_lost(
                        line_no,
                        format!("a Kiro session line of unknown type `{other}` about a tool call; skipped"),
                    );
                }
            }
        }
    }

    fn finish(mut self) -> Transcript {
        let calls = std::mem::take(&mut self.calls);
        calls.into_builder(&mut self.b, &Default::default());
        self.usage.turns = Some(self.turns);
        self.b.into_transcript(Parts {
            format: Format::KiroKas,
            session_id: None,
            agent_version: None,
            model: None,
            final_text: self.final_text,
            usage: self.usage,
            outcome: self.outcome.unwrap_or(Outcome::Incomplete {
                message: "the Kiro session ends without `turn_end` (the agent was stopped)".into(),
            }),
            runs: 1,
        })
    }
}

/// Whether `doc` is a v3 session's `session.json`.
pub(crate) fn is_metadata(doc: &Value) -> bool {
    doc.get("schemaVersion").is_some() && doc.get("id").is_some()
}

/// The session id and model of a v3 `session.json`.
pub(crate) fn apply_metadata(doc: &Value, transcript: &mut Transcript) {
    transcript.session_id = str_of(doc, "id").map(str::to_owned);
    if let Some(m) = str_of(doc, "modelId") {
        transcript.model = Some(m.to_owned());
    }
}

/// The last update (ms since the epoch) of a v3 `session.json`.
pub(crate) fn updated(doc: &Value) -> Option<u64> {
    str_of(doc, "lastModifiedAt")
        .and_then(|t| humantime::parse_rfc3339_weak(t).ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::parse_reader;

    /// The lines of a session recorded by Kiro CLI 2.25.0 (as published in
    /// `aws-bench/aws-bench` `tests/agents/test_kiro_cli_trajectory.py`).
    const REAL: &str = r#"{"id":"x","timestamp":"2026-09-23T16:02:55.692Z","payload":{"type":"user","content":"Run echo hi then reply pong"}}
{"id":"x","timestamp":"2026-09-23T16:02:58.992Z","payload":{"type":"tool_call","toolCallId":"run_command_toolu_bdrk_01Hn46f6McTKjurQuHPbGFhg","toolName":"execute_bash","args":{"command":"echo hi"},"status":"completed"}}
{"id":"x","timestamp":"2026-09-23T16:02:58.992Z","payload":{"type":"tool_result","toolCallId":"run_command_toolu_bdrk_01Hn46f6McTKjurQuHPbGFhg","content":"Output:\nhi\n\nExit Code: 0","success":true}}
{"id":"x","timestamp":"2026-09-23T16:03:03.073Z","payload":{"type":"assistant","content":"pong","operationType":"Say"}}
"#;

    #[test]
    fn real_lines_give_the_command_its_exit_code_and_no_turn_end_is_unfinished() {
        let t = parse_reader(REAL.as_bytes()).unwrap();
        assert_eq!(t.format, Format::KiroKas);
        let echo = &t.tool_calls[0];
        assert_eq!(echo.canonical, "Bash");
        assert_eq!(echo.command().as_deref(), Some("echo hi"));
        assert_eq!((echo.exit_code, echo.is_error), (Some(0), false));
        assert_eq!(t.final_text.as_deref(), Some("pong"));
        assert!(matches!(t.outcome, Outcome::Incomplete { .. }));
        let ended = format!(
            "{REAL}{}\n",
            r#"{"id":"y","timestamp":"2026-09-23T16:03:03.090Z","payload":{"type":"turn_end","stopReason":"end_turn"}}"#
        );
        assert!(
            parse_reader(ended.as_bytes())
                .unwrap()
                .outcome
                .is_completed()
        );
    }

    #[test]
    fn an_unknown_line_about_a_tool_call_is_a_lost_call() {
        let text = format!(
            "{REAL}{}\n",
            r#"{"id":"z","timestamp":"2026-09-23T16:03:04.000Z","payload":{"type":"tool_call_update","toolCallId":"t9","status":"completed"}}"#
        );
        let t = parse_reader(text.as_bytes()).unwrap();
        assert_eq!(t.format, Format::KiroKas);
        assert_eq!(t.lost.lines, 1, "{:?}", t.warnings);
    }

    #[test]
    fn mcp_calls_skills_and_unknown_tools() {
        let lines = [
            r#"{"id":"1","timestamp":"2026-09-23T16:03:00.000Z","payload":{"type":"tool_call","toolCallId":"m1","toolName":"tool_call","args":"{\"query\":\"rotate key\"}","status":"completed","kind":"other","actionType":"mcp_docs_mcp_search_docs","title":"@docs-mcp/search_docs","_meta":{"kiro":{"serverName":"docs-mcp"}}}}"#,
            r#"{"id":"2","timestamp":"2026-09-23T16:03:00.000Z","payload":{"type":"tool_call","toolCallId":"m2","toolName":"tool_call","args":{},"status":"failed","kind":"other","actionType":"mcp_docs_mcp_fetch","title":"Docs","_meta":{"kiro":{"serverName":"docs-mcp"}}}}"#,
            r#"{"id":"3","timestamp":"2026-09-23T16:03:00.000Z","payload":{"type":"tool_call","toolCallId":"s1","toolName":"disclose_context","args":{"name":"release-checklist"},"status":"completed","kind":"other","_meta":{"kiro":{"disclosedContext":{"type":"skill","displayName":"release-checklist"}}}}}"#,
            r#"{"id":"4","timestamp":"2026-09-23T16:03:00.000Z","payload":{"type":"tool_call","toolCallId":"s2","toolName":"disclose_context","args":{"name":"style"},"status":"completed","kind":"other","_meta":{"kiro":{"disclosedContext":{"type":"steering"}}}}}"#,
            r#"{"id":"5","timestamp":"2026-09-23T16:03:00.000Z","payload":{"type":"tool_call","toolCallId":"r1","toolName":"readFile","args":{"path":"/w/.env"},"status":"completed","kind":"read"}}"#,
            r#"{"id":"6","timestamp":"2026-09-23T16:03:00.000Z","payload":{"type":"tool_call","toolCallId":"u1","toolName":"frobnicate","args":{},"status":"completed","kind":"other"}}"#,
        ];
        let t = parse_reader(lines.join("\n").as_bytes()).unwrap();
        assert!(t.lost.is_empty(), "{:?}", t.warnings);
        let names: Vec<&str> = t.tool_calls.iter().map(|c| c.canonical.as_str()).collect();
        assert_eq!(
            names,
            [
                "mcp__docs-mcp__search_docs",
                "mcp__docs-mcp__fetch",
                "Skill",
                "disclose_context",
                "Read",
                "frobnicate"
            ]
        );
        assert_eq!(t.tool_calls[0].params()["query"], "rotate key");
        assert!(t.tool_calls[1].is_error, "failed without a result");
        assert_eq!(t.tool_calls[2].params()["skill"], "release-checklist");
        assert_eq!(t.tool_calls[4].params()["file_path"], "/w/.env");
    }
}
