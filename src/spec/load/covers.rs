//! `covers:` — the rules of the workspace's instruction files a test puts to work
//! ([`crate::spec::rules`]): rule ids, heading paths (`# Testing`) or parts of a rule's text
//! (`"run the linter"`). When the loader checks workspaces, each entry must name at least
//! one rule: one that names none is an error with the closest rule as a hint.

use std::path::Path;

use super::super::diagnostic::Diagnostic;
use super::super::node::{Node, Value};
use super::super::rules::{Rule, Selector};
use super::Ctx;
use crate::spec::Covers;

impl Ctx {
    /// `covers:` (a string or a list of strings), matched against `workspace`'s rules when
    /// workspaces are checked.
    pub(super) fn covers(&mut self, node: &Node, workspace: Option<&Path>) -> Vec<Covers> {
        let items: Vec<&Node> = match &node.value {
            Value::Str(_) => vec![node],
            Value::Seq(items) => items.iter().collect(),
            _ => {
                self.type_error(
                    node,
                    "covers",
                    "a rule id, `# heading path`, `\"text\"`, or a list of them",
                );
                return Vec::new();
            }
        };
        let rules: Option<Vec<Rule>> = workspace
            .filter(|_| self.check_workspace)
            .map(super::super::rules::rules_in);
        let mut out = Vec::new();
        for item in items {
            let Some(text) = self.non_empty_string(item, "covers") else {
                continue;
            };
            let selector = Selector::parse(&text);
            let matched: Vec<String> = rules
                .iter()
                .flatten()
                .filter(|r| selector.matches(r))
                .map(|r| r.id.clone())
                .collect();
            if let Some(rules) = &rules
                && matched.is_empty()
            {
                self.push(no_rule(item, &selector, rules));
                continue;
            }
            out.push(Covers {
                selector,
                line: item.pos.line,
                rules: matched,
            });
        }
        out
    }
}

/// The diagnostic of a selector that names no rule: the closest rule text or heading as a
/// hint, or that the workspace has no instruction file.
fn no_rule(item: &Node, selector: &Selector, rules: &[Rule]) -> Diagnostic {
    let message = format!(
        "`covers: {}` names no rule of the workspace's instruction files",
        selector.display()
    );
    if rules.is_empty() {
        return Diagnostic::new(item.pos, message)
            .label("no rule")
            .hint("the workspace has no instruction file (AGENTS.md, CLAUDE.md, GEMINI.md, SKILL.md, .cursor/rules, …)");
    }
    let closest = match selector {
        Selector::Id(_) => None,
        Selector::Heading(path) => closest(path, rules.iter().map(Rule::heading_path))
            .map(|h| format!("did you mean `# {h}`?")),
        Selector::Text(part) => closest(part, rules.iter().map(|r| r.text.clone())).map(|t| {
            format!(
                "did you mean \"{}\"?",
                crate::shared::cut::chars(&t, 80).kept
            )
        }),
    };
    let files: Vec<&str> = {
        let mut f: Vec<&str> = rules.iter().map(|r| r.file.as_str()).collect();
        f.dedup();
        f
    };
    Diagnostic::new(item.pos, message)
        .label("no rule")
        .hint(closest.unwrap_or_else(|| {
            format!(
                "`aptitude coverage` lists the rules and their ids ({})",
                files.join(", ")
            )
        }))
}

/// The candidate closest to `wanted` by normalised Levenshtein similarity (at least 0.5),
/// comparing `wanted` with each candidate's window of the same length.
pub(super) fn closest(wanted: &str, candidates: impl Iterator<Item = String>) -> Option<String> {
    let wanted = wanted.to_lowercase();
    candidates
        .map(|c| {
            let lower = c.to_lowercase();
            let score = lower
                .split_whitespace()
                .collect::<Vec<_>>()
                .windows(wanted.split_whitespace().count().max(1))
                .map(|w| strsim::normalized_levenshtein(&w.join(" "), &wanted))
                .fold(strsim::normalized_levenshtein(&lower, &wanted), f64::max);
            (score, c)
        })
        .filter(|(score, _)| *score >= 0.5)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}
