//! `aptitude init`: the scaffold a new user starts from, and `validate` on it and on the
//! bundled examples.

use crate::support::cli::Aptitude;
use crate::support::root;

fn aptitude(dir: &std::path::Path) -> Aptitude {
    let mut cmd = Aptitude::new();
    cmd.current_dir(dir);
    cmd
}

/// Runs `cmd`, asserts its exit code, and returns its stdout.
fn stdout(cmd: &mut Aptitude, code: i32) -> String {
    let out = cmd.output();
    out.code(code);
    out.stdout
}

#[test]
fn init_scaffolds_a_valid_test_and_workflow_and_never_overwrites() {
    let repo = tempfile::tempdir().unwrap();
    std::fs::write(repo.path().join("AGENTS.md"), "- run `cargo test`\n").unwrap();
    let created = stdout(aptitude(repo.path()).arg("init"), 0);
    insta::assert_snapshot!("init_created", created);
    let test = std::fs::read_to_string(repo.path().join("tests/agents/instructions.aptitude.yaml"))
        .unwrap();
    insta::assert_snapshot!("init_test_file", test);
    // A judge of another family than the tested agent (claude), commented out.
    let suite = std::fs::read_to_string(repo.path().join("tests/agents/aptitude.yaml")).unwrap();
    insta::assert_snapshot!("init_suite_file", suite);
    let judge_on: String = suite
        .lines()
        .skip_while(|l| *l != "# judge:")
        .map(|l| format!("{}\n", &l[2..]))
        .collect();
    assert!(judge_on.starts_with("judge:\n  agent: codex"), "{judge_on}");
    let uncommented = tempfile::tempdir().unwrap();
    std::fs::write(uncommented.path().join("aptitude.yaml"), &judge_on).unwrap();
    std::fs::write(
        uncommented.path().join("t.aptitude.yaml"),
        std::fs::read_to_string(repo.path().join("tests/agents/instructions.aptitude.yaml"))
            .unwrap()
            .replace("# yaml-language-server", "# x"),
    )
    .unwrap();
    stdout(aptitude(uncommented.path()).args(["validate", "."]), 0);
    let schema =
        std::fs::read_to_string(repo.path().join("tests/agents/aptitude-test.schema.json"))
            .unwrap();
    assert_eq!(
        schema,
        aptitude::spec::schema::test_file_schema(),
        "the modeline's schema is this version's"
    );
    let as_json: serde_json::Value = serde_saphyr::from_str(&test).unwrap();
    let validator = jsonschema::draft7::new(&serde_json::from_str(&schema).unwrap()).unwrap();
    assert!(
        validator.is_valid(&as_json),
        "the scaffold passes its own schema"
    );
    let workflow = repo.path().join(".github/workflows/aptitude.yml");
    assert!(
        std::fs::read_to_string(&workflow)
            .unwrap()
            .contains("tests: tests/agents")
    );

    let validated = stdout(aptitude(repo.path()).args(["validate", "tests/agents"]), 0);
    insta::assert_snapshot!("init_validate", validated);

    std::fs::write(&workflow, "mine\n").unwrap();
    let again = stdout(aptitude(repo.path()).arg("init"), 0);
    assert!(
        again.contains("kept     .github/workflows/aptitude.yml (it exists)"),
        "{again}"
    );
    assert!(!again.contains("created"), "{again}");
    assert_eq!(
        std::fs::read_to_string(&workflow).unwrap(),
        "mine\n",
        "never overwritten"
    );
}

#[test]
fn init_without_instructions_and_outside_a_directory() {
    let repo = tempfile::tempdir().unwrap();
    let created = stdout(aptitude(repo.path()).arg("init"), 0);
    assert!(
        created.contains("No AGENTS.md, CLAUDE.md or GEMINI.md here"),
        "{created}"
    );
    let test = std::fs::read_to_string(repo.path().join("tests/agents/instructions.aptitude.yaml"))
        .unwrap();
    assert!(test.contains("this repository's conventions"), "{test}");
    stdout(aptitude(repo.path()).args(["validate", "tests/agents"]), 0);
    let out = aptitude(repo.path()).args(["init", "AGENTS.md"]).output();
    out.code(2);
    assert!(out.stderr.contains("is not a directory"), "{}", out.stderr);
}

#[test]
fn validate_output_for_the_bundled_examples() {
    let out = stdout(aptitude(&root()).args(["validate", "examples"]), 0);
    insta::assert_snapshot!("validate_examples", out);
}

