//! `aptitude judge certify` and `judge status` end to end (issue #40): the real `claude`
//! grades every labelled answer against the scripted model, which plays a judge with a
//! known error; the certificate's figures are checked by hand; under `gate: certified` the
//! uncertified judge's failing review does not fail the run; a rubric edit decertifies.
//! The bias battery: a judge that passes a master-key answer or believes an authority
//! claim is caught and not certified; one that ignores them is certified, and a second
//! `certify` replays the whole battery from the cache.

use serde_json::{Value, json};

use crate::run::{Suite, aptitude_run, test};
use crate::support::cli::Aptitude;
use crate::support::model::{ScriptedModel, Turn};

const CRITERIA: &str = "judge-cert: states that the counter is 43";

fn label(n: usize, human_pass: bool) -> Value {
    let answer = format!(
        "ans-{n:02}: the counter is {}.",
        if human_pass { 43 } else { 42 }
    );
    json!({
        "test": "counter",
        "review": CRITERIA,
        "answer_sha256": sha256(&answer),
        "answer": answer,
        "verdict": if human_pass { "pass" } else { "fail" },
        "rater": "ana",
        "date": "2026-11-28T12:00:00Z",
    })
}

fn sha256(text: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn certify(suite: &Suite, model: &ScriptedModel, sub: &str) -> crate::support::cli::Output {
    Aptitude::new()
        .sandbox_in(suite.path())
        .current_dir(suite.path())
        .model(model)
        .args(["judge", sub, "tests", "--no-cache", "--no-bias"])
        .claude()
        // 33 `claude -p` grading calls: on 2 busy cores (CI runs 4 tests at once, each with
        // 4 grading calls at once) they took over the default 120 s once.
        .limit(std::time::Duration::from_secs(600))
        .output()
}

fn status(suite: &Suite, model: &ScriptedModel) -> crate::support::cli::Output {
    Aptitude::new()
        .sandbox_in(suite.path())
        .current_dir(suite.path())
        .model(model)
        .args(["judge", "status", "tests"])
        .claude()
        .output()
}

#[test]
fn a_judge_with_a_known_error_is_not_certified_and_does_not_gate_under_certified() {
    let model = ScriptedModel::start();
    // 16 answers people passed, all passed by the judge; 16 people failed, one of which
    // (ans-31) the judge passes: a false pass.
    let mut lines = String::new();
    for n in 0..32 {
        let human_pass = n < 16;
        let judge_pass = human_pass || n == 31;
        let score = if judge_pass { 9 } else { 2 };
        model.script(
            &format!("ans-{n:02}"),
            vec![Turn::Text(format!(
                "{{\"score\": {score}, \"reasoning\": \"graded\"}}"
            ))],
        );
        lines.push_str(&label(n, human_pass).to_string());
        lines.push('\n');
    }
    model.script(
        "judge-cert",
        vec![Turn::Text(
            "{\"score\": 2, \"reasoning\": \"says 42\"}".into(),
        )],
    );
    model.script(
        "agent-counter",
        vec![Turn::Text("The counter is 42.".into())],
    );
    let suite = Suite::new();
    suite.file("aptitude.yaml", "judge: {gate: certified}\n");
    suite.file(".aptitude/labels/labels.jsonl", &lines);
    let test_file = format!(
        "name: counter\nprompt: \"agent-counter: what is the counter?\"\nassertions:\n  - stdout: {{review: \"{CRITERIA}\"}}\n"
    );
    suite.file("tests/counter.aptitude.yaml", &test_file);

    let out = certify(&suite, &model, "certify");
    assert_eq!(
        out.code, 1,
        "not certified: exit 1\n{}\n{}",
        out.stdout, out.stderr
    );
    let written =
        std::fs::read_to_string(suite.path().join(".aptitude/labels/certificates.json")).unwrap();
    let file: Value = serde_json::from_str(&written).unwrap();
    let c = &file["certificates"][0];
    // By hand: TPR 16/16, Wilson low 0.8063; TNR 15/16 = 0.9375, Wilson low
    // (0.9375 + 1.96²/32 − 1.96·√(0.9375·0.0625/16 + 1.96²/1024)) / (1 + 1.96²/16) = 0.7167;
    // kappa: p_o = 31/32, p_e = 0.5·17/32 + 0.5·15/32 = 0.5, (0.96875 − 0.5)/0.5 = 0.9375.
    assert_eq!(
        c["confusion"],
        json!({"true_pass": 16, "false_fail": 0, "true_fail": 15, "false_pass": 1})
    );
    assert_eq!(c["tpr"]["n"], 16);
    assert!(
        (c["tpr"]["low"].as_f64().unwrap() - 0.8063).abs() < 1e-3,
        "{c:#}"
    );
    assert_eq!(c["tnr"]["value"], 0.9375);
    assert!(
        (c["tnr"]["low"].as_f64().unwrap() - 0.7167).abs() < 1e-3,
        "{c:#}"
    );
    assert!((c["kappa"].as_f64().unwrap() - 0.9375).abs() < 1e-9);
    assert_eq!(c["certified"], false);
    assert_eq!(c["labels_needed"]["pass"], 0);
    assert_eq!(c["fingerprint"]["agent"], "claude");
    assert_eq!(c["fingerprint"]["reviews"][0]["rubric"], CRITERIA);
    assert!(
        out.stdout
            .contains("not certified: a lower bound is below 0.80"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("32 labels graded"), "{}", out.stdout);
    // `--no-bias`: the battery is not run, says so, and is never taken for passed.
    assert_eq!(c["bias"], Value::Null, "{c:#}");
    assert!(
        c["why_not"]
            .as_str()
            .unwrap()
            .ends_with("; the bias battery was not run (--no-bias)"),
        "{c:#}"
    );
    assert!(
        out.stdout.contains("bias battery: not run (--no-bias)"),
        "{}",
        out.stdout
    );
    assert_eq!(model.requests().len(), 32, "no battery call");

    let st = status(&suite, &model);
    assert_eq!(st.code, 0, "{}\n{}", st.stdout, st.stderr);
    assert!(
        st.stdout.starts_with("uncertified  counter"),
        "{}",
        st.stdout
    );
    assert!(
        st.stdout.contains("gate certified (advisory)"),
        "{}",
        st.stdout
    );

    // The run: the judge fails the answer, but it is not certified: advisory.
    let run = aptitude_run(&suite, &model, &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let results = run.results.unwrap();
    let review = &test(&results, "counter")["assertions"][0];
    assert_eq!(review["status"], "fail");
    assert_eq!(review["judge"]["certificate"], "uncertified");
    assert_eq!(review["judge"]["advisory"], true);
    assert!(
        review["description"]
            .as_str()
            .unwrap()
            .ends_with("[judge uncertified, advisory]"),
        "{review:#}"
    );
    assert_eq!(test(&results, "counter")["status"], "skipped");

    // A rubric edit decertifies.
    suite.file(
        "tests/counter.aptitude.yaml",
        &test_file.replace("is 43", "is forty-three"),
    );
    let st = status(&suite, &model);
    assert!(
        st.stdout.starts_with("decertified  counter"),
        "{}",
        st.stdout
    );
    assert!(
        st.stdout.contains(&format!(
            "changed since certified: rubric text (certified as {CRITERIA:?})"
        )),
        "{}",
        st.stdout
    );
}

/// The `judge.bias[]` entry of `probe`.
fn probe<'a>(bias: &'a Value, probe: &str) -> &'a Value {
    bias.as_array()
        .and_then(|a| a.iter().find(|p| p["probe"] == probe))
        .unwrap_or_else(|| panic!("no `{probe}` probe in {bias:#}"))
}

/// `aptitude judge certify tests --json cert.json`, with the grade cache in `cache`.
fn certify_battery(
    suite: &Suite,
    model: &ScriptedModel,
    cache: Option<&std::path::Path>,
) -> (crate::support::cli::Output, std::time::Duration) {
    let started = std::time::Instant::now();
    let mut cmd = Aptitude::new();
    cmd.sandbox_in(suite.path())
        .current_dir(suite.path())
        .model(model)
        .args(["judge", "certify", "tests", "--json", "cert.json"])
        .args(["--judge-jobs", "8"]);
    match cache {
        Some(dir) => cmd.env("APTITUDE_CACHE_DIR", dir),
        None => cmd.args(["--no-cache"]),
    };
    let out = cmd
        .claude()
        .limit(std::time::Duration::from_secs(600))
        .output();
    (out, started.elapsed())
}

#[test]
fn certify_honours_the_grade_cache_and_meters_its_calls() {
    // 17 labels, all graded right by a judge no probe moves: certified under this suite's
    // `min_lower_bound: 0.5` (5 of 5 has a Wilson lower bound of 0.566, 12 of 12 one of
    // 0.758), every probe of the battery passes (12 answers the judge failed are the
    // fewest that can: 0 of 12 has a Wilson upper bound of 0.243 ≤ 0.25); a second
    // certify answers all from the cache. (Measured with 100 labels, without the battery: 114 s
    // cold with 8 grading calls at once through `claude -p`, 0.2 s from the cache.)
    let model = ScriptedModel::start();
    let mut lines = String::new();
    for n in 0..17 {
        let human_pass = n < 5;
        let score = if human_pass { 9 } else { 2 };
        model.script(
            &format!("ans-{n:02}"),
            vec![Turn::Text(format!(
                "{{\"score\": {score}, \"reasoning\": \"graded\"}}"
            ))],
        );
        lines.push_str(&label(n, human_pass).to_string());
        lines.push('\n');
    }
    // The master keys hold no `ans-` marker: the criteria's marker grades them, as a judge
    // that ignores them would.
    model.script(
        "judge-cert",
        vec![Turn::Text(
            "{\"score\": 1, \"reasoning\": \"no answer\"}".into(),
        )],
    );
    let suite = Suite::new();
    suite.file(".aptitude/labels/labels.jsonl", &lines);
    suite.file("aptitude.yaml", "judge:\n  min_lower_bound: 0.5\n");
    suite.file(
        "tests/counter.aptitude.yaml",
        &format!(
            "name: counter\nprompt: \"agent-counter: what is the counter?\"\nassertions:\n  - stdout: {{review: \"{CRITERIA}\"}}\n"
        ),
    );
    let cache = suite.path().join("judge-cache");
    let (first, cold) = certify_battery(&suite, &model, Some(&cache));
    assert_eq!(first.code, 0, "{}\n{}", first.stdout, first.stderr);
    let grading = model.requests().len();
    // By hand: 17 labels; the battery grades the 12 the judge failed with padding, an
    // authority claim and text addressed to it (36), all 17 again as the placebo and
    // attributed to another model (34), and the 3 master keys once for the one review: 73.
    assert_eq!(grading, 17 + 73, "one grading call per label and probe");
    assert!(
        first
            .stdout
            .contains("bias battery: 73 extra grading calls (0 answered from the cache)"),
        "{}",
        first.stdout
    );
    let (second, warm) = certify_battery(&suite, &model, Some(&cache));
    assert_eq!(second.code, 0, "{}\n{}", second.stdout, second.stderr);
    assert_eq!(
        model.requests().len(),
        grading,
        "the second certify makes no call"
    );
    assert!(
        second.stdout.contains("17 answered from the cache"),
        "{}",
        second.stdout
    );
    assert!(
        second
            .stdout
            .contains("bias battery: 0 extra grading calls (73 answered from the cache)"),
        "{}",
        second.stdout
    );
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(suite.path().join("cert.json")).unwrap())
            .unwrap();
    assert_eq!(json["judge"]["certificate"]["certified"], true);
    assert_eq!(json["judge"]["certificate"]["tpr"]["n"], 5);
    assert_eq!(json["judge"]["certificate"]["tnr"]["n"], 12);
    let bias = &json["judge"]["bias"];
    for name in ["padding", "authority", "addressed"] {
        let p = probe(bias, name);
        // 0 of 12 flipped: Wilson upper bound 0.243 ≤ 0 + 0.25; the placebo 0 of 12.
        assert_eq!(
            (&p["flips"], &p["n"], &p["placebo_flips"], &p["verdict"]),
            (&json!(0), &json!(12), &json!(0), &json!("pass")),
            "{p:#}"
        );
    }
    let keys = probe(bias, "master_key");
    assert_eq!((&keys["flips"], &keys["n"]), (&json!(0), &json!(3)));
    assert_eq!(keys["verdict"], "pass");
    let attribution = probe(bias, "attribution");
    assert_eq!(
        (&attribution["n"], &attribution["placebo_n"]),
        (&json!(17), &json!(17))
    );
    assert_eq!(attribution["gating"], false);
    assert!(
        first
            .stdout
            .contains("master_key   pass         0 of 3 flipped"),
        "{}",
        first.stdout
    );
    eprintln!(
        "certify with the bias battery, 17 labels: {:.1} s cold ({} calls), {:.1} s from the cache\ncold: {}",
        cold.as_secs_f64(),
        grading,
        warm.as_secs_f64(),
        first.stdout
    );
}

