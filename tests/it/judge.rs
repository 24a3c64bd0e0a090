//! The LLM judge end to end: the real `claude` grades (`claude -p … --output-format json
//! --tools ""`) against the scripted model, which plays the judge.

use serde_json::Value;

use crate::run::{Suite, aptitude_run, test};
use crate::support::claude_bin;
use crate::support::cli::Aptitude;
use crate::support::model::{ScriptedModel, Turn};

/// A test whose agent answers `answer`, with one review whose criteria carry `marker`.
fn review_test(name: &str, marker: &str, threshold: u8) -> String {
    format!(
        "name: {name}\nprompt: \"agent-{name}: what is the counter?\"\nassertions:\n  - stdout:\n      review: \"{marker}: states that the counter is 43\"\n      threshold: {threshold}\n"
    )
}

fn review_of(t: &Value) -> &Value {
    &t["assertions"][0]
}

fn grading_requests(model: &ScriptedModel) -> usize {
    model.requests().iter().filter(|r| !r.has_tools).count()
}

#[test]
fn replies_are_parsed_scored_and_thresholded() {
    let model = ScriptedModel::start();
    // Judge scripts first: a grading prompt also quotes the agent's task.
    let judge = |marker: &str, reply: &str| {
        model.script(
            marker,
            vec![
                Turn::Text(reply.to_owned()),
                Turn::Text(reply.to_owned()),
                Turn::Text(reply.to_owned()),
            ],
        );
    };
    judge(
        "judge-fenced",
        "```json\n{\"score\": 8, \"reasoning\": \"it says 43\"}\n```",
    );
    judge(
        "judge-prose",
        "Here is my grade: {\"score\": 9, \"reasoning\": \"clear\"} Hope that helps!",
    );
    judge(
        "judge-fifteen",
        "{\"score\": 15, \"reasoning\": \"beyond perfect\"}",
    );
    judge("judge-garbage", "I would rather not grade this.");
    judge(
        "judge-equal",
        "{\"score\": 7, \"reasoning\": \"just enough\"}",
    );
    judge(
        "judge-below",
        "{\"score\": 6, \"reasoning\": \"does not say which counter\"}",
    );
    let suite = Suite::new();
    for (name, threshold) in [
        ("fenced", 7),
        ("prose", 7),
        ("fifteen", 7),
        ("garbage", 7),
        ("equal", 7),
        ("below", 7),
    ] {
        model.script(
            &format!("agent-{name}"),
            vec![Turn::Text("The counter is 43.".into())],
        );
        suite.file(
            &format!("tests/{name}.aptitude.yaml"),
            &review_test(name, &format!("judge-{name}"), threshold),
        );
    }
    let out = aptitude_run(&suite, &model, &["--jobs", "3"]);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let results = out.results.unwrap();
    // Each review's verdict: a fenced or prose-wrapped reply is parsed, 15 is clamped to
    // 10, a score equal to the threshold passes and one below fails, and an unparseable
    // reply is an error (not a fail).
    let verdicts: serde_json::Map<String, Value> = results["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let r = review_of(t);
            (
                t["name"].as_str().unwrap().to_owned(),
                serde_json::json!({
                    "status": r["status"],
                    "score": r["score"],
                    "threshold": r["threshold"],
                    "reasoning": r["reasoning"],
                    "cached": r["cached"],
                }),
            )
        })
        .collect();
    insta::assert_json_snapshot!("judge_verdicts", verdicts);
    let below = review_of(test(&results, "below"));
    assert!(below["grading_usage"]["cost_usd"].as_f64().unwrap() > 0.0);
    assert!(out.stdout.contains("✗ stdout review: \"judge-below: states that the counter is 43\" (score: 6/10, threshold: 7)"), "{}", out.stdout);
    assert!(
        out.stdout.contains("└─ does not say which counter"),
        "{}",
        out.stdout
    );

    let garbage = test(&results, "garbage");
    assert_eq!(garbage["status"], "error");
    let detail = review_of(garbage)["detail"].as_str().unwrap();
    assert!(
        detail.contains("after 3 attempts") && detail.contains("I would rather not grade this."),
        "{detail}"
    );
    assert_eq!(
        model.requests_for("judge-garbage").len(),
        3,
        "retried twice"
    );

    // The test's totals include the grading calls.
    let agent_cost = test(&results, "fenced")["transcript"]["usage"]["cost_usd"]
        .as_f64()
        .unwrap();
    let total_cost = test(&results, "fenced")["usage"]["cost_usd"]
        .as_f64()
        .unwrap();
    assert!(total_cost > agent_cost, "{total_cost} vs {agent_cost}");

    // The prompt: criteria, the task as context, the answer fenced with a random boundary.
    let grading = model.requests_for("judge-fenced");
    let body = grading[0].body.to_string();
    assert!(!grading[0].has_tools, "a grading call offers no tools");
    assert!(
        body.contains("Criteria: judge-fenced: states that the counter is 43"),
        "{body}"
    );
    assert!(
        body.contains("agent-fenced: what is the counter?"),
        "{body}"
    );
    let at = body.find("<answer-").unwrap();
    let boundary = &body[at + 8..at + 24];
    assert!(
        body.contains(&format!(
            "<answer-{boundary}>\\nThe counter is 43.\\n</answer-{boundary}>"
        )),
        "{body}"
    );
}

