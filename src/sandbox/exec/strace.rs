//! The tracer: Debian's `strace` (6.1 and later) started around bubblewrap, and its output
//! read into a [`Trace`].
//!
//! `strace -f -q -ttt --pidns-translation --seccomp-bpf -s 4096 -e signal=none
//! -e trace=execve,execveat,clone,clone3,fork,vfork -o FILE bwrap …` (as root, below
//! `unshare --pid --fork --mount-proc --kill-child`: [`Tracer`]) writes one line per
//! event, prefixed with the pid in strace's namespace and a Unix time in seconds:
//!
//! ```text
//! 17762 1795855820.124201 execve("/bin/bash", ["/bin/bash", "-c", "ls"], 0x7ff… /* 35 vars */) = 0
//! 17762 1795855820.125922 clone(child_stack=NULL, flags=…) = 3 /* 17763 in strace's PID NS */
//! 17764 1795855820.158491 +++ exited with 3 +++
//! 17766 1795855820.191000 +++ killed by SIGKILL +++
//! 17770 1795855820.200000 execve("/bin/ls", ["ls"], 0x… /* 3 vars */ <unfinished ...>
//! 17770 1795855820.200100 <... execve resumed>) = 0
//! ```
//!
//! `--pidns-translation` adds the pid in strace's namespace of a fork's child, which the
//! forking process sees in the sandbox's namespace. `-q` keeps the exit lines (`-qq` would
//! drop them).
//! `--seccomp-bpf` stops only at the traced calls, so a run pays for its forks and execs,
//! not for every system call; it also makes an `execve` fail when the tracer is gone.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::{Ended, Exec, Trace};

/// The longest argv string strace prints whole (bytes); longer ones are cut with `...`.
pub const MAX_STRING: usize = 16384;

/// strace's arguments before the traced program, writing to `out` (a file outside the
/// sandbox).
pub fn arguments(out: &Path) -> Vec<OsString> {
    let mut args: Vec<OsString> = [
        "-f",
        "-q",
        "-ttt",
        "--pidns-translation",
        "--seccomp-bpf",
        "-e",
        "signal=none",
        "-e",
        "trace=execve,execveat,clone,clone3,fork,vfork",
    ]
    .into_iter()
    .map(OsString::from)
    .collect();
    args.push("-s".into());
    args.push(MAX_STRING.to_string().into());
    args.push("-o".into());
    args.push(out.into());
    args.push("--".into());
    args
}

/// Why a run has no exec record: no tracer here.
#[derive(Debug, Clone, thiserror::Error)]
pub enum TracerError {
    /// macOS: no tracer aptitude uses.
    #[error("macOS has no tracer aptitude uses (strace is Linux's)")]
    Platform,
    /// strace is not on `PATH`.
    #[error("strace is not installed (`sudo apt-get install strace`)")]
    Missing,
    /// strace could not be started (the OS's message).
    #[error("strace could not start: {0}")]
    Start(String),
    /// strace ran but could not trace its child (strace's own message).
    #[error("strace could not trace a child here (ptrace refused?): {0}")]
    Refused(String),
    /// Not traced on purpose: nothing reads this command's record (a grading call, a setup
    /// or `verify` command: [`crate::sandbox::Policy::exec_record`]).
    #[error("not traced: nothing reads this command's exec record")]
    NotWanted,
}

/// How the tracer starts: Debian's strace, in a PID namespace of its own where the host
/// allows one.
///
/// `--pidns-translation` finds a fork's child by reading the `status` file of every task
/// under `/proc` (strace 6.x, `src/pidns.c`): from aptitude's namespace that is every
/// thread on the host, at each fork and thread start of the run. In a namespace of its
/// own, with its own `/proc`, it is the run's own tasks. That namespace is the sandbox's
/// parent: nothing inside sees the tracer, as before; and when strace (its pid 1) ends,
/// the kernel kills what is left in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tracer {
    /// strace.
    pub strace: PathBuf,
    /// util-linux's `unshare`, giving strace its own PID namespace and `/proc`
    /// ([`OWN_NAMESPACE`]), when it can here (it needs `CAP_SYS_ADMIN`, as root); `None`:
    /// strace runs in aptitude's namespace.
    pub unshare: Option<PathBuf>,
}

