//! One run's model traffic as the gateway saw it: the summary results JSON records
//! (`model_traffic`), and the log it is counted in while the run goes on.

use serde::{Deserialize, Serialize};

use super::budget::Estimate;
use super::meter::{Metered, Tokens};
use super::price;

/// What one agent run (or grading call) sent through aptitude's model gateway: results
/// JSON's `model_traffic`. Counted by the gateway from the wire, the same way for every
/// agent, whatever the agent itself reports.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Traffic {
    /// Where the requests went: the upstream base URL (`https://api.anthropic.com`, the
    /// test's `base_url:`), without credentials.
    pub upstream: String,
    /// Model requests (Messages, Responses, Chat Completions, Gemini calls).
    pub requests: u32,
    /// Model requests that repeated an earlier one of the run, byte for byte, after it
    /// failed or was cut: the agent's own retries.
    pub retries: u32,
    /// Model requests that failed: an error status or error event, a reply cut short, an
    /// upstream that could not be reached, or a request the gateway refused.
    pub failed: u32,
    /// Other requests passed through unmetered (token counts, model lists).
    #[serde(default)]
    pub other_requests: u32,
    /// Requests the gateway refused without forwarding them: not an inference endpoint
    /// (the Files, Batches or Admin APIs), a placeholder credential outside its header,
    /// or any request after the run was stopped (see `gateway::scope`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub refused: u32,
    /// The first refused request and why (`GET /v1/files: aptitude's model gateway
    /// forwards only inference endpoints …`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused_first: Option<String>,
    /// Model requests refused because they would have the provider fetch a URL on a host
    /// the test's `network:` does not list (`mcp_servers`, an image or document by URL, a
    /// `web_fetch` tool): also in `refused`, the first in `refused_first`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub provider_fetches_refused: u32,
    /// Replies that held the run's real key in some form (as it is, `\u`-escaped, base64,
    /// hex, reversed, in a header or the body): the key was taken out and the reply ended
    /// as an error, so the agent never saw it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub key_echoes: u32,
    /// Input tokens, not counting cache reads and writes.
    pub input_tokens: u64,
    /// Output tokens (reasoning included).
    pub output_tokens: u64,
    /// Input tokens read from the prompt cache.
    pub cache_read_input_tokens: u64,
    /// Input tokens written to the prompt cache.
    pub cache_creation_input_tokens: u64,
    /// Of `cache_creation_input_tokens`, those written to Anthropic's 1-hour cache (priced
    /// at twice the input rate, against 1.25 times for the 5-minute cache).
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub cache_creation_1h_input_tokens: u64,
    /// Server-side web searches the model made (Anthropic's
    /// `usage.server_tool_use.web_search_requests`, OpenAI's `web_search_call` items,
    /// Gemini's grounding queries), priced per search in `cost_usd`.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub web_search_requests: u64,
    /// Server-side web fetches (Anthropic `server_tool_use.web_fetch_requests`): their
    /// tokens are in the counts above.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub web_fetch_requests: u64,
    /// Server-side code executions (Anthropic `server_tool_use.code_execution_requests`),
    /// billed by container time, which no reply reports: not in `cost_usd`.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub code_execution_requests: u64,
    /// Model replies that stopped at the model's output-token limit (Anthropic
    /// `stop_reason: "max_tokens"`, Responses `response.incomplete` for
    /// `max_output_tokens`, Chat `finish_reason: "length"`, Gemini `MAX_TOKENS`): complete
    /// replies, not failures.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub output_limited: u32,
    /// Whether the run's last model reply stopped at the output-token limit: a run that
    /// then failed failed for the model's answer, not for the infrastructure
    /// (`run::classify`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ended_at_output_limit: bool,
    /// Model requests whose reply reported no usage (a Chat Completions client that did
    /// not ask for `include_usage`, a reply cut before its usage): their tokens are not
    /// in the counts above.
    #[serde(default)]
    pub unmetered: u32,
    /// Cost in USD at list prices ([`super::price`]), an estimate; absent when a
    /// request's model is of no known provider (tokens only then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// How `cost_usd` was estimated: `estimated at LiteLLM 1.110.2 list prices, taken
    /// 2026-11-28`, and each model that is not in the price table and was priced at its provider's dearest
    /// rates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_basis: Option<String>,
    /// The models not in the price table, priced at their provider's dearest rates (an
    /// upper bound): the reports name them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub priced_at_dearest: Vec<String>,
    /// The models asked for, in the order first asked, and the models that ran steps of a
    /// reply (an advisor, a fallback model).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub models: Vec<String>,
    /// Set when the gateway refused a request because it would cross `--max-cost` or
    /// `--max-tokens`: which ceiling, and the spend then. The run is then `error`, kind
    /// `budget`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<String>,
    /// Model requests answered from the cassette the run was replayed from (`run
    /// --replay`): nothing was sent upstream for them, and they count no tokens. A recorded
    /// failure (an error status, a cut reply) counts as failed again, so the agent's retries
    /// of it count as they did when it was recorded.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub replayed: u32,
    /// The first request that differed from the cassette the run was replayed from: the
    /// turn and what differed (`turn 3 of POST /v1/messages differs from the recorded
    /// request at `messages[4].content[0].content`: …`). The request was refused and the
    /// run stopped (`--replay-miss error`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub divergence: Option<String>,
    /// The same, with `--replay-miss live`: from that request on, the real model answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub went_live: Option<String>,
    /// The run's recorded exchange (`run --record-model`), beside the results file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cassette: Option<super::cassette::CassetteRef>,
    /// Why the run's exchange was not recorded although it was asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cassette_error: Option<String>,
    /// Each model request, in the order sent: the first [`MAX_REQUESTS_LISTED`] of
    /// `requests` (for the report's run view). Absent in older results.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub request_log: Vec<ModelRequest>,
}

