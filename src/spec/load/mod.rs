//! Validation of a parsed test file into a [`TestSpec`], collecting every problem.
//!
//! Each check that fails adds a [`Diagnostic`] and the walk goes on, so a file with five
//! mistakes reports five errors in one run. Only a file without any diagnostic becomes a
//! [`TestSpec`].
//!
//! This file reads the test's own fields and dispatches each assertion through the table
//! in `kinds.rs`; each assertion family's values are read in its own file.

use std::path::{Path, PathBuf};

use super::diagnostic::{Diagnostic, FileDiagnostics, did_you_mean};
use super::node::{self, Key, Node, Pos, Value};
use super::suite::SuiteDefaults;
use super::{AgentKind, AgentTarget, TestSpec};

/// The keys of a test file's top level.
pub(in crate::spec) const TEST_KEYS: &[&str] = &[
    "name",
    "description",
    "prompt",
    "agent",
    "agents",
    "workspace",
    "setup",
    "env",
    "timeout",
    "max_turns",
    "model",
    "runs",
    "min_pass",
    "mcp_servers",
    "assertions",
    "variants",
    "plugins",
    "inputs",
    "sandbox",
    "hooks",
    "network",
    "limits",
    "user",
    "covers",
    "routing",
    "stop",
    "draft",
];

/// The key beside any assertion that names the variants it applies to.
pub(in crate::spec) const ASSERTION_VARIANTS_KEY: &str = "variants";

/// The outcome of loading many files: the tests that loaded, and every file's problems.
#[derive(Debug, Default)]
pub struct LoadReport {
    /// Valid tests, in the order of the input paths.
    pub specs: Vec<TestSpec>,
    /// Files with problems; when non-empty, nothing may run.
    pub errors: Vec<FileDiagnostics>,
    /// Files that are discovery configuration, not tests (`.aptitude.yaml` named
    /// explicitly, or the original aptitude's `default.aptitude.yaml` found by a test
    /// pattern): checked, and skipped as tests.
    pub configs: Vec<PathBuf>,
}

/// What loading checks beyond the files themselves.
#[derive(Debug, Clone, Copy)]
pub struct LoadOptions {
    /// Check that each `workspace:` directory exists and each `inputs:` glob matches a
    /// file: `run` needs them; `analyze` reads a recorded transcript and needs neither.
    pub check_files: bool,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions { check_files: true }
    }
}

impl LoadReport {
    /// Total number of diagnostics across files.
    pub fn error_count(&self) -> usize {
        self.errors.iter().map(|f| f.diagnostics.len()).sum()
    }
}

/// Loads every file, collecting all problems of all files.
///
/// Each test gets the suite defaults of the `aptitude.yaml` files above it
/// ([`super::suite`]); a broken `aptitude.yaml` is reported once, as a file with problems.
pub fn load_files(paths: &[PathBuf]) -> LoadReport {
    load_files_with(paths, LoadOptions::default())
}

/// [`load_files`] with `options`.
pub fn load_files_with(paths: &[PathBuf], options: LoadOptions) -> LoadReport {
    let mut report = LoadReport::default();
    let mut suites: std::collections::HashMap<PathBuf, Option<SuiteDefaults>> =
        std::collections::HashMap::new();
    for path in paths {
        let mut defaults = SuiteDefaults::default();
        let mut broken = false;
        for file in super::suite::suite_files(path) {
            let loaded = suites.entry(file.clone()).or_insert_with(|| {
                suite::load_suite_file(&file)
                    .map_err(|diags| report.errors.push(diags))
                    .ok()
            });
            match loaded {
                Some(d) => defaults = defaults.overridden_by(d.clone()),
                None => broken = true,
            }
        }
        match load_any(path, &defaults, options) {
            Ok(Loaded::Test(mut spec)) if !broken => {
                defaults.apply(&mut spec);
                let spec = *spec;
                match unreachable_min_pass(&spec, &defaults) {
                    Some(diags) => report.errors.push(diags),
                    // A routing suite is one test per prompt from here on.
                    None => report.specs.extend(spec.per_routing_prompt()),
                }
            }
            Ok(Loaded::Discovery) => report.configs.push(path.clone()),
            Ok(Loaded::Test(_)) => {}
            Err(diags) => report.errors.push(diags),
        }
    }
    report
}

