//! The command line's one error type and its exit codes: every command returns an
//! [`Outcome`] or a [`CliError`], and `cli::main` is the only place that prints an error
//! and turns either into the process exit code.
//!
//! | code | meaning |
//! |---|---|
//! | `0` ([`EXIT_OK`]) | every test passed (or the command had no tests to judge) |
//! | `1` ([`EXIT_FAILED`]) | a test failed or errored |
//! | `2` ([`EXIT_INVALID`]) | invalid input or usage: a test file, a transcript, a results file, an argument, a file that can not be written |
//! | `130` ([`EXIT_INTERRUPTED`]) | interrupted by SIGINT, SIGTERM or SIGHUP, as shells report SIGINT |

use std::path::PathBuf;

/// Exit code: every test passed.
pub const EXIT_OK: u8 = 0;
/// Exit code: a test failed or errored.
pub const EXIT_FAILED: u8 = 1;
/// Exit code: invalid input or usage.
pub const EXIT_INVALID: u8 = 2;
/// Exit code: the run was interrupted (Ctrl-C, SIGTERM or SIGHUP), as shells report SIGINT.
pub const EXIT_INTERRUPTED: u8 = 130;

/// What a command that did its work reports through the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Every test passed, or the command judges no tests (`validate`, `init`…).
    Passed,
    /// A test failed or errored.
    Failed,
}

impl Outcome {
    /// [`Outcome::Passed`] when `passed`, else [`Outcome::Failed`].
    pub fn of(passed: bool) -> Self {
        if passed { Self::Passed } else { Self::Failed }
    }

    /// The process exit code: [`EXIT_OK`] or [`EXIT_FAILED`].
    pub fn exit_code(self) -> u8 {
        match self {
            Self::Passed => EXIT_OK,
            Self::Failed => EXIT_FAILED,
        }
    }
}

