//! The Claude Code adapter (`@anthropic-ai/claude-code`, flags and events as observed with
//! 2.1.328; see `docs/agents.md`).
//!
//! - **Run:** `claude -p PROMPT --output-format stream-json --verbose
//!   --dangerously-skip-permissions [--model M] [--max-turns N]` in the workspace copy, with
//!   stdin closed. The events are read from stdout as they come and parsed into the
//!   transcript; no session file is ever looked up under `~/.claude` (under concurrency the
//!   newest file there belongs to another test).
//! - **Conversation:** a test with a `user:` runs `claude -p --input-format stream-json
//!   --permission-prompt-tool stdio …` with the prompt on stdin, and each `AskUserQuestion`
//!   call is answered over the control protocol ([`AskOverStdio`]; docs/conversations.md).
//! - **Isolation:** each run gets its own `CLAUDE_CONFIG_DIR` (its private home, removed after);
//!   the user's `.credentials.json`, when there is one, is copied in so that a logged-in
//!   user's subscription keeps working. `IS_SANDBOX=1` is set when running as root, where
//!   Claude Code otherwise refuses `--dangerously-skip-permissions`; auto-updates and
//!   non-essential traffic are turned off.
//! - **Permissions:** bypassed by default (the workspace is a throwaway copy); any other
//!   mode is passed as `--permission-mode MODE`.
//! - **MCP servers:** written to `<home>/aptitude-mcp.json` ([`mcp_config`]) and passed as
//!   `--mcp-config=FILE --strict-mcp-config`, so no other configuration's servers load.
//! - **Plugins:** each `plugins:` directory (a copy made beside the workspace copy) is
//!   passed as `--plugin-dir DIR`; its skills load as `<plugin>:<skill>`. The user's own
//!   plugins live under the config dir, which is the run's private home, so none load.
//! - **Hooks:** unless the test says `hooks: workspace`, `--settings
//!   '{"disableAllHooks":true}'` ([`NO_HOOKS`]): no `PreToolUse` hook can rewrite a command
//!   (`updatedInput`), no `SessionStart` hook runs, whether it comes from the workspace's
//!   `.claude/settings.json` / `settings.local.json`, a plugin, or a settings file the agent
//!   writes during the run.
//! - **Grading:** `claude -p PROMPT --output-format json --tools "" --max-turns 1
//!   --no-session-persistence [--model M]`: one request, no tools; the reply's `result`.

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use super::args;
use super::process;
use super::{
    AgentCli, AgentError, AgentKind, Finished, GradeReply, GradeTask, Invocation, InvocationError,
    McpServer, McpServers, Task,
};
use crate::spec::HooksSetting;
use crate::transcript::{Format, Outcome, Transcript, Usage};

/// How Claude Code handles permission prompts in a run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum PermissionMode {
    /// `--dangerously-skip-permissions` (the default: the workspace is a throwaway copy).
    #[default]
    Bypass,
    /// `--permission-mode MODE` (`acceptEdits`, `plan`, …), passed through as given.
    Mode(String),
}

impl PermissionMode {
    /// Parses the `--permission-mode` flag: `bypass` (or `bypassPermissions`) is the
    /// default, anything else is passed to Claude Code.
    pub fn parse(s: &str) -> Self {
        match s {
            "bypass" | "bypassPermissions" | "dangerously-skip-permissions" => {
                PermissionMode::Bypass
            }
            other => PermissionMode::Mode(other.to_owned()),
        }
    }
}

/// The login file of Claude Code's own sign-in (`claude login`).
pub const LOGIN: super::Login = super::Login {
    dir_env: "CLAUDE_CONFIG_DIR",
    home_dir: ".claude",
    file: ".credentials.json",
};

/// The `--settings` of a run whose `hooks:` is `none`: Claude Code's `disableAllHooks`
/// ("the hooks defined in settings files and by installed plugins", and `statusLine`;
/// 2.1.328's settings schema).
pub const NO_HOOKS: &str = r#"{"disableAllHooks":true}"#;

/// Claude Code.
#[derive(Debug, Clone, Default)]
pub struct Claude {
    /// How permission prompts are handled in task runs.
    pub permission_mode: PermissionMode,
}

