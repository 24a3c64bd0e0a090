//! Metering one model reply as it streams through: its tokens, whether it completed, and
//! whether it was an error, read from the protocol's own usage fields.
//!
//! Tokens mean the same for every protocol, as in [`crate::transcript::Usage`]: `input`
//! excludes cache reads and writes. Where a provider counts cached tokens inside its input
//! figure (OpenAI's `input_tokens_details.cached_tokens`, `prompt_tokens_details.cached_tokens`;
//! Gemini's `cachedContentTokenCount`) they are moved to `cache_read`. Reasoning tokens
//! are output (every provider bills them so).
//!
//! | protocol | usage read from | complete when |
//! |---|---|---|
//! | Anthropic | `message_start.message.usage`, then `message_delta.usage` (later figures win) | `message_stop` |
//! | Responses | `response.completed` / `.incomplete` / `.failed` `.response.usage` | `response.completed` or `.incomplete` |
//! | Chat | the last chunk with a `usage` object (needs `stream_options.include_usage`) | `[DONE]` or a `finish_reason` |
//! | Gemini | the last chunk's `usageMetadata` | a candidate's `finishReason` |
//!
//! A whole (non-streamed) JSON reply is read the same way, once.
//!
//! **Steps.** One Anthropic reply can hold several billed inferences, each listed in
//! `usage.iterations` with its own tokens: the sampling steps of a server-side tool loop
//! (`message`), a context compaction (`compaction`, whose tokens the top-level figures leave
//! out), the advisor tool's inference on its own model (`advisor_message`), and a fallback
//! model that served the reply (`fallback_message`). Each is kept as a [`Step`] with its
//! model, so that each is priced at its own model's rates and long-context tier; the reply's
//! tokens are their sum. A step of a type not known here is counted the same way; a
//! top-level figure larger than its steps' sum is kept as one more step of the reply's model
//! — never an under-count.
//!
//! **Reasoning tokens outside the output.** OpenAI counts reasoning inside
//! `completion_tokens` / `output_tokens`; xAI, through the same OpenAI-compatible shapes,
//! reports them beside it (`completion_tokens_details.reasoning_tokens`, in `total_tokens`
//! but not in `completion_tokens`). The output is therefore the larger of the output figure
//! and `total_tokens` less the prompt.
//!
//! Besides tokens: Anthropic's 1-hour cache writes (`usage.cache_creation.
//! ephemeral_1h_input_tokens`, a part of `cache_creation_input_tokens` billed at twice the
//! input rate); server-side tools (Anthropic `usage.server_tool_use`: web searches, billed per
//! search, web fetches and code executions, counted; OpenAI Responses `web_search_call`
//! output items, billed per call; Gemini's grounding `webSearchQueries`); and whether the model stopped at its output-token limit, which every protocol reports
//! as a complete reply (Anthropic `stop_reason: "max_tokens"`, Responses
//! `response.incomplete` with `incomplete_details.reason: "max_output_tokens"`, Chat
//! `finish_reason: "length"`, Gemini `finishReason: "MAX_TOKENS"`).

use serde_json::Value;

use super::protocol::Protocol;
use super::sse::SseReader;

/// The largest non-streamed reply body read for its usage, in bytes; a larger one is
/// forwarded but not metered.
pub const MAX_JSON_BYTES: usize = 32 * 1024 * 1024;

/// Tokens of one or more model requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Tokens {
    /// Input tokens, not counting cache reads and writes.
    pub input: u64,
    /// Output tokens (reasoning included).
    pub output: u64,
    /// Input tokens read from the prompt cache.
    pub cache_read: u64,
    /// Input tokens written to the prompt cache.
    pub cache_creation: u64,
    /// Of `cache_creation`, the tokens written to Anthropic's 1-hour cache
    /// (`usage.cache_creation.ephemeral_1h_input_tokens`), billed at a higher rate than the
    /// 5-minute cache ([`super::price`]).
    #[serde(default)]
    pub cache_creation_1h: u64,
}

impl Tokens {
    /// Every token: input, output and cache.
    pub fn total(&self) -> u64 {
        self.input
            .saturating_add(self.output)
            .saturating_add(self.cache_read)
            .saturating_add(self.cache_creation)
    }

    /// The prompt's tokens: input and cache.
    pub fn prompt(&self) -> u64 {
        self.input
            .saturating_add(self.cache_read)
            .saturating_add(self.cache_creation)
    }

    /// Adds `other` (saturating).
    pub fn add(&mut self, other: &Tokens) {
        self.input = self.input.saturating_add(other.input);
        self.output = self.output.saturating_add(other.output);
        self.cache_read = self.cache_read.saturating_add(other.cache_read);
        self.cache_creation = self.cache_creation.saturating_add(other.cache_creation);
        self.cache_creation_1h = self
            .cache_creation_1h
            .saturating_add(other.cache_creation_1h);
    }
}

