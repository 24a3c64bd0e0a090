//! `aptitude bisect TESTS --agent NAME --good V --bad V`: which release of an agent CLI
//! first made the suite's pass rate fall.
//!
//! The releases come from the npm registry (`npm view PKG versions --json`); each release
//! tried is installed into aptitude's cache by [`crate::agent::install`] (verified, never
//! the user's own install) and the suite is run on it through the ordinary `run`
//! path with that binary (`--agent-bin NAME=PATH`), `--runs` times. The search and its
//! statistics are [`crate::verdict::bisect`]'s; this file installs, runs, prints.
//! Exit codes: 1 when the bad release is worse (a first bad release or a range of them),
//! 0 when no regression is detectable, 2 on bad input.

use std::path::{Path, PathBuf};

use clap::{Args, Parser};

use super::error::{BisectError, CliError};
use super::output::out;
use super::{Command, Outcome};
use crate::agent::AgentKind;
use crate::agent::registry::{self, AgentOptions};
use crate::verdict::bisect::{self, Outcome as Found, Report, Search, Settings, Step, Tally};
use crate::verdict::releases;

/// `aptitude bisect`.
#[derive(Debug, Args)]
#[command(after_help = "\
Each release tried is run --runs times and judged against the good release by a one-sided
Fisher exact test (p < 0.05): bad when its pass rate is significantly lower, good when it is
not and is significantly higher than the bad release's, else inconclusive (more runs, then
the search goes around it). Arguments after `--` are passed to every `aptitude run`.

Exit codes: 1 the bad release is worse (first bad release or range found), 0 no regression
detectable, 2 invalid input.")]
pub struct BisectArgs {
    /// Test files or directories (searched for *.aptitude.yaml / *.aptitude.yml).
    #[arg(default_value = ".")]
    pub paths: Vec<PathBuf>,
    /// The agent whose releases are searched.
    #[arg(long, short = 'a', value_name = "NAME", value_parser = super::settings::parse_agent)]
    pub agent: AgentKind,
    /// A release the suite passes on (MAJOR.MINOR.PATCH).
    #[arg(long, value_name = "VERSION")]
    pub good: String,
    /// A later release the suite fails on.
    #[arg(long, value_name = "VERSION")]
    pub bad: String,
    /// Runs of the suite per release tried (1–100); an inconclusive release gets up to
    /// three times as many.
    #[arg(long, default_value_t = 5, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=i64::from(crate::spec::MAX_RUNS)))]
    pub runs: u32,
    /// Start no probe whose runs would, at the mean cost of a run so far, pass this much
    /// (USD); each probe's run gets what is left as its own `--max-cost`.
    #[arg(long, value_name = "USD", value_parser = super::parse_usd)]
    pub max_cost: Option<f64>,
    /// Write the bisection (releases tried, outcome, runs, cost) as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Arguments for every `aptitude run` of a probe (e.g. `-- --model M --sandbox off`).
    #[arg(last = true, value_name = "RUN ARGS")]
    pub run_args: Vec<String>,
}

pub(super) fn bisect(args: &BisectArgs) -> Result<Outcome, CliError> {
    let package = npm_package(args.agent)?;
    let listing = npm(&["view", &package, "versions", "--json"])?;
    let published = releases::parse_npm_versions(&listing).map_err(BisectError::from)?;
    let ordered =
        releases::releases_between(&published, &args.good, &args.bad).map_err(BisectError::from)?;
    let settings = Settings {
        max_cost_usd: args.max_cost,
        ..Settings::new(args.runs)
    };
    let Some(mut search) = Search::new(ordered, settings) else {
        return Err(BisectError::Releases(releases::ReleaseError::Order {
            good: args.good.clone(),
            bad: args.bad.clone(),
        })
        .into());
    };
    out(&format!(
        "bisect: {} releases of {} ({package}) from {} to {}, {} runs each\n",
        search.releases().len(),
        args.agent,
        args.good,
        args.bad,
        args.runs
    ));
    let outcome = loop {
        match search.next() {
            Step::Done(outcome) => break outcome,
            Step::Probe { index, runs } => {
                let version = search.releases()[index].clone();
                let tally = probe(args, &version, runs, remaining(&search, args))?;
                search.record(index, tally);
            }
        }
    };
    let report = search.report(Some(outcome.clone()));
    out(&(render(&report) + "\n"));
    if let Some(path) = &args.json {
        write_json(path, &report)?;
    }
    Ok(match outcome {
        Found::NoRegression => Outcome::Passed,
        Found::FirstBad { .. } | Found::Range { .. } => Outcome::Failed,
    })
}

