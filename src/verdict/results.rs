//! The one results model, serialized as results JSON (`--json FILE`).
//!
//! Every output format (terminal, JSON, and later JUnit, HTML, Markdown, GitHub) is rendered
//! from these types, so any renderer can be re-run from a results file alone. The schema is
//! versioned by [`RESULTS_VERSION`]; fields are only ever added within a version.
//!
//! ```text
//! {"version": 2, "aptitude_version", "run_dir",
//!  "shard": {"index", "count", "tests", "balanced_by", "runs", "baseline"},
//!  "tests": [{"name", "file", "status": "passed|failed|error|skipped", "duration_ms", "usage",
//!             "error", "error_kind": "infra|agent|setup|judge|interrupted",
//!             "skip_reason": "budget|shard", "attempts": [{"error", "error_kind", "duration_ms", "usage"}],
//!             "assertions": [{"kind", "description",
//!                             "status": "pass|fail|error|invalid|skip", "line", "detail",
//!                             "score", "threshold", "reasoning", "cached", "grading_usage",
//!                             "votes", "grade_keys",
//!                             "claims": [{"kind", "text", "command", "outcome", "path"}]}],
//!             "transcript",
//!             "runs": [<a test result per run, when the test has runs: N > 1>],
//!             "repeat": {"runs", "min_pass", "passed", "failed", "errors", "skipped", "flaky",
//!                        "pass_rate", "wilson_low", "wilson_high",
//!                        "estimates": [{"k", "pass_at_k", "pass_hat_k"}],
//!                        "assertions": [{"line", "kind", "description", "passed", "failed",
//!                                        "other", "flaky", "scores", "judge_spread"}],
//!                        "split": {"numbers", "of"}}}],
//!  "summary": {..., "runs": {...}, "budget": {...}}}
//! ```
//!
//! Version 2 added `error_kind`, `skip_reason`, `attempts`, `runs`, `repeat`, and the
//! summary's `runs` and `budget`; a version 1 file is read as version 2 without them.
//!
//! The judge's work travels with an assertion so that `run --reuse` ([`crate::run::reuse`])
//! need not ask again: a review's `grade_keys` with its `score`/`votes`, and a
//! `claims: verified` extraction's key (`grade_keys`) with the `claims` it read.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::transcript::{Transcript, Usage};
use crate::workspace::FileChange;

pub use crate::assertions::judge::JudgeVote;
pub use crate::assertions::{AssertionResult, AssertionStatus};

/// The results schema version.
pub const RESULTS_VERSION: u32 = 2;

/// The oldest results version this aptitude reads (its fields are a subset of the current
/// version's).
pub const OLDEST_READABLE_VERSION: u32 = 1;

/// Why results JSON could not be read ([`Results::from_json`]).
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The text is not results JSON.
    #[error("not results JSON: {0}")]
    Parse(#[source] serde_json::Error),
    /// Results JSON of another schema version.
    #[error(
        "results version {found}; this aptitude reads versions {OLDEST_READABLE_VERSION} to {RESULTS_VERSION} (re-run the tests or use the aptitude that wrote it)"
    )]
    Version {
        /// Its `version`.
        found: u64,
    },
}

/// A whole run: every test, in file order, and the totals.
///
/// Reading checks the schema version: [`Results::from_json`] refuses another version
/// before looking at any other field, and deserializing a `Results` any other way refuses
/// it too (its `version` field accepts only [`OLDEST_READABLE_VERSION`] to
/// [`RESULTS_VERSION`]).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Results {
    /// Schema version ([`RESULTS_VERSION`]).
    #[serde(deserialize_with = "current_version")]
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

/// Whether this aptitude reads results of `version`.
fn readable(version: u64) -> bool {
    (u64::from(OLDEST_READABLE_VERSION)..=u64::from(RESULTS_VERSION)).contains(&version)
}

/// A readable version, read as [`RESULTS_VERSION`] (older versions hold a subset of its
/// fields), or an error naming the version found.
fn current_version<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let found = u64::deserialize(d)?;
    if readable(found) {
        Ok(RESULTS_VERSION)
    } else {
        Err(serde::de::Error::custom(ReadError::Version { found }))
    }
}

impl Results {
    /// Reads results JSON, checking its schema version first: a file of another version
    /// gets [`ReadError::Version`], not a parse error about some field it changed.
    ///
    /// # Errors
    /// When the text is not results JSON or has another version.
    pub fn from_json(text: &str) -> Result<Self, ReadError> {
        #[derive(Deserialize)]
        struct Versioned {
            version: u64,
        }
        let Versioned { version } = serde_json::from_str(text).map_err(ReadError::Parse)?;
        if !readable(version) {
            return Err(ReadError::Version { found: version });
        }
        serde_json::from_str(text).map_err(ReadError::Parse)
    }

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

