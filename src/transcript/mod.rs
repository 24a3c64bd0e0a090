//! Transcripts: what an agent did, normalized across agents and formats.
//!
//! A [`Transcript`] holds the ordered tool calls (with input, output, error flag, exit code,
//! the agent or subagent that made them, and a timestamp), the final answer, usage (tokens,
//! cost in USD, turns, duration in ms) and an [`Outcome`]. One parser module per external
//! format fills it; the format is detected from the content, never from the file name:
//!
//! | format | source |
//! |---|---|
//! | `claude-session` | Claude Code session logs (`~/.claude/projects/**.jsonl`), 1.0.x–2.1.x, subagent files |
//! | `claude-stream-json` | `claude -p --output-format stream-json --verbose`, also wrapped as `{"raw": event}` |
//! | `qwen-stream-json` | `qwen -o stream-json` (Claude's event shapes), also as one JSON array |
//! | `qwen-session` | Qwen Code session logs (Gemini-style `parts`) |
//! | `codex-exec-json` | `codex exec --json` events |
//! | `codex-rollout` | Codex CLI rollout logs (`~/.codex/sessions/**/rollout-*.jsonl`) |
//! | `gemini-stream-json` | `gemini -o stream-json` events |
//! | `gemini-session` | Gemini CLI session logs (`chats/session-*.jsonl`) |
//! | `gemini-chat` | Gemini CLI chat recordings (one JSON document) |
//! | `copilot-json` | `copilot -p --output-format json` events (GitHub Copilot CLI 1.0.102) |
//! | `copilot-session` | Copilot CLI session-state logs (`session-state/<id>/events.jsonl`) |
//! | `opencode-json` | `opencode run --format json` events (1.18.33; also Kilo 7.7.7) |
//! | `opencode-session` | `opencode export` session documents |
//! | `pi-json` | `pi --mode json` events (0.73.1) |
//! | `pi-session` | pi session logs (`sessions/--<cwd>--/*.jsonl`) |
//! | `cursor-stream-json` | `cursor-agent -p --output-format stream-json` (2026.01.28) |
//! | `auggie-json` | `auggie --output-format json` (0.36.0): the answer, no tool calls |
//! | `auggie-session` | Auggie session files (`sessions/<id>.json`) |
//! | `aider-chat` | Aider's `.aider.chat.history.md` (0.86.2): its applied edits as calls |
//! | `kiro-conversation` | Kiro CLI v1 conversations: a `data.sqlite3` database (its newest), a row's or `/save`'s JSON |
//! | `kiro-session` | Kiro CLI v2 session logs (`~/.kiro/sessions/cli/<id>.jsonl`, or its `<id>.json`) |
//! | `kiro-kas` | Kiro CLI v3 session logs (`~/.kiro/sessions/<workspace>/sess_<id>/messages.jsonl`, or its `session.json`) |
//!
//! This module is the model; `read.rs` reads files and streams and `detect.rs` tells the
//! formats apart and picks their parsers.
//!
//! Parsing streams line by line: memory grows with the tool calls kept, not with the file.
//! A tool call repeated across lines (same id) counts once. A malformed line becomes a
//! [`Warning`] with its line number, and the rest of the file is still used; only the first
//! [`MAX_WARNINGS_KEPT`] warnings are kept, the rest are counted (`warnings_total`).
//!
//! What a transcript could not read is never silently dropped:
//! - invalid UTF-8 is replaced (U+FFFD) with a warning;
//! - a line that is not JSON, a line of another format (Gemini lines appended to a Claude
//!   file), a tool result whose call is missing (an orphan) are warnings **and** recorded
//!   in [`Transcript::lost`]: the transcript may have lost tool calls, so assertions that
//!   pass on the absence of a call (`called: false`, `not_ran`, at-most counts) can not
//!   pass on it (they are `error`, see `crate::assertions`);
//! - a file whose last line is cut off (no line break, not valid JSON) is truncated: its
//!   outcome is [`Outcome::Incomplete`], which makes a test `error`.

mod aider;
pub mod align;
mod auggie;
mod blocked;
pub(crate) use blocked::refusal_in;
mod builder;
mod claude;
mod codex;
pub(crate) mod codex_app_server;
mod copilot;
mod cursor;
mod detect;
pub mod dialog;
pub mod display;
mod gemini;
mod json;
pub mod kiro;
mod opencode;
mod pi;
mod qwen;
mod read;
pub mod turns;

