//! The names of the agent CLIs aptitude knows, shared by every stage.
//!
//! A test names its agents (`agent: codex`, `agents: [claude, gemini]`), the command line
//! names them (`--agent`, `--agent-bin codex=PATH`), results and transcripts carry them.
//! The spec stage parses names into [`AgentKind`] before any agent module exists for it to
//! reach, so the enum lives here, below every stage; everything particular to one agent
//! (flags, environment, stream format) lives in its own module under `src/agent/`.

use std::fmt;
use std::str::FromStr;

/// One agent CLI, by the name a test file uses.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum AgentKind {
    /// Claude Code (`claude`, npm `@anthropic-ai/claude-code`).
    Claude,
    /// OpenAI Codex CLI (`codex`, npm `@openai/codex`).
    Codex,
    /// Gemini CLI (`gemini`, npm `@google/gemini-cli`).
    Gemini,
    /// Qwen Code (`qwen`, npm `@qwen-code/qwen-code`).
    Qwen,
    /// GitHub Copilot CLI (`copilot`, npm `@github/copilot`).
    Copilot,
    /// opencode (`opencode`, npm `opencode-ai`).
    Opencode,
    /// pi (`pi`, npm `@mariozechner/pi-coding-agent`).
    Pi,
    /// Aider (`aider`, PyPI `aider-chat`).
    Aider,
    /// Cursor CLI (`cursor-agent`, installed by Cursor's own script).
    Cursor,
}

impl AgentKind {
    /// Every agent, in the order shown to users.
    pub const ALL: [AgentKind; 9] = [
        AgentKind::Claude,
        AgentKind::Codex,
        AgentKind::Gemini,
        AgentKind::Qwen,
        AgentKind::Copilot,
        AgentKind::Opencode,
        AgentKind::Pi,
        AgentKind::Aider,
        AgentKind::Cursor,
    ];

    /// The name written in test files and on the command line (`claude`, `codex`, …).
    pub fn name(self) -> &'static str {
        match self {
            AgentKind::Claude => "claude",
            AgentKind::Codex => "codex",
            AgentKind::Gemini => "gemini",
            AgentKind::Qwen => "qwen",
            AgentKind::Copilot => "copilot",
            AgentKind::Opencode => "opencode",
            AgentKind::Pi => "pi",
            AgentKind::Aider => "aider",
            AgentKind::Cursor => "cursor",
        }
    }

    /// Every name, in [`AgentKind::ALL`] order.
    pub fn names() -> impl Iterator<Item = &'static str> {
        AgentKind::ALL.iter().map(|k| k.name())
    }

    /// The variable that names this agent's binary: `APTITUDE_<NAME>_BIN`.
    pub fn bin_env(self) -> String {
        format!("APTITUDE_{}_BIN", self.name().to_ascii_uppercase())
    }
}

impl fmt::Display for AgentKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An agent name that is not one of [`AgentKind::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown agent `{name}`; {hint}")]
pub struct UnknownAgent {
    /// The name as given.
    pub name: String,
    /// `did you mean `codex`?` or the list of known agents.
    pub hint: String,
}

impl FromStr for AgentKind {
    type Err = UnknownAgent;

    /// Parses a name exactly as [`AgentKind::name`] spells it (also `cursor-agent`).
    ///
    /// # Errors
    /// [`UnknownAgent`] with a did-you-mean suggestion when one is close.
    fn from_str(s: &str) -> Result<Self, UnknownAgent> {
        if s == "cursor-agent" {
            return Ok(AgentKind::Cursor);
        }
        AgentKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| UnknownAgent {
                name: s.to_owned(),
                hint: crate::shared::suggest::did_you_mean(s, AgentKind::names())
                    .map(|m| format!("did you mean `{m}`?"))
                    .unwrap_or_else(|| {
                        format!(
                            "known agents: {}",
                            AgentKind::names().collect::<Vec<_>>().join(", ")
                        )
                    }),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_get_a_suggestion() {
        for kind in AgentKind::ALL {
            assert_eq!(kind.name().parse::<AgentKind>(), Ok(kind));
            assert_eq!(
                serde_json::to_string(&kind).unwrap(),
                format!("\"{}\"", kind.name())
            );
        }
        let err = "codx".parse::<AgentKind>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown agent `codx`; did you mean `codex`?"
        );
        let err = "zzzzzz".parse::<AgentKind>().unwrap_err();
        assert!(err.hint.starts_with("known agents: claude, codex"), "{err}");
        assert_eq!(AgentKind::Opencode.bin_env(), "APTITUDE_OPENCODE_BIN");
    }
}