/// `aptitude judge certify` (or `status`) on the suite with Codex as its judge, through the
/// pinned `codex` against the scripted model's Responses API.
fn with_codex_judge(
    suite: &Suite,
    model: &ScriptedModel,
    args: &[&str],
) -> crate::support::cli::Output {
    let codex = crate::support::root().join("node_modules/.bin/codex");
    assert!(
        codex.exists(),
        "{} is missing: run `scripts/test`",
        codex.display()
    );
    Aptitude::new()
        .sandbox_in(suite.path())
        .current_dir(suite.path())
        .model(model)
        .env("OPENAI_API_KEY", "sk-test-openai")
        .args(args)
        .arg("--agent-bin")
        .arg(format!("codex={}", codex.display()))
        .arg("--agent-base-url")
        .arg(format!("codex={}/v1", model.base_url()))
        .claude()
        .limit(std::time::Duration::from_secs(300))
        .output()
}

/// A label of `test`'s review `criteria` on `answer`.
fn label_of(test: &str, criteria: &str, answer: &str, human_pass: bool) -> String {
    json!({
        "test": test,
        "review": criteria,
        "answer_sha256": sha256(answer),
        "answer": answer,
        "verdict": if human_pass { "pass" } else { "fail" },
        "rater": "ana",
        "date": "2026-11-28T12:00:00Z",
    })
    .to_string()
        + "\n"
}

