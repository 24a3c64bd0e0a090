//! Each agent's tool names and parameter keys, mapped onto the shared vocabulary.
//!
//! The shared vocabulary is Claude Code's: `Bash {command}`, `Read {file_path}`, `Write
//! {file_path, content}`, `Edit {file_path, old_string, new_string}`, `Glob {pattern, path}`,
//! `Grep {pattern, path, glob}`, `WebFetch {url, prompt}`, MCP tools as
//! `mcp__<server>__<tool>`. A transcript keeps the agent's own name and input
//! ([`crate::transcript::ToolCall::name`] and `input`) and adds the canonical name and
//! parameters, which assertions match on: `tool: Bash, params: {command: "*pytest*"}`
//! gives the same verdict whichever agent ran `pytest`.
//!
//! The tables below are the only place that knows an agent's spelling. docs/agents.md
//! shows them ([`render_markdown`]; a test fails when the checked-in copy differs).
//!
//! Sources (tool definitions sent to the model, and recorded calls): Codex CLI 0.36–0.169,
//! Gemini CLI 0.61.0, Qwen Code 0.24.4, GitHub Copilot CLI 1.0.102, opencode 1.18.33 (and
//! Kilo 7.7.7), pi 0.73.1, Cursor CLI 2026.01.28, Auggie 0.36.0, Aider 0.86.2, Kiro CLI
//! (its source, `aws/amazon-q-developer-cli`, and recorded sessions of 1.28–2.27).

use std::borrow::Cow;

use serde_json::{Map, Value};

/// Whose tool vocabulary a transcript uses (one per agent CLI; a fork that names its tools
/// the same way shares its parent's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Vocabulary {
    /// Claude Code: its names and keys are the canonical ones.
    #[default]
    Claude,
    /// Codex CLI.
    Codex,
    /// Gemini CLI.
    Gemini,
    /// Qwen Code (a Gemini CLI fork with its own tool names).
    Qwen,
    /// GitHub Copilot CLI.
    Copilot,
    /// opencode, and its fork Kilo Code CLI.
    Opencode,
    /// pi (`@mariozechner/pi-coding-agent`).
    Pi,
    /// Cursor CLI (`cursor-agent`).
    Cursor,
    /// Auggie (Augment's CLI).
    Auggie,
    /// Aider: it records no tool calls; aptitude makes `Edit`/`Write` calls from the edits
    /// it applied, already in the canonical vocabulary.
    Aider,
    /// Kiro CLI (`kiro-cli`), all three of its engines' names.
    Kiro,
}

impl Vocabulary {
    /// Every vocabulary, in the order docs/agents.md lists them.
    pub const ALL: [Vocabulary; 11] = [
        Vocabulary::Claude,
        Vocabulary::Codex,
        Vocabulary::Gemini,
        Vocabulary::Qwen,
        Vocabulary::Copilot,
        Vocabulary::Opencode,
        Vocabulary::Pi,
        Vocabulary::Cursor,
        Vocabulary::Auggie,
        Vocabulary::Aider,
        Vocabulary::Kiro,
    ];

