//! Statistics for verdicts under non-determinism: how sure a pass rate is, what repeated
//! runs predict, and whether a drop in pass rate is more than noise.
//!
//! A real model does not do the same thing twice, so a test run N times yields c passes out
//! of n runs. These functions turn such counts into the figures reports show:
//! - [`wilson_interval`]: the 95% Wilson score interval of a pass rate (Wilson 1927), which
//!   unlike the normal approximation stays inside 0–1 and behaves at 0/n and n/n;
//! - [`pass_at_k`]: the unbiased estimate of pass@k, the chance that at least one of k runs
//!   passes, `1 − C(n−c, k) / C(n, k)` (Chen et al. 2021, "Evaluating Large Language Models
//!   Trained on Code", the Codex/HumanEval paper);
//! - [`pass_hat_k`]: the unbiased estimate of pass^k, the chance that all of k runs pass,
//!   `C(c, k) / C(n, k)` (Yao et al. 2024, τ-bench);
//! - [`fisher_exact_less`]: the one-sided Fisher exact test on a 2×2 table, the p-value that
//!   a pass rate fell (as `scipy.stats.fisher_exact(table, alternative="less")`);
//! - [`fisher_exact_two_sided`]: the two-sided Fisher exact test, the p-value that two pass
//!   rates differ either way (as `scipy.stats.fisher_exact(table)`), for variants compared
//!   with `default`.
//!
//! Counts are run counts (`u32`); probabilities and rates are `f64` in 0–1.

/// The two-sided 95% normal quantile, z₀.₉₇₅.
const Z_95: f64 = 1.959_963_984_540_054;

/// A closed interval of rates, each in 0–1.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Interval {
    /// The lower bound.
    pub low: f64,
    /// The upper bound.
    pub high: f64,
}

/// The 95% Wilson score interval for `passed` successes out of `runs`; `None` when `runs`
/// is 0 or `passed > runs`.
pub fn wilson_interval(passed: u32, runs: u32) -> Option<Interval> {
    if runs == 0 || passed > runs {
        return None;
    }
    wilson_interval_of_rate(f64::from(passed) / f64::from(runs), runs)
}

/// The 95% Wilson score interval of a rate `p` (0–1) observed over `n` observations — a
/// proportion, or a mean of per-item rates (a routing figure: the mean of its prompts'
/// trigger rates, with n the prompts); `None` when `n` is 0 or `p` is outside 0–1. Equals
/// [`wilson_interval`]`(c, n)` when `p = c/n`.
pub fn wilson_interval_of_rate(p: f64, n: u32) -> Option<Interval> {
    if n == 0 || !(0.0..=1.0).contains(&p) {
        return None;
    }
    let n = f64::from(n);
    let z2 = Z_95 * Z_95;
    let denominator = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denominator;
    let half = Z_95 * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denominator;
    Some(Interval {
        // At 0 and 1 the bound is exactly 0 or 1; rounding must not move it.
        low: if p == 0.0 {
            0.0
        } else {
            (centre - half).max(0.0)
        },
        high: if p == 1.0 {
            1.0
        } else {
            (centre + half).min(1.0)
        },
    })
}

/// The unbiased pass@k estimate from `passed` of `runs`: the chance that at least one of
/// `k` runs drawn without replacement passes. `None` unless `1 ≤ k ≤ runs` and
/// `passed ≤ runs`.
///
/// Computed as `1 − ∏_{i=n−c+1}^{n} (1 − k/i)`, the numerically stable product form given
/// with the estimator in the Codex paper.
pub fn pass_at_k(runs: u32, passed: u32, k: u32) -> Option<f64> {
    if k == 0 || k > runs || passed > runs {
        return None;
    }
    if runs - passed < k {
        return Some(1.0);
    }
    let k = f64::from(k);
    let all_fail: f64 = (runs - passed + 1..=runs)
        .map(|i| 1.0 - k / f64::from(i))
        .product();
    Some(1.0 - all_fail)
}

