//! opencode transcripts: `opencode run --format json` events and `opencode export` session
//! documents, as written by `opencode-ai` 1.18.33; Kilo Code CLI 7.7.7 (`kilo run --format
//! json`, an opencode fork) writes the same events.
//!
//! - **events** (one JSON per line, `{type, timestamp (ms), sessionID, part | error}`):
//!   `step_start`; `tool_use` {part {tool, callID, state {status completed|error, input,
//!   output, error, metadata {exit, output}, time {start, end}}}}, one event per call, after
//!   it finished; `text` {part.text}; `step_finish` {part {reason, tokens {input, output,
//!   reasoning, cache {read, write}}, cost}}; `error` {error {name, data {message,
//!   statusCode}}}. There is no final summary event.
//! - **export** (one JSON document): {info {id, version, model, tokens, cost}, messages
//!   [{info {role, finish, error}, parts [...]}]}, whose parts have the same shapes (`tool`,
//!   `text`, `step-finish`).
//!
//! A shell command that exited 3 is `status: completed` with `metadata.exit: 3`. A
//! permission that is "ask" is auto-rejected in `run`: the call has `status: error`, the run
//! stops and opencode exits 0 — the outcome is an error, not a success. Calls whose
//! `sessionID` is not the run's own were made by a subagent (the `task` tool).

use serde_json::Value;

use super::builder::{Builder, Parts, ToolResult};
use super::json::{EventParser, f64_of, i32_of, millis_to_rfc3339, str_of, u64_of};
use super::{Format, Outcome, Transcript, Usage};
use crate::spec::tools::Vocabulary;

/// What opencode says when `run` auto-rejects a permission.
const REJECTED: &str = "rejected permission";

/// opencode / Kilo events, and export documents fed part by part.
pub(crate) struct OpencodeParser {
    format: Format,
    b: Builder,
    session_id: Option<String>,
    agent_version: Option<String>,
    model: Option<String>,
    usage: Usage,
    steps: u32,
    final_text: Option<String>,
    last_reason: Option<String>,
    rejected: Option<String>,
    error: Option<Outcome>,
}

impl OpencodeParser {
    pub(crate) fn new(format: Format) -> Self {
        OpencodeParser {
            format,
            b: Builder::default().with_vocabulary(Vocabulary::Opencode),
            session_id: None,
            agent_version: None,
            model: None,
            usage: Usage::default(),
            steps: 0,
            final_text: None,
            last_reason: None,
            rejected: None,
            error: None,
        }
    }

    /// `main`, or the (sub)session that made a part when it is not the run's own.
    fn agent_of(&mut self, session: Option<&str>) -> Option<String> {
        let session = session?;
        match &self.session_id {
            None => {
                self.session_id = Some(session.to_owned());
                None
            }
            Some(own) if own == session => None,
            Some(_) => Some(session.to_owned()),
        }
    }

    fn part(&mut self, part: &Value, session: Option<&str>) {
        let agent = self.agent_of(session.or_else(|| str_of(part, "sessionID")));
        match str_of(part, "type").unwrap_or("") {
            "tool" => self.tool(part, agent.as_deref()),
            "text" if agent.is_none() => {
                if let Some(text) = str_of(part, "text").filter(|t| !t.trim().is_empty()) {
                    self.final_text = Some(text.to_owned());
                }
            }
            "step-finish" => {
                self.steps = self.steps.saturating_add(1);
                if agent.is_none() {
                    self.last_reason = str_of(part, "reason").map(str::to_owned);
                }
                if let Some(tokens) = part.get("tokens") {
                    let cache = tokens.get("cache").unwrap_or(&Value::Null);
                    self.usage.add(&Usage {
                        // Reasoning tokens are output the model was billed for.
                        input_tokens: u64_of(tokens, "input"),
                        output_tokens: u64_of(tokens, "output")
                            .saturating_add(u64_of(tokens, "reasoning")),
                        cache_creation_input_tokens: u64_of(cache, "write"),
                        cache_read_input_tokens: u64_of(cache, "read"),
                        cost_usd: f64_of(part, "cost"),
                        ..Usage::default()
                    });
                }
            }
            _ => {}
        }
    }

