//! The MCP part of a cassette: what each of a run's stdio MCP servers was asked and
//! answered, recorded beside the model exchange (`run --record-model`) so that a replay
//! answers the agent's MCP calls too ([`crate::agent::mcp`]).
//!
//! A server's traffic is its client's requests in the order they were sent, each with the
//! server's answer (a JSON-RPC `result` or `error`), in the JSON-RPC 2.0 messages of MCP's
//! stdio transport (one message per line). Requests are stored without `params._meta`
//! (progress tokens, which differ from run to run), and every string with the run's paths
//! as tokens ([`super::normalize::Normalizer::paths`]). Notifications, requests never
//! answered and the server's own requests to the client are not kept.
//!
//! In the cassette file: `"mcp": {"<server>": {"exchanges": [{"method", "params",
//! "result" | "error"}], "dropped": n}}`.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// The most a server's recorded traffic holds, in bytes of its JSON: later exchanges are
/// dropped, and counted.
pub const MAX_MCP_BYTES: usize = 4 * 1024 * 1024;

/// One recorded request of a client to an MCP server, and the server's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct McpExchange {
    /// The JSON-RPC method: `initialize`, `tools/list`, `tools/call`, …
    pub method: String,
    /// Its `params` (`null` when it had none), without `_meta`, the run's paths as tokens.
    pub params: Value,
    /// The server's `result` (`Ok`) or `error` object (`Err`), the run's paths as tokens.
    pub answer: Result<Value, Value>,
}

/// One server's recorded traffic.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct McpTraffic {
    /// Its exchanges, in the order the client sent the requests.
    pub exchanges: Vec<McpExchange>,
    /// Exchanges left out: over [`MAX_MCP_BYTES`], or lines of the recording that could
    /// not be read.
    pub dropped: u32,
}

/// `params` as recorded and compared: without `_meta`.
pub fn without_meta(params: &Value) -> Value {
    match params {
        Value::Object(map) if map.contains_key("_meta") => {
            let mut map = map.clone();
            map.remove("_meta");
            Value::Object(map)
        }
        other => other.clone(),
    }
}

/// The traffic of one server, from the lines its tap wrote: `> MESSAGE` for what the
/// client sent, `< MESSAGE` for what the server sent ([`crate::agent::mcp::helper`]).
/// `paths` tokenises the run's paths in every string. A line that is not a message of
/// either side is counted in `dropped`, never guessed at.
pub fn from_tap(log: &str, paths: &dyn Fn(&str) -> String) -> McpTraffic {
    let mut traffic = McpTraffic::default();
    // Requests in order: (id as JSON text, method, params, answer once answered).
    type Asked = (String, String, Value, Option<Result<Value, Value>>);
    let mut asked: Vec<Asked> = Vec::new();
    for line in log.lines().filter(|l| !l.trim().is_empty()) {
        let (from_client, text) = match (line.strip_prefix("> "), line.strip_prefix("< ")) {
            (Some(t), _) => (true, t),
            (_, Some(t)) => (false, t),
            _ => {
                traffic.dropped += 1;
                continue;
            }
        };
        let Ok(message) = serde_json::from_str::<Value>(text) else {
            traffic.dropped += 1;
            continue;
        };
        let messages = match message {
            Value::Array(batch) => batch,
            one => vec![one],
        };
        for m in messages {
            let id = m.get("id").filter(|id| !id.is_null()).map(Value::to_string);
            match (from_client, id, m.get("method").and_then(Value::as_str)) {
                (true, Some(id), Some(method)) => {
                    let params = without_meta(m.get("params").unwrap_or(&Value::Null));
                    asked.push((id, method.to_owned(), tokenised(&params, paths), None));
                }
                (false, Some(id), None) => {
                    let answer = match (m.get("result"), m.get("error")) {
                        (Some(r), _) => Ok(tokenised(r, paths)),
                        (None, Some(e)) => Err(tokenised(e, paths)),
                        (None, None) => continue,
                    };
                    if let Some(slot) = asked
                        .iter_mut()
                        .rev()
                        .find(|(i, _, _, a)| *i == id && a.is_none())
                    {
                        slot.3 = Some(answer);
                    }
                }
                // Notifications, the server's requests and the client's answers to them.
                _ => {}
            }
        }
    }
    let mut bytes = 0;
    for (_, method, params, answer) in asked {
        let Some(answer) = answer else { continue };
        let size = method.len()
            + params.to_string().len()
            + match &answer {
                Ok(v) | Err(v) => v.to_string().len(),
            };
        if bytes + size > MAX_MCP_BYTES {
            traffic.dropped += 1;
            continue;
        }
        bytes += size;
        traffic.exchanges.push(McpExchange {
            method,
            params,
            answer,
        });
    }
    traffic
}

