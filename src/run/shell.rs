//! `setup` and `verify` shells: `sh -c COMMAND` in the workspace copy, with the test's
//! `env:`, under the test's timeout, every process they start killed when they end
//! ([`crate::agent::process`]).

use std::collections::BTreeMap;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::agent::process;
use crate::workspace::WorkspaceError;

/// Why a test's own steps around the agent failed (`setup`, the post-run work); its message
/// becomes the test's `error`.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    /// A `setup` command could not be started.
    #[error("setup `{command}` could not start: {source}")]
    SetupStart {
        /// The command.
        command: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A `setup` command failed: how it ended and the last lines it printed.
    #[error("setup `{command}` {ending}{}", colon_lines(.output))]
    SetupFailed {
        /// The command.
        command: String,
        /// `exited with code 3`, `killed by signal 9`, `timed out after 30s`.
        ending: String,
        /// Its last 10 lines of stdout and stderr (may be empty).
        output: String,
    },
    /// The file snapshot's task died.
    #[error("the file snapshot failed: {0}")]
    SnapshotTask(#[source] tokio::task::JoinError),
    /// The workspace could not be read for the file snapshot.
    #[error(transparent)]
    Snapshot(#[from] WorkspaceError),
    /// The assertions' task died.
    #[error("the assertions failed: {0}")]
    AssertionsTask(#[source] tokio::task::JoinError),
}

/// `:\n` and `output`, or nothing when it is empty.
pub(super) fn colon_lines(output: &str) -> String {
    if output.is_empty() {
        String::new()
    } else {
        format!(":\n{output}")
    }
}

/// The last `n` non-empty lines of `text`, joined.
pub(super) fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Runs `command` with `sh -c` in `workspace` with `env` (a `setup` or `verify` command);
/// returns its stdout and how it ended, or why `sh` could not be started.
pub(super) async fn run_shell(
    command: &str,
    workspace: &std::path::Path,
    env: &BTreeMap<String, String>,
    timeout: Duration,
    cancel: &CancellationToken,
) -> (String, std::io::Result<process::Output>) {
    let spec = process::Spec {
        program: "sh".into(),
        args: vec!["-c".into(), command.into()],
        cwd: workspace.to_owned(),
        env: env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        timeout,
        grace: Duration::from_secs(2),
    };
    let mut stdout = String::new();
    let out = process::run(&spec, cancel, |line| {
        stdout.push_str(line);
        stdout.push('\n');
    })
    .await;
    (stdout, out)
}

/// Runs one `setup` command in the workspace; the error names the command and its output.
pub(super) async fn run_setup(
    command: &str,
    workspace: &std::path::Path,
    env: &BTreeMap<String, String>,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Result<(), StepError> {
    let (stdout, out) = run_shell(command, workspace, env, timeout, cancel).await;
    let out = out.map_err(|source| StepError::SetupStart {
        command: command.to_owned(),
        source,
    })?;
    if out.success() {
        return Ok(());
    }
    Err(StepError::SetupFailed {
        command: command.to_owned(),
        ending: out.describe(timeout),
        output: last_lines(&format!("{stdout}{}", out.stderr), 10),
    })
}
