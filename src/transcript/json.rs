//! What the parsers of JSON-event formats share: they get each line already parsed
//! ([`EventParser`], through [`Events`], which turns a line that is not JSON into a lost-line
//! warning), and small readers of `serde_json::Value` fields (strings, numbers,
//! epoch-millisecond times, content parts).
//!
//! Claude Code's parser reads its lines itself (borrowed, without building a `Value`): its
//! logs are the largest.

use serde_json::Value;

use super::builder::Builder;
use super::{LineParser, ToolCall, Transcript};

/// A parser of a format whose lines are JSON events.
pub(crate) trait EventParser {
    /// Consumes one event, from 1-based line `line_no`.
    fn event(&mut self, line_no: u64, event: &Value);
    /// The builder the parser records calls and warnings in.
    fn builder(&mut self) -> &mut Builder;
    /// The tool calls recorded so far.
    fn calls(&self) -> &[ToolCall];
    /// Finishes the transcript.
    fn finish(self) -> Transcript;
}

/// An [`EventParser`] as a [`LineParser`]: each line is parsed once here; a line that is not
/// JSON is a lost line (it may have held a tool call).
pub(crate) struct Events<P>(pub(crate) P);

impl<P: EventParser> LineParser for Events<P> {
    fn line(&mut self, line_no: u64, text: &str) {
        match serde_json::from_str::<Value>(text) {
            Ok(event) => self.0.event(line_no, &event),
            Err(err) => self
                .0
                .builder()
                .warn_lost(line_no, format!("invalid JSON: {err}")),
        }
    }

    fn calls(&self) -> &[ToolCall] {
        self.0.calls()
    }

    fn finish(self: Box<Self>) -> Transcript {
        let Events(parser) = *self;
        parser.finish()
    }
}

/// A string field.
pub(crate) fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// A non-negative integer field, 0 when absent or not one.
pub(crate) fn u64_of(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// A number field as `f64`, when present.
pub(crate) fn f64_of(v: &Value, key: &str) -> Option<f64> {
    v.get(key).and_then(Value::as_f64)
}

/// An integer field that fits an exit code.
pub(crate) fn i32_of(v: &Value, key: &str) -> Option<i32> {
    v.get(key)
        .and_then(Value::as_i64)
        .and_then(|c| i32::try_from(c).ok())
}

/// A time given in milliseconds since the epoch, as RFC 3339.
pub(crate) fn millis_to_rfc3339(v: Option<&Value>) -> Option<String> {
    let v = v?;
    // Whole milliseconds are exact; a float division would round 8.610 to 8.609.
    match v.as_u64() {
        Some(ms) => {
            let secs = ms / 1000;
            let text = super::epoch_seconds_to_rfc3339(secs as f64)?;
            // `…:08.000Z` → `…:08.610Z`.
            let (head, _) = text.rsplit_once('.')?;
            Some(format!("{head}.{:03}Z", ms % 1000))
        }
        None => super::epoch_seconds_to_rfc3339(v.as_f64()? / 1000.0),
    }
}

/// Tool-result text: a string, or the `text` of an array of `{type: text, text}` parts
/// (other parts as `[type]`), joined with line breaks.
pub(crate) fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .map(|p| match (str_of(p, "type"), str_of(p, "text")) {
                (_, Some(text)) => text.to_owned(),
                (Some(kind), None) => format!("[{kind}]"),
                (None, None) => p.as_str().map_or_else(|| p.to_string(), str::to_owned),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

/// The HTTP status at the start of an SDK error message (`500 fake upstream failure`).
pub(crate) fn leading_http_status(message: &str) -> Option<u16> {
    let digits: String = message
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let status: u16 = digits.parse().ok()?;
    (digits.len() == 3 && (100..600).contains(&status)).then_some(status)
}
