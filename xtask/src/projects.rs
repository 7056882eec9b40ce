//! Real third-party projects that the tests and benchmarks run our tools on, installed by
//! `cargo xtask peers` from the package registries at pinned versions into
//! `.peers/projects/<name>/` (never copied into this repository).
//!
//! Every project is listed in [`PROJECTS`] (add one there, nowhere else). Each comes from one
//! registry, and its archive is checked against the digest that registry publishes:
//! - a PyPI sdist (the JSON API names the file and its sha256);
//! - an npm package (`npm pack`, which checks the registry's integrity hash);
//! - a crates.io crate (`static.crates.io`, checked against the sparse index's `cksum`); when
//!   `fetch` is set, `cargo fetch --locked` then puts its locked dependencies in the cargo cache
//!   so that `cargo check` and rust-analyzer work offline;
//! - a Debian package (`apt-get download` then `dpkg-deb -x`; apt checks the signature), of
//!   which one folder is kept (Go module sources under `/usr/share/gocode/src`).
//!
//! A stamp (`.peers/projects/<name>.stamp`) records what was installed; an unchanged pin with
//! its folder present skips the download, so `peers` stays quick. Tests find a project with
//! `cc_test_support::real_project(name)` and copy it to a temporary folder before use.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::util::{self, Result};

/// Where a project comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A PyPI distribution's sdist.
    PyPi(&'static str),
    /// An npm package's tarball.
    Npm(&'static str),
    /// A crates.io crate; `fetch`: also fetch its locked dependencies.
    Crate {
        /// The crate's name on crates.io.
        name: &'static str,
        /// Whether to also fetch its locked dependencies.
        fetch: bool,
    },
    /// A Debian binary package, of which the folder `keep` (absolute inside the package) is
    /// the project.
    Debian {
        /// The Debian package's name.
        package: &'static str,
        /// The folder of the package that is the project.
        keep: &'static str,
    },
}

/// One real project.
#[derive(Debug, Clone, Copy)]
pub struct Project {
    /// Its folder under `.peers/projects/`, and the name tests ask for.
    pub name: &'static str,
    /// Where it comes from.
    pub source: Source,
    /// The exact version (Debian: the full package version).
    pub version: &'static str,
    /// The main language, for the listing.
    pub language: &'static str,
}

const fn project(
    name: &'static str,
    language: &'static str,
    source: Source,
    version: &'static str,
) -> Project {
    Project {
        name,
        source,
        version,
        language,
    }
}

use Source::{Crate, Debian, Npm, PyPi};

/// Every real project. Versions are exact; bump them here (the stamp makes the next run
/// reinstall).
#[rustfmt::skip]
pub const PROJECTS: &[Project] = &[
    // src layout, tests beside it, a pyproject.toml.
    project("requests", "python", PyPi("requests"), "2.34.2"),
    // TypeScript sources with their tests (`src/v3`, `src/v4`); no tsconfig is shipped.
    project("zod", "typescript", Npm("zod"), "3.25.76"),
    // A crate with a build script, integration tests, doc tests and a Cargo.lock.
    project("semver", "rust", Crate { name: "semver", fetch: true }, "1.0.26"),
    // A Go module with no dependencies: the readAsCSV callers of the LSP issue.
    project("pflag", "go", Debian {
        package: "golang-github-spf13-pflag-dev",
        keep: "/usr/share/gocode/src/github.com/spf13/pflag",
    }, "1.0.6~git20210604-d5e0c0615ace-1"),
    // The code graph's Go accuracy project: cobra's module tree (its one non-test
    // dependency, pflag, is the project above; answer keys are built in GOPATH mode).
    project("cobra", "go", Debian {
        package: "golang-github-spf13-cobra-dev",
        keep: "/usr/share/gocode/src/github.com/spf13/cobra",
    }, "1.6.1-1"),
    // A C library of many sources around one header (third_party/cmark).
    project("cmarkgfm", "c", PyPi("cmarkgfm"), "2025.10.22"),
    // Kotlin and Java Android sources (android/src/main/java), TypeScript beside them.
    project("expo-modules-core", "kotlin", Npm("expo-modules-core"), "58.0.7"),
    // The C# runtime of Python.NET (src/runtime).
    project("pythonnet", "c_sharp", PyPi("pythonnet"), "3.2.1"),
    // Ruby sources of a Debian package (lib/rack).
    project("rack", "ruby", Debian {
        package: "ruby-rack",
        keep: "/usr/share/rubygems-integration/all/gems/rack-2.2.22",
    }, "2.2.22-0+deb12u2"),
    // A src layout with its tests beside it, installed nowhere (issue 31): the peers' venv
    // holds another click (8.5), which must never be taken for this one.
    project("click", "python", PyPi("click"), "8.1.8"),
    // TypeScript sources (src/) with their compiled bundles (dist/) beside them.
    project("rxjs", "typescript", Npm("rxjs"), "7.8.2"),
    // Tests gated `#![cfg(not(miri))]`, macro-generated impls; no Cargo.lock is published, so
    // one is generated when it is installed.
    project("itertools", "rust", Crate { name: "itertools", fetch: true }, "0.14.0"),
    // PHP: Symfony's console component as Debian installs it (no composer.json, no tests;
    // its other Symfony dependencies are not beside it).
    project("symfony-console", "php", Debian {
        package: "php-symfony-console",
        keep: "/usr/share/php/Symfony/Component/Console",
    }, "5.4.53+dfsg-0+deb12u1"),
    // PHP: Monolog (psr/log, which it implements, is not beside it).
    project("monolog", "php", Debian {
        package: "php-monolog",
        keep: "/usr/share/php/Monolog",
    }, "2.9.1-1"),
    // Dart: the cargokit build tool and app template the crate ships (assets/).
    project("flutter_rust_bridge_codegen", "dart", Crate {
        name: "flutter_rust_bridge_codegen",
        fetch: false,
    }, "2.11.1"),
];

fn stamp_text(project: &Project) -> String {
    format!("{:?} {}\n", project.source, project.version)
}

/// Installs every project that is missing or has changed into `dir` (`.peers/projects`,
/// [`crate::peers::Layout::projects_dir`]); prints one line each.
pub fn install(dir: &Path) -> Result<()> {
    install_projects(dir, PROJECTS)
}

fn install_projects(dir: &Path, projects: &[Project]) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut failures = Vec::new();
    for project in projects {
        let target = dir.join(project.name);
        let stamp = dir.join(format!("{}.stamp", project.name));
        let wanted = stamp_text(project);
        let current = target.is_dir() && std::fs::read_to_string(&stamp).is_ok_and(|s| s == wanted);
        if !current {
            eprintln!(
                "peers: fetching project {} {} ({})",
                project.name,
                project.version,
                describe_source(project.source)
            );
            let _ = std::fs::remove_file(&stamp);
            match fetch(dir, project, &target) {
                Ok(()) => {
                    std::fs::write(&stamp, &wanted)
                        .map_err(|e| format!("cannot write {}: {e}", stamp.display()))?;
                }
                Err(e) => {
                    failures.push(format!("{}: {e}", project.name));
                    continue;
                }
            }
        }
        println!(
            "{:<40} {:<44} {:<32} {}",
            format!("project {}", project.name),
            project.language,
            format!("{} {}", describe_source(project.source), project.version),
            target.display()
        );
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} project(s) could not be installed:\n  {}",
            failures.len(),
            failures.join("\n  ")
        ))
    }
}

