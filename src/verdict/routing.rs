//! The figures of routing suites: results JSON's `routing`, built from the runs of each
//! suite's prompts alone, so that every report renders it from a results file.
//!
//! For each suite, agent and skill S of the suite:
//! - **recall**: how often S triggered on its should-trigger prompts;
//! - **false-trigger rate**: how often S triggered on every other prompt of the suite (its
//!   near-misses, the other skills' prompts, the prompts that should trigger nothing);
//! - the skill's row of the **confusion matrix**: runs that triggered S, per prompt class.
//!
//! **Each prompt counts once.** A figure's `value` is the mean over its prompts of each
//! prompt's trigger rate (triggering runs ÷ judged runs); its 95% Wilson interval
//! ([`super::stats::wilson_interval_of_rate`]) takes n = the prompts, not the runs: a
//! prompt's repeats are not independent draws of the skill's routing, and pooling them
//! would overstate how sure the figure is. For the baseline, a prompt **triggered** when
//! more than half of its judged runs triggered (`prompts_triggered`), and two runs'
//! figures are compared by a one-sided Fisher exact test on those per-prompt outcomes
//! ([`compare`]).
//!
//! A run that errored (a skill that did not load, a crash, a timeout) counts in no figure;
//! `errors` says how many runs, and how many prompts had one. A run that was not started
//! (`skipped`) counts in none either.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::test_result::{TestResult, TestStatus};
use crate::spec::agent_kind::AgentKind;
use crate::spec::routing::{NO_SKILL, OTHER_SKILL, RoutingCase, Stop};

/// Results JSON's `routing`: every suite's figures per skill and agent, and the confusion
/// matrices.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Routing {
    /// One entry per (suite, skill, agent), suites in file order, skills in the suite's
    /// order, agents in the order their results came.
    pub entries: Vec<RoutingEntry>,
    /// One skill × prompt-class confusion matrix per (suite, agent).
    pub matrices: Vec<ConfusionMatrix>,
    /// The comparison with the baseline's routing (`--baseline`), when one was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<RoutingBaseline>,
}

/// One skill's figures on one agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoutingEntry {
    /// The suite's `name:`.
    pub suite: String,
    /// The suite's file.
    pub file: String,
    /// The skill.
    pub skill: String,
    /// The agent.
    pub agent: AgentKind,
    /// The trigger rate on the skill's should-trigger prompts; absent when it has none
    /// judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recall: Option<Figure>,
    /// The trigger rate on every other prompt of the suite; absent when there is none
    /// judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub false_trigger_rate: Option<Figure>,
    /// Runs of the suite on this agent that errored (they count in no figure).
    pub errors: Errored,
    /// The skill's row of the confusion matrix: per prompt class, the judged runs and how
    /// many triggered the skill.
    pub matrix: Vec<ClassCount>,
}

/// A rate over prompts, each prompt counted once.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// The mean of the prompts' trigger rates, 0–1.
    pub value: f64,
    /// The lower end of its 95% Wilson interval (n = `prompts`), 0–1.
    pub low: f64,
    /// The upper end, 0–1.
    pub high: f64,
    /// Prompts with at least one judged run.
    pub prompts: u32,
    /// Of those, the prompts where more than half the judged runs triggered the skill.
    pub prompts_triggered: u32,
    /// Judged runs over those prompts.
    pub runs: u32,
    /// Of those, the runs that triggered the skill.
    pub triggered: u32,
}

impl Figure {
    /// `90% (95% CI 60%–98%)`.
    pub fn phrase(&self) -> String {
        format!(
            "{} (95% CI {}–{})",
            percent(self.value),
            percent(self.low),
            percent(self.high)
        )
    }
}

/// `90%`.
pub fn percent(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

/// Runs that errored, and the prompts that had one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Errored {
    /// Runs.
    pub runs: u32,
    /// Prompts with at least one errored run.
    pub prompts: u32,
}

