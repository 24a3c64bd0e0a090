//! The pi adapter (`@mariozechner/pi-coding-agent`, flags and events as observed with
//! 0.73.1; see `docs/agents.md` and `tests/data/corpus/live/pi-0.73.1/`).
//!
//! - **Run:** `pi [--provider aptitude] [--model M] --mode json -p PROMPT` in the workspace
//!   copy ([`Format::PiJson`]). pi has no permission system: its tools always run.
//! - **Isolation:** `PI_CODING_AGENT_DIR` is the run's private home, with a
//!   `settings.json` that turns pi's retries off (a 500 is then one request);
//!   `PI_OFFLINE=1`, `PI_TELEMETRY=0`.
//! - **Base URL:** a provider `aptitude` in `models.json` (`openai-completions`, key from
//!   the variable `OPENAI_API_KEY`, which pi resolves), so a model is required.
//! - **Extensions** (pi's hooks: in-process TypeScript whose `tool_call` handler can rewrite
//!   a tool's input, whose `session_start` handler can run anything; auto-discovered in
//!   `.pi/extensions/` and `$PI_CODING_AGENT_DIR/extensions/`, or named as packages in a
//!   `settings.json`): unless the test says `hooks: workspace`, `--no-extensions`, which
//!   drops every discovered one (0.73.1 `core/resource-loader.js`: only `-e` paths stay,
//!   and aptitude passes none). Extensions load once at start; `-p` has no `/reload`.
//!   Also on grading calls.
//! - **Failures:** in json mode pi exits 0 even when the model API fails; the transcript
//!   reports `stopReason: "error"` as a failed outcome, so such a run is `error`.
//! - **Turns:** pi takes no turn limit; `max_turns` is not enforced.
//! - **Grading:** the same command with `--no-tools`.

use std::ffi::OsString;
use std::path::Path;

use super::{AgentCli, AgentKind, GradeTask, Invocation, InvocationError, Task};
use crate::spec::HooksSetting;
use crate::transcript::Format;

/// pi.
#[derive(Debug, Clone, Default)]
pub struct Pi;

fn write(
    home: &Path,
    name: &'static str,
    value: &serde_json::Value,
) -> Result<(), InvocationError> {
    let path = home.join(name);
    std::fs::write(&path, value.to_string()).map_err(InvocationError::write("config", &path))
}

fn invocation(
    extra: &[&str],
    prompt: &str,
    model: Option<&str>,
    base_url: Option<&str>,
    home: &Path,
    hooks: HooksSetting,
) -> Result<Invocation, InvocationError> {
    write(
        home,
        "settings.json",
        &serde_json::json!({"retry": {"enabled": false, "provider": {"maxRetries": 0}}}),
    )?;
    let mut a: Vec<OsString> = Vec::new();
    match (base_url, model) {
        (Some(url), Some(model)) => {
            write(
                home,
                "models.json",
                &serde_json::json!({"providers": {"aptitude": {
                    "baseUrl": url,
                    "api": "openai-completions",
                    "apiKey": "OPENAI_API_KEY",
                    "compat": {"supportsDeveloperRole": false},
                    "models": [{"id": model}],
                }}}),
            )?;
            a.extend(["--provider".into(), "aptitude".into()]);
            a.extend(["--model".into(), model.into()]);
        }
        (Some(_), None) => {
            return Err(InvocationError::Unsupported(
                "needs a model with a base URL (`model:` or --model): it names the model of its `aptitude` provider",
            ));
        }
        (None, Some(model)) => a.extend(["--model".into(), model.into()]),
        (None, None) => {}
    }
    if hooks == HooksSetting::None {
        a.push("--no-extensions".into());
    }
    a.extend(["--mode".into(), "json".into()]);
    a.extend(extra.iter().map(OsString::from));
    a.extend(["-p".into(), prompt.into()]);
    Ok(Invocation {
        args: a,
        defaults: vec![
            ("PI_OFFLINE".to_owned(), "1".to_owned()),
            ("PI_TELEMETRY".to_owned(), "0".to_owned()),
        ],
        isolation: vec![("PI_CODING_AGENT_DIR".to_owned(), home.display().to_string())],
    })
}

impl AgentCli for Pi {
    fn kind(&self) -> AgentKind {
        AgentKind::Pi
    }

    fn program(&self) -> &'static str {
        "pi"
    }

    fn install_hint(&self) -> &'static str {
        "npm install -g @mariozechner/pi-coding-agent@0.73.1"
    }

    fn api_key_env(&self) -> &'static str {
        "OPENAI_API_KEY"
    }

    fn own_env(&self) -> &'static [&'static str] {
        &["PI_", "OPENAI_"]
    }

    /// Only with a base URL (the provider `aptitude` in `models.json`).
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
        "a provider `aptitude` in its `models.json` (Chat Completions; needs a model)"
    }

    fn stream_format(&self) -> Format {
        Format::PiJson
    }

    fn task(&self, task: &Task<'_>, home: &Path) -> Result<Invocation, InvocationError> {
        invocation(
            &[],
            task.prompt,
            task.model,
            task.base_url,
            home,
            task.hooks,
        )
    }

    /// `pi … --mode json --session SESSION -p REPLY`: the reply as the next turn of the
    /// session its events' `session` header named (0.73.1 takes a session file or a
    /// partial UUID, looked up under the run's private `PI_CODING_AGENT_DIR`, in the same
    /// workspace copy). pi has no ask tool and asks in plain text, so this is its
    /// conversation channel.
    fn follow_up(
        &self,
        task: &Task<'_>,
        session: &str,
        home: &Path,
    ) -> Option<Result<Invocation, InvocationError>> {
        Some(invocation(
            &["--session", session],
            task.prompt,
            task.model,
            task.base_url,
            home,
            task.hooks,
        ))
    }

    fn grade(&self, task: &GradeTask<'_>, home: &Path) -> Result<Invocation, InvocationError> {
        invocation(
            &["--no-tools"],
            task.prompt,
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

    /// `hooks: none` drops every discovered extension, on runs and grading calls alike;
    /// `hooks: workspace` lets them load.
    #[test]
    fn extensions_load_only_when_the_test_opts_in() {
        let home = tempfile::tempdir().unwrap();
        let has = |hooks| {
            invocation(&[], "p", Some("m"), None, home.path(), hooks)
                .unwrap()
                .args
                .contains(&OsString::from("--no-extensions"))
        };
        assert!(has(HooksSetting::None));
        assert!(!has(HooksSetting::Workspace));
        let grade = GradeTask {
            prompt: "p",
            workspace: home.path(),
            model: Some("m"),
            base_url: None,
        };
        let grade = Pi.grade(&grade, home.path()).unwrap();
        assert!(grade.args.contains(&OsString::from("--no-extensions")));
    }
}
