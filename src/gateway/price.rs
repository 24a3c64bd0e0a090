//! What a model request cost at list prices: a table of the providers' published prices per
//! model, in USD per million tokens, and the rule that finds a model's row.
//!
//! **Source and date.** The table is `prices.json` beside this file: a reduction of LiteLLM's
//! `model_prices_and_context_window.json` (<https://github.com/BerriAI/litellm>, MIT), which
//! tracks the providers' list prices. `scripts/refresh-prices` makes it (the Anthropic,
//! OpenAI, Gemini API and xAI chat models; standard-tier input, output, cache-read and
//! 5-minute and 1-hour cache-write rates; each model's long-context tier, its web search
//! fee per search, its largest output), and the file names the LiteLLM release and the day
//! it was taken ([`provenance`]). Where LiteLLM leaves out a rate the provider publishes, the
//! script adds it and the file says so (`added`).
//!
//! **Matching.** A model is found by its exact name, or else by its dated family: its name
//! without one date or version suffix (`claude-sonnet-4-5-20250929` is `claude-sonnet-4-5`,
//! `o3-mini-2025-01-31` is `o3-mini`, also `-latest`, `-preview-06-05`, `@20250929`, `-002`).
//! Never by a shorter prefix: `o3-mini` is not `o3`, `gpt-5-codex` is not `gpt-5` — each is a
//! model of its own, with its own row. A provider prefix (`anthropic/`, `openai/`,
//! `models/`) is ignored.
//!
//! **A model not in the table** is priced at its provider's dearest rates — for each kind of
//! token, the highest rate any of the provider's models in the table charges — when its name
//! says which provider it is (`claude-…`: Anthropic; `gpt-…`, `o1…`–`o9…`, `chatgpt-…`,
//! `codex-…`: OpenAI; `gemini-…`: Google; `grok-…`: xAI): an upper bound, never an
//! under-count. A model of no known provider (a local model, a scripted `fake-model`) has no
//! price: it is metered in tokens only, and with `--max-cost` the gateway refuses its
//! requests ([`super::budget::Refusal::Unpriced`]), since nothing could bound their cost.
//!
//! Every cost is an estimate: the providers bill what their own meters say, with discounts,
//! regional premiums and tiers this table does not hold. `docs/agents.md` shows the table.

use std::sync::OnceLock;

use super::meter::Tokens;

/// Whose model it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Provider {
    /// Anthropic's Claude models.
    Anthropic,
    /// OpenAI's GPT and o-series models.
    OpenAi,
    /// Google's Gemini models.
    Google,
    /// xAI's Grok models.
    XAi,
}

impl Provider {
    /// Every provider, in the table's order.
    pub const ALL: [Provider; 4] = [
        Provider::Anthropic,
        Provider::OpenAi,
        Provider::Google,
        Provider::XAi,
    ];

    /// `Anthropic`, `OpenAI`, `Google`, `xAI`.
    pub fn name(self) -> &'static str {
        match self {
            Provider::Anthropic => "Anthropic",
            Provider::OpenAi => "OpenAI",
            Provider::Google => "Google",
            Provider::XAi => "xAI",
        }
    }

    /// The provider of `prices.json`'s `provider` field.
    fn of_table(name: &str) -> Option<Provider> {
        match name {
            "anthropic" => Some(Provider::Anthropic),
            "openai" => Some(Provider::OpenAi),
            "google" => Some(Provider::Google),
            "xai" => Some(Provider::XAi),
            _ => None,
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
        } else if name.starts_with("grok") {
            Some(Provider::XAi)
        } else {
            None
        }
    }
}

/// Rates, USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, serde::Deserialize)]
pub struct Rates {
    /// Input tokens (not cached).
    pub input: f64,
    /// Output tokens (reasoning included).
    pub output: f64,
    /// Cache reads (hits).
    pub cache_read: f64,
    /// Cache writes: Anthropic's 5-minute cache; the input rate where a provider charges no
    /// write premium.
    pub cache_write: f64,
    /// Anthropic's 1-hour cache writes (`cache_control: {ttl: "1h"}`); the 5-minute rate
    /// elsewhere.
    pub cache_write_1h: f64,
}

