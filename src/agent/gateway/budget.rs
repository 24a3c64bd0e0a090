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
    /// In USD at list prices (see [`super::price`]). A request for a model of no known
    /// provider, which can not be priced, is refused under it ([`Refusal::Unpriced`]).
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
        let next_prompt = tokens.prompt().saturating_add(tokens.output);
        let cost_usd = model.and_then(price::basis_of).map_or(0.0, |basis| {
            let p = basis.rates_for(next_prompt);
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

    /// Admits a model request for `model` (`None`: the request names none) under the cost
    /// ceiling: refused when the model can not be priced ([`price::basis_of`]), since
    /// nothing could then bound what it costs.
    ///
    /// # Errors
    /// [`Refusal::Unpriced`].
    pub fn admit_model(&self, model: Option<&str>) -> Result<(), Refusal> {
        let Some(max) = self.limits.max_cost_usd else {
            return Ok(());
        };
        match model {
            Some(m) if price::basis_of(m).is_some() => Ok(()),
            other => Err(Refusal::Unpriced {
                max,
                model: other.map_or_else(
                    || "(none named)".to_owned(),
                    |m| crate::shared::cut::chars(m, 100).kept.to_owned(),
                ),
            }),
        }
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
    /// The request's model has no list price and names no known provider, so the cost
    /// ceiling can not bound it.
    #[error(
        "the model `{model}` has no list price (aptitude's price table does not know its provider), so the --max-cost ${max} ceiling can not bound its cost; use --max-tokens for such models"
    )]
    Unpriced {
        /// `--max-cost`, USD.
        max: f64,
        /// The model asked for.
        model: String,
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
            cache_creation_1h: 0,
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
        let cost = price::cost_usd("claude-sonnet-4-5", &used, 0).map(|c| c.usd);
        ledger.add(&used, cost);
        let next = Estimate::after(Some("claude-sonnet-4-5"), &used);
        assert!((next.cost_usd - (1_000.0 * 0.30 + 100.0 * 3.0) / 1e6).abs() < 1e-12);
        assert_eq!(ledger.admit(next), Ok(()));
        ledger.add(
            &tokens(1_000_000, 0, 0),
            price::cost_usd("claude-sonnet-4-5", &tokens(1_000_000, 0, 0), 0).map(|c| c.usd),
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
            price::cost_usd("fake-model", &used, 0).map(|c| c.usd),
        );
        assert_eq!(
            unpriced.admit(Estimate::after(Some("fake-model"), &used)),
            Ok(())
        );
    }

    /// Under `--max-cost`, a model that can not be priced is refused before it costs
    /// anything: an agent's own figure (or none) can not bound it. A model not in the
    /// table but of a known provider is priced at that provider's dearest rates instead.
    #[test]
    fn an_unpriceable_model_is_refused_under_a_cost_ceiling() {
        let ledger = Ledger::new(Limits {
            max_cost_usd: Some(0.01),
            max_tokens: None,
        });
        let refused = ledger.admit_model(Some("fake-model")).unwrap_err();
        assert!(
            refused
                .to_string()
                .starts_with("the model `fake-model` has no list price"),
            "{refused}"
        );
        assert!(ledger.admit_model(None).is_err());
        assert_eq!(ledger.admit_model(Some("claude-3-opus-20240229")), Ok(()));
        assert_eq!(ledger.admit_model(Some("claude-unlisted-9")), Ok(()));
        let unbounded = Ledger::new(Limits::default());
        assert_eq!(unbounded.admit_model(Some("fake-model")), Ok(()));
        // What the issue saw: `--max-cost 0.01` let a `claude-3-opus` run cost $0.033.
        let mut ledger = ledger;
        let used = tokens(1_000, 200, 0);
        ledger.add(
            &used,
            price::cost_usd("claude-3-opus", &used, 0).map(|c| c.usd),
        );
        let next = Estimate::after(Some("claude-3-opus"), &used);
        assert!(ledger.admit(next).is_err(), "$0.03 spent of $0.01");
    }
}
