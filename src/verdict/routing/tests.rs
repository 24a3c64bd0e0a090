//! The routing figures, checked by hand against scripted choices.

use super::*;
use crate::assertions::{AssertionResult, AssertionStatus, RouteDecision};

/// What one run did: triggered a skill, none, or errored.
#[derive(Clone, Copy)]
enum Run {
    Skill(&'static str),
    None,
    Error,
}

fn case(prompt: u32, expect: Option<&str>) -> RoutingCase {
    RoutingCase {
        suite: "docs".into(),
        skills: vec!["pdf".into(), "docx".into()],
        prompt,
        expect: expect.map(str::to_owned),
        near_miss_for: Vec::new(),
        stop: Stop::FirstCall,
    }
}

/// A prompt's test on `agent`: one run per item of `runs`.
fn prompt(agent: AgentKind, number: u32, expect: Option<&str>, runs: &[Run]) -> TestResult {
    let case = case(number, expect);
    let one = |run: Run| {
        let (status, decision) = match run {
            Run::Skill(s) => (
                TestStatus::Passed,
                Some(RouteDecision {
                    triggered: Some(s.to_owned()),
                    evidence: Some(format!("#1 Skill skill=\"{s}\"")),
                }),
            ),
            Run::None => (
                TestStatus::Passed,
                Some(RouteDecision {
                    triggered: None,
                    evidence: None,
                }),
            ),
            Run::Error => (TestStatus::Error, None),
        };
        TestResult {
            agent_id: Some(agent),
            routing: Some(case.clone()),
            assertions: vec![AssertionResult {
                routing: decision,
                ..AssertionResult::new(
                    "routing",
                    "routing".into(),
                    if status == TestStatus::Error {
                        AssertionStatus::Error
                    } else {
                        AssertionStatus::Pass
                    },
                    3,
                    None,
                )
            }],
            ..TestResult::new(format!("docs › p{number}"), "r.aptitude.yaml", status)
        }
    };
    let each: Vec<TestResult> = runs.iter().map(|r| one(*r)).collect();
    if each.len() == 1 {
        each.into_iter().next().unwrap()
    } else {
        crate::verdict::repeat::aggregate(each, runs.len() as u32)
    }
}

#[track_caller]
fn close(actual: f64, expected: f64) {
    assert!((actual - expected).abs() < 1e-12, "{actual} != {expected}");
}

/// Five prompts × three runs on Claude, their choices scripted; every figure worked out by
/// hand. Wilson bounds from the formula in Python (`p`, `n` = prompts).
#[test]
fn figures_and_matrix_match_the_scripted_choices() {
    use Run::{Error, None, Skill};
    let claude = AgentKind::Claude;
    let tests = vec![
        prompt(claude, 1, Some("pdf"), &[Skill("pdf"), Skill("pdf"), None]),
        prompt(claude, 2, Some("pdf"), &[None, None, None]),
        prompt(
            claude,
            3,
            Some("docx"),
            &[Skill("docx"), Skill("docx"), Skill("docx")],
        ),
        prompt(claude, 4, Option::None, &[Skill("pdf"), None, Skill("zip")]),
        prompt(claude, 5, Option::None, &[Error, Error, Error]),
    ];
    let routing = of(&tests).unwrap();
    assert_eq!(routing.entries.len(), 2);
    let pdf = &routing.entries[0];
    assert_eq!((pdf.skill.as_str(), pdf.agent), ("pdf", claude));
    // Recall: prompt 1 triggered 2/3, prompt 2 0/3: mean 1/3 over 2 prompts.
    let recall = pdf.recall.unwrap();
    close(recall.value, 1.0 / 3.0);
    close(recall.low, 0.045_255_085_819_509_266);
    close(recall.high, 0.840_618_171_678_273);
    assert_eq!(
        (
            recall.prompts,
            recall.prompts_triggered,
            recall.runs,
            recall.triggered
        ),
        (2, 1, 6, 2)
    );
    // False triggers: prompt 3 0/3, prompt 4 1/3 (prompt 5 errored: in no figure).
    let false_rate = pdf.false_trigger_rate.unwrap();
    close(false_rate.value, 1.0 / 6.0);
    close(false_rate.low, 0.012_526_757_612_267_125);
    close(false_rate.high, 0.759_219_757_383_297_5);
    assert_eq!((false_rate.prompts, false_rate.prompts_triggered), (2, 0));
    assert_eq!(
        pdf.errors,
        Errored {
            runs: 3,
            prompts: 1
        }
    );
    let docx = &routing.entries[1];
    let recall = docx.recall.unwrap();
    close(recall.value, 1.0);
    close(recall.low, 0.206_549_314_377_237_45);
    close(recall.high, 1.0);
    let false_rate = docx.false_trigger_rate.unwrap();
    close(false_rate.value, 0.0);
    close(false_rate.low, 0.0);
    close(false_rate.high, 0.561_497_031_755_045_4);
    assert_eq!(false_rate.prompts, 3);

    let m = &routing.matrices[0];
    assert_eq!(m.classes, ["pdf", "docx", "(none)"]);
    assert_eq!(m.prompts, [2, 1, 2]);
    assert_eq!(m.runs, [6, 3, 3]);
    let rows: Vec<(&str, &[u32])> = m
        .rows
        .iter()
        .map(|r| (r.triggered.as_str(), r.counts.as_slice()))
        .collect();
    assert_eq!(
        rows,
        [
            ("pdf", &[2, 0, 1][..]),
            ("docx", &[0, 3, 0][..]),
            ("(none)", &[4, 0, 1][..]),
            ("(other)", &[0, 0, 1][..]),
        ]
    );
    assert_eq!(
        pdf.matrix,
        [
            ClassCount {
                class: "pdf".into(),
                triggered: 2,
                runs: 6
            },
            ClassCount {
                class: "docx".into(),
                triggered: 0,
                runs: 3
            },
            ClassCount {
                class: "(none)".into(),
                triggered: 1,
                runs: 3
            },
        ]
    );

    // Results JSON's `routing` carries it, and reads back.
    let routing = of(&tests);
    let json = serde_json::to_value(&routing).unwrap();
    let entry = &json["entries"][0];
    assert_eq!(entry["skill"], "pdf");
    assert_eq!(entry["agent"], "claude");
    for key in ["value", "low", "high"] {
        assert!(entry["recall"][key].is_f64(), "{entry:#}");
        assert!(entry["false_trigger_rate"][key].is_f64(), "{entry:#}");
    }
    assert!(entry["matrix"].is_array());
    let back: Option<Routing> = serde_json::from_value(json).unwrap();
    assert_eq!(back, routing);
}

/// Figures are per agent: the same suite on two agents is two matrices.
#[test]
fn each_agent_has_its_own_figures() {
    let tests = vec![
        prompt(AgentKind::Claude, 1, Some("pdf"), &[Run::Skill("pdf")]),
        prompt(AgentKind::Copilot, 1, Some("pdf"), &[Run::None]),
    ];
    let routing = of(&tests).unwrap();
    assert_eq!(routing.matrices.len(), 2);
    let recall = |agent| {
        routing
            .entries
            .iter()
            .find(|e| e.skill == "pdf" && e.agent == agent)
            .and_then(|e| e.recall)
            .map(|f| f.value)
    };
    assert_eq!(recall(AgentKind::Claude), Some(1.0));
    assert_eq!(recall(AgentKind::Copilot), Some(0.0));
    assert!(of(&[TestResult::new("t", "t.aptitude.yaml", TestStatus::Passed)]).is_none());
}

/// A suite where every prompt of `pdf` triggers in `pdf_runs` of 10 runs.
fn suite(pdf_runs: &[u32]) -> Routing {
    let tests: Vec<TestResult> = pdf_runs
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let runs: Vec<Run> = (0..10)
                .map(|r| if r < *k { Run::Skill("pdf") } else { Run::None })
                .collect();
            prompt(AgentKind::Claude, i as u32 + 1, Some("pdf"), &runs)
        })
        .collect();
    of(&tests).unwrap()
}

