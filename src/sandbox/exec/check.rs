//! The transcript's shell calls put against the exec record: results JSON's `execs`.
//!
//! - Each shell call that ran, by the transcript, is matched to the shell the agent spawned
//!   for it: an exec of a shell (`sh`, `bash`, `dash`, `zsh`) whose `-c` script holds the
//!   call's command, as written or single-quoted the way Claude Code's `eval '…'` wraps it;
//!   the earliest such exec not matched yet. Its process's end is the call's **kernel exit
//!   code**: where the transcript says another (an exit code read from the output text,
//!   `Exit Code: 0`), the kernel wins and the disagreement is noted.
//! - A shell call the transcript says ran, that no process exec'd, is a **finding**: the
//!   agent's stream (or a hook that swapped the command) claims a command that never ran.
//!   The run is `tampered`, like a disagreement with the wire.
//! - Every exec below the agent that no call accounts for (not the agent itself, not a
//!   matched shell or its descendants) **ran, not claimed by any tool call**: a hook, a
//!   subagent the stream hides, the agent's own helpers. They are listed, and `not_ran`
//!   fails on them. A call that only opens a shell (`bash`, into which Codex types with
//!   `write_stdin`) claims the shell alone, not what runs in it.

use serde::{Deserialize, Serialize};

use super::{Exec, ExecRecord, Trace, hooks};
use crate::spec::tools::SHELL_TOOL;
use crate::transcript::{Execution, Transcript};

/// The most execs listed as unclaimed (all are counted).
const MAX_LISTED: usize = 200;

/// The most findings and notes kept.
const MAX_FINDINGS: usize = 20;

/// Whether a run has an exec record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecStatus {
    /// The kernel's record was kept and checked.
    Recorded,
    /// No record (`why` says why): command assertions rest on the wire alone.
    Absent,
}

/// One exec no tool call accounts for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unclaimed {
    /// Its argv, joined with spaces (agent text: render it inert).
    pub command: String,
    /// The command line of the nearest exec'd ancestor: who ran it (`node …/claude`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_by: Option<String>,
    /// Its exit code, when the tracer saw it end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// When, in ms since the sandbox started.
    pub at_ms: u64,
}

/// What the kernel's exec record says of one run's transcript.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecReport {
    /// Whether there was a record.
    pub status: ExecStatus,
    /// Why it is absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// Execs recorded in the sandbox, all of them.
    #[serde(default)]
    pub execs: u32,
    /// Shell calls of the transcript matched to a process.
    #[serde(default)]
    pub calls: u32,
    /// Calls the transcript says ran that no process ran, each naming the call (the first
    /// 20): the run is `tampered`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<String>,
    /// Exit codes the transcript claimed that the kernel contradicted (the kernel's is
    /// kept), each naming the call (the first 20).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Execs below the agent that no tool call accounts for, in order (the first 200).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unclaimed: Vec<Unclaimed>,
    /// How many there were in all.
    #[serde(default)]
    pub unclaimed_total: u32,
}

impl ExecReport {
    /// The report of a run without a record.
    pub fn absent(why: impl Into<String>) -> Self {
        ExecReport {
            status: ExecStatus::Absent,
            why: Some(why.into()),
            execs: 0,
            calls: 0,
            findings: Vec::new(),
            notes: Vec::new(),
            unclaimed: Vec::new(),
            unclaimed_total: 0,
        }
    }

    /// The error a run ends with when a claimed command never ran.
    pub fn tampered(&self) -> Option<String> {
        let first = self.findings.first()?;
        let more = match self.findings.len() {
            1 => String::new(),
            n => format!(" (and {} more)", n - 1),
        };
        Some(format!(
            "the agent's own record of the run says a command ran that the kernel never saw run: {first}{more}. aptitude trusts the kernel's exec record, so the run is not judged; check what in the run could change a command or write to the agent's stream (a hook, a plugin, a tool)"
        ))
    }

    /// One line for reports: `exec record: 12 execs, 3 calls matched, 2 ran unclaimed`.
    pub fn phrase(&self) -> String {
        match self.status {
            ExecStatus::Absent => format!(
                "no exec record: {}",
                self.why.as_deref().unwrap_or("unknown")
            ),
            ExecStatus::Recorded => format!(
                "exec record (kernel): {} exec{}, {} shell call{} matched, {} ran not claimed by any tool call",
                self.execs,
                if self.execs == 1 { "" } else { "s" },
                self.calls,
                if self.calls == 1 { "" } else { "s" },
                self.unclaimed_total
            ),
        }
    }
}

