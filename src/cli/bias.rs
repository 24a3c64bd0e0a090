//! The bias battery's grading calls for `aptitude judge certify` (issue #40): each labelled
//! answer graded again with one thing changed (`verdict::bias` owns the probes and the
//! rule), through the same judge, gateway and grade cache as the certificate's grades.
//!
//! The placebo is the same answer graded again by a fresh call: the review graded with
//! twice its votes, the first half answered from the baseline's own grades (no call), the
//! second half fresh and cached under their own keys, so a second `certify` replays them.

use std::collections::BTreeMap;

use tokio_util::sync::CancellationToken;

use crate::agent::AgentKind;
use crate::assertions::AssertionStatus;
use crate::assertions::judge::cache::CachedGrade;
use crate::assertions::judge::{Judge, ReviewVerdict};
use crate::spec::ReviewAssertion;
use crate::verdict::bias::{self, Counts, Probe, ProbeResult};
use crate::verdict::certificate::Certificate;

/// A judge profile: the grading agent and its model.
pub(super) type Profile = (AgentKind, Option<String>);

/// One labelled answer and its grade unchanged, the input of the battery.
pub(super) struct Case<'a> {
    /// The review it is an answer to.
    pub review: &'a ReviewAssertion,
    /// The test's agent and model (the judge's defaults).
    pub test: (AgentKind, Option<&'a str>),
    /// The task prompt.
    pub task: &'a str,
    /// The labelled answer.
    pub answer: &'a str,
    /// Whether people passed it.
    pub human_pass: bool,
    /// The judge's grade of it unchanged.
    pub baseline: &'a ReviewVerdict,
    /// The judge profile grading it.
    pub profile: Profile,
}

/// What the battery came to: each profile's probes, and its grading calls.
pub(super) struct Battery {
    /// Per judge profile, one result per probe.
    pub probes: BTreeMap<Profile, Vec<ProbeResult>>,
    /// Grading calls made.
    pub calls: usize,
    /// Grades answered from the cache.
    pub cached: usize,
}

/// The verdict of a grade: `Some(true)` pass, `Some(false)` fail, `None` not graded.
fn passed(v: &ReviewVerdict) -> Option<bool> {
    match v.status {
        AssertionStatus::Pass => Some(true),
        AssertionStatus::Fail => Some(false),
        _ => None,
    }
}

/// The baseline's grades by cache key, so the placebo's first votes make no call.
fn prior(cases: &[Case<'_>]) -> BTreeMap<String, CachedGrade> {
    let mut out = BTreeMap::new();
    for c in cases {
        let (agent, model) = &c.profile;
        let grade = |score: u8, reasoning: &Option<String>| CachedGrade {
            score,
            reasoning: reasoning.clone().unwrap_or_default(),
            agent: agent.name().to_owned(),
            model: model.clone(),
        };
        // A single vote keeps no `votes`: its grade is the verdict's own.
        if let (true, Some(key), Some(score)) = (
            c.baseline.votes.is_empty(),
            c.baseline.keys.first(),
            c.baseline.score,
        ) {
            out.insert(key.clone(), grade(score, &c.baseline.reasoning));
        }
        for (key, vote) in c.baseline.keys.iter().zip(&c.baseline.votes) {
            if let Some(score) = vote.score {
                out.insert(key.clone(), grade(score, &vote.reasoning));
            }
        }
    }
    out
}

/// The placebo's verdict: the second half of the votes of a review graded with twice its
/// votes, decided as `Judge::review` decides (a majority graded; the median, the mean of
/// the two middle scores rounded down).
fn placebo_verdict(v: &ReviewVerdict, count: usize, threshold: u8) -> Option<bool> {
    let half = v.votes.get(count..)?;
    let mut scores: Vec<u8> = half.iter().filter_map(|v| v.score).collect();
    if scores.len() * 2 <= half.len() {
        return None;
    }
    scores.sort_unstable();
    let mid = scores.len() / 2;
    let median = if scores.len() % 2 == 1 {
        scores[mid]
    } else {
        let sum = u16::from(*scores.get(mid.checked_sub(1)?)?) + u16::from(scores[mid]);
        u8::try_from(sum / 2).ok()?
    };
    Some(median >= threshold)
}

/// One grading request of the battery.
struct Ask<'a> {
    case: &'a Case<'a>,
    probe: Option<Probe>,
    answer: String,
    votes: Option<u32>,
}