/// Each prompt counts once: two prompts of ten runs each, one that stopped triggering.
/// Pooled over runs (20/20 → 10/20) Fisher gives p ≈ 0.0002; over prompts (2/2 → 1/2) it
/// is p = 0.5, no regression. Ten prompts that all stopped are one.
#[test]
fn a_drop_is_a_regression_only_when_significant_over_prompts() {
    let base = suite(&[10, 10]);
    let now = suite(&[10, 0]);
    assert!(
        crate::verdict::stats::fisher_exact_less([[10, 10], [20, 0]]) < 0.001,
        "pooled runs would call it significant"
    );
    let c = compare(&now, &base, 0.05);
    assert!(c.regressions.is_empty(), "{c:#?}");
    assert_eq!(c.changed.len(), 1, "{c:#?}");
    assert_eq!(c.changed[0].before, [2, 2]);
    assert_eq!(c.changed[0].after, [1, 2]);
    close(c.changed[0].p_value, 0.5);

    let base = suite(&[10; 10]);
    let now = suite(&[0, 0, 0, 0, 0, 0, 0, 0, 9, 10]);
    let c = compare(&now, &base, 0.05);
    assert_eq!(c.regressions.len(), 1, "{c:#?}");
    let r = &c.regressions[0];
    assert_eq!(
        (r.figure.as_str(), r.before, r.after),
        ("recall", [10, 10], [2, 10])
    );
    // scipy.stats.fisher_exact([[2, 8], [10, 0]], alternative="less").pvalue = 66 / C(20, 10)
    close(r.p_value, 0.000_357_227_911_407_477_97);
    assert_eq!(
        r.phrase(),
        "pdf on claude: recall 10/10 → 2/10 prompts (p < 0.001)"
    );

    // The other way round it is an improvement, and the same run against itself no change.
    let c = compare(&base, &now, 0.05);
    assert_eq!(c.improvements.len(), 1);
    assert!(
        compare(&now, &now, 0.05)
            == RoutingBaseline {
                significance: 0.05,
                ..RoutingBaseline::default()
            }
    );
}

/// A false-trigger rate that rose significantly is a regression too.
#[test]
fn more_false_triggers_are_a_regression() {
    let negatives = |k: u32| -> Routing {
        let tests: Vec<TestResult> = (0..10)
            .map(|i| {
                let run = if i < k { Run::Skill("pdf") } else { Run::None };
                prompt(AgentKind::Claude, i + 1, Some("docx"), &[run])
            })
            .collect();
        of(&tests).unwrap()
    };
    let c = compare(&negatives(8), &negatives(0), 0.05);
    let pdf: Vec<&RoutingChange> = c.regressions.iter().filter(|r| r.skill == "pdf").collect();
    assert_eq!(pdf.len(), 1, "{c:#?}");
    assert_eq!(pdf[0].figure, "false_trigger_rate");
    assert_eq!((pdf[0].before, pdf[0].after), ([0, 10], [8, 10]));
    assert!(pdf[0].p_value < 0.001);
}