/// A test whose `min_pass` is more than its `runs` once the suite defaults are applied
/// (each alone is checked where it is written) can never pass: a load error saying
/// where each value comes from.
fn unreachable_min_pass(spec: &TestSpec, defaults: &SuiteDefaults) -> Option<FileDiagnostics> {
    let (k, runs) = (spec.min_pass?, spec.runs?);
    if k <= runs {
        return None;
    }
    let from = |setting: Option<&super::suite::Origin>| {
        setting.map_or_else(
            || "this test".to_owned(),
            |o| format!("{}:{}", super::diagnostic::display_path(&o.file), o.line),
        )
    };
    // The test's own value wins over a default: the origin is the default's only when
    // the test file does not set the key.
    let origin = |key: &str, default: Option<&super::suite::Origin>| {
        let own = std::fs::read_to_string(&spec.file)
            .ok()
            .and_then(|source| node::parse(&source).ok())
            .is_some_and(|root| match &root.value {
                Value::Map(entries) => entries.iter().any(|(k, _)| k.name == key),
                _ => false,
            });
        if own { from(None) } else { from(default) }
    };
    Some(FileDiagnostics {
        path: spec.file.clone(),
        source: String::new(),
        diagnostics: vec![
            Diagnostic::new(
                Pos::default(),
                format!(
                    "`min_pass: {k}` (from {}) is more than `runs: {runs}` (from {}): the test can never pass",
                    origin("min_pass", defaults.min_pass.as_ref().map(|s| &s.origin)),
                    origin("runs", defaults.runs.as_ref().map(|s| &s.origin)),
                ),
            )
            .hint("min_pass counts passing runs out of `runs`; set both in the same place"),
        ],
    })
}

/// The suite defaults that apply to `test_file`, merged (nearest wins), for
/// `validate --explain`.
///
/// # Errors
/// The diagnostics of the first broken `aptitude.yaml`.
pub fn suite_defaults(test_file: &Path) -> Result<SuiteDefaults, FileDiagnostics> {
    super::suite::suite_files(test_file)
        .iter()
        .try_fold(SuiteDefaults::default(), |acc, file| {
            Ok(acc.overridden_by(suite::load_suite_file(file)?))
        })
}

/// The largest test file read, in bytes (4 MiB): a test is a prompt and assertions, and a
/// larger file is a mistake (a transcript or a fixture named as a test).
pub const MAX_TEST_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// Reads and validates one test file, and checks that its workspace directory exists.
///
/// # Errors
/// The file's diagnostics: an unreadable file, one that is not a regular file (a FIFO, a
/// device) or larger than [`MAX_TEST_FILE_BYTES`] gives one diagnostic without a position;
/// a file that is not UTF-8 gives one at the first invalid byte.
pub fn load_file(path: &Path) -> Result<TestSpec, FileDiagnostics> {
    match load_any(path, &SuiteDefaults::default(), LoadOptions::default())? {
        Loaded::Test(spec) => Ok(*spec),
        Loaded::Discovery => Err(FileDiagnostics {
            path: path.to_owned(),
            source: String::new(),
            diagnostics: vec![
                Diagnostic::new(
                    Pos::default(),
                    "this is a discovery configuration (`test_pattern`, `root`, `recursive`, \
                     `exclude`), not a test",
                )
                .hint("name it `.aptitude.yaml`; a test has `name`, `prompt` and `assertions`"),
            ],
        }),
    }
}

