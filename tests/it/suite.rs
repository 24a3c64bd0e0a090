//! Suite defaults: `aptitude.yaml` files above a test give it defaults (nearest wins field
//! by field, the test wins over all, `env`/`mcp_servers` merge by name), `validate
//! --explain` shows each effective setting with where it comes from, and a broken
//! `aptitude.yaml` stops everything before any agent runs.

use std::path::Path;

use crate::support::cli::Aptitude;

fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A repository with an `aptitude.yaml` at its root and one in `tests/`, an
/// `aptitude.yaml` above the repository (never read: it is broken), and two tests.
fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "aptitude.yaml", "prompt: not a default\n");
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    write(
        &repo,
        "aptitude.yaml",
        "agents: [claude, codex]\ntimeout: 5m\nruns: 3\nenv: {LOG_LEVEL: debug, TOKEN: from-root}\njudge: {threshold: 8, votes: 3}\n",
    );
    write(
        &repo,
        "tests/aptitude.yaml",
        "model: suite-model\nmin_pass: 2\nenv: {TOKEN: from-tests}\nmcp_servers:\n  docs: {command: node, args: [server.js]}\n",
    );
    write(
        &repo,
        "tests/a.aptitude.yaml",
        "name: own settings\nprompt: p\nmodel: own-model\nruns: 2\nenv: {EXTRA: \"1\"}\nassertions:\n  - stdout: {review: \"says hi\", threshold: 5}\n",
    );
    write(
        &repo,
        "tests/sub/b.aptitude.yaml",
        "name: all defaults\nprompt: p\nassertions:\n  - stdout: {review: \"says hi\"}\n",
    );
    dir
}

/// Each setting of each test shows its value and origin: the test's own line, the nearest
/// `aptitude.yaml`'s line, or `default`; env values are not shown.
#[test]
fn validate_explain_shows_each_setting_and_where_it_comes_from() {
    let dir = repo();
    let out = Aptitude::new()
        .args(["validate", "--explain", "tests"])
        .current_dir(dir.path().join("repo"))
        .output();
    out.code(0);
    assert!(!out.stdout.contains("from-tests") && !out.stdout.contains("debug"));
    out.settings().bind(|| {
        insta::assert_snapshot!("validate_explain", out.stdout);
    });
}

/// `--explain` warns at each `ran:`-style check of a `git` command in a test whose
/// workspace copy has no `.git` (it fails there, "not a git repository", and `ran:` holds
/// whatever the outcome), naming the `workspace: {path, git: true}` to write; a test with
/// it gets no warning. The default timeout is shown as what it is, 10 minutes.
#[test]
fn validate_explain_warns_of_git_checks_without_git_and_shows_the_default_timeout() {
    let repo = tempfile::tempdir().unwrap();
    let tests = repo.path().join("tests");
    std::fs::create_dir_all(repo.path().join("repo")).unwrap();
    write(
        &tests,
        "t.aptitude.yaml",
        "name: t\nprompt: p\nworkspace: ../repo\nassertions:\n  - ran: \"git log\"\n  - ran: \"cargo test\"\n  - command_succeeded: \"^git commit\"\n",
    );
    write(
        &tests,
        "g.aptitude.yaml",
        "name: g\nprompt: p\nworkspace: {path: ../repo, git: true}\nassertions:\n  - ran: \"git log\"\n",
    );
    let out = Aptitude::new()
        .args(["--color", "never", "validate", "--explain", "tests"])
        .current_dir(repo.path())
        .output();
    out.code(0);
    let warnings: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("warning:"))
        .collect();
    assert_eq!(warnings.len(), 2, "{}", out.both());
    assert!(
        warnings[0].contains("tests/t.aptitude.yaml:5: `ran: git log` checks a git command")
            && warnings[0].contains("write `workspace: {path: ../repo, git: true}`"),
        "{}",
        out.both()
    );
    assert!(
        warnings[1].contains(":7: `command_succeeded: ^git commit`"),
        "{}",
        out.both()
    );
    assert!(
        out.stdout
            .contains("timeout     10m (or `run --timeout`)  [default]"),
        "{}",
        out.stdout
    );
}

