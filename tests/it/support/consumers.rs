//! The real consumers of aptitude's outputs that the tests feed them to: GitHub's OpenAPI
//! description (validated with ajv), a GFM renderer (cmarkgfm), two JUnit readers
//! (junitparser, test-results-parser), xmllint with the JUnit schema; and the stress
//! results that push every size bound.
//!
//! The tools are installed by `scripts/test`: npm packages from package-lock.json, Python
//! ones from tests/requirements.txt into `.venv-tests`, xmllint from Debian.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{data, node_json, root};

/// Runs `tests/consumers/consumers.py COMMAND FILE` with the tests' venv; its JSON.
pub fn python_json(command: &str, file: &Path) -> Value {
    let python = root().join(".venv-tests/bin/python");
    assert!(
        python.exists(),
        "{} is missing: `scripts/test` installs tests/requirements.txt there",
        python.display()
    );
    let out = std::process::Command::new(python)
        .current_dir(root())
        .arg("tests/consumers/consumers.py")
        .arg(command)
        .arg(file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "consumers.py {command} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// GitHub Flavored Markdown rendered as GitHub does, and what a reader gets (see
/// consumers.py).
pub fn gfm(markdown: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("body.md");
    std::fs::write(&file, markdown).unwrap();
    python_json("gfm", &file)
}

/// Asserts what GitHub shows for one of our Markdown bodies: nothing its sanitizer strips,
/// balanced `<details>`, the table of tests, no Markdown escape showing inside a
/// `<summary>`, and — when `notice_link` is given — the truncation notice rendered as a
/// blockquote with a link to it.
pub fn assert_renders_on_github(what: &str, markdown: &str, notice_link: Option<&str>) {
    let seen = gfm(markdown);
    assert_eq!(
        seen["stripped"],
        json!([]),
        "{what}: outside GitHub's allowlist"
    );
    let details = seen["details"].as_array().unwrap();
    assert_eq!(details[0], details[1], "{what}: <details> balanced");
    assert!(
        seen["elements"]
            .as_array()
            .unwrap()
            .contains(&json!("table")),
        "{what}: the table of tests renders as a table"
    );
    for s in seen["summaries"].as_array().unwrap() {
        assert!(
            !s.as_str().unwrap().contains("\\|"),
            "{what}: a Markdown escape shows in <summary>: {s}"
        );
    }
    let text = seen["text"].as_str().unwrap();
    assert!(
        !text.contains("[full report]("),
        "{what}: the notice's link shows as raw Markdown"
    );
    if let Some(link) = notice_link {
        let quotes = seen["blockquotes"].as_array().unwrap();
        assert!(
            quotes.iter().any(|q| q["text"]
                .as_str()
                .unwrap()
                .contains("more failing tests not shown")
                && q["links"].as_array().unwrap().contains(&json!(link))),
            "{what}: the notice is a blockquote linking {link}: {quotes:?}"
        );
    }
}

/// What GitHub's OpenAPI description says of each request: `{method, path, operation,
/// errors}`.
pub fn openapi_check(requests: &[(String, String, Option<Value>)]) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("requests.json");
    let list: Vec<Value> = requests
        .iter()
        .map(|(m, p, b)| json!({"method": m, "path": p, "body": b}))
        .collect();
    std::fs::write(&file, serde_json::to_string(&list).unwrap()).unwrap();
    let checked = node_json("tests/github/openapi-check.mjs", &[file.as_os_str()], &[]);
    let checked = checked.as_array().unwrap().clone();
    assert_eq!(checked.len(), requests.len());
    checked
}

/// Validates requests sent to the mock GitHub API against GitHub's OpenAPI description,
/// operation by operation; returns the operations seen.
pub fn assert_openapi_valid(requests: &[(String, String, Option<Value>)]) -> Vec<String> {
    let checked = openapi_check(requests);
    for c in &checked {
        assert_eq!(c["errors"], json!([]), "not what GitHub's API accepts: {c}");
    }
    checked
        .iter()
        .map(|c| c["operation"].as_str().unwrap_or("").to_owned())
        .collect()
}

/// `xmllint --schema XSD FILE`: its stderr when the file is invalid.
pub fn xmllint(xsd: &Path, file: &Path) -> Result<(), String> {
    let out = std::process::Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(xsd)
        .arg(file)
        .output()
        .expect("xmllint runs (scripts/test installs Debian's libxml2-utils)");
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// ~5 KB of text that is hard on every format: non-ASCII, emoji, table pipes, backticks,
/// raw `<details>`, `@mentions`, and a GitHub token cut across many lengths.
fn hard_text(i: usize) -> String {
    let piece = "Ünïcödé ✓ — 日本語のテキスト 🚀🔥👩‍💻 | pipe ``` back`ticks </details><details> @octocat @github/team ";
    let mut text = format!("#{i} ");
    while text.len() < 5_000 {
        text.push_str(piece);
    }
    text
}

/// Results of 120 failing tests, each with ~5 KB of hard text in its name, answer,
/// assertion detail and judge reasoning; written to a new file under `dir`.
pub fn stress_results(dir: &Path) -> PathBuf {
    let mut results: Value =
        serde_json::from_str(&std::fs::read_to_string(data("results/hostile.json")).unwrap())
            .unwrap();
    let template = results["tests"][0].clone();
    let tests: Vec<Value> = (0..120)
        .map(|i| {
            let mut t = template.clone();
            t["name"] = json!(format!(
                "Tëst {i} | `code` <details> @octocat 🚀 {}",
                "ü".repeat(200)
            ));
            t["transcript"]["final_text"] = json!(hard_text(i));
            for a in t["assertions"].as_array_mut().unwrap() {
                a["status"] = json!("fail");
                a["detail"] = json!(hard_text(i));
                a["reasoning"] = json!(hard_text(i));
            }
            t
        })
        .collect();
    results["tests"] = json!(tests);
    results["summary"]["total"] = json!(120);
    results["summary"]["failed"] = json!(120);
    results["summary"]["passed"] = json!(0);
    let file = dir.join("stress.json");
    std::fs::write(&file, serde_json::to_string(&results).unwrap()).unwrap();
    file
}
