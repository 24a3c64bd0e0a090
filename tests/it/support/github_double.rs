//! A GitHub double for end-to-end runs of the action (`tests/it/act.rs`): one server on
//! 127.0.0.1 that plays both github.com (release assets, `GET
//! /{owner}/{repo}/releases/download/{tag}/{asset}`) and its REST API as aptitude uses it
//! (`GET /user`, the issue comments of a pull request, check runs). Unlike a stateless mock
//! it keeps what was written, as GitHub does: a comment created by one workflow run is
//! listed to the next one, which must update it in place. Every request is recorded.
//!
//! The token is an Actions token: `GET /user` answers 403 and comments are posted as
//! `github-actions[bot]`, the identity aptitude falls back to.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// The login comments are posted as (an Actions token's).
pub const BOT: &str = "github-actions[bot]";

/// One recorded request: method, path, JSON body (if it had one).
pub type Recorded = (String, String, Option<Value>);

#[derive(Default)]
struct Shared {
    /// `(issue number, comment)`; a comment is `{id, user: {login, type}, body}`.
    comments: Vec<(u64, Value)>,
    /// The check runs as created, with every later batch of annotations appended.
    check_runs: Vec<Value>,
    /// Files served by path.
    assets: HashMap<String, Vec<u8>>,
    requests: Vec<Recorded>,
    last_id: u64,
}

/// A running GitHub double; stops when dropped.
pub struct GithubDouble {
    addr: SocketAddr,
    shared: Arc<Mutex<Shared>>,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl GithubDouble {
    /// Starts a server on a free port of 127.0.0.1.
    pub fn start() -> Self {
        let shared = Arc::new(Mutex::new(Shared::default()));
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let state = Arc::clone(&shared);
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .expect("bind");
                addr_tx
                    .send(listener.local_addr().expect("addr"))
                    .expect("send addr");
                let app = Router::new().fallback(handle).with_state(state);
                let _ = axum::serve(listener, app)
                    .with_graceful_shutdown(async {
                        let _ = stop_rx.await;
                    })
                    .await;
            });
        });
        let addr = addr_rx.recv().expect("server address");
        GithubDouble {
            addr,
            shared,
            _stop: stop_tx,
        }
    }

    /// `http://localhost:PORT`: both `GITHUB_SERVER_URL` and `GITHUB_API_URL`. A host
    /// name, not an address, so that a client resolves it as it resolves github.com (a
    /// statically linked binary has its own resolver).
    pub fn url(&self) -> String {
        format!("http://localhost:{}", self.addr.port())
    }

    /// Serves `bytes` at `path` (replacing what was served there).
    pub fn serve(&self, path: &str, bytes: Vec<u8>) {
        self.shared
            .lock()
            .unwrap()
            .assets
            .insert(path.to_owned(), bytes);
    }

    /// The comments of issue (pull request) `number`, oldest first.
    pub fn comments(&self, number: u64) -> Vec<Value> {
        let shared = self.shared.lock().unwrap();
        shared
            .comments
            .iter()
            .filter(|(n, _)| *n == number)
            .map(|(_, c)| c.clone())
            .collect()
    }

    /// The check runs created so far, each with all its annotations.
    pub fn check_runs(&self) -> Vec<Value> {
        self.shared.lock().unwrap().check_runs.clone()
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.lock().unwrap().requests.clone()
    }

    /// The requests to the REST API (not the asset downloads), for the OpenAPI check.
    pub fn api_requests(&self) -> Vec<Recorded> {
        self.requests()
            .into_iter()
            .filter(|(_, path, _)| path == "/user" || path.starts_with("/repos/"))
            .collect()
    }
}

fn reply(status: StatusCode, body: Value) -> Response {
    (status, axum::Json(body)).into_response()
}

fn not_found() -> Response {
    reply(StatusCode::NOT_FOUND, json!({"message": "Not Found"}))
}

async fn handle(
    State(shared): State<Arc<Mutex<Shared>>>,
    method: Method,
    uri: Uri,
    body: Bytes,
) -> Response {
    let path = uri.path().to_owned();
    let json: Option<Value> = serde_json::from_slice(&body).ok();
    let mut s = shared.lock().unwrap();
    s.requests
        .push((method.to_string(), path.clone(), json.clone()));
    if method == Method::GET
        && let Some(bytes) = s.assets.get(&path)
    {
        return (StatusCode::OK, bytes.clone()).into_response();
    }
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let body = json.unwrap_or(Value::Null);
    match (method.as_str(), segments.as_slice()) {
        ("GET", ["user"]) => reply(
            StatusCode::FORBIDDEN,
            json!({"message": "Resource not accessible by integration"}),
        ),
        ("GET", ["repos", _, _, "issues", number, "comments"]) => {
            let Ok(number) = number.parse::<u64>() else {
                return not_found();
            };
            let list: Vec<Value> = s
                .comments
                .iter()
                .filter(|(n, _)| *n == number)
                .map(|(_, c)| c.clone())
                .collect();
            reply(StatusCode::OK, Value::Array(list))
        }
        ("POST", ["repos", _, _, "issues", number, "comments"]) => {
            let Ok(number) = number.parse::<u64>() else {
                return not_found();
            };
            s.last_id += 1;
            let comment = json!({
                "id": s.last_id,
                "user": {"login": BOT, "type": "Bot"},
                "body": body["body"],
            });
            s.comments.push((number, comment.clone()));
            reply(StatusCode::CREATED, comment)
        }
        ("PATCH", ["repos", _, _, "issues", "comments", id]) => {
            let id = id.parse::<u64>().ok();
            match s.comments.iter_mut().find(|(_, c)| c["id"].as_u64() == id) {
                Some((_, comment)) => {
                    comment["body"] = body["body"].clone();
                    reply(StatusCode::OK, comment.clone())
                }
                None => not_found(),
            }
        }
        ("POST", ["repos", _, _, "check-runs"]) => {
            s.last_id += 1;
            let mut run = body;
            run["id"] = json!(s.last_id);
            // Created with the Actions token: GitHub Actions' app.
            run["app"] = json!({"id": 15368, "slug": "github-actions"});
            s.check_runs.push(run.clone());
            reply(StatusCode::CREATED, run)
        }
        ("PATCH", ["repos", _, _, "check-runs", id]) => {
            let id = id.parse::<u64>().ok();
            let Some(run) = s.check_runs.iter_mut().find(|r| r["id"].as_u64() == id) else {
                return not_found();
            };
            let more = body["output"]["annotations"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            if let Some(list) = run["output"]["annotations"].as_array_mut() {
                list.extend(more);
            }
            reply(StatusCode::OK, run.clone())
        }
        _ => not_found(),
    }
}
