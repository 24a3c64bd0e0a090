//! How far a judge agrees with people: the figures that decide whether an LLM judge may
//! gate a test (issue #40).
//!
//! People label judged answers `pass` or `fail`; the judge grades the same answers again.
//! Taking a person's `pass` as the positive class, the four counts of a [`Confusion`] give:
//! - the true-positive rate (TPR, sensitivity: of the answers people passed, the share the
//!   judge passed) and the true-negative rate (TNR, specificity: of the answers people
//!   failed, the share the judge failed), each with its 95% Wilson interval
//!   ([`crate::verdict::stats::wilson_interval`], the same interval pass rates have);
//! - Cohen's kappa ([`cohen_kappa`], Cohen 1960): agreement beyond what the two raters'
//!   own pass rates would give by chance;
//! - how many labels per class a judge of a given accuracy needs before the lower bound of
//!   its rate reaches a target ([`labels_needed`]);
//! - a judged pass rate corrected for the judge's errors ([`rogan_gladen`], Rogan & Gladen
//!   1978, "Estimating prevalence from the results of a screening test").
//!
//! Counts are label counts (`u32`); rates are `f64` in 0–1.

use super::stats::{Interval, wilson_interval};

/// The most labels [`labels_needed`] searches up to; beyond it the answer is "too many".
const MAX_LABELS: u32 = 100_000;

/// The judge's verdicts against people's, a person's `pass` being the positive class.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Confusion {
    /// People passed, the judge passed.
    pub true_pass: u32,
    /// People passed, the judge failed.
    pub false_fail: u32,
    /// People failed, the judge failed.
    pub true_fail: u32,
    /// People failed, the judge passed: the false pass, the worst outcome.
    pub false_pass: u32,
}

impl Confusion {
    /// Counts one labelled answer: `human` is the person's verdict (`true` = pass),
    /// `judge` the judge's.
    pub fn add(&mut self, human: bool, judge: bool) {
        match (human, judge) {
            (true, true) => self.true_pass += 1,
            (true, false) => self.false_fail += 1,
            (false, false) => self.true_fail += 1,
            (false, true) => self.false_pass += 1,
        }
    }

    /// Answers people passed (the TPR's n).
    pub fn human_passes(&self) -> u32 {
        self.true_pass + self.false_fail
    }

    /// Answers people failed (the TNR's n).
    pub fn human_fails(&self) -> u32 {
        self.true_fail + self.false_pass
    }

    /// All labelled answers counted.
    pub fn total(&self) -> u32 {
        self.human_passes() + self.human_fails()
    }

    /// The true-positive rate with its 95% Wilson interval; `None` without any answer
    /// people passed.
    pub fn tpr(&self) -> Option<Rate> {
        Rate::of(self.true_pass, self.human_passes())
    }

    /// The true-negative rate with its 95% Wilson interval; `None` without any answer
    /// people failed.
    pub fn tnr(&self) -> Option<Rate> {
        Rate::of(self.true_fail, self.human_fails())
    }

    /// The share of answers on which the judge and people agree (either way), with its
    /// 95% Wilson interval; `None` without labels.
    pub fn agreement(&self) -> Option<Rate> {
        Rate::of(self.true_pass + self.true_fail, self.total())
    }
}

/// A rate of `n` observations with its 95% Wilson interval (all in 0–1).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Rate {
    /// The observed rate, successes / n.
    pub value: f64,
    /// The interval's lower bound.
    pub low: f64,
    /// The interval's upper bound.
    pub high: f64,
    /// The observations.
    pub n: u32,
}

impl Rate {
    /// `successes` of `n`; `None` when `n` is 0 or `successes > n`.
    pub fn of(successes: u32, n: u32) -> Option<Rate> {
        let Interval { low, high } = wilson_interval(successes, n)?;
        Some(Rate {
            value: f64::from(successes) / f64::from(n),
            low,
            high,
            n,
        })
    }
}