pub use copilot::usage_file as copilot_usage_file;
pub use read::{ReadError, StreamParser, parse_file, parse_reader};
pub use turns::{Turn, TurnTokens};

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// A normalized transcript (see the module docs).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Transcript {
    /// Which format it was parsed from.
    pub format: Format,
    /// The session id the agent reported, when any (the last one for appended runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The agent CLI and version, e.g. `claude-code 2.1.328`, when reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_version: Option<String>,
    /// The model the agent reported, when any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Tool calls in the order they were made, each once.
    pub tool_calls: Vec<ToolCall>,
    /// The agent's final answer, when it gave one.
    pub final_text: Option<String>,
    /// Tokens, cost, turns and time.
    pub usage: Usage,
    /// How the session ended.
    pub outcome: Outcome,
    /// How many runs the file held (several runs can be appended to one file).
    pub runs: u32,
    /// Lines that could not be used, with why: the first [`MAX_WARNINGS_KEPT`] of them.
    pub warnings: Vec<Warning>,
    /// How many warnings there were in all (0 in results written before it existed: see
    /// [`Transcript::warning_count`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub warnings_total: u64,
    /// What the transcript is known to have lost (unreadable lines, orphan results).
    #[serde(default, skip_serializing_if = "Lost::is_empty")]
    pub lost: Lost,
    /// The only tools the format can record, when it can not record them all (Aider: its
    /// applied edits). Assertions about the others are `error`, never a verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub records_only: Option<RecordsOnly>,
    /// The skills the agent said it loaded (Claude Code 2.1.x: the `system/init` event's
    /// `skills`, plugin skills as `plugin:skill`; Copilot CLI 1.0.x: the enabled skills of
    /// `session.skills_loaded`); `None` when the format does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skills: Option<Vec<String>>,
    /// For a routing suite's run, the suite's skills whose description some request to the
    /// model held, as aptitude's gateway read them: the evidence that a skill loaded on
    /// agents that do not list what they loaded. `None` when nothing was looked for (or no
    /// request was read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skills_shown: Option<Vec<String>>,
    /// The parameter names of the run's MCP tools (`mcp__<server>__<tool>` → the names of
    /// its input schema's `properties`), as the requests to the model offered them
    /// (the servers' `tools/list`, passed on by the agent; read by aptitude's gateway).
    /// `None` when no request was read; a tool absent from the map was not offered with a
    /// schema that lists its parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_params: Option<std::collections::BTreeMap<String, Vec<String>>>,
    /// The model's replies, turn by turn (the assistant's text, the calls each made, its
    /// tokens and time), in formats that record them; empty in the others and in results
    /// written before turns were kept (a report then shows the calls alone).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub turns: Vec<Turn>,
    /// Turns past [`turns::MAX_TURNS`], counted but not kept.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub turns_left_out: u64,
    /// Programs the kernel saw run in the sandbox that no tool call accounts for (a hook, a
    /// subagent the stream hides, typed stdin, the agent's own helpers), each its argv
    /// joined with spaces: set from the run's exec record (`sandbox::exec::check`), empty
    /// without one. `not_ran` fails on them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unclaimed_execs: Vec<String>,
}

/// The tools a transcript format can record, when it can not record them all.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct RecordsOnly {
    /// Canonical names of the tools it records (`Edit`, `Write`).
    pub tools: Vec<String>,
    /// Why the others are missing: `aider records no shell commands …`.
    pub reason: String,
}

impl RecordsOnly {
    /// Aider 0.86.2: edits only; it runs no shell command headless and has no tools.
    pub fn aider() -> Self {
        RecordsOnly {
            tools: vec!["Edit".into(), "Write".into()],
            reason: "aider records no shell commands and no tool calls (only the edits it applied, as Edit and Write)".into(),
        }
    }

    /// Whether calls of `tool` (a canonical name) can be in the transcript.
    pub fn records(&self, tool: &str) -> bool {
        self.tools
            .iter()
            .any(|t| crate::spec::tools::same_tool(t, tool))
    }
}

/// How many warnings a transcript keeps (with their line numbers); the rest are counted.
pub const MAX_WARNINGS_KEPT: usize = 20;

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Evidence that a transcript lost tool calls.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Lost {
    /// Lines that could not be read and may have held tool calls: not JSON, cut off, of
    /// another format, or a format that records calls only as counts (`gemini -o json`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub lines: u64,
    /// Where the first of them is: `line 7`, `agent-a1.jsonl line 3`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<String>,
    /// The line number in `first` (0 for a whole file), to keep the earliest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_line: Option<u64>,
    /// Tool results whose call the transcript does not contain.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub orphan_results: u64,
    /// Calls that share their id with another, different call: both are kept, but a
    /// result can not tell them apart (a model reply or a stream written to reuse an id
    /// to hide a call).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub duplicate_ids: u64,
}

impl Lost {
    /// Whether nothing is known to be lost.
    pub fn is_empty(&self) -> bool {
        self.lines == 0 && self.orphan_results == 0 && self.duplicate_ids == 0
    }

    fn add(&mut self, other: Lost, prefix: Option<&str>) {
        self.lines = self.lines.saturating_add(other.lines);
        self.orphan_results = self.orphan_results.saturating_add(other.orphan_results);
        self.duplicate_ids = self.duplicate_ids.saturating_add(other.duplicate_ids);
        // Within one file the earliest line wins; another file's only when none is known.
        let earlier = match (self.first_line, other.first_line, prefix) {
            (None, Some(_), _) => true,
            (Some(mine), Some(theirs), None) => theirs < mine,
            _ => false,
        };
        if earlier {
            self.first_line = other.first_line;
            self.first = other.first.map(|f| match prefix {
                Some(p) => format!("{p} {f}"),
                None => f,
            });
        }
    }
}

impl Transcript {
    /// A completed Claude Code transcript of `calls` ending with `final_text`, nothing
    /// lost: the starting point of assertion unit tests.
    #[cfg(test)]
    pub(crate) fn completed(calls: Vec<ToolCall>, final_text: &str) -> Self {
        Transcript {
            format: Format::ClaudeStreamJson,
            session_id: None,
            agent_version: None,
            model: None,
            tool_calls: calls,
            final_text: Some(final_text.to_owned()),
            usage: Usage::default(),
            outcome: Outcome::Completed,
            runs: 1,
            warnings: Vec::new(),
            warnings_total: 0,
            lost: Default::default(),
            records_only: None,
            skills: None,
            skills_shown: None,
            mcp_params: None,
            turns: Vec::new(),
            turns_left_out: 0,
            unclaimed_execs: Vec::new(),
        }
    }

    /// A complete transcript of `calls` alone, nothing lost, ending with `final_text`: how
    /// a bare list of tool calls is read (the fluent API's `expect(&calls)`). The format
    /// is Claude Code's stream, the one agent that upstream's lists of calls came from.
    pub fn of_calls(calls: Vec<ToolCall>, final_text: Option<String>) -> Self {
        Transcript {
            format: Format::ClaudeStreamJson,
            session_id: None,
            agent_version: None,
            model: None,
            tool_calls: calls,
            final_text,
            usage: Usage::default(),
            outcome: Outcome::Completed,
            runs: 1,
            warnings: Vec::new(),
            warnings_total: 0,
            lost: Lost::default(),
            records_only: None,
            skills: None,
            skills_shown: None,
            mcp_params: None,
            turns: Vec::new(),
            turns_left_out: 0,
            unclaimed_execs: Vec::new(),
        }
    }

