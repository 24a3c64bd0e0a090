//! Running tests: workspace → setup → agent → assertions, several tests at once.
//!
//! The runner never prints. It emits [`Event`]s as tests start and finish; reporters render
//! them. Results come back in file order whatever the finishing order.
//!
//! A test is `error` — never `passed` — when its run could not be judged: a workspace or
//! `setup` failure, an agent that exited non-zero without a result, an API error, max
//! turns, a timeout, or an interruption. Its assertions are still evaluated on whatever was
//! captured, so the report shows how far the agent got.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

use crate::agent::process::{self, Ending};
use crate::agent::{Agent, ExecuteRequest, Execution};
use crate::assertions::{self, Evidence, VerifyRun, WorkspaceEvidence};
use crate::judge::{Judge, ReviewVerdict};
use crate::results::TestResult;
use crate::spec::diagnostic::display_path;
use crate::spec::{AssertionKind, TestSpec, VerifyAssertion};
use crate::transcript::{Outcome, Transcript};
use crate::workspace::Workspace;

/// The default per-test timeout (a test's `timeout:` overrides it).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// How long the post-run work of a test interrupted before it began may take (its
/// assertions on what was captured), before it is cut.
pub const INTERRUPTED_POST_RUN: Duration = Duration::from_secs(2);

/// The default number of tests run at once: agent runs wait on the model, not the CPU.
pub const DEFAULT_JOBS: usize = 4;

/// How to run.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Tests run at once (at least 1).
    pub jobs: usize,
    /// Keep workspace copies after the run.
    pub keep_workspaces: bool,
    /// Timeout for tests that set none.
    pub default_timeout: Duration,
    /// Write each agent's raw transcript beside its test file (`--record`).
    pub record: bool,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            jobs: DEFAULT_JOBS,
            keep_workspaces: false,
            default_timeout: DEFAULT_TIMEOUT,
            record: false,
        }
    }
}

/// What happens during a run, for reporters.
#[derive(Debug, Clone)]
pub enum Event {
    /// A test started (its workspace is being prepared).
    Started {
        /// Position of the test in the input order.
        index: usize,
        /// The test's name.
        name: String,
    },
    /// An agent made a tool call (while its test runs).
    ToolCall {
        /// Position of the test in the input order.
        index: usize,
        /// The call (its result may not be known yet).
        call: Box<crate::transcript::ToolCall>,
    },
    /// A test finished; its result is final.
    Finished {
        /// Position of the test in the input order.
        index: usize,
        /// The result.
        result: Box<TestResult>,
    },
}

/// Runs tests with agents chosen by each test's `agent:` name.
pub struct Runner {
    agents: BTreeMap<crate::agent::AgentKind, (Arc<dyn Agent>, String)>,
    config: RunConfig,
    judge: Arc<Judge>,
    redactor: crate::redact::Redactor,
}

impl Runner {
    /// A runner; `agents` maps agents to their adapters and reported versions; `judge`
    /// grades `stdout` reviews.
    pub fn new(
        agents: BTreeMap<crate::agent::AgentKind, (Arc<dyn Agent>, String)>,
        config: RunConfig,
        judge: Arc<Judge>,
        redactor: crate::redact::Redactor,
    ) -> Self {
        Runner {
            agents,
            config,
            judge,
            redactor,
        }
    }