    /// The agent's name as docs/agents.md shows it, with the version the table was taken from.
    pub fn title(self) -> &'static str {
        match self {
            Vocabulary::Claude => "Claude Code 2.1.328",
            Vocabulary::Codex => "Codex CLI 0.36–0.169",
            Vocabulary::Gemini => "Gemini CLI 0.61.0",
            Vocabulary::Qwen => "Qwen Code 0.24.4",
            Vocabulary::Copilot => "GitHub Copilot CLI 1.0.102",
            Vocabulary::Opencode => "opencode 1.18.33, Kilo 7.7.7",
            Vocabulary::Pi => "pi 0.73.1",
            Vocabulary::Cursor => "Cursor CLI 2026.01.28",
            Vocabulary::Auggie => "Auggie 0.36.0",
            Vocabulary::Aider => "Aider 0.86.2",
            Vocabulary::Kiro => "Kiro CLI 1.28–2.27",
        }
    }

    /// The agent's tools that map onto the shared vocabulary.
    pub fn mappings(self) -> &'static [ToolMapping] {
        match self {
            Vocabulary::Claude | Vocabulary::Aider => &[],
            Vocabulary::Codex => CODEX,
            Vocabulary::Gemini => GEMINI,
            Vocabulary::Qwen => QWEN,
            Vocabulary::Copilot => COPILOT,
            Vocabulary::Opencode => OPENCODE,
            Vocabulary::Pi => PI,
            Vocabulary::Cursor => CURSOR,
            Vocabulary::Auggie => AUGGIE,
            Vocabulary::Kiro => KIRO,
        }
    }

    /// Where the table comes from, for docs/agents.md: what was seen in real captures and
    /// what follows the agent's documented names only.
    fn source_note(self) -> &'static str {
        match self {
            Vocabulary::Claude => "Claude Code's own tool list (`system/init`).",
            Vocabulary::Codex => {
                "recorded calls (`shell`, `shell_command`, `exec_command`, `apply_patch`, \
                 `update_plan`, exec JSON items); `read_file`, `list_dir`, `grep_files` follow \
                 Codex CLI's tool names and were not seen in a capture."
            }
            Vocabulary::Gemini => {
                "recorded calls (`run_shell_command`, `read_file`, `write_file`, `replace`); \
                 the others follow Gemini CLI's tool names and were not seen in a capture."
            }
            Vocabulary::Qwen => {
                "recorded calls (`run_shell_command`); the others follow Qwen Code's tool names \
                 and were not seen in a capture."
            }
            Vocabulary::Copilot => {
                "the tool definitions Copilot CLI sent to the model (captured requests)."
            }
            Vocabulary::Opencode => {
                "the tool definitions opencode and Kilo sent to the model (captured requests)."
            }
            Vocabulary::Pi => {
                "the tool definitions pi sent to the model (`read`, `bash`, `edit`, `write`); \
                 `grep`, `find`, `ls` are its optional tools, not seen in a capture."
            }
            Vocabulary::Cursor => {
                "recorded `shellToolCall`s only; the other kinds follow Cursor's stream-json \
                 documentation and were not seen in a capture."
            }
            Vocabulary::Auggie => {
                "recorded `launch-process` calls only; the others follow Auggie's tool names \
                 and were not seen in a capture."
            }
            Vocabulary::Aider => "its chat history.",
            Vocabulary::Kiro => {
                "Kiro CLI's source (`aws/amazon-q-developer-cli`: the v1 engine's \
                 `crates/chat-cli/src/cli/chat/tools/`, the v2 engine's \
                 `crates/agent/src/agent/tools/`) and recorded sessions (v1 1.28, v2 2.24–2.27, \
                 v3 2.25: only `execute_bash`, MCP calls and `disclose_context` were seen in a \
                 v3 session). An `fs_read` or `read` call reads each of its `operations`: one \
                 `Read` per operation, its `path` as `file_path`. Kiro's one write tool \
                 (`fs_write`, `write`: create, replace, insert, append) is `Write`. A v3 call \
                 whose name is in no table takes the tool kind it reports (`read` → `Read`, \
                 `edit` → `Write`, `execute` → `Bash`, `search` → `Grep`, `fetch` → \
                 `WebFetch`); other names stay as named."
            }
        }
    }

    /// How the agent names MCP tools, for docs/agents.md.
    fn mcp_note(self) -> &'static str {
        match self {
            Vocabulary::Claude => "`mcp__<server>__<tool>` (canonical)",
            Vocabulary::Codex => {
                "exec JSON `mcp_tool_call` items {server, tool} (0.169 offers each server as a \
                 `namespace` tool `mcp__<server>`); rollout calls `<server>__<tool>` → \
                 `mcp__<server>__<tool>`"
            }
            Vocabulary::Gemini => {
                "`<server>__<tool>` → `mcp__<server>__<tool>`; in a run with `mcp_servers`, \
                 Gemini CLI 0.61's `mcp_<server>_<tool>` too (the test's server names tell the \
                 server from the tool)"
            }
            Vocabulary::Qwen => {
                "`mcp__<server>__<tool>` (Qwen Code 0.24 offers them so), and `<server>__<tool>` \
                 → `mcp__<server>__<tool>`"
            }
            Vocabulary::Copilot => {
                "`mcpServerName` + `mcpToolName` of the request (offered to the model as \
                 `<server>-<tool>`) → `mcp__<server>__<tool>`"
            }
            Vocabulary::Opencode => {
                "`<server>_<tool>` → `mcp__<server>__<tool>` in a run with `mcp_servers` (the \
                 test's server names tell the server from the tool); otherwise as named"
            }
            Vocabulary::Pi => "none (pi has no MCP client)",
            Vocabulary::Cursor => {
                "`mcpToolCall` {providerIdentifier, toolName} → `mcp__<server>__<tool>`"
            }
            Vocabulary::Auggie => "stays as named",
            Vocabulary::Aider => "none",
            Vocabulary::Kiro => {
                "the bare tool name in v1 and v2 sessions: the server is the one whose tools \
                 list it (v1: the conversation's `tools` map; v2: the result's `Mcp` kind when \
                 recorded, else, in a run, the test's only MCP server); v3's generic \
                 `tool_call` with the title `@<server>/<tool>` or `_meta.kiro.serverName` → \
                 `mcp__<server>__<tool>`; a call whose server is not known stays as named"
            }
        }
    }
}