/// `unshare`'s arguments before strace: a new PID and mount namespace with strace as its
/// pid 1 and a `/proc` of its own, strace killed if `unshare` dies (util-linux 2.32+).
pub const OWN_NAMESPACE: [&str; 5] = ["--pid", "--fork", "--mount-proc", "--kill-child", "--"];

impl Tracer {
    /// Finds strace on `PATH` and checks that it can trace a child here, in a namespace of
    /// its own when `unshare` can make one, else in aptitude's.
    ///
    /// # Errors
    /// [`TracerError::Missing`] without strace; [`TracerError::Start`] or
    /// [`TracerError::Refused`] when it can not trace a child even in aptitude's namespace.
    pub fn find() -> Result<Tracer, TracerError> {
        let strace = crate::shared::files::find_on_path("strace").ok_or(TracerError::Missing)?;
        if let Some(unshare) = crate::shared::files::find_on_path("unshare") {
            let tracer = Tracer {
                strace: strace.clone(),
                unshare: Some(unshare),
            };
            if tracer.probe().is_ok() {
                return Ok(tracer);
            }
        }
        let tracer = Tracer {
            strace,
            unshare: None,
        };
        tracer.probe().map(|()| tracer)
    }

    /// The program to start and its arguments before the traced program, strace writing
    /// to `out` (a file outside the sandbox).
    pub fn command(&self, out: &Path) -> (PathBuf, Vec<OsString>) {
        self.wrap(arguments(out))
    }

    fn wrap(&self, strace_args: Vec<OsString>) -> (PathBuf, Vec<OsString>) {
        match &self.unshare {
            Some(unshare) => {
                let mut args: Vec<OsString> = OWN_NAMESPACE.iter().map(OsString::from).collect();
                args.push(self.strace.clone().into());
                args.extend(strace_args);
                (unshare.clone(), args)
            }
            None => (self.strace.clone(), strace_args),
        }
    }

    /// Checks that the tracer, started as [`Tracer::command`] starts it, traces a child
    /// here: `strace … /bin/true` must run it.
    ///
    /// # Errors
    /// [`TracerError::Start`] or [`TracerError::Refused`], with strace's (or `unshare`'s)
    /// own message when it gave one.
    pub fn probe(&self) -> Result<(), TracerError> {
        let args = [
            "-f",
            "-q",
            "--seccomp-bpf",
            "-e",
            "trace=execve",
            "-o",
            "/dev/null",
            "--",
        ];
        let (program, mut args) = self.wrap(args.iter().map(OsString::from).collect());
        args.push(
            crate::shared::files::find_on_path("true")
                .unwrap_or_else(|| "/bin/true".into())
                .into(),
        );
        let out = std::process::Command::new(program)
            .args(args)
            .env_clear()
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| TracerError::Start(e.to_string()))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(TracerError::Refused(
                String::from_utf8_lossy(&out.stderr).trim().to_owned(),
            ))
        }
    }
}

/// `stderr` without strace's notes on the processes it reaped as its namespace's pid 1
/// without tracing them (`/usr/bin/strace: Exit of unknown pid 6 ignored`, strace 6.x):
/// bubblewrap's own processes, re-parented to it when their parent ended first. Every
/// other line is kept as it was.
pub fn without_reaper_notes(stderr: &str) -> std::borrow::Cow<'_, str> {
    let is_note = |line: &str| {
        line.split_once(": Exit of unknown pid ")
            .is_some_and(|(program, rest)| {
                program.ends_with("strace")
                    && rest.strip_suffix(" ignored").is_some_and(|pid| {
                        !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit())
                    })
            })
    };
    if !stderr.lines().any(is_note) {
        return stderr.into();
    }
    let mut kept = String::with_capacity(stderr.len());
    for line in stderr.split_inclusive('\n') {
        if !is_note(line.trim_end_matches(['\n', '\r'])) {
            kept.push_str(line);
        }
    }
    kept.into()
}

