//! The one executor for every agent CLI: binary lookup, a private home per run, spawning,
//! streaming stdout into the transcript parser, live tool-call events, timeouts and the
//! kill sweep. What differs between agents comes from their [`AgentCli`].

mod talk;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use super::process::{self, Spec};
use super::routing::{self, Routed};
use super::{
    Agent, AgentCli, AgentError, AgentInfo, AgentKind, ExecuteRequest, Execution, Finished,
    GradeReply, GradeTask, Invocation, InvocationError, Task,
};
use crate::gateway::Gateway;
use crate::sandbox::exec;
use crate::transcript::StreamParser;

/// How one agent is run, as resolved by the settings stage from flags, environment and
/// test files.
#[derive(Debug, Clone)]
pub struct AgentSettings {
    /// The binary (`--agent-bin NAME=PATH`, `APTITUDE_<NAME>_BIN`), or `None` to look the
    /// agent's program up on `PATH`.
    pub binary: Option<PathBuf>,
    /// Where the binary came from, for error messages (`--agent-bin codex=/x`).
    pub binary_source: Option<String>,
    /// An API-compatible endpoint (`--agent-base-url NAME=URL`).
    pub base_url: Option<String>,
    /// Variables for every run and grading call; a test's `env:` wins over them.
    pub env: Vec<(String, String)>,
    /// Time between SIGTERM and SIGKILL when a run is stopped.
    pub grace: Duration,
    /// Whether runs and grading calls are sandboxed (`--sandbox`; on by default).
    pub sandbox: crate::sandbox::Sandbox,
    /// The model gateway runs and grading calls go through ([`crate::gateway`]); `None`:
    /// the agent talks to its model directly, holding the real key.
    pub gateway: Option<Gateway>,
}

impl Default for AgentSettings {
    fn default() -> Self {
        AgentSettings {
            binary: None,
            binary_source: None,
            base_url: None,
            env: Vec::new(),
            grace: Duration::from_secs(5),
            sandbox: crate::sandbox::Sandbox::default(),
            gateway: None,
        }
    }
}

