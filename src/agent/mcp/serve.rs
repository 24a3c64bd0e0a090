//! What aptitude answers as an MCP server: a `mock:` server's scripted tools, and a
//! recorded server replayed from its cassette. Pure: one JSON-RPC message in, the answer
//! out, with the tool call made and any divergence from the recording.
//!
//! MCP (spec 2025-06-18, "Lifecycle", "Tools"; also 2024-11-05 and 2025-03-26, whose
//! messages for these methods are the same): `initialize` is answered with the client's
//! protocol version when it is one of [`VERSIONS`] (else the newest), the `tools`
//! capability and a `serverInfo`; `tools/list` with every tool; `tools/call` with
//! `content` (one text part) and `isError`; `ping` with `{}`. Other requests get
//! JSON-RPC's "method not found"; notifications get nothing.

use serde_json::{Value, json};

use crate::gateway::mcp_record::{McpExchange, McpTraffic, without_meta};
use crate::gateway::normalize::{Normalizer, first_difference};
use crate::spec::{MockReply, MockServer};
use crate::transcript::ToolCall;

/// The MCP protocol versions a mock answers in, newest first.
pub const VERSIONS: &[&str] = &["2025-06-18", "2025-03-26", "2024-11-05"];

/// JSON-RPC's "parse error".
const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's "invalid request".
const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC's "method not found".
const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC's "invalid params" (MCP: an unknown tool).
const INVALID_PARAMS: i64 = -32602;
/// JSON-RPC's "internal error": a replayed request the recording does not hold.
const INTERNAL_ERROR: i64 = -32603;

/// The stateless MCP discovery request (`server/discover`), which a client may send before
/// `initialize` to learn what the server speaks.
const DISCOVER: &str = "server/discover";

/// A server aptitude answers for.
#[derive(Debug)]
pub enum Served {
    /// A `mock:` server.
    Mock(Mock),
    /// A recorded server, replayed.
    Replay(Replay),
}

/// The most messages a batch may hold (JSON-RPC batches are MCP 2025-03-26's; 2025-06-18
/// has none): a larger one is refused whole, so that one line costs little to answer.
pub const MAX_BATCH: usize = 64;

/// What one line got.
#[derive(Debug, Default)]
pub struct Answered {
    /// The JSON-RPC response to send: one response, or an array for a batch; `None` when
    /// the line held only notifications and responses.
    pub reply: Option<Value>,
    /// The tool calls a mock's `tools/call`s made (canonical name `mcp__<server>__<tool>`,
    /// input the arguments, output the reply's text).
    pub calls: Vec<ToolCall>,
    /// Replayed requests the recording does not hold, in words.
    pub divergences: Vec<String>,
}

/// A `mock:` server as it answers.
#[derive(Debug)]
pub struct Mock {
    server: String,
    tools: Vec<MockedTool>,
    paths: Normalizer,
}

#[derive(Debug)]
struct MockedTool {
    name: String,
    /// The tool as `tools/list` gives it.
    listed: Value,
    /// Scripted results, call by call (the last repeats).
    scripted: Vec<Value>,
    /// Recorded `tools/call`s of the tool: its arguments (normalised) and answer.
    recorded: Vec<(Value, Result<Value, Value>)>,
    calls: usize,
}

/// The `tools/call` result of a scripted reply.
fn scripted_result(reply: &MockReply) -> Value {
    let mut result = json!({
        "content": [{"type": "text", "text": reply.text}],
        "isError": reply.error,
    });
    if let Some(object @ Value::Object(_)) = &reply.json {
        result["structuredContent"] = object.clone();
    }
    result
}

