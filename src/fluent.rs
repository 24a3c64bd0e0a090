//! The fluent Rust API (seeds 000, 001): the same assertions as the YAML files, written in
//! Rust tests against a [`Transcript`].
//!
//! ```no_run
//! use std::sync::Arc;
//! use aptitude::agent::claude::Claude;
//! use aptitude::agent::{AgentSettings, CliAgent};
//! use aptitude::fluent::expect;
//!
//! let output = aptitude::transcript::parse_file("session.jsonl".as_ref()).unwrap();
//!
//! // Tool calls: panics with what was seen when the assertion fails.
//! expect(&output).tool("Read").not_called().with_param("file_path", "*.env").to_pass();
//! expect(&output).tool("Bash").called().with_param("command", "cargo test*").to_pass();
//!
//! // The final answer, graded by an LLM judge through an agent adapter.
//! let grader = Arc::new(CliAgent::new(Arc::new(Claude::default()), AgentSettings::default()));
//! expect(&output)
//!     .with_grader(grader)
//!     .stdout()
//!     .review("should state the new value (43)")
//!     .with_threshold(8)
//!     .with_model("claude-sonnet-4-5")
//!     .to_pass();
//!
//! // Or get the result instead of panicking.
//! let result = expect(&output).tool("Bash").called().times(2).evaluate();
//! println!("{}: {:?}", result.description, result.status);
//! ```
//!
//! Parameter values follow the YAML rules (`docs/yaml-api.md`): a string is a bare pattern
//! (literal, glob or regex); `{"glob": …}`, `{"regex": …}`, `{"equals": …}`,
//! `{"contains": …}` are explicit; other values compare as JSON. An invalid pattern panics
//! at the call that adds it, naming the pattern.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::agent::Agent;
use crate::assertions::judge::{Judge, JudgeConfig};
use crate::assertions::{self, Evidence};
use crate::spec::pattern::{MatcherError, NameMatcher, SkillMatcher, ValueMatcher};
use crate::spec::{
    Assertion, AssertionKind, CallIndex, DEFAULT_THRESHOLD, ParamMatcher, ReviewAssertion, Scope,
    TestSpec, ToolAssertion,
};
use crate::transcript::Transcript;
use crate::verdict::results::{AssertionResult, AssertionStatus};

/// Starts an expectation on what an agent did.
pub fn expect(output: &Transcript) -> Expectation<'_> {
    Expectation {
        output,
        grader: None,
        task: String::new(),
    }
}

/// Expectations on one transcript.
#[derive(Clone)]
pub struct Expectation<'a> {
    output: &'a Transcript,
    grader: Option<Arc<dyn Agent>>,
    task: String,
}

impl<'a> Expectation<'a> {
    /// Sets the agent whose `grade` call judges `stdout` reviews.
    pub fn with_grader(mut self, agent: Arc<dyn Agent>) -> Self {
        self.grader = Some(agent);
        self
    }

    /// Sets the task prompt given to the agent, shown to the judge as context.
    pub fn with_task(mut self, task: &str) -> Self {
        self.task = task.to_owned();
        self
    }

    /// An assertion on the final answer.
    pub fn stdout(&self) -> StdoutAssertion<'a> {
        StdoutAssertion {
            output: self.output,
            grader: self.grader.clone(),
            task: self.task.clone(),
            review: None,
            threshold: DEFAULT_THRESHOLD,
            model: None,
            votes: None,
            cache: true,
        }
    }

    /// An assertion on the calls of a tool (any alias, any case; `*` for a glob).
    ///
    /// # Panics
    /// When `name` is a glob that does not compile.
    pub fn tool(&self, name: &str) -> ToolExpectation<'a> {
        let tool = NameMatcher::new(name).unwrap_or_else(|e| panic!("aptitude: {e}"));
        ToolExpectation {
            output: self.output,
            skill: None,
            assertion: ToolAssertion {
                tool,
                called: true,
                params: Vec::new(),
                call_count: None,
                min_calls: None,
                max_calls: None,
                called_after: None,
                called_before: None,
                positional: Vec::new(),
                scope: Scope::All,
            },
        }
    }
}

impl<'a> Expectation<'a> {
    /// An assertion on the calls of a skill (the YAML `skill:`): a tool assertion on the
    /// `Skill` tool counting the calls that invoke `name` (`deploy`, `plugin:deploy`, `*`
    /// globs); the same methods refine it.
    ///
    /// # Panics
    /// When `name` is a glob that does not compile.
    pub fn skill(&self, name: &str) -> ToolExpectation<'a> {
        let skill = SkillMatcher::new(name).unwrap_or_else(|e| panic!("aptitude: {e}"));
        ToolExpectation {
            skill: Some(skill),
            ..self.tool(crate::spec::tools::SKILL_TOOL)
        }
    }
}

