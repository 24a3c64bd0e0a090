//! Which rules of the instruction files are tested, followed, and matter: results JSON's
//! `coverage`, and what `aptitude coverage` prints.
//!
//! For every rule of the instruction files the suite's workspaces hold
//! ([`crate::spec::rules`]):
//! - the tests whose `covers:` names it;
//! - their pass rate over their judged runs (the test as written, `default`, when it has
//!   variants);
//! - where a variant removes the rule (it removes its file, or adds the file without the
//!   rule), its **effect**: the pass rate with the rule minus without it, and the
//!   variants' two-sided Fisher p-value ([`crate::verdict::variants`]).
//!
//! A rule no test covers is **uncovered**. A rule whose removal changed nothing over
//! enough runs to tell — at least [`ENOUGH_RUNS`] judged runs with and without it (enough
//! for a full effect to reach p < 0.05) and p ≥ 0.05 — has **no measured effect**.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::test_result::TestResult;
use super::variants::VariantComparison;
use crate::spec::rules::Rule;
use crate::spec::{DEFAULT_VARIANT, TestSpec};

/// Judged runs each side needs before "no measured effect" can be said: with 4 runs each,
/// 4 of 4 against 0 of 4 is p ≈ 0.029.
pub const ENOUGH_RUNS: u32 = 4;

/// The coverage of a suite's instruction files.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Coverage {
    /// Every rule, file by file in the order the files were found.
    pub rules: Vec<RuleCoverage>,
    /// Per file: its rules and how many are covered.
    pub files: Vec<FileTotals>,
    /// All files together.
    pub totals: Totals,
}

/// Covered rules out of all rules.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Totals {
    /// Rules some test covers.
    pub covered: u32,
    /// Rules in all.
    pub rules: u32,
}

/// One file's totals.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileTotals {
    /// The file, as its rules name it.
    pub file: String,
    /// Covered out of all.
    #[serde(flatten)]
    pub totals: Totals,
}

/// What is known of one rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleCoverage {
    /// The instruction file, relative to the directory the suite was read from
    /// (`tests/fixture/AGENTS.md`).
    pub file: String,
    /// The line the rule starts on (1-based), and the line it ends on.
    pub line: u32,
    /// The line it ends on.
    pub end_line: u32,
    /// Its id ([`crate::spec::rules::rule_id`]).
    pub id: String,
    /// Its heading path.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headings: Vec<String>,
    /// Its text.
    pub text: String,
    /// The tests that cover it (`file::name`).
    pub tests: Vec<String>,
    /// Passed ÷ judged runs of those tests, 0–1; absent without results or judged runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_rate: Option<f64>,
    /// Judged runs behind `pass_rate`.
    #[serde(default)]
    pub runs: u32,
    /// What removing the rule did, where a variant removes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect: Option<Effect>,
    /// `covered`, `uncovered` or `no_measured_effect`.
    pub status: RuleStatus,
}

/// A rule's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleStatus {
    /// Some test covers it.
    Covered,
    /// No test covers it.
    Uncovered,
    /// Covered, and removing it changed nothing over enough runs to tell.
    NoMeasuredEffect,
}

/// The effect of a rule: its test's pass rate with it and without it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Effect {
    /// The test (`file::name`) and the variant that removes the rule.
    pub test: String,
    /// The variant.
    pub variant: String,
    /// Pass rate with the rule (`default`), 0–1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub with: Option<f64>,
    /// Pass rate without it (the variant), 0–1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub without: Option<f64>,
    /// `with − without`, −1 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub difference: Option<f64>,
    /// The two-sided Fisher exact p-value of the two, 0–1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p_value: Option<f64>,
    /// Judged runs with the rule, and without.
    pub runs: (u32, u32),
}