/// The unbiased pass^k estimate from `passed` of `runs`: the chance that all of `k` runs
/// drawn without replacement pass, `C(c, k) / C(n, k)`. `None` unless `1 ≤ k ≤ runs` and
/// `passed ≤ runs`.
pub fn pass_hat_k(runs: u32, passed: u32, k: u32) -> Option<f64> {
    if k == 0 || k > runs || passed > runs {
        return None;
    }
    if passed < k {
        return Some(0.0);
    }
    // C(c, k) / C(n, k) = ∏_{i=0}^{k−1} (c − i) / (n − i)
    Some(
        (0..k)
            .map(|i| f64::from(passed - i) / f64::from(runs - i))
            .product(),
    )
}

/// `ln C(n, k)`, summed term by term (exact enough for run counts in the thousands).
fn ln_choose(n: u32, k: u32) -> f64 {
    let k = k.min(n - k);
    (1..=k)
        .map(|i| (f64::from(n - k + i) / f64::from(i)).ln())
        .sum()
}

/// The one-sided Fisher exact test of a 2×2 table `[[a, b], [c, d]]`: the probability,
/// with the margins fixed, of a top-left cell as small as `a` or smaller — small when the
/// first row's odds `a/b` are lower than the second row's `c/d`.
///
/// For a regression check, the first row is this run's (passed, not passed) and the second
/// the baseline's: a small p-value says the pass rate really fell. Equals
/// `scipy.stats.fisher_exact([[a, b], [c, d]], alternative="less").pvalue`.
pub fn fisher_exact_less(table: [[u32; 2]; 2]) -> f64 {
    let [[a, b], [c, d]] = table;
    let row1 = a + b;
    let col1 = a + c;
    let n = row1 + c + d;
    let min_a = (row1 + col1).saturating_sub(n);
    let ln_total = ln_choose(n, row1);
    // P(X = x) for the hypergeometric law of the top-left cell.
    let probability =
        |x: u32| (ln_choose(col1, x) + ln_choose(n - col1, row1 - x) - ln_total).exp();
    let p: f64 = (min_a..=a).map(probability).sum();
    p.min(1.0)
}

