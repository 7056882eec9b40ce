//! Staged rewrites: one per language (a multi-line `$$$` body re-indented, tabs), nested and
//! overlapping matches, warnings, template errors.

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

use crate::common;

use std::path::Path;

use cc_structural::{
    stage_rewrite, FileOp, RewriteError, StagedRewrite, TemplateError, WarningKind,
};

fn stage(
    language: &str,
    file: &str,
    code: &str,
    pattern: &str,
    template: &str,
) -> (StagedRewrite, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(file);
    std::fs::write(&path, code).unwrap();
    let compiled = common::compile(language, pattern).unwrap_or_else(|e| panic!("{pattern}: {e}"));
    let staged = stage_rewrite(&compiled, template, &path, &|p: &Path| {
        p.file_name().unwrap().to_string_lossy().into_owned()
    })
    .unwrap_or_else(|e| panic!("{pattern}: {e}"));
    // Staging writes nothing.
    assert_eq!(std::fs::read_to_string(&path).unwrap(), code);
    let new = match staged.transaction.ops().first() {
        Some(FileOp::Replace { new, .. }) => String::from_utf8(new.clone()).unwrap(),
        Some(other) => panic!("unexpected {other:?}"),
        None => code.to_owned(),
    };
    (staged, new)
}

fn rewrite(language: &str, file: &str, code: &str, pattern: &str, template: &str) -> String {
    stage(language, file, code, pattern, template).1
}

#[test]
fn python_multi_line_body_is_reindented() {
    let code = "class A:\n    def f(self, x):\n        if x:\n            a()\n            b()\n        return x\n";
    let new = rewrite(
        "python",
        "a.py",
        code,
        "if $C: $$$B",
        "while $C:\n    $$$B\n    break",
    );
    assert_eq!(
        new,
        "class A:\n    def f(self, x):\n        while x:\n            a()\n            b()\n            break\n        return x\n"
    );
}

#[test]
fn go_with_tabs_keeps_tabs() {
    let code = "package main\n\nfunc main() {\n\tif ok {\n\t\tx()\n\t\ty()\n\t}\n}\n";
    // The template is indented with spaces; the file's unit is a tab.
    let new = rewrite(
        "go",
        "m.go",
        code,
        "if $C { $$$B }",
        "for $C {\n    $$$B\n    break\n}",
    );
    assert_eq!(
        new,
        "package main\n\nfunc main() {\n\tfor ok {\n\t\tx()\n\t\ty()\n\t\tbreak\n\t}\n}\n"
    );
}

#[test]
fn rust_call_arguments() {
    let code = "fn main() {\n    let v = compute(1, 2);\n}\n";
    assert_eq!(
        rewrite(
            "rust",
            "m.rs",
            code,
            "compute($A, $B)",
            "compute_v2($B, $A)"
        ),
        "fn main() {\n    let v = compute_v2(2, 1);\n}\n"
    );
}

#[test]
fn javascript_empty_rest_drops_its_separator() {
    let code = "f(a);\nf(a, b, c);\n";
    assert_eq!(
        rewrite("javascript", "a.js", code, "f($A, $$$R)", "g($$$R, $A)"),
        "g(a);\ng(b, c, a);\n"
    );
    assert_eq!(
        rewrite("javascript", "a.js", code, "f($A, $$$R)", "g($A, $$$R)"),
        "g(a);\ng(a, b, c);\n"
    );
}

#[test]
fn typescript_interface_body() {
    let code = "interface I {\n  x: number;\n  y: string;\n}\n";
    assert_eq!(
        rewrite(
            "typescript",
            "a.ts",
            code,
            "interface $N { $$$M }",
            "type $N = {\n  $$$M;\n};"
        ),
        "type I = {\n  x: number;\n  y: string;\n};\n"
    );
}

#[test]
fn tsx_element() {
    let code = "const a = <b>{name}</b>;\n";
    assert_eq!(
        rewrite("tsx", "a.tsx", code, "<b>{$X}</b>", "<strong>{$X}</strong>"),
        "const a = <strong>{name}</strong>;\n"
    );
}

