//! `run --reuse BASELINE.json`: which tests may take their run from a baseline instead of
//! running the agent, and the grades that travel with it.
//!
//! A test's run is reused only when all of these hold, else the agent runs and the result
//! says why (`not_reused`):
//! - the baseline has the test (same file, name, agent and variant) with the same number of
//!   runs;
//! - the baseline's run has a transcript and ended without an error (an infra error, a
//!   timeout or an interruption says nothing about what the agent would do);
//! - an assertion that applies to the test and needs the workspace after the run
//!   (`file_*`, `json_file`, `wrote`, `verify`) is checked on a workspace rebuilt by a
//!   **replay**: the agent runs again, its model answered from the baseline run's cassette
//!   (`run --record-model`), so its tools run again at no model cost. Without a cassette
//!   the agent runs live: the workspace does not travel with results, and a check that
//!   can not be made is never guessed;
//! - its fingerprint ([`crate::run::fingerprint`]) is the baseline's, part for part.
//!
//! A reused run's transcript and file list are evaluated against today's assertions; a
//! replayed run's are its own. A replay that diverges from the recording (the agent did
//! something else) goes on against the real model, and is then no reuse.
//! Reviews are graded through [`crate::assertions::judge::Judge::with_prior`]: the baseline's grades
//! (with their cache keys) answer an unchanged review of the same answer without a call,
//! then the local grade cache does. `claims: verified` likewise, through
//! [`crate::assertions::judge::Judge::with_prior_claims`]: the claims the baseline read, by the
//! extraction's cache key.

use std::time::Instant;

use super::grade::check_transcript;
use super::{TestContext, not_run};
use crate::verdict::results::ErrorKind;
use crate::workspace::Workspace;
use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::assertions::judge::cache::CachedGrade;
use crate::assertions::judge::claims::Claim;
use crate::gateway::cassette::{Cassette, CassetteRef};
use crate::gateway::{ReplayMiss, Replaying};
use crate::spec::{AssertionKind, TestSpec};
use crate::verdict::results::{Results, TestKey, TestResult};

/// A baseline's results, ready to be reused from.
#[derive(Debug, Clone)]
pub struct Reuse {
    /// Where the baseline came from (the file as given, or the GitHub run).
    pub from: String,
    /// The aptitude version that wrote it.
    pub aptitude_version: String,
    tests: BTreeMap<TestKey, TestResult>,
    /// The directory the baseline's cassette references are relative to (the results
    /// file's), when its cassettes can be read.
    cassettes: Option<PathBuf>,
    /// The directory they were extracted to from an artifact, kept while this lives.
    _extracted: Option<std::sync::Arc<tempfile::TempDir>>,
}

/// How a baseline's run is taken, once its fingerprint is unchanged.
#[derive(Debug)]
pub enum Taken<'a> {
    /// Its transcript and files, today's assertions evaluated on them.
    Transcript(&'a TestResult),
    /// The agent runs again, answered from the run's cassette: an assertion needs the
    /// workspace after the run.
    Replay(&'a TestResult, CassetteRef),
}

impl<'a> Taken<'a> {
    /// The baseline's run.
    pub fn recorded(&self) -> &'a TestResult {
        match self {
            Taken::Transcript(r) | Taken::Replay(r, _) => r,
        }
    }
}

impl Reuse {
    /// The tests of `baseline`, which came `from` a file or a GitHub run.
    pub fn new(baseline: Results, from: String) -> Self {
        Reuse {
            from,
            aptitude_version: baseline.aptitude_version,
            tests: baseline.tests.into_iter().map(|t| (t.key(), t)).collect(),
            cassettes: None,
            _extracted: None,
        }
    }

    /// Reads the baseline's cassettes from `dir`, where they were extracted from its
    /// artifact; the directory lives as long as this.
    pub fn with_extracted_cassettes(mut self, dir: std::sync::Arc<tempfile::TempDir>) -> Self {
        self.cassettes = Some(dir.path().to_owned());
        self._extracted = Some(dir);
        self
    }

    /// Reads the baseline's cassettes relative to `dir` (the results file's directory).
    pub fn with_cassettes(mut self, dir: PathBuf) -> Self {
        self.cassettes = Some(dir);
        self
    }

