//! Reports re-rendered from a results file (`aptitude report`): Markdown and JUnit
//! snapshots, secret redaction in every output, the Markdown size bound, and the HTML report
//! in real headless Chromium.
//!
//! `tests/data/results/hostile.json` holds results whose agent output carries `<script>`,
//! `@mentions`, `</details>`, table pipes, and secrets (an Anthropic key, a GitHub token,
//! and a value that is secret by its variable's name).

use std::path::Path;

use assert_cmd::Command;

use crate::support::{data, node_json, root};

const SECRETS: &[&str] = &[
    "sk-ant-api03-AAAA",
    "ghp_abcdefghijklmnop",
    "supersecretvalue123",
];

fn report(dir: &Path, extra: &[&str]) -> std::process::Output {
    Command::cargo_bin("aptitude")
        .unwrap()
        .env_clear()
        .env("MY_API_KEY", "supersecretvalue123")
        .current_dir(root())
        .arg("report")
        .arg(data("results/hostile.json"))
        .arg("--html")
        .arg(dir.join("report.html"))
        .arg("--markdown")
        .arg(dir.join("summary.md"))
        .arg("--junit")
        .arg(dir.join("junit.xml"))
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn markdown_and_junit_snapshots_with_neutralized_agent_text() {
    let dir = tempfile::tempdir().unwrap();
    let out = report(dir.path(), &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let md = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    insta::assert_snapshot!("summary_md", md);
    insta::assert_snapshot!("junit_xml", junit);

    // Outside code blocks the agent's text can not open HTML, mention, or break the table.
    let outside_code: String = md.split("```").step_by(2).collect::<Vec<_>>().join("");
    assert!(!outside_code.contains("<script"), "{outside_code}");
    assert!(
        !outside_code.contains("@octocat"),
        "mentions are broken with a word joiner"
    );
    let closing_outside = outside_code.matches("</details>").count();
    assert_eq!(
        outside_code.matches("<details>").count(),
        closing_outside,
        "agent text closes no <details>"
    );
    for line in md.lines().filter(|l| l.starts_with("| ")) {
        assert_eq!(
            line.matches(" | ").count() + 2,
            7,
            "a table row keeps its 6 cells: {line}"
        );
    }
}

#[test]
fn secrets_never_reach_a_report() {
    let dir = tempfile::tempdir().unwrap();
    let out = report(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(0));
    for file in ["report.html", "summary.md", "junit.xml"] {
        let text = std::fs::read_to_string(dir.path().join(file)).unwrap();
        for secret in SECRETS {
            assert!(!text.contains(secret), "{file} leaks {secret}");
        }
        assert!(
            text.contains("[REDACTED]"),
            "{file} shows where a secret was"
        );
    }
}

#[test]
fn secrets_are_redacted_from_terminal_and_results_json_too() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::cargo_bin("aptitude")
        .unwrap()
        .env_clear()
        .env("MY_API_KEY", "supersecretvalue123")
        .current_dir(root())
        .arg("analyze")
        .arg("tests/data/hostile/hostile.aptitude.yaml")
        .arg("tests/data/hostile/hostile.transcript.jsonl")
        .arg("--json")
        .arg(dir.path().join("r.json"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let json = std::fs::read_to_string(dir.path().join("r.json")).unwrap();
    for secret in SECRETS {
        assert!(
            !stdout.contains(secret) && !json.contains(secret),
            "{secret} leaked"
        );
    }
    let transcript = Command::cargo_bin("aptitude")
        .unwrap()
        .env_clear()
        .current_dir(root())
        .args([
            "transcript",
            "--json",
            "tests/data/hostile/hostile.transcript.jsonl",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&transcript.stdout);
    assert!(
        !text.contains("sk-ant-api03") && text.contains("[REDACTED]"),
        "{text}"
    );
}

#[test]
fn markdown_is_bounded_with_a_notice() {
    let dir = tempfile::tempdir().unwrap();
    let out = report(dir.path(), &["--markdown-max-chars", "2500"]);
    assert_eq!(out.status.code(), Some(0));
    let md = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert!(md.chars().count() <= 2500, "{} chars", md.chars().count());
    assert!(md.contains("more failing test"), "{md}");
}

#[test]
fn report_needs_an_output_and_a_results_file() {
    let out = Command::cargo_bin("aptitude")
        .unwrap()
        .env_clear()
        .current_dir(root())
        .arg("report")
        .arg(data("results/hostile.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing to write"));
    let out = Command::cargo_bin("aptitude")
        .unwrap()
        .env_clear()
        .current_dir(root())
        .args(["report", "Cargo.toml", "--junit", "/tmp/x.xml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not an aptitude results file"));
}

/// The HTML report in Debian's Chromium (installed by `scripts/test` when missing), driven
/// by playwright-core: the counts shown, a failure's reasoning visible once expanded, the
/// failures-only filter, and an injected `<script>` that did not run. The screenshot goes
/// to `docs/images/report.png` when `APTITUDE_UPDATE_DOCS=1`.
#[test]
fn html_report_in_headless_chromium() {
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    assert!(
        Path::new(&chromium).exists(),
        "{chromium} is missing: `scripts/test` installs Debian's chromium"
    );
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(report(dir.path(), &[]).status.code(), Some(0));
    let shot = if std::env::var_os("APTITUDE_UPDATE_DOCS").is_some() {
        root().join("docs/images/report.png")
    } else {
        dir.path().join("report.png")
    };
    let report = dir.path().join("report.html");
    let seen = node_json(
        "tests/browser/check-report.mjs",
        &[report.as_os_str(), shot.as_os_str()],
        &[("CHROMIUM", &chromium)],
    );
    assert_eq!(
        seen["counts"],
        serde_json::json!({"total": "4", "passed": "1", "failed": "3", "error": "0"})
    );
    assert_eq!(seen["hiddenBefore"], true, "reasoning starts collapsed");
    assert_eq!(seen["visibleAfter"], true, "and shows once expanded");
    assert!(!seen["reasoningText"].as_str().unwrap().is_empty());
    assert_eq!(
        (
            seen["passedVisibleBefore"].clone(),
            seen["passedVisibleAfter"].clone()
        ),
        (true.into(), false.into())
    );
    assert_eq!(
        seen["pwned"],
        serde_json::Value::Null,
        "an injected <script> must not run"
    );
    assert!(
        seen["answerText"].as_array().unwrap().iter().any(|a| a
            .as_str()
            .unwrap()
            .contains("<script>window.__pwned=1</script>")),
        "the agent's <script> shows as text: {seen}"
    );
    assert_eq!(
        seen["errors"],
        serde_json::json!([]),
        "the page's own script runs without errors"
    );
    assert!(
        std::fs::metadata(&shot).unwrap().len() > 10_000,
        "a screenshot was taken"
    );
}