/// Why a run's command could not be prepared.
#[derive(Debug, thiserror::Error)]
enum PrepareError {
    /// The agent can not express the task (its message ends a sentence after its name).
    #[error(transparent)]
    Invocation(#[from] InvocationError),
    /// The run's gateway endpoint could not start.
    #[error(transparent)]
    Gateway(#[from] crate::gateway::GatewayError),
    /// The sandbox could not be set up: the command must not run.
    #[error(transparent)]
    Sandbox(#[from] crate::sandbox::SandboxError),
}

/// An agent CLI run through its [`AgentCli`] description.
#[derive(Debug, Clone)]
pub struct CliAgent {
    cli: Arc<dyn AgentCli>,
    settings: AgentSettings,
}

impl CliAgent {
    /// Whether the gateway records the exchange. Mocks and replayed servers are answered by
    /// aptitude through a relay; with the exchange recorded, the other stdio servers are
    /// tapped. Every stdio server runs under the watch's wrapper, so that one that fails to
    /// start or crashes is seen on every agent (not only where the agent reports it).
    fn records(&self) -> bool {
        self.settings.gateway.as_ref().is_some_and(|g| g.records())
    }

    /// An agent described by `cli`, run with `settings`.
    pub fn new(cli: Arc<dyn AgentCli>, settings: AgentSettings) -> Self {
        CliAgent { cli, settings }
    }

    /// Adds variables for every run and grading call (a test's `env:` still wins), e.g.
    /// `ANTHROPIC_BASE_URL` for a gateway.
    pub fn with_env(mut self, env: impl IntoIterator<Item = (String, String)>) -> Self {
        self.settings.env.extend(env);
        self
    }

    /// Sets the time between SIGTERM and SIGKILL when a run is stopped.
    pub fn with_grace(mut self, grace: Duration) -> Self {
        self.settings.grace = grace;
        self
    }

    /// The binary that will run.
    ///
    /// # Errors
    /// [`AgentError::Missing`] with where it was looked for and how to install it.
    pub fn binary(&self) -> Result<PathBuf, AgentError> {
        let kind = self.cli.kind();
        let (found, looked) = match &self.settings.binary {
            Some(b) => (
                Some(b.clone()),
                self.settings
                    .binary_source
                    .clone()
                    .unwrap_or_else(|| b.display().to_string()),
            ),
            None => (
                super::find_on_path(self.cli.program()),
                format!("`{}` on PATH", self.cli.program()),
            ),
        };
        match found {
            Some(b) if b.is_file() => Ok(b),
            _ => Err(AgentError::Missing {
                agent: kind,
                looked,
                hint: format!(
                    "install it with `{}`, or name the binary with --agent-bin {kind}=PATH or {}",
                    self.cli.install_hint(),
                    kind.bin_env()
                ),
            }),
        }
    }

    /// The environment an unsandboxed agent gets on top of aptitude's own: the
    /// invocation's defaults (a default the user already set in aptitude's environment,
    /// which the agent inherits, stays the user's), the settings' `env`, the test's `env:`, and the
    /// isolation variables last. Also what the gateway reads the run's endpoint and keys
    /// from.
    fn direct_env(
        &self,
        invocation: &Invocation,
        test_env: &std::collections::BTreeMap<String, String>,
    ) -> Vec<(String, String)> {
        let mut env: Vec<(String, String)> = invocation
            .defaults
            .iter()
            .filter(|(k, _)| std::env::var_os(k).is_none())
            .cloned()
            .collect();
        env.extend(self.settings.env.iter().cloned());
        env.extend(test_env.iter().map(|(k, v)| (k.clone(), v.clone())));
        env.extend(invocation.isolation.iter().cloned());
        env
    }

    /// The command of one run or grading call: sandboxed with the policy of `parts` when the
    /// sandbox is on (the environment is then the policy's whole environment), else with
    /// aptitude's environment plus [`CliAgent::direct_env`] — and, when the run goes through
    /// the gateway, its endpoint and placeholder keys in place of the real ones.
    ///
    /// # Errors
    /// [`crate::sandbox::SandboxError`] when the sandbox can not be set up: the command
    /// must not run.
    fn spec(
        &self,
        invocation: Invocation,
        parts: &super::fence::Parts<'_>,
        test_env: &std::collections::BTreeMap<String, String>,
        timeout: Duration,
    ) -> Result<Spec, crate::sandbox::SandboxError> {
        let policy = super::fence::policy(parts, &invocation, &self.settings.env, test_env);
        let fence = self.settings.sandbox.fence(policy.clone(), parts.sandbox)?;
        let env = match &fence {
            Some(_) => policy.env,
            None => {
                let mut env = self.direct_env(&invocation, test_env);
                if let Some((dir, cache)) = parts.shared_cache {
                    env.insert(0, (cache.var.to_owned(), dir.display().to_string()));
                }
                env.extend(parts.through.iter().cloned());
                env
            }
        };
        // What the run writes is counted against its disk limit: the sandbox's writable
        // directories and its /tmp, or (unsandboxed) its workspace and home.
        let limits = parts.limits.map(|limits| super::limits::Watched {
            limits,
            dirs: match &fence {
                Some(fence) => fence.written_dirs(),
                None => [parts.workspace, parts.home]
                    .into_iter()
                    .map(Path::to_owned)
                    .chain(parts.writable.iter().cloned())
                    .collect(),
            },
        });
        Ok(Spec {
            program: parts.binary.to_owned(),
            args: invocation.args,
            cwd: parts.workspace.to_owned(),
            env,
            timeout,
            grace: self.settings.grace,
            fence: fence.map(std::sync::Arc::new),
            limits,
        })
    }

    /// How the run was fenced in, and why the sandbox stopped it, if it did.
    fn sandbox_outcome(
        spec: &Spec,
        output: &process::Output,
    ) -> (Option<crate::sandbox::Record>, Option<String>) {
        let limits = spec.limits.as_ref().map(|w| {
            format!(
                "{} ({})",
                w.limits.phrase(),
                output.limits_by.unwrap_or(super::limits::BY_WATCH)
            )
        });
        let Some(fence) = &spec.fence else {
            return (
                Some(crate::sandbox::Record {
                    limits,
                    ..crate::sandbox::Record::off()
                }),
                None,
            );
        };
        let record = crate::sandbox::Record {
            limits,
            ..fence.record(output.proof.as_ref())
        };
        let failure = match &output.proof {
            None => Some(format!(
                "the sandbox did not start the agent: {}",
                crate::shared::cut::chars(output.stderr.trim(), 2000).kept
            )),
            Some(proof) if !proof.held() => Some(format!(
                "the sandbox did not hold, so the agent was not started: {}",
                proof.breaches().join("; ")
            )),
            Some(_) => None,
        };
        (Some(record), failure)
    }

    /// The agent's shared cache, filled once per installed binary (on a blocking thread:
    /// the first fill unpacks hundreds of MB).
    async fn filled_cache(&self, binary: &Path) -> Option<PathBuf> {
        let cache = self.cli.shared_cache()?;
        let binary = binary.to_owned();
        tokio::task::spawn_blocking(move || super::cache::filled(&binary, &cache))
            .await
            .ok()
            .flatten()
    }

    /// A test's MCP servers or plugins on an agent that can not take them.
    fn check_supported(&self, req: &ExecuteRequest<'_>) -> Result<(), AgentError> {
        if !(self.cli.supports_mcp() || req.mcp_servers.is_empty() && req.mcp_mocks.is_empty()) {
            return Err(AgentError::Unsupported {
                agent: self.kind(),
                message: format!(
                    "can not be given MCP servers (no MCP client aptitude can configure): this test's `mcp_servers` ({}) need another agent",
                    req.mcp_servers
                        .keys()
                        .chain(req.mcp_mocks.keys())
                        .map(String::as_str)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
        }
        if !req.plugins.is_empty() && !self.cli.supports_plugins() {
            return Err(AgentError::Unsupported {
                agent: self.kind(),
                message: format!(
                    "can not load Claude Code plugins: this test's `plugins` ({}) need an agent that loads them ({})",
                    req.plugins
                        .iter()
                        .map(|p| p.file_name().map_or_else(
                            || p.display().to_string(),
                            |n| n.to_string_lossy().into_owned()
                        ))
                        .collect::<Vec<_>>()
                        .join(", "),
                    super::plugin_agents()
                ),
            });
        }
        Ok(())
    }

    /// The spec of a run whose command `invocation_for` makes for a base URL, fenced in as
    /// `parts` says: pointed at the gateway when the run can go through it
    /// ([`routing::plan`]), with the run's endpoint and placeholder keys (the real keys never
    /// reach the agent's environment); else as the agent would run directly.
    async fn prepare(
        &self,
        parts: super::fence::Parts<'_>,
        invocation_for: impl Fn(Option<&str>, &Path) -> Result<Invocation, InvocationError>,
        (test_env, timeout): (&std::collections::BTreeMap<String, String>, Duration),
        tape: routing::Tape,
    ) -> Result<(Spec, Option<Routed>), PrepareError> {
        let (home, base_url) = (parts.home, parts.base_url);
        let invocation = invocation_for(base_url, home)?;
        let route = self.cli.model_route();
        let (Some(gateway), Some(route)) = (self.settings.gateway.as_ref(), route) else {
            return match tape.replay {
                None => Ok((self.spec(invocation, &parts, test_env, timeout)?, None)),
                Some(_) => Err(InvocationError::Unsupported(match route {
                    None => "can not be replayed: it talks only to its own backend, never through aptitude's model gateway",
                    Some(_) => "can not be replayed without aptitude's model gateway (--no-gateway)",
                })
                .into()),
            };
        };
        let direct_env = self.direct_env(&invocation, test_env);
        let plan = routing::plan(&route, &direct_env, base_url, |var| std::env::var(var).ok());
        let plan = match (&tape.replay, plan) {
            (Some(replaying), plan) => routing::replay_plan(plan, &replaying.cassette),
            (None, Some(plan)) => plan,
            (None, None) => {
                return Ok((self.spec(invocation, &parts, test_env, timeout)?, None));
            }
        };
        // A login the agent copied into its home: the gateway stands in for its token.
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let login = route
            .login
            .and_then(|file| routing::login_token(home, &file, now_ms).map(|t| (file, t)));
        let routed = Routed::start(
            gateway,
            (&plan, route.protocols, parts.network),
            login.as_ref().map(|(_, t)| t.clone()),
            tape,
        )
        .await?;
        let url = routed.base_url();
        let invocation = invocation_for(Some(&url), home)?;
        if let (Some((file, _)), Some(placeholder)) = (login, routed.login_placeholder()) {
            routing::swap_login(home, &file, placeholder).map_err(|source| {
                InvocationError::Login {
                    path: home.join(file.file),
                    source,
                }
            })?;
        }
        // The agent's key and endpoint variables are the gateway's, never the real ones.
        let hidden: Vec<&str> = route
            .key_envs
            .iter()
            .copied()
            .chain(route.base_url_env)
            .collect();
        let through = routed.env(&route, &plan);
        let parts = super::fence::Parts {
            base_url: Some(&url),
            hidden: &hidden,
            through: &through,
            ..parts
        };
        let spec = self.spec(invocation, &parts, test_env, timeout)?;
        Ok((spec, Some(routed)))
    }

    /// The run's [`Execution`] once its process ended: its transcript finished from the
    /// stream and the files the agent left in `home` and `workspace`, `decided` when it
    /// was stopped at its first call, and checked against what crossed the gateway
    /// (`wire`).
    fn execution(
        &self,
        streamed: Streamed,
        (spec, home, workspace, servers): (&Spec, &Path, &Path, &crate::spec::McpServers),
        mcp: super::mcp::McpOutcome,
        (model_traffic, wire): (
            Option<crate::gateway::Traffic>,
            Option<crate::gateway::wire::Wire>,
        ),
        decided: bool,
        (hooks, setting): (
            &[crate::sandbox::exec::hooks::Hook],
            crate::spec::HooksSetting,
        ),
    ) -> Execution {
        let Streamed {
            output,
            parser,
            raw,
            raw_cut,
            mut dialog,
            ..
        } = streamed;
        // What the agent asked rests on what crossed the gateway.
        if let Some(d) = dialog.as_mut() {
            crate::gateway::witness::dialog::check(wire.as_ref(), d);
        }
        let (mut transcript, record) = self.cli.finish_run(
            parser.finish(),
            &Finished {
                home,
                workspace,
                stdout: &raw,
                process: &output,
                mcp_servers: servers,
            },
        );
        let raw = record.unwrap_or(raw);
        transcript.skills_shown = wire.as_ref().and_then(|w| w.skills_shown.clone());
        if let Some(w) = wire
            .as_ref()
            .filter(|w| w.requests > 0 && !servers.is_empty())
        {
            let names: Vec<&str> = servers.keys().map(String::as_str).collect();
            transcript.mcp_params = Some(crate::gateway::wire::shown::mcp_params(
                &w.tools_shown,
                &names,
            ));
        }
        if decided {
            transcript.outcome = crate::transcript::Outcome::Decided;
        }
        name_mcp_calls(&mut transcript, servers);
        note_cut_output(&mut transcript, output.cut_lines, raw_cut);
        let (sandbox, sandbox_failure) = Self::sandbox_outcome(spec, &output);
        // The kernel's exit codes first (an exit code an agent read from a command's output
        // text is noted and replaced), then the stream with them against the wire.
        let (execs, hooks_ran) = spec.fence.as_ref().map_or((None, Vec::new()), |f| {
            let record = f.exec_record();
            let (execs, ran) = exec::check::check(&record, &mut transcript, hooks);
            (Some(execs), ran)
        });
        let sandbox_failure = sandbox_failure.or_else(|| exec::hooks::breach(setting, &hooks_ran));
        let witness = witness_of(wire.as_ref(), &mut transcript);
        Execution {
            witness: Some(witness),
            execs,
            hooks_ran,
            transcript,
            process: output,
            raw,
            sandbox,
            sandbox_failure,
            mcp_failures: mcp.failures,
            mcp_calls: mcp.calls,
            mcp_calls_dropped: mcp.dropped_calls,
            mcp_divergences: mcp.divergences,
            model_traffic,
            dialog,
        }
    }

    /// How a run with a `user:` carries the agent's questions: its stdio channel
    /// ([`AgentCli::ask_channel`]), or (`true`) plain text answered by follow-up turns
    /// ([`AgentCli::follow_up`]); neither for a run without a user.
    fn channels(
        &self,
        req: &ExecuteRequest<'_>,
        home: &Path,
    ) -> (Option<Box<dyn super::conversation::AskChannel>>, bool) {
        let Some(_) = req.user else {
            return (None, false);
        };
        let probe = Task {
            prompt: req.prompt,
            workspace: req.workspace,
            model: req.model,
            max_turns: req.max_turns,
            base_url: None,
            mcp_servers: req.mcp_servers,
            plugins: req.plugins,
            hooks: req.hooks,
            converse: false,
        };
        if let Some(channel) = self.cli.ask_channel(&probe) {
            return (Some(channel), false);
        }
        (None, self.cli.follow_up(&probe, "", home).is_some())
    }

    /// The conversation while the run streams ([`Talk`]): over the stdio channel, or the
    /// record of an agent with no channel at all; `None` without a user or when the
    /// questions come in plain text (answered after the stream).
    fn talk(
        &self,
        req: &ExecuteRequest<'_>,
        channel: Option<Box<dyn super::conversation::AskChannel>>,
        in_text: bool,
    ) -> Option<Talk> {
        let user = req.user.filter(|_| !in_text)?.clone();
        Some(match channel {
            Some(channel) => {
                let record = channel.channel();
                Ok((channel, talk::conversation_of(req, user, record)))
            }
            None => Err(super::conversation::Conversation::no_channel(
                self.cli.no_ask_channel(),
            )),
        })
    }

    fn start_error(&self, binary: &Path, message: String) -> AgentError {
        AgentError::Start {
            binary: binary.to_owned(),
            message,
        }
    }
}

/// Gives the calls of the run's MCP tools their canonical `mcp__<server>__<tool>` name
/// where the agent's own spelling did not: agents join the server and the tool with `_`
/// (opencode 1.18: `everything_echo`), `-` (Copilot 1.0: `everything-echo`) or `__`, some
/// with an `mcp_` prefix (Gemini CLI, Qwen Code), and only the test's server names tell
/// where the server ends. A call already canonical as an MCP tool is left alone, and so is
/// a built-in tool: one the transcript's parser already gave another canonical name
/// (Gemini's `run_shell_command` is `Bash`) or whose name the tool vocabulary knows
/// (Claude's `Bash`). Otherwise an MCP server named `run` would turn `run_shell_command`
/// into `mcp__run__shell_command`, drop it from the shell commands and let `not_ran` pass.
pub fn name_mcp_calls(transcript: &mut crate::transcript::Transcript, servers: &super::McpServers) {
    if servers.is_empty() {
        return;
    }
    // Longest server names first, so that `docs-v2` wins over `docs`.
    let mut names: Vec<&str> = servers.keys().map(String::as_str).collect();
    names.sort_by_key(|n| std::cmp::Reverse(n.len()));
    for call in &mut transcript.tool_calls {
        if call.canonical.starts_with("mcp__")
            || call.canonical != call.name
            || crate::spec::tools::is_known_tool(&call.name)
        {
            continue;
        }
        let raw = call.name.as_str();
        let bare = raw
            .strip_prefix("mcp__")
            .or_else(|| raw.strip_prefix("mcp_"))
            .unwrap_or(raw);
        let found = names.iter().find_map(|server| {
            let rest = bare.strip_prefix(server)?;
            let tool = rest
                .strip_prefix("__")
                .or_else(|| rest.strip_prefix('_'))
                .or_else(|| rest.strip_prefix('-'))?;
            (!tool.is_empty()).then(|| format!("mcp__{server}__{tool}"))
        });
        if let Some(canonical) = found {
            call.canonical = canonical;
        }
    }
}

/// The transcript checked against the run's wire; unwitnessed when the run went direct.
/// Calls the agent's own guard refused before a process started, which its stream does not
/// show, are first taken from the wire as blocked, and noted
/// ([`crate::gateway::witness::refused`]).
fn witness_of(
    wire: Option<&crate::gateway::wire::Wire>,
    transcript: &mut crate::transcript::Transcript,
) -> crate::gateway::witness::Witness {
    match wire {
        Some(wire) => {
            let notes = crate::gateway::witness::refused::recover(wire, transcript);
            let mut witness = crate::gateway::witness::check(wire, transcript);
            witness.notes.extend(notes);
            witness
        }
        None => crate::gateway::witness::Witness::unwitnessed(
            "the run went direct, not through aptitude's model gateway: its transcript is the agent's own claim",
        ),
    }
}

/// An agent's run as its stdout came: how it ended, the transcript parsed so far, the
/// lines kept for `--record` and whether they were cut.
struct Streamed {
    output: process::Output,
    parser: StreamParser,
    raw: Vec<String>,
    raw_cut: bool,
    dialog: Option<crate::transcript::dialog::Dialog>,
    /// The simulated user's replies, for the run's cassette.
    user_replies: Vec<crate::gateway::cassette::UserReply>,
}

/// A run's conversation while its process streams: the agent's stdio channel and the user
/// talking over it, or the record of an agent without one (a plain-text channel talks
/// after the stream, [`CliAgent::follow_ups`]; it streams as a run without a user).
type Talk = Result<
    (
        Box<dyn super::conversation::AskChannel>,
        super::conversation::Conversation,
    ),
    crate::transcript::dialog::Dialog,
>;

/// Who answers a stdio channel's questions while the run streams: the agent whose
/// grading call is the simulated user, with the test's model.
type Asker<'a> = (&'a CliAgent, Option<&'a str>);

/// What a run's recorded exchanges have in place of its own paths: the workspace copy, the
/// private home and the agent's installation (under both of its names).
fn normalizer(
    workspace: &Path,
    home: &Path,
    binary: &Path,
) -> crate::gateway::normalize::Normalizer {
    crate::gateway::normalize::Normalizer::new(Some(workspace), Some(home))
        .with_installation(crate::sandbox::install::package_root(binary).as_deref())
        .with_installation(crate::sandbox::install::package_root_as_named(binary).as_deref())
}

/// [`stream`] of a run, stopped at its first tool call when `req.stop` says so
/// (`stop: first_call`) through `decide`, a token of its own (so that a stop on purpose is
/// told from an interruption; the gateway may cancel it too): the stream, and whether it
/// was so stopped (its ending then [`process::Ending::Decided`]).
///
/// # Errors
/// When the program can not be started.
async fn stream_until(
    spec: &Spec,
    cancel: &CancellationToken,
    agent: &CliAgent,
    req: &ExecuteRequest<'_>,
    (decide, talk): (Option<CancellationToken>, Option<Talk>),
) -> std::io::Result<(Streamed, bool)> {
    let mut streamed = stream(
        spec,
        decide.as_ref().unwrap_or(cancel),
        agent.cli.stream_format(),
        (req.on_tool_call, decide.as_ref()),
        talk.map(|t| (t, req.prompt, (agent, req.model))),
    )
    .await?;
    let decided = decide.is_some_and(|d| d.is_cancelled())
        && !cancel.is_cancelled()
        && streamed.output.ending == process::Ending::Cancelled;
    if decided {
        streamed.output.ending = process::Ending::Decided;
    }
    Ok((streamed, decided))
}

/// Runs `spec`, parsing its stdout as `format` line by line as it comes (each new tool call
/// told to `hook`) and keeping at most [`MAX_RAW_BYTES`] of it; `decide`, when given, is
/// cancelled at the first tool call (the run's `stop: first_call`). With a stdio channel
/// (`talk`), the agent's questions are answered meanwhile ([`CliAgent::answer_asks`]:
/// the simulated user's model call is awaited while stdout is still read, within the
/// run's timeout, and dropped with the run).
///
/// # Errors
/// When the program can not be started.
async fn stream(
    spec: &Spec,
    cancel: &CancellationToken,
    format: crate::transcript::Format,
    (hook, decide): (Option<super::ToolCallHook<'_>>, Option<&CancellationToken>),
    talk: Option<(Talk, &str, Asker<'_>)>,
) -> std::io::Result<Streamed> {
    let started = std::time::Instant::now();
    let mut parser = StreamParser::new(format);
    let mut raw = Vec::new();
    let (mut raw_bytes, mut raw_cut) = (0usize, false);
    let mut reported = 0;
    let stdin = std::sync::Mutex::new(None);
    let (asks, asked) = tokio::sync::mpsc::unbounded_channel();
    let (mut channel, mut conversation, mut dialog, mut input, mut asker) =
        (None, None, None, None, None);
    match talk {
        None => {}
        Some((Err(no_channel), _, _)) => dialog = Some(no_channel),
        Some((Ok((mut live, talk)), prompt, by)) => {
            let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
            let _ = tx.send(live.opening(prompt));
            (channel, conversation, input, asker) = (Some(live), Some(talk), Some(rx), Some(by));
            stdin.lock().map(|mut s| *s = Some(tx)).ok();
        }
    }
    // Both futures borrow the run's state: they are dropped at the end of this block.
    let output = {
        let run = process::run_fed(spec, cancel, input, |line| {
            raw_bytes = raw_bytes.saturating_add(line.len() + 1);
            if raw_bytes <= MAX_RAW_BYTES {
                raw.push(line.to_owned());
            } else {
                raw_cut = true;
            }
            parser.push_line(line);
            if let Some(channel) = channel.as_mut() {
                let feed = channel.line(line);
                if let Some(bytes) = feed.write {
                    talk::write_stdin(&stdin, bytes);
                }
                if let Some(ask) = feed.ask {
                    let _ = asks.send(ask);
                }
                if feed.close {
                    talk::close_stdin(&stdin);
                }
            }
            if let Some(hook) = hook {
                for call in &parser.calls()[reported..] {
                    hook(call);
                }
                reported = parser.calls().len();
            }
            if let Some(decide) = decide
                && !parser.calls().is_empty()
            {
                decide.cancel();
            }
        });
        let answering = async {
            if let (Some(talk), Some((agent, model))) = (conversation.as_mut(), asker) {
                let deadline = started + spec.timeout;
                agent
                    .answer_asks(talk, asked, &stdin, (model, deadline, cancel))
                    .await;
            }
        };
        tokio::pin!(run, answering);
        // The run decides: when it ends, a model call still answering is dropped with it.
        tokio::select! {
            output = &mut run => output,
            () = &mut answering => run.await,
        }
    }?;
    let mut user_replies = Vec::new();
    if let Some(conversation) = conversation {
        let (record, replies) = conversation.finish_with_replies();
        (dialog, user_replies) = (Some(record), replies);
    }
    Ok(Streamed {
        output,
        parser,
        raw,
        raw_cut,
        dialog,
        user_replies,
    })
}

/// The most of an agent's stdout kept for `--record`, in bytes; the parser still reads
/// all of it (up to [`process::MAX_STDOUT_BYTES`]).
pub const MAX_RAW_BYTES: usize = 64 * 1024 * 1024;

/// Says in the transcript what of the agent's output was cut: lines over
/// [`process::MAX_LINE_BYTES`] (which may have held tool calls: absence assertions can not
/// pass on it), and a stream too long to be recorded whole.
fn note_cut_output(transcript: &mut crate::transcript::Transcript, cut_lines: u32, raw_cut: bool) {
    let mut log = crate::transcript::WarningLog::default();
    if cut_lines > 0 {
        log.warn_lost(
            0,
            format!(
                "{cut_lines} line(s) of the agent's output were over {} MiB and were cut there",
                process::MAX_LINE_BYTES / (1024 * 1024)
            ),
        );
    }
    if raw_cut {
        log.warn(
            0,
            format!(
                "the agent's output is over {} MiB: --record keeps its first {} MiB",
                MAX_RAW_BYTES / (1024 * 1024),
                MAX_RAW_BYTES / (1024 * 1024)
            ),
        );
    }
    if log.total > 0 {
        transcript.absorb_warnings(log, None);
    }
}

/// A fresh private home for one run or grading call, removed when dropped.
fn private_home(agent: AgentKind) -> Result<tempfile::TempDir, super::probe::NoHome> {
    tempfile::Builder::new()
        .prefix(&format!("aptitude-{agent}-home-"))
        .tempdir()
        .map_err(|source| super::probe::NoHome { agent, source })
}

#[async_trait]
impl Agent for CliAgent {
    fn kind(&self) -> AgentKind {
        self.cli.kind()
    }

    fn base_url(&self) -> Option<&str> {
        self.settings.base_url.as_deref()
    }

    async fn check(&self) -> Result<AgentInfo, AgentError> {
        let binary = self.binary()?;
        let env = self
            .cli
            .version_env()
            .into_iter()
            .chain(self.settings.env.iter().cloned())
            .collect();
        let home = || private_home(self.kind());
        let version = super::probe::version(&binary, self.cli.version_args(), env, home)
            .await
            .map_err(|e| self.start_error(&binary, e.to_string()))?;
        Ok(AgentInfo {
            kind: self.kind(),
            binary,
            version,
        })
    }

    async fn execute(&self, req: ExecuteRequest<'_>) -> Result<Execution, AgentError> {
        let binary = self.binary()?;
        self.check_supported(&req)?;
        // The hooks the CLI can load are those configured when it starts: one written
        // during the run is not named, whatever it runs.
        let hooks = crate::sandbox::exec::hooks::configured(req.workspace);
        let home =
            private_home(self.kind()).map_err(|e| self.start_error(&binary, e.to_string()))?;
        let paths = normalizer(req.workspace, home.path(), &binary);
        let helper = super::mcp::helper_for(self.settings.sandbox.is_on(req.sandbox))
            .map_err(AgentError::Sandbox)?;
        let mcp = super::mcp::McpRun::start(super::mcp::Setup {
            servers: req.mcp_servers,
            mocks: req.mcp_mocks,
            replay: req.replay,
            record: self.records(),
            helper: &helper,
            paths: &paths,
        })
        .await
        .map_err(|e| self.start_error(&binary, e.to_string()))?;
        let (channel, in_text) = self.channels(&req, home.path());
        let task = Task {
            converse: channel.is_some(),
            prompt: req.prompt,
            workspace: req.workspace,
            model: req.model,
            max_turns: req.max_turns,
            base_url: req.base_url.or(self.settings.base_url.as_deref()),
            mcp_servers: &mcp.wrapped,
            plugins: req.plugins,
            hooks: req.hooks,
        };
        let watch_dir = mcp.record_dirs();
        let cache = self.filled_cache(&binary).await;
        let parts = super::fence::Parts {
            cli: self.cli.as_ref(),
            binary: &binary,
            home: home.path(),
            workspace: req.workspace,
            writable: &watch_dir,
            read_only: req.plugins,
            base_url: task.base_url,
            mcp_servers: &mcp.servers,
            protect: req.protect,
            sandbox: req.sandbox,
            network: req.network,
            shared_cache: cache.as_deref().zip(self.cli.shared_cache()),
            hidden: &[],
            through: &[],
            limits: Some(req.limits),
            exec_record: true,
        };
        let (spec, mut routed) = self
            .prepare(
                parts,
                |base_url, home| self.cli.task(&Task { base_url, ..task }, home),
                (req.env, req.timeout),
                routing::Tape {
                    paths: paths.clone(),
                    replay: req.replay.cloned(),
                    stop: req.stop,
                    watch_skills: req.watch_skills.to_vec(),
                },
            )
            .await
            .map_err(|e| match e {
                PrepareError::Sandbox(e) => AgentError::Sandbox(e),
                e => self.start_error(&binary, e.to_string()),
            })?;
        // A run the gateway refused for the budget is stopped shortly after.
        let cancel = match routed.as_mut() {
            Some(routed) => routed.run_token(req.cancel),
            None => req.cancel.clone(),
        };
        // `stop: first_call`: stopped when its stream shows the first call, or when the
        // gateway held the request the agent made after it.
        let decide =
            (req.stop == crate::spec::routing::Stop::FirstCall).then(|| match routed.as_mut() {
                Some(routed) => routed.decide_token(&cancel),
                None => cancel.child_token(),
            });
        let talk = self.talk(&req, channel, in_text);
        let (mut streamed, decided) = stream_until(&spec, &cancel, self, &req, (decide, talk))
            .await
            .map_err(|e| self.start_error(&binary, e.to_string()))?;
        if let Some(user) = req.user.filter(|_| in_text) {
            let base_url = routed.as_ref().map(Routed::base_url);
            let task = Task {
                base_url: base_url.as_deref().or(task.base_url),
                ..task
            };
            let talk = (&spec, &cancel, user);
            streamed.dialog = Some(
                self.follow_ups(&req, &mut streamed, talk, (&task, home.path()))
                    .await,
            );
        }
        let servers = mcp.servers.clone();
        let mut mcp = mcp.finish(&paths);
        let (model_traffic, wire) = match routed {
            Some(routed) => {
                let user = std::mem::take(&mut streamed.user_replies);
                let (traffic, wire) = routed.finish(std::mem::take(&mut mcp.recorded), user).await;
                (Some(traffic), Some(wire))
            }
            None => (None, None),
        };
        let finished = (&spec, home.path(), req.workspace, &servers);
        Ok(self.execution(
            streamed,
            finished,
            mcp,
            (model_traffic, wire),
            decided,
            (&hooks, req.hooks),
        ))
    }

    async fn grade(
        &self,
        prompt: &str,
        model: Option<&str>,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<GradeReply, AgentError> {
        Ok(self.grade_metered(prompt, model, timeout, cancel).await?.0)
    }
}

impl CliAgent {
    /// [`Agent::grade`], and what the call's gateway endpoint metered (`None` when it
    /// went direct).
    ///
    /// # Errors
    /// As [`Agent::grade`].
    async fn grade_metered(
        &self,
        prompt: &str,
        model: Option<&str>,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<(GradeReply, Option<crate::gateway::Traffic>), AgentError> {
        let binary = self.binary()?;
        let home = private_home(self.kind()).map_err(|e| AgentError::Grade(e.to_string()))?;
        let scratch = tempfile::tempdir()
            .map_err(|e| AgentError::Grade(format!("can not create a temp dir: {e}")))?;
        let task = GradeTask {
            prompt,
            workspace: scratch.path(),
            model,
            base_url: self.settings.base_url.as_deref(),
        };
        let cache = self.filled_cache(&binary).await;
        // The answer graded is agent-written: the grader runs fenced in like the agent.
        let parts = super::fence::Parts {
            cli: self.cli.as_ref(),
            binary: &binary,
            home: home.path(),
            workspace: scratch.path(),
            writable: &[],
            read_only: &[],
            base_url: task.base_url,
            mcp_servers: &Default::default(),
            protect: &[],
            sandbox: None,
            network: &[],
            shared_cache: cache.as_deref().zip(self.cli.shared_cache()),
            hidden: &[],
            through: &[],
            // The grader reads agent-written text: it runs under the default limits.
            limits: Some(crate::spec::limits::Limits::default().resolved()),
            // Tools-less: nothing reads what the grader ran.
            exec_record: false,
        };
        let (spec, routed) = self
            .prepare(
                parts,
                |base_url, home| self.cli.grade(&GradeTask { base_url, ..task }, home),
                (&Default::default(), timeout),
                routing::Tape::default(),
            )
            .await
            .map_err(|e| match e {
                PrepareError::Invocation(e) => AgentError::Unsupported {
                    agent: self.kind(),
                    message: e.to_string(),
                },
                PrepareError::Gateway(e) => AgentError::Grade(e.to_string()),
                PrepareError::Sandbox(e) => AgentError::Sandbox(e),
            })?;
        let mut stdout = Vec::new();
        let out = process::run(&spec, cancel, |line| stdout.push(line.to_owned()))
            .await
            .map_err(|e| AgentError::Grade(format!("can not start the grader: {e}")))?;
        // The grading call's traffic is in the gateway's ledger (the budget counts it).
        let (traffic, wire) = match routed {
            Some(routed) => {
                let (traffic, wire) = routed.finish(Default::default(), Vec::new()).await;
                (Some(traffic), Some(wire))
            }
            None => (None, None),
        };
        if let (_, Some(failure)) = Self::sandbox_outcome(&spec, &out) {
            return Err(AgentError::Grade(format!("the grader: {failure}")));
        }
        // Fail closed: a grading call is tools-less, but a CLI may still offer a tool it
        // can not turn off (Codex: what a model's catalog entry adds). A reply after a
        // tool call may rest on what the tool saw, so it is no grade.
        if let Some(call) = wire.as_ref().and_then(|w| w.calls.first()) {
            return Err(AgentError::Grade(format!(
                "the grader's model called a tool (`{}`): a grading call must be tools-less, so its reply is not used",
                crate::shared::cut::chars(&call.name, 80).kept
            )));
        }
        Ok((self.cli.grade_reply(&stdout, &out, timeout)?, traffic))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::McpServer;
    use crate::transcript::{Format, StreamParser};

    #[test]
    fn mcp_calls_get_their_canonical_name_from_the_server_names() {
        let mut parser = StreamParser::new(Format::OpencodeJson);
        parser.push_line("");
        let mut t = parser.finish();
        let stdio = || McpServer::Stdio {
            command: "node".into(),
            args: Vec::new(),
            env: Default::default(),
        };
        let servers: super::super::McpServers = [
            ("docs".to_owned(), stdio()),
            ("docs-v2".to_owned(), stdio()),
        ]
        .into();
        for raw in [
            "docs_search",
            "docs-v2_search",
            "mcp_docs_search",
            "docs-search",
            "bash",
            "mcp__docs__search",
        ] {
            let mut call: crate::transcript::ToolCall = serde_json::from_value(serde_json::json!({
                "id": raw, "name": raw, "canonical": raw, "input": {}, "output": null,
                "is_error": false, "exit_code": null, "agent": "main"
            }))
            .unwrap();
            if raw == "bash" {
                call.canonical = "Bash".into();
            }
            t.tool_calls.push(call);
        }
        name_mcp_calls(&mut t, &servers);
        let names: Vec<&str> = t.tool_calls.iter().map(|c| c.canonical.as_str()).collect();
        assert_eq!(
            names,
            [
                "mcp__docs__search",
                "mcp__docs-v2__search",
                "mcp__docs__search",
                "mcp__docs__search",
                "Bash",
                "mcp__docs__search"
            ]
        );
    }
    #[test]
    fn a_server_named_like_a_built_in_tool_prefix_does_not_hide_built_in_calls() {
        let mut parser = StreamParser::new(Format::GeminiStreamJson);
        for (id, name, params) in [
            ("g1", "run_shell_command", r#"{"command":"rm -rf build"}"#),
            ("g2", "read_file", r#"{"absolute_path":"/w/a.txt"}"#),
            ("g3", "read_many_files", r#"{"paths":["a.txt"]}"#),
            ("g4", "run_deploy", r#"{}"#),
            ("g5", "read_page", r#"{}"#),
        ] {
            parser.push_line(&format!(
                r#"{{"type":"tool_use","tool_name":"{name}","tool_id":"{id}","parameters":{params}}}"#
            ));
            parser.push_line(&format!(
                r#"{{"type":"tool_result","tool_id":"{id}","status":"success","output":"ok"}}"#
            ));
        }
        let mut t = parser.finish();
        let stdio = || McpServer::Stdio {
            command: "node".into(),
            args: Vec::new(),
            env: Default::default(),
        };
        let servers: super::super::McpServers =
            [("run".to_owned(), stdio()), ("read".to_owned(), stdio())].into();
        name_mcp_calls(&mut t, &servers);
        let names: Vec<&str> = t.tool_calls.iter().map(|c| c.canonical.as_str()).collect();
        assert_eq!(
            names,
            [
                "Bash",
                "Read",
                "Read",
                "mcp__run__deploy",
                "mcp__read__page"
            ]
        );
        let shells: Vec<String> = t
            .tool_calls
            .iter()
            .filter(|c| c.canonical == "Bash")
            .filter_map(|c| c.command())
            .collect();
        assert_eq!(
            shells,
            ["rm -rf build"],
            "the shell command stays a shell command"
        );
    }
}
