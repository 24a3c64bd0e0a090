//! Comparing a run with a baseline (`--baseline RESULTS.json`, e.g. the base branch's last
//! results): regressions, fixes, new and removed tests, and changed review scores, as a
//! Markdown section for the job summary and the PR comment.
//!
//! Tests are matched by (file, name); review scores by the assertion's description within
//! the test.

use std::collections::BTreeMap;

use crate::report::markdown::inline;
use crate::results::{Results, TestResult, TestStatus};

/// What changed between the baseline and this run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Comparison {
    /// Passed before, failed or errored now.
    pub regressions: Vec<String>,
    /// Failed or errored before, passed now.
    pub fixes: Vec<String>,
    /// In this run only.
    pub added: Vec<String>,
    /// In the baseline only.
    pub removed: Vec<String>,
    /// Review score changes: (test, review, before, after).
    pub scores: Vec<(String, String, u8, u8)>,
}

/// A test's identity across runs: file, name and agent (results written before tests could
/// run on several agents ran on Claude Code).
fn key(t: &TestResult) -> (String, String, crate::agent_kind::AgentKind) {
    (
        t.file.clone(),
        t.name.clone(),
        t.agent_id.unwrap_or(crate::agent_kind::AgentKind::Claude),
    )
}

fn bad(s: TestStatus) -> bool {
    matches!(s, TestStatus::Failed | TestStatus::Error)
}

/// Compares `current` with `baseline`.
pub fn compare(current: &Results, baseline: &Results) -> Comparison {
    let before: BTreeMap<_, &TestResult> = baseline.tests.iter().map(|t| (key(t), t)).collect();
    let now: BTreeMap<_, &TestResult> = current.tests.iter().map(|t| (key(t), t)).collect();
    let mut c = Comparison::default();
    for t in &current.tests {
        match before.get(&key(t)) {
            None => c.added.push(t.name.clone()),
            Some(old) => {
                if old.status == TestStatus::Passed && bad(t.status) {
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
        .filter(|t| !now.contains_key(&key(t)))
        .map(|t| t.name.clone())
        .collect();
    c
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

    /// The Markdown section (names escaped for Markdown).
    pub fn to_markdown(&self) -> String {
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
        list("🟢 fixes", &self.fixes, &mut out);
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
    use crate::results::{AssertionResult, AssertionStatus};

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
            name: name.into(),
            file: "t.aptitude.yaml".into(),
            prompt: None,
            status,
            duration_ms: 1,
            usage: None,
            error: None,
            assertions: vec![a],
            transcript: None,
            agent: None,
            agent_id: None,
            files: Vec::new(),
            workspace: None,
            recorded: None,
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
        let c = compare(&now, &base);
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
        let md = c.to_markdown();
        assert!(
            md.contains("regressions (1): a") && md.contains("9 → 5"),
            "{md}"
        );
        assert!(compare(&base, &base).is_empty());
    }
}
