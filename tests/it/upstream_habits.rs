//! What users of upstream aptitude type (issue 23, §5): `agents`, `log PROMPT`,
//! `run PATH -w DIR -a AGENT` and `analyze TEST SESSION -a AGENT`, run as the real binary
//! with a cleared environment; `log` and `run -w` with the real `claude` against the
//! scripted model.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use serde_json::json;

use crate::support::cli::Aptitude;
use crate::support::model::{ScriptedModel, Turn};
use crate::support::{claude_bin, data};

/// How long one run of the real agent may take.
const RUN_LIMIT: Duration = Duration::from_secs(240);

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn executable(path: &Path, script: &str) {
    write(path, script);
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `aptitude agents` with fake binaries on `PATH`: one at the pinned version, one at
/// another, one whose `--version` fails, the rest missing. Credentials are named when
/// present (a variable, a login file) and never shown.
#[test]
fn agents_lists_versions_against_the_pins_and_credential_names_only() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    executable(
        &bin.join("claude"),
        "#!/bin/sh\necho '2.1.328 (Claude Code)'\n",
    );
    executable(&bin.join("codex"), "#!/bin/sh\necho 'codex-cli 0.168.0'\n");
    executable(
        &bin.join("gemini"),
        "#!/bin/sh\necho 'no node here' >&2\nexit 1\n",
    );
    write(
        &dir.path().join("home/.codex/auth.json"),
        r#"{"tokens": {"access_token": "chatgpt-login-zz9"}}"#,
    );
    let secret = "sk-ant-api03-agents-list-zz9-secret";
    let out = Aptitude::new()
        .sandbox_in(dir.path())
        .path_dir(&bin)
        .env("ANTHROPIC_API_KEY", secret)
        .env("GH_TOKEN", "")
        .arg("agents")
        .output();
    out.code(0);
    assert!(!out.stdout.contains(secret) && !out.stderr.contains(secret));
    assert!(!out.stdout.contains("chatgpt-login-zz9"));
    out.settings()
        .bind(|| insta::assert_snapshot!("agents_list", out.stdout));
}

/// `aptitude log PROMPT -w DIR`: the real `claude` runs once in a copy of `DIR`; each call
/// is shown on stderr as it is made, then every call (by the name `tool:` matches), the
/// totals, the files changed and the answer on stdout. `DIR` is untouched.
#[test]
fn log_runs_the_real_agent_once_in_a_copy_and_prints_its_calls() {
    let model = ScriptedModel::start();
    model.script(
        "log-marker",
        vec![
            Turn::Tool(
                "Bash",
                json!({"command": "cat notes.txt > seen.txt", "description": "read the notes"}),
            ),
            Turn::Text("The notes say hello.".into()),
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("fixture/notes.txt"), "hello\n");
    let out = Aptitude::new()
        .sandbox_in(dir.path())
        .current_dir(dir.path())
        .model(&model)
        .args([
            "log",
            "log-marker: what do the notes say?",
            "-w",
            "fixture",
            "-a",
            "claude",
        ])
        .arg("--claude-bin")
        .arg(claude_bin())
        .limit(RUN_LIMIT)
        .output();
    out.code(0);
    assert!(
        out.stderr
            .contains("  ↳ #1 Bash command=\"cat notes.txt > seen.txt\""),
        "{}",
        out.both()
    );
    assert!(!out.stdout.contains("sk-ant-test-scripted"));
    out.settings()
        .bind(|| insta::assert_snapshot!("log_claude", out.stdout));
    assert!(
        !dir.path().join("fixture/seen.txt").exists(),
        "the agent worked in a copy"
    );
    assert_eq!(model.requests_for("log-marker").len(), 2);

    // A directory that is not there is invalid input, before any agent starts.
    let missing = Aptitude::new()
        .sandbox_in(dir.path())
        .current_dir(dir.path())
        .args(["log", "p", "-w", "nowhere"])
        .output();
    missing.code(2);
    assert!(
        missing
            .stderr
            .contains("workspace nowhere does not exist or is not a directory"),
        "{}",
        missing.stderr
    );
}

/// `run PATH -w DIR -a AGENT`: every test runs in a copy of `DIR` instead of its own
/// workspace, on the agent `-a` names.
#[test]
fn run_takes_upstreams_workdir_and_agent_flags() {
    let model = ScriptedModel::start();
    model.script(
        "workdir-marker",
        vec![
            Turn::Tool(
                "Bash",
                json!({"command": "cat only-in-dir.txt", "description": "read"}),
            ),
            Turn::Text("It says from-dir.".into()),
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("elsewhere/only-in-dir.txt"), "from-dir\n");
    write(
        &dir.path().join("tests/t.aptitude.yaml"),
        "name: reads the file of -w\nprompt: \"workdir-marker: what does only-in-dir.txt say?\"\nassertions:\n  - ran: cat only-in-dir.txt\n  - command_succeeded: cat only-in-dir.txt\n",
    );
    let results = dir.path().join("results.json");
    let out = Aptitude::new()
        .sandbox_in(dir.path())
        .current_dir(dir.path())
        .model(&model)
        .args(["run", "tests", "-w", "elsewhere", "-a", "claude", "--json"])
        .arg(&results)
        .arg("--claude-bin")
        .arg(claude_bin())
        .limit(RUN_LIMIT)
        .output();
    out.code(0);
    let results: serde_json::Value =
        serde_json::from_str(&crate::support::results_text(&results).unwrap()).unwrap();
    let call = &results["tests"][0]["transcript"]["tool_calls"][0];
    assert_eq!(call["output"], "from-dir", "{results:#}");
    assert_eq!(results["tests"][0]["agent_id"], "claude");
}

/// `analyze TEST SESSION -a AGENT`: the transcript must be in a format that agent writes
/// — read as another agent's, its tools would be named in the wrong words — and the test
/// is judged as that agent's.
#[test]
fn analyze_a_names_the_agent_that_wrote_the_transcript() {
    let dir = tempfile::tempdir().unwrap();
    let test = dir.path().join("t.aptitude.yaml");
    write(
        &test,
        "name: calls a shell\nprompt: p\nassertions:\n  - tool: Bash\n",
    );
    let claude = data("corpus/live/claude-2.1.328/events_tool_call.jsonl");
    let codex = data("corpus/live/codex-0.169.0/events_tool_call.jsonl");
    let json = dir.path().join("r.json");
    let analyze = |session: &Path, agent: &str| {
        Aptitude::new()
            .arg("analyze")
            .arg(&test)
            .arg(session)
            .args(["-a", agent, "--json"])
            .arg(&json)
            .output()
    };
    analyze(&claude, "claude").code(0);
    analyze(&codex, "codex").code(0);
    let results: serde_json::Value =
        serde_json::from_str(&crate::support::results_text(&json).unwrap()).unwrap();
    assert_eq!(results["tests"][0]["agent_id"], "codex");
    let wrong = analyze(&claude, "codex");
    wrong.code(2);
    assert!(
        wrong
            .stderr
            .contains("is a claude-stream-json transcript, written by claude, not by codex"),
        "{}",
        wrong.stderr
    );
    assert!(
        wrong
            .stderr
            .contains("hint: pass the transcript codex wrote")
    );
}
