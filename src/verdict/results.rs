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
//!             "error", "error_kind": "infra|agent|setup|judge|interrupted|budget|replay|tampered|limit",
//!             "skip_reason": "budget|shard", "attempts": [{"error", "error_kind", "duration_ms", "usage"}],
//!             "assertions": [{"kind", "description",
//!                             "status": "pass|fail|error|invalid|skip", "line", "detail",
//!                             "score", "threshold", "reasoning", "cached", "grading_usage",
//!                             "votes", "grade_keys",
//!                             "claims": [{"kind", "text", "command", "outcome", "path"}]}],
//!             "transcript" (with "turns"), "files" (with "diff", "diff_omitted"),
//!             "model_traffic": {"upstream", "requests", "retries", "failed", "other_requests",
//!                               "input_tokens", "output_tokens", "cache_read_input_tokens",
//!                               "cache_creation_input_tokens", "unmetered", "cost_usd",
//!                               "models", "budget", "refused", "refused_first", "request_log"},
//!             "witness": {"status", "calls", "results", "unrecorded", "findings", "why"},
//!             "hooks_ran": [{"file", "line", "event", "command",
//!                            "execs": [{"command", "exit_code", "at_ms"}], "execs_total"}],
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
//! Version 3 lets a run's bulky detail (`transcript`, `files`, `witness`, `dialog`,
//! `execs`, `sandbox`, `fingerprint`, `model_traffic.request_log`) sit in a blob pack beside
//! the file, referenced by the run's `"blobs"` ([`compact`]); a version 3 file may also
//! hold them inline, as versions 1 and 2 always do, which are read as version 3.
//!
//! Version 2 added `error_kind`, `skip_reason`, `attempts`, `runs`, `repeat`, and the
//! summary's `runs` and `budget`; a version 1 file is read as version 2 without them.
//!
//! The judge's work travels with an assertion so that `run --reuse` ([`crate::run::reuse`])
//! need not ask again: a review's `grade_keys` with its `score`/`votes`, and a
//! `claims: verified` extraction's key (`grade_keys`) with the `claims` it read.

use serde::{Deserialize, Serialize};

pub use super::test_result::*;

pub mod compact;
pub mod stream;
use crate::transcript::Usage;

/// The results schema version.
pub const RESULTS_VERSION: u32 = 3;

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
    /// A run's detail could not be read from the blob pack ([`compact`]).
    #[error(transparent)]
    Blob(#[from] compact::BlobError),
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
    /// Which rules of the instruction files the tests cover, with each rule's pass rate
    /// and effect ([`crate::verdict::coverage`]); present when some test declares
    /// `covers:`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<crate::verdict::coverage::Coverage>,
    /// The routing suites' figures per skill and agent, the confusion matrices and the
    /// comparison with the baseline ([`crate::verdict::routing`]); present when some test
    /// is a routing suite's prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routing: Option<crate::verdict::routing::Routing>,
    /// The judged pass rate of each certified judge's reviews, raw and corrected for the
    /// judge's errors (Rogan–Gladen, issue #40); empty where no review's judge is certified.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judged: Vec<JudgedPassRate>,
}

/// Whether this aptitude reads results of `version`.
fn readable(version: u64) -> bool {
    (u64::from(OLDEST_READABLE_VERSION)..=u64::from(RESULTS_VERSION)).contains(&version)
}

/// A readable version, read as [`RESULTS_VERSION`] (older versions hold a subset of its
/// fields), or an error naming the version found.
/// One certified judge's reviews in a run: how many it passed, and the pass rate corrected
/// for its certificate's TPR and TNR.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgedPassRate {
    /// The judge profile, in words.
    pub judge: String,
    /// Reviews it passed.
    pub passed: u32,
    /// Reviews it graded (passed or failed).
    pub graded: u32,
    /// The raw pass rate with its Wilson 95 % interval.
    pub raw: Option<crate::verdict::agreement::Rate>,
    /// The Rogan–Gladen corrected rate, its interval the correction of the raw bounds;
    /// `None` for a judge no better than chance.
    pub corrected: Option<crate::verdict::agreement::Rate>,
}

impl JudgedPassRate {
    /// The headers of [`JudgedPassRate::row`], as the Markdown and HTML reports show them.
    pub const COLUMNS: [&'static str; 4] = [
        "certified judge",
        "reviews passed",
        "raw pass rate [95% CI]",
        "corrected for the judge's errors [95% CI]",
    ];

