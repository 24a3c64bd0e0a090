//! The command line: clap structs, the commands, and the one place that maps outcomes and
//! errors to exit codes.
//!
//! Exit codes: `0` every test passed; `1` a test failed or errored; `2` invalid input
//! (a test file, a transcript, an argument).

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use tokio_util::sync::CancellationToken;

use crate::agent::Agent;
use crate::agent::claude::{ClaudeAdapter, PermissionMode};

use clap::{Args, Parser, Subcommand};

use crate::report::{json, terminal};
use crate::results::Results;
use crate::spec::{self, diagnostic, discover};
use crate::transcript;

/// Exit code: every test passed.
pub const EXIT_OK: u8 = 0;
/// Exit code: a test failed or errored.
pub const EXIT_FAILED: u8 = 1;
/// Exit code: invalid input or usage.
pub const EXIT_INVALID: u8 = 2;
/// Exit code: the run was interrupted (Ctrl-C / SIGTERM), as shells report SIGINT.
pub const EXIT_INTERRUPTED: u8 = 130;

/// Unit tests for AI coding agents.
#[derive(Debug, Parser)]
#[command(name = "aptitude", version, about, long_about = None)]
pub struct Cli {
    /// When to use colors: auto, always, never (NO_COLOR is respected).
    #[arg(long, global = true, default_value = "auto", value_name = "WHEN")]
    pub color: ColorWhen,
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// `--color` values.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ColorWhen {
    /// Colors on terminals, unless NO_COLOR is set.
    Auto,
    /// Always color.
    Always,
    /// Never color.
    Never,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run tests with the real agent CLI, each in a fresh copy of its workspace.
    Run(RunArgs),
    /// Check test files without running anything; every problem of every file is reported.
    Validate(ValidateArgs),
    /// Evaluate a test's assertions against an existing transcript.
    Analyze(AnalyzeArgs),
    /// Show the normalized transcript: what assertions see.
    Transcript(TranscriptArgs),
}

/// `aptitude validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Test files or directories (searched for *.aptitude.yaml / *.aptitude.yml).
    #[arg(default_value = ".")]
    pub paths: Vec<PathBuf>,
}

/// `aptitude run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Test files or directories (searched for *.aptitude.yaml / *.aptitude.yml).
    #[arg(default_value = ".")]
    pub paths: Vec<PathBuf>,
    /// Write results JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// How many tests run at once.
    #[arg(long, short = 'j', default_value_t = crate::runner::DEFAULT_JOBS, value_name = "N")]
    pub jobs: usize,
    /// Keep each test's workspace copy and print where it is.
    #[arg(long)]
    pub keep_workspaces: bool,
    /// The Claude Code binary (default: $APTITUDE_CLAUDE_BIN, else `claude` on PATH).
    #[arg(long, value_name = "PATH")]
    pub claude_bin: Option<PathBuf>,
    /// Claude Code's permission mode: `bypass` (the default: the workspace is a throwaway
    /// copy) or a mode passed as `--permission-mode` (acceptEdits, plan, …).
    #[arg(long, default_value = "bypass", value_name = "MODE")]
    pub permission_mode: String,
    /// Timeout for tests that set none ("30s", "5m").
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub timeout: Option<std::time::Duration>,
    /// How `stdout` reviews are graded.
    #[command(flatten)]
    pub judge: JudgeArgs,
}

/// Flags of the LLM judge (`run` and `analyze`).
#[derive(Debug, Args)]
pub struct JudgeArgs {
    /// Do not grade `stdout` reviews; they are reported as skipped.
    #[arg(long)]
    pub no_grade: bool,
    /// Neither read nor write the grade cache ($APTITUDE_CACHE_DIR, else
    /// ~/.cache/aptitude/judge).
    #[arg(long)]
    pub no_cache: bool,
    /// Grading calls at once, across all tests.
    #[arg(long, default_value_t = crate::judge::DEFAULT_JUDGE_JOBS, value_name = "N")]
    pub judge_jobs: usize,
    /// Retries for a judge reply that can not be parsed (then the review is an error).
    #[arg(long, default_value_t = crate::judge::DEFAULT_RETRIES, value_name = "N")]
    pub judge_retries: u32,
}

impl JudgeArgs {
    fn config(&self) -> crate::judge::JudgeConfig {
        crate::judge::JudgeConfig {
            enabled: !self.no_grade,
            retries: self.judge_retries,
            jobs: self.judge_jobs.max(1),
            cache: if self.no_cache {
                None
            } else {
                crate::judge::cache::Cache::default_dir().map(crate::judge::cache::Cache::new)
            },
            timeout: crate::judge::GRADE_TIMEOUT,
        }
    }
}

fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    humantime::parse_duration(s).map_err(|e| format!("{e} (write e.g. \"30s\" or \"5m\")"))
}