/// Checks `transcript`'s shell calls against `record` and puts the kernel's exit codes on
/// them (and their error flag: a non-zero exit is an error), and names which of the
/// workspace's `hooks` (read when the run started, [`hooks::configured`]) ran, by the
/// execs no call accounts for ([`hooks::ran`]). The agent is the process the sandbox's
/// helper ([`crate::sandbox::INIT_PATH`]) became.
pub fn check(
    record: &ExecRecord,
    transcript: &mut Transcript,
    hooks: &[hooks::Hook],
) -> (ExecReport, Vec<hooks::HookRan>) {
    let trace = match record {
        ExecRecord::Recorded(trace) => trace,
        ExecRecord::Absent(why) => return (ExecReport::absent(why.clone()), Vec::new()),
    };
    // The helper waits for the command it starts: the agent is its first child's exec,
    // after the fence proof's memory probe (a child that becomes the helper's probe).
    let probe = |pid: u32| {
        trace.execs.iter().any(|e| {
            e.pid == pid
                && e.argv.get(1).map(String::as_str)
                    == Some(crate::sandbox::toolfence::PROBE_COMMAND)
        })
    };
    let agent = trace
        .execs
        .iter()
        .find(|e| e.path == crate::sandbox::INIT_PATH)
        .and_then(|init| {
            trace
                .execs
                .iter()
                .find(|e| e.pid != init.pid && trace.descends(e.pid, init.pid) && !probe(e.pid))
        })
        .map(|e| e.pid);
    let Some(agent) = agent else {
        return (
            ExecReport::absent("the record does not show the sandbox's helper starting the agent"),
            Vec::new(),
        );
    };
    let mut report = ExecReport {
        execs: trace.execs.len() as u32,
        ..ExecReport::absent("")
    };
    report.status = ExecStatus::Recorded;
    report.why = None;
    let mut used = vec![false; trace.execs.len()];
    let mut claimed_pids = Vec::new();
    for call in &mut transcript.tool_calls {
        if call.canonical != SHELL_TOOL || !matches!(call.execution(), Execution::Ran) {
            continue;
        }
        let Some(command) = call.command().filter(|c| !c.trim().is_empty()) else {
            continue;
        };
        let found = (0..trace.execs.len()).find(|&i| {
            !used[i]
                && runs_script(&trace.execs[i], &command)
                && trace.descends(trace.execs[i].pid, agent)
        });
        let Some(i) = found else {
            if report.findings.len() < MAX_FINDINGS {
                report.findings.push(format!(
                    "call `{}` ({}): the transcript says `{}` ran, and no process in the sandbox exec'd it",
                    call.id,
                    call.name,
                    crate::shared::cut::chars(&command, 200).kept
                ));
            }
            continue;
        };
        used[i] = true;
        report.calls += 1;
        let pid = trace.execs[i].pid;
        // A call that only opens a shell (Codex's `exec_command` of `bash`, typed into
        // with `write_stdin`) claims that shell, not what is typed into it later.
        if !opens_a_shell(&command) {
            claimed_pids.push(pid);
        }
        let Some(kernel) = last_exec_of(trace, pid).and_then(Exec::exit_code) else {
            continue;
        };
        call.exit_by_kernel = true;
        if call.exit_code != Some(kernel) {
            if let Some(claimed) = call.exit_code
                && report.notes.len() < MAX_FINDINGS
            {
                report.notes.push(format!(
                    "call `{}` ({}): the transcript says exit code {claimed}, the kernel saw {kernel}; the kernel's is kept",
                    call.id, call.name
                ));
            }
            call.exit_code = Some(kernel);
            call.is_error = kernel != 0;
        }
    }
    let unclaimed = unclaimed(trace, agent, &claimed_pids, &used, &mut report);
    transcript.unclaimed_execs = report.unclaimed.iter().map(|u| u.command.clone()).collect();
    let ran = hooks::ran(trace, &unclaimed, hooks);
    (report, ran)
}