/// One model's list prices.
#[derive(Debug, Clone, PartialEq)]
pub struct Price {
    /// The model's name as the table lists it (`claude-sonnet-4-5`, `gpt-5.5`).
    pub model: String,
    /// Whose model it is.
    pub provider: Provider,
    /// Its rates.
    pub rates: Rates,
    /// Rates for a request whose prompt (input and cache, tokens) is over the first number:
    /// every token of that request is billed at them.
    pub long_prompt: Option<(u64, Rates)>,
    /// USD per server-side web search, when the table lists a fee.
    pub web_search_usd: Option<f64>,
    /// The most output tokens one reply of the model can hold, when listed.
    pub max_output: Option<u64>,
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

/// `prices.json` as written by `scripts/refresh-prices`.
#[derive(serde::Deserialize)]
struct TableFile {
    litellm_version: String,
    retrieved: String,
    models: std::collections::BTreeMap<String, RowFile>,
}

#[derive(serde::Deserialize)]
struct RowFile {
    provider: String,
    #[serde(flatten)]
    rates: Rates,
    long: Option<LongFile>,
    web_search: Option<f64>,
    max_output: Option<u64>,
}

#[derive(serde::Deserialize)]
struct LongFile {
    above: u64,
    #[serde(flatten)]
    rates: Rates,
}

/// The vendored table.
struct Table {
    provenance: String,
    rows: Vec<Price>,
}

/// The table, read once from the copy of `prices.json` built into the binary; `None` if it
/// could not be read (a test proves it can), and then no model is priced: every request
/// under `--max-cost` is refused rather than priced at nothing.
fn table() -> Option<&'static Table> {
    static TABLE: OnceLock<Option<Table>> = OnceLock::new();
    TABLE
        .get_or_init(|| parse_table(include_str!("prices.json")).ok())
        .as_ref()
}

/// Why the built-in price table could not be read.
#[derive(Debug, thiserror::Error)]
enum TableError {
    /// It is not the table's JSON.
    #[error("the price table is not valid: {0}")]
    Json(#[from] serde_json::Error),
    /// A row names a provider aptitude does not know.
    #[error("{model}: unknown provider `{provider}`")]
    Provider {
        /// The row's model.
        model: String,
        /// Its `provider`.
        provider: String,
    },
}

fn parse_table(text: &str) -> Result<Table, TableError> {
    let file: TableFile = serde_json::from_str(text)?;
    let mut rows = Vec::with_capacity(file.models.len());
    for (model, row) in file.models {
        let Some(provider) = Provider::of_table(&row.provider) else {
            return Err(TableError::Provider {
                model,
                provider: row.provider,
            });
        };
        rows.push(Price {
            model,
            provider,
            rates: row.rates,
            long_prompt: row.long.map(|l| (l.above, l.rates)),
            web_search_usd: row.web_search,
            max_output: row.max_output,
        });
    }
    Ok(Table {
        provenance: format!(
            "LiteLLM {} list prices, taken {}",
            file.litellm_version, file.retrieved
        ),
        rows,
    })
}

/// Every row of the table (none if it could not be read).
pub fn prices() -> &'static [Price] {
    table().map_or(&[], |t| t.rows.as_slice())
}

/// Where the table's prices come from: `LiteLLM 1.110.2 list prices, taken 2026-11-28`.
pub fn provenance() -> &'static str {
    table().map_or("no price table", |t| t.provenance.as_str())
}

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

/// The row of `model`: its exact name, else its dated family (see the module docs). `None`
/// for a model not in the table.
pub fn price_of(model: &str) -> Option<&'static Price> {
    let name = bare_name(model);
    let find = |n: &str| prices().iter().find(|p| p.model == n);
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

/// A provider's dearest prices: for each kind of token, the highest rate among its models
/// (their long-prompt rates included), the highest web search fee and the largest output.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dearest {
    /// The rates.
    pub rates: Rates,
    /// USD per web search.
    pub web_search_usd: f64,
    /// Output tokens of one reply.
    pub max_output: u64,
}

