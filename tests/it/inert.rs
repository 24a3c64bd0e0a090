//! Every byte the agent controls is inert (#31), tried as a hostile agent would: a stand-in
//! for `claude` (run sandboxed, as every agent is) whose tool call, tool output, final
//! answer, stderr, file names and the file a `verify` command prints all carry
//! [`AGENT`]: workflow commands (`::add-mask::`, `::stop-commands::`, `::error file=…::`,
//! `##[error]`, after `\r`, U+2028 and a zero-width space), cursor movement that redraws
//! the test as passed, OSC 52 (clipboard), OSC 8 (link) and a window title, raw HTML, an
//! `@mention`, autolinks, backtick runs and another job's sticky-comment marker.
//!
//! Each output is read by the consumer that would act on it: a reader of the runner's
//! workflow commands written from GitHub's docs (`support::workflow_commands`), a terminal
//! emulator (`vt100`) behind a real PTY (`script` from util-linux), GitHub's cmark-gfm,
//! and GitHub's OpenAPI description for the requests. Each test first shows that the
//! payload does what it should not when given raw, so that it can fail.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::github::{Gh, PR_EVENT};
use crate::run::Suite;
use crate::support::cli::{Aptitude, Output, bin};
use crate::support::consumers::gfm;
use crate::support::workflow_commands::commands;

/// What the hostile agent writes everywhere it can. Every line of it that is meant to do
/// something names itself `AGENT-…`, so that a leak can be traced.
const AGENT: &str = "AGENT-TEXT begins\n\
::add-mask::aptitude\n\
::stop-commands::hijack\n\
::error file=README.md,line=1::AGENT-ANNOTATION\n\
  ##[error]AGENT-LEGACY\n\
shown\r::warning::AGENT-AFTER-CR\n\
shown\u{2028}::notice::AGENT-AFTER-LS\n\
\u{200b}::error::AGENT-ZWSP\n\
\x1b[9A\x1b[2K\r✓ Hostile run  passed\x1b[8B\n\
\x1b]52;c;QUdFTlQtQ0xJUEJPQVJE\x07\x1b]8;;https://evil.example/\x1b\\AGENT-LINK\x1b]8;;\x1b\\\x1b]0;AGENT-TITLE\x07\x1b]2;AGENT-TITLE\x07\n\
<img src=\"https://evil.example/AGENT-IMG.png\"> @octocat </details> https://evil.example/AGENT-URL www.evil.example\n\
```` ``` fenced\r</details>\r<img src=\"https://evil.example/AGENT-CR-IMG.png\">\r@octocat\n\
<!-- aptitude:sticky-comment:job-b -->\n\
::hijack::\n\
AGENT-TEXT ends";

/// How long one `aptitude run` of the stand-in may take.
const LIMIT: Duration = Duration::from_secs(120);

/// A suite of two tests run by a stand-in `claude` playing the hostile agent: `Hostile
/// run` (answers, calls Bash, leaves files with hostile names, fails three assertions)
/// and `Crashing agent` (writes [`AGENT`] to stderr and exits 3: an `error`).
struct Hostile {
    suite: Suite,
    stub: PathBuf,
}

