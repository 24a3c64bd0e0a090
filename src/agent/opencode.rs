//! The opencode adapter (`opencode-ai`, flags and events as observed with 1.18.33; see
//! `docs/agents.md` and `tests/data/corpus/live/opencode-1.18.33/`).
//!
//! - **Run:** `opencode run --format json --pure [-m M] PROMPT` in the workspace copy
//!   ([`Format::OpencodeJson`]). `--pure` loads no plugin: neither the workspace's own
//!   (`.opencode/plugin/*.{js,ts}`, in-process code whose `tool.execute.before` can rewrite
//!   a tool's arguments) nor one named in a configuration, and keeps opencode from
//!   installing its plugin package with npm at run time.
//! - **Hooks:** with `hooks: workspace` the run goes without `--pure`, so the workspace's
//!   plugins load (verified with opencode 1.18.33, `tests/it/hooks.rs`). opencode then
//!   installs `@opencode-ai/plugin` with its built-in npm (which reads npm's `npm_config_*`
//!   variables); the sandbox has no network unless `network:` allows the registry, and
//!   npm's default two retries of a failed fetch (10 s, then 60 s back-off) held every such
//!   run ~70 s, so `npm_config_fetch_retries=0` is a default (a test's `env:` may change it).
//! - **Isolation:** `XDG_CONFIG_HOME`, `XDG_DATA_HOME`, `XDG_CACHE_HOME` and
//!   `XDG_STATE_HOME` under the run's private home; the configuration is passed whole in
//!   `OPENCODE_CONFIG_CONTENT`: every permission `allow` (the workspace is a throwaway copy;
//!   a permission left at `ask` is auto-rejected and opencode still exits 0, which the
//!   transcript reports as a failure), and with a base URL a provider `aptitude`.
//! - **Base URL:** provider `aptitude` (`@ai-sdk/openai-compatible`, Chat Completions) with
//!   `baseURL` and `apiKey: {env:OPENAI_API_KEY}`; the model is then `aptitude/M`, so a
//!   model is required. Without a base URL, `model` is opencode's own `provider/model`.
//! - **MCP servers:** `mcp` in that configuration ([`mcp_config`]).
//! - **Retries:** a model 500 is retried with a fixed backoff, ~75 s in all; no setting
//!   found shortens it.
//! - **Turns:** opencode takes no turn limit; `max_turns` is not enforced.
//! - **Grading:** the same command with every permission `deny`.

use std::path::Path;

use super::args;
use super::{
    AgentCli, AgentKind, GradeTask, Invocation, InvocationError, McpServer, McpServers, Task,
};
use crate::spec::HooksSetting;
use crate::transcript::Format;

/// opencode.
#[derive(Debug, Clone, Default)]
pub struct Opencode;

/// opencode's `mcp` config: `{name: {"type": "local", command: [cmd, args…], environment,
/// enabled: true} | {"type": "remote", url, headers, enabled: true}}` (1.18).
pub fn mcp_config(servers: &McpServers) -> serde_json::Value {
    let servers = super::mcp_entries(servers, |server| match server {
        McpServer::Stdio { command, args, env } => {
            let mut argv = vec![command.clone()];
            argv.extend(args.iter().cloned());
            serde_json::json!({
                "type": "local", "command": argv, "environment": env, "enabled": true,
            })
        }
        McpServer::Http { url, headers } => serde_json::json!({
            "type": "remote", "url": url, "headers": headers, "enabled": true,
        }),
    });
    serde_json::Value::Object(servers)
}

/// `opencode run --format json [--pure] [-m MODEL] [--session SESSION] PROMPT`, with its
/// config (`permission` for every tool, the test's MCP servers, the gateway's provider)
/// in `OPENCODE_CONFIG_CONTENT` and its XDG directories in the private `home`.
fn invocation(
    (prompt, session): (&str, Option<&str>),
    model: Option<&str>,
    base_url: Option<&str>,
    permission: &str,
    home: &Path,
    mcp_servers: &McpServers,
    hooks: HooksSetting,
) -> Result<Invocation, InvocationError> {
    let mut config = serde_json::json!({
        "permission": {"*": permission},
        "autoupdate": false,
        "share": "disabled",
    });
    if !mcp_servers.is_empty() {
        config["mcp"] = mcp_config(mcp_servers);
    }
    let mut a = args(["run", "--format", "json"]);
    if hooks == HooksSetting::None {
        a.push("--pure".into());
    }
    match (base_url, model) {
        (Some(url), Some(model)) => {
            config["model"] = serde_json::json!(format!("aptitude/{model}"));
            config["provider"] = serde_json::json!({"aptitude": {
                "npm": "@ai-sdk/openai-compatible",
                "options": {"baseURL": url, "apiKey": "{env:OPENAI_API_KEY}"},
                "models": {model: {"tool_call": true}},
            }});
        }
        (Some(_), None) => {
            return Err(InvocationError::Unsupported(
                "needs a model with a base URL (`model:` or --model): it names the model of its `aptitude` provider",
            ));
        }
        (None, Some(model)) => a.extend(["-m".into(), model.into()]),
        (None, None) => {}
    }
    if let Some(session) = session {
        a.extend(["--session".into(), session.into()]);
    }
    a.push(prompt.into());
    let xdg = |kind: &str, dir: &str| (kind.to_owned(), home.join(dir).display().to_string());
    let mut defaults = vec![
        ("OPENCODE_DISABLE_MODELS_FETCH".to_owned(), "1".to_owned()),
        ("OPENCODE_DISABLE_AUTOUPDATE".to_owned(), "1".to_owned()),
        (
            "OPENCODE_DISABLE_DEFAULT_PLUGINS".to_owned(),
            "1".to_owned(),
        ),
    ];
    if hooks != HooksSetting::None {
        // Its plugin install fails at once without network, not after ~70 s of retries.
        defaults.push(("npm_config_fetch_retries".to_owned(), "0".to_owned()));
    }
    Ok(Invocation {
        args: a,
        defaults,
        isolation: vec![
            xdg("XDG_CONFIG_HOME", "config"),
            xdg("XDG_DATA_HOME", "data"),
            xdg("XDG_CACHE_HOME", "cache"),
            xdg("XDG_STATE_HOME", "state"),
            ("OPENCODE_CONFIG_CONTENT".to_owned(), config.to_string()),
        ],
    })
}

