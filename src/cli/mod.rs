//! The command line: clap structs, the commands, and the one place that maps outcomes and
//! errors to exit codes ([`main`]).
//!
//! Exit codes (see [`error`]): `0` every test passed; `1` a test failed or errored; `2`
//! invalid input (a test file, a transcript, an argument); `130` interrupted (SIGINT,
//! SIGTERM or SIGHUP).

mod agents;
mod analyze;
mod bias;
pub mod bisect;
mod canary;
mod certify;
mod coverage;
mod diff;
mod draft;
pub mod drift;
mod drift_check;
pub mod error;
mod init;
mod inspect;
mod judge;
mod log;
mod output;
mod prompt_log;
mod publish;
mod run;
mod settings;
mod shards;

use std::path::PathBuf;
use std::process::ExitCode;

pub use error::{CliError, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_INVALID, EXIT_OK, Outcome};
pub use output::ReportArgs;

use clap::{Args, Parser, Subcommand};

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
    Run(Box<RunArgs>),
    /// Check test files without running anything; every problem of every file is reported.
    Validate(ValidateArgs),
    /// Evaluate a test's assertions against an existing transcript.
    Analyze(AnalyzeArgs),
    /// Show the normalized transcript: what assertions see.
    Transcript(TranscriptArgs),
    /// Render reports (HTML, Markdown, JUnit) from a results JSON file.
    Report(ReportCommandArgs),
    /// Merge the results files of shard jobs (`run --shard K/N`) into one run's results
    /// and reports.
    Merge(MergeArgs),
    /// Publish a results JSON file on GitHub: PR comment, check run, job summary, outputs.
    Publish(PublishArgs),
    /// Scaffold a first test of the repository's AGENTS.md/CLAUDE.md and a workflow that
    /// runs it on pull requests; never overwrites a file.
    Init(InitArgs),
    /// List every agent: whether it is installed, at which version against the one
    /// aptitude is tested with, and whether its credentials are there (names only).
    Agents(AgentsArgs),
    /// Run an agent once on a prompt, in a copy of a directory, and print the tool calls
    /// it made: the quickest way to see what to assert.
    Log(LogArgs),
    /// Which rules of the instruction files (AGENTS.md, CLAUDE.md, SKILL.md, …) the tests
    /// cover (`covers:`), with each rule's pass rate and effect from a run's results.
    Coverage(coverage::CoverageArgs),
    /// Why a test's verdict changed between two results files: where the two runs'
    /// trajectories part, what each did there, which assertions flipped. With one file,
    /// the passing and failing runs of its flaky tests.
    Diff(DiffArgs),
    /// People's verdicts on the LLM judge's grades: label judged answers pass or fail.
    Judge(judge::JudgeArgs),
    /// Find the first release of an agent CLI between a good and a bad one where the
    /// suite's pass rate falls, judged from repeated runs per release.
    Bisect(bisect::BisectArgs),
    /// What changed in an agent's tools between two releases, read from the request each
    /// sends its model (a stub that costs nothing), with the tests it affects.
    Drift(drift::DriftArgs),
}

/// `aptitude diff`.
#[derive(Debug, Args)]
#[command(after_help = "\
Forms:
  aptitude diff BASE.json HEAD.json       each test whose verdict or pass rate changed
  aptitude diff RESULTS.json              each flaky test: its first passing run against its
                                          first failing one

Exit codes: 0 nothing regressed, 1 a test regressed, 2 invalid input.")]
pub struct DiffArgs {
    /// The base results (e.g. the base branch's), written by `run --json`.
    #[arg(value_name = "BASE.json")]
    pub base: PathBuf,
    /// The head results; without it, runs of BASE's repeated tests are compared.
    #[arg(value_name = "HEAD.json")]
    pub head: Option<PathBuf>,
    /// Only the test of this name (also listed when its verdict did not change).
    #[arg(long, value_name = "NAME")]
    pub test: Option<String>,
    /// Which runs of a repeated test to compare: N (run N of each side) or A,B (run A of
    /// the base, run B of the head; both of BASE with one file).
    #[arg(long, value_name = "N|A,B", value_parser = diff::parse_runs)]
    pub run: Option<crate::report::diff::RunPick>,
    /// Write the comparison as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write the comparison as Markdown to this file.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// With repeated runs on both sides, a change of pass rate counts (regressed, fixed)
    /// only when a one-sided Fisher exact test gives a p-value below this (0–1).
    #[arg(long, default_value_t = crate::report::baseline::DEFAULT_SIGNIFICANCE, value_name = "P",
          value_parser = parse_significance)]
    pub significance: f64,
}