/// `provider`'s dearest prices; `None` when the table holds none of its models.
pub fn dearest(provider: Provider) -> Option<Dearest> {
    static DEAREST: OnceLock<Vec<(Provider, Dearest)>> = OnceLock::new();
    let all = DEAREST.get_or_init(|| {
        Provider::ALL
            .iter()
            .filter_map(|&p| {
                dearest_of(prices().iter().filter(|r| r.provider == p)).map(|d| (p, d))
            })
            .collect()
    });
    all.iter().find(|(p, _)| *p == provider).map(|(_, d)| *d)
}

fn dearest_of<'a>(rows: impl Iterator<Item = &'a Price>) -> Option<Dearest> {
    let mut top: Option<Dearest> = None;
    for row in rows {
        let t = top.get_or_insert(Dearest {
            rates: row.rates,
            web_search_usd: 0.0,
            max_output: 0,
        });
        for r in std::iter::once(row.rates).chain(row.long_prompt.map(|(_, r)| r)) {
            t.rates.input = t.rates.input.max(r.input);
            t.rates.output = t.rates.output.max(r.output);
            t.rates.cache_read = t.rates.cache_read.max(r.cache_read);
            t.rates.cache_write = t.rates.cache_write.max(r.cache_write);
            t.rates.cache_write_1h = t.rates.cache_write_1h.max(r.cache_write_1h);
        }
        t.web_search_usd = t.web_search_usd.max(row.web_search_usd.unwrap_or(0.0));
        t.max_output = t.max_output.max(row.max_output.unwrap_or(0));
    }
    top
}

/// How `model` is priced: its row, else its provider's dearest rates; `None` for a model of
/// no known provider (or of a provider the table holds nothing of).
pub fn basis_of(model: &str) -> Option<Basis> {
    price_of(model).map(Basis::Listed).or_else(|| {
        Provider::of_model(model)
            .filter(|p| dearest(*p).is_some())
            .map(Basis::Dearest)
    })
}

impl Basis {
    /// The rates for a request whose prompt is `prompt` tokens.
    pub fn rates_for(&self, prompt: u64) -> Rates {
        match self {
            Basis::Listed(p) => p.rates_for(prompt),
            Basis::Dearest(provider) => dearest(*provider).map_or(FREE, |d| d.rates),
        }
    }

    /// Whose model it is.
    pub fn provider(&self) -> Provider {
        match self {
            Basis::Listed(p) => p.provider,
            Basis::Dearest(provider) => *provider,
        }
    }

    /// USD per server-side web search: the model's fee, else its provider's dearest.
    pub fn web_search_usd(&self) -> f64 {
        let dearest = || dearest(self.provider()).map_or(0.0, |d| d.web_search_usd);
        match self {
            Basis::Listed(p) => p.web_search_usd.unwrap_or_else(dearest),
            Basis::Dearest(_) => dearest(),
        }
    }

    /// The most output tokens one reply can hold: the model's, else its provider's largest.
    pub fn max_output(&self) -> Option<u64> {
        let dearest = || dearest(self.provider()).map(|d| d.max_output);
        match self {
            Basis::Listed(p) => p.max_output.or_else(dearest),
            Basis::Dearest(_) => dearest(),
        }
    }
}

/// No rates (never used to price: a provider without rows has no basis).
const FREE: Rates = Rates {
    input: 0.0,
    output: 0.0,
    cache_read: 0.0,
    cache_write: 0.0,
    cache_write_1h: 0.0,
};

/// What one request (or one step of a request) of `model` that used `tokens` and
/// `web_searches` server-side web searches cost, in USD; `None` for a model of no known
/// provider. Tokens at the rates of the prompt's size ([`Price::long_prompt`]); searches
/// at [`Basis::web_search_usd`].
pub fn cost_usd(model: &str, tokens: &Tokens, web_searches: u64) -> Option<Cost> {
    let basis = basis_of(model)?;
    let r = basis.rates_for(tokens.prompt());
    let per = |n: u64, rate: f64| n as f64 * rate / 1_000_000.0;
    let one_hour = tokens.cache_creation_1h.min(tokens.cache_creation);
    Some(Cost {
        usd: per(tokens.input, r.input)
            + per(tokens.output, r.output)
            + per(tokens.cache_read, r.cache_read)
            + per(tokens.cache_creation - one_hour, r.cache_write)
            + per(one_hour, r.cache_write_1h)
            + web_searches as f64 * basis.web_search_usd(),
        basis,
    })
}

