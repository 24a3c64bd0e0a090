//! Turning (test, transcript) into a test result. The runner never prints: callers hand
//! its results to a reporter.

use crate::assertions::{self, Evidence};
use crate::results::TestResult;
use crate::spec::TestSpec;
use crate::spec::diagnostic::display_path;
use crate::transcript::{Outcome, Transcript};

/// Why a session's outcome makes the test `error`: anything but a completed session.
///
/// A transcript that stops on an API error, at max turns, on an interruption or mid-way
/// can not show what the agent would have done, so guardrails such as `called: false`
/// must not pass on it.
pub fn outcome_error(outcome: &Outcome) -> Option<String> {
    match outcome {
        Outcome::Completed => None,
        other => Some(other.describe()),
    }
}

/// Evaluates `spec` against an existing transcript (`aptitude analyze`).
///
/// `duration_ms` is the time the evaluation took; the agent's own time is in the
/// transcript's usage.
pub fn evaluate_transcript(
    spec: &TestSpec,
    transcript: Transcript,
    duration_ms: u64,
) -> TestResult {
    let evidence = Evidence {
        transcript: &transcript,
    };
    let assertions = assertions::evaluate(spec, &evidence);
    let error = outcome_error(&transcript.outcome);
    TestResult {
        name: spec.name.clone(),
        file: display_path(&spec.file),
        status: TestResult::status_of(error.as_deref(), &assertions),
        duration_ms,
        usage: Some(transcript.usage.clone()),
        error,
        assertions,
        transcript: Some(transcript),
    }
}
