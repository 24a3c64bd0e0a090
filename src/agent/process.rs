//! Child processes that never outlive the run.
//!
//! Every command aptitude starts — the agent, `setup` commands, `verify` commands — goes
//! through [`run`]:
//! - it gets its own process group, a [`Jail`] (a cgroup, or subreaper tracking; see
//!   [`contain`]) and an environment marker `APTITUDE_RUN_ID=<id>` that its descendants
//!   inherit;
//! - stdout is read line by line as it comes (the agent's events) and stderr is kept (its
//!   last [`STDERR_TAIL`] bytes);
//! - on timeout or cancellation (Ctrl-C): SIGTERM to the group, a grace period, SIGKILL;
//! - after the command ends, however it ends — and when its future is dropped — every
//!   process left is killed: the group, the jail (which an agent can not leave), then every
//!   process still carrying the marker (`/proc/<pid>/environ`, Linux). Claude Code runs its
//!   Bash tool's commands in a new session, out of its process group, so a group kill alone
//!   would leave them running; `setsid env -i` sheds the marker too, but not the jail.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio_util::sync::CancellationToken;

use super::contain::{self, Jail, new_run_id};

/// The environment variable that marks every process of one command.
pub const RUN_ID_VAR: &str = "APTITUDE_RUN_ID";

/// How much of stderr is kept, in bytes (the end of it).
pub const STDERR_TAIL: usize = 16 * 1024;

/// The longest stdout line handed on, in bytes: a longer one is cut there (the rest of it
/// is read and dropped), so that one line can not take aptitude's memory.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// The most a command may write to stdout, in bytes: past it the command is stopped
/// ([`Ending::Limit`]). An agent's event stream is a few MB; this bounds what aptitude
/// holds of one run whatever the agent writes.
pub const MAX_STDOUT_BYTES: u64 = 256 * 1024 * 1024;

/// What to run.
#[derive(Debug, Clone)]
pub struct Spec {
    /// The program.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Working directory.
    pub cwd: PathBuf,
    /// Variables added to (or replacing those of) aptitude's own environment.
    pub env: Vec<(String, String)>,
    /// Wall-time limit.
    pub timeout: Duration,
    /// Time between SIGTERM and SIGKILL.
    pub grace: Duration,
    /// The sandbox the command runs in; `None`: unsandboxed, with aptitude's environment
    /// plus [`Spec::env`]. When set, `env` is the command's whole environment and the
    /// sandbox's helper reports its proof on the first stdout line ([`Output::proof`]).
    pub fence: Option<std::sync::Arc<crate::sandbox::Fence>>,
    /// The run's limits and the directories it writes; `None`: unlimited (`setup` and
    /// `verify` commands, version checks). See [`super::limits`].
    pub limits: Option<super::limits::Watched>,
}

/// How the command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// It exited on its own (with a code, or by a signal it got from elsewhere).
    Exited,
    /// It ran past its timeout and was stopped.
    TimedOut,
    /// The run was cancelled (Ctrl-C / SIGTERM) and it was stopped.
    Cancelled,
    /// It went over one of its limits and was stopped ([`Output::limit`] says which).
    Limit,
    /// It was stopped on purpose at the agent's first decision (its first tool call; a
    /// routing suite's `stop: first_call`): set by the executor, never an error.
    Decided,
}

/// What a finished command left.
#[derive(Debug, Clone)]
pub struct Output {
    /// How it ended.
    pub ending: Ending,
    /// Its exit code, when it exited normally.
    pub code: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<i32>,
    /// The end of its stderr (at most [`STDERR_TAIL`] bytes, lossily decoded).
    pub stderr: String,
    /// Wall time in ms.
    pub duration_ms: u64,
    /// What the sandbox proved before the command started (sandboxed commands only; `None`
    /// when the sandbox did not get that far).
    pub proof: Option<crate::sandbox::Proof>,
    /// The limit it went over ([`Ending::Limit`]): `stdout: over 256 MiB written`.
    pub limit: Option<String>,
    /// Stdout lines cut at [`MAX_LINE_BYTES`].
    pub cut_lines: u32,
    /// How the run's limits were enforced ([`super::limits::BY_CGROUP`],
    /// [`super::limits::BY_WATCH`]); `None` for a command without limits.
    pub limits_by: Option<&'static str>,
}

