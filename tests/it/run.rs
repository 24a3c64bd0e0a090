//! `aptitude run` end to end: the real `claude` (2.1.328, installed by `scripts/test`)
//! against the scripted model, asserting on results JSON.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::cli::{Aptitude, Output};
use crate::support::model::{ScriptedModel, Turn};
use crate::support::procs::Ready;

/// How long one `aptitude run` of the real agent may take.
const RUN_LIMIT: Duration = Duration::from_secs(240);

/// A directory of tests for one `aptitude run`.
pub struct Suite {
    dir: tempfile::TempDir,
}

impl Suite {
    pub fn new() -> Self {
        Suite {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `rel` (creating directories) with `text`.
    pub fn file(&self, rel: &str, text: &str) -> &Self {
        let path = self.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        self
    }

    pub fn results_path(&self) -> PathBuf {
        self.path().join("results.json")
    }

    /// `aptitude run tests --claude-bin CLAUDE --json results.json` in this directory, its
    /// `HOME` and `TMPDIR` here too (so a second run finds the first one's grade cache),
    /// with the agent pointed at `model`; not started.
    pub fn aptitude(&self, model: &ScriptedModel) -> Aptitude {
        let mut cmd = Aptitude::new();
        cmd.sandbox_in(self.path())
            .current_dir(self.path())
            .model(model)
            .args(["run", "tests"])
            .claude()
            .arg("--json")
            .arg(self.results_path())
            .limit(RUN_LIMIT);
        cmd
    }
}

/// What one `aptitude run` printed, and the results JSON it wrote.
pub struct RunOutput {
    /// The exit code.
    pub code: i32,
    /// Stdout.
    pub stdout: String,
    /// Stderr.
    pub stderr: String,
    /// The results JSON, when one was written.
    pub results: Option<Value>,
    out: Output,
}

impl RunOutput {
    /// The insta settings of the run ([`Output::settings`]).
    pub fn settings(&self) -> insta::Settings {
        self.out.settings()
    }
}

/// Runs the suite's tests ([`Suite::aptitude`]) with `extra` arguments.
pub fn aptitude_run(suite: &Suite, model: &ScriptedModel, extra: &[&str]) -> RunOutput {
    let out = suite.aptitude(model).args(extra).output();
    let results = crate::support::results_text(suite.results_path())
        .ok()
        .map(|t| serde_json::from_str(&t).unwrap());
    RunOutput {
        code: out.code,
        stdout: out.stdout.clone(),
        stderr: out.stderr.clone(),
        results,
        out,
    }
}

pub fn test<'a>(results: &'a Value, name: &str) -> &'a Value {
    results["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no test {name} in {results:#}"))
}