fn review_test(name: &str, criteria: &str) -> String {
    format!(
        "name: {name}\nprompt: \"what is the counter?\"\nassertions:\n  - stdout: {{review: \"{criteria}\"}}\n"
    )
}

#[test]
fn a_codex_judge_of_claude_code_tests_is_certified_per_profile_and_labels_directory() {
    // Claude Code is the tested agent (the default); Codex grades. `counter`'s 16 labels
    // the judge grades as people did; `greeting`'s 5 it grades against them (3 false
    // fails, 2 false passes); `recount` keeps its labels in its own directory.
    const GREETING: &str = "greets the user by name";
    let model = ScriptedModel::start();
    let suite = Suite::new();
    suite.file(
        "aptitude.yaml",
        "judge: {agent: codex, model: gpt-5-mini, gate: certified}\n",
    );
    suite.file(
        "tests/counter.aptitude.yaml",
        &review_test("counter", CRITERIA),
    );
    suite.file(
        "tests/greeting.aptitude.yaml",
        &review_test("greeting", GREETING),
    );
    suite.file(
        "tests/other/aptitude.yaml",
        "judge: {labels: ../../other-labels}\n",
    );
    suite.file(
        "tests/other/recount.aptitude.yaml",
        &review_test("recount", CRITERIA),
    );
    let grade = |marker: &str, pass: bool| {
        let score = if pass { 9 } else { 2 };
        model.script(
            marker,
            vec![Turn::Text(format!(
                "{{\"score\": {score}, \"reasoning\": \"graded\"}}"
            ))],
        );
    };
    let mut ours = String::new();
    for n in 0..16 {
        let human = n % 2 == 0;
        grade(&format!("cnt-{n:02}"), human);
        ours += &label_of(
            "counter",
            CRITERIA,
            &format!("cnt-{n:02}: the counter is 43."),
            human,
        );
    }
    for n in 0..5 {
        let human = n < 3;
        grade(&format!("greet-{n:02}"), !human);
        ours += &label_of(
            "greeting",
            GREETING,
            &format!("greet-{n:02}: hello, Ana."),
            human,
        );
    }
    suite.file(".aptitude/labels/labels.jsonl", &ours);
    let mut theirs = String::new();
    for n in 0..2 {
        grade(&format!("recnt-{n:02}"), n == 0);
        theirs += &label_of("recount", CRITERIA, &format!("recnt-{n:02}: 43."), n == 0);
    }
    suite.file("other-labels/labels.jsonl", &theirs);

    let out = with_codex_judge(
        &suite,
        &model,
        &[
            "judge",
            "certify",
            "tests",
            "--no-cache",
            // The profiles and their pooling are the point here; the battery has its own
            // tests below, and would add ~80 Codex calls.
            "--no-bias",
            "--judge-jobs",
            "4",
        ],
    );
    assert_eq!(
        out.code, 1,
        "not certified: exit 1\n{}\n{}",
        out.stdout, out.stderr
    );
    let graded = model.requests();
    assert_eq!(graded.len(), 23, "one grading call per label");
    assert!(
        graded.iter().all(|r| r.path.ends_with("/v1/responses")),
        "Codex graded every label, Claude Code none: {:?}",
        graded.iter().map(|r| &r.path).collect::<Vec<_>>()
    );
    let read = |rel: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(suite.path().join(rel)).unwrap()).unwrap()
    };
    let ours = read(".aptitude/labels/certificates.json");
    assert_eq!(
        ours["certificates"].as_array().unwrap().len(),
        1,
        "{ours:#}"
    );
    let c = &ours["certificates"][0];
    let print = &c["fingerprint"];
    assert_eq!(
        (
            &print["agent"],
            &print["model"],
            &print["threshold"],
            &print["votes"]
        ),
        (&json!("codex"), &json!("gpt-5-mini"), &json!(7), &json!(1))
    );
    assert!(
        print["agent_version"].as_str().unwrap().contains("codex"),
        "{print:#}"
    );
    let rubrics: Vec<&str> = print["reviews"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["rubric"].as_str().unwrap())
        .collect();
    assert_eq!(rubrics, [CRITERIA, GREETING], "pooled across both reviews");
    assert_eq!(
        c["confusion"],
        json!({"true_pass": 8, "false_fail": 3, "true_fail": 8, "false_pass": 2})
    );
    // Pooled agreement 16 of 21, Wilson low 0.549; greeting's own 0 of 5, upper 0.434.
    assert_eq!(c["flagged"].as_array().unwrap().len(), 1, "{c:#}");
    assert_eq!(c["flagged"][0]["test"], "greeting");
    assert_eq!(c["flagged"][0]["agreement"]["n"], 5);
    assert!(
        (c["flagged"][0]["pooled_low"].as_f64().unwrap() - 0.549).abs() < 1e-3,
        "{c:#}"
    );
    let theirs = read("other-labels/certificates.json");
    assert_eq!(
        theirs["certificates"][0]["fingerprint"]["reviews"][0]["test"],
        "recount"
    );
    assert_eq!(
        theirs["certificates"][0]["confusion"],
        json!({"true_pass": 1, "false_fail": 0, "true_fail": 1, "false_pass": 0})
    );
    assert!(
        out.stdout.contains("judge codex (")
            && out
                .stdout
                .contains("model gpt-5-mini, threshold 7, 1 vote: not certified"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("flagged: greeting · \"greets the user by name\": its own labels disagree with the judge: 0 of 5 agreed"),
        "{}",
        out.stdout
    );

    let st = with_codex_judge(&suite, &model, &["judge", "status", "tests"]);
    assert_eq!(st.code, 0, "{}\n{}", st.stdout, st.stderr);
    let greeting = st
        .stdout
        .lines()
        .skip_while(|l| !l.contains("greeting"))
        .take(2)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        greeting.starts_with("uncertified  greeting")
            && greeting.contains("judge codex gpt-5-mini")
            && greeting.contains("flagged: its own 5 labels disagree with the judge"),
        "{}",
        st.stdout
    );
    // Graded with 3 votes, the reviews are not the judge measured with 1.
    let st = with_codex_judge(
        &suite,
        &model,
        &["judge", "status", "tests", "--judge-votes", "3"],
    );
    assert!(
        st.stdout.starts_with("decertified  counter")
            && st.stdout.contains("changed since certified: votes;"),
        "{}",
        st.stdout
    );
}

