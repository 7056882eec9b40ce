//! Per language: match and non-match cases, snapshotted as JSON (`cargo insta review` to
//! update). Each language includes the fragments that need its scaffold ladder.

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

use crate::common;

#[test]
fn python() {
    let code = "import os, sys\nimport os\n\n@cache\ndef f(a: int) -> int:\n    if a:\n        yield a\n        print(a)\n    return g(a, 'x')\n\ndef h(): pass\n";
    case!(
        "python",
        "def_matches_annotated_and_decorated",
        "def $F($$$P): $$$B",
        code
    );
    case!("python", "import_is_exact", "import os", code);
    case!(
        "python",
        "if_does_not_swallow_statements",
        "if $A: yield $A",
        code
    );
    case!("python", "call_with_rest", "g($A, $$$REST)", code);
    case!("python", "string_content_binds", "g($X, '$S')", code);
    case!(
        "python",
        "return_type_must_match_when_given",
        "def $F($$$P) -> str: $$$B",
        code
    );
    case!("python", "unparsable", "def (:", code);
}

#[test]
fn rust() {
    let code = "use std::io;\nfn main() {\n    let x = 1;\n    let y = compute(x, 2);\n    if x > 0 { println!(\"{}\", x); } else { return; }\n}\nfn compute<T>(a: T, b: i32) -> T { a }\n";
    case!(
        "rust",
        "let_without_semicolon_is_supplied",
        "let $A = 1",
        code
    );
    case!(
        "rust",
        "fn_without_return_type_matches_all",
        "fn $F($$$P) { $$$B }",
        code
    );
    case!(
        "rust",
        "if_without_else_matches_if_else",
        "if $C { $$$B }",
        code
    );
    case!("rust", "macro_call", "println!($$$A)", code);
    case!("rust", "use_is_exact", "use std::fs;", code);
    case!("rust", "binary_operator_must_match", "$A < $B", code);
}

#[test]
fn javascript() {
    let code = "let v;\nlet w = 1;\nfunction f(a, b) { console.log(a, b); return a + b; }\nconst s = `t ${f(1, 2)}`;\n// f(3, 4)\nconst q = \"f(5, 6)\";\nclass K { static m() { if (a) { b(); } else { c(); } } }\n";
    case!(
        "javascript",
        "let_x_does_not_match_initialised",
        "let w",
        code
    );
    case!(
        "javascript",
        "call_in_template_but_not_in_string_or_comment",
        "f($A, $B)",
        code
    );
    case!("javascript", "member_call", "console.log($$$A)", code);
    case!(
        "javascript",
        "if_matches_with_else",
        "if ($C) { $$$B }",
        code
    );
    case!(
        "javascript",
        "class_member_context",
        "static m() { $$$ }",
        code
    );
    case!("javascript", "return_of_sum", "return $A + $A", code);
}

#[test]
fn typescript() {
    let code = "interface I<T> { x: T; }\ninterface J { y: number }\nfunction f<T>(a: T): T { return a; }\nclass C { private x: number = 1; m(): void {} }\nlet n: number = 5;\n";
    case!(
        "typescript",
        "interface_matches_generic",
        "interface I { $$$ }",
        code
    );
    case!(
        "typescript",
        "function_without_annotations_matches_annotated",
        "function $F($$$P) { $$$B }",
        code
    );
    case!(
        "typescript",
        "member_with_modifier_needs_class_member",
        "private x: number = 1;",
        code
    );
    case!("typescript", "typed_let", "let $X: number = $V", code);
    case!(
        "typescript",
        "type_annotation_must_match",
        "let $X: string = $V",
        code
    );
}

#[test]
fn tsx() {
    let code = "const a = <div className=\"x\">{name}</div>;\nconst b = <Foo bar={1} />;\nfunction C(p: P): JSX.Element { return <span>{p.x}</span>; }\n";
    case!(
        "tsx",
        "element_with_expression_child",
        "<div className=\"x\">{$X}</div>",
        code
    );
    case!("tsx", "self_closing_with_attributes", "<$C $$$P />", code);
    case!(
        "tsx",
        "other_tag_does_not_match",
        "<span>{$X}</span>",
        "const a = <div>{name}</div>;"
    );
    case!(
        "tsx",
        "function_returning_jsx",
        "function $F($$$P) { $$$B }",
        code
    );
    case!("tsx", "jsx_inside_return", "return <span>{$E}</span>", code);
}

#[test]
fn go() {
    let code = "package main\n\nimport \"fmt\"\n\nfunc add(a int, b int) int {\n\tfmt.Println(a)\n\treturn a + b\n}\n\nfunc empty() {}\n\nfunc main() {\n\tx := add(1, 2)\n\tif x > 2 {\n\t\tfmt.Println(\"big\")\n\t} else {\n\t\tfmt.Println(\"small\")\n\t}\n}\n";
    case!(
        "go",
        "func_needs_top_level_and_ignores_result",
        "func $F($$$P) { $$$B }",
        code
    );
    case!("go", "call_in_function_body", "fmt.Println($$$A)", code);
    case!("go", "short_var_declaration", "$X := add($$$A)", code);
    case!("go", "if_matches_with_else", "if $C { $$$B }", code);
    case!("go", "import_needs_top_level", "import \"fmt\"", code);
    case!(
        "go",
        "other_package_does_not_match",
        "log.Println($$$A)",
        code
    );
}

