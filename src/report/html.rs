//! The HTML report (`--html FILE`): one self-contained file, rendered with askama
//! (`templates/report.html`, each test's details from `templates/test_body.html`) from the
//! results model.
//!
//! No CDN, fonts or external scripts: the CSS and the few lines of JavaScript (the
//! "failures only" filter, details loaded on demand) are inline, so the file works opened
//! from disk or as a CI artifact. Every value is HTML-escaped by askama — an agent answer
//! containing `<script>` shows as text — and its control characters are shown
//! ([`crate::shared::inert::document`]: `^[`), never written raw. Each run's run view — its
//! trajectory turn by turn, its files as diffs, its model requests, a repeated test's runs
//! side by side — is [`super::trajectory`]'s; tool-call inputs and outputs are collapsed
//! (`<details>`) and cut at [`OUTPUT_MAX`] characters with a marker.
//!
//! The first screen is the first failure: tests come failures first (each keeping its
//! results index as its id, `t3`), the first failing one open with its failed assertions'
//! reasons shown (never folded); the sandbox's proof is in the header once, and in a test
//! only where it differs; routing, the agent matrix, variants and coverage follow the
//! tests in their own sections.
//!
//! Large suites: every test has its summary line in the page, server-rendered. With at most
//! [`INLINE_MAX_TESTS`] tests the details (assertions, tool calls, runs, answer) are inline
//! too, so the report reads without JavaScript. Above it, each test's details (its runs as
//! placeholders) and each run's view are rendered by the same templates and packed: the
//! pieces of [`CHUNK_TESTS`] consecutive tests, like pieces together, gzip-compressed and
//! base64-encoded, a line a chunk, into a `<script type="application/octet-stream"
//! id="details-data">` that the page's script unpacks with the browser's
//! `DecompressionStream` when a test, then a run, is opened. 5,000 tests × 3 runs × 10
//! tool calls make 6.1 MB instead of about 300 MB of HTML (20.2 MB packed a test at a time),
//! and the first screen only lays out summary lines (`cargo bench --bench report_render`;
//! `bash benches/report_first_screen.sh` times it in Chromium). The results are redacted
//! before they reach this module, so the compressed details hold no secret either.
//!
//! Accessible (axe-core finds nothing, every test expanded): headings go h1 → h2, every
//! scrollable box is focusable with a name, and the filter only shows with JavaScript.
//!
//! A page with a judged answer (a graded `stdout` review) carries label controls under each
//! one and a rater bar with a JSONL download ([`super::labels`]); their script is appended
//! to the page's one script, so a page without them has exactly [`SCRIPT`].

use askama::Template;

use super::json::source::TestSource;
use super::trajectory::status_class;
use crate::shared::text::format_duration;
use crate::transcript::display::format_usage;
use crate::verdict::results::{AssertionStatus, Results, Summary, TestResult};

/// The most tests whose details are inline in the page (readable without JavaScript); a
/// larger suite's details are compressed and loaded when a test is opened.
pub const INLINE_MAX_TESTS: usize = 200;

/// How many consecutive tests' details a packed chunk holds (a larger suite's): opening a
/// test unpacks its chunk, up to 32 tests × 60 KiB of HTML at 5,000 × 3 (milliseconds),
/// while more tests a chunk compress only a little better (0.60 KB a test at 32, 0.56 at
/// 64).
pub const CHUNK_TESTS: usize = 32;

/// The most characters of one tool input, tool output or answer shown in the report.
pub const OUTPUT_MAX: usize = super::trajectory::OUTPUT_MAX;

/// `text`, cut to [`OUTPUT_MAX`] characters with a marker saying how much was left out.
/// A run's exec record in words, and its lines (see `RunView::execs`).
fn exec_lines(e: &crate::sandbox::exec::check::ExecReport) -> (String, Vec<String>) {
    let mut lines: Vec<String> = e.findings.iter().chain(&e.notes).cloned().collect();
    lines.extend(e.unclaimed.iter().map(|u| {
        let exit = u
            .exit_code
            .map(|c| format!(" → exit {c}"))
            .unwrap_or_default();
        let by = u
            .run_by
            .as_deref()
            .map(|b| format!(" (run by {})", crate::shared::text::truncate(b, 120)))
            .unwrap_or_default();
        format!(
            "ran, not claimed by any tool call: {}{exit}{by}",
            crate::shared::text::truncate(&u.command, 300)
        )
    }));
    (e.phrase(), lines)
}

fn cut(text: &str) -> String {
    crate::shared::text::truncate_lines(text, OUTPUT_MAX)
}

struct Stat {
    label: &'static str,
    value: String,
    id: &'static str,
}

struct AssertionView {
    class: &'static str,
    icon: &'static str,
    description: String,
    line: u32,
    score: Option<String>,
    detail: Option<String>,
    open: bool,
    /// Repeated tests: `3/5 runs · flaky`.
    tally: Option<String>,
}

struct TestView {
    id: String,
    class: &'static str,
    icon: &'static str,
    name: String,
    file: String,
    status: &'static str,
    meta: String,
    prompt: Option<String>,
    error: Option<String>,
    assertions: Vec<AssertionView>,
    /// A test run once: its run view (trajectory, files, model requests), rendered.
    detail: Option<String>,
    answer: Option<String>,
    workspace: Option<String>,
    /// Repeated tests: `3/5 runs passed (flaky) · pass rate 60% (95% CI 23%–88%)`.
    repeat: Option<String>,
    /// Repeated tests: each run, with its own run view.
    runs: Vec<RunView>,
    /// Repeated tests: the runs side by side, call by call.
    side: Option<super::trajectory::SideBySide>,
    /// How the run was fenced in (`bubblewrap 0.8.0`, `not sandboxed`), and what the
    /// sandbox proved before the agent started: (held, what was tried, what happened).
    sandbox: Option<(String, Vec<SandboxCheck>)>,
    /// The run's transcript against the wire, in words (`witnessed by the model gateway:
    /// …`, `unwitnessed: …`).
    witness: Option<String>,
    /// What the kernel saw run (`exec record (kernel): …`, `no exec record: …`), and the
    /// lines under it: findings, the kernel's exit codes that overruled the transcript's,
    /// and each program that ran not claimed by any tool call.
    execs: Option<(String, Vec<String>)>,
    /// Each workspace hook that ran, by the exec record, in words
    /// ([`crate::sandbox::exec::hooks::HookRan::phrase`]).
    hooks: Vec<String>,
    /// A test run once: the label controls of its judged answer.
    labels: Option<super::labels::AnswerLabels>,
    /// Each run's view is a placeholder, unpacked on its own when the run is opened (a
    /// suite above [`INLINE_MAX_TESTS`]); else inline.
    lazy_runs: bool,
}