fn describe_source(source: Source) -> &'static str {
    match source {
        Source::PyPi(_) => "pypi sdist",
        Source::Npm(_) => "npm",
        Source::Crate { .. } => "crates.io",
        Source::Debian { .. } => "debian",
    }
}

/// Downloads and unpacks `project` into `target`, through a scratch folder beside it so that
/// a failed install leaves no half-filled project.
fn fetch(dir: &Path, project: &Project, target: &Path) -> Result<()> {
    let scratch = dir.join(format!(".{}.partial", project.name));
    if scratch.exists() {
        std::fs::remove_dir_all(&scratch)
            .map_err(|e| format!("cannot remove {}: {e}", scratch.display()))?;
    }
    std::fs::create_dir_all(&scratch)
        .map_err(|e| format!("cannot create {}: {e}", scratch.display()))?;
    let unpacked = match project.source {
        Source::PyPi(dist) => fetch_pypi(&scratch, dist, project.version)?,
        Source::Npm(package) => fetch_npm(&scratch, package, project.version)?,
        Source::Crate { name, .. } => fetch_crate(&scratch, name, project.version)?,
        Source::Debian { package, keep } => fetch_debian(&scratch, package, project.version, keep)?,
    };
    if target.exists() {
        std::fs::remove_dir_all(target)
            .map_err(|e| format!("cannot remove {}: {e}", target.display()))?;
    }
    std::fs::rename(&unpacked, target)
        .map_err(|e| format!("cannot move {} into place: {e}", unpacked.display()))?;
    let _ = std::fs::remove_dir_all(&scratch);
    if let Source::Crate { fetch: true, .. } = project.source {
        // The locked dependencies, into the cargo cache, so that offline checks resolve.
        let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
        if !target.join("Cargo.lock").exists() {
            // A library crate publishes no lock file: resolve one now (then it is fixed for
            // this install).
            let mut generate =
                Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
            generate
                .current_dir(target)
                .args(["generate-lockfile", "--quiet"]);
            util::run_to_stderr(&mut generate)?;
        }
        cmd.current_dir(target)
            .args(["fetch", "--locked", "--quiet"]);
        util::run_to_stderr(&mut cmd)?;
    }
    Ok(())
}

