//! Test files: what to test.
//!
//! A test file (`*.aptitude.yaml` / `*.aptitude.yml`) holds one test: a prompt, an optional
//! workspace and setup, and a list of assertions. This stage turns files into validated
//! [`TestSpec`]s, or into diagnostics that point at each problem. Loading is strict — unknown
//! keys, wrong types, contradictions and patterns that do not compile are all errors — so a
//! test that loads means what it says. The syntax is documented in `docs/yaml-api.md`.

pub mod agent_kind;
pub mod agent_version;
pub mod diagnostic;
pub mod discover;
pub mod draft;
pub mod json_path;
pub mod judge_gate;
pub mod limits;
mod load;
pub mod mcp;
pub mod node;
pub mod pattern;
pub mod routing;
pub mod rules;
pub mod schema;
pub mod suite;
pub mod tools;
pub mod user;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use regex::Regex;

pub use diagnostic::{Diagnostic, FileDiagnostics};
pub use load::discovery::{Discovered, DiscoveryError, discover_tests, load_discovery_file};
pub use load::suite::{load_suite_file, load_suite_str};
pub use load::{
    LoadOptions, LoadReport, load_file, load_files, load_files_with, load_str, load_str_checked,
    suite_defaults,
};
pub use mcp::{McpMocks, McpServer, McpServers, MockReply, MockServer, MockSource, MockTool};
use pattern::{NameMatcher, SkillMatcher, ValueMatcher};

pub use crate::spec::agent_kind::AgentKind;

/// One agent a test runs on, from `agent:` or an `agents:` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentTarget {
    /// The agent.
    pub kind: AgentKind,
    /// `model:` for this agent (wins over the test's `model:`).
    pub model: Option<String>,
    /// `base_url:`: an API-compatible endpoint for this agent.
    pub base_url: Option<String>,
    /// `version:`: the agent CLI version this test needs (a pin; a mismatch stops the run
    /// before any agent starts).
    pub version: Option<String>,
    /// `versions:`: the releases the test runs on, each installed into aptitude's cache
    /// (`agent::install`) and each its own result; empty: the agent found as usual
    /// (`--agent-bin`, `APTITUDE_<NAME>_BIN`, `PATH`). After [`TestSpec::per_agent`], at
    /// most one, and after the run resolved it, exact.
    pub versions: Vec<agent_version::VersionSpec>,
}

impl AgentTarget {
    /// `kind` with nothing else set.
    pub fn new(kind: AgentKind) -> Self {
        AgentTarget {
            kind,
            model: None,
            base_url: None,
            version: None,
            versions: Vec::new(),
        }
    }

    /// The one release this (split) target runs on, if it names one.
    pub fn release(&self) -> Option<&agent_version::VersionSpec> {
        self.versions.first()
    }
}

/// The default LLM-judge threshold on the 1–10 scale (seed 000).
pub const DEFAULT_THRESHOLD: u8 = 7;

/// `variants:` entry: the test's workspace and settings changed one way (seed: "does my
/// instruction change what the agent does?"). The test as written is the variant
/// `default`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variant {
    /// The variant's name (never `default`).
    pub name: String,
    /// `remove:` paths deleted from the workspace copy (relative, inside it).
    pub remove: Vec<String>,
    /// `add:` files written into the workspace copy: (relative path, content). A `from:`
    /// file is read when the test file loads.
    pub add: Vec<(String, String)>,
    /// `env:` added to (and overriding) the test's.
    pub env: BTreeMap<String, String>,
    /// `model:` instead of the test's.
    pub model: Option<String>,
    /// `prompt:` instead of the test's.
    pub prompt: Option<String>,
}

/// One `covers:` entry: what it names, where, and the ids of the rules it named when the
/// test loaded (empty when workspaces were not checked: `analyze`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Covers {
    /// The selector as written.
    pub selector: rules::Selector,
    /// Its line in the test file.
    pub line: u32,
    /// The ids of the rules it named.
    pub rules: Vec<String>,
}