/// One check of a run's sandbox proof: whether it held, what was tried, what happened.
type SandboxCheck = (bool, String, String);

/// One run of a repeated test.
struct RunView {
    /// Its anchor: `t3-r2` (run 2 of test 3), opened by the page's script when the page's
    /// address ends with it.
    id: String,
    class: &'static str,
    label: String,
    error: Option<String>,
    assertions: Vec<AssertionView>,
    /// Its run view, rendered.
    detail: String,
    answer: Option<String>,
    /// The label controls of its judged answer.
    labels: Option<super::labels::AnswerLabels>,
}

/// Everything under one test's summary line (`templates/test_body.html`).
#[derive(Template)]
#[template(path = "test_body.html")]
struct TestBody<'a> {
    t: &'a TestView,
}

/// One run of a repeated test under its summary line (`templates/run_body.html`).
#[derive(Template)]
#[template(path = "run_body.html")]
struct RunBody<'a> {
    r: &'a RunView,
}

/// One test's summary line, and its details when they are inline.
struct RowView {
    id: String,
    class: &'static str,
    icon: &'static str,
    name: String,
    file: String,
    status: &'static str,
    meta: String,
    /// The rendered `<div class="body">`, or `None` when it is in the compressed details.
    body: Option<String>,
}

#[derive(Template)]
#[template(path = "report.html")]
struct Report {
    title: String,
    subtitle: String,
    /// The run's sandbox, in words, and whether a run was unsandboxed (a warning).
    sandbox: Option<(String, bool)>,
    /// The checks the suite's sandbox proved (the first proved run's), shown once here
    /// rather than in every test; empty when no run proved a fence.
    proof: Vec<SandboxCheck>,
    /// How far the transcripts are witnessed by the model gateway, in words, and whether
    /// some are not (a warning).
    witness: Option<(String, bool)>,
    stats: Vec<Stat>,
    rows: Vec<RowView>,
    /// Suites above [`INLINE_MAX_TESTS`]: the tests' details in chunks of [`CHUNK_TESTS`],
    /// each gzip then base64 on a line of its own ([`packed_chunk`]), in results order.
    lazy: Option<String>,
    inline_max: usize,
    /// [`CHUNK_TESTS`], for the page's script.
    chunk_tests: usize,
    /// Some run has a judged answer: the rater bar and the label controls' script.
    labelling: bool,
    /// The page's one script: [`SCRIPT`], and [`super::labels::SCRIPT`] when labelling.
    script: String,
    script_hash: String,
    matrix: Option<MatrixView>,
    /// The releases side by side ([`crate::verdict::versions`]): a row of cells per
    /// (agent, version), the pass rate's coloured by its runs.
    versions: Vec<Vec<MatrixCell>>,
    /// The judged pass rate of each certified judge, raw and corrected for its errors
    /// ([`crate::verdict::results::JudgedPassRate::row`]).
    judged: Vec<[String; 4]>,
    variants: Vec<VariantsView>,
    /// The instruction files' coverage, when the results have it.
    coverage: Option<CoverageView>,
    /// The routing suites' tables ([`crate::report::routing::tables`]).
    routing: Vec<crate::report::routing::Table>,
}

/// The coverage table: a caption and a row per rule (askama escapes every cell).
struct CoverageView {
    caption: String,
    rows: Vec<CoverageRow>,
}

/// One rule of [`CoverageView`].
struct CoverageRow {
    place: String,
    id: String,
    text: String,
    status: &'static str,
    class: &'static str,
    tests: String,
    pass_rate: String,
    effect: String,
}

fn coverage_view(results: &Results) -> Option<CoverageView> {
    use crate::verdict::coverage::RuleStatus;
    let c = results.coverage.as_ref()?;
    let percent = |r: Option<f64>| r.map_or("–".to_owned(), |r| format!("{:.0}%", r * 100.0));
    Some(CoverageView {
        caption: format!("{} of {} rules covered", c.totals.covered, c.totals.rules),
        rows: c
            .rules
            .iter()
            .map(|r| {
                let (status, class) = match r.status {
                    RuleStatus::Covered => ("covered", "passed"),
                    RuleStatus::Uncovered => ("uncovered", "failed"),
                    RuleStatus::NoMeasuredEffect => ("no measured effect", "error"),
                };
                CoverageRow {
                    place: crate::shared::inert::document(&format!("{}:{}", r.file, r.line))
                        .into_owned(),
                    id: r.id.clone(),
                    text: crate::shared::inert::document(
                        &crate::shared::cut::chars(&r.text, 200).kept,
                    )
                    .into_owned(),
                    status,
                    class,
                    tests: crate::shared::inert::document(&r.tests.join(", ")).into_owned(),
                    pass_rate: percent(r.pass_rate),
                    effect: r.effect.as_ref().map_or_else(String::new, |e| {
                        format!(
                            "{} with / {} without ({}{})",
                            percent(e.with),
                            percent(e.without),
                            e.variant,
                            e.p_value.map_or_else(String::new, |p| format!(
                                ", {}",
                                crate::shared::text::p_phrase(p)
                            ))
                        )
                    }),
                }
            })
            .collect(),
    })
}

/// One test's variants side by side ([`crate::verdict::variants::VariantComparison::grid`]).
struct VariantsView {
    title: String,
    file: String,
    columns: Vec<String>,
    rows: Vec<VariantsRow>,
}

/// A row of a [`VariantsView`]: its label, one cell per variant.
struct VariantsRow {
    label: String,
    /// An assertion's row (the others hold the test's figures).
    assertion: bool,
    cells: Vec<MatrixCell>,
}

