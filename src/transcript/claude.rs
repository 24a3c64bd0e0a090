//! Claude Code transcripts: session logs and `--output-format stream-json` (and Qwen Code's
//! stream-json, which uses the same event shapes).
//!
//! Formats handled, as seen in real files (`tests/corpus/`):
//! - **Session logs**, 1.0.x–2.1.x: one JSON object per line with `type` `user` /
//!   `assistant` / `system` / `summary` / `file-history-snapshot` / `attachment` / …,
//!   `sessionId`, `uuid`, `isSidechain` (inline subagent lines, 1.0.x) and `agentId`
//!   (subagent files, 2.x). An assistant message is often split over several lines with the
//!   same `message.id`, one content block each; usage repeats on each, so it is counted once
//!   per message. API failures appear as synthetic assistant messages (`model: "<synthetic>"`,
//!   `isApiErrorMessage`), interruptions as `[Request interrupted by user…]` user text.
//! - **stream-json** (`claude -p --output-format stream-json --verbose`, 2.1.328): `system/init`,
//!   `assistant` / `user` events (`parent_tool_use_id` marks subagent events), `system/api_retry`,
//!   and a final `result` with the true totals (`assistant` events only carry the
//!   `message_start` usage). Also accepted wrapped as `{"timestamp": <epoch s>, "raw": event}`.
//!   Several runs appended to one file are kept apart by their `system/init` events.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use super::builder::{Builder, Parts, ToolResult};
use super::turns::{TurnLog, TurnTokens};
use super::{Format, LineParser, Outcome, Transcript, Usage};

mod blocks;
mod subagents;

use blocks::{call_objects, error_message, is_interruption, server_result};
pub(crate) use subagents::merge_subagent_files;

/// One line (event) of either format; only the fields aptitude uses.
#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    subtype: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    raw: Option<Box<Line<'a>>>,
    /// A user or assistant message; a `system` event's `message` is text instead
    /// (`system/permission_denied`, 2.1.x), kept in `message_text`.
    #[serde(borrow, default, deserialize_with = "message_field")]
    message: Option<MessageField<'a>>,
    #[serde(rename = "isSidechain", default)]
    is_sidechain: Option<bool>,
    #[serde(rename = "agentId", borrow, default)]
    agent_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    parent_tool_use_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    timestamp: Option<&'a RawValue>,
    #[serde(borrow, default)]
    session_id: Option<Cow<'a, str>>,
    #[serde(rename = "sessionId", borrow, default)]
    session_id_camel: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    version: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    claude_code_version: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    qwen_code_version: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    model: Option<Cow<'a, str>>,
    // `system/init`: the skills loaded (`greet`, `plugin:skill`).
    #[serde(borrow, default)]
    skills: Option<Vec<Cow<'a, str>>>,
    // `result` events.
    #[serde(default)]
    is_error: Option<bool>,
    #[serde(default)]
    num_turns: Option<u32>,
    #[serde(borrow, default)]
    result: Option<Cow<'a, str>>,
    #[serde(default)]
    total_cost_usd: Option<f64>,
    #[serde(default)]
    usage: Option<RawUsage>,
    #[serde(default)]
    duration_ms: Option<u64>,
    #[serde(borrow, default)]
    terminal_reason: Option<Cow<'a, str>>,
    #[serde(default)]
    api_error_status: Option<u16>,
    #[serde(borrow, default)]
    errors: Option<Vec<Cow<'a, str>>>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
    // Tool-result side data (session logs: `toolUseResult`; stream-json: `tool_use_result`).
    #[serde(rename = "toolUseResult", borrow, default)]
    tool_use_result_camel: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tool_use_result: Option<&'a RawValue>,
    #[serde(rename = "isApiErrorMessage", default)]
    is_api_error_message: Option<bool>,
    #[serde(rename = "isCompactSummary", default)]
    is_compact_summary: Option<bool>,
    // Refusals (2.1.x): `system/permission_denied` {tool_use_id}; a tool result's
    // `tool_result_meta`; a final result's `permission_denials` (also Qwen Code's).
    #[serde(borrow, default)]
    tool_use_id: Option<Cow<'a, str>>,
    #[serde(default)]
    tool_result_meta: Option<Vec<ResultMeta>>,
    #[serde(default)]
    permission_denials: Option<Vec<PermissionDenial>>,
}

/// A line's `message`: a message object, or a `system` event's text.
enum MessageField<'a> {
    Object(Message<'a>),
    Text(String),
}

/// Reads `message` as an object (strictly: a malformed one fails the line, as before) or
/// as text; other values are ignored.
fn message_field<'de: 'a, 'a, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<MessageField<'a>>, D::Error> {
    let raw: &'a RawValue = Deserialize::deserialize(d)?;
    let text = raw.get();
    if text.starts_with('{') {
        serde_json::from_str(text)
            .map(|m| Some(MessageField::Object(m)))
            .map_err(serde::de::Error::custom)
    } else if text.starts_with('"') {
        Ok(serde_json::from_str::<String>(text)
            .ok()
            .map(MessageField::Text))
    } else {
        Ok(None)
    }
}

impl<'a> Line<'a> {
    /// The message object, when the line has one.
    fn message(&self) -> Option<&Message<'a>> {
        match &self.message {
            Some(MessageField::Object(m)) => Some(m),
            _ => None,
        }
    }
}

/// One entry of a tool result's `tool_result_meta` (Claude Code 2.1.x stream-json).
#[derive(Deserialize)]
struct ResultMeta {
    #[serde(default)]
    id: Option<String>,
    /// `user-rejected` and others: the call did not execute.
    #[serde(default)]
    non_execution_kind: Option<String>,
    #[serde(default)]
    permission_decision: Option<PermissionDecision>,
}

#[derive(Deserialize)]
struct PermissionDecision {
    #[serde(default)]
    decision: Option<String>,
}

