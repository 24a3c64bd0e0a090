//! aptitude's MCP host: the servers of one run that aptitude answers itself (`mock:`
//! servers, recorded servers replayed), on a port of 127.0.0.1 that each server's relay
//! ([`super::helper`]) connects to. Every tool call a mock answers and every divergence
//! from a recording is kept here, in aptitude's process: the agent can neither see nor
//! rewrite them.
//!
//! A connection's first line is the run's token and the server's name (`TOKEN NAME`): a
//! connection without the token (another process of the machine, when the sandbox is off)
//! is closed at once. The lines after it are MCP's stdio transport (one JSON-RPC message
//! per line), answered line by line. A line longer than
//! [`MAX_LINE_BYTES`] ends the connection, and at most [`MAX_SESSIONS`] are served at once. The host stops when [`McpHost::finish`]ed or
//! dropped, and every connection with it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use super::serve::Served;
use crate::transcript::ToolCall;

/// The longest line a relay may send, in bytes.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// The most connections served at once: an agent starts each server once (a few times
/// with subagents); more is an agent opening connections itself, which is refused rather
/// than let grow aptitude's memory.
pub const MAX_SESSIONS: usize = 32;

/// The most tool calls the host keeps, and the most bytes of their inputs and outputs:
/// past either, calls are counted, not kept ([`HostReport::dropped_calls`]).
pub const MAX_CALLS: usize = 1000;
/// See [`MAX_CALLS`].
pub const MAX_CALL_BYTES: usize = 32 * 1024 * 1024;
/// The most divergences kept (the first one is what a result names).
const MAX_DIVERGENCES: usize = 16;

/// What the host's servers saw during the run.
#[derive(Debug, Default)]
pub struct HostReport {
    /// Each tool call a mock answered, in the order they came (canonical name
    /// `mcp__<server>__<tool>`, input the arguments, output the reply's text), up to
    /// [`MAX_CALLS`].
    pub calls: Vec<ToolCall>,
    /// Tool calls answered but not kept, past the bounds: an `expect:` can then not be
    /// decided.
    pub dropped_calls: u32,
    /// The first replayed requests the recording did not hold, in words, in order.
    pub divergences: Vec<String>,
}

#[derive(Debug, Default)]
struct State {
    servers: BTreeMap<String, Served>,
    report: HostReport,
    /// Bytes of the calls kept.
    kept: usize,
}

/// A running host.
#[derive(Debug)]
pub struct McpHost {
    serving: super::Serving,
    state: Arc<Mutex<State>>,
    token: String,
}

impl McpHost {
    /// Serves `servers` (by name) on a fresh port of 127.0.0.1.
    ///
    /// # Errors
    /// When no port can be bound.
    pub async fn start(servers: BTreeMap<String, Served>) -> std::io::Result<McpHost> {
        let state = Arc::new(Mutex::new(State {
            servers,
            ..State::default()
        }));
        let token = crate::shared::random_hex(16);
        let (shared, expected) = (Arc::clone(&state), token.clone());
        let serving = super::Serving::start(move |listener, shutdown| {
            accept(listener, shared, expected, shutdown)
        })
        .await?;
        Ok(McpHost {
            serving,
            state,
            token,
        })
    }

    /// The URL a relay is given ([`super::helper::HOST_VAR`]):
    /// `http://127.0.0.1:PORT/TOKEN`.
    pub fn url(&self) -> String {
        format!("http://{}/{}", self.serving.addr, self.token)
    }

    /// Stops serving and returns what the servers saw.
    pub fn finish(self) -> HostReport {
        self.serving.shutdown.cancel();
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        std::mem::take(&mut state.report)
    }
}

async fn accept(
    listener: tokio::net::TcpListener,
    state: Arc<Mutex<State>>,
    token: String,
    shutdown: CancellationToken,
) {
    let mut connections = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            () = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    while connections.try_join_next().is_some() {}
                    if connections.len() < MAX_SESSIONS {
                        connections.spawn(session(stream, Arc::clone(&state), token.clone()));
                    }
                }
                Err(e) => tracing::debug!(error = %e, "MCP host: accept failed"),
            },
        }
    }
    connections.shutdown().await;
}

