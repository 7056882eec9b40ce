//! One test per language: each rung finds what it should, receivers are typed through
//! `self`, declarations and constructors, imports resolve by the ecosystem's own rules, and an
//! ambiguous name makes no edge.

use crate::common;

use cc_graph::DEFAULT_MIN_CONFIDENCE;
use common::index;

#[test]
fn go_receivers_locals_constructors_and_package_scope() {
    let g = index(&[
        ("go.mod", "module example.com/m\n"),
        (
            "flag.go",
            "package m\n\ntype FlagSet struct{ name string }\n\nfunc NewFlagSet() *FlagSet { return &FlagSet{} }\n\nfunc (f *FlagSet) Parse(args []string) error { return f.parseArgs(args) }\n\nfunc (f *FlagSet) parseArgs(args []string) error { return nil }\n\nvar CommandLine = NewFlagSet()\n\nfunc Parse() { CommandLine.Parse(nil) }\n",
        ),
        (
            "flag_test.go",
            "package m\n\nimport \"testing\"\n\nfunc setUp() *FlagSet { return NewFlagSet() }\n\nfunc TestParse(t *testing.T) {\n\tf := setUp()\n\tf.Parse(nil)\n\tvar g *FlagSet\n\tg.Parse(nil)\n\th := &FlagSet{}\n\th.Parse(nil)\n\tt.Fatal()\n\tf.Visit(func(f *Flag) { f.Parse(nil) })\n}\n",
        ),
        (
            "sub/use.go",
            "package sub\n\nimport pf \"example.com/m\"\n\nfunc Use() { pf.Parse(); pf.NewFlagSet().Parse(nil) }\n",
        ),
    ]);
    assert_eq!(
        g.callers("FlagSet.Parse"),
        [
            "flag.go:13 exact",
            "flag_test.go:9 exact",
            "flag_test.go:11 exact",
            "flag_test.go:13 exact",
            "sub/use.go:5 import",
        ]
    );
    assert_eq!(g.callers("FlagSet.parseArgs"), ["flag.go:7 exact"]);
    assert_eq!(
        g.callers("NewFlagSet"),
        [
            "flag.go:11 exact",
            "flag_test.go:5 package",
            "sub/use.go:5 import"
        ]
    );
    // `t.Fatal` goes to the standard library: external, not unresolved.
    let stats = g.graph.stats().unwrap();
    assert!(stats.external >= 1, "{stats:?}");
}

#[test]
fn a_python_import_inside_a_function_binds_its_name_there_only() {
    // click's termui.py: `from ._termui_impl import getchar as f` inside one function.
    let g = index(&[
        ("pyproject.toml", "[project]\nname = 'pkg'\n"),
        ("src/pkg/__init__.py", ""),
        ("src/pkg/impl.py", "def getchar(echo):\n    return echo\n"),
        (
            "src/pkg/termui.py",
            "def read(echo):\n    from .impl import getchar as f\n    return f(echo)\n\n\ndef style(text):\n    return f(text)\n",
        ),
        // Nothing re-exports a function's own import.
        (
            "src/pkg/user.py",
            "from .termui import f\n\n\ndef run():\n    return f(1)\n",
        ),
    ]);
    assert_eq!(g.callers("getchar"), ["src/pkg/termui.py:3 import"]);
}

#[test]
fn go_interface_calls_dispatch_to_the_workspace_types_that_implement_them() {
    let g = index(&[
        ("go.mod", "module example.com/m\n"),
        (
            "value.go",
            "package m\n\ntype Value interface {\n\tString() string\n\tSet(string) error\n}\n\ntype Getter interface {\n\tValue\n\tGet() any\n}\n",
        ),
        (
            "bool.go",
            "package m\n\ntype boolValue bool\n\nfunc (b *boolValue) Set(s string) error { return nil }\nfunc (b *boolValue) String() string { return \"\" }\nfunc (b *boolValue) Get() any { return nil }\n",
        ),
        (
            "int.go",
            "package m\n\ntype intValue int\n\nfunc (i *intValue) Set(s string) error { return nil }\nfunc (i *intValue) String() string { return \"\" }\n",
        ),
        // Set without String: not a Value.
        (
            "half.go",
            "package m\n\ntype halfValue struct{}\n\nfunc (h halfValue) Set(s string) error { return nil }\n",
        ),
        // String promoted from an embedded struct.
        (
            "wrapped.go",
            "package m\n\ntype named struct{}\n\nfunc (n named) String() string { return \"\" }\n\ntype wrapped struct {\n\tnamed\n}\n\nfunc (w *wrapped) Set(s string) error { return nil }\n",
        ),
        (
            "flag.go",
            "package m\n\ntype Flag struct {\n\tValue Value\n}\n\nfunc (f *Flag) apply(s string) { f.Value.Set(s) }\n\nfunc use(g Getter) { g.Set(\"x\"); g.Get() }\n",
        ),
    ]);
    // The interface method keeps its own edge (the field's type is found in the package);
    // each implementation gets a dispatch edge.
    assert_eq!(
        g.callers_in("Value.Set", Some("value.go")),
        ["flag.go:7 package", "flag.go:9 exact"]
    );
    assert_eq!(
        g.callers_in("boolValue.Set", Some("bool.go")),
        ["flag.go:7 dispatch", "flag.go:9 dispatch"]
    );
    assert_eq!(
        g.callers_in("intValue.Set", Some("int.go")),
        ["flag.go:7 dispatch", "flag.go:9 dispatch"]
    );
    assert_eq!(
        g.callers_in("wrapped.Set", Some("wrapped.go")),
        ["flag.go:7 dispatch", "flag.go:9 dispatch"]
    );
    assert!(g.callers_in("halfValue.Set", Some("half.go")).is_empty());
    assert_eq!(
        g.callers_in("Getter.Get", Some("value.go")),
        ["flag.go:9 exact"]
    );
    assert_eq!(
        g.callers_in("boolValue.Get", Some("bool.go")),
        ["flag.go:9 dispatch"]
    );
    // `callees` names what may run.
    let apply = g.graph.find("Flag.apply", None).unwrap();
    let calls = g
        .graph
        .callees(apply[0].id, DEFAULT_MIN_CONFIDENCE)
        .unwrap()
        .value;
    let set = calls.iter().find(|c| c.name == "Set").unwrap();
    let may_run: Vec<&str> = set
        .dispatch
        .iter()
        .map(|s| s.qualified_name.as_str())
        .collect();
    assert_eq!(may_run, ["boolValue.Set", "intValue.Set", "wrapped.Set"]);
    // Below the dispatch floor only the static target is listed.
    let calls = g
        .graph
        .callees(apply[0].id, cc_graph::Rung::Package.confidence())
        .unwrap()
        .value;
    assert!(calls.iter().all(|c| c.dispatch.is_empty()));
    assert!(g
        .graph
        .callers(
            g.graph.find("boolValue.Set", Some("bool.go")).unwrap()[0].id,
            cc_graph::Rung::Package.confidence()
        )
        .unwrap()
        .value
        .sites
        .is_empty());
}

