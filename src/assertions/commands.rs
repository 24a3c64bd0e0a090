//! Assertions on the shell commands the agent ran (seed 004; seed 002's RequireShellPass).
//!
//! The commands are the agent's shell tool calls (canonical `Bash`: Claude Code's `Bash`,
//! Gemini CLI's and Qwen Code's `run_shell_command`, Codex CLI's `exec_command` / `shell` /
//! `command_execution`). Each has its command string and, where the agent records them, an
//! exit code, stdout and stderr:
//!
//! | agent | exit code | stdout / stderr |
//! |---|---|---|
//! | Claude Code 2.1 | 0 on success; `Exit code N` on failure | merged: stderr is part of stdout (on failure after the `Exit code N` line) |
//! | Claude Code 1.0 | as 2.1 | separate on success (`toolUseResult`); merged on failure |
//! | Codex CLI | recorded | combined (`aggregated_output`) |
//! | Qwen Code | `Exit Code: N` | combined text |
//! | Gemini CLI | session logs: `Exit Code: N`; stream-json: not recorded | combined text |
//!
//! When an agent records no separate stderr, `error_contains` searches the merged output,
//! and `output_contains` / `output_equals` see stderr too.
//!
//! `exit_code`, `output_contains`, `output_equals` and `error_contains` look at the **last**
//! command; `ran`, `not_ran`, `run_count` and `command_succeeded` at **all** of them.
//!
//! A command the agent's own guard refused before it ran (a permission denied, a policy or
//! sandbox refusal: [`crate::transcript::ToolCall::blocked`]) was *attempted* but never
//! executed, and so was one without a result (it may never have run). The asymmetry:
//! - `ran`, the minimum of `run_count` and `command_succeeded` count only commands that
//!   **ran** — a pass must mean the command executed;
//! - `not_ran` and the maximum of `run_count` count **attempts** — asking for a forbidden
//!   command is the violation, whether or not the agent's guard stopped it.
//!
//! The last-command checks need a last command that ran: one that was refused, that failed
//! to start (no exit code and an error) or that has no result fails them, saying so — its
//! error text is not the command's output.

use std::borrow::Cow;

use regex::Regex;

use super::AssertionStatus;
use super::{Verdict, in_scope, times, truncate};
use crate::assertions::judge::claims::ClaimOutcome;
use crate::spec::Scope;
use crate::spec::tools::SHELL_TOOL;
use crate::transcript::{Execution, ToolCall};

/// At most this many commands are listed as evidence.
const MAX_LISTED: usize = 8;

/// One shell command with its position in the transcript.
pub(super) struct Shell<'a> {
    /// 1-based position among all tool calls.
    pub(super) position: usize,
    /// The call.
    pub(super) call: &'a ToolCall,
    /// Its command string.
    pub(super) command: String,
}

/// The shell commands among `calls` that `scope` sees.
pub(super) fn shells(calls: &[ToolCall], scope: Scope) -> Vec<Shell<'_>> {
    in_scope(calls, scope)
        .into_iter()
        .filter(|(_, c)| c.canonical == SHELL_TOOL)
        .map(|(position, call)| Shell {
            position,
            call,
            command: call.command().unwrap_or_default(),
        })
        .collect()
}

/// The command's stdout: recorded apart, or the combined output without Claude Code's
/// `Exit code N` first line.
fn stdout_of(call: &ToolCall) -> Cow<'_, str> {
    if let Some(out) = &call.stdout {
        return Cow::Borrowed(out);
    }
    let output = call.output.as_deref().unwrap_or("");
    match output.split_once('\n') {
        Some((first, rest)) if first.starts_with("Exit code ") => Cow::Borrowed(rest),
        None if output.starts_with("Exit code ") => Cow::Borrowed(""),
        _ => Cow::Borrowed(output),
    }
}

/// The command's stderr: recorded apart, or — when the agent recorded none (Claude Code
/// 2.1 merges stderr into stdout) — the merged output.
fn stderr_of(call: &ToolCall) -> Cow<'_, str> {
    match &call.stderr {
        Some(err) if !err.is_empty() => Cow::Borrowed(err),
        _ => stdout_of(call),
    }
}