    /// A report's cells: the judge profile, `passed/graded`, and each rate as
    /// `62.5% [30.6%, 86.3%]`; `—` where there is no rate (no review graded, or a judge no
    /// better than chance, whose errors can not be corrected for).
    pub fn row(&self) -> [String; 4] {
        let rate = |r: Option<crate::verdict::agreement::Rate>| {
            r.map_or("—".to_owned(), |r| {
                format!(
                    "{:.1}% [{:.1}%, {:.1}%]",
                    r.value * 100.0,
                    r.low * 100.0,
                    r.high * 100.0
                )
            })
        };
        [
            self.judge.clone(),
            format!("{}/{}", self.passed, self.graded),
            rate(self.raw),
            rate(self.corrected),
        ]
    }
}

/// The [`JudgedPassRate`] of each certified judge over every run's reviews in `tests`.
pub fn judged_pass_rates(tests: &[TestResult]) -> Vec<JudgedPassRate> {
    use crate::assertions::AssertionStatus;
    let mut by: std::collections::BTreeMap<String, (u32, u32, f64, f64)> = Default::default();
    let runs = tests.iter().flat_map(TestResult::each_run);
    for a in runs.flat_map(|r| &r.assertions) {
        let Some(rates) = a.judge.as_ref().and_then(|j| j.rates.as_ref()) else {
            continue;
        };
        let e = by
            .entry(rates.profile.clone())
            .or_insert((0, 0, rates.tpr, rates.tnr));
        match a.status {
            AssertionStatus::Pass => (e.0 += 1, e.1 += 1),
            AssertionStatus::Fail => ((), e.1 += 1),
            _ => ((), ()),
        };
    }
    by.into_iter()
        .map(|(judge, (passed, graded, tpr, tnr))| JudgedPassRate {
            judge,
            passed,
            graded,
            raw: crate::verdict::agreement::Rate::of(passed, graded),
            corrected: crate::verdict::agreement::rogan_gladen_rate(passed, graded, tpr, tnr),
        })
        .collect()
}

fn current_version<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let found = u64::deserialize(d)?;
    if readable(found) {
        Ok(RESULTS_VERSION)
    } else {
        Err(serde::de::Error::custom(ReadError::Version { found }))
    }
}

impl Results {
    /// Compares this run's routing with `baseline`'s ([`crate::verdict::routing::compare`]) into
    /// `routing.baseline`, when both have routing suites: a significant fall then fails the
    /// run ([`Results::all_passed`]).
    pub fn compare_routing(&mut self, baseline: &Results, significance: f64) {
        if let (Some(now), Some(base)) = (self.routing.as_mut(), baseline.routing.as_ref()) {
            let compared = crate::verdict::routing::compare(now, base, significance);
            if let Some(r) = self.summary.routing.as_mut() {
                r.regressions = compared.regressions.len() as u32;
            }
            now.baseline = Some(compared);
        }
    }

    /// Reads results JSON, checking its schema version first: a file of another version
    /// gets [`ReadError::Version`], not a parse error about some field it changed.
    ///
    /// # Errors
    /// When the text is not results JSON or has another version.
    pub fn from_json(text: &str) -> Result<Self, ReadError> {
        Self::from_json_and_pack(text, &mut compact::Pack::at("results.json.blobs".into()))
    }

