//! The LLM judge: `stdout: {review, threshold, model, agent}` assertions (seeds 000, 001, 003).
//!
//! A review is graded by sending a prompt ([`prompt`]) through an agent adapter's
//! [`Agent::grade`] — for Claude Code, `claude -p … --output-format json --tools ""
//! --max-turns 1` — and reading a `{"score": 1-10, "reasoning": …}` reply ([`parse`]).
//!
//! - `pass`: score ≥ threshold (equal passes). `fail`: below, with the reasoning.
//! - `error`: the grading could not be done — no grader, a non-zero exit, a timeout, or a
//!   reply that still can not be parsed after the retries (2 by default). Never a pass.
//! - `skip`: the run was told not to grade (`--no-grade`).
//!
//! Reviews are graded concurrently under one global limit (`--judge-jobs`, default 4), so
//! grading overlaps other tests' agent runs. Grades are cached on disk ([`cache`]); a hit
//! makes no call and is marked `cached`.

pub mod cache;
pub mod parse;
pub mod prompt;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::agent::Agent;
use crate::results::AssertionStatus;
use crate::spec::ReviewAssertion;
use crate::transcript::Usage;
use cache::{Cache, CachedGrade};

/// Default number of grading calls at once.
pub const DEFAULT_JUDGE_JOBS: usize = 4;
/// Default number of retries for a reply that can not be parsed.
pub const DEFAULT_RETRIES: u32 = 2;
/// Time limit of one grading call.
pub const GRADE_TIMEOUT: Duration = Duration::from_secs(180);

/// How to grade.
#[derive(Debug, Clone)]
pub struct JudgeConfig {
    /// `false` with `--no-grade`: reviews are skipped.
    pub enabled: bool,
    /// Retries for unparseable replies.
    pub retries: u32,
    /// Grading calls at once, across all tests.
    pub jobs: usize,
    /// The grade cache; `None` with `--no-cache`.
    pub cache: Option<Cache>,
    /// Time limit of one grading call.
    pub timeout: Duration,
}

impl Default for JudgeConfig {
    fn default() -> Self {
        JudgeConfig {
            enabled: true,
            retries: DEFAULT_RETRIES,
            jobs: DEFAULT_JUDGE_JOBS,
            cache: Cache::default_dir().map(Cache::new),
            timeout: GRADE_TIMEOUT,
        }
    }
}

/// A graded (or not) review.
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewVerdict {
    /// pass / fail / error / skip.
    pub status: AssertionStatus,
    /// 1–10, when graded.
    pub score: Option<u8>,
    /// The judge's reasoning, when graded.
    pub reasoning: Option<String>,
    /// Why it is an error or a skip.
    pub problem: Option<String>,
    /// Whether the grade came from the cache.
    pub cached: bool,
    /// Tokens, cost and time of the grading calls made (none on a cache hit).
    pub usage: Option<Usage>,
}

impl ReviewVerdict {
    /// A review that was not graded, and why.
    pub fn skipped(why: &str) -> Self {
        ReviewVerdict::problem(AssertionStatus::Skip, why.to_owned(), None)
    }

    fn problem(status: AssertionStatus, why: String, usage: Option<Usage>) -> Self {
        ReviewVerdict {
            status,
            score: None,
            reasoning: None,
            problem: Some(why),
            cached: false,
            usage,
        }
    }

    fn graded(
        score: u8,
        threshold: u8,
        reasoning: String,
        cached: bool,
        usage: Option<Usage>,
    ) -> Self {
        ReviewVerdict {
            status: AssertionStatus::pass_if(score >= threshold),
            score: Some(score),
            reasoning: Some(reasoning),
            problem: None,
            cached,
            usage,
        }
    }
}

/// Grades reviews with the agents' `grade` calls.
pub struct Judge {
    config: JudgeConfig,
    graders: BTreeMap<String, Arc<dyn Agent>>,
    slots: Arc<Semaphore>,
}

impl Judge {
    /// A judge grading with `graders`, each used for the reviews of its agent
    /// ([`Agent::name`]).
    pub fn new(config: JudgeConfig, graders: impl IntoIterator<Item = Arc<dyn Agent>>) -> Self {
        let slots = Arc::new(Semaphore::new(config.jobs.max(1)));
        Judge {
            config,
            graders: graders
                .into_iter()
                .map(|g| (g.name().to_owned(), g))
                .collect(),
            slots,
        }
    }