#[test]
fn python_packages_relative_imports_reexports_and_receivers() {
    let g = index(&[
        ("pyproject.toml", "[project]\nname = 'pkg'\n"),
        ("src/pkg/__init__.py", "from .sessions import Session\nfrom . import utils\n"),
        (
            "src/pkg/sessions.py",
            "from .utils import helper\nfrom .adapters import Adapter\n\nclass Base:\n    def close(self):\n        pass\n\nclass Session(Base):\n    def __init__(self):\n        self.adapter = Adapter()\n\n    def request(self, url):\n        helper(url)\n        self.adapter.send(url)\n        return self.send(url)\n\n    def send(self, url):\n        self.close()\n",
        ),
        ("src/pkg/adapters.py", "class Adapter:\n    def send(self, url):\n        pass\n"),
        ("src/pkg/utils.py", "def helper(x):\n    return x\n\ndef get(x):\n    pass\n"),
        ("src/pkg/other.py", "def get(x):\n    pass\n"),
        (
            "tests/test_api.py",
            "import pkg\nfrom pkg import Session\nimport pkg.utils as u\n\ndef test_request():\n    s = Session()\n    s.request('x')\n    pkg.utils.helper(1)\n    u.helper(2)\n    unknown.get(3)\n",
        ),
    ]);
    assert_eq!(g.callers("Session.request"), ["tests/test_api.py:7 exact"]);
    assert_eq!(g.callers("Session.send"), ["src/pkg/sessions.py:15 exact"]);
    assert_eq!(g.callers("Base.close"), ["src/pkg/sessions.py:18 exact"]);
    // `self.adapter` was assigned in another method: as sure as the import of its type.
    assert_eq!(g.callers("Adapter.send"), ["src/pkg/sessions.py:14 import"]);
    assert_eq!(
        g.callers("helper"),
        [
            "src/pkg/sessions.py:13 import",
            "tests/test_api.py:8 import",
            "tests/test_api.py:9 import",
        ]
    );
    // `unknown.get` has two candidates: no edge, counted as ambiguous.
    for get in g.graph.find("get", None).unwrap() {
        assert!(g.graph.callers(get.id, 0.0).unwrap().value.sites.is_empty());
    }
    assert!(g.graph.stats().unwrap().ambiguous >= 1);
}

#[test]
fn python_static_methods_and_optional_or_quoted_annotations() {
    let g = index(&[
        (
            "core.py",
            "import typing as t\n\nclass Context:\n    def get_help(self):\n        pass\n\nclass Command:\n    def get_help(self, ctx):\n        pass\n\nclass Option:\n    def get_help(self, ctx):\n        pass\n\nclass HelpOption(Option):\n    @staticmethod\n    def show_help(ctx: Context, value: bool) -> None:\n        ctx.get_help()\n\n    def quoted(self, ctx: \"Context\") -> None:\n        ctx.get_help()\n\n    def optional(self, ctx: t.Optional[\"Context\"] = None) -> None:\n        ctx.get_help()\n\n    def union(self, ctx: Context | None) -> None:\n        ctx.get_help()\n",
        ),
    ]);
    // A static method's first parameter is no `self`; the annotation's type is the type.
    assert_eq!(
        g.callers("Context.get_help"),
        [
            "core.py:18 exact",
            "core.py:21 exact",
            "core.py:24 exact",
            "core.py:27 exact"
        ]
    );
    assert_eq!(g.callers("Option.get_help"), Vec::<String>::new());
}

#[test]
fn the_name_rung_is_kept_but_excluded_by_default() {
    let g = index(&[
        ("a.py", "def only_here():\n    pass\n"),
        ("b.py", "def f(x):\n    x.only_here()\n"),
    ]);
    let target = &g.graph.find("only_here", None).unwrap()[0];
    let default = g.graph.callers(target.id, DEFAULT_MIN_CONFIDENCE).unwrap();
    assert!(default.value.sites.is_empty());
    assert_eq!(default.value.below_floor, 1);
    let all = g.graph.callers(target.id, 0.0).unwrap();
    assert_eq!(all.value.sites[0].rung.as_str(), "name");
}

