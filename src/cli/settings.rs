//! The settings stage: agent flags and environment turned into resolved settings, once,
//! before anything runs. This is the only place that reads the environment for the agents'
//! configuration (`APTITUDE_<NAME>_BIN`); the engine gets resolved values.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Args;

use super::error::ArgValueError;

use crate::agent::registry::{self, AgentOptions};
use crate::agent::{Agent, AgentKind, AgentSettings, claude::PermissionMode};
use crate::spec::{AssertionKind, TestSpec};
use crate::workspace::WorkspaceError;

/// Flags that choose and configure agents (`run`, `analyze`).
#[derive(Debug, Args, Default)]
pub struct AgentArgs {
    /// An agent's binary, as NAME=PATH (repeatable). Default: $APTITUDE_<NAME>_BIN, else
    /// the agent's program on PATH.
    #[arg(long = "agent-bin", value_name = "NAME=PATH", value_parser = parse_agent_pair)]
    pub agent_bin: Vec<(AgentKind, String)>,
    /// An API-compatible endpoint for an agent, as NAME=URL (repeatable), set through the
    /// agent's own variable or config (ANTHROPIC_BASE_URL, a Codex provider, …).
    #[arg(long = "agent-base-url", value_name = "NAME=URL", value_parser = parse_agent_pair)]
    pub agent_base_url: Vec<(AgentKind, String)>,
    /// The version an agent CLI must report, as NAME=VERSION (repeatable); a mismatch stops
    /// the run before any agent starts.
    #[arg(long = "agent-version", value_name = "NAME=VERSION", value_parser = parse_agent_pair)]
    pub agent_version: Vec<(AgentKind, String)>,
    /// The Claude Code binary (the same as --agent-bin claude=PATH).
    #[arg(long, value_name = "PATH")]
    pub claude_bin: Option<PathBuf>,
    /// Claude Code's permission mode: `bypass` (the default: the workspace is a throwaway
    /// copy) or a mode passed as `--permission-mode` (acceptEdits, plan, …).
    #[arg(long, default_value = "bypass", value_name = "MODE")]
    pub permission_mode: String,
    /// Whether agents, their MCP servers, `setup` and `verify` commands and grading calls
    /// run sandboxed: `on` (a sandbox that can not be set up makes the test `error`) or
    /// `off` (every report then says the run was not sandboxed). Wins over the tests'
    /// `sandbox:`; without it, each test's, else on.
    #[arg(long, value_name = "on|off")]
    pub sandbox: Option<crate::sandbox::Setting>,
}

/// `NAME=VALUE` with a known agent name.
pub(super) fn parse_agent_pair(s: &str) -> Result<(AgentKind, String), ArgValueError> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| ArgValueError::NotAPair(s.to_owned()))?;
    let kind = name.trim().parse::<AgentKind>()?;
    if value.is_empty() {
        return Err(ArgValueError::NoValue(name.to_owned()));
    }
    Ok((kind, value.to_owned()))
}

/// Parses one `--agent` value (a name; lists are split on commas by clap).
///
/// # Errors
/// [`ArgValueError::Agent`] with a "did you mean" when the name is no agent's.
pub fn parse_agent(s: &str) -> Result<AgentKind, ArgValueError> {
    Ok(s.trim().parse::<AgentKind>()?)
}

/// Parses one `run --agent` value: a name, or `NAME@VERSION` with a version as a test's
/// `versions:` takes it (`pinned`, `latest`, `2.1.300`).
///
/// # Errors
/// [`ArgValueError::Agent`] for a name that is no agent's, [`ArgValueError::Version`] for
/// a version that is not one.
pub fn parse_agent_choice(s: &str) -> Result<crate::spec::AgentTarget, ArgValueError> {
    let (name, version) = match s.trim().split_once('@') {
        Some((name, version)) => (name, Some(version.parse()?)),
        None => (s.trim(), None),
    };
    Ok(crate::spec::AgentTarget {
        versions: version.into_iter().collect(),
        ..crate::spec::AgentTarget::new(name.parse::<AgentKind>()?)
    })
}