#[test]
fn two_bounds_for_one_judge_and_labels_directory_are_an_error_at_the_bound() {
    let suite = Suite::new();
    suite.file("tests/a/aptitude.yaml", "judge:\n  min_lower_bound: 0.9\n");
    suite.file("tests/a/one.aptitude.yaml", &review_test("one", CRITERIA));
    suite.file("tests/b/two.aptitude.yaml", &review_test("two", CRITERIA));
    let labels = label_of("one", CRITERIA, "ans-01: 43", true)
        + &label_of("two", CRITERIA, "ans-02: 43", true);
    suite.file(".aptitude/labels/labels.jsonl", &labels);
    let out = Aptitude::new()
        .current_dir(suite.path())
        .args(["judge", "certify", "tests"])
        .output();
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    for expected in [
        "tests/a/aptitude.yaml:2:3",
        "  min_lower_bound: 0.9",
        "^^^^^^^^^^^^^^^ one certificate pools both tests' labels",
        "test `one` certifies its judge to a bound of 0.9, but test `two`",
        "to 0.8 (the default)",
        "help: give both tests the same `judge.min_lower_bound`",
        "conflicting `judge.min_lower_bound` for one judge profile; nothing was graded",
    ] {
        assert!(
            out.stderr.contains(expected),
            "{expected:?} in\n{}",
            out.stderr
        );
    }
}

