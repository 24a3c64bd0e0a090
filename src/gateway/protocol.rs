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

    /// The most output tokens a request lets the model write, when it sets a cap: Anthropic
    /// `max_tokens`, Responses `max_output_tokens`, Chat `max_completion_tokens` or
    /// `max_tokens`, Gemini `generationConfig.maxOutputTokens`. Only those fields are kept.
    pub fn output_cap(self, body: &[u8]) -> Option<u64> {
        #[derive(serde::Deserialize)]
        struct Caps {
            max_tokens: Option<u64>,
            max_output_tokens: Option<u64>,
            max_completion_tokens: Option<u64>,
            #[serde(rename = "generationConfig")]
            generation_config: Option<GenerationConfig>,
        }
        #[derive(serde::Deserialize)]
        struct GenerationConfig {
            #[serde(rename = "maxOutputTokens")]
            max_output_tokens: Option<u64>,
        }
        let caps: Caps = serde_json::from_slice(body).ok()?;
        match self {
            Protocol::Anthropic => caps.max_tokens,
            Protocol::Responses => caps.max_output_tokens,
            Protocol::Chat => caps.max_completion_tokens.or(caps.max_tokens),
            Protocol::Gemini => caps.generation_config?.max_output_tokens,
        }
    }

    /// The body to send upstream so that the reply reports its usage, when the request's
    /// would not: a streamed Chat Completions request without
    /// `stream_options.include_usage: true` gets it (its reply then ends with one usage
    /// chunk with no choices, which the OpenAI SDKs read as any chunk). `None`: the body
    /// goes as it is (every other protocol always reports usage).
    pub fn meterable(self, body: &[u8]) -> Option<Vec<u8>> {
        if self != Protocol::Chat {
            return None;
        }
        let mut doc: serde_json::Map<String, Value> = serde_json::from_slice(body).ok()?;
        if doc.get("stream") != Some(&Value::Bool(true))
            || doc
                .get("stream_options")
                .and_then(|o| o.get("include_usage"))
                == Some(&Value::Bool(true))
        {
            return None;
        }
        let options = doc
            .entry("stream_options")
            .or_insert_with(|| Value::Object(serde_json::Map::new()));
        if !options.is_object() {
            *options = Value::Object(serde_json::Map::new());
        }
        if let Some(o) = options.as_object_mut() {
            o.insert("include_usage".to_owned(), Value::Bool(true));
        }
        serde_json::to_vec(&doc).ok()
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

    /// A request's output cap is read where each protocol puts it.
    #[test]
    fn each_protocol_s_output_cap_is_read() {
        for (protocol, body, want) in [
            (
                Protocol::Anthropic,
                r#"{"model":"m","max_tokens":32000}"#,
                Some(32000),
            ),
            (
                Protocol::Responses,
                r#"{"max_output_tokens":600}"#,
                Some(600),
            ),
            (Protocol::Responses, r#"{"model":"gpt-5.5"}"#, None),
            (Protocol::Chat, r#"{"max_tokens":100}"#, Some(100)),
            (
                Protocol::Chat,
                r#"{"max_tokens":100,"max_completion_tokens":50}"#,
                Some(50),
            ),
            (
                Protocol::Gemini,
                r#"{"generationConfig":{"maxOutputTokens":8192}}"#,
                Some(8192),
            ),
        ] {
            assert_eq!(protocol.output_cap(body.as_bytes()), want, "{body}");
        }
    }

    /// A streamed Chat Completions request is made to report its usage; one that asks
    /// already, a whole reply and other protocols go as they are.
    #[test]
    fn a_streamed_chat_request_is_made_meterable() {
        let made = Protocol::Chat
            .meterable(br#"{"model":"m","stream":true,"messages":[]}"#)
            .unwrap();
        let made: Value = serde_json::from_slice(&made).unwrap();
        assert_eq!(made["stream_options"]["include_usage"], true);
        assert_eq!(made["messages"], serde_json::json!([]));
        let odd = Protocol::Chat
            .meterable(br#"{"stream":true,"stream_options":{"include_usage":false,"x":1}}"#)
            .unwrap();
        let odd: Value = serde_json::from_slice(&odd).unwrap();
        assert_eq!(
            odd["stream_options"],
            serde_json::json!({"include_usage": true, "x": 1})
        );
        for (protocol, body) in [
            (
                Protocol::Chat,
                r#"{"stream":true,"stream_options":{"include_usage":true}}"#,
            ),
            (Protocol::Chat, r#"{"stream":false}"#),
            (Protocol::Anthropic, r#"{"stream":true}"#),
        ] {
            assert_eq!(protocol.meterable(body.as_bytes()), None, "{body}");
        }
    }
}
