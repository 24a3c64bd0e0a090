//! Tool calls and usage in words, for assertion evidence and every report.

use super::{ToolCall, Usage};
use crate::shared::text::{summarize_input, thousands};

/// Tokens and cost in one phrase: `1,234 tokens · est. $0.0123`. A cost is always an
/// estimate — the agent's own, or the gateway's at list prices — and says so.
pub fn format_usage(usage: &Usage) -> String {
    let tokens = usage.input_tokens
        + usage.output_tokens
        + usage.cache_creation_input_tokens
        + usage.cache_read_input_tokens;
    let mut s = format!("{} tokens", thousands(tokens));
    if let Some(cost) = usage.cost_usd {
        s.push_str(&format!(" · est. ${cost:.4}"));
    }
    s
}

/// The simulated user's own cost line (issue 41): `simulated user: 107 tokens · est.
/// $0.0005 · 3.7s` — what its model calls used (tokens, a cost estimate in USD, their
/// wall time), or `cost unknown` when neither the CLI nor the gateway priced them.
pub fn simulated_user_line(usage: &Usage) -> String {
    let mut s = format!("simulated user: {}", format_usage(usage));
    if usage.cost_usd.is_none() {
        s.push_str(" · cost unknown");
    }
    if let Some(ms) = usage.duration_ms {
        s.push_str(&format!(" · {}", crate::shared::text::format_duration(ms)));
    }
    s
}

/// One call as a line of evidence: `#3 Read file_path="/p/.env"` (+ ` [subagent …]`).
pub fn describe_call(position: usize, call: &ToolCall) -> String {
    let mut s = format!(
        "#{position} {} {}",
        call.name,
        summarize_input(&call.input, 100)
    );
    if !call.is_main() {
        s.push_str(&format!(" [subagent {}]", call.agent));
    }
    s
}
