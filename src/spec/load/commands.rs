//! Assertions on shell commands (seed 004, seed 002): exit codes, output substrings,
//! command patterns and run counts.

use regex::Regex;

use super::super::diagnostic::Diagnostic;
use super::super::node::{Node, Value};
use super::super::pattern::ValueMatcher;
use super::super::{AssertionKind, Scope};
use super::Ctx;

impl Ctx {
    pub(super) fn exit_code(&mut self, node: &Node, key: &str) -> Option<i64> {
        match &node.value {
            Value::Int(code) if (0..=255).contains(code) => Some(*code),
            Value::Int(code) => {
                self.push(
                    Diagnostic::new(
                        node.pos,
                        format!("`{key}` must be between 0 and 255, found {code}"),
                    )
                    .label("out of range"),
                );
                None
            }
            _ => {
                self.type_error(node, key, "a whole number");
                None
            }
        }
    }

    /// A substring to look for: an empty one would match anything.
    pub(super) fn needle(&mut self, node: &Node, key: &str) -> Option<String> {
        let text = self.string(node, key)?;
        if text.is_empty() {
            self.push(
                Diagnostic::new(
                    node.pos,
                    format!("`{key}` must not be empty: it would match any output"),
                )
                .label("empty"),
            );
            return None;
        }
        Some(text)
    }

    /// A regex over command strings; `ignore_case` for seed 002's case-insensitive
    /// command patterns.
    pub(super) fn command_regex(
        &mut self,
        node: &Node,
        key: &str,
        ignore_case: bool,
    ) -> Option<Regex> {
        let pattern = self.non_empty_string(node, key)?;
        let source = if ignore_case {
            format!("(?i){pattern}")
        } else {
            pattern
        };
        match ValueMatcher::regex(&source) {
            Ok(ValueMatcher::Regex { regex, .. }) => Some(regex),
            Ok(_) => None,
            Err(err) => {
                self.push(
                    Diagnostic::new(node.pos, format!("`{key}`: {}", err.message))
                        .label("invalid regex")
                        .hint("escape regex characters with `\\`, e.g. `rm -rf \\.`"),
                );
                None
            }
        }
    }

    pub(super) fn run_count(&mut self, node: &Node, scope: Scope) -> Option<AssertionKind> {
        let fields = self.map(node, "run_count")?;
        self.unknown_keys(&fields, &["pattern", "min", "max"], "`run_count`");
        let pattern = match fields.get("pattern") {
            Some(n) => self.command_regex(n, "pattern", false),
            None => {
                self.push(Diagnostic::new(fields.pos, "`run_count` needs `pattern:`"));
                None
            }
        };
        let (min, max) = self.count_range(
            &fields,
            "run_count",
            "to require at least one run, use `ran:`",
        )?;
        Some(AssertionKind::RunCount {
            pattern: pattern?,
            min,
            max,
            scope,
        })
    }
}
