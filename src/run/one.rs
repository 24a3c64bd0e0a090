//! One run of one test, in named steps:
//!
//! 1. [`OneRun::prepare`]: the workspace copy, the variant applied, the fingerprint;
//! 2. [`OneRun::setup`]: the test's `setup` commands;
//! 3. [`OneRun::execute`]: MCP servers and plugins made ready, the agent run;
//! 4. grading the answer (unless the run failed), then [`OneRun::post_run`]: the file
//!    snapshot, `verify` commands and assertions under a deadline;
//! 5. [`OneRun::record`]: `--record`'s transcript beside the test file;
//! 6. [`OneRun::finish`]: status, error kind and duration.
//!
//! A step that fails ends the run there with a [`Failure`]: the test is `error`, never
//! `passed`, and its result keeps what earlier steps found.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::classify::{assertion_error_kind, run_error};
use super::grade::{grade_unless_failed, total_usage};
use super::post::{PostRun, current, post_run};
use super::record::{FileIdentity, Written, file_identity, record_atomically};
use super::shell::{Shell, run_setup};
use super::{INTERRUPTED_POST_RUN, TestContext, not_run};
use crate::agent::{ExecuteRequest, Execution};
use crate::spec::TestSpec;
use crate::spec::diagnostic::display_path;
use crate::verdict::results::{ErrorKind, TestResult, TestStatus};
use crate::workspace::Workspace;

/// Why a run ended before its assertions could decide it: whose fault, and the message.
type Failure = (ErrorKind, String);

/// One run of one test as it goes through its steps.
struct OneRun<'a> {
    spec: &'a TestSpec,
    ctx: &'a TestContext<'a>,
    started: Instant,
    /// The test's timeout (or the run's default).
    timeout: Duration,
    /// The result so far.
    result: TestResult,
    /// `--record`'s target, and its identity when the run started (to tell whether
    /// another run replaced it meanwhile).
    record_to: Option<(std::path::PathBuf, Option<FileIdentity>)>,
}

/// [`super::run_test`], and the transcript it recorded, if any.
pub(super) async fn run_one(
    spec: &TestSpec,
    ctx: &TestContext<'_>,
) -> (TestResult, Option<Written>) {
    let mut run = OneRun::new(spec, ctx);
    let workspace = match run.prepare().await {
        Ok(workspace) => Arc::new(workspace),
        Err(failure) => return (run.finish(Some(failure)), None),
    };
    if let Err(failure) = run.setup(&workspace).await {
        return (run.finish(Some(failure)), None);
    }
    let execution = match run.execute(&workspace).await {
        Ok(execution) => execution,
        Err(failure) => return (run.finish(Some(failure)), None),
    };
    let error = run_error(&execution, run.timeout);
    run.result.sandbox = execution.sandbox.clone();
    run.result.model_traffic = execution.model_traffic.clone();
    run.result.witness = execution.witness.clone();
    run.result.dialog = execution.dialog.clone();
    run.result.execs = execution.execs.clone();
    run.result.hooks_ran = execution.hooks_ran.clone();
    let Execution {
        transcript,
        raw,
        mcp_calls,
        mcp_calls_dropped,
        dialog,
        ..
    } = execution;
    // Grading needs only the transcript, and bounds itself (per-call timeouts, `cancel`).
    let reviews = grade_unless_failed(
        spec,
        ctx.judge,
        (&transcript, dialog.as_ref()),
        error.is_some(),
        ctx.cancel,
    )
    .await;
    let mut usage = total_usage(&transcript, run.result.model_traffic.as_ref(), &reviews);
    // The simulated user's calls count in the test's spend; the dialog keeps them apart.
    if let Some(simulated) = dialog.as_ref().and_then(|d| d.simulated_usage.as_ref()) {
        usage.add(simulated);
    }
    run.result.usage = Some(usage);
    let mut post = PostRun::default();
    let cut = run
        .post_run(
            &workspace,
            (&transcript, &mcp_calls, mcp_calls_dropped, dialog.as_ref()),
            &reviews,
            &mut post,
        )
        .await;
    let written = run.record(&raw).await;
    run.result.files = post.files;
    run.result.assertions = post.assertions;
    run.result.transcript = Some(transcript);
    let cut = cut.map(|c| {
        let kind = if ctx.cancel.is_cancelled() {
            ErrorKind::Interrupted
        } else {
            ErrorKind::Agent
        };
        (kind, c)
    });
    let error = match (error, cut) {
        (Some((kind, e)), Some((_, c))) => Some((kind, format!("{e}; {c}"))),
        (e, c) => e.or(c),
    };
    (run.finish(error), written)
}

