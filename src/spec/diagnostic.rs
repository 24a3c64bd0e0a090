//! Diagnostics about test files: what is wrong, where (`file:line:col`), the offending line
//! with a caret, and a hint.
//!
//! Rendering goes through annotate-snippets, in the rustc style users already read:
//!
//! ```text
//! error: unknown key `calld` in a tool assertion
//!  --> tests/env.aptitude.yaml:6:5
//!   |
//! 6 |     calld: false
//!   |     ^^^^^ unknown key
//!   |
//!   = help: did you mean `called`?
//! ```

use std::path::{Path, PathBuf};

use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};

use super::node::Pos;

/// One problem in a test file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Where the offending token starts (line 0 means "the file as a whole").
    pub pos: Pos,
    /// What is wrong, lowercase, without a trailing period.
    pub message: String,
    /// A short label under the caret.
    pub label: Option<String>,
    /// How to fix it ("did you mean `called`?").
    pub hint: Option<String>,
}

impl Diagnostic {
    /// A diagnostic at `pos` with a message.
    pub fn new(pos: Pos, message: impl Into<String>) -> Self {
        Diagnostic {
            pos,
            message: message.into(),
            label: None,
            hint: None,
        }
    }

    /// Adds the label shown under the caret.
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    /// Adds a hint.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Adds a hint when there is one.
    pub fn maybe_hint(mut self, hint: Option<String>) -> Self {
        if hint.is_some() {
            self.hint = hint;
        }
        self
    }
}

/// All the problems found in one file, with the file's text for rendering.
#[derive(Debug, Clone)]
pub struct FileDiagnostics {
    /// The file, as given on the command line or found by discovery.
    pub path: PathBuf,
    /// The file's text (empty when it could not be read).
    pub source: String,
    /// The problems, in file order.
    pub diagnostics: Vec<Diagnostic>,
}

/// Byte range of a node in `source`, from its 1-based line/column and length in characters.
fn byte_range(source: &str, pos: Pos) -> Option<std::ops::Range<usize>> {
    if pos.line == 0 {
        return None;
    }
    let line_start = if pos.line == 1 {
        0
    } else {
        source
            .match_indices('\n')
            .nth(pos.line as usize - 2)
            .map(|(i, _)| i + 1)?
    };
    let line_end = source[line_start..]
        .find('\n')
        .map_or(source.len(), |i| line_start + i);
    let line = &source[line_start..line_end];
    let col = pos.column.max(1) as usize - 1;
    let mut chars = line.char_indices().skip(col);
    let start = chars.next().map_or(line.len(), |(i, _)| i);
    let len = pos.len.max(1) as usize;
    let end = line[start..]
        .char_indices()
        .nth(len)
        .map_or(line.len(), |(i, _)| start + i);
    Some(line_start + start..line_start + end.max(start))
}

/// Renders every diagnostic of a file, rustc-style.
///
/// `color` selects ANSI styling; tests and non-terminals get plain text.
pub fn render(file: &FileDiagnostics, color: bool) -> String {
    let renderer = if color {
        Renderer::styled()
    } else {
        Renderer::plain()
    };
    let path = display_path(&file.path);
    let mut out = String::new();
    for diag in &file.diagnostics {
        let mut groups: Vec<Group<'_>> = Vec::new();
        let title = Level::ERROR.primary_title(diag.message.as_str());
        let group = match byte_range(&file.source, diag.pos) {
            Some(range) => {
                let mut annotation = AnnotationKind::Primary.span(range);
                if let Some(label) = &diag.label {
                    annotation = annotation.label(label.as_str());
                }
                title.element(
                    Snippet::source(file.source.as_str())
                        .path(path.as_str())
                        .annotation(annotation),
                )
            }
            None => title.element(annotate_snippets::Origin::path(path.as_str())),
        };
        groups.push(group);
        if let Some(hint) = &diag.hint {
            groups.push(Group::with_title(
                Level::HELP.secondary_title(hint.as_str()),
            ));
        }
        out.push_str(&renderer.render(&groups));
        out.push_str("\n\n");
    }
    out
}

/// Paths are shown as given, with `./` removed, so snapshots and CI logs stay short.
pub fn display_path(path: &Path) -> String {
    let s = path.display().to_string();
    s.strip_prefix("./").map(str::to_owned).unwrap_or(s)
}

pub use crate::shared::suggest::did_you_mean;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_cover_typos_and_case() {
        let keys = ["called", "call_count", "params"];
        assert_eq!(did_you_mean("calld", keys), Some("called"));
        assert_eq!(did_you_mean("callCount", keys), Some("call_count"));
        assert_eq!(did_you_mean("parms", keys), Some("params"));
        assert_eq!(did_you_mean("zzz", keys), None);
    }

    #[test]
    fn byte_range_handles_multibyte_columns() {
        let src = "a: é\nbé: x\n";
        let r = byte_range(
            src,
            Pos {
                line: 2,
                column: 5,
                len: 1,
            },
        )
        .unwrap();
        assert_eq!(&src[r], "x");
    }

    #[test]
    fn rendering_shows_location_line_caret_and_hint() {
        let file = FileDiagnostics {
            path: PathBuf::from("t.aptitude.yaml"),
            source: "name: x\ncalld: false\n".into(),
            diagnostics: vec![
                Diagnostic::new(
                    Pos {
                        line: 2,
                        column: 1,
                        len: 5,
                    },
                    "unknown key `calld`",
                )
                .label("unknown key")
                .hint("did you mean `called`?"),
            ],
        };
        let text = render(&file, false);
        assert!(text.contains("t.aptitude.yaml:2:1"), "{text}");
        assert!(text.contains("calld: false"), "{text}");
        assert!(text.contains("^^^^^"), "{text}");
        assert!(text.contains("did you mean `called`?"), "{text}");
    }
}
