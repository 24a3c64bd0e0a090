//! The docs against the binary, so that they can not drift from it: every `aptitude …`
//! command line of README.md and docs/ (in `sh` blocks, and in inline code) names a command
//! and flags that exist; the ones that need neither an agent nor a placeholder run for
//! real and are not refused as invalid; README's example output is what the binary prints;
//! and the Action is named as `shared::ACTION` says, everywhere.

use std::path::{Path, PathBuf};

use clap::CommandFactory;

use crate::support::cli::Aptitude;
use crate::support::root;

/// README.md, examples/README.md and every page of docs/.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![root().join("README.md"), root().join("examples/README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// One command line of a page: where it is, and its text.
struct Line {
    at: String,
    text: String,
    /// From inline code in prose (`aptitude analyze`, a mention), not a shell block.
    inline: bool,
}

/// The shell lines of a page's `sh`/`bash`/`shell`/`console` blocks (continuations joined,
/// `$ ` prompts taken off), and its inline code spans that start with `aptitude `.
fn command_lines(page: &Path) -> Vec<Line> {
    let text = std::fs::read_to_string(page).unwrap();
    let name = page.strip_prefix(root()).unwrap().display().to_string();
    let mut out = Vec::new();
    let mut in_sh = None::<bool>;
    let mut pending = String::new();
    for (i, line) in text.lines().enumerate() {
        let at = format!("{name}:{}", i + 1);
        if let Some(info) = line.trim_start().strip_prefix("```") {
            in_sh = match in_sh {
                Some(_) => None,
                None => Some(matches!(info.trim(), "sh" | "bash" | "shell" | "console")),
            };
            continue;
        }
        match in_sh {
            Some(true) => {
                let line = line.trim().strip_prefix("$ ").unwrap_or(line.trim());
                if let Some(head) = line.strip_suffix('\\') {
                    pending.push_str(head);
                    pending.push(' ');
                    continue;
                }
                pending.push_str(line);
                out.push(Line {
                    at,
                    text: std::mem::take(&mut pending),
                    inline: false,
                });
            }
            Some(false) => {}
            None => {
                for (k, span) in line.split('`').enumerate() {
                    if k % 2 == 1 && span.starts_with("aptitude ") {
                        out.push(Line {
                            at: at.clone(),
                            text: span.to_owned(),
                            inline: true,
                        });
                    }
                }
            }
        }
    }
    out
}

/// A line without its comment (` #` outside quotes).
fn without_comment(line: &str) -> &str {
    let (mut single, mut double) = (false, false);
    let bytes = line.as_bytes();
    for (i, c) in line.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && (i == 0 || bytes[i - 1] == b' ') => {
                return line[..i].trim_end();
            }
            _ => {}
        }
    }
    line.trim_end()
}

/// The `aptitude` invocations of a shell line, as words after `aptitude` (`cargo run
/// --release -- ARGS` is one too); pipes, `&&` and `;` separate commands.
fn invocations(line: &str) -> Vec<Vec<String>> {
    let line = without_comment(line);
    let mut out = Vec::new();
    for segment in line.split(['|', ';']).flat_map(|s| s.split("&&")) {
        let words: Vec<String> = segment.split_whitespace().map(str::to_owned).collect();
        let start = match words.first().map(String::as_str) {
            Some("aptitude") => 1,
            Some("cargo") if words.get(1).is_some_and(|w| w == "run") => {
                match words.iter().position(|w| w == "--") {
                    Some(dd) => dd + 1,
                    None => continue,
                }
            }
            _ => continue,
        };
        out.push(words[start..].to_vec());
    }
    out
}

/// Every long and short flag of a command (and its aliases).
fn flags_of(cmd: &clap::Command) -> (Vec<String>, Vec<char>) {
    let mut long = Vec::new();
    let mut short = Vec::new();
    for arg in cmd.get_arguments() {
        long.extend(arg.get_long().map(str::to_owned));
        long.extend(
            arg.get_all_aliases()
                .into_iter()
                .flatten()
                .map(str::to_owned),
        );
        short.extend(arg.get_short());
        short.extend(arg.get_all_short_aliases().into_iter().flatten());
    }
    long.extend(["help".to_owned(), "version".to_owned()]);
    short.extend(['h', 'V']);
    (long, short)
}

