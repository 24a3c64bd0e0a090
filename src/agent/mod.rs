//! Agents: running a real agent CLI non-interactively, and one-shot grading prompts.
//!
//! The runner and the judge see one trait, [`Agent`] (seed 000's design: a name, an
//! availability check, `execute` returning a transcript, `grade(prompt, model)` returning
//! text). It has one implementation for real CLIs, [`executor::CliAgent`], which owns
//! everything common to every agent: finding the binary, a private home per run, spawning
//! in its own process group, streaming stdout into the transcript parser, live tool-call
//! events, timeouts and the kill sweep ([`process`]).
//!
//! What is particular to one agent (its flags, environment, config files, stream format,
//! retry settings) is one module implementing [`AgentCli`], listed once in [`registry`].
//! Adding an agent is one file plus one registry entry.

pub mod aider;
pub mod cache;
pub mod claude;
pub mod codex;
pub mod contain;
pub mod conversation;
pub mod copilot;
pub mod cursor;
pub mod executor;
pub mod fence;
pub mod gemini;
pub mod install;
pub mod kiro;
pub mod limits;
pub mod mcp;
pub mod opencode;
pub mod pi;
pub mod probe;
pub mod process;
pub mod qwen;
pub mod registry;
pub mod routing;

pub use crate::spec::agent_kind::AgentKind;
pub use executor::{AgentSettings, CliAgent};

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::gateway;
pub use crate::spec::{McpServer, McpServers};
use crate::transcript::{Format, StreamParser, Transcript, Usage};

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
    /// The test's `base_url:` for this agent; wins over the agent's settings.
    pub base_url: Option<&'a str>,
    /// Wall-time limit for the agent.
    pub timeout: Duration,
    /// Fires on Ctrl-C / SIGTERM.
    pub cancel: &'a CancellationToken,
    /// Told of each tool call as it happens.
    pub on_tool_call: Option<ToolCallHook<'a>>,
    /// The test's `mcp_servers:`, `${VAR}` already expanded.
    pub mcp_servers: &'a McpServers,
    /// The test's `mock:` MCP servers, which aptitude serves ([`mcp`]).
    pub mcp_mocks: &'a crate::spec::McpMocks,
    /// The test's `plugins:`: plugin directories (copies, absolute) to load for the run.
    pub plugins: &'a [PathBuf],
    /// Host files the sandbox must keep unreadable, proven before the agent starts (the
    /// test file with the assertions the agent is judged by).
    pub protect: &'a [PathBuf],
    /// The test's `sandbox:` (`--sandbox` wins over it).
    pub sandbox: Option<crate::sandbox::Setting>,
    /// The test's `hooks:`: whether the agent's own hooks may run.
    pub hooks: crate::spec::HooksSetting,
    /// The test's `network:` hosts, reachable through the allowlist proxy.
    pub network: &'a [String],
    /// The cassette the gateway answers the run's model requests from (`run --replay`,
    /// a reused run's baseline); `None`: the real model answers.
    pub replay: Option<&'a gateway::Replaying>,
    /// What the run may use: memory, processes, disk ([`limits`]).
    pub limits: crate::spec::limits::RunLimits,
    /// When to stop the agent: at its first tool call (its first decision; the run's
    /// process then ends [`process::Ending::Decided`] and its transcript
    /// [`crate::transcript::Outcome::Decided`]), or when it ends.
    pub stop: crate::spec::routing::Stop,
    /// A routing suite's skills to look for in the requests to the model, as (name, what
    /// a request that showed it holds: [`crate::spec::routing::shown_needle`]); what was
    /// found is the transcript's `skills_shown`. Empty for other tests.
    pub watch_skills: &'a [(String, String)],
    /// The test's `user:`, who answers the agent's questions ([`conversation`]); `None`:
    /// the run is one prompt.
    pub user: Option<&'a std::sync::Arc<crate::spec::user::User>>,
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
    /// How the run was fenced in (`None`: the sandbox is off).
    pub sandbox: Option<crate::sandbox::Record>,
    /// Why the sandbox did not let the agent start (it could not be made, or its proof did
    /// not hold), or why it did not hold (a workspace hook ran under `hooks: none`): the
    /// run is `error`, whatever the agent's output says.
    pub sandbox_failure: Option<String>,
    /// One message per stdio MCP server of the test that failed to start or crashed
    /// during the run ([`mcp::watch::McpWatch::failures`]), e.g. "MCP server `docs` exited
    /// with status 1: …"; not yet redacted.
    pub mcp_failures: Vec<String>,
    /// Each tool call the test's `mock:` MCP servers answered, in order, as they received
    /// it (canonical name `mcp__<server>__<tool>`, input the arguments): what `expect:`
    /// checks.
    pub mcp_calls: Vec<crate::transcript::ToolCall>,
    /// Calls the mocks received past what aptitude keeps ([`mcp::host::MAX_CALLS`]).
    pub mcp_calls_dropped: u32,
    /// Replayed MCP requests the recording did not hold ([`mcp::McpOutcome::divergences`]).
    pub mcp_divergences: Vec<String>,
    /// The run's model traffic as aptitude's gateway metered it; `None` when the run did
    /// not go through the gateway ([`AgentCli::model_route`]).
    pub model_traffic: Option<gateway::Traffic>,
    /// The run's conversation, for a test with a `user:` ([`conversation`]); `None`
    /// without one.
    pub dialog: Option<crate::transcript::dialog::Dialog>,
    /// The transcript checked against what crossed the gateway ([`gateway::witness`]):
    /// `tampered` makes the run `error`; `unwitnessed` for a run that went direct.
    /// `None` where nothing was checked (an agent double in tests).
    pub witness: Option<gateway::witness::Witness>,
    /// The transcript's shell calls checked against the kernel's exec record
    /// ([`crate::sandbox::exec::check`]): a claimed command no process ran makes the run
    /// `tampered`. `None` when the sandbox is off.
    pub execs: Option<crate::sandbox::exec::check::ExecReport>,
    /// The workspace's hooks (read when the run started) that the exec record shows
    /// running, each with what it ran ([`crate::sandbox::exec::hooks`]). Empty when none
    /// ran or there is no record. One that ran under `hooks: none` makes the run `error`
    /// (`sandbox_failure`): the fence that keeps hooks off did not hold.
    pub hooks_ran: Vec<crate::sandbox::exec::hooks::HookRan>,
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
    /// The agent.
    pub kind: AgentKind,
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
        /// The agent.
        agent: AgentKind,
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
    /// The sandbox could not be set up: the run does not happen.
    #[error(transparent)]
    Sandbox(#[from] crate::sandbox::SandboxError),
    /// The agent can not do what the test asks (grade, reach a base URL, …).
    #[error("{agent} {message}")]
    Unsupported {
        /// The agent.
        agent: AgentKind,
        /// What it can not do, as the end of a sentence after its name.
        message: String,
    },
}