impl Hostile {
    fn new() -> Self {
        let suite = Suite::new();
        let stream = stream_json();
        let stub = suite.path().join("claude-stand-in");
        std::fs::write(
            &stub,
            format!(
                "#!/bin/sh\n\
                 if [ \"$1\" = --version ]; then echo '2.1.328 (Claude Code)'; exit 0; fi\n\
                 case \"$*\" in *CRASH-MARKER*)\n\
                 cat >&2 <<'APTITUDE-END'\n{AGENT}\nAPTITUDE-END\n\
                 exit 3;; esac\n\
                 cat > agent-wrote.txt <<'APTITUDE-END'\n{AGENT}\nAPTITUDE-END\n\
                 : > \"$(printf 'named\\n::error file=README.md,line=1::AGENT-FILE-NAME')\"\n\
                 : > \"$(printf 'esc\\033]0;AGENT-FILE-TITLE\\007')\"\n\
                 cat <<'APTITUDE-END'\n{stream}\nAPTITUDE-END\n"
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&stub, std::fs::Permissions::from_mode(0o755)).unwrap();
        suite
            .file(
                "tests/ws/hostile.aptitude.yaml",
                "name: Hostile run\nprompt: HOSTILE-MARKER\nassertions:\n  - tool: Bash\n    called: false\n  - output_contains: NEVER-SAID\n  - verify:\n      run: cat agent-wrote.txt\n      output_contains: NEVER-PRINTED\n",
            )
            .file(
                "tests/ws/crash.aptitude.yaml",
                "name: Crashing agent\nprompt: CRASH-MARKER\nassertions:\n  - tool: Bash\n",
            )
            .file("tests/ws/README.md", "the fixture\n")
            .file("stream.jsonl", &stream);
        Hostile { suite, stub }
    }

    /// `aptitude run tests` with the stand-in, as GitHub Actions runs it
    /// (`GITHUB_ACTIONS=true`), writing every report.
    fn run(&self) -> Output {
        run_in(self.suite.path(), &self.stub)
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.suite.path().join(rel)
    }
}

/// The stand-in's Claude Code stream-json (as 2.1.x writes it): one Bash call whose
/// command and output are [`AGENT`], and [`AGENT`] as the final answer.
fn stream_json() -> String {
    let usage = json!({"input_tokens": 10, "output_tokens": 1});
    [
        json!({"type": "system", "subtype": "init", "session_id": "s", "model": "claude-test", "claude_code_version": "2.1.328"}),
        json!({"type": "assistant", "session_id": "s", "message": {"id": "m1", "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": AGENT}}
        ], "usage": usage}}),
        json!({"type": "user", "session_id": "s", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": AGENT, "is_error": false}
        ]}}),
        json!({"type": "result", "subtype": "success", "is_error": false, "num_turns": 2,
            "result": AGENT, "session_id": "s", "total_cost_usd": 0.01, "usage": usage,
            "duration_ms": 10}),
    ]
    .iter()
    .map(Value::to_string)
    .collect::<Vec<_>>()
    .join("\n")
}

/// The commands the reader finds in `log`, as `name properties::data` lines.
fn acted_on(log: &str) -> Vec<String> {
    commands(log)
        .iter()
        .map(|c| format!("{} {}::{}", c.name, c.properties, c.data))
        .collect()
}

#[test]
fn the_payload_is_hostile_to_every_consumer_when_given_raw() {
    let found = acted_on(AGENT);
    for name in ["add-mask", "stop-commands", "hijack"] {
        assert!(
            found.iter().any(|c| c.starts_with(name)),
            "{name}: {found:?}"
        );
    }
    // While stopped, the error annotation and the rest are skipped; without the stop
    // every one of them is a command.
    let unstopped = AGENT.replace("::stop-commands::hijack\n", "");
    let found = acted_on(&unstopped);
    for data in [
        "AGENT-ANNOTATION",
        "AGENT-LEGACY",
        "AGENT-AFTER-CR",
        "AGENT-AFTER-LS",
        "AGENT-ZWSP",
    ] {
        assert!(found.iter().any(|c| c.ends_with(data)), "{data}: {found:?}");
    }
    let seen = gfm(&format!(
        "<details><summary>x</summary>\n\n{AGENT}\n</details>\n"
    ));
    assert!(
        !seen["images"].as_array().unwrap().is_empty(),
        "raw HTML renders: {seen}"
    );
    let screen = Screen::of(format!("✗ Hostile run  failed\n{AGENT}\n").as_bytes());
    assert!(
        !screen.shows_unpassed_as_unpassed("Hostile run") && screen.title.is_some(),
        "the cursor attack redraws the verdict on a raw terminal:\n{}",
        screen.text
    );
}