/// The name of the test as written, among its variants.
pub const DEFAULT_VARIANT: &str = "default";

/// One validated test.
#[derive(Debug, Clone)]
pub struct TestSpec {
    /// The test file.
    pub file: PathBuf,
    /// `name:` (required, non-empty).
    pub name: String,
    /// `description:` (free text).
    pub description: Option<String>,
    /// `prompt:` given to the agent (required, non-empty).
    pub prompt: String,
    /// The agent this test runs on: `agent:`, or one entry of `agents:` once the test is
    /// split per agent ([`TestSpec::per_agent`]); default `claude`.
    pub agent: AgentTarget,
    /// The agents the file names (`agent:` or `agents:`), in file order; empty when it
    /// names none (`run --agent` then decides).
    pub agents: Vec<AgentTarget>,
    /// `workspace:` (or `workspace.path`) as written, relative to the test file's directory.
    pub workspace: Option<PathBuf>,
    /// `workspace.git: true`: copy the workspace's `.git` too.
    pub workspace_git: bool,
    /// `setup:` shell commands run in the workspace copy before the agent.
    pub setup: Vec<String>,
    /// `env:` passed to the agent.
    pub env: BTreeMap<String, String>,
    /// `inputs:` globs, relative to the test file's directory: files outside the workspace
    /// that the agent depends on (e.g. a CLI's source). Only the fingerprint reads them
    /// ([`crate::run::fingerprint`]).
    pub inputs: Vec<String>,
    /// `timeout:` for the agent run ("30s", "5m").
    pub timeout: Option<Duration>,
    /// `max_turns:` passed to the agent.
    pub max_turns: Option<u32>,
    /// `model:` passed to the agent.
    pub model: Option<String>,
    /// `runs: N`: how many isolated runs the test gets (1–[`MAX_RUNS`]); `None` uses the
    /// run's `--runs` (default 1).
    pub runs: Option<u32>,
    /// `min_pass: k`: how many runs must pass for the test to pass (at least 1, at most
    /// the runs); `None` means every run.
    pub min_pass: Option<u32>,
    /// `mcp_servers:` attached to the agent, by name, with `${VAR}` not yet expanded.
    pub mcp_servers: McpServers,
    /// The `mock:` servers of `mcp_servers:`, which aptitude serves itself, by name.
    pub mcp_mocks: McpMocks,
    /// `plugins:` Claude Code plugin directories loaded for the run (`--plugin-dir`),
    /// resolved against the test file's directory, in file order.
    pub plugins: Vec<PathBuf>,
    /// The assertions, in file order (at least one).
    pub assertions: Vec<Assertion>,
    /// `variants:` declared by the file, in file order.
    pub variants: Vec<Variant>,
    /// The variant this copy of the test runs ([`TestSpec::per_variant`]); `None` is the
    /// test as written (`default`).
    pub variant: Option<Variant>,
    /// Set by `run --shard` when it split the test's runs: the numbers (1-based, ascending)
    /// of the runs this shard runs; `None` runs every run.
    pub shard_runs: Option<Vec<u32>>,
    /// `sandbox: on|off` (or an `aptitude.yaml`'s); `None`: on, unless `--sandbox` says
    /// otherwise (the flag wins).
    pub sandbox: Option<SandboxSetting>,
    /// `hooks: none|workspace` (or an `aptitude.yaml`'s); `None`: `none`, no hook of the
    /// workspace, of a plugin or written during the run runs.
    pub hooks: Option<HooksSetting>,
    /// `covers:`: the rules of the workspace's instruction files the test puts to work.
    pub covers: Vec<Covers>,
    /// `limits:`: what one run may use (memory, processes, disk); unset fields take the
    /// suite's, then the defaults ([`limits::Limits::resolved`]).
    pub limits: limits::Limits,
    /// `network:` hosts the test's sandbox may reach besides the model and its MCP servers
    /// (`registry.npmjs.org`, `*.pypi.org`, `github.com:443`), lowercase; with an
    /// `aptitude.yaml`'s, their union.
    pub network: Vec<String>,
    /// `routing:`: the file is a routing suite (its `prompt` is empty and it has no
    /// assertions) until [`TestSpec::per_routing_prompt`] makes it one test per prompt.
    pub routing: Option<std::sync::Arc<routing::Routing>>,
    /// The routing suite's prompt this test runs ([`TestSpec::per_routing_prompt`]).
    pub routing_case: Option<routing::RoutingCase>,
    /// `user:`: who answers the agent's questions ([`user::User`]); `None`: nobody, the
    /// run is one prompt.
    pub user: Option<std::sync::Arc<user::User>>,
    /// When the agent run is stopped: at its first tool call, or when it ends
    /// ([`routing::Stop`]; a routing suite's `stop:`).
    pub stop: routing::Stop,
    /// The `coverage.exclude` entries of the `aptitude.yaml` files above it: parts of the
    /// instruction files its workspace's coverage leaves out.
    pub coverage_exclude: Vec<rules::exclude::Exclusion>,
    /// `judge: {labels, min_lower_bound}` of the `aptitude.yaml` files above it: where its
    /// reviews' judges find their labels and certificates, and the bound they must reach.
    pub judge_trust: judge_gate::JudgeTrust,
    /// `draft: true`: the file was drafted by `aptitude init` (a model wrote its prompts)
    /// and not yet reviewed; it loads and runs as any other, and `validate` names it.
    pub draft: bool,
}

