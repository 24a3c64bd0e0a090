//! `aptitude diff`: why a test's verdict changed between two results files — the first
//! point where the two runs' trajectories part, what each did there, and the assertions
//! that flipped — as terminal text, Markdown and JSON; and the same between two runs of
//! one repeated test (a passing and a failing run of a flaky test).
//!
//! Tests are matched as the baseline comparison matches them ([`TestResult::key`]: file,
//! name, agent, variant) and classified the same way ([`super::baseline`]): a test run
//! once by its status, a repeated test by its pass rate (a fall is a regression when the
//! one-sided Fisher p-value is below the significance level). For each test whose verdict
//! or pass rate changed, one run of each side is compared: the base's first passing and
//! the head's first failing run for a regression (the other way round for a fix), or the
//! runs `--run` names. Their calls are aligned by canonical name and parameters
//! ([`crate::transcript::align`]).
//!
//! The JSON (`--json FILE`, [`DiffReport`]):
//!
//! ```text
//! {"version": 1, "base": "base.json", "head": "head.json",
//!  "summary": {"compared", "changed", "regressed", "fixed"},
//!  "tests": [{"name", "file", "agent", "variant",
//!             "change": "regressed|fixed|changed|unchanged|runs",
//!             "base": {"status", "run", "passed", "judged"}, "head": {…},
//!             "first_divergence": null | {"index", "kind": "call|result", "after",
//!                                         "base": {"says", "call": null | {"number", "tool", "input", "result"}},
//!                                         "head": {…}},
//!             "calls": {"base", "head", "common"},
//!             "flipped": [{"line", "kind", "description", "base", "head"}],
//!             "summary", "anchor"}],
//!  "routing": [{"suite", "skill", "agent", "figure": "recall|false_trigger_rate",
//!               "change": "regressed|fixed|changed", "before": [k, n], "after": [k, n],
//!               "p_value", "prompts": [{"name", "expect", "base", "head"}]}]}
//! ```
//!
//! A routing suite's figures are compared as `run --baseline` compares them
//! ([`crate::verdict::routing::compare`]: prompts triggered of prompts, a one-sided Fisher
//! exact test): `routing` lists each figure that moved, with the prompts whose choice of that
//! skill changed and what each side chose. A routing prompt is not listed as a test of its
//! own (unless `--test` names it): its skill's figure is what regresses.
//! `summary.routing_regressed` counts the figures that fell significantly; the exit code
//! is 1 then, as for a regressed test.
//!
//! `index` is the number of calls both runs made alike before they part (0-based position
//! in trajectory order); `call.number` is the call's 1-based number in its transcript, as
//! the reports show it; `anchor` is the head run's run view in the head's HTML report
//! (`t12`, `t12-r2`).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::shared::inert;
use crate::transcript::Transcript;
use crate::transcript::align::{self, DivergenceKind};
use crate::verdict::results::{AssertionStatus, Results, TestResult, TestStatus};

/// The JSON's schema version.
pub const DIFF_VERSION: u32 = 1;

/// Which runs of a repeated test to compare (`--run`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunPick {
    /// Run N of each side (`--run N`).
    Same(u32),
    /// Run A of the base, run B of the head (`--run A,B`).
    Pair(u32, u32),
}

impl RunPick {
    fn base(self) -> u32 {
        match self {
            RunPick::Same(n) | RunPick::Pair(n, _) => n,
        }
    }

    fn head(self) -> u32 {
        match self {
            RunPick::Same(n) | RunPick::Pair(_, n) => n,
        }
    }
}

/// What to compare.
#[derive(Debug, Clone)]
pub struct DiffOptions {
    /// Only the test of this name (its `name`, or its name with agent and variant).
    pub test: Option<String>,
    /// Which runs to compare.
    pub runs: Option<RunPick>,
    /// The p-value below which a repeated test's change of pass rate counts.
    pub significance: f64,
    /// How the two files are named in the output (`base.json`).
    pub labels: (String, String),
}

