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

/// `aptitude run` with a `claude` that reports another version than the pinned one (a
/// wrapper answering `2.1.999` that runs the real `claude` without `WebFetch`): before the
/// tests, the pinned release (seeded in the agent cache) and the installed one each answer
/// the stub once; the test naming `WebFetch` is a warning with its `file:line:col`, never a
/// failure (the run passes), and a second run reads both tool lists from the cache.
#[test]
fn run_warns_about_tests_naming_a_tool_the_installed_release_dropped_and_caches_the_check() {
    use crate::support::model::{ScriptedModel, Turn};
    use std::os::unix::fs::PermissionsExt;

    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("agents");
    let pinned =
        aptitude::agent::registry::cli(aptitude::agent::AgentKind::Claude, &Default::default())
            .pinned_version()
            .unwrap();
    seed_release(&cache, pinned, "");
    let installed = dir.path().join("claude-2.1.999");
    std::fs::write(
        &installed,
        format!(
            "#!/bin/sh\nif [ \"$1\" = --version ]; then echo '2.1.999 (Claude Code)'; exit 0; fi\nexec '{}' \"$@\" --disallowedTools WebFetch\n",
            crate::support::claude_bin().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&installed, std::fs::Permissions::from_mode(0o755)).unwrap();
    let tests = dir.path().join("tests");
    std::fs::create_dir_all(&tests).unwrap();
    std::fs::write(
        tests.join("fetch.aptitude.yaml"),
        "name: fetches nothing\nprompt: \"DRIFTCHECK: say hello\"\nassertions:\n  - tool: WebFetch\n    called: false\n",
    )
    .unwrap();
    let model = ScriptedModel::start();
    let run = || {
        model.script("DRIFTCHECK", vec![Turn::Text("hello".into())]);
        let started = std::time::Instant::now();
        let out = Aptitude::new()
            .sandbox_in(dir.path())
            .current_dir(dir.path())
            .inherit_path()
            .env("APTITUDE_AGENT_CACHE", &cache)
            .env("ANTHROPIC_API_KEY", "sk-ant-test")
            // The harness turns the check off for every other test.
            .env("APTITUDE_NO_DRIFT_CHECK", "false")
            .args(["run", "tests", "--no-grade", "--sandbox", "off"])
            .arg("--agent-bin")
            .arg(format!("claude={}", installed.display()))
            .arg("--agent-base-url")
            .arg(format!("claude={}", model.base_url()))
            .limit(Duration::from_secs(300))
            .output();
        (out, started.elapsed())
    };
    let (first, cold) = run();
    assert_eq!(
        first.code, 0,
        "a warning, not a failure\n{}\n{}",
        first.stdout, first.stderr
    );
    assert!(
        first.stderr.contains(&format!(
            "fetch.aptitude.yaml:4:5: test \"fetches nothing\" names WebFetch, which claude 2.1.999 (yours; aptitude is tested with {pinned}) no longer offers"
        )),
        "{}",
        first.stderr
    );
    assert!(
        !first.stdout.contains("drift probe"),
        "the probes' own runs are not shown: {}",
        first.stdout
    );
    for version in [pinned, "2.1.999"] {
        assert!(
            cache
                .join("claude/drift")
                .join(format!("{version}.json"))
                .is_file(),
            "{version}'s tool list is kept"
        );
    }
    // The kept lists are read, not probed again: a kept list that still offers WebFetch
    // (written here) turns the warning into a note.
    std::fs::write(
        cache.join("claude/drift/2.1.999.json"),
        "[\"Bash\",\"Read\",\"WebFetch\"]",
    )
    .unwrap();
    let (second, warm) = run();
    eprintln!("drift check: first run {cold:?}, second (cached) {warm:?}");
    assert_eq!(second.code, 0, "{}", second.stderr);
    assert!(
        second.stderr.contains(&format!(
            "note: claude 2.1.999 is not the pinned {pinned}; no test names a tool it dropped or renamed"
        )),
        "{}",
        second.stderr
    );
    // `--no-drift-check` skips it.
    let out = Aptitude::new()
        .sandbox_in(dir.path())
        .current_dir(dir.path())
        .inherit_path()
        .env("APTITUDE_AGENT_CACHE", &cache)
        .env("ANTHROPIC_API_KEY", "sk-ant-test")
        .args([
            "run",
            "tests",
            "--no-grade",
            "--sandbox",
            "off",
            "--no-drift-check",
        ])
        .arg("--agent-bin")
        .arg(format!("claude={}", installed.display()))
        .arg("--agent-base-url")
        .arg(format!("claude={}", model.base_url()))
        .limit(Duration::from_secs(300))
        .output();
    assert!(!out.stderr.contains("2.1.999"), "{}", out.stderr);
}
