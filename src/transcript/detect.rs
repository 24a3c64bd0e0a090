//! Format detection: which agent and format a line comes from, judged from its content
//! (never from a file name), which formats may share a file, and each format's parser.

use serde::Deserialize;

use super::json::Events;
use super::{
    Format, LineParser, ToolCall, Transcript, aider, auggie, claude, codex, copilot, cursor,
    gemini, kiro, opencode, pi, qwen,
};

/// Formats whose lines may share a file: Claude Code session and stream-json lines (and
/// the `{"raw": …}` wrapper) go through one parser; every other format stands alone.
pub(super) fn family(format: Format) -> u8 {
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
        Format::KiroConversation => 12,
        Format::KiroSession => 13,
        Format::KiroKas => 14,
    }
}

/// Whether a line detected as `line` may appear in a `transcript` of another format: one
/// family, or Claude Code-shaped `user`/`assistant`/`result` lines in a Cursor stream (Cursor
/// writes those shapes too).
pub(super) fn compatible(line: Format, transcript: Format) -> bool {
    family(line) == family(transcript)
        || (transcript == Format::CursorStreamJson && line == Format::ClaudeStreamJson)
}

/// What a line shows.
pub(super) enum Detected {
    /// A line of this format.
    Format(Format),
    /// Not JSON.
    NotJson,
    /// JSON, but of no known format (or of any).
    Unknown,
}

/// The few fields that tell the formats apart.
#[derive(Deserialize)]
struct Probe<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<std::borrow::Cow<'a, str>>,
    #[serde(default)]
    raw: Option<serde::de::IgnoredAny>,
    #[serde(borrow, default)]
    payload: Option<&'a serde_json::value::RawValue>,
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
    /// Kiro CLI v2 log lines: `{"version", "kind", "data"}`.
    #[serde(rename = "kind", borrow, default)]
    kiro_kind: Option<std::borrow::Cow<'a, str>>,
    /// Kiro CLI v1 conversations: `{"conversation_id", "history", …}`.
    #[serde(default)]
    conversation_id: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    history: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    timestamp: Option<serde::de::IgnoredAny>,
}

/// The type of a Kiro CLI v3 line's `payload`.
#[derive(Deserialize)]
struct PayloadProbe<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<std::borrow::Cow<'a, str>>,
}

/// Kiro CLI lines, which have no top-level `type`: v1 conversations, v2 log lines
/// (`{"version", "kind", "data"}`), v3 lines (`{"id", "timestamp", "payload": {"type"}}`).
fn detect_kiro(probe: &Probe<'_>) -> Option<Format> {
    if probe.conversation_id.is_some() && probe.history.is_some() {
        return Some(Format::KiroConversation);
    }
    if probe.version.is_some()
        && probe.data.is_some()
        && probe
            .kiro_kind
            .as_deref()
            .is_some_and(|k| kiro::session::KINDS.contains(&k))
    {
        return Some(Format::KiroSession);
    }
    let payload = probe.payload?;
    probe.timestamp.as_ref()?;
    let kind = serde_json::from_str::<PayloadProbe<'_>>(payload.get())
        .ok()?
        .kind?;
    kiro::kas::TYPES
        .contains(&kind.as_ref())
        .then_some(Format::KiroKas)
}

/// The format a line shows.
pub(super) fn detect_line(text: &str) -> Detected {
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
        return detect_kiro(&probe).map_or(Detected::Unknown, Detected::Format);
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

/// The parser of `format`.
pub(super) fn new_parser(format: Format) -> Box<dyn LineParser + Send> {
    match format {
        Format::ClaudeSession | Format::ClaudeStreamJson | Format::QwenStreamJson => {
            Box::new(claude::ClaudeParser::new(format))
        }
        Format::QwenSession => Box::new(Events(qwen::QwenSessionParser::new())),
        Format::CodexExecJson => Box::new(Events(codex::ExecParser::new())),
        Format::CodexRollout => Box::new(Events(codex::RolloutParser::new())),
        Format::GeminiStreamJson => Box::new(Events(gemini::StreamParser::new())),
        Format::GeminiSession | Format::GeminiChat | Format::GeminiJson => {
            Box::new(Events(gemini::SessionParser::new(format)))
        }
        Format::CopilotJson | Format::CopilotSession => {
            Box::new(Events(copilot::CopilotParser::new(format)))
        }
        Format::OpencodeJson | Format::OpencodeSession => {
            Box::new(Events(opencode::OpencodeParser::new(format)))
        }
        Format::PiJson | Format::PiSession => Box::new(Events(pi::PiParser::new(format))),
        Format::CursorStreamJson => Box::new(Events(cursor::CursorParser::new())),
        Format::AuggieJson | Format::AuggieSession => {
            Box::new(Events(auggie::AuggieResultParser::new()))
        }
        Format::AiderChat => Box::new(AiderLines(aider::AiderParser::new())),
        Format::KiroConversation => Box::new(Events(kiro::conversation::ConversationParser::new())),
        Format::KiroSession => Box::new(Events(kiro::session::SessionParser::new())),
        Format::KiroKas => Box::new(Events(kiro::kas::KasParser::new())),
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
