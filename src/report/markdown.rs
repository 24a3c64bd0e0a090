//! The Markdown summary (`--markdown FILE`): the GitHub job summary and the PR comment.
//!
//! A status line, a table of tests, and each failed or errored test in a `<details>` block
//! with its assertions' reasoning. Rendered with askama (`templates/summary.md`,
//! `templates/failure.md`) from the results model.
//!
//! Text that came from an agent, a judge or a file is neutralized: it goes into fenced code
//! blocks whose fence is longer than any backtick run in it, so it can not contain raw
//! HTML, `@mention` anyone, or close our `<details>`; names in table cells have `|`, `<`,
//! `>`, `&`, `@`, `[`, `]` and line breaks escaped. The output is bounded: past
//! [`MarkdownOptions::max_chars`] the remaining failures are left out with a notice
//! (GitHub comments hold 65,536 characters).

use askama::Template;

use crate::report::terminal::{format_duration, format_usage};
use crate::results::{AssertionStatus, Results, TestResult, TestStatus};

/// How the summary is rendered.
#[derive(Debug, Clone)]
pub struct MarkdownOptions {
    /// Upper bound on the output, in characters.
    pub max_chars: usize,
    /// A link to the full report (the run's artifacts), shown in the truncation notice.
    pub report_url: Option<String>,
    /// Extra Markdown placed right after the status line (e.g. the baseline comparison).
    pub preamble: Option<String>,
}

impl Default for MarkdownOptions {
    fn default() -> Self {
        MarkdownOptions {
            max_chars: 65_000,
            report_url: None,
            preamble: None,
        }
    }
}

/// Escapes text for a table cell or a line of Markdown: no HTML, no mention, no link, no
/// table break.
pub fn inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '|' => out.push_str("\\|"),
            '[' => out.push_str("\\["),
            ']' => out.push_str("\\]"),
            '`' => out.push('\''),
            // A word joiner after `@` keeps the text readable but never pings anyone.
            '@' => out.push_str("@\u{2060}"),
            '\n' | '\r' => out.push(' '),
            other => out.push(other),
        }
    }
    out
}

/// A fenced code block holding `text` verbatim; the fence outgrows any backtick run in it.
pub fn fenced(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat((longest + 1).max(3));
    format!("{fence}text\n{}\n{fence}", text.trim_end())
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
    format!(
        "**{} test{}**: {} · **assertions**: {} · {} · {}",
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
    if s.total == 0 {
        "⏭️ aptitude: no tests ran".into()
    } else if s.failed > 0 {
        format!("❌ aptitude: {} of {} tests failed", s.failed, s.total)
    } else if s.errors > 0 {
        format!(
            "⚠️ aptitude: {} of {} tests could not be judged",
            s.errors, s.total
        )
    } else if s.passed == 0 {
        format!("⏭️ aptitude: all {} tests skipped", s.total)
    } else {
        format!(
            "✅ aptitude: {} test{} passed",
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
        name: inline(&t.name),
        file: inline(&t.file),
        assertions: format!("{passed}/{}", t.assertions.len()),
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
    if !matches!(t.status, TestStatus::Failed | TestStatus::Error) {
        return None;
    }
    let bad: Vec<FailedAssertion> = t
        .assertions
        .iter()
        .filter(|a| !matches!(a.status, AssertionStatus::Pass | AssertionStatus::Skip))
        .map(|a| FailedAssertion {
            icon: assertion_icon(a.status),
            description: inline(&a.description),
            location: inline(&format!("{}:{}", t.file, a.line)),
            detail: a
                .detail
                .as_deref()
                .filter(|d| !d.trim().is_empty())
                .map(|d| {
                    fenced(&crate::assertions::truncate_lines(d, DETAIL_MAX))
                        .lines()
                        .map(|l| format!("  {l}"))
                        .collect::<Vec<_>>()
                        .join("\n")
                }),
        })
        .collect();
    let failed = bad.iter().filter(|a| a.icon == "❌").count();
    let headline = match (t.status, failed) {
        (TestStatus::Error, _) => "could not be judged".to_owned(),
        (_, 1) => "1 assertion failed".to_owned(),
        (_, n) => format!("{n} assertions failed"),
    };
    let view = Failure {
        icon: icon(t.status),
        name: inline(&t.name),
        headline,
        error: t.error.as_deref().map(fenced),
        assertions: bad,
    };
    view.render().ok()
}

/// Renders the summary within `options.max_chars`.
pub fn render(results: &Results, options: &MarkdownOptions) -> String {
    let notice = |left: usize| {
        let link = options
            .report_url
            .as_deref()
            .map_or_else(String::new, |url| {
                format!(" — see the [full report]({url})")
            });
        format!(
            "\n> ✂️ {left} more failing test{} not shown{link}.\n",
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
    let mut out = summary.render().unwrap_or_default();
    // Very large suites: keep the table within half the budget.
    while out.chars().count() > options.max_chars / 2 && !summary.rows.is_empty() {
        let drop = (summary.rows.len() / 4).max(1);
        summary.rows.truncate(summary.rows.len() - drop);
        summary.rows_left_out += drop;
        out = summary.render().unwrap_or_default();
    }
    let failures: Vec<String> = results.tests.iter().filter_map(failure).collect();
    let reserve = notice(failures.len()).chars().count() + 16;
    let mut used = out.chars().count();
    for (i, f) in failures.iter().enumerate() {
        let len = f.chars().count() + 1;
        if used + len + reserve > options.max_chars {
            out.push_str(&notice(failures.len() - i));
            return out;
        }
        out.push('\n');
        out.push_str(f);
        used += len;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_text_can_not_inject() {
        assert_eq!(
            inline("<b>@octocat</b> | [x](y)"),
            "&lt;b&gt;@\u{2060}octocat&lt;/b&gt; \\| \\[x\\](y)"
        );
        assert_eq!(inline("a\nb"), "a b");
    }

    #[test]
    fn fences_outgrow_the_text() {
        assert_eq!(fenced("plain"), "```text\nplain\n```");
        let nasty = "```\n</details>\n````";
        let f = fenced(nasty);
        assert!(f.starts_with("`````text\n"), "{f}");
        assert!(f.ends_with("\n`````"), "{f}");
    }
}
