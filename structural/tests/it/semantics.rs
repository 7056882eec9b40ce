//! One test per matching rule of the crate docs.

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

use crate::common;

use cc_structural::{ContextKind, Languages, Pattern, PatternError};
use common::{count, run, texts};

#[test]
fn single_metavariable_matches_exactly_one_named_node() {
    assert_eq!(
        texts("python", "f($A)", "f(x)\nf(x, y)\nf()\nf(g(1))\n"),
        ["f(x)", "f(g(1))"]
    );
    // Not an unnamed token: `$OP` cannot stand for `+`.
    assert!(common::compile("python", "a $OP b").is_err());
}

#[test]
fn multi_metavariable_matches_zero_or_more_siblings() {
    let code = "f()\nf(1)\nf(1, 2, 3)\n";
    assert_eq!(count("python", "f($$$ARGS)", code), 3);
    assert_eq!(count("python", "f($$$)", code), 3);
    let value = run("python", "f($$$ARGS)", code);
    assert_eq!(
        value["matches"][2]["captures"]["ARGS"],
        serde_json::json!(["1", "2", "3"])
    );
    assert_eq!(
        value["matches"][0]["captures"]["ARGS"],
        serde_json::json!([])
    );
    // `$$$` binds nothing.
    assert_eq!(
        run("python", "f($$$)", code)["matches"][1]["captures"],
        serde_json::json!({})
    );
}

#[test]
fn anonymous_metavariables_do_not_bind_and_repeat_independently() {
    let code = "f(1, 2)\nf(3, 3)\n";
    assert_eq!(count("python", "f($_, $_)", code), 2);
    assert_eq!(count("python", "f($_X, $_X)", code), 2);
    assert_eq!(count("python", "f($X, $X)", code), 1);
    assert_eq!(
        run("python", "f($_, $_)", code)["matches"][0]["captures"],
        serde_json::json!({})
    );
}

