//! Everything the CLI writes: stdout and stderr through `anstream` (colors stripped off a
//! terminal or with `NO_COLOR`), the report files, and the redaction every one of them
//! goes through.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use clap::Args;

use super::error::CliError;
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

/// Writes the results JSON and every report asked for; what could not be written is
/// [`CliError::Reports`], after every other report was written.
pub fn write_reports(
    results: &Results,
    json_path: Option<&Path>,
    reports: &ReportArgs,
) -> Result<(), CliError> {
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
    if problems.is_empty() {
        Ok(())
    } else {
        Err(CliError::Reports { problems })
    }
}

/// Redacts a value for output; a value that can not round-trip is an error rather than
/// shown unredacted.
pub fn redacted<T: serde::Serialize + serde::de::DeserializeOwned + Clone>(
    redactor: &Redactor,
    value: &T,
) -> Result<T, CliError> {
    redactor.redact_value(value).map_err(CliError::Redact)
}

/// A test's verdict block, redacted.
pub fn test_block(redactor: &Redactor, test: &TestResult) -> String {
    match redacted(redactor, test) {
        Ok(t) => terminal::render_test(&t),
        Err(e) => error_line(&e.to_string()),
    }
}

/// [`CliError::Load`] when test files have problems, with every diagnostic rendered and
/// redacted (test files may hold secrets in `env:`).
pub fn check_load_errors(
    redactor: &Redactor,
    report: &spec::LoadReport,
    total_files: usize,
) -> Result<(), CliError> {
    if report.errors.is_empty() {
        return Ok(());
    }
    Err(CliError::Load {
        diagnostics: report
            .errors
            .iter()
            .map(|file| redactor.redact(&diagnostic::render(file, true)))
            .collect(),
        count: report.error_count(),
        files: report.errors.len(),
        total: total_files,
    })
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
    Redactor::from_process_env(
        specs
            .iter()
            .flat_map(|s| s.env.iter().map(|(k, v)| (k.as_str(), v.as_str()))),
    )
}

/// The test files under `paths`.
///
/// # Errors
/// When there are none or a path is missing.
pub fn discover_tests(paths: &[PathBuf]) -> Result<Vec<PathBuf>, CliError> {
    let files = crate::spec::discover::discover(paths)?;
    if files.is_empty() {
        return Err(CliError::NoTestFiles {
            paths: paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
        });
    }
    Ok(files)
}

/// A tokio runtime.
///
/// # Errors
/// When it can not start.
pub fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(CliError::Runtime)
}
