//! What a model request cost, for agents that report no cost of their own: a small table
//! of list prices per model family, in USD per million tokens.
//!
//! The prices are the providers' published list prices for standard (not batch, not
//! priority) requests as of late 2025 (anthropic.com/pricing, openai.com/api/pricing,
//! ai.google.dev/gemini-api/docs/pricing; Gemini Pro at its ≤ 200k-token prompt tier). A
//! model is matched by the longest family prefix of its name (`claude-sonnet-4-5-20250929`
//! is `claude-sonnet-4`); a model no family matches is metered in tokens only, never
//! priced by guess. `docs/agents.md` shows the table.

use super::meter::Tokens;

/// A family's prices, USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    /// Model names that start with this are of the family.
    pub prefix: &'static str,
    /// Input tokens.
    pub input: f64,
    /// Output tokens.
    pub output: f64,
    /// Cache reads.
    pub cache_read: f64,
    /// Cache writes (Anthropic's 5-minute cache; others charge input price).
    pub cache_write: f64,
}

const fn p(
    prefix: &'static str,
    input: f64,
    output: f64,
    cache_read: f64,
    cache_write: f64,
) -> Price {
    Price {
        prefix,
        input,
        output,
        cache_read,
        cache_write,
    }
}

/// The families, in no particular order (the longest matching prefix wins).
pub const PRICES: &[Price] = &[
    p("claude-opus-4-5", 5.0, 25.0, 0.50, 6.25),
    p("claude-opus-4-6", 5.0, 25.0, 0.50, 6.25),
    p("claude-opus-4", 15.0, 75.0, 1.50, 18.75),
    p("claude-sonnet-4", 3.0, 15.0, 0.30, 3.75),
    p("claude-3-7-sonnet", 3.0, 15.0, 0.30, 3.75),
    p("claude-3-5-sonnet", 3.0, 15.0, 0.30, 3.75),
    p("claude-haiku-4", 1.0, 5.0, 0.10, 1.25),
    p("claude-3-5-haiku", 0.80, 4.0, 0.08, 1.0),
    p("gpt-5-nano", 0.05, 0.40, 0.005, 0.05),
    p("gpt-5-mini", 0.25, 2.0, 0.025, 0.25),
    p("gpt-5", 1.25, 10.0, 0.125, 1.25),
    p("gpt-4.1-nano", 0.10, 0.40, 0.025, 0.10),
    p("gpt-4.1-mini", 0.40, 1.60, 0.10, 0.40),
    p("gpt-4.1", 2.0, 8.0, 0.50, 2.0),
    p("gpt-4o-mini", 0.15, 0.60, 0.075, 0.15),
    p("gpt-4o", 2.50, 10.0, 1.25, 2.50),
    p("o4-mini", 1.10, 4.40, 0.275, 1.10),
    p("o3", 2.0, 8.0, 0.50, 2.0),
    p("gemini-2.5-flash-lite", 0.10, 0.40, 0.025, 0.10),
    p("gemini-2.5-flash", 0.30, 2.50, 0.075, 0.30),
    p("gemini-2.5-pro", 1.25, 10.0, 0.31, 1.25),
];

/// The family of `model` (the longest matching prefix), if any. A provider prefix
/// (`anthropic/`, `openai/`, `models/`) is ignored.
pub fn price_of(model: &str) -> Option<&'static Price> {
    let name = model.rsplit('/').next().unwrap_or(model);
    PRICES
        .iter()
        .filter(|p| name.starts_with(p.prefix))
        .max_by_key(|p| p.prefix.len())
}

/// What `tokens` of `model` cost in USD, or `None` when no family matches.
pub fn cost_usd(model: &str, tokens: &Tokens) -> Option<f64> {
    let p = price_of(model)?;
    let per = |n: u64, price: f64| n as f64 * price / 1_000_000.0;
    Some(
        per(tokens.input, p.input)
            + per(tokens.output, p.output)
            + per(tokens.cache_read, p.cache_read)
            + per(tokens.cache_creation, p.cache_write),
    )
}

/// The table as Markdown, for `docs/agents.md`.
pub fn docs_table() -> String {
    let mut rows: Vec<&Price> = PRICES.iter().collect();
    rows.sort_by(|a, b| a.prefix.cmp(b.prefix));
    let mut out = String::from(
        "| model family (prefix) | input | output | cache read | cache write |\n|---|---|---|---|---|\n",
    );
    for p in rows {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            p.prefix, p.input, p.output, p.cache_read, p.cache_write
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_family_wins_and_unknown_models_are_not_priced() {
        assert_eq!(
            price_of("claude-opus-4-5-20251101").map(|p| p.prefix),
            Some("claude-opus-4-5")
        );
        assert_eq!(
            price_of("claude-opus-4-1-20250805").map(|p| p.prefix),
            Some("claude-opus-4")
        );
        assert_eq!(
            price_of("gpt-5-mini-2025-08-07").map(|p| p.prefix),
            Some("gpt-5-mini")
        );
        assert_eq!(
            price_of("openai/gpt-5-codex").map(|p| p.prefix),
            Some("gpt-5")
        );
        assert_eq!(price_of("fake-model"), None);
        let tokens = Tokens {
            input: 1_000_000,
            output: 100_000,
            cache_read: 1_000_000,
            cache_creation: 0,
        };
        let cost = cost_usd("claude-sonnet-4-5", &tokens).unwrap();
        assert!((cost - (3.0 + 1.5 + 0.3)).abs() < 1e-9, "{cost}");
        assert_eq!(cost_usd("fake-model", &tokens), None);
    }
}