impl<'a> OneRun<'a> {
    fn new(spec: &'a TestSpec, ctx: &'a TestContext<'a>) -> Self {
        let mut result = not_run(spec, ErrorKind::Setup, "");
        result.agent = Some(ctx.agent_label());
        result.started_at =
            Some(humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string());
        let record_to = ctx
            .config
            .record
            .then(|| crate::spec::discover::transcript_path(&spec.file))
            .flatten()
            .map(|path| {
                let before = file_identity(&path);
                (path, before)
            });
        OneRun {
            spec,
            ctx,
            started: Instant::now(),
            timeout: spec.timeout.unwrap_or(ctx.config.default_timeout),
            result,
            record_to,
        }
    }

    /// The run's result: `error` with `failure` when there is one, else decided by its
    /// assertions; the error kind of an assertion that could not be made when none is given.
    fn finish(self, failure: Option<Failure>) -> TestResult {
        let mut r = self.result;
        let (kind, error) = failure.unzip();
        r.error = error;
        r.status = TestResult::status_of(r.error.as_deref(), &r.assertions);
        r.error_kind = match (kind, r.status) {
            (Some(kind), _) => Some(kind),
            (None, TestStatus::Error) => Some(assertion_error_kind(&r.assertions)),
            (None, _) => None,
        };
        r.duration_ms = self.started.elapsed().as_millis() as u64;
        r
    }

    /// The workspace copy (kept when asked), with the test's variant applied, and the
    /// run's fingerprint taken from it.
    async fn prepare(&mut self) -> Result<Workspace, Failure> {
        let (spec, ctx) = (self.spec, self.ctx);
        let source = spec.workspace_dir();
        let git = spec.workspace_git;
        let created = tokio::task::spawn_blocking(move || Workspace::create(&source, git));
        let mut workspace = tokio::select! {
            created = created => match created {
                Ok(Ok(ws)) => ws,
                Ok(Err(e)) => return Err((ErrorKind::Setup, e.to_string())),
                Err(e) => return Err((ErrorKind::Setup, format!("the workspace copy failed: {e}"))),
            },
            () = ctx.cancel.cancelled() => {
                return Err((ErrorKind::Interrupted, "interrupted while the workspace was copied".into()));
            }
        };
        if ctx.config.keep_workspaces {
            self.result.workspace = Some(workspace.keep().display().to_string());
        }
        if let Some(variant) = &spec.variant
            && let Err(why) = workspace.apply_variant(&variant.remove, &variant.add)
        {
            return Err((
                ErrorKind::Setup,
                format!("variant `{}`: {why}", variant.name),
            ));
        }
        let label = self.result.agent.clone().unwrap_or_default();
        let root = workspace.path().to_owned();
        let for_fingerprint = spec.clone();
        let base_url = ctx.agent.base_url().map(str::to_owned);
        let fingerprint = tokio::task::spawn_blocking(move || {
            super::fingerprint::of(&for_fingerprint, &label, base_url.as_deref(), &root)
        })
        .await;
        match fingerprint {
            Ok(Ok(f)) => self.result.fingerprint = Some(f),
            Ok(Err(e)) => tracing::debug!(error = %e, "no fingerprint"),
            Err(e) => tracing::debug!(error = %e, "no fingerprint"),
        }
        Ok(workspace)
    }

