//! Agents: running a real agent CLI non-interactively, and one-shot grading prompts.
//!
//! The [`Agent`] trait follows the seeds' design (seed 000): a name, an availability check,
//! `execute` returning a transcript, and `grade(prompt, model)` returning text. Claude Code
//! is the first adapter ([`claude::ClaudeAdapter`]); Codex CLI, Gemini CLI and Qwen Code come
//! behind the same trait. Processes are handled by [`process`]: own process group,
//! timeout → SIGTERM → grace → SIGKILL, and nothing outlives the run.

pub mod claude;
pub mod contain;
pub mod process;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::transcript::{Transcript, Usage};

/// Called with each tool call as soon as the agent reports it (live progress).
pub type ToolCallHook<'a> = &'a (dyn Fn(&crate::transcript::ToolCall) + Send + Sync);

/// What an adapter needs to run one test.
#[derive(Clone, Copy)]
pub struct ExecuteRequest<'a> {
    /// The prompt.
    pub prompt: &'a str,
    /// The workspace copy to run in.
    pub workspace: &'a Path,
    /// The test's `env:`.
    pub env: &'a BTreeMap<String, String>,
    /// The test's `model:`.
    pub model: Option<&'a str>,
    /// The test's `max_turns:`.
    pub max_turns: Option<u32>,
    /// Wall-time limit for the agent.
    pub timeout: Duration,
    /// Fires on Ctrl-C / SIGTERM.
    pub cancel: &'a CancellationToken,
    /// Told of each tool call as it happens.
    pub on_tool_call: Option<ToolCallHook<'a>>,
}

/// A finished (or stopped) agent run.
#[derive(Debug, Clone)]
pub struct Execution {
    /// Everything the agent reported, up to where it stopped.
    pub transcript: Transcript,
    /// How the process ended, and its stderr.
    pub process: process::Output,
    /// The agent's stdout as it came (its raw transcript), one event per line.
    pub raw: Vec<String>,
}

/// A grading reply.
#[derive(Debug, Clone, PartialEq)]
pub struct GradeReply {
    /// The model's text.
    pub text: String,
    /// Tokens and cost of the grading call.
    pub usage: Usage,
}

/// An installed agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentInfo {
    /// The adapter name (`claude`).
    pub name: &'static str,
    /// The binary that will run.
    pub binary: PathBuf,
    /// Its reported version (`2.1.328 (Claude Code)`).
    pub version: String,
}

/// Why an agent could not be used.
#[derive(Debug, Clone, thiserror::Error)]
pub enum AgentError {
    /// The binary is not installed (or not where it was said to be).
    #[error("the `{agent}` agent CLI was not found ({looked}); {hint}")]
    Missing {
        /// Adapter name.
        agent: &'static str,
        /// Where it was looked for.
        looked: String,
        /// How to install it.
        hint: String,
    },
    /// The binary could not be started or answered oddly.
    #[error("can not run {}: {message}", binary.display())]
    Start {
        /// The binary.
        binary: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// A grading call failed (non-zero exit, timeout, an error result).
    #[error("{0}")]
    Grade(String),
}

/// An agent CLI (seed 000's `Agent` trait).
#[async_trait]
pub trait Agent: Send + Sync {
    /// The adapter name, as written in test files (`claude`).
    fn name(&self) -> &'static str;

    /// Checks that the agent is installed and runs; returns its version.
    ///
    /// # Errors
    /// [`AgentError::Missing`] with an install hint, or [`AgentError::Start`].
    async fn check(&self) -> Result<AgentInfo, AgentError>;

    /// Runs the agent on a prompt in a workspace and records its transcript.
    ///
    /// A crash, a timeout or a cancellation is not an error here: the execution carries
    /// how the process ended and what it reported until then.
    ///
    /// # Errors
    /// Only when the agent can not be started at all.
    async fn execute(&self, request: ExecuteRequest<'_>) -> Result<Execution, AgentError>;

    /// Sends one prompt with no tools and returns the text reply (LLM-judge grading).
    ///
    /// # Errors
    /// [`AgentError::Grade`] when the call fails, times out or reports an error.
    async fn grade(
        &self,
        prompt: &str,
        model: Option<&str>,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<GradeReply, AgentError>;
}

/// Finds a program on `PATH`, like `which`.
pub fn find_on_path(program: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}