/// What a file found as a test turned out to be.
enum Loaded {
    /// A test.
    Test(Box<TestSpec>),
    /// A valid discovery configuration ([`discovery`]).
    Discovery,
}

/// Loads a file found as a test, with the suite `defaults` that apply while the test loads
/// (a review's `threshold`; the caller applies the rest, [`SuiteDefaults::apply`]): a
/// test, or a discovery configuration.
fn load_any(
    path: &Path,
    defaults: &SuiteDefaults,
    options: LoadOptions,
) -> Result<Loaded, FileDiagnostics> {
    let source = read_source(path, "test file")?;
    let fail = |diagnostics| FileDiagnostics {
        path: path.to_owned(),
        source: source.clone(),
        diagnostics,
    };
    if let Ok(root) = node::parse(&source)
        && discovery::is_discovery(path, &root)
    {
        return discovery::discovery_of(path, &root)
            .map(|_| Loaded::Discovery)
            .map_err(fail);
    }
    let mut ctx = Ctx {
        check_workspace: options.check_files,
        default_threshold: defaults.judge.threshold.as_ref().map(|s| s.value),
        ..Ctx::default()
    };
    validate(&mut ctx, path, &source)
        .map(|spec| Loaded::Test(Box::new(spec)))
        .map_err(fail)
}

/// The text of a YAML file aptitude reads (`what`: "test file", "suite defaults file",
/// "discovery configuration"): a regular file of at most [`MAX_TEST_FILE_BYTES`], opened
/// without blocking (a FIFO would block forever and a device such as `/dev/zero` never
/// ends), in UTF-8.
///
/// # Errors
/// One diagnostic: the file can not be read, is too large, or is not UTF-8 (at the line
/// and column of its first invalid byte).
pub(super) fn read_source(path: &Path, what: &str) -> Result<String, FileDiagnostics> {
    let fail = |source: String, diagnostic: Diagnostic| FileDiagnostics {
        path: path.to_owned(),
        source,
        diagnostics: vec![diagnostic],
    };
    let bytes = crate::shared::files::read_capped(path, MAX_TEST_FILE_BYTES).map_err(|e| {
        let message = match e {
            crate::shared::files::FileError::TooLarge { size, cap } => format!(
                "can not read {what}: it has {size} bytes, more than a {what} may have ({cap})"
            ),
            e => format!("can not read {what}: {e}"),
        };
        fail(String::new(), Diagnostic::new(Pos::default(), message))
    })?;
    String::from_utf8(bytes).map_err(|err| {
        let valid = err.utf8_error().valid_up_to();
        let bytes = err.into_bytes();
        let before = String::from_utf8_lossy(&bytes[..valid]);
        let line_start = before.rfind('\n').map_or(0, |n| n + 1);
        let pos = Pos {
            line: u32::try_from(before.matches('\n').count() + 1).unwrap_or(u32::MAX),
            column: u32::try_from(before[line_start..].chars().count() + 1).unwrap_or(u32::MAX),
            len: 1,
        };
        let message = format!(
            "the file is not valid UTF-8 (byte 0x{:02X})",
            bytes.get(valid).copied().unwrap_or_default()
        );
        fail(
            String::from_utf8_lossy(&bytes).into_owned(),
            Diagnostic::new(pos, message)
                .label("not UTF-8")
                .hint(format!("save the {what} as UTF-8")),
        )
    })
}

/// Validates a test file's text; `path` is recorded in the spec and resolves `workspace`.
///
/// # Errors
/// Every problem found, in file order.
pub fn load_str(path: &Path, source: &str) -> Result<TestSpec, Vec<Diagnostic>> {
    validate(&mut Ctx::default(), path, source)
}

