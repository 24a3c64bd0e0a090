//! The GitHub REST calls, through octocrab: the sticky comment and the check run.
//!
//! Why raw routes (`octo.get/post/patch` with `serde_json::Value` replies) rather than
//! octocrab's typed handlers (`issues().list_comments()`, `checks().create_check_run()`):
//! - only a few fields of any reply are read (a comment's `id`, `user.login` and `body`; a
//!   check run's `id` and `app.slug`; the user's `login`). The typed models make dozens of fields required, so a reply that
//!   lacks one (GitHub Enterprise Server versions, API previews, a proxy) fails to
//!   deserialize after the write succeeded: the comment or check run exists, yet is
//!   reported as not posted;
//! - the request bodies are the ones GitHub documents, built here field by field and
//!   checked against GitHub's OpenAPI description by the tests (tests/it/github.rs asserts
//!   the exact requests against wiremock); the typed builders add or drop fields across
//!   octocrab versions;
//! - octocrab still does the rest: the base URL, authentication, pagination
//!   (`all_pages`), timeouts, redirects and error decoding; the request types of the check
//!   run's output (`CheckRunOutput`, annotations) are octocrab's.

use octocrab::params::checks::{
    CheckRunConclusion, CheckRunOutput, CheckRunOutputAnnotation, CheckRunOutputAnnotationLevel,
};
use octocrab::{Octocrab, Page};
use serde_json::{Value, json};

use super::error::GithubError;
use super::{
    ANNOTATION_MESSAGE_LIMIT, ANNOTATION_TITLE_LIMIT, ANNOTATIONS_PER_REQUEST, GithubEnv,
    MARGIN_BYTES, PublishOptions, Texts,
};
use crate::shared::caught::caught;
use crate::verdict::results::{AssertionStatus, Results, TestResult, TestStatus};

/// Octocrab pointed at the environment's API with its token.
pub(super) struct Client {
    pub(super) octo: Octocrab,
    pub(super) owner: String,
    pub(super) repo: String,
}

impl Client {
    pub(super) fn new(env: &GithubEnv) -> Result<Self, GithubError> {
        let token = env.token.clone().ok_or(GithubError::NoToken)?;
        let octo = Octocrab::builder()
            .base_uri(env.api_url.as_str())
            .map_err(|e| GithubError::ApiUrl {
                url: env.api_url.clone(),
                source: Box::new(e),
            })?
            .personal_token(token)
            .build()
            .map_err(|e| GithubError::Client(Box::new(e)))?;
        let (owner, repo) = env.owner_repo();
        Ok(Client {
            octo,
            owner: owner.to_owned(),
            repo: repo.to_owned(),
        })
    }

    /// The login the token writes comments as:
    /// - `GET /user`'s `login` for a user's token (a personal access token, OAuth);
    /// - else the token is a GitHub App's installation token, which can not read `/user`,
    ///   and writes as its app's bot, `<slug>[bot]`: the slug is `app_slug`, read from the
    ///   check run this token just created (only an app can create one);
    /// - else (no check run: `--no-check-run`, or it failed) `github-actions[bot]`, the
    ///   author of the Actions token (`GITHUB_TOKEN`), the action's default. An other app's
    ///   token then finds no comment and creates one each run: never someone else's.
    async fn login(&self, app_slug: Option<&str>) -> String {
        let user = self.octo.get::<Value, _, ()>("/user", None).await.ok();
        if let Some(login) = user
            .as_ref()
            .and_then(|u| u.get("login"))
            .and_then(Value::as_str)
        {
            return login.to_owned();
        }
        match app_slug {
            Some(slug) => format!("{slug}[bot]"),
            None => "github-actions[bot]".into(),
        }
    }

