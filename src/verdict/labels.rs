//! People's verdicts on judged answers: the labels an LLM judge is measured against
//! before it may gate a test (issue #40).
//!
//! A label is one JSON object a line (JSONL) in a file of the labels directory
//! (`.aptitude/labels/` by default, `aptitude judge label --labels DIR`):
//! `{"test", "review", "answer", "answer_sha256", "verdict": "pass"|"fail", "rater",
//! "date", "note"?}`. The answer is kept whole, so that the judge can grade it again
//! without the run; its SHA-256 (lowercase hex of the UTF-8 bytes) names it, so that the
//! same answer is labelled once per rater and a label whose answer was edited by hand is
//! refused. Every `*.jsonl` file of the directory is read, in name order, so labels from
//! several people or the HTML report's download can sit side by side.
//!
//! The judged answers to label come from a results JSON ([`judged_answers`]): every
//! graded `stdout` review of every run, with the run's final answer.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::results::Results;
use super::test_result::TestResult;

/// The labels directory when none is configured, relative to the current directory.
pub const DEFAULT_DIR: &str = ".aptitude/labels";
/// The file `aptitude judge label` appends to, inside the labels directory.
pub const FILE_NAME: &str = "labels.jsonl";

/// A person's verdict on an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LabelVerdict {
    /// The answer meets the review's criteria.
    Pass,
    /// It does not.
    Fail,
}

/// One person's verdict on one judged answer: a line of a labels file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Label {
    /// The test's name.
    pub test: String,
    /// The review's criteria, as written in the test file.
    pub review: String,
    /// The answer judged: the run's final answer, whole.
    pub answer: String,
    /// SHA-256 of `answer` (UTF-8), lowercase hex.
    pub answer_sha256: String,
    /// The person's verdict.
    pub verdict: LabelVerdict,
    /// Who labelled (`$USER` by default).
    pub rater: String,
    /// When, RFC 3339 UTC to the second.
    pub date: String,
    /// Why, in the rater's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A graded review of one run, with the answer it graded: something to label.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgedAnswer {
    /// The test's name.
    pub test: String,
    /// The review's criteria.
    pub review: String,
    /// The run's final answer.
    pub answer: String,
    /// The judge's score, 1–10.
    pub score: u8,
    /// The passing score, 1–10.
    pub threshold: u8,
}

impl JudgedAnswer {
    /// SHA-256 of the answer, lowercase hex.
    pub fn answer_sha256(&self) -> String {
        sha256_hex(&self.answer)
    }

    /// The judge's verdict: the score reached the threshold.
    pub fn judge_passed(&self) -> bool {
        self.score >= self.threshold
    }
}

/// SHA-256 of `text` (UTF-8 bytes), lowercase hex.
pub fn sha256_hex(text: &str) -> String {
    crate::shared::hex(&Sha256::digest(text.as_bytes()))
}

/// A labels file that can not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum LabelError {
    /// The directory or a file could not be read or written.
    #[error("can not {action} {}: {source}", path.display())]
    Io {
        /// `read` or `write`.
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A line is not a label.
    #[error("{}:{line}:{column}: not a label: {message}\n  | {text}\nhint: each line is one JSON object {{\"test\", \"review\", \"answer\", \"answer_sha256\", \"verdict\": \"pass\"|\"fail\", \"rater\", \"date\", \"note\"?}}", path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column of the problem.
        column: usize,
        /// The line, cut to 120 characters.
        text: String,
        /// What is wrong.
        message: String,
    },
}

/// The graded reviews of `results` with their answers, in test and run order: a run
/// without a final answer, or a review not graded (error, skip), has nothing to label.
pub fn judged_answers(results: &Results) -> Vec<JudgedAnswer> {
    let mut out = Vec::new();
    for test in &results.tests {
        if test.runs.is_empty() {
            push_answers(test, &mut out);
        } else {
            for run in &test.runs {
                push_answers(run, &mut out);
            }
        }
    }
    out
}

/// The graded reviews of one run (or of a test run once, whose result is its run) with
/// its final answer, in assertion order: what the HTML report puts label controls on.
/// Empty without a final answer or a graded review, as in [`judged_answers`].
pub fn judged_answers_of_run(run: &TestResult) -> Vec<JudgedAnswer> {
    let mut out = Vec::new();
    push_answers(run, &mut out);
    out
}

fn push_answers(run: &TestResult, out: &mut Vec<JudgedAnswer>) {
    let Some(answer) = run.transcript.as_ref().and_then(|t| t.final_text.clone()) else {
        return;
    };
    for a in &run.assertions {
        let (Some(score), Some(threshold)) = (a.score, a.threshold) else {
            continue;
        };
        let Some(review) = criteria_of(&a.description) else {
            continue;
        };
        out.push(JudgedAnswer {
            test: run.name.clone(),
            review,
            answer: answer.clone(),
            score,
            threshold,
        });
    }
}

