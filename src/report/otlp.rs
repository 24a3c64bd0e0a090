//! Results as OpenTelemetry traces over OTLP (`--otlp URL`, or the standard
//! `OTEL_EXPORTER_OTLP_ENDPOINT` / `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` variables), in the
//! GenAI semantic conventions ([`SCHEMA_URL`]), for the observability stack a team already
//! has (Grafana, Honeycomb, Langfuse, Phoenix all take OTLP).
//!
//! Per run of each test (each repeat is a run):
//! - a span `invoke_agent {agent}` (kind internal) from the run's start for its duration,
//!   with `gen_ai.operation.name`, `gen_ai.agent.name`, `gen_ai.provider.name`,
//!   `gen_ai.request.model`, the usage (`gen_ai.usage.input_tokens`, `…output_tokens`,
//!   `…cache_read.input_tokens`, `…cache_creation.input_tokens`), the test's name, file,
//!   variant and status, its cost in USD, and status `Error` for a failed or errored run;
//! - a child span `execute_tool {canonical tool name}` per tool call, with
//!   `gen_ai.tool.name`, `gen_ai.tool.call.id`, `gen_ai.tool.type` (`extension` for a
//!   provider's server-side tool), `process.exit.code` on commands, `error.type` on a tool
//!   error and `aptitude.tool.blocked` on a call the agent's guard refused;
//! - a `gen_ai.evaluation.result` event on the run span per assertion and review:
//!   `gen_ai.evaluation.name`, `gen_ai.evaluation.score.label` (`pass`, `fail`, `error`,
//!   `invalid`, `skipped`), `gen_ai.evaluation.score.value` for judged reviews (1–10),
//!   `gen_ai.evaluation.explanation` and `error.type` for an assertion that could not be
//!   made.
//!
//! The spans are built with the OpenTelemetry SDK and encoded by its OTLP exporter (HTTP,
//! protobuf); aptitude's own HTTP client ([`crate::shared::http`]) sends them. The results
//! given are already redacted, as every report is. Exporting is bounded by
//! [`EXPORT_DEADLINE`] and never changes a verdict or the exit code: the caller prints a
//! failure as a warning.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use opentelemetry::trace::{Span as _, SpanKind, Status, TraceContextExt, Tracer as _};
use opentelemetry::{Context, InstrumentationScope, KeyValue};
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter as _, SpanProcessor};

use crate::assertions::{AssertionResult, AssertionStatus};
use crate::spec::agent_kind::AgentKind;
use crate::transcript::ToolCall;
use crate::verdict::results::Results;
use crate::verdict::test_result::{TestResult, TestStatus};

/// The OpenTelemetry semantic conventions the spans follow, pinned: the GenAI spans
/// (`invoke_agent`, `execute_tool`) and the `gen_ai.evaluation.result` event are those of
/// this version.
pub const SCHEMA_URL: &str = "https://opentelemetry.io/schemas/1.38.0";

/// The longest the whole export may take (every batch), after which what is left is
/// dropped with a warning: a dead or slow collector never holds a run.
pub const EXPORT_DEADLINE: Duration = Duration::from_secs(10);

/// Spans sent per OTLP request.
const BATCH: usize = 512;

/// The longest attribute value sent, in bytes (an explanation or a tool call's id);
/// longer values are cut at a character boundary with `…`.
const MAX_VALUE_BYTES: usize = 4096;

/// What an export sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exported {
    /// Spans sent (runs and tool calls).
    pub spans: usize,
    /// OTLP requests made.
    pub requests: usize,
}

