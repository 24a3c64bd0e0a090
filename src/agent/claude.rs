//! The Claude Code adapter (`@anthropic-ai/claude-code`, flags and events as observed with
//! 2.1.328; see `docs/agents.md`).
//!
//! - **Run:** `claude -p PROMPT --output-format stream-json --verbose
//!   --dangerously-skip-permissions [--model M] [--max-turns N]` in the workspace copy, with
//!   stdin closed. The events are read from stdout as they come and parsed into the
//!   transcript; no session file is ever looked up under `~/.claude` (under concurrency the
//!   newest file there belongs to another test).
//! - **Isolation:** each run gets its own `CLAUDE_CONFIG_DIR` (a temp dir, removed after);
//!   the user's `.credentials.json`, when there is one, is copied in so that a logged-in
//!   user's subscription keeps working. `IS_SANDBOX=1` is set when running as root, where
//!   Claude Code otherwise refuses `--dangerously-skip-permissions`; auto-updates and
//!   non-essential traffic are turned off.
//! - **Permissions:** bypassed by default (the workspace is a throwaway copy); any other
//!   mode is passed as `--permission-mode MODE`.
//! - **Grading:** `claude -p PROMPT --output-format json --tools "" --max-turns 1
//!   --no-session-persistence [--model M]`: one request, no tools; the reply's `result`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use super::process::{self, Spec};
use super::{Agent, AgentError, AgentInfo, ExecuteRequest, Execution, GradeReply};
use crate::transcript::{Format, StreamParser, Usage};

/// The environment variable that names the `claude` binary (the flag `--claude-bin` wins).
pub const BIN_ENV: &str = "APTITUDE_CLAUDE_BIN";

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

/// The Claude Code adapter.
#[derive(Debug, Clone)]
pub struct ClaudeAdapter {
    binary: Option<PathBuf>,
    looked: String,
    permission_mode: PermissionMode,
    grace: Duration,
    extra_env: Vec<(String, String)>,
}

impl ClaudeAdapter {
    /// An adapter for `binary` (from `--claude-bin`), else `$APTITUDE_CLAUDE_BIN`, else
    /// `claude` on `PATH`.
    pub fn new(binary: Option<PathBuf>, permission_mode: PermissionMode) -> Self {
        let (binary, looked) = match binary {
            Some(b) => {
                let looked = format!("--claude-bin {}", b.display());
                (Some(b), looked)
            }
            None => match std::env::var_os(BIN_ENV) {
                Some(b) => {
                    let b = PathBuf::from(b);
                    let looked = format!("{BIN_ENV}={}", b.display());
                    (Some(b), looked)
                }
                None => (super::find_on_path("claude"), "`claude` on PATH".to_owned()),
            },
        };
        ClaudeAdapter {
            binary,
            looked,
            permission_mode,
            grace: Duration::from_secs(5),
            extra_env: Vec::new(),
        }
    }

    /// Adds environment variables for every run and grading call (a test's `env:` still
    /// wins), e.g. `ANTHROPIC_BASE_URL` for a gateway.
    pub fn with_env(mut self, env: impl IntoIterator<Item = (String, String)>) -> Self {
        self.extra_env.extend(env);
        self
    }

    /// Sets the time between SIGTERM and SIGKILL when a run is stopped.
    pub fn with_grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    fn binary(&self) -> Result<&Path, AgentError> {
        match &self.binary {
            Some(b) if b.is_file() => Ok(b),
            _ => Err(AgentError::Missing {
                agent: "claude",
                looked: self.looked.clone(),
                hint: "install it with `npm install -g @anthropic-ai/claude-code`, or name the binary with --claude-bin PATH or APTITUDE_CLAUDE_BIN".into(),
            }),
        }
    }

    /// The variables every Claude run gets: defaults a test's `env:` may change, then the
    /// per-run config dir, which it may not.
    fn env(
        &self,
        test_env: &std::collections::BTreeMap<String, String>,
        config_dir: &Path,
    ) -> Vec<(String, String)> {
        let mut env = vec![
            ("DISABLE_AUTOUPDATER".to_owned(), "1".to_owned()),
            (
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".to_owned(),
                "1".to_owned(),
            ),
        ];
        if nix::unistd::geteuid().is_root() {
            env.push(("IS_SANDBOX".to_owned(), "1".to_owned()));
        }
        env.extend(self.extra_env.iter().cloned());
        env.extend(test_env.iter().map(|(k, v)| (k.clone(), v.clone())));
        env.push((
            "CLAUDE_CONFIG_DIR".to_owned(),
            config_dir.display().to_string(),
        ));
        env
    }
}

/// A fresh config dir for one run, with the user's login copied in when there is one.
fn config_dir() -> Result<tempfile::TempDir, AgentError> {
    let dir = tempfile::Builder::new()
        .prefix("aptitude-claude-config-")
        .tempdir()
        .map_err(|e| AgentError::Start {
            binary: PathBuf::from("claude"),
            message: format!("can not create a config dir: {e}"),
        })?;
    let user_dir = std::env::var_os("CLAUDE_CONFIG_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".claude")));
    if let Some(creds) = user_dir.map(|d| d.join(".credentials.json"))
        && creds.is_file()
    {
        let target = dir.path().join(".credentials.json");
        if std::fs::copy(&creds, &target).is_ok() {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600));
        }
    }
    Ok(dir)
}