/// The most model requests a run's [`Traffic::request_log`] lists; `requests` counts all.
pub const MAX_REQUESTS_LISTED: usize = 1_000;

/// One model request as the gateway saw it ([`Traffic::request_log`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelRequest {
    /// Its number in the run, from 1.
    pub index: u32,
    /// The model asked for, when the request named one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The reply's HTTP status; absent when none came (refused, upstream unreachable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Whether it failed: an error status or event, a reply cut short, no reply.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub failed: bool,
    /// Input tokens, not counting cache reads and writes.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub input_tokens: u64,
    /// Output tokens.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub output_tokens: u64,
    /// Input tokens read from or written to the prompt cache.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub cache_tokens: u64,
    /// Milliseconds from the request to the end of its reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Traffic {
    /// Every token counted: input, output and cache.
    pub fn total_tokens(&self) -> u64 {
        self.tokens().total()
    }

    /// The token counts.
    pub fn tokens(&self) -> Tokens {
        Tokens {
            input: self.input_tokens,
            output: self.output_tokens,
            cache_read: self.cache_read_input_tokens,
            cache_creation: self.cache_creation_input_tokens,
            cache_creation_1h: self.cache_creation_1h_input_tokens,
        }
    }

    fn add_tokens(&mut self, t: &Tokens) {
        let mut sum = self.tokens();
        sum.add(t);
        self.input_tokens = sum.input;
        self.output_tokens = sum.output;
        self.cache_read_input_tokens = sum.cache_read;
        self.cache_creation_input_tokens = sum.cache_creation;
        self.cache_creation_1h_input_tokens = sum.cache_creation_1h;
    }
}

/// One model request of the run, for telling retries apart.
#[derive(Debug)]
struct Sent {
    sha256: [u8; 32],
    failed: bool,
}

/// The run's traffic while it goes on.
#[derive(Debug, Default)]
pub(super) struct RunLog {
    pub(super) traffic: Traffic,
    /// Whether every metered request so far was priced.
    unpriced: bool,
    cost_usd: f64,
    /// Models priced at their provider's dearest rates (not in the table).
    at_dearest: Vec<(String, super::price::Provider)>,
    sent: Vec<Sent>,
    /// What the run's next request surely costs ([`super::budget`]).
    pub(super) next: Estimate,
    /// When each listed request was sent (as `traffic.request_log`).
    started: Vec<std::time::Instant>,
}

impl RunLog {
    /// A log for traffic to `upstream`.
    pub(super) fn new(upstream: String) -> Self {
        RunLog {
            traffic: Traffic {
                upstream,
                ..Traffic::default()
            },
            ..RunLog::default()
        }
    }

