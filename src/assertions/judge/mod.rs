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
//!
//! **Votes.** `votes: n` on a review (or `--judge-votes n`) makes n independent grading
//! calls, so judge noise shows apart from the agent's: the median score decides (for an
//! even n, the mean of the two middle scores rounded down, like a fractional score), and
//! every vote's score and reasoning are kept, with their spread. A vote that errors does
//! not count; the review is `error` unless more than half of the votes graded. Each vote
//! has its own cache entry (vote 1 shares the single-vote key).
//!
//! **Claims.** For `claims: verified` the judge does not grade: it reads the concrete
//! claims of the answer with a second prompt and reply shape ([`claims`]), through the same
//! agent call, limit, retries and cache ([`Judge::claims`]). The claims come back in
//! [`ReviewVerdict::claims`] with the extraction's cache key; `src/assertions/claims.rs`
//! checks them against the evidence and records both in the result, so that `run --reuse`
//! answers an unchanged extraction from the baseline ([`Judge::with_prior_claims`]).

pub mod cache;
pub mod claims;
pub mod parse;
pub mod prompt;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::AssertionStatus;
use crate::agent::{Agent, AgentKind};
use crate::spec::ReviewAssertion;
use crate::transcript::Usage;
use cache::{Cache, CachedGrade};
use claims::Claim;

/// Extracted claims as stored in the cache.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct CachedClaims {
    /// The claims read from the answer.
    claims: Vec<Claim>,
    /// The extracting agent.
    agent: String,
    /// The extracting model, when one was named.
    model: Option<String>,
}

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
    /// Grading calls per review that sets no `votes:` (`--judge-votes`, default 1).
    pub votes: u32,
}

impl Default for JudgeConfig {
    fn default() -> Self {
        JudgeConfig {
            enabled: true,
            retries: DEFAULT_RETRIES,
            jobs: DEFAULT_JUDGE_JOBS,
            cache: Cache::default_dir().map(Cache::new),
            timeout: GRADE_TIMEOUT,
            votes: 1,
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
    /// Every vote, when the review was graded by more than one (empty otherwise).
    pub votes: Vec<JudgeVote>,
    /// `claims: verified`: the claims the judge read from the answer (`status` is then
    /// `pass`, meaning only that they were read; checking them is the assertion's work).
    /// `None` for reviews and for extractions that failed.
    pub claims: Option<Vec<Claim>>,
    /// The grade cache key of each vote, in vote order (empty when not graded).
    pub keys: Vec<String>,
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
            votes: Vec::new(),
            claims: None,
            keys: Vec::new(),
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
            votes: Vec::new(),
            claims: None,
            keys: Vec::new(),
        }
    }

    fn extracted(claims: Vec<Claim>, cached: bool, usage: Option<Usage>) -> Self {
        ReviewVerdict {
            status: AssertionStatus::Pass,
            score: None,
            reasoning: None,
            problem: None,
            cached,
            usage,
            votes: Vec::new(),
            claims: Some(claims),
            keys: Vec::new(),
        }
    }