/// Why two results can not be compared as asked.
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    /// `--test NAME` names no test of the file.
    #[error("{file} has no test named {name:?}{}", hint(suggestion))]
    NoSuchTest {
        /// The name given.
        name: String,
        /// The results file.
        file: String,
        /// The closest test name, when one is close.
        suggestion: Option<String>,
    },
    /// `--run` names a run the test does not have.
    #[error("test {test:?} in {file} has no run {run} (it has {runs})")]
    NoSuchRun {
        /// The test.
        test: String,
        /// The results file.
        file: String,
        /// The run asked for.
        run: u32,
        /// How many runs it has.
        runs: u32,
    },
}

fn hint(suggestion: &Option<String>) -> String {
    suggestion
        .as_ref()
        .map(|s| format!("; did you mean {s:?}?"))
        .unwrap_or_default()
}

/// The whole comparison (see the module docs for its JSON).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DiffReport {
    /// [`DIFF_VERSION`].
    pub version: u32,
    /// The base file, as named.
    pub base: String,
    /// The head file, as named (the base's again when runs of one file are compared).
    pub head: String,
    /// Counts.
    pub summary: DiffSummary,
    /// Each test compared, in the head's order.
    pub tests: Vec<TestDiff>,
    /// The routing figures that moved, regressions first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub routing: Vec<RoutingDiff>,
}

/// Counts of a [`DiffReport`].
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct DiffSummary {
    /// Tests in both files (or repeated tests, comparing runs).
    pub compared: u32,
    /// Of those, the tests listed.
    pub changed: u32,
    /// Listed as regressed.
    pub regressed: u32,
    /// Listed as fixed.
    pub fixed: u32,
    /// Routing figures that fell significantly.
    #[serde(skip_serializing_if = "is_zero")]
    pub routing_regressed: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A routing figure of one skill on one agent that moved between the two files.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RoutingDiff {
    /// The suite's `name:`.
    pub suite: String,
    /// The skill.
    pub skill: String,
    /// The agent.
    pub agent: crate::spec::agent_kind::AgentKind,
    /// `recall` or `false_trigger_rate`.
    pub figure: String,
    /// `regressed` (a recall that fell or a false-trigger rate that rose, significantly),
    /// `fixed` (the other way), or `changed` (not significantly).
    pub change: Change,
    /// The base's (prompts triggered, prompts).
    pub before: [u32; 2],
    /// The head's (prompts triggered, prompts).
    pub after: [u32; 2],
    /// The one-sided Fisher exact p-value of the move.
    pub p_value: f64,
    /// The prompts of the suite on that agent whose runs chose the skill in another share
    /// of their runs, in the head's order.
    pub prompts: Vec<PromptChoice>,
}

/// What one routing prompt's runs chose, on each side.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PromptChoice {
    /// The prompt's test name (`docs › Tag the release`).
    pub name: String,
    /// What it should trigger (`should trigger release`).
    pub expect: String,
    /// What the base's runs chose (`chose release in 3 of 3 runs`).
    pub base: String,
    /// What the head's runs chose (`chose none in 3 of 3 runs`).
    pub head: String,
}

/// How a test changed from base to head.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    /// Passed before, failed or errored now; a pass rate that fell significantly.
    Regressed,
    /// Failed or errored before, passed now; a pass rate that rose significantly.
    Fixed,
    /// Another change of status, or of pass rate not significant.
    Changed,
    /// No change (listed because `--test` or `--run` named it).
    Unchanged,
    /// Two runs of one test in one file.
    Runs,
}

impl Change {
    fn word(self) -> &'static str {
        match self {
            Change::Regressed => "regressed",
            Change::Fixed => "fixed",
            Change::Changed => "changed",
            Change::Unchanged => "unchanged",
            Change::Runs => "runs",
        }
    }
}

/// One side of a test: its verdict, its pass rate, and the run compared.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SideState {
    /// The test's status (`passed`, `failed`, `error`, `skipped`).
    pub status: TestStatus,
    /// The run compared (1-based).
    pub run: u32,
    /// That run's status.
    pub run_status: TestStatus,
    /// A repeated test's passing runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub passed: Option<u32>,
    /// A repeated test's judged runs (passed + failed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judged: Option<u32>,
}

/// What one side did at the first divergence.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct StepAt {
    /// In words: ``ran `pytest -q` ``, `stopped after Edit src/app.py`.
    pub says: String,
    /// The call there; `null` when the run stopped.
    pub call: Option<CallAt>,
}