/// Why the results could not be exported (a warning: the run's verdict stands).
#[derive(Debug, thiserror::Error)]
pub enum OtlpError {
    /// The exporter could not be configured (a bad endpoint or header variable).
    #[error("the OTLP exporter could not be set up: {0}")]
    Setup(String),
    /// The collector refused a batch or could not be reached.
    #[error("OTLP export to {endpoint} failed after {sent} of {total} spans: {why}")]
    Send {
        /// The traces URL, without credentials.
        endpoint: String,
        /// Spans the collector took before.
        sent: usize,
        /// Spans of the whole export.
        total: usize,
        /// The exporter's or the client's error.
        why: String,
    },
    /// The export took longer than its deadline ([`EXPORT_DEADLINE`]).
    #[error(
        "OTLP export to {endpoint} stopped after {sent} of {total} spans: no answer within {seconds}s"
    )]
    Deadline {
        /// The traces URL, without credentials.
        endpoint: String,
        /// Spans the collector took before.
        sent: usize,
        /// Spans of the whole export.
        total: usize,
        /// The deadline, in seconds.
        seconds: f64,
    },
}

/// Where traces go: `--otlp URL` (a base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT`:
/// `/v1/traces` is appended unless the path already ends so), else the environment's
/// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (as is) or `OTEL_EXPORTER_OTLP_ENDPOINT` (base).
/// `None`: no export. `env` reads a variable (the process environment in the CLI).
pub fn endpoint(flag: Option<&str>, env: impl Fn(&str) -> Option<String>) -> Option<String> {
    let base = |url: &str| {
        let url = url.trim_end_matches('/');
        if url.ends_with("/v1/traces") {
            url.to_owned()
        } else {
            format!("{url}/v1/traces")
        }
    };
    if let Some(flag) = flag.filter(|f| !f.is_empty()) {
        return Some(base(flag));
    }
    if let Some(traces) = env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").filter(|v| !v.is_empty()) {
        return Some(traces);
    }
    env("OTEL_EXPORTER_OTLP_ENDPOINT")
        .filter(|v| !v.is_empty())
        .map(|v| base(&v))
}

/// Sends `results` to `endpoint` (the full traces URL, see [`endpoint`]) with the headers
/// of `OTEL_EXPORTER_OTLP_HEADERS` / `OTEL_EXPORTER_OTLP_TRACES_HEADERS`. Runs on a thread
/// of its own (callable from inside or outside an async runtime) and returns within
/// [`EXPORT_DEADLINE`] and a little.
///
/// # Errors
/// [`OtlpError`]: the exporter could not be set up, a batch was refused or could not be
/// sent, or the deadline passed.
pub fn export(results: &Results, endpoint: &str) -> Result<Exported, OtlpError> {
    export_within(results, endpoint, EXPORT_DEADLINE)
}

/// [`export`] within `deadline`.
///
/// # Errors
/// As [`export`].
pub fn export_within(
    results: &Results,
    endpoint: &str,
    deadline: Duration,
) -> Result<Exported, OtlpError> {
    let spans = spans(results);
    let endpoint = endpoint.to_owned();
    let shown = shown(&endpoint);
    std::thread::scope(|scope| {
        scope
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| OtlpError::Setup(e.to_string()))?;
                runtime.block_on(send(spans, &endpoint, &shown, deadline))
            })
            .join()
            .unwrap_or_else(|_| Err(OtlpError::Setup("the export thread panicked".into())))
    })
}

/// Sends `spans` in batches of [`BATCH`] within `deadline`; `shown` is the endpoint as
/// errors name it.
async fn send(
    spans: Vec<SpanData>,
    endpoint: &str,
    shown: &str,
    deadline: Duration,
) -> Result<Exported, OtlpError> {
    let total = spans.len();
    let mut exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_http_client(Client { deadline })
        .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
        .with_endpoint(endpoint)
        .with_timeout(deadline)
        .build()
        .map_err(|e| OtlpError::Setup(e.to_string()))?;
    exporter.set_resource(&resource());
    let mut sent = Exported {
        spans: 0,
        requests: 0,
    };
    let mut spans = spans;
    let work = async {
        while !spans.is_empty() {
            let rest = spans.split_off(spans.len().min(BATCH));
            let batch = std::mem::replace(&mut spans, rest);
            let n = batch.len();
            exporter.export(batch).await.map_err(|e| OtlpError::Send {
                endpoint: shown.to_owned(),
                sent: sent.spans,
                total,
                why: e.to_string(),
            })?;
            sent.spans += n;
            sent.requests += 1;
        }
        Ok(())
    };
    let outcome = tokio::time::timeout(deadline, work).await;
    match outcome {
        Ok(Ok(())) => Ok(sent),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(OtlpError::Deadline {
            endpoint: shown.to_owned(),
            sent: sent.spans,
            total,
            seconds: deadline.as_secs_f64(),
        }),
    }
}

