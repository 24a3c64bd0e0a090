//! Real recorded API traffic, served through aptitude's gateway to the real agent CLIs.
//!
//! The replies are public VCR cassettes of the Anthropic, OpenAI and Gemini APIs
//! (`tests/data/recorded/`, provenance in its `SOURCES.tsv`), served byte for byte by the
//! scripted model (`support::recorded`) to the pinned Claude Code, Codex CLI, Qwen Code and
//! Gemini CLI, each in its own protocol: thinking and signature deltas, server tools (web
//! search, tool search, web fetch, code execution, the advisor and the MCP connector, whose results are
//! objects), `usage.iterations` (an advisor step on another model, a compaction step), cache
//! reads and 5-minute and 1-hour cache writes, a whole JSON reply asked for again without
//! streaming, tool calls the agent does not have,
//! a reply the upstream cut (and the agent's retry), a gzip reply, a 401 that says not to
//! retry. Each run is recorded
//! (`--record-model`) and then replayed (`--replay`) against a model that answers nothing.
//! For each recording the test checks what the issue measured:
//! - **bytes**: the cassette holds exactly the recorded bytes the agent got, up to a cut;
//! - **tokens**: `model_traffic` counts the recorded usage;
//! - **cost**: the metered cost equals the recorded usage at the model's list price
//!   (written out here by hand from the provider's page, each step of a reply at its own
//!   model's), ratio 1, with no model priced at the dearest;
//! - **retries**: the agent's retry of a cut reply is counted, recorded and replayed;
//! - **replays**: the same verdict on every case, and no request upstream;
//! - **the witness and the parsers**: no false `tampered` and no dropped (lost) line,
//!   recorded or replayed; server tools' calls are marked server-side.

use serde_json::Value;

use crate::agents::{AGENTS, Agent, run_on};
use crate::cassettes::comparable;
use crate::run::Suite;
use crate::support::model::{ScriptedModel, Turn};
use crate::support::recorded::{self, Recorded};