/// A call at the first divergence.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CallAt {
    /// Its number in its transcript (1-based), as the reports number calls.
    pub number: usize,
    /// Its canonical tool name.
    pub tool: String,
    /// Its main parameter in one line (`command="pytest -q"`).
    pub input: String,
    /// Its result: `exit 0`, `error`, `ok`, `blocked`, `no result`.
    pub result: String,
}

/// Where two runs part ([`align::Divergence`], in words).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FirstDivergence {
    /// How many calls both made alike before it.
    pub index: usize,
    /// `call`: a different call (or one side stopped); `result`: the same calls, another
    /// result.
    pub kind: &'static str,
    /// The last call both made, as a noun (`Edit src/app.py`).
    pub after: Option<String>,
    /// What the base did there.
    pub base: StepAt,
    /// What the head did there.
    pub head: StepAt,
}

/// Calls of the two runs, aligned.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct CallCounts {
    /// The base run's calls.
    pub base: usize,
    /// The head run's calls.
    pub head: usize,
    /// Matched in both (a diff of their canonical calls).
    pub common: usize,
}

/// An assertion whose status differs between the two runs.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Flip {
    /// Its line in the test file.
    pub line: u32,
    /// Its kind (`tool`, `ran`, …).
    pub kind: String,
    /// Its description (the head's).
    pub description: String,
    /// Its status in the base run (absent: not in the base).
    pub base: Option<AssertionStatus>,
    /// Its status in the head run (absent: not in the head).
    pub head: Option<AssertionStatus>,
}

/// One test compared.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TestDiff {
    /// The test's name.
    pub name: String,
    /// Its file.
    pub file: String,
    /// Its agent, when the results say.
    pub agent: Option<String>,
    /// Its variant.
    pub variant: Option<String>,
    /// How it changed.
    pub change: Change,
    /// The base side.
    pub base: SideState,
    /// The head side.
    pub head: SideState,
    /// Where the two runs part; `null` when they made the same calls with the same results
    /// (or a side has no transcript: see `summary`).
    pub first_divergence: Option<FirstDivergence>,
    /// The two runs' calls, aligned.
    pub calls: CallCounts,
    /// Assertions whose status differs between the two runs.
    pub flipped: Vec<Flip>,
    /// The difference in one line: ``base ran `pytest -q` after Edit src/app.py; head
    /// stopped after Edit src/app.py``.
    pub summary: String,
    /// The head run's run view in the head's HTML report: `t12`, `t12-r2`.
    pub anchor: String,
}

/// (passed, judged) runs of a repeated test.
fn judged(t: &TestResult) -> Option<(u32, u32)> {
    let r = t.repeat.as_ref()?;
    (r.passed + r.failed > 0).then_some((r.passed, r.passed + r.failed))
}

fn bad(s: TestStatus) -> bool {
    matches!(s, TestStatus::Failed | TestStatus::Error)
}

/// How `head` changed from `base` (as [`super::baseline::compare`] decides).
pub fn classify(base: &TestResult, head: &TestResult, significance: f64) -> Change {
    if let (Some((p_now, n_now)), Some((p_old, n_old))) = (judged(head), judged(base)) {
        let (now, old) = (
            u64::from(p_now) * u64::from(n_old),
            u64::from(p_old) * u64::from(n_now),
        );
        let fell = now < old;
        if now == old {
            return Change::Unchanged;
        }
        let table = if fell {
            [[p_now, n_now - p_now], [p_old, n_old - p_old]]
        } else {
            [[p_old, n_old - p_old], [p_now, n_now - p_now]]
        };
        let significant = crate::verdict::stats::fisher_exact_less(table) < significance;
        return match (significant, fell) {
            (true, true) => Change::Regressed,
            (true, false) => Change::Fixed,
            (false, _) => Change::Changed,
        };
    }
    match (base.status, head.status) {
        (a, b) if a == b => Change::Unchanged,
        (TestStatus::Passed, b) if bad(b) => Change::Regressed,
        (a, TestStatus::Passed) if bad(a) => Change::Fixed,
        _ => Change::Changed,
    }
}

/// Run `number` of `t` (the result itself for a test run once).
fn run_of<'a>(t: &'a TestResult, number: u32, file: &str) -> Result<&'a TestResult, DiffError> {
    t.run_numbered(number).ok_or_else(|| DiffError::NoSuchRun {
        test: t.qualified_name(false),
        file: file.to_owned(),
        run: number,
        runs: t.runs_in_all(),
    })
}

