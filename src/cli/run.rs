//! `aptitude run`: load, check what can be checked before any agent starts, run, report.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::output::{self, out};
use super::{CliError, Outcome, RunArgs};
use crate::report::live::LiveReporter;
use crate::report::terminal;
use crate::run::events::Event;
use crate::run::{RunConfig, Runner};
use crate::shared::redact::Redactor;
use crate::spec::{self, diagnostic};
use crate::verdict::results::Results;

/// How long a cancelled run may take to stop its tests before it is cut: the agents' grace
/// period (SIGTERM → SIGKILL) and then some.
const STOP_DEADLINE: Duration = Duration::from_secs(10);

pub(super) fn run(args: &RunArgs) -> Result<Outcome, CliError> {
    if args.discovery.list_tests {
        output::list_tests(&output::discover_tests(&args.paths, Some(&args.discovery))?);
        return Ok(Outcome::Passed);
    }
    let started = Instant::now();
    let specs = load_specs(args)?;
    let runtime = output::runtime()?;
    let routing = specs.iter().any(|s| s.routing_case.is_some());
    let baselines = runtime.block_on(Baselines::read(args, routing))?;
    let (mut specs, shard) = super::shards::select(specs, args, baselines.compare.as_ref());
    let redactor = output::redactor_for(&specs);

    // Everything that can be checked before an agent starts is checked now.
    // (A missing workspace is already a load error, at its line.)
    let gateway = gateway(args, &redactor);
    let replay = replay(args)?;
    let setup = args
        .agents
        .resolve(|name| std::env::var_os(name))
        .with_gateway(gateway.clone());
    let needed = super::settings::needed_agents(&specs, !args.judge.no_grade);
    let agents: BTreeMap<_, _> = needed
        .iter()
        .map(|kind| (*kind, setup.agent(*kind)))
        .collect();

    let code = runtime.block_on(async {
        let releases = install_releases(&mut specs, &setup).await?;
        let versions = check_agents(&agents, &setup, &specs).await?;
        // Each review's judge is looked up in the certificates now that its version is
        // known: under `gate: certified` an uncertified judge's verdict is advisory.
        let mut specs = specs.clone();
        super::certify::set_standings(&mut specs, &versions, None, args.judge.judge_votes)?;
        // A replay's answers come from its cassette: no agent signs in to a provider.
        if replay.is_none() {
            let problems = super::settings::missing_credentials(needed.iter().copied(), &specs);
            if !problems.is_empty() {
                return Err(CliError::NothingRun { problems });
            }
        }
        let runner_agents: BTreeMap<_, _> = agents
            .iter()
            .filter_map(|(kind, agent)| {
                versions
                    .get(kind)
                    .map(|v| (*kind, (Arc::clone(agent), v.clone())))
            })
            .collect();
        let reuse = baselines.reuse.clone();
        let mut prior = reuse.as_deref().map(crate::run::reuse::Reuse::prior_grades);
        let mut prior_claims = reuse.as_deref().map(crate::run::reuse::Reuse::prior_claims);
        if let Some(replay) = replay.as_deref() {
            prior.get_or_insert_default().extend(replay.grades.clone());
            prior_claims
                .get_or_insert_default()
                .extend(replay.claims.clone());
        }
        let judge = Arc::new(
            crate::assertions::judge::Judge::new(args.judge.config(), agents.values().cloned())
                .with_prior(prior.unwrap_or_default())
                .with_prior_claims(prior_claims.unwrap_or_default()),
        );
        let runner = Runner::new(
            runner_agents,
            RunConfig {
                gateway,
                replay,
                ..run_config(args, reuse)
            },
            judge,
            redactor.clone(),
        )
        .with_releases(releases);
        let Ran {
            tests,
            cut,
            interrupted,
            live,
        } = run_until_stopped(&runner, &specs, args, &redactor).await;
        let mut results = Results {
            shard: shard.clone(),
            ..Results::new(tests, started.elapsed().as_millis() as u64)
        };
        results.summary.budget = runner.budget_summary();
        add_figures(&mut results, &specs, &baselines.compare, args);
        let results = live.show_summary(cut, &redactor, &results).await?;
        print_tables(&results);
        let written = output::write_reports(&results, args.json.as_deref(), &args.reports);
        if args.github {
            super::publish::publish(
                &results,
                &args.github_args,
                args.json.as_ref().map(|p| p.display().to_string()),
                args.reports.html.as_ref().map(|p| p.display().to_string()),
                baselines.compare,
            )
            .await;
        }
        if cut {
            // The runner's tasks were aborted; what they started after the first sweep goes
            // now.
            crate::agent::process::kill_everything();
        }
        if interrupted.load(Ordering::SeqCst) {
            return Err(CliError::Interrupted {
                also: written.err().map(Box::new),
            });
        }
        written?;
        Ok(Outcome::of(results.all_passed()))
    });
    // Blocking work cut by a deadline (a read that never returns) must not hold the exit.
    runtime.shutdown_background();
    code
}

