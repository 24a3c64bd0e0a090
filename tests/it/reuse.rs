//! `run --reuse BASELINE.json` end to end: the real `claude` against the scripted model,
//! which counts every request — the agent's turns and the judge's grading calls.

use serde_json::json;

use crate::run::{Suite, aptitude_run, test};
use crate::support::model::{ScriptedModel, Turn};

const TEST: &str = "name: greets\nprompt: \"reuse-agent: say hello\"\nassertions:\n  - tool: Bash\n    params:\n      command: \"echo hello\"\n  - stdout:\n      review: \"reuse-judge: greets the user\"\n      threshold: 7\n";

#[test]
fn an_unchanged_test_is_reused_with_no_agent_run_and_no_judge_call() {
    let model = ScriptedModel::start();
    // Judge first: a grading prompt quotes the agent's task.
    model.script(
        "reuse-judge",
        vec![Turn::Text(
            "{\"score\": 9, \"reasoning\": \"it greets\"}".into(),
        )],
    );
    model.script(
        "reuse-agent",
        vec![
            Turn::Tool(
                "Bash",
                json!({"command": "echo hello", "description": "greet"}),
            ),
            Turn::Text("hello".into()),
        ],
    );
    let suite = Suite::new();
    suite
        .file("tests/greets.aptitude.yaml", TEST)
        .file("tests/README.md", "a fixture\n");
    let first = aptitude_run(&suite, &model, &[]);
    assert_eq!(first.code, 0, "{}\n{}", first.stdout, first.stderr);
    let results = first.results.unwrap();
    let t = test(&results, "greets");
    assert_eq!(t["fingerprint"]["sha256"].as_str().unwrap().len(), 64);
    assert!(t.get("reused").is_none());
    let baseline = suite.path().join("baseline.json");
    crate::support::copy_results(suite.results_path(), &baseline);
    let agent_runs = || model.requests().iter().filter(|r| r.has_tools).count();
    let judge_calls = || model.requests().iter().filter(|r| !r.has_tools).count();
    let (runs, calls) = (agent_runs(), judge_calls());
    assert!(
        runs >= 2 && calls == 1,
        "{runs} agent turns, {calls} grading calls"
    );

    // Nothing changed: no agent run, and no judge call even without the grade cache (the
    // baseline's grades travel with it).
    let again = aptitude_run(
        &suite,
        &model,
        &["--reuse", baseline.to_str().unwrap(), "--no-cache"],
    );
    assert_eq!(again.code, 0, "{}\n{}", again.stdout, again.stderr);
    assert_eq!(
        (agent_runs(), judge_calls()),
        (runs, calls),
        "no request at all"
    );
    let results = again.results.unwrap();
    let t = test(&results, "greets");
    assert_eq!(t["status"], "passed");
    assert_eq!(t["reused"]["from"], baseline.to_str().unwrap());
    assert_eq!(t["assertions"][1]["cached"], true);
    assert_eq!(t["assertions"][1]["score"], 9);
    assert_eq!(t["transcript"]["final_text"], "hello");
    assert!(again.stdout.contains("↺ reused"), "{}", again.stdout);

    // A changed assertion is evaluated on the recorded run, without a run: here it fails.
    suite.file(
        "tests/greets.aptitude.yaml",
        &TEST.replace("echo hello", "echo goodbye"),
    );
    let changed = aptitude_run(&suite, &model, &["--reuse", baseline.to_str().unwrap()]);
    assert_eq!(changed.code, 1, "{}\n{}", changed.stdout, changed.stderr);
    assert_eq!((agent_runs(), judge_calls()), (runs, calls));
    let results = changed.results.unwrap();
    let t = test(&results, "greets");
    assert_eq!(t["status"], "failed");
    assert!(t["reused"].is_object());

    // A changed workspace file runs the agent, and says why.
    suite
        .file("tests/greets.aptitude.yaml", TEST)
        .file("tests/README.md", "another fixture\n");
    let rerun = aptitude_run(
        &suite,
        &model,
        &["--reuse", baseline.to_str().unwrap(), "-v"],
    );
    assert_eq!(rerun.code, 0, "{}\n{}", rerun.stdout, rerun.stderr);
    assert!(agent_runs() > runs, "the agent ran");
    let results = rerun.results.unwrap();
    let t = test(&results, "greets");
    assert!(t.get("reused").is_none());
    assert_eq!(
        t["not_reused"], "its fingerprint changed (workspace)",
        "{t:#}"
    );
    assert!(
        rerun
            .stdout
            .contains("not reused: its fingerprint changed (workspace)"),
        "{}",
        rerun.stdout
    );
}