/// Whether a test's commands run sandboxed (`sandbox:`, `--sandbox`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SandboxSetting {
    /// Sandboxed, failing closed (the default).
    #[default]
    On,
    /// Not sandboxed: the run sees the host as aptitude does; every report says so.
    Off,
}

impl std::str::FromStr for SandboxSetting {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "on" | "true" | "yes" => Ok(SandboxSetting::On),
            "off" | "false" | "no" => Ok(SandboxSetting::Off),
            other => Err(format!(
                "`{other}` is not a sandbox setting: use `on` or `off`"
            )),
        }
    }
}

/// Whether the agent's own hooks run (`hooks:`): commands an agent CLI runs by itself
/// around its tools (Claude Code's and Qwen Code's `hooks` settings, Gemini CLI's
/// `BeforeTool` hooks, plugins' hooks). A hook can change a command after the model asked
/// for it, so by default none runs and what ran is what the model asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HooksSetting {
    /// No hook runs: not the workspace's, not a plugin's, not one the agent writes into a
    /// settings file during the run (the default).
    #[default]
    None,
    /// The hooks the agent would load from the workspace and the test's plugins run, as
    /// they would for a user (for tests of the hooks themselves).
    Workspace,
}

impl HooksSetting {
    /// The word of `hooks:`.
    pub fn word(self) -> &'static str {
        match self {
            HooksSetting::None => "none",
            HooksSetting::Workspace => "workspace",
        }
    }
}

impl std::str::FromStr for HooksSetting {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "none" | "off" | "false" | "no" => Ok(HooksSetting::None),
            "workspace" => Ok(HooksSetting::Workspace),
            other => Err(format!(
                "`{other}` is not a hooks setting: use `none` or `workspace`"
            )),
        }
    }
}

impl TestSpec {
    /// A test written in code instead of a file (the fluent API's `prompt()`, `aptitude
    /// log`): `prompt` run by `agent` in a copy of `workspace` (a directory, absolute or
    /// relative to the current directory), with no assertions yet. `name` names it in
    /// results and stands in for the test file.
    pub fn for_prompt(name: &str, prompt: &str, agent: AgentKind, workspace: PathBuf) -> Self {
        TestSpec {
            file: PathBuf::from(name),
            name: name.to_owned(),
            description: None,
            prompt: prompt.to_owned(),
            agent: AgentTarget::new(agent),
            agents: vec![AgentTarget::new(agent)],
            workspace: Some(workspace),
            workspace_git: false,
            setup: Vec::new(),
            env: BTreeMap::new(),
            inputs: Vec::new(),
            timeout: None,
            max_turns: None,
            model: None,
            runs: None,
            min_pass: None,
            mcp_servers: McpServers::default(),
            mcp_mocks: McpMocks::default(),
            plugins: Vec::new(),
            assertions: Vec::new(),
            variants: Vec::new(),
            variant: None,
            shard_runs: None,
            sandbox: None,
            hooks: None,
            network: Vec::new(),
            limits: limits::Limits::default(),
            covers: Vec::new(),
            coverage_exclude: Vec::new(),
            judge_trust: judge_gate::JudgeTrust::default(),
            routing: None,
            routing_case: None,
            user: None,
            stop: routing::Stop::Never,
            draft: false,
        }
    }

