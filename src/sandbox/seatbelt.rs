//! macOS: Seatbelt through `/usr/bin/sandbox-exec`, as Codex and Claude Code do.
//!
//! The profile is a fixed text that starts from `(deny default)`; paths never enter it:
//! they are passed as `-D` parameters (`READ_0`, `WRITE_0`, …) and named in the profile
//! by `(param "…")`, so a path with a quote in it can not change the rules. Reads are
//! allowed below the system roots, the agent's installation and the writable roots;
//! writes only below the writable roots (the workspace copy, the private home, the
//! private temp dir); network only to the loopback ports of the forwards (macOS has no
//! network namespace: the gateway listens on the host's loopback).
//!
//! Not exercised on a Mac here: the profile text and the arguments are unit-tested.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::Policy;

/// The program, always by its full path (a `sandbox-exec` earlier on `PATH` is not used).
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// The fixed part of the profile (after Codex's `seatbelt_base_policy.sbpl`).
const BASE: &str = r#"(version 1)
(deny default)
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
(allow user-preference-read)
(allow mach-host*)
(allow ipc-posix-sem)
(allow pseudo-tty)
(allow file-read* file-write* file-ioctl (literal "/dev/ptmx"))
(allow file-read* file-write-data (literal "/dev/null") (literal "/dev/zero") (literal "/dev/random") (literal "/dev/urandom"))
(allow sysctl-read)
(allow mach-lookup (global-name "com.apple.system.opendirectoryd.libinfo") (global-name "com.apple.trustd.agent") (global-name "com.apple.SecurityServer"))
(allow file-read-metadata)
"#;

/// System roots readable by every fenced command.
const SYSTEM_READ: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/System",
    "/Library/Apple",
    "/opt/homebrew",
    "/private/etc",
    "/private/var/db/timezone",
];

/// The profile for `policy`: the fixed rules, one read rule per readable root and one
/// write rule per writable root (by parameter), and the network rule of its forwards.
pub fn profile(policy: &Policy) -> String {
    let reads = readable(policy).len();
    let writes = policy.writable.len() + 1;
    let mut p = String::from(BASE);
    for i in 0..reads {
        p.push_str(&format!(
            "(allow file-read* (subpath (param \"READ_{i}\")))\n"
        ));
    }
    for i in 0..writes {
        p.push_str(&format!(
            "(allow file-read* file-write* (subpath (param \"WRITE_{i}\")))\n"
        ));
    }
    for f in &policy.forwards {
        // Ports are numbers: nothing of a user's text enters the profile.
        p.push_str(&format!(
            "(allow network-outbound (remote ip \"localhost:{}\"))\n",
            f.target.port()
        ));
    }
    p
}

fn readable(policy: &Policy) -> Vec<PathBuf> {
    SYSTEM_READ
        .iter()
        .map(PathBuf::from)
        .chain(policy.read_only.iter().cloned())
        .chain(policy.mounts.iter().map(|(source, _)| source.clone()))
        .collect()
}

/// `sandbox-exec` and its arguments up to the command: the profile and its parameters.
/// `tmp` is the run's private temp dir (writable).
pub fn arguments(policy: &Policy, tmp: &Path) -> Vec<OsString> {
    let mut a: Vec<OsString> = vec!["-p".into(), profile(policy).into()];
    for (i, dir) in readable(policy).iter().enumerate() {
        let mut v = OsString::from(format!("-DREAD_{i}="));
        v.push(canonical(dir));
        a.push(v);
    }
    let writable = policy.writable.iter().map(PathBuf::as_path).chain([tmp]);
    for (i, dir) in writable.enumerate() {
        let mut v = OsString::from(format!("-DWRITE_{i}="));
        v.push(canonical(dir));
        a.push(v);
    }
    a.push("--".into());
    a
}

/// `/var/…` is `/private/var/…` to Seatbelt: paths are canonicalized when they exist.
fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::Forward;

    #[test]
    fn paths_are_parameters_and_the_profile_denies_by_default() {
        let policy = Policy {
            cwd: PathBuf::from("/w/ws"),
            writable: vec![
                PathBuf::from("/w/ws\") (allow default"),
                PathBuf::from("/w/home"),
            ],
            read_only: vec![PathBuf::from("/w/node_modules")],
            forwards: vec![Forward {
                port: 4000,
                target: "127.0.0.1:4000".parse().unwrap(),
            }],
            ..Policy::default()
        };
        let text = profile(&policy);
        assert!(text.starts_with("(version 1)\n(deny default)"));
        assert!(!text.contains("/w/"), "no path in the profile: {text}");
        assert!(text.contains("(subpath (param \"WRITE_0\"))"));
        assert!(
            text.contains("(subpath (param \"WRITE_2\"))"),
            "the temp dir too"
        );
        assert!(text.contains("(remote ip \"localhost:4000\")"));
        assert!(
            !text.contains("network-outbound)"),
            "no blanket network rule"
        );
        let args: Vec<String> = arguments(&policy, Path::new("/w/tmp"))
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(args[0], "-p");
        assert!(
            args.contains(&"-DWRITE_0=/w/ws\") (allow default".to_owned()),
            "a hostile path stays a parameter"
        );
        assert!(args.contains(&"-DWRITE_2=/w/tmp".to_owned()));
        assert!(
            args.iter()
                .any(|a| a.starts_with("-DREAD_") && a.ends_with("/w/node_modules"))
        );
        assert_eq!(args.last().unwrap(), "--");
    }
}
