//! A judge's certificate (issue #40): how far one judge profile (grading agent and model)
//! agrees with people's labels, the fingerprint of the judge that earned it, and a
//! review's standing against it.
//!
//! `aptitude judge certify` grades every labelled answer again and writes one
//! [`Certificate`] per judge profile, pooled across the reviews its labels are of, into
//! `certificates.json` beside the labels ([`FILE_NAME`]):
//! `{"version": 1, "certificates": [Certificate, …]}`. A certificate is granted
//! (`certified`) when both the TPR and the TNR have labels, no labelled answer failed to
//! grade, and both Wilson 95 % lower bounds reach `min_lower_bound`.
//!
//! It holds only while the judge is the one measured: the grading agent's version, the
//! model, the judge prompt template's version, and each review's rubric text, threshold
//! and votes make the [`JudgeFingerprint`]. A review whose judge differs in any part is
//! `decertified`, naming the parts ([`standing`]).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::agreement::{Confusion, Rate, cohen_kappa, labels_needed};
use crate::spec::judge_gate::{CertificateStatus, JudgeGate, JudgeStanding};

/// The certificates file, inside the labels directory.
pub const FILE_NAME: &str = "certificates.json";
/// The certificates file's format version.
pub const VERSION: u32 = 1;

/// One review a certificate's labels are of: what in it decides a verdict.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ReviewPrint {
    /// The test's name.
    pub test: String,
    /// The review's criteria, whole.
    pub rubric: String,
    /// The passing score, 1–10.
    pub threshold: u8,
    /// Grading calls whose median decides.
    pub votes: u32,
}

/// What made the judge a certificate measured: a change to any part decertifies it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JudgeFingerprint {
    /// The grading agent's name (`claude`, `codex`, …).
    pub agent: String,
    /// Its version as the agent reports it (`2.1.328 (Claude Code)`).
    pub agent_version: String,
    /// The model it grades with; `None`: the agent's own default.
    pub model: Option<String>,
    /// The judge prompt template's version (`assertions::judge::prompt::template_version`).
    pub template: String,
    /// Every review the labels are of, sorted.
    pub reviews: Vec<ReviewPrint>,
}

/// Labels still needed per class for both lower bounds to reach the bound, at the
/// accuracy observed in that class; `None` when no number would do (an accuracy at or
/// below the bound) or the class has no labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabelsNeeded {
    /// More answers people passed.
    pub pass: Option<u32>,
    /// More answers people failed.
    pub fail: Option<u32>,
}

/// One judge profile's agreement with people, and whether it may gate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Certificate {
    /// The judge measured.
    pub fingerprint: JudgeFingerprint,
    /// Of the answers people passed, the share the judge passed (Wilson 95 %); `None`
    /// without such labels.
    pub tpr: Option<Rate>,
    /// Of the answers people failed, the share the judge failed; `None` without such labels.
    pub tnr: Option<Rate>,
    /// Cohen's kappa; `None` when undefined.
    pub kappa: Option<f64>,
    /// The four counts.
    pub confusion: Confusion,
    /// Labelled answers the judge could not grade (each one withholds the certificate).
    pub errors: u32,
    /// The bound both lower bounds had to reach (0–1).
    pub min_lower_bound: f64,
    /// Both lower bounds reached it, with labels in both classes and no grading error.
    pub certified: bool,
    /// Why not, in words, when not certified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why_not: Option<String>,
    /// Labels still needed per class.
    pub labels_needed: LabelsNeeded,
    /// When it was made, RFC 3339 UTC.
    pub date: String,
    /// The bias battery's result per probe (`verdict::bias`); `None` (`null`): not run,
    /// and then not certified.
    #[serde(default)]
    pub bias: Option<Vec<super::bias::ProbeResult>>,
}

