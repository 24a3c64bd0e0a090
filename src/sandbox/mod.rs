//! The sandbox: every command that runs agent-made or test-made code — the agent, its MCP
//! stdio servers, `setup` and `verify` commands, grading calls — is fenced in, and the
//! fence fails closed.
//!
//! One run sees ([`Policy`]):
//! - **files**: system directories and the agent's installation read-only, its workspace
//!   copy and a private home read-write, a private `/tmp`; nothing else of the host (not
//!   the real home, not the repository around the fixture, not the test files, not
//!   aptitude's binary, caches or outputs, not other tests' copies);
//! - **processes**: a fresh PID namespace; everything in it dies when the run ends;
//! - **environment**: exactly [`Policy::env`], an allowlist the caller builds;
//! - **network**: none, but the loopback ports of [`Policy::forwards`] (the model gateway,
//!   the test's MCP HTTP servers, the `network:` proxy), bridged from inside the sandbox's
//!   own network namespace to aptitude through unix sockets ([`forward`]).
//!
//! Linux uses bubblewrap ([`bwrap`], Debian's `bubblewrap`, what Claude Code and Codex
//! use); macOS uses Seatbelt (`sandbox-exec`, [`seatbelt`]). Inside, aptitude's own binary
//! runs first as a helper ([`init`]): it binds the forwarded ports, proves the fence holds
//! (a host canary file and aptitude's environment unreadable, a disallowed address
//! unreachable, no capabilities), reports that proof on the first stdout line, denies
//! `ptrace` with seccomp, and only then starts the command. Outside, `strace` records every
//! program the sandbox runs ([`exec`]): the kernel's account of what ran.
//!
//! A sandbox that can not be set up (bubblewrap missing, no user namespaces, an AppArmor
//! restriction) is a [`SandboxError`] with the reason and the fix: the run is `error`,
//! never an unsandboxed run. `--sandbox off` opts out, and every report says so.

pub mod bwrap;
pub mod exec;
pub mod forward;
pub mod init;
pub mod install;
pub mod proxy;
pub mod seatbelt;
pub mod toolfence;

use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// Where the helper's unix sockets are mounted inside the sandbox.
pub const SOCKET_DIR: &str = "/run/aptitude/sock";

/// Where aptitude's binary is mounted inside the sandbox, read-only, to run as [`init`].
pub const INIT_PATH: &str = "/run/aptitude/init";

/// The subcommand that runs [`init::main`] (hidden from `--help`).
pub const INIT_COMMAND: &str = "__sandbox-init";

/// The variable naming the binary that serves as the in-sandbox helper when the running
/// program is not `aptitude` itself (a Rust test using the fluent API).
pub const HELPER_VAR: &str = "APTITUDE_SANDBOX_HELPER";

/// Whether commands run sandboxed (`--sandbox`, `sandbox:` in a test or `aptitude.yaml`).
pub use crate::spec::SandboxSetting as Setting;

/// A loopback port inside the sandbox bridged to an address outside.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Forward {
    /// The port on 127.0.0.1 inside the sandbox (the agent's URL keeps its port).
    pub port: u16,
    /// Where connections go, outside.
    pub target: SocketAddr,
}

/// What one fenced command may see and reach. Paths are absolute host paths, mounted at the
/// same path inside.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    /// The working directory (inside a writable path).
    pub cwd: PathBuf,
    /// Read-write: the workspace copy, the private home, the MCP servers' log directory.
    pub writable: Vec<PathBuf>,
    /// Read-only: the agent's installation, plugin copies, interpreters.
    pub read_only: Vec<PathBuf>,
    /// Read-only at another path: (host directory, where it is seen inside), e.g. an
    /// agent's shared cache inside the private home.
    pub mounts: Vec<(PathBuf, PathBuf)>,
    /// The command's whole environment (nothing of aptitude's own is added).
    pub env: Vec<(String, String)>,
    /// Loopback ports bridged out.
    pub forwards: Vec<Forward>,
    /// Host files the proof must find unreadable besides the host canary (the test file).
    pub must_not_read: Vec<PathBuf>,
    /// `network:` hosts reachable through the allowlist proxy ([`proxy`]); none: no proxy.
    pub network: Vec<String>,
    /// The run's limits: the helper puts their per-process part on the command as rlimits
    /// (`agent::limits` watches the rest); `None`: none (setup and verify commands).
    pub limits: Option<crate::spec::limits::RunLimits>,
    /// Whether the tracer records what the command runs ([`exec`]): an agent's run, whose
    /// record its checks read. A grading call, a setup or a `verify` command runs
    /// untraced (`false`): nothing reads their record, and the tracer costs every process
    /// and thread they start (strace's `--pidns-translation` reads the `status` of each
    /// task in the namespace at each one). The fence is the same either way.
    pub exec_record: bool,
}

