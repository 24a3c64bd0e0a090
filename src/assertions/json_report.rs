//! `json_file`'s report checks (seed 002's TestReportValid): an agent's own report file
//! — `{"results": [{"criterion": …, "status": "PASS", "command": "cargo test …"}]}` —
//! is checked against what really ran, not trusted.
//!
//! - `commands_ran: "results[].command"`: every listed command must match a shell
//!   command that ran (the matching and judging of `claims: verified`,
//!   [`super::commands::backing`]). An entry that is not clearly failing claims success:
//!   one such command must have exited 0 (one without a recorded exit code can not be
//!   checked: `error`), and an empty command on it is a fabrication. An entry is clearly
//!   failing when a status-like field ([`STATUS_KEYS`]) holds a failing word
//!   ([`DEFAULT_FAILING_VALUES`], or `no_failures`' own values) or `false`, or its exit
//!   code field ([`EXIT_KEYS`]) is not 0 — and none holds a passing word ([`PASS_VALUES`]),
//!   `true` or exit code 0. Anything else, however worded (`success`, `✓`, no status at
//!   all), is held to success: no wording turns a failed command into a pass;
//! - `no_failures: "results[].status"`: no selected value is a failing value, ignoring
//!   case, whole or as its first word (`FAILED (2 of 5)`);
//! - `min_items: {path, at_least | at_least_of}`: the array has enough items (e.g. one
//!   result per acceptance criterion of the brief).
//!
//! A path that selects nothing, or another file that is missing, is a failure saying so,
//! never a pass.

use serde_json::Value;

use super::commands::{Backing, backing, claimed_calls, command_pattern, line, shells};
use super::truncate;
use crate::assertions::judge::claims::ClaimOutcome;
use crate::spec::json_path::JsonPath;
use crate::spec::{AtLeast, DEFAULT_FAILING_VALUES, JsonReportChecks, MinItems, NoFailures, Scope};
use crate::transcript::ToolCall;

/// The fields of a report entry that state its outcome, as words (`"status": "PASS"`)
/// or booleans (`"passed": true`). Documented in `docs/yaml-api.md`.
pub const STATUS_KEYS: &[&str] = &[
    "status",
    "verdict",
    "result",
    "outcome",
    "state",
    "conclusion",
    "passed",
    "pass",
    "success",
    "succeeded",
    "ok",
];

/// The fields of a report entry that state its command's exit code (0: passed).
/// Documented in `docs/yaml-api.md`.
pub const EXIT_KEYS: &[&str] = &["exit_code", "exitCode", "exit_status", "returncode"];

/// Words of a status-like field that claim a pass, compared as the failing values are
/// (ignoring case, whole or first word). JSON `true` is the value `true`. Documented in
/// `docs/yaml-api.md`.
pub const PASS_VALUES: &[&str] = &[
    "pass",
    "passed",
    "passing",
    "passes",
    "ok",
    "okay",
    "success",
    "succeeded",
    "successful",
    "succeeds",
    "green",
    "true",
    "yes",
    "done",
    "complete",
    "completed",
    "verified",
    "✓",
    "✔",
    "✅",
];

/// What the checks found: problems (each fails the assertion), what could not be
/// checked (makes it `error` when nothing failed) and evidence lines.
#[derive(Debug, Default)]
pub(super) struct Found {
    /// Why the report is not backed.
    pub(super) problems: Vec<String>,
    /// What could not be checked either way, and why.
    pub(super) unknown: Vec<String>,
    /// What was seen, for the detail.
    pub(super) evidence: Vec<String>,
}

/// Runs `checks` on `report` (the parsed file). `read_other` reads another workspace file
/// as JSON (for `at_least_of: {file, path}`), or says why it can not.
pub(super) fn check(
    checks: &JsonReportChecks,
    report: &Value,
    calls: &[ToolCall],
    read_other: &dyn Fn(&str) -> Result<Value, CountError>,
) -> Found {
    let mut found = Found::default();
    if let Some(path) = &checks.commands_ran {
        let failing: Vec<&str> = DEFAULT_FAILING_VALUES
            .iter()
            .copied()
            .chain(
                checks
                    .no_failures
                    .iter()
                    .flat_map(|nf| nf.values.iter().map(String::as_str)),
            )
            .collect();
        commands_ran(path, report, calls, &failing, &mut found);
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

/// A JSON value as the word lists see it: a string trimmed, anything else as JSON
/// (`false`, `0`).
fn as_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.trim().to_owned(),
        other => other.to_string(),
    }
}

