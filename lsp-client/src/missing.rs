//! Diagnostics that only say a dependency is not on disk.
//!
//! A Java project whose libraries are not installed (no Maven Central here, Android's SDK
//! absent) has an unresolved import on nearly every file and a follow-on error at every use
//! of what it imported: hundreds of errors that say one thing, the project's configuration.
//! They are told once, as such, with the packages named, and the rest of the list stays
//! readable. An import of a package that does exist in the project's sources (a typo of a
//! class name) is a real error and stays one.
//!
//! ```
//! use cc_lsp_client::missing::split_missing;
//! use cc_lsp_client::{Diagnostic, Severity};
//! let error = |line, message: &str| Diagnostic {
//!     line, character: 0, end_line: line, severity: Severity::Error, code: None,
//!     message: message.into(), source: None, unnecessary: false, deprecated: false,
//! };
//! let text = "package a;\nimport android.os.Bundle;\nclass A { Bundle b; int x = y; }\n";
//! let (kept, missing) = split_missing(
//!     text,
//!     vec![
//!         error(2, "The import android cannot be resolved"),
//!         error(3, "Bundle cannot be resolved to a type"),
//!         error(3, "y cannot be resolved to a variable"),
//!     ],
//!     &|_package: &str, _type: Option<&str>| false,
//! );
//! assert_eq!(kept.len(), 1);
//! assert_eq!(missing.diagnostics, 2);
//! assert_eq!(missing.packages.iter().collect::<Vec<_>>(), ["android.os"]);
//! ```

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::diagnostic::Diagnostic;

/// What [`split_missing`] took out of a list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MissingDependencies {
    /// The packages imported and not found (`android.os`).
    pub packages: BTreeSet<String>,
    /// How many diagnostics say only that.
    pub diagnostics: usize,
}

impl MissingDependencies {
    /// Adds `other`'s packages and count.
    pub fn add(&mut self, other: MissingDependencies) {
        self.packages.extend(other.packages);
        self.diagnostics += other.diagnostics;
    }

    /// One sentence for the agent (`None` when nothing was taken out); without a count
    /// when [`MissingDependencies::diagnostics`] is 0.
    pub fn sentence(&self, server: &str) -> Option<String> {
        if self.packages.is_empty() {
            return None;
        }
        const SHOWN: usize = 8;
        let mut names: Vec<&str> = self
            .packages
            .iter()
            .map(String::as_str)
            .take(SHOWN)
            .collect();
        if self.packages.len() > SHOWN {
            names.push("…");
        }
        let count = match self.diagnostics {
            0 => String::new(),
            n => format!("{n} diagnostic(s) only say that "),
        };
        let subject = if count.is_empty() {
            "Imported"
        } else {
            "imported"
        };
        Some(format!(
            "{count}{subject} packages cannot be found ({}): the project's dependencies are not \
             installed where {server} looks (it runs no Gradle or Maven build to fetch them), \
             or the classes are Kotlin, which it does not compile; such diagnostics are left out",
            names.join(", ")
        ))
    }
}

