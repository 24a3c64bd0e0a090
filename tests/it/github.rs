//! `aptitude publish` against a mock GitHub API (wiremock): the exact requests octocrab
//! sends for the sticky comment and the check run, and what is written locally. Every
//! captured request is validated against GitHub's OpenAPI description, and the bodies are
//! rendered with a real GFM renderer (`crate::support::consumers`).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::support::cli::Aptitude;
use crate::support::consumers::{assert_openapi_valid, assert_renders_on_github, stress_results};
use crate::support::{data, root};

pub(crate) const PR_EVENT: &str = r#"{"pull_request": {"number": 7, "head": {"sha": "head-sha", "repo": {"full_name": "o/r", "fork": false}}}}"#;
const FORK_EVENT: &str = r#"{"pull_request": {"number": 7, "head": {"sha": "head-sha", "repo": {"full_name": "someone/r", "fork": true}}}}"#;

pub(crate) struct Gh {
    pub(crate) server: MockServer,
    dir: tempfile::TempDir,
}

impl Gh {
    pub(crate) async fn new(event: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("event.json"), event).unwrap();
        Gh {
            server: MockServer::start().await,
            dir,
        }
    }

    pub(crate) fn file(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Runs `aptitude publish RESULTS` in GitHub Actions' environment; (exit code, stdout).
    pub(crate) async fn publish(&self, results: &Path) -> (i32, String) {
        self.publish_in(results, &root(), &[]).await
    }

    /// [`Gh::publish`] from the directory `cwd` (the repository root is always
    /// `GITHUB_WORKSPACE`), with extra arguments.
    pub(crate) async fn publish_in(
        &self,
        results: &Path,
        cwd: &Path,
        extra: &[&str],
    ) -> (i32, String) {
        self.publish_with(results, cwd, extra, &[]).await
    }

    /// [`Gh::publish_in`] with extra environment variables (which win over the ones set
    /// here).
    pub(crate) async fn publish_with(
        &self,
        results: &Path,
        cwd: &Path,
        extra: &[&str],
        envs: &[(&str, &str)],
    ) -> (i32, String) {
        let mut cmd = Aptitude::new();
        cmd.current_dir(cwd)
            .env("GITHUB_API_URL", self.server.uri())
            .env("GITHUB_REPOSITORY", "o/r")
            .env("GITHUB_EVENT_PATH", self.file("event.json"))
            .env("GITHUB_SHA", "merge-sha")
            .env("GITHUB_STEP_SUMMARY", self.file("summary.md"))
            .env("GITHUB_OUTPUT", self.file("output"))
            .env("GITHUB_SERVER_URL", "https://github.com")
            .env("GITHUB_RUN_ID", "42")
            .env("GITHUB_TOKEN", "ghs_test_token_0123456789abcdefghij")
            .env("GITHUB_ACTOR", "dev")
            .env("GITHUB_WORKSPACE", root())
            .arg("publish")
            .arg(results)
            .args(["--report-path", "out/report.html"])
            .args(extra);
        // Last, so that a test can change any of the above.
        cmd.envs(envs.iter().copied());
        let out = tokio::task::spawn_blocking(move || cmd.output())
            .await
            .unwrap();
        (out.code, out.stdout + &out.stderr)
    }

    /// Every request sent so far is one GitHub's API documents, with a body its OpenAPI
    /// description accepts; returns the operations.
    pub(crate) async fn assert_valid_for_github(&self) -> Vec<String> {
        assert_openapi_valid(&self.requests().await)
    }

    pub(crate) async fn requests(&self) -> Vec<(String, String, Option<Value>)> {
        self.server
            .received_requests()
            .await
            .unwrap_or_default()
            .into_iter()
            .map(|r| {
                (
                    r.method.to_string(),
                    r.url.path().to_owned(),
                    serde_json::from_slice(&r.body).ok(),
                )
            })
            .collect()
    }

    pub(crate) async fn writes(&self) -> Vec<(String, String, Value)> {
        self.requests()
            .await
            .into_iter()
            .filter(|(m, _, _)| m != "GET")
            .map(|(m, p, b)| (m, p, b.unwrap_or(Value::Null)))
            .collect()
    }

    /// The body of the comment written (created or updated).
    pub(crate) async fn comment_body(&self) -> String {
        self.writes()
            .await
            .into_iter()
            .find(|(_, p, _)| p.contains("/comments"))
            .and_then(|(_, _, b)| b["body"].as_str().map(str::to_owned))
            .expect("a comment was written")
    }

    /// The bodies of the check-run writes (the creation, then the updates).
    pub(crate) async fn check_writes(&self) -> Vec<Value> {
        self.writes()
            .await
            .into_iter()
            .filter(|(_, p, _)| p.contains("/check-runs"))
            .map(|(_, _, b)| b)
            .collect()
    }

    /// An Actions token can not read `/user`.
    pub(crate) async fn forbid_user(&self) {
        Mock::given(method("GET"))
            .and(path("/user"))
            .respond_with(
                ResponseTemplate::new(403)
                    .set_body_json(json!({"message": "Resource not accessible by integration"})),
            )
            .mount(&self.server)
            .await;
    }

    pub(crate) async fn comments(&self, page: Option<&str>, body: Value, next: bool) {
        let mut m = Mock::given(method("GET")).and(path("/repos/o/r/issues/7/comments"));
        if let Some(p) = page {
            m = m.and(query_param("page", p));
        }
        let mut response = ResponseTemplate::new(200).set_body_json(body);
        if next {
            response = response.insert_header(
                "link",
                format!(
                    "<{}/repos/o/r/issues/7/comments?per_page=100&page=2>; rel=\"next\"",
                    self.server.uri()
                )
                .as_str(),
            );
        }
        m.respond_with(response).mount(&self.server).await;
    }

    pub(crate) async fn accept_writes(&self) {
        Mock::given(method("POST"))
            .and(path("/repos/o/r/issues/7/comments"))
            .respond_with(ResponseTemplate::new(201).set_body_json(json!({"id": 1001})))
            .mount(&self.server)
            .await;
        Mock::given(method("PATCH"))
            .and(path("/repos/o/r/issues/comments/555"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({"id": 555})))
            .mount(&self.server)
            .await;
        Mock::given(method("POST"))
            .and(path("/repos/o/r/check-runs"))
            .respond_with(ResponseTemplate::new(201).set_body_json(json!({"id": 77})))
            .mount(&self.server)
            .await;
        Mock::given(method("PATCH"))
            .and(path("/repos/o/r/check-runs/77"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({"id": 77})))
            .mount(&self.server)
            .await;
    }
}

