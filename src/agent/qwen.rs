//! The Qwen Code adapter (`@qwen-code/qwen-code`, flags and events as observed with 0.24.4;
//! see `docs/agents.md` and `tests/data/corpus/live/qwen-0.24.4/`).
//!
//! - **Run:** `qwen --auth-type openai [-m M] -o stream-json --yolo PROMPT` in the
//!   workspace copy ([`Format::QwenStreamJson`]).
//! - **Isolation:** `QWEN_HOME` is `<private home>/.qwen`, holding a `settings.json` with
//!   no retries of failed model requests (`model.generationConfig.maxRetries: 0`), no
//!   telemetry, and `model.maxSessionTurns` from `max_turns`.
//! - **Base URL:** `OPENAI_BASE_URL` (Chat Completions); the key is read from
//!   `OPENAI_API_KEY`.
//! - **One relaunch, not two:** `QWEN_CODE_NO_RELAUNCH=true`. Qwen Code's entry
//!   (`cli-entry.js`) always starts its CLI in a child Node.js process (with
//!   `--expose-gc`). Without the variable, that CLI loads itself whole and then starts a
//!   third process, only to raise V8's heap limit to half the machine's memory. The
//!   sandbox bounds a run's memory anyway.
//! - **MCP servers:** `mcpServers` in that settings file, as for Gemini CLI.
//! - **Hooks:** unless the test says `hooks: workspace`, a system settings file
//!   (`QWEN_CODE_SYSTEM_SETTINGS_PATH`) sets `disableAllHooks: true`, which the workspace's
//!   `.qwen/settings.json` can not undo.
//! - **Grading:** `qwen --auth-type openai [-m M] -o stream-json --approval-mode plan
//!   PROMPT` in an empty directory, every tool denied and the background memory agents off
//!   in its `settings.json` (the judge and the simulated user are tools-less); the reply
//!   is the final message.

use std::ffi::OsString;
use std::path::Path;

use super::args;
use super::{AgentCli, AgentKind, GradeTask, Invocation, InvocationError, McpServers, Task};
use crate::spec::HooksSetting;
use crate::transcript::Format;

/// How long Qwen Code waits for an MCP server over HTTP to be discovered, in ms
/// (`mcpServers.<name>.discoveryTimeoutMs`; its own default is 5,000).
const MCP_DISCOVERY_TIMEOUT_MS: u64 = 30_000;

/// Qwen Code.
#[derive(Debug, Clone, Default)]
pub struct Qwen;

/// Writes `<QWEN_HOME>/settings.json`: no retries of a failed model request (a 500
/// otherwise takes ~2 min of retries; `--retry-infra` retries visibly), no usage
/// statistics or telemetry, the turn limit, and the shell on a pseudo-terminal
/// (`tools.shell.enableInteractiveShell`).
///
/// Why the pseudo-terminal: in a one-shot prompt Qwen Code 0.24.4 defaults to its
/// child-process shell, which settles on the child's `exit` event without waiting for its
/// stdout to close (`childProcessFallback`'s `exitHandler` when output is not streamed).
/// Node can emit `exit` before the last `data` event, so a fast command's output is lost:
/// the model is told `Output: (empty)`, and an output assertion sees nothing. Its
/// node-pty shell waits for the output to drain before it settles.
///
/// `tools_less` (the grading call) denies every tool and turns the background memory
/// agents off ([`TOOLS_LESS`]).
fn write_settings(
    qwen_home: &Path,
    max_turns: Option<u32>,
    mcp_servers: &McpServers,
    tools_less: bool,
) -> Result<(), InvocationError> {
    let mut settings = serde_json::json!({
        "model": {"generationConfig": {"maxRetries": 0}},
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false},
        "tools": {"shell": {"enableInteractiveShell": true}},
    });
    if let Some(turns) = max_turns {
        settings["model"]["maxSessionTurns"] = serde_json::json!(turns);
    }
    if !mcp_servers.is_empty() {
        settings["mcpServers"] = super::gemini::mcp_servers_setting(mcp_servers);
        // Qwen Code 0.24.4 waits for each server's discovery at most 5 s over HTTP (30 s
        // over stdio), then starts without that server's tools: on a loaded CI machine the
        // handshake through aptitude's MCP front can take longer, and the model is never
        // shown the tools the test is about. HTTP servers get stdio's 30 s.
        if let Some(servers) = settings["mcpServers"].as_object_mut() {
            for server in servers.values_mut() {
                if server.get("httpUrl").is_some() {
                    server["discoveryTimeoutMs"] = serde_json::json!(MCP_DISCOVERY_TIMEOUT_MS);
                }
            }
        }
    }
    if tools_less {
        settings["permissions"] = serde_json::json!({"deny": TOOLS_LESS});
        settings["memory"] = serde_json::json!({
            "enableManagedAutoMemory": false,
            "enableManagedAutoDream": false,
            "enableAutoSkill": false,
        });
    }
    std::fs::create_dir_all(qwen_home)
        .and_then(|()| std::fs::write(qwen_home.join("settings.json"), settings.to_string()))
        .map_err(InvocationError::write(
            "settings",
            &qwen_home.join("settings.json"),
        ))
}