/// One agent tool: its raw name, the canonical name, and the parameter keys that are
/// renamed (raw key → canonical key). Keys not listed keep their name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolMapping {
    /// The name the agent calls the tool by (compared case-sensitively).
    pub raw: &'static str,
    /// The canonical name (Claude Code's spelling).
    pub canonical: &'static str,
    /// Renamed parameter keys: (raw key, canonical key).
    pub keys: &'static [(&'static str, &'static str)],
}

const fn tool(
    raw: &'static str,
    canonical: &'static str,
    keys: &'static [(&'static str, &'static str)],
) -> ToolMapping {
    ToolMapping {
        raw,
        canonical,
        keys,
    }
}

const CODEX: &[ToolMapping] = &[
    tool("shell", "Bash", &[]),
    tool("shell_command", "Bash", &[]),
    tool("local_shell", "Bash", &[]),
    tool("exec_command", "Bash", &[("cmd", "command")]),
    tool("command_execution", "Bash", &[]),
    tool("apply_patch", "Edit", &[]),
    tool("file_change", "Edit", &[]),
    tool("read_file", "Read", &[("path", "file_path")]),
    tool("list_dir", "LS", &[("dir_path", "path")]),
    tool("grep_files", "Grep", &[("include", "glob")]),
    tool("web_search", "WebSearch", &[]),
    tool("update_plan", "TodoWrite", &[]),
];

const GEMINI: &[ToolMapping] = &[
    tool("run_shell_command", "Bash", &[]),
    tool(
        "read_file",
        "Read",
        &[("absolute_path", "file_path"), ("path", "file_path")],
    ),
    tool(
        "write_file",
        "Write",
        &[("absolute_path", "file_path"), ("path", "file_path")],
    ),
    tool("replace", "Edit", &[("absolute_path", "file_path")]),
    tool("glob", "Glob", &[("dir_path", "path")]),
    tool(
        "search_file_content",
        "Grep",
        &[("dir_path", "path"), ("include", "glob")],
    ),
    tool("list_directory", "LS", &[("dir_path", "path")]),
    tool("read_many_files", "Read", &[]),
    tool("web_fetch", "WebFetch", &[]),
    tool("google_web_search", "WebSearch", &[]),
    tool("write_todos", "TodoWrite", &[]),
    tool("activate_skill", "Skill", &[("name", "skill")]),
];

const QWEN: &[ToolMapping] = &[
    tool("run_shell_command", "Bash", &[]),
    tool(
        "read_file",
        "Read",
        &[("absolute_path", "file_path"), ("path", "file_path")],
    ),
    tool(
        "write_file",
        "Write",
        &[("absolute_path", "file_path"), ("path", "file_path")],
    ),
    tool("edit", "Edit", &[("absolute_path", "file_path")]),
    tool("glob", "Glob", &[("dir_path", "path")]),
    tool(
        "grep_search",
        "Grep",
        &[("dir_path", "path"), ("include", "glob")],
    ),
    tool("list_directory", "LS", &[("dir_path", "path")]),
    tool("read_many_files", "Read", &[]),
    tool("web_fetch", "WebFetch", &[]),
    tool("web_search", "WebSearch", &[]),
    tool("todo_write", "TodoWrite", &[]),
    tool("task", "Task", &[]),
    tool("agent", "Task", &[]),
    tool("skill", "Skill", &[]),
];