impl Output {
    /// A command that exited on its own with code 0 after 1 ms, writing nothing to
    /// stderr (for tests of what is made of a run's output).
    #[cfg(test)]
    pub(crate) fn exited_ok() -> Output {
        Output {
            ending: Ending::Exited,
            code: Some(0),
            signal: None,
            stderr: String::new(),
            duration_ms: 1,
            proof: None,
            limit: None,
            cut_lines: 0,
            limits_by: None,
        }
    }

    /// Whether the command exited on its own with code 0.
    pub fn success(&self) -> bool {
        self.ending == Ending::Exited && self.code == Some(0)
    }

    /// `exited with code 3`, `killed by signal 9`, `timed out after 30s`.
    pub fn describe(&self, timeout: Duration) -> String {
        match (self.ending, self.code, self.signal) {
            (Ending::TimedOut, _, _) => {
                format!("timed out after {}", humantime::format_duration(timeout))
            }
            (Ending::Cancelled, _, _) => "interrupted".into(),
            (Ending::Limit, _, _) => "was stopped at a limit".into(),
            (Ending::Decided, _, _) => "was stopped at its first decision".into(),
            (Ending::Exited, Some(code), _) => format!("exited with code {code}"),
            (Ending::Exited, None, Some(sig)) => format!("was killed by signal {sig}"),
            (Ending::Exited, None, None) => "ended".into(),
        }
    }
}

/// Runs a command to its end, calling `on_line` with each stdout line (without the line
/// break) as it arrives.
///
/// Every process the command started is killed before this returns — and also when the
/// returned future is dropped before it completes (a deadline or an abort cut it short).
///
/// # Errors
/// When the program can not be started (not found, not executable).
pub async fn run(
    spec: &Spec,
    cancel: &CancellationToken,
    on_line: impl FnMut(&str) + Send,
) -> std::io::Result<Output> {
    run_fed(spec, cancel, None, on_line).await
}