/// The two-sided Fisher exact test of a 2×2 table `[[a, b], [c, d]]`: the probability,
/// with the margins fixed, of a table as unlikely as this one or less — small when the rows'
/// odds differ either way.
///
/// For a variant compared with `default`, the first row is the variant's (passed, not
/// passed) and the second the default's. Tables whose probability equals the observed one
/// within a relative 1e-7 count as "as unlikely" (R's `fisher.test` tolerance), so that
/// rounding can not drop a tie. Equals `scipy.stats.fisher_exact([[a, b], [c, d]]).pvalue`;
/// 1 for a table with an empty row or column.
pub fn fisher_exact_two_sided(table: [[u32; 2]; 2]) -> f64 {
    let [[a, b], [c, d]] = table;
    let row1 = a + b;
    let col1 = a + c;
    let n = row1 + c + d;
    let min_a = (row1 + col1).saturating_sub(n);
    let max_a = row1.min(col1);
    let ln_total = ln_choose(n, row1);
    let probability =
        |x: u32| (ln_choose(col1, x) + ln_choose(n - col1, row1 - x) - ln_total).exp();
    let observed = probability(a) * (1.0 + 1e-7);
    let p: f64 = (min_a..=max_a)
        .map(probability)
        .filter(|p| *p <= observed)
        .sum();
    p.min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn close(actual: f64, expected: f64) {
        assert!(
            (actual - expected).abs() <= 1e-12 * expected.abs().max(1e-300) + 1e-15,
            "{actual} != {expected}"
        );
    }

    /// Reference values from scipy 1.14.1,
    /// `binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")`.
    #[test]
    fn wilson_interval_matches_scipy() {
        for (passed, runs, low, high) in [
            (3, 5, 0.230_724_281_276_012_97, 0.882_379_225_767_352_1),
            (0, 5, 0.0, 0.434_482_464_783_174_76),
            (5, 5, 0.565_517_535_216_825_1, 1.0),
            (1, 10, 0.017_876_213_095_072_896, 0.404_150_026_795_238_5),
            (81, 263, 0.255_288_519_878_274_2, 0.366_209_576_982_800_04),
        ] {
            let interval = wilson_interval(passed, runs).unwrap();
            close(interval.low, low);
            close(interval.high, high);
        }
        assert_eq!(wilson_interval(0, 0), None);
        assert_eq!(wilson_interval(6, 5), None);
    }

    /// Reference values computed exactly with Python's `fractions` and `math.comb` from the
    /// papers' definitions: pass@k = 1 − C(n−c,k)/C(n,k), pass^k = C(c,k)/C(n,k).
    #[test]
    fn pass_at_k_and_pass_hat_k_match_their_definitions() {
        for (runs, passed, k, at_k, hat_k) in [
            (5, 3, 1, 0.6, 0.6),
            (5, 3, 2, 0.9, 0.3),
            (5, 3, 3, 1.0, 0.1),
            (10, 1, 5, 0.5, 0.0),
            (
                200,
                13,
                10,
                0.497_551_114_730_606_15,
                1.273_885_105_822_108_7e-14,
            ),
            (5, 0, 1, 0.0, 0.0),
            (5, 5, 5, 1.0, 1.0),
        ] {
            close(pass_at_k(runs, passed, k).unwrap(), at_k);
            close(pass_hat_k(runs, passed, k).unwrap(), hat_k);
        }
        assert_eq!(pass_at_k(5, 3, 0), None);
        assert_eq!(pass_at_k(5, 3, 6), None);
        assert_eq!(pass_hat_k(5, 6, 1), None);
    }

    /// Reference values from scipy 1.14.1,
    /// `fisher_exact(table, alternative="less").pvalue`.
    #[test]
    fn fisher_exact_less_matches_scipy() {
        for (table, p) in [
            ([[7, 17], [15, 5]], 0.002_884_193_375_234_974_3),
            ([[1, 4], [5, 0]], 0.023_809_523_809_523_81),
            ([[3, 2], [3, 2]], 0.738_095_238_095_238_1),
            ([[0, 10], [10, 0]], 5.412_544_112_234_515e-6),
            ([[1, 4], [4, 1]], 0.103_174_603_174_603_2),
            ([[2, 3], [5, 0]], 0.083_333_333_333_333_33),
            ([[5, 0], [1, 4]], 1.0),
        ] {
            close(fisher_exact_less(table), p);
        }
    }

    /// Reference values from scipy 1.14.1, `fisher_exact(table).pvalue` (two-sided).
    #[test]
    fn fisher_exact_two_sided_matches_scipy() {
        for (table, p) in [
            ([[0, 2], [2, 0]], 0.333_333_333_333_333_3),
            ([[2, 0], [0, 2]], 0.333_333_333_333_333_3),
            ([[7, 17], [15, 5]], 0.005_768_386_750_469_949),
            ([[1, 4], [5, 0]], 0.047_619_047_619_047_616),
            ([[5, 0], [1, 4]], 0.047_619_047_619_047_616),
            ([[3, 2], [3, 2]], 1.0),
            ([[0, 10], [10, 0]], 1.082_508_822_446_903e-5),
            ([[1, 4], [4, 1]], 0.206_349_206_349_206_4),
            ([[2, 3], [5, 0]], 0.166_666_666_666_666_66),
            ([[3, 7], [9, 1]], 0.019_766_611_097_880_443),
            ([[0, 5], [5, 0]], 0.007_936_507_936_507_938),
            ([[12, 30], [25, 8]], 6.555_122_466_351_075e-5),
            ([[0, 0], [3, 2]], 1.0),
        ] {
            close(fisher_exact_two_sided(table), p);
        }
    }
}
