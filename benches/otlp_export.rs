//! The OTLP export's cost per 1,000 runs (`cargo bench --bench otlp_export`).
//!
//! Builds results for 334 tests × 3 runs (1,002 runs, each with 10 tool calls and its
//! assertions: `benches/support/suite.rs`), then times building the spans and sending them
//! to a local sink that answers every request 200 at once (so the figure is aptitude's own
//! cost: encoding and HTTP, not a collector's). Prints the spans, requests, bytes received
//! and the time per 1,000 runs. Figures are printed, not asserted.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

#[path = "support/suite.rs"]
mod suite;

/// A sink on 127.0.0.1 that reads each HTTP/1.1 request whole and answers 200 with an
/// empty body; the bytes of request bodies it read.
fn sink() -> std::io::Result<(u16, Arc<AtomicUsize>)> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let port = listener.local_addr()?.port();
    let bytes = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&bytes);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let counted = Arc::clone(&counted);
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream);
                loop {
                    let mut length = 0usize;
                    let mut line = String::new();
                    loop {
                        line.clear();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        if line == "\r\n" {
                            break;
                        }
                        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                            length = v.trim().parse().unwrap_or(0);
                        }
                    }
                    let mut body = vec![0; length];
                    if reader.read_exact(&mut body).is_err() {
                        return;
                    }
                    counted.fetch_add(length, Ordering::Relaxed);
                    let reply = b"HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
                    if reader.get_mut().write_all(reply).is_err() {
                        return;
                    }
                }
            });
        }
    });
    Ok((port, bytes))
}

fn main() -> std::io::Result<()> {
    let results = suite::results(334, 0);
    let runs: usize = results.tests.iter().map(|t| t.runs.len().max(1)).sum();
    let (port, bytes) = sink()?;

    let t = Instant::now();
    let spans = aptitude::report::otlp::spans(&results);
    let build_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let sent =
        aptitude::report::otlp::export(&results, &format!("http://127.0.0.1:{port}/v1/traces"))
            .map_err(std::io::Error::other)?;
    let export_s = t.elapsed().as_secs_f64();
    let per = 1_000.0 / runs as f64;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{runs} runs, {} spans ({} per run), {} requests, {:.1} MB sent",
        spans.len(),
        spans.len() / runs,
        sent.requests,
        bytes.load(Ordering::Relaxed) as f64 / 1e6
    )?;
    writeln!(
        out,
        "per 1,000 runs: building the spans {:.0} ms, the whole export (build, encode, send) {:.0} ms, {:.1} MB",
        build_s * 1e3 * per,
        export_s * 1e3 * per,
        bytes.load(Ordering::Relaxed) as f64 / 1e6 * per
    )?;
    Ok(())
}