/// What a finished (or cut) reply showed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Metered {
    /// Its tokens, when the reply reported any.
    pub tokens: Option<Tokens>,
    /// The model the reply names, when it does.
    pub model: Option<String>,
    /// Whether the reply reached its protocol's end (see the module table).
    pub completed: bool,
    /// Whether the reply was an error (an error event or error body).
    pub error: bool,
    /// Server-side web searches the reply reports (Anthropic's
    /// `usage.server_tool_use.web_search_requests`, OpenAI's `web_search_call` items,
    /// Gemini's grounding queries), billed per search.
    pub web_searches: u64,
    /// Server-side web fetches (Anthropic `server_tool_use.web_fetch_requests`): billed
    /// as their tokens only, counted.
    pub web_fetches: u64,
    /// Server-side code executions (Anthropic `server_tool_use.code_execution_requests`):
    /// billed by container time, which no usage field reports; counted.
    pub code_executions: u64,
    /// The billed inferences of an Anthropic reply with `usage.iterations` (see the module
    /// docs); empty when the reply is one inference of the model asked for.
    pub steps: Vec<Step>,
    /// Whether the model stopped because it reached its output-token limit: Anthropic's
    /// `stop_reason: "max_tokens"`, a Responses API `response.incomplete` for
    /// `max_output_tokens`, a Chat Completions `finish_reason: "length"`, Gemini's
    /// `finishReason: "MAX_TOKENS"`. Such a reply is complete: the model answered, and
    /// stopped where the request told it to.
    pub output_limit: bool,
}

/// One billed inference inside a reply (Anthropic `usage.iterations[]`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Step {
    /// Its `type`: `message`, `compaction`, `advisor_message`, `fallback_message`, ….
    pub kind: String,
    /// The model that ran it, when the step names one (a compaction runs on the reply's).
    pub model: Option<String>,
    /// Its tokens.
    pub tokens: Tokens,
}

/// Meters one reply fed in pieces.
#[derive(Debug)]
pub struct ReplyMeter {
    protocol: Protocol,
    sse: Option<SseReader>,
    json: Vec<u8>,
    json_too_big: bool,
    metered: Metered,
}

fn u64_at(v: &Value, path: &[&str]) -> Option<u64> {
    let mut v = v;
    for key in path {
        v = v.get(key)?;
    }
    v.as_u64()
}

/// Overwrites `slot` with `value` when the reply gave one.
fn set(slot: &mut u64, value: Option<u64>) {
    if let Some(v) = value {
        *slot = v;
    }
}

impl ReplyMeter {
    /// A meter for a reply in `protocol`, streamed as server-sent events when `sse`.
    pub fn new(protocol: Protocol, sse: bool) -> Self {
        ReplyMeter {
            protocol,
            sse: sse.then(SseReader::default),
            json: Vec::new(),
            json_too_big: false,
            metered: Metered::default(),
        }
    }

    /// Feeds the next piece of the reply body.
    pub fn push(&mut self, bytes: &[u8]) {
        match self.sse.as_mut() {
            Some(reader) => {
                let protocol = self.protocol;
                let metered = &mut self.metered;
                reader.push(bytes, |event| read_event(protocol, &event, metered));
            }
            None if self.json_too_big => {}
            None if self.json.len() + bytes.len() > MAX_JSON_BYTES => {
                self.json_too_big = true;
                self.json = Vec::new();
            }
            None => self.json.extend_from_slice(bytes),
        }
    }

    /// The reply's figures, after its last piece (or where it was cut).
    pub fn finish(mut self) -> Metered {
        match self.sse.as_mut() {
            Some(reader) => {
                let protocol = self.protocol;
                let metered = &mut self.metered;
                reader.finish(|event| read_event(protocol, &event, metered));
            }
            None => {
                if let Ok(body) = serde_json::from_slice::<Value>(&self.json) {
                    let items: Vec<&Value> = match &body {
                        // Gemini's `streamGenerateContent` without `alt=sse`: a JSON array
                        // of the chunks.
                        Value::Array(items) => items.iter().collect(),
                        one => vec![one],
                    };
                    for item in items {
                        read_whole(self.protocol, item, &mut self.metered);
                    }
                }
            }
        }
        settle_steps(&mut self.metered);
        self.metered
    }
}

