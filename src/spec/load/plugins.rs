//! `plugins:`: Claude Code plugin directories loaded for the run (`--plugin-dir`), so
//! that a plugin's author tests the plugin as shipped.
//!
//! ```yaml
//! plugins: [../my-plugin, vendor/other-plugin]
//! ```
//!
//! Each entry is a directory, relative to the test file's directory; one that does not
//! exist is a load error at the entry.

use std::path::{Path, PathBuf};

use super::super::diagnostic::{Diagnostic, display_path};
use super::super::node::{Node, Value};
use super::Ctx;

impl Ctx {
    /// The directories of `plugins:`, resolved against `test_file`'s directory.
    pub(super) fn plugins(&mut self, node: &Node, test_file: &Path) -> Vec<PathBuf> {
        let items: Vec<&Node> = match &node.value {
            Value::Seq(items) => items.iter().collect(),
            Value::Str(_) => vec![node],
            _ => {
                self.type_error(node, "plugins", "a list of plugin directories");
                return Vec::new();
            }
        };
        let mut out = Vec::new();
        for item in items {
            let Some(written) = self.non_empty_string(item, "plugins") else {
                continue;
            };
            let dir = super::super::resolve_workspace(test_file, Some(Path::new(&written)));
            if self.check_workspace && !dir.is_dir() {
                self.push(
                    Diagnostic::new(item.pos, "the plugin directory does not exist")
                        .label(format!("resolves to {}", display_path(&dir)))
                        .hint(
                            "a plugin is a directory (with `.claude-plugin/plugin.json`, \
                             `skills/`, `commands/` …), relative to the test file's directory",
                        ),
                );
                continue;
            }
            if out.contains(&dir) {
                self.push(
                    Diagnostic::new(item.pos, format!("plugin `{written}` is listed twice"))
                        .label("repeated"),
                );
                continue;
            }
            out.push(dir);
        }
        out
    }
}