/// The table as Markdown, for `docs/agents.md`: one row per model (a dated version whose
/// prices are its family's is not repeated), its long-context tier, then each provider's
/// dearest prices.
pub fn docs_table() -> String {
    let mut rows: Vec<&Price> = prices()
        .iter()
        .filter(|p| {
            undated(&p.model)
                .and_then(|family| prices().iter().find(|f| f.model == family))
                .is_none_or(|f| f.rates != p.rates || f.long_prompt != p.long_prompt)
        })
        .collect();
    rows.sort_by(|a, b| (a.provider, &a.model).cmp(&(b.provider, &b.model)));
    let mut out = String::from(
        "| model (and its dated versions) | input | output | cache read | cache write (5 min) | cache write (1 h) | web search (USD each) |\n|---|---|---|---|---|---|---|\n",
    );
    let line = |name: String, r: &Rates, search: Option<f64>| {
        format!(
            "| {name} | {} | {} | {} | {} | {} | {} |\n",
            r.input,
            r.output,
            r.cache_read,
            r.cache_write,
            r.cache_write_1h,
            search.map_or_else(|| "—".to_owned(), |s| s.to_string())
        )
    };
    for p in rows {
        out.push_str(&line(format!("`{}`", p.model), &p.rates, p.web_search_usd));
        if let Some((above, rates)) = &p.long_prompt {
            out.push_str(&line(
                format!("`{}`, prompt over {}k tokens", p.model, above / 1000),
                rates,
                p.web_search_usd,
            ));
        }
    }
    for provider in Provider::ALL {
        if let Some(d) = dearest(provider) {
            out.push_str(&line(
                format!("any other {} model (its dearest rates)", provider.name()),
                &d.rates,
                Some(d.web_search_usd),
            ));
        }
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

    /// USD of a million input and a million output tokens of `model`, at its short-prompt
    /// rates (a thousand requests of a thousand each).
    fn million_each(model: &str) -> f64 {
        cost_usd(model, &tokens(1_000, 1_000, 0, 0), 0).map_or(f64::NAN, |c| c.usd * 1_000.0)
    }

    fn close(got: f64, want: f64) -> bool {
        (got - want).abs() < 1e-9
    }

    /// The vendored file reads, says where it comes from, and holds every provider.
    #[test]
    fn the_vendored_table_reads_and_names_its_source() {
        let text = include_str!("prices.json");
        let parsed = parse_table(text).map(|t| t.rows.len());
        assert!(parsed.as_ref().is_ok_and(|n| *n > 100), "{parsed:?}");
        assert!(provenance().starts_with("LiteLLM "), "{}", provenance());
        for provider in Provider::ALL {
            assert!(dearest(provider).is_some(), "{provider:?} has no rows");
        }
        let file: serde_json::Value = serde_json::from_str(text).unwrap();
        assert!(file["source"].as_str().unwrap().contains("BerriAI/litellm"));
        assert!(file["licence"].as_str().unwrap().starts_with("MIT"));
        // A table that can not be read prices nothing, so `--max-cost` refuses.
        assert!(parse_table("{}").is_err());
    }

    /// The models the pinned CLIs ask for when a test names none are priced from their own
    /// rows, never at the dearest: Codex 0.169.0 (`gpt-5.5`; `gpt-5.1-codex-max` for its
    /// Codex profiles), Gemini CLI (`gemini-2.5-pro`, `gemini-3-flash-preview`,
    /// `gemini-3.1-pro-preview`, `gemini-2.5-flash`: `DEFAULT_GEMINI_MODEL` and its preview
    /// and flash fallbacks in @google/gemini-cli-core), Claude Code (its aliases `sonnet`,
    /// `opus`, `haiku` resolve to these).
    #[test]
    fn every_default_model_of_a_pinned_cli_is_in_the_table() {
        let defaults = [
            "gpt-5.5",
            "gpt-5.1-codex-max",
            "gpt-5-codex",
            "gemini-2.5-pro",
            "gemini-2.5-flash",
            "gemini-3-flash-preview",
            "gemini-3.1-pro-preview",
            "claude-sonnet-4-6",
            "claude-sonnet-4-5-20250929",
            "claude-opus-4-6",
            "claude-opus-4-8",
            "claude-haiku-4-5-20251001",
        ];
        let missing: Vec<&str> = defaults
            .into_iter()
            .filter(|m| price_of(m).is_none())
            .collect();
        assert!(
            missing.is_empty(),
            "not in src/gateway/prices.json (run scripts/refresh-prices): {missing:?}"
        );
    }

    /// Rows hold the providers' published prices (USD per million tokens, from their
    /// pricing pages, written here by hand): the three models were priced 2.4×,
    /// 9.3× and 6.7× over at the dearest rates.
    #[test]
    fn rows_hold_the_published_prices() {
        for (model, input_plus_output) in [
            // Anthropic: Sonnet 4.5 $3 / $15, Opus 4.6 $5 / $25, Haiku 4.5 $1 / $5.
            ("claude-sonnet-4-5-20250929", 3.0 + 15.0),
            ("claude-opus-4-6", 5.0 + 25.0),
            ("claude-haiku-4-5", 1.0 + 5.0),
            // OpenAI: GPT-5.5 $5 / $30, GPT-5.1-Codex-Max $1.25 / $10, o3-mini $1.10 / $4.40.
            ("gpt-5.5", 5.0 + 30.0),
            ("gpt-5.1-codex-max", 1.25 + 10.0),
            ("o3-mini-2025-01-31", 1.10 + 4.40),
            // Google: Gemini 3 Flash Preview $0.50 / $3, Gemini 2.5 Pro $1.25 / $10.
            ("gemini-3-flash-preview", 0.50 + 3.0),
            ("models/gemini-2.5-pro", 1.25 + 10.0),
        ] {
            let got = million_each(model);
            assert!(close(got, input_plus_output), "{model}: {got}");
        }
        // Anthropic's cache: reads 0.1×, 5-minute writes 1.25×, 1-hour writes 2× input.
        let mut t = tokens(0, 0, 1_000, 2_000);
        t.cache_creation_1h = 1_000;
        let cache = cost_usd("claude-sonnet-4-5", &t, 0).unwrap().usd * 1_000.0;
        assert!(close(cache, 0.30 + 3.75 + 6.0), "{cache}");
    }

    /// A model is its own row or its dated family, never a shorter prefix that names
    /// another model: `o3-mini-2025-01-31` was priced as `o3` (+82 %).
    #[test]
    fn a_model_is_its_own_row_or_its_dated_family_never_a_shorter_prefix() {
        assert_eq!(undated("o3-mini-2025-01-31"), Some("o3-mini"));
        assert_eq!(
            undated("claude-sonnet-4-5@20250929"),
            Some("claude-sonnet-4-5")
        );
        assert_eq!(
            undated("gemini-2.5-pro-preview-06-05"),
            Some("gemini-2.5-pro")
        );
        assert_eq!(undated("claude-3-5-haiku-latest"), Some("claude-3-5-haiku"));
        assert_eq!(undated("gpt-5-codex"), None);
        // A dated name the table does not list is its family's.
        assert!(close(
            million_each("claude-sonnet-4-5@20250929"),
            million_each("claude-sonnet-4-5")
        ));
        assert!(close(
            million_each("anthropic/claude-haiku-4-5-20251001"),
            1.0 + 5.0
        ));
        // `gpt-5-codex` is not `gpt-5`'s dated version; `o3-mini-high` is not `o3-mini`.
        assert_eq!(
            price_of("gpt-5-codex").map(|p| p.model.as_str()),
            Some("gpt-5-codex")
        );
        assert_eq!(price_of("o3-mini-high"), None);
        assert_eq!(price_of("gpt-4o-2024-08-06-extra"), None);
        assert_eq!(price_of("fake-model"), None);
    }

    /// A model missing from the table is priced at its provider's dearest rates (an upper
    /// bound); a model of no known provider is not priced at all.
    #[test]
    fn an_unknown_model_costs_its_providers_dearest_rates() {
        let t = tokens(1_000_000, 1_000_000, 0, 0);
        for (model, provider) in [
            ("claude-nimbus-9", Provider::Anthropic),
            ("gpt-9-turbo", Provider::OpenAi),
            ("o7-mini", Provider::OpenAi),
            ("gemini-9-ultra", Provider::Google),
            ("grok-9", Provider::XAi),
        ] {
            let future = cost_usd(model, &t, 0).unwrap();
            assert_eq!(future.basis, Basis::Dearest(provider), "{model}");
            for row in prices().iter().filter(|p| p.provider == provider) {
                let listed = cost_usd(&row.model, &t, 0).unwrap().usd;
                assert!(
                    listed <= future.usd,
                    "{}: {listed} > {}",
                    row.model,
                    future.usd
                );
            }
        }
        for unknown in ["fake-model", "qwen3-coder-plus", "llama-3.1-70b", "omni-1"] {
            assert_eq!(cost_usd(unknown, &t, 0), None, "{unknown}");
        }
    }

    /// Web searches are billed per search at the model's fee: Anthropic's and OpenAI's
    /// web search tools are $10 per 1,000 searches.
    #[test]
    fn web_searches_are_priced_per_search() {
        let none = tokens(0, 0, 0, 0);
        for model in ["claude-sonnet-4-5", "gpt-5.5"] {
            let fee = cost_usd(model, &none, 3).unwrap().usd;
            assert!(close(fee, 3.0 * 10.0 / 1_000.0), "{model}: {fee}");
        }
        // OpenAI has no cache-write premium.
        let mut o = tokens(0, 0, 0, 1_000);
        o.cache_creation_1h = 1_000;
        assert!(close(
            cost_usd("gpt-5.5", &o, 0).unwrap().usd,
            5.0 / 1_000.0
        ));
    }

    /// A request whose prompt is over a model's long-prompt threshold is billed at its
    /// long-prompt rates, every token of it: Gemini 2.5 Pro over 200k tokens $2.50 / $15
    /// (cache reads $0.25); Claude Sonnet 4.5 over 200k $6 / $22.50; GPT-5.5 over 272k
    /// $10 / $45.
    #[test]
    fn a_long_prompt_is_billed_at_its_tier() {
        let short = cost_usd("gemini-2.5-pro", &tokens(200_000, 1_000, 0, 0), 0).unwrap();
        assert!(close(short.usd, 0.25 + 0.01), "{short:?}");
        let long = cost_usd("gemini-2.5-pro", &tokens(190_000, 1_000, 20_000, 0), 0).unwrap();
        let want = (190_000.0 * 2.5 + 1_000.0 * 15.0 + 20_000.0 * 0.25) / 1e6;
        assert!(close(long.usd, want), "{long:?} != {want}");
        let sonnet = cost_usd("claude-sonnet-4-5", &tokens(250_000, 1_000, 0, 0), 0).unwrap();
        assert!(
            close(sonnet.usd, (250_000.0 * 6.0 + 1_000.0 * 22.5) / 1e6),
            "{sonnet:?}"
        );
        let gpt = cost_usd("gpt-5.5", &tokens(300_000, 1_000, 0, 0), 0).unwrap();
        assert!(
            close(gpt.usd, (300_000.0 * 10.0 + 1_000.0 * 45.0) / 1e6),
            "{gpt:?}"
        );
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
            ("grok-4", Some(Provider::XAi)),
            ("ollama", None),
            ("o", None),
            ("oss-20b", None),
        ] {
            assert_eq!(Provider::of_model(model), provider, "{model}");
        }
    }
}