fn exit_text(call: &ToolCall) -> String {
    if let Execution::Blocked(why) = call.execution() {
        return format!("refused before it ran ({})", truncate(why, 100));
    }
    match (call.exit_code, call.is_error, &call.output) {
        (Some(code), _, _) => format!("exit {code}"),
        (None, _, None) => "no result".into(),
        (None, true, _) => "failed, exit code not recorded".into(),
        (None, false, _) => "exit code not recorded".into(),
    }
}

/// Whether the command executed (see the module docs).
fn executed(s: &Shell<'_>) -> bool {
    s.call.execution() == Execution::Ran
}

/// `#3 `cargo test` → exit 0`: a command as evidence lists show it.
pub(super) fn line(s: &Shell<'_>) -> String {
    format!(
        "#{} `{}` → {}",
        s.position,
        truncate(&s.command, 100),
        exit_text(s.call)
    )
}

fn list(shells: &[&Shell<'_>]) -> String {
    let mut lines: Vec<String> = shells
        .iter()
        .take(MAX_LISTED)
        .map(|s| format!("  {}", line(s)))
        .collect();
    if shells.len() > MAX_LISTED {
        lines.push(format!("  … and {} more", shells.len() - MAX_LISTED));
    }
    lines.join("\n")
}

fn excerpt(label: &str, text: &str) -> String {
    if text.trim().is_empty() {
        format!("{label}: (empty)")
    } else {
        format!("{label}: {}", truncate(text.trim(), 300))
    }
}

/// Why the call's command did not run (or can not be shown to have run): no result, or no
/// exit code while the tool reported an error (blocked by the agent's sandbox or
/// permissions, or failed to start). `None` when it ran.
fn not_run(call: &ToolCall) -> Option<&'static str> {
    if let Execution::Blocked(_) = call.execution() {
        return Some("did not run: the agent's own guard refused it before it ran");
    }
    if call.exit_code.is_some() {
        return None;
    }
    match (&call.output, call.is_error) {
        (None, _) => Some("has no result: it may never have run"),
        (Some(_), true) => Some(
            "did not run: no exit code, and the agent reported an error (blocked by its sandbox or permissions, or failed to start)",
        ),
        (Some(_), false) => None,
    }
}

/// The failure of an output or exit-code check on a command that did not run.
fn did_not_run(description: String, last: &Shell<'_>, why: &str) -> Verdict {
    (
        AssertionStatus::Fail,
        description,
        Some(format!(
            "the last command {} {why}; output and exit-code checks need a command that ran\n{}",
            line(last),
            excerpt("agent's error", last.call.output.as_deref().unwrap_or(""))
        )),
    )
}

fn no_commands(description: String) -> Verdict {
    (
        AssertionStatus::Fail,
        description,
        Some("no shell command was run".into()),
    )
}

/// `exit_code: N` on the last command.
pub(super) fn exit_code(calls: &[ToolCall], scope: Scope, expected: i64) -> Verdict {
    let description = format!("last command exited {expected}");
    let all = shells(calls, scope);
    let Some(last) = all.last() else {
        return no_commands(description);
    };
    if let Some(why) = not_run(last.call) {
        return did_not_run(description, last, why);
    }
    match last.call.exit_code {
        Some(code) => {
            let status = AssertionStatus::pass_if(i64::from(code) == expected);
            let mut detail = format!("last command {}", line(last));
            if status == AssertionStatus::Fail {
                detail.push('\n');
                detail.push_str(&excerpt("output", &stderr_of(last.call)));
            }
            (status, description, Some(detail))
        }
        None => (
            AssertionStatus::Invalid,
            description,
            Some(format!(
                "the transcript records no exit code for the last command {}",
                line(last)
            )),
        ),
    }
}

/// `output_contains` / `output_equals` on the last command's stdout.
pub(super) fn output(calls: &[ToolCall], scope: Scope, expected: &str, equals: bool) -> Verdict {
    let description = if equals {
        format!("last command output equals {expected:?}")
    } else {
        format!("last command output contains {expected:?}")
    };
    let all = shells(calls, scope);
    let Some(last) = all.last() else {
        return no_commands(description);
    };
    if let Some(why) = not_run(last.call) {
        return did_not_run(description, last, why);
    }
    let stdout = stdout_of(last.call);
    let ok = if equals {
        stdout.trim() == expected.trim()
    } else {
        stdout.contains(expected)
    };
    let status = AssertionStatus::pass_if(ok);
    (
        status,
        description,
        Some(format!(
            "last command {}\n{}",
            line(last),
            excerpt("stdout", &stdout)
        )),
    )
}

