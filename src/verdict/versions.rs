//! Releases side by side: when a run holds more than one version of an agent (`versions:
//! [pinned, latest, "0.72.1"]`, `--agent pi@pinned,pi@0.72.1`), each (agent, version)'s pass
//! rate over every run of every test on it, with its Wilson 95% interval, and how far each
//! is from the reference release — the answer to "does my suite still pass on this release?".
//!
//! Computed once from the test results ([`compare`]), kept in the results JSON
//! (`summary.versions`) and shown by every report from the same cells
//! ([`VersionStats::passed_cell`], [`VersionStats::rate_cell`],
//! [`VersionStats::difference_cell`]), so that the terminal, Markdown, HTML and the GitHub
//! comment say the same thing.
//!
//! Rules, as for variants ([`crate::verdict::variants`]): the pass rate is passed ÷ judged
//! runs (errored and skipped runs left out, and shown beside it) with its Wilson 95%
//! interval; a release with no judged run has no pass rate — it is shown as `error` (or
//! `skipped`), never as a rate, and never compared. The reference is the pinned release
//! (the version aptitude is tested with) when it ran, else the agent found as usual (no
//! exact release), else the oldest release; against it: the difference of the pass rates
//! and the two-sided Fisher exact p-value of the 2×2 table (this release's passed and
//! failed runs, the reference's) ([`crate::verdict::stats::fisher_exact_two_sided`]).
//! A routing suite's prompts are left out (their figures are the routing section's).

use serde::{Deserialize, Serialize};

use super::test_result::{TestResult, TestStatus};
use crate::spec::agent_kind::AgentKind;

/// One (agent, version)'s figures over the suite.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VersionStats {
    /// The agent.
    pub agent: AgentKind,
    /// The exact release the tests ran on (`0.72.1`, never `latest`); absent for the agent
    /// found as usual (`PATH`, `--agent-bin`), whose reported version is in `reported`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The version the agent reported (`pi 0.73.1`), from the first of its results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reported: Option<String>,
    /// Whether this is the version aptitude is tested with (`pinned`).
    #[serde(default)]
    pub pinned: bool,
    /// Whether the others are compared with this one.
    #[serde(default)]
    pub reference: bool,
    /// Tests (results) on this version.
    pub tests: u32,
    /// Runs made (every run of every test).
    pub total: u32,
    /// Runs passed.
    pub passed: u32,
    /// Runs failed.
    pub failed: u32,
    /// Runs errored (left out of the pass rate).
    pub errors: u32,
    /// Runs skipped (left out of the pass rate).
    pub skipped: u32,
    /// Passed ÷ judged runs, 0–1; absent when no run was judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_rate: Option<f64>,
    /// Lower end of the pass rate's Wilson 95% interval, 0–1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wilson_low: Option<f64>,
    /// Upper end of the pass rate's Wilson 95% interval, 0–1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wilson_high: Option<f64>,
    /// This pass rate minus the reference's, −1 to 1; absent for the reference itself and
    /// when either has no pass rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub difference: Option<f64>,
    /// The two-sided Fisher exact p-value of this version's passed/failed runs against the
    /// reference's, 0–1; absent when `difference` is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p_value: Option<f64>,
}

/// Every agent that ran on more than one version: its versions' figures, grouped by agent
/// (in [`AgentKind`] order), each agent's reference first, then the agent found as usual,
/// then its releases oldest first (semver order; a version that is not semver after them).
/// Empty when no agent ran on two versions.
pub fn compare(tests: &[TestResult]) -> Vec<VersionStats> {
    let mut groups: Vec<(AgentKind, Option<String>, Vec<&TestResult>)> = Vec::new();
    for t in tests.iter().filter(|t| t.routing.is_none()) {
        let agent = t.agent_id.unwrap_or(AgentKind::Claude);
        match groups
            .iter_mut()
            .find(|(a, v, _)| *a == agent && *v == t.agent_version)
        {
            Some((_, _, group)) => group.push(t),
            None => groups.push((agent, t.agent_version.clone(), vec![t])),
        }
    }
    let mut agents: Vec<AgentKind> = groups.iter().map(|(a, ..)| *a).collect();
    agents.sort();
    agents.dedup();
    let mut out = Vec::new();
    for agent in agents {
        let mut versions: Vec<VersionStats> = groups
            .iter()
            .filter(|(a, ..)| *a == agent)
            .map(|(a, v, group)| stats(*a, v.clone(), group))
            .collect();
        if versions.len() < 2 {
            continue;
        }
        versions.sort_by_key(order_key);
        let reference = versions
            .iter()
            .position(|v| v.pinned)
            .or_else(|| versions.iter().position(|v| v.version.is_none()))
            .unwrap_or(0);
        let moved = versions.remove(reference);
        versions.insert(0, moved);
        versions[0].reference = true;
        let base = versions[0].clone();
        for v in versions.iter_mut().skip(1) {
            if let (Some(rate), Some(base_rate)) = (v.pass_rate, base.pass_rate) {
                v.difference = Some(rate - base_rate);
                v.p_value = Some(crate::verdict::stats::fisher_exact_two_sided([
                    [v.passed, v.failed],
                    [base.passed, base.failed],
                ]));
            }
        }
        out.extend(versions);
    }
    out
}