/// Converts a JSON parameter value into a matcher, by the YAML rules (the loader's own
/// [`ValueMatcher::from_json`]).
///
/// # Errors
/// When a pattern does not compile, or an object is not one of the explicit forms.
pub fn value_matcher(value: &Value) -> Result<ValueMatcher, MatcherError> {
    ValueMatcher::from_json(value)
}

fn params(map: &Value) -> Vec<ParamMatcher> {
    let Value::Object(entries) = map else {
        panic!("aptitude: parameters must be a JSON object, found {map}");
    };
    entries
        .iter()
        .map(|(key, value)| ParamMatcher {
            key: key.clone(),
            matcher: value_matcher(value)
                .unwrap_or_else(|e| panic!("aptitude: parameter `{key}`: {e}")),
        })
        .collect()
}

/// A tool assertion being built (the YAML `tool:` assertion's fields as methods).
#[derive(Debug, Clone)]
pub struct ToolExpectation<'a> {
    output: &'a Transcript,
    /// Set for a skill assertion ([`Expectation::skill`]).
    skill: Option<SkillMatcher>,
    assertion: ToolAssertion,
}

impl ToolExpectation<'_> {
    /// The tool was called (the default).
    pub fn called(mut self) -> Self {
        self.assertion.called = true;
        self
    }

    /// The tool was not called (with the parameters given, if any).
    pub fn not_called(mut self) -> Self {
        self.assertion.called = false;
        self
    }

    /// Calls must match every parameter of this JSON object.
    ///
    /// # Panics
    /// When a value is an invalid pattern or `params` is not an object.
    pub fn with_params(mut self, params_json: Value) -> Self {
        self.assertion.params.extend(params(&params_json));
        self
    }

    /// Calls must match this parameter (a bare pattern, see the module docs).
    ///
    /// # Panics
    /// When the pattern does not compile.
    pub fn with_param(mut self, key: &str, pattern: &str) -> Self {
        let matcher = ValueMatcher::bare(pattern)
            .unwrap_or_else(|e| panic!("aptitude: parameter `{key}`: {e}"));
        self.assertion.params.push(ParamMatcher {
            key: key.to_owned(),
            matcher,
        });
        self
    }

    /// Exactly `n` matching calls.
    pub fn times(mut self, n: u32) -> Self {
        self.assertion.call_count = Some(n);
        self
    }

    /// At least `n` matching calls.
    pub fn at_least(mut self, n: u32) -> Self {
        self.assertion.min_calls = Some(n);
        self
    }

    /// At most `n` matching calls.
    pub fn at_most(mut self, n: u32) -> Self {
        self.assertion.max_calls = Some(n);
        self
    }

    /// The first matching call comes after the first call of `tool`.
    ///
    /// # Panics
    /// When `tool` is a glob that does not compile.
    pub fn called_after(mut self, tool: &str) -> Self {
        self.assertion.called_after =
            Some(NameMatcher::new(tool).unwrap_or_else(|e| panic!("aptitude: {e}")));
        self
    }

    /// The first matching call comes before the first call of `tool`.
    ///
    /// # Panics
    /// When `tool` is a glob that does not compile.
    pub fn called_before(mut self, tool: &str) -> Self {
        self.assertion.called_before =
            Some(NameMatcher::new(tool).unwrap_or_else(|e| panic!("aptitude: {e}")));
        self
    }

    /// The tool's `n`-th call (1-based) matches these parameters.
    ///
    /// # Panics
    /// As [`ToolExpectation::with_params`].
    pub fn nth_call_params(mut self, n: u32, params_json: Value) -> Self {
        self.assertion
            .positional
            .push((CallIndex::Nth(n.max(1)), params(&params_json)));
        self
    }

    /// The tool's last call matches these parameters.
    ///
    /// # Panics
    /// As [`ToolExpectation::with_params`].
    pub fn last_call_params(mut self, params_json: Value) -> Self {
        self.assertion
            .positional
            .push((CallIndex::Last, params(&params_json)));
        self
    }

    /// Only the main agent's calls count (subagents' are ignored).
    pub fn main_agent_only(mut self) -> Self {
        self.assertion.scope = Scope::Main;
        self
    }

    /// Evaluates the assertion.
    pub fn evaluate(&self) -> AssertionResult {
        let assertion = Assertion {
            line: 0,
            column: 0,
            kind: match &self.skill {
                Some(skill) => AssertionKind::Skill(Box::new(crate::spec::SkillAssertion {
                    skill: skill.clone(),
                    tool: self.assertion.clone(),
                })),
                None => AssertionKind::Tool(Box::new(self.assertion.clone())),
            },
            variants: None,
        };
        assertions::evaluate_one(0, &assertion, &Evidence::transcript_only(self.output))
    }

    /// Evaluates the assertion and panics, with what was seen, unless it passed.
    ///
    /// # Panics
    /// When the assertion does not pass.
    pub fn to_pass(&self) {
        require_pass(&self.evaluate());
    }
}

