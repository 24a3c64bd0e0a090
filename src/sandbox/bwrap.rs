//! bubblewrap (`bwrap`, Debian's `bubblewrap` package, 0.8+): the argument list of one
//! fenced command, the synthetic `/etc` files it sees, and the preflight that tells, once
//! per aptitude process, whether the sandbox can be made here — and if not, why and how to
//! fix it.
//!
//! The namespaces are always explicit: `--unshare-user` (as root, bubblewrap without it
//! leaves the sandbox every capability of the host's user namespace), `--disable-userns`,
//! `--cap-drop ALL`, and new PID, network, IPC, UTS and cgroup namespaces;
//! `--die-with-parent` and `--new-session`. The root is an empty tmpfs made read-only last
//! (`--remount-ro /`), holding only what [`arguments`] mounts.

use std::ffi::OsString;
use std::path::Path;

use super::{INIT_PATH, Policy, SOCKET_DIR, SandboxError};

/// The namespace and privilege flags of every sandbox.
const NAMESPACES: &[&str] = &[
    "--unshare-user",
    "--disable-userns",
    "--cap-drop",
    "ALL",
    "--unshare-pid",
    "--unshare-net",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--die-with-parent",
    "--new-session",
    "--hostname",
    "aptitude-sandbox",
];

/// System directories mounted read-only when they exist.
const SYSTEM_DIRS: &[&str] = &["/usr", "/opt", "/nix/store"];

/// Top-level directories that merged-`/usr` systems make links into `/usr`: recreated as
/// the same links, or mounted read-only where they are real directories.
const TOP_LINKS: &[&str] = &["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

/// Files and directories of the host's `/etc` a program may need (dynamic linker, CA
/// certificates, time zone, name service switch, alternatives, …), mounted read-only
/// when they exist. Nothing that holds a secret (`shadow`, `gshadow`, `sudoers`, ssh keys).
const ETC: &[&str] = &[
    "alternatives",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "ca-certificates",
    "ca-certificates.conf",
    "ssl/certs",
    "ssl/openssl.cnf",
    "pki/tls/certs",
    "localtime",
    "timezone",
    "nsswitch.conf",
    "host.conf",
    "gai.conf",
    "os-release",
    "mime.types",
    "protocols",
    "services",
    "inputrc",
    "terminfo",
    "magic",
    "magic.mime",
];

/// Files of `/etc` aptitude writes for each run instead of showing the host's
/// ([`write_etc`]).
const SYNTHETIC_ETC: &[&str] = &["passwd", "group", "hosts", "resolv.conf"];

/// Where one fenced command's pieces are.
#[derive(Debug, Clone, Copy)]
pub struct Layout<'a> {
    /// The run's private directory: `tmp/` (the sandbox's `/tmp`), `etc/` (synthetic
    /// files), `sock/` (forwarding sockets).
    pub run_dir: &'a Path,
    /// aptitude's binary, mounted read-only at [`INIT_PATH`].
    pub helper: &'a Path,
    /// What the command may see.
    pub policy: &'a Policy,
}