/// What is left of `--max-cost` for the next probe's run.
fn remaining(search: &Search, args: &BisectArgs) -> Option<f64> {
    args.max_cost
        .map(|ceiling| (ceiling - search.spent().1).max(0.0))
}

/// The npm package of `kind` ([`crate::agent::install::source_of`] its install hint).
pub(super) fn npm_package(kind: AgentKind) -> Result<String, BisectError> {
    let hint = registry::cli(kind, &AgentOptions::default()).install_hint();
    match crate::agent::install::source_of(hint) {
        Some(crate::agent::install::Source::Npm(package)) => Ok(package.to_owned()),
        _ => Err(BisectError::NotOnNpm { agent: kind, hint }),
    }
}

/// Runs `npm ARGS` (the `npm` on PATH) and returns its stdout.
fn npm(args: &[&str]) -> Result<String, BisectError> {
    let failed = |detail: String| BisectError::Npm {
        command: args.join(" "),
        detail,
    };
    let output = std::process::Command::new("npm")
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|err| failed(err.to_string()))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(failed(format!(
            "{}: {}",
            output.status,
            crate::shared::cut::chars(stderr.trim(), 2000).kept
        )));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// `version` of `kind` from aptitude's cache, installed there first when it is not
/// ([`crate::agent::install`]: verified, never the user's own install); its binary.
pub(super) fn install(kind: AgentKind, version: &str) -> Result<PathBuf, CliError> {
    let runtime = super::output::runtime()?;
    let installed = runtime
        .block_on(crate::agent::install::install(kind, version))
        .map_err(BisectError::from)?;
    if !installed.cached {
        out(&format!("bisect: installed {kind} {version}\n"));
    }
    Ok(installed.binary)
}

/// Runs the suite `runs` times on `version` through `aptitude run` and counts its runs.
fn probe(
    args: &BisectArgs,
    version: &str,
    runs: u32,
    max_cost: Option<f64>,
) -> Result<Tally, CliError> {
    out(&format!("bisect: {version}: {runs} runs\n"));
    let binary = install(args.agent, version)?;
    let dir = tempfile::tempdir().map_err(CliError::Runtime)?;
    let results = dir.path().join("results.json");
    let mut argv: Vec<String> = vec!["aptitude".into(), "run".into()];
    argv.extend(args.paths.iter().map(|p| p.display().to_string()));
    argv.extend([
        "--agent".into(),
        args.agent.name().into(),
        "--agent-bin".into(),
        format!("{}={}", args.agent.name(), binary.display()),
        "--runs".into(),
        runs.to_string(),
        "--json".into(),
        results.display().to_string(),
    ]);
    if let Some(usd) = max_cost {
        argv.extend(["--max-cost".into(), format!("{usd:.6}")]);
    }
    let run_args = run_args(argv, &args.run_args)?;
    // A failing suite is what bisect measures, not an error: only a run that could not
    // happen stops the bisection.
    super::run::run(&run_args)?;
    let read = crate::report::json::read(&results).map_err(|source| BisectError::Results {
        version: version.to_owned(),
        source,
    })?;
    Ok(tally(&read))
}

