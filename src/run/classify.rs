//! Whose fault a run's error is ([`ErrorKind`]): the agent's, the infrastructure's, the
//! test's own setup, the judge's, or an interruption — from how the agent's process ended,
//! its session's outcome and the assertions that could not be made.

use std::time::Duration;

use super::shell::last_lines;
use crate::agent::Execution;
use crate::agent::process::Ending;
use crate::transcript::Outcome;
use crate::verdict::results::ErrorKind;

/// Why an agent run makes its test `error`, in the agent's own words where it gave any,
/// and whose fault it is.
pub(super) fn run_error(execution: &Execution, timeout: Duration) -> Option<(ErrorKind, String)> {
    let p = &execution.process;
    let outcome = &execution.transcript.outcome;
    // A stream that disagrees with what its model saw can decide nothing: whatever else
    // went wrong, the run is `tampered` first.
    if let Some(why) = execution.witness.as_ref().and_then(|w| w.tampered()) {
        return Some((ErrorKind::Tampered, why));
    }
    if let Some(why) = execution.execs.as_ref().and_then(|e| e.tampered()) {
        return Some((ErrorKind::Tampered, why));
    }
    // The gateway refused a request for the budget: whatever the agent made of the
    // refusal (an API error, an exit 0), the run was cut short by the ceiling.
    if let Some(traffic) = &execution.model_traffic {
        if let Some(why) = &traffic.budget {
            return Some((ErrorKind::Budget, why.clone()));
        }
        if let Some(why) = &traffic.divergence {
            return Some((
                ErrorKind::Replay,
                format!("the replay diverged from its recording: {why}"),
            ));
        }
    }
    // A replayed MCP request the recording does not hold (the model's divergence, above,
    // is named first: it is what the agent did differently).
    if let Some(why) = execution.mcp_divergences.first() {
        return Some((
            ErrorKind::Replay,
            format!("the replay diverged from its recording: {why}"),
        ));
    }
    // A run the sandbox did not let start (or whose fence did not hold) says nothing about
    // the agent, whatever its output.
    if let Some(failure) = &execution.sandbox_failure
        && p.ending != Ending::Cancelled
    {
        return Some((ErrorKind::Setup, failure.clone()));
    }
    // A test's MCP server that failed is aptitude's environment at fault, whatever the
    // agent made of it, unless the user stopped the run.
    if !execution.mcp_failures.is_empty() && p.ending != Ending::Cancelled {
        return Some((ErrorKind::Infra, execution.mcp_failures.join("; ")));
    }
    match p.ending {
        Ending::Cancelled => {
            return Some((
                ErrorKind::Interrupted,
                "interrupted: the agent was stopped".into(),
            ));
        }
        Ending::TimedOut => {
            return Some((
                ErrorKind::Agent,
                format!(
                    "timed out after {}: the agent was stopped; its transcript up to then is kept",
                    humantime::format_duration(timeout)
                ),
            ));
        }
        Ending::Limit => {
            return Some((
                ErrorKind::Limit,
                format!(
                    "stopped at a limit: {}; its transcript up to then is kept",
                    p.limit.as_deref().unwrap_or("a limit of the run")
                ),
            ));
        }
        // Stopped at its first decision: the transcript's outcome says so (below).
        Ending::Exited | Ending::Decided => {}
    }
    // A model that stopped at its output-token limit gave its answer: a run that failed on
    // it failed for the model's output, which a retry pays for again without changing.
    if !matches!(outcome, Outcome::Completed if p.code == Some(0))
        && let Some(why) = output_limit_stop(execution)
    {
        return Some((ErrorKind::Agent, why));
    }
    match outcome {
        Outcome::Completed if p.code == Some(0) => None,
        Outcome::Decided => None,
        Outcome::Completed => Some((
            ErrorKind::Agent,
            format!("the agent {} after reporting success", p.describe(timeout)),
        )),
        Outcome::Incomplete { .. } => {
            // A CLI that died before its session began (no session id, no tool call) is
            // broken or misinstalled, not an agent that gave up.
            let kind = if execution.transcript.session_id.is_none()
                && execution.transcript.tool_calls.is_empty()
            {
                ErrorKind::Infra
            } else {
                ErrorKind::Agent
            };
            let stderr = last_lines(&p.stderr, 5);
            Some((
                kind,
                if stderr.is_empty() {
                    format!("the agent {} without a result", p.describe(timeout))
                } else {
                    format!(
                        "the agent {} without a result: {stderr}",
                        p.describe(timeout)
                    )
                },
            ))
        }
        other => Some((outcome_kind(other), other.describe())),
    }
}