/// Every tool name of Qwen Code 0.24.4 (its `ToolNames`), each a whole-tool deny rule in
/// the grading call's `permissions.deny`: a denied tool is `disabled`, not registered, so
/// its schema never reaches the model. Why not `--approval-mode plan` alone: it still
/// offered `read_file`, `glob`, `grep_search`, `agent`, `skill`, `tool_search`, `tool_call`,
/// the goal tools and `list_agents`. Why not `tools.core: []`: an empty allowlist is no
/// allowlist in 0.24.4 (`coreToolsAllowList` is set only for a non-empty list), and it
/// covers only the "core" tools. A tool a later version adds is not in this list; a
/// grading call whose model calls any tool is an error, never a grade.
///
/// The memory settings stop the managed auto-memory agent Qwen Code runs after a turn
/// (`enableManagedAutoMemory`, default on): it is a second model request with its own
/// tools (`run_shell_command`, `write_file`, `edit`, …) that the deny rules do not reach.
const TOOLS_LESS: &[&str] = &[
    "exec",
    "edit",
    "write_file",
    "read_file",
    "zoom_image",
    "grep_search",
    "glob",
    "run_shell_command",
    "todo_write",
    "save_memory",
    "agent",
    "skill",
    "exit_plan_mode",
    "enter_plan_mode",
    "web_fetch",
    "web_search",
    "image_gen",
    "list_directory",
    "lsp",
    "ask_user_question",
    "cron_create",
    "cron_list",
    "cron_delete",
    "loop_wakeup",
    "create_sub_session",
    "list_agents",
    "task_stop",
    "task_create",
    "task_update",
    "task_list",
    "team_create",
    "team_delete",
    "team_plan_approval",
    "request_shutdown",
    "send_message",
    "structured_output",
    "monitor",
    "notebook_edit",
    "tool_call",
    "tool_search",
    "read_mcp_resource",
    "enter_worktree",
    "exit_worktree",
    "workflow",
    "artifact",
    "record_artifact",
    "record_source",
    "report_findings",
    "get_goal",
    "update_goal",
    "omni_downsample_image",
    "omni_downscale_video",
    "omni_downsample_audio",
    "omni_extract_keyframes",
    "omni_extract_audio",
    "omni_clip_video",
    "omni_convert_image",
    "omni_transcribe_audio",
];

/// Writes `<home>/aptitude-system-settings.json` with `disableAllHooks: true` (Qwen Code
/// 0.24's top-level setting; its system settings file, `QWEN_CODE_SYSTEM_SETTINGS_PATH`,
/// outranks the workspace's `.qwen/settings.json`), and returns its variable.
fn no_hooks(home: &Path) -> Result<(String, String), InvocationError> {
    let path = home.join("aptitude-system-settings.json");
    let settings = serde_json::json!({"disableAllHooks": true});
    std::fs::write(&path, settings.to_string())
        .map_err(InvocationError::write("system settings", &path))?;
    Ok((
        "QWEN_CODE_SYSTEM_SETTINGS_PATH".to_owned(),
        path.display().to_string(),
    ))
}

/// `qwen --auth-type openai -o stream-json --approval-mode MODE [--resume SESSION] [-m
/// MODEL] PROMPT`, with the base URL, the private `QWEN_HOME` and, hooks off, the system
/// settings file.
fn invocation(
    (mode, resume, prompt): (&str, Option<&str>, &str),
    model: Option<&str>,
    base_url: Option<&str>,
    home: &Path,
    hooks: HooksSetting,
) -> Result<Invocation, InvocationError> {
    let mut a: Vec<OsString> = args(["--auth-type", "openai", "-o", "stream-json"]);
    a.extend(["--approval-mode".into(), mode.into()]);
    if let Some(session) = resume {
        a.extend(["--resume".into(), session.into()]);
    }
    if let Some(model) = model {
        a.extend(["-m".into(), model.into()]);
    }
    a.push(prompt.into());
    let mut defaults = vec![("QWEN_CODE_NO_RELAUNCH".to_owned(), "true".to_owned())];
    defaults.extend(base_url.map(|url| ("OPENAI_BASE_URL".to_owned(), url.to_owned())));
    let mut isolation = vec![(
        "QWEN_HOME".to_owned(),
        qwen_home(home).display().to_string(),
    )];
    if hooks == HooksSetting::None {
        isolation.push(no_hooks(home)?);
    }
    Ok(Invocation {
        args: a,
        defaults,
        isolation,
    })
}

