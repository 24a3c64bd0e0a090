//! What aptitude's model gateway adds to each model request (`cargo bench --bench
//! gateway_latency`; target ≤ 5 ms).
//!
//! The scripted model (the tests' double, on 127.0.0.1) answers every request at once
//! with a short streamed reply. One HTTP/1.1 keep-alive client, as the agents use, sends
//! the same request alternately straight to the model and through a run's gateway endpoint
//! (in this process, as in `aptitude run`: real key swapped in, reply metered on the way),
//! for each protocol and for a small and a large (≈ 500 kB, a long conversation) request.
//! Reported per case: the median and p95 of (through the gateway − direct) for the whole
//! reply, and the direct median for scale. Figures are printed, not asserted.

#![expect(
    clippy::expect_used,
    reason = "a benchmark stops loudly on any failure; it asserts nothing else"
)]

use std::io::Write;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

#[path = "../tests/it/support/model.rs"]
#[expect(
    dead_code,
    clippy::expect_used,
    clippy::unwrap_used,
    reason = "the benchmark uses part of the test double, which fails loudly"
)]
mod model;

#[path = "../tests/it/support/wire.rs"]
#[expect(
    clippy::unwrap_used,
    reason = "the double's other protocols, served beside the one the benchmark uses"
)]
mod wire;

#[path = "../tests/it/support/recorded.rs"]
#[expect(
    dead_code,
    reason = "the double's recorded replies, a turn the benchmark does not script"
)]
mod recorded;

use aptitude::gateway::{Gateway, GatewayOptions, RunGateway};
use model::{ScriptedModel, Turn};

const WARMUP: usize = 30;
const REQUESTS: usize = 300;

/// One measured case: its name, request path and body.
struct Case {
    name: String,
    path: &'static str,
    body: String,
}

fn cases() -> Vec<Case> {
    // A long conversation's worth of text (≈ 500 kB), as late turns of an agent run send.
    let filler = "lorem ipsum dolor sit amet ".repeat(18_500);
    let mut out = Vec::new();
    for (size, pad) in [("small", String::new()), ("500 kB", filler)] {
        let text = format!("BENCH: say ok {pad}");
        let user = serde_json::json!({"role": "user", "content": text});
        out.push(Case {
            name: format!("Anthropic Messages, {size}"),
            path: "/v1/messages?beta=true",
            body: serde_json::json!({"model": "claude-sonnet-4-5", "stream": true, "max_tokens": 64, "messages": [user]}).to_string(),
        });
        out.push(Case {
            name: format!("OpenAI Responses, {size}"),
            path: "/v1/responses",
            body: serde_json::json!({"model": "gpt-5", "stream": true, "input": [user]})
                .to_string(),
        });
        out.push(Case {
            name: format!("Chat Completions, {size}"),
            path: "/v1/chat/completions",
            body: serde_json::json!({"model": "gpt-5", "stream": true, "messages": [user]})
                .to_string(),
        });
        out.push(Case {
            name: format!("Gemini, {size}"),
            path: "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
            body: serde_json::json!({"contents": [{"role": "user", "parts": [{"text": text}]}]})
                .to_string(),
        });
    }
    out
}

type HttpClient = Client<hyper_util::client::legacy::connect::HttpConnector, Full<Bytes>>;

/// Sends one request and reads the whole reply; its wall time.
async fn time_one(client: &HttpClient, url: &str, body: &str) -> Duration {
    let request = hyper::Request::post(url)
        .header("content-type", "application/json")
        .header("x-api-key", "sk-bench-placeholder")
        .header("authorization", "Bearer sk-bench-placeholder")
        .body(Full::new(Bytes::from(body.to_owned())))
        .expect("a valid request");
    let started = Instant::now();
    let reply = client.request(request).await.expect("a reply");
    assert!(reply.status().is_success(), "{}", reply.status());
    let _ = reply.into_body().collect().await.expect("the whole reply");
    started.elapsed()
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[i]
}

fn main() -> std::io::Result<()> {
    let model = ScriptedModel::start();
    model.script("BENCH", vec![Turn::Text("ok".into())]);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let mut out = std::io::stdout().lock();
    runtime.block_on(async {
        let gateway = Gateway::new(GatewayOptions::default());
        let endpoint = gateway
            .start(RunGateway {
                upstream: model.base_url(),
                secrets: vec!["sk-bench-real-key-0123456789".into()],
                ..RunGateway::default()
            })
            .await
            .expect("the gateway starts");
        let client: HttpClient = Client::builder(TokioExecutor::new()).build_http();
        writeln!(
            out,
            "{:<28} {:>12} {:>14} {:>14}",
            "case", "direct p50", "added p50", "added p95"
        )?;
        for case in cases() {
            let direct_url = format!("{}{}", model.base_url(), case.path);
            let via_url = format!("{}{}", endpoint.base_url(), case.path);
            for _ in 0..WARMUP {
                time_one(&client, &direct_url, &case.body).await;
                time_one(&client, &via_url, &case.body).await;
            }
            let mut direct = Vec::with_capacity(REQUESTS);
            let mut added = Vec::with_capacity(REQUESTS);
            for _ in 0..REQUESTS {
                let d = time_one(&client, &direct_url, &case.body).await;
                let v = time_one(&client, &via_url, &case.body).await;
                direct.push(d.as_secs_f64() * 1e3);
                added.push((v.as_secs_f64() - d.as_secs_f64()) * 1e3);
            }
            direct.sort_by(f64::total_cmp);
            added.sort_by(f64::total_cmp);
            writeln!(
                out,
                "{:<28} {:>9.3} ms {:>11.3} ms {:>11.3} ms",
                case.name,
                quantile(&direct, 0.5),
                quantile(&added, 0.5),
                quantile(&added, 0.95),
            )?;
        }
        let traffic = endpoint.finish().await;
        writeln!(
            out,
            "through the gateway: {} model requests metered, {} failed, {} tokens",
            traffic.requests,
            traffic.failed,
            traffic.total_tokens()
        )
    })
}
