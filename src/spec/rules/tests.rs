//! Splitting instruction files into rules, and ids that last.

use super::*;

const AGENTS: &str = "# Project

Use the `just` recipes; never call cargo directly.

## Testing

- Run `just test` before every commit.
- Add a test for every bug fix,
  in the same commit.
  - Name it after the issue.

```sh
just test --all
```

## Style

| tool | setting |
|---|---|
| rustfmt | edition 2024 |

Prefer small functions.
";

#[test]
fn instructions_are_rules_under_their_headings() {
    let rules = rules_of("AGENTS.md", AGENTS);
    let texts: Vec<(&str, u32, String)> = rules
        .iter()
        .map(|r| (r.text.as_str(), r.line, r.heading_path()))
        .collect();
    assert_eq!(
        texts,
        [
            (
                "Use the just recipes; never call cargo directly.",
                3,
                "Project".to_owned()
            ),
            (
                "Run just test before every commit.",
                7,
                "Project > Testing".into()
            ),
            (
                "Add a test for every bug fix, in the same commit.",
                8,
                "Project > Testing".into()
            ),
            (
                "Name it after the issue. just test --all",
                10,
                "Project > Testing".into()
            ),
            // The table is a reference (no row instructs), its header never a rule.
            ("Prefer small functions.", 22, "Project > Style".into()),
        ],
        "{rules:#?}"
    );
    assert!(
        rules
            .iter()
            .all(|r| r.id.len() == 9 && r.id.starts_with('R'))
    );
}

#[test]
fn ids_survive_rewrapping_and_reordering_but_not_new_words() {
    let ids = |text: &str| -> Vec<String> {
        rules_of("AGENTS.md", text)
            .into_iter()
            .map(|r| r.id)
            .collect()
    };
    let base = ids("# A\n\n- Run the tests before\n  every commit.\n\n# B\n\nKeep it short.\n");
    let rewrapped = ids("# A\n\n- Run the tests before every commit.\n\n# B\n\nKeep it\nshort.\n");
    let reordered = ids("# B\n\nKeep it short.\n\n# A\n\n- Run the tests before every commit.\n");
    assert_eq!(base, rewrapped);
    assert_eq!(base.iter().rev().cloned().collect::<Vec<_>>(), reordered);
    let reworded = ids("# A\n\n- Run the tests after every commit.\n\n# B\n\nKeep it short.\n");
    assert_ne!(base[0], reworded[0]);
    assert_eq!(base[1], reworded[1]);
}

#[test]
fn a_skills_front_matter_is_not_a_rule() {
    let rules = rules_of(
        ".claude/skills/pdf/SKILL.md",
        "---\nname: pdf\ndescription: Fill PDF forms\n---\n\n# PDF\n\nAlways flatten the form.\n",
    );
    assert_eq!(rules.len(), 1, "{rules:#?}");
    assert_eq!(rules[0].text, "Always flatten the form.");
    assert_eq!(rules[0].line, 8);
}

#[test]
fn selectors_name_rules_by_id_heading_or_text() {
    let rules = rules_of("AGENTS.md", AGENTS);
    let pick = |s: &str| -> Vec<u32> {
        let sel = Selector::parse(s);
        rules
            .iter()
            .filter(|r| sel.matches(r))
            .map(|r| r.line)
            .collect()
    };
    assert_eq!(pick(&rules[1].id), [7]);
    assert_eq!(pick(&rules[1].id.to_uppercase().replacen('R', "r", 1)), [7]);
    assert_eq!(pick("# Testing"), [7, 8, 10]);
    assert_eq!(pick("# project > style"), [22]);
    assert_eq!(pick("\"bug  FIX\""), [8]);
    assert_eq!(pick("never call cargo"), [3]);
    assert!(pick("# Deployment").is_empty());
    assert_eq!(Selector::parse("\"x y\"").display(), "\"x y\"");
}