/// The run's tables after its summary (agents, releases, variants, routing). A renderer's panic
/// (printed by the hook) must not stop the reports and the publication after them.
fn print_tables(results: &Results) {
    let tables = crate::shared::caught::caught(|| {
        [
            terminal::render_matrix(results),
            terminal::render_versions(results),
            terminal::render_variants(results),
            terminal::render_routing(results),
        ]
    })
    .unwrap_or_default();
    for table in tables.into_iter().flatten() {
        out(&format!("\n{table}"));
    }
    for j in &results.judged {
        let [judge, _, raw, corrected] = j.row();
        out(&output::inert(&format!(
            "\njudged pass rate ({judge}, certified): {} of {} raw {raw}, corrected for the judge's errors {corrected}\n",
            j.passed, j.graded,
        )));
    }
}

/// The figures computed over the whole run: routing against the baseline (a significant
/// fall fails the run) and, when some test says `covers:`, the rules' coverage.
fn add_figures(
    results: &mut Results,
    specs: &[crate::spec::TestSpec],
    compare: &super::publish::ReadBaseline,
    args: &RunArgs,
) {
    // Routing fails a run only on a significant fall against the baseline.
    match compare {
        Some(Ok(base)) => results.compare_routing(base, args.github_args.significance),
        Some(Err(Some(e))) if !args.github && results.routing.is_some() => {
            output::err(&format!("no routing comparison with the baseline: {e}\n"));
        }
        _ => {}
    }
    // Which rules of the instruction files the tests cover, when some test says.
    if specs.iter().any(|s| !s.covers.is_empty()) {
        results.coverage = Some(super::coverage::of(specs, Some(results)));
    }
}

/// `--replay RESULTS.json`: the recorded runs whose cassettes answer each run, and their
/// grades.
///
/// # Errors
/// When the results file can not be read.
fn replay(args: &RunArgs) -> Result<Option<Arc<crate::run::replay::Replay>>, CliError> {
    let Some(path) = &args.replay else {
        return Ok(None);
    };
    let miss = if args.replay_miss == "live" {
        crate::gateway::ReplayMiss::Live
    } else {
        crate::gateway::ReplayMiss::Error
    };
    let results = crate::report::json::read(path)?;
    Ok(Some(Arc::new(crate::run::replay::Replay::new(
        &results, path, miss,
    ))))
}

/// The model gateway the agents go through (none with `--no-gateway`): the ceilings,
/// where cassettes are recorded (`<results stem>.cassettes/` beside `--json`).
fn gateway(args: &RunArgs, redactor: &Redactor) -> Option<crate::gateway::Gateway> {
    use crate::gateway::{Gateway, GatewayOptions, Limits, RecordTo};
    if args.no_gateway {
        return None;
    }
    let record = args
        .json
        .as_deref()
        .filter(|_| args.record_model)
        .map(|json| {
            let stem = json
                .file_stem()
                .map_or_else(|| "results".into(), |s| s.to_string_lossy().into_owned());
            let prefix = format!("{stem}.cassettes");
            let dir = json
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(std::path::Path::new("."))
                .join(&prefix);
            RecordTo { dir, prefix }
        });
    Some(Gateway::new(GatewayOptions {
        limits: Limits {
            max_cost_usd: args.max_cost,
            max_tokens: args.max_tokens,
        },
        record,
        redactor: Some(redactor.clone()),
    }))
}