/// `aptitude agents`.
#[derive(Debug, Args)]
pub struct AgentsArgs {
    /// An agent's binary, as NAME=PATH (repeatable). Default: $APTITUDE_<NAME>_BIN, else
    /// the agent's program on PATH.
    #[arg(long = "agent-bin", value_name = "NAME=PATH", value_parser = settings::parse_agent_pair)]
    pub agent_bin: Vec<(crate::agent::AgentKind, String)>,
}

/// `aptitude log`.
#[derive(Debug, Args)]
pub struct LogArgs {
    /// The prompt.
    pub prompt: String,
    /// The directory copied for the run; the agent works in the copy.
    #[arg(
        long,
        short = 'w',
        visible_alias = "workdir",
        default_value = ".",
        value_name = "DIR"
    )]
    pub workspace: PathBuf,
    /// The agent that runs the prompt (`aptitude agents` lists them).
    #[arg(long, short = 'a', default_value = "claude", value_name = "AGENT",
          value_parser = settings::parse_agent)]
    pub agent: crate::agent::AgentKind,
    /// The model, passed to the agent.
    #[arg(long, short = 'm', value_name = "MODEL")]
    pub model: Option<String>,
    /// The run's time limit ("30s", "5m").
    #[arg(long, default_value = "10m", value_name = "DURATION", value_parser = parse_duration)]
    pub timeout: std::time::Duration,
    /// Keep the workspace copy and print where it is.
    #[arg(long)]
    pub keep_workspace: bool,
    /// Agent binaries, endpoints and version pins.
    #[command(flatten)]
    pub agents: settings::AgentArgs,
}

/// `aptitude init`.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// The repository's root directory.
    #[arg(default_value = ".")]
    pub dir: PathBuf,
    /// Instead of the first test: draft one test for each rule of this instruction file
    /// (AGENTS.md, CLAUDE.md, a SKILL.md, …) that no test under `DIR/tests/agents` covers,
    /// through an agent (`--agent`), into `DIR/tests/agents/drafts/`. Each draft is
    /// validated before it is written and marked as a draft, for you to review.
    #[arg(long, value_name = "FILE", conflicts_with = "skills")]
    pub rules: Option<PathBuf>,
    /// Instead of the first test: draft a routing suite for the skills of this directory
    /// (one `<name>/SKILL.md` each, e.g. `.claude/skills`), through an agent (`--agent`),
    /// into `DIR/tests/agents/drafts/routing.aptitude.yaml`: per skill, prompts that should
    /// trigger it and near-misses, written from every skill's description. The suite is
    /// validated before it is written and marked as a draft, for you to review.
    #[arg(long, value_name = "SKILLS_DIR")]
    pub skills: Option<PathBuf>,
    /// Instead of the first test: a nightly workflow (`.github/workflows/aptitude-canary.yml`)
    /// that runs `tests/agents` on the latest release of `--agent` and, when the suite
    /// passes significantly less often than on the pinned release, opens or updates one
    /// issue naming the first bad release (`aptitude bisect`).
    #[arg(long, conflicts_with_all = ["rules", "skills"])]
    pub canary: bool,
    /// The agent that drafts the tests (`--rules`, `--skills`), as the judge grades: its
    /// one-shot command (`claude -p`, `codex exec`, …); the agent `--canary` watches.
    #[arg(long, default_value = "claude", value_name = "AGENT", value_parser = settings::parse_agent)]
    pub agent: crate::agent::AgentKind,
    /// The model the drafting agent uses.
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// How agents are found and run.
    #[command(flatten)]
    pub agents: settings::AgentArgs,
}

