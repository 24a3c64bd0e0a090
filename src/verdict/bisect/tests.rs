//! The search run against simulated releases whose pass rates are planted: each probe of
//! `runs` runs passes `round(rate × runs)` of them, so a search's path is reproducible.

use super::*;

fn releases(count: usize) -> Vec<String> {
    (0..count).map(|i| format!("1.0.{i}")).collect()
}

/// Runs the search to its end against `rates` (one per release), each run costing
/// `cost_per_run` USD; returns the outcome and the final search.
fn simulate(rates: &[f64], settings: Settings, cost_per_run: f64) -> (Outcome, Search) {
    let mut search = Search::new(releases(rates.len()), settings).unwrap();
    for _ in 0..1000 {
        match search.next() {
            Step::Done(outcome) => return (outcome, search),
            Step::Probe { index, runs } => {
                let passed = (rates[index] * f64::from(runs)).round() as u32;
                search.record(
                    index,
                    Tally {
                        passed,
                        runs,
                        cost_usd: cost_per_run * f64::from(runs),
                    },
                );
            }
        }
    }
    panic!("the search did not end");
}

#[test]
fn one_failed_run_never_makes_a_release_bad() {
    let good = Tally {
        passed: 10,
        runs: 10,
        cost_usd: 0.0,
    };
    let bad = Tally {
        passed: 0,
        runs: 10,
        cost_usd: 0.0,
    };
    let one_failure = Tally {
        passed: 0,
        runs: 1,
        cost_usd: 0.0,
    };
    assert_eq!(
        judge(one_failure, good, bad, ALPHA),
        Judgement::Inconclusive
    );
    let one_pass = Tally {
        passed: 1,
        runs: 1,
        cost_usd: 0.0,
    };
    assert_eq!(judge(one_pass, good, bad, ALPHA), Judgement::Inconclusive);
}

#[test]
fn a_release_is_good_only_when_it_is_told_apart_from_the_bad_one() {
    let tally = |passed, runs| Tally {
        passed,
        runs,
        cost_usd: 0.0,
    };
    let (good, bad) = (tally(10, 10), tally(2, 10));
    assert_eq!(judge(tally(9, 10), good, bad, ALPHA), Judgement::Good);
    assert_eq!(judge(tally(3, 10), good, bad, ALPHA), Judgement::Bad);
    // 3 of 4 is not worse than 10 of 10, nor better than 2 of 10 at p < 0.05.
    assert_eq!(
        judge(tally(3, 4), good, bad, ALPHA),
        Judgement::Inconclusive
    );
}

/// Exact values from the hypergeometric sums (Python's `math.comb`): with 10 of 10 on the
/// good release, 6 of 10 is the best a release can do and still be significantly lower
/// (p = 0.0433; 7 of 10 gives 0.105), so 0.4 is the smallest drop 10 runs show.
#[test]
fn smallest_detectable_drop_at_ten_runs() {
    let all = Tally {
        passed: 10,
        runs: 10,
        cost_usd: 0.0,
    };
    let drop = smallest_detectable_drop(all, 10, ALPHA).unwrap();
    assert!((drop - 0.4).abs() < 1e-12, "{drop}");
    let nine = Tally {
        passed: 9,
        runs: 10,
        cost_usd: 0.0,
    };
    let drop = smallest_detectable_drop(nine, 10, ALPHA).unwrap();
    assert!((drop - 0.5).abs() < 1e-12, "{drop}");
    // One run can never be significant against 10 of 10: 0 of 1 has p = 1/11.
    assert_eq!(smallest_detectable_drop(all, 1, ALPHA), None);
}

#[test]
fn finds_a_planted_first_bad_release_in_fewer_runs_than_a_linear_scan() {
    // 17 releases; 1.0.11 drops the suite from 0.9 to 0.3.
    let rates: Vec<f64> = (0..17).map(|i| if i < 11 { 0.9 } else { 0.3 }).collect();
    let (outcome, search) = simulate(&rates, Settings::new(10), 0.5);
    assert_eq!(outcome, Outcome::FirstBad { index: 11 });
    let report = search.report(Some(outcome));
    assert_eq!(report.first_bad.as_deref(), Some("1.0.11"));
    assert_eq!(report.linear_scan_runs, 120);
    // The endpoints, then 1.0.8 (good), 1.0.12 (bad), 1.0.10 (good), 1.0.11 (bad): 6 probes.
    assert_eq!(report.runs, 60);
    assert!((report.cost_usd - 0.5 * f64::from(report.runs)).abs() < 1e-9);
    assert!(
        report
            .tried
            .iter()
            .all(|t| t.interval.is_some() && t.rate.is_some())
    );
}

#[test]
fn a_release_between_the_two_rates_leaves_an_inconclusive_range() {
    // 1.0.2 passes half of its runs: not worse than 0.9 at 5 runs a probe, nor better than
    // 0.1, even after the extra runs; 1.0.3 is clearly bad, 1.0.1 clearly good.
    let rates = [0.9, 0.9, 0.5, 0.1, 0.1];
    let (outcome, search) = simulate(&rates, Settings::new(5), 0.0);
    assert_eq!(
        outcome,
        Outcome::Range {
            last_good: 1,
            first_bad: 3,
            reason: StopReason::Inconclusive
        }
    );
    assert_eq!(search.judgement(2), Judgement::Inconclusive);
    let report = search.report(Some(outcome));
    assert_eq!(report.first_bad, None);
    assert_eq!(report.range, Some(("1.0.1".into(), "1.0.3".into())));
    // The undecided release got its extra runs before the search gave up on it.
    let middle = report.tried.iter().find(|t| t.version == "1.0.2").unwrap();
    assert_eq!(middle.runs, 15);
}

#[test]
fn no_regression_when_the_bad_release_is_not_worse() {
    let (outcome, search) = simulate(&[0.8, 0.8, 0.8, 0.8], Settings::new(5), 0.0);
    assert_eq!(outcome, Outcome::NoRegression);
    // The endpoints got their extra runs; nothing between them was tried.
    let (runs, _) = search.spent();
    assert_eq!(runs, 30);
}

#[test]
fn the_cost_ceiling_stops_the_search_on_the_range_so_far() {
    let rates: Vec<f64> = (0..17).map(|i| if i < 11 { 0.9 } else { 0.3 }).collect();
    let settings = Settings {
        max_cost_usd: Some(25.0),
        ..Settings::new(10)
    };
    let (outcome, search) = simulate(&rates, settings, 1.0);
    // Two endpoint probes (20 USD); a third would pass 25 USD.
    assert_eq!(
        outcome,
        Outcome::Range {
            last_good: 0,
            first_bad: 16,
            reason: StopReason::Budget
        }
    );
    assert_eq!(search.spent(), (20, 20.0));
}

#[test]
fn a_search_needs_both_endpoints() {
    assert!(Search::new(releases(1), Settings::new(3)).is_none());
    let search = Search::new(releases(2), Settings::new(3)).unwrap();
    assert_eq!(search.next(), Step::Probe { index: 0, runs: 3 });
}