/// Why an agent's command for a run or a grading call could not be made. The message ends
/// a sentence after the agent's name ("aider can not grade …").
#[derive(Debug, thiserror::Error)]
pub enum InvocationError {
    /// The test asks for what this agent can not do: grade, a base URL it has no setting
    /// for or without a model, a replay.
    #[error("{0}")]
    Unsupported(&'static str),
    /// A file the agent reads (its settings, MCP list, skills) could not be written into
    /// the run's private home.
    #[error("can not write its {what} {}: {source}", path.display())]
    Write {
        /// What the file is to the agent (`MCP config`, `settings`).
        what: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The failure.
        #[source]
        source: std::io::Error,
    },
    /// The login file copied into the run's private home could not be read, parsed or
    /// rewritten with the gateway's placeholders.
    #[error("can not put a placeholder in its login file {}: {source}", path.display())]
    Login {
        /// The login file's copy.
        path: PathBuf,
        /// The failure.
        #[source]
        source: std::io::Error,
    },
}

impl InvocationError {
    /// A `map_err` adapter: the write of `what` at `path` failed.
    pub fn write(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.to_path_buf();
        move |source| InvocationError::Write { what, path, source }
    }
}

/// An agent CLI (seed 000's `Agent` trait).
#[async_trait]
pub trait Agent: Send + Sync {
    /// Which agent this is.
    fn kind(&self) -> AgentKind;

    /// The name written in test files (`claude`).
    fn name(&self) -> &'static str {
        self.kind().name()
    }

