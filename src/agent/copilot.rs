//! The GitHub Copilot CLI adapter (`@github/copilot`, flags and events as observed with
//! 1.0.102; see `docs/agents.md` and `tests/data/corpus/live/copilot-1.0.102/`).
//!
//! - **Run:** `copilot -p PROMPT --allow-all --output-format json --no-auto-update
//!   --usage-output-file <home>/usage.json [--model M]` in the workspace copy
//!   ([`Format::CopilotJson`]).
//! - **Isolation:** `COPILOT_HOME` is the run's private home. Copilot unpacks ~235 MB into
//!   `$XDG_CACHE_HOME/copilot/pkg` on first run: aptitude fills that cache once per
//!   installed binary (`copilot --version`, in its own cache directory) and each run reads
//!   it, read-only in the sandbox ([`super::cache`]).
//! - **Base URL:** `COPILOT_PROVIDER_BASE_URL` (Chat Completions), with the key from
//!   `COPILOT_PROVIDER_API_KEY`, the model in `COPILOT_MODEL` and `COPILOT_OFFLINE=true`
//!   (no GitHub login needed). Without one, Copilot signs in with `COPILOT_GITHUB_TOKEN`
//!   (or `GH_TOKEN`).
//! - **MCP servers:** `--additional-mcp-config @<home>/aptitude-mcp.json` ([`mcp_config`])
//!   with `--disable-builtin-mcps` (no GitHub MCP server); `$COPILOT_HOME/mcp-config.json`
//!   is the private home's, so the user's servers are not loaded.
//! - **Plugins:** `--plugin-dir DIR` per `plugins:` directory (a copy): Copilot CLI loads
//!   the Claude Code plugin layout (`.claude-plugin/plugin.json`, `skills/<name>/SKILL.md`),
//!   and the workspace's `.claude/skills` too; the model calls `skill {skill}`.
//! - **Hooks** (`.github/hooks/*.json`, `hooks` in a settings file, plugins' hooks;
//!   1.0.102) load only from a trusted folder. Unless the test says `hooks: workspace`,
//!   the workspace stays untrusted: `COPILOT_ALLOW_ALL` is fixed (an isolation variable, so
//!   a test's `env:` can not set it) to `yes` — tools approved, as `--allow-all` does, but
//!   only the exact value `true` "trusts the working directory …, which loads that
//!   directory's skills, plugins, MCP servers, and hooks" (`copilot help environment`) —
//!   or, for grading calls, to `false`; the private home holds no `trustedFolders`. Its
//!   user settings also say `disableAllHooks: true`, but that alone does not hold: in a
//!   trusted folder the repository's hooks ran in spite of it (`tests/it/hooks.rs`). With
//!   `hooks: workspace`, `COPILOT_ALLOW_ALL=true`.
//! - **Exit codes:** a command that exited 3 is still `success: true`; the transcript takes
//!   the exit code from `shellExecution.exitCode`.
//! - **Tokens:** not on stdout; read after the run from the `--usage-output-file` JSON
//!   (`modelMetrics.<model>.usage.{inputTokens, outputTokens, cacheReadTokens,
//!   cacheWriteTokens}`).
//! - **Retries:** a model 500 is retried 6 times over ~15–25 s; no setting found shortens
//!   it.
//! - **Grading:** `copilot -p PROMPT --output-format json --no-auto-update [--model M]`
//!   without `--allow-all`, so no tool runs; the reply is the last assistant message.

use std::ffi::OsString;
use std::path::Path;

use super::args;
use super::{
    AgentCli, AgentKind, Finished, GradeTask, Invocation, InvocationError, McpServer, McpServers,
    Task,
};
use crate::spec::HooksSetting;
use crate::transcript::{Format, Transcript};

/// GitHub Copilot CLI.
#[derive(Debug, Clone, Default)]
pub struct Copilot;

fn invocation(
    mut a: Vec<OsString>,
    prompt: &str,
    model: Option<&str>,
    base_url: Option<&str>,
    home: &Path,
    hooks: HooksSetting,
) -> Result<Invocation, InvocationError> {
    let mut defaults = Vec::new();
    let mut isolation = vec![("COPILOT_HOME".to_owned(), home.display().to_string())];
    match hooks {
        HooksSetting::None => {
            let path = home.join("settings.json");
            let settings = serde_json::json!({"disableAllHooks": true});
            std::fs::write(&path, settings.to_string())
                .map_err(InvocationError::write("settings", &path))?;
            // Any value but `true` leaves the folder untrusted; `yes` approves tools as
            // `--allow-all` does, `false` keeps a grading call's tools off.
            let allow = if a.iter().any(|x| x == "--allow-all") {
                "yes"
            } else {
                "false"
            };
            isolation.push(("COPILOT_ALLOW_ALL".to_owned(), allow.to_owned()));
        }
        HooksSetting::Workspace => {
            defaults.push(("COPILOT_ALLOW_ALL".to_owned(), "true".to_owned()));
        }
    }
    match (base_url, model) {
        (Some(url), model) => {
            defaults.push(("COPILOT_PROVIDER_BASE_URL".to_owned(), url.to_owned()));
            defaults.push(("COPILOT_OFFLINE".to_owned(), "true".to_owned()));
            if let Some(model) = model {
                defaults.push(("COPILOT_MODEL".to_owned(), model.to_owned()));
            }
        }
        (None, Some(model)) => a.extend(["--model".into(), model.into()]),
        (None, None) => {}
    }
    let mut args: Vec<OsString> = vec!["-p".into(), prompt.into()];
    args.extend(a);
    Ok(Invocation {
        args,
        defaults,
        isolation,
    })
}

