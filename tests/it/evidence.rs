//! Evidence assertions end to end: the real `claude` runs scripted shell and file tool
//! calls in a workspace copy; every assertion kind is checked with a passing and a failing
//! case, on what really happened.

use serde_json::{Value, json};

use crate::run::{Suite, aptitude_run, test};
use crate::support::model::{ScriptedModel, Turn};

/// Each assertion's kind and status, in file order.
fn verdicts(t: &Value) -> Vec<(String, String)> {
    t["assertions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["kind"].as_str().unwrap().to_owned(),
                a["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn expect(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(k, s)| ((*k).to_owned(), (*s).to_owned()))
        .collect()
}

const FAILING_RUN: &str = r#"name: failing-run
prompt: "evidence-a: build the report"
assertions:
  # the last command: exit 3 with "oops" on stderr
  - exit_code: 3
  - exit_code: 0
  - output_contains: partial
  - output_contains: nope
  - error_contains: oops
  - error_contains: nope
  # every command
  - ran: "mkdir -p out/deep"
  - ran: "npm install"
  - not_ran: "rm -rf"
  - run_count: {pattern: "echo", min: 3}
  - run_count: {pattern: "echo", max: 1}
  - command_succeeded: "MKDIR"
  - command_succeeded: "cargo test|go test"
  # the workspace afterwards: a file in a subdirectory
  - file_exists: out/deep/report.json
  - file_exists: report.json
  - file_absent: secret.txt
  - file_absent: out/deep/report.json
  - file_contains: {path: out/deep/report.json, text: ship}
  - file_contains: {path: out/deep/report.json, matches: '"goal":\s*"nope"'}
  - json_file: {path: out/deep/report.json, required: [goal]}
  - json_file: {path: out/deep/report.json, required: [goal, files]}
  - wrote: [out/deep/report.json]
  - wrote: [out/deep/report.json, missing.txt]
  - verify: {run: "cat out/deep/report.json", output_contains: ship}
  - verify: {run: "test -f nope.txt"}
  - verify: {run: "cat out/deep/report.json", exit_code: 0, output_equals: "{}"}
  # budgets
  - turns: {max: 10}
  - turns: {max: 1}
  - cost_usd: {max: 1.0}
  - cost_usd: {max: 0.00001}
  - duration: {max: 5m}
  - duration: {max: 1ms}
  - tool_calls: {max: 10, tool: Bash}
  - tool_calls: {max: 1}
"#;

const PASSING_RUN: &str = r#"name: passing-run
prompt: "evidence-b: tidy up"
assertions:
  - not_ran: "rm -rf"
  - wrote: [notes/todo.md]
  - exit_code: 0
  # Claude Code 2.1 merges stderr into stdout
  - output_equals: "warn\nOK"
  - output_equals: OK
  - error_contains: warn
  - file_contains: {path: notes/todo.md, text: "- ship"}
"#;

#[test]
fn every_evidence_kind_passes_and_fails_on_what_really_happened() {
    let model = ScriptedModel::start();
    model.script(
        "evidence-a",
        vec![
            Turn::Tool(
                "Bash",
                json!({"command": "mkdir -p out/deep && echo '{\"goal\": \"ship\", \"files\": []}' > out/deep/report.json && echo wrote"}),
            ),
            Turn::Tool("Bash", json!({"command": "echo 'cargo test: 1 failed' >&2; exit 1"})),
            Turn::Tool("Bash", json!({"command": "echo oops >&2; echo partial; exit 3"})),
            Turn::Text("Report written.".into()),
        ],
    );
    model.script(
        "evidence-b",
        vec![
            Turn::Tool("Bash", json!({"command": "rm -rf build"})),
            Turn::Tool(
                "Write",
                json!({"file_path": "notes/todo.md", "content": "- ship\n"}),
            ),
            Turn::Tool("Bash", json!({"command": "echo warn >&2; echo OK"})),
            Turn::Text("Tidied.".into()),
        ],
    );
    let suite = Suite::new();
    suite
        .file("tests/a/a.aptitude.yaml", FAILING_RUN)
        .file("tests/a/input.txt", "x\n")
        .file("tests/b/b.aptitude.yaml", PASSING_RUN)
        .file("tests/b/build/junk.o", "junk\n");
    let out = aptitude_run(&suite, &model, &["--jobs", "2"]);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let results = out.results.unwrap();

    let a = test(&results, "failing-run");
    assert_eq!(a["error"], Value::Null, "{a:#}");
    assert_eq!(
        verdicts(a),
        expect(&[
            ("exit_code", "pass"),
            ("exit_code", "fail"),
            ("output_contains", "pass"),
            ("output_contains", "fail"),
            ("error_contains", "pass"),
            ("error_contains", "fail"),
            ("ran", "pass"),
            ("ran", "fail"),
            ("not_ran", "pass"),
            ("run_count", "pass"),
            ("run_count", "fail"),
            ("command_succeeded", "pass"),
            ("command_succeeded", "fail"),
            ("file_exists", "pass"),
            ("file_exists", "fail"),
            ("file_absent", "pass"),
            ("file_absent", "fail"),
            ("file_contains", "pass"),
            ("file_contains", "fail"),
            ("json_file", "pass"),
            ("json_file", "fail"),
            ("wrote", "pass"),
            ("wrote", "fail"),
            ("verify", "pass"),
            ("verify", "fail"),
            ("verify", "fail"),
            ("turns", "pass"),
            ("turns", "fail"),
            ("cost_usd", "pass"),
            ("cost_usd", "fail"),
            ("duration", "pass"),
            ("duration", "fail"),
            ("tool_calls", "pass"),
            ("tool_calls", "fail"),
        ])
    );
    // Every result says what it saw.
    let detail = |i: usize| {
        a["assertions"][i]["detail"]
            .as_str()
            .unwrap_or("")
            .to_owned()
    };
    assert!(
        detail(1).contains("`echo oops >&2; echo partial; exit 3` → exit 3"),
        "{}",
        detail(1)
    );
    assert!(detail(5).contains("oops"), "{}", detail(5));
    assert!(
        detail(12).contains("none exited 0") && detail(12).contains("→ exit 1"),
        "command_succeeded rejects a matching command that exited 1: {}",
        detail(12)
    );
    assert!(
        detail(14).contains("files created in the run: out/deep/report.json"),
        "{}",
        detail(14)
    );
    assert!(detail(20).contains("`files` is empty"), "{}", detail(20));
    assert!(
        detail(22).contains("not written: missing.txt"),
        "{}",
        detail(22)
    );
    assert!(
        detail(24).starts_with("exited 1 (expected 0)"),
        "{}",
        detail(24)
    );
    assert!(
        detail(25).contains("stdout: {\"goal\": \"ship\""),
        "the verify output is shown: {}",
        detail(25)
    );

    let b = test(&results, "passing-run");
    assert_eq!(
        verdicts(b),
        expect(&[
            ("not_ran", "fail"),
            ("wrote", "pass"),
            ("exit_code", "pass"),
            ("output_equals", "pass"),
            ("output_equals", "fail"),
            ("error_contains", "pass"),
            ("file_contains", "pass"),
        ]),
        "{b:#}"
    );
    assert!(
        b["assertions"][0]["detail"]
            .as_str()
            .unwrap()
            .contains("`rm -rf build`"),
        "not_ran catches rm -rf"
    );
    let files: Vec<(&str, &str)> = b["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["path"].as_str().unwrap(), f["change"].as_str().unwrap()))
        .collect();
    assert_eq!(
        files,
        [("build/junk.o", "deleted"), ("notes/todo.md", "created")]
    );
}
