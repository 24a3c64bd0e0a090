//! `variants:`: the test's workspace and settings changed one way each, so one file answers
//! "does my instruction change what the agent does?"; and `variants:` beside an assertion,
//! naming the variants it applies to.
//!
//! ```yaml
//! variants:
//!   baseline: {remove: [AGENTS.md]}
//!   with-skill: {add: {".claude/skills/deploy/SKILL.md": {from: fixtures/deploy-skill.md}}}
//!   strict: {env: {STRICT: "1"}, model: claude-sonnet-4-5, prompt: "…"}
//! ```

use std::path::Path;

use super::super::diagnostic::Diagnostic;
use super::super::node::{Node, Value};
use super::super::{DEFAULT_VARIANT, Variant};
use super::{Ctx, Fields};

/// The keys of one variant.
const VARIANT_KEYS: &[&str] = &["remove", "add", "env", "model", "prompt"];

/// The most bytes an `add: {from: …}` file may hold.
const MAX_ADD_BYTES: u64 = 1 << 20;

impl Ctx {
    /// The test's `variants:`; `test_file` resolves `from:` paths.
    pub(super) fn variants(&mut self, node: &Node, test_file: &Path) -> Vec<Variant> {
        let Some(fields) = self.map(node, "variants") else {
            return Vec::new();
        };
        let mut variants = Vec::new();
        for (key, value) in fields.entries {
            if key.name == DEFAULT_VARIANT {
                self.push(
                    Diagnostic::new(key.pos, "a variant can not be named `default`")
                        .label("reserved name")
                        .hint("`default` is the test as written; give this variant another name"),
                );
                continue;
            }
            if key.name.trim().is_empty() {
                self.push(Diagnostic::new(key.pos, "a variant needs a name").label("empty"));
                continue;
            }
            let what = format!("variant `{}`", key.name);
            let Some(entry) = self.map(value, &what) else {
                continue;
            };
            self.unknown_keys(&entry, VARIANT_KEYS, &format!("a {what}"));
            let remove = entry
                .get("remove")
                .map(|n| self.path_list(n, "remove"))
                .unwrap_or_default();
            let add = entry
                .get("add")
                .map(|n| self.added_files(n, test_file))
                .unwrap_or_default();
            let env = entry.get("env").map(|n| self.env(n)).unwrap_or_default();
            let model = entry
                .get("model")
                .and_then(|n| self.non_empty_string(n, "model"));
            let prompt = entry
                .get("prompt")
                .and_then(|n| self.non_empty_string(n, "prompt"));
            variants.push(Variant {
                name: key.name.clone(),
                remove,
                add,
                env,
                model,
                prompt,
            });
        }
        variants
    }

    /// `remove: path` or `remove: [paths]`, each inside the workspace.
    fn path_list(&mut self, node: &Node, key: &str) -> Vec<String> {
        match &node.value {
            Value::Seq(items) => items
                .iter()
                .filter_map(|i| self.workspace_path(i, key))
                .collect(),
            _ => self.workspace_path(node, key).into_iter().collect(),
        }
    }

    /// `add: {path: "text" | {from: file}}`.
    fn added_files(&mut self, node: &Node, test_file: &Path) -> Vec<(String, String)> {
        let Some(fields) = self.map(node, "add") else {
            return Vec::new();
        };
        let mut files = Vec::new();
        for (key, value) in fields.entries {
            let path_node = Node {
                pos: key.pos,
                value: Value::Str(key.name.clone()),
            };
            let Some(path) = self.workspace_path(&path_node, "add") else {
                continue;
            };
            let content = match &value.value {
                Value::Str(text) => Some(text.clone()),
                Value::Map(_) => self.add_from(value, test_file),
                _ => {
                    self.type_error(value, &format!("add.{path}"), "text or `{from: FILE}`");
                    None
                }
            };
            if let Some(content) = content {
                files.push((path, content));
            }
        }
        files
    }

    /// `{from: file}`, read now (relative to the test file's directory).
    fn add_from(&mut self, node: &Node, test_file: &Path) -> Option<String> {
        let fields: Fields<'_> = self.map(node, "add")?;
        self.unknown_keys(&fields, &["from"], "an `add` entry");
        let from_node = fields.get("from")?;
        let from = self.non_empty_string(from_node, "from")?;
        let dir = test_file.parent().unwrap_or(Path::new("."));
        let path = dir.join(&from);
        match crate::shared::files::read_capped(&path, MAX_ADD_BYTES) {
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(text) => Some(text),
                Err(_) => {
                    self.push(
                        Diagnostic::new(
                            from_node.pos,
                            format!("`from` file {from:?} is not UTF-8 text"),
                        )
                        .label("not text"),
                    );
                    None
                }
            },
            Err(e) => {
                self.push(
                    Diagnostic::new(
                        from_node.pos,
                        format!("`from` file {from:?} can not be read: {e}"),
                    )
                    .label("missing or unreadable")
                    .hint("a `from` path is relative to the test file's directory"),
                );
                None
            }
        }
    }

    /// `variants: [names]` beside an assertion, each `default` or a declared variant.
    pub(super) fn assertion_variants(
        &mut self,
        node: &Node,
        declared: &[String],
    ) -> Option<Vec<String>> {
        let items: Vec<&Node> = match &node.value {
            Value::Seq(items) => items.iter().collect(),
            Value::Str(_) => vec![node],
            _ => {
                self.type_error(node, "variants", "a list of variant names");
                return None;
            }
        };
        let mut names = Vec::new();
        for item in items {
            let Some(name) = self.non_empty_string(item, "variants") else {
                continue;
            };
            if name != DEFAULT_VARIANT && !declared.contains(&name) {
                let known: Vec<&str> = std::iter::once(DEFAULT_VARIANT)
                    .chain(declared.iter().map(String::as_str))
                    .collect();
                let hint = crate::shared::suggest::did_you_mean(&name, known.iter().copied())
                    .map(|s| format!("did you mean `{s}`?"))
                    .unwrap_or_else(|| format!("this test's variants: {}", known.join(", ")));
                self.push(
                    Diagnostic::new(item.pos, format!("unknown variant `{name}`"))
                        .label("not declared under `variants:`")
                        .hint(hint),
                );
                continue;
            }
            names.push(name);
        }
        Some(names)
    }
}