/// Judged runs of one prompt class, and how many triggered one skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassCount {
    /// The class: a skill (its should-trigger prompts) or `(none)` (prompts that should
    /// trigger none of the suite's skills).
    pub class: String,
    /// Runs that triggered the skill.
    pub triggered: u32,
    /// Judged runs of the class.
    pub runs: u32,
}

/// The skill × prompt-class confusion matrix of one suite on one agent, in runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfusionMatrix {
    /// The suite's `name:`.
    pub suite: String,
    /// The suite's file.
    pub file: String,
    /// The agent.
    pub agent: AgentKind,
    /// When each run stopped.
    pub stop: Stop,
    /// The columns: each skill's should-trigger prompts, then `(none)` when some prompts
    /// should trigger no skill.
    pub classes: Vec<String>,
    /// Per class: its prompts.
    pub prompts: Vec<u32>,
    /// Per class: its judged runs (each column's total).
    pub runs: Vec<u32>,
    /// The rows: each skill, `(none)` (no skill triggered), and `(other)` when a skill the
    /// suite does not list was.
    pub rows: Vec<MatrixRow>,
    /// Runs that errored.
    pub errors: Errored,
}

/// One row of a confusion matrix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MatrixRow {
    /// What the runs triggered: a skill, `(none)` or `(other)`.
    pub triggered: String,
    /// Runs per class, in [`ConfusionMatrix::classes`] order.
    pub counts: Vec<u32>,
}

/// One prompt's judged runs on one agent.
#[derive(Debug, Default)]
struct PromptRuns {
    case: Option<RoutingCase>,
    judged: u32,
    errors: u32,
    /// Runs per triggered row (skill, `(none)`, `(other)`).
    triggered: BTreeMap<String, u32>,
}

/// One suite on one agent: its prompts by number.
struct SuiteRuns {
    file: String,
    case: RoutingCase,
    agent: AgentKind,
    prompts: BTreeMap<u32, PromptRuns>,
}

/// The routing figures of every routing suite among `tests`; `None` when there is none.
pub fn of(tests: &[TestResult]) -> Option<Routing> {
    let mut suites: Vec<SuiteRuns> = Vec::new();
    for t in tests {
        let Some(case) = &t.routing else {
            continue;
        };
        let agent = t.agent_id.unwrap_or(AgentKind::Claude);
        let index = match suites
            .iter()
            .position(|s| s.file == t.file && s.case.suite == case.suite && s.agent == agent)
        {
            Some(i) => i,
            None => {
                suites.push(SuiteRuns {
                    file: t.file.clone(),
                    case: case.clone(),
                    agent,
                    prompts: BTreeMap::new(),
                });
                suites.len() - 1
            }
        };
        let prompt = suites[index].prompts.entry(case.prompt).or_default();
        prompt.case = Some(case.clone());
        for run in t.each_run() {
            count_run(prompt, case, run);
        }
    }
    if suites.is_empty() {
        return None;
    }
    let mut routing = Routing::default();
    for suite in &suites {
        let matrix = matrix_of(suite);
        for skill in &suite.case.skills {
            routing.entries.push(entry_of(suite, skill, &matrix));
        }
        routing.matrices.push(matrix);
    }
    Some(routing)
}

/// Adds one run of a prompt: judged with what it triggered, or errored.
fn count_run(prompt: &mut PromptRuns, case: &RoutingCase, run: &TestResult) {
    match run.status {
        TestStatus::Skipped => {}
        TestStatus::Error => prompt.errors += 1,
        TestStatus::Passed | TestStatus::Failed => {
            let decision = run
                .assertions
                .iter()
                .find(|a| a.kind == "routing")
                .and_then(|a| a.routing.as_ref());
            let Some(decision) = decision else {
                // A judged run without a decision can not count: as an error.
                prompt.errors += 1;
                return;
            };
            let row = match &decision.triggered {
                None => NO_SKILL.to_owned(),
                Some(skill) if case.skills.contains(skill) => skill.clone(),
                Some(_) => OTHER_SKILL.to_owned(),
            };
            prompt.judged += 1;
            *prompt.triggered.entry(row).or_default() += 1;
        }
    }
}

