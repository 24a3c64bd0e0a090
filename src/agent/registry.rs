//! The registry: one entry per agent, from its [`AgentKind`] to its [`AgentCli`]
//! description. The only place that lists the agent modules.

use std::sync::Arc;

use super::claude::{Claude, PermissionMode};
use super::{Agent, AgentCli, AgentKind, AgentSettings, CliAgent};

/// Options that only some agents take.
#[derive(Debug, Clone, Default)]
pub struct AgentOptions {
    /// Claude Code's permission mode (`--permission-mode`).
    pub permission_mode: PermissionMode,
}

/// The description of `kind`, or `None` for an agent this version can only parse
/// transcripts of.
pub fn cli(kind: AgentKind, options: &AgentOptions) -> Option<Arc<dyn AgentCli>> {
    Some(match kind {
        AgentKind::Claude => Arc::new(Claude {
            permission_mode: options.permission_mode.clone(),
        }),
        AgentKind::Codex => Arc::new(super::codex::Codex),
        AgentKind::Gemini => Arc::new(super::gemini::Gemini),
        AgentKind::Qwen => Arc::new(super::qwen::Qwen),
        AgentKind::Copilot
        | AgentKind::Opencode
        | AgentKind::Pi
        | AgentKind::Aider
        | AgentKind::Cursor => {
            return None;
        }
    })
}

/// The agent `kind`, run with `settings`; `None` as for [`cli`].
pub fn agent(
    kind: AgentKind,
    settings: AgentSettings,
    options: &AgentOptions,
) -> Option<Arc<dyn Agent>> {
    cli(kind, options).map(|cli| Arc::new(CliAgent::new(cli, settings)) as Arc<dyn Agent>)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_describes_its_own_kind() {
        for kind in AgentKind::ALL {
            if let Some(cli) = cli(kind, &AgentOptions::default()) {
                assert_eq!(cli.kind(), kind);
            }
        }
    }
}