/// The tests of `args.paths`, one per variant and agent asked for, each in `-w DIR` when
/// given; a load error stops here, before any agent runs.
pub(super) fn load_specs(args: &RunArgs) -> Result<Vec<spec::TestSpec>, CliError> {
    let bootstrap = Redactor::from_process_env([]);
    let workspace = args
        .workspace
        .as_deref()
        .map(super::settings::workspace_override)
        .transpose()?;
    let files = output::discover_tests(&args.paths, Some(&args.discovery))?.files;
    let report = spec::load_files(&files);
    output::check_load_errors(&bootstrap, &report, files.len())?;
    let choices = super::settings::merge_agent_choices(&args.agent);
    Ok(report
        .specs
        .iter()
        .flat_map(|s| s.per_variant(&args.variant))
        .flat_map(|s| s.per_agent(&choices, args.model.as_deref().filter(|m| !m.is_empty())))
        .map(|mut s| {
            if let Some(dir) = &workspace {
                s.workspace = Some(dir.clone());
            }
            s
        })
        .collect())
}

/// The earlier results a run reads: the one `--reuse` takes runs from, and the one
/// `--baseline` compares with (and balances shards by).
struct Baselines {
    reuse: Option<Arc<crate::run::reuse::Reuse>>,
    compare: super::publish::ReadBaseline,
}

impl Baselines {
    /// Reads them, each once: `github:auto` is looked for once, for the shards' balance,
    /// reuse and the comparison; `--baseline` is read only for what uses it (`--shard`,
    /// `--github`, the routing figures of a run with `routing` suites).
    ///
    /// # Errors
    /// When the `--reuse` file can not be read.
    async fn read(args: &RunArgs, routing: bool) -> Result<Self, CliError> {
        let wants_auto = [args.reuse.as_deref(), args.github_args.baseline.as_deref()]
            .into_iter()
            .flatten()
            .any(super::publish::is_auto);
        let auto = if wants_auto {
            Some(super::publish::auto_baseline().await)
        } else {
            None
        };
        let compared = routing && args.github_args.baseline.is_some();
        let compare = if args.github || args.shard.is_some() || compared {
            super::publish::read_baseline(args.github_args.baseline.as_deref(), auto.as_ref()).await
        } else {
            None
        };
        let reuse = match args.reuse.as_deref() {
            Some(path) if super::publish::is_auto(path) => match auto {
                Some(Some(found)) => {
                    let mut reuse = crate::run::reuse::Reuse::new(found.results, found.from);
                    if let Some(dir) = found.cassettes {
                        reuse = reuse.with_extracted_cassettes(dir);
                    }
                    Some(Arc::new(reuse))
                }
                _ => None,
            },
            Some(path) => {
                let baseline = crate::report::json::read(path)?;
                let dir = path
                    .parent()
                    .filter(|p| !p.as_os_str().is_empty())
                    .unwrap_or(std::path::Path::new("."))
                    .to_owned();
                Some(Arc::new(
                    crate::run::reuse::Reuse::new(baseline, path.display().to_string())
                        .with_cassettes(dir),
                ))
            }
            None => None,
        };
        Ok(Baselines { reuse, compare })
    }
}

/// Each agent's version, once every agent answered and matched its pins (`--agent-version`,
/// a test's `agent: {version}`).
///
/// # Errors
/// [`CliError::NothingRun`] with every problem when an agent is missing, does not start, or
/// is not the version pinned.
async fn check_agents(
    agents: &BTreeMap<crate::agent::AgentKind, Arc<dyn crate::agent::Agent>>,
    setup: &super::settings::AgentSetup,
    specs: &[spec::TestSpec],
) -> Result<BTreeMap<crate::agent::AgentKind, String>, CliError> {
    let checks = agents.iter().map(|(kind, agent)| {
        let agent = Arc::clone(agent);
        async move { (*kind, agent.check().await) }
    });
    let mut versions = BTreeMap::new();
    let mut problems = Vec::new();
    for (kind, checked) in futures_util::future::join_all(checks).await {
        match checked {
            Ok(info) => {
                let pins = setup
                    .pin(kind)
                    .map(|p| ("--agent-version".to_owned(), p.to_owned()))
                    .into_iter()
                    .chain(
                        specs
                            .iter()
                            .filter(|s| s.agent.kind == kind)
                            .filter_map(|s| {
                                let version = s.agent.version.clone()?;
                                Some((diagnostic::display_path(&s.file), version))
                            }),
                    );
                for (source, pin) in pins {
                    if !super::settings::version_matches(&info.version, &pin) {
                        problems.push(format!(
                            "{source}: agent `{kind}` must be version {pin}, but {} reports `{}`",
                            info.binary.display(),
                            info.version
                        ));
                    }
                }
                versions.insert(kind, info.version);
            }
            Err(e) => problems.push(e.to_string()),
        }
    }
    if !problems.is_empty() {
        problems.sort();
        problems.dedup();
        return Err(CliError::NothingRun { problems });
    }
    Ok(versions)
}