/// The suite's confusion matrix on its agent.
fn matrix_of(suite: &SuiteRuns) -> ConfusionMatrix {
    let mut classes: Vec<String> = suite.case.skills.clone();
    let class_of = |p: &PromptRuns| {
        p.case
            .as_ref()
            .map_or(NO_SKILL.to_owned(), |c| c.class().to_owned())
    };
    if suite.prompts.values().any(|p| class_of(p) == NO_SKILL) {
        classes.push(NO_SKILL.to_owned());
    }
    let mut rows: Vec<MatrixRow> = suite
        .case
        .skills
        .iter()
        .map(String::as_str)
        .chain([NO_SKILL, OTHER_SKILL])
        .map(|row| MatrixRow {
            triggered: row.to_owned(),
            counts: vec![0; classes.len()],
        })
        .collect();
    let mut prompts = vec![0; classes.len()];
    let mut runs = vec![0; classes.len()];
    let mut errors = Errored::default();
    for p in suite.prompts.values() {
        if p.errors > 0 {
            errors.runs += p.errors;
            errors.prompts += 1;
        }
        let Some(column) = classes.iter().position(|c| *c == class_of(p)) else {
            continue;
        };
        prompts[column] += 1;
        runs[column] += p.judged;
        for (row, n) in &p.triggered {
            if let Some(r) = rows.iter_mut().find(|r| r.triggered == *row) {
                r.counts[column] += n;
            }
        }
    }
    // `(other)` only when some run triggered a skill the suite does not list.
    rows.retain(|r| r.triggered != OTHER_SKILL || r.counts.iter().any(|n| *n > 0));
    ConfusionMatrix {
        suite: suite.case.suite.clone(),
        file: suite.file.clone(),
        agent: suite.agent,
        stop: suite.case.stop,
        classes,
        prompts,
        runs,
        rows,
        errors,
    }
}

/// One skill's figures from its suite's runs.
fn entry_of(suite: &SuiteRuns, skill: &str, matrix: &ConfusionMatrix) -> RoutingEntry {
    let expects = |p: &PromptRuns| {
        p.case
            .as_ref()
            .and_then(|c| c.expect.as_deref())
            .is_some_and(|e| e == skill)
    };
    let rate = |positive: bool| {
        figure(
            suite
                .prompts
                .values()
                .filter(|p| expects(p) == positive && p.judged > 0)
                .map(|p| (p.triggered.get(skill).copied().unwrap_or(0), p.judged)),
        )
    };
    let row = matrix.rows.iter().find(|r| r.triggered == skill);
    RoutingEntry {
        suite: suite.case.suite.clone(),
        file: suite.file.clone(),
        skill: skill.to_owned(),
        agent: suite.agent,
        recall: rate(true),
        false_trigger_rate: rate(false),
        errors: matrix.errors,
        matrix: matrix
            .classes
            .iter()
            .enumerate()
            .map(|(i, class)| ClassCount {
                class: class.clone(),
                triggered: row.map_or(0, |r| r.counts[i]),
                runs: matrix.runs[i],
            })
            .collect(),
    }
}

/// The figure of prompts given as (triggering runs, judged runs), each prompt once;
/// `None` without a prompt.
fn figure(prompts: impl Iterator<Item = (u32, u32)>) -> Option<Figure> {
    let (mut n, mut sum, mut majority, mut runs, mut triggered) = (0u32, 0.0, 0u32, 0u32, 0u32);
    for (k, judged) in prompts {
        n += 1;
        sum += f64::from(k) / f64::from(judged);
        if 2 * k > judged {
            majority += 1;
        }
        runs += judged;
        triggered += k;
    }
    if n == 0 {
        return None;
    }
    let value = sum / f64::from(n);
    let interval = super::stats::wilson_interval_of_rate(value, n)?;
    Some(Figure {
        value,
        low: interval.low,
        high: interval.high,
        prompts: n,
        prompts_triggered: majority,
        runs,
        triggered,
    })
}