    /// [`Results::from_json`] for results whose run detail may be in `pack` ([`compact`]).
    ///
    /// # Errors
    /// As [`Results::from_json`], and [`ReadError::Blob`] when a blob the results refer to
    /// is missing from `pack` or corrupt.
    pub fn from_json_and_pack(text: &str, pack: &mut compact::Pack) -> Result<Self, ReadError> {
        #[derive(Deserialize)]
        struct Versioned {
            version: u64,
        }
        let Versioned { version } = serde_json::from_str(text).map_err(ReadError::Parse)?;
        if !readable(version) {
            return Err(ReadError::Version { found: version });
        }
        stream::read_each(text.as_bytes(), pack, &mut |t, _| Some(t))
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
            routing: crate::verdict::routing::of(&tests),
            judged: judged_pass_rates(&tests),
            tests,
            summary,
            coverage: None,
        }
    }

    /// These results without their tests (`tests` empty): the run's figures, for a reader
    /// that puts the tests back one at a time. Cheaper than a clone of a big suite.
    pub fn clone_without_tests(&self) -> Results {
        let Results {
            version,
            aptitude_version,
            run_dir,
            shard,
            tests: _,
            summary,
            coverage,
            routing,
            judged,
        } = self;
        Results {
            version: *version,
            aptitude_version: aptitude_version.clone(),
            run_dir: run_dir.clone(),
            shard: shard.clone(),
            tests: Vec::new(),
            summary: summary.clone(),
            coverage: coverage.clone(),
            routing: routing.clone(),
            judged: judged.clone(),
        }
    }

    /// Whether every test passed or was skipped (exit code 0). A run cut short by its
    /// cost or token ceiling never is: its skipped runs were not judged. Read from the tests
    /// themselves (a test or run skipped for the budget) as well as the summary, so results
    /// whose summary was recomputed (`merge`) can not lose it. Nor is a run whose routing
    /// fell significantly against the baseline (`routing.baseline.regressions`).
    pub fn all_passed(&self) -> bool {
        let for_budget = |t: &TestResult| t.skip_reason == Some(SkipReason::Budget);
        let routing_fell = self
            .routing
            .as_ref()
            .and_then(|r| r.baseline.as_ref())
            .is_some_and(|b| !b.regressions.is_empty());
        // A routing prompt that chose otherwise fails nothing by itself (the figures and
        // the baseline decide); one that could not be judged is never a pass.
        let routing_errors = self.summary.routing.as_ref().is_some_and(|r| r.errors > 0);
        !routing_fell
            && !routing_errors
            && self.summary.failed == 0
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
    /// Tests (routing prompts too) with no cost: neither their agent reported one nor the
    /// model gateway metered it (their cost is missing from `usage.cost_usd`).
    #[serde(default)]
    pub tests_without_cost: u32,
    /// What the simulated users' model calls used, summed over tests (part of `usage`):
    /// tokens, cost in USD, wall time in ms. Absent when no run called a simulated user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simulated_user: Option<Usage>,
    /// Run counts, when a test was run more than once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs: Option<RunCounts>,
    /// Routing suites' prompts, counted apart from the ordinary tests above (`total`,
    /// `passed`, … and `assertions` leave them out): a prompt that chose otherwise than
    /// expected fails no run by itself, the figures and the baseline decide
    /// ([`Results::all_passed`]). Absent without routing suites.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routing: Option<RoutingPrompts>,
    /// The cost or token ceiling, when one was set (`--max-cost`, `--max-tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<BudgetSummary>,
    /// Tests that ran with two or more variants: the variants side by side, against
    /// `default` ([`crate::verdict::variants`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<crate::verdict::variants::VariantComparison>,
    /// When an agent ran on more than one version: each (agent, version)'s pass rate over
    /// its runs, side by side, against the reference release
    /// ([`crate::verdict::versions`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub versions: Vec<crate::verdict::versions::VersionStats>,
    /// Tests whose agent did not run: their runs were taken from a baseline (`--reuse`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reused: u32,
    /// How the agents' runs were fenced in; absent when no agent ran (and in older results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxSummary>,
    /// How far the runs' transcripts are backed by what crossed the model gateway; absent
    /// when no transcript was checked (and in older results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub witness: Option<WitnessSummary>,
}

/// The runs' transcripts against the wire ([`crate::gateway::witness`]): how many
/// were witnessed, partly witnessed, unwitnessed (the run went direct, or the transcript
/// was analyzed from a file) or tampered.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct WitnessSummary {
    /// Transcripts that agree with the wire in every call and result.
    pub witnessed: u32,
    /// Transcripts that agree as far as the wire was kept.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub partial: u32,
    /// Transcripts with no wire to check against.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unwitnessed: u32,
    /// Transcripts that disagree with the wire (their runs are `error`, kind `tampered`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tampered: u32,
    /// Why the first unwitnessed transcript is (`the run went direct …`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why_unwitnessed: Option<String>,
}

