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
mod auggie;
mod builder;
mod claude;
mod codex;
mod copilot;
mod cursor;
mod gemini;
mod json;
mod opencode;
mod pi;
mod qwen;

pub use copilot::usage_file as copilot_usage_file;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

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
        self.tools.iter().any(|t| crate::tools::same_tool(t, tool))
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
}

impl Lost {
    /// Whether nothing is known to be lost.
    pub fn is_empty(&self) -> bool {
        self.lines == 0 && self.orphan_results == 0
    }

    fn add(&mut self, other: Lost, prefix: Option<&str>) {
        self.lines = self.lines.saturating_add(other.lines);
        self.orphan_results = self.orphan_results.saturating_add(other.orphan_results);
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
    /// `codex exec --json`.
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
        }
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
    /// The canonical name (see [`crate::tools::vocabulary`]): `run_shell_command` → `Bash`.
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
}

impl ToolCall {
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
                Some(crate::tools::vocabulary::shell_command_of_argv(argv))
            }
            _ => None,
        }
    }
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
    /// Cost in USD, when the agent reports it.
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

/// An incremental parser for output whose format is known, such as an agent's stdout read
/// while it runs: whatever was pushed before the agent died still makes a transcript.
pub struct StreamParser {
    feeder: Feeder,
    line_no: u64,
}

impl StreamParser {
    /// A parser for `format`.
    pub fn new(format: Format) -> Self {
        StreamParser {
            feeder: Feeder::new(Some(format)),
            line_no: 0,
        }
    }

    /// Feeds one line (without its line break); empty lines are skipped (except in Aider's
    /// Markdown history, where they are part of the edits).
    pub fn push_line(&mut self, line: &str) {
        self.line_no += 1;
        let markdown = matches!(&self.feeder.parser, Some((Format::AiderChat, _)));
        if markdown || !line.trim().is_empty() {
            self.feeder.line(self.line_no, line);
        }
    }

    /// The tool calls recorded so far, in order (for live progress).
    pub fn calls(&self) -> &[ToolCall] {
        self.feeder.calls()
    }

    /// The transcript of everything pushed so far.
    pub fn finish(self) -> Transcript {
        match self.feeder.finish() {
            Ok(t) => t,
            // Unreachable: a feeder made with a format always has a parser.
            Err(e) => Transcript {
                format: Format::ClaudeStreamJson,
                session_id: None,
                agent_version: None,
                model: None,
                tool_calls: Vec::new(),
                final_text: None,
                usage: Usage::default(),
                outcome: Outcome::Incomplete {
                    message: e.to_string(),
                },
                runs: 0,
                warnings: Vec::new(),
                warnings_total: 0,
                lost: Lost::default(),
                records_only: None,
            },
        }
    }
}

/// Parses a transcript file, detecting its format; Claude session logs also pick up their
/// subagent files (`<session>/subagents/agent-*.jsonl`, and 2.0.x `agent-*.jsonl` siblings
/// with the same `sessionId`), so that calls delegated to subagents are seen. Only regular
/// files are opened (a subagent file that is a FIFO or a device is skipped with a
/// warning), so a hostile directory can not make this block.
///
/// # Errors
/// When the file can not be read, is not a regular file, or matches no known format.
pub fn parse_file(path: &Path) -> Result<Transcript, TranscriptError> {
    let io_err = |source| TranscriptError::Io {
        path: path.to_owned(),
        source,
    };
    // A FIFO or a device (a link to /dev/zero) would block or never end: refused.
    let file = open_regular(path).map_err(io_err)?;
    let mut transcript = parse_reader(file).map_err(|e| match e {
        ReadError::Io(source) => io_err(source),
        ReadError::Unknown(reason) => TranscriptError::UnknownFormat {
            path: path.to_owned(),
            reason,
        },
    })?;
    if transcript.format == Format::ClaudeSession {
        claude::merge_subagent_files(path, &mut transcript);
    }
    Ok(transcript)
}