    /// How many runs the test gets: its `runs:`, else `default` (the run's `--runs`), at
    /// least 1.
    pub fn runs_or(&self, default: u32) -> u32 {
        self.runs.unwrap_or(default).max(1)
    }

    /// The variant its results record: this copy's name for a test that declares
    /// variants, else none.
    pub fn result_variant(&self) -> Option<String> {
        (!self.variants.is_empty()).then(|| self.variant_name().to_owned())
    }

    /// The name of the variant this copy runs (`default` for the test as written).
    pub fn variant_name(&self) -> &str {
        self.variant
            .as_ref()
            .map_or(DEFAULT_VARIANT, |v| v.name.as_str())
    }

    /// One test per variant: `default` (the test as written), then each declared variant
    /// with its `env`, `model` and `prompt` applied. `only` (from `--variant`), when not
    /// empty, keeps the named ones.
    pub fn per_variant(&self, only: &[String]) -> Vec<TestSpec> {
        let keep = |name: &str| only.is_empty() || only.iter().any(|o| o == name);
        let mut out = Vec::new();
        if keep(DEFAULT_VARIANT) {
            out.push(self.clone());
        }
        for v in self.variants.iter().filter(|v| keep(&v.name)) {
            let mut spec = self.clone();
            spec.env.extend(v.env.clone());
            if let Some(model) = &v.model {
                spec.model = Some(model.clone());
                for target in &mut spec.agents {
                    target.model = None;
                }
                spec.agent.model = None;
            }
            if let Some(prompt) = &v.prompt {
                spec.prompt = prompt.clone();
            }
            spec.variant = Some(v.clone());
            out.push(spec);
        }
        out
    }

    /// The exact release this (split) test runs on, once resolved: `None` for the agent
    /// found as usual, and for `pinned`/`latest` not yet resolved.
    pub fn agent_version(&self) -> Option<String> {
        match self.agent.release()? {
            agent_version::VersionSpec::Exact(v) => Some(v.clone()),
            _ => None,
        }
    }

    /// Whether the file names its agents (`run --agent` only changes tests that do not).
    pub fn agent_explicit(&self) -> bool {
        !self.agents.is_empty()
    }

    /// One test per agent and release it runs on: the agents the file names, else `default`
    /// (from `--agent`), else Claude Code; a target with `versions:` is one test per
    /// version, each with that one version. Each copy's [`TestSpec::agent`] is its agent,
    /// and its `model` is the agent's own `model:`, else the test's, else `default_model`.
    pub fn per_agent(&self, default: &[AgentTarget], default_model: Option<&str>) -> Vec<TestSpec> {
        let targets: Vec<AgentTarget> = if !self.agents.is_empty() {
            self.agents.clone()
        } else if !default.is_empty() {
            default.to_vec()
        } else {
            vec![AgentTarget::new(AgentKind::Claude)]
        };
        targets
            .into_iter()
            .flat_map(|target| {
                if target.versions.len() <= 1 {
                    return vec![target];
                }
                target
                    .versions
                    .iter()
                    .map(|v| AgentTarget {
                        versions: vec![v.clone()],
                        ..target.clone()
                    })
                    .collect()
            })
            .map(|target| {
                let mut spec = self.clone();
                spec.model = target
                    .model
                    .clone()
                    .or_else(|| self.model.clone())
                    .or_else(|| default_model.map(str::to_owned));
                spec.agent = target;
                spec
            })
            .collect()
    }

