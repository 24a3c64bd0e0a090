//! What a model request cost at list prices: a table of the providers' published prices per
//! model, in USD per million tokens, and the rule that finds a model's row.
//!
//! **Source and date.** Standard (not batch, not priority, not regional) list prices, as the
//! providers publish them, checked on [`PRICES_CHECKED`]:
//! - Anthropic: <https://platform.claude.com/docs/en/about-claude/pricing> ("Model pricing":
//!   base input, 5-minute and 1-hour cache writes, cache hits, output; "Long context
//!   pricing"; "Web search tool": $10 per 1,000 searches) and each model's overview page;
//! - OpenAI: <https://platform.openai.com/docs/pricing> (Standard tier: input, cached input,
//!   output; OpenAI charges no cache-write premium, so a cache write is priced as input).
//!   Models OpenAI no longer lists there (`o1`, `o3-mini`, `gpt-4o`) keep their last
//!   published price;
//! - Google: <https://ai.google.dev/gemini-api/docs/pricing> (Paid tier; Gemini Pro's rates
//!   for prompts over 200k tokens are its `long_prompt` rates).
//!
//! **Matching.** A model is found by its exact name, or else by its dated family: its name
//! without one date or version suffix (`claude-sonnet-4-5-20250929` is `claude-sonnet-4-5`,
//! `o3-mini-2025-01-31` is `o3-mini`, `gpt-4o-mini-2024-07-18` is `gpt-4o-mini`, also
//! `-latest`, `-preview-06-05`, `@20250929`, `-002`). Never by a shorter prefix: `o3-mini`
//! is not `o3`, `gpt-5-codex` is not `gpt-5` — each is a model of its own, with its own
//! row. A provider prefix (`anthropic/`, `openai/`, `models/`) is ignored.
//!
//! **A model not in the table** is priced at its provider's dearest rates — for each kind of
//! token, the highest rate any of the provider's models in the table charges — when its name
//! says which provider it is (`claude-…`: Anthropic; `gpt-…`, `o1…`–`o9…`, `chatgpt-…`,
//! `codex-…`: OpenAI; `gemini-…`: Google): an upper bound, never an under-count. A model of
//! no known provider (a local model, a scripted `fake-model`) has no price: it is metered
//! in tokens only, and with `--max-cost` the gateway refuses its requests
//! ([`super::budget::Refusal::Unpriced`]), since nothing could bound their cost.
//!
//! Every cost is an estimate: the providers bill what their own meters say, with discounts,
//! regional premiums and tiers this table does not hold. `docs/agents.md` shows the table.

use super::meter::Tokens;

/// The day the prices were last checked against the providers' pages (ISO 8601).
pub const PRICES_CHECKED: &str = "2026-11-27";

/// Anthropic's web search tool, USD per search ($10 per 1,000;
/// `usage.server_tool_use.web_search_requests`). Web fetches cost only their tokens.
pub const ANTHROPIC_WEB_SEARCH_USD: f64 = 10.0 / 1_000.0;

/// Whose model it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Provider {
    /// Anthropic's Claude models.
    Anthropic,
    /// OpenAI's GPT and o-series models.
    OpenAi,
    /// Google's Gemini models.
    Google,
}

impl Provider {
    /// `Anthropic`, `OpenAI`, `Google`.
    pub fn name(self) -> &'static str {
        match self {
            Provider::Anthropic => "Anthropic",
            Provider::OpenAi => "OpenAI",
            Provider::Google => "Google",
        }
    }

    /// The provider a model's name says it is of (see the module docs), if any.
    pub fn of_model(model: &str) -> Option<Provider> {
        let name = bare_name(model);
        let o_series = name.strip_prefix('o').is_some_and(|rest| {
            rest.starts_with(|c: char| c.is_ascii_digit())
                && rest
                    .trim_start_matches(|c: char| c.is_ascii_digit())
                    .chars()
                    .next()
                    .is_none_or(|c| c == '-')
        });
        if name.starts_with("claude") {
            Some(Provider::Anthropic)
        } else if name.starts_with("gpt-")
            || name.starts_with("chatgpt-")
            || name.starts_with("codex-")
            || o_series
        {
            Some(Provider::OpenAi)
        } else if name.starts_with("gemini") {
            Some(Provider::Google)
        } else {
            None
        }
    }
}