/// Cohen's kappa of the judge against people: `(p_o − p_e) / (1 − p_e)`, with `p_o` the
/// share of answers they agree on and `p_e` the agreement expected by chance from each
/// rater's pass rate. 1 is perfect agreement, 0 chance, below 0 worse than chance.
/// `None` without labels, and when chance agreement is already total (`p_e = 1`: both
/// raters gave every answer the same verdict), where kappa is undefined.
pub fn cohen_kappa(c: &Confusion) -> Option<f64> {
    let n = f64::from(c.total());
    if n == 0.0 {
        return None;
    }
    let observed = f64::from(c.true_pass + c.true_fail) / n;
    let human_pass = f64::from(c.human_passes()) / n;
    let judge_pass = f64::from(c.true_pass + c.false_pass) / n;
    let chance = human_pass * judge_pass + (1.0 - human_pass) * (1.0 - judge_pass);
    if (1.0 - chance).abs() < f64::EPSILON {
        return None;
    }
    Some((observed - chance) / (1.0 - chance))
}

/// How many labels of one class a judge right on `accuracy` (0–1) of them needs before the
/// lower bound of the 95% Wilson interval of its rate reaches `min_lower_bound` (0–1).
///
/// Labels are whole answers, so a judge of accuracy a is counted wrong on ⌈(1 − a)·n⌉ of
/// n labels (a 95 % judge misses 2 of 33, not 1.65): the smallest n for which
/// `wilson_interval(n − ⌈(1 − a)·n⌉, n).low >= min_lower_bound`. `None` when no number of
/// labels would do (an accuracy at or below the bound, or more than 100 000 labels).
/// For a bound of 0.80: 16 at 100 %, 33 at 95 %, 68 at 90 %.
pub fn labels_needed(accuracy: f64, min_lower_bound: f64) -> Option<u32> {
    if !(0.0..=1.0).contains(&accuracy) || accuracy <= min_lower_bound {
        return None;
    }
    (1..=MAX_LABELS).find(|&n| {
        // The tolerance keeps 0.05 · 20 = 1.0000000000000002 one error, not two.
        let errors = ((1.0 - accuracy) * f64::from(n) - 1e-9).ceil().max(0.0);
        // `errors` is a whole number in 0..=n, so the cast is exact.
        let errors = errors as u32;
        wilson_interval(n - errors.min(n), n).is_some_and(|i| i.low >= min_lower_bound)
    })
}

/// The Rogan–Gladen estimate of the true pass rate from a judged pass rate `observed`
/// (0–1) and the judge's `tpr` and `tnr` (0–1): `(observed + tnr − 1) / (tpr + tnr − 1)`,
/// clamped to 0–1. `None` when `tpr + tnr ≤ 1`: a judge no better than a coin says nothing
/// about the true rate.
pub fn rogan_gladen(observed: f64, tpr: f64, tnr: f64) -> Option<f64> {
    let youden = tpr + tnr - 1.0;
    if youden <= 0.0 || !(0.0..=1.0).contains(&observed) {
        return None;
    }
    Some(((observed + tnr - 1.0) / youden).clamp(0.0, 1.0))
}