    /// All warnings, counting those not kept.
    pub fn warning_count(&self) -> u64 {
        self.warnings_total.max(self.warnings.len() as u64)
    }

    /// Why the transcript is known to have lost tool calls, when it is: `transcript lost
    /// tool calls: line 7 could not be read (3 lines in all); 1 orphan tool result`.
    pub fn lost_tool_calls(&self) -> Option<String> {
        if self.lost.is_empty() {
            return None;
        }
        let mut why = Vec::new();
        if self.lost.lines > 0 {
            let first = self.lost.first.as_deref().unwrap_or("a line");
            why.push(if self.lost.lines == 1 {
                format!("{first} could not be read")
            } else {
                format!(
                    "{first} could not be read ({} lines in all)",
                    self.lost.lines
                )
            });
        }
        match self.lost.orphan_results {
            0 => {}
            1 => why.push("1 orphan tool result (its call is missing)".into()),
            n => why.push(format!("{n} orphan tool results (their calls are missing)")),
        }
        match self.lost.duplicate_ids {
            0 => {}
            1 => why.push("1 call reuses another call's id".into()),
            n => why.push(format!("{n} calls reuse another call's id")),
        }
        Some(format!("transcript lost tool calls: {}", why.join("; ")))
    }

    /// Adds another parse's warnings (a subagent file's, or those found before the format
    /// was known), prefixing their messages with `prefix`; keeps the first
    /// [`MAX_WARNINGS_KEPT`] by line.
    pub(crate) fn absorb_warnings(&mut self, log: WarningLog, prefix: Option<&str>) {
        let before = self.warning_count();
        self.warnings_total = before.saturating_add(log.total);
        self.lost.add(log.lost, prefix);
        self.warnings.extend(log.kept.into_iter().map(|w| Warning {
            line: w.line,
            message: match prefix {
                Some(p) => format!("{p}: {}", w.message),
                None => w.message,
            },
        }));
        if prefix.is_none() {
            self.warnings.sort_by_key(|w| w.line);
        }
        self.warnings.truncate(MAX_WARNINGS_KEPT);
    }
}

/// Warnings as a parse collects them: the first [`MAX_WARNINGS_KEPT`] kept, all counted,
/// so that memory stays flat however broken the input is.
#[derive(Debug, Default)]
pub(crate) struct WarningLog {
    /// The first warnings.
    pub kept: Vec<Warning>,
    /// How many in all.
    pub total: u64,
    /// What was lost.
    pub lost: Lost,
}

impl WarningLog {
    /// A warning about a line that can not have held a tool call.
    pub fn warn(&mut self, line: u64, message: impl Into<String>) {
        self.total = self.total.saturating_add(1);
        if self.kept.len() < MAX_WARNINGS_KEPT {
            self.kept.push(Warning {
                line,
                message: message.into(),
            });
        }
    }

    /// A line that could not be read and may have held tool calls.
    pub fn warn_lost(&mut self, line: u64, message: impl Into<String>) {
        self.lost.lines = self.lost.lines.saturating_add(1);
        if self.lost.first.is_none() {
            self.lost.first_line = Some(line);
            self.lost.first = Some(if line > 0 {
                format!("line {line}")
            } else {
                "the file".into()
            });
        }
        self.warn(line, message);
    }

    /// A call under an id another, different call already has.
    pub fn duplicate(&mut self, message: String) {
        self.lost.duplicate_ids = self.lost.duplicate_ids.saturating_add(1);
        self.warn(0, message);
    }

    /// A tool result without its call.
    pub fn orphan(&mut self, message: String) {
        self.lost.orphan_results = self.lost.orphan_results.saturating_add(1);
        self.warn(0, message);
    }
}

/// The transcript formats (see the module docs for their sources).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// Claude Code session log.
    ClaudeSession,
    /// Claude Code `--output-format stream-json`.
    ClaudeStreamJson,
    /// Qwen Code `-o stream-json`.
    QwenStreamJson,
    /// Qwen Code session log.
    QwenSession,
    /// `codex exec --json`, or the `codex app-server` messages of a run with a `user:`
    /// (read as the exec events they stand for).
    CodexExecJson,
    /// Codex CLI rollout log.
    CodexRollout,
    /// Gemini CLI `-o stream-json`.
    GeminiStreamJson,
    /// Gemini CLI session log (JSONL).
    GeminiSession,
    /// Gemini CLI chat recording (one JSON document).
    GeminiChat,
    /// `gemini -o json`: the answer and statistics, without individual tool calls.
    GeminiJson,
    /// GitHub Copilot CLI `--output-format json` events.
    CopilotJson,
    /// GitHub Copilot CLI session-state log (`events.jsonl`).
    CopilotSession,
    /// opencode (or Kilo) `run --format json` events.
    OpencodeJson,
    /// `opencode export` session document.
    OpencodeSession,
    /// pi `--mode json` events.
    PiJson,
    /// pi session log.
    PiSession,
    /// Cursor CLI `--output-format stream-json`.
    CursorStreamJson,
    /// `auggie --output-format json`: the answer, without tool calls.
    AuggieJson,
    /// Auggie session file (one JSON document).
    AuggieSession,
    /// Aider chat history (Markdown).
    AiderChat,
    /// Kiro CLI v1 conversation (`ConversationState` JSON, from `data.sqlite3`).
    KiroConversation,
    /// Kiro CLI v2 session log (`sessions/cli/<id>.jsonl`).
    KiroSession,
    /// Kiro CLI v3 (KAS) session log (`sessions/<workspace>/sess_<id>/messages.jsonl`).
    KiroKas,
}

