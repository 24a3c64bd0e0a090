//! `aptitude analyze`: tests evaluated against recorded transcripts (reviews graded too).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use tokio_util::sync::CancellationToken;

use super::output::{self, err, error_line, out};
use super::{AnalyzeArgs, EXIT_FAILED, EXIT_INVALID, EXIT_OK};
use crate::agent::Agent;
use crate::agent::claude::{ClaudeAdapter, PermissionMode};
use crate::redact::Redactor;
use crate::report::terminal;
use crate::results::Results;
use crate::spec::{self, AssertionKind, diagnostic, discover};
use crate::transcript;

/// The transcript recorded beside a test file: `x.aptitude.yaml` → `x.transcript.jsonl`
/// (or `x.transcript.json`).
pub fn recorded_transcript(test_file: &Path) -> Option<PathBuf> {
    let name = test_file.file_name()?.to_str()?;
    let stem = name
        .strip_suffix(".aptitude.yaml")
        .or_else(|| name.strip_suffix(".aptitude.yml"))?;
    ["jsonl", "json"]
        .iter()
        .map(|ext| test_file.with_file_name(format!("{stem}.transcript.{ext}")))
        .find(|p| p.is_file())
}

pub(super) fn analyze(args: &AnalyzeArgs) -> u8 {
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
        match discover::discover(&args.paths) {
            Ok(files) if !files.is_empty() => files,
            Ok(_) => {
                err(&error_line(
                    "no test files (*.aptitude.yaml, *.aptitude.yml) found",
                ));
                return EXIT_INVALID;
            }
            Err(e) => {
                err(&error_line(&e.to_string()));
                return EXIT_INVALID;
            }
        }
    };
    let report = spec::load_files(&test_files);
    if output::report_load_errors(&bootstrap, &report, test_files.len()) {
        return EXIT_INVALID;
    }
    let redactor = output::redactor_for(&report.specs);
    let mut pairs = Vec::new();
    let mut missing = Vec::new();
    for spec in report.specs {
        let transcript = if explicit {
            Some(args.paths[1].clone())
        } else {
            recorded_transcript(&spec.file)
        };
        match transcript {
            Some(t) => pairs.push((spec, t)),
            None => missing.push(diagnostic::display_path(&spec.file)),
        }
    }
    if !missing.is_empty() {
        for file in &missing {
            err(&error_line(&format!(
                "no recorded transcript for {file} (expected {} beside it)",
                file.replace(".aptitude.yaml", ".transcript.jsonl")
                    .replace(".aptitude.yml", ".transcript.jsonl")
            )));
        }
        err("hint: pass one explicitly: aptitude analyze TEST_FILE TRANSCRIPT\n");
        return EXIT_INVALID;
    }
    let mut parsed = Vec::new();
    for (spec, path) in pairs {
        let test_started = Instant::now();
        let transcript = match transcript::parse_file(&path) {
            Ok(t) => t,
            Err(e) => {
                err(&error_line(&e.to_string()));
                return EXIT_INVALID;
            }
        };
        output::report_transcript_warnings(&redactor, &path, &transcript);
        parsed.push((spec, transcript, test_started));
    }
    let needs_judge = parsed.iter().any(|(spec, _, _)| {
        spec.assertions
            .iter()
            .any(|a| matches!(a.kind, AssertionKind::Review(_)))
    });
    let Some(runtime) = output::runtime() else {
        return EXIT_INVALID;
    };
    let claude: Arc<dyn Agent> = Arc::new(ClaudeAdapter::new(
        args.claude_bin.clone(),
        PermissionMode::Bypass,
    ));
    let mut graders: BTreeMap<String, Arc<dyn Agent>> = BTreeMap::new();
    graders.insert("claude".to_owned(), claude);
    let judge = crate::judge::Judge::new(args.judge.config(), graders);
    let cancel = CancellationToken::new();
    let tests: Vec<_> = runtime.block_on(async {
        if needs_judge {
            super::run::spawn_signal_handler(cancel.clone(), Arc::new(AtomicBool::new(false)));
        }
        let graded = parsed.into_iter().map(|(spec, transcript, test_started)| {
            let (judge, cancel) = (&judge, &cancel);
            async move {
                let reviews = if crate::runner::outcome_error(&transcript.outcome).is_some() {
                    crate::runner::not_graded(&spec, "not graded: the agent run failed")
                } else {
                    crate::runner::grade_reviews(&spec, judge, &transcript, cancel).await
                };
                let elapsed = test_started.elapsed().as_millis() as u64;
                crate::runner::evaluate_transcript(&spec, transcript, &reviews, elapsed)
            }
        });
        futures_util::future::join_all(graded).await
    });
    let Some(results) = super::output::redacted_or_report(
        &redactor,
        &Results::new(tests, started.elapsed().as_millis() as u64),
    ) else {
        return EXIT_INVALID;
    };
    out(&terminal::render_results(&results));
    let written = output::write_reports(&results, args.json.as_deref(), &args.reports);
    if !written {
        EXIT_INVALID
    } else if results.all_passed() {
        EXIT_OK
    } else {
        EXIT_FAILED
    }
}