/// `endpoint` as a message may show it: without a user, password or query (where a
/// collector's token may sit).
fn shown(endpoint: &str) -> String {
    match url::Url::parse(endpoint) {
        Ok(mut url) => {
            let _ = url.set_username("");
            let _ = url.set_password(None);
            url.set_query(None);
            url.to_string()
        }
        Err(_) => "the OTLP endpoint (not a URL)".to_owned(),
    }
}

/// The resource every span belongs to: `service.name` `aptitude`, its version.
fn resource() -> Resource {
    Resource::builder_empty()
        .with_service_name("aptitude")
        .with_schema_url(
            [KeyValue::new("service.version", env!("CARGO_PKG_VERSION"))],
            SCHEMA_URL,
        )
        .build()
}

/// The spans of `results` (see the module's docs), in the order they ended: each run's
/// tool calls, then the run.
pub fn spans(results: &Results) -> Vec<SpanData> {
    let sink = Collect::default();
    let provider = SdkTracerProvider::builder()
        .with_span_processor(sink.clone())
        .with_resource(resource())
        .with_max_events_per_span(4096)
        .with_max_attributes_per_span(64)
        .build();
    let scope = InstrumentationScope::builder("aptitude")
        .with_version(env!("CARGO_PKG_VERSION"))
        .with_schema_url(SCHEMA_URL)
        .build();
    let tracer = opentelemetry::trace::TracerProvider::tracer_with_scope(&provider, scope);
    // Results written before runs carried their start are laid out back to back, ending
    // now: their order and durations hold, their clock times do not.
    let mut clock = SystemTime::now();
    for test in results.tests.iter().rev() {
        for run in runs_of(test).rev() {
            let duration = Duration::from_millis(run.duration_ms);
            let start = run
                .started_at
                .as_deref()
                .and_then(|t| humantime::parse_rfc3339_weak(t).ok())
                .unwrap_or_else(|| clock.checked_sub(duration).unwrap_or(clock));
            clock = start;
            run_span(&tracer, test, run, start, start + duration);
        }
    }
    std::mem::take(&mut *lock(&sink.0))
}

/// A test's runs: each repeat, or the test itself when it ran once.
fn runs_of(test: &TestResult) -> impl DoubleEndedIterator<Item = &TestResult> {
    let single = test.runs.is_empty().then_some(test);
    test.runs.iter().chain(single)
}