/// Rates, USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rates {
    /// Input tokens (not cached).
    pub input: f64,
    /// Output tokens (reasoning included).
    pub output: f64,
    /// Cache reads (hits).
    pub cache_read: f64,
    /// Cache writes: Anthropic's 5-minute cache; the input rate elsewhere.
    pub cache_write: f64,
    /// Anthropic's 1-hour cache writes (`cache_control: {ttl: "1h"}`); the input rate
    /// elsewhere.
    pub cache_write_1h: f64,
}

/// One model's list prices.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    /// The model's name without a date (`claude-sonnet-4-5`, `o3-mini`).
    pub model: &'static str,
    /// Other names of the same model (`claude-sonnet-4-0`).
    pub aliases: &'static [&'static str],
    /// Whose model it is.
    pub provider: Provider,
    /// Its rates.
    pub rates: Rates,
    /// Rates for a request whose prompt (input and cache, tokens) is over the first number:
    /// every token of that request is billed at them.
    pub long_prompt: Option<(u64, Rates)>,
}

impl Price {
    /// The rates for a request whose prompt is `prompt` tokens.
    pub fn rates_for(&self, prompt: u64) -> Rates {
        match self.long_prompt {
            Some((above, rates)) if prompt > above => rates,
            _ => self.rates,
        }
    }
}

/// Anthropic's rates: cache writes 1.25× (5 minutes) and 2× (1 hour) the input rate.
const fn anthropic(input: f64, output: f64, cache_read: f64) -> Rates {
    Rates {
        input,
        output,
        cache_read,
        cache_write: input * 1.25,
        cache_write_1h: input * 2.0,
    }
}

/// OpenAI's and Google's rates: no cache-write premium.
const fn flat(input: f64, output: f64, cache_read: f64) -> Rates {
    Rates {
        input,
        output,
        cache_read,
        cache_write: input,
        cache_write_1h: input,
    }
}

const fn row(model: &'static str, provider: Provider, rates: Rates) -> Price {
    Price {
        model,
        aliases: &[],
        provider,
        rates,
        long_prompt: None,
    }
}

const A: Provider = Provider::Anthropic;
const O: Provider = Provider::OpenAi;
const G: Provider = Provider::Google;

