//! The MCP helpers that run where the agent's MCP servers run (inside the sandbox, as
//! aptitude's own binary mounted there; beside the agent when the sandbox is off), started
//! by the agent as a stdio server command `aptitude __mcp <helper> …`:
//!
//! - `relay SERVER`: stands in for a server aptitude serves itself (a `mock:` server, a
//!   recorded server replayed). It connects to aptitude's MCP host at the address in
//!   [`HOST_VAR`] (`http://127.0.0.1:PORT/TOKEN`, which the sandbox forwards), sends the
//!   run's token and the server's name as the first line, then relays stdin to the host and
//!   the host's lines to stdout. A host that closes the connection before the client does
//!   makes it exit 1, so that the watch reports the server as failed.
//!   What the host answers and records lives in aptitude's process, out of the agent's
//!   reach.
//! - `tap LOG -- COMMAND ARGS…`: runs a real stdio server, relaying its stdin and stdout
//!   line by line and appending each line to `LOG.<its pid>` (one file per process, so
//!   that two processes of one server never mix their requests) as `> LINE` (client to
//!   server) or
//!   `< LINE` (server to client), up to [`MAX_TAP_BYTES`]; it exits with the server's
//!   status (128 + the signal when a signal ended it), so the watch's crash report is
//!   unchanged. The log is what `run --record-model` keeps of the server
//!   ([`crate::gateway::mcp_record::from_tap`]).
//!
//! MCP's stdio transport (spec 2025-06-18, "Transports"): JSON-RPC messages, one per line,
//! UTF-8, no embedded newlines.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The helper's first argument: `aptitude __mcp relay|tap …`.
pub const COMMAND: &str = "__mcp";

/// The variable that gives a relay the host's address (`http://127.0.0.1:PORT`): a
/// loopback URL in a server's environment, which the sandbox forwards.
pub const HOST_VAR: &str = "APTITUDE_MCP_HOST";

/// The most a tap writes to its log, in bytes; lines past it are relayed, not logged.
pub const MAX_TAP_BYTES: u64 = 16 * 1024 * 1024;

/// Writes one line to stderr (which the watch keeps for its failure message).
fn complain(message: std::fmt::Arguments<'_>) {
    let _ = writeln!(std::io::stderr(), "{message}");
}

/// Runs the helper named by `args` (what follows `__mcp`); returns the exit code.
pub fn main(args: &[OsString]) -> i32 {
    let text: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    match text
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["relay", server] => relay(server),
        ["tap", _, "--", _, ..] => tap(PathBuf::from(&args[1]), &args[3..]),
        _ => {
            complain(format_args!(
                "aptitude {COMMAND}: usage: `{COMMAND} relay SERVER` or `{COMMAND} tap LOG -- COMMAND ARGS…` (started by aptitude, not by hand)"
            ));
            2
        }
    }
}