/// [`run`], with the command's stdin fed from `input` when given: each message is written
/// as it comes, and stdin is closed once every sender is dropped (a stream-json agent
/// ends its session then). Without `input`, stdin is `/dev/null`.
///
/// # Errors
/// When the program can not be started (not found, not executable).
pub async fn run_fed(
    spec: &Spec,
    cancel: &CancellationToken,
    input: Option<tokio::sync::mpsc::UnboundedReceiver<Vec<u8>>>,
    mut on_line: impl FnMut(&str) + Send,
) -> std::io::Result<Output> {
    let started = Instant::now();
    let (mut child, mut guard, stdout) = spawn(spec, input.is_some())?;
    let pgid = guard.pgid;
    let stderr_task = keep_stderr_tail(child.stderr.take());
    let _feeding = feed_stdin(child.stdin.take(), input);
    let mut proof = None;
    // A sandboxed command's first line is the sandbox's proof, not its output.
    let mut first = spec.fence.is_some();
    let mut lines = |line: &str| {
        if std::mem::take(&mut first)
            && let Some(p) = spec.fence.as_ref().and_then(|f| f.proof(line))
        {
            proof = Some(p);
            return;
        }
        on_line(line);
    };
    let mut reader = LineReader::new(stdout);
    let (mut ending, status, mut limit) = read_stdout(
        &mut reader,
        &mut child,
        &mut guard,
        spec,
        cancel,
        &mut lines,
    )
    .await;
    if ending == Ending::Limit && limit.is_none() {
        limit = Some(format!(
            "output: the command wrote over {} MiB to stdout",
            MAX_STDOUT_BYTES / (1024 * 1024)
        ));
    }
    let status = match (status, ending) {
        (Some(status), _) => status,
        (None, Ending::Exited) => {
            // Stdout is closed; the process may still be finishing. Bound the wait by what
            // is left of the timeout.
            let left = spec.timeout.saturating_sub(started.elapsed());
            tokio::select! {
                status = child.wait() => status.ok(),
                () = tokio::time::sleep(left) => {
                    ending = Ending::TimedOut;
                    terminate(&mut child, pgid, spec.grace).await;
                    child.wait().await.ok()
                }
                () = cancel.cancelled() => {
                    ending = Ending::Cancelled;
                    terminate(&mut child, pgid, spec.grace).await;
                    child.wait().await.ok()
                }
            }
        }
        (None, _) => child.wait().await.ok(),
    };
    // A limit the cgroup held (an OOM kill, a refused fork) ends the run as a limit too.
    if ending != Ending::Limit
        && ending != Ending::Cancelled
        && let Some(why) = guard.jail.limit_hit()
    {
        ending = Ending::Limit;
        limit = Some(why);
    }
    // Background processes the command left behind do not outlive it.
    guard.finish();
    let stderr = tokio::time::timeout(Duration::from_secs(2), stderr_task)
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or_default();
    // Inside the sandbox, a signal that ended the command reaches aptitude only as the
    // helper's word.
    let (signalled, stderr) = match &spec.fence {
        Some(fence) => fence.ending_signal(&stderr),
        None => (None, stderr),
    };
    use std::os::unix::process::ExitStatusExt;
    tracing::debug!(
        pgid,
        ending = ?ending,
        code = status.and_then(|s| s.code()),
        signal = status.and_then(|s| s.signal()),
        elapsed_ms = started.elapsed().as_millis() as u64,
        "process ended"
    );
    Ok(Output {
        ending,
        code: status
            .and_then(|s| s.code())
            .filter(|_| signalled.is_none()),
        signal: signalled.or_else(|| status.and_then(|s| s.signal())),
        stderr,
        duration_ms: started.elapsed().as_millis() as u64,
        proof,
        limit,
        cut_lines: reader.cut_lines,
        limits_by: guard.limits_by,
    })
}

