//! Agent versions as a matrix axis (issue 42): installs of chosen releases into
//! aptitude's own cache, verified and cached.

use std::time::Instant;

use aptitude::agent::AgentKind;
use aptitude::agent::install::{Installer, Integrity, Signatures, VersionSpec};

/// An older release of pi than the pinned one: a small npm CLI with a real dependency tree.
const OLD_PI: &str = "0.72.1";

#[tokio::test(flavor = "multi_thread")]
async fn an_old_release_installs_from_npm_verified_then_a_second_install_is_a_lookup() {
    let cache = tempfile::tempdir().unwrap();
    let installer = Installer::at(cache.path());
    let resolved = installer
        .resolve(AgentKind::Pi, &VersionSpec::Exact(OLD_PI.to_owned()))
        .await
        .unwrap();
    assert_eq!(resolved, OLD_PI);

    let started = Instant::now();
    let cold = installer.install(AgentKind::Pi, &resolved).await.unwrap();
    let cold_time = started.elapsed();
    let started = Instant::now();
    let warm = installer.install(AgentKind::Pi, &resolved).await.unwrap();
    let warm_time = started.elapsed();
    eprintln!("pi {OLD_PI}: cold install {cold_time:?}, cached {warm_time:?}");

    assert!(!cold.cached);
    assert!(warm.cached, "the second install is a lookup");
    assert_eq!(cold.binary, warm.binary);
    assert_eq!(
        cold.binary,
        cache
            .path()
            .join("pi")
            .join(OLD_PI)
            .join("node_modules/.bin/pi")
    );
    let Integrity::Npm {
        package,
        integrity,
        signatures,
    } = &cold.integrity
    else {
        panic!("{:?}", cold.integrity)
    };
    assert_eq!(package, "@mariozechner/pi-coding-agent");
    // The registry's published sha512 of this tarball (npm view @mariozechner/pi-coding-agent@0.72.1 dist.integrity).
    assert_eq!(
        integrity,
        "sha512-gKApiLfAYpvPnWThvwXrLjZIhsziSSUKBph7DHCy/1IomuIGN1MTxS/9ZtcuFqPy3/+VfEUOKegGlY6m+CRNlA=="
    );
    match signatures {
        Signatures::Verified { packages, .. } => assert!(*packages > 0),
        Signatures::Unavailable { reason } => {
            eprintln!("registry signatures not checked: {reason}");
            assert!(!reason.is_empty(), "an unchecked signature says why");
        }
    }
    // The installed CLI is that release.
    let version = std::process::Command::new(&cold.binary)
        .arg("--version")
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&version.stdout).into_owned()
        + &String::from_utf8_lossy(&version.stderr);
    assert!(shown.contains(OLD_PI), "{shown}");
    // No staging directory is left behind.
    let left: Vec<_> = std::fs::read_dir(cache.path().join("pi"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".staging"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_release_the_registry_does_not_have_is_an_error_that_says_how_to_list_them() {
    let installer = Installer::at(tempfile::tempdir().unwrap().path());
    let e = installer
        .resolve(AgentKind::Pi, &VersionSpec::Exact("0.0.999".to_owned()))
        .await
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("npm view @mariozechner/pi-coding-agent versions"),
        "{e}"
    );
}
