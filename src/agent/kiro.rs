//! The Kiro CLI adapter (`kiro-cli`; flags from its source, `aws/amazon-q-developer-cli`
//! `crates/chat-cli-v2/src/cli/chat/mod.rs` `ChatArgs`, and from harnesses that run 2.x).
//!
//! Kiro CLI is not in any registry aptitude's tests reach, and talks only to Kiro's own
//! backend, so `run` with Kiro is **not verified against the real binary**: the adapter is
//! tested against a stand-in `kiro-cli` (`tests/data/kiro/kiro-cli`) that writes each
//! engine's store in Kiro's format.
//!
//! - **Run:** `kiro-cli chat --no-interactive --trust-all-tools [--model M] PROMPT` in the
//!   workspace copy (a throwaway copy: every tool is trusted, as other agents' permissions
//!   are bypassed). The key is read from `KIRO_API_KEY`.
//! - **Isolation:** `HOME` is the run's private home (Kiro keeps its settings, sessions and
//!   database under it), and so are the XDG directories; a logged-in user's login (in
//!   their own database) is not carried over: use `KIRO_API_KEY`.
//! - **Transcript:** stdout is only text. After the run the sessions Kiro wrote in the
//!   private home are read — whichever engine wrote them (v1's `data.sqlite3`, v2's
//!   `~/.kiro/sessions/cli`, v3's `~/.kiro/sessions/<workspace>`;
//!   [`crate::transcript::kiro::store`]). A run that left no session is `error`, never a
//!   pass. `--record` keeps the session's own lines.
//! - **MCP servers:** `~/.kiro/settings/mcp.json` (`{"mcpServers": {name: {command, args,
//!   env} | {url, headers}}}`).
//! - **Skills:** the workspace's `.claude/skills/<name>/` are copied to `~/.kiro/skills/`,
//!   where Kiro discovers skills.
//! - **Base URL:** not supported (Kiro talks only to its backend): such a test is `error`.
//! - **Turns:** not enforced (Kiro has no turn limit).
//! - **Grading:** `kiro-cli chat --no-interactive [--model M] PROMPT` in an empty directory,
//!   tools not trusted (non-interactive Kiro denies those that need approval); the reply is
//!   stdout's text.

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use super::{
    AgentCli, AgentError, AgentKind, Finished, GradeReply, GradeTask, Invocation, InvocationError,
    McpServer, McpServers, Task, args, process,
};
use crate::transcript::kiro::store::{self, Session};
use crate::transcript::{Format, Outcome, Transcript, Usage};

/// Kiro CLI.
#[derive(Debug, Clone, Default)]
pub struct Kiro;

/// `~/.kiro/settings/mcp.json`: `{"mcpServers": {name: {command, args, env} | {url,
/// headers}}}` (Kiro CLI's format, as harnesses running 2.x write it).
pub fn mcp_config(servers: &McpServers) -> serde_json::Value {
    let servers = super::mcp_entries(servers, |server| match server {
        McpServer::Stdio { command, args, env } => {
            serde_json::json!({"command": command, "args": args, "env": env})
        }
        McpServer::Http { url, headers } => {
            serde_json::json!({"url": url, "headers": headers})
        }
    });
    serde_json::json!({ "mcpServers": servers })
}

/// The variables that keep Kiro inside `home`: `HOME`, the XDG directories (its database
/// lives in the data directory), and the v2 sessions directory Kiro lets a variable move.
fn isolation(home: &Path) -> Vec<(String, String)> {
    let at = |rel: &str| home.join(rel).display().to_string();
    vec![
        ("HOME".to_owned(), home.display().to_string()),
        ("XDG_DATA_HOME".to_owned(), at(".local/share")),
        ("XDG_CONFIG_HOME".to_owned(), at(".config")),
        ("XDG_STATE_HOME".to_owned(), at(".local/state")),
        ("XDG_CACHE_HOME".to_owned(), at(".cache")),
        (
            "KIRO_TEST_SESSIONS_DIR".to_owned(),
            at(".kiro/sessions/cli"),
        ),
    ]
}

fn invocation(
    mut a: Vec<OsString>,
    prompt: &str,
    model: Option<&str>,
    base_url: Option<&str>,
    home: &Path,
) -> Result<Invocation, InvocationError> {
    if base_url.is_some() {
        return Err(InvocationError::Unsupported(
            "talks only to Kiro's backend: a base URL can not be set",
        ));
    }
    if let Some(model) = model {
        a.extend(["--model".into(), model.into()]);
    }
    a.push(prompt.into());
    Ok(Invocation {
        args: a,
        defaults: Vec::new(),
        isolation: isolation(home),
    })
}

