//! The Markdown summary (`--markdown FILE`): the GitHub job summary and the PR comment.
//!
//! A status line, a table of tests, and each failed or errored test in a `<details>` block
//! with its assertions' reasoning. Rendered with askama (`templates/summary.md`,
//! `templates/failure.md`) from the results model.
//!
//! Text that came from an agent, a judge or a file is made inert by
//! [`crate::shared::inert`]: it goes into fenced code blocks (line terminators normalised
//! first, controls shown, a fence longer than any backtick run in it), so it can not
//! contain raw HTML, `@mention` anyone, link, or close our `<details>`; names in table cells
//! are escaped for Markdown ([`markdown_inline`]); names inside `<summary>` (raw HTML,
//! where Markdown escapes would show) only get HTML escapes ([`markdown_html_inline`]). The output is bounded in
//! characters and in bytes ([`MarkdownOptions`]; GitHub's limits are in bytes): past the
//! bound the remaining failures are left out with a notice, a blockquote separated from the
//! last `</details>` by a blank line so that GFM renders it as Markdown. It always ends with
//! a line break.

use askama::Template;

use crate::shared::inert::{markdown_code_block, markdown_html_inline, markdown_inline};
use crate::shared::text::format_duration;
use crate::transcript::display::format_usage;
use crate::verdict::results::{AssertionStatus, Results, TestResult, TestStatus};

/// How the summary is rendered.
#[derive(Debug, Clone)]
pub struct MarkdownOptions {
    /// Upper bound on the output, in characters.
    pub max_chars: usize,
    /// Upper bound on the output, in bytes of UTF-8 (GitHub bounds its bodies in bytes).
    pub max_bytes: usize,
    /// A link to the full report (the run's artifacts), shown in the truncation notice.
    pub report_url: Option<String>,
    /// Extra Markdown placed right after the status line (e.g. the baseline comparison).
    pub preamble: Option<String>,
}

impl Default for MarkdownOptions {
    fn default() -> Self {
        MarkdownOptions {
            max_chars: 65_000,
            max_bytes: usize::MAX,
            report_url: None,
            preamble: None,
        }
    }
}

/// A status emoji.
fn icon(status: TestStatus) -> &'static str {
    match status {
        TestStatus::Passed => "✅",
        TestStatus::Failed => "❌",
        TestStatus::Error => "⚠️",
        TestStatus::Skipped => "⏭️",
    }
}

fn assertion_icon(status: AssertionStatus) -> &'static str {
    match status {
        AssertionStatus::Pass => "✅",
        AssertionStatus::Fail => "❌",
        AssertionStatus::Error | AssertionStatus::Invalid => "⚠️",
        AssertionStatus::Skip => "⏭️",
    }
}

struct Row {
    icon: &'static str,
    name: String,
    file: String,
    assertions: String,
    time: String,
    cost: String,
}

#[derive(Template)]
#[template(path = "summary.md", escape = "none")]
struct Summary<'a> {
    title: String,
    status_line: String,
    preamble: &'a str,
    rows: Vec<Row>,
    rows_left_out: usize,
}

struct FailedAssertion {
    icon: &'static str,
    description: String,
    location: String,
    detail: Option<String>,
}

#[derive(Template)]
#[template(path = "failure.md", escape = "none")]
struct Failure {
    icon: &'static str,
    name: String,
    headline: String,
    error: Option<String>,
    assertions: Vec<FailedAssertion>,
}

