//! MCP server watch: one mechanism, in the executor, that sees a test's stdio MCP server
//! fail to start or crash on every agent, whatever the agent itself reports.
//!
//! Agents go on without a server that fails (Claude Code lists it `failed` in its init
//! event; the others mostly say nothing in their output), and the test would then fail
//! for a reason it does not show. So each stdio server is handed to the agent wrapped in
//! [`WRAPPER`], a POSIX `sh` script that runs the real command with its stderr appended to
//! a per-run file and, when the command ends on its own, appends its exit status to
//! another. A wrapper stopped by a signal (the agent closing its servers, the run's kill
//! sweep) records nothing, so teardown is never taken for a crash. After the run,
//! [`McpWatch::failures`] reads the records: a server that exited with a status from 1 to
//! 127 (including 127, "command not found", and 126, "not executable") is a failure
//! naming the server, with the end of its stderr.
//!
//! The wrapper and the server stay in the agent's process group and the run's jail
//! ([`super::super::contain`]): the process-group guarantee is unchanged.
//!
//! HTTP servers are not started by aptitude; [`probe_http`] checks before the agent starts
//! that each one accepts a connection, so that a server that is not there is an error
//! naming it rather than an agent quietly working without it.

use std::path::{Path, PathBuf};

use std::collections::BTreeMap;

use crate::gateway::mcp_record::{McpTraffic, from_tap};
use crate::spec::{McpServer, McpServers};

/// The servers whose traffic a run records, and the tap's program as the servers see it
/// (aptitude's binary: inside the sandbox, where it is mounted).
#[derive(Debug, Clone)]
pub struct Tap {
    /// aptitude's binary.
    pub helper: PathBuf,
    /// The servers to tap, by name.
    pub servers: Vec<String>,
}

/// The wrapper: `sh -c WRAPPER aptitude-mcp <stderr file> <status file> <command> <args…>`.
///
/// The command runs in the background so that the wrapper can forward the signals it gets
/// (the agent stops its servers by signalling its direct child, which is the wrapper);
/// its stdin is passed on explicitly through fd 3, because a background command of a
/// non-interactive shell otherwise reads `/dev/null`. SIGINT is forwarded as SIGTERM: a
/// background command of a non-interactive shell ignores SIGINT.
pub const WRAPPER: &str = r#"log=$1; status=$2; shift 2; pid=
trap '[ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null; exit 143' TERM
trap '[ -n "$pid" ] && kill -HUP "$pid" 2>/dev/null; exit 129' HUP
trap '[ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null; exit 130' INT
exec 3<&0
"$@" <&3 3<&- 2>>"$log" &
pid=$!
exec 3<&-
wait "$pid"
code=$?
printf '%s\n' "$code" >>"$status"
exit "$code"
"#;

/// How much of a failed server's stderr a failure message keeps, in chars (the end).
const STDERR_CHARS: usize = 1000;

/// How much of the end of a server's stderr file is read, in bytes.
const STDERR_BYTES: u64 = 64 * 1024;

/// The records of one run's stdio servers, in a temp dir removed when dropped.
#[derive(Debug)]
pub struct McpWatch {
    dir: tempfile::TempDir,
    names: Vec<String>,
}

impl McpWatch {
    /// The directory of the servers' records, which the run writes.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// `servers` with each stdio server's command replaced by the wrapper, and the watch
    /// that reads their records; `None` when there is no stdio server to watch. The servers
    /// `tap` names also run under aptitude's tap ([`super::helper`]), which records their
    /// traffic for the run's cassette ([`McpWatch::traffic`]).
    ///
    /// # Errors
    /// [`NoLogDir`] when the temp dir for the records can not be created.
    pub fn wrap(
        servers: &McpServers,
        tap: Option<&Tap>,
    ) -> Result<(McpServers, Option<McpWatch>), NoLogDir> {
        if !servers
            .values()
            .any(|s| matches!(s, McpServer::Stdio { .. }))
        {
            return Ok((servers.clone(), None));
        }
        let dir = tempfile::Builder::new()
            .prefix("aptitude-mcp-")
            .tempdir()
            .map_err(NoLogDir)?;
        let mut names = Vec::new();
        let wrapped = servers
            .iter()
            .map(|(name, server)| {
                let server = match server {
                    McpServer::Stdio { command, args, env } => {
                        names.push(name.clone());
                        let mut wrapped_args = vec![
                            "-c".to_owned(),
                            WRAPPER.to_owned(),
                            "aptitude-mcp".to_owned(),
                            path_text(&stderr_file(dir.path(), name)),
                            path_text(&status_file(dir.path(), name)),
                        ];
                        if let Some(tap) = tap.filter(|t| t.servers.contains(name)) {
                            wrapped_args.extend([
                                path_text(&tap.helper),
                                super::helper::COMMAND.to_owned(),
                                "tap".to_owned(),
                                path_text(&tap_file(dir.path(), name)),
                                "--".to_owned(),
                            ]);
                        }
                        wrapped_args.push(command.clone());
                        wrapped_args.extend(args.iter().cloned());
                        McpServer::Stdio {
                            command: "/bin/sh".to_owned(),
                            args: wrapped_args,
                            env: env.clone(),
                        }
                    }
                    http @ McpServer::Http { .. } => http.clone(),
                };
                (name.clone(), server)
            })
            .collect();
        Ok((wrapped, Some(McpWatch { dir, names })))
    }

