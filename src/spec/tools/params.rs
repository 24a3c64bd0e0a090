//! The parameter names of the built-in tools, so that a test's `params:` key the tool does
//! not have is a load error.
//!
//! A misspelt key (`tool: Bash, called: false, params: {comand: "rm -rf"}`) could never
//! match a call, so the guardrail would pass forever. A `params:` key is looked up under
//! the call's canonical key, then under the agent's own key
//! (`crate::assertions`' `tool` module), so the names a test may use for a canonical tool
//! are the union, over every agent, of what its tool for that capability takes, under both
//! spellings.
//!
//! Sources (the tool definitions sent to the model in captured requests, else the agents'
//! recorded calls and documented tool definitions): Claude Code 1.0.x–2.1.328, Codex CLI
//! 0.36–0.169, Gemini CLI 0.61.0, Qwen Code 0.24.4, GitHub Copilot CLI 1.0.102, opencode
//! 1.18.33 and Kilo 7.7.7, pi 0.73.1, Cursor CLI 2026.01.28, Auggie 0.36.0, Kiro CLI 1.28–2.27.
//! Tools not listed here (an agent's own tools, [`super::own`]; Claude Code's rarer ones)
//! and MCP tools (checked against the server's `tools/list` at run time) are not checked
//! at load.

use super::Vocabulary;

