//! [`StdoutAssertion`]: a review of the agent's final answer, graded 1–10 by an LLM judge
//! through an agent adapter's one-shot `grade` call (seed 000; the YAML
//! `stdout: {review, threshold, model, votes}`), with the same prompt, reply parsing,
//! retries and cache as `aptitude run`. Both of upstream's tiers are here: the chain from
//! `expect(&output).stdout()`, and `StdoutAssertion::with_review` / `builder()` on a bare
//! answer (seed 001).

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::evaluation::{Evaluation, require_pass};
use super::subject::TranscriptRef;
use crate::agent::Agent;
use crate::assertions::judge::{Judge, JudgeConfig};
use crate::assertions::{self, AssertionResult, AssertionStatus, Evidence};
use crate::spec::{
    AgentTarget, Assertion, AssertionKind, DEFAULT_THRESHOLD, ReviewAssertion, TestSpec,
};
use crate::transcript::Transcript;

/// A `stdout` review being built.
#[derive(Clone)]
pub struct StdoutAssertion<'a> {
    output: TranscriptRef<'a>,
    grader: Option<Arc<dyn Agent>>,
    task: String,
    review: Option<String>,
    threshold: u8,
    model: Option<String>,
    votes: Option<u32>,
    cache: bool,
}

impl std::fmt::Debug for StdoutAssertion<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdoutAssertion")
            .field("answer", &self.output.final_text)
            .field("grader", &self.grader.as_ref().map(|g| g.name()))
            .field("review", &self.review)
            .field("threshold", &self.threshold)
            .field("model", &self.model)
            .field("votes", &self.votes)
            .finish_non_exhaustive()
    }
}

impl<'a> StdoutAssertion<'a> {
    /// A review of `output`'s final answer, graded by `grader`, with `task` as context.
    pub(crate) fn of(
        output: TranscriptRef<'a>,
        grader: Option<Arc<dyn Agent>>,
        task: &str,
    ) -> Self {
        StdoutAssertion {
            output,
            grader,
            task: task.to_owned(),
            review: None,
            threshold: DEFAULT_THRESHOLD,
            model: None,
            votes: None,
            cache: true,
        }
    }
}

impl StdoutAssertion<'static> {
    /// A review of a bare answer (`None`: the agent gave none), without criteria or grader
    /// yet (upstream's `StdoutAssertion::new`).
    pub fn new(stdout: Option<String>) -> Self {
        Self::of(
            TranscriptRef::shared(Arc::new(Transcript::of_calls(Vec::new(), stdout))),
            None,
            "",
        )
    }

    /// A review of a bare answer with its criteria (upstream's simple tier).
    pub fn with_review(stdout: Option<String>, criteria: &str) -> Self {
        Self::new(stdout).review(criteria)
    }

    /// The builder of upstream's advanced tier: `.stdout(…)`, the same settings as here,
    /// then `.build()`.
    pub fn builder() -> StdoutAssertionBuilder {
        StdoutAssertionBuilder {
            assertion: Self::new(None),
        }
    }
}

