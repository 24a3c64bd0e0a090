//! One test's result: its status, whose fault an error is, its assertions' outcomes, its
//! transcript, its runs and the k-of-n figures of a repeated test. The per-test part of
//! the results model ([`super::results`], which re-exports every item here); computed by
//! the runner, [`super::repeat`] and `merge`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use crate::assertions::judge::JudgeVote;
pub use crate::assertions::{AssertionResult, AssertionStatus};
use crate::transcript::{Transcript, Usage};
use crate::workspace::FileChange;

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
    /// The model gateway refused a request of the run because it would cross the run's
    /// `--max-cost` or `--max-tokens` ceiling: the run was stopped in the middle.
    Budget,
    /// The run was replayed from a cassette (`run --replay`, a reused run) and sent a
    /// model request the cassette does not hold: the agent, its version, its prompt or a
    /// tool's result changed since the recording.
    Replay,
    /// The agent's stream disagrees with what crossed the model gateway: a call or result
    /// the model never saw, a changed result, one id used for two calls, a forged history
    /// (`gateway::witness`). Never a pass; never retried.
    Tampered,
    /// The run hit one of its limits (memory, processes, disk, output): it was stopped.
    Limit,
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
            ErrorKind::Budget => "budget",
            ErrorKind::Replay => "replay",
            ErrorKind::Tampered => "tampered",
            ErrorKind::Limit => "limit",
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
    /// When the run started (RFC 3339, UTC, ms): where the OTLP export places its span.
    /// Absent for a test that never ran, and in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
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
    /// The exact release the test ran on (`0.72.1`, never `latest`), for a test on a chosen
    /// release (`versions:`, `--agent NAME@VERSION`): each (test, agent, version) is its
    /// own result. Absent for a test on the agent found as usual (its version is in
    /// [`TestResult::agent`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_version: Option<String>,
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
    pub repeat: Option<RepeatStats>,
    /// What determined the agent's run ([`crate::run::fingerprint`]); absent when the test
    /// never reached its agent (a workspace or variant failure) and in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<Fingerprint>,
    /// How the agent's run was fenced in: the sandbox (`bubblewrap 0.8.0`) and what it
    /// proved before the agent started, or `off` when it ran unsandboxed; absent when the
    /// agent never ran, and in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<crate::sandbox::Record>,
    /// Set when the agent did not run: the run was taken from a baseline (`run --reuse`)
    /// and today's assertions were evaluated on its transcript.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reused: Option<Reused>,
    /// Why the agent ran although `run --reuse` was given (no matching test in the
    /// baseline, a changed fingerprint, no transcript, assertions that need the workspace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_reused: Option<String>,
    /// The agent run's model traffic as aptitude's model gateway metered it: requests,
    /// retries, tokens, cost. Absent when the run did not go through the gateway (an
    /// agent that talks only to its own backend, `--no-gateway`) and in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_traffic: Option<crate::gateway::Traffic>,
    /// The transcript checked against what crossed the model gateway: `witnessed`,
    /// `tampered` (the run is `error`, kind `tampered`), `partial`, or `unwitnessed` (the
    /// run went direct; a transcript analyzed from a file). Absent for a test whose agent
    /// did not run, and in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub witness: Option<crate::gateway::witness::Witness>,
    /// The run's conversation with the test's `user:` (each question, where it came among
    /// the calls, its reply, scripted or simulated), as the run view shows it. Absent for
    /// a test without a `user:`, and in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dialog: Option<crate::transcript::dialog::Dialog>,
    /// The shell calls checked against the kernel's exec record (what really ran in the
    /// sandbox, `sandbox::exec`): its status, the kernel's exit codes that overruled the
    /// transcript's, and what ran that no tool call claims. Absent when the sandbox was
    /// off, and in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execs: Option<crate::sandbox::exec::check::ExecReport>,
    /// The workspace's hooks that ran, by the exec record: each hook's file
    /// (workspace-relative), line, event and command, and the execs it ran
    /// (`sandbox::exec::hooks`). Read from the workspace when the run started; a hook
    /// written during the run is not named. Absent when none ran, and in older results.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hooks_ran: Vec<crate::sandbox::exec::hooks::HookRan>,
    /// The routing suite's prompt this test ran (`routing:`): the suite, its skills, what
    /// the prompt should trigger and when each run stopped. Each run's routing assertion
    /// says what it triggered; `verdict::routing` makes the figures of both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routing: Option<crate::spec::routing::RoutingCase>,
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
    /// The exact release, for tests on a chosen one ([`TestResult::agent_version`]).
    pub agent_version: Option<String>,
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
            agent_version: spec.agent_version(),
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
    /// The agent ran again, its model answered from the baseline's cassette (an assertion
    /// needs the workspace after the run, which only a new run rebuilds): its transcript
    /// and files are this run's, its model requests cost nothing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replayed: bool,
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
            started_at: None,
            usage: None,
            error: None,
            assertions: Vec::new(),
            transcript: None,
            agent: None,
            agent_id: None,
            agent_version: None,
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
            sandbox: None,
            reused: None,
            not_reused: None,
            model_traffic: None,
            witness: None,
            dialog: None,
            execs: None,
            hooks_ran: Vec::new(),
            routing: None,
        }
    }

    /// This result without what only a run's own view shows: the transcript, the changed
    /// files with their diffs, the witness's lists, the dialog, the exec record and the
    /// sandbox proof, in it and in each of its runs. What verdicts, counts and totals are
    /// read from stays: status, assertions, usage, the repeat figures, the model traffic's
    /// totals. For readers that keep every test of a big suite in memory and need the
    /// detail of a few ([`crate::verdict::results::stream`]).
    #[must_use]
    pub fn without_run_detail(mut self) -> TestResult {
        self.transcript = None;
        self.files = Vec::new();
        self.witness = None;
        self.dialog = None;
        self.execs = None;
        self.hooks_ran = Vec::new();
        self.sandbox = None;
        if let Some(traffic) = self.model_traffic.as_mut() {
            traffic.request_log = Vec::new();
        }
        self.runs = std::mem::take(&mut self.runs)
            .into_iter()
            .map(TestResult::without_run_detail)
            .collect();
        self
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
            agent_version: self.agent_version.clone(),
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

    /// What the simulated user's model calls used in this test (tokens, cost in USD, wall
    /// time in ms), summed over its runs; part of [`Self::usage`], shown on a line of its
    /// own. `None` when no run called the simulated user (a scripted user, a replay).
    pub fn simulated_user_usage(&self) -> Option<crate::transcript::Usage> {
        let runs: Vec<&TestResult> = if self.runs.is_empty() {
            vec![self]
        } else {
            self.runs.iter().collect()
        };
        runs.iter()
            .filter_map(|r| r.dialog.as_ref()?.simulated_usage.as_ref())
            .fold(None, |sum, u| {
                let mut sum: crate::transcript::Usage = sum.unwrap_or_default();
                sum.add(u);
                Some(sum)
            })
    }

    /// Each run this result holds: its `runs`, or itself for a test that ran once.
    pub fn each_run(&self) -> &[TestResult] {
        if self.runs.is_empty() {
            std::slice::from_ref(self)
        } else {
            &self.runs
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
    /// every assertion was skipped; else `passed`. An advisory judge's review
    /// ([`AssertionResult::advisory`]) does not count: a test of advisory reviews alone is
    /// `skipped`, never `passed` on a verdict that does not gate.
    pub fn status_of(error: Option<&str>, assertions: &[AssertionResult]) -> TestStatus {
        let gating: Vec<&AssertionResult> = assertions.iter().filter(|a| !a.advisory()).collect();
        if error.is_none() && gating.is_empty() && !assertions.is_empty() {
            return TestStatus::Skipped;
        }
        let assertions = gating;
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

impl TestResult {
    /// The test's name with its agent and variant when the run holds several (`greets ·
    /// codex · baseline`), for lists where tests of several agents meet (JUnit cases). A
    /// test on a chosen release always names it (`greets · pi@0.72.1`): the same test on
    /// another release is another result.
    pub fn qualified_name(&self, with_agent: bool) -> String {
        let mut name = self.name.clone();
        match (&self.agent_version, with_agent, self.agent_id) {
            (Some(version), ..) => {
                let agent = self
                    .agent_id
                    .unwrap_or(crate::spec::agent_kind::AgentKind::Claude);
                name.push_str(&format!(" · {agent}@{version}"));
            }
            (None, true, Some(agent)) => name.push_str(&format!(" · {agent}")),
            _ => {}
        }
        if let Some(variant) = &self.variant {
            name.push_str(&format!(" · {variant}"));
        }
        name
    }
}
/// The k-of-n figures of a repeated test.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RepeatStats {
    /// Runs asked for (N).
    pub runs: u32,
    /// Passing runs needed (k).
    pub min_pass: u32,
    /// Runs passed.
    pub passed: u32,
    /// Runs failed.
    pub failed: u32,
    /// Runs errored (not counted toward k, nor in the pass rate).
    pub errors: u32,
    /// Runs skipped (not started, or every assertion skipped).
    pub skipped: u32,
    /// Whether the runs disagreed: at least one passed and one failed.
    pub flaky: bool,
    /// Passed ÷ judged (passed + failed), 0–1; absent when no run was judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_rate: Option<f64>,
    /// Lower end of the pass rate's Wilson 95% interval, 0–1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wilson_low: Option<f64>,
    /// Upper end of the pass rate's Wilson 95% interval, 0–1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wilson_high: Option<f64>,
    /// pass@k and pass^k for k = 1 … judged runs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub estimates: Vec<PassK>,
    /// Per assertion (in file order): how many runs it held in.
    pub assertions: Vec<AssertionTally>,
    /// Set when a sharded run split the test's runs (`run --shard`) and this result holds
    /// only some of them; absent when it holds every run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<SplitRuns>,
}

/// Which of a test's runs a result holds, when `run --shard` split them across shards.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct SplitRuns {
    /// The runs' numbers (1-based among the test's runs), in the order of `runs`.
    pub numbers: Vec<u32>,
    /// The test's runs in all shards together (N).
    pub of: u32,
}

/// pass@k and pass^k at one k.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct PassK {
    /// Runs drawn.
    pub k: u32,
    /// Chance that at least one of k runs passes, 0–1.
    pub pass_at_k: f64,
    /// Chance that all k runs pass, 0–1.
    pub pass_hat_k: f64,
}

/// How one assertion fared across the runs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AssertionTally {
    /// 1-based line in the test file.
    pub line: u32,
    /// The assertion kind (its YAML key).
    pub kind: String,
    /// What was asserted.
    pub description: String,
    /// Runs in which it held.
    pub passed: u32,
    /// Runs in which it did not hold.
    pub failed: u32,
    /// Runs in which it errored, was invalid or skipped.
    pub other: u32,
    /// Held in some runs and not in others: the flaky assertion.
    pub flaky: bool,
    /// Passed ÷ judged (passed + failed) runs, 0–1 — for `asked`, how often the agent
    /// asked; absent when no run was judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_rate: Option<f64>,
    /// Lower end of the pass rate's Wilson 95% interval, 0–1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wilson_low: Option<f64>,
    /// Upper end of the pass rate's Wilson 95% interval, 0–1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wilson_high: Option<f64>,
    /// `stdout` reviews: the score of each graded run, in run order (the run-to-run
    /// spread is their min–max).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scores: Vec<u8>,
    /// `stdout` reviews graded by several votes: the widest max − min of one run's votes
    /// (the judge's own spread, apart from the agent's run-to-run spread).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_spread: Option<u8>,
}

