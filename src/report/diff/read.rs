//! Results read for `aptitude diff` within bounded memory: every test is kept without its
//! run detail ([`TestResult::without_run_detail`]), except the tests the comparison will
//! explain, which are kept whole. Two 5,000 × 3 results then cost what their verdicts
//! take, not what their transcripts take.
//!
//! Two files: the base is read light, noting where each test is in the file; the head is
//! read keeping whole each test whose verdict changed from the base's (or that `--test`
//! names); those tests of the base are then read again alone, from where they are. Each
//! file is read once. One file: each test whose runs the comparison will explain is kept
//! whole as it is read.

use std::collections::HashMap;
use std::path::Path;

use super::{Change, DiffOptions, bad, classify, named};
use crate::report::json::{self, JsonError};
use crate::verdict::results::stream::Span;
use crate::verdict::results::{Results, TestKey, TestResult, TestStatus};

/// `base` and `head` for [`super::diff`].
///
/// # Errors
/// When a file can not be read ([`JsonError`]).
pub fn pair(
    base: &Path,
    head: &Path,
    options: &DiffOptions,
) -> Result<(Results, Results), JsonError> {
    let mut spans: HashMap<TestKey, (usize, Span)> = HashMap::new();
    let mut index = 0;
    let mut light = json::read_each(base, &mut |t, span| {
        spans.insert(t.key(), (index, span));
        index += 1;
        Some(t.without_run_detail())
    })?;
    let mut whole: Vec<usize> = Vec::new();
    let head = {
        let before: HashMap<TestKey, &TestResult> =
            light.tests.iter().map(|t| (t.key(), t)).collect();
        json::read_each(head, &mut |t, _| {
            let key = t.key();
            let wanted = before.get(&key).is_some_and(|b| explained(b, &t, options));
            if wanted && let Some((at, _)) = spans.get(&key) {
                whole.push(*at);
                Some(t)
            } else {
                Some(t.without_run_detail())
            }
        })?
    };
    let by_index: HashMap<usize, Span> = spans.into_values().collect();
    for at in whole {
        if let Some(span) = by_index.get(&at) {
            light.tests[at] = json::read_test_at(base, *span)?;
        }
    }
    Ok((light, head))
}

/// One file's results for [`super::diff_runs`].
///
/// # Errors
/// When the file can not be read ([`JsonError`]).
pub fn one(path: &Path, options: &DiffOptions) -> Result<Results, JsonError> {
    json::read_each(path, &mut |t, _| {
        Some(if runs_explained(&t, options) {
            t
        } else {
            t.without_run_detail()
        })
    })
}

/// Whether [`super::diff`] explains `head`'s change from `base` (its own filter).
fn explained(base: &TestResult, head: &TestResult, options: &DiffOptions) -> bool {
    if options.test.as_deref().is_some_and(|n| !named(head, n)) {
        return false;
    }
    if head.routing.is_some() && options.test.is_none() {
        return false;
    }
    let asked = options.test.is_some() || options.runs.is_some();
    asked || classify(base, head, options.significance) != Change::Unchanged
}

/// Whether [`super::diff_runs`] compares runs of `t` (its own filter).
fn runs_explained(t: &TestResult, options: &DiffOptions) -> bool {
    if options.test.as_deref().is_some_and(|n| !named(t, n)) || t.runs.len() < 2 {
        return false;
    }
    if options.runs.is_some() || options.test.is_some() {
        return true;
    }
    t.numbered_runs()
        .any(|(_, r)| r.status == TestStatus::Passed)
        && t.numbered_runs().any(|(_, r)| bad(r.status))
}
