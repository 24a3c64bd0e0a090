//! Calls an agent's own guard refused before any process started, which its stream never
//! shows: taken from the wire into the transcript as blocked, and noted.
//!
//! Codex CLI 0.169's exec events (`codex exec --json`) show a shell call only as the
//! `command_execution` item of a process that started. Its own checks that refuse a command
//! before one does — the built-in `rm -f` check, which holds even under
//! `--dangerously-bypass-approvals-and-sandbox` ("rm -f style commands are not permitted.
//! Use a safer approach"), an exec-policy rule's `forbidden` — leave no item at all, while
//! the model is told `exec_command failed: CreateProcess { message: "Rejected(\"`…`
//! rejected: …\")" }` (Codex's `CreateProcess` error, as 0.157–0.169 word it). Without this
//! the witness would take the missing call for a hidden one, and call an honest run
//! `tampered`.
//!
//! Only that exact opening counts: a command that ran is answered with Codex's own wrapper
//! ("Chunk ID: …", "Process exited with code N"), so no output a command prints can pass for
//! a refusal. A call taken from the wire is an attempt: guardrails (`not_ran`, `called:
//! false`) count it, `ran` does not.

use serde_json::Value;

use super::super::wire::{Wire, describe};
use super::find;
use crate::spec::tools::{canonical_name, canonical_params};
use crate::transcript::{Format, ToolCall, Transcript};

/// What Codex tells its model when it refused a shell call before a process started.
const CODEX_REJECTED: &str = "exec_command failed: CreateProcess { message: \"Rejected(";

/// The shell tools Codex's model calls (as in [`super::records`]).
const CODEX_SHELL: &[&str] = &["exec_command", "shell", "shell_command", "local_shell"];

/// Adds to `transcript` each call the model asked for that its stream does not show and
/// that the agent's own guard refused before a process started (see the module docs);
/// returns a note for each, naming the call and the refusal.
pub fn recover(wire: &Wire, transcript: &mut Transcript) -> Vec<String> {
    if transcript.format != Format::CodexExecJson {
        return Vec::new();
    }
    let vocabulary = transcript.format.vocabulary();
    let mut matched = vec![false; wire.calls.len()];
    for call in &transcript.tool_calls {
        if let Some(index) = find(wire, &matched, call, vocabulary) {
            matched[index] = true;
        }
    }
    let mut notes = Vec::new();
    for (index, wired) in wire.calls.iter().enumerate() {
        if matched[index] || !CODEX_SHELL.contains(&wired.name.as_str()) {
            continue;
        }
        let Some(sent) = wire.result(index) else {
            continue;
        };
        let Some(reason) = codex_refusal(&sent.text) else {
            continue;
        };
        let command = wired
            .input
            .get("cmd")
            .or_else(|| wired.input.get("command"))
            .cloned()
            .unwrap_or(Value::Null);
        let name = "command_execution";
        let input = serde_json::json!({ "command": command });
        let id = wired.id.clone().unwrap_or_else(|| format!("wire-{index}"));
        notes.push(format!(
            "{} was refused by the agent's own guard before a process started ({reason}); its stream shows no such call, so it is taken from the model traffic",
            describe(&wired.name, &wired.input)
        ));
        transcript.tool_calls.push(ToolCall {
            id,
            name: name.into(),
            canonical: canonical_name(vocabulary, name).into_owned(),
            params: canonical_params(vocabulary, name, &input),
            input,
            output: Some(sent.text.clone()),
            is_error: true,
            blocked: Some(format!("refused before it ran: {reason}")),
            ..ToolCall::new(name, Value::Null)
        });
    }
    notes
}

