//! What aptitude's MCP plumbing costs a run (`cargo bench --bench mcp_overhead [-- AGENT...]`;
//! default: claude).
//!
//! N = 8 tests, each a two-turn conversation (a call of an MCP tool, then an answer)
//! against the scripted model with no latency, `--jobs 2`, sandboxed. Measured per agent,
//! as wall time per test:
//! - the pinned `@modelcontextprotocol/server-everything` over stdio, live (the watch's
//!   wrapper only);
//! - the same, `--record-model` (the tap copies its traffic into the cassettes);
//! - `--replay` of that recording (the server never starts: aptitude's host answers
//!   through the relay);
//! - a `mock:` server with a scripted reply, live;
//! - the same server over streamable HTTP, through aptitude's front, live.
//!
//! Reported too: the cassette size per run, and how much of it (before compression) is the
//! MCP traffic. Printed, not asserted.

use std::io::{Read, Write};
use std::path::Path;
use std::process::Command;
use std::time::Instant;

#[path = "../tests/it/support/model.rs"]
#[expect(
    dead_code,
    clippy::expect_used,
    clippy::unwrap_used,
    reason = "the benchmark uses part of the test double, which fails loudly"
)]
mod model;

#[path = "../tests/it/support/wire.rs"]
#[expect(
    clippy::unwrap_used,
    reason = "the double's other protocols, served beside the one the benchmark uses"
)]
mod wire;

#[path = "../tests/it/support/recorded.rs"]
#[expect(
    dead_code,
    reason = "the double's recorded replies, a turn the benchmark does not script"
)]
mod recorded;

#[path = "../tests/it/support/mcp_names.rs"]
mod mcp_names;
use mcp_names::tool_name;

#[path = "support/agents.rs"]
#[expect(dead_code, reason = "the MCP benchmark calls no shell tool")]
mod agents;
use agents::{Bench, benches};

use model::{ScriptedModel, Turn};

const TESTS: usize = 8;
const JOBS: usize = 2;

fn main() -> std::io::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut wanted: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    if wanted.is_empty() {
        wanted.push("claude".into());
    }
    let server = root.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{TESTS} tests, each one MCP tool call, --jobs {JOBS}, scripted model without latency; wall time per test"
    )?;
    for bench in benches() {
        if !wanted.iter().any(|w| w == bench.name) {
            continue;
        }
        let bin = root.join("node_modules/.bin").join(bench.name);
        if !bin.exists() || !server.exists() {
            writeln!(out, "{}: skipped, run scripts/test first", bench.name)?;
            continue;
        }
        measure(&mut out, &bench, &bin, &server)?;
    }
    Ok(())
}

/// Writes the N tests with `servers` (the `mcp_servers:` block) calling `server`'s `echo`.
fn write_tests(
    dir: &Path,
    model: &ScriptedModel,
    bench: &Bench,
    round: &str,
    servers: &str,
    server: &str,
) -> std::io::Result<()> {
    let tests = dir.join("tests");
    let _ = std::fs::remove_dir_all(&tests);
    for i in 0..TESTS {
        let marker = format!("mcp-bench-{round}-{}-{i:02}", bench.name);
        model.script(
            &marker,
            vec![
                Turn::Tool(
                    Box::leak(tool_name(bench.name, server, "echo").into_boxed_str()),
                    serde_json::json!({"message": format!("m{i}")}),
                ),
                Turn::Text(format!("echoed {i}")),
            ],
        );
        let ws = tests.join(format!("t{i:02}"));
        std::fs::create_dir_all(&ws)?;
        std::fs::write(ws.join("input.txt"), "fixture\n")?;
        std::fs::write(
            ws.join("t.aptitude.yaml"),
            format!(
                "name: t{i:02}\nprompt: \"{marker}\"\nmcp_servers:\n{servers}assertions:\n  - tool: mcp__{server}__echo\n"
            ),
        )?;
    }
    Ok(())
}

fn measure(out: &mut impl Write, bench: &Bench, bin: &Path, server: &Path) -> std::io::Result<()> {
    let model = ScriptedModel::start();
    let base_url = format!("{}{}", model.base_url(), bench.base_path);
    let dir = tempfile::tempdir()?;
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home)?;
    let env = agents::bench_env(&home);
    let run = |json: &str, extra: &[&str]| -> std::io::Result<f64> {
        let t = Instant::now();
        let status =
            agents::aptitude_run(dir.path(), &env, (bench, bin, &base_url), JOBS, Some(json))
                .args(extra)
                .status()?;
        let took = t.elapsed().as_secs_f64() / TESTS as f64;
        if !status.success() {
            return Err(std::io::Error::other(format!(
                "aptitude run {json} {extra:?}: {status}"
            )));
        }
        Ok(took)
    };
    let stdio = format!(
        "  everything:\n    command: node\n    args: [{:?}, stdio]\n",
        server.display().to_string()
    );
    write_tests(dir.path(), &model, bench, "live", &stdio, "everything")?;
    let live = run("live.json", &[])?;
    write_tests(dir.path(), &model, bench, "rec", &stdio, "everything")?;
    let recorded = run("rec.json", &["--record-model"])?;
    let replayed = run("replay.json", &["--replay", "rec.json"])?;
    let mock = "  everything:\n    mock:\n      tools:\n        echo: {description: Echoes, reply: \"Echo: scripted\"}\n";
    write_tests(dir.path(), &model, bench, "mock", mock, "everything")?;
    let mocked = run("mock.json", &[])?;
    let http = HttpServer::start(server)?;
    let remote = format!(
        "  everything: {{url: \"http://127.0.0.1:{}/mcp\"}}\n",
        http.port
    );
    write_tests(dir.path(), &model, bench, "http", &remote, "everything")?;
    let fronted = run("http.json", &[])?;
    drop(http);
    let (bytes, mcp_share) = cassette_sizes(&dir.path().join("rec.cassettes"))?;
    writeln!(
        out,
        "{:9} stdio live {:.2} s · recorded {:.2} s · replayed {:.2} s · mock {:.2} s · HTTP through the front {:.2} s · cassette {} B/run, MCP traffic {:.0}% of it uncompressed",
        bench.name,
        live,
        recorded,
        replayed,
        mocked,
        fronted,
        bytes / TESTS as u64,
        mcp_share * 100.0
    )?;
    Ok(())
}

/// The cassettes' total size, and the share of their uncompressed JSON that is `mcp`.
fn cassette_sizes(dir: &Path) -> std::io::Result<(u64, f64)> {
    let (mut bytes, mut json_total, mut mcp) = (0u64, 0usize, 0usize);
    for entry in std::fs::read_dir(dir)?.flatten() {
        let raw = std::fs::read(entry.path())?;
        bytes += raw.len() as u64;
        let mut json = Vec::new();
        flate2::read::GzDecoder::new(&raw[..]).read_to_end(&mut json)?;
        json_total += json.len();
        let value: serde_json::Value =
            serde_json::from_slice(&json).map_err(std::io::Error::other)?;
        mcp += value.get("mcp").map_or(0, |m| m.to_string().len());
    }
    Ok((bytes, mcp as f64 / json_total.max(1) as f64))
}

/// The server over streamable HTTP on a free port; stopped when dropped.
struct HttpServer {
    child: std::process::Child,
    port: u16,
}

impl HttpServer {
    fn start(server: &Path) -> std::io::Result<Self> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let child = Command::new("node")
            .arg(server)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()?;
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if started.elapsed().as_secs() > 30 {
                return Err(std::io::Error::other("the HTTP server did not listen"));
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        Ok(HttpServer { child, port })
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