#[test]
fn no_agent_text_is_a_workflow_command_in_aptitudes_log() {
    let h = Hostile::new();
    let out = h.run();
    assert_eq!(out.code, 1, "{}", out.both());
    // The payload reached the log, from each place the agent writes.
    for leak in [
        "AGENT-ANNOTATION", // tool call, tool output, verify output, stderr
        "AGENT-FILE-NAME",  // a file name with a line break
        "AGENT-FILE-TITLE", // a file name with an escape sequence
        "AGENT-TEXT ends",  // the end of the payload: nothing cut it short
    ] {
        assert!(out.stdout.contains(leak), "{leak} is shown\n{}", out.both());
    }
    for (stream, text) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        let found = acted_on(text);
        assert_eq!(
            found,
            Vec::<String>::new(),
            "{stream} holds a workflow command\n{text}"
        );
        assert!(
            !text.contains('\x1b'),
            "{stream}: no escape (not a terminal)"
        );
    }
    // The stderr of the crashed agent is in its test's error, each line indented.
    let stderr_line = out
        .stdout
        .lines()
        .find(|l| l.contains("AGENT-LEGACY"))
        .unwrap();
    assert!(stderr_line.starts_with("    "), "{stderr_line:?}");

    // `aptitude transcript` shows the final answer and the call.
    let shown = Aptitude::new()
        .current_dir(h.suite.path())
        .env("GITHUB_ACTIONS", "true")
        .arg("transcript")
        .arg(h.path("stream.jsonl"))
        .output();
    assert!(
        shown.stdout.contains("final answer: AGENT-TEXT"),
        "{}",
        shown.both()
    );
    assert_eq!(
        acted_on(&shown.stdout),
        Vec::<String>::new(),
        "{}",
        shown.stdout
    );
    assert_eq!(acted_on(&shown.stderr), Vec::<String>::new());
}

/// What a terminal shows after some output: its text, row by row, and what the output
/// asked of the terminal besides the screen.
struct Screen {
    text: String,
    title: Option<String>,
    clipboard: bool,
    osc: Vec<String>,
}

#[derive(Default)]
struct Requests {
    title: Option<String>,
    clipboard: bool,
    osc: Vec<String>,
}

impl vt100::Callbacks for Requests {
    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        self.title = Some(String::from_utf8_lossy(title).into_owned());
    }
    fn set_window_icon_name(&mut self, _: &mut vt100::Screen, name: &[u8]) {
        self.title = Some(String::from_utf8_lossy(name).into_owned());
    }
    fn copy_to_clipboard(&mut self, _: &mut vt100::Screen, _: &[u8], _: &[u8]) {
        self.clipboard = true;
    }
    fn unhandled_osc(&mut self, _: &mut vt100::Screen, params: &[&[u8]]) {
        self.osc.push(
            params
                .iter()
                .map(|p| String::from_utf8_lossy(p).into_owned())
                .collect::<Vec<_>>()
                .join(";"),
        );
    }
}

/// Rows and columns of the emulated terminal (and of the PTY).
const ROWS: u16 = 400;
const COLS: u16 = 200;

impl Screen {
    fn of(bytes: &[u8]) -> Self {
        let size = |n: u16| std::num::NonZeroU16::new(n).unwrap();
        let mut parser =
            vt100::Parser::new_with_callbacks(size(ROWS), size(COLS), 0, Requests::default());
        // A terminal's line discipline turns `\n` into `\r\n` (a PTY's output has it
        // already).
        let text = String::from_utf8_lossy(bytes).replace("\r\n", "\n");
        parser.process(text.replace('\n', "\r\n").as_bytes());
        let requests = parser.callbacks();
        Screen {
            text: parser.screen().contents(),
            title: requests.title.clone(),
            clipboard: requests.clipboard,
            osc: requests.osc.clone(),
        }
    }

    /// Whether the line naming `test` shows it did not pass (`✗ … failed` or, where the
    /// kernel's exec record saw through the stand-in's claims, `! … error`), and no line
    /// shows it passed.
    fn shows_unpassed_as_unpassed(&self, test: &str) -> bool {
        let lines: Vec<&str> = self.text.lines().map(str::trim_start).collect();
        let failed = lines.iter().any(|l| {
            (l.starts_with(&format!("✗ {test} ")) && l.contains("failed"))
                || (l.starts_with(&format!("! {test} ")) && l.contains("error"))
        });
        let passed = lines.iter().any(|l| l.starts_with(&format!("✓ {test} ")));
        failed && !passed
    }
}

