//! Everything the CLI writes: stdout and stderr through `anstream` (colors stripped off a
//! terminal or with `NO_COLOR`), the report files, and the redaction every one of them
//! goes through.
//!
//! Every text written to stdout or stderr passes [`crate::shared::inert::terminal_output`]
//! (aptitude's own colours pass, every other control character is shown) and
//! [`crate::shared::inert::workflow_commands_defused`] (no line is a GitHub Actions
//! workflow command), in and out of GitHub Actions. aptitude's own workflow commands go
//! through [`command`] alone.

use std::io::{IsTerminal, Write as _};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::Args;

use super::error::CliError;
use super::error::warning_line;
use crate::report::live::LiveReporter;
use crate::report::{FILE_FORMATS, RenderOptions};
use crate::run::events::Event;
use crate::shared::redact::Redactor;
use crate::spec::{self, diagnostic};
use crate::transcript::Transcript;
use crate::verdict::results::{Results, TestResult};

/// `text` as it may reach a terminal or a CI log: nothing in it moves the cursor or is a
/// workflow command.
pub(super) fn inert(text: &str) -> String {
    use crate::shared::inert;
    inert::workflow_commands_defused(&inert::terminal_output(text)).into_owned()
}

/// Writes to stdout, made [`inert`]; a closed pipe (`| head`) is not an error worth
/// reporting.
pub fn out(text: &str) {
    if QUIET.load(std::sync::atomic::Ordering::SeqCst) {
        return;
    }
    let mut stdout = anstream::stdout().lock();
    let _ = stdout.write_all(inert(text).as_bytes());
    let _ = stdout.flush();
}

/// Set while a check runs an `aptitude run` of its own before the tests start (the drift
/// check's probes): its test blocks and summary are not this run's, so nothing is printed.
static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Silences [`out`] and [`err`] until dropped. Only for work done before anything else
/// prints (nothing runs beside it), so that no other output is lost.
pub struct Quiet(());

impl Quiet {
    /// Silences the output.
    pub fn new() -> Self {
        QUIET.store(true, std::sync::atomic::Ordering::SeqCst);
        Quiet(())
    }
}