/// `value` with `paths` applied to every string (and key).
pub fn tokenised(value: &Value, paths: &dyn Fn(&str) -> String) -> Value {
    match value {
        Value::String(s) => Value::String(paths(s)),
        Value::Array(items) => Value::Array(items.iter().map(|v| tokenised(v, paths)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (paths(k), tokenised(v, paths)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The cassette's `mcp` object for `servers`.
pub(super) fn to_json(servers: &BTreeMap<String, McpTraffic>) -> Value {
    let mut out = Map::new();
    for (name, traffic) in servers {
        let exchanges: Vec<Value> = traffic
            .exchanges
            .iter()
            .map(|e| {
                let mut v = serde_json::json!({"method": e.method, "params": e.params});
                match &e.answer {
                    Ok(r) => v["result"] = r.clone(),
                    Err(err) => v["error"] = err.clone(),
                }
                v
            })
            .collect();
        let mut server = serde_json::json!({ "exchanges": exchanges });
        if traffic.dropped > 0 {
            server["dropped"] = traffic.dropped.into();
        }
        out.insert(name.clone(), server);
    }
    Value::Object(out)
}

/// A recorded MCP exchange that can not be replayed.
#[derive(Debug, thiserror::Error)]
#[error("MCP server `{server}`, exchange {exchange}: {why}")]
pub(super) struct McpRecordError {
    /// The server's name in the cassette.
    server: String,
    /// The exchange, from 1.
    exchange: usize,
    /// What it lacks.
    why: &'static str,
}

/// The servers of a cassette's `mcp` object (absent in cassettes recorded before MCP
/// traffic was).
///
/// # Errors
/// The first exchange that lacks its method or answer.
pub(super) fn from_json(
    mcp: Option<&Value>,
) -> Result<BTreeMap<String, McpTraffic>, McpRecordError> {
    let mut out = BTreeMap::new();
    for (name, server) in mcp.and_then(Value::as_object).into_iter().flatten() {
        let mut traffic = McpTraffic {
            exchanges: Vec::new(),
            dropped: server["dropped"]
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .unwrap_or(0),
        };
        for (i, e) in server["exchanges"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let at = |why| McpRecordError {
                server: name.clone(),
                exchange: i + 1,
                why,
            };
            let method = e["method"].as_str().ok_or_else(|| at("it has no method"))?;
            let answer = match (e.get("result"), e.get("error")) {
                (Some(r), _) => Ok(r.clone()),
                (None, Some(err)) => Err(err.clone()),
                (None, None) => return Err(at("it has neither `result` nor `error`")),
            };
            traffic.exchanges.push(McpExchange {
                method: method.to_owned(),
                params: e.get("params").cloned().unwrap_or(Value::Null),
                answer,
            });
        }
        out.insert(name.clone(), traffic);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_tap_pairs_each_request_with_its_answer_in_request_order() {
        let log = [
            r#"> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}"#,
            r#"< {"jsonrpc":"2.0","id":0,"result":{"serverInfo":{"name":"s"}}}"#,
            r#"> {"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{"path":"/ws/a.txt"},"_meta":{"progressToken":7}}}"#,
            r#"> {"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            r#"< {"jsonrpc":"2.0","id":2,"result":{"tools":[]}}"#,
            r#"< {"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"no /ws/a.txt"}}"#,
            r#"> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"never"}}"#,
            "garbage",
        ]
        .join("\n");
        let traffic = from_tap(&log, &|s: &str| s.replace("/ws", "@@ws@@"));
        let methods: Vec<&str> = traffic
            .exchanges
            .iter()
            .map(|e| e.method.as_str())
            .collect();
        assert_eq!(methods, ["initialize", "tools/call", "tools/list"]);
        assert_eq!(
            traffic.exchanges[1].params,
            json!({"name": "read", "arguments": {"path": "@@ws@@/a.txt"}})
        );
        assert_eq!(
            traffic.exchanges[1].answer,
            Err(json!({"code": -1, "message": "no @@ws@@/a.txt"}))
        );
        assert_eq!(traffic.dropped, 1, "the line that is no message is counted");
        let back = from_json(Some(&to_json(&[("s".to_owned(), traffic.clone())].into()))).unwrap();
        assert_eq!(back["s"], traffic);
    }

    #[test]
    fn a_recorded_exchange_without_an_answer_is_an_error_naming_it() {
        let bad = json!({"s": {"exchanges": [{"method": "tools/list", "params": null}]}});
        let err = from_json(Some(&bad)).unwrap_err().to_string();
        assert!(err.contains("MCP server `s`, exchange 1"), "{err}");
        assert!(from_json(None).unwrap().is_empty());
    }
}
