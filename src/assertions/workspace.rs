//! Assertions on the workspace after the agent's run: files (seed 004), `verify` commands,
//! and seed 002's evidence validators `wrote` and `json_file`.
//!
//! These need the workspace copy, which `aptitude run` has and `aptitude analyze` (a
//! transcript only) does not: there they are `skip`, with the reason — never a pass.
//!
//! The agent may have left traps in the copy. Every path is resolved inside the copy,
//! links included, before anything is opened: one that leads outside (`dirlink/x` with
//! `dirlink → /etc`, a link to `/etc/passwd`) fails without being read, so no host file
//! reaches a result. Only regular files are read, opened without blocking (a FIFO fails
//! at once), and at most [`MAX_READ_BYTES`]: on a larger file a `file_contains` text found
//! in that prefix passes, and anything else is an `error`.

use std::path::Path;

use serde_json::Value;

use super::AssertionStatus;
use super::{Verdict, WorkspaceEvidence, truncate};
use crate::spec::json_path::JsonPath;
use crate::spec::{TextCheck, VerifyAssertion};
use crate::transcript::ToolCall;
use crate::workspace::ChangeKind;

/// Verify output shown in results, in characters (seed 004: 2,000).
pub const VERIFY_OUTPUT_SHOWN: usize = 2000;

/// The most bytes `file_contains` and `json_file` read of a file (16 MiB); the module docs
/// say what a larger file gives.
pub const MAX_READ_BYTES: u64 = 16 * 1024 * 1024;

/// What a `verify` command did, run by the runner after the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyRun {
    /// Its exit code, when it exited on its own.
    pub code: Option<i32>,
    /// Why there is no usable exit code (timed out, could not start), if so.
    pub failure: Option<String>,
    /// Its stdout.
    pub stdout: String,
    /// The end of its stderr.
    pub stderr: String,
}

pub(super) fn no_workspace(description: String) -> Verdict {
    (
        AssertionStatus::Skip,
        description,
        Some("needs the workspace after the agent's run; `aptitude analyze` has only the transcript (use `aptitude run`)".into()),
    )
}

/// Why a workspace path is not a file inside the copy.
#[derive(Debug, thiserror::Error)]
enum Unlocated {
    /// Nothing there (with a hint naming what the agent did create).
    #[error("{path} does not exist{hint}")]
    Missing {
        /// The path as written.
        path: String,
        /// `; the agent created …`, or nothing.
        hint: String,
    },
    /// It leads outside the copy through a link: nothing there was opened.
    #[error("{path} leads outside the workspace (to {}); it was not read", .to.display())]
    Outside {
        /// The path as written.
        path: String,
        /// Where it leads.
        to: std::path::PathBuf,
    },
    /// Its components could not be read.
    #[error("can not resolve {path}: {source}")]
    Io {
        /// The path as written.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// Where a workspace path leads, every link resolved: the file inside the copy, or why
/// it is not one (missing, or leading outside the copy — then nothing there was opened).
fn locate(ws: &WorkspaceEvidence<'_>, path: &str) -> Result<std::path::PathBuf, Unlocated> {
    let path_owned = || path.to_owned();
    match crate::shared::files::resolve_in(ws.root, Path::new(path)) {
        Ok(crate::shared::files::Resolved::Inside(full)) => Ok(full),
        Ok(crate::shared::files::Resolved::Missing) => Err(Unlocated::Missing {
            path: path_owned(),
            hint: created_hint(ws),
        }),
        Ok(crate::shared::files::Resolved::Outside(to)) => Err(Unlocated::Outside {
            path: path_owned(),
            to,
        }),
        Err(source) => Err(Unlocated::Io {
            path: path_owned(),
            source,
        }),
    }
}

/// A workspace file's content, or the status and reason it could not be read: `fail` for
/// a missing file, a directory, a FIFO or a path leading outside; `error` for a file over
/// [`MAX_READ_BYTES`] (too big to check either way) or a read error.
fn read(ws: &WorkspaceEvidence<'_>, path: &str) -> Result<Vec<u8>, (AssertionStatus, String)> {
    let full = locate(ws, path).map_err(|why| (AssertionStatus::Fail, why.to_string()))?;
    crate::shared::files::read_capped(&full, MAX_READ_BYTES).map_err(|e| match e {
        crate::shared::files::FileError::NotRegular(kind) => (
            AssertionStatus::Fail,
            format!("{path} is {kind}, not a regular file"),
        ),
        crate::shared::files::FileError::TooLarge { size, cap } => (
            AssertionStatus::Error,
            format!(
                "{path} has {size} bytes, more than the {cap} bytes aptitude reads for a file check"
            ),
        ),
        crate::shared::files::FileError::Io(e) => {
            (AssertionStatus::Error, format!("can not read {path}: {e}"))
        }
    })
}

/// `; files created in the run: a, b` — what the agent made instead.
fn created_hint(ws: &WorkspaceEvidence<'_>) -> String {
    let created: Vec<&str> = ws
        .changes
        .iter()
        .filter(|c| c.change == ChangeKind::Created)
        .map(|c| c.path.as_str())
        .take(10)
        .collect();
    if created.is_empty() {
        "; the run created no file".into()
    } else {
        format!("; files created in the run: {}", created.join(", "))
    }
}

fn first_bytes(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(400)]);
    format!("first bytes: {}", truncate(&text, 200))
}

