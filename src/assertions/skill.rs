//! `skill:` assertions: a tool assertion on the agent's skill tool (Claude Code's `Skill
//! {skill}`), whose calls are the ones that invoke the named skill.
//!
//! Semantics (also in `docs/yaml-api.md`):
//! - A call is the skill's when it is a `Skill` call naming it ([`SkillMatcher`]: `deploy`
//!   also matches a plugin's `my-plugin:deploy`). For `called: true`, counts, order and
//!   positional checks, a call that failed (an unknown or refused skill) is not a use of
//!   the skill; for `called: false` any attempt fails the check.
//! - Never a false pass: when the agent listed the skills it loaded (Claude Code's
//!   `system/init` event, Copilot CLI's `session.skills_loaded`: [`Transcript::skills`]) and the skill is not among them, the
//!   assertion is `error` — `called: false` of a skill that was never there proves nothing.
//!   An agent whose transcript can hold no skill call is `error` too.
//!
//! A routing suite's prompts ([`route`]) read the same evidence to say which skill a run
//! triggered: its first skill call (Claude Code's `Skill`, Gemini CLI's `activate_skill`,
//! Copilot CLI's and opencode's `skill`, Kiro's `disclose_context`), or its first read of a
//! skill's `SKILL.md` (a `Read`, or a shell command naming `…/skills/<name>/SKILL.md`: how
//! Codex and the agents without a skill tool load a skill).

use super::AssertionResult;
use super::AssertionStatus;
use super::Verdict;
use super::tool::{Subject, evaluate_subject};
use crate::spec::SkillAssertion;
use crate::spec::pattern::SkillMatcher;
use crate::spec::routing::{RoutingCase, Stop};
use crate::transcript::{Format, ToolCall, Transcript};

/// At most this many loaded skills are named in an error.
const MAX_NAMED: usize = 20;

/// Evaluates a skill assertion against a transcript: (status, description, detail).
pub(super) fn evaluate(a: &SkillAssertion, transcript: &Transcript) -> Verdict {
    let name = format!("skill {}", a.skill.display());
    let calls = &transcript.tool_calls;
    let of_skill = |c: &ToolCall| is_call_of(&a.skill, c) && (!a.tool.called || !c.is_error);
    let (status, description, detail) = evaluate_subject(
        &a.tool,
        calls,
        &Subject {
            name: name.clone(),
            is_of: &of_skill,
        },
    );
    if !records_skills(transcript.format) {
        return (
            AssertionStatus::Error,
            description,
            Some(format!(
                "a {} transcript has no skill tool calls (the agent has no skill tool aptitude can \
                 record), so `skill:` can get no verdict",
                transcript.format.name()
            )),
        );
    }
    if let Some(loaded) = &transcript.skills
        && !loaded.iter().any(|s| a.skill.matches(s))
    {
        return (
            AssertionStatus::Error,
            description,
            Some(not_loaded(&a.skill, loaded)),
        );
    }
    if status != AssertionStatus::Fail {
        return (status, description, detail);
    }
    let failed: Vec<&ToolCall> = calls
        .iter()
        .filter(|c| c.is_error && is_call_of(&a.skill, c))
        .collect();
    let mut detail = detail.unwrap_or_default();
    if a.tool.called
        && let Some(first) = failed.first()
    {
        detail.push_str(&format!(
            "\n{} of {name} failed and do not count: {}",
            if failed.len() == 1 {
                "1 call".to_owned()
            } else {
                format!("{} calls", failed.len())
            },
            crate::shared::text::truncate(first.output.as_deref().unwrap_or("").trim(), 200)
        ));
    }
    let called = skills_called(calls);
    if !called.is_empty() {
        detail.push_str(&format!("\nskills called: {called}"));
    }
    (status, description, Some(detail))
}

/// The skill a call invokes: a `Skill` call's `skill` (Claude Code, Copilot CLI, Qwen
/// Code) or `name` (Gemini CLI's `activate_skill`, opencode) parameter.
fn skill_of(call: &ToolCall) -> Option<&str> {
    if !crate::spec::tools::same_tool(&call.canonical, crate::spec::tools::SKILL_TOOL) {
        return None;
    }
    ["skill", "name"].iter().find_map(|key| {
        call.params()
            .get(*key)
            .or_else(|| call.input.get(*key))
            .and_then(serde_json::Value::as_str)
    })
}

