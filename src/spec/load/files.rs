//! Assertions on the workspace after the run: files, `wrote`, `json_file` and `verify`
//! commands. Paths are checked not to leave the workspace.

use std::path::{Component, Path};

use super::super::diagnostic::Diagnostic;
use super::super::json_path::JsonPath;
use super::super::node::{Node, Value};
use super::super::{
    AssertionKind, AtLeast, DEFAULT_FAILING_VALUES, DEFAULT_VERIFY_TIMEOUT, JsonReportChecks,
    MinItems, NoFailures, TextCheck, VerifyAssertion,
};
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
        self.unknown_keys(
            &fields,
            &[
                "path",
                "required",
                "commands_ran",
                "no_failures",
                "min_items",
            ],
            "`json_file`",
        );
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
                    let fields: Vec<Option<JsonPath>> = items
                        .iter()
                        .map(|i| self.json_path(i, "required"))
                        .collect();
                    fields.into_iter().collect()
                }
                _ => {
                    self.type_error(n, "required", "a list of field names");
                    None
                }
            },
        };
        let report = self.json_report_checks(&fields);
        Some(AssertionKind::JsonFile {
            path: path?,
            required: required?,
            report: Box::new(report?),
        })
    }

    /// `json_file`'s report checks: `commands_ran`, `no_failures`, `min_items`.
    fn json_report_checks(&mut self, fields: &super::Fields<'_>) -> Option<JsonReportChecks> {
        let mut ok = true;
        let commands_ran = match fields.get("commands_ran") {
            None => None,
            Some(n) => match self.json_path(n, "commands_ran") {
                Some(p) if p.split_last().is_some() => Some(p),
                Some(p) => {
                    self.push(
                        Diagnostic::new(
                            n.pos,
                            format!(
                                "`commands_ran` path `{}` must end with a field name",
                                p.text
                            ),
                        )
                        .label("no command field")
                        .hint("name the field holding each command, e.g. `results[].command`"),
                    );
                    ok = false;
                    None
                }
                None => {
                    ok = false;
                    None
                }
            },
        };
        let no_failures = match fields.get("no_failures") {
            None => None,
            Some(n) => {
                let found = self.no_failures(n);
                ok &= found.is_some();
                found
            }
        };
        let min_items = match fields.get("min_items") {
            None => None,
            Some(n) => {
                let found = self.min_items(n);
                ok &= found.is_some();
                found
            }
        };
        ok.then_some(JsonReportChecks {
            commands_ran,
            no_failures,
            min_items,
        })
    }

    /// A `json_file` path such as `results[].command`.
    fn json_path(&mut self, node: &Node, key: &str) -> Option<JsonPath> {
        let text = self.non_empty_string(node, key)?;
        match JsonPath::parse(&text) {
            Ok(p) => Some(p),
            Err(why) => {
                self.push(
                    Diagnostic::new(node.pos, format!("`{key}` is not a valid path: {why}"))
                        .label("invalid path")
                        .hint("fields are separated by `.`, `[]` means each element: `results[].command`"),
                );
                None
            }
        }
    }

    /// `no_failures: "results[].status"` or `{path, values}`.
    fn no_failures(&mut self, node: &Node) -> Option<NoFailures> {
        let defaults = || {
            DEFAULT_FAILING_VALUES
                .iter()
                .map(|v| (*v).to_owned())
                .collect()
        };
        if let Value::Str(_) = &node.value {
            let path = self.json_path(node, "no_failures")?;
            return Some(NoFailures {
                path,
                values: defaults(),
            });
        }
        let fields = self.map(node, "no_failures")?;
        self.unknown_keys(&fields, &["path", "values"], "`no_failures`");
        let path = match fields.get("path") {
            Some(n) => self.json_path(n, "path"),
            None => {
                self.push(
                    Diagnostic::new(fields.pos, "`no_failures` needs `path:`")
                        .hint("write e.g. `path: \"results[].status\"`"),
                );
                None
            }
        };
        let values = match fields.get("values") {
            None => Some(defaults()),
            Some(n) => match &n.value {
                Value::Seq(items) if !items.is_empty() => items
                    .iter()
                    .map(|i| self.non_empty_string(i, "values"))
                    .collect::<Vec<_>>()
                    .into_iter()
                    .collect(),
                _ => {
                    self.type_error(n, "values", "a non-empty list of failing values");
                    None
                }
            },
        };
        Some(NoFailures {
            path: path?,
            values: values?,
        })
    }

    /// `min_items: {path, at_least: N}` or `{path, at_least_of: path | {file, path}}`.
    fn min_items(&mut self, node: &Node) -> Option<MinItems> {
        let fields = self.map(node, "min_items")?;
        self.unknown_keys(&fields, &["path", "at_least", "at_least_of"], "`min_items`");
        let path = match fields.get("path") {
            Some(n) => self.json_path(n, "path"),
            None => {
                self.push(Diagnostic::new(fields.pos, "`min_items` needs `path:`"));
                None
            }
        };
        let at_least = match (fields.get("at_least"), fields.get("at_least_of")) {
            (Some(n), None) => match &n.value {
                Value::Int(i) => match u32::try_from(*i) {
                    // Every array has at least 0 items: a check that can never fail.
                    Ok(0) => {
                        self.push(
                            Diagnostic::new(n.pos, "`at_least: 0` can never fail")
                                .label("always true")
                                .hint("at_least must be 1 or more"),
                        );
                        None
                    }
                    Ok(count) => Some(AtLeast::Count(count)),
                    Err(_) => {
                        self.type_error(n, "at_least", "a whole number of items");
                        None
                    }
                },
                _ => {
                    self.type_error(n, "at_least", "a whole number of items");
                    None
                }
            },
            (None, Some(n)) => match &n.value {
                Value::Str(_) => self
                    .json_path(n, "at_least_of")
                    .map(|path| AtLeast::ItemsOf { file: None, path }),
                _ => {
                    let of = self.map(n, "at_least_of")?;
                    self.unknown_keys(&of, &["file", "path"], "`at_least_of`");
                    let file = of.get("file").and_then(|f| self.workspace_path(f, "file"));
                    let path = match of.get("path") {
                        Some(p) => self.json_path(p, "path"),
                        None => {
                            self.push(Diagnostic::new(of.pos, "`at_least_of` needs `path:`"));
                            None
                        }
                    };
                    if of.get("file").is_some() && file.is_none() {
                        return None;
                    }
                    path.map(|path| AtLeast::ItemsOf { file, path })
                }
            },
            (Some(_), Some(_)) => {
                self.push(
                    Diagnostic::new(
                        fields.key_pos("at_least_of"),
                        "`min_items` takes `at_least:` or `at_least_of:`, not both",
                    )
                    .label("second count"),
                );
                None
            }
            (None, None) => {
                self.push(
                    Diagnostic::new(
                        fields.pos,
                        "`min_items` needs `at_least: N` or `at_least_of: <path>`",
                    )
                    .hint("write e.g. `at_least_of: acceptance_criteria`"),
                );
                None
            }
        };
        Some(MinItems {
            path: path?,
            at_least: at_least?,
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
