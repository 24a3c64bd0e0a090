//! The bodies of aptitude's fuzz targets, one function per target, shared by the
//! `cargo fuzz` targets in `fuzz_targets/` and by the regression test
//! `tests/it/fuzz_regressions.rs`, which includes this file by path: a crashing input
//! found by the fuzzer replays in the default `cargo test` run through the very same calls.
//!
//! Each function takes the fuzzer's raw bytes and drives public entry points of `aptitude`
//! the way the CLI does. The oracle is "no panic" (plus libFuzzer's own timeout and RSS
//! limit for hangs and memory blow-ups); outputs are computed and dropped.
//!
//! Only aptitude's public API and `serde_json` are used, so the file compiles both as the
//! fuzz crate's library and as a module of the integration tests.

use std::path::Path;

use aptitude::report::markdown::MarkdownOptions;
use aptitude::report::{baseline, html, junit, markdown, terminal};
use aptitude::shared::redact::Redactor;
use aptitude::spec::{self, FileDiagnostics, diagnostic};
use aptitude::transcript::{self, Format, StreamParser, Transcript};
use aptitude::verdict::results::Results;

/// A fuzz target: its name (`fuzz_targets/<name>.rs`, `corpus-regressions/<name>/`) and
/// its body.
pub type Target = (&'static str, fn(&[u8]));

/// Every target, by name.
pub const TARGETS: &[Target] = &[
    ("spec_loader", spec_loader),
    ("transcript_detect", transcript_detect),
    ("transcript_claude_session", transcript_claude_session),
    (
        "transcript_claude_stream_json",
        transcript_claude_stream_json,
    ),
    ("transcript_qwen_stream_json", transcript_qwen_stream_json),
    ("transcript_qwen_session", transcript_qwen_session),
    ("transcript_codex_exec_json", transcript_codex_exec_json),
    ("transcript_codex_rollout", transcript_codex_rollout),
    (
        "transcript_gemini_stream_json",
        transcript_gemini_stream_json,
    ),
    ("transcript_gemini_session", transcript_gemini_session),
    ("transcript_gemini_document", transcript_gemini_document),
    ("transcript_copilot_json", transcript_copilot_json),
    ("transcript_opencode_json", transcript_opencode_json),
    ("transcript_pi_json", transcript_pi_json),
    (
        "transcript_cursor_stream_json",
        transcript_cursor_stream_json,
    ),
    ("transcript_aider_chat", transcript_aider_chat),
    ("transcript_kiro_conversation", transcript_kiro_conversation),
    ("transcript_kiro_session", transcript_kiro_session),
    ("transcript_kiro_kas", transcript_kiro_kas),
    ("report", report),
    ("shared_inert", shared_inert),
    ("shared_cut", shared_cut),
];

/// A secret the redactor knows, so report inputs that contain it exercise redaction.
const FUZZ_SECRET: &str = "fuzz-secret-value-0123456789";

fn redactor() -> Redactor {
    Redactor::new([("FUZZ_API_KEY", FUZZ_SECRET)])
}

/// A test file's bytes → the loader (`aptitude validate` / `run`): a spec, or diagnostics
/// rendered plain and in color. Invalid UTF-8 is replaced, so the YAML layer sees it too.
pub fn spec_loader(data: &[u8]) {
    let source = String::from_utf8_lossy(data);
    let path = Path::new("fuzz/test.aptitude.yaml");
    match spec::load_str(path, &source) {
        Ok(spec) => {
            let _ = spec.workspace_dir();
        }
        Err(diagnostics) => {
            let file = FileDiagnostics {
                path: path.to_owned(),
                source: source.into_owned(),
                diagnostics,
            };
            let _ = diagnostic::render(&file, false);
            let _ = diagnostic::render(&file, true);
        }
    }
}

/// A transcript file's bytes → format detection and parsing (`aptitude transcript`,
/// `analyze`): JSON lines, a JSON array of events, or a pretty-printed document.
pub fn transcript_detect(data: &[u8]) {
    if let Ok(t) = transcript::parse_reader(data) {
        use_transcript(&t);
    }
}

/// Lines fed to the incremental parser of a known format, as `aptitude run` feeds an
/// agent's stdout (split on `\n`, invalid UTF-8 replaced).
fn stream_lines(format: Format, data: &[u8]) {
    let mut parser = StreamParser::new(format);
    for line in data.split(|b| *b == b'\n') {
        let line = String::from_utf8_lossy(line);
        parser.push_line(line.trim_end_matches('\r'));
        let _ = parser.calls().len();
    }
    use_transcript(&parser.finish());
}

/// Claude Code session log lines.
pub fn transcript_claude_session(data: &[u8]) {
    stream_lines(Format::ClaudeSession, data);
}

/// Claude Code `--output-format stream-json` lines (also `{"raw": …}`-wrapped).
pub fn transcript_claude_stream_json(data: &[u8]) {
    stream_lines(Format::ClaudeStreamJson, data);
}

/// Qwen Code `-o stream-json` lines.
pub fn transcript_qwen_stream_json(data: &[u8]) {
    stream_lines(Format::QwenStreamJson, data);
}

/// Qwen Code session log lines.
pub fn transcript_qwen_session(data: &[u8]) {
    stream_lines(Format::QwenSession, data);
}

/// `codex exec --json` lines.
pub fn transcript_codex_exec_json(data: &[u8]) {
    stream_lines(Format::CodexExecJson, data);
}

/// Codex CLI rollout log lines.
pub fn transcript_codex_rollout(data: &[u8]) {
    stream_lines(Format::CodexRollout, data);
}

/// Gemini CLI `-o stream-json` lines.
pub fn transcript_gemini_stream_json(data: &[u8]) {
    stream_lines(Format::GeminiStreamJson, data);
}

/// Gemini CLI session log lines.
pub fn transcript_gemini_session(data: &[u8]) {
    stream_lines(Format::GeminiSession, data);
}

/// GitHub Copilot CLI `--output-format json` lines (and session-state log lines).
pub fn transcript_copilot_json(data: &[u8]) {
    stream_lines(Format::CopilotJson, data);
}

/// opencode / Kilo `run --format json` lines.
pub fn transcript_opencode_json(data: &[u8]) {
    stream_lines(Format::OpencodeJson, data);
}

/// pi `--mode json` lines (and session log lines).
pub fn transcript_pi_json(data: &[u8]) {
    stream_lines(Format::PiJson, data);
}

/// Cursor CLI `--output-format stream-json` lines.
pub fn transcript_cursor_stream_json(data: &[u8]) {
    stream_lines(Format::CursorStreamJson, data);
}

/// Kiro CLI v1 conversations (`ConversationState` JSON, one per line).
pub fn transcript_kiro_conversation(data: &[u8]) {
    stream_lines(Format::KiroConversation, data);
}

/// Kiro CLI v2 session log lines.
pub fn transcript_kiro_session(data: &[u8]) {
    stream_lines(Format::KiroSession, data);
}

/// Kiro CLI v3 session log lines (`messages.jsonl`).
pub fn transcript_kiro_kas(data: &[u8]) {
    stream_lines(Format::KiroKas, data);
}

/// Aider chat history (Markdown) lines.
pub fn transcript_aider_chat(data: &[u8]) {
    stream_lines(Format::AiderChat, data);
}

/// A whole-file JSON document: a Gemini CLI chat recording, `gemini -o json` output, or a
/// single pretty-printed event. The input is forced onto the document path (a first line
/// `{` that is not JSON on its own), so mutations of the body never fall back to lines.
pub fn transcript_gemini_document(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let body = text.trim_start();
    let body = body.strip_prefix('{').unwrap_or(body);
    let document = format!("{{\n{body}");
    if let Ok(t) = transcript::parse_reader(document.as_bytes()) {
        use_transcript(&t);
    }
}

/// What the CLI does with a parsed transcript: redact it, print it, serialize it.
fn use_transcript(t: &Transcript) {
    let Ok(t) = redactor().redact_value(t) else {
        return;
    };
    let _ = terminal::render_transcript(&t);
    let _ = serde_json::to_string(&t);
    let _ = t.outcome.describe();
    for call in &t.tool_calls {
        let _ = call.command();
    }
}

/// A results JSON's bytes → redaction and every renderer (`aptitude report`, `publish`):
/// HTML, JUnit, terminal, and Markdown at several size limits with a baseline comparison.
/// The schema version is not checked, so renderers see any value the types accept.
pub fn report(data: &[u8]) {
    let Ok(results) = serde_json::from_slice::<Results>(data) else {
        return;
    };
    let Ok(results) = redactor().redact_value(&results) else {
        return;
    };
    let _ = html::render(&results);
    let _ = junit::render(&results);
    let _ = terminal::render_results(&results);
    for test in &results.tests {
        let _ = terminal::render_test(test);
    }
    let link = baseline::ReportLink {
        url: Some("https://example.invalid/run#artifacts".into()),
        file: "report.html".into(),
    };
    let comparison = baseline::compare(&results, &results, baseline::DEFAULT_SIGNIFICANCE)
        .to_markdown(Some(&link));
    // `aptitude diff` of the runs of each repeated test, and of the results with themselves.
    let options = aptitude::report::diff::DiffOptions {
        test: None,
        runs: None,
        significance: baseline::DEFAULT_SIGNIFICANCE,
        labels: ("a.json".into(), "b.json".into()),
    };
    for report in [
        aptitude::report::diff::diff_runs(&results, &options),
        aptitude::report::diff::diff(&results, &results, &options),
    ]
    .into_iter()
    .flatten()
    {
        let _ = aptitude::report::diff::to_terminal(&report);
        let _ = aptitude::report::diff::to_markdown(&report);
    }
    for (max_chars, max_bytes) in [(65_000, usize::MAX), (2_000, 64_512), (302, 302), (0, 0)] {
        let options = MarkdownOptions {
            max_chars,
            max_bytes,
            report_url: Some("https://example.invalid/run#artifacts".into()),
            preamble: Some(comparison.clone()),
        };
        let _ = markdown::render(&results, &options);
    }
}

/// Arbitrary bytes as text (invalid UTF-8 replaced), through every function of
/// `shared::inert` that renders agent or repository text for an output: the terminal,
/// the Actions log, GFM, annotations and the HTML report. The text is also cut into
/// its first and second halves at every character boundary near the middle, so that
/// multi-byte characters meet each function's byte-wise scans at every offset.
pub fn shared_inert(data: &[u8]) {
    use aptitude::shared::inert;
    let text = String::from_utf8_lossy(data);
    let mid = text.len() / 2;
    let mut pieces = vec![text.as_ref()];
    pieces.extend(
        (mid.saturating_sub(3)..=mid.saturating_add(3).min(text.len()))
            .filter(|&at| text.is_char_boundary(at))
            .flat_map(|at| [&text[..at], &text[at..]]),
    );
    for piece in pieces {
        let _ = inert::normalize_line_breaks(piece);
        let _ = inert::terminal(piece);
        let _ = inert::terminal_lines(piece);
        let _ = inert::terminal_output(piece);
        let _ = inert::document(piece);
        let _ = inert::workflow_commands_defused(piece);
        let _ = inert::workflow_command("error", &[("file", piece), ("title", piece)], piece);
        let _ = inert::markdown_inline(piece);
        let _ = inert::markdown_html_inline(piece);
        let _ = inert::markdown_code_block(piece);
        let _ = inert::single_line(piece);
        let _ = inert::plain_text(piece);
        let _ = inert::repository_path(piece);
    }
}

/// Arbitrary bytes as text through every cut of `shared::cut` and `shared::text`, at
/// limits from 0 to past the text's length (the first byte picks a small limit, so cuts
/// land on every character boundary and inside multi-byte characters), with a secret
/// the redactor knows somewhere in the text when the input holds it.
pub fn shared_cut(data: &[u8]) {
    use aptitude::shared::{cut, text as shared_text};
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let picked = usize::from(first);
    for max in [
        0,
        1,
        2,
        3,
        4,
        picked,
        picked / 2,
        text.len(),
        text.len() + 1,
    ] {
        let _ = cut::chars(&text, max);
        let _ = cut::bytes(&text, max);
        let _ = shared_text::truncate(&text, max);
        let _ = shared_text::truncate_lines(&text, max);
        let _ = shared_text::summarize_input(&serde_json::json!({ "command": text }), max);
    }
    let _ = cut::after_cut_start(&text);
    let _ = redactor().redact(&text);
}
