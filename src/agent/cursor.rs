//! The Cursor CLI adapter (`cursor-agent`, flags as documented by Cursor; stream-json as
//! captured from 2026.01.28 in `tests/data/corpus/cursor-stream-json/`).
//!
//! Cursor's CLI is not on npm and talks only to Cursor's own backend, so `run` with Cursor
//! is **not verified against the real binary**: its process handling is tested against a
//! stand-in executable that replays a real capture.
//!
//! - **Run:** `cursor-agent -p --output-format stream-json --force --trust [--model M]
//!   PROMPT` in the workspace copy ([`Format::CursorStreamJson`]); the key is read from
//!   `CURSOR_API_KEY`.
//! - **Base URL:** not supported (Cursor talks only to its backend): such a test is `error`.
//! - **Turns:** not enforced.
//! - **Grading:** `cursor-agent -p --output-format stream-json [--model M] PROMPT` without
//!   `--force`, so no tool is approved; the reply is the last assistant message.

use std::ffi::OsString;
use std::path::Path;

use super::args;
use super::{AgentCli, AgentKind, GradeTask, Invocation, InvocationError, Task};
use crate::transcript::Format;

/// Cursor CLI.
#[derive(Debug, Clone, Default)]
pub struct Cursor;

fn invocation(
    mut a: Vec<OsString>,
    prompt: &str,
    model: Option<&str>,
    base_url: Option<&str>,
) -> Result<Invocation, InvocationError> {
    if base_url.is_some() {
        return Err(InvocationError::Unsupported(
            "talks only to Cursor's backend: a base URL can not be set",
        ));
    }
    if let Some(model) = model {
        a.extend(["--model".into(), model.into()]);
    }
    a.push(prompt.into());
    Ok(Invocation {
        args: a,
        ..Invocation::default()
    })
}

impl AgentCli for Cursor {
    fn kind(&self) -> AgentKind {
        AgentKind::Cursor
    }

    fn program(&self) -> &'static str {
        "cursor-agent"
    }

    fn install_hint(&self) -> &'static str {
        "curl https://cursor.com/install -fsS | bash"
    }

    fn api_key_env(&self) -> &'static str {
        "CURSOR_API_KEY"
    }

    fn own_env(&self) -> &'static [&'static str] {
        &["CURSOR_"]
    }

    fn base_url_via(&self) -> &'static str {
        "not supported (Cursor's backend only)"
    }

    fn stream_format(&self) -> Format {
        Format::CursorStreamJson
    }

    fn task(&self, task: &Task<'_>, _home: &Path) -> Result<Invocation, InvocationError> {
        invocation(
            args(["-p", "--output-format", "stream-json", "--force", "--trust"]),
            task.prompt,
            task.model,
            task.base_url,
        )
    }

    fn grade(&self, task: &GradeTask<'_>, _home: &Path) -> Result<Invocation, InvocationError> {
        invocation(
            args(["-p", "--output-format", "stream-json"]),
            task.prompt,
            task.model,
            task.base_url,
        )
    }
}
