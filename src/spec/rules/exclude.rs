//! Parts of the instruction files left out of coverage from `aptitude.yaml`
//! (`coverage: {exclude: [...]}`), the suite's counterpart of the inline markers of
//! [`super`]: a whole file (as `<!-- aptitude: ignore-file -->` does), or a heading's
//! whole section, its subsections included (as `<!-- aptitude: ignore -->` before that
//! heading does).
//!
//! An entry is `FILE` or `FILE#HEADING PATH` (`AGENTS.md#Release process`,
//! `AGENTS.md#Testing > Before you commit`): the file relative to the `aptitude.yaml`'s
//! directory, the heading path as a test's `covers: "# Testing > Before you commit"`
//! names it (its last headings, in order; case and spacing ignored).

use std::path::{Path, PathBuf};

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

use super::{Rule, Selector};

/// One entry of `coverage.exclude`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exclusion {
    /// The file: the entry's path joined to its `aptitude.yaml`'s directory.
    pub file: PathBuf,
    /// The heading path of the section left out (`Testing > Before you commit`); `None`
    /// leaves out the whole file.
    pub section: Option<String>,
    /// The entry as written (`AGENTS.md#Release process`), for messages.
    pub written: String,
}

impl Exclusion {
    /// Reads an entry written in the `aptitude.yaml` of directory `dir`: `FILE` or
    /// `FILE#HEADING PATH` (spaces around `#` allowed). `None` when the file part is empty.
    pub fn parse(dir: &Path, written: &str) -> Option<Exclusion> {
        let (file, section) = match written.split_once('#') {
            Some((file, section)) => (file.trim(), Some(super::collapse(section))),
            None => (written.trim(), None),
        };
        if file.is_empty() {
            return None;
        }
        Some(Exclusion {
            file: dir.join(file),
            section: section.filter(|s| !s.is_empty()),
            written: written.trim().to_owned(),
        })
    }

    /// The file's path as written (the part before `#`).
    pub fn file_as_written(&self) -> &str {
        self.written.split('#').next().unwrap_or_default().trim()
    }

    /// Whether `rule`, read from the file at `path`, is left out by this entry. `path` and
    /// [`Exclusion::file`] are compared resolved (`tests/../AGENTS.md` is `AGENTS.md`);
    /// a file that can not be resolved is compared as written.
    pub fn leaves_out(&self, path: &Path, rule: &Rule) -> bool {
        let resolve = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_owned());
        if resolve(path) != resolve(&self.file) {
            return false;
        }
        self.section
            .as_ref()
            .is_none_or(|s| Selector::Heading(s.clone()).matches(rule))
    }
}

/// Every heading path of a Markdown file (`["Testing", "Before you commit"]`), in file
/// order: what `FILE#HEADING PATH` may name, whether or not its section holds a rule.
pub fn heading_paths(text: &str) -> Vec<Vec<String>> {
    let mut open: Vec<(u8, String)> = Vec::new();
    let mut current: Option<(u8, String)> = None;
    let mut out = Vec::new();
    for event in Parser::new_ext(text, Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                current = Some((level as u8, String::new()))
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some((_, title)) = current.as_mut() {
                    title.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((level, title)) = current.take() {
                    open.retain(|(l, _)| *l < level);
                    open.push((level, super::collapse(&title)));
                    out.push(open.iter().map(|(_, t)| t.clone()).collect());
                }
            }
            _ => {}
        }
    }
    out
}

/// Whether `section` (a heading path as [`Exclusion::section`] holds it) names one of
/// `paths` ([`heading_paths`]): its headings, in order, end one of them, or stand in it
/// one after the other, as [`Selector::Heading`] matches a rule.
pub fn names_a_section(section: &str, paths: &[Vec<String>]) -> bool {
    let selector = Selector::Heading(section.to_owned());
    paths.iter().any(|headings| {
        selector.matches(&Rule {
            id: String::new(),
            file: String::new(),
            line: 0,
            end_line: 0,
            headings: headings.clone(),
            text: String::new(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A section entry leaves out that heading's rules and its subsections', as an
    /// inline `<!-- aptitude: ignore -->` before the heading does; a file entry the whole
    /// file; neither touches another file.
    #[test]
    fn an_exclusion_leaves_out_what_the_inline_marker_would() {
        let dir = tempfile::tempdir().unwrap();
        let text = "# Rules\n\n- Run the tests.\n\n## Release process\n\n- Tag the release.\n\n### Steps\n\n- Push the tag.\n\n## Style\n\n- Keep functions short.\n";
        let marked = text.replace(
            "## Release process",
            "<!-- aptitude: ignore -->\n## Release process",
        );
        std::fs::write(dir.path().join("AGENTS.md"), text).unwrap();
        std::fs::write(dir.path().join("CLAUDE.md"), text).unwrap();
        let agents = dir.path().join("AGENTS.md");
        let rules = super::super::rules_of("AGENTS.md", text);
        let kept = |e: &Exclusion, path: &Path| -> Vec<String> {
            rules
                .iter()
                .filter(|r| !e.leaves_out(path, r))
                .map(|r| r.text.clone())
                .collect()
        };
        let section = Exclusion::parse(dir.path(), "AGENTS.md # Release process").unwrap();
        let by_marker: Vec<String> = super::super::rules_of("AGENTS.md", &marked)
            .into_iter()
            .map(|r| r.text)
            .collect();
        assert_eq!(kept(&section, &agents), by_marker);
        assert_eq!(by_marker, ["Run the tests.", "Keep functions short."]);
        // Spelt through another directory, the same file.
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        let file = Exclusion::parse(&sub, "../AGENTS.md").unwrap();
        assert_eq!(kept(&file, &agents), Vec::<String>::new());
        assert_eq!(kept(&file, &dir.path().join("CLAUDE.md")).len(), 4);
        let paths = heading_paths(text);
        assert!(names_a_section("release process", &paths));
        assert!(names_a_section("Release process > Steps", &paths));
        assert!(!names_a_section("Steps > Release process", &paths));
    }
}