#[test]
fn c() {
    let code = "#include <stdio.h>\nint add(int a, int b) { return a + b; }\nvoid f(void) {\n  printf(\"%d\", add(1, 2));\n  int y = 3;\n  if (y) { puts(\"y\"); } else { puts(\"n\"); }\n}\n";
    case!("c", "call_as_expression", "printf($$$A)", code);
    case!("c", "function_definition", "int $F($$$P) { $$$B }", code);
    case!("c", "declaration_statement", "int $X = $V;", code);
    case!("c", "if_with_block_body", "if ($C) { $$$B }", code);
    case!("c", "include", "#include <stdio.h>", code);
    case!("c", "wrong_arity_does_not_match", "add($A)", code);
}

#[test]
fn cpp() {
    let code = "#include <vector>\nclass A { public: int x; void m(); };\nint main() {\n  std::vector<int> v;\n  for (auto x : v) { std::cout << x; }\n  auto p = std::make_unique<A>();\n  return 0;\n}\n";
    case!("cpp", "range_for", "for (auto $X : $C) { $$$B }", code);
    case!("cpp", "stream_output", "std::cout << $A", code);
    case!("cpp", "template_call", "std::make_unique<$T>($$$A)", code);
    case!("cpp", "class_specifier", "class $C { $$$ }", code);
    case!(
        "cpp",
        "class_specifier_with_its_semicolon",
        "class $C { $$$B };",
        code
    );
    case!("cpp", "return_literal", "return 0;", code);
    case!(
        "cpp",
        "return_other_literal_does_not_match",
        "return 1;",
        code
    );
}

#[test]
fn java() {
    let code = "import java.util.List;\nclass A {\n  private int x;\n  int y = 2;\n  void m() {}\n  public void n() {}\n  @Override void o() {}\n  <T> void p() { foo(1); if (a) { b(); } else { c(); } }\n}\n";
    case!(
        "java",
        "method_with_annotation_and_type_parameters",
        "void $M() { $$$ }",
        code
    );
    case!(
        "java",
        "private_field_tries_class_member_first",
        "private int x;",
        code
    );
    case!("java", "call_as_expression", "foo($A)", code);
    case!("java", "if_matches_with_else", "if ($C) { $$$B }", code);
    case!("java", "import", "import java.util.List;", code);
    case!("java", "wrong_type_does_not_match", "private long x;", code);
}

#[test]
fn dart() {
    let code = "class A {\n  final int x;\n  A(this.x);\n  @override\n  String toString() { return 'A'; }\n}\nvoid main() {\n  print('hi');\n  var a = A(1);\n  if (a.x > 0) { print(a); } else { print(0); }\n}\n";
    case!("dart", "call_as_expression", "print($A)", code);
    case!(
        "dart",
        "block_body_needs_a_supplied_semicolon",
        "if ($C) { $$$B }",
        code
    );
    case!("dart", "var_declaration", "var $X = $V;", code);
    case!(
        "dart",
        "method_prefers_class_member",
        "String toString() { $$$B }",
        code
    );
    case!("dart", "field_declaration", "final int x;", code);
    case!(
        "dart",
        "function_shape_matches_methods_and_top_level_functions",
        "void $F() { $$$B }",
        "void main() { run(); }\nclass A { void m() { void local() {} } }\n"
    );
    case!("dart", "other_name_does_not_match", "debugPrint($A)", code);
}

#[test]
fn bash() {
    let code = "#!/bin/bash\necho \"hello $USER\"\nif [ -f x ]; then\n  rm -f x\nfi\nfor f in *.txt; do echo $f; done\nFOO=bar\nls -la | grep foo\n";
    case!("bash", "lower_case_dollar_stays_code", "echo $f", code);
    case!(
        "bash",
        "dollar_inside_string_is_literal",
        "echo \"hello $USER\"",
        code
    );
    case!(
        "bash",
        "if_then_fi_with_newline_terminator",
        "if [ $C ]; then $$$B; fi",
        code
    );
    case!(
        "bash",
        "for_loop_needs_ascii_substitute",
        "for $V in $$$L; do $$$B; done",
        code
    );
    case!("bash", "pipeline", "$A | grep $B", code);
    case!("bash", "other_flag_does_not_match", "rm -rf $F", code);
}

#[test]
fn json() {
    let code = "{\n  \"name\": \"x\",\n  \"version\": \"1.0\",\n  \"deps\": {\"a\": \"^1\", \"b\": \"^2\"},\n  \"list\": [1, 2, 3],\n  \"nested\": {\"name\": \"y\"}\n}\n";
    case!("json", "pair_needs_an_object", "\"name\": $V", code);
    case!("json", "string_content_binds", "\"name\": \"$V\"", code);
    case!("json", "object_with_rest", "{\"a\": $A, $$$R}", code);
    case!("json", "array", "[$$$X]", code);
    case!("json", "value_must_match", "\"version\": \"2.0\"", code);
}