/// Opens `path` for reading only if it is a regular file, without ever blocking
/// ([`crate::files::open_regular`]).
///
/// # Errors
/// An I/O error, or `InvalidInput` saying what kind of file it is.
pub(crate) fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    match crate::files::open_regular(path) {
        Ok((file, _)) => Ok(file),
        Err(crate::files::FileError::Io(e)) => Err(e),
        Err(e @ crate::files::FileError::NotRegular(_)) => Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            e.to_string(),
        )),
        Err(e) => Err(std::io::Error::other(e.to_string())),
    }
}

/// Why [`parse_reader`] failed.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Reading failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// No known format.
    #[error("{0}")]
    Unknown(String),
}

/// Parses a transcript from any reader (see [`parse_file`]; no subagent files here).
///
/// # Errors
/// When reading fails or no line matches a known format.
pub fn parse_reader(reader: impl Read) -> Result<Transcript, ReadError> {
    let mut reader = BufReader::with_capacity(256 * 1024, reader);
    // Whole-document formats: a JSON array of events, or a pretty-printed JSON object.
    let first = {
        let buf = reader.fill_buf()?;
        buf.iter().copied().find(|b| !b.is_ascii_whitespace())
    };
    if reader
        .fill_buf()?
        .trim_ascii_start()
        .starts_with(aider::RUN_HEADER.as_bytes())
    {
        return parse_aider(reader);
    }
    if first == Some(b'[') {
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes)?;
        let (text, lossy) = decode(&bytes);
        let mut t = parse_json_array(&text)?;
        if lossy {
            t.absorb_warnings(invalid_utf8_warning(0), None);
        }
        return Ok(t);
    }
    parse_lines(reader, true)
}

/// Aider's chat history, line by line (it is Markdown: no line is JSON).
fn parse_aider(mut reader: impl BufRead) -> Result<Transcript, ReadError> {
    let mut parser = aider::AiderParser::new();
    let mut buf = Vec::new();
    let mut log = WarningLog::default();
    let mut line_no = 0u64;
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf)? == 0 {
            break;
        }
        line_no += 1;
        let (text, lossy) = decode(&buf);
        if lossy {
            log.warn(line_no, "invalid UTF-8 replaced with U+FFFD");
        }
        parser.line(text.trim_end_matches(['\n', '\r']));
    }
    let mut t = parser.finish();
    t.absorb_warnings(log, None);
    Ok(t)
}

/// Decodes bytes as UTF-8, replacing invalid sequences; `true` when any were replaced.
fn decode(bytes: &[u8]) -> (std::borrow::Cow<'_, str>, bool) {
    let text = String::from_utf8_lossy(bytes);
    let lossy = matches!(text, std::borrow::Cow::Owned(_));
    (text, lossy)
}

fn invalid_utf8_warning(line: u64) -> WarningLog {
    let mut log = WarningLog::default();
    log.warn(line, "invalid UTF-8 replaced with U+FFFD");
    log
}

/// Lines kept while no line has shown the format yet (they are replayed to the parser once
/// it is known); beyond these bounds they are counted as lost, so memory stays flat.
const MAX_PENDING_LINES: usize = 1000;
const MAX_PENDING_BYTES: usize = 8 * 1024 * 1024;

/// Hands lines to the parser of the detected format. Lines of another format, lines that
/// are not JSON and lines beyond the pending bounds become warnings (lost lines).
struct Feeder {
    parser: Option<(Format, Box<dyn LineParser + Send>)>,
    pending: Vec<(u64, String)>,
    pending_bytes: usize,
    log: WarningLog,
    not_json: u64,
    unknown: u64,
}

impl Feeder {
    fn new(format: Option<Format>) -> Self {
        Feeder {
            parser: format.map(|f| (f, new_parser(f))),
            pending: Vec::new(),
            pending_bytes: 0,
            log: WarningLog::default(),
            not_json: 0,
            unknown: 0,
        }
    }

    fn calls(&self) -> &[ToolCall] {
        self.parser.as_ref().map_or(&[], |(_, p)| p.calls())
    }

