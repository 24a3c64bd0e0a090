//! `aptitude diff` on results built here: which tests are listed, which runs are
//! compared, the first divergence and the flipped assertions, and each output.

use super::*;
use crate::transcript::ToolCall;
use crate::verdict::results::AssertionResult;
use serde_json::json;

fn call(name: &str, input: serde_json::Value, exit: Option<i32>) -> ToolCall {
    ToolCall {
        output: Some("out".into()),
        exit_code: exit,
        ..ToolCall::for_test("c", name, input)
    }
}

fn edit() -> ToolCall {
    call(
        "Edit",
        json!({"file_path": "/tmp/aptitude-ws-x1/workspace/src/app.py", "old_string": "a", "new_string": "b"}),
        None,
    )
}

fn pytest() -> ToolCall {
    call("Bash", json!({"command": "pytest -q"}), Some(0))
}

fn assertion(status: AssertionStatus) -> AssertionResult {
    AssertionResult::new(
        "command_succeeded",
        "a command matching /pytest/ succeeded".into(),
        status,
        12,
        None,
    )
}

fn run(name: &str, calls: Vec<ToolCall>, status: AssertionStatus) -> TestResult {
    let assertions = vec![assertion(status)];
    TestResult {
        status: TestResult::status_of(None, &assertions),
        assertions,
        transcript: Some(Transcript::completed(calls, "done")),
        ..TestResult::new(name, "t.aptitude.yaml", TestStatus::Passed)
    }
}

fn options() -> DiffOptions {
    DiffOptions {
        test: None,
        runs: None,
        significance: 0.05,
        labels: ("base.json".into(), "head.json".into()),
    }
}

/// A regressed test: the base ran pytest after its edit, the head stopped after it.
fn regressed_pair() -> (Results, Results) {
    let base = Results::new(
        vec![
            run("fix", vec![edit(), pytest()], AssertionStatus::Pass),
            run("same", vec![pytest()], AssertionStatus::Pass),
        ],
        1,
    );
    let head = Results::new(
        vec![
            run("same", vec![pytest()], AssertionStatus::Pass),
            run("fix", vec![edit()], AssertionStatus::Fail),
        ],
        1,
    );
    (base, head)
}

#[test]
fn a_regressed_test_names_where_its_runs_part_and_what_flipped() {
    let (base, head) = regressed_pair();
    let r = diff(&base, &head, &options()).unwrap();
    assert_eq!(
        r.summary,
        DiffSummary {
            compared: 2,
            changed: 1,
            regressed: 1,
            fixed: 0,
            routing_regressed: 0,
        }
    );
    assert!(r.any_regressed());
    let t = &r.tests[0];
    assert_eq!((t.name.as_str(), t.change), ("fix", Change::Regressed));
    assert_eq!(t.anchor, "t1", "the head's second test");
    let d = t.first_divergence.as_ref().unwrap();
    assert_eq!((d.index, d.kind), (1, "call"));
    assert_eq!(d.after.as_deref(), Some("Edit src/app.py"));
    assert_eq!(d.base.says, "ran `pytest -q`");
    assert_eq!(d.base.call.as_ref().unwrap().result, "exit 0");
    assert_eq!(d.head.says, "stopped after Edit src/app.py");
    assert!(d.head.call.is_none());
    assert_eq!(
        t.summary,
        "base ran `pytest -q` after Edit src/app.py; head stopped after Edit src/app.py"
    );
    assert_eq!(
        (t.flipped[0].base, t.flipped[0].head),
        (Some(AssertionStatus::Pass), Some(AssertionStatus::Fail))
    );
    // The JSON has the shape the issue asks for.
    let v = serde_json::to_value(&r).unwrap();
    let test = &v["tests"][0];
    assert_eq!(test["name"], "fix");
    assert_eq!(test["first_divergence"]["index"], 1);
    assert_eq!(test["first_divergence"]["base"]["says"], "ran `pytest -q`");
    assert_eq!(
        test["first_divergence"]["head"]["call"],
        serde_json::Value::Null
    );
    assert_eq!(test["flipped"][0]["base"], "pass");
    assert_eq!(test["flipped"][0]["head"], "fail");
}

