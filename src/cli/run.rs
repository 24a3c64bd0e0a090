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
    let started = Instant::now();
    let bootstrap = Redactor::from_process_env([]);
    let files = output::discover_tests(&args.paths)?;
    let report = spec::load_files(&files);
    output::check_load_errors(&bootstrap, &report, files.len())?;
    let specs: Vec<_> = report
        .specs
        .iter()
        .flat_map(|s| s.per_variant(&args.variant))
        .flat_map(|s| s.per_agent(&args.agent, args.model.as_deref().filter(|m| !m.is_empty())))
        .collect();
    let runtime = output::runtime()?;
    // `github:auto` is looked for once, for the shards' balance, reuse and the comparison.
    let wants_auto = [args.reuse.as_deref(), args.github_args.baseline.as_deref()]
        .into_iter()
        .flatten()
        .any(super::publish::is_auto);
    let auto = if wants_auto {
        Some(runtime.block_on(super::publish::auto_baseline()))
    } else {
        None
    };
    // `--baseline`, read once for what uses it: the shards' balance and the comparison
    // published on GitHub.
    let baseline = if args.github || args.shard.is_some() {
        runtime.block_on(super::publish::read_baseline(
            args.github_args.baseline.as_deref(),
            auto.as_ref(),
        ))
    } else {
        None
    };
    let (specs, shard) = super::shards::select(specs, args, baseline.as_ref());
    let redactor = output::redactor_for(&specs);
    let reuse = match &args.reuse {
        Some(path) if super::publish::is_auto(path) => None,
        Some(path) => {
            let baseline = crate::report::json::read(path)?;
            Some(Arc::new(crate::run::reuse::Reuse::new(
                baseline,
                path.display().to_string(),
            )))
        }
        None => None,
    };

    // Everything that can be checked before an agent starts is checked now.
    // (A missing workspace is already a load error, at its line.)
    let setup = args.agents.resolve(|name| std::env::var_os(name));
    let needed = super::settings::needed_agents(&specs, !args.judge.no_grade);
    let agents: BTreeMap<_, _> = needed
        .iter()
        .map(|kind| (*kind, setup.agent(*kind)))
        .collect();

    let code = runtime.block_on(async {
        let reuse = match (&auto, args.reuse.as_deref()) {
            (Some(Some((baseline, from))), Some(path)) if super::publish::is_auto(path) => Some(
                Arc::new(crate::run::reuse::Reuse::new(baseline.clone(), from.clone())),
            ),
            _ => reuse,
        };
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
                        .chain(specs.iter().filter(|s| s.agent.kind == kind).filter_map(|s| {
                            let version = s.agent.version.clone()?;
                            Some((diagnostic::display_path(&s.file), version))
                        }));
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
        let runner_agents: BTreeMap<_, _> = agents
            .iter()
            .filter_map(|(kind, agent)| {
                versions
                    .get(kind)
                    .map(|v| (*kind, (Arc::clone(agent), v.clone())))
            })
            .collect();
        let config = RunConfig {
            jobs: args.jobs.max(1),
            keep_workspaces: args.keep_workspaces,
            default_timeout: args.timeout.unwrap_or(crate::run::DEFAULT_TIMEOUT),
            record: args.record,
            runs: args.runs,
            retry_infra: args.retry_infra,
            retry_backoff: crate::run::DEFAULT_RETRY_BACKOFF,
            budget: crate::run::BudgetLimits {
                max_cost_usd: args.max_cost,
                max_tokens: args.max_tokens,
            },
            reuse: reuse.clone(),
        };
        let prior = reuse.as_deref().map(crate::run::reuse::Reuse::prior_grades);
        let prior_claims = reuse.as_deref().map(crate::run::reuse::Reuse::prior_claims);
        let judge = Arc::new(
            crate::assertions::judge::Judge::new(args.judge.config(), agents.values().cloned())
                .with_prior(prior.unwrap_or_default())
                .with_prior_claims(prior_claims.unwrap_or_default()),
        );
        let runner = Runner::new(runner_agents, config, judge, redactor.clone());

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
        let summary_tx = tx.clone();
        let stopped = async {
            // Cancelled tests stop within the agents' grace period; a run still going well
            // after that (or a second signal) is cut, so that a signal always ends it.
            cancel.cancelled().await;
            tokio::select! {
                () = tokio::time::sleep(STOP_DEADLINE) => {}
                () = force.cancelled() => {}
            }
        };
        let mut cut = false;
        let tests = tokio::select! {
            tests = runner.run(&specs, tx, cancel.clone()) => tests,
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
        let mut results = Results {
            shard: shard.clone(),
            ..Results::new(tests, started.elapsed().as_millis() as u64)
        };
        results.summary.budget = runner.budget_summary();
        let results = match output::redacted(&redactor, &results) {
            Ok(results) => results,
            Err(e) => {
                drop(summary_tx);
                if !cut {
                    let _ = printer.await;
                }
                return Err(e);
            }
        };
        if cut {
            out(&terminal::render_summary(&results.summary));
        } else {
            let _ = summary_tx.send(Event::RunFinished {
                summary: Box::new(results.summary.clone()),
            });
            drop(summary_tx);
            let _ = printer.await;
        }
        if let Some(matrix) = terminal::render_matrix(&results) {
            out(&format!("\n{matrix}"));
        }
        if let Some(variants) = terminal::render_variants(&results) {
            out(&format!("\n{variants}"));
        }
        let written = output::write_reports(&results, args.json.as_deref(), &args.reports);
        if args.github {
            super::publish::publish(
                &results,
                &args.github_args,
                args.json.as_ref().map(|p| p.display().to_string()),
                args.reports.html.as_ref().map(|p| p.display().to_string()),
                baseline,
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
