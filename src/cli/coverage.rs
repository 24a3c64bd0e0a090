//! `aptitude coverage`: which rules of the suite's instruction files are tested
//! ([`crate::verdict::coverage`]), from the test files alone or with a run's results.

use std::path::{Path, PathBuf};

use clap::Args;

use super::error::CliError;
use super::output::{self, out};
use super::{DiscoveryArgs, Outcome};
use crate::shared::redact::Redactor;
use crate::spec::{self, TestSpec};
use crate::verdict::coverage::{self, Coverage, Workspace};

/// `aptitude coverage`.
#[derive(Debug, Args)]
pub struct CoverageArgs {
    /// Test files or directories (searched for *.aptitude.yaml / *.aptitude.yml).
    #[arg(default_value = ".")]
    pub paths: Vec<PathBuf>,
    /// A results JSON of a run of these tests: each rule's pass rate, and the effect of
    /// the rules a variant removes.
    #[arg(long, value_name = "RESULTS.json")]
    pub results: Option<PathBuf>,
    /// Write the coverage as JSON (`rules`, `files`, `totals`).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write the coverage as Markdown.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Which files are tests.
    #[command(flatten)]
    pub discovery: DiscoveryArgs,
}

/// The workspaces of `specs`, each once however its path is spelt, with their rules but
/// those the `aptitude.yaml` files above the tests that use it leave out
/// (`coverage.exclude`).
pub(super) fn workspaces(specs: &[TestSpec]) -> Vec<Workspace> {
    let mut seen: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for spec in specs {
        let dir = spec.workspace_dir();
        let name = shown(&dir);
        if seen.contains(&name) {
            continue;
        }
        seen.push(name.clone());
        let exclusions: Vec<&spec::rules::exclude::Exclusion> = specs
            .iter()
            .filter(|s| shown(&s.workspace_dir()) == name)
            .flat_map(|s| &s.coverage_exclude)
            .collect();
        let mut rules = spec::rules::rules_in(&dir);
        rules.retain(|r| {
            let path = dir.join(&r.file);
            !exclusions.iter().any(|e| e.leaves_out(&path, r))
        });
        out.push(Workspace { dir: name, rules });
    }
    out
}

/// A workspace directory as coverage names it: resolved (`tests/agents/../..` is `.`),
/// relative to the current directory when inside it.
pub(super) fn shown(dir: &Path) -> String {
    let resolved = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_owned());
    let here = std::env::current_dir()
        .and_then(std::fs::canonicalize)
        .unwrap_or_default();
    match resolved.strip_prefix(&here) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_owned(),
        Ok(rel) => rel.display().to_string(),
        Err(_) => spec::diagnostic::display_path(&resolved),
    }
}

/// The coverage of `specs`' instruction files, with figures from `results`.
pub(super) fn of(
    specs: &[TestSpec],
    results: Option<&crate::verdict::results::Results>,
) -> Coverage {
    let measured = results.map(|r| coverage::Measured {
        tests: &r.tests,
        variants: &r.summary.variants,
    });
    coverage::of(specs, &workspaces(specs), shown, measured)
}

fn write(path: &Path, text: &str) -> Option<String> {
    crate::shared::files::write_output(path, text.as_bytes())
        .err()
        .map(|e| e.to_string())
}

/// Runs `aptitude coverage`.
///
/// # Errors
/// Test files that do not load, a results file that can not be read, an output that can
/// not be written.
pub(super) fn coverage(args: &CoverageArgs) -> Result<Outcome, CliError> {
    let redactor = Redactor::from_process_env([]);
    let found = output::discover_tests(&args.paths, Some(&args.discovery))?;
    let report = spec::load_files(&found.files);
    output::check_load_errors(&redactor, &report, found.files.len())?;
    // Coverage reads verdicts, never a run's detail: the blob pack is not opened, and each
    // test is kept without its inline detail (older files), so a big suite's results are
    // read fast and within bounded memory.
    let results = match &args.results {
        Some(path) => Some(crate::report::json::read_summaries(path, &mut |t, _| {
            Some(t.without_run_detail())
        })?),
        None => None,
    };
    let c = of(&report.specs, results.as_ref());
    let mut problems = Vec::new();
    if let Some(path) = &args.json {
        let json = serde_json::to_string_pretty(&c).unwrap_or_default();
        problems.extend(write(path, &redactor.redact(&json)));
    }
    if let Some(path) = &args.markdown {
        let md = crate::report::coverage::markdown(&c);
        problems.extend(write(path, &redactor.redact(&md)));
    }
    if !problems.is_empty() {
        return Err(CliError::Reports { problems });
    }
    out(&redactor.redact(&crate::report::coverage::terminal(&c)));
    Ok(Outcome::Passed)
}