/// Every parameter name of each canonical tool whose parameters aptitude knows, under the
/// canonical and every agent's spelling.
const PARAMS: &[(&str, &[&str])] = &[
    (
        "Bash",
        &[
            // Claude Code
            "command",
            "description",
            "timeout",
            "run_in_background",
            "dangerouslyDisableSandbox",
            "restart",
            // Codex CLI (`shell`, `shell_command`, `exec_command`, `local_shell`)
            "cmd",
            "workdir",
            "timeout_ms",
            "with_escalated_permissions",
            "sandbox_permissions",
            "justification",
            "prefix_rule",
            "yield_time_ms",
            "max_output_tokens",
            "shell",
            "login",
            "tty",
            // Gemini CLI, Qwen Code (`run_shell_command`)
            "directory",
            "dir_path",
            "is_background",
            // Copilot CLI (`bash`)
            "mode",
            "detach",
            "initial_wait",
            "shellId",
            "async",
            "sessionId",
            // Cursor (`shellToolCall`), Auggie (`launch-process`), Kiro (`execute_bash`)
            "workingDirectory",
            "cwd",
            "wait",
            "max_wait_seconds",
            "summary",
        ],
    ),
    (
        "Read",
        &[
            // Claude Code
            "file_path",
            "offset",
            "limit",
            "pages",
            "allow_large",
            // Codex CLI (`read_file`), Gemini CLI and Qwen Code (`read_file`, `read_many_files`)
            "path",
            "mode",
            "indentation",
            "absolute_path",
            "paths",
            "include",
            "exclude",
            "recursive",
            "useDefaultExcludes",
            "file_filtering_options",
            // Copilot CLI and Auggie (`view`), opencode (`read`)
            "view_range",
            "forceReadLargeFiles",
            "type",
            "search_query_regex",
            "case_sensitive",
            "context_lines_before",
            "context_lines_after",
            "filePath",
            // Kiro (`fs_read`, `read`: one `Read` per operation)
            "operations",
            "start_line",
            "end_line",
            "depth",
            "pattern",
            "context_lines",
            "image_paths",
            // Claude Code's `NotebookRead`
            "notebook_path",
            "cell_id",
        ],
    ),
    (
        "Write",
        &[
            "file_path",
            "content",
            // Gemini CLI, Qwen Code, Copilot CLI (`create`), opencode, pi, Cursor, Auggie
            "absolute_path",
            "path",
            "file_text",
            "filePath",
            "file_content",
            "add_last_line_newline",
            // Kiro (`fs_write`, `write`: create, replace, insert, append)
            "command",
            "old_str",
            "new_str",
            "oldStr",
            "newStr",
            "old_string",
            "new_string",
            "insert_line",
            "summary",
        ],
    ),
    (
        "Edit",
        &[
            // Claude Code
            "file_path",
            "old_string",
            "new_string",
            "replace_all",
            // Gemini CLI (`replace`), Qwen Code (`edit`)
            "absolute_path",
            "expected_replacements",
            "instruction",
            "allow_multiple",
            // Copilot CLI, Auggie, Kiro (`old_str`, `new_str`), opencode, pi, Cursor
            "path",
            "old_str",
            "new_str",
            "filePath",
            "oldString",
            "newString",
            "replaceAll",
            "edits",
            "oldText",
            "newText",
            "command",
            "old_str_start_line_number",
            "old_str_end_line_number",
            "insert_line",
            "instruction_reminder",
            "streamContent",
            // Codex CLI (`apply_patch`, `file_change`)
            "input",
            "patch",
            "changes",
        ],
    ),
    ("MultiEdit", &["file_path", "edits"]),
    (
        "NotebookEdit",
        &[
            "notebook_path",
            "cell_id",
            "cell_number",
            "new_source",
            "cell_type",
            "edit_mode",
        ],
    ),
    (
        "Glob",
        &[
            "pattern",
            "path",
            // Gemini CLI, Qwen Code
            "dir_path",
            "case_sensitive",
            "respect_git_ignore",
            "respect_gemini_ignore",
            // Copilot CLI, Cursor, pi (`find`), Kiro
            "paths",
            "globPattern",
            "targetDirectory",
            "limit",
            "max_depth",
        ],
    ),
    (
        "Grep",
        &[
            // Claude Code
            "pattern",
            "path",
            "glob",
            "output_mode",
            "-A",
            "-B",
            "-C",
            "-n",
            "-i",
            "type",
            "head_limit",
            "offset",
            "multiline",
            // Gemini CLI, Qwen Code, Codex CLI (`grep_files`), opencode, Kilo, pi
            "dir_path",
            "include",
            "limit",
            "context",
            "ignoreCase",
            "literal",
            // Copilot CLI, Cursor, Kiro
            "paths",
            "outputMode",
            "caseInsensitive",
            "case_sensitive",
            "max_depth",
            "max_matches_per_file",
            "max_files",
        ],
    ),
    (
        "LS",
        &[
            "path",
            "ignore",
            // Codex CLI (`list_dir`), Gemini CLI and Qwen Code (`list_directory`), pi, Cursor
            "dir_path",
            "offset",
            "limit",
            "depth",
            "file_filtering_options",
            "targetDirectory",
        ],
    ),
    (
        "Task",
        &[
            // Claude Code (`Task`, later `Agent`)
            "description",
            "prompt",
            "subagent_type",
            "model",
            "run_in_background",
            "resume",
            "isolation",
            "effort",
            "name",
            "team_name",
            "mode",
            // Copilot CLI, opencode, Kilo, Qwen Code
            "agent_type",
            "context_tier",
            "reasoning_effort",
            "command",
            "task_id",
            "background",
            // Kiro (`use_subagent`, `subagent`)
            "content",
            "task",
            "agent_name",
        ],
    ),
    ("WebFetch", &["url", "prompt", "format", "timeout"]),
    (
        "WebSearch",
        &["query", "allowed_domains", "blocked_domains", "num_results"],
    ),
    (
        "TodoWrite",
        &[
            "todos",
            // Codex CLI (`update_plan`)
            "plan",
            "explanation",
            // Cursor
            "merge",
            // Kiro (`todo_list`; the v2 engine's `task`)
            "command",
            "tasks",
            "todo_list_description",
            "completed_indices",
            "context_update",
            "modified_files",
            "load_id",
            "new_tasks",
            "insert_indices",
            "new_description",
            "remove_indices",
            "current_id",
        ],
    ),
    (
        "Skill",
        // `command` is Claude Code 1.0's key; `name` Gemini CLI's and opencode's.
        &["skill", "args", "command", "name"],
    ),
    ("BashOutput", &["bash_id", "shell_id", "filter"]),
    ("KillShell", &["shell_id", "bash_id"]),
    ("TaskOutput", &["task_id", "block", "timeout"]),
    ("TaskStop", &["task_id", "shell_id"]),
    ("ExitPlanMode", &["plan", "allowedPrompts"]),
];

