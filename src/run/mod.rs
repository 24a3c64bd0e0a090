//! Running tests: workspace → setup → agent → assertions, several runs at once.
//!
//! The scheduler ([`schedule`]) runs each run of each test on a `--jobs` slot; one run goes
//! through named steps ([`one`]): workspace, `setup` shells ([`shell`]), the agent, grading
//! ([`grade`]), the post-run work ([`post`]), `--record` ([`record`]); [`classify`] says
//! whose fault an error is. [`reuse`] takes unchanged runs from a baseline, [`shard`]
//! splits a run across jobs and joins them, [`fingerprint`] hashes what determines a run.
//!
//! The runner never prints. It emits [`Event`]s ([`crate::run::events`]) as tests start and
//! finish; reporters render them. Results come back in file order whatever the finishing
//! order.
//!
//! A test with `runs: N` is N isolated runs, each scheduled on its own `--jobs` slot; when
//! its last run finishes, [`crate::verdict::repeat`] decides it (k of n). A run that ends in an
//! `infra` error is tried again when `--retry-infra` allows; once the spend ceiling is
//! reached, runs not started are `skipped` (reason `budget`).
//!
//! A test is `error` — never `passed` — when its run could not be judged: a workspace or
//! `setup` failure, an agent that exited non-zero without a result, an API error, max
//! turns, a timeout, or an interruption. Its assertions are still evaluated on whatever was
//! captured, so the report shows how far the agent got.

mod classify;
pub mod events;
pub mod fingerprint;
mod grade;
mod one;
mod post;
mod record;
pub mod replay;
pub mod reuse;
mod schedule;
pub mod shard;
mod shell;
pub mod single;

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::agent::Agent;
use crate::assertions::judge::Judge;
use crate::spec::TestSpec;
use crate::spec::diagnostic::display_path;
use crate::verdict::results::{ErrorKind, TestResult};

pub use grade::{evaluate_transcript, grade_reviews};
pub use schedule::{Releases, Runner};
pub use shell::StepError;

/// The default per-test timeout (a test's `timeout:` overrides it).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// How long the post-run work of a test interrupted before it began may take (its
/// assertions on what was captured), before it is cut.
pub const INTERRUPTED_POST_RUN: Duration = Duration::from_secs(2);

/// The default number of tests run at once: agent runs wait on the model, not the CPU.
pub const DEFAULT_JOBS: usize = 4;

/// How to run.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Tests run at once (at least 1).
    pub jobs: usize,
    /// Keep workspace copies after the run.
    pub keep_workspaces: bool,
    /// Timeout for tests that set none.
    pub default_timeout: Duration,
    /// Write each agent's raw transcript beside its test file (`--record`); a repeated
    /// test records its first run.
    pub record: bool,
    /// The paths named on the command line: a transcript that already exists beside a
    /// test (a bundled example's, a fixture) is replaced by `--record` only when the test
    /// file or its own directory is one of them ([`record::may_replace`]).
    pub named: Vec<std::path::PathBuf>,
    /// Runs of tests that set no `runs:` (`--runs`, at least 1).
    pub runs: u32,
    /// How many times a run that ended in an infra error is tried again (`--retry-infra`).
    pub retry_infra: u32,
    /// The wait before the first retry; each further retry waits twice as long, at most
    /// [`MAX_RETRY_BACKOFF`].
    pub retry_backoff: Duration,
    /// The ceiling on what the run may spend (`--max-cost`, `--max-tokens`).
    pub budget: BudgetLimits,
    /// `--reuse`: the baseline whose runs are taken, instead of running the agent, for
    /// tests whose fingerprint is unchanged ([`crate::run::reuse`]).
    pub reuse: Option<Arc<crate::run::reuse::Reuse>>,
    /// The sandbox `setup` and `verify` commands run in (the agent's is in its settings).
    pub sandbox: crate::sandbox::Sandbox,
    /// The model gateway the agents go through: its spend (every run's and grading
    /// call's, metered on the wire) counts toward the ceiling too.
    pub gateway: Option<crate::gateway::Gateway>,
    /// `--replay`: the recorded runs whose cassettes answer each run's model requests
    /// ([`crate::run::replay`]).
    pub replay: Option<Arc<crate::run::replay::Replay>>,
}