/// `file_exists` (`expect: true`) or `file_absent`.
pub(super) fn file_exists(ws: Option<&WorkspaceEvidence<'_>>, path: &str, expect: bool) -> Verdict {
    let description = if expect {
        format!("file {path} exists")
    } else {
        format!("file {path} does not exist")
    };
    let Some(ws) = ws else {
        return no_workspace(description);
    };
    let (exists, detail) = match crate::shared::files::resolve_in(ws.root, Path::new(path)) {
        Ok(crate::shared::files::Resolved::Inside(full)) => {
            let what = match std::fs::symlink_metadata(&full) {
                Ok(m) if m.is_file() => format!("{} bytes", m.len()),
                Ok(m) => crate::shared::files::kind_name(&m).to_owned(),
                Err(_) => "unreadable".to_owned(),
            };
            (true, format!("{path} exists ({what})"))
        }
        Ok(crate::shared::files::Resolved::Missing) => {
            // A dangling link inside the copy is something at that path, but no file.
            let dangling = ws.root.join(path).symlink_metadata().is_ok();
            if dangling {
                (false, format!("{path} is a dangling link"))
            } else {
                (false, format!("{path} does not exist{}", created_hint(ws)))
            }
        }
        // Something is at the path, but it is not a file of the workspace: it never counts
        // as the file asked for, and it is not absent either.
        Ok(crate::shared::files::Resolved::Outside(to)) => {
            let detail = format!("{path} leads outside the workspace (to {})", to.display());
            return (AssertionStatus::Fail, description, Some(detail));
        }
        Err(e) => {
            return (
                AssertionStatus::Error,
                description,
                Some(format!("can not resolve {path}: {e}")),
            );
        }
    };
    let status = AssertionStatus::pass_if(exists == expect);
    (status, description, Some(detail))
}