/// Reads one streamed event.
fn read_event(protocol: Protocol, event: &super::sse::Event, m: &mut Metered) {
    let data = event.data.trim();
    if protocol == Protocol::Chat && data == "[DONE]" {
        m.completed = true;
        return;
    }
    // Most events carry text deltas: parse only those that can carry what is metered.
    let wanted = match protocol {
        Protocol::Anthropic => {
            matches!(
                event.name.as_str(),
                "message_start" | "message_delta" | "message_stop" | "error"
            ) || data.contains("\"message_")
                || data.contains("\"error\"")
        }
        Protocol::Responses => {
            event.name.starts_with("response.completed")
                || event.name.starts_with("response.failed")
                || event.name.starts_with("response.incomplete")
                || event.name == "error"
                || (event.name.is_empty() && data.contains("\"response."))
        }
        Protocol::Chat => {
            data.contains("\"usage\"")
                || data.contains("\"finish_reason\":\"")
                || data.contains("\"finish_reason\": \"")
                || data.contains("\"error\"")
        }
        Protocol::Gemini => {
            data.contains("usageMetadata")
                || data.contains("finishReason")
                || data.contains("webSearchQueries")
                || data.contains("\"error\"")
        }
    };
    if !wanted {
        return;
    }
    let Ok(v) = serde_json::from_str::<Value>(data) else {
        return;
    };
    match protocol {
        Protocol::Anthropic => anthropic_event(&event.name, &v, m),
        Protocol::Responses => responses_event(&event.name, &v, m),
        Protocol::Chat => chat_chunk(&v, m),
        Protocol::Gemini => gemini_chunk(&v, m),
    }
}

/// The tokens of an Anthropic `usage` object or `iterations[]` entry (absent fields 0).
fn anthropic_tokens(usage: &Value) -> Tokens {
    let n = |path: &[&str]| u64_at(usage, path).unwrap_or(0);
    Tokens {
        input: n(&["input_tokens"]),
        output: n(&["output_tokens"]),
        cache_read: n(&["cache_read_input_tokens"]),
        cache_creation: n(&["cache_creation_input_tokens"]),
        cache_creation_1h: n(&["cache_creation", "ephemeral_1h_input_tokens"]),
    }
}

/// The steps of a reply whose usage lists `iterations` (the latest list wins: `message_delta`
/// carries the cumulative usage).
fn anthropic_iterations(usage: &Value, m: &mut Metered) {
    let Some(items) = usage.get("iterations").and_then(Value::as_array) else {
        return;
    };
    m.steps = items
        .iter()
        .filter(|it| it.is_object())
        .map(|it| Step {
            kind: it
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("message")
                .to_owned(),
            model: it.get("model").and_then(Value::as_str).map(str::to_owned),
            tokens: anthropic_tokens(it),
        })
        .collect();
}

/// Once the reply ended: its tokens are its steps' sum, a top-level figure larger than its
/// executing steps' (`message`, `fallback_message`, unknown kinds) kept as one more step.
fn settle_steps(m: &mut Metered) {
    if m.steps.is_empty() {
        return;
    }
    let top = m.tokens.unwrap_or_default();
    let mut executing = Tokens::default();
    for step in m
        .steps
        .iter()
        .filter(|s| !matches!(s.kind.as_str(), "compaction" | "advisor_message"))
    {
        executing.add(&step.tokens);
    }
    let rest = Tokens {
        input: top.input.saturating_sub(executing.input),
        output: top.output.saturating_sub(executing.output),
        cache_read: top.cache_read.saturating_sub(executing.cache_read),
        cache_creation: top.cache_creation.saturating_sub(executing.cache_creation),
        cache_creation_1h: top
            .cache_creation_1h
            .saturating_sub(executing.cache_creation_1h),
    };
    if rest.total() > 0 {
        m.steps.push(Step {
            kind: "message".to_owned(),
            model: None,
            tokens: rest,
        });
    }
    let mut sum = Tokens::default();
    for step in &m.steps {
        sum.add(&step.tokens);
    }
    m.tokens = Some(sum);
}

fn anthropic_usage(usage: &Value, m: &mut Metered) {
    if !usage.is_object() {
        return;
    }
    anthropic_iterations(usage, m);
    set(
        &mut m.web_fetches,
        u64_at(usage, &["server_tool_use", "web_fetch_requests"]),
    );
    set(
        &mut m.code_executions,
        u64_at(usage, &["server_tool_use", "code_execution_requests"]),
    );
    let t = m.tokens.get_or_insert_with(Tokens::default);
    set(&mut t.input, u64_at(usage, &["input_tokens"]));
    set(&mut t.output, u64_at(usage, &["output_tokens"]));
    set(
        &mut t.cache_read,
        u64_at(usage, &["cache_read_input_tokens"]),
    );
    set(
        &mut t.cache_creation,
        u64_at(usage, &["cache_creation_input_tokens"]),
    );
    // Claude Code with a subscription login marks every `cache_control` `ttl: "1h"`.
    set(
        &mut t.cache_creation_1h,
        u64_at(usage, &["cache_creation", "ephemeral_1h_input_tokens"]),
    );
    set(
        &mut m.web_searches,
        u64_at(usage, &["server_tool_use", "web_search_requests"]),
    );
}

