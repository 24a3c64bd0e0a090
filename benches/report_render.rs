//! Rendering reports for 5,000 tests × 3 runs (`cargo bench --bench report_render`).
//!
//! Builds results for 5,000 tests repeated 3 times — each run with assertions, a failure
//! detail and a 10-call transcript with its 11 turns (text, tokens, time), two changed
//! files (a 40-line diff, a binary file) and 11 model requests: the run view's trajectory
//! for every run, 150,000 tool calls in all (`benches/support/suite.rs`) — then times the
//! HTML, Markdown and JUnit renderers and reports the HTML file size. Targets: HTML in
//! under 1 s and at most 8 MB (issue 43). Figures are printed, not asserted.
//!
//! With `REPORT_RENDER_HTML=FILE` the HTML report is also written to FILE, for
//! `node tests/browser/first-screen.mjs FILE` to measure its first screen in Chromium;
//! `bash benches/report_first_screen.sh` does both and prints the first paint and
//! DOMContentLoaded.
//!
//! It also measures cassettes (`run --record-model`) for these runs: each run's model
//! exchange is rebuilt as Claude Code 2.1.328 sends it — the first request of the kept
//! fixture (`tests/data/cassettes/claude`: system prompt and tools), then one request per
//! turn adding the previous reply and its tool result, and a streamed reply per turn — and
//! written as a cassette; reported are the bytes per run (a sample of 200 runs) and the
//! results file with every run's cassette reference, and the artifact (results file and
//! every cassette).

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use aptitude::verdict::results::Results;

#[path = "support/suite.rs"]
mod suite;
use suite::{Shape, transcript};

