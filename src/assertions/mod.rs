//! Assertions: verdicts on what an agent did.
//!
//! Each assertion family is a pure function of (assertion, evidence) → [`AssertionResult`].
//! Every result says what it saw — the matching calls, the counts — so that a failure can
//! be understood without opening the transcript.
//!
//! Assertions see every tool call, subagents' included, unless they say `scope: main`:
//! a guardrail must not be evaded by delegating to a subagent.
//!
//! **Transcript warnings and verdicts.** A warning that loses nothing (invalid UTF-8
//! replaced, a line without `type`) does not change verdicts. A transcript known to have
//! lost tool calls ([`Transcript::lost_tool_calls`]: a line that could not be read, a line
//! of another format, an orphan tool result) can not prove an absence: an assertion whose
//! pass rests on a call (or usage) *not* being there — `called: false`, `max_calls`,
//! `call_count`, positional checks, `not_ran`, a `run_count` maximum, the last command's
//! `exit_code` / output checks, budgets — is `error` instead of `pass`, saying why.
//! Failures stand (a call that was seen was seen), and so do passes that rest on calls that
//! were seen (`called: true`, `called_after` / `called_before`, `ran`, `command_succeeded`,
//! `wrote`).

mod budget;
mod claims;
mod commands;
mod conversation;
mod json_report;
pub mod judge;
pub mod mcp;
mod skill;
mod tool;
mod workspace;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

pub use claims::TEST_RUNNERS;
pub use skill::{RouteDecision, as_expected as routed_as_expected, chosen as routing_choice};
pub use workspace::VerifyRun;

use crate::assertions::judge::ReviewVerdict;
use crate::spec::{Assertion, AssertionKind, Scope, TestSpec};
use crate::transcript::{ToolCall, Transcript};
use crate::workspace::FileChange;

/// An assertion family's answer: (status, description, detail).
pub(crate) type Verdict = (AssertionStatus, String, Option<String>);

/// What assertions are checked against.
#[derive(Debug, Clone, Copy)]
pub struct Evidence<'a> {
    /// The agent's transcript.
    pub transcript: &'a Transcript,
    /// The workspace after the run (`aptitude run`); `None` for `aptitude analyze`.
    pub workspace: Option<WorkspaceEvidence<'a>>,
    /// What each `verify` command did, by the assertion's index in the test.
    pub verify: &'a BTreeMap<usize, VerifyRun>,
    /// How each `stdout` review was graded, and the claims read for each
    /// `claims: verified`, by the assertion's index in the test.
    pub reviews: &'a BTreeMap<usize, ReviewVerdict>,
    /// The tool calls the test's `mock:` MCP servers received (`aptitude run`); `None`
    /// for a transcript checked alone.
    pub mcp_calls: Option<mcp::MockCalls<'a>>,
    /// The test's `user:`, for the conversation assertions.
    pub user: Option<&'a crate::spec::user::User>,
    /// The run's conversation (the questions asked, the replies given); `None` when the
    /// run kept none, and conversation assertions are then `error`.
    pub dialog: Option<&'a crate::transcript::dialog::Dialog>,
}

/// The workspace copy after the agent ran.
#[derive(Debug, Clone, Copy)]
pub struct WorkspaceEvidence<'a> {
    /// Its root directory.
    pub root: &'a Path,
    /// The files created, modified or deleted during the run.
    pub changes: &'a [FileChange],
}

impl<'a> Evidence<'a> {
    /// Evidence from a transcript alone (`aptitude analyze`).
    pub fn transcript_only(transcript: &'a Transcript) -> Self {
        static NO_RUNS: BTreeMap<usize, VerifyRun> = BTreeMap::new();
        static NO_REVIEWS: BTreeMap<usize, ReviewVerdict> = BTreeMap::new();
        Evidence {
            transcript,
            workspace: None,
            verify: &NO_RUNS,
            reviews: &NO_REVIEWS,
            mcp_calls: None,
            user: None,
            dialog: None,
        }
    }
}

/// Evaluates every assertion of a test, in file order, then the `expect:` of its `mock:`
/// MCP servers ([`mcp::expectations`]).
///
/// An assertion whose `variants:` do not name this test's variant is `skipped`, saying
/// which variants it applies to.
pub fn evaluate(spec: &TestSpec, evidence: &Evidence<'_>) -> Vec<AssertionResult> {
    let mut results = evaluate_written(spec, evidence);
    results.extend(mcp::expectations(&spec.mcp_mocks, evidence.mcp_calls));
    results
}