/// The parameter names a test may give a tool named `name` (any spelling), or `None` when
/// aptitude does not know them (globs, MCP tools, agents' own tools, rarer tools): their
/// keys are not checked at load.
///
/// A name that is one agent's spelling of one tool and another's of another (Kiro's `task`
/// is a to-do list, opencode's a subagent) takes the parameters of both, as a `tool:`
/// assertion on it matches calls of both.
pub fn known_params(name: &str) -> Option<Vec<&'static str>> {
    if name.contains('*') || name.starts_with("mcp__") {
        return None;
    }
    let mut canonicals: Vec<&str> = Vec::new();
    let canonical = super::canonical_tool_name(name);
    if let Some((c, _)) = PARAMS
        .iter()
        .find(|(c, _)| c.eq_ignore_ascii_case(&canonical))
    {
        canonicals.push(c);
    }
    for v in Vocabulary::ALL {
        for m in v.mappings() {
            if m.raw.eq_ignore_ascii_case(name) && !canonicals.contains(&m.canonical) {
                canonicals.push(m.canonical);
            }
        }
    }
    let mut out: Vec<&'static str> = Vec::new();
    for c in canonicals {
        // A tool mapped onto one whose parameters are unknown leaves the name unchecked.
        let (_, params) = PARAMS.iter().find(|(p, _)| *p == c)?;
        for p in *params {
            if !out.contains(p) {
                out.push(p);
            }
        }
    }
    (!out.is_empty()).then_some(out)
}

/// The tool-level key of a `params:` key: `edits.0.old_string` → `edits` (a dotted key
/// reaches into the value, [`crate::spec::ParamMatcher`]).
pub fn top_key(key: &str) -> &str {
    key.split('.').next().unwrap_or(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_renamed_key_of_every_agent_is_a_known_parameter() {
        for v in Vocabulary::ALL {
            for m in v.mappings() {
                let Some(params) = known_params(m.raw) else {
                    continue;
                };
                for (from, to) in m.keys {
                    assert!(params.contains(from), "{v:?} {}: {from}", m.raw);
                    assert!(params.contains(to), "{v:?} {}: {to}", m.raw);
                }
            }
        }
    }

    #[test]
    fn canonical_and_agent_spellings_share_the_parameters() {
        let bash = known_params("Bash").unwrap();
        assert!(bash.contains(&"command") && bash.contains(&"cmd"));
        assert!(!bash.contains(&"comand"));
        assert_eq!(known_params("run_shell_command"), Some(bash.clone()));
        assert_eq!(known_params("launch-process"), Some(bash));
        // Kiro's `task` is a to-do list, opencode's a subagent: both tools' keys.
        let task = known_params("task").unwrap();
        assert!(task.contains(&"subagent_type") && task.contains(&"todos"));
    }

    #[test]
    fn unknown_tools_mcp_tools_and_globs_are_not_checked() {
        assert_eq!(known_params("mcp__github__create_issue"), None);
        assert_eq!(known_params("Web*"), None);
        assert_eq!(known_params("read_bash"), None);
        assert_eq!(known_params("LSP"), None);
    }

    #[test]
    fn dotted_keys_are_checked_by_their_first_segment() {
        assert_eq!(top_key("edits.0.old_string"), "edits");
        assert_eq!(top_key("command"), "command");
    }
}
