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

/// The terminal's view: a line per file, then each rule that is not simply covered.
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
            RuleStatus::Covered => continue,
            RuleStatus::Uncovered => "uncovered",
            RuleStatus::NoMeasuredEffect => "no measured effect",
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
    out
}
