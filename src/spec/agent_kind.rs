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
    /// Kiro CLI (`kiro-cli`, installed by Kiro's own script).
    Kiro,
}

impl AgentKind {
    /// Every agent, in the order shown to users.
    pub const ALL: [AgentKind; 10] = [
        AgentKind::Claude,
        AgentKind::Codex,
        AgentKind::Gemini,
        AgentKind::Qwen,
        AgentKind::Copilot,
        AgentKind::Opencode,
        AgentKind::Pi,
        AgentKind::Aider,
        AgentKind::Cursor,
        AgentKind::Kiro,
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
            AgentKind::Kiro => "kiro",
        }
    }

    /// Other names accepted for an agent (lowercase; any case is accepted): upstream
    /// aptitude's `claude-code`, and the binaries `cursor-agent` and `kiro-cli`.
    pub const ALIASES: [(&'static str, AgentKind); 3] = [
        ("claude-code", AgentKind::Claude),
        ("cursor-agent", AgentKind::Cursor),
        ("kiro-cli", AgentKind::Kiro),
    ];

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

    /// Parses a name as [`AgentKind::name`] spells it, in any case (`Claude`, `KIRO`), or
    /// one of [`AgentKind::ALIASES`] (`claude-code`, as upstream aptitude names Claude Code).
    ///
    /// # Errors
    /// [`UnknownAgent`] with a did-you-mean suggestion when one is close.
    fn from_str(s: &str) -> Result<Self, UnknownAgent> {
        let lower = s.to_ascii_lowercase();
        if let Some((_, kind)) = AgentKind::ALIASES.iter().find(|(a, _)| *a == lower) {
            return Ok(*kind);
        }
        AgentKind::ALL
            .into_iter()
            .find(|k| k.name() == lower)
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

    #[test]
    fn upstream_spellings_name_their_agent_in_any_case() {
        for (name, kind) in [
            ("claude-code", AgentKind::Claude),
            ("Claude-Code", AgentKind::Claude),
            ("CLAUDE", AgentKind::Claude),
            ("kiro", AgentKind::Kiro),
            ("KIRO", AgentKind::Kiro),
            ("kiro-cli", AgentKind::Kiro),
            ("cursor-agent", AgentKind::Cursor),
        ] {
            assert_eq!(name.parse::<AgentKind>(), Ok(kind), "{name}");
        }
        assert!("claude-codex".parse::<AgentKind>().is_err());
    }
}