impl RepeatStats {
    /// `3/5 runs passed (flaky)`, the phrase every report shows; for a split test, `2/2
    /// runs passed, 3 of 5 needed (runs 1 and 4 of 5 here, the rest in other shards)`.
    pub fn headline(&self) -> String {
        let mut s = format!("{}/{} runs passed", self.passed, self.runs);
        let all = self.split.as_ref().map_or(self.runs, |split| split.of);
        if let Some(split) = &self.split {
            s.push_str(&format!(", {} of {} needed", self.min_pass, split.of));
        } else if self.min_pass < all {
            s.push_str(&format!(", {} needed", self.min_pass));
        }
        let mut notes = Vec::new();
        if self.errors > 0 {
            notes.push(format!("{} errored", self.errors));
        }
        if self.skipped > 0 {
            notes.push(format!("{} skipped", self.skipped));
        }
        if !notes.is_empty() {
            s.push_str(&format!(", {}", notes.join(", ")));
        }
        if self.flaky {
            s.push_str(" (flaky)");
        }
        if let Some(split) = &self.split {
            let numbers: Vec<String> = split.numbers.iter().map(u32::to_string).collect();
            s.push_str(&format!(
                " (run{} {} of {} here, the rest in other shards)",
                if numbers.len() == 1 { "" } else { "s" },
                crate::shared::text::and_list(&numbers),
                split.of
            ));
        }
        s
    }