impl Claude {
    /// The variables every Claude run gets: quiet defaults a test's `env:` may change,
    /// and the per-run config dir, which it may not.
    fn invocation(&self, args: Vec<OsString>, base_url: Option<&str>, home: &Path) -> Invocation {
        let mut defaults = vec![
            ("DISABLE_AUTOUPDATER".to_owned(), "1".to_owned()),
            (
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".to_owned(),
                "1".to_owned(),
            ),
            // One retry instead of ten with backoff: a failing model is an `error` in
            // seconds (`--retry-infra` retries visibly).
            ("CLAUDE_CODE_MAX_RETRIES".to_owned(), "1".to_owned()),
        ];
        if nix::unistd::geteuid().is_root() {
            defaults.push(("IS_SANDBOX".to_owned(), "1".to_owned()));
        }
        if let Some(url) = base_url {
            defaults.push(("ANTHROPIC_BASE_URL".to_owned(), url.to_owned()));
        }
        super::copy_login(home, &LOGIN);
        Invocation {
            args,
            defaults,
            isolation: vec![("CLAUDE_CONFIG_DIR".to_owned(), home.display().to_string())],
        }
    }
}

/// Claude Code's channel for questions (2.1.328, `--input-format stream-json
/// --permission-prompt-tool stdio`): the prompt is a `user` message on stdin; each
/// `AskUserQuestion` call arrives on stdout as
/// `{"type":"control_request","request_id":R,"request":{"subtype":"can_use_tool",
/// "tool_name":"AskUserQuestion","input":{"questions":[{"question":Q,…}]},"tool_use_id":T}}`
/// and is answered with `{"type":"control_response","response":{"subtype":"success",
/// "request_id":R,"response":{"behavior":"allow","updatedInput":{…input,"answers":{Q:A}}}}}`
/// (the CLI's `AskUserQuestionInput.answers`: question text → answer), or a `deny` with a
/// message when the user gave no answer. Stdin is closed at the `result` event, which
/// ends the session.
#[derive(Debug, Default)]
pub struct AskOverStdio {
    /// Other tools' permission requests are allowed (the run bypasses permissions, as
    /// without the channel); otherwise denied, as `-p` denies them.
    allow_others: bool,
    /// The ids of the tool calls seen so far, each with its place in order, to place each
    /// question among them (a map: a stream of many calls costs one lookup each).
    calls: std::collections::HashMap<String, usize>,
}

impl AskOverStdio {
    /// The control response to `request_id` with `response` (`behavior` and the rest).
    fn respond(request_id: &serde_json::Value, response: serde_json::Value) -> Vec<u8> {
        let message = serde_json::json!({
            "type": "control_response",
            "response": {"subtype": "success", "request_id": request_id, "response": response},
        });
        format!("{message}\n").into_bytes()
    }

    /// The reply to one `can_use_tool` request: at once for another tool; for
    /// `AskUserQuestion`, its questions to put to the user, answered when they replied.
    fn permission(
        &mut self,
        request_id: &serde_json::Value,
        request: &serde_json::Value,
    ) -> super::conversation::Feed {
        let input = request.get("input").cloned().unwrap_or_default();
        if request.get("tool_name").and_then(|n| n.as_str()) != Some("AskUserQuestion") {
            return super::conversation::Feed {
                write: Some(Self::respond(
                    request_id,
                    if self.allow_others {
                        serde_json::json!({"behavior": "allow", "updatedInput": input})
                    } else {
                        serde_json::json!({"behavior": "deny", "message": "permission denied in a headless run"})
                    },
                )),
                ..Default::default()
            };
        }
        let id = request.get("tool_use_id").and_then(|i| i.as_str());
        let calls_before = id
            .and_then(|id| self.calls.get(id).copied())
            .unwrap_or(self.calls.len());
        let questions: Vec<String> = input
            .get("questions")
            .and_then(|q| q.as_array())
            .into_iter()
            .flatten()
            .filter_map(|q| q.get("question").and_then(|t| t.as_str()))
            .map(str::to_owned)
            .collect();
        let request_id = request_id.clone();
        let asked = questions.clone();
        let respond = move |replies: &[Option<String>]| {
            let answers: serde_json::Map<String, serde_json::Value> = asked
                .into_iter()
                .zip(replies)
                .filter_map(|(q, r)| Some((q, r.clone()?.into())))
                .collect();
            if answers.is_empty() {
                return Some(Self::respond(
                    &request_id,
                    serde_json::json!({"behavior": "deny", "message": "The user did not answer. Go on with your best judgement."}),
                ));
            }
            let mut updated = input.as_object().cloned().unwrap_or_default();
            updated.insert("answers".into(), answers.into());
            Some(Self::respond(
                &request_id,
                serde_json::json!({"behavior": "allow", "updatedInput": updated}),
            ))
        };
        super::conversation::Feed {
            ask: Some(super::conversation::Ask {
                questions,
                at: super::conversation::At::call(calls_before),
                respond: Box::new(respond),
            }),
            ..Default::default()
        }
    }
}