impl WitnessSummary {
    /// Each run of `tests` (each run of a repeated test) whose transcript was checked.
    pub fn of(tests: &[TestResult]) -> Option<WitnessSummary> {
        use crate::gateway::witness::WitnessStatus;
        let mut s = WitnessSummary::default();
        let runs = tests.iter().flat_map(TestResult::each_run);
        let mut any = false;
        for w in runs.filter_map(|r| r.witness.as_ref()) {
            any = true;
            match w.status {
                WitnessStatus::Witnessed => s.witnessed += 1,
                WitnessStatus::Partial => s.partial += 1,
                WitnessStatus::Tampered => s.tampered += 1,
                WitnessStatus::Unwitnessed => {
                    s.unwitnessed += 1;
                    if s.why_unwitnessed.is_none() {
                        s.why_unwitnessed = w.why.clone();
                    }
                }
            }
        }
        any.then_some(s)
    }

    /// Whether some transcript is not (wholly) witnessed.
    pub fn any_unwitnessed(&self) -> bool {
        self.unwitnessed + self.partial + self.tampered > 0
    }

    /// The sentence every report shows: `witnessed: every run's transcript agrees with
    /// what crossed the model gateway (3 runs)`, or what is not witnessed and why.
    pub fn phrase(&self) -> String {
        let total = self.witnessed + self.partial + self.unwitnessed + self.tampered;
        let runs = |n: u32| format!("{n} run{}", if n == 1 { "" } else { "s" });
        if !self.any_unwitnessed() {
            return format!(
                "witnessed: every transcript agrees with what crossed the model gateway ({})",
                runs(total)
            );
        }
        if self.unwitnessed == total {
            return format!(
                "unwitnessed ({}): {}",
                runs(total),
                self.why_unwitnessed
                    .as_deref()
                    .unwrap_or("no model traffic to check against")
            );
        }
        let mut parts = Vec::new();
        if self.tampered > 0 {
            parts.push(format!(
                "{} of {total} tampered: the agent's stream disagrees with its model traffic",
                runs(self.tampered)
            ));
        }
        if self.unwitnessed > 0 {
            parts.push(format!(
                "{} of {total} unwitnessed ({})",
                runs(self.unwitnessed),
                self.why_unwitnessed
                    .as_deref()
                    .unwrap_or("no model traffic to check against")
            ));
        }
        if self.partial > 0 {
            parts.push(format!(
                "{} of {total} partly witnessed",
                runs(self.partial)
            ));
        }
        if self.witnessed > 0 {
            parts.push(format!("{} witnessed", runs(self.witnessed)));
        }
        format!("transcripts: {}", parts.join("; "))
    }
}

/// The runs' sandboxes in a run: how many were fenced in and proved their fence, how many
/// ran without one.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct SandboxSummary {
    /// The sandbox the fenced runs used (`bubblewrap 0.8.0`); empty when none was.
    pub mode: String,
    /// Runs fenced in whose every check held before the agent started.
    pub proved: u32,
    /// Runs made with the sandbox off (`--sandbox off`).
    pub unsandboxed: u32,
    /// The most checks one run's proof made.
    pub checks: u32,
    /// The first run's limits and how they were enforced (`4 GiB memory, 512 processes,
    /// 2 GiB disk (rlimits …)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<String>,
}

impl SandboxSummary {
    /// The runs of `tests` (each run of a repeated test) that reached their agent.
    pub fn of(tests: &[TestResult]) -> Option<SandboxSummary> {
        let mut s = SandboxSummary::default();
        let runs = tests.iter().flat_map(TestResult::each_run);
        let mut any = false;
        for record in runs.filter_map(|r| r.sandbox.as_ref()) {
            any = true;
            if s.limits.is_none() {
                s.limits.clone_from(&record.limits);
            }
            if record.is_off() {
                s.unsandboxed += 1;
            } else if !record.verified.is_empty() && record.verified.iter().all(|c| c.held) {
                s.proved += 1;
                s.checks = s.checks.max(record.verified.len() as u32);
                if s.mode.is_empty() {
                    s.mode = record.mode.clone();
                }
            }
        }
        any.then_some(s)
    }

    /// Whether some run was made without the sandbox.
    pub fn any_unsandboxed(&self) -> bool {
        self.unsandboxed > 0
    }

