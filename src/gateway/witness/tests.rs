//! The stream checked against the wire: real recorded runs (Claude Code, Codex, Gemini
//! CLI: a kept cassette and the transcript of the same run) are witnessed; each kind of
//! tampering is found and names the call.

use std::path::Path;

use serde_json::json;

use super::super::cassette::Cassette;
use super::super::protocol::Protocol;
use super::super::wire::{ReplyCalls, Wire, WireCall, read_request};
use super::*;
use crate::transcript::ToolCall;

/// The wire of a kept cassette fixture (`tests/data/cassettes/<agent>`) and the
/// transcript its results recorded for the same run.
fn recorded(agent: &str) -> (Wire, Transcript) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/cassettes")
        .join(agent);
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("recorded.json")).unwrap()).unwrap();
    let test = &results["tests"][0];
    let transcript: Transcript = serde_json::from_value(test["transcript"].clone()).unwrap();
    let file = test["model_traffic"]["cassette"]["file"].as_str().unwrap();
    let cassette = Cassette::from_bytes(&std::fs::read(dir.join(file)).unwrap(), file).unwrap();
    let mut wire = Wire::default();
    for (n, exchange) in cassette.exchanges.iter().enumerate() {
        let path = exchange.path.split('?').next().unwrap();
        let Some(protocol) = Protocol::of_path(path) else {
            continue;
        };
        let body = exchange.request.to_string();
        wire.sent(n as u32 + 1, read_request(protocol, body.as_bytes()));
        let sse = exchange
            .content_type
            .as_deref()
            .is_some_and(|t| t.starts_with("text/event-stream"));
        let mut reader = ReplyCalls::new(protocol, sse);
        let mut calls = reader.push(&exchange.reply);
        calls.extend(reader.finish());
        wire.served(calls);
    }
    (wire, transcript)
}

#[test]
fn real_recorded_runs_are_witnessed_on_every_protocol_they_use() {
    for agent in ["claude", "codex", "gemini", "claude-mcp"] {
        let (wire, transcript) = recorded(agent);
        assert!(!transcript.tool_calls.is_empty(), "{agent}");
        let witness = check(&wire, &transcript);
        assert_eq!(
            witness.status,
            WitnessStatus::Witnessed,
            "{agent}: {witness:#?}"
        );
        assert_eq!(
            witness.calls as usize,
            transcript.tool_calls.len(),
            "{agent}"
        );
        assert!(witness.results >= 1, "{agent}: {witness:#?}");
    }
}

fn tampered(wire: &Wire, transcript: &Transcript) -> Vec<String> {
    let witness = check(wire, transcript);
    assert_eq!(witness.status, WitnessStatus::Tampered, "{witness:#?}");
    assert!(
        witness
            .tampered()
            .unwrap()
            .starts_with("the agent's own record of the run (its stream) disagrees")
    );
    witness.findings
}

/// Gemini CLI 0.61.0's wire and stream of a `$(…)` its shell refused: the model is told
/// "Command injection detected: …", the stream shows "Blocked: …" with status success.
fn gemini_guarded(stream_output: &str, told: &str) -> (Wire, Transcript) {
    let input = json!({"command": "echo $((6*7))"});
    let mut wire = Wire::default();
    wire.served(vec![WireCall {
        id: None,
        name: "run_shell_command".into(),
        input: input.clone(),
    }]);
    let body = json!({"contents": [
        {"role": "user", "parts": [{"text": "compute"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "run_shell_command", "args": input}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "run_shell_command", "response": {"output": told}}}]}
    ]});
    wire.sent(
        2,
        read_request(Protocol::Gemini, body.to_string().as_bytes()),
    );
    let lines = [
        r#"{"type":"init","timestamp":"2026-11-26T00:43:18.123Z","session_id":"g","model":"m"}"#.to_owned(),
        r#"{"type":"tool_use","timestamp":"2026-11-26T00:43:18.172Z","tool_name":"run_shell_command","tool_id":"run_shell_command-1","parameters":{"command":"echo $((6*7))"}}"#.to_owned(),
        json!({"type": "tool_result", "timestamp": "2026-11-26T00:43:18.254Z", "tool_id": "run_shell_command-1", "status": "success", "output": stream_output}).to_string(),
        r#"{"type":"result","timestamp":"2026-11-26T00:43:18.300Z","status":"success","stats":{"total_tokens":1,"input_tokens":1,"output_tokens":0}}"#.to_owned(),
    ];
    let transcript = crate::transcript::parse_reader(lines.join("\n").as_bytes()).unwrap();
    (wire, transcript)
}

