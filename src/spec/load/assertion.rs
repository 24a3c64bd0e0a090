//! The `assertions:` list: each item's kind found in the table of `kinds.rs`, its `scope:`,
//! and the keys every assertion may carry.

use super::super::diagnostic::{Diagnostic, did_you_mean};
use super::super::node::{Key, Node, Value};
use super::super::{Assertion, AssertionKind, Scope};
use super::{ASSERTION_VARIANTS_KEY, CALL_KEYS, Ctx, Fields, kinds, list};

impl Ctx {
    pub(super) fn assertions(&mut self, node: &Node) -> Vec<Assertion> {
        let Value::Seq(items) = &node.value else {
            self.type_error(node, "assertions", "a list");
            return Vec::new();
        };
        if items.is_empty() {
            self.push(
                Diagnostic::new(
                    node.pos,
                    "`assertions` is empty: a test needs at least one assertion",
                )
                .hint("add e.g. `- tool: Bash` under `assertions:`"),
            );
        }
        items
            .iter()
            .filter_map(|item| self.assertion(item))
            .collect()
    }

    pub(super) fn assertion(&mut self, item: &Node) -> Option<Assertion> {
        let Value::Map(entries) = &item.value else {
            self.push(
                Diagnostic::new(
                    item.pos,
                    format!(
                        "an assertion must be a mapping, found {}",
                        item.value.type_name()
                    ),
                )
                .label("expected a mapping")
                .hint("write e.g. `- tool: Read` or `- exit_code: 0`"),
            );
            return None;
        };
        let anchor = entries.first().map_or(item.pos, |(k, _)| k.pos);
        let fields = Fields {
            entries,
            pos: anchor,
        };
        if entries.is_empty() {
            self.push(Diagnostic::new(item.pos, "empty assertion").hint(format!(
                "an assertion starts with one of: {}",
                list(&kinds::keys().collect::<Vec<_>>())
            )));
            return None;
        }

        let before = self.diags.len();
        let kind = if fields.get("tool").is_some() {
            self.tool_item_keys(&fields);
            self.tool(&fields).map(|t| AssertionKind::Tool(Box::new(t)))
        } else if fields.get("skill").is_some() {
            self.item_keys(&fields, "skill");
            self.skill(&fields)
                .map(|s| AssertionKind::Skill(Box::new(s)))
        } else {
            self.other_assertion(&fields)
        };
        let Some(kind) = kind else {
            // An assertion is never dropped silently: that would make a test pass unchecked.
            if self.diags.len() == before {
                self.push(
                    Diagnostic::new(anchor, "this assertion could not be read").label("here"),
                );
            }
            return None;
        };
        let variants = match fields.get(ASSERTION_VARIANTS_KEY) {
            Some(n) => {
                let declared = std::mem::take(&mut self.declared_variants);
                let names = self.assertion_variants(n, &declared);
                self.declared_variants = declared;
                names
            }
            None => None,
        };
        Some(Assertion {
            line: anchor.line,
            column: anchor.column,
            kind,
            variants,
        })
    }

    pub(super) fn other_assertion(&mut self, fields: &Fields<'_>) -> Option<AssertionKind> {
        let kinds: Vec<&Key> = fields
            .entries
            .iter()
            .map(|(k, _)| k)
            .filter(|k| kinds::is_kind(&k.name))
            .collect();
        let Some(first) = kinds.first() else {
            // No kind at all: every key is unknown; suggest the nearest kind or tool key.
            for (key, _) in fields.entries {
                let hint = did_you_mean(&key.name, kinds::keys().chain(CALL_KEYS.iter().copied()))
                    .map(|s| format!("did you mean `{s}`?"))
                    .unwrap_or_else(|| {
                        format!(
                            "an assertion starts with one of: {}",
                            list(&kinds::keys().collect::<Vec<_>>())
                        )
                    });
                let message = if CALL_KEYS.contains(&key.name.as_str()) {
                    format!(
                        "`{}` belongs to a tool assertion, which needs `tool:`",
                        key.name
                    )
                } else {
                    format!("unknown assertion key `{}`", key.name)
                };
                self.push(
                    Diagnostic::new(key.pos, message)
                        .label("unknown key")
                        .hint(hint),
                );
            }
            return None;
        };
        let kind = first.name.as_str();
        for extra in kinds.iter().skip(1) {
            self.push(
                Diagnostic::new(
                    extra.pos,
                    format!(
                        "one assertion per list item: found `{kind}` and `{}`",
                        extra.name
                    ),
                )
                .label("second assertion kind")
                .hint(format!("start a new list item: `- {}: …`", extra.name)),
            );
        }
        let scoped = kinds::find(kind).is_some_and(|k| k.scoped);
        for (key, _) in fields.entries {
            let name = key.name.as_str();
            if kinds::is_kind(name) || (scoped && name == "scope") || name == ASSERTION_VARIANTS_KEY
            {
                continue;
            }
            let message = if CALL_KEYS.contains(&name) {
                format!("`{name}` only applies to `tool:` assertions, not `{kind}`")
            } else {
                format!("unknown key `{name}` next to `{kind}`")
            };
            let allowed: &[&str] = if scoped { &["scope"] } else { &[] };
            let hint = did_you_mean(name, allowed.iter().copied())
                .map(|s| format!("did you mean `{s}`?"))
                .or_else(|| {
                    Some(if scoped {
                        format!("`{kind}` takes only `scope: main|all` beside it")
                    } else {
                        format!("`{kind}` takes no other key in its list item")
                    })
                });
            self.push(
                Diagnostic::new(key.pos, message)
                    .label("unexpected key")
                    .maybe_hint(hint),
            );
        }
        let scope = if scoped {
            self.scope(fields)
        } else {
            Scope::All
        };
        let node = fields.get(kind)?;
        let parse = kinds::find(kind)?.parse;
        parse(self, node, fields, scope)
    }

    pub(super) fn scope(&mut self, fields: &Fields<'_>) -> Scope {
        let Some(node) = fields.get("scope") else {
            return Scope::All;
        };
        match &node.value {
            Value::Str(s) if s == "main" => Scope::Main,
            Value::Str(s) if s == "all" => Scope::All,
            _ => {
                self.push(
                    Diagnostic::new(node.pos, "`scope` must be `main` or `all`")
                        .label("invalid scope")
                        .hint("`all` (the default) includes subagents' calls; `main` only the main agent's"),
                );
                Scope::All
            }
        }
    }
}
