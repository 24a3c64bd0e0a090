//! The coverage of instruction files ([`crate::verdict::coverage`]) as the terminal and
//! Markdown show it: per file, rules covered out of all; the rules no test covers and
//! those whose removal changed nothing; each rule's tests, pass rate and effect. Rule
//! texts come from the repository's files (a pull request's): they are made inert for
//! their sink ([`crate::shared::inert`]).

use std::fmt::Write as _;

use crate::shared::inert;
use crate::verdict::coverage::{Coverage, RuleCoverage, RuleStatus};

fn percent(covered: u32, rules: u32) -> String {
    if rules == 0 {
        "–".into()
    } else {
        format!("{:.0}%", f64::from(covered) * 100.0 / f64::from(rules))
    }
}

/// The most covered rules the Markdown lists with their pass rate: the section must fit
/// beside the rest of a pull-request comment (GitHub caps one at 65,536 characters), and
/// the Markdown report drops a section that does not fit whole.
const MARKDOWN_COVERED_MAX: usize = 40;

/// A covered rule's tests and pass rate: `2 tests, 80% passed of 5 runs`, or
/// `1 test, no judged runs` without results.
fn pass_phrase(rule: &RuleCoverage) -> String {
    let tests = format!(
        "{} test{}",
        rule.tests.len(),
        if rule.tests.len() == 1 { "" } else { "s" }
    );
    match rule.pass_rate {
        Some(r) => format!(
            "{tests}, {:.0}% passed of {} run{}",
            r * 100.0,
            rule.runs,
            if rule.runs == 1 { "" } else { "s" }
        ),
        None => format!("{tests}, no judged runs"),
    }
}

fn effect_phrase(rule: &RuleCoverage) -> Option<String> {
    let e = rule.effect.as_ref()?;
    let rate = |r: Option<f64>| r.map_or("–".to_owned(), |r| format!("{:.0}%", r * 100.0));
    let mut text = format!(
        "with {} / without {} ({})",
        rate(e.with),
        rate(e.without),
        e.variant
    );
    if let Some(p) = e.p_value {
        let _ = write!(text, ", {}", crate::shared::text::p_phrase(p));
    }
    Some(text)
}

/// The terminal's view: a line per file, then a line per rule (covered ones with their
/// tests and pass rate), an effect line where a variant removed the rule, and the totals.
pub fn terminal(c: &Coverage) -> String {
    let mut out = String::new();
    for f in &c.files {
        let _ = writeln!(
            out,
            "{}: {} of {} rules covered ({})",
            inert::terminal(&f.file),
            f.totals.covered,
            f.totals.rules,
            percent(f.totals.covered, f.totals.rules)
        );
    }
    for rule in &c.rules {
        let mark = match rule.status {
            RuleStatus::Covered => format!("covered ({})", pass_phrase(rule)),
            RuleStatus::Uncovered => "uncovered".into(),
            RuleStatus::NoMeasuredEffect => {
                format!("no measured effect ({})", pass_phrase(rule))
            }
        };
        let _ = writeln!(
            out,
            "  {}:{} {} {mark}: {}",
            inert::terminal(&rule.file),
            rule.line,
            rule.id,
            inert::terminal(&crate::shared::cut::chars(&rule.text, 100).kept)
        );
        if let Some(e) = effect_phrase(rule) {
            let _ = writeln!(out, "    {}", inert::terminal(&e));
        }
    }
    let _ = writeln!(
        out,
        "rules covered: {} of {} ({})",
        c.totals.covered,
        c.totals.rules,
        percent(c.totals.covered, c.totals.rules)
    );
    out
}

/// The Markdown section (PR comment, job summary, `--markdown`): the totals per file in a
/// table, and the rules left uncovered or without a measured effect in a folded list.
pub fn markdown(c: &Coverage) -> String {
    let mut out = format!(
        "### Instruction coverage: {} of {} rules ({})\n\n| file | covered | rules |\n|---|---|---|\n",
        c.totals.covered,
        c.totals.rules,
        percent(c.totals.covered, c.totals.rules)
    );
    for f in &c.files {
        let _ = writeln!(
            out,
            "| {} | {} | {} |",
            inert::markdown_inline(&f.file),
            f.totals.covered,
            f.totals.rules
        );
    }
    let notable: Vec<&RuleCoverage> = c
        .rules
        .iter()
        .filter(|r| r.status != RuleStatus::Covered)
        .collect();
    if !notable.is_empty() {
        let _ = write!(
            out,
            "\n<details><summary>{} rule{} uncovered or without a measured effect</summary>\n\n",
            notable.len(),
            if notable.len() == 1 { "" } else { "s" }
        );
        for rule in notable {
            let mark = if rule.status == RuleStatus::Uncovered {
                "uncovered"
            } else {
                "no measured effect"
            };
            let _ = write!(
                out,
                "- {}:{} `{}` {mark}: {}",
                inert::markdown_inline(&rule.file),
                rule.line,
                rule.id,
                inert::markdown_inline(&crate::shared::cut::chars(&rule.text, 120).kept)
            );
            if let Some(e) = effect_phrase(rule) {
                let _ = write!(out, " — {}", inert::markdown_inline(&e));
            }
            out.push('\n');
        }
        out.push_str("\n</details>\n");
    }
    covered_list(c, &mut out);
    out
}

