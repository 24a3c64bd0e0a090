//! `aptitude publish` and `run --github`: results on GitHub. Publishing never changes the
//! exit code — it reflects the tests: a GitHub problem is a warning.

use super::error::warning_line;
use super::output::{command, err};
use super::{CliError, GithubArgs, Outcome, PublishArgs};
use crate::report::github::{GithubEnv, PublishOptions};
use crate::report::json;
use crate::shared::redact::Redactor;
use crate::verdict::results::Results;

/// A workflow command `::warning::` (an annotation on the run), escaped as GitHub asks.
fn workflow_warning(message: &str) -> String {
    workflow_command("warning", message)
}

/// A workflow command `::{level} title=aptitude::` (`warning`, `notice`), escaped as GitHub
/// asks ([`crate::shared::inert::workflow_command`]).
fn workflow_command(level: &'static str, message: &str) -> String {
    crate::shared::inert::workflow_command(level, &[("title", "aptitude")], message)
}

/// `--baseline github:auto` / `--reuse github:auto`: the base branch's latest results and
/// where they came from ([`crate::report::github::artifacts`]). Not found, expired or unreadable is
/// one `::notice::`, and the run goes on without a baseline.
pub(super) async fn auto_baseline() -> Option<crate::report::github::artifacts::Downloaded> {
    let found = async {
        let env = GithubEnv::from_process()?;
        let source =
            crate::report::github::artifacts::Source::from_vars(&env, |k| std::env::var(k).ok())?;
        crate::report::github::artifacts::latest_results(&env, &source).await
    };
    match found.await {
        Ok(found) => Some(found),
        Err(e) => {
            let e: crate::report::github::artifacts::BaselineError = e;
            let redactor = Redactor::from_process_env([]);
            command(&workflow_command(
                "notice",
                &redactor.redact(&format!("no baseline, going on without one: {e}")),
            ));
            None
        }
    }
}

/// `--baseline`, read once: `None` without one; else its results, or why there are none —
/// `Err(None)` when `github:auto` found none (its notice said so), `Err(Some(error))` for a
/// file that could not be read (each user of it says what it does without).
pub(super) type ReadBaseline = Option<Result<Results, Option<String>>>;

/// Reads `--baseline` (`path`): a results file, or `github:auto` — what `auto` holds when
/// it was already looked for in this run, else looked for now.
pub(super) async fn read_baseline(
    path: Option<&std::path::Path>,
    auto: Option<&Option<crate::report::github::artifacts::Downloaded>>,
) -> ReadBaseline {
    let path = path?;
    if is_auto(path) {
        let found = match auto {
            Some(found) => found.clone(),
            None => auto_baseline().await,
        };
        return Some(found.map(|baseline| baseline.results).ok_or(None));
    }
    Some(json::read(path).map_err(|e| Some(e.to_string())))
}

/// Whether `path` is `github:auto`.
pub(super) fn is_auto(path: &std::path::Path) -> bool {
    path.as_os_str() == crate::report::github::artifacts::AUTO
}

/// Publishes `results` (already redacted); problems become warnings.
///
/// `baseline`: `--baseline` as [`read_baseline`] read it (once for the whole run).
pub(super) async fn publish(
    results: &Results,
    args: &GithubArgs,
    results_path: Option<String>,
    report_path: Option<String>,
    baseline: ReadBaseline,
) {
    let env = match GithubEnv::from_process() {
        Ok(env) => env,
        Err(e) => {
            err(&warning_line(&format!("not published on GitHub: {e}")));
            return;
        }
    };
    let baseline = match baseline {
        Some(Ok(b)) => Some(b),
        Some(Err(Some(e))) => {
            command(&workflow_warning(&format!("no baseline comparison: {e}")));
            None
        }
        // None given, or `github:auto` found none (its notice said so).
        Some(Err(None)) | None => None,
    };
    let options = PublishOptions {
        comment: !args.no_comment,
        check_run: !args.no_check_run,
        key: args.report_key.clone(),
        results_path,
        report_path,
        baseline,
        significance: args.significance,
    };
    let published = crate::report::github::publish(results, &env, &options).await;
    let redactor = Redactor::from_process_env([]);
    for w in &published.warnings {
        command(&workflow_warning(&redactor.redact(w)));
    }
}

pub(super) fn publish_command(args: &PublishArgs) -> Result<Outcome, CliError> {
    let results = json::read(&args.results)?;
    let mut results = super::output::redacted(&Redactor::from_process_env([]), &results)?;
    let runtime = super::output::runtime()?;
    runtime.block_on(async {
        let baseline = read_baseline(args.github.baseline.as_deref(), None).await;
        // Routing the run itself did not compare is compared now.
        if let Some(Ok(base)) = &baseline
            && results
                .routing
                .as_ref()
                .is_some_and(|r| r.baseline.is_none())
        {
            results.compare_routing(base, args.github.significance);
        }
        publish(
            &results,
            &args.github,
            Some(args.results.display().to_string()),
            args.report_path.clone(),
            baseline,
        )
        .await;
    });
    // The exit code reflects the tests, never GitHub's answers.
    Ok(Outcome::of(results.all_passed()))
}
