//! Budgets: `turns`, `cost_usd`, `duration` and `tool_calls` limits, from the transcript's
//! usage. A figure the agent did not report makes its budget `skip`, with the reason —
//! never a pass.

use super::AssertionStatus;
use super::{Verdict, in_scope, times};
use crate::spec::Budget;
use crate::transcript::Transcript;

fn within(description: String, value: f64, max: f64, shown: String) -> Verdict {
    let status = AssertionStatus::pass_if(value <= max);
    (status, description, Some(shown))
}

fn unreported(description: String, what: &str) -> Verdict {
    (
        AssertionStatus::Skip,
        description,
        Some(format!(
            "the agent reported no {what}, so this budget can not be checked"
        )),
    )
}

/// Evaluates a budget against the transcript.
pub(super) fn evaluate(budget: &Budget, t: &Transcript) -> Verdict {
    match budget {
        Budget::Turns(max) => {
            let description = format!("at most {max} turns");
            match t.usage.turns {
                Some(turns) => within(
                    description,
                    f64::from(turns),
                    f64::from(*max),
                    format!("{turns} turns"),
                ),
                None => unreported(description, "turn count"),
            }
        }
        Budget::CostUsd(max) => {
            let description = format!("cost at most ${max:.4}");
            match t.usage.cost_usd {
                Some(cost) => within(description, cost, *max, format!("cost ${cost:.6}")),
                None => unreported(description, "cost"),
            }
        }
        Budget::Duration(max) => {
            let description = format!("took at most {}", humantime::format_duration(*max));
            match t.usage.duration_ms {
                Some(ms) => within(
                    description,
                    ms as f64,
                    max.as_millis() as f64,
                    format!("took {}", crate::shared::text::format_duration(ms)),
                ),
                None => unreported(description, "duration"),
            }
        }
        Budget::ToolCalls { max, tool, scope } => {
            let description = match tool {
                Some(t) => format!("at most {} tool calls of {}", max, t.display()),
                None => format!("at most {max} tool calls"),
            };
            let n = in_scope(&t.tool_calls, *scope)
                .into_iter()
                .filter(|(_, c)| {
                    tool.as_ref()
                        .is_none_or(|m| m.matches(&c.canonical) || m.matches(&c.name))
                })
                .count();
            within(
                description,
                n as f64,
                f64::from(*max),
                format!("called {}", times(n as u64)),
            )
        }
    }
}
