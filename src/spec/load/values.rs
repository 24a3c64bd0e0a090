//! The test's plain values: `workspace:`, `setup:`, `inputs:`, `env:` and durations, read
//! with positions.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::super::diagnostic::Diagnostic;
use super::super::node::{Node, Value};
use super::Ctx;

impl Ctx {
    /// `workspace: path` or `workspace: {path, git}`.
    pub(super) fn workspace(&mut self, node: &Node) -> (Option<PathBuf>, bool) {
        if let Value::Map(_) = node.value {
            let Some(fields) = self.map(node, "workspace") else {
                return (None, false);
            };
            self.unknown_keys(&fields, &["path", "git"], "`workspace`");
            let path = fields
                .get("path")
                .and_then(|n| self.non_empty_string(n, "path"))
                .map(PathBuf::from);
            let git = fields
                .get("git")
                .and_then(|n| self.bool(n, "git"))
                .unwrap_or(false);
            return (path, git);
        }
        match &node.value {
            Value::Str(_) => (
                self.non_empty_string(node, "workspace").map(PathBuf::from),
                false,
            ),
            _ => {
                self.type_error(
                    node,
                    "workspace",
                    "a path or a mapping with `path` and `git`",
                );
                (None, false)
            }
        }
    }

    pub(super) fn setup(&mut self, node: &Node) -> Vec<String> {
        match &node.value {
            Value::Str(s) => vec![s.clone()],
            Value::Seq(items) => items
                .iter()
                .filter_map(|item| self.non_empty_string(item, "setup"))
                .collect(),
            _ => {
                self.type_error(node, "setup", "a command or a list of commands");
                Vec::new()
            }
        }
    }

    /// `inputs: glob` or a list of globs; each must compile and, when the file system is
    /// checked, match a file (relative to `test_file`'s directory): a glob that matches
    /// nothing would leave the fingerprint blind to what it meant to name.
    pub(super) fn inputs(&mut self, node: &Node, test_file: &Path) -> Vec<String> {
        let items: Vec<&Node> = match &node.value {
            Value::Str(_) => vec![node],
            Value::Seq(items) => items.iter().collect(),
            _ => {
                self.type_error(node, "inputs", "a glob or a list of globs");
                return Vec::new();
            }
        };
        let mut globs = Vec::new();
        for item in items {
            let Some(glob) = self.non_empty_string(item, "inputs") else {
                continue;
            };
            match globset::Glob::new(&glob) {
                Ok(_) if self.check_workspace => {
                    let base = test_file
                        .parent()
                        .filter(|p| !p.as_os_str().is_empty())
                        .unwrap_or(Path::new("."));
                    match crate::shared::files::matching_files(base, &glob) {
                        Ok(files) if files.is_empty() => self.push(
                            Diagnostic::new(item.pos, format!("`inputs: {glob}` matches no file"))
                                .label(format!(
                                    "relative to {}",
                                    super::super::diagnostic::display_path(base)
                                ))
                                .hint(
                                    "name files or directories that exist, relative to the test \
                                     file's directory, e.g. `../src/**/*.rs` or `../src`",
                                ),
                        ),
                        _ => globs.push(glob),
                    }
                }
                Ok(_) => globs.push(glob),
                Err(e) => self.push(
                    Diagnostic::new(item.pos, format!("`inputs: {glob}` is not a glob"))
                        .label(e.kind().to_string())
                        .hint(
                            "a glob relative to the test file's directory, e.g. `../src/**/*.rs`",
                        ),
                ),
            }
        }
        globs
    }

    pub(super) fn env(&mut self, node: &Node) -> BTreeMap<String, String> {
        let mut env = BTreeMap::new();
        let Some(fields) = self.map(node, "env") else {
            return env;
        };
        for (key, value) in fields.entries {
            let text = match &value.value {
                Value::Str(s) => s.clone(),
                Value::Int(i) => i.to_string(),
                Value::Float(f) => f.to_string(),
                Value::Bool(b) => b.to_string(),
                _ => {
                    self.type_error(value, &format!("env.{}", key.name), "a string");
                    continue;
                }
            };
            env.insert(key.name.clone(), text);
        }
        env
    }

    pub(super) fn duration(&mut self, node: &Node, key: &str) -> Option<std::time::Duration> {
        let hint = "write a duration such as \"30s\", \"5m\" or \"1h 30m\"";
        let Value::Str(text) = &node.value else {
            self.push(
                Diagnostic::new(
                    node.pos,
                    format!(
                        "`{key}` must be a duration, found {}",
                        node.value.type_name()
                    ),
                )
                .label("expected a duration")
                .hint(hint),
            );
            return None;
        };
        match humantime::parse_duration(text) {
            Ok(d) if !d.is_zero() => Some(d),
            Ok(_) => {
                self.push(
                    Diagnostic::new(node.pos, format!("`{key}` must be longer than zero"))
                        .label("zero"),
                );
                None
            }
            Err(err) => {
                self.push(
                    Diagnostic::new(
                        node.pos,
                        format!("invalid duration {text:?} for `{key}`: {err}"),
                    )
                    .label("invalid duration")
                    .hint(hint),
                );
                None
            }
        }
    }
}