/// How agents word a model's stop at its output-token limit: Claude Code 2.1.x ("API
/// Error: Claude's response exceeded the 32000 output token maximum"), Codex CLI 0.169
/// ("Incomplete response returned, reason: max_output_tokens").
const OUTPUT_LIMIT_WORDS: &[&str] = &["output token maximum", "reason: max_output_tokens"];

/// Whether an outcome's own words say the model stopped at its output-token limit.
fn says_output_limit(outcome: &Outcome) -> bool {
    let message = match outcome {
        Outcome::ApiError { message, .. }
        | Outcome::Error { message }
        | Outcome::Incomplete { message }
        | Outcome::MaxTurns { message } => message,
        Outcome::Completed | Outcome::Interrupted | Outcome::Decided => return false,
    };
    OUTPUT_LIMIT_WORDS.iter().any(|w| message.contains(w))
}

/// Why a run that did not complete ended on the model's output-token limit, if it did: the
/// wire shows its last model reply stopped there (`model_traffic.ended_at_output_limit`),
/// or the agent says so in its own words.
fn output_limit_stop(execution: &Execution) -> Option<String> {
    let outcome = &execution.transcript.outcome;
    let on_wire = execution
        .model_traffic
        .as_ref()
        .is_some_and(|t| t.ended_at_output_limit);
    (on_wire || says_output_limit(outcome)).then(|| {
        format!(
            "the model stopped at its output-token limit (not retried as infra): {}",
            outcome.describe()
        )
    })
}

/// Whose fault a session that did not complete is.
pub(super) fn outcome_kind(outcome: &Outcome) -> ErrorKind {
    if says_output_limit(outcome) {
        return ErrorKind::Agent;
    }
    match outcome {
        // 5xx, 429, or no status at all (a dropped connection, a network error).
        Outcome::ApiError { http_status, .. } => match http_status {
            None => ErrorKind::Infra,
            Some(s) if *s == 429 || *s >= 500 => ErrorKind::Infra,
            // A refusal (bad key, unknown model): retrying can not help.
            Some(_) => ErrorKind::Setup,
        },
        Outcome::Interrupted => ErrorKind::Interrupted,
        _ => ErrorKind::Agent,
    }
}

/// Whose fault an `error` caused by an assertion is: the judge's when a review could not
/// be graded, else the test's own checks (a `verify` that could not start, a check that
/// does not apply to the transcript).
pub(super) fn assertion_error_kind(
    assertions: &[crate::verdict::results::AssertionResult],
) -> ErrorKind {
    let errored = |a: &&crate::verdict::results::AssertionResult| {
        matches!(
            a.status,
            crate::verdict::results::AssertionStatus::Error
                | crate::verdict::results::AssertionStatus::Invalid
        )
    };
    if assertions
        .iter()
        .filter(errored)
        .any(|a| a.kind == "stdout" && a.threshold.is_some())
    {
        ErrorKind::Judge
    } else {
        ErrorKind::Setup
    }
}