/// Whether `text` is one of `words` (ignoring case), whole or as its first word: the
/// word followed by something that is not a letter or digit (`FAILED (2 of 5)`,
/// `fail - 2 tests`; not `passport`), a symbol such as `✗` by anything. For
/// `no_failures` and pass words, where reading too much as a failure (or a pass claim)
/// only makes the check stricter.
fn first_word_is(text: &str, words: &[&str]) -> bool {
    let text = text.trim().to_lowercase();
    words.iter().any(|w| {
        let w = w.to_lowercase();
        let symbol = !w.chars().any(char::is_alphanumeric);
        text.strip_prefix(w.as_str())
            .is_some_and(|rest| symbol || rest.chars().next().is_none_or(|c| !c.is_alphanumeric()))
    })
}

/// Whether `text` clearly states one of `words`: the word alone, or followed by
/// punctuation (`FAILED (2 of 5)`, `fail: timeout`; a symbol such as `✗` by anything) —
/// not prose that starts with it (`error handling works`, `failed 2 tests`). For
/// `commands_ran`, where reading too much as a failure would excuse a failed command.
fn states(text: &str, words: &[&str]) -> bool {
    let text = text.trim().to_lowercase();
    words.iter().any(|w| {
        let w = w.to_lowercase();
        let Some(rest) = text.strip_prefix(w.as_str()) else {
            return false;
        };
        let symbol = !w.chars().any(char::is_alphanumeric);
        match rest.trim_start().chars().next() {
            None => true,
            Some(c) => symbol || !c.is_alphanumeric(),
        }
    })
}

/// What a report entry claims about its command: success unless it is clearly failing
/// (see the module docs), and the words that say so, for the detail.
struct EntryClaim {
    success: bool,
    said: String,
}

fn entry_claim(entry: &Value, failing: &[&str]) -> EntryClaim {
    let mut passes = Vec::new();
    let mut fails = Vec::new();
    let mut others = Vec::new();
    for key in STATUS_KEYS {
        let Some(v) = entry.get(key).filter(|v| v.is_string() || v.is_boolean()) else {
            continue;
        };
        let text = as_text(v);
        let said = format!("{key} {}", truncate(&v.to_string(), 40));
        if first_word_is(&text, PASS_VALUES) {
            passes.push(said);
        } else if states(&text, failing) {
            fails.push(said);
        } else {
            others.push(said);
        }
    }
    for key in EXIT_KEYS {
        if let Some(code) = entry.get(key).and_then(Value::as_i64) {
            let said = format!("{key} {code}");
            if code == 0 {
                passes.push(said)
            } else {
                fails.push(said)
            }
        }
    }
    match (passes.first(), fails.first()) {
        (Some(said), _) => EntryClaim {
            success: true,
            said: said.clone(),
        },
        (None, Some(said)) => EntryClaim {
            success: false,
            said: said.clone(),
        },
        (None, None) => EntryClaim {
            success: true,
            said: match others.first() {
                Some(said) => format!("{said}, not a clear failure"),
                None => "no status".into(),
            },
        },
    }
}