#[test]
fn ruby() {
    let code = "require \"json\"\nclass Foo < Bar\n  def initialize(a, b = 1)\n    @a = a\n  end\n  def go\n    puts \"hi\"\n    if x\n      y\n    else\n      z\n    end\n  end\nend\n[1, 2].each { |x| p x }\n";
    case!(
        "ruby",
        "method_without_parameters",
        "def $M\n  $$$B\nend",
        code
    );
    case!(
        "ruby",
        "class_needs_a_constant_substitute",
        "class $C < $P\n  $$$\nend",
        code
    );
    case!("ruby", "if_matches_with_else", "if $C\n  $$$B\nend", code);
    case!("ruby", "block_call", "$X.each { |$V| $$$B }", code);
    case!(
        "ruby",
        "require_binds_string_content",
        "require \"$M\"",
        code
    );
    case!("ruby", "puts_other_does_not_match", "puts \"bye\"", code);
}

#[test]
fn c_sharp() {
    let code = "using System;\nnamespace N {\n  class A {\n    private int x = 1;\n    public void M(int a) { Console.WriteLine(a); if (a > 0) { F(); } else { G(); } }\n    [Obsolete] void O() {}\n    T Id<T>(T t) { return t; }\n  }\n}\n";
    case!(
        "c_sharp",
        "using_directive_tries_top_level_first",
        "using $N;",
        code
    );
    case!("c_sharp", "call", "Console.WriteLine($$$A)", code);
    case!(
        "c_sharp",
        "method_with_attribute",
        "void $M() { $$$ }",
        code
    );
    case!(
        "c_sharp",
        "generic_method_without_type_parameters",
        "$T Id($$$P) { $$$B }",
        code
    );
    case!("c_sharp", "if_matches_with_else", "if ($C) { $$$B }", code);
    case!(
        "c_sharp",
        "function_shape_matches_methods_and_top_level_functions",
        "void $F() { $$$B }",
        "void Main() { Run(); }\nclass A { void M() { void Local() {} } }\n"
    );
    case!(
        "c_sharp",
        "modifiers_are_omittable",
        "void M($$$P) { $$$B }",
        code
    );
}

#[test]
fn kotlin() {
    let code = "package p\nimport a.b\nclass A(val x: Int) {\n  private val y = 2\n  fun m(a: Int): Int { println(a); return a }\n  @Test fun t() {}\n}\nfun main() {\n  val z = A(1)\n  if (z.x > 0) { println(\"pos\") } else { println(\"neg\") }\n  listOf(1).map { it * 2 }\n}\n";
    case!(
        "kotlin",
        "fun_without_return_type_matches_all",
        "fun $F($$$P) { $$$B }",
        code
    );
    case!(
        "kotlin",
        "if_matches_with_else_without_fields",
        "if ($C) { $$$B }",
        code
    );
    case!("kotlin", "import", "import $X", code);
    case!("kotlin", "lambda_call", "$L.map { $$$B }", code);
    case!("kotlin", "member_property", "private val y = 2", code);
    case!(
        "kotlin",
        "class_body_is_not_read_as_an_enum_body",
        "class $C { $$$B }",
        "class A {\n  val x = 1\n}\nenum class E { X }\n"
    );
    case!(
        "kotlin",
        "class_with_constructor_skips_the_expression_rung",
        "class $C($$$P) { $$$B }",
        code
    );
    case!(
        "kotlin",
        "return_type_must_match_when_given",
        "fun $F($$$P): String { $$$B }",
        code
    );
}

#[test]
fn php() {
    let code = "<?php\nnamespace App;\n\nuse Symfony\\Component\\Console\\Formatter\\OutputFormatter;\n\nclass Greeter\n{\n    private string $name = 'x';\n\n    public function greet(string $text, int $width = 0): string\n    {\n        $out = OutputFormatter::escape($text);\n        if ($width > 0) {\n            $out = str_pad($out, $width);\n        }\n        return $this->wrap($out);\n    }\n}\n";
    case!(
        "php",
        "static_call_binds_its_argument",
        "OutputFormatter::escape($X)",
        code
    );
    case!(
        "php",
        "lower_case_variables_are_the_programs",
        "$out = $F($$$A)",
        code
    );
    case!(
        "php",
        "method_without_return_type_matches_all",
        "public function $M($$$P) { $$$B }",
        code
    );
    case!("php", "method_call_on_this", "$this->$M($X)", code);
    case!("php", "if_without_else", "if ($C) { $$$B }", code);
    case!(
        "php",
        "member_property",
        "private string $name = 'x';",
        code
    );
    case!(
        "php",
        "if_matches_if_else",
        "if ($C) { $$$B }",
        "<?php\nif ($a) {\n    f();\n} elseif ($b) {\n    g();\n} else {\n    h();\n}\n"
    );
}
