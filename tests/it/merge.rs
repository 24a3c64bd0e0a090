//! Shards and `aptitude merge`: shard results merge into the results of the whole run
//! (counts, time and cost add up, reports render); a test in two files, differing results
//! versions, and missing or repeated shards are errors; `run --shard` refuses a bad `K/N`
//! with a tip; and two real shard runs of one suite merge into every test, once.
//!
//! `tests/data/results/shards/{1of2,2of2}.json` split the four tests of
//! `tests/data/results/hostile.json` into two shards (costs known in the first, unknown in
//! the second); `passed.json` is an unsharded file with its one passing test.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::run::{Suite, aptitude_run};
use crate::support::cli::{Aptitude, Output};
use crate::support::model::{ScriptedModel, Turn};
use crate::support::{data, root};

fn aptitude(args: &[&std::ffi::OsStr]) -> Output {
    Aptitude::new().current_dir(root()).args(args).output()
}

fn merge(inputs: &[PathBuf], extra: &[&std::ffi::OsStr]) -> Output {
    let mut args: Vec<&std::ffi::OsStr> = vec!["merge".as_ref()];
    args.extend(inputs.iter().map(|p| p.as_os_str()));
    args.extend_from_slice(extra);
    aptitude(&args)
}

fn shard_file(name: &str) -> PathBuf {
    data(&format!("results/shards/{name}"))
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&crate::support::results_text(path).unwrap()).unwrap()
}

/// A copy of `name` in `dir` after `edit`.
fn edited(dir: &Path, name: &str, edit: impl FnOnce(&mut Value)) -> PathBuf {
    let mut value = read(&shard_file(name));
    edit(&mut value);
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string_pretty(&value).unwrap()).unwrap();
    path
}

#[test]
fn shards_merge_into_the_whole_run_with_counts_time_and_cost_added() {
    let dir = tempfile::tempdir().unwrap();
    let out_json = dir.path().join("merged.json");
    let html = dir.path().join("report.html");
    let markdown = dir.path().join("summary.md");
    let junit = dir.path().join("junit.xml");
    // The second shard first: the merged order follows the test files, not the arguments.
    let out = merge(
        &[shard_file("2of2.json"), shard_file("1of2.json")],
        &[
            "--json".as_ref(),
            out_json.as_os_str(),
            "--html".as_ref(),
            html.as_os_str(),
            "--markdown".as_ref(),
            markdown.as_os_str(),
            "--junit".as_ref(),
            junit.as_os_str(),
        ],
    );
    assert_eq!(out.code, 1, "three tests failed: exit 1\n{}", out.stderr);
    assert_eq!(out.stderr, "");
    assert!(out.stdout.contains("1 passed, 3 failed"), "{}", out.stdout);

    let merged = read(&out_json);
    let whole = read(&data("results/hostile.json"));
    // Counts and usage (tokens, turns, cost; 2 tests without a cost) are those of the
    // unsplit run; the duration is the two shards' 2000 + 2321 ms.
    assert_eq!(merged["summary"], whole["summary"]);
    assert_eq!(merged["summary"]["duration_ms"], 4321);
    assert_eq!(merged["summary"]["usage"]["cost_usd"], json!(0.013388));
    let ids = |v: &Value| -> Vec<(String, String)> {
        v["tests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| (t["file"].to_string(), t["name"].to_string()))
            .collect()
    };
    assert_eq!(ids(&merged), ids(&whole), "every test, in file order");
    assert_eq!(merged["version"], 3);
    assert!(merged.get("shard").is_none(), "merged results are no shard");

    let md = std::fs::read_to_string(&markdown).unwrap();
    assert!(md.contains("Creates and runs a script"), "{md}");
    let junit = std::fs::read_to_string(&junit).unwrap();
    assert!(junit.contains("tests=\"4\""), "{junit}");
    assert!(
        std::fs::read_to_string(&html)
            .unwrap()
            .contains("Push to GitHub safely")
    );
    for file in [&out_json, &dir.path().join("summary.md")] {
        assert!(
            !std::fs::read_to_string(file)
                .unwrap()
                .contains("sk-ant-api03-AAAA"),
            "merged output is redacted: {}",
            file.display()
        );
    }
}

#[test]
fn the_exit_code_follows_the_merged_results() {
    let dir = tempfile::tempdir().unwrap();
    let out_json = dir.path().join("merged.json");
    let out = merge(
        &[shard_file("passed.json")],
        &["--json".as_ref(), out_json.as_os_str()],
    );
    assert_eq!(out.code, 0, "every test passed\n{}", out.stderr);
    assert_eq!(read(&out_json)["summary"]["passed"], 1);
}

#[test]
fn the_same_test_in_two_files_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let out_json = dir.path().join("merged.json");
    let out = merge(
        &[shard_file("passed.json"), shard_file("2of2.json")],
        &["--json".as_ref(), out_json.as_os_str()],
    );
    // passed.json is no shard while 2of2.json is one: that is refused first.
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("is not a shard"), "{}", out.stderr);

    let unsharded = edited(dir.path(), "2of2.json", |v| {
        v.as_object_mut().unwrap().remove("shard");
    });
    let out = merge(
        &[shard_file("passed.json"), unsharded.clone()],
        &["--json".as_ref(), out_json.as_os_str()],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains(&format!(
            "error: test `Creates and runs a script` (examples/hello-script/hello.aptitude.yaml, agent claude) is in both {} and {}",
            shard_file("passed.json").display(),
            unsharded.display()
        )),
        "{}",
        out.stderr
    );
    assert!(!out_json.exists(), "nothing is written");
}