    /// Runs every test, `jobs` at a time, and returns their results in input order.
    ///
    /// When `cancel` fires, running agents are stopped, tests not yet started are not
    /// started, and both are reported as `error` ("interrupted").
    pub async fn run(
        &self,
        specs: &[TestSpec],
        events: mpsc::UnboundedSender<Event>,
        cancel: CancellationToken,
    ) -> Vec<TestResult> {
        let slots = Arc::new(Semaphore::new(self.config.jobs.max(1)));
        let mut tasks = tokio::task::JoinSet::new();
        let mut results: Vec<Option<TestResult>> = vec![None; specs.len()];
        // Tests start in file order: a slot is taken before the next test is spawned.
        for (index, spec) in specs.iter().enumerate() {
            let permit = tokio::select! {
                permit = Arc::clone(&slots).acquire_owned() => permit.ok(),
                () = cancel.cancelled() => None,
            };
            let Some(permit) = permit else {
                let result = not_run(spec, "interrupted before it started");
                let _ = events.send(Event::Finished {
                    index,
                    result: Box::new(result.clone()),
                });
                results[index] = Some(result);
                continue;
            };
            let spec = spec.clone();
            let agent = self.agents.get(&spec.agent.kind).cloned();
            let config = self.config.clone();
            let judge = Arc::clone(&self.judge);
            let redactor = self.redactor.clone();
            let events = events.clone();
            let cancel = cancel.clone();
            tasks.spawn(async move {
                let _permit = permit;
                let result = match agent {
                    None => (
                        not_run(
                            &spec,
                            &format!(
                                "the `{}` agent was not set up for this run",
                                spec.agent.kind
                            ),
                        ),
                        None,
                    ),
                    Some((agent, version)) => {
                        let _ = events.send(Event::Started {
                            index,
                            name: spec.name.clone(),
                        });
                        let live = |call: &crate::transcript::ToolCall| {
                            let _ = events.send(Event::ToolCall {
                                index,
                                call: Box::new(call.clone()),
                            });
                        };
                        let ctx = TestContext {
                            agent: agent.as_ref(),
                            agent_version: &version,
                            config: &config,
                            judge: &judge,
                            redactor: &redactor,
                            cancel: &cancel,
                            on_tool_call: Some(&live),
                        };
                        run_one(&spec, &ctx).await
                    }
                };
                let (result, written) = result;
                let _ = events.send(Event::Finished {
                    index,
                    result: Box::new(result.clone()),
                });
                (index, result, written)
            });
        }
        let mut written = Vec::new();
        while let Some(joined) = tasks.join_next().await {
            if let Ok((index, result, w)) = joined {
                results[index] = Some(result);
                written.extend(w.map(|w| (index, w)));
            }
        }
        // A recording another run replaced after this one wrote it is not this run's.
        for (index, (path, identity)) in written {
            if let Some(result) = results[index].as_mut() {
                note_if_replaced(&mut result.recorded, &path, identity);
            }
        }
        results
            .into_iter()
            .zip(specs)
            .map(|(r, spec)| r.unwrap_or_else(|| not_run(spec, "the test's task failed")))
            .collect()
    }
}

/// A test that produced no run: `error`, with `why`.
pub fn not_run(spec: &TestSpec, why: &str) -> TestResult {
    TestResult {
        name: spec.name.clone(),
        file: display_path(&spec.file),
        prompt: Some(spec.prompt.clone()),
        status: crate::results::TestStatus::Error,
        duration_ms: 0,
        usage: None,
        error: Some(why.to_owned()),
        assertions: Vec::new(),
        transcript: None,
        agent: None,
        agent_id: Some(spec.agent.kind),
        files: Vec::new(),
        workspace: None,
        recorded: None,
    }
}

/// What one test run uses besides its spec.
pub struct TestContext<'a> {
    /// The agent adapter.
    pub agent: &'a dyn Agent,
    /// Its reported version.
    pub agent_version: &'a str,
    /// Run settings.
    pub config: &'a RunConfig,
    /// Grades `stdout` reviews.
    pub judge: &'a Judge,
    /// Redacts what is recorded to disk.
    pub redactor: &'a crate::redact::Redactor,
    /// Fires on Ctrl-C / SIGTERM.
    pub cancel: &'a CancellationToken,
    /// Told of each tool call as it happens.
    pub on_tool_call: Option<crate::agent::ToolCallHook<'a>>,
}

