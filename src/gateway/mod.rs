//! The model gateway: every agent run talks to its model through aptitude, never directly.
//!
//! `Gateway::start(run) -> Endpoint`: each agent run (and each grading call) gets its own
//! listener on `127.0.0.1:0`, plain HTTP/1.1, that speaks the provider's wire protocol
//! ([`protocol`]: Anthropic Messages, OpenAI Responses and Chat Completions, Gemini) enough
//! to forward and meter it. The agent is pointed at the endpoint through its own base-URL
//! mechanism with a **placeholder** credential; the gateway forwards each request to the
//! real upstream (the test's `base_url:` / `--agent-base-url`, or the provider's default
//! host) with the **real** key put where the placeholder was, so the real key never enters
//! the agent's environment. Replies stream through as they come (no buffering): the
//! gateway reads them on the way ([`meter`]).
//!
//! It is the one place that, for every agent alike:
//! - meters each run's requests, tokens and cost ([`Traffic`], results JSON's
//!   `model_traffic`; cost from a price table, [`price`], for agents that report none);
//! - enforces `--max-cost` / `--max-tokens` in the middle of a run ([`budget`]): a
//!   request that would cross a ceiling gets a provider-shaped 400 error, which no agent
//!   retries, and [`Endpoint::stopped`] fires so the run can be ended as `error`, kind
//!   `budget`;
//! - counts the agent's own retries (a request repeating an earlier failed one);
//! - registers each real key it injects with the redactor
//!   ([`crate::shared::redact::register_secret`]).
//!
//! One HTTP client with its connection pool serves every run ([`Gateway`] is cheap to
//! clone). One port per run makes metering per run trivial, and the sandbox can expose
//! exactly that port to the agent. What the gateway adds per request is measured by
//! `cargo bench --bench gateway_latency`.

pub mod budget;
pub mod cassette;
mod encoding;
pub mod mcp_record;
pub mod meter;
pub mod normalize;
pub mod price;
pub mod protocol;
pub mod scope;
pub(crate) mod server;
pub mod sse;
pub mod stub;
mod tape;
pub mod traffic;
pub mod unordered;
pub mod wire;
pub mod witness;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

pub use budget::Limits;
pub use traffic::{ModelRequest, Traffic};

/// Why a run's endpoint could not start.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// The upstream URL is not an absolute `http` or `https` URL.
    #[error("the model endpoint `{url}` is not an http(s) URL: {why}")]
    Upstream {
        /// The URL as given (credentials removed).
        url: String,
        /// What is wrong with it.
        why: String,
    },
    /// No port on 127.0.0.1 could be bound.
    #[error("the model gateway can not listen on 127.0.0.1: {0}")]
    Bind(#[source] std::io::Error),
}

/// How the gateway runs, for a whole aptitude run.
#[derive(Debug, Clone, Default)]
pub struct GatewayOptions {
    /// The spend ceilings enforced request by request.
    pub limits: Limits,
    /// Record each run's exchange as a cassette (`run --record-model`).
    pub record: Option<RecordTo>,
    /// Redacts what cassettes hold (besides the secrets every redactor knows: token
    /// shapes, aptitude's environment, registered values), e.g. the tests' `env:`.
    pub redactor: Option<crate::shared::redact::Redactor>,
}

/// Where cassettes are written.
#[derive(Debug, Clone)]
pub struct RecordTo {
    /// The directory (`…/results.cassettes`).
    pub dir: PathBuf,
    /// How results JSON names it, relative to the results file (`results.cassettes`).
    pub prefix: String,
}

/// A run answered from a cassette, and what it does with a request the cassette does not
/// hold.
#[derive(Debug, Clone)]
pub struct Replaying {
    /// The cassette.
    pub cassette: Arc<cassette::Cassette>,
    /// On a miss.
    pub miss: ReplayMiss,
}

/// What a replaying run does with a request its cassette does not hold (`--replay-miss`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ReplayMiss {
    /// The request is refused with a provider-shaped error and the run ends `error`,
    /// naming the divergence.
    #[default]
    Error,
    /// The request (and every later one) goes to the real model; the divergence is
    /// noted.
    Live,
}

/// The gateway of one aptitude run: the shared HTTP client and the spend ledger. Cheap to
/// clone; each run calls [`Gateway::start`].
#[derive(Clone)]
pub struct Gateway {
    shared: Arc<server::Shared>,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("limits", &self.shared.limits)
            .finish_non_exhaustive()
    }
}