#[test]
fn differing_results_versions_are_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let newer = edited(dir.path(), "2of2.json", |v| v["version"] = json!(4));
    let out = merge(
        &[shard_file("1of2.json"), newer.clone()],
        &["--json".as_ref(), dir.path().join("m.json").as_os_str()],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains(&format!(
            "{} has results version 4; this aptitude reads versions 1 to 3",
            newer.display()
        )),
        "{}",
        out.stderr
    );
}

#[test]
fn missing_repeated_and_foreign_shards_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let to = dir.path().join("m.json");
    let json_flag: [&std::ffi::OsStr; 2] = ["--json".as_ref(), to.as_os_str()];

    let out = merge(&[shard_file("1of2.json")], &json_flag);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("shard 2 of 2 is missing: merge the results of every shard job"),
        "{}",
        out.stderr
    );

    let again = edited(dir.path(), "2of2.json", |v| v["shard"]["index"] = json!(1));
    let out = merge(&[shard_file("1of2.json"), again], &json_flag);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("are both shard 1/2"), "{}", out.stderr);

    let other_split = edited(dir.path(), "2of2.json", |v| v["shard"]["count"] = json!(3));
    let out = merge(&[shard_file("1of2.json"), other_split], &json_flag);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("of another split"), "{}", out.stderr);
    assert!(!to.exists());

    let out = merge(&[shard_file("1of2.json"), shard_file("2of2.json")], &[]);
    assert_eq!(out.code, 2, "nothing to write");
    assert!(out.stderr.contains("nothing to write"), "{}", out.stderr);
}

#[test]
fn a_bad_shard_is_a_usage_error_with_a_tip() {
    for (shard, message, tip) in [
        (
            "0/3",
            "shards are numbered from 1",
            "the first shard is `--shard 1/3`",
        ),
        (
            "4/3",
            "there is no shard 4 of 3",
            "the last shard is `--shard 3/3`",
        ),
        ("1/0", "a run can not be split into 0 shards", "--shard 2/3"),
        ("half", "expected K/N", "--shard 2/3"),
    ] {
        let out = aptitude(&[
            "run".as_ref(),
            "--shard".as_ref(),
            shard.as_ref(),
            "examples".as_ref(),
        ]);
        assert_eq!(out.code, 2, "{shard}: {}", out.stderr);
        assert!(
            out.stderr.contains(&format!(
                "error: invalid value '{shard}' for '--shard <K/N>': {message}"
            )),
            "{shard}: {}",
            out.stderr
        );
        let tip_line = out.stderr.lines().find(|l| l.starts_with("  tip: "));
        assert!(
            tip_line.is_some_and(|l| l.contains(tip)),
            "{shard}: {}",
            out.stderr
        );
    }
}

