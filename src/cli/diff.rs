//! `aptitude diff BASE.json [HEAD.json]`: why a test's verdict changed between two results
//! files, or between two runs of a repeated test of one file ([`crate::report::diff`]).
//! Prints the comparison; `--json` and `--markdown` write it to files. Exit code 1 when a
//! test regressed, 0 otherwise, 2 for input that can not be compared.

use super::output::out;
use super::{CliError, DiffArgs, Outcome};
use crate::report::diff::{self, DiffOptions, RunPick};
use crate::shared::redact::Redactor;

/// `--run N` or `--run A,B`.
pub(super) fn parse_runs(s: &str) -> Result<RunPick, super::error::ArgValueError> {
    let number = |t: &str| t.trim().parse::<u32>().ok().filter(|n| *n > 0);
    let pick = match s.split_once(',') {
        Some((a, b)) => number(a).zip(number(b)).map(|(a, b)| RunPick::Pair(a, b)),
        None => number(s).map(RunPick::Same),
    };
    pick.ok_or(super::error::ArgValueError::Runs)
}

pub(super) fn diff(args: &DiffArgs) -> Result<Outcome, CliError> {
    let label = |p: &std::path::Path| p.display().to_string();
    let options = DiffOptions {
        test: args.test.clone(),
        runs: args.run,
        significance: args.significance,
        labels: (
            label(&args.base),
            label(args.head.as_deref().unwrap_or(&args.base)),
        ),
    };
    // Read within bounded memory: whole only the tests the comparison explains.
    let report = match &args.head {
        Some(head) => {
            let (base, head) = diff::read::pair(&args.base, head, &options)?;
            diff::diff(&base, &head, &options)?
        }
        None => diff::diff_runs(&diff::read::one(&args.base, &options)?, &options)?,
    };
    // The report quotes agent output: redacted like every output (the inputs were, when
    // written; the report is small, so it is redacted again rather than the inputs).
    let value = Redactor::from_process_env([])
        .redact_value(&serde_json::to_value(&report).map_err(CliError::Serialize)?)
        .map_err(CliError::Redact)?;
    let mut problems = Vec::new();
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&value).map_err(CliError::Serialize)? + "\n";
        problems.extend(write(path, &text));
    }
    if let Some(path) = &args.markdown {
        problems.extend(write(path, &redact(&diff::to_markdown(&report))));
    }
    out(&redact(&diff::to_terminal(&report)));
    if !problems.is_empty() {
        return Err(CliError::Reports { problems });
    }
    Ok(Outcome::of(!report.any_regressed()))
}

fn redact(text: &str) -> String {
    Redactor::from_process_env([]).redact(text)
}

fn write(path: &std::path::Path, text: &str) -> Option<String> {
    crate::shared::files::write_output(path, text.as_bytes())
        .err()
        .map(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_are_one_number_or_two() {
        assert_eq!(parse_runs("2").unwrap(), RunPick::Same(2));
        assert_eq!(parse_runs("1, 3").unwrap(), RunPick::Pair(1, 3));
        for bad in ["0", "a", "1,", ",2", "1,2,3", "-1"] {
            assert!(parse_runs(bad).is_err(), "{bad}");
        }
    }
}