    fn line(&mut self, line_no: u64, text: &str) {
        if let Some((format, parser)) = self.parser.as_mut() {
            // A line another format's detector claims would be misread (Gemini's `result`
            // as Claude's) or silently ignored: it is a lost line instead.
            // Aider's history is Markdown: a JSON line in it is text of a reply.
            if *format != Format::AiderChat
                && let Detected::Format(other) = detect_line(text)
                && !compatible(other, *format)
            {
                self.log.warn_lost(
                    line_no,
                    format!(
                        "a {} line in a {} transcript; skipped",
                        other.name(),
                        format.name()
                    ),
                );
                return;
            }
            parser.line(line_no, text);
            return;
        }
        match detect_line(text) {
            Detected::Format(format) => {
                let mut p = new_parser(format);
                for (n, t) in self.pending.drain(..) {
                    p.line(n, &t);
                }
                self.pending_bytes = 0;
                p.line(line_no, text);
                self.parser = Some((format, p));
            }
            Detected::NotJson => {
                self.not_json += 1;
                let why = serde_json::from_str::<serde::de::IgnoredAny>(text)
                    .err()
                    .map_or_else(|| "not an event".to_owned(), |e| e.to_string());
                self.log.warn_lost(line_no, format!("invalid JSON: {why}"));
            }
            Detected::Unknown => {
                self.unknown += 1;
                if self.pending.len() < MAX_PENDING_LINES
                    && self.pending_bytes + text.len() <= MAX_PENDING_BYTES
                {
                    self.pending_bytes += text.len();
                    self.pending.push((line_no, text.to_owned()));
                } else {
                    self.log.warn_lost(
                        line_no,
                        "skipped: too many lines before one showed the transcript's format",
                    );
                }
            }
        }
    }

    fn finish(self) -> Result<Transcript, ReadError> {
        match self.parser {
            Some((_, p)) => {
                let mut t = p.finish();
                t.absorb_warnings(self.log, None);
                Ok(t)
            }
            None if self.not_json == 0 && self.unknown == 0 => {
                Err(ReadError::Unknown("the file is empty".into()))
            }
            None if self.unknown == 0 => Err(ReadError::Unknown("no line is valid JSON".into())),
            None => Err(ReadError::Unknown(
                "no line looks like the output of an agent aptitude knows (Claude Code, Codex CLI, \
                 Gemini CLI, Qwen Code, Copilot CLI, opencode, pi, Cursor CLI)"
                    .into(),
            )),
        }
    }
}

/// Formats whose lines may share a file: Claude Code session and stream-json lines (and
/// the `{"raw": …}` wrapper) go through one parser; every other format stands alone.
fn family(format: Format) -> u8 {
    match format {
        Format::ClaudeSession | Format::ClaudeStreamJson | Format::QwenStreamJson => 0,
        Format::QwenSession => 1,
        Format::CodexExecJson => 2,
        Format::CodexRollout => 3,
        Format::GeminiStreamJson => 4,
        Format::GeminiSession | Format::GeminiChat | Format::GeminiJson => 5,
        Format::CopilotJson | Format::CopilotSession => 6,
        Format::OpencodeJson | Format::OpencodeSession => 7,
        Format::PiJson | Format::PiSession => 8,
        Format::CursorStreamJson => 9,
        Format::AuggieJson | Format::AuggieSession => 10,
        Format::AiderChat => 11,
    }
}

/// Whether a line detected as `line` may appear in a `transcript` of another format: one
/// family, or Claude Code-shaped `user`/`assistant`/`result` lines in a Cursor stream (Cursor
/// writes those shapes too).
fn compatible(line: Format, transcript: Format) -> bool {
    family(line) == family(transcript)
        || (transcript == Format::CursorStreamJson && line == Format::ClaudeStreamJson)
}