    /// Counts a model request for `model` whose body hashes to `sha256`; returns its index.
    pub(super) fn begin(&mut self, model: Option<&str>, sha256: [u8; 32]) -> usize {
        let t = &mut self.traffic;
        t.requests += 1;
        if self.sent.iter().any(|s| s.failed && s.sha256 == sha256) {
            t.retries += 1;
        }
        if let Some(model) = model
            && !t.models.iter().any(|m| m == model)
        {
            t.models.push(model.to_owned());
        }
        self.sent.push(Sent {
            sha256,
            failed: false,
        });
        let index = self.sent.len() - 1;
        if index < MAX_REQUESTS_LISTED {
            self.traffic.request_log.push(ModelRequest {
                index: u32::try_from(index + 1).unwrap_or(u32::MAX),
                model: model.map(|m| crate::shared::cut::chars(m, 100).kept),
                ..ModelRequest::default()
            });
            self.started.push(std::time::Instant::now());
        }
        index
    }

    /// Notes the reply to listed request `index`: its status, tokens and time.
    fn listed(&mut self, index: usize, status: u16, tokens: Option<&Tokens>) {
        let took = self.started.get(index).map(std::time::Instant::elapsed);
        let Some(entry) = self.traffic.request_log.get_mut(index) else {
            return;
        };
        entry.status = Some(status);
        entry.duration_ms = took.map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        if let Some(t) = tokens {
            entry.input_tokens = t.input;
            entry.output_tokens = t.output;
            entry.cache_tokens = t.cache_read.saturating_add(t.cache_creation);
        }
    }

    /// Counts a request the gateway refused before forwarding it (`method path`, why).
    pub(super) fn refused(&mut self, method: &hyper::Method, path: &str, why: &str) {
        let t = &mut self.traffic;
        t.refused = t.refused.saturating_add(1);
        t.refused_first.get_or_insert_with(|| {
            format!(
                "{method} {}: {why}",
                crate::shared::cut::chars(path, 200).kept
            )
        });
    }

    /// Counts request `index` as answered from a cassette.
    pub(super) fn replayed(&mut self) {
        self.traffic.replayed += 1;
    }

    /// Marks request `index` failed without a reply (refused, upstream unreachable).
    pub(super) fn failed(&mut self, index: usize) {
        if let Some(s) = self.sent.get_mut(index) {
            s.failed = true;
        }
        if let Some(entry) = self.traffic.request_log.get_mut(index) {
            entry.failed = true;
        }
        self.traffic.failed += 1;
    }

    /// Counts the reply to request `index` (asked for `model`): HTTP `status` and what it
    /// showed. A reply that did not reach its protocol's end failed (cut by the upstream
    /// or given up by the agent); one the agent stopped reading after its end did not
    /// (Copilot CLI closes the stream after the usage chunk, before `[DONE]`). Returns its
    /// tokens and cost, for the ledger.
    pub(super) fn end(
        &mut self,
        index: usize,
        model: Option<&str>,
        status: u16,
        metered: &Metered,
    ) -> (Tokens, Option<f64>) {
        self.listed(index, status, metered.tokens.as_ref());
        let failed = status >= 400 || metered.error || !metered.completed;
        if failed {
            self.failed(index);
        } else if metered.output_limit {
            self.traffic.output_limited += 1;
        }
        self.traffic.ended_at_output_limit = !failed && metered.output_limit;
        let Some(tokens) = metered.tokens else {
            if status < 400 {
                self.traffic.unmetered += 1;
            }
            return (Tokens::default(), None);
        };
        self.traffic.add_tokens(&tokens);
        let t = &mut self.traffic;
        t.web_search_requests = t.web_search_requests.saturating_add(metered.web_searches);
        t.web_fetch_requests = t.web_fetch_requests.saturating_add(metered.web_fetches);
        t.code_execution_requests = t
            .code_execution_requests
            .saturating_add(metered.code_executions);
        for step_model in metered.steps.iter().filter_map(|s| s.model.as_deref()) {
            if !t.models.iter().any(|m| m == step_model) {
                t.models
                    .push(crate::shared::cut::chars(step_model, 100).kept.to_owned());
            }
        }
        let priced_as = priced_as(metered.model.as_deref(), model);
        let cost = reply_cost(priced_as, metered);
        match &cost {
            Some(costs) => {
                for (m, c) in costs {
                    self.cost_usd += c.usd;
                    if let price::Basis::Dearest(provider) = c.basis
                        && !self.at_dearest.iter().any(|(seen, _)| seen == m)
                    {
                        self.at_dearest.push((m.clone(), provider));
                        self.traffic
                            .priced_at_dearest
                            .push(crate::shared::cut::chars(m, 100).kept.to_owned());
                    }
                }
            }
            None => self.unpriced = true,
        }
        let cost = cost.map(|costs| costs.iter().map(|(_, c)| c.usd).sum::<f64>());
        self.traffic.cost_usd = (!self.unpriced).then_some(self.cost_usd);
        self.traffic.cost_basis = self.traffic.cost_usd.map(|_| self.cost_basis());
        if !failed {
            self.next = Estimate::after(priced_as, &tokens);
        }
        (tokens, cost)
    }

