//! Grading a run's `stdout` reviews and `claims: verified` through the judge, and checking
//! a transcript alone against a test (`aptitude analyze`, a reused run).

use std::collections::BTreeMap;
use std::time::Instant;

use tokio_util::sync::CancellationToken;

use super::classify::{assertion_error_kind, outcome_error, outcome_kind};
use super::{ErrorKind, not_run};
use crate::assertions::judge::{Judge, ReviewVerdict};
use crate::assertions::{self, Evidence};
use crate::spec::{AssertionKind, TestSpec};
use crate::transcript::Transcript;
use crate::transcript::dialog::Dialog;
use crate::verdict::results::{TestResult, TestStatus};

/// Grades a test's reviews, unless its run `failed`: such a run has no answer worth paying
/// a judge for, so its reviews are skipped, saying why.
pub(super) async fn grade_unless_failed(
    spec: &TestSpec,
    judge: &Judge,
    (transcript, dialog): (&Transcript, Option<&Dialog>),
    failed: bool,
    cancel: &CancellationToken,
) -> BTreeMap<usize, ReviewVerdict> {
    if !failed {
        return grade_reviews(spec, judge, (transcript, dialog), cancel).await;
    }
    spec.assertions
        .iter()
        .enumerate()
        .filter(|(_, a)| matches!(a.kind, AssertionKind::Review(_) | AssertionKind::Claims))
        .map(|(i, _)| {
            (
                i,
                ReviewVerdict::skipped("not graded: the agent run failed"),
            )
        })
        .collect()
}

/// Grades a test's `stdout` reviews and reads the answer's claims for each
/// `claims: verified`, concurrently (under the judge's global limit), by assertion index;
/// a review with `include_dialog: true` also sees `dialog`, the run's conversation.
pub async fn grade_reviews(
    spec: &TestSpec,
    judge: &Judge,
    (transcript, dialog): (&Transcript, Option<&Dialog>),
    cancel: &CancellationToken,
) -> BTreeMap<usize, ReviewVerdict> {
    use futures_util::future::Either;
    let test = (spec.agent.kind, spec.model.as_deref());
    let answer = transcript.final_text.as_deref();
    // A review is graded; `claims: verified` has the judge read the answer's claims.
    let calls = spec.assertions.iter().enumerate().filter_map(|(i, a)| {
        let call = match &a.kind {
            AssertionKind::Review(r) => {
                Either::Left(judge.review(r, test, &spec.prompt, (answer, dialog), cancel))
            }
            AssertionKind::Claims => {
                Either::Right(judge.claims(test, &spec.prompt, answer, cancel))
            }
            _ => return None,
        };
        Some(async move { (i, call.await) })
    });
    futures_util::future::join_all(calls)
        .await
        .into_iter()
        .collect()
}

/// The agent's usage plus the grading calls'.
pub(super) fn total_usage(
    transcript: &Transcript,
    traffic: Option<&crate::gateway::Traffic>,
    reviews: &BTreeMap<usize, ReviewVerdict>,
) -> crate::transcript::Usage {
    let mut usage = run_usage(transcript, traffic);
    for v in reviews.values() {
        if let Some(u) = &v.usage {
            usage.add(u);
        }
    }
    usage
}

/// What the agent's run used: the agent's own figures when it reported a cost; else what
/// the model gateway metered, tokens and cost together (an estimate at list prices), so
/// that a run the agent never summed up — one stopped at its first decision
/// (`stop: first_call`), an agent that reports no cost — still counts in the totals.
/// The gateway's figures are taken only when it metered every request it forwarded
/// (`unmetered` 0) and priced them: a partial meter would understate the run as a cost.
pub(super) fn run_usage(
    transcript: &Transcript,
    traffic: Option<&crate::gateway::Traffic>,
) -> crate::transcript::Usage {
    let mut usage = transcript.usage.clone();
    if usage.cost_usd.is_some() {
        return usage;
    }
    let Some(t) = traffic.filter(|t| t.requests > 0 && t.unmetered == 0) else {
        return usage;
    };
    let Some(cost) = t.cost_usd else {
        return usage;
    };
    usage.input_tokens = t.input_tokens;
    usage.output_tokens = t.output_tokens;
    usage.cache_read_input_tokens = t.cache_read_input_tokens;
    usage.cache_creation_input_tokens = t.cache_creation_input_tokens;
    usage.cost_usd = Some(cost);
    usage
}

