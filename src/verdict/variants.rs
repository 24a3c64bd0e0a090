//! Variants side by side: for a test that declares `variants:`, each variant's pass rate and
//! per-assertion pass counts next to the others', and how far each is from `default` — the
//! answer to "does my AGENTS.md (skill, setting) change what the agent does?".
//!
//! Computed once from the test results ([`compare`]), kept in the results JSON
//! (`summary.variants`) and shown by every report from the same [`VariantComparison::grid`],
//! so that the terminal, Markdown, HTML and the GitHub comment say the same thing.
//!
//! Rules: the pass rate is passed ÷ judged runs (errored and skipped runs left out, as in
//! [`crate::verdict::repeat`]) with its Wilson 95% interval; a variant whose verdict is `error` or
//! `skipped` has no pass rate — it is shown as that word, never as a rate, and never
//! compared. Against `default`: the difference of the pass rates, and, when the test ran
//! more than once, the two-sided Fisher exact p-value of the 2×2 table (variant's passed and
//! failed runs, default's passed and failed runs) — small when the variant's rate really
//! differs ([`crate::verdict::stats::fisher_exact_two_sided`]).

use serde::{Deserialize, Serialize};

use super::test_result::{AssertionStatus, TestResult, TestStatus};
use crate::spec::DEFAULT_VARIANT;
use crate::spec::agent_kind::AgentKind;

/// One test's variants side by side, on one agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VariantComparison {
    /// The test's name.
    pub name: String,
    /// Its file.
    pub file: String,
    /// The agent the variants ran on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<AgentKind>,
    /// Each variant that ran, `default` first, then in the order they ran.
    pub variants: Vec<VariantStats>,
    /// Each assertion (by line, in file order), with its counts per variant.
    pub assertions: Vec<AssertionRow>,
}

/// One variant's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VariantStats {
    /// The variant's name (`default` is the test as written).
    pub variant: String,
    /// Its verdict.
    pub status: TestStatus,
    /// Runs made.
    pub runs: u32,
    /// Runs passed.
    pub passed: u32,
    /// Runs failed.
    pub failed: u32,
    /// Runs errored (left out of the pass rate).
    pub errors: u32,
    /// Runs skipped (left out of the pass rate).
    pub skipped: u32,
    /// Passed ÷ judged runs, 0–1; absent when the variant is `error` or `skipped`, or no
    /// run was judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_rate: Option<f64>,
    /// Lower end of the pass rate's Wilson 95% interval, 0–1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wilson_low: Option<f64>,
    /// Upper end of the pass rate's Wilson 95% interval, 0–1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wilson_high: Option<f64>,
    /// This pass rate minus `default`'s, −1 to 1 (−1 is −100 points); absent for `default`
    /// itself and when either has no pass rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub difference: Option<f64>,
    /// The two-sided Fisher exact p-value of this variant's passed/failed runs against
    /// `default`'s, 0–1; only when the test ran more than once and both have a pass rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p_value: Option<f64>,
}

/// One assertion across the variants.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AssertionRow {
    /// 1-based line in the test file.
    pub line: u32,
    /// What was asserted.
    pub description: String,
    /// Per variant of [`VariantComparison::variants`], in that order: its counts, absent
    /// when the assertion did not run in that variant.
    pub counts: Vec<Option<AssertionCount>>,
}

/// How often one assertion held in one variant's runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AssertionCount {
    /// Runs in which it held.
    pub passed: u32,
    /// Runs in which it did not hold.
    pub failed: u32,
    /// Runs in which it errored, was invalid or skipped.
    pub other: u32,
}

/// The comparisons of every test that ran with two or more variants, in the order the
/// tests first appear; one per test and agent.
pub fn compare(tests: &[TestResult]) -> Vec<VariantComparison> {
    let mut groups: Vec<Vec<&TestResult>> = Vec::new();
    for t in tests.iter().filter(|t| t.variant.is_some()) {
        match groups.iter_mut().find(|g| {
            g.first()
                .is_some_and(|f| f.name == t.name && f.file == t.file && f.agent_id == t.agent_id)
        }) {
            Some(group) => group.push(t),
            None => groups.push(vec![t]),
        }
    }
    groups
        .into_iter()
        .filter(|g| g.len() > 1)
        .map(|mut group| {
            // `default` first; the sort is stable, so the others keep their order.
            group.sort_by_key(|t| t.variant.as_deref() != Some(DEFAULT_VARIANT));
            comparison(&group)
        })
        .collect()
}