fn variants_views(results: &Results) -> Vec<VariantsView> {
    let comparisons = &results.summary.variants;
    let with_agent = crate::verdict::variants::several_agents(comparisons);
    comparisons
        .iter()
        .map(|c| VariantsView {
            title: c.title(with_agent),
            file: c.file.clone(),
            columns: c.columns().into_iter().map(str::to_owned).collect(),
            rows: c
                .grid()
                .into_iter()
                .map(|row| {
                    // The pass-rate row is coloured by each variant's verdict.
                    let cells = row
                        .cells
                        .into_iter()
                        .zip(&c.variants)
                        .map(|(text, v)| {
                            let class = if row.kind == crate::verdict::variants::RowKind::PassRate {
                                status_class(v.status).0
                            } else {
                                "figure"
                            };
                            MatrixCell { class, text }
                        })
                        .collect();
                    VariantsRow {
                        label: row.label,
                        assertion: row.kind == crate::verdict::variants::RowKind::Assertion,
                        cells,
                    }
                })
                .collect(),
        })
        .collect()
}

fn versions_rows(results: &Results) -> Vec<Vec<MatrixCell>> {
    results
        .summary
        .versions
        .iter()
        .map(|v| {
            let rate_class = status_class(v.status()).0;
            crate::verdict::versions::row(v)
                .into_iter()
                .enumerate()
                .map(|(j, text)| MatrixCell {
                    class: if j == 3 { rate_class } else { "figure" },
                    text,
                })
                .collect()
        })
        .collect()
}

/// The tests × agents table: header cells, then rows of (test label, cells).
struct MatrixView {
    agents: Vec<String>,
    rows: Vec<(String, Vec<MatrixCell>)>,
}

/// One cell: its CSS class and text (`passed`, `failed 2/5`, `—`).
struct MatrixCell {
    class: &'static str,
    text: String,
}

fn matrix_view(results: &Results) -> Option<MatrixView> {
    let m = results.matrix()?;
    Some(MatrixView {
        agents: m.columns.iter().map(|c| c.label()).collect(),
        rows: m
            .rows
            .iter()
            .map(|r| {
                let label = match &r.variant {
                    Some(v) => format!("{} ({v})", r.name),
                    None => r.name.clone(),
                };
                let cells = r
                    .cells
                    .iter()
                    .map(|c| match c {
                        Some((status, runs)) => {
                            let (class, _, word) = status_class(*status);
                            MatrixCell {
                                class,
                                text: match runs {
                                    Some(runs) => format!("{word} {runs}"),
                                    None => word.to_owned(),
                                },
                            }
                        }
                        None => MatrixCell {
                            class: "none",
                            text: "—".to_owned(),
                        },
                    })
                    .collect();
                (label, cells)
            })
            .collect(),
    })
}

/// The page's only script: the "failures only" filter (hidden until this script shows it,
/// so that without JavaScript no control does nothing); then either failing tests opened
/// (details inline), or — a large suite — a test's details unpacked from `#details-data`
/// when it is opened, and a run's view when the run is (line N of it is the chunk of tests
/// N × `data-chunk` on, see [`packed_chunk`]; a piece replaces its placeholder, the
/// `<div class="body">` or `<div class="run-body">` whose id is its `details`'). An address ending in `#tN` (test
/// N) or `#tN-rM` (its run M), as the PR comment links a regressed test's run view, opens
/// that test and run (once its details are unpacked) and scrolls to it. The Content-Security-Policy allows
/// this script by its hash and nothing else, so even an escaping bug could not run injected
/// code; HTML set through `outerHTML` never runs scripts either.
const SCRIPT: &str = r#"(function () {
  document.getElementById("filter").hidden = false;
  var box = document.getElementById("failures-only");
  box.addEventListener("change", function () {
    document.body.classList.toggle("failures-only", box.checked);
  });
  var wanted = null;
  function show() {
    var el = wanted && document.getElementById(wanted);
    if (!el) return;
    for (var d = el; d; d = d.parentElement) if (d.tagName === "DETAILS") d.open = true;
    el.scrollIntoView();
    wanted = null;
  }
  function go() {
    var m = /^#(t\d+)(-r\d+)?$/.exec(location.hash);
    var test = m && document.getElementById(m[1]);
    if (!test) return;
    wanted = m[1] + (m[2] || "");
    test.open = true;
    show();
  }
  window.addEventListener("hashchange", go);
  var data = document.getElementById("details-data");
  if (!data) {
    document.querySelectorAll("details.test.failed, details.test.error").forEach(function (d) { d.open = true; });
    go();
    return;
  }
  var size = Number(data.getAttribute("data-chunk"));
  var lines = null, chunks = new Map();
  // Chunk `c`'s pieces by id, unpacked once; the last few are kept.
  function pieces(c) {
    if (chunks.has(c)) return chunks.get(c);
    lines = lines || data.textContent.split("\n");
    var bin = atob(lines[c] || "");
    var bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    var html = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    var unpacked = new Response(html).text().then(function (text) {
      var byId = {};
      text.split("\0").forEach(function (piece) {
        var nl = piece.indexOf("\n");
        if (nl > 0) byId[piece.slice(0, nl)] = piece.slice(nl + 1);
      });
      return byId;
    });
    chunks.set(c, unpacked);
    if (chunks.size > 4) chunks.delete(chunks.keys().next().value);
    return unpacked;
  }
  // A test's details when it is opened, a run's view when the run is.
  document.addEventListener("toggle", function (e) {
    var d = e.target;
    if (!d.open || !d.matches("details.test, details.run")) return;
    var body = d.querySelector(":scope > .body[data-lazy], :scope > .run-body[data-lazy]");
    var test = d.closest("details.test");
    if (!body || !test) return;
    body.removeAttribute("data-lazy");
    body.setAttribute("aria-busy", "true");
    pieces(Math.floor(Number(test.id.slice(1)) / size)).then(function (byId) {
      if (!(d.id in byId)) throw new Error("no details for " + d.id);
      body.outerHTML = byId[d.id];
      show();
    }).catch(function (err) {
      body.removeAttribute("aria-busy");
      body.textContent = "These details could not be unpacked: " + err;
    });
  }, true);
  // The first screen shows the first failure and why, as a small report's does.
  var first = !location.hash && document.querySelector("details.test.failed, details.test.error");
  if (first) first.open = true;
  go();
})();"#;