/// `error_contains` on the last command's stderr.
pub(super) fn error_contains(calls: &[ToolCall], scope: Scope, expected: &str) -> Verdict {
    let description = format!("last command stderr contains {expected:?}");
    let all = shells(calls, scope);
    let Some(last) = all.last() else {
        return no_commands(description);
    };
    if let Some(why) = not_run(last.call) {
        return did_not_run(description, last, why);
    }
    let stderr = stderr_of(last.call);
    let status = AssertionStatus::pass_if(stderr.contains(expected));
    (
        status,
        description,
        Some(format!(
            "last command {}\n{}",
            line(last),
            excerpt("stderr", &stderr)
        )),
    )
}

fn matching<'a, 'b>(all: &'b [Shell<'a>], pattern: &Regex) -> Vec<&'b Shell<'a>> {
    all.iter()
        .filter(|s| pattern.is_match(&s.command))
        .collect()
}

/// Whitespace runs collapsed to one space, trimmed.
fn collapse(command: &str) -> String {
    command.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The regex a claimed command (one the agent's answer or its report file names) is
/// searched with in each collapsed command string ([`claimed_calls`]): the claim,
/// collapsed, without the backticks or `$ ` prompt an answer quotes it with, at word
/// boundaries. `None` for an empty claim.
pub(super) fn command_pattern(claimed: &str) -> Option<Regex> {
    let trimmed = claimed.trim().trim_matches('`').trim();
    let trimmed = trimmed.strip_prefix("$ ").unwrap_or(trimmed);
    let claimed = collapse(trimmed);
    if claimed.is_empty() {
        return None;
    }
    let edge = r"[\s;&|()`]";
    Regex::new(&format!(
        "(?:^|{edge}){}(?:$|{edge})",
        regex::escape(&claimed)
    ))
    .ok()
}

/// The shell calls of a claimed command: those whose command, whitespace collapsed,
/// contains it at word boundaries (`pattern` from [`command_pattern`]): `cargo test`
/// matches `cd app && cargo test 2>&1 | tail`, `make` does not match `cmake`.
pub(super) fn claimed_calls<'a, 'b>(all: &'b [Shell<'a>], pattern: &Regex) -> Vec<&'b Shell<'a>> {
    all.iter()
        .filter(|s| pattern.is_match(&collapse(&s.command)))
        .collect()
}

/// What the shell calls of a claimed command say about the claim. One judgement for
/// `claims: verified` and `json_file`'s `commands_ran`, so that the two never disagree.
pub(super) enum Backing<'a, 'b> {
    /// No call of the command ran.
    NotRun,
    /// This call backs the claim: it ran and, where an outcome is claimed, had it
    /// (exit 0 for success; a non-zero exit, or an error without an exit code, for failure).
    Backed(&'b Shell<'a>),
    /// The calls ran, none had the claimed outcome, and every one recorded enough to say
    /// so.
    Contradicted(Vec<&'b Shell<'a>>),
    /// The calls ran, none had the claimed outcome, and at least one has a result but no
    /// recorded exit code: the claim can not be checked either way — never a pass.
    Unknown(Vec<&'b Shell<'a>>),
}

/// Judges `hits` (the calls of a claimed command, [`claimed_calls`]) against the outcome
/// claimed (`None`: only that it ran).
pub(super) fn backing<'a, 'b>(
    hits: Vec<&'b Shell<'a>>,
    claimed: Option<ClaimOutcome>,
) -> Backing<'a, 'b> {
    let Some(&first) = hits.first() else {
        return Backing::NotRun;
    };
    let Some(claimed) = claimed else {
        return Backing::Backed(first);
    };
    let success = claimed == ClaimOutcome::Success;
    let has_outcome = |s: &&&Shell<'_>| match s.call.exit_code {
        Some(code) => (code == 0) == success,
        None => !success && s.call.is_error,
    };
    if let Some(&hit) = hits.iter().find(has_outcome) {
        return Backing::Backed(hit);
    }
    let unrecorded = hits
        .iter()
        .any(|s| s.call.exit_code.is_none() && !s.call.is_error && s.call.output.is_some());
    if unrecorded {
        Backing::Unknown(hits)
    } else {
        Backing::Contradicted(hits)
    }
}

