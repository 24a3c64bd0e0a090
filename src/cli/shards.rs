//! `run --shard K/N` and `aptitude merge`: one run split across jobs (a CI matrix) and its
//! results put back together. The splitting and merging themselves are pure and live in
//! [`crate::run::shard`]; this module reads the files and prints.

use std::collections::HashMap;

use super::error::warning_line;
use super::output::{self, err, out};
use std::path::Path;

use std::borrow::Cow;
use std::ops::Range;

use super::{CliError, MergeArgs, Outcome, RunArgs};
use crate::report::json::source::{ResultsFile, SourceError, TestSource};
use crate::report::{json, terminal};
use crate::run::shard::{self, Shard, TestKey, Unit};
use crate::shared::redact::Redactor;
use crate::spec::TestSpec;
use crate::verdict::results::{BalancedBy, Results, ShardInfo, TestResult};

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

/// Copies the cassette `run` (read from the file `from`, a test or a run of one) refers to
/// into the merged results' directory (`<stem of to>.cassettes/`, beside the file `to`)
/// and points the reference there. A cassette that can not be copied loses its reference,
/// and the run says why (`cassette_error`). Cassettes are named by their content: one
/// already there is not copied again.
fn carry_cassette(run: &mut TestResult, from: &Path, to: &Path) {
    let dir_of = |p: &Path| {
        p.parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_owned()
    };
    let stem = to
        .file_stem()
        .map_or_else(|| "results".into(), |s| s.to_string_lossy().into_owned());
    let prefix = format!("{stem}.cassettes");
    let (source, target) = (dir_of(from), dir_of(to).join(&prefix));
    let Some(traffic) = run.model_traffic.as_mut() else {
        return;
    };
    let Some(reference) = traffic.cassette.as_mut() else {
        return;
    };
    let Some(name) = reference.file.rsplit('/').next().map(str::to_owned) else {
        return;
    };
    let there = target.join(&name);
    let copied = if there.is_file() {
        Ok(())
    } else {
        std::fs::create_dir_all(&target)
            .and_then(|()| std::fs::copy(source.join(&reference.file), &there).map(drop))
    };
    match copied {
        Ok(()) => reference.file = format!("{prefix}/{name}"),
        Err(e) => {
            traffic.cassette_error = Some(format!(
                "not carried into the merged results: {}: {e}",
                source.join(&reference.file).display()
            ));
            traffic.cassette = None;
        }
    }
}

/// [`carry_cassette`] for a test and each of its runs.
fn carry_cassettes(test: &mut TestResult, from: &Path, to: &Path) {
    carry_cassette(test, from, to);
    for run in &mut test.runs {
        carry_cassette(run, from, to);
    }
}

/// The merged tests, each put together again whole from its shards' parts as it is read
/// ([`shard::join`]), their cassettes carried beside the merged results file when one is
/// written.
struct MergedTests<'a> {
    /// The shards' files, as given.
    files: &'a [ResultsFile],
    /// Each merged test's parts ([`shard::Merged::parts`]).
    parts: &'a [Vec<(usize, usize)>],
    /// The merged results file, when one is written.
    to: Option<&'a Path>,
}

impl TestSource for MergedTests<'_> {
    fn len(&self) -> usize {
        self.parts.len()
    }

    fn tests(&self, range: Range<usize>) -> Result<Cow<'_, [TestResult]>, SourceError> {
        let Some(wanted) = self.parts.get(range.clone()) else {
            return Err(SourceError::OutOfRange {
                range,
                len: self.parts.len(),
            });
        };
        let mut tests = Vec::with_capacity(wanted.len());
        for parts in wanted {
            let mut whole = Vec::with_capacity(parts.len());
            for &(input, index) in parts {
                let file = self.files.get(input).ok_or(SourceError::OutOfRange {
                    range: input..input + 1,
                    len: self.files.len(),
                })?;
                let mut part = file.tests(index..index + 1)?.into_owned();
                let mut test = part.pop().ok_or(SourceError::OutOfRange {
                    range: index..index + 1,
                    len: file.len(),
                })?;
                if let Some(to) = self.to {
                    carry_cassettes(&mut test, file.path(), to);
                }
                whole.push((file.path().display().to_string(), test));
            }
            tests.push(shard::join(whole).map_err(|e| SourceError::Join(Box::new(e)))?);
        }
        Ok(Cow::Owned(tests))
    }
}