    /// Whether grading is turned on.
    pub fn enabled(&self) -> bool {
        self.config.enabled
    }

    /// Grades one review of `answer` to `task`; `test_agent` grades when the review names
    /// no agent.
    pub async fn review(
        &self,
        review: &ReviewAssertion,
        test_agent: &str,
        task: &str,
        answer: Option<&str>,
        cancel: &CancellationToken,
    ) -> ReviewVerdict {
        if !self.config.enabled {
            return ReviewVerdict::skipped("not graded: grading is turned off (--no-grade)");
        }
        let agent_name = review.agent.as_deref().unwrap_or(test_agent);
        let Some(grader) = self.graders.get(agent_name) else {
            return ReviewVerdict::problem(
                AssertionStatus::Error,
                format!(
                    "the grading could not be done: no `{agent_name}` grader is available in this version of aptitude"
                ),
                None,
            );
        };
        let inputs = prompt::Inputs {
            criteria: &review.review,
            task,
            answer,
        };
        let model = review.model.as_deref();
        let key = Cache::key(agent_name, model, &prompt::canonical(&inputs));
        if let Some(hit) = self.config.cache.as_ref().and_then(|c| c.get(&key)) {
            return ReviewVerdict::graded(hit.score, review.threshold, hit.reasoning, true, None);
        }
        let permit = tokio::select! {
            p = Arc::clone(&self.slots).acquire_owned() => p.ok(),
            () = cancel.cancelled() => None,
        };
        let Some(_permit) = permit else {
            return ReviewVerdict::problem(
                AssertionStatus::Error,
                "not graded: the run was interrupted".into(),
                None,
            );
        };
        let mut usage: Option<Usage> = None;
        let attempts = 1 + self.config.retries;
        let mut last_error = None;
        for _ in 0..attempts {
            let reply = grader
                .grade(&prompt::render(&inputs), model, self.config.timeout, cancel)
                .await;
            let reply = match reply {
                Ok(reply) => reply,
                Err(e) => {
                    let hint = if matches!(e, crate::agent::AgentError::Missing { .. }) {
                        " (or pass --no-grade to skip reviews)"
                    } else {
                        ""
                    };
                    return ReviewVerdict::problem(
                        AssertionStatus::Error,
                        format!("the grading could not be done: {e}{hint}"),
                        usage,
                    );
                }
            };
            usage.get_or_insert_with(Usage::default).add(&reply.usage);
            match parse::parse_reply(&reply.text) {
                Ok(grade) => {
                    if let Some(cache) = &self.config.cache {
                        cache.put(
                            &key,
                            &CachedGrade {
                                score: grade.score,
                                reasoning: grade.reasoning.clone(),
                                agent: agent_name.to_owned(),
                                model: model.map(str::to_owned),
                            },
                        );
                    }
                    return ReviewVerdict::graded(
                        grade.score,
                        review.threshold,
                        grade.reasoning,
                        false,
                        usage,
                    );
                }
                Err(e) => last_error = Some(e),
            }
        }
        let why = last_error.map_or_else(|| "no reply".to_owned(), |e| e.to_string());
        ReviewVerdict::problem(
            AssertionStatus::Error,
            format!("the judge's reply could not be parsed after {attempts} attempts: {why}"),
            usage,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::{AgentError, AgentInfo, ExecuteRequest, Execution, GradeReply};
    use std::sync::Mutex;

    /// A grader that replays canned replies (unit tests only; the end-to-end tests grade
    /// with the real `claude` against the scripted model).
    struct Canned {
        replies: Mutex<Vec<Result<String, String>>>,
        calls: Mutex<u32>,
    }

    #[async_trait::async_trait]
    impl Agent for Canned {
        fn name(&self) -> &'static str {
            "claude"
        }
        async fn check(&self) -> Result<AgentInfo, AgentError> {
            Err(AgentError::Grade("unused".into()))
        }
        async fn execute(&self, _: ExecuteRequest<'_>) -> Result<Execution, AgentError> {
            Err(AgentError::Grade("unused".into()))
        }
        async fn grade(
            &self,
            _: &str,
            _: Option<&str>,
            _: Duration,
            _: &CancellationToken,
        ) -> Result<GradeReply, AgentError> {
            *self.calls.lock().unwrap() += 1;
            let next = self.replies.lock().unwrap().remove(0);
            next.map(|text| GradeReply {
                text,
                usage: Usage {
                    output_tokens: 5,
                    cost_usd: Some(0.001),
                    ..Usage::default()
                },
            })
            .map_err(AgentError::Grade)
        }
    }

    fn judge(replies: Vec<Result<&str, &str>>, cache: Option<Cache>) -> (Judge, Arc<Canned>) {
        let canned = Arc::new(Canned {
            replies: Mutex::new(
                replies
                    .into_iter()
                    .map(|r| r.map(str::to_owned).map_err(str::to_owned))
                    .collect(),
            ),
            calls: Mutex::new(0),
        });
        let config = JudgeConfig {
            cache,
            ..JudgeConfig::default()
        };
        let grader: Arc<dyn Agent> = canned.clone();
        (Judge::new(config, [grader]), canned)
    }

    fn review(threshold: u8) -> ReviewAssertion {
        ReviewAssertion {
            review: "says 43".into(),
            threshold,
            model: None,
            agent: None,
        }
    }

    async fn grade(j: &Judge, threshold: u8, answer: &str) -> ReviewVerdict {
        j.review(
            &review(threshold),
            "claude",
            "task",
            Some(answer),
            &CancellationToken::new(),
        )
        .await
    }

    #[tokio::test]
    async fn threshold_boundary() {
        let (j, _) = judge(
            vec![
                Ok(r#"{"score": 7, "reasoning": "ok"}"#),
                Ok(r#"{"score": 6, "reasoning": "no"}"#),
            ],
            None,
        );
        assert_eq!(
            grade(&j, 7, "a").await.status,
            AssertionStatus::Pass,
            "equal to the threshold passes"
        );
        let v = grade(&j, 7, "a").await;
        assert_eq!(v.status, AssertionStatus::Fail);
        assert_eq!(v.reasoning.as_deref(), Some("no"));
    }

    #[tokio::test]
    async fn garbage_is_retried_then_an_error() {
        let (j, canned) = judge(vec![Ok("nope"), Ok("still nope"), Ok("no json here")], None);
        let v = grade(&j, 7, "a").await;
        assert_eq!(v.status, AssertionStatus::Error);
        assert!(v.problem.unwrap().contains("after 3 attempts"));
        assert_eq!(*canned.calls.lock().unwrap(), 3);
        assert_eq!(
            v.usage.unwrap().output_tokens,
            15,
            "every call's usage is counted"
        );
    }

    #[tokio::test]
    async fn a_retry_can_succeed() {
        let (j, _) = judge(vec![Ok("hmm"), Ok(r#"{"score": 9}"#)], None);
        assert_eq!(grade(&j, 7, "a").await.score, Some(9));
    }

    #[tokio::test]
    async fn grader_failure_is_an_error_not_a_pass() {
        let (j, _) = judge(vec![Err("the grader exited with code 1")], None);
        let v = grade(&j, 1, "a").await;
        assert_eq!(v.status, AssertionStatus::Error);
        assert!(v.problem.unwrap().contains("exited with code 1"));
    }

    #[tokio::test]
    async fn cache_hits_make_no_call_and_errors_are_not_cached() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path().to_owned());
        let (j, canned) = judge(
            vec![
                Ok(r#"{"score": 8}"#),
                Ok("garbage"),
                Ok("garbage"),
                Ok("garbage"),
                Ok(r#"{"score": 2}"#),
            ],
            Some(cache),
        );
        let first = grade(&j, 7, "answer one").await;
        assert!(!first.cached);
        let again = grade(&j, 7, "answer one").await;
        assert!(again.cached);
        assert_eq!((again.score, again.usage), (Some(8), None));
        assert_eq!(*canned.calls.lock().unwrap(), 1);
        assert_eq!(
            grade(&j, 7, "answer two").await.status,
            AssertionStatus::Error
        );
        let retry = grade(&j, 7, "answer two").await;
        assert_eq!(
            retry.score,
            Some(2),
            "an error was not cached: the second run grades again"
        );
        assert_eq!(*canned.calls.lock().unwrap(), 5);
    }

    #[tokio::test]
    async fn no_grade_skips() {
        let (mut j, _) = judge(vec![], None);
        j.config.enabled = false;
        assert_eq!(grade(&j, 7, "a").await.status, AssertionStatus::Skip);
    }
}
