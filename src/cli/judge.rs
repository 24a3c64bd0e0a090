//! `aptitude judge`: people's verdicts on judged answers, which the LLM judge is measured
//! against before it may gate a test (issue #40). `judge label` asks, in the terminal, for
//! a pass or fail on every graded review of a results file ([`crate::verdict::labels`]).

use std::io::BufRead;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use super::Outcome;
use super::error::CliError;
use super::output::out;
use crate::verdict::labels::{self, JudgedAnswer, Label, LabelVerdict};

/// `aptitude judge`.
#[derive(Debug, Args)]
pub struct JudgeArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: JudgeCommand,
}

/// `aptitude judge` subcommands.
#[derive(Debug, Subcommand)]
pub enum JudgeCommand {
    /// Label the judged answers of a results file pass or fail, one by one, reading your
    /// answers from stdin; each label is appended to LABELS/labels.jsonl as you go.
    Label(LabelArgs),
    /// Grade every labelled answer again through the configured judge and write each
    /// judge profile's certificate (TPR, TNR, kappa, confusion, certified) beside the
    /// labels. Exit 1 when a judge is not certified.
    Certify(super::certify::CertifyArgs),
    /// Print whether each review's judge is certified, uncertified or decertified.
    Status(super::certify::StatusArgs),
}

/// `aptitude judge label`.
#[derive(Debug, Args)]
#[command(after_help = "\
At each answer type p (pass), f (fail), s (skip) or q (quit); a note may follow after a
space: `f it never ran the tests`. Answers you already labelled are not asked again.")]
pub struct LabelArgs {
    /// A results JSON written by `run --json`.
    #[arg(value_name = "RESULTS.json")]
    pub results: PathBuf,
    /// The labels directory.
    #[arg(long, value_name = "DIR", default_value = labels::DEFAULT_DIR)]
    pub labels: PathBuf,
    /// Who is labelling. Default: $USER.
    #[arg(long, value_name = "NAME")]
    pub rater: Option<String>,
}

/// Runs `aptitude judge`.
pub fn judge(args: &JudgeArgs) -> Result<Outcome, CliError> {
    match &args.command {
        JudgeCommand::Label(args) => label(args, &mut std::io::stdin().lock()),
        JudgeCommand::Certify(args) => super::certify::certify(args),
        JudgeCommand::Status(args) => super::certify::status(args),
    }
}

/// What the person answered at one prompt.
enum Answer {
    Label(LabelVerdict, Option<String>),
    Skip,
    Quit,
}

fn parse_answer(line: &str) -> Option<Answer> {
    let line = line.trim();
    let (word, note) = match line.split_once(char::is_whitespace) {
        Some((word, note)) => (word, Some(note.trim().to_owned()).filter(|n| !n.is_empty())),
        None => (line, None),
    };
    match word.to_ascii_lowercase().as_str() {
        "p" | "pass" => Some(Answer::Label(LabelVerdict::Pass, note)),
        "f" | "fail" => Some(Answer::Label(LabelVerdict::Fail, note)),
        "s" | "skip" | "" => Some(Answer::Skip),
        "q" | "quit" => Some(Answer::Quit),
        _ => None,
    }
}

fn label(args: &LabelArgs, input: &mut dyn BufRead) -> Result<Outcome, CliError> {
    let results = crate::report::json::read(&args.results)?;
    let rater = args
        .rater
        .clone()
        .or_else(|| std::env::var("USER").ok())
        .filter(|r| !r.is_empty())
        .unwrap_or_else(|| "unknown".to_owned());
    let known = labels::read_dir(&args.labels)?;
    let todo: Vec<JudgedAnswer> = labels::judged_answers(&results)
        .into_iter()
        .filter(|a| {
            let sha = a.answer_sha256();
            !known.iter().any(|l| {
                l.rater == rater
                    && l.test == a.test
                    && l.review == a.review
                    && l.answer_sha256 == sha
            })
        })
        .collect();
    if todo.is_empty() {
        out(&format!(
            "nothing to label: {} has no graded review {rater} has not labelled\n",
            args.results.display()
        ));
        return Ok(Outcome::Passed);
    }
    let mut written = 0usize;
    for (i, answer) in todo.iter().enumerate() {
        show(i + 1, todo.len(), answer);
        match ask(input) {
            Answer::Quit => break,
            Answer::Skip => {}
            Answer::Label(verdict, note) => {
                let record = Label {
                    test: answer.test.clone(),
                    review: answer.review.clone(),
                    answer: answer.answer.clone(),
                    answer_sha256: answer.answer_sha256(),
                    verdict,
                    rater: rater.clone(),
                    date: humantime::format_rfc3339_seconds(std::time::SystemTime::now())
                        .to_string(),
                    note,
                };
                // Each label is written at once, so that quitting or a closed terminal
                // loses none.
                labels::append(&args.labels, &[record])?;
                written += 1;
            }
        }
    }
    summary(written, &args.labels);
    Ok(Outcome::Passed)
}

fn show(index: usize, total: usize, a: &JudgedAnswer) {
    let verdict = if a.judge_passed() { "pass" } else { "fail" };
    let mut text = format!(
        "\n[{index}/{total}] {}\nreview: {}\nanswer:\n",
        a.test, a.review
    );
    for line in a.answer.lines() {
        text.push_str("  ");
        text.push_str(line);
        text.push('\n');
    }
    text.push_str(&format!(
        "judge: {}/10 (threshold {}) → {verdict}\n",
        a.score, a.threshold
    ));
    out(&text);
}

/// Asks until the answer is understood; the end of input quits.
fn ask(input: &mut dyn BufRead) -> Answer {
    loop {
        out("label? [p]ass, [f]ail, [s]kip, [q]uit (a note may follow): ");
        let mut line = String::new();
        match input.read_line(&mut line) {
            Ok(0) | Err(_) => {
                out("\n");
                return Answer::Quit;
            }
            Ok(_) => {}
        }
        match parse_answer(&line) {
            Some(answer) => return answer,
            None => out("  type p, f, s or q\n"),
        }
    }
}

fn summary(written: usize, dir: &Path) {
    let path = dir.join(labels::FILE_NAME);
    out(&format!(
        "{written} label{} written to {}\n",
        if written == 1 { "" } else { "s" },
        path.display()
    ));
}
