//! What a routing prompt's runs chose, in words: the line each report shows for the
//! prompt (`should trigger release: chose none in 3 of 3 runs`). Below both the k-of-n
//! verdict of repeated runs (`repeat`) and the routing figures (`routing`), which use it.

use super::test_result::{TestResult, TestStatus};
use crate::spec::routing::RoutingCase;

/// What a routing prompt's runs chose: (skill or `none`, runs) for each choice, the most
/// chosen first (ties by name, `none` last), and the runs that errored and were not
/// started. `runs` are a test's runs (the test itself when it ran once).
pub fn choices(runs: &[TestResult]) -> (Vec<(String, u32)>, u32, u32) {
    let mut chosen: Vec<(String, u32)> = Vec::new();
    let (mut errors, mut skipped) = (0u32, 0u32);
    for run in runs {
        let decision = run
            .assertions
            .iter()
            .find(|a| a.kind == "routing")
            .and_then(|a| a.routing.as_ref());
        match (run.status, decision) {
            (TestStatus::Skipped, _) => skipped += 1,
            (TestStatus::Passed | TestStatus::Failed, Some(d)) => {
                let name = crate::assertions::routing_choice(d.triggered.as_deref()).to_owned();
                match chosen.iter_mut().find(|(n, _)| *n == name) {
                    Some((_, k)) => *k += 1,
                    None => chosen.push((name, 1)),
                }
            }
            _ => errors += 1,
        }
    }
    chosen.sort_by(|a, b| {
        b.1.cmp(&a.1)
            .then_with(|| (a.0 == "none").cmp(&(b.0 == "none")))
            .then_with(|| a.0.cmp(&b.0))
    });
    (chosen, errors, skipped)
}

/// `chose none in 3 of 3 runs`, `chose pdf in 2 of 3 runs, none in 1, 1 run errored`:
/// what [`choices`] counted, in words.
pub fn choices_phrase(runs: &[TestResult]) -> String {
    let (chosen, errors, skipped) = choices(runs);
    let total = chosen.iter().map(|(_, k)| k).sum::<u32>() + errors + skipped;
    let mut parts: Vec<String> = Vec::new();
    for (i, (name, k)) in chosen.iter().enumerate() {
        parts.push(if i == 0 {
            format!("chose {name} in {k} of {total} run{}", plural(total))
        } else {
            format!("{name} in {k}")
        });
    }
    if errors > 0 {
        parts.push(format!("{errors} run{} errored", plural(errors)));
    }
    if skipped > 0 {
        parts.push(format!("{skipped} not started"));
    }
    parts.join(", ")
}

/// A repeated routing prompt's line, from its runs' choices: `should trigger release: chose
/// none in 3 of 3 runs`, `should trigger pdf: chose pdf in 2 of 3 runs, none in 1`, with
/// the runs that errored or were not started after.
pub fn prompt_line(case: &RoutingCase, runs: &[TestResult]) -> String {
    format!("{}: {}", case.expectation(), choices_phrase(runs))
}

fn plural(n: u32) -> &'static str {
    if n == 1 { "" } else { "s" }
}