/// The criteria of a review's description, `stdout review: "…" (score: …)`, where the
/// criteria are Rust-`Debug` quoted (`src/assertions/mod.rs`, `review`). `None` for any
/// other description.
fn criteria_of(description: &str) -> Option<String> {
    let mut chars = description.strip_prefix("stdout review: \"")?.chars();
    let mut out = String::new();
    loop {
        match chars.next()? {
            '"' => return Some(out),
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                '0' => out.push('\0'),
                'u' => {
                    // `\u{1b}`
                    let rest: String = chars.by_ref().take_while(|&c| c != '}').collect();
                    let code = u32::from_str_radix(rest.strip_prefix('{')?, 16).ok()?;
                    out.push(char::from_u32(code)?);
                }
                other => out.push(other),
            },
            c => out.push(c),
        }
    }
}

/// Every label of every `*.jsonl` file in `dir`, files in name order, lines in order; a
/// missing directory holds none. A line that is not a label, or whose `answer_sha256` is
/// not its answer's, is an error naming the file, line and column.
pub fn read_dir(dir: &Path) -> Result<Vec<Label>, LabelError> {
    let io = |path: &Path, source| LabelError::Io {
        action: "read",
        path: path.to_owned(),
        source,
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io(dir, e)),
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    let mut labels = Vec::new();
    for file in files {
        // A FIFO or device named `*.jsonl` is refused, not waited on.
        let text = crate::shared::files::open_regular_file(&file)
            .and_then(|mut f| {
                let mut text = String::new();
                std::io::Read::read_to_string(&mut f, &mut text).map(|_| text)
            })
            .map_err(|e| io(&file, e))?;
        labels.extend(parse(&file, &text)?);
    }
    Ok(labels)
}

/// The labels of one file's text; blank lines are skipped.
pub fn parse(path: &Path, text: &str) -> Result<Vec<Label>, LabelError> {
    let mut labels = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let malformed = |column: usize, message: String| LabelError::Malformed {
            path: path.to_owned(),
            line: i + 1,
            column,
            text: line.chars().take(120).collect(),
            message,
        };
        let label: Label =
            serde_json::from_str(line).map_err(|e| malformed(e.column(), e.to_string()))?;
        if label.answer_sha256 != sha256_hex(&label.answer) {
            return Err(malformed(
                1,
                "answer_sha256 is not the SHA-256 of answer: the answer was changed after it was labelled".into(),
            ));
        }
        labels.push(label);
    }
    Ok(labels)
}

/// Appends `labels` to `dir/labels.jsonl`, creating the directory and file as needed.
pub fn append(dir: &Path, labels: &[Label]) -> Result<PathBuf, LabelError> {
    use std::io::Write;
    let path = dir.join(FILE_NAME);
    let io = |source| LabelError::Io {
        action: "write",
        path: path.clone(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(io)?;
    let mut text = String::new();
    for label in labels {
        // A label is strings and an enum: serializing it can not fail.
        text.push_str(&serde_json::to_string(label).unwrap_or_default());
        text.push('\n');
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(io)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label(answer: &str) -> Label {
        Label {
            test: "t".into(),
            review: "says 43".into(),
            answer: answer.into(),
            answer_sha256: sha256_hex(answer),
            verdict: LabelVerdict::Pass,
            rater: "ana".into(),
            date: "2026-11-28T09:00:00Z".into(),
            note: None,
        }
    }

    #[test]
    fn the_sha256_is_the_known_digest_of_the_answer() {
        // `printf abc | sha256sum`
        assert_eq!(
            sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn labels_written_are_read_back_from_every_jsonl_file() {
        let dir = tempfile::tempdir().unwrap();
        let labels = dir.path().join("labels");
        append(&labels, &[label("43")]).unwrap();
        append(&labels, &[label("44")]).unwrap();
        std::fs::write(
            labels.join("other.jsonl"),
            serde_json::to_string(&label("45")).unwrap(),
        )
        .unwrap();
        std::fs::write(labels.join("notes.txt"), "not labels").unwrap();
        let read = read_dir(&labels).unwrap();
        let answers: Vec<&str> = read.iter().map(|l| l.answer.as_str()).collect();
        assert_eq!(answers, ["43", "44", "45"]);
        assert!(read_dir(&dir.path().join("missing")).unwrap().is_empty());
    }

    #[test]
    fn an_edited_answer_or_an_unknown_key_is_an_error_at_its_line() {
        let mut edited = label("43");
        edited.answer = "42".into();
        let text = format!("\n{}\n", serde_json::to_string(&edited).unwrap());
        let e = parse(Path::new("l.jsonl"), &text).unwrap_err().to_string();
        assert!(
            e.starts_with("l.jsonl:2:1: not a label: answer_sha256"),
            "{e}"
        );
        let unknown = r#"{"test":"t","verdikt":"pass"}"#;
        let e = parse(Path::new("l.jsonl"), unknown)
            .unwrap_err()
            .to_string();
        assert!(e.contains("l.jsonl:1:") && e.contains("verdikt"), "{e}");
    }

    #[test]
    fn the_criteria_are_read_back_from_a_review_description() {
        assert_eq!(
            criteria_of(
                r#"stdout review: "says \"43\"\nand\u{1b} why" (score: 9/10, threshold: 7)"#
            ),
            Some("says \"43\"\nand\u{1b} why".into())
        );
        assert_eq!(criteria_of("stdout contains \"x\""), None);
        let criteria = "quote \" back\\slash\ttab é";
        let description = format!("stdout review: {criteria:?} (threshold: 7)");
        assert_eq!(criteria_of(&description).as_deref(), Some(criteria));
    }
}
