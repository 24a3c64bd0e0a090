//! Grading bare answers in bulk (upstream aptitude's `review` module, seed 001's
//! "parallel processing"): each request is a [`StdoutAssertion`] on the answer, graded
//! through the judge every review goes through — the same prompt, reply parsing, retries
//! and cache as `aptitude run`. There is no second grading path.

use std::sync::Arc;

use super::evaluation::Evaluation;
use super::stdout::StdoutAssertion;
use crate::agent::Agent;

/// What to grade an answer against (upstream's `ReviewConfig`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewConfig {
    /// The natural-language criteria.
    pub criteria: String,
    /// The passing score, 1–10 (upstream's default is 7).
    pub threshold: u8,
    /// The grading model, passed to the grader.
    pub model: Option<String>,
}

/// A graded answer (upstream's `ReviewResult`).
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewResult {
    /// The judge's score, 1–10; `None` when it could not be graded.
    pub score: Option<u8>,
    /// The judge's reasoning, or why it could not be graded.
    pub reasoning: String,
    /// Whether the score reached the threshold (never when it could not be graded).
    pub passed: bool,
    /// The whole evaluation.
    pub evaluation: Evaluation,
}

impl From<Evaluation> for ReviewResult {
    fn from(evaluation: Evaluation) -> Self {
        ReviewResult {
            score: evaluation.score,
            reasoning: evaluation
                .reasoning
                .clone()
                .or_else(|| evaluation.reason.clone())
                .unwrap_or_default(),
            passed: evaluation.passed,
            evaluation,
        }
    }
}

fn assertion(
    stdout: Option<String>,
    config: &ReviewConfig,
    grader: Arc<dyn Agent>,
) -> StdoutAssertion<'static> {
    let mut assertion = StdoutAssertion::with_review(stdout, &config.criteria)
        .with_threshold(config.threshold)
        .with_grader(grader);
    if let Some(model) = &config.model {
        assertion = assertion.with_model(model);
    }
    assertion
}

/// Grades one answer (`None`: the agent gave none) with `grader`.
pub async fn grade_stdout_async(
    stdout: Option<String>,
    config: &ReviewConfig,
    grader: Arc<dyn Agent>,
) -> ReviewResult {
    assertion(stdout, config, grader)
        .evaluate_async()
        .await
        .into()
}

/// Grades answers concurrently (each with its own criteria), in the order given.
pub async fn grade_stdout_batch_async(
    requests: Vec<(Option<String>, ReviewConfig)>,
    grader: Arc<dyn Agent>,
) -> Vec<ReviewResult> {
    let graded = requests.into_iter().map(|(stdout, config)| {
        let grader = Arc::clone(&grader);
        async move { grade_stdout_async(stdout, &config, grader).await }
    });
    futures_util::future::join_all(graded).await
}