/// Copilot's `--additional-mcp-config` JSON: `{"mcpServers": {name: {"type": "local",
/// command, args, env, tools: ["*"]} | {"type": "http", url, headers, tools: ["*"]}}}`
/// (1.0.x; `tools` lists the tools the agent may use).
pub fn mcp_config(servers: &McpServers) -> serde_json::Value {
    let servers = super::mcp_entries(servers, |server| match server {
        McpServer::Stdio { command, args, env } => serde_json::json!({
            "type": "local", "command": command, "args": args, "env": env, "tools": ["*"],
        }),
        McpServer::Http { url, headers } => serde_json::json!({
            "type": "http", "url": url, "headers": headers, "tools": ["*"],
        }),
    });
    serde_json::json!({ "mcpServers": servers })
}

/// Token counts from Copilot's `--usage-output-file` JSON, summed over its models.
fn read_usage(path: &Path, transcript: &mut Transcript) {
    let Ok(text) = crate::shared::files::read_capped(path, 1 << 20) else {
        return;
    };
    let Ok(usage) = serde_json::from_slice::<serde_json::Value>(&text) else {
        return;
    };
    let Some(models) = usage.get("modelMetrics").and_then(|m| m.as_object()) else {
        return;
    };
    let n = |v: &serde_json::Value, k: &str| v.get(k).and_then(serde_json::Value::as_u64);
    let u = &mut transcript.usage;
    for metrics in models.values() {
        let Some(m) = metrics.get("usage") else {
            continue;
        };
        u.input_tokens += n(m, "inputTokens").unwrap_or(0);
        u.output_tokens += n(m, "outputTokens").unwrap_or(0);
        u.cache_read_input_tokens += n(m, "cacheReadTokens").unwrap_or(0);
        u.cache_creation_input_tokens += n(m, "cacheWriteTokens").unwrap_or(0);
    }
}

impl AgentCli for Copilot {
    fn kind(&self) -> AgentKind {
        AgentKind::Copilot
    }

    fn program(&self) -> &'static str {
        "copilot"
    }

    fn install_hint(&self) -> &'static str {
        "npm install -g @github/copilot@1.0.102"
    }

    fn api_key_env(&self) -> &'static str {
        "COPILOT_PROVIDER_API_KEY"
    }

    fn own_env(&self) -> &'static [&'static str] {
        &["COPILOT_"]
    }

    fn base_url_env(&self) -> Option<&'static str> {
        Some("COPILOT_PROVIDER_BASE_URL")
    }

    fn credentials(&self) -> Vec<super::Credential> {
        vec![
            super::Credential::Env("COPILOT_PROVIDER_API_KEY"),
            super::Credential::Env("COPILOT_GITHUB_TOKEN"),
            super::Credential::Env("GH_TOKEN"),
        ]
    }

    /// Only with a provider base URL: Copilot's own backend (a GitHub login) is not
    /// spoken by the gateway, so a run without a base URL goes direct.
    fn model_route(&self) -> Option<super::ModelRoute> {
        Some(super::ModelRoute {
            base_url_env: Some("COPILOT_PROVIDER_BASE_URL"),
            key_envs: &["COPILOT_PROVIDER_API_KEY"],
            default_upstream: None,
            login_passes_through: false,
            login: None,
            // Chat Completions by default; `COPILOT_PROVIDER_WIRE_API=responses` and
            // `COPILOT_PROVIDER_TYPE=anthropic` (a test's `env:`) switch it.
            protocols: {
                use crate::gateway::protocol::Protocol as P;
                &[P::Chat, P::Responses, P::Anthropic]
            },
        })
    }

    fn base_url_via(&self) -> &'static str {
        "`COPILOT_PROVIDER_BASE_URL` (+ `COPILOT_MODEL`, `COPILOT_OFFLINE=true`)"
    }

    fn stream_format(&self) -> Format {
        Format::CopilotJson
    }

    fn supports_mcp(&self) -> bool {
        true
    }

    fn shared_cache(&self) -> Option<super::cache::SharedCache> {
        Some(super::cache::SharedCache {
            var: "XDG_CACHE_HOME",
            subdir: "copilot",
            fill_args: &["--version"],
        })
    }

    fn task(&self, task: &Task<'_>, home: &Path) -> Result<Invocation, InvocationError> {
        run_invocation(task, None, home)
    }

    /// `copilot --resume=SESSION -p REPLY …` with the run's own flags: the reply as the
    /// next turn of the session its stream's `result` line named (1.0.102 keeps each
    /// session under `$COPILOT_HOME/session-state/<id>/`, in the run's private home).
    /// Headless Copilot CLI does not put an `ask_user` question to anyone under `-p`, and
    /// asks in plain text, so this is its conversation channel.
    fn follow_up(
        &self,
        task: &Task<'_>,
        session: &str,
        home: &Path,
    ) -> Option<Result<Invocation, InvocationError>> {
        Some(run_invocation(task, Some(session), home))
    }

    fn supports_plugins(&self) -> bool {
        true
    }

    /// `copilot -p PROMPT --output-format json --available-tools=aptitude-no-tool`: the
    /// judge and the simulated user are offered no tool (1.0.102 makes only the listed
    /// tools available to the model, and no tool has that name; without it the request
    /// offered 17, `bash`, `edit`, `task`, …), and run without `--allow-all`.
    fn grade(&self, task: &GradeTask<'_>, home: &Path) -> Result<Invocation, InvocationError> {
        let a = args([
            "--output-format",
            "json",
            "--no-auto-update",
            "--available-tools=aptitude-no-tool",
        ]);
        invocation(
            a,
            task.prompt,
            task.model,
            task.base_url,
            home,
            HooksSetting::None,
        )
    }

    fn finish(&self, mut transcript: Transcript, finished: &Finished<'_>) -> Transcript {
        if transcript.usage.input_tokens == 0 && transcript.usage.output_tokens == 0 {
            read_usage(&finished.home.join("usage.json"), &mut transcript);
        }
        transcript
    }
}