/// One relay's connection: the token and the server's name, then messages answered line
/// by line.
async fn session(mut stream: tokio::net::TcpStream, state: Arc<Mutex<State>>, token: String) {
    let mut buf: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    let mut server: Option<String> = None;
    loop {
        while let Some(end) = buf.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = buf.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line[..line.len() - 1])
                .trim()
                .to_owned();
            if line.is_empty() {
                continue;
            }
            let Some(name) = &server else {
                let named = line
                    .split_once(' ')
                    .filter(|(t, _)| *t == token)
                    .map(|(_, n)| n.to_owned())
                    .filter(|n| lock(&state).servers.contains_key(n));
                match named {
                    Some(n) => server = Some(n),
                    None => return,
                }
                continue;
            };
            if let Some(reply) = answer(&state, name, &line) {
                let mut bytes = reply.to_string().into_bytes();
                bytes.push(b'\n');
                if stream.write_all(&bytes).await.is_err() {
                    return;
                }
            }
        }
        if buf.len() > MAX_LINE_BYTES {
            return;
        }
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    state
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The reply to one line for `server`, keeping its calls (up to the bounds) and
/// divergences.
fn answer(state: &Mutex<State>, server: &str, line: &str) -> Option<serde_json::Value> {
    let mut state = lock(state);
    let State {
        servers,
        report,
        kept,
    } = &mut *state;
    let answered = servers.get_mut(server)?.answer_line(line);
    for call in answered.calls {
        let size = call.input.to_string().len() + call.output.as_ref().map_or(0, String::len);
        if report.calls.len() < MAX_CALLS && *kept + size <= MAX_CALL_BYTES {
            *kept += size;
            report.calls.push(call);
        } else {
            report.dropped_calls += 1;
        }
    }
    let room = MAX_DIVERGENCES.saturating_sub(report.divergences.len());
    report
        .divergences
        .extend(answered.divergences.into_iter().take(room));
    answered.reply
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gateway::normalize::Normalizer;
    use crate::spec::{MockReply, MockServer, MockTool};
    use tokio::io::AsyncBufReadExt;

    #[tokio::test]
    async fn a_relay_connection_is_answered_and_its_calls_are_kept() {
        let spec = MockServer {
            tools: [(
                "echo".to_owned(),
                MockTool {
                    description: String::new(),
                    input_schema: serde_json::json!({"type": "object"}),
                    replies: vec![MockReply {
                        text: "pong".into(),
                        json: None,
                        error: false,
                    }],
                    expect: Vec::new(),
                    expect_line: 1,
                },
            )]
            .into(),
            from: None,
            line: 1,
        };
        let served = Served::Mock(super::super::serve::Mock::new(
            "m",
            &spec,
            None,
            Normalizer::default(),
        ));
        let host = McpHost::start([("m".to_owned(), served)].into())
            .await
            .unwrap();
        let url = host.url();
        let (addr, token) = url
            .trim_start_matches("http://")
            .split_once('/')
            .map(|(a, t)| (a.to_owned(), t.to_owned()))
            .unwrap();

        // A connection without the token, or naming no server of the host, is closed at
        // once.
        for first in [
            "m".to_owned(),
            format!("{token} other"),
            "wrong m".to_owned(),
        ] {
            let mut stranger = tokio::net::TcpStream::connect(&addr).await.unwrap();
            stranger
                .write_all(
                    format!("{first}\n{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}}\n")
                        .as_bytes(),
                )
                .await
                .unwrap();
            let mut rest = Vec::new();
            stranger.read_to_end(&mut rest).await.unwrap();
            assert!(rest.is_empty(), "{first}");
        }

        let stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
        let (read, mut write) = stream.into_split();
        write
            .write_all(format!("{token} m\n").as_bytes())
            .await
            .unwrap();
        write
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"x\":1}}}\n")
            .await
            .unwrap();
        let mut lines = tokio::io::BufReader::new(read).lines();
        let reply: serde_json::Value =
            serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
        assert_eq!(reply["id"], 1);
        assert_eq!(reply["result"]["content"][0]["text"], "pong");
        let report = host.finish();
        assert_eq!(report.calls.len(), 1);
        assert_eq!(report.calls[0].input["x"], 1);
        assert_eq!(report.calls[0].output.as_deref(), Some("pong"));
    }
}