#[test]
fn a_changed_prompt_runs_the_agent() {
    let model = ScriptedModel::start();
    model.script("prompt-agent", vec![Turn::Text("done".into())]);
    let suite = Suite::new();
    let yaml =
        "name: p\nprompt: \"prompt-agent: one\"\nassertions:\n  - tool: Read\n    called: false\n";
    suite.file("tests/p.aptitude.yaml", yaml);
    let first = aptitude_run(&suite, &model, &[]);
    assert_eq!(first.code, 0, "{}\n{}", first.stdout, first.stderr);
    let baseline = suite.path().join("baseline.json");
    crate::support::copy_results(suite.results_path(), &baseline);
    let before = model.requests().len();
    suite.file("tests/p.aptitude.yaml", &yaml.replace("one", "two"));
    let out = aptitude_run(&suite, &model, &["--reuse", baseline.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(model.requests().len() > before, "the agent ran");
    let results = out.results.unwrap();
    assert_eq!(
        test(&results, "p")["not_reused"],
        "its fingerprint changed (prompt)"
    );
}

/// A test with a workspace assertion is reused by a replay: the agent runs again (its
/// shell writes the file again), its model answered from the baseline's cassette — no
/// model request. Without a recording, the agent runs live, saying why.
#[test]
fn a_test_that_needs_the_workspace_is_replayed_from_its_recording() {
    let model = ScriptedModel::start();
    model.script(
        "ws-agent",
        vec![
            Turn::Tool(
                "Bash",
                json!({"command": "echo made > made.txt", "description": "make it"}),
            ),
            Turn::Text("done".into()),
        ],
    );
    let suite = Suite::new();
    suite.file(
        "tests/w.aptitude.yaml",
        "name: w\nprompt: \"ws-agent: go\"\nassertions:\n  - file_contains: {path: made.txt, text: made}\n",
    );
    let baseline = suite.path().join("baseline.json");
    let first = aptitude_run(&suite, &model, &[]);
    assert_eq!(first.code, 0, "{}\n{}", first.stdout, first.stderr);
    crate::support::copy_results(suite.results_path(), &baseline);
    let before = model.requests().len();
    let out = aptitude_run(&suite, &model, &["--reuse", baseline.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(model.requests().len() > before, "the agent ran");
    let results = out.results.unwrap();
    assert_eq!(
        test(&results, "w")["not_reused"],
        "its assertion at line 4 needs the workspace after the run, which does not travel with results, and the baseline recorded no model exchange to replay it from (run it with --record-model)"
    );

    // Recorded: the unchanged run is replayed, with no model request.
    let recorded = aptitude_run(&suite, &model, &["--record-model"]);
    assert_eq!(recorded.code, 0, "{}\n{}", recorded.stdout, recorded.stderr);
    crate::support::copy_results(suite.results_path(), &baseline);
    let before = model.requests().len();
    let out = aptitude_run(&suite, &model, &["--reuse", baseline.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(model.requests().len(), before, "no model request");
    let results = out.results.unwrap();
    let w = test(&results, "w");
    assert_eq!(w["status"], "passed", "{w:#}");
    assert_eq!(w["reused"]["replayed"], true, "{w:#}");
    assert!(
        w["model_traffic"]["replayed"].as_u64().unwrap() >= 2,
        "{w:#}"
    );
    assert_eq!(
        w["files"][0]["path"], "made.txt",
        "the workspace was rebuilt"
    );
    assert!(out.stdout.contains("↺ reused"), "{}", out.stdout);
}

#[test]
fn an_unchanged_claims_check_is_reused_with_no_judge_call() {
    let model = ScriptedModel::start();
    // Judge first: an extraction prompt also quotes the agent's task; its marker is in the
    // agent's answer, which only the extraction prompt holds.
    model.script(
        "reuse-claimed",
        vec![Turn::Text(
            json!({"claims": [{"kind": "command", "text": "I ran `echo hello`", "command": "echo hello", "outcome": "success"}]})
                .to_string(),
        )],
    );
    model.script(
        "reuse-claims-agent",
        vec![
            Turn::Tool(
                "Bash",
                json!({"command": "echo hello", "description": "greet"}),
            ),
            Turn::Text("reuse-claimed: I ran `echo hello` and it worked.".into()),
        ],
    );
    let suite = Suite::new();
    suite.file(
        "tests/c.aptitude.yaml",
        "name: claims\nprompt: \"reuse-claims-agent: greet\"\nassertions:\n  - claims: verified\n",
    );
    let first = aptitude_run(&suite, &model, &[]);
    assert_eq!(first.code, 0, "{}\n{}", first.stdout, first.stderr);
    let results = first.results.unwrap();
    let recorded = &test(&results, "claims")["assertions"][0];
    assert_eq!(recorded["status"], "pass", "{recorded:#}");
    assert_eq!(recorded["cached"], false);
    assert_eq!(recorded["grade_keys"].as_array().unwrap().len(), 1);
    assert_eq!(recorded["claims"][0]["command"], "echo hello");
    let baseline = suite.path().join("baseline.json");
    crate::support::copy_results(suite.results_path(), &baseline);
    let agent_runs = || model.requests().iter().filter(|r| r.has_tools).count();
    let judge_calls = || model.requests().iter().filter(|r| !r.has_tools).count();
    let (runs, calls) = (agent_runs(), judge_calls());
    assert_eq!(calls, 1, "one extraction call");

    // Nothing changed, and no local grade cache: the baseline's claims are checked again,
    // with no agent run and no judge call.
    let reuse = ["--reuse", baseline.to_str().unwrap(), "--no-cache"];
    let again = aptitude_run(&suite, &model, &reuse);
    assert_eq!(again.code, 0, "{}\n{}", again.stdout, again.stderr);
    assert_eq!(
        (agent_runs(), judge_calls()),
        (runs, calls),
        "no request at all"
    );
    let results = again.results.unwrap();
    let t = test(&results, "claims");
    assert!(t["reused"].is_object(), "{t:#}");
    let reused = &t["assertions"][0];
    assert_eq!(reused["status"], "pass", "{reused:#}");
    assert_eq!(reused["cached"], true);
    assert_eq!(
        (&reused["claims"], &reused["grade_keys"]),
        (&recorded["claims"], &recorded["grade_keys"])
    );
    assert!(
        reused["detail"]
            .as_str()
            .unwrap()
            .contains("ran as #1 `echo hello` → exit 0"),
        "{reused:#}"
    );

    // A baseline without the claims (written before they travelled) reads them again.
    let mut old: serde_json::Value =
        serde_json::from_str(&crate::support::results_text(&baseline).unwrap()).unwrap();
    old["tests"][0]["assertions"][0]
        .as_object_mut()
        .unwrap()
        .remove("claims");
    std::fs::write(&baseline, old.to_string()).unwrap();
    let old_baseline = aptitude_run(&suite, &model, &reuse);
    assert_eq!(
        old_baseline.code, 0,
        "{}\n{}",
        old_baseline.stdout, old_baseline.stderr
    );
    assert_eq!(
        (agent_runs(), judge_calls()),
        (runs, calls + 1),
        "reused, but the claims were read again"
    );
    let results = old_baseline.results.unwrap();
    assert_eq!(test(&results, "claims")["assertions"][0]["cached"], false);
}