fn is_call_of(skill: &SkillMatcher, call: &ToolCall) -> bool {
    skill_of(call).is_some_and(|s| skill.matches(s))
}

/// `greet ×1, deploy ×2 (1 failed)`.
fn skills_called(calls: &[ToolCall]) -> String {
    let mut counts: Vec<(&str, usize, usize)> = Vec::new();
    for call in calls {
        let Some(name) = skill_of(call) else {
            continue;
        };
        let failed = usize::from(call.is_error);
        match counts.iter_mut().find(|(n, _, _)| *n == name) {
            Some((_, k, f)) => {
                *k += 1;
                *f += failed;
            }
            None => counts.push((name, 1, failed)),
        }
    }
    counts
        .iter()
        .map(|(n, k, f)| {
            if *f > 0 {
                format!("{n} ×{k} ({f} failed)")
            } else {
                format!("{n} ×{k}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Why a skill that is not among the loaded ones gets no verdict, with the nearest name.
fn not_loaded(skill: &SkillMatcher, loaded: &[String]) -> String {
    let wanted = skill.display();
    let suggestion =
        crate::shared::suggest::did_you_mean(wanted, loaded.iter().map(String::as_str))
            .map(|s| format!(" (did you mean `{s}`?)"))
            .unwrap_or_default();
    let mut names: Vec<&str> = loaded.iter().map(String::as_str).take(MAX_NAMED).collect();
    if loaded.len() > MAX_NAMED {
        names.push("…");
    }
    format!(
        "skill `{wanted}` is not among the skills the agent loaded{suggestion}, so whether it was \
         used can not be checked: is its `SKILL.md` in the workspace's `.claude/skills/<name>/`, \
         or in a plugin listed in `plugins:`? Loaded: {}",
        if names.is_empty() {
            "none".to_owned()
        } else {
            names.join(", ")
        }
    )
}

/// Which skill a run of a routing suite's prompt triggered (results JSON's `routing` of
/// its assertion).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RouteDecision {
    /// The skill triggered: the suite's name for it when it is one of the suite's skills
    /// (`pdf` for a call of `my-plugin:pdf`), else the name the agent used; `None` when the
    /// run triggered no skill.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub triggered: Option<String>,
    /// The call that decided, as `aptitude transcript` shows it (`Skill skill="pdf"`), and
    /// its number among the run's calls; absent when no call showed a skill.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
}

/// The routing of one run of a routing suite's prompt: which skill it triggered, from the
/// first skill evidence among its calls — with `stop: first_call`, its first call alone,
/// whatever the agent managed to do before it was stopped. `pass` when it chose what the
/// prompt expects, `fail` when it chose otherwise (a miss, a false trigger); the suite's
/// verdict is the routing figures' business, not this run's (a routing prompt's status
/// counts apart from ordinary tests' and fails no run by itself); `error` when
/// a suite skill did not load in the run — a skill that was not there can not have been
/// chosen, and counting the run as a miss would blame the description —, and when the
/// transcript lost calls and showed no skill (the lost call may have been the skill's).
/// Whether a skill loaded is read from the agent's own list where it gives one (Claude
/// Code, Copilot CLI: [`Transcript::skills`]), else from the gateway's reading of the
/// requests to the model ([`Transcript::skills_shown`]: no request held its description).
pub(super) fn route(case: &RoutingCase, transcript: &Transcript, line: u32) -> AssertionResult {
    let description = case.expectation();
    let fail = |detail: String| {
        AssertionResult::new(
            "routing",
            description.clone(),
            AssertionStatus::Error,
            line,
            Some(detail),
        )
    };
    if let Some(only) = &transcript.records_only
        && !only.tools.iter().any(|t| {
            crate::spec::tools::same_tool(t, crate::spec::tools::SKILL_TOOL) || t == "Read"
        })
    {
        return fail(format!(
            "{}: no skill call or file read can be seen, so which skill the run chose can not be \
             told (the agent has no skills aptitude can read)",
            only.reason
        ));
    }
    if let Some(loaded) = &transcript.skills {
        let missing: Vec<&str> = case
            .skills
            .iter()
            .filter(|s| SkillMatcher::new(s).is_ok_and(|m| !loaded.iter().any(|l| m.matches(l))))
            .map(String::as_str)
            .collect();
        if let Some(first) = missing.first()
            && let Ok(matcher) = SkillMatcher::new(first)
        {
            let names = missing.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>();
            return fail(format!(
                "{} did not load in this run, so the run measures nothing ({})",
                crate::shared::text::and_list(&names),
                not_loaded(&matcher, loaded)
            ));
        }
    } else if let Some(shown) = &transcript.skills_shown {
        let hidden: Vec<String> = case
            .skills
            .iter()
            .filter(|s| !shown.contains(s))
            .map(|s| format!("`{s}`"))
            .collect();
        if !hidden.is_empty() {
            return fail(format!(
                "{} did not load in this run, so the run measures nothing: no request to the \
                 model held {} description (is its SKILL.md where this agent looks for skills? \
                 docs/agents.md says where each agent does)",
                crate::shared::text::and_list(&hidden),
                if hidden.len() == 1 { "its" } else { "their" }
            ));
        }
    }
    let considered = match case.stop {
        Stop::FirstCall => &transcript.tool_calls[..transcript.tool_calls.len().min(1)],
        Stop::Never => &transcript.tool_calls[..],
    };
    let found = considered
        .iter()
        .enumerate()
        .find_map(|(i, c)| skill_evidence(c).map(|name| (i, c, name)));
    let decision = match found {
        Some((i, call, name)) => RouteDecision {
            triggered: Some(
                case.skills
                    .iter()
                    .find(|s| SkillMatcher::new(s).is_ok_and(|m| m.matches(&name)))
                    .cloned()
                    .unwrap_or(name),
            ),
            evidence: Some(crate::transcript::display::describe_call(i + 1, call)),
        },
        None => {
            if let Some(why) = transcript.lost_tool_calls() {
                return fail(format!(
                    "{why}, so that no skill was triggered can not be told"
                ));
            }
            RouteDecision {
                triggered: None,
                evidence: None,
            }
        }
    };
    let detail = route_detail(case, &decision, considered.first());
    let status = if as_expected(case, decision.triggered.as_deref()) {
        AssertionStatus::Pass
    } else {
        AssertionStatus::Fail
    };
    let description = format!(
        "{description}: chose {}",
        chosen(decision.triggered.as_deref())
    );
    AssertionResult {
        routing: Some(decision),
        ..AssertionResult::new("routing", description, status, line, Some(detail))
    }
}

/// Whether a run that triggered `triggered` chose what `case` expects: its skill, or no
/// skill of the suite (a skill the suite does not list is no trigger of its skills).
pub fn as_expected(case: &RoutingCase, triggered: Option<&str>) -> bool {
    match (&case.expect, triggered) {
        (Some(want), Some(got)) => want == got,
        (Some(_), None) => false,
        (None, Some(got)) => !case.skills.iter().any(|s| s == got),
        (None, None) => true,
    }
}

/// What a run chose, as a routing line says it: the skill, or `none`.
pub fn chosen(triggered: Option<&str>) -> &str {
    triggered.unwrap_or("none")
}

/// `triggered pdf (#1 Skill skill="pdf"): as expected`, `triggered no skill (first call:
/// #1 Read …): a miss`.
fn route_detail(case: &RoutingCase, d: &RouteDecision, first: Option<&ToolCall>) -> String {
    let verdict = match (&case.expect, &d.triggered) {
        (Some(want), Some(got)) if want == got => "as expected",
        (Some(_), None) => "a miss",
        (Some(_), Some(got)) if case.skills.contains(got) => "a miss, and a false trigger",
        (None, Some(got)) if case.skills.contains(got) => "a false trigger",
        (_, Some(_)) => "a skill the suite does not list",
        (None, None) => "as expected",
    };
    let how = match (&d.evidence, first) {
        (Some(e), _) => format!(" ({e})"),
        (None, Some(c)) => format!(
            " (first call: {})",
            crate::transcript::display::describe_call(1, c)
        ),
        (None, None) => " (no tool call)".to_owned(),
    };
    format!(
        "triggered {}{how}: {verdict}",
        d.triggered.as_deref().unwrap_or("no skill")
    )
}

/// The skill a call shows the agent loading: a skill call's name ([`skill_of`]), or the
/// `<name>` of a `…/skills/<name>/SKILL.md` it reads (a `Read`, or a shell command that
/// names the file).
fn skill_evidence(call: &ToolCall) -> Option<String> {
    static SKILL_MD: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        #[expect(
            clippy::expect_used,
            reason = "a constant pattern, compiled in every test run"
        )]
        regex::Regex::new(r"(?i)skills?/([^/\s'\x22`]+)/skill\.md").expect("the pattern compiles")
    });
    if let Some(name) = skill_of(call) {
        return Some(name.trim().trim_start_matches('/').to_owned());
    }
    let text = if crate::spec::tools::same_tool(&call.canonical, "Read") {
        ["file_path", "path", "absolute_path"]
            .iter()
            .find_map(|k| call.params().get(*k).and_then(serde_json::Value::as_str))
            .map(str::to_owned)
    } else if crate::spec::tools::same_tool(&call.canonical, crate::spec::tools::SHELL_TOOL) {
        call.command()
    } else {
        None
    }?;
    SKILL_MD
        .captures(&text)
        .and_then(|c| c.get(1))
        .map(|m| m.as_str().to_owned())
}