fn commands_ran(
    path: &JsonPath,
    report: &Value,
    calls: &[ToolCall],
    failing: &[&str],
    found: &mut Found,
) {
    // The loader checked the path ends with a field.
    let Some((entries_path, field)) = path.split_last() else {
        return;
    };
    let entries = entries_path.select(report);
    let all = shells(calls, Scope::All);
    let mut listed = 0;
    for (at, entry) in &entries {
        let claim = entry_claim(entry, failing);
        let said = &claim.said;
        let at_field = if at.is_empty() {
            field.to_owned()
        } else {
            format!("{at}.{field}")
        };
        let command = entry.get(field).and_then(Value::as_str).unwrap_or("");
        let Some(re) = command_pattern(command) else {
            if claim.success {
                found.problems.push(format!(
                    "{at_field}: an entry claiming success ({said}) names no command (a result must be backed by a command that ran)"
                ));
            }
            continue;
        };
        listed += 1;
        let outcome = claim.success.then_some(ClaimOutcome::Success);
        let shown = truncate(command, 100);
        let seen = |hits: &[&super::commands::Shell<'_>]| {
            hits.iter()
                .take(3)
                .map(|s| line(s))
                .collect::<Vec<_>>()
                .join("; ")
        };
        match backing(claimed_calls(&all, &re), outcome) {
            Backing::NotRun => found
                .problems
                .push(format!("{at_field} `{shown}` ({said}): no such command ran")),
            Backing::Contradicted(hits) => found.problems.push(format!(
                "{at_field} `{shown}` ({said}): it ran but never exited 0: {}",
                seen(&hits)
            )),
            Backing::Unknown(hits) => found.unknown.push(format!(
                "{at_field} `{shown}` ({said}): it ran, but the transcript records no exit code to confirm its success: {}",
                seen(&hits)
            )),
            Backing::Backed(hit) => found
                .evidence
                .push(format!("{at_field} `{shown}` ran as {}", line(hit))),
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
    let failing: Vec<&str> = nf.values.iter().map(String::as_str).collect();
    let mut failures = 0;
    for (at, v) in &values {
        let text = as_text(v);
        if first_word_is(&text, &failing) {
            failures += 1;
            found
                .problems
                .push(format!("{at} is {}", truncate(&v.to_string(), 80)));
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

/// Why a file the report check names could not be counted in: the other file could not be
/// read, or a path selects nothing or something that is not a list. Its message is one
/// problem of the check.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CountError {
    /// The other workspace file could not be read as JSON (the reason in words).
    #[error("{0}")]
    Other(String),
    /// The path selects nothing.
    #[error("`{path}` selects nothing in {whose}")]
    Nothing {
        /// The path.
        path: String,
        /// `the file`, or the other file's name.
        whose: String,
    },
    /// The path selects a value that is not a list.
    #[error("{at} in {whose} is not a list: {value}")]
    NotAList {
        /// Where it was found.
        at: String,
        /// `the file`, or the other file's name.
        whose: String,
        /// The value, cut to 80 characters.
        value: String,
    },
}

/// The items of the arrays `path` selects, or why there are none to count.
fn count(path: &JsonPath, value: &Value, whose: &str) -> Result<usize, CountError> {
    let selected = path.select(value);
    if selected.is_empty() {
        return Err(CountError::Nothing {
            path: path.text.clone(),
            whose: whose.to_owned(),
        });
    }
    let mut n = 0;
    for (at, v) in selected {
        match v {
            Value::Array(items) => n += items.len(),
            other => {
                return Err(CountError::NotAList {
                    at: if at.is_empty() { path.text.clone() } else { at },
                    whose: whose.to_owned(),
                    value: truncate(&other.to_string(), 80),
                });
            }
        }
    }
    Ok(n)
}

fn min_items(
    mi: &MinItems,
    report: &Value,
    read_other: &dyn Fn(&str) -> Result<Value, CountError>,
    found: &mut Found,
) {
    let have = match count(&mi.path, report, "the file") {
        Ok(n) => n,
        Err(why) => {
            found.problems.push(why.to_string());
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
                    found.problems.push(why.to_string());
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
            output: Some("out".into()),
            is_error: exit != 0,
            exit_code: Some(exit),
            ..ToolCall::for_test("1", "Bash", json!({"command": command}))
        }
    }

    fn path(p: &str) -> JsonPath {
        JsonPath::parse(p).unwrap()
    }

    fn no_other(f: &str) -> Result<Value, CountError> {
        Err(CountError::Other(format!("{f} does not exist")))
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
            ["results[1].command `cargo test list` (status \"pass\"): no such command ran"]
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
        assert!(
            found.problems[0]
                .contains("an entry claiming success (status \"PASS\") names no command"),
            "{:?}",
            found.problems
        );
        let nothing = json!({"results": []});
        let found = check(&checks(), &nothing, &[], &no_other);
        assert!(
            found.problems[0].contains("selects no command"),
            "{:?}",
            found.problems
        );
    }

    /// `commands_ran` on one entry whose command, `cargo test`, ran and exited `exit`.
    fn one_entry(entry: Value, exit: Option<i32>) -> Found {
        let checks = JsonReportChecks {
            commands_ran: Some(path("results[].command")),
            ..Default::default()
        };
        let mut call = bash("cargo test", exit.unwrap_or(0));
        call.exit_code = exit;
        call.is_error = exit.is_some_and(|c| c != 0);
        let report = json!({ "results": [entry] });
        check(&checks, &report, &[call], &no_other)
    }

    #[test]
    fn any_wording_that_is_not_clearly_failing_is_held_to_exit_zero() {
        let claims_success = [
            json!({"status": "success"}),
            json!({"status": "Succeeded"}),
            json!({"status": "OK"}),
            json!({"verdict": "green"}),
            json!({"result": "✓"}),
            json!({"outcome": "✅ all good"}),
            json!({"passed": true}),
            json!({"success": "true"}),
            json!({"state": "done"}),
            json!({"status": "skipped"}),
            json!({"result": "error handling works"}),
            json!({"status": "failed 2 tests"}),
            json!({"status": "FAIL", "passed": true}),
            json!({"status": "passed", "exit_code": 101}),
            json!({"criterion": "no status at all"}),
        ];
        for mut entry in claims_success {
            entry["command"] = json!("cargo test");
            let found = one_entry(entry.clone(), Some(101));
            assert_eq!(found.problems.len(), 1, "{entry}: {:?}", found.problems);
            assert!(
                found.problems[0].contains("it ran but never exited 0: #1 `cargo test` → exit 101"),
                "{entry}: {:?}",
                found.problems
            );
            let found = one_entry(entry.clone(), Some(0));
            assert!(found.problems.is_empty(), "{entry}: {:?}", found.problems);
        }
    }

    #[test]
    fn a_clearly_failing_entry_only_needs_its_command_to_have_run() {
        let clearly_failing = [
            json!({"status": "FAILURE"}),
            json!({"status": "failing"}),
            json!({"status": "errored"}),
            json!({"status": "FAILED (2 of 5)"}),
            json!({"result": "fail: timeout"}),
            json!({"verdict": "✗ broken"}),
            json!({"passed": false}),
            json!({"ok": "false"}),
            json!({"exit_code": 101}),
            json!({"status": "not ok"}),
        ];
        for mut entry in clearly_failing {
            entry["command"] = json!("cargo test");
            let found = one_entry(entry.clone(), Some(101));
            assert!(found.problems.is_empty(), "{entry}: {:?}", found.problems);
            entry["command"] = json!("cargo bench");
            let found = one_entry(entry.clone(), Some(101));
            assert!(
                found.problems[0].contains("`cargo bench`")
                    && found.problems[0].contains("no such command ran"),
                "{entry}: {:?}",
                found.problems
            );
        }
    }

    #[test]
    fn a_missing_exit_code_can_not_confirm_a_success() {
        let found = one_entry(json!({"status": "PASS", "command": "cargo test"}), None);
        assert!(found.problems.is_empty(), "{:?}", found.problems);
        assert_eq!(found.unknown.len(), 1);
        assert!(
            found.unknown[0].contains("the transcript records no exit code to confirm its success"),
            "{:?}",
            found.unknown
        );
        let found = one_entry(json!({"status": "FAIL", "command": "cargo test"}), None);
        assert!(
            found.problems.is_empty() && found.unknown.is_empty(),
            "a failing entry only claims the command ran: {found:?}"
        );
    }

    #[test]
    fn every_failing_word_is_a_failure_by_default() {
        let checks = JsonReportChecks {
            no_failures: Some(NoFailures {
                path: path("results[].status"),
                values: DEFAULT_FAILING_VALUES
                    .iter()
                    .map(|v| (*v).to_owned())
                    .collect(),
            }),
            ..Default::default()
        };
        let failing = [
            json!("failure"),
            json!("Failing"),
            json!("ERRORED"),
            json!(false),
            json!("FAILED (2 of 5)"),
            json!("Error: boom"),
            json!("✗"),
            json!("✗broken"),
            json!("❌ broken"),
            json!("not ok"),
            json!("Timed out"),
            json!("red"),
        ];
        for value in failing {
            let report = json!({"results": [{"status": "PASS"}, {"status": value}]});
            let found = check(&checks, &report, &[], &no_other);
            assert_eq!(
                found.problems,
                [format!("results[1].status is {value}")],
                "{value}"
            );
        }
        for value in [
            json!("PASS"),
            json!("passed"),
            json!(true),
            json!("skipped"),
            json!("errorless"),
        ] {
            let report = json!({"results": [{"status": value}]});
            let found = check(&checks, &report, &[], &no_other);
            assert!(found.problems.is_empty(), "{value}: {:?}", found.problems);
        }
    }

    #[test]
    fn explicit_failing_values_replace_the_defaults() {
        let checks = JsonReportChecks {
            commands_ran: Some(path("results[].command")),
            no_failures: Some(NoFailures {
                path: path("results[].status"),
                values: vec!["BLOCKED".into()],
            }),
            ..Default::default()
        };
        let report = json!({"results": [
            {"status": "blocked: waiting on review", "command": "cargo test"},
            {"status": "FAIL", "command": "cargo test"}
        ]});
        let found = check(&checks, &report, &[bash("cargo test", 101)], &no_other);
        assert_eq!(
            found.problems,
            ["results[0].status is \"blocked: waiting on review\""],
            "a blocked entry is a failure, and one `commands_ran` does not hold to exit 0; FAIL is not listed"
        );
    }

    #[test]
    fn the_word_lists_are_documented() {
        let docs = include_str!("../../docs/yaml-api.md");
        for word in PASS_VALUES
            .iter()
            .chain(DEFAULT_FAILING_VALUES)
            .chain(STATUS_KEYS)
            .chain(EXIT_KEYS)
        {
            assert!(
                docs.contains(&format!("`{word}`")),
                "docs/yaml-api.md lists {word}"
            );
        }
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
