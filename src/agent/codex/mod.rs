//! The Codex CLI adapter (`@openai/codex`, flags and events as observed with 0.169.0; see
//! `docs/agents.md` and the captures in `tests/data/corpus/live/codex-0.169.0/`).
//!
//! - **Run:** `codex exec --json --skip-git-repo-check
//!   --dangerously-bypass-approvals-and-sandbox [-m M] PROMPT` in the workspace copy (a
//!   throwaway copy: Codex's own sandbox is not needed, and needs kernel features CI
//!   containers lack). Events: `codex exec --json` ([`Format::CodexExecJson`]).
//! - **Isolation:** `CODEX_HOME` is the run's private home; the user's `auth.json` (a
//!   ChatGPT login), when there is one, is copied in.
//! - **Base URL:** a provider `aptitude` defined with `-c model_providers.aptitude={…}`
//!   (Responses API, key from `OPENAI_API_KEY`), with no request or stream retries, so
//!   that a failing model is an error in seconds (`--retry-infra` retries visibly).
//! - **MCP servers:** `[mcp_servers.<name>]` tables in `$CODEX_HOME/config.toml`
//!   ([`mcp_config_toml`]); the user's own config is not read.
//! - **Hooks:** unless the test says `hooks: workspace`, `--disable hooks` (the `hooks`
//!   feature, stable and on by default in 0.169.0: `codex features list`) and `-c notify=[]`
//!   (the legacy after-turn command). Flags are the session-flags layer, which outranks the
//!   user (`$CODEX_HOME`) and project (`.codex/`) config layers, so neither a workspace's
//!   `.codex/hooks.json` / `config.toml` nor a file the agent writes during the run turns
//!   them back on. With `hooks: workspace`, `--trust --dangerously-bypass-hook-trust`: the
//!   workspace is a trusted project (else its `.codex/` layer is loaded disabled) and its
//!   hooks run without a persisted per-hook trust hash, as for a user who trusted both.
//! - **Turns:** Codex has no turn limit; `max_turns` is not passed.
//! - **Conversation:** a run with a `user:` is driven through `codex app-server`
//!   ([`app_server`]): the model's `request_user_input` questions are answered through its
//!   JSON-RPC, and a turn that ends in a plain-text question gets the reply as the next turn
//!   of the same thread. With `hooks: workspace` (the app server has no `--trust`), it runs
//!   as `codex exec`, and a plain-text question is answered with `codex exec resume --json
//!   … SESSION REPLY` (docs/conversations.md).
//! - **Grading:** `codex exec --json --skip-git-repo-check --sandbox read-only -c … [-m M]
//!   PROMPT` in an empty directory, its tools turned off ([`GRADE_WITHOUT_TOOLS`]); the
//!   reply is the last agent message.

pub mod app_server;

use std::ffi::OsString;
use std::path::Path;

use super::args;
use super::{
    AgentCli, AgentKind, GradeTask, Invocation, InvocationError, McpServer, McpServers, Task,
};
use crate::spec::HooksSetting;
use crate::transcript::Format;

/// The login file of Codex's own sign-in (`codex login`, a ChatGPT account).
pub const LOGIN: super::Login = super::Login {
    dir_env: "CODEX_HOME",
    home_dir: ".codex",
    file: "auth.json",
};

/// Codex CLI.
#[derive(Debug, Clone, Default)]
pub struct Codex;

impl Codex {
    /// `a` with the flags every Codex command shares, and `prompt` last when it goes on
    /// the command line (`None`: it goes through the app server's channel).
    fn invocation(
        &self,
        mut a: Vec<OsString>,
        prompt: Option<&str>,
        model: Option<&str>,
        base_url: Option<&str>,
        home: &Path,
        hooks: HooksSetting,
    ) -> Invocation {
        a.extend(hook_args(hooks).iter().map(OsString::from));
        if let Some(model) = model {
            if prompt.is_some() {
                a.extend(["-m".into(), model.into()]);
            } else {
                // `codex app-server` has no `-m`; the setting is the same.
                a.extend(["-c".into(), format!("model={}", toml_string(model)).into()]);
            }
        }
        if let Some(url) = base_url {
            a.extend(["-c".into(), "model_provider=aptitude".into(), "-c".into()]);
            a.push(
                format!(
                    "model_providers.aptitude={{name=\"aptitude\",base_url={},wire_api=\"responses\",env_key=\"OPENAI_API_KEY\",request_max_retries=0,stream_max_retries=0}}",
                    toml_string(url)
                )
                .into(),
            );
        }
        a.extend(prompt.map(OsString::from));
        super::copy_login(home, &LOGIN);
        Invocation {
            args: a,
            defaults: Vec::new(),
            isolation: vec![("CODEX_HOME".to_owned(), home.display().to_string())],
        }
    }
}