impl super::conversation::AskChannel for AskOverStdio {
    fn opening(&mut self, prompt: &str) -> Vec<u8> {
        let message = serde_json::json!({
            "type": "user",
            "message": {"role": "user", "content": [{"type": "text", "text": prompt}]},
            "parent_tool_use_id": null,
            "session_id": "",
        });
        format!("{message}\n").into_bytes()
    }

    fn line(&mut self, line: &str) -> super::conversation::Feed {
        let mut feed = super::conversation::Feed::default();
        let Ok(event) = serde_json::from_str::<serde_json::Value>(line) else {
            return feed;
        };
        match event.get("type").and_then(|t| t.as_str()) {
            Some("assistant") => {
                let blocks = event.pointer("/message/content").and_then(|c| c.as_array());
                for block in blocks.into_iter().flatten() {
                    if block.get("type").and_then(|t| t.as_str()) == Some("tool_use")
                        && let Some(id) = block.get("id").and_then(|i| i.as_str())
                    {
                        let next = self.calls.len();
                        self.calls.entry(id.to_owned()).or_insert(next);
                    }
                }
            }
            Some("control_request") => {
                let request = event.get("request").cloned().unwrap_or_default();
                let id = event.get("request_id").cloned().unwrap_or_default();
                match request.get("subtype").and_then(|s| s.as_str()) {
                    Some("can_use_tool") => return self.permission(&id, &request),
                    // A request aptitude does not serve gets an error at once, so that
                    // the CLI never waits for an answer until the run's timeout.
                    other => {
                        let message = serde_json::json!({
                            "type": "control_response",
                            "response": {
                                "subtype": "error",
                                "request_id": id,
                                "error": format!("aptitude does not serve `{}` requests", other.unwrap_or("?")),
                            },
                        });
                        feed.write = Some(format!("{message}\n").into_bytes());
                    }
                }
            }
            Some("result") => feed.close = true,
            _ => {}
        }
        feed
    }

    fn channel(&self) -> crate::transcript::dialog::Channel {
        crate::transcript::dialog::Channel::AskTool {
            tool: "AskUserQuestion".to_owned(),
        }
    }
}

/// The test's servers that a `system/init` line lists with status `failed` or
/// `needs-auth` (`"mcp_servers": [{"name", "status"}]`, Claude Code 2.1.x), with it.
fn failed_mcp_servers(stdout: &[String], servers: &McpServers) -> Vec<(String, String)> {
    let mut failed = Vec::new();
    for line in stdout.iter().filter(|l| l.contains("\"init\"")) {
        let Ok(event) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if event["type"] != "system" || event["subtype"] != "init" {
            continue;
        }
        for server in event["mcp_servers"].as_array().into_iter().flatten() {
            let (Some(name), Some(status)) = (server["name"].as_str(), server["status"].as_str())
            else {
                continue;
            };
            if servers.contains_key(name)
                && matches!(status, "failed" | "needs-auth")
                && !failed.iter().any(|(n, _)| n == name)
            {
                failed.push((name.to_owned(), status.to_owned()));
            }
        }
    }
    failed
}

/// Claude Code's `--mcp-config` file: `{"mcpServers": {name: {"type": "stdio", command,
/// args, env} | {"type": "http", url, headers}}}` (the `.mcp.json` shape, 2.1.x).
pub fn mcp_config(servers: &McpServers) -> serde_json::Value {
    let servers = super::mcp_entries(servers, |server| match server {
        McpServer::Stdio { command, args, env } => serde_json::json!({
            "type": "stdio", "command": command, "args": args, "env": env,
        }),
        McpServer::Http { url, headers } => serde_json::json!({
            "type": "http", "url": url, "headers": headers,
        }),
    });
    serde_json::json!({ "mcpServers": servers })
}

