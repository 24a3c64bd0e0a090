//! [`AgentHarness`]: upstream aptitude's table of agents, for code that picks an agent by
//! [`crate::AgentType`] — a grader for `stdout` reviews (`get_agent`), or a run
//! (`execute`, the same run as [`super::prompt()`]).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::prompt::{ExecutionOutput, PromptBuilder, RunError};
use crate::agent::registry::{self, AgentOptions};
use crate::agent::{Agent, AgentKind, AgentSettings};

/// Every agent aptitude runs, each with default settings (its program looked up on
/// `PATH`).
#[derive(Clone)]
pub struct AgentHarness {
    agents: BTreeMap<AgentKind, Arc<dyn Agent>>,
}

impl Default for AgentHarness {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for AgentHarness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.agents.keys()).finish()
    }
}

impl AgentHarness {
    /// Every registered agent.
    pub fn new() -> Self {
        AgentHarness {
            agents: AgentKind::ALL
                .into_iter()
                .map(|kind| {
                    (
                        kind,
                        registry::agent(kind, AgentSettings::default(), &AgentOptions::default()),
                    )
                })
                .collect(),
        }
    }

    /// The adapter of `kind`: a grader for `.with_grader(…)`, or a runner for
    /// [`PromptBuilder::with_adapter`].
    pub fn get_agent(&self, kind: AgentKind) -> Option<&Arc<dyn Agent>> {
        self.agents.get(&kind)
    }

    /// The agents it holds.
    pub fn registered_agents(&self) -> Vec<AgentKind> {
        self.agents.keys().copied().collect()
    }

    /// Runs `prompt` with `agent` (default Claude Code) as `config` says: the same run as
    /// `prompt(…).run_full()`.
    ///
    /// # Errors
    /// As [`PromptBuilder::run_full`].
    pub fn execute(
        &self,
        agent: Option<AgentKind>,
        prompt: &str,
        config: ExecutionConfig,
    ) -> Result<ExecutionOutput, RunError> {
        self.builder(agent, prompt, config).run_full()
    }

    /// [`AgentHarness::execute`] for async code.
    ///
    /// # Errors
    /// As [`PromptBuilder::run_full`].
    pub async fn execute_async(
        &self,
        agent: Option<AgentKind>,
        prompt: &str,
        config: ExecutionConfig,
    ) -> Result<ExecutionOutput, RunError> {
        self.builder(agent, prompt, config).run_full_async().await
    }

    fn builder(
        &self,
        agent: Option<AgentKind>,
        prompt: &str,
        config: ExecutionConfig,
    ) -> PromptBuilder {
        let kind = agent.unwrap_or(AgentKind::Claude);
        let mut builder = super::prompt::prompt(prompt).agent(kind);
        if let Some(adapter) = self.agents.get(&kind) {
            builder = builder.with_adapter(Arc::clone(adapter));
        }
        if let Some(dir) = config.working_dir {
            builder = builder.in_dir(dir);
        }
        if let Some(model) = &config.model {
            builder = builder.model(model);
        }
        if let Some(timeout) = config.timeout {
            builder = builder.timeout(timeout);
        }
        builder
    }
}

/// How [`AgentHarness::execute`] runs (upstream's `ExecutionConfig`, without its
/// `extra_args`: arguments aptitude does not know could undo the run's isolation).
#[derive(Debug, Clone, Default)]
pub struct ExecutionConfig {
    /// The directory copied for the run; default the current directory.
    pub working_dir: Option<PathBuf>,
    /// The model, passed to the agent.
    pub model: Option<String>,
    /// The time limit (default 10 minutes).
    pub timeout: Option<Duration>,
}

impl ExecutionConfig {
    /// Nothing set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Runs in a copy of `dir`.
    pub fn with_working_dir(mut self, dir: PathBuf) -> Self {
        self.working_dir = Some(dir);
        self
    }
}
