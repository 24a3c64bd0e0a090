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
//!
//! Parsing streams line by line: memory grows with the tool calls kept, not with the file.
//! A tool call repeated across lines (same id) counts once. A malformed line becomes a
//! [`Warning`] with its line number, and the rest of the file is still used.

mod builder;
mod claude;
mod codex;
mod gemini;
mod qwen;

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
    /// Lines that could not be used, with why.
    pub warnings: Vec<Warning>,
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
    /// The tool's name as the agent called it.
    pub name: String,
    /// The canonical name (see [`crate::tools`]): `run_shell_command` → `Bash`.
    pub canonical: String,
    /// The call's input, as JSON.
    pub input: serde_json::Value,
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

    /// The command string of a shell call (`command`, `cmd`, or an argv array joined).
    pub fn command(&self) -> Option<String> {
        match self
            .input
            .get("command")
            .or_else(|| self.input.get("cmd"))?
        {
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Array(argv) => Some(
                argv.iter()
                    .map(|a| a.as_str().map_or_else(|| a.to_string(), str::to_owned))
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
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
    /// Adds another run's usage; unknown figures stay unknown only if both are.
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_creation_input_tokens += other.cache_creation_input_tokens;
        self.cache_read_input_tokens += other.cache_read_input_tokens;
        self.cost_usd = sum_opt(self.cost_usd, other.cost_usd);
        self.turns = sum_opt(self.turns, other.turns);
        self.duration_ms = sum_opt(self.duration_ms, other.duration_ms);
    }
}

fn sum_opt<T: std::ops::Add<Output = T>>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a + b),
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
    inner: Box<dyn LineParser + Send>,
    line_no: u64,
}

impl StreamParser {
    /// A parser for `format`.
    pub fn new(format: Format) -> Self {
        StreamParser {
            inner: new_parser(format),
            line_no: 0,
        }
    }

    /// Feeds one line (without its line break); empty lines are skipped.
    pub fn push_line(&mut self, line: &str) {
        self.line_no += 1;
        if !line.trim().is_empty() {
            self.inner.line(self.line_no, line);
        }
    }

    /// The tool calls recorded so far, in order (for live progress).
    pub fn calls(&self) -> &[ToolCall] {
        self.inner.calls()
    }

    /// The transcript of everything pushed so far.
    pub fn finish(self) -> Transcript {
        self.inner.finish()
    }
}