/// Copies each `<workspace>/.claude/skills/<name>/` to `<home>/.kiro/skills/<name>/`:
/// regular files and directories only (links and special files are left out).
fn copy_skills(workspace: &Path, home: &Path) -> Result<(), InvocationError> {
    let from = workspace.join(".claude/skills");
    if !from.is_dir() {
        return Ok(());
    }
    let to = home.join(".kiro/skills");
    // A failure may be reading the workspace's copy as well as writing the home's.
    copy_dir(&from, &to).map_err(InvocationError::write(
        "copy of the workspace's skills",
        &to,
    ))
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else if kind.is_file() {
            let (mut input, _) =
                crate::shared::files::open_regular(&entry.path()).map_err(std::io::Error::other)?;
            std::io::copy(&mut input, &mut std::fs::File::create(&target)?)?;
        }
    }
    Ok(())
}

/// Text without terminal escape sequences (colours, cursor moves).
fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        // CSI: ESC [ parameters… final byte (@ to ~); other escapes: one more character.
        if chars.peek() == Some(&'[') {
            chars.next();
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        } else {
            chars.next();
        }
    }
    out
}

/// Whether a session ran in `workspace` (when the store says where it ran).
fn ran_in(session: &Session, workspace: &Path) -> bool {
    let Some(cwd) = &session.cwd else {
        return true;
    };
    let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_owned());
    canonical(Path::new(cwd)) == canonical(workspace)
}

/// Whether `id` is one of `known`: the same id, or the same model id behind a store's
/// prefix (`tooluse_<id>`, v3's `run_command_<id>`). Short ids are compared whole, so that
/// no call is taken for another.
fn seen(known: &[String], id: &str) -> bool {
    let behind = |long: &str, short: &str| {
        short.len() >= 8
            && long
                .strip_suffix(short)
                .is_some_and(|prefix| prefix.ends_with('_'))
    };
    known
        .iter()
        .any(|k| k == id || behind(k, id) || behind(id, k))
}

/// Why Kiro's home held no session to read.
#[derive(Debug, thiserror::Error)]
enum NoSession {
    /// No session file at all.
    #[error("kiro-cli left no session in its home (looked in {})", store::PLACES)]
    None,
    /// Session files, none readable.
    #[error("kiro-cli left no session that could be read: {}", .0.join("; "))]
    Unreadable(Vec<String>),
}

/// The run's transcript from the sessions Kiro left in its home: the most recent session of
/// the newest engine that ran in the workspace; the calls of any other session not already
/// in it are added as another agent's (`kiro:<session id>`), so that nothing Kiro recorded
/// is left out. Also the session's own lines, for `--record`.
fn run_transcript(finished: &Finished<'_>) -> Result<(Transcript, Vec<String>), NoSession> {
    let found = store::sessions_in(finished.home);
    let mut sessions = found.sessions;
    sessions.sort_by_key(|s| {
        (
            !ran_in(s, finished.workspace),
            std::cmp::Reverse(s.engine),
            std::cmp::Reverse(s.updated_ms),
        )
    });
    let mut rest = sessions.into_iter();
    let Some(main) = rest.next() else {
        return Err(if found.unreadable.is_empty() {
            NoSession::None
        } else {
            NoSession::Unreadable(found.unreadable)
        });
    };
    let Session {
        mut transcript,
        raw,
        ..
    } = main;
    for other in rest {
        let label = format!(
            "kiro:{}",
            other
                .transcript
                .session_id
                .clone()
                .unwrap_or_else(|| other.path.display().to_string())
        );
        let known: Vec<String> = transcript.tool_calls.iter().map(|c| c.id.clone()).collect();
        let mut added = 0;
        for mut call in other.transcript.tool_calls {
            if !seen(&known, &call.id) {
                call.agent.clone_from(&label);
                transcript.tool_calls.push(call);
                added += 1;
            }
        }
        if added > 0 {
            transcript.warnings.push(crate::transcript::Warning {
                line: 0,
                message: format!(
                    "another Kiro session in the run's home ({} engine, {}): its {added} tool \
                     call(s) are added as agent `{label}`",
                    other.engine.name(),
                    other.path.display()
                ),
            });
        }
    }
    for why in &found.unreadable {
        transcript.lost.lines = transcript.lost.lines.saturating_add(1);
        transcript.lost.first.get_or_insert_with(|| why.clone());
        transcript.warnings.push(crate::transcript::Warning {
            line: 0,
            message: format!("a Kiro store could not be read: {why}"),
        });
    }
    transcript.warnings_total = transcript
        .warnings_total
        .max(transcript.warnings.len() as u64);
    Ok((transcript, raw))
}