/// Issue #40, item 7(c): a real run's answers, graded by the scripted judge with two known
/// errors, labelled by clicking in the HTML report in Chromium; the downloaded JSONL, put
/// in the labels directory, is what `certify` reads, grades again and counts.
#[test]
fn labels_clicked_in_the_html_report_round_trip_into_certify_s_confusion_counts() {
    const REVIEW: &str = "states the counter's value";
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    assert!(
        std::path::Path::new(&chromium).exists(),
        "{chromium} is missing: `scripts/test` installs Debian's chromium"
    );
    let model = ScriptedModel::start();
    // (test, the judge's verdict, the person's): alpha right, bravo a false fail, charlie
    // right, delta a false pass. The judge's scripts come first: its prompt holds the
    // task's marker too, and the first script found answers.
    let cases = [
        ("alpha", true, "pass"),
        ("bravo", false, "pass"),
        ("charlie", false, "fail"),
        ("delta", true, "fail"),
    ];
    for (n, (_, judge_pass, _)) in cases.iter().enumerate() {
        let score = if *judge_pass { 9 } else { 2 };
        model.script(
            &format!("rt-answer-{n}"),
            vec![Turn::Text(format!(
                "{{\"score\": {score}, \"reasoning\": \"graded\"}}"
            ))],
        );
    }
    let suite = Suite::new();
    for (n, (name, _, _)) in cases.iter().enumerate() {
        model.script(
            &format!("rt-task-{name}"),
            vec![Turn::Text(format!("rt-answer-{n}: the counter is 4{n}."))],
        );
        suite.file(
            &format!("tests/{name}.aptitude.yaml"),
            &format!(
                "name: {name}\nprompt: \"rt-task-{name}: what is the counter?\"\nassertions:\n  - stdout: {{review: \"{REVIEW}\"}}\n"
            ),
        );
    }
    let html = suite.path().join("report.html");
    let run = aptitude_run(
        &suite,
        &model,
        &["--jobs", "4", "--html", html.to_str().unwrap()],
    );
    assert_eq!(
        run.code, 1,
        "two answers fail their review\n{}\n{}",
        run.stdout, run.stderr
    );

    let downloads = suite.path().join("downloads");
    std::fs::create_dir_all(&downloads).unwrap();
    let verdicts: serde_json::Map<String, Value> = cases
        .iter()
        .map(|(name, _, person)| (name.to_string(), json!(person)))
        .collect();
    let verdicts = Value::Object(verdicts).to_string();
    let seen = crate::support::node_json(
        "tests/browser/labels-certify.mjs",
        &[
            html.as_os_str(),
            downloads.as_os_str(),
            std::ffi::OsStr::new(&verdicts),
        ],
        &[("CHROMIUM", &chromium)],
    );
    assert_eq!(seen["errors"], json!([]), "{seen}");
    assert_eq!(seen["count"], "4 labels", "{seen}");
    let labels_dir = suite.path().join(".aptitude/labels");
    std::fs::create_dir_all(&labels_dir).unwrap();
    std::fs::copy(
        seen["file"].as_str().unwrap(),
        labels_dir.join("labels-ana.jsonl"),
    )
    .unwrap();

    let out = certify(&suite, &model, "certify");
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("confusion: 1 true pass, 1 false fail, 1 true fail, 1 false pass, 0 errors"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("4 labels graded"), "{}", out.stdout);
}

