//! The run's spend ceiling, enforced request by request (`--max-cost`, `--max-tokens`).
//!
//! One [`Ledger`] is shared by every run and grading call of an aptitude run: every model
//! request's tokens (and cost, when its model is priced) are added when its reply ends.
//! Before a request is forwarded, the ledger admits it only if it can not cross a ceiling
//! by what it surely costs: a run's next request re-sends at least its previous prompt and
//! reply, so its prompt is at least that many tokens, costing at least the previous prompt
//! at the cache-read price plus the previous reply at the input price. The first request
//! of a run is admitted while the spend is below the ceiling. Requests of runs going on at
//! once may each be admitted before either is counted, so the ceiling can be crossed by
//! the replies in flight, never by a request admitted after it was reached.

use super::meter::Tokens;
use super::price;

/// The ceilings (`--max-cost` in USD, `--max-tokens` in tokens: input, output and cache).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Limits {
    /// In USD, of priced requests (see [`super::price`]).
    pub max_cost_usd: Option<f64>,
    /// In tokens.
    pub max_tokens: Option<u64>,
}

/// What a run's next request surely costs: the lower bound above.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Estimate {
    /// Tokens: the previous prompt and reply.
    pub tokens: u64,
    /// USD, when the previous request's model is priced.
    pub cost_usd: f64,
}

impl Estimate {
    /// The estimate after a request of `model` that used `tokens`.
    pub fn after(model: Option<&str>, tokens: &Tokens) -> Estimate {
        let cost_usd = model.and_then(price::price_of).map_or(0.0, |p| {
            (tokens.prompt() as f64 * p.cache_read + tokens.output as f64 * p.input) / 1_000_000.0
        });
        Estimate {
            tokens: tokens.prompt().saturating_add(tokens.output),
            cost_usd,
        }
    }
}

/// Spend against the ceilings, for the whole aptitude run.
#[derive(Debug, Default)]
pub struct Ledger {
    limits: Limits,
    tokens: u64,
    cost_usd: f64,
}

impl Ledger {
    /// A ledger with nothing spent.
    pub fn new(limits: Limits) -> Self {
        Ledger {
            limits,
            ..Ledger::default()
        }
    }

    /// Counts a finished reply.
    pub fn add(&mut self, tokens: &Tokens, cost_usd: Option<f64>) {
        self.tokens = self.tokens.saturating_add(tokens.total());
        self.cost_usd += cost_usd.unwrap_or(0.0);
    }

    /// Tokens and USD spent so far.
    pub fn spent(&self) -> (u64, f64) {
        (self.tokens, self.cost_usd)
    }

    /// Admits a request whose least cost is `next`, or says which ceiling it would cross.
    ///
    /// # Errors
    /// The [`Refusal`]: `the --max-tokens 300 ceiling would be crossed (254 tokens spent;
    /// this request re-sends at least 127)`.
    pub fn admit(&self, next: Estimate) -> Result<(), Refusal> {
        if let Some(max) = self.limits.max_tokens
            && (self.tokens >= max || self.tokens.saturating_add(next.tokens) > max)
        {
            let spent = self.tokens;
            return Err(if spent >= max {
                Refusal::TokensReached { max, spent }
            } else {
                Refusal::TokensCrossed {
                    max,
                    spent,
                    next: next.tokens,
                }
            });
        }
        if let Some(max) = self.limits.max_cost_usd
            && (self.cost_usd >= max || self.cost_usd + next.cost_usd > max)
        {
            let spent = self.cost_usd;
            return Err(if spent >= max {
                Refusal::CostReached { max, spent }
            } else {
                Refusal::CostCrossed {
                    max,
                    spent,
                    next: next.cost_usd,
                }
            });
        }
        Ok(())
    }
}