    /// `estimated at list prices checked …`, naming the models priced at their provider's
    /// dearest rates.
    fn cost_basis(&self) -> String {
        let mut basis = format!("estimated at {}", price::provenance());
        for (model, provider) in &self.at_dearest {
            basis.push_str(&format!(
                "; `{}` is not in the price table: priced at {}'s dearest rates",
                crate::shared::cut::chars(model, 100).kept,
                provider.name()
            ));
        }
        basis
    }
}

/// What a reply cost, by the model each part was priced as: one part priced as `priced_as`
/// (its tokens and web searches), or — for a reply of several steps — each step at its own
/// model's rates (a step that names no model or an unpriceable one: at `priced_as`'s), the
/// searches at `priced_as`'s fee. `None` when some part can not be priced.
fn reply_cost(priced_as: Option<&str>, metered: &Metered) -> Option<Vec<(String, price::Cost)>> {
    let reply_model = priced_as?;
    let tokens = metered.tokens.unwrap_or_default();
    if metered.steps.is_empty() {
        let cost = price::cost_usd(reply_model, &tokens, metered.web_searches)?;
        return Some(vec![(reply_model.to_owned(), cost)]);
    }
    let mut costs = Vec::with_capacity(metered.steps.len() + 1);
    for step in &metered.steps {
        let model = step
            .model
            .as_deref()
            .filter(|m| price::basis_of(m).is_some())
            .unwrap_or(reply_model);
        costs.push((model.to_owned(), price::cost_usd(model, &step.tokens, 0)?));
    }
    let searches = price::cost_usd(reply_model, &Tokens::default(), metered.web_searches)?;
    costs.push((reply_model.to_owned(), searches));
    Some(costs)
}