    /// The traffic each tapped server's taps recorded (one file per process the agent
    /// started it in, read in name order), by server name, the run's paths tokenised by
    /// `paths`; a server whose tap wrote nothing (it never started) is left out.
    pub fn traffic(&self, paths: &dyn Fn(&str) -> String) -> BTreeMap<String, McpTraffic> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(self.dir.path())
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .collect();
        files.sort();
        self.names
            .iter()
            .filter_map(|name| {
                let prefix = format!("{name}.tap.");
                let mut traffic = McpTraffic::default();
                let mut any = false;
                for file in files.iter().filter(|f| {
                    f.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with(&prefix))
                }) {
                    let Some(log) = read_record(file, super::helper::MAX_TAP_BYTES) else {
                        continue;
                    };
                    let one = from_tap(&String::from_utf8_lossy(&log), paths);
                    traffic.exchanges.extend(one.exchanges);
                    traffic.dropped += one.dropped;
                    any = true;
                }
                any.then(|| (name.clone(), traffic))
            })
            .collect()
    }

    /// One message per server that exited on its own with a non-zero status, in name
    /// order: "MCP server `docs` exited with status 1: <end of its stderr>" (127: "could
    /// not start (command not found)"). Not redacted here: results are redacted as a whole.
    pub fn failures(&self) -> Vec<String> {
        self.names
            .iter()
            .filter_map(|name| {
                let statuses = read_record(&status_file(self.dir.path(), name), 4096)?;
                let statuses = String::from_utf8_lossy(&statuses);
                let code = statuses
                    .lines()
                    .filter_map(|l| l.trim().parse::<i32>().ok())
                    .find(|c| (1..=127).contains(c))?;
                let stderr = read_record(&stderr_file(self.dir.path(), name), STDERR_BYTES)
                    .unwrap_or_default();
                let stderr = String::from_utf8_lossy(&stderr);
                let stderr = stderr.trim();
                let tail = tail(stderr, STDERR_CHARS);
                let what = match code {
                    127 => "could not start (exit status 127: command not found)".to_owned(),
                    126 => "could not start (exit status 126: not executable)".to_owned(),
                    c => format!("exited with status {c}"),
                };
                Some(if tail.is_empty() {
                    format!("MCP server `{name}` {what}, with no stderr")
                } else {
                    format!("MCP server `{name}` {what}: {tail}")
                })
            })
            .collect()
    }
}

/// The last `max_chars` characters of `text`; a tail whose start was cut goes through
/// [`crate::shared::cut::after_cut_start`], so no half secret is shown.
fn tail(text: &str, max_chars: usize) -> String {
    let count = text.chars().count();
    if count <= max_chars {
        return text.to_owned();
    }
    let start = text
        .char_indices()
        .nth(count - max_chars)
        .map_or(0, |(i, _)| i);
    crate::shared::cut::after_cut_start(&text[start..])
}