/// The line loop; `allow_document` lets a first line that is not JSON on its own switch to
/// whole-document parsing (pretty-printed JSON).
fn parse_lines(mut reader: impl BufRead, allow_document: bool) -> Result<Transcript, ReadError> {
    let mut buf: Vec<u8> = Vec::new();
    let mut line_no = 0u64;
    let mut feeder = Feeder::new(None);
    let mut cut_off: Option<u64> = None;
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf)? == 0 {
            break;
        }
        line_no += 1;
        let (text, lossy) = decode(&buf);
        if lossy {
            feeder
                .log
                .warn(line_no, "invalid UTF-8 replaced with U+FFFD");
        }
        let text = text.trim_end_matches(['\n', '\r']);
        if text.trim().is_empty() {
            continue;
        }
        // Only the last line can lack its line break: if it is not JSON either, the file
        // was cut mid-line.
        if !buf.ends_with(b"\n") && serde_json::from_str::<serde::de::IgnoredAny>(text).is_err() {
            cut_off = Some(line_no);
        }
        if feeder.parser.is_none()
            && allow_document
            && line_no == 1
            && text.trim_start().starts_with('{')
            && matches!(detect_line(text), Detected::NotJson)
        {
            // A pretty-printed JSON document: its first line is not JSON on its own.
            let mut rest = Vec::new();
            reader.read_to_end(&mut rest)?;
            let (rest, rest_lossy) = decode(&rest);
            let whole = format!("{text}\n{rest}");
            // Not a document after all: a JSONL file whose first line is broken. A document
            // that is JSON but no transcript keeps its own reason.
            let mut t = match parse_json_document(&whole) {
                Err(e) if serde_json::from_str::<serde::de::IgnoredAny>(&whole).is_ok() => {
                    return Err(e);
                }
                Err(_) => parse_lines(whole.as_bytes(), false)?,
                Ok(t) => t,
            };
            if lossy || rest_lossy {
                t.absorb_warnings(invalid_utf8_warning(0), None);
            }
            return Ok(t);
        }
        feeder.line(line_no, text);
    }
    let mut t = feeder.finish()?;
    if let Some(line) = cut_off
        && t.outcome.is_completed()
    {
        t.outcome = Outcome::Incomplete {
            message: format!("the file ends mid-line: line {line} is cut off (truncated)"),
        };
    }
    Ok(t)
}

enum Detected {
    Format(Format),
    NotJson,
    Unknown,
}

/// The few fields that tell the formats apart.
#[derive(Deserialize)]
struct Probe<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<std::borrow::Cow<'a, str>>,
    #[serde(default)]
    raw: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    payload: Option<serde::de::IgnoredAny>,
    #[serde(rename = "sessionId", default)]
    session_id_camel: Option<serde::de::IgnoredAny>,
    #[serde(rename = "projectHash", default)]
    project_hash: Option<serde::de::IgnoredAny>,
    #[serde(rename = "$set", default)]
    set: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    provenance: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    qwen_code_version: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    tool_name: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    session_id: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    stats: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    data: Option<serde::de::IgnoredAny>,
    #[serde(rename = "exitCode", default)]
    exit_code: Option<serde::de::IgnoredAny>,
    #[serde(rename = "sessionID", default)]
    session_id_upper: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    message: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    role: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    version: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    cwd: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    subtype: Option<std::borrow::Cow<'a, str>>,
    #[serde(default)]
    tools: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    claude_code_version: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    request_id: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    num_turns: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    usage: Option<serde::de::IgnoredAny>,
    #[serde(rename = "apiKeySource", default)]
    api_key_source: Option<serde::de::IgnoredAny>,
    #[serde(rename = "permissionMode", default)]
    permission_mode: Option<serde::de::IgnoredAny>,
}