/// A `stdout` review being built (seed 000's `StdoutAssertion`).
#[derive(Clone)]
pub struct StdoutAssertion<'a> {
    output: &'a Transcript,
    grader: Option<Arc<dyn Agent>>,
    task: String,
    review: Option<String>,
    threshold: u8,
    model: Option<String>,
    votes: Option<u32>,
    cache: bool,
}

impl StdoutAssertion<'_> {
    /// The natural-language criteria.
    pub fn review(mut self, criteria: &str) -> Self {
        self.review = Some(criteria.to_owned());
        self
    }

    /// The passing score, 1–10 (default 7); out-of-range values are clamped.
    pub fn with_threshold(mut self, threshold: u8) -> Self {
        self.threshold = threshold.clamp(1, 10);
        self
    }

    /// Grades with `n` independent calls whose median score decides (1–25; out-of-range
    /// values are clamped), as `votes:` in YAML.
    pub fn with_votes(mut self, n: u32) -> Self {
        self.votes = Some(n.clamp(1, crate::spec::MAX_VOTES));
        self
    }

    /// The grading model, passed to the grader.
    pub fn with_model(mut self, model: &str) -> Self {
        self.model = Some(model.to_owned());
        self
    }

    /// The agent that grades (also settable on the expectation).
    pub fn with_grader(mut self, agent: Arc<dyn Agent>) -> Self {
        self.grader = Some(agent);
        self
    }

    /// Grades without reading or writing the grade cache.
    pub fn without_cache(mut self) -> Self {
        self.cache = false;
        self
    }

    /// Grades the final answer; blocks until the judge replies. Without criteria or a
    /// grader the result is an `error`, never a pass.
    pub fn evaluate(&self) -> AssertionResult {
        let Some(criteria) = self.review.clone() else {
            return AssertionResult::new(
                "stdout",
                "stdout review".into(),
                AssertionStatus::Error,
                0,
                Some("no review criteria: call .review(\"…\")".into()),
            );
        };
        let review = ReviewAssertion {
            review: criteria.clone(),
            threshold: self.threshold,
            model: self.model.clone(),
            agent: None,
            votes: self.votes,
        };
        let Some(grader) = self.grader.clone() else {
            return AssertionResult::new(
                "stdout",
                format!(
                    "stdout review: {criteria:?} (threshold: {})",
                    self.threshold
                ),
                AssertionStatus::Error,
                0,
                Some("no grading agent: call .with_grader(agent)".into()),
            );
        };
        let spec = TestSpec {
            file: "fluent".into(),
            name: "fluent".into(),
            description: None,
            prompt: self.task.clone(),
            agent: crate::spec::AgentTarget::new(grader.kind()),
            agents: vec![crate::spec::AgentTarget::new(grader.kind())],
            workspace: None,
            workspace_git: false,
            setup: Vec::new(),
            env: BTreeMap::new(),
            inputs: Vec::new(),
            timeout: None,
            max_turns: None,
            runs: None,
            min_pass: None,
            model: None,
            mcp_servers: Default::default(),
            plugins: Vec::new(),
            assertions: vec![Assertion {
                line: 0,
                column: 0,
                kind: AssertionKind::Review(review),
                variants: None,
            }],
            variants: Vec::new(),
            variant: None,
            shard_runs: None,
        };
        let mut config = JudgeConfig::default();
        if !self.cache {
            config.cache = None;
        }
        let judge = Judge::new(config, [grader]);
        let output = self.output;
        // A private runtime on its own thread: callable from sync tests and from inside
        // another runtime alike.
        let reviews = std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .map(|rt| {
                            rt.block_on(crate::run::grade_reviews(
                                &spec,
                                &judge,
                                output,
                                &CancellationToken::new(),
                            ))
                        })
                })
                .join()
        });
        match reviews {
            Ok(Ok(reviews)) => assertions::evaluate_one(
                0,
                &spec.assertions[0],
                &Evidence {
                    reviews: &reviews,
                    ..Evidence::transcript_only(output)
                },
            ),
            _ => AssertionResult::new(
                "stdout",
                format!("stdout review: {criteria:?}"),
                AssertionStatus::Error,
                0,
                Some("the grading could not be run".into()),
            ),
        }
    }

    /// Grades the final answer and panics, with the score and reasoning, unless it passed.
    ///
    /// # Panics
    /// When the review does not pass (including when it could not be graded).
    pub fn to_pass(&self) {
        require_pass(&self.evaluate());
    }
}