/// Installs every release the tests run on (`versions:`, `--agent NAME@VERSION`) into
/// aptitude's agent cache, each (agent, version) once, `latest` resolved once and printed;
/// each test then names its exact version. Returns each release's agent and the version it
/// reports.
///
/// # Errors
/// [`CliError::NothingRun`] with every release that could not be resolved, installed or
/// started.
async fn install_releases(
    specs: &mut [spec::TestSpec],
    setup: &super::settings::AgentSetup,
) -> Result<crate::run::Releases, CliError> {
    use crate::agent::install::{Installer, VersionSpec};
    let asked: std::collections::BTreeSet<_> = specs
        .iter()
        .filter_map(|s| Some((s.agent.kind, s.agent.release()?.clone())))
        .collect();
    let mut releases = crate::run::Releases::new();
    if asked.is_empty() {
        return Ok(releases);
    }
    let installer = Installer::from_env().map_err(|e| CliError::NothingRun {
        problems: vec![e.to_string()],
    })?;
    let mut exact = BTreeMap::new();
    let mut problems = Vec::new();
    for (kind, spec_version) in asked {
        let version = match installer.resolve(kind, &spec_version).await {
            Ok(version) => version,
            Err(e) => {
                problems.push(format!("{kind}@{spec_version}: {e}"));
                continue;
            }
        };
        if spec_version != VersionSpec::Exact(version.clone()) {
            output::err(&format!("{kind}@{spec_version} is {version}"));
        }
        exact.insert((kind, spec_version), version.clone());
        if releases.contains_key(&(kind, version.clone())) {
            continue;
        }
        let installed = match installer.install(kind, &version).await {
            Ok(installed) => installed,
            Err(e) => {
                problems.push(format!("{kind}@{version}: {e}"));
                continue;
            }
        };
        let agent = setup.agent_at(kind, installed.binary.clone(), &version);
        match agent.check().await {
            Ok(info) => {
                releases.insert((kind, version), (agent, info.version));
            }
            Err(e) => problems.push(format!("{kind}@{version}: {e}")),
        }
    }
    if !problems.is_empty() {
        return Err(CliError::NothingRun { problems });
    }
    for spec in specs.iter_mut() {
        if let Some(v) = spec.agent.release().cloned()
            && let Some(version) = exact.get(&(spec.agent.kind, v))
        {
            spec.agent.versions = vec![VersionSpec::Exact(version.clone())];
        }
    }
    Ok(releases)
}

/// The runner's settings from the command line.
fn run_config(args: &RunArgs, reuse: Option<Arc<crate::run::reuse::Reuse>>) -> RunConfig {
    RunConfig {
        jobs: args.jobs.max(1),
        keep_workspaces: args.keep_workspaces,
        default_timeout: args.timeout.unwrap_or(crate::run::DEFAULT_TIMEOUT),
        record: args.record,
        named: args.paths.clone(),
        runs: args.runs,
        retry_infra: args.retry_infra,
        retry_backoff: crate::run::DEFAULT_RETRY_BACKOFF,
        budget: crate::run::BudgetLimits {
            max_cost_usd: args.max_cost,
            max_tokens: args.max_tokens,
        },
        reuse,
        sandbox: crate::sandbox::Sandbox::new(args.agents.sandbox),
        gateway: None,
        replay: None,
    }
}

/// What [`run_until_stopped`] leaves: every test's result, whether the run was cut or
/// interrupted, and the live printer still to be told the summary.
struct Ran {
    tests: Vec<crate::verdict::results::TestResult>,
    /// The run did not stop within [`STOP_DEADLINE`] of a signal (or a second signal came)
    /// and was cut; the printer was stopped.
    cut: bool,
    /// A signal came.
    interrupted: Arc<AtomicBool>,
    live: Live,
}