    fn tool(&mut self, part: &Value, agent: Option<&str>) {
        let Some(id) = str_of(part, "callID").or_else(|| str_of(part, "id")) else {
            return;
        };
        let name = str_of(part, "tool").unwrap_or("unknown");
        let null = Value::Null;
        let state = part.get("state").unwrap_or(&null);
        let ts = state
            .get("time")
            .and_then(|t| millis_to_rfc3339(t.get("start")));
        let input = state.get("input").cloned().unwrap_or(Value::Null);
        self.b.call(id, name, || input, agent, ts);
        if agent.is_none() {
            self.final_text = None;
        }
        let status = str_of(state, "status").unwrap_or("");
        if !matches!(status, "completed" | "error") {
            return;
        }
        let metadata = state.get("metadata").unwrap_or(&null);
        let exit_code = i32_of(metadata, "exit");
        let output = if status == "error" {
            str_of(state, "error").unwrap_or("").to_owned()
        } else {
            str_of(state, "output")
                .or_else(|| str_of(metadata, "output"))
                .unwrap_or("")
                .to_owned()
        };
        if status == "error" && output.contains(REJECTED) && self.rejected.is_none() {
            self.rejected = Some(format!("{name} call auto-rejected: {output}"));
        }
        // An "ask" permission is auto-rejected in `run`: the call never executed.
        let blocked = (status == "error" && output.contains(REJECTED))
            .then(|| crate::shared::text::truncate(&output, 200));
        self.b.result(
            id,
            ToolResult {
                output,
                is_error: status == "error" || exit_code.is_some_and(|c| c != 0),
                exit_code,
                blocked,
                ..ToolResult::default()
            },
        );
    }

    fn error(&mut self, error: &Value) {
        let null = Value::Null;
        let data = error.get("data").unwrap_or(&null);
        let message = str_of(data, "message")
            .or_else(|| str_of(error, "message"))
            .or_else(|| str_of(error, "name"))
            .unwrap_or("error")
            .to_owned();
        let http_status = data
            .get("statusCode")
            .and_then(Value::as_u64)
            .and_then(|s| u16::try_from(s).ok());
        self.error = Some(
            if str_of(error, "name") == Some("APIError") || http_status.is_some() {
                Outcome::ApiError {
                    message,
                    http_status,
                }
            } else {
                Outcome::Error { message }
            },
        );
    }

    fn handle(&mut self, event: &Value) {
        let session = str_of(event, "sessionID");
        match str_of(event, "type").unwrap_or("") {
            "error" => {
                if let Some(e) = event.get("error") {
                    self.error(e);
                }
            }
            _ => {
                if let Some(part) = event.get("part") {
                    self.part(part, session);
                }
            }
        }
    }

    fn into_transcript(self) -> Transcript {
        let outcome = if let Some(e) = self.error {
            e
        } else if let Some(message) = self.rejected {
            Outcome::Error { message }
        } else {
            match self.last_reason.as_deref() {
                Some("stop" | "end_turn") => Outcome::Completed,
                Some("length") => Outcome::Error {
                    message: "the model's answer was cut at its output limit".into(),
                },
                Some(_) => Outcome::Incomplete {
                    message: "the output ends after tool calls, without the model's answer".into(),
                },
                None => Outcome::Incomplete {
                    message:
                        "the output ends without a finished step (the agent was killed or crashed)"
                            .into(),
                },
            }
        };
        let mut usage = self.usage;
        if self.steps > 0 {
            usage.turns = Some(self.steps);
        }
        self.b.into_transcript(Parts {
            format: self.format,
            session_id: self.session_id,
            agent_version: self.agent_version,
            model: self.model,
            final_text: self.final_text,
            usage,
            outcome,
            runs: 1,
        })
    }
}

impl EventParser for OpencodeParser {
    fn calls(&self) -> &[super::ToolCall] {
        self.b.calls()
    }

    fn builder(&mut self) -> &mut Builder {
        &mut self.b
    }

    fn event(&mut self, _line_no: u64, event: &Value) {
        self.handle(event);
    }

