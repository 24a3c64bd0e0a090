//! `aptitude diff` on two results of 5,000 tests × 3 runs (`cargo bench --bench diff`).
//!
//! The base is `benches/support/suite.rs`'s suite; in the head, 1 test in 10 stops after
//! its edit in every run (500 tests whose pass rate changed). Both are written as results
//! files; a child process then does what `aptitude diff BASE HEAD --json --markdown` does —
//! reads both files, compares them, renders the terminal text, Markdown and JSON — and
//! reports its time and its peak resident memory (VmHWM), above the process's base. The
//! same for the runs of one file (`aptitude diff HEAD`). Each is also done reading the files
//! whole, as `aptitude diff` did before it read them test by test ([`diff::read`]), for a
//! comparison on the same machine. Figures are printed, not asserted.

use std::io::Write;
use std::path::Path;
use std::time::Instant;

#[path = "support/peak_rss.rs"]
mod peak_rss;
#[path = "support/suite.rs"]
mod suite;

use aptitude::report::diff::{self, DiffOptions};

fn options() -> DiffOptions {
    DiffOptions {
        test: None,
        runs: None,
        significance: aptitude::report::baseline::DEFAULT_SIGNIFICANCE,
        labels: ("base.json".into(), "head.json".into()),
    }
}

/// In the child: `aptitude diff`'s work on `base` (and `head`), then one line: base and
/// peak RSS in KiB, seconds, and what was found.
fn child(base: &Path, head: Option<&Path>, whole: bool) -> Result<String, String> {
    let before = peak_rss::peak_rss_kib();
    let t = Instant::now();
    let read = |p: &Path| aptitude::report::json::read(p).map_err(|e| e.to_string());
    // As `aptitude diff` reads them: whole only the tests the comparison explains (or, to
    // compare, both files whole, as it read them before).
    let report = match head {
        Some(h) if whole => diff::diff(&read(base)?, &read(h)?, &options()),
        None if whole => diff::diff_runs(&read(base)?, &options()),
        Some(h) => {
            let (b, h) = diff::read::pair(base, h, &options()).map_err(|e| e.to_string())?;
            diff::diff(&b, &h, &options())
        }
        None => {
            let b = diff::read::one(base, &options()).map_err(|e| e.to_string())?;
            diff::diff_runs(&b, &options())
        }
    }
    .map_err(|e| e.to_string())?;
    let text = diff::to_terminal(&report);
    let md = diff::to_markdown(&report);
    let json = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
    let secs = t.elapsed().as_secs_f64();
    Ok(format!(
        "{before} {} {secs:.3} {} listed ({} regressed); terminal {} kB, Markdown {} kB, JSON {} kB",
        peak_rss::peak_rss_kib(),
        report.summary.changed,
        report.summary.regressed,
        text.len() / 1000,
        md.len() / 1000,
        json.len() / 1000
    ))
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if let Some(pos) = args
        .iter()
        .position(|a| a == "--child" || a == "--child-whole")
    {
        let whole = args[pos] == "--child-whole";
        let base = args.get(pos + 1).map(Path::new);
        let head = args.get(pos + 2).map(Path::new);
        let line = match base {
            Some(base) => child(base, head, whole).unwrap_or_else(|e| format!("0 0 0 error: {e}")),
            None => "0 0 0 error: no base".into(),
        };
        writeln!(std::io::stdout(), "{line}")?;
        return Ok(());
    }
    let dir = tempfile::tempdir()?;
    let (base, head) = (dir.path().join("base.json"), dir.path().join("head.json"));
    aptitude::report::json::write(&suite::results(5_000, 0), &base)
        .map_err(std::io::Error::other)?;
    aptitude::report::json::write(&suite::results(5_000, 1), &head)
        .map_err(std::io::Error::other)?;
    let mut out = std::io::stdout().lock();
    // On disk: the JSON and its blob pack (results version 3), and the same results with
    // their detail inline, as every version before 3 wrote them.
    let mb = |p: &Path| std::fs::metadata(p).map_or(0.0, |m| m.len() as f64 / 1e6);
    let pack = |p: &Path| aptitude::verdict::results::compact::pack_path(p);
    let inline = aptitude::report::json::FORMAT.render;
    let options = aptitude::report::RenderOptions {
        markdown_max_chars: 65_000,
    };
    let t = Instant::now();
    let whole = suite::results(5_000, 0);
    let inline_len = inline(&whole, &whole.tests, &options)
        .map_err(std::io::Error::other)?
        .len();
    let inline_secs = t.elapsed().as_secs_f64();
    let t = Instant::now();
    aptitude::report::json::write(&suite::results(5_000, 0), &base)
        .map_err(std::io::Error::other)?;
    let compact_secs = t.elapsed().as_secs_f64();
    writeln!(
        out,
        "two results of 5,000 tests × 3 runs: base {:.1} MB (JSON {:.1} MB + pack {:.1} MB; inline, as before version 3: {:.1} MB), head {:.1} MB; built and written in {compact_secs:.2} s (built and rendered inline: {inline_secs:.2} s)",
        mb(&base) + mb(&pack(&base)),
        mb(&base),
        mb(&pack(&base)),
        inline_len as f64 / 1e6,
        mb(&head) + mb(&pack(&head)),
    )?;
    let exe = std::env::current_exe()?;
    for (what, mode, files) in [
        ("diff BASE HEAD", "--child", vec![&base, &head]),
        ("diff HEAD (runs of one file)", "--child", vec![&head]),
        (
            "both files read whole (before)",
            "--child-whole",
            vec![&base, &head],
        ),
        ("one file read whole (before)", "--child-whole", vec![&head]),
    ] {
        let run = std::process::Command::new(&exe)
            .arg(mode)
            .args(files)
            .output()?;
        let text = String::from_utf8_lossy(&run.stdout).into_owned();
        let mut parts = text.splitn(4, ' ');
        let num = |p: Option<&str>| p.and_then(|p| p.parse::<f64>().ok()).unwrap_or(0.0);
        let (rss_base, peak, secs) = (num(parts.next()), num(parts.next()), num(parts.next()));
        writeln!(
            out,
            "{what}: {secs:.3} s, peak RSS {:.1} MiB (process base {:.1} MiB); {}",
            peak / 1024.0,
            rss_base / 1024.0,
            parts.next().unwrap_or("").trim()
        )?;
    }
    Ok(())
}