/// Starts `spec`'s program in its own process group and jail, marked with a fresh run id;
/// the guard kills everything it started when dropped.
///
/// # Errors
/// When the program can not be started.
fn spawn(
    spec: &Spec,
    piped_stdin: bool,
) -> std::io::Result<(tokio::process::Child, Guard, tokio::net::UnixStream)> {
    let run_id = new_run_id();
    let mut guard = Guard {
        jail: Jail::new(),
        pgid: None,
        run_id: run_id.clone(),
        limits_by: None,
    };
    if let Some(watched) = &spec.limits {
        guard.limits_by = Some(guard.jail.limit(&watched.limits));
    }
    // A missing program must be a start error, not the exit code of the shell or sandbox
    // that starts it.
    let (program, args, env) = match &spec.fence {
        Some(fence) => {
            let program = resolve(&spec.program, &spec.env)?;
            fence.command(&program, &spec.args)
        }
        None if guard.jail.wraps() => (
            resolve(&spec.program, &spec.env)?,
            spec.args.clone(),
            spec.env.clone(),
        ),
        None => (spec.program.clone(), spec.args.clone(), spec.env.clone()),
    };
    let (program, args) = if guard.jail.wraps() {
        guard.jail.wrap(&program, &args)
    } else {
        (program, args)
    };
    // Stdout is one end of a socket pair, not a pipe: a pipe can be opened again through
    // `/proc/<pid>/fd/1` by any process of the same user (the agent's own tools), a socket
    // can not (ENXIO), so nothing but the agent writes its stream.
    let (ours, theirs) = nix::sys::socket::socketpair(
        nix::sys::socket::AddressFamily::Unix,
        nix::sys::socket::SockType::Stream,
        None,
        nix::sys::socket::SockFlag::SOCK_CLOEXEC,
    )
    .map_err(std::io::Error::from)?;
    let mut cmd = tokio::process::Command::new(&program);
    if spec.fence.is_some() {
        // The sandbox gets nothing of aptitude's environment: its own pid 1 keeps it.
        cmd.env_clear();
    }
    cmd.args(&args)
        .current_dir(&spec.cwd)
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .env(RUN_ID_VAR, &run_id)
        .stdin(if piped_stdin {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::from(theirs))
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let child = cmd.spawn()?;
    // The child's end was dup'ed into it and is closed here with `cmd`.
    drop(cmd);
    let ours = std::os::unix::net::UnixStream::from(ours);
    ours.set_nonblocking(true)?;
    let _ = ours.shutdown(std::net::Shutdown::Write);
    let stdout = tokio::net::UnixStream::from_std(ours)?;
    let pgid = child.id().and_then(|id| i32::try_from(id).ok());
    tracing::debug!(
        program = %spec.program.display(),
        cwd = %spec.cwd.display(),
        pgid,
        run_id = %run_id,
        jailed = guard.jail.wraps(),
        "process started"
    );
    guard.pgid = pgid;
    if let Some(pid) = pgid {
        guard.jail.started(pid);
    }
    Ok((child, guard, stdout))
}

/// A task that writes each message of `input` to `stdin` as it comes and closes stdin when
/// the senders are gone (or the command stops reading); aborted when dropped, so it never
/// outlives the run.
fn feed_stdin(
    stdin: Option<tokio::process::ChildStdin>,
    input: Option<tokio::sync::mpsc::UnboundedReceiver<Vec<u8>>>,
) -> Option<AbortOnDrop> {
    use tokio::io::AsyncWriteExt;
    let (mut stdin, mut input) = (stdin?, input?);
    Some(AbortOnDrop(tokio::spawn(async move {
        while let Some(bytes) = input.recv().await {
            if stdin.write_all(&bytes).await.is_err() || stdin.flush().await.is_err() {
                break;
            }
        }
    })))
}

/// A task aborted when this is dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A task that reads stderr to its end and keeps its last [`STDERR_TAIL`] bytes, never
/// starting inside a secret.
fn keep_stderr_tail(
    stderr: Option<tokio::process::ChildStderr>,
) -> tokio::task::JoinHandle<String> {
    tokio::spawn(async move {
        let mut tail: Vec<u8> = Vec::new();
        let mut cut = false;
        if let Some(mut err) = stderr {
            let mut buf = [0u8; 8192];
            while let Ok(n) = err.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                tail.extend_from_slice(&buf[..n]);
                if tail.len() > 2 * STDERR_TAIL {
                    tail.drain(..tail.len() - STDERR_TAIL);
                    cut = true;
                }
            }
        }
        if tail.len() > STDERR_TAIL {
            tail.drain(..tail.len() - STDERR_TAIL);
            cut = true;
        }
        let text = String::from_utf8_lossy(&tail);
        // A tail may start inside a secret: its second half would match no redaction.
        if cut {
            crate::shared::cut::after_cut_start(&text)
        } else {
            text.into_owned()
        }
    })
}

