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
    let escaped = message
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A");
    format!("::warning title=aptitude::{escaped}\n")
}

/// Publishes `results` (already redacted); problems become warnings.
pub(super) async fn publish(
    results: &Results,
    args: &GithubArgs,
    results_path: Option<String>,
    report_path: Option<String>,
) {
    let env = match GithubEnv::from_process() {
        Ok(env) => env,
        Err(e) => {
            err(&warning_line(&format!("not published on GitHub: {e}")));
            return;
        }
    };
    let baseline = match &args.baseline {
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
    ));
    // The exit code reflects the tests, never GitHub's answers.
    Ok(Outcome::of(results.all_passed()))
}
