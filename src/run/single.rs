//! One prompt run outside any test file — `aptitude log PROMPT` and the fluent API's
//! `prompt("…").run()` — on the very path `aptitude run` takes: the agent's version check,
//! then [`run_test`] (a fresh workspace copy, the agent through its executor, the file
//! snapshot), with a test built by [`TestSpec::for_prompt`]. There is no second way to run
//! an agent: whatever `run` guarantees (isolation, timeouts, the kill sweep, the sandbox)
//! holds here too.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::{RunConfig, TestContext, run_test};
use crate::agent::{Agent, AgentError, AgentInfo, AgentKind, ToolCallHook};
use crate::assertions::judge::{Judge, JudgeConfig};
use crate::shared::redact::Redactor;
use crate::spec::TestSpec;
use crate::verdict::results::TestResult;

/// The name a single prompt run has in results, standing in for a test file's.
pub const SINGLE_RUN_NAME: &str = "prompt";

/// A prompt to run once.
#[derive(Debug, Clone)]
pub struct SinglePrompt {
    /// The prompt.
    pub prompt: String,
    /// The directory copied for the run (absolute, or relative to the current directory).
    pub dir: PathBuf,
    /// The agent.
    pub agent: AgentKind,
    /// The model, passed to the agent as it spells models.
    pub model: Option<String>,
    /// The run's time limit (default [`super::DEFAULT_TIMEOUT`]).
    pub timeout: Option<Duration>,
    /// Variables for the agent (as a test's `env:`).
    pub env: BTreeMap<String, String>,
    /// Keep the workspace copy after the run (its path is in the result's `workspace`).
    pub keep_workspace: bool,
}

impl SinglePrompt {
    /// `prompt` for `agent` in a copy of `dir`, with nothing else set.
    pub fn new(prompt: &str, dir: PathBuf, agent: AgentKind) -> Self {
        SinglePrompt {
            prompt: prompt.to_owned(),
            dir,
            agent,
            model: None,
            timeout: None,
            env: BTreeMap::new(),
            keep_workspace: false,
        }
    }

    /// The test it runs as: no assertions, so its verdict is only whether the run
    /// completed.
    pub fn spec(&self) -> TestSpec {
        let mut spec =
            TestSpec::for_prompt(SINGLE_RUN_NAME, &self.prompt, self.agent, self.dir.clone());
        spec.model = self.model.clone();
        spec.timeout = self.timeout;
        spec.env = self.env.clone();
        spec
    }
}

/// A finished single run.
#[derive(Debug, Clone)]
pub struct SingleRun {
    /// The run's result: `error` (with `error` and `error_kind` saying why) when the run
    /// could not be judged — a timeout, a crash, an API error, a missing workspace — else
    /// `passed`. Its transcript and file changes are set as far as the run got.
    pub result: TestResult,
    /// The agent that ran, as its `--version` check reported it.
    pub agent: AgentInfo,
}

/// Runs `prompt` once with `agent`, telling `on_tool_call` of each call as it is made;
/// `cancel` stops the agent as Ctrl-C stops `run`.
///
/// # Errors
/// When the agent is not installed or does not answer its version check
/// ([`Agent::check`]): nothing ran.
pub async fn run_single(
    prompt: &SinglePrompt,
    agent: &dyn Agent,
    on_tool_call: Option<ToolCallHook<'_>>,
    cancel: &CancellationToken,
) -> Result<SingleRun, AgentError> {
    let info = agent.check().await?;
    let spec = prompt.spec();
    let config = RunConfig {
        jobs: 1,
        keep_workspaces: prompt.keep_workspace,
        ..RunConfig::default()
    };
    // No assertion is graded here: the judge is never called.
    let judge = Judge::new(
        JudgeConfig {
            enabled: false,
            cache: None,
            ..JudgeConfig::default()
        },
        [],
    );
    let redactor =
        Redactor::from_process_env(spec.env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let ctx = TestContext {
        agent,
        agent_version: &info.version,
        config: &config,
        judge: &judge,
        redactor: &redactor,
        cancel,
        on_tool_call,
        replay: None,
    };
    let result = run_test(&spec, &ctx).await;
    Ok(SingleRun {
        result,
        agent: info,
    })
}
