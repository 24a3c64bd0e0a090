//! Repeated runs: the k-of-n verdict of a test run `runs: N` times, which runs and which
//! assertions disagree (flaky), and the figures reports show.
//!
//! A real model does not do the same thing twice, so one run makes a verdict a coin toss.
//! A test with `runs: N` gets N isolated runs; `min_pass: k` (default N) decides it:
//! - `passed` when at least k runs passed;
//! - `error` when the runs that did not error cannot reach k (an errored run is neither a
//!   pass nor a fail: it is left out, never counted toward k);
//! - `skipped` when the runs that were neither errored nor skipped cannot reach k (runs not
//!   started because of the cost ceiling, reason `budget`, are left out the same way; when
//!   both errored and skipped runs are left out, the test is `error`);
//! - `failed` otherwise: enough runs were judged, and too few of them passed.
//!
//! Whatever its status, a test whose runs disagree (some passed, some failed) is **flaky**,
//! and so is each assertion that held in some runs and not in others: that assertion is the
//! one to look at. Figures ([`crate::verdict::stats`]): the pass rate over the judged runs (passed and
//! failed, errors and skips left out) with its Wilson 95% interval, and for each k from 1 to
//! the judged runs the unbiased pass@k (`1 − C(n−c, k)/C(n, k)`, Chen et al. 2021) and
//! pass^k (`C(c, k)/C(n, k)`, Yao et al. 2024, τ-bench) estimates.

use super::test_result::{
    AssertionResult, AssertionStatus, AssertionTally, PassK, RepeatStats, SkipReason, SplitRuns,
    TestResult, TestStatus,
};
use crate::transcript::Usage;

/// The k-of-n status from run counts (see the module docs). `runs` is N, `min_pass` k.
pub fn decide(runs: u32, min_pass: u32, passed: u32, errors: u32, skipped: u32) -> TestStatus {
    if passed >= min_pass {
        TestStatus::Passed
    } else if runs.saturating_sub(errors + skipped) < min_pass {
        // The runs left out decide it; an error says more about what to fix than a skip.
        if errors > 0 {
            TestStatus::Error
        } else {
            TestStatus::Skipped
        }
    } else {
        TestStatus::Failed
    }
}

/// One test's result from its runs (in run order, at least one): the k-of-n status, the
/// usage and duration summed, each assertion as in the first run where it did not hold
/// (else the first run's), every run kept, and the figures.
pub fn aggregate(runs: Vec<TestResult>, min_pass: u32) -> TestResult {
    let of = runs.len() as u32;
    aggregate_split(runs, (1..=of).collect(), of, min_pass)
}

/// The least witnessed of a test's runs speaks for the test; each run keeps its own.
fn least_witnessed(runs: &[TestResult]) -> Option<crate::gateway::witness::Witness> {
    runs.iter()
        .filter_map(|r| r.witness.as_ref())
        .max_by_key(|w| w.status.rank())
        .cloned()
}

/// The exec record a repeated test shows: each run keeps its own; the test shows the
/// worst, one with findings, else one absent.
fn worst_execs(runs: &[TestResult]) -> Option<crate::sandbox::exec::check::ExecReport> {
    runs.iter()
        .filter_map(|r| r.execs.as_ref())
        .max_by_key(|e| {
            (
                !e.findings.is_empty(),
                e.status == crate::sandbox::exec::check::ExecStatus::Absent,
            )
        })
        .cloned()
}