/// The first run of `t` whose status `wanted` accepts, else its first run: (number, run).
fn first_run(t: &TestResult, wanted: impl Fn(TestStatus) -> bool) -> (u32, &TestResult) {
    if t.runs.is_empty() {
        return (1, t);
    }
    t.numbered_runs()
        .find(|(_, r)| wanted(r.status))
        .or_else(|| t.numbered_runs().next())
        .unwrap_or((1, t))
}

fn side(t: &TestResult, number: u32, run: &TestResult) -> SideState {
    let j = judged(t);
    SideState {
        status: t.status,
        run: number,
        run_status: run.status,
        passed: j.map(|(p, _)| p),
        judged: j.map(|(_, n)| n),
    }
}

/// The assertions whose status differs between two runs, matched by line and kind (in
/// order within one line).
fn flipped(base: &TestResult, head: &TestResult) -> Vec<Flip> {
    let mut before: BTreeMap<(u32, &str), Vec<&crate::verdict::results::AssertionResult>> =
        BTreeMap::new();
    for a in &base.assertions {
        before.entry((a.line, a.kind.as_str())).or_default().push(a);
    }
    let mut out = Vec::new();
    for a in &head.assertions {
        let old = before
            .get_mut(&(a.line, a.kind.as_str()))
            .and_then(|v| (!v.is_empty()).then(|| v.remove(0)));
        if old.map(|o| o.status) != Some(a.status) {
            out.push(Flip {
                line: a.line,
                kind: a.kind.clone(),
                description: a.description.clone(),
                base: old.map(|o| o.status),
                head: Some(a.status),
            });
        }
    }
    for rest in before.into_values().flatten() {
        out.push(Flip {
            line: rest.line,
            kind: rest.kind.clone(),
            description: rest.description.clone(),
            base: Some(rest.status),
            head: None,
        });
    }
    out
}

fn call_at(t: &Transcript, index: Option<usize>) -> Option<CallAt> {
    let i = index?;
    let c = t.tool_calls.get(i)?;
    Some(CallAt {
        number: i + 1,
        tool: c.canonical.clone(),
        input: align::without_workspace_dir(&crate::shared::text::summarize_input(c.params(), 120))
            .into_owned(),
        result: align::result_word(c),
    })
}

/// Compares run `b` of base test `bt` with run `h` of head test `ht`.
fn compare_runs(
    (bt, bn, b): (&TestResult, u32, &TestResult),
    (ht, hn, h): (&TestResult, u32, &TestResult),
    change: Change,
    anchor: String,
) -> TestDiff {
    let empty = Transcript::of_calls(Vec::new(), None);
    let (bx, hx) = (
        b.transcript.as_ref().unwrap_or(&empty),
        h.transcript.as_ref().unwrap_or(&empty),
    );
    let (divergence, stats) = align::align(bx, hx);
    let flipped = flipped(b, h);
    let summary = match (&b.transcript, &h.transcript, &divergence) {
        (None, _, _) | (_, None, _) => format!(
            "no transcript to compare in the {}",
            if b.transcript.is_none() {
                "base"
            } else {
                "head"
            }
        ),
        (_, _, Some(d)) => align::sentence(bx, hx, d),
        (_, _, None) => {
            "the same calls with the same results; see the answer and the flipped assertions".into()
        }
    };
    let first_divergence = divergence.map(|d| {
        let step = |t: &Transcript, i: Option<usize>| {
            let call = call_at(t, i);
            let says = match (i.and_then(|i| t.tool_calls.get(i)), d.after) {
                (Some(c), _) => align::describe(c),
                (None, Some(a)) => format!("stopped after {}", align::target(&bx.tool_calls[a])),
                (None, None) => "made no tool call".into(),
            };
            StepAt { says, call }
        };
        FirstDivergence {
            index: d.index,
            kind: match d.kind {
                DivergenceKind::Call => "call",
                DivergenceKind::Result => "result",
            },
            after: d
                .after
                .and_then(|a| bx.tool_calls.get(a))
                .map(align::target),
            base: step(bx, d.base),
            head: step(hx, d.head),
        }
    });
    TestDiff {
        name: ht.name.clone(),
        file: ht.file.clone(),
        agent: ht.agent_id.map(|a| a.name().to_owned()),
        variant: ht.variant.clone(),
        change,
        base: side(bt, bn, b),
        head: side(ht, hn, h),
        first_divergence,
        calls: CallCounts {
            base: stats.base,
            head: stats.head,
            common: stats.common,
        },
        flipped,
        summary,
        anchor,
    }
}

