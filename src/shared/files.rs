//! Reading files an agent (or a careless user) may have made hostile, below every pipeline
//! stage: test files, workspace snapshots and assertions all read through here.
//!
//! - Only regular files are read. A FIFO would block the reader forever and a device such
//!   as `/dev/zero` never ends, so the file is opened with `O_NONBLOCK` and its type checked
//!   on the open descriptor (`fstat`) before a byte is read.
//! - Reads are bounded: [`read_capped`] refuses a file over its cap before reading it, and
//!   [`hash`] streams a file through a fixed buffer, so memory stays flat in file size.
//! - [`resolve_in`] resolves a path inside a root one component at a time, links included,
//!   and says when it leads outside, before anything there is opened.

use std::fs::{File, Metadata};
use std::hash::Hasher;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// Why a file was not read.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// It is a directory, FIFO, socket or device (the name says which).
    #[error("it is {0}, not a regular file")]
    NotRegular(&'static str),
    /// It is larger than the reader's cap.
    #[error("it has {size} bytes, more than the {cap} bytes read at most")]
    TooLarge {
        /// Its size in bytes.
        size: u64,
        /// The cap in bytes.
        cap: u64,
    },
    /// Opening or reading it failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// What kind of file `meta` describes, in words ("a FIFO (named pipe)").
pub fn kind_name(meta: &Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt as _;
    let kind = meta.file_type();
    if kind.is_file() {
        "a regular file"
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_symlink() {
        "a symbolic link"
    } else if kind.is_fifo() {
        "a FIFO (named pipe)"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// Opens `path` for reading without blocking when it is a regular file: the type is checked
/// before opening (opening a device can act on it) and again on the open descriptor (a
/// FIFO swapped in between can not block the open); links are followed.
///
/// # Errors
/// [`FileError::NotRegular`] for anything else, [`FileError::Io`] when it can not be opened.
pub fn open_regular(path: &Path) -> Result<(File, Metadata), FileError> {
    use std::os::unix::fs::OpenOptionsExt as _;
    // The type is checked before opening too: opening a device can act on it.
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(FileError::NotRegular(kind_name(&meta)));
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(FileError::NotRegular(kind_name(&meta)));
    }
    Ok((file, meta))
}

/// [`open_regular`] for readers that speak `std::io`: the file only.
///
/// # Errors
/// An I/O error, or `InvalidInput` saying what kind of file it is ("it is a FIFO (named
/// pipe), not a regular file").
pub fn open_regular_file(path: &Path) -> std::io::Result<File> {
    match open_regular(path) {
        Ok((file, _)) => Ok(file),
        Err(FileError::Io(e)) => Err(e),
        Err(e @ FileError::NotRegular(_)) => Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            e.to_string(),
        )),
        Err(e) => Err(std::io::Error::other(e.to_string())),
    }
}

/// The whole content of the regular file at `path`, when it has at most `cap` bytes.
///
/// # Errors
/// [`FileError::NotRegular`], [`FileError::TooLarge`] (checked before reading), or
/// [`FileError::Io`].
pub fn read_capped(path: &Path, cap: u64) -> Result<Vec<u8>, FileError> {
    let (file, meta) = open_regular(path)?;
    if meta.len() > cap {
        return Err(FileError::TooLarge {
            size: meta.len(),
            cap,
        });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    // A file that grows while it is read is still cut at the cap.
    file.take(cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(FileError::TooLarge {
            size: bytes.len() as u64,
            cap,
        });
    }
    Ok(bytes)
}

/// The first `cap` bytes of the regular file at `path` (all of it when shorter).
///
/// # Errors
/// [`FileError::NotRegular`] or [`FileError::Io`].
pub fn read_prefix(path: &Path, cap: u64) -> Result<Vec<u8>, FileError> {
    let (file, _) = open_regular(path)?;
    let mut bytes = Vec::new();
    file.take(cap).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// A fingerprint of the regular file at `path`: (size in bytes, hash of its content).
///
/// The content is streamed through a fixed buffer, and holes of a sparse file are skipped
/// (`SEEK_DATA` / `SEEK_HOLE`) rather than read: a 6 GB sparse file costs neither 6 GB of
/// memory nor 6 GB of reading. So that a file's fingerprint does not depend on how its zeros
/// are stored, the hash sees the content in 4 KiB blocks at 4 KiB offsets, each all-zero
/// block (written or a hole) counted, never hashed byte by byte.
///
/// # Errors
/// As [`open_regular`], or a read error.
pub fn hash(path: &Path) -> Result<(u64, u64), FileError> {
    use std::io::{Seek as _, SeekFrom};
    use std::os::fd::AsFd as _;
    const BLOCK: u64 = 4096;
    let (mut file, meta) = open_regular(path)?;
    let len = meta.len();
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    let mut zero_blocks: u64 = 0;
    let flush_zeros = |hasher: &mut std::collections::hash_map::DefaultHasher, n: &mut u64| {
        if *n > 0 {
            hasher.write_u8(0);
            hasher.write_u64(*n);
            *n = 0;
        }
    };
    let mut buf = vec![0u8; 64 * 1024];
    let mut offset: u64 = 0;
    while offset < len {
        // Where the next data starts (a file system without SEEK_DATA: here).
        let data = i64::try_from(offset)
            .ok()
            .and_then(|at| {
                match nix::unistd::lseek(file.as_fd(), at, nix::unistd::Whence::SeekData) {
                    Ok(d) => u64::try_from(d).ok(),
                    Err(nix::errno::Errno::ENXIO) => Some(len),
                    Err(_) => None,
                }
            })
            .unwrap_or(offset);
        // Holes are whole blocks of zeros.
        let data = data - data % BLOCK;
        if data > offset {
            zero_blocks += (data - offset).div_ceil(BLOCK);
            offset = data;
        }
        if offset >= len {
            break;
        }
        let hole = i64::try_from(offset)
            .ok()
            .and_then(|at| {
                nix::unistd::lseek(file.as_fd(), at, nix::unistd::Whence::SeekHole)
                    .ok()
                    .and_then(|h| u64::try_from(h).ok())
            })
            .unwrap_or(len)
            .max(offset + 1);
        file.seek(SeekFrom::Start(offset))?;
        while offset < hole.min(len) {
            let want = usize::try_from((hole.min(len) - offset).min(buf.len() as u64))
                .unwrap_or(buf.len());
            let n = file.read(&mut buf[..want])?;
            if n == 0 {
                offset = len;
                break;
            }
            for block in buf[..n].chunks(BLOCK as usize) {
                if block.iter().all(|b| *b == 0) && block.len() as u64 == BLOCK {
                    zero_blocks += 1;
                } else {
                    flush_zeros(&mut hasher, &mut zero_blocks);
                    hasher.write_u8(1);
                    hasher.write(block);
                }
            }
            offset += n as u64;
        }
    }
    flush_zeros(&mut hasher, &mut zero_blocks);
    hasher.write_u64(len);
    Ok((len, hasher.finish()))
}

/// Where a path inside a directory leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// It exists, at this absolute path inside the root (every link resolved).
    Inside(PathBuf),
    /// Nothing is there (a missing file, or a link to a missing file inside the root).
    Missing,
    /// It leads outside the root, to this path (through `..` or a link); nothing there was
    /// opened.
    Outside(PathBuf),
}

/// Links followed at most while resolving one path (as Linux's `MAXSYMLINKS`).
const MAX_LINKS: usize = 40;

/// Resolves `rel` (a path relative to `root`) one component at a time, following links,
/// without opening anything. A path that only lexically stays inside (`dirlink/x` where
/// `dirlink` points to `/etc`) is [`Resolved::Outside`].
///
/// # Errors
/// When `root` can not be resolved, or a link can not be read or links loop.
pub fn resolve_in(root: &Path, rel: &Path) -> std::io::Result<Resolved> {
    let root = std::fs::canonicalize(root)?;
    let mut pending: std::collections::VecDeque<std::ffi::OsString> =
        std::collections::VecDeque::new();
    push_components(&mut pending, rel, true);
    let mut current = root.clone();
    let mut links = 0;
    while let Some(part) = pending.pop_front() {
        if part == "/" {
            current = PathBuf::from("/");
            continue;
        }
        if part == ".." {
            current.pop();
            continue;
        }
        let next = current.join(&part);
        match std::fs::symlink_metadata(&next) {
            Ok(meta) if meta.file_type().is_symlink() => {
                links += 1;
                if links > MAX_LINKS {
                    return Err(std::io::Error::other("too many levels of symbolic links"));
                }
                let target = std::fs::read_link(&next)?;
                let mut rest: Vec<std::ffi::OsString> = pending.drain(..).collect();
                push_components(&mut pending, &target, false);
                pending.extend(rest.drain(..));
            }
            Ok(_) => current = next,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                current = next;
                for part in pending.drain(..) {
                    if part == ".." {
                        current.pop();
                    } else if part != "/" {
                        current.push(part);
                    }
                }
                return Ok(if current.starts_with(&root) {
                    Resolved::Missing
                } else {
                    Resolved::Outside(current)
                });
            }
            Err(e) => return Err(e),
        }
    }
    Ok(if current.starts_with(&root) {
        Resolved::Inside(current)
    } else {
        Resolved::Outside(current)
    })
}

/// Queues the components of `path`; an absolute path starts again from `/` unless it is
/// the user's relative path (then a leading `/` is ignored: paths are inside the root).
fn push_components(
    queue: &mut std::collections::VecDeque<std::ffi::OsString>,
    path: &Path,
    relative_only: bool,
) {
    for c in path.components() {
        match c {
            Component::RootDir | Component::Prefix(_) => {
                if !relative_only {
                    queue.push_back("/".into());
                }
            }
            Component::CurDir => {}
            Component::ParentDir => queue.push_back("..".into()),
            Component::Normal(name) => queue.push_back(name.to_owned()),
        }
    }
}

/// The files under `base` that `glob` (relative to `base`, `..` allowed at its start)
/// matches, as (path as matched, path on disk), in path order. A glob without a wildcard
/// that names a directory means every file below it (`dir` is `dir/**`).
///
/// # Errors
/// When `glob` is not a glob.
pub fn matching_files(
    base: &Path,
    glob: &str,
) -> Result<Vec<(String, std::path::PathBuf)>, globset::Error> {
    let has_wildcard = glob.contains(['*', '?', '[', '{']);
    let trimmed = glob.trim_end_matches('/');
    if !has_wildcard && !trimmed.is_empty() && base.join(trimmed).is_dir() {
        return matching_files(base, &format!("{trimmed}/**"));
    }
    let matcher = globset::GlobBuilder::new(glob)
        .literal_separator(true)
        .build()?
        .compile_matcher();
    // Walk from the glob's literal prefix, so `../src/**/*.rs` walks `../src` only.
    let literal: Vec<&str> = glob
        .split('/')
        .take_while(|c| !c.contains(['*', '?', '[', '{']))
        .collect();
    let prefix = if literal.len() == glob.split('/').count() {
        // No wildcard: the glob names one file.
        literal[..literal.len().saturating_sub(1)].join("/")
    } else {
        literal.join("/")
    };
    let start = base.join(&prefix);
    let mut found = Vec::new();
    if !start.is_dir() {
        return Ok(found);
    }
    let walk = ignore::WalkBuilder::new(&start)
        .standard_filters(false)
        .follow_links(false)
        .build();
    for entry in walk.flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let below = relative_slash(&start, entry.path());
        let rel = if prefix.is_empty() {
            below
        } else {
            format!("{prefix}/{below}")
        };
        if matcher.is_match(&rel) {
            found.push((rel, entry.path().to_owned()));
        }
    }
    found.sort();
    Ok(found)
}