/// The assertions written under `assertions:`.
fn evaluate_written(spec: &TestSpec, evidence: &Evidence<'_>) -> Vec<AssertionResult> {
    spec.assertions
        .iter()
        .enumerate()
        .map(|(i, a)| match &a.variants {
            Some(names) if !applies_to(a, spec.variant_name()) => AssertionResult::new(
                a.kind.key(),
                format!("{} (variants: {})", a.kind.key(), names.join(", ")),
                AssertionStatus::Skip,
                a.line,
                Some(format!(
                    "applies only to the variants {}, not `{}`",
                    names.join(", "),
                    spec.variant_name()
                )),
            ),
            _ => evaluate_one(i, a, evidence),
        })
        .collect()
}

/// Whether `assertion` applies to the variant named `variant`.
pub fn applies_to(assertion: &crate::spec::Assertion, variant: &str) -> bool {
    assertion
        .variants
        .as_ref()
        .is_none_or(|names| names.iter().any(|n| n == variant))
}

/// Evaluates one assertion; `index` is its position in the test (for `verify` runs).
pub fn evaluate_one(
    index: usize,
    assertion: &Assertion,
    evidence: &Evidence<'_>,
) -> AssertionResult {
    let calls = &evidence.transcript.tool_calls;
    let ws = evidence.workspace.as_ref();
    let (status, description, detail) = match &assertion.kind {
        AssertionKind::Tool(tool) => {
            match tool::unknown_mcp_params(tool, evidence.transcript.mcp_params.as_ref()) {
                Some(why) => {
                    let (_, description, _) = tool::evaluate(tool, calls);
                    (AssertionStatus::Error, description, Some(why))
                }
                None => tool::evaluate(tool, calls),
            }
        }
        AssertionKind::Skill(skill) => skill::evaluate(skill, evidence.transcript),
        AssertionKind::ExitCode { code, scope } => commands::exit_code(calls, *scope, *code),
        AssertionKind::OutputContains { text, scope } => {
            commands::output(calls, *scope, text, false)
        }
        AssertionKind::OutputEquals { text, scope } => commands::output(calls, *scope, text, true),
        AssertionKind::ErrorContains { text, scope } => {
            commands::error_contains(calls, *scope, text)
        }
        AssertionKind::Ran { pattern, scope } => commands::ran(calls, *scope, pattern, true),
        AssertionKind::NotRan { pattern, scope } => {
            commands::not_ran(calls, &evidence.transcript.unclaimed_execs, *scope, pattern)
        }
        AssertionKind::RunCount {
            pattern,
            min,
            max,
            scope,
        } => commands::run_count(calls, *scope, pattern, *min, *max),
        AssertionKind::CommandSucceeded { pattern, scope } => {
            commands::command_succeeded(calls, *scope, pattern)
        }
        AssertionKind::FileExists { path } => workspace::file_exists(ws, path, true),
        AssertionKind::FileAbsent { path } => workspace::file_exists(ws, path, false),
        AssertionKind::FileContains { path, check } => workspace::file_contains(ws, path, check),
        AssertionKind::JsonFile {
            path,
            required,
            report,
        } => workspace::json_file(ws, calls, path, required, report),
        AssertionKind::Wrote { paths } => workspace::wrote(ws, calls, paths),
        AssertionKind::Verify(v) => workspace::verify(v, evidence.verify.get(&index)),
        AssertionKind::Budget(b) => budget::evaluate(b, evidence.transcript),
        AssertionKind::Conversation(c) => {
            conversation::evaluate(c, evidence.user, evidence.dialog, calls)
        }
        AssertionKind::Review(r) => return review(r, evidence.reviews.get(&index), assertion.line),
        AssertionKind::Routing(case) => {
            return skill::route(case, evidence.transcript, assertion.line);
        }
        AssertionKind::Claims => {
            return claims::evaluate(
                evidence.reviews.get(&index),
                evidence.transcript,
                ws,
                assertion.line,
            );
        }
    };
    let (status, detail) = match evidence.transcript.lost_tool_calls() {
        Some(why) if status == AssertionStatus::Pass && rests_on_absence(&assertion.kind) => (
            AssertionStatus::Error,
            Some(match detail {
                Some(d) => format!(
                    "{why}, so this check, which passes only when calls are absent, can not pass\n{d}"
                ),
                None => format!(
                    "{why}, so this check, which passes only when calls are absent, can not pass"
                ),
            }),
        ),
        _ => (status, detail),
    };
    let (status, detail) = match unrecordable(&assertion.kind, evidence.transcript) {
        Some(why) => (AssertionStatus::Error, Some(why)),
        None => (status, detail),
    };
    AssertionResult::new(
        assertion.kind.key(),
        description,
        status,
        assertion.line,
        detail,
    )
}