    /// Whether every test passed or was skipped (exit code 0). A run cut short by its
    /// cost or token ceiling never is: its skipped runs were not judged. Read from the tests
    /// themselves (a test or run skipped for the budget) as well as the summary, so results
    /// whose summary was recomputed (`merge`) can not lose it.
    pub fn all_passed(&self) -> bool {
        let for_budget = |t: &TestResult| t.skip_reason == Some(SkipReason::Budget);
        self.summary.failed == 0
            && self.summary.errors == 0
            && !self
                .tests
                .iter()
                .any(|t| for_budget(t) || t.runs.iter().any(for_budget))
            && self
                .summary
                .budget
                .as_ref()
                .is_none_or(|b| b.skipped_runs == 0)
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
    /// What the split balanced.
    pub balanced_by: BalancedBy,
    /// Runs in the whole run, all shards together, when a test runs several times (its
    /// runs are split like tests); absent when every test runs once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs: Option<u32>,
    /// Which baseline balanced the split (`balanced_by: duration`): 16 hex digits of a
    /// SHA-256 over its per-test durations, so that shards balanced by different baselines
    /// are not merged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
}

/// What balanced a split run's shards (`shard.balanced_by`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BalancedBy {
    /// A baseline's durations.
    Duration,
    /// Test (run) counts, in the order of a stable hash.
    Hash,
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

/// Whose fault an error is: what to fix, and whether trying again can help.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ErrorKind {
    /// The infrastructure failed: the model API returned 5xx or 429, the connection
    /// dropped, the agent CLI is missing or crashed before its session began. Retried by
    /// `--retry-infra`.
    Infra,
    /// The agent did not finish: a timeout, max turns, an exit after or without a result.
    Agent,
    /// The test's own preparation or checks could not run: the workspace copy, a `setup`
    /// command, a `verify` command that could not start, a check that does not apply, a
    /// model API refusal other than 429 (a bad key or model name).
    Setup,
    /// The judge could not grade a `stdout` review.
    Judge,
    /// The run was interrupted (Ctrl-C, SIGTERM, SIGHUP).
    Interrupted,
}

impl ErrorKind {
    /// The lowercase word used in results JSON and reports.
    pub fn word(self) -> &'static str {
        match self {
            ErrorKind::Infra => "infra",
            ErrorKind::Agent => "agent",
            ErrorKind::Setup => "setup",
            ErrorKind::Judge => "judge",
            ErrorKind::Interrupted => "interrupted",
        }
    }
}

/// Why a test or run was skipped without running.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SkipReason {
    /// The run's `--max-cost` or `--max-tokens` ceiling was reached before it started.
    Budget,
    /// `run --shard` split the test's runs, and the runs in this shard do not decide it:
    /// `aptitude merge` of every shard's results does.
    Shard,
}

/// An attempt of a run that ended in an infra error and was tried again (`--retry-infra`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Attempt {
    /// Why it failed.
    pub error: String,
    /// Always [`ErrorKind::Infra`] (only infra errors are retried).
    pub error_kind: ErrorKind,
    /// Its wall time in ms.
    pub duration_ms: u64,
    /// What it used (counted toward `--max-cost` / `--max-tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
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
    pub agent_id: Option<crate::spec::agent_kind::AgentKind>,
    /// The variant that ran (`default` is the test as written), for tests that declare
    /// `variants:`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// Files the agent created, modified or deleted in its workspace.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileChange>,
    /// Where the workspace copy was kept (`--keep-workspaces`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Where the agent's raw transcript was recorded (`--record`), or why it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded: Option<String>,
    /// Whose fault `error` is (or the errored assertion's), when the status is `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<ErrorKind>,
    /// Why the test (or run) was skipped without running.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_reason: Option<SkipReason>,
    /// Earlier attempts that ended in an infra error and were retried, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attempts: Vec<Attempt>,
    /// A test with `runs: N > 1`: every run's own result (each with its transcript), in
    /// run order. The test's `status`, `usage` (summed) and `assertions` (the first run
    /// that did not pass each) are decided from them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<TestResult>,
    /// A test with `runs: N > 1`: its k-of-n figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<crate::verdict::repeat::RepeatStats>,
    /// What determined the agent's run ([`crate::run::fingerprint`]); absent when the test
    /// never reached its agent (a workspace or variant failure) and in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<Fingerprint>,
    /// Set when the agent did not run: the run was taken from a baseline (`run --reuse`)
    /// and today's assertions were evaluated on its transcript.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reused: Option<Reused>,
    /// Why the agent ran although `run --reuse` was given (no matching test in the
    /// baseline, a changed fingerprint, no transcript, assertions that need the workspace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_reused: Option<String>,
}