#[test]
fn instruction_files_are_found_at_any_depth_but_not_in_dependencies() {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in [
        ("AGENTS.md", "- Run a\n"),
        ("sub/AGENTS.md", "- Run b\n"),
        (".claude/skills/pdf/SKILL.md", "- Run c\n"),
        (".cursor/rules/style.mdc", "- Run d\n"),
        ("node_modules/x/AGENTS.md", "- Run e\n"),
        ("README.md", "- Run f\n"),
    ] {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let files: Vec<String> = instruction_files(dir.path())
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    assert_eq!(
        files,
        [
            ".claude/skills/pdf/SKILL.md",
            ".cursor/rules/style.mdc",
            "AGENTS.md",
            "sub/AGENTS.md"
        ]
    );
    let texts: Vec<String> = rules_in(dir.path()).into_iter().map(|r| r.text).collect();
    assert_eq!(texts, ["Run c", "Run d", "Run a", "Run b"]);
}

/// Headings, descriptive prose, a command table and its header, and an `@file` import are
/// not rules; imperative and directive items and sentences are, and a table row that
/// instructs.
#[test]
fn only_instructions_are_rules() {
    let text = "# Acme CLI

Acme is a command-line tool for managing widgets. It is written in Rust.

@docs/conventions.md

## Commands

| Command | What it does |
|---|---|
| `cargo build` | Build the project |
| `cargo test` | Run the tests |
| `cargo fmt` | Must pass before every push |

## Layout

- `src/` — the source code
- `tests/` — integration tests

## Rules

- Run `cargo test` before committing.
- Never commit secrets.
- Error messages should be lowercase.
1. **Formatting:** keep lines under 100 columns.
";
    let rules = rules_of("AGENTS.md", text);
    let texts: Vec<&str> = rules.iter().map(|r| r.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "cargo fmt | Must pass before every push",
            "Run cargo test before committing.",
            "Never commit secrets.",
            "Error messages should be lowercase.",
            "Formatting: keep lines under 100 columns.",
        ],
        "{rules:#?}"
    );
}

/// An id stays the id of a rule that remains a rule.
#[test]
fn a_rule_that_remains_keeps_its_id() {
    let rules = rules_of("AGENTS.md", AGENTS);
    let run = rules
        .iter()
        .find(|r| r.text == "Run just test before every commit.")
        .unwrap();
    assert_eq!(
        run.id,
        rule_id(
            &["Project".into(), "Testing".into()],
            "Run just test before every commit."
        )
    );
}

/// `<!-- aptitude: ignore -->` leaves out the next block or, before a heading, its
/// section; `ignore-start` … `ignore-end` a range; `ignore-file` the file.
#[test]
fn markers_leave_out_a_block_a_section_a_range_or_the_file() {
    let text = "# A

<!-- aptitude: ignore -->
- Run one.
- Run two.

Run three.

<!-- aptitude: ignore -->
## Scratch

- Run four.

### Deeper

- Run five.

## Kept

- Run six.

<!-- aptitude: ignore-start -->
Run seven.

- Run eight.
<!-- aptitude: ignore-end -->

Run nine.
";
    let texts: Vec<String> = rules_of("AGENTS.md", text)
        .into_iter()
        .map(|r| r.text)
        .collect();
    assert_eq!(texts, ["Run three.", "Run six.", "Run nine."]);
    let whole = format!("{text}\n<!-- aptitude: ignore-file -->\n");
    assert!(rules_of("AGENTS.md", &whole).is_empty());
}