/// `aptitude analyze`.
#[derive(Debug, Args)]
#[command(after_help = "\
Forms:
  aptitude analyze TEST_FILE TRANSCRIPT   one test against one transcript
  aptitude analyze PATHS...               every test found, each against its recorded transcript:
                                          x.aptitude.yaml is paired with x.transcript.jsonl (or .json)
                                          in the same directory

Transcripts may be Claude Code session logs or stream-json output; Codex CLI, Gemini CLI
and Qwen Code formats are detected too.")]
pub struct AnalyzeArgs {
    /// A test file and its transcript, or test files and directories with recorded
    /// transcripts beside them.
    #[arg(required = true, value_name = "PATHS")]
    pub paths: Vec<PathBuf>,
    /// Write results JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// The Claude Code binary that grades `stdout` reviews (default: $APTITUDE_CLAUDE_BIN,
    /// else `claude` on PATH).
    #[arg(long, value_name = "PATH")]
    pub claude_bin: Option<PathBuf>,
    /// How `stdout` reviews are graded.
    #[command(flatten)]
    pub judge: JudgeArgs,
}

/// `aptitude transcript`.
#[derive(Debug, Args)]
pub struct TranscriptArgs {
    /// The transcript file.
    pub file: PathBuf,
    /// Print the normalized transcript as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs the command line and returns the process exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            // clap prints help/version to stdout (exit 0) and usage errors to stderr (exit 2).
            let _ = err.print();
            return ExitCode::from(if err.use_stderr() {
                EXIT_INVALID
            } else {
                EXIT_OK
            });
        }
    };
    match cli.color {
        ColorWhen::Auto => {}
        ColorWhen::Always => anstream::ColorChoice::Always.write_global(),
        ColorWhen::Never => anstream::ColorChoice::Never.write_global(),
    }
    let code = match cli.command {
        Command::Run(args) => run(&args),
        Command::Validate(args) => validate(&args),
        Command::Analyze(args) => analyze(&args),
        Command::Transcript(args) => show_transcript(&args),
    };
    ExitCode::from(code)
}

/// Writes to stdout; a closed pipe (`| head`) is not an error worth reporting.
fn out(text: &str) {
    let mut stdout = anstream::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
}

/// Writes to stderr.
fn err(text: &str) {
    let mut stderr = anstream::stderr().lock();
    let _ = stderr.write_all(text.as_bytes());
}

fn error_line(message: &str) -> String {
    let red = anstyle::AnsiColor::Red.on_default().bold();
    format!("{red}error{red:#}: {message}\n")
}

