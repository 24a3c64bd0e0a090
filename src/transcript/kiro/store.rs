//! Finding the sessions Kiro CLI wrote under a home directory (a run's private home), in
//! each engine's store:
//!
//! - v1: `.local/share/kiro-cli/data.sqlite3` (Linux; macOS `Library/Application
//!   Support/kiro-cli/data.sqlite3`), one session per `conversations_v2` row;
//! - v2: `.kiro/sessions/cli/<id>.jsonl` (+ `<id>.json`);
//! - v3: `.kiro/sessions/<workspace>/<session>/messages.jsonl` (+ `session.json`).
//!
//! A store that is there but can not be read (a FIFO where a log should be, a broken
//! database) is reported, never skipped silently: it may hold the calls of the run.

use std::path::{Path, PathBuf};

use super::super::{Transcript, parse_reader};
use super::sqlite::{Database, conversation_transcript};
use super::{add_metadata, kas, read_metadata, session};

/// Which Kiro engine wrote a session (`--agent-engine v1|v2|v3`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Engine {
    /// The v1 engine's SQLite store.
    V1,
    /// The v2 engine's `sessions/cli` logs.
    V2,
    /// The v3 (KAS) engine's `sessions/<workspace>` logs.
    V3,
}

impl Engine {
    /// `v1`, `v2`, `v3`.
    pub fn name(self) -> &'static str {
        match self {
            Engine::V1 => "v1",
            Engine::V2 => "v2",
            Engine::V3 => "v3",
        }
    }
}

/// One session found in a home.
#[derive(Debug, Clone)]
pub struct Session {
    /// The engine that wrote it.
    pub engine: Engine,
    /// The database (v1) or the log (v2, v3).
    pub path: PathBuf,
    /// The working directory it ran in, when the store records it (v1's key, v2's `cwd`).
    pub cwd: Option<String>,
    /// When it was last written, ms since the epoch, when the store records it.
    pub updated_ms: Option<u64>,
    /// What it holds.
    pub transcript: Transcript,
    /// The store's own record of it, one line each, as `aptitude analyze` reads it back:
    /// the log's lines, or the v1 conversation's JSON on one line.
    pub raw: Vec<String>,
}

/// What [`sessions_in`] found.
#[derive(Debug, Default)]
pub struct Found {
    /// The sessions, in no particular order.
    pub sessions: Vec<Session>,
    /// Stores that are there but could not be read, with why.
    pub unreadable: Vec<String>,
}

/// The stores [`sessions_in`] looks at, relative to the home, for messages.
pub const PLACES: &str = "~/.kiro/sessions/, ~/.local/share/kiro-cli/data.sqlite3";

/// A log larger than this is not read (a run's log is far smaller).
const MAX_LOG_BYTES: u64 = 512 * 1024 * 1024;

/// Every session Kiro wrote under `home`.
pub fn sessions_in(home: &Path) -> Found {
    let mut found = Found::default();
    for db in [
        home.join(".local/share/kiro-cli/data.sqlite3"),
        home.join("Library/Application Support/kiro-cli/data.sqlite3"),
    ] {
        if std::fs::symlink_metadata(&db).is_ok() {
            read_database(&db, &mut found);
        }
    }
    let sessions = home.join(".kiro/sessions");
    for log in logs(&sessions.join("cli"), |n| n.ends_with(".jsonl")) {
        read_log(Engine::V2, &log, &mut found);
    }
    for workspace in dirs(&sessions).into_iter().filter(|d| !d.ends_with("cli")) {
        for dir in dirs(&workspace) {
            let log = dir.join("messages.jsonl");
            if std::fs::symlink_metadata(&log).is_ok() {
                read_log(Engine::V3, &log, &mut found);
            }
        }
    }
    found
}