fn qwen_home(home: &Path) -> std::path::PathBuf {
    home.join(".qwen")
}

impl AgentCli for Qwen {
    fn kind(&self) -> AgentKind {
        AgentKind::Qwen
    }

    fn program(&self) -> &'static str {
        "qwen"
    }

    fn install_hint(&self) -> &'static str {
        "npm install -g @qwen-code/qwen-code@0.24.4"
    }

    fn api_key_env(&self) -> &'static str {
        "OPENAI_API_KEY"
    }

    fn own_env(&self) -> &'static [&'static str] {
        &["OPENAI_", "QWEN_"]
    }

    fn base_url_env(&self) -> Option<&'static str> {
        Some("OPENAI_BASE_URL")
    }

    /// `OPENAI_BASE_URL` (Chat Completions) with the key from `OPENAI_API_KEY`.
    fn model_route(&self) -> Option<super::ModelRoute> {
        Some(super::ModelRoute {
            base_url_env: Some("OPENAI_BASE_URL"),
            key_envs: &["OPENAI_API_KEY"],
            default_upstream: Some("https://api.openai.com/v1"),
            login_passes_through: false,
            login: None,
            protocols: {
                use crate::gateway::protocol::Protocol as P;
                &[P::Chat]
            },
        })
    }

    fn base_url_via(&self) -> &'static str {
        "`OPENAI_BASE_URL` (Chat Completions)"
    }

    fn stream_format(&self) -> Format {
        Format::QwenStreamJson
    }

    fn supports_mcp(&self) -> bool {
        true
    }

    fn task(&self, task: &Task<'_>, home: &Path) -> Result<Invocation, InvocationError> {
        write_settings(&qwen_home(home), task.max_turns, task.mcp_servers, false)?;
        invocation(
            ("yolo", None, task.prompt),
            task.model,
            task.base_url,
            home,
            task.hooks,
        )
    }

    /// `qwen … --approval-mode yolo --resume SESSION REPLY`: the reply as the next turn of
    /// the session its stream's `system` `init` event named (0.24.4 records each session
    /// under `QWEN_HOME` per project, and the follow-up runs in the same workspace copy
    /// and private home). Headless Qwen Code asks in plain text, so this is its
    /// conversation channel.
    fn follow_up(
        &self,
        task: &Task<'_>,
        session: &str,
        home: &Path,
    ) -> Option<Result<Invocation, InvocationError>> {
        Some(invocation(
            ("yolo", Some(session), task.prompt),
            task.model,
            task.base_url,
            home,
            task.hooks,
        ))
    }

    fn grade(&self, task: &GradeTask<'_>, home: &Path) -> Result<Invocation, InvocationError> {
        write_settings(&qwen_home(home), Some(1), &McpServers::new(), true)?;
        invocation(
            ("plan", None, task.prompt),
            task.model,
            task.base_url,
            home,
            HooksSetting::None,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An MCP server over HTTP gets 30 s to be discovered (Qwen Code's own 5 s run out on a
    /// loaded machine, and its tools were never shown); a stdio server keeps Qwen's own.
    #[test]
    fn an_http_mcp_server_is_given_time_to_be_discovered() {
        let home = tempfile::tempdir().unwrap();
        let servers: McpServers = [
            (
                "remote".to_owned(),
                crate::spec::McpServer::Http {
                    url: "http://127.0.0.1:9/mcp".into(),
                    headers: Default::default(),
                },
            ),
            (
                "local".to_owned(),
                crate::spec::McpServer::Stdio {
                    command: "node".into(),
                    args: Vec::new(),
                    env: Default::default(),
                },
            ),
        ]
        .into();
        write_settings(home.path(), None, &servers, false).unwrap();
        let text = std::fs::read_to_string(home.path().join("settings.json")).unwrap();
        let settings: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            settings["mcpServers"]["remote"]["discoveryTimeoutMs"],
            30_000
        );
        assert!(
            settings["mcpServers"]["local"]
                .get("discoveryTimeoutMs")
                .is_none()
        );
    }

    /// A run and a grading call both start Qwen Code without its memory relaunch; the base
    /// URL is still given.
    #[test]
    fn qwen_code_does_not_relaunch_itself() {
        let home = tempfile::tempdir().unwrap();
        let inv = invocation(
            ("yolo", None, "hi"),
            Some("m"),
            Some("http://127.0.0.1:9/v1"),
            home.path(),
            HooksSetting::None,
        )
        .unwrap();
        assert_eq!(
            inv.defaults,
            vec![
                ("QWEN_CODE_NO_RELAUNCH".to_owned(), "true".to_owned()),
                (
                    "OPENAI_BASE_URL".to_owned(),
                    "http://127.0.0.1:9/v1".to_owned()
                ),
            ]
        );
    }
}