/// The CSP source of `script`: `sha256-` and the standard base64 of its SHA-256, as the
/// `script-src` directive wants it.
fn script_hash(script: &str) -> String {
    use base64::Engine as _;
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(script.as_bytes());
    format!(
        "sha256-{}",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

fn assertion(a: &crate::verdict::results::AssertionResult) -> AssertionView {
    let (class, icon) = match a.status {
        AssertionStatus::Pass => ("pass", "✓"),
        AssertionStatus::Fail => ("fail", "✗"),
        AssertionStatus::Error => ("error", "!"),
        AssertionStatus::Invalid => ("error", "?"),
        AssertionStatus::Skip => ("skip", "⊘"),
    };
    let score = a.score.map(|s| {
        let cached = if a.cached == Some(true) {
            " · cached"
        } else {
            ""
        };
        format!(
            "score {s}/10 · threshold {}{cached}",
            a.threshold.unwrap_or(7)
        )
    });
    AssertionView {
        class,
        icon,
        description: a.description.clone(),
        line: a.line,
        score,
        detail: a.detail.as_deref().map(cut),
        open: false,
        tally: None,
    }
}

fn error_text(t: &TestResult) -> Option<String> {
    t.error.as_ref().map(|e| match t.error_kind {
        Some(kind) => format!("[{}] {e}", kind.word()),
        None => e.clone(),
    })
}

fn run_view(
    test: &str,
    id: String,
    number: usize,
    r: &TestResult,
) -> Result<RunView, askama::Error> {
    let (class, _, status) = status_class(r.status);
    let mut label = format!(
        "Run {number} · {status} · {}",
        format_duration(r.duration_ms)
    );
    if !r.attempts.is_empty() {
        label.push_str(&format!(
            " · {} retried infra error{}",
            r.attempts.len(),
            if r.attempts.len() == 1 { "" } else { "s" }
        ));
    }
    let detail = super::trajectory::run_detail(r);
    let of = format!("{test} · run {number}");
    Ok(RunView {
        labels: super::labels::answer_labels(r, &id, 3, &of),
        id,
        class,
        label,
        error: error_text(r),
        assertions: r.assertions.iter().map(assertion).collect(),
        detail: super::trajectory::render_detail(&detail, &of, 3)?,
        answer: r
            .transcript
            .as_ref()
            .and_then(|tr| tr.final_text.as_deref())
            .map(cut),
    })
}

/// Whether `sb` proved the same fence as the suite's header says (`suite_mode`, the
/// sandbox every proved run used): then the test does not repeat it.
fn same_as_suite(sb: &crate::sandbox::Record, suite_mode: Option<&str>) -> bool {
    !sb.is_off()
        && !sb.verified.is_empty()
        && sb.verified.iter().all(|c| c.held)
        && suite_mode == Some(sb.mode.as_str())
}

/// The view of test `index`; its sandbox block only when its proof differs from the
/// suite's (`suite_mode`, see [`same_as_suite`]).
fn test_view(
    index: usize,
    t: &TestResult,
    suite_mode: Option<&str>,
) -> Result<TestView, askama::Error> {
    let (class, icon, status) = status_class(t.status);
    let mut meta = vec![format_duration(t.duration_ms)];
    if let Some(u) = &t.usage {
        meta.push(format_usage(u));
        if let Some(turns) = u.turns {
            meta.push(format!("{turns} turn{}", if turns == 1 { "" } else { "s" }));
        }
    }
    if let Some(agent) = &t.agent {
        meta.push(agent.clone());
    }
    if let Some(r) = &t.reused {
        meta.push(format!("↺ reused from {}", r.from));
    }
    let id = format!("t{index}");
    let name = t.qualified_name(false);
    let detail = if t.runs.is_empty() {
        let d = super::trajectory::run_detail(t);
        (!d.is_empty())
            .then(|| super::trajectory::render_detail(&d, &name, 2))
            .transpose()?
    } else {
        None
    };
    let numbered: Vec<(u32, String, &TestResult)> = t
        .numbered_runs()
        .map(|(n, r)| (n, format!("{id}-r{n}"), r))
        .collect();
    let runs = numbered
        .iter()
        .map(|(n, anchor, r)| run_view(&name, anchor.clone(), *n as usize, r))
        .collect::<Result<Vec<_>, _>>()?;
    let mut assertions: Vec<AssertionView> = t.assertions.iter().map(assertion).collect();
    for (i, a) in assertions.iter_mut().enumerate() {
        a.open = a.class == "fail" || a.class == "error";
        if let Some(r) = &t.repeat
            && let Some(tally) = r.assertions.get(i)
            // A routing prompt's line already says in how many runs it chose what.
            && t.assertions.get(i).is_none_or(|a| a.kind != "routing")
        {
            let flaky = if tally.flaky { " · flaky" } else { "" };
            a.tally = Some(format!("{}{flaky}", tally.phrase(r.runs)));
        }
    }
    Ok(TestView {
        lazy_runs: false,
        labels: t
            .runs
            .is_empty()
            .then(|| super::labels::answer_labels(t, &id, 2, &name))
            .flatten(),
        side: super::trajectory::side_by_side(&numbered),
        id,
        class,
        icon,
        name,
        file: t.file.clone(),
        status,
        meta: meta.join(" · "),
        prompt: t.prompt.clone(),
        error: error_text(t),
        assertions,
        detail,
        answer: t
            .transcript
            .as_ref()
            .and_then(|tr| tr.final_text.as_deref())
            .map(cut),
        workspace: t.workspace.clone(),
        witness: t.witness.as_ref().map(|w| w.phrase()),
        execs: t.execs.as_ref().map(exec_lines),
        hooks: t.hooks_ran.iter().map(|h| h.phrase()).collect(),
        sandbox: t
            .sandbox
            .as_ref()
            .filter(|sb| !same_as_suite(sb, suite_mode))
            .map(|sb| {
                let mode = if sb.is_off() {
                    "not sandboxed (--sandbox off): the agent saw the host as aptitude does"
                        .to_owned()
                } else {
                    sb.mode.clone()
                };
                let checks = sb
                    .verified
                    .iter()
                    .map(|c| (c.held, c.tried.clone(), c.detail.clone()))
                    .collect();
                (mode, checks)
            }),
        repeat: t.repeat.as_ref().map(|r| {
            let mut parts = vec![r.headline()];
            parts.extend(r.rate_phrase());
            if let Some(e) = r.estimate_at_min_pass() {
                parts.push(format!(
                    "pass@{k} {:.2} · pass^{k} {:.2}",
                    e.pass_at_k,
                    e.pass_hat_k,
                    k = e.k
                ));
            }
            parts.join(" · ")
        }),
        runs,
    })
}

/// One test's pieces in a packed chunk: its details (`tN`, runs as placeholders) and
/// each run's (`tN-rM`), each as (id, HTML).
struct Pieces {
    head: (String, String),
    runs: Vec<(String, String)>,
}

/// Consecutive tests' pieces, gzip-compressed, as standard base64 (no line breaks): every
/// test's details first, then every run's, each as a NUL, its id, a line feed and its
/// HTML. The rendered HTML holds no NUL ([`crate::shared::inert::document`] shows one as
/// `^@`), so the page's script splits on it. Like pieces are put together because
/// deflate only looks 32 KiB back: a test's details with its three run views is
/// about 60 KiB at 5,000 × 3, so test after test would compress each alone, while details
/// next to details and run next to run share their markup and wording: 0.6 KB a test
/// instead of 2.7 KB (`cargo bench --bench report_render`).
fn packed_chunk(pieces: &[Pieces]) -> std::io::Result<String> {
    use base64::Engine as _;
    use std::io::Write as _;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let heads = pieces.iter().map(|p| &p.head);
    for (id, html) in heads.chain(pieces.iter().flat_map(|p| &p.runs)) {
        write!(gz, "\0{id}\n{html}")?;
    }
    Ok(base64::engine::general_purpose::STANDARD.encode(gz.finish()?))
}

/// The summary line of test `index`, and its details inline or (`lazy`) as the pieces
/// of a packed chunk.
fn row(
    index: usize,
    t: &TestResult,
    suite_mode: Option<&str>,
    lazy: bool,
) -> Result<(RowView, Option<Pieces>), askama::Error> {
    let mut view = test_view(index, t, suite_mode)?;
    view.lazy_runs = lazy;
    let inert = |html: String| crate::shared::inert::document(&html).into_owned();
    let body = inert(TestBody { t: &view }.render()?);
    let (body, pieces) = if lazy {
        let runs = view
            .runs
            .iter()
            .map(|r| Ok((r.id.clone(), inert(RunBody { r }.render()?))))
            .collect::<Result<Vec<_>, askama::Error>>()?;
        let head = (view.id.clone(), body);
        (None, Some(Pieces { head, runs }))
    } else {
        (Some(body), None)
    };
    let row = RowView {
        id: view.id,
        class: view.class,
        icon: view.icon,
        name: view.name,
        file: view.file,
        status: view.status,
        meta: view.meta,
        body,
    };
    Ok((row, pieces))
}

/// The summary lines of the tests `range` of `source` (`range.start` a multiple of
/// [`CHUNK_TESTS`]) and their packed chunks, a line each, [`CHUNK_TESTS`] tests a chunk:
/// read whole from `source` a chunk at a time.
fn packed_rows(
    source: &dyn TestSource,
    range: std::ops::Range<usize>,
    suite_mode: Option<&str>,
) -> Result<Rows<String>, askama::Error> {
    let mut rows = Vec::with_capacity(range.len());
    let mut lines = String::new();
    let mut judged = false;
    for first in range.clone().step_by(CHUNK_TESTS) {
        let part = source
            .tests(first..(first + CHUNK_TESTS).min(range.end))
            .map_err(askama::Error::custom)?;
        judged = judged || super::labels::any_judged(&part);
        let mut pieces = Vec::with_capacity(part.len());
        for (i, t) in part.iter().enumerate() {
            let (row, p) = row(first + i, t, suite_mode, true)?;
            rows.push(row);
            pieces.extend(p);
        }
        lines.push_str(&packed_chunk(&pieces).map_err(askama::Error::custom)?);
        lines.push('\n');
    }
    Ok(Rows {
        rows,
        lazy: lines,
        judged,
    })
}

/// Tests' summary lines, their details packed (`L`: a `String`) or inline (`Option`), and
/// whether any of them has a judged answer to label ([`super::labels::any_judged`]).
struct Rows<L> {
    rows: Vec<RowView>,
    lazy: L,
    judged: bool,
}

/// Every test's summary line, in order, and the packed details of a suite of more than
/// [`INLINE_MAX_TESTS`] tests (else inline, `None`): line N of them is the chunk of tests
/// N × [`CHUNK_TESTS`] on. Packed details are rendered and gzipped on every core, in
/// contiguous whole chunks joined in order: compression is most of the time a large
/// report takes. Each test is read whole from `source` only while its chunk is rendered.
fn rows(
    source: &dyn TestSource,
    suite_mode: Option<&str>,
) -> Result<Rows<Option<String>>, askama::Error> {
    let len = source.len();
    if len <= INLINE_MAX_TESTS {
        let tests = source.tests(0..len).map_err(askama::Error::custom)?;
        let rows = tests
            .iter()
            .enumerate()
            .map(|(i, t)| Ok(row(i, t, suite_mode, false)?.0))
            .collect::<Result<Vec<_>, askama::Error>>()?;
        return Ok(Rows {
            rows,
            lazy: None,
            judged: super::labels::any_judged(&tests),
        });
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    // Whole chunks per thread, so that each line holds the tests the page expects there.
    let part = len.div_ceil(threads).div_ceil(CHUNK_TESTS) * CHUNK_TESTS;
    let parts: Vec<Result<Rows<String>, askama::Error>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..len)
            .step_by(part)
            .map(|first| {
                scope.spawn(move || packed_rows(source, first..(first + part).min(len), suite_mode))
            })
            .collect();
        workers
            .into_iter()
            .map(|w| {
                w.join().unwrap_or_else(|_| {
                    Err(askama::Error::custom(
                        "a thread rendering the report failed",
                    ))
                })
            })
            .collect()
    });
    let mut rows = Vec::with_capacity(len);
    let mut lazy = String::new();
    let mut judged = false;
    for part in parts {
        let part = part?;
        rows.extend(part.rows);
        lazy.push_str(&part.lazy);
        judged |= part.judged;
    }
    Ok(Rows {
        rows,
        lazy: Some(lazy),
        judged,
    })
}

