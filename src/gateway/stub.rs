//! A stub upstream for `aptitude drift`: a model endpoint on 127.0.0.1 that costs nothing.
//! It keeps the body of every request it gets (what the agent, through the gateway, asked
//! the model) and refuses each with a 400 error, which no agent retries, so the agent stops
//! after its first call. The error is shaped to read as an error in every protocol the
//! gateway speaks: `{"type":"error","error":{"type","message","code","status"}}` holds the
//! Anthropic Messages, OpenAI and Gemini error fields at once.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::{Response, StatusCode};
use tokio_util::sync::CancellationToken;

use super::wire::shown::{self, ShownTools};

/// Requests kept at most (an agent stops after the first; a few side calls come first).
const MAX_REQUESTS: usize = 32;
/// A request body's bytes kept at most.
const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;

/// A running stub upstream; stops when dropped.
pub struct StubUpstream {
    url: String,
    bodies: Arc<Mutex<Vec<Bytes>>>,
    shutdown: CancellationToken,
}

impl StubUpstream {
    /// Starts the stub on a free port of 127.0.0.1, served by its own thread.
    ///
    /// # Errors
    /// When no port can be bound or no runtime built.
    pub fn start() -> std::io::Result<Self> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let url = format!("http://{}", listener.local_addr()?);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let shutdown = CancellationToken::new();
        let (kept, stop) = (Arc::clone(&bodies), shutdown.clone());
        std::thread::spawn(move || {
            runtime.block_on(async move {
                let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                    return;
                };
                let handler: super::server::Handler = Arc::new(move |request| {
                    let kept = Arc::clone(&kept);
                    Box::pin(async move {
                        let body = Limited::new(request.into_body(), MAX_BODY_BYTES)
                            .collect()
                            .await
                            .map(http_body_util::Collected::to_bytes)
                            .unwrap_or_default();
                        if let Ok(mut kept) = kept.lock()
                            && kept.len() < MAX_REQUESTS
                        {
                            kept.push(body);
                        }
                        Ok(refusal())
                    })
                });
                super::server::serve_http(listener, handler, 64, stop).await;
            });
        });
        Ok(Self {
            url,
            bodies,
            shutdown,
        })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The tools of the request that offered the most (an agent's side calls — titles,
    /// quota checks — offer none), by the name the model was shown; empty when no request
    /// offered any.
    pub fn tools_offered(&self) -> Vec<String> {
        let bodies = self.bodies.lock().map(|b| b.clone()).unwrap_or_default();
        bodies
            .iter()
            .map(|body| {
                let mut tools = ShownTools::new();
                shown::note_tools(&mut tools, body);
                tools.into_keys().collect::<Vec<_>>()
            })
            .max_by_key(Vec::len)
            .unwrap_or_default()
    }

    /// How many requests came.
    pub fn requests(&self) -> usize {
        self.bodies.lock().map(|b| b.len()).unwrap_or(0)
    }
}

impl Drop for StubUpstream {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

fn refusal() -> Response<super::server::HttpBody> {
    let body = serde_json::json!({
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "aptitude drift: the request was recorded; no model answers",
            "code": 400,
            "status": "INVALID_ARGUMENT",
        }
    });
    let mut response = Response::new(
        Full::new(Bytes::from(body.to_string()))
            .map_err(|never| match never {})
            .boxed(),
    );
    *response.status_mut() = StatusCode::BAD_REQUEST;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_each_request_and_reads_the_tools_of_the_fullest() {
        let stub = StubUpstream::start().unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let client =
            hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                .build_http::<Full<Bytes>>();
        for body in [
            r#"{"messages":[],"max_tokens":1}"#,
            r#"{"tools":[{"name":"Bash","input_schema":{}},{"name":"Read","input_schema":{}}]}"#,
        ] {
            let request = hyper::Request::post(format!("{}/v1/messages", stub.url()))
                .body(Full::new(Bytes::from(body)))
                .unwrap();
            let status = runtime.block_on(client.request(request)).unwrap().status();
            assert_eq!(status, StatusCode::BAD_REQUEST);
        }
        assert_eq!(stub.requests(), 2);
        assert_eq!(stub.tools_offered(), ["Bash", "Read"]);
    }
}