/// `file_contains: {path, text | matches}`.
pub(super) fn file_contains(
    ws: Option<&WorkspaceEvidence<'_>>,
    path: &str,
    check: &TextCheck,
) -> Verdict {
    let description = match check {
        TextCheck::Contains(text) => format!("file {path} contains {text:?}"),
        TextCheck::Matches(re) => format!("file {path} matches /{}/", re.as_str()),
    };
    let Some(ws) = ws else {
        return no_workspace(description);
    };
    let bytes = match read(ws, path) {
        Ok(b) => b,
        // A substring found in the first MAX_READ_BYTES is in the file; not found there,
        // nothing can be said either way.
        Err((AssertionStatus::Error, why)) if matches!(check, TextCheck::Contains(_)) => {
            if let TextCheck::Contains(needle) = check
                && let Ok(full) = locate(ws, path)
                && let Ok(prefix) = crate::shared::files::read_prefix(&full, MAX_READ_BYTES)
                && String::from_utf8_lossy(&prefix).contains(needle.as_str())
            {
                return (
                    AssertionStatus::Pass,
                    description,
                    Some(format!("found in the first {MAX_READ_BYTES} bytes; {why}")),
                );
            }
            return (AssertionStatus::Error, description, Some(why));
        }
        Err((status, why)) => return (status, description, Some(why)),
    };
    let text = String::from_utf8_lossy(&bytes);
    let ok = match check {
        TextCheck::Contains(needle) => text.contains(needle.as_str()),
        TextCheck::Matches(re) => re.is_match(&text),
    };
    let detail = format!("{path} ({} bytes), {}", bytes.len(), first_bytes(&bytes));
    (AssertionStatus::pass_if(ok), description, Some(detail))
}

/// `json_file: {path, required, …}`: exists, parses, each field is present and non-empty,
/// and the report checks ([`super::json_report`]) find the report backed by `calls`.
pub(super) fn json_file(
    ws: Option<&WorkspaceEvidence<'_>>,
    calls: &[ToolCall],
    path: &str,
    required: &[JsonPath],
    report: &crate::spec::JsonReportChecks,
) -> Verdict {
    let mut description = if required.is_empty() {
        format!("{path} is valid JSON")
    } else {
        let fields: Vec<&str> = required.iter().map(|p| p.text.as_str()).collect();
        format!("{path} is valid JSON with {}", fields.join(", "))
    };
    let checks = super::json_report::describe(report);
    if !checks.is_empty() {
        description = format!("{description}; {}", checks.join("; "));
    }
    let Some(ws) = ws else {
        return no_workspace(description);
    };
    let fail = |why: String| (AssertionStatus::Fail, description.clone(), Some(why));
    let bytes = match read(ws, path) {
        Ok(b) => b,
        Err((status, why)) => {
            return (
                status,
                description,
                Some(format!("file check failed: {why}")),
            );
        }
    };
    let value: Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(e) => {
            return fail(format!(
                "JSON check failed: {path} is not valid JSON: {e}\n{}",
                first_bytes(&bytes)
            ));
        }
    };
    let mut problems = Vec::new();
    for field in required {
        let walked = field.walk(&value);
        if walked.is_empty() {
            problems.push(format!(
                "field `{}` selects nothing (an empty list)",
                field.text
            ));
        }
        let text = &field.text;
        for (at, found) in walked {
            let at = if at == *text {
                String::new()
            } else {
                format!(" at `{at}`")
            };
            match found {
                None => problems.push(format!("field `{text}` is missing{at}")),
                Some(v) if is_empty(v) => {
                    problems.push(format!("field `{text}` is empty{at} ({v})"));
                }
                Some(_) => {}
            }
        }
    }
    if !problems.is_empty() {
        return fail(format!("field check failed: {}", problems.join("; ")));
    }
    let read_other = |other: &str| -> Result<Value, super::json_report::CountError> {
        use super::json_report::CountError;
        let bytes = read(ws, other).map_err(|(_, why)| CountError::Other(why))?;
        serde_json::from_slice(&bytes)
            .map_err(|e| CountError::Other(format!("{other} is not valid JSON: {e}")))
    };
    let found = super::json_report::check(report, &value, calls, &read_other);
    let lines = || -> String {
        let mut lines: Vec<String> = found.problems.iter().map(|p| format!("✗ {p}")).collect();
        lines.extend(found.unknown.iter().map(|u| format!("? {u}")));
        lines.extend(found.evidence.iter().map(|e| format!("✓ {e}")));
        lines.join("\n")
    };
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    if !found.problems.is_empty() {
        let n = found.problems.len();
        return fail(format!(
            "report check failed ({n} problem{}):\n{}",
            plural(n),
            lines()
        ));
    }
    if !found.unknown.is_empty() {
        // Not confirmed is never a pass.
        let n = found.unknown.len();
        return (
            AssertionStatus::Error,
            description,
            Some(format!(
                "report check could not be made ({n} entr{} could not be checked):\n{}",
                if n == 1 { "y" } else { "ies" },
                lines()
            )),
        );
    }
    let mut detail = format!("{path}: {} bytes of valid JSON", bytes.len());
    for e in &found.evidence {
        detail.push_str(&format!("\n✓ {e}"));
    }
    (AssertionStatus::Pass, description, Some(detail))
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