const COPILOT: &[ToolMapping] = &[
    tool("bash", "Bash", &[]),
    tool("view", "Read", &[("path", "file_path")]),
    tool(
        "create",
        "Write",
        &[("path", "file_path"), ("file_text", "content")],
    ),
    tool(
        "edit",
        "Edit",
        &[
            ("path", "file_path"),
            ("old_str", "old_string"),
            ("new_str", "new_string"),
        ],
    ),
    tool("glob", "Glob", &[]),
    tool("grep", "Grep", &[]),
    tool("web_fetch", "WebFetch", &[]),
    tool("task", "Task", &[]),
    tool("skill", "Skill", &[]),
];

const OPENCODE: &[ToolMapping] = &[
    tool("bash", "Bash", &[]),
    tool("read", "Read", &[("filePath", "file_path")]),
    tool("write", "Write", &[("filePath", "file_path")]),
    tool(
        "edit",
        "Edit",
        &[
            ("filePath", "file_path"),
            ("oldString", "old_string"),
            ("newString", "new_string"),
            ("replaceAll", "replace_all"),
        ],
    ),
    tool("glob", "Glob", &[]),
    tool("grep", "Grep", &[("include", "glob")]),
    tool("list", "LS", &[]),
    tool("webfetch", "WebFetch", &[]),
    tool("task", "Task", &[]),
    tool("todowrite", "TodoWrite", &[]),
    tool("skill", "Skill", &[("name", "skill")]),
];

const PI: &[ToolMapping] = &[
    tool("bash", "Bash", &[]),
    tool("read", "Read", &[("path", "file_path")]),
    tool("write", "Write", &[("path", "file_path")]),
    tool("edit", "Edit", &[("path", "file_path")]),
    tool("grep", "Grep", &[]),
    tool("find", "Glob", &[]),
    tool("ls", "LS", &[]),
];

const CURSOR: &[ToolMapping] = &[
    tool("shellToolCall", "Bash", &[]),
    tool("readToolCall", "Read", &[("path", "file_path")]),
    tool("editToolCall", "Edit", &[("path", "file_path")]),
    tool("writeToolCall", "Write", &[("path", "file_path")]),
    tool("globToolCall", "Glob", &[("globPattern", "pattern")]),
    tool("grepToolCall", "Grep", &[]),
    tool("lsToolCall", "LS", &[]),
    tool("updateTodosToolCall", "TodoWrite", &[]),
    tool("webFetchToolCall", "WebFetch", &[]),
];

const AUGGIE: &[ToolMapping] = &[
    tool("launch-process", "Bash", &[]),
    tool("view", "Read", &[("path", "file_path")]),
    tool(
        "save-file",
        "Write",
        &[("path", "file_path"), ("file_content", "content")],
    ),
    tool(
        "str-replace-editor",
        "Edit",
        &[
            ("path", "file_path"),
            ("old_str", "old_string"),
            ("new_str", "new_string"),
        ],
    ),
    tool("web-fetch", "WebFetch", &[]),
    tool("web-search", "WebSearch", &[]),
];

const KIRO: &[ToolMapping] = &[
    // v1 engine (`crates/chat-cli`).
    tool("fs_read", "Read", &[("path", "file_path")]),
    tool(
        "fs_write",
        "Write",
        &[
            ("path", "file_path"),
            ("file_text", "content"),
            ("old_str", "old_string"),
            ("new_str", "new_string"),
        ],
    ),
    // Upstream aptitude's name for an edit; no Kiro engine is known to write it.
    tool(
        "fs_edit",
        "Edit",
        &[
            ("path", "file_path"),
            ("old_str", "old_string"),
            ("new_str", "new_string"),
        ],
    ),
    tool("execute_bash", "Bash", &[]),
    tool("execute_cmd", "Bash", &[]),
    tool("glob", "Glob", &[]),
    tool("grep", "Grep", &[("include", "glob")]),
    tool("web_fetch", "WebFetch", &[]),
    tool("web_search", "WebSearch", &[]),
    tool("use_subagent", "Task", &[]),
    tool("todo_list", "TodoWrite", &[]),
    // v2 engine (`crates/agent`).
    tool("read", "Read", &[("path", "file_path")]),
    tool(
        "write",
        "Write",
        &[
            ("path", "file_path"),
            ("oldStr", "old_string"),
            ("newStr", "new_string"),
        ],
    ),
    tool("shell", "Bash", &[]),
    tool("subagent", "Task", &[]),
    tool("task", "TodoWrite", &[]),
    // v3 engine: a skill's instructions disclosed to the model.
    tool("disclose_context", "Skill", &[("name", "skill")]),
];