    /// The test's `setup` commands, in order; the first that fails ends the run.
    async fn setup(&self, workspace: &Workspace) -> Result<(), Failure> {
        let (spec, cancel) = (self.spec, self.ctx.cancel);
        for command in &spec.setup {
            let shell = Shell {
                workspace: workspace.path(),
                env: &spec.env,
                sandbox: &self.ctx.config.sandbox,
                protect: &spec.file,
                wanted: spec.sandbox,
                network: &spec.network,
                cancel,
            };
            if let Err(why) = run_setup(&shell, command, self.timeout).await {
                let kind = if cancel.is_cancelled() {
                    ErrorKind::Interrupted
                } else {
                    ErrorKind::Setup
                };
                return Err((kind, why.to_string()));
            }
        }
        Ok(())
    }

    /// The agent's run in the workspace, with the test's MCP servers (`${VAR}` expanded
    /// now, not at load time, so that `validate` does not need the secrets) and plugin
    /// copies.
    async fn execute(&self, workspace: &Workspace) -> Result<Execution, Failure> {
        let (spec, ctx) = (self.spec, self.ctx);
        let mcp_servers = crate::spec::mcp::expand_all(&spec.mcp_servers)
            .map_err(|why| (ErrorKind::Setup, why.to_string()))?;
        let plugins = workspace
            .copy_plugins(&spec.plugins)
            .map_err(|why| (ErrorKind::Setup, format!("plugins: {why}")))?;
        // An HTTP server that is not there is named now, before the agent works without it
        // (one a replay answers from its recording need not be there).
        let replayed = ctx
            .replay
            .as_ref()
            .filter(|r| r.miss == crate::gateway::ReplayMiss::Error)
            .map(|r| &r.cassette.mcp);
        let probed: crate::spec::McpServers = mcp_servers
            .iter()
            .filter(|(name, _)| !replayed.is_some_and(|m| m.contains_key(*name)))
            .map(|(n, s)| (n.clone(), s.clone()))
            .collect();
        crate::agent::mcp::watch::probe_http(&probed)
            .await
            .map_err(|why| (ErrorKind::Infra, why.to_string()))?;
        ctx.agent
            .execute(ExecuteRequest {
                prompt: &spec.prompt,
                workspace: workspace.path(),
                env: &spec.env,
                model: spec.model.as_deref(),
                max_turns: spec.max_turns,
                base_url: spec.agent.base_url.as_deref(),
                timeout: self.timeout,
                cancel: ctx.cancel,
                on_tool_call: ctx.on_tool_call,
                mcp_servers: &mcp_servers,
                mcp_mocks: &spec.mcp_mocks,
                plugins: &plugins,
                protect: std::slice::from_ref(&spec.file),
                sandbox: spec.sandbox,
                hooks: spec.hooks.unwrap_or_default(),
                network: &spec.network,
                replay: ctx.replay.as_ref(),
                limits: spec.limits.resolved(),
                stop: spec.stop,
                watch_skills: &watch_skills(spec, workspace.path(), &plugins),
                user: spec.user.as_ref(),
            })
            .await
            // The CLI is missing or could not start.
            .map_err(|e| (ErrorKind::Infra, e.to_string()))
    }

    /// The post-run work ([`post_run`]) within the test's timeout again (a short budget
    /// when the run was interrupted before it began: the report still shows how far the
    /// agent got). Returns why it was cut, if it was; a cut step's workspace copy is
    /// removed now, since the step may never return it.
    async fn post_run(
        &self,
        workspace: &Arc<Workspace>,
        run: (
            &crate::transcript::Transcript,
            &[crate::transcript::ToolCall],
            u32,
            Option<&crate::transcript::dialog::Dialog>,
        ),
        reviews: &std::collections::BTreeMap<usize, crate::assertions::judge::ReviewVerdict>,
        post: &mut PostRun,
    ) -> Option<String> {
        let (spec, cancel, timeout) = (self.spec, self.ctx.cancel, self.timeout);
        let step = std::sync::Mutex::new(String::from("the file snapshot"));
        let work = post_run(spec, workspace, run, reviews, post, &step, self.ctx);
        let interrupted_before = cancel.is_cancelled();
        let budget = if interrupted_before {
            INTERRUPTED_POST_RUN
        } else {
            timeout
        };
        let cut = tokio::select! {
            biased;
            () = cancel.cancelled(), if !interrupted_before => {
                Some(format!("interrupted during {}", current(&step)))
            }
            done = tokio::time::timeout(budget, work) => match done {
                Ok(Ok(())) => None,
                Ok(Err(why)) => Some(why.to_string()),
                Err(_) if interrupted_before => Some(format!(
                    "the post-run work was cut {} after the interruption, during {}",
                    humantime::format_duration(budget),
                    current(&step)
                )),
                Err(_) => Some(format!(
                    "post-run work did not finish within {} (the test's timeout): cut during {}",
                    humantime::format_duration(timeout),
                    current(&step)
                )),
            },
        };
        // A step that ended because of the interruption (a verify stopped) is interrupted too.
        let cut = cut.or_else(|| {
            (!interrupted_before && cancel.is_cancelled())
                .then(|| format!("interrupted during {}", current(&step)))
        });
        if cut.is_some() && !self.ctx.config.keep_workspaces && Arc::strong_count(workspace) > 1 {
            remove_cut_copy(workspace).await;
        }
        cut
    }