    /// The endpoint every run talks to unless the test sets `base_url:`
    /// (`--agent-base-url NAME=URL`); `None`: the agent's default.
    fn base_url(&self) -> Option<&str> {
        None
    }

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

pub use crate::shared::files::find_on_path;

/// One agent run's task, as an [`AgentCli`] turns it into a command line.
#[derive(Debug, Clone, Copy)]
pub struct Task<'a> {
    /// The prompt.
    pub prompt: &'a str,
    /// The workspace copy the agent runs in (its working directory).
    pub workspace: &'a Path,
    /// The model (`model:` or `--model`), passed through as the agent spells models.
    pub model: Option<&'a str>,
    /// `max_turns:`, for agents that have such a limit.
    pub max_turns: Option<u32>,
    /// An API-compatible endpoint (`--agent-base-url NAME=URL`, `base_url:`), set through
    /// the agent's own mechanism (an environment variable or its config).
    pub base_url: Option<&'a str>,
    /// MCP servers to attach (expanded), written into the agent's own configuration in the
    /// run's private home so that no other server is loaded. Only passed to agents whose
    /// [`AgentCli::supports_mcp`] is true.
    pub mcp_servers: &'a McpServers,
    /// Plugin directories to load (absolute). Only passed to agents whose
    /// [`AgentCli::supports_plugins`] is true.
    pub plugins: &'a [PathBuf],
    /// `hooks:`: with [`HooksSetting::None`](crate::spec::HooksSetting::None) the adapter
    /// turns its CLI's hooks off in a way the workspace's settings, and settings written
    /// during the run, can not turn back on.
    pub hooks: crate::spec::HooksSetting,
    /// The test has a `user:` and the agent an [`AgentCli::ask_channel`]: the prompt goes
    /// through the channel ([`conversation::AskChannel::opening`]), not the command line.
    pub converse: bool,
}

/// A one-shot grading call: one prompt, no tools, a text reply.
#[derive(Debug, Clone, Copy)]
pub struct GradeTask<'a> {
    /// The grading prompt.
    pub prompt: &'a str,
    /// An empty scratch directory to run in.
    pub workspace: &'a Path,
    /// The grader model, when the review names one.
    pub model: Option<&'a str>,
    /// As for [`Task::base_url`].
    pub base_url: Option<&'a str>,
}

/// The command line and environment an [`AgentCli`] wants for one run.
#[derive(Debug, Clone, Default)]
pub struct Invocation {
    /// Arguments after the program.
    pub args: Vec<OsString>,
    /// Variables a test's `env:` (and the settings' `env`) may change: quiet defaults, base URL.
    pub defaults: Vec<(String, String)>,
    /// Variables that isolate the run (config dirs under its private home); set last, so
    /// that nothing can point the agent at the user's own configuration.
    pub isolation: Vec<(String, String)>,
}

#[cfg(test)]
impl Invocation {
    /// The arguments as strings (lossy), for tests to compare.
    pub fn arg_strings(&self) -> Vec<String> {
        self.args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }
}

/// How an agent reaches its model, for aptitude's model gateway ([`gateway`]): the agent
/// is given the gateway's endpoint through `base_url_env` (or [`Task::base_url`], for
/// agents configured by file) and a placeholder in each of `key_envs`; the gateway
/// forwards to the upstream with the real values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelRoute {
    /// The variable the agent reads its base URL from (`ANTHROPIC_BASE_URL`), when it
    /// reads one: a value the user set there is the upstream.
    pub base_url_env: Option<&'static str>,
    /// The variables the agent reads its API key from (`ANTHROPIC_API_KEY`,
    /// `ANTHROPIC_AUTH_TOKEN`).
    pub key_envs: &'static [&'static str],
    /// The provider's endpoint when no base URL is set, in the form the agent's base URL
    /// takes (`https://api.openai.com/v1` for Codex); `None` when the agent's default is
    /// a backend the gateway does not speak (Copilot's GitHub login).
    pub default_upstream: Option<&'static str>,
    /// Whether the agent sends its own login credential (a token from a file in its private
    /// home) to a base URL: such a run goes through the gateway even with no key to put
    /// in.
    pub login_passes_through: bool,
    /// The login file the agent reads in its private home, whose tokens are swapped for
    /// placeholders (the gateway puts the real access token back on the wire).
    pub login: Option<LoginFile>,
    /// The wire protocols the agent speaks to that base URL: the gateway refuses the
    /// endpoints of any other ([`gateway::scope::admit`]).
    pub protocols: &'static [gateway::protocol::Protocol],
}

