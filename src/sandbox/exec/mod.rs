//! The exec record: what really ran in a sandbox, seen by the kernel, not told by the agent.
//!
//! The agent's stream is a claim and the gateway's wire says what the model asked for; the
//! exec record is the third witness: every `execve` in the sandbox, with its argv, its
//! process's parent, when it happened and how the process ended. It is made by Debian's
//! `strace` ([`strace`]), started by aptitude *outside* the sandbox with bubblewrap as its
//! child: the tracer is in aptitude's PID namespace, or (as root) in one of its own between
//! aptitude's and the sandbox's ([`strace::Tracer`]); either way nothing in the sandbox can
//! see, signal or detach it, and its filter (`--seccomp-bpf`, `SECCOMP_RET_TRACE`) makes every
//! `execve` in the sandbox fail with `ENOSYS` if the tracer is gone: a process can not run a
//! program unrecorded.
//!
//! Where the tracer can not run (strace missing, ptrace refused by the host, macOS), the
//! record is [`ExecRecord::Absent`] with the reason: never an empty record that would read
//! as "nothing ran". The transcript is then checked against the wire alone, as before.
//!
//! [`check`] puts the record against the transcript's shell calls: the exit code of a call
//! is the kernel's, a call no process ran is a finding, and what ran without a call is
//! listed. [`hooks`] names the workspace's hooks among what ran without a call.

pub mod check;
pub mod hooks;
pub mod strace;

use serde::{Deserialize, Serialize};

/// The largest trace read (bytes, about a million execs); a larger one makes the record
/// absent, said so.
pub const MAX_RECORD_BYTES: u64 = 256 * 1024 * 1024;

/// How a traced process ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ended {
    /// It exited with this code (0–255).
    Exited(i32),
    /// A signal killed it: its name (`SIGKILL`).
    Killed(String),
}

/// One successful `execve`/`execveat` in the sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exec {
    /// The process's id in the tracer's PID namespace (not the sandbox's).
    pub pid: u32,
    /// The process that forked it, when the tracer saw the fork.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<u32>,
    /// The program's path as passed to `execve`.
    pub path: String,
    /// Its argv, each string decoded from strace's escapes (lossy UTF-8); a string strace
    /// cut ends with `…`.
    pub argv: Vec<String>,
    /// When it happened, in ms since the first exec of the record.
    pub at_ms: u64,
    /// How the process ended, when the tracer saw it end (a process killed with its
    /// sandbox at the end of a run may have none). A process that exec'd again keeps one
    /// end, on its last exec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<Ended>,
}

impl Exec {
    /// The argv as one line, for reports (`sh -c 'exit 3'` shown as `sh -c exit 3`).
    pub fn command_line(&self) -> String {
        self.argv.join(" ")
    }

    /// The exit code when the process exited; a kill by a signal is `128 + n` as a shell
    /// says it, unknown signals `None`.
    pub fn exit_code(&self) -> Option<i32> {
        match self.ended.as_ref()? {
            Ended::Exited(code) => Some(*code),
            Ended::Killed(signal) => signal_number(signal).map(|n| 128 + n),
        }
    }
}

fn signal_number(name: &str) -> Option<i32> {
    Some(match name {
        "SIGHUP" => 1,
        "SIGINT" => 2,
        "SIGQUIT" => 3,
        "SIGABRT" => 6,
        "SIGKILL" => 9,
        "SIGSEGV" => 11,
        "SIGPIPE" => 13,
        "SIGALRM" => 14,
        "SIGTERM" => 15,
        _ => return None,
    })
}

/// Every exec of one traced command, and who forked whom.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trace {
    /// The successful execs, in the order they happened.
    pub execs: Vec<Exec>,
    /// Each forked process's parent (pids in the tracer's PID namespace), threads included.
    pub parents: std::collections::HashMap<u32, u32>,
}

impl Trace {
    /// Whether `pid` is `ancestor` or descends from it, by the forks the tracer saw.
    pub fn descends(&self, pid: u32, ancestor: u32) -> bool {
        let mut at = pid;
        // Bounded: a pid reused within one record could make a loop.
        for _ in 0..4096 {
            if at == ancestor {
                return true;
            }
            match self.parents.get(&at) {
                Some(p) => at = *p,
                None => return false,
            }
        }
        false
    }
}

/// What the kernel recorded of one fenced command, or why nothing was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExecRecord {
    /// The tracer ran for the whole command.
    Recorded(Trace),
    /// No record: why (`strace is not installed`, `ptrace is refused here: …`).
    Absent(String),
}
