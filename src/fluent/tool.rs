//! The [`Tool`] enum of upstream aptitude's fluent API (`tatimblin/aptitude` 0.4.0,
//! `src/fluent/tool.rs`): Claude Code's built-in tools by their canonical names, for
//! `expect(&calls).tool(Tool::Read)`. A name works as well (`.tool("Read")`, any alias, any
//! case, `*` globs); the enum is there so that upstream's code compiles unchanged and a
//! typo is a compile error.

use std::fmt;

/// A tool, by its canonical name ([`Tool::as_str`]); each agent's own spelling of it
/// (`run_shell_command`, `exec_command` …) is matched too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tool {
    /// Reads a file.
    Read,
    /// Writes a whole file.
    Write,
    /// Edits part of a file.
    Edit,
    /// Runs a shell command.
    Bash,
    /// Finds files by a glob.
    Glob,
    /// Searches file contents.
    Grep,
    /// Starts a subagent.
    Task,
    /// Fetches a URL.
    WebFetch,
    /// Searches the web.
    WebSearch,
    /// Edits a Jupyter notebook cell.
    NotebookEdit,
    /// Asks the user a question.
    AskUserQuestion,
    /// Updates the to-do list.
    TodoWrite,
    /// Stops a background shell.
    KillShell,
    /// Reads a background task's output.
    TaskOutput,
    /// Runs a skill.
    Skill,
}

impl Tool {
    /// Every tool, in declaration order.
    pub const ALL: [Tool; 15] = [
        Tool::Read,
        Tool::Write,
        Tool::Edit,
        Tool::Bash,
        Tool::Glob,
        Tool::Grep,
        Tool::Task,
        Tool::WebFetch,
        Tool::WebSearch,
        Tool::NotebookEdit,
        Tool::AskUserQuestion,
        Tool::TodoWrite,
        Tool::KillShell,
        Tool::TaskOutput,
        Tool::Skill,
    ];

    /// Every tool (upstream's `Tool::all()`).
    pub fn all() -> &'static [Tool] {
        &Self::ALL
    }

    /// The canonical name, e.g. `"WebFetch"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Tool::Read => "Read",
            Tool::Write => "Write",
            Tool::Edit => "Edit",
            Tool::Bash => "Bash",
            Tool::Glob => "Glob",
            Tool::Grep => "Grep",
            Tool::Task => "Task",
            Tool::WebFetch => "WebFetch",
            Tool::WebSearch => "WebSearch",
            Tool::NotebookEdit => "NotebookEdit",
            Tool::AskUserQuestion => "AskUserQuestion",
            Tool::TodoWrite => "TodoWrite",
            Tool::KillShell => "KillShell",
            Tool::TaskOutput => "TaskOutput",
            Tool::Skill => "Skill",
        }
    }
}

impl AsRef<str> for Tool {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Display for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each variant is its own canonical name: the assertions' vocabulary maps nothing
    /// else onto it.
    #[test]
    fn every_variant_is_canonical() {
        for tool in Tool::all() {
            assert_eq!(
                crate::spec::tools::canonical_tool_name(tool.as_str()),
                tool.as_str()
            );
            assert_eq!(tool.to_string(), format!("{tool:?}"));
        }
    }
}