/// The transcript of a run that left no session: an `error`, with what Kiro said.
fn no_session(why: String, finished: &Finished<'_>) -> Transcript {
    let stderr = finished.process.stderr.trim();
    let stdout = plain(&finished.stdout.join("\n"));
    let said = [("stderr", stderr), ("stdout", stdout.trim())]
        .into_iter()
        .filter(|(_, s)| !s.is_empty())
        .map(|(name, s)| format!("; {name}: {}", crate::shared::cut::chars(s, 2000).kept))
        .collect::<String>();
    Transcript {
        format: Format::KiroSession,
        session_id: None,
        agent_version: None,
        model: None,
        tool_calls: Vec::new(),
        final_text: None,
        usage: Usage::default(),
        outcome: Outcome::Error {
            message: format!("{why}{said}"),
        },
        runs: 0,
        warnings: Vec::new(),
        warnings_total: 0,
        lost: Default::default(),
        records_only: None,
        skills: None,
        skills_shown: None,
        mcp_params: None,
        turns: Vec::new(),
        turns_left_out: 0,
        unclaimed_execs: Vec::new(),
    }
}

impl AgentCli for Kiro {
    fn kind(&self) -> AgentKind {
        AgentKind::Kiro
    }

    fn program(&self) -> &'static str {
        "kiro-cli"
    }

    fn install_hint(&self) -> &'static str {
        "curl -fsSL https://cli.kiro.dev/install | bash"
    }

    fn api_key_env(&self) -> &'static str {
        "KIRO_API_KEY"
    }

    fn own_env(&self) -> &'static [&'static str] {
        &["KIRO_"]
    }

    fn base_url_via(&self) -> &'static str {
        "not supported (Kiro's backend only)"
    }

    /// Kiro prints text; this format is only what its transcript will be read as if no
    /// other store is found (see [`AgentCli::finish_run`]).
    fn stream_format(&self) -> Format {
        Format::KiroSession
    }

    fn transcript_source(&self) -> String {
        "none (stdout is text): `kiro-conversation`, `kiro-session` or `kiro-kas` from its home after the run".into()
    }

    fn supports_mcp(&self) -> bool {
        true
    }

    fn task(&self, task: &Task<'_>, home: &Path) -> Result<Invocation, InvocationError> {
        if !task.mcp_servers.is_empty() {
            let dir = home.join(".kiro/settings");
            let path = dir.join("mcp.json");
            std::fs::create_dir_all(&dir)
                .and_then(|()| std::fs::write(&path, mcp_config(task.mcp_servers).to_string()))
                .map_err(InvocationError::write("MCP config", &path))?;
        }
        copy_skills(task.workspace, home)?;
        invocation(
            args(["chat", "--no-interactive", "--trust-all-tools"]),
            task.prompt,
            task.model,
            task.base_url,
            home,
        )
    }

    fn grade(&self, task: &GradeTask<'_>, home: &Path) -> Result<Invocation, InvocationError> {
        invocation(
            args(["chat", "--no-interactive"]),
            task.prompt,
            task.model,
            task.base_url,
            home,
        )
    }

    /// The reply is stdout's text, terminal escapes removed.
    fn grade_reply(
        &self,
        stdout: &[String],
        output: &process::Output,
        timeout: Duration,
    ) -> Result<GradeReply, AgentError> {
        let text = plain(&stdout.join("\n"));
        let text = text.trim();
        let text = text.strip_prefix("> ").unwrap_or(text).trim();
        if output.success() && !text.is_empty() {
            return Ok(GradeReply {
                text: text.to_owned(),
                usage: Usage::default(),
            });
        }
        let stderr = output.stderr.trim();
        Err(AgentError::Grade(format!(
            "the kiro grader gave no answer: {}{}",
            if output.success() {
                "its output is empty".to_owned()
            } else {
                format!("the grader {}", output.describe(timeout))
            },
            if stderr.is_empty() {
                String::new()
            } else {
                format!("; stderr: {}", crate::shared::cut::chars(stderr, 2000).kept)
            }
        )))
    }

    fn finish_run(
        &self,
        _streamed: Transcript,
        finished: &Finished<'_>,
    ) -> (Transcript, Option<Vec<String>>) {
        match run_transcript(finished) {
            Ok((mut transcript, raw)) => {
                single_server_mcp_calls(&mut transcript, finished.mcp_servers);
                (transcript, Some(raw))
            }
            Err(why) => (no_session(why.to_string(), finished), None),
        }
    }
}

