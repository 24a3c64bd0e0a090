//! Routing suites end to end: the real `claude` (pinned in package.json) against the
//! scripted model, with three skills in the workspace fixture. The model's choice for each
//! prompt is scripted (a `Skill` call, a `Read` of a `SKILL.md`, a plain answer, an API
//! outage), and the figures in results JSON are checked against those choices worked out
//! by hand: recall, false-trigger rate, the confusion matrix, the errored runs that count
//! in neither, early stop, a skill that did not load, and a replay from cassettes that asks
//! the model nothing.

use serde_json::{Value, json};

use crate::run::{Suite, aptitude_run};
use crate::support::model::{ScriptedModel, Turn};

/// A `SKILL.md` with its front matter.
fn skill_md(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\nFollow these steps for {name}.\n")
}

/// The routing entry of `skill` in suite `suite` of results JSON.
fn entry<'a>(results: &'a Value, suite: &str, skill: &str) -> &'a Value {
    results["routing"]["entries"]
        .as_array()
        .unwrap_or_else(|| panic!("no routing entries in {results:#}"))
        .iter()
        .find(|e| e["suite"] == suite && e["skill"] == skill)
        .unwrap_or_else(|| panic!("no entry for {skill} in {suite}: {:#}", results["routing"]))
}

/// A figure's (value, low, high), checked to be ordered.
fn figure(entry: &Value, name: &str) -> (f64, f64, f64) {
    let f = &entry[name];
    let get = |k: &str| {
        f[k].as_f64()
            .unwrap_or_else(|| panic!("{name}.{k} missing: {entry:#}"))
    };
    let (value, low, high) = (get("value"), get("low"), get("high"));
    assert!(low <= value && value <= high, "{name}: {f}");
    (value, low, high)
}

#[track_caller]
fn close(actual: f64, expected: f64) {
    assert!((actual - expected).abs() < 1e-9, "{actual} != {expected}");
}

/// The suite `docs`: pdf, docx and csv compete, two runs per prompt. The scripted choices:
///
/// | prompt | should trigger | both runs do | counts as |
/// |---|---|---|---|
/// | P1 fill invoice.pdf | pdf | `Skill pdf` | pdf, pdf |
/// | P2 rotate scan.pdf | pdf | `Skill pdf`, then a plain answer | pdf, none |
/// | P3 summarise notes.docx (near-miss of pdf) | docx | `Read …/docx/SKILL.md` | docx, docx |
/// | P4 weather (near-miss of docx) | none | `Skill pdf` | pdf, pdf |
/// | P5 merge the csv files | csv | an API outage | error, error |
///
/// By hand, each prompt counted once: pdf recall (1 + ½)/2 = 0.75, false triggers on
/// P3, P4 (P5 errored): (0 + 1)/2 = 0.5; docx recall 1/1, false triggers 0/3; csv has no
/// judged should-trigger prompt (no recall), false triggers 0/4. Matrix columns pdf,
/// docx, csv, (none); row pdf [3, 0, 0, 2], docx [0, 2, 0, 0], (none) [1, 0, 0, 0]; 2
/// runs of 1 prompt errored.
const DOCS: &str = r#"name: docs
runs: 2
routing:
  pdf:
    should_trigger:
      - "RT-P1: fill in the form in invoice.pdf"
      - "RT-P2: rotate scan.pdf by 90 degrees"
    should_not_trigger:
      - "RT-P3: summarise notes.docx"
  docx:
    should_trigger: ["RT-P3: summarise notes.docx"]
    should_not_trigger: ["RT-P4: what is the weather like today?"]
  csv:
    should_trigger: ["RT-P5: merge the csv files in data/"]
"#;

