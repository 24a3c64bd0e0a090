//! `run --shard K/N` and `aptitude merge`: one run split across jobs (a CI matrix) and its
//! results put back together. The splitting and merging themselves are pure and live in
//! [`crate::run::shard`]; this module reads the files and prints.

use std::collections::HashMap;

use super::error::warning_line;
use super::output::{self, err, out};
use super::{CliError, MergeArgs, Outcome, RunArgs};
use crate::report::{json, terminal};
use crate::run::shard::{self, Shard, TestKey, Unit};
use crate::shared::redact::Redactor;
use crate::spec::TestSpec;
use crate::verdict::results::{BalancedBy, Results, ShardInfo};

/// Parses `--shard K/N`; the message carries a tip, as clap's own errors do.
pub(super) fn parse_shard(s: &str) -> Result<Shard, super::error::ArgValueError> {
    Ok(s.parse::<Shard>()?)
}

/// The tests `run --shard` runs (all of `specs` without `--shard`), and the shard's
/// description for the results. A test with several runs is split run by run: it is kept
/// with the numbers of its runs this shard runs (`TestSpec::shard_runs`), or left out when
/// it has none here.
///
/// Balanced by the durations in `--baseline` (`baseline`, read once for the run: a file or
/// `github:auto`). A file that could not be read is a warning, and the split falls back to
/// the hash; so does a `github:auto` that found nothing (its notice says so).
pub(super) fn select(
    specs: Vec<TestSpec>,
    args: &RunArgs,
    baseline: Option<&Result<Results, Option<String>>>,
) -> (Vec<TestSpec>, Option<ShardInfo>) {
    let Some(shard) = args.shard else {
        return (specs, None);
    };
    let durations: Option<HashMap<TestKey, u64>> = match baseline {
        Some(Ok(baseline)) => Some(shard::durations(baseline)),
        Some(Err(Some(e))) => {
            err(&warning_line(&format!(
                "shards are balanced by test count, not by the baseline's durations: {e}"
            )));
            None
        }
        Some(Err(None)) | None => None,
    };
    let default_runs = args.runs;
    let units: Vec<(usize, Unit)> = specs
        .iter()
        .enumerate()
        .flat_map(|(i, s)| {
            Unit::of(TestKey::of_spec(s), s.runs_or(default_runs))
                .into_iter()
                .map(move |u| (i, u))
        })
        .collect();
    let only_units: Vec<Unit> = units.iter().map(|(_, u)| u.clone()).collect();
    let mut here: Vec<Vec<u32>> = vec![Vec::new(); specs.len()];
    for position in shard::select(&only_units, shard, durations.as_ref()) {
        if let Some((spec, unit)) = units.get(position)
            && let Some(runs) = here.get_mut(*spec)
        {
            runs.push(unit.run.unwrap_or(1));
        }
    }
    let total = specs.len();
    let total_runs = units.len();
    let repeats = total_runs > total;
    let mut runs_here = 0;
    let specs: Vec<TestSpec> = specs
        .into_iter()
        .zip(here)
        .filter(|(_, runs)| !runs.is_empty())
        .map(|(mut s, mut runs)| {
            runs.sort_unstable();
            runs_here += runs.len();
            if (runs.len() as u32) < s.runs_or(default_runs) {
                s.shard_runs = Some(runs);
            }
            s
        })
        .collect();
    let balanced_by = if durations.is_some() {
        BalancedBy::Duration
    } else {
        BalancedBy::Hash
    };
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    let what = if repeats {
        format!(
            "{runs_here} of {} ({} of {})",
            plural(total_runs, "run"),
            specs.len(),
            plural(total, "test")
        )
    } else {
        format!("{} of {}", specs.len(), plural(total, "test"))
    };
    out(&format!(
        "shard {shard}: {what}{}\n",
        if durations.is_some() {
            ", balanced by the baseline's durations"
        } else {
            ""
        }
    ));
    let info = ShardInfo {
        index: shard.index(),
        count: shard.count(),
        tests: u32::try_from(total).unwrap_or(u32::MAX),
        balanced_by,
        runs: repeats.then(|| u32::try_from(total_runs).unwrap_or(u32::MAX)),
        baseline: durations.as_ref().map(shard::baseline_id),
    };
    (specs, Some(info))
}

/// `aptitude merge`.
pub(super) fn merge(args: &MergeArgs) -> Result<Outcome, CliError> {
    if args.json.is_none() && !args.reports.any() {
        return Err(CliError::NothingToMerge);
    }
    let mut inputs = Vec::with_capacity(args.results.len());
    for path in &args.results {
        inputs.push((path.display().to_string(), json::read(path)?));
    }
    let merged = shard::merge(inputs)?;
    let redactor = Redactor::from_process_env([]);
    let results = output::redacted(&redactor, &merged)?;
    out(&terminal::render_summary(&results.summary));
    output::write_reports(&results, args.json.as_deref(), &args.reports)?;
    Ok(Outcome::of(results.all_passed()))
}