/// Splits `diagnostics` of the Java source `text` into those kept and those that only say a
/// dependency is missing. `exists(package, type)` says whether the project's Java sources
/// hold that package (`a.b`) or type: an unresolved import of one is a real error (a typo).
pub fn split_missing(
    text: &str,
    diagnostics: Vec<Diagnostic>,
    exists: &dyn Fn(&str, Option<&str>) -> bool,
) -> (Vec<Diagnostic>, MissingDependencies) {
    let lines: Vec<&str> = text.lines().collect();
    let line_of = |diagnostic: &Diagnostic| {
        (diagnostic.line as usize)
            .checked_sub(1)
            .and_then(|at| lines.get(at))
            .copied()
            .unwrap_or_default()
    };
    let mut missing = MissingDependencies::default();
    let mut names: BTreeSet<String> = BTreeSet::new();
    let mut unresolved_import = vec![false; diagnostics.len()];
    for (i, diagnostic) in diagnostics.iter().enumerate() {
        let line = line_of(diagnostic);
        // javac says "cannot find symbol" at an import whose package folder exists, kotlinc
        // "unresolved reference 'android'" at any.
        let javac_import = (diagnostic.message.starts_with("cannot find symbol")
            || diagnostic.message.starts_with("unresolved reference"))
            && imported(line).is_some();
        if !is_unresolved_import(&diagnostic.message) && !javac_import {
            continue;
        }
        let Some((package, first_type, name)) = imported(line).or_else(|| {
            // javac names the package itself, on a qualified use too.
            let package = diagnostic
                .message
                .strip_prefix("package ")?
                .strip_suffix(" does not exist")?;
            Some((package.to_owned(), None, None))
        }) else {
            continue;
        };
        if exists(&package, first_type.as_deref()) {
            continue;
        }
        unresolved_import[i] = true;
        missing.packages.insert(package);
        if let Some(name) = name {
            names.insert(name);
        }
    }
    // A qualified use of a missing package (`android.net.Uri` in code) fails at its first
    // name, unless the project's sources hold a package of that name.
    let firsts: Vec<String> = missing
        .packages
        .iter()
        .filter_map(|p| p.split('.').next())
        .filter(|first| !exists(first, None))
        .map(str::to_owned)
        .collect();
    names.extend(firsts);
    let qualified: Vec<Option<String>> = diagnostics
        .iter()
        .map(|d| qualified_use_of_missing(&d.message, line_of(d), exists))
        .collect();
    // A field or method declared with a qualified type of a missing package
    // (`Collection<com.facebook.react.uimanager.ViewManager> managers`) makes each use of it
    // "ViewManager cannot be resolved to a type" too, on lines that do not name the package;
    // JDT LS reports such uses after some builds and not after others.
    // The declaration's own error names the package's first segment or the type.
    for (diagnostic, package) in diagnostics.iter().zip(&qualified) {
        if package.is_none() && !is_unresolved_type(&diagnostic.message) {
            continue;
        }
        for (package, name) in qualified_missing_types(line_of(diagnostic), exists) {
            // The JDK's own packages always resolve: its names are no dependency's.
            if package.starts_with("java.") || package.starts_with("javax.") {
                continue;
            }
            let first = package.split('.').next().unwrap_or_default().to_owned();
            if !exists(&first, None) {
                names.insert(first);
            }
            names.insert(name);
            missing.packages.insert(package);
        }
    }
    let mut kept = Vec::new();
    for ((i, diagnostic), package) in diagnostics.into_iter().enumerate().zip(qualified) {
        if unresolved_import[i] || follows_from(&diagnostic.message, &names) {
            missing.diagnostics += 1;
        } else if let Some(package) = package {
            missing.diagnostics += 1;
            missing.packages.insert(package);
        } else {
            kept.push(diagnostic);
        }
    }
    (kept, missing)
}

/// JDT LS's words for a type name that does not resolve (`X cannot be resolved to a type`).
fn is_unresolved_type(message: &str) -> bool {
    message.ends_with(" cannot be resolved to a type")
}

/// The qualified uses of types of missing packages on `line` (`com.facebook.react.uimanager.
/// ViewManager`): each package (two or more lower-case segments) and its first type, when
/// the sources do not have them.
fn qualified_missing_types(
    line: &str,
    exists: &dyn Fn(&str, Option<&str>) -> bool,
) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let words = line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'));
    for word in words {
        let segments: Vec<&str> = word.split('.').collect();
        let Some(at) = segments
            .iter()
            .position(|s| s.starts_with(|c: char| c.is_ascii_uppercase()))
        else {
            continue;
        };
        let package = &segments[..at];
        let lower = package
            .iter()
            .all(|s| s.starts_with(|c: char| c.is_ascii_lowercase()));
        if package.len() < 2 || !lower {
            continue;
        }
        let (package, name) = (package.join("."), segments[at].to_owned());
        if !exists(&package, Some(&name)) {
            found.push((package, name));
        }
    }
    found
}

/// The package of a qualified use (`com.facebook.react.uimanager.ViewManager` in code) that
/// "ViewManager cannot be resolved to a type" is about, when the sources do not have it.
/// JDT LS names such a use's first segment after a full build and its last one after some
/// incremental builds: either way it only says the dependency is missing.
fn qualified_use_of_missing(
    message: &str,
    line: &str,
    exists: &dyn Fn(&str, Option<&str>) -> bool,
) -> Option<String> {
    let name = message.strip_suffix(" cannot be resolved to a type")?;
    qualified_missing_types(line, exists)
        .into_iter()
        .find(|(_, used)| used == name)
        .map(|(package, _)| package)
}

