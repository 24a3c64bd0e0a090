//! `run --shard K/N` and `aptitude merge`: one run split across jobs (a CI matrix) and its
//! results put back together. The splitting and merging themselves are pure and live in
//! [`crate::shard`]; this module reads the files and prints.

use std::collections::HashMap;

use super::output::{self, err, error_line, out, warning_line};
use super::{EXIT_FAILED, EXIT_INVALID, EXIT_OK, MergeArgs, RunArgs};
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
pub(super) fn merge(args: &MergeArgs) -> u8 {
    if args.json.is_none() && !args.reports.any() {
        err(&error_line(
            "nothing to write: pass --json FILE, --html FILE, --markdown FILE or --junit FILE",
        ));
        return EXIT_INVALID;
    }
    let mut inputs = Vec::with_capacity(args.results.len());
    for path in &args.results {
        match json::read(path) {
            Ok(r) => inputs.push((path.display().to_string(), r)),
            Err(e) => {
                err(&error_line(&e.to_string()));
                return EXIT_INVALID;
            }
        }
    }
    let merged = match shard::merge(inputs) {
        Ok(m) => m,
        Err(e) => {
            err(&error_line(&e.to_string()));
            return EXIT_INVALID;
        }
    };
    let redactor = Redactor::from_process_env([]);
    for w in &merged.warnings {
        err(&warning_line(w));
    }
    let Some(results) = output::redacted_or_report(&redactor, &merged.results) else {
        return EXIT_INVALID;
    };
    out(&terminal::render_summary(&results.summary));
    if !output::write_reports(&results, args.json.as_deref(), &args.reports) {
        EXIT_INVALID
    } else if results.all_passed() {
        EXIT_OK
    } else {
        EXIT_FAILED
    }
}
