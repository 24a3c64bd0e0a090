//! Where a program is installed, so that the sandbox can show it read-only at the same
//! path: the `node_modules` directory an npm-installed CLI lives in, a Python virtual
//! environment with the interpreter it was made from, the prefix of a script's
//! interpreter (`#!/usr/bin/env node`), or else the program file alone. System
//! directories (`/usr`, `/opt`, …) are already in every sandbox and are not repeated.

use std::path::{Path, PathBuf};

/// The directories every sandbox shows anyway.
const SYSTEM: &[&str] = &[
    "/usr",
    "/opt",
    "/bin",
    "/sbin",
    "/lib",
    "/lib64",
    "/nix/store",
];

/// The directories to show read-only for `program` (a path, or a name looked up on
/// `PATH`), deepest first, without system directories. Empty when it can not be found.
pub fn roots(program: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let resolved = if program.components().count() > 1 {
        Some(program.to_owned())
    } else {
        crate::shared::files::find_on_path(&program.to_string_lossy())
    };
    if let Some(path) = resolved {
        collect(&path, &mut found, 0);
    }
    found.retain(|p| !is_system(p));
    found.sort();
    found.dedup();
    // A directory inside another one listed is covered by it.
    let all = found.clone();
    found.retain(|p| !all.iter().any(|q| q != p && p.starts_with(q)));
    found
}

fn collect(path: &Path, found: &mut Vec<PathBuf>, depth: u32) {
    if depth > 3 {
        return;
    }
    // The link as called (`node_modules/.bin/claude`) and where it leads.
    if let Some(root) = install_root(path) {
        found.push(root);
    }
    let Ok(real) = std::fs::canonicalize(path) else {
        return;
    };
    if let Some(root) = install_root(&real) {
        found.push(root.clone());
        if let Some(base) = venv_base(&root) {
            found.push(base);
        }
    } else {
        match real.parent() {
            // An interpreter (`…/prefix/bin/node`, `…/versions/3.11/bin/python3`): its
            // prefix, which holds its libraries.
            Some(dir) if depth > 0 && dir.file_name().is_some_and(|n| n == "bin") => {
                found.push(prefix_of(dir));
            }
            // A program outside any package: the file alone, never its directory (which
            // may be a project holding the test files).
            _ => found.push(real.clone()),
        }
    }
    if let Some(interpreter) = shebang(&real) {
        let interpreter = if interpreter.file_name().is_some_and(|n| n == "env") {
            None
        } else {
            Some(interpreter)
        };
        let program = interpreter.or_else(|| env_program(&real));
        if let Some(program) = program {
            collect(&program, found, depth + 1);
        }
    }
}

/// The package directory `program` (a path, or a name looked up on `PATH`) is installed
/// in: the `node_modules` directory or Python virtual environment holding it once its links
/// are followed (else as called), system directories included
/// (`/usr/local/lib/node_modules`). Absolute; `None` for a program outside any package.
pub fn package_root(program: &Path) -> Option<PathBuf> {
    let resolved = if program.components().count() > 1 {
        program.to_owned()
    } else {
        crate::shared::files::find_on_path(&program.to_string_lossy())?
    };
    let resolved = std::path::absolute(&resolved).ok()?;
    std::fs::canonicalize(&resolved)
        .ok()
        .and_then(|real| install_root(&real))
        .or_else(|| install_root(&resolved))
}

/// The package directory `program` is installed in as its path names it, without
/// resolving links (`/repo/node_modules` where that is a link to `/elsewhere/node_modules`):
/// what an agent that reports its own location without resolving them shows. `None` when
/// it is the same as [`package_root`]'s or there is none.
pub fn package_root_as_named(program: &Path) -> Option<PathBuf> {
    let named = std::path::absolute(program).ok()?;
    install_root(&named).filter(|root| Some(root) != package_root(program).as_ref())
}

/// The `node_modules` directory `path` is in, or the virtual environment (the directory
/// with `pyvenv.cfg`) it is in.
fn install_root(path: &Path) -> Option<PathBuf> {
    let mut dir = path.parent();
    while let Some(d) = dir {
        if d.file_name().is_some_and(|n| n == "node_modules") {
            return Some(d.to_owned());
        }
        if d.join("pyvenv.cfg").is_file() {
            return Some(d.to_owned());
        }
        dir = d.parent();
    }
    None
}

/// The prefix of the interpreter a virtual environment was made from (`home = …/bin` in
/// its `pyvenv.cfg`).
fn venv_base(venv: &Path) -> Option<PathBuf> {
    let cfg = std::fs::read_to_string(venv.join("pyvenv.cfg")).ok()?;
    let home = cfg.lines().find_map(|l| {
        let (k, v) = l.split_once('=')?;
        (k.trim() == "home").then(|| PathBuf::from(v.trim()))
    })?;
    let home = std::fs::canonicalize(&home).unwrap_or(home);
    Some(prefix_of(&home))
}

