//! Agent versions as a matrix axis (issue 42): installs of chosen releases into
//! aptitude's own cache, verified and cached.

use std::time::Instant;

use aptitude::agent::AgentKind;
use aptitude::agent::install::{Installer, Integrity, Signatures, VersionSpec};

/// An older release of pi than the pinned one: a small npm CLI with a real dependency tree.
const OLD_PI: &str = "0.72.1";

#[tokio::test(flavor = "multi_thread")]
async fn an_old_release_installs_from_npm_verified_then_a_second_install_is_a_lookup() {
    let cache = tempfile::tempdir().unwrap();
    let installer = Installer::at(cache.path());
    let resolved = installer
        .resolve(AgentKind::Pi, &VersionSpec::Exact(OLD_PI.to_owned()))
        .await
        .unwrap();
    assert_eq!(resolved, OLD_PI);

    let started = Instant::now();
    let cold = installer.install(AgentKind::Pi, &resolved).await.unwrap();
    let cold_time = started.elapsed();
    let started = Instant::now();
    let warm = installer.install(AgentKind::Pi, &resolved).await.unwrap();
    let warm_time = started.elapsed();
    eprintln!("pi {OLD_PI}: cold install {cold_time:?}, cached {warm_time:?}");

    assert!(!cold.cached);
    assert!(warm.cached, "the second install is a lookup");
    assert_eq!(cold.binary, warm.binary);
    assert_eq!(
        cold.binary,
        cache
            .path()
            .join("pi")
            .join(OLD_PI)
            .join("node_modules/.bin/pi")
    );
    let Integrity::Npm {
        package,
        integrity,
        signatures,
    } = &cold.integrity
    else {
        panic!("{:?}", cold.integrity)
    };
    assert_eq!(package, "@mariozechner/pi-coding-agent");
    // The registry's published sha512 of this tarball (npm view @mariozechner/pi-coding-agent@0.72.1 dist.integrity).
    assert_eq!(
        integrity,
        "sha512-gKApiLfAYpvPnWThvwXrLjZIhsziSSUKBph7DHCy/1IomuIGN1MTxS/9ZtcuFqPy3/+VfEUOKegGlY6m+CRNlA=="
    );
    match signatures {
        Signatures::Verified { packages, .. } => assert!(*packages > 0),
        Signatures::Unavailable { reason } => {
            eprintln!("registry signatures not checked: {reason}");
            assert!(!reason.is_empty(), "an unchecked signature says why");
        }
    }
    // The installed CLI is that release.
    let version = std::process::Command::new(&cold.binary)
        .arg("--version")
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&version.stdout).into_owned()
        + &String::from_utf8_lossy(&version.stderr);
    assert!(shown.contains(OLD_PI), "{shown}");
    // No staging directory is left behind.
    let left: Vec<_> = std::fs::read_dir(cache.path().join("pi"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".staging"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_release_the_registry_does_not_have_is_an_error_that_says_how_to_list_them() {
    let installer = Installer::at(tempfile::tempdir().unwrap().path());
    let e = installer
        .resolve(AgentKind::Pi, &VersionSpec::Exact("0.0.999".to_owned()))
        .await
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("npm view @mariozechner/pi-coding-agent versions"),
        "{e}"
    );
}

/// The matrix end to end: one test on two releases of pi (the pinned one and an older
/// one), each installed from npm into aptitude's cache (once: a second run finds them),
/// run through the scripted model; each release is its own result with its exact version.
#[test]
fn a_test_runs_on_two_releases_of_an_agent_each_its_own_result() {
    use crate::run::Suite;
    use crate::support::cli::Aptitude;
    use crate::support::model::{ScriptedModel, Turn};

    let pi = (crate::agents::AGENTS[5])();
    assert_eq!(pi.name, "pi");
    let model = ScriptedModel::start();
    model.script(
        "RELEASES-PI",
        vec![
            pi.shell_call("echo release-ok > made.txt"),
            Turn::Text("Made it.".into()),
        ],
    );
    let suite = Suite::new();
    suite.file("tests/ws/keep.txt", "fixture\n").file(
        "tests/ws/releases.aptitude.yaml",
        "name: releases\nprompt: \"RELEASES-PI: make the file\"\nassertions:\n  - tool: Bash\n  - file_contains: {path: made.txt, text: release-ok}\n",
    );
    // Shared between test runs, so that only the first one installs.
    let cache = std::env::temp_dir().join("aptitude-tests-agent-cache");
    let markdown = suite.path().join("summary.md");
    let started = Instant::now();
    let out = Aptitude::new()
        .sandbox_in(suite.path())
        .inherit_path()
        .env("APTITUDE_AGENT_CACHE", &cache)
        .env("OPENAI_API_KEY", "sk-test-openai")
        // npm reaches its registry through this machine's TLS settings (a proxy's CA).
        .envs(std::env::var_os("NODE_EXTRA_CA_CERTS").map(|v| ("NODE_EXTRA_CA_CERTS", v)))
        .current_dir(suite.path())
        .args(["run", "tests", "--no-grade", "--model", "fake-model"])
        .args(["--agent", &format!("pi@pinned,pi@{OLD_PI}")])
        .arg("--agent-base-url")
        .arg(format!("pi={}/v1", model.base_url()))
        .arg("--json")
        .arg(suite.results_path())
        .arg("--markdown")
        .arg(&markdown)
        .limit(std::time::Duration::from_secs(600))
        .output();
    eprintln!("pi@pinned and pi@{OLD_PI}: run in {:?}", started.elapsed());
    let results: serde_json::Value =
        serde_json::from_str(&crate::support::results_text(suite.results_path()).unwrap()).unwrap();
    let tests = results["tests"].as_array().unwrap();
    let pinned = aptitude::agent::registry::cli(AgentKind::Pi, &Default::default())
        .pinned_version()
        .unwrap();
    let versions: Vec<&str> = tests
        .iter()
        .map(|t| t["agent_version"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(versions, [pinned, OLD_PI], "{}", out.stderr);
    for test in tests {
        assert_eq!(test["status"], "passed", "{}\n{test:#}", out.stderr);
        assert_eq!(test["agent_id"], "pi");
    }
    assert_eq!(out.code, 0, "{}", out.stderr);
    // The releases side by side, in the results JSON and in every report.
    let summary: Vec<(String, u64, u64)> = results["summary"]["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["version"].as_str().unwrap().to_owned(),
                v["passed"].as_u64().unwrap(),
                v["total"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [(pinned.to_owned(), 1, 1), (OLD_PI.to_owned(), 1, 1)],
        "the pinned release is the reference, first"
    );
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(&regex_escape(pinned), "[PINNED]");
    settings.bind(|| {
        insta::assert_snapshot!(
            "releases_terminal",
            crate::variants::section(&out.stdout, "releases side by side")
        );
        insta::assert_snapshot!(
            "releases_markdown",
            crate::variants::section(
                &std::fs::read_to_string(&markdown).unwrap(),
                "**Releases side by side**"
            )
        );
    });
    assert!(
        out.stdout.contains(&format!("releases · pi@{OLD_PI}")),
        "each result names its release: {}",
        out.stdout
    );
    assert!(
        cache
            .join("pi")
            .join(OLD_PI)
            .join("aptitude-install.json")
            .is_file()
    );
}

/// `text` as a regular expression that matches only itself (a version's dots).
fn regex_escape(text: &str) -> String {
    text.replace('.', "\\.")
}

/// `aptitude drift` on two real releases of pi from npm (the old one and the pinned one),
/// installed into the shared test cache, each run once in the sandbox against the stub
/// model: the tool lists are read from their requests (a release that sent none would be
/// exit 2), the output streams' events are compared, and the settings are said to be not
/// readable (pi ships no JSON schema of them), never "unchanged".
#[test]
fn drift_between_two_real_releases_reads_tools_stream_and_says_what_it_can_not_read() {
    let pinned = aptitude::agent::registry::cli(AgentKind::Pi, &Default::default())
        .pinned_version()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let tests = dir.path().join("tests");
    std::fs::create_dir_all(&tests).unwrap();
    std::fs::write(
        tests.join("shell.aptitude.yaml"),
        "name: runs the shell\nagent: pi\nprompt: list the files\nassertions:\n  - tool: Bash\n",
    )
    .unwrap();
    let cache = std::env::temp_dir().join("aptitude-tests-agent-cache");
    let json_path = dir.path().join("drift.json");
    let started = Instant::now();
    let out = crate::support::cli::Aptitude::new()
        .sandbox_in(dir.path())
        .current_dir(dir.path())
        .inherit_path()
        .env("APTITUDE_AGENT_CACHE", &cache)
        .envs(std::env::var_os("NODE_EXTRA_CA_CERTS").map(|v| ("NODE_EXTRA_CA_CERTS", v)))
        .args([
            "drift", "tests", "--agent", "pi", "--from", OLD_PI, "--to", pinned,
        ])
        .arg("--json")
        .arg(&json_path)
        // pi needs a model name to reach a custom endpoint.
        .args(["--", "--model", "fake-model"])
        .limit(std::time::Duration::from_secs(600))
        .output();
    eprintln!("drift pi {OLD_PI} → {pinned}: {:?}", started.elapsed());
    assert!(
        out.code == 0 || out.code == 1,
        "{}\n{}",
        out.stdout,
        out.stderr
    );
    let drift: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    assert_eq!(drift["from"], OLD_PI);
    assert_eq!(drift["to"], pinned);
    assert_eq!(drift["stream"]["status"], "compared", "{drift:#}");
    assert_eq!(drift["settings"]["status"], "not_readable", "{drift:#}");
    assert!(
        drift["settings"]["why"]
            .as_str()
            .unwrap()
            .contains("@mariozechner/pi-coding-agent@0.72.1 ships no JSON schema"),
        "{drift:#}"
    );
    assert!(
        out.stdout
            .contains("settings and hook payloads: not readable"),
        "{}",
        out.stdout
    );
    // Exit code 1 exactly when the test's tool went away.
    assert_eq!(
        out.code == 1,
        !drift["affected"].as_array().unwrap().is_empty()
    );
}

/// An older release of Gemini CLI than the pinned one (a second CLI, a large bundle).
const OLD_GEMINI: &str = "0.60.0";

/// The same on a second CLI, Gemini CLI: its pinned and an older release from npm, each a
/// result of its own through the scripted model, sandboxed, side by side; then `drift`
/// between them reads each one's tools from its first request (exit 2 if either sent none)
/// and its stream's events.
#[test]
fn gemini_runs_on_two_real_releases_and_drift_reads_both() {
    use crate::run::Suite;
    use crate::support::cli::Aptitude;
    use crate::support::model::{ScriptedModel, Turn};

    let gemini = crate::agents::AGENTS
        .iter()
        .map(|a| a())
        .find(|a| a.name == "gemini")
        .unwrap();
    let pinned = aptitude::agent::registry::cli(AgentKind::Gemini, &Default::default())
        .pinned_version()
        .unwrap();
    let model = ScriptedModel::start();
    model.script(
        "RELEASES-GEMINI",
        vec![
            gemini.shell_call("echo release-ok > made.txt"),
            Turn::Text("Made it.".into()),
        ],
    );
    let suite = Suite::new();
    suite.file("tests/ws/keep.txt", "fixture\n").file(
        "tests/ws/releases.aptitude.yaml",
        "name: releases\nprompt: \"RELEASES-GEMINI: make the file\"\nassertions:\n  - file_contains: {path: made.txt, text: release-ok}\n",
    );
    let cache = std::env::temp_dir().join("aptitude-tests-agent-cache");
    let aptitude = || {
        let mut a = Aptitude::new();
        a.sandbox_in(suite.path())
            .inherit_path()
            .env("APTITUDE_AGENT_CACHE", &cache)
            .env("GEMINI_API_KEY", "test-gemini-key")
            .envs(std::env::var_os("NODE_EXTRA_CA_CERTS").map(|v| ("NODE_EXTRA_CA_CERTS", v)))
            .current_dir(suite.path())
            .limit(std::time::Duration::from_secs(900));
        a
    };
    let started = Instant::now();
    let out = aptitude()
        .args(["run", "tests", "--no-grade"])
        .args(["--agent", &format!("gemini@pinned,gemini@{OLD_GEMINI}")])
        .arg("--agent-base-url")
        .arg(format!("gemini={}", model.base_url()))
        .arg("--json")
        .arg(suite.results_path())
        .output();
    eprintln!(
        "gemini@pinned and gemini@{OLD_GEMINI}: run in {:?}",
        started.elapsed()
    );
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(suite.results_path()).unwrap()).unwrap();
    let mut ran: Vec<(&str, &str)> = results["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["agent_version"].as_str().unwrap_or(""),
                t["status"].as_str().unwrap_or(""),
            )
        })
        .collect();
    ran.sort();
    assert_eq!(
        ran,
        [(OLD_GEMINI, "passed"), (pinned, "passed")],
        "{}\n{}",
        out.stdout,
        out.stderr
    );
    assert_eq!(results["summary"]["versions"][0]["version"], pinned);
    assert_eq!(results["summary"]["versions"][0]["reference"], true);

    suite.file(
        "tests/search.aptitude.yaml",
        "name: searches\nagent: gemini\nprompt: find TODOs\nassertions:\n  - tool: Grep\n",
    );
    let json_path = suite.path().join("drift.json");
    let started = Instant::now();
    let out = aptitude()
        .args([
            "drift", "tests", "--agent", "gemini", "--from", OLD_GEMINI, "--to", pinned,
        ])
        .arg("--json")
        .arg(&json_path)
        .output();
    eprintln!(
        "drift gemini {OLD_GEMINI} → {pinned}: {:?}",
        started.elapsed()
    );
    assert!(
        out.code == 0 || out.code == 1,
        "{}\n{}",
        out.stdout,
        out.stderr
    );
    let drift: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    assert_eq!(drift["stream"]["status"], "compared", "{drift:#}");
    assert_eq!(drift["settings"]["status"], "not_readable", "{drift:#}");
    assert_eq!(
        out.code == 1,
        !drift["affected"].as_array().unwrap().is_empty()
    );
}