    /// The verdict of `votes` (one per grading call) against `threshold`, by the rules in
    /// the module docs; a single vote gives exactly the single-call verdict.
    fn of_votes(votes: Vec<(JudgeVote, Option<Usage>)>, threshold: u8) -> Self {
        let mut usage: Option<Usage> = None;
        for u in votes.iter().filter_map(|(_, u)| u.as_ref()) {
            usage.get_or_insert_with(Usage::default).add(u);
        }
        let votes: Vec<JudgeVote> = votes.into_iter().map(|(v, _)| v).collect();
        let mut scores: Vec<u8> = votes.iter().filter_map(|v| v.score).collect();
        let first_problem = || {
            votes
                .iter()
                .find_map(|v| v.problem.clone())
                .unwrap_or_else(|| "no vote".to_owned())
        };
        if let [only] = votes.as_slice() {
            return match only.score {
                Some(score) => ReviewVerdict::graded(
                    score,
                    threshold,
                    only.reasoning.clone().unwrap_or_default(),
                    only.cached,
                    usage,
                ),
                None => ReviewVerdict::problem(AssertionStatus::Error, first_problem(), usage),
            };
        }
        if scores.len() * 2 <= votes.len() {
            let problem = format!(
                "only {} of {} judge votes graded, not a majority: {}",
                scores.len(),
                votes.len(),
                first_problem()
            );
            return ReviewVerdict {
                votes,
                ..ReviewVerdict::problem(AssertionStatus::Error, problem, usage)
            };
        }
        scores.sort_unstable();
        let mid = scores.len() / 2;
        let median = if scores.len() % 2 == 1 {
            scores[mid]
        } else {
            // The mean of the two middle scores, rounded down: a pass needs the judges'
            // own numbers to reach the threshold.
            let sum = u16::from(scores[mid - 1]) + u16::from(scores[mid]);
            u8::try_from(sum / 2).unwrap_or(scores[mid - 1])
        };
        // The reasoning shown is a vote that gave the median, else the closest below it.
        let reasoning = votes
            .iter()
            .filter(|v| v.score.is_some_and(|s| s <= median))
            .max_by_key(|v| v.score)
            .and_then(|v| v.reasoning.clone())
            .unwrap_or_default();
        let cached = votes.iter().filter(|v| v.score.is_some()).all(|v| v.cached);
        ReviewVerdict {
            votes,
            ..ReviewVerdict::graded(median, threshold, reasoning, cached, usage)
        }
    }
}

/// Grades reviews with the agents' `grade` calls.
pub struct Judge {
    config: JudgeConfig,
    graders: BTreeMap<AgentKind, Arc<dyn Agent>>,
    slots: Arc<Semaphore>,
    prior: BTreeMap<String, CachedGrade>,
    prior_claims: BTreeMap<String, Vec<Claim>>,
}

impl Judge {
    /// A judge grading with `graders`, each used for the reviews of its agent
    /// ([`Agent::name`]).
    pub fn new(config: JudgeConfig, graders: impl IntoIterator<Item = Arc<dyn Agent>>) -> Self {
        let slots = Arc::new(Semaphore::new(config.jobs.max(1)));
        Judge {
            config,
            graders: graders.into_iter().map(|g| (g.kind(), g)).collect(),
            slots,
            prior: BTreeMap::new(),
            prior_claims: BTreeMap::new(),
        }
    }

    /// This judge, answering a grading request whose cache key is in `prior` with that
    /// grade, before the cache and without a call (`run --reuse`: the baseline's grades
    /// travel with its results, so an unchanged review of a reused answer is not graded
    /// again on a machine without the cache). Such a vote is marked `cached`.
    pub fn with_prior(mut self, prior: BTreeMap<String, CachedGrade>) -> Self {
        self.prior = prior;
        self
    }

    /// This judge, answering a `claims: verified` extraction whose cache key is in `prior`
    /// with those claims, before the cache and without a call (`run --reuse`, as
    /// [`Judge::with_prior`] for grades). Such an extraction is marked `cached`.
    pub fn with_prior_claims(mut self, prior: BTreeMap<String, Vec<Claim>>) -> Self {
        self.prior_claims = prior;
        self
    }

    /// Whether grading is turned on.
    pub fn enabled(&self) -> bool {
        self.config.enabled
    }

