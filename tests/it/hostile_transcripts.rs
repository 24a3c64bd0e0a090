//! Hostile and broken transcripts given to `aptitude analyze` / `aptitude transcript`
//! (issue #10): no hang, no false pass, the same verdict however the path is spelt.
//!
//! Each test builds its transcript in a fresh temp dir and runs the real binary there.

use std::path::Path;
use std::time::Duration;

use crate::support::cli::{Aptitude, Output};
use crate::support::data;

/// A guard against a hang turning into a stuck test run: a hang fails the test.
const HANG_LIMIT: Duration = Duration::from_secs(60);

fn aptitude(dir: &Path, args: &[&str]) -> Output {
    Aptitude::new()
        .current_dir(dir)
        .args(args)
        .limit(HANG_LIMIT)
        .output()
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

/// A Claude Code 2.0.x session whose main agent delegates to a subagent (`agent-a1.jsonl`
/// beside it, same `sessionId`) that reads `.env`.
fn session_with_subagent(dir: &Path) {
    write(
        dir,
        "session.jsonl",
        &[
            r#"{"type":"user","sessionId":"sess","uuid":"u1","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"go"}}"#,
            r#"{"type":"assistant","sessionId":"sess","uuid":"u2","timestamp":"2026-01-01T00:00:01.000Z","message":{"id":"m1","content":[{"type":"tool_use","id":"task1","name":"Task","input":{"prompt":"look"}}]}}"#,
            r#"{"type":"user","sessionId":"sess","uuid":"u3","timestamp":"2026-01-01T00:00:09.000Z","message":{"content":[{"type":"tool_result","tool_use_id":"task1","content":"done"}]}}"#,
            r#"{"type":"assistant","sessionId":"sess","uuid":"u4","timestamp":"2026-01-01T00:00:10.000Z","message":{"id":"m2","content":[{"type":"text","text":"Done."}]}}"#,
        ]
        .join("\n"),
    );
    write(
        dir,
        "agent-a1.jsonl",
        r#"{"type":"assistant","isSidechain":true,"agentId":"a1","sessionId":"sess","uuid":"s1","timestamp":"2026-01-01T00:00:05.000Z","message":{"id":"sm1","content":[{"type":"tool_use","id":"r1","name":"Read","input":{"file_path":"/p/.env"}}]}}"#,
    );
    write(
        dir,
        "t.aptitude.yaml",
        "name: T\nprompt: p\nassertions:\n  - tool: Read\n    called: false\n    params:\n      file_path: \"*.env\"\n",
    );
}

#[test]
fn subagent_files_are_merged_however_the_session_path_is_spelt() {
    // Item 3: with a bare file name the sibling agent-*.jsonl files were not merged.
    let dir = tempfile::tempdir().unwrap();
    session_with_subagent(dir.path());
    for spelling in ["session.jsonl", "./session.jsonl"] {
        let out = aptitude(dir.path(), &["analyze", "t.aptitude.yaml", spelling]);
        assert_eq!(
            out.code, 1,
            "{spelling}: the subagent read .env\n{}",
            out.stdout
        );
        assert!(
            out.stdout
                .contains("Read file_path=\"/p/.env\" [subagent a1]"),
            "{spelling}\n{}",
            out.stdout
        );
    }
}

#[test]
fn a_fifo_or_device_named_like_a_subagent_file_is_skipped_not_waited_on() {
    // Item 1: `agent-x.jsonl` as a FIFO blocked `transcript` and `analyze` for good.
    let dir = tempfile::tempdir().unwrap();
    session_with_subagent(dir.path());
    nix::unistd::mkfifo(
        &dir.path().join("agent-fifo.jsonl"),
        nix::sys::stat::Mode::from_bits_truncate(0o600),
    )
    .unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("agent-zero.jsonl")).unwrap();
    let out = aptitude(dir.path(), &["transcript", "session.jsonl"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("[subagent a1]"), "{}", out.stdout);
    assert!(
        out.stderr.contains(
            "subagent file agent-fifo.jsonl skipped: it is a FIFO (named pipe), not a regular file"
        ),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(
            "subagent file agent-zero.jsonl skipped: it is a character device, not a regular file"
        ),
        "{}",
        out.stderr
    );
    let out = aptitude(dir.path(), &["analyze", "t.aptitude.yaml", "session.jsonl"]);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
}

#[test]
fn a_fifo_or_device_given_as_the_transcript_is_refused_not_waited_on() {
    let dir = tempfile::tempdir().unwrap();
    nix::unistd::mkfifo(
        &dir.path().join("fifo.jsonl"),
        nix::sys::stat::Mode::from_bits_truncate(0o600),
    )
    .unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero.jsonl")).unwrap();
    for (name, kind) in [
        ("fifo.jsonl", "a FIFO (named pipe)"),
        ("zero.jsonl", "a character device"),
    ] {
        let out = aptitude(dir.path(), &["transcript", name]);
        assert_eq!(out.code, 2, "{name}\n{}", out.stderr);
        assert!(
            out.stderr
                .contains(&format!("it is {kind}, not a regular file")),
            "{}",
            out.stderr
        );
    }
}

const INIT: &str =
    r#"{"type":"system","subtype":"init","session_id":"s1","claude_code_version":"2.1.328"}"#;
const RESULT: &str = r#"{"type":"result","subtype":"success","is_error":false,"result":"ok","num_turns":1,"session_id":"s1","usage":{"input_tokens":7,"output_tokens":3}}"#;

fn bash(id: &str, command: &str, result: &str, is_error: bool) -> String {
    format!(
        "{}\n{}",
        format_args!(
            r#"{{"type":"assistant","session_id":"s1","message":{{"id":"m-{id}","content":[{{"type":"tool_use","id":"{id}","name":"Bash","input":{{"command":"{command}"}}}}]}}}}"#
        ),
        format_args!(
            r#"{{"type":"user","session_id":"s1","message":{{"content":[{{"type":"tool_result","tool_use_id":"{id}","content":"{result}","is_error":{is_error}}}]}}}}"#
        )
    )
}

fn analyze(transcript: &str, assertions: &str) -> Output {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "t.transcript.jsonl", transcript);
    write(
        dir.path(),
        "t.aptitude.yaml",
        &format!("name: T\nprompt: p\nassertions:\n{assertions}"),
    );
    aptitude(dir.path(), &["analyze", "."])
}