/// One workspace's rules: the directory as shown (relative to where the suite was read
/// from) and its rules.
#[derive(Debug, Clone)]
pub struct Workspace {
    /// `tests/fixture`.
    pub dir: String,
    /// Its rules ([`crate::spec::rules::rules_in`]).
    pub rules: Vec<Rule>,
}

/// What a run measured that coverage reads: its tests' results and its variants side by
/// side (results JSON's `tests` and `summary.variants`).
#[derive(Debug, Clone, Copy)]
pub struct Measured<'a> {
    /// Every test's result.
    pub tests: &'a [TestResult],
    /// Each test with variants, its variants' pass rates and their differences.
    pub variants: &'a [VariantComparison],
}

/// The coverage of `workspaces`' rules by `specs` (each spec's workspace is found by
/// [`TestSpec::workspace_dir`] shown the same way as [`Workspace::dir`], through `shown`),
/// with figures from `results` when given.
pub fn of(
    specs: &[TestSpec],
    workspaces: &[Workspace],
    shown: impl Fn(&std::path::Path) -> String,
    results: Option<Measured<'_>>,
) -> Coverage {
    let mut coverage = Coverage::default();
    let mut files: BTreeMap<String, usize> = BTreeMap::new();
    for ws in workspaces {
        for rule in &ws.rules {
            let file = join(&ws.dir, &rule.file);
            let covering: Vec<&TestSpec> = specs
                .iter()
                .filter(|s| s.variant.is_none())
                .filter(|s| shown(&s.workspace_dir()) == ws.dir)
                .filter(|s| s.covers.iter().any(|c| c.rules.contains(&rule.id)))
                .collect();
            let mut tests: Vec<String> = covering.iter().map(|s| label(s)).collect();
            // A test run on several agents is one test.
            tests.sort();
            tests.dedup();
            let (pass_rate, runs) = results.map_or((None, 0), |r| pass_rate(r, &covering));
            let effect = results.and_then(|r| effect(r, &covering, rule));
            let status = status(&tests, effect.as_ref());
            if !files.contains_key(&file) {
                files.insert(file.clone(), coverage.files.len());
                coverage.files.push(FileTotals {
                    file: file.clone(),
                    totals: Totals::default(),
                });
            }
            let totals = &mut coverage.files[files[&file]].totals;
            totals.rules += 1;
            coverage.totals.rules += 1;
            if !tests.is_empty() {
                totals.covered += 1;
                coverage.totals.covered += 1;
            }
            coverage.rules.push(RuleCoverage {
                file,
                line: rule.line,
                end_line: rule.end_line,
                id: rule.id.clone(),
                headings: rule.headings.clone(),
                text: rule.text.clone(),
                tests,
                pass_rate,
                runs,
                effect,
                status,
            });
        }
    }
    coverage
}

impl Coverage {
    /// The coverage of two shards of one run (`merge`): the same rules, each with the
    /// judged runs of both and their pass rate over them; an effect from whichever shard
    /// ran it.
    pub fn joined(mut self, other: Coverage) -> Coverage {
        for rule in &mut self.rules {
            let Some(theirs) = other
                .rules
                .iter()
                .find(|r| r.file == rule.file && r.id == rule.id)
            else {
                continue;
            };
            let passed = |r: &RuleCoverage| r.pass_rate.unwrap_or(0.0) * f64::from(r.runs);
            let runs = rule.runs + theirs.runs;
            rule.pass_rate = (runs > 0).then(|| (passed(rule) + passed(theirs)) / f64::from(runs));
            rule.runs = runs;
            if rule.effect.is_none() {
                rule.effect.clone_from(&theirs.effect);
                rule.status = if rule.tests.is_empty() {
                    RuleStatus::Uncovered
                } else {
                    status(&rule.tests, rule.effect.as_ref())
                };
            }
        }
        self
    }
}

fn join(dir: &str, file: &str) -> String {
    if dir.is_empty() || dir == "." {
        file.to_owned()
    } else {
        format!("{}/{file}", dir.trim_end_matches('/'))
    }
}