/// The sandbox proof the header shows once: the checks of the first run that proved the
/// suite's fence (`suite_mode`); a test whose proof differs shows its own. Read from
/// `source` a chunk at a time until it is found (in the first, but for a suite whose first
/// tests never reached their agent).
fn suite_proof(
    source: &dyn TestSource,
    suite_mode: Option<&str>,
) -> Result<Vec<SandboxCheck>, askama::Error> {
    let Some(_) = suite_mode else {
        return Ok(Vec::new());
    };
    for first in (0..source.len()).step_by(CHUNK_TESTS) {
        let tests = source
            .tests(first..(first + CHUNK_TESTS).min(source.len()))
            .map_err(askama::Error::custom)?;
        let found = tests
            .iter()
            .flat_map(TestResult::each_run)
            .filter_map(|r| r.sandbox.as_ref())
            .find(|sb| same_as_suite(sb, suite_mode))
            .map(|sb| {
                sb.verified
                    .iter()
                    .map(|c| (c.held, c.tried.clone(), c.detail.clone()))
                    .collect()
            });
        if let Some(found) = found {
            return Ok(found);
        }
    }
    Ok(Vec::new())
}

/// The HTML file format (`--html FILE`).
pub const FORMAT: super::FileFormat = super::FileFormat {
    name: "html",
    render: |results, source, _| Ok(render_from(results, source)?),
};

