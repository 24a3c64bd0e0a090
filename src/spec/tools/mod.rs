//! The shared vocabulary of tool names.
//!
//! Agents name the same capability differently: Claude Code calls its shell tool `Bash`,
//! Gemini CLI and Qwen Code call it `run_shell_command`, Codex CLI `exec_command` or `shell`.
//! Test files may use any of these spellings, in any case. Both the spec stage (what a test
//! asks about) and the transcript stage (what an agent did) map names onto one canonical
//! spelling — Claude Code's — so that `tool: read_file` and a Claude `Read` call meet.
//!
//! Names that are not in the table (MCP tools such as `mcp__github__create_issue`, an
//! agent's own tools such as Copilot's `read_bash`) keep their own spelling and compare
//! case-insensitively. A test may name a tool only if some agent has it ([`is_known_tool`]):
//! a name no agent has could never match, so it is a load error, never a guardrail that
//! silently passes.
//!
//! What each agent calls its tools and their parameters, and how those map onto this
//! vocabulary, is in [`vocabulary`] (one table per agent); the tools of each agent that have
//! no counterpart here are in [`own`].

use std::borrow::Cow;

pub mod own;
pub mod params;
pub mod vocabulary;

pub use vocabulary::{Vocabulary, canonical_name, canonical_params};

/// Canonical tool names (Claude Code's spelling) with their lowercase aliases.
///
/// Sources: Claude Code 1.0.x–2.1.x tool lists (`system/init` events), Gemini CLI 0.61
/// (`run_shell_command`, `read_file`, `write_file`, `replace`, `glob`, `search_file_content`,
/// `list_directory`, `web_fetch`, `google_web_search`, `write_todos`), Qwen Code 0.24
/// (`edit`, `grep_search`, `agent`, `notebook_edit`), Codex CLI 0.36–0.169 (`shell`,
/// `exec_command`, `apply_patch`, `update_plan`, `request_user_input`), the seeds' own aliases (`read_file`,
/// `write_file`, `execute_command`, `shell_run`), and every name and alias the original
/// aptitude (tatimblin/aptitude 0.1–0.4, `parse_tool_name`) accepts: `glob_files`,
/// `search_files`, `ask_user`, `ask_user_question`, `task_output`, `kill_shell`, ….
const TABLE: &[(&str, &[&str])] = &[
    (
        "Read",
        &[
            "read",
            "read_file",
            "view",
            "read_many_files",
            "notebookread",
            "notebook_read",
        ],
    ),
    ("Write", &["write", "write_file", "create_file"]),
    (
        "Edit",
        &[
            "edit",
            "edit_file",
            "replace",
            "str_replace",
            "apply_patch",
            "file_change",
        ],
    ),
    ("MultiEdit", &["multiedit", "multi_edit"]),
    ("NotebookEdit", &["notebookedit", "notebook_edit"]),
    (
        "Bash",
        &[
            "bash",
            "shell",
            "execute_command",
            "run_shell_command",
            "exec_command",
            "shell_command",
            "local_shell",
            "shell_run",
            "run_command",
            "command_execution",
        ],
    ),
    ("BashOutput", &["bashoutput", "bash_output"]),
    ("KillShell", &["killshell", "killbash", "kill_shell"]),
    ("Glob", &["glob", "find_files", "glob_files"]),
    (
        "Grep",
        &["grep", "search_file_content", "grep_search", "search_files"],
    ),
    ("LS", &["ls", "list_directory", "list_dir"]),
    ("Task", &["task", "agent", "dispatch_agent"]),
    ("WebFetch", &["webfetch", "web_fetch"]),
    (
        "WebSearch",
        &["websearch", "web_search", "google_web_search"],
    ),
    (
        "TodoWrite",
        &["todowrite", "todo_write", "write_todos", "update_plan"],
    ),
    ("TodoRead", &["todoread", "todo_read"]),
    ("Skill", &["skill"]),
    (
        "AskUserQuestion",
        &[
            "askuserquestion",
            "ask_user",
            "ask_user_question",
            "request_user_input",
        ],
    ),
    ("TaskOutput", &["taskoutput", "task_output"]),
    ("TaskStop", &["taskstop", "task_stop"]),
    ("ExitPlanMode", &["exitplanmode", "exit_plan_mode"]),
    ("EnterPlanMode", &["enterplanmode", "enter_plan_mode"]),
    ("SlashCommand", &["slashcommand"]),
    ("ListMcpResourcesTool", &["listmcpresourcestool"]),
    ("ReadMcpResourceTool", &["readmcpresourcetool"]),
    ("LSP", &["lsp"]),
    ("TaskCreate", &["taskcreate"]),
    ("TaskGet", &["taskget"]),
    ("TaskUpdate", &["taskupdate"]),
    ("TaskList", &["tasklist"]),
    ("ToolSearch", &["toolsearch", "tool_search"]),
    ("EnterWorktree", &["enterworktree", "enter_worktree"]),
    ("ExitWorktree", &["exitworktree", "exit_worktree"]),
    ("CronCreate", &["croncreate", "cron_create"]),
    ("CronDelete", &["crondelete", "cron_delete"]),
    ("CronList", &["cronlist", "cron_list"]),
    ("ListAgents", &["listagents", "list_agents"]),
    ("SendMessage", &["sendmessage", "send_message"]),
    ("Monitor", &["monitor"]),
    ("ReportFindings", &["reportfindings", "report_findings"]),
    ("ScheduleWakeup", &["schedulewakeup", "schedule_wakeup"]),
    ("Workflow", &["workflow"]),
    ("PowerShell", &["powershell"]),
];