/// The canonical name of `raw` as `vocabulary` spells it: the agent's table first, then
/// MCP spellings, then the shared alias table ([`super::canonical_tool_name`]).
pub fn canonical_name(vocabulary: Vocabulary, raw: &str) -> Cow<'_, str> {
    if let Some(m) = vocabulary.mappings().iter().find(|m| m.raw == raw) {
        return Cow::Borrowed(m.canonical);
    }
    if let Some(mcp) = mcp_name(vocabulary, raw) {
        return Cow::Owned(mcp);
    }
    super::canonical_tool_name(raw)
}

/// `mcp__server__tool` for an agent's `server__tool` spelling (Codex rollouts, Gemini CLI,
/// Qwen Code), when `raw` is one.
fn mcp_name(vocabulary: Vocabulary, raw: &str) -> Option<String> {
    if !matches!(
        vocabulary,
        Vocabulary::Codex | Vocabulary::Gemini | Vocabulary::Qwen
    ) || raw.starts_with("mcp__")
    {
        return None;
    }
    let (server, tool) = raw.split_once("__")?;
    (!server.is_empty() && !tool.is_empty()).then(|| format!("mcp__{server}__{tool}"))
}

/// The canonical parameters of a call to `raw` (with `input` as the agent recorded it), or
/// `None` when they are `input` unchanged. Keys the agent's table renames get their
/// canonical name (unless the input also has the canonical key); a shell command given as
/// an argv array (`["bash", "-lc", "pytest -q"]`) becomes the command string (`pytest -q`:
/// the `sh`/`bash`/`zsh` `-c`/`-lc` wrapper is taken off; other argv are joined with spaces).
pub fn canonical_params(vocabulary: Vocabulary, raw: &str, input: &Value) -> Option<Value> {
    let Value::Object(map) = input else {
        return None;
    };
    let mapping = vocabulary.mappings().iter().find(|m| m.raw == raw);
    let canonical = canonical_name(vocabulary, raw);
    let mut out: Option<Map<String, Value>> = None;
    if let Some(m) = mapping {
        for (from, to) in m.keys {
            if map.contains_key(*to) {
                continue;
            }
            if let Some(v) = map.get(*from) {
                let o = out.get_or_insert_with(|| map.clone());
                o.remove(*from);
                o.insert((*to).to_owned(), v.clone());
            }
        }
    }
    if canonical == super::SHELL_TOOL {
        let current = out.as_ref().unwrap_or(map);
        if !current.contains_key("command")
            && let Some(cmd) = current.get("cmd").cloned()
        {
            let o = out.get_or_insert_with(|| map.clone());
            o.remove("cmd");
            o.insert("command".into(), cmd);
        }
        let current = out.as_ref().unwrap_or(map);
        if let Some(Value::Array(argv)) = current.get("command") {
            let command = shell_command_of_argv(argv);
            out.get_or_insert_with(|| map.clone())
                .insert("command".into(), Value::String(command));
        }
    }
    out.map(Value::Object)
}

/// The command an argv runs: the script of `sh -c SCRIPT` / `bash -lc SCRIPT`, else the
/// words joined with spaces.
pub fn shell_command_of_argv(argv: &[Value]) -> String {
    let words: Vec<Cow<'_, str>> = argv
        .iter()
        .map(|a| match a {
            Value::String(s) => Cow::Borrowed(s.as_str()),
            other => Cow::Owned(other.to_string()),
        })
        .collect();
    if let [shell, flag, script] = words.as_slice() {
        let shell = shell.rsplit('/').next().unwrap_or(shell);
        if matches!(shell, "sh" | "bash" | "zsh") && matches!(flag.as_ref(), "-c" | "-lc") {
            return script.to_string();
        }
    }
    words.join(" ")
}