/// One check the helper made inside the sandbox before the command started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    /// What was tried, in words: `read /tmp/aptitude-canary-…`.
    pub tried: String,
    /// Whether the fence held (the read failed, the connect was refused, …).
    pub held: bool,
    /// What happened: the error seen, or what leaked.
    pub detail: String,
}

/// What the sandbox proved in one run, before the command started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Proof {
    /// Every check made.
    pub checks: Vec<Check>,
}

impl Proof {
    /// Whether every check held.
    pub fn held(&self) -> bool {
        self.checks.iter().all(|c| c.held)
    }

    /// The checks that did not hold, in words.
    pub fn breaches(&self) -> Vec<String> {
        self.checks
            .iter()
            .filter(|c| !c.held)
            .map(|c| format!("{}: {}", c.tried, c.detail))
            .collect()
    }
}

/// How a run was fenced in, as results record it (`sandbox` of a test result).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// `bubblewrap 0.8.0`, `seatbelt`, or `off`.
    pub mode: String,
    /// What the sandbox proved before the agent started; empty when off.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verified: Vec<Check>,
    /// The run's limits and how they were enforced: `4 GiB memory, 512 processes, 2 GiB
    /// disk (cgroup v2 …)`; absent in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<String>,
}

impl Record {
    /// The record of an unsandboxed run.
    pub fn off() -> Self {
        Record {
            mode: "off".into(),
            verified: Vec::new(),
            limits: None,
        }
    }

    /// Whether the run was not sandboxed.
    pub fn is_off(&self) -> bool {
        self.mode == "off"
    }
}

/// Why a command could not be fenced in. The run is `error`; it never runs unfenced.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SandboxError {
    /// bubblewrap is not installed.
    #[error(
        "the sandbox needs bubblewrap (`bwrap`), which is not installed: install it \
         (`sudo apt-get install bubblewrap`), or run without a sandbox with `--sandbox off`"
    )]
    BwrapMissing,
    /// bubblewrap could not create the sandbox: why, and how to fix it.
    #[error("the sandbox could not be set up: {reason}; {fix} (bwrap said: {said})")]
    Unavailable {
        /// The reason in words.
        reason: String,
        /// How to fix it.
        fix: String,
        /// What bubblewrap printed.
        said: String,
    },
    /// The platform has no sandbox aptitude can use.
    #[error(
        "no sandbox is available on this platform ({0}): run with `--sandbox off` to run \
         agents unsandboxed"
    )]
    Platform(String),
    /// The helper binary that runs inside the sandbox was not found.
    #[error(
        "the sandbox's helper, aptitude's own binary, was not found: {0}; install the \
         `aptitude` binary or name it with {HELPER_VAR}=PATH"
    )]
    Helper(String),
    /// A file or socket of the fence could not be made.
    #[error("the sandbox could not be prepared: {0}")]
    Prepare(String),
}

/// The sandbox of one aptitude process: `--sandbox` when given (it wins over every
/// test's `sandbox:`), the tool checked once.
#[derive(Debug, Clone, Default)]
pub struct Sandbox {
    forced: Option<Setting>,
}

/// What the first use of the sandbox found: the tool, its version, or why it can not run.
#[derive(Debug, Clone)]
struct Ready {
    /// `bwrap`, or `/usr/bin/sandbox-exec`.
    tool: PathBuf,
    /// `0.8.0` (bubblewrap); empty for Seatbelt.
    version: String,
    seatbelt: bool,
    /// The tracer, checked to trace a child here, or why the run's exec record is absent.
    tracer: Result<exec::strace::Tracer, exec::strace::TracerError>,
}