/// Scripts the model's choices of [`DOCS`] (and of the two small suites beside it).
fn script(model: &ScriptedModel) {
    let pdf = || Turn::Tool("Skill", json!({"skill": "pdf"}));
    let answer = || Turn::Text("Done.".into());
    model
        .script("RT-P1", vec![pdf(), answer()])
        .script(
            "RT-P2",
            vec![Turn::Sequence(vec![pdf(), answer()]), answer()],
        )
        .script(
            "RT-P3",
            vec![
                Turn::Tool("Read", json!({"file_path": ".claude/skills/docx/SKILL.md"})),
                answer(),
            ],
        )
        .script("RT-P4", vec![pdf(), answer()])
        .script("RT-P5", vec![Turn::Http(500, "scripted outage")])
        .script("RT-FULL", vec![pdf(), answer()])
        .script("RT-GONE", vec![pdf(), answer()]);
}

fn fixture(suite: &Suite) {
    suite
        .file(
            "tests/ws/.claude/skills/pdf/SKILL.md",
            &skill_md("pdf", "Fill, rotate and merge PDF files."),
        )
        .file(
            "tests/ws/.claude/skills/docx/SKILL.md",
            &skill_md("docx", "Read and write Word documents."),
        )
        .file(
            "tests/ws/.claude/skills/csv/SKILL.md",
            &skill_md("csv", "Clean and merge CSV files."),
        )
        // Where Codex looks, not Claude Code: on Claude it does not load.
        .file(
            "tests/ws/.agents/skills/xlsx/SKILL.md",
            &skill_md("xlsx", "Edit spreadsheets."),
        )
        .file("tests/ws/docs.aptitude.yaml", DOCS)
        .file(
            "tests/ws/full.aptitude.yaml",
            "name: full\nstop: never\nrouting:\n  pdf:\n    should_trigger: [\"RT-FULL: fill in the form in a.pdf\"]\n",
        )
        .file(
            "tests/ws/gone.aptitude.yaml",
            "name: gone\nrouting:\n  pdf:\n    should_trigger: [\"RT-GONE: fill in the form in b.pdf\"]\n  xlsx:\n    should_trigger: [\"RT-GONE2: sum column B of sheet.xlsx\"]\n",
        );
}