/// The flags of `hooks:` (Codex 0.169.0). `none`: `--disable hooks` turns the hooks
/// engine off (every `hooks.json` and `[hooks]` table, of every layer and plugin), and
/// `notify=[]` empties the legacy command run after each turn; both are session flags,
/// which outrank the files of the user's and the project's layers. `workspace`: the
/// workspace is a trusted project and its hooks run without per-hook trust.
fn hook_args(hooks: HooksSetting) -> &'static [&'static str] {
    match hooks {
        HooksSetting::None => &["--disable", "hooks", "-c", "notify=[]"],
        HooksSetting::Workspace => &["--trust", "--dangerously-bypass-hook-trust"],
    }
}

/// The `-c` settings that take Codex's tools away from a grading call (the judge, the
/// simulated user), as Codex 0.169.0 reads them (`codex features list`; the tools were
/// read off the wire, `tests/it/conversation.rs`): the shell (`exec_command`,
/// `write_stdin`), `request_user_input`, `view_image`, sub-agents, goals, web search, tool
/// search, the plan tool, apps, plugins, image generation, browser and computer use,
/// `sleep`, tool suggestions, skill search and memories. What a model's catalog entry
/// adds stays offered whatever the settings (`apply_patch` of `gpt-5.5`; the code-mode
/// `exec` and collaboration tools of the default `gpt-6.1-sol`): a grading call whose
/// model calls a tool is an error ([`crate::agent::Agent::grade`]), never a grade.
pub const GRADE_WITHOUT_TOOLS: &[&str] = &[
    "features.shell_tool=false",
    "features.unified_exec=false",
    "tools.experimental_request_user_input.enabled=false",
    "features.view_image=false",
    "features.multi_agent=false",
    "features.multi_agent_v2=false",
    "features.goals=false",
    "web_search=\"disabled\"",
    "features.tool_search=false",
    "tools.update_plan.enabled=false",
    "features.apps=false",
    "features.plugins=false",
    "features.image_generation=false",
    "features.browser_use=false",
    "features.computer_use=false",
    "features.sleep_tool=false",
    "features.tool_suggest=false",
    "features.skill_search=false",
    "features.memories=false",
];

/// How long Codex waits for an MCP server to start, in seconds. Codex's own default, 10 s,
/// is shorter than an `npx` server's first start on a busy 2-core CI runner; a server that
/// missed it was dropped silently and its tools were never offered. The test's own timeout
/// still bounds the run.
pub const MCP_STARTUP_TIMEOUT_SECS: u32 = 60;

/// `$CODEX_HOME/config.toml` with one `[mcp_servers.<name>]` table per server: `command`,
/// `args`, `env` for stdio; `url`, `http_headers` for streamable HTTP (Codex 0.169); and
/// `required = true` with `startup_timeout_sec` [`MCP_STARTUP_TIMEOUT_SECS`]: a server that
/// does not start fails Codex's session ("required MCP servers failed to initialize").
pub fn mcp_config_toml(servers: &McpServers) -> String {
    let table = |map: &std::collections::BTreeMap<String, String>| {
        let items: Vec<String> = map
            .iter()
            .map(|(k, v)| format!("{} = {}", toml_string(k), toml_string(v)))
            .collect();
        format!("{{ {} }}", items.join(", "))
    };
    let mut out = String::new();
    for (name, server) in servers {
        out.push_str(&format!("[mcp_servers.{}]\n", toml_string(name)));
        // `required`: Codex waits for the server before the first turn and fails the
        // session when it does not start, instead of leaving its tools out of some runs.
        out.push_str(&format!(
            "required = true\nstartup_timeout_sec = {MCP_STARTUP_TIMEOUT_SECS}\n"
        ));
        match server {
            McpServer::Stdio { command, args, env } => {
                out.push_str(&format!("command = {}\n", toml_string(command)));
                let args: Vec<String> = args.iter().map(|a| toml_string(a)).collect();
                out.push_str(&format!("args = [{}]\n", args.join(", ")));
                out.push_str(&format!("env = {}\n", table(env)));
            }
            McpServer::Http { url, headers } => {
                out.push_str(&format!("url = {}\n", toml_string(url)));
                out.push_str(&format!("http_headers = {}\n", table(headers)));
            }
        }
        out.push('\n');
    }
    out
}