/// Why an assertion can get no verdict from this transcript, when it is about tools the
/// format can not record ([`Transcript::records_only`]: Aider records no shell commands).
fn unrecordable(kind: &AssertionKind, transcript: &Transcript) -> Option<String> {
    let only = transcript.records_only.as_ref()?;
    let about_unrecorded = match kind {
        AssertionKind::Tool(t) => !only.tools.iter().any(|tool| t.tool.matches(tool)),
        AssertionKind::ExitCode { .. }
        | AssertionKind::OutputContains { .. }
        | AssertionKind::OutputEquals { .. }
        | AssertionKind::ErrorContains { .. }
        | AssertionKind::Ran { .. }
        | AssertionKind::NotRan { .. }
        | AssertionKind::RunCount { .. }
        | AssertionKind::CommandSucceeded { .. } => !only.records(crate::spec::tools::SHELL_TOOL),
        AssertionKind::JsonFile { report, .. } if report.commands_ran.is_some() => {
            !only.records(crate::spec::tools::SHELL_TOOL)
        }
        _ => false,
    };
    about_unrecorded.then(|| format!("{}: this check can get no verdict", only.reason))
}

/// Whether a pass of this assertion rests on calls (or usage) *not* being in the
/// transcript, so that a lost call could turn it into a failure (see the module docs).
fn rests_on_absence(kind: &AssertionKind) -> bool {
    match kind {
        AssertionKind::Tool(t) => tool_rests_on_absence(t),
        AssertionKind::Skill(s) => tool_rests_on_absence(&s.tool),
        AssertionKind::NotRan { .. }
        | AssertionKind::ExitCode { .. }
        | AssertionKind::OutputContains { .. }
        | AssertionKind::OutputEquals { .. }
        | AssertionKind::ErrorContains { .. }
        | AssertionKind::Budget(_) => true,
        AssertionKind::RunCount { max, .. } => max.is_some(),
        _ => false,
    }
}

/// Whether a tool (or skill) assertion's pass rests on calls *not* being there.
/// (`called_after`/`called_before` do not: a call after the first B stays after it
/// whatever calls were lost.)
fn tool_rests_on_absence(t: &crate::spec::ToolAssertion) -> bool {
    !t.called || t.max_calls.is_some() || t.call_count.is_some() || !t.positional.is_empty()
}

/// A review's result from its verdict (seed 000's display:
/// `stdout review: "…" (score: 9/10, threshold: 7)`).
fn review(
    r: &crate::spec::ReviewAssertion,
    verdict: Option<&ReviewVerdict>,
    line: u32,
) -> AssertionResult {
    let Some(v) = verdict else {
        return AssertionResult {
            threshold: Some(r.threshold),
            ..AssertionResult::new(
                "stdout",
                format!("stdout review: {:?} (threshold: {})", r.review, r.threshold),
                AssertionStatus::Skip,
                line,
                Some("not graded".into()),
            )
        };
    };
    let scores: Vec<u8> = v.votes.iter().filter_map(|vote| vote.score).collect();
    let spread = match (scores.iter().min(), scores.iter().max()) {
        (Some(lo), Some(hi)) => format!(
            ", median of {} of {} votes, spread {lo}–{hi}",
            scores.len(),
            v.votes.len()
        ),
        _ => String::new(),
    };
    let description = match v.score {
        Some(score) => format!(
            "stdout review: {:?} (score: {score}/10{spread}, threshold: {})",
            r.review, r.threshold
        ),
        None => format!("stdout review: {:?} (threshold: {})", r.review, r.threshold),
    };
    // Every report renders the description, so the judge's standing shows in each.
    let description = match &r.standing {
        Some(standing) => format!("{description} {}", standing_mark(standing)),
        None => description,
    };
    let detail = match (&v.problem, &v.reasoning) {
        (Some(problem), _) => Some(problem.clone()),
        (None, Some(reasoning)) if !reasoning.is_empty() => Some(reasoning.clone()),
        (None, _) => Some("(the judge gave no reasoning)".into()),
    };
    let detail = match r.standing.as_ref().and_then(|s| s.why.as_ref()) {
        Some(why) => detail.map(|d| format!("{d}\njudge {why}")),
        None => detail,
    };
    AssertionResult {
        score: v.score,
        threshold: Some(r.threshold),
        reasoning: v.reasoning.clone(),
        cached: v.score.map(|_| v.cached),
        grading_usage: v.usage.clone(),
        votes: v.votes.clone(),
        grade_keys: v.keys.clone(),
        judge: r.standing.clone(),
        ..AssertionResult::new("stdout", description, v.status, line, detail)
    }
}

