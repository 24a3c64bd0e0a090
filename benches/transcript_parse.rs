//! Transcript parse throughput and peak memory (`cargo bench --bench transcript_parse`).
//!
//! Builds a file of ≥ 100 MB by concatenating the corpus' Claude Code transcripts, then
//! measures in one run:
//! - the floor: serde_json parsing each line into a `serde_json::Value`;
//! - aptitude's parser (`transcript::parse_file`) on the same file;
//! - peak memory (VmHWM) of a child process parsing 100 MB and 200 MB files: it must not
//!   grow with the file beyond the tool calls kept (the repeated sessions reuse their tool
//!   ids, so the calls kept are the same);
//! - peak memory of a child parsing 10 MB and 100 MB of garbage (`x` lines, 2 bytes each:
//!   5.2 M and 52 M of them) around a real Claude Code stream (issue #10 item 7): warnings
//!   are counted, only the first few kept, so it must be flat in the input size.
//!
//! Target: aptitude within 2× of the floor. Figures are printed, not asserted: speed is
//! measured here, never in timed tests.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

#[path = "support/peak_rss.rs"]
mod peak_rss;
use peak_rss::peak_rss_kib;

const MB: u64 = 1024 * 1024;

fn corpus_sources() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/corpus");
    let mut files: Vec<PathBuf> = [
        "claude-session-jsonl",
        "claude-stream-json",
        "live/claude-2.1.328",
    ]
    .iter()
    .flat_map(|d| {
        std::fs::read_dir(root.join(d))
            .into_iter()
            .flatten()
            .flatten()
    })
    .map(|e| e.path())
    .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
    .collect();
    files.sort();
    files
}

fn build_file(path: &Path, min_bytes: u64) -> std::io::Result<u64> {
    let sources: Vec<Vec<u8>> = corpus_sources()
        .iter()
        .map(std::fs::read)
        .collect::<std::io::Result<_>>()?;
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut written = 0u64;
    while written < min_bytes {
        for s in &sources {
            out.write_all(s)?;
            written += s.len() as u64;
        }
    }
    out.flush()?;
    Ok(written)
}

fn floor_value(path: &Path) -> std::io::Result<usize> {
    let mut reader = BufReader::with_capacity(256 * 1024, std::fs::File::open(path)?);
    let mut line = String::new();
    let mut n = 0;
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            break;
        }
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) {
            n += usize::from(!v.is_null());
        }
    }
    Ok(n)
}

/// Garbage lines (`x`) around a real stream-json run, `bytes` in all.
fn build_garbage_file(path: &Path, bytes: u64) -> std::io::Result<()> {
    let stream = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/corpus/live/claude-2.1.328/events_tool_call.jsonl"),
    )?;
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    let garbage = bytes.saturating_sub(stream.len() as u64) / 2;
    let block = "x\n".repeat(64 * 1024);
    let mut lines = 0u64;
    let mut stream_written = false;
    while lines < garbage {
        let n = (garbage - lines).min(64 * 1024);
        out.write_all(&block.as_bytes()[..(n * 2) as usize])?;
        lines += n;
        if !stream_written && lines >= garbage / 2 {
            out.write_all(&stream)?;
            stream_written = true;
        }
    }
    if !stream_written {
        out.write_all(&stream)?;
    }
    out.flush()
}

fn child_mode(path: &Path) {
    let t = aptitude::transcript::parse_file(path)
        .map(|t| (t.tool_calls.len(), t.warning_count(), t.warnings.len()));
    let (calls, warnings, kept) = t.unwrap_or((0, 0, 0));
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{calls} {} {warnings} {kept}", peak_rss_kib());
}

fn measure_child(path: &Path) -> Option<(u64, u64)> {
    measure_child_full(path).map(|(calls, kib, _, _)| (calls, kib))
}

/// (tool calls, peak RSS KiB, warnings in all, warnings kept).
fn measure_child_full(path: &Path) -> Option<(u64, u64, u64, u64)> {
    let exe = std::env::current_exe().ok()?;
    let out = std::process::Command::new(exe)
        .arg("--child")
        .arg(path)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let mut parts = text.split_whitespace().map(|p| p.parse::<u64>().ok());
    Some((
        parts.next()??,
        parts.next()??,
        parts.next()??,
        parts.next()??,
    ))
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if let Some(pos) = args.iter().position(|a| a == "--child") {
        if let Some(path) = args.get(pos + 1) {
            child_mode(Path::new(path));
        }
        return Ok(());
    }
    let dir = tempfile::tempdir()?;
    let big = dir.path().join("sessions-100mb.jsonl");
    let bytes = build_file(&big, 100 * MB)?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "input: {:.1} MB of Claude Code transcripts (corpus, concatenated)",
        bytes as f64 / MB as f64
    )?;

    // Warm the page cache so both measures read from memory.
    floor_value(&big)?;

    let mut floor_best = f64::MAX;
    let mut ours_best = f64::MAX;
    let mut calls = 0;
    for _ in 0..3 {
        let t = Instant::now();
        floor_value(&big)?;
        floor_best = floor_best.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let transcript = aptitude::transcript::parse_file(&big).map_err(std::io::Error::other)?;
        ours_best = ours_best.min(t.elapsed().as_secs_f64());
        calls = transcript.tool_calls.len();
    }
    let mbs = |secs: f64| bytes as f64 / MB as f64 / secs;
    writeln!(
        out,
        "serde_json::Value per line (floor): {:.3} s, {:.0} MB/s",
        floor_best,
        mbs(floor_best)
    )?;
    writeln!(
        out,
        "aptitude parse_file:                {:.3} s, {:.0} MB/s, {calls} tool calls kept",
        ours_best,
        mbs(ours_best)
    )?;
    writeln!(
        out,
        "ratio aptitude / floor: {:.2}× (target ≤ 2×)",
        ours_best / floor_best
    )?;

    let bigger = dir.path().join("sessions-200mb.jsonl");
    build_file(&bigger, 200 * MB)?;
    for (label, path) in [("100 MB", &big), ("200 MB", &bigger)] {
        match measure_child(path) {
            Some((calls, kib)) => writeln!(
                out,
                "peak RSS parsing {label}: {:.1} MB ({calls} tool calls kept)",
                kib as f64 / 1024.0
            )?,
            None => writeln!(out, "peak RSS parsing {label}: unavailable")?,
        }
    }

    for (label, size) in [("10 MB", 10 * MB), ("100 MB", 100 * MB)] {
        let path = dir.path().join(format!("garbage-{}.jsonl", size / MB));
        build_garbage_file(&path, size)?;
        match measure_child_full(&path) {
            Some((calls, kib, warnings, kept)) => writeln!(
                out,
                "peak RSS parsing {label} of garbage lines: {:.1} MB ({calls} tool calls, {warnings} warnings, {kept} kept)",
                kib as f64 / 1024.0
            )?,
            None => writeln!(
                out,
                "peak RSS parsing {label} of garbage lines: unavailable"
            )?,
        }
        std::fs::remove_file(&path)?;
    }
    Ok(())
}