/// The model a reply is priced as: the one the reply names (what served it: a dated
/// version of the alias asked for) when the table lists it, else the one asked for when
/// listed, else whichever has a known provider.
fn priced_as<'a>(replied: Option<&'a str>, asked: Option<&'a str>) -> Option<&'a str> {
    let both = [replied, asked];
    both.iter()
        .flatten()
        .find(|m| price::price_of(m).is_some())
        .or_else(|| both.iter().flatten().find(|m| price::basis_of(m).is_some()))
        .copied()
        .or(asked)
        .or(replied)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(tokens: Tokens) -> Metered {
        Metered {
            tokens: Some(tokens),
            completed: true,
            ..Metered::default()
        }
    }

    #[test]
    fn a_request_repeated_after_a_failure_is_a_retry() {
        let mut log = RunLog::new("http://up".into());
        let t = Tokens {
            input: 10,
            output: 2,
            cache_read: 0,
            cache_creation: 0,
            cache_creation_1h: 0,
        };
        let a = log.begin(Some("claude-sonnet-4-5"), [1; 32]);
        log.end(a, Some("claude-sonnet-4-5"), 200, &ok(t));
        // The same request again after a success is no retry (a judge's second vote).
        let b = log.begin(Some("claude-sonnet-4-5"), [1; 32]);
        log.end(b, Some("claude-sonnet-4-5"), 500, &Metered::default());
        // A retry whose reply is cut before its end: failed too.
        let c = log.begin(Some("claude-sonnet-4-5"), [1; 32]);
        let cut = Metered {
            completed: false,
            ..ok(t)
        };
        log.end(c, Some("claude-sonnet-4-5"), 200, &cut);
        let d = log.begin(Some("claude-sonnet-4-5"), [2; 32]);
        log.end(d, Some("claude-sonnet-4-5"), 200, &ok(t));
        let tr = &log.traffic;
        assert_eq!((tr.requests, tr.retries, tr.failed), (4, 1, 2));
        assert_eq!(tr.input_tokens, 30);
        assert_eq!(tr.models, ["claude-sonnet-4-5"]);
        assert!(tr.cost_usd.is_some());
        let e = log.begin(Some("fake-model"), [3; 32]);
        log.end(e, Some("fake-model"), 200, &ok(t));
        assert_eq!(log.traffic.cost_usd, None, "an unpriced model: tokens only");
        let f = log.begin(None, [4; 32]);
        log.end(
            f,
            None,
            200,
            &Metered {
                completed: true,
                ..Metered::default()
            },
        );
        assert_eq!(log.traffic.unmetered, 1);
        // Each request is listed with its model, status, tokens and time.
        let listed: Vec<String> = log
            .traffic
            .request_log
            .iter()
            .map(|r| {
                format!(
                    "{} {} {:?} failed={} in={}",
                    r.index,
                    r.model.as_deref().unwrap_or("-"),
                    r.status,
                    r.failed,
                    r.input_tokens
                )
            })
            .collect();
        assert_eq!(
            listed,
            [
                "1 claude-sonnet-4-5 Some(200) failed=false in=10",
                "2 claude-sonnet-4-5 Some(500) failed=true in=0",
                "3 claude-sonnet-4-5 Some(200) failed=true in=10",
                "4 claude-sonnet-4-5 Some(200) failed=false in=10",
                "5 fake-model Some(200) failed=false in=10",
                "6 - Some(200) failed=false in=0",
            ]
        );
        assert!(
            log.traffic
                .request_log
                .iter()
                .all(|r| r.duration_ms.is_some())
        );
    }

    #[test]
    fn the_request_list_is_bounded_and_a_request_without_reply_is_failed() {
        let mut log = RunLog::new("http://up".into());
        let first = log.begin(Some("m"), [0; 32]);
        log.failed(first);
        for i in 1..(MAX_REQUESTS_LISTED + 5) {
            let n = log.begin(Some("m"), [1; 32]);
            log.end(n, Some("m"), 200, &ok(Tokens::default()));
            assert_eq!(n, i);
        }
        let t = &log.traffic;
        assert_eq!(t.requests as usize, MAX_REQUESTS_LISTED + 5);
        assert_eq!(t.request_log.len(), MAX_REQUESTS_LISTED);
        assert_eq!(
            (t.request_log[0].status, t.request_log[0].failed),
            (None, true)
        );
    }

    /// A reply that stopped at the output-token limit is a complete reply, counted apart;
    /// the run's last reply says whether the run ended on one.
    #[test]
    fn an_output_limit_stop_is_counted_apart_and_never_as_failed() {
        let mut log = RunLog::new("http://up".into());
        let t = Tokens {
            input: 10,
            output: 32_000,
            ..Tokens::default()
        };
        let limited = Metered {
            output_limit: true,
            ..ok(t)
        };
        let a = log.begin(Some("claude-sonnet-4-5"), [1; 32]);
        log.end(a, Some("claude-sonnet-4-5"), 200, &limited);
        assert_eq!(log.traffic.failed, 0);
        assert_eq!(log.traffic.output_limited, 1);
        assert!(log.traffic.ended_at_output_limit);
        let b = log.begin(Some("claude-sonnet-4-5"), [2; 32]);
        log.end(b, Some("claude-sonnet-4-5"), 200, &ok(t));
        assert!(
            !log.traffic.ended_at_output_limit,
            "the last reply ended normally"
        );
    }

    /// The reply's dated model is priced when listed; a model not in the table is priced
    /// at its provider's dearest rates and named in `cost_basis`; 1-hour cache writes and
    /// web searches are counted and priced.
    #[test]
    fn costs_say_how_they_were_estimated() {
        let mut log = RunLog::new("http://up".into());
        let t = Tokens {
            input: 1_000,
            output: 100,
            cache_read: 0,
            cache_creation: 2_000,
            cache_creation_1h: 2_000,
        };
        let replied = Metered {
            model: Some("claude-sonnet-4-5-20250929".into()),
            web_searches: 1,
            ..ok(t)
        };
        let a = log.begin(Some("claude-sonnet-4-5"), [1; 32]);
        let (_, cost) = log.end(a, Some("claude-sonnet-4-5"), 200, &replied);
        let want = (1_000.0 * 3.0 + 100.0 * 15.0 + 2_000.0 * 6.0) / 1e6 + 0.01;
        assert!((cost.unwrap() - want).abs() < 1e-12, "{cost:?}");
        assert_eq!(log.traffic.cache_creation_1h_input_tokens, 2_000);
        assert_eq!(log.traffic.web_search_requests, 1);
        assert_eq!(
            log.traffic.cost_basis.as_deref(),
            Some(format!("estimated at {}", price::provenance()).as_str())
        );
        let b = log.begin(Some("claude-3-sonnet-unlisted"), [2; 32]);
        log.end(b, Some("claude-3-sonnet-unlisted"), 200, &ok(t));
        assert!(
            log.traffic.cost_basis.as_deref().is_some_and(|b| b.ends_with(
                "; `claude-3-sonnet-unlisted` is not in the price table: priced at Anthropic's dearest rates"
            )),
            "{:?}",
            log.traffic.cost_basis
        );
        assert_eq!(log.traffic.priced_at_dearest, ["claude-3-sonnet-unlisted"]);
        assert!(log.traffic.cost_usd.unwrap() > want);
    }

    /// Meter = bill for a reply of several billed steps: each step at its own model's
    /// published rates, worked out by hand — the top-level usage alone (the two sampling
    /// steps on Claude Sonnet 4.6, $3 / $15 per million) is $0.0735; the compaction on the
    /// same model and the advisor's step on Claude Opus 4.8 ($5 / $25) make the bill $0.3885.
    #[test]
    fn a_reply_of_several_steps_costs_each_step_at_its_models_rates() {
        let usage = r#"{"input_tokens":12000,"output_tokens":2500,"iterations":[{"type":"compaction","input_tokens":35000,"output_tokens":1000},{"type":"message","model":"claude-sonnet-4-6","input_tokens":5000,"output_tokens":1000},{"type":"advisor_message","model":"claude-opus-4-8","input_tokens":30000,"output_tokens":1800},{"type":"message","model":"claude-sonnet-4-6","input_tokens":7000,"output_tokens":1500}]}"#;
        let mut meter = super::super::meter::ReplyMeter::new(
            super::super::protocol::Protocol::Anthropic,
            false,
        );
        meter.push(
            format!(r#"{{"type":"message","model":"claude-sonnet-4-6","usage":{usage}}}"#)
                .as_bytes(),
        );
        let metered = meter.finish();
        let mut log = RunLog::new("http://up".into());
        let a = log.begin(Some("claude-sonnet-4-6"), [1; 32]);
        let (tokens, cost) = log.end(a, Some("claude-sonnet-4-6"), 200, &metered);
        let top_level: f64 = (12_000.0 * 3.0 + 2_500.0 * 15.0) / 1e6;
        let compaction: f64 = (35_000.0 * 3.0 + 1_000.0 * 15.0) / 1e6;
        let advisor: f64 = (30_000.0 * 5.0 + 1_800.0 * 25.0) / 1e6;
        let billed = top_level + compaction + advisor;
        assert!((top_level - 0.0735).abs() < 1e-12 && (billed - 0.3885).abs() < 1e-12);
        let cost = cost.unwrap();
        assert!(
            (cost - billed).abs() < 1e-12,
            "metered {cost}, billed {billed}"
        );
        assert_eq!(tokens.total(), 12_000 + 2_500 + 36_000 + 31_800);
        assert_eq!(log.traffic.models, ["claude-sonnet-4-6", "claude-opus-4-8"]);
        // The ledger then refuses what `--max-cost 0.10` does not cover.
        let mut ledger = super::super::budget::Ledger::new(super::super::budget::Limits {
            max_cost_usd: Some(0.10),
            max_tokens: None,
        });
        ledger.add(&tokens, Some(cost));
        assert!(ledger.admit(Estimate::default()).is_err());
    }
}