/// The covered rules with their tests and pass rate, folded, at most
/// [`MARKDOWN_COVERED_MAX`] of them and a note of how many more.
fn covered_list(c: &Coverage, out: &mut String) {
    let covered: Vec<&RuleCoverage> = c
        .rules
        .iter()
        .filter(|r| r.status == RuleStatus::Covered)
        .collect();
    if covered.is_empty() {
        return;
    }
    let _ = write!(
        out,
        "\n<details><summary>{} covered rule{} and {} pass rate{}</summary>\n\n",
        covered.len(),
        if covered.len() == 1 { "" } else { "s" },
        if covered.len() == 1 { "its" } else { "their" },
        if covered.len() == 1 { "" } else { "s" }
    );
    for rule in covered.iter().take(MARKDOWN_COVERED_MAX) {
        let _ = writeln!(
            out,
            "- {}:{} `{}` {}: {}",
            inert::markdown_inline(&rule.file),
            rule.line,
            rule.id,
            inert::markdown_inline(&pass_phrase(rule)),
            inert::markdown_inline(&crate::shared::cut::chars(&rule.text, 120).kept)
        );
    }
    if covered.len() > MARKDOWN_COVERED_MAX {
        let _ = writeln!(
            out,
            "- … and {} more (see the JSON or HTML report)",
            covered.len() - MARKDOWN_COVERED_MAX
        );
    }
    out.push_str("\n</details>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::coverage::{FileTotals, Totals};

    fn rule(line: u32, status: RuleStatus, pass_rate: Option<f64>, runs: u32) -> RuleCoverage {
        RuleCoverage {
            file: "AGENTS.md".into(),
            line,
            end_line: line,
            id: format!("r{line}"),
            headings: Vec::new(),
            text: "Run `cargo fmt` before committing <script>".into(),
            tests: vec!["t.yaml::fmt".into()],
            pass_rate,
            runs,
            effect: None,
            status,
        }
    }

    fn coverage(rules: Vec<RuleCoverage>) -> Coverage {
        let covered = rules
            .iter()
            .filter(|r| r.status == RuleStatus::Covered)
            .count() as u32;
        let totals = Totals {
            covered,
            rules: rules.len() as u32,
        };
        Coverage {
            files: vec![FileTotals {
                file: "AGENTS.md".into(),
                totals,
            }],
            rules,
            totals,
        }
    }

    #[test]
    fn terminal_shows_each_covered_rules_pass_rate() {
        let c = coverage(vec![
            rule(3, RuleStatus::Covered, Some(0.8), 5),
            rule(4, RuleStatus::Covered, None, 0),
        ]);
        let text = terminal(&c);
        assert!(
            text.contains("AGENTS.md:3 r3 covered (1 test, 80% passed of 5 runs)"),
            "{text}"
        );
        assert!(
            text.contains("AGENTS.md:4 r4 covered (1 test, no judged runs)"),
            "{text}"
        );
    }

    #[test]
    fn markdown_lists_covered_rules_with_pass_rate_inert_and_bounded() {
        let rules = (1..=MARKDOWN_COVERED_MAX as u32 + 3)
            .map(|l| rule(l, RuleStatus::Covered, Some(0.5), 2))
            .collect();
        let md = markdown(&coverage(rules));
        assert!(md.contains("43 covered rules and their pass rates"), "{md}");
        assert!(md.contains("`r1` 1 test, 50% passed of 2 runs"), "{md}");
        assert!(md.contains("… and 3 more"), "{md}");
        assert!(!md.contains("`r41`"), "{md}");
        assert!(!md.contains("<script>"), "{md}");
    }
}
