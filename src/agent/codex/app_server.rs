//! Codex CLI's conversation channel: a run with a `user:` is driven through `codex
//! app-server` (JSON-RPC 2.0 over stdio, one message per line, without the `jsonrpc`
//! member; Codex 0.169.0, protocol v2 from `codex app-server generate-ts`), the one mode
//! of Codex that puts the model's `request_user_input` question to a client headless
//! (`codex exec` tells the model it is unavailable; docs/conversations.md).
//!
//! The client's side, as [`AppServerChannel`] writes it:
//! 1. `initialize` (`capabilities.experimentalApi`, which `request_user_input` needs),
//!    `initialized`, `thread/start` {approvalPolicy: never, sandbox: danger-full-access}
//!    (what `exec --dangerously-bypass-approvals-and-sandbox` sets), written at once;
//! 2. on `thread/start`'s result, `turn/start` {threadId, input: [{type: text, text:
//!    PROMPT}]};
//! 3. each `item/tool/requestUserInput` request {itemId, questions: [{id, question}]} is
//!    answered `{answers: {ID: {answers: [REPLY]}}}` (an unanswered question is left
//!    out), which reaches the model as the call's output;
//! 4. at `turn/completed`, a turn whose last message ends in a plain-text question gets
//!    the user's reply as the next `turn/start` in the same thread; otherwise stdin is
//!    closed, and the app server exits (measured: within a second).
//!
//! Any other request of the server (an approval, an MCP elicitation) gets a JSON-RPC
//! error at once, so that Codex never waits for a client that will not answer. A failed
//! `initialize`, `thread/start` or `turn/start` closes stdin: the run ends without a
//! completed turn, so it is an `error`.

use serde_json::{Value, json};

use crate::agent::conversation::{Ask, AskChannel, At, Feed};
use crate::transcript::dialog::Channel;

/// The JSON-RPC id of `thread/start` (after `initialize`'s 1); each `turn/start` takes the
/// next free id from 3.
const THREAD_START: u64 = 2;

/// The conversation channel of one `codex app-server` run.
#[derive(Debug, Default)]
pub struct AppServerChannel {
    prompt: String,
    thread: Option<String>,
    next_id: u64,
    /// The ids of the tool calls announced so far (as the transcript counts them), a set
    /// so that a stream of many calls costs one lookup each.
    calls: std::collections::HashSet<String>,
    /// The text of the current turn's last agent message.
    last_text: Option<String>,
}

impl AppServerChannel {
    /// A channel that has sent nothing yet.
    pub fn new() -> Self {
        AppServerChannel {
            next_id: THREAD_START + 1,
            ..Self::default()
        }
    }

    /// The next request id (never reused within the session).
    fn take_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// The server's request `id` `method` with `params`.
    fn request(&mut self, id: &Value, method: &str, params: &Value) -> Feed {
        if method != "item/tool/requestUserInput" {
            return Feed {
                write: Some(line(&json!({
                    "id": id,
                    "error": {
                        "code": -32601,
                        "message": format!("aptitude does not serve `{method}` requests"),
                    },
                }))),
                ..Feed::default()
            };
        }
        let calls_before = self.calls.len();
        if let Some(call) = params.get("itemId").and_then(Value::as_str)
            && !self.calls.contains(call)
        {
            self.calls.insert(call.to_owned());
        }
        let asked: Vec<(String, String)> = params
            .get("questions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|q| {
                let text = q.get("question")?.as_str()?;
                let key = q.get("id").and_then(Value::as_str).unwrap_or(text);
                Some((key.to_owned(), text.to_owned()))
            })
            .collect();
        let id = id.clone();
        let questions = asked.iter().map(|(_, q)| q.clone()).collect();
        let respond = move |replies: &[Option<String>]| {
            let answers: serde_json::Map<String, Value> = asked
                .into_iter()
                .zip(replies)
                .filter_map(|((key, _), reply)| Some((key, json!({"answers": [reply.clone()?]}))))
                .collect();
            Some(line(&json!({"id": id, "result": {"answers": answers}})))
        };
        Feed {
            ask: Some(Ask {
                questions,
                at: At::call(calls_before),
                respond: Box::new(respond),
            }),
            ..Feed::default()
        }
    }

    /// The end of a turn: the user is asked its plain-text question, if it ends in one;
    /// else the session is over.
    fn turn_completed(&mut self, params: &Value) -> Feed {
        let completed = params.pointer("/turn/status").and_then(Value::as_str) == Some("completed");
        let question = self
            .last_text
            .take()
            .filter(|_| completed)
            .and_then(|text| crate::agent::conversation::question_in(&text).map(str::to_owned));
        let (Some(question), Some(thread)) = (question, self.thread.clone()) else {
            return Feed {
                close: true,
                ..Feed::default()
            };
        };
        let id = self.take_id();
        let respond = move |replies: &[Option<String>]| {
            let reply = replies.first().cloned().flatten()?;
            Some(turn_start(id, &thread, &reply))
        };
        Feed {
            ask: Some(Ask {
                questions: vec![question],
                at: At::text(self.calls.len()),
                respond: Box::new(respond),
            }),
            ..Feed::default()
        }
    }
}