/// GitHub publishing flags (`run --github`, `publish`).
#[derive(Debug, Args)]
pub struct GithubArgs {
    /// Compare with a baseline results file (e.g. the base branch's last results):
    /// regressions, fixes, new and removed tests, score changes. `github:auto` (inside
    /// GitHub Actions): the results artifact of the workflow's latest successful run on the
    /// base branch.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// With repeated runs on both sides, a test whose pass rate fell is a regression only
    /// when a one-sided Fisher exact test gives a p-value below this (0–1).
    #[arg(long, default_value_t = crate::report::baseline::DEFAULT_SIGNIFICANCE, value_name = "P",
          value_parser = parse_significance)]
    pub significance: f64,
    /// Do not post or update the PR comment.
    #[arg(long)]
    pub no_comment: bool,
    /// Do not create a check run.
    #[arg(long)]
    pub no_check_run: bool,
    /// Tells apart the comments and check runs of several jobs (a matrix) on one PR.
    #[arg(long, value_name = "KEY", env = "APTITUDE_REPORT_KEY")]
    pub report_key: Option<String>,
}

/// `aptitude publish`.
#[derive(Debug, Args)]
pub struct PublishArgs {
    /// A results JSON file written by `run` or `analyze` (`--json`).
    pub results: PathBuf,
    /// The HTML report's path, for the `report-path` step output.
    #[arg(long, value_name = "FILE")]
    pub report_path: Option<String>,
    /// What to publish.
    #[command(flatten)]
    pub github: GithubArgs,
}

/// `aptitude report`.
#[derive(Debug, Args)]
pub struct ReportCommandArgs {
    /// A results JSON file written by `run` or `analyze` (`--json`).
    pub results: PathBuf,
    /// The reports to write.
    #[command(flatten)]
    pub reports: ReportArgs,
}

/// `aptitude merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Results JSON files written by `run --json` (one per shard job); no test (no run of
    /// a test whose runs the shards split) may be in two of them.
    #[arg(required = true, value_name = "RESULTS")]
    pub results: Vec<PathBuf>,
    /// Write the merged results JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// The reports to write.
    #[command(flatten)]
    pub reports: ReportArgs,
}

/// `aptitude validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Test files or directories (searched for *.aptitude.yaml / *.aptitude.yml).
    #[arg(default_value = ".")]
    pub paths: Vec<PathBuf>,
    /// Print which files are tests and why (the discovery configuration), then each test's
    /// effective settings (agents, model, timeout, runs, min_pass, env names, MCP servers,
    /// judge), each with where it comes from: the test file, an aptitude.yaml, or the
    /// default.
    #[arg(long)]
    pub explain: bool,
    /// Which files are tests.
    #[command(flatten)]
    pub discovery: DiscoveryArgs,
}

/// Which files are tests (`run`, `validate`), in the original aptitude's spelling. Without
/// them, the nearest `.aptitude.yaml` (discovery configuration) decides, else
/// `*.aptitude.{yaml,yml}` below each directory given.
#[derive(Debug, Args, Default)]
pub struct DiscoveryArgs {
    /// Test file pattern, a glob on file names (overrides `test_pattern`), e.g.
    /// "*.aptitude.{yaml,yml}".
    #[arg(long, short = 'p', value_name = "PATTERN", value_parser = parse_glob)]
    pub pattern: Option<String>,
    /// Directory to search instead of the paths given (overrides `root`; relative to the
    /// current directory).
    #[arg(long, short = 'r', value_name = "ROOT")]
    pub root: Option<PathBuf>,
    /// Search only the directories given, not below them.
    #[arg(long)]
    pub no_recursive: bool,
    /// Discovery configuration file to use instead of the nearest .aptitude.yaml.
    #[arg(long, short = 'c', value_name = "CONFIG")]
    pub config: Option<PathBuf>,
    /// List the test files found, without loading or running them.
    #[arg(long)]
    pub list_tests: bool,
}

impl DiscoveryArgs {
    /// The command-line overrides of the discovery configuration.
    pub fn overrides(&self) -> crate::spec::discover::DiscoveryOverrides {
        crate::spec::discover::DiscoveryOverrides {
            pattern: self.pattern.clone(),
            root: self.root.clone(),
            no_recursive: self.no_recursive,
        }
    }
}

fn parse_glob(s: &str) -> Result<String, error::ArgValueError> {
    globset::Glob::new(s)
        .map(|_| s.to_owned())
        .map_err(|e| error::ArgValueError::Glob(e.kind().clone()))
}

