//! Repeated runs end to end (issue 14): the real `claude` against a scripted model whose
//! behaviour alternates from one run to the next — k-of-n verdicts, the flaky assertion
//! named, the cost ceiling, infra errors retried.

use serde_json::{Value, json};

use crate::run::{Suite, aptitude_run, test};
use crate::support::model::{ScriptedModel, Turn};

/// A script whose first reply alternates between calling Bash and answering at once, in
/// this order for successive runs: `true` calls Bash.
fn alternating(model: &ScriptedModel, marker: &str, calls: &[bool]) {
    let bash = || Turn::Tool("Bash", json!({"command": "echo ran", "description": "run"}));
    model.script(
        marker,
        vec![
            Turn::Sequence(
                calls
                    .iter()
                    .map(|c| {
                        if *c {
                            bash()
                        } else {
                            Turn::Text("I did not run anything.".into())
                        }
                    })
                    .collect(),
            ),
            Turn::Text("Ran it.".into()),
        ],
    );
}

fn repeated_test(name: &str, marker: &str, extra: &str) -> String {
    format!(
        "name: {name}\nprompt: \"{marker}: run echo\"\n{extra}assertions:\n  - tool: Bash\n    params:\n      command: \"echo*\"\n  - tool: Read\n    called: false\n"
    )
}

