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
fn list_items_paragraphs_and_rows_are_rules_under_their_headings() {
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
            ("tool | setting", 18, "Project > Style".into()),
            ("rustfmt | edition 2024", 20, "Project > Style".into()),
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
    assert_eq!(pick("# project > style"), [18, 20, 22]);
    assert_eq!(pick("\"bug  FIX\""), [8]);
    assert_eq!(pick("never call cargo"), [3]);
    assert!(pick("# Deployment").is_empty());
    assert_eq!(Selector::parse("\"x y\"").display(), "\"x y\"");
}

#[test]
fn instruction_files_are_found_at_any_depth_but_not_in_dependencies() {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in [
        ("AGENTS.md", "- a\n"),
        ("sub/AGENTS.md", "- b\n"),
        (".claude/skills/pdf/SKILL.md", "- c\n"),
        (".cursor/rules/style.mdc", "- d\n"),
        ("node_modules/x/AGENTS.md", "- e\n"),
        ("README.md", "- f\n"),
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
    assert_eq!(texts, ["c", "d", "a", "b"]);
}
