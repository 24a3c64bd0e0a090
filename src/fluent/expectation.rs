//! Expectations on what an agent did: [`Expectation`] (what `expect(&…)` returns) and the
//! tool assertion it builds, [`ToolExpectation`], with both spellings of its methods —
//! ours (`called()`, `not_called()`, `to_pass()`, the YAML fields' names) and upstream
//! aptitude's (`to_be_called()`, `not_to_be_called()`, `after`, `before`, `nth_call`).
//! Each is the YAML `tool:` assertion, evaluated by the same code as a test file's.

use std::sync::Arc;

use serde_json::Value;

use super::evaluation::{Evaluation, require_pass};
use super::params::Params;
use super::stdout::StdoutAssertion;
use super::subject::{Subject, TranscriptRef};
use crate::agent::Agent;
use crate::assertions::{self, Evidence};
use crate::spec::pattern::{NameMatcher, SkillMatcher, ValueMatcher};
use crate::spec::{
    Assertion, AssertionKind, CallIndex, ParamMatcher, Scope, SkillAssertion, ToolAssertion,
};
use crate::transcript::ToolCall;

/// Expectations on one subject (upstream's `ExecutionExpectation`).
#[derive(Clone)]
pub struct Expectation<'a> {
    output: TranscriptRef<'a>,
    grader: Option<Arc<dyn Agent>>,
    task: String,
}

impl std::fmt::Debug for Expectation<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Expectation")
            .field("calls", &self.output.tool_calls.len())
            .field("grader", &self.grader.as_ref().map(|g| g.name()))
            .field("task", &self.task)
            .finish()
    }
}

impl<'a> Expectation<'a> {
    /// Expectations on `subject`; its grader and task (when it came from a run) are the
    /// defaults.
    pub fn new<S: Subject + ?Sized>(subject: &'a S) -> Self {
        Expectation {
            output: subject.transcript(),
            grader: subject.grader(),
            task: subject.task().unwrap_or_default().to_owned(),
        }
    }

    /// Sets the agent whose `grade` call judges `stdout` reviews.
    pub fn with_grader(mut self, agent: Arc<dyn Agent>) -> Self {
        self.grader = Some(agent);
        self
    }

    /// Sets the task prompt given to the agent, shown to the judge as context.
    pub fn with_task(mut self, task: &str) -> Self {
        task.clone_into(&mut self.task);
        self
    }

    /// An assertion on the final answer.
    pub fn stdout(&self) -> StdoutAssertion<'a> {
        StdoutAssertion::of(self.output.clone(), self.grader.clone(), &self.task)
    }

    /// An assertion on the calls of a tool: a name (any alias, any case; `*` for a glob)
    /// or a [`super::Tool`].
    ///
    /// # Panics
    /// When `name` is a glob that does not compile.
    #[track_caller]
    pub fn tool(&self, name: impl AsRef<str>) -> ToolExpectation<'a> {
        ToolExpectation {
            output: self.output.clone(),
            skill: None,
            assertion: ToolAssertion {
                tool: name_matcher(name.as_ref()),
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

    /// An assertion on the calls of a skill (the YAML `skill:`): a tool assertion on the
    /// `Skill` tool counting the calls that invoke `name` (`deploy`, `plugin:deploy`, `*`
    /// globs); the same methods refine it.
    ///
    /// # Panics
    /// When `name` is a glob that does not compile.
    #[track_caller]
    pub fn skill(&self, name: &str) -> ToolExpectation<'a> {
        let skill = SkillMatcher::new(name).unwrap_or_else(|e| panic!("aptitude: {e}"));
        ToolExpectation {
            skill: Some(skill),
            ..self.tool(crate::spec::tools::SKILL_TOOL)
        }
    }
}

#[track_caller]
fn name_matcher(name: &str) -> NameMatcher {
    NameMatcher::new(name).unwrap_or_else(|e| panic!("aptitude: {e}"))
}

