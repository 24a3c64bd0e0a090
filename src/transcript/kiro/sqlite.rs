//! Kiro CLI v1's database, `data.sqlite3`: the `conversations_v2` table, one
//! `ConversationState` JSON per row (`aws/amazon-q-developer-cli`@sync-prod-from-main
//! `crates/chat-cli/src/database/sqlite_migrations/008_multiple_conversations_per_path.sql`):
//!
//! ```sql
//! CREATE TABLE conversations_v2 (key TEXT NOT NULL, conversation_id TEXT NOT NULL,
//!   value TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
//!   PRIMARY KEY (key, conversation_id));  -- key: the working directory; times in ms
//! ```
//!
//! Databases before that migration have `conversations (key TEXT PRIMARY KEY, value TEXT)`.
//!
//! The database is never opened where it lies: the file (and its `-wal` journal, which holds
//! the last writes of a Kiro that was stopped) is copied through
//! [`crate::shared::files::open_regular`] — a FIFO or a device there is refused, never
//! waited on — into a private temp directory, and the copy is opened read-only. A Kiro still
//! running can not lock the reader out, and the user's file is never written.

use std::path::Path;

use rusqlite::{Connection, OpenFlags};
use serde_json::Value;

use super::super::json::EventParser;
use super::super::{Transcript, TranscriptError, Warning};
use super::conversation::ConversationParser;

