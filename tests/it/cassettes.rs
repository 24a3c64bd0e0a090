//! Cassettes end to end: a run recorded with `--record-model` is replayed with `--replay`
//! by the real agent CLI — its tools run again, its workspace is rebuilt, its assertions
//! are evaluated for real — while the model is never asked; replaying twice gives the same
//! transcript; a changed request is a divergence that names the turn.

use serde_json::Value;

use crate::agents::{AGENTS, Agent, run_on};
use crate::run::Suite;
use crate::support::model::{ScriptedModel, Turn};

/// What a transcript says, without what differs between any two runs (timestamps,
/// durations, session ids): the calls (name, input, output, exit code) and the answer.
pub(crate) fn comparable(test: &Value) -> Value {
    let t = &test["transcript"];
    let calls: Vec<Value> = t["tool_calls"]
        .as_array()
        .map(|calls| {
            calls
                .iter()
                .map(|c| {
                    serde_json::json!({
                        "name": c["name"], "input": c["input"], "output": c["output"],
                        "exit_code": c["exit_code"], "is_error": c["is_error"],
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    serde_json::json!({"calls": calls, "final_text": t["final_text"], "outcome": t["outcome"]})
}

/// A suite whose test writes a file through the agent's shell and asserts on the file (a
/// workspace assertion), the tool call and the answer.
fn suite_for(agent: &Agent, marker: &str, model: &ScriptedModel) -> Suite {
    // The command lingers a moment after its output: Qwen Code 0.24.4 sometimes loses the
    // output of a command that exits at once (its terminal capture races the exit), which
    // a replay rightly reports as a divergence of the tool's result.
    model.script(
        marker,
        vec![
            agent.shell_call("echo replayed > out.txt && cat out.txt && sleep 0.5"),
            Turn::Text("Wrote out.txt.".into()),
        ],
    );
    let suite = Suite::new();
    suite.file("tests/ws/keep.txt", "fixture\n").file(
        "tests/ws/t.aptitude.yaml",
        &format!(
            "name: t\nprompt: \"{marker}: write out.txt\"\nassertions:\n  - tool: Bash\n    params:\n      command: \"*out.txt*\"\n  - file_contains: {{path: out.txt, text: replayed}}\n"
        ),
    );
    suite
}

/// Records a run of `agent`, then replays it against a model that answers nothing — twice
/// on Claude Code ([`SECOND_REPLAY`]); returns (recorded, first replay, second replay if
/// any) results and the model's request count after recording and at the end.
fn record_and_replay(agent: &Agent) -> (Value, Value, Option<Value>, usize, usize) {
    let marker = format!("TAPE-{}", agent.name.to_uppercase());
    let model = ScriptedModel::start();
    let suite = suite_for(agent, &marker, &model);
    let (code, recorded, stderr) = run_on(&suite, &model, agent, &["--no-grade", "--record-model"]);
    assert_eq!(code, 0, "{}: recording\n{stderr}\n{recorded:#}", agent.name);
    let after_recording = model.requests().len();
    let file = recorded["tests"][0]["model_traffic"]["cassette"]["file"]
        .as_str()
        .unwrap_or_else(|| panic!("{}: no cassette\n{recorded:#}", agent.name));
    assert!(
        file.starts_with("results.cassettes/"),
        "{}: {file}",
        agent.name
    );
    assert!(suite.path().join(file).is_file(), "{}: {file}", agent.name);
    let kept = suite.path().join("recorded.json");
    crate::support::copy_results(suite.results_path(), &kept);
    let replay = |n: usize| {
        let (code, results, stderr) = run_on(
            &suite,
            &model,
            agent,
            &["--no-grade", "--replay", kept.to_str().unwrap()],
        );
        let test = &results["tests"][0];
        assert_eq!(
            code, 0,
            "{}: replay {n}\n{stderr}\n{}\n{:#}",
            agent.name, test["error"], test["model_traffic"]
        );
        results
    };
    let first = replay(1);
    let second = (agent.name == SECOND_REPLAY).then(|| replay(2));
    (
        recorded,
        first,
        second,
        after_recording,
        model.requests().len(),
    )
}

/// The agent whose recording is replayed a second time. What a replay could change for
/// the next one (the cassette, the kept results) is aptitude's, the same for every agent;
/// that the agent's own requests replay the same is shown on each agent by its first
/// replay, compared with the recording.
const SECOND_REPLAY: &str = "claude";

/// On every agent: a replayed run passes its workspace assertion with zero model
/// requests, answers every request from the cassette, and gives the same transcript as
/// the recording; on Claude Code a second replay gives the same again.
#[test]
fn a_recorded_run_replays_for_free_and_the_same_on_every_agent() {
    std::thread::scope(|scope| {
        let only = std::env::var("APTITUDE_TEST_AGENTS").unwrap_or_default();
        let runs: Vec<_> = AGENTS
            .iter()
            .filter(|a| only.is_empty() || only.split(',').any(|n| n == a().name))
            .map(|a| {
                scope.spawn(move || {
                    let agent = a();
                    (agent.name, record_and_replay(&agent))
                })
            })
            .collect();
        for run in runs {
            let (name, (recorded, first, second, after_recording, at_end)) = run.join().unwrap();
            let rec = &recorded["tests"][0];
            let sent = rec["model_traffic"]["requests"].as_u64().unwrap();
            assert_eq!(second.is_some(), name == SECOND_REPLAY, "{name}");
            for (n, replayed) in [(1, Some(&first)), (2, second.as_ref())] {
                let Some(replayed) = replayed else { continue };
                let test = &replayed["tests"][0];
                assert_eq!(test["status"], "passed", "{name}: replay {n}\n{test:#}");
                assert_eq!(
                    test["model_traffic"]["replayed"], sent,
                    "{name}: replay {n}"
                );
                assert_eq!(test["model_traffic"]["input_tokens"], 0, "{name}");
            }
            assert_eq!(at_end, after_recording, "{name}: a replay asked the model");
            if let Some(second) = &second {
                assert_eq!(
                    comparable(&first["tests"][0]),
                    comparable(&second["tests"][0]),
                    "{name}: two replays differ"
                );
            }
            assert_eq!(
                comparable(rec),
                comparable(&first["tests"][0]),
                "{name}: the replay differs from the recording"
            );
        }
    });
}

/// A replay whose agent sees something else than the recording did (a fixture changed, so
/// a tool's result differs) diverges: with `--replay-miss error` the run is `error`, kind
/// `replay`, naming the turn and the field with both values; with `--replay-miss live`
/// the real model answers from there on and the run goes on.
#[test]
fn a_changed_tool_result_is_a_divergence_naming_the_turn() {
    let model = ScriptedModel::start();
    model.script(
        "TAPE-DIVERGE",
        vec![
            Turn::Tool(
                "Bash",
                serde_json::json!({"command": "cat input.txt", "description": "read it"}),
            ),
            Turn::Text("Read it.".into()),
        ],
    );
    let suite = Suite::new();
    suite.file("tests/ws/input.txt", "recorded-value\n").file(
        "tests/ws/t.aptitude.yaml",
        "name: t\nprompt: \"TAPE-DIVERGE: read input.txt\"\nassertions:\n  - tool: Bash\n    called: true\n",
    );
    let run = |extra: &[&str]| {
        let mut args = vec!["--no-grade"];
        args.extend_from_slice(extra);
        let out = crate::run::aptitude_run(&suite, &model, &args);
        let results = out.results.unwrap_or_else(|| panic!("{}", out.stderr));
        (out.code, results)
    };
    let (code, recorded) = run(&["--record-model"]);
    assert_eq!(code, 0, "{recorded:#}");
    let kept = suite.path().join("recorded.json");
    crate::support::copy_results(suite.results_path(), &kept);
    let served = model.requests_for("TAPE-DIVERGE").len();

    std::fs::write(suite.path().join("tests/ws/input.txt"), "changed-value\n").unwrap();
    let (code, diverged) = run(&["--replay", kept.to_str().unwrap()]);
    let test = &diverged["tests"][0];
    assert_eq!(code, 1);
    assert_eq!(test["status"], "error", "{test:#}");
    assert_eq!(test["error_kind"], "replay", "{test:#}");
    let error = test["error"].as_str().unwrap();
    assert!(
        error.contains(
            "turn 2 of POST /v1/messages?beta=true differs from the recorded request at `messages["
        ) && error.contains("recorded-value")
            && error.contains("changed-value"),
        "{error}"
    );
    assert_eq!(
        model.requests_for("TAPE-DIVERGE").len(),
        served,
        "nothing went live"
    );

    let (code, live) = run(&["--replay", kept.to_str().unwrap(), "--replay-miss", "live"]);
    let test = &live["tests"][0];
    assert_eq!(code, 0, "{test:#}");
    assert_eq!(test["status"], "passed");
    let traffic = &test["model_traffic"];
    assert_eq!(traffic["replayed"], 1, "{traffic:#}");
    assert!(
        traffic["went_live"]
            .as_str()
            .unwrap()
            .starts_with("turn 2 of POST"),
        "{traffic:#}"
    );
    assert_eq!(model.requests_for("TAPE-DIVERGE").len(), served + 1);
}

/// A replay grades nothing again: its answer is the recording's, so each review is
/// answered from the grade the replayed results recorded (no judge call, even without
/// the grade cache).
#[test]
fn a_replay_answers_its_reviews_from_the_recorded_grades() {
    let model = ScriptedModel::start();
    model.script(
        "TAPE-JUDGE",
        vec![Turn::Text(
            "{\"score\": 8, \"reasoning\": \"it greets\"}".into(),
        )],
    );
    model.script("TAPE-GRADED", vec![Turn::Text("hello there".into())]);
    let suite = Suite::new();
    suite.file(
        "tests/ws/t.aptitude.yaml",
        "name: t\nprompt: \"TAPE-GRADED: greet\"\nassertions:\n  - stdout:\n      review: \"TAPE-JUDGE: greets\"\n      threshold: 7\n",
    );
    let first = crate::run::aptitude_run(&suite, &model, &["--record-model", "--no-cache"]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    let kept = suite.path().join("recorded.json");
    crate::support::copy_results(suite.results_path(), &kept);
    let judge_calls = || model.requests_for("TAPE-JUDGE").len();
    let (calls, all) = (judge_calls(), model.requests().len());
    assert_eq!(calls, 1);
    let again = crate::run::aptitude_run(
        &suite,
        &model,
        &["--replay", kept.to_str().unwrap(), "--no-cache"],
    );
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(
        model.requests().len(),
        all,
        "neither the agent nor the judge asked"
    );
    let review = &again.results.unwrap()["tests"][0]["assertions"][0];
    assert_eq!(review["status"], "pass", "{review:#}");
    assert_eq!(review["score"], 8);
    assert_eq!(review["cached"], true);

    // A stricter threshold re-grades the replay from the recorded score, at no cost.
    suite.file(
        "tests/ws/t.aptitude.yaml",
        "name: t\nprompt: \"TAPE-GRADED: greet\"\nassertions:\n  - stdout:\n      review: \"TAPE-JUDGE: greets\"\n      threshold: 9\n",
    );
    let stricter = crate::run::aptitude_run(
        &suite,
        &model,
        &["--replay", kept.to_str().unwrap(), "--no-cache"],
    );
    assert_eq!(model.requests().len(), all, "no call for a new threshold");
    let review = &stricter.results.unwrap()["tests"][0]["assertions"][0];
    assert_eq!(review["status"], "fail", "{review:#}");
    assert_eq!(
        (review["score"].clone(), review["threshold"].clone()),
        (8.into(), 9.into())
    );
}

/// The agents whose cassettes are kept as fixtures in `tests/data/cassettes/<agent>/`.
const KEPT: &[&str] = &["claude", "codex", "gemini"];

/// Copies `from` into `to`, recursively.
pub(crate) fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Replays the kept fixture `fixture` (its results and cassettes, copied into `suite`)
/// on `agent` against a model that answers nothing; returns the model (to count what it
/// was asked), the exit code, the results and stderr.
pub(crate) fn replay_kept(
    fixture: &std::path::Path,
    suite: &Suite,
    agent: &Agent,
) -> (ScriptedModel, i32, Value, String) {
    let model = ScriptedModel::start();
    copy_tree(fixture, suite.path());
    let recorded = suite.path().join("recorded.json");
    let (code, results, stderr) = run_on(
        suite,
        &model,
        agent,
        &["--no-grade", "--replay", recorded.to_str().unwrap()],
    );
    (model, code, results, stderr)
}

/// Cassettes kept as fixtures (recorded once against the scripted model, on another day,
/// another machine, another aptitude build) still replay: the test passes, every request
/// is answered from the cassette, and the model is never asked. `UPDATE_CASSETTES=1`
/// records them again (after an agent's pinned version changed).
#[test]
fn the_kept_cassettes_replay() {
    for agent in AGENTS
        .iter()
        .map(|a| a())
        .filter(|a| KEPT.contains(&a.name))
    {
        let fixture = crate::support::data("cassettes").join(agent.name);
        if std::env::var_os("UPDATE_CASSETTES").is_some() {
            let model = ScriptedModel::start();
            let marker = format!("KEPT-{}", agent.name.to_uppercase());
            let suite = suite_for(&agent, &marker, &model);
            let (code, _, stderr) =
                run_on(&suite, &model, &agent, &["--no-grade", "--record-model"]);
            assert_eq!(code, 0, "{stderr}");
            let _ = std::fs::remove_dir_all(&fixture);
            for part in ["tests", "results.cassettes"] {
                copy_tree(&suite.path().join(part), &fixture.join(part));
            }
            // Kept inline: a committed fixture has no blob pack beside it.
            std::fs::write(
                fixture.join("recorded.json"),
                crate::support::results_text(suite.results_path()).unwrap(),
            )
            .unwrap();
        }
        let suite = Suite::new();
        let (model, code, results, stderr) = replay_kept(&fixture, &suite, &agent);
        let test = &results["tests"][0];
        assert_eq!(code, 0, "{}: {stderr}\n{}", agent.name, test["error"]);
        assert_eq!(test["status"], "passed", "{}", agent.name);
        assert!(
            model.requests().is_empty(),
            "{}: the model was asked",
            agent.name
        );
        assert_eq!(
            test["model_traffic"]["replayed"], test["model_traffic"]["requests"],
            "{}",
            agent.name
        );
    }
}

/// Claude Code's file tools take absolute paths, which a cassette keeps as
/// `@@aptitude:workspace@@/…`: a replay serves them back with the replaying run's own
/// workspace, and the witness compares the agent's stream with that reply as served —
/// parallel calls (a Read and a Bash in one message), a Write and an Edit included. The
/// replay passes witnessed, with no request to the model.
#[test]
fn a_replay_of_file_tools_on_absolute_paths_is_witnessed_not_tampered() {
    let model = ScriptedModel::start();
    let marker = "TAPE-ABSOLUTE";
    model.script(
        marker,
        vec![
            Turn::Tools(vec![
                ("Read", serde_json::json!({"file_path": "counter.txt"})),
                (
                    "Bash",
                    serde_json::json!({"command": "wc -c counter.txt", "description": "count"}),
                ),
            ]),
            Turn::Tool(
                "Write",
                serde_json::json!({"file_path": "note.txt", "content": "forty-two\n"}),
            ),
            Turn::Tool(
                "Edit",
                serde_json::json!({"file_path": "note.txt", "old_string": "forty-two", "new_string": "42"}),
            ),
            Turn::Text("counter.txt holds 42.".into()),
        ],
    );
    let suite = Suite::new();
    suite.file("tests/ws/counter.txt", "42\n").file(
        "tests/ws/t.aptitude.yaml",
        &format!(
            "name: t\nprompt: \"{marker}: what is in counter.txt?\"\nassertions:\n  - tool: Read\n    params:\n      file_path: \"counter.txt\"\n  - file_contains: {{path: note.txt, text: \"42\"}}\n"
        ),
    );
    let claude = AGENTS[0]();
    let (code, recorded, stderr) =
        run_on(&suite, &model, &claude, &["--no-grade", "--record-model"]);
    let test = &recorded["tests"][0];
    assert_eq!(code, 0, "recording\n{stderr}\n{test:#}");
    let read = &test["transcript"]["tool_calls"][0];
    assert!(
        read["input"]["file_path"]
            .as_str()
            .is_some_and(|p| p.starts_with('/') && p.ends_with("/counter.txt")),
        "the scripted model gives Read an absolute path: {read:#}"
    );
    assert_eq!(test["witness"]["status"], "witnessed", "{test:#}");
    let kept = suite.path().join("recorded.json");
    crate::support::copy_results(suite.results_path(), &kept);
    let asked = model.requests().len();
    let (code, replayed, stderr) = run_on(
        &suite,
        &model,
        &claude,
        &["--no-grade", "--replay", kept.to_str().unwrap()],
    );
    let test = &replayed["tests"][0];
    assert_eq!(code, 0, "replay\n{stderr}\n{}", test["error"]);
    assert_eq!(test["status"], "passed", "{test:#}");
    assert_eq!(
        test["witness"]["status"], "witnessed",
        "{:#}",
        test["witness"]
    );
    assert_eq!(test["witness"]["calls"], 4, "{:#}", test["witness"]);
    assert_eq!(model.requests().len(), asked, "a replay asked the model");
}

/// A tool the model's provider runs itself (a web search: Anthropic's `server_tool_use`
/// with its `web_search_tool_result`, which Claude Code shows; Responses' `web_search_call`,
/// which Codex shows as a `web_search` item) is a call the model asked for: the run is
/// witnessed, the call is one, marked server-side, and its replay agrees.
#[test]
fn a_server_side_web_search_is_witnessed_and_replays_on_claude_and_codex() {
    for agent in AGENTS
        .iter()
        .map(|a| a())
        .filter(|a| ["claude", "codex"].contains(&a.name))
    {
        let model = ScriptedModel::start();
        let marker = format!("TAPE-SEARCH-{}", agent.name.to_uppercase());
        model.script(
            &marker,
            vec![Turn::Server {
                name: "web_search",
                input: serde_json::json!({"query": "rust 2024 edition"}),
                result: "web_search_tool_result",
                content: serde_json::json!([{"type": "web_search_result", "title": "Rust 2024", "url": "https://doc.rust-lang.org/edition-guide/rust-2024/", "encrypted_content": "EqgfCioIARgBIiQ3YTAw", "page_age": null}]),
                text: "Rust 2024 is out.".into(),
            }],
        );
        let suite = Suite::new();
        suite.file(
            "tests/ws/t.aptitude.yaml",
            &format!("name: t\nprompt: \"{marker}: search the web for the Rust 2024 edition\"\nassertions:\n  - tool: WebSearch\n"),
        );
        let (code, recorded, stderr) =
            run_on(&suite, &model, &agent, &["--no-grade", "--record-model"]);
        let test = &recorded["tests"][0];
        assert_eq!(code, 0, "{}: recording\n{stderr}\n{test:#}", agent.name);
        assert_eq!(
            test["witness"]["status"], "witnessed",
            "{}: {test:#}",
            agent.name
        );
        let calls = test["transcript"]["tool_calls"].as_array().unwrap();
        assert_eq!(calls.len(), 1, "{}: {calls:#?}", agent.name);
        assert_eq!(calls[0]["server_side"], true, "{}: {calls:#?}", agent.name);
        assert!(
            calls[0]["input"].to_string().contains("rust 2024 edition"),
            "{}: {calls:#?}",
            agent.name
        );
        let kept = suite.path().join("recorded.json");
        crate::support::copy_results(suite.results_path(), &kept);
        let asked = model.requests().len();
        let (code, replayed, stderr) = run_on(
            &suite,
            &model,
            &agent,
            &["--no-grade", "--replay", kept.to_str().unwrap()],
        );
        let test = &replayed["tests"][0];
        assert_eq!(
            code, 0,
            "{}: replay\n{stderr}\n{}",
            agent.name, test["error"]
        );
        assert_eq!(
            test["witness"]["status"], "witnessed",
            "{}: {test:#}",
            agent.name
        );
        assert_eq!(
            model.requests().len(),
            asked,
            "{}: a replay asked",
            agent.name
        );
    }
}

/// Gemini CLI's shell refuses a command substitution itself (its stream says `success`
/// with "Blocked: …", its model is told "Command injection detected: …"): the call is
/// blocked, never ran, and the run is witnessed with the difference noted — not
/// `tampered` — recorded and replayed alike.
#[test]
fn gemini_clis_own_guard_is_blocked_and_noted_not_tampered() {
    own_guard_blocks("gemini", "echo $((6*7))", "command substitution", 1);
}

/// Claude Code's own sleep guard refuses a leading `sleep 30` before the shell runs it
/// (it tells the model `<tool_use_error>Blocked: sleep 30 followed by: …`, Claude Code
/// 2.1.328) even under `--dangerously-skip-permissions`: the call is blocked, never ran,
/// and the model got the very refusal the transcript shows, so the witness has nothing to
/// note — recorded and replayed alike.
#[test]
fn claude_codes_own_sleep_guard_is_blocked_not_tampered() {
    own_guard_blocks("claude", "sleep 30 && echo done", "Blocked: sleep 30", 0);
}

/// Codex's own `rm -f` check refuses a forced removal before a process starts, even under
/// `--dangerously-bypass-approvals-and-sandbox` (the model is told "… rejected: rm -f style
/// commands are not permitted. Use a safer approach", Codex 0.169). Codex's exec events
/// never show such a call, so it is taken from the model traffic: blocked, never ran, the
/// run witnessed with one note, not `tampered` — recorded and replayed alike.
#[test]
fn codexs_own_rm_f_check_is_blocked_not_tampered() {
    own_guard_blocks(
        "codex",
        "rm -rf build",
        "rm -f style commands are not permitted",
        1,
    );
}

/// Gemini CLI's policy engine denies a shell command its workspace settings do not allow
/// (`tools.allowed: ["run_shell_command(echo)"]` narrows the shell to `echo`, a deny rule
/// above `--yolo`'s allow-all; Gemini CLI 0.61, whose workspace policy files are off): the
/// call is blocked ("Tool execution denied by policy."), never ran, and the run is
/// witnessed, not `tampered` — recorded and replayed alike. (`tools.exclude` takes the
/// shell away instead: a call of it is `tool_not_registered`, also blocked.)
#[test]
fn gemini_clis_policy_deny_is_blocked_not_tampered() {
    own_guard_blocks_in(
        "gemini",
        &[(
            ".gemini/settings.json",
            r#"{"tools": {"allowed": ["run_shell_command(echo)"]}}"#,
        )],
        "rm -f notes.txt",
        "denied by policy",
        0,
    );
}

/// Qwen Code has no guard of its own under `--yolo` (0.24.4: `echo $((6*7))` runs and
/// prints 42, where Gemini CLI refuses it), but a deny rule of the workspace's settings
/// holds (`permissions.deny: ["Bash(rm *)"]`: the model is told "This \"run_shell_command\"
/// invocation was denied by permission rules. Matching deny rule: …"): the call is blocked,
/// never ran, and the run is witnessed, not `tampered` — recorded and replayed alike.
#[test]
fn qwen_codes_permission_deny_rule_is_blocked_not_tampered() {
    own_guard_blocks_in(
        "qwen",
        &[(
            ".qwen/settings.json",
            r#"{"permissions": {"deny": ["Bash(rm *)"]}}"#,
        )],
        "rm -f notes.txt",
        "denied",
        0,
    );
}

/// Runs `agent` (recorded, then replayed) on a script that asks for the shell command
/// `command`, which the CLI's own guard refuses: the test asserting the call passes, the
/// call's `blocked` reason contains `words`, the run is `witnessed` (never `tampered`)
/// with `notes` witness notes, and the replay asks the model nothing new.
fn own_guard_blocks(agent: &str, command: &str, words: &str, notes: usize) {
    own_guard_blocks_in(agent, &[], command, words, notes);
}

/// [`own_guard_blocks`] in a workspace holding `files` (path, text): the agent's own
/// configuration that makes its guard refuse the command.
fn own_guard_blocks_in(
    agent: &str,
    files: &[(&str, &str)],
    command: &str,
    words: &str,
    notes: usize,
) {
    let cli = AGENTS
        .iter()
        .map(|a| a())
        .find(|a| a.name == agent)
        .unwrap();
    let model = ScriptedModel::start();
    let marker = format!("TAPE-GUARD-{}", agent.to_uppercase());
    model.script(
        &marker,
        vec![
            cli.shell_call(command),
            Turn::Text("The shell refused it.".into()),
        ],
    );
    let suite = Suite::new();
    for (path, text) in files {
        suite.file(&format!("tests/ws/fixture/{path}"), text);
    }
    let workspace = if files.is_empty() {
        ""
    } else {
        "workspace: fixture\n"
    };
    suite.file(
        "tests/ws/t.aptitude.yaml",
        &format!(
            "name: t\nprompt: \"{marker}: run a command in the shell\"\n{workspace}assertions:\n  - tool: Bash\n"
        ),
    );
    let check = |results: &Value, what: &str| {
        let test = &results["tests"][0];
        assert_eq!(test["status"], "passed", "{agent} {what}: {test:#}");
        assert_eq!(
            test["witness"]["status"], "witnessed",
            "{agent} {what}: {test:#}"
        );
        assert_eq!(
            test["witness"]["notes"].as_array().map_or(0, Vec::len),
            notes,
            "{agent} {what}: {:#}",
            test["witness"]
        );
        let call = &test["transcript"]["tool_calls"][0];
        assert!(
            call["blocked"].as_str().is_some_and(|b| b.contains(words)),
            "{agent} {what}: {call:#}"
        );
    };
    let (code, recorded, stderr) = run_on(&suite, &model, &cli, &["--no-grade", "--record-model"]);
    assert_eq!(code, 0, "recording\n{stderr}\n{}", recorded["tests"][0]);
    check(&recorded, "recording");
    let asked = model.requests().len();
    let kept = suite.path().join("recorded.json");
    crate::support::copy_results(suite.results_path(), &kept);
    let (code, replayed, stderr) = run_on(
        &suite,
        &model,
        &cli,
        &["--no-grade", "--replay", kept.to_str().unwrap()],
    );
    assert_eq!(code, 0, "replay\n{stderr}\n{replayed:#}");
    check(&replayed, "replay");
    assert_eq!(model.requests().len(), asked, "{agent}: a replay asked");
}