#[test]
fn a_failed_test_shows_as_failed_on_a_terminal_whatever_the_agent_printed() {
    let h = Hostile::new();
    // The real binary on a real PTY (util-linux `script`), colours forced.
    let command = format!(
        "stty rows {ROWS} cols {COLS}; exec '{}' --color always run tests --no-grade --no-gateway --agent-bin 'claude={}'",
        bin().display(),
        h.stub.display()
    );
    let out = Aptitude::program("script")
        .sandbox_in(h.suite.path())
        .inherit_path()
        .current_dir(h.suite.path())
        .env("TERM", "xterm-256color")
        .env("ANTHROPIC_API_KEY", "sk-ant-stand-in")
        .args(["-q", "-e", "-c", &command, "/dev/null"])
        .limit(LIMIT)
        .output();
    assert_eq!(out.code, 1, "{}", out.both());
    let raw = &out.stdout;
    let screen = Screen::of(raw.as_bytes());
    assert!(
        raw.contains("\x1b[31m") || raw.contains("\x1b[1m"),
        "colours are on:\n{raw:?}"
    );
    assert!(
        screen.shows_unpassed_as_unpassed("Hostile run"),
        "the test that did not pass must read so:\n{}",
        screen.text
    );
    assert!(
        screen.text.contains("^[[9A^[[2K^M✓ Hostile run"),
        "{}",
        screen.text
    );
    assert_eq!(screen.title, None, "no window title from the agent");
    assert!(!screen.clipboard, "no clipboard write from the agent");
    assert_eq!(screen.osc, Vec::<String>::new(), "no link or other OSC");
    assert!(!raw.contains("\x1b]"), "no OSC sequence at all");
}

/// `aptitude publish` of the hostile run's results against the mock GitHub API, with the
/// comment's POST failing with a message that carries [`AGENT`] (GitHub quotes what it
/// refused): what it sent, and what it printed.
async fn publish_hostile(h: &Hostile, gh: &Gh) -> String {
    gh.forbid_user().await;
    gh.comments(None, json!([]), false).await;
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, ResponseTemplate};
    Mock::given(method("POST"))
        .and(path("/repos/o/r/issues/7/comments"))
        .respond_with(
            ResponseTemplate::new(422)
                .set_body_json(json!({"message": format!("Validation Failed: {AGENT}")})),
        )
        .mount(&gh.server)
        .await;
    Mock::given(method("POST"))
        .and(path("/repos/o/r/check-runs"))
        .respond_with(
            ResponseTemplate::new(201)
                .set_body_json(json!({"id": 77, "app": {"slug": "github-actions"}})),
        )
        .mount(&gh.server)
        .await;
    let workspace = h.suite.path().display().to_string();
    let (code, log) = gh
        .publish_with(
            &h.suite.results_path(),
            h.suite.path(),
            &[],
            &[
                ("GITHUB_WORKSPACE", workspace.as_str()),
                ("GITHUB_ACTIONS", "true"),
            ],
        )
        .await;
    assert_eq!(code, 1, "{log}");
    log
}

/// Asserts what GitHub shows for `markdown` that came through aptitude: no image, no link
/// but aptitude's own (`links_to`), no agent text outside a code block, no mention,
/// `<details>` balanced, nothing GitHub's sanitizer strips, no raw control character.
fn assert_inert_on_github(what: &str, markdown: &str, links_to: Option<&str>) {
    assert!(
        !markdown.contains(['\x1b', '\r', '\u{2028}', '\u{85}', '\x07']),
        "{what}: a raw control character or line terminator\n{markdown:?}"
    );
    let seen = gfm(markdown);
    assert_eq!(seen["stripped"], json!([]), "{what}: {seen}");
    assert_eq!(seen["images"], json!([]), "{what}: an image");
    for link in seen["links"].as_array().unwrap() {
        assert!(
            links_to.is_some_and(|to| link.as_str().unwrap().starts_with(to)),
            "{what}: a link to {link}"
        );
    }
    let details = seen["details"].as_array().unwrap();
    assert_eq!(details[0], details[1], "{what}: <details> balanced");
    assert_eq!(details[0], 2, "{what}: one <details> per failed test");
    let outside = seen["outside_code"].as_str().unwrap();
    assert!(
        !outside.contains("AGENT"),
        "{what}: agent text outside code:\n{outside}"
    );
    assert!(!outside.contains("@octocat"), "{what}: a mention");
    // Every line of the payload is inside the code blocks, the last one too.
    assert!(
        seen["text"].as_str().unwrap().contains("AGENT-TEXT ends"),
        "{what}"
    );
}