#[test]
fn c_with_tabs() {
    let code = "void f(void) {\n\tif (x) {\n\t\ta();\n\t\tb();\n\t}\n}\n";
    assert_eq!(
        rewrite(
            "c",
            "a.c",
            code,
            "if ($C) { $$$B }",
            "while ($C) {\n\t$$$B\n}"
        ),
        "void f(void) {\n\twhile (x) {\n\t\ta();\n\t\tb();\n\t}\n}\n"
    );
}

#[test]
fn cpp_stream() {
    let code = "int main() {\n  std::cout << x;\n}\n";
    assert_eq!(
        rewrite(
            "cpp",
            "a.cpp",
            code,
            "std::cout << $A",
            "fmt::print(\"{}\", $A)"
        ),
        "int main() {\n  fmt::print(\"{}\", x);\n}\n"
    );
}

#[test]
fn java_block_body() {
    let code = "class A {\n    void m() {\n        if (a) {\n            b();\n            c();\n        }\n    }\n}\n";
    assert_eq!(
        rewrite("java", "A.java", code, "if ($C) { $$$B }", "if (!($C)) {\n    return;\n}\n$$$B"),
        "class A {\n    void m() {\n        if (!(a)) {\n            return;\n        }\n        b();\n        c();\n    }\n}\n"
    );
}

#[test]
fn dart_print() {
    let code = "void main() {\n  print('hi');\n}\n";
    assert_eq!(
        rewrite("dart", "a.dart", code, "print($A)", "debugPrint($A)"),
        "void main() {\n  debugPrint('hi');\n}\n"
    );
}

#[test]
fn bash_keeps_lower_case_dollars() {
    let code = "rm -f $tmp\n";
    assert_eq!(
        rewrite("bash", "a.sh", code, "rm -f $F", "rm -f -- \"$F\" $keep"),
        "rm -f -- \"$tmp\" $keep\n"
    );
}

#[test]
fn json_value() {
    let code = "{\n  \"version\": \"1.0\",\n  \"name\": \"x\"\n}\n";
    assert_eq!(
        rewrite(
            "json",
            "p.json",
            code,
            "\"version\": $V",
            "\"version\": \"2.0\""
        ),
        "{\n  \"version\": \"2.0\",\n  \"name\": \"x\"\n}\n"
    );
}

#[test]
fn ruby_method_body() {
    let code = "class A\n  def go\n    a\n    b\n  end\nend\n";
    assert_eq!(
        rewrite(
            "ruby",
            "a.rb",
            code,
            "def $M\n  $$$B\nend",
            "def $M\n  log\n  $$$B\nend"
        ),
        "class A\n  def go\n    log\n    a\n    b\n  end\nend\n"
    );
}

#[test]
fn c_sharp_call() {
    let code = "class A {\n    void M() { Console.WriteLine(x); }\n}\n";
    assert_eq!(
        rewrite(
            "c_sharp",
            "a.cs",
            code,
            "Console.WriteLine($$$A)",
            "Log.Info($$$A)"
        ),
        "class A {\n    void M() { Log.Info(x); }\n}\n"
    );
}

#[test]
fn kotlin_call() {
    let code = "fun main() {\n    println(1)\n}\n";
    assert_eq!(
        rewrite("kotlin", "a.kt", code, "println($A)", "logger.info($A)"),
        "fun main() {\n    logger.info(1)\n}\n"
    );
}

#[test]
fn a_statement_terminator_is_neither_doubled_nor_dropped() {
    // The pattern spells no `;` but the matched `let` holds one: it stays.
    let code = "fn main() {\n    let x = 1;\n}\n";
    for pattern in ["let $A = 1", "let $A = 1;"] {
        let template = pattern.replace('1', "2");
        assert_eq!(
            rewrite("rust", "m.rs", code, pattern, &template),
            "fn main() {\n    let x = 2;\n}\n",
            "{pattern}"
        );
    }
    // The pattern spells a `;` that is the member's sibling, not part of it: it goes once.
    let code = "class A {\n  private x: number = 1;\n}\n";
    for pattern in ["private x: number = 1", "private x: number = 1;"] {
        let template = pattern.replace("x: number = 1", "y: number = 2");
        assert_eq!(
            rewrite("typescript", "a.ts", code, pattern, &template),
            "class A {\n  private y: number = 2;\n}\n",
            "{pattern}"
        );
    }
}

