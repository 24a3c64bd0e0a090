//! The gateway's HTTP side: a run's listener, the forwarding of each request to the
//! upstream with the real credentials, and the tap that meters a reply as it streams back.
//!
//! Requests are read whole (they are JSON documents the gateway reads for the model and
//! hashes for retries; at most [`MAX_REQUEST_BYTES`]); replies are never buffered: each
//! piece is handed to the agent as it arrives and read by the meter on the way. Headers
//! that belong to one connection (`connection`, `transfer-encoding`, …) are not forwarded;
//! `accept-encoding` is set to `identity` upstream, so that the meter reads plain text; an
//! upstream that compresses anyway is decompressed on the way ([`super::encoding`]).

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Frame, SizeHint};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{self, HeaderName, HeaderValue};
use hyper::{Method, Request, Response};
use hyper_util::rt::TokioIo;
use sha2::Digest;
use tokio_util::sync::CancellationToken;

use super::budget::{Estimate, Ledger, Limits, Reserved, Worst};
use super::cassette::{Divergence, HOP_BY_HOP, Player, Recorder};
use super::encoding::{self, Decoder, Encoding};
use super::meter::ReplyMeter;
use super::normalize::Normalizer;
use super::protocol::Protocol;
use super::scope::{self, Admission, Scrubber};
use super::tape::{self, Body, BoxError, Cut, Taping};
use super::traffic::{RunLog, Traffic};
use super::wire::{ReplyCalls, Wire};
use super::{GatewayError, GatewayOptions, RecordTo, ReplayMiss};

/// The largest request body forwarded, in bytes (agents' requests hold the whole
/// conversation; a few MB at most).
pub const MAX_REQUEST_BYTES: usize = 64 * 1024 * 1024;

