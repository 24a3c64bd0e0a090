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

/// The description of `kind`.
pub fn cli(kind: AgentKind, options: &AgentOptions) -> Arc<dyn AgentCli> {
    match kind {
        AgentKind::Claude => Arc::new(Claude {
            permission_mode: options.permission_mode.clone(),
        }),
        AgentKind::Codex => Arc::new(super::codex::Codex),
        AgentKind::Gemini => Arc::new(super::gemini::Gemini),
        AgentKind::Qwen => Arc::new(super::qwen::Qwen),
        AgentKind::Copilot => Arc::new(super::copilot::Copilot),
        AgentKind::Opencode => Arc::new(super::opencode::Opencode),
        AgentKind::Pi => Arc::new(super::pi::Pi),
        AgentKind::Cursor => Arc::new(super::cursor::Cursor),
        AgentKind::Aider => Arc::new(super::aider::Aider),
        AgentKind::Kiro => Arc::new(super::kiro::Kiro),
    }
}

/// The agent `kind`, run with `settings`.
pub fn agent(kind: AgentKind, settings: AgentSettings, options: &AgentOptions) -> Arc<dyn Agent> {
    Arc::new(CliAgent::new(cli(kind, options), settings))
}

/// The per-agent table of `docs/agents.md` (Markdown), generated from the registry so the
/// docs can not drift from the code: binary, install command, API key variable, how a base
/// URL is set, and the stream format parsed.
pub fn docs_table() -> String {
    let mut out = String::from(
        "| agent | binary (override) | install | API key | `--agent-base-url` sets | stream parsed |\n|---|---|---|---|---|---|\n",
    );
    for kind in AgentKind::ALL {
        let cli = cli(kind, &AgentOptions::default());
        out.push_str(&format!(
            "| `{kind}` | `{}` (`--agent-bin {kind}=PATH`, `{}`) | `{}` | `{}` | {} | {} |\n",
            cli.program(),
            kind.bin_env(),
            cli.install_hint(),
            cli.api_key_env(),
            cli.base_url_via(),
            cli.transcript_source(),
        ));
    }
    out
}

/// The per-agent table of `docs/agents.md`'s model gateway section (Markdown), generated
/// from each agent's [`super::ModelRoute`]: which variables hold placeholders, how the
/// endpoint reaches the agent, where its traffic goes without a base URL, and its login.
pub fn gateway_table() -> String {
    let mut out = String::from(
        "| agent | placeholder in | endpoint given as | upstream without a base URL | login |\n|---|---|---|---|---|\n",
    );
    for kind in AgentKind::ALL {
        let cli = cli(kind, &AgentOptions::default());
        let Some(route) = cli.model_route() else {
            out.push_str(&format!(
                "| `{kind}` | — | not routed: talks only to its own backend, directly | — | its own |\n"
            ));
            continue;
        };
        let keys: Vec<String> = route.key_envs.iter().map(|k| format!("`{k}`")).collect();
        let upstream = match route.default_upstream {
            Some(url) => format!(
                "`{url}` (with a key{})",
                if route.login_passes_through {
                    " or a login"
                } else {
                    ""
                }
            ),
            None => "none: direct, unmetered".to_owned(),
        };
        let login = match (route.login, route.login_passes_through) {
            (Some(file), _) => format!("`{}`: tokens swapped for placeholders", file.file),
            (None, true) => "passes through".to_owned(),
            (None, false) => "not routed (direct)".to_owned(),
        };
        out.push_str(&format!(
            "| `{kind}` | {} | {} | {upstream} | {login} |\n",
            keys.join(", "),
            cli.base_url_via(),
        ));
    }
    out
}

