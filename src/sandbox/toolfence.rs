//! The tool fence: the agent's memory is out of its tools' reach (issue #44, item 3).
//!
//! Inside the sandbox the agent and the commands it runs for the model share a user id, so
//! without more a tool could open `/proc/<agent>/mem` read-write and rewrite the agent's
//! heap (its prompt, its transcript), or read its environment: the kernel allows it to any
//! process of the same user that may `ptrace` the target, and Yama, which restricts that
//! to descendants, is absent on many hosts. The seccomp filter of [`super::init`] stops the
//! `ptrace` and `process_vm_*` calls, not this path.
//!
//! Landlock (Linux ≥ 5.13, every ABI) does: a process in a Landlock domain can not
//! `ptrace` — nor open the `/proc/<pid>/mem` or `environ` of, which go through the same
//! `ptrace_may_access` check — a process outside that domain or in a parent domain. So each
//! shell of the sandbox (`/usr/bin/bash`, `/usr/bin/dash`, … : every shell found under
//! `/usr/bin` and `/bin`, resolved) is, inside the sandbox only, aptitude's own binary
//! ([`binds`]): it enters a new, nested Landlock domain ([`restrict`]) and then runs the real
//! shell, mounted read-only under [`SHELL_DIR`], with the same argv. Every command an agent
//! runs through a shell (Claude Code's, Gemini CLI's, Qwen Code's and opencode's shell
//! tools, Codex's `bash -lc`, hooks), and everything it starts, is one domain below the
//! agent, and can not reach it. The domain handles only the right to make block devices
//! (which no process here holds anyway): it restricts no file access.
//!
//! A program the agent starts without a shell (`rg` for Claude Code's Grep, a Codex call
//! whose argv is not a shell) stays in the agent's domain: its argv is the agent's, not a
//! script the model wrote.
//!
//! The fence proof of [`super::init`] checks it before the agent starts ([`probe`]): a
//! process started through the sandbox's shell tries to open its parent's memory, and must
//! fail. Where Landlock is missing (kernel < 5.13, or not in the kernel's `lsm=` list) the
//! wrapper refuses to run the shell, the proof fails, and the run is `error`: only
//! `sandbox: off` runs without it.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where the real shells are mounted inside the sandbox, by their file name.
pub const SHELL_DIR: &str = "/run/aptitude/shell";

/// The argument of aptitude's binary that makes it the probe of [`probe`].
pub const PROBE_COMMAND: &str = "__sandbox-memprobe";

/// The shells wrapped, by name, looked for in `/usr/bin` and `/bin`.
const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash"];

/// The exit code of a wrapped shell that could not enter its domain (the shell did not
/// run): 126, a shell's own "found but could not run".
pub const NOT_FENCED: i32 = 126;

/// The host's shells to wrap: each of [`SHELLS`] in `/usr/bin` or `/bin`, resolved through
/// its links, kept when it is a file under `/usr` (what the sandbox mounts), each once.
pub fn shells() -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = ["/usr/bin", "/bin"]
        .iter()
        .flat_map(|dir| SHELLS.iter().map(move |name| Path::new(dir).join(name)))
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .filter(|p| p.starts_with("/usr") && p.is_file())
        .collect();
    found.sort();
    found.dedup();
    found
}

/// The read-only mounts of the fence, in order, as (host path, path inside): each real
/// shell under [`SHELL_DIR`], then `helper` (aptitude's binary) over the shell's own path.
pub fn binds(helper: &Path) -> Vec<(PathBuf, PathBuf)> {
    let mut out = Vec::new();
    for shell in shells() {
        if let Some(name) = shell.file_name() {
            out.push((shell.clone(), Path::new(SHELL_DIR).join(name)));
            out.push((helper.to_owned(), shell));
        }
    }
    out
}

/// The real shell this process stands in for, when it is aptitude's binary mounted over a
/// shell inside the sandbox: its own path is a shell's name, and that shell is under
/// [`SHELL_DIR`]. `None` everywhere else (aptitude run as itself, on the host).
pub fn wrapped_shell() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let name = exe.file_name()?;
    if !SHELLS.iter().any(|s| name == *s) || exe.starts_with(SHELL_DIR) {
        return None;
    }
    let real = Path::new(SHELL_DIR).join(name);
    real.is_file().then_some(real)
}

/// Runs as the shell `real`: enters a nested Landlock domain, then becomes `real` with the
/// same argv (`argv[0]` kept: `sh` and `bash` behave by it). Returns only on failure, with
/// the exit code ([`NOT_FENCED`] when the domain could not be made, 127 when the shell
/// could not be run); the reason is on stderr.
pub fn main(real: &Path, argv: &[OsString]) -> i32 {
    if let Err(why) = restrict() {
        let _ = writeln!(
            std::io::stderr(),
            "aptitude sandbox: the tool fence could not be made, the shell was not run: {why}"
        );
        return NOT_FENCED;
    }
    exec(real, argv)
}