impl Format {
    /// The format's name as shown to users (`claude-stream-json`, …).
    pub fn name(self) -> &'static str {
        match self {
            Format::ClaudeSession => "claude-session",
            Format::ClaudeStreamJson => "claude-stream-json",
            Format::QwenStreamJson => "qwen-stream-json",
            Format::QwenSession => "qwen-session",
            Format::CodexExecJson => "codex-exec-json",
            Format::CodexRollout => "codex-rollout",
            Format::GeminiStreamJson => "gemini-stream-json",
            Format::GeminiSession => "gemini-session",
            Format::GeminiChat => "gemini-chat",
            Format::GeminiJson => "gemini-json",
            Format::CopilotJson => "copilot-json",
            Format::CopilotSession => "copilot-session",
            Format::OpencodeJson => "opencode-json",
            Format::OpencodeSession => "opencode-session",
            Format::PiJson => "pi-json",
            Format::PiSession => "pi-session",
            Format::CursorStreamJson => "cursor-stream-json",
            Format::AuggieJson => "auggie-json",
            Format::AuggieSession => "auggie-session",
            Format::AiderChat => "aider-chat",
            Format::KiroConversation => "kiro-conversation",
            Format::KiroSession => "kiro-session",
            Format::KiroKas => "kiro-kas",
        }
    }
}

impl Format {
    /// Whose tool names and parameter keys the format's calls use.
    pub fn vocabulary(self) -> crate::spec::tools::Vocabulary {
        use crate::spec::tools::Vocabulary;
        match self {
            Format::ClaudeSession | Format::ClaudeStreamJson => Vocabulary::Claude,
            Format::QwenStreamJson | Format::QwenSession => Vocabulary::Qwen,
            Format::CodexExecJson | Format::CodexRollout => Vocabulary::Codex,
            Format::GeminiStreamJson
            | Format::GeminiSession
            | Format::GeminiChat
            | Format::GeminiJson => Vocabulary::Gemini,
            Format::CopilotJson | Format::CopilotSession => Vocabulary::Copilot,
            Format::OpencodeJson | Format::OpencodeSession => Vocabulary::Opencode,
            Format::PiJson | Format::PiSession => Vocabulary::Pi,
            Format::CursorStreamJson => Vocabulary::Cursor,
            Format::AuggieJson | Format::AuggieSession => Vocabulary::Auggie,
            Format::AiderChat => Vocabulary::Aider,
            Format::KiroConversation | Format::KiroSession | Format::KiroKas => Vocabulary::Kiro,
        }
    }

    /// The agent whose CLI writes this format (`analyze -a AGENT` checks a transcript
    /// against it); `None` for a CLI aptitude does not run (Auggie).
    pub fn agent(self) -> Option<crate::spec::agent_kind::AgentKind> {
        use crate::spec::agent_kind::AgentKind;
        Some(match self {
            Format::ClaudeSession | Format::ClaudeStreamJson => AgentKind::Claude,
            Format::QwenStreamJson | Format::QwenSession => AgentKind::Qwen,
            Format::CodexExecJson | Format::CodexRollout => AgentKind::Codex,
            Format::GeminiStreamJson
            | Format::GeminiSession
            | Format::GeminiChat
            | Format::GeminiJson => AgentKind::Gemini,
            Format::CopilotJson | Format::CopilotSession => AgentKind::Copilot,
            Format::OpencodeJson | Format::OpencodeSession => AgentKind::Opencode,
            Format::PiJson | Format::PiSession => AgentKind::Pi,
            Format::CursorStreamJson => AgentKind::Cursor,
            Format::AiderChat => AgentKind::Aider,
            Format::KiroConversation | Format::KiroSession | Format::KiroKas => AgentKind::Kiro,
            Format::AuggieJson | Format::AuggieSession => return None,
        })
    }
}

/// The agent attribution of calls made by the main agent (not a subagent).
pub const MAIN_AGENT: &str = "main";

/// One tool call.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ToolCall {
    /// The agent's id for the call (`toolu_…`, `call_…`).
    pub id: String,
    /// The tool's name as the agent called it (raw): `run_shell_command`, `bash`,
    /// `shellToolCall`.
    pub name: String,
    /// The canonical name (see [`crate::spec::tools::vocabulary`]): `run_shell_command` → `Bash`.
    pub canonical: String,
    /// The call's input as the agent recorded it (raw), as JSON.
    pub input: serde_json::Value,
    /// The input with canonical parameter keys (`{"cmd": …}` → `{"command": …}`,
    /// `{"filePath": …}` → `{"file_path": …}`), only when it differs from `input`: read it
    /// through [`ToolCall::params`]. Assertions match on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<serde_json::Value>,
    /// The tool result's text (image parts as `[image]`), when a result was recorded.
    pub output: Option<String>,
    /// Whether the tool reported an error.
    pub is_error: bool,
    /// Why the call never executed, when the agent's own guard refused it before it ran (a
    /// permission denied or rejected, a policy or sandbox refusal, a tool not offered): the
    /// agent's words. `None` when it ran or the transcript does not say (see
    /// [`ToolCall::execution`]; how each agent records a refusal: the `blocked` module).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked: Option<String>,
    /// A shell command's exit code: 0 on success, parsed from the agent's "Exit code N"
    /// text on failure; `None` when unknown or not a shell call.
    pub exit_code: Option<i32>,
    /// A shell command's stdout, where the agent records it apart from stderr.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdout: Option<String>,
    /// A shell command's stderr, where the agent records it apart from stdout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
    /// `main`, or the subagent that made the call (its agent id or parent tool-call id).
    pub agent: String,
    /// When the call was made (RFC 3339), when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    /// Whether the model's provider ran the tool itself, not the agent (Anthropic's
    /// `server_tool_use` and `mcp_tool_use`: web search, web fetch, code execution, tool
    /// search, the MCP connector; OpenAI Responses' `web_search_call`): its result came
    /// from the provider, and the agent's sandbox never ran it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub server_side: bool,
    /// Whether [`ToolCall::exit_code`] is the kernel's: the exit status of the shell the
    /// sandbox's exec record matched to the call (`sandbox::exec::check`), not a code read
    /// from text. Then no text (the stream's, the wire's) contradicts it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exit_by_kernel: bool,
}