impl Sandbox {
    /// The sandbox with `--sandbox` (`None`: each test's `sandbox:`, else on).
    pub fn new(forced: Option<Setting>) -> Self {
        Sandbox { forced }
    }

    /// Whether a command of a test that says `wanted` (its `sandbox:`) is fenced in.
    pub fn is_on(&self, wanted: Option<Setting>) -> bool {
        self.forced.or(wanted).unwrap_or_default() == Setting::On
    }

    /// Prepares the fence of one command of a test that says `wanted`: checks (once per
    /// process) that the sandbox works, makes the run's private directory, synthetic
    /// `/etc` files, forwarding sockets and `network:` proxy. `None` when the sandbox is
    /// off.
    ///
    /// # Errors
    /// [`SandboxError`] with the reason and the fix; the command must not run.
    pub fn fence(
        &self,
        policy: Policy,
        wanted: Option<Setting>,
    ) -> Result<Option<Fence>, SandboxError> {
        if !self.is_on(wanted) {
            return Ok(None);
        }
        let ready = if cfg!(target_os = "linux") {
            ready()?
        } else if cfg!(target_os = "macos") && Path::new(seatbelt::SANDBOX_EXEC).is_file() {
            Ready {
                tool: PathBuf::from(seatbelt::SANDBOX_EXEC),
                version: String::new(),
                seatbelt: true,
                tracer: Err(exec::strace::TracerError::Platform),
            }
        } else {
            return Err(SandboxError::Platform(std::env::consts::OS.to_owned()));
        };
        let helper = helper_binary()?;
        Fence::new(ready, helper, policy).map(Some)
    }
}

/// The first use's check, shared by every run of the process.
fn ready() -> Result<Ready, SandboxError> {
    static READY: OnceLock<Result<Ready, SandboxError>> = OnceLock::new();
    READY
        .get_or_init(|| {
            let bwrap =
                crate::shared::files::find_on_path("bwrap").ok_or(SandboxError::BwrapMissing)?;
            let version = bwrap::version(&bwrap);
            bwrap::preflight(&bwrap)?;
            let tracer = exec::strace::Tracer::find();
            Ok(Ready {
                tool: bwrap,
                version,
                seatbelt: false,
                tracer,
            })
        })
        .clone()
}

/// The binary that runs as [`init`] inside the sandbox: [`HELPER_VAR`] when set, else the
/// running program when it is `aptitude`, else `aptitude` on `PATH`.
///
/// # Errors
/// [`SandboxError::Helper`] when none is found.
pub fn helper_binary() -> Result<PathBuf, SandboxError> {
    if let Some(path) = std::env::var_os(HELPER_VAR).filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(SandboxError::Helper(format!(
                "{HELPER_VAR}={} is not a file",
                path.display()
            )))
        };
    }
    let exe = std::env::current_exe().map_err(|e| SandboxError::Helper(e.to_string()))?;
    if exe
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("aptitude"))
    {
        return Ok(exe);
    }
    // A test binary of a crate that builds aptitude (`target/debug/deps/…`, beside
    // `target/debug/aptitude`).
    let beside = exe
        .ancestors()
        .skip(1)
        .take(2)
        .map(|d| d.join("aptitude"))
        .find(|p| p.is_file());
    if let Some(found) = beside {
        return Ok(found);
    }
    crate::shared::files::find_on_path("aptitude").ok_or_else(|| {
        SandboxError::Helper(format!(
            "{} is not aptitude and `aptitude` is not on PATH",
            exe.display()
        ))
    })
}

/// The fence of one command: its private directory (removed when dropped), its forwarding
/// bridges (stopped when dropped), and how to start the command inside it.
#[derive(Debug)]
pub struct Fence {
    dir: tempfile::TempDir,
    tool: PathBuf,
    version: String,
    seatbelt: bool,
    helper: PathBuf,
    policy: Policy,
    nonce: String,
    canary: PathBuf,
    tracer: Result<exec::strace::Tracer, exec::strace::TracerError>,
    _bridges: forward::Bridges,
    _proxy: Option<proxy::Proxy>,
}