/// `aptitude run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Test files or directories (searched for *.aptitude.yaml / *.aptitude.yml).
    #[arg(default_value = ".")]
    pub paths: Vec<PathBuf>,
    /// Which files are tests (`-p`, `-r`, `--no-recursive`, `-c`, `--list-tests`).
    #[command(flatten)]
    pub discovery: DiscoveryArgs,
    /// Write results JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Run only shard K of N of the tests (after they are split per agent and variant; the
    /// runs of a test with `runs: N` are split like tests), e.g. `2/3`: balanced by the
    /// durations in `--baseline` when given (`github:auto` too), else by a stable hash of
    /// each test's file, name, agent, variant and run number. Every test (every run) is in
    /// exactly one shard; `aptitude merge` joins the shards' results.
    #[arg(long, value_name = "K/N", value_parser = shards::parse_shard)]
    pub shard: Option<crate::run::shard::Shard>,
    /// How many tests run at once.
    #[arg(long, short = 'j', default_value_t = crate::run::DEFAULT_JOBS, value_name = "N")]
    pub jobs: usize,
    /// Keep each test's workspace copy and print where it is.
    #[arg(long)]
    pub keep_workspaces: bool,
    /// Record each agent's raw transcript (redacted) beside its test file as
    /// `x.transcript.jsonl`, for `aptitude analyze` to re-evaluate offline.
    #[arg(long)]
    pub record: bool,
    /// Skip the drift check: when an agent found as usual reports another version than
    /// the one aptitude is tested with, `run` compares the tools each offers the model
    /// (at no model cost, once per version) and warns about tests naming a changed tool.
    #[arg(long, env = "APTITUDE_NO_DRIFT_CHECK")]
    pub no_drift_check: bool,
    /// Agent binaries, endpoints and version pins.
    #[command(flatten)]
    pub agents: settings::AgentArgs,
    /// Timeout for tests that set none ("30s", "5m").
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub timeout: Option<std::time::Duration>,
    /// Run every test in a copy of DIR instead of its own workspace.
    #[arg(long, short = 'w', visible_alias = "workdir", value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// The agents for tests that name none, comma-separated (default: claude); each test
    /// runs once per agent. `NAME@VERSION` (`claude@latest,claude@2.1.300`, `pi@pinned`)
    /// installs each release into aptitude's cache and runs the test once per release.
    #[arg(long, short = 'a', value_name = "AGENT[@VERSION],...", value_delimiter = ',', value_parser = settings::parse_agent_choice)]
    pub agent: Vec<crate::spec::AgentTarget>,
    /// The model for tests that name none, passed to the agent.
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// Runs of each test that sets no `runs:`; each run is isolated (1–100). A test passes
    /// when `min_pass` of its runs pass (default: all).
    #[arg(long, default_value_t = 1, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=i64::from(crate::spec::MAX_RUNS)))]
    pub runs: u32,
    /// Try a run again, up to N times, when it ends in an infra error (model API 5xx or 429,
    /// a dropped connection, an agent CLI that could not start); waits 1s, 2s, 4s … between
    /// attempts. Agent failures are never retried.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub retry_infra: u32,
    /// Stop starting runs once the runs and their grading have cost this much (USD, as
    /// agents report it or as the model gateway prices it); runs not started are skipped
    /// (reason `budget`) and the exit code is 1. A model request that would cross it is
    /// refused by the gateway in the middle of a run, which ends `error` (kind `budget`).
    #[arg(long, value_name = "USD", value_parser = parse_usd)]
    pub max_cost: Option<f64>,
    /// The same ceiling in tokens (input, output and cache), for agents and models that
    /// have no price.
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u64>,
    /// Let agents talk to their model directly instead of through aptitude's model
    /// gateway: the agent then holds the real API key, its traffic is not metered, and
    /// the ceilings are checked only between runs.
    #[arg(long)]
    pub no_gateway: bool,
    /// Record each run's model exchange (requests and streamed replies, no credentials) as
    /// a compressed cassette beside the results file (`<results>.cassettes/`), referenced
    /// from each result's `model_traffic.cassette`, for `--replay`.
    #[arg(long, requires = "json", conflicts_with = "no_gateway")]
    pub record_model: bool,
    /// Run the agents for real while the model gateway answers from the cassettes this
    /// results file references (recorded with --record-model): tool calls, files, verify
    /// commands and assertions are real, model requests cost nothing.
    #[arg(long, value_name = "RESULTS.json", conflicts_with_all = ["no_gateway", "reuse"])]
    pub replay: Option<PathBuf>,
    /// What a replayed run does with a model request its cassette does not hold (the
    /// agent, its version, its prompt or a tool's result changed): `error` ends the run
    /// `error` (kind `replay`) naming the turn and what differed; `live` asks the real
    /// model from there on.
    #[arg(long, value_name = "error|live", default_value = "error", value_parser = ["error", "live"], requires = "replay")]
    pub replay_miss: String,
    /// Run only these variants (`default` is each test as written), comma-separated.
    #[arg(long, value_name = "NAME,...", value_delimiter = ',')]
    pub variant: Vec<String>,
    /// Print each tool call as agents make it; twice (-vv) adds the engine's diagnostics on
    /// stderr (as RUST_LOG=aptitude=debug does).
    #[arg(long, short = 'v', action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Publish the results on GitHub (inside GitHub Actions): PR comment, check run, job
    /// summary, step outputs.
    #[arg(long)]
    pub github: bool,
    /// GitHub publishing.
    #[command(flatten)]
    pub github_args: GithubArgs,
    /// How `stdout` reviews are graded.
    #[command(flatten)]
    pub judge: JudgeArgs,
    /// Report files.
    #[command(flatten)]
    pub reports: ReportArgs,
    /// Take each test whose fingerprint (agent and version, model, prompt, workspace,
    /// setup, env, inputs) is unchanged from this results file instead of running its
    /// agent, and evaluate today's assertions on its recorded transcript; such results are
    /// marked `reused`. `github:auto` (inside GitHub Actions) downloads the base branch's
    /// latest results.
    #[arg(long, value_name = "FILE")]
    pub reuse: Option<PathBuf>,
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
    #[arg(long, default_value_t = crate::assertions::judge::DEFAULT_JUDGE_JOBS, value_name = "N")]
    pub judge_jobs: usize,
    /// Retries for a judge reply that can not be parsed (then the review is an error).
    #[arg(long, default_value_t = crate::assertions::judge::DEFAULT_RETRIES, value_name = "N")]
    pub judge_retries: u32,
    /// Grading calls per `stdout` review that sets no `votes:`; the median score decides
    /// (1–25).
    #[arg(long, default_value_t = 1, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=i64::from(crate::spec::MAX_VOTES)))]
    pub judge_votes: u32,
}