/// Parses a transcript file, detecting its format; Claude session logs also pick up their
/// subagent files (`<session>/subagents/agent-*.jsonl`, and 2.0.x `agent-*.jsonl` siblings
/// with the same `sessionId`), so that calls delegated to subagents are seen.
///
/// # Errors
/// When the file can not be read or matches no known format.
pub fn parse_file(path: &Path) -> Result<Transcript, TranscriptError> {
    let io_err = |source| TranscriptError::Io {
        path: path.to_owned(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io_err)?;
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
    if first == Some(b'[') {
        let mut text = String::new();
        reader.read_to_string(&mut text)?;
        return parse_json_array(&text);
    }
    parse_lines(reader, true)
}

/// The line loop; `allow_document` lets a first line that is not JSON on its own switch to
/// whole-document parsing (pretty-printed JSON).
fn parse_lines(mut reader: impl BufRead, allow_document: bool) -> Result<Transcript, ReadError> {
    let mut buf: Vec<u8> = Vec::new();
    let mut line_no = 0u64;
    let mut pending: Vec<(u64, String)> = Vec::new();
    let mut parser: Option<Box<dyn LineParser + Send>> = None;
    let mut not_json = 0usize;
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf)? == 0 {
            break;
        }
        line_no += 1;
        // Invalid UTF-8 is replaced rather than failing the whole file.
        let lossy;
        let text = match std::str::from_utf8(&buf) {
            Ok(s) => s,
            Err(_) => {
                lossy = String::from_utf8_lossy(&buf).into_owned();
                lossy.as_str()
            }
        };
        let text = text.trim_end_matches(['\n', '\r']);
        if text.trim().is_empty() {
            continue;
        }
        if let Some(p) = parser.as_mut() {
            p.line(line_no, text);
            continue;
        }
        match detect_line(text) {
            Detected::Format(format) => {
                let mut p = new_parser(format);
                for (n, t) in pending.drain(..) {
                    p.line(n, &t);
                }
                p.line(line_no, text);
                parser = Some(p);
            }
            Detected::NotJson => {
                // A pretty-printed JSON document: its first line is not JSON on its own.
                if allow_document && line_no == 1 && text.trim_start().starts_with('{') {
                    let mut rest = String::new();
                    reader.read_to_string(&mut rest)?;
                    let whole = format!("{text}\n{rest}");
                    // Not a document after all: a JSONL file whose first line is broken.
                    return parse_json_document(&whole)
                        .or_else(|_| parse_lines(whole.as_bytes(), false));
                }
                not_json += 1;
                pending.push((line_no, text.to_owned()));
            }
            Detected::Unknown => pending.push((line_no, text.to_owned())),
        }
    }
    match parser {
        Some(p) => Ok(p.finish()),
        None if pending.is_empty() => Err(ReadError::Unknown("the file is empty".into())),
        None if not_json == pending.len() => {
            Err(ReadError::Unknown("no line is valid JSON".into()))
        }
        None => Err(ReadError::Unknown(
            "no line looks like Claude Code, Codex CLI, Gemini CLI or Qwen Code output".into(),
        )),
    }
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
    match kind {
        "init" | "tool_use" | "tool_result" | "message"
            if probe.tool_name.is_some() || kind == "init" || kind == "message" =>
        {
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
    }
}

/// A JSON array of stream events (`qwen -o json`): each element is one event.
fn parse_json_array(text: &str) -> Result<Transcript, ReadError> {
    let items: Vec<&serde_json::value::RawValue> = serde_json::from_str(text)
        .map_err(|e| ReadError::Unknown(format!("invalid JSON array: {e}")))?;
    let mut parser: Option<Box<dyn LineParser + Send>> = None;
    for (i, item) in items.iter().enumerate() {
        let line_no = i as u64 + 1;
        if parser.is_none()
            && let Detected::Format(format) = detect_line(item.get())
        {
            parser = Some(new_parser(format));
        }
        if let Some(p) = parser.as_mut() {
            p.line(line_no, item.get());
        }
    }
    parser
        .map(|p| p.finish())
        .ok_or_else(|| ReadError::Unknown("no element of the JSON array is a known event".into()))
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
/// `Process exited with code 3` / `Exit code: 3`.
pub(crate) fn exit_code_in_text(text: &str) -> Option<i32> {
    let first = text.lines().next().unwrap_or("");
    if let Some(rest) = first.strip_prefix("Exit code ") {
        return rest.trim().parse().ok();
    }
    for line in text.lines() {
        let line = line.trim();
        for prefix in ["Exit Code: ", "Exit code: ", "Process exited with code "] {
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
pub(crate) fn epoch_seconds_to_rfc3339(secs: f64) -> Option<String> {
    if !secs.is_finite() || secs < 0.0 {
        return None;
    }
    let t = std::time::UNIX_EPOCH.checked_add(std::time::Duration::from_secs_f64(secs))?;
    Some(humantime::format_rfc3339_millis(t).to_string())
}

/// Milliseconds between two RFC 3339 timestamps, when both parse and are in order.
pub(crate) fn millis_between(start: &str, end: &str) -> Option<u64> {
    let a = humantime::parse_rfc3339_weak(start).ok()?;
    let b = humantime::parse_rfc3339_weak(end).ok()?;
    b.duration_since(a).ok().map(|d| d.as_millis() as u64)
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
}