fn require_pass(result: &AssertionResult) {
    if result.status != AssertionStatus::Pass {
        panic!(
            "aptitude: assertion {}: {}\n{}",
            match result.status {
                AssertionStatus::Fail => "failed",
                AssertionStatus::Error => "could not be checked",
                AssertionStatus::Invalid => "does not apply",
                AssertionStatus::Skip => "was skipped",
                AssertionStatus::Pass => "passed",
            },
            result.description,
            result.detail.as_deref().unwrap_or("")
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::parse_reader;

    fn transcript() -> Transcript {
        let lines = [
            r#"{"type":"system","subtype":"init","session_id":"s"}"#,
            r#"{"type":"assistant","session_id":"s","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/p/README.md"}}]}}"#,
            r#"{"type":"assistant","session_id":"s","message":{"id":"m2","content":[{"type":"tool_use","id":"t2","name":"Bash","input":{"command":"cargo test --all"}}]}}"#,
            r#"{"type":"result","subtype":"success","is_error":false,"result":"All tests pass.","session_id":"s"}"#,
        ];
        parse_reader(lines.join("\n").as_bytes()).unwrap()
    }

    #[test]
    fn tool_chain() {
        let t = transcript();
        expect(&t).tool("Read").called().to_pass();
        expect(&t)
            .tool("read_file")
            .not_called()
            .with_param("file_path", "*.env")
            .to_pass();
        expect(&t)
            .tool("Bash")
            .called()
            .times(1)
            .called_after("Read")
            .with_param("command", "cargo test*")
            .to_pass();
        expect(&t)
            .tool("Bash")
            .with_params(serde_json::json!({"command": {"regex": "--all$"}}))
            .last_call_params(serde_json::json!({"command": {"contains": "test"}}))
            .to_pass();
        let r = expect(&t).tool("Write").called().evaluate();
        assert_eq!(r.status, AssertionStatus::Fail);
        assert!(r.detail.unwrap().contains("never called"));
    }

    #[test]
    fn skill_chain() {
        let lines = [
            r#"{"type":"system","subtype":"init","session_id":"s","skills":["greet","ops:deploy"]}"#,
            r#"{"type":"assistant","session_id":"s","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Skill","input":{"skill":"ops:deploy"}}]}}"#,
            r#"{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"s"}"#,
        ];
        let t = parse_reader(lines.join("\n").as_bytes()).unwrap();
        expect(&t).skill("deploy").called().times(1).to_pass();
        expect(&t).skill("greet").not_called().to_pass();
        let r = expect(&t).skill("gone").not_called().evaluate();
        assert_eq!(r.status, AssertionStatus::Error, "{:?}", r.detail);
    }

    #[test]
    #[should_panic(expected = "aptitude: assertion failed: Bash not called")]
    fn to_pass_panics_with_what_was_seen() {
        expect(&transcript()).tool("Bash").not_called().to_pass();
    }

    #[test]
    #[should_panic(expected = "invalid regex")]
    fn invalid_patterns_panic_at_the_call() {
        let _ = expect(&transcript())
            .tool("Bash")
            .with_params(serde_json::json!({"command": {"regex": "("}}));
    }

    #[test]
    fn a_review_without_a_grader_is_an_error_not_a_pass() {
        let t = transcript();
        let r = expect(&t).stdout().review("says the tests pass").evaluate();
        assert_eq!(r.status, AssertionStatus::Error);
        assert!(r.detail.unwrap().contains("with_grader"));
    }

    #[test]
    fn json_values_follow_the_yaml_rules() {
        assert!(matches!(
            value_matcher(&serde_json::json!(3)).unwrap(),
            ValueMatcher::Equals(_)
        ));
        assert!(matches!(
            value_matcher(&serde_json::json!({"glob": "*.rs"})).unwrap(),
            ValueMatcher::Glob { .. }
        ));
        assert!(value_matcher(&serde_json::json!({"regx": "a"})).is_err());
        assert!(value_matcher(&serde_json::json!({"a": 1, "b": 2})).is_err());
    }
}