impl StdoutAssertion<'_> {
    /// The natural-language criteria.
    pub fn review(mut self, criteria: &str) -> Self {
        self.review = Some(criteria.to_owned());
        self
    }

    /// The passing score, 1–10 (default 7); out-of-range values are clamped.
    pub fn with_threshold(mut self, threshold: u8) -> Self {
        self.threshold = threshold.clamp(1, 10);
        self
    }

    /// Grades with `n` independent calls whose median score decides (1–25; out-of-range
    /// values are clamped), as `votes:` in YAML.
    pub fn with_votes(mut self, n: u32) -> Self {
        self.votes = Some(n.clamp(1, crate::spec::MAX_VOTES));
        self
    }

    /// The grading model, passed to the grader.
    pub fn with_model(mut self, model: &str) -> Self {
        self.model = Some(model.to_owned());
        self
    }

    /// The agent that grades (also settable on the expectation; for output from a run,
    /// the agent that ran grades unless another is set).
    pub fn with_grader(mut self, agent: Arc<dyn Agent>) -> Self {
        self.grader = Some(agent);
        self
    }

    /// Grades without reading or writing the grade cache.
    pub fn without_cache(mut self) -> Self {
        self.cache = false;
        self
    }

    /// Grades the final answer; blocks until the judge replies (on a thread of its own,
    /// so it may be called inside an async runtime too). Without criteria or a grader the
    /// result is an `error`, never a pass.
    pub fn evaluate(&self) -> Evaluation {
        let graded = std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .map(|rt| rt.block_on(self.evaluate_async()))
                })
                .join()
        });
        match graded {
            Ok(Ok(evaluation)) => evaluation,
            _ => self.error("the grading could not be run"),
        }
    }

    /// [`StdoutAssertion::evaluate`] for async code.
    pub async fn evaluate_async(&self) -> Evaluation {
        let Some(criteria) = self.review.clone() else {
            return self.error("no review criteria: call .review(\"…\")");
        };
        let Some(grader) = self.grader.clone() else {
            return self.error("no grading agent: call .with_grader(agent)");
        };
        let spec = self.spec(criteria, grader.kind());
        let mut config = JudgeConfig::default();
        if !self.cache {
            config.cache = None;
        }
        let judge = Judge::new(config, [grader]);
        let reviews = crate::run::grade_reviews(
            &spec,
            &judge,
            (&self.output, None),
            &CancellationToken::new(),
        )
        .await;
        assertions::evaluate_one(
            0,
            &spec.assertions[0],
            &Evidence {
                reviews: &reviews,
                ..Evidence::transcript_only(&self.output)
            },
        )
        .into()
    }

    /// Grades the final answer and panics, with the score and reasoning, unless it passed.
    ///
    /// # Panics
    /// When the review does not pass (including when it could not be graded).
    #[track_caller]
    pub fn to_pass(&self) {
        require_pass(&self.evaluate());
    }

    /// [`StdoutAssertion::to_pass`] for async code.
    ///
    /// # Panics
    /// As [`StdoutAssertion::to_pass`].
    pub async fn to_pass_async(&self) {
        require_pass(&self.evaluate_async().await);
    }

    /// The review as a test of one assertion, for the judge.
    fn spec(&self, criteria: String, grader: crate::agent::AgentKind) -> TestSpec {
        let mut spec = TestSpec::for_prompt("fluent", &self.task, grader, ".".into());
        spec.agents = vec![AgentTarget::new(grader)];
        spec.assertions = vec![Assertion {
            line: 0,
            column: 0,
            kind: AssertionKind::Review(ReviewAssertion {
                review: criteria,
                threshold: self.threshold,
                model: self.model.clone(),
                agent: None,
                votes: self.votes,
                gate: None,
                standing: None,
                include_dialog: false,
            }),
            variants: None,
        }];
        spec
    }

    fn error(&self, why: &str) -> Evaluation {
        let description = match &self.review {
            Some(criteria) => format!(
                "stdout review: {criteria:?} (threshold: {})",
                self.threshold
            ),
            None => "stdout review".into(),
        };
        AssertionResult::new(
            "stdout",
            description,
            AssertionStatus::Error,
            0,
            Some(why.to_owned()),
        )
        .into()
    }
}

/// Upstream's advanced tier: a [`StdoutAssertion`] on a bare answer, built step by step.
#[derive(Debug, Clone)]
pub struct StdoutAssertionBuilder {
    assertion: StdoutAssertion<'static>,
}

impl StdoutAssertionBuilder {
    /// The answer to grade (`None`: the agent gave none).
    pub fn stdout(mut self, stdout: Option<String>) -> Self {
        self.assertion.output =
            TranscriptRef::shared(Arc::new(Transcript::of_calls(Vec::new(), stdout)));
        self
    }

    /// As [`StdoutAssertion::review`].
    pub fn review(mut self, criteria: &str) -> Self {
        self.assertion = self.assertion.review(criteria);
        self
    }

    /// As [`StdoutAssertion::with_threshold`].
    pub fn with_threshold(mut self, threshold: u8) -> Self {
        self.assertion = self.assertion.with_threshold(threshold);
        self
    }

    /// As [`StdoutAssertion::with_model`].
    pub fn with_model(mut self, model: &str) -> Self {
        self.assertion = self.assertion.with_model(model);
        self
    }

    /// As [`StdoutAssertion::with_grader`].
    pub fn with_grader(mut self, agent: Arc<dyn Agent>) -> Self {
        self.assertion = self.assertion.with_grader(agent);
        self
    }

    /// The assertion.
    pub fn build(self) -> StdoutAssertion<'static> {
        self.assertion
    }
}