/// The run view anchor of run `number` of test `index` (`t3`, `t3-r2`).
pub fn anchor(index: usize, t: &TestResult, number: u32) -> String {
    if t.runs.is_empty() {
        format!("t{index}")
    } else {
        format!("t{index}-r{number}")
    }
}

/// Whether `t` is the test `--test` names.
fn named(t: &TestResult, name: &str) -> bool {
    t.name == name || t.qualified_name(false) == name || t.qualified_name(true) == name
}

/// The error of a `--test` that names no test, with the closest test name: a near spelling
/// (`safly` for `safely`, any case), else the one test whose name holds the text given
/// (`Push` for `Push to GitHub safely`).
fn no_such_test(results: &Results, name: &str, file: &str) -> DiffError {
    let mut names: Vec<&str> = results.tests.iter().map(|t| t.name.as_str()).collect();
    names.dedup();
    let lower = name.to_lowercase();
    let holding: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| !lower.is_empty() && n.to_lowercase().contains(&lower))
        .collect();
    let suggestion = crate::shared::suggest::did_you_mean(name, names.iter().copied())
        .or(match holding.as_slice() {
            [one] => Some(*one),
            _ => None,
        })
        .map(str::to_owned);
    DiffError::NoSuchTest {
        name: name.to_owned(),
        file: file.to_owned(),
        suggestion,
    }
}

/// Compares `head` with `base` (see the module docs).
///
/// # Errors
/// [`DiffError`] when `--test` names no test of the head, or `--run` a run a test lacks.
pub fn diff(
    base: &Results,
    head: &Results,
    options: &DiffOptions,
) -> Result<DiffReport, DiffError> {
    let (base_label, head_label) = &options.labels;
    if let Some(name) = &options.test
        && !head.tests.iter().any(|t| named(t, name))
    {
        return Err(no_such_test(head, name, head_label));
    }
    let before: std::collections::HashMap<_, &TestResult> =
        base.tests.iter().map(|t| (t.key(), t)).collect();
    let mut summary = DiffSummary::default();
    let mut tests = Vec::new();
    for (index, ht) in head.tests.iter().enumerate() {
        if options.test.as_deref().is_some_and(|n| !named(ht, n)) {
            continue;
        }
        // A routing prompt's change is its skill's figures' (below), unless asked for.
        if ht.routing.is_some() && options.test.is_none() {
            continue;
        }
        let Some(bt) = before.get(&ht.key()).copied() else {
            continue;
        };
        summary.compared += 1;
        let change = classify(bt, ht, options.significance);
        let asked = options.test.is_some() || options.runs.is_some();
        if change == Change::Unchanged && !asked {
            continue;
        }
        let ((bn, b), (hn, h)) = match options.runs {
            Some(pick) => (
                (pick.base(), run_of(bt, pick.base(), base_label)?),
                (pick.head(), run_of(ht, pick.head(), head_label)?),
            ),
            None if change == Change::Fixed => (
                first_run(bt, bad),
                first_run(ht, |s| s == TestStatus::Passed),
            ),
            None => (
                first_run(bt, |s| s == TestStatus::Passed),
                first_run(ht, bad),
            ),
        };
        match change {
            Change::Regressed => summary.regressed += 1,
            Change::Fixed => summary.fixed += 1,
            _ => {}
        }
        summary.changed += 1;
        tests.push(compare_runs(
            (bt, bn, b),
            (ht, hn, h),
            change,
            anchor(index, ht, hn),
        ));
    }
    let routing = if options.test.is_none() {
        routing_diff(base, head, options.significance)
    } else {
        Vec::new()
    };
    summary.routing_regressed = routing
        .iter()
        .filter(|r| r.change == Change::Regressed)
        .count() as u32;
    Ok(DiffReport {
        version: DIFF_VERSION,
        base: base_label.clone(),
        head: head_label.clone(),
        summary,
        tests,
        routing,
    })
}