/// One run's span, its tool calls' spans and its evaluation events.
fn run_span(
    tracer: &opentelemetry_sdk::trace::SdkTracer,
    test: &TestResult,
    run: &TestResult,
    start: SystemTime,
    end: SystemTime,
) {
    let agent = run
        .agent_id
        .or(test.agent_id)
        .map_or_else(|| "claude".to_owned(), |a| a.to_string());
    let mut attributes = vec![
        KeyValue::new("gen_ai.operation.name", "invoke_agent"),
        KeyValue::new("gen_ai.agent.name", agent.clone()),
        KeyValue::new("aptitude.test.name", cut(&test.name)),
        KeyValue::new("aptitude.test.file", cut(&test.file)),
        KeyValue::new("aptitude.test.status", word(&run.status)),
    ];
    if let Some(provider) = run.agent_id.or(test.agent_id).and_then(provider_of) {
        attributes.push(KeyValue::new("gen_ai.provider.name", provider));
    }
    if let Some(variant) = &test.variant {
        attributes.push(KeyValue::new("aptitude.test.variant", cut(variant)));
    }
    if let Some(model) = run.transcript.as_ref().and_then(|t| t.model.as_deref()) {
        attributes.push(KeyValue::new("gen_ai.request.model", cut(model)));
    }
    attributes.extend(usage(run));
    if let Some(kind) = &run.error_kind {
        attributes.push(KeyValue::new("error.type", word(kind)));
    }
    let span = tracer
        .span_builder(format!("invoke_agent {agent}"))
        .with_kind(SpanKind::Internal)
        .with_start_time(start)
        .with_attributes(attributes)
        .start(tracer);
    let cx = Context::current_with_span(span);
    let calls = run
        .transcript
        .as_ref()
        .map_or(&[][..], |t| &t.tool_calls[..]);
    for (n, call) in calls.iter().enumerate() {
        let at = call
            .timestamp
            .as_deref()
            .and_then(|t| humantime::parse_rfc3339_weak(t).ok())
            .filter(|t| *t >= start && *t <= end)
            .unwrap_or(start);
        let next = calls
            .get(n + 1)
            .and_then(|c| c.timestamp.as_deref())
            .and_then(|t| humantime::parse_rfc3339_weak(t).ok())
            .filter(|t| *t >= at && *t <= end)
            .unwrap_or(at);
        tool_span(tracer, &cx, call, at, next);
    }
    for assertion in &run.assertions {
        cx.span()
            .add_event_with_timestamp("gen_ai.evaluation.result", end, evaluation(assertion));
    }
    match run.status {
        TestStatus::Failed | TestStatus::Error => cx.span().set_status(Status::error(cut(run
            .error
            .as_deref()
            .unwrap_or(match run.status {
                TestStatus::Failed => "an assertion failed",
                _ => "the run errored",
            })))),
        TestStatus::Passed => cx.span().set_status(Status::Ok),
        TestStatus::Skipped => {}
    }
    cx.span().end_with_timestamp(end);
}

/// A tool call's `execute_tool` span, child of its run's.
fn tool_span(
    tracer: &opentelemetry_sdk::trace::SdkTracer,
    parent: &Context,
    call: &ToolCall,
    start: SystemTime,
    end: SystemTime,
) {
    let mut attributes = vec![
        KeyValue::new("gen_ai.operation.name", "execute_tool"),
        KeyValue::new("gen_ai.tool.name", cut(&call.canonical)),
        KeyValue::new(
            "gen_ai.tool.type",
            if call.server_side {
                "extension"
            } else {
                "function"
            },
        ),
    ];
    if !call.id.is_empty() {
        attributes.push(KeyValue::new("gen_ai.tool.call.id", cut(&call.id)));
    }
    if let Some(code) = call.exit_code {
        attributes.push(KeyValue::new("process.exit.code", i64::from(code)));
    }
    if call.is_error {
        attributes.push(KeyValue::new("error.type", "tool_error"));
    }
    if let Some(blocked) = &call.blocked {
        attributes.push(KeyValue::new("aptitude.tool.blocked", cut(blocked)));
    }
    let mut span = tracer
        .span_builder(format!("execute_tool {}", call.canonical))
        .with_kind(SpanKind::Internal)
        .with_start_time(start)
        .with_attributes(attributes)
        .start_with_context(tracer, parent);
    if call.is_error {
        span.set_status(Status::error("the tool reported an error"));
    }
    span.end_with_timestamp(end);
}

/// The attributes of one assertion's `gen_ai.evaluation.result` event.
fn evaluation(a: &AssertionResult) -> Vec<KeyValue> {
    let name = if a.description.is_empty() {
        &a.kind
    } else {
        &a.description
    };
    let mut attributes = vec![
        KeyValue::new("gen_ai.evaluation.name", cut(name)),
        KeyValue::new("gen_ai.evaluation.score.label", word(&a.status)),
        KeyValue::new("aptitude.assertion.kind", cut(&a.kind)),
        KeyValue::new("aptitude.assertion.line", i64::from(a.line)),
    ];
    if let Some(score) = a.score {
        attributes.push(KeyValue::new(
            "gen_ai.evaluation.score.value",
            f64::from(score),
        ));
    }
    if let Some(why) = a.reasoning.as_deref().or(a.detail.as_deref()) {
        attributes.push(KeyValue::new("gen_ai.evaluation.explanation", cut(why)));
    }
    if matches!(a.status, AssertionStatus::Error) {
        attributes.push(KeyValue::new("error.type", "assertion_error"));
    }
    attributes
}