/// Reads strace's output into a trace. Lines it does not know are skipped: the record
/// is then short of them, which the checks treat as "not seen", never as "seen".
pub fn parse(text: &str) -> Trace {
    let mut trace = Trace::default();
    // An exec or fork split by another process's event: its first half, by pid.
    let mut pending: std::collections::HashMap<u32, String> = std::collections::HashMap::new();
    let mut first: Option<f64> = None;
    // pid → index of its last exec, for its end.
    let mut last_exec: std::collections::HashMap<u32, usize> = std::collections::HashMap::new();
    for line in text.lines() {
        let Some((pid, time, rest)) = split_prefix(line) else {
            continue;
        };
        let whole = if let Some(head) = rest.strip_suffix(" <unfinished ...>") {
            pending.insert(pid, head.to_owned());
            continue;
        } else if let Some(tail) = rest.strip_prefix("<... ") {
            let Some(head) = pending.remove(&pid) else {
                continue;
            };
            // `<... execve resumed>) = 0`: the head, then what follows `resumed>`.
            match tail.split_once("resumed>") {
                Some((_, after)) => format!("{head}{after}"),
                None => continue,
            }
        } else {
            rest.to_owned()
        };
        if let Some(end) = whole
            .strip_prefix("+++ ")
            .and_then(|r| r.strip_suffix(" +++"))
        {
            if let (Some(ended), Some(&i)) = (parse_end(end), last_exec.get(&pid)) {
                trace.execs[i].ended = Some(ended);
            }
            continue;
        }
        if whole.starts_with("execve(") || whole.starts_with("execveat(") {
            if let Some((path, argv)) = parse_exec(&whole) {
                // The tool fence's hand-off: a wrapped shell becoming the real one, same
                // process, same argv. The record keeps the shell as the agent ran it.
                if path.starts_with(crate::sandbox::toolfence::SHELL_DIR)
                    && last_exec
                        .get(&pid)
                        .is_some_and(|&i| trace.execs[i].argv == argv)
                {
                    continue;
                }
                let start = *first.get_or_insert(time);
                let at_ms = ((time - start).max(0.0) * 1000.0) as u64;
                last_exec.insert(pid, trace.execs.len());
                trace.execs.push(Exec {
                    pid,
                    parent: trace.parents.get(&pid).copied(),
                    path,
                    argv,
                    at_ms,
                    ended: None,
                });
            }
            continue;
        }
        if ["clone(", "clone3(", "fork(", "vfork("]
            .iter()
            .any(|s| whole.starts_with(s))
            && let Some(child) = forked_child(&whole)
        {
            trace.parents.insert(child, pid);
            // A vfork's child can exec before its parent's `vfork` returns: the exec's line
            // came first (`7 vfork( <unfinished ...>`, `8 execve(…`, `7 <... vfork
            // resumed>) = 3 /* 8 in strace's PID NS */`).
            if let Some(&i) = last_exec.get(&child)
                && trace.execs[i].parent.is_none()
            {
                trace.execs[i].parent = Some(pid);
            }
        }
    }
    trace
}

/// `17762 1795855820.124201 rest` → (17762, 1795855820.124201, rest). strace pads a
/// short pid with spaces (`8643  1795…`).
fn split_prefix(line: &str) -> Option<(u32, f64, &str)> {
    let (pid, rest) = line.trim_start().split_once(' ')?;
    let (time, rest) = rest.trim_start().split_once(' ')?;
    Some((pid.parse().ok()?, time.parse().ok()?, rest))
}

/// `exited with 3` / `killed by SIGKILL (core dumped)`.
fn parse_end(text: &str) -> Option<Ended> {
    if let Some(code) = text.strip_prefix("exited with ") {
        return code.trim().parse().ok().map(Ended::Exited);
    }
    let signal = text.strip_prefix("killed by ")?;
    Some(Ended::Killed(
        signal
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_owned(),
    ))
}

/// The child's pid in strace's namespace of a fork that succeeded:
/// `= 3 /* 17763 in strace's PID NS */`, or `= 17763` when both namespaces are one.
fn forked_child(line: &str) -> Option<u32> {
    let (_, result) = line.rsplit_once(") = ")?;
    let mut words = result.split_whitespace();
    let own: u32 = words.next()?.parse().ok()?;
    match (words.next(), words.next()) {
        (Some("/*"), Some(host)) => host.parse().ok(),
        _ => Some(own),
    }
}