/// Why [`Ledger::admit`] refused a request: the ceiling (`--max-tokens` in tokens,
/// `--max-cost` in USD), what the whole aptitude run spent so far, and the least the
/// request costs.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Refusal {
    /// The token ceiling was already reached.
    #[error("the --max-tokens {max} ceiling was reached ({spent} tokens spent)")]
    TokensReached {
        /// `--max-tokens`.
        max: u64,
        /// Tokens spent.
        spent: u64,
    },
    /// The request would cross the token ceiling.
    #[error(
        "the --max-tokens {max} ceiling would be crossed ({spent} tokens spent; this request re-sends at least {next})"
    )]
    TokensCrossed {
        /// `--max-tokens`.
        max: u64,
        /// Tokens spent.
        spent: u64,
        /// The least the request re-sends.
        next: u64,
    },
    /// The cost ceiling was already reached.
    #[error("the --max-cost ${max} ceiling was reached (${spent:.4} spent)")]
    CostReached {
        /// `--max-cost`, USD.
        max: f64,
        /// USD spent.
        spent: f64,
    },
    /// The request would cross the cost ceiling.
    #[error(
        "the --max-cost ${max} ceiling would be crossed (${spent:.4} spent; this request costs at least ${next:.4})"
    )]
    CostCrossed {
        /// `--max-cost`, USD.
        max: f64,
        /// USD spent.
        spent: f64,
        /// The least the request costs, USD.
        next: f64,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(input: u64, output: u64, cache_read: u64) -> Tokens {
        Tokens {
            input,
            output,
            cache_read,
            cache_creation: 0,
        }
    }

    #[test]
    fn a_request_that_would_cross_the_token_ceiling_is_refused() {
        let mut ledger = Ledger::new(Limits {
            max_cost_usd: None,
            max_tokens: Some(300),
        });
        let first = Estimate::default();
        assert_eq!(ledger.admit(first), Ok(()));
        let used = tokens(100, 7, 20);
        ledger.add(&used, None);
        let next = Estimate::after(Some("fake-model"), &used);
        assert_eq!(next.tokens, 127);
        assert_eq!(ledger.admit(next), Ok(()), "127 + 127 fits in 300");
        ledger.add(&used, None);
        let refused = ledger.admit(next).unwrap_err().to_string();
        assert_eq!(
            refused,
            "the --max-tokens 300 ceiling would be crossed (254 tokens spent; this request re-sends at least 127)"
        );
        ledger.add(&used, None);
        assert!(
            ledger
                .admit(first)
                .unwrap_err()
                .to_string()
                .contains("was reached (381 tokens spent)")
        );
    }

    #[test]
    fn the_cost_ceiling_counts_priced_requests() {
        let mut ledger = Ledger::new(Limits {
            max_cost_usd: Some(0.01),
            max_tokens: None,
        });
        let used = tokens(1_000, 100, 0);
        let cost = price::cost_usd("claude-sonnet-4-5", &used);
        ledger.add(&used, cost);
        let next = Estimate::after(Some("claude-sonnet-4-5"), &used);
        assert!((next.cost_usd - (1_000.0 * 0.30 + 100.0 * 3.0) / 1e6).abs() < 1e-12);
        assert_eq!(ledger.admit(next), Ok(()));
        ledger.add(
            &tokens(1_000_000, 0, 0),
            price::cost_usd("claude-sonnet-4-5", &tokens(1_000_000, 0, 0)),
        );
        assert!(
            ledger
                .admit(Estimate::default())
                .unwrap_err()
                .to_string()
                .starts_with("the --max-cost $0.01 ceiling was reached")
        );
        // Unpriced models count no cost: the token ceiling is the one that bounds them.
        let mut unpriced = Ledger::new(Limits {
            max_cost_usd: Some(0.01),
            max_tokens: None,
        });
        unpriced.add(
            &tokens(10_000_000, 0, 0),
            price::cost_usd("fake-model", &used),
        );
        assert_eq!(
            unpriced.admit(Estimate::after(Some("fake-model"), &used)),
            Ok(())
        );
    }
}