/// The figures at the top of the page: tests by status, time, usage, and routing prompts
/// as expected when the suite has any.
fn stats(s: &Summary) -> Vec<Stat> {
    let mut stats = vec![
        Stat {
            label: "tests",
            value: s.total.to_string(),
            id: "count-total",
        },
        Stat {
            label: "passed",
            value: s.passed.to_string(),
            id: "count-passed",
        },
        Stat {
            label: "failed",
            value: s.failed.to_string(),
            id: "count-failed",
        },
        Stat {
            label: "error",
            value: s.errors.to_string(),
            id: "count-error",
        },
        Stat {
            label: "skipped",
            value: s.skipped.to_string(),
            id: "count-skipped",
        },
        Stat {
            label: "time",
            value: format_duration(s.duration_ms),
            id: "total-time",
        },
        Stat {
            label: "usage",
            value: format_usage(&s.usage),
            id: "total-usage",
        },
    ];
    // Routing prompts count apart from the tests above.
    if let Some(r) = &s.routing {
        stats.insert(
            5,
            Stat {
                label: "routing prompts as expected",
                value: format!("{}/{}", r.as_expected, r.prompts),
                id: "count-routing",
            },
        );
    }
    stats
}

/// Renders results as one self-contained HTML page.
///
/// # Errors
/// When the template fails to render, or compressing a large suite's details fails (bugs).
pub fn render(results: &Results) -> Result<String, askama::Error> {
    render_from(results, &results.tests)
}

