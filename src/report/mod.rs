//! Reporters: how results are shown. Every reporter renders from the one results model
//! ([`crate::verdict::results`]); none of them re-runs or re-judges anything.
//!
//! The live terminal reporter ([`live`]) follows run events; the file formats (JSON, HTML,
//! Markdown, JUnit) render a finished run's results and are listed in [`FILE_FORMATS`]: a new
//! format is its module, one entry there, and the flag that names its file. [`otlp`] sends
//! the same results as OpenTelemetry traces to a collector.

pub mod baseline;
pub mod coverage;
pub mod diff;
pub mod github;
pub mod html;
pub mod json;
pub mod junit;
mod labels;
pub mod live;
pub mod markdown;
pub mod otlp;
pub mod routing;
pub mod terminal;
mod trajectory;

use crate::verdict::results::Results;

/// What a file format may be told besides the results.
#[derive(Debug, Clone, Default)]
pub struct RenderOptions {
    /// Upper bound on the Markdown summary, in characters.
    pub markdown_max_chars: usize,
}

/// A report written to a file from a finished run's results.
#[derive(Debug, Clone, Copy)]
pub struct FileFormat {
    /// Its name, as in its flag (`--html FILE`): `json`, `html`, `markdown`, `junit`.
    pub name: &'static str,
    /// Renders the whole file from the results and each test whole from the source (test
    /// `i` of both is the same test; see [`json::source`]).
    pub render:
        fn(&Results, &dyn json::source::TestSource, &RenderOptions) -> Result<String, RenderError>,
}

/// Why a report could not be rendered (a bug: results always render, but a results file
/// read again may have changed since).
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// The HTML template failed.
    #[error("can not render the HTML report: {0}")]
    Html(#[from] askama::Error),
    /// The results could not be serialized.
    #[error("can not serialize the results: {0}")]
    Json(#[from] serde_json::Error),
    /// The JUnit XML could not be written.
    #[error(transparent)]
    Junit(#[from] junit::JunitError),
    /// A test could not be read whole.
    #[error(transparent)]
    Source(#[from] json::source::SourceError),
}

/// Every file format, in the order they are written.
pub const FILE_FORMATS: &[FileFormat] =
    &[json::FORMAT, html::FORMAT, markdown::FORMAT, junit::FORMAT];

/// The file format called `name`.
pub fn file_format(name: &str) -> Option<&'static FileFormat> {
    FILE_FORMATS.iter().find(|f| f.name == name)
}

#[cfg(test)]
mod tests {
    use crate::verdict::results::{AssertionStatus, Results, TestResult};

    /// A test whose simulated user answered once: the terminal (test and summary) and the
    /// Markdown summary show its cost on a line of its own, apart from the test's usage
    /// that counts it.
    #[test]
    fn the_simulated_users_cost_has_its_own_line() {
        use crate::transcript::Usage;
        use crate::transcript::dialog::{Channel, Dialog};
        let simulated = Usage {
            input_tokens: 100,
            output_tokens: 7,
            cost_usd: Some(0.000544),
            duration_ms: Some(3_688),
            ..Usage::default()
        };
        let mut test = TestResult::new(
            "dice asks",
            "tests/dice.aptitude.yaml",
            crate::verdict::results::TestStatus::Passed,
        );
        test.duration_ms = 9_000;
        test.usage = Some(Usage {
            input_tokens: 2_100,
            output_tokens: 57,
            cost_usd: Some(0.0123),
            ..Usage::default()
        });
        test.dialog = Some(Dialog {
            channel: Channel::AskTool {
                tool: "AskUserQuestion".into(),
            },
            exchanges: Vec::new(),
            incomplete: None,
            unwitnessed: None,
            simulated_usage: Some(simulated),
            goal_met: false,
        });
        let mut plain = test.clone();
        plain.name = "dice scripted".into();
        plain.dialog = None;
        let results = Results::new(vec![test, plain], 9_500);
        let terminal =
            anstream::adapter::strip_str(&crate::report::terminal::render_results(&results))
                .to_string();
        insta::assert_snapshot!("simulated_user_terminal", terminal);
        let markdown = crate::report::markdown::status_line(&results);
        insta::assert_snapshot!("simulated_user_markdown", markdown);
        assert_eq!(
            terminal.matches("simulated user:").count(),
            2,
            "the test's line and the summary's, none for the scripted test: {terminal}"
        );
    }

    /// Five runs of one test whose second assertion held in runs 1, 3 and 5 only.
    fn flaky_results() -> Results {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/results/hostile.json"
        ))
        .unwrap();
        let results: Results = serde_json::from_str(&text).unwrap();
        let mut template = results.tests[0].clone();
        template.assertions.truncate(2);
        template.error = None;
        let runs: Vec<TestResult> = (0..5)
            .map(|i| {
                let mut r = template.clone();
                r.assertions[0].status = AssertionStatus::Pass;
                r.assertions[1].status = if i % 2 == 0 {
                    AssertionStatus::Pass
                } else {
                    AssertionStatus::Fail
                };
                r.status = TestResult::status_of(None, &r.assertions);
                r
            })
            .collect();
        Results::new(vec![crate::verdict::repeat::aggregate(runs, 5)], 1)
    }

    #[test]
    fn every_report_shows_the_run_counts_and_names_the_flaky_assertion() {
        let results = flaky_results();
        let flaky = results.tests[0].assertions[1].description.clone();
        let options = super::RenderOptions {
            markdown_max_chars: 65_000,
        };
        let terminal = crate::report::terminal::render_results(&results);
        assert!(terminal.contains("3/5 runs passed (flaky)"), "{terminal}");
        assert!(terminal.contains("3/5 runs · flaky"), "{terminal}");
        for format in super::FILE_FORMATS {
            let text = (format.render)(&results, &results.tests, &options).unwrap();
            match format.name {
                // JSON keeps every run and the figures.
                "json" => {
                    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
                    assert_eq!(v["tests"][0]["runs"].as_array().unwrap().len(), 5);
                    assert_eq!(v["tests"][0]["repeat"]["flaky"], true);
                }
                "html" => {
                    assert!(text.contains("3/5 runs passed (flaky)"), "html");
                    assert!(text.contains("3/5 runs · flaky"), "html");
                    assert!(text.contains("Run 5 · passed"), "each run can be opened");
                }
                "markdown" => {
                    assert!(text.contains("3/5 runs passed (flaky)"), "{text}");
                    assert!(text.contains("flaky: "), "{text}");
                }
                "junit" => {
                    assert!(text.contains("3/5 runs passed (flaky)"), "{text}");
                    assert!(text.contains("flaky assertion"), "{text}");
                }
                other => panic!("a new format needs a check here: {other}"),
            }
        }
        // Markdown names the flaky assertion itself (escaped for inline HTML).
        let md = (super::markdown::FORMAT.render)(&results, &results.tests, &options).unwrap();
        let plain: String = flaky.chars().filter(|c| c.is_alphanumeric()).collect();
        let md_plain: String = md.chars().filter(|c| c.is_alphanumeric()).collect();
        assert!(md_plain.contains(&plain), "{md}");
    }
}
