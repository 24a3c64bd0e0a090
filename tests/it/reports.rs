//! Reports re-rendered from a results file (`aptitude report`): Markdown and JUnit
//! snapshots, secret redaction in every output, the Markdown size bound, and the HTML report
//! in real headless Chromium.
//!
//! `tests/data/results/hostile.json` holds results whose agent output carries `<script>`,
//! `@mentions`, `</details>`, table pipes, and secrets (an Anthropic key, a GitHub token,
//! and a value that is secret by its variable's name).

use std::path::Path;

use serde_json::{Value, json};

use crate::support::cli::{Aptitude, Output};
use crate::support::consumers::{
    assert_renders_on_github, gfm, openapi_check, python_json, stress_results, xmllint,
};
use crate::support::{data, node_json, root};

const SECRETS: &[&str] = &[
    "sk-ant-api03-AAAA",
    "ghp_abcdefghijklmnop",
    "supersecretvalue123",
];

fn report(dir: &Path, extra: &[&str]) -> Output {
    Aptitude::new()
        .env("MY_API_KEY", "supersecretvalue123")
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
}

#[test]
fn markdown_and_junit_snapshots_with_neutralized_agent_text() {
    let dir = tempfile::tempdir().unwrap();
    report(dir.path(), &[]).code(0);
    let md = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    assert!(
        md.ends_with('\n'),
        "`report --markdown` ends with a line break"
    );
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
    // The tests' table (the coverage table has its own three columns).
    for line in md
        .lines()
        .filter(|l| l.starts_with("| ") && l.contains(".aptitude.yaml"))
    {
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
    report(dir.path(), &[]).code(0);
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
    let out = Aptitude::new()
        .env("MY_API_KEY", "supersecretvalue123")
        .arg("analyze")
        .arg("tests/data/hostile/hostile.aptitude.yaml")
        .arg("tests/data/hostile/hostile.transcript.jsonl")
        .arg("--json")
        .arg(dir.path().join("r.json"))
        .output();
    let stdout = &out.stdout;
    let json = crate::support::results_text(dir.path().join("r.json")).unwrap();
    for secret in SECRETS {
        assert!(
            !stdout.contains(secret) && !json.contains(secret),
            "{secret} leaked"
        );
    }
    let transcript = Aptitude::new()
        .args([
            "transcript",
            "--json",
            "tests/data/hostile/hostile.transcript.jsonl",
        ])
        .output();
    let text = &transcript.stdout;
    assert!(
        !text.contains("sk-ant-api03") && text.contains("[REDACTED]"),
        "{text}"
    );
}

#[test]
fn markdown_is_bounded_with_a_notice() {
    let dir = tempfile::tempdir().unwrap();
    report(dir.path(), &["--markdown-max-chars", "2500"]).code(0);
    let md = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert!(md.chars().count() <= 2500, "{} chars", md.chars().count());
    assert!(md.contains("more failing test"), "{md}");
}

#[test]
fn report_needs_an_output_and_a_results_file() {
    let out = Aptitude::new()
        .arg("report")
        .arg(data("results/hostile.json"))
        .output();
    out.code(2);
    assert!(out.stderr.contains("nothing to write"), "{}", out.stderr);
    let out = Aptitude::new()
        .args(["report", "Cargo.toml", "--junit", "/tmp/x.xml"])
        .output();
    out.code(2);
    assert!(
        out.stderr.contains("is not an aptitude results file"),
        "{}",
        out.stderr
    );
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
    report(dir.path(), &[]).code(0);
    let shot = if std::env::var_os("APTITUDE_UPDATE_DOCS").is_some() {
        root().join("docs/images/report.png")
    } else {
        dir.path().join("report.png")
    };
    let report = dir.path().join("report.html");
    assert_csp_allows_exactly_its_script(&std::fs::read_to_string(&report).unwrap());
    let seen = node_json(
        "tests/browser/check-report.mjs",
        &[report.as_os_str(), shot.as_os_str()],
        &[("CHROMIUM", &chromium)],
    );
    assert_eq!(
        seen["counts"],
        serde_json::json!({"total": "4", "passed": "1", "failed": "3", "error": "0"})
    );
    assert_eq!(
        seen["reasonVisible"], true,
        "a failed assertion's reason shows without a click"
    );
    assert_eq!(
        (&seen["evidenceHiddenBefore"], &seen["evidenceVisibleAfter"]),
        (&json!(true), &json!(true)),
        "a passing assertion's evidence starts collapsed and shows once expanded"
    );
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
    assert_eq!(
        seen["axe"]["violations"],
        json!([]),
        "axe-core {} finds nothing, every test expanded",
        seen["axe"]["version"]
    );
    assert_eq!(
        (
            seen["filterShown"].clone(),
            seen["filterShownWithoutJs"].clone()
        ),
        (true.into(), false.into()),
        "the filter shows only when its script can run"
    );
    assert!(
        std::fs::metadata(&shot).unwrap().len() > 10_000,
        "a screenshot was taken"
    );
}

/// The page's one inline script is the one its Content-Security-Policy allows, by a hash
/// computed here from the page itself; and that hash is the pinned one (the unit test in
/// `report/html.rs` computes it from the script's source the same way).
fn assert_csp_allows_exactly_its_script(html: &str) {
    use base64::Engine as _;
    use sha2::{Digest, Sha256};
    let scripts: Vec<&str> = html
        .split("<script>")
        .skip(1)
        .map(|s| s.split("</script>").next().unwrap())
        .collect();
    assert_eq!(scripts.len(), 1, "one inline script");
    let hash = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(scripts[0]));
    assert_eq!(hash, "l+fvdZc/p9VkUzPrSQOycxlAk0lnkp8dGvqrLRMcgU4=");
    assert!(
        html.contains(&format!("script-src 'sha256-{hash}';")),
        "the CSP does not allow the page's script"
    );
}

