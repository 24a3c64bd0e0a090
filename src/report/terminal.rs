//! The terminal reporter: one block per test, `✓`/`✗` per assertion, evidence under
//! failures, and a summary line.
//!
//! Output is styled with ANSI codes; the CLI writes it through `anstream`, which strips them
//! when the stream is not a terminal or `NO_COLOR` is set, so CI logs stay plain.
//!
//! Every text shown here that aptitude did not write itself — names, paths, an agent's
//! error and stderr, assertion details, tool calls, file names — goes through
//! [`inert::terminal`] (one line) or [`inert::terminal_lines`] (a block indented under
//! aptitude's own prefix): its control characters and escape sequences are shown, never
//! interpreted, so no agent text can move the cursor or redraw a verdict line.
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

use crate::shared::inert;
use crate::shared::text::{format_duration, thousands};
use crate::transcript::Transcript;
use crate::transcript::display::format_usage;
use crate::verdict::results::{
    AssertionResult, AssertionStatus, Results, Summary, TestResult, TestStatus,
};

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

/// Renders one test as an uninterrupted block (ends with a newline): its headline, why it
/// could not be decided, its assertions, and what it left.
pub fn render_test(test: &TestResult) -> String {
    let mut out = String::new();
    render_headline(&mut out, test);
    render_problems(&mut out, test);
    for (i, a) in test.assertions.iter().enumerate() {
        let tally = test.repeat.as_ref().and_then(|r| {
            // A routing prompt's line already says in how many runs it chose what.
            if a.kind == "routing" {
                return None;
            }
            let t = r.assertions.get(i)?;
            let phrase = inert::terminal(&t.phrase(r.runs));
            Some(if t.flaky {
                paint(YELLOW, &format!("  {phrase} · flaky"))
            } else {
                paint(DIM, &format!("  {phrase}"))
            })
        });
        render_assertion(&mut out, a, &test.file, tally.as_deref().unwrap_or(""));
    }
    render_leftovers(&mut out, test);
    out
}

/// The status line, the reuse note, the simulated user's cost and a repeated test's figures.
fn render_headline(out: &mut String, test: &TestResult) {
    let repeat = test
        .repeat
        .as_ref()
        .map(|r| {
            let style = if r.flaky { YELLOW } else { DIM };
            format!("  {}", paint(style, &inert::terminal(&r.headline())))
        })
        .unwrap_or_default();
    let reused = if test.reused.is_some() {
        format!("  {}", paint(DIM, "↺ reused"))
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "{} {}  {}  {}{repeat}{reused}",
        test_icon(test.status),
        paint(BOLD, &inert::terminal(&test.qualified_name(false))),
        paint(DIM, &inert::terminal(&test.file)),
        test_word(test.status)
    );
    if let Some(r) = &test.reused {
        let _ = writeln!(
            out,
            "  {}",
            paint(
                DIM,
                &format!(
                    "the agent did not run: its run from {} was re-evaluated",
                    inert::terminal(&r.from)
                )
            )
        );
    }
    // The simulated user's model calls apart from the agent's (its usage counts both).
    if let Some(u) = test.simulated_user_usage() {
        let _ = writeln!(
            out,
            "  {}",
            paint(DIM, &crate::transcript::display::simulated_user_line(&u))
        );
    }
    if let Some(r) = &test.repeat {
        let mut figures: Vec<String> = r.rate_phrase().into_iter().collect();
        if let Some(e) = r.estimate_at_min_pass() {
            figures.push(format!(
                "pass@{k} {:.2} · pass^{k} {:.2}",
                e.pass_at_k,
                e.pass_hat_k,
                k = e.k
            ));
        }
        // The run marks are aptitude's own colours: painted after the text is made inert.
        let marks: Vec<String> = test.runs.iter().map(|r| test_icon(r.status)).collect();
        figures.push("runs ".to_owned());
        let _ = writeln!(
            out,
            "  {}{}",
            paint(DIM, &inert::terminal(&figures.join(" · "))),
            marks.join("")
        );
    }
}

