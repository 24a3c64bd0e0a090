//! The model wire protocols the gateway meters, told apart by the request's path, and the
//! error replies it makes in each protocol's own shape.
//!
//! | protocol | request | reply | clients (pinned versions, `docs/agents.md`) |
//! |---|---|---|---|
//! | Anthropic Messages | `POST …/v1/messages` | SSE `message_start` … `message_stop`, or one JSON message | Claude Code 2.1.328; opencode and pi with an Anthropic provider |
//! | OpenAI Responses | `POST …/v1/responses` | SSE `response.*`, or one JSON response | Codex CLI 0.169.0 |
//! | OpenAI Chat Completions | `POST …/v1/chat/completions` | SSE `chat.completion.chunk` + a usage chunk + `[DONE]`, or one JSON completion | Qwen Code 0.24.4, Copilot CLI 1.0.102, opencode 1.18.33, pi 0.73.1, Aider 0.86.2 |
//! | Gemini | `POST …/models/<model>:streamGenerateContent?alt=sse` or `:generateContent` | SSE `data:` chunks, or one JSON response | Gemini CLI 0.61.0 |
//!
//! Every other path (`/v1/messages/count_tokens`, model lists) is passed through unmetered.

use serde_json::Value;

/// A model protocol the gateway meters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    /// Anthropic Messages API.
    Anthropic,
    /// OpenAI Responses API.
    Responses,
    /// OpenAI Chat Completions API.
    Chat,
    /// Gemini `generateContent` / `streamGenerateContent`.
    Gemini,
}

impl Protocol {
    /// `Anthropic Messages`, `OpenAI Responses`, `OpenAI Chat Completions`, `Gemini`.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Anthropic => "Anthropic Messages",
            Protocol::Responses => "OpenAI Responses",
            Protocol::Chat => "OpenAI Chat Completions",
            Protocol::Gemini => "Gemini",
        }
    }

    /// The protocol of a model request at `path` (without the query), or `None` for a path
    /// that is no model call (token counts, model lists): those are passed through.
    pub fn of_path(path: &str) -> Option<Protocol> {
        let path = path.trim_end_matches('/');
        if path.ends_with("/messages") {
            Some(Protocol::Anthropic)
        } else if path.ends_with("/responses") {
            Some(Protocol::Responses)
        } else if path.ends_with("/chat/completions") {
            Some(Protocol::Chat)
        } else if path.ends_with(":streamGenerateContent") || path.ends_with(":generateContent") {
            Some(Protocol::Gemini)
        } else {
            None
        }
    }

    /// The model a request asks for: the JSON body's `model`, or for Gemini the path's
    /// `models/<model>:<method>`. Only `model` is kept: the rest of a long conversation
    /// is skipped, not built.
    pub fn model_of(self, path: &str, body: &[u8]) -> Option<String> {
        #[derive(serde::Deserialize)]
        struct Model {
            model: Option<String>,
        }
        match self {
            Protocol::Gemini => {
                let last = path.rsplit('/').next()?;
                let (model, _) = last.split_once(':')?;
                Some(model.to_owned())
            }
            _ => serde_json::from_slice::<Model>(body).ok()?.model,
        }
    }

    /// A reply in this protocol's error shape with HTTP `status`: what the provider would
    /// send, so that the agent reports it as an API error in its own words. A 400 is not
    /// retried by any of the pinned agents' SDKs (they retry 408, 409, 429 and 5xx).
    pub fn error_body(self, status: u16, kind: &str, message: &str) -> String {
        // JSON strings, quoted and escaped.
        let quote = |s: &str| Value::String(s.to_owned()).to_string();
        let (kind, message) = (quote(kind), quote(message));
        match self {
            Protocol::Anthropic => {
                format!(r#"{{"type":"error","error":{{"type":{kind},"message":{message}}}}}"#)
            }
            Protocol::Responses | Protocol::Chat => format!(
                r#"{{"error":{{"message":{message},"type":{kind},"param":null,"code":{kind}}}}}"#
            ),
            Protocol::Gemini => {
                let state = if status == 400 {
                    "INVALID_ARGUMENT"
                } else {
                    "UNAVAILABLE"
                };
                format!(r#"{{"error":{{"code":{status},"message":{message},"status":"{state}"}}}}"#)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_calls_are_told_apart_by_their_path() {
        for (path, want) in [
            ("/v1/messages", Some(Protocol::Anthropic)),
            ("/v1/messages/count_tokens", None),
            ("/v1/responses", Some(Protocol::Responses)),
            ("/api/v1/chat/completions", Some(Protocol::Chat)),
            (
                "/v1beta/models/gemini-2.5-pro:streamGenerateContent",
                Some(Protocol::Gemini),
            ),
            (
                "/v1beta/models/gemini-2.5-pro:generateContent",
                Some(Protocol::Gemini),
            ),
            ("/v1beta/models/gemini-2.5-pro:countTokens", None),
            ("/v1/models", None),
        ] {
            assert_eq!(Protocol::of_path(path), want, "{path}");
        }
        assert_eq!(
            Protocol::Gemini.model_of("/v1beta/models/gemini-2.5-pro:generateContent", b"{}"),
            Some("gemini-2.5-pro".into())
        );
        assert_eq!(
            Protocol::Chat.model_of(
                "/v1/chat/completions",
                br#"{"messages":[{"role":"user","content":"x"}],"model":"m","stream":true}"#
            ),
            Some("m".into())
        );
        assert_eq!(
            Protocol::Chat.model_of("/v1/chat/completions", b"not json"),
            None
        );
    }
}
