//! The terminal reporter: one block per test, `✓`/`✗` per assertion, evidence under
//! failures, and a summary line.
//!
//! Output is styled with ANSI codes; the CLI writes it through `anstream`, which strips them
//! when the stream is not a terminal or `NO_COLOR` is set, so CI logs stay plain.
//!
//! ```text
//! ✗ Env file protection  examples/env/env.aptitude.yaml  failed
//!   ✗ Read not called with file_path ~ glob "*.env"
//!     └─ Read was called 1 time with matching parameters:
//!          #3 Read file_path="/home/u/p/.env"
//!        at examples/env/env.aptitude.yaml:6
//!   ✓ Bash called after Read
//! ```

use std::fmt::Write as _;

use anstyle::{AnsiColor, Style};

use crate::results::{AssertionResult, AssertionStatus, Results, Summary, TestResult, TestStatus};
use crate::transcript::{Transcript, Usage};

const GREEN: Style = AnsiColor::Green.on_default();
const RED: Style = AnsiColor::Red.on_default();
const YELLOW: Style = AnsiColor::Yellow.on_default();
const DIM: Style = Style::new().dimmed();
const BOLD: Style = Style::new().bold();

fn paint(style: Style, text: &str) -> String {
    format!("{style}{text}{style:#}")
}

fn test_icon(status: TestStatus) -> String {
    match status {
        TestStatus::Passed => paint(GREEN, "✓"),
        TestStatus::Failed => paint(RED, "✗"),
        TestStatus::Error => paint(YELLOW, "!"),
        TestStatus::Skipped => paint(DIM, "⊘"),
    }
}

fn test_word(status: TestStatus) -> String {
    match status {
        TestStatus::Passed => paint(GREEN, "passed"),
        TestStatus::Failed => paint(RED.bold(), "failed"),
        TestStatus::Error => paint(YELLOW.bold(), "error"),
        TestStatus::Skipped => paint(DIM, "skipped"),
    }
}

fn assertion_icon(status: AssertionStatus) -> String {
    match status {
        AssertionStatus::Pass => paint(GREEN, "✓"),
        AssertionStatus::Fail => paint(RED, "✗"),
        AssertionStatus::Error => paint(YELLOW, "!"),
        AssertionStatus::Invalid => paint(YELLOW, "?"),
        AssertionStatus::Skip => paint(DIM, "⊘"),
    }
}

/// Renders one test as an uninterrupted block (ends with a newline).
pub fn render_test(test: &TestResult) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} {}  {}  {}",
        test_icon(test.status),
        paint(BOLD, &test.name),
        paint(DIM, &test.file),
        test_word(test.status)
    );
    if let Some(error) = &test.error {
        let _ = writeln!(out, "  {} {}", paint(YELLOW, "!"), paint(YELLOW, error));
    }
    if let Some(t) = &test.transcript
        && let Some(line) = transcript_warnings_line(t)
    {
        let _ = writeln!(out, "  {} {}", paint(YELLOW, "!"), paint(YELLOW, &line));
    }
    for a in &test.assertions {
        render_assertion(&mut out, a, &test.file);
    }
    if !test.files.is_empty() {
        let files: Vec<String> = test
            .files
            .iter()
            .map(|f| {
                let mark = match f.change {
                    crate::workspace::ChangeKind::Created => "+",
                    crate::workspace::ChangeKind::Modified => "~",
                    crate::workspace::ChangeKind::Deleted => "-",
                };
                format!("{mark}{}", f.path)
            })
            .collect();
        let _ = writeln!(
            out,
            "  {}",
            paint(DIM, &format!("files: {}", files.join(" ")))
        );
    }
    if let Some(ws) = &test.workspace {
        let _ = writeln!(out, "  {}", paint(DIM, &format!("workspace kept at {ws}")));
    }
    if let Some(recorded) = &test.recorded {
        let _ = writeln!(
            out,
            "  {}",
            paint(DIM, &format!("transcript recorded: {recorded}"))
        );
    }
    out
}

fn render_assertion(out: &mut String, a: &AssertionResult, file: &str) {
    let cached = if a.cached == Some(true) {
        paint(DIM, " (cached)")
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "  {} {}{cached}",
        assertion_icon(a.status),
        a.description
    );
    if a.status == AssertionStatus::Pass {
        return;
    }
    if let Some(detail) = &a.detail {
        let mut lines = detail.lines();
        if let Some(first) = lines.next() {
            let _ = writeln!(out, "    └─ {first}");
        }
        for line in lines {
            let _ = writeln!(out, "       {line}");
        }
    }
    let _ = writeln!(
        out,
        "       {}",
        paint(DIM, &format!("at {file}:{}", a.line))
    );
}

/// `1.2s`, `340ms`, `2m 05s`.
pub fn format_duration(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else {
        format!("{}m {:02}s", ms / 60_000, (ms % 60_000) / 1000)
    }
}

/// `1,234`.
fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Tokens and cost in one phrase: `1,234 tokens · $0.0123`.
pub fn format_usage(usage: &Usage) -> String {
    let tokens = usage.input_tokens
        + usage.output_tokens
        + usage.cache_creation_input_tokens
        + usage.cache_read_input_tokens;
    let mut s = format!("{} tokens", thousands(tokens));
    if let Some(cost) = usage.cost_usd {
        s.push_str(&format!(" · ${cost:.4}"));
    }
    s
}