/// Checks that `docs/agents.md` holds `wanted` between `<!-- {name}:start -->` and
/// `<!-- {name}:end -->`; `UPDATE_DOCS=1` rewrites it.
#[cfg(test)]
pub(crate) fn check_docs_table(name: &str, wanted: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/agents.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let (start, end) = (
        format!("<!-- {name}:start -->\n"),
        format!("<!-- {name}:end -->"),
    );
    let (Some(i), Some(j)) = (text.find(&start), text.find(&end)) else {
        panic!("docs/agents.md lacks the {start:?} … {end:?} markers");
    };
    let current = &text[i + start.len()..j];
    if current != wanted {
        if std::env::var_os("UPDATE_DOCS").is_some() {
            let updated = format!("{}{wanted}{}", &text[..i + start.len()], &text[j..]);
            std::fs::write(&path, updated).unwrap();
        } else {
            panic!(
                "docs/agents.md's {name} differs from the code; run `UPDATE_DOCS=1 cargo test --lib registry`\n{wanted}"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gateway_and_price_tables_are_generated_from_the_code() {
        check_docs_table("gateway-table", &gateway_table());
        check_docs_table("price-table", &crate::gateway::price::docs_table());
    }

    /// `docs/agents.md` holds [`docs_table`] between its markers; `UPDATE_DOCS=1` rewrites it.
    #[test]
    fn the_docs_table_is_generated_from_the_registry() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/agents.md");
        let text = std::fs::read_to_string(&path).unwrap();
        let (start, end) = ("<!-- agents-table:start -->\n", "<!-- agents-table:end -->");
        let (Some(i), Some(j)) = (text.find(start), text.find(end)) else {
            panic!("docs/agents.md lacks the {start:?} … {end:?} markers");
        };
        let current = &text[i + start.len()..j];
        let wanted = docs_table();
        if current != wanted {
            if std::env::var_os("UPDATE_DOCS").is_some() {
                let updated = format!("{}{wanted}{}", &text[..i + start.len()], &text[j..]);
                std::fs::write(&path, updated).unwrap();
            } else {
                panic!(
                    "docs/agents.md's agents table differs from the registry; run `UPDATE_DOCS=1 cargo test --lib registry`\n{wanted}"
                );
            }
        }
    }

    /// `aptitude agents` compares installed versions with each agent's pin, read from its
    /// install hint: the pins must be the versions the tests run (`package.json`,
    /// `tests/agents-requirements.txt`).
    #[test]
    fn pins_are_the_versions_the_tests_install() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let package: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(root.join("package.json")).unwrap())
                .unwrap();
        let requirements =
            std::fs::read_to_string(root.join("tests/agents-requirements.txt")).unwrap();
        for kind in AgentKind::ALL {
            let cli = cli(kind, &AgentOptions::default());
            let hint = cli.install_hint();
            let Some(pin) = cli.pinned_version() else {
                assert!(
                    matches!(kind, AgentKind::Cursor | AgentKind::Kiro),
                    "{kind} has no pin in {hint:?} (only the agents not installable from a registry have none)"
                );
                continue;
            };
            if let Some(spec) = hint.strip_prefix("npm install -g ") {
                let (package_name, _) = spec.rsplit_once('@').unwrap();
                assert_eq!(
                    package["dependencies"][package_name].as_str(),
                    Some(pin),
                    "{kind}: package.json pins another version than {hint:?}"
                );
            } else if let Some(spec) = hint.strip_prefix("pip install ") {
                assert!(
                    requirements.lines().any(|l| l.trim() == spec),
                    "{kind}: tests/agents-requirements.txt lacks {spec}"
                );
            } else {
                panic!("{kind}: no pinned install in {hint:?}");
            }
        }
        assert_eq!(
            super::super::pin_of("curl https://x/install -fsS | bash"),
            None
        );
        assert_eq!(super::super::pin_of("pip install a==1.2"), Some("1.2"));
    }

    #[test]
    fn every_entry_describes_its_own_kind() {
        for kind in AgentKind::ALL {
            assert_eq!(cli(kind, &AgentOptions::default()).kind(), kind);
        }
    }
}
