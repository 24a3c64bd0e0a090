//! `aptitude run` on every agent that runs: the real pinned CLI (`package-lock.json`,
//! installed by `scripts/test`) against the scripted model speaking that agent's wire
//! protocol, through `--agent`, `--agent-bin` and `--agent-base-url`, asserting on results
//! JSON. One test file gives the same verdicts on every agent.

use std::time::{Duration, Instant};

use assert_cmd::Command;
use serde_json::{Value, json};

use crate::run::Suite;
use crate::support::model::{ScriptedModel, Turn};
use crate::support::root;

/// An agent under test: its name, the shell tool it calls and that tool's command key,
/// and the path its wire protocol puts after the server's base URL.
struct Agent {
    name: &'static str,
    shell: &'static str,
    command_key: &'static str,
    extra: Value,
    base_path: &'static str,
}

const AGENTS: &[fn() -> Agent] = &[
    || Agent {
        name: "codex",
        shell: "exec_command",
        command_key: "cmd",
        extra: json!({}),
        base_path: "/v1",
    },
    || Agent {
        name: "gemini",
        shell: "run_shell_command",
        command_key: "command",
        extra: json!({}),
        base_path: "",
    },
    || Agent {
        name: "qwen",
        shell: "run_shell_command",
        command_key: "command",
        extra: json!({}),
        base_path: "/v1",
    },
];

fn bin(name: &str) -> std::path::PathBuf {
    let bin = root().join("node_modules/.bin").join(name);
    assert!(
        bin.exists(),
        "{} is missing: run `scripts/test`",
        bin.display()
    );
    bin
}

/// `aptitude run tests` on `agent` against `model`, with the results JSON.
fn run_on(
    suite: &Suite,
    model: &ScriptedModel,
    agent: &Agent,
    extra: &[&str],
) -> (i32, Value, String) {
    let home = suite.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let out = Command::cargo_bin("aptitude")
        .unwrap()
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("OPENAI_API_KEY", "sk-test-openai")
        .env("GEMINI_API_KEY", "sk-test-gemini")
        .env("COPILOT_PROVIDER_API_KEY", "sk-test-copilot")
        .env(
            "XDG_CACHE_HOME",
            std::env::temp_dir().join("aptitude-tests-copilot-cache"),
        )
        .current_dir(suite.path())
        .arg("run")
        .arg("tests")
        .arg("--agent")
        .arg(agent.name)
        .arg("--agent-bin")
        .arg(format!("{}={}", agent.name, bin(agent.name).display()))
        .arg("--agent-base-url")
        .arg(format!(
            "{}={}{}",
            agent.name,
            model.base_url(),
            agent.base_path
        ))
        .args(["--model", "fake-model", "--no-grade", "--json"])
        .arg(suite.results_path())
        .args(extra)
        .timeout(Duration::from_secs(240))
        .output()
        .unwrap();
    let results = std::fs::read_to_string(suite.results_path())
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or(Value::Null);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code().unwrap_or(-1), results, stderr)
}