#[test]
fn an_unchanged_suite_is_graded_once() {
    let model = ScriptedModel::start();
    model.script(
        "judge-a",
        vec![Turn::Text("{\"score\": 9, \"reasoning\": \"ok\"}".into())],
    );
    model.script(
        "judge-b",
        vec![Turn::Text("{\"score\": 3, \"reasoning\": \"no\"}".into())],
    );
    let suite = Suite::new();
    for name in ["a", "b"] {
        model.script(
            &format!("agent-{name}"),
            vec![Turn::Text("The counter is 43.".into())],
        );
        suite.file(
            &format!("tests/{name}.aptitude.yaml"),
            &review_test(name, &format!("judge-{name}"), 7),
        );
    }
    let first = aptitude_run(&suite, &model, &[]);
    assert_eq!(first.code, 1, "{}\n{}", first.stdout, first.stderr);
    assert_eq!(grading_requests(&model), 2);

    let second = aptitude_run(&suite, &model, &[]);
    assert_eq!(
        grading_requests(&model),
        2,
        "the second run makes zero grading requests"
    );
    let results = second.results.unwrap();
    for (name, score) in [("a", 9), ("b", 3)] {
        let r = review_of(test(&results, name));
        assert_eq!(
            (r["score"].as_u64(), r["cached"].as_bool()),
            (Some(score), Some(true)),
            "{name}"
        );
        assert!(
            r.get("grading_usage").is_none(),
            "a cache hit costs nothing"
        );
    }
    assert!(second.stdout.contains("(cached)"), "{}", second.stdout);

    let uncached = aptitude_run(&suite, &model, &["--no-cache"]);
    assert_eq!(uncached.code, 1);
    assert_eq!(grading_requests(&model), 4, "--no-cache grades again");

    let skipped = aptitude_run(&suite, &model, &["--no-grade"]);
    assert_eq!(
        grading_requests(&model),
        4,
        "--no-grade makes no grading request"
    );
    let results = skipped.results.unwrap();
    assert_eq!(review_of(test(&results, "b"))["status"], "skip");
    assert_eq!(test(&results, "b")["status"], "skipped");
}

#[test]
fn a_failed_run_is_not_graded() {
    let model = ScriptedModel::start();
    // A judge that would pass the answer, were it ever asked.
    model.script(
        "judge-failed",
        vec![Turn::Text(
            "{\"score\": 10, \"reasoning\": \"fine\"}".into(),
        )],
    );
    model.script(
        "agent-failed",
        vec![
            Turn::Http(500, "scripted boom"),
            Turn::Http(500, "scripted boom"),
        ],
    );
    let suite = Suite::new();
    suite.file(
        "tests/failed.aptitude.yaml",
        &review_test("failed", "judge-failed", 7),
    );
    let out = aptitude_run(&suite, &model, &[]);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let results = out.results.unwrap();
    let t = test(&results, "failed");
    assert_eq!(t["status"], "error");
    let review = review_of(t);
    assert_eq!(review["status"], "skip", "{review}");
    assert!(
        review["detail"]
            .as_str()
            .unwrap()
            .contains("not graded: the agent run failed"),
        "{review}"
    );
    assert_eq!(
        grading_requests(&model),
        0,
        "no judge call for a failed run"
    );
}

#[test]
fn analyze_grades_with_the_configured_grader() {
    let model = ScriptedModel::start();
    model.script(
        "judge-analyze",
        vec![Turn::Text(
            "{\"score\": 10, \"reasoning\": \"states 42\"}".into(),
        )],
    );
    let suite = Suite::new();
    suite.file(
        "t.aptitude.yaml",
        "name: counter\nprompt: \"What is in counter.txt?\"\nassertions:\n  - stdout: {review: \"judge-analyze: says 42\"}\n",
    );
    let transcript = crate::support::data("corpus/live/claude-2.1.328/events_tool_call.jsonl");
    let out = Aptitude::new()
        .sandbox_in(suite.path())
        .model(&model)
        .current_dir(suite.path())
        .arg("analyze")
        .arg("t.aptitude.yaml")
        .arg(transcript)
        .claude()
        .output();
    out.code(0);
    assert!(
        out.stdout
            .contains("✓ stdout review: \"judge-analyze: says 42\" (score: 10/10, threshold: 7)"),
        "{}",
        out.stdout
    );
    let body = model.requests_for("judge-analyze")[0].body.to_string();
    assert!(
        body.contains("The counter value is 42."),
        "the recorded final answer is graded: {body}"
    );
}