/// Lists the execs below the agent that no matched shell accounts for, and returns the
/// indices of all of them. `matched[i]`: the exec `i` is a call's own shell.
fn unclaimed(
    trace: &Trace,
    agent: u32,
    claimed: &[u32],
    matched: &[bool],
    report: &mut ExecReport,
) -> Vec<usize> {
    let claimed: std::collections::HashSet<u32> = claimed.iter().copied().collect();
    let mut all = Vec::new();
    for (i, (exec, &matched)) in trace.execs.iter().zip(matched).enumerate() {
        if matched
            || exec.pid == agent
            || !trace.descends(exec.pid, agent)
            || under_a_claim(trace, exec.pid, &claimed)
        {
            continue;
        }
        report.unclaimed_total += 1;
        all.push(i);
        if report.unclaimed.len() < MAX_LISTED {
            report.unclaimed.push(Unclaimed {
                command: exec.command_line(),
                run_by: run_by(trace, exec).map(Exec::command_line),
                exit_code: last_exec_of(trace, exec.pid)
                    .filter(|last| std::ptr::eq(*last, exec))
                    .and_then(Exec::exit_code),
                at_ms: exec.at_ms,
            });
        }
    }
    all
}

/// Whether `pid` or one of its ancestors is a call's shell: one walk up, whatever the
/// number of calls.
fn under_a_claim(trace: &Trace, pid: u32, claimed: &std::collections::HashSet<u32>) -> bool {
    let mut at = Some(pid);
    for _ in 0..4096 {
        let Some(p) = at else {
            return false;
        };
        if claimed.contains(&p) {
            return true;
        }
        at = trace.parents.get(&p).copied();
    }
    false
}

/// The last exec of `pid`: the image whose end is the process's.
fn last_exec_of(trace: &Trace, pid: u32) -> Option<&Exec> {
    trace.execs.iter().rev().find(|e| e.pid == pid)
}

/// The nearest ancestor's program: the exec before this one in the same process, else the
/// parent's last exec before it.
fn run_by<'a>(trace: &'a Trace, exec: &Exec) -> Option<&'a Exec> {
    let mut pid = trace.parents.get(&exec.pid).copied();
    for _ in 0..4096 {
        let at = pid?;
        if let Some(found) = trace
            .execs
            .iter()
            .rev()
            .find(|e| e.pid == at && e.at_ms <= exec.at_ms)
        {
            return Some(found);
        }
        pid = trace.parents.get(&at).copied();
    }
    None
}

/// Whether `exec` is a shell running a `-c` script that holds `command`.
fn runs_script(exec: &Exec, command: &str) -> bool {
    let name = exec
        .argv
        .first()
        .map(String::as_str)
        .unwrap_or(exec.path.as_str());
    let base = name.rsplit('/').next().unwrap_or(name);
    if !matches!(base, "sh" | "bash" | "dash" | "zsh") {
        return false;
    }
    let Some(flag) = exec
        .argv
        .iter()
        .position(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('c'))
    else {
        return false;
    };
    // The script is the first word after the flags (`bash -c -l SCRIPT`, `bash -lc SCRIPT`).
    let Some(script) = exec.argv[flag + 1..].iter().find(|a| !a.starts_with('-')) else {
        return false;
    };
    let holds = |command: &str| {
        let command = command.trim();
        !command.is_empty()
            && (script.contains(command)
                || script.contains(&command.replace('\'', r"'\''"))
                || script.contains(&command.replace('\'', r#"'"'"'"#)))
    };
    // An agent may run the script of a `sh -c '…'` call itself (Gemini CLI 0.61 does).
    holds(command) || inner_script(command).is_some_and(|inner| holds(&inner))
}

/// Whether `command` only starts an interactive shell: `bash`, `/bin/sh -i`, `zsh -l`.
fn opens_a_shell(command: &str) -> bool {
    let Some(words) = shlex::split(command) else {
        return false;
    };
    let Some((first, flags)) = words.split_first() else {
        return false;
    };
    let base = first.rsplit('/').next().unwrap_or(first);
    matches!(base, "sh" | "bash" | "dash" | "zsh")
        && flags
            .iter()
            .all(|f| f.starts_with('-') && !f.starts_with("--") && !f.contains('c'))
}

/// The script of a command that is itself `sh -c SCRIPT` / `bash -lc SCRIPT`.
fn inner_script(command: &str) -> Option<String> {
    let words = shlex::split(command)?;
    let base = words.first()?.rsplit('/').next()?.to_owned();
    if !matches!(base.as_str(), "sh" | "bash" | "dash" | "zsh") {
        return None;
    }
    let flag = words
        .iter()
        .position(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('c'))?;
    words
        .into_iter()
        .skip(flag + 1)
        .find(|a| !a.starts_with('-'))
}

#[cfg(test)]
mod tests;