    /// The cassette `reference` names, to replay with a miss going to the real model.
    ///
    /// # Errors
    /// [`NotReplayable`]: the baseline came without its cassettes, or this one can not be
    /// read.
    pub fn replaying(&self, reference: &CassetteRef) -> Result<Replaying, NotReplayable> {
        let dir = self
            .cassettes
            .as_deref()
            .ok_or(NotReplayable::NoCassettes)?;
        let cassette = Cassette::read(dir, reference)?;
        Ok(Replaying {
            cassette: std::sync::Arc::new(cassette),
            miss: ReplayMiss::Live,
        })
    }

    /// Every grade the baseline recorded with its cache key, for
    /// [`crate::assertions::judge::Judge::with_prior`].
    pub fn prior_grades(&self) -> BTreeMap<String, CachedGrade> {
        grades_of(&mut self.tests.values())
    }

    /// Every `claims: verified` extraction the baseline recorded, by its cache key, for
    /// [`crate::assertions::judge::Judge::with_prior_claims`]. An extraction that failed recorded no
    /// claims and gives none.
    pub fn prior_claims(&self) -> BTreeMap<String, Vec<Claim>> {
        claims_of(&mut self.tests.values())
    }
}

/// Why a reused run's recording can not be replayed (the run then goes to the model).
#[derive(Debug, thiserror::Error)]
pub enum NotReplayable {
    /// The baseline was read without its cassettes.
    #[error("the baseline's cassettes are not available here")]
    NoCassettes,
    /// Its cassette can not be read, or is not the one recorded.
    #[error("its recording can not be replayed: {0}")]
    Cassette(#[from] crate::gateway::cassette::CassetteError),
}

/// Every grade `tests` (and their runs) recorded, by its cache key.
pub fn grades_of(tests: &mut dyn Iterator<Item = &TestResult>) -> BTreeMap<String, CachedGrade> {
    let mut grades = BTreeMap::new();
    let mut add = |t: &TestResult| {
        for a in &t.assertions {
            let scores: Vec<(Option<u8>, Option<&String>)> = if a.votes.is_empty() {
                vec![(a.score, a.reasoning.as_ref())]
            } else {
                a.votes
                    .iter()
                    .map(|v| (v.score, v.reasoning.as_ref()))
                    .collect()
            };
            for (key, (score, reasoning)) in a.grade_keys.iter().zip(scores) {
                if let Some(score) = score {
                    grades.insert(
                        key.clone(),
                        CachedGrade {
                            score,
                            reasoning: reasoning.cloned().unwrap_or_default(),
                            agent: String::new(),
                            model: None,
                        },
                    );
                }
            }
        }
    };
    for t in tests {
        add(t);
        t.runs.iter().for_each(&mut add);
    }
    grades
}

/// Every `claims: verified` extraction `tests` (and their runs) recorded, by its cache key.
pub fn claims_of(tests: &mut dyn Iterator<Item = &TestResult>) -> BTreeMap<String, Vec<Claim>> {
    let mut prior = BTreeMap::new();
    let mut add = |t: &TestResult| {
        for a in t.assertions.iter().filter(|a| a.kind == "claims") {
            if let (Some(claims), [key]) = (&a.claims, a.grade_keys.as_slice()) {
                prior.insert(key.clone(), claims.clone());
            }
        }
    };
    for t in tests {
        add(t);
        t.runs.iter().for_each(&mut add);
    }
    prior
}

impl Reuse {
    /// The baseline's run `run` (1-based) of `spec`, which has `runs` runs, and how it is
    /// taken, when it may be reused apart from the fingerprint.
    ///
    /// # Errors
    /// [`NotReused`]: why the baseline's run can not stand for this one.
    pub fn candidate(&self, spec: &TestSpec, run: u32, runs: u32) -> Result<Taken<'_>, NotReused> {
        let Some(test) = self.tests.get(&TestKey::of_spec(spec)) else {
            return Err(NotReused::NoTest {
                baseline: self.from.clone(),
            });
        };
        let baseline_runs = test.runs_in_all();
        if baseline_runs != runs {
            return Err(NotReused::Runs {
                baseline: baseline_runs,
                now: runs,
            });
        }
        let Some(recorded) = test.run_numbered(run) else {
            return Err(NotReused::NoRun(run));
        };
        let cassette = recorded
            .model_traffic
            .as_ref()
            .and_then(|t| t.cassette.clone());
        let replay = match (needs_the_run(spec), cassette) {
            (None, _) => None,
            (Some(_), Some(cassette)) if self.cassettes.is_some() => Some(cassette),
            (Some(why), _) => return Err(why),
        };
        if recorded.transcript.is_none() {
            return Err(NotReused::NoTranscript);
        }
        if let Some(error) = &recorded.error {
            return Err(NotReused::Errored(error.clone()));
        }
        if recorded.fingerprint.is_none() {
            return Err(NotReused::NoFingerprint);
        }
        Ok(match replay {
            Some(cassette) => Taken::Replay(recorded, cassette),
            None => Taken::Transcript(recorded),
        })
    }
}