/// `…/prefix` for a directory `…/prefix/bin`, else the directory itself.
fn prefix_of(dir: &Path) -> PathBuf {
    if dir.file_name().is_some_and(|n| n == "bin") {
        dir.parent().unwrap_or(dir).to_owned()
    } else {
        dir.to_owned()
    }
}

/// The interpreter named by a script's `#!` line.
fn shebang(path: &Path) -> Option<PathBuf> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = std::fs::File::open(path).ok()?.read(&mut head).ok()?;
    let head = std::str::from_utf8(&head[..n]).ok()?;
    let line = head.strip_prefix("#!")?.lines().next()?;
    line.split_whitespace().next().map(PathBuf::from)
}

/// The program a `#!/usr/bin/env PROGRAM` script runs, found on `PATH`.
fn env_program(script: &Path) -> Option<PathBuf> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = std::fs::File::open(script).ok()?.read(&mut head).ok()?;
    let line = std::str::from_utf8(&head[..n])
        .ok()?
        .lines()
        .next()?
        .to_owned();
    let program = line
        .split_whitespace()
        .skip(1)
        .find(|w| !w.starts_with('-'))?
        .to_owned();
    crate::shared::files::find_on_path(&program)
}

fn is_system(path: &Path) -> bool {
    SYSTEM.iter().any(|s| path.starts_with(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `node_modules` reached through a link (a worktree sharing another's, pnpm's
    /// layout) is named two ways: both are the installation.
    #[test]
    fn an_installation_reached_through_a_link_is_named_both_ways() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real/node_modules");
        std::fs::create_dir_all(real.join(".bin")).unwrap();
        std::fs::write(real.join(".bin/agent"), "#!/bin/sh\n").unwrap();
        std::fs::create_dir_all(dir.path().join("work")).unwrap();
        let linked = dir.path().join("work/node_modules");
        std::os::unix::fs::symlink(&real, &linked).unwrap();
        let program = linked.join(".bin/agent");
        assert_eq!(
            package_root(&program),
            Some(std::fs::canonicalize(&real).unwrap())
        );
        assert_eq!(package_root_as_named(&program), Some(linked));
        assert_eq!(package_root_as_named(&real.join(".bin/agent")), None);
    }

    #[test]
    fn an_npm_cli_shows_its_node_modules_and_its_interpreter() {
        let dir = tempfile::tempdir().unwrap();
        let nm = dir.path().join("node_modules");
        let pkg = nm.join("cli/bin");
        std::fs::create_dir_all(&pkg).unwrap();
        std::fs::create_dir_all(nm.join(".bin")).unwrap();
        let node_prefix = dir.path().join("node-v20");
        std::fs::create_dir_all(node_prefix.join("bin")).unwrap();
        let node = node_prefix.join("bin/node");
        std::fs::write(&node, "binary").unwrap();
        let script = pkg.join("cli.js");
        std::fs::write(&script, format!("#!{}\nconsole.log(1)\n", node.display())).unwrap();
        std::os::unix::fs::symlink("../cli/bin/cli.js", nm.join(".bin/cli")).unwrap();
        let roots = roots(&nm.join(".bin/cli"));
        let nm = std::fs::canonicalize(&nm).unwrap();
        let node_prefix = std::fs::canonicalize(&node_prefix).unwrap();
        assert!(roots.contains(&nm), "{roots:?}");
        assert!(roots.contains(&node_prefix), "{roots:?}");
        // The package directory alone, whatever the interpreter: what cassettes normalise.
        assert_eq!(
            package_root(&dir.path().join("node_modules/.bin/cli")),
            Some(nm)
        );
        assert_eq!(package_root(&node), None);
    }

    #[test]
    fn a_venv_shows_its_base_interpreter() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("py/3.11");
        std::fs::create_dir_all(base.join("bin")).unwrap();
        let venv = dir.path().join("venv");
        std::fs::create_dir_all(venv.join("bin")).unwrap();
        std::fs::write(
            venv.join("pyvenv.cfg"),
            format!("home = {}\n", base.join("bin").display()),
        )
        .unwrap();
        std::fs::write(venv.join("bin/aider"), "#!/usr/bin/python3\n").unwrap();
        let roots = roots(&venv.join("bin/aider"));
        let venv = std::fs::canonicalize(&venv).unwrap();
        let base = std::fs::canonicalize(&base).unwrap();
        assert!(roots.contains(&venv), "{roots:?}");
        assert!(roots.contains(&base), "{roots:?}");
    }

    #[test]
    fn system_programs_add_nothing() {
        assert!(
            roots(Path::new("/bin/sh")).is_empty(),
            "{:?}",
            roots(Path::new("/bin/sh"))
        );
    }
}