/// JDT LS's and javac's words for an import that does not resolve.
fn is_unresolved_import(message: &str) -> bool {
    (message.starts_with("The import ") && message.ends_with(" cannot be resolved"))
        || (message.starts_with("package ") && message.ends_with(" does not exist"))
}

/// The package, the first type and the simple name brought in (`None` for `.*`) of an
/// `import` line.
fn imported(line: &str) -> Option<(String, Option<String>, Option<String>)> {
    let rest = line.trim().strip_prefix("import ")?;
    let rest = rest
        .trim_start()
        .strip_prefix("static ")
        .unwrap_or(rest)
        .trim();
    // Kotlin: no semicolon, and `import a.b.C as D`.
    let name = rest.split(';').next()?.split(" as ").next()?.trim();
    let segments: Vec<&str> = name.split('.').map(str::trim).collect();
    if segments.len() < 2 {
        return None;
    }
    // Packages are lower case, types start upper case (Java's convention).
    let first_type = segments
        .iter()
        .position(|s| s.starts_with(|c: char| c.is_ascii_uppercase()));
    let last = segments.last()?;
    let (package, first) = match first_type {
        Some(0) => return None,
        Some(at) => (segments[..at].join("."), Some(segments[at].to_owned())),
        None => (segments[..segments.len() - 1].join("."), None),
    };
    let simple = Some(last.to_string()).filter(|s| s != "*");
    Some((package, first, simple))
}

/// A follow-on error of a missing import: a use of a name it would have brought.
fn follows_from(message: &str, names: &BTreeSet<String>) -> bool {
    if names.is_empty() {
        return false;
    }
    let subject = [
        " cannot be resolved to a type",
        " cannot be resolved to a variable",
        " cannot be resolved",
    ]
    .iter()
    .find_map(|suffix| message.strip_suffix(suffix));
    if let Some(subject) = subject {
        let first = subject.split(['.', '<']).next().unwrap_or(subject);
        return names.contains(first);
    }
    // kotlinc: "unresolved reference 'Bundle'."
    if let Some(rest) = message.strip_prefix("unresolved reference '") {
        return rest
            .split('\'')
            .next()
            .is_some_and(|name| names.contains(name));
    }
    // javac: "cannot find symbol" and, on the lines after, "symbol:   class Bundle".
    if message.starts_with("cannot find symbol") {
        return message.lines().any(|line| {
            line.trim()
                .strip_prefix("symbol:")
                .and_then(|s| s.split_whitespace().nth(1))
                .is_some_and(|name| names.contains(name))
        });
    }
    // "The method m(X) from the type A refers to the missing type X".
    message
        .rsplit_once("refers to the missing type ")
        .is_some_and(|(_, name)| names.contains(name.trim()))
}

/// Whether the Java compiler sees the package `a.b` (or its type `T`) in the project's
/// source `roots`: a `T.java` there, or, with no `T.kt` (Kotlin, which JDT LS does not
/// compile), a folder of the package that holds Java files of its own.
pub fn java_sees(roots: &[PathBuf], package: &str, type_name: Option<&str>) -> bool {
    let relative: PathBuf = package.split('.').collect();
    let dirs: Vec<PathBuf> = roots.iter().map(|root| root.join(&relative)).collect();
    if let Some(name) = type_name {
        if dirs
            .iter()
            .any(|d| d.join(format!("{name}.java")).is_file())
        {
            return true;
        }
        if dirs.iter().any(|d| d.join(format!("{name}.kt")).is_file()) {
            return false;
        }
    }
    dirs.iter().any(|dir| {
        std::fs::read_dir(dir).is_ok_and(|entries| {
            entries
                .flatten()
                .any(|e| e.path().extension().is_some_and(|x| x == "java"))
        })
    })
}

/// [`split_missing`] for the source `path` with text `text`, the packages its compiler sees
/// found under the project's source `roots` ([`kotlin_sees`] for a Kotlin file, else
/// [`java_sees`]).
pub fn split_file(
    path: &Path,
    text: &str,
    diagnostics: Vec<Diagnostic>,
    roots: &[PathBuf],
) -> (Vec<Diagnostic>, MissingDependencies) {
    let kotlin = crate::table::extension(path).as_deref() == Some("kt");
    split_missing(text, diagnostics, &|package, type_name| {
        if kotlin {
            kotlin_sees(roots, package, type_name)
        } else {
            java_sees(roots, package, type_name)
        }
    })
}

