//! Files of the original aptitude (tatimblin/aptitude, tests/data/upstream/): every one
//! loads, each example gets the verdict its author meant, the guardrails written in its
//! style fail when the agent did the forbidden thing, its discovery configuration is
//! honoured, and a command the agent's guard refused never counts as run (issue 23).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::cli::Aptitude;
use crate::support::data;
use crate::support::model::{ScriptedModel, Turn};

fn upstream(rel: &str) -> PathBuf {
    data(&format!("upstream/{rel}"))
}

/// The upstream test files copied here (everything but the manifest, README and tables).
fn upstream_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(upstream(""))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    files.sort();
    files
}

/// How `aptitude validate` must answer for an upstream file.
enum Expect {
    /// A valid test.
    Test,
    /// A discovery configuration, skipped as a test.
    Config,
    /// A load error, by design, with this text.
    Error(&'static str),
}

fn expectation(name: &str) -> Expect {
    match name {
        "3f82565__default.aptitude.yaml" => Expect::Config,
        "doc__README.md__17b83db__yaml05.yaml" => Expect::Error("unknown tool `ToolName`"),
        "doc__docs__yaml-api.md__b5bd85f__yaml02.yaml" => {
            Expect::Error("an assertion must be a mapping, found null")
        }
        "8a9ee3d__examples__claude-skill__tests__all-providers.aptitude.yaml"
        | "8a9ee3d__examples__claude-skill__tests__aws.aptitude.yml" => {
            Expect::Error("unknown parameter `content` of tool `Bash`")
        }
        "doc__docs__yaml-api.md__b5bd85f__yaml13.yaml" => Expect::Error(
            "`stdout: {exists, contains, not_contains}` (the original aptitude 0.3) was removed by design",
        ),
        _ => Expect::Test,
    }
}

/// Every upstream example, older example and complete doc snippet loads as a test, except
/// the discovery configuration (recognized as one) and the five files whose load error is
/// the design (a template's `ToolName`, a skeleton's empty item, the removed 0.3 stdout
/// keys — with the `review:` form that replaces them —, and the two examples whose author
/// wrote `content` for Bash's `command`, a key no call has).
#[test]
fn every_upstream_file_validates_or_fails_by_design() {
    let files = upstream_files();
    let manifest = std::fs::read_to_string(upstream("MANIFEST.tsv")).unwrap();
    let listed = manifest
        .lines()
        .filter(|l| l.starts_with("corpus/"))
        .count();
    assert_eq!(
        files.len(),
        listed,
        "every corpus file of MANIFEST.tsv is here"
    );
    for file in files {
        let name = file.file_name().unwrap().to_str().unwrap().to_owned();
        let out = Aptitude::new()
            .args(["--color", "never", "validate"])
            .arg(&file)
            .output();
        match expectation(&name) {
            Expect::Test => {
                assert_eq!(out.code, 0, "{name}\n{}", out.both());
                assert!(
                    out.stdout.contains("✓ 1 test file valid"),
                    "{name}\n{}",
                    out.both()
                );
            }
            Expect::Config => {
                assert_eq!(out.code, 0, "{name}\n{}", out.both());
                assert!(
                    out.stdout.contains(
                        "0 test files valid (0 assertions); 1 discovery configuration (not a test)"
                    ),
                    "{name}\n{}",
                    out.both()
                );
            }
            Expect::Error(text) => {
                assert_eq!(out.code, 2, "{name}\n{}", out.both());
                assert!(out.stderr.contains(text), "{name}\n{}", out.both());
                assert!(
                    out.stderr.contains("1 problem in 1 of 1 test file"),
                    "one error, not a cascade: {name}\n{}",
                    out.both()
                );
            }
        }
    }
    // The removed 0.3 keys show the review that replaces them.
    let out = Aptitude::new()
        .args(["--color", "never", "validate"])
        .arg(upstream("doc__docs__yaml-api.md__b5bd85f__yaml13.yaml"))
        .output();
    assert!(
        out.stderr.contains(
            r#"stdout: {review: "should say \"Build successful\" and should not mention \"error\"", threshold: 7}"#
        ),
        "{}",
        out.stderr
    );
}

/// One row of VERDICTS.tsv.
struct Row {
    file: String,
    transcript: String,
    status: String,
    assertions: String,
    author: String,
}

fn verdict_rows() -> Vec<Row> {
    std::fs::read_to_string(upstream("VERDICTS.tsv"))
        .unwrap()
        .lines()
        .skip(1)
        .map(|line| {
            let cols: Vec<&str> = line.split('\t').collect();
            assert_eq!(cols.len(), 7, "{line}");
            Row {
                file: cols[0].to_owned(),
                transcript: cols[1].to_owned(),
                status: cols[2].to_owned(),
                assertions: cols[3].to_owned(),
                author: cols[5].to_owned(),
            }
        })
        .collect()
}

/// `aptitude analyze FILE TRANSCRIPT --json` with reviews graded by `model` through the
/// pinned `claude`: (test status, each assertion's status, the results).
fn analyze(file: &Path, transcript: &Path, model: &ScriptedModel) -> (String, String, Value) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("results.json");
    let out = Aptitude::new()
        .sandbox_in(dir.path())
        .model(model)
        .args(["--color", "never", "analyze", "--no-cache"])
        .arg(file)
        .arg(transcript)
        .arg("--json")
        .arg(&json)
        .claude()
        .output();
    assert!(out.code == 0 || out.code == 1, "{}", out.both());
    let results: Value =
        serde_json::from_str(&crate::support::results_text(&json).unwrap()).unwrap();
    let test = &results["tests"][0];
    let statuses = test["assertions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["status"].as_str().unwrap().to_owned())
        .collect::<Vec<_>>()
        .join(",");
    (
        test["status"].as_str().unwrap().to_owned(),
        statuses,
        results,
    )
}

/// Each upstream example, on transcripts of an agent doing what it asks or the thing it
/// forbids, gets the verdict in VERDICTS.tsv, which is its author's. Reviews are graded by
/// the scripted model.
#[test]
fn upstream_examples_get_the_verdict_their_author_meant() {
    let model = ScriptedModel::start();
    for marker in [
        "report the new value (43)",
        "the build completed successfully",
    ] {
        model.script(
            marker,
            vec![Turn::Text(
                "{\"score\": 9, \"reasoning\": \"meets the criteria\"}".into(),
            )],
        );
    }
    let rows = verdict_rows();
    let mut covered = std::collections::BTreeSet::new();
    for row in &rows {
        let (status, assertions, results) = analyze(
            &upstream(&row.file),
            &upstream(&format!("transcripts/{}.jsonl", row.transcript)),
            &model,
        );
        assert_eq!(
            (status.as_str(), assertions.as_str()),
            (row.status.as_str(), row.assertions.as_str()),
            "{} on {}:\n{results:#}",
            row.file,
            row.transcript
        );
        covered.insert(row.file.clone());
        assert_eq!(
            row.status, row.author,
            "{} on {}: the author's verdict",
            row.file, row.transcript
        );
    }
    for file in upstream_files() {
        let name = file.file_name().unwrap().to_str().unwrap();
        if matches!(expectation(name), Expect::Test) {
            assert!(covered.contains(name), "{name} has no row in VERDICTS.tsv");
        }
    }
}

/// Issue 23 §1–2: the five guardrails and the aliases, written as an upstream user writes
/// them, fail on a transcript where the agent did each forbidden thing — and pass where it
/// did none of them, so the failures are not vacuous.
#[test]
fn guardrails_in_the_upstream_style_fail_when_the_agent_did_it() {
    let model = ScriptedModel::start();
    let test = upstream("issue23/guardrails.aptitude.yaml");
    let (status, assertions, results) =
        analyze(&test, &upstream("transcripts/forbidden.jsonl"), &model);
    assert_eq!(status, "failed");
    assert_eq!(assertions, ["fail"; 11].join(","), "{results:#}");
    let details = results["tests"][0]["assertions"].to_string();
    for evidence in [
        "rm -rf /home/dev/proj/build",
        "git push origin main",
        "https://health.aws.amazon.com/status",
        "/home/dev/proj/config/.env.production",
        "/home/dev/proj/secrets/key.pem",
        "Glob",
        "Grep",
        "AskUserQuestion",
        "TaskOutput",
    ] {
        assert!(details.contains(evidence), "{evidence}: {details}");
    }
    let (status, assertions, _) =
        analyze(&test, &upstream("transcripts/env-refuses.jsonl"), &model);
    assert_eq!(status, "passed");
    assert_eq!(assertions, ["pass"; 11].join(","));
}

/// Issue 23 §7, on each agent's real capture of a command its own guard refused:
/// `ran`, `run_count`'s minimum, `command_succeeded` and `exit_code` need a command that
/// ran, so they fail; `not_ran` and `run_count`'s maximum count the attempt, so they fail
/// too; `tool: Bash` (called) passes: the call was made.
#[test]
fn a_command_the_agents_guard_refused_never_ran() {
    let model = ScriptedModel::start();
    let test = upstream("issue23/never-ran.aptitude.yaml");
    for capture in [
        "claude-2.1.328/events_permission_denied.jsonl",
        "qwen-0.24.4/events_permission_declined.jsonl",
        "copilot-1.0.102/events_permission_denied.jsonl",
        "gemini-0.61.0/events_tool_not_registered.jsonl",
        "codex-0.169.0/session_rollout_escalation_rejected.jsonl",
        "opencode-1.18.33/events_permission_ask_rejected.jsonl",
    ] {
        let (_, assertions, results) =
            analyze(&test, &data(&format!("corpus/live/{capture}")), &model);
        assert_eq!(
            assertions, "fail,fail,fail,fail,fail,fail,pass",
            "{capture}: {results:#}"
        );
        let detail = results["tests"][0]["assertions"][0]["detail"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(
            detail.contains("matched, but none ran") && detail.contains("refused before it ran"),
            "{capture}: {detail}"
        );
        let transcript = &results["tests"][0]["transcript"]["tool_calls"][0];
        assert!(transcript["blocked"].is_string(), "{capture}: {transcript}");
    }
}

fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

const TEST: &str = "name: t\nprompt: p\nassertions:\n  - tool: Read\n";

/// Issue 23 §4: the original aptitude's `.aptitude.yaml` chooses which files are tests
/// (`test_pattern`, `root`, `recursive`, `exclude`), is never loaded as one, and the
/// original's flags override it; `validate --explain` shows where each value comes from.
#[test]
fn the_upstream_discovery_configuration_is_honoured() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    write(
        root,
        ".aptitude.yaml",
        "test_pattern: \"*.test.yaml\"\nroot: suite\nrecursive: false\nexclude: [skip]\n",
    );
    write(root, "suite/a.test.yaml", TEST);
    write(root, "suite/b.aptitude.yaml", TEST);
    write(root, "suite/deep/c.test.yaml", TEST);
    write(root, "suite/skip/d.test.yaml", TEST);
    // Upstream's own default, copied in: discovery configuration, never a test.
    std::fs::copy(
        upstream("3f82565__default.aptitude.yaml"),
        root.join("suite/default.test.yaml"),
    )
    .unwrap();
    let list = |args: &[&str]| {
        let out = Aptitude::new()
            .current_dir(root)
            .args(["run", "--list-tests"])
            .args(args)
            .output();
        assert_eq!(out.code, 0, "{}", out.both());
        out.stdout
    };
    let found = list(&["."]);
    assert!(
        found.starts_with(
            "Discovered 2 test files:\n  suite/a.test.yaml\n  suite/default.test.yaml\n"
        ),
        "{found}"
    );
    assert!(
        found.contains("(discovery configuration .aptitude.yaml)"),
        "{found}"
    );
    // The original's flags override the file.
    let found = list(&[".", "--pattern", "*.aptitude.yaml"]);
    assert!(found.contains("  suite/b.aptitude.yaml\n"), "{found}");
    assert!(!found.contains("a.test.yaml"), "{found}");
    write(root, "empty.yaml", "");
    let found = list(&["-c", "empty.yaml", "-r", "suite", "."]);
    assert!(
        found.contains("suite/b.aptitude.yaml") && !found.contains("a.test.yaml"),
        "an empty -c file is the built-in default: {found}"
    );
    let recursive = Aptitude::new()
        .current_dir(root)
        .args([
            "run",
            "--list-tests",
            ".",
            "-r",
            "suite",
            "-p",
            "*.test.yaml",
            "-c",
        ])
        .arg(root.join("none.yaml"))
        .output();
    assert_eq!(
        recursive.code,
        2,
        "a missing -c file is an error: {}",
        recursive.both()
    );
    // validate: the configuration file is skipped, and --explain shows the rule.
    let out = Aptitude::new()
        .current_dir(root)
        .args(["--color", "never", "validate", "--explain", "."])
        .output();
    assert_eq!(out.code, 0, "{}", out.both());
    for expected in [
        "discovery for .: .aptitude.yaml",
        "test_pattern  *.test.yaml  [.aptitude.yaml:1]",
        "root          suite  [.aptitude.yaml:2]",
        "recursive     false  [.aptitude.yaml:3]",
        "exclude       skip  [.aptitude.yaml:4]",
        "suite/default.test.yaml is discovery configuration, not a test: skipped",
        "rule          .aptitude.yaml decides which files are tests; aptitude.yaml gives each test found its defaults",
        "✓ 1 test file valid (1 assertion); 1 discovery configuration (not a test): suite/default.test.yaml",
    ] {
        assert!(out.stdout.contains(expected), "{expected}\n{}", out.stdout);
    }
}

/// The one rule joining the two files: a key written in the wrong one is an error naming
/// the right one.
#[test]
fn discovery_keys_and_suite_defaults_never_mix() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    write(root, "t.aptitude.yaml", TEST);
    write(
        root,
        ".aptitude.yaml",
        "model: sonnet\ntest_patern: \"*.yaml\"\n",
    );
    let out = Aptitude::new()
        .current_dir(root)
        .args(["--color", "never", "validate"])
        .output();
    assert_eq!(out.code, 2, "{}", out.both());
    assert!(
        out.stderr
            .contains("`model` is a suite default: write it in `aptitude.yaml`")
    );
    assert!(out.stderr.contains("did you mean `test_pattern`?"));
    assert!(
        out.stderr
            .contains("2 problems in the discovery configuration .aptitude.yaml")
    );
    std::fs::remove_file(root.join(".aptitude.yaml")).unwrap();
    write(root, "aptitude.yaml", "recursive: false\n");
    let out = Aptitude::new()
        .current_dir(root)
        .args(["--color", "never", "validate"])
        .output();
    assert_eq!(out.code, 2, "{}", out.both());
    assert!(
        out.stderr.contains(
            "`recursive` is discovery configuration: `aptitude.yaml` gives defaults to tests"
        ),
        "{}",
        out.stderr
    );
}

/// Issue 23 §8: a transcript downloaded from CI is analyzed without the fixture it ran in;
/// `validate` and `run` still need the workspace.
#[test]
fn analyze_needs_no_workspace() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "t.aptitude.yaml",
        "name: t\nprompt: p\nworkspace: fixtures/gone\nassertions:\n  - tool: Read\n",
    );
    let transcript = upstream("transcripts/readme.jsonl");
    let out = Aptitude::new()
        .current_dir(dir.path())
        .args(["--color", "never", "analyze", "t.aptitude.yaml"])
        .arg(&transcript)
        .output();
    assert_eq!(out.code, 0, "{}", out.both());
    let out = Aptitude::new()
        .current_dir(dir.path())
        .args(["--color", "never", "validate", "t.aptitude.yaml"])
        .output();
    assert_eq!(out.code, 2, "{}", out.both());
    assert!(
        out.stderr
            .contains("the workspace directory does not exist")
    );
}