/// What is wrong with one invocation's words: a subcommand or flag the binary lacks.
fn problems_of(words: &[String]) -> Vec<String> {
    let root_cmd = aptitude::cli::Cli::command();
    let (root_long, root_short) = flags_of(&root_cmd);
    let mut problems = Vec::new();
    let mut sub: Option<clap::Command> = None;
    // A command with subcommands of its own (`judge label`) is named by its first word.
    let mut nested = false;
    for word in words {
        // Synopsis brackets (`[--json F]`, `[PATHS]`) are not part of a word.
        let word = word.trim_matches(|c| c == '[' || c == ']');
        if let Some(flag) = word.strip_prefix("--") {
            let flag = flag.split('=').next().unwrap_or(flag);
            if flag.is_empty() {
                break;
            }
            let known = root_long.iter().any(|f| f == flag)
                || sub
                    .as_ref()
                    .is_some_and(|s| flags_of(s).0.iter().any(|f| f == flag));
            if !known {
                problems.push(format!(
                    "--{flag} is no flag of `aptitude {}`",
                    name_of(&sub)
                ));
            }
        } else if let Some(shorts) = word.strip_prefix('-').filter(|w| !w.is_empty()) {
            let c = shorts.chars().next().unwrap_or(' ');
            let known =
                root_short.contains(&c) || sub.as_ref().is_some_and(|s| flags_of(s).1.contains(&c));
            if !known && c.is_ascii_alphabetic() {
                problems.push(format!("-{c} is no flag of `aptitude {}`", name_of(&sub)));
            }
        } else if !nested
            && !word.is_empty()
            && sub.as_ref().is_some_and(clap::Command::has_subcommands)
        {
            nested = true;
            let found = sub.as_ref().and_then(|s| s.find_subcommand(word)).cloned();
            match found {
                Some(s) => sub = Some(s),
                None => {
                    problems.push(format!(
                        "`{word}` is no subcommand of `aptitude {}`",
                        name_of(&sub)
                    ));
                    break;
                }
            }
        } else if sub.is_none() && !word.is_empty() {
            // aptitude's own helpers (`__mcp relay`, run inside the sandbox) and prose
            // (`aptitude (job/agent/model)`) are no user's command line.
            if word.starts_with(['_', '(', '<']) {
                break;
            }
            match root_cmd
                .get_subcommands()
                .find(|s| s.get_name() == word || s.get_all_aliases().any(|a| a == word))
            {
                Some(s) => sub = Some(s.clone()),
                None => {
                    problems.push(format!("`{word}` is no aptitude command"));
                    break;
                }
            }
        }
    }
    problems
}

fn name_of(sub: &Option<clap::Command>) -> String {
    sub.as_ref()
        .map_or_else(String::new, |s| s.get_name().to_owned())
}

/// Every `aptitude …` command line of the docs names a command and flags that exist.
#[test]
fn every_documented_command_and_flag_exists() {
    let mut problems = Vec::new();
    let mut checked = 0;
    for page in pages() {
        for line in command_lines(&page) {
            for words in invocations(&line.text) {
                checked += 1;
                for p in problems_of(&words) {
                    problems.push(format!("{}: {p}\n    {}", line.at, line.text));
                }
            }
        }
    }
    assert!(
        checked > 50,
        "the docs hold {checked} aptitude command lines"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The check itself sees a flag that does not exist.
    assert_eq!(
        problems_of(&["run".into(), "--agent-env".into(), "K=V".into()]),
        ["--agent-env is no flag of `aptitude run`"]
    );
    assert_eq!(
        problems_of(&[
            "judge".into(),
            "label".into(),
            "--rater".into(),
            "--nope".into()
        ]),
        ["--nope is no flag of `aptitude label`"]
    );
}

/// A synopsis word as a real one, for running it in [`scratch`]: `PATHS` and `PATH` the
/// bundled examples, `TEST_FILE` a test, `TRANSCRIPT` its transcript, a `--json F` file;
/// `None` for a placeholder it has no value for.
fn concrete(word: &str, previous: Option<&str>) -> Option<String> {
    let word = word
        .trim_matches(|c| c == '[' || c == ']')
        .trim_end_matches("...");
    let value = match (word, previous) {
        ("F" | "FILE", Some("--json")) => "out.json",
        ("PATHS" | "PATH", _) => "examples/",
        ("TEST_FILE" | "TEST", _) => "examples/counter/counter.aptitude.yaml",
        ("TRANSCRIPT" | "SESSION" | "FILE", _) => "examples/counter/counter.transcript.jsonl",
        ("AGENT", _) => "claude",
        (w, _) if w.chars().any(|c| c.is_ascii_uppercase()) || w.contains(['…', '<', '$', '*']) =>
        {
            return None;
        }
        (w, _) => w,
    };
    Some(value.to_owned())
}

/// A repository as `aptitude init` leaves it, with the bundled examples copied in.
fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    Aptitude::new()
        .current_dir(dir.path())
        .arg("init")
        .output()
        .code(0);
    for example in ["counter", "hello-script", "push-to-github"] {
        let from = root().join("examples").join(example);
        let to = dir.path().join("examples").join(example);
        std::fs::create_dir_all(&to).unwrap();
        for entry in std::fs::read_dir(&from).unwrap() {
            let path = entry.unwrap().path();
            std::fs::copy(&path, to.join(path.file_name().unwrap())).unwrap();
        }
    }
    dir
}