/// Whether transcripts of this format can hold skill calls: the agents with a skill tool
/// (Claude Code `Skill`, Qwen Code `skill`, Gemini CLI `activate_skill`, Copilot CLI
/// `skill`, opencode `skill`, Kiro CLI v3 `disclose_context`).
fn records_skills(format: Format) -> bool {
    matches!(
        format,
        Format::KiroKas
            | Format::ClaudeSession
            | Format::ClaudeStreamJson
            | Format::QwenStreamJson
            | Format::QwenSession
            | Format::GeminiStreamJson
            | Format::GeminiSession
            | Format::GeminiChat
            | Format::CopilotJson
            | Format::CopilotSession
            | Format::OpencodeJson
            | Format::OpencodeSession
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assertions::{Evidence, evaluate};
    use crate::spec::load_str;
    use serde_json::json;

    fn call(id: &str, name: &str, input: serde_json::Value, is_error: bool) -> ToolCall {
        ToolCall {
            output: Some(if is_error {
                "Unknown skill: x".into()
            } else {
                "ok".into()
            }),
            is_error,
            ..ToolCall::for_test(id, name, input)
        }
    }

    fn transcript(calls: Vec<ToolCall>, skills: Option<&[&str]>) -> Transcript {
        Transcript {
            skills: skills.map(|s| s.iter().map(|n| (*n).to_owned()).collect()),
            ..Transcript::completed(calls, "done")
        }
    }

    /// (status, detail) of each assertion of `assertions` (YAML list items).
    fn verdicts(assertions: &str, t: &Transcript) -> Vec<(AssertionStatus, String)> {
        let spec = load_str(
            std::path::Path::new("t.aptitude.yaml"),
            &format!("name: t\nprompt: p\nassertions:\n{assertions}"),
        )
        .unwrap();
        evaluate(&spec, &Evidence::transcript_only(t))
            .into_iter()
            .map(|r| (r.status, r.detail.unwrap_or_default()))
            .collect()
    }

    #[test]
    fn skill_calls_count_by_name_plain_or_plugin_qualified() {
        let t = transcript(
            vec![
                call("1", "Read", json!({"file_path": "a"}), false),
                call("2", "Skill", json!({"skill": "greet"}), false),
                call("3", "Skill", json!({"skill": "ops:deploy"}), false),
                call(
                    "4",
                    "Skill",
                    json!({"skill": "ops:deploy", "args": "prod"}),
                    false,
                ),
            ],
            Some(&["greet", "ops:deploy", "other"]),
        );
        let v = verdicts(
            "  - skill: greet\n  - skill: deploy\n    call_count: 2\n  - skill: \"ops:deploy\"\n    params: {args: prod}\n  - skill: other\n    called: false\n  - skill: greet\n    called_after: Read\n  - skill: deploy\n    called_before: Read\n  - skill: other\n",
            &t,
        );
        let statuses: Vec<AssertionStatus> = v.iter().map(|(s, _)| *s).collect();
        use AssertionStatus::{Fail, Pass};
        assert_eq!(
            statuses,
            [Pass, Pass, Pass, Pass, Pass, Fail, Fail],
            "{v:#?}"
        );
        assert!(
            v[6].1.contains("skills called: greet ×1, ops:deploy ×2"),
            "{}",
            v[6].1
        );
    }

    #[test]
    fn a_skill_the_agent_did_not_load_is_an_error_never_a_pass() {
        let t = transcript(
            vec![call("1", "Skill", json!({"skill": "gret"}), true)],
            Some(&["greet", "ops:deploy"]),
        );
        let v = verdicts(
            "  - skill: gret\n  - skill: gret\n    called: false\n  - skill: \"other:deploy\"\n    called: false\n",
            &t,
        );
        for (status, detail) in &v {
            assert_eq!(*status, AssertionStatus::Error, "{detail}");
            assert!(
                detail.contains("not among the skills the agent loaded"),
                "{detail}"
            );
        }
        assert!(v[0].1.contains("did you mean `greet`?"), "{}", v[0].1);
        assert!(v[0].1.contains("Loaded: greet, ops:deploy"), "{}", v[0].1);
    }

    #[test]
    fn a_failed_skill_call_is_not_a_use_but_is_an_attempt() {
        let t = transcript(
            vec![call("1", "Skill", json!({"skill": "greet"}), true)],
            None,
        );
        let v = verdicts(
            "  - skill: greet\n  - skill: greet\n    called: false\n",
            &t,
        );
        assert_eq!(v[0].0, AssertionStatus::Fail);
        assert!(
            v[0].1
                .contains("1 call of skill greet failed and do not count"),
            "{}",
            v[0].1
        );
        assert!(v[0].1.contains("Unknown skill"), "{}", v[0].1);
        assert_eq!(v[1].0, AssertionStatus::Fail, "{}", v[1].1);
    }

    #[test]
    fn other_agents_skill_tools_count_and_agents_without_one_get_no_verdict() {
        let mut t = transcript(vec![], None);
        t.format = Format::GeminiStreamJson;
        let mut activate = call("1", "activate_skill", json!({"name": "greet"}), false);
        activate.canonical = "Skill".into();
        activate.params = Some(json!({"skill": "greet"}));
        t.tool_calls.push(activate);
        let mut opencode = call("2", "skill", json!({"name": "deploy"}), false);
        opencode.canonical = "Skill".into();
        t.tool_calls.push(opencode);
        let v = verdicts("  - skill: greet\n  - skill: deploy\n", &t);
        assert_eq!(v[0].0, AssertionStatus::Pass, "{}", v[0].1);
        assert_eq!(v[1].0, AssertionStatus::Pass, "{}", v[1].1);

        let mut t = transcript(vec![], None);
        t.format = Format::CodexExecJson;
        let v = verdicts("  - skill: greet\n    called: false\n", &t);
        assert_eq!(v[0].0, AssertionStatus::Error);
        assert!(v[0].1.contains("has no skill tool"), "{}", v[0].1);
    }

    #[test]
    fn kiro_v3_records_skills_and_v1_v2_get_no_verdict() {
        let store = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/kiro/stores");
        let v3 =
            crate::transcript::parse_file(&store.join(
                "v3/0123456789abcdef/sess_11111111-2222-3333-4444-555555555555/messages.jsonl",
            ))
            .unwrap();
        let v = verdicts(
            "  - skill: release-checklist\n  - skill: deploy\n    called: false\n",
            &v3,
        );
        assert_eq!(v[0].0, AssertionStatus::Pass, "{}", v[0].1);
        assert_eq!(v[1].0, AssertionStatus::Pass, "{}", v[1].1);
        let v2 = crate::transcript::parse_file(
            &store.join("v2/cli/5b1c0d2e-0000-4000-8000-000000000001.jsonl"),
        )
        .unwrap();
        let v = verdicts("  - skill: deploy\n    called: false\n", &v2);
        assert_eq!(v[0].0, AssertionStatus::Error, "{}", v[0].1);
    }

    /// A routing case of the suite `[pdf, docx]` expecting `expect`.
    fn case(expect: Option<&str>, stop: Stop) -> RoutingCase {
        RoutingCase {
            suite: "r".into(),
            skills: vec!["pdf".into(), "docx".into()],
            prompt: 1,
            expect: expect.map(str::to_owned),
            near_miss_for: Vec::new(),
            stop,
        }
    }

    fn shell(id: &str, name: &str, command: &str) -> ToolCall {
        let mut c = call(id, name, json!({"cmd": command}), false);
        c.canonical = "Bash".into();
        c.params = Some(json!({"command": command}));
        c
    }

    /// Each agent's way of loading a skill is read: a skill call (a plugin's qualified
    /// name counts as the suite's skill), a `Read` of its `SKILL.md`, a shell command that
    /// prints it (Codex).
    #[test]
    fn the_first_skill_evidence_decides_on_every_agent() {
        let triggered = |calls: Vec<ToolCall>, stop| {
            let t = transcript(calls, None);
            let r = route(&case(Some("pdf"), stop), &t, 4);
            assert_ne!(r.status, AssertionStatus::Error, "{:?}", r.detail);
            assert_eq!(r.line, 4);
            r.routing.unwrap().triggered
        };
        let skill = |name: &str| call("1", "Skill", json!({"skill": name}), false);
        assert_eq!(
            triggered(vec![skill("pdf")], Stop::FirstCall).as_deref(),
            Some("pdf")
        );
        assert_eq!(
            triggered(vec![skill("docs:pdf")], Stop::FirstCall).as_deref(),
            Some("pdf")
        );
        assert_eq!(
            triggered(vec![skill("zip")], Stop::FirstCall).as_deref(),
            Some("zip"),
            "a skill the suite does not list keeps its name"
        );
        let read = call(
            "1",
            "read_file",
            json!({"file_path": "/ws/.claude/skills/docx/SKILL.md"}),
            false,
        );
        let mut read = read;
        read.canonical = "Read".into();
        assert_eq!(
            triggered(vec![read], Stop::FirstCall).as_deref(),
            Some("docx")
        );
        let codex = shell(
            "1",
            "exec_command",
            "sed -n '1,200p' .agents/skills/pdf/SKILL.md",
        );
        assert_eq!(
            triggered(vec![codex], Stop::FirstCall).as_deref(),
            Some("pdf")
        );
        // With stop: first_call only the first call counts; with never, the first evidence.
        let ls = shell("1", "exec_command", "ls");
        let later = vec![ls, skill("pdf")];
        assert_eq!(triggered(later.clone(), Stop::FirstCall), None);
        assert_eq!(triggered(later, Stop::Never).as_deref(), Some("pdf"));
        assert_eq!(triggered(vec![], Stop::FirstCall), None);
    }

    /// The detail says what was decided and whether it was right.
    #[test]
    fn the_detail_names_misses_and_false_triggers() {
        let detail = |expect, calls| {
            route(&case(expect, Stop::FirstCall), &transcript(calls, None), 1)
                .detail
                .unwrap_or_default()
        };
        let pdf = || vec![call("1", "Skill", json!({"skill": "pdf"}), false)];
        assert!(detail(Some("pdf"), pdf()).ends_with(": as expected"));
        assert!(detail(Some("docx"), pdf()).ends_with("a miss, and a false trigger"));
        assert!(detail(None, pdf()).ends_with("a false trigger"));
        let d = detail(Some("pdf"), vec![]);
        assert_eq!(d, "triggered no skill (no tool call): a miss");
    }

    /// A skill of the suite that the agent did not load makes the run `error`, never a
    /// miss; so does a transcript that lost calls and shows no skill.
    #[test]
    fn a_skill_that_did_not_load_is_an_error_never_a_miss() {
        let t = transcript(vec![], Some(&["pdf", "other"]));
        let r = route(&case(Some("pdf"), Stop::FirstCall), &t, 1);
        assert_eq!(r.status, AssertionStatus::Error);
        assert!(r.routing.is_none());
        let detail = r.detail.unwrap_or_default();
        assert!(
            detail.starts_with("`docx` did not load in this run"),
            "{detail}"
        );
        let t = transcript(vec![], Some(&["pdf", "plugin:docx"]));
        let r = route(&case(Some("pdf"), Stop::FirstCall), &t, 1);
        assert_eq!(
            r.status,
            AssertionStatus::Fail,
            "judged, a miss: {:?}",
            r.detail
        );

        let mut lost = transcript(vec![], None);
        let mut log = crate::transcript::WarningLog::default();
        log.warn_lost(3, "not JSON");
        lost.absorb_warnings(log, None);
        let r = route(&case(Some("pdf"), Stop::FirstCall), &lost, 1);
        assert_eq!(r.status, AssertionStatus::Error, "{:?}", r.detail);
    }

    /// An agent whose transcript can show no skill call and no read (Aider) gets no
    /// routing verdict: `error`, never a run that "triggered no skill".
    #[test]
    fn an_agent_without_skills_gets_no_routing_verdict() {
        let mut t = transcript(vec![], None);
        t.records_only = Some(crate::transcript::RecordsOnly::aider());
        let r = route(&case(Some("pdf"), Stop::FirstCall), &t, 1);
        assert_eq!(r.status, AssertionStatus::Error);
        assert!(r.routing.is_none());
        assert!(
            r.detail
                .unwrap_or_default()
                .contains("aider records no shell commands"),
        );
    }

    /// On an agent that does not list its skills, a suite skill whose description no
    /// request to the model held did not load: `error`; all shown, the run is judged.
    #[test]
    fn a_skill_the_model_was_never_shown_is_an_error() {
        let mut t = transcript(vec![], None);
        t.skills_shown = Some(vec!["pdf".into()]);
        let r = route(&case(Some("pdf"), Stop::FirstCall), &t, 1);
        assert_eq!(r.status, AssertionStatus::Error);
        let detail = r.detail.unwrap_or_default();
        assert!(
            detail.starts_with("`docx` did not load in this run")
                && detail.contains("no request to the model held its description"),
            "{detail}"
        );
        t.skills_shown = Some(vec!["docx".into(), "pdf".into()]);
        let r = route(&case(Some("pdf"), Stop::FirstCall), &t, 1);
        assert_eq!(
            r.status,
            AssertionStatus::Fail,
            "judged, a miss: {:?}",
            r.detail
        );
    }

    /// A run's routing line says what it chose and holds only when that was expected: a
    /// miss and a false trigger are `fail`, never a `✓`.
    #[test]
    fn a_routing_run_passes_only_when_it_chose_as_expected() {
        let line = |expect, calls| {
            let r = route(&case(expect, Stop::FirstCall), &transcript(calls, None), 1);
            (r.status, r.description)
        };
        let skill = |name: &str| vec![call("1", "Skill", json!({"skill": name}), false)];
        assert_eq!(
            line(Some("pdf"), skill("pdf")),
            (
                AssertionStatus::Pass,
                "should trigger pdf: chose pdf".into()
            )
        );
        assert_eq!(
            line(Some("pdf"), vec![]),
            (
                AssertionStatus::Fail,
                "should trigger pdf: chose none".into()
            )
        );
        assert_eq!(
            line(Some("pdf"), skill("docx")),
            (
                AssertionStatus::Fail,
                "should trigger pdf: chose docx".into()
            )
        );
        assert_eq!(
            line(None, skill("pdf")),
            (
                AssertionStatus::Fail,
                "should trigger no skill: chose pdf".into()
            ),
            "a false trigger"
        );
        assert_eq!(line(None, vec![]).0, AssertionStatus::Pass);
        assert_eq!(
            line(None, skill("zip")).0,
            AssertionStatus::Pass,
            "a skill the suite does not list triggers none of its skills"
        );
    }
}