/// How long [`probe_http`] waits for a connection to each address of a server.
const PROBE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// The temp dir for the MCP servers' records could not be created.
#[derive(Debug, thiserror::Error)]
#[error("can not create a temp dir for the MCP servers' logs: {0}")]
pub struct NoLogDir(#[source] pub std::io::Error);

/// An MCP HTTP server that did not accept a connection before the agent started.
#[derive(Debug, thiserror::Error)]
#[error("MCP server `{name}` at {url} does not answer: {why}")]
pub struct McpUnanswered {
    /// The server's name in the test's `mcp_servers`.
    pub name: String,
    /// Its URL without user info (as given when it does not parse).
    pub url: String,
    /// Why.
    #[source]
    pub why: Unanswered,
}

/// Why an MCP HTTP server did not answer [`probe_http`].
#[derive(Debug, thiserror::Error)]
pub enum Unanswered {
    /// The URL does not parse.
    #[error("{0}")]
    Url(#[from] url::ParseError),
    /// Its host name does not resolve.
    #[error("can not resolve {host}: {source}")]
    Resolve {
        /// The host.
        host: String,
        /// The resolver's error.
        source: std::io::Error,
    },
    /// Its host name resolves to no address.
    #[error("{0} has no address")]
    NoAddress(String),
    /// No address accepted a connection within [`PROBE_TIMEOUT`] (the last one's error).
    #[error("{addr}: {source}")]
    Connect {
        /// The last address tried.
        addr: std::net::SocketAddr,
        /// Its error.
        source: std::io::Error,
    },
    /// The probe's thread ended abnormally.
    #[error("the probe did not finish: {0}")]
    Probe(#[from] tokio::task::JoinError),
}

/// Checks that every HTTP server of `servers` (already `${VAR}`-expanded) accepts a TCP
/// connection at its URL's host and port (80/443 by default), within [`PROBE_TIMEOUT`]
/// per address.
///
/// # Errors
/// [`McpUnanswered`] ("MCP server `docs` at http://host:port/… does not answer: <why>") for
/// the first server that does not (a malformed URL included). The URL is shown without
/// its user info.
pub async fn probe_http(servers: &McpServers) -> Result<(), McpUnanswered> {
    for (name, server) in servers {
        let McpServer::Http { url, .. } = server else {
            continue;
        };
        let unanswered = |url: String, why: Unanswered| McpUnanswered {
            name: name.clone(),
            url,
            why,
        };
        let parsed = url::Url::parse(url).map_err(|e| unanswered(url.clone(), e.into()))?;
        let mut shown = parsed.clone();
        let _ = shown.set_username("");
        let _ = shown.set_password(None);
        let host = parsed.host_str().unwrap_or_default().to_owned();
        let port = parsed.port_or_known_default().unwrap_or(80);
        tokio::task::spawn_blocking(move || connect(&host, port))
            .await
            .map_err(Unanswered::from)
            .and_then(|connected| connected)
            .map_err(|why| unanswered(shown.to_string(), why))?;
    }
    Ok(())
}

/// Connects to `host:port` (each resolved address in turn); the last error otherwise.
fn connect(host: &str, port: u16) -> Result<(), Unanswered> {
    use std::net::ToSocketAddrs;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let addrs = (host, port)
        .to_socket_addrs()
        .map_err(|source| Unanswered::Resolve {
            host: host.to_owned(),
            source,
        })?;
    let mut last = Unanswered::NoAddress(host.to_owned());
    for addr in addrs {
        match std::net::TcpStream::connect_timeout(&addr, PROBE_TIMEOUT) {
            Ok(_) => return Ok(()),
            Err(source) => last = Unanswered::Connect { addr, source },
        }
    }
    Err(last)
}

fn stderr_file(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.stderr"))
}

fn status_file(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.status"))
}

/// The prefix of a server's tap files: each tap process appends `.<pid>`.
fn tap_file(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.tap"))
}

/// The last `max` bytes of a record the run wrote (`None` when there is none). The
/// directory is writable from the sandbox, so the agent may have put anything there: a
/// link is not followed, a FIFO or a device is not read (opening does not block), only a
/// regular file is.
fn read_record(path: &Path, max: u64) -> Option<Vec<u8>> {
    use std::io::{Read, Seek};
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() {
        return None;
    }
    file.seek(std::io::SeekFrom::Start(meta.len().saturating_sub(max)))
        .ok()?;
    let mut bytes = Vec::new();
    file.take(max).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

fn path_text(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::process::{Command, Stdio};

    use super::*;

    #[test]
    fn a_record_is_read_only_from_a_regular_file_and_only_its_end() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.stderr");
        std::fs::write(&file, "0123456789").unwrap();
        assert_eq!(read_record(&file, 4).unwrap(), b"6789");
        assert_eq!(read_record(&file, 100).unwrap(), b"0123456789");
        // What an agent could put in the writable directory instead.
        let link = dir.path().join("link.tap.1");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert!(read_record(&link, 100).is_none(), "a link is not followed");
        let fifo = dir.path().join("fifo.tap.1");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert!(read_record(&fifo, 100).is_none(), "a FIFO is not waited on");
        assert!(read_record(&dir.path().join("none"), 100).is_none());
    }

    fn stdio(command: &str, args: &[&str]) -> McpServer {
        McpServer::Stdio {
            command: command.into(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            env: BTreeMap::new(),
        }
    }

    /// Starts the wrapped server `name` the way an agent does (stdin and stdout piped).
    fn start(servers: &McpServers, name: &str) -> std::process::Child {
        let McpServer::Stdio { command, args, .. } = &servers[name] else {
            panic!("{name} is not stdio");
        };
        Command::new(command)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    }

    use std::collections::BTreeMap;

    #[test]
    fn a_server_that_exits_non_zero_is_a_failure_with_its_stderr_and_http_is_left_alone() {
        let servers: McpServers = [
            (
                "docs".to_owned(),
                stdio("sh", &["-c", "echo 'index missing' >&2; exit 3"]),
            ),
            ("gone".to_owned(), stdio("/nonexistent/server", &[])),
            ("fine".to_owned(), stdio("sh", &["-c", "exit 0"])),
            (
                "web".to_owned(),
                McpServer::Http {
                    url: "http://127.0.0.1:9/mcp".into(),
                    headers: BTreeMap::new(),
                },
            ),
        ]
        .into();
        let (wrapped, watch) = McpWatch::wrap(&servers, None).unwrap();
        let watch = watch.unwrap();
        assert_eq!(wrapped["web"], servers["web"]);
        for name in ["docs", "gone", "fine"] {
            start(&wrapped, name).wait().unwrap();
        }
        let failures = watch.failures();
        assert_eq!(failures.len(), 2, "{failures:?}");
        assert_eq!(
            failures[0],
            "MCP server `docs` exited with status 3: index missing"
        );
        assert!(
            failures[1].starts_with(
                "MCP server `gone` could not start (exit status 127: command not found): "
            ) && failures[1].contains("/nonexistent/server"),
            "{}",
            failures[1]
        );
    }

    #[tokio::test]
    async fn an_http_server_that_does_not_answer_is_named_and_one_that_does_passes() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let open = listener.local_addr().unwrap().port();
        let closed = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let http = |port: u16| McpServer::Http {
            url: format!("http://user:pw@127.0.0.1:{port}/mcp"),
            headers: BTreeMap::new(),
        };
        let up: McpServers = [("up".to_owned(), http(open))].into();
        assert!(probe_http(&up).await.is_ok());
        let down: McpServers = [
            ("up".to_owned(), http(open)),
            ("down".to_owned(), http(closed)),
        ]
        .into();
        let err = probe_http(&down).await.unwrap_err().to_string();
        assert!(
            err.starts_with(&format!(
                "MCP server `down` at http://127.0.0.1:{closed}/mcp does not answer: "
            )),
            "{err}"
        );
        drop(listener);
    }

    /// The server reads the agent's stdin and writes its stdout through the wrapper; a
    /// wrapper stopped by SIGTERM (the agent closing its servers) records nothing.
    #[test]
    fn stdio_passes_through_and_a_stopped_server_is_no_failure() {
        let servers: McpServers = [
            (
                "echo".to_owned(),
                stdio("sh", &["-c", "read line; echo \"got $line\"; exit 5"]),
            ),
            ("stuck".to_owned(), stdio("sleep", &["600"])),
        ]
        .into();
        let (wrapped, watch) = McpWatch::wrap(&servers, None).unwrap();
        let watch = watch.unwrap();
        let mut echo = start(&wrapped, "echo");
        echo.stdin.take().unwrap().write_all(b"ping\n").unwrap();
        let out = echo.wait_with_output().unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "got ping\n");
        let mut stuck = start(&wrapped, "stuck");
        // The wrapper records only after `wait`, so a status file can not exist yet;
        // SIGTERM reaches the wrapper (the agent's direct child), which forwards it.
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(i32::try_from(stuck.id()).unwrap()),
            nix::sys::signal::Signal::SIGTERM,
        )
        .unwrap();
        stuck.wait().unwrap();
        assert_eq!(
            watch.failures(),
            ["MCP server `echo` exited with status 5, with no stderr"]
        );
    }
}