/// The `turn/start` request `id` of `text` in `thread`, as a line for stdin.
fn turn_start(id: u64, thread: &str, text: &str) -> Vec<u8> {
    line(&json!({
        "id": id,
        "method": "turn/start",
        "params": {"threadId": thread, "input": [{"type": "text", "text": text}]},
    }))
}

/// One message as a line for stdin.
fn line(message: &Value) -> Vec<u8> {
    format!("{message}\n").into_bytes()
}

impl AskChannel for AppServerChannel {
    fn opening(&mut self, prompt: &str) -> Vec<u8> {
        prompt.clone_into(&mut self.prompt);
        let mut out = line(&json!({
            "id": 1,
            "method": "initialize",
            "params": {
                "clientInfo": {"name": "aptitude", "version": env!("CARGO_PKG_VERSION")},
                "capabilities": {"experimentalApi": true},
            },
        }));
        out.extend(line(&json!({"method": "initialized"})));
        out.extend(line(&json!({
            "id": THREAD_START,
            "method": "thread/start",
            "params": {"approvalPolicy": "never", "sandbox": "danger-full-access"},
        })));
        out
    }

    fn line(&mut self, text: &str) -> Feed {
        let Ok(message) = serde_json::from_str::<Value>(text) else {
            return Feed::default();
        };
        if let Some(call) = crate::transcript::codex_app_server::call_id(&message)
            && message.get("id").is_none()
            && !self.calls.contains(call)
        {
            self.calls.insert(call.to_owned());
        }
        let params = message.get("params").unwrap_or(&Value::Null);
        match (
            message.get("id"),
            message.get("method").and_then(Value::as_str),
        ) {
            (Some(id), Some(method)) => self.request(id, method, params),
            // A response to one of the client's requests.
            (Some(id), None) => {
                if message.get("error").is_some() {
                    return Feed {
                        close: true,
                        ..Feed::default()
                    };
                }
                if id.as_u64() == Some(THREAD_START) {
                    self.thread = message
                        .pointer("/result/thread/id")
                        .and_then(Value::as_str)
                        .map(str::to_owned);
                    let prompt = std::mem::take(&mut self.prompt);
                    let write = self
                        .thread
                        .clone()
                        .map(|thread| turn_start(self.take_id(), &thread, &prompt));
                    return Feed {
                        close: write.is_none(),
                        write,
                        ..Feed::default()
                    };
                }
                Feed::default()
            }
            (None, Some("turn/started")) => {
                self.last_text = None;
                Feed::default()
            }
            (None, Some("item/completed")) => {
                let item = params.get("item").unwrap_or(&Value::Null);
                if item.get("type").and_then(Value::as_str) == Some("agentMessage") {
                    self.last_text = item.get("text").and_then(Value::as_str).map(str::to_owned);
                }
                Feed::default()
            }
            (None, Some("turn/completed")) => self.turn_completed(params),
            _ => Feed::default(),
        }
    }