/// `relay SERVER`.
fn relay(server: &str) -> i32 {
    let Some(url) = std::env::var(HOST_VAR).ok().filter(|v| !v.is_empty()) else {
        complain(format_args!(
            "aptitude {COMMAND} relay: {HOST_VAR} is not set"
        ));
        return 1;
    };
    let Some((addr, token)) = url.trim_start_matches("http://").split_once('/') else {
        complain(format_args!(
            "aptitude {COMMAND} relay: {HOST_VAR} names no token"
        ));
        return 1;
    };
    let mut stream = match std::net::TcpStream::connect(addr) {
        Ok(s) => s,
        Err(e) => {
            complain(format_args!(
                "aptitude {COMMAND} relay: can not reach aptitude's MCP host at {addr}: {e}"
            ));
            return 1;
        }
    };
    if let Err(e) = writeln!(stream, "{token} {server}") {
        complain(format_args!("aptitude {COMMAND} relay: {e}"));
        return 1;
    }
    let Ok(mut to_host) = stream.try_clone() else {
        complain(format_args!(
            "aptitude {COMMAND} relay: can not share the connection"
        ));
        return 1;
    };
    let client_done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let done = Arc::clone(&client_done);
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut std::io::stdin().lock(), &mut to_host);
        // The client closed its side: the host ends the session.
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        let _ = to_host.shutdown(std::net::Shutdown::Write);
    });
    let mut stdout = std::io::stdout().lock();
    let mut buf = [0u8; 64 * 1024];
    loop {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) if client_done.load(std::sync::atomic::Ordering::SeqCst) => return 0,
            // The host closed first: it refused the connection or a line (or stopped), so
            // the server is gone as a crashed one is, and the watch says so.
            Ok(0) | Err(_) => {
                complain(format_args!(
                    "aptitude {COMMAND} relay: aptitude's MCP host closed the connection of `{server}` (a refused connection, a line over the bound, or too many connections)"
                ));
                return 1;
            }
            Ok(n) => {
                if stdout
                    .write_all(&buf[..n])
                    .and_then(|()| stdout.flush())
                    .is_err()
                {
                    return 0;
                }
            }
        }
    }
}

/// The tap's log: lines appended until the bound.
struct Log {
    file: std::fs::File,
    written: u64,
}

impl Log {
    fn line(log: &Mutex<Log>, prefix: &[u8], line: &[u8]) {
        let Ok(mut log) = log.lock() else { return };
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        let size = (prefix.len() + body.len() + 1) as u64;
        if log.written + size > MAX_TAP_BYTES {
            return;
        }
        log.written += size;
        let _ = log
            .file
            .write_all(&[prefix, body, b"\n"].concat())
            .and_then(|()| log.file.flush());
    }
}

/// Copies `from` to `to` line by line, each line also to `log` after `prefix`, until
/// `from` ends or `to` is closed.
fn pump(from: impl Read, mut to: impl Write, log: &Mutex<Log>, prefix: &[u8]) {
    let mut from = BufReader::new(from);
    let mut line = Vec::new();
    while matches!(from.read_until(b'\n', &mut line), Ok(n) if n > 0) {
        Log::line(log, prefix, &line);
        if to.write_all(&line).and_then(|()| to.flush()).is_err() {
            break;
        }
        line.clear();
    }
}

/// `tap LOG -- COMMAND ARGS…`.
fn tap(log: PathBuf, command: &[OsString]) -> i32 {
    let mut name = log.into_os_string();
    name.push(format!(".{}", std::process::id()));
    let log = PathBuf::from(name);
    let file = match std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
    {
        Ok(f) => f,
        Err(e) => {
            complain(format_args!(
                "aptitude {COMMAND} tap: can not open {}: {e}",
                log.display()
            ));
            return 1;
        }
    };
    let log = Arc::new(Mutex::new(Log { file, written: 0 }));
    let mut child = match std::process::Command::new(&command[0])
        .args(&command[1..])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            // As a shell reports it: 127 for a command it can not find, 126 otherwise.
            complain(format_args!(
                "aptitude {COMMAND} tap: can not start {}: {e}",
                command[0].to_string_lossy()
            ));
            return if e.kind() == std::io::ErrorKind::NotFound {
                127
            } else {
                126
            };
        }
    };
    if let Some(to_server) = child.stdin.take() {
        let log = Arc::clone(&log);
        // Dropping `to_server` at the end closes the server's stdin, as the client would.
        std::thread::spawn(move || pump(std::io::stdin().lock(), to_server, &log, b"> "));
    }
    if let Some(from_server) = child.stdout.take() {
        pump(from_server, std::io::stdout().lock(), &log, b"< ");
    }
    match child.wait() {
        Ok(status) => {
            use std::os::unix::process::ExitStatusExt;
            status
                .code()
                .or_else(|| status.signal().map(|s| 128 + s))
                .unwrap_or(1)
        }
        Err(_) => 1,
    }
}
