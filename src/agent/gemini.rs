//! The Gemini CLI adapter (`@google/gemini-cli`, flags and events as observed with 0.61.0;
//! see `docs/agents.md` and `tests/data/corpus/live/gemini-0.61.0/`).
//!
//! - **Run:** `gemini -p PROMPT [-m M] --output-format stream-json --yolo` in the workspace
//!   copy ([`Format::GeminiStreamJson`]). Name a model: without `-m` Gemini CLI first asks
//!   another model to pick one.
//! - **Isolation:** `GEMINI_CLI_HOME` is the run's private home, holding a
//!   `.gemini/settings.json` that selects API-key auth (`GEMINI_API_KEY`), turns off usage
//!   statistics and telemetry, makes one attempt per model request (the default retries
//!   for ~3.5 min; `--retry-infra` retries visibly) and sets `model.maxSessionTurns` from `max_turns`.
//!   `GEMINI_CLI_TRUST_WORKSPACE=true` trusts the workspace copy.
//! - **One process:** `GEMINI_CLI_NO_RELAUNCH=true`. Otherwise Gemini CLI 0.61 starts a
//!   second Node.js process of itself at every run, only to raise V8's heap limit to half
//!   the machine's memory. That second start measured 1.0–1.2 CPU-s of the 2.1–2.4 CPU-s
//!   of `gemini --version` (2 cores, Node.js 20). The sandbox bounds a run's memory anyway.
//! - **Hooks:** unless the test says `hooks: workspace`, a system settings file
//!   (`GEMINI_CLI_SYSTEM_SETTINGS_PATH`, which outranks the workspace's
//!   `.gemini/settings.json`) sets `hooksConfig.enabled: false`: no `BeforeTool` hook of
//!   the trusted workspace runs.
//! - **Base URL:** `GOOGLE_GEMINI_BASE_URL`.
//! - **MCP servers:** `mcpServers` in that settings file ([`mcp_servers_setting`]); the
//!   user's own settings are not read.
//! - **Exit codes:** a shell command that exits non-zero is still `status: success` in the
//!   events, whose output holds no exit code. After the run, the session log Gemini CLI
//!   wrote under the private home (`.gemini/tmp/<project>/chats/session-*.jsonl`, whose
//!   tool responses end `Exit Code: N`) gives each call its exit code, matched by call id.
//! - **Conversation:** headless, Gemini CLI removes its `ask_user` tool and asks in plain
//!   text at the end of its turn; a test's `user:` replies with a follow-up turn in the same
//!   session (`--resume SESSION`, [`AgentCli::follow_up`]).
//! - **Grading:** `gemini -p PROMPT [-m M] --output-format stream-json --approval-mode plan`
//!   in an empty directory, with `tools.core: []` in the system settings file: no tool is
//!   offered (the judge and the simulated user are tools-less); the reply is the final
//!   message.

use std::ffi::OsString;
use std::path::Path;

use super::{
    AgentCli, AgentKind, Finished, GradeTask, Invocation, InvocationError, McpServer, McpServers,
    Task,
};
use crate::spec::HooksSetting;
use crate::transcript::{Format, Transcript};

/// Gemini CLI.
#[derive(Debug, Clone, Default)]
pub struct Gemini;

/// The `mcpServers` setting of Gemini CLI (0.61) and Qwen Code (0.24): `{name: {command,
/// args, env} | {httpUrl, headers}}` (`httpUrl` is streamable HTTP; `url` would be SSE).
pub fn mcp_servers_setting(servers: &McpServers) -> serde_json::Value {
    let servers = super::mcp_entries(servers, |server| match server {
        McpServer::Stdio { command, args, env } => {
            serde_json::json!({"command": command, "args": args, "env": env})
        }
        McpServer::Http { url, headers } => {
            serde_json::json!({"httpUrl": url, "headers": headers})
        }
    });
    serde_json::Value::Object(servers)
}

/// Writes `<home>/.gemini/settings.json`.
fn write_settings(
    home: &Path,
    max_turns: Option<u32>,
    mcp_servers: &McpServers,
) -> Result<(), InvocationError> {
    let mut settings = serde_json::json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false},
        "general": {"maxAttempts": 1, "disableAutoUpdate": true},
    });
    if let Some(turns) = max_turns {
        settings["model"] = serde_json::json!({"maxSessionTurns": turns});
    }
    if !mcp_servers.is_empty() {
        settings["mcpServers"] = mcp_servers_setting(mcp_servers);
    }
    let dir = home.join(".gemini");
    std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(dir.join("settings.json"), settings.to_string()))
        .map_err(InvocationError::write(
            "settings",
            &dir.join("settings.json"),
        ))
}

/// Gemini CLI's system settings file, which "take precedence over all other settings"
/// (0.61's `docs/reference/configuration.md`), read from `GEMINI_CLI_SYSTEM_SETTINGS_PATH`.
const SYSTEM_SETTINGS: &str = "aptitude-system-settings.json";