    fn channel(&self) -> Channel {
        Channel::AskTool {
            tool: "request_user_input".to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(bytes: &[u8]) -> Vec<Value> {
        std::str::from_utf8(bytes)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// The session as Codex 0.169.0's app server holds it: initialize and thread/start at
    /// once, the prompt as the first turn once the thread exists.
    #[test]
    fn the_prompt_starts_a_turn_once_the_thread_exists() {
        let mut ch = AppServerChannel::new();
        let opening = parse(&ch.opening("add a dice command"));
        let methods: Vec<&str> = opening
            .iter()
            .filter_map(|m| m["method"].as_str())
            .collect();
        assert_eq!(methods, ["initialize", "initialized", "thread/start"]);
        assert_eq!(
            opening[0]["params"]["capabilities"]["experimentalApi"],
            true
        );
        assert_eq!(opening[2]["params"]["approvalPolicy"], "never");
        let feed = ch.line(r#"{"id":2,"result":{"thread":{"id":"t1"}}}"#);
        let turn = parse(&feed.write.unwrap());
        assert_eq!(turn[0]["method"], "turn/start");
        assert_eq!(turn[0]["params"]["threadId"], "t1");
        assert_eq!(turn[0]["params"]["input"][0]["text"], "add a dice command");
        assert!(!feed.close);
        let failed = AppServerChannel::new().line(r#"{"id":2,"error":{"message":"no"}}"#);
        assert!(failed.close, "a thread that did not start ends the session");
    }

    #[test]
    fn request_user_input_is_asked_after_the_calls_before_it_and_answered_by_question_id() {
        let mut ch = AppServerChannel::new();
        ch.opening("p");
        ch.line(r#"{"id":2,"result":{"thread":{"id":"t1"}}}"#);
        ch.line(r#"{"method":"item/started","params":{"item":{"type":"commandExecution","id":"call_0","command":"ls"}}}"#);
        let feed = ch.line(r#"{"method":"item/tool/requestUserInput","id":0,"params":{"itemId":"call_1","questions":[{"id":"sides","question":"How many sides?"},{"id":"name","question":"Which name?"}]}}"#);
        let ask = feed.ask.unwrap();
        assert_eq!(ask.questions, ["How many sides?", "Which name?"]);
        assert_eq!(ask.at, At::call(1));
        let answer = parse(&(ask.respond)(&[Some("Six.".into()), None]).unwrap());
        assert_eq!(
            answer[0],
            json!({"id": 0, "result": {"answers": {"sides": {"answers": ["Six."]}}}})
        );
        let other =
            ch.line(r#"{"method":"item/commandExecution/requestApproval","id":5,"params":{}}"#);
        let refused = parse(&other.write.unwrap());
        assert_eq!(refused[0]["id"], 5);
        assert!(
            refused[0]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("does not serve")
        );
    }

    #[test]
    fn a_turn_that_ends_in_a_question_gets_the_reply_as_the_next_turn() {
        let mut ch = AppServerChannel::new();
        ch.opening("p");
        ch.line(r#"{"id":2,"result":{"thread":{"id":"t1"}}}"#);
        ch.line(r#"{"method":"turn/started","params":{}}"#);
        ch.line(r#"{"method":"item/completed","params":{"item":{"type":"agentMessage","id":"m","text":"I can.\n\nHow many sides?"}}}"#);
        let feed =
            ch.line(r#"{"method":"turn/completed","params":{"turn":{"status":"completed"}}}"#);
        let ask = feed.ask.unwrap();
        assert_eq!(ask.questions, ["How many sides?"]);
        assert_eq!(ask.at, At::text(0));
        let next = parse(&(ask.respond)(&[Some("Six.".into())]).unwrap());
        assert_eq!(next[0]["method"], "turn/start");
        assert_eq!(next[0]["params"]["input"][0]["text"], "Six.");
        assert_eq!(next[0]["id"], 4, "ids are not reused");

        ch.line(r#"{"method":"turn/started","params":{}}"#);
        ch.line(r#"{"method":"item/completed","params":{"item":{"type":"agentMessage","id":"m2","text":"How about a name?"}}}"#);
        let feed =
            ch.line(r#"{"method":"turn/completed","params":{"turn":{"status":"completed"}}}"#);
        assert!(
            (feed.ask.unwrap().respond)(&[None]).is_none(),
            "no reply: stdin is closed"
        );
        ch.line(r#"{"method":"item/completed","params":{"item":{"type":"agentMessage","id":"m3","text":"Done."}}}"#);
        let end =
            ch.line(r#"{"method":"turn/completed","params":{"turn":{"status":"completed"}}}"#);
        assert!(end.close && end.ask.is_none());
    }
}
