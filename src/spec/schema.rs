//! The JSON Schema of test files, for editors: completion and checking as a test is typed.
//!
//! Test files are validated by the loader (`load/`), which reports every problem with its
//! position; the schema describes the same syntax for tools outside aptitude (the YAML
//! language server behind VS Code's and other editors' YAML support, CI linters). It is
//! generated from the types below by schemars, as JSON Schema draft-07 (the draft every
//! YAML language server supports), and checked in at [`SCHEMA_PATH`]; a unit test fails
//! when the checked-in file differs from what the types generate, and tests tie the types
//! to the loader's tables (every test key, tool key and assertion kind appears, no more).
//!
//! A test file opts in with a modeline on its first line:
//! `# yaml-language-server: $schema=<path or URL of aptitude-test.schema.json>`.
//!
//! These types only describe; nothing deserializes into them.

use std::collections::BTreeMap;

use schemars::JsonSchema;

/// Where the generated schema is checked in, relative to the repository root.
pub const SCHEMA_PATH: &str = "schema/aptitude-test.schema.json";

/// The schema of a test file (`*.aptitude.yaml`), as pretty-printed JSON with a final
/// newline.
pub fn test_file_schema() -> String {
    let generator = schemars::generate::SchemaSettings::draft07().into_generator();
    let mut schema = generator.into_root_schema_for::<TestFile>().to_value();
    not_nullable(&mut schema);
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}

/// The checked-in test file schema ([`SCHEMA_PATH`]), as `aptitude init` writes it: a unit
/// test keeps it equal to [`test_file_schema`], so the binary does not carry schemars and
/// the types to generate it again (a release binary stays within 10 MB).
pub const TEST_FILE_SCHEMA: &str = include_str!("../../schema/aptitude-test.schema.json");

/// Where the schema of suite defaults files (`aptitude.yaml`) is checked in.
pub const SUITE_SCHEMA_PATH: &str = "schema/aptitude-suite.schema.json";

/// The schema of a suite defaults file (`aptitude.yaml`), as pretty-printed JSON with a
/// final newline.
pub fn suite_file_schema() -> String {
    let generator = schemars::generate::SchemaSettings::draft07().into_generator();
    let mut schema = generator.into_root_schema_for::<SuiteFile>().to_value();
    not_nullable(&mut schema);
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}

/// Removes the `null` that schemars adds to every `Option` field: an optional key is left
/// out, never `null` (the loader rejects `key: ~`). Only the exact forms schemars writes
/// are removed — `"type": [T, "null"]` and an `anyOf` member `{"type": "null"}` — so a
/// described `null` (a parameter compared to null) stays.
fn not_nullable(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            if let Some(Value::Array(types)) = map.get_mut("type") {
                types.retain(|t| t != "null");
                if let [only] = types.as_slice() {
                    let only = only.clone();
                    map.insert("type".to_owned(), only);
                }
            }
            if let Some(Value::Array(any_of)) = map.get_mut("anyOf") {
                any_of.retain(|member| *member != serde_json::json!({"type": "null"}));
                if let [only] = any_of.as_slice() {
                    let only = only.clone();
                    map.remove("anyOf");
                    map.insert("allOf".to_owned(), Value::Array(vec![only]));
                }
            }
            map.values_mut().for_each(not_nullable);
        }
        Value::Array(items) => items.iter_mut().for_each(not_nullable),
        _ => {}
    }
}

/// An aptitude test: a prompt, a workspace and assertions about what the agent did; or a
/// routing suite: prompts per skill that should and should not trigger it.
#[derive(JsonSchema)]
#[schemars(title = "aptitude test file")]
#[schemars(extend("oneOf" = [
    {"required": ["prompt", "assertions"], "not": {"required": ["routing"]}},
    {"required": ["routing"], "not": {"anyOf": [
        {"required": ["prompt"]}, {"required": ["assertions"]}, {"required": ["variants"]},
        {"required": ["min_pass"]}, {"required": ["covers"]}, {"required": ["user"]}
    ]}}
]))]
#[serde(deny_unknown_fields)]
#[expect(
    dead_code,
    reason = "describes the YAML for schemars; never constructed"
)]
struct TestFile {
    /// The test's name, shown in every report.
    name: NonEmpty,
    /// Free text about the test.
    description: Option<String>,
    /// What the agent is asked (a routing suite has none: its prompts are under
    /// `routing:`).
    prompt: Option<NonEmpty>,
    /// The agent CLI that runs the test (default: claude, or `run --agent`).
    agent: Option<AgentName>,
    /// Several agents: the test runs once on each (instead of `agent`).
    #[schemars(length(min = 1))]
    agents: Option<Vec<AgentEntry>>,
    /// The directory copied for the run, relative to the test file's directory (default:
    /// that directory).
    workspace: Option<WorkspaceField>,
    /// Shell commands run in the workspace copy before the agent.
    setup: Option<OneOrMany>,
    /// Files outside the workspace that the agent depends on (e.g. a CLI's source): globs
    /// relative to the test file's directory; a directory means every file below it. Each
    /// must match at least one file. They are part of the test's fingerprint (`run
    /// --reuse`), never copied.
    inputs: Option<OneOrMany>,
    /// Environment variables for the agent (and setup and verify commands).
    env: Option<BTreeMap<String, Scalar>>,
    /// How long the agent may run (default 10m).
    timeout: Option<Duration>,
    /// The most turns the agent may take; passed to the agent.
    #[schemars(range(min = 1))]
    max_turns: Option<u32>,
    /// The model, passed to the agent.
    model: Option<NonEmpty>,
    /// How many isolated runs the test gets (default: `--runs`, else 1).
    #[schemars(range(min = 1, max = 100))]
    runs: Option<u32>,
    /// How many runs must pass for the test to pass (default: every run); at most `runs`.
    #[schemars(range(min = 1))]
    min_pass: Option<u32>,
    /// MCP servers attached to the agent for the run, by name (its tools are
    /// `mcp__<name>__<tool>`); nothing else is loaded. `${VAR}` in a value expands from
    /// aptitude's environment and is redacted.
    mcp_servers: Option<BTreeMap<McpServerName, McpServerEntry>>,
    /// What must hold after the run; at least one (a routing suite has none: it asserts
    /// which skill each prompt triggers).
    #[schemars(length(min = 1))]
    assertions: Option<Vec<AssertionItem>>,
    /// Variants of the workspace and settings; the test as written is `default`.
    variants: Option<BTreeMap<String, VariantField>>,
    /// Claude Code plugin directories loaded for the run (`--plugin-dir`), relative to the
    /// test file's directory; on an agent without plugins the test is `error`.
    plugins: Option<OneOrMany>,
    /// Whether the test's agent, setup and verify commands run sandboxed: `on` (the
    /// default) or `off` (every report then says so). `run --sandbox` wins.
    sandbox: Option<SandboxField>,
    /// Whether the agent's own hooks run: `none` (the default: no hook of the workspace's
    /// settings, of a plugin or written during the run runs) or `workspace` (they run, as
    /// they would for a user; for tests of the hooks themselves).
    hooks: Option<HooksField>,
    /// Hosts the sandbox may reach besides the model and the test's MCP servers, through
    /// aptitude's allowlist proxy (`HTTPS_PROXY`): `registry.npmjs.org`, `*.pypi.org` (any
    /// subdomain), `github.com:443`.
    network: Option<Hosts>,
    /// What one run may use before it is stopped as `error`, kind `limit`; unset fields
    /// take the suite's, then the defaults (4 GiB memory, 512 processes, 2 GiB disk).
    limits: Option<LimitsField>,
    /// Who answers the agent's questions: a `script` of fixed replies tried first, and
    /// with a `goal` a simulated user (a tools-less model call) for the rest. The conversation
    /// assertions (`asked`, `did_not_ask`, `user_turns`, `elicited`) need it
    /// (docs/conversations.md).
    user: Option<UserField>,
    /// The rules of the workspace's instruction files (AGENTS.md, CLAUDE.md, SKILL.md, …)
    /// this test puts to work: a rule id (`R1a2b3c4d`, listed by `aptitude coverage`), `#`
    /// and a heading path (`# Testing > Before you commit`), or a `"quoted"` part of a
    /// rule's text. Each must name at least one rule.
    covers: Option<OneOrMany>,
    /// A routing suite instead of `prompt` and `assertions`: per skill of the workspace
    /// (`.claude/skills/<name>/SKILL.md`, or where another agent looks), the prompts that
    /// should trigger it and the near-misses that should not. Every prompt runs `runs`
    /// times on every agent, with every skill installed; reports give each skill's recall
    /// and false-trigger rate per agent (docs/routing.md).
    #[schemars(length(min = 1))]
    routing: Option<BTreeMap<String, RoutingSkillField>>,
    /// When each run of a routing suite's prompt stops: `first_call` (the default: at the
    /// agent's first tool or skill call, its decision; cheaper) or `never` (the agent
    /// finishes; a skill loaded after another call then counts).
    stop: Option<StopField>,
    /// `true` in a file drafted by `aptitude init --skills` or `--rules` (a model wrote
    /// it): it loads and runs as any other, and `validate` lists it as a draft until a
    /// person has reviewed it and removed the key.
    draft: Option<bool>,
}

