//! The routing of routing suites ([`crate::verdict::routing`]) as every format shows it:
//! per suite and agent, a table of each skill's recall and false-trigger rate with their
//! 95% intervals, the skill × prompt-class confusion matrix, how many runs errored, and
//! what moved against the baseline. [`tables`] is the one view; the terminal, Markdown
//! (job summary, PR comment) and HTML render it, JUnit has a case per skill and agent
//! ([`junit_cases`]). Skill and suite names come from a pull request's files: each format
//! makes them inert for its sink ([`crate::shared::inert`]).

use std::fmt::Write as _;

use crate::shared::inert;
use crate::spec::routing::Stop;
use crate::verdict::routing::{ConfusionMatrix, Figure, Routing, RoutingChange};

/// One table of the routing section, in words, for any format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    /// `Routing of docs on claude`, `Confusion matrix of docs on claude (runs)`.
    pub caption: String,
    /// The suite's file.
    pub file: String,
    /// The column headings; the first heads the row labels.
    pub head: Vec<String>,
    /// Rows: a label, then one cell per further heading.
    pub rows: Vec<Vec<String>>,
    /// Sentences under the table: when runs stopped, runs that errored, moves against the
    /// baseline.
    pub notes: Vec<String>,
}

/// `90% (95% CI 60%–98%) · 10 prompts`, or `–` without a judged prompt.
fn cell(figure: Option<&Figure>) -> String {
    figure.map_or_else(
        || "–".to_owned(),
        |f| {
            format!(
                "{} · {} prompt{}",
                f.phrase(),
                f.prompts,
                if f.prompts == 1 { "" } else { "s" }
            )
        },
    )
}

/// The tables of every suite and agent: figures, then the confusion matrix.
pub fn tables(routing: &Routing) -> Vec<Table> {
    let mut out = Vec::new();
    for m in &routing.matrices {
        let entries = routing
            .entries
            .iter()
            .filter(|e| e.file == m.file && e.suite == m.suite && e.agent == m.agent);
        let rows = entries
            .map(|e| {
                vec![
                    e.skill.clone(),
                    cell(e.recall.as_ref()),
                    cell(e.false_trigger_rate.as_ref()),
                ]
            })
            .collect();
        out.push(Table {
            caption: format!("Routing of {} on {}", m.suite, m.agent),
            file: m.file.clone(),
            head: vec!["skill".into(), "recall".into(), "false triggers".into()],
            rows,
            notes: notes(routing, m),
        });
        out.push(confusion(m));
    }
    out
}

/// The confusion matrix as a table: what the runs triggered down, what the prompts should
/// trigger across, then the judged runs of each class.
fn confusion(m: &ConfusionMatrix) -> Table {
    let mut head = vec!["triggered ↓ · should trigger →".to_owned()];
    head.extend(m.classes.iter().cloned());
    let mut rows: Vec<Vec<String>> = m
        .rows
        .iter()
        .map(|r| {
            std::iter::once(r.triggered.clone())
                .chain(r.counts.iter().map(u32::to_string))
                .collect()
        })
        .collect();
    rows.push(
        std::iter::once("judged runs (prompts)".to_owned())
            .chain(
                m.runs
                    .iter()
                    .zip(&m.prompts)
                    .map(|(runs, prompts)| format!("{runs} ({prompts})")),
            )
            .collect(),
    );
    Table {
        caption: format!("Confusion matrix of {} on {} (runs)", m.suite, m.agent),
        file: m.file.clone(),
        head,
        rows,
        notes: Vec::new(),
    }
}

/// The sentences under a suite's figures on one agent.
fn notes(routing: &Routing, m: &ConfusionMatrix) -> Vec<String> {
    let mut notes = vec![match m.stop {
        Stop::FirstCall => {
            "each run stopped at the agent's first call, its decision (stop: first_call)".to_owned()
        }
        Stop::Never => "each run went to its end (stop: never)".to_owned(),
    }];
    if m.errors.runs > 0 {
        notes.push(format!(
            "{} run{} errored ({} prompt{}): counted in no figure",
            m.errors.runs,
            if m.errors.runs == 1 { "" } else { "s" },
            m.errors.prompts,
            if m.errors.prompts == 1 { "" } else { "s" }
        ));
    }
    if let Some(b) = &routing.baseline {
        let mine = |c: &&RoutingChange| c.suite == m.suite && c.agent == m.agent;
        for (what, list) in [
            ("regression against the baseline", &b.regressions),
            ("better than the baseline", &b.improvements),
            ("changed, not significantly", &b.changed),
        ] {
            for c in list.iter().filter(mine) {
                notes.push(format!("{what}: {}", c.phrase()));
            }
        }
    }
    notes
}