/// Reads stdout line by line until it closes, the deadline passes or `cancel` fires; a
/// command stopped early is terminated and everything it left killed before what it wrote
/// is drained. Returns how it ended and its exit status when it was seen.
async fn read_stdout(
    reader: &mut LineReader,
    child: &mut tokio::process::Child,
    guard: &mut Guard,
    spec: &Spec,
    cancel: &CancellationToken,
    on_line: &mut (impl FnMut(&str) + Send),
) -> (
    Ending,
    Option<Option<std::process::ExitStatus>>,
    Option<String>,
) {
    let mut ending = Ending::Exited;
    let mut status = None;
    let mut limit = None;
    let sampling = guard.jail.wants_samples();
    let mut samples = tokio::time::interval(contain::SAMPLE_EVERY);
    let mut watch = spec.limits.clone().map(super::limits::Watch::new);
    let mut looks = tokio::time::interval(super::limits::WATCH_EVERY);
    let deadline = tokio::time::sleep(spec.timeout);
    tokio::pin!(deadline);
    loop {
        tokio::select! {
            read = reader.next() => {
                match read {
                    Ok(false) | Err(_) => break,
                    Ok(true) => {
                        reader.emit(on_line);
                        if reader.total > MAX_STDOUT_BYTES {
                            ending = Ending::Limit;
                            break;
                        }
                    }
                }
            }
            exited = child.wait(), if status.is_none() => {
                // The command is gone; what it left behind may hold stdout open.
                status = Some(exited.ok());
                guard.kill_leftovers();
            }
            _ = samples.tick(), if sampling => guard.jail.sample(),
            _ = looks.tick(), if watch.is_some() && status.is_none() => {
                let pids = guard
                    .pgid
                    .map(|root| guard.jail.processes(root))
                    .unwrap_or_default();
                let crossed = guard
                    .jail
                    .limit_hit()
                    .or_else(|| watch.as_mut().and_then(|w| w.look(&pids)));
                if let Some(why) = crossed {
                    limit = Some(why);
                    ending = Ending::Limit;
                    break;
                }
            }
            () = &mut deadline => { ending = Ending::TimedOut; break; }
            () = cancel.cancelled() => { ending = Ending::Cancelled; break; }
        }
    }
    if ending != Ending::Exited {
        terminate(child, guard.pgid, spec.grace).await;
        // Escaped processes may hold stdout open: all of them go before the drain.
        guard.finish();
    }
    // Whatever the command wrote before it died is still part of its output (up to the
    // limit).
    let drain = async {
        while reader.total <= MAX_STDOUT_BYTES {
            match reader.next().await {
                Ok(false) | Err(_) => break,
                Ok(true) => reader.emit(on_line),
            }
        }
        reader.emit(on_line);
    };
    let _ = tokio::time::timeout(Duration::from_secs(2), drain).await;
    // What the run's last moments wrote counts too.
    if ending == Ending::Exited
        && let Some(why) = watch.as_ref().and_then(super::limits::Watch::disk)
    {
        ending = Ending::Limit;
        limit = Some(why);
    }
    (ending, status, limit)
}

/// Kills what is left of one command: its process group, its jail, its marked processes.
/// Also on drop, so that a command whose future is dropped mid-way leaves nothing behind.
struct Guard {
    jail: Jail,
    pgid: Option<i32>,
    run_id: String,
    /// How the command's limits are enforced, when it has some.
    limits_by: Option<&'static str>,
}

impl Guard {
    /// Kills the group and the jail (cheap; may be called more than once).
    fn kill_leftovers(&mut self) {
        if let Some(pgid) = self.pgid {
            let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
        }
        self.jail.kill_all();
    }

    /// The last layer: the marker sweep over every process of the machine (costs a scan of
    /// `/proc`, so once, when everything else was killed).
    fn finish(&mut self) {
        self.kill_leftovers();
        if !self.run_id.is_empty() {
            sweep(&self.run_id);
            self.run_id.clear();
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.finish();
    }
}

/// The file `program` names: itself when it holds a `/`, else the first executable of that
/// name on `PATH` (the command's own `PATH` when its environment sets one).
fn resolve(program: &Path, env: &[(String, String)]) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    let not_found = || {
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("{}: no such executable", program.display()),
        )
    };
    if program.as_os_str().as_encoded_bytes().contains(&b'/') {
        return if executable(program) {
            Ok(program.to_owned())
        } else {
            Err(not_found())
        };
    }
    let path = env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| OsString::from(v))
        .or_else(|| std::env::var_os("PATH"))
        .unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| executable(p))
        .ok_or_else(not_found)
}

/// Stdout read line by line, each line bounded by [`MAX_LINE_BYTES`].
struct LineReader {
    inner: BufReader<tokio::net::UnixStream>,
    /// The line being read (at most [`MAX_LINE_BYTES`] of it).
    line: Vec<u8>,
    /// Whether the line being read went over the bound.
    cut: bool,
    /// Lines cut so far.
    cut_lines: u32,
    /// Bytes read in all.
    total: u64,
}