/// Lowercased path components, without `.` and empty parts.
fn components(path: &str) -> Vec<String> {
    path.split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .map(str::to_lowercase)
        .collect()
}

/// Whether a path the agent wrote is the path a test names: equal after normalizing `./`,
/// case and the workspace root, or — for absolute paths from elsewhere — ending with it.
pub(super) fn same_path(declared: &str, written: &str, root: Option<&Path>) -> bool {
    let strip_root = |p: &str| -> String {
        if let Some(root) = root
            && let Ok(rel) = Path::new(p).strip_prefix(root)
        {
            return rel.to_string_lossy().into_owned();
        }
        p.to_owned()
    };
    let d = components(&strip_root(declared));
    let w = components(&strip_root(written));
    if d.is_empty() || w.is_empty() {
        return false;
    }
    if d == w {
        return true;
    }
    let under_root = |p: &str| root.is_some_and(|r| Path::new(p).starts_with(r));
    // Relative and absolute forms of one file: match by tail, unless both are known to be
    // inside this workspace (then they must be equal, as checked above).
    if under_root(written) && (under_root(declared) || !declared.starts_with('/')) {
        return false;
    }
    // With the workspace known (`run`), an absolute path the agent wrote outside it is
    // another file, however it ends: `/elsewhere/out/report.json` is not `out/report.json`.
    if root.is_some() && written.starts_with('/') && !under_root(written) {
        return false;
    }
    let (short, long) = if d.len() <= w.len() {
        (&d, &w)
    } else {
        (&w, &d)
    };
    long.ends_with(short)
}

/// The paths a file-writing tool call wrote, when it succeeded.
pub(super) fn written_paths(call: &ToolCall) -> Vec<String> {
    const WRITERS: &[&str] = &["Write", "Edit", "MultiEdit", "NotebookEdit"];
    if call.is_error || !WRITERS.contains(&call.canonical.as_str()) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for key in ["file_path", "notebook_path", "path"] {
        if let Some(p) = call.params().get(key).and_then(Value::as_str) {
            out.push(p.to_owned());
        }
    }
    // Codex: `apply_patch` text and `file_change` items.
    if let Some(patch) = call
        .input
        .get("patch")
        .or_else(|| call.input.get("input"))
        .and_then(Value::as_str)
    {
        for line in patch.lines() {
            for marker in ["*** Add File: ", "*** Update File: ", "*** Move to: "] {
                if let Some(p) = line.strip_prefix(marker) {
                    out.push(p.trim().to_owned());
                }
            }
        }
    }
    if let Some(changes) = call.input.get("changes").and_then(Value::as_array) {
        out.extend(
            changes
                .iter()
                .filter_map(|c| c.get("path").and_then(Value::as_str))
                .map(str::to_owned),
        );
    }
    out
}

