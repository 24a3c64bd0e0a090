//! Comparing a run with a baseline (`--baseline RESULTS.json`, e.g. the base branch's last
//! results): regressions, fixes, new and removed tests, and changed review scores, as a
//! Markdown section for the job summary and the PR comment.
//!
//! Tests are matched by (file, name); review scores by the assertion's description within
//! the test.
//!
//! A test with repeated runs on both sides is compared by pass rate, not by status: it is a
//! regression only when its pass rate fell and the one-sided Fisher exact test
//! ([`crate::verdict::stats::fisher_exact_less`], this run's passed/failed runs against the
//! baseline's) gives p below the significance level (`--significance`, default 0.05);
//! otherwise a changed rate is listed as "changed, not significant" with both rates. Tests
//! run once keep the status comparison.
//!
//! Each regressed test also gets one line saying where its run parts from the base's
//! (`aptitude diff`'s first divergence, [`super::diff`]) — ``base ran `pytest -q` after
//! Edit src/app.py; head stopped after Edit src/app.py`` — with a link to its run view in
//! the HTML report (the artifact, and the anchor in it: `report.html#t3-r2`).

use std::collections::BTreeMap;

use crate::shared::inert::markdown_inline as inline;
use crate::verdict::results::{Results, TestResult, TestStatus};

/// The default significance level of a pass-rate regression (`--significance`).
pub const DEFAULT_SIGNIFICANCE: f64 = 0.05;

/// What changed between the baseline and this run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Comparison {
    /// Passed before, failed or errored now; for repeated tests, a pass rate that fell
    /// significantly, with both rates and the p-value (`name (5/5 → 1/5 runs, p = 0.024)`).
    pub regressions: Vec<String>,
    /// Repeated tests whose pass rate changed, not significantly: `name (4/5 → 3/5 runs,
    /// p = 0.50)`.
    pub changed: Vec<String>,
    /// Failed or errored before, passed now.
    pub fixes: Vec<String>,
    /// In this run only.
    pub added: Vec<String>,
    /// In the baseline only.
    pub removed: Vec<String>,
    /// Review score changes: (test, review, before, after).
    pub scores: Vec<(String, String, u8, u8)>,
    /// Each regressed test's first divergence from the base, in words, and its run view's
    /// anchor in the HTML report.
    pub why: Vec<Why>,
}

/// Why a test regressed: where its run parts from the base's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Why {
    /// The test's name.
    pub name: String,
    /// The first divergence in one line ([`super::diff::TestDiff::summary`]).
    pub line: String,
    /// The run view's anchor in this run's HTML report (`t3`, `t3-r2`).
    pub anchor: String,
}

/// Where the HTML report is, for links to a test's run view.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReportLink {
    /// The page that holds the report: the workflow run's artifacts (`…/runs/1#artifacts`).
    pub url: Option<String>,
    /// The report's file name in it (`report.html`).
    pub file: String,
}

fn bad(s: TestStatus) -> bool {
    matches!(s, TestStatus::Failed | TestStatus::Error)
}

/// (passed, judged) runs of a repeated test.
fn judged_runs(t: &TestResult) -> Option<(u32, u32)> {
    let r = t.repeat.as_ref()?;
    (r.passed + r.failed > 0).then_some((r.passed, r.passed + r.failed))
}

/// Compares `current` with `baseline`; a repeated test's fall in pass rate is a regression
/// when its one-sided Fisher p-value is below `significance`.
pub fn compare(current: &Results, baseline: &Results, significance: f64) -> Comparison {
    let before: BTreeMap<_, &TestResult> = baseline.tests.iter().map(|t| (t.key(), t)).collect();
    let now: BTreeMap<_, &TestResult> = current.tests.iter().map(|t| (t.key(), t)).collect();
    let mut c = Comparison::default();
    // A routing prompt's choice is compared as its skill's figures are
    // (`verdict::routing::compare`), never as a test that regressed on its own.
    for t in current.tests.iter().filter(|t| t.routing.is_none()) {
        match before.get(&t.key()) {
            None => c.added.push(t.name.clone()),
            Some(old) => {
                if let (Some((p_now, n_now)), Some((p_old, n_old))) =
                    (judged_runs(t), judged_runs(old))
                {
                    // Compare rates without dividing: p_now/n_now vs p_old/n_old.
                    let (now_x, old_x) = (
                        u64::from(p_now) * u64::from(n_old),
                        u64::from(p_old) * u64::from(n_now),
                    );
                    let what = |p: f64| {
                        format!(
                            "{} ({p_old}/{n_old} → {p_now}/{n_now} runs, {})",
                            t.name,
                            crate::shared::text::p_phrase(p)
                        )
                    };
                    if now_x < old_x {
                        let p = crate::verdict::stats::fisher_exact_less([
                            [p_now, n_now - p_now],
                            [p_old, n_old - p_old],
                        ]);
                        if p < significance {
                            c.regressions.push(what(p));
                        } else {
                            c.changed.push(what(p));
                        }
                    } else if now_x > old_x {
                        let p = crate::verdict::stats::fisher_exact_less([
                            [p_old, n_old - p_old],
                            [p_now, n_now - p_now],
                        ]);
                        if p < significance {
                            c.fixes.push(what(p));
                        } else {
                            c.changed.push(what(p));
                        }
                    }
                } else if old.status == TestStatus::Passed && bad(t.status) {
                    c.regressions.push(t.name.clone());
                } else if bad(old.status) && t.status == TestStatus::Passed {
                    c.fixes.push(t.name.clone());
                }
                for a in &t.assertions {
                    let (Some(score), "stdout") = (a.score, a.kind.as_str()) else {
                        continue;
                    };
                    let old_score = old
                        .assertions
                        .iter()
                        .find(|b| {
                            b.kind == "stdout"
                                && review_criteria(&b.description)
                                    == review_criteria(&a.description)
                        })
                        .and_then(|b| b.score);
                    if let Some(old_score) = old_score
                        && old_score != score
                    {
                        c.scores.push((
                            t.name.clone(),
                            review_criteria(&a.description).to_owned(),
                            old_score,
                            score,
                        ));
                    }
                }
            }
        }
    }
    c.removed = baseline
        .tests
        .iter()
        .filter(|t| !now.contains_key(&t.key()))
        .map(|t| t.name.clone())
        .collect();
    c.why = regressions_why(current, baseline, significance);
    c
}

