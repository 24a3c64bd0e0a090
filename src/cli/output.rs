//! Everything the CLI writes: stdout and stderr through `anstream` (colors stripped off a
//! terminal or with `NO_COLOR`), the report files, and the redaction every one of them
//! goes through.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use clap::Args;

use crate::redact::Redactor;
use crate::report::{html, json, junit, markdown, terminal};
use crate::results::{Results, TestResult};
use crate::spec::{self, diagnostic};
use crate::transcript::Transcript;

/// Writes to stdout; a closed pipe (`| head`) is not an error worth reporting.
pub fn out(text: &str) {
    let mut stdout = anstream::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
}

/// Writes to stderr.
pub fn err(text: &str) {
    let mut stderr = anstream::stderr().lock();
    let _ = stderr.write_all(text.as_bytes());
}

/// `error: message` in red.
pub fn error_line(message: &str) -> String {
    let red = anstyle::AnsiColor::Red.on_default().bold();
    format!("{red}error{red:#}: {message}\n")
}

/// `warning: message` in yellow.
pub fn warning_line(message: &str) -> String {
    let yellow = anstyle::AnsiColor::Yellow.on_default().bold();
    format!("{yellow}warning{yellow:#}: {message}\n")
}

/// The report files a run can write (`run`, `analyze`, `report`).
#[derive(Debug, Args, Default)]
pub struct ReportArgs {
    /// Write the self-contained HTML report to this file.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Write the Markdown summary (job summary / PR comment) to this file.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Write JUnit XML to this file.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Upper bound on the Markdown summary, in characters; every value is honoured (below the
    /// size of the headline and table header the text is cut with `…`).
    #[arg(long, value_name = "N", default_value_t = 65_000)]
    pub markdown_max_chars: usize,
}

impl ReportArgs {
    /// Whether any report file was asked for.
    pub fn any(&self) -> bool {
        self.html.is_some() || self.markdown.is_some() || self.junit.is_some()
    }
}

fn write_file(path: &Path, text: &str) -> Result<(), String> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("can not create {}: {e}", parent.display()))?;
    }
    std::fs::write(path, text).map_err(|e| format!("can not write {}: {e}", path.display()))
}

/// Writes the results JSON and every report asked for, printing each problem on stderr;
/// returns whether everything was written.
pub fn write_reports(results: &Results, json_path: Option<&Path>, reports: &ReportArgs) -> bool {
    let mut problems = Vec::new();
    if let Some(path) = json_path
        && let Err(e) = json::write(results, path)
    {
        problems.push(e.to_string());
    }
    if let Some(path) = &reports.html {
        match html::render(results) {
            Ok(text) => problems.extend(write_file(path, &text).err()),
            Err(e) => problems.push(format!("can not render the HTML report: {e}")),
        }
    }
    if let Some(path) = &reports.markdown {
        let options = markdown::MarkdownOptions {
            max_chars: reports.markdown_max_chars,
            ..markdown::MarkdownOptions::default()
        };
        problems.extend(write_file(path, &markdown::render(results, &options)).err());
    }
    if let Some(path) = &reports.junit {
        match junit::render(results) {
            Ok(text) => problems.extend(write_file(path, &text).err()),
            Err(e) => problems.push(e.to_string()),
        }
    }
    for p in &problems {
        err(&error_line(p));
    }
    problems.is_empty()
}

/// Redacts a value for output; a value that can not round-trip is replaced by an error
/// rather than shown unredacted.
pub fn redacted<T: serde::Serialize + serde::de::DeserializeOwned + Clone>(
    redactor: &Redactor,
    value: &T,
) -> Result<T, String> {
    redactor
        .redact_value(value)
        .map_err(|e| format!("can not redact the output: {e}"))
}

/// [`redacted`], printing the error on stderr when redaction fails; `None` then, so the
/// caller exits with [`super::EXIT_INVALID`] instead of showing an unredacted value.
pub fn redacted_or_report<T: serde::Serialize + serde::de::DeserializeOwned + Clone>(
    redactor: &Redactor,
    value: &T,
) -> Option<T> {
    redacted(redactor, value)
        .map_err(|e| err(&error_line(&e)))
        .ok()
}

/// A test's verdict block, redacted.
pub fn test_block(redactor: &Redactor, test: &TestResult) -> String {
    match redacted(redactor, test) {
        Ok(t) => terminal::render_test(&t),
        Err(e) => error_line(&e),
    }
}

/// Prints every diagnostic (redacted: test files may hold secrets in `env:`) and the count
/// line; returns whether there were any.
pub fn report_load_errors(
    redactor: &Redactor,
    report: &spec::LoadReport,
    total_files: usize,
) -> bool {
    if report.errors.is_empty() {
        return false;
    }
    for file in &report.errors {
        err(&redactor.redact(&diagnostic::render(file, true)));
    }
    let n = report.error_count();
    err(&error_line(&format!(
        "{n} problem{} in {} of {total_files} test file{}; nothing was run",
        if n == 1 { "" } else { "s" },
        report.errors.len(),
        if total_files == 1 { "" } else { "s" },
    )));
    true
}

/// At most this many transcript warnings are printed; the rest are counted.
const MAX_WARNINGS: usize = 10;

/// Prints a transcript's warnings (malformed lines) to stderr.
pub fn report_transcript_warnings(redactor: &Redactor, path: &Path, t: &Transcript) {
    for w in t.warnings.iter().take(MAX_WARNINGS) {
        let at = if w.line > 0 {
            format!("{}:{}", diagnostic::display_path(path), w.line)
        } else {
            diagnostic::display_path(path)
        };
        err(&redactor.redact(&warning_line(&format!("{at}: {}", w.message))));
    }
    let shown = t.warnings.len().min(MAX_WARNINGS) as u64;
    if t.warning_count() > shown {
        err(&warning_line(&format!(
            "… and {} more transcript warnings",
            t.warning_count() - shown
        )));
    }
    if let Some(lost) = t.lost_tool_calls() {
        err(&warning_line(&format!(
            "{}: {lost}",
            diagnostic::display_path(path)
        )));
    }
}

/// The redactor for a run: aptitude's environment and the tests' `env:`.
pub fn redactor_for(specs: &[spec::TestSpec]) -> Redactor {
    // The value of every variable an `mcp_servers` entry names with `${VAR}` is a secret,
    // whatever its name.
    let expanded: Vec<String> = specs
        .iter()
        .flat_map(|s| s.mcp_servers.values())
        .flat_map(spec::McpServer::variables)
        .filter_map(|name| std::env::var(name).ok())
        .collect();
    Redactor::from_process_env(
        specs
            .iter()
            .flat_map(|s| s.env.iter().map(|(k, v)| (k.as_str(), v.as_str()))),
    )
    .with_secret_values(expanded.iter().map(String::as_str))
}

/// The test files under `paths`; `None` (after saying why) when there are none or a path
/// is missing.
pub fn discover_tests(paths: &[PathBuf]) -> Option<Vec<PathBuf>> {
    match crate::spec::discover::discover(paths) {
        Ok(files) if !files.is_empty() => Some(files),
        Ok(_) => {
            err(&error_line(&format!(
                "no test files (*.aptitude.yaml, *.aptitude.yml) under {}",
                paths
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
            None
        }
        Err(e) => {
            err(&error_line(&e.to_string()));
            None
        }
    }
}

/// A tokio runtime; `None` (after saying why) when it can not start.
pub fn runtime() -> Option<tokio::runtime::Runtime> {
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => Some(rt),
        Err(e) => {
            err(&error_line(&format!(
                "can not start the async runtime: {e}"
            )));
            None
        }
    }
}