/// `wrote: [paths]`: each path written by a file-writing tool call or created/modified in
/// the workspace.
pub(super) fn wrote(
    ws: Option<&WorkspaceEvidence<'_>>,
    calls: &[ToolCall],
    paths: &[String],
) -> Verdict {
    let description = format!("wrote {}", paths.join(", "));
    let root = ws.map(|w| w.root);
    let by_tools: Vec<(usize, String)> = calls
        .iter()
        .enumerate()
        .flat_map(|(i, c)| written_paths(c).into_iter().map(move |p| (i + 1, p)))
        .collect();
    let mut evidence = Vec::new();
    let mut missing = Vec::new();
    for path in paths {
        if let Some((position, _)) = by_tools.iter().find(|(_, w)| same_path(path, w, root)) {
            evidence.push(format!("{path}: written by tool call #{position}"));
            continue;
        }
        let changed = ws.and_then(|w| {
            w.changes
                .iter()
                .find(|c| c.change != ChangeKind::Deleted && same_path(path, &c.path, None))
        });
        match changed {
            Some(c) => evidence.push(format!(
                "{path}: {} in the workspace",
                match c.change {
                    ChangeKind::Created => "created",
                    _ => "modified",
                }
            )),
            None => missing.push(path.as_str()),
        }
    }
    if missing.is_empty() {
        return (
            AssertionStatus::Pass,
            description,
            Some(evidence.join("\n")),
        );
    }
    let seen: Vec<&str> = by_tools.iter().map(|(_, p)| p.as_str()).take(10).collect();
    let seen = if seen.is_empty() {
        "no file-writing tool call succeeded".to_owned()
    } else {
        format!("files written by tools: {}", seen.join(", "))
    };
    if ws.is_none() {
        return (
            AssertionStatus::Skip,
            description,
            Some(format!(
                "not written by a tool call: {}; a file written by a shell command shows only in the workspace, which `aptitude analyze` does not have\n{seen}",
                missing.join(", ")
            )),
        );
    }
    (
        AssertionStatus::Fail,
        description,
        Some(format!("not written: {}\n{seen}", missing.join(", "))),
    )
}