impl LineReader {
    fn new(stdout: tokio::net::UnixStream) -> Self {
        LineReader {
            inner: BufReader::with_capacity(64 * 1024, stdout),
            line: Vec::new(),
            cut: false,
            cut_lines: 0,
            total: 0,
        }
    }

    /// Reads up to the end of the next line: `true` when one is complete, `false` at the
    /// end of the stream (a last line without its break is left for [`LineReader::emit`]).
    /// Cancel-safe: what was read is kept for the next call.
    async fn next(&mut self) -> std::io::Result<bool> {
        loop {
            let available = self.inner.fill_buf().await?;
            if available.is_empty() {
                return Ok(false);
            }
            let (take, done) = match memchr::memchr(b'\n', available) {
                Some(i) => (i + 1, true),
                None => (available.len(), false),
            };
            let room = MAX_LINE_BYTES.saturating_sub(self.line.len());
            if take > room {
                self.cut = true;
            }
            self.line.extend_from_slice(&available[..take.min(room)]);
            self.inner.consume(take);
            self.total = self.total.saturating_add(take as u64);
            if done {
                return Ok(true);
            }
        }
    }

    /// Hands the line read on (without its break; empty lines are skipped) and starts the
    /// next.
    fn emit(&mut self, on_line: &mut impl FnMut(&str)) {
        if std::mem::take(&mut self.cut) {
            self.cut_lines = self.cut_lines.saturating_add(1);
        }
        let text = String::from_utf8_lossy(&self.line);
        let line = text.trim_end_matches(['\n', '\r']);
        if !line.is_empty() {
            on_line(line);
        }
        self.line.clear();
    }
}

/// SIGTERM to the group, up to `grace` for it to exit, then SIGKILL.
async fn terminate(child: &mut tokio::process::Child, pgid: Option<i32>, grace: Duration) {
    let Some(pgid) = pgid else {
        let _ = child.start_kill();
        return;
    };
    let group = Pid::from_raw(pgid);
    let _ = killpg(group, Signal::SIGTERM);
    if tokio::time::timeout(grace, child.wait()).await.is_err() {
        let _ = killpg(group, Signal::SIGKILL);
    }
}

/// Kills every process whose environment carries `APTITUDE_RUN_ID=<run_id>`; returns how
/// many were found. Repeats while new ones appear (a dying shell may fork once more).
pub fn sweep(run_id: &str) -> usize {
    let needle = format!("{RUN_ID_VAR}={run_id}\0").into_bytes();
    let me = std::process::id();
    let mut total = 0;
    for _ in 0..5 {
        let found = marked_processes(&needle, me);
        if found.is_empty() {
            break;
        }
        for pid in &found {
            let _ = kill(Pid::from_raw(*pid), Signal::SIGKILL);
        }
        total += found.len();
        std::thread::sleep(Duration::from_millis(20));
    }
    total
}

/// Kills every process of every command this aptitude process started, through their
/// jails and markers: the last resort of a forced exit. Returns how many were found.
pub fn kill_everything() -> usize {
    let jailed = contain::kill_everything();
    // Run ids start with aptitude's pid (see [`new_run_id`]).
    let needle = format!("{RUN_ID_VAR}={}-", std::process::id()).into_bytes();
    let marked = marked_processes(&needle, std::process::id());
    for pid in &marked {
        let _ = kill(Pid::from_raw(*pid), Signal::SIGKILL);
    }
    jailed + marked.len()
}

/// The pids (other than ours) whose environment contains `needle`.
fn marked_processes(needle: &[u8], me: u32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
        .filter(|pid| *pid as u32 != me)
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.windows(needle.len()).any(|w| w == needle))
        })
        .collect()
}