fn anthropic_event(name: &str, v: &Value, m: &mut Metered) {
    let kind = v.get("type").and_then(Value::as_str).unwrap_or(name);
    match kind {
        "message_start" => {
            let message = &v["message"];
            if let Some(model) = message.get("model").and_then(Value::as_str) {
                m.model = Some(model.to_owned());
            }
            anthropic_usage(&message["usage"], m);
        }
        "message_delta" => {
            anthropic_usage(&v["usage"], m);
            if v["delta"]["stop_reason"] == "max_tokens" {
                m.output_limit = true;
            }
        }
        "message_stop" => m.completed = true,
        "error" => m.error = true,
        _ => {}
    }
}

/// A Responses API or Chat Completions `usage` object: `input` counts the cached tokens;
/// reasoning tokens outside `output` (xAI) are found from `total_tokens`.
fn openai_usage(usage: &Value, m: &mut Metered, input: &str, output: &str, details: &str) {
    if !usage.is_object() {
        return;
    }
    let cached = u64_at(usage, &[details, "cached_tokens"]).unwrap_or(0);
    let prompt = u64_at(usage, &[input]).unwrap_or(0);
    let t = m.tokens.get_or_insert_with(Tokens::default);
    t.input = prompt.saturating_sub(cached);
    t.cache_read = cached;
    set(&mut t.output, u64_at(usage, &[output]));
    if let Some(total) = u64_at(usage, &["total_tokens"]) {
        t.output = t.output.max(total.saturating_sub(prompt));
    }
}

fn responses_event(name: &str, v: &Value, m: &mut Metered) {
    let kind = v.get("type").and_then(Value::as_str).unwrap_or(name);
    match kind {
        "response.completed" => response_object(&v["response"], true, m),
        // The model stopped before its answer's end (its output-token limit, a content
        // filter): a complete reply, as a `stop_reason: "max_tokens"` message is.
        "response.incomplete" => {
            response_object(&v["response"], true, m);
            if v["response"]["incomplete_details"]["reason"] == "max_output_tokens" {
                m.output_limit = true;
            }
        }
        "response.failed" | "error" => {
            response_object(&v["response"], false, m);
            m.error = true;
        }
        _ => {}
    }
}

/// A Responses API `response` object that ended: its model and usage.
fn response_object(response: &Value, completed: bool, m: &mut Metered) {
    if let Some(model) = response.get("model").and_then(Value::as_str) {
        m.model = Some(model.to_owned());
    }
    openai_usage(
        &response["usage"],
        m,
        "input_tokens",
        "output_tokens",
        "input_tokens_details",
    );
    // Each web search the model ran is billed per call.
    if let Some(output) = response.get("output").and_then(Value::as_array) {
        m.web_searches = output
            .iter()
            .filter(|item| item["type"] == "web_search_call")
            .count() as u64;
    }
    m.completed |= completed;
}

fn chat_chunk(v: &Value, m: &mut Metered) {
    if v.get("error").is_some_and(|e| !e.is_null()) {
        m.error = true;
    }
    if let Some(model) = v.get("model").and_then(Value::as_str) {
        m.model = Some(model.to_owned());
    }
    openai_usage(
        &v["usage"],
        m,
        "prompt_tokens",
        "completion_tokens",
        "prompt_tokens_details",
    );
    let finished = v["choices"].as_array().is_some_and(|choices| {
        choices
            .iter()
            .any(|c| c.get("finish_reason").is_some_and(|f| !f.is_null()))
    });
    m.completed |= finished;
    if v["choices"]
        .as_array()
        .is_some_and(|cs| cs.iter().any(|c| c["finish_reason"] == "length"))
    {
        m.output_limit = true;
    }
}

fn gemini_chunk(v: &Value, m: &mut Metered) {
    if v.get("error").is_some_and(|e| !e.is_null()) {
        m.error = true;
    }
    if let Some(model) = v.get("modelVersion").and_then(Value::as_str) {
        m.model = Some(model.to_owned());
    }
    let usage = &v["usageMetadata"];
    if usage.is_object() {
        let cached = u64_at(usage, &["cachedContentTokenCount"]).unwrap_or(0);
        let prompt = u64_at(usage, &["promptTokenCount"]).unwrap_or(0)
            + u64_at(usage, &["toolUsePromptTokenCount"]).unwrap_or(0);
        let t = m.tokens.get_or_insert_with(Tokens::default);
        t.input = prompt.saturating_sub(cached);
        t.cache_read = cached;
        t.output = u64_at(usage, &["candidatesTokenCount"]).unwrap_or(0)
            + u64_at(usage, &["thoughtsTokenCount"]).unwrap_or(0);
    }
    let finished = v["candidates"].as_array().is_some_and(|cs| {
        cs.iter()
            .any(|c| c.get("finishReason").is_some_and(|f| !f.is_null()))
    });
    m.completed |= finished;
    // Grounding with Google Search is billed per search query the model ran.
    let queries: usize = v["candidates"].as_array().map_or(0, |cs| {
        cs.iter()
            .filter_map(|c| c["groundingMetadata"]["webSearchQueries"].as_array())
            .map(Vec::len)
            .sum()
    });
    if queries > 0 {
        m.web_searches = queries as u64;
    }
    if v["candidates"]
        .as_array()
        .is_some_and(|cs| cs.iter().any(|c| c["finishReason"] == "MAX_TOKENS"))
    {
        m.output_limit = true;
    }
}

