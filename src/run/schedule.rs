//! The scheduler: every run of every test on a `--jobs` slot, in file order; a repeated
//! test decided when its last run ends ([`crate::verdict::repeat`]); infra errors retried
//! (`--retry-infra`); the spend ceiling; unchanged runs reused (`--reuse`).

use std::collections::BTreeMap;
use std::sync::Arc;

use tokio::sync::{Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

use super::events::Event;
use super::one::run_one;
use super::record::{Written, note_if_replaced};
use super::reuse::{fingerprint_of_copy, reuse_run};
use super::{BudgetLimits, MAX_RETRY_BACKOFF, RunConfig, TestContext, not_run};
use crate::agent::Agent;
use crate::assertions::judge::Judge;
use crate::spec::TestSpec;
use crate::verdict::results::{ErrorKind, TestResult};

/// What the finished runs spent, against the limits.
#[derive(Debug, Default)]
pub(super) struct Spend {
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
    fn with_gateway(&self, gateway: Option<&crate::gateway::Gateway>) -> Spend {
        let (tokens, cost_usd) = gateway.map_or((0, 0.0), crate::gateway::Gateway::spent);
        Spend {
            cost_usd: self.cost_usd.max(cost_usd),
            tokens: self.tokens.max(tokens),
            skipped_runs: self.skipped_runs,
        }
    }
}

/// The agents of chosen releases, by agent and exact version, each with the version it
/// reports.
pub type Releases = BTreeMap<(crate::agent::AgentKind, String), (Arc<dyn Agent>, String)>;

/// Runs tests with agents chosen by each test's `agent:` name.
pub struct Runner {
    agents: BTreeMap<crate::agent::AgentKind, (Arc<dyn Agent>, String)>,
    releases: Releases,
    config: RunConfig,
    judge: Arc<Judge>,
    redactor: crate::shared::redact::Redactor,
    spend: Arc<std::sync::Mutex<Spend>>,
}

/// One test's runs as they finish, until the last one decides it.
#[derive(Clone)]
pub(super) struct Slots {
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
pub(super) type Board = Arc<std::sync::Mutex<Vec<Slots>>>;

impl Runner {
    /// Runs the tests on a chosen release (`versions:`, `--agent NAME@VERSION`, exact
    /// once resolved) with `releases`' agents instead of the agent found as usual.
    pub fn with_releases(mut self, releases: Releases) -> Self {
        self.releases = releases;
        self
    }

    /// The agent and its reported version a test runs on: its release's, when it names one.
    fn agent_of(&self, spec: &crate::spec::TestSpec) -> Option<(Arc<dyn Agent>, String)> {
        match spec.agent.release() {
            Some(crate::spec::agent_version::VersionSpec::Exact(v)) => {
                self.releases.get(&(spec.agent.kind, v.clone())).cloned()
            }
            // Not resolved: no agent, and the run says so rather than using another one.
            Some(_) => None,
            None => self.agents.get(&spec.agent.kind).cloned(),
        }
    }

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
            releases: Releases::new(),
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
        let plan = Plan::of(specs, self.config.runs);
        let board = plan.board();
        for (index, spec) in specs.iter().enumerate() {
            let (runs, min_pass) = plan.runs[index];
            if min_pass > runs {
                // `--runs` made a test's runs fewer than its `min_pass`: it can never pass.
                let why = format!(
                    "min_pass {min_pass} is more than the test's {runs} runs (--runs): it can not pass"
                );
                for &run in &plan.numbers[index] {
                    let r = not_run(spec, ErrorKind::Setup, &why);
                    complete(&board, &events, index, run, r);
                }
                continue;
            }
            for &run in &plan.numbers[index] {
                let permit = tokio::select! {
                    permit = Arc::clone(&slots).acquire_owned() => permit.ok(),
                    () = cancel.cancelled() => None,
                };
                let Some(permit) = permit else {
                    let why = "interrupted before it started";
                    complete(
                        &board,
                        &events,
                        index,
                        run,
                        not_run(spec, ErrorKind::Interrupted, why),
                    );
                    continue;
                };
                if self.over_budget() {
                    let r = crate::verdict::repeat::skipped_for_budget(not_run(
                        spec,
                        ErrorKind::Setup,
                        "",
                    ));
                    complete(&board, &events, index, run, r);
                    continue;
                }
                let task = RunTask {
                    spec: spec.clone(),
                    index,
                    run,
                    runs,
                    agent: self.agent_of(spec),
                    config: RunConfig {
                        record: self.config.record && run == 1,
                        ..self.config.clone()
                    },
                    judge: Arc::clone(&self.judge),
                    redactor: self.redactor.clone(),
                    events: events.clone(),
                    cancel: cancel.clone(),
                    board: Arc::clone(&board),
                    spend: Arc::clone(&self.spend),
                };
                tasks.spawn(async move {
                    let written = task.run().await;
                    drop(permit);
                    written
                });
            }
        }
        let mut written = Vec::new();
        while let Some(joined) = tasks.join_next().await {
            if let Ok((index, w)) = joined {
                written.extend(w.map(|w| (index, w)));
            }
        }
        decided(board, written, specs)
    }

    /// Whether the spend ceiling is reached; counts the run it skips when it is.
    fn over_budget(&self) -> bool {
        let mut spend = self.spend.lock().unwrap_or_else(|e| e.into_inner());
        let reached = spend
            .with_gateway(self.config.gateway.as_ref())
            .reached(&self.config.budget);
        if reached {
            spend.skipped_runs += 1;
        }
        reached
    }
}

/// Each test's runs (N) and `min_pass` (k), and the numbers of the runs this run of
/// aptitude makes (all N, or a shard's part).
struct Plan {
    runs: Vec<(u32, u32)>,
    numbers: Vec<Vec<u32>>,
}

impl Plan {
    fn of(specs: &[TestSpec], default_runs: u32) -> Plan {
        let runs: Vec<(u32, u32)> = specs
            .iter()
            .map(|s| {
                let runs = s.runs_or(default_runs);
                // A routing prompt chose as expected when more than half its runs did, as
                // the routing figures count it (`prompts_triggered`).
                let k = if s.routing_case.is_some() {
                    runs / 2 + 1
                } else {
                    runs
                };
                (runs, s.min_pass.unwrap_or(k))
            })
            .collect();
        let numbers = specs
            .iter()
            .zip(&runs)
            .map(|(s, (runs, _))| {
                s.shard_runs
                    .clone()
                    .unwrap_or_else(|| (1..=*runs).collect())
            })
            .collect();
        Plan { runs, numbers }
    }

    /// An empty slot for every run planned.
    fn board(&self) -> Board {
        Arc::new(std::sync::Mutex::new(
            self.runs
                .iter()
                .zip(&self.numbers)
                .map(|((runs, min_pass), numbers)| Slots {
                    numbers: numbers.clone(),
                    of: *runs,
                    runs: vec![None; numbers.len()],
                    min_pass: *min_pass,
                    started: false,
                    done: None,
                })
                .collect(),
        ))
    }
}

/// One run of one test, as its task owns it.
struct RunTask {
    spec: TestSpec,
    index: usize,
    /// The run's number, 1-based.
    run: u32,
    /// The test's runs in all.
    runs: u32,
    agent: Option<(Arc<dyn Agent>, String)>,
    config: RunConfig,
    judge: Arc<Judge>,
    redactor: crate::shared::redact::Redactor,
    events: mpsc::UnboundedSender<Event>,
    cancel: CancellationToken,
    board: Board,
    spend: Arc<std::sync::Mutex<Spend>>,
}

impl RunTask {
    /// Runs (or reuses) the run, counts its spend before its slot is freed (so the next run
    /// to start sees it) and puts its result on the board. Returns the test's index and
    /// the transcript it recorded, if any.
    async fn run(self) -> (usize, Option<Written>) {
        let (index, run) = (self.index, self.run);
        let (result, written) = match &self.agent {
            None => {
                let why = format!(
                    "the `{}` agent was not set up for this run",
                    self.spec.agent.kind
                );
                (not_run(&self.spec, ErrorKind::Setup, &why), None)
            }
            Some((agent, version)) => self.run_agent(agent.as_ref(), version).await,
        };
        if let Ok(mut spend) = self.spend.lock() {
            spend.add(result.usage.as_ref());
            for a in &result.attempts {
                spend.add(a.usage.as_ref());
            }
        }
        complete(&self.board, &self.events, index, run, result);
        (index, written)
    }

    /// The run by `agent`: says the test started (on its first run), reports tool calls
    /// live, and takes the run from the baseline when `--reuse` allows.
    async fn run_agent(&self, agent: &dyn Agent, version: &str) -> (TestResult, Option<Written>) {
        let (index, run) = (self.index, self.run);
        let first = self
            .board
            .lock()
            .map(|mut b| !std::mem::replace(&mut b[index].started, true))
            .unwrap_or(false);
        if first {
            let _ = self.events.send(Event::TestStarted {
                index,
                name: self.spec.name.clone(),
            });
        }
        let live = |call: &crate::transcript::ToolCall| {
            let _ = self.events.send(Event::ToolCall {
                index,
                run,
                call: Box::new(call.clone()),
            });
        };
        // `run --replay`: the run's cassette, or why it has none.
        let (replay, no_cassette) = match self
            .config
            .replay
            .as_deref()
            .map(|r| r.replaying(&self.spec, run))
        {
            Some(Ok(r)) => (Some(r), None),
            Some(Err(why)) => (None, Some(why)),
            None => (None, None),
        };
        let ctx = TestContext {
            agent,
            agent_version: version,
            config: &self.config,
            judge: &self.judge,
            redactor: &self.redactor,
            cancel: &self.cancel,
            on_tool_call: Some(&live),
            replay,
        };
        match (no_cassette, self.config.reuse.as_deref()) {
            (Some(why), _) => (
                not_run(&self.spec, ErrorKind::Setup, &why.to_string()),
                None,
            ),
            (None, None) => run_with_retries(&self.spec, &ctx).await,
            (None, Some(reuse)) => run_or_reuse(&self.spec, &ctx, reuse, run, self.runs).await,
        }
    }
}

/// Every test's decided result, in input order, once every task ended; a recording another
/// run replaced after this one wrote it is said not to be this run's.
fn decided(board: Board, written: Vec<(usize, Written)>, specs: &[TestSpec]) -> Vec<TestResult> {
    let mut board = match Arc::try_unwrap(board) {
        Ok(b) => b.into_inner().unwrap_or_else(|e| e.into_inner()),
        Err(shared) => shared.lock().map(|b| b.clone()).unwrap_or_default(),
    };
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

/// Puts run `run` (1-based) of test `index` in its slot; when it was the test's last run,
/// decides the test and says so.
pub(super) fn complete(
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
pub(super) async fn run_with_retries(
    spec: &TestSpec,
    ctx: &TestContext<'_>,
) -> (TestResult, Option<Written>) {
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
pub(super) async fn run_or_reuse(
    spec: &TestSpec,
    ctx: &TestContext<'_>,
    reuse: &crate::run::reuse::Reuse,
    run: u32,
    runs: u32,
) -> (TestResult, Option<Written>) {
    let why = match reuse.candidate(spec, run, runs) {
        Err(why) => why.to_string(),
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
                            Err(why) => why.to_string(),
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
    replay: crate::gateway::Replaying,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::results::TestStatus;

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
}