/// A test's identity across runs, shards and baselines: its test file as results record it
/// (`TestResult::file`), its name, the agent it runs on, and its variant.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TestKey {
    /// The test file, as given or discovered (`examples/x.aptitude.yaml`).
    pub file: String,
    /// The test's `name`.
    pub name: String,
    /// The agent (Claude Code for results written before tests could choose one).
    pub agent: crate::spec::agent_kind::AgentKind,
    /// The variant, for tests that declare variants (`default` is the test as written).
    pub variant: Option<String>,
}

impl TestKey {
    /// The identity of a test to run (after it was split per agent and variant); its
    /// result has the same ([`TestResult::key`]).
    pub fn of_spec(spec: &crate::spec::TestSpec) -> TestKey {
        TestKey {
            file: crate::spec::diagnostic::display_path(&spec.file),
            name: spec.name.clone(),
            agent: spec.agent.kind,
            variant: spec.result_variant(),
        }
    }
}

/// Where a reused run came from (`run --reuse`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Reused {
    /// The baseline: the results file as given, or the GitHub Actions run it was
    /// downloaded from (`github:owner/repo run 123`).
    pub from: String,
    /// The aptitude version that wrote the baseline.
    pub aptitude_version: String,
    /// The recorded run's wall time in ms (this result's `duration_ms` is the
    /// re-evaluation's).
    pub duration_ms: u64,
    /// The recorded run's agent usage (this result's `usage` is only what this run spent:
    /// grading calls not answered from the recorded grades or the cache).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

impl TestResult {
    /// A result of test `name` in `file` with `status` and nothing else yet: no time, usage,
    /// error, assertions, transcript, runs or marks. Every other result is built on it
    /// (`TestResult { field, ..TestResult::new(…) }`), so a new field is added in one place.
    pub fn new(name: impl Into<String>, file: impl Into<String>, status: TestStatus) -> Self {
        TestResult {
            name: name.into(),
            file: file.into(),
            prompt: None,
            status,
            duration_ms: 0,
            usage: None,
            error: None,
            assertions: Vec::new(),
            transcript: None,
            agent: None,
            agent_id: None,
            variant: None,
            files: Vec::new(),
            workspace: None,
            recorded: None,
            error_kind: None,
            skip_reason: None,
            attempts: Vec::new(),
            runs: Vec::new(),
            repeat: None,
            fingerprint: None,
            reused: None,
            not_reused: None,
        }
    }

    /// The test's identity ([`TestKey`]).
    pub fn key(&self) -> TestKey {
        TestKey {
            file: self.file.clone(),
            name: self.name.clone(),
            agent: self
                .agent_id
                .unwrap_or(crate::spec::agent_kind::AgentKind::Claude),
            variant: self.variant.clone(),
        }
    }

    /// How many runs the test has in all: its `runs: N` (also when this result holds only a
    /// shard's part of them), else 1.
    pub fn runs_in_all(&self) -> u32 {
        match &self.repeat {
            Some(r) => r.split.as_ref().map_or(r.runs, |s| s.of),
            None => 1,
        }
    }

    /// The runs this result holds with their numbers (1-based): `runs` in order, numbered by
    /// `repeat.split` when a shard holds only some of them.
    pub fn numbered_runs(&self) -> impl Iterator<Item = (u32, &TestResult)> {
        let split = self.repeat.as_ref().and_then(|r| r.split.as_ref());
        self.runs.iter().enumerate().map(move |(i, run)| {
            let number = split
                .and_then(|s| s.numbers.get(i).copied())
                .unwrap_or(i as u32 + 1);
            (number, run)
        })
    }