    /// `--record`: the agent's stdout, redacted, written beside the test file; says in the
    /// result where (or why not). Returns what was written, to check later that no other
    /// run replaced it.
    async fn record(&mut self, raw: &[String]) -> Option<Written> {
        let cancel = self.ctx.cancel;
        if !self.ctx.config.record {
            return None;
        }
        let Some((path, before)) = self.record_to.clone() else {
            self.result.recorded = Some(format!(
                "not recorded: {} is not named x.aptitude.yaml",
                display_path(&self.spec.file)
            ));
            return None;
        };
        if cancel.is_cancelled() {
            self.result.recorded = Some("not recorded: interrupted".into());
            return None;
        }
        if !super::record::may_replace(&path, &self.spec.file, &self.ctx.config.named) {
            self.result.recorded = Some(format!(
                "not recorded: {} exists, and --record replaces a transcript only for a test named on the command line (the test file or its directory)",
                display_path(&path)
            ));
            return None;
        }
        let text: String = raw
            .iter()
            .map(|l| self.ctx.redactor.redact(l) + "\n")
            .collect();
        let to = path.clone();
        let recorded = tokio::task::spawn_blocking(move || record_atomically(&to, &text, before));
        let mut written = None;
        self.result.recorded = Some(tokio::select! {
            r = tokio::time::timeout(Duration::from_secs(30), recorded) => match r {
                Ok(Ok((said, identity))) => {
                    written = identity.map(|i| (path, i));
                    said
                }
                _ => "not recorded: writing the transcript did not finish within 30s".into(),
            },
            () = cancel.cancelled() => "not recorded: interrupted".into(),
        });
        written
    }
}

/// Removes the workspace copy a cut step still holds. Only a directory made by
/// `Workspace::create` (`aptitude-ws-*`) is removed.
async fn remove_cut_copy(workspace: &Workspace) {
    let made_by_us = workspace
        .path()
        .parent()
        .filter(|d| {
            d.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("aptitude-ws-"))
        })
        .map(std::path::Path::to_owned);
    if let Some(dir) = made_by_us {
        let _ = tokio::task::spawn_blocking(move || std::fs::remove_dir_all(dir)).await;
    }
}

/// A routing suite's skills with what a request that showed each to the model holds: the
/// start of its `SKILL.md` description, read in the run's workspace copy (or plugin
/// copies). A skill without a usable description is not looked for.
fn watch_skills(
    spec: &TestSpec,
    workspace: &std::path::Path,
    plugins: &[std::path::PathBuf],
) -> Vec<(String, String)> {
    use crate::spec::routing::{find_skill, shown_needle, skill_description};
    let Some(case) = &spec.routing_case else {
        return Vec::new();
    };
    case.skills
        .iter()
        .filter_map(|name| {
            let path = find_skill(name, workspace, plugins)?;
            let text = crate::shared::files::read_prefix(&path, 1 << 20).ok()?;
            let description = skill_description(&String::from_utf8_lossy(&text))?;
            Some((name.clone(), shown_needle(&description)?))
        })
        .collect()
}
