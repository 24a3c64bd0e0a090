//! `prompt("…").in_dir(".").agent(…).run()`: running a real agent from a Rust test
//! (upstream aptitude's `prompt` builder), on the one path every run takes —
//! [`crate::run::single`]: the agent's version check, a fresh copy of the directory, the
//! agent through its executor (private home, process group, timeout, kill sweep), the file
//! snapshot. The directory itself is never touched: the agent works in the copy.
//!
//! Unlike upstream, a run that could not be judged — a timeout, a crash, an API error, an
//! agent that stopped without a result — is an error ([`RunError::Failed`], which keeps
//! what was captured), never a list of calls that might be incomplete.
//!
//! No signal handler is installed (a library does not take over its caller's signals):
//! the run's timeout bounds it, and the agent's process group is stopped at it.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::calls::ToolCalls;
use super::subject::{Subject, TranscriptRef};
use crate::agent::registry::{self, AgentOptions};
use crate::agent::{Agent, AgentError, AgentKind, AgentSettings};
use crate::run::single::{SinglePrompt, run_single};
use crate::transcript::Transcript;
use crate::verdict::results::{ErrorKind, TestStatus};
use crate::workspace::FileChange;

/// Starts a prompt to run with a real agent (Claude Code unless [`PromptBuilder::agent`]
/// says otherwise) in a copy of the current directory (unless [`PromptBuilder::in_dir`]).
pub fn prompt(text: &str) -> PromptBuilder {
    PromptBuilder::new(text)
}

/// A prompt run being set up (upstream's `PromptBuilder`).
#[derive(Clone)]
pub struct PromptBuilder {
    prompt: SinglePrompt,
    settings: AgentSettings,
    adapter: Option<Arc<dyn Agent>>,
}

impl std::fmt::Debug for PromptBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptBuilder")
            .field("prompt", &self.prompt)
            .field("binary", &self.settings.binary)
            .field("base_url", &self.settings.base_url)
            .field("adapter", &self.adapter.as_ref().map(|a| a.name()))
            .finish()
    }
}

impl PromptBuilder {
    /// `text` for Claude Code in a copy of the current directory.
    pub fn new(text: &str) -> Self {
        PromptBuilder {
            prompt: SinglePrompt::new(text, PathBuf::from("."), AgentKind::Claude),
            settings: AgentSettings::default(),
            adapter: None,
        }
    }

    /// Runs in a copy of `dir` (relative to the current directory; `cargo test` runs in
    /// the crate's root).
    pub fn in_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.prompt.dir = dir.as_ref().to_owned();
        self
    }

    /// As [`PromptBuilder::in_dir`] (upstream's spelling for a `PathBuf`).
    pub fn in_dir_path(self, dir: PathBuf) -> Self {
        self.in_dir(dir)
    }

    /// The agent (upstream's `AgentType`, [`crate::AgentType`]); default Claude Code.
    pub fn agent(mut self, agent: AgentKind) -> Self {
        self.prompt.agent = agent;
        self
    }

    /// The model, passed to the agent as it spells models (`--model`, `-m`).
    pub fn model(mut self, model: &str) -> Self {
        self.prompt.model = Some(model.to_owned());
        self
    }

    /// The time limit of the run (default 10 minutes); the agent is stopped at it and the
    /// run is [`RunError::Failed`].
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.prompt.timeout = Some(timeout);
        self
    }

    /// A variable for the agent (as a test's `env:`), e.g. `ANTHROPIC_BASE_URL`.
    pub fn env(mut self, key: &str, value: &str) -> Self {
        self.prompt.env.insert(key.to_owned(), value.to_owned());
        self
    }

    /// The agent's binary; by default its program is looked up on `PATH`.
    pub fn agent_binary(mut self, path: impl AsRef<Path>) -> Self {
        self.settings.binary = Some(path.as_ref().to_owned());
        self
    }

    /// An API-compatible endpoint for the agent, set through the agent's own variable or
    /// config (as `--agent-base-url`).
    pub fn agent_base_url(mut self, url: &str) -> Self {
        self.settings.base_url = Some(url.to_owned());
        self
    }

    /// Runs with this adapter (its kind becomes the agent), e.g. one made with
    /// [`crate::agent::CliAgent::with_env`].
    pub fn with_adapter(mut self, agent: Arc<dyn Agent>) -> Self {
        self.prompt.agent = agent.kind();
        self.adapter = Some(agent);
        self
    }

    /// Keeps the workspace copy after the run ([`ExecutionOutput::workspace`]).
    pub fn keep_workspace(mut self) -> Self {
        self.prompt.keep_workspace = true;
        self
    }

    /// Runs the agent and returns its tool calls.
    ///
    /// # Errors
    /// As [`PromptBuilder::run_full`].
    pub fn run(self) -> Result<ToolCalls, RunError> {
        self.run_full().map(|output| output.result.tool_calls)
    }

    /// Runs the agent and returns everything the run left: calls, answer, file changes.
    /// Blocks; it runs on a thread of its own, so it may be called inside an async runtime
    /// too ([`PromptBuilder::run_full_async`] awaits instead).
    ///
    /// # Errors
    /// [`RunError::Agent`] when the agent is not installed or does not start;
    /// [`RunError::Failed`] when the run could not be judged (timeout, crash, API error,
    /// missing directory); [`RunError::Runtime`] when no async runtime could be made.
    pub fn run_full(self) -> Result<ExecutionOutput, RunError> {
        let ran = std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    tokio::runtime::Builder::new_multi_thread()
                        .worker_threads(2)
                        .enable_all()
                        .build()
                        .map_err(RunError::Runtime)
                        .and_then(|rt| rt.block_on(self.run_full_async()))
                })
                .join()
        });
        ran.unwrap_or(Err(RunError::Panicked))
    }

    /// [`PromptBuilder::run`] for async code.
    ///
    /// # Errors
    /// As [`PromptBuilder::run_full`].
    pub async fn run_async(self) -> Result<ToolCalls, RunError> {
        self.run_full_async()
            .await
            .map(|output| output.result.tool_calls)
    }

    /// [`PromptBuilder::run_full`] for async code.
    ///
    /// # Errors
    /// As [`PromptBuilder::run_full`].
    pub async fn run_full_async(&self) -> Result<ExecutionOutput, RunError> {
        let agent = self.adapter.clone().unwrap_or_else(|| {
            // The variables go to grading calls too: the agent that ran grades its reviews.
            let mut settings = self.settings.clone();
            settings
                .env
                .extend(self.prompt.env.iter().map(|(k, v)| (k.clone(), v.clone())));
            registry::agent(self.prompt.agent, settings, &AgentOptions::default())
        });
        let ran = run_single(
            &self.prompt,
            agent.as_ref(),
            None,
            &CancellationToken::new(),
        )
        .await
        .map_err(RunError::Agent)?;
        let mut result = ran.result;
        let transcript = Arc::new(
            result
                .transcript
                .take()
                .unwrap_or_else(|| Transcript::of_calls(Vec::new(), None)),
        );
        let output = ExecutionOutput {
            result: NormalizedResult {
                tool_calls: ToolCalls::shared(Arc::clone(&transcript)),
                agent_name: agent.name().to_owned(),
            },
            session_log_path: None,
            stdout: transcript.final_text.clone(),
            files: result.files,
            workspace: result.workspace.map(PathBuf::from),
            agent_version: ran.agent.version,
            duration_ms: result.duration_ms,
            prompt: self.prompt.prompt.clone(),
            grader: agent,
        };
        match (result.status, result.error) {
            (TestStatus::Error, error) => Err(RunError::Failed {
                kind: result.error_kind.unwrap_or(ErrorKind::Agent),
                message: error.unwrap_or_else(|| "the run could not be judged".into()),
                output: Box::new(output),
            }),
            _ => Ok(output),
        }
    }
}