/// One test's result from some of its runs, as [`aggregate`]: `runs` are the runs numbered
/// `numbers` (1-based, in the same order) of the test's `of` runs. When they are not all of
/// them (`run --shard` split the runs), the result says which it holds (`repeat.split`) and
/// is decided only when these runs decide it whatever the others do: `passed` when they
/// alone reach `min_pass`; [`decide`] over all `of` runs when even every other run passing
/// could not reach it; else `skipped`, reason `shard` — `aptitude merge` of every shard's
/// results decides it.
pub fn aggregate_split(
    runs: Vec<TestResult>,
    numbers: Vec<u32>,
    of: u32,
    min_pass: u32,
) -> TestResult {
    let n = runs.len() as u32;
    let count = |s: TestStatus| runs.iter().filter(|r| r.status == s).count() as u32;
    let (passed, failed, errors, skipped) = (
        count(TestStatus::Passed),
        count(TestStatus::Failed),
        count(TestStatus::Error),
        count(TestStatus::Skipped),
    );
    let whole = n >= of;
    // A split test's other runs may pass or not: these decide it only when they pass it
    // already, or when it could not pass even with every other run passing.
    let decided = whole || passed >= min_pass || passed + of.saturating_sub(n) < min_pass;
    let status = if decided {
        decide(of, min_pass, passed, errors, skipped)
    } else {
        TestStatus::Skipped
    };
    let judged = passed + failed;
    let interval = crate::verdict::stats::wilson_interval(passed, judged);
    let estimates = (1..=judged)
        .filter_map(|k| {
            Some(PassK {
                k,
                pass_at_k: crate::verdict::stats::pass_at_k(judged, passed, k)?,
                pass_hat_k: crate::verdict::stats::pass_hat_k(judged, passed, k)?,
            })
        })
        .collect();
    let tallies = tally(&runs);
    let stats = RepeatStats {
        runs: n,
        min_pass,
        passed,
        failed,
        errors,
        skipped,
        flaky: passed > 0 && failed > 0,
        pass_rate: (judged > 0).then(|| f64::from(passed) / f64::from(judged)),
        wilson_low: interval.map(|i| i.low),
        wilson_high: interval.map(|i| i.high),
        estimates,
        assertions: tallies,
        split: (!whole).then(|| SplitRuns {
            numbers: numbers.clone(),
            of,
        }),
    };

    let first = runs.first();
    let mut usage: Option<Usage> = None;
    for u in runs.iter().filter_map(|r| r.usage.as_ref()) {
        usage.get_or_insert_with(Usage::default).add(u);
    }
    let error = match status {
        TestStatus::Error => Some(error_phrase(&runs, &numbers, of, min_pass, errors)),
        _ => None,
    };
    let error_kind = match status {
        TestStatus::Error => runs
            .iter()
            .find(|r| r.status == TestStatus::Error)
            .and_then(|r| r.error_kind),
        _ => None,
    };
    let skip_reason = match status {
        TestStatus::Skipped if !decided => Some(SkipReason::Shard),
        TestStatus::Skipped => runs.iter().find_map(|r| r.skip_reason),
        _ => None,
    };
    TestResult {
        name: first.map(|r| r.name.clone()).unwrap_or_default(),
        file: first.map(|r| r.file.clone()).unwrap_or_default(),
        prompt: first.and_then(|r| r.prompt.clone()),
        status,
        duration_ms: runs.iter().map(|r| r.duration_ms).sum(),
        started_at: runs.iter().filter_map(|r| r.started_at.clone()).min(),
        usage,
        error,
        assertions: routing_line(representative_assertions(&runs, &numbers), &runs, status),
        transcript: None,
        agent: runs.iter().find_map(|r| r.agent.clone()),
        agent_id: first.and_then(|r| r.agent_id),
        agent_version: first.and_then(|r| r.agent_version.clone()),
        variant: first.and_then(|r| r.variant.clone()),
        files: Vec::new(),
        workspace: None,
        recorded: runs.iter().find_map(|r| r.recorded.clone()),
        error_kind,
        skip_reason,
        attempts: Vec::new(),
        repeat: Some(stats),
        fingerprint: runs.iter().find_map(|r| r.fingerprint.clone()),
        sandbox: least_sandboxed(&runs),
        // Reused only when every run was.
        reused: runs
            .iter()
            .all(|r| r.reused.is_some())
            .then(|| first.and_then(|r| r.reused.clone()))
            .flatten(),
        not_reused: runs.iter().find_map(|r| r.not_reused.clone()),
        // Each run's traffic (and cassette) stays with the run.
        model_traffic: None,
        witness: least_witnessed(&runs),
        // Each run keeps its own conversation.
        dialog: None,
        execs: worst_execs(&runs),
        // Each run names the hooks it ran.
        hooks_ran: Vec::new(),
        routing: first.and_then(|r| r.routing.clone()),
        runs,
    }
}

