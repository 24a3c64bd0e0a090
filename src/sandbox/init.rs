//! The helper that runs first inside the sandbox: aptitude's own binary, mounted read-only
//! at [`super::INIT_PATH`] and started as `aptitude __sandbox-init ARGS -- COMMAND…`.
//!
//! 1. It listens on 127.0.0.1:PORT of the sandbox's network namespace for each forward and
//!    relays each connection to the forward's unix socket, before the command starts (so
//!    the agent's first request finds the port open).
//! 2. It proves the fence holds: each host file it is given can not be read (the host
//!    canary, the test file), aptitude's environment is in no process it can see, each
//!    address it is given can not be reached, it holds no capability, a tool process
//!    started through the sandbox's shell can not open its memory
//!    ([`super::toolfence`]), `/usr` is read-only.
//! 3. It writes the proof as the first line of stdout, `NONCE {json}` ([`super::Proof`]);
//!    aptitude takes that line out of the command's output. A check that did not hold
//!    ends here with exit code 125: the command never starts.
//! 4. It denies `ptrace`, `process_vm_readv`/`writev` and `pidfd_getfd` with seccomp (an agent that stops
//!    the sandbox's pid 1 with `ptrace` would hang the run), then runs the command and
//!    exits with its status (128 + the signal when a signal ended it).

use std::ffi::OsString;
use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::time::Duration;

use super::{Check, Proof};

/// The exit code when the fence did not hold and the command was not started.
pub const BREACHED: i32 = 125;

/// How long a connect the fence must refuse may take before it counts as refused.
const CONNECT_TIMEOUT: Duration = Duration::from_millis(300);

/// The helper's arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Args {
    /// The proof line's prefix.
    pub nonce: String,
    /// Each forwarded port and its unix socket inside the sandbox.
    pub forwards: Vec<(u16, PathBuf)>,
    /// Host files that must be unreadable.
    pub deny_read: Vec<PathBuf>,
    /// aptitude's pid on the host.
    pub host_pid: u32,
    /// aptitude's `HOME`, whose `HOME=` entry must be in no visible process's environment.
    pub host_home: Option<String>,
    /// Addresses that must be unreachable.
    pub deny_connect: Vec<SocketAddr>,
    /// `RLIMIT_DATA` of the command and everything it starts, in bytes (the run's memory
    /// limit, per process).
    pub rlimit_data: Option<u64>,
    /// `RLIMIT_FSIZE`, in bytes (the run's disk limit, per file).
    pub rlimit_fsize: Option<u64>,
    /// `RLIMIT_NPROC`, in tasks (the run's process limit). Since Linux 5.14 the kernel
    /// counts it per user namespace, so it counts the sandbox's own tasks — processes and
    /// threads, bubblewrap's init and this helper included — and refuses the fork past it.
    /// The kernel does not apply it to a process whose real user is the host's root.
    pub rlimit_nproc: Option<u64>,
}

impl Args {
    /// The arguments as passed on the command line (before `--`).
    pub fn to_args(&self) -> Vec<OsString> {
        let mut a: Vec<OsString> = vec!["--nonce".into(), self.nonce.clone().into()];
        for (port, socket) in &self.forwards {
            let mut v = OsString::from(format!("{port}="));
            v.push(socket);
            a.extend(["--forward".into(), v]);
        }
        for path in &self.deny_read {
            a.extend(["--deny-read".into(), path.into()]);
        }
        a.extend(["--host-pid".into(), self.host_pid.to_string().into()]);
        if let Some(home) = &self.host_home {
            a.extend(["--host-home".into(), home.into()]);
        }
        for addr in &self.deny_connect {
            a.extend(["--deny-connect".into(), addr.to_string().into()]);
        }
        if let Some(bytes) = self.rlimit_data {
            a.extend(["--rlimit-data".into(), bytes.to_string().into()]);
        }
        if let Some(bytes) = self.rlimit_fsize {
            a.extend(["--rlimit-fsize".into(), bytes.to_string().into()]);
        }
        if let Some(tasks) = self.rlimit_nproc {
            a.extend(["--rlimit-nproc".into(), tasks.to_string().into()]);
        }
        a
    }