/// A login file an agent reads from its private home (copied there from the user's own
/// config dir), in which the gateway can stand in for the real tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoginFile {
    /// The file, relative to the private home (`.credentials.json`).
    pub file: &'static str,
    /// The JSON pointer of the token the agent sends to its model
    /// (`/claudeAiOauth/accessToken`): replaced by a placeholder the gateway swaps back.
    pub token: &'static str,
    /// JSON pointers of other secrets in it (a refresh token, sent only to the provider's
    /// login service): replaced by placeholders that stay placeholders.
    pub others: &'static [&'static str],
    /// The JSON pointer of the token's expiry, in ms since the epoch: a login that expires
    /// within 5 minutes is left as it is, for the agent to refresh (it is then the one
    /// secret inside the agent's run).
    pub expires_ms: Option<&'static str>,
}

/// What a finished run left, for an agent that completes its transcript after the
/// process ends (from a file it wrote, or from its plain-text output).
#[derive(Debug, Clone, Copy)]
pub struct Finished<'a> {
    /// The run's private home (config dirs, logs), still present.
    pub home: &'a Path,
    /// The workspace copy.
    pub workspace: &'a Path,
    /// Every stdout line.
    pub stdout: &'a [String],
    /// How the process ended.
    pub process: &'a process::Output,
    /// The MCP servers the run had, for agents whose tool names need them to be read
    /// back as `mcp__<server>__<tool>`.
    pub mcp_servers: &'a McpServers,
}

/// Everything particular to one agent CLI. Implementations are pure descriptions: the
/// [`executor::CliAgent`] does the spawning, streaming, timeouts and cleanup.
pub trait AgentCli: Send + Sync + std::fmt::Debug {
    /// Which agent this describes.
    fn kind(&self) -> AgentKind;

    /// The binary looked up on `PATH` (`claude`, `cursor-agent`).
    fn program(&self) -> &'static str;

    /// How to install it, e.g. `npm install -g @openai/codex@0.169.0`.
    fn install_hint(&self) -> &'static str;

    /// The variable the agent reads its API key from, for docs and error messages
    /// (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, …).
    fn api_key_env(&self) -> &'static str;

