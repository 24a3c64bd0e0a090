//! The run's spend ceiling, enforced request by request (`--max-cost`, `--max-tokens`).
//!
//! One [`Ledger`] is shared by every run and grading call of an aptitude run. Each model
//! request is admitted against it, then settled when its reply ends:
//! - **Refused** when it can not fit by what it surely costs: a run's next request re-sends
//!   at least its previous prompt and reply, so its prompt is at least that many tokens,
//!   costing at least the previous prompt at the cache-read price plus the previous reply at
//!   the input price ([`Estimate`]). Spend only grows, so such a refusal is final.
//! - **Admitted with its worst case reserved** ([`Worst`]: its prompt — the larger of that
//!   lower bound and a quarter of the request's bytes — at the dearest of the model's
//!   input and cache-write rates, and its output cap — the request's `max_tokens` or the
//!   protocol's field, else the model's largest output, else [`DEFAULT_OUTPUT_CAP`] — at the
//!   output rate) when spend, the reservations open and this one fit under the ceilings.
//! - **Admitted alone** when it does not fit but nothing else is open: the ceiling can then
//!   be crossed by that one reply, as a run's single request always could.
//! - Otherwise it **waits** until an open request settles, and is decided again.
//!
//! So requests going on at once (parallel runs, an agent's parallel calls) never each see
//! the same unspent budget: 40 requests at once under `--max-tokens 600` run one by one
//! once their caps do not fit together, and stop at the ceiling. A reply that ends without
//! reporting its usage is settled at its reservation, never at nothing.

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

/// The output cap assumed for a request that sets none, of a model whose largest output
/// the price table does not know, in tokens.
pub const DEFAULT_OUTPUT_CAP: u64 = 128_000;

/// The most a request may cost, reserved while it is in flight.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Worst {
    /// Tokens: the prompt and the output cap.
    pub tokens: u64,
    /// USD, when the model is priced (0 otherwise: such a model is refused under
    /// `--max-cost`).
    pub cost_usd: f64,
}

impl Worst {
    /// The worst case of a request of `model` whose prompt is about `prompt` tokens and
    /// whose output is capped at `output_cap` (see the module docs).
    pub fn of(model: Option<&str>, prompt: u64, output_cap: Option<u64>) -> Worst {
        let basis = model.and_then(price::basis_of);
        let output = output_cap
            .or_else(|| basis.and_then(|b| b.max_output()))
            .unwrap_or(DEFAULT_OUTPUT_CAP);
        let cost_usd = basis.map_or(0.0, |b| {
            let r = b.rates_for(prompt);
            let prompt_rate = r.input.max(r.cache_write).max(r.cache_write_1h);
            (prompt as f64 * prompt_rate + output as f64 * r.output) / 1_000_000.0
        });
        Worst {
            tokens: prompt.saturating_add(output),
            cost_usd,
        }
    }
}

/// What [`Ledger::reserve`] decided for a request that can fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reserved {
    /// Its worst case is reserved: forward it.
    Go,
    /// Others are open and it does not fit beside them: ask again when one settles.
    Wait,
}

/// Spend against the ceilings, for the whole aptitude run.
#[derive(Debug, Default)]
pub struct Ledger {
    limits: Limits,
    tokens: u64,
    cost_usd: f64,
    /// Requests in flight, and the sum of their worst cases.
    open: u32,
    open_tokens: u64,
    open_usd: f64,
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

    /// Admits a request whose least cost is `next` and whose worst is `worst` (see the
    /// module docs): [`Reserved::Go`] with `worst` reserved, or [`Reserved::Wait`].
    ///
    /// # Errors
    /// The [`Refusal`] when even its least cost does not fit ([`Ledger::admit`]).
    pub fn reserve(&mut self, next: Estimate, worst: Worst) -> Result<Reserved, Refusal> {
        self.admit(next)?;
        let fits_tokens = self.limits.max_tokens.is_none_or(|max| {
            self.tokens
                .saturating_add(self.open_tokens)
                .saturating_add(worst.tokens)
                <= max
        });
        let fits_cost = self
            .limits
            .max_cost_usd
            .is_none_or(|max| self.cost_usd + self.open_usd + worst.cost_usd <= max);
        if !(fits_tokens && fits_cost) && self.open > 0 {
            return Ok(Reserved::Wait);
        }
        self.open += 1;
        self.open_tokens = self.open_tokens.saturating_add(worst.tokens);
        self.open_usd += worst.cost_usd;
        Ok(Reserved::Go)
    }