/// How a recording is served.
#[derive(Clone, Copy)]
enum Serve {
    /// As recorded.
    AsRecorded,
    /// Gzip-compressed, although the gateway asks for identity.
    Gzip,
    /// The first reply cut before this text, then (the agent's retry) whole.
    CutBeforeThenWhole(&'static str),
    /// As recorded, to each of the agent's requests: the agent refuses the reply and asks
    /// again, this many requests in all, each answered (and billed) whole.
    AskedAgain(u64),
    /// A streamed recording's events put together into the whole message the API returns
    /// without streaming (its blocks, each `input_json_delta` parsed into the block's
    /// input, the `message_delta`'s stop and usage over the `message_start`'s), served as
    /// [`Serve::NotStreamed`] serves a whole recording: after a 404 to the streaming request.
    Assembled,
    /// A 401 with `x-should-retry: false` (written from the API's documented shape: no
    /// public recording of one was found).
    Unauthorized,
    /// A whole (non-streamed) JSON recording, this interaction of it: the agent's
    /// streaming request is answered with a 404, as by an endpoint that does not stream,
    /// so that Claude Code asks again without streaming ("Streaming endpoint returned 404,
    /// falling back to non-streaming mode", 2.1.x) — the request the recording answered —
    /// and gets the recording, with each `(from, to)` of the list changed (each `from`
    /// must be in it).
    NotStreamed(usize, &'static [(&'static str, &'static str)]),
}

/// One recording served to one agent, and what it must meter.
struct Case {
    /// The test's name (and its marker, upper-cased). No name begins another: the scripted
    /// model finds a prompt's script by the marker it holds.
    name: &'static str,
    agent: &'static str,
    /// Under `tests/data/recorded/`.
    fixture: &'static str,
    serve: Serve,
    /// The test file's assertions.
    assertions: &'static str,
    /// Input, output tokens the recorded usage adds up to, over the replies served.
    tokens: (u64, u64),
    /// Cache reads, cache writes and, of those, 1-hour cache writes in the recorded usage
    /// (checked when given).
    cache: Option<(u64, u64, u64)>,
    /// Anthropic web searches in the recorded usage.
    web_searches: u64,
    /// The replies' cost at the model's list price, USD (`None`: no usage to price).
    list_price: Option<f64>,
    /// Requests the agent makes.
    requests: u64,
    /// Models that ran steps of a reply besides the one asked for (an advisor), each of
    /// which must be listed in `model_traffic.models`.
    step_models: &'static [&'static str],
}

const CASES: &[Case] = &[
    Case {
        name: "tool-search",
        agent: "claude",
        fixture: "anthropic/tool_search_streaming.yaml",
        serve: Serve::AsRecorded,
        assertions: "  - tool: \"get_exchange_rate*\"\n    called: true\n",
        // message_delta usage: 1591 + 1007 in, 175 + 59 out.
        tokens: (2598, 234),
        cache: None,
        web_searches: 0,
        // claude-sonnet-4-6: $3 in, $15 out per million.
        list_price: Some((2598.0 * 3.0 + 234.0 * 15.0) / 1e6),
        requests: 2,
        step_models: &[],
    },
    Case {
        name: "web-search",
        agent: "claude",
        fixture: "anthropic/web_search_tool_stream.yaml",
        serve: Serve::AsRecorded,
        assertions: "  - tool: Bash\n    called: false\n",
        tokens: (22397, 637),
        cache: None,
        web_searches: 2,
        // claude-sonnet-4-20250514: $3 in, $15 out; web search $10 per 1,000.
        list_price: Some((22397.0 * 3.0 + 637.0 * 15.0) / 1e6 + 2.0 * 0.01),
        requests: 1,
        step_models: &[],
    },
    Case {
        name: "web-fetch",
        agent: "claude",
        fixture: "anthropic/web_fetch_tool_stream.yaml",
        serve: Serve::AsRecorded,
        // The server tool's call, its result an object (a fetched document).
        assertions: "  - tool: \"web_fetch*\"\n    called: true\n  - tool: Bash\n    called: false\n",
        // message_delta usage: 7244 in, 153 out; web fetch has no fee of its own.
        tokens: (7244, 153),
        cache: None,
        web_searches: 0,
        // claude-sonnet-4-20250514: $3 in, $15 out per million.
        list_price: Some((7244.0 * 3.0 + 153.0 * 15.0) / 1e6),
        requests: 1,
        step_models: &[],
    },
    Case {
        name: "code-execution",
        agent: "claude",
        fixture: "anthropic/code_execution_tool_stream.yaml",
        serve: Serve::AsRecorded,
        // Thinking with its signature, then the server's bash, its result an object.
        assertions: "  - tool: \"bash_code_execution*\"\n    called: true\n  - tool: Bash\n    called: false\n",
        // message_delta usage: 4714 in, 304 out.
        tokens: (4714, 304),
        cache: None,
        web_searches: 0,
        // claude-sonnet-4-6: $3 in, $15 out per million.
        list_price: Some((4714.0 * 3.0 + 304.0 * 15.0) / 1e6),
        requests: 1,
        step_models: &[],
    },
    Case {
        name: "advisor",
        agent: "claude",
        fixture: "anthropic/advisor_tool_stream.yaml",
        serve: Serve::AsRecorded,
        // The advisor is a server tool: its call and its result (an object) are the
        // server's.
        assertions: "  - tool: \"advisor*\"\n    called: true\n  - tool: Bash\n    called: false\n",
        // message_delta usage.iterations: claude-sonnet-5 steps of 1128 in, 135 out and
        // 1283 in, 10 out; an advisor_message step on claude-opus-4-8 of 2543 in, 18 out
        // (which the top-level 2411 in, 145 out leave out).
        tokens: (1128 + 2543 + 1283, 135 + 18 + 10),
        cache: Some((0, 0, 0)),
        web_searches: 0,
        // Anthropic's model pages (platform.claude.com/docs/en/models/sonnet-5/overview and
        // …/opus-4-8/overview): claude-sonnet-5 $2 in, $10 out; claude-opus-4-8 $5 in, $25
        // out per million. (2411 × 2 + 145 × 10) / 1e6 + (2543 × 5 + 18 × 25) / 1e6
        // = $0.006272 + $0.013165 = $0.019437; the top-level figures alone, at the reply's
        // model, would be $0.006272.
        list_price: Some((2411.0 * 2.0 + 145.0 * 10.0 + 2543.0 * 5.0 + 18.0 * 25.0) / 1e6),
        requests: 1,
        step_models: &["claude-opus-4-8"],
    },
    Case {
        name: "compaction",
        agent: "claude",
        fixture: "anthropic/compaction_end_to_end.yaml",
        serve: Serve::NotStreamed(0, &[]),
        assertions: "  - tool: Bash\n    called: false\n",
        // usage.iterations: a compaction step of 55196 in, 125 out, then the message's 220
        // in, 8 out (the top-level figures: the message's alone).
        tokens: (55196 + 220, 125 + 8),
        cache: Some((0, 0, 0)),
        web_searches: 0,
        // claude-sonnet-4-6: $3 in, $15 out per million (Anthropic's pricing page), no
        // long-context premium: (55416 × 3 + 133 × 15) / 1e6 = $0.168243, where the
        // top-level figures alone would be $0.00078.
        list_price: Some((55416.0 * 3.0 + 133.0 * 15.0) / 1e6),
        // The streaming request (refused), then the non-streaming one.
        requests: 2,
        step_models: &[],
    },
    Case {
        name: "cached-compaction",
        agent: "claude",
        fixture: "anthropic/compaction_usage_with_cache.yaml",
        serve: Serve::NotStreamed(0, &[]),
        assertions: "  - tool: Bash\n    called: false\n",
        // usage.iterations: a compaction step of 100 in, 131 out, 55096 written to the
        // 5-minute cache; the message's 229 in, 5 out (the top-level figures: the
        // message's alone, no cache write).
        tokens: (100 + 229, 131 + 5),
        cache: Some((0, 55096, 0)),
        web_searches: 0,
        // claude-sonnet-4-6 (Anthropic's pricing page): $3 in, $15 out, $3.75 a 5-minute
        // cache write per million: (329 × 3 + 136 × 15 + 55096 × 3.75) / 1e6 = $0.209637.
        list_price: Some((329.0 * 3.0 + 136.0 * 15.0 + 55096.0 * 3.75) / 1e6),
        requests: 2,
        step_models: &[],
    },
    Case {
        name: "cache-write",
        agent: "claude",
        fixture: "anthropic/cache_real_api.yaml",
        // The recording's second reply: the conversation's prefix read from the cache
        // and its new turn written to the 5-minute cache.
        serve: Serve::NotStreamed(1, &[]),
        assertions: "  - tool: Bash\n    called: false\n",
        // usage: 3 in, 33 out; 1111 read from the cache; 418 written to it, all
        // `ephemeral_5m_input_tokens`.
        tokens: (3, 33),
        cache: Some((1111, 418, 0)),
        web_searches: 0,
        // claude-sonnet-4-5-20250929 (Anthropic's pricing page): $3 in, $15 out, $0.30 a
        // cache read, $3.75 a 5-minute cache write (1.25 × input) per million:
        // (3 × 3 + 33 × 15 + 1111 × 0.30 + 418 × 3.75) / 1e6 = $0.0024048.
        list_price: Some((3.0 * 3.0 + 33.0 * 15.0 + 1111.0 * 0.30 + 418.0 * 3.75) / 1e6),
        requests: 2,
        step_models: &[],
    },
    Case {
        name: "hour-cache-write",
        agent: "claude",
        fixture: "anthropic/cache_1h_stream.yaml",
        // A real 1-hour cache write (`cache_control` `ttl: 1h`, as Claude Code asks for
        // with a subscription login), streamed.
        serve: Serve::AsRecorded,
        assertions: "  - tool: Bash\n    called: false\n",
        // message_start usage: 13 in, 3913 written to the cache, all
        // `ephemeral_1h_input_tokens`; message_delta: 4 out.
        tokens: (13, 4),
        cache: Some((0, 3913, 3913)),
        web_searches: 0,
        // claude-sonnet-4-6 (Anthropic's pricing page): $3 in, $15 out, $6 a 1-hour cache
        // write (2 × input) per million, against $3.75 for the 5-minute cache:
        // (13 × 3 + 4 × 15 + 3913 × 6) / 1e6 = $0.023577.
        list_price: Some((13.0 * 3.0 + 4.0 * 15.0 + 3913.0 * 6.0) / 1e6),
        requests: 1,
        step_models: &[],
    },
    Case {
        name: "mcp-connector",
        agent: "claude",
        fixture: "anthropic/mcp_servers_stream.yaml",
        // Claude Code 2.1.328's own stream reader takes `input_json_delta` for `tool_use`
        // and `server_tool_use` blocks only: on the connector's `mcp_tool_use` it calls the
        // stream malformed ("content_block_type_mismatch_input_json"), keeps what came
        // before (the thinking), and asks again ("Your response above was cut off
        // mid-stream") twice more before it gives up. (Claude Code never sends
        // `mcp_servers`: its MCP client is its own, so the API never streams it an
        // `mcp_tool_use`.)
        serve: Serve::AskedAgain(4),
        assertions: "  - tool: Bash\n    called: false\n",
        // Each reply billed whole: message_delta usage 3042 in, 354 out, four times; the
        // MCP connector has no fee of its own.
        tokens: (4 * 3042, 4 * 354),
        cache: Some((0, 0, 0)),
        web_searches: 0,
        // claude-sonnet-4-5-20250929: $3 in, $15 out per million:
        // 4 × (3042 × 3 + 354 × 15) / 1e6 = 4 × $0.014436 = $0.057744.
        list_price: Some(4.0 * (3042.0 * 3.0 + 354.0 * 15.0) / 1e6),
        requests: 4,
        step_models: &[],
    },
    Case {
        name: "mcp-whole",
        agent: "claude",
        fixture: "anthropic/mcp_servers_stream.yaml",
        // The same reply whole, as the API returns it without streaming: Claude Code takes
        // the `mcp_tool_use` block and its `mcp_tool_result` as they are, and shows them.
        serve: Serve::Assembled,
        assertions: "  - tool: \"*ask_question*\"\n    called: true\n  - tool: Bash\n    called: false\n",
        // usage: 3042 in, 354 out (the message_delta's, over the message_start's 690, 8).
        tokens: (3042, 354),
        cache: Some((0, 0, 0)),
        web_searches: 0,
        // claude-sonnet-4-5-20250929: (3042 × 3 + 354 × 15) / 1e6 = $0.014436.
        list_price: Some((3042.0 * 3.0 + 354.0 * 15.0) / 1e6),
        requests: 2,
        step_models: &[],
    },
    Case {
        name: "thinking-cut",
        agent: "claude",
        fixture: "anthropic/thinking_part_stream.yaml",
        serve: Serve::CutBeforeThenWhole("event: ping"),
        assertions: "  - tool: Bash\n    called: false\n",
        // The cut reply's message_start (43 in, 1 out), then the whole reply (43, 282).
        tokens: (86, 283),
        cache: None,
        web_searches: 0,
        list_price: Some((86.0 * 3.0 + 283.0 * 15.0) / 1e6),
        requests: 2,
        step_models: &[],
    },
    Case {
        name: "unauthorized",
        agent: "claude",
        fixture: "anthropic/thinking_part_stream.yaml",
        serve: Serve::Unauthorized,
        assertions: "  - tool: Bash\n    called: false\n",
        tokens: (0, 0),
        cache: None,
        web_searches: 0,
        list_price: None,
        requests: 1,
        step_models: &[],
    },
    Case {
        name: "responses",
        agent: "codex",
        fixture: "openai-responses/responses_stream.yaml",
        serve: Serve::AsRecorded,
        assertions: "  - tool: Bash\n    called: false\n",
        tokens: (255 + 278, 16 + 9),
        cache: None,
        web_searches: 0,
        // gpt-4o-2024-08-06: $2.50 in, $10 out.
        list_price: Some(((255.0 + 278.0) * 2.5 + 25.0 * 10.0) / 1e6),
        requests: 2,
        step_models: &[],
    },
    Case {
        name: "openai-search",
        agent: "codex",
        fixture: "openai-responses/web_search_tool_stream.yaml",
        serve: Serve::AsRecorded,
        // Codex shows OpenAI's `web_search_call` as a `web_search` item.
        assertions: "  - tool: WebSearch\n    called: true\n  - tool: Bash\n    called: false\n",
        // usage: 9463 in, of which 8320 cached; 582 out (512 of them reasoning).
        tokens: (9463 - 8320, 582),
        // One `web_search_call` in the reply's output.
        cache: None,
        web_searches: 1,
        // gpt-5: $1.25 in, $0.125 cached in, $10 out per million, and OpenAI bills the
        // search itself, $10 per 1,000 calls: (1143 × 1.25 + 8320 × 0.125 + 582 × 10) / 1e6
        // + 0.01 = $0.01828875.
        list_price: Some((1143.0 * 1.25 + 8320.0 * 0.125 + 582.0 * 10.0) / 1e6 + 0.01),
        requests: 1,
        step_models: &[],
    },
    Case {
        name: "chat-gzip",
        agent: "qwen",
        fixture: "openai-chat/run_stream_sync_streams_real_model.yaml",
        serve: Serve::Gzip,
        assertions: "  - tool: \"get_capital*\"\n    called: true\n",
        tokens: (53 + 78, 15 + 9),
        cache: None,
        web_searches: 0,
        // gpt-4o-mini-2024-07-18: $0.15 in, $0.60 out.
        list_price: Some((131.0 * 0.15 + 24.0 * 0.60) / 1e6),
        requests: 2,
        step_models: &[],
    },
    Case {
        name: "gemini-calls",
        agent: "gemini",
        fixture: "gemini/model_iter_stream.yaml",
        serve: Serve::AsRecorded,
        assertions: "  - tool: \"get_capital*\"\n    called: true\n",
        tokens: (52 + 64 + 79, 5 + 5 + 12),
        cache: None,
        web_searches: 0,
        // gemini-2.0-flash: $0.10 in, $0.40 out.
        list_price: Some((195.0 * 0.10 + 22.0 * 0.40) / 1e6),
        requests: 3,
        step_models: &[],
    },
];

fn marker(case: &Case) -> String {
    format!("RECORDED-{}", case.name.to_uppercase())
}

/// The replies `case` serves, in turn order, and the bytes each reply's cassette exchange
/// must hold (with whether it was cut).
fn replies(case: &Case) -> (Vec<Turn>, Vec<(Vec<u8>, bool)>) {
    let recorded = recorded::load(case.fixture);
    let whole = |i: usize| Turn::Recorded(recorded[i].reply.clone());
    match case.serve {
        Serve::AsRecorded | Serve::Gzip => {
            let gzip = matches!(case.serve, Serve::Gzip);
            let turns = recorded
                .iter()
                .map(|i| {
                    Turn::Recorded(std::sync::Arc::new(Recorded {
                        gzip,
                        ..(*i.reply).clone()
                    }))
                })
                .collect();
            let bytes = recorded
                .iter()
                .map(|i| (i.reply.body.to_vec(), false))
                .collect();
            (turns, bytes)
        }
        Serve::AskedAgain(times) => {
            let reply = &recorded[0].reply;
            let bytes = (0..times).map(|_| (reply.body.to_vec(), false)).collect();
            (vec![Turn::Recorded(reply.clone())], bytes)
        }
        Serve::CutBeforeThenWhole(before) => {
            let body = &recorded[0].reply.body;
            let at = String::from_utf8_lossy(body)
                .find(before)
                .unwrap_or_else(|| panic!("{}: no {before:?}", case.fixture));
            let cut = Recorded {
                cut_at: Some(at),
                ..(*recorded[0].reply).clone()
            };
            let mut turns = vec![Turn::Sequence(vec![
                Turn::Recorded(std::sync::Arc::new(cut)),
                whole(0),
            ])];
            turns.extend((1..recorded.len()).map(whole));
            let mut bytes = vec![(body[..at].to_vec(), true), (body.to_vec(), false)];
            bytes.extend(recorded[1..].iter().map(|i| (i.reply.body.to_vec(), false)));
            (turns, bytes)
        }
        Serve::NotStreamed(n, changes) => {
            let (refused, body) = not_found();
            let mut reply = String::from_utf8_lossy(&recorded[n].reply.body).into_owned();
            for (from, to) in changes {
                assert!(reply.contains(from), "{}: no {from:?}", case.fixture);
                reply = reply.replace(from, to);
            }
            let reply = Recorded {
                body: axum::body::Bytes::from(reply),
                ..(*recorded[n].reply).clone()
            };
            let bytes = vec![(body.to_vec(), false), (reply.body.to_vec(), false)];
            let turns = vec![Turn::Sequence(vec![
                Turn::Recorded(std::sync::Arc::new(refused)),
                Turn::Recorded(std::sync::Arc::new(reply)),
            ])];
            (turns, bytes)
        }
        Serve::Assembled => {
            let whole = assembled(&recorded[0].reply.body);
            let reply = Recorded {
                headers: vec![("content-type".into(), "application/json".into())],
                body: axum::body::Bytes::from(whole),
                ..(*recorded[0].reply).clone()
            };
            let (refused, body) = not_found();
            let bytes = vec![(body.to_vec(), false), (reply.body.to_vec(), false)];
            let turns = vec![Turn::Sequence(vec![
                Turn::Recorded(std::sync::Arc::new(refused)),
                Turn::Recorded(std::sync::Arc::new(reply)),
            ])];
            (turns, bytes)
        }
        Serve::Unauthorized => {
            let body = br#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_011CUnauthorizedRecorded"}"#;
            let reply = Recorded {
                status: 401,
                headers: vec![
                    ("content-type".into(), "application/json".into()),
                    ("x-should-retry".into(), "false".into()),
                    ("request-id".into(), "req_011CUnauthorizedRecorded".into()),
                ],
                body: axum::body::Bytes::from_static(body),
                cut_at: None,
                gzip: false,
            };
            (
                vec![Turn::Recorded(std::sync::Arc::new(reply))],
                vec![(body.to_vec(), false)],
            )
        }
    }
}

/// The 404 an endpoint that does not stream gives a streaming request (Claude Code then
/// asks again without streaming), and its body.
fn not_found() -> (Recorded, &'static [u8]) {
    let body = br#"{"type":"error","error":{"type":"not_found_error","message":"Not Found"}}"#;
    let refused = Recorded {
        status: 404,
        headers: vec![("content-type".into(), "application/json".into())],
        body: axum::body::Bytes::from_static(body),
        cut_at: None,
        gzip: false,
    };
    (refused, body)
}

/// A Messages API event stream (`event:`/`data:` lines) put together into the whole
/// message it streamed, as JSON text.
fn assembled(stream: &[u8]) -> String {
    let text = String::from_utf8_lossy(stream);
    let mut message = Value::Null;
    let mut inputs: Vec<String> = Vec::new();
    for data in text.lines().filter_map(|l| l.strip_prefix("data:")) {
        let event: Value = serde_json::from_str(data.trim()).unwrap();
        let index = event["index"].as_u64().unwrap_or(0) as usize;
        match event["type"].as_str().unwrap_or("") {
            "message_start" => message = event["message"].clone(),
            "content_block_start" => {
                message["content"]
                    .as_array_mut()
                    .unwrap()
                    .push(event["content_block"].clone());
                inputs.push(String::new());
            }
            "content_block_delta" => {
                let block = &mut message["content"][index];
                let delta = &event["delta"];
                match delta["type"].as_str().unwrap_or("") {
                    "text_delta" => {
                        let text = block["text"].as_str().unwrap_or("").to_owned();
                        block["text"] = Value::from(text + delta["text"].as_str().unwrap());
                    }
                    "thinking_delta" => {
                        let text = block["thinking"].as_str().unwrap_or("").to_owned();
                        block["thinking"] = Value::from(text + delta["thinking"].as_str().unwrap());
                    }
                    "signature_delta" => block["signature"] = delta["signature"].clone(),
                    "input_json_delta" => {
                        inputs[index].push_str(delta["partial_json"].as_str().unwrap());
                    }
                    other => panic!("a delta this test does not put together: {other}"),
                }
            }
            "content_block_stop" if !inputs[index].is_empty() => {
                message["content"][index]["input"] = serde_json::from_str(&inputs[index]).unwrap();
            }
            "message_delta" => {
                for (key, value) in event["delta"].as_object().unwrap() {
                    message[key] = value.clone();
                }
                for (key, value) in event["usage"].as_object().unwrap() {
                    message["usage"][key] = value.clone();
                }
            }
            _ => {}
        }
    }
    message.to_string()
}

/// The agent's record-then-replay of its cases: (recorded results, replayed results, the
/// cassette directory, the model's requests after recording and at the end, each case's
/// expected bytes).
struct AgentRun {
    recorded: Value,
    replayed: Value,
    suite: Suite,
    after_recording: usize,
    at_end: usize,
    bytes: Vec<Vec<(Vec<u8>, bool)>>,
}

fn record_and_replay(agent: &Agent, cases: &[&Case]) -> AgentRun {
    let model = ScriptedModel::start();
    let suite = Suite::new();
    let mut bytes = Vec::new();
    for case in cases {
        let (turns, expected) = replies(case);
        model.script(&marker(case), turns);
        bytes.push(expected);
        suite.file(
            &format!("tests/{}/t.aptitude.yaml", case.name),
            &format!(
                "name: {}\nprompt: \"{}: answer\"\nassertions:\n{}",
                case.name,
                marker(case),
                case.assertions
            ),
        );
    }
    let (_, recorded, stderr) = run_on(&suite, &model, agent, &["--no-grade", "--record-model"]);
    assert!(recorded.is_object(), "{}: no results\n{stderr}", agent.name);
    // Each recording is in the protocol its agent speaks.
    let protocol = |uri: &str| {
        let path = uri.split('?').next().unwrap_or_default();
        let path = path.rsplit_once("://").map_or(path, |(_, rest)| rest);
        aptitude::gateway::protocol::Protocol::of_path(path)
    };
    for case in cases {
        let want = protocol(&recorded::load(case.fixture)[0].uri);
        for request in model.requests_for(&marker(case)) {
            assert_eq!(
                protocol(&request.path),
                want,
                "{}: {}",
                case.name,
                request.path
            );
        }
        if matches!(case.serve, Serve::NotStreamed(..) | Serve::Assembled) {
            // The recording answers the request without streaming, as it was recorded.
            let streams: Vec<bool> = model
                .requests_for(&marker(case))
                .iter()
                .map(|r| r.body["stream"] == true)
                .collect();
            assert_eq!(streams, [true, false], "{}", case.name);
        }
    }
    let after_recording = model.requests().len();
    let kept = suite.path().join("recorded.json");
    crate::support::copy_results(suite.results_path(), &kept);
    let (_, replayed, stderr) = run_on(
        &suite,
        &model,
        agent,
        &["--no-grade", "--replay", kept.to_str().unwrap()],
    );
    assert!(
        replayed.is_object(),
        "{}: no replay results\n{stderr}",
        agent.name
    );
    AgentRun {
        recorded,
        replayed,
        after_recording,
        at_end: model.requests().len(),
        suite,
        bytes,
    }
}

fn test<'a>(results: &'a Value, name: &str) -> &'a Value {
    results["tests"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["name"] == name))
        .unwrap_or_else(|| panic!("no test {name}: {results:#}"))
}