fn comparison(group: &[&TestResult]) -> VariantComparison {
    let repeated = group
        .iter()
        .any(|t| t.repeat.as_ref().is_some_and(|r| r.runs > 1));
    let mut variants: Vec<VariantStats> = group.iter().map(|t| stats(t)).collect();
    let baseline = variants
        .iter()
        .find(|v| v.variant == DEFAULT_VARIANT)
        .filter(|v| v.pass_rate.is_some())
        .map(|v| (v.pass_rate, v.passed, v.failed));
    for v in variants.iter_mut().filter(|v| v.variant != DEFAULT_VARIANT) {
        let (Some((Some(base), base_passed, base_failed)), Some(rate)) = (baseline, v.pass_rate)
        else {
            continue;
        };
        v.difference = Some(rate - base);
        if repeated {
            v.p_value = Some(crate::verdict::stats::fisher_exact_two_sided([
                [v.passed, v.failed],
                [base_passed, base_failed],
            ]));
        }
    }
    let mut lines: Vec<(u32, String)> = Vec::new();
    for t in group {
        for a in &t.assertions {
            if !lines.iter().any(|(line, _)| *line == a.line) {
                lines.push((a.line, a.description.clone()));
            }
        }
    }
    lines.sort_by_key(|(line, _)| *line);
    let assertions = lines
        .into_iter()
        .map(|(line, description)| AssertionRow {
            line,
            description,
            counts: group.iter().map(|t| assertion_count(t, line)).collect(),
        })
        .collect();
    let first = group.first();
    VariantComparison {
        name: first.map(|t| t.name.clone()).unwrap_or_default(),
        file: first.map(|t| t.file.clone()).unwrap_or_default(),
        agent_id: first.and_then(|t| t.agent_id),
        variants,
        assertions,
    }
}

/// A variant's figures from its result: the repeat figures of a repeated test, else its one
/// run's verdict.
fn stats(t: &TestResult) -> VariantStats {
    let (runs, passed, failed, errors, skipped) = match &t.repeat {
        Some(r) => (r.runs, r.passed, r.failed, r.errors, r.skipped),
        None => {
            let is = |s: TestStatus| u32::from(t.status == s);
            (
                1,
                is(TestStatus::Passed),
                is(TestStatus::Failed),
                is(TestStatus::Error),
                is(TestStatus::Skipped),
            )
        }
    };
    let judged = passed + failed;
    let rated = judged > 0 && matches!(t.status, TestStatus::Passed | TestStatus::Failed);
    let interval = crate::verdict::stats::wilson_interval(passed, judged).filter(|_| rated);
    VariantStats {
        variant: t
            .variant
            .clone()
            .unwrap_or_else(|| DEFAULT_VARIANT.to_owned()),
        status: t.status,
        runs,
        passed,
        failed,
        errors,
        skipped,
        pass_rate: rated.then(|| f64::from(passed) / f64::from(judged)),
        wilson_low: interval.map(|i| i.low),
        wilson_high: interval.map(|i| i.high),
        difference: None,
        p_value: None,
    }
}

/// The assertion at `line` over `t`'s runs (its one run, when not repeated); `None` when
/// it was skipped or absent in every run (a `variants: [..]` assertion of other variants).
fn assertion_count(t: &TestResult, line: u32) -> Option<AssertionCount> {
    let each: Vec<&TestResult> = if t.runs.is_empty() {
        vec![t]
    } else {
        t.runs.iter().collect()
    };
    let statuses: Vec<AssertionStatus> = each
        .iter()
        .filter_map(|r| r.assertions.iter().find(|a| a.line == line))
        .map(|a| a.status)
        .collect();
    if statuses.iter().all(|s| *s == AssertionStatus::Skip) {
        return None;
    }
    let count = |wanted: AssertionStatus| statuses.iter().filter(|s| **s == wanted).count() as u32;
    let (passed, failed) = (count(AssertionStatus::Pass), count(AssertionStatus::Fail));
    Some(AssertionCount {
        passed,
        failed,
        other: statuses.len() as u32 - passed - failed,
    })
}