    /// Parses [`Args::to_args`]'s output followed by `--` and the command.
    ///
    /// # Errors
    /// [`ArgsError`], naming the argument that is wrong.
    pub fn parse(args: &[OsString]) -> Result<(Args, Vec<OsString>), ArgsError> {
        let mut parsed = Args::default();
        let mut it = args.iter();
        while let Some(flag) = it.next() {
            let flag = flag.to_string_lossy();
            if flag == "--" {
                let command: Vec<OsString> = it.cloned().collect();
                if command.is_empty() {
                    return Err(ArgsError::NoCommand);
                }
                return Ok((parsed, command));
            }
            let value = it
                .next()
                .ok_or_else(|| ArgsError::NoValue(flag.to_string()))?
                .clone();
            let text = value.to_string_lossy().into_owned();
            let bad = |expected: &'static str| ArgsError::Bad {
                flag: flag.to_string(),
                value: text.clone(),
                expected,
            };
            match flag.as_ref() {
                "--nonce" => parsed.nonce = text,
                "--forward" => {
                    let (port, socket) = text.split_once('=').ok_or_else(|| bad("PORT=SOCKET"))?;
                    let port = port.parse().map_err(|_| bad("a port number"))?;
                    parsed.forwards.push((port, PathBuf::from(socket)));
                }
                "--deny-read" => parsed.deny_read.push(PathBuf::from(value)),
                "--host-pid" => {
                    parsed.host_pid = text.parse().map_err(|_| bad("a process id"))?;
                }
                "--host-home" => parsed.host_home = Some(text),
                "--deny-connect" => parsed
                    .deny_connect
                    .push(text.parse().map_err(|_| bad("an address"))?),
                "--rlimit-data" => {
                    parsed.rlimit_data = Some(text.parse().map_err(|_| bad("a size in bytes"))?);
                }
                "--rlimit-nproc" => {
                    parsed.rlimit_nproc = Some(text.parse().map_err(|_| bad("a number of tasks"))?);
                }
                "--rlimit-fsize" => {
                    parsed.rlimit_fsize = Some(text.parse().map_err(|_| bad("a size in bytes"))?);
                }
                other => return Err(ArgsError::Unknown(other.to_owned())),
            }
        }
        Err(ArgsError::NoSeparator)
    }
}

/// Why the helper's arguments could not be read (aptitude wrote them: a bug, not a user's
/// mistake).
#[derive(Debug, thiserror::Error)]
pub enum ArgsError {
    /// `--` ends the arguments.
    #[error("no command after `--`")]
    NoCommand,
    /// No `--` at all.
    #[error("no `--` before the command")]
    NoSeparator,
    /// A flag at the end, without its value.
    #[error("{0} needs a value")]
    NoValue(String),
    /// A value that is not what its flag takes.
    #[error("{flag} {value}: expected {expected}")]
    Bad {
        /// The flag.
        flag: String,
        /// Its value.
        value: String,
        /// What it takes.
        expected: &'static str,
    },
    /// A flag the helper does not know.
    #[error("unknown argument {0}")]
    Unknown(String),
}

/// Runs the helper; returns the process's exit code.
pub fn main(args: &[OsString]) -> i32 {
    let (args, command) = match Args::parse(args) {
        Ok(parsed) => parsed,
        Err(why) => {
            let _ = writeln!(std::io::stderr(), "aptitude sandbox helper: {why}");
            return 2;
        }
    };
    let mut checks = Vec::new();
    for (port, socket) in &args.forwards {
        if let Err(e) = listen(*port, socket.clone()) {
            checks.push(Check {
                tried: format!("listen on 127.0.0.1:{port} for the forward"),
                held: false,
                detail: e.to_string(),
            });
        }
    }
    checks.extend(prove(&args));
    let proof = Proof { checks };
    let line = serde_json::to_string(&proof).unwrap_or_else(|_| "{\"checks\":[]}".into());
    let mut stdout = std::io::stdout();
    let _ = writeln!(stdout, "{} {line}", args.nonce);
    let _ = stdout.flush();
    if !proof.held() {
        let _ = writeln!(
            std::io::stderr(),
            "aptitude sandbox helper: the fence did not hold, the command was not started: {}",
            proof.breaches().join("; ")
        );
        return BREACHED;
    }
    if let Err(why) = deny_tracing() {
        let _ = writeln!(std::io::stderr(), "aptitude sandbox helper: seccomp: {why}");
        return BREACHED;
    }
    if let Err(why) = set_rlimits(&args) {
        let _ = writeln!(std::io::stderr(), "aptitude sandbox helper: limits: {why}");
        return BREACHED;
    }
    run(&command, &args.nonce)
}

/// Listens on 127.0.0.1:`port` and relays each connection to `socket`, on threads of
/// their own.
fn listen(port: u16, socket: PathBuf) -> std::io::Result<()> {
    let listener = TcpListener::bind(("127.0.0.1", port))?;
    std::thread::spawn(move || {
        for inside in listener.incoming().flatten() {
            let socket = socket.clone();
            std::thread::spawn(move || {
                let Ok(outside) = std::os::unix::net::UnixStream::connect(&socket) else {
                    return;
                };
                relay(inside, outside);
            });
        }
    });
    Ok(())
}