/// Two real shard jobs of one suite (the pinned `claude` against the scripted model): each
/// runs its part, their results merge into every test once, and a baseline's durations
/// split the same suite by time instead.
#[test]
fn two_shard_runs_merge_into_every_test_once() {
    let model = ScriptedModel::start();
    let suite = Suite::new();
    let names = ["alpha", "bravo", "charlie", "delta", "echo"];
    for name in names {
        model.script(
            &format!("shard-{name}"),
            vec![
                Turn::Tool("Bash", json!({"command": format!("echo {name}")})),
                Turn::Text("done".into()),
            ],
        );
        suite.file(
            &format!("tests/{name}.aptitude.yaml"),
            &format!("name: {name}\nprompt: \"shard-{name}\"\nassertions:\n  - tool: Bash\n"),
        );
    }
    let mut shard_results = Vec::new();
    for k in 1..=2 {
        let out = aptitude_run(&suite, &model, &["--shard", &format!("{k}/2")]);
        assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
        let results = out.results.unwrap();
        let ran = results["tests"].as_array().unwrap().len();
        assert_eq!(
            ran,
            if k == 1 { 3 } else { 2 },
            "hash shards differ by one test"
        );
        assert!(
            out.stdout
                .contains(&format!("shard {k}/2: {ran} of 5 tests")),
            "{}",
            out.stdout
        );
        assert_eq!(
            results["shard"],
            json!({"index": k, "count": 2, "tests": 5, "balanced_by": "hash"})
        );
        let path = suite.path().join(format!("shard-{k}.json"));
        crate::support::copy_results(suite.results_path(), &path);
        shard_results.push(path);
    }
    let merged_path = suite.path().join("merged.json");
    let out = merge(
        &shard_results,
        &["--json".as_ref(), merged_path.as_os_str()],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let merged = read(&merged_path);
    let mut ran: Vec<&str> = merged["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    ran.sort_unstable();
    assert_eq!(ran, names, "every test, once");
    assert_eq!(merged["summary"]["total"], 5);

    // With a baseline where `alpha` took as long as the other four together, it runs
    // alone in its shard.
    let mut baseline = merged.clone();
    for t in baseline["tests"].as_array_mut().unwrap() {
        t["duration_ms"] = json!(if t["name"] == "alpha" { 40_000 } else { 10_000 });
    }
    let baseline_path = suite.path().join("baseline.json");
    std::fs::write(&baseline_path, baseline.to_string()).unwrap();
    let mut alone = None;
    for k in 1..=2 {
        let out = aptitude_run(
            &suite,
            &model,
            &[
                "--shard",
                &format!("{k}/2"),
                "--baseline",
                baseline_path.to_str().unwrap(),
            ],
        );
        assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
        assert!(
            out.stdout.contains("balanced by the baseline's durations"),
            "{}",
            out.stdout
        );
        let results = out.results.unwrap();
        assert_eq!(results["shard"]["balanced_by"], "duration");
        let tests = results["tests"].as_array().unwrap();
        if tests.iter().any(|t| t["name"] == "alpha") {
            alone = Some(tests.len());
        }
    }
    assert_eq!(alone, Some(1), "the longest test has a shard to itself");
}

/// A test with `runs: 4` shares two shard jobs with a test that runs once: its runs are
/// split like tests (`shard 1/2: 3 of 5 runs (2 of 2 tests)`), a shard whose runs do not
/// decide it leaves it `skipped` (reason `shard`), and the merge joins every run, once, in
/// its place, into one verdict over all four.
#[test]
fn the_runs_of_a_repeated_test_are_split_across_shards_and_merged() {
    let model = ScriptedModel::start();
    let suite = Suite::new();
    for name in ["repeated", "once"] {
        model.script(
            &format!("split-{name}"),
            vec![
                Turn::Tool("Bash", json!({"command": format!("echo {name}")})),
                Turn::Text("done".into()),
            ],
        );
    }
    suite.file(
        "tests/repeated.aptitude.yaml",
        "name: repeated\nprompt: \"split-repeated\"\nruns: 4\nmin_pass: 3\nassertions:\n  - tool: Bash\n",
    );
    suite.file(
        "tests/once.aptitude.yaml",
        "name: once\nprompt: \"split-once\"\nassertions:\n  - tool: Bash\n",
    );
    let mut parts = Vec::new();
    let mut numbers_seen = Vec::new();
    for k in 1..=2 {
        let out = aptitude_run(&suite, &model, &["--shard", &format!("{k}/2")]);
        assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
        let results = out.results.unwrap();
        assert_eq!(results["shard"]["runs"], 5, "{}", results["shard"]);
        let tests = results["tests"].as_array().unwrap();
        let runs_here: usize = tests
            .iter()
            .map(|t| t["runs"].as_array().map_or(1, Vec::len))
            .sum();
        assert_eq!(runs_here, if k == 1 { 3 } else { 2 }, "units differ by one");
        assert!(
            out.stdout.contains(&format!(
                "shard {k}/2: {runs_here} of 5 runs ({} of 2 test",
                tests.len()
            )),
            "{}",
            out.stdout
        );
        if let Some(t) = tests.iter().find(|t| t["name"] == "repeated") {
            let here = t["runs"].as_array().map_or(0, Vec::len);
            if here < 4 {
                let split = &t["repeat"]["split"];
                assert_eq!(split["of"], 4, "{t}");
                numbers_seen.extend(
                    split["numbers"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|n| n.as_u64().unwrap()),
                );
                // Three passing runs are needed: fewer here can not decide it.
                let (status, reason) = if here >= 3 {
                    ("passed", Value::Null)
                } else {
                    ("skipped", json!("shard"))
                };
                assert_eq!(t["status"], status, "{t}");
                assert_eq!(t["skip_reason"], reason, "{t}");
            } else {
                numbers_seen.extend(1..=4);
            }
        }
        let path = suite.path().join(format!("part-{k}.json"));
        crate::support::copy_results(suite.results_path(), &path);
        parts.push(path);
    }
    numbers_seen.sort_unstable();
    assert_eq!(numbers_seen, [1, 2, 3, 4], "every run in exactly one shard");

    let merged_path = suite.path().join("merged.json");
    let out = merge(&parts, &["--json".as_ref(), merged_path.as_os_str()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stderr.contains("warning"), "{}", out.stderr);
    let merged = read(&merged_path);
    let tests = merged["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 2, "one result per test: {merged}");
    let repeated = tests.iter().find(|t| t["name"] == "repeated").unwrap();
    assert_eq!(repeated["status"], "passed");
    assert_eq!(repeated["repeat"]["runs"], 4);
    assert_eq!(repeated["repeat"]["passed"], 4);
    assert!(repeated["repeat"].get("split").is_none(), "{repeated}");
    assert_eq!(repeated["runs"].as_array().unwrap().len(), 4);
    assert_eq!(merged["summary"]["total"], 2);
    assert_eq!(merged["summary"]["passed"], 2);
    assert_eq!(
        merged["summary"]["runs"]["total"], 5,
        "{}",
        merged["summary"]
    );
    // The shards were read without their run detail and each test put together again whole:
    // every run has its transcript and sandbox proof, and the summary's figures read from
    // run detail are what the merged tests whole give.
    let whole = aptitude::report::json::read(&merged_path).unwrap();
    let runs: Vec<_> = whole
        .tests
        .iter()
        .flat_map(aptitude::verdict::results::TestResult::each_run)
        .collect();
    assert_eq!(runs.len(), 5);
    assert!(
        runs.iter()
            .all(|r| r.transcript.is_some() && r.sandbox.is_some() && r.witness.is_some()),
        "{merged}"
    );
    let recomputed =
        aptitude::verdict::results::Summary::of(&whole.tests, whole.summary.duration_ms);
    assert_eq!(whole.summary.sandbox, recomputed.sandbox);
    assert_eq!(whole.summary.witness, recomputed.witness);
    assert_eq!(
        recomputed.witness.as_ref().map(|w| w.witnessed),
        Some(5),
        "{:?}",
        recomputed.witness
    );
    assert_eq!(
        recomputed.sandbox.as_ref().map(|s| s.proved),
        Some(5),
        "{:?}",
        recomputed.sandbox
    );

    // The same shard twice holds a run twice: refused, naming the run.
    let out = merge(
        &[parts[0].clone(), parts[0].clone()],
        &["--json".as_ref(), merged_path.as_os_str()],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
}

/// The shard + merge workflow in docs/github-action.md passes actionlint.
#[test]
fn the_documented_shard_workflow_passes_actionlint() {
    let doc = std::fs::read_to_string(root().join("docs/github-action.md")).unwrap();
    let section = doc
        .split("## Shards: a matrix of jobs, one comment")
        .nth(1)
        .expect("docs/github-action.md has the shards section");
    let workflow = section
        .split("```yaml\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the section holds a workflow");
    assert!(workflow.contains("merge: shards"), "{workflow}");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("shards.yml");
    std::fs::write(&file, workflow).unwrap();
    let problems = crate::action::actionlint(&[&file]);
    assert!(problems.is_empty(), "{problems:#?}");
}