fn download(url: &str, to: &Path) -> Result<()> {
    let mut cmd = Command::new("curl");
    cmd.args(["-fsSL", "--retry", "3", "--max-time", "300", "-o"])
        .arg(to)
        .arg(url);
    util::run_to_stderr(&mut cmd)
}

fn fetch_text(url: &str) -> Result<String> {
    let mut cmd = Command::new("curl");
    cmd.args(["-fsSL", "--retry", "3", "--max-time", "60", url]);
    let out = util::capture(&mut cmd, Duration::from_secs(90))
        .map_err(|e| format!("cannot run curl: {e}"))?;
    if !out.success() {
        return Err(format!("cannot fetch {url}: {}", out.stderr.trim()));
    }
    Ok(out.stdout)
}

fn sha256(path: &Path) -> Result<String> {
    let out = util::capture(Command::new("sha256sum").arg(path), Duration::from_secs(60))
        .map_err(|e| format!("cannot run sha256sum: {e}"))?;
    out.stdout
        .split_whitespace()
        .next()
        .map(str::to_owned)
        .filter(|_| out.success())
        .ok_or_else(|| format!("sha256sum failed on {}", path.display()))
}

fn verify(path: &Path, expected: &str) -> Result<()> {
    let actual = sha256(path)?;
    if actual.eq_ignore_ascii_case(expected) {
        Ok(())
    } else {
        Err(format!(
            "{} has sha256 {actual}, the registry says {expected}",
            path.display()
        ))
    }
}