/// The routing figures that moved from `base` to `head`, as `run --baseline` compares them,
/// each with the prompts whose choice of its skill changed.
fn routing_diff(base: &Results, head: &Results, significance: f64) -> Vec<RoutingDiff> {
    let (Some(b), Some(h)) = (&base.routing, &head.routing) else {
        return Vec::new();
    };
    let compared = crate::verdict::routing::compare(h, b, significance);
    let before: std::collections::HashMap<_, &TestResult> = base
        .tests
        .iter()
        .filter(|t| t.routing.is_some())
        .map(|t| (t.key(), t))
        .collect();
    let runs = |t: &TestResult| -> Vec<TestResult> {
        if t.runs.is_empty() {
            vec![t.clone()]
        } else {
            t.runs.clone()
        }
    };
    // The share of a prompt's judged runs that chose `skill`, as (runs, judged).
    let share = |runs: &[TestResult], skill: &str| {
        let (chosen, _, _) = crate::verdict::routing::choices(runs);
        let judged: u32 = chosen.iter().map(|(_, k)| k).sum();
        let k = chosen
            .iter()
            .find(|(n, _)| n == skill)
            .map_or(0, |(_, k)| *k);
        (k, judged)
    };
    let moves = [
        (&compared.regressions, Change::Regressed),
        (&compared.improvements, Change::Fixed),
        (&compared.changed, Change::Changed),
    ];
    let mut out = Vec::new();
    for (changes, change) in moves {
        for c in changes {
            let mut prompts = Vec::new();
            for ht in &head.tests {
                let Some(case) = &ht.routing else { continue };
                let agent = ht
                    .agent_id
                    .unwrap_or(crate::spec::agent_kind::AgentKind::Claude);
                if case.suite != c.suite || agent != c.agent {
                    continue;
                }
                let Some(bt) = before.get(&ht.key()) else {
                    continue;
                };
                let (hr, br) = (runs(ht), runs(bt));
                let ((k1, n1), (k0, n0)) = (share(&hr, &c.skill), share(&br, &c.skill));
                if u64::from(k1) * u64::from(n0) == u64::from(k0) * u64::from(n1) {
                    continue;
                }
                prompts.push(PromptChoice {
                    name: ht.name.clone(),
                    expect: case.expectation(),
                    base: crate::verdict::routing::choices_phrase(&br),
                    head: crate::verdict::routing::choices_phrase(&hr),
                });
            }
            out.push(RoutingDiff {
                suite: c.suite.clone(),
                skill: c.skill.clone(),
                agent: c.agent,
                figure: c.figure.clone(),
                change,
                before: c.before,
                after: c.after,
                p_value: c.p_value,
                prompts,
            });
        }
    }
    out
}

/// Compares runs of the repeated tests of one results file: for each test that has a
/// passing and a failing run (or the one `--test` names), its first passing run with its
/// first failing one, or the runs `--run A,B` names.
///
/// # Errors
/// [`DiffError`] when `--test` names no test, or `--run` a run the test lacks.
pub fn diff_runs(results: &Results, options: &DiffOptions) -> Result<DiffReport, DiffError> {
    let label = &options.labels.0;
    if let Some(name) = &options.test
        && !results.tests.iter().any(|t| named(t, name))
    {
        return Err(no_such_test(results, name, label));
    }
    let mut summary = DiffSummary::default();
    let mut tests = Vec::new();
    for (index, t) in results.tests.iter().enumerate() {
        if options.test.as_deref().is_some_and(|n| !named(t, n)) || t.runs.len() < 2 {
            continue;
        }
        summary.compared += 1;
        let ((bn, b), (hn, h)) = match options.runs {
            Some(pick) => (
                (pick.base(), run_of(t, pick.base(), label)?),
                (pick.head(), run_of(t, pick.head(), label)?),
            ),
            None => {
                let pass = t
                    .numbered_runs()
                    .find(|(_, r)| r.status == TestStatus::Passed);
                let fail = t.numbered_runs().find(|(_, r)| bad(r.status));
                match (pass, fail) {
                    (Some(p), Some(f)) => (p, f),
                    _ if options.test.is_some() => {
                        let mut runs = t.numbered_runs();
                        match (runs.next(), runs.next()) {
                            (Some(a), Some(b)) => (a, b),
                            _ => continue,
                        }
                    }
                    _ => continue,
                }
            }
        };
        summary.changed += 1;
        tests.push(compare_runs(
            (t, bn, b),
            (t, hn, h),
            Change::Runs,
            anchor(index, t, hn),
        ));
    }
    Ok(DiffReport {
        version: DIFF_VERSION,
        base: label.clone(),
        head: label.clone(),
        summary,
        tests,
        routing: Vec::new(),
    })
}