/// The regressions against the baseline, for the summary lines of every format:
/// `routing regression: pdf on claude: recall 10/10 → 2/10 prompts (p < 0.001)`.
pub fn regressions(routing: &Routing) -> Vec<String> {
    routing.baseline.as_ref().map_or_else(Vec::new, |b| {
        b.regressions
            .iter()
            .map(|c| format!("routing regression: {}", c.phrase()))
            .collect()
    })
}

/// The terminal's view: each table aligned, its notes below.
pub fn terminal(routing: &Routing) -> String {
    let mut out = String::new();
    for (i, t) in tables(routing).iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let _ = writeln!(
            out,
            "{}  {}",
            inert::terminal(&t.caption),
            inert::terminal(&t.file)
        );
        let rows: Vec<Vec<String>> = std::iter::once(&t.head)
            .chain(&t.rows)
            .map(|r| r.iter().map(|c| inert::terminal(c)).collect())
            .collect();
        let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..columns)
            .map(|j| {
                rows.iter()
                    .filter_map(|r| r.get(j))
                    .map(|c| c.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        for row in &rows {
            let mut line = String::from(" ");
            for (c, w) in row.iter().zip(&widths) {
                let _ = write!(line, " {c:w$} ");
            }
            let _ = writeln!(out, "{}", line.trim_end());
        }
        for note in &t.notes {
            let _ = writeln!(out, "  {}", inert::terminal(note));
        }
    }
    out
}

/// The Markdown section (GFM): each table with its caption and notes, cells escaped.
pub fn markdown(routing: &Routing) -> String {
    let mut out = String::new();
    for t in tables(routing) {
        let _ = write!(
            out,
            "\n**{}** · {}\n\n|",
            inert::markdown_inline(&t.caption),
            inert::markdown_inline(&t.file)
        );
        for h in &t.head {
            let _ = write!(out, " {} |", inert::markdown_inline(h));
        }
        out.push_str("\n|");
        out.push_str(&"---|".repeat(t.head.len()));
        out.push('\n');
        for row in &t.rows {
            out.push('|');
            for c in row {
                let _ = write!(out, " {} |", inert::markdown_inline(c));
            }
            out.push('\n');
        }
        for note in &t.notes {
            let mark = if note.starts_with("regression") {
                "🔴 "
            } else {
                ""
            };
            let _ = writeln!(out, "\n{mark}{}", inert::markdown_inline(note));
        }
    }
    out
}

/// One JUnit case per skill and agent: its name (`routing · docs · pdf · claude`), its
/// figures for `system-out`, and why it failed (a regression against the baseline) or
/// errored (no prompt of it could be judged).
pub struct JunitCase {
    /// The suite's file, as the case's class name.
    pub file: String,
    /// `routing · <suite> · <skill> · <agent>`.
    pub name: String,
    /// `recall 90% (95% CI 60%–98%) · 10 prompts; false triggers …`.
    pub figures: String,
    /// The regression against the baseline, when there is one.
    pub failure: Option<String>,
    /// Why nothing could be measured, when nothing could.
    pub error: Option<String>,
}

/// The JUnit cases of the routing section.
pub fn junit_cases(routing: &Routing) -> Vec<JunitCase> {
    routing
        .entries
        .iter()
        .map(|e| {
            let failure = routing.baseline.as_ref().and_then(|b| {
                let moved: Vec<String> = b
                    .regressions
                    .iter()
                    .filter(|c| c.suite == e.suite && c.skill == e.skill && c.agent == e.agent)
                    .map(RoutingChange::phrase)
                    .collect();
                (!moved.is_empty()).then(|| moved.join("; "))
            });
            let error = (e.recall.is_none() && e.false_trigger_rate.is_none()).then(|| {
                format!(
                    "no run of the suite could be judged on {} ({} errored)",
                    e.agent, e.errors.runs
                )
            });
            JunitCase {
                file: e.file.clone(),
                name: format!("routing · {} · {} · {}", e.suite, e.skill, e.agent),
                figures: format!(
                    "recall {}; false triggers {}; {} run(s) errored",
                    cell(e.recall.as_ref()),
                    cell(e.false_trigger_rate.as_ref()),
                    e.errors.runs
                ),
                failure,
                error,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::agent_kind::AgentKind;
    use crate::verdict::routing::{ClassCount, Errored, MatrixRow, RoutingBaseline, RoutingEntry};

    /// A suite of one skill on Claude with a regression against the baseline.
    pub(crate) fn routing() -> Routing {
        let figure = |value: f64, prompts| Figure {
            value,
            low: 0.1,
            high: 0.9,
            prompts,
            prompts_triggered: 1,
            runs: prompts * 3,
            triggered: 2,
        };
        Routing {
            entries: vec![RoutingEntry {
                suite: "docs <b>".into(),
                file: "r.aptitude.yaml".into(),
                skill: "pdf".into(),
                agent: AgentKind::Claude,
                recall: Some(figure(0.5, 2)),
                false_trigger_rate: Some(figure(0.25, 4)),
                errors: Errored {
                    runs: 1,
                    prompts: 1,
                },
                matrix: vec![ClassCount {
                    class: "pdf".into(),
                    triggered: 3,
                    runs: 6,
                }],
            }],
            matrices: vec![ConfusionMatrix {
                suite: "docs <b>".into(),
                file: "r.aptitude.yaml".into(),
                agent: AgentKind::Claude,
                stop: Stop::FirstCall,
                classes: vec!["pdf".into(), "(none)".into()],
                prompts: vec![2, 4],
                runs: vec![6, 11],
                rows: vec![
                    MatrixRow {
                        triggered: "pdf".into(),
                        counts: vec![3, 3],
                    },
                    MatrixRow {
                        triggered: "(none)".into(),
                        counts: vec![3, 8],
                    },
                ],
                errors: Errored {
                    runs: 1,
                    prompts: 1,
                },
            }],
            baseline: Some(RoutingBaseline {
                significance: 0.05,
                regressions: vec![RoutingChange {
                    suite: "docs <b>".into(),
                    skill: "pdf".into(),
                    agent: AgentKind::Claude,
                    figure: "recall".into(),
                    before: [10, 10],
                    after: [2, 10],
                    p_value: 0.0004,
                }],
                ..RoutingBaseline::default()
            }),
        }
    }

    #[test]
    fn every_format_shows_the_figures_the_matrix_the_errors_and_the_regression() {
        let r = routing();
        let text = terminal(&r);
        assert!(text.contains("Routing of docs <b> on claude"), "{text}");
        assert!(
            text.contains(
                "  pdf    50% (95% CI 10%–90%) · 2 prompts  25% (95% CI 10%–90%) · 4 prompts\n"
            ),
            "{text}"
        );
        assert!(text.contains("(none)"), "{text}");
        assert!(
            text.contains("  judged runs (prompts)           6 (2)  11 (4)\n"),
            "{text}"
        );
        assert!(
            text.contains("1 run errored (1 prompt): counted in no figure"),
            "{text}"
        );
        assert!(
            text.contains(
                "regression against the baseline: pdf on claude: recall 10/10 → 2/10 prompts"
            ),
            "{text}"
        );
        let md = markdown(&r);
        assert!(
            md.contains("**Routing of docs &lt;b&gt; on claude**"),
            "{md}"
        );
        assert!(md.contains("| skill | recall | false triggers |"), "{md}");
        assert!(md.contains("🔴 regression against the baseline"), "{md}");
        assert!(!md.contains("<b>"), "names are escaped: {md}");
        let cases = junit_cases(&r);
        assert_eq!(cases.len(), 1);
        assert_eq!(cases[0].name, "routing · docs <b> · pdf · claude");
        assert!(
            cases[0]
                .failure
                .as_deref()
                .unwrap_or("")
                .contains("10/10 → 2/10")
        );
        assert!(cases[0].error.is_none());
        assert_eq!(
            regressions(&r),
            ["routing regression: pdf on claude: recall 10/10 → 2/10 prompts (p < 0.001)"]
        );
    }

    /// The HTML report, JUnit and the PR comment's title render the section from results
    /// alone, and a routing regression makes the run fail.
    #[test]
    fn html_junit_and_the_title_render_it_from_results() {
        use crate::verdict::results::{Results, TestResult, TestStatus};
        let passed = TestResult::new("docs › a", "r.aptitude.yaml", TestStatus::Passed);
        let mut results = Results::new(vec![passed], 1);
        results.routing = Some(routing());
        assert!(!results.all_passed());
        let html = crate::report::html::render(&results).unwrap();
        assert!(
            html.contains("<caption>Routing of docs &#60;b&#62; on claude")
                || html.contains("<caption>Routing of docs &lt;b&gt; on claude"),
            "{html}"
        );
        assert!(
            html.contains("<th scope=\"col\">false triggers</th>"),
            "{html}"
        );
        assert!(html.contains("class=\"routing-note regression\""), "{html}");
        let xml = crate::report::junit::render(&results).unwrap();
        assert!(
            xml.contains("name=\"routing · docs &lt;b&gt; · pdf · claude\""),
            "{xml}"
        );
        assert!(
            xml.contains("<failure message=\"routing fell against the baseline"),
            "{xml}"
        );
        assert!(
            crate::report::markdown::title(&results).starts_with("❌ aptitude: routing fell"),
            "{}",
            crate::report::markdown::title(&results)
        );
    }
}
