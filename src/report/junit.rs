//! JUnit XML (`--junit FILE`), built with quick-junit.
//!
//! One `<testsuite>` per test file and one `<testcase>` per test, with `file` and `line`
//! attributes (the first failing assertion's line, as pytest emits them) so that the
//! annotators that read them (mikepenz/action-junit-report, GitLab) point at the YAML. A
//! failed test is a `<failure>` whose message lists the failed assertions; an errored one
//! an `<error>`; a skipped one `<skipped>`. Every `<failure>` and `<error>` has text (the
//! details, else the message): some readers (dorny/test-reporter) crash on an empty one.
//!
//! The file is valid against the Jenkins xUnit plugin's `junit-10.xsd` extended with
//! `testcase@file` and `testcase@line` (`tests/data/junit/junit-10-file-line.xsd`): so no
//! `testsuites@skipped` and no `testcase@assertions`, which that schema rejects.

use std::time::Duration;

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use crate::verdict::results::{AssertionStatus, Results, TestResult, TestStatus};

/// Why JUnit XML could not be produced.
#[derive(Debug, thiserror::Error)]
#[error("can not write JUnit XML: {0}")]
pub struct JunitError(String);

impl From<super::json::source::SourceError> for JunitError {
    fn from(e: super::json::source::SourceError) -> Self {
        JunitError(e.to_string())
    }
}

/// The most characters of a `<failure>`/`<error>` text.
const TEXT_MAX: usize = 20_000;

/// A non-success status's message.
fn message_of(status: &TestCaseStatus) -> String {
    match status {
        TestCaseStatus::NonSuccess { message, .. } | TestCaseStatus::Skipped { message, .. } => {
            message
                .as_ref()
                .map(|m| m.as_str().to_owned())
                .unwrap_or_default()
        }
        TestCaseStatus::Success { .. } => String::new(),
    }
}

/// Removes `skipped="N"` from the `<testsuites>` tag: quick-junit always writes it and
/// junit-10.xsd does not allow it there (each `<testsuite>` keeps its own count).
fn without_testsuites_skipped(xml: String) -> String {
    let Some(start) = xml.find("<testsuites") else {
        return xml;
    };
    let Some(len) = xml[start..].find('>') else {
        return xml;
    };
    let tag = &xml[start..start + len];
    let Some(at) = tag.find(" skipped=\"") else {
        return xml;
    };
    let Some(close) = tag[at + 10..].find('"') else {
        return xml;
    };
    let (from, to) = (start + at, start + at + 10 + close + 1);
    format!("{}{}", &xml[..from], &xml[to..])
}

fn case(test: &TestResult, with_agent: bool) -> TestCase {
    let mut status = case_status(test);
    let details: Vec<String> = test
        .assertions
        .iter()
        .filter(|a| a.status != AssertionStatus::Pass)
        .map(|a| {
            format!(
                "{}:{}: {:?} {}\n{}",
                test.file,
                a.line,
                a.status,
                a.description,
                a.detail.as_deref().unwrap_or("")
            )
        })
        .collect();
    if !matches!(test.status, TestStatus::Passed | TestStatus::Skipped) {
        let text = if details.is_empty() {
            message_of(&status)
        } else {
            details.join("\n\n")
        };
        let text = if text.trim().is_empty() {
            "no details were recorded".to_owned()
        } else {
            text
        };
        status.set_description(crate::shared::cut::chars(&text, TEXT_MAX).kept);
    }
    let mut case = TestCase::new(test.qualified_name(with_agent), status);
    case.set_classname(test.file.as_str());
    case.set_time(Duration::from_millis(test.duration_ms));
    let line = test
        .assertions
        .iter()
        .find(|a| {
            matches!(
                a.status,
                AssertionStatus::Fail | AssertionStatus::Error | AssertionStatus::Invalid
            )
        })
        .or(test.assertions.first())
        .map_or(1, |a| a.line);
    if test.routing.is_some()
        && let Some(a) = test.assertions.iter().find(|a| a.kind == "routing")
    {
        case.properties.push(quick_junit::Property::new(
            "routing",
            a.description.as_str(),
        ));
    }
    if let Some(r) = &test.reused {
        case.properties
            .push(quick_junit::Property::new("reused", r.from.as_str()));
    }
    if let Some(sandbox) = &test.sandbox {
        let value = if sandbox.is_off() {
            "not sandboxed (--sandbox off)".to_owned()
        } else {
            sandbox.mode.clone()
        };
        case.properties
            .push(quick_junit::Property::new("sandbox", value));
    }
    if let Some(witness) = &test.witness {
        let value = match witness.status {
            crate::gateway::witness::WitnessStatus::Witnessed => "witnessed",
            crate::gateway::witness::WitnessStatus::Partial => "partial",
            crate::gateway::witness::WitnessStatus::Unwitnessed => "unwitnessed",
            crate::gateway::witness::WitnessStatus::Tampered => "tampered",
        };
        case.properties
            .push(quick_junit::Property::new("witness", value));
    }
    if let Some(r) = &test.repeat {
        case.properties
            .push(quick_junit::Property::new("runs", r.headline()));
        for a in r.flaky_assertions() {
            case.properties.push(quick_junit::Property::new(
                "flaky assertion",
                format!("{}: {}", a.description, a.phrase(r.runs)),
            ));
        }
    }
    case.extra.insert("file".into(), test.file.as_str().into());
    case.extra.insert("line".into(), line.to_string().into());
    if let Some(answer) = test
        .transcript
        .as_ref()
        .and_then(|t| t.final_text.as_deref())
    {
        case.set_system_out(answer);
    }
    case
}