#[track_caller]
fn matchers(params: &impl Params) -> Vec<ParamMatcher> {
    params
        .matchers()
        .unwrap_or_else(|e| panic!("aptitude: {e}"))
}

/// A tool assertion being built (the YAML `tool:` assertion's fields as methods; upstream's
/// `ToolAssertion`).
#[derive(Debug, Clone)]
pub struct ToolExpectation<'a> {
    output: TranscriptRef<'a>,
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

    /// Calls must match every parameter: a `params!{}` map of patterns or a JSON object
    /// (see [`super::params`]).
    ///
    /// # Panics
    /// When a value is an invalid pattern or a JSON value is not an object.
    #[track_caller]
    pub fn with_params(mut self, params: impl Params) -> Self {
        self.assertion.params.extend(matchers(&params));
        self
    }

    /// Calls must match this parameter (a bare pattern, see [`super::params`]).
    ///
    /// # Panics
    /// When the pattern does not compile.
    #[track_caller]
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

    /// The matching calls come after a call of `tool` (the YAML `called_after`).
    ///
    /// # Panics
    /// When `tool` is a glob that does not compile.
    #[track_caller]
    pub fn called_after(mut self, tool: impl AsRef<str>) -> Self {
        self.assertion.called_after = Some(name_matcher(tool.as_ref()));
        self
    }

    /// The matching calls come before a call of `tool` (the YAML `called_before`).
    ///
    /// # Panics
    /// When `tool` is a glob that does not compile.
    #[track_caller]
    pub fn called_before(mut self, tool: impl AsRef<str>) -> Self {
        self.assertion.called_before = Some(name_matcher(tool.as_ref()));
        self
    }

    /// Upstream's name for [`ToolExpectation::called_after`].
    #[track_caller]
    pub fn after(self, tool: impl AsRef<str>) -> Self {
        self.called_after(tool)
    }

    /// Upstream's name for [`ToolExpectation::called_before`].
    #[track_caller]
    pub fn before(self, tool: impl AsRef<str>) -> Self {
        self.called_before(tool)
    }

    /// The tool's `n`-th call (1-based) matches these parameters.
    ///
    /// # Panics
    /// As [`ToolExpectation::with_params`].
    #[track_caller]
    pub fn nth_call_params(mut self, n: u32, params: impl Params) -> Self {
        self.assertion
            .positional
            .push((CallIndex::Nth(n.max(1)), matchers(&params)));
        self
    }

    /// The tool's last call matches these parameters.
    ///
    /// # Panics
    /// As [`ToolExpectation::with_params`].
    #[track_caller]
    pub fn last_call_params(mut self, params: impl Params) -> Self {
        self.assertion
            .positional
            .push((CallIndex::Last, matchers(&params)));
        self
    }

    /// Only the main agent's calls count (subagents' are ignored).
    pub fn main_agent_only(mut self) -> Self {
        self.assertion.scope = Scope::Main;
        self
    }

    /// Evaluates the assertion as built.
    pub fn evaluate(&self) -> Evaluation {
        let assertion = Assertion {
            line: 0,
            column: 0,
            kind: match &self.skill {
                Some(skill) => AssertionKind::Skill(Box::new(SkillAssertion {
                    skill: skill.clone(),
                    tool: self.assertion.clone(),
                })),
                None => AssertionKind::Tool(Box::new(self.assertion.clone())),
            },
            variants: None,
        };
        assertions::evaluate_one(0, &assertion, &Evidence::transcript_only(&self.output)).into()
    }

    /// Evaluates the assertion that the tool was not called (upstream's
    /// `evaluate_not_called`).
    pub fn evaluate_not_called(&self) -> Evaluation {
        self.clone().not_called().evaluate()
    }

    /// Evaluates the assertion and panics, with what was seen, unless it passed.
    ///
    /// # Panics
    /// When the assertion does not pass.
    #[track_caller]
    pub fn to_pass(&self) {
        require_pass(&self.evaluate());
    }

    /// Panics, with what was seen, unless the tool was called as built (upstream's
    /// `to_be_called`).
    ///
    /// # Panics
    /// When the assertion does not pass.
    #[track_caller]
    pub fn to_be_called(&self) {
        self.clone().called().to_pass();
    }

    /// Panics, with the calls seen, unless the tool was not called as built (upstream's
    /// `not_to_be_called`).
    ///
    /// # Panics
    /// When the assertion does not pass — including when the transcript lost calls, so
    /// that their absence can not be known.
    #[track_caller]
    pub fn not_to_be_called(&self) {
        self.clone().not_called().to_pass();
    }

    /// The tool's `n`-th call (1-based, among all its calls), for assertions on its
    /// parameters (upstream's `nth_call`).
    ///
    /// # Panics
    /// When the tool has fewer than `n` calls (or `n` is 0).
    #[track_caller]
    pub fn nth_call(&self, n: usize) -> NthCallAssertion<'_> {
        let calls = self.calls_of_tool();
        let Some(call) = n.checked_sub(1).and_then(|i| calls.get(i)) else {
            panic!(
                "aptitude: assertion failed: {} call #{n} does not exist ({} calls made)",
                self.assertion.tool.display(),
                calls.len()
            );
        };
        NthCallAssertion {
            call,
            n,
            last: false,
            tool: self,
        }
    }

    /// The tool's last call, for assertions on its parameters (upstream's `last_call`).
    ///
    /// # Panics
    /// When the tool was never called.
    #[track_caller]
    pub fn last_call(&self) -> NthCallAssertion<'_> {
        let calls = self.calls_of_tool();
        let Some(call) = calls.last() else {
            panic!(
                "aptitude: assertion failed: {} was never called",
                self.assertion.tool.display()
            );
        };
        NthCallAssertion {
            call,
            n: calls.len(),
            last: true,
            tool: self,
        }
    }

    /// The calls the positional checks index: every call of the tool (any parameters),
    /// within the scope.
    fn calls_of_tool(&self) -> Vec<&ToolCall> {
        self.output
            .tool_calls
            .iter()
            .filter(|c| self.assertion.scope == Scope::All || c.is_main())
            .filter(|c| self.assertion.tool.matches(&c.canonical))
            .collect()
    }
}

