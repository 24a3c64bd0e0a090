//! `aptitude run`: load, check what can be checked before any agent starts, run, report.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::output::{self, err, error_line, out};
use super::{EXIT_FAILED, EXIT_INTERRUPTED, EXIT_INVALID, EXIT_OK, RunArgs};
use crate::redact::Redactor;
use crate::report::terminal;
use crate::results::{Results, TestResult};
use crate::runner::{Event, RunConfig, Runner};
use crate::spec::{self, diagnostic};

/// How long a cancelled run may take to stop its tests before it is cut: the agents' grace
/// period (SIGTERM → SIGKILL) and then some.
const STOP_DEADLINE: Duration = Duration::from_secs(10);

pub(super) fn run(args: &RunArgs) -> u8 {
    let started = Instant::now();
    let bootstrap = Redactor::from_process_env([]);
    let Some(files) = output::discover_tests(&args.paths) else {
        return EXIT_INVALID;
    };
    let report = spec::load_files(&files);
    if output::report_load_errors(&bootstrap, &report, files.len()) {
        return EXIT_INVALID;
    }
    let specs: Vec<_> = report
        .specs
        .iter()
        .flat_map(|s| s.per_agent(&args.agent, args.model.as_deref().filter(|m| !m.is_empty())))
        .collect();
    let (specs, shard) = super::shards::select(specs, args);
    let redactor = output::redactor_for(&specs);

    // Everything that can be checked before an agent starts is checked now.
    // (A missing workspace is already a load error, at its line.)
    let setup = args.agents.resolve(|name| std::env::var_os(name));
    let needed = super::settings::needed_agents(&specs, !args.judge.no_grade);
    let agents: BTreeMap<_, _> = needed
        .iter()
        .map(|kind| (*kind, setup.agent(*kind)))
        .collect();

    let Some(runtime) = output::runtime() else {
        return EXIT_INVALID;
    };
    let code = runtime.block_on(async {
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
            for p in &problems {
                err(&error_line(p));
            }
            err(&error_line("nothing was run"));
            return EXIT_INVALID;
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
            default_timeout: args.timeout.unwrap_or(crate::runner::DEFAULT_TIMEOUT),
            record: args.record,
        };
        let judge = Arc::new(crate::judge::Judge::new(
            args.judge.config(),
            agents.values().cloned(),
        ));
        let runner = Runner::new(runner_agents, config, judge, redactor.clone());

        let cancel = CancellationToken::new();
        let force = CancellationToken::new();
        let interrupted = Arc::new(AtomicBool::new(false));
        spawn_signal_handlers(cancel.clone(), force.clone(), Arc::clone(&interrupted));

        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let names: Vec<String> = specs.iter().map(|s| s.name.clone()).collect();
        let finished = Arc::new(Mutex::new(vec![None; specs.len()]));
        let printer = tokio::spawn(print_events(
            rx,
            names,
            args.verbose,
            redactor.clone(),
            Arc::clone(&finished),
        ));
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
            tests = runner.run(&specs, tx, cancel.clone()) => {
                let _ = printer.await;
                tests
            }
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
                            crate::runner::not_run(spec, "interrupted: it did not stop in time and was killed")
                        })
                    })
                    .collect()
            }
        };
        let Some(results) = super::output::redacted_or_report(
            &redactor,
            &Results {
                shard: shard.clone(),
                ..Results::new(tests, started.elapsed().as_millis() as u64)
            },
        ) else {
            return EXIT_INVALID;
        };
        out(&terminal::render_summary(&results.summary));
        let written = output::write_reports(&results, args.json.as_deref(), &args.reports);
        if args.github {
            super::publish::publish(
                &results,
                &args.github_args,
                args.json.as_ref().map(|p| p.display().to_string()),
                args.reports.html.as_ref().map(|p| p.display().to_string()),
            )
            .await;
        }
        if cut {
            // The runner's tasks were aborted; what they started after the first sweep goes
            // now.
            crate::agent::process::kill_everything();
        }
        if interrupted.load(Ordering::SeqCst) {
            err(&error_line(
                "interrupted: running agents were stopped; results cover the tests that finished",
            ));
            EXIT_INTERRUPTED
        } else if !written {
            EXIT_INVALID
        } else if results.all_passed() {
            EXIT_OK
        } else {
            EXIT_FAILED
        }
    });
    // Blocking work cut by a deadline (a read that never returns) must not hold the exit.
    runtime.shutdown_background();
    code
}

/// Prints each test's block as it finishes. On a terminal a progress line shows what is
/// running; elsewhere (CI logs) only plain lines are written. `-v` adds each tool call as
/// it happens.
async fn print_events(
    mut rx: tokio::sync::mpsc::UnboundedReceiver<Event>,
    names: Vec<String>,
    verbose: bool,
    redactor: Redactor,
    finished: Arc<Mutex<Vec<Option<TestResult>>>>,
) {
    let total = names.len() as u64;
    let progress = std::io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new(total);
        let style = indicatif::ProgressStyle::with_template(
            "{spinner} {pos}/{len} done · {elapsed} · {wide_msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner());
        bar.set_style(style);
        bar.enable_steady_tick(Duration::from_millis(120));
        bar
    });
    let mut running: Vec<usize> = Vec::new();
    let show = |progress: &Option<indicatif::ProgressBar>, text: &str| match progress {
        Some(bar) => bar.suspend(|| out(text)),
        None => out(text),
    };
    while let Some(event) = rx.recv().await {
        match event {
            Event::Started { index, .. } => running.push(index),
            Event::ToolCall { index, call } if verbose => {
                let line = format!(
                    "  ↳ {}: {}\n",
                    names.get(index).map_or("?", String::as_str),
                    crate::assertions::describe_call(0, &call).trim_start_matches("#0 ")
                );
                show(&progress, &redactor.redact(&line));
            }
            Event::ToolCall { .. } => {}
            Event::Finished { index, result } => {
                running.retain(|i| *i != index);
                if let Ok(mut finished) = finished.lock()
                    && let Some(slot) = finished.get_mut(index)
                {
                    *slot = Some((*result).clone());
                }
                show(&progress, &(output::test_block(&redactor, &result) + "\n"));
                if let Some(bar) = &progress {
                    bar.inc(1);
                }
            }
        }
        if let Some(bar) = &progress {
            let now: Vec<&str> = running
                .iter()
                .filter_map(|i| names.get(*i).map(String::as_str))
                .collect();
            bar.set_message(if now.is_empty() {
                String::new()
            } else {
                format!("running: {}", now.join(", "))
            });
        }
    }
    if let Some(bar) = progress {
        bar.finish_and_clear();
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
