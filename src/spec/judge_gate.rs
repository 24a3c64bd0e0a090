//! Whether an LLM judge's verdict gates a test (issue #40): `judge: {gate}` in
//! `aptitude.yaml` and `gate:` on a `stdout` review, and the standing a review's judge has
//! against its certificate once the run knows the grading agent's version.
//!
//! A judge is certified by `aptitude judge certify` when its verdicts agree with people's
//! labels (`verdict::certificate`). The gate says what an uncertified judge's verdict does:
//! - `always` (the default): it gates as a check, and every report says the judge is
//!   uncertified. The default because turning a failing review into an advisory one would
//!   make tests that fail today pass: a false pass must never come from the default.
//! - `certified`: it gates only with a valid certificate; otherwise the review is
//!   advisory: its score is shown, marked advisory, and it never fails the test.
//! - `advisory`: it never gates, certified or not.

use serde::{Deserialize, Serialize};

/// `gate:` values, as written in YAML.
pub const GATE_NAMES: &[&str] = &["always", "certified", "advisory"];

/// When a review's verdict counts towards its test's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JudgeGate {
    /// The verdict always counts (today's behaviour); an uncertified judge is said so.
    #[default]
    Always,
    /// The verdict counts only when the judge holds a valid certificate.
    Certified,
    /// The verdict never counts; it is shown.
    Advisory,
}

impl JudgeGate {
    /// The YAML word (`always`, `certified`, `advisory`).
    pub fn name(self) -> &'static str {
        match self {
            JudgeGate::Always => "always",
            JudgeGate::Certified => "certified",
            JudgeGate::Advisory => "advisory",
        }
    }

    /// The gate written `word`; `None` for any other word.
    pub fn parse(word: &str) -> Option<JudgeGate> {
        match word {
            "always" => Some(JudgeGate::Always),
            "certified" => Some(JudgeGate::Certified),
            "advisory" => Some(JudgeGate::Advisory),
            _ => None,
        }
    }
}

/// The default lowest Wilson 95 % lower bound of both the TPR and the TNR a certified
/// judge reaches (issue #40, after the "no calibration, no gate" rule).
pub const DEFAULT_MIN_LOWER_BOUND: f64 = 0.80;

/// A test's `judge: {labels, min_lower_bound}`, from the `aptitude.yaml` files above it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JudgeTrust {
    /// The labels directory, resolved against the `aptitude.yaml` that names it; `None`:
    /// `.aptitude/labels` of the current directory.
    pub labels: Option<std::path::PathBuf>,
    /// The bound both rates' lower bounds must reach (0–1); `None`:
    /// [`DEFAULT_MIN_LOWER_BOUND`].
    pub min_lower_bound: Option<f64>,
    /// Where `min_lower_bound` was written: the `aptitude.yaml` and the key's 1-based line.
    pub min_lower_bound_at: Option<(std::path::PathBuf, u32)>,
}

/// Where a review's judge stands against the certificates beside the labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CertificateStatus {
    /// A certificate for this judge profile and review holds, and its fingerprint matches.
    Certified,
    /// No certificate covers this review, or the one that does was not granted.
    Uncertified,
    /// A certificate covered it, but a part of the judge's fingerprint changed since.
    Decertified,
}

impl CertificateStatus {
    /// The word shown in reports (`certified`, `uncertified`, `decertified`).
    pub fn name(self) -> &'static str {
        match self {
            CertificateStatus::Certified => "certified",
            CertificateStatus::Uncertified => "uncertified",
            CertificateStatus::Decertified => "decertified",
        }
    }
}

/// A review's judge's standing for one run: its gate, its certificate status, and whether
/// its verdict is therefore advisory (shown, never failing the test).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeStanding {
    /// The review's gate.
    pub gate: JudgeGate,
    /// The judge's certificate status.
    pub certificate: CertificateStatus,
    /// `true` when the verdict does not count towards the test's status.
    pub advisory: bool,
    /// Why, in words: what no certificate covers, or which fingerprint parts changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// A certified judge's profile (`claude 2.1.328 (Claude Code), model default`) and its
    /// certificate's TPR and TNR (0–1), for the pass rate corrected for its errors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rates: Option<CertifiedRates>,
}

/// The rates of a judge's granted certificate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CertifiedRates {
    /// The judge profile, in words.
    pub profile: String,
    /// True-positive rate, 0–1.
    pub tpr: f64,
    /// True-negative rate, 0–1.
    pub tnr: f64,
}

impl JudgeStanding {
    /// The standing of a judge under `gate` with `certificate` status: advisory under
    /// `advisory`, and under `certified` unless the certificate holds.
    pub fn new(gate: JudgeGate, certificate: CertificateStatus, why: Option<String>) -> Self {
        let advisory = match gate {
            JudgeGate::Always => false,
            JudgeGate::Certified => certificate != CertificateStatus::Certified,
            JudgeGate::Advisory => true,
        };
        JudgeStanding {
            gate,
            certificate,
            advisory,
            why,
            rates: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_certified_judge_gates_under_certified_and_always_always_gates() {
        use CertificateStatus::*;
        let advisory = |gate, cert| JudgeStanding::new(gate, cert, None).advisory;
        assert!(!advisory(JudgeGate::Certified, Certified));
        assert!(advisory(JudgeGate::Certified, Uncertified));
        assert!(advisory(JudgeGate::Certified, Decertified));
        assert!(!advisory(JudgeGate::Always, Uncertified));
        assert!(!advisory(JudgeGate::Always, Decertified));
        assert!(advisory(JudgeGate::Advisory, Certified));
        assert_eq!(JudgeGate::default(), JudgeGate::Always);
        for name in GATE_NAMES {
            assert_eq!(JudgeGate::parse(name).map(JudgeGate::name), Some(*name));
        }
    }
}