/// `user:` — needs `script`, `goal` or both.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("anyOf" = [{"required": ["script"]}, {"required": ["goal"]}]))]
#[expect(dead_code, reason = "schema only")]
struct UserField {
    /// How the user speaks and what they do not do; shown to the simulated user only.
    persona: Option<NonEmpty>,
    /// What the user wants, for a simulated user answering what the script does not (not
    /// built yet: such a question gets no reply, and `user_turns` and `elicited` are then
    /// error); without it, such a question gets no reply and the conversation ends.
    goal: Option<NonEmpty>,
    /// Facts revealed only when asked, by name; the judge never sees them. A fact counts
    /// as revealed (`elicited`) when its value is in one of the user's replies.
    knows: Option<BTreeMap<String, Scalar>>,
    /// Fixed replies, tried in order before any model: the first line whose `when`
    /// matches the question (a regex, ignoring case) gives its `say`.
    script: Option<Vec<ScriptLineField>>,
    /// The most replies the user gives (default 4).
    #[schemars(range(min = 1, max = 20))]
    max_turns: Option<u32>,
}

/// One line of `user.script`.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "schema only")]
struct ScriptLineField {
    /// A regex matched against the agent's question, anywhere, ignoring case.
    when: NonEmpty,
    /// The reply, sent as written.
    say: NonEmpty,
}

/// One skill of `routing:`.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "schema only")]
struct RoutingSkillField {
    /// Prompts that should trigger this skill (each prompt should trigger at most one).
    should_trigger: Option<Vec<NonEmpty>>,
    /// Near-misses: prompts that should not trigger this skill (often another skill's).
    should_not_trigger: Option<Vec<NonEmpty>>,
}

/// `first_call` or `never`.
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
#[expect(dead_code, reason = "schema only")]
enum StopField {
    /// Stop at the agent's first tool or skill call.
    FirstCall,
    /// Let the agent finish.
    Never,
}

/// `limits:`.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "schema only")]
struct LimitsField {
    /// Resident memory of every process of the run together: bytes, or a size such as
    /// `4GiB`, `512MB`.
    memory: Option<Size>,
    /// Processes alive at once (at least 1).
    #[schemars(range(min = 1))]
    processes: Option<u32>,
    /// What the run may write (workspace growth, its home and `/tmp`): bytes or a size.
    disk: Option<Size>,
}

/// Bytes, or a number with a unit (`B`, `KB`/`MB`/`GB`, `KiB`/`MiB`/`GiB`, `K`/`M`/`G`).
#[derive(JsonSchema)]
#[serde(untagged)]
#[expect(dead_code, reason = "schema only")]
enum Size {
    /// Bytes.
    Bytes(#[schemars(range(min = 1))] u64),
    /// A number with a unit.
    Text(
        #[schemars(regex(
            pattern = r"^\s*[0-9]+(\.[0-9]+)?\s*([KkMmGg](i?[Bb])?|[Bb]|[KkMmGg][Bb])?\s*$"
        ))]
        String,
    ),
}

