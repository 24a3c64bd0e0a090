//! Codex CLI's `codex app-server` messages, read as the `codex exec --json` events they
//! stand for, so that a run driven through the app server (a test with a `user:`,
//! docs/conversations.md) has the same tool calls, names and usage as one run with
//! `codex exec`.
//!
//! Source: Codex 0.169.0, `codex app-server generate-ts` (protocol v2) and captures of its
//! stdout. The app server writes JSON-RPC 2.0 messages without the `jsonrpc` member, one
//! per line:
//! - notifications `{method, params}`: `thread/started` {thread: {id}}, `turn/started`,
//!   `item/started` / `item/completed` {item} with camelCase items (`commandExecution`
//!   {command, aggregatedOutput, exitCode, status}, `fileChange` {changes: [{path, kind:
//!   {type}, diff}]}, `mcpToolCall` {server, tool, arguments, result, error},
//!   `webSearch` {query}, `agentMessage` {text}, …), `thread/tokenUsage/updated`
//!   {tokenUsage: {total, last}} (cumulative over the thread), `turn/completed` {turn:
//!   {status: completed | failed | interrupted, error}}, `error` {error: {message}};
//! - requests to the client `{id, method, params}`: `item/tool/requestUserInput` {itemId
//!   (the model's call id), questions: [{id, header, question, options}]} is the model's
//!   `request_user_input` call, recorded as a tool call; `serverRequest/resolved`
//!   {requestId} says it was answered;
//! - responses to the client's own requests `{id, result | error}`, which carry no event.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::json::{str_of, u64_of};

/// The tool-call id of an app-server message that announces a tool call: a started or
/// completed item of a call type, or a `request_user_input` request. Both the transcript
/// and Codex's conversation channel count calls with it, so that a question's place among
/// the calls is the same in both.
pub fn call_id(message: &Value) -> Option<&str> {
    match str_of(message, "method")? {
        "item/started" | "item/completed" => {
            let item = message.pointer("/params/item")?;
            let exec = exec_item_type(str_of(item, "type")?)?;
            (!matches!(exec, "agent_message" | "reasoning")).then(|| str_of(item, "id"))?
        }
        "item/tool/requestUserInput" => message.pointer("/params/itemId")?.as_str(),
        _ => None,
    }
}

/// The `codex exec --json` item type of an app-server item type, for the types the exec
/// events have.
fn exec_item_type(app: &str) -> Option<&'static str> {
    Some(match app {
        "commandExecution" => "command_execution",
        "fileChange" => "file_change",
        "mcpToolCall" => "mcp_tool_call",
        "webSearch" => "web_search",
        "agentMessage" => "agent_message",
        "reasoning" => "reasoning",
        _ => return None,
    })
}