    /// The directory copied for the run: `workspace` resolved against the test file's
    /// directory, or that directory itself.
    pub fn workspace_dir(&self) -> PathBuf {
        resolve_workspace(&self.file, self.workspace.as_deref())
    }
}

/// `workspace` (as written in `test_file`) resolved against the test file's directory; that
/// directory itself when `None`.
fn resolve_workspace(test_file: &std::path::Path, workspace: Option<&std::path::Path>) -> PathBuf {
    let base = test_file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), std::path::Path::to_path_buf);
    match workspace {
        Some(w) if w.is_absolute() => w.to_owned(),
        Some(w) => base.join(w),
        None => base,
    }
}

/// One assertion with the 1-based line of its list item in the test file.
#[derive(Debug, Clone)]
pub struct Assertion {
    /// 1-based line of the list item.
    pub line: u32,
    /// 1-based column of the list item's first key.
    pub column: u32,
    /// What it checks.
    pub kind: AssertionKind,
    /// `variants:` beside it: the variants it applies to (all when `None`); in the others
    /// it is reported as skipped.
    pub variants: Option<Vec<String>>,
}

/// Which tool calls an assertion looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scope {
    /// Every call, subagents' included (the default): a guardrail can not be evaded by
    /// delegating to a subagent.
    #[default]
    All,
    /// Only the main agent's own calls (`scope: main`).
    Main,
}

/// The assertion kinds.
#[derive(Debug, Clone)]
pub enum AssertionKind {
    /// `tool:` — was a tool called, how often, with which parameters, in which order.
    Tool(Box<ToolAssertion>),
    /// `stdout: {review, threshold, model, agent}` — the final answer graded by an LLM judge.
    Review(ReviewAssertion),
    /// `exit_code: N` — the last shell command's exit code.
    ExitCode {
        /// Expected exit code.
        code: i64,
        /// Which calls count.
        scope: Scope,
    },
    /// `output_contains: "…"` — the last shell command's stdout contains the text.
    OutputContains {
        /// Expected substring.
        text: String,
        /// Which calls count.
        scope: Scope,
    },
    /// `output_equals: "…"` — the last shell command's stdout equals the text, trimmed.
    OutputEquals {
        /// Expected text.
        text: String,
        /// Which calls count.
        scope: Scope,
    },
    /// `error_contains: "…"` — the last shell command's stderr contains the text.
    ErrorContains {
        /// Expected substring.
        text: String,
        /// Which calls count.
        scope: Scope,
    },
    /// `file_exists: path` — a file exists in the workspace after the run.
    FileExists {
        /// Path relative to the workspace.
        path: String,
    },
    /// `file_absent: path` — no such file in the workspace after the run.
    FileAbsent {
        /// Path relative to the workspace.
        path: String,
    },
    /// `file_contains: {path, text}` or `{path, matches}` — a workspace file's content.
    FileContains {
        /// Path relative to the workspace.
        path: String,
        /// What the content must hold.
        check: TextCheck,
    },
    /// `ran: "regex"` — some shell command matched.
    Ran {
        /// Regex searched in each command string.
        pattern: Regex,
        /// Which calls count.
        scope: Scope,
    },
    /// `not_ran: "regex"` — no shell command matched.
    NotRan {
        /// Regex searched in each command string.
        pattern: Regex,
        /// Which calls count.
        scope: Scope,
    },
    /// `run_count: {pattern, min, max}` — how many shell commands matched (inclusive bounds).
    RunCount {
        /// Regex searched in each command string.
        pattern: Regex,
        /// Inclusive lower bound.
        min: Option<u32>,
        /// Inclusive upper bound.
        max: Option<u32>,
        /// Which calls count.
        scope: Scope,
    },
    /// `verify: {run, output_contains, output_equals, exit_code, timeout}` — a shell command
    /// run in the workspace after the agent.
    Verify(VerifyAssertion),
    /// `command_succeeded: "regex"` — a shell command matching the (case-insensitive) regex
    /// ran and exited 0 (seed 002's RequireShellPass).
    CommandSucceeded {
        /// Case-insensitive regex searched in each command string.
        pattern: Regex,
        /// Which calls count.
        scope: Scope,
    },
    /// `wrote: [paths]` — each path was written by a file-writing tool call or shows as
    /// created or modified in the workspace (seed 002's RequireAllFilesWritten).
    Wrote {
        /// Paths, relative to the workspace (absolute paths are matched by their tail).
        paths: Vec<String>,
    },
    /// `json_file: {path, required, commands_ran, no_failures, min_items}` — a workspace
    /// file is valid JSON with each listed field present and non-empty (seed 002's
    /// RequireBrief), and, as an agent's report, backed by what ran (seed 002's
    /// TestReportValid).
    JsonFile {
        /// Path relative to the workspace.
        path: String,
        /// Fields that must be present and non-empty (`goal`, `results.0.command`, or with
        /// `[]` the field of each element: `results[].command`).
        required: Vec<json_path::JsonPath>,
        /// The report checks.
        report: Box<JsonReportChecks>,
    },
    /// `turns: {max}`, `cost_usd: {max}`, `duration: {max}`, `tool_calls: {max, tool}`.
    Budget(Budget),
    /// `skill: name` — a tool assertion on the agent's skill tool (Claude Code's `Skill`),
    /// counting only the calls that invoke this skill.
    Skill(Box<SkillAssertion>),
    /// `claims: verified` — each concrete action the final answer claims (commands run,
    /// files written, tests passed), as read by the LLM judge, is backed by the transcript
    /// or the workspace (seed 002: evidence, not the agent's word).
    Claims,
    /// `asked`, `did_not_ask`, `user_turns`, `elicited` — the questions the agent asked
    /// the test's `user:` and the replies it got.
    Conversation(user::ConversationAssertion),
    /// One prompt of a routing suite (`routing:`, never written as an assertion): which
    /// skill the run triggered, from the agent's own evidence.
    Routing(Box<routing::RoutingCase>),
}