/// Runs one test: workspace copy, setup, agent, then the post-run work (file snapshot,
/// `verify` commands, recording, assertions) under a deadline.
///
/// Blocking file work runs on tokio's blocking pool, never on the async workers, so that a
/// read that blocks (a FIFO the agent made) can neither stall other tests nor the signal
/// handler. The post-run work must finish within the test's timeout again; when it does
/// not, or the run is cancelled meanwhile, the test is `error` saying which step was cut.
pub async fn run_test(spec: &TestSpec, ctx: &TestContext<'_>) -> TestResult {
    run_one(spec, ctx).await.0
}

/// A transcript this run recorded: where, and the file's identity right after.
type Written = (std::path::PathBuf, FileIdentity);

/// [`run_test`], and the transcript it recorded, if any.
async fn run_one(spec: &TestSpec, ctx: &TestContext<'_>) -> (TestResult, Option<Written>) {
    let TestContext {
        agent,
        agent_version,
        config,
        judge,
        redactor,
        cancel,
        on_tool_call,
    } = *ctx;
    let started = Instant::now();
    let timeout = spec.timeout.unwrap_or(config.default_timeout);
    let mut result = not_run(spec, "");
    result.agent = Some(
        format!("{} {agent_version}", agent.name())
            .trim()
            .to_owned(),
    );
    let finish = |mut r: TestResult, error: Option<String>| {
        r.error = error;
        r.status = TestResult::status_of(r.error.as_deref(), &r.assertions);
        r.duration_ms = started.elapsed().as_millis() as u64;
        r
    };
    // What the recorded transcript's file is now, to tell whether another run replaced it
    // while this one ran.
    let record_to = config
        .record
        .then(|| crate::spec::discover::transcript_path(&spec.file))
        .flatten();
    let before = record_to.as_deref().and_then(file_identity);

    let source = spec.workspace_dir();
    let git = spec.workspace_git;
    let created = tokio::task::spawn_blocking(move || Workspace::create(&source, git));
    let mut workspace = tokio::select! {
        created = created => match created {
            Ok(Ok(ws)) => ws,
            Ok(Err(e)) => return (finish(result, Some(e.to_string())), None),
            Err(e) => {
                let why = format!("the workspace copy failed: {e}");
                return (finish(result, Some(why)), None);
            }
        },
        () = cancel.cancelled() => {
            return (finish(result, Some("interrupted while the workspace was copied".into())), None);
        }
    };
    if config.keep_workspaces {
        result.workspace = Some(workspace.keep().display().to_string());
    }
    let workspace = Arc::new(workspace);

    for command in &spec.setup {
        if let Err(why) = run_setup(command, workspace.path(), &spec.env, timeout, cancel).await {
            return (finish(result, Some(why)), None);
        }
    }

    // `${VAR}` in `mcp_servers` expands from aptitude's environment now, not at load time,
    // so that `validate` does not need the secrets.
    let mcp_servers = match crate::spec::mcp::expand_all(&spec.mcp_servers) {
        Ok(servers) => servers,
        Err(why) => return (finish(result, Some(why)), None),
    };
    let execution = agent
        .execute(ExecuteRequest {
            prompt: &spec.prompt,
            workspace: workspace.path(),
            env: &spec.env,
            model: spec.model.as_deref(),
            max_turns: spec.max_turns,
            base_url: spec.agent.base_url.as_deref(),
            timeout,
            cancel,
            on_tool_call,
            mcp_servers: &mcp_servers,
        })
        .await;
    let execution = match execution {
        Ok(e) => e,
        Err(e) => return (finish(result, Some(e.to_string())), None),
    };
    let error = run_error(&execution, timeout);
    let Execution {
        transcript, raw, ..
    } = execution;
    // Grading needs only the transcript, and bounds itself (per-call timeouts, `cancel`).
    let reviews = grade_unless_failed(spec, judge, &transcript, error.is_some(), cancel).await;
    result.usage = Some(total_usage(&transcript, &reviews));

    let step = std::sync::Mutex::new(String::from("the file snapshot"));
    let mut post = PostRun::default();
    let work = post_run(
        spec,
        &workspace,
        &transcript,
        &reviews,
        &mut post,
        &step,
        cancel,
    );
    // An interrupted run still gets its assertions evaluated on what was captured (the
    // report shows how far the agent got), within a short budget.
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
            Ok(Err(why)) => Some(why),
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
    if cut.is_some() && !config.keep_workspaces && Arc::strong_count(&workspace) > 1 {
        // A cut step still holds the copy and may never return: remove it now. Only a
        // directory made by `Workspace::create` (`aptitude-ws-*`) is removed.
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
    let mut written = None;
    if let Some(path) = record_to.filter(|_| !cancel.is_cancelled()) {
        let text: String = raw.iter().map(|l| redactor.redact(l) + "\n").collect();
        let to = path.clone();
        let recorded = tokio::task::spawn_blocking(move || record_atomically(&to, &text, before));
        result.recorded = Some(tokio::select! {
            r = tokio::time::timeout(Duration::from_secs(30), recorded) => match r {
                Ok(Ok((said, identity))) => {
                    written = identity.map(|i| (path, i));
                    said
                }
                _ => "not recorded: writing the transcript did not finish within 30s".into(),
            },
            () = cancel.cancelled() => "not recorded: interrupted".into(),
        });
    } else if config.record {
        result.recorded = Some(format!(
            "not recorded: {} is not named x.aptitude.yaml",
            display_path(&spec.file)
        ));
    }
    result.files = post.files;
    result.assertions = post.assertions;
    result.transcript = Some(transcript);
    let error = match (error, cut) {
        (Some(e), Some(c)) => Some(format!("{e}; {c}")),
        (e, c) => e.or(c),
    };
    (finish(result, error), written)
}

/// What the post-run work produced, as far as it got.
#[derive(Default)]
struct PostRun {
    files: Vec<crate::workspace::FileChange>,
    assertions: Vec<crate::results::AssertionResult>,
}

fn current(step: &std::sync::Mutex<String>) -> String {
    step.lock()
        .map(|s| s.clone())
        .unwrap_or_else(|e| e.into_inner().clone())
}

/// The work after the agent: file snapshot, `verify` commands, assertions; `step` names
/// what is running (for the message when it is cut). An error is a failed snapshot.
async fn post_run(
    spec: &TestSpec,
    workspace: &Arc<Workspace>,
    transcript: &Transcript,
    reviews: &BTreeMap<usize, ReviewVerdict>,
    post: &mut PostRun,
    step: &std::sync::Mutex<String>,
    cancel: &CancellationToken,
) -> Result<(), String> {
    let set_step = |s: String| {
        if let Ok(mut current) = step.lock() {
            *current = s;
        }
    };
    let ws = Arc::clone(workspace);
    post.files = tokio::task::spawn_blocking(move || ws.changes())
        .await
        .map_err(|e| format!("the file snapshot failed: {e}"))?
        .map_err(|e| e.to_string())?;
    let mut verify_runs = BTreeMap::new();
    for (index, assertion) in spec.assertions.iter().enumerate() {
        if let AssertionKind::Verify(v) = &assertion.kind {
            set_step(format!("verify `{}`", v.run));
            verify_runs.insert(
                index,
                run_verify(v, workspace.path(), &spec.env, cancel).await,
            );
        }
    }
    set_step("the assertions".into());
    let (spec, ws, transcript, reviews, files) = (
        spec.clone(),
        Arc::clone(workspace),
        transcript.clone(),
        reviews.clone(),
        post.files.clone(),
    );
    post.assertions = tokio::task::spawn_blocking(move || {
        assertions::evaluate(
            &spec,
            &Evidence {
                transcript: &transcript,
                workspace: Some(WorkspaceEvidence {
                    root: ws.path(),
                    changes: &files,
                }),
                verify: &verify_runs,
                reviews: &reviews,
            },
        )
    })
    .await
    .map_err(|e| format!("the assertions failed: {e}"))?;
    Ok(())
}

/// Why an agent run makes its test `error`, in the agent's own words where it gave any.
fn run_error(execution: &Execution, timeout: Duration) -> Option<String> {
    let p = &execution.process;
    let outcome = &execution.transcript.outcome;
    match p.ending {
        Ending::Cancelled => return Some("interrupted: the agent was stopped".into()),
        Ending::TimedOut => {
            return Some(format!(
                "timed out after {}: the agent was stopped; its transcript up to then is kept",
                humantime::format_duration(timeout)
            ));
        }
        Ending::Exited => {}
    }
    match outcome {
        Outcome::Completed if p.code == Some(0) => None,
        Outcome::Completed => Some(format!(
            "the agent {} after reporting success",
            p.describe(timeout)
        )),
        Outcome::Incomplete { .. } => {
            let stderr = last_lines(&p.stderr, 5);
            Some(if stderr.is_empty() {
                format!("the agent {} without a result", p.describe(timeout))
            } else {
                format!(
                    "the agent {} without a result: {stderr}",
                    p.describe(timeout)
                )
            })
        }
        other => Some(other.describe()),
    }
}

/// The last `n` non-empty lines of `text`, joined.
fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Runs `command` with `sh -c` in `workspace` with `env` (a `setup` or `verify` command);
/// returns its stdout and how it ended, or why `sh` could not be started.
async fn run_shell(
    command: &str,
    workspace: &std::path::Path,
    env: &BTreeMap<String, String>,
    timeout: Duration,
    cancel: &CancellationToken,
) -> (String, std::io::Result<process::Output>) {
    let spec = process::Spec {
        program: "sh".into(),
        args: vec!["-c".into(), command.into()],
        cwd: workspace.to_owned(),
        env: env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        timeout,
        grace: Duration::from_secs(2),
    };
    let mut stdout = String::new();
    let out = process::run(&spec, cancel, |line| {
        stdout.push_str(line);
        stdout.push('\n');
    })
    .await;
    (stdout, out)
}

/// Runs one `setup` command in the workspace; the error names the command and its output.
async fn run_setup(
    command: &str,
    workspace: &std::path::Path,
    env: &BTreeMap<String, String>,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Result<(), String> {
    let (stdout, out) = run_shell(command, workspace, env, timeout, cancel).await;
    let out = out.map_err(|e| format!("setup `{command}` could not start: {e}"))?;
    if out.success() {
        return Ok(());
    }
    let output = last_lines(&format!("{stdout}{}", out.stderr), 10);
    Err(if output.is_empty() {
        format!("setup `{command}` {}", out.describe(timeout))
    } else {
        format!("setup `{command}` {}:\n{output}", out.describe(timeout))
    })
}

/// Grades a test's reviews, unless its run `failed`: such a run has no answer worth paying
/// a judge for, so its reviews are skipped, saying why.
async fn grade_unless_failed(
    spec: &TestSpec,
    judge: &Judge,
    transcript: &Transcript,
    failed: bool,
    cancel: &CancellationToken,
) -> BTreeMap<usize, ReviewVerdict> {
    if !failed {
        return grade_reviews(spec, judge, transcript, cancel).await;
    }
    spec.assertions
        .iter()
        .enumerate()
        .filter(|(_, a)| matches!(a.kind, AssertionKind::Review(_)))
        .map(|(i, _)| {
            (
                i,
                ReviewVerdict::skipped("not graded: the agent run failed"),
            )
        })
        .collect()
}

/// What identifies one version of a file: (inode, size in bytes, mtime in ns).
type FileIdentity = (u64, u64, i128);

/// The identity of the file at `path`, when there is one.
fn file_identity(path: &std::path::Path) -> Option<FileIdentity> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    Some((
        m.ino(),
        m.len(),
        i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
    ))
}

/// Writes a recorded transcript (`x.transcript.jsonl`, already redacted) atomically: to a
/// temp file in the same directory, then renamed over the old one, so that a reader — or a
/// concurrent run recording the same test — never sees a mix of two runs. Returns where
/// it went, saying when this run replaced a transcript another run wrote since `before`
/// (the file's identity when this test started): the last run to record wins, and says so.
/// Also returns the identity of the file it wrote.
fn record_atomically(
    path: &std::path::Path,
    text: &str,
    before: Option<FileIdentity>,
) -> (String, Option<FileIdentity>) {
    use std::io::Write;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let written = tempfile::Builder::new()
        .prefix(".aptitude-record-")
        .tempfile_in(dir)
        .and_then(|mut tmp| {
            tmp.write_all(text.as_bytes())?;
            tmp.as_file().sync_all()?;
            Ok(tmp)
        });
    let replaced = file_identity(path).is_some_and(|now| Some(now) != before);
    match written.and_then(|tmp| tmp.persist(path).map_err(|e| e.error)) {
        Ok(_) => {
            let identity = file_identity(path);
            let said = if replaced {
                format!(
                    "{} (this run's transcript replaced one another run recorded while this test ran)",
                    display_path(path)
                )
            } else {
                display_path(path)
            };
            (said, identity)
        }
        Err(e) => (
            format!("not recorded: can not write {}: {e}", path.display()),
            None,
        ),
    }
}

/// Says in `recorded` when the transcript at `path` is no longer the one this run wrote
/// (`identity`): another run recorded the same test after this one, and won.
fn note_if_replaced(recorded: &mut Option<String>, path: &std::path::Path, identity: FileIdentity) {
    if file_identity(path) != Some(identity)
        && let Some(text) = recorded.as_mut()
    {
        text.push_str(" (since replaced: another run recorded this test after this one)");
    }
}

/// Grades a test's `stdout` reviews concurrently (under the judge's global limit), by
/// assertion index.
pub async fn grade_reviews(
    spec: &TestSpec,
    judge: &Judge,
    transcript: &Transcript,
    cancel: &CancellationToken,
) -> BTreeMap<usize, ReviewVerdict> {
    let reviews = spec
        .assertions
        .iter()
        .enumerate()
        .filter_map(|(i, a)| match &a.kind {
            AssertionKind::Review(r) => Some(async move {
                let verdict = judge
                    .review(
                        r,
                        (spec.agent.kind, spec.model.as_deref()),
                        &spec.prompt,
                        transcript.final_text.as_deref(),
                        cancel,
                    )
                    .await;
                (i, verdict)
            }),
            _ => None,
        });
    futures_util::future::join_all(reviews)
        .await
        .into_iter()
        .collect()
}

/// The agent's usage plus the grading calls'.
fn total_usage(
    transcript: &Transcript,
    reviews: &BTreeMap<usize, ReviewVerdict>,
) -> crate::transcript::Usage {
    let mut usage = transcript.usage.clone();
    for v in reviews.values() {
        if let Some(u) = &v.usage {
            usage.add(u);
        }
    }
    usage
}

/// Runs a `verify` command in the workspace after the agent, with the test's `env`.
async fn run_verify(
    v: &VerifyAssertion,
    workspace: &std::path::Path,
    env: &BTreeMap<String, String>,
    cancel: &CancellationToken,
) -> VerifyRun {
    if cancel.is_cancelled() {
        return VerifyRun {
            code: None,
            failure: Some("not run: interrupted".into()),
            stdout: String::new(),
            stderr: String::new(),
        };
    }
    let (stdout, out) = run_shell(&v.run, workspace, env, v.timeout, cancel).await;
    match out {
        Ok(out) => VerifyRun {
            code: (out.ending == Ending::Exited).then_some(out.code).flatten(),
            failure: match out.ending {
                Ending::Exited if out.code.is_some() => None,
                _ => Some(out.describe(v.timeout)),
            },
            stdout,
            stderr: out.stderr,
        },
        Err(e) => VerifyRun {
            code: None,
            failure: Some(format!("could not start: {e}")),
            stdout,
            stderr: String::new(),
        },
    }
}

/// Why a session's outcome makes the test `error`: anything but a completed session.
///
/// A transcript that stops on an API error, at max turns, on an interruption or mid-way
/// can not show what the agent would have done, so guardrails such as `called: false`
/// must not pass on it.
fn outcome_error(outcome: &Outcome) -> Option<String> {
    match outcome {
        Outcome::Completed => None,
        other => Some(other.describe()),
    }
}

/// Evaluates `spec` against an existing transcript (`aptitude analyze`), grading its
/// reviews unless the session did not complete.
///
/// `started` is when the evaluation began (the result's `duration_ms`); the agent's own
/// time is in the transcript's usage.
pub async fn evaluate_transcript(
    spec: &TestSpec,
    transcript: Transcript,
    judge: &Judge,
    cancel: &CancellationToken,
    started: Instant,
) -> TestResult {
    let error = outcome_error(&transcript.outcome);
    let reviews = grade_unless_failed(spec, judge, &transcript, error.is_some(), cancel).await;
    let assertions = assertions::evaluate(
        spec,
        &Evidence {
            reviews: &reviews,
            ..Evidence::transcript_only(&transcript)
        },
    );
    TestResult {
        name: spec.name.clone(),
        file: display_path(&spec.file),
        prompt: Some(spec.prompt.clone()),
        status: TestResult::status_of(error.as_deref(), &assertions),
        duration_ms: started.elapsed().as_millis() as u64,
        usage: Some(total_usage(&transcript, &reviews)),
        error,
        assertions,
        agent: transcript.agent_version.clone(),
        agent_id: None,
        transcript: Some(transcript),
        files: Vec::new(),
        workspace: None,
        recorded: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recording_says_when_it_replaced_another_runs_transcript() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.transcript.jsonl");
        // This run starts with no recording; another run records while it runs.
        let before = file_identity(&path);
        std::fs::write(&path, "{\"other\":1}\n").unwrap();
        let (said, _) = record_atomically(&path, "{\"mine\":1}\n", before);
        assert!(
            said.ends_with(
                "(this run's transcript replaced one another run recorded while this test ran)"
            ),
            "{said}"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"mine\":1}\n");

        // A run that finds the file as it was when it started says nothing more.
        let before = file_identity(&path);
        let (said, mine) = record_atomically(&path, "{\"again\":1}\n", before);
        assert_eq!(said, display_path(&path));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"again\":1}\n");
        // The temp file was renamed, not left beside the transcript.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["t.transcript.jsonl"]);

        // Another run records the same test afterwards: this run's result says it lost.
        let mut recorded = Some(said);
        note_if_replaced(&mut recorded, &path, mine.unwrap());
        assert_eq!(recorded.as_deref(), Some(display_path(&path).as_str()));
        std::fs::write(&path, "{\"later\":1}\n").unwrap();
        note_if_replaced(&mut recorded, &path, mine.unwrap());
        assert_eq!(
            recorded.unwrap(),
            format!(
                "{} (since replaced: another run recorded this test after this one)",
                display_path(&path)
            )
        );
    }

    #[test]
    fn concurrent_recordings_never_mix() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.transcript.jsonl");
        let texts: Vec<String> = (0..8)
            .map(|i| format!("{{\"run\":{i}}}\n").repeat(20_000))
            .collect();
        std::thread::scope(|s| {
            for text in &texts {
                let path = &path;
                s.spawn(move || record_atomically(path, text, None));
            }
        });
        let kept = std::fs::read_to_string(&path).unwrap();
        assert!(
            texts.contains(&kept),
            "the file is one run's transcript, whole"
        );
    }
}