/// A run's token usage and cost, as GenAI usage attributes (and `aptitude.cost_usd`).
fn usage(run: &TestResult) -> Vec<KeyValue> {
    let Some(u) = &run.usage else {
        return Vec::new();
    };
    let tokens = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    let mut attributes = vec![
        KeyValue::new("gen_ai.usage.input_tokens", tokens(u.input_tokens)),
        KeyValue::new("gen_ai.usage.output_tokens", tokens(u.output_tokens)),
        KeyValue::new(
            "gen_ai.usage.cache_read.input_tokens",
            tokens(u.cache_read_input_tokens),
        ),
        KeyValue::new(
            "gen_ai.usage.cache_creation.input_tokens",
            tokens(u.cache_creation_input_tokens),
        ),
    ];
    if let Some(cost) = u.cost_usd {
        attributes.push(KeyValue::new("aptitude.cost_usd", cost));
    }
    if let Some(turns) = u.turns {
        attributes.push(KeyValue::new("aptitude.turns", i64::from(turns)));
    }
    attributes
}

/// The `gen_ai.provider.name` of the protocol an agent speaks by default.
fn provider_of(agent: AgentKind) -> Option<&'static str> {
    match agent {
        AgentKind::Claude => Some("anthropic"),
        AgentKind::Gemini => Some("gcp.gemini"),
        AgentKind::Codex | AgentKind::Qwen | AgentKind::Opencode | AgentKind::Copilot => {
            Some("openai")
        }
        _ => None,
    }
}

/// A serde enum's word (`passed`, `infra`).
fn word(value: &impl serde::Serialize) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// `text` cut to [`MAX_VALUE_BYTES`] at a character boundary.
fn cut(text: &str) -> String {
    if text.len() <= MAX_VALUE_BYTES {
        return text.to_owned();
    }
    let mut end = MAX_VALUE_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// Locks the sink; a poisoned lock still holds the spans.
fn lock(sink: &Mutex<Vec<SpanData>>) -> std::sync::MutexGuard<'_, Vec<SpanData>> {
    sink.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A span processor that keeps every ended span, for [`send`] to export in batches under
/// one deadline (the SDK's own processors export on their own schedule).
#[derive(Debug, Clone, Default)]
struct Collect(Arc<Mutex<Vec<SpanData>>>);

impl SpanProcessor for Collect {
    fn on_start(&self, _span: &mut opentelemetry_sdk::trace::Span, _cx: &Context) {}

    fn on_end(&self, span: SpanData) {
        lock(&self.0).push(span);
    }

    fn force_flush(&self) -> OTelSdkResult {
        Ok(())
    }

    fn shutdown_with_timeout(&self, _timeout: Duration) -> OTelSdkResult {
        Ok(())
    }
}

/// The OTLP exporter's HTTP client: aptitude's own ([`crate::shared::http`]), each
/// request bounded by the export's deadline and its reply body by 1 MiB.
#[derive(Debug, Clone, Copy)]
struct Client {
    deadline: Duration,
}

#[async_trait::async_trait]
impl opentelemetry_http::HttpClient for Client {
    async fn send_bytes(
        &self,
        request: hyper::Request<Bytes>,
    ) -> Result<hyper::Response<Bytes>, opentelemetry_http::HttpError> {
        let https = request.uri().scheme_str() == Some("https");
        let request = request.map(Full::new);
        let exchange = async {
            let reply = crate::shared::http::send(https, request).await?;
            let (parts, body) = reply.into_parts();
            let body = Limited::new(body, 1024 * 1024).collect().await?.to_bytes();
            Ok::<_, opentelemetry_http::HttpError>(hyper::Response::from_parts(parts, body))
        };
        match tokio::time::timeout(self.deadline, exchange).await {
            Ok(Ok(reply)) => Ok(reply),
            Ok(Err(why)) => Err(why),
            Err(_) => Err("no answer in time".into()),
        }
    }
}

#[cfg(test)]
mod tests;