    /// The sentence every report shows: `sandboxed (bubblewrap 0.8.0): every run proved its
    /// fence before the agent started (8 checks)`, or `not sandboxed: 2 of 3 runs ran
    /// without the sandbox (--sandbox off)`.
    pub fn phrase(&self) -> String {
        let total = self.proved + self.unsandboxed;
        let limits = self
            .limits
            .as_ref()
            .map(|l| format!("; limits: {l}"))
            .unwrap_or_default();
        let phrase = if self.unsandboxed > 0 {
            format!(
                "not sandboxed: {} of {total} run{} ran without the sandbox (--sandbox off): the agent saw the host as aptitude does",
                self.unsandboxed,
                if total == 1 { "" } else { "s" }
            )
        } else {
            format!(
                "sandboxed ({}): {} proved its fence before the agent started ({} checks)",
                self.mode,
                if self.proved == 1 {
                    "the run"
                } else {
                    "every run"
                },
                self.checks
            )
        };
        format!("{phrase}{limits}")
    }
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

/// Routing suites' prompts (each on each agent), by what their runs chose.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct RoutingPrompts {
    /// Prompts, each on each agent.
    pub prompts: u32,
    /// Prompts where more than half the judged runs chose as expected.
    pub as_expected: u32,
    /// Prompts that chose otherwise (a miss or a false trigger).
    pub unexpected: u32,
    /// Prompts that could not be judged (their runs errored): these fail the run.
    pub errors: u32,
    /// Prompts not run.
    pub skipped: u32,
    /// Figures that fell significantly against the baseline (`--baseline`): these fail
    /// the run.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub regressions: u32,
}

impl RoutingPrompts {
    /// `routing: 6 prompts, 4 as expected, 2 not · 1 regression against the baseline`.
    pub fn phrase(&self) -> String {
        let mut parts = vec![format!(
            "{} prompt{}",
            self.prompts,
            if self.prompts == 1 { "" } else { "s" }
        )];
        parts.push(format!("{} as expected", self.as_expected));
        if self.unexpected > 0 {
            parts.push(format!("{} not", self.unexpected));
        }
        if self.errors > 0 {
            parts.push(format!("{} error", self.errors));
        }
        if self.skipped > 0 {
            parts.push(format!("{} skipped", self.skipped));
        }
        let mut phrase = format!("routing: {}", parts.join(", "));
        if self.regressions > 0 {
            phrase.push_str(&format!(
                " · {} routing regression{} against the baseline",
                self.regressions,
                if self.regressions == 1 { "" } else { "s" }
            ));
        }
        phrase
    }
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