/// [`load_str`], also checking what the file names on disk (its workspace exists, its
/// `covers:` name rules of the workspace's instruction files), as `run` does.
///
/// # Errors
/// Every problem found, in file order.
pub fn load_str_checked(path: &Path, source: &str) -> Result<TestSpec, Vec<Diagnostic>> {
    let mut ctx = Ctx {
        check_workspace: true,
        ..Ctx::default()
    };
    validate(&mut ctx, path, source)
}

fn validate(ctx: &mut Ctx, path: &Path, source: &str) -> Result<TestSpec, Vec<Diagnostic>> {
    let root = match node::parse(source) {
        Ok(root) => root,
        Err(err) => {
            return Err(vec![
                Diagnostic::new(
                    err.pos.unwrap_or_default(),
                    format!("invalid YAML: {}", err.message),
                )
                .label("here"),
            ]);
        }
    };
    let spec = ctx.test(path, &root);
    let mut diags = std::mem::take(&mut ctx.diags);
    if diags.is_empty() {
        spec.ok_or_else(Vec::new)
    } else {
        diags.sort_by_key(|d| (d.pos.line, d.pos.column));
        Err(diags)
    }
}

/// The diagnostic of a workspace `dir` (`written` in the test file `test`) that lies above
/// the git repository holding the test: a test moved to another directory (an accepted
/// draft moved up from `drafts/`) whose `workspace: ../../..` now names the repository's
/// parent, which would be copied whole. It names the path to write: the repository's root,
/// relative to the test's directory. `None` when the test is in no repository or the
/// workspace is inside it (or beside it).
fn above_repository(test: &Path, dir: &Path, written: &Path, pos: Pos) -> Option<Diagnostic> {
    let test_dir = std::fs::canonicalize(test.parent()?).ok()?;
    let root = test_dir
        .ancestors()
        .find(|d| d.join(".git").exists())?
        .to_owned();
    let dir = std::fs::canonicalize(dir).ok()?;
    if dir == root || !root.starts_with(&dir) {
        return None;
    }
    let up = test_dir.strip_prefix(&root).ok()?.components().count();
    let fix = if up == 0 {
        ".".to_owned()
    } else {
        vec![".."; up].join("/")
    };
    Some(
        Diagnostic::new(
            pos,
            format!(
                "the workspace `{}` is above the repository that holds this test",
                written.display()
            ),
        )
        .label(format!(
            "resolves to {}, above the repository {}",
            super::diagnostic::display_path(&dir),
            super::diagnostic::display_path(&root)
        ))
        .hint(format!(
            "write `workspace: {fix}` for the repository's root: a workspace is relative to the test file's directory, so a test moved to another directory (a draft moved up from `drafts/`) needs its `workspace:` changed too"
        )),
    )
}

/// The mapping entries of one YAML mapping, looked up by key.
struct Fields<'a> {
    entries: &'a [(Key, Node)],
    pos: Pos,
}

impl<'a> Fields<'a> {
    fn get(&self, key: &str) -> Option<&'a Node> {
        self.entries
            .iter()
            .find(|(k, _)| k.name == key)
            .map(|(_, v)| v)
    }
    fn key(&self, key: &str) -> Option<&'a Key> {
        self.entries
            .iter()
            .find(|(k, _)| k.name == key)
            .map(|(k, _)| k)
    }
    fn key_pos(&self, key: &str) -> Pos {
        self.key(key).map_or(self.pos, |k| k.pos)
    }
}

#[derive(Default)]
struct Ctx {
    diags: Vec<Diagnostic>,
    /// Check that `workspace:` names an existing directory (when loading a file from disk;
    /// `load_str` does not touch the file system).
    check_workspace: bool,
    /// The variant names the test declares (for `variants:` beside assertions).
    declared_variants: Vec<String>,
    /// The review threshold of suite defaults (`judge.threshold`), for reviews that set
    /// none.
    default_threshold: Option<u8>,
    /// The test's `mock:` MCP servers, for checking assertions on their tools at load.
    mocks: crate::spec::McpMocks,
    /// The names of the test's `user.knows` facts, for `elicited:`; `None` when the test
    /// has no `user:` (conversation assertions are then errors).
    user_facts: Option<Vec<String>>,
}

