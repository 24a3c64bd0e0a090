//! The commands that run no agent: `validate`, `transcript`, `report`.

use super::output::{self, out};
use super::{CliError, Outcome, ReportCommandArgs, TranscriptArgs, ValidateArgs};
use crate::redact::Redactor;
use crate::report::{json, terminal};
use crate::spec;
use crate::transcript;

pub(super) fn validate(args: &ValidateArgs) -> Result<Outcome, CliError> {
    let redactor = Redactor::from_process_env([]);
    let files = output::discover_tests(&args.paths)?;
    let report = spec::load_files(&files);
    output::check_load_errors(&redactor, &report, files.len())?;
    let assertions: usize = report.specs.iter().map(|s| s.assertions.len()).sum();
    let green = anstyle::AnsiColor::Green.on_default();
    out(&format!(
        "{green}✓{green:#} {} test file{} valid ({assertions} assertion{})\n",
        files.len(),
        if files.len() == 1 { "" } else { "s" },
        if assertions == 1 { "" } else { "s" },
    ));
    Ok(Outcome::Passed)
}

pub(super) fn show_transcript(args: &TranscriptArgs) -> Result<Outcome, CliError> {
    let redactor = Redactor::from_process_env([]);
    let t = transcript::parse_file(&args.file)?;
    let t = output::redacted(&redactor, &t)?;
    if args.json {
        let text = serde_json::to_string_pretty(&t).map_err(CliError::Serialize)?;
        out(&(text + "\n"));
    } else {
        output::report_transcript_warnings(&redactor, &args.file, &t);
        out(&terminal::render_transcript(&t));
    }
    Ok(Outcome::Passed)
}

pub(super) fn report(args: &ReportCommandArgs) -> Result<Outcome, CliError> {
    if !args.reports.any() {
        return Err(CliError::NothingToWrite);
    }
    let results = json::read(&args.results)?;
    let results = output::redacted(&Redactor::from_process_env([]), &results)?;
    output::write_reports(&results, None, &args.reports)?;
    Ok(Outcome::Passed)
}
