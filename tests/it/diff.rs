//! `aptitude diff`: two results files (`tests/data/results/diff/`, written by its
//! `make.py`: a test that regressed because its head run stopped after an edit, an
//! unchanged test, a repeated test whose pass rate fell), and the runs of one flaky test;
//! the terminal output (snapshot), the JSON's shape, the Markdown as GitHub renders it,
//! the exit codes; and the PR comment's line for a regressed test, with its run view link.

use serde_json::{Value, json};

use crate::support::cli::Aptitude;
use crate::support::consumers::gfm;
use crate::support::data;

fn base() -> String {
    data("results/diff/base.json").display().to_string()
}

fn head() -> String {
    data("results/diff/head.json").display().to_string()
}

#[test]
fn two_results_name_where_each_changed_test_parts_and_what_flipped() {
    let dir = tempfile::tempdir().unwrap();
    let (json_path, md_path) = (dir.path().join("diff.json"), dir.path().join("diff.md"));
    let out = Aptitude::new()
        .args(["diff", &base(), &head()])
        .arg("--json")
        .arg(&json_path)
        .arg("--markdown")
        .arg(&md_path)
        .output();
    out.code(1);
    out.settings()
        .bind(|| insta::assert_snapshot!("diff_two_results", out.stdout));

    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    assert_eq!(
        v["summary"],
        json!({"compared": 3, "changed": 2, "regressed": 1, "fixed": 0})
    );
    let fix = &v["tests"][0];
    assert_eq!(fix["name"], "Fix and test");
    assert_eq!(fix["change"], "regressed");
    assert_eq!(fix["anchor"], "t1");
    assert_eq!(
        fix["first_divergence"],
        json!({
            "index": 1, "kind": "call", "after": "Edit src/app.py",
            "base": {"says": "ran `pytest -q`",
                     "call": {"number": 2, "tool": "Bash", "input": "command=\"pytest -q\"", "result": "exit 0"}},
            "head": {"says": "stopped after Edit src/app.py", "call": null}
        })
    );
    assert_eq!(
        fix["flipped"],
        json!([{"line": 9, "kind": "command_succeeded",
                "description": "a command matching /pytest/ succeeded", "base": "pass", "head": "fail"}])
    );
    // The repeated test: a passing base run against a failing head run, parting at the
    // result of the same first call.
    let lint = &v["tests"][1];
    assert_eq!(
        (&lint["base"]["run"], &lint["head"]["run"]),
        (&json!(1), &json!(2))
    );
    assert_eq!(lint["first_divergence"]["kind"], "result");
    assert_eq!(
        (&lint["head"]["passed"], &lint["head"]["judged"]),
        (&json!(1), &json!(3))
    );

    // GitHub renders the Markdown: a table per divergence, no raw HTML.
    let seen = gfm(&std::fs::read_to_string(&md_path).unwrap());
    assert_eq!(seen["stripped"], json!([]));
    assert_eq!(seen["tables"].as_array().unwrap().len(), 2, "{seen}");
    let text = seen["text"].as_str().unwrap();
    assert!(
        text.contains(
            "base ran 'pytest -q' after Edit src/app.py; head stopped after Edit src/app.py"
        ),
        "{text}"
    );
}

#[test]
fn the_runs_of_a_flaky_test_in_one_file() {
    let out = Aptitude::new().args(["diff", &head()]).output();
    out.code(0);
    assert!(
        out.stdout
            .contains("Lint  tests/lint.aptitude.yaml  failed (1/3 runs)")
            && out
                .stdout
                .contains("base run 1 (passed) · head run 2 (failed)"),
        "{}",
        out.stdout
    );
    // Runs named: the two failing runs made the same calls with the same results.
    let out = Aptitude::new()
        .args(["diff", &head(), "--test", "Lint", "--run", "2,3"])
        .output();
    out.code(0);
    assert!(
        out.stdout
            .contains("base run 2 (failed) · head run 3 (failed)")
            && out.stdout.contains("the same calls with the same results"),
        "{}",
        out.stdout
    );
    // Across the two files, run 1 of each (both passed).
    let out = Aptitude::new()
        .args(["diff", &base(), &head(), "--test", "Lint", "--run", "1"])
        .output();
    out.code(0);
    assert!(
        out.stdout
            .contains("base run 1 (passed) · head run 1 (passed)"),
        "{}",
        out.stdout
    );
}

#[test]
fn input_that_can_not_be_compared_is_exit_2() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["--test", "Fix and tset"],
            "has no test named \"Fix and tset\"; did you mean \"Fix and test\"?",
        ),
        (&["--test", "Lint", "--run", "9"], "has no run 9 (it has 3)"),
        (&["--run", "0"], "write a run number, or two as A,B"),
    ];
    for (extra, says) in cases {
        let out = Aptitude::new()
            .args(["diff", &base(), &head()])
            .args(extra.iter())
            .output();
        out.code(2);
        assert!(out.stderr.contains(says), "{extra:?}: {}", out.stderr);
    }
    let out = Aptitude::new()
        .args(["diff", "Cargo.toml", &head()])
        .output();
    out.code(2);
    assert!(
        out.stderr.contains("is not an aptitude results file"),
        "{}",
        out.stderr
    );
}

/// The PR comment's baseline section: the regressed test's first divergence in one line,
/// linking the run view (the workflow run's artifacts) and naming its anchor in the report.
#[tokio::test]
async fn the_pr_comment_names_a_regressions_first_divergence_and_links_its_run_view() {
    let gh = crate::github::Gh::new(crate::github::PR_EVENT).await;
    gh.forbid_user().await;
    gh.comments(None, json!([]), false).await;
    gh.accept_writes().await;
    let (code, out) = gh
        .publish_in(
            &data("results/diff/head.json"),
            &crate::support::root(),
            &["--baseline", &base()],
        )
        .await;
    assert_eq!(code, 1, "{out}");
    let body = gh.comment_body().await;
    let line = "  - Fix and test: base ran 'pytest -q' after Edit src/app.py; head stopped after Edit src/app.py · [run view](https://github.com/o/r/actions/runs/42#artifacts) `report.html#t1`";
    assert!(body.contains(line), "{body}");
    let seen = gfm(&body);
    assert!(
        seen["links"]
            .as_array()
            .unwrap()
            .contains(&json!("https://github.com/o/r/actions/runs/42#artifacts")),
        "{seen}"
    );
    gh.assert_valid_for_github().await;
}