/// bubblewrap's arguments up to (not including) the command: namespaces, mounts, working
/// directory and environment.
pub fn arguments(layout: &Layout<'_>) -> Vec<OsString> {
    let mut a: Vec<OsString> = NAMESPACES.iter().map(OsString::from).collect();
    let mut push = |items: &[&dyn AsRef<std::ffi::OsStr>]| {
        a.extend(items.iter().map(|i| i.as_ref().to_owned()));
    };
    for dir in SYSTEM_DIRS.iter().map(Path::new).filter(|d| d.is_dir()) {
        push(&[&"--ro-bind", &dir, &dir]);
    }
    for top in TOP_LINKS.iter().map(Path::new) {
        match std::fs::read_link(top) {
            Ok(target) => push(&[&"--symlink", &target, &top]),
            Err(_) if top.is_dir() => push(&[&"--ro-bind", &top, &top]),
            Err(_) => {}
        }
    }
    for item in ETC {
        let path = Path::new("/etc").join(item);
        if path.exists() {
            push(&[&"--ro-bind", &path, &path]);
        }
    }
    for name in SYNTHETIC_ETC {
        let source = layout.run_dir.join("etc").join(name);
        let target = Path::new("/etc").join(name);
        push(&[&"--ro-bind", &source, &target]);
    }
    push(&[&"--bind", &layout.run_dir.join("tmp"), &"/tmp"]);
    for dir in &layout.policy.writable {
        push(&[&"--bind", dir, dir]);
    }
    // After the writable mounts, so that a read-only path inside one (a plugin copy beside
    // the workspace copy) stays read-only.
    for dir in &layout.policy.read_only {
        push(&[&"--ro-bind", dir, dir]);
    }
    for (source, target) in &layout.policy.mounts {
        push(&[&"--ro-bind", source, target]);
    }
    push(&[&"--ro-bind", &layout.run_dir.join("sock"), &SOCKET_DIR]);
    push(&[&"--ro-bind", &layout.helper, &INIT_PATH]);
    // The tool fence: each shell is aptitude's binary, which nests a Landlock domain
    // before running the real one (after `/usr`, which these mount over).
    for (source, target) in super::toolfence::binds(layout.helper) {
        push(&[&"--ro-bind", &source, &target]);
    }
    push(&[&"--proc", &"/proc", &"--dev", &"/dev"]);
    // Last: a mount after it could not create its mount point.
    push(&[&"--remount-ro", &"/"]);
    push(&[&"--chdir", &layout.policy.cwd]);
    push(&[&"--clearenv"]);
    for (key, value) in &layout.policy.env {
        push(&[&"--setenv", key, value]);
    }
    a
}

/// Writes the run's synthetic `passwd`, `group`, `hosts` and `resolv.conf` into `dir`.
///
/// `resolv.conf` names a server that is not there with no timeout and no retry, so that a
/// name lookup fails at once instead of after seconds (Codex looks up several hosts on
/// start and would wait 5 s). `passwd` has the running user as `aptitude`, home `HOME` of
/// `env`, so that `whoami`, git and Node's `os.userInfo()` work.
///
/// # Errors
/// When a file can not be written.
pub fn write_etc(dir: &Path, env: &[(String, String)]) -> std::io::Result<()> {
    let uid = nix::unistd::getuid().as_raw();
    let gid = nix::unistd::getgid().as_raw();
    let home = env
        .iter()
        .rev()
        .find(|(k, _)| k == "HOME")
        .map_or("/tmp", |(_, v)| v.as_str());
    let mut passwd = String::new();
    if uid != 0 {
        passwd.push_str("root:x:0:0:root:/root:/bin/sh\n");
    }
    let shell = if Path::new("/bin/bash").exists() {
        "/bin/bash"
    } else {
        "/bin/sh"
    };
    passwd.push_str(&format!("aptitude:x:{uid}:{gid}:aptitude:{home}:{shell}\n"));
    passwd.push_str("nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n");
    let mut group = String::new();
    if gid != 0 {
        group.push_str("root:x:0:\n");
    }
    group.push_str(&format!("aptitude:x:{gid}:\nnogroup:x:65534:\n"));
    std::fs::write(dir.join("passwd"), passwd)?;
    std::fs::write(dir.join("group"), group)?;
    std::fs::write(
        dir.join("hosts"),
        "127.0.0.1 localhost aptitude-sandbox\n::1 localhost ip6-localhost\n",
    )?;
    std::fs::write(
        dir.join("resolv.conf"),
        "nameserver 127.0.0.1\noptions timeout:0 attempts:1\n",
    )
}

/// bubblewrap's version (`0.8.0`), or an empty string when it does not say.
pub fn version(bwrap: &Path) -> String {
    std::process::Command::new(bwrap)
        .arg("--version")
        .env_clear()
        .output()
        .ok()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .trim()
                .trim_start_matches("bubblewrap")
                .trim()
                .to_owned()
        })
        .unwrap_or_default()
}