/// Prints every diagnostic and the count line; returns whether there were any.
fn report_load_errors(report: &spec::LoadReport, total_files: usize) -> bool {
    if report.errors.is_empty() {
        return false;
    }
    for file in &report.errors {
        err(&diagnostic::render(file, true));
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

fn validate(args: &ValidateArgs) -> u8 {
    let files = match discover::discover(&args.paths) {
        Ok(files) => files,
        Err(e) => {
            err(&error_line(&e.to_string()));
            return EXIT_INVALID;
        }
    };
    if files.is_empty() {
        err(&error_line(&format!(
            "no test files (*.aptitude.yaml, *.aptitude.yml) under {}",
            args.paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )));
        return EXIT_INVALID;
    }
    let report = spec::load_files(&files);
    if report_load_errors(&report, files.len()) {
        return EXIT_INVALID;
    }
    let assertions: usize = report.specs.iter().map(|s| s.assertions.len()).sum();
    let green = anstyle::AnsiColor::Green.on_default();
    out(&format!(
        "{green}✓{green:#} {} test file{} valid ({assertions} assertion{})\n",
        files.len(),
        if files.len() == 1 { "" } else { "s" },
        if assertions == 1 { "" } else { "s" },
    ));
    EXIT_OK
}

fn run(args: &RunArgs) -> u8 {
    let started = Instant::now();
    let files = match discover::discover(&args.paths) {
        Ok(files) if !files.is_empty() => files,
        Ok(_) => {
            err(&error_line(&format!(
                "no test files (*.aptitude.yaml, *.aptitude.yml) under {}",
                args.paths
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
            return EXIT_INVALID;
        }
        Err(e) => {
            err(&error_line(&e.to_string()));
            return EXIT_INVALID;
        }
    };
    let report = spec::load_files(&files);
    if report_load_errors(&report, files.len()) {
        return EXIT_INVALID;
    }
    let specs = report.specs;

    // Everything that can be checked before an agent starts is checked now.
    let mut problems = Vec::new();
    for s in &specs {
        let dir = s.workspace_dir();
        if !dir.is_dir() {
            problems.push(format!(
                "{}: workspace {} does not exist",
                diagnostic::display_path(&s.file),
                diagnostic::display_path(&dir)
            ));
        }
        if s.agent != "claude" {
            problems.push(format!(
                "{}: agent `{}` can not be run by this version of aptitude (only `claude`); its transcripts can be evaluated with `aptitude analyze`",
                diagnostic::display_path(&s.file),
                s.agent
            ));
        }
    }
    if !problems.is_empty() {
        for p in &problems {
            err(&error_line(p));
        }
        err(&error_line("nothing was run"));
        return EXIT_INVALID;
    }

    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            err(&error_line(&format!(
                "can not start the async runtime: {e}"
            )));
            return EXIT_INVALID;
        }
    };
    runtime.block_on(async {
        let claude: Arc<dyn Agent> = Arc::new(ClaudeAdapter::new(
            args.claude_bin.clone(),
            PermissionMode::parse(&args.permission_mode),
        ));
        let info = match claude.check().await {
            Ok(info) => info,
            Err(e) => {
                err(&error_line(&e.to_string()));
                err(&error_line("nothing was run"));
                return EXIT_INVALID;
            }
        };
        let mut agents = std::collections::BTreeMap::new();
        agents.insert("claude".to_owned(), (claude, info.version.clone()));
        let config = crate::runner::RunConfig {
            jobs: args.jobs.max(1),
            keep_workspaces: args.keep_workspaces,
            default_timeout: args.timeout.unwrap_or(crate::runner::DEFAULT_TIMEOUT),
        };
        let mut graders: std::collections::BTreeMap<String, Arc<dyn Agent>> =
            std::collections::BTreeMap::new();
        for (name, (agent, _)) in &agents {
            graders.insert(name.clone(), Arc::clone(agent));
        }
        let judge = Arc::new(crate::judge::Judge::new(args.judge.config(), graders));
        let runner = crate::runner::Runner::new(agents, config, judge);

        let cancel = CancellationToken::new();
        let interrupted = Arc::new(AtomicBool::new(false));
        spawn_signal_handler(cancel.clone(), Arc::clone(&interrupted));

        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let printer = tokio::spawn(async move {
            while let Some(event) = rx.recv().await {
                if let crate::runner::Event::Finished { result, .. } = event {
                    out(&(terminal::render_test(&result) + "\n"));
                }
            }
        });
        let tests = runner.run(&specs, tx, cancel).await;
        let _ = printer.await;
        let results = Results::new(tests, started.elapsed().as_millis() as u64);
        out(&terminal::render_summary(&results.summary));
        if let Some(path) = &args.json
            && let Err(e) = json::write(&results, path)
        {
            err(&error_line(&e.to_string()));
            return EXIT_INVALID;
        }
        if interrupted.load(Ordering::SeqCst) {
            err(&error_line(
                "interrupted: running agents were stopped; results cover the tests that finished",
            ));
            EXIT_INTERRUPTED
        } else if results.all_passed() {
            EXIT_OK
        } else {
            EXIT_FAILED
        }
    })
}

/// Ctrl-C or SIGTERM cancels the run: running agents are stopped the same way a timeout
/// stops them, and tests not yet started are not started.
fn spawn_signal_handler(cancel: CancellationToken, interrupted: Arc<AtomicBool>) {
    tokio::spawn(async move {
        let mut term =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        let sigterm = async {
            match term.as_mut() {
                Some(t) => {
                    t.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            () = sigterm => {}
        }
        interrupted.store(true, Ordering::SeqCst);
        cancel.cancel();
    });
}

/// The transcript recorded beside a test file: `x.aptitude.yaml` → `x.transcript.jsonl`
/// (or `x.transcript.json`).
pub fn recorded_transcript(test_file: &std::path::Path) -> Option<PathBuf> {
    let name = test_file.file_name()?.to_str()?;
    let stem = name
        .strip_suffix(".aptitude.yaml")
        .or_else(|| name.strip_suffix(".aptitude.yml"))?;
    ["jsonl", "json"]
        .iter()
        .map(|ext| test_file.with_file_name(format!("{stem}.transcript.{ext}")))
        .find(|p| p.is_file())
}

fn analyze(args: &AnalyzeArgs) -> u8 {
    let started = Instant::now();
    // `TEST TRANSCRIPT`: the second path is a file that is not a test file.
    let explicit = args.paths.len() == 2
        && args.paths[1].is_file()
        && !discover::is_test_file(&args.paths[1])
        && args.paths[0].is_file();
    let test_files = if explicit {
        vec![args.paths[0].clone()]
    } else {
        match discover::discover(&args.paths) {
            Ok(files) if !files.is_empty() => files,
            Ok(_) => {
                err(&error_line(
                    "no test files (*.aptitude.yaml, *.aptitude.yml) found",
                ));
                return EXIT_INVALID;
            }
            Err(e) => {
                err(&error_line(&e.to_string()));
                return EXIT_INVALID;
            }
        }
    };
    let report = spec::load_files(&test_files);
    if report_load_errors(&report, test_files.len()) {
        return EXIT_INVALID;
    }
    let mut pairs = Vec::new();
    let mut missing = Vec::new();
    for spec in report.specs {
        let transcript = if explicit {
            Some(args.paths[1].clone())
        } else {
            recorded_transcript(&spec.file)
        };
        match transcript {
            Some(t) => pairs.push((spec, t)),
            None => missing.push(diagnostic::display_path(&spec.file)),
        }
    }
    if !missing.is_empty() {
        for file in &missing {
            err(&error_line(&format!(
                "no recorded transcript for {file} (expected {} beside it)",
                file.replace(".aptitude.yaml", ".transcript.jsonl")
                    .replace(".aptitude.yml", ".transcript.jsonl")
            )));
        }
        err("hint: pass one explicitly: aptitude analyze TEST_FILE TRANSCRIPT\n");
        return EXIT_INVALID;
    }
    let mut parsed = Vec::new();
    for (spec, path) in pairs {
        let test_started = Instant::now();
        let transcript = match transcript::parse_file(&path) {
            Ok(t) => t,
            Err(e) => {
                err(&error_line(&e.to_string()));
                return EXIT_INVALID;
            }
        };
        report_transcript_warnings(&path, &transcript);
        parsed.push((spec, transcript, test_started));
    }
    let needs_judge = parsed.iter().any(|(spec, _, _)| {
        spec.assertions
            .iter()
            .any(|a| matches!(a.kind, crate::spec::AssertionKind::Review(_)))
    });
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            err(&error_line(&format!(
                "can not start the async runtime: {e}"
            )));
            return EXIT_INVALID;
        }
    };
    let claude: Arc<dyn Agent> = Arc::new(ClaudeAdapter::new(
        args.claude_bin.clone(),
        PermissionMode::Bypass,
    ));
    let mut graders: std::collections::BTreeMap<String, Arc<dyn Agent>> =
        std::collections::BTreeMap::new();
    graders.insert("claude".to_owned(), claude);
    let judge = crate::judge::Judge::new(args.judge.config(), graders);
    let cancel = CancellationToken::new();
    let tests: Vec<_> = runtime.block_on(async {
        if needs_judge {
            spawn_signal_handler(cancel.clone(), Arc::new(AtomicBool::new(false)));
        }
        let graded = parsed.into_iter().map(|(spec, transcript, test_started)| {
            let (judge, cancel) = (&judge, &cancel);
            async move {
                let reviews = crate::runner::grade_reviews(&spec, judge, &transcript, cancel).await;
                let elapsed = test_started.elapsed().as_millis() as u64;
                crate::runner::evaluate_transcript(&spec, transcript, &reviews, elapsed)
            }
        });
        futures_util::future::join_all(graded).await
    });
    let results = Results::new(tests, started.elapsed().as_millis() as u64);
    out(&terminal::render_results(&results));
    if let Some(path) = &args.json
        && let Err(e) = json::write(&results, path)
    {
        err(&error_line(&e.to_string()));
        return EXIT_INVALID;
    }
    if results.all_passed() {
        EXIT_OK
    } else {
        EXIT_FAILED
    }
}

/// At most this many transcript warnings are printed; the rest are counted.
const MAX_WARNINGS: usize = 10;

fn report_transcript_warnings(path: &std::path::Path, t: &transcript::Transcript) {
    let yellow = anstyle::AnsiColor::Yellow.on_default().bold();
    for w in t.warnings.iter().take(MAX_WARNINGS) {
        let at = if w.line > 0 {
            format!("{}:{}", diagnostic::display_path(path), w.line)
        } else {
            diagnostic::display_path(path)
        };
        err(&format!("{yellow}warning{yellow:#}: {at}: {}\n", w.message));
    }
    if t.warnings.len() > MAX_WARNINGS {
        err(&format!(
            "{yellow}warning{yellow:#}: … and {} more transcript warnings\n",
            t.warnings.len() - MAX_WARNINGS
        ));
    }
}

fn show_transcript(args: &TranscriptArgs) -> u8 {
    let t = match transcript::parse_file(&args.file) {
        Ok(t) => t,
        Err(e) => {
            err(&error_line(&e.to_string()));
            return EXIT_INVALID;
        }
    };
    if args.json {
        match serde_json::to_string_pretty(&t) {
            Ok(text) => out(&(text + "\n")),
            Err(e) => {
                err(&error_line(&e.to_string()));
                return EXIT_INVALID;
            }
        }
    } else {
        report_transcript_warnings(&args.file, &t);
        out(&terminal::render_transcript(&t));
    }
    EXIT_OK
}