impl AgentCli for Claude {
    fn kind(&self) -> AgentKind {
        AgentKind::Claude
    }

    fn program(&self) -> &'static str {
        "claude"
    }

    fn install_hint(&self) -> &'static str {
        "npm install -g @anthropic-ai/claude-code@2.1.328"
    }

    fn api_key_env(&self) -> &'static str {
        "ANTHROPIC_API_KEY"
    }

    fn own_env(&self) -> &'static [&'static str] {
        &[
            "ANTHROPIC_",
            "CLAUDE_CODE_",
            "DISABLE_AUTOUPDATER",
            "DISABLE_TELEMETRY",
            "DISABLE_ERROR_REPORTING",
            "API_TIMEOUT_MS",
            "MAX_THINKING_TOKENS",
            "BASH_DEFAULT_TIMEOUT_MS",
            "BASH_MAX_TIMEOUT_MS",
        ]
    }

    fn base_url_env(&self) -> Option<&'static str> {
        Some("ANTHROPIC_BASE_URL")
    }

    fn credentials(&self) -> Vec<super::Credential> {
        vec![
            super::Credential::Env("ANTHROPIC_API_KEY"),
            // `claude setup-token`'s long-lived subscription token.
            super::Credential::Env("CLAUDE_CODE_OAUTH_TOKEN"),
            // A bearer token for a gateway of the user's own.
            super::Credential::Env("ANTHROPIC_AUTH_TOKEN"),
            // Claude Code's cloud providers, which sign in with the cloud's own credentials.
            super::Credential::Env("CLAUDE_CODE_USE_BEDROCK"),
            super::Credential::Env("CLAUDE_CODE_USE_VERTEX"),
            super::Credential::Env("CLAUDE_CODE_USE_FOUNDRY"),
            super::Credential::Login(LOGIN),
        ]
    }

    fn credentials_complete(&self) -> bool {
        true
    }

    /// `ANTHROPIC_BASE_URL`; a logged-in user's OAuth token (`.credentials.json`, copied into
    /// the private home) is sent to that base URL too, so a login goes through the gateway.
    fn model_route(&self) -> Option<super::ModelRoute> {
        Some(super::ModelRoute {
            base_url_env: Some("ANTHROPIC_BASE_URL"),
            key_envs: &[
                "ANTHROPIC_API_KEY",
                "ANTHROPIC_AUTH_TOKEN",
                "CLAUDE_CODE_OAUTH_TOKEN",
            ],
            default_upstream: Some("https://api.anthropic.com"),
            login_passes_through: true,
            login: Some(super::LoginFile {
                file: ".credentials.json",
                token: "/claudeAiOauth/accessToken",
                others: &["/claudeAiOauth/refreshToken"],
                expires_ms: Some("/claudeAiOauth/expiresAt"),
            }),
            protocols: {
                use crate::gateway::protocol::Protocol as P;
                &[P::Anthropic]
            },
        })
    }

    fn base_url_via(&self) -> &'static str {
        "`ANTHROPIC_BASE_URL`"
    }

    fn stream_format(&self) -> Format {
        Format::ClaudeStreamJson
    }

    fn supports_mcp(&self) -> bool {
        true
    }

    fn supports_plugins(&self) -> bool {
        true
    }

    /// `AskUserQuestion` through the stream-json control protocol ([`AskOverStdio`]).
    fn ask_channel(&self, _task: &Task<'_>) -> Option<Box<dyn super::conversation::AskChannel>> {
        Some(Box::new(AskOverStdio {
            allow_others: self.permission_mode == PermissionMode::Bypass,
            ..AskOverStdio::default()
        }))
    }

    fn task(&self, task: &Task<'_>, home: &Path) -> Result<Invocation, InvocationError> {
        let mut a: Vec<OsString> = if task.converse {
            // The prompt comes on stdin, and every question as a `can_use_tool` request:
            // under `-p` alone `AskUserQuestion` is not offered at all.
            args([
                "-p",
                "--input-format",
                "stream-json",
                "--permission-prompt-tool",
                "stdio",
            ])
        } else {
            vec!["-p".into(), task.prompt.into()]
        };
        a.extend(args(["--output-format", "stream-json", "--verbose"]));
        match &self.permission_mode {
            PermissionMode::Bypass => a.push("--dangerously-skip-permissions".into()),
            PermissionMode::Mode(mode) => {
                a.push("--permission-mode".into());
                a.push(mode.into());
            }
        }
        if let Some(model) = task.model {
            a.extend(["--model".into(), model.into()]);
        }
        if let Some(turns) = task.max_turns {
            a.extend(["--max-turns".into(), turns.to_string().into()]);
        }
        if !task.mcp_servers.is_empty() {
            let path = home.join("aptitude-mcp.json");
            std::fs::write(&path, mcp_config(task.mcp_servers).to_string())
                .map_err(InvocationError::write("MCP config", &path))?;
            // `=`: `--mcp-config` takes several values and would swallow what follows.
            let mut flag = OsString::from("--mcp-config=");
            flag.push(&path);
            a.extend([flag, "--strict-mcp-config".into()]);
        }
        for dir in task.plugins {
            a.extend(["--plugin-dir".into(), dir.into()]);
        }
        if task.hooks == HooksSetting::None {
            // Inline, not a file: nothing in the sandbox can edit it. Flag settings rank
            // above user, project and local settings, so neither the workspace's
            // `.claude/settings*.json` nor one the agent writes during the run (Claude
            // Code reloads them) can turn hooks back on; plugins' hooks are off too.
            a.extend(["--settings".into(), NO_HOOKS.into()]);
        }
        Ok(self.invocation(a, task.base_url, home))
    }

    /// A test's MCP server that Claude Code's `system/init` event lists as `failed` (or
    /// `needs-auth`) makes a completed run an error naming the server: Claude Code goes on
    /// without it, so the test would otherwise fail for a reason it does not show.
    fn finish(&self, mut transcript: Transcript, finished: &Finished<'_>) -> Transcript {
        if finished.mcp_servers.is_empty() || !transcript.outcome.is_completed() {
            return transcript;
        }
        let failed = failed_mcp_servers(finished.stdout, finished.mcp_servers);
        if !failed.is_empty() {
            let stderr = finished.process.stderr.trim();
            transcript.outcome = Outcome::Error {
                message: format!(
                    "MCP server {} did not start (Claude Code's init event: {}){}",
                    failed
                        .iter()
                        .map(|(name, _)| format!("`{name}`"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    failed
                        .iter()
                        .map(|(name, status)| format!("{name}: {status}"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    if stderr.is_empty() {
                        String::new()
                    } else {
                        format!("; stderr: {}", crate::shared::cut::chars(stderr, 2000).kept)
                    }
                ),
            };
        }
        transcript
    }

    fn grade(&self, task: &GradeTask<'_>, home: &Path) -> Result<Invocation, InvocationError> {
        let mut a: Vec<OsString> = vec!["-p".into(), task.prompt.into()];
        a.extend(args([
            "--output-format",
            "json",
            "--tools",
            "",
            "--max-turns",
            "1",
            "--no-session-persistence",
            "--settings",
            NO_HOOKS,
        ]));
        if let Some(model) = task.model {
            a.extend(["--model".into(), model.into()]);
        }
        Ok(self.invocation(a, task.base_url, home))
    }

    /// `--output-format json` prints one object: `result` (the text), `is_error`,
    /// `usage`, `total_cost_usd`, `num_turns`, `duration_ms` (Claude Code 2.1.x).
    fn grade_reply(
        &self,
        stdout: &[String],
        out: &process::Output,
        timeout: Duration,
    ) -> Result<GradeReply, AgentError> {
        let stdout = stdout.join("\n");
        let reply: serde_json::Value = serde_json::from_str(stdout.trim()).map_err(|_| {
            AgentError::Grade(format!(
                "the grader {}; {}",
                out.describe(timeout),
                if out.stderr.trim().is_empty() {
                    "it printed no JSON".to_owned()
                } else {
                    format!("stderr: {}", out.stderr.trim())
                }
            ))
        })?;
        let text = reply
            .get("result")
            .and_then(|r| r.as_str())
            .unwrap_or_default()
            .to_owned();
        if reply.get("is_error").and_then(serde_json::Value::as_bool) == Some(true)
            || !out.success()
        {
            return Err(AgentError::Grade(format!(
                "the grader {}: {}",
                out.describe(timeout),
                if text.is_empty() {
                    out.stderr.trim().to_owned()
                } else {
                    text
                }
            )));
        }
        let u = reply.get("usage");
        let n = |k: &str| {
            u.and_then(|u| u.get(k))
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(0)
        };
        Ok(GradeReply {
            text,
            usage: Usage {
                input_tokens: n("input_tokens"),
                output_tokens: n("output_tokens"),
                cache_creation_input_tokens: n("cache_creation_input_tokens"),
                cache_read_input_tokens: n("cache_read_input_tokens"),
                cost_usd: reply
                    .get("total_cost_usd")
                    .and_then(serde_json::Value::as_f64),
                turns: reply
                    .get("num_turns")
                    .and_then(serde_json::Value::as_u64)
                    .map(|t| t as u32),
                duration_ms: reply.get("duration_ms").and_then(serde_json::Value::as_u64),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::conversation::{AskChannel, Conversation};
    use crate::agent::{Agent, AgentSettings, CliAgent};
    use std::sync::Arc;

    fn dice_user() -> Arc<crate::spec::user::User> {
        Arc::new(crate::spec::user::User {
            persona: None,
            goal: None,
            knows: Default::default(),
            script: vec![crate::spec::user::ScriptLine {
                when: regex::Regex::new("(?i)sides").unwrap(),
                say: "Six.".into(),
                line: 4,
            }],
            max_turns: 4,
        })
    }

    /// The message written back for `feed`: at once, or, for questions, once `talk`'s
    /// script replied to each (as the executor does, without a model).
    fn reply(feed: crate::agent::conversation::Feed, talk: &mut Conversation) -> serde_json::Value {
        let bytes = match feed.ask {
            Some(ask) => {
                let replies: Vec<Option<String>> = ask
                    .questions
                    .iter()
                    .map(|q| match talk.next(q) {
                        crate::agent::conversation::Next::Scripted(r) => {
                            talk.record(q, ask.at, Some(r))
                        }
                        _ => talk.record(q, ask.at, None),
                    })
                    .collect();
                (ask.respond)(&replies).expect("a reply")
            }
            None => feed.write.expect("a reply"),
        };
        assert!(bytes.ends_with(b"\n"), "one message per line");
        serde_json::from_slice(&bytes).unwrap()
    }

    /// The control protocol of 2.1.328: the prompt as a `user` message, an
    /// `AskUserQuestion` permission request answered `allow` with `updatedInput.answers`
    /// (question → reply) placed after the calls before it, other tools allowed as the
    /// bypassed run would, and stdin closed at `result`.
    #[test]
    fn ask_user_question_is_answered_over_the_control_protocol() {
        let mut channel = AskOverStdio {
            allow_others: true,
            ..AskOverStdio::default()
        };
        let mut talk = Conversation::new(dice_user(), channel.channel());
        let opening: serde_json::Value =
            serde_json::from_slice(&channel.opening("roll a die")).unwrap();
        assert_eq!(opening["type"], "user");
        assert_eq!(opening["message"]["content"][0]["text"], "roll a die");
        let assistant = r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"toolu_1","name":"Read","input":{}},{"type":"tool_use","id":"toolu_2","name":"AskUserQuestion","input":{}}]}}"#;
        let feed = channel.line(assistant);
        assert!(feed.write.is_none() && feed.ask.is_none());
        let ask = r#"{"type":"control_request","request_id":"r1","request":{"subtype":"can_use_tool","tool_name":"AskUserQuestion","input":{"questions":[{"question":"How many sides?","header":"Sides","options":[],"multiSelect":false}]},"tool_use_id":"toolu_2"}}"#;
        let r = reply(channel.line(ask), &mut talk);
        assert_eq!(r["type"], "control_response");
        assert_eq!(r["response"]["request_id"], "r1");
        assert_eq!(r["response"]["response"]["behavior"], "allow");
        let updated = &r["response"]["response"]["updatedInput"];
        assert_eq!(updated["answers"]["How many sides?"], "Six.");
        assert_eq!(
            updated["questions"][0]["header"], "Sides",
            "the input is kept"
        );
        let bash = r#"{"type":"control_request","request_id":"r2","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"ls"}}}"#;
        let r = reply(channel.line(bash), &mut talk);
        assert_eq!(r["response"]["response"]["behavior"], "allow");
        assert_eq!(r["response"]["response"]["updatedInput"]["command"], "ls");
        let hook =
            r#"{"type":"control_request","request_id":"r3","request":{"subtype":"hook_callback"}}"#;
        let r = reply(channel.line(hook), &mut talk);
        assert_eq!(
            r["response"]["subtype"], "error",
            "answered at once, never left waiting"
        );
        assert_eq!(r["response"]["request_id"], "r3");
        assert!(channel.line(r#"{"type":"result"}"#).close);
        let dialog = talk.finish();
        assert_eq!(dialog.exchanges.len(), 1);
        assert_eq!(dialog.exchanges[0].calls_before, 1, "after Read");
    }

    /// A question no script line answers is denied with a message the model reads, and a
    /// run that does not bypass permissions denies other tools, as `-p` does.
    #[test]
    fn unanswered_questions_and_other_tools_without_bypass_are_denied() {
        let mut channel = AskOverStdio::default();
        let mut talk = Conversation::new(dice_user(), channel.channel());
        let ask = r#"{"type":"control_request","request_id":"r1","request":{"subtype":"can_use_tool","tool_name":"AskUserQuestion","input":{"questions":[{"question":"Which name?"}]}}}"#;
        let r = reply(channel.line(ask), &mut talk);
        assert_eq!(r["response"]["response"]["behavior"], "deny");
        assert!(
            r["response"]["response"]["message"]
                .as_str()
                .unwrap()
                .contains("did not answer")
        );
        let bash = r#"{"type":"control_request","request_id":"r2","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{}}}"#;
        let r = reply(channel.line(bash), &mut talk);
        assert_eq!(r["response"]["response"]["behavior"], "deny");
    }

    #[test]
    fn missing_binary_has_an_install_hint() {
        let agent = CliAgent::new(
            Arc::new(Claude::default()),
            AgentSettings {
                binary: Some("/nonexistent/claude".into()),
                binary_source: Some("--agent-bin claude=/nonexistent/claude".into()),
                ..AgentSettings::default()
            },
        );
        let err = agent.binary().unwrap_err().to_string();
        assert!(
            err.contains("--agent-bin claude=/nonexistent/claude"),
            "{err}"
        );
        assert!(
            err.contains("npm install -g @anthropic-ai/claude-code@2.1.328"),
            "{err}"
        );
        assert!(err.contains("APTITUDE_CLAUDE_BIN"), "{err}");
        assert_eq!(agent.name(), "claude");
    }

    #[test]
    fn the_config_dir_is_isolation_and_quiet_defaults_are_defaults() {
        let home = tempfile::tempdir().unwrap();
        let task = Task {
            prompt: "p",
            workspace: home.path(),
            model: Some("m"),
            max_turns: Some(3),
            base_url: Some("http://127.0.0.1:9"),
            mcp_servers: &Default::default(),
            plugins: &[],
            hooks: Default::default(),
            converse: false,
        };
        let inv = Claude::default().task(&task, home.path()).unwrap();
        assert_eq!(
            inv.isolation,
            vec![(
                "CLAUDE_CONFIG_DIR".to_owned(),
                home.path().display().to_string()
            )]
        );
        assert!(
            inv.defaults
                .contains(&("DISABLE_AUTOUPDATER".into(), "1".into()))
        );
        assert!(
            inv.defaults
                .contains(&("ANTHROPIC_BASE_URL".into(), "http://127.0.0.1:9".into()))
        );
        let args = inv.arg_strings();
        assert!(
            args.windows(2).any(|w| w == ["--max-turns", "3"]),
            "{args:?}"
        );
        assert!(args.contains(&"--dangerously-skip-permissions".to_owned()));
    }

    #[test]
    fn permission_modes() {
        assert_eq!(PermissionMode::parse("bypass"), PermissionMode::Bypass);
        assert_eq!(
            PermissionMode::parse("acceptEdits"),
            PermissionMode::Mode("acceptEdits".into())
        );
        let home = tempfile::tempdir().unwrap();
        let claude = Claude {
            permission_mode: PermissionMode::parse("plan"),
        };
        let task = Task {
            prompt: "p",
            workspace: home.path(),
            model: None,
            max_turns: None,
            base_url: None,
            mcp_servers: &Default::default(),
            plugins: &[],
            hooks: Default::default(),
            converse: false,
        };
        let args = claude.task(&task, home.path()).unwrap().arg_strings();
        assert!(args.windows(2).any(|w| w == ["--permission-mode", "plan"]));
    }
}