    /// Run `number` (1-based) of the test: the result itself for a test that ran once, else
    /// the run of that number in `runs`; `None` when this result does not hold it.
    pub fn run_numbered(&self, number: u32) -> Option<&TestResult> {
        if self.runs.is_empty() {
            return (number == 1).then_some(self);
        }
        self.numbered_runs()
            .find_map(|(n, run)| (n == number).then_some(run))
    }

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
    /// Run counts, when a test was run more than once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs: Option<RunCounts>,
    /// The cost or token ceiling, when one was set (`--max-cost`, `--max-tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<BudgetSummary>,
    /// Tests that ran with two or more variants: the variants side by side, against
    /// `default` ([`crate::verdict::variants`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<crate::verdict::variants::VariantComparison>,
    /// Tests whose agent did not run: their runs were taken from a baseline (`--reuse`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reused: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// Runs across repeated tests (a test run once counts as one run).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct RunCounts {
    /// Runs in all.
    pub total: u32,
    /// Runs passed.
    pub passed: u32,
    /// Runs failed.
    pub failed: u32,
    /// Runs errored.
    pub errors: u32,
    /// Runs skipped (not started: budget, interruption).
    pub skipped: u32,
    /// Tests whose runs disagreed.
    pub flaky_tests: u32,
}

/// Spend against the run's ceiling.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct BudgetSummary {
    /// `--max-cost`, in USD.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost_usd: Option<f64>,
    /// `--max-tokens`, in tokens (input, output and cache tokens).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// Reported cost of the finished runs and their grading, in USD.
    pub spent_cost_usd: f64,
    /// Tokens of the finished runs and their grading.
    pub spent_tokens: u64,
    /// Runs not started because the ceiling was reached (`skipped`, reason `budget`).
    pub skipped_runs: u32,
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
            if t.reused.is_some() {
                s.reused += 1;
            }
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
        if tests.iter().any(|t| !t.runs.is_empty()) {
            let mut runs = RunCounts::default();
            for t in tests {
                let each: Vec<&TestResult> = if t.runs.is_empty() {
                    vec![t]
                } else {
                    t.runs.iter().collect()
                };
                for r in each {
                    runs.total += 1;
                    match r.status {
                        TestStatus::Passed => runs.passed += 1,
                        TestStatus::Failed => runs.failed += 1,
                        TestStatus::Error => runs.errors += 1,
                        TestStatus::Skipped => runs.skipped += 1,
                    }
                }
                if t.repeat.as_ref().is_some_and(|r| r.flaky) {
                    runs.flaky_tests += 1;
                }
            }
            s.runs = Some(runs);
        }
        s.variants = crate::verdict::variants::compare(tests);
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

/// What determines one agent run: the SHA-256 of `parts`, and the parts' own SHA-256s
/// (hex), by the names in [`crate::run::fingerprint`]'s docs. Made by
/// [`crate::run::fingerprint::of`]; compared by `run --reuse`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// SHA-256 (hex) of every part.
    pub sha256: String,
    /// Each part's SHA-256 (hex), by name (`agent`, `model`, `prompt`, `run`, `workspace`,
    /// `setup`, `env`, `inputs`, `plugins`).
    pub parts: BTreeMap<String, String>,
}