/// Run `i`'s model exchange as a cassette: the fixture's first request, then a turn per
/// tool call of [`transcript`] (each request adds the reply and the tool's result).
fn cassette(i: usize, first: &serde_json::Value) -> aptitude::gateway::cassette::Cassette {
    use aptitude::gateway::cassette::{Cassette, Exchange};
    let t = transcript(i, Shape::Full);
    let mut request = first.clone();
    let mut exchanges = Vec::new();
    for (n, call) in t.tool_calls.iter().enumerate() {
        let reply = format!(
            "event: message_start\ndata: {{\"type\":\"message_start\",\"message\":{{\"id\":\"msg_{i}_{n}\",\"model\":\"claude-sonnet-4-5\",\"usage\":{{\"input_tokens\":1200,\"output_tokens\":1}}}}}}\n\nevent: content_block_start\ndata: {}\n\nevent: message_stop\ndata: {{\"type\":\"message_stop\"}}\n\n",
            serde_json::json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": call.id, "name": call.name, "input": call.input}})
        );
        exchanges.push(Exchange {
            method: "POST".into(),
            path: "/v1/messages?beta=true".into(),
            request: request.clone(),
            status: 200,
            content_type: Some("text/event-stream".into()),
            headers: vec![("content-type".into(), "text/event-stream".into())],
            reply: reply.into_bytes(),
            cut: false,
        });
        if let Some(messages) = request["messages"].as_array_mut() {
            messages.push(serde_json::json!({"role": "assistant", "content": [{"type": "tool_use", "id": call.id, "name": call.name, "input": call.input}]}));
            messages.push(serde_json::json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": call.output}]}));
        }
    }
    Cassette {
        upstream: "https://api.anthropic.com".into(),
        credentials: vec!["ANTHROPIC_API_KEY".into()],
        exchanges,
        dropped: None,
        mcp: Default::default(),
        user: Vec::new(),
    }
}

/// Cassettes for the runs of `results`: bytes per run (from a sample), and the results
/// file and artifact sizes with every run's reference.
fn cassettes(results: &Results, out: &mut impl Write) -> std::io::Result<()> {
    use aptitude::gateway::cassette::Cassette;
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/cassettes/claude");
    let recorded = aptitude::report::json::read(&fixture.join("recorded.json"))
        .map_err(std::io::Error::other)?;
    let reference = recorded.tests[0]
        .model_traffic
        .as_ref()
        .and_then(|t| t.cassette.clone())
        .ok_or_else(|| std::io::Error::other("the fixture has no cassette"))?;
    let kept = Cassette::read(&fixture, &reference).map_err(std::io::Error::other)?;
    let first = &kept.exchanges[0].request;
    let redactor = aptitude::shared::redact::Redactor::new([]);
    let dir = tempfile::tempdir()?;
    let sample = 200;
    let t = Instant::now();
    let mut bytes = 0u64;
    let mut refs = Vec::new();
    for i in 0..sample {
        let r = cassette(i, first).write(dir.path(), "results.cassettes", &redactor)?;
        bytes += r.bytes;
        refs.push(r);
    }
    let per_run = bytes / sample as u64;
    let written_s = t.elapsed().as_secs_f64() / sample as f64;
    let plain = serde_json::to_vec(results)
        .map_err(std::io::Error::other)?
        .len();
    let mut with_refs = results.clone();
    let mut n = 0;
    for test in &mut with_refs.tests {
        for run in &mut test.runs {
            run.model_traffic = Some(aptitude::gateway::Traffic {
                upstream: "https://api.anthropic.com".into(),
                requests: 10,
                cassette: Some(refs[n % refs.len()].clone()),
                ..Default::default()
            });
            n += 1;
        }
    }
    let referenced = serde_json::to_vec(&with_refs)
        .map_err(std::io::Error::other)?
        .len();
    writeln!(
        out,
        "Cassettes: {per_run} bytes per run (10 turns, gzip; {:.1} ms to write one), results.json {:.1} MB → {:.1} MB with {n} references, artifact {:.1} MB with every run's cassette",
        written_s * 1000.0,
        plain as f64 / 1e6,
        referenced as f64 / 1e6,
        (referenced as u64 + per_run * n as u64) as f64 / 1e6
    )?;
    Ok(())
}

fn main() -> std::io::Result<()> {
    let results = suite::results(5_000, 0);
    let mut out = std::io::stdout().lock();

    let t = Instant::now();
    let html = aptitude::report::html::render(&results).map_err(std::io::Error::other)?;
    let html_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let md = aptitude::report::markdown::render(
        &results,
        &aptitude::report::markdown::MarkdownOptions::default(),
    );
    let md_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let junit = aptitude::report::junit::render(&results).map_err(std::io::Error::other)?;
    let junit_s = t.elapsed().as_secs_f64();
    if let Some(path) = std::env::var_os("REPORT_RENDER_HTML") {
        std::fs::write(path, &html)?;
    }
    writeln!(
        out,
        "5,000 tests × 3 runs, 150,000 tool calls, 165,000 turns, 30,000 diffs, 165,000 model requests (run views)"
    )?;
    writeln!(
        out,
        "HTML:     {:.3} s, {} bytes = {:.1} MB (targets < 1 s, ≤ 8 MB)",
        html_s,
        html.len(),
        html.len() as f64 / 1e6
    )?;
    writeln!(
        out,
        "Markdown: {:.3} s, {} chars (bounded at 65,000)",
        md_s,
        md.chars().count()
    )?;
    writeln!(
        out,
        "JUnit:    {:.3} s, {:.1} MB",
        junit_s,
        junit.len() as f64 / 1e6
    )?;
    // The same suite as results written before run views (no turns, diffs or request
    // lists): what the run views add.
    let mut plain = results.clone();
    for run in plain.tests.iter_mut().flat_map(|t| t.runs.iter_mut()) {
        if let Some(t) = run.transcript.as_mut() {
            t.turns.clear();
        }
        for f in &mut run.files {
            f.diff = None;
            f.diff_omitted = None;
        }
        if let Some(m) = run.model_traffic.as_mut() {
            m.request_log.clear();
        }
    }
    let t = Instant::now();
    let before = aptitude::report::html::render(&plain).map_err(std::io::Error::other)?;
    writeln!(
        out,
        "HTML without run views (results written before them): {:.3} s, {:.1} MB",
        t.elapsed().as_secs_f64(),
        before.len() as f64 / 1e6
    )?;
    cassettes(&results, &mut out)
}
