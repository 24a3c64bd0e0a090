//! The Qwen Code adapter (`@qwen-code/qwen-code`, flags and events as observed with 0.24.4;
//! see `docs/agents.md` and `tests/data/corpus/live/qwen-0.24.4/`).
//!
//! - **Run:** `qwen --auth-type openai [-m M] -o stream-json --yolo PROMPT` in the
//!   workspace copy ([`Format::QwenStreamJson`]).
//! - **Isolation:** `QWEN_HOME` is `<private home>/.qwen`.
//! - **Base URL:** `OPENAI_BASE_URL` (Chat Completions); the key is read from
//!   `OPENAI_API_KEY`.
//! - **Turns:** Qwen Code takes no turn limit on its command line; `max_turns` is not
//!   passed.
//! - **Grading:** `qwen --auth-type openai [-m M] -o stream-json --approval-mode plan
//!   PROMPT` in an empty directory; the reply is the final message.

use std::ffi::OsString;
use std::path::Path;

use super::executor::args;
use super::{AgentCli, AgentKind, GradeTask, Invocation, Task};
use crate::transcript::Format;

/// Qwen Code.
#[derive(Debug, Clone, Default)]
pub struct Qwen;

fn invocation(
    mode: &str,
    prompt: &str,
    model: Option<&str>,
    base_url: Option<&str>,
    home: &Path,
) -> Invocation {
    let mut a: Vec<OsString> = args(["--auth-type", "openai", "-o", "stream-json"]);
    a.extend(["--approval-mode".into(), mode.into()]);
    if let Some(model) = model {
        a.extend(["-m".into(), model.into()]);
    }
    a.push(prompt.into());
    let defaults = base_url
        .map(|url| ("OPENAI_BASE_URL".to_owned(), url.to_owned()))
        .into_iter()
        .collect();
    Invocation {
        args: a,
        defaults,
        isolation: vec![(
            "QWEN_HOME".to_owned(),
            home.join(".qwen").display().to_string(),
        )],
    }
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

    fn stream_format(&self) -> Format {
        Format::QwenStreamJson
    }

    fn task(&self, task: &Task<'_>, home: &Path) -> Result<Invocation, String> {
        Ok(invocation(
            "yolo",
            task.prompt,
            task.model,
            task.base_url,
            home,
        ))
    }

    fn grade(&self, task: &GradeTask<'_>, home: &Path) -> Result<Invocation, String> {
        Ok(invocation(
            "plan",
            task.prompt,
            task.model,
            task.base_url,
            home,
        ))
    }
}