/// Why a baseline's run can not be reused for a run of this one (results JSON's
/// `not_reused`, in these words).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotReused {
    /// The baseline does not have the test.
    #[error("the baseline {baseline} has no such test")]
    NoTest {
        /// The baseline's file or artifact.
        baseline: String,
    },
    /// The baseline ran the test another number of times.
    #[error("the baseline ran it {baseline} times, this run {now}")]
    Runs {
        /// Runs in the baseline.
        baseline: u32,
        /// Runs now.
        now: u32,
    },
    /// The baseline lacks this run (1-based).
    #[error("the baseline has no run {0}")]
    NoRun(u32),
    /// An assertion needs the workspace and there is no cassette to rebuild it from.
    #[error(
        "its assertion at line {line} needs the workspace after the run, which does not travel with results, and the baseline recorded no model exchange to replay it from (run it with --record-model)"
    )]
    NeedsWorkspace {
        /// The assertion's line in the test file.
        line: u32,
    },
    /// A mock MCP server's `expect:` needs the calls it receives, and there is no cassette
    /// to replay the run from.
    #[error(
        "its `expect:` at line {line} needs the calls the mock MCP server receives, which do not travel with results, and the baseline recorded no model exchange to replay it from (run it with --record-model)"
    )]
    NeedsMockCalls {
        /// The `expect:` line in the test file.
        line: u32,
    },
    /// The baseline's run has no transcript.
    #[error("the baseline recorded no transcript for it")]
    NoTranscript,
    /// The baseline's run ended in an error.
    #[error("the baseline's run ended in an error ({0})")]
    Errored(String),
    /// The baseline's run has no fingerprint.
    #[error("the baseline recorded no fingerprint for it")]
    NoFingerprint,
}

/// Why a run of `spec` must be replayed rather than reused as is, if it must: the first
/// assertion applying to its variant that needs the workspace after the run, else the
/// first `expect:` of a `mock:` MCP server, which needs the calls the mock receives
/// (neither travels with results).
pub fn needs_the_run(spec: &TestSpec) -> Option<NotReused> {
    let assertion = spec
        .assertions
        .iter()
        .filter(|a| crate::assertions::applies_to(a, spec.variant_name()))
        .find(|a| needs_workspace_after(&a.kind))
        .map(|a| NotReused::NeedsWorkspace { line: a.line });
    assertion.or_else(|| {
        spec.mcp_mocks
            .values()
            .flat_map(|m| m.tools.values())
            .filter(|t| !t.expect.is_empty())
            .map(|t| t.expect_line)
            .min()
            .map(|line| NotReused::NeedsMockCalls { line })
    })
}