/// The invocation of `task`, every permission `allow`: its first turn, or (`session`) the
/// next turn of that session.
fn task_invocation(
    task: &Task<'_>,
    session: Option<&str>,
    home: &Path,
) -> Result<Invocation, InvocationError> {
    invocation(
        (task.prompt, session),
        task.model,
        task.base_url,
        "allow",
        home,
        task.mcp_servers,
        task.hooks,
    )
}

impl AgentCli for Opencode {
    fn kind(&self) -> AgentKind {
        AgentKind::Opencode
    }

    fn program(&self) -> &'static str {
        "opencode"
    }

    fn install_hint(&self) -> &'static str {
        "npm install -g opencode-ai@1.18.33"
    }

    fn api_key_env(&self) -> &'static str {
        "OPENAI_API_KEY"
    }

    fn own_env(&self) -> &'static [&'static str] {
        &["OPENCODE_", "OPENAI_"]
    }

    /// Only with a base URL (the provider `aptitude`, key `{env:OPENAI_API_KEY}`):
    /// without one, opencode's own providers are configured by the user.
    fn model_route(&self) -> Option<super::ModelRoute> {
        Some(super::ModelRoute {
            base_url_env: None,
            key_envs: &["OPENAI_API_KEY"],
            default_upstream: None,
            login_passes_through: false,
            login: None,
            protocols: {
                use crate::gateway::protocol::Protocol as P;
                &[P::Chat]
            },
        })
    }

    fn base_url_via(&self) -> &'static str {
        "a provider `aptitude` in `OPENCODE_CONFIG_CONTENT` (Chat Completions; needs a model)"
    }

    fn stream_format(&self) -> Format {
        Format::OpencodeJson
    }

    fn supports_mcp(&self) -> bool {
        true
    }

    fn task(&self, task: &Task<'_>, home: &Path) -> Result<Invocation, InvocationError> {
        task_invocation(task, None, home)
    }

    /// `opencode run --format json … --session SESSION REPLY`: the reply as the next turn
    /// of the session its events' `sessionID` named (1.18.33 keeps sessions under the run's
    /// private `XDG_DATA_HOME`). opencode's `run` denies its `question` tool, so the agent
    /// asks in plain text, and this is its conversation channel.
    fn follow_up(
        &self,
        task: &Task<'_>,
        session: &str,
        home: &Path,
    ) -> Option<Result<Invocation, InvocationError>> {
        Some(task_invocation(task, Some(session), home))
    }

    fn grade(&self, task: &GradeTask<'_>, home: &Path) -> Result<Invocation, InvocationError> {
        invocation(
            (task.prompt, None),
            task.model,
            task.base_url,
            "deny",
            home,
            &McpServers::new(),
            HooksSetting::None,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only a run that loads workspace plugins (`hooks: workspace`, no `--pure`) gets
    /// `npm_config_fetch_retries=0`, as a default a test's `env:` may change.
    #[test]
    fn a_plugin_install_is_not_retried_and_only_without_pure() {
        let home = tempfile::tempdir().unwrap();
        let run = |hooks| {
            invocation(
                ("p", None),
                Some("m"),
                Some("http://127.0.0.1:9/v1"),
                "allow",
                home.path(),
                &Default::default(),
                hooks,
            )
            .unwrap()
        };
        let retries = |inv: &Invocation| {
            inv.defaults
                .iter()
                .find(|(k, _)| k == "npm_config_fetch_retries")
                .map(|(_, v)| v.clone())
        };
        let pure = run(HooksSetting::None);
        assert!(pure.args.iter().any(|a| a == "--pure"));
        assert_eq!(retries(&pure), None);
        let workspace = run(HooksSetting::Workspace);
        assert!(!workspace.args.iter().any(|a| a == "--pure"));
        assert_eq!(retries(&workspace).as_deref(), Some("0"));
    }
}
