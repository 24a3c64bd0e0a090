//! `stdout:` reviews: the criteria, threshold (1–10), model, agent and number of votes an
//! LLM judge grades the final answer with; and `claims: verified`, whose claims the judge
//! reads from the final answer.

use super::super::diagnostic::Diagnostic;
use super::super::judge_gate::{GATE_NAMES, JudgeGate};
use super::super::node::{Node, Value};
use super::super::{AssertionKind, DEFAULT_THRESHOLD, MAX_VOTES, ReviewAssertion};
use super::Ctx;
use crate::shared::suggest::did_you_mean;

/// The `stdout:` keys of the original aptitude 0.3.x (`exists`, `contains`,
/// `not_contains`, `matches`, `not_matches`), removed by design (seed 000): a final answer
/// is judged against criteria, not matched as text.
const REMOVED_STDOUT_KEYS: [&str; 5] = [
    "exists",
    "contains",
    "not_contains",
    "matches",
    "not_matches",
];

/// The `review:` criteria that say what 0.3.x `stdout` keys checked, for the hint.
fn review_of_removed(fields: &super::Fields<'_>) -> String {
    let text = |key: &str| match fields.get(key).map(|n| &n.value) {
        Some(Value::Str(s)) => Some(s.clone()),
        _ => None,
    };
    let mut wants = Vec::new();
    if let Some(Value::Bool(false)) = fields.get("exists").map(|n| &n.value) {
        wants.push("should be empty".to_owned());
    }
    if let Some(s) = text("contains") {
        wants.push(format!("should say {s:?}"));
    }
    if let Some(s) = text("matches") {
        wants.push(format!("should say something matching {s:?}"));
    }
    if let Some(s) = text("not_contains") {
        wants.push(format!("should not mention {s:?}"));
    }
    if let Some(s) = text("not_matches") {
        wants.push(format!("should say nothing matching {s:?}"));
    }
    if wants.is_empty() {
        wants.push("should answer the task".to_owned());
    }
    wants.join(" and ")
}

impl Ctx {
    /// Reports the original aptitude 0.3.x `stdout:` keys as removed by design, once, with
    /// the `review:` form that replaces them. True when any was there.
    fn removed_stdout_keys(&mut self, fields: &super::Fields<'_>) -> bool {
        let Some(first) = fields
            .entries
            .iter()
            .find(|(k, _)| REMOVED_STDOUT_KEYS.contains(&k.name.as_str()))
        else {
            return false;
        };
        let review = review_of_removed(fields);
        let removed: Vec<&str> = fields
            .entries
            .iter()
            .map(|(k, _)| k.name.as_str())
            .filter(|k| REMOVED_STDOUT_KEYS.contains(k))
            .collect();
        self.push(
            Diagnostic::new(
                first.0.pos,
                format!(
                    "`stdout: {{{}}}` (the original aptitude 0.3) was removed by design: the final \
                     answer is graded by an LLM judge against criteria (`review:`), not matched \
                     as text",
                    removed.join(", ")
                ),
            )
            .label("removed in the original aptitude 0.4 and here")
            .hint(format!(
                "write `stdout: {{review: {review:?}, threshold: 7}}`; to check a command's \
                 own output, use `output_contains:` (docs/yaml-api.md, \"The LLM judge\")"
            )),
        );
        true
    }

    /// `claims: verified` (the one value: the kind may grow options later).
    pub(super) fn claims(&mut self, node: &Node) -> Option<AssertionKind> {
        match &node.value {
            Value::Str(s) if s == "verified" => Some(AssertionKind::Claims),
            Value::Str(s) => {
                self.push(
                    Diagnostic::new(node.pos, format!("`claims` must be `verified`, found {s:?}"))
                        .label("unknown value")
                        .hint("write `claims: verified`: each action the answer claims must have evidence"),
                );
                None
            }
            _ => {
                self.type_error(node, "claims", "`verified`");
                None
            }
        }
    }