/// Why the test could not be decided: its error, why it was skipped, retries, broken
/// transcript lines; and a run made without the sandbox.
fn render_problems(out: &mut String, test: &TestResult) {
    if test
        .sandbox
        .as_ref()
        .is_some_and(crate::sandbox::Record::is_off)
    {
        let _ = writeln!(
            out,
            "  {} {}",
            paint(YELLOW, "⚠"),
            paint(
                YELLOW,
                "not sandboxed (--sandbox off): the agent saw the host as aptitude does"
            )
        );
    }
    let dearest = test
        .model_traffic
        .as_ref()
        .map_or(&[][..], |t| t.priced_at_dearest.as_slice());
    if !dearest.is_empty() {
        let names: Vec<String> = dearest.iter().map(|m| format!("`{m}`")).collect();
        let _ = writeln!(
            out,
            "  {} {}",
            paint(YELLOW, "⚠"),
            paint(
                YELLOW,
                &inert::terminal(&format!(
                    "cost estimated at the provider's dearest rates for {}: not in aptitude's price table (scripts/refresh-prices)",
                    names.join(", ")
                ))
            )
        );
    }
    if let Some(error) = &test.error {
        let error = match test.error_kind {
            Some(kind) => format!("[{}] {error}", kind.word()),
            None => error.clone(),
        };
        render_block(out, &paint(YELLOW, "!"), &error, YELLOW);
    }
    let skipped = match test.skip_reason {
        Some(crate::verdict::results::SkipReason::Budget) => {
            Some("not run: the run's cost or token ceiling was reached (budget)")
        }
        Some(crate::verdict::results::SkipReason::Shard) => Some(
            "not decided here: its other runs are in other shards; `aptitude merge` decides it",
        ),
        None => None,
    };
    if let Some(why) = skipped {
        let _ = writeln!(out, "  {} {}", paint(DIM, "⊘"), paint(DIM, why));
    }
    for a in &test.attempts {
        let _ = writeln!(
            out,
            "  {} {}",
            paint(DIM, "↻"),
            paint(
                DIM,
                &format!(
                    "retried after an infra error: {}",
                    inert::terminal(&crate::shared::text::truncate(&a.error, 200))
                )
            )
        );
    }
    if let Some(t) = &test.transcript
        && let Some(line) = transcript_warnings_line(t)
    {
        let _ = writeln!(
            out,
            "  {} {}",
            paint(YELLOW, "!"),
            paint(YELLOW, &inert::terminal(&line))
        );
    }
}

/// A text of several lines under a mark: `  ! first line` then each further line indented
/// under it, every line inert and styled on its own (a style never spans a line break).
fn render_block(out: &mut String, mark: &str, text: &str, style: Style) {
    let lines = inert::terminal_lines(text);
    let mut lines = lines.iter();
    let first = lines.next().map_or("", String::as_str);
    let _ = writeln!(out, "  {mark} {}", paint(style, first));
    for line in lines {
        let _ = writeln!(out, "    {}", paint(style, line));
    }
}

/// What the run left: changed files, the kept workspace, the recorded transcript.
fn render_leftovers(out: &mut String, test: &TestResult) {
    render_hooks(out, test);
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
                format!("{mark}{}", inert::terminal(&f.path))
            })
            .collect();
        let _ = writeln!(
            out,
            "  {}",
            paint(DIM, &format!("files: {}", files.join(" ")))
        );
    }
    if let Some(ws) = &test.workspace {
        let _ = writeln!(
            out,
            "  {}",
            paint(DIM, &format!("workspace kept at {}", inert::terminal(ws)))
        );
    }
    if let Some(recorded) = &test.recorded {
        let _ = writeln!(
            out,
            "  {}",
            paint(
                DIM,
                &format!("transcript recorded: {}", inert::terminal(recorded))
            )
        );
    }
}

/// One line per workspace hook that ran, by the exec record: the run's own, or each of a
/// repeated test's runs' (numbered).
fn render_hooks(out: &mut String, test: &TestResult) {
    let runs = test
        .runs
        .iter()
        .enumerate()
        .flat_map(|(i, r)| r.hooks_ran.iter().map(move |h| (Some(i + 1), h)));
    for (run, hook) in test.hooks_ran.iter().map(|h| (None, h)).chain(runs) {
        let run = run.map(|n| format!("run {n}: ")).unwrap_or_default();
        let line = inert::terminal(&format!("{run}{}", hook.phrase()));
        let _ = writeln!(out, "  {}", paint(YELLOW, &format!("⚑ {line}")));
    }
}