/// Whether an assertion of `kind` reads the workspace after the run. Every kind is named,
/// so that a new kind must say.
pub(super) fn needs_workspace_after(kind: &AssertionKind) -> bool {
    match kind {
        AssertionKind::FileExists { .. }
        | AssertionKind::FileAbsent { .. }
        | AssertionKind::FileContains { .. }
        | AssertionKind::JsonFile { .. }
        | AssertionKind::Wrote { .. }
        | AssertionKind::Verify(_) => true,
        AssertionKind::Tool(_)
        | AssertionKind::Review(_)
        | AssertionKind::ExitCode { .. }
        | AssertionKind::OutputContains { .. }
        | AssertionKind::OutputEquals { .. }
        | AssertionKind::ErrorContains { .. }
        | AssertionKind::Ran { .. }
        | AssertionKind::NotRan { .. }
        | AssertionKind::RunCount { .. }
        | AssertionKind::CommandSucceeded { .. }
        | AssertionKind::Budget(_)
        | AssertionKind::Skill(_)
        | AssertionKind::Routing(_)
        | AssertionKind::Conversation(_)
        // The files changed travel with the result (`files`), and so do the claims read
        // (`claims`, keyed by `grade_keys`).
        | AssertionKind::Claims => false,
    }
}

/// The fingerprint of `spec` on a fresh workspace copy with its variant applied (the copy
/// is removed after).
///
/// # Errors
/// [`NoFingerprint`]: the copy, its variant or the fingerprint failed.
pub(super) async fn fingerprint_of_copy(
    spec: &TestSpec,
    agent: &str,
    base_url: Option<&str>,
) -> Result<crate::run::fingerprint::Fingerprint, NoFingerprint> {
    let spec = spec.clone();
    let agent = agent.to_owned();
    let base_url = base_url.map(str::to_owned);
    tokio::task::spawn_blocking(move || {
        let workspace = Workspace::create(&spec.workspace_dir(), spec.workspace_git)?;
        if let Some(variant) = &spec.variant {
            workspace
                .apply_variant(&variant.remove, &variant.add)
                .map_err(|source| NoFingerprint::Variant {
                    name: variant.name.clone(),
                    source,
                })?;
        }
        Ok(crate::run::fingerprint::of(
            &spec,
            &agent,
            base_url.as_deref(),
            workspace.path(),
        )?)
    })
    .await?
}

