//! Budgets: turns, cost in USD, duration and tool calls, each with a `max`.

use super::super::Budget;
use super::super::diagnostic::Diagnostic;
use super::super::node::{Node, Value};
use super::Ctx;

impl Ctx {
    pub(super) fn budget(&mut self, node: &Node, kind: &str) -> Option<Budget> {
        let fields = self.map(node, kind)?;
        let allowed: &[&str] = if kind == "tool_calls" {
            &["max", "tool", "scope"]
        } else {
            &["max"]
        };
        self.unknown_keys(&fields, allowed, &format!("`{kind}`"));
        let Some(max) = fields.get("max") else {
            self.push(
                Diagnostic::new(fields.pos, format!("`{kind}` needs `max:`")).hint(match kind {
                    "duration" => "write e.g. `duration: {max: \"2m\"}`",
                    "cost_usd" => "write e.g. `cost_usd: {max: 0.50}`",
                    _ => "write e.g. `{max: 10}`",
                }),
            );
            return None;
        };
        match kind {
            "turns" => self.count(max, "max").map(Budget::Turns),
            "cost_usd" => match &max.value {
                Value::Int(i) if *i >= 0 => Some(Budget::CostUsd(*i as f64)),
                Value::Float(f) if *f >= 0.0 && f.is_finite() => Some(Budget::CostUsd(*f)),
                _ => {
                    self.type_error(max, "max", "an amount in USD ≥ 0");
                    None
                }
            },
            "duration" => self.duration(max, "max").map(Budget::Duration),
            _ => {
                let tool = fields.get("tool").and_then(|n| self.tool_name(n, "tool"));
                if fields.get("tool").is_some() && tool.is_none() {
                    return None;
                }
                let scope = self.scope(&fields);
                self.count(max, "max")
                    .map(|max| Budget::ToolCalls { max, tool, scope })
            }
        }
    }
}