#[test]
fn typescript_relative_paths_index_files_tsconfig_paths_and_this() {
    let g = index(&[
        (
            "tsconfig.json",
            "{\n  // comments are allowed\n  \"compilerOptions\": { \"baseUrl\": \".\", \"paths\": { \"@lib/*\": [\"src/lib/*\"] }, },\n}\n",
        ),
        (
            "src/lib/index.ts",
            "export { parse } from './parse.js';\nexport * from './types';\n",
        ),
        (
            "src/lib/parse.ts",
            "import { Result } from './types';\n\nexport function parse(x: string): Result { return new Result(x); }\n",
        ),
        (
            "src/lib/types.ts",
            "export class Result {\n  constructor(public v: string) {}\n  check(): boolean { return this.valid(); }\n  valid(): boolean { return true; }\n}\n",
        ),
        (
            "src/app.ts",
            "import { parse, Result } from './lib';\nimport { parse as p2 } from '@lib/parse';\nimport * as types from '@lib/types';\n\nexport function main() {\n  const r = parse('a');\n  r.check();\n  p2('b');\n  const t = new types.Result('c');\n  t.check();\n}\n",
        ),
    ]);
    assert_eq!(
        g.callers("parse"),
        ["src/app.ts:6 import", "src/app.ts:8 import"]
    );
    assert_eq!(
        g.callers("Result.check"),
        ["src/app.ts:7 exact", "src/app.ts:10 exact"]
    );
    assert_eq!(g.callers("Result.valid"), ["src/lib/types.ts:3 exact"]);
}

#[test]
fn rust_mod_tree_use_paths_reexports_and_impl_receivers() {
    let g = index(&[
        ("Cargo.toml", "[package]\nname = \"my-crate\"\nversion = \"0.1.0\"\n"),
        (
            "src/lib.rs",
            "mod parse;\npub mod version;\npub use crate::version::Version;\n\npub fn run() {\n    let v = Version::parse(\"1\");\n    v.bump();\n    parse::helper();\n}\n",
        ),
        (
            "src/version.rs",
            "pub struct Version { major: u64 }\n\nimpl Version {\n    pub fn parse(s: &str) -> Version {\n        Self::check(s);\n        Version { major: 1 }\n    }\n    fn check(_s: &str) {}\n    pub fn bump(&mut self) {\n        self.touch();\n    }\n    fn touch(&self) {}\n}\n",
        ),
        (
            "src/parse.rs",
            "use super::version::Version;\n\npub fn helper() -> Version {\n    Version::parse(\"2\")\n}\n",
        ),
        (
            "tests/it.rs",
            "use my_crate::Version;\n\n#[test]\nfn t() {\n    let v: Version = Version::parse(\"3\");\n    let mut w = v;\n    w.bump();\n}\n",
        ),
    ]);
    assert_eq!(
        g.callers("Version::parse"),
        [
            "src/lib.rs:6 import",
            "src/parse.rs:4 import",
            "tests/it.rs:5 import"
        ]
    );
    assert_eq!(g.callers("Version::check"), ["src/version.rs:5 exact"]);
    assert_eq!(g.callers("Version::touch"), ["src/version.rs:10 exact"]);
    assert_eq!(g.callers("helper"), ["src/lib.rs:8 import"]);
    assert_eq!(g.callers("Version::bump"), ["src/lib.rs:7 exact"]);
}

#[test]
fn rust_macro_bodies_macro_namespace_crate_aliases_and_lexical_lets() {
    let g = index(&[
        ("Cargo.toml", "[package]\nname = \"my-crate\"\nversion = \"0.1.0\"\n"),
        (
            "src/lib.rs",
            "pub mod version;\n\npub struct Fmt;\n\nimpl Fmt {\n    fn helper(&self) -> u8 {\n        1\n    }\n}\n\npub trait Show {\n    fn show(&self) -> u8;\n}\n\nmacro_rules! impl_show {\n    ($($t:ident)*) => {\n        $(\n            impl $t for Fmt {\n                fn show(&self) -> u8 {\n                    self.helper()\n                }\n            }\n        )*\n    };\n}\n\nimpl_show!(Show);\n\npub fn run() -> String {\n    format!(\"{}\", 1)\n}\n\npub fn format() {}\n",
        ),
        (
            "src/version.rs",
            "pub struct Version;\n\nimpl Version {\n    pub fn parse() -> Version {\n        struct Guard;\n        impl Drop for Guard {\n            fn drop(&mut self) {}\n        }\n        drop(Guard);\n        Version\n    }\n}\n",
        ),
        (
            "src/user.rs",
            "use crate::version::{self};\n\npub fn user() {\n    version::Version::parse();\n}\n",
        ),
        (
            "tests/it.rs",
            "use crate::mc::run;\nuse my_crate as mc;\n\n#[test]\nfn t() {\n    let mc = mc::run();\n    run();\n    drop(mc);\n}\n",
        ),
    ]);
    // What a local macro generates is addressable, and the calls in it are sites.
    assert_eq!(g.callers("Fmt::helper"), ["src/lib.rs:20 exact"]);
    assert_eq!(g.graph.find("Fmt::show", None).unwrap().len(), 1);
    assert_eq!(g.callers("impl_show"), ["src/lib.rs:27 exact"]);
    // `format!` is the macro, not the function of that name; `drop(x)` is the prelude's.
    assert_eq!(g.callers("format"), Vec::<String>::new());
    assert_eq!(g.callers("Version::parse::drop"), Vec::<String>::new());
    // `use x::{self}`, the crate's own name under an alias, `crate::alias::f` in a test
    // crate, and a `let` that shadows the alias only after its statement.
    assert_eq!(g.callers("Version::parse"), ["src/user.rs:4 import"]);
    assert_eq!(
        g.callers("run"),
        ["tests/it.rs:6 import", "tests/it.rs:7 import"]
    );
}