/// The same test file on every agent: the shell calls really run in the workspace copy
/// (the fixture is untouched), the calls are recorded under the canonical name `Bash` with
/// the canonical key `command`, and a failing command's exit code (3) is captured.
#[test]
fn one_test_file_gives_the_same_verdicts_on_every_agent() {
    for agent in AGENTS.iter().map(|a| a()) {
        let marker = format!("SHELL-{}", agent.name.to_uppercase());
        let model = ScriptedModel::start();
        let call = |command: &str| {
            let mut args = json!({ agent.command_key: command });
            if let (Some(a), Some(e)) = (args.as_object_mut(), agent.extra.as_object()) {
                a.extend(e.clone());
            }
            Turn::Tool(agent.shell, args)
        };
        model.script(
            &marker,
            vec![
                call("echo agent-ok > made.txt && cat made.txt"),
                call("echo failing; exit 3"),
                Turn::Text("Made the file; the second command failed with 3.".into()),
            ],
        );
        let suite = Suite::new();
        suite.file("tests/ws/keep.txt", "fixture\n").file(
            "tests/ws/shell.aptitude.yaml",
            &format!(
                "name: shell\nprompt: \"{marker}: make the file\"\nassertions:\n  - tool: Bash\n    params:\n      command: \"*made.txt*\"\n  - tool: Bash\n    call_count: 2\n  - exit_code: 3\n  - file_contains: {{path: made.txt, text: agent-ok}}\n  - ran: \"exit 3\"\n"
            ),
        );
        let (code, results, stderr) = run_on(&suite, &model, &agent, &[]);
        let test = &results["tests"][0];
        assert_eq!(
            test["status"], "passed",
            "{}: exit {code}\n{stderr}\n{test:#}",
            agent.name
        );
        assert_eq!(code, 0, "{}", agent.name);
        assert_eq!(test["agent_id"], agent.name);
        assert!(
            test["agent"].as_str().unwrap_or("").starts_with(agent.name),
            "{}",
            test["agent"]
        );
        assert!(
            !suite.path().join("tests/ws/made.txt").exists(),
            "{}: the fixture was written to",
            agent.name
        );
    }
}

/// A model that answers 500 makes the run `error` in seconds (the agents' retries are
/// bounded), with the agent's message and the time it took.
#[test]
fn a_failing_model_is_an_error_in_seconds() {
    for agent in AGENTS.iter().map(|a| a()) {
        let marker = format!("FAIL-{}", agent.name.to_uppercase());
        let model = ScriptedModel::start();
        model.script(&marker, vec![Turn::Http(500, "scripted outage")]);
        let suite = Suite::new();
        suite.file(
            "tests/ws/fail.aptitude.yaml",
            &format!(
                "name: fail\nprompt: \"{marker}: do it\"\nassertions:\n  - tool: Bash\n    called: false\n"
            ),
        );
        let started = Instant::now();
        let (code, results, stderr) = run_on(&suite, &model, &agent, &[]);
        let took = started.elapsed();
        let test = &results["tests"][0];
        assert_eq!(
            test["status"], "error",
            "{}: a model 500 must never pass\n{stderr}\n{test:#}",
            agent.name
        );
        assert_eq!(code, 1, "{}", agent.name);
        assert!(test["error"].as_str().is_some_and(|e| !e.is_empty()));
        assert!(test["duration_ms"].as_u64().is_some());
        eprintln!(
            "{}: model 500 → error in {took:?}: {}",
            agent.name, test["error"]
        );
    }
}

/// A run past its timeout (the model never answers) is stopped, is `error`, and leaves no
/// process behind: the agent's command line holds the marker, so any survivor is found.
#[test]
fn a_timeout_leaves_no_process_behind() {
    for agent in AGENTS.iter().map(|a| a()) {
        let marker = format!("SLOW-{}", agent.name.to_uppercase());
        let model = ScriptedModel::start();
        model.script(&marker, vec![Turn::Hang]);
        let suite = Suite::new();
        suite.file(
            "tests/ws/slow.aptitude.yaml",
            &format!(
                "name: slow\nprompt: \"{marker}: wait\"\ntimeout: 6s\nassertions:\n  - tool: Bash\n    called: false\n"
            ),
        );
        let (_, results, stderr) = run_on(&suite, &model, &agent, &[]);
        let test = &results["tests"][0];
        assert_eq!(
            test["status"], "error",
            "{}\n{stderr}\n{test:#}",
            agent.name
        );
        assert!(
            test["error"].as_str().unwrap_or("").contains("timed out"),
            "{}: {}",
            agent.name,
            test["error"]
        );
        let left = crate::support::procs::running(&marker);
        assert!(left.is_empty(), "{}: left behind: {left:?}", agent.name);
    }
}
