//! Skills and plugins end to end: the real `claude` (pinned in package.json) against the
//! scripted model, with a skill in the workspace fixture (`.claude/skills/<name>/SKILL.md`)
//! and a plugin directory loaded through `plugins:` (`--plugin-dir`). The model calls the
//! `Skill` tool; the next request it gets holds the skill's body (the real skill loaded),
//! and `skill:` assertions give their verdicts from the recorded calls and the skills
//! Claude Code's `system/init` event lists.

use serde_json::{Value, json};

use crate::agents::{AGENTS, run_on};
use crate::run::{Suite, aptitude_run, test};
use crate::support::model::{ScriptedModel, Turn};

/// A `SKILL.md` with its front matter and a body holding `marker`.
fn skill_md(name: &str, marker: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: Use when asked to {name}.\n---\nReply with the word {marker} and nothing else.\n"
    )
}

/// The statuses of a test's assertions, in file order.
fn statuses(test: &Value) -> Vec<String> {
    test["assertions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["status"].as_str().unwrap_or("").to_owned())
        .collect()
}

/// Whether any request of `marker`'s script after the first holds `needle`.
fn later_request_holds(model: &ScriptedModel, marker: &str, needle: &str) -> bool {
    model
        .requests_for(marker)
        .iter()
        .skip(1)
        .any(|r| r.body.to_string().contains(needle))
}

/// One run of three tests on the real Claude Code: a workspace skill called and passing
/// (with a loaded-but-uncalled skill passing `called: false`), a plugin's skill loaded
/// with `plugins:` and called by its `plugin:skill` name, and a skill that is not there,
/// whose assertions are `error`, never `passed`. The user's own skills (in `HOME`) do not
/// load, and the plugin directory is left as it was.
#[test]
fn skills_from_the_workspace_and_from_plugins_are_called_and_checked() {
    let model = ScriptedModel::start();
    model
        .script(
            "SKILL-WS",
            vec![
                Turn::Tool("Skill", json!({"skill": "greet"})),
                Turn::Text("GREET-BODY".into()),
            ],
        )
        .script(
            "SKILL-PLUGIN",
            vec![
                Turn::Tool("Skill", json!({"skill": "waver:wave"})),
                Turn::Text("WAVE-BODY".into()),
            ],
        )
        .script(
            "SKILL-MISSING",
            vec![
                Turn::Tool("Skill", json!({"skill": "missing"})),
                Turn::Text("no such skill".into()),
            ],
        );
    let suite = Suite::new();
    suite
        .file("tests/ws/.claude/skills/greet/SKILL.md", &skill_md("greet", "GREET-BODY"))
        .file("tests/ws/.claude/skills/other/SKILL.md", &skill_md("other", "OTHER-BODY"))
        .file(
            "plugins/waver/.claude-plugin/plugin.json",
            r#"{"name": "waver", "version": "1.0.0", "description": "waves"}"#,
        )
        .file("plugins/waver/skills/wave/SKILL.md", &skill_md("wave", "WAVE-BODY"))
        .file(
            "home/.claude/skills/homeskill/SKILL.md",
            &skill_md("homeskill", "HOME-BODY"),
        )
        .file(
            "tests/ws/skill.aptitude.yaml",
            "name: workspace skill\nprompt: \"SKILL-WS: greet me\"\nassertions:\n  - skill: greet\n    call_count: 1\n  - skill: other\n    called: false\n",
        )
        .file(
            "tests/ws/plugin.aptitude.yaml",
            "name: plugin skill\nprompt: \"SKILL-PLUGIN: wave\"\nplugins: [../../plugins/waver]\nassertions:\n  - skill: wave\n  - skill: \"waver:wave\"\n  - skill: greet\n    called: false\n",
        )
        .file(
            "tests/ws/missing.aptitude.yaml",
            "name: missing skill\nprompt: \"SKILL-MISSING: go\"\nassertions:\n  - skill: missing\n  - skill: missing\n    called: false\n",
        );
    let plugin_before = std::fs::read_dir(suite.path().join("plugins/waver"))
        .unwrap()
        .count();
    let run = aptitude_run(&suite, &model, &["--no-grade"]);
    let results = run
        .results
        .unwrap_or_else(|| panic!("no results: {}", run.stderr));

    let ws = test(&results, "workspace skill");
    assert_eq!(ws["status"], "passed", "{}\n{ws:#}", run.stderr);
    assert_eq!(statuses(ws), ["pass", "pass"]);
    assert!(
        later_request_holds(&model, "SKILL-WS", "Reply with the word GREET-BODY"),
        "the model never saw the skill's body: the skill did not really load"
    );
    let loaded: Vec<&str> = ws["transcript"]["skills"]
        .as_array()
        .unwrap_or_else(|| panic!("no skills in {ws:#}"))
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        loaded.contains(&"greet") && loaded.contains(&"other"),
        "{loaded:?}"
    );
    assert!(
        !loaded
            .iter()
            .any(|s| s.contains("homeskill") || s.contains("wave")),
        "the user's own skills and another test's plugins must not load: {loaded:?}"
    );

    let plugin = test(&results, "plugin skill");
    assert_eq!(plugin["status"], "passed", "{}\n{plugin:#}", run.stderr);
    assert_eq!(statuses(plugin), ["pass", "pass", "pass"]);
    assert!(
        later_request_holds(&model, "SKILL-PLUGIN", "Reply with the word WAVE-BODY"),
        "the model never saw the plugin skill's body"
    );
    assert_eq!(
        std::fs::read_dir(suite.path().join("plugins/waver"))
            .unwrap()
            .count(),
        plugin_before,
        "the plugin directory is read-only input"
    );

    let missing = test(&results, "missing skill");
    assert_eq!(missing["status"], "error", "{missing:#}");
    assert_eq!(statuses(missing), ["error", "error"]);
    let detail = missing["assertions"][1]["detail"].as_str().unwrap_or("");
    assert!(
        detail.contains("not among the skills the agent loaded"),
        "{detail}"
    );
    let call = &missing["transcript"]["tool_calls"][0];
    assert_eq!(call["name"], "Skill", "{missing:#}");
    assert_eq!(
        call["is_error"], true,
        "Claude Code refuses an unknown skill: {call:#}"
    );
}