/// The sandbox record of a repeated test: unsandboxed when any run was; each run keeps
/// its own proof.
fn least_sandboxed(runs: &[TestResult]) -> Option<crate::sandbox::Record> {
    runs.iter()
        .find(|r| {
            r.sandbox
                .as_ref()
                .is_some_and(crate::sandbox::Record::is_off)
        })
        .or_else(|| runs.iter().find(|r| r.sandbox.is_some()))
        .and_then(|r| r.sandbox.clone())
}

/// Why a repeated test is `error`: how many of its `of` runs errored, and the first one's
/// error (runs numbered by `numbers`).
fn error_phrase(
    runs: &[TestResult],
    numbers: &[u32],
    of: u32,
    min_pass: u32,
    errors: u32,
) -> String {
    let first = runs
        .iter()
        .zip(numbers)
        .find(|(r, _)| r.status == TestStatus::Error);
    let why = first
        .map(|(r, number)| {
            let e = r
                .error
                .as_deref()
                .unwrap_or("an assertion could not be checked");
            format!(" (run {number}: {e})")
        })
        .unwrap_or_default();
    format!(
        "{errors} of {of} runs errored: the other {} can not reach min_pass {min_pass}{why}",
        of.saturating_sub(errors)
    )
}

/// Each assertion, as in the first run where it did not pass (its detail says which run, by
/// its number in `numbers`), else as in the first run.
fn representative_assertions(runs: &[TestResult], numbers: &[u32]) -> Vec<AssertionResult> {
    let Some(first) = runs.iter().find(|r| !r.assertions.is_empty()) else {
        return Vec::new();
    };
    first
        .assertions
        .iter()
        .enumerate()
        .map(|(i, a)| {
            runs.iter()
                .zip(numbers)
                .find_map(|(r, run)| {
                    r.assertions
                        .get(i)
                        .filter(|a| a.status != AssertionStatus::Pass)
                        .map(|a| {
                            let mut a = a.clone();
                            a.detail = Some(match a.detail.take() {
                                Some(d) => format!("run {run}: {d}"),
                                None => format!("run {run}"),
                            });
                            a
                        })
                })
                .unwrap_or_else(|| a.clone())
        })
        .collect()
}

/// A routing prompt's one assertion says what its runs chose, in how many of them, and
/// holds as the prompt does (more than half its runs chose as expected); other tests'
/// assertions are kept as they are.
fn routing_line(
    mut assertions: Vec<AssertionResult>,
    runs: &[TestResult],
    status: TestStatus,
) -> Vec<AssertionResult> {
    let Some(case) = runs.first().and_then(|r| r.routing.as_ref()) else {
        return assertions;
    };
    for a in assertions.iter_mut().filter(|a| a.kind == "routing") {
        a.description = crate::verdict::choices::prompt_line(case, runs);
        a.status = match status {
            TestStatus::Passed => AssertionStatus::Pass,
            TestStatus::Failed => AssertionStatus::Fail,
            TestStatus::Error => AssertionStatus::Error,
            TestStatus::Skipped => AssertionStatus::Skip,
        };
    }
    assertions
}

/// Per assertion (by position; every run of a test has the same assertions).
fn tally(runs: &[TestResult]) -> Vec<AssertionTally> {
    let Some(first) = runs.iter().find(|r| !r.assertions.is_empty()) else {
        return Vec::new();
    };
    first
        .assertions
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let mut t = AssertionTally {
                line: a.line,
                kind: a.kind.clone(),
                description: a.description.clone(),
                passed: 0,
                failed: 0,
                other: 0,
                flaky: false,
                pass_rate: None,
                wilson_low: None,
                wilson_high: None,
                scores: Vec::new(),
                judge_spread: None,
            };
            for r in runs.iter().filter_map(|r| r.assertions.get(i)) {
                match r.status {
                    AssertionStatus::Pass => t.passed += 1,
                    AssertionStatus::Fail => t.failed += 1,
                    _ => t.other += 1,
                }
                t.scores.extend(r.score);
                let votes: Vec<u8> = r.votes.iter().filter_map(|v| v.score).collect();
                if let (Some(lo), Some(hi)) = (votes.iter().min(), votes.iter().max()) {
                    t.judge_spread = Some(t.judge_spread.unwrap_or(0).max(hi - lo));
                }
            }
            t.flaky = t.passed > 0 && t.failed > 0;
            let judged = t.passed + t.failed;
            if judged > 0 {
                t.pass_rate = Some(f64::from(t.passed) / f64::from(judged));
            }
            if let Some(i) = super::stats::wilson_interval(t.passed, judged) {
                (t.wilson_low, t.wilson_high) = (Some(i.low), Some(i.high));
            }
            t
        })
        .collect()
}