/// One call of a tool, found by [`ToolExpectation::nth_call`] or
/// [`ToolExpectation::last_call`].
#[derive(Debug, Clone)]
pub struct NthCallAssertion<'t> {
    call: &'t ToolCall,
    /// 1-based.
    n: usize,
    last: bool,
    tool: &'t ToolExpectation<'t>,
}

impl NthCallAssertion<'_> {
    /// The call's parameters (canonical keys).
    pub fn params(&self) -> &Value {
        self.call.params()
    }

    /// Its position among the tool's calls, 1-based.
    pub fn index(&self) -> usize {
        self.n
    }

    /// Evaluates whether the call's parameters match `params` (the YAML `nth_call_params`
    /// / `last_call_params`).
    ///
    /// # Panics
    /// When a pattern does not compile.
    #[track_caller]
    pub fn evaluate_params(&self, params: impl Params) -> Evaluation {
        let index = if self.last {
            CallIndex::Last
        } else {
            CallIndex::Nth(u32::try_from(self.n).unwrap_or(u32::MAX))
        };
        let mut check = self.tool.clone();
        check.assertion.params.clear();
        check.assertion.call_count = None;
        check.assertion.min_calls = None;
        check.assertion.max_calls = None;
        check.assertion.called_after = None;
        check.assertion.called_before = None;
        check.assertion.positional = vec![(index, matchers(&params))];
        check.called().evaluate()
    }

    /// Panics, with the call's parameters, unless they match `params`.
    ///
    /// # Panics
    /// When they do not match, or a pattern does not compile.
    #[track_caller]
    pub fn has_params(self, params: impl Params) -> Self {
        require_pass(&self.evaluate_params(params));
        self
    }
}