/// Why a run's fingerprint could not be taken (the run then is not reused).
#[derive(Debug, thiserror::Error)]
pub enum NoFingerprint {
    /// The workspace copy failed.
    #[error(transparent)]
    Workspace(#[from] crate::workspace::WorkspaceError),
    /// The test's variant could not be applied to the copy.
    #[error("variant `{name}`: {source}")]
    Variant {
        /// The variant.
        name: String,
        /// Why.
        #[source]
        source: crate::workspace::VariantError,
    },
    /// Hashing the copy failed.
    #[error(transparent)]
    Fingerprint(#[from] crate::run::fingerprint::FingerprintError),
    /// The blocking task did not finish.
    #[error("the fingerprint's task failed: {0}")]
    Task(#[from] tokio::task::JoinError),
}

/// A run taken from the baseline: today's assertions evaluated on its `recorded`
/// transcript and file list, its reviews graded through the baseline's grades and the
/// cache. `usage` is what grading spent now; the recorded run's is in `reused`.
pub(super) async fn reuse_run(
    spec: &TestSpec,
    ctx: &TestContext<'_>,
    reuse: &crate::run::reuse::Reuse,
    recorded: &TestResult,
    fingerprint: crate::run::fingerprint::Fingerprint,
) -> TestResult {
    let started = Instant::now();
    let Some(transcript) = recorded.transcript.clone() else {
        // [`crate::run::reuse::Reuse::candidate`] took only runs with a transcript.
        return not_run(
            spec,
            ErrorKind::Setup,
            "the baseline recorded no transcript",
        );
    };
    let dialog = recorded.dialog.as_ref();
    let checked = check_transcript(spec, (&transcript, dialog), ctx.judge, ctx.cancel).await;
    // Nothing spent unless a review was graded now.
    let mut grading = crate::transcript::Usage {
        cost_usd: Some(0.0),
        ..Default::default()
    };
    grading.add(&checked.grading);
    TestResult {
        status: checked.status,
        duration_ms: started.elapsed().as_millis() as u64,
        usage: Some(grading),
        error: checked.error,
        error_kind: checked.error_kind,
        assertions: checked.assertions,
        agent: recorded.agent.clone(),
        transcript: Some(transcript),
        files: recorded.files.clone(),
        fingerprint: Some(fingerprint),
        reused: Some(crate::verdict::results::Reused {
            from: reuse.from.clone(),
            aptitude_version: reuse.aptitude_version.clone(),
            duration_ms: recorded.duration_ms,
            usage: recorded.usage.clone(),
            replayed: false,
        }),
        ..not_run(spec, ErrorKind::Setup, "")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(json: serde_json::Value) -> TestResult {
        let mut base = serde_json::json!({
            "name": "greets", "file": "t.aptitude.yaml", "status": "passed", "duration_ms": 1,
            "usage": null, "error": null, "assertions": []
        });
        if let (Some(b), Some(extra)) = (base.as_object_mut(), json.as_object()) {
            b.extend(extra.clone());
        }
        serde_json::from_value(base).unwrap()
    }

    fn spec(yaml: &str) -> TestSpec {
        crate::spec::load_str(std::path::Path::new("t.aptitude.yaml"), yaml).unwrap()
    }

    #[test]
    fn a_mock_with_expect_needs_the_run_and_one_without_does_not() {
        let with = |expect: &str| {
            spec(&format!(
                "name: t\nprompt: p\nmcp_servers:\n  m:\n    mock:\n      tools:\n        t: {{reply: ok{expect}}}\nassertions:\n  - tool: mcp__m__t\n"
            ))
        };
        assert_eq!(needs_the_run(&with("")), None);
        assert_eq!(
            needs_the_run(&with(", expect: {x: 1}")),
            Some(NotReused::NeedsMockCalls { line: 7 })
        );
        let both = spec(
            "name: t\nprompt: p\nmcp_servers:\n  m:\n    mock:\n      tools:\n        t: {reply: ok, expect: {x: 1}}\nassertions:\n  - file_exists: a.txt\n",
        );
        assert_eq!(
            needs_the_run(&both),
            Some(NotReused::NeedsWorkspace { line: 9 }),
            "a workspace assertion is named first"
        );
    }

    const TRANSCRIPT: &str = r#"{"format": "claude-stream-json", "outcome": {"status": "completed"},
        "tool_calls": [], "final_text": "hi", "usage": {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}, "runs": 1, "warnings": []}"#;

    fn recorded() -> TestResult {
        let mut t = result(serde_json::json!({
            "fingerprint": {"sha256": "f", "parts": {}},
        }));
        t.transcript = Some(serde_json::from_str(TRANSCRIPT).unwrap());
        t
    }

    #[test]
    fn a_run_is_a_candidate_only_with_a_clean_transcript_and_no_workspace_checks() {
        let plain = spec("name: greets\nprompt: p\nassertions:\n  - tool: Read\n");
        let reuse = |t: TestResult| {
            Reuse::new(
                crate::verdict::results::Results::new(vec![t], 1),
                "b.json".into(),
            )
        };
        assert!(reuse(recorded()).candidate(&plain, 1, 1).is_ok());

        let mut no_transcript = recorded();
        no_transcript.transcript = None;
        assert_eq!(
            reuse(no_transcript)
                .candidate(&plain, 1, 1)
                .unwrap_err()
                .to_string(),
            "the baseline recorded no transcript for it"
        );
        let mut errored = recorded();
        errored.error = Some("timed out".into());
        assert!(
            reuse(errored)
                .candidate(&plain, 1, 1)
                .unwrap_err()
                .to_string()
                .contains("timed out")
        );
        assert_eq!(
            reuse(recorded())
                .candidate(&plain, 1, 3)
                .unwrap_err()
                .to_string(),
            "the baseline ran it 1 times, this run 3"
        );
        let other = spec("name: other\nprompt: p\nassertions:\n  - tool: Read\n");
        assert_eq!(
            reuse(recorded())
                .candidate(&other, 1, 1)
                .unwrap_err()
                .to_string(),
            "the baseline b.json has no such test"
        );
        let files = spec(
            "name: greets\nprompt: p\nassertions:\n  - tool: Read\n  - verify: {run: make test}\n",
        );
        assert!(
            reuse(recorded())
                .candidate(&files, 1, 1)
                .unwrap_err()
                .to_string()
                .starts_with("its assertion at line 5 needs the workspace")
        );
    }

    #[test]
    fn recorded_grades_answer_by_their_cache_keys() {
        let single = serde_json::json!({
            "kind": "stdout", "description": "r", "status": "pass", "line": 3, "detail": null,
            "score": 8, "reasoning": "fine", "grade_keys": ["k1"]
        });
        let voted = serde_json::json!({
            "kind": "stdout", "description": "r", "status": "pass", "line": 4, "detail": null,
            "score": 7, "grade_keys": ["v1", "v2"],
            "votes": [{"score": 7, "reasoning": "a"}, {"problem": "no reply"}]
        });
        let t = result(serde_json::json!({"assertions": [single, voted]}));
        let grades = Reuse::new(
            crate::verdict::results::Results::new(vec![t], 1),
            "b".into(),
        )
        .prior_grades();
        assert_eq!(
            grades.keys().collect::<Vec<_>>(),
            ["k1", "v1"],
            "a vote that did not grade is no grade"
        );
        assert_eq!(
            (grades["k1"].score, grades["k1"].reasoning.as_str()),
            (8, "fine")
        );
        assert_eq!(grades["v1"].score, 7);
    }

    #[test]
    fn recorded_claims_answer_by_their_cache_key() {
        let claims = serde_json::json!({
            "kind": "claims", "description": "c", "status": "fail", "line": 3, "detail": null,
            "grade_keys": ["c1"],
            "claims": [{"kind": "command", "text": "ran make", "command": "make"}]
        });
        let none = serde_json::json!({
            "kind": "claims", "description": "c", "status": "pass", "line": 4, "detail": null,
            "grade_keys": ["c2"], "claims": []
        });
        let failed = serde_json::json!({
            "kind": "claims", "description": "c", "status": "error", "line": 5,
            "detail": "the claims could not be read", "grade_keys": ["c3"]
        });
        let review = serde_json::json!({
            "kind": "stdout", "description": "r", "status": "pass", "line": 6, "detail": null,
            "score": 8, "grade_keys": ["k1"]
        });
        let mut repeated = result(serde_json::json!({"name": "again"}));
        repeated.runs = vec![result(serde_json::json!({"assertions": [none]}))];
        let t = result(serde_json::json!({"assertions": [claims, failed, review]}));
        let reuse = Reuse::new(
            crate::verdict::results::Results::new(vec![t, repeated], 1),
            "b".into(),
        );
        let prior = reuse.prior_claims();
        assert_eq!(
            prior.keys().collect::<Vec<_>>(),
            ["c1", "c2"],
            "a failed extraction read no claims; a review is no extraction"
        );
        assert_eq!(prior["c1"][0].command.as_deref(), Some("make"));
        assert!(prior["c2"].is_empty(), "claiming nothing is recorded too");
        assert_eq!(
            reuse.prior_grades().keys().collect::<Vec<_>>(),
            ["k1"],
            "an extraction is no grade"
        );
    }

    #[test]
    fn a_reused_result_is_marked_in_every_format() {
        let mut t = recorded();
        t.reused = Some(crate::verdict::results::Reused {
            replayed: false,
            from: "base.json".into(),
            aptitude_version: "0.1.0".into(),
            duration_ms: 5,
            usage: None,
        });
        let results = crate::verdict::results::Results::new(vec![t], 1);
        assert_eq!(results.summary.reused, 1);
        let terminal = crate::report::terminal::render_test(&results.tests[0]);
        assert!(terminal.contains("↺ reused"), "{terminal}");
        assert!(crate::report::terminal::render_summary(&results.summary).contains("↺ 1 reused"));
        let md = crate::report::markdown::render(&results, &Default::default());
        assert!(md.contains("greets ↺ reused"), "{md}");
        assert!(md.contains("↺ 1 reused (the agent did not run)"), "{md}");
        let html = crate::report::html::render(&results).unwrap();
        assert!(html.contains("↺ reused from base.json"));
        let junit = crate::report::junit::render(&results).unwrap();
        assert!(
            junit.contains(r#"<property name="reused" value="base.json"/>"#),
            "{junit}"
        );
        let json = serde_json::to_value(&results).unwrap();
        assert_eq!(json["tests"][0]["reused"]["from"], "base.json");
        assert_eq!(json["summary"]["reused"], 1);
    }
}