/// A transcript checked against a test: its verdict, and what grading it cost.
pub(super) struct Checked {
    pub(super) status: TestStatus,
    pub(super) error: Option<String>,
    pub(super) error_kind: Option<ErrorKind>,
    pub(super) assertions: Vec<crate::verdict::results::AssertionResult>,
    /// The judge's usage for the reviews graded now (none from a cache).
    pub(super) grading: crate::transcript::Usage,
}

/// Evaluates `spec`'s assertions on `transcript` (no workspace), grading its reviews unless
/// the session did not complete: what `aptitude analyze` and a reused run share.
pub(super) async fn check_transcript(
    spec: &TestSpec,
    (transcript, dialog): (&Transcript, Option<&Dialog>),
    judge: &Judge,
    cancel: &CancellationToken,
) -> Checked {
    let error = outcome_error(&transcript.outcome);
    let reviews =
        grade_unless_failed(spec, judge, (transcript, dialog), error.is_some(), cancel).await;
    let assertions = assertions::evaluate(
        spec,
        &Evidence {
            reviews: &reviews,
            user: spec.user.as_deref(),
            ..Evidence::transcript_only(transcript)
        },
    );
    let status = TestResult::status_of(error.as_deref(), &assertions);
    let error_kind = match (&error, status) {
        (Some(_), _) => Some(outcome_kind(&transcript.outcome)),
        (None, TestStatus::Error) => Some(assertion_error_kind(&assertions)),
        (None, _) => None,
    };
    let mut grading = crate::transcript::Usage::default();
    for u in reviews.values().filter_map(|v| v.usage.as_ref()) {
        grading.add(u);
    }
    Checked {
        status,
        error,
        error_kind,
        assertions,
        grading,
    }
}

/// Evaluates `spec` against an existing transcript (`aptitude analyze`), grading its
/// reviews unless the session did not complete.
///
/// `started` is when the evaluation began (the result's `duration_ms`); the agent's own
/// time is in the transcript's usage.
pub async fn evaluate_transcript(
    spec: &TestSpec,
    transcript: Transcript,
    judge: &Judge,
    cancel: &CancellationToken,
    started: Instant,
) -> TestResult {
    let checked = check_transcript(spec, (&transcript, None), judge, cancel).await;
    let mut usage = transcript.usage.clone();
    usage.add(&checked.grading);
    TestResult {
        status: checked.status,
        duration_ms: started.elapsed().as_millis() as u64,
        usage: Some(usage),
        error: checked.error,
        error_kind: checked.error_kind,
        assertions: checked.assertions,
        agent: transcript.agent_version.clone(),
        // A transcript read from a file may come from any agent.
        agent_id: None,
        variant: None,
        transcript: Some(transcript),
        witness: Some(crate::gateway::witness::Witness::unwitnessed(
            "analyzed from a transcript file: what the agent wrote about itself, not what its model saw",
        )),
        ..not_run(spec, ErrorKind::Setup, "")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gateway::Traffic;
    use crate::transcript::Usage;

    fn metered(unmetered: u32) -> Traffic {
        Traffic {
            requests: 1,
            input_tokens: 1_200,
            output_tokens: 40,
            cache_read_input_tokens: 3,
            unmetered,
            cost_usd: Some(0.0042),
            ..Traffic::default()
        }
    }

    /// A run stopped at its first decision (the agent summed up nothing) costs what the
    /// gateway metered; an agent's own cost is kept; a partial meter is no cost.
    #[test]
    fn a_run_without_the_agents_cost_costs_what_the_gateway_metered() {
        let mut t = Transcript::completed(Vec::new(), "done");
        t.usage = Usage {
            input_tokens: 10,
            ..Usage::default()
        };
        let u = run_usage(&t, Some(&metered(0)));
        assert_eq!(u.cost_usd, Some(0.0042));
        assert_eq!((u.input_tokens, u.output_tokens), (1_200, 40));
        assert_eq!(u.cache_read_input_tokens, 3);
        assert_eq!(run_usage(&t, Some(&metered(1))).cost_usd, None);
        assert_eq!(run_usage(&t, None), t.usage);
        t.usage.cost_usd = Some(0.01);
        assert_eq!(run_usage(&t, Some(&metered(0))), t.usage, "the agent's own");
    }
}
