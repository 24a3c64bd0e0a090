//! The hostile-agent suite: the real `claude` with a scripted model playing an agent that
//! attacks aptitude — FIFOs where files are expected, writes through the fixture's
//! symlinks, links to host files, daemons that shed every marker, writes outside the
//! workspace, a 6 GB sparse file, secrets printed JSON-escaped — and signals and blocking
//! post-run work.
//!
//! Each scenario asserts what the issue (#10) asks of aptitude: the run ends (no timed
//! assertion: the run's own timeouts bound it, the test harness bounds the rest), the
//! fixture is unchanged, no host file is read into any output, no process outlives the
//! run (checked by pid), and no secret reaches any output file.
//!
//! To keep it fast, most scenarios share one `aptitude run` (one scripted model, one
//! `claude` per scenario, run concurrently) whose outputs each `#[test]` inspects.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::{Value, json};

use crate::run::test;
use crate::support::cli::{Aptitude, Running};
use crate::support::model::{ScriptedModel, Turn};
use crate::support::procs::{Ready, alive, marked, numbers, running};

/// A tag for the commands of this test process (`sleep 7739.<tag>`), so that processes
/// left by an earlier, broken run of the suite can not be mistaken for this one's.
fn unique() -> String {
    format!("{}", std::process::id())
}

/// The live processes of this test process whose command line contains `needle`.
fn ours(needle: &str) -> Vec<i32> {
    let tag = format!(".{}", unique());
    running(needle)
        .into_iter()
        .filter(|p| alive(*p, &tag))
        .collect()
}

/// The core of the secret; it must appear in no output whatever the encoding.
const SECRET_CORE: &str = "7f3a9c2e51d4";

/// The secret as the test's `env:` holds it: with `"` and `\`, so that its JSON form
/// differs from its raw form.
const SECRET: &str = r#"tok-"quoted\back-7f3a9c2e51d4"#;

/// What the host file leaks look like (`/etc/passwd`'s first line).
const PASSWD_TEXT: &str = "root:x:0:0";

/// A directory of tests and fixtures for one `aptitude run`.
struct Dir {
    dir: tempfile::TempDir,
}

