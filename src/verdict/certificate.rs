//! A judge's certificate (issue #40): how far one judge profile (grading agent and model,
//! the threshold and votes it grades at) agrees with people's labels, the fingerprint of
//! the judge that earned it, and a review's standing against it.
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
//!
//! A review whose own labels (at least [`FLAG_MIN_LABELS`]) disagree with the pooled
//! judge — the Wilson upper bound of its own agreement below the pooled agreement's lower
//! bound — is flagged ([`FlaggedReview`]) and does not stand as certified.

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
    /// The passing score (1–10) every review of this profile grades at; `None` in a
    /// certificate written before profiles held it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<u8>,
    /// The grading calls per answer of this profile; `None` as for `threshold`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub votes: Option<u32>,
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
    /// Reviews whose own labels disagree with the pooled judge ([`flag`]); such a
    /// review does not stand as certified.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flagged: Vec<FlaggedReview>,
    /// When it was made, RFC 3339 UTC.
    pub date: String,
    /// The bias battery's result per probe (`verdict::bias`); `None` (`null`): not run,
    /// and then not certified.
    #[serde(default)]
    pub bias: Option<Vec<super::bias::ProbeResult>>,
}

/// The fewest labels of one review for its own agreement to be weighed against the pool.
pub const FLAG_MIN_LABELS: u32 = 5;

/// A review whose own labels disagree with the judge its certificate pools.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlaggedReview {
    /// The test's name.
    pub test: String,
    /// The review's criteria.
    pub rubric: String,
    /// The share of its labels the judge agreed with (Wilson 95 %).
    pub agreement: Rate,
    /// The pooled agreement's Wilson lower bound its upper bound is below (0–1).
    pub pooled_low: f64,
}