/// A routing suite's case of one skill and agent: a failure when its routing fell against
/// the baseline, an error when none of its runs could be judged, else a success; its
/// figures in `system-out`.
fn routing_case(rc: super::routing::JunitCase) -> TestCase {
    let status = match (&rc.failure, &rc.error) {
        (Some(why), _) => {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
            s.set_message(format!("routing fell against the baseline: {why}"));
            s.set_type("routing");
            s.set_description(format!("{why}\n{}", rc.figures));
            s
        }
        (None, Some(why)) => {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Error);
            s.set_message(why.as_str());
            s.set_type("routing");
            s.set_description(why.as_str());
            s
        }
        (None, None) => TestCaseStatus::success(),
    };
    let mut case = TestCase::new(rc.name.as_str(), status);
    case.set_classname(rc.file.as_str());
    case.extra.insert("file".into(), rc.file.as_str().into());
    case.extra.insert("line".into(), "1".into());
    case.set_system_out(rc.figures.as_str());
    case
}

/// The case's status and its message: success, skipped (why), failure (which assertions)
/// or error (whose fault, in `type`).
fn case_status(test: &TestResult) -> TestCaseStatus {
    let failing = |s: AssertionStatus| test.assertions.iter().filter(move |a| a.status == s);
    match test.status {
        TestStatus::Passed => TestCaseStatus::success(),
        // A routing prompt that chose otherwise fails nothing by itself: its skill's case
        // ([`routing_case`]) fails when the figures fell. What it chose is in its output.
        TestStatus::Failed if test.routing.is_some() => TestCaseStatus::success(),
        TestStatus::Skipped => {
            let mut s = TestCaseStatus::skipped();
            s.set_message(match (test.skip_reason, &test.repeat) {
                (Some(crate::verdict::results::SkipReason::Shard), Some(r)) => format!(
                    "{}: merging every shard's results decides it (aptitude merge)",
                    r.headline()
                ),
                (_, Some(r)) => format!("{}: too few runs ran to decide", r.headline()),
                (Some(crate::verdict::results::SkipReason::Budget), None) => {
                    "not run: the cost ceiling was reached (budget)".to_owned()
                }
                (Some(crate::verdict::results::SkipReason::Shard) | None, None) => {
                    "every assertion was skipped".to_owned()
                }
            });
            s
        }
        TestStatus::Failed => {
            let failed: Vec<String> = failing(AssertionStatus::Fail)
                .map(|a| a.description.clone())
                .collect();
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
            let repeat = test
                .repeat
                .as_ref()
                .map(|r| format!("{}; ", r.headline()))
                .unwrap_or_default();
            s.set_message(format!(
                "{repeat}{} assertion{} failed: {}",
                failed.len(),
                if failed.len() == 1 { "" } else { "s" },
                failed.join("; ")
            ));
            s.set_type("assertion");
            s
        }
        TestStatus::Error => {
            let message = test.error.clone().unwrap_or_else(|| {
                let errored: Vec<String> = test
                    .assertions
                    .iter()
                    .filter(|a| {
                        matches!(a.status, AssertionStatus::Error | AssertionStatus::Invalid)
                    })
                    .map(|a| a.description.clone())
                    .collect();
                format!("could not be checked: {}", errored.join("; "))
            });
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Error);
            s.set_message(crate::shared::cut::chars(&message, TEXT_MAX).kept);
            // The error kind (infra, agent, setup, judge, interrupted) says whose fault.
            s.set_type(test.error_kind.map_or("error", |k| k.word()));
            s
        }
    }
}

