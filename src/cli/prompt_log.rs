//! `aptitude log PROMPT`: one agent run in a copy of a directory, its tool calls printed —
//! the quickest way to see what to assert. (Not to be confused with [`super::log`], the
//! engine's diagnostics.) The run is [`crate::run::single`], the path `aptitude run` takes;
//! calls are shown on stderr as they come, and the whole list, by canonical name and
//! parameters (what `tool:` and `params:` match), on stdout when the run ends.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use tokio_util::sync::CancellationToken;

use super::output::{self, err, out};
use super::{CliError, LogArgs, Outcome};
use crate::agent::AgentInfo;
use crate::run::single::{SinglePrompt, run_single};
use crate::shared::inert;
use crate::shared::text::summarize_input;
use crate::transcript::ToolCall;
use crate::transcript::display::format_usage;
use crate::verdict::results::{TestResult, TestStatus};

pub(super) fn log(args: &LogArgs) -> Result<Outcome, CliError> {
    let dir = super::settings::workspace_override(&args.workspace)?;
    let setup = args.agents.resolve(|name| std::env::var_os(name));
    let agent = setup.agent(args.agent);
    let prompt = SinglePrompt {
        model: args.model.clone().filter(|m| !m.is_empty()),
        timeout: Some(args.timeout),
        keep_workspace: args.keep_workspace,
        ..SinglePrompt::new(&args.prompt, dir, args.agent)
    };
    let problems = super::settings::missing_credentials([args.agent], &[prompt.spec()]);
    if !problems.is_empty() {
        return Err(CliError::NothingRun { problems });
    }
    let redactor = output::redactor_for(&[prompt.spec()]);
    let runtime = output::runtime()?;
    let cancel = CancellationToken::new();
    let interrupted = Arc::new(AtomicBool::new(false));
    let seen = AtomicUsize::new(0);
    let live = |call: &ToolCall| {
        let n = seen.fetch_add(1, Ordering::SeqCst) + 1;
        err(&redactor.redact(&format!("  ↳ {}\n", inert::terminal(&describe(n, call)))));
    };
    let ran = runtime.block_on(async {
        super::run::spawn_signal_handler(cancel.clone(), Arc::clone(&interrupted));
        if let Some(pin) = setup.pin(args.agent) {
            let info = agent.check().await.map_err(problem)?;
            if !super::settings::version_matches(&info.version, pin) {
                return Err(CliError::NothingRun {
                    problems: vec![format!(
                        "--agent-version: agent `{}` must be version {pin}, but {} reports `{}`",
                        args.agent,
                        info.binary.display(),
                        info.version
                    )],
                });
            }
        }
        run_single(&prompt, agent.as_ref(), Some(&live), &cancel)
            .await
            .map_err(problem)
    });
    runtime.shutdown_background();
    let ran = ran?;
    let result = output::redacted(&redactor, &ran.result)?;
    out(&render(&result, &ran.agent, &args.workspace));
    if interrupted.load(Ordering::SeqCst) {
        return Err(CliError::Interrupted { also: None });
    }
    if result.status == TestStatus::Error {
        err(&super::error::error_line(&format!(
            "the run failed: {}",
            result.error.as_deref().unwrap_or("it could not be judged")
        )));
        return Ok(Outcome::Failed);
    }
    Ok(Outcome::Passed)
}

/// An agent that could not start: nothing ran.
fn problem(e: crate::agent::AgentError) -> CliError {
    CliError::NothingRun {
        problems: vec![e.to_string()],
    }
}

/// One call as an assertion reads it: `#2 Bash command="ls -la"`, with the agent's own
/// name when it differs (`[exec_command]`), who made it when not the main agent, and how
/// it ended when known.
fn describe(n: usize, call: &ToolCall) -> String {
    let mut line = format!(
        "#{n} {} {}",
        call.canonical,
        summarize_input(call.params(), 160)
    );
    if call.name != call.canonical {
        line.push_str(&format!(" [{}]", call.name));
    }
    if !call.is_main() {
        line.push_str(&format!(" [subagent {}]", call.agent));
    }
    match (call.exit_code, call.is_error) {
        (Some(code), _) => line.push_str(&format!(" → exit {code}")),
        (None, true) => line.push_str(" → error"),
        (None, false) => {}
    }
    line
}

/// What the run did, for stdout: the agent, every call, totals, changed files, the answer
/// (the agent's text made inert for a terminal).
fn render(result: &TestResult, agent: &AgentInfo, dir: &std::path::Path) -> String {
    let mut text = format!(
        "{} {} · a copy of {}\n",
        agent.kind,
        inert::terminal(&agent.version),
        inert::terminal(&dir.display().to_string())
    );
    let calls = result
        .transcript
        .as_ref()
        .map_or(&[][..], |t| t.tool_calls.as_slice());
    for (i, call) in calls.iter().enumerate() {
        text.push_str(&inert::terminal(&describe(i + 1, call)));
        text.push('\n');
    }
    let mut totals = vec![format!(
        "{} tool call{}",
        calls.len(),
        if calls.len() == 1 { "" } else { "s" }
    )];
    if let Some(usage) = result.transcript.as_ref().map(|t| &t.usage) {
        totals.push(format_usage(usage));
    }
    totals.push(crate::shared::text::format_duration(result.duration_ms));
    text.push_str(&totals.join(" · "));
    text.push('\n');
    for change in &result.files {
        let kind = format!("{:?}", change.change).to_lowercase();
        text.push_str(&format!("{kind} {}\n", inert::terminal(&change.path)));
    }
    if let Some(kept) = &result.workspace {
        text.push_str(&format!("workspace kept: {kept}\n"));
    }
    if let Some(answer) = result
        .transcript
        .as_ref()
        .and_then(|t| t.final_text.as_deref())
    {
        text.push_str("answer:\n");
        for line in inert::terminal_lines(answer) {
            text.push_str(&format!("  {line}\n"));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_read_as_assertions_name_them() {
        let mut call = ToolCall::new("exec_command", serde_json::json!({"cmd": "ls -la"}));
        call.params = Some(serde_json::json!({"command": "ls -la"}));
        call.exit_code = Some(0);
        assert_eq!(
            describe(2, &call),
            "#2 Bash command=\"ls -la\" [exec_command] → exit 0"
        );
        let read = ToolCall::new("Read", serde_json::json!({"file_path": "/w/a.md"}));
        assert_eq!(describe(1, &read), "#1 Read file_path=\"/w/a.md\"");
    }
}