/// The canonical spelling of a tool name: `read_file` → `Read`, `BASH` → `Bash`.
///
/// Unknown names (MCP and custom tools) are returned unchanged.
pub fn canonical_tool_name(name: &str) -> Cow<'_, str> {
    let lower = name.to_ascii_lowercase();
    for (canonical, aliases) in TABLE {
        if aliases.contains(&lower.as_str()) {
            if *canonical == name {
                return Cow::Borrowed(name);
            }
            return Cow::Owned((*canonical).to_owned());
        }
    }
    Cow::Borrowed(name)
}

/// Whether `name` (any spelling) is in the table of known tools, is an agent's own name
/// for a tool ([`vocabulary`]: `launch-process`, `shellToolCall`), which a test may name to
/// ask about that agent's calls only, or is one of an agent's tools that have no canonical
/// counterpart ([`own`]: Copilot's `read_bash`, Gemini CLI's `save_memory`).
pub fn is_known_tool(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    TABLE
        .iter()
        .any(|(_, aliases)| aliases.contains(&lower.as_str()))
        || Vocabulary::ALL.iter().any(|v| {
            v.mappings()
                .iter()
                .any(|m| m.raw.eq_ignore_ascii_case(name))
        })
        || own::all().any(|n| n.eq_ignore_ascii_case(name))
}

/// Every known spelling (canonical names, aliases, agents' own names), for "did you mean"
/// hints.
pub fn known_spellings() -> impl Iterator<Item = &'static str> {
    TABLE
        .iter()
        .flat_map(|(canonical, aliases)| std::iter::once(*canonical).chain(aliases.iter().copied()))
        .chain(
            Vocabulary::ALL
                .iter()
                .flat_map(|v| v.mappings().iter().map(|m| m.raw)),
        )
        .chain(own::all())
}

/// The canonical name of the shell tool, whose calls are "commands" for evidence assertions.
pub const SHELL_TOOL: &str = "Bash";

/// The canonical name of the tool that invokes a skill (Claude Code's `Skill {skill}`),
/// whose calls `skill:` assertions look at.
pub const SKILL_TOOL: &str = "Skill";