/// Writes `<home>/aptitude-system-settings.json` turning hooks off (`hooksConfig.enabled`,
/// "when disabled, no hooks will be executed"; read once at start, so a copy the agent
/// edits during the run changes nothing), and returns its variable.
///
/// `tools_less` (the grading call) adds `tools.core: []`. Gemini CLI 0.61.0 registers a
/// built-in tool only when a present `tools.core` names it (`maybeRegister` in its
/// `createToolRegistry`; `settings.tools?.core || void 0` keeps an empty list, which
/// names nothing), so the request carries no function declaration. `--approval-mode
/// plan` alone still offered `update_topic`, `list_directory`, `read_file`,
/// `grep_search`, `glob`, `replace`, `write_file`, `google_web_search`, `exit_plan_mode`
/// and `invoke_agent` (read off the wire). With no MCP server and no discovery command
/// nothing else is registered; a grading call whose model calls a tool anyway is an
/// error, never a grade.
fn no_hooks(home: &Path, tools_less: bool) -> Result<(String, String), InvocationError> {
    let path = home.join(SYSTEM_SETTINGS);
    let mut settings = serde_json::json!({"hooksConfig": {"enabled": false}});
    if tools_less {
        settings["tools"] = serde_json::json!({"core": []});
    }
    std::fs::write(&path, settings.to_string())
        .map_err(InvocationError::write("system settings", &path))?;
    Ok((
        "GEMINI_CLI_SYSTEM_SETTINGS_PATH".to_owned(),
        path.display().to_string(),
    ))
}

fn invocation(
    mut args: Vec<OsString>,
    model: Option<&str>,
    base_url: Option<&str>,
    home: &Path,
    (hooks, tools_less): (HooksSetting, bool),
) -> Result<Invocation, InvocationError> {
    if let Some(model) = model {
        args.extend(["-m".into(), model.into()]);
    }
    let mut defaults = vec![
        ("GEMINI_CLI_TRUST_WORKSPACE".to_owned(), "true".to_owned()),
        ("GEMINI_CLI_NO_RELAUNCH".to_owned(), "true".to_owned()),
    ];
    if let Some(url) = base_url {
        defaults.push(("GOOGLE_GEMINI_BASE_URL".to_owned(), url.to_owned()));
    }
    let mut isolation = vec![("GEMINI_CLI_HOME".to_owned(), home.display().to_string())];
    if hooks == HooksSetting::None {
        isolation.push(no_hooks(home, tools_less)?);
    }
    Ok(Invocation {
        args,
        defaults,
        isolation,
    })
}

/// The session logs Gemini CLI wrote under a run's home: `.gemini/tmp/*/chats/*.jsonl`.
fn session_logs(home: &Path) -> Vec<std::path::PathBuf> {
    let tmp = home.join(".gemini").join("tmp");
    let mut logs = Vec::new();
    for project in std::fs::read_dir(tmp).into_iter().flatten().flatten() {
        let chats = project.path().join("chats");
        for entry in std::fs::read_dir(chats).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "jsonl") {
                logs.push(path);
            }
        }
    }
    logs.sort();
    logs
}

impl AgentCli for Gemini {
    fn kind(&self) -> AgentKind {
        AgentKind::Gemini
    }