/// A probe's counts: every run of every test that started (skipped runs are not runs;
/// errored runs count as not passed, so an infrastructure failure can only make a release
/// look worse, which the extra runs and the report's error counts expose).
/// `aptitude run`'s arguments: aptitude's own `argv` (from `aptitude run` on), then what the
/// user gave after `--` (`user`).
///
/// # Errors
/// [`BisectError::RunArgs`] when the user's arguments are not `run`'s.
pub(super) fn run_args(
    mut argv: Vec<String>,
    user: &[String],
) -> Result<Box<super::RunArgs>, BisectError> {
    argv.extend(user.iter().cloned());
    match super::Cli::try_parse_from(&argv) {
        Ok(super::Cli {
            command: Command::Run(run_args),
            ..
        }) => Ok(run_args),
        Ok(_) => Err(BisectError::RunArgs(user.join(" "))),
        Err(err) => Err(BisectError::RunArgs(err.kind().to_string())),
    }
}

fn tally(results: &crate::verdict::results::Results) -> Tally {
    let summary = &results.summary;
    let (passed, runs) = match &summary.runs {
        Some(counts) => (counts.passed, counts.total.saturating_sub(counts.skipped)),
        None => (
            summary.passed,
            summary.total.saturating_sub(summary.skipped),
        ),
    };
    Tally {
        passed,
        runs,
        cost_usd: summary.usage.cost_usd.unwrap_or(0.0),
    }
}

/// The bisection in words: each release tried with its pass rate and 95% interval, the
/// outcome, the runs and cost against a release-by-release scan.
fn render(report: &Report) -> String {
    let mut lines = vec![format!(
        "{:<14} {:>9} {:>6}  {:<15} {:>9}  judgement",
        "release", "passed", "rate", "95% interval", "cost"
    )];
    for tried in &report.tried {
        let interval = tried.interval.map_or_else(String::new, |i| {
            format!("{:.0}%–{:.0}%", i.low * 100.0, i.high * 100.0)
        });
        lines.push(format!(
            "{:<14} {:>9} {:>5.0}%  {:<15} {:>9}  {}",
            &tried.version,
            format!("{}/{}", tried.passed, tried.runs),
            tried.rate.unwrap_or(0.0) * 100.0,
            interval,
            format!("${:.4}", tried.cost_usd),
            judgement(tried.judgement)
        ));
    }
    lines.push(String::new());
    lines.push(outcome_line(report));
    lines.push(format!(
        "spent: {} runs, ${:.4} (a release-by-release scan: {} runs)",
        report.runs, report.cost_usd, report.linear_scan_runs
    ));
    if let Some(drop) = report.smallest_detectable_drop {
        lines.push(format!(
            "detectable: a drop of {:.0} points or more from the good release's pass rate",
            drop * 100.0
        ));
    }
    lines.join("\n")
}

fn judgement(j: bisect::Judgement) -> &'static str {
    match j {
        bisect::Judgement::Good => "good",
        bisect::Judgement::Bad => "bad",
        bisect::Judgement::Inconclusive => "inconclusive",
    }
}

fn outcome_line(report: &Report) -> String {
    match (&report.outcome, &report.first_bad, &report.range) {
        (Some(Found::FirstBad { .. }), Some(version), _) => {
            format!("first bad release: {version}")
        }
        (Some(Found::Range { reason, .. }), _, Some((good, bad))) => format!(
            "inconclusive: the first bad release is after {} and at or before {} ({})",
            good,
            bad,
            match reason {
                bisect::StopReason::Budget => "--max-cost reached",
                bisect::StopReason::Inconclusive =>
                    "the releases between stayed inconclusive at their run limit",
            }
        ),
        _ => "no regression: the bad release's pass rate is not significantly lower".to_owned(),
    }
}

fn write_json(path: &Path, report: &Report) -> Result<(), CliError> {
    let text = serde_json::to_string_pretty(report).map_err(CliError::Serialize)? + "\n";
    std::fs::write(path, text).map_err(|source| CliError::Write {
        path: path.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npm_packages_come_from_the_install_hints() {
        assert_eq!(
            npm_package(AgentKind::Claude).unwrap(),
            "@anthropic-ai/claude-code"
        );
        assert_eq!(npm_package(AgentKind::Opencode).unwrap(), "opencode-ai");
        assert!(matches!(
            npm_package(AgentKind::Aider),
            Err(BisectError::NotOnNpm { .. })
        ));
    }
}
