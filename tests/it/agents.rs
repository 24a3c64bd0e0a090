//! `aptitude run` on every agent that runs: the real pinned CLI (`package-lock.json`,
//! installed by `scripts/test`) against the scripted model speaking that agent's wire
//! protocol, through `--agent`, `--agent-bin` and `--agent-base-url`, asserting on results
//! JSON. One test file gives the same verdicts on every agent.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::run::Suite;
use crate::support::cli::Aptitude;
use crate::support::model::{ScriptedModel, Turn};
use crate::support::root;

/// An agent under test: its name, the shell tool it calls and that tool's command key,
/// and the path its wire protocol puts after the server's base URL.
pub(crate) struct Agent {
    pub(crate) name: &'static str,
    shell: &'static str,
    command_key: &'static str,
    extra: Value,
    base_path: &'static str,
}

pub(crate) const AGENTS: &[fn() -> Agent] = &[
    || Agent {
        name: "claude",
        shell: "Bash",
        command_key: "command",
        extra: json!({"description": "run it"}),
        base_path: "",
    },
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
        name: "copilot",
        shell: "bash",
        command_key: "command",
        extra: json!({"description": "run it"}),
        base_path: "/v1",
    },
    || Agent {
        name: "opencode",
        shell: "bash",
        command_key: "command",
        extra: json!({"description": "run it"}),
        base_path: "/v1",
    },
    || Agent {
        name: "pi",
        shell: "bash",
        command_key: "command",
        extra: json!({}),
        base_path: "/v1",
    },
    || Agent {
        name: "qwen",
        shell: "run_shell_command",
        command_key: "command",
        extra: json!({}),
        base_path: "/v1",
    },
];

impl Agent {
    /// A scripted turn calling this agent's shell tool with `command`.
    pub(crate) fn shell_call(&self, command: &str) -> Turn {
        let mut args = json!({ self.command_key: command });
        if let (Some(a), Some(e)) = (args.as_object_mut(), self.extra.as_object()) {
            a.extend(e.clone());
        }
        Turn::Tool(self.shell, args)
    }
}

fn bin(name: &str) -> std::path::PathBuf {
    let bin = root().join("node_modules/.bin").join(name);
    assert!(
        bin.exists(),
        "{} is missing: run `scripts/test`",
        bin.display()
    );
    bin
}

/// The last run's results kept, then `aptitude run tests --no-grade --replay` of them on
/// `agent` against `model` (which must not be asked again).
pub(crate) fn replay_on(
    suite: &Suite,
    model: &ScriptedModel,
    agent: &Agent,
) -> (i32, Value, String) {
    let kept = suite.path().join("recorded.json");
    crate::support::copy_results(suite.results_path(), &kept);
    run_on(
        suite,
        model,
        agent,
        &["--no-grade", "--replay", kept.to_str().unwrap()],
    )
}