/// The closing summary line.
pub fn render_summary(summary: &Summary) -> String {
    let parts: Vec<String> = summary
        .test_counts()
        .into_iter()
        .map(|(n, word)| {
            let text = format!("{n} {word}");
            match word {
                "failed" => paint(RED.bold(), &text),
                "error" => paint(YELLOW.bold(), &text),
                _ => text,
            }
        })
        .collect();
    let assertion_parts: Vec<String> = summary
        .assertion_counts()
        .into_iter()
        .map(|(n, word)| format!("{n} {word}"))
        .collect();
    let tests = if summary.total == 1 { "test" } else { "tests" };
    let mut usage = format_usage(&summary.usage);
    if summary.usage.cost_usd.is_some() && summary.tests_without_cost > 0 {
        usage.push_str(&format!(
            " (no cost reported for {} of {} tests)",
            summary.tests_without_cost, summary.total
        ));
    }
    format!(
        "{} {tests}: {} · assertions: {} · {} · {usage}\n",
        summary.total,
        parts.join(", "),
        assertion_parts.join(", "),
        format_duration(summary.duration_ms),
    )
}

/// Every test block, then the summary.
pub fn render_results(results: &Results) -> String {
    let mut out = String::new();
    for test in &results.tests {
        out.push_str(&render_test(test));
        out.push('\n');
    }
    out.push_str(&render_summary(&results.summary));
    out
}

/// A transcript for humans: one line per tool call, then the answer, usage and outcome
/// (`aptitude transcript FILE`).
pub fn render_transcript(t: &Transcript) -> String {
    let mut out = String::new();
    let mut header = vec![t.format.name().to_owned()];
    header.extend(t.agent_version.clone());
    if let Some(model) = &t.model {
        header.push(format!("model {model}"));
    }
    if let Some(sid) = &t.session_id {
        header.push(format!("session {sid}"));
    }
    if t.runs > 1 {
        header.push(format!("{} runs", t.runs));
    }
    let _ = writeln!(out, "{}", paint(BOLD, &header.join(" · ")));
    if t.tool_calls.is_empty() {
        let _ = writeln!(out, "  (no tool calls)");
    }
    let width = t.tool_calls.len().to_string().len();
    for (i, call) in t.tool_calls.iter().enumerate() {
        let mut line = format!(
            "  #{:<width$} {} {}",
            i + 1,
            paint(BOLD, &call.name),
            crate::assertions::summarize_input(&call.input, 90)
        );
        // The raw call first; the canonical name and keys the assertions match on after it.
        match &call.params {
            Some(params) => line.push_str(&paint(
                DIM,
                &format!(
                    " ({} {})",
                    call.canonical,
                    crate::assertions::summarize_input(params, 90)
                ),
            )),
            None if call.name != call.canonical => {
                line.push_str(&paint(DIM, &format!(" ({})", call.canonical)));
            }
            None => {}
        }
        if !call.is_main() {
            line.push_str(&paint(DIM, &format!(" [subagent {}]", call.agent)));
        }
        let result = match (&call.output, call.is_error, call.exit_code) {
            (None, _, _) => paint(YELLOW, "no result"),
            (Some(o), true, Some(code)) => paint(
                RED,
                &format!("error, exit {code}: {}", crate::assertions::truncate(o, 60)),
            ),
            (Some(o), true, None) => paint(
                RED,
                &format!("error: {}", crate::assertions::truncate(o, 60)),
            ),
            (Some(o), false, Some(code)) => {
                format!("exit {code}: {}", crate::assertions::truncate(o, 60))
            }
            (Some(o), false, None) => crate::assertions::truncate(o, 60),
        };
        let _ = writeln!(out, "{line}\n      → {result}");
    }
    match &t.final_text {
        Some(text) => {
            let _ = writeln!(
                out,
                "final answer: {}",
                crate::assertions::truncate(text, 300)
            );
        }
        None => {
            let _ = writeln!(out, "final answer: (none)");
        }
    }
    let u = &t.usage;
    let mut usage = vec![format!(
        "{} input, {} output, {} cache-read, {} cache-write tokens",
        thousands(u.input_tokens),
        thousands(u.output_tokens),
        thousands(u.cache_read_input_tokens),
        thousands(u.cache_creation_input_tokens)
    )];
    if let Some(c) = u.cost_usd {
        usage.push(format!("${c:.6}"));
    }
    if let Some(turns) = u.turns {
        usage.push(if turns == 1 {
            "1 turn".into()
        } else {
            format!("{turns} turns")
        });
    }
    if let Some(ms) = u.duration_ms {
        usage.push(format_duration(ms));
    }
    let _ = writeln!(out, "usage: {}", usage.join(" · "));
    let _ = writeln!(out, "outcome: {}", t.outcome.describe());
    if let Some(only) = &t.records_only {
        let _ = writeln!(
            out,
            "{}",
            paint(
                YELLOW,
                &format!("records only {}: {}", only.tools.join(", "), only.reason)
            )
        );
    }
    if let Some(line) = transcript_warnings_line(t) {
        let _ = writeln!(out, "{line}");
    }
    out
}

/// `transcript: 3 warnings (first at line 7); transcript lost tool calls: …`, when the
/// transcript has warnings.
fn transcript_warnings_line(t: &Transcript) -> Option<String> {
    let n = t.warning_count();
    if n == 0 {
        return None;
    }
    let mut line = if n == 1 {
        "transcript: 1 warning".to_owned()
    } else {
        format!("transcript: {n} warnings")
    };
    if let Some(first) = t.warnings.iter().find(|w| w.line > 0) {
        line.push_str(&format!(" (first at line {})", first.line));
    }
    if let Some(lost) = t.lost_tool_calls() {
        line.push_str("; ");
        line.push_str(&lost);
    }
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_numbers() {
        assert_eq!(format_duration(340), "340ms");
        assert_eq!(format_duration(1234), "1.2s");
        assert_eq!(format_duration(125_000), "2m 05s");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(thousands(12), "12");
    }
}