pub use super::choices::{choices, choices_phrase, prompt_line};

/// The routing compared with a baseline's: the figures that moved, by a one-sided Fisher
/// exact test on per-prompt outcomes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RoutingBaseline {
    /// The p-value below which a move counts (`--significance`).
    pub significance: f64,
    /// A recall that fell, or a false-trigger rate that rose, significantly: the run fails.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub regressions: Vec<RoutingChange>,
    /// A recall that rose, or a false-trigger rate that fell, significantly.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub improvements: Vec<RoutingChange>,
    /// Figures that moved, not significantly.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<RoutingChange>,
}

/// One figure of one skill on one agent, before and after.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoutingChange {
    /// The suite's `name:`.
    pub suite: String,
    /// The skill.
    pub skill: String,
    /// The agent.
    pub agent: AgentKind,
    /// `recall` or `false_trigger_rate`.
    pub figure: String,
    /// The baseline's (prompts triggered, prompts).
    pub before: [u32; 2],
    /// This run's (prompts triggered, prompts).
    pub after: [u32; 2],
    /// The one-sided Fisher exact p-value of the move.
    pub p_value: f64,
}

impl RoutingChange {
    /// `pdf on claude: recall 9/10 → 2/10 prompts (p = 0.003)`.
    pub fn phrase(&self) -> String {
        let figure = if self.figure == "recall" {
            "recall"
        } else {
            "false triggers"
        };
        format!(
            "{} on {}: {figure} {}/{} → {}/{} prompts ({})",
            self.skill,
            self.agent,
            self.before[0],
            self.before[1],
            self.after[0],
            self.after[1],
            crate::shared::text::p_phrase(self.p_value)
        )
    }
}

/// Compares `now` with `base`, skill by skill and agent by agent (matched by suite file,
/// suite, skill and agent): a recall that fell or a false-trigger rate that rose is a
/// regression when the one-sided Fisher exact test of the per-prompt outcomes (this run's
/// prompts triggered and not, against the baseline's) gives p below `significance`.
pub fn compare(now: &Routing, base: &Routing, significance: f64) -> RoutingBaseline {
    let mut out = RoutingBaseline {
        significance,
        ..RoutingBaseline::default()
    };
    for entry in &now.entries {
        let Some(old) = base.entries.iter().find(|b| {
            b.file == entry.file
                && b.suite == entry.suite
                && b.skill == entry.skill
                && b.agent == entry.agent
        }) else {
            continue;
        };
        for (name, higher_is_better, after, before) in [
            ("recall", true, entry.recall, old.recall),
            (
                "false_trigger_rate",
                false,
                entry.false_trigger_rate,
                old.false_trigger_rate,
            ),
        ] {
            let (Some(after), Some(before)) = (after, before) else {
                continue;
            };
            let (k1, n1, k0, n0) = (
                after.prompts_triggered,
                after.prompts,
                before.prompts_triggered,
                before.prompts,
            );
            // Compare k1/n1 with k0/n0 without dividing.
            let (now_x, old_x) = (u64::from(k1) * u64::from(n0), u64::from(k0) * u64::from(n1));
            if now_x == old_x {
                continue;
            }
            let fell = now_x < old_x;
            // The first row of the table is the side whose rate is the lower one.
            let p = if fell {
                super::stats::fisher_exact_less([[k1, n1 - k1], [k0, n0 - k0]])
            } else {
                super::stats::fisher_exact_less([[k0, n0 - k0], [k1, n1 - k1]])
            };
            let change = RoutingChange {
                suite: entry.suite.clone(),
                skill: entry.skill.clone(),
                agent: entry.agent,
                figure: name.to_owned(),
                before: [k0, n0],
                after: [k1, n1],
                p_value: p,
            };
            let worse = fell == higher_is_better;
            match (p < significance, worse) {
                (true, true) => out.regressions.push(change),
                (true, false) => out.improvements.push(change),
                (false, _) => out.changed.push(change),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