fn detect_line(text: &str) -> Detected {
    let Ok(probe) = serde_json::from_str::<Probe<'_>>(text) else {
        return Detected::NotJson;
    };
    if probe.raw.is_some() {
        return Detected::Format(Format::ClaudeStreamJson);
    }
    if probe.project_hash.is_some() || probe.set.is_some() {
        return Detected::Format(Format::GeminiSession);
    }
    let Some(kind) = probe.kind.as_deref() else {
        return Detected::Unknown;
    };
    if kind.starts_with("thread.") || kind.starts_with("turn.") || kind.starts_with("item.") {
        return Detected::Format(Format::CodexExecJson);
    }
    if probe.payload.is_some()
        && matches!(
            kind,
            "session_meta" | "response_item" | "event_msg" | "turn_context" | "compacted"
        )
    {
        return Detected::Format(Format::CodexRollout);
    }
    if probe.provenance.is_some() {
        return Detected::Format(Format::QwenSession);
    }
    if let Some(format) = detect_newer_agents(&probe, kind) {
        return Detected::Format(format);
    }
    match kind {
        "init" | "tool_use" | "tool_result" | "message"
            if probe.tool_name.is_some() || kind == "init" || kind == "message" =>
        {
            Detected::Format(Format::GeminiStreamJson)
        }
        // Gemini CLI's final event; Claude Code's `result` has no `stats`.
        "result" if probe.stats.is_some() && probe.session_id.is_none() => {
            Detected::Format(Format::GeminiStreamJson)
        }
        "gemini" => Detected::Format(Format::GeminiSession),
        "system" | "assistant" | "user" | "result" | "stream_event" => {
            if probe.qwen_code_version.is_some() {
                Detected::Format(Format::QwenStreamJson)
            } else if probe.session_id_camel.is_some() {
                Detected::Format(Format::ClaudeSession)
            } else if probe.session_id.is_some() || kind == "result" {
                Detected::Format(Format::ClaudeStreamJson)
            } else {
                Detected::Unknown
            }
        }
        // Lines only session logs have (summaries, snapshots, queue operations, …).
        "summary" | "file-history-snapshot" | "queue-operation" | "attachment" | "last-prompt" => {
            Detected::Format(Format::ClaudeSession)
        }
        _ => Detected::Unknown,
    }
}

/// Copilot CLI, opencode, pi and Cursor CLI lines (checked before the Claude and Gemini
/// shapes, which some of them resemble).
fn detect_newer_agents(probe: &Probe<'_>, kind: &str) -> Option<Format> {
    // Copilot: dotted event types with a `data` object, and its final `result`.
    if probe.data.is_some() && kind.contains('.') {
        return Some(if kind == "session.start" {
            Format::CopilotSession
        } else {
            Format::CopilotJson
        });
    }
    if kind == "result" && probe.exit_code.is_some() && probe.session_id_camel.is_some() {
        return Some(Format::CopilotJson);
    }
    // opencode / Kilo: `sessionID` (upper-case ID) on every event.
    if probe.session_id_upper.is_some()
        && matches!(
            kind,
            "step_start" | "step_finish" | "tool_use" | "text" | "reasoning" | "error"
        )
    {
        return Some(Format::OpencodeJson);
    }
    // pi: its header, its event names, and session entries wrapping a `message`.
    match kind {
        "session" if probe.version.is_some() && probe.cwd.is_some() => {
            return Some(Format::PiJson);
        }
        "agent_start"
        | "agent_end"
        | "turn_start"
        | "turn_end"
        | "message_start"
        | "message_update"
        | "message_end"
        | "tool_execution_start"
        | "tool_execution_update"
        | "tool_execution_end"
        | "auto_retry_start"
        | "auto_retry_end" => {
            return Some(Format::PiJson);
        }
        "message" if probe.message.is_some() && probe.role.is_none() => {
            return Some(Format::PiSession);
        }
        "model_change" | "thinking_level_change" => return Some(Format::PiSession),
        _ => {}
    }
    // Cursor: its own event types; an `init` without Claude Code's tool list; a `result`
    // with a `request_id` and no turn count.
    match kind {
        "tool_call" | "thinking" => Some(Format::CursorStreamJson),
        "system"
            if probe.subtype.as_deref() == Some("init")
                && probe.api_key_source.is_some()
                && probe.permission_mode.is_some()
                && probe.tools.is_none()
                && probe.claude_code_version.is_none()
                && probe.qwen_code_version.is_none() =>
        {
            Some(Format::CursorStreamJson)
        }
        "result" if probe.request_id.is_some() && probe.num_turns.is_none() => {
            Some(Format::CursorStreamJson)
        }
        // Auggie: Claude Code's `result` shape with a `request_id`, without usage.
        "result" if probe.request_id.is_some() && probe.usage.is_none() => Some(Format::AuggieJson),
        _ => None,
    }
}