/// The longest wait between two attempts of a run (`--retry-infra`).
pub const MAX_RETRY_BACKOFF: Duration = Duration::from_secs(30);

/// The default wait before the first retry of an infra error.
pub const DEFAULT_RETRY_BACKOFF: Duration = Duration::from_secs(1);

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            jobs: DEFAULT_JOBS,
            keep_workspaces: false,
            default_timeout: DEFAULT_TIMEOUT,
            record: false,
            named: Vec::new(),
            runs: 1,
            retry_infra: 0,
            retry_backoff: DEFAULT_RETRY_BACKOFF,
            budget: BudgetLimits::default(),
            reuse: None,
            sandbox: crate::sandbox::Sandbox::default(),
            gateway: None,
            replay: None,
        }
    }
}

/// A ceiling on spend: once the finished runs (and their grading) reach it, no new run
/// starts; running ones finish.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BudgetLimits {
    /// In USD, of the cost agents report.
    pub max_cost_usd: Option<f64>,
    /// In tokens (input, output and cache), for agents that report no cost.
    pub max_tokens: Option<u64>,
}

impl BudgetLimits {
    /// Whether any ceiling is set.
    pub fn is_set(&self) -> bool {
        self.max_cost_usd.is_some() || self.max_tokens.is_some()
    }
}

/// A test that produced no run: `error` of `kind`, with `why`.
pub fn not_run(spec: &TestSpec, kind: ErrorKind, why: &str) -> TestResult {
    TestResult {
        prompt: Some(spec.prompt.clone()),
        error: Some(why.to_owned()),
        agent_id: Some(spec.agent.kind),
        agent_version: spec.agent_version(),
        variant: spec.result_variant(),
        routing: spec.routing_case.clone(),
        error_kind: Some(kind),
        ..TestResult::new(
            spec.name.clone(),
            display_path(&spec.file),
            crate::verdict::results::TestStatus::Error,
        )
    }
}

/// What one test run uses besides its spec.
pub struct TestContext<'a> {
    /// The agent adapter.
    pub agent: &'a dyn Agent,
    /// Its reported version.
    pub agent_version: &'a str,
    /// Run settings.
    pub config: &'a RunConfig,
    /// Grades `stdout` reviews.
    pub judge: &'a Judge,
    /// Redacts what is recorded to disk.
    pub redactor: &'a crate::shared::redact::Redactor,
    /// Fires on Ctrl-C / SIGTERM.
    pub cancel: &'a CancellationToken,
    /// Told of each tool call as it happens.
    pub on_tool_call: Option<crate::agent::ToolCallHook<'a>>,
    /// The cassette the run is replayed from (`run --replay`, a reused run with workspace
    /// assertions); `None`: a live run.
    pub replay: Option<crate::gateway::Replaying>,
}

impl TestContext<'_> {
    /// The agent with its version, as results record it and fingerprints hash it
    /// (`claude 2.1.328 (Claude Code)`).
    fn agent_label(&self) -> String {
        format!("{} {}", self.agent.name(), self.agent_version)
            .trim()
            .to_owned()
    }
}

/// Runs one test: workspace copy, setup, agent, then the post-run work (file snapshot,
/// `verify` commands, recording, assertions) under a deadline.
///
/// Blocking file work runs on tokio's blocking pool, never on the async workers, so that a
/// read that blocks (a FIFO the agent made) can neither stall other tests nor the signal
/// handler. The post-run work must finish within the test's timeout again; when it does
/// not, or the run is cancelled meanwhile, the test is `error` saying which step was cut.
pub async fn run_test(spec: &TestSpec, ctx: &TestContext<'_>) -> TestResult {
    one::run_one(spec, ctx).await.0
}
