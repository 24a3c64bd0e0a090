//! Each agent's tools that have no counterpart in the shared vocabulary.
//!
//! A test may name such a tool by the agent's own spelling (`tool: read_bash`) to ask about
//! that agent's calls; the transcript keeps the name as the agent wrote it. The lists exist
//! so that the loader can tell a real tool from a name no agent has: `tool: ToolName`, or
//! a typo with no close spelling, is a load error rather than an assertion that can never
//! match (and so a `called: false` that always passes).
//!
//! Sources (the tool definitions each CLI sent to the model in captured requests, or its
//! session logs and documented tool list): Codex CLI 0.36–0.169, Gemini CLI 0.61.0, Qwen
//! Code 0.24.4, GitHub Copilot CLI 1.0.102, opencode 1.18.33 and Kilo 7.7.7, Cursor CLI
//! 2026.01.28, Auggie 0.36.0, Kiro CLI (`aws/amazon-q-developer-cli`'s tool
//! definitions: `use_aws`, `report_issue`/`gh_issue`, `knowledge`, `thinking`,
//! `introspect`). Claude Code's tools are all in the shared table (its names
//! are the canonical ones); pi's four and Aider's edits all map onto it.

use super::Vocabulary;

/// The agents' own tools, by vocabulary: names as the agent sends them.
pub const OWN_TOOLS: &[(Vocabulary, &[&str])] = &[
    (Vocabulary::Codex, &["write_stdin", "view_image"]),
    (
        Vocabulary::Gemini,
        &["save_memory", "codebase_investigator"],
    ),
    (
        Vocabulary::Qwen,
        &[
            "save_memory",
            "get_goal",
            "update_goal",
            "loop_wakeup",
            "read_mcp_resource",
            "record_artifact",
            "tool_call",
            "zoom_image",
        ],
    ),
    (
        Vocabulary::Copilot,
        &[
            "fetch_copilot_cli_documentation",
            "list_bash",
            "read_bash",
            "write_bash",
            "stop_bash",
            "read_agent",
            "write_agent",
            "session_store_sql",
            "sql",
            "report_intent",
            "update_todo",
        ],
    ),
    (
        Vocabulary::Opencode,
        &[
            "patch",
            "codesearch",
            "question",
            "background_process",
            "board_post",
            "board_read",
            "cancel_wakeup",
            "kilo_local_recall",
        ],
    ),
    (
        Vocabulary::Cursor,
        &[
            "deleteToolCall",
            "mcpToolCall",
            "readLintsToolCall",
            "semSearchToolCall",
        ],
    ),
    (
        Vocabulary::Auggie,
        &[
            "remove-files",
            "read-process",
            "write-process",
            "kill-process",
            "list-processes",
            "read-terminal",
            "codebase-retrieval",
            "git-commit-retrieval",
            "diagnostics",
            "open-browser",
            "remember",
            "render-mermaid",
            "view_tasklist",
            "update_tasks",
            "add_tasks",
            "reorganize_tasklist",
        ],
    ),
    (
        Vocabulary::Kiro,
        &[
            "use_aws",
            "report_issue",
            "gh_issue",
            "knowledge",
            "thinking",
            "introspect",
        ],
    ),
];

/// Every agent's own tool names.
pub fn all() -> impl Iterator<Item = &'static str> {
    OWN_TOOLS
        .iter()
        .flat_map(|(_, names)| names.iter().copied())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_tools_are_not_in_the_shared_vocabulary() {
        for (v, names) in OWN_TOOLS {
            for name in *names {
                assert!(
                    !v.mappings().iter().any(|m| m.raw == *name),
                    "{v:?} {name} is mapped: drop it here"
                );
                assert_eq!(
                    super::super::canonical_name(*v, name),
                    *name,
                    "{v:?} {name} has a canonical name: drop it here"
                );
            }
        }
    }
}
