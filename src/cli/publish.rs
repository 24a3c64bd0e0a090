//! `aptitude publish` and `run --github`: results on GitHub. Publishing never changes the
//! exit code — it reflects the tests: a GitHub problem is a warning.

use super::output::{err, out, warning_line};
use super::{CliError, GithubArgs, Outcome, PublishArgs};
use crate::github::{GithubEnv, PublishOptions};
use crate::redact::Redactor;
use crate::report::json;
use crate::results::Results;

/// A workflow command `::warning::` (an annotation on the run), escaped as GitHub asks.
fn workflow_warning(message: &str) -> String {
    workflow_command("warning", message)
}

/// A workflow command `::{level}::` (`warning`, `notice`), escaped as GitHub asks.
fn workflow_command(level: &str, message: &str) -> String {
    let escaped = message
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A");
    format!("::{level} title=aptitude::{escaped}\n")
}

/// `--baseline github:auto` / `--reuse github:auto`: the base branch's latest results and
/// where they came from ([`crate::github::artifacts`]). Not found, expired or unreadable is
/// one `::notice::`, and the run goes on without a baseline.
pub(super) async fn auto_baseline() -> Option<(Results, String)> {
    let found = async {
        let env = GithubEnv::from_process()?;
        let source = crate::github::artifacts::Source::from_vars(&env, |k| std::env::var(k).ok())?;
        crate::github::artifacts::latest_results(&env, &source).await
    };
    match found.await {
        Ok(found) => Some(found),
        Err(e) => {
            let e: crate::github::artifacts::BaselineError = e;
            let redactor = Redactor::from_process_env([]);
            out(&workflow_command(
                "notice",
                &redactor.redact(&format!("no baseline, going on without one: {e}")),
            ));
            None
        }
    }
}

/// Whether `path` is `github:auto`.
pub(super) fn is_auto(path: &std::path::Path) -> bool {
    path.as_os_str() == crate::github::artifacts::AUTO
}

/// Publishes `results` (already redacted); problems become warnings.
///
/// `auto`: the results `github:auto` already found in this run, if `--baseline` is
/// `github:auto` and they were looked for (else they are looked for now).
pub(super) async fn publish(
    results: &Results,
    args: &GithubArgs,
    results_path: Option<String>,
    report_path: Option<String>,
    auto: Option<Option<Results>>,
) {
    let env = match GithubEnv::from_process() {
        Ok(env) => env,
        Err(e) => {
            err(&warning_line(&format!("not published on GitHub: {e}")));
            return;
        }
    };
    let baseline = match &args.baseline {
        Some(path) if is_auto(path) => match auto {
            Some(found) => found,
            None => auto_baseline().await.map(|(b, _)| b),
        },
        Some(path) => match json::read(path) {
            Ok(b) => Some(b),
            Err(e) => {
                out(&workflow_warning(&format!("no baseline comparison: {e}")));
                None
            }
        },
        None => None,
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
    let published = crate::github::publish(results, &env, &options).await;
    let redactor = Redactor::from_process_env([]);
    for w in &published.warnings {
        out(&workflow_warning(&redactor.redact(w)));
    }
}

pub(super) fn publish_command(args: &PublishArgs) -> Result<Outcome, CliError> {
    let results = json::read(&args.results)?;
    let results = super::output::redacted(&Redactor::from_process_env([]), &results)?;
    let runtime = super::output::runtime()?;
    runtime.block_on(publish(
        &results,
        &args.github,
        Some(args.results.display().to_string()),
        args.report_path.clone(),
        None,
    ));
    // The exit code reflects the tests, never GitHub's answers.
    Ok(Outcome::of(results.all_passed()))
}