impl DiffReport {
    /// Whether a test or a routing figure regressed (the exit code is 1 then).
    pub fn any_regressed(&self) -> bool {
        self.summary.regressed > 0 || self.summary.routing_regressed > 0
    }
}

/// `pdf on claude: recall 3/3 → 0/3 prompts (p = 0.050, regressed)`.
fn routing_phrase(r: &RoutingDiff) -> String {
    let figure = if r.figure == "recall" {
        "recall"
    } else {
        "false triggers"
    };
    format!(
        "{} on {} ({}): {figure} {}/{} → {}/{} prompts ({}, {})",
        r.skill,
        r.agent,
        r.suite,
        r.before[0],
        r.before[1],
        r.after[0],
        r.after[1],
        crate::shared::text::p_phrase(r.p_value),
        r.change.word()
    )
}

fn status_word(s: Option<AssertionStatus>) -> &'static str {
    match s {
        Some(AssertionStatus::Pass) => "pass",
        Some(AssertionStatus::Fail) => "fail",
        Some(AssertionStatus::Error) => "error",
        Some(AssertionStatus::Invalid) => "invalid",
        Some(AssertionStatus::Skip) => "skip",
        None => "absent",
    }
}

fn test_status_word(s: TestStatus) -> &'static str {
    match s {
        TestStatus::Passed => "passed",
        TestStatus::Failed => "failed",
        TestStatus::Error => "error",
        TestStatus::Skipped => "skipped",
    }
}

/// A side's verdict: `passed`, `failed (1/3 runs)`.
fn verdict(s: &SideState) -> String {
    match (s.passed, s.judged) {
        (Some(p), Some(n)) => format!("{} ({p}/{n} runs)", test_status_word(s.status)),
        _ => test_status_word(s.status).to_owned(),
    }
}

/// The runs compared: `base run 1 (passed) · head run 2 (failed)`.
fn runs_line(t: &TestDiff) -> String {
    format!(
        "base run {} ({}) · head run {} ({})",
        t.base.run,
        test_status_word(t.base.run_status),
        t.head.run,
        test_status_word(t.head.run_status)
    )
}

fn headline(r: &DiffReport) -> String {
    let s = &r.summary;
    let what = if r.base == r.head {
        format!("runs of {}", r.base)
    } else {
        format!("{} → {}", r.base, r.head)
    };
    let routing = if r.routing.is_empty() {
        String::new()
    } else {
        format!(
            " · routing: {} figure{} moved ({} regressed)",
            r.routing.len(),
            if r.routing.len() == 1 { "" } else { "s" },
            s.routing_regressed
        )
    };
    format!(
        "aptitude diff {what}: {} of {} test{} listed ({} regressed, {} fixed){routing}",
        s.changed,
        s.compared,
        if s.compared == 1 { "" } else { "s" },
        s.regressed,
        s.fixed
    )
}