/// The model exchanges of a run's cassette, in order: (reply bytes, cut).
fn cassette_replies(suite: &Suite, test: &Value) -> Vec<(Vec<u8>, bool)> {
    let reference: aptitude::gateway::cassette::CassetteRef =
        serde_json::from_value(test["model_traffic"]["cassette"].clone())
            .unwrap_or_else(|e| panic!("no cassette ({e}): {:#}", test["model_traffic"]));
    let cassette = aptitude::gateway::cassette::Cassette::read(suite.path(), &reference).unwrap();
    cassette
        .exchanges
        .into_iter()
        .filter(|e| {
            aptitude::gateway::protocol::Protocol::of_path(
                e.path.split('?').next().unwrap_or_default(),
            )
            .is_some()
        })
        .map(|e| (e.reply, e.cut))
        .collect()
}

/// Every recording, served to the real CLI in its protocol, is metered to the recorded
/// tokens and its list price, kept byte for byte (up to a cut), and replays with the same
/// verdict and no request upstream. The agents run side by side.
#[test]
fn real_recorded_traffic_is_metered_priced_kept_and_replayed_on_every_protocol() {
    let only = std::env::var("APTITUDE_TEST_AGENTS").unwrap_or_default();
    let only_cases = std::env::var("APTITUDE_TEST_CASES").unwrap_or_default();
    let only_cases = only_cases.as_str();
    let agents: Vec<Agent> = AGENTS
        .iter()
        .map(|a| a())
        .filter(|a| CASES.iter().any(|c| c.agent == a.name))
        .filter(|a| only.is_empty() || only.split(',').any(|n| n == a.name))
        .collect();
    let runs: Vec<(&Agent, Vec<&Case>, AgentRun)> = std::thread::scope(|scope| {
        let handles: Vec<_> = agents
            .iter()
            .map(|agent| {
                // `APTITUDE_TEST_CASES=a,b` runs only those cases (to study one).
                let cases: Vec<&Case> = CASES
                    .iter()
                    .filter(|c| c.agent == agent.name)
                    .filter(|c| only_cases.is_empty() || only_cases.split(',').any(|n| n == c.name))
                    .collect();
                scope.spawn(move || {
                    let run = record_and_replay(agent, &cases);
                    (agent, cases, run)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut measured = Vec::new();
    for (agent, cases, run) in &runs {
        assert_eq!(
            run.at_end, run.after_recording,
            "{}: a replay sent a request upstream",
            agent.name
        );
        for (case, expected) in cases.iter().zip(&run.bytes) {
            let what = format!("{} ({}, {})", case.name, agent.name, case.fixture);
            let recorded = test(&run.recorded, case.name);
            let replayed = test(&run.replayed, case.name);
            let traffic = &recorded["model_traffic"];
            // Bytes: the cassette holds what the recording sent, up to the cut.
            let kept = cassette_replies(&run.suite, recorded);
            assert_eq!(kept.len() as u64, case.requests, "{what}: {traffic:#}");
            for (n, ((got, got_cut), (want, want_cut))) in kept.iter().zip(expected).enumerate() {
                assert!(
                    got == want,
                    "{what}: reply {n} differs from the recording ({} bytes kept, {} recorded)",
                    got.len(),
                    want.len()
                );
                assert_eq!(got_cut, want_cut, "{what}: reply {n}");
            }
            // Tokens and cost.
            assert_eq!(traffic["requests"], case.requests, "{what}: {traffic:#}");
            assert_eq!(
                (
                    traffic["input_tokens"].as_u64().unwrap(),
                    traffic["output_tokens"].as_u64().unwrap()
                ),
                case.tokens,
                "{what}: {traffic:#}"
            );
            if let Some(cache) = case.cache {
                let n = |field: &str| traffic[field].as_u64().unwrap_or(0);
                assert_eq!(
                    (
                        n("cache_read_input_tokens"),
                        n("cache_creation_input_tokens"),
                        n("cache_creation_1h_input_tokens")
                    ),
                    cache,
                    "{what}: {traffic:#}"
                );
            }
            assert_eq!(
                traffic["web_search_requests"].as_u64().unwrap_or(0),
                case.web_searches,
                "{what}"
            );
            if let Some(list) = case.list_price {
                let metered = traffic["cost_usd"]
                    .as_f64()
                    .unwrap_or_else(|| panic!("{what}: not priced: {traffic:#}"));
                let ratio = metered / list;
                assert!((ratio - 1.0).abs() < 1e-9, "{what}: {metered} / {list}");
                assert!(
                    traffic["cost_basis"]
                        .as_str()
                        .is_some_and(|b| b.starts_with("estimated at LiteLLM ")),
                    "{what}: {traffic:#}"
                );
                measured.push(format!("{what}: ${metered:.6} / ${list:.6} = {ratio:.6}"));
                // Every model is in the price table: none priced at the dearest.
                assert!(
                    traffic.get("priced_at_dearest").is_none(),
                    "{what}: {traffic:#}"
                );
            }
            for model in case.step_models {
                assert!(
                    traffic["models"]
                        .as_array()
                        .is_some_and(|m| m.iter().any(|m| m == model)),
                    "{what}: {model} ran a step but is not listed: {traffic:#}"
                );
            }
            // Retries: a cut reply's retry is the agent's, recorded and replayed alike.
            let retries = u64::from(matches!(case.serve, Serve::CutBeforeThenWhole(_)));
            assert_eq!(traffic["retries"], retries, "{what}: {traffic:#}");
            // No false `tampered` and no dropped line, recorded or replayed.
            for (when, t) in [("recorded", recorded), ("replayed", replayed)] {
                assert_ne!(t["error_kind"], "tampered", "{what} {when}: {}", t["error"]);
                assert_eq!(
                    t["transcript"]["lost"]["lines"].as_u64().unwrap_or(0),
                    0,
                    "{what} {when}: {:#}",
                    t["transcript"]["warnings"]
                );
            }
            // The replay: the same verdict, every request answered from the cassette.
            let replay_traffic = &replayed["model_traffic"];
            assert_eq!(
                (&replayed["status"], &replayed["error_kind"]),
                (&recorded["status"], &recorded["error_kind"]),
                "{what}: {}\n{replay_traffic:#}",
                replayed["error"]
            );
            assert_eq!(
                replay_traffic["replayed"], case.requests,
                "{what}: {replay_traffic:#}"
            );
            assert_eq!(replay_traffic["requests"], case.requests, "{what}");
            assert_eq!(
                replay_traffic["retries"], retries,
                "{what}: {replay_traffic:#}"
            );
            assert!(
                replay_traffic.get("divergence").is_none(),
                "{what}: {replay_traffic:#}"
            );
            // The transcripts agree but for what differs between runs by construction
            // (the order of a `Did you mean one of` list: the gateway's normalisation).
            let same = |t: &Value| {
                let n = aptitude::gateway::normalize::Normalizer::default();
                n.request_json(&comparable(t))
            };
            assert_eq!(same(replayed), same(recorded), "{what}");
        }
    }
    // The verdicts the suite expects of the real CLIs.
    for (agent, cases, run) in &runs {
        for case in cases {
            let t = test(&run.recorded, case.name);
            eprintln!(
                "{} {}: {} {} {}",
                agent.name, case.name, t["status"], t["error_kind"], t["error"]
            );
        }
    }
    if let Some((_, _, run)) = runs.iter().find(|(a, _, _)| a.name == "codex") {
        codex_verdicts(run);
    }
    if let Some((_, _, run)) = runs.iter().find(|(a, _, _)| a.name == "claude") {
        claude_verdicts(run);
    }
    eprintln!("metered cost / list price:\n{}", measured.join("\n"));
}

/// The case's recorded test, when the case ran (`APTITUDE_TEST_CASES` runs some).
fn ran<'a>(results: &'a Value, name: &str) -> Option<&'a Value> {
    results["tests"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["name"] == name))
}

/// The verdicts Codex's cases must have.
fn codex_verdicts(run: &AgentRun) {
    if let Some(t) = ran(&run.recorded, "openai-search") {
        // OpenAI's web search: one call with its real query, server-side, witnessed.
        assert_eq!(t["status"], "passed", "{}", t["error"]);
        assert_eq!(t["witness"]["status"], "witnessed", "{:#}", t["witness"]);
        let calls = t["transcript"]["tool_calls"].as_array().unwrap();
        assert_eq!(calls.len(), 1, "{calls:#?}");
        assert_eq!(calls[0]["server_side"], true, "{calls:#?}");
        assert!(
            calls[0]["input"].to_string().contains("San Francisco"),
            "{calls:#?}"
        );
    }
}

/// The verdicts Claude Code's cases must have.
fn claude_verdicts(run: &AgentRun) {
    let status = |name: &str| {
        ran(&run.recorded, name).map(|t| {
            (
                t["status"].as_str().unwrap_or("").to_owned(),
                t["error_kind"].clone(),
            )
        })
    };
    if let Some(t) = ran(&run.recorded, "tool-search") {
        // Claude Code refused the call of a tool it does not have before running it (a
        // `<tool_use_error>`): an attempt, never a call that ran.
        let calls = &t["transcript"]["tool_calls"];
        let refused = calls
            .as_array()
            .and_then(|c| c.iter().find(|c| c["name"] == "get_exchange_rate"))
            .unwrap_or_else(|| panic!("no get_exchange_rate call: {calls:#}"));
        assert!(
            refused["blocked"]
                .as_str()
                .is_some_and(|b| b.contains("No such tool available")),
            "{refused:#}"
        );
        assert_eq!(t["status"], "passed", "{}", t["error"]);
    }
    // Server tools whose results are objects, and the MCP connector's call and result:
    // read, marked server-side, witnessed.
    for name in ["web-fetch", "code-execution", "advisor", "mcp-whole"] {
        let Some(t) = ran(&run.recorded, name) else {
            continue;
        };
        assert_eq!(t["status"], "passed", "{name}: {}", t["error"]);
        assert_eq!(
            t["witness"]["status"], "witnessed",
            "{name}: {:#}",
            t["witness"]
        );
        let calls = t["transcript"]["tool_calls"].as_array().unwrap();
        assert!(
            !calls.is_empty()
                && calls
                    .iter()
                    .all(|c| c["server_side"] == true && c["output"].is_string()),
            "{name}: {calls:#?}"
        );
    }
    if let Some(t) = ran(&run.recorded, "mcp-whole") {
        let call = &t["transcript"]["tool_calls"][0];
        assert_eq!(call["name"], "ask_question", "{call:#}");
        assert_eq!(
            call["input"]["repoName"], "pydantic/pydantic-ai",
            "{call:#}"
        );
        assert!(
            call["output"]
                .as_str()
                .is_some_and(|o| o.starts_with("[mcp_tool_result]\nThis repository")),
            "{call:#}"
        );
    }
    if let Some(t) = ran(&run.recorded, "mcp-connector") {
        // Claude Code's own refusal of the streamed `mcp_tool_use`: an error of the
        // model's reply as Claude Code read it, witnessed, never `tampered`; no call ran.
        assert_eq!(t["status"], "error", "{t:#}");
        assert!(
            t["error"]
                .as_str()
                .is_some_and(|e| e.contains("response stream was malformed")),
            "{}",
            t["error"]
        );
        assert_eq!(t["witness"]["status"], "witnessed", "{:#}", t["witness"]);
        assert_eq!(
            t["transcript"]["tool_calls"],
            serde_json::json!([]),
            "{t:#}"
        );
    }
    if let Some(status) = status("thinking-cut") {
        assert_eq!(status.0, "passed");
    }
    if let Some(status) = status("unauthorized") {
        assert_eq!(
            status,
            ("error".to_owned(), Value::from("setup")),
            "a 401 is the setup's fault"
        );
    }
}

/// Every recording kept is listed in `SOURCES.tsv` with where it came from (repository,
/// path, the commit it was taken at) and its licence, and every listed file is kept.
#[test]
fn every_recording_has_its_provenance() {
    let dir = crate::support::data("recorded");
    let sources = std::fs::read_to_string(dir.join("SOURCES.tsv")).unwrap();
    let mut listed = std::collections::BTreeSet::new();
    for line in sources.lines().skip(1) {
        let fields: Vec<&str> = line.split('\t').collect();
        assert_eq!(fields.len(), 6, "{line}");
        let (file, repository, path, commit, licence) =
            (fields[0], fields[1], fields[2], fields[3], fields[4]);
        assert!(dir.join(file).is_file(), "{file} is listed but not kept");
        assert!(repository.contains('/') && !path.is_empty(), "{line}");
        assert!(
            commit.len() == 40 && commit.bytes().all(|b| b.is_ascii_hexdigit()),
            "{line}"
        );
        assert!(
            ["MIT", "Apache-2.0", "BSD"]
                .iter()
                .any(|l| licence.starts_with(l)),
            "{line}"
        );
        listed.insert(file.to_owned());
    }
    for entry in std::fs::read_dir(&dir).unwrap() {
        let entry = entry.unwrap();
        if !entry.file_type().unwrap().is_dir() {
            continue;
        }
        for file in std::fs::read_dir(entry.path()).unwrap() {
            let name = format!(
                "{}/{}",
                entry.file_name().to_string_lossy(),
                file.unwrap().file_name().to_string_lossy()
            );
            assert!(listed.contains(&name), "{name} has no line in SOURCES.tsv");
        }
    }
    assert!(listed.len() >= 6);
}

/// A model that stops at its output-token limit ends the run for the model's answer, not
/// the infrastructure's: Claude Code ("Claude's response exceeded the … output token
/// maximum") and Codex (`response.incomplete`, `max_output_tokens`) both fail the run, which
/// is `error` kind `agent` and never retried by `--retry-infra`. The replies are real
/// recordings with their stop changed to the output limit (no public recording of one was
/// found).
#[test]
fn a_stop_at_the_output_limit_is_the_agents_and_never_retried() {
    let limited = |fixture: &str, turn: usize, changes: &[(&str, &str)]| {
        let reply = &recorded::load(fixture)[turn].reply;
        let mut body = String::from_utf8_lossy(&reply.body).into_owned();
        for (from, to) in changes {
            assert!(body.contains(from), "{fixture}: no {from:?}");
            body = body.replace(from, to);
        }
        Turn::Recorded(std::sync::Arc::new(Recorded {
            body: axum::body::Bytes::from(body),
            ..(**reply).clone()
        }))
    };
    let cases = [
        (
            "claude",
            limited(
                "anthropic/thinking_part_stream.yaml",
                0,
                &[(
                    r#""stop_reason":"end_turn""#,
                    r#""stop_reason":"max_tokens""#,
                )],
            ),
        ),
        (
            "codex",
            limited(
                "openai-responses/responses_stream.yaml",
                1,
                &[
                    ("response.completed", "response.incomplete"),
                    (
                        r#""status":"completed","error":null,"incomplete_details":null"#,
                        r#""status":"incomplete","error":null,"incomplete_details":{"reason":"max_output_tokens"}"#,
                    ),
                ],
            ),
        ),
    ];
    let outcomes: Vec<(&str, Value, usize)> = std::thread::scope(|scope| {
        let handles: Vec<_> = cases
            .into_iter()
            .map(|(name, turn)| {
                scope.spawn(move || {
                    let agent = AGENTS.iter().map(|a| a()).find(|a| a.name == name).unwrap();
                    let model = ScriptedModel::start();
                    let marker = format!("LIMIT-{}", name.to_uppercase());
                    // Codex's recording asks a tool first; the stop is its second reply.
                    // Claude Code asks the model to go on after a stop at the limit, a few
                    // times, before it gives up: every reply stops there.
                    let turns = if name == "codex" {
                        let first = recorded::load("openai-responses/responses_stream.yaml");
                        vec![Turn::Recorded(first[0].reply.clone()), turn]
                    } else {
                        vec![turn; 8]
                    };
                    model.script(&marker, turns);
                    let suite = Suite::new();
                    suite.file(
                        "tests/limit/t.aptitude.yaml",
                        &format!(
                            "name: limit\nprompt: \"{marker}: answer\"\nassertions:\n  - tool: Bash\n    called: false\n"
                        ),
                    );
                    let (_, results, stderr) = run_on(
                        &suite,
                        &model,
                        &agent,
                        &["--no-grade", "--retry-infra", "2"],
                    );
                    assert!(results.is_object(), "{name}: {stderr}");
                    (name, results, model.requests_for(&marker).len())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (name, results, requests) in outcomes {
        let t = test(&results, "limit");
        let traffic = &t["model_traffic"];
        assert_eq!(t["status"], "error", "{name}: {t:#}");
        assert_eq!(t["error_kind"], "agent", "{name}: {}", t["error"]);
        assert!(t.get("attempts").is_none(), "{name}: retried: {t:#}");
        let limited = if name == "codex" {
            1
        } else {
            traffic["requests"].as_u64().unwrap()
        };
        assert_eq!(traffic["output_limited"], limited, "{name}: {traffic:#}");
        assert_eq!(
            traffic["ended_at_output_limit"], true,
            "{name}: {traffic:#}"
        );
        assert_eq!(
            traffic["failed"].as_u64().unwrap_or(0),
            0,
            "{name}: {traffic:#}"
        );
        assert_eq!(
            requests as u64,
            traffic["requests"].as_u64().unwrap(),
            "{name}: one attempt's requests"
        );
    }
}