impl Certificate {
    /// The certificate of `fingerprint` from the judge's verdicts against people's
    /// (`confusion`) and the answers it could not grade (`errors`).
    pub fn new(
        fingerprint: JudgeFingerprint,
        confusion: Confusion,
        errors: u32,
        min_lower_bound: f64,
        date: String,
    ) -> Self {
        let (tpr, tnr) = (confusion.tpr(), confusion.tnr());
        let needed = |rate: Option<Rate>| {
            let rate = rate?;
            labels_needed(rate.value, min_lower_bound).map(|n| n.saturating_sub(rate.n))
        };
        let why_not = match (tpr, tnr) {
            (None, _) => Some("no answer people passed is labelled".to_owned()),
            (_, None) => Some("no answer people failed is labelled".to_owned()),
            _ if errors > 0 => Some(format!("{errors} labelled answers could not be graded")),
            (Some(p), Some(n)) if p.low < min_lower_bound || n.low < min_lower_bound => {
                Some(format!(
                    "a lower bound is below {min_lower_bound:.2}: TPR {:.3}, TNR {:.3}",
                    p.low, n.low
                ))
            }
            _ => None,
        };
        Certificate {
            fingerprint,
            tpr,
            tnr,
            kappa: cohen_kappa(&confusion),
            confusion,
            errors,
            min_lower_bound,
            certified: why_not.is_none(),
            why_not,
            labels_needed: LabelsNeeded {
                pass: needed(tpr),
                fail: needed(tnr),
            },
            date,
            bias: None,
        }
    }
}

/// The certificates file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Certificates {
    /// The format version, [`VERSION`].
    pub version: u32,
    /// One per judge profile.
    pub certificates: Vec<Certificate>,
}

/// The certificates file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum CertificateError {
    /// An I/O error.
    #[error("can not {action} {}: {source}", path.display())]
    Io {
        /// `read` or `write`.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// Not a certificates file.
    #[error("{}:{line}:{column}: not a certificates file: {source}\nhint: it is written by `aptitude judge certify`; delete it and certify again", path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The parse error.
        #[source]
        source: serde_json::Error,
    },
}

/// The certificates of the labels directory `dir`; none when it has no certificates file.
///
/// # Errors
/// An unreadable or malformed file.
pub fn read(dir: &Path) -> Result<Certificates, CertificateError> {
    let path = dir.join(FILE_NAME);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Certificates::default()),
        Err(source) => {
            return Err(CertificateError::Io {
                action: "read",
                path,
                source,
            });
        }
    };
    serde_json::from_str(&text).map_err(|source| CertificateError::Malformed {
        line: source.line(),
        column: source.column(),
        path,
        source,
    })
}

/// Writes `new` into the certificates file of `dir`, replacing the certificates of the
/// same profiles (agent and model) and keeping the others.
///
/// # Errors
/// An unreadable or malformed existing file, or a failed write.
pub fn write(dir: &Path, new: &[Certificate]) -> Result<PathBuf, CertificateError> {
    let mut file = read(dir)?;
    file.version = VERSION;
    file.certificates.retain(|old| {
        !new.iter().any(|n| {
            n.fingerprint.agent == old.fingerprint.agent
                && n.fingerprint.model == old.fingerprint.model
        })
    });
    file.certificates.extend(new.iter().cloned());
    let path = dir.join(FILE_NAME);
    let io = |action| {
        let path = path.clone();
        move |source| CertificateError::Io {
            action,
            path,
            source,
        }
    };
    std::fs::create_dir_all(dir).map_err(io("write"))?;
    let text = serde_json::to_string_pretty(&file).map_err(|e| io("write")(e.into()))?;
    std::fs::write(&path, text + "\n").map_err(io("write"))?;
    Ok(path)
}

/// A review's judge as it grades in this run: the fingerprint parts of one review.
#[derive(Debug, Clone, Copy)]
pub struct ReviewJudge<'a> {
    /// The grading agent's name.
    pub agent: &'a str,
    /// Its version, as the agent reports it.
    pub agent_version: &'a str,
    /// The model it grades with.
    pub model: Option<&'a str>,
    /// The judge prompt template's version.
    pub template: &'a str,
    /// The review.
    pub review: &'a ReviewPrint,
}