/// `plugins:` on an agent that can not load Claude Code plugins makes the test `error`
/// saying so, without running the agent.
#[test]
fn plugins_on_an_agent_without_them_are_an_error() {
    let agent = AGENTS
        .iter()
        .map(|a| a())
        .find(|a| a.name == "pi")
        .expect("pi is an agent under test");
    let model = ScriptedModel::start();
    let suite = Suite::new();
    suite
        .file("plugins/waver/skills/wave/SKILL.md", &skill_md("wave", "WAVE"))
        .file(
            "tests/ws/plugin.aptitude.yaml",
            "name: plugin\nprompt: \"PLUGIN-PI: wave\"\nplugins: [../../plugins/waver]\nassertions:\n  - tool: Bash\n",
        );
    let (code, results, stderr) = run_on(&suite, &model, &agent, &["--no-grade"]);
    let test = &results["tests"][0];
    assert_eq!(test["status"], "error", "{stderr}\n{test:#}");
    assert_eq!(code, 1);
    let error = test["error"].as_str().unwrap_or("");
    assert!(
        error.contains("pi can not load Claude Code plugins") && error.contains("waver"),
        "{error}"
    );
    assert!(model.requests().is_empty(), "the agent must not run");
}

/// Copilot CLI loads the same plugin directory (`--plugin-dir`, the Claude Code layout) and
/// the workspace's `.claude/skills`; its `skill {skill}` calls are `Skill` calls, so the
/// same `skill:` assertions give the same verdicts.
#[test]
fn copilot_loads_the_plugin_and_its_skill_calls_count() {
    let agent = AGENTS
        .iter()
        .map(|a| a())
        .find(|a| a.name == "copilot")
        .expect("copilot is an agent under test");
    let model = ScriptedModel::start();
    model.script(
        "SKILL-COPILOT",
        vec![
            Turn::Tool("skill", json!({"skill": "wave"})),
            Turn::Text("WAVE-BODY".into()),
        ],
    );
    let suite = Suite::new();
    suite
        .file("tests/ws/.claude/skills/greet/SKILL.md", &skill_md("greet", "GREET-BODY"))
        .file(
            "plugins/waver/.claude-plugin/plugin.json",
            r#"{"name": "waver", "version": "1.0.0", "description": "waves"}"#,
        )
        .file("plugins/waver/skills/wave/SKILL.md", &skill_md("wave", "WAVE-BODY"))
        .file(
            "home/.claude/skills/homeskill/SKILL.md",
            &skill_md("homeskill", "HOME-BODY"),
        )
        .file(
            "home/.copilot/skills/homeskill2/SKILL.md",
            &skill_md("homeskill2", "HOME-BODY"),
        )
        .file(
            "tests/ws/plugin.aptitude.yaml",
            "name: plugin\nprompt: \"SKILL-COPILOT: wave\"\nplugins: [../../plugins/waver]\nassertions:\n  - skill: wave\n    call_count: 1\n  - skill: greet\n    called: false\n",
        );
    let (code, results, stderr) = run_on(&suite, &model, &agent, &["--no-grade"]);
    let test = &results["tests"][0];
    assert_eq!(test["status"], "passed", "{stderr}\n{test:#}");
    assert_eq!(code, 0);
    assert!(
        later_request_holds(&model, "SKILL-COPILOT", "Reply with the word WAVE-BODY"),
        "the model never saw the plugin skill's body"
    );
    let loaded = test["transcript"]["skills"].to_string();
    assert!(
        loaded.contains("wave") && loaded.contains("greet"),
        "Copilot's session.skills_loaded: {loaded}"
    );
    assert!(
        !loaded.contains("homeskill"),
        "the user's own skills must not load: {loaded}"
    );
}