impl ToolCall {
    /// A call of `name` (canonical name looked up: `read_file` is `Read`) with `input` by
    /// the main agent, with no id and no result: a call written by hand, as in a list given
    /// to the fluent API's `expect(&calls)`.
    pub fn new(name: &str, input: serde_json::Value) -> Self {
        ToolCall {
            params: None,
            id: String::new(),
            name: name.into(),
            canonical: crate::spec::tools::canonical_tool_name(name).into_owned(),
            input,
            output: None,
            is_error: false,
            blocked: None,
            exit_code: None,
            stdout: None,
            stderr: None,
            agent: MAIN_AGENT.into(),
            timestamp: None,
            server_side: false,
            exit_by_kernel: false,
        }
    }

    /// A call of `name` (canonical name looked up) with `input` by the main agent, with no
    /// result yet: the starting point of assertion unit tests.
    #[cfg(test)]
    pub(crate) fn for_test(id: &str, name: &str, input: serde_json::Value) -> Self {
        ToolCall {
            id: id.into(),
            ..ToolCall::new(name, input)
        }
    }

    /// Whether the call executed: [`Execution::Ran`] when it has a result and no refusal,
    /// [`Execution::Blocked`] when the agent's guard refused it, [`Execution::NoResult`]
    /// when the transcript holds no result (a session cut short: it may never have run).
    pub fn execution(&self) -> Execution<'_> {
        match (&self.blocked, &self.output) {
            (Some(why), _) => Execution::Blocked(why),
            (None, None) => Execution::NoResult,
            (None, Some(_)) => Execution::Ran,
        }
    }

    /// Whether the main agent made the call.
    pub fn is_main(&self) -> bool {
        self.agent == MAIN_AGENT
    }

    /// The call's parameters with canonical keys (see [`ToolCall::params`] the field):
    /// `input` itself when the agent already used them.
    pub fn params(&self) -> &serde_json::Value {
        self.params.as_ref().unwrap_or(&self.input)
    }

    /// The command string of a shell call (canonical `command`; an argv array runs its
    /// `sh -c` script, or its words joined).
    pub fn command(&self) -> Option<String> {
        let params = self.params();
        match params.get("command").or_else(|| params.get("cmd"))? {
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Array(argv) => {
                Some(crate::spec::tools::vocabulary::shell_command_of_argv(argv))
            }
            _ => None,
        }
    }
}

/// Whether a tool call executed ([`ToolCall::execution`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Execution<'a> {
    /// It ran (it has a result, and the agent refused nothing).
    Ran,
    /// The agent's own guard refused it before it ran; the agent's words.
    Blocked(&'a str),
    /// The transcript holds no result for it: it may never have run.
    NoResult,
}

/// Token, cost, turn and time totals.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Usage {
    /// Input tokens (not counting cache reads/writes).
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Tokens written to the prompt cache.
    pub cache_creation_input_tokens: u64,
    /// Tokens read from the prompt cache.
    pub cache_read_input_tokens: u64,
    /// Cost in USD, when the agent reports it (a test result's usage falls back on the
    /// model gateway's metered estimate when the agent reports none).
    pub cost_usd: Option<f64>,
    /// Model turns (requests), when known.
    pub turns: Option<u32>,
    /// Wall time in ms, when known.
    pub duration_ms: Option<u64>,
}

impl Usage {
    /// Adds another run's usage (saturating: a hostile file can not overflow it); unknown
    /// figures stay unknown only if both are.
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.cache_creation_input_tokens = self
            .cache_creation_input_tokens
            .saturating_add(other.cache_creation_input_tokens);
        self.cache_read_input_tokens = self
            .cache_read_input_tokens
            .saturating_add(other.cache_read_input_tokens);
        self.cost_usd = sum_opt(self.cost_usd, other.cost_usd, |a, b| a + b);
        self.turns = sum_opt(self.turns, other.turns, u32::saturating_add);
        self.duration_ms = sum_opt(self.duration_ms, other.duration_ms, u64::saturating_add);
    }
}

fn sum_opt<T>(a: Option<T>, b: Option<T>, add: impl FnOnce(T, T) -> T) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(add(a, b)),
        (a, b) => a.or(b),
    }
}

/// How a session ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Outcome {
    /// The agent finished its turn.
    Completed,
    /// The agent stopped at its turn limit.
    MaxTurns {
        /// The agent's message.
        message: String,
    },
    /// The model API failed (HTTP error, dropped connection, timeout).
    ApiError {
        /// The agent's message.
        message: String,
        /// The HTTP status, when reported.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        http_status: Option<u16>,
    },
    /// A user interrupted the session.
    Interrupted,
    /// The record stops mid-way (no final result): a crash, a kill, or a truncated file.
    Incomplete {
        /// What is missing.
        message: String,
    },
    /// The agent reported another error.
    Error {
        /// The agent's message.
        message: String,
    },
    /// The run was stopped on purpose at the agent's first tool call, its decision (a
    /// routing suite's `stop: first_call`): the transcript ends there, and that is not an
    /// error.
    Decided,
}

impl Outcome {
    /// Whether the agent finished normally.
    pub fn is_completed(&self) -> bool {
        matches!(self, Outcome::Completed)
    }

    /// A one-line description: `completed`, `api error: …`.
    pub fn describe(&self) -> String {
        match self {
            Outcome::Completed => "completed".into(),
            Outcome::MaxTurns { message } => format!("max turns reached: {message}"),
            Outcome::ApiError {
                message,
                http_status: Some(status),
            } => format!("model API error (HTTP {status}): {message}"),
            Outcome::ApiError { message, .. } => format!("model API error: {message}"),
            Outcome::Interrupted => "interrupted by the user".into(),
            Outcome::Incomplete { message } => format!("incomplete: {message}"),
            Outcome::Error { message } => format!("agent error: {message}"),
            Outcome::Decided => "stopped at its first decision (its first tool call)".into(),
        }
    }
}