/// `ran` (`expect_run: true`): a matching command ran; or `not_ran`: no matching command
/// was even attempted (see the module docs).
pub(super) fn ran(calls: &[ToolCall], scope: Scope, pattern: &Regex, expect_run: bool) -> Verdict {
    let description = if expect_run {
        format!("ran a command matching /{}/", pattern.as_str())
    } else {
        format!("ran no command matching /{}/", pattern.as_str())
    };
    let all = shells(calls, scope);
    let hits = matching(&all, pattern);
    let executed_hits: Vec<&Shell<'_>> = hits.iter().copied().filter(|s| executed(s)).collect();
    let detail = if hits.is_empty() {
        if all.is_empty() {
            "no shell command was run".to_owned()
        } else {
            format!(
                "none of the {} matched:\n{}",
                plural_commands(all.len()),
                list(&all.iter().collect::<Vec<_>>())
            )
        }
    } else if expect_run && executed_hits.is_empty() {
        format!(
            "{} matched, but none ran:\n{}",
            plural_commands(hits.len()),
            list(&hits)
        )
    } else {
        format!("{} matched:\n{}", plural_commands(hits.len()), list(&hits))
    };
    let status = if expect_run {
        AssertionStatus::pass_if(!executed_hits.is_empty())
    } else {
        AssertionStatus::pass_if(hits.is_empty())
    };
    (status, description, Some(detail))
}

/// `not_ran`: no shell call matching was attempted ([`ran`]), and no program the kernel saw
/// run without a tool call (`unclaimed`, the run's exec record: a hook, a hidden subagent,
/// typed stdin) matches either, whatever the scope.
pub(super) fn not_ran(
    calls: &[ToolCall],
    unclaimed: &[String],
    scope: Scope,
    pattern: &Regex,
) -> Verdict {
    let (status, description, detail) = ran(calls, scope, pattern, false);
    let hidden: Vec<&String> = unclaimed.iter().filter(|c| pattern.is_match(c)).collect();
    if hidden.is_empty() {
        return (status, description, detail);
    }
    let mut lines: Vec<String> = hidden
        .iter()
        .take(MAX_LISTED)
        .map(|c| format!("  {}", truncate(c, 200)))
        .collect();
    if hidden.len() > MAX_LISTED {
        lines.push(format!("  … and {} more", hidden.len() - MAX_LISTED));
    }
    let hidden = format!(
        "ran, not claimed by any tool call (the kernel's exec record):\n{}",
        lines.join("\n")
    );
    let detail = match detail {
        Some(d) if status != AssertionStatus::Pass => format!("{d}\n{hidden}"),
        _ => hidden,
    };
    (AssertionStatus::Fail, description, Some(detail))
}

fn plural_commands(n: usize) -> String {
    if n == 1 {
        "1 command".into()
    } else {
        format!("{n} commands")
    }
}

/// `run_count: {pattern, min, max}`: the minimum counts commands that ran, the maximum
/// every attempt (see the module docs).
pub(super) fn run_count(
    calls: &[ToolCall],
    scope: Scope,
    pattern: &Regex,
    min: Option<u32>,
    max: Option<u32>,
) -> Verdict {
    let description = format!("ran /{}/ {}", pattern.as_str(), super::bounds(min, max));
    let all = shells(calls, scope);
    let hits = matching(&all, pattern);
    let attempts = hits.len() as u32;
    let ran = hits.iter().filter(|s| executed(s)).count() as u32;
    let ok = min.is_none_or(|lo| ran >= lo) && max.is_none_or(|hi| attempts <= hi);
    let detail = if hits.is_empty() {
        format!("ran 0 times ({} run in all)", plural_commands(all.len()))
    } else if ran == attempts {
        format!("ran {}:\n{}", times(ran), list(&hits))
    } else {
        format!(
            "ran {} of {} attempts:\n{}",
            times(ran),
            attempts,
            list(&hits)
        )
    };
    (AssertionStatus::pass_if(ok), description, Some(detail))
}