/// A run that did not start because the cost or token ceiling was reached: `skipped`,
/// reason `budget`, built from a result of the test that never ran (`not_run`).
pub fn skipped_for_budget(mut not_run: TestResult) -> TestResult {
    not_run.status = TestStatus::Skipped;
    not_run.error = None;
    not_run.error_kind = None;
    not_run.skip_reason = Some(SkipReason::Budget);
    not_run
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::results::AssertionResult;

    fn run(statuses: &[AssertionStatus], error: bool) -> TestResult {
        let assertions: Vec<AssertionResult> = statuses
            .iter()
            .enumerate()
            .map(|(i, s)| {
                AssertionResult::new(
                    "stdout",
                    format!("a{i}"),
                    *s,
                    i as u32 + 5,
                    Some("seen".into()),
                )
            })
            .collect();
        let error = error.then(|| "timed out".to_owned());
        let status = TestResult::status_of(error.as_deref(), &assertions);
        TestResult {
            duration_ms: 10,
            usage: Some(Usage {
                input_tokens: 100,
                cost_usd: Some(0.01),
                ..Usage::default()
            }),
            error_kind: error
                .as_ref()
                .map(|_| crate::verdict::test_result::ErrorKind::Agent),
            error,
            assertions,
            ..TestResult::new("t", "t.aptitude.yaml", status)
        }
    }

    use AssertionStatus::{Fail, Pass};

    #[test]
    fn k_of_n_decides_the_status() {
        use TestStatus::*;
        // decide(N, k, passed, errors, skipped)
        assert_eq!(decide(5, 5, 5, 0, 0), Passed);
        assert_eq!(decide(5, 5, 4, 0, 0), Failed, "all runs needed by default");
        assert_eq!(decide(5, 3, 3, 0, 0), Passed, "min_pass 3 of 5");
        assert_eq!(decide(5, 3, 2, 0, 0), Failed);
        assert_eq!(decide(5, 1, 1, 0, 0), Passed);
        assert_eq!(decide(5, 1, 0, 0, 0), Failed);
    }

    #[test]
    fn errored_runs_never_count_toward_k() {
        use TestStatus::*;
        // 4 passed, 1 errored, all 5 needed: the non-errored runs can not reach 5.
        assert_eq!(decide(5, 5, 4, 1, 0), Error);
        // 3 passed, 2 errored, 3 needed: reached anyway.
        assert_eq!(decide(5, 3, 3, 2, 0), Passed);
        // 2 passed, 1 failed, 2 errored, 3 needed: 3 runs did not error, so k was
        // reachable by them, and it was not reached: failed.
        assert_eq!(decide(5, 3, 2, 2, 0), Failed);
        // 2 passed, 3 errored, 3 needed: the 2 runs that did not error can not reach 3.
        assert_eq!(decide(5, 3, 2, 3, 0), Error);
        // Every run errored: error, never passed.
        assert_eq!(decide(3, 1, 0, 3, 0), Error);
    }

    #[test]
    fn runs_cut_by_the_budget_make_the_test_skipped_not_passed() {
        use TestStatus::*;
        // 2 passed, 3 not started, all 5 needed.
        assert_eq!(decide(5, 5, 2, 0, 3), Skipped);
        // 2 passed, 3 not started, 2 needed: decided already.
        assert_eq!(decide(5, 2, 2, 0, 3), Passed);
        // 1 passed, 2 failed, 2 not started, 4 needed: like errored runs, runs that did
        // not start are left out, and the 3 that ran can not reach 4.
        assert_eq!(decide(5, 4, 1, 0, 2), Skipped);
        // Errors and skips together: error wins (it says more about what to fix).
        assert_eq!(decide(5, 4, 1, 1, 1), Error);
    }

    #[test]
    fn a_flaky_test_names_its_flaky_assertion() {
        // Five runs: the first assertion always holds, the second in runs 1, 3 and 5.
        let runs = vec![
            run(&[Pass, Pass], false),
            run(&[Pass, Fail], false),
            run(&[Pass, Pass], false),
            run(&[Pass, Fail], false),
            run(&[Pass, Pass], false),
        ];
        let t = aggregate(runs, 5);
        assert_eq!(t.status, TestStatus::Failed);
        let r = t.repeat.as_ref().unwrap();
        assert_eq!((r.passed, r.failed, r.errors), (3, 2, 0));
        assert!(r.flaky);
        assert_eq!(r.headline(), "3/5 runs passed (flaky)");
        let flaky: Vec<&str> = r
            .flaky_assertions()
            .map(|a| a.description.as_str())
            .collect();
        assert_eq!(flaky, ["a1"]);
        assert_eq!((r.assertions[0].passed, r.assertions[1].passed), (5, 3));
        assert_eq!(r.pass_rate, Some(0.6));
        // The shown assertion is the first run where it failed, saying so.
        assert_eq!(t.assertions[1].status, Fail);
        assert_eq!(t.assertions[1].detail.as_deref(), Some("run 2: seen"));
        assert_eq!(t.assertions[0].status, Pass);
        // Usage and duration are summed; every run is kept.
        assert_eq!(t.usage.as_ref().unwrap().input_tokens, 500);
        assert_eq!(t.duration_ms, 50);
        assert_eq!(t.runs.len(), 5);
        // pass@1 is the pass rate; pass^5 of 3/5 is 0.
        assert_eq!(r.estimates.len(), 5);
        assert!((r.estimates[0].pass_at_k - 0.6).abs() < 1e-12);
        assert!((r.estimates[0].pass_hat_k - 0.6).abs() < 1e-12);
        assert_eq!(r.estimates[4].pass_hat_k, 0.0);
        assert_eq!(r.estimates[4].pass_at_k, 1.0);

        // With min_pass 3 the same runs pass, still flaky.
        let runs = t.runs.clone();
        let t = aggregate(runs, 3);
        assert_eq!(t.status, TestStatus::Passed);
        assert_eq!(
            t.repeat.unwrap().headline(),
            "3/5 runs passed, 3 needed (flaky)"
        );
    }

    #[test]
    fn an_errored_run_is_left_out_of_the_rate_and_named() {
        let runs = vec![run(&[Pass], false), run(&[Pass], true), run(&[Pass], false)];
        let t = aggregate(runs, 3);
        assert_eq!(t.status, TestStatus::Error);
        assert_eq!(
            t.error_kind,
            Some(crate::verdict::test_result::ErrorKind::Agent)
        );
        assert_eq!(
            t.error.as_deref(),
            Some("1 of 3 runs errored: the other 2 can not reach min_pass 3 (run 2: timed out)")
        );
        let r = t.repeat.unwrap();
        assert_eq!(r.pass_rate, Some(1.0), "2 of 2 judged runs passed");
        assert!(!r.flaky, "an error is not a disagreement");
    }

    #[test]
    fn review_scores_keep_the_judge_spread_apart_from_the_run_spread() {
        let mut runs = vec![run(&[Pass], false), run(&[Fail], false)];
        for (r, (score, votes)) in runs.iter_mut().zip([(8, [7, 8, 9]), (4, [4, 4, 5])]) {
            let a = &mut r.assertions[0];
            a.score = Some(score);
            a.votes = votes
                .iter()
                .map(|s| crate::verdict::test_result::JudgeVote {
                    score: Some(*s),
                    reasoning: None,
                    problem: None,
                    cached: false,
                })
                .collect();
        }
        let t = aggregate(runs, 1);
        let a = &t.repeat.as_ref().unwrap().assertions[0];
        assert_eq!(a.scores, [8, 4]);
        assert_eq!(a.judge_spread, Some(2));
        assert_eq!(
            a.phrase(2),
            "1/2 runs · scores 4–8 across runs · judge spread 2"
        );
    }
}