    /// Grades one review of `answer` to `task`. The review's `agent` grades, else
    /// `test.0` (the test's agent); with the review's `model`, else, when the test's own
    /// agent grades, `test.1` (the test's model: behind a gateway it may be the only one).
    /// With `include_dialog: true` the judge also sees `dialog`, the run's conversation;
    /// a run that kept none makes the review `error`, never graded without it.
    pub async fn review(
        &self,
        review: &ReviewAssertion,
        test: (AgentKind, Option<&str>),
        task: &str,
        (answer, dialog): (Option<&str>, Option<&crate::transcript::dialog::Dialog>),
        cancel: &CancellationToken,
    ) -> ReviewVerdict {
        if !self.config.enabled {
            return ReviewVerdict::skipped("not graded: grading is turned off (--no-grade)");
        }
        let dialog = match (review.include_dialog, dialog) {
            (false, _) => None,
            (true, Some(d)) => Some(prompt::dialog_text(d)),
            (true, None) => {
                return ReviewVerdict::problem(
                    AssertionStatus::Error,
                    "the grading could not be done: the review includes the dialog \
                     (`include_dialog: true`), but the run kept no conversation with a `user:`"
                        .to_owned(),
                    None,
                );
            }
        };
        let (test_agent, test_model) = test;
        let agent = review.agent.unwrap_or(test_agent);
        let agent_name = agent.name();
        let Some(grader) = self.graders.get(&agent) else {
            return ReviewVerdict::problem(
                AssertionStatus::Error,
                format!(
                    "the grading could not be done: no `{agent_name}` grader was set up for this run"
                ),
                None,
            );
        };
        let inputs = prompt::Inputs {
            criteria: &review.review,
            task,
            answer,
            dialog: dialog.as_deref(),
        };
        let model = review
            .model
            .as_deref()
            .or(test_model.filter(|_| agent == test_agent));
        let canonical = prompt::canonical(&inputs);
        let count = review.votes.unwrap_or(self.config.votes).max(1);
        // Vote 1 keeps the single-vote key, so single-vote grades stay cached.
        let keys: Vec<String> = (0..count)
            .map(|vote| {
                if vote == 0 {
                    Cache::key(agent_name, model, &canonical)
                } else {
                    Cache::key(agent_name, model, &format!("{canonical}\u{0}vote {vote}"))
                }
            })
            .collect();
        let votes = keys.iter().map(|key| {
            self.vote(
                grader.as_ref(),
                agent_name,
                &inputs,
                model,
                key.clone(),
                cancel,
            )
        });
        let votes = futures_util::future::join_all(votes).await;
        ReviewVerdict {
            keys,
            ..ReviewVerdict::of_votes(votes, review.threshold)
        }
    }

    /// Reads the claims of `answer` (to `task`) for `claims: verified`, with the test's
    /// agent and model (`test`): from the prior claims ([`Judge::with_prior_claims`]), else
    /// the cache, else with a call. The verdict's `keys` holds the extraction's cache key.
    /// No answer has no claims (no call is made, no key); an extraction that can not be
    /// done or parsed is `error`, never a pass.
    pub async fn claims(
        &self,
        test: (AgentKind, Option<&str>),
        task: &str,
        answer: Option<&str>,
        cancel: &CancellationToken,
    ) -> ReviewVerdict {
        if !self.config.enabled {
            return ReviewVerdict::skipped("not checked: grading is turned off (--no-grade)");
        }
        let Some(answer) = answer.filter(|a| !a.trim().is_empty()) else {
            return ReviewVerdict::extracted(Vec::new(), false, None);
        };
        let (agent, model) = test;
        let agent_name = agent.name();
        let Some(grader) = self.graders.get(&agent) else {
            return ReviewVerdict::problem(
                AssertionStatus::Error,
                format!(
                    "the claims could not be read: no `{agent_name}` grader was set up for this run"
                ),
                None,
            );
        };
        let inputs = claims::Inputs { task, answer };
        let key = Cache::key(agent_name, model, &claims::canonical(&inputs));
        let keyed = |verdict: ReviewVerdict| ReviewVerdict {
            keys: vec![key.clone()],
            ..verdict
        };
        let hit = self.prior_claims.get(&key).cloned().or_else(|| {
            self.config
                .cache
                .as_ref()
                .and_then(|c| c.get_as::<CachedClaims>(&key))
                .map(|hit| hit.claims)
        });
        if let Some(hit) = hit {
            tracing::debug!(claims = hit.len(), "claims cache hit");
            return keyed(ReviewVerdict::extracted(hit, true, None));
        }
        let (reply, usage) = self
            .ask(
                grader.as_ref(),
                model,
                || claims::render(&inputs),
                claims::parse_reply,
                "the claims could not be read",
                cancel,
            )
            .await;
        match reply {
            Ok(found) => {
                if let Some(cache) = &self.config.cache {
                    cache.put_as(
                        &key,
                        &CachedClaims {
                            claims: found.clone(),
                            agent: agent_name.to_owned(),
                            model: model.map(str::to_owned),
                        },
                    );
                }
                keyed(ReviewVerdict::extracted(found, false, usage))
            }
            Err(why) => keyed(ReviewVerdict::problem(
                AssertionStatus::Error,
                why.to_string(),
                usage,
            )),
        }
    }