impl Ctx {
    pub(super) fn push(&mut self, diag: Diagnostic) {
        self.diags.push(diag);
    }

    pub(super) fn type_error(&mut self, node: &Node, key: &str, expected: &str) {
        // `yes`, `no`, `on`, `1.0` are not strings in YAML; quoting makes them one.
        let hint = (expected == "a string"
            && matches!(node.value, Value::Bool(_) | Value::Int(_) | Value::Float(_)))
        .then(|| "quote the value to make it a string, e.g. \"yes\"".to_owned());
        self.push(
            Diagnostic::new(
                node.pos,
                format!(
                    "`{key}` must be {expected}, found {}",
                    node.value.type_name()
                ),
            )
            .label(format!("expected {expected}"))
            .maybe_hint(hint),
        );
    }

    pub(super) fn map<'a>(&mut self, node: &'a Node, what: &str) -> Option<Fields<'a>> {
        match &node.value {
            Value::Map(entries) => Some(Fields {
                entries,
                pos: node.pos,
            }),
            _ => {
                self.type_error(node, what, "a mapping");
                None
            }
        }
    }

    pub(super) fn unknown_keys(&mut self, fields: &Fields<'_>, allowed: &[&str], context: &str) {
        for (key, _) in fields.entries {
            if !allowed.contains(&key.name.as_str()) {
                let hint = did_you_mean(&key.name, allowed.iter().copied())
                    .map(|s| format!("did you mean `{s}`?"))
                    .or_else(|| Some(format!("allowed keys here: {}", list(allowed))));
                self.push(
                    Diagnostic::new(key.pos, format!("unknown key `{}` in {context}", key.name))
                        .label("unknown key")
                        .maybe_hint(hint),
                );
            }
        }
    }

    pub(super) fn string(&mut self, node: &Node, key: &str) -> Option<String> {
        match &node.value {
            Value::Str(s) => Some(s.clone()),
            _ => {
                self.type_error(node, key, "a string");
                None
            }
        }
    }

    pub(super) fn non_empty_string(&mut self, node: &Node, key: &str) -> Option<String> {
        let s = self.string(node, key)?;
        if s.trim().is_empty() {
            self.push(
                Diagnostic::new(node.pos, format!("`{key}` must not be empty")).label("empty"),
            );
            return None;
        }
        Some(s)
    }

    pub(super) fn bool(&mut self, node: &Node, key: &str) -> Option<bool> {
        match &node.value {
            Value::Bool(b) => Some(*b),
            _ => {
                self.type_error(node, key, "a boolean (true or false)");
                None
            }
        }
    }

    /// A `{min, max}` range of counts under `what` (`run_count`, `user_turns`): at least one
    /// bound, `min` not above `max`; `hint` says how to write one when neither is given.
    /// `None` after reporting what is wrong.
    pub(super) fn count_range(
        &mut self,
        fields: &Fields<'_>,
        what: &str,
        hint: &str,
    ) -> Option<(Option<u32>, Option<u32>)> {
        let min = fields.get("min").and_then(|n| self.count(n, "min"));
        let max = fields.get("max").and_then(|n| self.count(n, "max"));
        if fields.get("min").is_none() && fields.get("max").is_none() {
            self.push(
                Diagnostic::new(fields.pos, format!("`{what}` needs `min:`, `max:` or both"))
                    .hint(hint),
            );
            return None;
        }
        if let (Some(lo), Some(hi)) = (min, max)
            && lo > hi
        {
            self.push(
                Diagnostic::new(
                    fields.key_pos("max"),
                    format!("contradiction: `min: {lo}` is above `max: {hi}`"),
                )
                .label("below min"),
            );
            return None;
        }
        Some((min, max))
    }

    pub(super) fn count(&mut self, node: &Node, key: &str) -> Option<u32> {
        match &node.value {
            Value::Int(i) => match u32::try_from(*i) {
                Ok(n) => Some(n),
                Err(_) => {
                    self.push(
                        Diagnostic::new(
                            node.pos,
                            format!("`{key}` must be a whole number ≥ 0, found {i}"),
                        )
                        .label("out of range"),
                    );
                    None
                }
            },
            _ => {
                self.type_error(node, key, "a whole number");
                None
            }
        }
    }

    /// A test file's top-level keys, each checked to be one a test has.
    fn test_fields<'n>(&mut self, root: &'n Node) -> Option<Fields<'n>> {
        let Value::Map(entries) = &root.value else {
            self.push(
                Diagnostic::new(
                    root.pos,
                    "a test file must be a mapping with `name`, `prompt` and `assertions`",
                )
                .label(format!("found {}", root.value.type_name())),
            );
            return None;
        };
        let fields = Fields {
            entries,
            pos: Pos {
                line: 1,
                column: 1,
                len: 0,
            },
        };
        self.unknown_keys(&fields, TEST_KEYS, "a test");
        Some(fields)
    }

    pub(super) fn test(&mut self, path: &Path, root: &Node) -> Option<TestSpec> {
        let fields = self.test_fields(root)?;
        let name = self
            .required(&fields, "name")
            .and_then(|n| self.non_empty_string(n, "name"));
        let is_routing = fields.get("routing").is_some();
        if is_routing {
            self.not_with_routing(&fields);
        }
        let prompt = if is_routing {
            Some(String::new())
        } else {
            self.required(&fields, "prompt")
                .and_then(|n| self.non_empty_string(n, "prompt"))
        };
        let description = fields
            .get("description")
            .and_then(|n| self.string(n, "description"));
        let agents = self.agents(&fields);
        let (workspace, workspace_git) = self.workspace_key(path, &fields);
        let setup = fields
            .get("setup")
            .map(|n| self.setup(n))
            .unwrap_or_default();
        let env = fields.get("env").map(|n| self.env(n)).unwrap_or_default();
        let inputs = fields
            .get("inputs")
            .map(|n| self.inputs(n, path))
            .unwrap_or_default();
        let timeout = fields
            .get("timeout")
            .and_then(|n| self.duration(n, "timeout"));
        let max_turns = fields.get("max_turns").and_then(|n| self.max_turns(n));
        let model = fields
            .get("model")
            .and_then(|n| self.non_empty_string(n, "model"));
        let runs = fields.get("runs").and_then(|n| self.runs(n));
        let min_pass = fields.get("min_pass").and_then(|n| self.min_pass(n, runs));
        let variants = fields
            .get("variants")
            .map(|n| self.variants(n, path))
            .unwrap_or_default();
        self.declared_variants = variants.iter().map(|v| v.name.clone()).collect();
        let (mcp_servers, mcp_mocks) = fields
            .get("mcp_servers")
            .map(|n| self.mcp_servers(n, path))
            .unwrap_or_default();
        self.mocks = mcp_mocks.clone();
        let user = self.user_key(&fields);
        let assertions = if is_routing {
            Vec::new()
        } else {
            self.required(&fields, "assertions")
                .map(|n| self.assertions(n))
                .unwrap_or_default()
        };
        let plugins = fields
            .get("plugins")
            .map(|n| self.plugins(n, path))
            .unwrap_or_default();
        let routing = self.routing_key(&fields, path, workspace.as_deref(), &plugins);
        let sandbox = fields.get("sandbox").and_then(|n| self.sandbox_setting(n));
        let hooks = fields.get("hooks").and_then(|n| self.hooks_setting(n));
        let network = fields
            .get("network")
            .map(|n| self.network(n))
            .unwrap_or_default();
        let limits = fields
            .get("limits")
            .map(|n| self.limits(n))
            .unwrap_or_default();
        let covers = fields
            .get("covers")
            .map(|n| {
                let dir = super::resolve_workspace(path, workspace.as_deref());
                self.covers(n, Some(&dir))
            })
            .unwrap_or_default();

        Some(TestSpec {
            file: path.to_owned(),
            name: name?,
            description,
            prompt: prompt?,
            agent: agents
                .first()
                .cloned()
                .unwrap_or_else(|| AgentTarget::new(AgentKind::Claude)),
            agents,
            workspace,
            workspace_git,
            setup,
            env,
            inputs,
            timeout,
            max_turns,
            model,
            runs,
            min_pass,
            mcp_servers,
            mcp_mocks,
            plugins,
            assertions,
            variants,
            variant: None,
            shard_runs: None,
            sandbox,
            hooks,
            network,
            limits,
            covers,
            coverage_exclude: Vec::new(),
            judge_trust: super::judge_gate::JudgeTrust::default(),
            stop: crate::spec::routing::Stop::Never,
            routing_case: None,
            user: user.map(std::sync::Arc::new),
            routing: routing.map(std::sync::Arc::new),
            draft: self.draft_key(&fields),
        })
    }

    /// `routing:` with its `stop:` (a `stop:` without `routing:` is an error).
    fn routing_key(
        &mut self,
        fields: &Fields<'_>,
        path: &Path,
        workspace: Option<&Path>,
        plugins: &[PathBuf],
    ) -> Option<crate::spec::routing::Routing> {
        let stop = fields.get("stop").and_then(|n| self.stop(n));
        let Some(node) = fields.get("routing") else {
            if fields.get("stop").is_some() {
                self.push(
                    Diagnostic::new(fields.key_pos("stop"), "`stop` belongs to routing suites")
                        .label("without `routing:`")
                        .hint("a test's agent always runs to its end; `stop:` applies to the prompts of `routing:`"),
                );
            }
            return None;
        };
        let dir = super::resolve_workspace(path, workspace);
        self.routing(
            node,
            stop.unwrap_or(crate::spec::routing::Stop::FirstCall),
            &dir,
            plugins,
        )
    }

    /// `draft: true` (default false).
    fn draft_key(&mut self, fields: &Fields<'_>) -> bool {
        let draft = fields.get("draft").and_then(|n| self.bool(n, "draft"));
        draft.unwrap_or(false)
    }

    /// `user:`, with its facts' names kept for the conversation assertions read after it.
    fn user_key(&mut self, fields: &Fields<'_>) -> Option<crate::spec::user::User> {
        let node = fields.get("user")?;
        let user = self.user(node);
        self.user_facts = Some(
            user.as_ref()
                .map(|u| u.knows.keys().cloned().collect())
                .unwrap_or_default(),
        );
        user
    }

    /// The keys a routing suite can not have, each an error saying why.
    fn not_with_routing(&mut self, fields: &Fields<'_>) {
        for (key, why) in routing::NOT_WITH_ROUTING {
            if fields.get(key).is_some() {
                self.push(
                    Diagnostic::new(
                        fields.key_pos(key),
                        format!("`{key}` does not go with `routing:`"),
                    )
                    .label("in a routing suite")
                    .hint(*why),
                );
            }
        }
    }

    /// `workspace:` (a path, or `{path, git}`), checked to exist when the loader checks
    /// workspaces.
    fn workspace_key(
        &mut self,
        path: &Path,
        fields: &Fields<'_>,
    ) -> (Option<std::path::PathBuf>, bool) {
        let (workspace, workspace_git) = match fields.get("workspace") {
            Some(n) => self.workspace(n),
            None => (None, false),
        };
        if let (true, Some(n), Some(w)) =
            (self.check_workspace, fields.get("workspace"), &workspace)
        {
            let dir = super::resolve_workspace(path, Some(w));
            if !dir.is_dir() {
                self.push(
                    Diagnostic::new(n.pos, "the workspace directory does not exist")
                        .label(format!(
                            "resolves to {}",
                            super::diagnostic::display_path(&dir)
                        ))
                        .hint("a relative workspace is relative to the test file's directory"),
                );
            } else if let Some(diagnostic) = above_repository(path, &dir, w, n.pos) {
                self.push(diagnostic);
            }
        }
        (workspace, workspace_git)
    }

    /// `max_turns:`, at least 1.
    fn max_turns(&mut self, n: &Node) -> Option<u32> {
        let turns = self.count(n, "max_turns")?;
        if turns == 0 {
            self.push(Diagnostic::new(n.pos, "`max_turns` must be at least 1").label("zero"));
            return None;
        }
        Some(turns)
    }

    /// `runs:`, from 1 to [`super::MAX_RUNS`].
    fn runs(&mut self, n: &Node) -> Option<u32> {
        let runs = self.count(n, "runs")?;
        if !(1..=super::MAX_RUNS).contains(&runs) {
            self.push(
                Diagnostic::new(
                    n.pos,
                    format!(
                        "`runs` must be between 1 and {}, found {runs}",
                        super::MAX_RUNS
                    ),
                )
                .label("out of range"),
            );
            return None;
        }
        Some(runs)
    }

    /// `min_pass:`, at least 1 and at most the test's `runs`.
    fn min_pass(&mut self, n: &Node, runs: Option<u32>) -> Option<u32> {
        let k = self.count(n, "min_pass")?;
        if k == 0 {
            self.push(
                Diagnostic::new(n.pos, "`min_pass` must be at least 1")
                    .label("zero")
                    .hint("a test that passes with no passing run could never fail"),
            );
            return None;
        }
        if let Some(runs) = runs.filter(|r| k > *r) {
            self.push(
                Diagnostic::new(
                    n.pos,
                    format!("`min_pass: {k}` is more than the test's `runs: {runs}`"),
                )
                .label("can never be reached")
                .hint("min_pass counts passing runs out of `runs`"),
            );
            return None;
        }
        Some(k)
    }

    pub(super) fn required<'a>(&mut self, fields: &Fields<'a>, key: &str) -> Option<&'a Node> {
        let node = fields.get(key);
        if node.is_none() {
            self.push(
                Diagnostic::new(fields.pos, format!("missing required key `{key}`"))
                    .label(format!("this test has no `{key}`"))
                    .hint(format!("add `{key}:` at the top level of the test")),
            );
        }
        node
    }

    pub(super) fn agent_name(&mut self, node: &Node, key: &str) -> Option<AgentKind> {
        let name = self.non_empty_string(node, key)?;
        match name.parse::<AgentKind>() {
            Ok(kind) => Some(kind),
            Err(e) => {
                self.push(
                    Diagnostic::new(node.pos, format!("unknown agent `{name}`"))
                        .label("unknown agent")
                        .hint(e.hint),
                );
                None
            }
        }
    }
}

fn list(items: &[&str]) -> String {
    items
        .iter()
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

mod agents;
mod assertion;
mod budget;
mod commands;
mod covers;
pub(super) mod discovery;
mod exclude;
mod fence;
mod files;
mod kinds;
mod mcp;
mod plugins;
mod review;
mod routing;
pub(super) mod suite;
mod tool;
mod user;
mod values;
mod variants;

#[cfg(test)]
pub(in crate::spec) use exclude::COVERAGE_KEYS;
#[cfg(test)]
pub(in crate::spec) use suite::{JUDGE_KEYS, SUITE_KEYS};
pub(in crate::spec) use tool::CALL_KEYS;

/// Every assertion kind's key, as the kinds table lists them.
#[cfg(test)]
pub(in crate::spec) fn kind_keys() -> impl Iterator<Item = &'static str> {
    kinds::keys()
}

#[cfg(test)]
mod tests;
