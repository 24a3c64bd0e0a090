//! The one results model, serialized as results JSON (`--json FILE`).
//!
//! Every output format (terminal, JSON, and later JUnit, HTML, Markdown, GitHub) is rendered
//! from these types, so any renderer can be re-run from a results file alone. The schema is
//! versioned by [`RESULTS_VERSION`]; fields are only ever added within a version.
//!
//! ```text
//! {"version": 1, "aptitude_version", "run_dir",
//!  "shard": {"index", "count", "tests", "balanced_by"},
//!  "tests": [{"name", "file", "status": "passed|failed|error|skipped", "duration_ms", "usage",
//!             "error", "assertions": [{"kind", "description",
//!                                      "status": "pass|fail|error|invalid|skip", "line", "detail"}],
//!             "transcript"}],
//!  "summary": {...}}
//! ```

use serde::{Deserialize, Serialize};

use crate::transcript::{Transcript, Usage};
use crate::workspace::FileChange;

/// The results schema version.
pub const RESULTS_VERSION: u32 = 1;

/// A whole run: every test, in file order, and the totals.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Results {
    /// Schema version ([`RESULTS_VERSION`]).
    pub version: u32,
    /// The aptitude version that wrote the file.
    pub aptitude_version: String,
    /// The directory the run started in, absolute: relative test file paths are relative
    /// to it (so `publish` can make them relative to the repository root from anywhere).
    /// Absent in files that predate it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_dir: Option<String>,
    /// Which shard of a split run these results are (`run --shard K/N`); absent in
    /// unsharded and merged results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardInfo>,
    /// The tests, in the order their files were given or discovered.
    pub tests: Vec<TestResult>,
    /// Totals.
    pub summary: Summary,
}

impl Results {
    /// Builds the results of a run, computing the summary.
    pub fn new(tests: Vec<TestResult>, duration_ms: u64) -> Self {
        let summary = Summary::of(&tests, duration_ms);
        Results {
            version: RESULTS_VERSION,
            aptitude_version: env!("CARGO_PKG_VERSION").to_owned(),
            run_dir: std::env::current_dir()
                .ok()
                .map(|d| d.display().to_string()),
            shard: None,
            tests,
            summary,
        }
    }

    /// Whether every test passed or was skipped (exit code 0).
    pub fn all_passed(&self) -> bool {
        self.summary.failed == 0 && self.summary.errors == 0
    }
}

/// Which shard of a split run a results file is (`run --shard K/N`), so that `merge` can
/// tell that it has every shard of one split, each once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardInfo {
    /// K, 1-based.
    pub index: u32,
    /// N.
    pub count: u32,
    /// Tests in the whole run, all shards together.
    pub tests: u32,
    /// What the split balanced: `duration` (a baseline's durations) or `hash` (test
    /// counts, in the order of a stable hash).
    pub balanced_by: String,
}

impl ShardInfo {
    /// `K/N`.
    pub fn label(&self) -> String {
        format!("{}/{}", self.index, self.count)
    }
}

/// A test's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TestStatus {
    /// Every assertion passed (some may have been skipped).
    Passed,
    /// At least one assertion failed.
    Failed,
    /// The test could not be judged: the agent or a check errored.
    Error,
    /// Every assertion was skipped.
    Skipped,
}

/// An assertion's verdict (seed 003's statuses).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AssertionStatus {
    /// The check held.
    Pass,
    /// The check did not hold.
    Fail,
    /// The check could not be made (a judge that could not grade, a command that could
    /// not run).
    Error,
    /// The check does not apply to what was recorded (e.g. the transcript format records
    /// no exit codes).
    Invalid,
    /// The check was not made, with the reason in `detail`; never counts as a pass.
    Skip,
}

impl AssertionStatus {
    /// `Pass` when the check held, else `Fail`.
    pub fn pass_if(held: bool) -> Self {
        if held {
            AssertionStatus::Pass
        } else {
            AssertionStatus::Fail
        }
    }
}