pub(crate) fn comment(id: u64, login: &str, body: &str) -> Value {
    json!({"id": id, "user": {"login": login, "type": "Bot"}, "body": body})
}

const MARKER: &str = "<!-- aptitude:sticky-comment -->";

#[tokio::test]
async fn a_first_run_creates_the_comment_and_the_check_run() {
    let gh = Gh::new(PR_EVENT).await;
    gh.forbid_user().await;
    gh.comments(None, json!([]), false).await;
    gh.accept_writes().await;
    let (code, stdout) = gh.publish(&data("results/hostile.json")).await;
    assert_eq!(code, 1, "the exit code reflects the failed tests\n{stdout}");
    assert!(!stdout.contains("::warning"), "{stdout}");

    let writes = gh.writes().await;
    let summary: Vec<(&str, &str)> = writes
        .iter()
        .map(|(m, p, _)| (m.as_str(), p.as_str()))
        .collect();
    assert_eq!(
        summary,
        [
            ("POST", "/repos/o/r/check-runs"),
            ("POST", "/repos/o/r/issues/7/comments")
        ],
        "the check run first: the app it is created as writes the comment"
    );

    let body = writes[1].2["body"].as_str().unwrap();
    assert!(body.starts_with(MARKER), "{body}");
    assert!(body.contains("❌ aptitude: 3 of 4 tests failed"));
    assert!(body.contains("[Workflow run](https://github.com/o/r/actions/runs/42)"));
    for secret in ["sk-ant-api03-AAAA", "ghp_abcdefghijklmnop"] {
        assert!(!body.contains(secret), "the comment leaks {secret}");
    }

    let check = &writes[0].2;
    assert_eq!(check["name"], "aptitude");
    assert_eq!(
        check["head_sha"], "head-sha",
        "the PR head, not the merge commit"
    );
    assert_eq!(
        (check["status"].as_str(), check["conclusion"].as_str()),
        (Some("completed"), Some("failure"))
    );
    assert_eq!(check["output"]["title"], "aptitude: 3 of 4 tests failed");
    let annotations = check["output"]["annotations"].as_array().unwrap();
    assert_eq!(
        annotations.len(),
        7,
        "one per failing or unjudged assertion"
    );
    assert_eq!(
        annotations[0]["path"],
        "examples/counter/counter.aptitude.yaml"
    );
    assert_eq!(
        (
            annotations[0]["start_line"].as_u64(),
            annotations[0]["end_line"].as_u64()
        ),
        (Some(6), Some(6))
    );
    assert_eq!(annotations[0]["annotation_level"], "failure");
    assert_eq!(
        annotations[2]["annotation_level"], "warning",
        "a review that could not be graded is not a failure"
    );

    let step_summary = std::fs::read_to_string(gh.file("summary.md")).unwrap();
    assert!(step_summary.contains("3 of 4 tests failed"));
    let outputs = std::fs::read_to_string(gh.file("output")).unwrap();
    let delim = outputs
        .lines()
        .next()
        .unwrap()
        .strip_prefix("passed<<")
        .unwrap()
        .to_owned();
    for (name, value) in [
        ("passed", "1"),
        ("failed", "3"),
        ("errors", "0"),
        ("total", "4"),
        ("report-path", "out/report.html"),
    ] {
        assert!(
            outputs.contains(&format!("{name}<<{delim}\n{value}\n{delim}\n")),
            "{name}: {outputs}"
        );
    }
    assert_renders_on_github("the comment", body, None);
    assert_renders_on_github(
        "the check-run summary",
        check["output"]["summary"].as_str().unwrap(),
        None,
    );
    assert_renders_on_github("the job summary", &step_summary, None);
    assert_eq!(
        gh.assert_valid_for_github().await,
        [
            // The results have a coverage section: the pull request's files are read for
            // the instruction lines it adds that no test covers.
            "pulls/list-files",
            "checks/create",
            "users/get-authenticated",
            "issues/list-comments",
            "issues/create-comment"
        ]
    );
}

#[tokio::test]
async fn a_second_run_updates_its_comment_found_on_a_later_page() {
    let gh = Gh::new(PR_EVENT).await;
    gh.forbid_user().await;
    let others: Vec<Value> = (0..100).map(|i| comment(i, "reviewer", "LGTM")).collect();
    gh.comments(
        Some("2"),
        json!([comment(
            555,
            "github-actions[bot]",
            &format!("{MARKER}\nold")
        )]),
        false,
    )
    .await;
    gh.comments(None, Value::Array(others), true).await;
    gh.accept_writes().await;
    gh.publish(&data("results/hostile.json")).await;
    let writes = gh.writes().await;
    let comment_writes: Vec<(&str, &str)> = writes
        .iter()
        .filter(|(_, p, _)| p.contains("comments"))
        .map(|(m, p, _)| (m.as_str(), p.as_str()))
        .collect();
    assert_eq!(
        comment_writes,
        [("PATCH", "/repos/o/r/issues/comments/555")],
        "no new comment"
    );
    let gets = gh
        .requests()
        .await
        .into_iter()
        .filter(|(m, p, _)| m == "GET" && p.ends_with("/comments"))
        .count();
    assert_eq!(gets, 2, "every page of comments is read");
    gh.assert_valid_for_github().await;
}

