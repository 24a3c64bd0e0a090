//! Coverage of a workspace's rules: covered and uncovered, pass rates from results, the
//! effect of a rule a variant removes.

use std::path::Path;

use super::*;
use crate::verdict::test_result::TestStatus;
use crate::verdict::variants::{VariantComparison, VariantStats};

const AGENTS: &str = "# Rules\n\n- Run the linter before every commit.\n- Add a test for each bug fix.\n- Keep functions short.\n";

fn suite() -> (tempfile::TempDir, Vec<TestSpec>, Vec<Workspace>) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("AGENTS.md"), AGENTS).unwrap();
    let test = dir.path().join("lint.aptitude.yaml");
    std::fs::write(
        &test,
        "name: lint\nprompt: p\nworkspace: ws\ncovers: \"run the linter\"\nvariants:\n  without-agents-md:\n    remove: [AGENTS.md]\nassertions:\n  - ran: lint\n",
    )
    .unwrap();
    let other = dir.path().join("tests.aptitude.yaml");
    std::fs::write(
        &other,
        "name: bugfix\nprompt: p\nworkspace: ws\ncovers: [\"run the linter\", \"bug fix\"]\nassertions:\n  - tool: Edit\n",
    )
    .unwrap();
    let specs = vec![
        crate::spec::load_file(&test).unwrap(),
        crate::spec::load_file(&other).unwrap(),
    ];
    let workspaces = vec![Workspace {
        dir: "ws".into(),
        rules: crate::spec::rules::rules_in(&ws),
    }];
    (dir, specs, workspaces)
}

fn shown(base: &Path) -> impl Fn(&Path) -> String + '_ {
    move |p: &Path| {
        p.strip_prefix(base)
            .map(|r| r.display().to_string())
            .unwrap_or_default()
    }
}

fn stats(variant: &str, passed: u32, failed: u32, p: Option<f64>) -> VariantStats {
    let rate = f64::from(passed) / f64::from(passed + failed);
    VariantStats {
        variant: variant.into(),
        status: TestStatus::Passed,
        runs: passed + failed,
        passed,
        failed,
        errors: 0,
        skipped: 0,
        pass_rate: Some(rate),
        wilson_low: None,
        wilson_high: None,
        difference: (variant != DEFAULT_VARIANT).then_some(rate - 1.0),
        p_value: p,
    }
}

/// A run's results as coverage reads them.
struct Results {
    tests: Vec<TestResult>,
    variants: Vec<VariantComparison>,
}

fn results(dir: &Path, without: (u32, u32), p: f64) -> Results {
    let file = |name: &str| crate::spec::diagnostic::display_path(&dir.join(name));
    let mut lint = TestResult::new("lint", file("lint.aptitude.yaml"), TestStatus::Passed);
    lint.variant = Some(DEFAULT_VARIANT.into());
    let bugfix = TestResult::new("bugfix", file("tests.aptitude.yaml"), TestStatus::Failed);
    let mut r = Results {
        tests: vec![lint, bugfix],
        variants: Vec::new(),
    };
    r.variants = vec![VariantComparison {
        name: "lint".into(),
        file: file("lint.aptitude.yaml"),
        agent_id: None,
        variants: vec![
            stats(DEFAULT_VARIANT, 5, 0, None),
            stats("without-agents-md", without.0, without.1, Some(p)),
        ],
        assertions: Vec::new(),
    }];
    r
}

#[test]
fn rules_are_covered_or_uncovered_per_file() {
    let (dir, specs, workspaces) = suite();
    let c = of(&specs, &workspaces, shown(dir.path()), None);
    assert_eq!(
        c.totals,
        Totals {
            covered: 2,
            rules: 3
        }
    );
    assert_eq!(c.files.len(), 1);
    assert_eq!(c.files[0].file, "ws/AGENTS.md");
    let status: Vec<(&str, RuleStatus, usize)> = c
        .rules
        .iter()
        .map(|r| (r.text.as_str(), r.status, r.tests.len()))
        .collect();
    assert_eq!(
        status,
        [
            (
                "Run the linter before every commit.",
                RuleStatus::Covered,
                2
            ),
            ("Add a test for each bug fix.", RuleStatus::Covered, 1),
            ("Keep functions short.", RuleStatus::Uncovered, 0),
        ]
    );
}

#[test]
fn pass_rates_and_the_effect_of_a_removed_rule_come_from_results() {
    let (dir, specs, workspaces) = suite();
    // Without AGENTS.md the linter ran in 0 of 5 runs: the rule matters.
    let c = of(
        &specs,
        &workspaces,
        shown(dir.path()),
        Some(measured(&results(dir.path(), (0, 5), 0.008))),
    );
    let lint = &c.rules[0];
    assert_eq!(
        (lint.pass_rate, lint.runs),
        (Some(0.5), 2),
        "lint passed, bugfix failed"
    );
    let effect = lint.effect.as_ref().unwrap();
    assert_eq!(effect.variant, "without-agents-md");
    assert_eq!(
        (effect.with, effect.without, effect.difference),
        (Some(1.0), Some(0.0), Some(1.0))
    );
    assert_eq!(lint.status, RuleStatus::Covered);
    // The bugfix test has no variant: no effect for its rules.
    assert!(c.rules[1].effect.is_none());
    // Removing it changed nothing over 5 runs each: no measured effect.
    let c = of(
        &specs,
        &workspaces,
        shown(dir.path()),
        Some(measured(&results(dir.path(), (5, 0), 1.0))),
    );
    assert_eq!(c.rules[0].status, RuleStatus::NoMeasuredEffect);
    // Too few runs to tell: still just covered.
    let c = of(
        &specs,
        &workspaces,
        shown(dir.path()),
        Some(measured(&results(dir.path(), (2, 0), 1.0))),
    );
    assert_eq!(c.rules[0].status, RuleStatus::Covered);
}

fn measured(r: &Results) -> Measured<'_> {
    Measured {
        tests: &r.tests,
        variants: &r.variants,
    }
}