fn statuses(t: &Value) -> Vec<String> {
    t["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_flaky_test_names_its_flaky_assertion_and_min_pass_decides() {
    let model = ScriptedModel::start();
    // 3 of 5 runs call Bash, in both tests.
    let pattern = [true, false, true, false, true];
    alternating(&model, "flaky-all", &pattern);
    alternating(&model, "flaky-three", &pattern);
    let suite = Suite::new();
    suite
        .file(
            "tests/all.aptitude.yaml",
            &repeated_test("needs-all", "flaky-all", "runs: 5\n"),
        )
        .file(
            "tests/three.aptitude.yaml",
            &repeated_test("needs-three", "flaky-three", "runs: 5\nmin_pass: 3\n"),
        );
    let out = aptitude_run(&suite, &model, &["--jobs", "4"]);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let results = out.results.unwrap();
    assert_eq!(results["version"], 3);

    let all = test(&results, "needs-all");
    assert_eq!(all["status"], "failed", "all 5 runs are needed by default");
    let three = test(&results, "needs-three");
    assert_eq!(three["status"], "passed", "min_pass: 3 of 5");
    for t in [all, three] {
        let mut s = statuses(t);
        s.sort();
        assert_eq!(s, ["failed", "failed", "passed", "passed", "passed"]);
        let r = &t["repeat"];
        assert_eq!(
            (r["runs"].as_u64(), r["passed"].as_u64()),
            (Some(5), Some(3))
        );
        assert_eq!(r["flaky"], true);
        assert_eq!(r["pass_rate"].as_f64(), Some(0.6));
        // Wilson 95% for 3/5: 0.2307…–0.8824… (Wilson 1927; as statsmodels'
        // proportion_confint(3, 5, method="wilson")).
        assert!(
            (r["wilson_low"].as_f64().unwrap() - 0.2307).abs() < 1e-3,
            "{r}"
        );
        assert!(
            (r["wilson_high"].as_f64().unwrap() - 0.8824).abs() < 1e-3,
            "{r}"
        );
        // The Bash assertion is the flaky one; `Read not called` held every time.
        let tallies = r["assertions"].as_array().unwrap();
        assert_eq!(
            (tallies[0]["passed"].as_u64(), tallies[0]["flaky"].as_bool()),
            (Some(3), Some(true))
        );
        assert_eq!(
            (tallies[1]["passed"].as_u64(), tallies[1]["flaky"].as_bool()),
            (Some(5), Some(false))
        );
        // Every run is kept with its own transcript.
        for run in t["runs"].as_array().unwrap() {
            assert!(run["transcript"].is_object(), "{run}");
        }
    }
    assert!(
        out.stdout.contains("3/5 runs passed (flaky)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("3/5 runs passed, 3 needed (flaky)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("3/5 runs · flaky"),
        "the flaky assertion is marked: {}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("runs: 6 passed, 4 failed (2 flaky tests)"),
        "{}",
        out.stdout
    );
}

/// The first request's cost (Claude Code's model, priced at list prices by the gateway)
/// reaches the ceiling: the gateway refuses the run's next request in its middle (kind
/// `budget`), and no other run starts (`skipped`, reason `budget`). (Before the gateway
/// priced every Claude model, the run went on at the agent's own figure.)
#[test]
fn the_cost_ceiling_stops_the_run_and_skips_the_runs_not_started() {
    let model = ScriptedModel::start();
    alternating(&model, "costly", &[true]);
    let suite = Suite::new();
    suite.file(
        "tests/costly.aptitude.yaml",
        &repeated_test("costly", "costly", "runs: 3\n"),
    );
    let out = aptitude_run(&suite, &model, &["--jobs", "1", "--max-cost", "0.000001"]);
    assert_eq!(
        out.code, 1,
        "a cut-short suite is never green\n{}\n{}",
        out.stdout, out.stderr
    );
    let results = out.results.unwrap();
    let t = test(&results, "costly");
    assert_eq!(statuses(t), ["error", "skipped", "skipped"], "{t:#}");
    let first = &t["runs"][0];
    assert_eq!(first["error_kind"], "budget", "{first:#}");
    assert!(
        first["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("the --max-cost $0.000001 ceiling was reached")),
        "{first:#}"
    );
    assert!(
        first["model_traffic"]["cost_basis"]
            .as_str()
            .is_some_and(|b| b.starts_with("estimated at LiteLLM ")),
        "{first:#}"
    );
    for skipped in &t["runs"].as_array().unwrap()[1..] {
        assert_eq!(skipped["skip_reason"], "budget");
    }
    let budget = &results["summary"]["budget"];
    assert_eq!(budget["skipped_runs"], 2);
    assert_eq!(budget["max_cost_usd"].as_f64(), Some(0.000001));
    assert!(
        budget["spent_cost_usd"].as_f64().unwrap() > 0.000001,
        "{budget}"
    );
    assert_eq!(
        model.requests_for("costly").len(),
        1,
        "the tool call's request went; the answer's was refused"
    );
    assert!(
        out.stdout.contains("of $0.0000 · 2 runs skipped (budget)")
            && out.stdout.contains("spent est. $"),
        "the summary shows the estimated spend against the ceiling: {}",
        out.stdout
    );
}

/// Under `--max-cost`, a model the price table can not price (no known provider) is
/// refused before its first request reaches the model: nothing could bound what it costs.
#[test]
fn an_unpriceable_model_is_refused_under_a_cost_ceiling() {
    let model = ScriptedModel::start();
    alternating(&model, "unpriced", &[true]);
    let suite = Suite::new();
    suite.file(
        "tests/unpriced.aptitude.yaml",
        &repeated_test("unpriced", "unpriced", ""),
    );
    let out = aptitude_run(
        &suite,
        &model,
        &["--model", "local-llama-70b", "--max-cost", "5"],
    );
    let results = out.results.unwrap();
    let t = test(&results, "unpriced");
    assert_eq!(t["status"], "error", "{t:#}");
    assert_eq!(t["error_kind"], "budget", "{t:#}");
    assert!(
        t["error"].as_str().is_some_and(|e| e
            .contains("the model `local-llama-70b` has no list price")
            && e.contains("use --max-tokens")),
        "{t:#}"
    );
    assert!(
        model.requests_for("unpriced").is_empty(),
        "no request reached the model"
    );
}

#[test]
fn an_infra_error_is_retried_then_passes_and_every_attempt_is_kept() {
    let model = ScriptedModel::start();
    // The model fails with 500 on the first requests (Claude Code retries once itself),
    // then answers.
    model.script(
        "flaky-api",
        vec![
            Turn::Sequence(vec![
                Turn::Http(500, "scripted outage"),
                Turn::Http(500, "scripted outage"),
                Turn::Http(500, "scripted outage"),
                Turn::Http(500, "scripted outage"),
                Turn::Tool("Bash", json!({"command": "echo ran", "description": "run"})),
            ]),
            Turn::Text("Ran it.".into()),
        ],
    );
    let suite = Suite::new();
    suite.file(
        "tests/api.aptitude.yaml",
        &repeated_test("api", "flaky-api", ""),
    );
    let out = aptitude_run(&suite, &model, &["--retry-infra", "4"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let results = out.results.unwrap();
    let t = test(&results, "api");
    assert_eq!(t["status"], "passed");
    let attempts = t["attempts"].as_array().unwrap();
    assert!(!attempts.is_empty(), "{t}");
    for a in attempts {
        assert_eq!(a["error_kind"], "infra");
        assert!(
            a["error"].as_str().unwrap().contains("500"),
            "{}",
            a["error"]
        );
    }
    assert!(
        out.stdout.contains("retried after an infra error"),
        "{}",
        out.stdout
    );

    // Without --retry-infra the same outage is an `infra` error, not retried.
    let model = ScriptedModel::start();
    model.script("down-api", vec![Turn::Http(500, "scripted outage")]);
    let suite = Suite::new();
    suite.file(
        "tests/api.aptitude.yaml",
        &repeated_test("down", "down-api", ""),
    );
    let out = aptitude_run(&suite, &model, &[]);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let t = test(out.results.as_ref().unwrap(), "down");
    assert_eq!(t["status"], "error");
    assert_eq!(t["error_kind"], "infra");
    assert!(t.get("attempts").is_none(), "{t}");
}
