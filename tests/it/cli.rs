//! The `aptitude` binary as users run it: output snapshots, exit codes, error messages.
//!
//! Every command runs the real binary from the repository root with a cleared environment;
//! snapshots filter durations so they are stable.

use std::path::Path;

use assert_cmd::Command;

use crate::support::{data, root};

fn aptitude() -> Command {
    let mut cmd = Command::cargo_bin("aptitude").unwrap();
    cmd.env_clear().current_dir(root());
    cmd
}

struct Output {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap();
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

fn settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.add_filter(r"\b\d+m \d\ds\b", "[DURATION]");
    s.add_filter(r"\b\d+(\.\d+)?(ms|s)\b", "[DURATION]");
    s.add_filter(r#""duration_ms": \d+"#, r#""duration_ms": "[MS]""#);
    s.add_filter(
        r#""aptitude_version": "[^"]+""#,
        r#""aptitude_version": "[VERSION]""#,
    );
    s
}

#[test]
fn analyze_bundled_examples_shows_pass_fail_and_an_ungraded_review() {
    let out = run(aptitude().args(["analyze", "examples/"]));
    assert_eq!(out.code, 1, "a failing test exits 1\n{}", out.stderr);
    assert_eq!(out.stderr, "");
    assert!(
        !out.stdout.contains('\u{1b}'),
        "no control codes off a terminal"
    );
    let colored = run(aptitude().args(["--color", "always", "analyze", "examples/"]));
    assert!(
        colored.stdout.contains("\u{1b}[32m✓"),
        "--color always colors"
    );
    settings().bind(|| insta::assert_snapshot!("analyze_examples", out.stdout));
}

#[test]
fn analyze_writes_results_json_in_file_order_with_lines() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out/results.json");
    let out = run(aptitude()
        .args(["analyze", "examples/", "--json"])
        .arg(&json));
    assert_eq!(out.code, 1);
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(results["version"], 2);
    let tests = results["tests"].as_array().unwrap();
    let names: Vec<&str> = tests.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "Reads files with the Read tool",
            "Creates and runs a script",
            "Push to GitHub safely"
        ]
    );
    let statuses: Vec<&str> = tests
        .iter()
        .map(|t| t["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["failed", "passed", "failed"]);
    let push = &tests[2]["assertions"];
    let lines: Vec<u64> = push
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, [8, 12, 17, 23, 26, 29]);
    assert_eq!(push[3]["status"], "fail");
    assert_eq!(push[3]["kind"], "command_succeeded");
    assert!(
        push[3]["detail"]
            .as_str()
            .unwrap()
            .contains("no command matched")
    );
    assert_eq!(push[4]["status"], "pass");
    // No `claude` on this PATH: the review could not be graded, an error rather than a pass.
    let review = &tests[0]["assertions"][2];
    assert_eq!(review["kind"], "stdout");
    assert_eq!(review["status"], "error");
    assert_eq!(review["threshold"], 7);
    assert_eq!(results["summary"]["failed"], 2);
    assert_eq!(results["summary"]["passed"], 1);
    // The transcript travels with the results so reports can be re-rendered from them.
    assert_eq!(
        tests[1]["transcript"]["tool_calls"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
}

#[test]
fn env_guardrail_never_false_passes() {
    let test = "tests/data/env/env-protection.aptitude.yaml";
    let read = run(aptitude().args(["analyze", test, "tests/data/env/read-dotenv.jsonl"]));
    assert_eq!(
        read.code, 1,
        "reading .env must fail the guardrail\n{}",
        read.stdout
    );
    assert!(
        read.stdout.contains("#1 Read file_path=\"/home/u/p/.env\""),
        "{}",
        read.stdout
    );
    let example = run(aptitude().args(["analyze", test, "tests/data/env/read-example.jsonl"]));
    assert_eq!(
        example.code, 0,
        "reading .env.example is allowed\n{}",
        example.stdout
    );
}

#[test]
fn broken_test_files_report_every_error_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.aptitude.yaml",
        "name: A\npromt: hi\nassertions:\n  - tool: Read\n    calld: false\n    params:\n      file_path: \"cat.*\\\\.env(\"\n  - tool: Bash\n    called: false\n    max_calls: 2\n",
    );
    write(
        dir.path(),
        "b.aptitude.yml",
        "name: B\nprompt: p\ntimeout: 5 parsecs\nassertions:\n  - exit_code: 0\n    ran: ls\n",
    );
    write(
        dir.path(),
        "c.aptitude.yaml",
        "name: C\nprompt: ok\nassertions:\n  - tool: Bash\n",
    );
    let out = run(aptitude().args(["validate", "."]).current_dir(dir.path()));
    assert_eq!(out.code, 2);
    assert_eq!(out.stdout, "");
    insta::assert_snapshot!("validate_errors", out.stderr);
}