/// Checks once that bubblewrap can make a sandbox with the namespaces every run uses,
/// running `/bin/true` in it (a few ms).
///
/// # Errors
/// [`SandboxError::Unavailable`] with the reason and the fix read from what bubblewrap
/// printed.
pub fn preflight(bwrap: &Path) -> Result<(), SandboxError> {
    let mut args: Vec<OsString> = NAMESPACES.iter().map(OsString::from).collect();
    for dir in SYSTEM_DIRS.iter().map(Path::new).filter(|d| d.is_dir()) {
        args.extend(["--ro-bind".into(), dir.into(), dir.into()]);
    }
    for top in TOP_LINKS.iter().map(Path::new) {
        match std::fs::read_link(top) {
            Ok(target) => args.extend(["--symlink".into(), target.into(), top.into()]),
            Err(_) if top.is_dir() => args.extend(["--ro-bind".into(), top.into(), top.into()]),
            Err(_) => {}
        }
    }
    args.extend(
        [
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--remount-ro",
            "/",
            "--",
            "true",
        ]
        .map(OsString::from),
    );
    let out = std::process::Command::new(bwrap)
        .args(&args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| SandboxError::Unavailable {
            reason: "bubblewrap could not be started".into(),
            fix: format!("check that {} runs", bwrap.display()),
            said: e.to_string(),
        })?;
    if out.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&out.stderr).trim().to_owned();
    let (reason, fix) = diagnose(&said);
    Err(SandboxError::Unavailable {
        reason: reason.to_owned(),
        fix: fix.to_owned(),
        said,
    })
}

