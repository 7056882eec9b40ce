//! What extraction finds in one file: definitions, references, imports and local bindings.
//! Plain data, the same whether it was just extracted or read back from the index.

use serde::{Deserialize, Serialize};

/// What a definition is.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum DefKind {
    /// A function outside any type.
    Function,
    /// A function inside a type, or tied to one (a Go receiver, a Rust `impl`).
    Method,
    /// A class.
    Class,
    /// A struct (a C or Rust union too).
    Struct,
    /// An enum.
    Enum,
    /// An interface (a PHP trait and a Java annotation type too).
    Interface,
    /// A Rust trait.
    Trait,
    /// A type alias (`type A = B`, a C `typedef`).
    TypeAlias,
    /// A module or namespace (a Rust `mod`, a Ruby `module`, a C++ or C# namespace).
    Module,
    /// A constant (a C `#define` or enumerator, an all-caps Python variable).
    Constant,
    /// A variable outside any type (a Rust `static`, a module-level assignment).
    Variable,
    /// A field: a variable declared inside a type.
    Field,
    /// A Rust `macro_rules!`: only a macro invocation (`name!(…)`) reaches it.
    Macro,
}

impl DefKind {
    /// Every kind.
    pub const ALL: [DefKind; 13] = [
        DefKind::Function,
        DefKind::Method,
        DefKind::Class,
        DefKind::Struct,
        DefKind::Enum,
        DefKind::Interface,
        DefKind::Trait,
        DefKind::TypeAlias,
        DefKind::Module,
        DefKind::Constant,
        DefKind::Variable,
        DefKind::Field,
        DefKind::Macro,
    ];

    /// The name used in queries, the index and results.
    pub fn as_str(self) -> &'static str {
        match self {
            DefKind::Function => "function",
            DefKind::Method => "method",
            DefKind::Class => "class",
            DefKind::Struct => "struct",
            DefKind::Enum => "enum",
            DefKind::Interface => "interface",
            DefKind::Trait => "trait",
            DefKind::TypeAlias => "type_alias",
            DefKind::Module => "module",
            DefKind::Constant => "constant",
            DefKind::Variable => "variable",
            DefKind::Field => "field",
            DefKind::Macro => "macro",
        }
    }

    /// The kind called `name` (as in `@definition.NAME`).
    pub fn parse(name: &str) -> Option<DefKind> {
        DefKind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// Functions and methods: what a call can land on.
    pub fn is_callable(self) -> bool {
        matches!(self, DefKind::Function | DefKind::Method)
    }

    /// Classes, structs, enums, interfaces, traits and type aliases: what a type use or a
    /// receiver's type can name.
    pub fn is_type(self) -> bool {
        matches!(
            self,
            DefKind::Class
                | DefKind::Struct
                | DefKind::Enum
                | DefKind::Interface
                | DefKind::Trait
                | DefKind::TypeAlias
        )
    }
}

/// A line and column, both 1-based; the column counts bytes.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
pub struct Pos {
    /// Line, from 1.
    pub line: u32,
    /// Column, from 1, in bytes.
    pub column: u32,
}

impl Pos {
    pub(crate) fn of(point: tree_sitter::Point) -> Pos {
        Pos {
            line: u32::try_from(point.row + 1).unwrap_or(u32::MAX),
            column: u32::try_from(point.column + 1).unwrap_or(u32::MAX),
        }
    }
}

/// A definition found in a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Definition {
    /// The name as declared.
    pub name: String,
    /// What it is.
    pub kind: DefKind,
    /// Names of the enclosing definitions and the name, joined by the language's separator
    /// (`Session.request`, `FlagSet.Parse`, `Version::parse`).
    pub qualified_name: String,
    /// Where the whole definition starts and ends (the end line is inclusive).
    pub start: Pos,
    /// The whole definition's last line (inclusive).
    pub end_line: u32,
    /// Where its name is.
    pub name_pos: Pos,
    /// The definition's first line, trimmed (at most 200 characters).
    pub signature: String,
    /// The index (in the file's list) of the innermost definition around it.
    pub parent: Option<usize>,
    /// The type a method belongs to when it is not nested in it (a Go receiver's type, a Rust
    /// `impl`'s type), as written without pointers or type arguments.
    pub owner: Option<String>,
    /// The declared type of a variable, constant or field, as written.
    pub type_text: Option<String>,
    /// The declared return type of a function, as written.
    pub returns: Option<String>,
    /// For a class: the classes and interfaces it extends, implements or embeds, as written
    /// (TypeScript keeps an `extends` clause's type arguments: `Base<A, B>`).
    pub bases: Vec<String>,
    /// The type parameters of a generic class, interface, type alias or function, in order:
    /// `Name`, or `Name=Fallback` where the parameter has a constraint or a default (the
    /// constraint, else the default): `T extends ZodTypeAny` is `T=ZodTypeAny`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub type_params: Vec<String>,
    /// The name a method's receiver goes by (a Go receiver, Python's first parameter).
    pub self_name: Option<String>,
    /// Byte range of the whole definition (used to find the innermost one around a place).
    #[serde(skip)]
    pub(crate) bytes: (usize, usize),
}