impl JudgeArgs {
    fn config(&self) -> crate::assertions::judge::JudgeConfig {
        crate::assertions::judge::JudgeConfig {
            enabled: !self.no_grade,
            retries: self.judge_retries,
            jobs: self.judge_jobs.max(1),
            cache: if self.no_cache {
                None
            } else {
                crate::assertions::judge::cache::Cache::default_dir()
                    .map(crate::assertions::judge::cache::Cache::new)
            },
            timeout: crate::assertions::judge::GRADE_TIMEOUT,
            votes: self.judge_votes,
        }
    }
}

fn parse_significance(s: &str) -> Result<f64, error::ArgValueError> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v < 1.0 => Ok(v),
        _ => Err(error::ArgValueError::Significance),
    }
}

fn parse_usd(s: &str) -> Result<f64, error::ArgValueError> {
    match s.trim_start_matches('$').parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(error::ArgValueError::Usd),
    }
}

fn parse_duration(s: &str) -> Result<std::time::Duration, error::ArgValueError> {
    Ok(humantime::parse_duration(s)?)
}

/// `aptitude analyze`.
#[derive(Debug, Args)]
#[command(after_help = "\
Forms:
  aptitude analyze TEST_FILE TRANSCRIPT   one test against one transcript (-a AGENT: the agent
                                          that wrote it)
  aptitude analyze PATHS...               every test found, each against its recorded transcript:
                                          x.aptitude.yaml is paired with x.transcript.jsonl (or .json)
                                          in the same directory

