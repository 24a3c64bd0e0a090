//! The search behind `aptitude bisect`: which release of an agent CLI first made a suite's
//! pass rate fall, judged from repeated runs, never from one.
//!
//! The search is a pure state machine over the ordered releases from `--good` to `--bad`
//! ([`super::releases`]): [`Search::next`] says which release to run and how many more
//! times, the caller runs the suite and hands the counts back with [`Search::record`], until
//! `next` returns an [`Outcome`]. Nothing here runs an agent, so the search is tested
//! against simulated releases.
//!
//! **The test.** A probe's counts are the suite's runs pooled (every run of every test on
//! that release), compared with the good release's by the one-sided Fisher exact test
//! ([`stats::fisher_exact_less`]). Fisher's test is exact at the small counts a CI budget
//! allows (5–30 runs a release), where a two-proportion z-test's normal approximation is
//! wrong at rates near 0 or 1 — exactly where a healthy suite sits. A release is
//! - **bad** when its pass rate is significantly lower than the good release's (p < α);
//! - **good** when it is not, *and* it is significantly higher than the bad release's: not
//!   being worse than good is no evidence on its own (few runs are "not worse" than anything);
//! - **inconclusive** otherwise: it gets more runs, `--runs` at a time, up to
//!   [`Settings::max_runs_per_release`]; one still undecided then is left aside and the search
//!   continues around it. When no release between the last good and the first bad is left to
//!   try, the answer is that range, not a guess.
//!
//! The endpoints are probed first; a bad release not significantly worse than the good one
//! (after the extra runs) ends the search with [`Outcome::NoRegression`], and the smallest
//! drop the runs could have shown ([`smallest_detectable_drop`]).

use serde::Serialize;

use super::stats::{self, Interval};

/// The significance level of every judgement: 0.05, one-sided.
pub const ALPHA: f64 = 0.05;

/// Pass counts and spend of the runs made on one release.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Tally {
    /// Runs that passed.
    pub passed: u32,
    /// Runs made (passed or not; runs that errored count as not passed).
    pub runs: u32,
    /// What the runs cost, in USD.
    pub cost_usd: f64,
}

impl Tally {
    /// The runs that did not pass.
    pub fn failed(&self) -> u32 {
        self.runs.saturating_sub(self.passed)
    }

    /// The pass rate (0–1), `None` before any run.
    pub fn rate(&self) -> Option<f64> {
        (self.runs > 0).then(|| f64::from(self.passed) / f64::from(self.runs))
    }

    fn row(&self) -> [u32; 2] {
        [self.passed, self.failed()]
    }
}

/// What a release's runs say about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Judgement {
    /// As good as the good release, and distinguishable from the bad one.
    Good,
    /// Significantly worse than the good release.
    Bad,
    /// Neither, at the runs made.
    Inconclusive,
}

/// Judges a release's tally against the good release's and the bad release's (see the
/// module docs for the test and why both references).
pub fn judge(probe: Tally, good: Tally, bad: Tally, alpha: f64) -> Judgement {
    if probe.runs == 0 {
        return Judgement::Inconclusive;
    }
    if stats::fisher_exact_less([probe.row(), good.row()]) < alpha {
        Judgement::Bad
    } else if stats::fisher_exact_less([bad.row(), probe.row()]) < alpha {
        Judgement::Good
    } else {
        Judgement::Inconclusive
    }
}

/// The largest pass-rate drop from `good` that `runs` runs of a release could *fail* to
/// show: the gap between the good release's rate and the highest rate over `runs` runs that
/// the test still calls significantly lower (0–1). `None` when no outcome of `runs` runs
/// would be significant (even 0 passes), i.e. no drop is detectable at that size.
pub fn smallest_detectable_drop(good: Tally, runs: u32, alpha: f64) -> Option<f64> {
    let good_rate = good.rate()?;
    (0..=runs)
        .rev()
        .find(|&passed| stats::fisher_exact_less([[passed, runs - passed], good.row()]) < alpha)
        .map(|passed| good_rate - f64::from(passed) / f64::from(runs))
}

/// How the search spends runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// Runs of the suite per probe (`--runs`, at least 1).
    pub runs: u32,
    /// Runs a release gets at most, extra runs for an inconclusive judgement included.
    pub max_runs_per_release: u32,
    /// The spend ceiling in USD (`--max-cost`): no probe starts whose estimated cost (the
    /// mean cost of a run so far × its runs) would pass it.
    pub max_cost_usd: Option<f64>,
    /// The significance level ([`ALPHA`] by default).
    pub alpha: f64,
}

