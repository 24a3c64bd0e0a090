//! The Aider adapter (`aider-chat` 0.86.2 from PyPI; see `docs/agents.md` and
//! `tests/data/corpus/live/aider-0.86.2/`).
//!
//! Aider has no tool calls and no machine-readable output: it edits files from
//! SEARCH/REPLACE blocks and prints human text; shell blocks are shown and never run
//! headless. The transcript is its chat history, whose applied edits become `Edit`/`Write`
//! calls; assertions about tools it can not record (`Bash`, `ran`, `exit_code`, …) are
//! `error` ("aider records no shell commands"), never a verdict.
//!
//! - **Run:** `aider --no-git --yes-always --no-pretty --edit-format diff
//!   --no-check-update --no-show-release-notes --analytics-disable --no-auto-commits
//!   --no-show-model-warnings --chat-history-file <home>/chat.md --input-history-file
//!   <home>/input.md [--model M] --message PROMPT` in the workspace copy. Its history files
//!   stay out of the workspace; `HOME` is the private home (Aider keeps analytics and
//!   caches under `~/.aider`).
//! - **Base URL:** `--openai-api-base URL` with the model `openai/M` (a model is required);
//!   the key is read from `OPENAI_API_KEY`.
//! - **Failures:** after its retries fail (~75 s, not configurable) Aider exits 0; the
//!   `litellm.…Error` lines it printed make the run an `error`.
//! - **Grading:** not supported (Aider answers with edits, not a reply): name another agent
//!   on the review.
//! - **Conversation:** a plain-text question (read from the chat history) is answered by
//!   the same command with `--restore-chat-history --message REPLY` (docs/conversations.md).

use std::ffi::OsString;
use std::path::Path;

use super::args;
use super::{AgentCli, AgentKind, Finished, GradeTask, Invocation, InvocationError, Task};
use crate::transcript::{Format, Outcome, Transcript};

/// Aider.
#[derive(Debug, Clone, Default)]
pub struct Aider;

impl AgentCli for Aider {
    fn kind(&self) -> AgentKind {
        AgentKind::Aider
    }

    fn program(&self) -> &'static str {
        "aider"
    }

    fn install_hint(&self) -> &'static str {
        "pip install aider-chat==0.86.2"
    }

    fn api_key_env(&self) -> &'static str {
        "OPENAI_API_KEY"
    }

    fn own_env(&self) -> &'static [&'static str] {
        &["AIDER_", "OPENAI_"]
    }

    /// Only with a base URL (`--openai-api-base`, the key from `OPENAI_API_KEY`).
    fn model_route(&self) -> Option<super::ModelRoute> {
        Some(super::ModelRoute {
            base_url_env: None,
            key_envs: &["OPENAI_API_KEY"],
            default_upstream: None,
            login_passes_through: false,
            login: None,
            protocols: {
                use crate::gateway::protocol::Protocol as P;
                &[P::Chat]
            },
        })
    }

    fn base_url_via(&self) -> &'static str {
        "`--openai-api-base` (model `openai/M`; needs a model)"
    }

    fn stream_format(&self) -> Format {
        Format::AiderChat
    }

    fn task(&self, task: &Task<'_>, home: &Path) -> Result<Invocation, InvocationError> {
        invocation(task, home, false)
    }

    /// The chat history so far (`<home>/chat.md`), whose last reply holds the plain-text
    /// question: Aider's stdout is no transcript.
    fn conversation_so_far(&self, finished: &Finished<'_>) -> Option<Transcript> {
        crate::transcript::parse_file(&finished.home.join("chat.md")).ok()
    }

    /// The same command with `--restore-chat-history`: Aider has no session id; it sends
    /// the chat history of `<home>/chat.md` (the turns before) with the reply as the next
    /// message, and appends the new turn to it (0.86.2).
    fn follow_up(
        &self,
        task: &Task<'_>,
        _session: &str,
        home: &Path,
    ) -> Option<Result<Invocation, InvocationError>> {
        Some(invocation(task, home, true))
    }

    fn grade(&self, _task: &GradeTask<'_>, _home: &Path) -> Result<Invocation, InvocationError> {
        Err(InvocationError::Unsupported(
            "can not grade (it answers with edits, not a reply); name another agent on the review, e.g. `agent: claude`",
        ))
    }

    /// The chat history holds the applied edits; stdout holds the API errors Aider exits
    /// 0 after.
    fn finish(&self, streamed: Transcript, finished: &Finished<'_>) -> Transcript {
        let history = finished.home.join("chat.md");
        let mut transcript = match crate::transcript::parse_file(&history) {
            Ok(t) => t,
            Err(_) => streamed.clone(),
        };
        if matches!(streamed.outcome, Outcome::ApiError { .. })
            && !matches!(transcript.outcome, Outcome::ApiError { .. })
        {
            transcript.outcome = streamed.outcome;
        }
        transcript
    }
}

/// Aider's command for `task` (`restore`: with `--restore-chat-history`, a follow-up turn
/// that sends the chat history before the message).
///
/// # Errors
/// A base URL without a model: Aider names the model `openai/M`.
fn invocation(task: &Task<'_>, home: &Path, restore: bool) -> Result<Invocation, InvocationError> {
    let mut a: Vec<OsString> = args([
        "--no-git",
        "--yes-always",
        "--no-pretty",
        "--edit-format",
        "diff",
        "--no-check-update",
        "--no-show-release-notes",
        "--analytics-disable",
        "--no-auto-commits",
        "--no-show-model-warnings",
    ]);
    a.extend(["--chat-history-file".into(), home.join("chat.md").into()]);
    a.extend(["--input-history-file".into(), home.join("input.md").into()]);
    match (task.base_url, task.model) {
        (Some(url), Some(model)) => {
            a.extend(["--model".into(), format!("openai/{model}").into()]);
            a.extend(["--openai-api-base".into(), url.into()]);
        }
        (Some(_), None) => {
            return Err(InvocationError::Unsupported(
                "needs a model with a base URL (`model:` or --model): Aider names it `openai/M`",
            ));
        }
        (None, Some(model)) => a.extend(["--model".into(), model.into()]),
        (None, None) => {}
    }
    if restore {
        a.push("--restore-chat-history".into());
    }
    a.extend(["--message".into(), task.prompt.into()]);
    Ok(Invocation {
        args: a,
        defaults: Vec::new(),
        isolation: vec![("HOME".to_owned(), home.display().to_string())],
    })
}