/// The Rogan–Gladen corrected pass rate of `passed` judged passes of `runs`, with an
/// interval: the correction applied to the value and to both bounds of the observed
/// rate's 95% Wilson interval (the correction is increasing in the observed rate, so the
/// bounds stay in order). The interval carries the sampling error of the runs only, not
/// that of the judge's own TPR and TNR, so it is narrower than the whole uncertainty;
/// reports say so. `None` as for [`rogan_gladen`], or when `runs` is 0.
pub fn rogan_gladen_rate(passed: u32, runs: u32, tpr: f64, tnr: f64) -> Option<Rate> {
    let observed = wilson_interval(passed, runs)?;
    let value = rogan_gladen(f64::from(passed) / f64::from(runs), tpr, tnr)?;
    Some(Rate {
        value,
        low: rogan_gladen(observed.low, tpr, tnr)?,
        high: rogan_gladen(observed.high, tpr, tnr)?,
        n: runs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 5e-4
    }

    #[test]
    fn labels_needed_for_a_lower_bound_of_080_matches_the_hand_computed_table() {
        // By hand, z = 1.96, z² = 3.8415: at p = 1, n = 15 gives a lower bound of
        // 15 / (15 + 3.8415) = 0.7961 and n = 16 gives 16 / 19.8415 = 0.8064.
        assert_eq!(labels_needed(1.0, 0.80), Some(16));
        // At 95 %: n = 32 misses 2 and 30/32 has a lower bound of 0.7985; n = 33 misses 2
        // and 31/33 has 0.8040. At 90 %: 61/68 (7 missed) is the first above 0.80.
        assert_eq!(labels_needed(0.95, 0.80), Some(33));
        assert_eq!(labels_needed(0.90, 0.80), Some(68));
    }

    #[test]
    fn a_judge_no_more_accurate_than_the_bound_never_gets_there() {
        assert_eq!(labels_needed(0.80, 0.80), None);
        assert_eq!(labels_needed(0.5, 0.80), None);
        assert_eq!(labels_needed(1.5, 0.80), None);
    }

    #[test]
    fn tpr_and_tnr_carry_wilson_intervals_of_their_own_class() {
        let mut c = Confusion::default();
        for _ in 0..9 {
            c.add(true, true);
        }
        c.add(true, false);
        for _ in 0..4 {
            c.add(false, false);
        }
        let tpr = c.tpr().unwrap();
        // 9/10: Wilson (z = 1.96) by hand: centre (0.9 + 0.19207) / 1.38415 = 0.78898,
        // half 1.96 · √(0.009 + 0.009604) / 1.38415 = 0.19317 → 0.5958–0.9821.
        assert!(close(tpr.value, 0.9) && close(tpr.low, 0.5958) && close(tpr.high, 0.9821));
        assert_eq!(tpr.n, 10);
        let tnr = c.tnr().unwrap();
        // 4/4: lower bound 4 / (4 + 3.8415) = 0.5101.
        assert!(close(tnr.value, 1.0) && close(tnr.low, 0.5101) && tnr.high == 1.0);
        assert_eq!(tnr.n, 4);
    }

    #[test]
    fn a_class_without_labels_has_no_rate() {
        let mut c = Confusion::default();
        c.add(true, true);
        assert!(c.tpr().is_some());
        assert_eq!(c.tnr(), None);
    }

    #[test]
    fn kappa_matches_the_hand_computed_value() {
        // 20 true passes, 5 false fails, 10 false passes, 15 true fails (n = 50):
        // p_o = 35/50 = 0.7; people pass 25/50 = 0.5, the judge 30/50 = 0.6;
        // p_e = 0.5·0.6 + 0.5·0.4 = 0.5; kappa = (0.7 − 0.5) / 0.5 = 0.4.
        let c = Confusion {
            true_pass: 20,
            false_fail: 5,
            true_fail: 15,
            false_pass: 10,
        };
        assert!(close(cohen_kappa(&c).unwrap(), 0.4));
    }

    #[test]
    fn kappa_is_one_for_perfect_agreement_and_undefined_for_one_verdict() {
        let perfect = Confusion {
            true_pass: 3,
            true_fail: 2,
            ..Confusion::default()
        };
        assert!(close(cohen_kappa(&perfect).unwrap(), 1.0));
        let all_pass = Confusion {
            true_pass: 5,
            ..Confusion::default()
        };
        assert_eq!(cohen_kappa(&all_pass), None);
        assert_eq!(cohen_kappa(&Confusion::default()), None);
    }

    #[test]
    fn rogan_gladen_corrects_a_judged_rate_by_hand() {
        // observed 0.6, TPR 0.9, TNR 0.8: (0.6 + 0.8 − 1) / (0.9 + 0.8 − 1) = 0.4 / 0.7.
        assert!(close(rogan_gladen(0.6, 0.9, 0.8).unwrap(), 0.4 / 0.7));
        // A perfect judge changes nothing.
        assert!(close(rogan_gladen(0.37, 1.0, 1.0).unwrap(), 0.37));
        // Below the judge's false-pass floor, the true rate is 0, never negative.
        assert_eq!(rogan_gladen(0.1, 0.9, 0.8), Some(0.0));
    }

    #[test]
    fn a_coin_flip_judge_corrects_nothing() {
        assert_eq!(rogan_gladen(0.5, 0.5, 0.5), None);
        assert_eq!(rogan_gladen(0.5, 0.3, 0.6), None);
    }

    #[test]
    fn the_corrected_interval_is_the_corrected_wilson_bounds() {
        // 6 of 10 judged passes; Wilson by hand: 0.3127–0.8318.
        let r = rogan_gladen_rate(6, 10, 0.9, 0.8).unwrap();
        assert!(close(r.value, 0.4 / 0.7));
        assert!(close(r.low, (0.3127 - 0.2) / 0.7));
        assert!(close(r.high, (0.8318 - 0.2) / 0.7));
        assert_eq!(r.n, 10);
        assert_eq!(rogan_gladen_rate(0, 0, 0.9, 0.8), None);
    }
}