#[test]
fn rust_trait_calls_dispatch_to_impls_and_extension_traits_in_scope() {
    let g = index(&[
        ("Cargo.toml", "[package]\nname = \"my-crate\"\nversion = \"0.1.0\"\n"),
        ("src/lib.rs", "pub trait Ext: Iterator {\n    fn pairs(self) -> u8\n    where\n        Self: Sized,\n    {\n        0\n    }\n}\n\nimpl<I: Iterator> Ext for I {}\n\npub trait Shape {\n    fn area(&self) -> u8;\n}\n\npub struct Sq;\npub struct Ci;\n\nimpl Shape for Sq {\n    fn area(&self) -> u8 {\n        1\n    }\n}\n\nimpl Shape for Ci {\n    fn area(&self) -> u8 {\n        2\n    }\n}\n\npub fn total(s: &dyn Shape) -> u8 {\n    s.area()\n}\n"),
        ("tests/t.rs", "use my_crate::Ext;\n\n#[test]\nfn t() {\n    let v = vec![1, 2];\n    v.into_iter().pairs();\n}\n"),
    ]);
    // A method of a workspace trait called on another crate's type, the trait imported.
    assert_eq!(g.callers("Ext::pairs"), ["tests/t.rs:6 import"]);
    // A call of a trait method may run each workspace impl of it.
    assert_eq!(g.callers("Shape::area"), ["src/lib.rs:32 exact"]);
    assert_eq!(g.callers("Sq::area"), ["src/lib.rs:32 dispatch"]);
    assert_eq!(g.callers("Ci::area"), ["src/lib.rs:32 dispatch"]);
}

#[test]
fn rust_calls_in_macro_arguments_adapters_namesakes_and_trait_groups() {
    // itertools' shapes: calls inside `assert_eq!(…)` and `quickcheck! { fn … }`, an
    // extension trait's method on a std adapter, `mod peek_nth;` beside a re-exported `fn
    // peek_nth` (through `pub use crate::structs::*` of an inline module too), and a call of
    // an impl's method as a reference of the trait's method and its other impls.
    let g = index(&[
        ("Cargo.toml", "[package]\nname = \"it\"\nversion = \"0.1.0\"\n"),
        ("src/lib.rs", "pub mod structs {\n    pub use crate::peek::Peek;\n}\npub use crate::structs::*;\npub use crate::free::*;\npub mod free;\nmod peek_nth;\nmod peek;\n\npub trait Itertools: Iterator {\n    fn group_map(self) -> u8\n    where\n        Self: Sized,\n    {\n        0\n    }\n}\n\nimpl<T: Iterator> Itertools for T {}\n\npub trait PeekingNext {\n    fn peeking_next(&mut self) -> u8;\n}\n"),
        ("src/free.rs", "pub use crate::peek_nth::peek_nth;\n"),
        ("src/peek_nth.rs", "pub fn peek_nth() -> u8 {\n    0\n}\n"),
        ("src/peek.rs", "use crate::PeekingNext;\n\npub struct Peek;\npub struct Back;\n\nimpl PeekingNext for Peek {\n    fn peeking_next(&mut self) -> u8 {\n        1\n    }\n}\n\nimpl PeekingNext for Back {\n    fn peeking_next(&mut self) -> u8 {\n        2\n    }\n}\n\npub fn make() -> Peek {\n    Peek\n}\n"),
        ("tests/t.rs", "use it::peek_nth;\nuse it::Itertools;\nuse it::free::*;\n\n#[test]\nfn t(v: Vec<u8>) {\n    assert_eq!(peek_nth(), 0);\n    let m = v.into_iter().map(|x| x).group_map();\n}\n\nquickcheck! {\n    fn prop(v: Vec<u8>) -> bool {\n        vec![peek_nth()].is_empty()\n    }\n}\n"),
        ("src/use.rs", "use crate::peek::make;\nuse crate::PeekingNext;\n\npub fn run() -> u8 {\n    let mut p = make();\n    p.peeking_next()\n}\n"),
    ]);
    assert_eq!(
        g.callers_in("peek_nth", Some("src/peek_nth.rs")),
        ["tests/t.rs:7 import", "tests/t.rs:13 import"]
    );
    assert_eq!(g.callers("Itertools::group_map"), ["tests/t.rs:8 import"]);
    assert_eq!(g.callers("Peek::peeking_next"), ["src/use.rs:6 exact"]);
    assert_eq!(
        g.callers("PeekingNext::peeking_next"),
        ["src/use.rs:6 dispatch"]
    );
    assert_eq!(g.callers("Back::peeking_next"), ["src/use.rs:6 dispatch"]);
}

#[test]
fn c_includes_pair_header_declarations_with_definitions() {
    let g = index(&[
        (
            "compile_commands.json",
            "[{\"directory\": \".\", \"file\": \"src/main.c\", \"arguments\": [\"cc\", \"-Iinclude\", \"-c\", \"src/main.c\"]}]",
        ),
        ("include/util.h", "int twice(int x);\nstruct point { int x; };\n"),
        ("src/util.c", "#include \"util.h\"\nint twice(int x) { return 2 * x; }\n"),
        (
            "src/main.c",
            "#include \"util.h\"\nint main(void) { struct point p; return twice(p.x); }\n",
        ),
    ]);
    let twice = g.graph.find("twice", Some("src/util.c")).unwrap();
    let callers = g
        .graph
        .callers(twice[0].id, DEFAULT_MIN_CONFIDENCE)
        .unwrap();
    let sites: Vec<String> = callers
        .value
        .sites
        .iter()
        .map(|s| format!("{}:{} {}", s.path, s.line, s.rung.as_str()))
        .collect();
    assert_eq!(sites, ["src/main.c:2 import"]);
}