impl Fence {
    fn new(ready: Ready, helper: PathBuf, mut policy: Policy) -> Result<Fence, SandboxError> {
        // The helper tries these from the workspace: they must not be relative.
        for path in &mut policy.must_not_read {
            if let Ok(absolute) = std::path::absolute(&*path) {
                *path = absolute;
            }
        }
        let prepare = |what: &str, e: std::io::Error| SandboxError::Prepare(format!("{what}: {e}"));
        let dir = tempfile::Builder::new()
            .prefix("aptitude-sandbox-")
            .tempdir()
            .map_err(|e| prepare("its private directory", e))?;
        for sub in ["tmp", "sock", "etc"] {
            std::fs::create_dir(dir.path().join(sub)).map_err(|e| prepare(sub, e))?;
        }
        bwrap::write_etc(&dir.path().join("etc"), &policy.env).map_err(|e| prepare("/etc", e))?;
        let proxy = if policy.network.is_empty() {
            None
        } else {
            let proxy = proxy::Proxy::start(policy.network.clone())
                .map_err(|e| prepare("the network proxy", e))?;
            let port = proxy.port();
            policy.forwards.push(Forward {
                port,
                target: SocketAddr::from(([127, 0, 0, 1], port)),
            });
            let url = format!("http://127.0.0.1:{port}");
            for key in ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"] {
                policy.env.push((key.to_owned(), url.clone()));
            }
            for key in ["NO_PROXY", "no_proxy"] {
                policy
                    .env
                    .push((key.to_owned(), "localhost,127.0.0.1,::1".to_owned()));
            }
            Some(proxy)
        };
        let bridges = forward::Bridges::start(&dir.path().join("sock"), &policy.forwards)
            .map_err(|e| prepare("the forwarding sockets", e))?;
        let tracer = if policy.exec_record {
            ready.tracer
        } else {
            Err(exec::strace::TracerError::NotWanted)
        };
        Ok(Fence {
            tool: ready.tool,
            version: ready.version,
            seatbelt: ready.seatbelt,
            tracer,
            helper,
            policy,
            nonce: new_nonce(),
            canary: canary(dir.path()).map_err(|e| prepare("the host canary", e))?,
            dir,
            _bridges: bridges,
            _proxy: proxy,
        })
    }

    /// The program to start (bubblewrap; on Linux with a working tracer, `strace` running
    /// bubblewrap, below `unshare` as root: see [`exec::strace::Tracer`]), its arguments,
    /// and the environment bubblewrap itself gets (only `PATH`: its pid 1 inside keeps its
    /// environment, which the agent can read).
    pub fn command(
        &self,
        program: &Path,
        args: &[OsString],
    ) -> (PathBuf, Vec<OsString>, Vec<(String, String)>) {
        let init = init::Args {
            nonce: self.nonce.clone(),
            forwards: self
                .policy
                .forwards
                .iter()
                .map(|f| {
                    (
                        f.port,
                        PathBuf::from(SOCKET_DIR).join(forward::socket_name(f.port)),
                    )
                })
                .collect(),
            deny_read: std::iter::once(self.canary.clone())
                .chain(self.policy.must_not_read.iter().cloned())
                .collect(),
            host_pid: std::process::id(),
            host_home: std::env::var("HOME").ok(),
            deny_connect: deny_connect(&self.policy.forwards),
            rlimit_data: self.policy.limits.map(|l| l.memory),
            // A file's apparent size: four times what the run may write, so that a
            // sparse file (which holds no disk) is not refused, and a file the watch has
            // not seen grow yet can not outgrow it by much.
            rlimit_fsize: self.policy.limits.map(|l| l.disk.saturating_mul(4)),
            // The sandbox's own user namespace counts its tasks (threads too): a fork
            // storm is refused at the limit, not stopped by the watch some forks later.
            rlimit_nproc: self.policy.limits.map(|l| u64::from(l.processes)),
        };
        if self.seatbelt {
            // No mounts and no network namespace: the helper runs from where it is (read
            // by the profile), the command reaches the forwards' targets directly, and the
            // whole environment is the policy's (`sandbox-exec` passes its own on).
            let mut policy = self.policy.clone();
            policy.read_only.push(self.helper.clone());
            let mut argv = seatbelt::arguments(&policy, &self.dir.path().join("tmp"));
            argv.push(self.helper.clone().into());
            argv.push(INIT_COMMAND.into());
            argv.extend(
                init::Args {
                    forwards: Vec::new(),
                    ..init
                }
                .to_args(),
            );
            argv.push("--".into());
            argv.push(program.into());
            argv.extend(args.iter().cloned());
            return (self.tool.clone(), argv, self.policy.env.clone());
        }
        let mut argv = bwrap::arguments(&bwrap::Layout {
            run_dir: self.dir.path(),
            helper: &self.helper,
            policy: &self.policy,
        });
        argv.push(INIT_PATH.into());
        argv.push(INIT_COMMAND.into());
        argv.extend(init.to_args());
        argv.push("--".into());
        argv.push(program.into());
        argv.extend(args.iter().cloned());
        let env = vec![("PATH".to_owned(), "/usr/bin:/bin".to_owned())];
        match &self.tracer {
            // The tracer outside, bubblewrap its child: see [`exec`].
            Ok(tracer) => {
                let (program, mut traced) = tracer.command(&self.trace_path());
                traced.push(self.tool.clone().into());
                traced.extend(argv);
                (program, traced, env)
            }
            Err(_) => (self.tool.clone(), argv, env),
        }
    }

    /// Where the tracer writes: the run's private directory, which the sandbox does not
    /// mount.
    fn trace_path(&self) -> PathBuf {
        self.dir.path().join("exec.trace")
    }

    /// What the kernel saw the command run ([`exec`]), once it has ended; absent, with
    /// why, where no tracer ran or its record can not be read.
    pub fn exec_record(&self) -> exec::ExecRecord {
        if self.seatbelt {
            return exec::ExecRecord::Absent(exec::strace::TracerError::Platform.to_string());
        }
        if let Err(why) = &self.tracer {
            return exec::ExecRecord::Absent(why.to_string());
        }
        match crate::shared::files::read_capped(&self.trace_path(), exec::MAX_RECORD_BYTES) {
            Ok(bytes) => {
                let trace = exec::strace::parse(&String::from_utf8_lossy(&bytes));
                if trace.execs.is_empty() {
                    exec::ExecRecord::Absent("the tracer recorded no exec".to_owned())
                } else {
                    exec::ExecRecord::Recorded(trace)
                }
            }
            Err(e) => exec::ExecRecord::Absent(format!("the tracer's record: {e}")),
        }
    }

    /// The proof from the helper's first stdout line, when `line` is it.
    pub fn proof(&self, line: &str) -> Option<Proof> {
        let rest = line.strip_prefix(&self.nonce)?.strip_prefix(' ')?;
        serde_json::from_str(rest).ok()
    }

    /// The signal that ended the command, as the helper said on the last line of `stderr`,
    /// and `stderr` without that line (nor the tracer's notes on what it reaped:
    /// [`exec::strace::without_reaper_notes`]).
    pub fn ending_signal(&self, stderr: &str) -> (Option<i32>, String) {
        let stderr = &*exec::strace::without_reaper_notes(stderr);
        let marker = format!("{} ended by signal ", self.nonce);
        match stderr.rfind(&marker) {
            Some(at) => {
                let signal = stderr[at + marker.len()..].trim().parse().ok();
                (signal, stderr[..at].trim_end().to_owned())
            }
            None => (None, stderr.to_owned()),
        }
    }

    /// The host directories the command may write: what it writes is counted against its
    /// disk limit (its workspace, home, MCP log directory and `/tmp`).
    pub fn written_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = self.policy.writable.clone();
        dirs.push(self.dir.path().join("tmp"));
        dirs
    }

    /// The record of this run for the results, with what `proof` verified.
    pub fn record(&self, proof: Option<&Proof>) -> Record {
        Record {
            mode: if self.seatbelt {
                "seatbelt".to_owned()
            } else {
                format!("bubblewrap {}", self.version).trim().to_owned()
            },
            verified: proof.map(|p| p.checks.clone()).unwrap_or_default(),
            limits: None,
        }
    }
}