#[test]
fn the_fluent_review_grades_through_the_claude_adapter() {
    use std::sync::Arc;

    use aptitude::agent::claude::Claude;
    use aptitude::agent::{AgentSettings, CliAgent};
    use aptitude::fluent::expect;
    use aptitude::verdict::results::AssertionStatus;

    let model = ScriptedModel::start();
    model.script(
        "fluent-judge",
        vec![Turn::Text(
            "```json\n{\"score\": 8, \"reasoning\": \"says 42\"}\n```".into(),
        )],
    );
    let home = tempfile::tempdir().unwrap();
    let env = model
        .claude_env()
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .chain([("HOME".to_owned(), home.path().display().to_string())]);
    let grader = Arc::new(
        CliAgent::new(
            Arc::new(Claude::default()),
            AgentSettings {
                binary: Some(claude_bin()),
                ..AgentSettings::default()
            },
        )
        .with_env(env),
    );
    let output = aptitude::transcript::parse_file(&crate::support::data(
        "corpus/live/claude-2.1.328/events_tool_call.jsonl",
    ))
    .unwrap();

    let passing = expect(&output)
        .with_grader(grader.clone())
        .stdout()
        .review("fluent-judge: says the counter is 42")
        .with_threshold(8)
        .without_cache();
    passing.to_pass();
    let result = passing.evaluate();
    assert_eq!(
        (result.status, result.score),
        (AssertionStatus::Pass, Some(8))
    );

    let strict = expect(&output)
        .with_grader(grader)
        .stdout()
        .review("fluent-judge: says the counter is 42")
        .with_threshold(9)
        .without_cache()
        .evaluate();
    assert_eq!(strict.status, AssertionStatus::Fail);
    assert_eq!(strict.reasoning.as_deref(), Some("says 42"));
    assert_eq!(model.requests_for("fluent-judge").len(), 3);
}

/// Judge votes with the real `claude` as grader: three grading calls, the median decides,
/// every vote and the spread are kept; `--judge-votes` applies to reviews that set none.
#[test]
fn judge_votes_take_the_median_and_show_the_spread() {
    let model = ScriptedModel::start();
    let grade = |score: u8| {
        Turn::Text(format!(
            "{{\"score\": {score}, \"reasoning\": \"gave {score}\"}}"
        ))
    };
    model.script(
        "judge-votes",
        vec![Turn::Sequence(vec![grade(9), grade(4), grade(8)])],
    );
    model.script(
        "judge-flag",
        vec![Turn::Sequence(vec![grade(3), grade(9), grade(9)])],
    );
    model.script("agent-votes", vec![Turn::Text("The counter is 43.".into())]);
    model.script("agent-flag", vec![Turn::Text("The counter is 43.".into())]);
    let suite = Suite::new();
    suite.file(
        "tests/votes.aptitude.yaml",
        &review_test("votes", "judge-votes", 7)
            .replace("threshold: 7", "threshold: 7\n      votes: 3"),
    );
    suite.file(
        "tests/flag.aptitude.yaml",
        &review_test("flag", "judge-flag", 7),
    );
    let out = aptitude_run(&suite, &model, &["--judge-votes", "3", "--no-cache"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let results = out.results.unwrap();
    let votes = review_of(test(&results, "votes"));
    assert_eq!(
        (votes["status"].as_str(), votes["score"].as_u64()),
        (Some("pass"), Some(8))
    );
    let scores: Vec<u64> = votes["votes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["score"].as_u64().unwrap())
        .collect();
    let mut sorted = scores.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, [4, 8, 9], "every vote is kept");
    assert_eq!(votes["reasoning"], "gave 8", "the median vote's reasoning");
    assert_eq!(
        model.requests_for("judge-votes").len(),
        3,
        "one grading call per vote"
    );
    assert!(
        out.stdout
            .contains("(score: 8/10, median of 3 of 3 votes, spread 4–9, threshold: 7)"),
        "{}",
        out.stdout
    );
    let flag = review_of(test(&results, "flag"));
    assert_eq!(
        flag["score"], 9,
        "--judge-votes 3 applied: a lone 3 is outvoted"
    );
    assert_eq!(model.requests_for("judge-flag").len(), 3);
}