    /// Updates our comment in place, or creates it; returns its id. Ours is a comment whose
    /// author is the token's own login ([`Client::login`]) and whose body's first line is
    /// `marker` exactly ([`super::marker`]: the job's key in it): a marker quoted anywhere
    /// else in a body — agent text in another job's comment — never matches.
    pub(super) async fn upsert_comment(
        &self,
        number: u64,
        marker: &str,
        body: &str,
        app_slug: Option<&str>,
    ) -> Result<u64, GithubError> {
        let me = self.login(app_slug).await;
        tracing::debug!(number, login = %me, "looking for the sticky comment");
        let route = format!(
            "/repos/{}/{}/issues/{number}/comments",
            self.owner, self.repo
        );
        let first: Page<Value> = self
            .octo
            .get(&route, Some(&[("per_page", "100")]))
            .await
            .map_err(GithubError::api)?;
        let comments = self.octo.all_pages(first).await.map_err(GithubError::api)?;
        let ours = comments.iter().find(|c| {
            c.get("user")
                .and_then(|u| u.get("login"))
                .and_then(Value::as_str)
                == Some(me.as_str())
                && c.get("body")
                    .and_then(Value::as_str)
                    .is_some_and(|b| b.lines().next() == Some(marker))
        });
        let reply: Value = match ours.and_then(|c| c.get("id")).and_then(Value::as_u64) {
            Some(id) => self
                .octo
                .patch(
                    format!("/repos/{}/{}/issues/comments/{id}", self.owner, self.repo),
                    Some(&json!({"body": body})),
                )
                .await
                .map_err(GithubError::api)?,
            None => self
                .octo
                .post(&route, Some(&json!({"body": body})))
                .await
                .map_err(GithubError::api)?,
        };
        reply
            .get("id")
            .and_then(Value::as_u64)
            .ok_or(GithubError::NoId("comment"))
    }

    /// The lines pull request `number` adds, by file (paths from the repository root):
    /// `GET /repos/{owner}/{repo}/pulls/{number}/files`, each file's `patch` read for the
    /// lines of its hunks that start with `+`. GitHub lists at most 3,000 files and leaves
    /// out the patch of a large file: such a file counts as unchanged here.
    ///
    /// # Errors
    /// The API's error.
    pub(super) async fn added_lines(
        &self,
        number: u64,
    ) -> Result<std::collections::BTreeMap<String, Vec<u32>>, GithubError> {
        let route = format!("/repos/{}/{}/pulls/{number}/files", self.owner, self.repo);
        let first: Page<Value> = self
            .octo
            .get(&route, Some(&[("per_page", "100")]))
            .await
            .map_err(GithubError::api)?;
        let files = self.octo.all_pages(first).await.map_err(GithubError::api)?;
        Ok(files
            .iter()
            .filter_map(|f| {
                let name = f.get("filename")?.as_str()?;
                let patch = f.get("patch")?.as_str()?;
                Some((name.to_owned(), added_in_patch(patch)))
            })
            .collect())
    }