/// The command of a run's turn: the first (`resume` `None`) or a follow-up in the session
/// `resume` names. Writes the MCP config into `home` when the test has MCP servers.
fn run_invocation(
    task: &Task<'_>,
    resume: Option<&str>,
    home: &Path,
) -> Result<Invocation, InvocationError> {
    let mut a = args(["--allow-all", "--output-format", "json", "--no-auto-update"]);
    if let Some(session) = resume {
        a.push(format!("--resume={session}").into());
    }
    if !task.mcp_servers.is_empty() {
        let path = home.join("aptitude-mcp.json");
        std::fs::write(&path, mcp_config(task.mcp_servers).to_string())
            .map_err(InvocationError::write("MCP config", &path))?;
        let mut file = std::ffi::OsString::from("@");
        file.push(&path);
        a.extend(["--additional-mcp-config".into(), file]);
        a.push("--disable-builtin-mcps".into());
    }
    for dir in task.plugins {
        a.extend(["--plugin-dir".into(), dir.into()]);
    }
    a.push("--usage-output-file".into());
    a.push(home.join("usage.json").into());
    invocation(a, task.prompt, task.model, task.base_url, home, task.hooks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_comes_from_the_usage_file() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/corpus/live/copilot-1.0.102/usage_output_file_example.json");
        let mut parser = crate::transcript::StreamParser::new(Format::CopilotJson);
        parser.push_line("");
        let mut t = parser.finish();
        read_usage(&path, &mut t);
        assert_eq!((t.usage.input_tokens, t.usage.output_tokens), (200, 20));
    }

    /// `hooks: none` keeps the workspace untrusted whatever the test's `env:` says (and
    /// writes `disableAllHooks`); `hooks: workspace` trusts it (`COPILOT_ALLOW_ALL=true`).
    #[test]
    fn hooks_are_off_unless_the_test_opts_in() {
        let home = tempfile::tempdir().unwrap();
        let off = invocation(
            args(["--allow-all"]),
            "p",
            None,
            None,
            home.path(),
            HooksSetting::None,
        )
        .unwrap();
        let settings = std::fs::read_to_string(home.path().join("settings.json")).unwrap();
        assert_eq!(settings, r#"{"disableAllHooks":true}"#);
        let allow = ("COPILOT_ALLOW_ALL".to_owned(), "yes".to_owned());
        assert!(off.isolation.contains(&allow), "{:?}", off.isolation);
        let grade = invocation(Vec::new(), "p", None, None, home.path(), HooksSetting::None);
        let allow = ("COPILOT_ALLOW_ALL".to_owned(), "false".to_owned());
        assert!(grade.unwrap().isolation.contains(&allow));
        let other = tempfile::tempdir().unwrap();
        let on = invocation(
            Vec::new(),
            "p",
            None,
            None,
            other.path(),
            HooksSetting::Workspace,
        );
        assert!(!other.path().join("settings.json").exists());
        assert!(
            on.unwrap()
                .defaults
                .contains(&("COPILOT_ALLOW_ALL".to_owned(), "true".to_owned()))
        );
    }
}