/// Becomes `real` with `argv`; returns 127 with the reason on stderr when it can not.
fn exec(real: &Path, argv: &[OsString]) -> i32 {
    use std::os::unix::process::CommandExt;
    let mut command = std::process::Command::new(real);
    if let Some((first, rest)) = argv.split_first() {
        command.arg0(first).args(rest);
    }
    let e = command.exec();
    let _ = writeln!(
        std::io::stderr(),
        "aptitude sandbox: can not run {}: {e}",
        real.display()
    );
    127
}

/// Why the tool fence could not be made.
#[derive(Debug, thiserror::Error)]
pub enum FenceError {
    /// Landlock is not available: the kernel's message.
    #[error(
        "Landlock is not available here ({0}); it needs Linux 5.13 or later with `landlock` in the kernel's `lsm=` list. Only `sandbox: off` runs without it"
    )]
    Landlock(String),
    /// Not Linux.
    #[error("Landlock is Linux-only")]
    Platform,
}

/// Puts this process, and everything it starts, in a new Landlock domain nested in its
/// current one. A process already 16 domains deep (Landlock's limit, `E2BIG`) is already
/// below the agent: it is left as it is.
///
/// # Errors
/// [`FenceError`] when the kernel has no Landlock (the domain must exist: no best effort).
pub fn restrict() -> Result<(), FenceError> {
    #[cfg(target_os = "linux")]
    {
        use landlock::{AccessFs, CompatLevel, Compatible, Ruleset, RulesetAttr};
        let made = Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(AccessFs::MakeBlock)
            .and_then(|r| r.create())
            .and_then(|r| r.restrict_self());
        match made {
            Ok(_) => Ok(()),
            Err(e) if *landlock::Errno::from(&e) == libc::E2BIG => Ok(()),
            Err(e) => Err(FenceError::Landlock(e.to_string())),
        }
    }
    #[cfg(not(target_os = "linux"))]
    Err(FenceError::Platform)
}

/// The probe's own work, run as `aptitude __sandbox-memprobe` by a shell that
/// [`super::init`] started: it tries to open its parent's `/proc/<pid>/mem` read-write,
/// then read-only. Prints what happened on stdout, one line per attempt; exit code 0 when
/// both were refused, 1 when either opened.
pub fn probe_main() -> i32 {
    let parent = std::os::unix::process::parent_id();
    let path = format!("/proc/{parent}/mem");
    let mut opened = false;
    let mut out = std::io::stdout();
    for (mode, write) in [("read-write", true), ("read", false)] {
        match std::fs::OpenOptions::new()
            .read(true)
            .write(write)
            .open(&path)
        {
            Ok(_) => {
                opened = true;
                let _ = writeln!(out, "{mode}: opened");
            }
            Err(e) => {
                let _ = writeln!(out, "{mode}: {e}");
            }
        }
    }
    i32::from(opened)
}

/// The fence proof's check: `shell -c 'exec HELPER __sandbox-memprobe'`, a tool process
/// started as an agent starts one, tries to open this process's memory. Holds when the
/// probe ran and both opens were refused; a probe that did not run (the shell refused:
/// no Landlock) is a breach with the shell's words, never a pass.
pub fn probe(shell: &Path, helper: &Path) -> super::Check {
    let tried = format!(
        "open the agent's memory (/proc/<parent>/mem) from a tool process started by {}",
        shell.display()
    );
    let script = format!("exec {} {PROBE_COMMAND}", helper.display());
    let (held, detail) = match std::process::Command::new(shell)
        .args(["-c", &script])
        .stdin(std::process::Stdio::null())
        .output()
    {
        Ok(out) => {
            let said = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            let said = said.trim().replace('\n', "; ");
            match out.status.code() {
                Some(0) => (true, said),
                _ => (false, format!("{} ({})", said, out.status)),
            }
        }
        Err(e) => (false, format!("the probe could not start: {e}")),
    };
    super::Check {
        tried,
        held,
        detail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_real_shell_is_mounted_aside_and_the_helper_over_it() {
        let helper = Path::new("/x/aptitude");
        let binds = binds(helper);
        assert!(
            !binds.is_empty(),
            "this host has a shell under /usr: {binds:?}"
        );
        for pair in binds.chunks(2) {
            let (real, aside) = &pair[0];
            assert!(aside.starts_with(SHELL_DIR), "{pair:?}");
            assert_eq!(aside.file_name(), real.file_name());
            assert_eq!(pair[1], (helper.to_owned(), real.clone()));
        }
        // `/bin/sh`, a link on Debian, is wrapped at what it resolves to.
        let sh = std::fs::canonicalize("/bin/sh").unwrap();
        assert!(binds.iter().any(|(_, inside)| *inside == sh), "{binds:?}");
    }

    #[test]
    fn aptitude_on_the_host_stands_in_for_no_shell() {
        assert_eq!(wrapped_shell(), None);
    }
}
