//! Publishing results on GitHub (`aptitude run --github`, `aptitude publish RESULTS.json`).
//!
//! From the Actions environment (`GITHUB_API_URL`, `GITHUB_REPOSITORY`,
//! `GITHUB_EVENT_PATH`, `GITHUB_SHA`, `GITHUB_STEP_SUMMARY`, `GITHUB_OUTPUT`,
//! `GITHUB_SERVER_URL`, `GITHUB_RUN_ID`, `GITHUB_TOKEN`):
//! - **one sticky PR comment**: the comment (among every page of them) whose first line is
//!   exactly this job's hidden marker ([`marker`], with `--report-key`) and whose author is
//!   the token's own user or app (`GET /user`, else the app the check run was created as,
//!   else `github-actions[bot]`), updated in place, else created: a marker quoted in agent
//!   text, or written by anyone else, never matches; within GitHub's 65,536 bytes,
//!   truncated with links to the run and its report artifact;
//! - **one check run** on the PR head SHA (not the merge SHA): success, failure, or neutral
//!   when nothing ran; a summary (≤ 65,535 bytes); a failure annotation on each failing
//!   assertion at its test file and line (and one at the `name:` line of a test that
//!   errored without a failing assertion, e.g. a timeout), paths relative to the repository root
//!   (`GITHUB_WORKSPACE`) wherever aptitude runs, sent 50 per request (create, then updates);
//! - the Markdown in `GITHUB_STEP_SUMMARY` (≤ 1 MiB) and step outputs in `GITHUB_OUTPUT`
//!   (random heredoc delimiters).
//!
//! A fork PR or Dependabot (read-only token, no secrets) gets no comment and no check run —
//! the job summary is still written — and one warning saying why. An API failure (5xx, 403,
//! 422, …) is a warning: reports are kept and the exit code still reflects the tests. No
//! request is retried (octocrab is built without its retry layer), so a POST can not be
//! sent twice and no comment is ever duplicated.

mod api;
pub mod artifacts;
mod env;
mod error;
mod summary;

pub use env::{GithubEnv, PullRequest};
pub use error::GithubError;
pub use summary::{write_outputs, write_step_summary};

use crate::report::markdown::{self, MarkdownOptions};
use crate::verdict::results::Results;

/// Where to read about the fork-safe two-workflow setup.
pub const FORK_DOCS: &str = "see \"Fork pull requests\" in the action's docs/github-action.md";

/// GitHub's limit on an issue comment body, in bytes (GitHub documents 65,536 characters
/// but counts bytes of UTF-8 for some of its limits; bytes bound both).
pub const COMMENT_LIMIT: usize = 65_536;
/// GitHub's limit on a check run's `output.summary` and `output.text`, in bytes: over it
/// the API answers 422 "summary exceeds a maximum bytesize of 65535".
pub const CHECK_SUMMARY_LIMIT: usize = 65_535;
/// GitHub's limit on an annotation's `message`, in bytes (64 KiB).
pub const ANNOTATION_MESSAGE_LIMIT: usize = 64 * 1024;
/// GitHub's limit on an annotation's `title`, in characters.
pub const ANNOTATION_TITLE_LIMIT: usize = 255;
/// What every body keeps below its limit, in bytes, so that a change in how GitHub counts
/// (line endings, its own additions) can not push a body over.
pub const MARGIN_BYTES: usize = 1_024;
/// Annotations per check-run request (GitHub's limit).
pub const ANNOTATIONS_PER_REQUEST: usize = 50;

/// What to publish.
#[derive(Debug, Clone)]
pub struct PublishOptions {
    /// Post or update the sticky PR comment.
    pub comment: bool,
    /// Create the check run.
    pub check_run: bool,
    /// Tells apart the comments and check runs of several jobs (a matrix) on one PR.
    pub key: Option<String>,
    /// The results JSON path, for the step outputs.
    pub results_path: Option<String>,
    /// The HTML report path, for the step outputs.
    pub report_path: Option<String>,
    /// The baseline comparison, shown in the comment and the summary.
    pub baseline: Option<Results>,
    /// The p-value below which a repeated test's fall in pass rate is a regression.
    pub significance: f64,
}

impl Default for PublishOptions {
    fn default() -> Self {
        PublishOptions {
            comment: true,
            check_run: true,
            key: None,
            results_path: None,
            report_path: None,
            baseline: None,
            significance: crate::report::baseline::DEFAULT_SIGNIFICANCE,
        }
    }
}

/// What publishing did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Published {
    /// Warnings for the log (API failures, fork PRs); never errors.
    pub warnings: Vec<String>,
    /// The comment created or updated.
    pub comment_id: Option<u64>,
    /// The check run created.
    pub check_run_id: Option<u64>,
}