/// `verify`: the exit code first (default 0), then the output checks.
pub(super) fn verify(v: &VerifyAssertion, run: Option<&VerifyRun>) -> Verdict {
    let mut description = format!("verify `{}`", truncate(&v.run, 80));
    if v.exit_code != 0 {
        description.push_str(&format!(" exits {}", v.exit_code));
    }
    if let Some(text) = &v.output_contains {
        description.push_str(&format!(", output contains {text:?}"));
    }
    if let Some(text) = &v.output_equals {
        description.push_str(&format!(", output equals {text:?}"));
    }
    let Some(run) = run else {
        return no_workspace(description);
    };
    let output = || {
        let mut s = format!(
            "stdout: {}",
            truncate(run.stdout.trim_end(), VERIFY_OUTPUT_SHOWN)
        );
        if !run.stderr.trim().is_empty() {
            s.push_str(&format!(
                "\nstderr: {}",
                truncate(run.stderr.trim_end(), VERIFY_OUTPUT_SHOWN)
            ));
        }
        s
    };
    if let Some(failure) = &run.failure {
        return (
            AssertionStatus::Error,
            description,
            Some(format!("the command {failure}\n{}", output())),
        );
    }
    let code = run
        .code
        .map_or_else(|| "no exit code".to_owned(), |c| c.to_string());
    if run.code.map(i64::from) != Some(v.exit_code) {
        return (
            AssertionStatus::Fail,
            description,
            Some(format!(
                "exited {code} (expected {})\n{}",
                v.exit_code,
                output()
            )),
        );
    }
    let mut problems = Vec::new();
    if let Some(text) = &v.output_contains
        && !run.stdout.contains(text.as_str())
    {
        problems.push(format!("output does not contain {text:?}"));
    }
    if let Some(text) = &v.output_equals
        && run.stdout.trim() != text.trim()
    {
        problems.push(format!("output does not equal {text:?}"));
    }
    let status = AssertionStatus::pass_if(problems.is_empty());
    let mut detail = format!("exited {code}");
    if !problems.is_empty() {
        detail.push_str(&format!("; {}", problems.join("; ")));
    }
    detail.push('\n');
    detail.push_str(&output());
    (status, description, Some(detail))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `json_file` without report checks or calls.
    fn json_file(ws: Option<&WorkspaceEvidence<'_>>, path: &str, required: &[JsonPath]) -> Verdict {
        super::json_file(ws, &[], path, required, &Default::default())
    }
    use crate::workspace::FileChange;
    use serde_json::json;

    fn ws_with(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        dir
    }

    #[test]
    fn files_exist_absent_contain() {
        let dir = ws_with(&[("out/report.json", "{\"goal\": \"x\", \"items\": []}")]);
        let changes = vec![FileChange::new(
            "out/report.json",
            ChangeKind::Created,
            Some(10),
        )];
        let ws = WorkspaceEvidence {
            root: dir.path(),
            changes: &changes,
        };
        assert_eq!(
            file_exists(Some(&ws), "out/report.json", true).0,
            AssertionStatus::Pass
        );
        let (status, _, detail) = file_exists(Some(&ws), "report.json", true);
        assert_eq!(status, AssertionStatus::Fail);
        assert!(
            detail
                .unwrap()
                .contains("files created in the run: out/report.json")
        );
        assert_eq!(
            file_exists(Some(&ws), "secret.txt", false).0,
            AssertionStatus::Pass
        );
        let contains = TextCheck::Contains("goal".into());
        assert_eq!(
            file_contains(Some(&ws), "out/report.json", &contains).0,
            AssertionStatus::Pass
        );
        let matches = TextCheck::Matches(regex::Regex::new(r#""goal":\s*"y""#).unwrap());
        assert_eq!(
            file_contains(Some(&ws), "out/report.json", &matches).0,
            AssertionStatus::Fail
        );
        assert_eq!(file_exists(None, "x", true).0, AssertionStatus::Skip);
    }

    #[test]
    fn json_file_says_which_check_failed() {
        let dir = ws_with(&[
            (
                "brief.json",
                "{\"goal\": \"ship\", \"files_to_change\": []}",
            ),
            ("bad.json", "{oops"),
        ]);
        let ws = WorkspaceEvidence {
            root: dir.path(),
            changes: &[],
        };
        let req = |v: &[&str]| {
            v.iter()
                .map(|s| JsonPath::parse(s).unwrap())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            json_file(Some(&ws), "brief.json", &req(&["goal"])).0,
            AssertionStatus::Pass
        );
        let (_, _, detail) = json_file(
            Some(&ws),
            "brief.json",
            &req(&["goal", "files_to_change", "acceptance_criteria"]),
        );
        let detail = detail.unwrap();
        assert!(detail.starts_with("field check failed"), "{detail}");
        assert!(detail.contains("`files_to_change` is empty"), "{detail}");
        assert!(
            detail.contains("`acceptance_criteria` is missing"),
            "{detail}"
        );
        assert!(
            json_file(Some(&ws), "bad.json", &[])
                .2
                .unwrap()
                .starts_with("JSON check failed")
        );
        assert!(
            json_file(Some(&ws), "none.json", &[])
                .2
                .unwrap()
                .starts_with("file check failed")
        );
    }

    #[test]
    fn required_paths_reach_into_each_element() {
        let dir = ws_with(&[(
            "report.json",
            r#"{"results": [{"command": "a"}, {"status": "PASS"}, {"command": ""}], "n": 1, "none": []}"#,
        )]);
        let ws = WorkspaceEvidence {
            root: dir.path(),
            changes: &[],
        };
        let check = |paths: &[&str]| {
            let required: Vec<JsonPath> =
                paths.iter().map(|p| JsonPath::parse(p).unwrap()).collect();
            json_file(Some(&ws), "report.json", &required)
        };
        assert_eq!(check(&["results.0.command", "n"]).0, AssertionStatus::Pass);
        let (status, _, detail) = check(&["results[].command"]);
        assert_eq!(status, AssertionStatus::Fail);
        let detail = detail.unwrap();
        assert!(
            detail.contains("field `results[].command` is missing at `results[1].command`"),
            "{detail}"
        );
        assert!(
            detail.contains("field `results[].command` is empty at `results[2].command` (\"\")"),
            "{detail}"
        );
        let detail = check(&["none[].x", "n[]"]).2.unwrap();
        assert!(
            detail.contains("field `none[].x` selects nothing (an empty list)"),
            "{detail}"
        );
        assert!(detail.contains("field `n[]` is missing"), "{detail}");
    }

    #[test]
    fn a_report_command_without_an_exit_code_is_an_error_not_a_pass() {
        let dir = ws_with(&[(
            "report.json",
            r#"{"results": [{"status": "PASS", "command": "go test ./..."}]}"#,
        )]);
        let ws = WorkspaceEvidence {
            root: dir.path(),
            changes: &[],
        };
        let mut call = write_call("x", false);
        call.name = "Bash".into();
        call.canonical = "Bash".into();
        call.input = json!({"command": "go test ./..."});
        call.output = Some("ok".into());
        let checks = crate::spec::JsonReportChecks {
            commands_ran: Some(JsonPath::parse("results[].command").unwrap()),
            ..Default::default()
        };
        let (status, _, detail) = super::json_file(Some(&ws), &[call], "report.json", &[], &checks);
        assert_eq!(status, AssertionStatus::Error, "{detail:?}");
        let detail = detail.unwrap();
        assert!(
            detail.contains("? results[0].command `go test ./...` (status \"PASS\"): it ran, but the transcript records no exit code"),
            "{detail}"
        );
    }

    fn write_call(path: &str, is_error: bool) -> ToolCall {
        ToolCall {
            output: Some(String::new()),
            is_error,
            ..ToolCall::for_test(path, "Write", json!({"file_path": path, "content": "x"}))
        }
    }

    #[test]
    fn wrote_normalizes_paths_and_lists_missing() {
        let root = Path::new("/tmp/aptitude-ws-1/workspace");
        let calls = vec![
            write_call("/tmp/aptitude-ws-1/workspace/src/Main.rs", false),
            write_call("/tmp/aptitude-ws-1/workspace/failed.rs", true),
        ];
        let changes = vec![FileChange::new(
            "build/out.txt",
            ChangeKind::Created,
            Some(1),
        )];
        let ws = WorkspaceEvidence {
            root,
            changes: &changes,
        };
        let paths = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            wrote(
                Some(&ws),
                &calls,
                &paths(&["./src/main.rs", "build/out.txt"])
            )
            .0,
            AssertionStatus::Pass
        );
        let (status, _, detail) = wrote(Some(&ws), &calls, &paths(&["failed.rs", "main.rs"]));
        assert_eq!(status, AssertionStatus::Fail);
        assert!(
            detail
                .unwrap()
                .starts_with("not written: failed.rs, main.rs"),
            "an errored Write wrote nothing; inside the workspace the path must match whole"
        );
        // A transcript from another machine: absolute paths match by their tail.
        let foreign = vec![write_call("/Users/u/proj/src/main.rs", false)];
        assert_eq!(
            wrote(None, &foreign, &paths(&["src/main.rs"])).0,
            AssertionStatus::Pass
        );
        assert_eq!(
            wrote(None, &foreign, &paths(&["other.rs"])).0,
            AssertionStatus::Skip
        );
    }

    #[test]
    fn verify_checks_exit_code_first() {
        let v = VerifyAssertion {
            run: "cat out.txt".into(),
            exit_code: 0,
            output_contains: Some("43".into()),
            output_equals: None,
            timeout: std::time::Duration::from_secs(5),
        };
        let ok = VerifyRun {
            code: Some(0),
            failure: None,
            stdout: "43\n".into(),
            stderr: String::new(),
        };
        assert_eq!(verify(&v, Some(&ok)).0, AssertionStatus::Pass);
        let failed = VerifyRun {
            code: Some(1),
            stdout: "43".into(),
            ..ok.clone()
        };
        let (status, _, detail) = verify(&v, Some(&failed));
        assert_eq!(status, AssertionStatus::Fail);
        assert!(detail.unwrap().starts_with("exited 1 (expected 0)"));
        let timed_out = VerifyRun {
            code: None,
            failure: Some("timed out after 5s".into()),
            ..ok
        };
        assert_eq!(verify(&v, Some(&timed_out)).0, AssertionStatus::Error);
        assert_eq!(verify(&v, None).0, AssertionStatus::Skip);
    }

    /// The hostile workspace of issue #10: FIFOs, links out, a file too big to read.
    #[test]
    fn traps_in_the_workspace_neither_block_nor_reach_the_host() {
        use std::os::unix::fs::symlink;
        let dir = ws_with(&[("ok.json", "{}")]);
        let root = dir.path();
        nix::unistd::mkfifo(&root.join("out.json"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        symlink("/etc/passwd", root.join("passwd")).unwrap();
        symlink("/etc", root.join("dirlink")).unwrap();
        std::fs::File::create(root.join("huge.log"))
            .unwrap()
            .set_len(MAX_READ_BYTES + 1)
            .unwrap();
        let ws = WorkspaceEvidence { root, changes: &[] };
        let (status, _, detail) = json_file(Some(&ws), "out.json", &[]);
        assert_eq!(status, AssertionStatus::Fail);
        assert!(
            detail
                .unwrap()
                .contains("out.json is a FIFO (named pipe), not a regular file")
        );
        let contains =
            |path: &str| file_contains(Some(&ws), path, &TextCheck::Contains("never there".into()));
        for path in ["passwd", "dirlink/passwd", "dirlink/shadow"] {
            let (status, _, detail) = contains(path);
            let detail = detail.unwrap();
            assert_eq!(status, AssertionStatus::Fail, "{path}");
            assert!(detail.contains("leads outside the workspace"), "{detail}");
            assert!(!detail.contains("root:"), "no host content: {detail}");
            let (status, _, _) = file_exists(Some(&ws), path, true);
            assert_eq!(status, AssertionStatus::Fail, "{path} is no workspace file");
        }
        let (status, _, detail) = contains("huge.log");
        assert_eq!(
            status,
            AssertionStatus::Error,
            "too big to check either way"
        );
        assert!(detail.unwrap().contains("more than the 16777216 bytes"));
        let (status, _, _) = file_exists(Some(&ws), "ok.json", true);
        assert_eq!(status, AssertionStatus::Pass);
    }

    #[test]
    fn a_file_written_outside_the_workspace_is_not_the_one_asked_for() {
        let dir = ws_with(&[]);
        let ws = WorkspaceEvidence {
            root: dir.path(),
            changes: &[],
        };
        let outside = write_call("/home/user/elsewhere/out/report.json", false);
        let (status, _, _) = wrote(
            Some(&ws),
            std::slice::from_ref(&outside),
            &["out/report.json".into()],
        );
        assert_eq!(
            status,
            AssertionStatus::Fail,
            "a path elsewhere on this machine"
        );
        let inside = write_call(&format!("{}/out/report.json", dir.path().display()), false);
        let (status, _, _) = wrote(Some(&ws), &[inside], &["out/report.json".into()]);
        assert_eq!(status, AssertionStatus::Pass);
        // Without the workspace (`analyze` of a recorded run) the tail still identifies it.
        let (status, _, _) = wrote(None, &[outside], &["out/report.json".into()]);
        assert_eq!(status, AssertionStatus::Pass);
    }
}
