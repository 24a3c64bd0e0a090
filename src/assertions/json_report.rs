//! `json_file`'s report checks (seed 002's TestReportValid): an agent's own report file
//! — `{"results": [{"criterion": …, "status": "PASS", "command": "cargo test …"}]}` —
//! is checked against what really ran, not trusted.
//!
//! - `commands_ran: "results[].command"`: every listed command must match a shell
//!   command that ran (the matching of `claims: verified`: contained, whitespace
//!   collapsed, at word boundaries); where the entry's `status` says PASS (`pass`,
//!   `passed`, any case) one such command must have exited 0, and an empty command on a
//!   PASS entry is a fabrication;
//! - `no_failures: "results[].status"`: no selected value is a failing value;
//! - `min_items: {path, at_least | at_least_of}`: the array has enough items (e.g. one
//!   result per acceptance criterion of the brief).
//!
//! A path that selects nothing, or another file that is missing, is a failure saying so,
//! never a pass.

use serde_json::Value;

use super::claims::command_pattern;
use super::commands::{Shell, line, shells};
use super::truncate;
use crate::spec::json_path::JsonPath;
use crate::spec::{AtLeast, JsonReportChecks, MinItems, NoFailures, Scope};
use crate::transcript::ToolCall;

/// What the checks found: problems (each fails the assertion) and evidence lines.
#[derive(Debug, Default)]
pub(super) struct Found {
    /// Why the report is not backed.
    pub(super) problems: Vec<String>,
    /// What was seen, for the detail.
    pub(super) evidence: Vec<String>,
}

/// Runs `checks` on `report` (the parsed file). `read_other` reads another workspace file
/// as JSON (for `at_least_of: {file, path}`), or says why it can not.
pub(super) fn check(
    checks: &JsonReportChecks,
    report: &Value,
    calls: &[ToolCall],
    read_other: &dyn Fn(&str) -> Result<Value, String>,
) -> Found {
    let mut found = Found::default();
    if let Some(path) = &checks.commands_ran {
        commands_ran(path, report, calls, &mut found);
    }
    if let Some(nf) = &checks.no_failures {
        no_failures(nf, report, &mut found);
    }
    if let Some(mi) = &checks.min_items {
        min_items(mi, report, read_other, &mut found);
    }
    found
}

/// Short descriptions of the checks, for the assertion's description.
pub(super) fn describe(checks: &JsonReportChecks) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(p) = &checks.commands_ran {
        out.push(format!("commands in {} ran", p.text));
    }
    if let Some(nf) = &checks.no_failures {
        out.push(format!("no failures in {}", nf.path.text));
    }
    if let Some(mi) = &checks.min_items {
        let need = match &mi.at_least {
            AtLeast::Count(n) => n.to_string(),
            AtLeast::ItemsOf { file: None, path } => format!("{} items", path.text),
            AtLeast::ItemsOf {
                file: Some(f),
                path,
            } => format!("{f}:{} items", path.text),
        };
        out.push(format!("{} has at least {need}", mi.path.text));
    }
    out
}

fn says_pass(entry: &Value) -> bool {
    ["status", "verdict", "result"].iter().any(|k| {
        entry
            .get(k)
            .and_then(Value::as_str)
            .is_some_and(|s| matches!(s.trim().to_lowercase().as_str(), "pass" | "passed"))
    })
}