/// Reads a whole (non-streamed) reply body.
fn read_whole(protocol: Protocol, v: &Value, m: &mut Metered) {
    match protocol {
        Protocol::Anthropic => {
            if v.get("type").and_then(Value::as_str) == Some("error") {
                m.error = true;
                return;
            }
            if let Some(model) = v.get("model").and_then(Value::as_str) {
                m.model = Some(model.to_owned());
            }
            anthropic_usage(&v["usage"], m);
            m.completed |= v.get("type").and_then(Value::as_str) == Some("message");
            m.output_limit |= v["stop_reason"] == "max_tokens";
        }
        Protocol::Responses => {
            let failed = v["status"] == "failed" || v.get("error").is_some_and(|e| !e.is_null());
            let ended = v["status"] == "completed" || v["status"] == "incomplete";
            response_object(v, ended, m);
            m.error |= failed;
            m.output_limit |= v["incomplete_details"]["reason"] == "max_output_tokens";
        }
        Protocol::Chat => chat_chunk(v, m),
        Protocol::Gemini => gemini_chunk(v, m),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meter(protocol: Protocol, sse: bool, body: &str) -> Metered {
        let mut whole = ReplyMeter::new(protocol, sse);
        whole.push(body.as_bytes());
        let whole = whole.finish();
        // Fed one byte at a time, the figures are the same.
        let mut bytes = ReplyMeter::new(protocol, sse);
        for b in body.as_bytes() {
            bytes.push(std::slice::from_ref(b));
        }
        assert_eq!(bytes.finish(), whole);
        whole
    }

    /// Claude Code 2.1.328 against the Messages API: usage in `message_start` (output 1),
    /// the true output in `message_delta`.
    #[test]
    fn anthropic_messages_stream() {
        let body = concat!(
            "event: message_start\n",
            "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5-20250929\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":100,\"output_tokens\":1,\"cache_read_input_tokens\":20,\"cache_creation_input_tokens\":5}}}\n\n",
            "event: content_block_start\n",
            "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
            "event: ping\ndata: {\"type\": \"ping\"}\n\n",
            "event: content_block_delta\n",
            "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"the usage is in message_delta\"}}\n\n",
            "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
            "event: message_delta\n",
            "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":7}}\n\n",
            "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
        );
        let m = meter(Protocol::Anthropic, true, body);
        assert_eq!(
            m.tokens,
            Some(Tokens {
                input: 100,
                output: 7,
                cache_read: 20,
                cache_creation: 5,
                cache_creation_1h: 0,
            })
        );
        assert_eq!(m.model.as_deref(), Some("claude-sonnet-4-5-20250929"));
        assert!(m.completed && !m.error);
        // Cut before `message_stop`: the input is known, the reply is not complete.
        let cut = meter(
            Protocol::Anthropic,
            true,
            &body[..body.find("event: content_block_delta").unwrap()],
        );
        assert_eq!(cut.tokens.map(|t| (t.input, t.output)), Some((100, 1)));
        assert!(!cut.completed);
        let error = meter(
            Protocol::Anthropic,
            true,
            "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
        );
        assert!(error.error && !error.completed);
        let whole = meter(
            Protocol::Anthropic,
            false,
            r#"{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"usage":{"input_tokens":10,"output_tokens":3,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}"#,
        );
        assert_eq!(whole.tokens.map(|t| t.total()), Some(13));
        assert!(whole.completed);
    }

    /// Codex 0.169.0 against the Responses API: usage only in `response.completed`, with
    /// the cached tokens inside `input_tokens`.
    #[test]
    fn openai_responses_stream() {
        let body = concat!(
            "event: response.created\n",
            "data: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_1\",\"status\":\"in_progress\",\"usage\":null}}\n\n",
            "event: response.output_item.added\n",
            "data: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"type\":\"function_call\",\"name\":\"exec_command\",\"arguments\":\"\"}}\n\n",
            "event: response.function_call_arguments.delta\n",
            "data: {\"type\":\"response.function_call_arguments.delta\",\"delta\":\"{\\\"cmd\\\":\\\"ls\\\"}\"}\n\n",
            "event: response.completed\n",
            "data: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_1\",\"model\":\"gpt-5-codex\",\"status\":\"completed\",\"usage\":{\"input_tokens\":120,\"input_tokens_details\":{\"cached_tokens\":20},\"output_tokens\":7,\"output_tokens_details\":{\"reasoning_tokens\":3},\"total_tokens\":127}}}\n\n",
        );
        let m = meter(Protocol::Responses, true, body);
        assert_eq!(
            m.tokens,
            Some(Tokens {
                input: 100,
                output: 7,
                cache_read: 20,
                cache_creation: 0,
                cache_creation_1h: 0,
            })
        );
        assert_eq!(m.model.as_deref(), Some("gpt-5-codex"));
        assert!(m.completed && !m.error);
        let failed = meter(
            Protocol::Responses,
            true,
            "event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"status\":\"failed\",\"error\":{\"code\":\"server_error\"},\"usage\":null}}\n\n",
        );
        assert!(failed.error && !failed.completed && failed.tokens.is_none());
    }

    /// Qwen Code 0.24.4 / Copilot CLI 1.0.102 against Chat Completions: deltas, a
    /// `finish_reason`, a usage chunk with no choices, then `[DONE]`.
    #[test]
    fn openai_chat_completions_stream() {
        let body = concat!(
            "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"qwen3-coder-plus\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"run_shell_command\",\"arguments\":\"{\\\"command\\\":\\\"ls\\\"}\"}}]},\"finish_reason\":null}],\"usage\":null}\n\n",
            "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"qwen3-coder-plus\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}],\"usage\":null}\n\n",
            "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"qwen3-coder-plus\",\"choices\":[],\"usage\":{\"prompt_tokens\":120,\"completion_tokens\":7,\"total_tokens\":127,\"prompt_tokens_details\":{\"cached_tokens\":20}}}\n\n",
            "data: [DONE]\n\n",
        );
        let m = meter(Protocol::Chat, true, body);
        assert_eq!(
            m.tokens,
            Some(Tokens {
                input: 100,
                output: 7,
                cache_read: 20,
                cache_creation: 0,
                cache_creation_1h: 0,
            })
        );
        assert!(m.completed);
        // No usage chunk (the client did not ask `include_usage`): unmetered, complete.
        let no_usage = meter(
            Protocol::Chat,
            true,
            &body.replace("\"usage\":{", "\"x\":{"),
        );
        assert_eq!(no_usage.tokens, None);
        assert!(no_usage.completed);
    }

    /// Gemini CLI 0.61.0 against `streamGenerateContent?alt=sse`: every chunk may carry
    /// `usageMetadata`; the last one counts.
    #[test]
    fn gemini_stream() {
        let body = concat!(
            "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"Hel\"}]},\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":120,\"totalTokenCount\":120},\"modelVersion\":\"gemini-2.5-pro\"}\r\n\r\n",
            "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"functionCall\":{\"name\":\"run_shell_command\",\"args\":{\"command\":\"ls\"}}}]},\"finishReason\":\"STOP\",\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":120,\"candidatesTokenCount\":5,\"thoughtsTokenCount\":2,\"cachedContentTokenCount\":20,\"totalTokenCount\":127},\"modelVersion\":\"gemini-2.5-pro\"}\r\n\r\n",
        );
        let m = meter(Protocol::Gemini, true, body);
        assert_eq!(
            m.tokens,
            Some(Tokens {
                input: 100,
                output: 7,
                cache_read: 20,
                cache_creation: 0,
                cache_creation_1h: 0,
            })
        );
        assert_eq!(m.model.as_deref(), Some("gemini-2.5-pro"));
        assert!(m.completed);
        let array = format!(
            "[{}]",
            body.split("data: ")
                .filter(|c| !c.trim().is_empty())
                .map(str::trim)
                .collect::<Vec<_>>()
                .join(",")
        );
        assert_eq!(meter(Protocol::Gemini, false, &array).tokens, m.tokens);
    }

    /// Claude Code 2.1.x with a subscription login marks every `cache_control` `ttl: "1h"`:
    /// the 1-hour part of the cache writes is read apart; so are WebSearch's server-side
    /// searches (`server_tool_use`, in `message_delta`'s cumulative usage).
    #[test]
    fn one_hour_cache_writes_and_web_searches_are_read() {
        let body = concat!(
            "event: message_start\n",
            "data: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-opus-4-6\",\"usage\":{\"input_tokens\":3,\"cache_creation_input_tokens\":5000,\"cache_read_input_tokens\":12000,\"cache_creation\":{\"ephemeral_5m_input_tokens\":1000,\"ephemeral_1h_input_tokens\":4000},\"output_tokens\":1}}}\n\n",
            "event: message_delta\n",
            "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"input_tokens\":3,\"cache_creation_input_tokens\":5000,\"cache_read_input_tokens\":12000,\"output_tokens\":90,\"server_tool_use\":{\"web_search_requests\":2,\"web_fetch_requests\":1}}}\n\n",
            "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
        );
        let m = meter(Protocol::Anthropic, true, body);
        assert_eq!(
            m.tokens,
            Some(Tokens {
                input: 3,
                output: 90,
                cache_read: 12000,
                cache_creation: 5000,
                cache_creation_1h: 4000,
            })
        );
        assert_eq!(m.web_searches, 2);
        assert!(m.completed && !m.output_limit);
    }

    /// A model that stopped at its output-token limit ended its reply on every protocol:
    /// complete, not an error, and marked as such — alike for Claude's `max_tokens` and
    /// Codex's `response.incomplete` (one was counted failed, the other completed).
    #[test]
    fn an_output_limit_stop_is_a_complete_reply_on_every_protocol() {
        let anthropic = concat!(
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m\",\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n",
            "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\"},\"usage\":{\"output_tokens\":32000}}\n\n",
            "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
        );
        let responses = concat!(
            "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"status\":\"in_progress\"}}\n\n",
            "event: response.incomplete\ndata: {\"type\":\"response.incomplete\",\"response\":{\"model\":\"gpt-5-codex\",\"status\":\"incomplete\",\"incomplete_details\":{\"reason\":\"max_output_tokens\"},\"usage\":{\"input_tokens\":10,\"output_tokens\":128000}}}\n\n",
        );
        let chat = concat!(
            "data: {\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\n\n",
            "data: {\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":4096}}\n\n",
            "data: [DONE]\n\n",
        );
        let gemini = "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"x\"}]},\"finishReason\":\"MAX_TOKENS\"}],\"usageMetadata\":{\"promptTokenCount\":10,\"candidatesTokenCount\":8192}}\r\n\r\n";
        for (protocol, body) in [
            (Protocol::Anthropic, anthropic),
            (Protocol::Responses, responses),
            (Protocol::Chat, chat),
            (Protocol::Gemini, gemini),
        ] {
            let m = meter(protocol, true, body);
            assert!(
                m.completed && !m.error && m.output_limit,
                "{protocol:?}: {m:?}"
            );
            assert_eq!(m.tokens.map(|t| t.input), Some(10), "{protocol:?}");
        }
        let whole = meter(
            Protocol::Responses,
            false,
            r#"{"model":"gpt-5","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":10,"output_tokens":5}}"#,
        );
        assert!(whole.completed && whole.output_limit && !whole.error);
        // A normal end is no output-limit stop.
        let done = meter(
            Protocol::Anthropic,
            true,
            &anthropic.replace("max_tokens", "end_turn"),
        );
        assert!(done.completed && !done.output_limit);
    }

    /// A reply with `usage.iterations` (compaction, two sampling steps, an advisor step on
    /// another model) is metered step by step: the compaction's tokens, which the top-level
    /// figures leave out, and the advisor's are counted; each step keeps its model.
    #[test]
    fn every_billed_step_of_a_reply_is_metered_with_its_model() {
        let usage = r#"{"input_tokens":12000,"output_tokens":2500,"cache_read_input_tokens":0,"cache_creation_input_tokens":0,"server_tool_use":{"web_search_requests":0,"web_fetch_requests":2,"code_execution_requests":1},"iterations":[{"type":"compaction","input_tokens":35000,"output_tokens":1000,"cache_read_input_tokens":0,"cache_creation_input_tokens":0},{"type":"message","model":"claude-sonnet-4-6","input_tokens":5000,"output_tokens":1000,"cache_read_input_tokens":0,"cache_creation_input_tokens":0},{"type":"advisor_message","model":"claude-opus-4-8","input_tokens":30000,"output_tokens":1800,"cache_read_input_tokens":0,"cache_creation_input_tokens":0},{"type":"message","model":"claude-sonnet-4-6","input_tokens":7000,"output_tokens":1500,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}]}"#;
        let body = format!(
            "event: message_start\ndata: {{\"type\":\"message_start\",\"message\":{{\"model\":\"claude-sonnet-4-6\",\"usage\":{{\"input_tokens\":5000,\"output_tokens\":1}}}}}}\n\nevent: message_delta\ndata: {{\"type\":\"message_delta\",\"delta\":{{\"stop_reason\":\"end_turn\"}},\"usage\":{usage}}}\n\nevent: message_stop\ndata: {{\"type\":\"message_stop\"}}\n\n"
        );
        let m = meter(Protocol::Anthropic, true, &body);
        let kinds: Vec<(&str, Option<&str>, u64, u64)> = m
            .steps
            .iter()
            .map(|s| {
                (
                    s.kind.as_str(),
                    s.model.as_deref(),
                    s.tokens.input,
                    s.tokens.output,
                )
            })
            .collect();
        assert_eq!(
            kinds,
            [
                ("compaction", None, 35000, 1000),
                ("message", Some("claude-sonnet-4-6"), 5000, 1000),
                ("advisor_message", Some("claude-opus-4-8"), 30000, 1800),
                ("message", Some("claude-sonnet-4-6"), 7000, 1500),
            ]
        );
        assert_eq!(
            m.tokens.map(|t| (t.input, t.output)),
            Some((35000 + 12000 + 30000, 1000 + 2500 + 1800))
        );
        assert_eq!((m.web_fetches, m.code_executions), (2, 1));
        // A whole reply is read alike.
        let whole = meter(
            Protocol::Anthropic,
            false,
            &format!(r#"{{"type":"message","model":"claude-sonnet-4-6","usage":{usage}}}"#),
        );
        assert_eq!(whole.steps, m.steps);
        assert_eq!(whole.tokens, m.tokens);
        // Top-level figures above the executing steps' sum are kept, never dropped.
        let short = usage.replace(
            r#"{"type":"message","model":"claude-sonnet-4-6","input_tokens":7000,"output_tokens":1500,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}"#,
            r#"{"type":"fallback_message","model":"claude-haiku-4-5","input_tokens":7000,"output_tokens":500}"#,
        );
        let fallback = meter(
            Protocol::Anthropic,
            false,
            &format!(r#"{{"type":"message","model":"claude-sonnet-4-6","usage":{short}}}"#),
        );
        let last = fallback.steps.last().unwrap();
        assert_eq!(
            (
                last.kind.as_str(),
                last.model.as_deref(),
                last.tokens.output
            ),
            ("message", None, 1000)
        );
        assert_eq!(
            fallback.tokens.map(|t| t.output),
            Some(1000 + 1000 + 1800 + 500 + 1000)
        );
    }

    /// xAI through an OpenAI-compatible endpoint reports reasoning tokens beside
    /// `completion_tokens`, inside `total_tokens`: 27 completion + 486 reasoning = 513
    /// billed output tokens. OpenAI counts them inside: no double count.
    #[test]
    fn reasoning_tokens_outside_the_output_are_metered() {
        let xai = concat!(
            "data: {\"model\":\"grok-4\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"4\"},\"finish_reason\":\"stop\"}]}\n\n",
            "data: {\"model\":\"grok-4\",\"choices\":[],\"usage\":{\"prompt_tokens\":700,\"completion_tokens\":27,\"total_tokens\":1213,\"prompt_tokens_details\":{\"cached_tokens\":640},\"completion_tokens_details\":{\"reasoning_tokens\":486}}}\n\n",
            "data: [DONE]\n\n",
        );
        let m = meter(Protocol::Chat, true, xai);
        assert_eq!(
            m.tokens.map(|t| (t.input, t.cache_read, t.output)),
            Some((60, 640, 513))
        );
        let openai = xai
            .replace("\"completion_tokens\":27", "\"completion_tokens\":513")
            .replace("grok-4", "gpt-5.5");
        assert_eq!(
            meter(Protocol::Chat, true, &openai)
                .tokens
                .map(|t| t.output),
            Some(513)
        );
        let responses = r#"{"model":"grok-4","status":"completed","usage":{"input_tokens":700,"output_tokens":27,"total_tokens":1213,"output_tokens_details":{"reasoning_tokens":486}}}"#;
        assert_eq!(
            meter(Protocol::Responses, false, responses)
                .tokens
                .map(|t| t.output),
            Some(513)
        );
    }

    /// OpenAI bills each `web_search_call` a Responses reply ran; Gemini each grounding
    /// search query.
    #[test]
    fn server_side_web_searches_are_counted_on_every_protocol() {
        let responses = concat!(
            "event: response.completed\n",
            "data: {\"type\":\"response.completed\",\"response\":{\"model\":\"gpt-5.5\",\"status\":\"completed\",\"output\":[{\"type\":\"web_search_call\",\"id\":\"ws_1\",\"status\":\"completed\",\"action\":{\"type\":\"search\",\"query\":\"rust\"}},{\"type\":\"web_search_call\",\"id\":\"ws_2\",\"status\":\"completed\"},{\"type\":\"message\",\"content\":[]}],\"usage\":{\"input_tokens\":10,\"output_tokens\":5,\"total_tokens\":15}}}\n\n",
        );
        assert_eq!(meter(Protocol::Responses, true, responses).web_searches, 2);
        let gemini = "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"x\"}]},\"finishReason\":\"STOP\",\"groundingMetadata\":{\"webSearchQueries\":[\"a\",\"b\",\"c\"]}}],\"usageMetadata\":{\"promptTokenCount\":10,\"candidatesTokenCount\":5}}\r\n\r\n";
        assert_eq!(meter(Protocol::Gemini, true, gemini).web_searches, 3);
    }
}