/// The table (see the module docs for its sources and date).
pub const PRICES: &[Price] = &[
    // Anthropic.
    row("claude-fable-5-1", A, anthropic(10.0, 50.0, 0.25)),
    row("claude-fable-5", A, anthropic(10.0, 50.0, 1.0)),
    row("claude-opus-5-5", A, anthropic(4.0, 20.0, 0.20)),
    row("claude-opus-5", A, anthropic(5.0, 25.0, 0.50)),
    row("claude-opus-4-8", A, anthropic(5.0, 25.0, 0.50)),
    row("claude-opus-4-7", A, anthropic(5.0, 25.0, 0.50)),
    row("claude-opus-4-6", A, anthropic(5.0, 25.0, 0.50)),
    row("claude-opus-4-5", A, anthropic(5.0, 25.0, 0.50)),
    row("claude-opus-4-1", A, anthropic(15.0, 75.0, 1.50)),
    Price {
        aliases: &["claude-opus-4-0"],
        ..row("claude-opus-4", A, anthropic(15.0, 75.0, 1.50))
    },
    row("claude-3-opus", A, anthropic(15.0, 75.0, 1.50)),
    row("claude-sonnet-5-5", A, anthropic(2.0, 10.0, 0.10)),
    row("claude-sonnet-5", A, anthropic(2.0, 10.0, 0.20)),
    row("claude-sonnet-4-6", A, anthropic(3.0, 15.0, 0.30)),
    Price {
        long_prompt: Some((200_000, anthropic(6.0, 22.50, 0.60))),
        ..row("claude-sonnet-4-5", A, anthropic(3.0, 15.0, 0.30))
    },
    Price {
        aliases: &["claude-sonnet-4-0"],
        long_prompt: Some((200_000, anthropic(6.0, 22.50, 0.60))),
        ..row("claude-sonnet-4", A, anthropic(3.0, 15.0, 0.30))
    },
    row("claude-3-7-sonnet", A, anthropic(3.0, 15.0, 0.30)),
    row("claude-3-5-sonnet", A, anthropic(3.0, 15.0, 0.30)),
    Price {
        long_prompt: Some((100_000, anthropic(0.50, 2.50, 0.05))),
        ..row("claude-haiku-5-5", A, anthropic(0.10, 0.50, 0.01))
    },
    row("claude-haiku-4-5", A, anthropic(1.0, 5.0, 0.10)),
    row("claude-3-5-haiku", A, anthropic(0.80, 4.0, 0.08)),
    // Haiku 3's 5-minute cache writes are listed at $0.30, not 1.25 times its input rate.
    row(
        "claude-3-haiku",
        A,
        Rates {
            cache_write: 0.30,
            ..anthropic(0.25, 1.25, 0.03)
        },
    ),
    // OpenAI.
    row("gpt-5.4", O, flat(2.50, 15.0, 0.25)),
    row("gpt-5.4-mini", O, flat(0.75, 4.50, 0.075)),
    row("gpt-5.3-codex", O, flat(1.75, 14.0, 0.175)),
    row("gpt-5.2", O, flat(1.75, 14.0, 0.175)),
    row("gpt-5.2-codex", O, flat(1.75, 14.0, 0.175)),
    row("gpt-5.1", O, flat(1.25, 10.0, 0.125)),
    row("gpt-5.1-codex", O, flat(1.25, 10.0, 0.125)),
    Price {
        aliases: &["gpt-5-chat"],
        ..row("gpt-5", O, flat(1.25, 10.0, 0.125))
    },
    row("gpt-5-codex", O, flat(1.25, 10.0, 0.125)),
    row("gpt-5-mini", O, flat(0.25, 2.0, 0.025)),
    row("gpt-5-nano", O, flat(0.05, 0.40, 0.005)),
    row("gpt-4.1", O, flat(2.0, 8.0, 0.50)),
    row("gpt-4.1-mini", O, flat(0.40, 1.60, 0.10)),
    row("gpt-4.1-nano", O, flat(0.10, 0.40, 0.025)),
    row("gpt-4o", O, flat(2.50, 10.0, 1.25)),
    row("gpt-4o-mini", O, flat(0.15, 0.60, 0.075)),
    row("o1", O, flat(15.0, 60.0, 7.50)),
    row("o3", O, flat(2.0, 8.0, 0.50)),
    row("o3-mini", O, flat(1.10, 4.40, 0.55)),
    row("o4-mini", O, flat(1.10, 4.40, 0.275)),
    row("codex-mini", O, flat(1.50, 6.0, 0.375)),
    // Google.
    Price {
        long_prompt: Some((200_000, flat(4.0, 18.0, 0.40))),
        ..row("gemini-3-pro", G, flat(2.0, 12.0, 0.20))
    },
    Price {
        long_prompt: Some((200_000, flat(2.50, 15.0, 0.625))),
        ..row("gemini-2.5-pro", G, flat(1.25, 10.0, 0.31))
    },
    row("gemini-2.5-flash", G, flat(0.30, 2.50, 0.075)),
    row("gemini-2.5-flash-lite", G, flat(0.10, 0.40, 0.025)),
    row("gemini-2.0-flash", G, flat(0.10, 0.40, 0.025)),
];

/// `model` without a provider prefix (`anthropic/`, `models/`), lowercase.
fn bare_name(model: &str) -> String {
    model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .trim()
        .to_ascii_lowercase()
}