/// The reviews of `per_review` (each review with its own judge-against-people counts)
/// whose own labels disagree with the judge: at least [`FLAG_MIN_LABELS`] labels, and the
/// Wilson 95 % upper bound of their agreement below the lower bound of the agreement
/// pooled over all of them. A review alone in its profile is never flagged (it is the
/// pool).
pub fn flag(per_review: &[(ReviewPrint, Confusion)]) -> Vec<FlaggedReview> {
    let mut pooled = Confusion::default();
    for (_, c) in per_review {
        pooled.true_pass += c.true_pass;
        pooled.false_fail += c.false_fail;
        pooled.true_fail += c.true_fail;
        pooled.false_pass += c.false_pass;
    }
    let Some(pool) = pooled.agreement() else {
        return Vec::new();
    };
    per_review
        .iter()
        .filter_map(|(review, c)| {
            let own = c.agreement()?;
            (own.n >= FLAG_MIN_LABELS && own.high < pool.low).then(|| FlaggedReview {
                test: review.test.clone(),
                rubric: review.rubric.clone(),
                agreement: own,
                pooled_low: pool.low,
            })
        })
        .collect()
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
            flagged: Vec::new(),
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
/// same profiles (agent, model, threshold and votes) and keeping the others.
///
/// # Errors
/// An unreadable or malformed existing file, or a failed write.
pub fn write(dir: &Path, new: &[Certificate]) -> Result<PathBuf, CertificateError> {
    let mut file = read(dir)?;
    file.version = VERSION;
    file.certificates.retain(|old| {
        !new.iter().any(|n| {
            let (n, o) = (&n.fingerprint, &old.fingerprint);
            // A certificate written before profiles held a threshold and votes was of
            // the agent and model whatever they were: replaced as theirs.
            let same = |old: Option<u32>, new: Option<u32>| old.is_none() || old == new;
            (&n.agent, &n.model) == (&o.agent, &o.model)
                && same(o.threshold.map(u32::from), n.threshold.map(u32::from))
                && same(o.votes, n.votes)
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
/// - Of the agent's certificates, the one closest to this review: covering it exactly,
///   then of the same model, then covering its test and rubric, then its test
///   ([`certificate_of`]); none: `uncertified`.
/// - A review the certificate's labels are not of is `uncertified`; a review of the same
///   test whose rubric, threshold or votes differ is `decertified`, naming them.
/// - The agent's version or the template's differing: `decertified`, naming them.
pub fn status(
    certificates: &Certificates,
    judge: &ReviewJudge<'_>,
    min_lower_bound: f64,
) -> (CertificateStatus, Option<String>) {
    let Some(cert) = certificate_of(certificates, judge) else {
        return (
            CertificateStatus::Uncertified,
            Some(format!(
                "no certificate for the `{}` judge: run `aptitude judge certify`",
                judge.agent
            )),
        );
    };
    let print = &cert.fingerprint;
    let same_test: Vec<&ReviewPrint> = print
        .reviews
        .iter()
        .filter(|r| r.test == judge.review.test)
        .collect();
    if same_test.is_empty() {
        return (
            CertificateStatus::Uncertified,
            Some("the certificate's labels hold no answer to this review: label some".to_owned()),
        );
    }
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
    let covered = same_test.contains(&judge.review);
    let rubric_was;
    if !covered {
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
            None => {
                // One certified review of the test: it is the one edited, name it.
                rubric_was = match same_test.as_slice() {
                    [only] => format!("rubric text (certified as {:?})", only.rubric),
                    _ => "rubric text".to_owned(),
                };
                changed.push(&rubric_was);
            }
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
    if let Some(f) = cert
        .flagged
        .iter()
        .find(|f| f.test == judge.review.test && f.rubric == judge.review.rubric)
    {
        return (
            CertificateStatus::Uncertified,
            Some(format!(
                "flagged: its own {} labels disagree with the judge (agreement {:.3}, upper bound {:.3} below the pooled lower bound {:.3})",
                f.agreement.n, f.agreement.value, f.agreement.high, f.pooled_low
            )),
        );
    }
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

/// The certificate of `judge`'s agent closest to its review: the greatest of (covers the
/// review exactly — test, rubric, threshold and votes —, same model, covers its test and
/// rubric, covers its test); `None` when the agent has none.
pub fn certificate_of<'c>(
    certificates: &'c Certificates,
    judge: &ReviewJudge<'_>,
) -> Option<&'c Certificate> {
    let r = judge.review;
    certificates
        .certificates
        .iter()
        .filter(|c| c.fingerprint.agent == judge.agent)
        .max_by_key(|c| {
            let reviews = &c.fingerprint.reviews;
            (
                reviews.contains(r),
                c.fingerprint.model.as_deref() == judge.model,
                reviews
                    .iter()
                    .any(|p| p.test == r.test && p.rubric == r.rubric),
                reviews.iter().any(|p| p.test == r.test),
            )
        })
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
        let cert = certificate_of(certificates, judge);
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
            threshold: Some(7),
            votes: Some(1),
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

    fn counts(right: (u32, u32), wrong: (u32, u32)) -> Confusion {
        Confusion {
            true_pass: right.0,
            true_fail: right.1,
            false_fail: wrong.0,
            false_pass: wrong.1,
        }
    }

    #[test]
    fn a_review_its_own_labels_contradict_is_flagged_and_stands_uncertified() {
        // Pooled: 32 of 37 agree, Wilson low 0.72; "says 43": 0 of 5, upper 0.43.
        let per_review = vec![
            (print("says 42"), counts((16, 16), (0, 0))),
            (print("says 43"), counts((0, 0), (3, 2))),
        ];
        let flagged = flag(&per_review);
        assert_eq!(flagged.len(), 1, "{flagged:?}");
        assert_eq!(flagged[0].rubric, "says 43");
        assert_eq!(flagged[0].agreement.n, 5);
        assert!(flagged[0].agreement.high < flagged[0].pooled_low);
        // Four labels are too few to weigh, however wrong; alone, a review is the pool.
        let few = vec![
            (print("says 42"), counts((16, 16), (0, 0))),
            (print("says 43"), counts((0, 0), (2, 2))),
        ];
        assert!(flag(&few).is_empty());
        assert!(flag(&[(print("says 43"), counts((0, 0), (3, 2)))]).is_empty());
        // 3 of 5 agree: upper bound 0.88, above the pool's low (35 of 37: 0.82).
        let near = vec![
            (print("says 42"), counts((16, 16), (0, 0))),
            (print("says 43"), counts((2, 1), (1, 1))),
        ];
        assert!(flag(&near).is_empty());

        let mut cert = certificate((16, 0), (16, 0));
        cert.fingerprint.reviews.push(print("says 43"));
        cert.flagged = flagged;
        let certs = Certificates {
            version: VERSION,
            certificates: vec![cert],
        };
        let (s, why) = status(&certs, &judge(&print("says 43"), "0.9"), 0.8);
        assert_eq!(s, CertificateStatus::Uncertified);
        assert!(why.unwrap().starts_with("flagged: its own 5 labels"));
        assert_eq!(
            status(&certs, &judge(&print("says 42"), "0.9"), 0.8).0,
            CertificateStatus::Certified,
            "the others of the profile stay certified"
        );
    }

    #[test]
    fn a_review_takes_the_certificate_of_its_own_threshold_and_model() {
        let mut at_eight = certificate((16, 0), (16, 0));
        at_eight.fingerprint.threshold = Some(8);
        at_eight.fingerprint.reviews = vec![ReviewPrint {
            threshold: 8,
            ..print("says 42")
        }];
        let mut other_model = certificate((16, 0), (16, 0));
        other_model.fingerprint.model = Some("n".into());
        other_model.fingerprint.reviews = vec![print("says 42")];
        let at_seven = certificate((1, 0), (1, 0));
        let certs = Certificates {
            version: VERSION,
            certificates: vec![at_eight, other_model, at_seven],
        };
        let seven = print("says 42");
        let chosen = certificate_of(&certs, &judge(&seven, "0.9")).unwrap();
        assert_eq!(chosen.fingerprint.threshold, Some(7));
        assert_eq!(chosen.fingerprint.model.as_deref(), Some("m"));
        // Its own (ungranted) certificate decides, not the granted one at threshold 8.
        assert_eq!(
            status(&certs, &judge(&seven, "0.9"), 0.8).0,
            CertificateStatus::Uncertified
        );
        let eight = ReviewPrint {
            threshold: 8,
            ..print("says 42")
        };
        assert_eq!(
            status(&certs, &judge(&eight, "0.9"), 0.8).0,
            CertificateStatus::Certified
        );
        // A rubric edit names the rubric it was certified with.
        let one = Certificates {
            version: VERSION,
            certificates: vec![certificate((16, 0), (16, 0))],
        };
        let (_, why) = status(&one, &judge(&print("says 44"), "0.9"), 0.8);
        assert!(
            why.unwrap()
                .contains("rubric text (certified as \"says 42\")")
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
        // Another threshold is another profile: kept beside it.
        let mut at_eight = certificate((1, 0), (1, 0));
        at_eight.fingerprint.threshold = Some(8);
        write(dir.path(), &[at_eight]).unwrap();
        assert_eq!(read(dir.path()).unwrap().certificates.len(), 2);
        // A certificate of before profiles held a threshold is replaced by its agent's.
        let mut old = certificate((1, 0), (1, 0));
        old.fingerprint.threshold = None;
        old.fingerprint.votes = None;
        let other = tempfile::tempdir().unwrap();
        write(other.path(), &[old]).unwrap();
        write(other.path(), &[certificate((16, 0), (16, 0))]).unwrap();
        let back = read(other.path()).unwrap();
        assert_eq!(back.certificates.len(), 1);
        assert_eq!(back.certificates[0].fingerprint.threshold, Some(7));
        std::fs::write(dir.path().join(FILE_NAME), "{\"version\": 1,\n \"x\": 2}").unwrap();
        let e = read(dir.path()).unwrap_err().to_string();
        assert!(e.contains("certificates.json:2:"), "{e}");
    }
}