/// Copies both ways until either side closes.
fn relay(tcp: TcpStream, unix: std::os::unix::net::UnixStream) {
    let (Ok(mut tcp_read), Ok(mut unix_write)) = (tcp.try_clone(), unix.try_clone()) else {
        return;
    };
    let up = std::thread::spawn(move || {
        let _ = std::io::copy(&mut tcp_read, &mut unix_write);
        let _ = unix_write.shutdown(std::net::Shutdown::Write);
    });
    let (mut unix_read, mut tcp_write) = (unix, tcp);
    let _ = std::io::copy(&mut unix_read, &mut tcp_write);
    let _ = tcp_write.shutdown(std::net::Shutdown::Write);
    let _ = up.join();
}

/// The checks of the fence, each tried for real.
fn prove(args: &Args) -> Vec<Check> {
    let mut checks = Vec::new();
    for path in &args.deny_read {
        let (held, detail) = match std::fs::read(path) {
            Ok(bytes) => (false, format!("read {} bytes", bytes.len())),
            Err(e) => (true, e.to_string()),
        };
        checks.push(Check {
            tried: format!("read host file {}", path.display()),
            held,
            detail,
        });
    }
    checks.push(environ_check(args));
    for addr in &args.deny_connect {
        let (held, detail) = match TcpStream::connect_timeout(addr, CONNECT_TIMEOUT) {
            Ok(_) => (false, "connected".to_owned()),
            Err(e) => (true, e.to_string()),
        };
        checks.push(Check {
            tried: format!("connect to {addr}"),
            held,
            detail,
        });
    }
    if cfg!(target_os = "linux") {
        checks.push(capability_check());
        // A tool process, started through the shell the agent will use, can not open this
        // process's memory (the tool fence, [`super::toolfence`]).
        let shell = std::env::var_os("SHELL")
            .map(PathBuf::from)
            .filter(|s| s.is_absolute())
            .unwrap_or_else(|| PathBuf::from("/bin/sh"));
        checks.push(super::toolfence::probe(
            &shell,
            std::path::Path::new(super::INIT_PATH),
        ));
    }
    let probe = PathBuf::from("/usr/.aptitude-sandbox-probe");
    let (held, detail) = match std::fs::write(&probe, b"x") {
        Ok(()) => {
            let _ = std::fs::remove_file(&probe);
            (false, "written".to_owned())
        }
        Err(e) => (true, e.to_string()),
    };
    checks.push(Check {
        tried: "write to /usr".into(),
        held,
        detail,
    });
    checks
}

/// The helper holds no capability: `CapEff` of `/proc/self/status` is all zeros (Linux).
fn capability_check() -> Check {
    let caps = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("CapEff:").map(|v| v.trim().to_owned()))
        })
        .unwrap_or_default();
    Check {
        tried: "hold a capability".into(),
        held: !caps.is_empty() && caps.chars().all(|c| c == '0'),
        detail: format!("CapEff {caps}"),
    }
}

/// aptitude's environment is in no process the sandbox can see: its pid's `environ` is
/// unreadable (no such process here), and no visible process's environment holds
/// aptitude's `HOME=` entry.
fn environ_check(args: &Args) -> Check {
    let own = format!("/proc/{}/environ", args.host_pid);
    let marker = args
        .host_home
        .as_ref()
        .filter(|h| std::env::var("HOME").ok().as_ref() != Some(*h))
        .map(|h| format!("HOME={h}\0"));
    let mut leaks = Vec::new();
    let mut seen = 0;
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if !name.chars().all(|c| c.is_ascii_digit()) {
                continue;
            }
            seen += 1;
            let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
                continue;
            };
            if let Some(marker) = &marker
                && String::from_utf8_lossy(&environ).contains(marker.as_str())
            {
                leaks.push(format!("pid {name}"));
            }
        }
    }
    let own_readable = std::fs::read(&own).is_ok_and(|e| {
        marker
            .as_ref()
            .is_some_and(|m| String::from_utf8_lossy(&e).contains(m.as_str()))
    });
    Check {
        tried: format!("read aptitude's environment ({own}, and every visible process's)"),
        held: leaks.is_empty() && !own_readable,
        detail: if leaks.is_empty() && !own_readable {
            format!("not found in any of the {seen} processes visible")
        } else {
            format!("found in {}", leaks.join(", "))
        },
    }
}