/// `--agent` values with one entry per agent, in first-named order: `claude@latest,
/// claude@2.1.300` is Claude Code on both releases.
pub fn merge_agent_choices(choices: &[crate::spec::AgentTarget]) -> Vec<crate::spec::AgentTarget> {
    let mut out: Vec<crate::spec::AgentTarget> = Vec::new();
    for choice in choices {
        match out.iter_mut().find(|t| t.kind == choice.kind) {
            Some(target) => {
                for v in &choice.versions {
                    if !target.versions.contains(v) {
                        target.versions.push(v.clone());
                    }
                }
            }
            None => out.push(choice.clone()),
        }
    }
    out
}

/// The agents of a run, resolved from flags and environment.
#[derive(Debug, Clone)]
pub struct AgentSetup {
    settings: BTreeMap<AgentKind, AgentSettings>,
    pins: BTreeMap<AgentKind, String>,
    options: AgentOptions,
}

impl AgentArgs {
    /// Resolves the flags, reading `APTITUDE_<NAME>_BIN` through `env` for agents whose
    /// binary no flag names.
    pub fn resolve(&self, env: impl Fn(&str) -> Option<OsString>) -> AgentSetup {
        let mut settings = BTreeMap::new();
        for kind in AgentKind::ALL {
            let mut s = AgentSettings::default();
            let flag = self
                .agent_bin
                .iter()
                .rev()
                .find(|(k, _)| *k == kind)
                .map(|(_, p)| PathBuf::from(p))
                .or_else(|| {
                    (kind == AgentKind::Claude)
                        .then(|| self.claude_bin.clone())
                        .flatten()
                });
            if let Some(path) = flag {
                s.binary_source = Some(format!("--agent-bin {kind}={}", path.display()));
                s.binary = Some(path);
            } else if let Some(path) = env(&kind.bin_env()).filter(|p| !p.is_empty()) {
                let path = PathBuf::from(path);
                s.binary_source = Some(format!("{}={}", kind.bin_env(), path.display()));
                s.binary = Some(path);
            }
            s.base_url = self
                .agent_base_url
                .iter()
                .rev()
                .find(|(k, _)| *k == kind)
                .map(|(_, u)| u.clone());
            s.sandbox = crate::sandbox::Sandbox::new(self.sandbox);
            settings.insert(kind, s);
        }
        AgentSetup {
            settings,
            pins: self.agent_version.iter().cloned().collect(),
            options: AgentOptions {
                permission_mode: PermissionMode::parse(&self.permission_mode),
            },
        }
    }
}

impl AgentSetup {
    /// Sends every agent's runs and grading calls through `gateway` (`None`: direct).
    pub fn with_gateway(mut self, gateway: Option<crate::gateway::Gateway>) -> Self {
        for settings in self.settings.values_mut() {
            settings.gateway.clone_from(&gateway);
        }
        self
    }

    /// The agent `kind`, set up as resolved.
    pub fn agent(&self, kind: AgentKind) -> Arc<dyn Agent> {
        let settings = self.settings.get(&kind).cloned().unwrap_or_default();
        registry::agent(kind, settings, &self.options)
    }

    /// The agent `kind` run from `binary` (a release installed in aptitude's cache), its
    /// other settings as resolved.
    pub fn agent_at(&self, kind: AgentKind, binary: PathBuf, version: &str) -> Arc<dyn Agent> {
        let mut settings = self.settings.get(&kind).cloned().unwrap_or_default();
        settings.binary_source = Some(format!("{kind}@{version} in aptitude's agent cache"));
        settings.binary = Some(binary);
        registry::agent(kind, settings, &self.options)
    }

    /// The version `kind` is pinned to by `--agent-version`, if any.
    pub fn pin(&self, kind: AgentKind) -> Option<&str> {
        self.pins.get(&kind).map(String::as_str)
    }
}

/// The directory `-w/--workspace` names, absolute, so that it means the same for every
/// test whatever its file's directory.
///
/// # Errors
/// [`WorkspaceError::Missing`] when it is not a directory.
pub fn workspace_override(dir: &Path) -> Result<PathBuf, WorkspaceError> {
    match std::fs::canonicalize(dir) {
        Ok(abs) if abs.is_dir() => Ok(abs),
        _ => Err(WorkspaceError::Missing(dir.to_owned())),
    }
}