impl VariantStats {
    /// `2/2 passed`, or the verdict word for a variant without a pass rate.
    pub fn passed_cell(&self) -> String {
        let mut s = format!("{}/{} passed", self.passed, self.runs);
        if self.errors > 0 {
            s.push_str(&format!(", {} errored", self.errors));
        }
        if self.skipped > 0 {
            s.push_str(&format!(", {} skipped", self.skipped));
        }
        s
    }

    /// `100% (95% CI 34%–100%)`; `error` or `skipped` when the variant has no pass rate.
    pub fn rate_cell(&self) -> String {
        let pct = |x: f64| format!("{:.0}%", x * 100.0);
        match (self.pass_rate, self.wilson_low, self.wilson_high) {
            (Some(rate), Some(lo), Some(hi)) if self.runs > 1 => {
                format!("{} (95% CI {}–{})", pct(rate), pct(lo), pct(hi))
            }
            (Some(rate), ..) => pct(rate),
            _ => match self.status {
                TestStatus::Skipped => "skipped".to_owned(),
                _ => "error".to_owned(),
            },
        }
    }

    /// `-100 pts (p = 0.333)` against `default`; empty for `default` itself, `—` when no
    /// difference could be computed.
    pub fn difference_cell(&self) -> String {
        if self.variant == DEFAULT_VARIANT {
            return String::new();
        }
        let Some(difference) = self.difference else {
            return "—".to_owned();
        };
        let points = (difference * 100.0).round();
        let mut s = if points == 0.0 {
            "0 pts".to_owned()
        } else {
            format!("{points:+.0} pts")
        };
        if let Some(p) = self.p_value {
            s.push_str(&format!(" ({})", p_phrase(p)));
        }
        s
    }
}

/// `p = 0.333`, `p < 0.001`.
pub fn p_phrase(p: f64) -> String {
    crate::shared::text::p_phrase(p)
}

impl AssertionCount {
    /// `2/2`: runs it held in over runs it was judged in, and how many it was not checked in.
    pub fn cell(&self) -> String {
        let mut s = format!("{}/{}", self.passed, self.passed + self.failed);
        if self.other > 0 {
            s.push_str(&format!(" ({} not checked)", self.other));
        }
        s
    }
}

/// One row of a [`VariantComparison::grid`]: its label and one cell per variant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GridRow {
    /// `runs`, `pass rate`, `vs default`, or `line 7: <assertion>`.
    pub label: String,
    /// One text per variant.
    pub cells: Vec<String>,
    /// What the row shows.
    pub kind: RowKind,
}

/// What a [`GridRow`] shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowKind {
    /// Runs passed of runs made.
    Runs,
    /// The pass rate with its interval, or the verdict of a variant without one.
    PassRate,
    /// The difference to `default`, with its p-value.
    Difference,
    /// One assertion's pass count.
    Assertion,
}

impl VariantComparison {
    /// `name` with the agent (`greets · codex`) when `with_agent`.
    pub fn title(&self, with_agent: bool) -> String {
        match (with_agent, self.agent_id) {
            (true, Some(agent)) => format!("{} · {agent}", self.name),
            _ => self.name.clone(),
        }
    }

    /// The variants' names, the table's columns.
    pub fn columns(&self) -> Vec<&str> {
        self.variants.iter().map(|v| v.variant.as_str()).collect()
    }

