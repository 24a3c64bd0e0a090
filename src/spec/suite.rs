//! Suite defaults: `aptitude.yaml` files that give defaults to every test below them.
//!
//! For a test file, the `aptitude.yaml` of its directory and of each ancestor apply; the
//! walk stops after the directory that holds `.git` (the repository root) or at the
//! filesystem root. The nearest file wins field by field; `env` and `mcp_servers` merge
//! by key, and the test's own values win over all of them. Each value keeps where it was
//! written ([`Origin`]), for `aptitude validate --explain`. The keys are parsed by
//! `load/suite.rs` with the test loader's diagnostics; the syntax is documented in
//! `docs/yaml-api.md` ("Suite defaults").

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{AgentKind, AgentTarget, AssertionKind, McpServer, MockServer, TestSpec};

/// The name of a suite defaults file.
pub const SUITE_FILE: &str = "aptitude.yaml";

/// Where a default was written: the `aptitude.yaml` and the 1-based line of its key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// The `aptitude.yaml` file.
    pub file: PathBuf,
    /// 1-based line of the key.
    pub line: u32,
}

/// A default value with where it was written.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting<T> {
    /// The value.
    pub value: T,
    /// Where it was written.
    pub origin: Origin,
}

/// `judge:` defaults for every `stdout: {review}` assertion that does not set them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JudgeDefaults {
    /// `judge.model`: the grading model.
    pub model: Option<Setting<String>>,
    /// `judge.agent`: the grading agent.
    pub agent: Option<Setting<AgentKind>>,
    /// `judge.threshold`: pass at this score or above (1–10).
    pub threshold: Option<Setting<u8>>,
    /// `judge.votes`: grading calls per review (1–[`super::MAX_VOTES`]).
    pub votes: Option<Setting<u32>>,
    /// `judge.labels`: the labels directory, resolved against this file's directory.
    pub labels: Option<Setting<PathBuf>>,
    /// `judge.gate`: when a review's verdict counts.
    pub gate: Option<Setting<super::judge_gate::JudgeGate>>,
    /// `judge.min_lower_bound`: the bound a certificate's rates must reach (0–1,
    /// exclusive of 0).
    pub min_lower_bound: Option<Setting<f64>>,
}

/// The defaults one `aptitude.yaml` gives, or several merged (nearest wins).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SuiteDefaults {
    /// `agent:` / `agents:`: the agents of tests that name none.
    pub agents: Option<Setting<Vec<AgentTarget>>>,
    /// `model:`.
    pub model: Option<Setting<String>>,
    /// `timeout:` of each agent run.
    pub timeout: Option<Setting<Duration>>,
    /// `max_turns:`.
    pub max_turns: Option<Setting<u32>>,
    /// `runs:` (1–[`super::MAX_RUNS`]).
    pub runs: Option<Setting<u32>>,
    /// `min_pass:` (at least 1).
    pub min_pass: Option<Setting<u32>>,
    /// `env:`, by variable.
    pub env: BTreeMap<String, Setting<String>>,
    /// `mcp_servers:`, by server name.
    pub mcp_servers: BTreeMap<String, Setting<McpServer>>,
    /// `mcp_servers:` written `mock:`, by server name.
    pub mcp_mocks: BTreeMap<String, Setting<MockServer>>,
    /// `judge:`.
    pub judge: JudgeDefaults,
    /// `sandbox: on|off` for the tests below.
    pub sandbox: Option<Setting<super::SandboxSetting>>,
    /// `hooks: none|workspace` for the tests below.
    pub hooks: Option<Setting<super::HooksSetting>>,
    /// `network:` hosts every test below may reach (added to a test's own).
    pub network: Option<Setting<Vec<String>>>,
    /// `limits:` for the tests below, field by field under a test's own.
    pub limits: Option<Setting<super::limits::Limits>>,
    /// `coverage: {exclude: [...]}`: files and sections left out of coverage; with a
    /// farther file's, their union.
    pub coverage_exclude: Vec<Setting<super::rules::exclude::Exclusion>>,
}