/// The one routing run on Claude Code: figures, matrix, errors, early stop, a skill that
/// did not load; then a replay of its cassettes that asks the model nothing and gives the
/// same figures.
#[test]
fn a_routing_suite_on_claude_code_gives_the_scripted_figures() {
    let model = ScriptedModel::start();
    script(&model);
    let suite = Suite::new();
    fixture(&suite);
    let junit = suite.path().join("junit.xml");
    let run = aptitude_run(
        &suite,
        &model,
        &[
            "--no-grade",
            "--record-model",
            "--junit",
            junit.to_str().unwrap(),
        ],
    );
    let results = run
        .results
        .clone()
        .unwrap_or_else(|| panic!("no results: {}\n{}", run.stdout, run.stderr));
    let routing = &results["routing"];

    // Figures, each prompt counted once.
    let pdf = entry(&results, "docs", "pdf");
    assert_eq!(pdf["agent"], "claude");
    let (recall, low, high) = figure(pdf, "recall");
    close(recall, 0.75);
    assert!(low > 0.0 && high < 1.0, "n = 2 prompts: a wide interval");
    let (false_rate, _, _) = figure(pdf, "false_trigger_rate");
    close(false_rate, 0.5);
    assert_eq!(pdf["recall"]["prompts"], 2, "{pdf:#}");
    assert_eq!(pdf["recall"]["runs"], 4, "{pdf:#}");
    assert_eq!(
        pdf["false_trigger_rate"]["prompts"], 2,
        "P5 errored: {pdf:#}"
    );
    let docx = entry(&results, "docs", "docx");
    close(figure(docx, "recall").0, 1.0);
    close(figure(docx, "false_trigger_rate").0, 0.0);
    assert_eq!(docx["false_trigger_rate"]["prompts"], 3, "{docx:#}");
    let csv = entry(&results, "docs", "csv");
    assert!(
        csv.get("recall").is_none(),
        "its one prompt errored: no recall, never 0%: {csv:#}"
    );
    assert_eq!(csv["false_trigger_rate"]["prompts"], 4, "{csv:#}");
    for e in [pdf, docx, csv] {
        assert_eq!(e["errors"], json!({"runs": 2, "prompts": 1}), "{e:#}");
    }

    // The confusion matrix, in runs.
    let matrix = routing["matrices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["suite"] == "docs")
        .unwrap();
    assert_eq!(matrix["classes"], json!(["pdf", "docx", "csv", "(none)"]));
    assert_eq!(matrix["runs"], json!([4, 2, 0, 2]), "{matrix:#}");
    assert_eq!(matrix["stop"], "first_call");
    let rows: Vec<(String, Value)> = matrix["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["triggered"].as_str().unwrap().to_owned(),
                r["counts"].clone(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("pdf".to_owned(), json!([3, 0, 0, 2])),
            ("docx".to_owned(), json!([0, 2, 0, 0])),
            ("csv".to_owned(), json!([0, 0, 0, 0])),
            ("(none)".to_owned(), json!([1, 0, 0, 0])),
        ],
        "{matrix:#}"
    );
    assert_eq!(
        pdf["matrix"][0],
        json!({"class": "pdf", "triggered": 3, "runs": 4})
    );

    // Early stop: each deciding run ended at its first call, after one model request; the
    // same choice with `stop: never` took the second request a whole run needs.
    let p1 = crate::run::test(&results, "docs › RT-P1: fill in the form in invoice.pdf");
    for r in p1["runs"].as_array().unwrap() {
        assert_eq!(r["transcript"]["outcome"]["status"], "decided", "{r:#}");
        assert_eq!(r["status"], "passed", "{r:#}");
    }
    // A run stopped at its first decision never gets the agent's summing up: its cost is
    // what the gateway metered, and it counts in the totals.
    for r in p1["runs"].as_array().unwrap() {
        let metered = &r["model_traffic"]["cost_usd"];
        assert!(metered.as_f64().is_some_and(|c| c > 0.0), "{r:#}");
        assert_eq!(&r["usage"]["cost_usd"], metered, "{r:#}");
        assert_eq!(
            r["usage"]["input_tokens"], r["model_traffic"]["input_tokens"],
            "{r:#}"
        );
    }
    assert!(
        !run.stdout.contains("no cost reported"),
        "every routing run was metered: {}",
        run.stdout
    );
    assert_eq!(model.requests_for("RT-P1").len(), 2, "one request per run");
    assert!(model.requests_for("RT-P1").iter().all(|r| r.turn == 0));
    assert_eq!(model.requests_for("RT-FULL").len(), 2, "a whole run");
    let full = crate::run::test(&results, "full › RT-FULL: fill in the form in a.pdf");
    assert_eq!(
        full["transcript"]["outcome"]["status"], "completed",
        "{full:#}"
    );
    close(figure(entry(&results, "full", "pdf"), "recall").0, 1.0);

    // Each prompt's line says what its runs chose and holds only as expected (more than
    // half its runs): a false trigger and a half-miss are `✗`, never `✓`.
    let line = |name: &str| {
        let t = crate::run::test(&results, name);
        (
            t["status"].as_str().unwrap_or("").to_owned(),
            t["assertions"][0]["description"]
                .as_str()
                .unwrap_or("")
                .to_owned(),
        )
    };
    assert_eq!(
        line("docs › RT-P1: fill in the form in invoice.pdf"),
        (
            "passed".into(),
            "should trigger pdf: chose pdf in 2 of 2 runs".into()
        )
    );
    assert_eq!(
        line("docs › RT-P2: rotate scan.pdf by 90 degrees"),
        (
            "failed".into(),
            "should trigger pdf: chose pdf in 1 of 2 runs, none in 1".into()
        )
    );
    assert_eq!(
        line("docs › RT-P4: what is the weather like today?"),
        (
            "failed".into(),
            "should trigger no skill (near-miss for docx): chose pdf in 2 of 2 runs".into()
        )
    );
    assert!(
        run.stdout
            .contains("✗ should trigger no skill (near-miss for docx): chose pdf in 2 of 2 runs"),
        "{}",
        run.stdout
    );
    assert!(
        !run.stdout
            .contains("✓ should trigger no skill (near-miss for docx)"),
        "{}",
        run.stdout
    );
    // The headline counts the prompts apart from ordinary tests (P1, P3 and full's one
    // prompt as expected; P2 and P4 not; P5 and gone's two errored).
    assert_eq!(
        results["summary"]["routing"],
        json!({"prompts": 8, "as_expected": 3, "unexpected": 2, "errors": 3, "skipped": 0}),
        "{:#}",
        results["summary"]
    );
    assert_eq!(results["summary"]["total"], 0, "no ordinary test");
    assert!(
        run.stdout
            .contains("routing: 8 prompts, 3 as expected, 2 not, 3 error"),
        "{}",
        run.stdout
    );

    // The outage: errors, saying so, counted in no figure.
    let p5 = crate::run::test(&results, "docs › RT-P5: merge the csv files in data/");
    assert_eq!(p5["status"], "error", "{p5:#}");

    // A skill Claude Code did not load (xlsx is where Codex looks): every run is an error
    // naming it, never a miss.
    for name in [
        "gone › RT-GONE: fill in the form in b.pdf",
        "gone › RT-GONE2: sum column B of sheet.xlsx",
    ] {
        let t = crate::run::test(&results, name);
        assert_eq!(t["status"], "error", "{t:#}");
        let detail = t["assertions"][0]["detail"].as_str().unwrap_or("");
        assert!(
            detail.contains("`xlsx` did not load in this run"),
            "{detail}"
        );
    }
    let gone = entry(&results, "gone", "pdf");
    assert!(gone.get("recall").is_none() && gone.get("false_trigger_rate").is_none());
    assert_eq!(gone["errors"], json!({"runs": 2, "prompts": 2}));

    // The terminal says how many runs errored.
    assert!(
        run.stdout
            .contains("2 runs errored (1 prompt): counted in no figure"),
        "{}",
        run.stdout
    );
    assert_eq!(run.code, 1, "errored runs fail the run");

    // JUnit: one case per skill and agent.
    let xml = std::fs::read_to_string(&junit).unwrap();
    for skill in ["pdf", "docx", "csv"] {
        assert!(
            xml.contains(&format!("name=\"routing · docs · {skill} · claude\"")),
            "{xml}"
        );
    }

    // A replay from the cassettes asks the model nothing and gives the same figures. It is
    // compared with a baseline where pdf never false-triggered on 40 prompts and triggered
    // on all 30 of its own: its 1 false trigger in 2 prompts is a significant rise (Fisher
    // p = 2/42), its recall of 1 prompt in 2 a fall that is not (p = 1 - C(31,2)/C(32,2)).
    let asked = model.requests().len();
    let recorded = suite.path().join("recorded.json");
    crate::support::copy_results(suite.results_path(), &recorded);
    let mut base = results.clone();
    let entries = base["routing"]["entries"].as_array_mut().unwrap();
    let pdf_base = entries
        .iter_mut()
        .find(|e| e["suite"] == "docs" && e["skill"] == "pdf")
        .unwrap();
    pdf_base["recall"]["prompts"] = json!(30);
    pdf_base["recall"]["prompts_triggered"] = json!(30);
    pdf_base["false_trigger_rate"]["prompts"] = json!(40);
    pdf_base["false_trigger_rate"]["prompts_triggered"] = json!(0);
    let baseline = suite.path().join("base.json");
    std::fs::write(&baseline, base.to_string()).unwrap();
    let replay = aptitude_run(
        &suite,
        &model,
        &[
            "--no-grade",
            "--replay",
            recorded.to_str().unwrap(),
            "--baseline",
            baseline.to_str().unwrap(),
        ],
    );
    let replayed = replay
        .results
        .unwrap_or_else(|| panic!("no results: {}", replay.stderr));
    assert_eq!(model.requests().len(), asked, "the replay asked the model");
    for skill in ["pdf", "docx", "csv"] {
        let (a, b) = (
            entry(&results, "docs", skill),
            entry(&replayed, "docs", skill),
        );
        assert_eq!(a["recall"], b["recall"], "{skill}");
        assert_eq!(a["false_trigger_rate"], b["false_trigger_rate"], "{skill}");
        assert_eq!(a["matrix"], b["matrix"], "{skill}");
    }
    let compared = &replayed["routing"]["baseline"];
    let moves = |kind: &str| -> Vec<(String, String)> {
        compared[kind]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|c| {
                        (
                            c["skill"].as_str().unwrap().to_owned(),
                            c["figure"].as_str().unwrap().to_owned(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(
        moves("regressions"),
        [("pdf".to_owned(), "false_trigger_rate".to_owned())],
        "{compared:#}"
    );
    assert_eq!(
        moves("changed"),
        [("pdf".to_owned(), "recall".to_owned())],
        "{compared:#}"
    );
    assert!(
        replay
            .stdout
            .contains("regression against the baseline: pdf on claude"),
        "{}",
        replay.stdout
    );
    assert_eq!(replayed["summary"]["routing"]["regressions"], 1);
    assert!(
        replay
            .stdout
            .contains("1 routing regression against the baseline"),
        "{}",
        replay.stdout
    );
}

/// The same suite form on Gemini CLI, which loads the workspace's `.gemini/skills` and
/// activates one with `activate_skill {name}`: the call decides, the run stops there, and
/// the figures follow the scripted choices (pdf's prompt activates pdf; the near-miss
/// activates docx, a false trigger of docx: 1 of docx's 2 other prompts). Gemini CLI does
/// not list the skills it loaded: that xlsx (in `.claude/skills`, where it does not look)
/// did not load is read off the requests to the model, none of which held its description,
/// and makes the runs of its suite `error`.
#[test]
fn a_routing_suite_on_gemini_cli_reads_activate_skill() {
    let agent = crate::agents::AGENTS
        .iter()
        .map(|a| a())
        .find(|a| a.name == "gemini")
        .expect("gemini is an agent under test");
    let model = ScriptedModel::start();
    let activate = |name: &str| Turn::Tool("activate_skill", json!({"name": name}));
    model
        .script("RTG-P1", vec![activate("pdf"), Turn::Text("Done.".into())])
        .script("RTG-P2", vec![activate("docx"), Turn::Text("Done.".into())])
        .script(
            "RTG-GONE",
            vec![activate("pdf"), Turn::Text("Done.".into())],
        );
    let suite = Suite::new();
    suite
        .file(
            "tests/ws/.gemini/skills/pdf/SKILL.md",
            &skill_md("pdf", "Fill, rotate and merge PDF files."),
        )
        .file(
            "tests/ws/.gemini/skills/docx/SKILL.md",
            &skill_md("docx", "Read and write Word documents."),
        )
        .file(
            "tests/ws/docs.aptitude.yaml",
            "name: docs\nrouting:\n  pdf:\n    should_trigger: [\"RTG-P1: fill in invoice.pdf\"]\n  docx:\n    should_not_trigger: [\"RTG-P2: print the page\"]\n",
        )
        .file(
            "tests/ws/.claude/skills/xlsx/SKILL.md",
            &skill_md("xlsx", "Edit spreadsheets and their formulas."),
        )
        .file(
            "tests/ws/gone.aptitude.yaml",
            "name: gone\nrouting:\n  pdf:\n    should_trigger: [\"RTG-GONE: fill in b.pdf\"]\n  xlsx:\n    should_not_trigger: [\"RTG-GONE: fill in b.pdf\"]\n",
        );
    let (code, results, stderr) = crate::agents::run_on(&suite, &model, &agent, &["--no-grade"]);
    assert_eq!(code, 1, "the gone suite errs: {stderr}\n{results:#}");
    let gone = crate::run::test(&results, "gone › RTG-GONE: fill in b.pdf");
    assert_eq!(gone["status"], "error", "{gone:#}");
    let detail = gone["assertions"][0]["detail"].as_str().unwrap_or("");
    assert!(
        detail.starts_with("`xlsx` did not load in this run")
            && detail.contains("no request to the model held its description"),
        "{detail}"
    );
    assert_eq!(
        gone["transcript"]["skills_shown"],
        json!(["pdf"]),
        "{gone:#}"
    );
    assert!(
        model
            .requests_for("RTG-P1")
            .iter()
            .all(|r| r.body.to_string().contains("Read and write Word documents")),
        "the skills really loaded: the model was shown them"
    );
    let pdf = entry(&results, "docs", "pdf");
    assert_eq!(pdf["agent"], "gemini");
    close(figure(pdf, "recall").0, 1.0);
    close(figure(pdf, "false_trigger_rate").0, 0.0);
    let docx = entry(&results, "docs", "docx");
    assert!(
        docx.get("recall").is_none(),
        "docx has no should-trigger prompt"
    );
    // Over every prompt not its own: pdf's (not triggered) and the near-miss (triggered).
    close(figure(docx, "false_trigger_rate").0, 0.5);
    for t in results["tests"].as_array().unwrap() {
        assert_eq!(t["transcript"]["outcome"]["status"], "decided", "{t:#}");
    }
    let docs = crate::run::test(&results, "docs › RTG-P1: fill in invoice.pdf");
    assert_eq!(docs["transcript"]["skills_shown"], json!(["pdf", "docx"]));
    assert!(
        model.requests().iter().all(|r| r.turn == 0),
        "no run asked for a second turn"
    );
}

/// The agents that load `.agents/skills` and list nothing: Codex (a shell command reading
/// the `SKILL.md`), pi (its `read`), Qwen Code (`skill`), opencode (`skill {name}`). Each
/// run's choice is read off its own evidence, and that both skills loaded off the
/// requests to the model (the gateway found each description in them).
#[test]
fn agents_that_read_agents_skills_are_read_each_their_way() {
    let choices: [(&str, Turn); 4] = [
        (
            "codex",
            Turn::Tool(
                "exec_command",
                json!({"cmd": "sed -n '1,200p' .agents/skills/pdf/SKILL.md"}),
            ),
        ),
        (
            "pi",
            Turn::Tool("read", json!({"path": ".agents/skills/pdf/SKILL.md"})),
        ),
        ("qwen", Turn::Tool("skill", json!({"skill": "pdf"}))),
        ("opencode", Turn::Tool("skill", json!({"name": "pdf"}))),
    ];
    let mut failures = Vec::new();
    for (name, choice) in choices {
        let agent = crate::agents::AGENTS
            .iter()
            .map(|a| a())
            .find(|a| a.name == name)
            .expect("an agent under test");
        let marker = format!("RTA-{}", name.to_uppercase());
        let model = ScriptedModel::start();
        model.script(&marker, vec![choice, Turn::Text("Done.".into())]);
        let suite = Suite::new();
        suite
            .file(
                "tests/ws/.agents/skills/pdf/SKILL.md",
                &skill_md("pdf", "Fill, rotate and merge PDF files."),
            )
            .file(
                "tests/ws/.agents/skills/docx/SKILL.md",
                &skill_md("docx", "Read and write Word documents."),
            )
            .file(
                "tests/ws/docs.aptitude.yaml",
                &format!("name: docs\nrouting:\n  pdf:\n    should_trigger: [\"{marker}: fill in invoice.pdf\"]\n  docx:\n    should_trigger: [\"Summarise notes.docx ({name})\"]\n"),
            );
        let (_, results, stderr) = crate::agents::run_on(&suite, &model, &agent, &["--no-grade"]);
        let t = crate::run::test(&results, &format!("docs › {marker}: fill in invoice.pdf"));
        let a = &t["assertions"][0];
        let got = (
            t["status"].clone(),
            a["routing"]["triggered"].clone(),
            t["transcript"]["skills_shown"].clone(),
        );
        if got != (json!("passed"), json!("pdf"), json!(["pdf", "docx"])) {
            failures.push(format!("{name}: {got:?}\n{}\n{stderr}", a["detail"]));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