    /// The table every report shows, variants as columns: runs passed, pass rate, the
    /// difference to `default` (when a default ran), then one row per assertion.
    pub fn grid(&self) -> Vec<GridRow> {
        let row = |kind: RowKind, label: &str, cell: fn(&VariantStats) -> String| GridRow {
            label: label.to_owned(),
            cells: self.variants.iter().map(cell).collect(),
            kind,
        };
        let mut rows = vec![
            row(RowKind::Runs, "runs", VariantStats::passed_cell),
            row(RowKind::PassRate, "pass rate", VariantStats::rate_cell),
        ];
        if self.variants.iter().any(|v| v.variant == DEFAULT_VARIANT) {
            rows.push(row(
                RowKind::Difference,
                "vs default",
                VariantStats::difference_cell,
            ));
        }
        rows.extend(self.assertions.iter().map(|a| {
            GridRow {
                label: format!("line {}: {}", a.line, a.description),
                cells: a
                    .counts
                    .iter()
                    .map(|c| c.map_or_else(|| "—".to_owned(), |c| c.cell()))
                    .collect(),
                kind: RowKind::Assertion,
            }
        }));
        rows
    }
}

/// Whether the comparisons span several agents (then each names its agent).
pub fn several_agents(comparisons: &[VariantComparison]) -> bool {
    comparisons
        .iter()
        .any(|c| c.agent_id != comparisons.first().and_then(|f| f.agent_id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::results::AssertionResult;

    fn run(variant: &str, status: TestStatus, held: bool) -> TestResult {
        let mut r: TestResult = serde_json::from_value(serde_json::json!({
            "name": "reads no secrets", "file": "t.aptitude.yaml", "status": "passed",
            "duration_ms": 1, "usage": null, "error": null, "assertions": []
        }))
        .unwrap();
        r.status = status;
        r.variant = Some(variant.to_owned());
        r.agent_id = Some(AgentKind::Claude);
        r.assertions = vec![AssertionResult::new(
            "tool",
            "Read not called".into(),
            AssertionStatus::pass_if(held),
            7,
            None,
        )];
        r
    }

    fn repeated(variant: &str, held: &[bool]) -> TestResult {
        let runs = held
            .iter()
            .map(|h| {
                let status = if *h {
                    TestStatus::Passed
                } else {
                    TestStatus::Failed
                };
                run(variant, status, *h)
            })
            .collect();
        crate::verdict::repeat::aggregate(runs, held.len() as u32)
    }

    #[test]
    fn two_runs_each_differ_by_100_points_with_fisher_p() {
        let tests = [
            repeated("baseline", &[false, false]),
            repeated("default", &[true, true]),
        ];
        let c = compare(&tests);
        assert_eq!(c.len(), 1);
        let c = &c[0];
        assert_eq!(c.columns(), ["default", "baseline"], "default comes first");
        let (default, baseline) = (&c.variants[0], &c.variants[1]);
        assert_eq!(default.pass_rate, Some(1.0));
        assert_eq!(baseline.pass_rate, Some(0.0));
        assert_eq!(baseline.difference, Some(-1.0));
        // scipy.stats.fisher_exact([[0, 2], [2, 0]]).pvalue
        assert!((baseline.p_value.unwrap() - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(default.difference, None);
        let grid = c.grid();
        let cells = |label: &str| {
            grid.iter()
                .find(|r| r.label == label)
                .map(|r| r.cells.clone())
                .unwrap()
        };
        assert_eq!(cells("runs"), ["2/2 passed", "0/2 passed"]);
        assert_eq!(
            cells("pass rate"),
            ["100% (95% CI 34%–100%)", "0% (95% CI 0%–66%)"]
        );
        assert_eq!(cells("vs default"), ["", "-100 pts (p = 0.333)"]);
        assert_eq!(cells("line 7: Read not called"), ["2/2", "0/2"]);
    }

    #[test]
    fn an_errored_variant_shows_error_never_a_rate() {
        let tests = [
            run("default", TestStatus::Passed, true),
            run("baseline", TestStatus::Error, true),
        ];
        let c = &compare(&tests)[0];
        let baseline = &c.variants[1];
        assert_eq!(baseline.pass_rate, None);
        assert_eq!(baseline.difference, None);
        assert_eq!(baseline.p_value, None);
        assert_eq!(baseline.rate_cell(), "error");
        assert_eq!(baseline.difference_cell(), "—");
        // One run each: a difference, but no p-value.
        let tests = [
            run("default", TestStatus::Passed, true),
            run("baseline", TestStatus::Failed, false),
        ];
        let baseline = &compare(&tests)[0].variants[1];
        assert_eq!(baseline.difference_cell(), "-100 pts");
        assert_eq!(baseline.rate_cell(), "0%");
    }

    #[test]
    fn one_variant_alone_or_no_variants_has_no_comparison() {
        assert!(compare(&[run("default", TestStatus::Passed, true)]).is_empty());
        let mut plain = run("default", TestStatus::Passed, true);
        plain.variant = None;
        assert!(compare(&[plain.clone(), plain]).is_empty());
    }

    #[test]
    fn each_agent_gets_its_own_comparison() {
        let mut codex = [
            run("default", TestStatus::Passed, true),
            run("baseline", TestStatus::Passed, true),
        ];
        for t in &mut codex {
            t.agent_id = Some(AgentKind::Codex);
        }
        let tests = [
            run("default", TestStatus::Passed, true),
            codex[0].clone(),
            run("baseline", TestStatus::Failed, false),
            codex[1].clone(),
        ];
        let c = compare(&tests);
        assert_eq!(c.len(), 2);
        assert!(several_agents(&c));
        assert_eq!(c[1].title(true), "reads no secrets · codex");
        assert_eq!(c[1].variants[1].difference_cell(), "0 pts");
    }

    #[test]
    fn an_assertion_skipped_in_a_variant_is_not_counted_there() {
        let mut baseline = run("baseline", TestStatus::Passed, true);
        baseline.assertions[0].status = AssertionStatus::Skip;
        let tests = [run("default", TestStatus::Passed, true), baseline];
        let c = &compare(&tests)[0];
        assert_eq!(
            c.assertions[0].counts,
            [
                Some(AssertionCount {
                    passed: 1,
                    failed: 0,
                    other: 0
                }),
                None
            ]
        );
        assert_eq!(c.grid().last().unwrap().cells, ["1/1", "—"]);
    }

    /// Every report renders the same grid: an errored variant reads `error` in each, never
    /// a rate, and the PR comment (Markdown) carries the table.
    #[test]
    fn every_report_shows_the_same_table_and_an_error_as_error() {
        let results = crate::verdict::results::Results::new(
            vec![
                repeated("default", &[true, true]),
                repeated("baseline", &[false, true]),
                run("broken", TestStatus::Error, true),
            ],
            1,
        );
        assert_eq!(
            results.summary.variants.len(),
            1,
            "kept in the results JSON"
        );
        let terminal = crate::report::terminal::render_variants(&results).unwrap();
        assert!(
            terminal.contains("-50 pts (p = 1.000)") && terminal.contains("error"),
            "{terminal}"
        );
        let markdown = crate::report::markdown::render(
            &results,
            &crate::report::markdown::MarkdownOptions::default(),
        );
        assert!(
            markdown
                .contains("| pass rate | 100% (95% CI 34%–100%) | 50% (95% CI 9%–91%) | error |"),
            "{markdown}"
        );
        assert!(
            markdown.contains("| vs default |  | -50 pts (p = 1.000) | — |"),
            "{markdown}"
        );
        let comment = crate::report::github::body(
            &results,
            &crate::report::github::GithubEnv::default(),
            &crate::report::github::PublishOptions::default(),
            65_536,
        );
        assert!(
            comment.contains("| line 7: Read not called | 2/2 | 1/2 | 1/1 |"),
            "{comment}"
        );
        let html = crate::report::html::render(&results).unwrap();
        assert!(
            html.contains("<caption>Variants of reads no secrets"),
            "{html}"
        );
        assert!(
            html.contains("<th scope=\"row\">pass rate</th><td class=\"passed\">100% (95% CI 34%–100%)</td><td class=\"failed\">50% (95% CI 9%–91%)</td><td class=\"error\">error</td>"),
            "{html}"
        );
    }
}