    /// Creates the check run with the first 50 annotations, then adds the rest 50 at a
    /// time; returns its id and the slug of the app it was created as (`app.slug`).
    pub(super) async fn check_run(
        &self,
        results: &Results,
        env: &GithubEnv,
        options: &PublishOptions,
        texts: &Texts,
    ) -> Result<(u64, Option<String>), GithubError> {
        let sha = env.head_sha().ok_or(GithubError::NoSha)?;
        let name = match &options.key {
            Some(k) => format!("aptitude ({k})"),
            None => "aptitude".to_owned(),
        };
        let s = &results.summary;
        let conclusion = if texts.broken || s.failed > 0 || s.errors > 0 || !results.all_passed() {
            CheckRunConclusion::Failure
        } else if s.passed == 0 && s.routing.as_ref().is_none_or(|r| r.as_expected == 0) {
            CheckRunConclusion::Neutral
        } else {
            CheckRunConclusion::Success
        };
        let title = texts.check_title.clone();
        let summary = texts.check_summary.clone();
        // Annotations quote agent and repository text: a renderer's panic leaves them out
        // (the summary then says the report is broken), never the check run.
        let mut annotations = if texts.broken {
            Vec::new()
        } else {
            caught(|| annotations(results, env)).unwrap_or_default()
        };
        // The instruction lines this pull request adds that no test covers.
        if results.coverage.is_some()
            && !texts.broken
            && let Some(pr) = env.pull_request()
        {
            match self.added_lines(pr.number).await {
                Ok(added) => annotations.extend(
                    caught(|| coverage_annotations(results, env, &added)).unwrap_or_default(),
                ),
                Err(e) => tracing::debug!(error = %e, "no coverage annotations"),
            }
        }
        let mut batches = annotations.chunks(ANNOTATIONS_PER_REQUEST);
        let output = |batch: Option<&[Annotation]>| CheckRunOutput {
            title: title.clone(),
            summary: summary.clone(),
            text: None,
            annotations: batch
                .map(|b| b.iter().map(Annotation::to_octocrab).collect())
                .unwrap_or_default(),
            images: Vec::new(),
        };
        // Raw JSON replies: only the id is needed, whatever else the API returns.
        let route = format!("/repos/{}/{}/check-runs", self.owner, self.repo);
        let conclusion = serde_json::to_value(conclusion).map_err(GithubError::Encode)?;
        let created: Value = self
            .octo
            .post(
                &route,
                Some(&json!({
                    "name": name,
                    "head_sha": sha,
                    "status": "completed",
                    "conclusion": conclusion,
                    "output": output(batches.next()),
                })),
            )
            .await
            .map_err(GithubError::api)?;
        let id = created
            .get("id")
            .and_then(Value::as_u64)
            .ok_or(GithubError::NoId("check run"))?;
        let app = created
            .pointer("/app/slug")
            .and_then(Value::as_str)
            .map(str::to_owned);
        tracing::debug!(id, annotations = annotations.len(), "check run created");
        for batch in batches {
            let _: Value = self
                .octo
                .patch(
                    format!("{route}/{id}"),
                    Some(&json!({"output": output(Some(batch))})),
                )
                .await
                .map_err(GithubError::api)?;
        }
        Ok((id, app))
    }
}

/// A failing assertion at its place in the test file.
#[derive(Debug, Clone)]
struct Annotation {
    path: String,
    line: u32,
    failure: bool,
    title: String,
    message: String,
}

impl Annotation {
    fn to_octocrab(&self) -> CheckRunOutputAnnotation {
        CheckRunOutputAnnotation {
            path: self.path.clone(),
            start_line: self.line.max(1),
            end_line: self.line.max(1),
            start_column: None,
            end_column: None,
            annotation_level: if self.failure {
                CheckRunOutputAnnotationLevel::Failure
            } else {
                CheckRunOutputAnnotationLevel::Warning
            },
            message: self.message.clone(),
            title: Some(self.title.clone()),
            raw_details: None,
        }
    }
}

/// The most characters of an annotation message shown before the byte bound (GitHub
/// allows 64 KiB; a few thousand characters keep the annotation readable).
const MESSAGE_MAX: usize = 4_000;

/// An annotation's title (one line) and message (plain text), inert
/// ([`crate::shared::inert`]) and cut to GitHub's limits after redaction.
fn bounded(title: &str, message: &str) -> (String, String) {
    let title = crate::shared::inert::single_line(title);
    let title = crate::shared::cut::chars(&title, ANNOTATION_TITLE_LIMIT).kept;
    let message = crate::shared::inert::plain_text(message);
    let message = crate::shared::text::truncate_lines(&message, MESSAGE_MAX);
    let message = crate::shared::cut::bytes(&message, ANNOTATION_MESSAGE_LIMIT - MARGIN_BYTES).kept;
    (title, message)
}

