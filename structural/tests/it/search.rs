//! Searching folders: what is walked, what is parsed, and in which order results come.

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

use std::path::Path;

use cc_structural::{search, Languages, Pattern, SearchOptions};

fn pattern(language: &str, text: &str) -> Pattern {
    Pattern::new(Languages::builtin().by_name(language).unwrap(), text, None).unwrap()
}

fn write(root: &Path, path: &str, content: &[u8]) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

fn options(max_results: usize) -> SearchOptions {
    SearchOptions {
        max_results,
        threads: 2,
        ..SearchOptions::default()
    }
}

#[test]
fn a_folder_search_reports_progress_up_to_every_file() {
    use std::sync::{Arc, Mutex};
    let dir = tempfile::tempdir().unwrap();
    for index in 0..45 {
        write(
            dir.path(),
            &format!("m{index}.py"),
            format!("print({index})\n").as_bytes(),
        );
    }
    let seen: Arc<Mutex<Vec<(usize, usize)>>> = Arc::default();
    let sink = seen.clone();
    let options = SearchOptions {
        progress: Some(Arc::new(move |done, total| {
            sink.lock().unwrap().push((done, total));
        })),
        ..options(10)
    };
    let pattern = Pattern::new(
        Languages::builtin().by_name("python").unwrap(),
        "print($A)",
        None,
    )
    .unwrap();
    let result = search(&pattern, dir.path(), &options).unwrap();
    assert_eq!(result.total, 45);
    let mut seen = seen.lock().unwrap().clone();
    seen.sort();
    assert!(seen.len() >= 2 && seen.len() <= 46, "{seen:?}");
    assert!(seen.iter().all(|(_, total)| *total == 45));
    assert_eq!(seen.last(), Some(&(45, 45)));
}

#[test]
fn walk_honours_gitignore_hidden_binary_and_the_language_extensions() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // `.gitignore` is a rule inside a git repository.
    std::fs::create_dir(root.join(".git")).unwrap();
    write(root, ".gitignore", b"ignored/\n");
    write(root, "a.py", b"print(1)\n");
    write(root, "stubs/b.pyi", b"print(2)\n");
    write(root, "ignored/c.py", b"print(3)\n");
    write(root, ".hidden/d.py", b"print(4)\n");
    write(root, "e.js", b"print(5)\n");
    write(root, "f.py", b"print(6)\n\0binary\n");
    let result = search(&pattern("python", "print($A)"), root, &options(50)).unwrap();
    let found: Vec<String> = result
        .matches
        .iter()
        .map(|m| m.path.strip_prefix(root).unwrap().display().to_string())
        .collect();
    assert_eq!(found, ["a.py", "stubs/b.pyi"]);
    assert_eq!(result.total, 2);
}

#[test]
fn files_without_the_pattern_literal_are_not_parsed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for i in 0..20 {
        write(root, &format!("m{i}.py"), b"x = compute(1)\n");
    }
    write(
        root,
        "hit.py",
        b"import warnings\nwarnings.warn('x', DeprecationWarning)\n",
    );
    let p = pattern("python", "warnings.warn($$$A)");
    assert_eq!(p.literals()[0], b"warnings");
    let result = search(&p, root, &options(50)).unwrap();
    assert_eq!(result.total, 1);
    assert_eq!(result.files_searched, 21);
    assert_eq!(result.files_parsed, 1);
    let absent = search(&pattern("python", "absent_name_zz($A)"), root, &options(50)).unwrap();
    assert_eq!((absent.total, absent.files_parsed), (0, 0));
}

#[test]
fn the_literal_must_occur_as_a_whole_token() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // `warn` only inside longer words: cannot hold a `warn` token, so not parsed.
    write(
        root,
        "a.py",
        b"import warnings
warnings.simplefilter('ignore')
forewarned = 1
",
    );
    write(
        root,
        "b.py",
        b"import warnings
warnings.warn('x')
",
    );
    // A keyword right after a number is still a token of its own.
    write(
        root,
        "c.py",
        b"x = [1if y else 2 for y in z]
warn(1)
",
    );
    let p = pattern("python", "warn($$$A)");
    let result = search(&p, root, &options(50)).unwrap();
    assert_eq!((result.files_searched, result.files_parsed), (3, 2));
    assert_eq!(result.total, 1);
    let conditional = search(&pattern("python", "$A if $B else $C"), root, &options(50)).unwrap();
    assert_eq!(conditional.total, 1);
}

#[test]
fn results_are_in_path_then_position_order_and_total_counts_past_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for name in ["z.py", "a.py", "m/b.py", "m/a.py", "c.py"] {
        write(root, name, b"f(1)\nf(2)\nf(3)\n");
    }
    let all = search(&pattern("python", "f($A)"), root, &options(100)).unwrap();
    let order: Vec<(String, usize)> = all
        .matches
        .iter()
        .map(|m| {
            (
                m.path.strip_prefix(root).unwrap().display().to_string(),
                m.start.line,
            )
        })
        .collect();
    let mut sorted = order.clone();
    sorted.sort();
    assert_eq!(order, sorted);
    assert_eq!(all.total, 15);
    assert!(!all.truncated());
    // Repeated runs agree, whatever the thread interleaving.
    for _ in 0..5 {
        let limited = search(&pattern("python", "f($A)"), root, &options(4)).unwrap();
        assert_eq!(limited.total, 15);
        assert!(limited.truncated());
        assert_eq!(limited.matches, all.matches[..4]);
    }
}

#[test]
fn a_file_path_is_searched_whatever_its_extension() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "script", b"print(1)\n");
    let result = search(
        &pattern("python", "print($A)"),
        &dir.path().join("script"),
        &options(5),
    )
    .unwrap();
    assert_eq!(result.total, 1);
    assert_eq!(
        (result.matches[0].start.line, result.matches[0].start.column),
        (1, 1)
    );
    assert!(search(
        &pattern("python", "x"),
        &dir.path().join("missing"),
        &options(5)
    )
    .is_err());
}

#[test]
fn columns_count_characters_not_bytes() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "u.py", "s = 'héllo'; f(1)\n".as_bytes());
    let result = search(&pattern("python", "f($A)"), dir.path(), &options(5)).unwrap();
    let m = &result.matches[0];
    assert_eq!((m.start.line, m.start.column, m.end.column), (1, 14, 18));
}