/// The first divergence of each regressed test ([`super::diff::diff`]).
fn regressions_why(current: &Results, baseline: &Results, significance: f64) -> Vec<Why> {
    let options = super::diff::DiffOptions {
        test: None,
        runs: None,
        significance,
        labels: ("base".into(), "head".into()),
    };
    // Without `--test` or `--run` nothing can be missing: the comparison can not fail.
    let Ok(report) = super::diff::diff(baseline, current, &options) else {
        return Vec::new();
    };
    report
        .tests
        .into_iter()
        .filter(|t| t.change == super::diff::Change::Regressed)
        .map(|t| Why {
            name: t.name,
            line: t.summary,
            anchor: t.anchor,
        })
        .collect()
}

/// The criteria part of a review description (`stdout review: "…" (score: …)`), so that a
/// changed score does not make a different review.
fn review_criteria(description: &str) -> &str {
    description
        .rsplit_once(" (")
        .map_or(description, |(head, _)| head)
}

impl Comparison {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self == &Comparison::default()
    }

    /// The Markdown section (names escaped for Markdown); each regressed test's first
    /// divergence links to its run view in the report at `link`.
    pub fn to_markdown(&self, link: Option<&ReportLink>) -> String {
        if self.is_empty() {
            return "**Compared with the baseline:** no change.\n".into();
        }
        let mut out = String::from("**Compared with the baseline:**\n\n");
        let list = |title: &str, items: &[String], out: &mut String| {
            if !items.is_empty() {
                out.push_str(&format!(
                    "- {title} ({}): {}\n",
                    items.len(),
                    items
                        .iter()
                        .map(|n| inline(n))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        };
        list("🔴 regressions", &self.regressions, &mut out);
        for why in &self.why {
            let view = match link {
                Some(ReportLink {
                    url: Some(url),
                    file,
                }) => format!(
                    " · [run view]({url}) `{}#{}`",
                    inline(file).replace('`', "'"),
                    why.anchor
                ),
                Some(ReportLink { url: None, file }) => {
                    format!(
                        " · run view: `{}#{}`",
                        inline(file).replace('`', "'"),
                        why.anchor
                    )
                }
                None => String::new(),
            };
            out.push_str(&format!(
                "  - {}: {}{view}\n",
                inline(&why.name),
                inline(&why.line)
            ));
        }
        list("🟢 fixes", &self.fixes, &mut out);
        list(
            "🟡 pass rate changed, not significant",
            &self.changed,
            &mut out,
        );
        list("🆕 new tests", &self.added, &mut out);
        list("🗑️ removed tests", &self.removed, &mut out);
        if !self.scores.is_empty() {
            out.push_str(&format!(
                "- 📈 review scores changed ({}):\n",
                self.scores.len()
            ));
            for (test, review, before, after) in &self.scores {
                out.push_str(&format!(
                    "  - {} — {}: {before} → {after}\n",
                    inline(test),
                    inline(review)
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::results::{AssertionResult, AssertionStatus};

    fn t(name: &str, status: TestStatus, score: Option<u8>) -> TestResult {
        let mut a = AssertionResult::new(
            "stdout",
            format!(
                "stdout review: \"says 43\" (score: {}/10, threshold: 7)",
                score.unwrap_or(0)
            ),
            AssertionStatus::Pass,
            3,
            None,
        );
        a.score = score;
        TestResult {
            duration_ms: 1,
            assertions: vec![a],
            ..TestResult::new(name, "t.aptitude.yaml", status)
        }
    }

    #[test]
    fn regressions_fixes_new_removed_and_scores() {
        let base = Results::new(
            vec![
                t("a", TestStatus::Passed, Some(9)),
                t("b", TestStatus::Failed, None),
                t("gone", TestStatus::Passed, None),
            ],
            1,
        );
        let now = Results::new(
            vec![
                t("a", TestStatus::Failed, Some(5)),
                t("b", TestStatus::Passed, None),
                t("new", TestStatus::Passed, None),
            ],
            1,
        );
        let c = compare(&now, &base, DEFAULT_SIGNIFICANCE);
        assert_eq!(c.regressions, ["a"]);
        assert_eq!(c.fixes, ["b"]);
        assert_eq!(c.added, ["new"]);
        assert_eq!(c.removed, ["gone"]);
        assert_eq!(
            c.scores,
            [(
                "a".to_owned(),
                "stdout review: \"says 43\"".to_owned(),
                9,
                5
            )]
        );
        let md = c.to_markdown(None);
        assert!(
            md.contains("regressions (1): a") && md.contains("9 → 5"),
            "{md}"
        );
        assert!(compare(&base, &base, DEFAULT_SIGNIFICANCE).is_empty());
    }

    /// A regressed test gets one line naming where its run parts from the base's, with a
    /// link to its run view: the report in the run's artifacts, and its anchor there.
    #[test]
    fn a_regression_names_its_first_divergence_and_links_its_run_view() {
        use crate::transcript::{ToolCall, Transcript};
        let with_calls = |name: &str, status, commands: &[&str]| {
            let calls = commands
                .iter()
                .map(|c| ToolCall {
                    output: Some("ok".into()),
                    exit_code: Some(0),
                    ..ToolCall::for_test("x", "Bash", serde_json::json!({"command": c}))
                })
                .collect();
            TestResult {
                transcript: Some(Transcript::completed(calls, "done")),
                ..t(name, status, None)
            }
        };
        let base = Results::new(
            vec![with_calls("a", TestStatus::Passed, &["make", "pytest -q"])],
            1,
        );
        let now = Results::new(
            vec![
                t("new", TestStatus::Passed, None),
                with_calls("a", TestStatus::Failed, &["make"]),
            ],
            1,
        );
        let c = compare(&now, &base, DEFAULT_SIGNIFICANCE);
        assert_eq!(
            c.why,
            [Why {
                name: "a".into(),
                line: "base ran `pytest -q` after `make`; head stopped after `make`".into(),
                anchor: "t1".into(),
            }]
        );
        let link = ReportLink {
            url: Some("https://github.com/o/r/actions/runs/9#artifacts".into()),
            file: "report.html".into(),
        };
        let md = c.to_markdown(Some(&link));
        assert!(
            md.contains("  - a: base ran 'pytest -q' after 'make'; head stopped after 'make' · [run view](https://github.com/o/r/actions/runs/9#artifacts) `report.html#t1`\n"),
            "{md}"
        );
        assert!(!c.to_markdown(None).contains("run view"));
    }

    /// A test of `runs` runs, `passed` of them passing.
    fn repeated(name: &str, passed: u32, runs: u32) -> TestResult {
        let each = (0..runs)
            .map(|i| {
                let status = if i < passed {
                    TestStatus::Passed
                } else {
                    TestStatus::Failed
                };
                t(name, status, None)
            })
            .collect();
        crate::verdict::repeat::aggregate(each, 1)
    }

    #[test]
    fn a_fall_in_pass_rate_is_a_regression_only_when_significant() {
        let base = Results::new(
            vec![
                repeated("real", 5, 5),
                repeated("noise", 4, 5),
                repeated("up", 0, 5),
            ],
            1,
        );
        let now = Results::new(
            vec![
                repeated("real", 1, 5),
                repeated("noise", 3, 5),
                repeated("up", 5, 5),
            ],
            1,
        );
        let c = compare(&now, &base, DEFAULT_SIGNIFICANCE);
        // 5/5 → 1/5: scipy.stats.fisher_exact([[1, 4], [5, 0]], alternative="less")
        // gives p = 6/252 = 0.0238.
        assert_eq!(c.regressions, ["real (5/5 → 1/5 runs, p = 0.024)"]);
        // 4/5 → 3/5: p = 0.5, a change but not a significant one.
        assert_eq!(c.changed, ["noise (4/5 → 3/5 runs, p = 0.500)"]);
        // 0/5 → 5/5 is a significant rise: a fix.
        assert_eq!(c.fixes, ["up (0/5 → 5/5 runs, p = 0.004)"]);
        let md = c.to_markdown(None);
        let (reg, changed) = (
            md.find("regressions").unwrap(),
            md.find("changed, not significant").unwrap(),
        );
        assert!(reg < changed, "significant regressions come first: {md}");

        // A stricter level makes the same fall not significant.
        let c = compare(&now, &base, 0.01);
        assert!(c.regressions.is_empty());
        assert_eq!(c.changed.len(), 2);

        // Single-run tests keep the status comparison.
        let base = Results::new(vec![t("once", TestStatus::Passed, None)], 1);
        let now = Results::new(vec![t("once", TestStatus::Failed, None)], 1);
        assert_eq!(compare(&now, &base, 0.01).regressions, ["once"]);
    }
}