#[test]
fn repeated_metavariable_must_capture_the_same_tokens() {
    let code = "a == a\na == b\nf(x) == f( x )\nf(x) == f(x # note\n)\ng(x) == g(y)\n";
    let found = run("python", "$A == $A", code);
    let texts: Vec<&str> = found["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    // Whitespace and comments aside, the tokens must be equal; the first occurrence is
    // reported.
    assert_eq!(texts, ["a == a", "f(x) == f( x )", "f(x) == f(x # note\n)"]);
    assert_eq!(found["matches"][1]["captures"]["A"], "f(x)");
    // Runs compare token by token too.
    assert_eq!(
        count(
            "python",
            "f($$$A) + g($$$A)",
            "f(1, 2) + g(1,2)\nf(1) + g(2)\n"
        ),
        1
    );
}

#[test]
fn string_content_metavariable_binds_the_content_and_other_dollars_are_literal() {
    let code = "open('a.txt')\nopen(name)\nprint(\"cost: $X\")\nprint(\"cost: 1\")\n";
    let value = run("python", "open('$FILE')", code);
    assert_eq!(value["matches"].as_array().unwrap().len(), 1);
    assert_eq!(value["matches"][0]["captures"]["FILE"], "a.txt");
    assert_eq!(
        texts("python", "print(\"cost: $X\")", code),
        ["print(\"cost: $X\")"]
    );
    // The same holds in a language that needs no substitute character.
    assert_eq!(
        count("javascript", "require('$M')", "require('fs'); require(x);"),
        1
    );
}

#[test]
fn metavariables_parse_in_every_language() {
    let cases = [
        ("python", "foo($A, $$$R)", "foo(1, 2)"),
        ("rust", "foo($A, $$$R)", "fn m() { foo(1, 2); }"),
        ("javascript", "foo($A, $$$R)", "foo(1, 2);"),
        ("typescript", "foo($A, $$$R)", "foo(1, 2);"),
        ("tsx", "foo($A, $$$R)", "foo(1, 2);"),
        ("go", "foo($A, $$$R)", "package p\nfunc m() { foo(1, 2) }"),
        ("c", "foo($A, $$$R)", "void m() { foo(1, 2); }"),
        ("cpp", "foo($A, $$$R)", "void m() { foo(1, 2); }"),
        (
            "java",
            "foo($A, $$$R)",
            "class A { void m() { foo(1, 2); } }",
        ),
        ("dart", "foo($A, $$$R)", "void m() { foo(1, 2); }"),
        ("bash", "foo $A $$$R", "foo 1 2"),
        ("json", "[$A, $$$R]", "[1, 2]"),
        ("ruby", "foo($A, $$$R)", "foo(1, 2)"),
        (
            "c_sharp",
            "foo($A, $$$R)",
            "class A { void m() { foo(1, 2); } }",
        ),
        ("kotlin", "foo($A, $$$R)", "fun m() { foo(1, 2) }"),
    ];
    for (language, pattern, code) in cases {
        let value = run(language, pattern, code);
        assert_eq!(
            value["matches"].as_array().map(Vec::len),
            Some(1),
            "{language}: {value}"
        );
        assert_eq!(
            value["matches"][0]["captures"]["A"], "1",
            "{language}: {value}"
        );
        assert_eq!(
            value["matches"][0]["captures"]["R"],
            serde_json::json!(["2"]),
            "{language}"
        );
    }
}

#[test]
fn bash_lower_case_dollar_stays_a_parameter_expansion() {
    let code = "echo $abc\necho $other\necho hello\n";
    assert_eq!(texts("bash", "echo $abc", code), ["echo $abc"]);
    assert_eq!(count("bash", "echo $A", code), 3);
}

#[test]
fn ladder_names_the_context_and_can_be_forced() {
    let languages = Languages::builtin();
    let java = languages.by_name("java").unwrap();
    let member = Pattern::new(java.clone(), "private int x;", None).unwrap();
    assert_eq!(member.context(), ContextKind::ClassMember);
    let statement = Pattern::new(java.clone(), "int x = 1;", None).unwrap();
    assert_eq!(statement.context(), ContextKind::Statement);
    let forced = Pattern::new(java.clone(), "int x = 1;", Some(ContextKind::ClassMember)).unwrap();
    assert_eq!(forced.context(), ContextKind::ClassMember);
    // A forced context that cannot hold the fragment is an error, not an empty search.
    let python = languages.by_name("python").unwrap();
    assert!(matches!(
        Pattern::new(python, "x = 1", Some(ContextKind::TopLevel)),
        Err(PatternError::NoSuchContext { .. })
    ));
}

#[test]
fn unparsable_pattern_lists_every_context_tried() {
    let error = common::compile("java", "foo(").unwrap_err();
    let PatternError::Unparsable { attempts, .. } = &error else {
        panic!("{error}");
    };
    let tried: Vec<ContextKind> = attempts.iter().map(|a| a.context).collect();
    assert_eq!(
        tried,
        [
            ContextKind::Statement,
            ContextKind::Expression,
            ContextKind::ClassMember,
            ContextKind::TopLevel
        ]
    );
    assert!(attempts.iter().all(|a| a.line == Some(1)), "{attempts:?}");
    assert!(error.to_string().contains("statement: "), "{error}");
}

#[test]
fn every_named_child_must_be_matched() {
    assert_eq!(
        texts("python", "import os", "import os, sys\nimport os\n"),
        ["import os"]
    );
    assert_eq!(
        texts("javascript", "let x", "let x = 1;\nlet x;\n"),
        ["let x;"]
    );
    let code = "if a:\n    yield\n    cleanup()\nif b:\n    yield\n";
    assert_eq!(texts("python", "if $A: yield", code), ["if b:\n    yield"]);
}

#[test]
fn omittable_optional_parts_may_be_left_out() {
    let code = "@dec\ndef f(a: int) -> int:\n    return a\n\ndef g(): pass\n";
    assert_eq!(count("python", "def $F($$$P): $$$B", code), 2);
    // Given, the part must match.
    assert_eq!(count("python", "def $F($$$P) -> str: $$$B", code), 0);
    assert_eq!(
        count(
            "typescript",
            "interface I { $$$ }",
            "interface I<T> { x: T }\ninterface J {}"
        ),
        1
    );
    assert_eq!(
        count(
            "rust",
            "if $C { $$$B }",
            "fn m() { if a { b() } else { c() } }"
        ),
        1
    );
    assert_eq!(
        texts(
            "python",
            "if $A: $$$B",
            "if a:\n    b()\nelif c:\n    d()\n"
        ),
        ["if a:\n    b()\nelif c:\n    d()"]
    );
    // The omitted text is reported with the match.
    let pattern = common::compile("python", "def $F($$$P): $$$B").unwrap();
    let found = common::find(&pattern, code);
    let omitted: Vec<&str> = found.matches[0]
        .omitted
        .iter()
        .map(|r| &code[r.clone()])
        .collect();
    assert_eq!(omitted, ["-> int"]);
}

#[test]
fn unnamed_tokens_and_comments_in_the_code_are_skipped() {
    // `async` is an unnamed token the pattern does not spell; comments are skipped.
    let code = "async def f():\n    pass\ncall(a, # first\n     b)\n";
    assert_eq!(count("python", "def $F(): $$$B", code), 1);
    assert_eq!(
        texts("python", "call(a, b)", code),
        ["call(a, # first\n     b)"]
    );
    // A token the pattern spells must be there.
    assert_eq!(count("python", "$A + $B", "a - b\n"), 0);
}

#[test]
fn multi_metavariable_backtracks_to_a_later_candidate() {
    let code = "function f() {\n  if (a) { x(); }\n  y();\n  if (b) {}\n  z();\n}\n";
    let value = run("javascript", "{ $$$A if ($X) {} $$$B }", code);
    assert_eq!(value["matches"].as_array().unwrap().len(), 1, "{value}");
    assert_eq!(value["matches"][0]["captures"]["X"], "b");
    assert_eq!(
        value["matches"][0]["captures"]["A"],
        serde_json::json!(["if (a) { x(); }", "y();"])
    );
    assert_eq!(
        value["matches"][0]["captures"]["B"],
        serde_json::json!(["z();"])
    );
}

#[test]
fn zero_length_multi_metavariable_absorbs_its_separator() {
    let code = "f(x)\nf(x, y)\ng(y)\n";
    assert_eq!(texts("python", "f($A, $$$R)", code), ["f(x)", "f(x, y)"]);
    assert_eq!(texts("python", "f($$$R, $A)", code), ["f(x)", "f(x, y)"]);
}

#[test]
fn pre_filter_never_skips_a_file_that_matches() {
    // Tokens a match may lack are not required of a file: a separator taken along by an
    // empty `$$$`, a `;` that a line end stands for. (`common::find` checks every case.)
    for (language, pattern, code, literals) in [
        ("python", "f($A, $$$R)", "f(x)\n", &["f", "(", ")"][..]),
        ("python", "f($$$R, $A)", "f(x)\n", &["f", "(", ")"]),
        ("javascript", "foo();", "foo()\n", &["foo", "(", ")"]),
        (
            "python",
            "warnings.warn($$$A)",
            "warnings.warn(1)\n",
            &["warnings", "warn", "."],
        ),
    ] {
        let pattern = common::compile(language, pattern).unwrap();
        let literals: Vec<&[u8]> = literals.iter().map(|l| l.as_bytes()).collect();
        assert_eq!(pattern.literals(), literals, "{}", pattern.text());
        assert_eq!(
            common::find(&pattern, code).matches.len(),
            1,
            "{}",
            pattern.text()
        );
        assert!(!pattern.may_match(b"x = 1\n"), "{}", pattern.text());
    }
}

#[test]
fn code_in_strings_and_comments_never_matches() {
    let code = "x = 'eval(a)'\n# eval(b)\n\"\"\"eval(c)\"\"\"\neval(d)\n";
    assert_eq!(texts("python", "eval($A)", code), ["eval(d)"]);
}

#[test]
fn nested_matches_are_all_found() {
    let code = "f(f(f(1)))\n";
    assert_eq!(
        texts("python", "f($A)", code),
        ["f(f(f(1)))", "f(f(1))", "f(1)"]
    );
}

#[test]
fn only_multi_pattern_is_refused() {
    assert!(matches!(
        common::compile("python", "$$$A"),
        Err(PatternError::OnlyMulti(_))
    ));
    assert!(matches!(
        common::compile("python", "  "),
        Err(PatternError::Empty)
    ));
}

#[test]
fn backtracking_is_bounded_and_a_give_up_is_counted() {
    let args: Vec<String> = (0..300).map(|i| format!("a{i}")).collect();
    let code = format!("f({})\n", args.join(", "));
    let pattern =
        common::compile("python", "f($$$A, $X, $$$B, $Y, $$$C, $Z, $$$D, never)").unwrap();
    let found = common::find(&pattern, &code);
    assert!(found.matches.is_empty());
    assert_eq!(found.exhausted, 1);
}

/// Issue 13, points 1 and 2: statement fragments of C and C++ and Kotlin declarations with
/// modifiers are read as what they say, not as an expression that matches nothing.
#[test]
fn statement_fragments_and_modified_declarations_match_what_they_say() {
    let c = "int f(int *p) {\n  PyObject *o = g();\n  if (x) return -1;\n  while (1) break;\n  if (y) return;\n  return *p;\n}\n";
    let cases: &[(&str, &str, &str, &[&str])] = &[
        ("c", "return -1;", c, &["return -1;"]),
        ("c", "return;", c, &["return;"]),
        ("c", "break;", c, &["break;"]),
        ("c", "return *p;", c, &["return *p;"]),
        ("c", "PyObject *$X = $Y;", c, &["PyObject *o = g();"]),
        ("c", "return -1", c, &["return -1;"]),
        ("cpp", "return -1;", c, &["return -1;"]),
        ("cpp", "return;", c, &["return;"]),
        ("cpp", "break;", c, &["break;"]),
        ("cpp", "return *p;", c, &["return *p;"]),
        ("cpp", "PyObject *$X = $Y;", c, &["PyObject *o = g();"]),
    ];
    for (language, pattern, code, expected) in cases {
        assert_eq!(
            &texts(language, pattern, code),
            expected,
            "{language} `{pattern}`"
        );
        assert_eq!(
            common::compile(language, pattern).unwrap().context(),
            ContextKind::Statement,
            "{language} `{pattern}`"
        );
    }
    let kotlin = "class A {\n    override fun run() {\n        go()\n    }\n    private fun x(a: Int) {}\n    internal fun y() {}\n    open fun z() {}\n    fun plain() {}\n}\n";
    for modifier in ["override", "private", "internal", "open"] {
        let pattern = format!("{modifier} fun $F($$$) {{ $$$ }}");
        let found = texts("kotlin", &pattern, kotlin);
        assert_eq!(found.len(), 1, "`{pattern}`: {found:?}");
        assert!(found[0].starts_with(modifier), "`{pattern}`: {found:?}");
        assert_eq!(
            common::compile("kotlin", &pattern).unwrap().context(),
            ContextKind::ClassMember
        );
    }
    // Without modifiers, every function (modifiers are omittable).
    assert_eq!(count("kotlin", "fun $F($$$) { $$$ }", kotlin), 5);
}

/// Issue 13, point 3: one omittable-part rule in every language (the README's table). Each
/// case: a pattern that leaves the part out matches code with it.
#[test]
fn omittable_parts_follow_one_rule_in_every_language() {
    let cases: &[(&str, &str, &str)] = &[
        // else / elif
        ("python", "if $A: $$$B", "if a:\n    b()\nelse:\n    c()\n"),
        (
            "javascript",
            "if ($A) { $$$B }",
            "if (a) { b(); } else { c(); }",
        ),
        (
            "go",
            "if $A { $$$B }",
            "package p\nfunc f() { if a { b() } else { c() } }",
        ),
        (
            "c",
            "if ($A) { $$$B }",
            "void f(void) { if (a) { b(); } else { c(); } }",
        ),
        ("ruby", "if $A\n  $$$B\nend", "if a\n  b\nelse\n  c\nend\n"),
        ("bash", "if $A; then $$$B; fi", "if a; then b; else c; fi\n"),
        (
            "kotlin",
            "if ($A) { $$$B }",
            "fun f() { if (a) { b() } else { c() } }",
        ),
        // finally / ensure
        (
            "python",
            "try:\n    $$$A\nexcept E:\n    $$$B",
            "try:\n    a()\nexcept E:\n    b()\nfinally:\n    c()\n",
        ),
        (
            "java",
            "try { $$$A } catch (E e) { $$$B }",
            "class T { void m() { try { a(); } catch (E e) { b(); } finally { c(); } } }",
        ),
        (
            "javascript",
            "try { $$$A } catch (e) { $$$B }",
            "try { a(); } catch (e) { b(); } finally { c(); }",
        ),
        (
            "c_sharp",
            "try { $$$A } catch (E e) { $$$B }",
            "class T { void M() { try { A(); } catch (E e) { B(); } finally { C(); } } }",
        ),
        (
            "kotlin",
            "try { $$$A } catch (e: E) { $$$B }",
            "fun f() { try { a() } catch (e: E) { b() } finally { c() } }",
        ),
        (
            "ruby",
            "begin\n  $$$A\nrescue E\n  $$$B\nend",
            "begin\n  a\nrescue E\n  b\nensure\n  c\nend\n",
        ),
        // raise … from
        ("python", "raise $E", "raise Bad() from e\n"),
        // the class body of `new`
        (
            "java",
            "new $T()",
            "class T { Object o = new Runnable() { public void run() {} }; }",
        ),
        // modifiers
        (
            "java",
            "void $M() { $$$B }",
            "class T { public static void m() {} }",
        ),
        (
            "c_sharp",
            "void $M() { $$$B }",
            "class T { public static void M() {} }",
        ),
        (
            "kotlin",
            "fun $F() { $$$B }",
            "class T { private inline fun f() {} }",
        ),
        ("rust", "fn $F() { $$$B }", "pub(crate) async fn f() {}"),
        (
            "typescript",
            "$M() { $$$B }",
            "class T { private static m() {} }",
        ),
        (
            "c",
            "int $F(void) { $$$B }",
            "static int f(void) { return 1; }",
        ),
        // decorators and annotations
        ("python", "def $F(): $$$B", "@cached\ndef f():\n    pass\n"),
        ("java", "void $M() {}", "class T { @Test void m() {} }"),
        ("kotlin", "fun $F() {}", "class T { @Test fun f() {} }"),
        ("c_sharp", "void $M() {}", "class T { [Fact] void M() {} }"),
        ("typescript", "$M() {}", "class T { @dec m() {} }"),
        (
            "rust",
            "struct $S { $$$F }",
            "#[derive(Debug)]\nstruct S { a: u8 }",
        ),
        // type parameters
        (
            "rust",
            "impl $T for $U { $$$B }",
            "impl<T> Show for W<T> {}",
        ),
        (
            "typescript",
            "function $F($$$P) { $$$B }",
            "function f<T>(x: T) {}",
        ),
        ("java", "void $M() {}", "class T { <X> void m() {} }"),
        ("go", "func $F() { $$$B }", "package p\nfunc f[T any]() {}"),
        ("c_sharp", "void $M() {}", "class T { void M<X>() {} }"),
        ("kotlin", "fun $F() {}", "class T { fun <X> f() {} }"),
        ("dart", "void $F() {}", "void f<T>() {}"),
        // return types
        (
            "python",
            "def $F($$$P): $$$B",
            "def f(x) -> int:\n    return x\n",
        ),
        ("rust", "fn $F() { $$$B }", "fn f() -> u8 { 1 }"),
        (
            "typescript",
            "function $F() { $$$B }",
            "function f(): number { return 1; }",
        ),
        (
            "go",
            "func $F() { $$$B }",
            "package p\nfunc f() int { return 1 }",
        ),
        ("kotlin", "fun $F() { $$$B }", "fun f(): Int { return 1 }"),
        ("dart", "$F() { $$$B }", "int f() { return 1; }"),
    ];
    let mut failures = Vec::new();
    for (language, pattern, code) in cases {
        let found = std::panic::catch_unwind(|| count(language, pattern, code)).unwrap_or(0);
        if found == 0 {
            failures.push(format!("{language} `{pattern}` in `{code}`"));
        }
    }
    assert!(failures.is_empty(), "no match:\n{}", failures.join("\n"));
}

/// Two statements where a scaffold is the whole file are a run of statements (issue 26,
/// item 6), not a pattern of a whole file holding exactly them: they match consecutive
/// statements of a longer file, and not the same statements apart.
#[test]
fn several_statements_match_a_run_not_the_whole_file() {
    for (language, pattern, code, expected) in [
        (
            "python",
            "import os\nimport sys",
            "import re\nimport os\nimport sys\nx = 1\nimport os\ny = 2\nimport sys\n",
            1,
        ),
        (
            "rust",
            "fn a() {}\nfn b() {}",
            "use x;\nfn a() {}\nfn b() {}\nfn c() {}\nmod m {\n    fn a() {}\n    fn b() {}\n}\n",
            2,
        ),
        (
            "bash",
            "echo a\necho b",
            "echo z\necho a\necho b\necho a\n",
            1,
        ),
    ] {
        let compiled = common::compile(language, pattern).unwrap();
        assert!(compiled.is_sequence(), "{language}");
        assert_eq!(count(language, pattern, code), expected, "{language}");
    }
}

/// Issue 26, item 6: a pattern of several statements matches consecutive statements of one
/// block, its metavariables shared across them, in every language with statement blocks:
/// `(language, pattern, code, expected matches)`. Each code also holds the statements apart
/// or with another name, which must not match.
#[test]
fn several_statements_match_consecutive_statements_of_a_block() {
    let cases: &[(&str, &str, &str, usize)] = &[
        (
            "c",
            "kfree($P);\n$P = NULL;",
            "void f(void) {\n  kfree(a);\n  a = NULL;\n  kfree(b);\n  c = NULL;\n  kfree(d);\n  e();\n  d = NULL;\n  if (x) { kfree(x->p); x->p = NULL; }\n}\n",
            2,
        ),
        (
            "c",
            "spin_lock(&$L);\n$$$B\nspin_unlock(&$L);",
            "void f(void) {\n  spin_lock(&l);\n  a();\n  b();\n  spin_unlock(&l);\n  spin_lock(&m);\n  spin_unlock(&n);\n}\n",
            1,
        ),
        (
            "cpp",
            "mutex.lock();\n$$$B\nmutex.unlock();",
            "void f() {\n  mutex.lock();\n  a();\n  mutex.unlock();\n}\n",
            1,
        ),
        (
            "python",
            "x = $A\nreturn x",
            "def f():\n    x = g()\n    return x\n\ndef h():\n    x = g()\n    log(x)\n    return x\n",
            1,
        ),
        (
            "rust",
            "let $X = $E;\n$X",
            "fn f() -> u8 {\n    let a = g();\n    a\n}\nfn h() -> u8 {\n    let a = g();\n    b\n}\n",
            1,
        ),
        (
            "javascript",
            "const $X = $E;\nreturn $X;",
            "function f() {\n  const a = g();\n  return a;\n}\nfunction h() {\n  const a = g();\n  return b;\n}\n",
            1,
        ),
        (
            "typescript",
            "const $X = $E;\nreturn $X;",
            "function f(): number {\n  const a = g();\n  return a;\n}\n",
            1,
        ),
        (
            "tsx",
            "const $X = $E;\nreturn $X;",
            "function f() {\n  const a = <div />;\n  return a;\n}\n",
            1,
        ),
        (
            "go",
            "$X, err := $E\nif err != nil {\n\treturn err\n}",
            "package p\n\nfunc f() error {\n\tx, err := g()\n\tif err != nil {\n\t\treturn err\n\t}\n\ty, err := h()\n\tuse(y)\n\tif err != nil {\n\t\treturn err\n\t}\n\treturn nil\n}\n",
            1,
        ),
        (
            "java",
            "lock.lock();\n$$$B\nlock.unlock();",
            "class A {\n  void f() {\n    lock.lock();\n    a();\n    lock.unlock();\n  }\n}\n",
            1,
        ),
        (
            "c_sharp",
            "var $X = $E;\nreturn $X;",
            "class A {\n  int F() {\n    var a = G();\n    return a;\n  }\n}\n",
            1,
        ),
        (
            "kotlin",
            "val $X = $E\nreturn $X",
            "fun f(): Int {\n    val a = g()\n    return a\n}\n",
            1,
        ),
        (
            "dart",
            "var $X = $E;\nreturn $X;",
            "int f() {\n  var a = g();\n  return a;\n}\n",
            1,
        ),
        (
            "ruby",
            "x = $A\nreturn x",
            "def f\n  x = g\n  return x\nend\n",
            1,
        ),
        (
            "bash",
            "cd $D\n$$$B\ncd -",
            "f() {\n  cd /tmp\n  ls\n  cd -\n}\n",
            1,
        ),
    ];
    let mut failures = Vec::new();
    for (language, pattern, code, expected) in cases {
        let compiled = match common::compile(language, pattern) {
            Ok(compiled) => compiled,
            Err(error) => {
                failures.push(format!("{language} `{pattern}`: {error}"));
                continue;
            }
        };
        let found = common::find(&compiled, code).matches.len();
        if !compiled.is_sequence() || found != *expected {
            failures.push(format!(
                "{language} `{pattern}`: {found} matches, expected {expected} (sequence: {})",
                compiled.is_sequence()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Shared metavariables bind across the statements.
    let c = common::compile("c", "kfree($P);\n$P = NULL;").unwrap();
    let code = "void f(void) {\n  kfree(x->p);\n  x->p = NULL;\n}\n";
    let found = common::find(&c, code);
    assert_eq!(
        &code[found.matches[0].range.clone()],
        "kfree(x->p);\n  x->p = NULL;"
    );
    // A run may not start with `$$$`, nor be only metavariables.
    assert!(matches!(
        common::compile("python", "$$$A\nreturn x"),
        Err(PatternError::LooseRun(_))
    ));
    assert!(matches!(
        common::compile("python", "$A\n$B"),
        Err(PatternError::LooseRun(_))
    ));
}

/// Issue 26: a run may begin at a labeled statement (Linux's `error:\n kfree(p);\n p = NULL;`,
/// kernel/trace/trace_eprobe.c); the label stays outside the match. A label inside `$$$B`
/// is part of the body; a run never ends at a labeled statement (a jump lands there, so the
/// statements before it are not a run).
#[test]
fn a_run_may_begin_at_a_labeled_statement() {
    let cases: &[(&str, &str, &str, usize, &str)] = &[
        (
            "c",
            "kfree($P);\n$P = NULL;",
            "int f(void) {\n  if (x)\n    goto error;\n  return 0;\nerror:\n  kfree(ep->filter_str);\n  ep->filter_str = NULL;\n  return -1;\n}\n",
            1,
            "kfree(ep->filter_str);\n  ep->filter_str = NULL;",
        ),
        (
            "c",
            "kfree($P);\n$P = NULL;",
            "void f(void) {\nfree: err:\n  kfree(a);\n  a = NULL;\n}\n",
            1,
            "kfree(a);\n  a = NULL;",
        ),
        (
            "c",
            "kfree($P);\n$P = NULL;",
            "void f(void) {\n  kfree(a);\nout:\n  a = NULL;\n}\n",
            0,
            "",
        ),
        (
            "c",
            "spin_lock(&$L);\n$$$B\nspin_unlock(&$L);",
            "void f(void) {\n  spin_lock(&l);\n  if (x)\n    goto out;\n  a();\nout:\n  b();\n  spin_unlock(&l);\n}\n",
            1,
            "spin_lock(&l);\n  if (x)\n    goto out;\n  a();\nout:\n  b();\n  spin_unlock(&l);",
        ),
        (
            "javascript",
            "const $X = $E;\nreturn $X;",
            "function f() {\n  outer: const a = g();\n  return a;\n}\n",
            1,
            "const a = g();\n  return a;",
        ),
        (
            "go",
            "$X, err := $E\nif err != nil {\n\treturn err\n}",
            "package p\n\nfunc f() error {\nretry:\n\tx, err := g()\n\tif err != nil {\n\t\treturn err\n\t}\n\tuse(x)\n\tgoto retry\n}\n",
            1,
            "x, err := g()\n\tif err != nil {\n\t\treturn err\n\t}",
        ),
        (
            "java",
            "lock.lock();\n$$$B\nlock.unlock();",
            "class A {\n  void f() {\n    l: lock.lock();\n    a();\n    lock.unlock();\n  }\n}\n",
            1,
            "lock.lock();\n    a();\n    lock.unlock();",
        ),
    ];
    let mut failures = Vec::new();
    for (language, pattern, code, expected, text) in cases {
        let compiled = common::compile(language, pattern).unwrap();
        let found = common::find(&compiled, code);
        if found.matches.len() != *expected {
            failures.push(format!(
                "{language} `{pattern}` on {code:?}: {} matches, expected {expected}",
                found.matches.len()
            ));
        } else if let Some(m) = found.matches.first() {
            if &code[m.range.clone()] != *text {
                failures.push(format!("{language}: matched {:?}", &code[m.range.clone()]));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