fn new_parser(format: Format) -> Box<dyn LineParser + Send> {
    match format {
        Format::ClaudeSession | Format::ClaudeStreamJson | Format::QwenStreamJson => {
            Box::new(claude::ClaudeParser::new(format))
        }
        Format::QwenSession => Box::new(qwen::QwenSessionParser::new()),
        Format::CodexExecJson => Box::new(codex::ExecParser::new()),
        Format::CodexRollout => Box::new(codex::RolloutParser::new()),
        Format::GeminiStreamJson => Box::new(gemini::StreamParser::new()),
        Format::GeminiSession | Format::GeminiChat | Format::GeminiJson => {
            Box::new(gemini::SessionParser::new(format))
        }
        Format::CopilotJson | Format::CopilotSession => {
            Box::new(copilot::CopilotParser::new(format))
        }
        Format::OpencodeJson | Format::OpencodeSession => {
            Box::new(opencode::OpencodeParser::new(format))
        }
        Format::PiJson | Format::PiSession => Box::new(pi::PiParser::new(format)),
        Format::CursorStreamJson => Box::new(cursor::CursorParser::new()),
        Format::AuggieJson | Format::AuggieSession => Box::new(auggie::AuggieResultParser::new()),
        Format::AiderChat => Box::new(AiderLines(aider::AiderParser::new())),
    }
}

/// Aider's Markdown history through the line-parser interface (for [`StreamParser`]).
struct AiderLines(aider::AiderParser);

impl LineParser for AiderLines {
    fn line(&mut self, _line_no: u64, text: &str) {
        self.0.line(text);
    }

    fn calls(&self) -> &[ToolCall] {
        self.0.calls()
    }

    fn finish(self: Box<Self>) -> Transcript {
        self.0.finish()
    }
}

/// A JSON array of stream events (`qwen -o json`): each element is one event.
fn parse_json_array(text: &str) -> Result<Transcript, ReadError> {
    let items: Vec<&serde_json::value::RawValue> = serde_json::from_str(text)
        .map_err(|e| ReadError::Unknown(format!("invalid JSON array: {e}")))?;
    let mut feeder = Feeder::new(None);
    for (i, item) in items.iter().enumerate() {
        feeder.line(i as u64 + 1, item.get());
    }
    feeder
        .finish()
        .map_err(|_| ReadError::Unknown("no element of the JSON array is a known event".into()))
}

/// A whole-file JSON object: a Gemini CLI chat recording.
fn parse_json_document(text: &str) -> Result<Transcript, ReadError> {
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| ReadError::Unknown(format!("neither JSON lines nor a JSON document: {e}")))?;
    if value.get("messages").is_some() && value.get("sessionId").is_some() {
        return Ok(gemini::parse_chat(&value));
    }
    if value.get("response").is_some() && value.get("stats").is_some() {
        return Ok(gemini::parse_json_output(&value));
    }
    if opencode::is_export(&value) {
        return Ok(opencode::parse_export(&value));
    }
    if auggie::is_session(&value) {
        return Ok(auggie::parse_session(&value));
    }
    if copilot::is_usage_file(&value) {
        return Err(ReadError::Unknown(
            "a GitHub Copilot CLI usage file (`--usage-output-file`): token totals without \
             tool calls, not a transcript"
                .into(),
        ));
    }
    // A single pretty-printed event: feed it as one line.
    let compact = value.to_string();
    match detect_line(&compact) {
        Detected::Format(format) => {
            let mut p = new_parser(format);
            p.line(1, &compact);
            Ok(p.finish())
        }
        _ => Err(ReadError::Unknown(
            "a JSON document, but not a transcript aptitude knows".into(),
        )),
    }
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