/// A test file path relative to the repository root (`GITHUB_WORKSPACE`), wherever
/// aptitude runs: results hold paths as given to `run`, relative to the directory it ran
/// in (`run_dir`), which may not be the directory `publish` runs in. An absolute path is
/// made relative directly; else the first existing file is taken among the path from
/// `run_dir`, from here, from each parent directory up to the root, and from the root;
/// when none exists (results from another machine), the path from `run_dir` if it is
/// inside the root, else the path as it is.
fn repo_path(file: &str, run_dir: Option<&str>, env: &GithubEnv) -> String {
    let path = std::path::Path::new(file);
    let clean = |p: &std::path::Path| {
        p.components()
            .filter(|c| !matches!(c, std::path::Component::CurDir))
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/")
    };
    let Some(root) = env.workspace.as_ref() else {
        return clean(path);
    };
    if path.is_absolute() {
        return path.strip_prefix(root).map_or_else(|_| clean(path), &clean);
    }
    let from_run_dir = run_dir.map(|dir| lexical(&std::path::Path::new(dir).join(path)));
    let here = std::env::current_dir().ok();
    let mut candidates: Vec<std::path::PathBuf> = from_run_dir.iter().cloned().collect();
    candidates.extend(
        here.iter()
            .flat_map(|d| d.ancestors())
            .take_while(|d| d.starts_with(root))
            .map(|base| lexical(&base.join(path))),
    );
    candidates.push(lexical(&root.join(path)));
    candidates
        .iter()
        .filter(|c| c.is_file())
        .chain(from_run_dir.iter())
        .find_map(|c| c.strip_prefix(root).ok().map(clean))
        .unwrap_or_else(|| clean(path))
}