/// One run's use of the gateway.
#[derive(Debug, Clone, Default)]
pub struct RunGateway {
    /// Where requests go: a base URL (`https://api.anthropic.com`,
    /// `http://127.0.0.1:8080/v1`). Its path is kept in the endpoint's base URL, so the
    /// agent's request paths are forwarded unchanged.
    pub upstream: String,
    /// The real credentials, in the order of the placeholders [`Endpoint::placeholders`]
    /// gives for them.
    pub secrets: Vec<String>,
    /// The names of the variables that hold the placeholders, recorded in the cassette.
    pub credentials: Vec<String>,
    /// The run's workspace copy and private home, normalised in cassettes.
    pub paths: normalize::Normalizer,
    /// The cassette to answer from (`run --replay`).
    pub replay: Option<Replaying>,
    /// When the run ends (a routing suite's `stop:`). With [`Stop::FirstCall`], once a
    /// reply has asked for a tool call (the agent's first decision) every later request
    /// is held unanswered and [`Endpoint::decided`] fires: nothing after the decision
    /// reaches the upstream, or, replaying, is looked for in the cassette, however fast
    /// the agent moves on before it is stopped.
    ///
    /// [`Stop::FirstCall`]: crate::spec::routing::Stop::FirstCall
    pub stop: crate::spec::routing::Stop,
    /// Skills to look for in the model requests, as (name, text a request that showed the
    /// skill holds): those found are [`wire::Wire::skills_shown`].
    pub watch_skills: Vec<(String, String)>,
    /// The protocols the run's agent speaks ([`crate::agent::ModelRoute::protocols`]): a
    /// request for an endpoint of another is refused ([`scope::admit`]). Empty: every
    /// protocol.
    pub protocols: Vec<protocol::Protocol>,
    /// The test's `network:` hosts (as the sandbox's proxy reads them): a request may have
    /// the provider fetch a URL on these only ([`scope::provider_fetches`]).
    pub network: Vec<String>,
}

/// A run's endpoint, listening until dropped (or [`Endpoint::finish`]ed).
pub struct Endpoint {
    addr: SocketAddr,
    path: String,
    shared: Arc<server::Shared>,
    run: Arc<server::RunState>,
    shutdown: CancellationToken,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        // Stops accepting and drops every connection task (they live in the server's set).
        self.shutdown.cancel();
        self.server.abort();
    }
}

/// A placeholder credential, unique to one run and position: what the agent holds instead
/// of a real key (`aptitude-gateway-placeholder-0-<16 hex>`).
fn placeholder(index: usize) -> String {
    use sha2::Digest;
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let digest = sha2::Sha256::digest(format!("{}:{n}:{now}:{index}", std::process::id()));
    let hex = crate::shared::hex(&digest[..8]);
    format!("aptitude-gateway-placeholder-{index}-{hex}")
}

impl Gateway {
    /// A gateway enforcing `options.limits`. TLS roots (the system's) are loaded on the
    /// first `https` request.
    pub fn new(options: GatewayOptions) -> Self {
        Gateway {
            shared: Arc::new(server::Shared::new(options)),
        }
    }

    /// Starts a run's endpoint on a fresh port of 127.0.0.1, forwarding to `run.upstream`.
    /// Each real credential is registered with the redactor.
    ///
    /// # Errors
    /// [`GatewayError::Upstream`] for a URL that is not http(s), [`GatewayError::Bind`]
    /// when no port can be bound.
    pub async fn start(&self, run: RunGateway) -> Result<Endpoint, GatewayError> {
        let upstream = server::Upstream::parse(&run.upstream)?;
        for secret in &run.secrets {
            crate::shared::redact::register_secret(secret);
        }
        let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
            .await
            .map_err(GatewayError::Bind)?;
        let addr = listener.local_addr().map_err(GatewayError::Bind)?;
        let secrets = run
            .secrets
            .into_iter()
            .enumerate()
            .map(|(i, real)| (placeholder(i), real))
            .collect();
        let path = upstream.path.clone();
        let state = Arc::new(server::RunState {
            log: Mutex::new(traffic::RunLog::new(upstream.display())),
            wire: Mutex::new(wire::Wire::default()),
            upstream,
            secrets,
            credentials: run.credentials,
            stop: CancellationToken::new(),
            hold_after_call: run.stop == crate::spec::routing::Stop::FirstCall,
            watch_skills: run.watch_skills,
            speaks: run.protocols,
            network: run.network,
            decided: CancellationToken::new(),
            normalizer: run.paths,
            recorder: self
                .shared
                .record
                .is_some()
                .then(|| Mutex::new(cassette::Recorder::default())),
            replay_miss: run.replay.as_ref().map_or(ReplayMiss::Error, |r| r.miss),
            player: run
                .replay
                .map(|r| Mutex::new(cassette::Player::new(r.cassette))),
        });
        let shutdown = CancellationToken::new();
        let server = tokio::spawn(server::serve(
            listener,
            Arc::clone(&self.shared),
            Arc::clone(&state),
            shutdown.clone(),
        ));
        Ok(Endpoint {
            addr,
            path,
            shared: Arc::clone(&self.shared),
            run: state,
            shutdown,
            server,
        })
    }