/// The calls of a run and the agent that made them (upstream's `NormalizedResult`).
#[derive(Debug, Clone)]
pub struct NormalizedResult {
    /// The calls, in order (each agent's names mapped to canonical ones in
    /// [`crate::transcript::ToolCall::canonical`]).
    pub tool_calls: ToolCalls,
    /// The agent's name (`claude`).
    pub agent_name: String,
}

/// Everything a run left (upstream's `ExecutionOutput`, with more).
#[derive(Clone)]
pub struct ExecutionOutput {
    /// The calls and the agent.
    pub result: NormalizedResult,
    /// Always `None`: aptitude reads the agent's own output stream, not a session log
    /// under `~/.claude` (under concurrency the newest log there may be another run's).
    /// The whole transcript is [`ExecutionOutput::transcript`].
    pub session_log_path: Option<PathBuf>,
    /// The agent's final answer, when it gave one.
    pub stdout: Option<String>,
    /// The files the agent created, modified or deleted in the workspace copy.
    pub files: Vec<FileChange>,
    /// The workspace copy, when kept ([`PromptBuilder::keep_workspace`]).
    pub workspace: Option<PathBuf>,
    /// The agent CLI's version, as it reported it (`2.1.328 (Claude Code)`).
    pub agent_version: String,
    /// How long the run took, in ms.
    pub duration_ms: u64,
    prompt: String,
    grader: Arc<dyn Agent>,
}

impl ExecutionOutput {
    /// The whole transcript: calls with their results, answer, usage (tokens, USD), outcome.
    pub fn transcript(&self) -> &Transcript {
        self.result.tool_calls.transcript()
    }
}

impl std::fmt::Debug for ExecutionOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecutionOutput")
            .field("result", &self.result)
            .field("stdout", &self.stdout)
            .field("files", &self.files)
            .field("workspace", &self.workspace)
            .field("agent_version", &self.agent_version)
            .field("duration_ms", &self.duration_ms)
            .finish_non_exhaustive()
    }
}

/// A run's output: its reviews are graded by the agent that ran unless another grader is
/// set, with the prompt as the judge's context.
impl Subject for ExecutionOutput {
    fn transcript(&self) -> TranscriptRef<'_> {
        TranscriptRef::borrowed(self.result.tool_calls.transcript())
    }

    fn grader(&self) -> Option<Arc<dyn Agent>> {
        Some(Arc::clone(&self.grader))
    }

    fn task(&self) -> Option<&str> {
        Some(&self.prompt)
    }
}

/// Why a prompt run gave no output to assert on.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The agent is not installed, or does not answer its version check.
    #[error(transparent)]
    Agent(AgentError),
    /// The run could not be judged; `output` holds what was captured.
    #[error("the agent run failed ({}): {message}", kind.word())]
    Failed {
        /// Whose fault it is: the agent's, the infrastructure's (model API, network),
        /// the setup's (a missing directory), or an interruption.
        kind: ErrorKind,
        /// What happened, in the agent's words where it gave any.
        message: String,
        /// The calls, answer and file changes up to where the run stopped.
        output: Box<ExecutionOutput>,
    },
    /// No async runtime could be made to run the agent.
    #[error("can not start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// The thread that ran the agent panicked.
    #[error("the thread running the agent panicked")]
    Panicked,
}