Transcripts may be Claude Code session logs or stream-json output; Codex CLI, Gemini CLI,
Qwen Code and other agents' formats are detected too, and Kiro CLI's stores (its
data.sqlite3, or a session's files).")]
pub struct AnalyzeArgs {
    /// A test file and its transcript, or test files and directories with recorded
    /// transcripts beside them.
    #[arg(required = true, value_name = "PATHS")]
    pub paths: Vec<PathBuf>,
    /// Write results JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// The agent that wrote the transcripts: one in another agent's format is an error,
    /// and each test is judged as run by this agent (its reviews graded by it unless they
    /// name their own grader).
    #[arg(long, short = 'a', value_name = "AGENT", value_parser = settings::parse_agent)]
    pub agent: Option<crate::agent::AgentKind>,
    /// The agents that grade `stdout` reviews: binaries, endpoints, version pins.
    #[command(flatten)]
    pub agents: settings::AgentArgs,
    /// How `stdout` reviews are graded.
    #[command(flatten)]
    pub judge: JudgeArgs,
    /// Report files.
    #[command(flatten)]
    pub reports: ReportArgs,
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

/// Replaces the default panic hook, which prints the panic's message as it is: a message
/// such as `byte index 4 is not a char boundary; it is inside '—' … of `TEXT`` quotes the
/// agent's or the repository's text, which could hold a secret, escape sequences or a
/// workflow command. This one prints it redacted and inert, with where it happened and
/// that it is aptitude's bug.
fn inert_panics() {
    std::panic::set_hook(Box::new(|info| {
        let message = crate::shared::caught::message(info.payload());
        let place = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let redactor = crate::shared::redact::Redactor::from_process_env([]);
        output::err(&redactor.redact(&format!(
            "aptitude panicked{place}: {message}\nThis is a bug in aptitude; please report it with the command that was run.\n"
        )));
    }));
}

/// Runs the command line and returns the process exit code.
pub fn main() -> ExitCode {
    // The sandbox's helper runs before anything else: it is aptitude's own binary started
    // inside a sandbox, not a command a user types.
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // Inside a sandbox, aptitude's binary also stands in for each shell (the tool fence).
    if let Some(real) = crate::sandbox::toolfence::wrapped_shell() {
        let code = crate::sandbox::toolfence::main(&real, &argv);
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    if argv
        .get(1)
        .is_some_and(|a| a == crate::sandbox::toolfence::PROBE_COMMAND)
    {
        let code = crate::sandbox::toolfence::probe_main();
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    if argv
        .get(1)
        .is_some_and(|a| a == crate::sandbox::INIT_COMMAND)
    {
        let code = crate::sandbox::init::main(&argv[2..]);
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    // Likewise the MCP relay and tap, started by the agent as a stdio MCP server.
    if argv
        .get(1)
        .is_some_and(|a| a == crate::agent::mcp::helper::COMMAND)
    {
        let code = crate::agent::mcp::helper::main(&argv[2..]);
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    inert_panics();
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
    log::init(matches!(&cli.command, Command::Run(args) if args.verbose >= 2));
    match cli.color {
        ColorWhen::Auto => {}
        ColorWhen::Always => anstream::ColorChoice::Always.write_global(),
        ColorWhen::Never => anstream::ColorChoice::Never.write_global(),
    }
    let result = match cli.command {
        Command::Run(args) => {
            drift_check::warn(&args);
            run::run(&args)
        }
        Command::Validate(args) => inspect::validate(&args),
        Command::Analyze(args) => analyze::analyze(&args),
        Command::Transcript(args) => inspect::show_transcript(&args),
        Command::Report(args) => inspect::report(&args),
        Command::Merge(args) => shards::merge(&args),
        Command::Publish(args) => publish::publish_command(&args),
        Command::Init(args) => init::init(&args),
        Command::Agents(args) => agents::agents(&args),
        Command::Log(args) => prompt_log::log(&args),
        Command::Coverage(args) => coverage::coverage(&args),
        Command::Diff(args) => diff::diff(&args),
        Command::Judge(args) => judge::judge(&args),
        Command::Bisect(args) => bisect::bisect(&args),
        Command::Drift(args) => drift::drift(&args),
    };
    // The one place an error is printed and mapped to an exit code.
    ExitCode::from(match result {
        Ok(outcome) => outcome.exit_code(),
        Err(e) => {
            // Errors quote paths, commands and agent output: redacted like all output.
            let redactor = crate::shared::redact::Redactor::from_process_env([]);
            output::err(&redactor.redact(&e.render()));
            e.exit_code()
        }
    })
}