    /// Whether runs' exchanges are recorded (`run --record-model`).
    pub fn records(&self) -> bool {
        self.shared.record.is_some()
    }

    /// Tokens and USD spent through the gateway so far, by every run.
    pub fn spent(&self) -> (u64, f64) {
        self.shared.spent()
    }
}

impl Endpoint {
    /// The base URL the agent is given: `http://127.0.0.1:PORT` and the upstream's path
    /// (`/v1` for an upstream `https://api.openai.com/v1`).
    pub fn base_url(&self) -> String {
        format!("http://{}{}", self.addr, self.path)
    }

    /// The address listened on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The placeholder credentials, one per [`RunGateway::secrets`] entry, in order: what
    /// the agent is given instead of the real values.
    pub fn placeholders(&self) -> Vec<String> {
        self.run.secrets.iter().map(|(p, _)| p.clone()).collect()
    }

    /// Fires when the gateway refused a request — for the budget, or because it diverged
    /// from the cassette being replayed: the run can not go on.
    pub fn stopped(&self) -> CancellationToken {
        self.run.stop.clone()
    }

    /// Whether the run's exchange is recorded (`run --record-model`).
    pub fn records(&self) -> bool {
        self.shared.record.is_some()
    }

    /// Fires when a run stopped at its first call ([`RunGateway::stop`]) sent a request
    /// after a reply that asked for a tool call: its decision is made, the request is held,
    /// and the run can be stopped.
    pub fn decided(&self) -> CancellationToken {
        self.run.decided.clone()
    }

    /// The run's traffic so far.
    pub fn traffic(&self) -> Traffic {
        self.run.traffic()
    }

    /// Stops listening, ends the requests still open (a reply still streaming counts as
    /// cut) and returns the run's traffic.
    pub async fn finish(self) -> Traffic {
        self.finish_with(BTreeMap::new(), Vec::new()).await.0
    }

    /// [`Endpoint::finish`], the run's cassette (when it is recorded) also holding `mcp`,
    /// the traffic of its stdio MCP servers by server name, and `user`, the replies of the
    /// test's simulated user; and the run's wire, what the transcript is checked against
    /// ([`witness::check`]).
    pub async fn finish_with(
        mut self,
        mcp: BTreeMap<String, mcp_record::McpTraffic>,
        user: Vec<cassette::UserReply>,
    ) -> (Traffic, wire::Wire) {
        self.shutdown.cancel();
        let _ = (&mut self.server).await;
        let wire = std::mem::take(
            &mut *self
                .run
                .wire
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        (self.finish_traffic(mcp, user).await, wire)
    }

    async fn finish_traffic(
        &self,
        mcp: BTreeMap<String, mcp_record::McpTraffic>,
        user: Vec<cassette::UserReply>,
    ) -> Traffic {
        let mut traffic = self.run.traffic();
        let (Some(to), Some(recorder)) = (&self.shared.record, &self.run.recorder) else {
            return traffic;
        };
        let recorded = std::mem::take(
            &mut *recorder
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        let mut cassette = recorded.finish(traffic.upstream.clone(), self.run.credentials.clone());
        cassette.mcp = mcp;
        cassette.user = user;
        let (to, redactor) = (to.clone(), self.shared.redactor.clone());
        let written =
            tokio::task::spawn_blocking(move || cassette.write(&to.dir, &to.prefix, &redactor))
                .await;
        match written {
            Ok(Ok(reference)) => traffic.cassette = Some(reference),
            Ok(Err(e)) => traffic.cassette_error = Some(format!("not recorded: {e}")),
            Err(e) => traffic.cassette_error = Some(format!("not recorded: {e}")),
        }
        traffic
    }
}

#[cfg(test)]
mod tests;
