//! The commands that run no agent: `validate`, `transcript`, `report`.

use super::output::{self, err, error_line, out};
use super::{EXIT_INVALID, EXIT_OK, ReportCommandArgs, TranscriptArgs, ValidateArgs};
use crate::redact::Redactor;
use crate::report::{json, terminal};
use crate::spec;
use crate::transcript;

pub(super) fn validate(args: &ValidateArgs) -> u8 {
    let redactor = Redactor::from_process_env([]);
    let Some(files) = output::discover_tests(&args.paths) else {
        return EXIT_INVALID;
    };
    let report = spec::load_files(&files);
    if output::report_load_errors(&redactor, &report, files.len()) {
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

pub(super) fn show_transcript(args: &TranscriptArgs) -> u8 {
    let redactor = Redactor::from_process_env([]);
    let t = match transcript::parse_file(&args.file) {
        Ok(t) => t,
        Err(e) => {
            err(&error_line(&e.to_string()));
            return EXIT_INVALID;
        }
    };
    let Some(t) = super::output::redacted_or_report(&redactor, &t) else {
        return EXIT_INVALID;
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
        output::report_transcript_warnings(&redactor, &args.file, &t);
        out(&terminal::render_transcript(&t));
    }
    EXIT_OK
}

pub(super) fn report(args: &ReportCommandArgs) -> u8 {
    if !args.reports.any() {
        err(&error_line(
            "nothing to write: pass --html FILE, --markdown FILE or --junit FILE",
        ));
        return EXIT_INVALID;
    }
    let results = match json::read(&args.results) {
        Ok(r) => r,
        Err(e) => {
            err(&error_line(&e.to_string()));
            return EXIT_INVALID;
        }
    };
    let Some(results) =
        super::output::redacted_or_report(&Redactor::from_process_env([]), &results)
    else {
        return EXIT_INVALID;
    };
    let written = output::write_reports(&results, None, &args.reports);
    if written { EXIT_OK } else { EXIT_INVALID }
}