impl Mock {
    /// The mock `server` (its name) of `spec`, with `recording` the traffic its `from:`
    /// names (`None` without `from:`); `paths` restores the run's paths in recorded
    /// answers.
    pub fn new(
        server: &str,
        spec: &MockServer,
        recording: Option<&McpTraffic>,
        paths: Normalizer,
    ) -> Self {
        let mut tools: Vec<MockedTool> = Vec::new();
        let recorded_list = recording
            .into_iter()
            .flat_map(|r| r.exchanges.iter())
            .filter(|e| e.method == "tools/list")
            .filter_map(|e| e.answer.as_ref().ok())
            .flat_map(|r| r["tools"].as_array().cloned().unwrap_or_default());
        for listed in recorded_list {
            if let Some(name) = listed["name"].as_str()
                && !tools.iter().any(|t| t.name == name)
            {
                tools.push(MockedTool {
                    name: name.to_owned(),
                    listed: listed.clone(),
                    scripted: Vec::new(),
                    recorded: Vec::new(),
                    calls: 0,
                });
            }
        }
        for (name, tool) in &spec.tools {
            let listed = json!({
                "name": name,
                "description": tool.description,
                "inputSchema": tool.input_schema,
            });
            let scripted = tool.replies.iter().map(scripted_result).collect();
            match tools.iter_mut().find(|t| t.name == *name) {
                Some(t) => {
                    // What the test writes wins over the recording; an empty description
                    // or schema keeps the recorded one.
                    if !tool.description.is_empty() {
                        t.listed["description"] = json!(tool.description);
                    }
                    if tool.input_schema != json!({"type": "object"}) {
                        t.listed["inputSchema"] = tool.input_schema.clone();
                    }
                    t.scripted = scripted;
                }
                None => tools.push(MockedTool {
                    name: name.clone(),
                    listed,
                    scripted,
                    recorded: Vec::new(),
                    calls: 0,
                }),
            }
        }
        for e in recording.into_iter().flat_map(|r| r.exchanges.iter()) {
            if e.method != "tools/call" {
                continue;
            }
            let name = e.params["name"].as_str().unwrap_or_default();
            if let Some(t) = tools.iter_mut().find(|t| t.name == name) {
                let args = paths.request_json(&e.params["arguments"]);
                t.recorded.push((args, e.answer.clone()));
            }
        }
        Mock {
            server: server.to_owned(),
            tools,
            paths,
        }
    }

    fn answer(&mut self, method: &str, params: &Value) -> (Result<Value, Value>, Option<ToolCall>) {
        match method {
            "initialize" => (Ok(initialize_result(params, &self.server)), None),
            "tools/list" => (
                Ok(
                    json!({"tools": self.tools.iter().map(|t| t.listed.clone()).collect::<Vec<_>>()}),
                ),
                None,
            ),
            "tools/call" => self.call(params),
            "ping" | "logging/setLevel" => (Ok(json!({})), None),
            other => (
                Err(rpc_error(
                    METHOD_NOT_FOUND,
                    &format!("method not found: {other}"),
                )),
                None,
            ),
        }
    }

    fn call(&mut self, params: &Value) -> (Result<Value, Value>, Option<ToolCall>) {
        let name = params["name"].as_str().unwrap_or_default();
        let arguments = params
            .get("arguments")
            .cloned()
            .unwrap_or_else(|| json!({}));
        let Some(tool) = self.tools.iter_mut().find(|t| t.name == name) else {
            return (
                Err(rpc_error(INVALID_PARAMS, &format!("unknown tool: {name}"))),
                None,
            );
        };
        let n = tool.calls;
        tool.calls += 1;
        let answer = if let Some(last) = tool.scripted.last() {
            Ok(tool.scripted.get(n).unwrap_or(last).clone())
        } else {
            // A recorded call with the same arguments, else the tool's n-th recorded call.
            let args = self.paths.request_json(&arguments);
            let same = tool.recorded.iter().find(|(a, _)| *a == args);
            match same.or_else(|| tool.recorded.get(n).or(tool.recorded.last())) {
                Some((_, answer)) => restored(answer, &self.paths),
                None => Ok(json!({
                    "content": [{"type": "text", "text": format!("aptitude mock: the recording has no call of `{name}`")}],
                    "isError": true,
                })),
            }
        };
        let mut call = ToolCall::new(&format!("mcp__{}__{name}", self.server), arguments);
        match &answer {
            Ok(result) => {
                call.output = Some(result_text(result));
                call.is_error = result["isError"].as_bool().unwrap_or(false);
            }
            Err(error) => {
                call.output = error["message"].as_str().map(str::to_owned);
                call.is_error = true;
            }
        }
        (answer, Some(call))
    }
}