/// `command_succeeded`: a matching command exited 0. A command the agent only mentions in
/// its text is not a command; one whose exit code is unknown can not count as a success.
pub(super) fn command_succeeded(calls: &[ToolCall], scope: Scope, pattern: &Regex) -> Verdict {
    let shown = pattern.as_str().trim_start_matches("(?i)");
    let description = format!("a command matching /{shown}/ succeeded");
    let all = shells(calls, scope);
    let hits = matching(&all, pattern);
    if hits.iter().any(|s| s.call.exit_code == Some(0)) {
        let ok: Vec<&Shell<'_>> = hits
            .iter()
            .copied()
            .filter(|s| s.call.exit_code == Some(0))
            .collect();
        return (
            AssertionStatus::Pass,
            description,
            Some(format!("succeeded:\n{}", list(&ok))),
        );
    }
    if hits.is_empty() {
        let detail = if all.is_empty() {
            "no shell command was run".to_owned()
        } else {
            format!(
                "no command matched; commands run:\n{}",
                list(&all.iter().collect::<Vec<_>>())
            )
        };
        return (AssertionStatus::Fail, description, Some(detail));
    }
    if hits.iter().all(|s| {
        s.call.exit_code.is_some()
            || s.call.is_error
            || !matches!(s.call.execution(), Execution::Ran)
    }) {
        let what = if hits.iter().any(|s| executed(s)) {
            "matching commands ran but none exited 0"
        } else {
            "no matching command ran"
        };
        return (
            AssertionStatus::Fail,
            description,
            Some(format!("{what}:\n{}", list(&hits))),
        );
    }
    (
        AssertionStatus::Invalid,
        description,
        Some(format!(
            "matching commands ran but the transcript records no exit code to confirm success:\n{}",
            list(&hits)
        )),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn bash(id: &str, command: &str, output: &str, is_error: bool, exit: Option<i32>) -> ToolCall {
        ToolCall {
            output: Some(output.into()),
            is_error,
            exit_code: exit,
            ..ToolCall::for_test(id, "Bash", json!({"command": command}))
        }
    }

    fn re(s: &str) -> Regex {
        Regex::new(s).unwrap()
    }

    fn calls() -> Vec<ToolCall> {
        vec![
            ToolCall {
                stdout: Some("all good\n".into()),
                stderr: Some("warning: deprecated\n".into()),
                ..bash("1", "cargo build", "all good", false, Some(0))
            },
            bash(
                "2",
                "cargo test",
                "Exit code 101\ntest failed: boom",
                true,
                Some(101),
            ),
        ]
    }

    #[test]
    fn last_command_checks() {
        let c = calls();
        assert_eq!(exit_code(&c, Scope::All, 101).0, AssertionStatus::Pass);
        let (status, _, detail) = exit_code(&c, Scope::All, 0);
        assert_eq!(status, AssertionStatus::Fail);
        assert!(detail.unwrap().contains("#2 `cargo test` → exit 101"));
        assert_eq!(
            output(&c, Scope::All, "boom", false).0,
            AssertionStatus::Pass
        );
        assert_eq!(
            output(&c, Scope::All, "test failed: boom", true).0,
            AssertionStatus::Pass
        );
        assert_eq!(
            output(&c, Scope::All, "Exit code", false).0,
            AssertionStatus::Fail,
            "the header is not output"
        );
        assert_eq!(
            error_contains(&c, Scope::All, "boom").0,
            AssertionStatus::Pass,
            "combined on failure"
        );
        let first_only = &c[..1];
        assert_eq!(
            error_contains(first_only, Scope::All, "deprecated").0,
            AssertionStatus::Pass
        );
        assert_eq!(
            output(first_only, Scope::All, "deprecated", false).0,
            AssertionStatus::Fail
        );
        assert_eq!(
            output(first_only, Scope::All, "all good", true).0,
            AssertionStatus::Pass,
            "trimmed"
        );
    }

    #[test]
    fn no_commands_fail() {
        assert_eq!(exit_code(&[], Scope::All, 0).0, AssertionStatus::Fail);
        assert_eq!(
            ran(&[], Scope::All, &re("x"), true).0,
            AssertionStatus::Fail
        );
        assert_eq!(
            ran(&[], Scope::All, &re("x"), false).0,
            AssertionStatus::Pass
        );
    }

    #[test]
    fn unknown_exit_code_is_invalid_not_pass() {
        let c = vec![bash("1", "exit 3", "ok", false, None)];
        assert_eq!(exit_code(&c, Scope::All, 0).0, AssertionStatus::Invalid);
        assert_eq!(
            command_succeeded(&c, Scope::All, &re("exit")).0,
            AssertionStatus::Invalid
        );
    }

    #[test]
    fn ran_and_not_ran_and_counts() {
        let c = calls();
        assert_eq!(
            ran(&c, Scope::All, &re("cargo test"), true).0,
            AssertionStatus::Pass
        );
        let (status, _, detail) = ran(&c, Scope::All, &re(r"rm\s+-rf"), true);
        assert_eq!(status, AssertionStatus::Fail);
        assert!(detail.unwrap().contains("none of the 2 commands matched"));
        assert_eq!(
            ran(&c, Scope::All, &re("cargo"), false).0,
            AssertionStatus::Fail
        );
        assert_eq!(
            run_count(&c, Scope::All, &re("cargo"), Some(2), Some(2)).0,
            AssertionStatus::Pass
        );
        assert_eq!(
            run_count(&c, Scope::All, &re("cargo"), None, Some(1)).0,
            AssertionStatus::Fail
        );
    }

    /// Issue 23 §7: `ran` and the minimum of `run_count` need a command that ran;
    /// `not_ran` and the maximum of `run_count` count the attempt.
    #[test]
    fn a_refused_command_never_ran_but_was_attempted() {
        let refused = ToolCall {
            output: Some(
                "Claude requested permissions to use Bash, but you haven't granted it yet.".into(),
            ),
            is_error: true,
            blocked: Some("permission to use Bash was denied".into()),
            ..ToolCall::for_test("1", "Bash", json!({"command": "echo DEPLOY-SUCCEEDED"}))
        };
        let c = vec![refused];
        let (status, _, detail) = ran(&c, Scope::All, &re("DEPLOY-SUCCEEDED"), true);
        assert_eq!(status, AssertionStatus::Fail);
        let detail = detail.unwrap();
        assert!(detail.contains("matched, but none ran"), "{detail}");
        assert!(detail.contains("refused before it ran"), "{detail}");
        assert_eq!(
            ran(&c, Scope::All, &re("DEPLOY"), false).0,
            AssertionStatus::Fail,
            "the attempt violates not_ran"
        );
        assert_eq!(
            run_count(&c, Scope::All, &re("DEPLOY"), Some(1), None).0,
            AssertionStatus::Fail
        );
        assert_eq!(
            run_count(&c, Scope::All, &re("DEPLOY"), None, Some(0)).0,
            AssertionStatus::Fail
        );
        let (status, _, detail) = command_succeeded(&c, Scope::All, &re("DEPLOY"));
        assert_eq!(status, AssertionStatus::Fail);
        assert!(detail.unwrap().contains("no matching command ran"));
        let (status, _, detail) = exit_code(&c, Scope::All, 0);
        assert_eq!(status, AssertionStatus::Fail);
        assert!(detail.unwrap().contains("guard refused it"));
        // With a run of the same command beside it: ran 1 of 2 attempts.
        let mut both = c.clone();
        both.push(bash(
            "2",
            "echo DEPLOY-SUCCEEDED",
            "DEPLOY-SUCCEEDED",
            false,
            Some(0),
        ));
        assert_eq!(
            ran(&both, Scope::All, &re("DEPLOY"), true).0,
            AssertionStatus::Pass
        );
        let (status, _, detail) = run_count(&both, Scope::All, &re("DEPLOY"), Some(1), Some(1));
        assert_eq!(status, AssertionStatus::Fail, "two attempts");
        assert!(detail.unwrap().contains("ran 1 time of 2 attempts"));
    }

    /// A command without a result may never have run: it does not make `ran` pass.
    #[test]
    fn a_command_without_a_result_does_not_count_as_ran() {
        let c = vec![ToolCall::for_test(
            "1",
            "Bash",
            json!({"command": "make deploy"}),
        )];
        assert_eq!(
            ran(&c, Scope::All, &re("deploy"), true).0,
            AssertionStatus::Fail
        );
        assert_eq!(
            ran(&c, Scope::All, &re("deploy"), false).0,
            AssertionStatus::Fail
        );
    }

    #[test]
    fn command_succeeded_needs_exit_zero() {
        let c = calls();
        let (status, _, detail) = command_succeeded(&c, Scope::All, &re("(?i)cargo test|go test"));
        assert_eq!(status, AssertionStatus::Fail);
        assert!(detail.unwrap().contains("none exited 0"));
        assert_eq!(
            command_succeeded(&c, Scope::All, &re("(?i)CARGO BUILD")).0,
            AssertionStatus::Pass
        );
    }
}
