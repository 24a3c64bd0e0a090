//! A run's MCP servers: the ones the agent starts (watched, and recorded by a tap when the
//! run's model exchange is), the HTTP ones (reached through aptitude's front, which puts
//! their headers on outside the sandbox and records them), and the ones aptitude answers
//! itself — `mock:` servers, and recorded servers replayed from the cassette.
//!
//! - [`watch`]: every stdio server runs under a wrapper that reports a server that failed
//!   to start or crashed; HTTP servers are probed before the agent starts.
//! - [`helper`]: aptitude's binary where the servers run (`__mcp relay`, `__mcp tap`).
//! - [`host`]: the port of 127.0.0.1 the relays connect to, in aptitude's process.
//! - [`http`]: the front of HTTP servers, forwarding, recording or replaying.
//! - [`serve`]: what a mock or a replayed server answers.
//!
//! [`McpRun::start`] turns a test's servers into what the agent is given; every agent with
//! an MCP client gets mocks and replayed stdio servers as ordinary stdio servers and the
//! front as an ordinary HTTP server, so nothing is agent-specific here.

pub mod helper;
pub mod host;
pub mod http;
pub mod serve;
pub mod watch;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::gateway::Replaying;
use crate::gateway::cassette::{Cassette, CassetteError};
use crate::gateway::mcp_record::McpTraffic;
use crate::gateway::normalize::Normalizer;
use crate::spec::{McpMocks, McpServer, McpServers};

use self::host::McpHost;
use self::http::{Front, McpFront};
use self::serve::{Mock, Replay, Served};
use self::watch::{McpWatch, Tap};

/// A run's MCP servers, ready for the agent.
#[derive(Debug, Default)]
pub struct Prepared {
    /// What the agent is given (before the watch's wrapper): the test's servers, with a
    /// relay in place of each server the host answers.
    pub servers: McpServers,
    /// The host answering mocks and replayed stdio servers, when there is any.
    pub host: Option<McpHost>,
    /// The front recording or replaying HTTP servers, when there is any.
    pub front: Option<McpFront>,
    /// The servers whose traffic is recorded, when the run's exchange is.
    pub tap: Option<Tap>,
}

/// Why a run's MCP servers could not be made ready.
#[derive(Debug, thiserror::Error)]
pub enum McpSetupError {
    /// A mock's `from:` cassette can not be read.
    #[error("mcp_servers.{server}.mock.from: {source}")]
    Recording {
        /// The mock.
        server: String,
        /// Why.
        #[source]
        source: CassetteError,
    },
    /// A mock's `from:` cassette holds no traffic of the server it names.
    #[error(
        "mcp_servers.{server}.mock.from: {path} recorded no MCP server `{recorded}` ({})",
        if has.is_empty() { "it recorded none: record a run with MCP servers with `run --record-model`".to_owned() } else { format!("it has {}", has.join(", ")) }
    )]
    NoServer {
        /// The mock.
        server: String,
        /// The cassette.
        path: String,
        /// The server looked for.
        recorded: String,
        /// The servers the cassette has.
        has: Vec<String>,
    },
    /// The host could not listen.
    #[error("aptitude's MCP host can not listen on 127.0.0.1: {0}")]
    Host(#[source] std::io::Error),
    /// An HTTP server's header that can not be sent (a name or value HTTP does not allow,
    /// after `${VAR}` expansion).
    #[error("mcp_servers.{server}.headers.{header}: not a valid HTTP header {what}")]
    Header {
        /// The server.
        server: String,
        /// The header's name.
        header: String,
        /// `name` or `value`.
        what: &'static str,
    },
    /// The watch's records have nowhere to go.
    #[error(transparent)]
    Watch(#[from] watch::NoLogDir),
}

/// A run's MCP servers while the agent runs: prepared ([`prepare`]) and wrapped by the
/// watch ([`McpWatch::wrap`]).
#[derive(Debug)]
pub struct McpRun {
    /// What the agent would be given without the watch: what the sandbox is fenced for
    /// (the servers' programs shown, the host's port forwarded).
    pub servers: McpServers,
    /// What the agent is given: every stdio server under the watch's wrapper.
    pub wrapped: McpServers,
    watch: Option<McpWatch>,
    host: Option<McpHost>,
    front: Option<McpFront>,
    tapped: bool,
}

/// What a run's MCP servers did, once it ended.
#[derive(Debug, Default)]
pub struct McpOutcome {
    /// The tool calls the mocks answered ([`host::HostReport::calls`]).
    pub calls: Vec<crate::transcript::ToolCall>,
    /// Calls answered but not kept ([`host::HostReport::dropped_calls`]).
    pub dropped_calls: u32,
    /// Replayed requests the recording did not hold.
    pub divergences: Vec<String>,
    /// The tapped servers' traffic, for the run's cassette.
    pub recorded: BTreeMap<String, McpTraffic>,
    /// Servers that failed to start or crashed ([`McpWatch::failures`]).
    pub failures: Vec<String>,
}

impl McpRun {
    /// Prepares and wraps the servers of `setup`.
    ///
    /// # Errors
    /// As [`prepare`], and [`McpSetupError::Watch`].
    pub async fn start(setup: Setup<'_>) -> Result<McpRun, McpSetupError> {
        let prepared = prepare(setup).await?;
        let (wrapped, watch) = McpWatch::wrap(&prepared.servers, prepared.tap.as_ref())?;
        Ok(McpRun {
            servers: prepared.servers,
            wrapped,
            watch,
            host: prepared.host,
            front: prepared.front,
            tapped: prepared.tap.is_some(),
        })
    }

    /// The directories the servers write their records to (writable in the sandbox).
    pub fn record_dirs(&self) -> Vec<PathBuf> {
        self.watch.iter().map(|w| w.dir().to_owned()).collect()
    }

    /// Stops the host and reads the records; `paths` tokenises the run's paths in the
    /// recorded traffic.
    pub fn finish(self, paths: &Normalizer) -> McpOutcome {
        let served = self.host.map(McpHost::finish).unwrap_or_default();
        let tokens = |s: &str| paths.paths(s);
        let mut recorded = match &self.watch {
            Some(w) if self.tapped => w.traffic(&tokens),
            _ => BTreeMap::new(),
        };
        let fronted = self.front.map(|f| f.finish(&tokens)).unwrap_or_default();
        recorded.extend(fronted.recorded);
        let mut divergences = served.divergences;
        divergences.extend(fronted.divergences);
        McpOutcome {
            calls: served.calls,
            dropped_calls: served.dropped_calls,
            divergences,
            recorded,
            failures: self.watch.map(|w| w.failures()).unwrap_or_default(),
        }
    }
}

/// What [`prepare`] works from.
#[derive(Debug, Clone, Copy)]
pub struct Setup<'a> {
    /// The test's servers, `${VAR}` expanded.
    pub servers: &'a McpServers,
    /// Its `mock:` servers.
    pub mocks: &'a McpMocks,
    /// The cassette the run replays, when it does: a stdio server it recorded is answered
    /// from it, unless a miss goes live (`--replay-miss live`, and reuse), where the real
    /// server runs.
    pub replay: Option<&'a Replaying>,
    /// Whether the run's exchange is recorded: its real stdio servers are tapped.
    pub record: bool,
    /// aptitude's binary as the servers see it (inside the sandbox, where it is mounted).
    pub helper: &'a Path,
    /// The run's paths, normalised in recordings.
    pub paths: &'a Normalizer,
}