#[test]
fn every_output_says_it_and_agent_text_is_inert() {
    let (mut base, mut head) = regressed_pair();
    for t in base.tests.iter_mut().chain(head.tests.iter_mut()) {
        if let Some(tr) = t.transcript.as_mut() {
            for c in &mut tr.tool_calls {
                if c.canonical == "Bash" {
                    c.input = json!({"command": "pytest -q \u{1b}[2J <b>@octocat</b>"});
                }
            }
        }
    }
    let r = diff(&base, &head, &options()).unwrap();
    let text = to_terminal(&r);
    assert!(
        text.contains("first divergence at call 2, after Edit src/app.py"),
        "{text}"
    );
    assert!(
        text.contains("head: stopped after Edit src/app.py"),
        "{text}"
    );
    assert!(
        !text.contains('\u{1b}'),
        "no raw escape reaches the terminal: {text}"
    );
    assert!(text.contains("^["), "{text}");
    let md = to_markdown(&r);
    assert!(md.contains("### 🔴 fix — regressed"), "{md}");
    assert!(md.contains("| call 2 | base | head |"), "{md}");
    assert!(!md.contains("<b>"), "{md}");
    assert!(!md.contains("@octocat"), "a mention is broken: {md}");
}

#[test]
fn a_fixed_test_compares_its_failing_base_run_with_its_passing_head_run() {
    let (base, head) = regressed_pair();
    let r = diff(&head, &base, &options()).unwrap();
    assert_eq!(r.tests[0].change, Change::Fixed);
    assert!(!r.any_regressed());
    assert_eq!(
        r.tests[0].summary,
        "base stopped after Edit src/app.py; head then ran `pytest -q`"
    );
}

fn repeated(name: &str, runs: Vec<TestResult>) -> TestResult {
    let n = runs.len() as u32;
    let mut t = crate::verdict::repeat::aggregate(runs, n);
    t.name = name.into();
    t
}

/// Runs of one flaky test in one file: its first passing run against its first failing
/// one, or the runs `--run A,B` names; a run it lacks is an error.
#[test]
fn runs_of_a_flaky_test_in_one_file() {
    let flaky = repeated(
        "flaky",
        vec![
            run("flaky", vec![edit()], AssertionStatus::Fail),
            run("flaky", vec![edit(), pytest()], AssertionStatus::Pass),
            run("flaky", vec![edit(), pytest()], AssertionStatus::Pass),
        ],
    );
    let steady = repeated(
        "steady",
        vec![
            run("steady", vec![pytest()], AssertionStatus::Pass),
            run("steady", vec![pytest()], AssertionStatus::Pass),
        ],
    );
    let results = Results::new(vec![steady, flaky], 1);
    let r = diff_runs(&results, &options()).unwrap();
    assert_eq!((r.summary.compared, r.summary.changed), (2, 1));
    let t = &r.tests[0];
    assert_eq!((t.base.run, t.head.run), (2, 1));
    assert_eq!(t.anchor, "t1-r1");
    assert_eq!(
        t.summary,
        "base ran `pytest -q` after Edit src/app.py; head stopped after Edit src/app.py"
    );
    let picked = DiffOptions {
        test: Some("flaky".into()),
        runs: Some(RunPick::Pair(2, 3)),
        ..options()
    };
    let r = diff_runs(&results, &picked).unwrap();
    assert_eq!(
        r.tests[0].first_divergence, None,
        "runs 2 and 3 made the same calls"
    );
    let missing = DiffOptions {
        runs: Some(RunPick::Pair(1, 9)),
        ..picked.clone()
    };
    let e = diff_runs(&results, &missing).unwrap_err().to_string();
    assert_eq!(e, "test \"flaky\" in base.json has no run 9 (it has 3)");
    let typo = DiffOptions {
        test: Some("flakey".into()),
        ..options()
    };
    let e = diff_runs(&results, &typo).unwrap_err().to_string();
    assert_eq!(
        e,
        "base.json has no test named \"flakey\"; did you mean \"flaky\"?"
    );
    // Part of the one name that holds it, in any case.
    let part = DiffOptions {
        test: Some("FLA".into()),
        ..options()
    };
    let e = diff_runs(&results, &part).unwrap_err().to_string();
    assert_eq!(
        e,
        "base.json has no test named \"FLA\"; did you mean \"flaky\"?"
    );
}

/// A repeated test whose pass rate fell significantly is a regression; a small fall is a
/// change, not a regression.
#[test]
fn pass_rates_are_compared_as_the_baseline_does() {
    let runs = |passing: usize, n: usize| {
        repeated(
            "r",
            (0..n)
                .map(|i| {
                    if i < passing {
                        run("r", vec![edit(), pytest()], AssertionStatus::Pass)
                    } else {
                        run("r", vec![edit()], AssertionStatus::Fail)
                    }
                })
                .collect(),
        )
    };
    assert_eq!(
        classify(&runs(10, 10), &runs(1, 10), 0.05),
        Change::Regressed
    );
    assert_eq!(classify(&runs(5, 5), &runs(4, 5), 0.05), Change::Changed);
    assert_eq!(classify(&runs(3, 5), &runs(3, 5), 0.05), Change::Unchanged);
    let base = Results::new(vec![runs(10, 10)], 1);
    let head = Results::new(vec![runs(1, 10)], 1);
    let r = diff(&base, &head, &options()).unwrap();
    let t = &r.tests[0];
    assert_eq!(
        (t.base.run, t.head.run),
        (1, 2),
        "a passing base run, a failing head run"
    );
    assert_eq!((t.head.passed, t.head.judged), (Some(1), Some(10)));
}

