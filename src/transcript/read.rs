//! Reading transcripts: files and readers (format detected from the content, JSON lines,
//! a JSON array, a pretty-printed document, Aider's Markdown), and [`StreamParser`] for
//! output whose format is known. Lines go to the format's parser; what can not be read
//! becomes warnings (see the module docs of [`super`]).

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use super::detect::{Detected, compatible, detect_line, new_parser};
use super::{
    Format, LineParser, Lost, Outcome, ToolCall, Transcript, TranscriptError, Usage, WarningLog,
    aider, auggie, claude, copilot, gemini, kiro, opencode,
};

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
                skills: None,
                skills_shown: None,
                mcp_params: None,
                turns: Vec::new(),
                turns_left_out: 0,
                unclaimed_execs: Vec::new(),
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
/// Kiro CLI's stores are read whole: its `data.sqlite3` (the most recent conversation), a
/// session's metadata file (its log beside it is read), a session log (with the metadata
/// beside it, when there is one).
///
/// # Errors
/// When the file can not be read, is not a regular file, or matches no known format.
pub fn parse_file(path: &Path) -> Result<Transcript, TranscriptError> {
    let io_err = |source| TranscriptError::Io {
        path: path.to_owned(),
        source,
    };
    if let Some(store) = kiro::parse_store(path) {
        return store;
    }
    // A FIFO or a device (a link to /dev/zero) would block or never end: refused.
    let file = crate::shared::files::open_regular_file(path).map_err(io_err)?;
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
    kiro::add_metadata(path, &mut transcript);
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
    if reader
        .fill_buf()?
        .trim_ascii_start()
        .starts_with(aider::RUN_HEADER.as_bytes())
    {
        return parse_aider(reader);
    }
    if reader.fill_buf()?.starts_with(kiro::sqlite::MAGIC) {
        return Err(ReadError::Unknown(
            "a SQLite database: name it as a file (a Kiro CLI `data.sqlite3` is read from its path)"
                .into(),
        ));
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
pub(super) const MAX_PENDING_LINES: usize = 1000;
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
                 Gemini CLI, Qwen Code, Copilot CLI, opencode, pi, Cursor CLI, Kiro CLI)"
                    .into(),
            )),
        }
    }
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
    if kiro::session::is_metadata(&value) || kiro::kas::is_metadata(&value) {
        return Err(ReadError::Unknown(
            "a Kiro CLI session's metadata file: read it by its path, with its log beside it \
             (`<id>.jsonl`, `messages.jsonl`), or name the log"
                .into(),
        ));
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