/// An `@file` import counts as that file's rules (it is read once, inside the workspace).
#[test]
fn an_import_counts_as_the_imported_files_rules() {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in [
        ("CLAUDE.md", "@docs/rules.md\n@../outside.md\n"),
        (
            "docs/rules.md",
            "- Run the linter.\n\nSee @../CLAUDE.md too.\n",
        ),
    ] {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let rules = rules_in(dir.path());
    let got: Vec<(&str, &str)> = rules
        .iter()
        .map(|r| (r.file.as_str(), r.text.as_str()))
        .collect();
    assert_eq!(got, [("docs/rules.md", "Run the linter.")]);
}

/// A file of 100,000 rules is split in linear time (the line of each rule is a binary
/// search, not a count from the file's start): the bench `rules` measures it.
#[test]
fn lines_are_found_by_their_offsets() {
    let text: String = (0..2_000).map(|i| format!("- Run step {i}.\n")).collect();
    let rules = rules_of("AGENTS.md", &text);
    assert_eq!(rules.len(), 2_000);
    assert!(
        rules
            .iter()
            .enumerate()
            .all(|(i, r)| r.line == i as u32 + 1)
    );
}

/// Real instruction files, counted by hand (tests/data/coverage/SOURCES.tsv): uv's 18
/// list items are all instructions; in ruff's excerpt the project's description is not,
/// the 9 paragraphs of its three rule sections are.
#[test]
fn real_agents_files_count_their_instructions() {
    let uv = rules_of(
        "AGENTS.md",
        include_str!("../../../tests/data/coverage/uv/AGENTS.md"),
    );
    assert_eq!(uv.len(), 18, "{uv:#?}");
    let ruff = rules_of(
        "AGENTS.md",
        include_str!("../../../tests/data/coverage/ruff/AGENTS.md"),
    );
    let per_section: Vec<(String, usize)> = [
        "Before contributing",
        "Code Review Rules",
        "Writing for human readers",
    ]
    .iter()
    .map(|h| {
        let n = ruff
            .iter()
            .filter(|r| r.headings.last().is_some_and(|l| l == h))
            .count();
        ((*h).to_owned(), n)
    })
    .collect();
    assert_eq!(
        per_section,
        [
            ("Before contributing".to_owned(), 1),
            ("Code Review Rules".to_owned(), 4),
            ("Writing for human readers".to_owned(), 4),
        ],
        "{ruff:#?}"
    );
    assert_eq!(ruff.len(), 9, "the description is no rule: {ruff:#?}");
}

/// huggingface/transformers' `AGENTS.md` (tests/data/coverage/SOURCES.tsv), counted by hand
/// before aptitude read it: 37 instructions. Not rules: its command lists
/// (`Style/format: \`make style\``, `Run list: \`pytest …\``, `Full suite: \`make test\``),
/// its repository map and `Makefile Truth` (`\`make style\` runs ruff …`: a command is no
/// verb), its bold labels (`**Commands (Run Early)**`), `Requires Python 3.10+`, the
/// linter that "copies required functions", the pointers (`See CONTRIBUTING.md …`) and
/// the output example. Rules it once missed: `Prioritize …`, `change the source …`,
/// `Override methods only …`, `(ask maintainers first)`, `requires updating …`.
#[test]
fn transformers_agents_md_counts_its_instructions() {
    let rules = rules_of(
        "AGENTS.md",
        include_str!("../../../tests/data/coverage/transformers/AGENTS.md"),
    );
    let lines: Vec<u32> = rules.iter().map(|r| r.line).collect();
    let by_hand: Vec<u32> = [
        3, 17, 18, 21, 22, 23, 24, 27, 28, 29, 39, 40, 41, 42, 49, 50, 54, 55, 56, 57, 58, 62, 64,
        66, 83, 84, 93, 94, 98, 99, 100, 101, 102, 105, 106, 107, 108,
    ]
    .to_vec();
    assert_eq!(by_hand.len(), 37);
    assert_eq!(lines, by_hand, "{rules:#?}");
}

/// A code span never starts an imperative: `\`make style\` runs ruff` describes, and a
/// label with only commands after it is a reference; a bold label is no rule, a bold
/// sentence is.
#[test]
fn commands_and_bold_labels_are_not_instructions() {
    let texts = |md: &str| -> Vec<String> {
        rules_of("AGENTS.md", md)
            .into_iter()
            .map(|r| r.text)
            .collect()
    };
    assert_eq!(
        texts("- Lint: `make lint`\n- `make test` runs the tests.\n- Run `make test` first.\n"),
        ["Run make test first."]
    );
    assert_eq!(
        texts("**Run Early**\n\n**Never push to main.**\n"),
        ["Never push to main."]
    );
    assert_eq!(
        texts("- Install: `uv sync` or `pip install .` if uv is missing\n"),
        ["Install: uv sync or pip install . if uv is missing"]
    );
    // A definition list (lanegrid/agtrace's commit types): its terms are no verbs.
    assert_eq!(
        texts("- fix: Bug fix\n- feat: New feature\n- test: Run the tests first.\n"),
        ["test: Run the tests first."]
    );
}