/// `on` or `off` (or a boolean).
#[derive(JsonSchema)]
#[serde(untagged)]
#[expect(dead_code, reason = "schema only")]
enum SandboxField {
    /// `on` or `off`.
    Word(#[schemars(regex(pattern = r"^(on|off|true|false|yes|no)$"))] String),
    /// `true` (on) or `false` (off).
    Bool(bool),
}

/// `none` or `workspace` (or `false`, which is `none`).
#[derive(JsonSchema)]
#[serde(untagged)]
#[expect(dead_code, reason = "schema only")]
enum HooksField {
    /// `none` or `workspace`.
    Word(#[schemars(regex(pattern = r"^(none|off|false|no|workspace)$"))] String),
    /// `false` (none).
    Bool(bool),
}

/// A host or a list of hosts.
#[derive(JsonSchema)]
#[serde(untagged)]
#[expect(dead_code, reason = "schema only")]
enum Hosts {
    /// One host.
    One(Host),
    /// Several hosts.
    Many(#[schemars(length(min = 1))] Vec<Host>),
}

/// `HOST`, `*.DOMAIN`, either with `:PORT`.
#[derive(JsonSchema)]
#[serde(transparent)]
#[expect(dead_code, reason = "schema only")]
struct Host(
    #[schemars(regex(pattern = r"^(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:[0-9]{1,5})?$"))] String,
);

/// `aptitude.yaml`: defaults for every test in its directory and below (the nearest file
/// wins field by field; a test's own keys win over all).
#[derive(JsonSchema)]
#[schemars(title = "aptitude suite defaults (aptitude.yaml)")]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "schema only")]
struct SuiteFile {
    /// The agent of tests that name none.
    agent: Option<AgentName>,
    /// The agents of tests that name none (instead of `agent`).
    #[schemars(length(min = 1))]
    agents: Option<Vec<AgentEntry>>,
    /// The model, passed to the agent.
    model: Option<NonEmpty>,
    /// How long each agent run may take.
    timeout: Option<Duration>,
    /// The most turns the agent may take.
    #[schemars(range(min = 1))]
    max_turns: Option<u32>,
    /// How many isolated runs each test gets.
    #[schemars(range(min = 1, max = 100))]
    runs: Option<u32>,
    /// How many runs must pass; at most `runs`.
    #[schemars(range(min = 1, max = 100))]
    min_pass: Option<u32>,
    /// Environment variables, merged by name with a test's (the test's win).
    env: Option<BTreeMap<String, Scalar>>,
    /// MCP servers, merged by name with a test's (the test's win).
    mcp_servers: Option<BTreeMap<McpServerName, McpServerEntry>>,
    /// Defaults for every `stdout: {review}` assertion that does not set them.
    judge: Option<JudgeDefaults>,
    /// Whether the tests below run sandboxed (`on`, the default, or `off`).
    sandbox: Option<SandboxField>,
    /// Whether the agent's own hooks run in the tests below (`none`, the default, or
    /// `workspace`).
    hooks: Option<HooksField>,
    /// Hosts every test below may reach through the allowlist proxy, added to a test's own.
    network: Option<Hosts>,
    /// Limits of every run below, field by field under a test's own.
    limits: Option<LimitsField>,
    /// What `aptitude coverage` counts of the instruction files.
    coverage: Option<CoverageDefaults>,
}

/// `coverage:` in `aptitude.yaml`.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "schema only")]
struct CoverageDefaults {
    /// Files and sections of the instruction files left out of coverage, as
    /// `<!-- aptitude: ignore-file -->` and `<!-- aptitude: ignore -->` before a heading
    /// leave them out: `FILE` (a whole file) or `FILE#HEADING PATH` (that heading's
    /// section, its subsections included: `AGENTS.md#Release process`,
    /// `AGENTS.md#Testing > Before you commit`), the file relative to this
    /// `aptitude.yaml`'s directory. A file or heading that is not there is an error.
    exclude: Option<Vec<NonEmpty>>,
}

/// `judge:` in `aptitude.yaml`.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "schema only")]
struct JudgeDefaults {
    /// The grading model.
    model: Option<NonEmpty>,
    /// The grading agent.
    agent: Option<AgentName>,
    /// Pass at this score (1–10) or above; default 7.
    #[schemars(range(min = 1, max = 10))]
    threshold: Option<u8>,
    /// Grading calls whose median score decides.
    #[schemars(range(min = 1, max = 25))]
    votes: Option<u32>,
    /// The labels directory (people's verdicts and the judge's certificates), relative to
    /// this file; default `.aptitude/labels`.
    labels: Option<NonEmpty>,
    /// When a review's verdict counts: `always` (default; an uncertified judge is said
    /// so), `certified` (only with a valid certificate, else advisory) or `advisory`.
    gate: Option<Gate>,
    /// The lowest Wilson 95% lower bound of both the TPR and the TNR for a certificate;
    /// default 0.80.
    #[schemars(range(min = 0.0, max = 1.0))]
    min_lower_bound: Option<f64>,
}

/// When an LLM judge's verdict counts towards its test's status.
#[derive(JsonSchema)]
#[serde(rename_all = "lowercase")]
#[expect(dead_code, reason = "schema only")]
enum Gate {
    /// Always, certified or not (the default).
    Always,
    /// Only when the judge holds a valid certificate; otherwise advisory.
    Certified,
    /// Never: the score is shown.
    Advisory,
}

/// A non-empty string.
#[derive(JsonSchema)]
#[serde(transparent)]
#[expect(dead_code, reason = "schema only")]
struct NonEmpty(#[schemars(length(min = 1))] String);

/// A duration such as "30s", "5m" or "1h 30m".
#[derive(JsonSchema)]
#[serde(transparent)]
#[expect(dead_code, reason = "schema only")]
struct Duration(#[schemars(regex(pattern = r"^\s*\d"))] String);

/// A string, number or boolean (environment values).
#[derive(JsonSchema)]
#[serde(untagged)]
#[expect(dead_code, reason = "schema only")]
enum Scalar {
    /// Text.
    Text(String),
    /// A number.
    Number(f64),
    /// A boolean.
    Bool(bool),
}

/// One string or a list of strings.
#[derive(JsonSchema)]
#[serde(untagged)]
#[expect(dead_code, reason = "schema only")]
enum OneOrMany {
    /// One.
    One(NonEmpty),
    /// Several.
    Many(Vec<NonEmpty>),
}

/// The agents a test can name: each [`AgentKind`] and its other names
/// ([`AgentKind::ALIASES`]), so a new agent appears here with no edit. (The loader also
/// takes any case: `Claude-Code`.)
///
/// [`AgentKind`]: crate::spec::agent_kind::AgentKind
/// [`AgentKind::ALIASES`]: crate::spec::agent_kind::AgentKind::ALIASES
struct AgentName;

impl JsonSchema for AgentName {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "AgentName".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        use crate::spec::agent_kind::AgentKind;
        let kinds = generator.subschema_for::<AgentKind>();
        let aliases: Vec<&str> = AgentKind::ALIASES.iter().map(|(a, _)| *a).collect();
        schemars::json_schema!({
            "anyOf": [
                kinds,
                {
                    "type": "string",
                    "enum": aliases,
                    "description": "Another name of an agent: `claude-code` (Claude Code, as upstream aptitude names it), `cursor-agent` and `kiro-cli` (their binaries)."
                }
            ]
        })
    }
}

/// `agents:` entries: a name, or a name with its own model, endpoint and version pin.
#[derive(JsonSchema)]
#[serde(untagged)]
#[expect(dead_code, reason = "schema only")]
enum AgentEntry {
    /// An agent name.
    Name(AgentName),
    /// An agent with settings.
    Full(AgentEntryMap),
}

/// `{agent, model, base_url, version, versions}`.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "schema only")]
struct AgentEntryMap {
    /// The agent.
    agent: AgentName,
    /// The model for this agent (wins over the test's `model`).
    model: Option<NonEmpty>,
    /// An API-compatible endpoint (http:// or https://), set through the agent's own
    /// variable or config.
    #[schemars(regex(pattern = r"^https?://"))]
    base_url: Option<String>,
    /// The version the agent CLI must report; a mismatch stops the run before any agent
    /// starts.
    version: Option<NonEmpty>,
    /// The releases to run on, each installed into aptitude's cache and each its own
    /// result: `pinned`, `latest` (resolved once per run) or an exact version.
    #[schemars(length(min = 1))]
    versions: Option<Vec<AgentRelease>>,
}

/// `pinned`, `latest` or one exact release (`2.1.300`, `1.0.0-beta.3`).
#[derive(JsonSchema)]
#[serde(transparent)]
#[expect(dead_code, reason = "schema only")]
struct AgentRelease(
    #[schemars(regex(pattern = r"^(pinned|latest|[0-9]+(\.[0-9]+)+[A-Za-z0-9.+-]*)$"))] String,
);

/// An MCP server's name: letters, digits, `-` and single `_`.
#[derive(JsonSchema)]
#[serde(transparent)]
#[expect(dead_code, reason = "schema only")]
struct McpServerName(#[schemars(regex(pattern = r"^[A-Za-z0-9-]+(_[A-Za-z0-9-]+)*$"))] String);

/// A stdio server (`command`), a streamable HTTP server (`url`), or a server aptitude
/// serves itself (`mock`).
#[derive(JsonSchema)]
#[serde(untagged)]
#[expect(dead_code, reason = "schema only")]
enum McpServerEntry {
    /// `{command, args, env}`.
    Stdio(McpStdio),
    /// `{url, headers}`.
    Http(McpHttp),
    /// `{mock: {tools, from, server}}`.
    Mock(McpMockEntry),
}

/// `{mock: …}`.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "schema only")]
struct McpMockEntry {
    /// A server aptitude serves: scripted tools, or a recording's.
    mock: McpMock,
}

/// A mock MCP server.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "schema only")]
struct McpMock {
    /// Its tools, by name.
    tools: Option<BTreeMap<String, McpMockTool>>,
    /// A cassette (`run --record-model`) whose recorded server's tools and replies it serves.
    from: Option<NonEmpty>,
    /// The recorded server's name in `from` (default: this server's name).
    server: Option<NonEmpty>,
}

/// A mock tool.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "schema only")]
struct McpMockTool {
    /// What the agent is told the tool does.
    description: Option<String>,
    /// The JSON Schema of its input (default `{type: object}`).
    input_schema: Option<BTreeMap<String, serde_json::Value>>,
    /// The reply to every call.
    reply: Option<McpMockReply>,
    /// The replies call by call; the last repeats.
    replies: Option<Vec<McpMockReply>>,
    /// Parameters every call must match, as `params:` of a `tool:` assertion.
    expect: Option<Params>,
}

/// A reply: its text, or `{text|json, error}`.
#[derive(JsonSchema)]
#[serde(untagged)]
#[expect(dead_code, reason = "schema only")]
enum McpMockReply {
    /// The reply's text.
    Text(String),
    /// `{text: …}` or `{json: …}`, with `error: true` for a failed call.
    Full(McpMockReplyMap),
}

/// `{text, json, error}`.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "schema only")]
struct McpMockReplyMap {
    /// The reply's text.
    text: Option<String>,
    /// A JSON reply (sent as text and as structured content).
    json: Option<serde_json::Value>,
    /// Whether the call failed (`isError`).
    error: Option<bool>,
}

/// A stdio MCP server, started by the agent.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "schema only")]
struct McpStdio {
    /// The program (on `PATH`).
    command: NonEmpty,
    /// Its arguments.
    args: Option<Vec<Scalar>>,
    /// Variables added to its environment.
    env: Option<BTreeMap<String, Scalar>>,
}

/// A streamable HTTP MCP server.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "schema only")]
struct McpHttp {
    /// The endpoint (http:// or https://, or a `${VAR}`).
    #[schemars(regex(pattern = r"^(https?://|\$\{)"))]
    url: String,
    /// Request headers.
    headers: Option<BTreeMap<String, Scalar>>,
}

/// `workspace: path` or `workspace: {path, git}`.
#[derive(JsonSchema)]
#[serde(untagged)]
#[expect(dead_code, reason = "schema only")]
enum WorkspaceField {
    /// The directory.
    Path(NonEmpty),
    /// The directory, and whether its `.git` is copied too.
    Full(WorkspaceMap),
}

/// `{path, git}`.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "schema only")]
struct WorkspaceMap {
    /// The directory.
    path: Option<NonEmpty>,
    /// Copy `.git` too (default false).
    git: Option<bool>,
}

/// Which tool calls count: every call, subagents' included (`all`, the default), or only
/// the main agent's (`main`).
#[derive(JsonSchema)]
#[serde(rename_all = "lowercase")]
#[expect(dead_code, reason = "schema only")]
enum ScopeField {
    /// Every call.
    All,
    /// The main agent's calls only.
    Main,
}

/// A parameter value: a bare string (found anywhere in the value; also a glob or a regex by
/// its markers), one explicit matcher form, or any other value compared as JSON.
#[derive(JsonSchema)]
#[serde(untagged)]
#[expect(dead_code, reason = "schema only")]
enum ParamValue {
    /// A bare pattern.
    Bare(String),
    /// `{glob: …}`.
    Glob(GlobForm),
    /// `{regex: …}`.
    Regex(RegexForm),
    /// `{contains: …}`.
    Contains(ContainsForm),
    /// `{equals: …}`.
    Equals(EqualsForm),
    /// A number, compared as JSON.
    Number(f64),
    /// A boolean, compared as JSON.
    Bool(bool),
    /// A list, compared as JSON.
    List(Vec<serde_json::Value>),
    /// `null`, compared as JSON.
    Null(()),
}

/// `{glob: …}`: a glob over the whole value.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "schema only")]
struct GlobForm {
    /// The glob.
    glob: String,
}

/// `{regex: …}`: a regex searched anywhere in the value.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "schema only")]
struct RegexForm {
    /// The regex.
    regex: String,
}

/// `{contains: …}`: a substring.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "schema only")]
struct ContainsForm {
    /// The substring.
    contains: NonEmpty,
}

/// `{equals: …}`: any value, compared as JSON (objects too).
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "schema only")]
struct EqualsForm {
    /// The value.
    equals: serde_json::Value,
}

/// Parameter constraints by input key (or dotted path such as `edits.0.old_string`).
type Params = BTreeMap<String, ParamValue>;

/// An exit code, 0–255.
#[derive(JsonSchema)]
#[serde(transparent)]
#[expect(dead_code, reason = "schema only")]
struct ExitCode(#[schemars(range(min = 0, max = 255))] u8);

/// One assertion: exactly one kind key per list item.
#[derive(JsonSchema)]
#[serde(untagged)]
#[expect(dead_code, reason = "schema only")]
enum AssertionItem {
    /// `tool:` — was a tool called, how often, with which parameters, in which order.
    Tool(ToolItem),
    /// `stdout:` — the final answer graded 1–10 by an LLM judge.
    Stdout(StdoutItem),
    /// `exit_code:` — the last shell command's exit code.
    ExitCode(ExitCodeItem),
    /// `output_contains:` — the last shell command's stdout contains the text.
    OutputContains(OutputContainsItem),
    /// `output_equals:` — the last shell command's stdout equals the text, trimmed.
    OutputEquals(OutputEqualsItem),
    /// `error_contains:` — the last shell command's stderr contains the text.
    ErrorContains(ErrorContainsItem),
    /// `file_exists:` — a workspace file exists after the run.
    FileExists(FileExistsItem),
    /// `file_contains:` — a workspace file's content.
    FileContains(FileContainsItem),
    /// `ran:` — a shell command matching the regex ran.
    Ran(RanItem),
    /// `not_ran:` — no shell command matching the regex ran.
    NotRan(NotRanItem),
    /// `run_count:` — how many shell commands matching the pattern ran.
    RunCount(RunCountItem),
    /// `verify:` — a shell command run in the workspace after the agent.
    Verify(VerifyItem),
    /// `file_absent:` — no such workspace file after the run.
    FileAbsent(FileAbsentItem),
    /// `command_succeeded:` — a matching shell command ran and exited 0.
    CommandSucceeded(CommandSucceededItem),
    /// `wrote:` — each path was written by a tool call or changed in the workspace.
    Wrote(WroteItem),
    /// `json_file:` — a workspace file is valid JSON with the required fields.
    JsonFile(JsonFileItem),
    /// `turns:` — a budget on turns.
    Turns(TurnsItem),
    /// `cost_usd:` — a budget on cost in USD.
    CostUsd(CostUsdItem),
    /// `duration:` — a budget on the run's duration.
    Duration(DurationItem),
    /// `tool_calls:` — a budget on tool calls.
    ToolCalls(ToolCallsItem),
    /// `skill:` — was a skill invoked (Claude Code's `Skill` tool), how often, in which
    /// order.
    Skill(SkillItem),
    /// `claims: verified` — each action the final answer claims has evidence.
    Claims(ClaimsItem),
    /// `asked:` — the agent asked the test's `user:` about something (before some tools).
    Asked(AskedItem),
    /// `did_not_ask:` — the agent asked nothing about something.
    DidNotAsk(DidNotAskItem),
    /// `user_turns:` — how many replies the test's `user:` gave.
    UserTurns(UserTurnsItem),
    /// `elicited:` — which `user.knows` facts the user revealed.
    Elicited(ElicitedItem),
}

/// `skill:` and the checks of a tool assertion on its `Skill` calls.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "schema only")]
struct SkillItem {
    /// The skill's name (`deploy`, a plugin's `my-plugin:deploy`; `*` globs).
    skill: NonEmpty,
    /// Whether it must be invoked (default true).
    called: Option<bool>,
    /// Other parameters of the `Skill` calls (e.g. `args`).
    params: Option<Params>,
    /// Exactly this many calls of the skill.
    call_count: Option<u32>,
    /// At least this many calls of the skill.
    min_calls: Option<u32>,
    /// At most this many calls of the skill.
    max_calls: Option<u32>,
    /// A tool some matching call must come after (after its first call).
    called_after: Option<NonEmpty>,
    /// A tool some matching call must come before (before its last call).
    called_before: Option<NonEmpty>,
    /// Parameters of the skill's Nth call, by call number from 1.
    nth_call_params: Option<BTreeMap<String, Params>>,
    /// Parameters of the skill's first call.
    first_call_params: Option<Params>,
    /// Parameters of the skill's last call.
    last_call_params: Option<Params>,
    /// Which calls count.
    scope: Option<ScopeField>,
    /// The variants this assertion applies to (default: all).
    variants: Option<VariantNames>,
}

/// `tool:` and its checks.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "schema only")]
struct ToolItem {
    /// The tool's name (`Bash`, `Read`, `mcp__server__tool`; `*` globs).
    tool: NonEmpty,
    /// Whether it must be called (default true; false with `params` forbids matching calls).
    called: Option<bool>,
    /// Parameters the matching calls must have.
    params: Option<Params>,
    /// Exactly this many matching calls.
    call_count: Option<u32>,
    /// At least this many matching calls.
    min_calls: Option<u32>,
    /// At most this many matching calls.
    max_calls: Option<u32>,
    /// A tool some matching call must come after (after its first call).
    called_after: Option<NonEmpty>,
    /// A tool some matching call must come before (before its last call).
    called_before: Option<NonEmpty>,
    /// Parameters of the Nth call, by call number from 1.
    nth_call_params: Option<BTreeMap<String, Params>>,
    /// Parameters of the first call.
    first_call_params: Option<Params>,
    /// Parameters of the last call.
    last_call_params: Option<Params>,
    /// Which calls count.
    scope: Option<ScopeField>,
    /// The variants this assertion applies to (default: all).
    variants: Option<VariantNames>,
}

/// `stdout: {review, threshold, model, agent, votes, include_dialog}`.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "schema only")]
struct StdoutItem {
    /// The review.
    stdout: Review,
    /// The variants this assertion applies to (default: all).
    variants: Option<VariantNames>,
}

/// What the judge grades the final answer against.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "schema only")]
struct Review {
    /// The criteria, in natural language.
    review: NonEmpty,
    /// The lowest passing score on the 1–10 scale (default 7).
    #[schemars(range(min = 1, max = 10))]
    threshold: Option<u8>,
    /// The judge's model.
    model: Option<NonEmpty>,
    /// The agent CLI that grades (default: the test's agent).
    agent: Option<AgentName>,
    /// Independent grading calls whose median score decides (default 1, or
    /// `--judge-votes`).
    #[schemars(range(min = 1, max = 25))]
    votes: Option<u32>,
    /// When the verdict counts (default `judge.gate` of `aptitude.yaml`, else `always`).
    gate: Option<Gate>,
    /// The judge also sees the run's conversation with its `user:` (each question and
    /// reply), the user's words framed as untrusted; needs a `user:` (default false).
    include_dialog: Option<bool>,
}

/// Declares a list item made of one kind key (with a value of the given type) and, for
/// kinds about tool calls, an optional `scope`.
macro_rules! kind_item {
    ($(#[$doc:meta])* $name:ident { $key:ident: $ty:ty } scoped) => {
        $(#[$doc])*
        #[derive(JsonSchema)]
        #[serde(deny_unknown_fields)]
        #[expect(dead_code, reason = "schema only")]
        struct $name {
            #[doc = concat!("The `", stringify!($key), "` check.")]
            $key: $ty,
            /// Which calls count (default `all`).
            scope: Option<ScopeField>,
            /// The variants this assertion applies to (default: all).
            variants: Option<VariantNames>,
        }
    };
    ($(#[$doc:meta])* $name:ident { $key:ident: $ty:ty }) => {
        $(#[$doc])*
        #[derive(JsonSchema)]
        #[serde(deny_unknown_fields)]
        #[expect(dead_code, reason = "schema only")]
        struct $name {
            #[doc = concat!("The `", stringify!($key), "` check.")]
            $key: $ty,
            /// The variants this assertion applies to (default: all).
            variants: Option<VariantNames>,
        }
    };
}

/// Variant names: `default` (the test as written) or names declared under `variants:`.
#[derive(JsonSchema)]
#[serde(untagged)]
#[expect(dead_code, reason = "schema only")]
enum VariantNames {
    /// One name.
    One(NonEmpty),
    /// Several.
    Many(Vec<NonEmpty>),
}

/// One variant of a test: its workspace and settings changed one way.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "schema only")]
struct VariantField {
    /// Paths deleted from the workspace copy.
    remove: Option<OneOrMany>,
    /// Files written into the workspace copy: text, or `{from: FILE}` relative to the test
    /// file.
    add: Option<BTreeMap<String, AddedFile>>,
    /// Environment added to the test's.
    env: Option<BTreeMap<String, Scalar>>,
    /// The model instead of the test's.
    model: Option<NonEmpty>,
    /// The prompt instead of the test's.
    prompt: Option<NonEmpty>,
}

/// An added file's content.
#[derive(JsonSchema)]
#[serde(untagged)]
#[expect(dead_code, reason = "schema only")]
enum AddedFile {
    /// The text.
    Text(String),
    /// A file's content.
    From(AddedFrom),
}

/// `{from: FILE}`.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "schema only")]
struct AddedFrom {
    /// The file, relative to the test file's directory.
    from: NonEmpty,
}

kind_item!(
    /// `exit_code: N`.
    ExitCodeItem { exit_code: ExitCode } scoped
);
kind_item!(
    /// `output_contains: text`.
    OutputContainsItem { output_contains: NonEmpty } scoped
);
kind_item!(
    /// `output_equals: text`.
    OutputEqualsItem { output_equals: String } scoped
);
kind_item!(
    /// `error_contains: text`.
    ErrorContainsItem { error_contains: NonEmpty } scoped
);
kind_item!(
    /// `file_exists: path`.
    FileExistsItem { file_exists: NonEmpty }
);
kind_item!(
    /// `file_absent: path`.
    FileAbsentItem { file_absent: NonEmpty }
);
kind_item!(
    /// `file_contains: {path, text}` or `{path, matches}`.
    FileContainsItem { file_contains: FileContains }
);
kind_item!(
    /// `ran: regex`.
    RanItem { ran: NonEmpty } scoped
);
kind_item!(
    /// `not_ran: regex`.
    NotRanItem { not_ran: NonEmpty } scoped
);
kind_item!(
    /// `run_count: {pattern, min, max}`.
    RunCountItem { run_count: RunCount } scoped
);
kind_item!(
    /// `command_succeeded: regex` (case-insensitive).
    CommandSucceededItem { command_succeeded: NonEmpty } scoped
);
kind_item!(
    /// `verify: {run, exit_code, output_contains, output_equals, timeout}`.
    VerifyItem { verify: Verify }
);
kind_item!(
    /// `wrote: [paths]`.
    WroteItem { wrote: OneOrMany }
);
kind_item!(
    /// `json_file: {path, required}`.
    JsonFileItem { json_file: JsonFile }
);
kind_item!(
    /// `turns: {max}`.
    TurnsItem { turns: MaxCount }
);
kind_item!(
    /// `cost_usd: {max}`.
    CostUsdItem { cost_usd: MaxCost }
);
kind_item!(
    /// `duration: {max}`.
    DurationItem { duration: MaxDuration }
);
kind_item!(
    /// `tool_calls: {max, tool, scope}`.
    ToolCallsItem { tool_calls: ToolCalls }
);
kind_item!(
    /// `claims: verified`.
    ClaimsItem { claims: ClaimsCheck }
);
kind_item!(
    /// `asked: {about, before}`.
    AskedItem { asked: Asked }
);
kind_item!(
    /// `did_not_ask: {about}`.
    DidNotAskItem { did_not_ask: About }
);
kind_item!(
    /// `user_turns: {min, max}`.
    UserTurnsItem { user_turns: MinMax }
);
kind_item!(
    /// `elicited: [fact]`.
    ElicitedItem { elicited: OneOrMany }
);

/// `asked:`.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "schema only")]
struct Asked {
    /// A regex matched against each question, anywhere, ignoring case.
    about: NonEmpty,
    /// Tools the first matching question must come before (before their first call).
    before: Option<OneOrMany>,
}

/// `did_not_ask:`.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "schema only")]
struct About {
    /// A regex matched against each question, anywhere, ignoring case.
    about: NonEmpty,
}

/// Bounds on a count; `min`, `max` or both.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("anyOf" = [{"required": ["min"]}, {"required": ["max"]}]))]
#[expect(dead_code, reason = "schema only")]
struct MinMax {
    /// At least this many.
    min: Option<u32>,
    /// At most this many.
    max: Option<u32>,
}

/// The one value of `claims:`.
#[derive(JsonSchema)]
#[expect(dead_code, reason = "schema only")]
enum ClaimsCheck {
    /// Each command, file and test run the final answer claims is backed by the transcript
    /// or the workspace.
    #[serde(rename = "verified")]
    Verified,
}

/// A workspace file's content: `text` (a substring) or `matches` (a regex), not both.
#[derive(JsonSchema)]
#[serde(untagged)]
#[expect(dead_code, reason = "schema only")]
enum FileContains {
    /// A substring.
    Text(FileText),
    /// A regex.
    Matches(FileMatches),
}

/// `{path, text}`.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "schema only")]
struct FileText {
    /// The file, relative to the workspace.
    path: NonEmpty,
    /// The substring.
    text: NonEmpty,
}

/// `{path, matches}`.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "schema only")]
struct FileMatches {
    /// The file, relative to the workspace.
    path: NonEmpty,
    /// The regex.
    matches: NonEmpty,
}

/// Bounds on how many matching shell commands ran; `min`, `max` or both.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "schema only")]
struct RunCount {
    /// A regex over commands.
    pattern: NonEmpty,
    /// At least this many.
    min: Option<u32>,
    /// At most this many.
    max: Option<u32>,
}

/// A shell command run in the workspace after the agent.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "schema only")]
struct Verify {
    /// The command, run with `sh -c`.
    run: NonEmpty,
    /// The expected exit code (default 0).
    exit_code: Option<ExitCode>,
    /// A substring of its stdout.
    output_contains: Option<NonEmpty>,
    /// Its whole stdout, trimmed.
    output_equals: Option<String>,
    /// How long it may run (default 60s).
    timeout: Option<Duration>,
}

/// A JSON file, the fields it must have, and the checks of an agent's report in it.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "schema only")]
struct JsonFile {
    /// The file, relative to the workspace.
    path: NonEmpty,
    /// Fields that must be present and non-empty: paths such as `goal`,
    /// `results.0.command`, or `results[].command` (the field of each element).
    required: Option<Vec<NonEmpty>>,
    /// A path to each listed command (`results[].command`): each must match a command
    /// that ran; one whose entry is not clearly failing must have exited 0.
    commands_ran: Option<NonEmpty>,
    /// A path to values that must not be failing values (`results[].status`).
    no_failures: Option<NoFailuresField>,
    /// The array at `path` has at least `at_least` items, or as many as `at_least_of`.
    min_items: Option<MinItemsField>,
}

/// `no_failures`: a path (default failing values: fail, failed, failure, error, … in
/// docs/yaml-api.md) or `{path, values}`.
#[derive(JsonSchema)]
#[serde(untagged)]
#[expect(dead_code, reason = "schema only")]
enum NoFailuresField {
    /// The path of the values (`results[].status`).
    Path(NonEmpty),
    /// The path and the failing values.
    WithValues {
        /// The path of the values.
        path: NonEmpty,
        /// Values that mean a failure (any case).
        values: Option<Vec<NonEmpty>>,
    },
}

/// `min_items: {path, at_least}` or `{path, at_least_of}`.
#[derive(JsonSchema)]
#[serde(untagged)]
#[expect(dead_code, reason = "schema only")]
enum MinItemsField {
    /// A fixed count.
    Count {
        /// The array counted (`results`).
        path: NonEmpty,
        /// At least this many items (1 or more: 0 can never fail).
        at_least: std::num::NonZeroU32,
    },
    /// As many as another array has.
    Of {
        /// The array counted (`results`).
        path: NonEmpty,
        /// An array in the same file, or `{file, path}` in another workspace file.
        at_least_of: CountOf,
    },
}

/// The array whose items `min_items` needs at least as many of.
#[derive(JsonSchema)]
#[serde(untagged)]
#[expect(dead_code, reason = "schema only")]
enum CountOf {
    /// A path in the same file.
    Path(NonEmpty),
    /// A path in another workspace file.
    InFile {
        /// The file, relative to the workspace.
        file: NonEmpty,
        /// The array in it.
        path: NonEmpty,
    },
}

/// A budget in a count.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "schema only")]
struct MaxCount {
    /// The most allowed.
    max: u32,
}

/// A budget in USD.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "schema only")]
struct MaxCost {
    /// The most allowed, in USD.
    #[schemars(range(min = 0))]
    max: f64,
}

/// A budget in time.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "schema only")]
struct MaxDuration {
    /// The most allowed.
    max: Duration,
}

/// A budget on tool calls, of one tool or all.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "schema only")]
struct ToolCalls {
    /// The most calls allowed.
    max: u32,
    /// Only this tool's calls (default: every tool).
    tool: Option<NonEmpty>,
    /// Which calls count.
    scope: Option<ScopeField>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> serde_json::Value {
        serde_json::from_str(&test_file_schema()).unwrap()
    }

    /// The checked-in schema is what the types generate; `UPDATE_SCHEMA=1 cargo test --lib
    /// schema` rewrites it.
    #[test]
    fn checked_in_schema_is_up_to_date() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(SCHEMA_PATH);
        let generated = test_file_schema();
        if std::env::var_os("UPDATE_SCHEMA").is_some() {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &generated).unwrap();
        }
        let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            checked_in == generated,
            "{SCHEMA_PATH} is out of date: run `UPDATE_SCHEMA=1 cargo test --lib schema` and commit it"
        );
        assert!(
            TEST_FILE_SCHEMA == generated || std::env::var_os("UPDATE_SCHEMA").is_some(),
            "the schema built into the binary is the checked-in one: rebuild"
        );
    }

    /// The checked-in suite defaults schema is what the types generate; `UPDATE_SCHEMA=1
    /// cargo test --lib schema` rewrites it. It names exactly the keys the loader accepts.
    #[test]
    fn checked_in_suite_schema_is_up_to_date_and_agrees_with_the_loader() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(SUITE_SCHEMA_PATH);
        let generated = suite_file_schema();
        if std::env::var_os("UPDATE_SCHEMA").is_some() {
            std::fs::write(&path, &generated).unwrap();
        }
        let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            checked_in == generated,
            "{SUITE_SCHEMA_PATH} is out of date: run `UPDATE_SCHEMA=1 cargo test --lib schema` and commit it"
        );
        let schema: serde_json::Value = serde_json::from_str(&generated).unwrap();
        let keys = |v: &serde_json::Value| -> Vec<String> {
            let mut k: Vec<String> = v["properties"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect();
            k.sort();
            k
        };
        let sorted = |items: &[&str]| {
            let mut v: Vec<String> = items.iter().map(|s| (*s).to_owned()).collect();
            v.sort();
            v
        };
        assert_eq!(keys(&schema), sorted(super::super::load::SUITE_KEYS));
        assert_eq!(
            keys(&schema["definitions"]["JudgeDefaults"]),
            sorted(super::super::load::JUDGE_KEYS)
        );
        assert_eq!(
            keys(&schema["definitions"]["CoverageDefaults"]),
            sorted(super::super::load::COVERAGE_KEYS)
        );
        let validator = jsonschema::draft7::new(&schema).unwrap();
        let good: serde_json::Value = serde_saphyr::from_str(
            "agents: [claude, codex]\ntimeout: 5m\nruns: 3\nenv: {A: b}\njudge: {threshold: 8}\n",
        )
        .unwrap();
        assert!(validator.is_valid(&good));
        let bad: serde_json::Value = serde_saphyr::from_str("prompt: hi\n").unwrap();
        assert!(!validator.is_valid(&bad), "test-only keys are no defaults");
    }

    /// The schema names exactly the keys the loader accepts: the test's own, the tool
    /// assertion's, and one list item per assertion kind.
    #[test]
    fn schema_and_loader_agree_on_every_key() {
        let schema = schema();
        let keys = |v: &serde_json::Value| -> Vec<String> {
            let mut k: Vec<String> = v["properties"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect();
            k.sort();
            k
        };
        let sorted = |items: &[&str]| {
            let mut v: Vec<String> = items.iter().map(|s| (*s).to_owned()).collect();
            v.sort();
            v
        };
        assert_eq!(keys(&schema), sorted(super::super::load::TEST_KEYS));
        let defs = &schema["definitions"];
        for (item, kind) in [("ToolItem", "tool"), ("SkillItem", "skill")] {
            let mut item_keys = super::super::load::CALL_KEYS.to_vec();
            item_keys.extend([kind, super::super::load::ASSERTION_VARIANTS_KEY]);
            assert_eq!(keys(&defs[item]), sorted(&item_keys), "{item}");
        }
        let items = defs["AssertionItem"]["anyOf"].as_array().unwrap();
        let mut kinds: Vec<String> = items
            .iter()
            .map(|item| {
                let reference = item.get("$ref").unwrap_or(&item["allOf"][0]["$ref"]);
                let name = reference.as_str().unwrap().rsplit('/').next().unwrap();
                let required = defs[name]["required"].as_array().unwrap();
                assert_eq!(required.len(), 1, "{name} has one kind key");
                required[0].as_str().unwrap().to_owned()
            })
            .collect();
        kinds.sort();
        let mut loader: Vec<String> = super::super::load::kind_keys().map(str::to_owned).collect();
        loader.sort();
        assert_eq!(kinds, loader);
    }

    fn validator() -> jsonschema::Validator {
        jsonschema::draft7::new(&schema()).unwrap()
    }

    fn yaml_as_json(text: &str) -> serde_json::Value {
        super::super::node::parse(text).unwrap().value.to_json()
    }

    /// Every bundled example passes the schema, as an editor would check it.
    #[test]
    fn examples_pass_the_schema() {
        let validator = validator();
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let files = super::super::discover::discover(&[root.join("examples")]).unwrap();
        assert!(files.len() >= 3, "{files:?}");
        for file in files {
            let json = yaml_as_json(&std::fs::read_to_string(&file).unwrap());
            let errors: Vec<String> = validator
                .iter_errors(&json)
                .map(|e| e.to_string())
                .collect();
            assert!(errors.is_empty(), "{}: {errors:?}", file.display());
        }
    }

    /// Mistakes the loader rejects, the schema rejects too; valid forms pass both.
    #[test]
    fn schema_rejects_what_the_loader_rejects() {
        let validator = validator();
        let head = "name: t\nprompt: p\nassertions:\n";
        let valid = [
            "  - tool: Bash\n    params: {command: {glob: \"git *\"}, timeout: 3}\n",
            "  - exit_code: 0\n    scope: main\n",
            "  - file_contains: {path: a.txt, matches: \"^x\"}\n",
            "  - stdout: {review: polite, threshold: 8}\n",
            "  - wrote: a.txt\n",
        ];
        let user = "user: {goal: g, knows: {sides: 6}, script: [{when: sides, say: six}]}\n";
        let conversation = [
            "  - asked: {about: sides, before: [Write, Edit]}\n",
            "  - did_not_ask: {about: name}\n",
            "  - user_turns: {min: 1}\n",
            "  - elicited: sides\n",
        ];
        for item in conversation {
            let text = format!("{user}{head}{item}");
            assert!(
                super::super::load_str(std::path::Path::new("t.aptitude.yaml"), &text).is_ok(),
                "{item}"
            );
            assert!(validator.is_valid(&yaml_as_json(&text)), "{item}");
        }
        for bad in [
            format!("{user}{head}  - asked: {{about: sides, after: Write}}\n"),
            format!("{user}{head}  - user_turns: {{}}\n"),
            format!("user: {{persona: p}}\n{head}  - tool: Read\n"),
            format!("user: {{goal: g, max_turns: 0}}\n{head}  - tool: Read\n"),
            format!("user: {{script: [{{when: a}}]}}\n{head}  - tool: Read\n"),
            "name: r\nuser: {goal: g}\nrouting:\n  pdf: {should_trigger: [a]}\n".to_owned(),
        ] {
            assert!(
                super::super::load_str(std::path::Path::new("t.aptitude.yaml"), &bad).is_err(),
                "{bad}"
            );
            assert!(!validator.is_valid(&yaml_as_json(&bad)), "{bad}");
        }
        for item in valid {
            let text = format!("{head}{item}");
            assert!(
                super::super::load_str(std::path::Path::new("t.aptitude.yaml"), &text).is_ok(),
                "{item}"
            );
            assert!(validator.is_valid(&yaml_as_json(&text)), "{item}");
        }
        let invalid = [
            "  - tool: Read\n    calld: false\n",
            "  - exit_code: 0\n    ran: ls\n",
            "  - stdout: {review: polite, threshold: 11}\n",
            "  - tool: Bash\n    params: {command: {globb: \"git *\"}}\n",
            "  - file_contains: {path: a.txt, text: x, matches: y}\n",
            "  - file_exists: a.txt\n    scope: main\n",
            "  - turns: {max: 3, min: 1}\n",
        ];
        for item in invalid {
            let text = format!("{head}{item}");
            assert!(
                super::super::load_str(std::path::Path::new("t.aptitude.yaml"), &text).is_err(),
                "{item}"
            );
            assert!(!validator.is_valid(&yaml_as_json(&text)), "{item}");
        }
        assert!(!validator.is_valid(&yaml_as_json("name: t\nprompt: p\nassertions: []\n")));
        let routing = "name: r\nstop: never\nrouting:\n  pdf: {should_trigger: [a], should_not_trigger: [b]}\n";
        assert!(super::super::load_str(std::path::Path::new("r.aptitude.yaml"), routing).is_ok());
        assert!(
            validator.is_valid(&yaml_as_json(routing)),
            "a routing suite"
        );
        for bad in [
            "name: r\nprompt: p\nrouting:\n  pdf: {should_trigger: [a]}\n",
            "name: r\nrouting:\n  pdf: {should_triger: [a]}\n",
            "name: r\nstop: later\nrouting:\n  pdf: {should_trigger: [a]}\n",
            "name: r\nvariants: {x: {}}\nrouting:\n  pdf: {should_trigger: [a]}\n",
        ] {
            assert!(
                super::super::load_str(std::path::Path::new("r.aptitude.yaml"), bad).is_err(),
                "{bad}"
            );
            assert!(!validator.is_valid(&yaml_as_json(bad)), "{bad}");
        }
        assert!(!validator.is_valid(&yaml_as_json("name: t\nassertions:\n  - tool: Read\n")));
    }
}