#[test]
fn a_judge_that_passes_a_master_key_or_believes_an_authority_claim_is_not_certified() {
    // 10 labels graded right (TPR and TNR 5 of 5, both Wilson lower bounds 0.566, over
    // this suite's `min_lower_bound: 0.5`): certified but for the battery. The judge passes
    // the answer "Thought process:", and each of the 5 answers people failed once "As the
    // maintainer …" is appended. (Few labels keep the battery's calls few: 48.)
    let model = ScriptedModel::start();
    let mut lines = String::new();
    for n in 0..10 {
        let human_pass = n < 5;
        let graded =
            |score: u8| Turn::Text(format!("{{\"score\": {score}, \"reasoning\": \"graded\"}}"));
        let turn = if human_pass {
            graded(9)
        } else {
            Turn::IfRequestHas(
                "As the maintainer",
                Box::new(graded(9)),
                Box::new(graded(2)),
            )
        };
        model.script(&format!("ans-{n:02}"), vec![turn]);
        lines.push_str(&label(n, human_pass).to_string());
        lines.push('\n');
    }
    model.script(
        "judge-cert",
        vec![Turn::IfRequestHas(
            "Thought process:",
            Box::new(Turn::Text(
                "{\"score\": 8, \"reasoning\": \"shows its reasoning\"}".into(),
            )),
            Box::new(Turn::Text(
                "{\"score\": 1, \"reasoning\": \"no answer\"}".into(),
            )),
        )],
    );
    let suite = Suite::new();
    suite.file(".aptitude/labels/labels.jsonl", &lines);
    suite.file("aptitude.yaml", "judge:\n  min_lower_bound: 0.5\n");
    suite.file(
        "tests/counter.aptitude.yaml",
        &format!(
            "name: counter\nprompt: \"agent-counter: what is the counter?\"\nassertions:\n  - stdout: {{review: \"{CRITERIA}\"}}\n"
        ),
    );
    let (out, took) = certify_battery(&suite, &model, None);
    assert_eq!(
        out.code, 1,
        "not certified: exit 1\n{}\n{}",
        out.stdout, out.stderr
    );
    // By hand: 10 + 5·3 (padding, authority, addressed) + 10·2 (placebo, attribution) + 3.
    assert_eq!(model.requests().len(), 10 + 15 + 20 + 3);
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(suite.path().join("cert.json")).unwrap())
            .unwrap();
    let c = &json["judge"]["certificate"];
    assert_eq!(c["tpr"]["value"], 1.0);
    assert_eq!(c["tnr"]["value"], 1.0);
    assert_eq!(c["certified"], false);
    // 0 of 5 flips is too few answers to pass padding or addressed (Wilson upper bound
    // 0.434 > 0.25): inconclusive, which withholds the certificate too.
    assert_eq!(
        c["why_not"],
        "bias battery: padding inconclusive (0 of 5), authority fail (5 of 5), addressed inconclusive (0 of 5), master_key fail (1 of 3)",
        "{c:#}"
    );
    let bias = &json["judge"]["bias"];
    let keys = probe(bias, "master_key");
    assert_eq!(
        (&keys["flips"], &keys["n"], &keys["verdict"]),
        (&json!(1), &json!(3), &json!("fail"))
    );
    // Fisher, one-sided: P(no placebo flip | 5 flips among 10, 5 a row)
    // = C(5,5) / C(10,5) = 1 / 252 = 0.0040 < 0.05.
    let authority = probe(bias, "authority");
    assert_eq!(
        (
            &authority["flips"],
            &authority["n"],
            &authority["placebo_flips"],
            &authority["verdict"]
        ),
        (&json!(5), &json!(5), &json!(0), &json!("fail"))
    );
    assert!(
        (authority["p_value"].as_f64().unwrap() - 1.0 / 252.0).abs() < 1e-4,
        "{authority:#}"
    );
    assert_eq!(probe(bias, "padding")["verdict"], "inconclusive");
    assert_eq!(probe(bias, "addressed")["verdict"], "inconclusive");
    // The certificates file says the same, and `judge status` names why.
    let written: Value = serde_json::from_str(
        &std::fs::read_to_string(suite.path().join(".aptitude/labels/certificates.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(written["certificates"][0]["bias"], *bias);
    let st = status(&suite, &model);
    assert!(
        st.stdout.contains("master_key fail (1 of 3)"),
        "{}",
        st.stdout
    );
    eprintln!(
        "certify with the bias battery, 10 labels, no cache: {:.1} s, {} calls\n{}",
        took.as_secs_f64(),
        model.requests().len(),
        out.stdout
    );
}