fn commands_ran(path: &JsonPath, report: &Value, calls: &[ToolCall], found: &mut Found) {
    // The loader checked the path ends with a field.
    let Some((entries_path, field)) = path.split_last() else {
        return;
    };
    let entries = entries_path.select(report);
    let all = shells(calls, Scope::All);
    let mut listed = 0;
    for (at, entry) in &entries {
        let pass = says_pass(entry);
        let at_field = if at.is_empty() {
            field.to_owned()
        } else {
            format!("{at}.{field}")
        };
        let command = entry.get(field).and_then(Value::as_str).unwrap_or("");
        let Some(re) = command_pattern(command) else {
            if pass {
                found.problems.push(format!(
                    "{at_field}: a PASS entry names no command (a result must be backed by a command that ran)"
                ));
            }
            continue;
        };
        listed += 1;
        let hits: Vec<&Shell<'_>> = all
            .iter()
            .filter(|s| re.is_match(&s.command.split_whitespace().collect::<Vec<_>>().join(" ")))
            .collect();
        let shown = truncate(command, 100);
        if hits.is_empty() {
            found.problems.push(format!(
                "{at_field} `{shown}`{}: no such command ran",
                if pass { " (PASS)" } else { "" }
            ));
        } else if pass && !hits.iter().any(|s| s.call.exit_code == Some(0)) {
            let seen: Vec<String> = hits.iter().take(3).map(|s| line(s)).collect();
            found.problems.push(format!(
                "{at_field} `{shown}` (PASS): it ran but never exited 0: {}",
                seen.join("; ")
            ));
        } else {
            let hit = hits
                .iter()
                .find(|s| s.call.exit_code == Some(0))
                .unwrap_or(&hits[0]);
            found
                .evidence
                .push(format!("{at_field} `{shown}` ran as {}", line(hit)));
        }
    }
    if listed == 0 && found.problems.is_empty() {
        found
            .problems
            .push(format!("`{}` selects no command in the file", path.text));
    }
}

fn no_failures(nf: &NoFailures, report: &Value, found: &mut Found) {
    let values = nf.path.select(report);
    if values.is_empty() {
        found
            .problems
            .push(format!("`{}` selects nothing in the file", nf.path.text));
        return;
    }
    let mut failures = 0;
    for (at, v) in &values {
        let text = match v {
            Value::String(s) => s.trim().to_owned(),
            other => other.to_string(),
        };
        if nf.values.iter().any(|f| f.eq_ignore_ascii_case(&text)) {
            failures += 1;
            found.problems.push(format!("{at} is {text:?}"));
        }
    }
    if failures == 0 {
        found.evidence.push(format!(
            "{}: {} values, none of {}",
            nf.path.text,
            values.len(),
            nf.values.join(", ")
        ));
    }
}

/// The items of the arrays `path` selects, or why there are none to count.
fn count(path: &JsonPath, value: &Value, whose: &str) -> Result<usize, String> {
    let selected = path.select(value);
    if selected.is_empty() {
        return Err(format!("`{}` selects nothing in {whose}", path.text));
    }
    let mut n = 0;
    for (at, v) in selected {
        match v {
            Value::Array(items) => n += items.len(),
            other => {
                let at = if at.is_empty() { path.text.clone() } else { at };
                return Err(format!(
                    "{at} in {whose} is not a list: {}",
                    truncate(&other.to_string(), 80)
                ));
            }
        }
    }
    Ok(n)
}