fn render_assertion(out: &mut String, a: &AssertionResult, file: &str, tally: &str) {
    let cached = if a.cached == Some(true) {
        paint(DIM, " (cached)")
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "  {} {}{cached}{tally}",
        assertion_icon(a.status),
        inert::terminal(&a.description)
    );
    if a.status == AssertionStatus::Pass {
        return;
    }
    if let Some(detail) = &a.detail {
        let lines = inert::terminal_lines(detail);
        let mut lines = lines.iter();
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
        paint(DIM, &format!("at {}:{}", inert::terminal(file), a.line))
    );
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
            summary.tests_without_cost,
            // Routing prompts count apart, and their costs in the same totals.
            summary.total + summary.routing.as_ref().map_or(0, |r| r.prompts)
        ));
    }
    let mut extra = String::new();
    if let Some(r) = &summary.runs {
        let mut runs = vec![format!("{} passed", r.passed)];
        for (n, word) in [
            (r.failed, "failed"),
            (r.errors, "error"),
            (r.skipped, "skipped"),
        ] {
            if n > 0 {
                runs.push(format!("{n} {word}"));
            }
        }
        extra.push_str(&format!(" · runs: {}", runs.join(", ")));
        if r.flaky_tests > 0 {
            extra.push_str(&paint(
                YELLOW,
                &format!(
                    " ({} flaky test{})",
                    r.flaky_tests,
                    if r.flaky_tests == 1 { "" } else { "s" }
                ),
            ));
        }
    }
    if summary.reused > 0 {
        extra.push_str(&paint(DIM, &format!(" · ↺ {} reused", summary.reused)));
    }
    if let Some(b) = &summary.budget {
        let text = budget_phrase(b);
        extra.push_str(" · ");
        extra.push_str(&if b.skipped_runs > 0 {
            paint(YELLOW.bold(), &text)
        } else {
            text
        });
    }
    // Routing prompts count apart: what they chose, and the figures that fell.
    let routing = summary.routing.as_ref().map(|r| {
        let phrase = r.phrase();
        if r.regressions > 0 || r.errors > 0 {
            paint(RED.bold(), &phrase)
        } else {
            phrase
        }
    });
    let head = match routing {
        Some(routing) if summary.total == 0 => routing,
        Some(routing) => format!(
            "{} {tests}: {} · assertions: {} · {routing}",
            summary.total,
            parts.join(", "),
            assertion_parts.join(", ")
        ),
        None => format!(
            "{} {tests}: {} · assertions: {}",
            summary.total,
            parts.join(", "),
            assertion_parts.join(", ")
        ),
    };
    format!(
        "{head} · {} · {usage}{extra}\n{}",
        format_duration(summary.duration_ms),
        summary_notes(summary),
    )
}

/// The lines under the closing summary: the simulated users' share of the usage, how the
/// runs were fenced in, and how far the wire backs their transcripts.
fn summary_notes(summary: &Summary) -> String {
    // Its own line: the simulated users' share of the usage above.
    let simulated = summary
        .simulated_user
        .as_ref()
        .map(|u| {
            let line = crate::transcript::display::simulated_user_line(u);
            format!("{}\n", paint(DIM, &format!("{line} (in the usage above)")))
        })
        .unwrap_or_default();
    let sandbox = summary
        .sandbox
        .as_ref()
        .map(|s| {
            let phrase = inert::terminal(&s.phrase());
            if s.any_unsandboxed() {
                format!("{}\n", paint(YELLOW.bold(), &format!("⚠ {phrase}")))
            } else {
                format!("{}\n", paint(DIM, &phrase))
            }
        })
        .unwrap_or_default();
    let witness = summary
        .witness
        .as_ref()
        .map(|w| {
            if w.tampered > 0 {
                format!("{}\n", paint(RED.bold(), &format!("✗ {}", w.phrase())))
            } else if w.any_unwitnessed() {
                format!("{}\n", paint(YELLOW, &format!("⚠ {}", w.phrase())))
            } else {
                format!("{}\n", paint(DIM, &w.phrase()))
            }
        })
        .unwrap_or_default();
    format!("{simulated}{sandbox}{witness}")
}

