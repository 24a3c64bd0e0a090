//! `run --shard K/N` and `aptitude merge`: one run split across jobs (a CI matrix) and its
//! results put back together. The splitting and merging themselves are pure and live in
//! [`crate::shard`]; this module reads the files and prints.

use std::collections::HashMap;

use super::output::{self, err, out, warning_line};
use super::{CliError, MergeArgs, Outcome, RunArgs};
use crate::redact::Redactor;
use crate::report::{json, terminal};
use crate::results::ShardInfo;
use crate::shard::{self, Shard, TestKey};
use crate::spec::{TestSpec, diagnostic};

/// Parses `--shard K/N`; the message carries a tip, as clap's own errors do.
pub(super) fn parse_shard(s: &str) -> Result<Shard, String> {
    s.parse::<Shard>()
        .map_err(|e| format!("{e}\n\n  tip: {}", e.hint()))
}

/// The tests `run --shard` runs (all of `specs` without `--shard`), and the shard's
/// description for the results. Balanced by the durations in `--baseline` when it can be
/// read; a baseline that can not is a warning, and the split falls back to the hash.
pub(super) fn select(specs: Vec<TestSpec>, args: &RunArgs) -> (Vec<TestSpec>, Option<ShardInfo>) {
    let Some(shard) = args.shard else {
        return (specs, None);
    };
    let durations: Option<HashMap<TestKey, u64>> =
        args.github_args
            .baseline
            .as_deref()
            .and_then(|path| match json::read(path) {
                Ok(baseline) => Some(shard::durations(&baseline)),
                Err(e) => {
                    err(&warning_line(&format!(
                        "shards are balanced by test count, not by the baseline's durations: {e}"
                    )));
                    None
                }
            });
    let keys: Vec<TestKey> = specs
        .iter()
        .map(|s| TestKey {
            file: diagnostic::display_path(&s.file),
            name: s.name.clone(),
            agent: s.agent.kind,
            variant: (!s.variants.is_empty()).then(|| s.variant_name().to_owned()),
        })
        .collect();
    let total = specs.len();
    let chosen = shard::select(&keys, shard, durations.as_ref());
    let mut keep = vec![false; total];
    for i in chosen {
        if let Some(k) = keep.get_mut(i) {
            *k = true;
        }
    }
    let specs: Vec<TestSpec> = specs
        .into_iter()
        .zip(keep)
        .filter_map(|(s, k)| k.then_some(s))
        .collect();
    let balanced_by = if durations.is_some() {
        "duration"
    } else {
        "hash"
    };
    out(&format!(
        "shard {shard}: {} of {total} test{}{}\n",
        specs.len(),
        if total == 1 { "" } else { "s" },
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
        balanced_by: balanced_by.to_owned(),
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
    for w in &merged.warnings {
        err(&warning_line(w));
    }
    let results = output::redacted(&redactor, &merged.results)?;
    out(&terminal::render_summary(&results.summary));
    output::write_reports(&results, args.json.as_deref(), &args.reports)?;
    Ok(Outcome::of(results.all_passed()))
}
