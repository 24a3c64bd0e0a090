//! The `aptitude` binary as users run it: output snapshots, exit codes, error messages.
//!
//! Every command runs the real binary through the harness (`support::cli`): from the
//! repository root, with a cleared environment; snapshots filter paths and durations.

use std::path::Path;

use crate::support::cli::Aptitude;
use crate::support::data;

#[test]
fn analyze_bundled_examples_shows_pass_fail_and_an_ungraded_review() {
    let out = Aptitude::new().args(["analyze", "examples/"]).output();
    assert_eq!(out.code, 1, "a failing test exits 1\n{}", out.stderr);
    assert_eq!(out.stderr, "");
    assert!(
        !out.stdout.contains('\u{1b}'),
        "no control codes off a terminal"
    );
    let colored = Aptitude::new()
        .args(["--color", "always", "analyze", "examples/"])
        .output();
    assert!(
        colored.stdout.contains("\u{1b}[32m✓"),
        "--color always colors"
    );
    out.settings()
        .bind(|| insta::assert_snapshot!("analyze_examples", out.stdout));
}

#[test]
fn analyze_writes_results_json_in_file_order_with_lines() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out/results.json");
    let out = Aptitude::new()
        .args(["analyze", "examples/", "--json"])
        .arg(&json)
        .output();
    assert_eq!(out.code, 1);
    let results: serde_json::Value =
        serde_json::from_str(&crate::support::results_text(&json).unwrap()).unwrap();
    // What the results say of each test: file order, verdicts, each assertion's line, kind
    // and verdict (the review could not be graded without `claude` on PATH: an error rather
    // than a pass), and the transcript travelling with the results so that reports can be
    // re-rendered from them.
    let tests: Vec<serde_json::Value> = results["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let assertions: Vec<serde_json::Value> = t["assertions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| {
                    serde_json::json!({
                        "line": a["line"],
                        "kind": a["kind"],
                        "status": a["status"],
                        "threshold": a.get("threshold"),
                    })
                })
                .collect();
            serde_json::json!({
                "name": t["name"],
                "status": t["status"],
                "assertions": assertions,
                "tool_calls": t["transcript"]["tool_calls"].as_array().map(Vec::len),
            })
        })
        .collect();
    let projection = serde_json::json!({
        "version": results["version"],
        "summary": results["summary"],
        "tests": tests,
    });
    out.settings()
        .bind(|| insta::assert_json_snapshot!("analyze_results_projection", projection));
    assert!(
        results["tests"][2]["assertions"][3]["detail"]
            .as_str()
            .unwrap()
            .contains("no command matched")
    );
}

#[test]
fn env_guardrail_never_false_passes() {
    let test = "tests/data/env/env-protection.aptitude.yaml";
    let read = Aptitude::new()
        .args(["analyze", test, "tests/data/env/read-dotenv.jsonl"])
        .output();
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
    let example = Aptitude::new()
        .args(["analyze", test, "tests/data/env/read-example.jsonl"])
        .output();
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
    let out = Aptitude::new()
        .args(["validate", "."])
        .current_dir(dir.path())
        .output();
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
    let out = Aptitude::new()
        .arg("analyze")
        .arg(dir.path().join("t.aptitude.yaml"))
        .arg(transcript)
        .output();
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
    let out = Aptitude::new().args(["validate", "examples"]).output();
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
    let out = Aptitude::new()
        .args(["analyze", "t.aptitude.yaml"])
        .current_dir(dir.path())
        .output();
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
    let out = Aptitude::new()
        .args(["analyze", "."])
        .current_dir(dir.path())
        .output();
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
    let out = Aptitude::new()
        .arg("analyze")
        .arg(dir.path().join("t.aptitude.yaml"))
        .arg(transcript)
        .output();
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
    let out = Aptitude::new()
        .args([
            "transcript",
            "tests/data/corpus/claude-stream-json/helgesverre_wrapped_task_subagent.jsonl",
        ])
        .output();
    assert_eq!(out.code, 0, "{}", out.stderr);
    out.settings()
        .bind(|| insta::assert_snapshot!("transcript_human", out.stdout));

    let out = Aptitude::new()
        .args([
            "transcript",
            "--json",
            "tests/data/corpus/live/claude-2.1.328/events_tool_call.jsonl",
        ])
        .output();
    out.code(0);
    // What assertions see: the format, each tool call with all its fields (output, exit
    // code, agent), the final answer, usage and warnings.
    let t: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let projection = serde_json::json!({
        "format": t["format"],
        "first_tool_call": t["tool_calls"][0],
        "final_text": t["final_text"],
        "usage": t["usage"],
        "warnings": t["warnings"],
    });
    out.settings()
        .bind(|| insta::assert_json_snapshot!("transcript_json_projection", projection));
}

#[test]
fn unreadable_transcript_is_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "x.jsonl", "not json\n");
    let out = Aptitude::new()
        .args(["transcript", "x.jsonl"])
        .current_dir(dir.path())
        .output();
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr,
        "error: x.jsonl is not a transcript aptitude knows: no line is valid JSON\n"
    );
    let out = Aptitude::new()
        .args(["transcript", "missing.jsonl"])
        .current_dir(dir.path())
        .output();
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .starts_with("error: can not read transcript missing.jsonl"),
        "{}",
        out.stderr
    );
}

