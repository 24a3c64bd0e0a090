//! The grade cache: an unchanged review of an unchanged answer is graded once.
//!
//! Location: `$APTITUDE_CACHE_DIR/judge`, else `$XDG_CACHE_HOME/aptitude/judge`, else
//! `~/.cache/aptitude/judge`. One JSON file per grade, named by the SHA-256 of
//! (cache version, grading agent, model, canonical prompt). The prompt holds the criteria,
//! the task and the answer, so different answers never share a grade. Only grades are
//! stored: a failed grading (an error) is never cached. A file that can not be read is a
//! miss, never an error.
//!
//! Entries are sealed: each records what produced it (the key of its request and
//! aptitude's version) and an HMAC-SHA256 of both and the entry under a secret kept in
//! the cache directory (`.secret`, mode 0600, made on first use). An entry planted by
//! anything that does not hold the secret — an agent that computed a key from the public
//! prompt template and wrote a 10/10 grade — fails its check and is a miss. (Sandboxed
//! agents can not reach the cache directory at all; the seal also covers `--sandbox off`.)

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

/// One cache file: the entry (JSON), what produced it, and its seal.
#[derive(Debug, Serialize, Deserialize)]
struct Sealed {
    /// The key it is stored under (the SHA-256 of its grading request).
    key: String,
    /// The aptitude version that stored it.
    aptitude: String,
    /// The entry, as JSON text (sealed byte for byte).
    entry: String,
    /// HMAC-SHA256 (hex) of the cache version, key, version and entry.
    seal: String,
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
        crate::shared::files::cache_root().map(|d| d.join("judge"))
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
        crate::shared::hex(&h.finalize())
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.json"))
    }

    /// The stored grade for `key`, if any.
    pub fn get(&self, key: &str) -> Option<CachedGrade> {
        self.get_as(key)
    }

    /// The cache's secret, made (32 random bytes, hex, mode 0600) when `create`.
    fn secret(&self, create: bool) -> Option<Vec<u8>> {
        let path = self.dir.join(".secret");
        if let Ok(text) = crate::shared::files::read_capped(&path, 1024) {
            let hex = String::from_utf8_lossy(&text).trim().to_owned();
            return (hex.len() >= 64).then(|| hex.into_bytes());
        }
        if !create {
            return None;
        }
        let mut random = [0u8; 32];
        use std::io::Read;
        std::fs::File::open("/dev/urandom")
            .and_then(|mut f| f.read_exact(&mut random))
            .ok()?;
        let hex = crate::shared::hex(&random);
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let made = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .and_then(|mut f| f.write_all(hex.as_bytes()));
        match made {
            Ok(()) => Some(hex.into_bytes()),
            // Another process made it first: take its secret.
            Err(_) => self.secret(false),
        }
    }

    /// The seal of `entry` (JSON) stored under `key`.
    fn seal(secret: &[u8], key: &str, aptitude: &str, entry: &str) -> String {
        use hmac::Mac;
        let Ok(mut mac) = hmac::Hmac::<Sha256>::new_from_slice(secret) else {
            return String::new();
        };
        for part in [CACHE_VERSION, key, aptitude, entry] {
            mac.update(part.as_bytes());
            mac.update(&[0u8]);
        }
        crate::shared::hex(&mac.finalize().into_bytes())
    }

    /// Stores a grade (atomically: a temp file renamed into place). Failures are ignored:
    /// a cache that can not be written only costs a call next time.
    pub fn put(&self, key: &str, grade: &CachedGrade) {
        self.put_as(key, grade);
    }

    /// The stored entry for `key` read as a `T` (a grade, extracted claims), if any; an
    /// entry of another shape is a miss.
    pub fn get_as<T: serde::de::DeserializeOwned>(&self, key: &str) -> Option<T> {
        let text = crate::shared::files::read_capped(&self.path(key), 1 << 20).ok()?;
        let sealed: Sealed = serde_json::from_slice(&text).ok()?;
        let secret = self.secret(false)?;
        let expected = Self::seal(&secret, key, &sealed.aptitude, &sealed.entry);
        if sealed.key != key || expected.is_empty() || sealed.seal != expected {
            tracing::debug!(key, "judge cache: an entry without a valid seal is a miss");
            return None;
        }
        serde_json::from_str(&sealed.entry).ok()
    }

    /// Stores any entry, like [`Cache::put`].
    pub fn put_as<T: Serialize>(&self, key: &str, grade: &T) {
        if std::fs::create_dir_all(&self.dir).is_err() {
            return;
        }
        let (Ok(entry), Some(secret)) = (serde_json::to_string(grade), self.secret(true)) else {
            return;
        };
        let aptitude = env!("CARGO_PKG_VERSION").to_owned();
        let sealed = Sealed {
            key: key.to_owned(),
            seal: Self::seal(&secret, key, &aptitude, &entry),
            aptitude,
            entry,
        };
        let Ok(text) = serde_json::to_string_pretty(&sealed) else {
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

    #[test]
    fn a_planted_grade_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path().join("judge"));
        let key = Cache::key("claude", None, "grade this answer");
        let honest = CachedGrade {
            score: 3,
            reasoning: "wrong".into(),
            agent: "claude".into(),
            model: None,
        };
        cache.put(&key, &honest);
        assert_eq!(cache.get(&key), Some(honest.clone()));
        // The attack of #24: the key computed from the public prompt template, a 10/10
        // grade written in the old plain form, then in the sealed form with a made-up seal.
        let planted = CachedGrade {
            score: 10,
            ..honest.clone()
        };
        std::fs::write(cache.path(&key), serde_json::to_string(&planted).unwrap()).unwrap();
        assert_eq!(cache.get(&key), None, "an unsealed entry");
        let forged = Sealed {
            key: key.clone(),
            aptitude: env!("CARGO_PKG_VERSION").into(),
            entry: serde_json::to_string(&planted).unwrap(),
            seal: "0".repeat(64),
        };
        std::fs::write(cache.path(&key), serde_json::to_string(&forged).unwrap()).unwrap();
        assert_eq!(cache.get(&key), None, "a wrong seal");
        // A sealed entry moved under another key is a miss too.
        cache.put(&key, &honest);
        let other = Cache::key("claude", None, "another answer");
        std::fs::copy(cache.path(&key), cache.path(&other)).unwrap();
        assert_eq!(
            cache.get(&other),
            None,
            "an entry under a key that did not make it"
        );
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(cache.dir().join(".secret"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