/// The JUnit XML file format (`--junit FILE`).
pub const FORMAT: super::FileFormat = super::FileFormat {
    name: "junit",
    render: |results, source, _| Ok(render_from(results, source)?),
};

/// Renders results as JUnit XML.
///
/// # Errors
/// When serialization fails.
pub fn render(results: &Results) -> Result<String, JunitError> {
    render_from(results, &results.tests)
}

/// [`render`], each test read whole from `source` ([`super::json::source`]) a chunk at a time
/// (its answer is the case's `system-out`); `results` gives the rest.
///
/// # Errors
/// When serialization fails, or a test could not be read from `source`.
pub fn render_from(
    results: &Results,
    source: &dyn super::json::source::TestSource,
) -> Result<String, JunitError> {
    let mut report = Report::new("aptitude");
    report.set_time(Duration::from_millis(results.summary.duration_ms));
    // Suites in the order their files first appear.
    let mut suites: Vec<(String, TestSuite)> = Vec::new();
    // Case names carry the agent when tests ran on several (`greets · codex`).
    let several_agents = results.matrix().is_some_and(|m| m.several_agents());
    super::json::source::for_each(source, |_, test| {
        let index = match suites.iter().position(|(file, _)| *file == test.file) {
            Some(i) => i,
            None => {
                suites.push((test.file.clone(), TestSuite::new(test.file.as_str())));
                suites.len() - 1
            }
        };
        suites[index].1.add_test_case(case(test, several_agents));
        Ok::<(), JunitError>(())
    })?;
    // A case per skill and agent of each routing suite, in the suite of its file.
    for rc in results
        .routing
        .as_ref()
        .map(super::routing::junit_cases)
        .unwrap_or_default()
    {
        let index = match suites.iter().position(|(file, _)| *file == rc.file) {
            Some(i) => i,
            None => {
                suites.push((rc.file.clone(), TestSuite::new(rc.file.as_str())));
                suites.len() - 1
            }
        };
        suites[index].1.add_test_case(routing_case(rc));
    }
    let sandbox = results.summary.sandbox.as_ref().map(|s| s.phrase());
    let witness = results.summary.witness.as_ref().map(|s| s.phrase());
    for (_, mut suite) in suites {
        if let Some(phrase) = &sandbox {
            suite
                .properties
                .push(quick_junit::Property::new("sandbox", phrase.as_str()));
        }
        if let Some(phrase) = &witness {
            suite
                .properties
                .push(quick_junit::Property::new("witness", phrase.as_str()));
        }
        let total: u64 = suite
            .test_cases
            .iter()
            .filter_map(|c| c.time)
            .map(|t| t.as_millis() as u64)
            .sum();
        suite.set_time(Duration::from_millis(total));
        report.add_test_suite(suite);
    }
    report
        .to_string()
        .map(without_testsuites_skipped)
        .map_err(|e| JunitError(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_testsuites_tag_loses_only_its_skipped_count() {
        let xml = r#"<?xml version="1.0"?>
<testsuites name="aptitude" tests="1" skipped="0" failures="0" errors="0"><testsuite name="a" tests="1" skipped="1">"#;
        assert_eq!(
            without_testsuites_skipped(xml.to_owned()),
            r#"<?xml version="1.0"?>
<testsuites name="aptitude" tests="1" failures="0" errors="0"><testsuite name="a" tests="1" skipped="1">"#
        );
    }
}