/// The agents `specs` need: each test's agent, and each review's grader (when grading).
pub fn needed_agents(specs: &[TestSpec], grading: bool) -> BTreeSet<AgentKind> {
    let mut kinds = BTreeSet::new();
    for spec in specs {
        // A test on a chosen release runs the installed copy, not the agent found as usual.
        if spec.agent.release().is_none() {
            kinds.insert(spec.agent.kind);
        }
        if grading {
            for a in &spec.assertions {
                if let AssertionKind::Review(r) = &a.kind {
                    kinds.insert(r.agent.unwrap_or(spec.agent.kind));
                }
            }
        }
    }
    kinds
}

/// Each of `kinds` that would start without a credential
/// ([`crate::agent::missing_credential`]), as one problem each: read from aptitude's
/// environment and the `env:` of the tests that run on that agent. Checked before any agent
/// starts (a run, grading, drafting), so that an agent that can not sign in stops the run
/// at once, naming the variable, instead of waiting until its timeout.
pub fn missing_credentials(
    kinds: impl IntoIterator<Item = AgentKind>,
    specs: &[TestSpec],
) -> Vec<String> {
    kinds
        .into_iter()
        .filter_map(|kind| {
            let env = |name: &str| {
                std::env::var_os(name)
                    .filter(|v| !v.is_empty())
                    .or_else(|| {
                        specs
                            .iter()
                            .filter(|s| s.agent.kind == kind)
                            .find_map(|s| s.env.get(name).filter(|v| !v.is_empty()))
                            .map(OsString::from)
                    })
            };
            let cli = registry::cli(kind, &AgentOptions::default());
            crate::agent::missing_credential(kind, cli.as_ref(), &env)
        })
        .collect()
}

/// Whether an agent's reported version (`2.1.328 (Claude Code)`, `codex-cli 0.169.0`)
/// is `pin`: one of its words, with or without a leading `v`.
pub fn version_matches(reported: &str, pin: &str) -> bool {
    let pin = pin.trim().trim_start_matches('v');
    reported
        .split(|c: char| c.is_whitespace() || matches!(c, '(' | ')' | ',' | '@' | '/'))
        .map(|w| w.trim_start_matches('v'))
        .any(|w| !w.is_empty() && w == pin)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_win_over_the_environment() {
        let args = AgentArgs {
            agent_bin: vec![(AgentKind::Codex, "/opt/codex".into())],
            agent_base_url: vec![(AgentKind::Qwen, "http://127.0.0.1:1/v1".into())],
            permission_mode: "bypass".into(),
            ..AgentArgs::default()
        };
        let setup = args.resolve(|name| match name {
            "APTITUDE_CODEX_BIN" => Some("/env/codex".into()),
            "APTITUDE_GEMINI_BIN" => Some("/env/gemini".into()),
            _ => None,
        });
        let codex = &setup.settings[&AgentKind::Codex];
        assert_eq!(codex.binary, Some(PathBuf::from("/opt/codex")));
        assert_eq!(
            codex.binary_source.as_deref(),
            Some("--agent-bin codex=/opt/codex")
        );
        let gemini = &setup.settings[&AgentKind::Gemini];
        assert_eq!(
            gemini.binary_source.as_deref(),
            Some("APTITUDE_GEMINI_BIN=/env/gemini")
        );
        assert_eq!(
            setup.settings[&AgentKind::Qwen].base_url.as_deref(),
            Some("http://127.0.0.1:1/v1")
        );
        assert_eq!(setup.settings[&AgentKind::Claude].binary, None);
    }

    #[test]
    fn agent_pairs_are_checked() {
        assert_eq!(
            parse_agent_pair("codex=/x").unwrap(),
            (AgentKind::Codex, "/x".into())
        );
        let err = |s: &str| parse_agent_pair(s).unwrap_err().to_string();
        assert!(err("codx=/x").contains("did you mean `codex`"));
        assert!(err("codex").contains("NAME=VALUE"));
        assert!(err("codex=").contains("no value"));
    }

    #[test]
    fn versions_match_whole_words() {
        assert!(version_matches("2.1.328 (Claude Code)", "2.1.328"));
        assert!(version_matches("codex-cli 0.169.0", "v0.169.0"));
        assert!(!version_matches("codex-cli 0.169.0", "0.169"));
        assert!(!version_matches("2.1.3289", "2.1.328"));
    }
}