/// Sorts the agent found as usual first, then releases by semver, then the rest by text.
fn order_key(v: &VersionStats) -> (u8, Option<semver::Version>, String) {
    match &v.version {
        None => (0, None, String::new()),
        Some(text) => match semver::Version::parse(text) {
            Ok(parsed) => (1, Some(parsed), text.clone()),
            Err(_) => (2, None, text.clone()),
        },
    }
}

/// One version's figures from its tests' runs (a repeated test's runs, else its one run).
fn stats(agent: AgentKind, version: Option<String>, group: &[&TestResult]) -> VersionStats {
    let (mut total, mut passed, mut failed, mut errors, mut skipped) = (0, 0, 0, 0, 0);
    for t in group {
        match &t.repeat {
            Some(r) => {
                total += r.runs;
                passed += r.passed;
                failed += r.failed;
                errors += r.errors;
                skipped += r.skipped;
            }
            None => {
                total += 1;
                match t.status {
                    TestStatus::Passed => passed += 1,
                    TestStatus::Failed => failed += 1,
                    TestStatus::Error => errors += 1,
                    TestStatus::Skipped => skipped += 1,
                }
            }
        }
    }
    let judged = passed + failed;
    let interval = crate::verdict::stats::wilson_interval(passed, judged);
    let pinned = version.as_deref().is_some_and(|v| {
        crate::agent::registry::cli(agent, &crate::agent::registry::AgentOptions::default())
            .pinned_version()
            == Some(v)
    });
    VersionStats {
        agent,
        version,
        reported: group.first().and_then(|t| t.agent.clone()),
        pinned,
        reference: false,
        tests: group.len() as u32,
        total,
        passed,
        failed,
        errors,
        skipped,
        pass_rate: (judged > 0).then(|| f64::from(passed) / f64::from(judged)),
        wilson_low: interval.map(|i| i.low),
        wilson_high: interval.map(|i| i.high),
        difference: None,
        p_value: None,
    }
}

impl VersionStats {
    /// `0.72.1`, `0.73.1 (pinned)`, or `as installed (pi 0.73.1)` for the agent found as usual.
    pub fn label(&self) -> String {
        match (&self.version, self.pinned) {
            (Some(v), true) => format!("{v} (pinned)"),
            (Some(v), false) => v.clone(),
            (None, _) => match &self.reported {
                Some(reported) => format!("as installed ({reported})"),
                None => "as installed".to_owned(),
            },
        }
    }

    /// `5/6 passed` over the runs made, with the errored and skipped runs when there are.
    pub fn passed_cell(&self) -> String {
        let mut s = format!("{}/{} passed", self.passed, self.total);
        if self.errors > 0 {
            s.push_str(&format!(", {} errored", self.errors));
        }
        if self.skipped > 0 {
            s.push_str(&format!(", {} skipped", self.skipped));
        }
        s
    }

    /// `83% (95% CI 44%–97%)`; `error` (or `skipped`) when no run was judged.
    pub fn rate_cell(&self) -> String {
        let pct = |x: f64| format!("{:.0}%", x * 100.0);
        match (self.pass_rate, self.wilson_low, self.wilson_high) {
            (Some(rate), Some(lo), Some(hi)) => {
                format!("{} (95% CI {}–{})", pct(rate), pct(lo), pct(hi))
            }
            (Some(rate), ..) => pct(rate),
            _ if self.errors == 0 && self.skipped > 0 => "skipped".to_owned(),
            _ => "error".to_owned(),
        }
    }