#[test]
fn a_capture_keeps_its_relative_indentation_on_the_template_first_line() {
    let code = "def f():\n    x = foo(a,\n            b)\n    y = foo(\n        c,\n        d)\n";
    assert_eq!(
        rewrite("python", "a.py", code, "foo($$$A)", "bar($$$A)"),
        // `c,` had a line of its own: put after `bar(`, the lines after it stay where they
        // were rather than move to where `c` now starts.
        "def f():\n    x = bar(a,\n            b)\n    y = bar(c,\n        d)\n"
    );
}

#[test]
fn crlf_files_keep_crlf_and_bytes_that_are_not_utf8_survive() {
    let code = b"if x:\r\n    a(\"\xe9\")\r\n    b()\r\n".to_vec();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("latin1.py");
    std::fs::write(&path, &code).unwrap();
    let pattern = common::compile("python", "if $C: $$$B").unwrap();
    let staged = stage_rewrite(
        &pattern,
        "while $C:\n    $$$B\n    break",
        &path,
        &|p: &Path| p.display().to_string(),
    )
    .unwrap();
    let Some(FileOp::Replace { new, .. }) = staged.transaction.ops().first() else {
        panic!("nothing staged");
    };
    assert_eq!(
        new,
        &b"while x:\r\n    a(\"\xe9\")\r\n    b()\r\n    break\r\n".to_vec()
    );
}

#[test]
fn nested_matches_rewrite_the_outermost_and_count_the_rest() {
    let (staged, new) = stage("python", "a.py", "f(f(f(1)))\nf(2)\n", "f($A)", "g($A)");
    assert_eq!(new, "g(f(f(1)))\ng(2)\n");
    assert_eq!(staged.replacements, 2);
    assert_eq!(staged.skipped_nested, 2);
    assert_eq!(staged.files[0].replacements, 2);
    let diff = &staged.files[0].diff;
    assert!(
        diff.contains("\n-f(f(f(1)))\n") && diff.contains("\n+g(f(f(1)))\n"),
        "{diff}"
    );
    assert!(
        staged.files[0].diff.starts_with("--- a/a.py\n+++ b/a.py\n"),
        "{}",
        staged.files[0].diff
    );
}

#[test]
fn deleting_an_uncaptured_comment_is_a_warning() {
    let code = "if x:\n    # keep me\n    a()\nif y:\n    b()  # carried\n";
    let (staged, _) = stage("python", "a.py", code, "if $C: $$$B", "assert $C");
    // (Both comments are inside the matches and neither survives `assert $C`.)
    let warnings: Vec<(WarningKind, usize, &str)> = staged
        .warnings
        .iter()
        .map(|w| (w.kind, w.line, w.text.as_str()))
        .collect();
    assert_eq!(
        warnings,
        [
            (WarningKind::DeletedComment, 2, "# keep me"),
            (WarningKind::DeletedComment, 5, "# carried")
        ]
    );
    // Carried by a substituted capture (a run takes the comments around it): no warning.
    let (staged, new) = stage("python", "a.py", code, "if $C: $$$B", "while $C:\n    $$$B");
    assert!(staged.warnings.is_empty(), "{:?}", staged.warnings);
    assert_eq!(
        new,
        "while x:\n    # keep me\n    a()\nwhile y:\n    b()  # carried\n"
    );
}

#[test]
fn an_omitted_optional_part_is_carried_over() {
    let code = "def f(x) -> int:\n    return x\n";
    let (staged, new) = stage(
        "python",
        "a.py",
        code,
        "def $F($$$P): $$$B",
        "def $F($$$P):\n    log()\n    $$$B",
    );
    assert_eq!(new, "def f(x) -> int:\n    log()\n    return x\n");
    assert!(staged.warnings.is_empty(), "{:?}", staged.warnings);
    assert!(staged.skipped_matches.is_empty());
}