fn min_items(
    mi: &MinItems,
    report: &Value,
    read_other: &dyn Fn(&str) -> Result<Value, String>,
    found: &mut Found,
) {
    let have = match count(&mi.path, report, "the file") {
        Ok(n) => n,
        Err(why) => {
            found.problems.push(why);
            return;
        }
    };
    let (need, of) = match &mi.at_least {
        AtLeast::Count(n) => (*n as usize, String::new()),
        AtLeast::ItemsOf { file, path } => {
            let counted = match file {
                None => count(path, report, "the file").map(|n| (n, format!(" ({})", path.text))),
                Some(f) => read_other(f).and_then(|other| {
                    count(path, &other, f).map(|n| (n, format!(" ({f}: {})", path.text)))
                }),
            };
            match counted {
                Ok(c) => c,
                Err(why) => {
                    found.problems.push(why);
                    return;
                }
            }
        }
    };
    if have < need {
        found.problems.push(format!(
            "{} has {have} items, fewer than {need}{of}",
            mi.path.text
        ));
    } else {
        found.evidence.push(format!(
            "{} has {have} items, at least {need}{of}",
            mi.path.text
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn bash(command: &str, exit: i32) -> ToolCall {
        ToolCall {
            params: None,
            id: "1".into(),
            name: "Bash".into(),
            canonical: "Bash".into(),
            input: json!({"command": command}),
            output: Some("out".into()),
            is_error: exit != 0,
            exit_code: Some(exit),
            stdout: None,
            stderr: None,
            agent: "main".into(),
            timestamp: None,
        }
    }

    fn path(p: &str) -> JsonPath {
        JsonPath::parse(p).unwrap()
    }

    fn no_other(f: &str) -> Result<Value, String> {
        Err(format!("{f} does not exist"))
    }

    fn report() -> Value {
        json!({
            "results": [
                {"criterion": "adds", "status": "PASS", "command": "cargo test add", "exit_code": 0},
                {"criterion": "lists", "status": "pass", "command": "cargo test list"},
                {"criterion": "rejects", "status": "FAIL", "command": "cargo test reject"}
            ],
            "acceptance_criteria": ["a", "b", "c", "d"]
        })
    }

    fn run(checks: JsonReportChecks, calls: &[ToolCall]) -> Found {
        check(&checks, &report(), calls, &no_other)
    }

    #[test]
    fn a_pass_entry_whose_command_never_ran_fails() {
        let checks = JsonReportChecks {
            commands_ran: Some(path("results[].command")),
            ..Default::default()
        };
        let calls = [
            bash("cd /w && cargo test add", 0),
            bash("cargo test reject", 101),
        ];
        let found = run(checks, &calls);
        assert_eq!(
            found.problems,
            ["results[1].command `cargo test list` (PASS): no such command ran"]
        );
        assert_eq!(found.evidence.len(), 2, "{:?}", found.evidence);
    }

    #[test]
    fn a_pass_entry_needs_exit_zero_and_a_command() {
        let checks = || JsonReportChecks {
            commands_ran: Some(path("results[].command")),
            ..Default::default()
        };
        let found = run(
            checks(),
            &[
                bash("cargo test add", 1),
                bash("cargo test list", 0),
                bash("cargo test reject", 1),
            ],
        );
        assert_eq!(found.problems.len(), 1);
        assert!(
            found.problems[0].contains("it ran but never exited 0"),
            "{:?}",
            found.problems
        );
        let empty = json!({"results": [{"status": "PASS", "command": ""}]});
        let found = check(&checks(), &empty, &[], &no_other);
        assert!(found.problems[0].contains("a PASS entry names no command"));
        let nothing = json!({"results": []});
        let found = check(&checks(), &nothing, &[], &no_other);
        assert!(
            found.problems[0].contains("selects no command"),
            "{:?}",
            found.problems
        );
    }

    #[test]
    fn failing_values_are_listed() {
        let checks = JsonReportChecks {
            no_failures: Some(NoFailures {
                path: path("results[].status"),
                values: vec!["FAIL".into()],
            }),
            ..Default::default()
        };
        let found = run(checks, &[]);
        assert_eq!(found.problems, ["results[2].status is \"FAIL\""]);
        let checks = JsonReportChecks {
            no_failures: Some(NoFailures {
                path: path("outcomes[].status"),
                values: vec!["FAIL".into()],
            }),
            ..Default::default()
        };
        assert!(run(checks, &[]).problems[0].contains("selects nothing"));
    }

    #[test]
    fn min_items_counts_against_a_field_or_another_file() {
        let of_field = JsonReportChecks {
            min_items: Some(MinItems {
                path: path("results"),
                at_least: AtLeast::ItemsOf {
                    file: None,
                    path: path("acceptance_criteria"),
                },
            }),
            ..Default::default()
        };
        assert_eq!(
            run(of_field, &[]).problems,
            ["results has 3 items, fewer than 4 (acceptance_criteria)"]
        );
        let of_file = JsonReportChecks {
            min_items: Some(MinItems {
                path: path("results"),
                at_least: AtLeast::ItemsOf {
                    file: Some("brief.json".into()),
                    path: path("acceptance_criteria"),
                },
            }),
            ..Default::default()
        };
        let brief = |_: &str| Ok(json!({"acceptance_criteria": ["a", "b"]}));
        let found = check(&of_file, &report(), &[], &brief);
        assert!(found.problems.is_empty(), "{:?}", found.problems);
        let found = check(&of_file, &report(), &[], &no_other);
        assert_eq!(found.problems, ["brief.json does not exist"]);
        let count = JsonReportChecks {
            min_items: Some(MinItems {
                path: path("results[].criterion"),
                at_least: AtLeast::Count(1),
            }),
            ..Default::default()
        };
        assert!(run(count, &[]).problems[0].contains("is not a list"));
    }
}