    /// This summary with the figures that are read from run detail — the sandbox's, the
    /// witness's and the simulated user's — summed from `parts`, the summaries of the
    /// results whose tests these are (`merge` of shards whose tests were read without their
    /// detail). Each of them counts runs, so the sums are what [`Summary::of`] finds on the
    /// tests whole: counts added, the largest number of checks, the first mode, limits and
    /// reason.
    #[must_use]
    pub fn with_run_detail_of<'a>(mut self, parts: impl IntoIterator<Item = &'a Summary>) -> Self {
        let (mut sandbox, mut witness, mut simulated) = (None, None, None);
        for part in parts {
            if let Some(p) = &part.sandbox {
                let s: &mut SandboxSummary = sandbox.get_or_insert_with(SandboxSummary::default);
                s.proved += p.proved;
                s.unsandboxed += p.unsandboxed;
                s.checks = s.checks.max(p.checks);
                if s.mode.is_empty() {
                    s.mode.clone_from(&p.mode);
                }
                if s.limits.is_none() {
                    s.limits.clone_from(&p.limits);
                }
            }
            if let Some(p) = &part.witness {
                let w: &mut WitnessSummary = witness.get_or_insert_with(WitnessSummary::default);
                w.witnessed += p.witnessed;
                w.partial += p.partial;
                w.unwitnessed += p.unwitnessed;
                w.tampered += p.tampered;
                if w.why_unwitnessed.is_none() {
                    w.why_unwitnessed.clone_from(&p.why_unwitnessed);
                }
            }
            if let Some(p) = &part.simulated_user {
                simulated.get_or_insert_with(Usage::default).add(p);
            }
        }
        self.sandbox = sandbox;
        self.witness = witness;
        self.simulated_user = simulated;
        self
    }

    /// Totals of `tests`.
    pub fn of(tests: &[TestResult], duration_ms: u64) -> Self {
        let mut s = Summary {
            duration_ms,
            sandbox: SandboxSummary::of(tests),
            witness: WitnessSummary::of(tests),
            ..Summary::default()
        };
        for t in tests {
            if t.reused.is_some() {
                s.reused += 1;
            }
            if let Some(u) = &t.usage {
                s.usage.add(u);
            }
            if t.usage.as_ref().is_none_or(|u| u.cost_usd.is_none()) {
                s.tests_without_cost += 1;
            }
            if let Some(u) = t.simulated_user_usage() {
                s.simulated_user.get_or_insert_with(Usage::default).add(&u);
            }
            if t.routing.is_some() {
                let r = s.routing.get_or_insert_with(RoutingPrompts::default);
                r.prompts += 1;
                match t.status {
                    TestStatus::Passed => r.as_expected += 1,
                    TestStatus::Failed => r.unexpected += 1,
                    TestStatus::Error => r.errors += 1,
                    TestStatus::Skipped => r.skipped += 1,
                }
                continue;
            }
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
        }
        let ordinary = || tests.iter().filter(|t| t.routing.is_none());
        if ordinary().any(|t| !t.runs.is_empty()) {
            let mut runs = RunCounts::default();
            for t in ordinary() {
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
        s.versions = crate::verdict::versions::compare(tests);
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

    #[test]
    fn every_reader_refuses_another_results_version() {
        let mut json = serde_json::to_value(Results::new(Vec::new(), 0)).unwrap();
        json["version"] = 4.into();
        let e = serde_json::from_value::<Results>(json.clone())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("results version 4; this aptitude reads versions 1 to 3"),
            "{e}"
        );
        let e = Results::from_json(r#"{"tests": "a v4 shape", "version": 4}"#)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("results version 4;"), "{e}");
        json["version"] = 1.into();
        assert!(Results::from_json(&json.to_string()).is_ok());
        json["version"] = 2.into();
        assert!(Results::from_json(&json.to_string()).is_ok());
        json["version"] = 3.into();
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
    fn an_advisory_review_never_fails_its_test_nor_passes_it_alone() {
        use crate::spec::judge_gate::{CertificateStatus, JudgeGate, JudgeStanding};
        use AssertionStatus::*;
        let review = |status, gate, cert| AssertionResult {
            judge: Some(JudgeStanding::new(gate, cert, None)),
            ..a(status)
        };
        let advisory_fail = review(Fail, JudgeGate::Certified, CertificateStatus::Uncertified);
        let advisory_error = review(Error, JudgeGate::Certified, CertificateStatus::Decertified);
        assert_eq!(
            TestResult::status_of(None, &[a(Pass), advisory_fail.clone(), advisory_error]),
            TestStatus::Passed
        );
        assert_eq!(
            TestResult::status_of(None, std::slice::from_ref(&advisory_fail)),
            TestStatus::Skipped,
            "nothing gated: not a pass"
        );
        // Certified under `certified`, or any under `always`: it gates as today.
        for (gate, cert) in [
            (JudgeGate::Certified, CertificateStatus::Certified),
            (JudgeGate::Always, CertificateStatus::Uncertified),
        ] {
            assert_eq!(
                TestResult::status_of(None, &[a(Pass), review(Fail, gate, cert)]),
                TestStatus::Failed
            );
        }
    }

    #[test]
    fn a_certified_judges_pass_rate_is_corrected_and_others_are_left_out() {
        use crate::spec::judge_gate::{
            CertificateStatus, CertifiedRates, JudgeGate, JudgeStanding,
        };
        use AssertionStatus::*;
        let review = |status, rates: Option<CertifiedRates>| AssertionResult {
            judge: Some(JudgeStanding {
                rates,
                ..JudgeStanding::new(JudgeGate::Always, CertificateStatus::Certified, None)
            }),
            ..a(status)
        };
        let certified = CertifiedRates {
            profile: "codex 1, model default".into(),
            tpr: 0.9,
            tnr: 0.8,
        };
        let mut test = TestResult::new("t", "f", TestStatus::Passed);
        // 6 of 10 passed by a judge with TPR 0.9, TNR 0.8: (0.6 + 0.8 − 1) / 0.7 = 0.5714.
        test.assertions = (0..10)
            .map(|i| review(if i < 6 { Pass } else { Fail }, Some(certified.clone())))
            .chain([review(Pass, None), review(Error, Some(certified.clone()))])
            .collect();
        let rates = judged_pass_rates(&[test]);
        assert_eq!(rates.len(), 1);
        assert_eq!((rates[0].passed, rates[0].graded), (6, 10));
        let corrected = rates[0].corrected.unwrap();
        assert!((corrected.value - 0.4 / 0.7).abs() < 1e-9, "{corrected:?}");
        assert!(corrected.low < corrected.value && corrected.value < corrected.high);
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
    /// Per column of [`Matrix::columns`]: the verdict, and `3/5` for repeated tests.
    pub cells: Vec<Option<(TestStatus, Option<String>)>>,
}

/// One column of [`Results::matrix`]: an agent, on one release when the test chose one.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct MatrixColumn {
    /// The agent.
    pub agent: crate::spec::agent_kind::AgentKind,
    /// The exact release ([`TestResult::agent_version`]); absent for the agent found as
    /// usual.
    pub version: Option<String>,
}

impl MatrixColumn {
    /// `pi`, or `pi@0.72.1` on a chosen release.
    pub fn label(&self) -> String {
        match &self.version {
            Some(v) => format!("{}@{v}", self.agent),
            None => self.agent.name().to_owned(),
        }
    }
}

/// A tests × agents table: which agents (and releases of them) obey which test.
#[derive(Debug, Clone, PartialEq)]
pub struct Matrix {
    /// The columns, agents in [`crate::spec::agent_kind::AgentKind::ALL`] order, each
    /// agent's releases after the agent found as usual, in semver order.
    pub columns: Vec<MatrixColumn>,
    /// One row per (file, name, variant), in first-seen order.
    pub rows: Vec<MatrixRow>,
}

impl Matrix {
    /// Whether the columns hold more than one agent.
    pub fn several_agents(&self) -> bool {
        self.columns
            .iter()
            .any(|c| Some(c.agent) != self.columns.first().map(|f| f.agent))
    }
}

impl Results {
    /// The tests × agents table, when the run holds more than one agent, release of an
    /// agent, or variant (`None` otherwise: the plain list says it all). A routing suite's
    /// prompts are not in it: their figures per agent are the routing section's.
    pub fn matrix(&self) -> Option<Matrix> {
        let tests: Vec<&TestResult> = self.tests.iter().filter(|t| t.routing.is_none()).collect();
        let column_of = |t: &TestResult| MatrixColumn {
            agent: t
                .agent_id
                .unwrap_or(crate::spec::agent_kind::AgentKind::Claude),
            version: t.agent_version.clone(),
        };
        let mut columns: Vec<MatrixColumn> = tests.iter().map(|t| column_of(t)).collect();
        columns.sort_by(|a, b| {
            let semver =
                |c: &MatrixColumn| c.version.as_deref().map(|v| semver::Version::parse(v).ok());
            (a.agent, semver(a), &a.version).cmp(&(b.agent, semver(b), &b.version))
        });
        columns.dedup();
        let variants = tests.iter().any(|t| t.variant.is_some());
        if columns.len() < 2 && !variants {
            return None;
        }
        let mut rows: Vec<MatrixRow> = Vec::new();
        for t in tests {
            let wanted = column_of(t);
            let column = columns.iter().position(|c| *c == wanted).unwrap_or(0);
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
                        cells: vec![None; columns.len()],
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
        Some(Matrix { columns, rows })
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

    /// A routing figure that fell significantly against the baseline fails the run, even
    /// with every test passed; one that moved without significance does not.
    #[test]
    fn a_routing_regression_fails_the_run() {
        use crate::verdict::routing::{Routing, RoutingBaseline, RoutingChange};
        let change = RoutingChange {
            suite: "routing".into(),
            skill: "pdf".into(),
            agent: AgentKind::Claude,
            figure: "recall".into(),
            before: [10, 10],
            after: [2, 10],
            p_value: 0.000_357,
        };
        let mut results = Results::new(vec![result("a", AgentKind::Claude, TestStatus::Passed)], 1);
        results.routing = Some(Routing {
            baseline: Some(RoutingBaseline {
                significance: 0.05,
                changed: vec![change.clone()],
                ..RoutingBaseline::default()
            }),
            ..Routing::default()
        });
        assert!(results.all_passed(), "a move without significance");
        results.routing = Some(Routing {
            baseline: Some(RoutingBaseline {
                significance: 0.05,
                regressions: vec![change],
                ..RoutingBaseline::default()
            }),
            ..Routing::default()
        });
        assert!(!results.all_passed(), "a routing regression fails the run");
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
        assert_eq!(
            m.columns
                .iter()
                .map(MatrixColumn::label)
                .collect::<Vec<_>>(),
            ["claude", "codex"]
        );
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
