//! `coverage: {exclude: [...]}` of `aptitude.yaml`: files and sections of the instruction
//! files left out of coverage ([`crate::spec::rules::exclude`]). Each entry is checked
//! against the files as they are: a file that does not exist, or a heading path that the
//! file does not have, is an error at the entry with a "did you mean" (an exclusion that
//! leaves out nothing would let a misspelt name pass unseen).

use std::path::Path;

use super::super::diagnostic::Diagnostic;
use super::super::node::{Node, Value};
use super::super::rules::exclude::{self, Exclusion};
use super::super::suite::{Origin, Setting};
use super::{Ctx, Fields};

/// The keys of `coverage:`.
pub(in crate::spec) const COVERAGE_KEYS: &[&str] = &["exclude"];

/// The most bytes of an excluded file read to check its headings (as coverage reads it).
const MAX_FILE_BYTES: u64 = 1024 * 1024;

impl Ctx {
    /// The suite's `coverage.exclude` entries, each with its line; `path` is the
    /// `aptitude.yaml`, whose directory the entries are relative to.
    pub(super) fn suite_coverage(
        &mut self,
        path: &Path,
        fields: &Fields<'_>,
    ) -> Vec<Setting<Exclusion>> {
        let Some(node) = fields.get("coverage") else {
            return Vec::new();
        };
        let Some(coverage) = self.map(node, "coverage") else {
            return Vec::new();
        };
        self.unknown_keys(&coverage, COVERAGE_KEYS, "`coverage`");
        let Some(list) = coverage.get("exclude") else {
            return Vec::new();
        };
        let items: Vec<&Node> = match &list.value {
            Value::Seq(items) => items.iter().collect(),
            _ => {
                self.type_error(
                    list,
                    "coverage.exclude",
                    "a list of files and `FILE#heading path` sections",
                );
                return Vec::new();
            }
        };
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let mut out = Vec::new();
        for item in items {
            let Some(text) = self.non_empty_string(item, "coverage.exclude") else {
                continue;
            };
            let Some(exclusion) = Exclusion::parse(dir, &text) else {
                self.push(
                    Diagnostic::new(item.pos, format!("`{text}` names no file"))
                        .label("no file before `#`")
                        .hint(
                            "write `FILE` or `FILE#heading path`, e.g. `AGENTS.md#Release process`",
                        ),
                );
                continue;
            };
            if let Some(diag) = missing(item, &exclusion, dir) {
                self.push(diag);
                continue;
            }
            out.push(Setting {
                value: exclusion,
                origin: Origin {
                    file: path.to_owned(),
                    line: item.pos.line,
                },
            });
        }
        out
    }
}

/// The diagnostic of an entry naming a file that is not there, or a section its file does
/// not have; `None` when both are there.
fn missing(item: &Node, exclusion: &Exclusion, dir: &Path) -> Option<Diagnostic> {
    let file = exclusion.file_as_written();
    if !exclusion.file.is_file() {
        let candidates: Vec<String> = super::super::rules::instruction_files(dir)
            .iter()
            .map(|p| p.to_string_lossy().replace('\\', "/"))
            .chain(siblings(&exclusion.file, dir))
            .collect();
        let hint =
            crate::shared::suggest::did_you_mean(file, candidates.iter().map(String::as_str))
                .map_or_else(
                    || {
                        format!(
                            "paths are relative to this aptitude.yaml's directory ({})",
                            super::super::diagnostic::display_path(dir)
                        )
                    },
                    |s| format!("did you mean `{s}`?"),
                );
        return Some(
            Diagnostic::new(
                item.pos,
                format!("`coverage.exclude`: `{file}` is not a file"),
            )
            .label("no such file")
            .hint(hint),
        );
    }
    let section = exclusion.section.as_ref()?;
    let text = crate::shared::files::read_capped(&exclusion.file, MAX_FILE_BYTES)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let paths = exclude::heading_paths(&text);
    if exclude::names_a_section(section, &paths) {
        return None;
    }
    let hint = super::covers::closest(section, paths.iter().map(|p| p.join(" > ")))
        .map(|p| format!("did you mean `{file}#{p}`?"))
        .unwrap_or_else(|| {
            if paths.is_empty() {
                format!("`{file}` has no heading: exclude the whole file with `{file}`")
            } else {
                let names: Vec<String> = paths.iter().take(8).map(|p| p.join(" > ")).collect();
                format!("its headings: {}", names.join("; "))
            }
        });
    Some(
        Diagnostic::new(
            item.pos,
            format!("`coverage.exclude`: `{file}` has no section `{section}`"),
        )
        .label("no such heading")
        .hint(hint),
    )
}

/// The files beside a missing `file` (for a "did you mean" of a misspelt name in a
/// directory that holds no instruction file), relative to `dir`.
fn siblings(file: &Path, dir: &Path) -> Vec<String> {
    let Some(parent) = file.parent() else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(parent) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| e.path().is_file())
        .take(200)
        .filter_map(|e| {
            e.path()
                .strip_prefix(dir)
                .ok()
                .map(|p| p.to_string_lossy().replace('\\', "/"))
        })
        .collect()
}