#[async_trait]
impl Agent for ClaudeAdapter {
    fn name(&self) -> &'static str {
        "claude"
    }

    async fn check(&self) -> Result<AgentInfo, AgentError> {
        let binary = self.binary()?.to_owned();
        let spec = Spec {
            program: binary.clone(),
            args: vec!["--version".into()],
            cwd: std::env::temp_dir(),
            env: Vec::new(),
            timeout: Duration::from_secs(60),
            grace: Duration::from_secs(1),
        };
        let mut lines = Vec::new();
        let out = process::run(&spec, &CancellationToken::new(), |l| {
            lines.push(l.to_owned())
        })
        .await
        .map_err(|e| AgentError::Start {
            binary: binary.clone(),
            message: e.to_string(),
        })?;
        if !out.success() {
            return Err(AgentError::Start {
                binary,
                message: format!(
                    "`--version` {}: {}",
                    out.describe(spec.timeout),
                    out.stderr.trim()
                ),
            });
        }
        Ok(AgentInfo {
            name: "claude",
            binary,
            version: lines.first().cloned().unwrap_or_default(),
        })
    }

    async fn execute(&self, req: ExecuteRequest<'_>) -> Result<Execution, AgentError> {
        let binary = self.binary()?.to_owned();
        let config = config_dir()?;
        let mut args: Vec<OsString> = vec![
            "-p".into(),
            req.prompt.into(),
            "--output-format".into(),
            "stream-json".into(),
            "--verbose".into(),
        ];
        match &self.permission_mode {
            PermissionMode::Bypass => args.push("--dangerously-skip-permissions".into()),
            PermissionMode::Mode(mode) => {
                args.push("--permission-mode".into());
                args.push(mode.into());
            }
        }
        if let Some(model) = req.model {
            args.push("--model".into());
            args.push(model.into());
        }
        if let Some(turns) = req.max_turns {
            args.push("--max-turns".into());
            args.push(turns.to_string().into());
        }
        let spec = Spec {
            program: binary.clone(),
            args,
            cwd: req.workspace.to_owned(),
            env: self.env(req.env, config.path()),
            timeout: req.timeout,
            grace: self.grace,
        };
        let mut parser = StreamParser::new(Format::ClaudeStreamJson);
        let mut raw = Vec::new();
        let mut reported = 0;
        let output = process::run(&spec, req.cancel, |line| {
            parser.push_line(line);
            raw.push(line.to_owned());
            if let Some(hook) = req.on_tool_call {
                for call in &parser.calls()[reported..] {
                    hook(call);
                }
                reported = parser.calls().len();
            }
        })
        .await
        .map_err(|e| AgentError::Start {
            binary,
            message: e.to_string(),
        })?;
        Ok(Execution {
            transcript: parser.finish(),
            process: output,
            raw,
        })
    }

    async fn grade(
        &self,
        prompt: &str,
        model: Option<&str>,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<GradeReply, AgentError> {
        let binary = self.binary()?.to_owned();
        let config = config_dir()?;
        let cwd = tempfile::tempdir()
            .map_err(|e| AgentError::Grade(format!("can not create a temp dir: {e}")))?;
        let mut args: Vec<OsString> = vec![
            "-p".into(),
            prompt.into(),
            "--output-format".into(),
            "json".into(),
            "--tools".into(),
            "".into(),
            "--max-turns".into(),
            "1".into(),
            "--no-session-persistence".into(),
        ];
        if let Some(model) = model {
            args.push("--model".into());
            args.push(model.into());
        }
        let spec = Spec {
            program: binary,
            args,
            cwd: cwd.path().to_owned(),
            env: self.env(&Default::default(), config.path()),
            timeout,
            grace: self.grace,
        };
        let mut stdout = String::new();
        let out = process::run(&spec, cancel, |line| {
            stdout.push_str(line);
            stdout.push('\n');
        })
        .await
        .map_err(|e| AgentError::Grade(format!("can not start the grader: {e}")))?;
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

    #[test]
    fn missing_binary_has_an_install_hint() {
        let adapter =
            ClaudeAdapter::new(Some("/nonexistent/claude".into()), PermissionMode::Bypass);
        let err = adapter.binary().unwrap_err().to_string();
        assert!(err.contains("--claude-bin /nonexistent/claude"), "{err}");
        assert!(
            err.contains("npm install -g @anthropic-ai/claude-code"),
            "{err}"
        );
    }

    #[test]
    fn test_env_can_not_move_the_config_dir() {
        let mut test_env = std::collections::BTreeMap::new();
        test_env.insert("CLAUDE_CONFIG_DIR".to_owned(), "/home/u/.claude".to_owned());
        test_env.insert("DISABLE_AUTOUPDATER".to_owned(), "0".to_owned());
        let adapter = ClaudeAdapter::new(None, PermissionMode::Bypass)
            .with_env([("DISABLE_AUTOUPDATER".to_owned(), "2".to_owned())]);
        let env = adapter.env(&test_env, Path::new("/tmp/run"));
        let last = |k: &str| {
            env.iter()
                .rev()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(last("CLAUDE_CONFIG_DIR"), Some("/tmp/run"));
        assert_eq!(
            last("DISABLE_AUTOUPDATER"),
            Some("0"),
            "a test may change the defaults"
        );
    }

    #[test]
    fn permission_modes() {
        assert_eq!(PermissionMode::parse("bypass"), PermissionMode::Bypass);
        assert_eq!(
            PermissionMode::parse("acceptEdits"),
            PermissionMode::Mode("acceptEdits".into())
        );
    }
}