/// `path` with `.` and `..` resolved without touching the file system.
fn lexical(path: &std::path::Path) -> std::path::PathBuf {
    let mut out = std::path::PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The path an annotation of the test file `file` points at ([`repo_path`]), validated
/// against the repository: a clean relative path ([`crate::shared::inert::repository_path`]:
/// no `..`, not absolute, no line break or control character) that, when it exists under
/// the root (`GITHUB_WORKSPACE`), resolves inside it (a link out is refused). `None`: the
/// test gets no annotation (the check run's summary still shows it).
fn annotation_path(file: &str, run_dir: Option<&str>, env: &GithubEnv) -> Option<String> {
    let path = repo_path(file, run_dir, env);
    let path = match crate::shared::inert::repository_path(&path) {
        Ok(path) => path,
        Err(why) => {
            tracing::debug!(%why, "no annotation: the test file's path is refused");
            return None;
        }
    };
    if let Some(root) = &env.workspace
        && root.join(path).exists()
    {
        use crate::shared::files::{Resolved, resolve_in};
        match resolve_in(root, std::path::Path::new(path)) {
            Ok(Resolved::Inside(_)) => {}
            _ => {
                tracing::debug!(
                    path,
                    "no annotation: the test file leads out of the repository"
                );
                return None;
            }
        }
    }
    Some(path.to_owned())
}

/// The largest test file read for the line of its `name:`, in bytes.
const TEST_FILE_MAX: u64 = 4 * 1024 * 1024;

/// The line of a test's `name:` in its file, else 1: where an annotation about the whole
/// test points. Only a regular file is read (a FIFO never blocks the publication).
fn test_line(path: &str, env: &GithubEnv) -> u32 {
    let file = env
        .workspace
        .as_ref()
        .map_or_else(|| std::path::PathBuf::from(path), |root| root.join(path));
    crate::shared::files::read_capped(&file, TEST_FILE_MAX)
        .ok()
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .and_then(|text| {
            text.lines()
                .position(|l| l.starts_with("name:"))
                .and_then(|i| u32::try_from(i + 1).ok())
        })
        .unwrap_or(1)
}

fn test_annotations(t: &TestResult, run_dir: Option<&str>, env: &GithubEnv) -> Vec<Annotation> {
    let Some(path) = annotation_path(&t.file, run_dir, env) else {
        return Vec::new();
    };
    let mut out: Vec<Annotation> = t
        .assertions
        .iter()
        .enumerate()
        .filter(|(_, a)| {
            matches!(
                a.status,
                AssertionStatus::Fail | AssertionStatus::Error | AssertionStatus::Invalid
            )
        })
        .map(|(i, a)| {
            let detail = a.detail.as_deref().unwrap_or(&a.description);
            // A repeated test: which runs it held in, and whether it is the flaky one.
            let (title, message) = match &t.repeat {
                Some(r) => {
                    let tally = r.assertions.get(i).filter(|_| a.kind != "routing");
                    let tally = tally.map_or_else(String::new, |tally| {
                        let flaky = if tally.flaky { " (flaky)" } else { "" };
                        format!("{}{flaky}\n", tally.phrase(r.runs))
                    });
                    bounded(
                        &format!("{} — {}: {}", t.name, r.headline(), a.description),
                        &format!("{tally}{detail}"),
                    )
                }
                None => bounded(&format!("{}: {}", t.name, a.description), detail),
            };
            Annotation {
                path: path.clone(),
                line: a.line,
                // A flaky assertion of a test that passed anyway (min_pass) is a warning.
                // So is a routing prompt that chose otherwise: the figures decide.
                failure: a.status == AssertionStatus::Fail
                    && t.status != TestStatus::Passed
                    && t.routing.is_none(),
                title,
                message,
            }
        })
        .collect();
    // A test that errored as a whole (timeout, crash) has no failing assertion to point
    // at: it is annotated at the test itself.
    if t.status == TestStatus::Error && out.is_empty() {
        let (title, message) = bounded(
            &format!("{}: could not be judged", t.name),
            t.error.as_deref().unwrap_or("the test errored"),
        );
        out.push(Annotation {
            line: test_line(&path, env),
            path,
            failure: true,
            title,
            message,
        });
    }
    out
}

/// The new-file line numbers a unified-diff `patch` adds (`+` lines of its hunks).
fn added_in_patch(patch: &str) -> Vec<u32> {
    let mut added = Vec::new();
    let mut line: Option<u32> = None;
    for text in patch.lines() {
        if let Some(header) = text.strip_prefix("@@ ") {
            // `@@ -a,b +c,d @@`: the new file's hunk starts at line c.
            line = header
                .split_whitespace()
                .find_map(|part| part.strip_prefix('+'))
                .and_then(|range| range.split(',').next()?.parse().ok());
            continue;
        }
        let Some(n) = line.as_mut() else {
            continue;
        };
        match text.chars().next() {
            Some('+') => {
                added.push(*n);
                *n += 1;
            }
            Some('-') | Some('\\') => {}
            _ => *n += 1,
        }
    }
    added
}

/// A warning on each rule of an instruction file that the pull request adds or changes
/// (`added`: lines by path from the repository root) and that no test covers.
fn coverage_annotations(
    results: &Results,
    env: &GithubEnv,
    added: &std::collections::BTreeMap<String, Vec<u32>>,
) -> Vec<Annotation> {
    let Some(coverage) = &results.coverage else {
        return Vec::new();
    };
    coverage
        .rules
        .iter()
        .filter(|r| r.status == crate::verdict::coverage::RuleStatus::Uncovered)
        .filter_map(|rule| {
            let path = annotation_path(&rule.file, results.run_dir.as_deref(), env)?;
            let lines = added.get(&path)?;
            let changed = lines
                .iter()
                .any(|l| (rule.line..=rule.end_line).contains(l));
            if !changed {
                return None;
            }
            let (title, message) = bounded(
                &format!("Rule {} is not covered by any test", rule.id),
                &format!(
                    "This pull request changes a rule of {} that no test covers (`covers:`): {}",
                    rule.file, rule.text
                ),
            );
            Some(Annotation {
                path,
                line: rule.line,
                failure: false,
                title,
                message,
            })
        })
        .collect()
}

fn annotations(results: &Results, env: &GithubEnv) -> Vec<Annotation> {
    results
        .tests
        .iter()
        .flat_map(|t| test_annotations(t, results.run_dir.as_deref(), env))
        .collect()
}