/// A line that could not be used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warning {
    /// 1-based line number in the file (0 for the file as a whole).
    pub line: u64,
    /// What was wrong.
    pub message: String,
}

/// Why a transcript could not be parsed at all.
#[derive(Debug, thiserror::Error)]
pub enum TranscriptError {
    /// The file could not be read.
    #[error("can not read transcript {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// No line looked like any known format.
    #[error("{} is not a transcript aptitude knows: {reason}", path.display())]
    UnknownFormat {
        /// The file.
        path: PathBuf,
        /// What was seen.
        reason: String,
    },
}

/// A per-format line parser, fed one line at a time.
pub(crate) trait LineParser {
    /// Consumes one non-empty line (1-based `line_no`).
    fn line(&mut self, line_no: u64, text: &str);
    /// The tool calls recorded so far.
    fn calls(&self) -> &[ToolCall];
    /// Finishes the transcript.
    fn finish(self: Box<Self>) -> Transcript;
}

/// Parses the exit code a shell tool reports in its output text: Claude's `Exit code 3`
/// (first line), Qwen's and Gemini's `Exit Code: 3` lines, Codex's
/// `Process exited with code 3` / `Exit code: 3`, pi's `Command exited with code 3`.
pub(crate) fn exit_code_in_text(text: &str) -> Option<i32> {
    let first = text.lines().next().unwrap_or("");
    if let Some(rest) = first.strip_prefix("Exit code ") {
        return rest.trim().parse().ok();
    }
    for line in text.lines() {
        let line = line.trim();
        for prefix in [
            "Exit Code: ",
            "Exit code: ",
            "Process exited with code ",
            "Command exited with code ",
        ] {
            if let Some(rest) = line.strip_prefix(prefix) {
                let digits: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_digit() || *c == '-')
                    .collect();
                if let Ok(code) = digits.parse() {
                    return Some(code);
                }
            }
        }
    }
    None
}

/// Converts a timestamp given as seconds since the epoch (the `{"raw": …}` wrapper's
/// `timestamp`) to RFC 3339 with milliseconds.
/// `None` for what RFC 3339 can not show (negative, not finite, after 9999-12-31).
pub(crate) fn epoch_seconds_to_rfc3339(secs: f64) -> Option<String> {
    /// 9999-12-31T23:59:59Z: humantime panics when formatting a later time.
    const MAX_SECS: f64 = 253_402_300_799.0;
    if !(0.0..=MAX_SECS).contains(&secs) {
        return None;
    }
    let since = std::time::Duration::try_from_secs_f64(secs).ok()?;
    let t = std::time::UNIX_EPOCH.checked_add(since)?;
    Some(humantime::format_rfc3339_millis(t).to_string())
}