/// The hidden marker that finds our comment again: the first line of its body,
/// `<!-- aptitude:sticky-comment -->`, or with the job's key
/// `<!-- aptitude:sticky-comment:KEY -->`. Characters of the key that could end the HTML
/// comment or the line (anything but letters, digits and `_ . : / + = @` and single `-`
/// or spaces) are percent-encoded.
pub fn marker(key: Option<&str>) -> String {
    match key {
        Some(k) => {
            let mut safe = String::with_capacity(k.len());
            for c in k.chars() {
                let plain = c.is_ascii_alphanumeric() || "_.:/+=@ ".contains(c);
                if plain || (c == '-' && !safe.ends_with('-')) {
                    safe.push(c);
                } else {
                    let mut utf8 = [0u8; 4];
                    for b in c.encode_utf8(&mut utf8).bytes() {
                        safe.push_str(&format!("%{b:02X}"));
                    }
                }
            }
            format!("<!-- aptitude:sticky-comment:{safe} -->")
        }
        None => "<!-- aptitude:sticky-comment -->".to_owned(),
    }
}

/// The Markdown body shared by the comment, the check run and the job summary, at most
/// `max_bytes` bytes of UTF-8 long.
pub fn body(
    results: &Results,
    env: &GithubEnv,
    options: &PublishOptions,
    max_bytes: usize,
) -> String {
    let run = env.run_url();
    // A regressed test's run view: the report in the run's artifacts, at its anchor.
    let link = crate::report::baseline::ReportLink {
        url: run.as_ref().map(|u| format!("{u}#artifacts")),
        file: options
            .report_path
            .as_deref()
            .and_then(|p| std::path::Path::new(p).file_name())
            .map_or_else(
                || "report.html".to_owned(),
                |n| n.to_string_lossy().into_owned(),
            ),
    };
    let preamble = options.baseline.as_ref().map(|b| {
        crate::report::baseline::compare(results, b, options.significance).to_markdown(Some(&link))
    });
    let footer = match &run {
        Some(url) => format!(
            "\n\n<sub>[Workflow run]({url}) · the HTML report is in the run's artifacts · aptitude {}</sub>\n",
            results.aptitude_version
        ),
        None => format!("\n\n<sub>aptitude {}</sub>\n", results.aptitude_version),
    };
    let md_options = MarkdownOptions {
        max_chars: usize::MAX,
        max_bytes: max_bytes.saturating_sub(footer.len()),
        report_url: run.map(|u| format!("{u}#artifacts")),
        preamble,
    };
    format!("{}{footer}", markdown::render(results, &md_options))
}

/// Publishes results: job summary and step outputs always; comment and check run when the
/// token can write.
pub async fn publish(results: &Results, env: &GithubEnv, options: &PublishOptions) -> Published {
    let mut out = Published::default();
    let summary_body = body(results, env, options, summary::SUMMARY_BYTES - MARGIN_BYTES);
    if let Err(e) = write_step_summary(env, &summary_body) {
        out.warnings.push(e.to_string());
    }
    if let Err(e) = write_outputs(env, results, options) {
        out.warnings.push(e.to_string());
    }
    if !options.comment && !options.check_run {
        return out;
    }
    if let Some(why) = env.read_only_reason() {
        out.warnings.push(format!(
            "{why}: its token can not write, so aptitude posted no PR comment and no check run; the job summary has the results. To report on such pull requests, use the two-workflow `workflow_run` pattern ({FORK_DOCS})"
        ));
        return out;
    }
    let client = match api::Client::new(env) {
        Ok(c) => c,
        Err(e) => {
            out.warnings.push(e.to_string());
            return out;
        }
    };
    // The check run first: the app it is created as is the comment's author when the
    // token is an app's.
    let mut app = None;
    if options.check_run {
        match client.check_run(results, env, options).await {
            Ok((id, slug)) => {
                out.check_run_id = Some(id);
                app = slug;
            }
            Err(e) => out
                .warnings
                .push(format!("could not create the check run: {e}")),
        }
    }
    // A push (no pull request) gets a check run but no comment.
    if options.comment
        && let Some(pr) = env.pull_request()
    {
        let mark = marker(options.key.as_deref());
        let text = format!(
            "{mark}\n{}",
            body(
                results,
                env,
                options,
                COMMENT_LIMIT - MARGIN_BYTES - mark.len() - 1
            )
        );
        match client
            .upsert_comment(pr.number, &mark, &text, app.as_deref())
            .await
        {
            Ok(id) => out.comment_id = Some(id),
            Err(e) => out
                .warnings
                .push(format!("could not post the PR comment: {e}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_can_not_end_the_marker() {
        assert_eq!(marker(None), "<!-- aptitude:sticky-comment -->");
        assert_eq!(
            marker(Some("claude / linux")),
            "<!-- aptitude:sticky-comment:claude / linux -->"
        );
        assert_eq!(
            marker(Some("a-->b\n<x>")),
            "<!-- aptitude:sticky-comment:a-%2D%3Eb%0A%3Cx%3E -->"
        );
    }
}