impl Drop for Quiet {
    fn drop(&mut self) {
        QUIET.store(false, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Writes to stderr, made [`inert`].
pub fn err(text: &str) {
    if QUIET.load(std::sync::atomic::Ordering::SeqCst) {
        return;
    }
    let mut stderr = anstream::stderr().lock();
    let _ = stderr.write_all(inert(text).as_bytes());
}

/// Writes one of aptitude's own workflow commands (`::warning title=aptitude::…`, built
/// by [`crate::shared::inert::workflow_command`]) to stdout: the one write that is not
/// defused.
pub fn command(command: &str) {
    let mut stdout = anstream::stdout().lock();
    let _ = stdout.write_all(command.as_bytes());
    let _ = stdout.flush();
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
    /// Send the results as OpenTelemetry traces (OTLP over HTTP, protobuf) to this
    /// collector's base URL (`/v1/traces` is appended). Without it, the standard
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` / `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` variables are
    /// used; `OTEL_EXPORTER_OTLP_HEADERS` adds headers. A failed export is a warning.
    #[arg(long, value_name = "URL")]
    pub otlp: Option<String>,
    /// Upper bound on the Markdown summary, in characters; every value is honoured (below the
    /// size of the headline and table header the text is cut with `…`).
    #[arg(long, value_name = "N", default_value_t = 65_000)]
    pub markdown_max_chars: usize,
}

impl ReportArgs {
    /// Whether any report was asked for: a file, or traces to an OTLP collector
    /// (`--otlp`, or the `OTEL_EXPORTER_OTLP_*` variables).
    pub fn any(&self) -> bool {
        FILE_FORMATS.iter().any(|f| self.path(f.name).is_some()) || self.otlp_endpoint().is_some()
    }

    /// Where traces go, if anywhere ([`crate::report::otlp::endpoint`]).
    pub fn otlp_endpoint(&self) -> Option<String> {
        crate::report::otlp::endpoint(self.otlp.as_deref(), |name| std::env::var(name).ok())
    }

    /// The file asked for the report format called `name` ([`FILE_FORMATS`]).
    pub fn path(&self, name: &str) -> Option<&Path> {
        match name {
            "html" => self.html.as_deref(),
            "markdown" => self.markdown.as_deref(),
            "junit" => self.junit.as_deref(),
            _ => None,
        }
    }
}

fn write_file(path: &Path, text: &str) -> Result<(), crate::shared::files::OutputError> {
    crate::shared::files::write_output(path, text.as_bytes())
}

/// Writes the results JSON and every report asked for; what could not be written is
/// [`CliError::Reports`], after every other report was written.
pub fn write_reports(
    results: &Results,
    json_path: Option<&Path>,
    reports: &ReportArgs,
) -> Result<(), CliError> {
    write_reports_from(results, &results.tests, json_path, reports)
}

/// [`write_reports`], each test whole from `source` (a results file read a chunk at a
/// time, [`crate::report::json::source`]); `results` gives the rest.
pub fn write_reports_from(
    results: &Results,
    source: &dyn crate::report::json::source::TestSource,
    json_path: Option<&Path>,
    reports: &ReportArgs,
) -> Result<(), CliError> {
    let options = RenderOptions {
        markdown_max_chars: reports.markdown_max_chars,
    };
    let mut problems = Vec::new();
    for format in FILE_FORMATS {
        let path = match format.name {
            "json" => json_path,
            name => reports.path(name),
        };
        if let Some(path) = path {
            // A renderer's panic (a bug of aptitude's) costs that one report, never the
            // others: the results JSON is still written.
            // The results JSON is written as it is serialized, its run detail into the
            // blob pack beside it (`report::json::write`).
            if format.name == "json" {
                match crate::shared::caught::caught(|| {
                    crate::report::json::write_from(results, source, path)
                }) {
                    Ok(written) => problems.extend(written.err().map(|e| e.to_string())),
                    Err(_) => problems.push(format!(
                        "{}: the results JSON could not be written (a bug in aptitude, printed above)",
                        path.display()
                    )),
                }
                continue;
            }
            match crate::shared::caught::caught(|| (format.render)(results, source, &options)) {
                Ok(Ok(text)) => {
                    problems.extend(write_file(path, &text).err().map(|e| e.to_string()));
                }
                Ok(Err(e)) => problems.push(e.to_string()),
                Err(_) => problems.push(format!(
                    "{}: the {} report could not be rendered (a bug in aptitude, printed above)",
                    path.display(),
                    format.name
                )),
            }
        }
    }
    export_otlp(results, source, reports);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(CliError::Reports { problems })
    }
}

/// Sends `results` to the OTLP collector asked for (`--otlp`, or the `OTEL_EXPORTER_OTLP_*`
/// variables), if any. A failure is printed as a warning and changes nothing else: the
/// verdict, the exit code and the other reports stand.
fn export_otlp(
    results: &Results,
    source: &dyn crate::report::json::source::TestSource,
    reports: &ReportArgs,
) {
    let Some(endpoint) = reports.otlp_endpoint() else {
        return;
    };
    // The spans need every run's tool calls: the tests whole, all at once.
    let whole = match crate::report::json::source::whole(results, source) {
        Ok(whole) => whole,
        Err(e) => {
            err(&warning_line(&format!("no OTLP export: {e}")));
            return;
        }
    };
    match crate::report::otlp::export(&whole, &endpoint) {
        Ok(sent) => tracing::info!(
            spans = sent.spans,
            requests = sent.requests,
            "OTLP export to {endpoint}"
        ),
        Err(e) => err(&warning_line(&e.to_string())),
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

/// Shows run events as they arrive through `reporter`, until the channel closes. On a
/// terminal a progress line (when `total` tests are given) shows what is running; elsewhere (CI logs) only
/// plain lines are written. Each finished test is also put in its `finished` slot, for a
/// run cut short to report what had finished.
pub async fn show_events(
    mut rx: tokio::sync::mpsc::UnboundedReceiver<Event>,
    mut reporter: LiveReporter,
    total: Option<usize>,
    finished: Option<Arc<Mutex<Vec<Option<TestResult>>>>>,
) {
    let progress = total
        .filter(|_| std::io::stderr().is_terminal())
        .map(|total| {
            let bar = indicatif::ProgressBar::new(total as u64);
            let style = indicatif::ProgressStyle::with_template(
                "{spinner} {pos}/{len} done · {elapsed} · {wide_msg}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner());
            bar.set_style(style);
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        });
    while let Some(event) = rx.recv().await {
        if let Event::TestFinished { index, result } = &event
            && let Some(finished) = &finished
            && let Ok(mut finished) = finished.lock()
            && let Some(slot) = finished.get_mut(*index)
        {
            *slot = Some((**result).clone());
        }
        if matches!(event, Event::RunFinished { .. })
            && let Some(bar) = &progress
        {
            bar.finish_and_clear();
        }
        if let Some(text) = reporter.handle(&event) {
            match &progress {
                Some(bar) => bar.suspend(|| out(&text)),
                None => out(&text),
            }
        }
        if let Some(bar) = &progress {
            if matches!(event, Event::TestFinished { .. }) {
                bar.inc(1);
            }
            let now = reporter.running();
            bar.set_message(if now.is_empty() {
                String::new()
            } else {
                format!("running: {}", now.join(", "))
            });
        }
    }
    if let Some(bar) = progress {
        bar.finish_and_clear();
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

/// The test files under `paths`, by the discovery configuration and flags (`discovery`;
/// `None`: the nearest `.aptitude.yaml` or the built-in default, no flags).
///
/// # Errors
/// When there are none, a path is missing, or a discovery configuration has problems.
pub fn discover_tests(
    paths: &[PathBuf],
    discovery: Option<&super::DiscoveryArgs>,
) -> Result<spec::Discovered, CliError> {
    let none = super::DiscoveryArgs::default();
    let args = discovery.unwrap_or(&none);
    let found = spec::discover_tests(paths, args.config.as_deref(), &args.overrides()).map_err(
        |e| match e {
            spec::DiscoveryError::Discover(e) => CliError::Discover(e),
            spec::DiscoveryError::Config(file) => {
                let redactor = Redactor::from_process_env([]);
                CliError::DiscoveryConfig {
                    diagnostics: redactor.redact(&diagnostic::render(&file, true)),
                    count: file.diagnostics.len(),
                    path: diagnostic::display_path(&file.path),
                }
            }
        },
    )?;
    if found.files.is_empty() {
        let mut patterns: Vec<&str> = found.searches.iter().map(|(_, c)| c.pattern()).collect();
        patterns.dedup();
        return Err(CliError::NoTestFiles {
            paths: found
                .searches
                .iter()
                .map(|(dir, c)| c.search_dir(dir).display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            pattern: if patterns.is_empty() {
                crate::spec::discover::DEFAULT_TEST_PATTERN.to_owned()
            } else {
                patterns.join(", ")
            },
        });
    }
    Ok(found)
}

/// `--list-tests`: the test files found and what chose them, one per line.
pub fn list_tests(found: &spec::Discovered) {
    let mut text = format!(
        "Discovered {} test file{}:\n",
        found.files.len(),
        if found.files.len() == 1 { "" } else { "s" }
    );
    for file in &found.files {
        text.push_str(&format!("  {}\n", diagnostic::display_path(file)));
    }
    for (dir, config) in &found.searches {
        text.push_str(&format!(
            "searched {} for {} ({})\n",
            diagnostic::display_path(&config.search_dir(dir)),
            config.pattern(),
            config.file.as_deref().map_or_else(
                || "built-in default".to_owned(),
                |f| format!("discovery configuration {}", diagnostic::display_path(f))
            )
        ));
    }
    out(&text);
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