    /// One judge request under the concurrency limit: `render` makes the prompt of each
    /// attempt, `parse` reads the reply; an unparseable reply is retried. Returns what was
    /// read, or why nothing was (a failed call is told as `failed: …`), with the usage of
    /// every call made.
    async fn ask<T>(
        &self,
        grader: &dyn Agent,
        model: Option<&str>,
        render: impl Fn() -> String,
        parse: impl Fn(&str) -> Result<T, parse::ParseError>,
        failed: &'static str,
        cancel: &CancellationToken,
    ) -> (Result<T, NotGraded>, Option<Usage>) {
        let permit = tokio::select! {
            p = Arc::clone(&self.slots).acquire_owned() => p.ok(),
            () = cancel.cancelled() => None,
        };
        let Some(_permit) = permit else {
            return (Err(NotGraded::Interrupted), None);
        };
        let mut usage: Option<Usage> = None;
        let attempts = 1 + self.config.retries;
        let mut last_error = None;
        for _ in 0..attempts {
            let reply = match grader
                .grade(&render(), model, self.config.timeout, cancel)
                .await
            {
                Ok(reply) => reply,
                Err(e) => {
                    let missing = matches!(e, crate::agent::AgentError::Missing { .. });
                    return (
                        Err(NotGraded::Call {
                            what: failed,
                            source: e,
                            missing,
                        }),
                        usage,
                    );
                }
            };
            usage.get_or_insert_with(Usage::default).add(&reply.usage);
            match parse(&reply.text) {
                Ok(found) => return (Ok(found), usage),
                Err(e) => last_error = Some(e),
            }
        }
        (
            Err(NotGraded::Unreadable {
                attempts,
                last: last_error,
            }),
            usage,
        )
    }

    /// One grading call (with its retries), or the cached grade under `key`.
    async fn vote(
        &self,
        grader: &dyn Agent,
        agent_name: &str,
        inputs: &prompt::Inputs<'_>,
        model: Option<&str>,
        key: String,
        cancel: &CancellationToken,
    ) -> (JudgeVote, Option<Usage>) {
        let failed = |problem: String| JudgeVote {
            score: None,
            reasoning: None,
            problem: Some(problem),
            cached: false,
        };
        let hit = self
            .prior
            .get(&key)
            .cloned()
            .or_else(|| self.config.cache.as_ref().and_then(|c| c.get(&key)));
        if let Some(hit) = hit {
            tracing::debug!(score = hit.score, "grade cache hit");
            let vote = JudgeVote {
                score: Some(hit.score),
                reasoning: Some(hit.reasoning),
                problem: None,
                cached: true,
            };
            return (vote, None);
        }
        let (reply, usage) = self
            .ask(
                grader,
                model,
                || prompt::render(inputs),
                parse::parse_reply,
                "the grading could not be done",
                cancel,
            )
            .await;
        match reply {
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
                let vote = JudgeVote {
                    score: Some(grade.score),
                    reasoning: Some(grade.reasoning),
                    problem: None,
                    cached: false,
                };
                (vote, usage)
            }
            Err(why) => (failed(why.to_string()), usage),
        }
    }
}

/// Why a grading (or claims) call gave nothing to judge by; its message is the vote's
/// `problem`.
#[derive(Debug, thiserror::Error)]
pub enum NotGraded {
    /// The run was interrupted before the call.
    #[error("not graded: the run was interrupted")]
    Interrupted,
    /// The call failed (`what` says which call).
    #[error("{what}: {source}{}", if *.missing { " (or pass --no-grade to skip reviews)" } else { "" })]
    Call {
        /// `the grading could not be done`, `the claims could not be read`.
        what: &'static str,
        /// Why the agent's call failed.
        source: crate::agent::AgentError,
        /// The grading agent is not installed.
        missing: bool,
    },
    /// No reply could be read, after every attempt.
    #[error("the judge's reply could not be parsed after {attempts} attempts: {}", .last.as_ref().map_or_else(|| "no reply".to_owned(), ToString::to_string))]
    Unreadable {
        /// Calls made.
        attempts: u32,
        /// Why the last reply could not be read.
        last: Option<parse::ParseError>,
    },
}