/// Unpacks a `.tar.gz` into `into` and returns the single top-level folder it held.
fn untar_single(archive: &Path, into: &Path) -> Result<PathBuf> {
    let out = into.join("unpacked");
    std::fs::create_dir_all(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let mut cmd = Command::new("tar");
    cmd.arg("xzf")
        .arg(archive)
        .arg("-C")
        .arg(&out)
        .arg("--no-same-owner");
    util::run_to_stderr(&mut cmd)?;
    let entries: Vec<PathBuf> = std::fs::read_dir(&out)
        .map_err(|e| format!("cannot list {}: {e}", out.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    match entries.as_slice() {
        [single] if single.is_dir() => Ok(single.clone()),
        _ => Err(format!(
            "{} does not hold one top-level folder",
            archive.display()
        )),
    }
}

fn fetch_pypi(scratch: &Path, dist: &str, version: &str) -> Result<PathBuf> {
    // The index's JSON API (PEP 691), what pip reads: every file with its sha256.
    let mut cmd = Command::new("curl");
    cmd.args([
        "-fsSL",
        "--retry",
        "3",
        "--max-time",
        "60",
        "-H",
        "Accept: application/vnd.pypi.simple.v1+json",
        &format!("https://pypi.org/simple/{dist}/"),
    ]);
    let out = util::capture(&mut cmd, Duration::from_secs(90))
        .map_err(|e| format!("cannot run curl: {e}"))?;
    if !out.success() {
        return Err(format!("PyPI has no project {dist}: {}", out.stderr.trim()));
    }
    let index: serde_json::Value = serde_json::from_str(&out.stdout)
        .map_err(|e| format!("PyPI answered something else: {e}"))?;
    let normalize = |name: &str| name.to_ascii_lowercase().replace(['-', '.'], "_");
    let is_the_sdist = |filename: &str| {
        filename
            .strip_suffix(".tar.gz")
            .and_then(|stem| stem.rsplit_once('-'))
            .is_some_and(|(name, v)| normalize(name) == normalize(dist) && v == version)
    };
    let file = index["files"]
        .as_array()
        .and_then(|files| {
            files
                .iter()
                .find(|f| f["filename"].as_str().is_some_and(is_the_sdist))
        })
        .ok_or_else(|| format!("{dist} {version} has no sdist on PyPI"))?;
    let url = file["url"].as_str().ok_or("the sdist has no url")?;
    let digest = file["hashes"]["sha256"]
        .as_str()
        .ok_or("the sdist has no sha256")?;
    let archive = scratch.join("sdist.tar.gz");
    download(url, &archive)?;
    verify(&archive, digest)?;
    untar_single(&archive, scratch)
}

fn fetch_npm(scratch: &Path, package: &str, version: &str) -> Result<PathBuf> {
    let mut cmd = Command::new("npm");
    cmd.current_dir(scratch).args([
        "pack",
        &format!("{package}@{version}"),
        "--silent",
        "--no-update-notifier",
    ]);
    util::run_to_stderr(&mut cmd)?;
    let archive = std::fs::read_dir(scratch)
        .map_err(|e| format!("cannot list {}: {e}", scratch.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "tgz"))
        .ok_or("npm pack wrote no tarball")?;
    untar_single(&archive, scratch)
}

/// The sparse index path of a crate (`se/mv/semver`).
fn index_path(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    match lower.len() {
        1 => format!("1/{lower}"),
        2 => format!("2/{lower}"),
        3 => format!("3/{}/{lower}", &lower[..1]),
        _ => format!("{}/{}/{lower}", &lower[..2], &lower[2..4]),
    }
}

fn fetch_crate(scratch: &Path, name: &str, version: &str) -> Result<PathBuf> {
    let index = fetch_text(&format!("https://index.crates.io/{}", index_path(name)))?;
    let digest = index
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find(|entry| entry["vers"] == version)
        .and_then(|entry| entry["cksum"].as_str().map(str::to_owned))
        .ok_or_else(|| format!("{name} {version} is not in the crates.io index"))?;
    let archive = scratch.join("crate.tar.gz");
    download(
        &format!("https://static.crates.io/crates/{name}/{name}-{version}.crate"),
        &archive,
    )?;
    verify(&archive, &digest)?;
    untar_single(&archive, scratch)
}

pub(crate) fn fetch_debian(
    scratch: &Path,
    package: &str,
    version: &str,
    keep: &str,
) -> Result<PathBuf> {
    let download = || {
        let mut cmd = Command::new("apt-get");
        cmd.current_dir(scratch)
            .args(["download", "-q", &format!("{package}={version}")]);
        util::run_to_stderr(&mut cmd)
    };
    if download().is_err() {
        // A fresh machine may have no package lists yet.
        let mut update = if util::is_root() {
            Command::new("apt-get")
        } else {
            let mut sudo = Command::new("sudo");
            sudo.arg("apt-get");
            sudo
        };
        update.arg("update");
        if let Err(e) = util::run_to_stderr(&mut update) {
            eprintln!("warning: {e}; trying the download anyway");
        }
        download()?;
    }
    let deb = std::fs::read_dir(scratch)
        .map_err(|e| format!("cannot list {}: {e}", scratch.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "deb"))
        .ok_or("apt-get download wrote no .deb")?;
    let tree = scratch.join("tree");
    let mut cmd = Command::new("dpkg-deb");
    cmd.arg("-x").arg(&deb).arg(&tree);
    util::run_to_stderr(&mut cmd)?;
    let kept = tree.join(keep.trim_start_matches('/'));
    if kept.is_dir() {
        Ok(kept)
    } else {
        Err(format!("{package} {version} has no folder {keep}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_paths_follow_the_sparse_layout() {
        assert_eq!(index_path("a"), "1/a");
        assert_eq!(index_path("ab"), "2/ab");
        assert_eq!(index_path("abc"), "3/a/abc");
        assert_eq!(index_path("semver"), "se/mv/semver");
        assert_eq!(index_path("Serde"), "se/rd/serde");
    }

    #[test]
    fn table_is_consistent() {
        let mut names: Vec<&str> = PROJECTS.iter().map(|p| p.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), PROJECTS.len(), "project names are unique");
        for p in PROJECTS {
            assert!(!p.version.is_empty());
            assert!(!p.version.starts_with(['^', '~', '>', '<', '=']), "{p:?}");
        }
    }
}
