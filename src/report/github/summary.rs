//! The job summary (`GITHUB_STEP_SUMMARY`) and step outputs (`GITHUB_OUTPUT`): local files
//! the runner reads, no API call.

use std::io::Write as _;

use super::error::GithubError;
use super::{GithubEnv, PublishOptions};
use crate::verdict::results::Results;

/// GitHub's limit on a step summary, in bytes (1 MiB).
pub const SUMMARY_BYTES: usize = 1024 * 1024;

fn append(path: &std::path::Path, text: &str) -> Result<(), GithubError> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|source| GithubError::Open {
            path: path.to_owned(),
            source,
        })?;
    file.write_all(text.as_bytes())
        .map_err(|source| GithubError::Write {
            path: path.to_owned(),
            source,
        })
}

/// Appends the Markdown to `GITHUB_STEP_SUMMARY`, within 1 MiB.
///
/// # Errors
/// When the file can not be written.
pub fn write_step_summary(env: &GithubEnv, markdown: &str) -> Result<(), GithubError> {
    let Some(path) = &env.step_summary else {
        return Ok(());
    };
    // `body` already keeps within the limit; this guards any other caller.
    let cut = crate::shared::cut::bytes(markdown, SUMMARY_BYTES - super::MARGIN_BYTES);
    let mut text = cut.kept;
    if cut.left_out > 0 {
        text.push_str("\n\n> ✂️ The summary was cut at GitHub's 1 MiB limit; the HTML report has everything.\n");
    }
    append(path, &text)
}

/// A heredoc delimiter no value can contain.
fn delimiter(values: &[&str]) -> String {
    loop {
        let candidate = format!(
            "ghadelimiter_{}",
            crate::assertions::judge::prompt::boundary_for("")
        );
        if values.iter().all(|v| !v.contains(&candidate)) {
            return candidate;
        }
    }
}

/// Writes `passed`, `failed`, `errors`, `total`, `results-path` and `report-path` to
/// `GITHUB_OUTPUT`, each in a heredoc with a random delimiter.
///
/// # Errors
/// When the file can not be written.
pub fn write_outputs(
    env: &GithubEnv,
    results: &Results,
    options: &PublishOptions,
) -> Result<(), GithubError> {
    let Some(path) = &env.output else {
        return Ok(());
    };
    let s = &results.summary;
    let values = [
        ("passed", s.passed.to_string()),
        ("failed", s.failed.to_string()),
        ("errors", s.errors.to_string()),
        ("total", s.total.to_string()),
        (
            "results-path",
            options.results_path.clone().unwrap_or_default(),
        ),
        (
            "report-path",
            options.report_path.clone().unwrap_or_default(),
        ),
    ];
    let all: Vec<&str> = values.iter().map(|(_, v)| v.as_str()).collect();
    let delim = delimiter(&all);
    let mut text = String::new();
    for (name, value) in &values {
        text.push_str(&format!("{name}<<{delim}\n{value}\n{delim}\n"));
    }
    append(path, &text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_use_one_random_delimiter() {
        let dir = tempfile::tempdir().unwrap();
        let env = GithubEnv {
            output: Some(dir.path().join("out")),
            ..GithubEnv::default()
        };
        let options = PublishOptions {
            results_path: Some("r.json".into()),
            ..PublishOptions::default()
        };
        write_outputs(&env, &Results::new(Vec::new(), 0), &options).unwrap();
        let text = std::fs::read_to_string(dir.path().join("out")).unwrap();
        let first = text.lines().next().unwrap();
        let delim = first.strip_prefix("passed<<").unwrap();
        assert!(
            delim.starts_with("ghadelimiter_") && delim.len() > 20,
            "{delim}"
        );
        assert!(text.contains(&format!("results-path<<{delim}\nr.json\n{delim}\n")));
    }

    #[test]
    fn summary_stays_under_one_mib() {
        let dir = tempfile::tempdir().unwrap();
        let env = GithubEnv {
            step_summary: Some(dir.path().join("summary")),
            ..GithubEnv::default()
        };
        write_step_summary(&env, &"é".repeat(SUMMARY_BYTES)).unwrap();
        let len = std::fs::metadata(dir.path().join("summary")).unwrap().len() as usize;
        assert!(len <= SUMMARY_BYTES, "{len}");
    }
}