    fn program(&self) -> &'static str {
        "gemini"
    }

    fn install_hint(&self) -> &'static str {
        "npm install -g @google/gemini-cli@0.61.0"
    }

    fn api_key_env(&self) -> &'static str {
        "GEMINI_API_KEY"
    }

    /// `gemini --version` relaunches itself too: 2.0–2.5 CPU-s with the relaunch,
    /// 1.3–1.4 without (0.61.0, 2 cores).
    fn version_env(&self) -> Vec<(String, String)> {
        vec![("GEMINI_CLI_NO_RELAUNCH".to_owned(), "true".to_owned())]
    }

    fn own_env(&self) -> &'static [&'static str] {
        &["GEMINI_", "GOOGLE_GEMINI_", "GOOGLE_API_KEY"]
    }

    fn base_url_env(&self) -> Option<&'static str> {
        Some("GOOGLE_GEMINI_BASE_URL")
    }

    /// `GOOGLE_GEMINI_BASE_URL` with API-key auth (`x-goog-api-key`).
    fn model_route(&self) -> Option<super::ModelRoute> {
        Some(super::ModelRoute {
            base_url_env: Some("GOOGLE_GEMINI_BASE_URL"),
            key_envs: &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
            default_upstream: Some("https://generativelanguage.googleapis.com"),
            login_passes_through: false,
            login: None,
            protocols: {
                use crate::gateway::protocol::Protocol as P;
                &[P::Gemini]
            },
        })
    }

    fn base_url_via(&self) -> &'static str {
        "`GOOGLE_GEMINI_BASE_URL`"
    }

    fn stream_format(&self) -> Format {
        Format::GeminiStreamJson
    }

    fn supports_mcp(&self) -> bool {
        true
    }

    fn task(&self, task: &Task<'_>, home: &Path) -> Result<Invocation, InvocationError> {
        write_settings(home, task.max_turns, task.mcp_servers)?;
        let args = vec![
            "-p".into(),
            task.prompt.into(),
            "--output-format".into(),
            "stream-json".into(),
            "--yolo".into(),
        ];
        invocation(args, task.model, task.base_url, home, (task.hooks, false))
    }

    /// `gemini -p REPLY --resume SESSION … --output-format stream-json --yolo`: the reply
    /// as the next turn of the session its `init` event named (0.61.0 takes a session's
    /// UUID, an index or `latest`; sessions are per project, and the follow-up runs in the
    /// same workspace copy and private home). Headless Gemini CLI removes its `ask_user`
    /// tool and asks in plain text, so this is its conversation channel.
    fn follow_up(
        &self,
        task: &Task<'_>,
        session: &str,
        home: &Path,
    ) -> Option<Result<Invocation, InvocationError>> {
        let args = vec![
            "-p".into(),
            task.prompt.into(),
            "--resume".into(),
            session.into(),
            "--output-format".into(),
            "stream-json".into(),
            "--yolo".into(),
        ];
        Some(invocation(
            args,
            task.model,
            task.base_url,
            home,
            (task.hooks, false),
        ))
    }

    fn grade(&self, task: &GradeTask<'_>, home: &Path) -> Result<Invocation, InvocationError> {
        write_settings(home, Some(1), &McpServers::new())?;
        let args = vec![
            "-p".into(),
            task.prompt.into(),
            "--output-format".into(),
            "stream-json".into(),
            "--approval-mode".into(),
            "plan".into(),
        ];
        invocation(
            args,
            task.model,
            task.base_url,
            home,
            (HooksSetting::None, true),
        )
    }

    /// Fills in the exit codes the stream left out, from the session log.
    fn finish(&self, mut transcript: Transcript, finished: &Finished<'_>) -> Transcript {
        if transcript.tool_calls.iter().all(|c| c.exit_code.is_some()) {
            return transcript;
        }
        for log in session_logs(finished.home) {
            let Ok(session) = crate::transcript::parse_file(&log) else {
                continue;
            };
            for call in &mut transcript.tool_calls {
                if call.exit_code.is_none()
                    && let Some(logged) = session.tool_calls.iter().find(|c| c.id == call.id)
                {
                    call.exit_code = logged.exit_code;
                }
            }
        }
        transcript
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The version probe does not relaunch either, and a user's own value still wins: a
    /// stand-in `gemini` prints what it got.
    #[tokio::test]
    async fn the_version_probe_does_not_relaunch_and_the_users_env_wins() {
        use crate::agent::{Agent, AgentSettings, CliAgent};
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("gemini");
        std::fs::write(
            &bin,
            "#!/bin/sh\necho \"relaunch=${GEMINI_CLI_NO_RELAUNCH:-unset} $GEMINI_PROBE\"\n",
        )
        .unwrap();
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        let probe = |env: Vec<(String, String)>| {
            let agent = CliAgent::new(
                std::sync::Arc::new(Gemini),
                AgentSettings {
                    binary: Some(bin.clone()),
                    env,
                    ..AgentSettings::default()
                },
            );
            async move { agent.check().await.unwrap().version }
        };
        let pair = |n: &str, v: &str| (n.to_owned(), v.to_owned());
        assert_eq!(
            probe(vec![pair("GEMINI_PROBE", "x")]).await,
            "relaunch=true x"
        );
        assert_eq!(
            probe(vec![pair("GEMINI_CLI_NO_RELAUNCH", "")]).await,
            "relaunch=unset"
        );
    }

    /// Every Gemini CLI start is one Node.js process: `GEMINI_CLI_NO_RELAUNCH` is among the
    /// defaults, beside the trusted workspace and the base URL.
    #[test]
    fn gemini_cli_does_not_relaunch_itself() {
        let home = tempfile::tempdir().unwrap();
        let inv = invocation(
            Vec::new(),
            Some("m"),
            Some("http://127.0.0.1:9"),
            home.path(),
            (HooksSetting::None, false),
        )
        .unwrap();
        for (name, value) in [
            ("GEMINI_CLI_NO_RELAUNCH", "true"),
            ("GEMINI_CLI_TRUST_WORKSPACE", "true"),
            ("GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:9"),
        ] {
            assert!(
                inv.defaults.contains(&(name.to_owned(), value.to_owned())),
                "{name}: {:?}",
                inv.defaults
            );
        }
    }
}