/// The comparison for a terminal: every text from the results made inert
/// ([`inert::terminal`]).
pub fn to_terminal(r: &DiffReport) -> String {
    let mut out = format!("{}\n", inert::terminal(&headline(r)));
    for t in &r.tests {
        let icon = match t.change {
            Change::Regressed => "✗",
            Change::Fixed => "✓",
            _ => "~",
        };
        let change = if t.change == Change::Runs {
            verdict(&t.head)
        } else {
            format!(
                "{} → {} ({})",
                verdict(&t.base),
                verdict(&t.head),
                t.change.word()
            )
        };
        out.push_str(&format!(
            "\n{icon} {}  {}  {change}\n",
            inert::terminal(&t.name),
            inert::terminal(&t.file),
        ));
        out.push_str(&format!("  {}\n", runs_line(t)));
        out.push_str(&format!(
            "  calls: base {} · head {} · {} in common\n",
            t.calls.base, t.calls.head, t.calls.common
        ));
        match &t.first_divergence {
            Some(d) => {
                out.push_str(&format!("  first divergence at call {}", d.index + 1));
                if d.kind == "result" {
                    out.push_str(" (the same call, another result)");
                }
                if let Some(after) = &d.after {
                    out.push_str(&format!(", after {}", inert::terminal(after)));
                }
                out.push_str(":\n");
                for (who, step) in [("base", &d.base), ("head", &d.head)] {
                    let result = step
                        .call
                        .as_ref()
                        .map(|c| format!(" → {}", c.result))
                        .unwrap_or_default();
                    out.push_str(&format!(
                        "    {who}: {}{result}\n",
                        inert::terminal(&step.says)
                    ));
                }
            }
            None => out.push_str(&format!("  {}\n", inert::terminal(&t.summary))),
        }
        for f in &t.flipped {
            out.push_str(&format!(
                "  flipped: {} → {}  line {}  {}\n",
                status_word(f.base),
                status_word(f.head),
                f.line,
                inert::terminal(&f.description)
            ));
        }
    }
    for r in &r.routing {
        let icon = match r.change {
            Change::Regressed => "✗",
            Change::Fixed => "✓",
            _ => "~",
        };
        out.push_str(&format!(
            "\n{icon} routing: {}\n",
            inert::terminal(&routing_phrase(r))
        ));
        for p in &r.prompts {
            out.push_str(&format!(
                "  {}  {}\n    base: {}\n    head: {}\n",
                inert::terminal(&p.name),
                inert::terminal(&p.expect),
                inert::terminal(&p.base),
                inert::terminal(&p.head)
            ));
        }
    }
    out
}

/// The comparison as GitHub-flavoured Markdown: names escaped
/// ([`inert::markdown_inline`]), what each run did in code spans made inert.
pub fn to_markdown(r: &DiffReport) -> String {
    let mut out = format!("## {}\n", inert::markdown_inline(&headline(r)));
    for t in &r.tests {
        let icon = match t.change {
            Change::Regressed => "🔴",
            Change::Fixed => "🟢",
            _ => "🟡",
        };
        let change = if t.change == Change::Runs {
            verdict(&t.head)
        } else {
            format!("{} → {}", verdict(&t.base), verdict(&t.head))
        };
        out.push_str(&format!(
            "\n### {icon} {} — {}\n\n{} · {change} · {}\n\n",
            inert::markdown_inline(&t.name),
            t.change.word(),
            inert::markdown_inline(&t.file),
            runs_line(t)
        ));
        out.push_str(&format!("{}\n", inert::markdown_inline(&t.summary)));
        if let Some(d) = &t.first_divergence {
            out.push_str(&format!(
                "\n| call {} | base | head |\n|---|---|---|\n| did | {} | {} |\n",
                d.index + 1,
                inert::markdown_inline(&d.base.says),
                inert::markdown_inline(&d.head.says)
            ));
            let result = |s: &StepAt| s.call.as_ref().map_or("—".into(), |c| c.result.clone());
            out.push_str(&format!(
                "| result | {} | {} |\n",
                result(&d.base),
                result(&d.head)
            ));
        }
        if !t.flipped.is_empty() {
            out.push_str("\nFlipped assertions:\n");
            for f in &t.flipped {
                out.push_str(&format!(
                    "- {} → {} · line {} · {}\n",
                    status_word(f.base),
                    status_word(f.head),
                    f.line,
                    inert::markdown_inline(&f.description)
                ));
            }
        }
    }
    for r in &r.routing {
        let icon = match r.change {
            Change::Regressed => "🔴",
            Change::Fixed => "🟢",
            _ => "🟡",
        };
        out.push_str(&format!(
            "\n### {icon} routing: {}\n",
            inert::markdown_inline(&routing_phrase(r))
        ));
        if !r.prompts.is_empty() {
            out.push_str("\n| prompt | expected | base | head |\n|---|---|---|---|\n");
            for p in &r.prompts {
                out.push_str(&format!(
                    "| {} | {} | {} | {} |\n",
                    inert::markdown_inline(&p.name),
                    inert::markdown_inline(&p.expect),
                    inert::markdown_inline(&p.base),
                    inert::markdown_inline(&p.head)
                ));
            }
        }
    }
    out
}

pub mod read;

#[cfg(test)]
mod tests;