/// One grading call of a review graded by several votes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JudgeVote {
    /// The vote's score, 1–10; absent when it could not grade.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<u8>,
    /// The judge's reasoning for this vote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// Why this vote could not grade.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// Whether the vote came from the grade cache.
    #[serde(default)]
    pub cached: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::{AgentError, AgentInfo, ExecuteRequest, Execution, GradeReply};
    use std::sync::Mutex;

    /// A grader that replays canned replies (unit tests only; the end-to-end tests grade
    /// with the real `claude` against the scripted model).
    struct Canned {
        kind: AgentKind,
        replies: Mutex<Vec<Result<String, String>>>,
        calls: Mutex<u32>,
    }

    #[async_trait::async_trait]
    impl Agent for Canned {
        fn kind(&self) -> AgentKind {
            self.kind
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
        judge_as(AgentKind::Claude, replies, cache)
    }

    /// A judge whose one grader is a [`Canned`] `kind` agent.
    fn judge_as(
        kind: AgentKind,
        replies: Vec<Result<&str, &str>>,
        cache: Option<Cache>,
    ) -> (Judge, Arc<Canned>) {
        let canned = Arc::new(Canned {
            kind,
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
            votes: None,
            gate: None,
            standing: None,
            include_dialog: false,
        }
    }

    async fn grade(j: &Judge, threshold: u8, answer: &str) -> ReviewVerdict {
        j.review(
            &review(threshold),
            (AgentKind::Claude, None),
            "task",
            (Some(answer), None),
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

    #[tokio::test]
    async fn a_review_of_the_dialog_without_one_is_an_error_not_a_grade() {
        let (j, canned) = judge(vec![Ok(r#"{"score": 9, "reasoning": "ok"}"#)], None);
        let review = ReviewAssertion {
            include_dialog: true,
            ..review(7)
        };
        let v = j
            .review(
                &review,
                (AgentKind::Claude, None),
                "task",
                (Some("a"), None),
                &CancellationToken::new(),
            )
            .await;
        assert_eq!(v.status, AssertionStatus::Error);
        assert!(v.problem.unwrap().contains("include_dialog"));
        assert_eq!(*canned.calls.lock().unwrap(), 0, "no grading call");
    }

    async fn grade_votes(j: &Judge, votes: u32, threshold: u8) -> ReviewVerdict {
        let review = ReviewAssertion {
            votes: Some(votes),
            ..review(threshold)
        };
        j.review(
            &review,
            (AgentKind::Claude, None),
            "task",
            (Some("a"), None),
            &CancellationToken::new(),
        )
        .await
    }

    fn scored(score: u8) -> String {
        format!(r#"{{"score": {score}, "reasoning": "gave {score}"}}"#)
    }

    #[tokio::test]
    async fn votes_take_the_median_and_keep_every_vote() {
        let replies = [scored(9), scored(5), scored(8)];
        let (j, canned) = judge(replies.iter().map(|r| Ok(r.as_str())).collect(), None);
        let v = grade_votes(&j, 3, 7).await;
        assert_eq!(
            *canned.calls.lock().unwrap(),
            3,
            "one grading call per vote"
        );
        assert_eq!((v.status, v.score), (AssertionStatus::Pass, Some(8)));
        assert_eq!(
            v.reasoning.as_deref(),
            Some("gave 8"),
            "the median vote's reasoning"
        );
        let scores: Vec<Option<u8>> = v.votes.iter().map(|vote| vote.score).collect();
        assert_eq!(scores, [Some(9), Some(5), Some(8)]);
        assert_eq!(
            v.usage.unwrap().output_tokens,
            15,
            "every vote's usage counts"
        );
    }

    #[tokio::test]
    async fn an_even_number_of_votes_rounds_the_middle_down() {
        let replies = [scored(9), scored(8), scored(3), scored(2)];
        let (j, _) = judge(replies.iter().map(|r| Ok(r.as_str())).collect(), None);
        let v = grade_votes(&j, 4, 6).await;
        // (3 + 8) / 2 = 5.5 → 5, below 6: a pass needs the judges' own numbers.
        assert_eq!((v.status, v.score), (AssertionStatus::Fail, Some(5)));
    }

    #[tokio::test]
    async fn votes_that_error_do_not_count_and_a_minority_is_an_error() {
        let nine = scored(9);
        let (j, _) = judge(
            vec![Err("api down"), Ok(nine.as_str()), Ok(nine.as_str())],
            None,
        );
        let v = grade_votes(&j, 3, 7).await;
        assert_eq!(
            (v.status, v.score),
            (AssertionStatus::Pass, Some(9)),
            "2 of 3 is a majority"
        );
        assert_eq!(
            v.votes[0]
                .problem
                .as_deref()
                .map(|p| p.contains("api down")),
            Some(true)
        );

        let (j, _) = judge(
            vec![Err("api down"), Err("api down"), Ok(nine.as_str())],
            None,
        );
        let v = grade_votes(&j, 3, 7).await;
        assert_eq!(
            v.status,
            AssertionStatus::Error,
            "a 9 from 1 of 3 votes is not a pass"
        );
        assert!(
            v.problem
                .unwrap()
                .starts_with("only 1 of 3 judge votes graded")
        );
        assert_eq!(v.votes.len(), 3);

        let (j, _) = judge(vec![Err("api down"), Ok(nine.as_str())], None);
        let v = grade_votes(&j, 2, 7).await;
        assert_eq!(v.status, AssertionStatus::Error, "half is not a majority");
    }

    #[tokio::test]
    async fn each_vote_is_cached_on_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let cache = || Some(Cache::new(dir.path().to_owned()));
        let replies = [scored(9), scored(5), scored(8)];
        let (j, canned) = judge(replies.iter().map(|r| Ok(r.as_str())).collect(), cache());
        let first = grade_votes(&j, 3, 7).await;
        assert_eq!(*canned.calls.lock().unwrap(), 3);
        let (j, canned) = judge(Vec::new(), cache());
        let again = grade_votes(&j, 3, 7).await;
        assert_eq!(
            *canned.calls.lock().unwrap(),
            0,
            "every vote came from the cache"
        );
        assert!(again.cached && again.votes.iter().all(|v| v.cached));
        let scores = |v: &ReviewVerdict| v.votes.iter().map(|v| v.score).collect::<Vec<_>>();
        assert_eq!(
            scores(&again),
            scores(&first),
            "each vote keeps its own grade"
        );
        let (j, canned) = judge(Vec::new(), cache());
        assert_eq!(
            grade(&j, 7, "a").await.score,
            Some(9),
            "a single vote shares vote 1's key"
        );
        assert_eq!(*canned.calls.lock().unwrap(), 0);
    }

    async fn read_claims(j: &Judge, answer: Option<&str>) -> ReviewVerdict {
        j.claims(
            (AgentKind::Claude, None),
            "task",
            answer,
            &CancellationToken::new(),
        )
        .await
    }

    #[tokio::test]
    async fn claims_are_read_cached_and_an_unusable_reply_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let cache = || Some(Cache::new(dir.path().to_owned()));
        let reply =
            r#"Sure: {"claims": [{"kind": "tests", "text": "tests pass", "outcome": "success"}]}"#;
        let (j, canned) = judge(vec![Ok(reply)], cache());
        let v = read_claims(&j, Some("I ran the tests; they pass.")).await;
        assert_eq!(v.status, AssertionStatus::Pass);
        let claims = v.claims.unwrap();
        assert_eq!(claims[0].kind, claims::ClaimKind::Tests);
        assert_eq!(v.usage.unwrap().output_tokens, 5);
        let (j, _) = judge(Vec::new(), cache());
        let again = read_claims(&j, Some("I ran the tests; they pass.")).await;
        assert!(again.cached, "the second read comes from the cache");
        assert_eq!(again.claims.unwrap(), claims);
        assert_eq!(*canned.calls.lock().unwrap(), 1);

        let bad = r#"{"claims": [{"kind": "vibes", "text": "x"}]}"#;
        let (j, canned) = judge(vec![Ok(bad), Ok(bad), Ok(bad)], cache());
        let v = read_claims(&j, Some("another answer")).await;
        assert_eq!(v.status, AssertionStatus::Error);
        assert!(v.claims.is_none());
        let problem = v.problem.unwrap();
        assert!(
            problem.contains("after 3 attempts") && problem.contains("unknown kind \"vibes\""),
            "{problem}"
        );
        assert_eq!(
            *canned.calls.lock().unwrap(),
            3,
            "retried, and never cached"
        );
        let (j, _) = judge(vec![Err("the grader exited with code 1")], None);
        let problem = read_claims(&j, Some("a")).await.problem.unwrap();
        assert!(
            problem.starts_with("the claims could not be read: "),
            "{problem}"
        );
    }

    #[tokio::test]
    async fn no_answer_has_no_claims_and_no_grade_skips() {
        let (mut j, canned) = judge(Vec::new(), None);
        let v = read_claims(&j, Some("  ")).await;
        assert_eq!(v.claims, Some(Vec::new()));
        assert_eq!(
            *canned.calls.lock().unwrap(),
            0,
            "no call for an empty answer"
        );
        j.config.enabled = false;
        assert_eq!(
            read_claims(&j, Some("I did it")).await.status,
            AssertionStatus::Skip
        );
    }

    #[tokio::test]
    async fn prior_claims_answer_without_a_call_and_are_marked_cached() {
        let dir = tempfile::tempdir().unwrap();
        let reply = r#"{"claims": [{"kind": "command", "text": "ran make", "command": "make"}]}"#;
        let (j, _) = judge(vec![Ok(reply)], None);
        let first = read_claims(&j, Some("I ran make.")).await;
        assert!(!first.cached);
        let [key] = first.keys.as_slice() else {
            panic!("an extraction has one key: {:?}", first.keys)
        };
        let prior = BTreeMap::from([(key.clone(), first.claims.clone().unwrap())]);

        // An empty local cache: the baseline's claims answer, before the cache is asked.
        let (j, canned) = judge(Vec::new(), Some(Cache::new(dir.path().to_owned())));
        let j = j.with_prior_claims(prior);
        let again = read_claims(&j, Some("I ran make.")).await;
        assert_eq!(*canned.calls.lock().unwrap(), 0, "no extraction call");
        assert_eq!(again.status, AssertionStatus::Pass);
        assert!(again.cached, "marked cached");
        assert_eq!(
            (&again.claims, &again.usage, &again.keys),
            (&first.claims, &None, &first.keys),
            "the same claims under the same key, and nothing spent"
        );
    }

    #[tokio::test]
    async fn a_changed_task_answer_model_or_agent_reads_the_claims_again() {
        let reply = r#"{"claims": [{"kind": "tests", "text": "tests pass"}]}"#;
        let (j, _) = judge(vec![Ok(reply)], None);
        let baseline = read_claims(&j, Some("tests pass")).await;
        let prior = BTreeMap::from([(baseline.keys[0].clone(), baseline.claims.unwrap())]);
        let cancel = CancellationToken::new();

        let none = r#"{"claims": []}"#;
        let (j, canned) = judge(vec![Ok(none); 3], None);
        let j = j.with_prior_claims(prior.clone());
        for (model, task, answer) in [
            (None, "task", "all tests pass"),
            (None, "another task", "tests pass"),
            (Some("opus"), "task", "tests pass"),
        ] {
            let v = j
                .claims((AgentKind::Claude, model), task, Some(answer), &cancel)
                .await;
            assert!(!v.cached, "{model:?} {task} {answer}: read again");
            assert_eq!(v.claims, Some(Vec::new()), "the new reply, not the prior's");
            assert_ne!(v.keys, baseline.keys);
        }
        assert_eq!(*canned.calls.lock().unwrap(), 3, "one call per change");

        let (j, canned) = judge_as(AgentKind::Codex, vec![Ok(none)], None);
        let j = j.with_prior_claims(prior);
        let v = j
            .claims(
                (AgentKind::Codex, None),
                "task",
                Some("tests pass"),
                &cancel,
            )
            .await;
        assert!(!v.cached, "another grading agent reads again");
        assert_eq!(*canned.calls.lock().unwrap(), 1);
    }
}