/// Creates `path` (and its directories) with `content`, never over a file already there.
///
/// # Errors
/// `AlreadyExists` when `path` exists (also when it appeared meanwhile), and any error of
/// creating the directories or writing.
pub fn write_new(path: &Path, content: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    file.write_all(content.as_bytes())
}

/// `path` below `root` with `/` between components (`path` itself when it is not below).
pub fn relative_slash(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// Finds a program on `PATH`, like `which`.
pub fn find_on_path(program: &str) -> Option<PathBuf> {
    find_in_path(&std::env::var_os("PATH")?, program)
}

/// Finds a program in the directories of `path` (a `PATH` value, `:`-separated), like
/// `which`: the first executable regular file named `program`.
pub fn find_in_path(path: &std::ffi::OsStr, program: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path)
        .map(|dir| dir.join(program))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// aptitude's cache directory: `$APTITUDE_CACHE_DIR`, else `$XDG_CACHE_HOME/aptitude`,
/// else `~/.cache/aptitude`; `None` without any of them. Outside every sandbox.
#[cfg(not(test))]
pub fn cache_root() -> Option<PathBuf> {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    env("APTITUDE_CACHE_DIR")
        .or_else(|| env("XDG_CACHE_HOME").map(|d| d.join("aptitude")))
        .or_else(|| env("HOME").map(|h| h.join(".cache/aptitude")))
}

/// The crate's own unit tests keep aptitude's cache in `target/tmp/unit-cache`, so that
/// `cargo test` leaves nothing in the developer's cache (the integration tests give each
/// `aptitude` they run a fresh `HOME`).
#[cfg(test)]
pub fn cache_root() -> Option<PathBuf> {
    Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("target/tmp/unit-cache"))
}