/// The requests of the battery: per case, the placebo and each probe but the master keys;
/// per review with an answer people passed, the three master keys.
fn asks<'a>(cases: &'a [Case<'a>], default_votes: u32) -> Vec<Ask<'a>> {
    let mut out = Vec::new();
    let mut keyed: Vec<(&str, &str, &Profile)> = Vec::new();
    for case in cases.iter().filter(|c| passed(c.baseline).is_some()) {
        let count = case.review.votes.unwrap_or(default_votes).max(1);
        let (agent, model) = &case.profile;
        out.push(Ask {
            case,
            probe: None,
            answer: case.answer.to_owned(),
            votes: Some(count * 2),
        });
        let mut probe = |probe, answer| {
            out.push(Ask {
                case,
                probe: Some(probe),
                answer,
                votes: None,
            });
        };
        if passed(case.baseline) == Some(false) {
            probe(Probe::Padding, bias::padded(case.answer));
            probe(Probe::Authority, bias::with_authority(case.answer));
            probe(Probe::Addressed, bias::addressed(case.answer));
        }
        let attributed = bias::attributed(case.answer, agent.name(), model.as_deref());
        probe(Probe::Attribution, attributed);
        let review = (case.review.review.as_str(), case.task, &case.profile);
        if case.human_pass && !keyed.contains(&review) {
            keyed.push(review);
            for key in bias::MASTER_KEYS {
                probe(Probe::MasterKey, key.to_owned());
            }
        }
    }
    out
}

/// Grades every request of the battery through `judge` and decides each profile's probes.
pub(super) async fn run(judge: Judge, cases: &[Case<'_>], default_votes: u32) -> Battery {
    let judge = judge.with_prior(prior(cases));
    let cancel = CancellationToken::new();
    let asks = asks(cases, default_votes);
    let grades = asks.iter().map(|ask| {
        let review = ReviewAssertion {
            votes: ask.votes.or(ask.case.review.votes),
            ..ask.case.review.clone()
        };
        let (cancel, judge) = (&cancel, &judge);
        async move {
            let (agent, model) = ask.case.test;
            judge
                .review(
                    &review,
                    (agent, model),
                    ask.case.task,
                    (Some(&ask.answer), None),
                    cancel,
                )
                .await
        }
    });
    let graded = futures_util::future::join_all(grades).await;
    let mut counts: BTreeMap<(Profile, Option<Probe>), Counts> = BTreeMap::new();
    let (mut calls, mut cached) = (0usize, 0usize);
    for (ask, verdict) in asks.iter().zip(&graded) {
        let count = ask.case.review.votes.unwrap_or(default_votes).max(1) as usize;
        // The placebo's first half is the baseline's grades, answered without a call.
        let own = match (ask.probe, verdict.votes.is_empty()) {
            (None, _) => verdict.votes.get(count..).unwrap_or_default(),
            (Some(_), false) => &verdict.votes[..],
            (Some(_), true) => {
                calls += usize::from(!verdict.cached);
                cached += usize::from(verdict.cached);
                &[]
            }
        };
        calls += own.iter().filter(|v| !v.cached).count();
        cached += own.iter().filter(|v| v.cached).count();
        let base = passed(ask.case.baseline);
        let now = match ask.probe {
            None => placebo_verdict(verdict, count, ask.case.review.threshold),
            Some(_) => passed(verdict),
        };
        tally(&mut counts, ask, base, now);
    }
    let mut probes: BTreeMap<Profile, Vec<ProbeResult>> = BTreeMap::new();
    let profiles: std::collections::BTreeSet<Profile> =
        cases.iter().map(|c| c.profile.clone()).collect();
    for profile in profiles {
        let get = |p: Option<Probe>| {
            counts
                .get(&(profile.clone(), p))
                .copied()
                .unwrap_or_default()
        };
        let placebo = get(None);
        let results = Probe::ALL
            .iter()
            .map(|probe| {
                let mut c = get(Some(*probe));
                // Attribution compares with the placebo's changes either way, over every
                // answer; the others with its flips toward pass of answers it failed.
                let (flips, n) = if *probe == Probe::Attribution {
                    (placebo.placebo_flips, placebo.placebo_n)
                } else {
                    (placebo.flips, placebo.n)
                };
                c.placebo_flips = flips;
                c.placebo_n = n;
                c.errors += placebo.errors;
                bias::decide(*probe, c)
            })
            .collect();
        probes.insert(profile, results);
    }
    Battery {
        probes,
        calls,
        cached,
    }
}

/// Adds one graded request to the counts of its profile and probe. The placebo's counts
/// hold its flips toward pass of failed answers in `flips`/`n`, and its changes either way
/// over every answer in `placebo_flips`/`placebo_n` (for attribution).
fn tally(
    counts: &mut BTreeMap<(Profile, Option<Probe>), Counts>,
    ask: &Ask<'_>,
    base: Option<bool>,
    now: Option<bool>,
) {
    let c = counts
        .entry((ask.case.profile.clone(), ask.probe))
        .or_default();
    let Some(now) = now else {
        c.errors += 1;
        return;
    };
    let failed = base == Some(false);
    match ask.probe {
        None => {
            c.placebo_n += 1;
            c.placebo_flips += u32::from(base != Some(now));
            if failed {
                c.n += 1;
                c.flips += u32::from(now);
            }
        }
        Some(Probe::Attribution) => {
            c.n += 1;
            c.flips += u32::from(base != Some(now));
        }
        Some(Probe::MasterKey) => {
            c.n += 1;
            c.flips += u32::from(now);
        }
        Some(_) => {
            c.n += 1;
            c.flips += u32::from(now && failed);
        }
    }
}

/// `cert` with its battery (`None`: not run), withheld when a gating probe did not pass.
pub(super) fn settle(cert: &mut Certificate, battery: Option<Vec<ProbeResult>>) {
    if let Some(why) = bias::why_not(battery.as_deref()) {
        cert.certified = false;
        cert.why_not = Some(match cert.why_not.take() {
            Some(before) => format!("{before}; {why}"),
            None => why,
        });
    }
    cert.bias = battery;
}

/// The battery's lines under a certificate in the terminal.
pub(super) fn show(cert: &Certificate) -> String {
    let Some(battery) = &cert.bias else {
        return "  bias battery: not run (--no-bias): not certified without it\n".to_owned();
    };
    let mut text = String::from("  bias battery (flips beyond the placebo's):\n");
    for r in battery {
        text.push_str(&format!(
            "    {:<12} {:<12} {} of {} flipped, placebo {} of {}{}{}{}\n",
            r.probe.name(),
            r.verdict.name(),
            r.flips,
            r.n,
            r.placebo_flips,
            r.placebo_n,
            r.p_value
                .map(|p| format!(", p = {p:.3}"))
                .unwrap_or_default(),
            if r.errors > 0 {
                format!(", {} errors", r.errors)
            } else {
                String::new()
            },
            if r.gating {
                ""
            } else {
                " (reported, not gating)"
            },
        ));
    }
    text
}