#[tokio::test]
async fn comments_by_other_users_carrying_the_marker_are_left_alone() {
    let gh = Gh::new(PR_EVENT).await;
    gh.forbid_user().await;
    gh.comments(
        None,
        json!([comment(555, "mallory", &format!("{MARKER}\nfake"))]),
        false,
    )
    .await;
    gh.accept_writes().await;
    gh.publish(&data("results/hostile.json")).await;
    let writes = gh.writes().await;
    assert!(
        writes.iter().all(|(_, p, _)| !p.contains("/comments/555")),
        "{writes:?}"
    );
    assert!(
        writes
            .iter()
            .any(|(m, p, _)| m == "POST" && p == "/repos/o/r/issues/7/comments")
    );
    gh.assert_valid_for_github().await;
}

/// Which comment `publish` with `extra` arguments wrote to, given the PR's `comments` and
/// the app the check run is created as: `("PATCH", id)` or `("POST", 0)`.
async fn comment_written(comments: Value, app: Option<&str>, extra: &[&str]) -> (String, u64) {
    let gh = Gh::new(PR_EVENT).await;
    gh.forbid_user().await;
    gh.comments(None, comments, false).await;
    let mut check_run = json!({"id": 77});
    if let Some(slug) = app {
        check_run["app"] = json!({"slug": slug, "id": 1});
    }
    Mock::given(method("POST"))
        .and(path("/repos/o/r/check-runs"))
        .respond_with(ResponseTemplate::new(201).set_body_json(check_run))
        .mount(&gh.server)
        .await;
    for id in [555, 556] {
        Mock::given(method("PATCH"))
            .and(path(format!("/repos/o/r/issues/comments/{id}")))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({"id": id})))
            .mount(&gh.server)
            .await;
    }
    gh.accept_writes().await;
    let (_, log) = gh
        .publish_in(&data("results/hostile.json"), &root(), extra)
        .await;
    assert!(!log.contains("::warning"), "{log}");
    gh.assert_valid_for_github().await;
    let writes = gh.writes().await;
    let (m, p, _) = writes
        .iter()
        .find(|(_, p, _)| p.contains("/comments"))
        .expect("a comment was written");
    let id = p.rsplit('/').next().unwrap().parse().unwrap_or(0);
    (m.clone(), id)
}

#[tokio::test]
async fn a_marker_quoted_in_another_jobs_comment_is_never_this_jobs() {
    // Job A's agent printed job B's marker; aptitude put it in A's comment, in a code
    // block. Job B must not take A's comment for its own.
    let job_a = "<!-- aptitude:sticky-comment:job-a -->\n### ❌ aptitude: 1 of 1 tests failed\n\n```text\n<!-- aptitude:sticky-comment:job-b -->\n```\n";
    let quoted_first = "```text\n<!-- aptitude:sticky-comment:job-b -->\n```\n";
    let comments = json!([
        comment(555, "github-actions[bot]", job_a),
        comment(556, "github-actions[bot]", quoted_first),
    ]);
    assert_eq!(
        comment_written(comments.clone(), None, &["--report-key", "job-b"]).await,
        ("POST".to_owned(), 0),
        "job B creates its own comment"
    );
    assert_eq!(
        comment_written(comments, None, &["--report-key", "job-a"]).await,
        ("PATCH".to_owned(), 555),
        "job A finds its own"
    );
}

#[tokio::test]
async fn an_apps_token_finds_the_comment_its_app_wrote() {
    // An app's installation token can not read `/user`: its login is its app's bot, the
    // app the check run was created as.
    let comments = json!([
        comment(
            555,
            "github-actions[bot]",
            &format!("{MARKER}\nanother workflow's")
        ),
        comment(556, "my-app[bot]", &format!("{MARKER}\nours")),
    ]);
    assert_eq!(
        comment_written(comments.clone(), Some("my-app"), &[]).await,
        ("PATCH".to_owned(), 556)
    );
    // The Actions token: its check runs are github-actions' own.
    assert_eq!(
        comment_written(comments.clone(), Some("github-actions"), &[]).await,
        ("PATCH".to_owned(), 555)
    );
    // No check run to tell: the Actions token's author, never another app's comment.
    assert_eq!(
        comment_written(comments, None, &["--no-check-run"]).await,
        ("PATCH".to_owned(), 555)
    );
}