/// Why an output file was not written.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The path is a symbolic link: aptitude never writes through one (a link planted at
    /// an output path would send the report anywhere).
    #[error("refusing to write {}: it is a symbolic link (to {}); remove it or name another file", path.display(), target.display())]
    Link {
        /// The output path.
        path: PathBuf,
        /// Where the link points.
        target: PathBuf,
    },
    /// The path exists and is not a regular file (a FIFO would block the writer).
    #[error("refusing to write {}: it is {kind}, not a regular file", path.display())]
    NotAFile {
        /// The output path.
        path: PathBuf,
        /// What it is, in words.
        kind: &'static str,
    },
    /// The file or its directory could not be written.
    #[error("can not write {}: {source}", path.display())]
    Io {
        /// The output path.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// Writes an output file (results, a report, a recorded transcript) safely: never through
/// a link and never into a FIFO or device at the path, and atomically (a temp file in the
/// same directory renamed over the path, so a reader never sees half a file and a link
/// made at the path meanwhile is replaced, not followed). Creates the directory.
///
/// # Errors
/// [`OutputError`] saying what is at the path, or why it could not be written.
pub fn write_output(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    use std::io::Write;
    let mut tmp = output_file(path)?;
    let io = |source| OutputError::Io {
        path: path.to_owned(),
        source,
    };
    tmp.write_all(bytes).map_err(io)?;
    persist_output(tmp, path)
}

/// A temporary file beside `path` to write an output into, then [`persist_output`] it: for
/// outputs written in pieces (the results JSON and its blob pack). Refused as
/// [`write_output`] refuses (`path` a link or not a regular file).
///
/// # Errors
/// As [`write_output`].
pub fn output_file(path: &Path) -> Result<tempfile::NamedTempFile, OutputError> {
    let io = |source| OutputError::Io {
        path: path.to_owned(),
        source,
    };
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        let kind = meta.file_type();
        if kind.is_symlink() {
            return Err(OutputError::Link {
                path: path.to_owned(),
                target: std::fs::read_link(path).unwrap_or_default(),
            });
        }
        if !kind.is_file() {
            return Err(OutputError::NotAFile {
                path: path.to_owned(),
                kind: kind_name(&meta),
            });
        }
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io)?;
    tempfile::Builder::new()
        .prefix(".aptitude-output-")
        .tempfile_in(dir)
        .map_err(io)
}