impl Fingerprint {
    /// The parts that differ from `other`'s (present in one only, or hashed differently),
    /// in name order.
    pub fn changed_parts(&self, other: &Fingerprint) -> Vec<String> {
        let mut names: Vec<&String> = self.parts.keys().chain(other.parts.keys()).collect();
        names.sort();
        names.dedup();
        names
            .into_iter()
            .filter(|n| self.parts.get(*n) != other.parts.get(*n))
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reader_refuses_another_results_version() {
        let mut json = serde_json::to_value(Results::new(Vec::new(), 0)).unwrap();
        json["version"] = 3.into();
        let e = serde_json::from_value::<Results>(json.clone())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("results version 3; this aptitude reads versions 1 to 2"),
            "{e}"
        );
        let e = Results::from_json(r#"{"tests": "a v3 shape", "version": 3}"#)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("results version 3;"), "{e}");
        json["version"] = 1.into();
        assert!(Results::from_json(&json.to_string()).is_ok());
        json["version"] = 2.into();
        assert!(Results::from_json(&json.to_string()).is_ok());
    }

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
            duration_ms: 1,
            usage: Some(Usage {
                input_tokens: 10,
                cost_usd: Some(0.5),
                ..Usage::default()
            }),
            assertions: vec![a(AssertionStatus::Pass)],
            ..TestResult::new("t", "f", status)
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

/// One row of [`Results::matrix`]: a test (and variant) with its verdict on each agent.
#[derive(Debug, Clone, PartialEq)]
pub struct MatrixRow {
    /// The test's name.
    pub name: String,
    /// Its file.
    pub file: String,
    /// The variant, for tests that declare variants.
    pub variant: Option<String>,
    /// Per agent of [`Matrix::agents`]: the verdict, and `3/5` for repeated tests.
    pub cells: Vec<Option<(TestStatus, Option<String>)>>,
}

/// A tests × agents table: which agents obey which test.
#[derive(Debug, Clone, PartialEq)]
pub struct Matrix {
    /// The agents, as columns, in [`crate::spec::agent_kind::AgentKind::ALL`] order.
    pub agents: Vec<crate::spec::agent_kind::AgentKind>,
    /// One row per (file, name, variant), in first-seen order.
    pub rows: Vec<MatrixRow>,
}

impl Results {
    /// The tests × agents table, when the run holds more than one agent or variant
    /// (`None` otherwise: the plain list says it all).
    pub fn matrix(&self) -> Option<Matrix> {
        let mut agents: Vec<crate::spec::agent_kind::AgentKind> =
            self.tests.iter().filter_map(|t| t.agent_id).collect();
        agents.sort();
        agents.dedup();
        let variants = self.tests.iter().any(|t| t.variant.is_some());
        if agents.len() < 2 && !variants {
            return None;
        }
        if agents.is_empty() {
            agents.push(crate::spec::agent_kind::AgentKind::Claude);
        }
        let mut rows: Vec<MatrixRow> = Vec::new();
        for t in &self.tests {
            let column = agents
                .iter()
                .position(|a| Some(*a) == t.agent_id)
                .unwrap_or(0);
            let row = match rows
                .iter()
                .position(|r| r.name == t.name && r.file == t.file && r.variant == t.variant)
            {
                Some(i) => &mut rows[i],
                None => {
                    rows.push(MatrixRow {
                        name: t.name.clone(),
                        file: t.file.clone(),
                        variant: t.variant.clone(),
                        cells: vec![None; agents.len()],
                    });
                    let last = rows.len() - 1;
                    &mut rows[last]
                }
            };
            row.cells[column] = Some((
                t.status,
                t.repeat
                    .as_ref()
                    .map(|r| format!("{}/{}", r.passed, r.runs)),
            ));
        }
        Some(Matrix { agents, rows })
    }
}

impl TestResult {
    /// The test's name with its agent and variant when the run holds several (`greets ·
    /// codex · baseline`), for lists where tests of several agents meet (JUnit cases).
    pub fn qualified_name(&self, with_agent: bool) -> String {
        let mut name = self.name.clone();
        if let (true, Some(agent)) = (with_agent, self.agent_id) {
            name.push_str(&format!(" · {agent}"));
        }
        if let Some(variant) = &self.variant {
            name.push_str(&format!(" · {variant}"));
        }
        name
    }
}

#[cfg(test)]
mod matrix_tests {
    use super::*;
    use crate::spec::agent_kind::AgentKind;

    fn result(name: &str, agent: AgentKind, status: TestStatus) -> TestResult {
        let mut r: TestResult = serde_json::from_value(serde_json::json!({
            "name": name, "file": "t.aptitude.yaml", "status": "passed", "duration_ms": 1,
            "usage": null, "error": null, "assertions": []
        }))
        .unwrap();
        r.status = status;
        r.agent_id = Some(agent);
        r
    }

    #[test]
    fn tests_by_agents() {
        let one = Results::new(vec![result("a", AgentKind::Claude, TestStatus::Passed)], 1);
        assert!(one.matrix().is_none(), "one agent, no variants: no table");
        let r = Results::new(
            vec![
                result("a", AgentKind::Claude, TestStatus::Passed),
                result("a", AgentKind::Codex, TestStatus::Failed),
                result("b", AgentKind::Codex, TestStatus::Error),
            ],
            1,
        );
        let m = r.matrix().unwrap();
        assert_eq!(m.agents, [AgentKind::Claude, AgentKind::Codex]);
        assert_eq!(m.rows.len(), 2);
        assert_eq!(
            m.rows[0].cells,
            [
                Some((TestStatus::Passed, None)),
                Some((TestStatus::Failed, None))
            ]
        );
        assert_eq!(m.rows[1].cells, [None, Some((TestStatus::Error, None))]);
        assert_eq!(r.tests[1].qualified_name(true), "a · codex");
        let table = crate::report::terminal::render_matrix(&r).unwrap();
        assert!(
            table.contains("claude") && table.contains("codex"),
            "{table}"
        );
        let md = crate::report::markdown::matrix_table(&m);
        assert!(md.contains("| a | ✅ | ❌ |"), "{md}");
        assert!(md.contains("| b | — | ⚠️ |"), "{md}");
        let html = crate::report::html::render(&r).unwrap();
        assert!(
            html.contains("<th scope=\"row\">a</th><td class=\"passed\">passed</td><td class=\"failed\">failed</td>"),
            "{html}"
        );
    }
}