/// An agent's own guard is not tampering: Gemini CLI's shell blocks `$((…))` and tells
/// its model so in other words than its stream shows; the call is blocked (never ran),
/// the run witnessed, and the difference noted. A stream that claims a block where the
/// model got the command's real output is still tampering.
#[test]
fn an_agents_own_guard_is_blocked_and_noted_not_tampered() {
    let told = "Command injection detected: command substitution syntax ($(), backticks, <() or >()) found in command arguments. On PowerShell, @() array subexpressions and $() subexpressions are also blocked. This is a security risk and the command was blocked.";
    let (wire, transcript) = gemini_guarded(
        "Blocked: command substitution detected in shell command.",
        told,
    );
    let call = &transcript.tool_calls[0];
    assert!(
        matches!(call.execution(), crate::transcript::Execution::Blocked(_)),
        "{call:#?}"
    );
    let witness = check(&wire, &transcript);
    assert_eq!(witness.status, WitnessStatus::Witnessed, "{witness:#?}");
    assert_eq!(witness.notes.len(), 1, "{witness:#?}");
    assert!(
        witness.notes[0].contains("blocked by the agent's own guard")
            && witness.notes[0].contains("Command injection detected"),
        "{:?}",
        witness.notes
    );
    assert!(
        witness
            .phrase()
            .contains("1 blocked by the agent's own guard")
    );

    let (wire, transcript) = gemini_guarded(
        "Blocked: command substitution detected in shell command.",
        "42",
    );
    let findings = tampered(&wire, &transcript);
    assert!(
        findings[0].contains("is not the one its model got"),
        "{findings:?}"
    );
}

/// A result the agent's tools wrote into its stream (a failing script claiming success):
/// the exit code, the error flag and the output each disagree with what the model got.
#[test]
fn a_forged_result_is_found() {
    for agent in ["claude", "codex", "gemini"] {
        let (wire, mut transcript) = recorded(agent);
        let call = &mut transcript.tool_calls[0];
        call.output = Some("all 12 tests passed".into());
        let findings = tampered(&wire, &transcript);
        assert!(
            findings[0].contains("is not the one its model got")
                && findings[0].contains("all 12 tests passed"),
            "{agent}: {findings:?}"
        );
    }
    let (wire, mut transcript) = recorded("claude");
    transcript.tool_calls[0].exit_code = Some(3);
    transcript.tool_calls[0].is_error = true;
    let findings = tampered(&wire, &transcript);
    assert!(
        findings[0].contains("the stream says it failed"),
        "{findings:?}"
    );
}

/// Events invented in the stream: a call of any tool the model never asked for.
#[test]
fn an_invented_call_is_found() {
    for agent in ["claude", "codex", "gemini"] {
        let (wire, mut transcript) = recorded(agent);
        let mut invented = transcript.tool_calls[0].clone();
        invented.id = "toolu_invented".into();
        invented.input = json!({"command": "pytest -q"});
        invented.params = None;
        invented.output = Some("5 passed".into());
        transcript.tool_calls.push(invented);
        let findings = tampered(&wire, &transcript);
        assert!(
            findings
                .iter()
                .any(|f| f.contains("never asked for") && f.contains("pytest -q")),
            "{agent}: {findings:?}"
        );
        let (wire, mut transcript) = recorded(agent);
        transcript.tool_calls.push(ToolCall::new(
            "Edit",
            json!({"file_path": "/w/src/app.py", "old_string": "a", "new_string": "b"}),
        ));
        assert!(!tampered(&wire, &transcript).is_empty(), "{agent}");
    }
}

/// A call the agent answered that its stream does not show (a stream that dropped it).
#[test]
fn a_hidden_call_is_found() {
    let (wire, mut transcript) = recorded("claude");
    transcript.tool_calls.clear();
    let findings = tampered(&wire, &transcript);
    assert!(
        findings[0].contains("does not show the call"),
        "{findings:?}"
    );
}

/// One id for a Read and then a `Bash rm -f` (on the wire, and in the stream): neither
/// call is dropped, and both are findings.
#[test]
fn one_id_for_two_calls_is_found() {
    let mut wire = Wire::default();
    wire.served(vec![WireCall {
        id: Some("toolu_1".into()),
        name: "Read".into(),
        input: json!({"file_path": "/w/a"}),
    }]);
    wire.served(vec![WireCall {
        id: Some("toolu_1".into()),
        name: "Bash".into(),
        input: json!({"command": "rm -f a"}),
    }]);
    let transcript = Transcript::of_calls(
        vec![
            ToolCall {
                id: "toolu_1".into(),
                ..ToolCall::new("Read", json!({"file_path": "/w/a"}))
            },
            ToolCall {
                id: "toolu_1".into(),
                ..ToolCall::new("Bash", json!({"command": "rm -f a"}))
            },
        ],
        None,
    );
    let findings = tampered(&wire, &transcript);
    assert!(
        findings
            .iter()
            .any(|f| f.contains("the model used the id `toolu_1` for two calls")),
        "{findings:?}"
    );
    assert!(
        findings
            .iter()
            .any(|f| f.contains("the agent's stream uses the id `toolu_1` for two calls")),
        "{findings:?}"
    );
}

#[test]
fn the_phrase_says_how_far_the_transcript_is_witnessed() {
    let (wire, transcript) = recorded("claude");
    let phrase = check(&wire, &transcript).phrase();
    assert!(
        phrase.starts_with("witnessed by the model gateway: 1 tool call"),
        "{phrase}"
    );
    assert!(
        Witness::unwitnessed("the run went direct")
            .phrase()
            .starts_with("unwitnessed: the run went direct")
    );
}