/// `init --rules FILE` drafts a test for each rule no test covers, through the real
/// `claude -p` against the scripted model: a good reply becomes a validated draft that
/// covers its rule (coverage then counts it), a reply that is no test is skipped and said
/// so, a covered rule gets no draft, and neither does one `aptitude.yaml` leaves out of
/// coverage (`coverage.exclude`).
#[test]
fn init_rules_drafts_a_validated_test_per_uncovered_rule() {
    use crate::support::model::{ScriptedModel, Turn};
    let repo = tempfile::tempdir().unwrap();
    std::fs::write(
        repo.path().join("AGENTS.md"),
        "# Rules\n\n- COVERED-RULE: keep the changelog current.\n- DRAFT-LINT: run the linter before you finish.\n- DRAFT-NONSENSE: be nice.\n\n## Release\n\n- EXCLUDED-RULE: tag the release.\n",
    )
    .unwrap();
    std::fs::write(
        repo.path().join("aptitude.yaml"),
        "coverage:\n  exclude: [\"AGENTS.md#Release\"]\n",
    )
    .unwrap();
    std::fs::create_dir_all(repo.path().join("tests/agents")).unwrap();
    std::fs::write(
        repo.path().join("tests/agents/changelog.aptitude.yaml"),
        "name: changelog\nprompt: p\nworkspace: ../..\ncovers: \"COVERED-RULE\"\nassertions:\n  - tool: Edit\n",
    )
    .unwrap();
    let model = ScriptedModel::start();
    // Every drafting prompt holds the whole file: the rule it is about is the indented one.
    model.script(
        "You write tests for aptitude",
        vec![Turn::IfRequestHas(
            "    DRAFT-LINT",
            Box::new(Turn::Text(
                "```yaml\nprompt: \"Tidy up src/app.py and tell me when it is done\"\nassertions:\n  - ran: \"lint\"\n```".into(),
            )),
            Box::new(Turn::Text("I would rather not.".into())),
        )],
    );
    let out = Aptitude::new()
        .current_dir(repo.path())
        .model(&model)
        .sandbox_in(repo.path())
        .args(["init", "--rules", "AGENTS.md"])
        .claude()
        .output();
    assert_eq!(out.code, 1, "one rule got no draft:\n{}", out.both());
    assert!(
        out.stdout.contains(
            "3 rules, 2 not covered by a test under ./tests/agents (1 left out by aptitude.yaml's coverage.exclude)"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("1 draft written, 1 not"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("tokens"), "{}", out.stdout);
    let drafts: Vec<_> = std::fs::read_dir(repo.path().join("tests/agents/drafts"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(drafts.len(), 1, "{drafts:?}");
    let draft = std::fs::read_to_string(&drafts[0]).unwrap();
    assert!(draft.starts_with("# DRAFT"), "{draft}");
    assert!(
        draft.contains("ran: lint") || draft.contains("ran: \"lint\""),
        "{draft}"
    );
    // The draft loads, and now covers its rule.
    let coverage = stdout(aptitude(repo.path()).args(["coverage", "tests/agents"]), 0);
    assert!(coverage.contains("2 of 3 rules covered"), "{coverage}");
    assert!(
        coverage.contains("DRAFT-NONSENSE"),
        "the one left: {coverage}"
    );
}

/// `init --skills DIR` drafts one routing suite for the skills of `.claude/skills`, through
/// the real `claude -p` against the scripted model: each skill's prompts come from one
/// drafting call that sees every skill's description; a reply that is no list of prompts
/// is asked again once with the reason (docx, then fine), and a skill whose second reply
/// is no better is left out, "not drafted", with the start of the reply (csv). A skill
/// whose plain `description` holds `: ` is read as Claude Code reads it (implement); a
/// SKILL.md that is no skill is reported at its line and the others are still drafted
/// (broken). The suite is validated, marked as a draft, and `validate` names it.
#[test]
fn init_skills_drafts_a_validated_routing_suite() {
    use crate::support::model::{ScriptedModel, Turn};
    let repo = tempfile::tempdir().unwrap();
    let skills = repo.path().join(".claude/skills");
    std::fs::create_dir_all(skills.join("broken")).unwrap();
    std::fs::write(
        skills.join("broken/SKILL.md"),
        "---\nname: broken\ndescription: [unclosed\n---\n",
    )
    .unwrap();
    for (name, description) in [
        ("pdf", "Fill in and merge PDF forms."),
        ("docx", "Write and edit Word documents."),
        ("csv", "Clean and join CSV files."),
        (
            "implement",
            "Implement a GitHub Issue end-to-end: branch, code, tests, PR.",
        ),
    ] {
        std::fs::create_dir_all(skills.join(name)).unwrap();
        std::fs::write(
            skills.join(name).join("SKILL.md"),
            format!("---\nname: {name}\ndescription: {description}\n---\nSteps.\n"),
        )
        .unwrap();
    }
    let text = |s: &str| Box::new(Turn::Text(s.into()));
    let model = ScriptedModel::start();
    model.script(
        "You write routing tests for agent skills",
        vec![Turn::IfRequestHas(
            "prompts for the skill `implement`",
            text("should_trigger: [\"Implement issue 12 end to end\"]\nshould_not_trigger: [\"Review the open PR\"]\n"),
            Box::new(Turn::IfRequestHas(
            "prompts for the skill `pdf`",
            text("```yaml\nshould_trigger:\n  - \"Fill in the form in invoice.pdf\"\n  - \"Merge a.pdf and b.pdf\"\nshould_not_trigger:\n  - \"Print this page\"\n```"),
            Box::new(Turn::IfRequestHas(
                "prompts for the skill `docx`",
                Box::new(Turn::IfRequestHas(
                    "Your previous answer could not be used",
                    text("should_trigger: [\"Write a cover letter in Word\"]\nshould_not_trigger: [\"Merge a.pdf and b.pdf\"]\n"),
                    text("I would rather not."),
                )),
                text("should_trigger: [\"Join these CSV files\"]\n"),
            )),
        )),
        )],
    );
    let out = Aptitude::new()
        .current_dir(repo.path())
        .model(&model)
        .sandbox_in(repo.path())
        .args(["init", "--skills", ".claude/skills"])
        .claude()
        .output();
    assert_eq!(out.code, 1, "csv got no prompts:\n{}", out.both());
    assert!(
        out.stdout
            .contains(".claude/skills: 4 skills: csv, docx, implement, pdf"),
        "{}",
        out.stdout
    );
    for text in [
        ".claude/skills/broken/SKILL.md:3:",
        "the front matter is not YAML: unclosed bracket",
        "1 of 5 skills not drafted (above): .claude/skills/broken/SKILL.md",
    ] {
        assert!(out.stderr.contains(text), "{text}\n{}", out.stderr);
    }
    assert!(
        out.stdout.contains(
            "not drafted  csv: the model's reply is not a test: it has no list `should_not_trigger`\n             the reply: should_trigger: [\"Join these CSV files\"]\n"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("drafted  docx: 1 should trigger, 1 near-miss\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(
            "wrote    tests/agents/drafts/routing.aptitude.yaml (3 skills, 7 prompts, 3 runs each"
        ),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("drafting used "), "{}", out.stdout);
    assert!(out.stdout.contains(" tokens"), "{}", out.stdout);
    let calls = model.requests_for("You write routing tests for agent skills");
    assert_eq!(calls.len(), 6, "pdf and implement once, docx and csv twice");
    assert!(
        calls
            .iter()
            .all(|r| r.body.to_string().contains("Clean and join CSV files")),
        "each call sees every skill's description"
    );
    let path = repo
        .path()
        .join("tests/agents/drafts/routing.aptitude.yaml");
    let draft = std::fs::read_to_string(&path).unwrap();
    assert!(draft.starts_with("# DRAFT"), "{draft}");
    assert!(draft.contains("\ndraft: true\n"), "{draft}");
    assert!(!draft.contains("csv:"), "{draft}");
    let as_json: serde_json::Value = serde_saphyr::from_str(&draft).unwrap();
    assert_eq!(
        as_json["routing"]["docx"]["should_not_trigger"],
        serde_json::json!(["Merge a.pdf and b.pdf"]),
        "a near-miss of docx that pdf should trigger: {draft}"
    );
    let validator = jsonschema::draft7::new(
        &serde_json::from_str(aptitude::spec::schema::TEST_FILE_SCHEMA).unwrap(),
    )
    .unwrap();
    assert!(validator.is_valid(&as_json), "the draft passes the schema");
    let validated = stdout(
        aptitude(repo.path()).args(["validate", "tests/agents/drafts"]),
        0,
    );
    assert!(
        validated.contains("1 draft to review (then remove its `draft: true`)"),
        "{validated}"
    );
    // Run again: the draft is kept, nothing is asked.
    let again = Aptitude::new()
        .current_dir(repo.path())
        .model(&model)
        .sandbox_in(repo.path())
        .args(["init", "--skills", ".claude/skills"])
        .claude()
        .output();
    assert_eq!(again.code, 0, "{}", again.both());
    assert!(again.stdout.contains("kept     "), "{}", again.stdout);
    assert_eq!(
        model
            .requests_for("You write routing tests for agent skills")
            .len(),
        6
    );
}

/// `init --skills` on a directory agents do not load skills from, or with a SKILL.md
/// without a description, says where and why, and drafts nothing.
#[test]
fn init_skills_refuses_skills_it_can_not_draft_for() {
    let repo = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(repo.path().join("my-skills/pdf")).unwrap();
    std::fs::write(
        repo.path().join("my-skills/pdf/SKILL.md"),
        "---\nname: pdf\ndescription: PDFs.\n---\n",
    )
    .unwrap();
    let out = aptitude(repo.path())
        .args(["init", "--skills", "my-skills"])
        .output();
    out.code(2);
    assert!(
        out.stderr
            .contains("agents do not load skills from this directory"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(".claude/skills/<name>/SKILL.md"),
        "{}",
        out.stderr
    );
    std::fs::create_dir_all(repo.path().join(".claude/skills/docx")).unwrap();
    std::fs::write(
        repo.path().join(".claude/skills/docx/SKILL.md"),
        "---\nname: docx\n---\nbody\n",
    )
    .unwrap();
    let out = aptitude(repo.path())
        .args(["init", "--skills", ".claude/skills"])
        .output();
    out.code(2);
    assert!(
        out.stderr.contains(".claude/skills/docx/SKILL.md:1:1"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("the front matter has no `description`"),
        "{}",
        out.stderr
    );
    assert!(!repo.path().join("tests").exists(), "nothing drafted");
}

/// A draft's `workspace:` is relative to `drafts/`; an accepted draft moved up to
/// `tests/agents/` names the repository's parent. `validate` says so at the line and
/// names the path to write; written so, it loads.
#[test]
fn a_draft_moved_up_is_told_which_workspace_to_write() {
    let repo = tempfile::tempdir().unwrap();
    let root = repo.path().join("repo");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(root.join("tests/agents")).unwrap();
    let test = root.join("tests/agents/rule-a1.aptitude.yaml");
    std::fs::write(
        &test,
        "name: moved\nprompt: p\nworkspace: ../../..\nassertions:\n  - ran: cargo\n",
    )
    .unwrap();
    let out = aptitude(&root).args(["validate", "tests"]).output();
    out.code(2);
    for text in [
        "tests/agents/rule-a1.aptitude.yaml:3:12",
        "the workspace `../../..` is above the repository that holds this test",
        "write `workspace: ../..` for the repository's root",
    ] {
        assert!(out.stderr.contains(text), "{text}\n{}", out.stderr);
    }
    std::fs::write(
        &test,
        "name: moved\nprompt: p\nworkspace: ../..\nassertions:\n  - ran: cargo\n",
    )
    .unwrap();
    stdout(aptitude(&root).args(["validate", "tests"]), 0);
}

/// `init --canary` writes the nightly workflow: actionlint-clean, on the agent's package
/// and pinned release, raising an issue only on bisect's exit code 1 (a significant drop),
/// and never over an existing file.
#[test]
fn init_canary_writes_a_nightly_bisect_workflow_that_actionlint_accepts() {
    let repo = tempfile::tempdir().unwrap();
    let created = stdout(aptitude(repo.path()).args(["init", "--canary"]), 0);
    assert!(
        created.contains("created  .github/workflows/aptitude-canary.yml"),
        "{created}"
    );
    let path = repo.path().join(".github/workflows/aptitude-canary.yml");
    let workflow = std::fs::read_to_string(&path).unwrap();
    for expected in [
        "PACKAGE: \"@anthropic-ai/claude-code\"",
        "PINNED: \"2.1.328\"",
        "aptitude bisect tests/agents --agent \"$AGENT\" --good \"$PINNED\" --bad \"$LATEST\"",
        "if: steps.bisect.outputs.code == '1'",
        "ANTHROPIC_API_KEY: ${{ secrets.ANTHROPIC_API_KEY }}",
        "cron:",
    ] {
        assert!(
            workflow.contains(expected),
            "{expected} missing:\n{workflow}"
        );
    }
    let problems = crate::action::actionlint(&[path.as_path()]);
    assert_eq!(problems, Vec::<serde_json::Value>::new(), "{workflow}");
    let again = stdout(aptitude(repo.path()).args(["init", "--canary"]), 0);
    assert!(again.contains("kept"), "{again}");
    let out = aptitude(repo.path())
        .args(["init", "--canary", "--agent", "aider"])
        .output();
    out.code(2);
    assert!(
        out.stderr.contains("not installed from npm"),
        "{}",
        out.stderr
    );
}