/// A routing prompt's test with `n` runs, each choosing `chose` (`None`: no skill).
fn routing_prompt(
    text: &str,
    prompt: u32,
    expect: Option<&str>,
    chose: &[Option<&str>],
) -> TestResult {
    let case = crate::spec::routing::RoutingCase {
        suite: "docs".into(),
        skills: vec!["release".into(), "pdf".into()],
        prompt,
        expect: expect.map(str::to_owned),
        near_miss_for: Vec::new(),
        stop: crate::spec::routing::Stop::FirstCall,
    };
    let runs: Vec<TestResult> = chose
        .iter()
        .map(|c| {
            let ok = crate::assertions::routed_as_expected(&case, *c);
            let status = if ok {
                AssertionStatus::Pass
            } else {
                AssertionStatus::Fail
            };
            let a = AssertionResult {
                routing: Some(crate::assertions::RouteDecision {
                    triggered: c.map(str::to_owned),
                    evidence: None,
                }),
                ..AssertionResult::new("routing", case.expectation(), status, 3, None)
            };
            TestResult {
                status: TestResult::status_of(None, std::slice::from_ref(&a)),
                assertions: vec![a],
                routing: Some(case.clone()),
                ..TestResult::new(
                    format!("docs › {text}"),
                    "r.aptitude.yaml",
                    TestStatus::Passed,
                )
            }
        })
        .collect();
    let n = runs.len() as u32;
    crate::verdict::repeat::aggregate(runs, n / 2 + 1)
}

/// `diff` sees the routing regression `--baseline` reports: the skill, the agent, the
/// figure before → after, and the prompts whose choice changed; the prompts are no tests
/// of their own, and the exit code says it regressed.
#[test]
fn a_routing_regression_is_listed_with_the_prompts_whose_choice_changed() {
    let suite = |chose: Option<&str>| {
        Results::new(
            (1..=5)
                .map(|i| {
                    routing_prompt(&format!("tag release {i}"), i, Some("release"), &[chose; 3])
                })
                .chain([routing_prompt(
                    "rotate a.pdf",
                    6,
                    Some("pdf"),
                    &[Some("pdf"); 3],
                )])
                .collect(),
            1,
        )
    };
    let (base, head) = (suite(Some("release")), suite(None));
    let r = diff(&base, &head, &options()).unwrap();
    assert!(r.tests.is_empty(), "prompts are not tests: {:?}", r.tests);
    assert!(r.any_regressed());
    assert_eq!(r.summary.routing_regressed, 1);
    let fell = &r.routing[0];
    assert_eq!(
        (fell.skill.as_str(), fell.figure.as_str(), fell.change),
        ("release", "recall", Change::Regressed)
    );
    assert_eq!((fell.before, fell.after), ([5, 5], [0, 5]));
    assert_eq!(fell.prompts.len(), 5, "the pdf prompt chose as before");
    let p = &fell.prompts[0];
    assert_eq!(p.name, "docs › tag release 1");
    assert_eq!(p.expect, "should trigger release");
    assert_eq!(p.base, "chose release in 3 of 3 runs");
    assert_eq!(p.head, "chose none in 3 of 3 runs");
    let text = to_terminal(&r);
    assert!(
        text.contains(
            "✗ routing: release on claude (docs): recall 5/5 → 0/5 prompts (p = 0.004, regressed)"
        ),
        "{text}"
    );
    assert!(text.contains("head: chose none in 3 of 3 runs"), "{text}");
    let md = to_markdown(&r);
    assert!(md.contains("| docs › tag release 1 | should trigger release | chose release in 3 of 3 runs | chose none in 3 of 3 runs |"), "{md}");
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(
        json["routing"][0]["prompts"][0]["head"],
        "chose none in 3 of 3 runs"
    );
    assert_eq!(json["summary"]["routing_regressed"], 1);
    // Unchanged: nothing listed, nothing regressed.
    let same = diff(&base, &base, &options()).unwrap();
    assert!(same.routing.is_empty() && !same.any_regressed());
}