/// One test's result.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TestResult {
    /// The test's `name`.
    pub name: String,
    /// The test file, as given or discovered.
    pub file: String,
    /// The prompt the agent was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// The verdict (see [`TestResult::status_of`]).
    pub status: TestStatus,
    /// Wall time of the test in ms (agent run and checks).
    pub duration_ms: u64,
    /// The agent's usage, when known.
    pub usage: Option<Usage>,
    /// Why the test is `error` when it is not an assertion's fault (agent crashed, timed
    /// out, API error, max turns).
    pub error: Option<String>,
    /// The assertions, in file order.
    pub assertions: Vec<AssertionResult>,
    /// What the agent did, for reports; absent when no transcript was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<Transcript>,
    /// The agent that ran, with its version (`claude 2.1.328 (Claude Code)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Which agent the test ran on (`codex`): a test listing several agents has one result
    /// per agent. Absent in results written before agents could be chosen per test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<crate::agent_kind::AgentKind>,
    /// Files the agent created, modified or deleted in its workspace.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileChange>,
    /// Where the workspace copy was kept (`--keep-workspaces`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Where the agent's raw transcript was recorded (`--record`), or why it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded: Option<String>,
}

impl TestResult {
    /// The test status: `error` when the test itself errored; else `failed` if any
    /// assertion failed; else `error` if any errored or was invalid; else `skipped` if
    /// every assertion was skipped; else `passed`.
    pub fn status_of(error: Option<&str>, assertions: &[AssertionResult]) -> TestStatus {
        let any = |s: AssertionStatus| assertions.iter().any(|a| a.status == s);
        if error.is_some() {
            TestStatus::Error
        } else if any(AssertionStatus::Fail) {
            TestStatus::Failed
        } else if any(AssertionStatus::Error) || any(AssertionStatus::Invalid) {
            TestStatus::Error
        } else if !assertions.is_empty()
            && assertions.iter().all(|a| a.status == AssertionStatus::Skip)
        {
            TestStatus::Skipped
        } else {
            TestStatus::Passed
        }
    }
}

/// One assertion's result.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AssertionResult {
    /// The assertion kind: its YAML key (`tool`, `stdout`, `exit_code`, …).
    pub kind: String,
    /// What was asserted, in words.
    pub description: String,
    /// The verdict.
    pub status: AssertionStatus,
    /// 1-based line of the assertion in the test file.
    pub line: u32,
    /// What was seen: the evidence for a pass, what was seen instead for a failure, the
    /// reason for an error or a skip.
    pub detail: Option<String>,
    /// LLM-judged reviews: the judge's score, 1–10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<u8>,
    /// LLM-judged reviews: the passing score, 1–10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<u8>,
    /// LLM-judged reviews: the judge's reasoning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// LLM-judged reviews: whether the grade came from the cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached: Option<bool>,
    /// LLM-judged reviews: tokens, cost and time of the grading calls made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grading_usage: Option<Usage>,
    /// LLM-judged reviews graded by several votes: each vote (`score` is their median).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub votes: Vec<JudgeVote>,
}

/// One grading call of a review graded by several votes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JudgeVote {
    /// The vote's score, 1–10; absent when it could not grade.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<u8>,
    /// The judge's reasoning for this vote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// Why this vote could not grade.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// Whether the vote came from the grade cache.
    #[serde(default)]
    pub cached: bool,
}

impl AssertionResult {
    /// A result without judge fields.
    pub fn new(
        kind: &str,
        description: String,
        status: AssertionStatus,
        line: u32,
        detail: Option<String>,
    ) -> Self {
        AssertionResult {
            kind: kind.to_owned(),
            description,
            status,
            line,
            detail,
            score: None,
            threshold: None,
            reasoning: None,
            cached: None,
            grading_usage: None,
            votes: Vec::new(),
        }
    }
}

/// Counts per status.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct AssertionCounts {
    /// Passed.
    pub pass: u32,
    /// Failed.
    pub fail: u32,
    /// Errored.
    pub error: u32,
    /// Invalid.
    pub invalid: u32,
    /// Skipped.
    pub skip: u32,
}

/// Run totals.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    /// Number of tests.
    pub total: u32,
    /// Tests passed.
    pub passed: u32,
    /// Tests failed.
    pub failed: u32,
    /// Tests errored.
    pub errors: u32,
    /// Tests skipped.
    pub skipped: u32,
    /// Assertion counts across tests.
    pub assertions: AssertionCounts,
    /// Wall time of the whole run in ms.
    pub duration_ms: u64,
    /// Usage summed over tests.
    pub usage: Usage,
    /// Tests whose agent reported no cost (their cost is missing from `usage.cost_usd`).
    #[serde(default)]
    pub tests_without_cost: u32,
}