/// The text parts of a `tools/call` result, joined by newlines.
fn result_text(result: &Value) -> String {
    result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|part| part["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A recorded answer with the run's paths restored.
fn restored(answer: &Result<Value, Value>, paths: &Normalizer) -> Result<Value, Value> {
    let restore = |v: &Value| crate::gateway::mcp_record::tokenised(v, &|s| paths.restore(s));
    match answer {
        Ok(v) => Ok(restore(v)),
        Err(v) => Err(restore(v)),
    }
}

/// `initialize`'s result for a client whose request had `params`.
fn initialize_result(params: &Value, server: &str) -> Value {
    let asked = params["protocolVersion"].as_str().unwrap_or_default();
    let version = VERSIONS
        .iter()
        .find(|v| **v == asked)
        .copied()
        .unwrap_or(VERSIONS[0]);
    json!({
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": false}},
        "serverInfo": {"name": format!("aptitude-mock-{server}"), "version": env!("CARGO_PKG_VERSION")},
    })
}

fn rpc_error(code: i64, message: &str) -> Value {
    json!({"code": code, "message": message})
}

/// A recorded server as it replays.
#[derive(Debug)]
pub struct Replay {
    server: String,
    exchanges: Vec<McpExchange>,
    /// Each exchange's params as compared, normalised once.
    compared: Vec<Value>,
    used: Vec<bool>,
    requests: usize,
    paths: Normalizer,
}

impl Replay {
    /// The replay of `server` from its recorded `traffic`; `paths` normalises requests as
    /// the recording did and restores the run's paths in answers.
    pub fn new(server: &str, traffic: &McpTraffic, paths: Normalizer) -> Self {
        Replay {
            server: server.to_owned(),
            used: vec![false; traffic.exchanges.len()],
            compared: traffic
                .exchanges
                .iter()
                .map(|e| paths.request_json(&e.params))
                .collect(),
            exchanges: traffic.exchanges.clone(),
            requests: 0,
            paths,
        }
    }

    fn answer(&mut self, method: &str, params: &Value) -> (Result<Value, Value>, Option<String>) {
        if method == "ping" {
            return (Ok(json!({})), None);
        }
        self.requests += 1;
        let want = self.paths.request_json(&without_meta(params));
        let found = (0..self.exchanges.len()).find(|&i| {
            !self.used[i]
                && self.exchanges[i].method == method
                && (method == "initialize" || self.compared[i] == want)
        });
        if let Some(i) = found {
            self.used[i] = true;
            return (restored(&self.exchanges[i].answer, &self.paths), None);
        }
        if method == DISCOVER {
            // A probe of the protocol, not a use of the server: Copilot CLI 1.0.102 sends
            // it before `initialize`, and again when it reconnects (a slow machine), so a
            // replay may see more of them than its recording. Answered as the recording
            // answered the last one (servers without it refuse it), else as unknown.
            let last = (0..self.exchanges.len())
                .rev()
                .find(|&i| self.exchanges[i].method == DISCOVER);
            let answer = match last {
                Some(i) => restored(&self.exchanges[i].answer, &self.paths),
                None => Err(rpc_error(METHOD_NOT_FOUND, "Method not found")),
            };
            return (answer, None);
        }
        let nearest = (0..self.exchanges.len())
            .find(|&i| !self.used[i] && self.exchanges[i].method == method)
            .map(|i| self.compared[i].clone());
        let what = match nearest.and_then(|n| first_difference(&n, &want)) {
            Some((at, recorded, now)) => format!(
                "differs from the recorded one at `{}`: recorded {recorded}, now {now}",
                if at.is_empty() { "params" } else { &at }
            ),
            None => format!("has no `{method}` request left in the recording"),
        };
        let divergence = format!(
            "MCP server `{}`: request {} (`{method}`) {what}",
            self.server, self.requests
        );
        (
            Err(rpc_error(
                INTERNAL_ERROR,
                &format!(
                    "aptitude replay: the recording of MCP server `{}` has no such request",
                    self.server
                ),
            )),
            Some(divergence),
        )
    }
}

impl Served {
    /// The answer to one JSON-RPC message, with the call and divergence it made.
    fn answer(&mut self, message: &Value, out: &mut Answered) -> Option<Value> {
        let id = message.get("id").filter(|id| !id.is_null());
        let method = message.get("method").and_then(Value::as_str);
        let (id, method) = match (id, method) {
            (Some(id), Some(method)) => (id, method),
            // A notification, or a response to a request of the server's (it makes none).
            (None, _) => return None,
            (Some(_), None)
                if message.get("result").is_some() || message.get("error").is_some() =>
            {
                return None;
            }
            (Some(id), None) => {
                let error = rpc_error(INVALID_REQUEST, "a request needs a string `method`");
                return Some(json!({"jsonrpc": "2.0", "id": id, "error": error}));
            }
        };
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let answer = match self {
            Served::Mock(mock) => {
                let (answer, call) = mock.answer(method, &params);
                out.calls.extend(call);
                answer
            }
            Served::Replay(replay) => {
                let (answer, divergence) = replay.answer(method, &params);
                out.divergences.extend(divergence);
                answer
            }
        };
        Some(match answer {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
        })
    }

    /// The answer to one line of the stdio transport (one `POST` body of the HTTP one): a
    /// message, or a batch of at most [`MAX_BATCH`] answered with one array. A line that
    /// is not JSON gets JSON-RPC's parse error; an empty or oversized batch, its invalid
    /// request error.
    pub fn answer_line(&mut self, line: &str) -> Answered {
        let mut out = Answered::default();
        let refuse = |code: i64, why: &str| json!({"jsonrpc": "2.0", "id": null, "error": rpc_error(code, why)});
        out.reply = match serde_json::from_str::<Value>(line) {
            Ok(Value::Array(batch)) if batch.is_empty() || batch.len() > MAX_BATCH => Some(refuse(
                INVALID_REQUEST,
                &format!("a batch holds 1 to {MAX_BATCH} messages"),
            )),
            Ok(Value::Array(batch)) => {
                let replies: Vec<Value> = batch
                    .iter()
                    .filter_map(|m| self.answer(m, &mut out))
                    .collect();
                (!replies.is_empty()).then_some(Value::Array(replies))
            }
            Ok(message) => self.answer(&message, &mut out),
            Err(e) => Some(refuse(PARSE_ERROR, &format!("parse error: {e}"))),
        };
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::MockTool;

    fn tool(replies: &[&str]) -> MockTool {
        MockTool {
            description: "Open a ticket".into(),
            input_schema: json!({"type": "object", "properties": {"title": {"type": "string"}}}),
            replies: replies
                .iter()
                .map(|r| MockReply {
                    text: (*r).into(),
                    json: None,
                    error: false,
                })
                .collect(),
            expect: Vec::new(),
            expect_line: 1,
        }
    }

    fn ask(served: &mut Served, message: &Value) -> Answered {
        served.answer_line(&message.to_string())
    }

    fn request(id: u32, method: &str, params: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    }

    #[test]
    fn a_mock_answers_the_lifecycle_lists_its_tools_and_replies_call_by_call() {
        let spec = MockServer {
            tools: [("create_ticket".to_owned(), tool(&["TICKET-1", "TICKET-2"]))].into(),
            from: None,
            line: 1,
        };
        let mut served = Served::Mock(Mock::new("tickets", &spec, None, Normalizer::default()));
        let init = ask(
            &mut served,
            &request(0, "initialize", json!({"protocolVersion": "2025-03-26"})),
        );
        let init = init.reply.unwrap();
        assert_eq!(init["result"]["protocolVersion"], "2025-03-26");
        assert_eq!(
            init["result"]["capabilities"]["tools"]["listChanged"],
            false
        );
        let unknown_version = ask(
            &mut served,
            &request(1, "initialize", json!({"protocolVersion": "1999-01-01"})),
        );
        assert_eq!(
            unknown_version.reply.unwrap()["result"]["protocolVersion"],
            VERSIONS[0]
        );
        assert!(
            ask(
                &mut served,
                &json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
            )
            .reply
            .is_none()
        );
        let list = ask(&mut served, &request(2, "tools/list", json!({})))
            .reply
            .unwrap();
        assert_eq!(list["result"]["tools"][0]["name"], "create_ticket");
        assert_eq!(
            list["result"]["tools"][0]["inputSchema"]["properties"]["title"]["type"],
            "string"
        );
        let texts: Vec<String> = (0..3)
            .map(|i| {
                let a = ask(
                    &mut served,
                    &request(
                        3 + i,
                        "tools/call",
                        json!({"name": "create_ticket", "arguments": {"title": format!("t{i}")}}),
                    ),
                );
                let call = a.calls.into_iter().next().unwrap();
                assert_eq!(call.canonical, "mcp__tickets__create_ticket");
                assert_eq!(call.input["title"], format!("t{i}"));
                a.reply.unwrap()["result"]["content"][0]["text"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect();
        assert_eq!(
            texts,
            ["TICKET-1", "TICKET-2", "TICKET-2"],
            "the last reply repeats"
        );
        let unknown = ask(
            &mut served,
            &request(9, "tools/call", json!({"name": "nope"})),
        )
        .reply
        .unwrap();
        assert_eq!(unknown["error"]["code"], INVALID_PARAMS);
        let other = ask(&mut served, &request(10, "resources/list", json!({})))
            .reply
            .unwrap();
        assert_eq!(other["error"]["code"], METHOD_NOT_FOUND);
        let bad = served.answer_line("{not json");
        assert_eq!(bad.reply.unwrap()["error"]["code"], PARSE_ERROR);
        let empty = served.answer_line("[]");
        assert_eq!(empty.reply.unwrap()["error"]["code"], INVALID_REQUEST);
        let huge = format!(
            "[{}]",
            vec![request(1, "ping", json!({})).to_string(); MAX_BATCH + 1].join(",")
        );
        assert_eq!(
            served.answer_line(&huge).reply.unwrap()["error"]["code"],
            INVALID_REQUEST
        );
        let batch = served.answer_line(&format!(
            "[{},{}]",
            request(20, "ping", json!({})),
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled"})
        ));
        let replies = batch.reply.unwrap();
        assert_eq!(
            replies.as_array().map(Vec::len),
            Some(1),
            "one array, notifications unanswered"
        );
        let no_method = ask(
            &mut served,
            &json!({"jsonrpc": "2.0", "id": 30, "method": 7}),
        );
        assert_eq!(no_method.reply.unwrap()["error"]["code"], INVALID_REQUEST);
    }

    fn recording() -> McpTraffic {
        let call = |args: Value, text: &str| McpExchange {
            method: "tools/call".into(),
            params: json!({"name": "read", "arguments": args}),
            answer: Ok(json!({"content": [{"type": "text", "text": text}], "isError": false})),
        };
        McpTraffic {
            exchanges: vec![
                McpExchange {
                    method: "initialize".into(),
                    params: json!({"protocolVersion": "2025-06-18"}),
                    answer: Ok(
                        json!({"protocolVersion": "2025-06-18", "serverInfo": {"name": "fs"}, "capabilities": {"tools": {}}}),
                    ),
                },
                McpExchange {
                    method: "tools/list".into(),
                    params: Value::Null,
                    answer: Ok(
                        json!({"tools": [{"name": "read", "description": "Read a file", "inputSchema": {"type": "object"}}]}),
                    ),
                },
                call(json!({"path": "a.txt"}), "A"),
                call(json!({"path": "b.txt"}), "B"),
            ],
            dropped: 0,
        }
    }

    #[test]
    fn a_replay_answers_each_recorded_request_once_and_names_the_first_difference() {
        let mut served = Served::Replay(Replay::new("fs", &recording(), Normalizer::default()));
        let init = ask(
            &mut served,
            &request(
                0,
                "initialize",
                json!({"protocolVersion": "2025-06-18", "clientInfo": {"name": "x"}}),
            ),
        );
        assert_eq!(init.reply.unwrap()["result"]["serverInfo"]["name"], "fs");
        let list = ask(&mut served, &request(1, "tools/list", Value::Null));
        assert!(list.divergences.is_empty());
        // Out of order, with a progress token: still the recorded answer.
        let b = ask(
            &mut served,
            &request(
                2,
                "tools/call",
                json!({"name": "read", "arguments": {"path": "b.txt"}, "_meta": {"progressToken": 5}}),
            ),
        );
        assert_eq!(b.reply.unwrap()["result"]["content"][0]["text"], "B");
        let changed = ask(
            &mut served,
            &request(
                3,
                "tools/call",
                json!({"name": "read", "arguments": {"path": "c.txt"}}),
            ),
        );
        let divergence = changed.divergences.into_iter().next().unwrap();
        assert!(
            divergence.contains("MCP server `fs`: request 4 (`tools/call`) differs"),
            "{divergence}"
        );
        assert!(divergence.contains("arguments.path"), "{divergence}");
        assert!(
            divergence.contains("a.txt") && divergence.contains("c.txt"),
            "{divergence}"
        );
        assert_eq!(changed.reply.unwrap()["error"]["code"], INTERNAL_ERROR);
        let a = ask(
            &mut served,
            &request(
                4,
                "tools/call",
                json!({"name": "read", "arguments": {"path": "a.txt"}}),
            ),
        );
        assert!(a.divergences.is_empty());
        let again = ask(
            &mut served,
            &request(
                5,
                "tools/call",
                json!({"name": "read", "arguments": {"path": "a.txt"}}),
            ),
        );
        assert!(
            again
                .divergences
                .into_iter()
                .next()
                .unwrap()
                .contains("has no `tools/call` request left")
        );
        // A discovery probe more than the recording had is answered as unknown, not a
        // divergence: it is the client's reconnecting, not the run's use of the server.
        let probe = ask(&mut served, &request(6, DISCOVER, Value::Null));
        assert!(probe.divergences.is_empty());
        assert_eq!(probe.reply.unwrap()["error"]["code"], METHOD_NOT_FOUND);
    }

    #[test]
    fn a_mock_from_a_recording_lists_the_recorded_tools_and_answers_by_arguments() {
        let spec = MockServer {
            tools: [("write".to_owned(), tool(&["written"]))].into(),
            from: None,
            line: 1,
        };
        let recorded = recording();
        let mut served = Served::Mock(Mock::new(
            "fs",
            &spec,
            Some(&recorded),
            Normalizer::default(),
        ));
        let list = ask(&mut served, &request(1, "tools/list", json!({})))
            .reply
            .unwrap();
        let names: Vec<&str> = list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["read", "write"]);
        let text = |a: Answered| {
            a.reply.unwrap()["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .to_owned()
        };
        assert_eq!(
            text(ask(
                &mut served,
                &request(
                    2,
                    "tools/call",
                    json!({"name": "read", "arguments": {"path": "b.txt"}})
                )
            )),
            "B"
        );
        // Arguments never recorded: the tool's recorded calls in order.
        assert_eq!(
            text(ask(
                &mut served,
                &request(
                    3,
                    "tools/call",
                    json!({"name": "read", "arguments": {"path": "z"}})
                )
            )),
            "B"
        );
        assert_eq!(
            text(ask(
                &mut served,
                &request(4, "tools/call", json!({"name": "write", "arguments": {}}))
            )),
            "written"
        );
    }
}