impl Settings {
    /// `runs` per probe, up to three probes' worth on an inconclusive release, no ceiling.
    pub fn new(runs: u32) -> Self {
        let runs = runs.max(1);
        Self {
            runs,
            max_runs_per_release: runs.saturating_mul(3),
            max_cost_usd: None,
            alpha: ALPHA,
        }
    }
}

/// What to do next.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Run the suite `runs` more times on `releases[index]`.
    Probe {
        /// The release's index in the ordered list.
        index: usize,
        /// How many runs to make.
        runs: u32,
    },
    /// The search is over.
    Done(Outcome),
}

/// Why the search stopped short of one release.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// Every release in the range was tried to its run limit and stayed inconclusive.
    Inconclusive,
    /// `--max-cost` would have been passed by the next probe.
    Budget,
}

/// The answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Outcome {
    /// `releases[index]` is the first bad release: the one before it was judged good.
    FirstBad {
        /// Its index in the ordered list.
        index: usize,
    },
    /// The bad release is not significantly worse than the good one.
    NoRegression,
    /// The first bad release is after `last_good` and at or before `first_bad`.
    Range {
        /// The last release judged good (an index).
        last_good: usize,
        /// The first release judged bad (an index).
        first_bad: usize,
        /// Why the search stopped there.
        reason: StopReason,
    },
}

/// The search over `releases` (oldest first; the first is `--good`, the last `--bad`).
#[derive(Debug, Clone)]
pub struct Search {
    releases: Vec<String>,
    tallies: Vec<Tally>,
    settings: Settings,
    /// The last release judged good and the first judged bad, as indices.
    last_good: usize,
    first_bad: usize,
}

impl Search {
    /// A search over `releases`, at least two (the endpoints).
    pub fn new(releases: Vec<String>, settings: Settings) -> Option<Self> {
        (releases.len() >= 2).then(|| Self {
            tallies: vec![Tally::default(); releases.len()],
            last_good: 0,
            first_bad: releases.len() - 1,
            releases,
            settings,
        })
    }

    /// The releases searched, oldest first.
    pub fn releases(&self) -> &[String] {
        &self.releases
    }

    /// Adds a probe's counts to `releases[index]`, and moves the range when the release is
    /// now judged good or bad.
    pub fn record(&mut self, index: usize, tally: Tally) {
        let Some(slot) = self.tallies.get_mut(index) else {
            return;
        };
        slot.passed += tally.passed;
        slot.runs += tally.runs;
        slot.cost_usd += tally.cost_usd;
        if index <= self.last_good || index >= self.first_bad {
            return;
        }
        match self.judgement(index) {
            Judgement::Good => self.last_good = index,
            Judgement::Bad => self.first_bad = index,
            Judgement::Inconclusive => {}
        }
    }

    /// The judgement of `releases[index]` at the runs made so far; the endpoints are good
    /// and bad by definition.
    pub fn judgement(&self, index: usize) -> Judgement {
        let last = self.releases.len() - 1;
        match index {
            0 => Judgement::Good,
            i if i == last => Judgement::Bad,
            i => judge(
                self.tallies[i],
                self.tallies[0],
                self.tallies[last],
                self.settings.alpha,
            ),
        }
    }

    /// The next step: a probe, or the outcome.
    pub fn next(&self) -> Step {
        let step = self.endpoint_step().unwrap_or_else(|| self.interior_step());
        match step {
            Step::Probe { runs, .. } if !self.affordable(runs) => Step::Done(Outcome::Range {
                last_good: self.last_good,
                first_bad: self.first_bad,
                reason: StopReason::Budget,
            }),
            step => step,
        }
    }

    /// Probes of the endpoints until the bad one is shown worse than the good one, or
    /// both are at their run limit.
    fn endpoint_step(&self) -> Option<Step> {
        let last = self.releases.len() - 1;
        for index in [0, last] {
            if self.tallies[index].runs < self.settings.runs {
                return Some(self.probe(index));
            }
        }
        let (good, bad) = (self.tallies[0], self.tallies[last]);
        if stats::fisher_exact_less([bad.row(), good.row()]) < self.settings.alpha {
            return None;
        }
        let fewer = if bad.runs < good.runs { last } else { 0 };
        if self.tallies[fewer].runs < self.settings.max_runs_per_release {
            Some(self.probe(fewer))
        } else {
            Some(Step::Done(Outcome::NoRegression))
        }
    }

