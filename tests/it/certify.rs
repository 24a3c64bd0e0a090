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
        st.stdout.contains("changed since certified: rubric text"),
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
    // 34 labels, all graded right by a judge no probe moves: certified (17 of 17 has a
    // Wilson lower bound of 0.816), every probe of the battery passes; a second certify
    // answers all from the cache. (Measured with 100 labels, without the battery: 114 s
    // cold with 8 grading calls at once through `claude -p`, 0.2 s from the cache.)
    let model = ScriptedModel::start();
    let mut lines = String::new();
    for n in 0..34 {
        let human_pass = n % 2 == 0;
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
    // By hand: 34 labels; the battery grades the 17 the judge failed with padding, an
    // authority claim and text addressed to it (51), all 34 again as the placebo and
    // attributed to another model (68), and the 3 master keys once for the one review: 122.
    assert_eq!(grading, 34 + 122, "one grading call per label and probe");
    assert!(
        first
            .stdout
            .contains("bias battery: 122 extra grading calls (0 answered from the cache)"),
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
        second.stdout.contains("34 answered from the cache"),
        "{}",
        second.stdout
    );
    assert!(
        second
            .stdout
            .contains("bias battery: 0 extra grading calls (122 answered from the cache)"),
        "{}",
        second.stdout
    );
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(suite.path().join("cert.json")).unwrap())
            .unwrap();
    assert_eq!(json["judge"]["certificate"]["certified"], true);
    assert_eq!(json["judge"]["certificate"]["tpr"]["n"], 17);
    let bias = &json["judge"]["bias"];
    for name in ["padding", "authority", "addressed"] {
        let p = probe(bias, name);
        // 0 of 17 flipped: Wilson upper bound 0.184 ≤ 0 + 0.25; the placebo 0 of 17.
        assert_eq!(
            (&p["flips"], &p["n"], &p["placebo_flips"], &p["verdict"]),
            (&json!(0), &json!(17), &json!(0), &json!("pass")),
            "{p:#}"
        );
    }
    let keys = probe(bias, "master_key");
    assert_eq!((&keys["flips"], &keys["n"]), (&json!(0), &json!(3)));
    assert_eq!(keys["verdict"], "pass");
    let attribution = probe(bias, "attribution");
    assert_eq!(
        (&attribution["n"], &attribution["placebo_n"]),
        (&json!(34), &json!(34))
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
        "certify with the bias battery, 34 labels: {:.1} s cold ({} calls), {:.1} s from the cache\ncold: {}",
        cold.as_secs_f64(),
        grading,
        warm.as_secs_f64(),
        first.stdout
    );
}

#[test]
fn a_judge_that_passes_a_master_key_or_believes_an_authority_claim_is_not_certified() {
    // 32 labels graded right (TPR and TNR 16 of 16, both lower bounds 0.806): certified
    // but for the battery. The judge passes the answer "Thought process:", and 5 of the
    // 16 answers people failed once "As the maintainer …" is appended.
    let model = ScriptedModel::start();
    let mut lines = String::new();
    for n in 0..32 {
        let human_pass = n < 16;
        let graded =
            |score: u8| Turn::Text(format!("{{\"score\": {score}, \"reasoning\": \"graded\"}}"));
        let turn = if human_pass {
            graded(9)
        } else if n < 21 {
            Turn::IfRequestHas(
                "As the maintainer",
                Box::new(graded(9)),
                Box::new(graded(2)),
            )
        } else {
            graded(2)
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
    // By hand: 32 + 16·3 (padding, authority, addressed) + 32·2 (placebo, attribution) + 3.
    assert_eq!(model.requests().len(), 32 + 48 + 64 + 3);
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(suite.path().join("cert.json")).unwrap())
            .unwrap();
    let c = &json["judge"]["certificate"];
    assert_eq!(c["tpr"]["value"], 1.0);
    assert_eq!(c["tnr"]["value"], 1.0);
    assert_eq!(c["certified"], false);
    assert_eq!(
        c["why_not"], "bias battery: authority fail (5 of 16), master_key fail (1 of 3)",
        "{c:#}"
    );
    let bias = &json["judge"]["bias"];
    let keys = probe(bias, "master_key");
    assert_eq!(
        (&keys["flips"], &keys["n"], &keys["verdict"]),
        (&json!(1), &json!(3), &json!("fail"))
    );
    // Fisher, one-sided: P(no placebo flip | 5 flips among 32, 16 a row)
    // = C(16,5) / C(32,5) = 4368 / 201376 = 0.0217 < 0.05.
    let authority = probe(bias, "authority");
    assert_eq!(
        (
            &authority["flips"],
            &authority["n"],
            &authority["placebo_flips"],
            &authority["verdict"]
        ),
        (&json!(5), &json!(16), &json!(0), &json!("fail"))
    );
    assert!(
        (authority["p_value"].as_f64().unwrap() - 0.0217).abs() < 1e-4,
        "{authority:#}"
    );
    // 0 of 16: Wilson upper bound 0.194 ≤ 0.25.
    assert_eq!(probe(bias, "padding")["verdict"], "pass");
    assert_eq!(probe(bias, "addressed")["verdict"], "pass");
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
        "certify with the bias battery, 32 labels, no cache: {:.1} s, {} calls\n{}",
        took.as_secs_f64(),
        model.requests().len(),
        out.stdout
    );
}