/// Whether `path` is a source whose diagnostics [`split_missing`] reads (Java, Kotlin).
pub fn reads(path: &Path) -> bool {
    matches!(
        crate::table::extension(path).as_deref(),
        Some("java" | "kt")
    )
}

/// Whether the Kotlin compiler, given every Kotlin and Java file of the project, sees the
/// package `a.b` (or its type `T`) in its source `roots`: a `T.kt` or `T.java` there, or a
/// folder of the package with sources of its own. Kotlin files need not sit in their
/// package's folder; those that do not are not seen here (their imports stay errors).
pub fn kotlin_sees(roots: &[PathBuf], package: &str, type_name: Option<&str>) -> bool {
    let relative: PathBuf = package.split('.').collect();
    let dirs: Vec<PathBuf> = roots.iter().map(|root| root.join(&relative)).collect();
    if let Some(name) = type_name {
        let named = |ext: &str| {
            dirs.iter()
                .any(|d| d.join(format!("{name}.{ext}")).is_file())
        };
        if named("kt") || named("java") {
            return true;
        }
    }
    dirs.iter().any(|dir| {
        std::fs::read_dir(dir).is_ok_and(|entries| {
            entries.flatten().any(|e| {
                e.path()
                    .extension()
                    .is_some_and(|x| x == "java" || x == "kt")
            })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(line: u32, message: &str) -> Diagnostic {
        crate::diagnostic::test_error(line, message)
    }

    #[test]
    fn imports_name_their_package_and_type() {
        assert_eq!(
            imported("import android.os.Bundle;"),
            Some((
                "android.os".into(),
                Some("Bundle".into()),
                Some("Bundle".into())
            ))
        );
        assert_eq!(
            imported("import static com.x.Util.helper;"),
            Some(("com.x".into(), Some("Util".into()), Some("helper".into())))
        );
        assert_eq!(
            imported("import com.x.*;"),
            Some(("com.x".into(), None, None))
        );
        assert_eq!(
            imported("import com.x.Outer.Inner;"),
            Some(("com.x".into(), Some("Outer".into()), Some("Inner".into())))
        );
        assert_eq!(imported("int x;"), None);
    }

    /// A fully qualified use of a missing package is left out whichever segment JDT LS
    /// names (the first after a full build, the type after some incremental ones); a
    /// qualified use of a package the sources have stays an error.
    #[test]
    fn a_qualified_use_of_a_missing_package_is_missing_whichever_segment_is_named() {
        let text = "package a;\nclass A {\n  java.util.List<com.facebook.react.uimanager.ViewManager> m;\n  own.pkg.Thing t;\n}\n";
        let exists = |package: &str, _: Option<&str>| {
            package.starts_with("own") || package.starts_with("java")
        };
        for message in [
            "ViewManager cannot be resolved to a type",
            "com.facebook cannot be resolved to a type",
        ] {
            let (kept, missing) = split_missing(
                text,
                vec![
                    error(3, message),
                    error(4, "Thing cannot be resolved to a type"),
                ],
                &exists,
            );
            let kept: Vec<&str> = kept.iter().map(|d| d.message.as_str()).collect();
            // The second wording has no import to follow from; only the first is read here.
            if message.starts_with("ViewManager") {
                assert_eq!(kept, ["Thing cannot be resolved to a type"], "{message}");
                assert!(missing.packages.contains("com.facebook.react.uimanager"));
                assert_eq!(missing.diagnostics, 1);
            } else {
                assert!(kept.contains(&"Thing cannot be resolved to a type"));
            }
        }
    }

    #[test]
    fn uses_of_a_member_declared_with_a_missing_qualified_type_follow_from_it() {
        let text = "package a;\nclass A {\n  java.util.Collection<com.facebook.react.uimanager.ViewManager> managers;\n\
                    \n  Object first() {\n    return managers;\n  }\n  Thing thing;\n}\n";
        let exists = |package: &str, _: Option<&str>| package == "a";
        // After a full build JDT LS names the declaration's first segment, after some
        // incremental ones its type; the uses of the field come with either, or not at all.
        for declaration in [
            "ViewManager cannot be resolved to a type",
            "com cannot be resolved to a type",
        ] {
            let (kept, missing) = split_missing(
                text,
                vec![
                    error(3, declaration),
                    error(6, "ViewManager cannot be resolved to a type"),
                    error(8, "Thing cannot be resolved to a type"),
                ],
                &exists,
            );
            let kept: Vec<&str> = kept.iter().map(|d| d.message.as_str()).collect();
            assert_eq!(
                kept,
                ["Thing cannot be resolved to a type"],
                "{declaration}"
            );
            assert_eq!(missing.diagnostics, 2, "{declaration}");
        }
        // Without the declaration's error, a use alone is not known to follow from it.
        let (kept, _) = split_missing(
            text,
            vec![error(6, "ViewManager cannot be resolved to a type")],
            &exists,
        );
        assert_eq!(kept.len(), 1);
    }

    #[test]
    fn a_typo_in_an_own_package_stays_an_error() {
        let text = "package a;\nimport own.pkg.Thnig;\nimport android.app.Activity;\n\
                    class A { Thnig t; Activity a; }\n";
        let (kept, missing) = split_missing(
            text,
            vec![
                error(2, "The import own.pkg.Thnig cannot be resolved"),
                error(3, "The import android cannot be resolved"),
                error(4, "Thnig cannot be resolved to a type"),
                error(4, "Activity cannot be resolved to a type"),
            ],
            &|package, _| package == "own.pkg",
        );
        let messages: Vec<&str> = kept.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "The import own.pkg.Thnig cannot be resolved",
                "Thnig cannot be resolved to a type"
            ]
        );
        assert_eq!(missing.diagnostics, 2);
        assert!(missing.sentence("jdtls").unwrap().contains("android.app"));
    }

    #[test]
    fn java_sees_its_own_packages_and_types_not_kotlin_ones() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        for file in ["own/A.java", "own/kt/K.kt", "lib/sub/B.java"] {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        let roots = [root];
        assert!(java_sees(&roots, "own", Some("Typo")));
        assert!(!java_sees(&roots, "own.kt", Some("K")));
        // A folder with only a subpackage (React Native's `com.facebook.react`).
        assert!(!java_sees(&roots, "lib", Some("Missing")));
        assert!(java_sees(&roots, "lib.sub", Some("B")));
        assert!(!java_sees(&roots, "android.os", Some("Bundle")));
    }

    #[test]
    fn kotlinc_words_are_read_too() {
        let text = "package a\n\nimport android.os.Bundle\nimport a.b.Own as Mine\n\
                    class A(val b: Bundle, val m: Mine)\n";
        let text = format!("{text}val u = android.net.Uri.EMPTY\n");
        let (kept, missing) = split_missing(
            &text,
            vec![
                error(6, "unresolved reference 'android'."),
                error(3, "unresolved reference 'android'."),
                error(4, "unresolved reference 'Own'."),
                error(5, "unresolved reference 'Bundle'."),
                error(5, "unresolved reference 'Mine'."),
            ],
            &|package, _| package == "a.b",
        );
        let messages: Vec<&str> = kept.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "unresolved reference 'Own'.",
                "unresolved reference 'Mine'."
            ]
        );
        assert_eq!(missing.diagnostics, 3);
        assert!(missing.packages.contains("android.os"));
    }

    #[test]
    fn javac_words_are_read_too() {
        let text = "package a;\nimport android.os.Bundle;\n";
        let (kept, missing) = split_missing(
            text,
            vec![error(2, "package android.os does not exist")],
            &|_, _| false,
        );
        assert!(kept.is_empty());
        assert_eq!(missing.diagnostics, 1);
        let text = "package a;\nimport android.os.Bundle;\nimport com.x.Y;\n\
                    class A { Bundle b; Own o; }\n";
        let (kept, missing) = split_missing(
            text,
            vec![
                error(2, "package android.os does not exist"),
                error(
                    3,
                    "cannot find symbol\n  symbol:   class Y\n  location: package com.x",
                ),
                error(
                    4,
                    "cannot find symbol\n  symbol:   class Bundle\n  location: class A",
                ),
                error(
                    4,
                    "cannot find symbol\n  symbol:   class Own\n  location: class A",
                ),
                error(4, "package expo.kotlin does not exist"),
            ],
            &|_, _| false,
        );
        assert_eq!(kept.len(), 1, "{kept:?}");
        assert!(kept[0].message.contains("Own"));
        assert_eq!(missing.diagnostics, 4);
    }
}