/// `aptitude merge`: the shards' files are read without their run detail and merged; each
/// merged test is then put together again whole from its parts while the merged results
/// file and each report are written, so that memory stays bounded on big suites.
pub(super) fn merge(args: &MergeArgs) -> Result<Outcome, CliError> {
    if args.json.is_none() && !args.reports.any() {
        return Err(CliError::NothingToMerge);
    }
    let redactor = Redactor::from_process_env([]);
    let mut inputs = Vec::with_capacity(args.results.len());
    let mut files = Vec::with_capacity(args.results.len());
    let mut summaries = Vec::with_capacity(args.results.len());
    for path in &args.results {
        let (results, file) = ResultsFile::open(path, Some(redactor.clone()))?;
        summaries.push(results.summary.clone());
        inputs.push((path.display().to_string(), results));
        files.push(file);
    }
    let shard::Merged { mut results, parts } = shard::merge_parts(inputs)?;
    // The tests were read without their run detail: the figures read from it are the
    // shards' own, summed.
    results.summary = std::mem::take(&mut results.summary).with_run_detail_of(&summaries);
    let source = MergedTests {
        files: &files,
        parts: &parts,
        to: args.json.as_deref(),
    };
    out(&terminal::render_summary(&results.summary));
    let Some(to) = args.json.as_deref() else {
        output::write_reports_from(&results, &source, None, &args.reports)?;
        return Ok(Outcome::of(results.all_passed()));
    };
    // The merged file first; the reports then read it (redacted, its tests whole), rather
    // than put every test together again from the shards for each report. Should it fail,
    // everything is written from the shards, and the failure reported.
    let written = crate::shared::caught::caught(|| json::write_from(&results, &source, to));
    if matches!(written, Ok(Ok(()))) {
        let (_, merged) = ResultsFile::open(to, None)?;
        output::write_reports_from(&results, &merged, None, &args.reports)?;
    } else {
        output::write_reports_from(&results, &source, Some(to), &args.reports)?;
    }
    Ok(Outcome::of(results.all_passed()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gateway::cassette::Cassette;
    use crate::verdict::results::{Results, TestResult, TestStatus};

    #[test]
    fn a_merge_carries_the_shards_cassettes_beside_the_merged_results() {
        let shard = tempfile::tempdir().unwrap();
        let reference = Cassette::default()
            .write(
                &shard.path().join("results.cassettes"),
                "results.cassettes",
                &Redactor::new([]),
            )
            .unwrap();
        let mut test = TestResult::new("t", "t.aptitude.yaml", TestStatus::Passed);
        test.model_traffic = Some(crate::gateway::Traffic {
            cassette: Some(reference.clone()),
            ..Default::default()
        });
        let mut missing = test.clone();
        if let Some(c) = missing
            .model_traffic
            .as_mut()
            .and_then(|t| t.cassette.as_mut())
        {
            c.file = "results.cassettes/0000000000000000.json.gz".into();
        }
        let mut results = Results::new(vec![test, missing], 1);
        let merged = tempfile::tempdir().unwrap();
        let to = merged.path().join("merged.json");
        for test in &mut results.tests {
            carry_cassettes(test, &shard.path().join("results.json"), &to);
        }
        let carried = results.tests[0].model_traffic.as_ref().unwrap();
        let file = &carried.cassette.as_ref().unwrap().file;
        assert!(file.starts_with("merged.cassettes/"), "{file}");
        assert!(Cassette::read(merged.path(), carried.cassette.as_ref().unwrap()).is_ok());
        let lost = results.tests[1].model_traffic.as_ref().unwrap();
        assert!(lost.cassette.is_none());
        assert!(
            lost.cassette_error
                .as_deref()
                .unwrap()
                .starts_with("not carried into the merged results")
        );
    }
}
