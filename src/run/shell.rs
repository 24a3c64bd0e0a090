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

/// Where `setup` and `verify` commands run: `sh -c` in the workspace copy with the test's
/// `env:`, fenced in like the agent (the workspace read-write, a private home, no network,
/// the test file unreadable) unless the sandbox is off.
#[derive(Clone, Copy)]
pub(super) struct Shell<'a> {
    /// The workspace copy (the working directory).
    pub workspace: &'a std::path::Path,
    /// The test's `env:`.
    pub env: &'a BTreeMap<String, String>,
    /// The run's sandbox.
    pub sandbox: &'a crate::sandbox::Sandbox,
    /// The test file, which the command must not read.
    pub protect: &'a std::path::Path,
    /// The test's `sandbox:`.
    pub wanted: Option<crate::sandbox::Setting>,
    /// The test's `network:` hosts.
    pub network: &'a [String],
    /// Fires on Ctrl-C / SIGTERM.
    pub cancel: &'a CancellationToken,
}

/// Runs `command` with `sh -c` in the shell's workspace; returns its stdout and how it
/// ended, or why it could not be started (the sandbox included: a command the sandbox did
/// not start, or whose fence did not hold, did not run).
pub(super) async fn run_shell(
    shell: &Shell<'_>,
    command: &str,
    timeout: Duration,
) -> (String, std::io::Result<process::Output>) {
    let home = match tempfile::Builder::new()
        .prefix("aptitude-shell-home-")
        .tempdir()
    {
        Ok(home) => home,
        Err(e) => return (String::new(), Err(e)),
    };
    let protect = std::path::absolute(shell.protect).unwrap_or_else(|_| shell.protect.to_owned());
    let mut env = crate::sandbox::base_env(home.path(), &[]);
    env.extend(shell.env.iter().map(|(k, v)| (k.clone(), v.clone())));
    let policy = crate::sandbox::Policy {
        cwd: shell.workspace.to_owned(),
        writable: vec![shell.workspace.to_owned(), home.path().to_owned()],
        read_only: Vec::new(),
        mounts: Vec::new(),
        env,
        forwards: Vec::new(),
        must_not_read: vec![protect],
        network: shell.network.to_vec(),
        limits: None,
        // Nothing reads a setup or verify command's exec record.
        exec_record: false,
    };
    let fence = match shell.sandbox.fence(policy, shell.wanted) {
        Ok(fence) => fence,
        Err(e) => return (String::new(), Err(std::io::Error::other(e.to_string()))),
    };
    let env = match &fence {
        // Unsandboxed: aptitude's environment plus the test's, as before.
        None => shell
            .env
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        Some(_) => Vec::new(),
    };
    let spec = process::Spec {
        program: "sh".into(),
        args: vec!["-c".into(), command.into()],
        cwd: shell.workspace.to_owned(),
        env,
        timeout,
        grace: Duration::from_secs(2),
        fence: fence.map(std::sync::Arc::new),
        limits: None,
    };
    let mut stdout = String::new();
    let out = process::run(&spec, shell.cancel, |line| {
        stdout.push_str(line);
        stdout.push('\n');
    })
    .await;
    let out = match (out, &spec.fence) {
        (Ok(out), Some(_)) if out.proof.as_ref().is_none_or(|p| !p.held()) => {
            let why = match &out.proof {
                None => format!(
                    "the sandbox did not start it: {}",
                    last_lines(&out.stderr, 5)
                ),
                Some(p) => format!("the sandbox did not hold: {}", p.breaches().join("; ")),
            };
            Err(std::io::Error::other(why))
        }
        (out, _) => out,
    };
    (stdout, out)
}

/// Runs one `setup` command in the workspace; the error names the command and its output.
pub(super) async fn run_setup(
    shell: &Shell<'_>,
    command: &str,
    timeout: Duration,
) -> Result<(), StepError> {
    let (stdout, out) = run_shell(shell, command, timeout).await;
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