/// The reason in Codex's refusal `text` (`rm -f style commands are not permitted. Use a
/// safer approach`, cut to 200 characters), when `text` is one.
fn codex_refusal(text: &str) -> Option<String> {
    let rest = text.trim_start().strip_prefix(CODEX_REJECTED)?;
    let reason = rest.split_once("rejected: ").map_or(rest, |(_, r)| r);
    let reason = reason.split("\\\")").next().unwrap_or(reason).trim();
    Some(crate::shared::text::truncate(reason, 200))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gateway::protocol::Protocol;
    use crate::gateway::wire::{WireCall, read_request};

    const REFUSED: &str = r#"exec_command failed: CreateProcess { message: "Rejected(\"`/bin/bash -lc 'rm -rf build'` rejected: rm -f style commands are not permitted. Use a safer approach\")" }"#;

    /// A wire where the model asked for `rm -rf build` and Codex answered `result`.
    fn wire_with(result: &str) -> Wire {
        let mut wire = Wire::default();
        wire.served(vec![WireCall {
            id: Some("call_00_0".into()),
            name: "exec_command".into(),
            input: serde_json::json!({"cmd": "rm -rf build"}),
        }]);
        let body = serde_json::json!({"input": [
            {"type": "function_call", "call_id": "call_00_0", "name": "exec_command", "arguments": "{\"cmd\":\"rm -rf build\"}"},
            {"type": "function_call_output", "call_id": "call_00_0", "output": result}
        ]});
        wire.sent(
            2,
            read_request(Protocol::Responses, body.to_string().as_bytes()),
        );
        wire
    }

    fn transcript_of(lines: &[&str]) -> Transcript {
        crate::transcript::parse_reader(lines.join("\n").as_bytes()).unwrap()
    }

    /// Codex 0.169's exec events of a run whose one call was refused: none shows it.
    fn codex_transcript() -> Transcript {
        transcript_of(&[
            r#"{"type":"thread.started","thread_id":"t"}"#,
            r#"{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"The shell refused it."}}"#,
            r#"{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}"#,
        ])
    }

    /// Codex's `rm -f` check (0.169, verbatim from a run): the call is taken from the wire
    /// as blocked with Codex's reason, and the witness then finds it, with nothing hidden.
    #[test]
    fn a_codex_call_refused_before_a_process_is_taken_from_the_wire_as_blocked() {
        let wire = wire_with(REFUSED);
        let mut transcript = codex_transcript();
        assert_eq!(transcript.format, Format::CodexExecJson);
        let notes = recover(&wire, &mut transcript);
        assert_eq!(notes.len(), 1, "{notes:?}");
        let call = &transcript.tool_calls[0];
        assert_eq!(call.canonical, "Bash");
        assert_eq!(call.input["command"], "rm -rf build");
        assert_eq!(
            call.blocked.as_deref(),
            Some(
                "refused before it ran: rm -f style commands are not permitted. Use a safer approach"
            )
        );
        let witness = super::super::check(&wire, &transcript);
        assert_eq!(
            witness.status,
            super::super::WitnessStatus::Witnessed,
            "{witness:?}"
        );
    }

    /// Output a command printed is never a refusal: a call that ran and is missing from
    /// the stream stays hidden (tampered), whatever its output says.
    #[test]
    fn a_missing_call_whose_output_only_mentions_a_refusal_stays_hidden() {
        let ran = format!("Chunk ID: 1\nProcess exited with code 0\nOutput:\n{REFUSED}");
        let wire = wire_with(&ran);
        let mut transcript = codex_transcript();
        assert!(recover(&wire, &mut transcript).is_empty());
        assert!(transcript.tool_calls.is_empty());
        let witness = super::super::check(&wire, &transcript);
        assert_eq!(witness.status, super::super::WitnessStatus::Tampered);
    }

    /// Another agent's stream is left alone: only Codex's exec events leave such calls out.
    #[test]
    fn only_codex_exec_events_get_calls_from_the_wire() {
        let wire = wire_with(REFUSED);
        let mut transcript = transcript_of(&[
            r#"{"type":"system","subtype":"init","session_id":"s1","model":"m","claude_code_version":"2.1.328"}"#,
            r#"{"type":"result","subtype":"success","is_error":false,"result":"Done.","num_turns":1,"session_id":"s1"}"#,
        ]);
        assert_eq!(transcript.format, Format::ClaudeStreamJson);
        assert!(recover(&wire, &mut transcript).is_empty());
    }
}