    /// The probe nearest the middle of the range among the releases still open (untried,
    /// or inconclusive below their run limit); the outcome when none is.
    fn interior_step(&self) -> Step {
        if self.first_bad == self.last_good + 1 {
            return Step::Done(Outcome::FirstBad {
                index: self.first_bad,
            });
        }
        let middle = (self.last_good + self.first_bad) / 2;
        let open = (self.last_good + 1..self.first_bad)
            .filter(|&i| self.tallies[i].runs < self.settings.max_runs_per_release)
            .min_by_key(|&i| (i.abs_diff(middle), i));
        match open {
            Some(index) => self.probe(index),
            None => Step::Done(Outcome::Range {
                last_good: self.last_good,
                first_bad: self.first_bad,
                reason: StopReason::Inconclusive,
            }),
        }
    }

    fn probe(&self, index: usize) -> Step {
        let made = self.tallies[index].runs;
        let limit = self.settings.max_runs_per_release.max(self.settings.runs);
        Step::Probe {
            index,
            runs: self.settings.runs.min(limit.saturating_sub(made)).max(1),
        }
    }

    /// Whether `runs` more runs fit under `--max-cost`, at the mean cost of a run so far
    /// (the first probe always starts: there is nothing to estimate from).
    fn affordable(&self, runs: u32) -> bool {
        let Some(ceiling) = self.settings.max_cost_usd else {
            return true;
        };
        let (made, spent) = self.spent();
        if made == 0 {
            return true;
        }
        spent + spent / f64::from(made) * f64::from(runs) <= ceiling
    }

    /// The runs made and their cost in USD, over every release.
    pub fn spent(&self) -> (u32, f64) {
        self.tallies.iter().fold((0, 0.0), |(runs, cost), t| {
            (runs + t.runs, cost + t.cost_usd)
        })
    }

    /// The report of the search so far: every release tried, in release order.
    pub fn report(&self, outcome: Option<Outcome>) -> Report {
        let (runs, cost_usd) = self.spent();
        let tried = self
            .releases
            .iter()
            .zip(&self.tallies)
            .enumerate()
            .filter(|(_, (_, tally))| tally.runs > 0)
            .map(|(index, (version, tally))| Tried {
                version: version.clone(),
                judgement: self.judgement(index),
                passed: tally.passed,
                runs: tally.runs,
                rate: tally.rate(),
                interval: stats::wilson_interval(tally.passed, tally.runs),
                cost_usd: tally.cost_usd,
            })
            .collect();
        let version = |index: usize| self.releases.get(index).cloned();
        let (first_bad, range) = match &outcome {
            Some(Outcome::FirstBad { index }) => (version(*index), None),
            Some(Outcome::Range {
                last_good,
                first_bad,
                ..
            }) => (None, version(*last_good).zip(version(*first_bad))),
            _ => (None, None),
        };
        Report {
            releases: self.releases.len(),
            tried,
            first_bad,
            range,
            outcome,
            runs,
            cost_usd,
            linear_scan_runs: self.linear_scan_runs(),
            smallest_detectable_drop: smallest_detectable_drop(
                self.tallies[0],
                self.settings.runs,
                self.settings.alpha,
            ),
        }
    }

    /// What trying every release in order at `--runs` each would have cost in runs, up to
    /// and including the first bad release found (or all of them): the baseline bisect is
    /// measured against.
    fn linear_scan_runs(&self) -> u32 {
        let upto = self.first_bad.min(self.releases.len() - 1) + 1;
        u32::try_from(upto)
            .unwrap_or(u32::MAX)
            .saturating_mul(self.settings.runs)
    }
}

/// One release tried, as reported.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tried {
    /// The version.
    pub version: String,
    /// Its judgement at the end.
    pub judgement: Judgement,
    /// Runs passed.
    pub passed: u32,
    /// Runs made.
    pub runs: u32,
    /// The pass rate (0–1).
    pub rate: Option<f64>,
    /// The 95% Wilson interval of the pass rate.
    pub interval: Option<Interval>,
    /// What its runs cost, in USD.
    pub cost_usd: f64,
}

/// What `aptitude bisect` prints and writes as JSON (`--json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// How many releases the range holds, endpoints included.
    pub releases: usize,
    /// The releases tried, oldest first.
    pub tried: Vec<Tried>,
    /// The first bad release, when found.
    pub first_bad: Option<String>,
    /// The last good and first bad release, when the search ended on a range.
    pub range: Option<(String, String)>,
    /// The outcome (`None` while the search runs).
    pub outcome: Option<Outcome>,
    /// Runs made in all.
    pub runs: u32,
    /// Their cost, in USD.
    pub cost_usd: f64,
    /// The runs a release-by-release scan at `--runs` each would have made to reach the
    /// same release.
    pub linear_scan_runs: u32,
    /// The smallest pass-rate drop (0–1) from the good release that `--runs` runs of a
    /// release can show; `None` when none can.
    pub smallest_detectable_drop: Option<f64>,
}

#[cfg(test)]
mod tests;