/// Whether any process carries this run's marker (for tests and diagnostics).
pub fn any_marked(run_id: &str) -> bool {
    let needle = format!("{RUN_ID_VAR}={run_id}\0").into_bytes();
    !marked_processes(&needle, std::process::id()).is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, timeout: Duration) -> Spec {
        Spec {
            program: "sh".into(),
            args: vec!["-c".into(), script.into()],
            cwd: std::env::temp_dir(),
            env: vec![],
            timeout,
            grace: Duration::from_millis(200),
            fence: None,
            limits: None,
        }
    }

    /// The agent's stream can not be opened again by its tools: stdout is a socket, and
    /// `/proc/<pid>/fd/1` of a socket does not open (a pipe's would).
    #[tokio::test]
    async fn stdout_can_not_be_reopened_through_proc() {
        let mut lines = Vec::new();
        let out = run(
            &sh(
                "echo forged > /proc/$$/fd/1 2>/dev/null && echo reopened || echo refused",
                Duration::from_secs(10),
            ),
            &CancellationToken::new(),
            |l| lines.push(l.to_owned()),
        )
        .await
        .unwrap();
        assert!(out.success());
        assert_eq!(lines, ["refused"]);
    }

    /// A line over the bound is cut there and counted; a stream over its bound stops the
    /// command: aptitude's memory stays bounded whatever the command writes.
    #[tokio::test]
    async fn long_lines_are_cut_and_a_flood_is_stopped() {
        let mut sizes = Vec::new();
        let out = run(
            &sh(
                "head -c 20000000 /dev/zero | tr '\\0' x; echo; echo after",
                Duration::from_secs(30),
            ),
            &CancellationToken::new(),
            |l| sizes.push(l.len()),
        )
        .await
        .unwrap();
        assert!(out.success());
        assert_eq!(sizes, [MAX_LINE_BYTES, 5]);
        assert_eq!(out.cut_lines, 1);
        let mut total = 0u64;
        let out = run(
            &sh(
                "yes 0123456789012345678901234567890123456789",
                Duration::from_secs(60),
            ),
            &CancellationToken::new(),
            |l| total += l.len() as u64 + 1,
        )
        .await
        .unwrap();
        assert_eq!(out.ending, Ending::Limit);
        assert!(out.limit.as_deref().unwrap().contains("over 256 MiB"));
        assert!(total <= MAX_STDOUT_BYTES + 2 * 1024 * 1024, "{total}");
    }

    #[tokio::test]
    async fn lines_exit_code_and_stderr() {
        let mut lines = Vec::new();
        let out = run(
            &sh(
                "echo one; echo two; echo oops >&2; exit 3",
                Duration::from_secs(10),
            ),
            &CancellationToken::new(),
            |l| lines.push(l.to_owned()),
        )
        .await
        .unwrap();
        assert_eq!(lines, ["one", "two"]);
        assert_eq!(out.code, Some(3));
        assert_eq!(out.stderr, "oops\n");
        assert_eq!(out.ending, Ending::Exited);
    }

    #[tokio::test]
    async fn timeout_kills_the_group_and_escaped_children() {
        let marker = format!("aptitude-test-{}", new_run_id());
        // `setsid` puts the sleeper in a new session, out of the group, as Claude Code's
        // Bash tool does; only the environment sweep can find it.
        let script = format!("echo started; setsid sh -c 'sleep 300 # {marker}' & sleep 300");
        let mut lines = Vec::new();
        let out = run(
            &sh(&script, Duration::from_millis(500)),
            &CancellationToken::new(),
            |l| lines.push(l.to_owned()),
        )
        .await
        .unwrap();
        assert_eq!(out.ending, Ending::TimedOut);
        assert_eq!(lines, ["started"], "output before the timeout is kept");
        let survivors = std::process::Command::new("pgrep")
            .args(["-f", &marker])
            .output()
            .unwrap();
        assert!(
            survivors.stdout.is_empty(),
            "orphans: {}",
            String::from_utf8_lossy(&survivors.stdout)
        );
    }

    /// Starts two daemons that leave the process group, the session and the environment
    /// marker (`setsid env -i`, `env -u APTITUDE_RUN_ID`), prints their pids, then runs
    /// `then`.
    fn escaping_daemons(dir: &Path, then: &str) -> Spec {
        let script = format!(
            "setsid env -i sh -c 'echo $$ > d1; exec sleep 3001' </dev/null >/dev/null 2>&1 &
             env -u {RUN_ID_VAR} setsid sh -c 'echo $$ > d2; exec sleep 3002' </dev/null >/dev/null 2>&1 &
             until [ -s d1 ] && [ -s d2 ]; do sleep 0.01; done; cat d1 d2; {then}"
        );
        let mut spec = sh(&script, Duration::from_secs(60));
        spec.cwd = dir.to_owned();
        spec
    }

    /// Whether `pid` is a live process running `sleep` (not a zombie, not a reused pid).
    fn sleeping(pid: &str) -> bool {
        std::fs::read(format!("/proc/{pid}/cmdline"))
            .is_ok_and(|c| String::from_utf8_lossy(&c).starts_with("sleep"))
    }

    #[tokio::test]
    async fn daemons_that_shed_group_session_and_marker_die_with_the_command() {
        let dir = tempfile::tempdir().unwrap();
        let mut pids = Vec::new();
        let out = run(
            &escaping_daemons(dir.path(), "exit 0"),
            &CancellationToken::new(),
            |l| pids.push(l.to_owned()),
        )
        .await
        .unwrap();
        assert!(out.success(), "{out:?}");
        assert_eq!(pids.len(), 2, "{pids:?}");
        let alive: Vec<&String> = pids.iter().filter(|p| sleeping(p)).collect();
        assert!(
            alive.is_empty(),
            "{alive:?} survived ({})",
            contain::mode().name()
        );
    }

    #[tokio::test]
    async fn daemons_die_on_timeout_and_when_the_future_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let mut spec = escaping_daemons(dir.path(), "sleep 300");
        spec.timeout = Duration::from_millis(1500);
        let mut pids = Vec::new();
        let out = run(&spec, &CancellationToken::new(), |l| {
            pids.push(l.to_owned())
        })
        .await
        .unwrap();
        assert_eq!(out.ending, Ending::TimedOut);
        assert_eq!(pids.len(), 2, "{pids:?}");
        assert!(!pids.iter().any(|p| sleeping(p)), "{pids:?}");

        // A deadline above the command drops its future: the jail still kills everything.
        let dir = tempfile::tempdir().unwrap();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let mut tx = Some(tx);
        let spec = escaping_daemons(dir.path(), "sleep 300");
        let never = CancellationToken::new();
        let cut = tokio::select! {
            _ = run(&spec, &never, |_| {
                if let Some(tx) = tx.take() {
                    let _ = tx.send(());
                }
            }) => false,
            _ = async { let _ = rx.await; } => true,
        };
        assert!(cut);
        for name in ["d1", "d2"] {
            let pid = std::fs::read_to_string(dir.path().join(name)).unwrap();
            assert!(!sleeping(pid.trim()), "{name} {pid} survived the drop");
        }
    }

    #[tokio::test]
    async fn missing_program_is_an_error_in_every_mode() {
        let mut spec = sh("true", Duration::from_secs(1));
        spec.program = "no-such-agent-on-path".into();
        let err = run(&spec, &CancellationToken::new(), |_| {})
            .await
            .unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
    }

    #[tokio::test]
    async fn cancellation_stops_the_command() {
        let cancel = CancellationToken::new();
        let c = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            c.cancel();
        });
        let out = run(&sh("sleep 300", Duration::from_secs(60)), &cancel, |_| {})
            .await
            .unwrap();
        assert_eq!(out.ending, Ending::Cancelled);
        assert!(out.duration_ms < 30_000);
    }

    #[tokio::test]
    async fn missing_program_is_an_error() {
        let mut spec = sh("true", Duration::from_secs(1));
        spec.program = "/nonexistent/agent".into();
        assert!(run(&spec, &CancellationToken::new(), |_| {}).await.is_err());
    }
}