/// Why a session's outcome makes the test `error`: anything but a completed session.
///
/// A transcript that stops on an API error, at max turns, on an interruption or mid-way
/// can not show what the agent would have done, so guardrails such as `called: false`
/// must not pass on it.
pub(super) fn outcome_error(outcome: &Outcome) -> Option<String> {
    match outcome {
        Outcome::Completed | Outcome::Decided => None,
        other => Some(other.describe()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_outages_are_infra_and_refusals_are_not() {
        let api = |status| Outcome::ApiError {
            message: "boom".into(),
            http_status: status,
        };
        assert_eq!(outcome_kind(&api(Some(500))), ErrorKind::Infra);
        assert_eq!(outcome_kind(&api(Some(503))), ErrorKind::Infra);
        assert_eq!(outcome_kind(&api(Some(429))), ErrorKind::Infra);
        assert_eq!(
            outcome_kind(&api(None)),
            ErrorKind::Infra,
            "a dropped connection"
        );
        assert_eq!(outcome_kind(&api(Some(401))), ErrorKind::Setup);
        assert_eq!(outcome_kind(&api(Some(400))), ErrorKind::Setup);
        assert_eq!(
            outcome_kind(&Outcome::MaxTurns {
                message: "m".into()
            }),
            ErrorKind::Agent,
            "max turns is the agent's, never retried"
        );
        assert_eq!(outcome_kind(&Outcome::Interrupted), ErrorKind::Interrupted);
    }

    /// A workspace hook the exec record shows running while the test kept hooks off
    /// (`hooks: none`) is a fence that did not hold: the run is `error`, naming the hook,
    /// however well the agent's own process ended. Under `hooks: workspace` it is no error.
    #[test]
    fn a_hook_that_ran_under_hooks_none_makes_the_run_error() {
        use crate::sandbox::exec::hooks::{HookExec, HookRan};
        use crate::spec::HooksSetting;
        let ran = vec![HookRan {
            file: ".claude/settings.json".into(),
            line: Some(5),
            event: "SessionStart".into(),
            command: "sh .hooks/start.sh".into(),
            execs: vec![HookExec {
                command: "rm -f README".into(),
                exit_code: Some(0),
                at_ms: 12,
            }],
            execs_total: 1,
        }];
        let execution = |setting| Execution {
            transcript: crate::transcript::Transcript::completed(Vec::new(), "Done."),
            process: crate::agent::process::Output::exited_ok(),
            raw: Vec::new(),
            sandbox: None,
            sandbox_failure: crate::sandbox::exec::hooks::breach(setting, &ran),
            mcp_failures: Vec::new(),
            mcp_calls: Vec::new(),
            mcp_calls_dropped: 0,
            mcp_divergences: Vec::new(),
            model_traffic: None,
            dialog: None,
            witness: None,
            execs: None,
            hooks_ran: ran.clone(),
        };
        let timeout = Duration::from_secs(1);
        let (kind, why) = run_error(&execution(HooksSetting::None), timeout).unwrap();
        assert_eq!(kind, ErrorKind::Setup);
        assert!(
            why.contains(".claude/settings.json:5 SessionStart")
                && why.contains("`rm -f README`")
                && why.contains("hooks: workspace"),
            "{why}"
        );
        assert_eq!(
            run_error(&execution(HooksSetting::Workspace), timeout),
            None
        );
    }

    /// A model's stop at its output-token limit is the agent's: Claude Code reports it as
    /// an API error without a status, Codex as a failed turn; neither is infra, so
    /// `--retry-infra` never pays for it again.
    #[test]
    fn an_output_limit_stop_is_the_agents_never_infra() {
        for message in [
            "API Error: Claude's response exceeded the 32000 output token maximum. To configure this behavior, set the CLAUDE_CODE_MAX_OUTPUT_TOKENS environment variable.",
            "stream disconnected before completion: Incomplete response returned, reason: max_output_tokens",
        ] {
            let api = Outcome::ApiError {
                message: message.into(),
                http_status: None,
            };
            assert_eq!(outcome_kind(&api), ErrorKind::Agent, "{message}");
        }
        // A dropped stream is still infra.
        let dropped = Outcome::ApiError {
            message: "stream disconnected before completion: error decoding response body".into(),
            http_status: None,
        };
        assert_eq!(outcome_kind(&dropped), ErrorKind::Infra);
    }
}