    /// `pass rate 60% (95% CI 23%–88%)`, when a run was judged.
    pub fn rate_phrase(&self) -> Option<String> {
        let rate = self.pass_rate?;
        let pct = |x: f64| format!("{:.0}%", x * 100.0);
        Some(match (self.wilson_low, self.wilson_high) {
            (Some(lo), Some(hi)) => {
                format!("pass rate {} (95% CI {}–{})", pct(rate), pct(lo), pct(hi))
            }
            _ => format!("pass rate {}", pct(rate)),
        })
    }

    /// pass@k and pass^k at k = `min_pass` (or the judged runs, when fewer): the chance
    /// that k runs drawn pass at least once, and every time.
    pub fn estimate_at_min_pass(&self) -> Option<&PassK> {
        self.estimates.iter().rev().find(|e| e.k <= self.min_pass)
    }

    /// The assertions that held in some runs and not in others.
    pub fn flaky_assertions(&self) -> impl Iterator<Item = &AssertionTally> {
        self.assertions.iter().filter(|a| a.flaky)
    }
}

impl AssertionTally {
    /// `3/5 runs`, and the review scores' spreads when there are any:
    /// `3/5 runs · scores 4–8 across runs · judge spread 2`.
    pub fn phrase(&self, runs: u32) -> String {
        let mut s = format!("{}/{runs} runs", self.passed);
        if let (Some(lo), Some(hi)) = (self.scores.iter().min(), self.scores.iter().max()) {
            s.push_str(&if lo == hi {
                format!(" · score {lo} in every graded run")
            } else {
                format!(" · scores {lo}–{hi} across runs")
            });
        }
        if let Some(spread) = self.judge_spread {
            s.push_str(&format!(" · judge spread {spread}"));
        }
        s
    }
}