/// Addresses the helper must fail to reach: a public address, and aptitude's canary
/// listener on the host's loopback (reachable only if the sandbox shares its network).
fn deny_connect(forwards: &[Forward]) -> Vec<SocketAddr> {
    let mut out = vec![SocketAddr::from(([1, 1, 1, 1], 443))];
    if let Some(port) = forward::canary_port().filter(|p| !forwards.iter().any(|f| f.port == *p)) {
        out.push(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    out
}

/// A random token: the proof line's prefix.
fn new_nonce() -> String {
    format!("aptitude-sandbox-proof-{}", crate::shared::random_hex(12))
}

/// The run's host canary: a file in its private directory on the host (in the host's
/// temp dir, outside everything the sandbox mounts), which the helper must fail to read.
fn canary(run_dir: &Path) -> std::io::Result<PathBuf> {
    let path = run_dir.join("canary");
    std::fs::write(
        &path,
        "aptitude host canary: a sandbox that reads this leaks\n",
    )?;
    Ok(path)
}

/// The environment every fenced command starts from: `PATH` (the given directories, then
/// the system's), `HOME`, `TMPDIR=/tmp`, `USER`/`LOGNAME`, `SHELL` (bash where there is
/// one), `TERM=dumb`, and the
/// locale and time zone of aptitude's own environment (`LANG`, `LC_*`, `TZ`). Nothing else
/// of aptitude's environment.
pub fn base_env(home: &Path, path_dirs: &[PathBuf]) -> Vec<(String, String)> {
    let mut path: Vec<String> = path_dirs.iter().map(|d| d.display().to_string()).collect();
    for dir in [
        "/usr/local/bin",
        "/usr/bin",
        "/bin",
        "/usr/local/sbin",
        "/usr/sbin",
        "/sbin",
    ] {
        if !path.iter().any(|p| p == dir) {
            path.push(dir.to_owned());
        }
    }
    let mut env = vec![
        ("PATH".to_owned(), path.join(":")),
        ("HOME".to_owned(), home.display().to_string()),
        ("TMPDIR".to_owned(), "/tmp".to_owned()),
        ("USER".to_owned(), "aptitude".to_owned()),
        ("LOGNAME".to_owned(), "aptitude".to_owned()),
        (
            "SHELL".to_owned(),
            if Path::new("/bin/bash").exists() {
                "/bin/bash"
            } else {
                "/bin/sh"
            }
            .to_owned(),
        ),
        ("TERM".to_owned(), "dumb".to_owned()),
    ];
    for (key, value) in std::env::vars() {
        if key == "LANG" || key == "TZ" || key.starts_with("LC_") {
            env.push((key, value));
        }
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fence(exec_record: bool) -> Fence {
        let ready = Ready {
            tool: PathBuf::from("/usr/bin/bwrap"),
            version: "0.8.0".to_owned(),
            seatbelt: false,
            tracer: Ok(exec::strace::Tracer {
                strace: PathBuf::from("/usr/bin/strace"),
                unshare: None,
            }),
        };
        let policy = Policy {
            cwd: PathBuf::from("/w"),
            exec_record,
            ..Policy::default()
        };
        Fence::new(ready, PathBuf::from("/x/aptitude"), policy).unwrap()
    }

    #[test]
    fn only_a_command_whose_record_is_read_runs_under_the_tracer() {
        let traced = fence(true);
        let (program, args, _) = traced.command(Path::new("/bin/agent"), &[]);
        assert_eq!(program, PathBuf::from("/usr/bin/strace"));
        assert!(args.iter().any(|a| a == "--seccomp-bpf"), "{args:?}");
        assert!(args.iter().any(|a| a == "/usr/bin/bwrap"), "{args:?}");

        let untraced = fence(false);
        let (program, args, _) = untraced.command(Path::new("/bin/agent"), &[]);
        assert_eq!(program, PathBuf::from("/usr/bin/bwrap"));
        assert!(!args.iter().any(|a| a == "--seccomp-bpf"), "{args:?}");
        // Its record is absent, said why: never read as "nothing ran".
        assert_eq!(
            untraced.exec_record(),
            exec::ExecRecord::Absent(exec::strace::TracerError::NotWanted.to_string())
        );
    }
}