/// Renders `results` with `aptitude report` into `dir`; (summary.md, junit.xml) paths.
fn report_of(
    results: &Path,
    dir: &Path,
    extra: &[&str],
) -> (std::path::PathBuf, std::path::PathBuf) {
    let (md, xml) = (dir.join("summary.md"), dir.join("junit.xml"));
    Aptitude::new()
        .arg("report")
        .arg(results)
        .arg("--markdown")
        .arg(&md)
        .arg("--junit")
        .arg(&xml)
        .arg("--html")
        .arg(dir.join("report.html"))
        .args(extra)
        .output()
        .code(0);
    (md, xml)
}

/// The hostile results plus a test that timed out (an `<error>` with no assertion to
/// detail), written under `dir`.
fn results_with_a_timeout(dir: &Path) -> std::path::PathBuf {
    let mut results: Value =
        serde_json::from_str(&std::fs::read_to_string(data("results/hostile.json")).unwrap())
            .unwrap();
    let errored = &mut results["tests"][1];
    errored["status"] = json!("error");
    errored["error"] = json!("the agent timed out after 300s");
    errored["assertions"] = json!([]);
    let file = dir.join("results.json");
    std::fs::write(&file, serde_json::to_string(&results).unwrap()).unwrap();
    file
}

/// The JUnit file is read by two real readers — junitparser (PyPI) and
/// test-results-parser (npm) — with text in every `<failure>` and `<error>` (dorny's
/// reader crashes without it) and `file`/`line` on every case; and it is valid against
/// junit-10.xsd extended with `file`/`line`, and against strict junit-10 but for them.
#[test]
fn junit_is_read_by_real_readers_and_valid_against_junit_10() {
    let dir = tempfile::tempdir().unwrap();
    let results = results_with_a_timeout(dir.path());
    let (_, xml) = report_of(&results, dir.path(), &[]);
    let stress = tempfile::tempdir().unwrap();
    let (_, stress_xml) = report_of(&stress_results(stress.path()), stress.path(), &[]);

    let xsd = data("junit/junit-10-file-line.xsd");
    let strict = dir.path().join("junit-10.xsd");
    let schema = std::fs::read_to_string(&xsd).unwrap();
    let without_extension: Vec<&str> = schema
        .lines()
        .filter(|l| !l.contains("<!-- EXTENSION -->"))
        .collect();
    std::fs::write(&strict, without_extension.join("\n")).unwrap();
    for file in [&xml, &stress_xml] {
        xmllint(&xsd, file).unwrap_or_else(|e| panic!("invalid against junit-10 + file/line: {e}"));
        let strict_errors = xmllint(&strict, file).unwrap_err();
        for line in strict_errors
            .lines()
            .filter(|l| l.contains("validity error"))
        {
            assert!(
                line.contains("attribute 'file'") || line.contains("attribute 'line'"),
                "strict junit-10 rejects more than file/line: {line}"
            );
        }
    }

    let read = python_json("junit", &xml);
    assert_eq!(
        (
            read["tests"].as_u64(),
            read["failures"].as_u64(),
            read["errors"].as_u64()
        ),
        (Some(4), Some(3), Some(1))
    );
    let cases = read["cases"].as_array().unwrap();
    for case in cases {
        assert!(
            case["file"]
                .as_str()
                .is_some_and(|f| f.ends_with(".aptitude.yaml")),
            "{case}"
        );
        assert!(
            case["line"]
                .as_str()
                .is_some_and(|l| l.parse::<u32>().unwrap() >= 1),
            "{case}"
        );
        for r in case["results"].as_array().unwrap() {
            if matches!(r["kind"].as_str(), Some("Failure" | "Error")) {
                assert!(
                    !r["text"].as_str().unwrap_or("").trim().is_empty(),
                    "no text: {case}"
                );
            }
        }
    }
    let timeout = cases
        .iter()
        .find(|c| c["results"][0]["kind"] == "Error")
        .unwrap();
    assert!(
        timeout["results"][0]["text"]
            .as_str()
            .unwrap()
            .contains("timed out after 300s")
    );
    let stress_read = python_json("junit", &stress_xml);
    assert_eq!(stress_read["failures"].as_u64(), Some(120));

    // The HTML report of the stress suite: every box within 4,000 characters and a marker.
    let html = std::fs::read_to_string(stress.path().join("report.html")).unwrap();
    let mut boxes = 0;
    for chunk in html.split("<pre").skip(1) {
        let inner = chunk
            .split_once('>')
            .unwrap()
            .1
            .split("</pre>")
            .next()
            .unwrap();
        // askama's escapes, numeric or named.
        let text = [
            ("&#60;", "<"),
            ("&#62;", ">"),
            ("&#34;", "\""),
            ("&#39;", "'"),
            ("&lt;", "<"),
            ("&gt;", ">"),
            ("&quot;", "\""),
            ("&#38;", "&"),
            ("&amp;", "&"),
        ]
        .iter()
        .fold(inner.to_owned(), |t, (from, to)| t.replace(from, to));
        let marker = text.rfind("\n… [truncated: ").unwrap_or(text.len());
        assert!(
            text[..marker].chars().count() <= 4_000,
            "{}: {}",
            text.chars().count(),
            text.chars().take(200).collect::<String>()
        );
        boxes += 1;
    }
    assert!(boxes >= 360, "{boxes} boxes");

    let node = node_json("tests/consumers/junit-read.mjs", &[xml.as_os_str()], &[]);
    assert_eq!(node["total"], 4);
    assert_eq!(
        node["failed"].as_u64().unwrap() + node["errors"].as_u64().unwrap(),
        4,
        "{node}"
    );
    let timed_out = node["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "Creates and runs a script")
        .unwrap();
    assert_eq!(timed_out["status"], "FAIL");
    assert!(
        timed_out["stack_trace"]
            .as_str()
            .unwrap()
            .contains("timed out after 300s"),
        "{timed_out}"
    );
}

/// The Markdown summary of 120 failing tests with hard text, bounded by
/// `--markdown-max-chars`, renders under GFM as intended: the table, balanced `<details>`,
/// names in `<summary>` without Markdown escapes, the notice as a blockquote, nothing that
/// GitHub's sanitizer strips; and it ends with a line break.
#[test]
fn markdown_renders_under_gfm_within_its_bound() {
    let dir = tempfile::tempdir().unwrap();
    for max in ["20000", "250"] {
        let (md, _) = report_of(
            &stress_results(dir.path()),
            dir.path(),
            &["--markdown-max-chars", max],
        );
        let text = std::fs::read_to_string(md).unwrap();
        assert!(
            text.chars().count() <= max.parse().unwrap(),
            "{max}: {} chars",
            text.chars().count()
        );
        assert!(text.ends_with('\n'));
        if max == "20000" {
            assert_renders_on_github("report --markdown", &text, None);
            let seen = crate::support::consumers::gfm(&text);
            assert!(
                seen["blockquotes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|q| q["text"]
                        .as_str()
                        .unwrap()
                        .contains("more failing tests not shown")),
                "the notice is a blockquote"
            );
            assert!(
                seen["summaries"][0]
                    .as_str()
                    .unwrap()
                    .contains("Tëst 0 | `code` <details> @"),
                "{}",
                seen["summaries"][0]
            );
        }
    }
}

/// Keys cut by a bound never show in part: the truncation helper redacts before it cuts
/// and leaves out a token split by the cut, in every report.
#[test]
fn a_key_straddling_a_cut_never_shows_in_part() {
    let keys = [
        "ghp_0123456789abcdefghijABCDEFGHIJ012345",
        "AIzaSyA0123456789abcdefghijklmnopqrstuv",
        "AKIAABCDEFGHIJKLMNOP",
    ];
    let dir = tempfile::tempdir().unwrap();
    let mut results: Value =
        serde_json::from_str(&std::fs::read_to_string(data("results/hostile.json")).unwrap())
            .unwrap();
    // Markdown details are cut at 2,000 characters, HTML boxes at 4,000.
    for (i, t) in results["tests"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .enumerate()
    {
        let key = keys[i % keys.len()];
        let at = |cut: usize| format!("{}{key} tail", "é".repeat(cut - 10));
        t["transcript"]["final_text"] = json!(at(4_000));
        for a in t["assertions"].as_array_mut().unwrap() {
            a["detail"] = json!(at(2_000) + &"x".repeat(3_000));
        }
    }
    let file = dir.path().join("keys.json");
    std::fs::write(&file, serde_json::to_string(&results).unwrap()).unwrap();
    let (md, xml) = report_of(&file, dir.path(), &[]);
    for path in [md, xml, dir.path().join("report.html")] {
        let text = std::fs::read_to_string(&path).unwrap();
        for key in keys {
            assert!(
                !text.contains(&key[..6]),
                "{} shows part of {key}",
                path.display()
            );
        }
    }
}

/// The trigger of the truncate-then-redact leak: an assertion detail quotes a command's
/// output cut at 300 characters, with a key straddling the cut. Whatever the offset, no
/// part of the key reaches the terminal, the results JSON or a report.
#[test]
fn a_key_cut_by_an_assertion_detail_never_shows_in_part() {
    let keys = [
        "ghp_0123456789abcdefghijABCDEFGHIJ012345",
        "AIzaSyA0123456789abcdefghijklmnopqrstuv",
        "AKIAABCDEFGHIJKLMNOP",
    ];
    let dir = tempfile::tempdir().unwrap();
    let test = dir.path().join("t.aptitude.yaml");
    std::fs::write(
        &test,
        "name: leak\nprompt: p\nassertions:\n  - output_contains: \"never there\"\n",
    )
    .unwrap();
    for key in keys {
        for offset in (270..=300).step_by(5) {
            let output = format!("{}{key} after", "é".repeat(offset));
            let lines = [
                json!({"type": "system", "subtype": "init", "session_id": "s", "model": "m", "claude_code_version": "2.1.328"}),
                json!({"type": "assistant", "session_id": "s", "message": {"id": "m1", "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "cat log"}}], "usage": {"input_tokens": 1, "output_tokens": 1}}}),
                json!({"type": "user", "session_id": "s", "message": {"content": [{"type": "tool_result", "tool_use_id": "t1", "content": output, "is_error": false}]}}),
                json!({"type": "result", "subtype": "success", "is_error": false, "num_turns": 1, "result": "done", "session_id": "s", "usage": {"input_tokens": 1, "output_tokens": 1}}),
            ];
            let transcript = dir.path().join("session.jsonl");
            let text: Vec<String> = lines.iter().map(Value::to_string).collect();
            std::fs::write(&transcript, text.join("\n") + "\n").unwrap();
            let (json_path, md) = (dir.path().join("r.json"), dir.path().join("s.md"));
            let out = Aptitude::new()
                .current_dir(dir.path())
                .arg("analyze")
                .arg(&test)
                .arg(&transcript)
                .arg("--json")
                .arg(&json_path)
                .arg("--markdown")
                .arg(&md)
                .output();
            let json = crate::support::results_text(&json_path).unwrap();
            assert!(
                json.contains("\"fail\""),
                "the check failed and quoted the output: {json}"
            );
            let shown = [
                out.stdout.clone(),
                json,
                std::fs::read_to_string(&md).unwrap(),
            ];
            for text in shown {
                assert!(
                    !text.contains(&key[..5]),
                    "offset {offset} shows part of {key}: {text}"
                );
            }
        }
    }
}

/// The consumers the tests rely on do reject what the issue found: a check is only worth
/// as much as its power to fail.
#[test]
fn the_real_consumers_reject_the_defects_found_before() {
    // GFM: a notice right after `</details>` is swallowed into the HTML block.
    let seen = gfm(
        "<details><summary>x</summary>\n\ny\n\n</details>\n> ✂️ 1 more failing test not shown — see the [full report](https://e.x).\n",
    );
    assert_eq!(seen["blockquotes"], json!([]));
    assert!(seen["text"].as_str().unwrap().contains("[full report]("));
    let seen =
        gfm("<form>x</form>\n\n<span class=\"x\">y</span>\n\n<details><summary>a</summary>\n");
    assert_eq!(seen["stripped"], json!(["<form>", "<span class>"]));
    assert_eq!(seen["details"], json!([1, 0]));

    // OpenAPI: an unknown level, a null text, and a route GitHub does not have.
    let checked = openapi_check(&[
        (
            "PATCH".into(),
            "/repos/o/r/check-runs/77".into(),
            Some(
                json!({"output": {"title": "t", "summary": "s", "annotations": [
                {"path": "a", "start_line": 1, "end_line": 1, "annotation_level": "fatal", "message": "m"}]}}),
            ),
        ),
        (
            "POST".into(),
            "/repos/o/r/check-runs".into(),
            Some(
                json!({"name": "a", "head_sha": "b", "output": {"title": "t", "summary": "s", "text": null}}),
            ),
        ),
        ("POST".into(), "/repos/o/r/nope".into(), Some(json!({}))),
    ]);
    for c in &checked {
        assert!(!c["errors"].as_array().unwrap().is_empty(), "{c}");
    }

    // junit-10: `testsuites@skipped` and `testcase@assertions`.
    let dir = tempfile::tempdir().unwrap();
    let xml = dir.path().join("old.xml");
    std::fs::write(
        &xml,
        r#"<?xml version="1.0"?><testsuites tests="1" skipped="0"><testsuite name="s" tests="1" failures="0" errors="0"><testcase name="c" assertions="3"/></testsuite></testsuites>"#,
    )
    .unwrap();
    let e = xmllint(&data("junit/junit-10-file-line.xsd"), &xml).unwrap_err();
    assert!(e.contains("'skipped'") && e.contains("'assertions'"), "{e}");
}

/// `n` tests, each three runs of one of the hostile results' tests (so the agent's
/// `<script>` and the secrets come along), the first one passing, with the coverage of
/// 120 rules (its 3 rules 40 times), as a results file under `dir`.
fn large_results(dir: &Path, n: usize) -> std::path::PathBuf {
    use aptitude::verdict::results::Results;
    let hostile: Results =
        serde_json::from_str(&std::fs::read_to_string(data("results/hostile.json")).unwrap())
            .unwrap();
    let tests = (0..n)
        .map(|i| {
            // hostile.json's second test is its passing one.
            let mut run = hostile.tests[(i + 1) % hostile.tests.len()].clone();
            run.name = format!("{} #{i}", run.name);
            aptitude::verdict::repeat::aggregate(vec![run; 3], 3)
        })
        .collect();
    let mut results = Results::new(tests, 1_000);
    let mut coverage = hostile.coverage.clone().unwrap();
    coverage.rules = (0..40)
        .flat_map(|i| {
            coverage.rules.iter().cloned().map(move |mut r| {
                r.line += i * 3;
                r.id = format!("R{:08x}", i * 3 + r.line);
                r
            })
        })
        .collect();
    results.coverage = Some(coverage);
    let file = dir.join("large.json");
    std::fs::write(&file, serde_json::to_string(&results).unwrap()).unwrap();
    file
}

/// A suite above `INLINE_MAX_TESTS` (200): each test's summary line is in the page, its
/// details and its runs' views are gzip + base64 lines of 32 tests in `#details-data` —
/// redacted like the rest — and Chromium unpacks a test's when it is opened, a run's when
/// the run is (by keyboard), under the same CSP, accessible, the agent's `<script>` still
/// text. Without JavaScript a notice says why details are missing.
/// The first screen (1280×800) shows the first failing test's name and its failed
/// assertion's reason, open, above the 120 coverage rows (the layout before, tables first
/// and reasons folded, put the first test 7,677 px down). Prints the time to the first screen (a figure, not asserted; for 5,000 tests × 3 runs
/// run the script on the report `cargo bench --bench report_render` writes).
#[test]
fn large_html_report_loads_details_on_demand() {
    use base64::Engine as _;
    use std::io::Read as _;
    const TESTS: usize = 250;
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.html");
    Aptitude::new()
        .env("MY_API_KEY", "supersecretvalue123")
        .arg("report")
        .arg(large_results(dir.path(), TESTS))
        .arg("--html")
        .arg(&report)
        .output()
        .code(0);
    let html = std::fs::read_to_string(&report).unwrap();
    assert_csp_allows_exactly_its_script(&html);
    for secret in SECRETS {
        assert!(!html.contains(secret), "the page leaks {secret}");
    }
    let packed = html
        .split(r#"<script type="application/octet-stream" id="details-data" data-chunk="32">"#)
        .nth(1)
        .expect("the details are packed")
        .split("</script>")
        .next()
        .unwrap();
    // Each line a chunk of 32 tests: NUL, id, line feed, HTML; their details, then their runs'.
    let chunks: Vec<Vec<(String, String)>> = packed
        .lines()
        .map(|line| {
            let gz = base64::engine::general_purpose::STANDARD
                .decode(line)
                .unwrap();
            let mut text = String::new();
            flate2::read::GzDecoder::new(&gz[..])
                .read_to_string(&mut text)
                .unwrap();
            text.split('\0')
                .skip(1)
                .map(|p| {
                    let (id, html) = p.split_once('\n').unwrap();
                    (id.to_owned(), html.to_owned())
                })
                .collect()
        })
        .collect();
    assert_eq!(chunks.len(), TESTS.div_ceil(32), "a line per 32 tests");
    let ids: Vec<&str> = chunks[0].iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(
        (ids[0], ids[31], ids[32], ids[34]),
        ("t0", "t31", "t0-r1", "t0-r3")
    );
    let pieces: Vec<&(String, String)> = chunks.iter().flatten().collect();
    assert_eq!(
        pieces.len(),
        TESTS * 4,
        "a test's details and its 3 runs' views"
    );
    for (id, html) in &pieces {
        let start = if id.contains("-r") {
            r#"<div class="run-body">"#
        } else {
            r#"<div class="body">"#
        };
        assert!(html.starts_with(start), "{id}: {html}");
        for secret in SECRETS {
            assert!(!html.contains(secret), "packed details leak {secret}");
        }
    }
    assert!(pieces.iter().any(|(_, html)| html.contains("[REDACTED]")));
    let t1 = pieces.iter().find(|(id, _)| id == "t1").unwrap();
    assert!(
        t1.1.contains("&#60;script&#62;window.__pwned=1"),
        "the prompt's script is text: {}",
        t1.1
    );
    // A run's view, built apart, escapes as its test's details do: the tool output's
    // `<script>` and `</details>` are text.
    for (id, html) in pieces.iter().filter(|(id, _)| id.starts_with("t1-r")) {
        assert!(
            html.contains("&#60;script&#62;window.__pwned=3")
                && html.contains("&#60;/details&#62;")
                && !html.contains("<script"),
            "{id}: {html}"
        );
    }

    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    let seen = node_json(
        "tests/browser/first-screen.mjs",
        &[report.as_os_str()],
        &[("CHROMIUM", &chromium)],
    );
    eprintln!(
        "{TESTS} tests × 3 runs, {} bytes: first test painted after {} ms (first contentful paint {} ms, seen by playwright {} ms, load {} ms); a test's details unpacked in {} ms",
        html.len(),
        seen["firstTestPaintMs"],
        seen["fcpMs"],
        seen["firstRowMs"],
        seen["loadMs"],
        seen["detailsMs"]
    );
    // The first screen (1280×800): the first failing test's name and why it failed,
    // above the 120 coverage rows.
    let first = &seen["firstScreen"];
    let height = first["viewportHeight"].as_f64().unwrap();
    assert!(
        first["name"]
            .as_str()
            .unwrap()
            .starts_with("Hostile <b>output</b>"),
        "the first failure comes first: {first}"
    );
    assert_eq!(first["reasonVisible"], true, "its reason is open: {first}");
    assert!(!first["reason"].as_str().unwrap().is_empty(), "{first}");
    for at in ["nameTop", "reasonTop"] {
        let y = first[at].as_f64().unwrap_or(f64::MAX);
        assert!(
            y < height - 20.0,
            "{at} {y} px is below the first screen: {first}"
        );
    }
    assert!(
        seen["firstTestPaintMs"].is_u64(),
        "the first test's paint is timed: {seen}"
    );
    assert_eq!(
        (&seen["rows"], &seen["placeholders"], &seen["openAtStart"]),
        (&json!(TESTS), &json!(TESTS - 1), &json!(1)),
        "every test a summary line, no details until opened but the first failure's"
    );
    assert_eq!(
        seen["errors"],
        json!([]),
        "the page's script runs without errors"
    );
    let sections = seen["sections"].to_string();
    assert!(
        sections.contains("Assertions") && sections.contains("Runs (3)"),
        "{seen}"
    );
    assert_eq!(seen["runs"].as_array().unwrap().len(), 3, "{seen}");
    assert!(!seen["reasoning"].as_str().unwrap().is_empty(), "{seen}");
    // A run's view is unpacked when the run is opened, by keyboard.
    let run = &seen["runView"];
    assert_eq!(
        (&run["packedAtFirst"], &run["open"]),
        (&json!(1), &json!(true)),
        "{run}"
    );
    assert!(run["assertions"].as_u64().unwrap() > 0, "{run}");
    assert_eq!(
        seen["pwned"],
        Value::Null,
        "an injected <script> must not run"
    );
    assert_eq!(seen["passedHidden"], true, "the filter still works");
    assert_eq!(
        seen["axe"]["violations"],
        json!([]),
        "axe-core {} finds nothing in the unpacked details",
        seen["axe"]["version"]
    );
    assert!(
        seen["noJsNotice"]
            .as_str()
            .unwrap()
            .contains("needs JavaScript"),
        "{seen}"
    );
    assert_eq!(seen["noJsRows"], json!(TESTS));
}

/// `tests/data/results/diff/head.json` repeated `copies` times (renamed apart): 3 tests a
/// copy — `Reads the docs` (turns, a subagent, an MCP call, a created file, a binary one,
/// model requests), `Fix and test`, and `Lint` with 3 runs.
fn run_view_results(dir: &Path, copies: usize) -> std::path::PathBuf {
    use aptitude::verdict::results::Results;
    let head: Results = aptitude::report::json::read(&data("results/diff/head.json")).unwrap();
    let tests = (0..copies)
        .flat_map(|i| {
            head.tests.iter().cloned().map(move |mut t| {
                if i > 0 {
                    t.name = format!("{} #{i}", t.name);
                }
                t
            })
        })
        .collect();
    let file = dir.join(format!("run-view-{copies}.json"));
    std::fs::write(
        &file,
        serde_json::to_string(&Results::new(tests, 1)).unwrap(),
    )
    .unwrap();
    file
}

/// The run view in Chromium, as the PR comment links it: `report.html#tN-rM` opens test N
/// and its run M and scrolls there — inline (a small suite) and unpacked first (above 200
/// tests); the runs side by side mark the call where they part; a test's trajectory reads
/// turn by turn (text, tokens and time; the subagent's turn and call under the Task call
/// that started it; the MCP call named by its server); its files as diffs (a binary file
/// named, not shown); its model requests; the agent's `<script>` is text; axe finds nothing.
#[test]
fn run_view_in_headless_chromium() {
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    let dir = tempfile::tempdir().unwrap();
    for (copies, anchor, trajectory) in [(1, "t2-r2", "t0"), (70, "t152-r2", "t150")] {
        let html = dir.path().join(format!("report-{copies}.html"));
        Aptitude::new()
            .arg("report")
            .arg(run_view_results(dir.path(), copies))
            .arg("--html")
            .arg(&html)
            .output()
            .code(0);
        assert_csp_allows_exactly_its_script(&std::fs::read_to_string(&html).unwrap());
        let seen = node_json(
            "tests/browser/check-run-view.mjs",
            &[html.as_os_str(), anchor.as_ref(), trajectory.as_ref()],
            &[("CHROMIUM", &chromium)],
        );
        let what = format!("{copies} copies: {seen}");
        assert_eq!(
            (&seen["anchorOpen"], &seen["testOpen"], &seen["inView"]),
            (&json!(true), &json!(true), &json!(true)),
            "{what}"
        );
        assert_eq!(
            seen["runSections"],
            json!(["Trajectory (2 calls)", "Model requests"]),
            "{what}"
        );
        assert_eq!(
            seen["sideCaption"],
            json!("Tool calls side by side: the runs part at call 1"),
            "{what}"
        );
        assert_eq!(
            seen["sideParts"],
            json!(2),
            "runs 2 and 3 differ from run 1: {what}"
        );
        let steps: Vec<(String, u64, String)> = seen["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                let text = s["text"]
                    .as_str()
                    .unwrap()
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ");
                (
                    s["kind"].as_str().unwrap().to_owned(),
                    s["depth"].as_u64().unwrap(),
                    text,
                )
            })
            .collect();
        let expected = [
            ("turn", 0, "Turn 1"),
            ("call", 0, "#1 Task"),
            ("turn", 1, "Subagent turn · toolu_1"),
            ("call", 1, "#2 Read"),
            ("turn", 0, "Turn 2"),
            ("call", 0, "#3 mcp__docs__search"),
            ("turn", 0, "Turn 3"),
        ];
        assert_eq!(steps.len(), expected.len(), "{what}");
        for ((kind, depth, text), (k, d, t)) in steps.iter().zip(expected) {
            assert_eq!((kind.as_str(), *depth), (k, d), "{what}");
            assert!(text.starts_with(t), "{text} starts with {t}: {what}");
        }
        assert!(steps[5].2.contains("[MCP docs · search]"), "{what}");
        assert_eq!(
            seen["steps"][0]["said"],
            json!("I'll delegate. <script>window.__pwned=1</script>"),
            "the agent's words, as text: {what}"
        );
        assert_eq!(
            seen["diffLines"],
            json!([["hunk", "@@ -0,0 +1 @@"], ["add", "+add adds <b>"]]),
            "{what}"
        );
        assert_eq!(
            seen["diffText"].as_str().unwrap().trim_end(),
            "--- /dev/null\n+++ b/notes.md\n@@ -0,0 +1 @@\n+add adds <b>",
            "one line per diff line: {what}"
        );
        assert!(
            seen["omitted"]
                .to_string()
                .contains("+logo.png not shown: binary"),
            "{what}"
        );
        assert_eq!(seen["requests"].as_array().unwrap().len(), 4, "{what}");
        assert_eq!(
            seen["requests"][1],
            json!([
                "fail",
                "2",
                "claude-sonnet-4-5",
                "529",
                "1,200",
                "0",
                "3,000",
                "902ms"
            ]),
            "{what}"
        );
        assert_eq!(seen["pwned"], Value::Null, "{what}");
        assert_eq!(seen["errors"], json!([]), "{what}");
        assert_eq!(
            seen["axe"]["violations"],
            json!([]),
            "axe-core {} finds nothing in the run views: {what}",
            seen["axe"]["version"]
        );
    }
}