/// The agent's servers for a run: each mock and each replayed server becomes a relay to a
/// host started now; with `record`, every other stdio server is tapped.
///
/// # Errors
/// [`McpSetupError`]: a `from:` recording that can not be read or lacks its server, or a
/// host that can not listen.
pub async fn prepare(setup: Setup<'_>) -> Result<Prepared, McpSetupError> {
    let mut servers = setup.servers.clone();
    let mut served: BTreeMap<String, Served> = BTreeMap::new();
    for (name, mock) in setup.mocks {
        let recording = match &mock.from {
            Some(from) => Some(recorded(name, &from.cassette, &from.server)?),
            None => None,
        };
        let mock = Mock::new(name, mock, recording.as_ref(), setup.paths.clone());
        served.insert(name.clone(), Served::Mock(mock));
    }
    let mut fronted: BTreeMap<String, Front> = BTreeMap::new();
    let replayed = setup
        .replay
        .filter(|r| r.miss == crate::gateway::ReplayMiss::Error)
        .map(|r| &r.cassette.mcp);
    for (name, server) in &servers {
        let replay = replayed
            .and_then(|m| m.get(name))
            .map(|traffic| Served::Replay(Replay::new(name, traffic, setup.paths.clone())));
        match (server, replay) {
            (McpServer::Stdio { .. }, Some(replay)) => {
                served.insert(name.clone(), replay);
            }
            (McpServer::Http { .. }, Some(replay)) => {
                fronted.insert(name.clone(), Front::Replay(replay));
            }
            // Every HTTP server goes through the front: its headers stay outside the sandbox.
            (McpServer::Http { url, headers }, None) => {
                check_headers(name, headers)?;
                let forward = Front::Forward {
                    url: url.clone(),
                    headers: headers.clone(),
                    record: setup.record,
                };
                fronted.insert(name.clone(), forward);
            }
            _ => {}
        }
    }
    servers.retain(|name, _| !served.contains_key(name));
    let tap = setup.record.then(|| Tap {
        helper: setup.helper.to_owned(),
        servers: servers
            .iter()
            .filter(|(_, s)| matches!(s, McpServer::Stdio { .. }))
            .map(|(n, _)| n.clone())
            .collect(),
    });
    let front = if fronted.is_empty() {
        None
    } else {
        let names: Vec<String> = fronted.keys().cloned().collect();
        let front = McpFront::start(fronted)
            .await
            .map_err(McpSetupError::Host)?;
        for name in names {
            let url = front.url(&name);
            servers.insert(
                name,
                McpServer::Http {
                    url,
                    headers: BTreeMap::new(),
                },
            );
        }
        Some(front)
    };
    let host = if served.is_empty() {
        None
    } else {
        let names: Vec<String> = served.keys().cloned().collect();
        let host = McpHost::start(served).await.map_err(McpSetupError::Host)?;
        for name in names {
            let relay = relay(setup.helper, &name, host.url());
            servers.insert(name, relay);
        }
        Some(host)
    };
    Ok(Prepared {
        servers,
        host,
        front,
        tap,
    })
}