fn label(spec: &TestSpec) -> String {
    format!(
        "{}::{}",
        crate::spec::diagnostic::display_path(&spec.file),
        spec.name
    )
}

fn status(tests: &[String], effect: Option<&Effect>) -> RuleStatus {
    if tests.is_empty() {
        return RuleStatus::Uncovered;
    }
    match effect {
        Some(e)
            if e.runs.0 >= ENOUGH_RUNS
                && e.runs.1 >= ENOUGH_RUNS
                && e.p_value.is_some_and(|p| p >= 0.05) =>
        {
            RuleStatus::NoMeasuredEffect
        }
        _ => RuleStatus::Covered,
    }
}

/// The results of `spec` as written (its `default` variant when it has variants).
fn results_of<'a>(results: Measured<'a>, spec: &TestSpec) -> impl Iterator<Item = &'a TestResult> {
    let file = crate::spec::diagnostic::display_path(&spec.file);
    let name = spec.name.clone();
    results.tests.iter().filter(move |t| {
        t.name == name
            && t.file == file
            && t.variant.as_deref().is_none_or(|v| v == DEFAULT_VARIANT)
    })
}

/// (passed, judged) runs of one result: its repeat counts, else its verdict.
fn judged(t: &TestResult) -> (u32, u32) {
    use super::test_result::TestStatus;
    match &t.repeat {
        Some(r) => (r.passed, r.passed + r.failed),
        None => match t.status {
            TestStatus::Passed => (1, 1),
            TestStatus::Failed => (0, 1),
            _ => (0, 0),
        },
    }
}

fn pass_rate(results: Measured<'_>, covering: &[&TestSpec]) -> (Option<f64>, u32) {
    let (mut passed, mut runs) = (0, 0);
    for spec in covering {
        for t in results_of(results, spec) {
            let (p, j) = judged(t);
            passed += p;
            runs += j;
        }
    }
    (
        (runs > 0).then(|| f64::from(passed) / f64::from(runs)),
        runs,
    )
}

/// The effect of `rule`: the first covering test with a variant that removes it and ran.
fn effect(results: Measured<'_>, covering: &[&TestSpec], rule: &Rule) -> Option<Effect> {
    for spec in covering {
        let file = crate::spec::diagnostic::display_path(&spec.file);
        for comparison in results
            .variants
            .iter()
            .filter(|c| c.name == spec.name && c.file == file)
        {
            let with = comparison
                .variants
                .iter()
                .find(|v| v.variant == DEFAULT_VARIANT)?;
            for without in comparison
                .variants
                .iter()
                .filter(|v| v.variant != DEFAULT_VARIANT)
            {
                if !removes(spec, &without.variant, rule) {
                    continue;
                }
                return Some(Effect {
                    test: label(spec),
                    variant: without.variant.clone(),
                    with: with.pass_rate,
                    without: without.pass_rate,
                    difference: without.difference.map(|d| -d),
                    p_value: without.p_value,
                    runs: (with.passed + with.failed, without.passed + without.failed),
                });
            }
        }
    }
    None
}

/// Whether `spec`'s variant `name` removes `rule`: it removes the rule's file (or a
/// directory holding it), or writes the file without the rule.
fn removes(spec: &TestSpec, name: &str, rule: &Rule) -> bool {
    let Some(variant) = spec.variants.iter().find(|v| v.name == name) else {
        return false;
    };
    let file = rule.file.trim_start_matches("./");
    let removed = variant.remove.iter().any(|r| {
        let r = r.trim_start_matches("./").trim_end_matches('/');
        file == r || file.starts_with(&format!("{r}/"))
    });
    let rewritten = variant.add.iter().any(|(path, content)| {
        path.trim_start_matches("./") == file
            && !crate::spec::rules::rules_of(file, content)
                .iter()
                .any(|r| r.id == rule.id)
    });
    removed || rewritten
}

#[cfg(test)]
mod tests;