#[test]
fn unbound_template_metavariable_is_an_error_at_staging() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.py");
    std::fs::write(&path, "f(1)\n").unwrap();
    let pattern = common::compile("python", "f($A)").unwrap();
    let error = stage_rewrite(&pattern, "g($A, $B)", &path, &|p: &Path| {
        p.display().to_string()
    })
    .unwrap_err();
    assert!(matches!(
        &error,
        RewriteError::Template(TemplateError::Unbound { name, .. }) if name == "$B"
    ));
    assert!(error.to_string().contains("`$B`"), "{error}");
}

#[test]
fn no_match_stages_nothing() {
    let (staged, new) = stage("python", "a.py", "x = 1\n", "f($A)", "g($A)");
    assert_eq!(staged.replacements, 0);
    assert!(staged.files.is_empty() && staged.transaction.is_empty());
    assert_eq!(new, "x = 1\n");
}

/// Issue 13, point 4: a rewrite changes only what its pattern names. Each case is
/// `(language, file, code, pattern, template, expected)`: the part the pattern left out is
/// carried over at its place.
#[test]
fn rewrites_never_delete_what_the_pattern_did_not_name() {
    let cases: &[(&str, &str, &str, &str, &str, &str)] = &[
        (
            "python",
            "a.py",
            "if x is None:\n    a()\nelse:\n    b()\n",
            "if $X is None:\n    $$$B",
            "if $X is not None:\n    $$$B",
            "if x is not None:\n    a()\nelse:\n    b()\n",
        ),
        (
            "python",
            "a.py",
            "if x:\n    a()\nelif y:\n    b()\nelse:\n    c()\n",
            "if $X: $$$B",
            "if not $X:\n    $$$B",
            "if not x:\n    a()\nelif y:\n    b()\nelse:\n    c()\n",
        ),
        (
            "python",
            "a.py",
            "class T:\n    async def f(self):\n        await g()\n",
            "def $F(self): $$$B",
            "def $F(self) -> None:\n    $$$B",
            "class T:\n    async def f(self) -> None:\n        await g()\n",
        ),
        (
            "python",
            "a.py",
            "try:\n    a()\nexcept E:\n    b()\nfinally:\n    c()\n",
            "try:\n    $$$A\nexcept E:\n    $$$B",
            "try:\n    $$$A\nexcept (E, F):\n    $$$B",
            "try:\n    a()\nexcept (E, F):\n    b()\nfinally:\n    c()\n",
        ),
        (
            "python",
            "a.py",
            "raise Bad(m) from e\n",
            "raise Bad($M)",
            "raise Worse($M)",
            "raise Worse(m) from e\n",
        ),
        (
            "java",
            "T.java",
            "class T {\n  @Test\n  public void m() { a(); }\n}\n",
            "public void $M() { $$$B }",
            "public void $M() { setUp(); $$$B }",
            "class T {\n  @Test\n  public void m() { setUp(); a(); }\n}\n",
        ),
        (
            "java",
            "T.java",
            "class T { void m() { Runnable r = new Runnable() { public void run() {} }; } }\n",
            "new Runnable()",
            "new Task()",
            "class T { void m() { Runnable r = new Task() { public void run() {} }; } }\n",
        ),
        (
            "java",
            "T.java",
            "class T { void m() { try { a(); } catch (E e) { b(); } finally { c(); } } }\n",
            "try { $$$A } catch ($T $E) { $$$B }",
            "try { $$$A } catch ($T $E) { log(); }",
            "class T { void m() { try { a(); } catch (E e) { log(); } finally { c(); } } }\n",
        ),
        (
            "rust",
            "a.rs",
            "impl<T> Show for Wrap<T> {\n    fn show(&self) {}\n}\n",
            "impl $T for $U { $$$B }",
            "impl $T for $U {\n    $$$B\n    fn extra(&self) {}\n}",
            "impl<T> Show for Wrap<T> {\n    fn show(&self) {}\n    fn extra(&self) {}\n}\n",
        ),
        (
            "rust",
            "a.rs",
            "pub async fn go() -> u8 { 1 }\n",
            "fn $F() { $$$B }",
            "fn $F() { $$$B + 1 }",
            "pub async fn go() -> u8 { 1 + 1 }\n",
        ),
        (
            "typescript",
            "a.ts",
            "import type { A, B } from \"./m\";\n",
            "import { $$$A } from \"$M\"",
            "import { $$$A } from \"./n\"",
            "import type { A, B } from \"./n\";\n",
        ),
        (
            "typescript",
            "a.ts",
            "class C {\n  private static async load(): Promise<void> {}\n}\n",
            "load() { $$$B }",
            "load() { log(); $$$B }",
            "class C {\n  private static async load(): Promise<void> { log();  }\n}\n",
        ),
        (
            "javascript",
            "a.js",
            "if (a) { b(); } else { c(); }\n",
            "if ($A) { $$$B }",
            "if (!$A) { $$$B }",
            "if (!a) { b(); } else { c(); }\n",
        ),
        (
            "go",
            "a.go",
            "package p\nfunc f() {\n\tif a {\n\t\tb()\n\t} else {\n\t\tc()\n\t}\n}\n",
            "if $A { $$$B }",
            "if !$A { $$$B }",
            "package p\nfunc f() {\n\tif !a { b() } else {\n\t\tc()\n\t}\n}\n",
        ),
        (
            "c",
            "a.c",
            "static int f(void) { return 1; }\n",
            "int $F(void) { $$$B }",
            "int $F(void) { log(); $$$B }",
            "static int f(void) { log(); return 1; }\n",
        ),
        (
            "kotlin",
            "a.kt",
            "class A {\n    @Test\n    override fun run() {\n        go()\n    }\n}\n",
            "fun $F() { $$$B }",
            "fun $F() {\n    setUp()\n    $$$B\n}",
            "class A {\n    @Test\n    override fun run() {\n        setUp()\n        go()\n    }\n}\n",
        ),
        (
            "c_sharp",
            "a.cs",
            "class A {\n    [Fact]\n    public static void M() { F(); }\n}\n",
            "void $M() { $$$B }",
            "void $M() { G(); $$$B }",
            "class A {\n    [Fact]\n    public static void M() { G(); F(); }\n}\n",
        ),
    ];
    let mut failures = Vec::new();
    for (language, file, code, pattern, template, expected) in cases {
        let (staged, new) = stage(language, file, code, pattern, template);
        if new != *expected || !staged.skipped_matches.is_empty() || staged.replacements != 1 {
            failures.push(format!(
                "{language} `{pattern}` → `{template}`:\n  got      {new:?}\n  expected {expected:?}\n  skipped {:?}",
                staged.skipped_matches
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Where a part has no place in the template, the match is left as it is and listed.
#[test]
fn a_match_whose_part_has_no_place_is_skipped_with_the_reason() {
    let code = "def f(x) -> int:\n    return x\n\ndef g(y):\n    return y\n";
    let (staged, new) = stage(
        "python",
        "a.py",
        code,
        "def $F($$$P): $$$B",
        "def $F($$$P) -> None:\n    $$$B",
    );
    // `g` is rewritten; `f` keeps its `-> int` rather than get two annotations or none.
    assert_eq!(
        new,
        "def f(x) -> int:\n    return x\n\ndef g(y) -> None:\n    return y\n"
    );
    assert_eq!(staged.replacements, 1);
    assert_eq!(staged.skipped_matches.len(), 1);
    let skipped = &staged.skipped_matches[0];
    assert_eq!((skipped.line, skipped.part.as_str()), (1, "-> int"));
    assert!(
        skipped.reason.contains("does not name"),
        "{}",
        skipped.reason
    );
    // Every match skipped: nothing is staged, the skips are still reported.
    let (staged, new) = stage(
        "java",
        "T.java",
        "class T {\n  @Test\n  public void m() {}\n}\n",
        "public void $M() { $$$B }",
        "void $M() { $$$B }",
    );
    assert_eq!(new, "class T {\n  @Test\n  public void m() {}\n}\n");
    assert!(staged.transaction.is_empty());
    assert_eq!(staged.skipped_matches[0].part, "@Test");
}

/// A rewrite never writes code that does not parse: a file whose rewritten text has a
/// syntax error the original did not have is not staged, and says where and why.
#[test]
fn a_template_that_breaks_the_syntax_is_not_staged() {
    let (staged, new) = stage("python", "a.py", "x = 1\nf(1)\n", "f($A)", "f($A");
    assert_eq!(new, "x = 1\nf(1)\n", "nothing staged");
    assert!(staged.transaction.is_empty() && staged.files.is_empty());
    assert_eq!(staged.replacements, 0);
    let broken = &staged.unparsable;
    assert_eq!(broken.len(), 1, "{broken:?}");
    assert_eq!((broken[0].line, broken[0].rewritten_line), (2, 2));
    assert_eq!(broken[0].text, "f(1");
    assert!(broken[0].error.contains("f(1"), "{}", broken[0].error);
    // Errors the file had already are not new: a rewrite elsewhere is staged.
    let code = "def broken(:\n    pass\nf(1)\n";
    let (staged, new) = stage("python", "a.py", code, "f($A)", "g($A)");
    assert!(staged.unparsable.is_empty(), "{:?}", staged.unparsable);
    assert_eq!(new, "def broken(:\n    pass\ng(1)\n");
}

/// Issue 26, item 2: a comment at the end of a header line stays there (it is not moved into
/// the body, which would then be indented one level too deep), and a closing token after a
/// captured line comment goes on its own line. Each case: `(language, file, code, pattern,
/// template, expected)`; no warning, nothing skipped, and the result parses.
#[test]
fn comments_stay_where_they_were() {
    let cases: &[(&str, &str, &str, &str, &str, &str)] = &[
        (
            "python",
            "a.py",
            "class A:\n    def f(self) -> int:  # type: ignore\n        return 1\n",
            "def $F(self, $$$A):\n    $$$B",
            "def $F(self, $$$A):\n    \"\"\"cc\"\"\"\n    $$$B",
            "class A:\n    def f(self) -> int:  # type: ignore\n        \"\"\"cc\"\"\"\n        return 1\n",
        ),
        (
            "python",
            "a.py",
            "try:\n    a()\nexcept X:  # type: ignore\n    b()\n",
            "try:\n    $$$A\nexcept $E:\n    $$$B",
            "try:\n    $$$A\nexcept $E:\n    log()\n    $$$B",
            "try:\n    a()\nexcept X:  # type: ignore\n    log()\n    b()\n",
        ),
        (
            // A comment on a line of its own before the body still moves with the body.
            "python",
            "a.py",
            "def f(self):\n    # why\n    return 1\n",
            "def $F(self):\n    $$$B",
            "def $F(self):\n    \"\"\"cc\"\"\"\n    $$$B",
            "def f(self):\n    \"\"\"cc\"\"\"\n    # why\n    return 1\n",
        ),
        (
            "go",
            "a.go",
            "package p\n\nfunc f() {\n\tif a {\n\t\tb() // trailing\n\t}\n}\n",
            "if $C { $$$B }",
            "if !$C { $$$B }",
            "package p\n\nfunc f() {\n\tif !a { b() // trailing\n\t}\n}\n",
        ),
        (
            "c",
            "a.c",
            "void f(void) {\n    if (a) {\n        b(); // trailing\n    }\n}\n",
            "if ($C) { $$$B }",
            "while ($C) { $$$B }",
            "void f(void) {\n    while (a) { b(); // trailing\n    }\n}\n",
        ),
        (
            // A comment inside a part carried over (the `else`) is kept, not warned about.
            "python",
            "a.py",
            "if x:\n    a()\nelse:\n    # c\n    b()\n",
            "if $X: $$$B",
            "if not $X:\n    $$$B",
            "if not x:\n    a()\nelse:\n    # c\n    b()\n",
        ),
    ];
    let mut failures = Vec::new();
    for (language, file, code, pattern, template, expected) in cases {
        let (staged, new) = stage(language, file, code, pattern, template);
        if new != *expected
            || !staged.warnings.is_empty()
            || !staged.skipped_matches.is_empty()
            || !staged.unparsable.is_empty()
        {
            failures.push(format!(
                "{language} `{pattern}` → `{template}`:\n  got      {new:?}\n  expected {expected:?}\n  warnings {:?}\n  skipped {:?} {:?}",
                staged.warnings, staged.skipped_matches, staged.unparsable
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A parameter list written one per line with a trailing comma: the return type the pattern
/// left out still has its place after `)` (the comma the one-line template drops is not code
/// the match needs).
#[test]
fn a_trailing_comma_does_not_hide_the_place_of_a_return_type() {
    let code =
        "class A:\n    def b(\n        self,\n        x,\n    ) -> None:\n        return 1\n";
    let (staged, new) = stage(
        "python",
        "a.py",
        code,
        "def $F(self, $$$A):\n    $$$B",
        "def $F(self, $$$A):\n    \"\"\"cc\"\"\"\n    $$$B",
    );
    assert!(
        staged.skipped_matches.is_empty(),
        "{:?}",
        staged.skipped_matches
    );
    assert_eq!(
        new,
        "class A:\n    def b(self, x) -> None:\n        \"\"\"cc\"\"\"\n        return 1\n"
    );
}

/// Issue 26, item 6: a pattern of several statements rewrites the run it matched (the
/// replaced range spans the statements).
#[test]
fn several_statements_are_rewritten_as_one_range() {
    let (staged, new) = stage(
        "c",
        "a.c",
        "void f(struct s *x) {\n  kfree(x->a);\n  x->a = NULL;\n  if (y) {\n    kfree(y);\n    y = NULL;\n  }\n  kfree(z);\n}\n",
        "kfree($P);\n$P = NULL;",
        "kfree_and_null(&$P);",
    );
    assert_eq!(staged.replacements, 2);
    assert_eq!(
        new,
        "void f(struct s *x) {\n  kfree_and_null(&x->a);\n  if (y) {\n    kfree_and_null(&y);\n  }\n  kfree(z);\n}\n"
    );
    let new = rewrite(
        "c",
        "a.c",
        "void f(void) {\n\tspin_lock(&a->lock);\n\tx = 1;\n\tg();\n\tspin_unlock(&a->lock);\n}\n",
        "spin_lock(&$L);\n$$$B\nspin_unlock(&$L);",
        "lock(&$L);\n{\n    $$$B\n}\nunlock(&$L);",
    );
    assert_eq!(
        new,
        "void f(void) {\n\tlock(&a->lock);\n\t{\n\t\tx = 1;\n\t\tg();\n\t}\n\tunlock(&a->lock);\n}\n"
    );
    let new = rewrite(
        "python",
        "a.py",
        "def f():\n    x = g(1)\n    return x\n",
        "x = $A\nreturn x",
        "return $A",
    );
    assert_eq!(new, "def f():\n    return g(1)\n");
}

/// Issue 26: a run under a label is rewritten and the label kept (Linux's error paths).
#[test]
fn a_run_under_a_label_keeps_the_label() {
    let new = rewrite(
        "c",
        "a.c",
        "int f(void) {\n\tif (x)\n\t\tgoto error;\n\treturn 0;\nerror:\n\tkfree(ep->filter_str);\n\tep->filter_str = NULL;\n\treturn -1;\n}\n",
        "kfree($P);\n$P = NULL;",
        "kfree_and_null(&$P);",
    );
    assert_eq!(
        new,
        "int f(void) {\n\tif (x)\n\t\tgoto error;\n\treturn 0;\nerror:\n\tkfree_and_null(&ep->filter_str);\n\treturn -1;\n}\n"
    );
}
