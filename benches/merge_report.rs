//! `aptitude merge` of ten shards and `aptitude report` of one results file, at 5,000 tests
//! × 3 runs (`cargo bench --bench merge_report`).
//!
//! The suite is `benches/support/suite.rs`'s (each run with its transcript, changed files,
//! model requests and sandbox proof). It is written whole as one results file (version 3:
//! the JSON and its blob pack), and split test by test into ten shard results files, as ten
//! `run --shard K/10` jobs would write them. The release binary (`CARGO_BIN_EXE_aptitude`)
//! then runs, each in its own process:
//! - `merge` of the ten shards into results JSON;
//! - `merge` into results JSON, HTML, Markdown and JUnit;
//! - `report` of the one file into HTML, into Markdown, and into JUnit.
//!
//! For each: wall time, and peak resident memory (`ru_maxrss` of the process, read by a
//! child of the bench that started only it). Target (issue 43): at most 256 MiB, at no worse time. Figures are printed, not
//! asserted.
//!
//! With `MERGE_REPORT_DIR=DIR` the generated files are kept in DIR and reused by the next
//! run; with `MERGE_REPORT_BIN=FILE` another aptitude binary is measured (an older build,
//! for a comparison on the same machine).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[path = "support/suite.rs"]
mod suite;

use aptitude::verdict::results::{BalancedBy, Results, ShardInfo};

const TESTS: usize = 5_000;
const SHARDS: usize = 10;

/// Writes the whole results and its ten shards into `dir`, unless they are there already.
fn generate(dir: &Path) -> std::io::Result<(PathBuf, Vec<PathBuf>)> {
    let whole = dir.join("whole.json");
    let shards: Vec<PathBuf> = (1..=SHARDS)
        .map(|k| dir.join(format!("shard-{k}.json")))
        .collect();
    if whole.exists() && shards.iter().all(|s| s.exists()) {
        return Ok((whole, shards));
    }
    let write =
        |r: &Results, p: &Path| aptitude::report::json::write(r, p).map_err(std::io::Error::other);
    let results = suite::results(TESTS, 0);
    write(&results, &whole)?;
    let mut parts: Vec<Vec<_>> = vec![Vec::new(); SHARDS];
    for (i, test) in results.tests.into_iter().enumerate() {
        parts[i % SHARDS].push(test);
    }
    for (k, (tests, path)) in parts.into_iter().zip(&shards).enumerate() {
        let mut shard = Results::new(tests, 60_000);
        shard.shard = Some(ShardInfo {
            index: u32::try_from(k + 1).unwrap_or(1),
            count: u32::try_from(SHARDS).unwrap_or(1),
            tests: u32::try_from(TESTS).unwrap_or(0),
            balanced_by: BalancedBy::Hash,
            runs: Some(u32::try_from(TESTS * 3).unwrap_or(0)),
            baseline: None,
        });
        write(&shard, path)?;
    }
    Ok((whole, shards))
}

/// Runs the binary with `args` in a child of this bench (`--measure`), which prints the
/// peak RSS of its only child (`getrusage(RUSAGE_CHILDREN)`): the binary's wall time in
/// s, its peak RSS in KiB, and its exit code (1: the suite has failing tests).
fn measure(exe: &Path, args: &[&std::ffi::OsStr]) -> std::io::Result<(f64, i64, i32)> {
    let t = Instant::now();
    let run = std::process::Command::new(std::env::current_exe()?)
        .arg("--measure")
        .arg(exe)
        .args(args)
        .stderr(std::process::Stdio::inherit())
        .output()?;
    let secs = t.elapsed().as_secs_f64();
    let text = String::from_utf8_lossy(&run.stdout);
    let mut parts = text.split_whitespace();
    let rss = parts.next().and_then(|n| n.parse().ok()).unwrap_or(0);
    let code = parts.next().and_then(|n| n.parse().ok()).unwrap_or(-1);
    Ok((secs, rss, code))
}