/// A TOML basic string.
fn toml_string(s: &str) -> String {
    let mut out = String::from('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

impl AgentCli for Codex {
    fn kind(&self) -> AgentKind {
        AgentKind::Codex
    }

    fn program(&self) -> &'static str {
        "codex"
    }

    fn install_hint(&self) -> &'static str {
        "npm install -g @openai/codex@0.169.0"
    }

    fn api_key_env(&self) -> &'static str {
        "OPENAI_API_KEY"
    }

    fn own_env(&self) -> &'static [&'static str] {
        &["OPENAI_", "CODEX_"]
    }

    fn credentials(&self) -> Vec<super::Credential> {
        vec![
            super::Credential::Env("OPENAI_API_KEY"),
            super::Credential::Login(LOGIN),
        ]
    }

    fn credentials_complete(&self) -> bool {
        true
    }

    /// The provider `aptitude` (`-c model_providers.aptitude`) with the key from
    /// `OPENAI_API_KEY`. A ChatGPT login (`auth.json`) is used only by Codex's own
    /// provider, whose backend the gateway does not speak: such a run goes direct.
    fn model_route(&self) -> Option<super::ModelRoute> {
        Some(super::ModelRoute {
            base_url_env: None,
            key_envs: &["OPENAI_API_KEY"],
            default_upstream: Some("https://api.openai.com/v1"),
            login_passes_through: false,
            login: None,
            protocols: {
                use crate::gateway::protocol::Protocol as P;
                &[P::Responses]
            },
        })
    }

    fn base_url_via(&self) -> &'static str {
        "a provider `-c model_providers.aptitude={base_url, wire_api=\"responses\"}`"
    }

    fn stream_format(&self) -> Format {
        Format::CodexExecJson
    }

    fn supports_mcp(&self) -> bool {
        true
    }

    fn task(&self, task: &Task<'_>, home: &Path) -> Result<Invocation, InvocationError> {
        if !task.mcp_servers.is_empty() {
            let path = home.join("config.toml");
            std::fs::write(&path, mcp_config_toml(task.mcp_servers))
                .map_err(InvocationError::write("config", &path))?;
        }
        if task.converse {
            // The app server: the prompt, approvals and sandbox go through its channel
            // ([`app_server`]); `request_user_input` is offered in its default mode.
            return Ok(self.invocation(
                args(["app-server", "--enable", "default_mode_request_user_input"]),
                None,
                task.model,
                task.base_url,
                home,
                task.hooks,
            ));
        }
        Ok(self.invocation(
            args([
                "exec",
                "--json",
                "--skip-git-repo-check",
                "--dangerously-bypass-approvals-and-sandbox",
            ]),
            Some(task.prompt),
            task.model,
            task.base_url,
            home,
            task.hooks,
        ))
    }

    /// `codex app-server`, whose channel answers `request_user_input` and plain-text
    /// questions alike ([`app_server`]); none with `hooks: workspace`, which the app server
    /// can not trust (its run is `codex exec`, answered by [`AgentCli::follow_up`]).
    fn ask_channel(&self, task: &Task<'_>) -> Option<Box<dyn super::conversation::AskChannel>> {
        (task.hooks == HooksSetting::None)
            .then(|| Box::new(app_server::AppServerChannel::new()) as Box<_>)
    }

    /// `codex exec resume --json … SESSION REPLY`: the reply as the next turn of the
    /// session (0.169.0), which its `thread.started` event named.
    fn follow_up(
        &self,
        task: &Task<'_>,
        session: &str,
        home: &Path,
    ) -> Option<Result<Invocation, InvocationError>> {
        let mut a = args([
            "exec",
            "resume",
            "--json",
            "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox",
        ]);
        a.push(session.into());
        Some(Ok(self.invocation(
            a,
            Some(task.prompt),
            task.model,
            task.base_url,
            home,
            task.hooks,
        )))
    }

    fn grade(&self, task: &GradeTask<'_>, home: &Path) -> Result<Invocation, InvocationError> {
        let mut a = args([
            "exec",
            "--json",
            "--skip-git-repo-check",
            "--sandbox",
            "read-only",
        ]);
        for setting in GRADE_WITHOUT_TOOLS {
            a.extend(["-c".into(), (*setting).into()]);
        }
        Ok(self.invocation(
            a,
            Some(task.prompt),
            task.model,
            task.base_url,
            home,
            HooksSetting::None,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run's task in `dir`, with the fields these tests vary.
    fn task<'a>(
        dir: &'a Path,
        (prompt, model, base_url): (&'a str, Option<&'a str>, Option<&'a str>),
        hooks: HooksSetting,
        converse: bool,
    ) -> Task<'a> {
        Task {
            prompt,
            workspace: dir,
            model,
            max_turns: None,
            base_url,
            mcp_servers: &EMPTY,
            plugins: &[],
            hooks,
            converse,
        }
    }

    static EMPTY: McpServers = McpServers::new();

    #[test]
    fn a_base_url_is_a_provider_with_bounded_retries() {
        let home = tempfile::tempdir().unwrap();
        let task = task(
            home.path(),
            ("do \"it\"", Some("gpt-test"), Some("http://127.0.0.1:9/v1")),
            HooksSetting::default(),
            false,
        );
        let inv = Codex.task(&task, home.path()).unwrap();
        let args = inv.arg_strings();
        assert_eq!(args.last().map(String::as_str), Some("do \"it\""));
        assert!(args.windows(2).any(|w| w == ["-m", "gpt-test"]));
        assert!(args.contains(&"model_provider=aptitude".to_owned()));
        assert!(args.iter().any(|a| a.contains(
            "base_url=\"http://127.0.0.1:9/v1\",wire_api=\"responses\",env_key=\"OPENAI_API_KEY\",request_max_retries=0"
        )), "{args:?}");
        assert_eq!(inv.isolation[0].0, "CODEX_HOME");
        assert_eq!(toml_string("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000A\"");
    }

    /// A run with a `user:` is `codex app-server`: the prompt goes through the channel,
    /// never on the command line, the model as a setting (the app server has no `-m`),
    /// hooks off; with `hooks: workspace` there is no such channel.
    #[test]
    fn a_conversation_runs_the_app_server_with_hooks_off() {
        let home = tempfile::tempdir().unwrap();
        let mut task = task(
            home.path(),
            (
                "the prompt",
                Some("gpt-test"),
                Some("http://127.0.0.1:9/v1"),
            ),
            HooksSetting::None,
            true,
        );
        let args = Codex.task(&task, home.path()).unwrap().arg_strings();
        assert_eq!(
            args[..3],
            ["app-server", "--enable", "default_mode_request_user_input"]
        );
        assert!(!args.contains(&"the prompt".to_owned()), "{args:?}");
        assert!(args.contains(&"model=\"gpt-test\"".to_owned()), "{args:?}");
        assert!(!args.contains(&"-m".to_owned()), "{args:?}");
        assert!(
            args.windows(2).any(|w| w == ["--disable", "hooks"]),
            "{args:?}"
        );
        assert!(Codex.ask_channel(&task).is_some());
        task.hooks = HooksSetting::Workspace;
        assert!(
            Codex.ask_channel(&task).is_none(),
            "exec and its follow-ups instead"
        );
    }

    /// `hooks: none` turns Codex's hooks engine and its after-turn `notify` off on every
    /// run and follow-up, and on grading calls; `hooks: workspace` trusts the project.
    #[test]
    fn hooks_are_off_unless_the_test_opts_in() {
        let home = tempfile::tempdir().unwrap();
        let mut task = task(home.path(), ("p", None, None), HooksSetting::None, false);
        let strings = |inv: Invocation| inv.arg_strings();
        let off = ["--disable", "hooks", "-c", "notify=[]"];
        let run = strings(Codex.task(&task, home.path()).unwrap());
        assert!(run.windows(4).any(|w| w == off), "{run:?}");
        let resume = strings(Codex.follow_up(&task, "s", home.path()).unwrap().unwrap());
        assert!(resume.windows(4).any(|w| w == off), "{resume:?}");
        let grade = GradeTask {
            prompt: "p",
            workspace: home.path(),
            model: None,
            base_url: None,
        };
        let grade = strings(Codex.grade(&grade, home.path()).unwrap());
        assert!(grade.windows(4).any(|w| w == off), "{grade:?}");
        task.hooks = HooksSetting::Workspace;
        let on = strings(Codex.task(&task, home.path()).unwrap());
        assert!(!on.contains(&"--disable".to_owned()), "{on:?}");
        assert!(on.contains(&"--dangerously-bypass-hook-trust".to_owned()));
        assert!(on.contains(&"--trust".to_owned()));
    }
}