/// `name` without one date or version suffix: `-20250929`, `-2025-01-31`, `@20250929`,
/// `-latest`, `-preview`, `-preview-06-05`, `-002`.
fn undated(name: &str) -> Option<&str> {
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    if let Some((family, date)) = name.rsplit_once('@')
        && digits(date, 8)
    {
        return Some(family);
    }
    if let Some(family) = name.strip_suffix("-latest") {
        return Some(family);
    }
    // `-YYYY-MM-DD`, `-preview-MM-DD`.
    let parts: Vec<&str> = name.rsplitn(4, '-').collect();
    if let [d, m, y, family] = parts[..]
        && digits(d, 2)
        && digits(m, 2)
        && digits(y, 4)
    {
        return Some(family);
    }
    if let [d, m, rest, ..] = parts[..]
        && digits(d, 2)
        && digits(m, 2)
        && rest == "preview"
    {
        return name.strip_suffix(&format!("-preview-{m}-{d}"));
    }
    let (family, last) = name.rsplit_once('-')?;
    (digits(last, 8) || digits(last, 3) || last == "preview").then_some(family)
}

/// The row of `model`: its exact name (or an alias), else its dated family (see the module
/// docs). `None` for a model not in the table.
pub fn price_of(model: &str) -> Option<&'static Price> {
    let name = bare_name(model);
    let find = |n: &str| {
        PRICES
            .iter()
            .find(|p| p.model == n || p.aliases.contains(&n))
    };
    find(&name).or_else(|| undated(&name).and_then(find))
}

/// How a request's cost was found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Basis {
    /// From the model's row.
    Listed(&'static Price),
    /// The model is not in the table: at its provider's dearest rates.
    Dearest(Provider),
}

/// A request's cost at list prices: USD, and how it was found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cost {
    /// USD.
    pub usd: f64,
    /// How it was priced.
    pub basis: Basis,
}

/// A provider's dearest rates: for each kind of token, the highest rate among its models
/// (their long-prompt rates included).
pub fn dearest(provider: Provider) -> Rates {
    let mut top = flat(0.0, 0.0, 0.0);
    let rows = PRICES.iter().filter(|p| p.provider == provider);
    for rates in rows.flat_map(|p| std::iter::once(p.rates).chain(p.long_prompt.map(|(_, r)| r))) {
        top.input = top.input.max(rates.input);
        top.output = top.output.max(rates.output);
        top.cache_read = top.cache_read.max(rates.cache_read);
        top.cache_write = top.cache_write.max(rates.cache_write);
        top.cache_write_1h = top.cache_write_1h.max(rates.cache_write_1h);
    }
    top
}

/// How `model` is priced: its row, else its provider's dearest rates; `None` for a model of
/// no known provider.
pub fn basis_of(model: &str) -> Option<Basis> {
    price_of(model)
        .map(Basis::Listed)
        .or_else(|| Provider::of_model(model).map(Basis::Dearest))
}

impl Basis {
    /// The rates for a request whose prompt is `prompt` tokens.
    pub fn rates_for(&self, prompt: u64) -> Rates {
        match self {
            Basis::Listed(p) => p.rates_for(prompt),
            Basis::Dearest(provider) => dearest(*provider),
        }
    }

    /// Whose model it is.
    pub fn provider(&self) -> Provider {
        match self {
            Basis::Listed(p) => p.provider,
            Basis::Dearest(provider) => *provider,
        }
    }
}

/// What one request of `model` that used `tokens` and `web_searches` server-side web
/// searches cost, in USD; `None` for a model of no known provider. Anthropic's web searches
/// are [`ANTHROPIC_WEB_SEARCH_USD`] each; other providers' server-side tools are not priced.
pub fn cost_usd(model: &str, tokens: &Tokens, web_searches: u64) -> Option<Cost> {
    let basis = basis_of(model)?;
    let r = basis.rates_for(tokens.prompt());
    let per = |n: u64, rate: f64| n as f64 * rate / 1_000_000.0;
    let one_hour = tokens.cache_creation_1h.min(tokens.cache_creation);
    let searches = match basis.provider() {
        Provider::Anthropic => web_searches as f64 * ANTHROPIC_WEB_SEARCH_USD,
        Provider::OpenAi | Provider::Google => 0.0,
    };
    Some(Cost {
        usd: per(tokens.input, r.input)
            + per(tokens.output, r.output)
            + per(tokens.cache_read, r.cache_read)
            + per(tokens.cache_creation - one_hour, r.cache_write)
            + per(one_hour, r.cache_write_1h)
            + searches,
        basis,
    })
}