#[test]
fn c_build_alternatives_of_a_header_function_are_dispatch_edges() {
    let g = index(&[
        (
            "compile_commands.json",
            "[{\"directory\": \".\", \"file\": \"src/main.c\", \"arguments\": [\"cc\", \"-Iinclude\", \"-c\", \"src/main.c\"]}]",
        ),
        ("include/mem.h", "void release(void *p);\n"),
        ("mm/slab.c", "#include \"mem.h\"\nvoid release(void *p) { }\n"),
        ("mm/slob.c", "#include \"mem.h\"\nvoid release(void *p) { }\n"),
        (
            "src/main.c",
            "#include \"mem.h\"\nint main(void) {\n  release(0);\n  return 0;\n}\n",
        ),
    ]);
    assert_eq!(
        g.callers_in("release", Some("include/mem.h")),
        ["src/main.c:3 import"]
    );
    assert_eq!(
        g.callers_in("release", Some("mm/slab.c")),
        ["src/main.c:3 dispatch"]
    );
    assert_eq!(
        g.callers_in("release", Some("mm/slob.c")),
        ["src/main.c:3 dispatch"]
    );
}

#[test]
fn c_an_angle_include_without_build_folders_takes_the_shallowest_of_equally_near_headers() {
    // The kernel's shape without `compile_commands.json`: `<linux/slab.h>` from a driver is
    // `include/linux/slab.h`, not `tools/include/linux/slab.h` or `tools/virtio/linux/slab.h`
    // (none shares a folder with the driver); a tool's own copy stays the tool's.
    let g = index(&[
        (
            "include/linux/slab.h",
            "void kfree(const void *p);
",
        ),
        (
            "tools/include/linux/slab.h",
            "void kfree(void *p);
",
        ),
        (
            "tools/virtio/linux/slab.h",
            "void kfree(void *p);
",
        ),
        (
            "mm/slab_common.c",
            "#include <linux/slab.h>
void kfree(const void *p) { }
",
        ),
        (
            "tools/lib/slab.c",
            "#include <linux/slab.h>
void kfree(void *p) { }
",
        ),
        (
            "drivers/crypto/qat/adf_drv.c",
            "#include <linux/slab.h>
static void cleanup(void *p) {
  kfree(p);
}
",
        ),
        (
            "tools/virtio/test.c",
            "#include <linux/slab.h>
static void t(void *p) {
  kfree(p);
}
",
        ),
    ]);
    assert_eq!(
        g.callers_in("kfree", Some("include/linux/slab.h")),
        ["drivers/crypto/qat/adf_drv.c:3 import"]
    );
    assert!(g
        .callers_in("kfree", Some("mm/slab_common.c"))
        .contains(&"drivers/crypto/qat/adf_drv.c:3 dispatch".to_owned()));
    assert_eq!(
        g.callers_in("kfree", Some("tools/virtio/linux/slab.h")),
        ["tools/virtio/test.c:3 import"]
    );
}

#[test]
fn cpp_methods_defined_outside_their_class() {
    let g = index(&[
        (
            "shape.hpp",
            "class Shape {\npublic:\n  int area();\n  int side();\n};\n",
        ),
        (
            "shape.cpp",
            "#include \"shape.hpp\"\nint Shape::area() { return side() * side(); }\nint Shape::side() { return 2; }\n",
        ),
    ]);
    let side = g.graph.find("side", Some("shape.cpp")).unwrap();
    let callers = g.graph.callers(side[0].id, DEFAULT_MIN_CONFIDENCE).unwrap();
    assert_eq!(callers.value.sites.len(), 2, "{:?}", callers.value.sites);
}

#[test]
fn java_packages_imports_and_implicit_this() {
    let g = index(&[
        (
            "src/a/Util.java",
            "package a;\n\npublic class Util {\n  public static int twice(int x) { return x * 2; }\n  public int run() { return helper(); }\n  int helper() { return 1; }\n}\n",
        ),
        (
            "src/a/Same.java",
            "package a;\n\nclass Same {\n  int f() { return Util.twice(1); }\n}\n",
        ),
        (
            "src/b/Main.java",
            "package b;\n\nimport a.Util;\n\nclass Main {\n  void m() { Util u = new Util(); u.run(); Util.twice(2); }\n}\n",
        ),
    ]);
    assert_eq!(
        g.callers("Util.twice"),
        ["src/a/Same.java:4 package", "src/b/Main.java:6 import"]
    );
    assert_eq!(g.callers("Util.helper"), ["src/a/Util.java:5 exact"]);
    assert_eq!(g.callers("Util.run"), ["src/b/Main.java:6 exact"]);
}

#[test]
fn kotlin_packages_and_receivers() {
    let g = index(&[
        (
            "a/Util.kt",
            "package a\n\nclass Util {\n  fun run(): Int { return helper() }\n  fun helper(): Int = 1\n}\n\nfun top(): Int = 2\n",
        ),
        (
            "b/Main.kt",
            "package b\n\nimport a.Util\nimport a.top\n\nfun main() {\n  val u = Util()\n  u.run()\n  top()\n}\n",
        ),
    ]);
    assert_eq!(g.callers("Util.run"), ["b/Main.kt:8 exact"]);
    assert_eq!(g.callers("Util.helper"), ["a/Util.kt:4 exact"]);
    assert_eq!(g.callers("top"), ["b/Main.kt:9 import"]);
}

#[test]
fn c_sharp_namespaces_and_usings() {
    let g = index(&[
        (
            "Lib/Util.cs",
            "namespace Lib {\n  public class Util {\n    public static int Twice(int x) { return x * 2; }\n    public int Run() { return Helper(); }\n    int Helper() { return 1; }\n  }\n}\n",
        ),
        (
            "App/Main.cs",
            "using Lib;\n\nnamespace App {\n  class Program {\n    static void Main() { var u = new Util(); Util.Twice(1); Util w = u; w.Run(); }\n  }\n}\n",
        ),
    ]);
    assert_eq!(g.callers("Util.Twice"), ["App/Main.cs:5 import"]);
    assert_eq!(g.callers("Util.Helper"), ["Lib/Util.cs:4 exact"]);
    assert_eq!(g.callers("Util.Run"), ["App/Main.cs:5 exact"]);
}