/// `[judge uncertified]`, `[judge certified]`, `[judge decertified, advisory]`: how a
/// review's standing reads after its description.
pub fn standing_mark(standing: &crate::spec::judge_gate::JudgeStanding) -> String {
    format!(
        "[judge {}{}]",
        standing.certificate.name(),
        if standing.advisory { ", advisory" } else { "" }
    )
}

/// `at least 1 time`, `at most 3 times`, `1–3 times`.
pub(crate) fn bounds(min: Option<u32>, max: Option<u32>) -> String {
    match (min, max) {
        (Some(lo), Some(hi)) if lo == hi => format!("exactly {}", times(lo)),
        (Some(lo), Some(hi)) => format!("{lo}–{hi} times"),
        (Some(lo), None) => format!("at least {}", times(lo)),
        (None, Some(hi)) => format!("at most {}", times(hi)),
        (None, None) => "any number of times".into(),
    }
}

/// `1 time`, `3 times`.
pub(crate) fn times(n: impl Into<u64>) -> String {
    let n = n.into();
    if n == 1 {
        "1 time".into()
    } else {
        format!("{n} times")
    }
}

/// The calls an assertion with this scope sees, with their 1-based position in the whole
/// transcript (the numbering `aptitude transcript` shows).
pub(crate) fn in_scope(calls: &[ToolCall], scope: Scope) -> Vec<(usize, &ToolCall)> {
    calls
        .iter()
        .enumerate()
        .filter(|(_, c)| scope == Scope::All || c.is_main())
        .map(|(i, c)| (i + 1, c))
        .collect()
}

pub use crate::shared::text::{main_field, summarize_input, truncate, truncate_lines};
pub use crate::transcript::display::describe_call;

/// An assertion's verdict (seed 003's statuses).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AssertionStatus {
    /// The check held.
    Pass,
    /// The check did not hold.
    Fail,
    /// The check could not be made (a judge that could not grade, a command that could
    /// not run).
    Error,
    /// The check does not apply to what was recorded (e.g. the transcript format records
    /// no exit codes).
    Invalid,
    /// The check was not made, with the reason in `detail`; never counts as a pass.
    Skip,
}

impl AssertionStatus {
    /// `Pass` when the check held, else `Fail`.
    pub fn pass_if(held: bool) -> Self {
        if held {
            AssertionStatus::Pass
        } else {
            AssertionStatus::Fail
        }
    }
}

