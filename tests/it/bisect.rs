//! `aptitude bisect`: the real `claude` run on each release tried, through the normal run
//! path, against the scripted model. The registry is a fake `npm` on `PATH` that lists four
//! releases; each is in aptitude's agent cache as the installer leaves it, a wrapper around
//! the pinned `claude`; the releases from 1.0.2 on append `planted-regression` to the
//! system prompt, and the scripted model then answers without the Bash call the test
//! asserts. So 1.0.2 is the planted first bad release.

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use serde_json::{Value, json};

use crate::run::Suite;
use crate::support::claude_bin;
use crate::support::model::{ScriptedModel, Turn};

/// `npm view … versions --json` lists 1.0.0–1.0.3 (out of order, with a prerelease).
fn fake_npm(dir: &std::path::Path) {
    let script = "#!/bin/sh\ncase \"$1\" in\n  view) echo '[\"1.0.0\",\"1.0.1\",\"1.0.3\",\"1.0.2\",\"1.1.0-beta.1\"]' ;;\n  *) exit 1 ;;\nesac\n";
    let npm = dir.join("npm");
    std::fs::write(&npm, script).unwrap();
    std::fs::set_permissions(&npm, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Puts `version` of `claude` in aptitude's agent cache at `cache` as the installer leaves
/// it (its receipt, `aptitude-install.json`, and the binary): a wrapper that runs the
/// pinned `claude` with `extra` arguments after the run's own.
pub fn seed_release(cache: &std::path::Path, version: &str, extra: &str) {
    let dir = cache.join("claude").join(version);
    let bin = dir.join("node_modules/.bin");
    std::fs::create_dir_all(&bin).unwrap();
    let wrapper = bin.join("claude");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nexec '{}' \"$@\" {extra}\n",
            claude_bin().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let receipt = json!({
        "kind": "claude",
        "version": version,
        "binary": "node_modules/.bin/claude",
        "integrity": {"kind": "npm", "package": "@anthropic-ai/claude-code",
            "integrity": "sha512-test", "signatures": {"status": "unavailable", "reason": "test double"}},
    });
    std::fs::write(dir.join("aptitude-install.json"), receipt.to_string()).unwrap();
}

#[test]
fn bisect_finds_the_planted_first_bad_release_from_repeated_runs() {
    let model = ScriptedModel::start();
    model.script(
        "bisect-marker",
        vec![
            Turn::IfRequestHas(
                "planted-regression",
                Box::new(Turn::Text("Nothing to run.".into())),
                Box::new(Turn::Tool(
                    "Bash",
                    json!({"command": "echo hi", "description": "say hi"}),
                )),
            ),
            Turn::Text("Done.".into()),
        ],
    );
    let suite = Suite::new();
    suite.file(
        "tests/t/t.aptitude.yaml",
        "name: says hi\nprompt: \"bisect-marker: say hi with echo\"\nassertions:\n  - tool: Bash\n",
    );
    let bin_dir = suite.path().join("bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    fake_npm(&bin_dir);
    let cache = suite.path().join("agents");
    seed_release(&cache, "1.0.0", "");
    seed_release(&cache, "1.0.1", "");
    seed_release(&cache, "1.0.2", "--append-system-prompt planted-regression");
    seed_release(&cache, "1.0.3", "--append-system-prompt planted-regression");
    let json_path = suite.path().join("bisect.json");
    let out = crate::support::cli::Aptitude::new()
        .sandbox_in(suite.path())
        .current_dir(suite.path())
        .model(&model)
        .path_dir(&bin_dir)
        .env("APTITUDE_AGENT_CACHE", &cache)
        .args(["bisect", "tests", "--agent", "claude", "--good", "1.0.0"])
        .args(["--bad", "1.0.3", "--runs", "4", "--json"])
        .arg(&json_path)
        // The fake install is a wrapper that runs the pinned `claude` from outside its own
        // package root, which a sandbox sized to the installation would not show.
        .args(["--", "--sandbox", "off"])
        .limit(Duration::from_secs(600))
        .output();
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("first bad release: 1.0.2"),
        "{}",
        out.stdout
    );
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    assert_eq!(report["first_bad"], "1.0.2");
    // The prerelease is left out: four releases, and each tried one was run 4 times.
    assert_eq!(report["releases"], 4);
    let tried: Vec<(String, u64, u64)> = report["tried"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["version"].as_str().unwrap().to_owned(),
                t["passed"].as_u64().unwrap(),
                t["runs"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        tried,
        [
            ("1.0.0".to_owned(), 4, 4),
            ("1.0.1".to_owned(), 4, 4),
            ("1.0.2".to_owned(), 0, 4),
            ("1.0.3".to_owned(), 0, 4),
        ]
    );
    assert_eq!(report["runs"], 16);
    assert_eq!(report["linear_scan_runs"], 12);
}

#[test]
fn bisect_refuses_endpoints_out_of_order_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    fake_npm(dir.path());
    let out = crate::support::cli::Aptitude::new()
        .path_dir(dir.path())
        .args([
            "bisect", "--agent", "claude", "--good", "1.0.3", "--bad", "1.0.0",
        ])
        .output();
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr
            .contains("--good 1.0.3 must be older than --bad 1.0.0"),
        "{}",
        out.stderr
    );
    let out = crate::support::cli::Aptitude::new()
        .path_dir(dir.path())
        .args([
            "bisect", "--agent", "claude", "--good", "1.0.0", "--bad", "9.0.0",
        ])
        .output();
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("version 9.0.0 is not published"),
        "{}",
        out.stderr
    );
}