#[test]
fn ruby_require_relative_and_new() {
    let g = index(&[
        (
            "lib/shop/cart.rb",
            "class Cart\n  def total\n    sum_items()\n  end\n\n  def sum_items\n    0\n  end\nend\n",
        ),
        (
            "lib/shop.rb",
            "require_relative 'shop/cart'\n\ndef checkout\n  cart = Cart.new\n  cart.total\nend\n",
        ),
    ]);
    assert_eq!(g.callers("Cart.total"), ["lib/shop.rb:5 exact"]);
    assert_eq!(g.callers("Cart.sum_items"), ["lib/shop/cart.rb:3 exact"]);
}

#[test]
fn dart_package_imports() {
    let g = index(&[
        ("pubspec.yaml", "name: shop\n"),
        (
            "lib/cart.dart",
            "class Cart {\n  int total() { return sumItems(); }\n  int sumItems() => 0;\n}\n",
        ),
        (
            "bin/main.dart",
            "import 'package:shop/cart.dart';\n\nvoid main() {\n  var c = Cart();\n  c.total();\n}\n",
        ),
    ]);
    assert_eq!(g.callers("Cart.total"), ["bin/main.dart:5 exact"]);
    assert_eq!(g.callers("Cart.sumItems"), ["lib/cart.dart:2 exact"]);
}

#[test]
fn an_object_literal_method_is_not_in_scope_by_its_bare_name() {
    // rxjs's scheduler/timeoutProvider.ts: the global `setTimeout` inside a method of that name.
    let g = index(&[
        ("package.json", "{\"name\": \"p\"}"),
        (
            "src/timeoutProvider.ts",
            "export const timeoutProvider = {\n  setTimeout(handler: () => void, timeout?: number) {\n    const { delegate } = timeoutProvider;\n    if (delegate) {\n      return delegate.setTimeout(handler, timeout);\n    }\n    return setTimeout(handler, timeout);\n  },\n  delegate: undefined as any,\n};\n\nexport function later(f: () => void) {\n  return timeoutProvider.setTimeout(f, 1);\n}\n",
        ),
    ]);
    let callers = g.callers("timeoutProvider.setTimeout");
    assert!(
        !callers
            .iter()
            .any(|c| c.starts_with("src/timeoutProvider.ts:7 ")),
        "{callers:?}"
    );
}

#[test]
fn functions_assigned_to_members_and_named_function_expressions_are_definitions() {
    // Shapes of zod (`inst.regex = (…) => …` in a constructor callback, `??=`), rxjs
    // (`socket.onerror = (e) => { this._resetState(); }`, `function AjaxErrorImpl(…)` passed
    // as an argument, `_with = () => …`), locale files (`export default function () {…}`)
    // and ES5 classes (`Shape.prototype.area = function () {…}`, CommonJS `exports.f`).
    let g = index(&[
        ("package.json", "{\"name\": \"p\"}"),
        (
            "src/socket.ts",
            "export class Socket {\n  open() {\n    const socket: any = {};\n    socket.onerror = (e: Event) => {\n      this.reset();\n    };\n  }\n  reset() {}\n}\n\nexport const ZodString = make((inst: any) => {\n  inst.regex = (x: string) => x;\n  inst._zod.when ??= (p: unknown) => p;\n});\n\nexport const AjaxError = make(() => function AjaxErrorImpl(this: any) {});\n\nexport function timeoutWith() {\n  let _with: () => number;\n  _with = () => 1;\n  return _with();\n}\n\nfunction make(f: unknown) {\n  return f;\n}\n",
        ),
        ("src/fr.ts", "export default function () {\n  return 1;\n}\n"),
        (
            "lib/shape.js",
            "function Shape() {}\nShape.prototype.area = function () {\n  return this.side();\n};\nShape.prototype.side = function () {\n  return 1;\n};\nexports.make = function () {\n  return new Shape();\n};\n",
        ),
    ]);
    // An arrow function's `this` is the class's, not the object's it is assigned to.
    assert_eq!(g.callers("Socket.reset"), ["src/socket.ts:5 exact"]);
    assert_eq!(g.callers("timeoutWith._with"), ["src/socket.ts:21 exact"]);
    assert_eq!(g.callers("Shape.side"), ["lib/shape.js:3 exact"]);
    for (name, path, line) in [
        ("onerror", "src/socket.ts", 4),
        ("regex", "src/socket.ts", 12),
        ("when", "src/socket.ts", 13),
        ("AjaxErrorImpl", "src/socket.ts", 16),
        ("default", "src/fr.ts", 1),
        ("area", "lib/shape.js", 2),
        ("make", "lib/shape.js", 8),
    ] {
        let found = g.graph.find(name, Some(path)).unwrap();
        assert!(
            found.iter().any(|d| d.kind.is_callable() && d.line == line),
            "{name} in {path}:{line}: {found:?}"
        );
    }
    // A member assigned to an object is no name in the scope around it.
    let found = g.graph.find("regex", Some("src/socket.ts")).unwrap();
    assert_eq!(found[0].qualified_name, "ZodString.regex", "{found:?}");
    assert!(g.callers("ZodString.regex").is_empty());
}

#[test]
fn javascript_relative_imports_and_bash_sources() {
    let g = index(&[
        (
            "lib/math.mjs",
            "export function add(a, b) { return a + b; }\n",
        ),
        (
            "main.js",
            "import { add } from './lib/math.mjs';\nadd(1, 2);\n",
        ),
        ("lib.sh", "greet() {\n  echo hi\n}\n"),
        ("run.sh", "source ./lib.sh\ngreet\n"),
    ]);
    assert_eq!(g.callers("add"), ["main.js:2 import"]);
    assert_eq!(g.callers("greet"), ["run.sh:2 import"]);
}