/// `--help` of aptitude and of every command (listed from the clap definition, so a new
/// command gets its snapshot): the documented flags as users read them.
#[test]
fn help_of_every_command_is_stable() {
    use clap::CommandFactory as _;
    let commands: Vec<String> = aptitude::cli::Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_owned())
        .collect();
    assert!(commands.len() >= 7, "{commands:?}");
    for command in std::iter::once(None).chain(commands.iter().map(Some)) {
        let mut cmd = Aptitude::new();
        cmd.args(command).arg("--help");
        let out = cmd.output();
        out.code(0);
        assert_eq!(out.stderr, "");
        // Unfiltered: help holds nothing that changes between runs ("30s" is an example).
        let name = format!("help_{}", command.map_or("aptitude", String::as_str));
        insta::assert_snapshot!(name, out.stdout);
    }
}

#[test]
fn usage_errors_exit_2() {
    let out = Aptitude::new().arg("analyze").output();
    assert_eq!(out.code, 2);
    let out = Aptitude::new().arg("frobnicate").output();
    assert_eq!(out.code, 2);
    let out = Aptitude::new().arg("--help").output();
    assert_eq!(out.code, 0);
}

/// Engine diagnostics (`tracing`) are off unless RUST_LOG or `run -vv` asks for them, go to
/// stderr only, and are redacted like everything else.
#[test]
fn engine_diagnostics_are_opt_in_on_stderr_and_redacted() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "t.aptitude.yaml",
        "name: T\nprompt: p\nassertions:\n  - tool: Bash\n",
    );
    // An agent that fails its `--version` check, in a directory named like a secret.
    let secret = "zz-secret-dir-4f9c2a";
    let bin = dir.path().join(secret).join("claude");
    std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
    std::fs::write(&bin, "#!/bin/sh\nexit 3\n").unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let run = |env: &[(&str, &str)], extra: &[&str]| {
        Aptitude::new()
            .current_dir(dir.path())
            .env("MY_API_KEY", secret)
            .env("ANTHROPIC_API_KEY", "sk-ant-test")
            .envs(env.iter().copied())
            .args(["run", "t.aptitude.yaml", "--claude-bin"])
            .arg(&bin)
            .args(extra)
            .output()
    };
    let quiet = run(&[], &["-v"]);
    quiet.code(2);
    assert!(
        !quiet.stderr.contains("process started"),
        "{}",
        quiet.stderr
    );
    for loud in [
        run(&[("RUST_LOG", "aptitude=debug")], &[]),
        run(&[], &["-vv"]),
    ] {
        loud.code(2);
        assert_eq!(loud.stdout, "");
        assert!(
            loud.stderr
                .contains("DEBUG aptitude::agent::process: process started"),
            "{}",
            loud.stderr
        );
        assert!(loud.stderr.contains("[REDACTED]"), "{}", loud.stderr);
        assert!(!loud.stderr.contains(secret), "{}", loud.stderr);
    }
}

/// An agent without a credential would wait for a sign-in until the test's timeout (10
/// minutes by default): `run`, `log`, `init --skills` and grading stop before any agent
/// starts, exit 2 (a configuration error, not the agent's), naming the variables and how to
/// set one. A test's `env:` holding the key, or a replay, needs none.
#[test]
fn an_agent_without_credentials_stops_before_it_starts() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "t.aptitude.yaml",
        "name: T\nprompt: p\nassertions:\n  - tool: Bash\n",
    );
    // An agent that leaves a mark when it is started for anything but `--version`.
    let started = dir.path().join("started");
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for agent in ["claude", "codex"] {
        let path = bin.join(agent);
        std::fs::write(
            &path,
            format!(
                "#!/bin/sh\ncase \"$1\" in --version) echo 2.1.328; exit 0;; esac\ntouch {}\nsleep 600\n",
                started.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let claude = bin.join("claude");
    let codex = format!("codex={}", bin.join("codex").display());
    let runs = [
        Aptitude::new()
            .current_dir(dir.path())
            .args(["run", "t.aptitude.yaml", "--claude-bin"])
            .arg(&claude)
            .output(),
        Aptitude::new()
            .current_dir(dir.path())
            .args(["log", "hello", "--claude-bin"])
            .arg(&claude)
            .output(),
    ];
    for out in &runs {
        out.code(2);
        for text in [
            "agent `claude` has no credential",
            "ANTHROPIC_API_KEY",
            "in aptitude's environment",
            "~/.claude/.credentials.json",
        ] {
            assert!(out.stderr.contains(text), "{text}\n{}", out.both());
        }
    }
    std::fs::create_dir_all(dir.path().join(".agents/skills/greet")).unwrap();
    write(
        dir.path(),
        ".agents/skills/greet/SKILL.md",
        "---\nname: greet\ndescription: Greets the user by name\n---\nSay hello.\n",
    );
    let drafting = Aptitude::new()
        .current_dir(dir.path())
        .args([
            "init",
            "--skills",
            ".agents/skills",
            "--agent",
            "codex",
            "--agent-bin",
            &codex,
        ])
        .output();
    drafting.code(2);
    assert!(
        drafting.stderr.contains("agent `codex` has no credential")
            && drafting.stderr.contains("OPENAI_API_KEY"),
        "{}",
        drafting.both()
    );
    assert!(!started.exists(), "no agent was started");
    // The key in the test's `env:` is enough to get past the check (the agent starts).
    write(
        dir.path(),
        "k.aptitude.yaml",
        "name: K\nprompt: p\ntimeout: 2s\nenv: {ANTHROPIC_API_KEY: sk-ant-test}\nassertions:\n  - tool: Bash\n",
    );
    let keyed = Aptitude::new()
        .current_dir(dir.path())
        .args([
            "run",
            "k.aptitude.yaml",
            "--sandbox",
            "off",
            "--no-gateway",
            "--claude-bin",
        ])
        .arg(&claude)
        .output();
    assert!(
        !keyed.stderr.contains("has no credential"),
        "{}",
        keyed.both()
    );
    assert!(started.exists(), "the agent started: {}", keyed.both());
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}