/// The 16 bytes every SQLite 3 database starts with.
pub const MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// Why a database could not be read.
#[derive(Debug, thiserror::Error)]
pub enum DatabaseError {
    /// The file (or its journal) could not be copied: missing, unreadable, not a regular
    /// file.
    #[error("can not read {what}: {source}")]
    File {
        /// Which file (`the database`, `its -wal journal`).
        what: &'static str,
        /// Why.
        #[source]
        source: crate::shared::files::FileError,
    },
    /// The private copy could not be made.
    #[error("can not copy the database: {0}")]
    Copy(#[source] std::io::Error),
    /// SQLite refused the file or the query.
    #[error("sqlite: {0}")]
    Sqlite(#[source] rusqlite::Error),
    /// No table of Kiro conversations.
    #[error("it has no `conversations_v2` (or `conversations`) table: not a Kiro CLI database")]
    NotKiro,
}

/// One conversation row, without its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The working directory the conversation ran in.
    pub key: String,
    /// The conversation id (empty in the old table, whose values hold it).
    pub conversation_id: String,
    /// When it was last written, ms since the epoch (0 in the old table).
    pub updated_at: i64,
}

/// A private, read-only copy of a Kiro database.
pub struct Database {
    conn: Connection,
    /// `conversations_v2`, or the old `conversations`.
    v2: bool,
    _dir: tempfile::TempDir,
}

/// Whether `path` is a SQLite database (by its first 16 bytes).
pub fn is_database(path: &Path) -> bool {
    crate::shared::files::read_prefix(path, MAGIC.len() as u64).is_ok_and(|b| b == MAGIC)
}

fn copy(from: &Path, to: &Path, what: &'static str) -> Result<(), DatabaseError> {
    let (mut input, _) = crate::shared::files::open_regular(from)
        .map_err(|source| DatabaseError::File { what, source })?;
    let mut output = std::fs::File::create(to).map_err(DatabaseError::Copy)?;
    std::io::copy(&mut input, &mut output).map_err(DatabaseError::Copy)?;
    Ok(())
}

impl Database {
    /// Copies the database at `path` (with its `-wal` journal, when there is one) and opens
    /// the copy read-only.
    ///
    /// # Errors
    /// [`DatabaseError`]: the file can not be read or copied, SQLite refuses it, or it has
    /// no Kiro table.
    pub fn open(path: &Path) -> Result<Self, DatabaseError> {
        let dir = tempfile::Builder::new()
            .prefix("aptitude-kiro-db-")
            .tempdir()
            .map_err(DatabaseError::Copy)?;
        let db = dir.path().join("data.sqlite3");
        copy(path, &db, "the database")?;
        let mut wal = path.as_os_str().to_owned();
        wal.push("-wal");
        let wal = std::path::PathBuf::from(wal);
        if std::fs::symlink_metadata(&wal).is_ok() {
            copy(
                &wal,
                &dir.path().join("data.sqlite3-wal"),
                "its -wal journal",
            )?;
        }
        let conn = Connection::open_with_flags(
            &db,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(DatabaseError::Sqlite)?;
        let tables: Vec<String> = conn
            .prepare(
                "SELECT name FROM sqlite_master WHERE type = 'table' \
                 AND name IN ('conversations_v2', 'conversations')",
            )
            .and_then(|mut s| {
                s.query_map([], |r| r.get::<_, String>(0))?
                    .collect::<Result<_, _>>()
            })
            .map_err(DatabaseError::Sqlite)?;
        let v2 = tables.iter().any(|t| t == "conversations_v2");
        if !v2 && tables.is_empty() {
            return Err(DatabaseError::NotKiro);
        }
        Ok(Database {
            conn,
            v2,
            _dir: dir,
        })
    }

    /// Every conversation, the most recently written first.
    ///
    /// # Errors
    /// [`DatabaseError::Sqlite`] when the query fails.
    pub fn conversations(&self) -> Result<Vec<Row>, DatabaseError> {
        let sql = if self.v2 {
            "SELECT key, conversation_id, updated_at FROM conversations_v2 \
             ORDER BY updated_at DESC, rowid DESC"
        } else {
            "SELECT key, '', 0 FROM conversations ORDER BY rowid DESC"
        };
        let mut stmt = self.conn.prepare(sql).map_err(DatabaseError::Sqlite)?;
        let rows = stmt
            .query_map([], |r| {
                Ok(Row {
                    key: text(r.get_ref(0)?),
                    conversation_id: text(r.get_ref(1)?),
                    updated_at: r.get::<_, Option<i64>>(2)?.unwrap_or(0),
                })
            })
            .map_err(DatabaseError::Sqlite)?;
        rows.collect::<Result<_, _>>()
            .map_err(DatabaseError::Sqlite)
    }

    /// The `ConversationState` JSON of one conversation, and whether invalid UTF-8 in it was
    /// replaced.
    ///
    /// # Errors
    /// [`DatabaseError::Sqlite`] when the query fails or the row is gone.
    pub fn value(&self, row: &Row) -> Result<(String, bool), DatabaseError> {
        let (sql, id) = if self.v2 {
            (
                "SELECT value FROM conversations_v2 WHERE key = ?1 AND conversation_id = ?2",
                Some(row.conversation_id.as_str()),
            )
        } else {
            ("SELECT value FROM conversations WHERE key = ?1", None)
        };
        let mut stmt = self.conn.prepare(sql).map_err(DatabaseError::Sqlite)?;
        let bytes: Vec<u8> = match id {
            Some(id) => stmt.query_row([row.key.as_str(), id], |r| {
                Ok(r.get_ref(0)?.as_bytes().unwrap_or_default().to_vec())
            }),
            None => stmt.query_row([row.key.as_str()], |r| {
                Ok(r.get_ref(0)?.as_bytes().unwrap_or_default().to_vec())
            }),
        }
        .map_err(DatabaseError::Sqlite)?;
        let value = String::from_utf8_lossy(&bytes);
        let lossy = matches!(value, std::borrow::Cow::Owned(_));
        Ok((value.into_owned(), lossy))
    }
}

/// A text or blob column as text (invalid UTF-8 replaced).
fn text(v: rusqlite::types::ValueRef<'_>) -> String {
    match v {
        rusqlite::types::ValueRef::Text(b) | rusqlite::types::ValueRef::Blob(b) => {
            String::from_utf8_lossy(b).into_owned()
        }
        rusqlite::types::ValueRef::Integer(i) => i.to_string(),
        rusqlite::types::ValueRef::Real(f) => f.to_string(),
        rusqlite::types::ValueRef::Null => String::new(),
    }
}

/// The transcript of one conversation of `db`.
///
/// # Errors
/// As [`Database::value`].
pub fn transcript(db: &Database, row: &Row) -> Result<Transcript, DatabaseError> {
    let (value, lossy) = db.value(row)?;
    Ok(conversation_transcript(row, &value, lossy))
}

/// The transcript of `row` whose value ([`Database::value`]) is `value`.
pub fn conversation_transcript(row: &Row, value: &str, lossy: bool) -> Transcript {
    let mut parser = ConversationParser::new();
    match serde_json::from_str::<Value>(value) {
        Ok(doc) => parser.conversation(0, &doc),
        Err(e) => parser.builder().warn_lost(
            0,
            format!(
                "conversation `{}` of {}: its value is not JSON: {e}",
                row.conversation_id, row.key
            ),
        ),
    }
    if lossy {
        parser
            .builder()
            .warn(0, "invalid UTF-8 replaced with U+FFFD");
    }
    parser.finish()
}

/// `aptitude transcript data.sqlite3`: the most recently written conversation, with a
/// warning naming how many others the database holds (they are not read).
///
/// # Errors
/// [`TranscriptError`] when the database can not be read or holds no conversation.
pub fn parse_database(path: &Path) -> Result<Transcript, TranscriptError> {
    let unknown = |reason: String| TranscriptError::UnknownFormat {
        path: path.to_owned(),
        reason,
    };
    let db = Database::open(path).map_err(|e| unknown(e.to_string()))?;
    let rows = db.conversations().map_err(|e| unknown(e.to_string()))?;
    let Some(newest) = rows.first() else {
        return Err(unknown(
            "a Kiro CLI database without conversations".to_owned(),
        ));
    };
    let mut t = transcript(&db, newest).map_err(|e| unknown(e.to_string()))?;
    if rows.len() > 1 {
        t.warnings.insert(
            0,
            Warning {
                line: 0,
                message: format!(
                    "the database holds {} Kiro conversations; this is the most recent \
                     (`{}`, in {}); the others are not read",
                    rows.len(),
                    newest.conversation_id,
                    newest.key
                ),
            },
        );
        t.warnings_total = t.warning_count().max(t.warnings.len() as u64);
        t.warnings.truncate(super::super::MAX_WARNINGS_KEPT);
    }
    Ok(t)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Writes a database in Kiro's schema with `rows` (key, conversation_id, value,
    /// updated_at); the last writes stay in its `-wal` journal while `keep` holds the
    /// connection.
    pub(crate) fn write(path: &Path, rows: &[(&str, &str, &str, i64)]) -> Connection {
        let conn = Connection::open(path).unwrap();
        conn.execute_batch(
            "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;
             CREATE TABLE conversations_v2 (key TEXT NOT NULL, conversation_id TEXT NOT NULL,
               value TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
               PRIMARY KEY (key, conversation_id));",
        )
        .unwrap();
        for (key, id, value, updated) in rows {
            conn.execute(
                "INSERT INTO conversations_v2 VALUES (?1, ?2, ?3, ?4, ?4)",
                rusqlite::params![key, id, value, updated],
            )
            .unwrap();
        }
        conn
    }

    #[test]
    fn the_newest_conversation_is_read_even_from_the_journal_of_a_running_kiro() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data.sqlite3");
        let value = |id: &str, cmd: &str| {
            serde_json::json!({"conversation_id": id, "history": [
                {"user": {"content": {"Prompt": {"prompt": "go"}}},
                 "assistant": {"ToolUse": {"message_id": "m", "tool_uses": [
                     {"id": format!("t-{id}"), "name": "execute_bash", "args": {"command": cmd}}]}}}]})
            .to_string()
        };
        let (old, new) = (value("old", "ls"), value("new", "rm -rf build"));
        // The connection stays open: the rows are only in `data.sqlite3-wal`.
        let _kiro = write(
            &path,
            &[("/w", "old", &old, 1000), ("/w", "new", &new, 2000)],
        );
        let t = parse_database(&path).unwrap();
        assert_eq!(t.session_id.as_deref(), Some("new"));
        assert_eq!(t.tool_calls[0].command().as_deref(), Some("rm -rf build"));
        assert!(
            t.warnings[0].message.contains("holds 2 Kiro conversations"),
            "{:?}",
            t.warnings
        );
        // Nothing was written beside the original.
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            ["data.sqlite3", "data.sqlite3-shm", "data.sqlite3-wal"]
        );
    }

    #[test]
    fn a_fifo_or_a_file_that_is_not_kiros_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("data.sqlite3");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert!(!is_database(&fifo));
        assert!(matches!(
            Database::open(&fifo),
            Err(DatabaseError::File { .. })
        ));
        let other = dir.path().join("other.sqlite3");
        Connection::open(&other)
            .unwrap()
            .execute_batch("CREATE TABLE t (x INTEGER);")
            .unwrap();
        assert!(is_database(&other));
        assert!(matches!(
            Database::open(&other),
            Err(DatabaseError::NotKiro)
        ));
    }
}