    fn finish(self) -> Transcript {
        self.into_transcript()
    }
}

/// Whether a JSON document is an `opencode export` session.
pub(crate) fn is_export(doc: &Value) -> bool {
    doc.get("info").is_some_and(|i| i.get("id").is_some())
        && doc.get("messages").is_some_and(Value::is_array)
}

/// An `opencode export` document (1.18.33).
pub(crate) fn parse_export(doc: &Value) -> Transcript {
    let mut p = OpencodeParser::new(Format::OpencodeSession);
    let null = Value::Null;
    let info = doc.get("info").unwrap_or(&null);
    p.session_id = str_of(info, "id").map(str::to_owned);
    p.agent_version = str_of(info, "version").map(|v| format!("opencode {v}"));
    p.model = info
        .get("model")
        .and_then(|m| str_of(m, "id"))
        .map(str::to_owned);
    for message in doc
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let minfo = message.get("info").unwrap_or(&null);
        if p.model.is_none() {
            p.model = str_of(minfo, "modelID").map(str::to_owned);
        }
        // The prompt's text is not an answer.
        if str_of(minfo, "role") == Some("user") {
            continue;
        }
        let session = str_of(minfo, "sessionID");
        for part in message
            .get("parts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            p.part(part, session);
        }
        if let Some(error) = minfo.get("error") {
            p.error(error);
        }
    }
    p.into_transcript()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(lines: &[&str]) -> Transcript {
        let mut p = OpencodeParser::new(Format::OpencodeJson);
        for line in lines {
            let event: Value = serde_json::from_str(line).unwrap();
            p.event(0, &event);
        }
        p.into_transcript()
    }

    const STOP: &str = r#"{"type":"step_finish","sessionID":"s","part":{"type":"step-finish","reason":"stop","tokens":{"input":1,"output":2,"reasoning":3,"cache":{"read":4,"write":5}},"cost":0.5}}"#;

    #[test]
    fn a_tool_error_the_model_answered_is_no_failed_run() {
        let t = parse(&[
            r#"{"type":"tool_use","sessionID":"s","part":{"type":"tool","tool":"read","callID":"c1","state":{"status":"error","input":{"filePath":"/nope"},"error":"File not found: /nope"}}}"#,
            r#"{"type":"text","sessionID":"s","part":{"type":"text","text":"It does not exist."}}"#,
            STOP,
        ]);
        assert!(t.outcome.is_completed(), "{:?}", t.outcome);
        let call = &t.tool_calls[0];
        assert!(call.is_error);
        assert_eq!(
            (call.name.as_str(), call.canonical.as_str()),
            ("read", "Read")
        );
        assert_eq!(call.params()["file_path"], "/nope");
        assert_eq!(call.input["filePath"], "/nope", "the raw input stays");
        assert_eq!(t.final_text.as_deref(), Some("It does not exist."));
        assert_eq!(
            (
                t.usage.input_tokens,
                t.usage.output_tokens,
                t.usage.cache_read_input_tokens
            ),
            (1, 5, 4),
            "reasoning tokens are output"
        );
        assert_eq!(t.usage.cost_usd, Some(0.5));
    }

    #[test]
    fn subagent_calls_and_a_run_cut_after_tool_calls() {
        let t = parse(&[
            r#"{"type":"tool_use","sessionID":"s","part":{"type":"tool","tool":"task","callID":"t1","state":{"status":"completed","input":{"prompt":"go"},"output":"ok"}}}"#,
            r#"{"type":"tool_use","sessionID":"child","part":{"type":"tool","tool":"bash","callID":"b1","state":{"status":"completed","input":{"command":"ls"},"output":"","metadata":{"exit":0}}}}"#,
            r#"{"type":"step_finish","sessionID":"s","part":{"type":"step-finish","reason":"tool-calls"}}"#,
        ]);
        assert!(t.tool_calls[0].is_main());
        assert_eq!(t.tool_calls[1].agent, "child");
        assert!(
            matches!(t.outcome, Outcome::Incomplete { .. }),
            "{:?}",
            t.outcome
        );
    }
}
