//! Drafting a test for a rule no test covers (`aptitude init --rules FILE`): the prompt a
//! model is given, and the test file made of its reply — validated by the loader before it
//! is written, and marked as a draft for a person to review.
//!
//! The model is asked for a test in aptitude's YAML, without `name`, `workspace` or
//! `covers` (aptitude sets those): a `prompt` that puts the rule to work, and
//! `assertions` that check the agent followed it. Its reply may wrap the YAML in a
//! fenced block; the first block (or the whole reply) is read.

use std::path::{Component, Path, PathBuf};

use super::rules::Rule;

pub mod skills;

/// The first line of every drafted test.
pub const DRAFT_MARK: &str = "# DRAFT by `aptitude init --rules`: review the prompt and assertions, then remove this line and `draft: true`.";

/// Why a reply could not be made into a test.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DraftError {
    /// The reply holds no YAML mapping with a `prompt` and `assertions`.
    #[error("the model's reply is not a test: {0}")]
    NotATest(String),
    /// The test does not load: the loader's messages, one per line.
    #[error("the drafted test does not load: {0}")]
    Invalid(String),
}

/// The prompt that asks a model to draft a test of `rule` from the instruction file
/// `file` (its text `instructions`, for context).
pub fn prompt_for(rule: &Rule, file: &str, instructions: &str) -> String {
    let context = crate::shared::cut::chars(instructions, 6000).kept;
    format!(
        r#"You write tests for aptitude, a tool that runs a coding agent (Claude Code, Codex, …) on a prompt in a copy of a repository and checks what the agent did.

The repository's instruction file {file} says, under "{headings}":

    {text}

Write ONE aptitude test that puts this rule to work: a realistic task prompt in which an agent that follows the rule behaves differently from one that ignores it, and assertions that check the agent followed it. Answer with YAML only, in a ```yaml block, with exactly these keys:

prompt: "…"            # the task given to the agent; do not mention the rule or the test
assertions:            # at least one; use these forms
  - ran: "REGEX"               # a shell command matching REGEX ran
  - not_ran: "REGEX"           # no shell command matching REGEX ran
  - tool: Edit                 # a tool was called (Read, Write, Edit, Bash, Grep, Glob)
    called: false              # … or was not called
    params: {{file_path: "*.env"}}
  - file_exists: PATH
  - file_contains: {{path: PATH, text: TEXT}}
  - stdout: {{review: "what the final answer must say", threshold: 7}}

For context, the whole instruction file:

{context}
"#,
        headings = rule.heading_path(),
        text = rule.text,
    )
}

/// `to` relative to the directory `from` (both made absolute): `../..`, `fixture`.
pub fn relative(from: &Path, to: &Path) -> PathBuf {
    let (Ok(from), Ok(to)) = (std::path::absolute(from), std::path::absolute(to)) else {
        return to.to_owned();
    };
    let (from, to): (Vec<Component>, Vec<Component>) =
        (from.components().collect(), to.components().collect());
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..from.len() {
        out.push("..");
    }
    for part in &to[common..] {
        out.push(part);
    }
    if out.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        out
    }
}

/// The first ```yaml (or plain ```) fenced block of `reply`, else `reply` itself.
fn yaml_of(reply: &str) -> &str {
    let Some(start) = reply.find("```") else {
        return reply.trim();
    };
    let after = &reply[start + 3..];
    let body = after.split_once('\n').map_or(after, |(_, rest)| rest);
    match body.find("```") {
        Some(end) => body[..end].trim(),
        None => body.trim(),
    }
}

/// The drafted test file for `rule` from the model's `reply`: the draft mark, `name`,
/// `workspace` (`workspace_rel`, from the test file's directory), `covers` (the rule's
/// id), then the reply's `prompt` and `assertions`. It is loaded as it would be at
/// `test_path` (so that `covers:` is checked against the workspace's rules).
///
/// # Errors
/// [`DraftError::NotATest`] for a reply without `prompt` and `assertions`,
/// [`DraftError::Invalid`] for a test the loader refuses.
pub fn test_from_reply(
    reply: &str,
    rule: &Rule,
    workspace_rel: &str,
    test_path: &Path,
) -> Result<String, DraftError> {
    let yaml = yaml_of(reply);
    let value: serde_json::Value = serde_saphyr::from_str(yaml)
        .map_err(|e| DraftError::NotATest(crate::shared::cut::chars(&e.to_string(), 300).kept))?;
    let (Some(prompt), Some(assertions)) = (
        value.get("prompt").and_then(serde_json::Value::as_str),
        value.get("assertions").filter(|a| a.is_array()),
    ) else {
        return Err(DraftError::NotATest(
            "it has no `prompt` and `assertions`".into(),
        ));
    };
    let name = format!(
        "Follows {}: {}",
        rule.file,
        crate::shared::cut::chars(&rule.text, 60).kept
    );
    let assertions =
        serde_saphyr::to_string(assertions).map_err(|e| DraftError::NotATest(e.to_string()))?;
    let quote = |s: &str| serde_json::Value::String(s.to_owned()).to_string();
    let text = format!(
        "{DRAFT_MARK}\n# Rule {id} of {file}: {rule_text}\nname: {name}\nworkspace: {workspace}\ndraft: true\ncovers: {id}\nprompt: {prompt}\nassertions:\n{assertions}",
        id = rule.id,
        file = rule.file,
        rule_text = crate::shared::cut::chars(&rule.text.replace('\n', " "), 160).kept,
        name = quote(&name),
        workspace = quote(workspace_rel),
        prompt = quote(prompt),
        assertions = assertions
            .lines()
            .map(|l| format!("  {l}"))
            .collect::<Vec<_>>()
            .join("\n"),
    );
    validated(test_path, &text)?;
    Ok(text + "\n")
}

/// Loads `text` as the test file `test_path` would be loaded.
///
/// # Errors
/// [`DraftError::Invalid`] with each of the loader's diagnostics as `line N: message`.
fn validated(test_path: &Path, text: &str) -> Result<(), DraftError> {
    super::load_str_checked(test_path, text)
        .map(drop)
        .map_err(|diags| {
            DraftError::Invalid(
                diags
                    .iter()
                    .map(|d| format!("line {}: {}", d.pos.line, d.message))
                    .collect::<Vec<_>>()
                    .join("; "),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(dir: &Path) -> Rule {
        std::fs::write(
            dir.join("AGENTS.md"),
            "# Testing\n\n- Run `pytest -q` before you say a change is done.\n",
        )
        .unwrap();
        crate::spec::rules::rules_in(dir).remove(0)
    }

    #[test]
    fn a_reply_becomes_a_valid_draft_that_covers_its_rule() {
        let dir = tempfile::tempdir().unwrap();
        let rule = rule(dir.path());
        let prompt = prompt_for(&rule, "AGENTS.md", "…");
        assert!(prompt.contains("Run pytest -q before you say a change is done."));
        let reply = "Here is a test:\n```yaml\nprompt: \"Fix the off-by-one in counter.py\"\nassertions:\n  - ran: \"pytest\"\n  - tool: Edit\n```\nGood luck.";
        let tests = dir.path().join("tests");
        std::fs::create_dir_all(&tests).unwrap();
        let text = test_from_reply(reply, &rule, "..", &tests.join("rule.aptitude.yaml")).unwrap();
        assert!(text.starts_with(DRAFT_MARK), "{text}");
        assert!(text.contains(&format!("covers: {}", rule.id)), "{text}");
        let spec = crate::spec::load_str_checked(&tests.join("rule.aptitude.yaml"), &text).unwrap();
        assert!(spec.draft, "{text}");
        assert_eq!(spec.covers[0].rules, std::slice::from_ref(&rule.id));
        assert_eq!(spec.assertions.len(), 2);
    }

    #[test]
    fn a_reply_that_is_no_test_or_does_not_load_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let rule = rule(dir.path());
        let path = dir.path().join("t.aptitude.yaml");
        assert!(matches!(
            test_from_reply("I can not help with that.", &rule, ".", &path),
            Err(DraftError::NotATest(_))
        ));
        let bad = "```yaml\nprompt: x\nassertions:\n  - rann: pytest\n```";
        match test_from_reply(bad, &rule, ".", &path) {
            Err(DraftError::Invalid(why)) => assert!(why.contains("rann"), "{why}"),
            other => panic!("{other:?}"),
        }
    }
}