/// One entry of a final result's `permission_denials` (Claude Code, Qwen Code).
#[derive(Deserialize)]
struct PermissionDenial {
    #[serde(default)]
    tool_use_id: Option<String>,
    #[serde(default)]
    tool_name: Option<String>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    model: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    content: Option<Content<'a>>,
    #[serde(default)]
    usage: Option<RawUsage>,
}

#[derive(Deserialize, Default, Clone, Copy)]
struct RawUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
}

impl RawUsage {
    fn turn_tokens(self) -> TurnTokens {
        TurnTokens {
            input: self.input_tokens.unwrap_or(0),
            output: self.output_tokens.unwrap_or(0),
            cache_read: self.cache_read_input_tokens.unwrap_or(0),
            cache_creation: self.cache_creation_input_tokens.unwrap_or(0),
        }
    }

    fn add_to(self, usage: &mut Usage) {
        usage.input_tokens = usage
            .input_tokens
            .saturating_add(self.input_tokens.unwrap_or(0));
        usage.output_tokens = usage
            .output_tokens
            .saturating_add(self.output_tokens.unwrap_or(0));
        usage.cache_creation_input_tokens = usage
            .cache_creation_input_tokens
            .saturating_add(self.cache_creation_input_tokens.unwrap_or(0));
        usage.cache_read_input_tokens = usage
            .cache_read_input_tokens
            .saturating_add(self.cache_read_input_tokens.unwrap_or(0));
    }
}