/// Every header of `server` is one HTTP can carry: the front puts them on, and one that
/// could not be sent must not be dropped without a word.
fn check_headers(server: &str, headers: &BTreeMap<String, String>) -> Result<(), McpSetupError> {
    for (name, value) in headers {
        let what = if hyper::header::HeaderName::try_from(name.as_str()).is_err() {
            "name"
        } else if hyper::header::HeaderValue::try_from(value.as_str()).is_err() {
            "value"
        } else {
            continue;
        };
        return Err(McpSetupError::Header {
            server: server.to_owned(),
            header: name.clone(),
            what,
        });
    }
    Ok(())
}

/// The traffic of `server` in the cassette file at `path`, for the mock `mock`.
fn recorded(mock: &str, path: &Path, server: &str) -> Result<McpTraffic, McpSetupError> {
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| McpSetupError::Recording {
        server: mock.to_owned(),
        source: CassetteError::Read {
            path: shown.clone(),
            source,
        },
    })?;
    let mut cassette =
        Cassette::from_bytes(&bytes, &shown).map_err(|source| McpSetupError::Recording {
            server: mock.to_owned(),
            source,
        })?;
    cassette
        .mcp
        .remove(server)
        .ok_or_else(|| McpSetupError::NoServer {
            server: mock.to_owned(),
            path: shown,
            recorded: server.to_owned(),
            has: cassette.mcp.keys().cloned().collect(),
        })
}

/// `servers` and, under their names, `mocks` as the relays a run gives the agent for
/// them: what names the MCP calls of a transcript read from a file (`aptitude analyze`).
pub fn with_mocks(servers: &McpServers, mocks: &McpMocks) -> McpServers {
    let mut all = servers.clone();
    for name in mocks.keys() {
        all.insert(
            name.clone(),
            relay(Path::new("aptitude"), name, String::new()),
        );
    }
    all
}

/// The stdio server that stands for `name`: the helper's relay to the host at `url`.
fn relay(helper: &Path, name: &str, url: String) -> McpServer {
    McpServer::Stdio {
        command: path_text(helper),
        args: vec![
            helper::COMMAND.to_owned(),
            "relay".to_owned(),
            name.to_owned(),
        ],
        env: [(helper::HOST_VAR.to_owned(), url)].into(),
    }
}

/// A server of the run listening on a fresh port of 127.0.0.1 (the host, the front):
/// stopped, with every connection, when dropped.
#[derive(Debug)]
struct Serving {
    addr: std::net::SocketAddr,
    shutdown: tokio_util::sync::CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Serving {
    fn drop(&mut self) {
        self.shutdown.cancel();
        self.task.abort();
    }
}

impl Serving {
    /// Binds a port and spawns `serve` on it, which returns once the token it is given
    /// is cancelled.
    ///
    /// # Errors
    /// When no port can be bound.
    async fn start<F, Fut>(serve: F) -> std::io::Result<Serving>
    where
        F: FnOnce(tokio::net::TcpListener, tokio_util::sync::CancellationToken) -> Fut,
        Fut: std::future::Future<Output = ()> + Send + 'static,
    {
        let listener =
            tokio::net::TcpListener::bind(std::net::SocketAddr::from(([127, 0, 0, 1], 0))).await?;
        let addr = listener.local_addr()?;
        let shutdown = tokio_util::sync::CancellationToken::new();
        let task = tokio::spawn(serve(listener, shutdown.clone()));
        Ok(Serving {
            addr,
            shutdown,
            task,
        })
    }
}

fn path_text(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// aptitude's binary as a run's MCP servers see it: where the sandbox mounts it
/// ([`crate::sandbox::INIT_PATH`]) when the run is fenced by bubblewrap, else on the host.
///
/// # Errors
/// When aptitude's own binary can not be found.
pub fn helper_for(fenced: bool) -> Result<PathBuf, crate::sandbox::SandboxError> {
    if fenced && cfg!(target_os = "linux") {
        Ok(PathBuf::from(crate::sandbox::INIT_PATH))
    } else {
        crate::sandbox::helper_binary()
    }
}