/// The table as Markdown, for `docs/agents.md`.
pub fn docs_table() -> String {
    let mut rows: Vec<&Price> = PRICES.iter().collect();
    rows.sort_by(|a, b| (a.provider, a.model).cmp(&(b.provider, b.model)));
    let mut out = String::from(
        "| model (and its dated versions) | input | output | cache read | cache write (5 min) | cache write (1 h) |\n|---|---|---|---|---|---|\n",
    );
    let line = |name: String, r: &Rates| {
        format!(
            "| {name} | {} | {} | {} | {} | {} |\n",
            r.input, r.output, r.cache_read, r.cache_write, r.cache_write_1h
        )
    };
    for p in rows {
        let mut name = format!("`{}`", p.model);
        for alias in p.aliases {
            name.push_str(&format!(", `{alias}`"));
        }
        out.push_str(&line(name, &p.rates));
        if let Some((above, rates)) = &p.long_prompt {
            out.push_str(&line(
                format!("`{}`, prompt over {}k tokens", p.model, above / 1000),
                rates,
            ));
        }
    }
    for provider in [Provider::Anthropic, Provider::OpenAi, Provider::Google] {
        out.push_str(&line(
            format!("any other {} model (its dearest rates)", provider.name()),
            &dearest(provider),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(input: u64, output: u64, cache_read: u64, cache_creation: u64) -> Tokens {
        Tokens {
            input,
            output,
            cache_read,
            cache_creation,
            cache_creation_1h: 0,
        }
    }

    /// A model is its exact row or its dated family, never a shorter prefix that names
    /// another model: `o3-mini-2025-01-31` was priced as `o3` (+82 %).
    #[test]
    fn a_model_is_its_own_row_or_its_dated_family_never_a_shorter_prefix() {
        let found = |m: &str| price_of(m).map(|p| p.model);
        for (model, row) in [
            ("o3-mini-2025-01-31", Some("o3-mini")),
            ("o3-2025-04-16", Some("o3")),
            ("o3", Some("o3")),
            ("gpt-4o-mini-2024-07-18", Some("gpt-4o-mini")),
            ("claude-sonnet-4-5-20250929", Some("claude-sonnet-4-5")),
            ("claude-sonnet-4-20250514", Some("claude-sonnet-4")),
            ("claude-sonnet-4-0", Some("claude-sonnet-4")),
            ("claude-opus-4-1-20250805", Some("claude-opus-4-1")),
            ("claude-3-5-haiku-latest", Some("claude-3-5-haiku")),
            ("claude-sonnet-4-5@20250929", Some("claude-sonnet-4-5")),
            (
                "anthropic/claude-haiku-4-5-20251001",
                Some("claude-haiku-4-5"),
            ),
            ("models/gemini-2.5-flash", Some("gemini-2.5-flash")),
            ("gemini-2.5-pro-preview-06-05", Some("gemini-2.5-pro")),
            ("gemini-3-pro-preview", Some("gemini-3-pro")),
            ("gpt-5-codex", Some("gpt-5-codex")),
            ("gpt-5-chat-latest", Some("gpt-5")),
            // Prefixes of listed models that are models of their own: not in the table.
            ("o3-pro", None),
            ("o3-mini-high", None),
            ("gpt-5-pro", None),
            ("claude-opus-4-9", None),
            ("gpt-4o-2024-08-06-extra", None),
            ("fake-model", None),
        ] {
            assert_eq!(found(model), row, "{model}");
        }
        let o3_mini = cost_usd("o3-mini-2025-01-31", &tokens(1_000_000, 0, 0, 0), 0).unwrap();
        assert!((o3_mini.usd - 1.10).abs() < 1e-9, "{o3_mini:?}");
    }

    /// A model missing from the table is priced at its provider's dearest rates (an upper
    /// bound); a model of no known provider is not priced at all.
    #[test]
    fn an_unknown_model_costs_its_providers_dearest_rates() {
        let t = tokens(1_000_000, 1_000_000, 0, 0);
        let opus3 = cost_usd("claude-3-opus-20240229", &t, 0).unwrap();
        assert_eq!(
            opus3.basis,
            Basis::Listed(price_of("claude-3-opus").unwrap())
        );
        let future = cost_usd("claude-nimbus-9", &t, 0).unwrap();
        assert_eq!(future.basis, Basis::Dearest(Provider::Anthropic));
        assert!((future.usd - (15.0 + 75.0)).abs() < 1e-9, "{future:?}");
        for model in PRICES.iter().filter(|p| p.provider == Provider::Anthropic) {
            let listed = cost_usd(model.model, &t, 0).unwrap().usd;
            assert!(listed <= future.usd, "{}: {listed}", model.model);
        }
        let gpt = cost_usd("gpt-9-turbo", &t, 0).unwrap();
        assert_eq!(gpt.basis, Basis::Dearest(Provider::OpenAi));
        assert!((gpt.usd - (15.0 + 60.0)).abs() < 1e-9, "{gpt:?}");
        assert_eq!(
            cost_usd("o7-mini", &t, 0).map(|c| c.basis),
            Some(Basis::Dearest(Provider::OpenAi))
        );
        assert_eq!(
            cost_usd("gemini-9-ultra", &t, 0).map(|c| c.basis),
            Some(Basis::Dearest(Provider::Google))
        );
        for unknown in ["fake-model", "qwen3-coder-plus", "llama-3.1-70b", "omni-1"] {
            assert_eq!(cost_usd(unknown, &t, 0), None, "{unknown}");
        }
    }

    /// Anthropic bills 1-hour cache writes at twice the input rate, 5-minute ones at 1.25
    /// times; web searches at $10 per 1,000.
    #[test]
    fn one_hour_cache_writes_and_web_searches_are_priced() {
        let mut t = tokens(100, 10, 1_000, 2_000);
        t.cache_creation_1h = 1_500;
        let cost = cost_usd("claude-sonnet-4-5-20250929", &t, 3).unwrap().usd;
        let want = (100.0 * 3.0 + 10.0 * 15.0 + 1_000.0 * 0.30 + 500.0 * 3.75 + 1_500.0 * 6.0)
            / 1e6
            + 3.0 * 0.01;
        assert!((cost - want).abs() < 1e-12, "{cost} != {want}");
        // OpenAI has no cache-write premium and its server tools are not priced here.
        let mut o = tokens(0, 0, 0, 1_000_000);
        o.cache_creation_1h = 1_000_000;
        assert!((cost_usd("gpt-4.1", &o, 5).unwrap().usd - 2.0).abs() < 1e-9);
    }

    /// A request whose prompt is over a model's long-prompt threshold is billed at its
    /// long-prompt rates, every token of it.
    #[test]
    fn a_long_prompt_is_billed_at_its_tier() {
        let short = cost_usd("gemini-2.5-pro", &tokens(200_000, 1_000, 0, 0), 0).unwrap();
        assert!((short.usd - (0.25 + 0.01)).abs() < 1e-9, "{short:?}");
        let long = cost_usd("gemini-2.5-pro", &tokens(190_000, 1_000, 20_000, 0), 0).unwrap();
        let want = (190_000.0 * 2.5 + 1_000.0 * 15.0 + 20_000.0 * 0.625) / 1e6;
        assert!((long.usd - want).abs() < 1e-9, "{long:?}");
    }

    #[test]
    fn the_providers_are_told_by_name() {
        for (model, provider) in [
            ("claude-x", Some(Provider::Anthropic)),
            ("openai/gpt-x", Some(Provider::OpenAi)),
            ("o1", Some(Provider::OpenAi)),
            ("o4-mini-deep", Some(Provider::OpenAi)),
            ("codex-mini-latest", Some(Provider::OpenAi)),
            ("gemini-exp", Some(Provider::Google)),
            ("ollama", None),
            ("o", None),
            ("oss-20b", None),
        ] {
            assert_eq!(Provider::of_model(model), provider, "{model}");
        }
    }
}