impl SuiteDefaults {
    /// `self` (a farther file) overridden field by field, and by key for `env` and
    /// `mcp_servers`, by `nearer`.
    pub fn overridden_by(mut self, nearer: SuiteDefaults) -> SuiteDefaults {
        fn pick<T>(far: &mut Option<T>, near: Option<T>) {
            if near.is_some() {
                *far = near;
            }
        }
        pick(&mut self.agents, nearer.agents);
        pick(&mut self.model, nearer.model);
        pick(&mut self.timeout, nearer.timeout);
        pick(&mut self.max_turns, nearer.max_turns);
        pick(&mut self.runs, nearer.runs);
        pick(&mut self.min_pass, nearer.min_pass);
        self.env.extend(nearer.env);
        // A name is one server: a nearer file's server of either kind replaces it.
        for name in nearer.mcp_servers.keys().chain(nearer.mcp_mocks.keys()) {
            self.mcp_servers.remove(name);
            self.mcp_mocks.remove(name);
        }
        self.mcp_servers.extend(nearer.mcp_servers);
        self.mcp_mocks.extend(nearer.mcp_mocks);
        pick(&mut self.judge.model, nearer.judge.model);
        pick(&mut self.judge.agent, nearer.judge.agent);
        pick(&mut self.judge.threshold, nearer.judge.threshold);
        pick(&mut self.judge.votes, nearer.judge.votes);
        pick(&mut self.judge.labels, nearer.judge.labels);
        pick(&mut self.judge.gate, nearer.judge.gate);
        pick(
            &mut self.judge.min_lower_bound,
            nearer.judge.min_lower_bound,
        );
        pick(&mut self.sandbox, nearer.sandbox);
        pick(&mut self.hooks, nearer.hooks);
        self.coverage_exclude.extend(nearer.coverage_exclude);
        self.limits = match (self.limits, nearer.limits) {
            (Some(far), Some(near)) => Some(Setting {
                value: near.value.or(far.value),
                origin: near.origin,
            }),
            (far, near) => near.or(far),
        };
        self.network = match (self.network, nearer.network) {
            (Some(mut far), Some(near)) => {
                far.value.extend(near.value);
                far.value.sort();
                far.value.dedup();
                Some(Setting {
                    value: far.value,
                    origin: near.origin,
                })
            }
            (far, near) => near.or(far),
        };
        self
    }

    /// Fills what `spec` does not set itself. `judge.threshold` is applied while the test
    /// loads (a review's threshold always has a value once loaded).
    pub fn apply(&self, spec: &mut TestSpec) {
        if spec.agents.is_empty()
            && let Some(agents) = &self.agents
            && let Some(first) = agents.value.first()
        {
            spec.agents = agents.value.clone();
            spec.agent = first.clone();
        }
        fill(&mut spec.model, &self.model);
        fill(&mut spec.timeout, &self.timeout);
        fill(&mut spec.max_turns, &self.max_turns);
        fill(&mut spec.runs, &self.runs);
        fill(&mut spec.min_pass, &self.min_pass);
        fill(&mut spec.sandbox, &self.sandbox);
        fill(&mut spec.hooks, &self.hooks);
        if let Some(limits) = &self.limits {
            spec.limits = spec.limits.or(limits.value);
        }
        if let Some(network) = &self.network {
            spec.network.extend(network.value.iter().cloned());
            spec.network.sort();
            spec.network.dedup();
        }
        for exclusion in &self.coverage_exclude {
            if !spec.coverage_exclude.contains(&exclusion.value) {
                spec.coverage_exclude.push(exclusion.value.clone());
            }
        }
        for (name, setting) in &self.env {
            spec.env
                .entry(name.clone())
                .or_insert_with(|| setting.value.clone());
        }
        // The test's own server of a name wins, whichever kind either is.
        for (name, setting) in &self.mcp_servers {
            if !spec.mcp_mocks.contains_key(name) {
                spec.mcp_servers
                    .entry(name.clone())
                    .or_insert_with(|| setting.value.clone());
            }
        }
        for (name, setting) in &self.mcp_mocks {
            if !spec.mcp_servers.contains_key(name) {
                spec.mcp_mocks
                    .entry(name.clone())
                    .or_insert_with(|| setting.value.clone());
            }
        }
        for assertion in &mut spec.assertions {
            if let AssertionKind::Review(review) = &mut assertion.kind {
                fill(&mut review.model, &self.judge.model);
                fill(&mut review.agent, &self.judge.agent);
                fill(&mut review.votes, &self.judge.votes);
                fill(&mut review.gate, &self.judge.gate);
            }
        }
        if let Some(labels) = &self.judge.labels {
            spec.judge_trust.labels = Some(labels.value.clone());
        }
        if let Some(bound) = &self.judge.min_lower_bound {
            spec.judge_trust.min_lower_bound = Some(bound.value);
            spec.judge_trust.min_lower_bound_at =
                Some((bound.origin.file.clone(), bound.origin.line));
        }
    }
}