/// `--measure EXE ARGS…`: runs EXE, then prints its peak RSS in KiB and its exit code.
fn measured(exe: &str, args: &[String]) -> std::io::Result<()> {
    let status = std::process::Command::new(exe)
        .args(args)
        .stdout(std::process::Stdio::null())
        .status()?;
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
        .map_err(std::io::Error::other)?;
    writeln!(
        std::io::stdout(),
        "{} {}",
        usage.max_rss(),
        status.code().unwrap_or(-1)
    )
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if let Some(pos) = args.iter().position(|a| a == "--measure") {
        let exe = args.get(pos + 1).map_or("", String::as_str);
        return measured(exe, args.get(pos + 2..).unwrap_or(&[]));
    }
    let kept = std::env::var_os("MERGE_REPORT_DIR").map(PathBuf::from);
    let temp = tempfile::tempdir()?;
    let dir = kept.unwrap_or_else(|| temp.path().to_owned());
    std::fs::create_dir_all(&dir)?;
    let t = Instant::now();
    let (whole, shards) = generate(&dir)?;
    let mut out = std::io::stdout().lock();
    let mb = |p: &Path| std::fs::metadata(p).map_or(0.0, |m| m.len() as f64 / 1e6);
    let pack = |p: &Path| aptitude::verdict::results::compact::pack_path(p);
    writeln!(
        out,
        "{TESTS} tests × 3 runs: one results file {:.1} MB (JSON {:.1} MB + pack {:.1} MB), ten shards {:.1} MB in all; ready in {:.1} s",
        mb(&whole) + mb(&pack(&whole)),
        mb(&whole),
        mb(&pack(&whole)),
        shards.iter().map(|s| mb(s) + mb(&pack(s))).sum::<f64>(),
        t.elapsed().as_secs_f64()
    )?;
    let exe = std::env::var_os("MERGE_REPORT_BIN").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_aptitude")),
        PathBuf::from,
    );
    let exe = exe.as_path();
    let o = |p: &Path| p.as_os_str().to_owned();
    let merged = dir.join("merged.json");
    let (html, md, junit) = (dir.join("r.html"), dir.join("r.md"), dir.join("r.xml"));
    let shard_args: Vec<std::ffi::OsString> = shards.iter().map(|s| o(s)).collect();
    let with = |head: &[&str], files: &[std::ffi::OsString], tail: Vec<std::ffi::OsString>| {
        let mut v: Vec<std::ffi::OsString> = head.iter().map(Into::into).collect();
        v.extend(files.iter().cloned());
        v.extend(tail);
        v
    };
    let cases: Vec<(&str, Vec<std::ffi::OsString>, Vec<&PathBuf>)> = vec![
        (
            "merge of ten shards into results JSON",
            with(&["merge"], &shard_args, vec!["--json".into(), o(&merged)]),
            vec![&merged],
        ),
        (
            "merge into results JSON, HTML, Markdown and JUnit",
            with(
                &["merge"],
                &shard_args,
                vec![
                    "--json".into(),
                    o(&merged),
                    "--html".into(),
                    o(&html),
                    "--markdown".into(),
                    o(&md),
                    "--junit".into(),
                    o(&junit),
                ],
            ),
            vec![&merged, &html, &md, &junit],
        ),
        (
            "report into HTML",
            with(&["report"], &[o(&whole)], vec!["--html".into(), o(&html)]),
            vec![&html],
        ),
        (
            "report into Markdown",
            with(&["report"], &[o(&whole)], vec!["--markdown".into(), o(&md)]),
            vec![&md],
        ),
        (
            "report into JUnit",
            with(&["report"], &[o(&whole)], vec!["--junit".into(), o(&junit)]),
            vec![&junit],
        ),
    ];
    for (what, args, files) in cases {
        let args: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsString::as_os_str).collect();
        let (secs, rss_kib, code) = measure(exe, &args)?;
        let sizes: Vec<String> = files
            .iter()
            .map(|f| {
                let name = f
                    .file_name()
                    .map_or(String::new(), |n| n.to_string_lossy().into_owned());
                let extra = if name.ends_with(".json") {
                    mb(&pack(f))
                } else {
                    0.0
                };
                format!("{name} {:.1} MB", mb(f) + extra)
            })
            .collect();
        writeln!(
            out,
            "{what}: {secs:.2} s, peak RSS {:.1} MiB, exit {code}; {}",
            rss_kib as f64 / 1024.0,
            sizes.join(", ")
        )?;
    }
    Ok(())
}