/// The documented command lines that need no agent and no network (`validate`,
/// `analyze`, `transcript`, `coverage`, `agents`) run for real — in a repository made by
/// `aptitude init` with the bundled examples, the synopsis' placeholders given values —
/// and none is refused as invalid (exit 2).
#[test]
fn the_cheap_documented_commands_run() {
    const CHEAP: &[&str] = &["validate", "analyze", "transcript", "coverage", "agents"];
    let repo = scratch();
    let mut ran: Vec<Vec<String>> = Vec::new();
    let mut refused = Vec::new();
    for page in pages() {
        for line in command_lines(&page).into_iter().filter(|l| !l.inline) {
            for words in invocations(&line.text) {
                if !words.first().is_some_and(|w| CHEAP.contains(&w.as_str())) {
                    continue;
                }
                let real: Option<Vec<String>> = words
                    .iter()
                    .enumerate()
                    .map(|(i, w)| concrete(w, i.checked_sub(1).map(|p| words[p].as_str())))
                    .collect();
                let Some(mut real) = real else { continue };
                if words[0] == "analyze" {
                    real.push("--no-grade".into());
                }
                if ran.contains(&real) {
                    continue;
                }
                let out = Aptitude::new()
                    .current_dir(repo.path())
                    .args(&real)
                    .output();
                if out.code == 2 {
                    refused.push(format!(
                        "{}: aptitude {}\n{}",
                        line.at,
                        real.join(" "),
                        out.both()
                    ));
                }
                ran.push(real);
            }
        }
    }
    assert!(ran.len() >= 7, "ran {ran:?}");
    assert!(refused.is_empty(), "{}", refused.join("\n\n"));
}

/// README's example output is what `aptitude analyze` prints for the push example, line
/// for line (a line of `…` stands for lines left out).
#[test]
fn the_readmes_example_output_is_the_binarys() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let start = readme
        .find("```text\n✗ Push to GitHub safely")
        .expect("README shows the push example's output");
    let block = &readme[start + "```text\n".len()..];
    let block = &block[..block.find("```").unwrap()];
    let out = Aptitude::new()
        .current_dir(root())
        .args([
            "--color",
            "never",
            "analyze",
            "examples/push-to-github",
            "--no-grade",
        ])
        .output();
    out.code(1);
    for line in block.lines().filter(|l| l.trim() != "…") {
        assert!(
            out.stdout.lines().any(|o| o.trim_end() == line.trim_end()),
            "README shows a line the binary does not print:\n{line}\n\nthe binary:\n{}",
            out.stdout
        );
    }
}

/// The Action is named in one place (`shared::ACTION`): `init`'s workflow, README.md and
/// docs/ write it; Cargo.toml's repository and the action's installer name its repository.
#[test]
fn the_action_is_named_as_the_code_names_it() {
    let mut wrong = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for (i, line) in text.lines().enumerate() {
            if let Some(uses) = line
                .trim_start()
                .trim_start_matches("- ")
                .strip_prefix("uses: ")
                && uses.contains("aptitude")
            {
                let uses = uses.split_whitespace().next().unwrap_or("");
                if uses != aptitude::shared::ACTION {
                    wrong.push(format!("{}:{}: {uses}", page.display(), i + 1));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "not {}: {wrong:?}",
        aptitude::shared::ACTION
    );
    let cargo = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    assert!(cargo.contains(&format!(
        "repository = \"https://github.com/{}\"",
        aptitude::shared::REPOSITORY
    )));
    let installer =
        std::fs::read_to_string(root().join("scripts/action/install-aptitude.sh")).unwrap();
    assert!(installer.contains(&format!(
        "${{APTITUDE_REPOSITORY:-{}}}",
        aptitude::shared::REPOSITORY
    )));
    let repo = tempfile::tempdir().unwrap();
    Aptitude::new()
        .current_dir(repo.path())
        .arg("init")
        .output()
        .code(0);
    let workflow =
        std::fs::read_to_string(repo.path().join(".github/workflows/aptitude.yml")).unwrap();
    assert!(
        workflow.contains(&format!("- uses: {}\n", aptitude::shared::ACTION)),
        "{workflow}"
    );
}