    /// `-50 pts (p = 0.167)` against the reference; `reference` for the reference itself,
    /// `—` when no difference could be computed.
    pub fn difference_cell(&self) -> String {
        if self.reference {
            return "reference".to_owned();
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
            s.push_str(&format!(" ({})", crate::shared::text::p_phrase(p)));
        }
        s
    }

    /// The status a report colours the rate with: `error`/`skipped` without a pass rate,
    /// `failed` when some judged run failed, else `passed`.
    pub fn status(&self) -> TestStatus {
        match self.pass_rate {
            None if self.errors == 0 && self.skipped > 0 => TestStatus::Skipped,
            None => TestStatus::Error,
            Some(_) if self.failed > 0 => TestStatus::Failed,
            Some(_) => TestStatus::Passed,
        }
    }
}

/// The column heads every report's versions table shows, in order.
pub const COLUMNS: [&str; 5] = ["agent", "release", "runs", "pass rate", "vs reference"];

/// One row of every report's versions table, in [`COLUMNS`] order (plain text: each
/// renderer makes it inert for its output).
pub fn row(v: &VersionStats) -> [String; 5] {
    [
        v.agent.name().to_owned(),
        v.label(),
        v.passed_cell(),
        v.rate_cell(),
        v.difference_cell(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(agent: AgentKind, version: Option<&str>, name: &str, held: &[bool]) -> TestResult {
        let runs: Vec<TestResult> = held
            .iter()
            .map(|h| {
                let mut r = TestResult::new(
                    name,
                    "t.aptitude.yaml",
                    if *h {
                        TestStatus::Passed
                    } else {
                        TestStatus::Failed
                    },
                );
                r.agent_id = Some(agent);
                r.agent_version = version.map(str::to_owned);
                r.agent = Some(format!("{agent} {}", version.unwrap_or("9.9.9")));
                r
            })
            .collect();
        if runs.len() == 1 {
            return runs.into_iter().next().unwrap();
        }
        crate::verdict::repeat::aggregate(runs, held.len() as u32)
    }

    fn pinned(agent: AgentKind) -> String {
        crate::agent::registry::cli(agent, &Default::default())
            .pinned_version()
            .unwrap()
            .to_owned()
    }

    /// Two tests on each of two releases, pooled per release: the pinned release is the
    /// reference and comes first, whatever the order the results came in.
    #[test]
    fn runs_are_pooled_per_release_against_the_pinned_one() {
        let pin = pinned(AgentKind::Pi);
        let tests = [
            result(AgentKind::Pi, Some("0.1.0"), "a", &[true, false, false]),
            result(AgentKind::Pi, Some(&pin), "a", &[true, true, true]),
            result(AgentKind::Pi, Some("0.1.0"), "b", &[false, false, false]),
            result(AgentKind::Pi, Some(&pin), "b", &[true, true, true]),
        ];
        let v = compare(&tests);
        assert_eq!(v.len(), 2);
        let (reference, old) = (&v[0], &v[1]);
        assert_eq!(reference.version.as_deref(), Some(pin.as_str()));
        assert!(reference.pinned && reference.reference);
        assert_eq!(
            (reference.tests, reference.total, reference.passed),
            (2, 6, 6)
        );
        assert_eq!((old.total, old.passed, old.failed), (6, 1, 5));
        assert_eq!(old.pass_rate, Some(1.0 / 6.0));
        // scipy.stats.fisher_exact([[1, 5], [6, 0]]).pvalue == 0.015151515...
        assert!((old.p_value.unwrap() - 0.015_151_515_151_515_152).abs() < 1e-12);
        assert_eq!(old.difference_cell(), "-83 pts (p = 0.015)");
        assert_eq!(reference.difference_cell(), "reference");
        assert_eq!(reference.label(), format!("{pin} (pinned)"));
        // statsmodels proportion_confint(1, 6, method="wilson") == (0.0301, 0.5635)
        assert_eq!(old.rate_cell(), "17% (95% CI 3%–56%)");
        assert_eq!(old.passed_cell(), "1/6 passed");
    }

    #[test]
    fn one_version_per_agent_has_no_comparison() {
        let tests = [
            result(AgentKind::Pi, Some("0.1.0"), "a", &[true]),
            result(AgentKind::Codex, None, "a", &[true]),
        ];
        assert!(compare(&tests).is_empty());
    }

    /// Without the pinned release, the agent found as usual is the reference; releases
    /// follow in semver order (0.10.0 after 0.9.0), and each agent is compared apart.
    #[test]
    fn without_the_pin_the_installed_agent_is_the_reference_and_releases_go_by_semver() {
        let tests = [
            result(AgentKind::Qwen, Some("0.10.0"), "a", &[true]),
            result(AgentKind::Qwen, Some("0.9.0"), "a", &[false]),
            result(AgentKind::Qwen, None, "a", &[true]),
            result(AgentKind::Pi, Some("0.1.0"), "a", &[true]),
            result(AgentKind::Pi, Some("0.2.0"), "a", &[true]),
        ];
        let v = compare(&tests);
        let labels: Vec<(AgentKind, String)> = v.iter().map(|v| (v.agent, v.label())).collect();
        assert_eq!(
            labels,
            [
                (AgentKind::Qwen, "as installed (qwen 9.9.9)".to_owned()),
                (AgentKind::Qwen, "0.9.0".to_owned()),
                (AgentKind::Qwen, "0.10.0".to_owned()),
                (AgentKind::Pi, "0.1.0".to_owned()),
                (AgentKind::Pi, "0.2.0".to_owned()),
            ]
        );
        assert!(v[0].reference && v[3].reference && !v[4].reference);
        assert_eq!(v[1].difference, Some(-1.0));
    }

    /// A release whose every run errored has no pass rate: it reads `error`, never `0%`,
    /// and is not compared.
    #[test]
    fn a_release_whose_runs_all_errored_shows_error_never_a_rate() {
        let mut broken = result(AgentKind::Pi, Some("0.2.0"), "a", &[true]);
        broken.status = TestStatus::Error;
        let tests = [result(AgentKind::Pi, Some("0.1.0"), "a", &[true]), broken];
        let v = compare(&tests);
        let broken = &v[1];
        assert_eq!(broken.pass_rate, None);
        assert_eq!(broken.rate_cell(), "error");
        assert_eq!(broken.difference_cell(), "—");
        assert_eq!(broken.passed_cell(), "0/1 passed, 1 errored");
        assert_eq!(broken.status(), TestStatus::Error);
    }

    /// Every report shows the same table from the results JSON: the terminal, the Markdown
    /// summary (the PR comment) and the HTML report; the tests × agents table has a column
    /// per release, and a test's name says its release.
    #[test]
    fn every_report_shows_the_releases_side_by_side() {
        let results = crate::verdict::results::Results::new(
            vec![
                result(AgentKind::Pi, Some("0.1.0"), "a", &[true, false]),
                result(AgentKind::Pi, Some("0.2.0"), "a", &[true, true]),
            ],
            1,
        );
        let json = serde_json::to_value(&results.summary).unwrap();
        assert_eq!(json["versions"][0]["version"], "0.1.0");
        assert_eq!(json["versions"][0]["pass_rate"], 0.5);
        assert_eq!(json["versions"][1]["total"], 2);
        let terminal = crate::report::terminal::render_versions(&results).unwrap();
        assert!(
            terminal.contains(
                "  pi     0.2.0    2/2 passed  100% (95% CI 34%–100%)  +50 pts (p = 1.000)"
            ),
            "{terminal}"
        );
        let markdown = crate::report::markdown::render(
            &results,
            &crate::report::markdown::MarkdownOptions::default(),
        );
        assert!(
            markdown.contains("| pi | 0.1.0 | 1/2 passed | 50% (95% CI 9%–91%) | reference |"),
            "{markdown}"
        );
        // `@` is followed by a word joiner in Markdown, so that GitHub makes no mention of it.
        assert!(
            markdown.contains("| test | pi@\u{2060}0.1.0 | pi@\u{2060}0.2.0 |"),
            "{markdown}"
        );
        assert!(markdown.contains("| a | ❌ 1/2 | ✅ 2/2 |"), "{markdown}");
        let html = crate::report::html::render(&results).unwrap();
        assert!(
            html.contains("<td class=\"figure\">0.2.0</td><td class=\"figure\">2/2 passed</td><td class=\"passed\">100% (95% CI 34%–100%)</td>"),
            "{html}"
        );
        assert_eq!(results.tests[0].qualified_name(false), "a · pi@0.1.0");
    }
}