/// Milliseconds between two RFC 3339 timestamps, when both parse and are in order.
pub(crate) fn millis_between(start: &str, end: &str) -> Option<u64> {
    let a = humantime::parse_rfc3339_weak(start).ok()?;
    let b = humantime::parse_rfc3339_weak(end).ok()?;
    b.duration_since(a)
        .ok()
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::read::MAX_PENDING_LINES;
    use super::*;

    #[test]
    fn exit_codes_in_agent_text() {
        assert_eq!(exit_code_in_text("Exit code 3\n42"), Some(3));
        assert_eq!(
            exit_code_in_text("Command: x\nOutput: 42\nExit Code: 3\nSignal: (none)"),
            Some(3)
        );
        assert_eq!(
            exit_code_in_text("Process exited with code 2\nOutput:\n"),
            Some(2)
        );
        assert_eq!(exit_code_in_text("ls: cannot access"), None);
    }

    #[test]
    fn epoch_timestamps_become_rfc3339() {
        assert_eq!(
            epoch_seconds_to_rfc3339(1752994314.464611).as_deref(),
            Some("2025-07-20T06:51:54.464Z")
        );
    }

    #[test]
    fn garbage_is_an_unknown_format() {
        let err = parse_reader("hello\nworld\n".as_bytes()).unwrap_err();
        assert!(err.to_string().contains("no line is valid JSON"), "{err}");
        let err = parse_reader("{\"foo\": 1}\n".as_bytes()).unwrap_err();
        assert!(err.to_string().contains("no line looks like"), "{err}");
        let err = parse_reader("".as_bytes()).unwrap_err();
        assert!(err.to_string().contains("empty"), "{err}");
    }

    const INIT: &str =
        r#"{"type":"system","subtype":"init","session_id":"s1","claude_code_version":"2.1.328"}"#;
    const RESULT: &str = r#"{"type":"result","subtype":"success","is_error":false,"result":"ok","num_turns":1,"session_id":"s1","usage":{"input_tokens":7,"output_tokens":3}}"#;

    fn bash_use(id: &str, command: &str) -> String {
        format!(
            r#"{{"type":"assistant","session_id":"s1","message":{{"id":"m-{id}","content":[{{"type":"tool_use","id":"{id}","name":"Bash","input":{{"command":"{command}"}}}}]}}}}"#
        )
    }

    fn tool_result(id: &str) -> String {
        format!(
            r#"{{"type":"user","session_id":"s1","message":{{"content":[{{"type":"tool_result","tool_use_id":"{id}","content":"done"}}]}}}}"#
        )
    }

    #[test]
    fn hostile_numbers_never_panic() {
        // Item 4 of issue #10: each of these panicked (or overflowed) in a parser.
        let inputs = [
            r#"{"timestamp":253402300800,"raw":{"type":"system","subtype":"init","session_id":"s"}}"#.to_owned(),
            r#"{"timestamp":1e300,"raw":{"type":"system","subtype":"init","session_id":"s"}}"#.to_owned(),
            r#"{"timestamp":-1e300,"raw":{"type":"assistant","session_id":"s","message":{"id":"m","content":[]}}}"#.to_owned(),
            [
                INIT,
                r#"{"type":"result","subtype":"success","is_error":false,"num_turns":4294967295,"duration_ms":18446744073709551615,"session_id":"s1","usage":{"input_tokens":18446744073709551615,"output_tokens":18446744073709551615}}"#,
                INIT,
                r#"{"type":"result","subtype":"success","is_error":false,"num_turns":4294967295,"duration_ms":18446744073709551615,"session_id":"s1","usage":{"input_tokens":18446744073709551615,"output_tokens":18446744073709551615}}"#,
            ]
            .join("\n"),
            [
                r#"{"type":"user","sessionId":"s","uuid":"1","timestamp":"0001-01-01T00:00:00Z","message":{"id":"a","usage":{"input_tokens":18446744073709551615},"content":"x"}}"#,
                r#"{"type":"assistant","sessionId":"s","uuid":"2","timestamp":"9999-12-31T23:59:59Z","message":{"id":"b","usage":{"input_tokens":18446744073709551615},"content":"x"}}"#,
            ]
            .join("\n"),
            [
                r#"{"timestamp":"2025-01-01T00:00:00Z","type":"session_meta","payload":{"id":"r"}}"#,
                r#"{"timestamp":"2025-01-01T00:00:01Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":"{\"output\":\"x\",\"metadata\":{\"exit_code\":99999999999999}}"}}"#,
                r#"{"timestamp":"2025-01-01T00:00:01Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":1,"cached_input_tokens":18446744073709551615}}}}"#,
            ]
            .join("\n"),
            r#"{"type":"item.completed","item":{"id":"i","type":"command_execution","command":"x","exit_code":-99999999999999}}"#.to_owned(),
            r#"{"session_id":"g","response":"r","stats":{"models":{"m":{"api":{"totalRequests":18446744073709551615},"tokens":{"prompt":18446744073709551615,"candidates":18446744073709551615}},"n":{"api":{"totalRequests":18446744073709551615},"tokens":{"prompt":18446744073709551615}}}}}"#.to_owned(),
            "{\"type\":\"init\",\"session_id\":\"g\"}\n{\"type\":\"tool_use\",\"tool_name\":\"\u{e9}\",\"tool_id\":\"\u{1F600}\"}\n{\"type\":\"tool_result\",\"tool_id\":\"\u{1F600}\",\"output\":\"Exit Code: -\"}".to_owned(),
        ];
        for input in &inputs {
            // Parsing may fail with an error; it must not panic.
            let _ = parse_reader(input.as_bytes());
        }
        assert_eq!(epoch_seconds_to_rfc3339(253402300800.0), None);
        assert_eq!(epoch_seconds_to_rfc3339(1e300), None);
        assert_eq!(
            epoch_seconds_to_rfc3339(253402300799.0).as_deref(),
            Some("9999-12-31T23:59:59.000Z")
        );
        let mut u = Usage {
            turns: Some(u32::MAX),
            duration_ms: Some(u64::MAX),
            input_tokens: u64::MAX,
            ..Usage::default()
        };
        u.add(&u.clone());
        assert_eq!((u.turns, u.input_tokens), (Some(u32::MAX), u64::MAX));
    }

    #[test]
    fn warnings_are_bounded_and_counted_and_garbage_is_not_kept() {
        // Item 7: 5.2 M garbage lines kept every warning (and every line) in memory.
        let mut text = String::new();
        for _ in 0..50_000 {
            text.push_str("not json at all\n");
        }
        text.push_str(INIT);
        text.push('\n');
        text.push_str(RESULT);
        text.push('\n');
        for _ in 0..50_000 {
            text.push_str("{\"broken\n");
        }
        let t = parse_reader(text.as_bytes()).unwrap();
        assert_eq!(t.format, Format::ClaudeStreamJson);
        assert_eq!(t.warnings.len(), MAX_WARNINGS_KEPT);
        assert_eq!(t.warning_count(), 100_000);
        assert_eq!(
            t.warnings[0].line, 1,
            "the first warnings are kept, by line"
        );
        assert_eq!(t.lost.lines, 100_000);
        assert_eq!(t.lost.first.as_deref(), Some("line 1"));
        // Lines that are JSON but show no format yet are kept only up to a bound.
        let mut text = String::new();
        for _ in 0..(MAX_PENDING_LINES + 5) {
            text.push_str("{\"x\":1}\n");
        }
        text.push_str(INIT);
        let t = parse_reader(text.as_bytes()).unwrap();
        assert_eq!(t.lost.lines, 5);
    }

    #[test]
    fn lines_of_another_format_are_lost_lines_not_silently_dropped() {
        // Item 10: Gemini lines appended to a Claude stream vanished and zeroed its usage.
        let text = [
            INIT,
            &bash_use("t1", "ls"),
            &tool_result("t1"),
            RESULT,
            r#"{"type":"init","timestamp":"2026-11-22T01:58:40.273Z","session_id":"g","model":"m"}"#,
            r#"{"type":"tool_use","tool_name":"run_shell_command","tool_id":"g1","parameters":{"command":"rm -rf /"}}"#,
            r#"{"type":"result","status":"success","stats":{"input_tokens":0,"output_tokens":0}}"#,
        ]
        .join("\n");
        let t = parse_reader(text.as_bytes()).unwrap();
        assert_eq!(t.format, Format::ClaudeStreamJson);
        assert_eq!(t.usage.input_tokens, 7, "Claude's usage is not zeroed");
        assert_eq!(t.tool_calls.len(), 1);
        assert_eq!(t.lost.lines, 3);
        assert!(
            t.warnings[0]
                .message
                .contains("gemini-stream-json line in a claude-stream-json transcript"),
            "{:?}",
            t.warnings
        );
        assert_eq!(
            t.lost_tool_calls().as_deref(),
            Some("transcript lost tool calls: line 5 could not be read (3 lines in all)")
        );
    }

    #[test]
    fn orphan_results_are_lost_tool_calls() {
        // Item 12: the tool_use line is corrupt, its result survives.
        let text = [
            INIT,
            r#"{"type":"assistant","session_id":"s1","message":{"id":"m1","content":[{"type":"tool_us"#,
            &tool_result("t1"),
            RESULT,
        ]
        .join("\n");
        let t = parse_reader(text.as_bytes()).unwrap();
        assert_eq!(t.lost.orphan_results, 1);
        assert_eq!(
            t.lost_tool_calls().as_deref(),
            Some(
                "transcript lost tool calls: line 2 could not be read; 1 orphan tool result (its call is missing)"
            )
        );
    }

    #[test]
    fn a_file_cut_mid_line_is_incomplete_in_every_format() {
        // Item 11: a truncated Codex rollout read as completed.
        let cases: [(&str, String); 5] = [
            (
                "claude-stream-json",
                [INIT, RESULT, r#"{"type":"assistant","session_id":"s1","mess"#].join("\n"),
            ),
            (
                "claude-session",
                [
                    r#"{"type":"user","sessionId":"s","uuid":"1","message":{"role":"user","content":"go"}}"#,
                    r#"{"type":"assistant","sessionId":"s","uuid":"2","message":{"id":"m","content":[{"type":"text","text":"done"}]}}"#,
                    r#"{"type":"assistant","sessionId":"s","uuid":"3","message":{"id":"m2","content":[{"type":"tool_use","id":"x","na"#,
                ]
                .join("\n"),
            ),
            (
                "codex-rollout",
                [
                    r#"{"timestamp":"2025-01-01T00:00:00Z","type":"session_meta","payload":{"id":"r"}}"#,
                    r#"{"timestamp":"2025-01-01T00:00:01Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hi"}]}}"#,
                    r#"{"timestamp":"2025-01-01T00:00:02Z","type":"response_item","payload":{"type":"function_call","name":"shell","call_id":"c1","argum"#,
                ]
                .join("\n"),
            ),
            (
                "codex-exec-json",
                [
                    r#"{"type":"thread.started","thread_id":"t"}"#,
                    r#"{"type":"turn.started"}"#,
                    r#"{"type":"turn.completed","usage":{"input_tokens":1}}"#,
                    r#"{"type":"item.completed","item":{"id":"i","ty"#,
                ]
                .join("\n"),
            ),
            (
                "gemini-stream-json",
                [
                    r#"{"type":"init","session_id":"g","model":"m"}"#,
                    r#"{"type":"result","status":"success","stats":{}}"#,
                    r#"{"type":"tool_use","tool_name":"run_sh"#,
                ]
                .join("\n"),
            ),
        ];
        for (format, text) in &cases {
            let t = parse_reader(text.as_bytes()).unwrap();
            assert_eq!(t.format.name(), *format);
            assert!(
                matches!(&t.outcome, Outcome::Incomplete { message } if message.contains("cut off")),
                "{format}: {:?}",
                t.outcome
            );
            assert!(t.lost_tool_calls().is_some(), "{format}");
            // The same file with its last line whole (and a line break) is not truncated.
            let whole = text.rsplit_once('\n').map(|(head, _)| format!("{head}\n"));
            let t = parse_reader(whole.unwrap().as_bytes()).unwrap();
            assert!(t.outcome.is_completed(), "{format}: {:?}", t.outcome);
        }
    }

    #[test]
    fn invalid_utf8_is_replaced_with_a_warning_everywhere() {
        // Item 17: a pretty-printed document, or a broken line 1, was rejected whole.
        let doc = b"{\n  \"sessionId\": \"s\",\n  \"projectHash\": \"h\",\n  \"messages\": [\n    {\"id\": \"1\", \"type\": \"gemini\", \"content\": \"caf\xe9\"}\n  ]\n}\n";
        let t = parse_reader(&doc[..]).unwrap();
        assert_eq!(t.format, Format::GeminiChat);
        assert!(
            t.warnings
                .iter()
                .any(|w| w.message.contains("invalid UTF-8")),
            "{:?}",
            t.warnings
        );
        assert!(t.lost.is_empty(), "nothing was lost but one byte");
        let mut lines = b"{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s1\",\"model\":\"m\xff\"}\n".to_vec();
        lines.extend_from_slice(RESULT.as_bytes());
        lines.push(b'\n');
        let t = parse_reader(&lines[..]).unwrap();
        assert_eq!(t.format, Format::ClaudeStreamJson);
        assert_eq!(t.warnings.len(), 1);
        assert_eq!(t.warnings[0].line, 1);
        assert!(t.outcome.is_completed());
        let array = b"[{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s1\",\"model\":\"\xff\"}]";
        let t = parse_reader(&array[..]).unwrap();
        assert!(t.warnings[0].message.contains("invalid UTF-8"));
    }

    #[test]
    fn stream_parser_reports_foreign_lines_too() {
        let mut p = StreamParser::new(Format::ClaudeStreamJson);
        p.push_line(INIT);
        p.push_line(r#"{"type":"thread.started","thread_id":"t"}"#);
        p.push_line(RESULT);
        let t = p.finish();
        assert_eq!(t.lost.lines, 1);
        assert!(t.outcome.is_completed());
    }

    #[test]
    fn results_written_before_warning_counts_still_load() {
        let old = r#"{"format":"claude-stream-json","tool_calls":[],"final_text":null,"usage":{"input_tokens":0,"output_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"cost_usd":null,"turns":null,"duration_ms":null},"outcome":{"status":"completed"},"runs":1,"warnings":[{"line":3,"message":"invalid JSON"}]}"#;
        let t: Transcript = serde_json::from_str(old).unwrap();
        assert_eq!(
            t.warning_count(),
            1,
            "the kept warnings count when no total was written"
        );
        assert!(t.lost.is_empty());
        let json = serde_json::to_string(&t).unwrap();
        assert!(
            !json.contains("warnings_total") && !json.contains("\"lost\""),
            "{json}"
        );
    }
}