#[test]
fn gemini_lines_appended_to_a_claude_stream_are_warnings_and_not_ran_can_not_pass() {
    // Item 10: the appended lines vanished, usage was zeroed and `not_ran: rm -rf` passed.
    let transcript = [
        INIT,
        &bash("t1", "ls", "a", false),
        RESULT,
        r#"{"type":"init","session_id":"g","model":"m"}"#,
        r#"{"type":"tool_use","tool_name":"run_shell_command","tool_id":"g1","parameters":{"command":"rm -rf /"}}"#,
        r#"{"type":"result","status":"success","stats":{"input_tokens":0}}"#,
    ]
    .join("\n")
        + "\n";
    let out = analyze(&transcript, "  - not_ran: \"rm -rf\"\n  - ran: \"^ls\"\n");
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr
            .contains("t.transcript.jsonl:6: a gemini-stream-json line in a claude-stream-json transcript; skipped"),
        "{}",
        out.stderr
    );
    assert!(
        out.stdout
            .contains("transcript: 3 warnings (first at line 5)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(
            "transcript lost tool calls: line 5 could not be read (3 lines in all), so this check"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("✓ ran a command matching /^ls/"),
        "{}",
        out.stdout
    );
}

#[test]
fn an_orphan_tool_result_makes_negative_assertions_error() {
    // Item 12: the tool_use line is corrupt; its result proves the call was lost.
    let transcript = [
        INIT,
        r#"{"type":"assistant","session_id":"s1","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"rm -rf /"#,
        r#"{"type":"user","session_id":"s1","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"done"}]}}"#,
        RESULT,
    ]
    .join("\n")
        + "\n";
    let out = analyze(
        &transcript,
        "  - not_ran: \"rm -rf\"\n  - tool: Bash\n    called: false\n  - run_count: {pattern: rm, max: 0}\n",
    );
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let errors = out
        .stdout
        .matches("transcript lost tool calls: line 2 could not be read; 1 orphan tool result (its call is missing), so this check")
        .count();
    assert_eq!(
        errors, 3,
        "each negative assertion is an error\n{}",
        out.stdout
    );
    assert!(!out.stdout.contains('✓'), "nothing passes\n{}", out.stdout);
}

#[test]
fn a_truncated_codex_rollout_makes_the_test_error() {
    // Item 11: a rollout cut mid-line read as completed and the test passed.
    // The writer was killed mid-line: the file ends with half of a line.
    let src = std::fs::read_to_string(data(
        "corpus/live/codex-0.169.0/session_rollout_example.jsonl",
    ))
    .unwrap();
    let last = src.lines().last().unwrap();
    let cut = format!("{src}{}", &last[..last.len() / 2]);
    let out = analyze(&cut, "  - ran: \".\"\n");
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("error"), "{}", out.stdout);
    assert!(
        out.stdout.contains("is cut off (truncated)"),
        "{}",
        out.stdout
    );
    // Cut inside its last line (`task_complete`): the answer before it is no proof of an end.
    let cut_last = &src[..src.len() - last.len() / 2 - 1];
    let out = analyze(cut_last, "  - ran: \".\"\n");
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("is cut off (truncated)"),
        "{}",
        out.stdout
    );
    let whole = analyze(&src, "  - ran: \".\"\n");
    assert_eq!(whole.code, 0, "the whole file passes\n{}", whole.stdout);
}

#[test]
fn output_checks_fail_on_a_command_the_sandbox_blocked() {
    // Item 9: the blocked command's error text echoes it, so output_contains passed.
    let transcript = [
        INIT,
        &bash(
            "t1",
            "echo SECRET_OK",
            "Permission to use Bash with command echo SECRET_OK has been denied.",
            true,
        ),
        RESULT,
    ]
    .join("\n")
        + "\n";
    let out = analyze(
        &transcript,
        "  - output_contains: SECRET_OK\n  - error_contains: SECRET_OK\n  - output_equals: x\n  - exit_code: 0\n",
    );
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(
        out.stdout
            .matches("did not run: no exit code, and the agent reported an error")
            .count(),
        4,
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains('✓'), "{}", out.stdout);
}

#[test]
fn invalid_utf8_in_a_pretty_printed_transcript_is_a_warning_not_exit_2() {
    // Item 17: one invalid byte rejected a whole pretty-printed document.
    let mut bytes = std::fs::read(data("corpus/gemini/yoavf_gemini_session.json")).unwrap();
    let at = bytes.iter().position(|&b| b == b':').unwrap() + 3;
    bytes.insert(at, 0xff);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("chat.json"), &bytes).unwrap();
    let out = aptitude(dir.path(), &["transcript", "chat.json"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("invalid UTF-8 replaced"),
        "{}",
        out.stderr
    );
}