#[tokio::test]
async fn an_annotation_path_outside_the_repository_or_with_a_line_break_is_not_sent() {
    let mut results: Value =
        serde_json::from_str(&std::fs::read_to_string(data("results/hostile.json")).unwrap())
            .unwrap();
    let forged = [
        "examples/counter/counter.aptitude.yaml\n::error file=README.md::x",
        "../../etc/passwd",
        "/etc/passwd",
    ];
    let tests = results["tests"].as_array_mut().unwrap();
    for (t, file) in tests.iter_mut().zip(forged) {
        t["file"] = json!(file);
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("results.json");
    std::fs::write(&file, results.to_string()).unwrap();
    let gh = Gh::new(PR_EVENT).await;
    gh.forbid_user().await;
    gh.comments(None, json!([]), false).await;
    gh.accept_writes().await;
    gh.publish(&file).await;
    let writes = gh.check_writes().await;
    let annotations = writes[0]["output"]["annotations"].as_array().unwrap();
    let paths: Vec<&str> = annotations
        .iter()
        .map(|a| a["path"].as_str().unwrap())
        .collect();
    assert!(!paths.is_empty(), "the other tests are annotated");
    for p in &paths {
        assert!(
            !p.contains(['\n', '\r']) && !p.starts_with('/') && !p.contains(".."),
            "{p:?}"
        );
    }
    gh.assert_valid_for_github().await;
}

fn results_with(failing: usize, detail_len: usize) -> PathBuf {
    let mut results: Value =
        serde_json::from_str(&std::fs::read_to_string(data("results/hostile.json")).unwrap())
            .unwrap();
    let tests = results["tests"].as_array_mut().unwrap();
    let template = tests[0]["assertions"][0].clone();
    let assertions: Vec<Value> = (0..failing)
        .map(|i| {
            let mut a = template.clone();
            a["line"] = json!(i + 1);
            a["description"] = json!(format!("assertion {i}"));
            a["detail"] = json!("x".repeat(detail_len));
            a
        })
        .collect();
    for t in tests.iter_mut() {
        t["assertions"] = json!(assertions.clone());
    }
    // Under the tests' own temp directory (`target/tmp`), not the system's: a suite run
    // left two of these in /tmp every time.
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "aptitude-gh-{}-{failing}-{detail_len}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("results.json");
    std::fs::write(&file, serde_json::to_string(&results).unwrap()).unwrap();
    file
}

#[tokio::test]
async fn annotations_are_sent_fifty_per_request() {
    let gh = Gh::new(PR_EVENT).await;
    gh.forbid_user().await;
    gh.comments(None, json!([]), false).await;
    gh.accept_writes().await;
    // 4 tests × 30 failing assertions = 120 annotations.
    gh.publish(&results_with(30, 10)).await;
    let checks: Vec<(String, usize)> = gh
        .writes()
        .await
        .into_iter()
        .filter(|(_, p, _)| p.starts_with("/repos/o/r/check-runs"))
        .map(|(m, _, b)| (m, b["output"]["annotations"].as_array().map_or(0, Vec::len)))
        .collect();
    assert_eq!(
        checks,
        [
            ("POST".to_owned(), 50),
            ("PATCH".to_owned(), 50),
            ("PATCH".to_owned(), 20)
        ]
    );
    gh.assert_valid_for_github().await;
}

#[tokio::test]
async fn a_huge_body_is_truncated_below_the_limit() {
    let gh = Gh::new(PR_EVENT).await;
    gh.forbid_user().await;
    gh.comments(None, json!([]), false).await;
    gh.accept_writes().await;
    gh.publish(&results_with(20, 1_000)).await;
    let body = gh.comment_body().await;
    assert!(
        body.chars().count() <= 65_536,
        "{} chars",
        body.chars().count()
    );
    assert!(body.contains("not shown"), "a truncation notice");
    assert!(
        body.contains("https://github.com/o/r/actions/runs/42"),
        "a link to the run and its report"
    );
    let summary = gh.check_writes().await[0]["output"]["summary"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(summary.chars().count() <= 65_535);
    gh.assert_valid_for_github().await;
}

#[tokio::test]
async fn an_api_failure_is_a_warning_and_the_exit_code_stays() {
    let gh = Gh::new(PR_EVENT).await;
    gh.forbid_user().await;
    gh.comments(None, json!([]), false).await;
    Mock::given(method("POST"))
        .and(path("/repos/o/r/issues/7/comments"))
        .respond_with(ResponseTemplate::new(500).set_body_json(json!({"message": "Server Error"})))
        .expect(1)
        .mount(&gh.server)
        .await;
    gh.accept_writes().await;
    let (code, stdout) = gh.publish(&data("results/hostile.json")).await;
    assert_eq!(code, 1, "still the tests' exit code");
    assert!(
        stdout.contains(
            "::warning title=aptitude::could not post the PR comment: HTTP 500: Server Error"
        ),
        "{stdout}"
    );
    let posts = gh
        .writes()
        .await
        .into_iter()
        .filter(|(m, p, _)| m == "POST" && p.ends_with("/comments"))
        .count();
    assert_eq!(posts, 1, "a failed POST is not retried");
    assert!(
        gh.writes()
            .await
            .iter()
            .any(|(_, p, _)| p == "/repos/o/r/check-runs"),
        "the check run is still created"
    );
    gh.assert_valid_for_github().await;
}

/// 120 failing tests with ~5 KB of non-ASCII text and emoji each: every body GitHub limits
/// stays within its limit in bytes, is accepted by GitHub's OpenAPI description, and
/// renders as intended under GFM with the notice linking to the run's artifacts.
#[tokio::test]
async fn a_stress_suite_stays_within_every_github_limit() {
    let dir = tempfile::tempdir().unwrap();
    let gh = Gh::new(PR_EVENT).await;
    gh.forbid_user().await;
    gh.comments(None, json!([]), false).await;
    gh.accept_writes().await;
    let (code, stdout) = gh.publish(&stress_results(dir.path())).await;
    assert_eq!(code, 1, "{stdout}");
    assert!(!stdout.contains("::warning"), "{stdout}");
    let comment = gh.comment_body().await;
    assert!(comment.len() <= 65_536, "comment: {} bytes", comment.len());
    let writes = gh.check_writes().await;
    let checks: Vec<&Value> = writes.iter().map(|b| &b["output"]).collect();
    let mut annotations = 0;
    for output in &checks {
        let summary = output["summary"].as_str().unwrap();
        assert!(summary.len() <= 65_535, "summary: {} bytes", summary.len());
        assert!(output["text"].as_str().is_none_or(|t| t.len() <= 65_535));
        for a in output["annotations"].as_array().unwrap() {
            let message = a["message"].as_str().unwrap();
            assert!(message.len() <= 64 * 1024, "{} bytes", message.len());
            assert!(a["title"].as_str().unwrap().chars().count() <= 255);
            annotations += 1;
        }
    }
    assert_eq!(annotations, 360, "every failing assertion is annotated");
    let step_summary = std::fs::read_to_string(gh.file("summary.md")).unwrap();
    assert!(step_summary.len() <= 1024 * 1024);
    let artifacts = "https://github.com/o/r/actions/runs/42#artifacts";
    assert_renders_on_github("the comment", &comment, Some(artifacts));
    assert_renders_on_github(
        "the check-run summary",
        checks[0]["summary"].as_str().unwrap(),
        Some(artifacts),
    );
    assert_renders_on_github("the job summary", &step_summary, None);
    gh.assert_valid_for_github().await;
}

/// Results name test files relative to where `run` ran (here the repository root);
/// `publish` run from a subdirectory still gives paths from the root, and a test that
/// errored as a whole (a timeout) is annotated at its `name:` line.
#[tokio::test]
async fn publish_from_a_subdirectory_annotates_repository_paths_and_errored_tests() {
    let dir = tempfile::tempdir().unwrap();
    let mut results: Value =
        serde_json::from_str(&std::fs::read_to_string(data("results/hostile.json")).unwrap())
            .unwrap();
    let errored = &mut results["tests"][1];
    errored["status"] = json!("error");
    errored["error"] = json!("the agent timed out after 300s");
    errored["assertions"] = json!([]);
    let file = dir.path().join("results.json");
    std::fs::write(&file, serde_json::to_string(&results).unwrap()).unwrap();

    let gh = Gh::new(PR_EVENT).await;
    gh.forbid_user().await;
    gh.comments(None, json!([]), false).await;
    gh.accept_writes().await;
    let (_, stdout) = gh
        .publish_in(&file, &root().join("examples/counter"), &[])
        .await;
    assert!(!stdout.contains("::warning"), "{stdout}");
    let writes = gh.check_writes().await;
    let annotations = writes[0]["output"]["annotations"].as_array().unwrap();
    let at: Vec<(&str, u64)> = annotations
        .iter()
        .map(|a| {
            (
                a["path"].as_str().unwrap(),
                a["start_line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert!(
        at.contains(&("examples/counter/counter.aptitude.yaml", 6)),
        "{at:?}"
    );
    let hello =
        std::fs::read_to_string(root().join("examples/hello-script/hello.aptitude.yaml")).unwrap();
    let name_line = hello.lines().position(|l| l.starts_with("name:")).unwrap() + 1;
    let timeout: Vec<&Value> = annotations
        .iter()
        .filter(|a| a["path"] == "examples/hello-script/hello.aptitude.yaml")
        .collect();
    assert_eq!(timeout.len(), 1, "{annotations:?}");
    assert_eq!(timeout[0]["start_line"].as_u64(), Some(name_line as u64));
    assert!(
        timeout[0]["message"]
            .as_str()
            .unwrap()
            .contains("timed out after 300s")
    );
    gh.assert_valid_for_github().await;
}

/// Results record the directory `run` ran in: tests run from a subdirectory and published
/// from the repository root are annotated at their paths from the root.
#[tokio::test]
async fn a_run_from_a_subdirectory_is_annotated_at_repository_paths() {
    let dir = tempfile::tempdir().unwrap();
    let mut results: Value =
        serde_json::from_str(&std::fs::read_to_string(data("results/hostile.json")).unwrap())
            .unwrap();
    results["run_dir"] = json!(root().join("examples/counter").display().to_string());
    results["tests"][0]["file"] = json!("./counter.aptitude.yaml");
    results["tests"][2]["file"] = json!("../hostile.aptitude.yaml");
    results["tests"][3]["file"] = json!("../push-to-github/push.aptitude.yaml");
    let file = dir.path().join("results.json");
    std::fs::write(&file, serde_json::to_string(&results).unwrap()).unwrap();
    let gh = Gh::new(PR_EVENT).await;
    gh.forbid_user().await;
    gh.comments(None, json!([]), false).await;
    gh.accept_writes().await;
    gh.publish(&file).await;
    let writes = gh.check_writes().await;
    let mut paths: Vec<&str> = writes[0]["output"]["annotations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["path"].as_str().unwrap())
        .collect();
    paths.dedup();
    assert_eq!(
        paths,
        [
            "examples/counter/counter.aptitude.yaml",
            "examples/hostile.aptitude.yaml",
            "examples/push-to-github/push.aptitude.yaml"
        ]
    );
    gh.assert_valid_for_github().await;
}

/// The results-version check is in results reading: `publish` refuses results of another
/// version, and so does `--baseline` (a warning: publishing goes on without comparison).
#[tokio::test]
async fn results_of_another_version_are_refused_by_publish_and_as_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let future = dir.path().join("future.json");
    let mut results: Value =
        serde_json::from_str(&std::fs::read_to_string(data("results/hostile.json")).unwrap())
            .unwrap();
    results["version"] = json!(4);
    std::fs::write(&future, serde_json::to_string(&results).unwrap()).unwrap();
    let gh = Gh::new(PR_EVENT).await;
    gh.forbid_user().await;
    gh.comments(None, json!([]), false).await;
    gh.accept_writes().await;
    let (code, out) = gh.publish(&future).await;
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("has results version 4; this aptitude reads versions 1 to 3"),
        "{out}"
    );
    assert!(gh.writes().await.is_empty(), "nothing is published");

    let baseline = future.to_str().unwrap();
    let (code, out) = gh
        .publish_in(
            &data("results/hostile.json"),
            &root(),
            &["--baseline", baseline],
        )
        .await;
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("no baseline comparison") && out.contains("results version 4"),
        "{out}"
    );
    gh.assert_valid_for_github().await;
}

#[tokio::test]
async fn a_fork_pull_request_makes_no_write_call() {
    let gh = Gh::new(FORK_EVENT).await;
    gh.forbid_user().await;
    gh.comments(None, json!([]), false).await;
    gh.accept_writes().await;
    let (code, stdout) = gh.publish(&data("results/hostile.json")).await;
    assert_eq!(code, 1);
    assert!(gh.requests().await.is_empty(), "no API call at all");
    assert_eq!(stdout.matches("::warning").count(), 1, "{stdout}");
    assert!(
        stdout.contains("comes from a fork") && stdout.contains("workflow_run"),
        "{stdout}"
    );
    assert!(
        std::fs::read_to_string(gh.file("summary.md"))
            .unwrap()
            .contains("3 of 4 tests failed"),
        "the job summary is still written"
    );
    gh.assert_valid_for_github().await;
}

/// The environment of a PR job of `agents.yml` whose results artifact is `aptitude-job`.
const AUTO_ENV: &[(&str, &str)] = &[
    (
        "GITHUB_WORKFLOW_REF",
        "o/r/.github/workflows/agents.yml@refs/pull/7/merge",
    ),
    ("GITHUB_BASE_REF", "main"),
    ("APTITUDE_ARTIFACT_NAME", "aptitude-job"),
];

/// A successful workflow run `id` as the runs listing shows it: of `repo`'s branch `main`,
/// started by `event`.
fn workflow_run(id: u64, repo: &str, event: &str) -> Value {
    json!({
        "id": id, "head_branch": "main", "event": event,
        "head_repository": {"full_name": repo},
    })
}

/// A zip holding `results.json` with `text`.
fn artifact_zip(text: &str) -> Vec<u8> {
    let mut buf = std::io::Cursor::new(Vec::new());
    let mut w = zip::ZipWriter::new(&mut buf);
    w.start_file("report.html", zip::write::SimpleFileOptions::default())
        .unwrap();
    std::io::Write::write_all(&mut w, b"<html></html>").unwrap();
    w.start_file("results.json", zip::write::SimpleFileOptions::default())
        .unwrap();
    std::io::Write::write_all(&mut w, text.as_bytes()).unwrap();
    w.finish().unwrap();
    buf.into_inner()
}

impl Gh {
    /// Two pages of successful `agents.yml` runs on `main`: page 1 holds this run (42,
    /// left out) and run 40 without the artifact; page 2 run 30 with it (artifact 300).
    async fn runs_with_artifact_on_page_two(&self, download: ResponseTemplate) {
        let runs = "/repos/o/r/actions/workflows/agents.yml/runs";
        Mock::given(method("GET"))
            .and(path(runs))
            .and(query_param("branch", "main"))
            .and(query_param("status", "success"))
            .and(query_param("page", "2"))
            .respond_with(ResponseTemplate::new(200).set_body_json(
                json!({"total_count": 3, "workflow_runs": [workflow_run(30, "o/r", "push")]}),
            ))
            .expect(1)
            .mount(&self.server)
            .await;
        Mock::given(method("GET"))
            .and(path(runs))
            .and(query_param("branch", "main"))
            .and(query_param("status", "success"))
            .and(query_param("per_page", "20"))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_json(
                        json!({"total_count": 3, "workflow_runs": [
                            workflow_run(42, "o/r", "pull_request"),
                            workflow_run(40, "o/r", "push"),
                        ]}),
                    )
                    .insert_header(
                        "link",
                        format!(
                            "<{}{runs}?branch=main&status=success&per_page=20&page=2>; rel=\"next\"",
                            self.server.uri()
                        )
                        .as_str(),
                    ),
            )
            .expect(1)
            .mount(&self.server)
            .await;
        for (run, artifacts) in [
            (40, json!([])),
            (
                30,
                json!([{"id": 300, "name": "aptitude-job", "expired": false}]),
            ),
        ] {
            Mock::given(method("GET"))
                .and(path(format!("/repos/o/r/actions/runs/{run}/artifacts")))
                .and(query_param("name", "aptitude-job"))
                .respond_with(ResponseTemplate::new(200).set_body_json(
                    json!({"total_count": artifacts.as_array().unwrap().len(), "artifacts": artifacts}),
                ))
                .expect(1)
                .mount(&self.server)
                .await;
        }
        Mock::given(method("GET"))
            .and(path("/repos/o/r/actions/artifacts/300/zip"))
            .respond_with(download)
            .expect(1)
            .mount(&self.server)
            .await;
    }
}

#[tokio::test]
async fn baseline_auto_downloads_the_base_branchs_latest_results_artifact() {
    // The baseline: the same tests, all passing.
    let mut baseline: Value =
        serde_json::from_str(&std::fs::read_to_string(data("results/hostile.json")).unwrap())
            .unwrap();
    for t in baseline["tests"].as_array_mut().unwrap() {
        t["status"] = json!("passed");
    }
    // GitHub redirects the download to its storage, another host, with a signed URL.
    let storage = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/blob/300.zip"))
        .and(query_param("sig", "signed"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_bytes(artifact_zip(&serde_json::to_string(&baseline).unwrap())),
        )
        .expect(1)
        .mount(&storage)
        .await;
    let gh = Gh::new(PR_EVENT).await;
    gh.forbid_user().await;
    gh.comments(None, json!([]), false).await;
    gh.accept_writes().await;
    gh.runs_with_artifact_on_page_two(ResponseTemplate::new(302).insert_header(
        "location",
        format!("{}/blob/300.zip?sig=signed", storage.uri()).as_str(),
    ))
    .await;
    let (code, out) = gh
        .publish_with(
            &data("results/hostile.json"),
            &root(),
            &["--baseline", "github:auto"],
            AUTO_ENV,
        )
        .await;
    assert_eq!(code, 1, "{out}");
    assert!(!out.contains("::notice"), "{out}");
    let body = gh.comment_body().await;
    assert!(
        body.contains("**Compared with the baseline:**") && body.contains("🔴 regressions (3)"),
        "{body}"
    );
    // The exact reads, in order; the storage never sees the token.
    let reads: Vec<String> = gh
        .server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.url.path().contains("/actions/"))
        .map(|r| format!("{} {}", r.url.path(), r.url.query().unwrap_or("")))
        .collect();
    assert_eq!(
        reads,
        [
            "/repos/o/r/actions/workflows/agents.yml/runs branch=main&status=success&per_page=20",
            "/repos/o/r/actions/runs/40/artifacts per_page=100&name=aptitude-job",
            "/repos/o/r/actions/workflows/agents.yml/runs branch=main&status=success&per_page=20&page=2",
            "/repos/o/r/actions/runs/30/artifacts per_page=100&name=aptitude-job",
            "/repos/o/r/actions/artifacts/300/zip ",
        ]
    );
    let blob = &storage.received_requests().await.unwrap()[0];
    assert!(
        !blob.headers.contains_key("authorization"),
        "the token does not follow the redirect to storage"
    );
    gh.assert_valid_for_github().await;
}

#[tokio::test]
async fn an_expired_baseline_artifact_is_one_notice_and_the_run_goes_on() {
    let gh = Gh::new(PR_EVENT).await;
    gh.forbid_user().await;
    gh.comments(None, json!([]), false).await;
    gh.accept_writes().await;
    gh.runs_with_artifact_on_page_two(
        ResponseTemplate::new(410).set_body_json(json!({"message": "Artifact has expired"})),
    )
    .await;
    let (code, out) = gh
        .publish_with(
            &data("results/hostile.json"),
            &root(),
            &["--baseline", "github:auto"],
            AUTO_ENV,
        )
        .await;
    assert_eq!(code, 1, "the exit code reflects the tests\n{out}");
    assert_eq!(out.matches("::notice").count(), 1, "one notice\n{out}");
    assert!(
        out.contains("::notice title=aptitude::no baseline, going on without one: the results artifact aptitude-job of run 30 has expired"),
        "{out}"
    );
    let body = gh.comment_body().await;
    assert!(!body.contains("Compared with the baseline"), "{body}");
}

#[tokio::test]
async fn baseline_auto_skips_fork_and_pull_request_runs_even_when_newest() {
    let mut baseline: Value =
        serde_json::from_str(&std::fs::read_to_string(data("results/hostile.json")).unwrap())
            .unwrap();
    for t in baseline["tests"].as_array_mut().unwrap() {
        t["status"] = json!("passed");
    }
    let gh = Gh::new(PR_EVENT).await;
    gh.forbid_user().await;
    gh.comments(None, json!([]), false).await;
    gh.accept_writes().await;
    // Newest first: a fork's run from its own branch `main`, a pull request's run in this
    // repository, then the base branch's push run. All three carry the artifact.
    Mock::given(method("GET"))
        .and(path("/repos/o/r/actions/workflows/agents.yml/runs"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "total_count": 3,
            "workflow_runs": [
                workflow_run(45, "attacker/r", "push"),
                workflow_run(44, "o/r", "pull_request"),
                workflow_run(43, "o/r", "push"),
            ],
        })))
        .expect(1)
        .mount(&gh.server)
        .await;
    for run in [45, 44, 43] {
        Mock::given(method("GET"))
            .and(path(format!("/repos/o/r/actions/runs/{run}/artifacts")))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "total_count": 1,
                "artifacts": [{"id": run * 10, "name": "aptitude-job", "expired": false}],
            })))
            .expect(u64::from(run == 43))
            .mount(&gh.server)
            .await;
        Mock::given(method("GET"))
            .and(path(format!(
                "/repos/o/r/actions/artifacts/{}/zip",
                run * 10
            )))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_bytes(artifact_zip(&serde_json::to_string(&baseline).unwrap())),
            )
            .expect(u64::from(run == 43))
            .mount(&gh.server)
            .await;
    }
    let (code, out) = gh
        .publish_with(
            &data("results/hostile.json"),
            &root(),
            &["--baseline", "github:auto"],
            AUTO_ENV,
        )
        .await;
    assert_eq!(code, 1, "{out}");
    assert!(!out.contains("::notice"), "{out}");
    let reads: Vec<String> = gh
        .server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.url.path().contains("/actions/"))
        .map(|r| r.url.path().to_owned())
        .collect();
    assert_eq!(
        reads,
        [
            "/repos/o/r/actions/workflows/agents.yml/runs",
            "/repos/o/r/actions/runs/43/artifacts",
            "/repos/o/r/actions/artifacts/430/zip",
        ],
        "the fork's and the pull request's artifacts are never read"
    );
    let body = gh.comment_body().await;
    assert!(body.contains("🔴 regressions (3)"), "{body}");
}

