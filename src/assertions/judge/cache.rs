//! The grade cache: an unchanged review of an unchanged answer is graded once.
//!
//! Location: `$APTITUDE_CACHE_DIR/judge`, else `$XDG_CACHE_HOME/aptitude/judge`, else
//! `~/.cache/aptitude/judge`. One JSON file per grade, named by the SHA-256 of
//! (cache version, grading agent, model, canonical prompt). The prompt holds the criteria,
//! the task and the answer, so different answers never share a grade. Only grades are
//! stored: a failed grading (an error) is never cached. A file that can not be read is a
//! miss, never an error.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Bumped when the prompt or the parsing rules change, so old grades are not reused.
const CACHE_VERSION: &str = "aptitude-judge-v1";

/// A stored grade.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CachedGrade {
    /// 1–10.
    pub score: u8,
    /// The judge's explanation.
    pub reasoning: String,
    /// The grading agent.
    pub agent: String,
    /// The grading model, when one was named.
    pub model: Option<String>,
}

/// The on-disk cache.
#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
}

impl Cache {
    /// A cache in `dir`.
    pub fn new(dir: PathBuf) -> Self {
        Cache { dir }
    }

    /// The documented default location (see the module docs); `None` without `HOME`.
    pub fn default_dir() -> Option<PathBuf> {
        let env = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        env("APTITUDE_CACHE_DIR")
            .or_else(|| env("XDG_CACHE_HOME").map(|d| d.join("aptitude")))
            .or_else(|| env("HOME").map(|h| h.join(".cache/aptitude")))
            .map(|d| d.join("judge"))
    }

    /// The directory grades are stored in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The key of a grading request.
    pub fn key(agent: &str, model: Option<&str>, canonical_prompt: &str) -> String {
        let mut h = Sha256::new();
        for part in [CACHE_VERSION, agent, model.unwrap_or(""), canonical_prompt] {
            h.update(part.as_bytes());
            h.update([0u8]);
        }
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.json"))
    }

    /// The stored grade for `key`, if any.
    pub fn get(&self, key: &str) -> Option<CachedGrade> {
        self.get_as(key)
    }

    /// Stores a grade (atomically: a temp file renamed into place). Failures are ignored:
    /// a cache that can not be written only costs a call next time.
    pub fn put(&self, key: &str, grade: &CachedGrade) {
        self.put_as(key, grade);
    }

    /// The stored entry for `key` read as a `T` (a grade, extracted claims), if any; an
    /// entry of another shape is a miss.
    pub fn get_as<T: serde::de::DeserializeOwned>(&self, key: &str) -> Option<T> {
        let text = std::fs::read_to_string(self.path(key)).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Stores any entry, like [`Cache::put`].
    pub fn put_as<T: Serialize>(&self, key: &str, grade: &T) {
        if std::fs::create_dir_all(&self.dir).is_err() {
            return;
        }
        let Ok(text) = serde_json::to_string_pretty(grade) else {
            return;
        };
        let tmp = self.dir.join(format!(".{key}.{}.tmp", std::process::id()));
        if std::fs::write(&tmp, text).is_ok() && std::fs::rename(&tmp, self.path(key)).is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_keys() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path().join("judge"));
        let key = Cache::key("claude", Some("m"), "prompt");
        assert_eq!(key.len(), 64);
        assert_ne!(key, Cache::key("claude", None, "prompt"));
        assert_ne!(key, Cache::key("codex", Some("m"), "prompt"));
        assert_ne!(key, Cache::key("claude", Some("m"), "prompt2"));
        assert_eq!(cache.get(&key), None);
        let grade = CachedGrade {
            score: 8,
            reasoning: "ok".into(),
            agent: "claude".into(),
            model: Some("m".into()),
        };
        cache.put(&key, &grade);
        assert_eq!(cache.get(&key), Some(grade));
        std::fs::write(cache.path(&key), "garbage").unwrap();
        assert_eq!(cache.get(&key), None, "an unreadable entry is a miss");
    }
}