/// [`render`], each test read whole from `source` ([`super::json::source`]) a chunk at a time
/// while its details are rendered; `results` gives the rest (its tests may be without their
/// run detail).
///
/// # Errors
/// When the template fails, or a test could not be read from `source`.
pub fn render_from(results: &Results, source: &dyn TestSource) -> Result<String, askama::Error> {
    let s = &results.summary;
    let agents: Vec<String> = {
        let mut seen: Vec<String> = results
            .tests
            .iter()
            .filter_map(|t| t.agent.clone())
            .collect();
        seen.sort();
        seen.dedup();
        seen
    };
    let stats = stats(s);
    let suite_mode = s
        .sandbox
        .as_ref()
        .map(|sb| sb.mode.as_str())
        .filter(|m| !m.is_empty());
    let Rows {
        mut rows,
        lazy,
        judged: labelling,
    } = rows(source, suite_mode)?;
    // Failures first, else in the results' order; a row keeps its id (`t3`, the anchor the
    // PR comment links and the line of its packed details).
    rows.sort_by_key(|r| match r.class {
        "failed" | "error" => 0,
        _ => 1,
    });
    let script = if labelling {
        format!("{SCRIPT}\n{}", super::labels::SCRIPT)
    } else {
        SCRIPT.to_owned()
    };
    let report = Report {
        script_hash: script_hash(&script),
        script,
        labelling,
        proof: suite_proof(source, suite_mode)?,
        title: crate::report::markdown::plain_title(results),
        sandbox: s
            .sandbox
            .as_ref()
            .map(|sb| (sb.phrase(), sb.any_unsandboxed())),
        witness: s
            .witness
            .as_ref()
            .map(|w| (w.phrase(), w.any_unwitnessed())),
        subtitle: format!(
            "aptitude {} · {}",
            results.aptitude_version,
            if agents.is_empty() {
                "no agent recorded".to_owned()
            } else {
                agents.join(", ")
            }
        ),
        stats,
        rows,
        lazy,
        inline_max: INLINE_MAX_TESTS,
        chunk_tests: CHUNK_TESTS,
        matrix: matrix_view(results),
        versions: versions_rows(results),
        judged: results.judged.iter().map(|j| j.row()).collect(),
        variants: variants_views(results),
        coverage: coverage_view(results),
        routing: results
            .routing
            .as_ref()
            .map(crate::report::routing::tables)
            .unwrap_or_default(),
    };
    // Names and the header hold text from elsewhere too (the bodies were done above).
    report
        .render()
        .map(|html| crate::shared::inert::document(&html).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_hash_is_the_standard_base64_sha256_of_the_script() {
        // Computed apart from this code, from the script's text between `r#"` and `"#`:
        // printf %s "$SCRIPT" | openssl dgst -sha256 -binary | base64
        // A change to the script changes it: update it then, with the same command.
        assert_eq!(
            script_hash(SCRIPT),
            "sha256-l+fvdZc/p9VkUzPrSQOycxlAk0lnkp8dGvqrLRMcgU4="
        );
    }

    #[test]
    fn one_turn_is_singular() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/results/hostile.json"
        ))
        .unwrap();
        let mut results: Results = serde_json::from_str(&text).unwrap();
        let usage = results.tests[0].usage.as_mut().unwrap();
        usage.turns = Some(1);
        assert!(
            test_view(0, &results.tests[0], None)
                .unwrap()
                .meta
                .contains("1 turn")
        );
        assert!(
            !test_view(0, &results.tests[0], None)
                .unwrap()
                .meta
                .contains("1 turns")
        );
        results.tests[0].usage.as_mut().unwrap().turns = Some(2);
        assert!(
            test_view(0, &results.tests[0], None)
                .unwrap()
                .meta
                .contains("2 turns")
        );
    }

    /// `n` copies of the hostile results' tests, renamed apart.
    fn suite(n: usize) -> Results {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/results/hostile.json"
        ))
        .unwrap();
        let hostile: Results = serde_json::from_str(&text).unwrap();
        let tests = (0..n)
            .map(|i| {
                let mut t = hostile.tests[i % hostile.tests.len()].clone();
                t.name = format!("{} #{i}", t.name);
                t
            })
            .collect();
        Results::new(tests, 1)
    }

    /// The first screen: failing tests come first (each keeping its id, the anchor the PR
    /// comment links), the tables of coverage, routing, agents and variants after every
    /// test, and a failed assertion's reason in the page, not folded in a `<details>`.
    #[test]
    fn failures_come_first_and_their_reasons_are_open() {
        let mut results = suite(4);
        results.coverage = serde_json::from_str(
            &std::fs::read_to_string(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/data/results/hostile.json"
            ))
            .unwrap(),
        )
        .map(|r: Results| r.coverage)
        .unwrap();
        let html = render(&results).unwrap();
        let ids: Vec<&str> = html
            .split(r#"<details class="test "#)
            .skip(1)
            .map(|d| {
                d.split(r#"id=""#)
                    .nth(1)
                    .unwrap()
                    .split('"')
                    .next()
                    .unwrap()
            })
            .collect();
        // hostile.json: failed, passed, failed, failed.
        assert_eq!(ids, ["t0", "t2", "t3", "t1"]);
        let last_test = html.rfind(r#"<details class="test "#).unwrap();
        let coverage = html.find(r#"<section id="coverage""#).unwrap();
        assert!(coverage > last_test, "coverage after the tests");
        assert!(
            html.contains(r##"<a href="#coverage">"##),
            "and linked from the header"
        );
        let failing = &html[html.find(r#"id="t0""#).unwrap()..html.find(r#"id="t2""#).unwrap()];
        assert!(
            failing.contains(r#"<div class="why" data-failure="1"><pre class="reasoning""#),
            "{failing}"
        );
        assert!(!failing.contains("<summary>why</summary>"), "{failing}");
        // A passing assertion's evidence is still folded.
        assert!(html.contains("<summary>evidence</summary>"));
    }

    /// The sandbox proof is in the header once; a test repeats it only when its own
    /// differs (a check that did not hold, another sandbox, or none).
    #[test]
    fn the_sandbox_proof_is_shown_once_and_where_a_test_differs() {
        use crate::sandbox::{Check, Record};
        let proved = |tried: &str, held: bool| Record {
            mode: "bubblewrap 0.8.0".into(),
            verified: vec![
                Check {
                    tried: "connect to 1.1.1.1:443".into(),
                    held: true,
                    detail: "Network is unreachable (os error 101)".into(),
                },
                Check {
                    tried: tried.into(),
                    held,
                    detail: "Read-only file system (os error 30)".into(),
                },
            ],
            limits: None,
        };
        let mut tests = suite(4).tests;
        tests[0].sandbox = Some(proved("write to /usr", true));
        tests[1].sandbox = Some(proved("write to /usr", true));
        tests[2].sandbox = Some(proved("write to /opt", false));
        tests[3].sandbox = Some(Record::off());
        let html = render(&Results::new(tests, 1)).unwrap();
        assert_eq!(html.matches(r#"id="sandbox-proof""#).count(), 1);
        assert_eq!(html.matches("write to /usr").count(), 1, "the proof once");
        assert_eq!(
            html.matches(r#"<h2 class="section">Sandbox</h2>"#).count(),
            2,
            "the test whose check failed and the unsandboxed one"
        );
        assert!(html.contains("write to /opt"));
    }

    /// The chunks of `#details-data`, unpacked: each chunk's pieces as (id, HTML).
    fn unpacked(html: &str) -> Vec<Vec<(String, String)>> {
        use base64::Engine as _;
        use std::io::Read as _;
        let data = html
            .split(r#"<script type="application/octet-stream" id="details-data" data-chunk="32">"#)
            .nth(1)
            .unwrap()
            .split("</script>")
            .next()
            .unwrap();
        data.lines()
            .map(|line| {
                let gz = base64::engine::general_purpose::STANDARD
                    .decode(line)
                    .unwrap();
                let mut text = String::new();
                flate2::read::GzDecoder::new(&gz[..])
                    .read_to_string(&mut text)
                    .unwrap();
                text.split('\0')
                    .skip(1)
                    .map(|piece| {
                        let (id, html) = piece.split_once('\n').unwrap();
                        (id.to_owned(), html.to_owned())
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn up_to_the_limit_details_are_inline_and_read_without_javascript() {
        let results = suite(INLINE_MAX_TESTS);
        let html = render(&results).unwrap();
        assert!(!html.contains(r#"id="details-data""#));
        assert!(!html.contains("<div class=\"body\" data-lazy>"));
        assert!(!html.contains(r#"class="run-body" data-lazy"#));
        assert!(!html.contains("<noscript>"));
        let body = TestBody {
            t: &test_view(7, &results.tests[7], None).unwrap(),
        }
        .render()
        .unwrap();
        assert!(html.contains(&body), "test 7's details are in the page");
    }

    /// Above the limit, a chunk holds 32 tests' details, then their runs' views, each as
    /// the templates render it with the runs as placeholders; the last chunk the rest.
    #[test]
    fn above_the_limit_details_and_run_views_are_packed_in_chunks_as_they_would_be_inline() {
        let mut results = suite(INLINE_MAX_TESTS + 1);
        // A test repeated 3 times (its runs' views are pieces of their own) in the last chunk.
        let run = results.tests[200].clone();
        results.tests[200] = crate::verdict::repeat::aggregate(vec![run; 3], 3);
        let html = render(&results).unwrap();
        let chunks = unpacked(&html);
        assert_eq!(chunks.len(), 7, "201 tests in chunks of 32");
        let mut expected = Vec::new();
        for (c, part) in results.tests.chunks(CHUNK_TESTS).enumerate() {
            let mut heads = Vec::new();
            let mut runs = Vec::new();
            for (i, t) in part.iter().enumerate() {
                let mut view = test_view(c * CHUNK_TESTS + i, t, None).unwrap();
                view.lazy_runs = true;
                let body = TestBody { t: &view }.render().unwrap();
                assert!(
                    !html.contains(&body),
                    "test {}'s details are only packed",
                    view.id
                );
                heads.push((view.id.clone(), body));
                for r in &view.runs {
                    runs.push((r.id.clone(), RunBody { r }.render().unwrap()));
                }
            }
            heads.extend(runs);
            expected.push(heads);
        }
        assert_eq!(chunks, expected);
        let last = &chunks[6];
        let ids: Vec<&str> = last.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "t192", "t193", "t194", "t195", "t196", "t197", "t198", "t199", "t200", "t200-r1",
                "t200-r2", "t200-r3"
            ]
        );
        assert!(
            last[8]
                .1
                .contains(r#"<div class="run-body" data-lazy></div>"#)
        );
        assert!(
            last[9].1.starts_with(r#"<div class="run-body">"#),
            "{}",
            last[9].1
        );
        assert_eq!(
            html.matches(r#"<div class="body" data-lazy>"#).count(),
            results.tests.len(),
            "a placeholder per test"
        );
        assert_eq!(
            html.matches("<details class=\"test ").count(),
            results.tests.len()
        );
        assert!(
            html.contains("<noscript>"),
            "without JavaScript a notice says why"
        );
        assert!(
            html.contains("id=\"t200\""),
            "every summary line is in the page"
        );
    }

    /// The run view says what the kernel saw run: its phrase, the kernel's exit codes that
    /// overruled the transcript's, and what ran without a tool call, who ran it.
    #[test]
    fn the_run_view_shows_what_ran_not_claimed_by_any_tool_call() {
        use crate::sandbox::exec::check::{ExecReport, ExecStatus, Unclaimed};
        let mut results = suite(1);
        results.tests[0].execs = Some(ExecReport {
            status: ExecStatus::Recorded,
            execs: 5,
            calls: 1,
            notes: vec!["call `c1` (Bash): the transcript says exit code 0, the kernel saw 1; the kernel's is kept".into()],
            unclaimed: vec![Unclaimed {
                command: "rm -f README".into(),
                run_by: Some("sh .hooks/start.sh".into()),
                exit_code: Some(0),
                at_ms: 12,
            }],
            unclaimed_total: 1,
            ..ExecReport::absent("")
        });
        results.tests[0].execs.as_mut().unwrap().why = None;
        let body = TestBody {
            t: &test_view(0, &results.tests[0], None).unwrap(),
        }
        .render()
        .unwrap();
        assert!(body.contains("exec record (kernel): 5 execs, 1 shell call matched, 1 ran not claimed by any tool call"), "{body}");
        assert!(body.contains("the kernel saw 1"), "{body}");
        assert!(
            body.contains("ran, not claimed by any tool call: rm -f README → exit 0 (run by sh .hooks/start.sh)"),
            "{body}"
        );
    }

    /// The run view names each workspace hook that ran (its file, line, event, command and
    /// what it ran), its text escaped; a run where none ran has no such section.
    #[test]
    fn the_run_view_names_the_hooks_that_ran() {
        use crate::sandbox::exec::hooks::{HookExec, HookRan};
        let mut results = suite(1);
        let view = |results: &Results| {
            TestBody {
                t: &test_view(0, &results.tests[0], None).unwrap(),
            }
            .render()
            .unwrap()
        };
        assert!(!view(&results).contains("Hooks that ran"));
        results.tests[0].hooks_ran = vec![HookRan {
            file: ".claude/settings.json".into(),
            line: Some(5),
            event: "PreToolUse".into(),
            command: "sh .hooks/hook.sh <b>".into(),
            execs: vec![HookExec {
                command: "cat".into(),
                exit_code: Some(0),
                at_ms: 12,
            }],
            execs_total: 1,
        }];
        let body = view(&results);
        assert!(body.contains("Hooks that ran"), "{body}");
        assert!(
            body.contains("hook .claude/settings.json:5 PreToolUse `sh .hooks/hook.sh &#60;b&#62;` ran 1 exec: cat → exit 0"),
            "{body}"
        );
    }

    /// Label controls go where a review was graded, each run of a repeated test its own
    /// with radio groups named apart, and hold the whole answer and its SHA-256; a page
    /// without a judged answer has no rater bar, and its script (so its CSP hash) is the
    /// pinned one.
    #[test]
    fn label_controls_are_on_judged_answers_and_their_script_only_with_them() {
        let plain = render(&suite(2)).unwrap();
        assert!(!plain.contains(r#"id="labelbar""#), "no judged answer");
        assert!(!plain.contains(r#"<section class="verdicts""#));
        assert!(plain.contains(&format!("<script>{SCRIPT}</script>")));

        let review: crate::verdict::results::AssertionResult =
            serde_json::from_value(serde_json::json!({"kind": "stdout", "description":
                "stdout review: \"says \\\"42\\\"\" (score: 3/10, threshold: 7)",
                "status": "fail", "line": 4, "score": 3, "threshold": 7}))
            .unwrap();
        let mut results = suite(2);
        let long = format!("{}\u{1b}end", "x".repeat(OUTPUT_MAX + 10));
        for (i, t) in results.tests.iter_mut().enumerate() {
            t.assertions = vec![review.clone()];
            t.transcript.as_mut().unwrap().final_text = Some(format!("{long} {i}"));
        }
        let once = results.tests[0].clone();
        results.tests[1].runs = vec![once.clone(), once];
        let html = render(&results).unwrap();
        assert_eq!(html.matches(r#"id="labelbar""#).count(), 1);
        assert_eq!(
            html.matches(r#"<fieldset class="verdict""#).count(),
            3,
            "test 0, and runs 1 and 2 of test 1 (not its own line)"
        );
        for name in ["t0-l0", "t1-r1-l0", "t1-r2-l0"] {
            assert_eq!(
                html.matches(&format!(r#"name="{name}" value="#)).count(),
                3,
                "{name}: not labelled, pass, fail"
            );
        }
        assert!(
            html.contains(
                "says &#34;42&#34; <span class=\"score\">judge: 3/10, threshold 7 → fail"
            )
        );
        // The whole answer (the page shows it cut), its escape byte kept as `\u001b`.
        let whole = super::super::labels::ascii_json(&format!("{long} 0"));
        let escaped = whole.replace('"', "&#34;");
        assert!(
            html.contains(&escaped[5..escaped.len() - 5]),
            "the whole answer"
        );
        let sha = crate::verdict::labels::sha256_hex(&format!("{long} 0"));
        assert!(html.contains(&sha));
        assert!(html.contains(super::super::labels::SCRIPT));
    }

    #[test]
    fn long_outputs_are_cut_with_a_marker() {
        let long = "x".repeat(OUTPUT_MAX + 10);
        assert!(cut(&long).ends_with("[truncated: 10 more characters]"));
        assert_eq!(cut("short"), "short");
    }
}