/// One assertion's result.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AssertionResult {
    /// The assertion kind: its YAML key (`tool`, `stdout`, `exit_code`, …).
    pub kind: String,
    /// What was asserted, in words.
    pub description: String,
    /// The verdict.
    pub status: AssertionStatus,
    /// 1-based line of the assertion in the test file.
    pub line: u32,
    /// What was seen: the evidence for a pass, what was seen instead for a failure, the
    /// reason for an error or a skip.
    pub detail: Option<String>,
    /// LLM-judged reviews: the judge's score, 1–10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<u8>,
    /// LLM-judged reviews: the passing score, 1–10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<u8>,
    /// LLM-judged reviews: the judge's reasoning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// LLM-judged reviews (and `claims`): whether the grade (the extraction) came from the
    /// cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached: Option<bool>,
    /// LLM-judged reviews (and `claims`): tokens, cost and time of the grading (extraction)
    /// calls made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grading_usage: Option<crate::transcript::Usage>,
    /// LLM-judged reviews graded by several votes: each vote (`score` is their median).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub votes: Vec<judge::JudgeVote>,
    /// LLM-judged reviews: the grade cache key ([`judge::cache::Cache::key`]) of
    /// each vote, in vote order, so that a run reusing these results (`run --reuse`) takes
    /// an unchanged review's grade from them without a call. `claims`: the one key of the
    /// extraction.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub grade_keys: Vec<String>,
    /// `claims: verified`: the claims the judge read from the answer (an empty list when
    /// it claims nothing concrete), so that a run reusing these results takes an unchanged
    /// extraction from them without a call. Absent when none were read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claims: Option<Vec<judge::claims::Claim>>,
    /// `routing` (a routing suite's prompt): which skill the run triggered, and the call
    /// that showed it; absent when the run could not be decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routing: Option<RouteDecision>,
    /// LLM-judged reviews: the judge's gate and certificate status (issue #40); an
    /// `advisory` one is shown but does not count towards the test's status. Absent
    /// where no standing was looked up (`analyze`, the fluent API).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<crate::spec::judge_gate::JudgeStanding>,
}

impl AssertionResult {
    /// Whether this result is shown only: an advisory judge's review.
    pub fn advisory(&self) -> bool {
        self.judge.as_ref().is_some_and(|j| j.advisory)
    }
}

impl AssertionResult {
    /// A result without judge fields.
    pub fn new(
        kind: &str,
        description: String,
        status: AssertionStatus,
        line: u32,
        detail: Option<String>,
    ) -> Self {
        AssertionResult {
            kind: kind.to_owned(),
            description,
            status,
            line,
            detail,
            score: None,
            threshold: None,
            reasoning: None,
            cached: None,
            grading_usage: None,
            votes: Vec::new(),
            grade_keys: Vec::new(),
            claims: None,
            routing: None,
            judge: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::load_str;

    fn transcript() -> Transcript {
        Transcript::completed(Vec::new(), "43")
    }

    #[test]
    fn without_a_workspace_file_checks_are_skipped_never_passed() {
        let spec = load_str(
            std::path::Path::new("t.aptitude.yaml"),
            "name: t\nprompt: p\nassertions:\n  - stdout: {review: \"says 43\"}\n  - file_exists: a\n  - file_absent: a\n  - file_contains: {path: a, text: b}\n  - json_file: {path: a}\n  - verify: {run: \"true\"}\n  - cost_usd: {max: 1}\n",
        )
        .unwrap();
        let t = transcript();
        let results = evaluate(&spec, &Evidence::transcript_only(&t));
        assert_eq!(results.len(), 7);
        for r in &results {
            assert_eq!(r.status, AssertionStatus::Skip, "{}", r.kind);
            assert!(r.detail.is_some(), "a skip says why: {}", r.kind);
        }
    }

    #[test]
    fn a_reviews_judge_standing_is_marked_in_its_description_with_why() {
        use crate::spec::judge_gate::{CertificateStatus, JudgeGate, JudgeStanding};
        let r = crate::spec::ReviewAssertion {
            review: "says 43".into(),
            threshold: 7,
            model: None,
            agent: None,
            votes: None,
            gate: Some(JudgeGate::Certified),
            standing: Some(JudgeStanding::new(
                JudgeGate::Certified,
                CertificateStatus::Decertified,
                Some("changed since certified: rubric text".into()),
            )),
            include_dialog: false,
        };
        let verdict = ReviewVerdict::skipped("x");
        let verdict = ReviewVerdict {
            status: AssertionStatus::Fail,
            score: Some(3),
            reasoning: Some("wrong number".into()),
            problem: None,
            ..verdict
        };
        let result = review(&r, Some(&verdict), 4);
        assert!(result.advisory());
        assert_eq!(
            result.description,
            "stdout review: \"says 43\" (score: 3/10, threshold: 7) [judge decertified, advisory]"
        );
        assert_eq!(
            result.detail.as_deref(),
            Some("wrong number\njudge changed since certified: rubric text")
        );
        let always = crate::spec::ReviewAssertion {
            standing: Some(JudgeStanding::new(
                JudgeGate::Always,
                CertificateStatus::Uncertified,
                None,
            )),
            ..r
        };
        let result = review(&always, Some(&verdict), 4);
        assert!(!result.advisory());
        assert!(result.description.ends_with("[judge uncertified]"));
    }
}
