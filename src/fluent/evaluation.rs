//! What a fluent assertion's `evaluate()` returns: the verdict as results files record it,
//! and upstream aptitude's `passed` / `reason`, so that code written for either reads it.

use crate::assertions::{AssertionResult, AssertionStatus};

/// One evaluated assertion.
///
/// `passed` is true only for [`AssertionStatus::Pass`]: a check that could not be made
/// (`error`, `invalid`, `skip`) is never a pass.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// Whether the assertion passed (upstream's `passed`).
    pub passed: bool,
    /// Why it did not pass, when it did not (upstream's `reason`): what was seen instead,
    /// or why it could not be checked.
    pub reason: Option<String>,
    /// What was asserted, in words.
    pub description: String,
    /// The verdict: pass, fail, error, invalid or skip.
    pub status: AssertionStatus,
    /// What was seen: the evidence for a pass, what was seen instead for a failure, the
    /// reason for an error.
    pub detail: Option<String>,
    /// Reviews: the judge's score, 1–10.
    pub score: Option<u8>,
    /// Reviews: the judge's reasoning.
    pub reasoning: Option<String>,
    /// The whole result, as `aptitude run` records it in results JSON.
    pub result: AssertionResult,
}

impl From<AssertionResult> for Evaluation {
    fn from(result: AssertionResult) -> Self {
        let passed = result.status == AssertionStatus::Pass;
        Evaluation {
            passed,
            reason: if passed {
                None
            } else {
                Some(
                    result
                        .detail
                        .clone()
                        .unwrap_or_else(|| format!("{:?}", result.status).to_lowercase()),
                )
            },
            description: result.description.clone(),
            status: result.status,
            detail: result.detail.clone(),
            score: result.score,
            reasoning: result.reasoning.clone(),
            result,
        }
    }
}

impl From<Evaluation> for AssertionResult {
    fn from(evaluation: Evaluation) -> Self {
        evaluation.result
    }
}

/// Panics, with the description and what was seen, unless `evaluation` passed.
///
/// # Panics
/// When the assertion did not pass.
#[track_caller]
pub(crate) fn require_pass(evaluation: &Evaluation) {
    if !evaluation.passed {
        panic!(
            "aptitude: assertion {}: {}\n{}",
            match evaluation.status {
                AssertionStatus::Fail => "failed",
                AssertionStatus::Error => "could not be checked",
                AssertionStatus::Invalid => "does not apply",
                AssertionStatus::Skip => "was skipped",
                AssertionStatus::Pass => "passed",
            },
            evaluation.description,
            evaluation.detail.as_deref().unwrap_or("")
        );
    }
}