/// The certificate status of `judge` against `certificates` (checked against
/// `min_lower_bound`, which may have been raised since), with why.
///
/// - The certificate of the same agent and model, else the agent's under another model
///   (then `decertified`: the model changed); none: `uncertified`.
/// - A review the certificate's labels are not of is `uncertified`; a review of the same
///   test whose rubric, threshold or votes differ is `decertified`, naming them.
/// - The agent's version or the template's differing: `decertified`, naming them.
pub fn status(
    certificates: &Certificates,
    judge: &ReviewJudge<'_>,
    min_lower_bound: f64,
) -> (CertificateStatus, Option<String>) {
    let of_agent = || {
        certificates
            .certificates
            .iter()
            .filter(|c| c.fingerprint.agent == judge.agent)
    };
    let exact = of_agent().find(|c| c.fingerprint.model.as_deref() == judge.model);
    let Some(cert) = exact.or_else(|| of_agent().next()) else {
        return (
            CertificateStatus::Uncertified,
            Some(format!(
                "no certificate for the `{}` judge: run `aptitude judge certify`",
                judge.agent
            )),
        );
    };
    let print = &cert.fingerprint;
    let mut changed = Vec::new();
    if print.model.as_deref() != judge.model {
        changed.push("model");
    }
    if print.agent_version != judge.agent_version {
        changed.push("agent version");
    }
    if print.template != judge.template {
        changed.push("judge prompt template");
    }
    let same_test: Vec<&ReviewPrint> = print
        .reviews
        .iter()
        .filter(|r| r.test == judge.review.test)
        .collect();
    let covered = same_test.contains(&judge.review);
    if !covered && !same_test.is_empty() {
        let near = same_test.iter().find(|r| r.rubric == judge.review.rubric);
        match near {
            Some(r) => {
                if r.threshold != judge.review.threshold {
                    changed.push("threshold");
                }
                if r.votes != judge.review.votes {
                    changed.push("votes");
                }
            }
            None => changed.push("rubric text"),
        }
    }
    if !changed.is_empty() {
        return (
            CertificateStatus::Decertified,
            Some(format!(
                "changed since certified: {}; run `aptitude judge certify` again",
                changed.join(", ")
            )),
        );
    }
    if !covered {
        return (
            CertificateStatus::Uncertified,
            Some("the certificate's labels hold no answer to this review: label some".to_owned()),
        );
    }
    let bound_held = [cert.tpr, cert.tnr]
        .iter()
        .all(|r| r.is_some_and(|r| r.low >= min_lower_bound));
    if !cert.certified || !bound_held {
        let why = cert
            .why_not
            .clone()
            .unwrap_or_else(|| format!("a lower bound is below {min_lower_bound:.2}"));
        return (
            CertificateStatus::Uncertified,
            Some(format!("not certified: {why}")),
        );
    }
    (CertificateStatus::Certified, None)
}

/// A review's standing under `gate`, from its [`status`].
pub fn standing(
    gate: JudgeGate,
    certificates: &Certificates,
    judge: &ReviewJudge<'_>,
    min_lower_bound: f64,
) -> JudgeStanding {
    let (status, why) = status(certificates, judge, min_lower_bound);
    let mut standing = JudgeStanding::new(gate, status, why);
    if status == CertificateStatus::Certified {
        let cert = certificates.certificates.iter().find(|c| {
            c.fingerprint.agent == judge.agent && c.fingerprint.model.as_deref() == judge.model
        });
        standing.rates = cert.and_then(|c| {
            Some(crate::spec::judge_gate::CertifiedRates {
                profile: format!(
                    "{} {}, model {}",
                    c.fingerprint.agent,
                    c.fingerprint.agent_version,
                    c.fingerprint.model.as_deref().unwrap_or("default")
                ),
                tpr: c.tpr?.value,
                tnr: c.tnr?.value,
            })
        });
    }
    standing
}

#[cfg(test)]
mod tests {
    use super::*;

    fn print(rubric: &str) -> ReviewPrint {
        ReviewPrint {
            test: "t".into(),
            rubric: rubric.into(),
            threshold: 7,
            votes: 1,
        }
    }