#[test]
fn broken_test_file_stops_analyze_before_evaluation() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "t.aptitude.yaml",
        "name: T\nprompt: p\nassertions:\n  - tool: Reed\n",
    );
    let transcript = data("corpus/live/claude-2.1.328/events_tool_call.jsonl");
    let out = run(aptitude()
        .arg("analyze")
        .arg(dir.path().join("t.aptitude.yaml"))
        .arg(transcript));
    assert_eq!(out.code, 2);
    assert_eq!(out.stdout, "", "nothing is evaluated");
    assert!(out.stderr.contains("unknown tool `Reed`"), "{}", out.stderr);
    assert!(
        out.stderr.contains("did you mean `Read`?"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("t.aptitude.yaml:4:11"),
        "{}",
        out.stderr
    );
}

#[test]
fn validate_accepts_good_files() {
    let out = run(aptitude().args(["validate", "examples"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "✓ 3 test files valid (13 assertions)\n");
}

#[test]
fn missing_recorded_transcript_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "t.aptitude.yaml",
        "name: T\nprompt: p\nassertions:\n  - tool: Bash\n",
    );
    let out = run(aptitude()
        .args(["analyze", "t.aptitude.yaml"])
        .current_dir(dir.path()));
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains(
            "no recorded transcript for t.aptitude.yaml (expected t.transcript.jsonl beside it)"
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn malformed_transcript_line_is_a_warning_not_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let src =
        std::fs::read_to_string(data("corpus/live/claude-2.1.328/events_tool_call.jsonl")).unwrap();
    let mut lines: Vec<&str> = src.lines().collect();
    lines.insert(
        2,
        "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"tool_us",
    );
    write(dir.path(), "t.transcript.jsonl", &(lines.join("\n") + "\n"));
    write(
        dir.path(),
        "t.aptitude.yaml",
        "name: T\nprompt: p\nassertions:\n  - tool: Bash\n    params:\n      command: \"cat counter.txt*\"\n",
    );
    let out = run(aptitude().args(["analyze", "."]).current_dir(dir.path()));
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr
            .contains("warning: t.transcript.jsonl:3: invalid JSON"),
        "{}",
        out.stderr
    );
    assert!(
        out.stdout
            .contains("✓ Bash called with command ~ glob \"cat counter.txt*\""),
        "{}",
        out.stdout
    );
}

#[test]
fn api_error_transcript_makes_the_test_error_not_pass() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "t.aptitude.yaml",
        "name: T\nprompt: p\nassertions:\n  - tool: Read\n    called: false\n",
    );
    let transcript = data("corpus/live/claude-2.1.328/err_FAIL500.stdout.jsonl");
    let out = run(aptitude()
        .arg("analyze")
        .arg(dir.path().join("t.aptitude.yaml"))
        .arg(transcript));
    assert_eq!(out.code, 1);
    assert!(out.stdout.contains("error"), "{}", out.stdout);
    assert!(
        out.stdout.contains("model API error (HTTP 500)"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("1 error"), "{}", out.stdout);
}

#[test]
fn transcript_command_human_and_json() {
    let out = run(aptitude().args([
        "transcript",
        "tests/data/corpus/claude-stream-json/helgesverre_wrapped_task_subagent.jsonl",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    settings().bind(|| insta::assert_snapshot!("transcript_human", out.stdout));

    let out = run(aptitude().args([
        "transcript",
        "--json",
        "tests/data/corpus/live/claude-2.1.328/events_tool_call.jsonl",
    ]));
    assert_eq!(out.code, 0);
    let t: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(t["format"], "claude-stream-json");
    let call = &t["tool_calls"][0];
    for key in [
        "id",
        "name",
        "input",
        "output",
        "is_error",
        "exit_code",
        "agent",
    ] {
        assert!(call.get(key).is_some(), "tool call lacks {key}: {call}");
    }
    assert_eq!(call["exit_code"], 3);
    assert_eq!(t["final_text"], "The counter value is 42.");
    assert_eq!(t["usage"]["output_tokens"], 14);
    assert!(t["warnings"].as_array().unwrap().is_empty());
}

#[test]
fn unreadable_transcript_is_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "x.jsonl", "not json\n");
    let out = run(aptitude()
        .args(["transcript", "x.jsonl"])
        .current_dir(dir.path()));
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr,
        "error: x.jsonl is not a transcript aptitude knows: no line is valid JSON\n"
    );
    let out = run(aptitude()
        .args(["transcript", "missing.jsonl"])
        .current_dir(dir.path()));
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .starts_with("error: can not read transcript missing.jsonl"),
        "{}",
        out.stderr
    );
}

#[test]
fn usage_errors_exit_2() {
    let out = run(aptitude().arg("analyze"));
    assert_eq!(out.code, 2);
    let out = run(aptitude().arg("frobnicate"));
    assert_eq!(out.code, 2);
    let out = run(aptitude().arg("--help"));
    assert_eq!(out.code, 0);
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}