/// The reason and the fix for what bubblewrap printed when it could not make the sandbox
/// (messages of bubblewrap 0.8–0.11 as built by Debian and Ubuntu).
pub fn diagnose(said: &str) -> (&'static str, &'static str) {
    const APPARMOR_FIX: &str = "on Ubuntu 24.04 and later (GitHub's ubuntu-24.04 runners), \
        allow user namespaces for bubblewrap: `sudo sysctl -w \
        kernel.apparmor_restrict_unprivileged_userns=0`, or load an AppArmor profile for \
        /usr/bin/bwrap with `userns` (docs/security.md)";
    if said.contains("loopback: Failed RTM_NEWADDR")
        || said.contains("setting up uid map: Permission denied")
    {
        (
            "AppArmor restricts unprivileged user namespaces",
            APPARMOR_FIX,
        )
    } else if said.contains("No permissions to create")
        || said.contains("No permissions to creating")
    {
        (
            "the kernel does not allow unprivileged user namespaces",
            "enable them: `sudo sysctl -w kernel.unprivileged_userns_clone=1`",
        )
    } else if said.contains("max_*_namespaces exceeded") || said.contains("ENOSPC") {
        (
            "user namespaces are limited to none",
            "raise the limit: `sudo sysctl -w user.max_user_namespaces=15000`",
        )
    } else if said.contains("does not support user namespaces") {
        (
            "the kernel has no user namespaces",
            "use a kernel with user namespaces (CONFIG_USER_NS)",
        )
    } else if said.contains("Operation not permitted") {
        (
            "namespaces are not permitted here (an unprivileged container?)",
            "run aptitude where user namespaces are allowed (a VM or a CI runner; in Docker, \
             `--security-opt seccomp=unconfined --security-opt apparmor=unconfined`)",
        )
    } else if said.contains("Can't mount proc") {
        (
            "/proc can not be mounted in the sandbox (a masked /proc?)",
            "run aptitude where /proc can be mounted in a new PID namespace",
        )
    } else {
        (
            "bubblewrap failed",
            "see what bwrap said; `--sandbox off` runs without the sandbox",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn strings(args: &[OsString]) -> Vec<String> {
        args.iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn every_namespace_is_explicit_and_the_root_is_read_only_last() {
        let run = tempfile::tempdir().unwrap();
        let policy = Policy {
            cwd: PathBuf::from("/w/ws"),
            writable: vec![PathBuf::from("/w/ws"), PathBuf::from("/w/home")],
            read_only: vec![PathBuf::from("/w/ws/../plugin")],
            env: vec![("HOME".into(), "/w/home".into())],
            ..Policy::default()
        };
        let args = strings(&arguments(&Layout {
            run_dir: run.path(),
            helper: Path::new("/x/aptitude"),
            policy: &policy,
        }));
        for flag in [
            "--unshare-user",
            "--disable-userns",
            "--unshare-pid",
            "--unshare-net",
            "--die-with-parent",
            "--new-session",
            "--clearenv",
        ] {
            assert!(args.contains(&flag.to_owned()), "{flag} in {args:?}");
        }
        assert!(args.windows(2).any(|w| w == ["--cap-drop", "ALL"]));
        let remount = args.iter().position(|a| a == "--remount-ro").unwrap();
        let last_mount = args
            .iter()
            .rposition(|a| {
                matches!(
                    a.as_str(),
                    "--bind" | "--ro-bind" | "--symlink" | "--proc" | "--dev"
                )
            })
            .unwrap();
        assert!(
            remount > last_mount,
            "--remount-ro / comes after every mount"
        );
        // The workspace and home are writable, at their own paths; the plugin read-only after.
        assert!(args.windows(3).any(|w| w == ["--bind", "/w/ws", "/w/ws"]));
        let ws = args
            .windows(3)
            .position(|w| w == ["--bind", "/w/ws", "/w/ws"])
            .unwrap();
        let plugin = args
            .windows(3)
            .position(|w| w[0] == "--ro-bind" && w[1] == "/w/ws/../plugin")
            .unwrap();
        assert!(plugin > ws);
        // Nothing of the host's home, /tmp or /etc/shadow.
        assert!(
            !args
                .iter()
                .any(|a| a == "/root" || a == "/home" || a == "/etc/shadow")
        );
        assert!(args.windows(3).any(|w| w[0] == "--bind"
            && w[2] == "/tmp"
            && w[1].starts_with(&run.path().display().to_string())));
        assert!(
            args.windows(3)
                .any(|w| w == ["--setenv", "HOME", "/w/home"])
        );
        assert!(
            args.windows(3)
                .any(|w| w[0] == "--ro-bind" && w[1] == "/x/aptitude" && w[2] == INIT_PATH)
        );
    }

    #[test]
    fn bubblewraps_refusals_name_a_reason_and_a_fix() {
        let (reason, fix) =
            diagnose("bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted");
        assert!(reason.contains("AppArmor"), "{reason}");
        assert!(
            fix.contains("apparmor_restrict_unprivileged_userns=0"),
            "{fix}"
        );
        let (reason, _) = diagnose("bwrap: setting up uid map: Permission denied");
        assert!(reason.contains("AppArmor"));
        let (reason, fix) = diagnose(
            "bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces.",
        );
        assert!(reason.contains("unprivileged user namespaces"), "{reason}");
        assert!(fix.contains("unprivileged_userns_clone=1"));
        let (_, fix) = diagnose(
            "bwrap: Creating new namespace failed: nesting depth or /proc/sys/user/max_*_namespaces exceeded (ENOSPC)",
        );
        assert!(fix.contains("max_user_namespaces"));
        let (reason, _) = diagnose("bwrap: Creating new namespace failed: Operation not permitted");
        assert!(reason.contains("not permitted"));
        let (reason, _) = diagnose("something else");
        assert_eq!(reason, "bubblewrap failed");
    }

    #[test]
    fn synthetic_etc_names_the_user_and_fails_lookups_at_once() {
        let dir = tempfile::tempdir().unwrap();
        write_etc(dir.path(), &[("HOME".into(), "/h/home".into())]).unwrap();
        let passwd = std::fs::read_to_string(dir.path().join("passwd")).unwrap();
        assert!(passwd.contains("aptitude:x:"), "{passwd}");
        assert!(passwd.contains(":/h/home:"), "{passwd}");
        let resolv = std::fs::read_to_string(dir.path().join("resolv.conf")).unwrap();
        assert!(resolv.contains("timeout:0 attempts:1"));
    }
}