    pub(super) fn review(&mut self, node: &Node) -> Option<ReviewAssertion> {
        let fields = self.map(node, "stdout")?;
        if self.removed_stdout_keys(&fields) {
            return None;
        }
        self.unknown_keys(
            &fields,
            &[
                "review",
                "threshold",
                "model",
                "agent",
                "votes",
                "gate",
                "include_dialog",
            ],
            "`stdout`",
        );
        let review = match fields.get("review") {
            Some(n) => self.non_empty_string(n, "review"),
            None => {
                self.push(
                    Diagnostic::new(fields.pos, "`stdout` needs `review:` criteria")
                        .hint("write e.g. `review: \"should confirm the file was created\"`"),
                );
                None
            }
        };
        let threshold = match fields.get("threshold") {
            None => Some(self.default_threshold.unwrap_or(DEFAULT_THRESHOLD)),
            Some(n) => match &n.value {
                Value::Int(t) if (1..=10).contains(t) => u8::try_from(*t).ok(),
                Value::Int(t) => {
                    self.push(
                        Diagnostic::new(
                            n.pos,
                            format!("`threshold` must be between 1 and 10, found {t}"),
                        )
                        .label("out of range")
                        .hint("scores are on a 1–10 scale; the default threshold is 7"),
                    );
                    None
                }
                _ => {
                    self.type_error(n, "threshold", "a whole number from 1 to 10");
                    None
                }
            },
        };
        let model = fields
            .get("model")
            .and_then(|n| self.non_empty_string(n, "model"));
        let agent = fields
            .get("agent")
            .and_then(|n| self.agent_name(n, "agent"));
        if fields.get("agent").is_some() && agent.is_none() {
            return None;
        }
        let votes = match fields.get("votes") {
            None => None,
            Some(n) => match &n.value {
                Value::Int(v) if (1..=i64::from(MAX_VOTES)).contains(v) => {
                    Some(u32::try_from(*v).ok()?)
                }
                Value::Int(v) => {
                    self.push(
                        Diagnostic::new(
                            n.pos,
                            format!("`votes` must be between 1 and {MAX_VOTES}, found {v}"),
                        )
                        .label("out of range")
                        .hint("each vote is one grading call; 3 or 5 are usual"),
                    );
                    return None;
                }
                _ => {
                    self.type_error(n, "votes", "a whole number of grading calls");
                    return None;
                }
            },
        };
        let gate = match fields.get("gate") {
            None => None,
            Some(n) => Some(self.gate(n, "gate")?),
        };
        let include_dialog = match fields.get("include_dialog") {
            None => false,
            Some(n) => match &n.value {
                Value::Bool(true) if self.user_facts.is_none() => {
                    self.push(
                        Diagnostic::new(n.pos, "`include_dialog` needs a `user:` in the test")
                            .label("there is no dialog to include")
                            .hint(
                                "add `user:` with a `script:` or a `goal:` (docs/conversations.md), \
                                 or remove `include_dialog`",
                            ),
                    );
                    return None;
                }
                Value::Bool(b) => *b,
                _ => {
                    self.type_error(n, "include_dialog", "`true` or `false`");
                    return None;
                }
            },
        };
        Some(ReviewAssertion {
            gate,
            standing: None,
            review: review?,
            threshold: threshold?,
            model,
            agent,
            votes,
            include_dialog,
        })
    }

    /// A `gate:` word (`always`, `certified`, `advisory`); anything else is an error at
    /// its position with the closest word.
    pub(super) fn gate(&mut self, node: &Node, key: &str) -> Option<JudgeGate> {
        let word = self.non_empty_string(node, key)?;
        if let Some(gate) = JudgeGate::parse(&word) {
            return Some(gate);
        }
        let hint = did_you_mean(&word, GATE_NAMES.iter().copied())
            .map(|s| format!("did you mean `{s}`?"))
            .unwrap_or_else(|| {
                "write `always` (the judge gates, uncertified or not), `certified` (it gates \
                 only with a valid certificate) or `advisory` (it never gates)"
                    .to_owned()
            });
        self.push(
            Diagnostic::new(node.pos, format!("unknown `{key}` value `{word}`"))
                .label("unknown gate")
                .hint(hint),
        );
        None
    }
}