#[tokio::test]
async fn the_comment_summaries_and_annotations_hold_agent_text_inert() {
    let h = Hostile::new();
    let out = {
        let path = h.suite.path().to_owned();
        let stub = h.stub.clone();
        tokio::task::spawn_blocking(move || run_in(&path, &stub))
            .await
            .unwrap()
    };
    assert_eq!(out.code, 1, "{}", out.both());
    let summary = std::fs::read_to_string(h.path("summary.md")).unwrap();
    assert_inert_on_github("summary.md", &summary, None);
    // JUnit and HTML held before; they still do.
    let junit = crate::support::consumers::python_json("junit", &h.path("junit.xml"));
    assert_eq!(junit["tests"], 2, "{junit}");
    let cases = junit["cases"].to_string();
    assert!(
        cases.contains("AGENT-TEXT ends"),
        "the payload is in the cases: {junit}"
    );
    let html = std::fs::read_to_string(h.path("report.html")).unwrap();
    assert!(
        html.contains("AGENT-TEXT ends"),
        "the payload is in the report"
    );
    for raw in ["<img src=\"https://evil", "\x1b]", "</details>\r", "<U+"] {
        assert!(!html.contains(raw), "report.html holds {raw:?} raw");
    }

    let gh = Gh::new(PR_EVENT).await;
    let log = publish_hostile(&h, &gh).await;
    // The log: aptitude's own warning, one line, and nothing of the agent's.
    let found = acted_on(&log);
    assert_eq!(found.len(), 1, "{found:?}\n{log}");
    assert!(
        found[0].starts_with("warning title=aptitude::could not post the PR comment"),
        "{found:?}"
    );
    assert!(
        found[0].contains("AGENT-ANNOTATION"),
        "the message is kept, escaped"
    );

    let requests = gh.requests().await;
    let run_url = "https://github.com/o/r/actions/runs/42";
    let comment = requests
        .iter()
        .find(|(m, p, _)| m == "POST" && p.ends_with("/issues/7/comments"))
        .and_then(|(_, _, b)| b.clone())
        .unwrap();
    let comment = comment["body"].as_str().unwrap();
    assert!(comment.starts_with("<!-- aptitude:sticky-comment -->\n"));
    assert!(
        !gfm(comment)["outside_code"]
            .as_str()
            .unwrap()
            .contains("sticky-comment"),
        "the agent's marker is shown as text in a code block"
    );
    assert_inert_on_github("the comment", comment, Some(run_url));
    let check = requests
        .iter()
        .find(|(m, p, _)| m == "POST" && p.ends_with("/check-runs"))
        .and_then(|(_, _, b)| b.clone())
        .unwrap();
    assert_inert_on_github(
        "the check run's summary",
        check["output"]["summary"].as_str().unwrap(),
        Some(run_url),
    );
    let job_summary = std::fs::read_to_string(gh.file("summary.md")).unwrap();
    assert_inert_on_github("the job summary", &job_summary, Some(run_url));

    let annotations = check["output"]["annotations"].as_array().unwrap();
    assert!(annotations.len() >= 3, "{annotations:?}");
    for a in annotations {
        let title = a["title"].as_str().unwrap();
        let message = a["message"].as_str().unwrap();
        assert!(
            !title.contains(['\n', '\r', '\u{2028}', '\x1b']),
            "{title:?}"
        );
        assert!(
            !message.contains(['\r', '\u{2028}', '\x1b', '\x07']),
            "{message:?}"
        );
        assert!(
            a["path"].as_str().unwrap().starts_with("tests/ws/"),
            "a path inside the repository: {a}"
        );
    }
    assert!(
        annotations
            .iter()
            .any(|a| a["message"].as_str().unwrap().contains("AGENT-TEXT ends")),
        "the agent's text is in a message, shown"
    );
    gh.assert_valid_for_github().await;
}

/// [`Hostile::run`] for a suite at `dir` whose stand-in is `stub` (for a blocking task).
fn run_in(dir: &Path, stub: &Path) -> Output {
    Aptitude::new()
        .sandbox_in(dir)
        .inherit_path()
        .current_dir(dir)
        .env("GITHUB_ACTIONS", "true")
        // A key, as a user has one (the stand-in never uses it).
        .env("ANTHROPIC_API_KEY", "sk-ant-stand-in")
        // The stand-in writes its stream without a model: through the gateway its
        // invented calls are (rightly) tampering; direct, they are unwitnessed claims.
        .args(["run", "tests", "--no-grade", "--no-gateway", "--agent-bin"])
        .arg(format!("claude={}", stub.display()))
        .arg("--json")
        .arg(dir.join("results.json"))
        .args(["--markdown", "summary.md", "--junit", "junit.xml"])
        .args(["--html", "report.html"])
        .limit(LIMIT)
        .output()
}