/// `spent est. $0.0312 of $0.0500 · 3 runs skipped (budget)`: spend against the ceiling
/// (an estimate at list prices).
pub fn budget_phrase(b: &crate::verdict::results::BudgetSummary) -> String {
    let mut parts = Vec::new();
    if let Some(max) = b.max_cost_usd {
        parts.push(format!("spent est. ${:.4} of ${max:.4}", b.spent_cost_usd));
    }
    if let Some(max) = b.max_tokens {
        parts.push(format!(
            "{} of {} tokens",
            thousands(b.spent_tokens),
            thousands(max)
        ));
    }
    let mut s = parts.join(", ");
    if b.skipped_runs > 0 {
        s.push_str(&format!(
            " · {} run{} skipped (budget)",
            b.skipped_runs,
            if b.skipped_runs == 1 { "" } else { "s" }
        ));
    }
    s
}

/// The tests × agents table, when the run holds several agents or variants: one row per
/// test and variant, `✓`/`✗`/`!`/`-` per agent (with `3/5` for repeated tests).
pub fn render_matrix(results: &Results) -> Option<String> {
    let matrix = results.matrix()?;
    let names: Vec<String> = matrix
        .rows
        .iter()
        .map(|r| match &r.variant {
            Some(v) => inert::terminal(&format!("{} ({v})", r.name)),
            None => inert::terminal(&r.name),
        })
        .collect();
    let width = names
        .iter()
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
    let heads: Vec<String> = matrix
        .columns
        .iter()
        .map(|c| inert::terminal(&c.label()))
        .collect();
    let widths: Vec<usize> = heads.iter().map(|h| h.chars().count().max(9)).collect();
    let mut out = format!("{:width$}", "test");
    for (head, w) in heads.iter().zip(&widths) {
        out.push_str(&format!("  {head:>w$}"));
    }
    out.push('\n');
    for (row, name) in matrix.rows.iter().zip(&names) {
        out.push_str(&format!("{name:width$}"));
        for (cell, w) in row.cells.iter().zip(&widths) {
            let text = match cell {
                Some((status, runs)) => {
                    let mark = match status {
                        TestStatus::Passed => "✓",
                        TestStatus::Failed => "✗",
                        TestStatus::Error => "!",
                        TestStatus::Skipped => "-",
                    };
                    match runs {
                        Some(r) => format!("{mark} {r}"),
                        None => mark.to_owned(),
                    }
                }
                None => "·".to_owned(),
            };
            out.push_str(&format!("  {text:>w$}"));
        }
        out.push('\n');
    }
    Some(out)
}

/// The longest assertion label in the variants table, in characters (longer ones end
/// with `…`).
const VARIANT_LABEL_CHARS: usize = 60;