/// Why the helper could not deny tracing: the command is then not started.
#[derive(Debug, thiserror::Error)]
pub enum SeccompError {
    /// This architecture has no seccomp support in seccompiler.
    #[error("no seccomp filter for the architecture {0}")]
    Arch(String),
    /// The filter could not be built.
    #[cfg(target_os = "linux")]
    #[error("the seccomp filter could not be built: {0}")]
    Filter(#[from] seccompiler::Error),
    /// The filter could not be compiled to BPF.
    #[cfg(target_os = "linux")]
    #[error("the seccomp filter could not be compiled: {0}")]
    Backend(#[from] seccompiler::BackendError),
}

/// Denies `ptrace`, `process_vm_readv`/`writev` and `pidfd_getfd` (EPERM) to this process
/// and everything it starts: no tool can reach into the agent's memory or take its file
/// descriptors (its output stream among them).
fn deny_tracing() -> Result<(), SeccompError> {
    #[cfg(target_os = "linux")]
    {
        use seccompiler::{SeccompAction, SeccompFilter};
        let rules = [
            libc::SYS_ptrace,
            libc::SYS_process_vm_readv,
            libc::SYS_process_vm_writev,
            libc::SYS_pidfd_getfd,
        ]
        .into_iter()
        .map(|n| (n, Vec::new()))
        .collect();
        let arch = std::env::consts::ARCH
            .try_into()
            .map_err(|_| SeccompError::Arch(std::env::consts::ARCH.to_owned()))?;
        let filter: seccompiler::BpfProgram = SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(libc::EPERM as u32),
            arch,
        )?
        .try_into()?;
        seccompiler::apply_filter_all_threads(&filter)?;
        Ok(())
    }
    #[cfg(not(target_os = "linux"))]
    Ok(())
}

/// Puts the run's per-process limits on this process, which the command inherits:
/// `RLIMIT_DATA` (memory) and `RLIMIT_FSIZE` (one file's size).
fn set_rlimits(args: &Args) -> Result<(), nix::Error> {
    use nix::sys::resource::{Resource, setrlimit};
    if let Some(bytes) = args.rlimit_data {
        setrlimit(Resource::RLIMIT_DATA, bytes, bytes)?;
    }
    if let Some(bytes) = args.rlimit_fsize {
        setrlimit(Resource::RLIMIT_FSIZE, bytes, bytes)?;
    }
    if let Some(tasks) = args.rlimit_nproc {
        setrlimit(Resource::RLIMIT_NPROC, tasks, tasks)?;
    }
    Ok(())
}

/// Runs `command` with this process's stdio; its exit code, or 128 + the signal. A signal
/// that ended it is also said on stderr's last line, `NONCE ended by signal N` (bubblewrap
/// reports a signal as exit code 128 + N, which a command can also exit with).
fn run(command: &[OsString], nonce: &str) -> i32 {
    let Some((program, args)) = command.split_first() else {
        return 2;
    };
    match std::process::Command::new(program).args(args).status() {
        Ok(status) => {
            use std::os::unix::process::ExitStatusExt;
            if let Some(signal) = status.signal() {
                let _ = writeln!(std::io::stderr(), "\n{nonce} ended by signal {signal}");
                return 128 + signal;
            }
            status.code().unwrap_or(1)
        }
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "aptitude sandbox helper: can not start {}: {e}",
                program.to_string_lossy()
            );
            127
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_round_trip() {
        let args = Args {
            nonce: "n-1".into(),
            forwards: vec![(4000, PathBuf::from("/run/aptitude/sock/4000.sock"))],
            deny_read: vec![
                PathBuf::from("/tmp/aptitude-canary-1"),
                PathBuf::from("/p/t.aptitude.yaml"),
            ],
            host_pid: 42,
            host_home: Some("/root".into()),
            deny_connect: vec![
                "1.1.1.1:443".parse().unwrap(),
                "127.0.0.1:9".parse().unwrap(),
            ],
            rlimit_data: Some(4 << 30),
            rlimit_fsize: Some(2 << 30),
            rlimit_nproc: Some(512),
        };
        let mut argv = args.to_args();
        argv.extend(["--".into(), "claude".into(), "-p".into()]);
        let (parsed, command) = Args::parse(&argv).unwrap();
        assert_eq!(parsed, args);
        assert_eq!(command, vec![OsString::from("claude"), "-p".into()]);
        assert!(Args::parse(&args.to_args()).is_err(), "no command");
    }

    #[test]
    fn outside_a_sandbox_the_proof_does_not_hold() {
        // Here (not sandboxed) the canary is readable and the capability check depends on
        // the user; a readable canary alone must make the proof fail.
        let dir = tempfile::tempdir().unwrap();
        let canary = dir.path().join("canary");
        std::fs::write(&canary, "x").unwrap();
        let checks = prove(&Args {
            nonce: "n".into(),
            deny_read: vec![canary],
            host_pid: std::process::id(),
            ..Args::default()
        });
        let proof = Proof { checks };
        assert!(!proof.held());
        assert!(
            proof.breaches()[0].contains("read 1 bytes"),
            "{:?}",
            proof.breaches()
        );
    }
}