#[test]
fn overrides_inherited_constructors_and_namespaces_in_typescript_and_python() {
    let g = index(&[
        ("src/base.ts", "export abstract class Schema {\n  constructor(def: object) {}\n  abstract _parse(x: number): number;\n  parse(x: number): number {\n    return this._parse(x);\n  }\n}\n"),
        ("src/kinds.ts", "import { Schema } from \"./base.js\";\n\nexport class Str extends Schema {\n  _parse(x: number): number {\n    return x;\n  }\n}\n\nexport class Num extends Str {\n  _parse(x: number): number {\n    return x + 1;\n  }\n}\n\nexport function make(): Str {\n  return new Num({});\n}\n"),
        ("src/helpers/util.ts", "export namespace util {\n  export function never(x: never): never {\n    throw new Error();\n  }\n}\n"),
        ("src/core/fmt.ts", "export function normalize(p: string): string {\n  return p;\n}\n"),
        ("src/core/index.ts", "export * as fmt from \"./fmt.js\";\n"),
        ("src/use.ts", "import { util } from \"./helpers/util.js\";\nimport { fmt } from \"./core/index.js\";\n\nexport function check(x: never): string {\n  util.never(x);\n  return fmt.normalize(\"a\");\n}\n"),
        ("py/shapes.py", "class Shape:\n    def area(self):\n        return 0\n\n    def report(self):\n        return self.area()\n\n\nclass Square(Shape):\n    def area(self):\n        return 1\n"),
    ]);
    // `this._parse` in the base may run each subclass's override, at any depth.
    assert_eq!(g.callers("Schema._parse"), ["src/base.ts:5 exact"]);
    assert_eq!(g.callers("Str._parse"), ["src/base.ts:5 dispatch"]);
    assert_eq!(g.callers("Num._parse"), ["src/base.ts:5 dispatch"]);
    // Python's checkers do not count overrides as references; neither does the graph.
    assert!(g.callers("Square.area").is_empty());
    // A class without a constructor runs its base's: the class is called, the
    // constructor dispatched to.
    assert_eq!(g.callers("Num"), ["src/kinds.ts:16 exact"]);
    assert_eq!(
        g.callers("Schema.constructor"),
        ["src/kinds.ts:16 dispatch"]
    );
    // A namespace's members, and a module re-exported as a namespace.
    assert_eq!(g.callers("util.never"), ["src/use.ts:5 import"]);
    assert_eq!(g.callers("normalize"), ["src/use.ts:6 import"]);
}

#[test]
fn a_typescript_call_of_an_override_reaches_what_it_overrides_and_implements() {
    // rxjs's shape: `SubscriptionLike.unsubscribe` implemented by `Subscription`, overridden
    // by `Subscriber` and `AsyncAction`; tsserver's references of each are the group's calls.
    let g = index(&[
        ("src/types.ts", "export interface SubscriptionLike {\n  unsubscribe(): void;\n}\n"),
        ("src/subscription.ts", "import { SubscriptionLike } from \"./types\";\n\nexport class Subscription implements SubscriptionLike {\n  unsubscribe(): void {}\n}\n"),
        ("src/subscriber.ts", "import { Subscription } from \"./subscription\";\n\nexport class Subscriber extends Subscription {\n  unsubscribe(): void {}\n}\n\nexport class AsyncAction extends Subscription {\n  unsubscribe(): void {}\n  overload(x: number): void;\n  overload(x: string): void;\n  overload(x: unknown): void {}\n}\n"),
        ("src/use.ts", "import { AsyncAction } from \"./subscriber\";\n\nexport function stop(a: AsyncAction) {\n  a.unsubscribe();\n  a.overload(1);\n}\n"),
    ]);
    assert_eq!(g.callers("AsyncAction.unsubscribe"), ["src/use.ts:4 exact"]);
    assert_eq!(
        g.callers("Subscription.unsubscribe"),
        ["src/use.ts:4 dispatch"]
    );
    assert_eq!(
        g.callers("SubscriptionLike.unsubscribe"),
        ["src/use.ts:4 dispatch"]
    );
    assert_eq!(
        g.callers("Subscriber.unsubscribe"),
        ["src/use.ts:4 dispatch"]
    );
    // A class's own overload signatures are one target, not dispatch beside it.
    let overloads = g.graph.find("AsyncAction.overload", None).unwrap();
    for o in &overloads {
        let callers = g.graph.callers(o.id, DEFAULT_MIN_CONFIDENCE).unwrap();
        assert_eq!(
            callers.value.sites.len(),
            1,
            "{o:?}: {:?}",
            callers.value.sites
        );
    }
}

#[test]
fn an_object_literal_passed_where_an_interface_is_expected_fills_its_members() {
    // rxjs's `source.subscribe({ next: (v) => … })`: `subscribe`'s overload declares the
    // parameter `Partial<Observer<T>>`, so a call of `Observer.next` may run the literal's.
    let mut g = index(&[
        ("src/types.ts", "export interface Observer<T> {\n  next: (value: T) => void;\n  complete(): void;\n}\n"),
        ("src/observable.ts", "import { Observer } from \"./types\";\n\nexport class Observable<T> {\n  subscribe(observer: Partial<Observer<T>>): void;\n  subscribe(next: (value: T) => void): void;\n  subscribe(observerOrNext: any): void {}\n}\n\nexport function emit(o: Observer<number>) {\n  o.next(1);\n  o.complete();\n}\n"),
        ("src/use.ts", "import { Observable } from \"./observable\";\n\nexport function first(source: Observable<number>) {\n  source.subscribe({\n    next: (v) => v,\n    complete() {},\n  });\n  source.subscribe((v) => v);\n}\n"),
    ]);
    assert_eq!(g.callers("first.next"), ["src/observable.ts:10 dispatch"]);
    assert_eq!(
        g.callers("first.complete"),
        ["src/observable.ts:11 dispatch"]
    );
    // The parameter's type changed behind the run: the literal fills nothing any more.
    std::fs::write(
        g.dir.path().join("src/observable.ts"),
        "import { Observer } from \"./types\";\n\nexport class Observable<T> {\n  subscribe(observer: number): void;\n  subscribe(next: (value: T) => void): void;\n  subscribe(observerOrNext: any): void {}\n}\n\nexport function emit(o: Observer<number>) {\n  o.next(1);\n  o.complete();\n}\n",
    )
    .unwrap();
    g.graph.update(&["src/observable.ts"]).unwrap();
    assert!(g.callers("first.next").is_empty());
}