/// Syncs `tmp` (from [`output_file`]) and puts it at `path` in one step: a reader never
/// sees half an output.
///
/// # Errors
/// When it can not be synced or renamed.
pub fn persist_output(tmp: tempfile::NamedTempFile, path: &Path) -> Result<(), OutputError> {
    let io = |source| OutputError::Io {
        path: path.to_owned(),
        source,
    };
    tmp.as_file().sync_all().map_err(io)?;
    tmp.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_are_never_written_through_a_link_or_into_a_fifo() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere");
        std::fs::write(&target, "untouched").unwrap();
        let link = dir.path().join("junit.xml");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let err = write_output(&link, b"report").unwrap_err().to_string();
        assert!(err.contains("is a symbolic link"), "{err}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "untouched");
        let fifo = dir.path().join("fifo.json");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        let err = write_output(&fifo, b"{}").unwrap_err().to_string();
        assert!(err.contains("FIFO"), "{err}");
        let plain = dir.path().join("sub/results.json");
        write_output(&plain, b"{}").unwrap();
        write_output(&plain, b"{\"again\":1}").unwrap();
        assert_eq!(std::fs::read_to_string(&plain).unwrap(), "{\"again\":1}");
        let names: Vec<_> = std::fs::read_dir(dir.path().join("sub"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["results.json"], "no temp file left");
    }
    use std::os::unix::fs::symlink;

    #[test]
    fn only_regular_files_are_opened_and_nothing_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("out.json");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let err = read_capped(&fifo, 100).unwrap_err();
        assert_eq!(
            err.to_string(),
            "it is a FIFO (named pipe), not a regular file"
        );
        let err = read_capped(Path::new("/dev/zero"), 100).unwrap_err();
        assert!(
            matches!(err, FileError::NotRegular("a character device")),
            "{err}"
        );
        assert!(matches!(hash(&fifo), Err(FileError::NotRegular(_))));
    }

    #[test]
    fn reads_are_capped_before_reading() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big");
        File::create(&big)
            .unwrap()
            .set_len(10 * 1024 * 1024 * 1024)
            .unwrap();
        let err = read_capped(&big, 1024).unwrap_err();
        assert!(
            matches!(err, FileError::TooLarge { size, cap: 1024 } if size == 10 * 1024 * 1024 * 1024),
            "{err}"
        );
        std::fs::write(dir.path().join("small"), "hello").unwrap();
        assert_eq!(read_capped(&dir.path().join("small"), 5).unwrap(), b"hello");
        let (size, h) = hash(&dir.path().join("small")).unwrap();
        std::fs::write(dir.path().join("same"), "hello").unwrap();
        assert_eq!(hash(&dir.path().join("same")).unwrap(), (size, h));
        std::fs::write(dir.path().join("other"), "hellO").unwrap();
        assert_ne!(hash(&dir.path().join("other")).unwrap(), (size, h));
    }

    #[test]
    fn a_sparse_file_hashes_like_its_zeros_written_out_without_reading_the_holes() {
        use std::io::{Seek as _, SeekFrom, Write as _};
        let dir = tempfile::tempdir().unwrap();
        let sparse = dir.path().join("sparse");
        let mut f = File::create(&sparse).unwrap();
        f.set_len(8 << 20).unwrap();
        f.seek(SeekFrom::Start(1 << 20)).unwrap();
        f.write_all(b"middle").unwrap();
        let mut dense = vec![0u8; 8 << 20];
        dense[1 << 20..(1 << 20) + 6].copy_from_slice(b"middle");
        std::fs::write(dir.path().join("dense"), &dense).unwrap();
        assert_eq!(
            hash(&sparse).unwrap(),
            hash(&dir.path().join("dense")).unwrap()
        );
        dense[5 << 20] = 1;
        std::fs::write(dir.path().join("dense"), &dense).unwrap();
        assert_ne!(
            hash(&sparse).unwrap(),
            hash(&dir.path().join("dense")).unwrap()
        );
        // A terabyte of holes hashes at once.
        let huge = File::create(dir.path().join("huge")).unwrap();
        huge.set_len(1 << 40).unwrap();
        assert_eq!(hash(&dir.path().join("huge")).unwrap().0, 1 << 40);
    }

    #[test]
    fn paths_are_resolved_inside_the_root_links_included() {
        let outer = tempfile::tempdir().unwrap();
        let root = outer.path().join("ws");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/a.txt"), "a").unwrap();
        std::fs::write(outer.path().join("secret"), "s").unwrap();
        symlink("/etc", root.join("dirlink")).unwrap();
        symlink("/etc/passwd", root.join("passwd")).unwrap();
        symlink("sub/a.txt", root.join("inside")).unwrap();
        symlink("../secret", root.join("up")).unwrap();
        symlink("/nonexistent/x", root.join("dangling_out")).unwrap();
        symlink("sub/missing", root.join("dangling_in")).unwrap();
        let canon = std::fs::canonicalize(&root).unwrap();
        let r = |p: &str| resolve_in(&root, Path::new(p)).unwrap();
        assert_eq!(r("sub/a.txt"), Resolved::Inside(canon.join("sub/a.txt")));
        assert_eq!(r("inside"), Resolved::Inside(canon.join("sub/a.txt")));
        assert_eq!(
            r("./sub/../sub/a.txt"),
            Resolved::Inside(canon.join("sub/a.txt"))
        );
        assert_eq!(r("missing.txt"), Resolved::Missing);
        assert_eq!(r("dangling_in"), Resolved::Missing);
        assert!(matches!(r("dirlink/shadow"), Resolved::Outside(p) if p.starts_with("/etc")));
        assert!(matches!(r("passwd"), Resolved::Outside(p) if p == Path::new("/etc/passwd")));
        assert!(matches!(r("up"), Resolved::Outside(_)));
        assert!(matches!(r("dangling_out"), Resolved::Outside(_)));
        assert!(matches!(r("../secret"), Resolved::Outside(_)));
        symlink("loop2", root.join("loop1")).unwrap();
        symlink("loop1", root.join("loop2")).unwrap();
        assert!(
            resolve_in(&root, Path::new("loop1")).is_err(),
            "a link loop ends"
        );
    }
}