/// The path and argv of a successful exec line; `None` when it failed (`= -1 ENOENT …`).
fn parse_exec(line: &str) -> Option<(String, Vec<String>)> {
    let (_, result) = line.rsplit_once(") = ")?;
    if result.trim() != "0" {
        return None;
    }
    let open = line.find('(')? + 1;
    let mut at = &line[open..];
    if line.starts_with("execveat(") {
        // `execveat(AT_FDCWD, "path", …`: skip the directory.
        at = at.split_once(", ")?.1;
    }
    let (path, rest) = quoted(at)?;
    let rest = rest.strip_prefix(", [")?;
    let mut argv = Vec::new();
    let mut rest = rest;
    loop {
        if rest.starts_with(']') {
            break;
        }
        if let Some(more) = rest.strip_prefix("...") {
            argv.push("…".to_owned());
            rest = more;
            continue;
        }
        let (arg, after) = quoted(rest)?;
        argv.push(arg);
        rest = after.strip_prefix(", ").unwrap_or(after);
    }
    Some((path, argv))
}

/// One strace string at the start of `text`: its decoded value (a cut one ends with `…`)
/// and what follows it.
fn quoted(text: &str) -> Option<(String, &str)> {
    let body = text.strip_prefix('"')?;
    let bytes = body.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let mut rest = &body[i + 1..];
                let mut value = String::from_utf8_lossy(&out).into_owned();
                if let Some(more) = rest.strip_prefix("...") {
                    value.push('…');
                    rest = more;
                }
                return Some((value, rest));
            }
            b'\\' => {
                let (byte, used) = escape(&bytes[i + 1..])?;
                out.push(byte);
                i += 1 + used;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    None
}

/// One escape after its backslash: the byte and how many bytes it used.
fn escape(after: &[u8]) -> Option<(u8, usize)> {
    let first = *after.first()?;
    let simple = match first {
        b'n' => Some(b'\n'),
        b't' => Some(b'\t'),
        b'r' => Some(b'\r'),
        b'v' => Some(0x0b),
        b'f' => Some(0x0c),
        b'"' => Some(b'"'),
        b'\\' => Some(b'\\'),
        _ => None,
    };
    if let Some(byte) = simple {
        return Some((byte, 1));
    }
    if first == b'x' {
        let hex = std::str::from_utf8(after.get(1..3)?).ok()?;
        return Some((u8::from_str_radix(hex, 16).ok()?, 3));
    }
    // Octal, one to three digits.
    let digits = after
        .iter()
        .take(3)
        .take_while(|b| (b'0'..=b'7').contains(b))
        .count();
    if digits == 0 {
        return None;
    }
    let text = std::str::from_utf8(&after[..digits]).ok()?;
    Some((u8::from_str_radix(text, 8).ok()?, digits))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines as strace 6.1 wrote them tracing `bwrap … bash -c 'ls; sh -c "exit 3"'` as an
    /// unprivileged user on Debian 12.
    const RECORDED: &str = r#"19467 1795855967.589800 execve("/usr/bin/bwrap", ["bwrap", "--unshare-all", "--", "/bin/bash", "-c", "sh -c \"exit 3\"; (sleep 0.3 &) ; true"], 0x7ffc5ef7f010 /* 37 vars */) = 0
19467 1795855967.591100 clone(child_stack=NULL, flags=CLONE_NEWNS|CLONE_NEWCGROUP|CLONE_NEWUTS|CLONE_NEWIPC|CLONE_NEWUSER|CLONE_NEWPID|CLONE_NEWNET|SIGCHLD) = 19468
19468 1795855967.598606 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f6a3335c490) = 2 /* 19469 in strace's PID NS */
19469 1795855967.601379 execve("/bin/bash", ["/bin/bash", "-c", "sh -c \"exit 3\"; (sleep 0.3 &) ; true"], 0x7fff8e2627b0 /* 37 vars */) = 0
19469 1795855967.603163 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f477673fa10) = 3 /* 19470 in strace's PID NS */
19470 1795855967.605591 execve("/usr/bin/sh", ["sh", "-c", "exit 3"], 0x562f7c177a70 /* 37 vars */) = 0
19470 1795855967.606621 +++ exited with 3 +++
19469 1795855967.606650 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f477673fa10) = 4 /* 19471 in strace's PID NS */
19471 1795855967.615958 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f477673fa10) = 5 /* 19472 in strace's PID NS */
19471 1795855967.619322 +++ exited with 0 +++
19472 1795855967.620000 execve("/usr/local/bin/sleep", ["sleep", "0.3"], 0x562f7c17b1c0 /* 37 vars */) = -1 ENOENT (No such file or directory)
19472 1795855967.620462 execve("/usr/bin/sleep", ["sleep", "0.3"], 0x562f7c17b1c0 /* 37 vars */ <unfinished ...>
19469 1795855967.620500 +++ exited with 0 +++
19472 1795855967.621053 <... execve resumed>) = 0
19472 1795855967.921053 +++ killed by SIGKILL +++
19467 1795855967.921331 +++ exited with 0 +++
"#;

    /// strace 6.1 (default `-s`) tracing, as root from its own namespace, `bwrap
    /// --unshare-user --unshare-pid … /bin/sh -c "/bin/sh -c 'exit 3'; (/bin/sh -c 'exit 4';
    /// true); exit 5"` on Debian 12: dash vforks, and the child's exec is written before the
    /// vfork returns.
    const VFORK: &str = r#"5     1795941526.564185 execve("/usr/bin/bwrap", ["bwrap", "--unshare-user", "--unshare-pid", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "/bin/sh", "-c", "/bin/sh -c 'exit 3'; (/bin/sh -c"...], 0x7ffca84d1d48 /* 35 vars */) = 0
