//! Conversations (issue 41): a test's `user:` answers the agent's questions, and
//! `asked`, `did_not_ask`, `user_turns`, `elicited` check what it asked. These tests
//! protect what a user sees before any agent runs: `validate` and `validate --explain`.

use std::path::Path;

use crate::support::cli::Aptitude;

/// The dice test of issue 41, as its README example writes it.
const DICE: &str = "name: dice
prompt: Add a dice-roller command to the CLI
user:
  persona: Terse analyst; never reads code
  goal: A command that rolls one die and prints the result
  knows: {sides: 6, name: roll}
  script:
    - {when: \"sides|range\", say: \"Six-sided, 1 to 6.\"}
  max_turns: 4
assertions:
  - asked: {about: \"sides|range\", before: [Write, Edit]}
  - did_not_ask: {about: name}
  - user_turns: {max: 2}
  - elicited: [sides]
";

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

/// `validate --explain` shows who answers: the script, what happens past it, the reply
/// limit and the names (never the values) of the facts the user holds back.
#[test]
fn validate_explain_shows_the_user_without_its_facts() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "dice.aptitude.yaml", DICE);
    let out = Aptitude::new()
        .args(["validate", "--explain", "dice.aptitude.yaml"])
        .current_dir(dir.path())
        .output();
    out.code(0);
    assert!(
        out.stdout.contains(
            "user        1 script line, then a simulated user (a model call) for other \
             questions; at most 4 replies; knows name, sides  [dice.aptitude.yaml:3]"
        ),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("roll"), "a fact's value is not shown");
}

/// A misspelt key of `user:` and a fact `elicited` names that the user does not know are
/// errors at their line and column, with the line, a caret and "did you mean".
#[test]
fn validate_points_at_user_mistakes_with_did_you_mean() {
    let dir = tempfile::tempdir().unwrap();
    let broken = DICE
        .replace("  goal:", "  gaol:")
        .replace("elicited: [sides]", "elicited: [side]");
    write(dir.path(), "dice.aptitude.yaml", &broken);
    let out = Aptitude::new()
        .args(["validate", "dice.aptitude.yaml"])
        .current_dir(dir.path())
        .output();
    out.code(2);
    let err = &out.stderr;
    for needle in [
        "dice.aptitude.yaml:5:3",
        "unknown key `gaol` in `user`",
        "did you mean `goal`?",
        "dice.aptitude.yaml:14:16",
        "unknown fact `side`",
        "did you mean `sides`?",
        "  - elicited: [side]",
    ] {
        assert!(err.contains(needle), "{needle} not in:\n{err}");
    }
}