/// Whether a request header goes upstream as the client sent it: not one of the
/// connection's, nor `host` and `content-length` (the upstream request's own), nor
/// `accept-encoding` (set to `identity`, so that replies are read as plain text).
pub(crate) fn forwarded_request_header(name: &HeaderName) -> bool {
    !(HOP_BY_HOP.contains(&name.as_str())
        || name == header::HOST
        || name == header::CONTENT_LENGTH
        || name == header::ACCEPT_ENCODING)
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What every run shares: the HTTP clients (one connection pool) and the ledger.
pub(super) struct Shared {
    pub(super) limits: Limits,
    ledger: Mutex<Ledger>,
    /// Woken when a model call's reservation settles: requests waiting for room are
    /// decided again.
    settled: tokio::sync::Notify,
    pub(super) record: Option<RecordTo>,
    pub(super) redactor: crate::shared::redact::Redactor,
}

impl Shared {
    pub(super) fn new(options: GatewayOptions) -> Self {
        Shared {
            limits: options.limits,
            ledger: Mutex::new(Ledger::new(options.limits)),
            settled: tokio::sync::Notify::new(),
            record: options.record,
            redactor: options
                .redactor
                .unwrap_or_else(|| crate::shared::redact::Redactor::from_process_env([])),
        }
    }

    pub(super) fn spent(&self) -> (u64, f64) {
        lock(&self.ledger).spent()
    }

    async fn send(
        &self,
        https: bool,
        request: Request<Full<Bytes>>,
    ) -> Result<Response<Incoming>, crate::shared::http::SendError> {
        send(https, request).await
    }
}

/// Sends `request` upstream through aptitude's one HTTP client ([`crate::shared::http`]).
///
/// # Errors
/// [`crate::shared::http::SendError`]: the client's error with its sources.
pub(crate) async fn send(
    https: bool,
    request: Request<Full<Bytes>>,
) -> Result<Response<Incoming>, crate::shared::http::SendError> {
    crate::shared::http::send(https, request).await
}

/// Where a run's requests go.
#[derive(Debug, Clone)]
pub(super) struct Upstream {
    https: bool,
    /// `host:port`.
    authority: String,
    /// The base URL's path without its trailing `/` (`/v1`, or empty).
    pub(super) path: String,
}

impl Upstream {
    pub(super) fn parse(raw: &str) -> Result<Upstream, GatewayError> {
        let bad = |why: String| GatewayError::Upstream {
            url: crate::shared::redact::Redactor::new([]).redact(raw),
            why,
        };
        let url = url::Url::parse(raw).map_err(|e| bad(e.to_string()))?;
        let https = match url.scheme() {
            "https" => true,
            "http" => false,
            other => return Err(bad(format!("the scheme `{other}` is not http or https"))),
        };
        let host = url
            .host_str()
            .ok_or_else(|| bad("it names no host".into()))?;
        let port = url
            .port_or_known_default()
            .ok_or_else(|| bad("it names no port".into()))?;
        Ok(Upstream {
            https,
            authority: format!("{host}:{port}"),
            path: url.path().trim_end_matches('/').to_owned(),
        })
    }

    /// `https://host:port/path`, as results show it.
    pub(super) fn display(&self) -> String {
        format!(
            "{}://{}{}",
            if self.https { "https" } else { "http" },
            self.authority,
            self.path
        )
    }
}

/// One run's endpoint state.
pub(super) struct RunState {
    pub(super) upstream: Upstream,
    /// (placeholder, real value) pairs.
    pub(super) secrets: Vec<(String, String)>,
    pub(super) log: Mutex<RunLog>,
    /// What crossed the wire: the calls served and the results sent back.
    pub(super) wire: Mutex<Wire>,
    /// The names of the variables holding the placeholders.
    pub(super) credentials: Vec<String>,
    /// Fired when a request was refused (the budget, a divergence from the cassette).
    pub(super) stop: CancellationToken,
    /// Whether requests after the first reply with a tool call are held (`stop:
    /// first_call`).
    pub(super) hold_after_call: bool,
    /// Fired when such a request was held: the run has decided.
    pub(super) decided: CancellationToken,
    /// Skills looked for in the model requests ([`super::RunGateway::watch_skills`]).
    pub(super) watch_skills: Vec<(String, String)>,
    /// The protocols the run's agent speaks (empty: every one).
    pub(super) speaks: Vec<Protocol>,
    /// The test's `network:` hosts: the only ones a request may have the provider fetch.
    pub(super) network: Vec<String>,
    /// The run's paths, for cassettes.
    pub(super) normalizer: Normalizer,
    /// Records the run's exchange (`run --record-model`).
    pub(super) recorder: Option<Mutex<Recorder>>,
    /// Answers from a cassette (`run --replay`).
    pub(super) player: Option<Mutex<Player>>,
    /// What a request the cassette does not hold gets.
    pub(super) replay_miss: ReplayMiss,
}

impl RunState {
    pub(super) fn traffic(&self) -> Traffic {
        lock(&self.log).traffic.clone()
    }

    /// `text` with every placeholder replaced by its real value.
    fn substitute(&self, text: &str) -> Option<String> {
        let mut out: Option<String> = None;
        for (placeholder, real) in &self.secrets {
            let current = out.as_deref().unwrap_or(text);
            if current.contains(placeholder.as_str()) {
                out = Some(current.replace(placeholder.as_str(), real));
            }
        }
        out
    }
}

/// Accepts connections until `shutdown`, then ends every connection still open.
pub(super) async fn serve(
    listener: tokio::net::TcpListener,
    shared: Arc<Shared>,
    run: Arc<RunState>,
    shutdown: CancellationToken,
) {
    let handler: Handler =
        Arc::new(move |request| Box::pin(handle(Arc::clone(&shared), Arc::clone(&run), request)));
    serve_http(listener, handler, usize::MAX, shutdown).await;
}

/// A request handler of one of aptitude's HTTP servers (the gateway's, the MCP front's),
/// boxed so that they share one instantiation of hyper's connection code, which is large.
pub(crate) type Handler = Arc<
    dyn Fn(
            Request<Incoming>,
        ) -> std::pin::Pin<
            Box<dyn std::future::Future<Output = Result<Response<Body>, Infallible>> + Send>,
        > + Send
        + Sync,
>;

/// A reply body of aptitude's HTTP servers.
pub(crate) type HttpBody = Body;

/// Serves HTTP/1 on `listener` with `handler`, at most `max_connections` at once (others
/// are closed as they come), until `shutdown`; then ends every connection still open.
pub(crate) async fn serve_http(
    listener: tokio::net::TcpListener,
    handler: Handler,
    max_connections: usize,
    shutdown: CancellationToken,
) {
    let mut connections = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            () = shutdown.cancelled() => break,
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else {
                    // Out of file descriptors or a connection reset before it was
                    // accepted: try again shortly.
                    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                    continue;
                };
                while connections.try_join_next().is_some() {}
                if connections.len() >= max_connections {
                    continue;
                }
                let _ = stream.set_nodelay(true);
                let handler = Arc::clone(&handler);
                let service = hyper::service::service_fn(move |request| handler(request));
                connections.spawn(async move {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    connections.abort_all();
    while connections.join_next().await.is_some() {}
}

/// A model request in flight: which of the run's requests it is.
#[derive(Debug, Clone)]
struct Call {
    protocol: Protocol,
    index: usize,
    model: Option<String>,
}

async fn handle(
    shared: Arc<Shared>,
    run: Arc<RunState>,
    request: Request<Incoming>,
) -> Result<Response<Body>, Infallible> {
    if run.hold_after_call && !lock(&run.wire).calls.is_empty() {
        // The agent decided (its first tool call was served) and moved on before it was
        // stopped: the request waits, unanswered and unrecorded, until the run ends and
        // its connection with it.
        run.decided.cancel();
        std::future::pending::<()>().await;
    }
    let (parts, body) = request.into_parts();
    let path = parts.uri.path().to_owned();
    if let Some(refused) = out_of_scope(&run, &parts) {
        return Ok(refused);
    }
    let protocol = match scope::admit(&parts.method, &run.upstream.path, &path, &run.speaks) {
        Ok(Admission::Model(protocol)) => Some(protocol),
        Ok(Admission::Auxiliary) => None,
        Err(_) => None,
    };
    let body = match Limited::new(body, MAX_REQUEST_BYTES).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) => {
            let why = format!("aptitude's model gateway could not read the request: {e}");
            return Ok(local_error(protocol, 413, "invalid_request_error", &why));
        }
    };
    // What a cassette holds of the request, when one is recorded or played.
    let taped = (run.recorder.is_some() || run.player.is_some()).then(|| {
        let path_and_query = parts.uri.path_and_query().map_or("/", |p| p.as_str());
        (
            tape::key_free(path_and_query),
            tape::taped_request(&body, &run.normalizer, &shared.redactor),
        )
    });
    let call = protocol.map(|protocol| {
        let model = protocol.model_of(&path, &body);
        let sha256: [u8; 32] = sha2::Sha256::digest(&body).into();
        let index = lock(&run.log).begin(model.as_deref(), sha256);
        Call {
            protocol,
            index,
            model,
        }
    });
    note_sent(&run, call.as_ref(), &body);
    if let Some(refused) = fetch_refused(&run, call.as_ref(), &parts, &body) {
        return Ok(refused);
    }
    if let (Some(player), Some((taped_path, request))) = (&run.player, &taped) {
        let answer = lock(player)
            .answer(parts.method.as_str(), taped_path, request)
            .map(|exchange| {
                // The cassette is the wire: its reply's calls, as served (the run's own
                // paths put back), are what the model asked.
                let calls = call.as_ref().map(|c| {
                    let sse = exchange
                        .content_type
                        .as_deref()
                        .is_some_and(|t| t.starts_with("text/event-stream"));
                    let mut reader = ReplyCalls::new(c.protocol, sse);
                    let mut calls = reader.push(&tape::served(exchange, &run.normalizer));
                    calls.extend(reader.finish());
                    calls
                });
                // A recorded failure fails again: the agent's retry of it is a retry.
                let failed = exchange.cut || exchange.status >= 400;
                (tape::replayed(exchange, &run.normalizer), calls, failed)
            });
        match answer {
            Ok((reply, calls, failed)) => {
                if let (Some(calls), Some(call)) = (calls, &call) {
                    lock(&run.wire).served(calls);
                    let mut log = lock(&run.log);
                    log.replayed();
                    if failed {
                        log.failed(call.index);
                    }
                }
                return Ok(reply);
            }
            Err(why) => {
                if let Some(refused) = diverged(&run, call.as_ref(), why) {
                    return Ok(refused);
                }
            }
        }
    }
    let hold = match admit(&shared, &run, call.as_ref(), &body).await {
        Ok(hold) => hold,
        Err(refused) => return Ok(refused),
    };
    // A streamed Chat Completions request is made to report its usage.
    let body = call
        .as_ref()
        .and_then(|c| c.protocol.meterable(&body))
        .map_or(body, Bytes::from);
    let taping = match (&run.recorder, taped) {
        (Some(recorder), Some((taped_path, request))) => Some(Taping::new(
            lock(recorder).begin(),
            parts.method.to_string(),
            taped_path,
            request,
        )),
        _ => None,
    };
    Ok(forward(&shared, &run, parts, body, (call, hold), taping).await)
}

/// The budget's answer to a request about to be forwarded (see [`super::budget`]): a model
/// call reserves its worst case (the [`Hold`] settles it when its reply ends), waiting
/// while the requests in flight leave no room for it; any other request is admitted while
/// the ceilings are not reached. A refusal is the reply to send.
async fn admit(
    shared: &Arc<Shared>,
    run: &Arc<RunState>,
    call: Option<&Call>,
    body: &[u8],
) -> Result<Option<Hold>, Response<Body>> {
    let refused = |message: String| {
        local_error(
            call.map(|c| c.protocol),
            400,
            "invalid_request_error",
            &message,
        )
    };
    let Some(c) = call else {
        return match refuse(shared, run, None, Estimate::default()) {
            Some(message) => Err(refused(message)),
            None => Ok(None),
        };
    };
    // A model call re-sends at least its previous prompt; its prompt is about a quarter
    // of its bytes, in tokens.
    let next = lock(&run.log).next;
    let prompt = next.tokens.max(body.len() as u64 / 4);
    let worst = Worst::of(c.model.as_deref(), prompt, c.protocol.output_cap(body));
    loop {
        let settled = shared.settled.notified();
        let decided = {
            let mut ledger = lock(&shared.ledger);
            ledger
                .admit_model(c.model.as_deref())
                .and_then(|()| ledger.reserve(next, worst))
        };
        match decided {
            Ok(Reserved::Go) => {
                return Ok(Some(Hold {
                    shared: Arc::clone(shared),
                    worst,
                    done: false,
                }));
            }
            Ok(Reserved::Wait) if !run.stop.is_cancelled() => {
                // Woken when a request settles; the timeout covers a wake-up that came
                // between the decision and the wait.
                let _ = tokio::time::timeout(std::time::Duration::from_millis(50), settled).await;
            }
            Ok(Reserved::Wait) => {
                return Err(refused(
                    "aptitude's model gateway already stopped this run; this is not retryable"
                        .to_owned(),
                ));
            }
            Err(why) => return Err(refused(note_refusal(run, Some(c), &why))),
        }
    }
}

/// A model call's reserved worst case in the ledger: settled at what its reply reported,
/// or released when it is dropped without (never forwarded, upstream unreachable).
pub(super) struct Hold {
    shared: Arc<Shared>,
    worst: Worst,
    done: bool,
}

impl Hold {
    /// Settles the reservation: `tokens` and `cost` spent; a reply that reported no usage
    /// (`unmetered`) is counted at its worst case.
    fn settle(mut self, tokens: &super::meter::Tokens, cost: Option<f64>, unmetered: bool) {
        self.done = true;
        let mut ledger = lock(&self.shared.ledger);
        ledger.release(self.worst);
        if unmetered {
            let worst = super::meter::Tokens {
                output: self.worst.tokens,
                ..super::meter::Tokens::default()
            };
            ledger.add(&worst, Some(self.worst.cost_usd));
        } else {
            ledger.add(tokens, cost);
        }
        drop(ledger);
        self.shared.settled.notify_waiters();
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        if !std::mem::replace(&mut self.done, true) {
            lock(&self.shared.ledger).release(self.worst);
            self.shared.settled.notify_waiters();
        }
    }
}

/// What the agent sent, read for the witness (and for the skills it shows the model)
/// before anything else happens to it; a request that is no model call is counted.
fn note_sent(run: &RunState, call: Option<&Call>, body: &[u8]) {
    let Some(call) = call else {
        lock(&run.log).traffic.other_requests += 1;
        return;
    };
    let sent = super::wire::read_request(call.protocol, body);
    let mut wire = lock(&run.wire);
    wire.sent(call.index as u32 + 1, sent);
    if !run.watch_skills.is_empty() {
        wire.look_for_skills(&run.watch_skills, body);
    }
    super::wire::shown::note_tools(&mut wire.tools_shown, body);
}

/// The gateway's refusal of a request before its body is read, if it is refused: the run
/// was already stopped (a budget refusal or a divergence is final), the request is not an
/// inference endpoint ([`scope::admit`]), or it carries a placeholder outside the
/// credential header ([`scope::misplaced`]). Counted in the run's traffic.
fn out_of_scope(run: &RunState, parts: &hyper::http::request::Parts) -> Option<Response<Body>> {
    let path = parts.uri.path();
    let protocol = Protocol::of_path(path).filter(|_| parts.method == Method::POST);
    if run.stop.is_cancelled() {
        let why = "aptitude's model gateway already stopped this run (its budget is spent, or it left its recording); this is not retryable";
        lock(&run.log).refused(&parts.method, path, why);
        return Some(local_error(protocol, 400, "invalid_request_error", why));
    }
    let why = match scope::admit(&parts.method, &run.upstream.path, path, &run.speaks) {
        Err(refused) => refused.to_string(),
        Ok(_) => {
            let placeholders: Vec<&str> = run.secrets.iter().map(|(p, _)| p.as_str()).collect();
            let place = scope::misplaced(
                parts.uri.path_and_query().map_or(path, |p| p.as_str()),
                parts.headers.iter().map(|(n, v)| (n, v.as_bytes())),
                &placeholders,
            )?;
            scope::Refused::PlaceholderMisplaced {
                method: parts.method.to_string(),
                path: crate::shared::cut::chars(path, 200).kept.to_owned(),
                place,
            }
            .to_string()
        }
    };
    lock(&run.log).refused(&parts.method, path, &why);
    Some(local_error(protocol, 403, "permission_error", &why))
}

/// A model request that would have the provider fetch a URL the test's `network:` does not
/// allow ([`scope::provider_fetches`]): refused with a 403, counted, never forwarded (nor
/// looked for in a cassette).
fn fetch_refused(
    run: &RunState,
    call: Option<&Call>,
    parts: &hyper::http::request::Parts,
    body: &[u8],
) -> Option<Response<Body>> {
    let call = call?;
    let why = scope::refused_fetch(&scope::provider_fetches(body), &run.network)?.to_string();
    let mut log = lock(&run.log);
    log.refused(&parts.method, parts.uri.path(), &why);
    log.traffic.provider_fetches_refused += 1;
    log.failed(call.index);
    drop(log);
    Some(local_error(
        Some(call.protocol),
        403,
        "permission_error",
        &why,
    ))
}

/// A model request of a replaying run that its cassette does not hold: noted, and — with
/// `--replay-miss error` — refused, stopping the run. Other requests (token counts) and
/// `--replay-miss live` go on to the upstream (`None`).
fn diverged(run: &RunState, call: Option<&Call>, why: Divergence) -> Option<Response<Body>> {
    let call = call?;
    let why = why.to_string();
    let mut log = lock(&run.log);
    if run.replay_miss == ReplayMiss::Live {
        log.traffic.went_live.get_or_insert(why);
        return None;
    }
    log.traffic.divergence.get_or_insert_with(|| why.clone());
    log.failed(call.index);
    drop(log);
    run.stop.cancel();
    Some(local_error(
        Some(call.protocol),
        400,
        "invalid_request_error",
        &format!(
            "aptitude is replaying this run from a recording, and this request is not in it: {why}. This is not retryable."
        ),
    ))
}

/// Refuses a request (a model request `call`, or another) when it would cross a ceiling,
/// or when it asks for a model the cost ceiling can not price: records why, fires the
/// run's stop, and returns the message the agent is sent.
fn refuse(shared: &Shared, run: &RunState, call: Option<&Call>, next: Estimate) -> Option<String> {
    let why = {
        let ledger = lock(&shared.ledger);
        call.map_or(Ok(()), |c| ledger.admit_model(c.model.as_deref()))
            .and_then(|()| ledger.admit(next))
            .err()?
    };
    Some(note_refusal(run, call, &why))
}

/// Records a budget refusal of a request (a model request `call`, or another), fires the
/// run's stop, and returns the message the agent is sent.
fn note_refusal(run: &RunState, call: Option<&Call>, why: &super::budget::Refusal) -> String {
    let mut log = lock(&run.log);
    if let Some(call) = call {
        log.failed(call.index);
    }
    let number = log.traffic.requests;
    log.traffic.budget.get_or_insert_with(|| {
        format!("{why}: aptitude's model gateway refused the run's model request {number}")
    });
    drop(log);
    run.stop.cancel();
    format!(
        "aptitude refused this model request: {why}. The run's budget is spent; this is not retryable."
    )
}

/// A reply made by the gateway itself, in the protocol's error shape (plain text for a
/// request of no known protocol).
fn local_error(
    protocol: Option<Protocol>,
    status: u16,
    kind: &str,
    message: &str,
) -> Response<Body> {
    let (body, content_type) = match protocol {
        Some(p) => (p.error_body(status, kind, message), "application/json"),
        None => (message.to_owned(), "text/plain; charset=utf-8"),
    };
    let mut response = Response::new(full(body));
    *response.status_mut() =
        hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::BAD_GATEWAY);
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

fn full(text: String) -> Body {
    Full::new(Bytes::from(text))
        .map_err(|never| match never {})
        .boxed()
}

/// Sends the request upstream with the real credentials and streams the reply back,
/// metering it when it is a model call.
async fn forward(
    shared: &Arc<Shared>,
    run: &Arc<RunState>,
    parts: hyper::http::request::Parts,
    body: Bytes,
    (call, hold): (Option<Call>, Option<Hold>),
    mut taping: Option<Taping>,
) -> Response<Body> {
    let protocol = call.as_ref().map(|c| c.protocol);
    let (method, path) = (parts.method.clone(), parts.uri.path().to_owned());
    let path_and_query = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let uri = format!(
        "{}://{}{path_and_query}",
        if run.upstream.https { "https" } else { "http" },
        run.upstream.authority
    );
    let mut builder = Request::builder().method(parts.method).uri(uri);
    for (name, value) in &parts.headers {
        if !forwarded_request_header(name) {
            continue;
        }
        // The real credential goes only where the protocol carries it
        // ([`scope::CREDENTIAL_HEADERS`]); elsewhere a placeholder was refused already.
        let value = value
            .to_str()
            .ok()
            .filter(|_| scope::is_credential_header(name))
            .and_then(|v| run.substitute(v))
            .and_then(|v| HeaderValue::from_str(&v).ok())
            .unwrap_or_else(|| value.clone());
        builder = builder.header(name, value);
    }
    builder = builder.header(header::ACCEPT_ENCODING, "identity");
    let request = match builder.body(Full::new(body)) {
        Ok(r) => r,
        Err(e) => {
            let why = format!("aptitude's model gateway could not forward the request: {e}");
            return local_error(protocol, 400, "invalid_request_error", &why);
        }
    };
    let reply = match shared.send(run.upstream.https, request).await {
        Ok(reply) => reply,
        Err(why) => {
            if let Some(call) = &call {
                lock(&run.log).failed(call.index);
            }
            let why = format!(
                "aptitude's model gateway could not reach {}: {why}",
                run.upstream.display()
            );
            let kind = if protocol == Some(Protocol::Anthropic) {
                "api_error"
            } else {
                "server_error"
            };
            return local_error(protocol, 502, kind, &why);
        }
    };
    let (mut parts, body) = reply.into_parts();
    if matches!(encoding::of(&parts.headers), Encoding::Unknown) {
        // Bytes the gateway can not read could hold the key and can not be metered: the
        // agent gets an error instead.
        let why = format!(
            "aptitude's model gateway refused the upstream's reply: it is in an encoding it can not read (content-encoding `{}`), so it could neither meter it nor take the key out of it",
            encoding::declared(&parts.headers)
        );
        let mut log = lock(&run.log);
        log.refused(&method, &path, &why);
        if let Some(call) = &call {
            log.failed(call.index);
        }
        let kind = if protocol == Some(Protocol::Anthropic) {
            "api_error"
        } else {
            "server_error"
        };
        return local_error(protocol, 502, kind, &why);
    }
    let (decoder, undecodable, scrubber) = reply_headers(run, &mut parts.headers);
    let sse = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if let Some(taping) = taping.as_mut() {
        taping.content_type = parts
            .headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        taping.headers = parts
            .headers
            .iter()
            .filter_map(|(name, value)| {
                Some((name.as_str().to_owned(), value.to_str().ok()?.to_owned()))
            })
            .collect();
    }
    let tap = Tap {
        inner: body,
        calls: call
            .as_ref()
            .filter(|_| !undecodable)
            .map(|call| ReplyCalls::new(call.protocol, sse)),
        meter: call.map(|call| (ReplyMeter::new(call.protocol, sse), call)),
        hold,
        decoder,
        undecodable,
        taping,
        scrubber,
        status: parts.status.as_u16(),
        run: Arc::clone(run),
        shared: Arc::clone(shared),
        cut: None,
        echoed: false,
        done: false,
    };
    Response::from_parts(parts, tap.boxed())
}

/// The upstream reply's headers as the agent gets them: without those of one connection, a
/// compressed reply's encoding and length (it goes on decompressed: [`super::encoding`]),
/// the real keys scrubbed out. Returns the reply's decompressor, whether it is in an
/// encoding the gateway can not read (passed on as it is, unmetered), and the body's
/// scrubber.
fn reply_headers(
    run: &RunState,
    headers: &mut hyper::HeaderMap,
) -> (Option<Box<Decoder>>, bool, Option<Scrubber>) {
    for name in HOP_BY_HOP {
        headers.remove(HeaderName::from_static(name));
    }
    let (decoder, undecodable) = match encoding::of(headers) {
        Encoding::Identity => (None, false),
        Encoding::Decoded(decoder) => {
            headers.remove(header::CONTENT_ENCODING);
            headers.remove(header::CONTENT_LENGTH);
            (Some(decoder), false)
        }
        Encoding::Unknown => (None, true),
    };
    // An upstream that quotes the real key back (in an error about a header, say) must
    // not hand it to the agent: the key is taken out of every header and the body.
    let mut scrubber = Scrubber::new(run.secrets.iter().map(|(_, real)| real.clone()));
    if let Some(scrubber) = scrubber.as_mut() {
        headers.remove(header::CONTENT_LENGTH);
        for value in headers.values_mut() {
            if let Some(clean) = scrubber.scrub_once(value.as_bytes())
                && let Ok(clean) = HeaderValue::from_bytes(&clean)
            {
                *value = clean;
            }
        }
    }
    (decoder, undecodable, scrubber)
}

/// A reply body on its way to the agent: each frame is passed on as it comes (decompressed
/// when the upstream compressed it) and read by the meter; the reply is counted when it
/// ends, fails, or is dropped (the agent went away, the run ended).
struct Tap {
    inner: Incoming,
    meter: Option<(ReplyMeter, Call)>,
    /// The call's reservation in the budget, settled when the reply ends.
    hold: Option<Hold>,
    /// The tool calls the reply asks for, noted on the run's wire as each completes.
    calls: Option<ReplyCalls>,
    /// Decompresses a reply the upstream compressed.
    decoder: Option<Box<Decoder>>,
    /// The reply is in an encoding the gateway can not read: passed on, not metered.
    undecodable: bool,
    taping: Option<Taping>,
    /// Takes the real keys out of the reply (see [`forward`]); holds back a secret's
    /// length of bytes until the next frame.
    scrubber: Option<Scrubber>,
    status: u16,
    run: Arc<RunState>,
    shared: Arc<Shared>,
    /// The upstream cut the reply: its error, held until what came before reached the
    /// agent.
    cut: Option<Cut>,
    /// The reply held the real key: it was cut ([`Tap::echo_check`]).
    echoed: bool,
    done: bool,
}

impl Tap {
    /// Counts (and records) the reply, once: at its end, when the upstream cut it
    /// (`cut`), or when it was dropped (the agent stopped reading: what it got is what it
    /// needed).
    fn end(&mut self, cut: bool) {
        if std::mem::replace(&mut self.done, true) {
            return;
        }
        if let Some(calls) = self.calls.take() {
            let rest = calls.finish();
            if !rest.is_empty() {
                lock(&self.run.wire).served(rest);
            }
        }
        if let (Some(taping), Some(recorder)) = (self.taping.take(), &self.run.recorder) {
            let slot = taping.slot;
            let taped = taping.finish(self.status, cut, &self.run.normalizer);
            let mut recorder = lock(recorder);
            match taped {
                Ok(exchange) => recorder.end(slot, exchange),
                Err(size) => recorder.drop_one(size),
            }
        }
        let Some((meter, call)) = self.meter.take() else {
            return;
        };
        let metered = if self.undecodable {
            // Nothing in it could be read: unmetered, failed only when cut.
            super::meter::Metered {
                completed: !cut,
                ..super::meter::Metered::default()
            }
        } else {
            meter.finish()
        };
        let (tokens, cost) =
            lock(&self.run.log).end(call.index, call.model.as_deref(), self.status, &metered);
        let unmetered = metered.tokens.is_none() && self.status < 400 && !metered.error;
        match self.hold.take() {
            Some(hold) => hold.settle(&tokens, cost, unmetered),
            None => lock(&self.shared.ledger).add(&tokens, cost),
        }
    }

    /// Passes one piece of the plain reply on: read by the meter and the wire, scrubbed of
    /// the real keys, taped. `None` when nothing is to be sent yet.
    fn pass(&mut self, data: &[u8]) -> Option<Bytes> {
        if !self.undecodable {
            if let Some((meter, _)) = self.meter.as_mut() {
                meter.push(data);
            }
            if let Some(calls) = self.calls.as_mut() {
                let done = calls.push(data);
                if !done.is_empty() {
                    lock(&self.run.wire).served(done);
                }
            }
        }
        let data = match self.scrubber.as_mut() {
            Some(scrubber) => scrubber.push(data),
            None => data.to_vec(),
        };
        if let Some(taping) = self.taping.as_mut() {
            taping.push(&data);
        }
        (!data.is_empty()).then(|| Bytes::from(data))
    }

    /// A reply that held the real key (in any form the scrubber knows) is cut where the
    /// key was found: what came before reached the agent, the piece that held it (scrubbed
    /// as it is) does not; the reply becomes an error, counted in the run's `key_echoes`.
    /// Whether it was found just now.
    fn echo_check(&mut self) -> bool {
        let echoed = self.scrubber.as_ref().is_some_and(|s| s.scrubbed > 0);
        let now = echoed && !std::mem::replace(&mut self.echoed, true);
        if now {
            lock(&self.run.log).traffic.key_echoes += 1;
            self.cut = Some(Cut::new(
                "the upstream's reply held the run's real key; aptitude's model gateway ended it"
                    .into(),
            ));
        }
        now
    }

    /// The reply's last piece: what the decompressor and the scrubber still held.
    fn rest(&mut self) -> Result<Option<Bytes>, std::io::Error> {
        let mut rest = match self.decoder.as_mut() {
            Some(decoder) => {
                let plain = decoder.finish()?;
                self.pass(&plain).map(|b| b.to_vec()).unwrap_or_default()
            }
            None => Vec::new(),
        };
        if let Some(held) = self.scrubber.as_mut().map(Scrubber::finish) {
            if let Some(taping) = self.taping.as_mut() {
                taping.push(&held);
            }
            rest.extend(held);
        }
        Ok((!rest.is_empty()).then(|| Bytes::from(rest)))
    }
}

impl http_body::Body for Tap {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = self.get_mut();
        loop {
            if this.done {
                return Poll::Ready(None);
            }
            if let Some(cut) = this.cut.as_mut() {
                let why = std::task::ready!(cut.poll(cx));
                this.cut = None;
                this.end(true);
                return Poll::Ready(Some(Err(why)));
            }
            match Pin::new(&mut this.inner).poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) => {
                    let data = match frame.into_data() {
                        Ok(data) => data,
                        Err(frame) => return Poll::Ready(Some(Ok(frame))),
                    };
                    let plain = match this.decoder.as_mut().map(|d| d.push(&data)) {
                        None => Ok(data.to_vec()),
                        Some(decoded) => decoded,
                    };
                    match plain {
                        Ok(plain) => {
                            let out = this.pass(&plain);
                            if this.echo_check() {
                                // The piece that held the key is not sent at all: the
                                // reply ends as an error before its end reaches the agent.
                                continue;
                            }
                            if let Some(out) = out {
                                return Poll::Ready(Some(Ok(Frame::data(out))));
                            }
                        }
                        Err(e) => this.cut = Some(Cut::new(Box::new(e))),
                    }
                }
                // What came before the cut reaches the agent first.
                Poll::Ready(Some(Err(e))) => this.cut = Some(Cut::new(Box::new(e))),
                Poll::Ready(None) => match this.rest() {
                    Ok(rest) => {
                        if !this.echo_check() {
                            this.end(false);
                            return Poll::Ready(rest.map(|r| Ok(Frame::data(r))));
                        }
                    }
                    Err(e) => this.cut = Some(Cut::new(Box::new(e))),
                },
                Poll::Pending => return Poll::Pending,
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.done
            || (self.scrubber.is_none()
                && self.decoder.is_none()
                && self.cut.is_none()
                && self.inner.is_end_stream())
    }

    fn size_hint(&self) -> SizeHint {
        match (&self.scrubber, &self.decoder) {
            (None, None) => self.inner.size_hint(),
            // A scrubbed or decompressed reply is not the upstream's length.
            _ => SizeHint::default(),
        }
    }
}

impl Drop for Tap {
    fn drop(&mut self) {
        self.end(false);
    }
}