/// `json_file`'s checks of an agent's report file (seed 002's TestReportValid), each
/// optional.
#[derive(Debug, Clone, Default)]
pub struct JsonReportChecks {
    /// `commands_ran: "results[].command"`: every command listed must match a shell
    /// command that ran; one whose entry is not clearly failing (claims success) must have
    /// exited 0, and must not be empty.
    pub commands_ran: Option<json_path::JsonPath>,
    /// `no_failures: "results[].status"` (or `{path, values}`): no selected value is (or
    /// starts with the word) one of the failing values.
    pub no_failures: Option<NoFailures>,
    /// `min_items: {path, at_least | at_least_of}`: the array at `path` has enough items.
    pub min_items: Option<MinItems>,
}

/// The failing values `no_failures` uses unless told others, and the words that make a
/// report entry "clearly failing" for `commands_ran`. Compared ignoring case, with the
/// whole value or its first word (`FAILED (2 of 5)`); JSON `false` is the value `false`.
/// Documented in `docs/yaml-api.md`.
pub const DEFAULT_FAILING_VALUES: &[&str] = &[
    "fail",
    "failed",
    "failing",
    "fails",
    "failure",
    "failures",
    "error",
    "errored",
    "errors",
    "broken",
    "red",
    "false",
    "ko",
    "not ok",
    "crashed",
    "aborted",
    "timeout",
    "timed out",
    "✗",
    "✘",
    "×",
    "❌",
];

/// `no_failures:`.
#[derive(Debug, Clone)]
pub struct NoFailures {
    /// The values checked (`results[].status`).
    pub path: json_path::JsonPath,
    /// Values that mean a failure, compared ignoring case (default
    /// [`DEFAULT_FAILING_VALUES`]).
    pub values: Vec<String>,
}