#[test]
fn a_callbacks_untyped_parameter_has_the_type_its_callee_declares() {
    // rxjs's operators: `operate((source, subscriber) => …)` with `operate(init: (source:
    // Observable<T>, subscriber: Subscriber<R>) => void)`, and `new Observable((subscriber) =>
    // …)` whose constructor declares `(this: Observable<T>, subscriber: Subscriber<T>) => …`.
    let g = index(&[
        ("src/subscriber.ts", "export class Subscriber<T> {\n  next(value: T): void {}\n  complete(): void {}\n}\n\nexport class Observable<T> {\n  constructor(subscribe?: (this: Observable<T>, subscriber: Subscriber<T>) => void) {}\n  subscribe(s: Subscriber<T>): void {}\n}\n"),
        ("src/lift.ts", "import { Observable, Subscriber } from \"./subscriber\";\n\nexport function operate<T, R>(init: (source: Observable<T>, subscriber: Subscriber<R>) => void): void {}\n"),
        ("src/ops.ts", "import { operate } from \"./lift\";\nimport { Observable } from \"./subscriber\";\n\nexport function take() {\n  return operate((source, subscriber) => {\n    source.subscribe(subscriber);\n    subscriber.next(1);\n  });\n}\n\nexport const EMPTY = new Observable<never>((subscriber) => subscriber.complete());\n"),
    ]);
    assert_eq!(g.callers("Observable.subscribe"), ["src/ops.ts:6 exact"]);
    assert_eq!(g.callers("Subscriber.next"), ["src/ops.ts:7 exact"]);
    assert_eq!(g.callers("Subscriber.complete"), ["src/ops.ts:11 exact"]);
}

#[test]
fn typescript_members_typed_by_type_parameters_and_locals_read_from_members() {
    let g = index(&[
        ("src/base.ts", "export abstract class Schema<Out = unknown, Def extends BaseDef = BaseDef> {\n  readonly _def!: Def;\n  abstract _parse(x: number): number;\n}\n\nexport interface BaseDef {\n  description?: string;\n}\n\nexport type AnySchema = Schema<any, any>;\n"),
        ("src/opt.ts", "import { Schema, BaseDef, AnySchema } from \"./base.js\";\n\nexport interface OptDef<T extends AnySchema = AnySchema> extends BaseDef {\n  inner: T;\n}\n\nexport class Opt<T extends AnySchema> extends Schema<\n  number,\n  OptDef<T>\n> {\n  _parse(x: number): number {\n    const inner = this._def.inner;\n    return this._def.inner._parse(x) + inner._parse(x);\n  }\n}\n"),
    ]);
    // `this._def` is `OptDef<T>` (Opt binds Schema's `Def`); its `inner` is a `T`, which
    // stands for its constraint, `AnySchema`, an alias of `Schema`.
    assert_eq!(
        g.callers("Schema._parse"),
        ["src/opt.ts:13 import", "src/opt.ts:13 exact"]
    );
    assert_eq!(
        g.callers("Opt._parse"),
        ["src/opt.ts:13 dispatch", "src/opt.ts:13 dispatch"]
    );
}

#[test]
fn go_a_type_assertion_binds_its_type() {
    let g = index(&[
        ("go.mod", "module example.com/m\n\ngo 1.21\n"),
        ("flag.go", "package m\n\ntype Value interface {\n\tString() string\n}\n\ntype SliceValue interface {\n\tReplace([]string) error\n}\n\ntype ints struct{}\n\nfunc (i *ints) String() string { return \"\" }\n\nfunc (i *ints) Replace(v []string) error { return nil }\n\nfunc use(v Value) {\n\tif val, ok := v.(SliceValue); ok {\n\t\t_ = val.Replace(nil)\n\t}\n}\n"),
    ]);
    assert_eq!(g.callers("SliceValue.Replace"), ["flag.go:19 exact"]);
    assert_eq!(g.callers("ints.Replace"), ["flag.go:19 dispatch"]);
}

#[test]
fn php_namespaces_uses_and_receivers() {
    let g = index(&[
        (
            "src/Formatter/Util.php",
            "<?php\nnamespace App\\Formatter;\n\nclass Util\n{\n    public static function escape(string $text): string { return self::clean($text); }\n    private static function clean(string $t): string { return $t; }\n    public function run(): int { return $this->helper(); }\n    private function helper(): int { return 1; }\n}\n",
        ),
        (
            "src/Console/Main.php",
            "<?php\nnamespace App\\Console;\n\nuse App\\Formatter\\Util;\n\nfunction main(Util $u): void\n{\n    Util::escape('x');\n    $u->run();\n    $v = new Util();\n}\n",
        ),
    ]);
    assert_eq!(g.callers("Util.escape"), ["src/Console/Main.php:8 import"]);
    assert_eq!(g.callers("Util.clean"), ["src/Formatter/Util.php:6 exact"]);
    assert_eq!(g.callers("Util.helper"), ["src/Formatter/Util.php:8 exact"]);
    assert_eq!(g.callers("Util.run"), ["src/Console/Main.php:9 exact"]);
}