/// The variants side by side, for each test that ran with two or more: one column per
/// variant (`default` first) with runs passed, pass rate, the difference to `default` with
/// its Fisher p-value, and each assertion's pass count ([`crate::verdict::variants`]).
pub fn render_variants(results: &Results) -> Option<String> {
    let comparisons = &results.summary.variants;
    if comparisons.is_empty() {
        return None;
    }
    let with_agent = crate::verdict::variants::several_agents(comparisons);
    let mut out = String::new();
    for (i, c) in comparisons.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let _ = writeln!(
            out,
            "{} {}",
            paint(
                BOLD,
                &format!("variants of {}", inert::terminal(&c.title(with_agent)))
            ),
            paint(DIM, &inert::terminal(&c.file))
        );
        let grid = c.grid();
        let labels: Vec<String> = grid
            .iter()
            .map(|r| {
                let label = inert::terminal(&r.label);
                if label.chars().count() > VARIANT_LABEL_CHARS {
                    let cut: String = label.chars().take(VARIANT_LABEL_CHARS - 1).collect();
                    format!("{cut}…")
                } else {
                    label
                }
            })
            .collect();
        let label_width = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0);
        let columns: Vec<String> = c.columns().iter().map(|c| inert::terminal(c)).collect();
        let widths: Vec<usize> = columns
            .iter()
            .enumerate()
            .map(|(j, name)| {
                grid.iter()
                    .map(|r| r.cells.get(j).map_or(0, |c| c.chars().count()))
                    .chain([name.chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let line = |label: &str, cells: &[&str]| {
            let mut l = format!("  {label:label_width$}");
            for (cell, width) in cells.iter().zip(&widths) {
                l.push_str(&format!("  {cell:width$}"));
            }
            l.trim_end().to_owned()
        };
        let names: Vec<&str> = columns.iter().map(String::as_str).collect();
        let _ = writeln!(out, "{}", paint(BOLD, &line("", &names)));
        for (row, label) in grid.iter().zip(&labels) {
            // Counts and rates, aptitude's own.
            let cells: Vec<&str> = row.cells.iter().map(String::as_str).collect();
            let _ = writeln!(out, "{}", line(label, &cells));
        }
    }
    Some(out)
}

/// The releases of each agent that ran on more than one side by side
/// ([`crate::verdict::versions`]): per (agent, version), its runs passed, pass rate with its
/// 95% interval, and the difference to the reference release with its Fisher p-value.
pub fn render_versions(results: &Results) -> Option<String> {
    let versions = &results.summary.versions;
    if versions.is_empty() {
        return None;
    }
    let rows: Vec<[String; 5]> =
        std::iter::once(crate::verdict::versions::COLUMNS.map(str::to_owned))
            .chain(
                versions
                    .iter()
                    .map(|v| crate::verdict::versions::row(v).map(|cell| inert::terminal(&cell))),
            )
            .collect();
    let widths: Vec<usize> = (0..5)
        .map(|j| rows.iter().map(|r| r[j].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = format!("{}\n", paint(BOLD, "releases side by side"));
    for (i, row) in rows.iter().enumerate() {
        let mut line = String::new();
        for (cell, width) in row.iter().zip(&widths) {
            line.push_str(&format!("  {cell:width$}"));
        }
        let line = line.trim_end().to_owned();
        let _ = writeln!(out, "{}", if i == 0 { paint(BOLD, &line) } else { line });
    }
    Some(out)
}

/// Every test block, then the summary (and the tests × agents table and the variants side
/// by side, when there are).
pub fn render_results(results: &Results) -> String {
    let mut out = String::new();
    for test in &results.tests {
        out.push_str(&render_test(test));
        out.push('\n');
    }
    out.push_str(&render_summary(&results.summary));
    if let Some(matrix) = render_matrix(results) {
        out.push('\n');
        out.push_str(&matrix);
    }
    if let Some(versions) = render_versions(results) {
        out.push('\n');
        out.push_str(&versions);
    }
    if let Some(variants) = render_variants(results) {
        out.push('\n');
        out.push_str(&variants);
    }
    if let Some(routing) = render_routing(results) {
        out.push('\n');
        out.push_str(&routing);
    }
    out
}

/// The routing suites' figures and confusion matrices ([`super::routing::terminal`]), when
/// the run has any.
pub fn render_routing(results: &Results) -> Option<String> {
    let routing = results.routing.as_ref()?;
    Some(super::routing::terminal(routing))
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
    let _ = writeln!(
        out,
        "{}",
        paint(BOLD, &inert::terminal(&header.join(" · ")))
    );
    if t.tool_calls.is_empty() {
        let _ = writeln!(out, "  (no tool calls)");
    }
    let width = t.tool_calls.len().to_string().len();
    for (i, call) in t.tool_calls.iter().enumerate() {
        let _ = writeln!(out, "{}", transcript_call(i + 1, width, call));
    }
    match &t.final_text {
        Some(text) => {
            let _ = writeln!(out, "final answer: {}", inert_cut(text, 300));
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
        usage.push(format!("est. ${c:.6}"));
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
    let _ = writeln!(out, "outcome: {}", inert::terminal(&t.outcome.describe()));
    if let Some(only) = &t.records_only {
        let _ = writeln!(
            out,
            "{}",
            paint(
                YELLOW,
                &inert::terminal(&format!(
                    "records only {}: {}",
                    only.tools.join(", "),
                    only.reason
                ))
            )
        );
    }
    if let Some(line) = transcript_warnings_line(t) {
        let _ = writeln!(out, "{}", inert::terminal(&line));
    }
    out
}

/// `text` cut to `max` characters on one line ([`crate::shared::text::truncate`]), inert.
fn inert_cut(text: &str, max: usize) -> String {
    inert::terminal(&crate::shared::text::truncate(text, max))
}

/// One tool call of [`render_transcript`]: `#N Name input (canonical params)`, then its
/// result on a second line.
fn transcript_call(position: usize, width: usize, call: &crate::transcript::ToolCall) -> String {
    let mut line = format!(
        "  #{:<width$} {} {}",
        position,
        paint(BOLD, &inert::terminal(&call.name)),
        inert::terminal(&crate::shared::text::summarize_input(&call.input, 90))
    );
    // The raw call first; the canonical name and keys the assertions match on after it.
    match &call.params {
        Some(params) => line.push_str(&paint(
            DIM,
            &inert::terminal(&format!(
                " ({} {})",
                call.canonical,
                crate::assertions::summarize_input(params, 90)
            )),
        )),
        None if call.name != call.canonical => {
            line.push_str(&paint(
                DIM,
                &format!(" ({})", inert::terminal(&call.canonical)),
            ));
        }
        None => {}
    }
    if !call.is_main() {
        line.push_str(&paint(
            DIM,
            &format!(" [subagent {}]", inert::terminal(&call.agent)),
        ));
    }
    let result = match (&call.output, call.is_error, call.exit_code) {
        _ if call.blocked.is_some() => paint(
            YELLOW,
            &format!(
                "refused before it ran: {}",
                inert_cut(call.blocked.as_deref().unwrap_or(""), 60)
            ),
        ),
        (None, _, _) => paint(YELLOW, "no result"),
        (Some(o), true, Some(code)) => {
            paint(RED, &format!("error, exit {code}: {}", inert_cut(o, 60)))
        }
        (Some(o), true, None) => paint(RED, &format!("error: {}", inert_cut(o, 60))),
        (Some(o), false, Some(code)) => format!("exit {code}: {}", inert_cut(o, 60)),
        (Some(o), false, None) => inert_cut(o, 60),
    };
    format!("{line}\n      → {result}")
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
        assert_eq!(thousands(1234567), "1,234,567");
    }

    /// A repeated test's run marks keep their colours: they are aptitude's, not agent text
    /// that `inert::terminal` would show as `^[[32m`.
    #[test]
    fn run_marks_are_painted_not_escaped() {
        let run = |status| TestResult::new("t", "t.aptitude.yaml", status);
        let test = crate::verdict::repeat::aggregate(
            vec![run(TestStatus::Passed), run(TestStatus::Failed)],
            1,
        );
        let text = render_test(&test);
        assert!(!text.contains("^["), "{text}");
        assert!(
            text.contains(&format!(
                "{}{}",
                test_icon(TestStatus::Passed),
                test_icon(TestStatus::Failed)
            )),
            "{text}"
        );
    }

    /// Each workspace hook that ran is one line under its run, naming its file, line,
    /// event, command and what it ran; the workspace's text in it is made inert.
    #[test]
    fn each_hook_that_ran_is_one_inert_line_under_the_run() {
        use crate::sandbox::exec::hooks::{HookExec, HookRan};
        let mut test = TestResult::new("t", "t.aptitude.yaml", TestStatus::Failed);
        test.hooks_ran = vec![HookRan {
            file: ".claude/settings.json".into(),
            line: Some(5),
            event: "SessionStart".into(),
            command: "sh .hooks/start.sh \u{1b}[2J".into(),
            execs: vec![HookExec {
                command: "rm -f README".into(),
                exit_code: Some(0),
                at_ms: 3,
            }],
            execs_total: 1,
        }];
        let text = render_test(&test);
        let lines: Vec<&str> = text.lines().filter(|l| l.contains("⚑")).collect();
        assert_eq!(lines.len(), 1, "{text}");
        assert!(
            lines[0].contains(
                "hook .claude/settings.json:5 SessionStart `sh .hooks/start.sh ^[[2J` ran 1 exec: rm -f README → exit 0"
            ),
            "{text}"
        );
        assert!(!lines[0].contains("\u{1b}[2J"), "{text}");
        test.hooks_ran.clear();
        assert!(!render_test(&test).contains("⚑"));
    }

    /// A run whose cost counts a model not in the price table names it: its cost is an
    /// upper bound at the provider's dearest rates, not the model's price.
    #[test]
    fn a_model_priced_at_the_dearest_rates_is_named() {
        let mut test = TestResult::new("t", "t.aptitude.yaml", TestStatus::Passed);
        test.model_traffic = Some(crate::gateway::Traffic {
            priced_at_dearest: vec!["claude-nimbus-9".into()],
            ..crate::gateway::Traffic::default()
        });
        let text = render_test(&test);
        assert!(
            text.contains("dearest rates for `claude-nimbus-9`: not in aptitude's price table"),
            "{text}"
        );
        test.model_traffic = Some(crate::gateway::Traffic::default());
        assert!(!render_test(&test).contains("dearest"));
    }
}
