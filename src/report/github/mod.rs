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

/// The texts of one publication, rendered before the first request, so that a bug in a
/// renderer can not stop publishing half-way: the job summary, the comment (its marker
/// first), and the check run's title, summary and conclusion.
pub(crate) struct Texts {
    /// The job summary's Markdown.
    pub(crate) summary: String,
    /// The sticky comment's body, its marker on the first line.
    pub(crate) comment: String,
    /// The check run's `output.title`.
    pub(crate) check_title: String,
    /// The check run's `output.summary`.
    pub(crate) check_summary: String,
    /// Whether the report could not be rendered: the check run then fails.
    pub(crate) broken: bool,
}

impl Texts {
    /// Every text of a publication; a panic while rendering them gives [`Texts::broken`]
    /// and its message, so that the pull request never keeps an earlier ✅.
    pub(crate) fn of(
        results: &Results,
        env: &GithubEnv,
        options: &PublishOptions,
    ) -> (Texts, Option<String>) {
        Texts::rendered_by(results, env, options, body)
    }

    /// [`Texts::of`] with the Markdown body rendered by `render` (what [`body`] takes).
    fn rendered_by(
        results: &Results,
        env: &GithubEnv,
        options: &PublishOptions,
        render: impl Fn(&Results, &GithubEnv, &PublishOptions, usize) -> String,
    ) -> (Texts, Option<String>) {
        let mark = marker(options.key.as_deref());
        let rendered = crate::shared::caught::caught(|| Texts {
            summary: render(results, env, options, summary::SUMMARY_BYTES - MARGIN_BYTES),
            comment: format!(
                "{mark}\n{}",
                render(
                    results,
                    env,
                    options,
                    COMMENT_LIMIT - MARGIN_BYTES - mark.len() - 1
                )
            ),
            check_title: markdown::plain_title(results),
            check_summary: render(results, env, options, CHECK_SUMMARY_LIMIT - MARGIN_BYTES),
            broken: false,
        });
        match rendered {
            Ok(texts) => (texts, None),
            Err(panic) => (Texts::broken(results, &mark), Some(panic)),
        }
    }

    /// What is published when the report could not be rendered: aptitude's own words and
    /// the summary's counts, nothing the agent or the repository wrote (the text that
    /// broke the renderer may be theirs), and a failing check run.
    fn broken(results: &Results, mark: &str) -> Texts {
        let s = &results.summary;
        let text = format!(
            "## ⚠️ aptitude could not render this run's report\n\n\
             A bug in aptitude stopped it while writing the report, so the verdicts are not \
             shown here, and the check run fails. This replaces any earlier report, which no \
             longer holds. Counts: {} passed, {} failed, {} errors, {} skipped. The results \
             JSON and the workflow run's log have every verdict; please report the bug with \
             that log.\n",
            s.passed, s.failed, s.errors, s.skipped
        );
        Texts {
            summary: text.clone(),
            comment: format!("{mark}\n{text}"),
            check_title: "aptitude could not render its report".to_owned(),
            check_summary: text,
            broken: true,
        }
    }
}

/// Publishes results: job summary and step outputs always; comment and check run when the
/// token can write. Everything is rendered first ([`Texts::of`]): a renderer that panics
/// still gets an error comment and a failing check run posted, never nothing.
pub async fn publish(results: &Results, env: &GithubEnv, options: &PublishOptions) -> Published {
    let (texts, panic) = Texts::of(results, env, options);
    publish_texts(results, env, options, &texts, panic.is_some()).await
}

/// [`publish`] of texts already rendered; `broken`: rendering them panicked.
async fn publish_texts(
    results: &Results,
    env: &GithubEnv,
    options: &PublishOptions,
    texts: &Texts,
    broken: bool,
) -> Published {
    let mut out = Published::default();
    if broken {
        out.warnings.push(
            "the report could not be rendered (a bug in aptitude, printed above); an error comment and a failing check run are published in its place".to_owned(),
        );
    }
    if let Err(e) = write_step_summary(env, &texts.summary) {
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
        match client.check_run(results, env, options, texts).await {
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
        match client
            .upsert_comment(pr.number, &mark, &texts.comment, app.as_deref())
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

    /// Issue 44: a renderer that panics still gets an error comment and a failing check
    /// run posted (the pull request never keeps an earlier ✅), with aptitude's words and
    /// counts only, none of the text that broke it.
    #[tokio::test]
    async fn a_panic_while_rendering_still_posts_an_error_comment_and_a_failing_check_run() {
        use wiremock::matchers::{method, path};
        use wiremock::{Mock, MockServer, ResponseTemplate};
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .and(path("/repos/o/r/issues/7/comments"))
            .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!([])))
            .mount(&server)
            .await;
        Mock::given(method("GET"))
            .and(path("/user"))
            .respond_with(
                ResponseTemplate::new(200).set_body_json(serde_json::json!({"login": "bot"})),
            )
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(201).set_body_json(serde_json::json!({"id": 1})))
            .mount(&server)
            .await;
        let dir = tempfile::tempdir().unwrap();
        let env = GithubEnv {
            api_url: server.uri(),
            repository: "o/r".into(),
            event: Some(
                serde_json::json!({"pull_request": {"number": 7, "head": {"sha": "head", "repo": {"full_name": "o/r", "fork": false}}}}),
            ),
            sha: Some("merge".into()),
            step_summary: Some(dir.path().join("summary.md")),
            output: Some(dir.path().join("output")),
            server_url: "https://github.com".into(),
            run_id: Some("42".into()),
            token: Some("ghs_test_token".into()),
            actor: None,
            workspace: None,
            event_name: Some("pull_request".into()),
        };
        let mut results = Results::new(Vec::new(), 1);
        results.summary.passed = 3;
        let options = PublishOptions::default();
        let (texts, panic) = Texts::rendered_by(&results, &env, &options, |_, _, _, _| {
            panic!("byte index 4 is not a char boundary; of `@octocat secret text`")
        });
        assert!(panic.is_some_and(|p| p.contains("char boundary")));
        let published = publish_texts(&results, &env, &options, &texts, true).await;
        assert!(published.comment_id.is_some() && published.check_run_id.is_some());
        assert!(
            published
                .warnings
                .iter()
                .any(|w| w.contains("could not be rendered"))
        );
        let posts: Vec<serde_json::Value> = server
            .received_requests()
            .await
            .unwrap_or_default()
            .into_iter()
            .filter(|r| r.method.as_str() == "POST")
            .filter_map(|r| serde_json::from_slice(&r.body).ok())
            .collect();
        let check = posts.iter().find(|b| b.get("head_sha").is_some()).unwrap();
        assert_eq!(check["conclusion"], "failure", "{check}");
        let comment = posts.iter().find_map(|b| b["body"].as_str()).unwrap();
        assert!(comment.starts_with("<!-- aptitude:sticky-comment -->\n"));
        assert!(comment.contains("could not render") && comment.contains("3 passed"));
        assert!(!comment.contains("octocat"), "{comment}");
        let summary = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
        assert!(summary.contains("could not render"), "{summary}");
    }

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