/// A v2 session names an MCP call by the tool alone; in a run whose home configures one
/// MCP server, a call of a tool Kiro does not have is that server's.
pub fn single_server_mcp_calls(transcript: &mut Transcript, servers: &McpServers) {
    let [server] = servers.keys().collect::<Vec<_>>()[..] else {
        return;
    };
    for call in &mut transcript.tool_calls {
        if call.canonical == call.name
            && !call.name.starts_with("mcp__")
            && !crate::spec::tools::is_known_tool(&call.name)
            && !KIRO_TOOLS.contains(&call.name.as_str())
        {
            call.canonical = format!("mcp__{server}__{}", call.name);
        }
    }
}

/// Kiro's own tools that have no canonical name (v1
/// `crates/chat-cli/src/cli/chat/tools/mod.rs`, v2 `crates/agent/src/agent/tools/mod.rs`,
/// v3 sessions): never an MCP server's.
const KIRO_TOOLS: [&str; 18] = [
    "use_aws",
    "gh_issue",
    "report_issue",
    "knowledge",
    "thinking",
    "delegate",
    "introspect",
    "code",
    "session",
    "dummy",
    "summary",
    "session_management",
    "switch_to_execution",
    "tool_search",
    "agent_crew",
    "tool_load",
    "tool_call",
    "disclose_context",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_isolated_and_its_mcp_servers_go_to_kiros_settings() {
        let home = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(ws.path().join(".claude/skills/deploy")).unwrap();
        std::fs::write(ws.path().join(".claude/skills/deploy/SKILL.md"), "# deploy").unwrap();
        let servers: McpServers = [(
            "docs".to_owned(),
            McpServer::Http {
                url: "http://127.0.0.1:9/mcp".into(),
                headers: Default::default(),
            },
        )]
        .into();
        let task = Task {
            prompt: "go",
            workspace: ws.path(),
            model: Some("claude-sonnet-4.5"),
            max_turns: Some(3),
            base_url: None,
            mcp_servers: &servers,
            plugins: &[],
            hooks: Default::default(),
            converse: false,
        };
        let inv = Kiro.task(&task, home.path()).unwrap();
        let a = inv.arg_strings();
        assert_eq!(
            a,
            [
                "chat",
                "--no-interactive",
                "--trust-all-tools",
                "--model",
                "claude-sonnet-4.5",
                "go"
            ]
        );
        assert_eq!(
            inv.isolation[0],
            ("HOME".into(), home.path().display().to_string())
        );
        let mcp: serde_json::Value = serde_json::from_slice(
            &std::fs::read(home.path().join(".kiro/settings/mcp.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(mcp["mcpServers"]["docs"]["url"], "http://127.0.0.1:9/mcp");
        assert!(home.path().join(".kiro/skills/deploy/SKILL.md").is_file());
        let with_url = Task {
            base_url: Some("http://127.0.0.1:9"),
            ..task
        };
        assert!(
            Kiro.task(&with_url, home.path())
                .unwrap_err()
                .to_string()
                .contains("base URL")
        );
    }

    #[test]
    fn a_call_is_the_same_only_behind_a_prefix_and_long_enough() {
        let known = vec![
            "tooluse_call_00_1".to_owned(),
            "run_command_toolu_abc123456".to_owned(),
        ];
        assert!(seen(&known, "call_00_1"));
        assert!(seen(&known, "tooluse_abc123456") || seen(&known, "toolu_abc123456"));
        assert!(!seen(&known, "1"), "a short id is compared whole");
        assert!(!seen(&known, "all_00_1"));
    }

    #[test]
    fn the_grading_reply_is_stdouts_text() {
        let out = process::Output::exited_ok();
        let lines = vec![
            "\u{1b}[32m> \u{1b}[0m{\"score\": 9,".to_owned(),
            "\"reasoning\": \"ok\"}".to_owned(),
        ];
        let reply = Kiro
            .grade_reply(&lines, &out, Duration::from_secs(1))
            .unwrap();
        assert_eq!(reply.text, "{\"score\": 9,\n\"reasoning\": \"ok\"}");
        assert!(Kiro.grade_reply(&[], &out, Duration::from_secs(1)).is_err());
    }
}