5     1795941526.634895 clone(child_stack=NULL, flags=CLONE_NEWNS|CLONE_NEWUSER|CLONE_NEWPID|SIGCHLD) = 6
6     1795941526.671422 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7fecc6df8090) = 2 /* 7 in strace's PID NS */
7     1795941526.673227 execve("/bin/sh", ["/bin/sh", "-c", "/bin/sh -c 'exit 3'; (/bin/sh -c"...], 0x7ffe8e05b6e0 /* 35 vars */) = 0
7     1795941526.674410 vfork( <unfinished ...>
8     1795941526.674530 execve("/bin/sh", ["/bin/sh", "-c", "exit 3"], 0x55b472ae3ce8 /* 35 vars */ <unfinished ...>
7     1795941526.674723 <... vfork resumed>) = 3 /* 8 in strace's PID NS */
8     1795941526.675252 <... execve resumed>) = 0
8     1795941526.676129 +++ exited with 3 +++
7     1795941526.676165 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7fc93ba1fa10) = 4 /* 9 in strace's PID NS */
9     1795941526.702481 vfork( <unfinished ...>
10    1795941526.702655 execve("/bin/sh", ["/bin/sh", "-c", "exit 4"], 0x55b472ae3ce8 /* 35 vars */ <unfinished ...>
9     1795941526.702885 <... vfork resumed>) = 5 /* 10 in strace's PID NS */
10    1795941526.703427 <... execve resumed>) = 0
10    1795941526.706675 +++ exited with 4 +++
9     1795941526.706857 +++ exited with 0 +++
7     1795941526.707041 +++ exited with 5 +++
5     1795941526.709823 +++ exited with 5 +++
6     1795941526.715449 +++ exited with 5 +++
"#;

    #[test]
    fn a_vfork_child_that_execs_before_the_vfork_returns_has_its_parent() {
        let trace = parse(VFORK);
        let rows: Vec<_> = trace
            .execs
            .iter()
            .map(|e| (e.pid, e.parent, e.exit_code()))
            .collect();
        assert_eq!(
            rows,
            [
                (5, None, Some(5)),
                (7, Some(6), Some(5)),
                (8, Some(7), Some(3)),
                (10, Some(9), Some(4)),
            ]
        );
        assert_eq!(trace.parents.get(&9), Some(&7));
        assert!(trace.descends(10, 5));
    }

    #[test]
    fn reaper_notes_go_and_every_other_line_stays() {
        let stderr = "preparing\n/usr/bin/strace: Exit of unknown pid 6 ignored\nbroken\nstrace: Exit of unknown pid 12 ignored\n";
        assert_eq!(without_reaper_notes(stderr), "preparing\nbroken\n");
        for kept in [
            "echo: Exit of unknown pid 6 ignored\n",
            "/usr/bin/strace: Exit of unknown pid six ignored\n",
            "/usr/bin/strace: Exit of unknown pid 6 ignored, really\n",
            "/usr/bin/strace: ptrace(PTRACE_SEIZE, 6): Operation not permitted\n",
        ] {
            assert_eq!(without_reaper_notes(kept), kept);
        }
    }

    #[test]
    fn as_root_strace_runs_below_unshare_with_its_own_namespace() {
        let tracer = Tracer {
            strace: "/usr/bin/strace".into(),
            unshare: Some("/usr/bin/unshare".into()),
        };
        let (program, args) = tracer.command(Path::new("/run/exec.trace"));
        assert_eq!(program, Path::new("/usr/bin/unshare"));
        let args: Vec<_> = args.iter().map(|a| a.to_string_lossy()).collect();
        assert_eq!(
            args[..6],
            OWN_NAMESPACE
                .iter()
                .copied()
                .chain(["/usr/bin/strace"])
                .collect::<Vec<_>>()[..]
        );
        assert_eq!(
            args[6..],
            arguments(Path::new("/run/exec.trace"))
                .iter()
                .map(|a| a.to_string_lossy())
                .collect::<Vec<_>>()[..]
        );
        let plain = Tracer {
            unshare: None,
            ..tracer
        };
        assert_eq!(
            plain.command(Path::new("/o")),
            (PathBuf::from("/usr/bin/strace"), arguments(Path::new("/o")))
        );
    }

    #[test]
    fn execs_carry_argv_parent_and_how_the_process_ended() {
        let trace = parse(RECORDED);
        let lines: Vec<String> = trace.execs.iter().map(Exec::command_line).collect();
        assert_eq!(
            lines,
            [
                "bwrap --unshare-all -- /bin/bash -c sh -c \"exit 3\"; (sleep 0.3 &) ; true",
                "/bin/bash -c sh -c \"exit 3\"; (sleep 0.3 &) ; true",
                "sh -c exit 3",
                "sleep 0.3",
            ]
        );
        let sh = &trace.execs[2];
        assert_eq!(
            (sh.pid, sh.parent, sh.exit_code()),
            (19470, Some(19469), Some(3))
        );
        assert_eq!(sh.at_ms, 15);
        // The failed exec is not one; the resumed one is, and its kill reads as 137.
        let sleep = &trace.execs[3];
        assert_eq!(
            (sleep.path.as_str(), sleep.exit_code()),
            ("/usr/bin/sleep", Some(137))
        );
        assert!(trace.descends(19472, 19469));
        assert!(trace.descends(19470, 19467));
        assert!(!trace.descends(19470, 19472));
    }

    #[test]
    fn the_tool_fences_hand_off_to_the_real_shell_is_one_exec() {
        // A wrapped `bash` becomes the real one (same pid, same argv): one exec, as the
        // agent ran it, which ends as the real shell ends. The same real shell with other
        // argv is a new exec.
        let text = r#"7 1.0 execve("/usr/bin/bash", ["bash", "-c", "ls"], 0x1 /* 1 vars */) = 0
7 1.1 execve("/run/aptitude/shell/bash", ["bash", "-c", "ls"], 0x1 /* 1 vars */) = 0
7 1.2 +++ exited with 2 +++
8 1.3 execve("/run/aptitude/shell/bash", ["bash", "-c", "rm x"], 0x1 /* 1 vars */) = 0
"#;
        let trace = parse(text);
        let seen: Vec<(&str, Option<i32>)> = trace
            .execs
            .iter()
            .map(|e| (e.path.as_str(), e.exit_code()))
            .collect();
        assert_eq!(
            seen,
            [
                ("/usr/bin/bash", Some(2)),
                ("/run/aptitude/shell/bash", None)
            ]
        );
    }

    #[test]
    fn escapes_and_cut_strings_are_decoded() {
        let line = r#"5 1.0 execve("/bin/echo", ["echo", "a\nb\t\"q\"\\", "\303\251t\303\251", "\x41", "long"...], 0x1 /* 1 vars */) = 0"#;
        let trace = parse(line);
        assert_eq!(
            trace.execs[0].argv,
            ["echo", "a\nb\t\"q\"\\", "été", "A", "long…"]
        );
        // strace pads a short pid.
        let padded = r#"864  1.5 execve("/bin/true", ["true"], 0x1 /* 1 vars */) = 0"#;
        assert_eq!(parse(padded).execs[0].pid, 864);
        let more =
            r#"5 1.0 execveat(AT_FDCWD, "/bin/true", ["true", ...], 0x1 /* 1 vars */, 0) = 0"#;
        assert_eq!(parse(more).execs[0].argv, ["true", "…"]);
    }
}