/// A flag's value that does not parse; clap shows the message with the flag's name.
#[derive(Debug, thiserror::Error)]
pub enum ArgValueError {
    /// Not a glob.
    #[error("{0} (write a glob on file names, e.g. \"*.aptitude.yaml\")")]
    Glob(globset::ErrorKind),
    /// Not a p-value.
    #[error("write a p-value between 0 and 1, e.g. 0.05")]
    Significance,
    /// Not an amount in USD.
    #[error("write an amount in USD, e.g. \"5\" or \"0.50\"")]
    Usd,
    /// Not a duration.
    #[error("{0} (write e.g. \"30s\" or \"5m\")")]
    Duration(#[from] humantime::DurationError),
    /// Not `NAME=VALUE`.
    #[error("expected NAME=VALUE, e.g. codex={0}")]
    NotAPair(String),
    /// Nothing after `NAME=`.
    #[error("no value after `{0}=`")]
    NoValue(String),
    /// Not an agent's name.
    #[error(transparent)]
    Agent(#[from] crate::spec::agent_kind::UnknownAgent),
    /// Not a version after `NAME@`.
    #[error(transparent)]
    Version(#[from] crate::spec::agent_version::VersionSpecError),
    /// Not `N` or `A,B` (runs from 1).
    #[error("write a run number, or two as A,B (runs are numbered from 1)")]
    Runs,
    /// Not `K/N`; the tip as clap's own errors have one.
    #[error("{0}\n\n  tip: {hint}", hint = .0.hint())]
    Shard(#[from] crate::run::shard::ShardError),
}

/// Why a command stopped; [`CliError::exit_code`] maps it to the exit code and
/// [`CliError::render`] to what is printed on stderr. Messages are lowercase and carry
/// the path or value at fault.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A path given to search for tests is missing or unreadable.
    #[error(transparent)]
    Discover(#[from] crate::spec::discover::DiscoverError),
    /// The paths hold no test file.
    #[error("no test files ({pattern}) under {paths}")]
    NoTestFiles {
        /// The paths searched, joined with `, `.
        paths: String,
        /// The patterns test files' names were matched with, joined with `, `.
        pattern: String,
    },
    /// A discovery configuration (`.aptitude.yaml`, `-c FILE`) with problems: its
    /// diagnostics, rendered and redacted, come first.
    #[error(
        "{count} problem{} in the discovery configuration {path}; nothing was run",
        plural(*count)
    )]
    DiscoveryConfig {
        /// The file's rendered diagnostics.
        diagnostics: String,
        /// How many problems.
        count: usize,
        /// The file, as shown.
        path: String,
    },
    /// Tests that grade with one judge profile into one labels directory but ask for
    /// different `judge.min_lower_bound`s (`judge certify`): the settings, rendered.
    #[error("conflicting `judge.min_lower_bound` for one judge profile; nothing was graded")]
    JudgeBound {
        /// The rendered diagnostic (file:line:col, the line, a caret, a hint).
        diagnostics: String,
    },
    /// Test files with problems: their diagnostics, rendered and redacted, come first.
    #[error(
        "{count} problem{} in {files} of {total} test file{}; nothing was run",
        plural(*count),
        plural(*total)
    )]
    Load {
        /// Each file's rendered diagnostics (file:line:col, the line, a caret, a hint).
        diagnostics: Vec<String>,
        /// How many problems in all.
        count: usize,
        /// How many files have problems.
        files: usize,
        /// How many test files were loaded.
        total: usize,
    },
    /// What can be checked before an agent starts failed; no test ran.
    #[error("nothing was run")]
    NothingRun {
        /// Each problem (printed on its own `error:` line first).
        problems: Vec<String>,
    },
    /// Tests without their recorded transcript (`analyze PATHS`).
    #[error("{} test file{} without a recorded transcript", missing.len(), plural(missing.len()))]
    MissingTranscripts {
        /// (test file, the transcript path expected beside it).
        missing: Vec<(String, String)>,
    },
    /// A directory given to run in (`-w DIR`) is missing.
    #[error(transparent)]
    Workspace(#[from] crate::workspace::WorkspaceError),
    /// `analyze -a AGENT` with a transcript another agent wrote.
    #[error("{} is a {format} transcript, written by {}, not by {asked}", transcript.display(), written_by.map_or_else(|| "an agent aptitude does not run".to_owned(), |k| k.to_string()))]
    WrongAgent {
        /// The transcript.
        transcript: PathBuf,
        /// Its format's name.
        format: &'static str,
        /// The agent that writes that format.
        written_by: Option<crate::agent::AgentKind>,
        /// The agent `-a` names.
        asked: crate::agent::AgentKind,
    },
    /// A transcript could not be read or is in no known format.
    #[error(transparent)]
    Transcript(#[from] crate::transcript::TranscriptError),
    /// A results file could not be read or written.
    #[error(transparent)]
    Results(#[from] crate::report::json::JsonError),
    /// A labels file can not be read or written, or holds a line that is not a label.
    #[error(transparent)]
    Labels(#[from] crate::verdict::labels::LabelError),
    /// The judges' certificates file could not be read or written.
    #[error(transparent)]
    Certificates(#[from] crate::verdict::certificate::CertificateError),
    /// Two results can not be compared as asked (`diff --test`, `--run`).
    #[error(transparent)]
    Diff(#[from] crate::report::diff::DiffError),
    /// The async runtime could not start.
    #[error("can not start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// A value to output did not survive redaction's round trip (it is not shown).
    #[error("can not redact the output: {0}")]
    Redact(#[source] serde_json::Error),
    /// A value could not be serialized for output.
    #[error("{0}")]
    Serialize(#[source] serde_json::Error),
    /// `report` was given no report to write.
    #[error("nothing to write: pass --html FILE, --markdown FILE, --junit FILE or --otlp URL")]
    NothingToWrite,
    /// Report files could not be rendered or written.
    #[error("{}", problems.join("; "))]
    Reports {
        /// Each problem (printed on its own `error:` line).
        problems: Vec<String>,
    },
    /// `merge` was given no output to write.
    #[error(
        "nothing to write: pass --json FILE, --html FILE, --markdown FILE, --junit FILE or --otlp URL"
    )]
    NothingToMerge,
    /// Shard results that can not be merged.
    #[error(transparent)]
    Merge(#[from] crate::run::shard::MergeError),
    /// A test of a results file could not be read again whole, or put together from its
    /// shards' parts (`report`, `merge`).
    #[error(transparent)]
    Source(crate::report::json::source::SourceError),
    /// `init --skills DIR` with skills that can not be drafted for: each file's
    /// diagnostics, rendered and redacted, come first.
    #[error(
        "{count} problem{} in the skills of {dir}; nothing was drafted",
        plural(*count)
    )]
    Skills {
        /// Each file's rendered diagnostics (file:line:col, the line, a caret, a hint).
        diagnostics: Vec<String>,
        /// How many problems in all.
        count: usize,
        /// The skills directory, as given.
        dir: String,
    },
    /// `init DIR` where `DIR` is not a directory.
    #[error("{} is not a directory", .0.display())]
    NotADirectory(PathBuf),
    /// A scaffold file could not be written.
    #[error("can not write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// `aptitude bisect` could not start or go on.
    #[error(transparent)]
    Bisect(#[from] BisectError),
    /// `aptitude drift` could not read a release's tools.
    #[error(transparent)]
    Drift(#[from] DriftError),
    /// A signal stopped the run; the results cover the tests that finished.
    #[error("interrupted: running agents were stopped; results cover the tests that finished")]
    Interrupted {
        /// A problem met on the way out (a report that could not be written), printed
        /// first.
        also: Option<Box<CliError>>,
    },
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

impl From<crate::report::json::source::SourceError> for CliError {
    fn from(e: crate::report::json::source::SourceError) -> Self {
        use crate::report::json::source::SourceError;
        match e {
            SourceError::Read(e) => CliError::Results(e),
            SourceError::Redact(e) => CliError::Redact(e),
            other => CliError::Source(other),
        }
    }
}

impl CliError {
    /// The process exit code: [`EXIT_INTERRUPTED`] for an interruption, else
    /// [`EXIT_INVALID`].
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Interrupted { .. } => EXIT_INTERRUPTED,
            _ => EXIT_INVALID,
        }
    }

    /// What is printed on stderr: `error: …` lines (colored on a terminal), preceded by
    /// what the error carries (diagnostics, each problem) and followed by a hint.
    pub fn render(&self) -> String {
        match self {
            Self::Load { diagnostics, .. } | Self::Skills { diagnostics, .. } => {
                diagnostics.concat() + &error_line(&self.to_string())
            }
            Self::DiscoveryConfig { diagnostics, .. } | Self::JudgeBound { diagnostics } => {
                diagnostics.clone() + &error_line(&self.to_string())
            }
            Self::NothingRun { problems } => {
                problems.iter().map(|p| error_line(p)).collect::<String>()
                    + &error_line(&self.to_string())
            }
            Self::MissingTranscripts { missing } => {
                let mut text: String = missing
                    .iter()
                    .map(|(file, expected)| {
                        error_line(&format!(
                            "no recorded transcript for {file} (expected {expected} beside it)"
                        ))
                    })
                    .collect();
                text.push_str("hint: pass one explicitly: aptitude analyze TEST_FILE TRANSCRIPT\n");
                text
            }
            Self::Reports { problems } => problems.iter().map(|p| error_line(p)).collect(),
            Self::WrongAgent { asked, .. } => {
                error_line(&self.to_string())
                    + &format!(
                        "hint: pass the transcript {asked} wrote, or leave out -a: the format is detected from the content\n"
                    )
            }
            Self::Interrupted { also } => {
                also.as_ref().map(|e| e.render()).unwrap_or_default()
                    + &error_line(&self.to_string())
            }
            _ => error_line(&self.to_string()),
        }
    }
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

/// Why a bisection could not start or go on.
#[derive(Debug, thiserror::Error)]
pub enum BisectError {
    /// The agent is not installed from npm, whose release list bisect reads.
    #[error("{agent} is not installed from npm ({hint}); bisect reads npm's release list")]
    NotOnNpm {
        /// The agent.
        agent: crate::agent::AgentKind,
        /// How it is installed.
        hint: &'static str,
    },
    /// The release list is wrong.
    #[error(transparent)]
    Releases(#[from] crate::verdict::releases::ReleaseError),
    /// `npm` could not be run or failed.
    #[error("`npm {command}` failed: {detail}")]
    Npm {
        /// The npm subcommand.
        command: String,
        /// Its error or stderr.
        detail: String,
    },
    /// A release could not be installed.
    #[error(transparent)]
    Install(#[from] crate::agent::install::InstallError),
    /// A probe's results file could not be read.
    #[error("the results of the run on {version} can not be read: {source}")]
    Results {
        /// The release.
        version: String,
        /// Why.
        #[source]
        source: crate::report::json::JsonError,
    },
    /// The arguments after `--` are not `aptitude run`'s.
    #[error("the arguments after `--` are not `aptitude run` arguments: {0}")]
    RunArgs(String),
}

/// Why a release's tools could not be read.
#[derive(Debug, thiserror::Error)]
pub enum DriftError {
    /// The release sent no request offering tools.
    #[error(
        "{agent} {version} sent its model no request offering tools ({requests} requests); see its run above"
    )]
    NoTools {
        /// The agent.
        agent: crate::agent::AgentKind,
        /// The release.
        version: String,
        /// Requests the stub got.
        requests: usize,
    },
    /// The stub upstream could not start.
    #[error("the stub model endpoint could not start: {0}")]
    Stub(#[source] std::io::Error),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_is_exit_2_but_an_interruption() {
        assert_eq!(CliError::NothingToWrite.exit_code(), EXIT_INVALID);
        assert_eq!(
            CliError::Interrupted { also: None }.exit_code(),
            EXIT_INTERRUPTED
        );
        assert_eq!(Outcome::of(true).exit_code(), EXIT_OK);
        assert_eq!(Outcome::of(false).exit_code(), EXIT_FAILED);
    }

    #[test]
    fn load_errors_print_diagnostics_then_the_count() {
        let e = CliError::Load {
            diagnostics: vec!["d1\n".into(), "d2\n".into()],
            count: 3,
            files: 2,
            total: 1,
        };
        let text = e.render();
        assert!(text.starts_with("d1\nd2\n"), "{text}");
        assert!(
            text.ends_with("3 problems in 2 of 1 test file; nothing was run\n"),
            "{text}"
        );
    }

    #[test]
    fn an_interruption_prints_what_went_wrong_on_the_way_out_first() {
        let e = CliError::Interrupted {
            also: Some(Box::new(CliError::Reports {
                problems: vec!["can not write x".into()],
            })),
        };
        let text = e.render();
        let write = text.find("can not write x").unwrap_or(usize::MAX);
        let interrupted = text.find("interrupted:").unwrap_or(0);
        assert!(write < interrupted, "{text}");
    }
}