/// What a reference is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefKind {
    /// A call site.
    Call,
    /// A type named in an annotation, a declaration, `extends`/`implements`, a constructor.
    Type,
}

impl RefKind {
    /// The name used in the index and results.
    pub fn as_str(self) -> &'static str {
        match self {
            RefKind::Call => "call",
            RefKind::Type => "type",
        }
    }

    /// The kind called `name` (as [`RefKind::as_str`] gives it).
    pub fn parse(name: &str) -> Option<RefKind> {
        match name {
            "call" => Some(RefKind::Call),
            "type" => Some(RefKind::Type),
            _ => None,
        }
    }
}

/// A use of a name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reference {
    /// A call or a type use.
    pub kind: RefKind,
    /// The name used (the callee's last segment).
    pub name: String,
    /// The receiver or qualifier as written (`self`, `s.session`, `strings`, `Foo`), whitespace
    /// collapsed.
    pub receiver: Option<String>,
    /// Where the name is.
    pub pos: Pos,
    /// The index of the innermost definition around it.
    pub enclosing: Option<usize>,
}

/// One imported name (or a whole module) of an import statement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Import {
    /// The module or path as written (`os.path`, `.utils`, `./util`, `crate::a::b`,
    /// `github.com/spf13/pflag`, `stdio.h`).
    pub module: String,
    /// The name taken from it, when the statement names one (`from m import NAME`).
    pub name: Option<String>,
    /// The name it is bound to here, when it differs (`as ALIAS`).
    pub alias: Option<String>,
    /// `from m import *`, `use m::*`, `import a.b.*`, Go's `.` import.
    pub wildcard: bool,
    /// Line of the statement.
    pub line: u32,
    /// The first and last line of the function the statement is in, when it is in one (a
    /// Python import inside a function binds the name there only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope_lines: Option<(u32, u32)>,
}

impl Import {
    /// Whether the import binds its name at `line` of its file.
    pub fn visible_at(&self, line: u32) -> bool {
        self.scope_lines
            .is_none_or(|(first, last)| first <= line && line <= last)
    }

    /// The name the import binds in the file (`None` for a wildcard or a side-effect import).
    pub fn bound_name(&self) -> Option<&str> {
        if self.wildcard {
            return None;
        }
        self.alias.as_deref().or(self.name.as_deref())
    }
}

/// A local binding inside a function: a parameter or variable with a declared type, or
/// assigned a constructor call (`s = Session()`, `var f *FlagSet`, `let x: Foo`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Local {
    /// The bound name; `self.x` for an attribute of the receiver assigned in a method.
    pub name: String,
    /// The index of the definition it is local to.
    pub scope: Option<usize>,
    /// Its declared type, as written.
    pub type_text: Option<String>,
    /// The callee of the call it was assigned, as written (`Session`, `pflag.NewFlagSet`).
    pub value: Option<String>,
    /// The member read it was assigned when that is not a call, as written
    /// (`const keyType = this._def.keyType`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<String>,
    /// Where the binding is (a use takes the last binding before it).
    pub pos: Pos,
    /// Which parameter of its function it is, from 0 (TypeScript: a declared parameter type
    /// types an object literal passed there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub param: Option<u32>,
    /// An untyped parameter of a callback passed as an argument: the callee's declared
    /// function type for that argument gives its type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callback: Option<CallbackParam>,
}

/// Where a callback's parameter gets its type: parameter `param` of the function passed as
/// argument `argument` of the call whose callee's name is at `call`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallbackParam {
    /// Where the name of the call's callee is.
    pub call: Pos,
    /// Which argument of the call the function is, from 0.
    pub argument: u32,
    /// Which parameter of that function, from 0.
    pub param: u32,
}

/// A function member of an object literal passed as an argument (`source.subscribe({ next:
/// (v) => … })`): the literal is of the type the callee's parameter declares, so the member
/// fills that type's member of its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LiteralArg {
    /// The call's index among the file's references.
    pub reference: usize,
    /// Which argument the literal is, from 0.
    pub argument: u32,
    /// The member's index among the file's definitions.
    pub member: usize,
}

/// Everything extracted from one file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileFacts {
    /// The package, module or namespace the file declares (`package cobra`, Java's
    /// `package a.b`), when the language has such a declaration.
    pub package: Option<String>,
    /// The definitions, outer before inner ([`Definition::parent`] and
    /// [`Reference::enclosing`] are indexes into this list).
    pub definitions: Vec<Definition>,
    /// The calls and type uses.
    pub references: Vec<Reference>,
    /// The imports, one per imported name (or module).
    pub imports: Vec<Import>,
    /// The local bindings inside its functions.
    pub locals: Vec<Local>,
    /// `ERROR` and missing nodes in the tree (the file was only partly understood).
    pub syntax_errors: u32,
    /// Object literals' function members passed as arguments (JavaScript, TypeScript).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub literal_args: Vec<LiteralArg>,
}