/// The status line: counts, time, tokens and cost.
pub fn status_line(results: &Results) -> String {
    let s = &results.summary;
    let join = |counts: Vec<(u32, &str)>| {
        counts
            .into_iter()
            .map(|(n, word)| format!("{n} {word}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (parts, assertions) = (join(s.test_counts()), join(s.assertion_counts()));
    let mut extra = String::new();
    if let Some(r) = &s.runs {
        let mut runs = vec![(r.passed, "passed")];
        runs.extend(
            [
                (r.failed, "failed"),
                (r.errors, "error"),
                (r.skipped, "skipped"),
            ]
            .into_iter()
            .filter(|(n, _)| *n > 0),
        );
        extra.push_str(&format!(" · **runs**: {}", join(runs)));
        if r.flaky_tests > 0 {
            extra.push_str(&format!(
                " ({} flaky test{})",
                r.flaky_tests,
                if r.flaky_tests == 1 { "" } else { "s" }
            ));
        }
    }
    if let Some(r) = &s.routing {
        extra.push_str(&format!(" · **{}**", r.phrase()));
    }
    if s.reused > 0 {
        extra.push_str(&format!(" · ↺ {} reused (the agent did not run)", s.reused));
    }
    if let Some(b) = &s.budget {
        extra.push_str(" · ");
        extra.push_str(&crate::report::terminal::budget_phrase(b));
    }
    if let Some(u) = &s.simulated_user {
        // Its own line: the simulated users' share of the usage in the line above.
        let line = crate::transcript::display::simulated_user_line(u);
        extra.push_str(&format!("\n\n💬 {line} (in the usage above)"));
    }
    if let Some(sandbox) = &s.sandbox {
        // Emoji stay here, unlike in the HTML report: this Markdown is read on GitHub,
        // which draws its emoji with a fallback image (`<g-emoji fallback-src>`) where the
        // reader has no emoji font, and the words after the mark say it all anyway.
        let mark = if sandbox.any_unsandboxed() {
            "⚠️"
        } else {
            "🔒"
        };
        extra.push_str(&format!("\n\n{mark} {}", sandbox.phrase()));
    }
    if let Some(witness) = &s.witness {
        let mark = if witness.tampered > 0 {
            "❌"
        } else if witness.any_unwitnessed() {
            "⚠️"
        } else {
            "✅"
        };
        extra.push_str(&format!("\n\n{mark} {}", witness.phrase()));
    }
    format!(
        "**{} test{}**: {} · **assertions**: {} · {} · {}{extra}",
        s.total,
        if s.total == 1 { "" } else { "s" },
        parts,
        assertions,
        format_duration(s.duration_ms),
        format_usage(&s.usage)
    )
}

/// The headline without its emoji: `aptitude: 2 of 3 tests failed`.
pub fn plain_title(results: &Results) -> String {
    let t = title(results);
    t.split_once(' ')
        .map_or(t.clone(), |(_, rest)| rest.to_owned())
}

/// The headline: `✅ aptitude: 3 tests passed`, `❌ aptitude: 2 of 3 tests failed`.
pub fn title(results: &Results) -> String {
    let s = &results.summary;
    let routing = s.routing.as_ref();
    // Routing prompts count apart: `4 of 6 routing prompts as expected`.
    let routed = routing.map(|r| {
        format!(
            "{} of {} routing prompt{} as expected",
            r.as_expected,
            r.prompts,
            if r.prompts == 1 { "" } else { "s" }
        )
    });
    if s.total == 0 && routing.is_none() {
        "⏭️ aptitude: no tests ran".into()
    } else if s.failed > 0 {
        format!("❌ aptitude: {} of {} tests failed", s.failed, s.total)
    } else if s.errors > 0 {
        format!(
            "⚠️ aptitude: {} of {} tests could not be judged",
            s.errors, s.total
        )
    } else if let Some(r) = routing.filter(|r| r.errors > 0) {
        format!(
            "⚠️ aptitude: {} of {} routing prompts could not be judged",
            r.errors, r.prompts
        )
    } else if let Some(fell) = results
        .routing
        .as_ref()
        .and_then(|r| r.baseline.as_ref())
        .map(|b| b.regressions.len())
        .filter(|n| *n > 0)
    {
        format!(
            "❌ aptitude: routing fell against the baseline ({fell} figure{})",
            if fell == 1 { "" } else { "s" }
        )
    } else if let Some(b) = s.budget.as_ref().filter(|b| b.skipped_runs > 0) {
        format!(
            "⚠️ aptitude: the cost ceiling was reached, {} run{} skipped",
            b.skipped_runs,
            if b.skipped_runs == 1 { "" } else { "s" }
        )
    } else if s.total == 0
        && let Some(routed) = routed
    {
        format!("✅ aptitude: {routed}")
    } else if s.passed == 0 {
        format!("⏭️ aptitude: all {} tests skipped", s.total)
    } else {
        let routed = routed.map(|r| format!("; {r}")).unwrap_or_default();
        format!(
            "✅ aptitude: {} test{} passed{routed}",
            s.passed,
            if s.passed == 1 { "" } else { "s" }
        )
    }
}

fn row(t: &TestResult) -> Row {
    let passed = t
        .assertions
        .iter()
        .filter(|a| a.status == AssertionStatus::Pass)
        .count();
    Row {
        icon: icon(t.status),
        name: if t.reused.is_some() {
            format!("{} ↺ reused", markdown_inline(&t.qualified_name(false)))
        } else {
            markdown_inline(&t.qualified_name(false))
        },
        file: markdown_inline(&t.file),
        assertions: match (&t.routing, &t.repeat) {
            // A routing prompt's line: what it chose, in how many runs.
            (Some(_), _) => t
                .assertions
                .iter()
                .find(|a| a.kind == "routing")
                .map_or_else(String::new, |a| markdown_inline(&a.description)),
            (None, Some(r)) => markdown_inline(&r.headline()),
            (None, None) => format!("{passed}/{}", t.assertions.len()),
        },
        time: format_duration(t.duration_ms),
        cost: t
            .usage
            .as_ref()
            .and_then(|u| u.cost_usd)
            .map_or_else(|| "—".to_owned(), |c| format!("${c:.4}")),
    }
}

/// The cap on one detail block, in characters, so that one huge output can not crowd out
/// every other failure.
const DETAIL_MAX: usize = 2_000;

fn failure(t: &TestResult) -> Option<String> {
    let flaky = t.repeat.as_ref().is_some_and(|r| r.flaky);
    if !matches!(t.status, TestStatus::Failed | TestStatus::Error) && !flaky {
        return None;
    }
    let bad: Vec<FailedAssertion> = t
        .assertions
        .iter()
        .filter(|a| !matches!(a.status, AssertionStatus::Pass | AssertionStatus::Skip))
        .map(|a| FailedAssertion {
            icon: assertion_icon(a.status),
            description: markdown_inline(&a.description),
            location: markdown_inline(&format!("{}:{}", t.file, a.line)),
            detail: a
                .detail
                .as_deref()
                .filter(|d| !d.trim().is_empty())
                .map(|d| {
                    markdown_code_block(&crate::shared::text::truncate_lines(d, DETAIL_MAX))
                        .lines()
                        .map(|l| format!("  {l}"))
                        .collect::<Vec<_>>()
                        .join("\n")
                }),
        })
        .collect();
    let failed = bad.iter().filter(|a| a.icon == "❌").count();
    let mut headline = match (t.status, failed, &t.repeat) {
        (TestStatus::Error, _, _) => "could not be judged".to_owned(),
        (_, _, Some(r)) => markdown_html_inline(&r.headline()),
        (_, 1, None) => "1 assertion failed".to_owned(),
        (_, n, None) => format!("{n} assertions failed"),
    };
    if let Some(r) = &t.repeat {
        let names: Vec<String> = r
            .flaky_assertions()
            .map(|a| markdown_html_inline(&format!("{} ({})", a.description, a.phrase(r.runs))))
            .collect();
        if !names.is_empty() {
            headline.push_str(&format!(" — flaky: {}", names.join("; ")));
        }
    }
    let error = t.error.as_deref().map(|e| match t.error_kind {
        Some(kind) => format!("[{}] {e}", kind.word()),
        None => e.to_owned(),
    });
    let view = Failure {
        icon: icon(t.status),
        name: markdown_html_inline(&t.qualified_name(false)),
        headline,
        error: error.as_deref().map(markdown_code_block),
        assertions: bad,
    };
    view.render().ok()
}

/// The size of a text in both units a budget counts.
#[derive(Debug, Clone, Copy, Default)]
struct Size {
    chars: usize,
    bytes: usize,
}

impl Size {
    fn of(text: &str) -> Self {
        Size {
            chars: text.chars().count(),
            bytes: text.len(),
        }
    }

    fn plus(self, other: Size) -> Size {
        Size {
            chars: self.chars + other.chars,
            bytes: self.bytes + other.bytes,
        }
    }

    fn within(self, options: &MarkdownOptions) -> bool {
        self.chars <= options.max_chars && self.bytes <= options.max_bytes
    }
}

/// Cuts a summary whose fixed parts alone exceed the bound (a very small bound): the text is
/// cut on a character boundary and ends with `…`.
fn hard_bound(out: String, options: &MarkdownOptions) -> String {
    if Size::of(&out).within(options) {
        return out;
    }
    const TAIL: &str = "\n…\n";
    let tail = Size::of(TAIL);
    let (chars, bytes) = (
        options.max_chars.saturating_sub(tail.chars),
        options.max_bytes.saturating_sub(tail.bytes),
    );
    let kept = crate::shared::cut::bytes(&crate::shared::cut::chars(&out, chars).kept, bytes).kept;
    if options.max_chars >= tail.chars && options.max_bytes >= tail.bytes {
        kept + TAIL
    } else {
        kept
    }
}

/// The Markdown summary file format (`--markdown FILE`).
pub const FORMAT: super::FileFormat = super::FileFormat {
    name: "markdown",
    // The summary needs no test's run detail.
    render: |results, _, options| {
        Ok(render(
            results,
            &MarkdownOptions {
                max_chars: options.markdown_max_chars,
                ..MarkdownOptions::default()
            },
        ))
    },
};

/// The tests × agents table (GFM): one row per test and variant, one column per agent.
pub fn matrix_table(matrix: &crate::verdict::results::Matrix) -> String {
    let mut out = String::from("\n| test |");
    for column in &matrix.columns {
        out.push_str(&format!(" {} |", markdown_inline(&column.label())));
    }
    out.push_str("\n|---|");
    out.push_str(&"---|".repeat(matrix.columns.len()));
    out.push('\n');
    for row in &matrix.rows {
        let name = match &row.variant {
            Some(v) => format!("{} ({v})", row.name),
            None => row.name.clone(),
        };
        out.push_str(&format!("| {} |", markdown_inline(&name)));
        for cell in &row.cells {
            match cell {
                Some((status, runs)) => out.push_str(&format!(
                    " {}{} |",
                    icon(*status),
                    runs.as_deref().map(|r| format!(" {r}")).unwrap_or_default()
                )),
                None => out.push_str(" — |"),
            }
        }
        out.push('\n');
    }
    out
}

/// The releases side by side (GFM), when an agent ran on more than one: a row per (agent,
/// version) with its runs passed, pass rate and 95% interval, and the difference to the
/// reference release ([`crate::verdict::versions`]).
pub fn versions_table(versions: &[crate::verdict::versions::VersionStats]) -> String {
    let mut out = String::from("\n**Releases side by side**\n\n|");
    for head in crate::verdict::versions::COLUMNS {
        out.push_str(&format!(" {head} |"));
    }
    out.push_str("\n|---|---|---|---|---|\n");
    for v in versions {
        out.push('|');
        for cell in crate::verdict::versions::row(v) {
            out.push_str(&format!(" {} |", markdown_inline(&cell)));
        }
        out.push('\n');
    }
    out
}

/// The judged pass rate of each certified judge (GFM): raw and corrected for the judge's
/// errors (Rogan–Gladen, [`crate::verdict::results::JudgedPassRate`]).
pub fn judged_table(judged: &[crate::verdict::results::JudgedPassRate]) -> String {
    let mut out = String::from("\n**Judged pass rate**\n\n|");
    for head in crate::verdict::results::JudgedPassRate::COLUMNS {
        out.push_str(&format!(" {head} |"));
    }
    out.push_str("\n|---|---|---|---|\n");
    for j in judged {
        out.push('|');
        for cell in j.row() {
            out.push_str(&format!(" {} |", markdown_inline(&cell)));
        }
        out.push('\n');
    }
    out
}

/// The variants side by side (GFM), one table per test that ran with two or more variants:
/// variants as columns (`default` first), rows for runs passed, pass rate, the difference to
/// `default` with its Fisher p-value, and each assertion's pass count.
pub fn variants_tables(comparisons: &[crate::verdict::variants::VariantComparison]) -> String {
    let with_agent = crate::verdict::variants::several_agents(comparisons);
    let mut out = String::new();
    for c in comparisons {
        out.push_str(&format!(
            "\n**Variants of {}** · {}\n\n| |",
            markdown_inline(&c.title(with_agent)),
            markdown_inline(&c.file)
        ));
        for column in c.columns() {
            out.push_str(&format!(" {} |", markdown_inline(column)));
        }
        out.push_str("\n|---|");
        out.push_str(&"---|".repeat(c.variants.len()));
        out.push('\n');
        for row in c.grid() {
            out.push_str(&format!("| {} |", markdown_inline(&row.label)));
            for cell in &row.cells {
                out.push_str(&format!(" {} |", markdown_inline(cell)));
            }
            out.push('\n');
        }
    }
    out
}

/// Renders the summary within `options.max_chars` characters and `options.max_bytes` bytes.
pub fn render(results: &Results, options: &MarkdownOptions) -> String {
    let notice = |left: usize| {
        let link = options
            .report_url
            .as_deref()
            .map_or_else(String::new, |url| {
                format!(" — see the [full report]({url})")
            });
        // The blank line ends the HTML block of the last `</details>`: without it GFM
        // shows the `>` and the link as raw text.
        format!(
            "\n\n> ✂️ {left} more failing test{} not shown{link}.\n",
            if left == 1 { "" } else { "s" }
        )
    };
    let rows: Vec<Row> = results.tests.iter().map(row).collect();
    let mut summary = Summary {
        title: title(results),
        status_line: status_line(results),
        preamble: options.preamble.as_deref().unwrap_or(""),
        rows,
        rows_left_out: 0,
    };
    let half = MarkdownOptions {
        max_chars: options.max_chars / 2,
        max_bytes: options.max_bytes / 2,
        ..options.clone()
    };
    let mut out = summary.render().unwrap_or_default();
    // Very large suites: keep the table within half the budget.
    while !Size::of(&out).within(&half) && !summary.rows.is_empty() {
        let drop = (summary.rows.len() / 4).max(1);
        summary.rows.truncate(summary.rows.len() - drop);
        summary.rows_left_out += drop;
        out = summary.render().unwrap_or_default();
    }
    if let Some(routing) = &results.routing {
        let section = crate::report::routing::markdown(routing);
        if Size::of(&out).plus(Size::of(&section)).within(&half) {
            out.push('\n');
            out.push_str(&section);
        }
    }
    if let Some(matrix) = results.matrix() {
        let table = matrix_table(&matrix);
        if Size::of(&out).plus(Size::of(&table)).within(&half) {
            out.push('\n');
            out.push_str(&table);
        }
    }
    if !results.judged.is_empty() {
        let table = judged_table(&results.judged);
        if Size::of(&out).plus(Size::of(&table)).within(&half) {
            out.push('\n');
            out.push_str(&table);
        }
    }
    if !results.summary.versions.is_empty() {
        let table = versions_table(&results.summary.versions);
        if Size::of(&out).plus(Size::of(&table)).within(&half) {
            out.push('\n');
            out.push_str(&table);
        }
    }
    let comparisons = &results.summary.variants;
    if !comparisons.is_empty() {
        let tables = variants_tables(comparisons);
        if Size::of(&out).plus(Size::of(&tables)).within(&half) {
            out.push('\n');
            out.push_str(&tables);
        }
    }
    if let Some(coverage) = &results.coverage {
        let section = crate::report::coverage::markdown(coverage);
        if Size::of(&out).plus(Size::of(&section)).within(&half) {
            out.push('\n');
            out.push_str(&section);
        }
    }
    let failures: Vec<String> = results.tests.iter().filter_map(failure).collect();
    let reserve = Size::of(&notice(failures.len())).plus(Size {
        chars: 16,
        bytes: 16,
    });
    let mut used = Size::of(&out);
    for (i, f) in failures.iter().enumerate() {
        let next = used.plus(Size::of(f)).plus(Size { chars: 1, bytes: 1 });
        if !next.plus(reserve).within(options) {
            out.push_str(&notice(failures.len() - i));
            return hard_bound(out, options);
        }
        out.push('\n');
        out.push_str(f);
        used = next;
    }
    if !out.ends_with('\n') {
        out.push('\n');
    }
    hard_bound(out, options)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bound_is_honoured_even_below_the_fixed_parts() {
        let results = Results::new(Vec::new(), 0);
        for max in [1, 10, 100, 301] {
            let options = MarkdownOptions {
                max_chars: max,
                ..MarkdownOptions::default()
            };
            let md = render(&results, &options);
            assert!(md.chars().count() <= max, "{max}: {md}");
            let bytes = MarkdownOptions {
                max_bytes: max,
                ..MarkdownOptions::default()
            };
            assert!(render(&results, &bytes).len() <= max);
        }
        assert!(render(&results, &MarkdownOptions::default()).ends_with('\n'));
    }

    /// A certified judge's pass rate shows raw and corrected, with intervals, in the
    /// Markdown and the HTML report alike (issue #40 item 5).
    #[test]
    fn the_judged_pass_rate_shows_raw_and_corrected_in_every_report() {
        let mut results = Results::new(Vec::new(), 0);
        results.judged = vec![crate::verdict::results::JudgedPassRate {
            judge: "claude · claude-sonnet-4-6".into(),
            passed: 6,
            graded: 8,
            raw: crate::verdict::agreement::Rate::of(6, 8),
            corrected: crate::verdict::agreement::rogan_gladen_rate(6, 8, 0.9, 0.8),
        }];
        let [_, passed, raw, corrected] = results.judged[0].row();
        assert_eq!(passed, "6/8");
        assert!(raw.starts_with("75.0% ["), "{raw}");
        // (0.75 + 0.8 − 1) / (0.9 + 0.8 − 1) = 0.7857…
        assert!(corrected.starts_with("78.6% ["), "{corrected}");
        let md = render(&results, &MarkdownOptions::default());
        assert!(md.contains("**Judged pass rate**"), "{md}");
        assert!(
            md.contains(&format!(
                "| claude · claude-sonnet-4-6 | 6/8 | {} | {} |",
                markdown_inline(&raw),
                markdown_inline(&corrected)
            )),
            "{md}"
        );
        let html = crate::report::html::render(&results).unwrap();
        assert!(html.contains(r##"<a href="#judged">judged pass rate</a>"##));
        assert!(html.contains(&format!(r#"<td class="figure">{corrected}</td>"#)));
    }
}
