//! Peak memory of workspace copies, snapshots and file assertions on big and hostile files
//! (`cargo bench --bench workspace_memory`).
//!
//! Each case runs in a child process, which reports its peak resident memory (VmHWM):
//! - a fixture holding a 2 GiB sparse file: copy, snapshot, then the changes after the
//!   "agent" added a 6 GiB sparse file to the copy;
//! - `file_contains` and `json_file` on a 100 MiB file (over the read cap: refused before
//!   reading), on a 15 MiB JSON file (under it: read and parsed), and on a link to
//!   `/dev/zero` (leads outside the workspace: never opened).
//!
//! Target: memory flat in file size (a few MiB above the process's base, never the file).
//! Figures are printed, not asserted: memory and speed are measured here, never in tests.

use std::io::Write;
use std::path::Path;
use std::time::Instant;

#[path = "support/peak_rss.rs"]
mod peak_rss;
use peak_rss::peak_rss_kib;

const MIB: u64 = 1024 * 1024;

fn sparse(path: &Path, len: u64) -> std::io::Result<()> {
    std::fs::File::create(path)?.set_len(len)
}

/// The workspace case: copy a fixture with a 2 GiB sparse file, snapshot, add 6 GiB.
fn workspace_case(dir: &Path) -> Result<String, String> {
    let fixture = dir.join("fixture");
    std::fs::create_dir_all(&fixture).map_err(|e| e.to_string())?;
    sparse(&fixture.join("disk.img"), 2 * 1024 * MIB).map_err(|e| e.to_string())?;
    std::fs::write(fixture.join("README.md"), "hello").map_err(|e| e.to_string())?;
    let t = Instant::now();
    let ws = aptitude::workspace::Workspace::create(&fixture, false).map_err(|e| e.to_string())?;
    let copied = t.elapsed();
    sparse(&ws.path().join("fill.img"), 6 * 1024 * MIB).map_err(|e| e.to_string())?;
    let t = Instant::now();
    let changes = ws.changes().map_err(|e| e.to_string())?;
    let diffed = t.elapsed();
    Ok(format!(
        "copy {:.2} s, changes {:.2} s ({} changed)",
        copied.as_secs_f64(),
        diffed.as_secs_f64(),
        changes.len()
    ))
}

/// The assertions case: big, capped and hostile files.
fn assertions_case(dir: &Path) -> Result<String, String> {
    use aptitude::assertions::{Evidence, WorkspaceEvidence};
    let root = dir.join("ws");
    std::fs::create_dir_all(&root).map_err(|e| e.to_string())?;
    let big = std::fs::File::create(root.join("big.log")).map_err(|e| e.to_string())?;
    big.set_len(100 * MIB).map_err(|e| e.to_string())?;
    // 15 MiB of JSON: an array of numbers, under the 16 MiB cap.
    let mut json = String::from("[");
    while json.len() < 15 * MIB as usize {
        json.push_str("123456789,");
    }
    json.push_str("0]");
    std::fs::write(root.join("report.json"), &json).map_err(|e| e.to_string())?;
    std::os::unix::fs::symlink("/dev/zero", root.join("zero")).map_err(|e| e.to_string())?;
    let spec = aptitude::spec::load_str(
        &root.join("t.aptitude.yaml"),
        "name: t\nprompt: p\nassertions:\n  - file_contains: {path: big.log, text: x}\n  - json_file: {path: big.log}\n  - json_file: {path: report.json}\n  - file_contains: {path: zero, text: x}\n",
    )
    .map_err(|d| format!("{d:?}"))?;
    let transcript =
        aptitude::transcript::StreamParser::new(aptitude::transcript::Format::ClaudeStreamJson)
            .finish();
    let verify = std::collections::BTreeMap::new();
    let reviews = std::collections::BTreeMap::new();
    let evidence = Evidence {
        transcript: &transcript,
        workspace: Some(WorkspaceEvidence {
            root: &root,
            changes: &[],
        }),
        verify: &verify,
        reviews: &reviews,
        mcp_calls: Some(aptitude::assertions::mcp::MockCalls {
            calls: &[],
            dropped: 0,
        }),
        user: None,
        dialog: None,
    };
    let t = Instant::now();
    let results = aptitude::assertions::evaluate(&spec, &evidence);
    let statuses: Vec<String> = results
        .iter()
        .map(|r| format!("{:?}", r.status).to_lowercase())
        .collect();
    Ok(format!(
        "{:.2} s, verdicts {}",
        t.elapsed().as_secs_f64(),
        statuses.join("/")
    ))
}

fn child(case: &str) {
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => {
            let _ = writeln!(std::io::stdout(), "error {e}");
            return;
        }
    };
    let base = peak_rss_kib();
    let outcome = match case {
        "workspace" => workspace_case(dir.path()),
        _ => assertions_case(dir.path()),
    };
    let line = match outcome {
        Ok(what) => format!("{} {} {what}", base, peak_rss_kib()),
        Err(e) => format!("0 0 error: {e}"),
    };
    let _ = writeln!(std::io::stdout(), "{line}");
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if let Some(pos) = args.iter().position(|a| a == "--child") {
        child(args.get(pos + 1).map_or("", String::as_str));
        return Ok(());
    }
    let exe = std::env::current_exe()?;
    let mut out = std::io::stdout().lock();
    for (case, what) in [
        (
            "workspace",
            "2 GiB sparse fixture: copy + snapshot, then changes after a 6 GiB sparse file",
        ),
        (
            "assertions",
            "file_contains/json_file on 100 MiB, json_file on 15 MiB of JSON, a link to /dev/zero",
        ),
    ] {
        let run = std::process::Command::new(&exe)
            .args(["--child", case])
            .output()?;
        let text = String::from_utf8_lossy(&run.stdout).into_owned();
        let mut parts = text.splitn(3, ' ');
        let base: u64 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        let peak: u64 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        let rest = parts.next().unwrap_or("").trim();
        writeln!(
            out,
            "{what}\n  peak RSS {:.1} MiB (base {:.1} MiB); {rest}",
            peak as f64 / 1024.0,
            base as f64 / 1024.0
        )?;
    }
    Ok(())
}