#[tokio::test]
async fn baseline_auto_with_only_fork_runs_is_a_notice_naming_the_skipped_runs() {
    let gh = Gh::new(PR_EVENT).await;
    gh.forbid_user().await;
    gh.comments(None, json!([]), false).await;
    gh.accept_writes().await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/actions/workflows/agents.yml/runs"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "total_count": 1,
            "workflow_runs": [workflow_run(45, "attacker/r", "pull_request")],
        })))
        .mount(&gh.server)
        .await;
    let (code, out) = gh
        .publish_with(
            &data("results/hostile.json"),
            &root(),
            &["--baseline", "github:auto"],
            AUTO_ENV,
        )
        .await;
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("(looked at 1 run, skipped 1 of forks or pull requests)"),
        "{out}"
    );
    let body = gh.comment_body().await;
    assert!(!body.contains("Compared with the baseline"), "{body}");
}

/// A pull request that adds rules to an instruction file gets a warning on each added rule
/// no test covers — not on a covered one, not on an uncovered rule it did not touch; the
/// comment gives the coverage per file.
#[tokio::test]
async fn a_changed_instruction_line_no_test_covers_is_annotated() {
    let dir = tempfile::tempdir().unwrap();
    let mut results: Value =
        serde_json::from_str(&std::fs::read_to_string(data("results/hostile.json")).unwrap())
            .unwrap();
    results["run_dir"] = json!(root().display().to_string());
    let rule = |line: u32, id: &str, text: &str, tests: &[&str]| {
        json!({"file": "tests/fixture/AGENTS.md", "line": line, "end_line": line, "id": id,
               "headings": ["Rules"], "text": text, "tests": tests, "runs": 0,
               "status": if tests.is_empty() { "uncovered" } else { "covered" }})
    };
    results["coverage"] = json!({
        "rules": [
            rule(3, "R00000003", "Run the linter before every commit.", &[]),
            rule(4, "R00000004", "Add a test for each bug fix.", &["t.aptitude.yaml::t"]),
            rule(9, "R00000009", "Keep functions short.", &[]),
        ],
        "files": [{"file": "tests/fixture/AGENTS.md", "covered": 1, "rules": 3}],
        "totals": {"covered": 1, "rules": 3}
    });
    let file = dir.path().join("results.json");
    std::fs::write(&file, serde_json::to_string(&results).unwrap()).unwrap();
    let gh = Gh::new(PR_EVENT).await;
    gh.forbid_user().await;
    gh.comments(None, json!([]), false).await;
    gh.accept_writes().await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/pulls/7/files"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([
            {"sha": "abc", "filename": "tests/fixture/AGENTS.md", "status": "modified",
             "additions": 2, "deletions": 0, "changes": 2, "blob_url": "https://github.com/o/r/blob/x/a",
             "raw_url": "https://github.com/o/r/raw/x/a", "contents_url": "https://api.github.com/x",
             "patch": "@@ -1,2 +1,4 @@\n # Rules\n \n+- Run the linter before every commit.\n+- Add a test for each bug fix."}
        ])))
        .mount(&gh.server)
        .await;
    let (_, stdout) = gh.publish(&file).await;
    let writes = gh.check_writes().await;
    let annotations: Vec<&Value> = writes
        .iter()
        .flat_map(|w| w["output"]["annotations"].as_array().unwrap())
        .filter(|a| a["path"] == "tests/fixture/AGENTS.md")
        .collect();
    assert_eq!(annotations.len(), 1, "{annotations:#?}\n{stdout}");
    assert_eq!(annotations[0]["start_line"], 3);
    assert_eq!(annotations[0]["annotation_level"], "warning");
    assert!(
        annotations[0]["title"]
            .as_str()
            .unwrap()
            .contains("R00000003 is not covered"),
        "{annotations:#?}"
    );
    let body = gh.comment_body().await;
    assert!(
        body.contains("Instruction coverage: 1 of 3 rules"),
        "{body}"
    );
    gh.assert_valid_for_github().await;
}