/// The live printer's task and its channel.
struct Live {
    printer: tokio::task::JoinHandle<()>,
    events: tokio::sync::mpsc::UnboundedSender<Event>,
}

/// Runs every test, printing each as it finishes, until the last one ends or a signal
/// stops the run: running agents are stopped, and a run still going [`STOP_DEADLINE`]
/// after the signal (or at a second one) is cut, its unfinished tests `error`.
async fn run_until_stopped(
    runner: &Runner,
    specs: &[spec::TestSpec],
    args: &RunArgs,
    redactor: &Redactor,
) -> Ran {
    let cancel = CancellationToken::new();
    let force = CancellationToken::new();
    let interrupted = Arc::new(AtomicBool::new(false));
    spawn_signal_handlers(cancel.clone(), force.clone(), Arc::clone(&interrupted));

    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let finished = Arc::new(Mutex::new(vec![None; specs.len()]));
    let printer = tokio::spawn(output::show_events(
        rx,
        LiveReporter::new(args.verbose > 0, redactor.clone()),
        Some(specs.len()),
        Some(Arc::clone(&finished)),
    ));
    let events = tx.clone();
    let stopped = async {
        cancel.cancelled().await;
        tokio::select! {
            () = tokio::time::sleep(STOP_DEADLINE) => {}
            () = force.cancelled() => {}
        }
    };
    let mut cut = false;
    let tests = tokio::select! {
        tests = runner.run(specs, tx, cancel.clone()) => tests,
        () = stopped => {
            cut = true;
            printer.abort();
            crate::agent::process::kill_everything();
            let finished = finished.lock().map(|f| f.clone()).unwrap_or_default();
            specs
                .iter()
                .zip(finished)
                .map(|(spec, done)| {
                    done.unwrap_or_else(|| {
                        crate::run::not_run(spec, crate::verdict::results::ErrorKind::Interrupted, "interrupted: it did not stop in time and was killed")
                    })
                })
                .collect()
        }
    };
    Ran {
        tests,
        cut,
        interrupted,
        live: Live { printer, events },
    }
}

impl Live {
    /// Redacts `results` and shows their summary: through the live printer, or directly
    /// when the run was cut.
    ///
    /// # Errors
    /// When the results can not be redacted.
    async fn show_summary(
        self,
        cut: bool,
        redactor: &Redactor,
        results: &Results,
    ) -> Result<Results, CliError> {
        let Live { printer, events } = self;
        let results = match output::redacted(redactor, results) {
            Ok(results) => results,
            Err(e) => {
                drop(events);
                if !cut {
                    let _ = printer.await;
                }
                return Err(e);
            }
        };
        if cut {
            out(&terminal::render_summary(&results.summary));
        } else {
            let _ = events.send(Event::RunFinished {
                summary: Box::new(results.summary.clone()),
            });
            drop(events);
            let _ = printer.await;
        }
        Ok(results)
    }
}

/// Ctrl-C, SIGTERM or SIGHUP (a closed terminal, a cancelled CI job) cancels the run:
/// running agents are stopped the same way a timeout stops them, and tests not yet started
/// are not started.
pub(super) fn spawn_signal_handler(cancel: CancellationToken, interrupted: Arc<AtomicBool>) {
    spawn_signal_handlers(cancel, CancellationToken::new(), interrupted);
}

/// [`spawn_signal_handler`], where a second signal fires `force`: the run is cut at once.
fn spawn_signal_handlers(
    cancel: CancellationToken,
    force: CancellationToken,
    interrupted: Arc<AtomicBool>,
) {
    use tokio::signal::unix::{SignalKind, signal};
    tokio::spawn(async move {
        let mut streams: Vec<tokio::signal::unix::Signal> = [
            SignalKind::interrupt(),
            SignalKind::terminate(),
            SignalKind::hangup(),
        ]
        .into_iter()
        .filter_map(|kind| signal(kind).ok())
        .collect();
        for token in [&cancel, &force] {
            if streams.is_empty() {
                return;
            }
            let any =
                futures_util::future::select_all(streams.iter_mut().map(|s| Box::pin(s.recv())));
            let _ = any.await;
            interrupted.store(true, Ordering::SeqCst);
            token.cancel();
        }
    });
}