/// The directories in `dir` (links not followed), sorted.
fn dirs(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

/// The entries of `dir` whose names `keep` accepts, sorted.
fn logs(dir: &Path, keep: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| keep(&e.file_name().to_string_lossy()))
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

fn read_database(path: &Path, found: &mut Found) {
    let rows = Database::open(path).and_then(|db| {
        let rows = db.conversations()?;
        let mut sessions = Vec::new();
        for row in rows {
            let (value, lossy) = db.value(&row)?;
            let transcript = conversation_transcript(&row, &value, lossy);
            sessions.push(Session {
                engine: Engine::V1,
                path: path.to_owned(),
                cwd: Some(row.key.clone()),
                updated_ms: u64::try_from(row.updated_at).ok().filter(|&ms| ms > 0),
                transcript,
                // One line, as a recorded transcript holds it.
                raw: vec![
                    serde_json::from_str::<serde_json::Value>(&value)
                        .map_or(value, |v| v.to_string()),
                ],
            });
        }
        Ok(sessions)
    });
    match rows {
        Ok(sessions) => found.sessions.extend(sessions),
        Err(e) => found.unreadable.push(format!("{}: {e}", path.display())),
    }
}

fn read_log(engine: Engine, log: &Path, found: &mut Found) {
    let bytes = match crate::shared::files::read_capped(log, MAX_LOG_BYTES) {
        Ok(b) => b,
        Err(e) => {
            found.unreadable.push(format!("{}: {e}", log.display()));
            return;
        }
    };
    let mut transcript = match parse_reader(&bytes[..]) {
        Ok(t) => t,
        Err(e) => {
            found.unreadable.push(format!("{}: {e}", log.display()));
            return;
        }
    };
    add_metadata(log, &mut transcript);
    let (cwd, updated_ms) = match engine {
        Engine::V2 => metadata_of(log, "json")
            .map(|doc| session::cwd_and_updated(&doc))
            .unwrap_or_default(),
        _ => (
            None,
            read_metadata(&log.with_file_name("session.json")).and_then(|d| kas::updated(&d)),
        ),
    };
    found.sessions.push(Session {
        engine,
        path: log.to_owned(),
        cwd,
        updated_ms,
        transcript,
        raw: String::from_utf8_lossy(&bytes)
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(str::to_owned)
            .collect(),
    });
}

/// A v2 log's metadata file (`<id>.<ext>` beside `<id>.jsonl`).
fn metadata_of(log: &Path, ext: &str) -> Option<serde_json::Value> {
    read_metadata(&log.with_extension(ext))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_engine_store_is_found_and_a_fifo_is_reported() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path();
        let cli = h.join(".kiro/sessions/cli");
        std::fs::create_dir_all(&cli).unwrap();
        std::fs::write(
            cli.join("s2.jsonl"),
            "{\"version\":\"v1\",\"kind\":\"AssistantMessage\",\"data\":{\"message_id\":\"a\",\"content\":[{\"kind\":\"text\",\"data\":\"hi\"}]}}\n",
        )
        .unwrap();
        std::fs::write(
            cli.join("s2.json"),
            r#"{"session_id":"s2","cwd":"/w","updated_at":"2026-03-30T19:56:10Z","session_state":{}}"#,
        )
        .unwrap();
        let v3 = h.join(".kiro/sessions/0123456789abcdef/sess_3");
        std::fs::create_dir_all(&v3).unwrap();
        nix::unistd::mkfifo(&v3.join("messages.jsonl"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        let db_dir = h.join(".local/share/kiro-cli");
        std::fs::create_dir_all(&db_dir).unwrap();
        let value = r#"{"conversation_id":"c1","history":[]}"#;
        drop(super::super::sqlite::tests::write(
            &db_dir.join("data.sqlite3"),
            &[("/w", "c1", value, 5)],
        ));
        let found = sessions_in(h);
        let mut engines: Vec<(Engine, Option<&str>)> = found
            .sessions
            .iter()
            .map(|s| (s.engine, s.cwd.as_deref()))
            .collect();
        engines.sort();
        assert_eq!(
            engines,
            [(Engine::V1, Some("/w")), (Engine::V2, Some("/w"))]
        );
        let v2 = found
            .sessions
            .iter()
            .find(|s| s.engine == Engine::V2)
            .unwrap();
        assert_eq!(v2.transcript.session_id.as_deref(), Some("s2"));
        assert_eq!(v2.updated_ms, Some(1_774_900_570_000));
        assert_eq!(v2.raw.len(), 1);
        assert_eq!(found.unreadable.len(), 1, "{:?}", found.unreadable);
        assert!(
            found.unreadable[0].contains("FIFO"),
            "{:?}",
            found.unreadable
        );
    }
}