/// Issue 44: ordinary text with a URL and a multi-byte character after a word ("docs — they")
/// made the Markdown renderer panic, so `publish --baseline` exited 101 before anything was
/// posted and the pull request kept its earlier ✅ comment. The same text in a test's name,
/// an assertion and its detail now publishes: the comment and the check run are written,
/// the text shows (inert: no live mention, no autolink), and the exit code is the tests'.
#[tokio::test]
async fn ordinary_text_with_a_url_and_an_em_dash_is_published() {
    const TEXT: &str =
        "@octocat: read the docs at https://example.com/docs — they are short; www.é—x.com";
    let mut results: Value =
        serde_json::from_str(&std::fs::read_to_string(data("results/hostile.json")).unwrap())
            .unwrap();
    for t in results["tests"].as_array_mut().unwrap() {
        t["name"] = json!(format!("rule — {TEXT}"));
        for a in t["assertions"].as_array_mut().unwrap() {
            a["description"] = json!(TEXT);
            a["detail"] = json!(format!("{TEXT}\n{TEXT}"));
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("results.json");
    std::fs::write(&file, serde_json::to_string(&results).unwrap()).unwrap();
    let gh = Gh::new(PR_EVENT).await;
    gh.forbid_user().await;
    gh.comments(None, json!([]), false).await;
    gh.accept_writes().await;
    let baseline = file.to_str().unwrap();
    let (code, out) = gh
        .publish_in(&file, &root(), &["--baseline", baseline])
        .await;
    assert_eq!(code, 1, "the tests' exit code, not a panic's 101: {out}");
    assert!(!out.contains("panicked"), "{out}");
    let body = gh.comment_body().await;
    assert!(
        body.contains("docs — they are short"),
        "the text is shown: {body}"
    );
    // The test's row: inline Markdown, where GFM would link a mention or a URL.
    let row = body
        .lines()
        .find(|l| l.contains("| rule — "))
        .unwrap_or_else(|| panic!("the test's row: {body}"));
    assert!(row.contains("@\u{2060}octocat"), "no live mention: {row}");
    assert!(
        row.contains("https:\u{2060}//example.com"),
        "no autolink: {row}"
    );
    assert_eq!(gh.check_writes().await.len(), 1, "the check run is created");
    gh.assert_valid_for_github().await;
}