/// A test named directly still gets the defaults of every `aptitude.yaml` above it, the
/// nearest winning: agents and the judge threshold from the root, model and `TOKEN` from
/// `tests/`.
#[test]
fn defaults_reach_the_loaded_tests() {
    let dir = repo();
    let out = Aptitude::new()
        .args(["validate", "--explain", "tests/sub/b.aptitude.yaml"])
        .current_dir(dir.path().join("repo"))
        .output();
    out.code(0);
    for expected in [
        "claude, codex  [aptitude.yaml:1]",
        "suite-model  [tests/aptitude.yaml:1]",
        "TOKEN (tests/aptitude.yaml:3)",
        "threshold 8 (aptitude.yaml:5)",
    ] {
        assert!(out.stdout.contains(expected), "{expected}\n{}", out.both());
    }
}

/// A broken `aptitude.yaml` is a load error with file:line:col, a test-only key is named
/// as such and an unknown key gets a suggestion; `run` stops before any agent starts.
#[test]
fn a_broken_suite_file_stops_everything() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".git")).unwrap();
    write(
        dir.path(),
        "aptitude.yaml",
        "prompt: hello\ntimout: 5m\nruns: 0\n",
    );
    write(
        dir.path(),
        "t.aptitude.yaml",
        "name: t\nprompt: p\nassertions:\n  - exit_code: 0\n",
    );
    let out = Aptitude::new()
        .args(["validate", "."])
        .current_dir(dir.path())
        .output();
    out.code(2);
    insta::assert_snapshot!("suite_file_errors", out.stderr);
    let run = Aptitude::new()
        .args(["run", ".", "--agent-bin", "claude=/nonexistent/claude"])
        .current_dir(dir.path())
        .output();
    run.code(2);
    assert!(
        run.stderr.contains("`prompt` is test-only"),
        "{}",
        run.both()
    );
}

/// `coverage: {exclude: [...]}` in `aptitude.yaml` leaves a whole file and a section out
/// of `aptitude coverage`, as the inline markers would, without touching the files; an
/// entry naming a file or section that is not there stops `coverage` with file:line:col,
/// the line, a caret and a "did you mean".
#[test]
fn coverage_leaves_out_what_aptitude_yaml_excludes() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path();
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    write(
        repo,
        "AGENTS.md",
        "# Rules\n\n- Run `cargo test` before you commit.\n\n## Release process\n\n- Tag the release.\n- Push the tag.\n\n## Style\n\n- Keep functions short.\n",
    );
    write(
        repo,
        "CLAUDE.md",
        "- Never push to main.\n- Sign your commits.\n",
    );
    write(
        repo,
        "tests/t.aptitude.yaml",
        "name: t\nprompt: p\nworkspace: ..\ncovers: \"cargo test\"\nassertions:\n  - exit_code: 0\n",
    );
    let coverage = || {
        Aptitude::new()
            .args(["coverage", "tests"])
            .current_dir(repo)
            .output()
    };
    let before = coverage();
    before.code(0);
    assert!(
        before.stdout.contains("rules covered: 1 of 6"),
        "{}",
        before.stdout
    );

    write(
        repo,
        "aptitude.yaml",
        "coverage:\n  exclude:\n    - CLAUDE.md\n    - \"AGENTS.md#Release process\"\n",
    );
    let after = coverage();
    after.code(0);
    assert!(
        after.stdout.contains("rules covered: 1 of 2"),
        "{}",
        after.stdout
    );
    for gone in [
        "Tag the release",
        "Push the tag",
        "Never push to main",
        "CLAUDE.md",
    ] {
        assert!(!after.stdout.contains(gone), "{gone}: {}", after.stdout);
    }
    assert!(
        after.stdout.contains("Keep functions short"),
        "{}",
        after.stdout
    );

    write(
        repo,
        "aptitude.yaml",
        "coverage:\n  exclude:\n    - CLAUDE.md\n    - \"AGENTS.md#Relase process\"\n",
    );
    let typo = coverage();
    typo.code(2);
    insta::assert_snapshot!("coverage_exclude_errors", typo.stderr);
}
