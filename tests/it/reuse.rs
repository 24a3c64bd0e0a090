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
    std::fs::copy(suite.results_path(), &baseline).unwrap();
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
    std::fs::copy(suite.results_path(), &baseline).unwrap();
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

#[test]
fn a_test_that_needs_the_workspace_after_the_run_is_never_reused() {
    let model = ScriptedModel::start();
    model.script("ws-agent", vec![Turn::Text("done".into())]);
    let suite = Suite::new();
    suite.file(
        "tests/w.aptitude.yaml",
        "name: w\nprompt: \"ws-agent: go\"\nassertions:\n  - file_absent: made.txt\n",
    );
    let first = aptitude_run(&suite, &model, &[]);
    assert_eq!(first.code, 0, "{}\n{}", first.stdout, first.stderr);
    let baseline = suite.path().join("baseline.json");
    std::fs::copy(suite.results_path(), &baseline).unwrap();
    let before = model.requests().len();
    let out = aptitude_run(&suite, &model, &["--reuse", baseline.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(model.requests().len() > before, "the agent ran");
    let results = out.results.unwrap();
    assert_eq!(
        test(&results, "w")["not_reused"],
        "its assertion at line 4 needs the workspace after the run, which does not travel with results"
    );
}