    /// The variable of aptitude's environment the agent reads its endpoint from
    /// (`ANTHROPIC_BASE_URL`), if it has one: passed into its sandbox, and its port
    /// forwarded when it is on this machine's loopback.
    fn base_url_env(&self) -> Option<&'static str> {
        None
    }

    /// The variables of aptitude's environment that are this agent's own documented
    /// settings, passed into its sandbox: exact names, or prefixes ending in `_`
    /// (`CLAUDE_CODE_`). Its [`AgentCli::api_key_env`] and [`AgentCli::base_url_env`] are
    /// passed anyway. Never another agent's key, never `GITHUB_TOKEN`.
    fn own_env(&self) -> &'static [&'static str] {
        &[]
    }

    /// How `--agent-base-url` reaches the agent, for the docs table (`ANTHROPIC_BASE_URL`,
    /// `a Codex provider (-c model_providers…)`).
    fn base_url_via(&self) -> &'static str;

    /// The stream the agent writes on stdout, parsed line by line as it comes. An agent
    /// with no machine-readable output completes its transcript in [`AgentCli::finish`].
    fn stream_format(&self) -> Format;

    /// A cache the agent fills on first use, which aptitude fills once and shares
    /// read-only between runs ([`cache`]); `None`: none.
    fn shared_cache(&self) -> Option<cache::SharedCache> {
        None
    }

    /// Whether aptitude can attach a test's `mcp_servers` to this agent; a test with MCP
    /// servers on an agent without is `error`.
    fn supports_mcp(&self) -> bool {
        false
    }

    /// Whether aptitude can load a test's `plugins` (Claude Code plugin directories) into
    /// this agent; a test with plugins on an agent without is `error`.
    fn supports_plugins(&self) -> bool {
        false
    }

    /// The channel that carries the agent's questions to a test's `user:` while it runs
    /// (docs/conversations.md); `None`: none yet, and the conversation assertions of its
    /// runs are `error` ([`AgentCli::no_ask_channel`] says why).
    fn ask_channel(&self, _task: &Task<'_>) -> Option<Box<dyn conversation::AskChannel>> {
        None
    }

    /// For an agent that asks in plain text at the end of a turn: the command of a
    /// follow-up turn in the same session `session` (the id its stream reported), whose
    /// prompt (`task.prompt`) is the user's reply. `None`: the agent has no such channel.
    ///
    /// # Errors
    /// As for [`AgentCli::task`].
    fn follow_up(
        &self,
        _task: &Task<'_>,
        _session: &str,
        _home: &Path,
    ) -> Option<Result<Invocation, InvocationError>> {
        None
    }

    /// For an agent whose follow-up turn restores its conversation from a file in its
    /// private home rather than resuming a session by id (Aider's chat history): the
    /// transcript so far, read from that file, from which the plain-text question is
    /// taken; its [`AgentCli::follow_up`] is then given an empty session id. `None` (the
    /// default): the question is read from the stream, and a follow-up needs the session
    /// id the stream named.
    fn conversation_so_far(&self, _finished: &Finished<'_>) -> Option<Transcript> {
        None
    }

    /// Why the agent's questions reach no user, for a run with a `user:` on an agent
    /// without [`AgentCli::ask_channel`].
    fn no_ask_channel(&self) -> String {
        format!(
            "aptitude does not yet answer the questions of {} (docs/conversations.md)",
            self.kind().name()
        )
    }

    /// Where the agent finds its credentials, for `aptitude agents`: variables and login
    /// files, each enough on its own. The default: [`AgentCli::api_key_env`].
    fn credentials(&self) -> Vec<Credential> {
        vec![Credential::Env(self.api_key_env())]
    }

    /// Whether [`AgentCli::credentials`] lists every way the agent can sign in, so that
    /// none present means it can not work: a run then stops before the agent starts
    /// ([`missing_credential`]) instead of waiting for a sign-in until the timeout. False
    /// where the agent has sign-ins aptitude does not look for (its own provider files,
    /// keychains).
    fn credentials_complete(&self) -> bool {
        false
    }

    /// The version aptitude is tested with: the one [`AgentCli::install_hint`] installs
    /// (`…@2.1.328`, `…==0.86.2`); `None` when the hint names none.
    fn pinned_version(&self) -> Option<&'static str> {
        pin_of(self.install_hint())
    }

    /// How the agent's model traffic goes through aptitude's gateway; `None` for an
    /// agent that talks only to its own backend (Cursor), whose runs go direct.
    fn model_route(&self) -> Option<ModelRoute> {
        None
    }

    /// Arguments that print the version (`--version`).
    fn version_args(&self) -> Vec<OsString> {
        vec!["--version".into()]
    }

    /// Variables the version probe gets before the user's own (`(name, value)` pairs):
    /// the quiet defaults of [`AgentCli::task`] that spare work printing a version does
    /// not need. The default: none.
    fn version_env(&self) -> Vec<(String, String)> {
        Vec::new()
    }

    /// The command for one run. `home` is a fresh private directory for this run (removed
    /// after it); config files the agent needs are written there.
    ///
    /// # Errors
    /// [`InvocationError::Unsupported`] when the task can not be expressed for this agent
    /// (e.g. a base URL without a model), [`InvocationError::Write`] when a config file can
    /// not be written.
    fn task(&self, task: &Task<'_>, home: &Path) -> Result<Invocation, InvocationError>;

    /// The command for a one-shot grading call, whose stdout is [`AgentCli::grade_reply`]'s
    /// input.
    ///
    /// # Errors
    /// As for [`AgentCli::task`]; agents that can not grade say so.
    fn grade(&self, task: &GradeTask<'_>, home: &Path) -> Result<Invocation, InvocationError>;

    /// The grading reply from the grading call's stdout lines. The default parses them as
    /// [`AgentCli::stream_format`] and takes the final answer; a run that did not complete,
    /// or a process that failed, is an error in the agent's words.
    ///
    /// # Errors
    /// [`AgentError::Grade`] saying why there is no reply.
    fn grade_reply(
        &self,
        stdout: &[String],
        output: &process::Output,
        timeout: Duration,
    ) -> Result<GradeReply, AgentError> {
        let mut parser = StreamParser::new(self.stream_format());
        for line in stdout {
            parser.push_line(line);
        }
        let transcript = parser.finish();
        let why = if !transcript.outcome.is_completed() {
            Some(transcript.outcome.describe())
        } else if let Some(call) = transcript.tool_calls.first() {
            // Tools-less, or no grade: a reply after a tool call may rest on what it saw.
            Some(format!(
                "it called a tool (`{}`), and a grading call must be tools-less",
                call.name
            ))
        } else if !output.success() {
            Some(format!("the grader {}", output.describe(timeout)))
        } else {
            None
        };
        match (why, transcript.final_text) {
            (None, Some(text)) => Ok(GradeReply {
                text,
                usage: transcript.usage,
            }),
            (why, _) => {
                let stderr = output.stderr.trim();
                Err(AgentError::Grade(format!(
                    "the {} grader gave no answer: {}{}",
                    self.kind(),
                    why.unwrap_or_else(|| "its output has no final text".into()),
                    if stderr.is_empty() {
                        String::new()
                    } else {
                        format!("; stderr: {}", crate::shared::cut::chars(stderr, 2000).kept)
                    }
                )))
            }
        }
    }

    /// Completes the transcript after the process ended; the default keeps it as parsed.
    fn finish(&self, transcript: Transcript, _finished: &Finished<'_>) -> Transcript {
        transcript
    }

    /// [`AgentCli::finish`], and the lines `--record` keeps instead of stdout's: for an
    /// agent whose stdout is no transcript (Kiro prints text; its session store is the
    /// record). The default: `finish`, and stdout.
    fn finish_run(
        &self,
        transcript: Transcript,
        finished: &Finished<'_>,
    ) -> (Transcript, Option<Vec<String>>) {
        (self.finish(transcript, finished), None)
    }

    /// Where the transcript comes from, for the docs table: by default the stream format
    /// parsed from stdout (`` `claude-stream-json` ``).
    fn transcript_source(&self) -> String {
        format!("`{}`", self.stream_format().name())
    }
}

/// `{name: entry(server)}` for each of `servers`: the object every JSON MCP configuration
/// holds, each entry in the shape the agent's format gives it.
pub fn mcp_entries(
    servers: &McpServers,
    entry: impl Fn(&McpServer) -> serde_json::Value,
) -> serde_json::Map<String, serde_json::Value> {
    servers
        .iter()
        .map(|(name, server)| (name.clone(), entry(server)))
        .collect()
}

/// Names the MCP calls of a transcript read from a file (`aptitude analyze`) as a run of
/// the test would, from the test's `mcp_servers`: `<server>_<tool>` spellings
/// ([`executor::name_mcp_calls`]) and, in a Kiro session, a bare tool name when the test has
/// one server ([`kiro::single_server_mcp_calls`]).
pub fn name_recorded_mcp_calls(transcript: &mut Transcript, servers: &McpServers) {
    if matches!(
        transcript.format,
        Format::KiroConversation | Format::KiroSession | Format::KiroKas
    ) {
        kiro::single_server_mcp_calls(transcript, servers);
    }
    executor::name_mcp_calls(transcript, servers);
}

/// The agents that load Claude Code plugins (`plugins:`), comma-separated, for messages.
pub fn plugin_agents() -> String {
    AgentKind::ALL
        .into_iter()
        .filter(|&kind| registry::cli(kind, &registry::AgentOptions::default()).supports_plugins())
        .map(AgentKind::name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// One source of an agent's credentials.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Credential {
    /// A variable holding a key or token (`ANTHROPIC_API_KEY`).
    Env(&'static str),
    /// A login file the agent's own sign-in wrote.
    Login(Login),
}

impl Credential {
    /// The source as shown (`ANTHROPIC_API_KEY`, `~/.claude/.credentials.json`), by `env`
    /// (the process environment, or a test's).
    pub fn shown(&self, env: &impl Fn(&str) -> Option<std::ffi::OsString>) -> String {
        match self {
            Credential::Env(name) => (*name).to_owned(),
            Credential::Login(login) => {
                if env(login.dir_env).is_some_and(|d| !d.is_empty()) {
                    format!("${}/{}", login.dir_env, login.file)
                } else {
                    format!("~/{}/{}", login.home_dir, login.file)
                }
            }
        }
    }

    /// Whether it is present: a variable that is set and not empty, or a login file that
    /// exists.
    pub fn present(&self, env: &impl Fn(&str) -> Option<std::ffi::OsString>) -> bool {
        match self {
            Credential::Env(name) => env(name).is_some_and(|v| !v.is_empty()),
            Credential::Login(login) => login.path(env).is_some_and(|p| p.is_file()),
        }
    }
}

/// Why agent `kind` (its CLI `cli`) would start without a credential, or `None`: each of its
/// [`AgentCli::credentials`] is absent from `env` (aptitude's environment, with the tests'
/// `env:` for it) while the list is complete ([`AgentCli::credentials_complete`]). The
/// message names every variable and file, and how to set one.
pub fn missing_credential(
    kind: AgentKind,
    cli: &dyn AgentCli,
    env: &impl Fn(&str) -> Option<std::ffi::OsString>,
) -> Option<String> {
    let sources = cli.credentials();
    if !cli.credentials_complete() || sources.iter().any(|c| c.present(env)) {
        return None;
    }
    let vars: Vec<String> = sources
        .iter()
        .filter(|c| matches!(c, Credential::Env(_)))
        .map(|c| c.shown(env))
        .collect();
    let files: Vec<String> = sources
        .iter()
        .filter(|c| matches!(c, Credential::Login(_)))
        .map(|c| c.shown(env))
        .collect();
    let mut how = format!(
        "set {} in aptitude's environment (the shell, or a secret of the CI job) or in the test's `env:`",
        or_list(&vars)
    );
    if !files.is_empty() {
        how.push_str(&format!(
            ", or sign in with the agent itself so that {} exists",
            or_list(&files)
        ));
    }
    Some(format!(
        "agent `{kind}` has no credential, so it would wait for a sign-in until the test's timeout: {how}; `aptitude agents` shows what is found"
    ))
}

/// `a`, `a or b`, `a, b or c`.
fn or_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// A login file: `file` in the directory named by `$dir_env`, else in `~/<home_dir>`
/// (Claude Code: `$CLAUDE_CONFIG_DIR/.credentials.json`, else
/// `~/.claude/.credentials.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Login {
    /// The variable naming the agent's config directory (`CLAUDE_CONFIG_DIR`).
    pub dir_env: &'static str,
    /// The config directory under the home directory otherwise (`.claude`).
    pub home_dir: &'static str,
    /// The file (`.credentials.json`).
    pub file: &'static str,
}

impl Login {
    /// Where the user's login file is looked for, by `env` (the process environment, or a
    /// test's): `$dir_env/file`, else `$HOME/home_dir/file`.
    pub fn path(&self, env: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
        env(self.dir_env)
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(self.home_dir)))
            .map(|dir| dir.join(self.file))
    }
}

/// The version an install command installs: what follows `==` or the last `@` of its last
/// word, when that starts with a digit (`npm install -g @openai/codex@0.169.0` → `0.169.0`).
pub fn pin_of(install_hint: &'static str) -> Option<&'static str> {
    let last = install_hint.split_whitespace().last()?;
    let (_, version) = last.rsplit_once("==").or_else(|| last.rsplit_once('@'))?;
    version
        .starts_with(|c: char| c.is_ascii_digit())
        .then_some(version)
}

/// Copies the user's login file into a run's private home, when there is one, so that a
/// logged-in user's subscription keeps working; readable only by its owner (mode 0600).
pub fn copy_login(home: &Path, login: &Login) {
    if let Some(source) = login.path(|name| std::env::var_os(name))
        && source.is_file()
    {
        let target = home.join(login.file);
        if std::fs::copy(&source, &target).is_ok() {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600));
        }
    }
}

/// `OsString` arguments from string slices.
pub fn args<const N: usize>(items: [&str; N]) -> Vec<OsString> {
    items.into_iter().map(OsString::from).collect()
}
