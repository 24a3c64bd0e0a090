//! Assertions on the workspace after the run: files, `wrote`, `json_file` and `verify`
//! commands. Paths are checked not to leave the workspace.

use std::path::{Component, Path};

use super::super::diagnostic::Diagnostic;
use super::super::node::{Node, Value};
use super::super::{AssertionKind, DEFAULT_VERIFY_TIMEOUT, TextCheck, VerifyAssertion};
use super::Ctx;

impl Ctx {
    pub(super) fn workspace_path(&mut self, node: &Node, key: &str) -> Option<String> {
        let path = self.non_empty_string(node, key)?;
        let p = Path::new(&path);
        let mut depth: i64 = 0;
        let mut escapes = p.is_absolute();
        for component in p.components() {
            match component {
                Component::ParentDir => depth -= 1,
                Component::Normal(_) => depth += 1,
                Component::RootDir | Component::Prefix(_) => escapes = true,
                Component::CurDir => {}
            }
            if depth < 0 {
                escapes = true;
            }
        }
        if escapes {
            self.push(
                Diagnostic::new(
                    node.pos,
                    format!("`{key}` path {path:?} leaves the workspace"),
                )
                .label("outside the workspace")
                .hint("paths are relative to the workspace root, e.g. `out/report.json`"),
            );
            return None;
        }
        Some(path)
    }

    pub(super) fn file_contains(&mut self, node: &Node) -> Option<AssertionKind> {
        let fields = self.map(node, "file_contains")?;
        self.unknown_keys(&fields, &["path", "text", "matches"], "`file_contains`");
        let path = match fields.get("path") {
            Some(n) => self.workspace_path(n, "path"),
            None => {
                self.push(Diagnostic::new(fields.pos, "`file_contains` needs `path:`"));
                None
            }
        };
        let check = match (fields.get("text"), fields.get("matches")) {
            (Some(n), None) => self.needle(n, "text").map(TextCheck::Contains),
            (None, Some(n)) => self
                .command_regex(n, "matches", false)
                .map(TextCheck::Matches),
            (Some(_), Some(_)) => {
                self.push(
                    Diagnostic::new(
                        fields.key_pos("matches"),
                        "`file_contains` takes `text:` or `matches:`, not both",
                    )
                    .label("second check")
                    .hint("use two `file_contains` assertions to check both"),
                );
                None
            }
            (None, None) => {
                self.push(Diagnostic::new(
                    fields.pos,
                    "`file_contains` needs `text:` (a substring) or `matches:` (a regex)",
                ));
                None
            }
        };
        Some(AssertionKind::FileContains {
            path: path?,
            check: check?,
        })
    }

    pub(super) fn wrote(&mut self, node: &Node) -> Option<AssertionKind> {
        let items: Vec<&Node> = match &node.value {
            Value::Str(_) => vec![node],
            Value::Seq(items) if !items.is_empty() => items.iter().collect(),
            Value::Seq(_) => {
                self.push(Diagnostic::new(node.pos, "`wrote` lists no path").label("empty list"));
                return None;
            }
            _ => {
                self.type_error(node, "wrote", "a list of paths");
                return None;
            }
        };
        let mut paths = Vec::new();
        let mut ok = true;
        for item in items {
            // Absolute paths are allowed here: agents report absolute paths, matched by tail.
            match self.non_empty_string(item, "wrote") {
                Some(p) if p.split('/').any(|c| c == "..") => {
                    self.push(
                        Diagnostic::new(
                            item.pos,
                            format!("`wrote` path {p:?} leaves the workspace"),
                        )
                        .label("outside the workspace"),
                    );
                    ok = false;
                }
                Some(p) => paths.push(p),
                None => ok = false,
            }
        }
        ok.then_some(AssertionKind::Wrote { paths })
    }

    pub(super) fn json_file(&mut self, node: &Node) -> Option<AssertionKind> {
        let fields = self.map(node, "json_file")?;
        self.unknown_keys(&fields, &["path", "required"], "`json_file`");
        let path = match fields.get("path") {
            Some(n) => self.workspace_path(n, "path"),
            None => {
                self.push(Diagnostic::new(fields.pos, "`json_file` needs `path:`"));
                None
            }
        };
        let required = match fields.get("required") {
            None => Some(Vec::new()),
            Some(n) => match &n.value {
                Value::Seq(items) => {
                    let fields: Vec<Option<String>> = items
                        .iter()
                        .map(|i| self.non_empty_string(i, "required"))
                        .collect();
                    fields.into_iter().collect()
                }
                _ => {
                    self.type_error(n, "required", "a list of field names");
                    None
                }
            },
        };
        Some(AssertionKind::JsonFile {
            path: path?,
            required: required?,
        })
    }

    pub(super) fn verify(&mut self, node: &Node) -> Option<VerifyAssertion> {
        let fields = self.map(node, "verify")?;
        self.unknown_keys(
            &fields,
            &[
                "run",
                "output_contains",
                "output_equals",
                "exit_code",
                "timeout",
            ],
            "`verify`",
        );
        let run = match fields.get("run") {
            Some(n) => self.non_empty_string(n, "run"),
            None => {
                self.push(
                    Diagnostic::new(fields.pos, "`verify` needs `run:`")
                        .hint("write e.g. `run: \"test -f out.txt\"`"),
                );
                None
            }
        };
        let output_contains = fields
            .get("output_contains")
            .and_then(|n| self.needle(n, "output_contains"));
        let output_equals = fields
            .get("output_equals")
            .and_then(|n| self.string(n, "output_equals"));
        let exit_code = match fields.get("exit_code") {
            Some(n) => self.exit_code(n, "exit_code")?,
            None => 0,
        };
        let timeout = match fields.get("timeout") {
            Some(n) => self.duration(n, "timeout")?,
            None => DEFAULT_VERIFY_TIMEOUT,
        };
        Some(VerifyAssertion {
            run: run?,
            exit_code,
            output_contains,
            output_equals,
            timeout,
        })
    }
}