    fn certificate(pass: (u32, u32), fail: (u32, u32)) -> Certificate {
        let confusion = Confusion {
            true_pass: pass.0,
            false_fail: pass.1,
            true_fail: fail.0,
            false_pass: fail.1,
        };
        let fingerprint = JudgeFingerprint {
            agent: "codex".into(),
            agent_version: "0.9".into(),
            model: Some("m".into()),
            template: "tpl1".into(),
            reviews: vec![print("says 42")],
        };
        Certificate::new(
            fingerprint,
            confusion,
            0,
            0.8,
            "2026-11-28T12:00:00Z".into(),
        )
    }

    fn judge<'a>(review: &'a ReviewPrint, version: &'a str) -> ReviewJudge<'a> {
        ReviewJudge {
            agent: "codex",
            agent_version: version,
            model: Some("m"),
            template: "tpl1",
            review,
        }
    }

    #[test]
    fn a_certificate_needs_both_lower_bounds_and_both_classes() {
        // 16 of 16 each way: Wilson lower bound 0.806 ≥ 0.80.
        let c = certificate((16, 0), (16, 0));
        assert!(c.certified, "{:?}", c.why_not);
        assert_eq!(
            c.labels_needed,
            LabelsNeeded {
                pass: Some(0),
                fail: Some(0)
            }
        );
        // 15 of 15: 0.796, just short.
        let c = certificate((15, 0), (16, 0));
        assert!(!c.certified);
        assert_eq!(c.labels_needed.pass, Some(1));
        // No failing labels at all: never certified, whatever the passes.
        let c = certificate((100, 0), (0, 0));
        assert!(!c.certified);
        assert_eq!(
            c.why_not.as_deref(),
            Some("no answer people failed is labelled")
        );
        assert_eq!(c.tnr, None);
        // A grading error withholds it.
        let mut c = certificate((16, 0), (16, 0));
        c = Certificate::new(c.fingerprint, c.confusion, 1, 0.8, c.date);
        assert!(!c.certified);
    }

    #[test]
    fn any_fingerprint_change_decertifies_naming_it() {
        let certs = Certificates {
            version: VERSION,
            certificates: vec![certificate((16, 0), (16, 0))],
        };
        let same = print("says 42");
        assert_eq!(
            status(&certs, &judge(&same, "0.9"), 0.8),
            (CertificateStatus::Certified, None)
        );
        let (s, why) = status(&certs, &judge(&same, "1.0"), 0.8);
        assert_eq!(s, CertificateStatus::Decertified);
        assert!(why.unwrap().contains("agent version"));
        let edited = print("says 43");
        let (s, why) = status(&certs, &judge(&edited, "0.9"), 0.8);
        assert_eq!(s, CertificateStatus::Decertified);
        assert!(why.unwrap().contains("rubric text"));
        let stricter = ReviewPrint {
            threshold: 8,
            ..print("says 42")
        };
        let (s, why) = status(&certs, &judge(&stricter, "0.9"), 0.8);
        assert_eq!(s, CertificateStatus::Decertified);
        assert!(why.unwrap().contains("threshold"));
        let other_test = ReviewPrint {
            test: "u".into(),
            ..print("says 42")
        };
        assert_eq!(
            status(&certs, &judge(&other_test, "0.9"), 0.8).0,
            CertificateStatus::Uncertified
        );
        // A bound raised above what the certificate reached: no longer certified.
        assert_eq!(
            status(&certs, &judge(&same, "0.9"), 0.9).0,
            CertificateStatus::Uncertified
        );
        assert_eq!(
            status(&Certificates::default(), &judge(&same, "0.9"), 0.8).0,
            CertificateStatus::Uncertified
        );
    }

    #[test]
    fn certificates_round_trip_and_replace_their_profile() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &[certificate((1, 0), (1, 0))]).unwrap();
        write(dir.path(), &[certificate((16, 0), (16, 0))]).unwrap();
        let back = read(dir.path()).unwrap();
        assert_eq!(back.certificates.len(), 1);
        assert!(back.certificates[0].certified);
        std::fs::write(dir.path().join(FILE_NAME), "{\"version\": 1,\n \"x\": 2}").unwrap();
        let e = read(dir.path()).unwrap_err().to_string();
        assert!(e.contains("certificates.json:2:"), "{e}");
    }
}