    /// Ends the reservation `worst` of a request that spent nothing it reported (it was
    /// not forwarded, or it failed without usage).
    pub fn release(&mut self, worst: Worst) {
        self.open = self.open.saturating_sub(1);
        self.open_tokens = self.open_tokens.saturating_sub(worst.tokens);
        self.open_usd = (self.open_usd - worst.cost_usd).max(0.0);
        if self.open == 0 {
            // No rounding left over once nothing is open.
            self.open_usd = 0.0;
        }
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

    /// 40 requests at once under `--max-tokens 600`, each capped at 100 output tokens with
    /// a 4-token prompt: five fit beside each other; the rest wait, and once the ceiling is
    /// reached every later one is refused — the spend stays within one request's worst
    /// case of the ceiling (it was 4,160 when each was admitted against the same unspent
    /// budget).
    #[test]
    fn requests_at_once_reserve_their_worst_case() {
        let mut ledger = Ledger::new(Limits {
            max_cost_usd: None,
            max_tokens: Some(600),
        });
        let worst = Worst::of(Some("fake-model"), 4, Some(100));
        assert_eq!(worst.tokens, 104);
        let mut open = Vec::new();
        let (mut waited, mut refused) = (0, 0);
        for _ in 0..40 {
            match ledger.reserve(Estimate::default(), worst) {
                Ok(Reserved::Go) => open.push(worst),
                Ok(Reserved::Wait) => waited += 1,
                Err(_) => refused += 1,
            }
        }
        assert_eq!((open.len(), waited, refused), (5, 35, 0));
        // The five settle, each at its worst (104 tokens): 520 spent.
        for w in open.drain(..) {
            ledger.release(w);
            ledger.add(&tokens(4, 100, 0), None);
        }
        // The waiting ones come back: one more fits alone (nothing open), then the
        // ceiling is reached and the rest are refused.
        assert_eq!(ledger.reserve(Estimate::default(), worst), Ok(Reserved::Go));
        assert_eq!(
            ledger.reserve(Estimate::default(), worst),
            Ok(Reserved::Wait)
        );
        ledger.release(worst);
        ledger.add(&tokens(4, 100, 0), None);
        assert!(ledger.reserve(Estimate::default(), worst).is_err());
        assert_eq!(ledger.spent().0, 624, "one request's worst case over 600");
    }

    /// A request whose cap alone is over the ceiling still runs when nothing else is open
    /// (Claude Code asks `max_tokens: 32000` of every request); its worst case is priced
    /// at the model's rates: GPT-5.5's $30 per million output tokens.
    #[test]
    fn a_request_over_the_ceiling_alone_runs_alone() {
        let mut ledger = Ledger::new(Limits {
            max_cost_usd: Some(0.10),
            max_tokens: None,
        });
        let worst = Worst::of(Some("gpt-5.5"), 1_000, Some(32_000));
        assert!((worst.cost_usd - (1_000.0 * 5.0 + 32_000.0 * 30.0) / 1e6).abs() < 1e-12);
        assert_eq!(ledger.reserve(Estimate::default(), worst), Ok(Reserved::Go));
        assert_eq!(
            ledger.reserve(Estimate::default(), worst),
            Ok(Reserved::Wait)
        );
        ledger.release(worst);
        assert_eq!(ledger.reserve(Estimate::default(), worst), Ok(Reserved::Go));
        // No cap in the request: the model's largest output (128,000 for GPT-5.5).
        assert_eq!(Worst::of(Some("gpt-5.5"), 0, None).tokens, 128_000);
        assert_eq!(
            Worst::of(Some("fake-model"), 0, None).tokens,
            DEFAULT_OUTPUT_CAP
        );
    }
}