impl Dir {
    fn new() -> Self {
        Dir {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn file(&self, rel: &str, text: &str) -> &Self {
        let path = self.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        self
    }

    fn symlink(&self, target: &Path, rel: &str) -> &Self {
        std::os::unix::fs::symlink(target, self.path().join(rel)).unwrap();
        self
    }
}

/// `aptitude run tests --json results.json` in `dir` with a cleared environment pointing
/// at `model`, plus `env` and `args`; its `HOME` and `TMPDIR` (where aptitude's temp dirs,
/// workspace copies and agent config dirs, go, to be checked for leftovers) in `dir`.
fn aptitude(dir: &Path, model: &ScriptedModel, env: &[(&str, &str)], args: &[&str]) -> Running {
    Aptitude::new()
        .sandbox_in(dir)
        .model(model)
        .envs(env.iter().copied())
        .current_dir(dir)
        .args(["run", "tests", "--json", "results.json"])
        .claude()
        .args(args)
        .spawn()
}

/// What one finished `aptitude run` left.
struct Finished {
    code: Option<i32>,
    results: Value,
    /// Every file aptitude wrote (results, reports, recorded transcripts) and its
    /// stdout/stderr, by name.
    outputs: BTreeMap<String, String>,
    /// Processes still carrying this run's environment marker.
    marked: Vec<i32>,
    /// aptitude's temp dirs left in its TMPDIR.
    leftover_temp: Vec<String>,
}

fn finish(dir: &Path, aptitude_pid: u32, out: std::process::Output) -> Finished {
    let results_text = crate::support::results_text(dir.join("results.json")).unwrap_or_else(|e| {
        panic!(
            "no results JSON ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let mut outputs = BTreeMap::new();
    outputs.insert("results.json".to_owned(), results_text.clone());
    outputs.insert(
        "stdout".to_owned(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    );
    outputs.insert(
        "stderr".to_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    for name in ["report.html", "report.md", "junit.xml"] {
        if let Ok(text) = std::fs::read_to_string(dir.join(name)) {
            outputs.insert(name.to_owned(), text);
        }
    }
    for entry in std::fs::read_dir(dir.join("tests")).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".transcript.jsonl") {
            outputs.insert(name, std::fs::read_to_string(entry.path()).unwrap());
        }
    }
    let leftover_temp = std::fs::read_dir(dir.join("tmp"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("aptitude-"))
        .collect();
    Finished {
        code: out.status.code(),
        results: serde_json::from_str(&results_text).unwrap(),
        outputs,
        marked: marked(&format!("{aptitude_pid}-")),
        leftover_temp,
    }
}

/// Regular files under `root` and their contents (symlinks are not followed).
fn tree(root: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                walk(root, &path, out);
            } else if meta.is_file() {
                out.insert(
                    path.strip_prefix(root).unwrap().display().to_string(),
                    String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned(),
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// A test file for a scenario: its own workspace directory, a marker prompt, `extra`
/// YAML (timeout, env, assertions).
fn scenario(dir: &Dir, name: &str, extra: &str) {
    std::fs::create_dir_all(dir.path().join("tests").join(name)).unwrap();
    dir.file(&format!("tests/{name}/README"), "a fixture\n");
    dir.file(
        &format!("tests/{name}.aptitude.yaml"),
        &format!("name: {name}\nprompt: \"hostile-{name}\"\nworkspace: {name}\n{extra}"),
    );
}

/// A Bash tool call.
fn bash(command: &str) -> Turn {
    Turn::Tool(
        "Bash",
        json!({"command": command, "description": "hostile"}),
    )
}

/// Daemons that leave the session, the process group and the environment marker, each
/// writing its pid to a FIFO the command reads (it waits on them, it does not poll); then
/// their pids are printed (`sleep 77nn` tells them apart).
fn daemons(tag: &str) -> String {
    format!(
        "mkfifo pids.fifo; exec 3<>pids.fifo
         setsid env -i sh -c 'echo $$ > pids.fifo; exec sleep 77{tag}1.{u}' </dev/null >/dev/null 2>&1 3>&- &
         env -u APTITUDE_RUN_ID setsid sh -c 'echo $$ > pids.fifo; exec sleep 77{tag}2.{u}' </dev/null >/dev/null 2>&1 3>&- &
         (setsid env -i sh -c 'echo $$ > pids.fifo; exec sleep 77{tag}3.{u}' </dev/null >/dev/null 2>&1 3>&- &)
         read a <&3; read b <&3; read c <&3; exec 3<&-; rm pids.fifo; echo $a $b $c",
        u = unique()
    )
}

/// The daemons' pids, from the first tool call's output.
fn daemon_pids(t: &Value) -> Vec<i32> {
    let output = t["transcript"]["tool_calls"][0]["output"]
        .as_str()
        .unwrap_or_else(|| panic!("no daemon pids: {t:#}"));
    let pids = numbers(output);
    assert_eq!(pids.len(), 3, "{output}");
    pids
}

/// Scripts and writes the two daemon scenarios: one that ends normally, one cut by its
/// timeout while its daemons run.
fn daemon_scenarios(model: &ScriptedModel, dir: &Dir) {
    model.script(
        "hostile-daemons-end",
        vec![bash(&daemons("1")), Turn::Text("daemons started".into())],
    );
    model.script(
        "hostile-daemons-timeout",
        vec![
            bash(&daemons("2")),
            // Claude Code refuses a command that starts with a long `sleep`.
            bash("echo waiting; sleep 300; echo end"),
            Turn::Text("never".into()),
        ],
    );
    scenario(dir, "daemons-end", "assertions:\n  - tool: Bash\n");
    scenario(
        dir,
        "daemons-timeout",
        "timeout: 40s\nassertions:\n  - tool: Bash\n",
    );
}

/// Asserts that both daemon scenarios ran and that none of their daemons survived.
fn assert_no_daemon_survived(run: &Finished) {
    let end = test(&run.results, "daemons-end");
    assert_eq!(end["status"], "passed", "{end:#}");
    let timeout = test(&run.results, "daemons-timeout");
    assert_eq!(timeout["status"], "error", "{timeout:#}");
    assert!(
        timeout["error"]
            .as_str()
            .unwrap()
            .starts_with("timed out after 40s"),
        "{}",
        timeout["error"]
    );
    for (t, tag) in [(end, "1"), (timeout, "2")] {
        let survivors: Vec<i32> = daemon_pids(t)
            .into_iter()
            .filter(|pid| {
                alive(*pid, &format!("sleep 77{tag}")) && alive(*pid, &format!(".{}", unique()))
            })
            .collect();
        assert!(
            survivors.is_empty(),
            "{}: daemons {survivors:?} outlived the run",
            t["name"]
        );
    }
    assert!(run.marked.is_empty(), "marked survivors: {:?}", run.marked);
}

/// The shared run of most scenarios.
struct Hostile {
    run: Finished,
    fixture_before: BTreeMap<String, String>,
    fixture_after: BTreeMap<String, String>,
    /// Whether the file the agent wrote outside its workspace exists.
    wrote_outside: bool,
}

fn hostile() -> &'static Hostile {
    static RUN: OnceLock<Hostile> = OnceLock::new();
    RUN.get_or_init(run_hostile)
}

fn run_hostile() -> Hostile {
    let model = ScriptedModel::start();
    let dir = Dir::new();
    let elsewhere = dir.path().join("elsewhere/out/report.json");

    // FIFOs where the assertions expect files.
    model.script(
        "hostile-fifo",
        vec![
            bash("mkfifo out.json notes.txt && echo made"),
            Turn::Text("made two files".into()),
        ],
    );
    scenario(
        &dir,
        "fifo",
        "timeout: 30s\nassertions:\n  - json_file: {path: out.json, required: [goal]}\n  - file_contains: {path: notes.txt, text: done}\n",
    );

    // Links in the fixture that point into the fixture (absolute), and a link the agent
    // makes to a host file.
    let sym = dir.path().join("tests/symlinks");
    scenario(
        &dir,
        "symlinks",
        "assertions:\n  - file_contains: {path: passwd-link, text: no-such-text-in-passwd}\n",
    );
    dir.file("tests/symlinks/data.txt", "original\n")
        .file("tests/symlinks/sub/inner.txt", "inner\n")
        .symlink(&sym.join("data.txt"), "tests/symlinks/link-abs")
        .symlink(&sym.join("sub"), "tests/symlinks/dirlink");
    model.script(
        "hostile-symlinks",
        vec![
            bash("echo pwned > link-abs; echo pwned > dirlink/inner.txt; ln -s /etc/passwd passwd-link; echo done"),
            Turn::Text("done".into()),
        ],
    );

    // A write outside the workspace.
    model.script(
        "hostile-outside",
        vec![
            Turn::Tool(
                "Write",
                json!({"file_path": elsewhere.display().to_string(), "content": "{}\n"}),
            ),
            Turn::Text("wrote the report".into()),
        ],
    );
    scenario(
        &dir,
        "outside",
        "assertions:\n  - wrote: [out/report.json]\n",
    );

    // A 6 GB sparse file: the snapshot must neither read it whole nor take long.
    model.script(
        "hostile-sparse",
        vec![
            bash("truncate -s 6G big.img && echo filled"),
            Turn::Text("filled".into()),
        ],
    );
    scenario(
        &dir,
        "sparse",
        "timeout: 60s\nassertions:\n  - tool: Bash\n",
    );

    // A secret with `"` and `\`, printed by the agent: its JSON-escaped form is what the
    // raw transcript holds.
    model.script(
        "hostile-secret",
        vec![
            bash("printf '%s\\n' \"$API_TOKEN\""),
            Turn::Text("printed it".into()),
        ],
    );
    scenario(
        &dir,
        "secret",
        &format!("env:\n  API_TOKEN: '{SECRET}'\nassertions:\n  - tool: Bash\n"),
    );

    // Post-run work that blocks: a verify that never exits, with a long timeout of its own.
    // The test's timeout is the agent's budget too: at 20 s, Claude Code's one text turn,
    // started beside the other scenarios (`--jobs 8`) on a loaded 2-core machine, once
    // ran out before the verify started.
    model.script("hostile-deadline", vec![Turn::Text("nothing to do".into())]);
    scenario(
        &dir,
        "deadline",
        &format!(
            "timeout: 40s\nassertions:\n  - verify: {{run: \"exec sleep 7739.{}\", timeout: 1h}}\n",
            unique()
        ),
    );

    daemon_scenarios(&model, &dir);

    let fixture_before = tree(&dir.path().join("tests"));
    let child = aptitude(
        dir.path(),
        &model,
        &[],
        &[
            "--jobs",
            "8",
            "--record",
            "--html",
            "report.html",
            "--markdown",
            "report.md",
            "--junit",
            "junit.xml",
        ],
    );
    let pid = child.id();
    let out = child.child.wait_with_output().unwrap();
    let run = finish(dir.path(), pid, out);
    let mut fixture_after = tree(&dir.path().join("tests"));
    // What the run itself writes beside the tests.
    fixture_after.retain(|k, _| !k.ends_with(".transcript.jsonl"));
    Hostile {
        run,
        fixture_before,
        fixture_after,
        wrote_outside: elsewhere.exists(),
    }
}

#[test]
fn a_hostile_run_ends_leaves_no_process_and_no_temp_dir() {
    let h = hostile();
    assert_eq!(h.run.code, Some(1), "{}", h.run.outputs["stderr"]);
    assert_no_daemon_survived(&h.run);
    let left = ours("sleep 77");
    assert!(left.is_empty(), "{left:?} outlived the run");
    assert!(h.run.leftover_temp.is_empty(), "{:?}", h.run.leftover_temp);
}

#[test]
fn a_verify_that_never_exits_is_cut_by_the_post_run_deadline() {
    let t = test(&hostile().run.results, "deadline");
    assert_eq!(t["status"], "error");
    assert_eq!(
        t["error"],
        format!(
            "post-run work did not finish within 40s (the test's timeout): cut during verify `exec sleep 7739.{}`",
            unique()
        )
    );
    assert!(ours("sleep 7739").is_empty(), "the verify outlived its cut");
}

#[test]
fn fifos_the_agent_made_fail_their_assertions_without_hanging() {
    let t = test(&hostile().run.results, "fifo");
    assert_eq!(t["status"], "failed", "{t:#}");
    let statuses: Vec<&Value> = t["assertions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| &a["status"])
        .collect();
    assert_eq!(statuses, ["fail", "fail"], "{t:#}");
}

#[test]
fn writes_through_fixture_symlinks_never_reach_the_fixture() {
    let h = hostile();
    assert_eq!(
        test(&h.run.results, "symlinks")["transcript"]["final_text"],
        "done"
    );
    assert_eq!(h.fixture_after, h.fixture_before, "the fixture changed");
}

#[test]
fn a_link_to_a_host_file_is_never_read_into_any_output() {
    let h = hostile();
    let t = test(&h.run.results, "symlinks");
    assert_eq!(t["assertions"][0]["status"], "fail", "{t:#}");
    for (name, text) in &h.run.outputs {
        assert!(!text.contains(PASSWD_TEXT), "{name} holds /etc/passwd");
    }
}

#[test]
fn a_write_outside_the_workspace_never_happens_nor_counts_as_written() {
    let h = hostile();
    assert!(
        !h.wrote_outside,
        "the sandbox let the agent write outside its copy"
    );
    let t = test(&h.run.results, "outside");
    assert_eq!(t["assertions"][0]["status"], "fail", "{t:#}");
}

#[test]
fn a_six_gigabyte_sparse_file_is_snapshotted() {
    let t = test(&hostile().run.results, "sparse");
    assert_eq!(t["status"], "passed", "{t:#}");
    let big = t["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "big.img")
        .unwrap_or_else(|| panic!("{t:#}"));
    assert_eq!(big["size"], 6u64 << 30);
}

#[test]
fn a_json_escaped_secret_leaks_into_no_output() {
    let h = hostile();
    let t = test(&h.run.results, "secret");
    assert_eq!(t["status"], "passed", "{t:#}");
    assert_eq!(t["recorded"], "tests/secret.transcript.jsonl");
    assert!(h.run.outputs.contains_key("secret.transcript.jsonl"));
    for (name, text) in &h.run.outputs {
        assert!(!text.contains(SECRET_CORE), "{name} holds the secret");
    }
}

#[test]
fn daemons_die_in_the_subreaper_fallback_too() {
    let model = ScriptedModel::start();
    let dir = Dir::new();
    daemon_scenarios(&model, &dir);
    // The subreaper is the containment of unsandboxed runs (in the sandbox, its PID
    // namespace ends every process).
    let child = aptitude(
        dir.path(),
        &model,
        &[("APTITUDE_NO_CGROUP", "1")],
        &["--jobs", "2", "--sandbox", "off"],
    );
    let pid = child.id();
    let run = finish(dir.path(), pid, child.child.wait_with_output().unwrap());
    assert_no_daemon_survived(&run);
    assert_eq!(run.code, Some(1), "{}", run.outputs["stderr"]);
    assert!(run.leftover_temp.is_empty(), "{:?}", run.leftover_temp);
}

/// Runs the tests of `dir`, waits until `line` was printed (a verdict) and each FIFO in
/// `ready` was written (the scripted commands are running), sends `signal` and returns what
/// the run left.
fn interrupt(
    model: &ScriptedModel,
    dir: &Dir,
    line: Option<&str>,
    ready: &[Ready],
    signal: nix::sys::signal::Signal,
) -> Finished {
    use std::io::BufRead;
    // The scripted commands signal readiness through FIFOs in the test's directory, which
    // a sandboxed command can not reach: these tests are about aptitude's own process
    // handling (signals, groups, jails), which holds with the sandbox off too.
    let mut run = aptitude(dir.path(), model, &[], &["--jobs", "3", "--sandbox", "off"]);
    let child = &mut run.child;
    let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for l in stdout.lines().map_while(Result::ok) {
            let _ = tx.send(l.clone());
            all.push_str(&l);
            all.push('\n');
        }
        all
    });
    if let Some(line) = line {
        loop {
            match rx.recv_timeout(Duration::from_secs(180)) {
                Ok(l) if l.contains(line) => break,
                Ok(_) => {}
                Err(_) => {
                    let _ = child.kill();
                    panic!("`{line}` was never printed");
                }
            }
        }
    }
    for fifo in ready {
        fifo.wait(child, Duration::from_secs(180));
    }
    run.signal(signal);
    let pid = run.id();
    let mut out = run.child.wait_with_output().unwrap();
    out.stdout = reader.join().unwrap().into_bytes();
    finish(dir.path(), pid, out)
}

#[test]
fn sigterm_during_post_run_work_ends_the_run_with_results() {
    let model = ScriptedModel::start();
    let dir = Dir::new();
    let verify_ready = Ready::new(dir.path().join("verify.ready"));
    let agent_ready = Ready::new(dir.path().join("agent.ready"));
    model.script("hostile-quick", vec![Turn::Text("quick".into())]);
    model.script("hostile-post", vec![Turn::Text("nothing to do".into())]);
    model.script(
        "hostile-busy",
        vec![
            bash(&format!(
                "echo go > {}; exec sleep 7761.{}",
                agent_ready.path().display(),
                unique()
            )),
            Turn::Text("never".into()),
        ],
    );
    scenario(
        &dir,
        "quick",
        "assertions:\n  - tool: Bash\n    called: false\n",
    );
    let verify = format!(
        "echo go > {}; exec sleep 7762.{}",
        verify_ready.path().display(),
        unique()
    );
    scenario(
        &dir,
        "post",
        &format!("timeout: 10m\nassertions:\n  - verify: {{run: \"{verify}\", timeout: 1h}}\n"),
    );
    scenario(&dir, "busy", "timeout: 10m\nassertions:\n  - tool: Bash\n");
    let run = interrupt(
        &model,
        &dir,
        Some("✓ quick"),
        &[verify_ready, agent_ready],
        nix::sys::signal::Signal::SIGTERM,
    );
    assert_eq!(run.code, Some(130), "{}", run.outputs["stderr"]);
    assert_eq!(
        test(&run.results, "quick")["status"],
        "passed",
        "finished results are kept"
    );
    let post = test(&run.results, "post");
    assert_eq!(post["status"], "error");
    assert_eq!(
        post["error"],
        format!("interrupted during verify `{verify}`")
    );
    let busy = test(&run.results, "busy");
    assert_eq!(busy["status"], "error");
    assert_eq!(busy["error"], "interrupted: the agent was stopped");
    assert!(
        ours("sleep 776").is_empty(),
        "a command outlived the signal"
    );
    assert!(run.marked.is_empty(), "{:?}", run.marked);
    assert!(run.leftover_temp.is_empty(), "{:?}", run.leftover_temp);
}

#[test]
fn sighup_is_treated_like_sigterm() {
    let model = ScriptedModel::start();
    let dir = Dir::new();
    let ready = Ready::new(dir.path().join("agent.ready"));
    model.script(
        "hostile-hup",
        vec![
            bash(&format!(
                "(setsid env -i sleep 7781.{u} </dev/null >/dev/null 2>&1 &); echo go > {}; exec sleep 7782.{u}",
                ready.path().display(),
                u = unique()
            )),
            Turn::Text("never".into()),
        ],
    );
    scenario(&dir, "hup", "timeout: 10m\nassertions:\n  - tool: Bash\n");
    let run = interrupt(
        &model,
        &dir,
        None,
        &[ready],
        nix::sys::signal::Signal::SIGHUP,
    );
    assert_eq!(run.code, Some(130), "{}", run.outputs["stderr"]);
    let t = test(&run.results, "hup");
    assert_eq!(t["status"], "error");
    assert_eq!(t["error"], "interrupted: the agent was stopped");
    assert!(
        ours("sleep 778").is_empty(),
        "the agent's processes outlived SIGHUP"
    );
    assert!(run.marked.is_empty(), "{:?}", run.marked);
    assert!(run.leftover_temp.is_empty(), "{:?}", run.leftover_temp);
}
