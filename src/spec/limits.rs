//! `limits:` of a test or an `aptitude.yaml`: what one agent run may use — memory,
//! processes, disk — before it is stopped as `error`, kind `limit`.
//!
//! ```yaml
//! limits:
//!   memory: 4GiB      # every process of the run together (resident memory)
//!   processes: 512    # alive at once
//!   disk: 2GiB        # what the run may write: workspace growth, its home, its /tmp
//! ```
//!
//! Sizes are a number of bytes or a number with a unit (`B`, `KB`/`MB`/`GB` powers of 1000,
//! `KiB`/`MiB`/`GiB` powers of 1024; `K`, `M`, `G` as the binary ones). A field left out
//! takes its default ([`Limits::DEFAULT_MEMORY`], …); an `aptitude.yaml`'s fields fill a
//! test's, field by field. How they are enforced is `agent::limits`.

use serde::{Deserialize, Serialize};

/// `limits:` as written: each field optional.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// Resident memory of every process of the run together, in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<u64>,
    /// Processes alive at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processes: Option<u32>,
    /// Bytes the run may write (workspace growth, its private home and `/tmp`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk: Option<u64>,
}

/// The limits of one run, every field set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunLimits {
    /// Resident memory of every process of the run together, in bytes.
    pub memory: u64,
    /// Processes alive at once.
    pub processes: u32,
    /// Bytes the run may write.
    pub disk: u64,
}

const GIB: u64 = 1024 * 1024 * 1024;

impl Limits {
    /// 4 GiB: Claude Code, Codex and Gemini CLI use well under 1 GiB; a test that builds
    /// a large project may raise it.
    pub const DEFAULT_MEMORY: u64 = 4 * GIB;
    /// 512 processes.
    pub const DEFAULT_PROCESSES: u32 = 512;
    /// 2 GiB written.
    pub const DEFAULT_DISK: u64 = 2 * GIB;
    /// The keys of `limits:`.
    pub const KEYS: &'static [&'static str] = &["memory", "processes", "disk"];

    /// `self`, its unset fields taken from `other`.
    pub fn or(self, other: Limits) -> Limits {
        Limits {
            memory: self.memory.or(other.memory),
            processes: self.processes.or(other.processes),
            disk: self.disk.or(other.disk),
        }
    }

    /// Every field set: the defaults where none is given.
    pub fn resolved(self) -> RunLimits {
        RunLimits {
            memory: self.memory.unwrap_or(Self::DEFAULT_MEMORY),
            processes: self.processes.unwrap_or(Self::DEFAULT_PROCESSES),
            disk: self.disk.unwrap_or(Self::DEFAULT_DISK),
        }
    }

    /// Whether no field is set.
    pub fn is_empty(&self) -> bool {
        *self == Limits::default()
    }
}

impl RunLimits {
    /// `4 GiB memory, 512 processes, 2 GiB disk`.
    pub fn phrase(&self) -> String {
        format!(
            "{} memory, {} processes, {} disk",
            size(self.memory),
            self.processes,
            size(self.disk)
        )
    }
}

/// A size in bytes as people read it: `4 GiB`, `512 MiB`, `1.5 GiB`, `300 B`.
pub fn size(bytes: u64) -> String {
    const UNITS: [(&str, u64); 3] = [("GiB", GIB), ("MiB", 1024 * 1024), ("KiB", 1024)];
    for (unit, n) in UNITS {
        if bytes >= n {
            let v = bytes as f64 / n as f64;
            return if (v - v.round()).abs() < 0.005 {
                format!("{} {unit}", v.round() as u64)
            } else {
                format!("{v:.1} {unit}")
            };
        }
    }
    format!("{bytes} B")
}

/// Why a text is not a size ([`parse_size`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    /// No number at the start.
    #[error("`{0}` is not a size: it starts with no number")]
    NoNumber(String),
    /// A unit other than B, kB, MB, GB, KiB, MiB, GiB (K, M, G).
    #[error("`{0}` is not a unit of size")]
    Unit(String),
    /// Under one byte, or too large to be a limit.
    #[error("`{0}` is not a size aptitude can limit to")]
    OutOfRange(String),
}

/// Parses a size: `4GiB`, `512 MB`, `1.5G`, `1048576`, in bytes.
///
/// # Errors
/// [`SizeError`], for a diagnostic.
pub fn parse_size(text: &str) -> Result<u64, SizeError> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number
        .parse()
        .map_err(|_| SizeError::NoNumber(text.to_owned()))?;
    let factor: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" => 1000,
        "mb" => 1000 * 1000,
        "gb" => 1000 * 1000 * 1000,
        "k" | "kib" => 1024,
        "m" | "mib" => 1024 * 1024,
        "g" | "gib" => GIB,
        other => return Err(SizeError::Unit(other.to_owned())),
    };
    let bytes = number * factor as f64;
    if !bytes.is_finite() || bytes < 1.0 || bytes > u64::MAX as f64 / 2.0 {
        return Err(SizeError::OutOfRange(text.to_owned()));
    }
    Ok(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_in_decimal_and_binary_units() {
        assert_eq!(parse_size("4GiB"), Ok(4 * GIB));
        assert_eq!(parse_size("4 GB"), Ok(4_000_000_000));
        assert_eq!(parse_size("512M"), Ok(512 * 1024 * 1024));
        assert_eq!(parse_size("1.5g"), Ok(3 * GIB / 2));
        assert_eq!(parse_size("1048576"), Ok(1048576));
        for bad in ["", "GiB", "4 TiB", "-1", "0", "4 GiB extra"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
        assert_eq!(size(4 * GIB), "4 GiB");
        assert_eq!(size(3 * GIB / 2), "1.5 GiB");
        assert_eq!(size(300), "300 B");
    }

    #[test]
    fn a_suites_limits_fill_a_tests_field_by_field() {
        let test = Limits {
            memory: Some(GIB),
            ..Limits::default()
        };
        let suite = Limits {
            memory: Some(8 * GIB),
            processes: Some(64),
            disk: None,
        };
        let r = test.or(suite).resolved();
        assert_eq!(
            (r.memory, r.processes, r.disk),
            (GIB, 64, Limits::DEFAULT_DISK)
        );
        assert_eq!(r.phrase(), "1 GiB memory, 64 processes, 2 GiB disk");
    }
}