impl Summary {
    /// Test counts for display: passed always, then the non-zero failed / error / skipped.
    pub fn test_counts(&self) -> Vec<(u32, &'static str)> {
        nonzero_after_passed(
            self.passed,
            [
                (self.failed, "failed"),
                (self.errors, "error"),
                (self.skipped, "skipped"),
            ],
        )
    }

    /// Assertion counts for display: passed always, then the non-zero others.
    pub fn assertion_counts(&self) -> Vec<(u32, &'static str)> {
        let a = &self.assertions;
        nonzero_after_passed(
            a.pass,
            [
                (a.fail, "failed"),
                (a.error, "error"),
                (a.invalid, "invalid"),
                (a.skip, "skipped"),
            ],
        )
    }

    /// Totals of `tests`.
    pub fn of(tests: &[TestResult], duration_ms: u64) -> Self {
        let mut s = Summary {
            duration_ms,
            ..Summary::default()
        };
        for t in tests {
            s.total += 1;
            match t.status {
                TestStatus::Passed => s.passed += 1,
                TestStatus::Failed => s.failed += 1,
                TestStatus::Error => s.errors += 1,
                TestStatus::Skipped => s.skipped += 1,
            }
            for a in &t.assertions {
                match a.status {
                    AssertionStatus::Pass => s.assertions.pass += 1,
                    AssertionStatus::Fail => s.assertions.fail += 1,
                    AssertionStatus::Error => s.assertions.error += 1,
                    AssertionStatus::Invalid => s.assertions.invalid += 1,
                    AssertionStatus::Skip => s.assertions.skip += 1,
                }
            }
            if let Some(u) = &t.usage {
                s.usage.add(u);
            }
            if t.usage.as_ref().is_none_or(|u| u.cost_usd.is_none()) {
                s.tests_without_cost += 1;
            }
        }
        s
    }
}

fn nonzero_after_passed<const N: usize>(
    passed: u32,
    others: [(u32, &'static str); N],
) -> Vec<(u32, &'static str)> {
    std::iter::once((passed, "passed"))
        .chain(others.into_iter().filter(|(n, _)| *n > 0))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(status: AssertionStatus) -> AssertionResult {
        AssertionResult::new("tool", String::new(), status, 1, None)
    }

    #[test]
    fn test_status_rules() {
        use AssertionStatus::*;
        assert_eq!(
            TestResult::status_of(None, &[a(Pass), a(Pass)]),
            TestStatus::Passed
        );
        assert_eq!(
            TestResult::status_of(None, &[a(Pass), a(Fail), a(Error)]),
            TestStatus::Failed
        );
        assert_eq!(
            TestResult::status_of(None, &[a(Pass), a(Error)]),
            TestStatus::Error
        );
        assert_eq!(
            TestResult::status_of(None, &[a(Pass), a(Invalid)]),
            TestStatus::Error
        );
        assert_eq!(
            TestResult::status_of(None, &[a(Skip), a(Skip)]),
            TestStatus::Skipped
        );
        assert_eq!(
            TestResult::status_of(None, &[a(Pass), a(Skip)]),
            TestStatus::Passed
        );
        assert_eq!(
            TestResult::status_of(Some("agent crashed"), &[a(Pass)]),
            TestStatus::Error
        );
    }

    #[test]
    fn summary_counts() {
        let t = |status| TestResult {
            name: "t".into(),
            file: "f".into(),
            prompt: None,
            status,
            duration_ms: 1,
            usage: Some(Usage {
                input_tokens: 10,
                cost_usd: Some(0.5),
                ..Usage::default()
            }),
            error: None,
            assertions: vec![a(AssertionStatus::Pass)],
            transcript: None,
            agent: None,
            agent_id: None,
            files: Vec::new(),
            workspace: None,
            recorded: None,
        };
        let r = Results::new(vec![t(TestStatus::Passed), t(TestStatus::Failed)], 7);
        assert_eq!(
            (r.summary.total, r.summary.passed, r.summary.failed),
            (2, 1, 1)
        );
        assert_eq!(r.summary.usage.input_tokens, 20);
        assert_eq!(r.summary.usage.cost_usd, Some(1.0));
        assert!(!r.all_passed());
    }
}