fn commands(test: &Value) -> Vec<String> {
    test["transcript"]["tool_calls"]
        .as_array()
        .map(|calls| {
            calls
                .iter()
                .map(|c| c["input"]["command"].as_str().unwrap_or("").to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn tool_calls_really_run_in_a_workspace_copy_and_the_fixture_is_untouched() {
    let model = ScriptedModel::start();
    model.script(
        "increment-marker",
        vec![
            Turn::Tool(
                "Bash",
                json!({"command": "./increment.sh", "description": "increment"}),
            ),
            Turn::Text("The counter is now 43.".into()),
        ],
    );
    let suite = Suite::new();
    suite
        .file("tests/counter/counter.txt", "42\n")
        .file("tests/counter/increment.sh", "#!/bin/sh\nn=$(cat counter.txt)\necho $((n + 1)) > counter.txt\necho incremented\n")
        .file(
            "tests/counter/inc.aptitude.yaml",
            "name: increments\nprompt: \"increment-marker: run increment.sh\"\nassertions:\n  - tool: Bash\n    params:\n      command: \"*increment.sh\"\n  - tool: Read\n    called: false\n",
        );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        suite.path().join("tests/counter/increment.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();

    // `-v` adds each tool call as it is made.
    let out = aptitude_run(&suite, &model, &["--keep-workspaces", "--record", "-v"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(
        out.stderr, "",
        "no engine diagnostics without -vv or RUST_LOG"
    );
    out.settings()
        .bind(|| insta::assert_snapshot!("run_passed_kept_workspace", out.stdout));
    let results = out.results.unwrap();
    let t = test(&results, "increments");
    assert_eq!(t["status"], "passed");
    assert_eq!(
        t["files"],
        json!([{
            "path": "counter.txt",
            "change": "modified",
            "size": 3,
            "diff": "--- a/counter.txt\n+++ b/counter.txt\n@@ -1 +1 @@\n-42\n+43\n"
        }])
    );
    let call = &t["transcript"]["tool_calls"][0];
    assert_eq!(call["output"], "incremented");
    assert_eq!(call["exit_code"], 0);
    assert_eq!(t["transcript"]["final_text"], "The counter is now 43.");
    assert!(
        t["agent"].as_str().unwrap().contains("2.1.328"),
        "{}",
        t["agent"]
    );
    // The agent's Bash call changed the copy, not the fixture.
    let kept = PathBuf::from(t["workspace"].as_str().unwrap());
    assert_eq!(
        std::fs::read_to_string(kept.join("counter.txt")).unwrap(),
        "43\n"
    );
    assert_eq!(
        std::fs::read_to_string(suite.path().join("tests/counter/counter.txt")).unwrap(),
        "42\n"
    );
    assert!(
        !kept.join("inc.aptitude.yaml").exists(),
        "the agent never sees its test"
    );
    assert!(
        out.stdout
            .contains(&format!("workspace kept at {}", kept.display())),
        "{}",
        out.stdout
    );
    std::fs::remove_dir_all(kept.parent().unwrap()).unwrap();
    // --record leaves the raw transcript beside the test, for offline re-evaluation.
    let recorded = suite.path().join("tests/counter/inc.transcript.jsonl");
    assert_eq!(t["recorded"], "tests/counter/inc.transcript.jsonl");
    let text = std::fs::read_to_string(&recorded).unwrap();
    assert!(
        !text.contains("sk-ant-test-scripted"),
        "recorded transcripts are redacted"
    );
    Aptitude::new()
        .current_dir(suite.path())
        .args(["analyze", "tests/counter"])
        .output()
        .code(0);
    // Turn N's request holds N assistant messages.
    let turns: Vec<usize> = model
        .requests_for("increment-marker")
        .iter()
        .map(|r| r.turn)
        .collect();
    assert_eq!(turns, [0, 1]);
}

/// `--record` never overwrites a transcript that is already beside a test reached only by
/// discovery (a bundled example's, a fixture kept from elsewhere): the result says why.
/// Naming the test's directory asks for it, and the transcript is replaced.
#[test]
fn record_keeps_a_transcript_it_was_not_asked_to_replace() {
    let model = ScriptedModel::start();
    model.script("record-marker", vec![Turn::Text("Nothing to do.".into())]);
    let suite = Suite::new();
    suite
        .file("tests/example/ex.transcript.jsonl", "{\"kept\":true}\n")
        .file(
            "tests/example/ex.aptitude.yaml",
            "name: example\nprompt: \"record-marker: nothing\"\nassertions:\n  - tool: Read\n    called: false\n",
        );
    let transcript = suite.path().join("tests/example/ex.transcript.jsonl");
    let out = aptitude_run(&suite, &model, &["--record"]);
    assert_eq!(out.code, 0, "{}", out.out.both());
    let results = out.results.expect("results");
    assert_eq!(
        test(&results, "example")["recorded"],
        "not recorded: tests/example/ex.transcript.jsonl exists, and --record replaces a transcript only for a test named on the command line (the test file or its directory)"
    );
    assert_eq!(
        std::fs::read_to_string(&transcript).unwrap(),
        "{\"kept\":true}\n"
    );
    let named = Aptitude::new()
        .sandbox_in(suite.path())
        .current_dir(suite.path())
        .model(&model)
        .args(["run", "tests/example", "--record"])
        .claude()
        .limit(RUN_LIMIT)
        .output();
    named.code(0);
    let text = std::fs::read_to_string(&transcript).unwrap();
    assert!(text.contains("Nothing to do."), "{text}");
}

#[test]
fn parallel_tests_do_not_mix_transcripts() {
    let model = ScriptedModel::start();
    let suite = Suite::new();
    let names = ["alpha", "bravo", "charlie", "delta"];
    for name in names {
        model.script(
            &format!("marker-{name}"),
            vec![
                {
                    let call = Turn::Tool(
                        "Bash",
                        json!({"command": format!("echo {name} > {name}.txt")}),
                    );
                    // alpha, first in file order, starts only once delta asked for its
                    // final answer, so the tests finish out of file order.
                    if name == "alpha" {
                        Turn::After("marker-delta", 1, Box::new(call))
                    } else {
                        call
                    }
                },
                // alpha's answer comes 3 s later still: delta, answered already, has
                // only to exit and be checked meanwhile (it did not always, on 2 loaded
                // cores, with no delay).
                if name == "alpha" {
                    Turn::Delay(
                        Duration::from_secs(3),
                        Box::new(Turn::Text(format!("wrote {name}"))),
                    )
                } else {
                    Turn::Text(format!("wrote {name}"))
                },
            ],
        );
        suite.file(
            &format!("tests/{name}.aptitude.yaml"),
            &format!("name: {name}\nprompt: \"marker-{name}\"\nassertions:\n  - tool: Bash\n    params:\n      command: \"echo {name}*\"\n"),
        );
    }
    let out = aptitude_run(&suite, &model, &["--jobs", "4"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let results = out.results.unwrap();
    let order: Vec<&str> = results["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(order, names, "results JSON is in file order");
    // Each test has its own command, file and answer, none of another's.
    let seen: Vec<Value> = names
        .iter()
        .map(|name| {
            let t = test(&results, name);
            json!({
                "name": name,
                "commands": commands(t),
                "files": t["files"],
                "final_text": t["transcript"]["final_text"],
            })
        })
        .collect();
    insta::assert_json_snapshot!("parallel_tests_each_their_own", seen);
    // Each run's turns (the reply that called Bash, then the answer) and the model
    // requests the gateway saw, one entry each (for the report's run view).
    for name in names {
        let t = test(&results, name);
        let turns = t["transcript"]["turns"].as_array().unwrap();
        let main: Vec<&Value> = turns.iter().filter(|t| t["agent"] == "main").collect();
        assert_eq!(main.len(), 2, "{name}: {turns:?}");
        assert_eq!(main[0]["calls"], json!([0]), "{name}");
        assert_eq!(main[1]["text"], json!(format!("wrote {name}")), "{name}");
        let traffic = &t["model_traffic"];
        let log = traffic["request_log"].as_array().unwrap();
        assert_eq!(
            Some(log.len() as u64),
            traffic["requests"].as_u64(),
            "{name}"
        );
        assert!(
            log.iter()
                .all(|r| r["status"] == 200 && r["duration_ms"].is_u64()),
            "{name}: {log:?}"
        );
    }
    // Verdicts are printed as tests finish: alpha, the slowest, comes last.
    let alpha = out.stdout.find("✓ alpha").unwrap();
    let delta = out.stdout.find("✓ delta").unwrap();
    assert!(delta < alpha, "{}", out.stdout);
}

/// The timeout must fire while the agent's Bash call runs, so it leaves the agent time to
/// start and ask the model first: Claude Code (a 373 MB Bun binary) under strace, beside
/// three other tests on two cores, once took over 4 s to send its first request in CI.
/// At 15 s the call is under way; its `sleep 60` is what the timeout stops.
#[test]
fn timeout_is_an_error_keeps_the_partial_transcript_and_leaves_no_process() {
    let model = ScriptedModel::start();
    let marker = "sleep 987654";
    model.script(
        "timeout-marker",
        vec![
            Turn::Tool(
                "Bash",
                // A daemon in its own session escapes any process-group kill.
                json!({"command": format!("(setsid {marker} &) ; echo started; sleep 60; echo end")}),
            ),
            Turn::Text("never".into()),
        ],
    );
    let suite = Suite::new();
    suite.file(
        "tests/slow.aptitude.yaml",
        "name: slow\nprompt: \"timeout-marker\"\ntimeout: 15s\nassertions:\n  - tool: Bash\n",
    );
    let out = aptitude_run(&suite, &model, &[]);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let results = out.results.unwrap();
    let t = test(&results, "slow");
    assert_eq!(t["status"], "error");
    assert!(
        !model.requests_for("timeout-marker").is_empty(),
        "the agent asked the model, and got the Bash call, before the timeout: {t:#}"
    );
    assert!(
        t["error"]
            .as_str()
            .unwrap()
            .starts_with("timed out after 15s"),
        "{}",
        t["error"]
    );
    assert_eq!(
        commands(t),
        [format!(
            "(setsid {marker} &) ; echo started; sleep 60; echo end"
        )],
        "the partial transcript is kept"
    );
    let survivors = std::process::Command::new("pgrep")
        .args(["-f", marker])
        .output()
        .unwrap();
    assert!(
        survivors.stdout.is_empty(),
        "orphan processes: {}",
        String::from_utf8_lossy(&survivors.stdout)
    );
}

#[test]
fn a_model_that_never_answers_is_a_timeout_error() {
    let model = ScriptedModel::start();
    model.script("hang-marker", vec![Turn::Hang]);
    let suite = Suite::new();
    suite.file(
        "tests/hung.aptitude.yaml",
        "name: hung\nprompt: \"hang-marker\"\ntimeout: 3s\nassertions:\n  - tool: Read\n    called: false\n",
    );
    let out = aptitude_run(&suite, &model, &[]);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    out.settings()
        .bind(|| insta::assert_snapshot!("run_timed_out", out.stdout));
    let results = out.results.unwrap();
    let t = test(&results, "hung");
    assert_eq!(
        t["status"], "error",
        "a guardrail must not pass on a run that never finished"
    );
    let error = t["error"].as_str().unwrap();
    assert!(error.starts_with("timed out after 3s"), "{error}");
}

#[test]
fn parallel_tool_calls_in_one_message_are_each_recorded() {
    let model = ScriptedModel::start();
    model.script(
        "parallel-marker",
        vec![
            Turn::Tools(vec![
                ("Bash", json!({"command": "cat a.txt"})),
                ("Bash", json!({"command": "cat b.txt"})),
            ]),
            Turn::Text("alpha and bravo".into()),
        ],
    );
    let suite = Suite::new();
    suite
        .file("tests/a.txt", "alpha\n")
        .file("tests/b.txt", "bravo\n")
        .file(
            "tests/parallel.aptitude.yaml",
            "name: parallel\nprompt: \"parallel-marker\"\nassertions:\n  - tool: Bash\n    call_count: 2\n",
        );
    let out = aptitude_run(&suite, &model, &[]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let results = out.results.unwrap();
    let t = test(&results, "parallel");
    assert_eq!(commands(t), ["cat a.txt", "cat b.txt"]);
    let outputs: Vec<&str> = t["transcript"]["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["output"].as_str().unwrap())
        .collect();
    assert_eq!(
        outputs,
        ["alpha", "bravo"],
        "each result joined to its call"
    );
    let requests = model.requests_for("parallel-marker");
    assert_eq!(requests.len(), 2, "one request per turn");
    assert!(
        requests.iter().all(|r| r.path.starts_with("/v1/messages")),
        "{:?}",
        requests.iter().map(|r| &r.path).collect::<Vec<_>>()
    );
}

#[test]
fn model_errors_and_dropped_connections_are_errors_with_the_message() {
    let model = ScriptedModel::start();
    model.script(
        "http500-marker",
        vec![
            Turn::Http(500, "scripted boom"),
            Turn::Http(500, "scripted boom"),
        ],
    );
    model.script(
        "http429-marker",
        vec![Turn::Http(429, "slow down"), Turn::Http(429, "slow down")],
    );
    model.script("drop-marker", vec![Turn::Drop, Turn::Drop]);
    let suite = Suite::new();
    for (name, marker) in [
        ("e500", "http500-marker"),
        ("e429", "http429-marker"),
        ("dropped", "drop-marker"),
    ] {
        suite.file(
            &format!("tests/{name}.aptitude.yaml"),
            &format!("name: {name}\nprompt: \"{marker}\"\nassertions:\n  - tool: Read\n    called: false\n"),
        );
    }
    let out = aptitude_run(&suite, &model, &["--jobs", "3"]);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let results = out.results.unwrap();
    for (name, needle) in [("e500", "500"), ("e429", "429"), ("dropped", "API error")] {
        let t = test(&results, name);
        assert_eq!(
            t["status"], "error",
            "{name}: a guardrail must not pass when the agent never ran"
        );
        let error = t["error"].as_str().unwrap();
        assert!(error.contains(needle), "{name}: {error}");
        assert!(error.starts_with("model API error"), "{name}: {error}");
    }
    assert!(
        test(&results, "e500")["error"]
            .as_str()
            .unwrap()
            .contains("scripted boom")
    );
}

#[test]
fn an_agent_exiting_non_zero_is_an_error_with_its_message() {
    let model = ScriptedModel::start();
    let suite = Suite::new();
    suite.file(
        "tests/t.aptitude.yaml",
        "name: bad-flag\nprompt: p\nassertions:\n  - tool: Bash\n    called: false\n",
    );
    let out = aptitude_run(&suite, &model, &["--permission-mode", "bogus"]);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    out.settings()
        .bind(|| insta::assert_snapshot!("run_agent_exited_non_zero", out.stdout));
    let t = test(out.results.as_ref().unwrap(), "bad-flag");
    assert_eq!(t["status"], "error");
    let error = t["error"].as_str().unwrap();
    assert!(
        error.starts_with("the agent exited with code 1 without a result"),
        "{error}"
    );
    assert!(
        error.contains("'bogus' is invalid"),
        "the agent's own message is kept: {error}"
    );
    assert!(model.requests().is_empty());
}

#[test]
fn a_crashed_agent_is_an_error_with_what_was_captured() {
    let model = ScriptedModel::start();
    // The agent's own Bash call kills it: Claude Code dies mid-run, without a result.
    model.script(
        "crash-marker",
        vec![
            Turn::Tool("Bash", json!({"command": "echo bye; kill -9 $PPID"})),
            Turn::Text("unreachable".into()),
        ],
    );
    let suite = Suite::new();
    suite.file(
        "tests/t.aptitude.yaml",
        "name: crash\nprompt: \"crash-marker\"\nassertions:\n  - tool: Bash\n",
    );
    let out = aptitude_run(&suite, &model, &[]);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    out.settings()
        .bind(|| insta::assert_snapshot!("run_agent_crashed", out.stdout));
    let t = test(out.results.as_ref().unwrap(), "crash");
    assert_eq!(t["status"], "error");
    let error = t["error"].as_str().unwrap();
    assert!(error.contains("killed by signal 9"), "{error}");
    assert_eq!(commands(t), ["echo bye; kill -9 $PPID"]);
}

#[test]
fn max_turns_and_setup_failures_are_errors() {
    let model = ScriptedModel::start();
    model.script(
        "turns-marker",
        vec![
            Turn::Tool("Bash", json!({"command": "echo one"})),
            Turn::Tool("Bash", json!({"command": "echo two"})),
            Turn::Text("done".into()),
        ],
    );
    let suite = Suite::new();
    suite
        .file("tests/turns.aptitude.yaml", "name: turns\nprompt: \"turns-marker\"\nmax_turns: 1\nassertions:\n  - tool: Bash\n")
        .file(
            "tests/setup.aptitude.yaml",
            "name: setup\nprompt: \"setup-marker\"\nsetup:\n  - \"echo preparing; echo broken >&2; exit 3\"\nassertions:\n  - tool: Bash\n",
        );
    let out = aptitude_run(&suite, &model, &[]);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let results = out.results.unwrap();
    let turns = test(&results, "turns");
    assert_eq!(turns["status"], "error");
    assert!(
        turns["error"]
            .as_str()
            .unwrap()
            .starts_with("max turns reached"),
        "{}",
        turns["error"]
    );
    let setup = test(&results, "setup");
    assert_eq!(setup["status"], "error");
    assert_eq!(
        setup["error"],
        "setup `echo preparing; echo broken >&2; exit 3` exited with code 3:\npreparing\nbroken"
    );
    assert!(
        model.requests_for("setup-marker").is_empty(),
        "no agent runs after a failed setup"
    );
}

#[test]
fn a_missing_agent_is_one_clear_error_before_any_test() {
    let suite = Suite::new();
    suite.file(
        "tests/a.aptitude.yaml",
        "name: a\nprompt: p\nassertions:\n  - tool: Bash\n",
    );
    let out = Aptitude::new()
        .env("PATH", "/nonexistent")
        .current_dir(suite.path())
        .args(["run", "tests"])
        .output();
    out.code(2);
    assert_eq!(out.stdout, "");
    assert_eq!(
        out.stderr,
        "error: the `claude` agent CLI was not found (`claude` on PATH); install it with `npm install -g @anthropic-ai/claude-code@2.1.328`, or name the binary with --agent-bin claude=PATH or APTITUDE_CLAUDE_BIN\nerror: nothing was run\n"
    );
}

#[test]
fn sigterm_stops_running_agents_and_keeps_finished_results() {
    use std::io::{BufRead, BufReader};
    let model = ScriptedModel::start();
    let suite = Suite::new();
    // The stuck test's daemon says when it is running, as the daemon it is (its own
    // session, escaping a process-group kill).
    let ready = Ready::new(suite.path().join("stuck.ready"));
    model.script("quick-marker", vec![Turn::Text("quick answer".into())]);
    model.script(
        "stuck-marker",
        vec![
            Turn::Tool(
                "Bash",
                json!({"command": format!(
                    "(setsid sh -c 'echo go > {}; exec sleep 876543' &) ; echo waiting; sleep 120; echo end",
                    ready.path().display()
                )}),
            ),
            Turn::Text("never".into()),
        ],
    );
    suite
        .file("tests/a-quick.aptitude.yaml", "name: quick\nprompt: \"quick-marker\"\nassertions:\n  - tool: Bash\n    called: false\n")
        .file("tests/b-stuck.aptitude.yaml", "name: stuck\nprompt: \"stuck-marker\"\nassertions:\n  - tool: Bash\n")
        .file("tests/c-pending.aptitude.yaml", "name: pending\nprompt: \"pending-marker\"\nassertions:\n  - tool: Bash\n");
    // The daemon says it runs through a FIFO outside the workspace, which a sandboxed
    // command can not reach: this is aptitude's own signal handling, sandbox off.
    let mut run = suite
        .aptitude(&model)
        .args(["--jobs", "1", "--sandbox", "off"])
        .spawn();
    // Wait for the quick test's verdict, then for the stuck test's daemon to be running.
    let mut stdout = BufReader::new(run.child.stdout.take().unwrap());
    let mut seen = String::new();
    while !seen.contains("✓ quick") {
        let mut line = String::new();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "aptitude ended early: {seen}"
        );
        seen.push_str(&line);
    }
    ready.wait(&mut run.child, Duration::from_secs(120));
    assert!(pgrep("sleep 876543"), "the daemon runs");
    run.signal(nix::sys::signal::Signal::SIGTERM);
    let status = run.child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let results: Value =
        serde_json::from_str(&crate::support::results_text(suite.results_path()).unwrap()).unwrap();
    assert_eq!(test(&results, "quick")["status"], "passed");
    let stuck = test(&results, "stuck");
    assert_eq!(stuck["status"], "error");
    assert!(
        stuck["error"].as_str().unwrap().starts_with("interrupted"),
        "{}",
        stuck["error"]
    );
    let pending = test(&results, "pending");
    assert_eq!(pending["status"], "error");
    assert_eq!(pending["error"], "interrupted before it started");
    assert!(
        !pgrep("sleep 876543"),
        "an agent's process survived the interruption"
    );
}

fn pgrep(pattern: &str) -> bool {
    let out = std::process::Command::new("pgrep")
        .args(["-f", pattern])
        .output()
        .unwrap();
    !out.stdout.is_empty()
}
