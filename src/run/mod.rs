//! Running tests: workspace → setup → agent → assertions, several runs at once.
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

pub mod events;
pub mod fingerprint;
pub mod replay;
pub mod reuse;
pub mod shard;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

use crate::agent::process::{self, Ending};
use crate::agent::{Agent, ExecuteRequest, Execution};
use crate::assertions::judge::{Judge, ReviewVerdict};
use crate::assertions::{self, Evidence, VerifyRun, WorkspaceEvidence};
use crate::run::events::Event;
use crate::spec::diagnostic::display_path;
use crate::spec::{AssertionKind, TestSpec, VerifyAssertion};
use crate::transcript::{Outcome, Transcript};
use crate::verdict::results::{ErrorKind, TestResult, TestStatus};
use crate::workspace::{Workspace, WorkspaceError};

/// Why a test's own steps around the agent failed (`setup`, the post-run work); its message
/// becomes the test's `error`.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    /// A `setup` command could not be started.
    #[error("setup `{command}` could not start: {source}")]
    SetupStart {
        /// The command.
        command: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A `setup` command failed: how it ended and the last lines it printed.
    #[error("setup `{command}` {ending}{}", colon_lines(.output))]
    SetupFailed {
        /// The command.
        command: String,
        /// `exited with code 3`, `killed by signal 9`, `timed out after 30s`.
        ending: String,
        /// Its last 10 lines of stdout and stderr (may be empty).
        output: String,
    },
    /// The file snapshot's task died.
    #[error("the file snapshot failed: {0}")]
    SnapshotTask(#[source] tokio::task::JoinError),
    /// The workspace could not be read for the file snapshot.
    #[error(transparent)]
    Snapshot(#[from] WorkspaceError),
    /// The assertions' task died.
    #[error("the assertions failed: {0}")]
    AssertionsTask(#[source] tokio::task::JoinError),
}

/// `:\n` and `output`, or nothing when it is empty.
fn colon_lines(output: &str) -> String {
    if output.is_empty() {
        String::new()
    } else {
        format!(":\n{output}")
    }
}

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
    /// The model gateway the agents go through: its spend (every run's and grading
    /// call's, metered on the wire) counts toward the ceiling too.
    pub gateway: Option<crate::agent::gateway::Gateway>,
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
            runs: 1,
            retry_infra: 0,
            retry_backoff: DEFAULT_RETRY_BACKOFF,
            budget: BudgetLimits::default(),
            reuse: None,
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

/// What the finished runs spent, against the limits.
#[derive(Debug, Default)]
struct Spend {
    cost_usd: f64,
    tokens: u64,
    skipped_runs: u32,
}

impl Spend {
    fn add(&mut self, usage: Option<&crate::transcript::Usage>) {
        if let Some(u) = usage {
            self.cost_usd += u.cost_usd.unwrap_or(0.0);
            self.tokens += u.input_tokens
                + u.output_tokens
                + u.cache_creation_input_tokens
                + u.cache_read_input_tokens;
        }
    }

    fn reached(&self, limits: &BudgetLimits) -> bool {
        limits.max_cost_usd.is_some_and(|max| self.cost_usd >= max)
            || limits.max_tokens.is_some_and(|max| self.tokens >= max)
    }

    /// The larger of what the finished runs reported and what the gateway metered (it
    /// sees runs still going and grading calls, and prices agents that report no cost).
    fn with_gateway(&self, gateway: Option<&crate::agent::gateway::Gateway>) -> Spend {
        let (tokens, cost_usd) = gateway.map_or((0, 0.0), crate::agent::gateway::Gateway::spent);
        Spend {
            cost_usd: self.cost_usd.max(cost_usd),
            tokens: self.tokens.max(tokens),
            skipped_runs: self.skipped_runs,
        }
    }
}

/// Runs tests with agents chosen by each test's `agent:` name.
pub struct Runner {
    agents: BTreeMap<crate::agent::AgentKind, (Arc<dyn Agent>, String)>,
    config: RunConfig,
    judge: Arc<Judge>,
    redactor: crate::shared::redact::Redactor,
    spend: Arc<std::sync::Mutex<Spend>>,
}

/// One test's runs as they finish, until the last one decides it.
#[derive(Clone)]
struct Slots {
    /// The numbers (1-based, ascending) of the runs this run of aptitude makes: all of the
    /// test's runs, or a shard's part of them.
    numbers: Vec<u32>,
    /// The test's runs in all (N).
    of: u32,
    /// The results, in the order of `numbers`.
    runs: Vec<Option<TestResult>>,
    min_pass: u32,
    started: bool,
    done: Option<TestResult>,
}

/// Every test's [`Slots`], shared by the runs' tasks.
type Board = Arc<std::sync::Mutex<Vec<Slots>>>;

impl Runner {
    /// A runner; `agents` maps agents to their adapters and reported versions; `judge`
    /// grades `stdout` reviews.
    pub fn new(
        agents: BTreeMap<crate::agent::AgentKind, (Arc<dyn Agent>, String)>,
        config: RunConfig,
        judge: Arc<Judge>,
        redactor: crate::shared::redact::Redactor,
    ) -> Self {
        Runner {
            agents,
            config,
            judge,
            redactor,
            spend: Arc::default(),
        }
    }

    /// Spend against the ceiling, when one is set (after [`Runner::run`]).
    pub fn budget_summary(&self) -> Option<crate::verdict::results::BudgetSummary> {
        let limits = self.config.budget;
        if !limits.is_set() {
            return None;
        }
        let spend = self
            .spend
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .with_gateway(self.config.gateway.as_ref());
        Some(crate::verdict::results::BudgetSummary {
            max_cost_usd: limits.max_cost_usd,
            max_tokens: limits.max_tokens,
            spent_cost_usd: spend.cost_usd,
            spent_tokens: spend.tokens,
            skipped_runs: spend.skipped_runs,
        })
    }

    /// Runs every test — each `runs` times, every run isolated — `jobs` runs at a time, and
    /// returns their results in input order. Runs start in file order (a test's runs one
    /// after another), so a slot freed by any run is taken by the next.
    ///
    /// When `cancel` fires, running agents are stopped, runs not yet started are not
    /// started, and both are reported as `error` ("interrupted"). Once the budget is
    /// reached, runs not yet started are `skipped` (reason `budget`).
    pub async fn run(
        &self,
        specs: &[TestSpec],
        events: mpsc::UnboundedSender<Event>,
        cancel: CancellationToken,
    ) -> Vec<TestResult> {
        let _ = events.send(Event::RunStarted {
            names: specs.iter().map(|s| s.name.clone()).collect(),
        });
        let slots = Arc::new(Semaphore::new(self.config.jobs.max(1)));
        let mut tasks = tokio::task::JoinSet::new();
        let plan: Vec<(u32, u32)> = specs
            .iter()
            .map(|s| {
                let runs = s.runs_or(self.config.runs);
                (runs, s.min_pass.unwrap_or(runs))
            })
            .collect();
        let numbers: Vec<Vec<u32>> = specs
            .iter()
            .zip(&plan)
            .map(|(s, (runs, _))| {
                s.shard_runs
                    .clone()
                    .unwrap_or_else(|| (1..=*runs).collect())
            })
            .collect();
        let board: Board = Arc::new(std::sync::Mutex::new(
            plan.iter()
                .zip(&numbers)
                .map(|((runs, min_pass), numbers)| Slots {
                    numbers: numbers.clone(),
                    of: *runs,
                    runs: vec![None; numbers.len()],
                    min_pass: *min_pass,
                    started: false,
                    done: None,
                })
                .collect(),
        ));
        for (index, spec) in specs.iter().enumerate() {
            let (runs, min_pass) = plan[index];
            if min_pass > runs {
                // `--runs` made a test's runs fewer than its `min_pass`: it can never pass.
                let why = format!(
                    "min_pass {min_pass} is more than the test's {runs} runs (--runs): it can not pass"
                );
                for &run in &numbers[index] {
                    let r = not_run(spec, ErrorKind::Setup, &why);
                    complete(&board, &events, index, run, r);
                }
                continue;
            }
            for &run in &numbers[index] {
                let permit = tokio::select! {
                    permit = Arc::clone(&slots).acquire_owned() => permit.ok(),
                    () = cancel.cancelled() => None,
                };
                let Some(permit) = permit else {
                    let r = not_run(
                        spec,
                        ErrorKind::Interrupted,
                        "interrupted before it started",
                    );
                    complete(&board, &events, index, run, r);
                    continue;
                };
                {
                    let mut spend = self.spend.lock().unwrap_or_else(|e| e.into_inner());
                    let reached = spend
                        .with_gateway(self.config.gateway.as_ref())
                        .reached(&self.config.budget);
                    if reached {
                        spend.skipped_runs += 1;
                        drop(spend);
                        let r = crate::verdict::repeat::skipped_for_budget(not_run(
                            spec,
                            ErrorKind::Setup,
                            "",
                        ));
                        complete(&board, &events, index, run, r);
                        continue;
                    }
                }
                let spec = spec.clone();
                let agent = self.agents.get(&spec.agent.kind).cloned();
                let mut config = self.config.clone();
                config.record &= run == 1;
                let judge = Arc::clone(&self.judge);
                let redactor = self.redactor.clone();
                let events = events.clone();
                let cancel = cancel.clone();
                let board = Arc::clone(&board);
                let spend = Arc::clone(&self.spend);
                let plan = plan.clone();
                tasks.spawn(async move {
                    let (result, written) = match agent {
                        None => {
                            let why = format!(
                                "the `{}` agent was not set up for this run",
                                spec.agent.kind
                            );
                            (not_run(&spec, ErrorKind::Setup, &why), None)
                        }
                        Some((agent, version)) => {
                            let first = board
                                .lock()
                                .map(|mut b| !std::mem::replace(&mut b[index].started, true))
                                .unwrap_or(false);
                            if first {
                                let _ = events.send(Event::TestStarted {
                                    index,
                                    name: spec.name.clone(),
                                });
                            }
                            let live = |call: &crate::transcript::ToolCall| {
                                let _ = events.send(Event::ToolCall {
                                    index,
                                    run,
                                    call: Box::new(call.clone()),
                                });
                            };
                            // `run --replay`: the run's cassette, or why it has none.
                            let replay = config.replay.as_deref();
                            let (replay, no_cassette) =
                                match replay.map(|r| r.replaying(&spec, run)) {
                                    Some(Ok(r)) => (Some(r), None),
                                    Some(Err(why)) => (None, Some(why)),
                                    None => (None, None),
                                };
                            let ctx = TestContext {
                                agent: agent.as_ref(),
                                agent_version: &version,
                                config: &config,
                                judge: &judge,
                                redactor: &redactor,
                                cancel: &cancel,
                                on_tool_call: Some(&live),
                                replay,
                            };
                            match (no_cassette, config.reuse.as_deref()) {
                                (Some(why), _) => (not_run(&spec, ErrorKind::Setup, &why), None),
                                (None, None) => run_with_retries(&spec, &ctx).await,
                                (None, Some(reuse)) => {
                                    let runs = plan[index].0;
                                    run_or_reuse(&spec, &ctx, reuse, run, runs).await
                                }
                            }
                        }
                    };
                    // Spend is counted before the slot is freed, so the next run to start
                    // sees it.
                    if let Ok(mut spend) = spend.lock() {
                        spend.add(result.usage.as_ref());
                        for a in &result.attempts {
                            spend.add(a.usage.as_ref());
                        }
                    }
                    complete(&board, &events, index, run, result);
                    drop(permit);
                    (index, written)
                });
            }
        }
        let mut written = Vec::new();
        while let Some(joined) = tasks.join_next().await {
            if let Ok((index, w)) = joined {
                written.extend(w.map(|w| (index, w)));
            }
        }
        let mut board = match Arc::try_unwrap(board) {
            Ok(b) => b.into_inner().unwrap_or_else(|e| e.into_inner()),
            Err(shared) => shared.lock().map(|b| b.clone()).unwrap_or_default(),
        };
        // A recording another run replaced after this one wrote it is not this run's.
        for (index, (path, identity)) in written {
            if let Some(result) = board.get_mut(index).and_then(|s| s.done.as_mut()) {
                note_if_replaced(&mut result.recorded, &path, identity);
                if let Some(first) = result.runs.first_mut() {
                    note_if_replaced(&mut first.recorded, &path, identity);
                }
            }
        }
        board
            .into_iter()
            .zip(specs)
            .map(|(slots, spec)| {
                slots
                    .done
                    .unwrap_or_else(|| not_run(spec, ErrorKind::Infra, "the test's task failed"))
            })
            .collect()
    }
}

/// Puts run `run` (1-based) of test `index` in its slot; when it was the test's last run,
/// decides the test and says so.
fn complete(
    board: &Board,
    events: &mpsc::UnboundedSender<Event>,
    index: usize,
    run: u32,
    result: TestResult,
) {
    let Ok(mut board) = board.lock() else {
        return;
    };
    let Some(slots) = board.get_mut(index) else {
        return;
    };
    let n = slots.of;
    if n > 1 {
        let _ = events.send(Event::RunOfTestFinished {
            index,
            run,
            runs: n,
            status: result.status,
        });
    }
    let position = slots.numbers.iter().position(|&number| number == run);
    if let Some(slot) = position.and_then(|p| slots.runs.get_mut(p)) {
        *slot = Some(result);
    }
    if slots.done.is_some() || slots.runs.iter().any(Option::is_none) {
        return;
    }
    let runs: Vec<TestResult> = slots.runs.iter().flatten().cloned().collect();
    let decided = if n == 1 {
        runs.into_iter().next()
    } else {
        Some(crate::verdict::repeat::aggregate_split(
            runs,
            slots.numbers.clone(),
            n,
            slots.min_pass,
        ))
    };
    if let Some(decided) = decided {
        slots.done = Some(decided.clone());
        let _ = events.send(Event::TestFinished {
            index,
            result: Box::new(decided),
        });
    }
}

/// [`run_one`], tried again (after a backoff) while it ends in an infra error and
/// `--retry-infra` allows; every failed attempt is kept in the result's `attempts`.
/// Agent failures are never retried.
async fn run_with_retries(spec: &TestSpec, ctx: &TestContext<'_>) -> (TestResult, Option<Written>) {
    let mut attempts = Vec::new();
    let mut wait = ctx.config.retry_backoff;
    loop {
        let (mut result, written) = run_one(spec, ctx).await;
        let retry = result.error_kind == Some(ErrorKind::Infra)
            && (attempts.len() as u32) < ctx.config.retry_infra
            && !ctx.cancel.is_cancelled();
        if !retry {
            result.attempts = attempts;
            return (result, written);
        }
        attempts.push(crate::verdict::results::Attempt {
            error: result.error.clone().unwrap_or_default(),
            error_kind: ErrorKind::Infra,
            duration_ms: result.duration_ms,
            usage: result.usage.clone(),
        });
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            () = ctx.cancel.cancelled() => {
                // The last attempt stands; the ones before it are kept.
                attempts.pop();
                result.attempts = attempts;
                return (result, written);
            }
        }
        wait = (wait * 2).min(MAX_RETRY_BACKOFF);
    }
}

/// Run `run` of `spec` (of `runs`): taken from the baseline when [`crate::run::reuse`] allows
/// and the fingerprint is unchanged, else run by the agent, saying why it was not reused.
async fn run_or_reuse(
    spec: &TestSpec,
    ctx: &TestContext<'_>,
    reuse: &crate::run::reuse::Reuse,
    run: u32,
    runs: u32,
) -> (TestResult, Option<Written>) {
    let why = match reuse.candidate(spec, run, runs) {
        Err(why) => why,
        Ok(taken) => {
            let recorded = taken.recorded();
            let label = ctx.agent_label();
            match fingerprint_of_copy(spec, &label, ctx.agent.base_url()).await {
                Ok(now) if Some(&now) == recorded.fingerprint.as_ref() => match taken {
                    crate::run::reuse::Taken::Transcript(_) => {
                        return (reuse_run(spec, ctx, reuse, recorded, now).await, None);
                    }
                    crate::run::reuse::Taken::Replay(_, cassette) => {
                        match reuse.replaying(&cassette) {
                            Ok(replay) => {
                                return replay_run(spec, ctx, reuse, recorded, replay).await;
                            }
                            Err(why) => why,
                        }
                    }
                },
                Ok(now) => {
                    let changed = recorded
                        .fingerprint
                        .as_ref()
                        .map(|then| now.changed_parts(then).join(", "))
                        .unwrap_or_default();
                    format!("its fingerprint changed ({changed})")
                }
                Err(why) => format!("no fingerprint: {why}"),
            }
        }
    };
    let (mut result, written) = run_with_retries(spec, ctx).await;
    result.not_reused = Some(why);
    (result, written)
}

/// A reused run whose assertions need the workspace after the run: the agent runs again,
/// its model answered from the baseline run's cassette. A replay that diverged (and went
/// on against the real model) is no reuse, and says why.
async fn replay_run(
    spec: &TestSpec,
    ctx: &TestContext<'_>,
    reuse: &crate::run::reuse::Reuse,
    recorded: &TestResult,
    replay: crate::agent::gateway::Replaying,
) -> (TestResult, Option<Written>) {
    let replaying = TestContext {
        agent: ctx.agent,
        agent_version: ctx.agent_version,
        config: ctx.config,
        judge: ctx.judge,
        redactor: ctx.redactor,
        cancel: ctx.cancel,
        on_tool_call: ctx.on_tool_call,
        replay: Some(replay),
    };
    let (mut result, written) = run_with_retries(spec, &replaying).await;
    let went_live = result
        .model_traffic
        .as_ref()
        .and_then(|t| t.went_live.clone());
    match went_live {
        Some(why) => {
            result.not_reused = Some(format!(
                "its replay from the baseline's recording diverged, and the model answered from there: {why}"
            ));
        }
        None => {
            result.reused = Some(crate::verdict::results::Reused {
                from: reuse.from.clone(),
                aptitude_version: reuse.aptitude_version.clone(),
                duration_ms: recorded.duration_ms,
                usage: recorded.usage.clone(),
                replayed: true,
            });
        }
    }
    (result, written)
}

/// The fingerprint of `spec` on a fresh workspace copy with its variant applied (the copy
/// is removed after).
async fn fingerprint_of_copy(
    spec: &TestSpec,
    agent: &str,
    base_url: Option<&str>,
) -> Result<crate::run::fingerprint::Fingerprint, String> {
    let spec = spec.clone();
    let agent = agent.to_owned();
    let base_url = base_url.map(str::to_owned);
    tokio::task::spawn_blocking(move || {
        let workspace = Workspace::create(&spec.workspace_dir(), spec.workspace_git)
            .map_err(|e| e.to_string())?;
        if let Some(variant) = &spec.variant {
            workspace
                .apply_variant(&variant.remove, &variant.add)
                .map_err(|why| format!("variant `{}`: {why}", variant.name))?;
        }
        crate::run::fingerprint::of(&spec, &agent, base_url.as_deref(), workspace.path())
            .map_err(|e| e.to_string())
    })
    .await
    .map_err(|e| format!("the fingerprint's task failed: {e}"))?
}

/// A run taken from the baseline: today's assertions evaluated on its `recorded`
/// transcript and file list, its reviews graded through the baseline's grades and the
/// cache. `usage` is what grading spent now; the recorded run's is in `reused`.
async fn reuse_run(
    spec: &TestSpec,
    ctx: &TestContext<'_>,
    reuse: &crate::run::reuse::Reuse,
    recorded: &TestResult,
    fingerprint: crate::run::fingerprint::Fingerprint,
) -> TestResult {
    let started = Instant::now();
    let Some(transcript) = recorded.transcript.clone() else {
        // [`crate::run::reuse::Reuse::candidate`] took only runs with a transcript.
        return not_run(
            spec,
            ErrorKind::Setup,
            "the baseline recorded no transcript",
        );
    };
    let checked = check_transcript(spec, &transcript, ctx.judge, ctx.cancel).await;
    // Nothing spent unless a review was graded now.
    let mut grading = crate::transcript::Usage {
        cost_usd: Some(0.0),
        ..Default::default()
    };
    grading.add(&checked.grading);
    TestResult {
        status: checked.status,
        duration_ms: started.elapsed().as_millis() as u64,
        usage: Some(grading),
        error: checked.error,
        error_kind: checked.error_kind,
        assertions: checked.assertions,
        agent: recorded.agent.clone(),
        transcript: Some(transcript),
        files: recorded.files.clone(),
        fingerprint: Some(fingerprint),
        reused: Some(crate::verdict::results::Reused {
            from: reuse.from.clone(),
            aptitude_version: reuse.aptitude_version.clone(),
            duration_ms: recorded.duration_ms,
            usage: recorded.usage.clone(),
            replayed: false,
        }),
        ..not_run(spec, ErrorKind::Setup, "")
    }
}

/// A test that produced no run: `error` of `kind`, with `why`.
pub fn not_run(spec: &TestSpec, kind: ErrorKind, why: &str) -> TestResult {
    TestResult {
        prompt: Some(spec.prompt.clone()),
        error: Some(why.to_owned()),
        agent_id: Some(spec.agent.kind),
        variant: spec.result_variant(),
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
    pub replay: Option<crate::agent::gateway::Replaying>,
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
    run_one(spec, ctx).await.0
}

/// A transcript this run recorded: where, and the file's identity right after.
type Written = (std::path::PathBuf, FileIdentity);

/// [`run_test`], and the transcript it recorded, if any.
async fn run_one(spec: &TestSpec, ctx: &TestContext<'_>) -> (TestResult, Option<Written>) {
    let TestContext {
        agent,
        agent_version: _,
        config,
        judge,
        redactor,
        cancel,
        on_tool_call,
        replay: _,
    } = *ctx;
    let started = Instant::now();
    let timeout = spec.timeout.unwrap_or(config.default_timeout);
    let mut result = not_run(spec, ErrorKind::Setup, "");
    result.agent = Some(ctx.agent_label());
    let finish = |mut r: TestResult, error: Option<(ErrorKind, String)>| {
        let (kind, error) = error.unzip();
        r.error = error;
        r.status = TestResult::status_of(r.error.as_deref(), &r.assertions);
        r.error_kind = match (kind, r.status) {
            (Some(kind), _) => Some(kind),
            (None, TestStatus::Error) => Some(assertion_error_kind(&r.assertions)),
            (None, _) => None,
        };
        r.duration_ms = started.elapsed().as_millis() as u64;
        r
    };
    // What the recorded transcript's file is now, to tell whether another run replaced it
    // while this one ran.
    let record_to = config
        .record
        .then(|| crate::spec::discover::transcript_path(&spec.file))
        .flatten();
    let before = record_to.as_deref().and_then(file_identity);

    let source = spec.workspace_dir();
    let git = spec.workspace_git;
    let created = tokio::task::spawn_blocking(move || Workspace::create(&source, git));
    let mut workspace = tokio::select! {
        created = created => match created {
            Ok(Ok(ws)) => ws,
            Ok(Err(e)) => return (finish(result, Some((ErrorKind::Setup, e.to_string()))), None),
            Err(e) => {
                let why = format!("the workspace copy failed: {e}");
                return (finish(result, Some((ErrorKind::Setup, why))), None);
            }
        },
        () = cancel.cancelled() => {
            let why = "interrupted while the workspace was copied".to_owned();
            return (finish(result, Some((ErrorKind::Interrupted, why))), None);
        }
    };
    if config.keep_workspaces {
        result.workspace = Some(workspace.keep().display().to_string());
    }
    if let Some(variant) = &spec.variant
        && let Err(why) = workspace.apply_variant(&variant.remove, &variant.add)
    {
        let why = format!("variant `{}`: {why}", variant.name);
        return (finish(result, Some((ErrorKind::Setup, why))), None);
    }
    let label = result.agent.clone().unwrap_or_default();
    let root = workspace.path().to_owned();
    let for_fingerprint = spec.clone();
    let base_url = agent.base_url().map(str::to_owned);
    let fingerprint = tokio::task::spawn_blocking(move || {
        crate::run::fingerprint::of(&for_fingerprint, &label, base_url.as_deref(), &root)
    })
    .await;
    match fingerprint {
        Ok(Ok(f)) => result.fingerprint = Some(f),
        Ok(Err(e)) => tracing::debug!(error = %e, "no fingerprint"),
        Err(e) => tracing::debug!(error = %e, "no fingerprint"),
    }
    let workspace = Arc::new(workspace);

    for command in &spec.setup {
        if let Err(why) = run_setup(command, workspace.path(), &spec.env, timeout, cancel).await {
            let kind = if cancel.is_cancelled() {
                ErrorKind::Interrupted
            } else {
                ErrorKind::Setup
            };
            return (finish(result, Some((kind, why.to_string()))), None);
        }
    }

    // `${VAR}` in `mcp_servers` expands from aptitude's environment now, not at load time,
    // so that `validate` does not need the secrets.
    let mcp_servers = match crate::spec::mcp::expand_all(&spec.mcp_servers) {
        Ok(servers) => servers,
        Err(why) => return (finish(result, Some((ErrorKind::Setup, why))), None),
    };
    let plugins = match workspace.copy_plugins(&spec.plugins) {
        Ok(copies) => copies,
        Err(why) => {
            let why = format!("plugins: {why}");
            return (finish(result, Some((ErrorKind::Setup, why))), None);
        }
    };
    // An HTTP server that is not there is named now, before the agent works without it.
    if let Err(why) = crate::agent::mcp_watch::probe_http(&mcp_servers).await {
        return (finish(result, Some((ErrorKind::Infra, why))), None);
    }
    let execution = agent
        .execute(ExecuteRequest {
            prompt: &spec.prompt,
            workspace: workspace.path(),
            env: &spec.env,
            model: spec.model.as_deref(),
            max_turns: spec.max_turns,
            base_url: spec.agent.base_url.as_deref(),
            timeout,
            cancel,
            on_tool_call,
            mcp_servers: &mcp_servers,
            plugins: &plugins,
            replay: ctx.replay.as_ref(),
        })
        .await;
    let execution = match execution {
        Ok(e) => e,
        // The CLI is missing or could not start.
        Err(e) => {
            return (
                finish(result, Some((ErrorKind::Infra, e.to_string()))),
                None,
            );
        }
    };
    let error = run_error(&execution, timeout);
    result.model_traffic = execution.model_traffic.clone();
    let Execution {
        transcript, raw, ..
    } = execution;
    // Grading needs only the transcript, and bounds itself (per-call timeouts, `cancel`).
    let reviews = grade_unless_failed(spec, judge, &transcript, error.is_some(), cancel).await;
    result.usage = Some(total_usage(&transcript, &reviews));

    let step = std::sync::Mutex::new(String::from("the file snapshot"));
    let mut post = PostRun::default();
    let work = post_run(
        spec,
        &workspace,
        &transcript,
        &reviews,
        &mut post,
        &step,
        cancel,
    );
    // An interrupted run still gets its assertions evaluated on what was captured (the
    // report shows how far the agent got), within a short budget.
    let interrupted_before = cancel.is_cancelled();
    let budget = if interrupted_before {
        INTERRUPTED_POST_RUN
    } else {
        timeout
    };
    let cut = tokio::select! {
        biased;
        () = cancel.cancelled(), if !interrupted_before => {
            Some(format!("interrupted during {}", current(&step)))
        }
        done = tokio::time::timeout(budget, work) => match done {
            Ok(Ok(())) => None,
            Ok(Err(why)) => Some(why.to_string()),
            Err(_) if interrupted_before => Some(format!(
                "the post-run work was cut {} after the interruption, during {}",
                humantime::format_duration(budget),
                current(&step)
            )),
            Err(_) => Some(format!(
                "post-run work did not finish within {} (the test's timeout): cut during {}",
                humantime::format_duration(timeout),
                current(&step)
            )),
        },
    };
    // A step that ended because of the interruption (a verify stopped) is interrupted too.
    let cut = cut.or_else(|| {
        (!interrupted_before && cancel.is_cancelled())
            .then(|| format!("interrupted during {}", current(&step)))
    });
    if cut.is_some() && !config.keep_workspaces && Arc::strong_count(&workspace) > 1 {
        // A cut step still holds the copy and may never return: remove it now. Only a
        // directory made by `Workspace::create` (`aptitude-ws-*`) is removed.
        let made_by_us = workspace
            .path()
            .parent()
            .filter(|d| {
                d.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("aptitude-ws-"))
            })
            .map(std::path::Path::to_owned);
        if let Some(dir) = made_by_us {
            let _ = tokio::task::spawn_blocking(move || std::fs::remove_dir_all(dir)).await;
        }
    }
    let mut written = None;
    if let Some(path) = record_to.filter(|_| !cancel.is_cancelled()) {
        let text: String = raw.iter().map(|l| redactor.redact(l) + "\n").collect();
        let to = path.clone();
        let recorded = tokio::task::spawn_blocking(move || record_atomically(&to, &text, before));
        result.recorded = Some(tokio::select! {
            r = tokio::time::timeout(Duration::from_secs(30), recorded) => match r {
                Ok(Ok((said, identity))) => {
                    written = identity.map(|i| (path, i));
                    said
                }
                _ => "not recorded: writing the transcript did not finish within 30s".into(),
            },
            () = cancel.cancelled() => "not recorded: interrupted".into(),
        });
    } else if config.record {
        result.recorded = Some(format!(
            "not recorded: {} is not named x.aptitude.yaml",
            display_path(&spec.file)
        ));
    }
    result.files = post.files;
    result.assertions = post.assertions;
    result.transcript = Some(transcript);
    let cut = cut.map(|c| {
        let kind = if cancel.is_cancelled() {
            ErrorKind::Interrupted
        } else {
            ErrorKind::Agent
        };
        (kind, c)
    });
    let error = match (error, cut) {
        (Some((kind, e)), Some((_, c))) => Some((kind, format!("{e}; {c}"))),
        (e, c) => e.or(c),
    };
    (finish(result, error), written)
}

/// What the post-run work produced, as far as it got.
#[derive(Default)]
struct PostRun {
    files: Vec<crate::workspace::FileChange>,
    assertions: Vec<crate::verdict::results::AssertionResult>,
}

fn current(step: &std::sync::Mutex<String>) -> String {
    step.lock()
        .map(|s| s.clone())
        .unwrap_or_else(|e| e.into_inner().clone())
}

/// The work after the agent: file snapshot, `verify` commands, assertions; `step` names
/// what is running (for the message when it is cut). An error is a failed snapshot.
async fn post_run(
    spec: &TestSpec,
    workspace: &Arc<Workspace>,
    transcript: &Transcript,
    reviews: &BTreeMap<usize, ReviewVerdict>,
    post: &mut PostRun,
    step: &std::sync::Mutex<String>,
    cancel: &CancellationToken,
) -> Result<(), StepError> {
    let set_step = |s: String| {
        if let Ok(mut current) = step.lock() {
            *current = s;
        }
    };
    let ws = Arc::clone(workspace);
    post.files = tokio::task::spawn_blocking(move || ws.changes())
        .await
        .map_err(StepError::SnapshotTask)??;
    let mut verify_runs = BTreeMap::new();
    for (index, assertion) in spec.assertions.iter().enumerate() {
        if let AssertionKind::Verify(v) = &assertion.kind
            && crate::assertions::applies_to(assertion, spec.variant_name())
        {
            set_step(format!("verify `{}`", v.run));
            verify_runs.insert(
                index,
                run_verify(v, workspace.path(), &spec.env, cancel).await,
            );
        }
    }
    set_step("the assertions".into());
    let (spec, ws, transcript, reviews, files) = (
        spec.clone(),
        Arc::clone(workspace),
        transcript.clone(),
        reviews.clone(),
        post.files.clone(),
    );
    post.assertions = tokio::task::spawn_blocking(move || {
        assertions::evaluate(
            &spec,
            &Evidence {
                transcript: &transcript,
                workspace: Some(WorkspaceEvidence {
                    root: ws.path(),
                    changes: &files,
                }),
                verify: &verify_runs,
                reviews: &reviews,
            },
        )
    })
    .await
    .map_err(StepError::AssertionsTask)?;
    Ok(())
}

/// Why an agent run makes its test `error`, in the agent's own words where it gave any,
/// and whose fault it is.
fn run_error(execution: &Execution, timeout: Duration) -> Option<(ErrorKind, String)> {
    let p = &execution.process;
    let outcome = &execution.transcript.outcome;
    // The gateway refused a request for the budget: whatever the agent made of the
    // refusal (an API error, an exit 0), the run was cut short by the ceiling.
    if let Some(traffic) = &execution.model_traffic {
        if let Some(why) = &traffic.budget {
            return Some((ErrorKind::Budget, why.clone()));
        }
        if let Some(why) = &traffic.divergence {
            return Some((
                ErrorKind::Replay,
                format!("the replay diverged from its recording: {why}"),
            ));
        }
    }
    // A test's MCP server that failed is aptitude's environment at fault, whatever the
    // agent made of it, unless the user stopped the run.
    if !execution.mcp_failures.is_empty() && p.ending != Ending::Cancelled {
        return Some((ErrorKind::Infra, execution.mcp_failures.join("; ")));
    }
    match p.ending {
        Ending::Cancelled => {
            return Some((
                ErrorKind::Interrupted,
                "interrupted: the agent was stopped".into(),
            ));
        }
        Ending::TimedOut => {
            return Some((
                ErrorKind::Agent,
                format!(
                    "timed out after {}: the agent was stopped; its transcript up to then is kept",
                    humantime::format_duration(timeout)
                ),
            ));
        }
        Ending::Exited => {}
    }
    match outcome {
        Outcome::Completed if p.code == Some(0) => None,
        Outcome::Completed => Some((
            ErrorKind::Agent,
            format!("the agent {} after reporting success", p.describe(timeout)),
        )),
        Outcome::Incomplete { .. } => {
            // A CLI that died before its session began (no session id, no tool call) is
            // broken or misinstalled, not an agent that gave up.
            let kind = if execution.transcript.session_id.is_none()
                && execution.transcript.tool_calls.is_empty()
            {
                ErrorKind::Infra
            } else {
                ErrorKind::Agent
            };
            let stderr = last_lines(&p.stderr, 5);
            Some((
                kind,
                if stderr.is_empty() {
                    format!("the agent {} without a result", p.describe(timeout))
                } else {
                    format!(
                        "the agent {} without a result: {stderr}",
                        p.describe(timeout)
                    )
                },
            ))
        }
        other => Some((outcome_kind(other), other.describe())),
    }
}

/// Whose fault a session that did not complete is.
fn outcome_kind(outcome: &Outcome) -> ErrorKind {
    match outcome {
        // 5xx, 429, or no status at all (a dropped connection, a network error).
        Outcome::ApiError { http_status, .. } => match http_status {
            None => ErrorKind::Infra,
            Some(s) if *s == 429 || *s >= 500 => ErrorKind::Infra,
            // A refusal (bad key, unknown model): retrying can not help.
            Some(_) => ErrorKind::Setup,
        },
        Outcome::Interrupted => ErrorKind::Interrupted,
        _ => ErrorKind::Agent,
    }
}

/// Whose fault an `error` caused by an assertion is: the judge's when a review could not
/// be graded, else the test's own checks (a `verify` that could not start, a check that
/// does not apply to the transcript).
fn assertion_error_kind(assertions: &[crate::verdict::results::AssertionResult]) -> ErrorKind {
    let errored = |a: &&crate::verdict::results::AssertionResult| {
        matches!(
            a.status,
            crate::verdict::results::AssertionStatus::Error
                | crate::verdict::results::AssertionStatus::Invalid
        )
    };
    if assertions
        .iter()
        .filter(errored)
        .any(|a| a.kind == "stdout" && a.threshold.is_some())
    {
        ErrorKind::Judge
    } else {
        ErrorKind::Setup
    }
}

/// The last `n` non-empty lines of `text`, joined.
fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Runs `command` with `sh -c` in `workspace` with `env` (a `setup` or `verify` command);
/// returns its stdout and how it ended, or why `sh` could not be started.
async fn run_shell(
    command: &str,
    workspace: &std::path::Path,
    env: &BTreeMap<String, String>,
    timeout: Duration,
    cancel: &CancellationToken,
) -> (String, std::io::Result<process::Output>) {
    let spec = process::Spec {
        program: "sh".into(),
        args: vec!["-c".into(), command.into()],
        cwd: workspace.to_owned(),
        env: env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        timeout,
        grace: Duration::from_secs(2),
    };
    let mut stdout = String::new();
    let out = process::run(&spec, cancel, |line| {
        stdout.push_str(line);
        stdout.push('\n');
    })
    .await;
    (stdout, out)
}

/// Runs one `setup` command in the workspace; the error names the command and its output.
async fn run_setup(
    command: &str,
    workspace: &std::path::Path,
    env: &BTreeMap<String, String>,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Result<(), StepError> {
    let (stdout, out) = run_shell(command, workspace, env, timeout, cancel).await;
    let out = out.map_err(|source| StepError::SetupStart {
        command: command.to_owned(),
        source,
    })?;
    if out.success() {
        return Ok(());
    }
    Err(StepError::SetupFailed {
        command: command.to_owned(),
        ending: out.describe(timeout),
        output: last_lines(&format!("{stdout}{}", out.stderr), 10),
    })
}

/// Grades a test's reviews, unless its run `failed`: such a run has no answer worth paying
/// a judge for, so its reviews are skipped, saying why.
async fn grade_unless_failed(
    spec: &TestSpec,
    judge: &Judge,
    transcript: &Transcript,
    failed: bool,
    cancel: &CancellationToken,
) -> BTreeMap<usize, ReviewVerdict> {
    if !failed {
        return grade_reviews(spec, judge, transcript, cancel).await;
    }
    spec.assertions
        .iter()
        .enumerate()
        .filter(|(_, a)| matches!(a.kind, AssertionKind::Review(_) | AssertionKind::Claims))
        .map(|(i, _)| {
            (
                i,
                ReviewVerdict::skipped("not graded: the agent run failed"),
            )
        })
        .collect()
}

/// What identifies one version of a file: (inode, size in bytes, mtime in ns).
type FileIdentity = (u64, u64, i128);

/// The identity of the file at `path`, when there is one.
fn file_identity(path: &std::path::Path) -> Option<FileIdentity> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    Some((
        m.ino(),
        m.len(),
        i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
    ))
}

/// Writes a recorded transcript (`x.transcript.jsonl`, already redacted) atomically: to a
/// temp file in the same directory, then renamed over the old one, so that a reader — or a
/// concurrent run recording the same test — never sees a mix of two runs. Returns where
/// it went, saying when this run replaced a transcript another run wrote since `before`
/// (the file's identity when this test started): the last run to record wins, and says so.
/// Also returns the identity of the file it wrote.
fn record_atomically(
    path: &std::path::Path,
    text: &str,
    before: Option<FileIdentity>,
) -> (String, Option<FileIdentity>) {
    use std::io::Write;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let written = tempfile::Builder::new()
        .prefix(".aptitude-record-")
        .tempfile_in(dir)
        .and_then(|mut tmp| {
            tmp.write_all(text.as_bytes())?;
            tmp.as_file().sync_all()?;
            Ok(tmp)
        });
    let replaced = file_identity(path).is_some_and(|now| Some(now) != before);
    match written.and_then(|tmp| tmp.persist(path).map_err(|e| e.error)) {
        Ok(_) => {
            let identity = file_identity(path);
            let said = if replaced {
                format!(
                    "{} (this run's transcript replaced one another run recorded while this test ran)",
                    display_path(path)
                )
            } else {
                display_path(path)
            };
            (said, identity)
        }
        Err(e) => (
            format!("not recorded: can not write {}: {e}", path.display()),
            None,
        ),
    }
}

/// Says in `recorded` when the transcript at `path` is no longer the one this run wrote
/// (`identity`): another run recorded the same test after this one, and won.
fn note_if_replaced(recorded: &mut Option<String>, path: &std::path::Path, identity: FileIdentity) {
    if file_identity(path) != Some(identity)
        && let Some(text) = recorded.as_mut()
    {
        text.push_str(" (since replaced: another run recorded this test after this one)");
    }
}

/// Grades a test's `stdout` reviews and reads the answer's claims for each
/// `claims: verified`, concurrently (under the judge's global limit), by assertion index.
pub async fn grade_reviews(
    spec: &TestSpec,
    judge: &Judge,
    transcript: &Transcript,
    cancel: &CancellationToken,
) -> BTreeMap<usize, ReviewVerdict> {
    use futures_util::future::Either;
    let test = (spec.agent.kind, spec.model.as_deref());
    let answer = transcript.final_text.as_deref();
    // A review is graded; `claims: verified` has the judge read the answer's claims.
    let calls = spec.assertions.iter().enumerate().filter_map(|(i, a)| {
        let call = match &a.kind {
            AssertionKind::Review(r) => {
                Either::Left(judge.review(r, test, &spec.prompt, answer, cancel))
            }
            AssertionKind::Claims => {
                Either::Right(judge.claims(test, &spec.prompt, answer, cancel))
            }
            _ => return None,
        };
        Some(async move { (i, call.await) })
    });
    futures_util::future::join_all(calls)
        .await
        .into_iter()
        .collect()
}

/// The agent's usage plus the grading calls'.
fn total_usage(
    transcript: &Transcript,
    reviews: &BTreeMap<usize, ReviewVerdict>,
) -> crate::transcript::Usage {
    let mut usage = transcript.usage.clone();
    for v in reviews.values() {
        if let Some(u) = &v.usage {
            usage.add(u);
        }
    }
    usage
}

/// Runs a `verify` command in the workspace after the agent, with the test's `env`.
async fn run_verify(
    v: &VerifyAssertion,
    workspace: &std::path::Path,
    env: &BTreeMap<String, String>,
    cancel: &CancellationToken,
) -> VerifyRun {
    if cancel.is_cancelled() {
        return VerifyRun {
            code: None,
            failure: Some("not run: interrupted".into()),
            stdout: String::new(),
            stderr: String::new(),
        };
    }
    let (stdout, out) = run_shell(&v.run, workspace, env, v.timeout, cancel).await;
    match out {
        Ok(out) => VerifyRun {
            code: (out.ending == Ending::Exited).then_some(out.code).flatten(),
            failure: match out.ending {
                Ending::Exited if out.code.is_some() => None,
                _ => Some(out.describe(v.timeout)),
            },
            stdout,
            stderr: out.stderr,
        },
        Err(e) => VerifyRun {
            code: None,
            failure: Some(format!("could not start: {e}")),
            stdout,
            stderr: String::new(),
        },
    }
}

/// Why a session's outcome makes the test `error`: anything but a completed session.
///
/// A transcript that stops on an API error, at max turns, on an interruption or mid-way
/// can not show what the agent would have done, so guardrails such as `called: false`
/// must not pass on it.
fn outcome_error(outcome: &Outcome) -> Option<String> {
    match outcome {
        Outcome::Completed => None,
        other => Some(other.describe()),
    }
}

/// A transcript checked against a test: its verdict, and what grading it cost.
struct Checked {
    status: TestStatus,
    error: Option<String>,
    error_kind: Option<ErrorKind>,
    assertions: Vec<crate::verdict::results::AssertionResult>,
    /// The judge's usage for the reviews graded now (none from a cache).
    grading: crate::transcript::Usage,
}

/// Evaluates `spec`'s assertions on `transcript` (no workspace), grading its reviews unless
/// the session did not complete: what `aptitude analyze` and a reused run share.
async fn check_transcript(
    spec: &TestSpec,
    transcript: &Transcript,
    judge: &Judge,
    cancel: &CancellationToken,
) -> Checked {
    let error = outcome_error(&transcript.outcome);
    let reviews = grade_unless_failed(spec, judge, transcript, error.is_some(), cancel).await;
    let assertions = assertions::evaluate(
        spec,
        &Evidence {
            reviews: &reviews,
            ..Evidence::transcript_only(transcript)
        },
    );
    let status = TestResult::status_of(error.as_deref(), &assertions);
    let error_kind = match (&error, status) {
        (Some(_), _) => Some(outcome_kind(&transcript.outcome)),
        (None, TestStatus::Error) => Some(assertion_error_kind(&assertions)),
        (None, _) => None,
    };
    let mut grading = crate::transcript::Usage::default();
    for u in reviews.values().filter_map(|v| v.usage.as_ref()) {
        grading.add(u);
    }
    Checked {
        status,
        error,
        error_kind,
        assertions,
        grading,
    }
}

/// Evaluates `spec` against an existing transcript (`aptitude analyze`), grading its
/// reviews unless the session did not complete.
///
/// `started` is when the evaluation began (the result's `duration_ms`); the agent's own
/// time is in the transcript's usage.
pub async fn evaluate_transcript(
    spec: &TestSpec,
    transcript: Transcript,
    judge: &Judge,
    cancel: &CancellationToken,
    started: Instant,
) -> TestResult {
    let checked = check_transcript(spec, &transcript, judge, cancel).await;
    let mut usage = transcript.usage.clone();
    usage.add(&checked.grading);
    TestResult {
        status: checked.status,
        duration_ms: started.elapsed().as_millis() as u64,
        usage: Some(usage),
        error: checked.error,
        error_kind: checked.error_kind,
        assertions: checked.assertions,
        agent: transcript.agent_version.clone(),
        // A transcript read from a file may come from any agent.
        agent_id: None,
        variant: None,
        transcript: Some(transcript),
        ..not_run(spec, ErrorKind::Setup, "")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_outages_are_infra_and_refusals_are_not() {
        let api = |status| Outcome::ApiError {
            message: "boom".into(),
            http_status: status,
        };
        assert_eq!(outcome_kind(&api(Some(500))), ErrorKind::Infra);
        assert_eq!(outcome_kind(&api(Some(503))), ErrorKind::Infra);
        assert_eq!(outcome_kind(&api(Some(429))), ErrorKind::Infra);
        assert_eq!(
            outcome_kind(&api(None)),
            ErrorKind::Infra,
            "a dropped connection"
        );
        assert_eq!(outcome_kind(&api(Some(401))), ErrorKind::Setup);
        assert_eq!(outcome_kind(&api(Some(400))), ErrorKind::Setup);
        assert_eq!(
            outcome_kind(&Outcome::MaxTurns {
                message: "m".into()
            }),
            ErrorKind::Agent,
            "max turns is the agent's, never retried"
        );
        assert_eq!(outcome_kind(&Outcome::Interrupted), ErrorKind::Interrupted);
    }

    /// Runs `yaml` (one test) with no agent adapter and `config`; returns the result and
    /// the events.
    fn run_without_agents(yaml: &str, config: RunConfig) -> (TestResult, Vec<Event>) {
        let spec = crate::spec::load_str(std::path::Path::new("t.aptitude.yaml"), yaml).unwrap();
        let runner = Runner::new(
            BTreeMap::new(),
            config,
            Arc::new(Judge::new(
                crate::assertions::judge::JudgeConfig::default(),
                [],
            )),
            crate::shared::redact::Redactor::new([]),
        );
        let (tx, mut rx) = mpsc::unbounded_channel();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mut results = rt.block_on(runner.run(&[spec], tx, CancellationToken::new()));
        let mut events = Vec::new();
        while let Ok(e) = rx.try_recv() {
            events.push(e);
        }
        (results.remove(0), events)
    }

    #[test]
    fn a_min_pass_above_the_runs_given_by_flag_is_an_error_never_a_pass() {
        let config = RunConfig {
            runs: 2,
            ..RunConfig::default()
        };
        let (t, _) = run_without_agents(
            "name: t\nprompt: p\nmin_pass: 3\nassertions:\n  - tool: Read\n    called: false\n",
            config,
        );
        assert_eq!(t.status, TestStatus::Error);
        assert_eq!(t.error_kind, Some(ErrorKind::Setup));
        assert!(
            t.error
                .as_deref()
                .unwrap()
                .contains("min_pass 3 is more than the test's 2 runs")
        );
    }

    #[test]
    fn a_reached_ceiling_skips_every_run_not_started() {
        let config = RunConfig {
            budget: BudgetLimits {
                max_cost_usd: None,
                max_tokens: Some(0),
            },
            ..RunConfig::default()
        };
        let (t, events) = run_without_agents(
            "name: t\nprompt: p\nruns: 3\nassertions:\n  - tool: Read\n    called: false\n",
            config,
        );
        assert_eq!(t.status, TestStatus::Skipped, "never passed");
        assert_eq!(
            t.skip_reason,
            Some(crate::verdict::results::SkipReason::Budget)
        );
        assert_eq!(t.runs.len(), 3);
        assert!(
            t.runs
                .iter()
                .all(|r| r.skip_reason == Some(crate::verdict::results::SkipReason::Budget))
        );
        // One event per run, then the test's.
        let per_run = events
            .iter()
            .filter(|e| matches!(e, Event::RunOfTestFinished { .. }))
            .count();
        assert_eq!(per_run, 3);
        assert!(matches!(events.last(), Some(Event::TestFinished { .. })));
        let mut results = crate::verdict::results::Results::new(vec![t], 1);
        results.summary.budget = Some(crate::verdict::results::BudgetSummary {
            skipped_runs: 3,
            ..Default::default()
        });
        assert!(!results.all_passed(), "a cut-short suite is never green");
    }

    #[test]
    fn spend_reaches_the_ceiling_by_cost_or_by_tokens() {
        let mut spend = Spend::default();
        let cost = BudgetLimits {
            max_cost_usd: Some(0.10),
            max_tokens: None,
        };
        let tokens = BudgetLimits {
            max_cost_usd: None,
            max_tokens: Some(1_000),
        };
        assert!(!spend.reached(&cost) && !spend.reached(&tokens));
        spend.add(Some(&crate::transcript::Usage {
            input_tokens: 600,
            cache_read_input_tokens: 400,
            cost_usd: Some(0.04),
            ..Default::default()
        }));
        assert!(!spend.reached(&cost));
        assert!(spend.reached(&tokens), "cache tokens count");
        spend.add(Some(&crate::transcript::Usage {
            cost_usd: Some(0.06),
            ..Default::default()
        }));
        assert!(spend.reached(&cost), "reaching the ceiling exactly stops");
        assert!(!spend.reached(&BudgetLimits::default()), "no ceiling");
    }

    #[test]
    fn a_recording_says_when_it_replaced_another_runs_transcript() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.transcript.jsonl");
        // This run starts with no recording; another run records while it runs.
        let before = file_identity(&path);
        std::fs::write(&path, "{\"other\":1}\n").unwrap();
        let (said, _) = record_atomically(&path, "{\"mine\":1}\n", before);
        assert!(
            said.ends_with(
                "(this run's transcript replaced one another run recorded while this test ran)"
            ),
            "{said}"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"mine\":1}\n");

        // A run that finds the file as it was when it started says nothing more.
        let before = file_identity(&path);
        let (said, mine) = record_atomically(&path, "{\"again\":1}\n", before);
        assert_eq!(said, display_path(&path));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"again\":1}\n");
        // The temp file was renamed, not left beside the transcript.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["t.transcript.jsonl"]);

        // Another run records the same test afterwards: this run's result says it lost.
        let mut recorded = Some(said);
        note_if_replaced(&mut recorded, &path, mine.unwrap());
        assert_eq!(recorded.as_deref(), Some(display_path(&path).as_str()));
        std::fs::write(&path, "{\"later\":1}\n").unwrap();
        note_if_replaced(&mut recorded, &path, mine.unwrap());
        assert_eq!(
            recorded.unwrap(),
            format!(
                "{} (since replaced: another run recorded this test after this one)",
                display_path(&path)
            )
        );
    }

    #[test]
    fn concurrent_recordings_never_mix() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.transcript.jsonl");
        let texts: Vec<String> = (0..8)
            .map(|i| format!("{{\"run\":{i}}}\n").repeat(20_000))
            .collect();
        std::thread::scope(|s| {
            for text in &texts {
                let path = &path;
                s.spawn(move || record_atomically(path, text, None));
            }
        });
        let kept = std::fs::read_to_string(&path).unwrap();
        assert!(
            texts.contains(&kept),
            "the file is one run's transcript, whole"
        );
    }
}
