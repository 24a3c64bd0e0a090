//! `aptitude drift`: two "releases" of the real `claude` in aptitude's agent cache — 1.0.0
//! the pinned `claude`, 1.0.1 the same with `WebFetch` disallowed — each run once
//! against aptitude's stub upstream; the tool list read from their requests shows the tool
//! gone and names the test that asserts on it.

use std::time::Duration;

use serde_json::Value;

use crate::bisect::seed_release;
use crate::support::cli::Aptitude;

#[test]
fn drift_shows_a_removed_tool_and_the_test_that_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("agents");
    seed_release(&cache, "1.0.0", "");
    seed_release(&cache, "1.0.1", "--disallowedTools WebFetch");
    let tests = dir.path().join("tests");
    std::fs::create_dir_all(&tests).unwrap();
    std::fs::write(
        tests.join("fetch.aptitude.yaml"),
        "name: fetches the docs\nprompt: read https://example.com\nassertions:\n  - output_contains: x\n  - tool: WebFetch\n",
    )
    .unwrap();
    let json_path = dir.path().join("drift.json");
    let out = Aptitude::new()
        .sandbox_in(dir.path())
        .current_dir(dir.path())
        .inherit_path()
        .env("APTITUDE_AGENT_CACHE", &cache)
        .args([
            "drift", "tests", "--agent", "claude", "--from", "1.0.0", "--to", "1.0.1",
        ])
        .arg("--json")
        .arg(&json_path)
        // The fake install runs the pinned `claude` from outside its own package root.
        .args(["--", "--sandbox", "off"])
        .limit(Duration::from_secs(300))
        .output();
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let drift: Value = serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    let removed: Vec<&str> = drift["removed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["canonical"].as_str().unwrap())
        .collect();
    assert_eq!(removed, ["WebFetch"], "{drift:#}");
    assert_eq!(drift["added"], serde_json::json!([]));
    assert_eq!(drift["affected"][0]["line"], 5);
    assert!(
        out.stdout
            .contains("fetch.aptitude.yaml:5:5: test \"fetches the docs\" names WebFetch"),
        "{}",
        out.stdout
    );
}