/// `min_items:`.
#[derive(Debug, Clone)]
pub struct MinItems {
    /// The array counted (`results`); with `[]` in it, the arrays it selects together.
    pub path: json_path::JsonPath,
    /// How many it needs.
    pub at_least: AtLeast,
}

/// The count `min_items` needs.
#[derive(Debug, Clone)]
pub enum AtLeast {
    /// `at_least: N`.
    Count(u32),
    /// `at_least_of: path` (an array in the same file) or `{file, path}` (in another
    /// workspace file): as many items as it has.
    ItemsOf {
        /// Another workspace file, relative to the workspace; `None` for the same file.
        file: Option<String>,
        /// The array whose items are counted.
        path: json_path::JsonPath,
    },
}

/// What a file's (or a command's) text must hold.
#[derive(Debug, Clone)]
pub enum TextCheck {
    /// `text:` — a substring.
    Contains(String),
    /// `matches:` — a regex found anywhere.
    Matches(Regex),
}

/// A limit on what the run may spend, from the transcript's usage.
#[derive(Debug, Clone)]
pub enum Budget {
    /// `turns: {max}` — model turns.
    Turns(u32),
    /// `cost_usd: {max}` — cost in USD.
    CostUsd(f64),
    /// `duration: {max: "2m"}` — the agent's wall time.
    Duration(Duration),
    /// `tool_calls: {max, tool}` — tool calls, of one tool or of all.
    ToolCalls {
        /// At most this many calls.
        max: u32,
        /// Only calls of this tool.
        tool: Option<NameMatcher>,
        /// Which calls count.
        scope: Scope,
    },
}

impl AssertionKind {
    /// The YAML key that names this kind (`tool`, `stdout`, `exit_code`, …), as used in the
    /// results' `kind` field.
    pub fn key(&self) -> &'static str {
        match self {
            AssertionKind::Tool(_) => "tool",
            AssertionKind::Review(_) => "stdout",
            AssertionKind::ExitCode { .. } => "exit_code",
            AssertionKind::OutputContains { .. } => "output_contains",
            AssertionKind::OutputEquals { .. } => "output_equals",
            AssertionKind::ErrorContains { .. } => "error_contains",
            AssertionKind::FileExists { .. } => "file_exists",
            AssertionKind::FileAbsent { .. } => "file_absent",
            AssertionKind::FileContains { .. } => "file_contains",
            AssertionKind::Ran { .. } => "ran",
            AssertionKind::NotRan { .. } => "not_ran",
            AssertionKind::RunCount { .. } => "run_count",
            AssertionKind::Verify(_) => "verify",
            AssertionKind::CommandSucceeded { .. } => "command_succeeded",
            AssertionKind::Wrote { .. } => "wrote",
            AssertionKind::JsonFile { .. } => "json_file",
            AssertionKind::Budget(Budget::Turns(_)) => "turns",
            AssertionKind::Budget(Budget::CostUsd(_)) => "cost_usd",
            AssertionKind::Budget(Budget::Duration(_)) => "duration",
            AssertionKind::Budget(Budget::ToolCalls { .. }) => "tool_calls",
            AssertionKind::Skill(_) => "skill",
            AssertionKind::Claims => "claims",
            AssertionKind::Conversation(c) => c.key(),
            AssertionKind::Routing(_) => "routing",
        }
    }
}

/// A parameter constraint: the input key (or dotted path such as `edits.0.old_string`) and
/// how its value must match.
#[derive(Debug, Clone)]
pub struct ParamMatcher {
    /// Input key; a dotted path reaches into nested objects and arrays.
    pub key: String,
    /// The value matcher.
    pub matcher: ValueMatcher,
}

/// Equal when written alike: the same key and the same matcher, compiled patterns compared
/// by their source (compiled regexes and globs have no equality of their own).
impl PartialEq for ParamMatcher {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key && format!("{:?}", self.matcher) == format!("{:?}", other.matcher)
    }
}