/// `content`: a plain string, a list of blocks, or — a server tool's result
/// (`web_fetch_tool_result`, `bash_code_execution_tool_result`, `advisor_tool_result`,
/// `tool_search_tool_result`: Anthropic Messages, as Claude Code 2.1.x passes them on) —
/// one object, kept whole.
enum Content<'a> {
    Text(Cow<'a, str>),
    Blocks(Vec<Block<'a>>),
    Object(serde_json::Value),
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    input: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tool_use_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    content: Option<Content<'a>>,
    #[serde(default)]
    is_error: Option<bool>,
    /// Set when the block's shape is not the one above (a field of another type): only
    /// its `type` is known.
    #[serde(skip)]
    unread: bool,
}

impl<'a> Block<'a> {
    /// A block of a shape aptitude does not know, read leniently: as [`Block`] when it
    /// can, else its `type` alone, marked `unread` (never an error of the whole line).
    fn lenient(raw: &'a RawValue) -> Self {
        serde_json::from_str(raw.get()).unwrap_or_else(|_| {
            let kind = serde_json::from_str::<serde_json::Value>(raw.get())
                .ok()
                .and_then(|v| v.get("type").and_then(|t| t.as_str()).map(str::to_owned));
            Block {
                kind: Some(Cow::Owned(kind.unwrap_or_else(|| "unknown".into()))),
                text: None,
                id: None,
                name: None,
                input: None,
                tool_use_id: None,
                content: None,
                is_error: None,
                unread: true,
            }
        })
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Content<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Content<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or a list of content blocks")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Content<'a>, E> {
                Ok(Content::Text(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Content<'a>, E> {
                Ok(Content::Text(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Content<'a>, E> {
                Ok(Content::Text(Cow::Owned(v)))
            }
            fn visit_unit<E>(self) -> Result<Content<'a>, E> {
                Ok(Content::Blocks(Vec::new()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Content<'a>, A::Error> {
                let mut blocks = Vec::new();
                while let Some(raw) = seq.next_element::<&'de RawValue>()? {
                    blocks.push(Block::lenient(raw));
                }
                Ok(Content::Blocks(blocks))
            }
            fn visit_map<M: MapAccess<'de>>(self, map: M) -> Result<Content<'a>, M::Error> {
                let value = serde_json::Value::deserialize(MapAccessDeserializer::new(map))?;
                Ok(Content::Object(value))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

impl Content<'_> {
    /// The text of a tool result or message: text blocks joined by newlines, images as
    /// `[image]`.
    fn text(&self) -> String {
        match self {
            Content::Text(s) => s.to_string(),
            // As the witness reads a result's object content off the wire: its JSON.
            Content::Object(value) => value.to_string(),
            Content::Blocks(blocks) => {
                let mut out = String::new();
                for block in blocks {
                    let piece = match block.kind.as_deref() {
                        Some("text") => block.text.as_deref().unwrap_or(""),
                        Some("image") => "[image]",
                        _ => continue,
                    };
                    if !out.is_empty() {
                        out.push('\n');
                    }
                    out.push_str(piece);
                }
                out
            }
        }
    }
}

/// Bash's structured result (`toolUseResult` in session logs).
#[derive(Deserialize)]
struct BashResult {
    #[serde(default)]
    stdout: Option<String>,
    #[serde(default)]
    stderr: Option<String>,
}

/// What the main agent did last, for sessions without a final `result` event.
#[derive(Debug, Clone, PartialEq)]
enum Last {
    Nothing,
    Text,
    ToolUse,
    ToolResult,
    Interrupted,
    ApiError(String),
}

pub(crate) struct ClaudeParser {
    format: Format,
    b: Builder,
    session_id: Option<String>,
    agent_version: Option<String>,
    model: Option<String>,
    seen_messages: HashSet<String>,
    runs: u32,
    run_active: bool,
    run_messages: Usage,
    run_result: Option<(Usage, Outcome, Option<String>)>,
    run_first_ts: Option<String>,
    run_last_ts: Option<String>,
    total: Usage,
    final_text: Option<String>,
    final_text_message: Option<String>,
    last: Last,
    last_outcome: Option<Outcome>,
    last_result_text: Option<String>,
    any_result: bool,
    /// Whose messages make the final answer and outcome: the main agent, or — in a
    /// subagent's own file, where every line is a sidechain — that subagent.
    primary: Option<Option<String>>,
    /// The last `system/init` event's `skills` (Claude Code stream-json only).
    skills: Option<Vec<String>>,
    /// The model's replies, turn by turn.
    turns: TurnLog,
}

impl ClaudeParser {
    pub(crate) fn new(format: Format) -> Self {
        ClaudeParser {
            format,
            b: Builder::new(true).with_vocabulary(if format == Format::QwenStreamJson {
                crate::spec::tools::Vocabulary::Qwen
            } else {
                crate::spec::tools::Vocabulary::Claude
            }),
            session_id: None,
            agent_version: None,
            model: None,
            seen_messages: HashSet::new(),
            skills: None,
            turns: TurnLog::default(),
            runs: 0,
            run_active: false,
            run_messages: Usage::default(),
            run_result: None,
            run_first_ts: None,
            run_last_ts: None,
            total: Usage::default(),
            final_text: None,
            final_text_message: None,
            last: Last::Nothing,
            last_outcome: None,
            last_result_text: None,
            any_result: false,
            primary: None,
        }
    }

    fn start_run(&mut self) {
        self.close_run();
        self.runs = self.runs.saturating_add(1);
        self.run_active = true;
        self.final_text = None;
        self.final_text_message = None;
        self.last = Last::Nothing;
    }

    fn ensure_run(&mut self) {
        if !self.run_active {
            self.start_run();
        }
    }

    fn close_run(&mut self) {
        if !self.run_active {
            return;
        }
        self.run_active = false;
        match self.run_result.take() {
            Some((usage, outcome, text)) => {
                self.total.add(&usage);
                self.last_outcome = Some(outcome);
                self.last_result_text = text;
            }
            None => {
                let mut usage = std::mem::take(&mut self.run_messages);
                if let (Some(a), Some(b)) = (&self.run_first_ts, &self.run_last_ts) {
                    usage.duration_ms = super::millis_between(a, b);
                }
                self.total.add(&usage);
                self.last_outcome = Some(self.outcome_without_result());
                self.last_result_text = self.final_text.take();
            }
        }
        self.run_messages = Usage::default();
        self.run_first_ts = None;
        self.run_last_ts = None;
    }

    fn outcome_without_result(&self) -> Outcome {
        let stream = self.format != Format::ClaudeSession;
        match &self.last {
            Last::ApiError(message) => Outcome::ApiError {
                message: message.clone(),
                http_status: None,
            },
            Last::Interrupted => Outcome::Interrupted,
            _ if stream => Outcome::Incomplete {
                message:
                    "the output ends without a `result` event (the agent was killed or crashed)"
                        .into(),
            },
            Last::Text => Outcome::Completed,
            Last::ToolUse | Last::ToolResult => Outcome::Incomplete {
                message: "the session ends after a tool call, without an answer".into(),
            },
            Last::Nothing => Outcome::Incomplete {
                message: "the session has no messages".into(),
            },
        }
    }

    fn timestamp(&mut self, raw: Option<&RawValue>) -> Option<String> {
        let raw = raw?.get();
        let ts = if let Some(s) = raw.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
            s.to_owned()
        } else {
            super::epoch_seconds_to_rfc3339(raw.parse().ok()?)?
        };
        if self.run_first_ts.is_none() {
            self.run_first_ts = Some(ts.clone());
        }
        Some(ts)
    }

    fn handle(&mut self, line_no: u64, line: Line<'_>, outer_ts: Option<&RawValue>) {
        let kind = line.kind.as_deref().unwrap_or("");
        if kind == "system" && line.subtype.as_deref() == Some("init") {
            self.start_run();
        }
        if let Some(sid) = line
            .session_id
            .as_deref()
            .or(line.session_id_camel.as_deref())
            && self.session_id.as_deref() != Some(sid)
        {
            self.session_id = Some(sid.to_owned());
        }
        if let Some(v) = &line.claude_code_version {
            self.agent_version = Some(format!("claude-code {v}"));
        } else if let Some(v) = &line.qwen_code_version {
            self.agent_version = Some(format!("qwen-code {v}"));
        } else if let (Some(v), None) = (&line.version, &self.agent_version) {
            self.agent_version = Some(format!("claude-code {v}"));
        }
        let ts_raw = line.timestamp.or(outer_ts);
        match kind {
            "system" => {
                self.ensure_run();
                if line.subtype.as_deref() == Some("init") {
                    if let Some(model) = &line.model {
                        self.model = Some(model.to_string());
                    }
                    if self.format == Format::ClaudeStreamJson
                        && let Some(skills) = &line.skills
                    {
                        self.skills = Some(skills.iter().map(|s| s.to_string()).collect());
                    }
                } else if line.subtype.as_deref() == Some("api_error") {
                    let message = error_message(line.error).unwrap_or_else(|| "API error".into());
                    self.last = Last::ApiError(message);
                } else if line.subtype.as_deref() == Some("permission_denied")
                    && let Some(id) = &line.tool_use_id
                {
                    let why = match &line.message {
                        Some(MessageField::Text(t)) => crate::shared::text::truncate(t, 200),
                        _ => "permission denied".to_owned(),
                    };
                    self.b.block(id, &why);
                }
                if let Some(ts) = self.timestamp(ts_raw) {
                    if line.subtype.as_deref() == Some("init") {
                        self.turns.event(Some(&ts));
                    }
                    self.run_last_ts = Some(ts);
                }
            }
            "assistant" => {
                self.ensure_run();
                let ts = self.timestamp(ts_raw);
                self.assistant(line_no, &line, ts.clone());
                if ts.is_some() {
                    self.run_last_ts = ts;
                }
            }
            "user" => {
                self.ensure_run();
                let ts = self.timestamp(ts_raw);
                self.user(line_no, &line);
                self.turns.event(ts.as_deref());
                if ts.is_some() {
                    self.run_last_ts = ts;
                }
            }
            "result" => {
                self.ensure_run();
                for denial in line.permission_denials.iter().flatten() {
                    if let Some(id) = &denial.tool_use_id {
                        let tool = denial.tool_name.as_deref().unwrap_or("the tool");
                        self.b
                            .block(id, &format!("permission to use {tool} was denied"));
                    }
                }
                self.result(&line);
                self.any_result = true;
            }
            "" => self.b.warn(line_no, "line has no `type`; skipped"),
            // summary, file-history-snapshot, queue-operation, attachment, stream_event, …
            _ => {}
        }
    }

    /// A JSON line of a shape this parser does not know (a field of another type than
    /// Claude Code wrote so far): a warning naming its type, never a dropped call — the
    /// tool calls it holds (`tool_use`, `server_tool_use`, `mcp_tool_use` objects with an
    /// id and a name, at any depth) are kept, so that no absence assertion passes on it.
    fn unknown_shape(&mut self, line_no: u64, value: &serde_json::Value, err: &serde_json::Error) {
        let kind = value
            .get("raw")
            .unwrap_or(value)
            .get("type")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("untyped");
        self.b.warn(
            line_no,
            format!("a `{kind}` line of a shape not known ({err}); its tool calls kept"),
        );
        let mut calls = Vec::new();
        call_objects(value, &mut calls);
        for (kind, id, name, input) in calls {
            self.b.call(id, name, || input.clone(), None, None);
            if kind != "tool_use" {
                self.b.server_side(id);
            }
        }
    }

    /// Whether a line's agent is the one whose answer and outcome the transcript reports.
    fn is_primary(&mut self, agent: &Option<String>) -> bool {
        self.primary.get_or_insert_with(|| agent.clone()) == agent
    }

    fn agent_of(line: &Line<'_>) -> Option<String> {
        if let Some(parent) = &line.parent_tool_use_id {
            return Some(parent.to_string());
        }
        if line.is_sidechain == Some(true) {
            return Some(line.agent_id.as_deref().unwrap_or("sidechain").to_owned());
        }
        None
    }

    fn assistant(&mut self, line_no: u64, line: &Line<'_>, ts: Option<String>) {
        let Some(message) = line.message() else {
            return;
        };
        let agent = Self::agent_of(line);
        let main = self.is_primary(&agent);
        let synthetic = message.model.as_deref() == Some("<synthetic>")
            || line.is_api_error_message == Some(true);
        if !synthetic {
            if let Some(id) = &message.id
                && !self.seen_messages.contains(id.as_ref())
            {
                self.seen_messages.insert(id.to_string());
                if let Some(usage) = message.usage {
                    usage.add_to(&mut self.run_messages);
                }
                if main {
                    self.run_messages.turns =
                        Some(self.run_messages.turns.unwrap_or(0).saturating_add(1));
                }
            }
            if self.model.is_none() {
                self.model = message.model.as_deref().map(str::to_owned);
            }
        }
        let Some(content) = &message.content else {
            return;
        };
        if synthetic {
            if main {
                self.last = Last::ApiError(content.text());
            }
            return;
        }
        let turn = self.turns.reply(
            message.id.as_deref(),
            agent.as_deref().unwrap_or(super::MAIN_AGENT),
            ts.as_deref(),
            message.usage.map(RawUsage::turn_tokens),
        );
        let blocks = match content {
            Content::Text(text) => {
                if let Some(turn) = turn {
                    self.turns.text(turn, text);
                }
                if main {
                    self.final_text = Some(text.to_string());
                    self.final_text_message = message.id.as_deref().map(str::to_owned);
                    self.last = Last::Text;
                }
                return;
            }
            Content::Blocks(blocks) => blocks,
            Content::Object(_) => return,
        };
        for block in blocks {
            match block.kind.as_deref() {
                Some("text") => {
                    let text = block.text.as_deref().unwrap_or("");
                    if let Some(turn) = turn {
                        self.turns.text(turn, text);
                    }
                    if main && !text.trim().is_empty() {
                        let same_message = message.id.is_some()
                            && self.final_text_message.as_deref() == message.id.as_deref()
                            && self.last == Last::Text;
                        match (&mut self.final_text, same_message) {
                            (Some(existing), true) => {
                                existing.push_str("\n\n");
                                existing.push_str(text);
                            }
                            _ => self.final_text = Some(text.to_owned()),
                        }
                        self.final_text_message = message.id.as_deref().map(str::to_owned);
                        self.last = Last::Text;
                    }
                }
                Some(kind @ ("tool_use" | "server_tool_use" | "mcp_tool_use")) => {
                    let (Some(id), Some(name)) = (&block.id, &block.name) else {
                        if block.unread {
                            self.b.warn_lost(
                                line_no,
                                format!("a `{kind}` block of a shape not known; its call is lost"),
                            );
                        }
                        continue;
                    };
                    let input = block.input;
                    self.b.call(
                        id,
                        name,
                        || {
                            input
                                .and_then(|raw| serde_json::from_str(raw.get()).ok())
                                .unwrap_or(serde_json::Value::Null)
                        },
                        agent.as_deref(),
                        ts.clone(),
                    );
                    if kind != "tool_use" {
                        self.b.server_side(id);
                    }
                    if let (Some(turn), Some(index)) = (turn, self.b.index_of(id)) {
                        self.turns.call(turn, index);
                    }
                    if main {
                        self.final_text = None;
                        self.last = Last::ToolUse;
                    }
                }
                Some(kind) => self.other_block(line_no, kind, block),
                None => {}
            }
        }
    }

    /// A reply's block that is no text and no call: a server tool's result (in the reply
    /// that called it), or a block of a shape not known (a warning naming its type).
    fn other_block(&mut self, line_no: u64, kind: &str, block: &Block<'_>) {
        if kind.ends_with("_tool_result") {
            match &block.tool_use_id {
                Some(id) => self.b.result(id, server_result(kind, block)),
                None => self.b.warn(
                    line_no,
                    format!("a `{kind}` block without `tool_use_id`; kept out"),
                ),
            }
        } else if block.unread {
            self.b.warn(
                line_no,
                format!("a `{kind}` content block of a shape not known; skipped"),
            );
        }
    }

    fn user(&mut self, line_no: u64, line: &Line<'_>) {
        let Some(message) = line.message() else {
            return;
        };
        let main = self.is_primary(&Self::agent_of(line));
        let Some(content) = &message.content else {
            return;
        };
        if line.is_compact_summary == Some(true) {
            return;
        }
        let blocks = match content {
            Content::Text(text) => {
                if main && is_interruption(text) {
                    self.last = Last::Interrupted;
                }
                return;
            }
            Content::Blocks(blocks) => blocks,
            Content::Object(_) => return,
        };
        let results = blocks
            .iter()
            .filter(|b| b.kind.as_deref() == Some("tool_result"))
            .count();
        let side = line.tool_use_result.or(line.tool_use_result_camel);
        for block in blocks {
            match block.kind.as_deref() {
                Some("tool_result") => {
                    let Some(id) = &block.tool_use_id else {
                        if block.unread {
                            self.b.warn(
                                line_no,
                                "a `tool_result` block of a shape not known; its result is not read",
                            );
                        }
                        continue;
                    };
                    let output = block
                        .content
                        .as_ref()
                        .map(Content::text)
                        .unwrap_or_default();
                    let mut result = ToolResult {
                        is_error: block.is_error.unwrap_or(false),
                        output,
                        ..ToolResult::default()
                    };
                    let meta = line
                        .tool_result_meta
                        .iter()
                        .flatten()
                        .find(|m| m.id.as_deref() == Some(id.as_ref()));
                    if let Some(meta) = meta
                        && (meta.non_execution_kind.is_some()
                            || meta
                                .permission_decision
                                .as_ref()
                                .and_then(|d| d.decision.as_deref())
                                == Some("reject"))
                    {
                        result.blocked = Some(format!(
                            "{}: {}",
                            meta.non_execution_kind.as_deref().unwrap_or("rejected"),
                            crate::shared::text::truncate(&result.output, 200)
                        ));
                    }
                    // Refused before it ran for another reason than a permission (its
                    // input validation, a hook, its sleep guard): reported as a
                    // `<tool_use_error>`.
                    if result.blocked.is_none() && result.is_error {
                        result.blocked = super::blocked::claude_not_run(&result.output);
                    }
                    // The structured side data belongs to the line's single result.
                    if results == 1
                        && self.b.canonical_of(id) == Some(crate::spec::tools::SHELL_TOOL)
                        && let Some(raw) = side
                        && raw.get().starts_with('{')
                        && let Ok(bash) = serde_json::from_str::<BashResult>(raw.get())
                    {
                        result.stdout = bash.stdout;
                        result.stderr = bash.stderr;
                    }
                    self.b.result(id, result);
                    if main {
                        self.last = Last::ToolResult;
                    }
                }
                Some("text") if main && block.text.as_deref().is_some_and(is_interruption) => {
                    self.last = Last::Interrupted;
                }
                _ => {}
            }
        }
    }

    fn result(&mut self, line: &Line<'_>) {
        let mut usage = Usage::default();
        if let Some(raw) = line.usage {
            raw.add_to(&mut usage);
        }
        usage.cost_usd = line.total_cost_usd;
        usage.turns = line.num_turns;
        usage.duration_ms = line.duration_ms;
        let is_error = line.is_error.unwrap_or(false);
        let result_text = line.result.as_deref().map(str::to_owned);
        let message = || {
            result_text
                .clone()
                .filter(|s| !s.is_empty())
                .or_else(|| {
                    line.errors
                        .as_ref()
                        .map(|e| e.join("; "))
                        .filter(|s| !s.is_empty())
                })
                .or_else(|| error_message(line.error))
                .unwrap_or_else(|| {
                    format!("result subtype {}", line.subtype.as_deref().unwrap_or("?"))
                })
        };
        let outcome = if line.subtype.as_deref() == Some("error_max_turns")
            || line.terminal_reason.as_deref() == Some("max_turns")
        {
            Outcome::MaxTurns { message: message() }
        } else if is_error {
            let msg = message();
            if line.terminal_reason.as_deref() == Some("api_error")
                || line.api_error_status.is_some()
                || msg.starts_with("API Error")
                || msg.starts_with("[API Error")
            {
                Outcome::ApiError {
                    message: msg,
                    http_status: line.api_error_status,
                }
            } else {
                Outcome::Error { message: msg }
            }
        } else {
            Outcome::Completed
        };
        let text = if outcome.is_completed() {
            result_text.or_else(|| self.final_text.clone())
        } else {
            self.final_text.clone()
        };
        self.run_result = Some((usage, outcome, text));
    }
}

impl LineParser for ClaudeParser {
    fn calls(&self) -> &[super::ToolCall] {
        self.b.calls()
    }

    fn line(&mut self, line_no: u64, text: &str) {
        match serde_json::from_str::<Line<'_>>(text) {
            Ok(mut line) => match line.raw.take() {
                Some(inner) => {
                    let outer_ts = line.timestamp;
                    self.handle(line_no, *inner, outer_ts);
                }
                None => self.handle(line_no, line, None),
            },
            Err(err) => match serde_json::from_str::<serde_json::Value>(text) {
                Ok(value) => self.unknown_shape(line_no, &value, &err),
                Err(_) => self.b.warn_lost(line_no, format!("invalid JSON: {err}")),
            },
        }
    }

    fn finish(mut self: Box<Self>) -> Transcript {
        self.close_run();
        let outcome = self.last_outcome.take().unwrap_or(Outcome::Incomplete {
            message: "no events".into(),
        });
        let final_text = self.last_result_text.take();
        let total = std::mem::take(&mut self.total);
        let this = *self;
        let (turns, turns_left_out) = this.turns.finish();
        let mut transcript = this.b.into_transcript(Parts {
            format: this.format,
            session_id: this.session_id,
            agent_version: this.agent_version,
            model: this.model,
            final_text,
            usage: total,
            outcome,
            runs: this.runs,
        });
        transcript.skills = this.skills;
        transcript.turns = turns;
        transcript.turns_left_out = turns_left_out;
        transcript
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::{parse_file, parse_reader};

    fn parse(lines: &[&str]) -> Transcript {
        parse_reader(lines.join("\n").as_bytes()).unwrap()
    }

    const INIT: &str = r#"{"type":"system","subtype":"init","session_id":"s1","model":"m","claude_code_version":"2.1.328"}"#;

    #[test]
    fn mcp_tools_images_and_compaction() {
        let t = parse(&[
            INIT,
            r#"{"type":"assistant","session_id":"s1","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"mcp__github__create_issue","input":{"title":"x"}}]}}"#,
            r#"{"type":"user","session_id":"s1","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"created"},{"type":"image","source":{"type":"base64","data":"AAAA"}}]}]}}"#,
            r#"{"type":"system","subtype":"compact_boundary","session_id":"s1","compact_metadata":{"trigger":"auto"}}"#,
            r#"{"type":"user","session_id":"s1","isCompactSummary":true,"message":{"content":"This session is being continued from a previous conversation."}}"#,
            r#"{"type":"assistant","session_id":"s1","message":{"id":"m2","content":[{"type":"text","text":"Done."}]}}"#,
            r#"{"type":"result","subtype":"success","is_error":false,"result":"Done.","num_turns":2,"session_id":"s1"}"#,
        ]);
        assert_eq!(t.tool_calls.len(), 1);
        let call = &t.tool_calls[0];
        assert_eq!(call.canonical, "mcp__github__create_issue");
        assert_eq!(call.output.as_deref(), Some("created\n[image]"));
        assert_eq!(call.exit_code, None);
        assert_eq!(t.final_text.as_deref(), Some("Done."));
        assert_eq!(t.outcome, Outcome::Completed);
        assert!(t.warnings.is_empty(), "{:?}", t.warnings);
    }

    #[test]
    fn several_runs_appended_in_one_file() {
        let run = |sid: &str, tool: &str, answer: &str, cost: f64| {
            vec![
                format!(
                    r#"{{"type":"system","subtype":"init","session_id":"{sid}","claude_code_version":"2.1.328"}}"#
                ),
                format!(
                    r#"{{"type":"assistant","session_id":"{sid}","message":{{"id":"m-{sid}","content":[{{"type":"tool_use","id":"t-{sid}","name":"{tool}","input":{{}}}}]}}}}"#
                ),
                format!(
                    r#"{{"type":"result","subtype":"success","is_error":false,"result":"{answer}","num_turns":1,"total_cost_usd":{cost},"usage":{{"input_tokens":10,"output_tokens":2}},"session_id":"{sid}"}}"#
                ),
            ]
        };
        let mut lines = run("a", "Read", "first", 0.5);
        lines.extend(run("b", "Write", "second", 0.25));
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let t = parse(&refs);
        assert_eq!(t.runs, 2);
        assert_eq!(
            t.tool_calls
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>(),
            ["Read", "Write"]
        );
        assert_eq!(t.final_text.as_deref(), Some("second"));
        assert_eq!(t.usage.cost_usd, Some(0.75));
        assert_eq!(t.usage.input_tokens, 20);
        assert_eq!(t.session_id.as_deref(), Some("b"));
    }

    #[test]
    fn repeated_tool_use_counts_once() {
        let line = r#"{"type":"assistant","session_id":"s1","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}]}}"#;
        let t = parse(&[INIT, line, line, line]);
        assert_eq!(t.tool_calls.len(), 1);
    }

    #[test]
    fn stream_without_result_is_incomplete_and_keeps_calls() {
        let t = parse(&[
            INIT,
            r#"{"type":"assistant","session_id":"s1","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"sleep 100"}}]}}"#,
        ]);
        assert!(
            matches!(t.outcome, Outcome::Incomplete { .. }),
            "{:?}",
            t.outcome
        );
        assert_eq!(t.tool_calls.len(), 1, "what was captured so far is kept");
    }

    #[test]
    fn subagent_files_are_merged_in_time_order() {
        let dir = tempfile::tempdir().unwrap();
        let main = dir.path().join("sess.jsonl");
        std::fs::write(
            &main,
            [
                r#"{"type":"user","sessionId":"sess","uuid":"u1","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"go"}}"#,
                r#"{"type":"assistant","sessionId":"sess","uuid":"u2","timestamp":"2026-01-01T00:00:01.000Z","message":{"id":"m1","content":[{"type":"tool_use","id":"task1","name":"Task","input":{"prompt":"look"}}]}}"#,
                r#"{"type":"user","sessionId":"sess","uuid":"u3","timestamp":"2026-01-01T00:00:09.000Z","message":{"content":[{"type":"tool_result","tool_use_id":"task1","content":"done"}]}}"#,
                r#"{"type":"assistant","sessionId":"sess","uuid":"u4","timestamp":"2026-01-01T00:00:10.000Z","message":{"id":"m2","content":[{"type":"tool_use","id":"w1","name":"Write","input":{"file_path":"a"}}]}}"#,
            ]
            .join("\n"),
        )
        .unwrap();
        std::fs::create_dir_all(dir.path().join("sess/subagents")).unwrap();
        std::fs::write(
            dir.path().join("sess/subagents/agent-a1.jsonl"),
            r#"{"type":"assistant","isSidechain":true,"agentId":"a1","sessionId":"sess","uuid":"s1","timestamp":"2026-01-01T00:00:05.000Z","message":{"id":"sm1","content":[{"type":"tool_use","id":"r1","name":"Read","input":{"file_path":"/p/.env"}}]}}"#,
        )
        .unwrap();
        let t = parse_file(&main).unwrap();
        let order: Vec<(&str, &str)> = t
            .tool_calls
            .iter()
            .map(|c| (c.name.as_str(), c.agent.as_str()))
            .collect();
        assert_eq!(order, [("Task", "main"), ("Read", "a1"), ("Write", "main")]);
    }

    /// The subagent file's turn comes along with its call, renumbered after the session's
    /// calls were ordered by time: each turn still names its own calls.
    #[test]
    fn subagent_turns_follow_their_calls_when_calls_are_reordered() {
        let dir = tempfile::tempdir().unwrap();
        let main = dir.path().join("sess.jsonl");
        std::fs::write(
            &main,
            [
                r#"{"type":"user","sessionId":"sess","uuid":"u1","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"go"}}"#,
                r#"{"type":"assistant","sessionId":"sess","uuid":"u2","timestamp":"2026-01-01T00:00:01.000Z","message":{"id":"m1","content":[{"type":"tool_use","id":"task1","name":"Task","input":{"prompt":"look"}}]}}"#,
                r#"{"type":"assistant","sessionId":"sess","uuid":"u4","timestamp":"2026-01-01T00:00:10.000Z","message":{"id":"m2","content":[{"type":"text","text":"Writing."},{"type":"tool_use","id":"w1","name":"Write","input":{"file_path":"a"}}]}}"#,
            ]
            .join("\n"),
        )
        .unwrap();
        std::fs::create_dir_all(dir.path().join("sess/subagents")).unwrap();
        std::fs::write(
            dir.path().join("sess/subagents/agent-a1.jsonl"),
            r#"{"type":"assistant","isSidechain":true,"agentId":"a1","sessionId":"sess","uuid":"s1","timestamp":"2026-01-01T00:00:05.000Z","message":{"id":"sm1","content":[{"type":"text","text":"Reading it."},{"type":"tool_use","id":"r1","name":"Read","input":{"file_path":"/p/.env"}}]}}"#,
        )
        .unwrap();
        let t = parse_file(&main).unwrap();
        let turns: Vec<(&str, Option<&str>, Vec<&str>)> = t
            .turns
            .iter()
            .map(|turn| {
                let calls = turn
                    .calls
                    .iter()
                    .map(|&c| t.tool_calls[c as usize].name.as_str())
                    .collect();
                (turn.agent.as_str(), turn.text.as_deref(), calls)
            })
            .collect();
        assert_eq!(
            turns,
            [
                ("main", None, vec!["Task"]),
                ("a1", Some("Reading it."), vec!["Read"]),
                ("main", Some("Writing."), vec!["Write"]),
            ]
        );
    }

    /// stream-json: a reply written over several lines (one content block each, the same
    /// message id) is one turn with its text and its calls; a subagent's reply is its own
    /// turn; tokens are the reply's; without timestamps there is no duration.
    #[test]
    fn stream_json_turns_hold_text_calls_and_tokens() {
        let t = parse(&[
            INIT,
            r#"{"type":"assistant","session_id":"s1","message":{"id":"m1","usage":{"input_tokens":3,"cache_read_input_tokens":100,"output_tokens":2},"content":[{"type":"text","text":"I will run the tests."}]}}"#,
            r#"{"type":"assistant","session_id":"s1","message":{"id":"m1","usage":{"input_tokens":3,"cache_read_input_tokens":100,"output_tokens":9},"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"pytest -q"}}]}}"#,
            r#"{"type":"user","session_id":"s1","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"1 failed"}]}}"#,
            r#"{"type":"assistant","session_id":"s1","parent_tool_use_id":"task9","message":{"id":"sub1","content":[{"type":"tool_use","id":"t2","name":"Read","input":{"file_path":"a.py"}}]}}"#,
            r#"{"type":"assistant","session_id":"s1","message":{"id":"m2","content":[{"type":"text","text":"One test fails."}]}}"#,
            r#"{"type":"result","subtype":"success","is_error":false,"result":"One test fails.","num_turns":2,"session_id":"s1"}"#,
        ]);
        assert_eq!(t.turns.len(), 3, "{:?}", t.turns);
        let first = &t.turns[0];
        assert_eq!(first.agent, "main");
        assert_eq!(first.text.as_deref(), Some("I will run the tests."));
        assert_eq!(first.calls, [0]);
        assert_eq!(
            first.tokens,
            Some(TurnTokens {
                input: 3,
                output: 9,
                cache_read: 100,
                cache_creation: 0
            })
        );
        assert_eq!(first.duration_ms, None);
        assert_eq!(
            (t.turns[1].agent.as_str(), &t.turns[1].calls[..]),
            ("task9", &[1][..])
        );
        assert_eq!(t.turns[2].text.as_deref(), Some("One test fails."));
        // Results written before turns existed still read, without them.
        let mut old = serde_json::to_value(&t).unwrap();
        old.as_object_mut().unwrap().remove("turns");
        let back: Transcript = serde_json::from_value(old).unwrap();
        assert!(back.turns.is_empty());
    }

    /// Session logs: each line has its time, so a turn's time runs from the event before
    /// it (the prompt, a tool result) to the reply's last line.
    #[test]
    fn session_log_turns_are_timed() {
        let t = parse(&[
            r#"{"type":"user","sessionId":"s","uuid":"1","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"go"}}"#,
            r#"{"type":"assistant","sessionId":"s","uuid":"2","timestamp":"2026-01-01T00:00:02.000Z","message":{"id":"m1","content":[{"type":"text","text":"Looking."}]}}"#,
            r#"{"type":"assistant","sessionId":"s","uuid":"3","timestamp":"2026-01-01T00:00:03.250Z","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"a"}}]}}"#,
            r#"{"type":"user","sessionId":"s","uuid":"4","timestamp":"2026-01-01T00:00:04.000Z","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"x"}]}}"#,
            r#"{"type":"assistant","sessionId":"s","uuid":"5","timestamp":"2026-01-01T00:00:04.500Z","message":{"id":"m2","content":[{"type":"text","text":"Done."}]}}"#,
        ]);
        let times: Vec<Option<u64>> = t.turns.iter().map(|t| t.duration_ms).collect();
        assert_eq!(times, [Some(3_250), Some(500)]);
        assert_eq!(t.turns[0].calls, [0]);
    }

    #[test]
    fn interruption_in_session_log() {
        let t = parse(&[
            r#"{"type":"user","sessionId":"s","uuid":"1","message":{"role":"user","content":"do it"}}"#,
            r#"{"type":"assistant","sessionId":"s","uuid":"2","message":{"id":"m1","content":[{"type":"text","text":"Working"}]}}"#,
            r#"{"type":"user","sessionId":"s","uuid":"3","message":{"role":"user","content":[{"type":"text","text":"[Request interrupted by user]"}]}}"#,
        ]);
        assert_eq!(t.outcome, Outcome::Interrupted);
    }

    /// Server tools (Anthropic Messages, as Claude Code 2.1.x passes them on): each call is
    /// kept and marked server-side, and each result — whose content is an object — is kept
    /// as an opaque result with its type; no line is lost.
    #[test]
    fn server_tool_results_with_object_content_are_kept_not_lost() {
        let reply = r#"{"type":"assistant","session_id":"s1","message":{"id":"m1","model":"m","content":[
            {"type":"server_tool_use","id":"srvtoolu_1","name":"web_fetch","input":{"url":"https://example.com"}},
            {"type":"web_fetch_tool_result","tool_use_id":"srvtoolu_1","content":{"type":"web_fetch_result","url":"https://example.com","content":{"type":"document","source":{"type":"text","media_type":"text/plain","data":"Example Domain"}},"retrieved_at":"2026-01-01T00:00:00Z"}},
            {"type":"server_tool_use","id":"srvtoolu_2","name":"bash_code_execution","input":{"command":"echo 4"}},
            {"type":"bash_code_execution_tool_result","tool_use_id":"srvtoolu_2","content":{"type":"bash_code_execution_result","stdout":"4\n","stderr":"","return_code":0,"content":[]}},
            {"type":"server_tool_use","id":"srvtoolu_3","name":"advisor","input":{}},
            {"type":"advisor_tool_result","tool_use_id":"srvtoolu_3","content":{"type":"advisor_result","text":"Check the edge case."}},
            {"type":"server_tool_use","id":"srvtoolu_4","name":"tool_search_tool_regex","input":{"query":"weather"}},
            {"type":"tool_search_tool_result","tool_use_id":"srvtoolu_4","content":{"type":"tool_search_tool_search_result","tool_references":[{"type":"tool_reference","tool_name":"get_weather"}]}},
            {"type":"server_tool_use","id":"srvtoolu_5","name":"web_fetch","input":{"url":"https://example.invalid"}},
            {"type":"web_fetch_tool_result","tool_use_id":"srvtoolu_5","content":{"type":"web_fetch_tool_error","error_code":"url_not_accessible"}},
            {"type":"mcp_tool_use","id":"mcptoolu_6","name":"echo","server_name":"everything","input":{"message":"hi"}},
            {"type":"mcp_tool_result","tool_use_id":"mcptoolu_6","is_error":false,"content":[{"type":"text","text":"Echo: hi"}]},
            {"type":"text","text":"Done."}]}}"#
            .replace('\n', "");
        let t = parse(&[INIT, &reply]);
        assert!(t.lost.is_empty(), "{:?}", t.warnings);
        assert!(t.warnings.is_empty(), "{:?}", t.warnings);
        let names: Vec<&str> = t.tool_calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "web_fetch",
                "bash_code_execution",
                "advisor",
                "tool_search_tool_regex",
                "web_fetch",
                "echo"
            ]
        );
        assert!(
            t.tool_calls.iter().all(|c| c.server_side),
            "{:#?}",
            t.tool_calls
        );
        let output = |i: usize| t.tool_calls[i].output.as_deref().unwrap_or("");
        assert!(
            output(0).starts_with("[web_fetch_tool_result]\n")
                && output(0).contains("Example Domain")
        );
        assert!(output(1).contains(r#""stdout":"4\n""#), "{}", output(1));
        assert!(output(2).contains("Check the edge case."));
        assert!(output(3).contains("get_weather"));
        assert!(t.tool_calls[4].is_error && output(4).contains("url_not_accessible"));
        assert_eq!(output(5), "[mcp_tool_result]\nEcho: hi");
        assert_eq!(t.final_text.as_deref(), Some("Done."));
    }

    /// A block of a shape not known (a field of another type) is a warning naming its
    /// type; the line's other blocks are read and its calls are kept.
    #[test]
    fn an_unknown_block_shape_is_a_warning_naming_its_type() {
        let reply = r#"{"type":"assistant","session_id":"s1","message":{"id":"m1","model":"m","content":[{"type":"fancy_new_block","text":{"nested":true}},{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}]}}"#;
        let result = r#"{"type":"user","session_id":"s1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":{"type":"surprise","value":1}}]}}"#;
        let t = parse(&[INIT, reply, result]);
        assert!(t.lost.is_empty(), "{:?}", t.warnings);
        assert_eq!(t.tool_calls.len(), 1);
        assert_eq!(
            t.tool_calls[0].output.as_deref(),
            Some(r#"{"type":"surprise","value":1}"#)
        );
        assert_eq!(t.warnings.len(), 1, "{:?}", t.warnings);
        assert!(
            t.warnings[0].message.contains("`fancy_new_block`"),
            "{:?}",
            t.warnings
        );
    }

    /// A line whose own fields are of a shape not known is a warning naming its type, and
    /// the tool calls it holds are kept: absence assertions can not pass on it, and none
    /// ends `error` for it. A line that is no JSON at all is still lost.
    #[test]
    fn a_line_of_an_unknown_shape_keeps_its_calls() {
        let odd = r#"{"type":"assistant","session_id":"s1","isSidechain":"sometimes","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"rm -rf build"}}]}}"#;
        let t = parse(&[INIT, odd]);
        assert!(t.lost.is_empty(), "{:?}", t.warnings);
        assert_eq!(t.tool_calls.len(), 1);
        assert_eq!(t.tool_calls[0].input["command"], "rm -rf build");
        assert!(
            t.warnings[0].message.contains("`assistant` line"),
            "{:?}",
            t.warnings
        );
        let t = parse(&[INIT, "{\"type\":\"assistant\", not json"]);
        assert_eq!(t.lost.lines, 1);
    }
}