/// Whether two tool names denote the same tool, after canonicalisation and ignoring case.
pub fn same_tool(a: &str, b: &str) -> bool {
    canonical_tool_name(a).eq_ignore_ascii_case(&canonical_tool_name(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_map_to_claude_spelling() {
        assert_eq!(canonical_tool_name("read_file"), "Read");
        assert_eq!(canonical_tool_name("execute_command"), "Bash");
        assert_eq!(canonical_tool_name("run_shell_command"), "Bash");
        assert_eq!(canonical_tool_name("BASH"), "Bash");
        assert_eq!(canonical_tool_name("Read"), "Read");
        assert_eq!(canonical_tool_name("apply_patch"), "Edit");
    }

    #[test]
    fn unknown_names_are_kept() {
        assert_eq!(
            canonical_tool_name("mcp__github__create_issue"),
            "mcp__github__create_issue"
        );
        assert!(!is_known_tool("mcp__github__create_issue"));
        // Agents' own names are known too (a test may ask about one agent's calls).
        assert!(is_known_tool("launch-process") && is_known_tool("shellToolCall"));
        assert!(is_known_tool("create"), "Copilot's file creation");
        assert_eq!(
            canonical_name(Vocabulary::Codex, "request_user_input"),
            "AskUserQuestion",
            "Codex's ask tool"
        );
    }

    /// Every name and alias the original aptitude's `parse_tool_name` accepts (any case)
    /// maps onto the tool it meant.
    #[test]
    fn the_original_aptitudes_names_map_onto_their_tools() {
        let upstream = [
            ("Read", "Read"),
            ("read_file", "Read"),
            ("Write", "Write"),
            ("write_file", "Write"),
            ("Edit", "Edit"),
            ("edit_file", "Edit"),
            ("Bash", "Bash"),
            ("execute_command", "Bash"),
            ("Glob", "Glob"),
            ("glob_files", "Glob"),
            ("Grep", "Grep"),
            ("search_files", "Grep"),
            ("Task", "Task"),
            ("WebFetch", "WebFetch"),
            ("web_fetch", "WebFetch"),
            ("WebSearch", "WebSearch"),
            ("web_search", "WebSearch"),
            ("NotebookEdit", "NotebookEdit"),
            ("notebook_edit", "NotebookEdit"),
            ("AskUserQuestion", "AskUserQuestion"),
            ("ask_user", "AskUserQuestion"),
            ("ask_user_question", "AskUserQuestion"),
            ("TodoWrite", "TodoWrite"),
            ("todo_write", "TodoWrite"),
            ("KillShell", "KillShell"),
            ("kill_shell", "KillShell"),
            ("TaskOutput", "TaskOutput"),
            ("task_output", "TaskOutput"),
            ("Skill", "Skill"),
            // Historical: the snake_case era's name of Claude's `LS`.
            ("list_directory", "LS"),
        ];
        for (name, canonical) in upstream {
            for spelling in [
                name.to_owned(),
                name.to_ascii_uppercase(),
                name.to_ascii_lowercase(),
            ] {
                assert!(is_known_tool(&spelling), "{spelling}");
                assert_eq!(canonical_tool_name(&spelling), canonical, "{spelling}");
            }
        }
    }

    #[test]
    fn names_no_agent_has_are_unknown() {
        for name in ["ToolName", "glob_file", "Reed", "fs_read_x", ""] {
            assert!(!is_known_tool(name), "{name}");
        }
        assert!(is_known_tool("read_bash"), "Copilot's own tool");
        assert!(is_known_tool("ExitPlanMode"));
    }

    #[test]
    fn comparison_ignores_case_and_alias() {
        assert!(same_tool("read", "Read"));
        assert!(same_tool("read_file", "READ"));
        assert!(same_tool("mcp__X__y", "MCP__x__Y"));
        assert!(!same_tool("Read", "Write"));
    }
}