/// `tool:` assertion fields (see `docs/yaml-api.md`, "Tool assertions").
#[derive(Debug, Clone)]
pub struct ToolAssertion {
    /// Which tool (any alias, any case; `*` makes it a glob).
    pub tool: NameMatcher,
    /// `called:`; defaults to true, or to false when `call_count: 0` / `max_calls: 0`.
    pub called: bool,
    /// `params:` — a call counts only when every parameter matches.
    pub params: Vec<ParamMatcher>,
    /// `call_count:` — exactly this many matching calls.
    pub call_count: Option<u32>,
    /// `min_calls:` — at least this many matching calls.
    pub min_calls: Option<u32>,
    /// `max_calls:` — at most this many matching calls.
    pub max_calls: Option<u32>,
    /// `called_after:` — some matching call comes after the first call of this tool.
    pub called_after: Option<NameMatcher>,
    /// `called_before:` — some matching call comes before the last call of this tool.
    pub called_before: Option<NameMatcher>,
    /// `nth_call_params:` (1-based), `first_call_params:` (as index 1) and
    /// `last_call_params:` (as [`CallIndex::Last`]): the tool's n-th call must match.
    pub positional: Vec<(CallIndex, Vec<ParamMatcher>)>,
    /// `scope:`.
    pub scope: Scope,
}

/// `skill:` assertion fields (see `docs/yaml-api.md`, "Skill assertions"): a
/// [`ToolAssertion`] on the `Skill` tool whose calls are only those naming [`Self::skill`].
#[derive(Debug, Clone)]
pub struct SkillAssertion {
    /// Which skill (`deploy`, a plugin's `my-plugin:deploy`, or a glob).
    pub skill: SkillMatcher,
    /// Everything else (`called`, counts, order, `params`, `scope`), with `tool: Skill`.
    pub tool: ToolAssertion,
}

/// Which call of a tool a positional parameter check looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallIndex {
    /// The n-th call, 1-based.
    Nth(u32),
    /// The last call.
    Last,
}

/// `stdout:` — the final answer graded by an LLM judge (seed 000).
#[derive(Debug, Clone)]
pub struct ReviewAssertion {
    /// Natural-language criteria (non-empty).
    pub review: String,
    /// Pass when the score (1–10) is at least this; default 7.
    pub threshold: u8,
    /// Model passed to the grading agent.
    pub model: Option<String>,
    /// Which agent grades; default: the test's agent.
    pub agent: Option<AgentKind>,
    /// `votes: n`: independent grading calls whose median score decides (1–25); `None`
    /// uses the run's `--judge-votes` (default 1).
    pub votes: Option<u32>,
    /// `gate:` (or `judge.gate` of `aptitude.yaml`): when the verdict counts; `None` is
    /// [`judge_gate::JudgeGate::Always`].
    pub gate: Option<judge_gate::JudgeGate>,
    /// The judge's standing for this run, set by the front end once it knows the grading
    /// agent's version and has read the certificates; `None` before (it then gates, as
    /// `always`, and reports say nothing of a certificate).
    pub standing: Option<judge_gate::JudgeStanding>,
    /// `include_dialog: true`: the judge also sees the run's conversation with its
    /// `user:` (each question and reply), the user's words framed as untrusted data.
    pub include_dialog: bool,
}

/// The most runs one test may ask for (`runs:`, `--runs`).
pub const MAX_RUNS: u32 = 100;

/// The most judge votes one review may ask for.
pub const MAX_VOTES: u32 = 25;

/// The default time limit of a `verify` command.
pub const DEFAULT_VERIFY_TIMEOUT: Duration = Duration::from_secs(60);

/// `verify:` — a shell command run in the workspace after the agent (seed 004).
#[derive(Debug, Clone)]
pub struct VerifyAssertion {
    /// The command, run with `sh -c`.
    pub run: String,
    /// Its exit code must be this (default 0); checked first.
    pub exit_code: i64,
    /// Its stdout must contain this.
    pub output_contains: Option<String>,
    /// Its stdout, trimmed, must equal this, trimmed.
    pub output_equals: Option<String>,
    /// Time limit (default 60s).
    pub timeout: Duration,
}
