//! The HTML report's label controls (issue #40): under each judged answer, a person's
//! pass/fail on each of its graded reviews, with an optional note, and in the header a
//! rater field and a button that downloads the labels as the JSONL
//! [`crate::verdict::labels`] reads (`.aptitude/labels/*.jsonl`).
//!
//! What a label must hold exactly — the test's name, the review's criteria, the whole
//! answer and its SHA-256 — is embedded at render time, not read back from the page's
//! text: the page shows the answer cut and made inert ([`crate::shared::inert::document`]
//! turns an escape byte into `^[`), and `crypto.subtle` is missing from a page opened from
//! disk (`file://` is not a secure context). Each value is JSON with every character
//! outside printable ASCII written `\uXXXX` ([`ascii_json`]), in an attribute askama
//! escapes: no agent text reaches the page as markup or as a control byte, and the page's
//! script reads the exact strings back with `JSON.parse`.
//!
//! The script ([`SCRIPT`]) is in the page once, and only when the page has a judged
//! answer; without JavaScript the controls, which would do nothing, are not shown.

use serde::Serialize;

use crate::verdict::labels::{JudgedAnswer, judged_answers_of_run};
use crate::verdict::results::TestResult;

/// The label controls of one judged answer (`templates/labels.html`).
pub(super) struct AnswerLabels {
    /// `{"test", "answer", "answer_sha256"}` as [`ascii_json`].
    pub data: String,
    /// Its heading's level: 2 under a test run once, 3 inside a repeated test's run.
    pub level: u8,
    /// What the section is about, for its accessible name (`Final answer of …`).
    pub of: String,
    /// One fieldset per graded review of the answer.
    pub reviews: Vec<ReviewLabel>,
}

/// One graded review's pass/fail controls.
pub(super) struct ReviewLabel {
    /// The radio group's name, unique in the page: `t3-l0`, `t3-r2-l1`.
    pub name: String,
    /// The review's criteria, shown (the body is made inert as a whole).
    pub review: String,
    /// The criteria as [`ascii_json`], for the label.
    pub data: String,
    /// The judge's verdict in words: `9/10, threshold 7 → pass`.
    pub judge: String,
}

/// The fields of a label that come from the results, as the page's script reads them.
#[derive(Serialize)]
struct AnswerData<'a> {
    test: &'a str,
    answer: &'a str,
    answer_sha256: String,
}

/// The label controls of `run`'s judged answer, `None` when it has none (no final answer,
/// or no graded review). `id` is the run's anchor (`t3`, `t3-r2`), which makes the radio
/// groups' names unique.
pub(super) fn answer_labels(
    run: &TestResult,
    id: &str,
    level: u8,
    of: &str,
) -> Option<AnswerLabels> {
    let judged = judged_answers_of_run(run);
    let first: &JudgedAnswer = judged.first()?;
    let data = ascii_json(&AnswerData {
        test: &first.test,
        answer: &first.answer,
        answer_sha256: first.answer_sha256(),
    });
    let reviews = judged
        .iter()
        .enumerate()
        .map(|(i, j)| ReviewLabel {
            name: format!("{id}-l{i}"),
            review: j.review.clone(),
            data: ascii_json(&j.review),
            judge: format!(
                "{}/10, threshold {} → {}",
                j.score,
                j.threshold,
                if j.judge_passed() { "pass" } else { "fail" }
            ),
        })
        .collect();
    Some(AnswerLabels {
        data,
        level,
        of: of.to_owned(),
        reviews,
    })
}

/// Whether some run of `tests` has a judged answer: the page then carries the rater field,
/// the download button and [`SCRIPT`]. Cheaper than [`judged_answers_of_run`]: it clones
/// no answer.
pub(super) fn any_judged(tests: &[TestResult]) -> bool {
    let judged = |r: &TestResult| {
        r.transcript
            .as_ref()
            .is_some_and(|t| t.final_text.is_some())
            && r.assertions.iter().any(|a| {
                a.score.is_some()
                    && a.threshold.is_some()
                    && a.description.starts_with("stdout review: \"")
            })
    };
    tests.iter().any(|t| judged(t) || t.runs.iter().any(judged))
}

/// `value` as JSON in printable ASCII alone: every other character, in a string, is
/// written `\uXXXX` (UTF-16, a surrogate pair above U+FFFF), which `JSON.parse` reads back
/// to the same string. So nothing in it is changed by [`crate::shared::inert::document`]
/// or read as markup once askama has escaped its quotes.
pub(super) fn ascii_json<T: Serialize + ?Sized>(value: &T) -> String {
    use std::fmt::Write as _;
    // Strings and a struct of strings: serializing can not fail.
    let json = serde_json::to_string(value).unwrap_or_default();
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if c == ' ' || c.is_ascii_graphic() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                let _ = write!(out, "\\u{u:04x}");
            }
        }
    }
    out
}

/// The label controls' script, appended to the page's script when the page has a judged
/// answer (the Content-Security-Policy allows the whole by its hash).
///
/// It shows the rater bar and the controls (`html.labelling`), and keeps the labels in
/// memory keyed by test, review and answer hash, so an answer's controls in a large
/// suite's details, unpacked later, and a repeated test's identical answers share one
/// label. They are kept in `localStorage` too, per file path, when the browser allows it
/// (a page from disk may not), and put back into the controls after a reload. The
/// download is one label a line with the fields and order of
/// [`crate::verdict::labels::Label`]; `date` is when the verdict was chosen, RFC 3339 UTC
/// to the second; a download needs a rater's name.
pub(super) const SCRIPT: &str = include_str!("../../templates/labels.js");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_json_reads_back_to_the_same_string_in_printable_ascii() {
        let text = "é \u{1b}[31m <script> \"q\" \u{7f} \u{202e} 🦀";
        let json = ascii_json(text);
        assert!(
            json.chars().all(|c| c == ' ' || c.is_ascii_graphic()),
            "{json}"
        );
        assert!(
            json.contains(r"\u00e9") && json.contains(r"\ud83e\udd80"),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<String>(&json).unwrap(), text);
        assert_eq!(crate::shared::inert::document(&json), json);
    }
}