/// `aptitude run tests` on `agent` against `model`, with the results JSON.
pub(crate) fn run_on(
    suite: &Suite,
    model: &ScriptedModel,
    agent: &Agent,
    extra: &[&str],
) -> (i32, Value, String) {
    let out = Aptitude::new()
        .sandbox_in(suite.path())
        .inherit_path()
        .env("ANTHROPIC_API_KEY", "sk-ant-test-scripted")
        .env("OPENAI_API_KEY", "sk-test-openai")
        .env("GEMINI_API_KEY", "sk-test-gemini")
        .env("COPILOT_PROVIDER_API_KEY", "sk-test-copilot")
        .env(
            "XDG_CACHE_HOME",
            std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("copilot-cache"),
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
        .args(["--model", "fake-model", "--json"])
        .arg(suite.results_path())
        .args(extra)
        .limit(Duration::from_secs(240))
        .output();
    let results = crate::support::results_text(suite.results_path())
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or(Value::Null);
    (out.code, results, out.stderr)
}

/// The same test file on every agent: the shell calls really run in the workspace copy
/// (the fixture is untouched), the calls are recorded under the canonical name `Bash` with
/// the canonical key `command`, and a failing command's exit code (3) is captured — from
/// the kernel's exec record, which finds both commands' shells on every agent. Every
/// request reached the model through aptitude's gateway with the real key, while the
/// agent's shell printed only a placeholder, and the gateway counted exactly the requests
/// and tokens the model served. The `stdout` review grades through the agent's own
/// one-shot command: it sends the grading prompt to its model (the scripted judge),
/// offering it no tool, and returns its reply.
#[test]
fn one_test_file_gives_the_same_verdicts_on_every_agent() {
    for agent in AGENTS.iter().map(|a| a()) {
        let marker = format!("SHELL-{}", agent.name.to_uppercase());
        let judge = format!("JUDGE-{}", agent.name.to_uppercase());
        let model = ScriptedModel::start();
        // The judge's script first: the grading prompt also quotes the task.
        model.script(
            &judge,
            vec![Turn::Text(
                "{\"score\": 9, \"reasoning\": \"says the command failed\"}".into(),
            )],
        );
        let call = |command: &str| agent.shell_call(command);
        // The first command also prints the agent's own key variable: the gateway's
        // placeholder, never the real key (`gateway::assert_through_the_gateway`).
        let (key_var, _) = crate::gateway::key_of(agent.name);
        model.script(
            &marker,
            vec![
                call(&format!(
                    "printenv {key_var}; echo agent-ok > made.txt && cat made.txt"
                )),
                call("echo failing; exit 3"),
                Turn::Text("Made the file; the second command failed with 3.".into()),
            ],
        );
        let suite = Suite::new();
        suite.file("tests/ws/keep.txt", "fixture\n").file(
            "tests/ws/shell.aptitude.yaml",
            &format!(
                "name: shell\nprompt: \"{marker}: make the file\"\nassertions:\n  - tool: Bash\n    params:\n      command: \"*made.txt*\"\n  - tool: Bash\n    call_count: 2\n  - exit_code: 3\n  - file_contains: {{path: made.txt, text: agent-ok}}\n  - ran: \"exit 3\"\n  - stdout:\n      review: \"{judge}: says that the second command failed\"\n"
            ),
        );
        let (code, results, stderr) = run_on(&suite, &model, &agent, &["--no-cache"]);
        let test = &results["tests"][0];
        assert_eq!(
            test["status"], "passed",
            "{}: exit {code}\n{stderr}\n{test:#}",
            agent.name
        );
        assert_eq!(code, 0, "{}", agent.name);
        // Both commands are matched to the shells the kernel saw this agent spawn, the
        // failing one's exit code (3) the kernel's.
        assert_eq!(
            test["execs"]["status"], "recorded",
            "{}: {test:#}",
            agent.name
        );
        assert_eq!(test["execs"]["calls"], 2, "{}: {test:#}", agent.name);
        assert_eq!(
            test["transcript"]["tool_calls"][1]["exit_by_kernel"], true,
            "{}: {test:#}",
            agent.name
        );
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
        // The review graded through the agent's own one-shot command, which sends the
        // grading prompt to its model (the scripted judge) offering it no tool.
        let judged = model.requests_for(&judge);
        assert!(!judged.is_empty(), "{}: the judge was asked", agent.name);
        for request in &judged {
            assert_eq!(
                crate::conversation::offered_tools(&request.body),
                Vec::<String>::new(),
                "{}: the grading call offers no tool: {}",
                agent.name,
                request.body
            );
        }
        let review = test["assertions"]
            .as_array()
            .and_then(|a| a.iter().find(|a| a["kind"] == "stdout"))
            .unwrap_or_else(|| panic!("{}: no review in {test:#}", agent.name));
        assert_eq!(
            (&review["status"], &review["score"]),
            (&serde_json::json!("pass"), &serde_json::json!(9)),
            "{}: {review:#}",
            agent.name
        );
        let run: Vec<_> = model
            .requests()
            .into_iter()
            .filter(|r| r.script.as_deref() != Some(judge.as_str()))
            .collect();
        crate::gateway::assert_through_the_gateway(agent.name, test, &run);
    }
}

/// `each` on every agent under test, each on a thread of its own, and what each returned,
/// in the agents' order: for runs that are mostly waiting (an outage's back-off, a
/// timeout).
fn side_by_side<T: Send>(each: impl Fn(Agent) -> T + Sync) -> Vec<T> {
    std::thread::scope(|scope| {
        let runs: Vec<_> = AGENTS
            .iter()
            .map(|a| {
                let each = &each;
                scope.spawn(move || each(a()))
            })
            .collect();
        runs.into_iter().map(|run| run.join().unwrap()).collect()
    })
}

/// A model that answers 500 makes the run `error` (the agents' retries are bounded where
/// they can be), with the agent's message and the time it took. The agents run side by
/// side. Copilot CLI 1.0.102, opencode 1.18.33 and Qwen Code 0.24.4 retry a 5xx with a
/// back-off no setting shortens (~20 s, ~80 s, ~80 s), so theirs is the outage as a
/// provider announces it: a 503 with `retry-after: 1`, which all three honour (Qwen Code
/// only on 429/503) — still retried, and each retry is seen, in seconds instead of minutes.
#[test]
fn a_failing_model_is_an_error() {
    let runs = side_by_side(|agent| {
        let marker = format!("FAIL-{}", agent.name.to_uppercase());
        let model = ScriptedModel::start();
        let outage = match agent.name {
            "copilot" | "opencode" | "qwen" => Turn::HttpRetryAfter(503, 1, "scripted outage"),
            _ => Turn::Http(500, "scripted outage"),
        };
        model.script(&marker, vec![outage]);
        let suite = Suite::new();
        suite.file(
            "tests/ws/fail.aptitude.yaml",
            &format!(
                "name: fail\nprompt: \"{marker}: do it\"\nassertions:\n  - tool: Bash\n    called: false\n"
            ),
        );
        let started = Instant::now();
        let (code, results, stderr) = run_on(&suite, &model, &agent, &["--no-grade"]);
        let requests = model.requests_for(&marker).len();
        (
            agent.name,
            code,
            results,
            stderr,
            started.elapsed(),
            requests,
        )
    });
    for run in runs {
        let (name, code, results, stderr, took, requests) = run;
        let test = &results["tests"][0];
        assert_eq!(
            test["status"], "error",
            "{name}: a model 5xx must never pass\n{stderr}\n{test:#}"
        );
        assert_eq!(code, 1, "{name}");
        assert!(
            test["error"]
                .as_str()
                .is_some_and(|e| e.contains("model API error")),
            "{name}: {}",
            test["error"]
        );
        assert!(test["duration_ms"].as_u64().is_some());
        if matches!(name, "copilot" | "opencode" | "qwen") {
            assert!(
                requests > 1,
                "{name}: its retries were not seen: {requests}"
            );
        }
        eprintln!(
            "{name}: model 5xx → error in {took:?} after {requests} requests: {}",
            test["error"]
        );
    }
}

/// A run past its timeout (the model never answers) is stopped, is `error`, and leaves no
/// process behind: the agent's command line holds the marker, so any survivor is found.
/// The agents run side by side (each its own marker and model): a run is mostly waiting
/// for its 6 s timeout.
#[test]
fn a_timeout_leaves_no_process_behind() {
    let runs = side_by_side(|agent| {
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
        let (_, results, stderr) = run_on(&suite, &model, &agent, &["--no-grade"]);
        let left = crate::support::procs::running(&marker);
        (agent.name, results, stderr, left)
    });
    for run in runs {
        let (name, results, stderr, left) = run;
        let test = &results["tests"][0];
        assert_eq!(test["status"], "error", "{name}\n{stderr}\n{test:#}");
        assert!(
            test["error"].as_str().unwrap_or("").contains("timed out"),
            "{name}: {}",
            test["error"]
        );
        assert!(left.is_empty(), "{name}: left behind: {left:?}");
    }
}

/// Cursor's CLI can not be installed here (not on npm; it talks only to Cursor's backend),
/// so its adapter's process handling runs against a stand-in `cursor-agent` that checks
/// the documented flags, runs the capture's two commands (the kernel's exec record must see
/// what the stream says ran) and replays a real capture (`corpus/cursor-stream-json`). This
/// verifies aptitude's side only; docs/agents.md says `run` with Cursor is not verified
/// against the real binary.
#[test]
fn cursor_runs_through_a_stand_in_replaying_a_real_capture() {
    let capture =
        crate::support::data("corpus/cursor-stream-json/reifying_experiments_direct-sleep.jsonl");
    let suite = Suite::new();
    let stub = suite.path().join("cursor-agent");
    std::fs::write(
        &stub,
        format!(
            "#!/bin/sh\n\
             if [ \"$1\" = --version ]; then echo 2026.01.28-stand-in; exit 0; fi\n\
             case \"$*\" in *'-p --output-format stream-json --force --trust --model auto'*) ;; *) echo \"unexpected flags: $*\" >&2; exit 9;; esac\n\
             case \"$*\" in *STAND-IN-HANG*) sleep 317; exit 0;; esac\n\
             sh -c 'sleep 5' & sh -c 'sleep 3' & wait\n\
             cat <<'APTITUDE-CAPTURE-END'\n{}\nAPTITUDE-CAPTURE-END\n",
            std::fs::read_to_string(&capture).unwrap().trim_end()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&stub, std::fs::Permissions::from_mode(0o755)).unwrap();
    suite
        .file(
            "tests/ws/replay.aptitude.yaml",
            "name: replay\nprompt: \"sleep twice\"\nagent: cursor\nmodel: auto\nassertions:\n  - tool: Bash\n    params: {command: \"sleep 5\"}\n  - tool: Bash\n    call_count: 2\n  - exit_code: 0\n",
        )
        .file(
            "tests/ws/asks.aptitude.yaml",
            "name: asks\nprompt: \"sleep twice\"\nagent: cursor\nmodel: auto\nuser:\n  script: [{when: sides, say: six}]\nassertions:\n  - did_not_ask: {about: sides}\n  - user_turns: {max: 3}\n",
        )
        .file(
            "tests/ws/hang.aptitude.yaml",
            "name: hang\nprompt: \"STAND-IN-HANG\"\nagent: cursor\nmodel: auto\ntimeout: 3s\nassertions:\n  - tool: Bash\n    called: false\n",
        );
    let out = Aptitude::new()
        .sandbox_in(suite.path())
        .inherit_path()
        .current_dir(suite.path())
        .args(["run", "tests", "--no-grade", "--agent-bin"])
        .arg(format!("cursor={}", stub.display()))
        .arg("--json")
        .arg(suite.results_path())
        .limit(Duration::from_secs(60))
        .output();
    let results: Value =
        serde_json::from_str(&crate::support::results_text(suite.results_path()).unwrap()).unwrap();
    let stderr = &out.stderr;
    let replay = crate::run::test(&results, "replay");
    assert_eq!(replay["status"], "passed", "{stderr}\n{replay:#}");
    assert_eq!(replay["agent_id"], "cursor");
    assert_eq!(replay["agent"], "cursor 2026.01.28-stand-in");
    // No channel carries Cursor's questions to a user: each conversation assertion is
    // `error`, saying why, never a pass ("it did not ask" can not be told from "nobody
    // could hear").
    let asks = crate::run::test(&results, "asks");
    assert_eq!(asks["status"], "error", "{asks:#}");
    for a in asks["assertions"].as_array().unwrap() {
        assert_eq!(a["status"], "error", "{a:#}");
        let detail = a["detail"].as_str().unwrap_or_default();
        assert!(
            detail.contains("no channel carries the agent's questions")
                && detail.contains("cursor"),
            "{detail}"
        );
    }
    let hang = crate::run::test(&results, "hang");
    assert_eq!(hang["status"], "error", "{hang:#}");
    assert!(hang["error"].as_str().unwrap_or("").contains("timed out"));
    // The stand-in (its command line holds the prompt) and its child are both gone.
    assert!(crate::support::procs::running("STAND-IN-HANG").is_empty());
    assert!(crate::support::procs::running("sleep 317").is_empty());

    // A version pin the CLI does not meet stops the run before any test (the binary
    // named by `APTITUDE_CURSOR_BIN` this time); a test's own `version:` pin too.
    std::fs::remove_file(suite.results_path()).unwrap();
    let pinned = Aptitude::new()
        .sandbox_in(suite.path())
        .inherit_path()
        .env("APTITUDE_CURSOR_BIN", &stub)
        .current_dir(suite.path())
        .args([
            "run",
            "tests",
            "--no-grade",
            "--agent-version",
            "cursor=2026.02.01",
        ])
        .arg("--json")
        .arg(suite.results_path())
        .limit(Duration::from_secs(60))
        .output();
    let stderr = &pinned.stderr;
    assert_eq!(pinned.code, 2, "{stderr}");
    assert!(
        stderr.contains("agent `cursor` must be version 2026.02.01, but")
            && stderr.contains("reports `2026.01.28-stand-in`")
            && stderr.contains("nothing was run"),
        "{stderr}"
    );
    assert!(!suite.results_path().exists(), "no test ran");
}

/// Aider (PyPI, pinned in `tests/agents-requirements.txt`, installed by `scripts/test`):
/// its applied edit is recorded as a `Write`, the file is in the workspace copy, and an
/// assertion about shell commands it can not record is `error`, never a pass or a fail.
/// A model that fails makes the run `error` although Aider exits 0: a 400, which Aider
/// does not retry, where a 500 would cost its hard-coded ~75 s of retries (that 500's
/// recorded stdout is an error too: `corpus::failures_the_agent_exits_0_on_are_failed_outcomes`).
/// A question Aider asks in plain text is answered by a turn that restores its chat
/// history (issue 41).
#[test]
fn aider_records_its_edits_and_never_fakes_a_shell_verdict() {
    let aider = root().join(".venv-agents/bin/aider");
    assert!(
        aider.exists(),
        "{} is missing: run `scripts/test`",
        aider.display()
    );
    let model = ScriptedModel::start();
    model.script(
        "AIDER-EDIT",
        vec![Turn::Text(
            "I will create the file.\n\nout.txt\n```\n<<<<<<< SEARCH\n=======\nhello\n>>>>>>> REPLACE\n```\n".into(),
        )],
    );
    model.script("AIDER-FAIL", vec![Turn::Http(400, "scripted refusal")]);
    model.script(
        "AIDER-ASK",
        vec![
            Turn::Text("I can add it.\n\nHow many sides should the die have?".into()),
            // Never served: the restored history puts Aider's own "Ok." (after "I am not
            // sharing any files…") between the question and the reply, so the follow-up
            // request holds two replies after the prompt.
            Turn::Text("(not served)".into()),
            Turn::Text(
                "Six it is.\n\nsides.txt\n```\n<<<<<<< SEARCH\n=======\n6\n>>>>>>> REPLACE\n```\n"
                    .into(),
            ),
        ],
    );
    let suite = Suite::new();
    suite
        .file(
            "tests/ws/edit.aptitude.yaml",
            "name: edit\nprompt: \"AIDER-EDIT: create out.txt containing hello\"\nassertions:\n  - tool: Write\n    params: {file_path: \"*out.txt\"}\n  - file_contains: {path: out.txt, text: hello}\n",
        )
        .file(
            "tests/ws/shell.aptitude.yaml",
            "name: shell\nprompt: \"AIDER-EDIT: create out.txt\"\nassertions:\n  - tool: Bash\n    called: false\n",
        )
        .file(
            "tests/ws/asks.aptitude.yaml",
            "name: asks\nprompt: \"AIDER-ASK: add a dice roller\"\nuser:\n  knows: {sides: 6}\n  script:\n    - {when: sides, say: \"Six-sided, 1 to 6.\"}\nassertions:\n  - asked: {about: sides, before: [Write]}\n  - user_turns: {min: 1, max: 1}\n  - elicited: [sides]\n  - file_contains: {path: sides.txt, text: \"6\"}\n",
        )
        .file(
            "tests/ws/fail.aptitude.yaml",
            "name: fail\nprompt: \"AIDER-FAIL: do it\"\nassertions:\n  - file_absent: nothing.txt\n",
        );
    let out = Aptitude::new()
        .sandbox_in(suite.path())
        .inherit_path()
        .env("OPENAI_API_KEY", "sk-test-openai")
        .current_dir(suite.path())
        .args([
            "run",
            "tests",
            "--no-grade",
            "--agent",
            "aider",
            "--model",
            "fake-model",
        ])
        .arg("--agent-bin")
        .arg(format!("aider={}", aider.display()))
        .arg("--agent-base-url")
        .arg(format!("aider={}/v1", model.base_url()))
        .arg("--json")
        .arg(suite.results_path())
        .limit(Duration::from_secs(300))
        .output();
    let stderr = &out.stderr;
    let results: Value = serde_json::from_str(
        &crate::support::results_text(suite.results_path()).unwrap_or_else(|_| panic!("{stderr}")),
    )
    .unwrap();
    let edit = crate::run::test(&results, "edit");
    assert_eq!(edit["status"], "passed", "{stderr}\n{edit:#}");
    let shell = crate::run::test(&results, "shell");
    assert_eq!(shell["status"], "error", "{shell:#}");
    assert!(
        shell["assertions"][0]["detail"]
            .as_str()
            .unwrap_or("")
            .contains("aider records no shell commands"),
        "{shell:#}"
    );
    let fail = crate::run::test(&results, "fail");
    assert_eq!(fail["status"], "error", "{fail:#}");
    assert!(
        fail["error"]
            .as_str()
            .is_some_and(|e| e.contains("model API error") && e.contains("scripted refusal")),
        "{fail:#}"
    );
    assert!(!suite.path().join("tests/ws/out.txt").exists());
    // A plain-text question answered by a follow-up turn that restores the chat history
    // (`--restore-chat-history`): the model's next request holds the question and the
    // scripted answer, and the edit made after it counts as after the question.
    let asks = crate::run::test(&results, "asks");
    assert_eq!(asks["status"], "passed", "{stderr}\n{asks:#}");
    assert_eq!(asks["dialog"]["channel"]["kind"], "plain_text", "{asks:#}");
    let requests = model.requests_for("AIDER-ASK");
    assert_eq!(requests.len(), 2, "the question, then the follow-up turn");
    let next = requests[1].body.to_string();
    assert!(
        next.contains("How many sides should the die have?") && next.contains("Six-sided, 1 to 6."),
        "{next}"
    );
}
