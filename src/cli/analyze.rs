//! `aptitude analyze`: tests evaluated against recorded transcripts (reviews graded too).

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use tokio_util::sync::CancellationToken;

use super::output;
use super::{AnalyzeArgs, CliError, Outcome};
use crate::report::live::LiveReporter;
use crate::run::events::Event;
use crate::shared::redact::Redactor;
use crate::spec::{self, AssertionKind, diagnostic, discover};
use crate::transcript;
use crate::verdict::results::Results;

pub(super) fn analyze(args: &AnalyzeArgs) -> Result<Outcome, CliError> {
    let started = Instant::now();
    let bootstrap = Redactor::from_process_env([]);
    // `TEST TRANSCRIPT`: the second path is a file that is not a test file.
    let explicit = args.paths.len() == 2
        && args.paths[1].is_file()
        && !discover::is_test_file(&args.paths[1])
        && args.paths[0].is_file();
    let test_files = if explicit {
        vec![args.paths[0].clone()]
    } else {
        output::discover_tests(&args.paths, None)?.files
    };
    // A recorded transcript needs no workspace: a transcript from CI is analyzed without
    // the fixture it ran in.
    let report = spec::load_files_with(&test_files, spec::LoadOptions { check_files: false });
    output::check_load_errors(&bootstrap, &report, test_files.len())?;
    let redactor = output::redactor_for(&report.specs);
    let mut pairs = Vec::new();
    let mut missing = Vec::new();
    for spec in report.specs {
        let transcript = if explicit {
            Some(args.paths[1].clone())
        } else {
            discover::recorded_transcript(&spec.file)
        };
        match transcript {
            Some(t) => pairs.push((spec, t)),
            None => missing.push((
                diagnostic::display_path(&spec.file),
                discover::transcript_path(&spec.file).map_or_else(
                    || "x.transcript.jsonl".to_owned(),
                    |p| diagnostic::display_path(&p),
                ),
            )),
        }
    }
    if !missing.is_empty() {
        return Err(CliError::MissingTranscripts { missing });
    }
    let mut parsed = Vec::new();
    for (mut spec, path) in pairs {
        let test_started = Instant::now();
        let mut transcript = transcript::parse_file(&path)?;
        if let Some(asked) = args.agent {
            check_written_by(&path, &transcript, asked)?;
            spec.agent.kind = asked;
        }
        let servers = crate::agent::mcp::with_mocks(&spec.mcp_servers, &spec.mcp_mocks);
        crate::agent::name_recorded_mcp_calls(&mut transcript, &servers);
        output::report_transcript_warnings(&redactor, &path, &transcript);
        parsed.push((spec, transcript, test_started));
    }
    let needs_judge = parsed.iter().any(|(spec, _, _)| {
        spec.assertions
            .iter()
            .any(|a| matches!(a.kind, AssertionKind::Review(_) | AssertionKind::Claims))
    });
    let runtime = output::runtime()?;
    // Graders: each review's agent, else its test's.
    let setup = args.agents.resolve(|name| std::env::var_os(name));
    let specs: Vec<_> = parsed.iter().map(|(spec, _, _)| spec.clone()).collect();
    let graders = super::settings::needed_agents(&specs, true)
        .into_iter()
        .map(|kind| setup.agent(kind));
    let judge = crate::assertions::judge::Judge::new(args.judge.config(), graders);
    let cancel = CancellationToken::new();
    let tests: Vec<_> = runtime.block_on(async {
        if needs_judge {
            super::run::spawn_signal_handler(cancel.clone(), Arc::new(AtomicBool::new(false)));
        }
        let graded = parsed.into_iter().map(|(spec, transcript, test_started)| {
            let (judge, cancel) = (&judge, &cancel);
            async move {
                let mut result =
                    crate::run::evaluate_transcript(&spec, transcript, judge, cancel, test_started)
                        .await;
                // `-a` says which agent wrote it; a transcript alone does not.
                if args.agent.is_some() {
                    result.agent_id = Some(spec.agent.kind);
                }
                result
            }
        });
        futures_util::future::join_all(graded).await
    });
    let results = output::redacted(
        &redactor,
        &Results::new(tests, started.elapsed().as_millis() as u64),
    )?;
    // The results are shown through the same events and reporter as a live run's.
    runtime.block_on(async {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let shown = tokio::spawn(output::show_events(
            rx,
            LiveReporter::new(false, redactor.clone()),
            None,
            None,
        ));
        let _ = tx.send(Event::RunStarted {
            names: results.tests.iter().map(|t| t.name.clone()).collect(),
        });
        for (index, result) in results.tests.iter().enumerate() {
            let _ = tx.send(Event::TestFinished {
                index,
                result: Box::new(result.clone()),
            });
        }
        let _ = tx.send(Event::RunFinished {
            summary: Box::new(results.summary.clone()),
        });
        drop(tx);
        let _ = shown.await;
    });
    output::write_reports(&results, args.json.as_deref(), &args.reports)?;
    Ok(Outcome::of(results.all_passed()))
}

/// `-a AGENT`: the transcript must be in a format `asked` writes. A transcript read as
/// another agent's would name its tools in that agent's words, and `-a` must not let it
/// pass as something it is not.
///
/// # Errors
/// [`CliError::WrongAgent`] naming both agents.
fn check_written_by(
    path: &std::path::Path,
    transcript: &transcript::Transcript,
    asked: crate::agent::AgentKind,
) -> Result<(), CliError> {
    let written_by = transcript.format.agent();
    if written_by == Some(asked) {
        return Ok(());
    }
    Err(CliError::WrongAgent {
        transcript: path.to_owned(),
        format: transcript.format.name(),
        written_by,
        asked,
    })
}