fn fill<T: Clone>(value: &mut Option<T>, default: &Option<Setting<T>>) {
    if value.is_none() {
        *value = default.as_ref().map(|s| s.value.clone());
    }
}

/// The `aptitude.yaml` files that apply to `test_file`, farthest first: in its directory
/// and each ancestor, up to the directory holding `.git` or the filesystem root.
pub fn suite_files(test_file: &Path) -> Vec<PathBuf> {
    let dir = test_file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    // Relative paths stay relative (for messages) while the walk still reaches the
    // repository root above the working directory.
    let absolute = std::path::absolute(dir).unwrap_or_else(|_| dir.to_owned());
    let mut found = Vec::new();
    let mut relative = Some(dir.to_owned());
    for ancestor in absolute.ancestors() {
        let shown = relative.clone().unwrap_or_else(|| ancestor.to_owned());
        let candidate = ancestor.join(SUITE_FILE);
        if candidate.is_file() {
            found.push(shown.join(SUITE_FILE));
        }
        if ancestor.join(".git").exists() {
            break;
        }
        relative = relative.and_then(|r| parent_of_relative(&r));
    }
    found.reverse();
    found
}

/// The parent of a relative directory as a relative path (`tests/ws` → `tests` → `.` →
/// `..`); `None` for an absolute one, which [`suite_files`] then shows absolute.
pub(super) fn parent_of_relative(dir: &Path) -> Option<PathBuf> {
    if dir.is_absolute() {
        return None;
    }
    let text = dir.to_string_lossy();
    if text.is_empty() || text == "." {
        return Some(PathBuf::from(".."));
    }
    if dir
        .components()
        .all(|c| c == std::path::Component::ParentDir)
    {
        return Some(dir.join(".."));
    }
    Some(
        dir.parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin(line: u32) -> Origin {
        Origin {
            file: PathBuf::from("aptitude.yaml"),
            line,
        }
    }

    #[test]
    fn the_nearer_file_wins_field_by_field_and_maps_merge_by_key() {
        let far = SuiteDefaults {
            model: Some(Setting {
                value: "far".into(),
                origin: origin(1),
            }),
            runs: Some(Setting {
                value: 3,
                origin: origin(2),
            }),
            env: [
                (
                    "A".to_owned(),
                    Setting {
                        value: "far".into(),
                        origin: origin(3),
                    },
                ),
                (
                    "B".to_owned(),
                    Setting {
                        value: "far".into(),
                        origin: origin(4),
                    },
                ),
            ]
            .into(),
            ..SuiteDefaults::default()
        };
        let near = SuiteDefaults {
            model: Some(Setting {
                value: "near".into(),
                origin: origin(9),
            }),
            env: [(
                "B".to_owned(),
                Setting {
                    value: "near".into(),
                    origin: origin(8),
                },
            )]
            .into(),
            ..SuiteDefaults::default()
        };
        let merged = far.overridden_by(near);
        assert_eq!(merged.model.map(|s| s.value), Some("near".to_owned()));
        assert_eq!(merged.runs.map(|s| s.value), Some(3));
        let env: Vec<(&str, &str)> = merged
            .env
            .iter()
            .map(|(k, s)| (k.as_str(), s.value.as_str()))
            .collect();
        assert_eq!(env, [("A", "far"), ("B", "near")]);
    }

    #[test]
    fn suite_files_stop_at_the_repository_root() {
        let root = tempfile::tempdir().unwrap();
        let repo = root.path().join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("tests/ws")).unwrap();
        std::fs::write(root.path().join(SUITE_FILE), "model: outside\n").unwrap();
        std::fs::write(repo.join(SUITE_FILE), "model: a\n").unwrap();
        std::fs::write(repo.join("tests/ws").join(SUITE_FILE), "model: b\n").unwrap();
        let files = suite_files(&repo.join("tests/ws/x.aptitude.yaml"));
        assert_eq!(
            files,
            [
                repo.join(SUITE_FILE),
                repo.join("tests/ws").join(SUITE_FILE)
            ]
        );
    }
}