/// A camelCase status (`inProgress`) in the exec events' snake_case (`in_progress`).
fn snake(status: &str) -> String {
    let mut out = String::with_capacity(status.len() + 2);
    for c in status.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Reads one app server's messages in order, turning each into the exec event it stands
/// for.
#[derive(Debug, Default)]
pub(crate) struct AppServer {
    /// The thread's cumulative usage at its latest `thread/tokenUsage/updated`.
    total: Option<Value>,
    /// The cumulative usage already given to a `turn.completed`.
    given: [u64; 4],
    /// The open `request_user_input` requests: the request's id, its call's id.
    asking: HashMap<String, String>,
}

/// The usage fields, in the order of [`AppServer::given`].
const USAGE: [(&str, &str); 4] = [
    ("inputTokens", "input_tokens"),
    ("cachedInputTokens", "cached_input_tokens"),
    ("cacheWriteInputTokens", "cache_write_input_tokens"),
    ("outputTokens", "output_tokens"),
];

impl AppServer {
    /// Whether `message` is an app-server message rather than an exec event.
    pub(crate) fn is_message(message: &Value) -> bool {
        message.get("type").is_none()
            && (message.get("method").is_some() || message.get("id").is_some())
    }

    /// The exec event `message` stands for, if any.
    pub(crate) fn event(&mut self, message: &Value) -> Option<Value> {
        let params = message.get("params").unwrap_or(&Value::Null);
        Some(match str_of(message, "method")? {
            "thread/started" => json!({
                "type": "thread.started",
                "thread_id": params.pointer("/thread/id").cloned().unwrap_or(Value::Null),
            }),
            "turn/started" => json!({"type": "turn.started"}),
            "thread/tokenUsage/updated" => {
                self.total = params.pointer("/tokenUsage/total").cloned();
                return None;
            }
            "turn/completed" => self.turn_completed(params),
            "error" => json!({
                "type": "error",
                "message": params.pointer("/error/message").cloned().unwrap_or(Value::Null),
            }),
            method @ ("item/started" | "item/completed") => {
                let item = exec_item(params.get("item")?)?;
                let kind = if method == "item/started" {
                    "item.started"
                } else {
                    "item.completed"
                };
                json!({"type": kind, "item": item})
            }
            "item/tool/requestUserInput" => {
                let id = str_of(params, "itemId")?;
                if let Some(request) = message.get("id") {
                    self.asking.insert(request.to_string(), id.to_owned());
                }
                json!({"type": "item.started", "item": {
                    "id": id,
                    "type": "request_user_input",
                    "questions": params.get("questions").cloned().unwrap_or(Value::Null),
                }})
            }
            "serverRequest/resolved" => {
                let request = params.get("requestId")?.to_string();
                let id = self.asking.remove(&request)?;
                json!({"type": "item.completed", "item": {
                    "id": id,
                    "type": "request_user_input",
                    "status": "completed",
                }})
            }
            _ => return None,
        })
    }

    /// `turn.completed` with the usage since the last one (the thread's totals grow over
    /// its turns), or `turn.failed` with the turn's error.
    fn turn_completed(&mut self, params: &Value) -> Value {
        let turn = params.get("turn").unwrap_or(&Value::Null);
        match str_of(turn, "status") {
            Some("completed") => {
                let mut usage = serde_json::Map::new();
                if let Some(total) = &self.total {
                    for (i, (app, exec)) in USAGE.iter().enumerate() {
                        let now = u64_of(total, app);
                        usage.insert((*exec).to_owned(), now.saturating_sub(self.given[i]).into());
                        self.given[i] = now;
                    }
                }
                json!({"type": "turn.completed", "usage": usage})
            }
            status => {
                let message = turn
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .unwrap_or_else(|| format!("turn {}", status.unwrap_or("failed")));
                json!({"type": "turn.failed", "error": {"message": message}})
            }
        }
    }
}

/// The exec item of an app-server item, for the item types the exec events have.
fn exec_item(item: &Value) -> Option<Value> {
    let kind = exec_item_type(str_of(item, "type")?)?;
    let field = |name: &str| item.get(name).cloned().unwrap_or(Value::Null);
    let mut out = json!({"id": field("id"), "type": kind});
    let o = out.as_object_mut()?;
    if let Some(status) = str_of(item, "status") {
        o.insert("status".into(), snake(status).into());
    }
    match kind {
        "command_execution" => {
            o.insert("command".into(), field("command"));
            o.insert("aggregated_output".into(), field("aggregatedOutput"));
            o.insert("exit_code".into(), field("exitCode"));
        }
        "file_change" => {
            let changes: Vec<Value> = item
                .get("changes")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|c| {
                    json!({
                        "path": c.get("path").cloned().unwrap_or(Value::Null),
                        "kind": c.pointer("/kind/type").cloned().unwrap_or(Value::Null),
                    })
                })
                .collect();
            o.insert("changes".into(), changes.into());
        }
        "mcp_tool_call" => {
            for name in ["server", "tool", "arguments", "result", "error"] {
                o.insert(name.into(), field(name));
            }
        }
        "web_search" => {
            o.insert("query".into(), field("query"));
        }
        "agent_message" => {
            o.insert("text".into(), field("text"));
        }
        _ => {}
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_read_as_the_exec_items_they_stand_for() {
        let mut app = AppServer::default();
        let done = app
            .event(&json!({"method": "item/completed", "params": {"item": {
                "type": "commandExecution", "id": "call_1", "command": "ls", "cwd": "/w",
                "status": "completed", "aggregatedOutput": "README\n", "exitCode": 0,
                "commandActions": [], "processId": null, "source": "agent"}}}))
            .unwrap();
        assert_eq!(
            done,
            json!({"type": "item.completed", "item": {"id": "call_1",
                "type": "command_execution", "status": "completed", "command": "ls",
                "aggregated_output": "README\n", "exit_code": 0}})
        );
        let change = app
            .event(&json!({"method": "item/started", "params": {"item": {
                "type": "fileChange", "id": "c2", "status": "inProgress",
                "changes": [{"path": "/w/a.txt", "kind": {"type": "add"}, "diff": "x"}]}}}))
            .unwrap();
        assert_eq!(change["item"]["status"], "in_progress");
        assert_eq!(
            change["item"]["changes"],
            json!([{"path": "/w/a.txt", "kind": "add"}])
        );
        assert!(
            app.event(&json!({"method": "item/completed", "params": {"item": {
                "type": "userMessage", "id": "u", "content": []}}}))
                .is_none()
        );
    }

    #[test]
    fn usage_per_turn_is_what_the_thread_total_grew_by() {
        let mut app = AppServer::default();
        let usage = |input: u64, output: u64| {
            json!({"method": "thread/tokenUsage/updated", "params": {"tokenUsage": {
                "total": {"inputTokens": input, "cachedInputTokens": 0,
                    "cacheWriteInputTokens": 0, "outputTokens": output},
                "last": {}}}})
        };
        let done = json!({"method": "turn/completed", "params": {"turn": {"status": "completed"}}});
        assert!(app.event(&usage(10, 3)).is_none());
        assert!(app.event(&usage(20, 6)).is_none());
        assert_eq!(app.event(&done).unwrap()["usage"]["input_tokens"], 20);
        app.event(&usage(45, 8));
        let second = app.event(&done).unwrap();
        assert_eq!(second["usage"]["input_tokens"], 25);
        assert_eq!(second["usage"]["output_tokens"], 2);
        let failed = app
            .event(&json!({"method": "turn/completed", "params": {"turn": {
                "status": "failed", "error": {"message": "stream disconnected"}}}}))
            .unwrap();
        assert_eq!(
            failed,
            json!({"type": "turn.failed", "error": {"message": "stream disconnected"}})
        );
    }

    #[test]
    fn a_request_user_input_request_is_a_call_until_it_is_resolved() {
        let mut app = AppServer::default();
        let ask = json!({"method": "item/tool/requestUserInput", "id": 0, "params": {
            "itemId": "call_1", "questions": [{"id": "name", "question": "Which name?"}]}});
        assert_eq!(call_id(&ask), Some("call_1"));
        let started = app.event(&ask).unwrap();
        assert_eq!(started["item"]["type"], "request_user_input");
        assert_eq!(started["item"]["questions"][0]["question"], "Which name?");
        let resolved = app
            .event(&json!({"method": "serverRequest/resolved", "params": {"requestId": 0}}))
            .unwrap();
        assert_eq!(resolved["type"], "item.completed");
        assert_eq!(resolved["item"]["id"], "call_1");
        assert!(AppServer::is_message(&ask));
        assert!(!AppServer::is_message(&json!({"type": "turn.started"})));
        let message = json!({"method": "item/completed", "params": {"item": {
            "type": "agentMessage", "id": "m", "text": "Hi"}}});
        assert_eq!(call_id(&message), None, "a message is no call");
    }
}