/// The marker comments around the generated table in docs/agents.md.
pub const DOCS_BEGIN: &str =
    "<!-- tool-vocabulary:begin (generated by `UPDATE_DOCS=1 cargo test --lib vocabulary`) -->";
/// See [`DOCS_BEGIN`].
pub const DOCS_END: &str = "<!-- tool-vocabulary:end -->";

/// The per-agent mapping tables for docs/agents.md (Markdown, between [`DOCS_BEGIN`] and
/// [`DOCS_END`]).
pub fn render_markdown() -> String {
    let mut out = String::new();
    for v in Vocabulary::ALL {
        out.push_str(&format!("\n#### {}\n\n", v.title()));
        let mappings = v.mappings();
        if mappings.is_empty() {
            out.push_str(match v {
                Vocabulary::Aider => {
                    "Records no tool calls. The edits it applied (its chat history's SEARCH/REPLACE \
                     blocks) become `Edit {file_path, old_string, new_string}` and, for a new file, \
                     `Write {file_path, content}`; it runs no shell commands headless.\n"
                }
                _ => "Its names and keys are the canonical ones.\n",
            });
        } else {
            out.push_str("| agent's tool | canonical | parameter keys |\n|---|---|---|\n");
            for m in mappings {
                let keys = if m.keys.is_empty() {
                    "as named".to_owned()
                } else {
                    m.keys
                        .iter()
                        .map(|(from, to)| format!("`{from}` → `{to}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                out.push_str(&format!("| `{}` | `{}` | {keys} |\n", m.raw, m.canonical));
            }
        }
        out.push_str(&format!("\nMCP tools: {}.\n", v.mcp_note()));
        out.push_str(&format!("\nSource: {}\n", v.source_note()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shell_commands_have_one_key_for_every_agent() {
        let cases = [
            (
                Vocabulary::Codex,
                "exec_command",
                json!({"cmd": "pytest -q"}),
            ),
            (
                Vocabulary::Codex,
                "shell",
                json!({"command": ["bash", "-lc", "pytest -q"]}),
            ),
            (
                Vocabulary::Gemini,
                "run_shell_command",
                json!({"command": "pytest -q"}),
            ),
            (
                Vocabulary::Qwen,
                "run_shell_command",
                json!({"command": "pytest -q"}),
            ),
            (Vocabulary::Copilot, "bash", json!({"command": "pytest -q"})),
            (
                Vocabulary::Opencode,
                "bash",
                json!({"command": "pytest -q"}),
            ),
            (Vocabulary::Pi, "bash", json!({"command": "pytest -q"})),
            (
                Vocabulary::Cursor,
                "shellToolCall",
                json!({"command": "pytest -q"}),
            ),
            (
                Vocabulary::Auggie,
                "launch-process",
                json!({"command": "pytest -q"}),
            ),
            (Vocabulary::Claude, "Bash", json!({"command": "pytest -q"})),
            (
                Vocabulary::Kiro,
                "execute_bash",
                json!({"command": "pytest -q"}),
            ),
            (Vocabulary::Kiro, "shell", json!({"command": "pytest -q"})),
        ];
        for (v, raw, input) in cases {
            assert_eq!(canonical_name(v, raw), "Bash", "{v:?} {raw}");
            let params = canonical_params(v, raw, &input).unwrap_or(input);
            assert_eq!(params["command"], "pytest -q", "{v:?} {raw}");
        }
    }

    #[test]
    fn file_paths_have_one_key_for_every_agent() {
        let cases = [
            (
                Vocabulary::Gemini,
                "read_file",
                json!({"absolute_path": "/a"}),
            ),
            (
                Vocabulary::Qwen,
                "read_file",
                json!({"absolute_path": "/a"}),
            ),
            (Vocabulary::Copilot, "view", json!({"path": "/a"})),
            (Vocabulary::Opencode, "read", json!({"filePath": "/a"})),
            (Vocabulary::Pi, "read", json!({"path": "/a"})),
            (Vocabulary::Cursor, "readToolCall", json!({"path": "/a"})),
            (Vocabulary::Auggie, "view", json!({"path": "/a"})),
            (Vocabulary::Codex, "read_file", json!({"path": "/a"})),
            (Vocabulary::Kiro, "fs_read", json!({"path": "/a"})),
            (Vocabulary::Kiro, "read", json!({"path": "/a"})),
        ];
        for (v, raw, input) in cases {
            assert_eq!(canonical_name(v, raw), "Read", "{v:?} {raw}");
            let params = canonical_params(v, raw, &input).unwrap();
            assert_eq!(params, json!({"file_path": "/a"}), "{v:?} {raw}");
        }
        let edit = canonical_params(
            Vocabulary::Opencode,
            "edit",
            &json!({"filePath": "a", "oldString": "x", "newString": "y"}),
        );
        assert_eq!(
            edit,
            Some(json!({"file_path": "a", "old_string": "x", "new_string": "y"}))
        );
        // Grep's `path` is a directory, not a file: it stays `path`.
        assert_eq!(
            canonical_params(
                Vocabulary::Opencode,
                "grep",
                &json!({"pattern": "x", "path": "src"})
            ),
            None
        );
    }

    #[test]
    fn mcp_tools_are_spelled_the_claude_way() {
        assert_eq!(
            canonical_name(Vocabulary::Codex, "github__create_issue"),
            "mcp__github__create_issue"
        );
        assert_eq!(
            canonical_name(Vocabulary::Gemini, "github__create_issue"),
            "mcp__github__create_issue"
        );
        assert_eq!(
            canonical_name(Vocabulary::Claude, "mcp__github__create_issue"),
            "mcp__github__create_issue"
        );
        assert_eq!(canonical_name(Vocabulary::Codex, "__x"), "__x");
    }

    #[test]
    fn claude_calls_are_left_alone() {
        let input = json!({"command": "ls", "description": "list"});
        assert_eq!(canonical_params(Vocabulary::Claude, "Bash", &input), None);
        assert_eq!(canonical_name(Vocabulary::Claude, "Read"), "Read");
        assert_eq!(
            canonical_params(Vocabulary::Claude, "Read", &json!({"file_path": "a"})),
            None
        );
    }

    #[test]
    fn argv_commands_lose_their_shell_wrapper() {
        let argv = |a: &[&str]| a.iter().map(|s| json!(s)).collect::<Vec<_>>();
        assert_eq!(
            shell_command_of_argv(&argv(&["/bin/bash", "-lc", "ls -la"])),
            "ls -la"
        );
        assert_eq!(shell_command_of_argv(&argv(&["ls", "-la"])), "ls -la");
        assert_eq!(
            shell_command_of_argv(&argv(&["python", "-c", "print(1)"])),
            "python -c print(1)"
        );
    }

    #[test]
    fn every_mapping_targets_a_known_tool() {
        for v in Vocabulary::ALL {
            for m in v.mappings() {
                assert!(super::super::is_known_tool(m.canonical), "{v:?} {}", m.raw);
                assert_eq!(
                    super::super::canonical_tool_name(m.canonical),
                    m.canonical,
                    "{v:?} {}: canonical names are Claude Code's spelling",
                    m.raw
                );
            }
        }
    }

    /// docs/agents.md shows [`render_markdown`]; `UPDATE_DOCS=1 cargo test --lib
    /// vocabulary` rewrites it.
    #[test]
    fn docs_table_is_generated_from_the_code() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/agents.md");
        let docs = std::fs::read_to_string(path).unwrap();
        let (Some(begin), Some(end)) = (docs.find(DOCS_BEGIN), docs.find(DOCS_END)) else {
            panic!("docs/agents.md lacks the markers {DOCS_BEGIN} … {DOCS_END}");
        };
        let start = begin + DOCS_BEGIN.len();
        let generated = render_markdown();
        if std::env::var_os("UPDATE_DOCS").is_some() {
            let updated = format!("{}{generated}{}", &docs[..start], &docs[end..]);
            std::fs::write(path, updated).unwrap();
            return;
        }
        assert!(
            docs[start..end] == generated,
            "docs/agents.md's tool vocabulary is out of date: run `UPDATE_DOCS=1 cargo test --lib vocabulary` and commit it"
        );
    }
}
