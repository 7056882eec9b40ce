//! Resolution: each reference becomes an edge to one definition with the rung that found it,
//! or stays unresolved with the number of candidates it had. Never a silent guess.
//!
//! The rungs, tried in this order for a bare name:
//!
//! 1. **exact** — the name is defined in an enclosing scope or at the top of the same file;
//!    a receiver that is `self`/`this`/the method's receiver (Go receivers, Rust `impl`)
//!    looks in the enclosing type (and its bases); a receiver whose type is declared or
//!    constructed in the same function (`s = Session()`, `var f *FlagSet`, `let x: Foo`)
//!    looks in that type.
//! 2. **import** — through an import resolved to a file by the ecosystem's own rules (see
//!    [`crate::imports`]), following re-exports.
//! 3. **package** — defined at the top of another file of the same package (Go folder, Java
//!    and Kotlin `package`, C# namespace).
//! 4. **name** — the only definition of that name in the workspace (kept, excluded by
//!    default). Several candidates make no edge: the reference is unresolved and counts them.
//!
//! A resolved reference may also get **dispatch** edges, to the definitions that can run in
//! place of its target: the workspace methods that implement a Go interface method it calls,
//! and each definition of a C or C++ function declared in a header when there are several
//! (build alternatives, as the kernel's `kfree` has).
//!
//! A name reached through an import of something outside the workspace (the standard
//! library, a dependency) is `external`: no edge, and not counted as unresolved.

use std::sync::Arc;

use cc_languages::LanguageId;

use crate::language::Constructor;

use crate::imports::{self, ImportTarget};
use crate::model::{DefKind, Import, Local, RefKind};
use crate::table::{Backing, Def, DefId, DefInfo, Deps, FileId, FileInfo, Table};

/// How an edge was resolved.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Rung {
    /// A compiler-grade indexer (SCIP) named the definition ([`crate::precise`]).
    Precise,
    /// Defined in an enclosing scope or at the top of the same file, or a member of a
    /// receiver's known type.
    Exact,
    /// Reached through an import resolved to a file.
    Import,
    /// Defined at the top of another file of the same package.
    Package,
    /// One of the definitions that can run in place of the call's static target.
    Dispatch,
    /// The only definition of the name in the workspace (below the default floor).
    Name,
}

impl Rung {
    /// Every rung, strongest first.
    pub const ALL: [Rung; 6] = [
        Rung::Precise,
        Rung::Exact,
        Rung::Import,
        Rung::Package,
        Rung::Dispatch,
        Rung::Name,
    ];

    /// The name used in the index and results.
    pub fn as_str(self) -> &'static str {
        match self {
            Rung::Precise => "precise",
            Rung::Exact => "exact",
            Rung::Import => "import",
            Rung::Package => "package",
            Rung::Dispatch => "dispatch",
            Rung::Name => "name",
        }
    }

    /// The rung called `s` (as [`Rung::as_str`] gives it).
    pub fn parse(s: &str) -> Option<Rung> {
        Rung::ALL.into_iter().find(|r| r.as_str() == s)
    }

    /// The confidence recorded with an edge of this rung.
    pub fn confidence(self) -> f64 {
        match self {
            Rung::Precise | Rung::Exact => 1.0,
            Rung::Import => 0.9,
            Rung::Package => 0.8,
            Rung::Dispatch => 0.6,
            Rung::Name => 0.3,
        }
    }

    /// The weaker of two rungs (a chain is as strong as its weakest step).
    pub fn weaker(self, other: Rung) -> Rung {
        self.max(other)
    }
}

/// The confidence floor queries use unless told otherwise: every rung but `name`
/// (`dispatch` included).
pub const DEFAULT_MIN_CONFIDENCE: f64 = 0.5;

/// What became of one reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// An edge to `target`, found by `rung`.
    Resolved {
        /// The definition referred to.
        target: DefId,
        /// The rung that found it.
        rung: Rung,
    },
    /// No edge; `candidates` definitions of the name were possible (0: none in the
    /// workspace, 2+: ambiguous).
    Unresolved {
        /// How many definitions of the name were possible.
        candidates: u32,
    },
    /// Reached through something outside the workspace.
    External,
}

/// A reference as resolution needs it.
#[derive(Debug, Clone)]
pub struct RefIn {
    /// A call or a type use.
    pub kind: RefKind,
    /// One copy per distinct name, shared by its uses ([`crate::pending`]).
    pub name: Arc<str>,
    /// The receiver or qualifier as written ([`crate::model::Reference::receiver`]).
    pub receiver: Option<Arc<str>>,
    /// The innermost definition around it.
    pub enclosing: Option<DefId>,
    /// Where the name is.
    pub pos: crate::model::Pos,
}

/// What a name or expression was found to be.
#[derive(Debug, Clone)]
enum Found {
    Defs(Vec<Def>, Rung),
    Module(Vec<FileId>, Rung),
    External,
    Missing(u32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Want {
    /// Something a call can name: a function, method, class (a constructor), field.
    Call,
    /// A type.
    Type,
    /// Anything (a receiver's first segment).
    Any,
    /// A macro (`name!(…)`): nothing else is in its namespace.
    Macro,
}

impl Want {
    fn accepts(self, kind: DefKind) -> bool {
        match self {
            Want::Call => kind.is_callable() || kind.is_type() || kind == DefKind::Field,
            Want::Type => kind.is_type(),
            Want::Any => true,
            Want::Macro => kind == DefKind::Macro,
        }
    }
}

const MAX_DEPTH: usize = 6;

/// Rust's primitive and prelude types: a binding declared with one has no workspace type.
const RUST_STD_TYPES: &[&str] = &[
    "bool", "char", "str", "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64",
    "i128", "isize", "f32", "f64", "String", "Vec", "Option", "Result", "Box",
];

/// Languages where a bare name inside a method finds the class's members.
fn implicit_this(language: LanguageId) -> bool {
    crate::language::of_id(language).implicit_this
}

/// The dispatch edges of one file's references: (index of the reference, target).
pub type DispatchEdges = Vec<(usize, DefId)>;

/// One file's resolution.
#[derive(Debug, Default)]
pub struct Resolved {
    /// One per reference, in order.
    pub outcomes: Vec<Outcome>,
    /// The dispatch edges of its references.
    pub dispatch: DispatchEdges,
    /// An object literal's member passed as an argument, and the member of the parameter's
    /// declared type it fills (a call of that member may run it).
    pub fills: Vec<(DefId, DefId)>,
    /// The keys the resolution read.
    pub deps: Deps,
}

/// Resolves the references of one file; `literals` are its object literals' members passed
/// as arguments (the call's index in `refs`, the argument, the member), in call order.
pub fn resolve_file<B: Backing>(
    table: &Table<B>,
    file: FileId,
    refs: &[RefIn],
    literals: &[crate::index::LiteralArgIn],
) -> Resolved {
    let Some(info) = table.file(file).cloned() else {
        return Resolved {
            outcomes: vec![Outcome::Unresolved { candidates: 0 }; refs.len()],
            ..Resolved::default()
        };
    };
    let mut deps = Deps::default();
    let imports = table.imports_of(file, &mut deps);
    let locals = table.locals_of(file, &mut deps);
    // C and C++: the keys the file's own includes were resolved with are recorded whether or
    // not a name is looked up through them, so that a change of what they name reaches every
    // file that includes this one (see `REACH`).
    let own_includes = if imports::includes_are_transitive(info.language) {
        let mut reach = Deps::default();
        let children = imports::include_children(table, &info, &mut reach);
        deps.add_reach(reach);
        children
    } else {
        Vec::new()
    };
    let mut cx = Cx {
        table,
        file: info,
        imports,
        locals,
        deps,
        nesting: 0,
        budget: STEP_BUDGET,
        at: crate::model::Pos::default(),
        locals_by_name: std::collections::HashMap::new(),
        module_memo: std::collections::HashMap::new(),
        exported_memo: std::collections::HashMap::new(),
        include_reach: None,
        locals_memo: std::collections::HashMap::new(),
        own_includes,
        include_memo: std::collections::HashMap::new(),
        member_memo: std::collections::HashMap::new(),
        bases_memo: std::collections::HashMap::new(),
        method_memo: std::collections::HashMap::new(),
        dispatched: Vec::new(),
        overrides_memo: std::collections::HashMap::new(),
        related_memo: std::collections::HashMap::new(),
        called_at: std::collections::HashMap::new(),
    };
    let mut dispatch = Vec::new();
    let mut fills = Vec::new();
    let outcomes = refs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let outcome = cx.resolve(r);
            dispatch.extend(cx.dispatched.drain(..).map(|d| (i, d)));
            if let Outcome::Resolved { target, .. } = outcome {
                if r.kind == RefKind::Call {
                    cx.called_at.insert(r.pos, target);
                }
                let start = literals.partition_point(|l| l.0 < i);
                let end = literals.partition_point(|l| l.0 <= i);
                if let Some(passed) = literals.get(start..end).filter(|p| !p.is_empty()) {
                    fills.extend(cx.filled_members(target, passed));
                }
            }
            outcome
        })
        .collect();
    fills.sort_unstable();
    fills.dedup();
    Resolved {
        outcomes,
        dispatch,
        fills,
        deps: cx.deps,
    }
}

struct Cx<'t, B: Backing> {
    table: &'t Table<B>,
    file: FileInfo,
    imports: Arc<Vec<Import>>,
    locals: Arc<Vec<(Local, Option<DefId>)>>,
    deps: Deps,
    /// Nesting of the resolution functions right now (they call each other).
    nesting: usize,
    /// This file's local bindings by name.
    locals_by_name: std::collections::HashMap<String, Vec<usize>>,
    /// Import resolutions made for this file's references (each records its keys the first
    /// time, and the keys stay recorded for the file).
    module_memo: std::collections::HashMap<(FileId, String, bool), Found>,
    /// Exported names looked up: (file, name, want) → definitions.
    exported_memo: std::collections::HashMap<(FileId, String, Want), Vec<Def>>,
    /// C and C++: every file this file's includes reach, transitively, with the order a
    /// lookup meets them in (computed the first time a name is looked up through them).
    include_reach: Option<Arc<std::collections::HashMap<FileId, u32>>>,
    /// Other files' local bindings read so far (the table keeps them packed).
    locals_memo: std::collections::HashMap<FileId, Arc<Vec<crate::table::ScopedLocal>>>,
    /// C and C++: the files this file's own includes name.
    own_includes: Vec<FileId>,
    /// Names looked up through the includes: (name, want) → the definitions found.
    include_memo: std::collections::HashMap<(String, Want), Vec<Def>>,
    /// Members looked up: (type, name, want) → what [`Cx::member`] found. A file asks for
    /// the same inherited member over and over (`self.assertEqual` in a test module), and
    /// the answer depends on the table alone.
    member_memo: std::collections::HashMap<(DefId, String, Want), Found>,
    /// A type's bases as resolved in its own file (the walk up every inherited lookup takes).
    bases_memo: std::collections::HashMap<DefId, Vec<(Def, Rung)>>,
    /// Methods looked up by name alone: (name, want) → [`Cx::method_by_name`]'s answer.
    method_memo: std::collections::HashMap<(String, Want), Found>,
    /// Where the reference being resolved is (a use takes the last binding before it).
    at: crate::model::Pos,
    /// Steps left for the current reference: a budget, so that no input makes one
    /// reference expensive.
    budget: usize,
    /// The dispatch targets of the reference just resolved.
    dispatched: Vec<DefId>,
    /// A class method → the overrides found in its workspace subclasses (the keys they
    /// read stay recorded for the file).
    overrides_memo: std::collections::HashMap<DefId, Vec<DefId>>,
    /// [`Cx::related`]'s answers for this file.
    related_memo: std::collections::HashMap<DefId, Vec<DefId>>,
    /// The targets of this file's calls resolved so far, by the place of the callee's name
    /// (a callback's parameters are typed by its call's callee, resolved before them).
    called_at: std::collections::HashMap<crate::model::Pos, DefId>,
}

/// Deepest nesting of resolution steps for one reference.
const MAX_NESTING: usize = 24;
/// Resolution steps one reference may take.
const STEP_BUDGET: usize = 4_000;

/// Splits a receiver into segments (`a.b`, `a::b`, `a->b`, `a?.b`).
fn segments(receiver: &str) -> Vec<String> {
    let normalized = receiver
        .replace("?.", ".")
        .replace("!.", ".")
        .replace("->", ".")
        .replace("::", ".");
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut current = String::new();
    let mut previous = ' ';
    for c in normalized.chars() {
        // An arrow function's `=>` in an argument (`defer(() => source)`) closes nothing.
        let arrow = c == '>' && previous == '=';
        previous = c;
        match c {
            _ if arrow => {}
            '(' | '[' | '<' => {
                depth += 1;
                if depth == 1 && c == '(' {
                    current.push_str("()");
                }
            }
            ')' | ']' | '>' => depth -= 1,
            '.' if depth == 0 => out.push(std::mem::take(&mut current)),
            _ if depth == 0 && !c.is_whitespace() => current.push(c),
            _ => {}
        }
    }
    out.push(current);
    out.retain(|s| !s.is_empty());
    out
}

impl<B: Backing> Cx<'_, B> {
    fn lang(&self) -> LanguageId {
        self.file.language.id
    }

    fn enter(&mut self) -> bool {
        if self.nesting >= MAX_NESTING || self.budget == 0 {
            return false;
        }
        self.nesting += 1;
        self.budget -= 1;
        true
    }

    fn resolve(&mut self, r: &RefIn) -> Outcome {
        self.budget = STEP_BUDGET;
        self.nesting = 0;
        self.at = r.pos;
        let (want, name) = match r.kind {
            RefKind::Call => match r.name.strip_suffix('!') {
                Some(name) => (Want::Macro, name),
                None => (Want::Call, &*r.name),
            },
            RefKind::Type => (Want::Type, &*r.name),
        };
        let found = match &r.receiver {
            None => self.bare(name, r.enclosing, want, 0),
            Some(receiver) => self.through_receiver(receiver, name, r.enclosing, want),
        };
        match found {
            Found::Defs(defs, rung) => {
                // A declaration and its definition are one candidate (C, C++); a call of a
                // class is a call of its constructor when it declares one.
                let called = r.kind == RefKind::Call;
                let mut targets: Vec<(DefId, Vec<DefId>)> = defs
                    .iter()
                    .map(|d| {
                        let d = match called.then(|| self.constructor_of(d)).flatten() {
                            Some(c) => c,
                            None => d.clone(),
                        };
                        match self.definitions_of_declaration(&d).as_slice() {
                            [] => (d.id, Vec::new()),
                            [body] => (*body, Vec::new()),
                            // Build alternatives: the call lands on the declaration and
                            // may run any of them.
                            bodies => (d.id, bodies.to_vec()),
                        }
                    })
                    .collect();
                targets.sort_unstable();
                targets.dedup_by_key(|t| t.0);
                match targets.as_mut_slice() {
                    [(one, bodies)] => {
                        let one = *one;
                        let mut dispatched = std::mem::take(bodies);
                        if called && dispatched.is_empty() {
                            dispatched = self.implementations(one);
                            // `super.m()` runs the base's method itself, never an override.
                            if r.receiver.as_deref() != Some("super") {
                                dispatched.extend(self.overrides(one));
                                dispatched.extend(self.related(one));
                            }
                            dispatched.extend(self.inherited_constructor(one));
                        }
                        dispatched.retain(|d| *d != one);
                        self.dispatched = dispatched;
                        Outcome::Resolved { target: one, rung }
                    }
                    _ => Outcome::Unresolved {
                        candidates: u32::try_from(targets.len()).unwrap_or(u32::MAX),
                    },
                }
            }
            Found::Module(..) => Outcome::Unresolved { candidates: 0 },
            Found::External => Outcome::External,
            Found::Missing(n) => Outcome::Unresolved { candidates: n },
        }
    }

    /// The constructor a call of class `ty` runs, when the class declares one (`__init__`,
    /// `constructor`, a method named as the class).
    fn constructor_of(&mut self, ty: &DefInfo) -> Option<Def> {
        if !ty.kind.is_type() {
            return None;
        }
        let name = match crate::language::of(self.table.file(ty.file)?.language).constructor {
            Constructor::Named(name) => name.to_owned(),
            Constructor::ClassName => ty.name.clone(),
            Constructor::Unknown => return None,
        };
        let defs = self.table.defs_named(&name, &mut self.deps);
        let own: Vec<Def> = defs
            .iter()
            .filter(|d| d.parent == Some(ty.id) && d.kind.is_callable())
            .cloned()
            .collect();
        collapse(own).into_iter().next()
    }

    /// C and C++: the definitions in source files of a function declared in a header
    /// (one, or several for build alternatives); empty for anything else.
    fn definitions_of_declaration(&mut self, decl: &DefInfo) -> Vec<DefId> {
        if !matches!(self.lang(), LanguageId::C | LanguageId::Cpp) || !decl.kind.is_callable() {
            return Vec::new();
        }
        let Some(header) = self.table.file(decl.file) else {
            return Vec::new();
        };
        let is_header = |path: &str| {
            matches!(
                path.rsplit('.').next(),
                Some("h" | "hh" | "hpp" | "hxx" | "h++")
            )
        };
        if !is_header(&header.path) {
            return Vec::new();
        }
        // The type a member declaration belongs to, by name (`int area();` in `class Shape`
        // is defined as `int Shape::area() {…}`).
        let owner_name = decl.owner().map(str::to_owned).or_else(|| {
            decl.parent
                .and_then(|p| self.table.def(p))
                .filter(|p| p.kind.is_type())
                .map(|p| p.name.clone())
        });
        let defs = self.table.defs_named(&decl.name, &mut self.deps);
        defs.iter()
            .filter(|d| {
                d.id != decl.id
                    && d.kind.is_callable()
                    && ((d.parent == decl.parent && d.owner() == decl.owner())
                        || (d.owner().is_some() && d.owner() == owner_name.as_deref()))
                    && self.table.file(d.file).is_some_and(|f| {
                        !is_header(&f.path) && crate::table::family(f.language) == "c"
                    })
            })
            .map(|d| d.id)
            .collect()
    }

    /// The workspace definitions a call of `target` may run instead of it: for a Go
    /// interface method, the methods of the same name of every workspace type whose method
    /// set has all of the interface's methods (embedding included); for a Rust trait method,
    /// that method of each workspace impl of the trait.
    fn implementations(&mut self, target: DefId) -> Vec<DefId> {
        let Some(method) = self.table.def(target) else {
            return Vec::new();
        };
        let Some(iface) = method.parent.and_then(|p| self.table.def(p)) else {
            return Vec::new();
        };
        let in_language = |cx: &Self, d: &DefInfo, language: LanguageId| {
            cx.table
                .file(d.file)
                .is_some_and(|f| f.language.id == language)
        };
        if iface.kind == DefKind::Trait && in_language(self, &iface, LanguageId::Rust) {
            // Rust: each workspace `impl Trait for T` that defines the method.
            let defs = self.table.defs_named(&method.name, &mut self.deps);
            let mut out: Vec<DefId> = defs
                .iter()
                .filter(|d| d.kind == DefKind::Method && d.owner().is_some())
                .filter(|d| d.bases().any(|b| *b == iface.name))
                .filter(|d| in_language(self, d, LanguageId::Rust))
                .map(|d| d.id)
                .collect();
            out.sort_unstable();
            out.dedup();
            return out;
        }
        let is_go = |cx: &Self, d: &DefInfo| in_language(cx, d, LanguageId::Go);
        if iface.kind != DefKind::Interface || !is_go(self, &iface) {
            return Vec::new();
        }
        let Some(required) = self.interface_methods(&iface) else {
            return Vec::new();
        };
        let defs = self.table.defs_named(&method.name, &mut self.deps);
        let mut owners: Vec<(String, String)> = defs
            .iter()
            .filter(|d| d.kind == DefKind::Method && d.parent.is_none() && is_go(self, d))
            .filter_map(|d| {
                let dir = self.table.file(d.file)?.dir().to_owned();
                Some((dir, d.owner().map(str::to_owned)?))
            })
            .collect();
        owners.sort();
        owners.dedup();
        let mut out = Vec::new();
        for (dir, owner) in owners {
            let types = self.table.defs_named(&owner, &mut self.deps);
            let Some(ty) = types
                .iter()
                .find(|t| {
                    t.kind.is_type()
                        && t.kind != DefKind::Interface
                        && self.table.file(t.file).is_some_and(|f| f.dir() == dir)
                })
                .cloned()
            else {
                continue;
            };
            // Every method of that name the type has (a package may define it twice, one
            // per build alternative): which one comes first depends on the order files
            // were read in.
            let mut provider = Vec::new();
            let mut satisfied = true;
            for name in &required {
                match self.member(&ty, name, Want::Call, 1) {
                    Found::Defs(d, _) if !d.is_empty() => {
                        if *name == method.name {
                            provider = d.iter().map(|d| d.id).collect();
                        }
                    }
                    _ => {
                        satisfied = false;
                        break;
                    }
                }
            }
            if satisfied {
                out.extend(provider);
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The overrides of a class or interface method in the workspace's subclasses and
    /// implementing classes (JavaScript, TypeScript): a call of the method may run
    /// any of them (`this._parse(…)` in a base class runs each subclass's `_parse`).
    fn overrides(&mut self, target: DefId) -> Vec<DefId> {
        // Every call of every language passes here: the others look nothing up.
        if !self.overrides_reach(&self.file) {
            return Vec::new();
        }
        if let Some(known) = self.overrides_memo.get(&target) {
            return known.clone();
        }
        let out = self.overrides_uncached(target);
        self.overrides_memo.insert(target, out.clone());
        out
    }

    fn overrides_uncached(&mut self, target: DefId) -> Vec<DefId> {
        let Some(method) = self.table.def(target) else {
            return Vec::new();
        };
        // A member of function type in an interface (`next: (value: T) => void;`) is a
        // method its implementations define.
        let function_field =
            method.kind == DefKind::Field && method.type_text().is_some_and(|t| t.contains("=>"));
        if !(method.kind == DefKind::Method || function_field) || method.name == "constructor" {
            return Vec::new();
        }
        let Some(class) = method
            .parent
            .and_then(|p| self.table.def(p))
            .filter(|c| matches!(c.kind, DefKind::Class | DefKind::Interface))
            .filter(|c| !function_field || c.kind == DefKind::Interface)
        else {
            return Vec::new();
        };
        if !self.defined_where_overrides_reach(&class) {
            return Vec::new();
        }
        let defs = self.table.defs_named(&method.name, &mut self.deps);
        let mut out = Vec::new();
        for d in defs.iter() {
            if d.id == target || d.kind != DefKind::Method {
                continue;
            }
            let Some(sub) = d
                .parent
                .and_then(|p| self.table.def(p))
                .filter(|s| s.kind == DefKind::Class && s.id != class.id)
            else {
                continue;
            };
            if self.defined_where_overrides_reach(&sub) && self.base_path(&sub, class.id).is_some()
            {
                out.push(d.id);
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The members of the types `callee` declares its parameters to be that the object
    /// literals' members `passed` to it fill: `source.subscribe({ next: (v) => … })`, where
    /// `subscribe(observer: Partial<Observer<T>>)`, fills `Observer.next`. The callee's
    /// overload signatures are read too (the implementation's parameter is often `any`).
    fn filled_members(
        &mut self,
        callee: DefId,
        passed: &[crate::index::LiteralArgIn],
    ) -> Vec<(DefId, DefId)> {
        let mut out = Vec::new();
        let mut types: Vec<(u32, Def)> = Vec::new();
        for argument in passed.iter().map(|p| p.1) {
            if types.iter().any(|(a, _)| *a == argument) {
                continue;
            }
            let Some((file, written)) = self.declared_parameter_types(callee, argument) else {
                continue;
            };
            for text in written {
                for name in crate::literals::type_names(&text) {
                    let found = self.in_file(file.clone(), |cx| cx.type_named(&name, None, 1));
                    if let Some((ty, _)) =
                        found.filter(|(t, _)| matches!(t.kind, DefKind::Interface | DefKind::Class))
                    {
                        if !types.iter().any(|(a, t)| *a == argument && t.id == ty.id) {
                            types.push((argument, ty));
                        }
                    }
                }
            }
        }
        for &(_, argument, member) in passed {
            let Some(member_def) = self.table.def(member) else {
                continue;
            };
            let wanted: Vec<Def> = types
                .iter()
                .filter(|(a, _)| *a == argument)
                .map(|(_, t)| t.clone())
                .collect();
            for ty in wanted {
                if let Found::Defs(defs, _) = self.member(&ty, &member_def.name, Want::Call, 1) {
                    out.extend(
                        defs.iter()
                            .filter(|d| d.kind.is_callable() || d.kind == DefKind::Field)
                            .map(|d| (member, d.id)),
                    );
                }
            }
        }
        out
    }

    /// The types `callee` declares for its parameter `argument`, as written, over its overload
    /// signatures (an implementation's own is often `any`), with the file they are written
    /// in.
    fn declared_parameter_types(
        &mut self,
        callee: DefId,
        argument: u32,
    ) -> Option<(FileInfo, Vec<String>)> {
        let callee = self.table.def(callee)?;
        if !callee.kind.is_callable() {
            return None;
        }
        let file = self.table.file(callee.file).cloned()?;
        let signatures: Vec<DefId> = self
            .table
            .defs_named(&callee.name, &mut self.deps)
            .iter()
            .filter(|d| d.file == callee.file && d.parent == callee.parent && d.kind.is_callable())
            .map(|d| d.id)
            .collect();
        let locals = self.locals_in(callee.file);
        let written: Vec<String> = locals
            .iter()
            .filter(|(l, scope)| {
                l.param == Some(argument) && scope.is_some_and(|s| signatures.contains(&s))
            })
            .filter_map(|(l, _)| l.type_text.clone())
            .collect();
        Some((file, written))
    }

    /// The type of a callback's untyped parameter: the parameter's in the function type the
    /// callee declares for the argument (`operate(init: (source: Observable<T>, subscriber:
    /// Subscriber<R>) => …)` types `subscriber` of `operate((source, subscriber) => …)`).
    fn callback_param_type(
        &mut self,
        callback: &crate::model::CallbackParam,
        depth: usize,
    ) -> Option<(Def, Rung)> {
        let callee = *self.called_at.get(&callback.call)?;
        let (file, written) = self.declared_parameter_types(callee, callback.argument)?;
        for text in written {
            let Some(param) = function_type_parameter(&text, callback.param) else {
                continue;
            };
            let found = self.in_file(file.clone(), |cx| cx.type_named(&param, None, depth + 1));
            if found.is_some() {
                return found;
            }
        }
        None
    }

    /// The members a JavaScript or TypeScript method overrides or implements in its class's
    /// bases (at any depth), and their other overrides: one group for tsserver's "find
    /// references" (a call of `AsyncAction.unsubscribe` is a reference of
    /// `Subscription.unsubscribe` and of `SubscriptionLike.unsubscribe` it implements, and
    /// so of `Subscriber.unsubscribe` beside it), as the precise tier relates them.
    fn related(&mut self, target: DefId) -> Vec<DefId> {
        if !self.overrides_reach(&self.file) && self.lang() != LanguageId::Rust {
            return Vec::new();
        }
        if let Some(known) = self.related_memo.get(&target) {
            return known.clone();
        }
        let out = self.related_uncached(target);
        self.related_memo.insert(target, out.clone());
        out
    }

    fn related_uncached(&mut self, target: DefId) -> Vec<DefId> {
        let Some(method) = self.table.def(target) else {
            return Vec::new();
        };
        if method.kind != DefKind::Method || method.name == "constructor" {
            return Vec::new();
        }
        if self.lang() == LanguageId::Rust {
            return self.related_in_rust(&method);
        }
        let Some(class) = method
            .parent
            .and_then(|p| self.table.def(p))
            .filter(|c| matches!(c.kind, DefKind::Class | DefKind::Interface))
        else {
            return Vec::new();
        };
        if !self.defined_where_overrides_reach(&class) {
            return Vec::new();
        }
        let named = self.table.defs_named(&method.name, &mut self.deps);
        let bases: Vec<DefId> = self
            .ancestors(&class)
            .into_iter()
            .map(|(_, _, b)| b.id)
            .collect();
        // A member of function type in an interface (`next: (value: T) => void;`) is a
        // method its implementations define.
        let ups: Vec<DefId> = named
            .iter()
            .filter(|d| d.parent.is_some_and(|p| bases.contains(&p)))
            .filter(|d| {
                d.kind == DefKind::Method
                    || (d.kind == DefKind::Field && d.type_text().is_some_and(|t| t.contains("=>")))
            })
            .map(|d| d.id)
            .collect();
        let mut out = ups.clone();
        for up in ups {
            out.extend(self.overrides(up));
        }
        // The class's own overload signatures are the call's target already.
        out.retain(|d| {
            self.table
                .def(*d)
                .is_some_and(|d| d.parent != method.parent)
        });
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Rust: the method of `impl Trait for T` is one group with the trait's method and the
    /// other workspace impls of it, as rust-analyzer's references count them (a call of
    /// `MultiPeek::peeking_next` is a reference of `PeekingNext::peeking_next`). A std
    /// trait's impls (`impl Iterator for T`) relate to nothing: the trait is not here.
    fn related_in_rust(&mut self, method: &DefInfo) -> Vec<DefId> {
        let Some(file) = self.table.file(method.file).cloned() else {
            return Vec::new();
        };
        let named = self.table.defs_named(&method.name, &mut self.deps);
        let mut ups = Vec::new();
        for base in method.bases() {
            let found = self.in_file(file.clone(), |cx| cx.type_named(base, None, 1));
            if let Some((tr, _)) = found.filter(|(t, _)| t.kind == DefKind::Trait) {
                ups.extend(
                    named
                        .iter()
                        .filter(|d| d.parent == Some(tr.id) && d.kind.is_callable())
                        .map(|d| d.id),
                );
            }
        }
        let mut out = ups.clone();
        for up in ups {
            out.extend(self.implementations(up));
        }
        out.retain(|d| *d != method.id);
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Whether calls in `file`'s language reach the overrides of the method called:
    /// JavaScript and TypeScript, as tsserver counts them. (Python's checkers do not, and a
    /// base method there is overridden by many test-local subclasses: click's
    /// `to_info_dict` would fan out to nine.)
    fn overrides_reach(&self, file: &FileInfo) -> bool {
        crate::table::family(file.language) == "js"
    }

    fn defined_where_overrides_reach(&self, def: &DefInfo) -> bool {
        self.table
            .file(def.file)
            .is_some_and(|f| self.overrides_reach(f))
    }

    /// How `ty` reaches `ancestor` through its bases, at any depth (each base resolved in
    /// the file of the type that names it): the type whose base it is, and that base as
    /// written (`ZodType<…, ZodOptionalDef<T>, …>`).
    fn base_path(&mut self, ty: &Def, ancestor: DefId) -> Option<(Def, String)> {
        self.ancestors(ty)
            .into_iter()
            .find(|(_, _, b)| b.id == ancestor)
            .map(|(writer, base, _)| (writer, base))
    }

    /// Every type `ty` reaches through its bases, nearest first, each once (each base
    /// resolved in the file of the type that names it): the type whose base it is, that base
    /// as written, and the base.
    fn ancestors(&mut self, ty: &Def) -> Vec<(Def, String, Def)> {
        let mut out = Vec::new();
        let mut seen = vec![ty.id];
        let mut level = vec![ty.clone()];
        for _ in 0..MAX_DEPTH {
            let mut next = Vec::new();
            for t in &level {
                let Some(file) = self.table.file(t.file).cloned() else {
                    continue;
                };
                for base in t.bases() {
                    let found = self.in_file(file.clone(), |cx| cx.type_named(base, None, 1));
                    let Some((b, _)) = found.filter(|(b, _)| !seen.contains(&b.id)) else {
                        continue;
                    };
                    seen.push(b.id);
                    out.push((t.clone(), base.to_owned(), b.clone()));
                    next.push(b);
                }
            }
            if next.is_empty() {
                break;
            }
            level = next;
        }
        out
    }

    /// The constructor a call of a class runs when the class declares none but a base
    /// does (`new ZodEffects(…)` runs `ZodType`'s constructor): a dispatch edge beside
    /// the class itself.
    fn inherited_constructor(&mut self, target: DefId) -> Option<DefId> {
        if !self.overrides_reach(&self.file) {
            return None;
        }
        let ty = self.table.def(target)?;
        if ty.kind != DefKind::Class || !self.defined_where_overrides_reach(&ty) {
            return None;
        }
        match self.member(&ty, "constructor", Want::Call, 1) {
            Found::Defs(defs, _) => defs
                .iter()
                .find(|d| d.kind.is_callable() && d.parent != Some(ty.id))
                .map(|d| d.id),
            _ => None,
        }
    }

    /// The method names a Go interface requires, its embedded workspace interfaces'
    /// included; `None` when the budget ran out before all were known.
    fn interface_methods(&mut self, iface: &DefInfo) -> Option<Vec<String>> {
        let mut names = Vec::new();
        let mut seen = vec![iface.id];
        let mut queue = vec![iface.clone()];
        while let Some(ty) = queue.pop() {
            if self.budget == 0 {
                return None;
            }
            self.budget -= 1;
            names.extend(
                self.table
                    .interface_members(&ty)
                    .iter()
                    .filter(|d| d.kind == DefKind::Method)
                    .map(|d| d.name.clone()),
            );
            let Some(file) = self.table.file(ty.file).cloned() else {
                continue;
            };
            for base in ty.bases() {
                let found = self.in_file(file.clone(), |cx| cx.type_named(base, None, 1));
                // An embedded interface from outside the workspace adds methods no
                // workspace type is checked for: the check is looser, never wrong the
                // other way.
                if let Some((base, _)) = found {
                    if base.kind == DefKind::Interface && !seen.contains(&base.id) {
                        seen.push(base.id);
                        queue.push((*base).clone());
                    }
                }
            }
        }
        names.sort();
        names.dedup();
        Some(names)
    }

    /// Runs `f` as if resolving in `file` (its imports), then comes back.
    fn in_file<T>(&mut self, file: FileInfo, f: impl FnOnce(&mut Self) -> T) -> T {
        let saved = std::mem::replace(&mut self.file, file);
        let saved_imports = std::mem::replace(
            &mut self.imports,
            self.table.imports_of(self.file.id, &mut self.deps),
        );
        let out = f(self);
        self.file = saved;
        self.imports = saved_imports;
        out
    }

    fn scope_chain(&self, enclosing: Option<DefId>) -> Vec<Def> {
        let mut out = Vec::new();
        let mut next = enclosing;
        while let Some(id) = next {
            if out.len() > 64 {
                break;
            }
            let Some(def) = self.table.def(id) else { break };
            next = def.parent;
            out.push(def);
        }
        out
    }

    /// Definitions of `name` in `file` at its top level (no parent, no owner; in C# and C++
    /// a namespace is no scope of its own for this).
    fn top_level(&mut self, file: FileId, name: &str, want: Want) -> Vec<Def> {
        let defs = self.table.defs_named(name, &mut self.deps);
        defs.iter()
            .filter(|d| d.file == file && d.owner().is_none() && want.accepts(d.kind))
            .filter(|d| self.at_top_level(d))
            .cloned()
            .collect()
    }

    /// A bare name at a place.
    fn bare(&mut self, name: &str, enclosing: Option<DefId>, want: Want, depth: usize) -> Found {
        if !self.enter() {
            return Found::Missing(0);
        }
        let out = self.bare_inner(name, enclosing, want, depth);
        self.nesting -= 1;
        out
    }

    fn bare_inner(
        &mut self,
        name: &str,
        enclosing: Option<DefId>,
        want: Want,
        depth: usize,
    ) -> Found {
        let defs = self.table.defs_named(name, &mut self.deps);
        // 1. Enclosing scopes, innermost first.
        if let Some(found) = self.in_enclosing_scopes(&defs, name, enclosing, want, depth) {
            return found;
        }
        // 2. The file's top level.
        let here = self.top_level(self.file.id, name, want);
        if !here.is_empty() {
            return Found::Defs(collapse(here), Rung::Exact);
        }
        // 3. Imports binding the name.
        if let Some(found) = self.through_binding_imports(name, want, depth) {
            return found;
        }
        // 4. The package.
        let package_files = self.package_files();
        let hits: Vec<Def> = defs
            .iter()
            .filter(|d| {
                d.file != self.file.id
                    && d.parent.is_none()
                    && d.owner().is_none()
                    && want.accepts(d.kind)
                    && package_files.binary_search(&d.file).is_ok()
            })
            .cloned()
            .collect();
        if !hits.is_empty() {
            return Found::Defs(collapse(hits), Rung::Package);
        }
        // 5. Wildcard imports (and languages whose imports bring every name).
        if let Some(found) = self.through_wildcards(name, want, depth) {
            return found;
        }
        // 6. The only definition of the name, anywhere in this language family.
        self.unique(&defs, want, |d| d.parent.is_none() && d.owner().is_none())
    }

    /// The name among the enclosing scopes' definitions (and an enclosing type's members,
    /// where members are in scope unqualified), innermost first.
    fn in_enclosing_scopes(
        &mut self,
        defs: &[Def],
        name: &str,
        enclosing: Option<DefId>,
        want: Want,
        depth: usize,
    ) -> Option<Found> {
        let chain = self.scope_chain(enclosing);
        for scope in &chain {
            let is_type = scope.kind.is_type();
            if is_type && !implicit_this(self.lang()) {
                continue;
            }
            // The members of an object literal (`const p = { setTimeout() {…} }`) are no
            // names in scope: a bare `setTimeout(…)` inside one is the global.
            if !is_type && !scope.kind.is_callable() && scope.kind != DefKind::Module {
                continue;
            }
            // A Rust method is never in scope by its bare name (`drop(x)` beside a local
            // `impl Drop … fn drop` is the prelude's).
            let methods_hidden = self.lang() == LanguageId::Rust;
            let hits: Vec<Def> = defs
                .iter()
                .filter(|d| d.parent == Some(scope.id) && want.accepts(d.kind))
                .filter(|d| !(methods_hidden && d.owner().is_some()))
                .filter(|d| !crate::extract::owned_by_no_type(d.owner()))
                .cloned()
                .collect();
            if !hits.is_empty() {
                return Some(Found::Defs(collapse(hits), Rung::Exact));
            }
            if is_type && depth < MAX_DEPTH {
                let inherited = self.member(scope, name, want, depth + 1);
                if let Found::Defs(d, rung) = inherited {
                    return Some(Found::Defs(d, rung));
                }
            }
        }
        if implicit_this(self.lang()) {
            // A method with an owner (C++ `void A::f()`) sees A's members.
            if let Some(method) = chain.iter().find(|d| d.owner().is_some()) {
                if let Some((owner, rung)) = self.enclosing_type(method, depth) {
                    if let Found::Defs(d, r) = self.member(&owner, name, want, depth + 1) {
                        return Some(Found::Defs(d, rung.weaker(r)));
                    }
                }
            }
        }
        None
    }

    /// The name through the visible imports that bind it (`None`: none says anything).
    fn through_binding_imports(&mut self, name: &str, want: Want, depth: usize) -> Option<Found> {
        let imports = self.imports.clone();
        let line = self.at.line;
        let mut external = false;
        for import in imports.iter().filter(|i| i.visible_at(line)) {
            if imports::binding(import, self.file.language).as_deref() != Some(name) {
                continue;
            }
            match self.import_target(import, depth) {
                Found::Defs(d, rung) => {
                    let d: Vec<Def> = d.into_iter().filter(|d| want.accepts(d.kind)).collect();
                    if !d.is_empty() {
                        return Some(Found::Defs(collapse(d), rung));
                    }
                }
                Found::Module(files, rung) => return Some(Found::Module(files, rung)),
                Found::External => external = true,
                Found::Missing(_) => {}
            }
        }
        external.then_some(Found::External)
    }

    /// The name through wildcard imports, or the includes of a language whose includes
    /// bring every name transitively.
    fn through_wildcards(&mut self, name: &str, want: Want, depth: usize) -> Option<Found> {
        let imports = self.imports.clone();
        if imports::includes_are_transitive(self.file.language)
            && imports.iter().all(|i| i.scope_lines.is_none())
        {
            let hits = self.through_includes(name, want);
            return (!hits.is_empty()).then(|| Found::Defs(collapse(hits), Rung::Import));
        }
        let line = self.at.line;
        for import in imports.iter().filter(|i| i.visible_at(line)) {
            if !(import.wildcard || imports::imports_everything(self.file.language)) {
                continue;
            }
            if let Found::Module(files, rung) = self.import_module(import, depth) {
                let mut hits = Vec::new();
                for file in files {
                    hits.extend(self.exported(file, name, want, depth + 1));
                }
                if !hits.is_empty() {
                    return Some(Found::Defs(collapse(hits), rung.weaker(Rung::Import)));
                }
            }
        }
        None
    }

    fn unique(&mut self, defs: &[Def], want: Want, filter: impl Fn(&DefInfo) -> bool) -> Found {
        let fam = crate::table::family(self.file.language);
        let hits: Vec<Def> = defs
            .iter()
            .filter(|d| want.accepts(d.kind) && filter(d))
            .filter(|d| {
                self.table
                    .file(d.file)
                    .is_some_and(|f| crate::table::family(f.language) == fam)
            })
            .cloned()
            .collect();
        let hits = collapse(hits);
        match hits.len() {
            1 => Found::Defs(hits, Rung::Name),
            n => Found::Missing(u32::try_from(n).unwrap_or(u32::MAX)),
        }
    }

    /// The files of this file's package (sorted), other than Go's external test package.
    fn package_files(&mut self) -> Vec<FileId> {
        match self.lang() {
            LanguageId::Go => {
                let dir = self.file.dir().to_owned();
                let package = self.file.package.clone();
                let files: Vec<FileId> = self.table.files_in_dir(&dir, &mut self.deps).to_vec();
                files
                    .into_iter()
                    .filter(|f| {
                        self.table.file(*f).is_some_and(|i| {
                            i.language.id == LanguageId::Go && i.package == package
                        })
                    })
                    .collect()
            }
            LanguageId::Java | LanguageId::Kotlin | LanguageId::CSharp | LanguageId::Php => {
                match self.file.package.clone() {
                    Some(package) => self
                        .table
                        .files_in_package(self.file.language, &package, &mut self.deps)
                        .to_vec(),
                    None => Vec::new(),
                }
            }
            _ => Vec::new(),
        }
    }

    /// A name exported by a module file: its top-level definition, or a name one of its
    /// imports brings in (a re-export: `__init__.py`, `export … from`, `pub use`).
    fn exported(&mut self, file: FileId, name: &str, want: Want, depth: usize) -> Vec<Def> {
        if !self.enter() {
            return Vec::new();
        }
        let key = (file, name.to_owned(), want);
        if let Some(found) = self.exported_memo.get(&key) {
            self.nesting -= 1;
            return found.clone();
        }
        let out = self.exported_inner(file, name, want, depth);
        self.exported_memo.insert(key, out.clone());
        self.nesting -= 1;
        out
    }

    fn exported_inner(&mut self, file: FileId, name: &str, want: Want, depth: usize) -> Vec<Def> {
        let direct = self.top_level(file, name, want);
        let Some(info) = self.table.file(file).cloned() else {
            return direct;
        };
        // Rust: a module is in the type namespace, a function of the same name re-exported
        // beside it in the value namespace (`mod peek_nth;` with `pub use
        // crate::free::*;` bringing `fn peek_nth`): both are exported.
        let modules_only = info.language.id == LanguageId::Rust
            && !direct.is_empty()
            && direct.iter().all(|d| d.kind == DefKind::Module);
        if (!direct.is_empty() && !modules_only) || depth > MAX_DEPTH {
            return direct;
        }
        if modules_only {
            let mut both = direct;
            both.extend(self.reexported(&info, name, Want::Call, depth));
            return both;
        }
        self.reexported(&info, name, want, depth)
    }

    /// Another file's local bindings (read once for this file's resolution).
    fn locals_in(&mut self, file: FileId) -> Arc<Vec<crate::table::ScopedLocal>> {
        if let Some(found) = self.locals_memo.get(&file) {
            return found.clone();
        }
        let found = self.table.locals_of(file, &mut self.deps);
        self.locals_memo.insert(file, found.clone());
        found
    }

    /// C and C++: the top-level definitions of `name` in the first file, in the order a
    /// depth-first walk of the includes meets them, that has any — what a walk of
    /// [`Cx::exported`] through every include finds, without walking the includes again
    /// for each name (a kernel source file reaches about a thousand headers).
    fn through_includes(&mut self, name: &str, want: Want) -> Vec<Def> {
        let key = (name.to_owned(), want);
        if let Some(found) = self.include_memo.get(&key) {
            return found.clone();
        }
        let reach = self.include_reach();
        let defs = self.table.defs_named(name, &mut self.deps);
        let mut first: Option<u32> = None;
        let mut hits: Vec<Def> = Vec::new();
        for d in defs.iter() {
            let Some(&rank) = reach.get(&d.file) else {
                continue;
            };
            if first.is_some_and(|f| rank > f)
                || d.owner().is_some()
                || !want.accepts(d.kind)
                || !self.at_top_level(d)
            {
                continue;
            }
            if first != Some(rank) {
                hits.clear();
                first = Some(rank);
            }
            hits.push(d.clone());
        }
        self.include_memo.insert(key, hits.clone());
        hits
    }

    /// Whether a definition is at its file's top level as [`Cx::top_level`] counts it (a
    /// C++ namespace is no scope of its own).
    fn at_top_level(&self, d: &DefInfo) -> bool {
        match d.parent {
            None => true,
            Some(p) => {
                self.table
                    .file(d.file)
                    .is_some_and(|f| matches!(f.language.id, LanguageId::CSharp | LanguageId::Cpp))
                    && self.table.def(p).is_some_and(|p| p.kind == DefKind::Module)
            }
        }
    }

    /// The files this file's includes reach, each with its place in a depth-first walk in
    /// include order (the walk [`Cx::exported`] takes, to the same depth); iterative, so
    /// that no include chain decides the stack's depth.
    fn include_reach(&mut self) -> Arc<std::collections::HashMap<FileId, u32>> {
        if let Some(reach) = &self.include_reach {
            return reach.clone();
        }
        let table = self.table;
        let mut rank: std::collections::HashMap<FileId, u32> = std::collections::HashMap::new();
        let mut stack: Vec<(FileId, usize)> =
            self.own_includes.iter().rev().map(|f| (*f, 1)).collect();
        while let Some((file, depth)) = stack.pop() {
            if file == self.file.id || rank.contains_key(&file) {
                continue;
            }
            let next = u32::try_from(rank.len()).unwrap_or(u32::MAX);
            rank.insert(file, next);
            let Some(info) = table.file(file) else {
                continue;
            };
            if depth <= MAX_DEPTH && imports::includes_are_transitive(info.language) {
                let children = table.include_children(file, || {
                    imports::include_children(table, info, &mut Deps::default())
                });
                stack.extend(children.iter().rev().map(|f| (*f, depth + 1)));
            }
        }
        let reach = Arc::new(rank);
        self.include_reach = Some(reach.clone());
        reach
    }

    /// What `info`'s imports re-export as `name`: a binding of that name, else through a
    /// wildcard re-export (or a transitive include).
    fn reexported(&mut self, info: &FileInfo, name: &str, want: Want, depth: usize) -> Vec<Def> {
        let imports = self.table.imports_of(info.id, &mut self.deps);
        // An import inside a function exports nothing.
        for import in imports.iter().filter(|i| i.scope_lines.is_none()) {
            let binds = imports::binding(import, info.language);
            if binds.as_deref() == Some(name) {
                if let Found::Defs(d, _) = self.import_target_from(info, import, depth + 1) {
                    let d: Vec<Def> = d.into_iter().filter(|d| want.accepts(d.kind)).collect();
                    if !d.is_empty() {
                        return d;
                    }
                }
            }
        }
        for import in imports.iter().filter(|i| i.scope_lines.is_none()) {
            let reexports = (import.wildcard && imports::reexports_wildcards(info.language))
                || imports::includes_are_transitive(info.language);
            if reexports {
                if let Found::Module(files, _) = self.import_module_from(info, import) {
                    // `pub use crate::structs::*` of an inline module names the file itself.
                    for f in files.into_iter().filter(|f| *f != info.id) {
                        let d = self.exported(f, name, want, depth + 1);
                        if !d.is_empty() {
                            return d;
                        }
                    }
                }
            }
        }
        Vec::new()
    }

    fn import_module(&mut self, import: &Import, _depth: usize) -> Found {
        let info = self.file.clone();
        self.import_module_from(&info, import)
    }

    /// The module files an import names.
    fn import_module_from(&mut self, from: &FileInfo, import: &Import) -> Found {
        let key = (
            from.id,
            import.module.clone(),
            import.wildcard || import.name.is_some(),
        );
        if let Some(found) = self.module_memo.get(&key) {
            return found.clone();
        }
        let found = match imports::module_files(self.table, from, import, &mut self.deps) {
            ImportTarget::Files(files) => Found::Module(files, Rung::Import),
            ImportTarget::External => Found::External,
        };
        self.module_memo.insert(key, found.clone());
        found
    }

    fn import_target(&mut self, import: &Import, depth: usize) -> Found {
        let info = self.file.clone();
        self.import_target_from(&info, import, depth)
    }

    /// What an import binds: the named definition in its module, a submodule, or the module.
    fn import_target_from(&mut self, from: &FileInfo, import: &Import, depth: usize) -> Found {
        // Python's `import a.b` binds the package `a`.
        let top;
        let import = if from.language.id == LanguageId::Python
            && import.name.is_none()
            && import.alias.is_none()
            && import.module.contains('.')
            && !import.module.starts_with('.')
        {
            top = Import {
                module: import
                    .module
                    .split('.')
                    .next()
                    .unwrap_or_default()
                    .to_owned(),
                ..import.clone()
            };
            &top
        } else {
            import
        };
        let name = imports::imported_name(import, from.language);
        let module = self.import_module_from(from, import);
        let Some(name) = name else {
            return module;
        };
        match module {
            Found::Module(files, rung) => {
                let mut hits = Vec::new();
                for file in &files {
                    hits.extend(self.exported(*file, &name, Want::Any, depth + 1));
                }
                if !hits.is_empty() {
                    return Found::Defs(collapse(hits), rung);
                }
                // `from pkg import submodule`.
                if let ImportTarget::Files(sub) =
                    imports::submodule(self.table, from, import, &name, &mut self.deps)
                {
                    return Found::Module(sub, rung);
                }
                match self.namespace_reexport(&files, &name) {
                    Some(sub) => Found::Module(sub, rung),
                    None => Found::Missing(0),
                }
            }
            other => other,
        }
    }

    /// JavaScript and TypeScript: the module a module file re-exports as a namespace under
    /// `name` (`export * as util from "./util.js"`), directly or through its `export *`.
    fn namespace_reexport(&mut self, files: &[FileId], name: &str) -> Option<Vec<FileId>> {
        let mut queue: Vec<FileId> = files.to_vec();
        let mut seen: Vec<FileId> = Vec::new();
        while let Some(file) = queue.pop() {
            if seen.contains(&file) {
                continue;
            }
            if seen.len() > MAX_DEPTH * 4 || self.budget == 0 {
                return None;
            }
            self.budget -= 1;
            seen.push(file);
            let info = self.table.file(file)?.clone();
            if crate::table::family(info.language) != "js" {
                return None;
            }
            let imports = self.table.imports_of(file, &mut self.deps);
            for import in imports.iter().filter(|i| i.scope_lines.is_none()) {
                let namespace = import.name.is_none() && !import.wildcard;
                if namespace && import.alias.as_deref() == Some(name) {
                    if let Found::Module(sub, _) = self.import_module_from(&info, import) {
                        return Some(sub);
                    }
                } else if import.wildcard {
                    if let Found::Module(sub, _) = self.import_module_from(&info, import) {
                        queue.extend(sub);
                    }
                }
            }
        }
        None
    }

    /// The type a method's `self` stands for, with the rung that found it.
    fn enclosing_type(&mut self, method: &DefInfo, depth: usize) -> Option<(Def, Rung)> {
        if !self.enter() {
            return None;
        }
        let out = self.enclosing_type_inner(method, depth);
        self.nesting -= 1;
        out
    }

    fn enclosing_type_inner(&mut self, method: &DefInfo, depth: usize) -> Option<(Def, Rung)> {
        if let Some(parent) = method.parent.and_then(|p| self.table.def(p)) {
            if parent.kind.is_type() {
                return Some((parent, Rung::Exact));
            }
        }
        let owner = method.owner().map(str::to_owned)?;
        let file = self.table.file(method.file)?.clone();
        // A JavaScript prototype's owner is its constructor function (`function Shape() {}`
        // with `Shape.prototype.area = function () {…}`).
        let want = if matches!(
            file.language.id,
            LanguageId::JavaScript | LanguageId::TypeScript | LanguageId::Tsx
        ) {
            Want::Call
        } else {
            Want::Type
        };
        let found = self.in_file(file, |cx| cx.bare(&owner, None, want, depth + 1));
        match found {
            Found::Defs(defs, rung) if defs.len() == 1 => {
                // The receiver's type is the method's own: as sure as the file it is in.
                let rung = if rung == Rung::Package {
                    Rung::Exact
                } else {
                    rung
                };
                defs.into_iter().next().map(|d| (d, rung))
            }
            _ => None,
        }
    }

    /// Members called `name` of type `ty`: nested in it, owned by it (Go methods, Rust
    /// `impl`), or inherited from its bases.
    fn member(&mut self, ty: &DefInfo, name: &str, want: Want, depth: usize) -> Found {
        if !self.enter() {
            return Found::Missing(0);
        }
        let key = (ty.id, name.to_owned(), want);
        if let Some(found) = self.member_memo.get(&key) {
            self.nesting -= 1;
            return found.clone();
        }
        let out = self.member_inner(ty, name, want, depth);
        // An answer cut short by the step budget is no answer to keep.
        if self.budget > 0 {
            self.member_memo.insert(key, out.clone());
        }
        self.nesting -= 1;
        out
    }

    /// `ty`'s bases, each resolved in `ty`'s own file (other than `ty` itself).
    fn resolved_bases(&mut self, ty: &DefInfo, depth: usize) -> Vec<(Def, Rung)> {
        if let Some(found) = self.bases_memo.get(&ty.id) {
            return found.clone();
        }
        let Some(file) = self.table.file(ty.file).cloned() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for base in ty.bases() {
            let base_found = self.in_file(file.clone(), |cx| cx.type_named(base, None, depth + 1));
            if let Some((base_ty, rung)) = base_found {
                if base_ty.id != ty.id {
                    out.push((base_ty, rung));
                }
            }
        }
        if self.budget > 0 {
            self.bases_memo.insert(ty.id, out.clone());
        }
        out
    }

    fn member_inner(&mut self, ty: &DefInfo, name: &str, want: Want, depth: usize) -> Found {
        let ty_dir = self
            .table
            .file(ty.file)
            .map(|f| f.dir().to_owned())
            .unwrap_or_default();
        let ty_lang = self.table.file(ty.file).map(|f| f.language.id);
        let defs = self.table.defs_named(name, &mut self.deps);
        let hits: Vec<Def> = defs
            .iter()
            .filter(|d| want.accepts(d.kind) || d.kind == DefKind::Field)
            .filter(|d| {
                d.parent == Some(ty.id)
                    || (d.owner() == Some(ty.name.as_str())
                        && self.table.file(d.file).is_some_and(|f| {
                            // Go methods live in the type's package; Rust impls anywhere in
                            // the crate; a JavaScript prototype's members beside its
                            // constructor (a bundle elsewhere may define a namesake).
                            match ty_lang {
                                Some(LanguageId::Go) => f.dir() == ty_dir,
                                Some(
                                    LanguageId::JavaScript
                                    | LanguageId::TypeScript
                                    | LanguageId::Tsx,
                                ) => d.file == ty.file,
                                _ => true,
                            }
                        }))
            })
            .cloned()
            .collect();
        if !hits.is_empty() {
            return Found::Defs(collapse(hits), Rung::Exact);
        }
        if depth > MAX_DEPTH {
            return Found::Missing(0);
        }
        for (base_ty, rung) in self.resolved_bases(ty, depth) {
            if let Found::Defs(d, r) = self.member(&base_ty, name, want, depth + 1) {
                return Found::Defs(d, rung.weaker(r));
            }
        }
        Found::Missing(0)
    }

    /// A type written in this file (`Foo`, `pkg.Foo`, `*Foo`, `Foo[int]`).
    fn type_named(
        &mut self,
        written: &str,
        enclosing: Option<DefId>,
        depth: usize,
    ) -> Option<(Def, Rung)> {
        if !self.enter() {
            return None;
        }
        let out = self.type_named_inner(written, enclosing, depth);
        self.nesting -= 1;
        out
    }

    fn type_named_inner(
        &mut self,
        written: &str,
        enclosing: Option<DefId>,
        depth: usize,
    ) -> Option<(Def, Rung)> {
        let core = optional_core(written);
        if depth > MAX_DEPTH {
            return None;
        }
        if let Some(found) = self.union_type(&core, enclosing, depth) {
            return found;
        }
        let name = crate::extract::type_name(&core);
        if name.is_empty() {
            return None;
        }
        let segs = segments(&name);
        let found = match segs.as_slice() {
            [] => return None,
            [one] => self.bare(one, enclosing, Want::Type, depth + 1),
            [qualifier @ .., last] => {
                let qualifier = qualifier.join(".");
                self.through_receiver(&qualifier, last, enclosing, Want::Type)
            }
        };
        match found {
            Found::Defs(defs, rung) if defs.len() == 1 => {
                let def = defs.into_iter().next()?;
                // A type alias of another type: follow it once.
                if def.kind == DefKind::TypeAlias {
                    if let Some(aliased) = def.type_text().map(str::to_owned) {
                        if depth < MAX_DEPTH {
                            if let Some((t, r)) = self.type_named(&aliased, None, depth + 1) {
                                return Some((t, rung.weaker(r)));
                            }
                        }
                    }
                }
                Some((def, rung))
            }
            _ => None,
        }
    }

    /// TypeScript and JavaScript: a union of workspace types (`Subscriber<any> |
    /// Observer<any>`) is the member every other member descends from (a class and the
    /// interface it implements: the interface, whose implementations are dispatch edges);
    /// with no such member, no type (`Some(None)`). `None` when `core` is not a union.
    fn union_type(
        &mut self,
        core: &str,
        enclosing: Option<DefId>,
        depth: usize,
    ) -> Option<Option<(Def, Rung)>> {
        if !self.overrides_reach(&self.file) {
            return None;
        }
        let members = top_level_split(core, '|');
        if members.len() < 2 {
            return None;
        }
        let mut types: Vec<(Def, Rung)> = Vec::new();
        for member in &members {
            match self.type_named(member.trim(), enclosing, depth + 1) {
                Some(found) => {
                    if !types.iter().any(|(t, _)| t.id == found.0.id) {
                        types.push(found);
                    }
                }
                None => return Some(None),
            }
        }
        let mut general = None;
        for (candidate, rung) in &types {
            let covers_all = types
                .iter()
                .filter(|(t, _)| t.id != candidate.id)
                .all(|(t, _)| self.base_path(t, candidate.id).is_some());
            if covers_all {
                general = Some((candidate.clone(), *rung));
                break;
            }
        }
        Some(general)
    }

    /// The type of a definition used as a value: a class itself (a static call), a variable
    /// or field's declared type, a function's return type.
    fn type_of_def(&mut self, def: &Def, called: bool, depth: usize) -> Option<(Def, Rung)> {
        if !self.enter() {
            return None;
        }
        let out = self.type_of_def_inner(def, called, depth);
        self.nesting -= 1;
        out
    }

    fn type_of_def_inner(&mut self, def: &Def, called: bool, depth: usize) -> Option<(Def, Rung)> {
        if def.kind.is_type() {
            return Some((def.clone(), Rung::Exact));
        }
        let written = if called && def.kind.is_callable() {
            def.returns().map(str::to_owned)
        } else if !called {
            def.type_text().map(str::to_owned)
        } else {
            None
        };
        let file = self.table.file(def.file)?.clone();
        let Some(written) = written else {
            // A variable assigned a constructor call where it is defined
            // (`var CommandLine = NewFlagSet(…)`, `session = Session()`).
            if called
                || !matches!(
                    def.kind,
                    DefKind::Variable | DefKind::Constant | DefKind::Field
                )
            {
                return None;
            }
            let locals = self.locals_in(def.file);
            let value = locals
                .iter()
                .find(|(l, scope)| *scope == def.parent && l.name == def.name && l.value.is_some())
                .and_then(|(l, _)| l.value.clone())?;
            let found = self.in_file(file, |cx| cx.type_of_call(&value, def.parent, depth + 1));
            return found;
        };
        let saved = std::mem::replace(&mut self.file, file);
        let saved_imports = std::mem::replace(
            &mut self.imports,
            self.table.imports_of(self.file.id, &mut self.deps),
        );
        let scope = def.parent;
        let found = self.type_named(&written, scope, depth + 1);
        self.file = saved;
        self.imports = saved_imports;
        found
    }

    /// A local binding's type in the scope chain of `enclosing` (innermost first).
    fn local_type(
        &mut self,
        name: &str,
        enclosing: Option<DefId>,
        depth: usize,
    ) -> Option<(Def, Rung)> {
        if !self.enter() {
            return None;
        }
        let out = self.local_type_inner(name, enclosing, depth);
        self.nesting -= 1;
        out
    }

    fn local_type_inner(
        &mut self,
        name: &str,
        enclosing: Option<DefId>,
        depth: usize,
    ) -> Option<(Def, Rung)> {
        let chain: Vec<Option<DefId>> = {
            let mut c: Vec<Option<DefId>> = self
                .scope_chain(enclosing)
                .into_iter()
                .map(|d| Some(d.id))
                .collect();
            c.push(None);
            c
        };
        // The nearest binding decides: an unknown type there is unknown, not an earlier
        // binding's type.
        for scope in chain {
            let Some(local) = self.bindings(name, scope).into_iter().next() else {
                continue;
            };
            if let Some(written) = &local.type_text {
                if let Some(found) = self.type_named(written, scope, depth + 1) {
                    return Some(found);
                }
            }
            if let Some(callback) = &local.callback {
                return self.callback_param_type(callback, depth);
            }
            if let Some(callee) = &local.value {
                return self.type_of_call(callee, scope, depth + 1);
            }
            // `const keyType = this._def.keyType`: the member's type.
            if let Some(read) = &local.read {
                return match self.receiver_target(read, scope) {
                    Target::Type(t, r) => Some((t, r)),
                    _ => None,
                };
            }
            return None;
        }
        None
    }

    /// The bindings of `name` in `scope` of this file, the one that applies first: the last
    /// before the reference, then those after it (a closure may use a later one).
    fn bindings(&mut self, name: &str, scope: Option<DefId>) -> Vec<Local> {
        if self.locals_by_name.is_empty() && !self.locals.is_empty() {
            for (i, (local, _)) in self.locals.iter().enumerate() {
                self.locals_by_name
                    .entry(local.name.clone())
                    .or_default()
                    .push(i);
            }
        }
        let mut before: Vec<Local> = Vec::new();
        let mut after: Vec<Local> = Vec::new();
        let Some(indexes) = self.locals_by_name.get(name) else {
            return Vec::new();
        };
        for &i in indexes {
            let (local, at) = &self.locals[i];
            if *at != scope {
                continue;
            }
            if local.pos <= self.at {
                before.push(local.clone());
            } else {
                after.push(local.clone());
            }
        }
        before.reverse();
        // Rust's scopes are lexical: a binding made later is no binding here.
        if self.lang() != LanguageId::Rust {
            before.extend(after);
        }
        before
    }

    /// Whether a local binding's type or constructor comes from outside the workspace
    /// (`t *testing.T`, `u = urlparse(…)`).
    fn local_is_external(&mut self, name: &str, enclosing: Option<DefId>) -> bool {
        let mut scopes: Vec<Option<DefId>> = self
            .scope_chain(enclosing)
            .into_iter()
            .map(|d| Some(d.id))
            .collect();
        scopes.push(None);
        for scope in scopes {
            if let Some(local) = self.bindings(name, scope).into_iter().next() {
                let written = local
                    .type_text
                    .as_deref()
                    .map(crate::extract::type_name)
                    .or_else(|| local.value.clone());
                let Some(written) = written else { return false };
                let segs = segments(&written);
                let Some(first) = segs.first() else {
                    return false;
                };
                let (first, _) = strip_call(first);
                let first = first.to_owned();
                return match self.bare(&first, scope, Want::Any, 1) {
                    Found::External => true,
                    // `input: &str`: a language type, whatever the workspace implements for it.
                    Found::Missing(_) => {
                        self.lang() == LanguageId::Rust
                            && local.type_text.is_some()
                            && RUST_STD_TYPES.contains(&first.as_str())
                    }
                    Found::Defs(..) | Found::Module(..) => false,
                };
            }
        }
        false
    }

    /// The type a call's result has: a class constructed, a function's return type.
    fn type_of_call(
        &mut self,
        callee: &str,
        scope: Option<DefId>,
        depth: usize,
    ) -> Option<(Def, Rung)> {
        if !self.enter() {
            return None;
        }
        let out = self.type_of_call_inner(callee, scope, depth);
        self.nesting -= 1;
        out
    }

    fn type_of_call_inner(
        &mut self,
        callee: &str,
        scope: Option<DefId>,
        depth: usize,
    ) -> Option<(Def, Rung)> {
        if depth > MAX_DEPTH {
            return None;
        }
        let segs = segments(callee);
        let found = match segs.as_slice() {
            [] => return None,
            [one] => self.bare(one, scope, Want::Call, depth + 1),
            [qualifier @ .., last] => {
                let qualifier = qualifier.join(".");
                self.through_receiver(&qualifier, last, scope, Want::Call)
            }
        };
        match found {
            Found::Defs(defs, rung) if defs.len() == 1 => {
                let def = defs.into_iter().next()?;
                let (t, r) = self.type_of_def(&def, true, depth + 1)?;
                Some((t, rung.weaker(r)))
            }
            _ => None,
        }
    }

    /// What a receiver expression is: a module, or a value of a type.
    fn receiver_target(&mut self, receiver: &str, enclosing: Option<DefId>) -> Target {
        if !self.enter() {
            return Target::Unknown;
        }
        let out = self.receiver_target_inner(receiver, enclosing);
        self.nesting -= 1;
        out
    }

    fn receiver_target_inner(&mut self, receiver: &str, enclosing: Option<DefId>) -> Target {
        let segs = segments(receiver);
        let Some((first, rest)) = segs.split_first() else {
            return Target::Unknown;
        };
        let mut current = self.first_segment(first, enclosing);
        let mut path_so_far = first.clone();
        for seg in rest {
            let dotted = format!("{path_so_far}.{seg}");
            path_so_far = dotted.clone();
            current = match current {
                Target::Unknown | Target::External => return current,
                Target::Module(files, rung) => {
                    let (name, called) = strip_call(seg);
                    let mut hits = Vec::new();
                    for f in &files {
                        hits.extend(self.exported(*f, name, Want::Any, 1));
                    }
                    let hits = collapse(hits);
                    if hits.len() == 1 {
                        let def = &hits[0];
                        match self.type_of_def(def, called, 1) {
                            Some((t, r)) => Target::Type(t, rung.weaker(r)),
                            None => Target::Unknown,
                        }
                    } else if hits.is_empty()
                        && !called
                        && self.submodule_visible(&files, name, &dotted)
                    {
                        match self.submodule_of(&files, name) {
                            Some(sub) => Target::Module(sub, rung),
                            None => Target::Unknown,
                        }
                    } else {
                        Target::Unknown
                    }
                }
                Target::Type(ty, rung) => {
                    let (name, called) = strip_call(seg);
                    match self.member(&ty, name, Want::Any, 1) {
                        Found::Defs(d, r) if d.len() == 1 => {
                            let field = &d[0];
                            let typed = match self.generic_member_type(&ty, field, called) {
                                Some(found) => Some(found),
                                None => self.type_of_def(field, called, 1),
                            };
                            match typed {
                                Some((t, r2)) => Target::Type(t, rung.weaker(r).weaker(r2)),
                                None => {
                                    // `self.x` assigned in a method of the type.
                                    self.attribute_type(&ty, name)
                                        .map_or(Target::Unknown, |(t, r2)| {
                                            Target::Type(t, rung.weaker(r2))
                                        })
                                }
                            }
                        }
                        _ => self
                            .attribute_type(&ty, name)
                            .map_or(Target::Unknown, |(t, r2)| Target::Type(t, rung.weaker(r2))),
                    }
                }
            };
        }
        current
    }

    /// The type of a member declared with a type parameter of the type declaring it
    /// (`_def: Def` in `class ZodType<Output, Def, Input>`): the argument the receiver's type
    /// binds it to through its bases (`extends ZodType<…, ZodOptionalDef<T>, …>`), else the
    /// parameter's constraint or default.
    fn generic_member_type(&mut self, ty: &Def, member: &Def, called: bool) -> Option<(Def, Rung)> {
        let written = if called {
            member.returns().map(str::to_owned)
        } else {
            member.type_text().map(str::to_owned)
        }?;
        let written = written.trim();
        let declaring = member
            .parent
            .and_then(|p| self.table.def(p))
            .filter(|d| d.kind.is_type())?;
        let index = declaring
            .type_params()
            .position(|p| param_name(p) == written)?;
        if let Some(found) = self.bound_argument(ty, &declaring, index) {
            return Some(found);
        }
        let fallback = param_fallback(declaring.type_params().nth(index)?)?.to_owned();
        let file = self.table.file(declaring.file)?.clone();
        self.in_file(file, |cx| cx.type_named(&fallback, None, 1))
    }

    /// The type argument at `index` that `ty` (or a type between) gives `declaring` in its
    /// bases; an argument that is a type parameter of the type writing it stands for that
    /// parameter's constraint or default.
    fn bound_argument(&mut self, ty: &Def, declaring: &Def, index: usize) -> Option<(Def, Rung)> {
        let (writer, base) = self.base_path(ty, declaring.id)?;
        let arg = type_arguments(&base).into_iter().nth(index)?;
        let written = match writer.type_params().find(|p| param_name(p) == arg) {
            Some(p) => param_fallback(p)?.to_owned(),
            None => arg,
        };
        let file = self.table.file(writer.file)?.clone();
        self.in_file(file, |cx| cx.type_named(&written, None, 1))
    }

    /// `self.NAME = Ctor()` (or annotated) in a method of `ty`, in `ty`'s file.
    fn attribute_type(&mut self, ty: &DefInfo, name: &str) -> Option<(Def, Rung)> {
        if !self.enter() {
            return None;
        }
        let out = self.attribute_type_inner(ty, name);
        self.nesting -= 1;
        out
    }

    fn attribute_type_inner(&mut self, ty: &DefInfo, name: &str) -> Option<(Def, Rung)> {
        let locals = self.locals_in(ty.file);
        let file = self.table.file(ty.file)?.clone();
        for (local, scope) in locals.iter() {
            let Some((receiver, attr)) = local.name.split_once('.') else {
                continue;
            };
            if attr != name {
                continue;
            }
            let Some(scope_def) = scope.and_then(|s| self.table.def(s)) else {
                continue;
            };
            if scope_def.parent != Some(ty.id) || scope_def.self_name() != Some(receiver) {
                continue;
            }
            let saved = std::mem::replace(&mut self.file, file.clone());
            let saved_imports = std::mem::replace(
                &mut self.imports,
                self.table.imports_of(self.file.id, &mut self.deps),
            );
            let mut found = None;
            if let Some(written) = &local.type_text {
                found = self.type_named(written, *scope, 2);
            }
            if found.is_none() {
                if let Some(callee) = &local.value {
                    found = self.type_of_call(callee, *scope, 2);
                }
            }
            self.file = saved;
            self.imports = saved_imports;
            if found.is_some() {
                return found;
            }
        }
        None
    }

    /// Whether `pkg.sub` may be used as an attribute here: the package's `__init__` binds
    /// `sub` (`from . import sub`), or this file imports `pkg.sub` itself. (A submodule that
    /// some other module happened to import is loaded at run time, but nothing here says so.)
    fn submodule_visible(&mut self, package: &[FileId], name: &str, dotted: &str) -> bool {
        if self
            .imports
            .iter()
            .any(|i| i.name.is_none() && i.module == dotted)
        {
            return true;
        }
        let Some(&file) = package.first() else {
            return false;
        };
        let Some(info) = self.table.file(file).cloned() else {
            return false;
        };
        self.table
            .imports_of(file, &mut self.deps)
            .iter()
            .any(|i| imports::binding(i, info.language).as_deref() == Some(name))
    }

    fn submodule_of(&mut self, files: &[FileId], name: &str) -> Option<Vec<FileId>> {
        let file = self.table.file(*files.first()?)?.clone();
        let import = Import {
            module: String::new(),
            name: Some(name.to_owned()),
            alias: None,
            wildcard: false,
            line: 0,
            scope_lines: None,
        };
        match imports::submodule_of_file(self.table, &file, name, &import, &mut self.deps) {
            ImportTarget::Files(f) => Some(f),
            ImportTarget::External => None,
        }
    }

    /// The first segment of a receiver.
    fn first_segment(&mut self, seg: &str, enclosing: Option<DefId>) -> Target {
        let (name, called) = strip_call(seg);
        let chain = self.scope_chain(enclosing);
        if !called {
            if let Some(target) = self.receiver_word(name, &chain) {
                return target;
            }
            // A local binding with a known type.
            if let Some((t, r)) = self.local_type(name, enclosing, 0) {
                // A receiver whose type is declared or constructed here is exact, however
                // the type itself was found (unless only by its name).
                let r = if r == Rung::Name {
                    Rung::Name
                } else {
                    Rung::Exact
                };
                return Target::Type(t, r);
            }
            if self.local_is_external(name, enclosing) {
                return Target::External;
            }
        } else if name == "super" && self.lang() == LanguageId::Python {
            // `super().m()`: the first base that has the member is found by `member`.
            if let Some(method) = chain.iter().find(|d| d.kind == DefKind::Method).cloned() {
                return self.base_of_enclosing(&method);
            }
        } else if let Some((t, r)) = self.type_of_call(name, enclosing, 0) {
            return Target::Type(t, r);
        }
        if called {
            return Target::Unknown;
        }
        // Rust paths: `crate`, `super`, a crate name.
        if self.lang() == LanguageId::Rust {
            if let Some(files) =
                imports::rust_path_root(self.table, &self.file, name, &mut self.deps)
            {
                return Target::Module(files, Rung::Import);
            }
        }
        // An import, a type, a module-level variable.
        let found = self.bare(name, enclosing, Want::Any, 1);
        self.segment_target(found)
    }

    /// `self`, `this`, a Go receiver, Rust `Self` and `self::`, `super`: what the word
    /// stands for in the enclosing method or module (`None`: it is no such word here).
    fn receiver_word(&mut self, name: &str, chain: &[Def]) -> Option<Target> {
        // An arrow function's `this` is the enclosing one (a member of a literal or an
        // assignment whose value is an arrow function has no receiver).
        let lexical_this = matches!(
            self.lang(),
            LanguageId::JavaScript | LanguageId::TypeScript | LanguageId::Tsx
        );
        let method = chain
            .iter()
            .find(|d| d.kind == DefKind::Method && !(lexical_this && d.self_name().is_none()))
            .cloned();
        if let Some(method) = method {
            let is_self = method.self_name() == Some(name)
                || (matches!(name, "this" | "self") && self.lang() != LanguageId::Python)
                || (name == "Self" && self.lang() == LanguageId::Rust)
                || (name == "static" && self.lang() == LanguageId::Php);
            if is_self {
                return Some(match self.enclosing_type(&method, 0) {
                    Some((t, r)) => Target::Type(t, r),
                    None => Target::Unknown,
                });
            }
            if name == "super"
                || name == "base"
                || (name == "parent" && self.lang() == LanguageId::Php)
            {
                return Some(self.base_of_enclosing(&method));
            }
        } else if name == "Self" && self.lang() == LanguageId::Rust {
            if let Some(ty) = chain.iter().find(|d| d.kind.is_type()) {
                return Some(Target::Type(ty.clone(), Rung::Exact));
            }
        }
        if name == "self"
            && self.lang() == LanguageId::Rust
            && chain.iter().all(|d| d.kind != DefKind::Method)
        {
            // `self::` in a path: this module.
            return Some(Target::Module(vec![self.file.id], Rung::Exact));
        }
        None
    }

    /// What a path's first segment found by name stands for: a module, or the type of the
    /// one definition found.
    fn segment_target(&mut self, found: Found) -> Target {
        match found {
            Found::Module(files, rung) => Target::Module(files, rung),
            Found::External => Target::External,
            Found::Defs(defs, rung) if defs.len() == 1 => {
                let def = &defs[0];
                // `use crate::version;` then `version::Version`: the module's file.
                if def.kind == DefKind::Module && self.lang() == LanguageId::Rust {
                    let Some(home) = self.table.file(def.file).cloned() else {
                        return Target::Unknown;
                    };
                    return match imports::rust_path_root(
                        self.table,
                        &home,
                        &def.name,
                        &mut self.deps,
                    ) {
                        Some(files) => Target::Module(files, rung),
                        None => Target::Unknown,
                    };
                }
                // A TypeScript namespace (C++ too): its members are its children.
                if def.kind == DefKind::Module {
                    return Target::Type(def.clone(), rung);
                }
                match self.type_of_def(def, false, 1) {
                    Some((t, r)) => Target::Type(t, rung.weaker(r)),
                    None => Target::Unknown,
                }
            }
            _ => Target::Unknown,
        }
    }

    /// The first base type of the type a method is in (what `super` stands for).
    fn base_of_enclosing(&mut self, method: &DefInfo) -> Target {
        let Some((ty, rung)) = self.enclosing_type(method, 0) else {
            return Target::Unknown;
        };
        let Some(base) = ty.bases().next().map(str::to_owned) else {
            return Target::Unknown;
        };
        let Some(file) = self.table.file(ty.file).cloned() else {
            return Target::Unknown;
        };
        let found = self.in_file(file, |cx| cx.type_named(&base, None, 1));
        match found {
            Some((t, r)) => Target::Type(t, rung.weaker(r)),
            None => Target::Unknown,
        }
    }

    fn through_receiver(
        &mut self,
        receiver: &str,
        name: &str,
        enclosing: Option<DefId>,
        want: Want,
    ) -> Found {
        let target = self.receiver_target(receiver, enclosing);
        match target {
            Target::Module(files, rung) => {
                let mut hits = Vec::new();
                for f in &files {
                    hits.extend(self.exported(*f, name, want, 1));
                }
                if !hits.is_empty() {
                    return Found::Defs(collapse(hits), rung);
                }
                // Go: a package's methods are not reachable through it; anything else
                // missing from a resolved module is unknown.
                Found::Missing(0)
            }
            Target::Type(ty, rung) => match self.member(&ty, name, want, 1) {
                Found::Defs(d, r) => Found::Defs(d, rung.weaker(r)),
                _ => self
                    .trait_in_scope(name, want)
                    .unwrap_or_else(|| self.method_by_name(name, want)),
            },
            // Another crate's type may have an inherent method of that name, which wins over
            // any trait (semver's `str::strip_prefix` beside its backport trait); the result
            // of a call on one (`v.into_iter().map(f)`) is an adapter whose methods are
            // traits' (`.into_group_map()` through `Itertools`).
            Target::External if receiver.ends_with(')') => {
                self.trait_in_scope(name, want).unwrap_or(Found::External)
            }
            Target::External => Found::External,
            // A variable of a type we could not follow (`let text = text.trim()`) is as
            // likely another crate's type with a method of its own: only a call's result
            // (`a.iter().interleave(b)`) is taken to be a trait's receiver.
            Target::Unknown if self.is_local_variable(receiver, enclosing) => {
                self.method_by_name(name, want)
            }
            Target::Unknown => self
                .trait_in_scope(name, want)
                .unwrap_or_else(|| self.method_by_name(name, want)),
        }
    }

    /// Whether `receiver` is a single name bound by a local binding around here.
    fn is_local_variable(&mut self, receiver: &str, enclosing: Option<DefId>) -> bool {
        let segs = segments(receiver);
        let [only] = segs.as_slice() else {
            return false;
        };
        let mut scopes: Vec<Option<DefId>> = self
            .scope_chain(enclosing)
            .into_iter()
            .map(|d| Some(d.id))
            .collect();
        scopes.push(None);
        scopes
            .into_iter()
            .any(|scope| !self.bindings(only, scope).is_empty())
    }

    /// Rust: a method called on a value whose type we do not know (`iter.interleave(…)` at
    /// the end of a chain of std calls), or that a workspace type lacks, is the method of a
    /// workspace trait in scope here — defined in this file or imported into it — when
    /// exactly one such trait has it.
    fn trait_in_scope(&mut self, name: &str, want: Want) -> Option<Found> {
        if self.lang() != LanguageId::Rust {
            return None;
        }
        let defs = self.table.defs_named(name, &mut self.deps);
        let mut hits: Vec<Def> = Vec::new();
        let mut rung = Rung::Exact;
        for def in defs
            .iter()
            .filter(|d| d.kind.is_callable() && want.accepts(d.kind))
        {
            let Some(parent) = def.parent.and_then(|p| self.table.def(p)) else {
                continue;
            };
            if parent.kind != DefKind::Trait {
                continue;
            }
            if parent.file == self.file.id && parent.parent.is_none() {
                hits.push(def.clone());
            } else if self.imported_here(&parent) {
                hits.push(def.clone());
                rung = Rung::Import;
            }
        }
        let hits = collapse(hits);
        (hits.len() == 1).then_some(Found::Defs(hits, rung))
    }

    /// Whether an import of this file visible here brings `def` (by its name, or a wildcard
    /// of the module that exports it).
    fn imported_here(&mut self, def: &DefInfo) -> bool {
        let imports = self.imports.clone();
        let line = self.at.line;
        for import in imports.iter().filter(|i| i.visible_at(line)) {
            if import.wildcard {
                if let Found::Module(files, _) = self.import_module(import, 1) {
                    for file in files {
                        if self
                            .exported(file, &def.name, Want::Any, 2)
                            .iter()
                            .any(|d| d.id == def.id)
                        {
                            return true;
                        }
                    }
                }
            } else if imports::binding(import, self.file.language).as_deref() == Some(&def.name)
                || import.name.as_deref() == Some(&def.name)
            {
                if let Found::Defs(found, _) = self.import_target(import, 1) {
                    if found.iter().any(|d| d.id == def.id) {
                        return true;
                    }
                }
            }
        }
        false
    }

    /// The `name` rung for a member: the only member of that name in the language family.
    fn method_by_name(&mut self, name: &str, want: Want) -> Found {
        let key = (name.to_owned(), want);
        if let Some(found) = self.method_memo.get(&key) {
            return found.clone();
        }
        let defs = self.table.defs_named(name, &mut self.deps);
        let found = self.unique(&defs, want, |d| {
            d.parent.is_some() || d.owner().is_some() || d.kind == DefKind::Function
        });
        self.method_memo.insert(key, found.clone());
        found
    }
}

#[derive(Debug, Clone)]
enum Target {
    Module(Vec<FileId>, Rung),
    Type(Def, Rung),
    External,
    Unknown,
}

/// The one type an optional annotation holds — `Optional[X]`, `t.Optional[X]`, `X | None`,
/// `Union[X, None]`, TypeScript's `X | undefined` — with a forward reference's quotes
/// (`"Context"`) removed; anything else as written.
fn optional_core(written: &str) -> String {
    let mut s = written.trim().to_owned();
    // A few layers (`t.Optional["Context"]`), never more: the text is the input's.
    for _ in 0..4 {
        let before = s.clone();
        s = s.trim().trim_matches(['"', '\'']).trim().to_owned();
        let unioned = top_level_split(&s, '|');
        if unioned.len() > 1 {
            if let [one] = without_none(&unioned).as_slice() {
                s = one.clone();
            }
        }
        for wrapper in ["Optional", "Union"] {
            let inner = ["", "t.", "typing."].iter().find_map(|prefix| {
                s.strip_prefix(&format!("{prefix}{wrapper}["))
                    .and_then(|rest| rest.strip_suffix(']'))
            });
            if let Some(inner) = inner {
                if let [one] = without_none(&top_level_split(inner, ',')).as_slice() {
                    s = one.clone();
                }
            }
        }
        if s == before {
            break;
        }
    }
    s
}

fn without_none(parts: &[String]) -> Vec<String> {
    parts
        .iter()
        .map(|p| p.trim().to_owned())
        .filter(|p| !matches!(p.as_str(), "None" | "null" | "undefined"))
        .collect()
}

/// `text` split at `sep` outside brackets.
fn top_level_split(text: &str, sep: char) -> Vec<String> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut current = String::new();
    for c in text.chars() {
        match c {
            '[' | '(' | '<' | '{' => depth += 1,
            ']' | ')' | '>' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if c == sep && depth == 0 {
            parts.push(std::mem::take(&mut current));
        } else {
            current.push(c);
        }
    }
    parts.push(current);
    parts
}

fn strip_call(seg: &str) -> (&str, bool) {
    match seg.strip_suffix("()") {
        Some(name) => (name, true),
        None => (seg, false),
    }
}

/// Definitions of one name in one scope of one file are one symbol (TypeScript and Python
/// overloads, a Python function defined in both branches of an `if`).
fn collapse(mut defs: Vec<Def>) -> Vec<Def> {
    if defs.len() < 2 {
        return defs;
    }
    // The last one stands: the implementation after its overloads, the later of two
    // definitions (ids follow the file's order).
    defs.sort_by_key(|d| std::cmp::Reverse(d.id));
    let mut seen: std::collections::HashSet<(FileId, Option<DefId>, Option<&str>)> =
        std::collections::HashSet::with_capacity(defs.len());
    let mut keep = vec![false; defs.len()];
    for (i, d) in defs.iter().enumerate() {
        keep[i] = seen.insert((d.file, d.parent, d.owner()));
    }
    let mut i = 0;
    defs.retain(|_| {
        i += 1;
        keep[i - 1]
    });
    defs
}

/// A type parameter's name (`T` of `T=ZodTypeAny`).
fn param_name(param: &str) -> &str {
    param.split_once('=').map_or(param, |(name, _)| name)
}

/// A type parameter's constraint or default (`ZodTypeAny` of `T=ZodTypeAny`).
fn param_fallback(param: &str) -> Option<&str> {
    param.split_once('=').map(|(_, fallback)| fallback)
}

/// The type arguments written after a type's name (`Base<A, B<C>>` → `A`, `B<C>`).
fn type_arguments(written: &str) -> Vec<String> {
    let Some(open) = written.find('<') else {
        return Vec::new();
    };
    let Some(close) = written.rfind('>').filter(|c| *c > open) else {
        return Vec::new();
    };
    top_level_split(&written[open + 1..close], ',')
        .into_iter()
        .map(|a| a.trim().to_owned())
        .filter(|a| !a.is_empty())
        .collect()
}

/// The type of parameter `index` of the function type in `written` (`(a: A, b: B) => R`,
/// `((a: A) => R) | undefined`), a declared `this:` left out: `B` for 1.
fn function_type_parameter(written: &str, index: u32) -> Option<String> {
    let bytes = written.as_bytes();
    // The first parenthesised list followed by `=>`.
    let mut params: Option<&str> = None;
    for (open, _) in written.match_indices('(') {
        let mut depth = 0usize;
        let mut close = None;
        for (i, &b) in bytes.iter().enumerate().skip(open) {
            match b {
                b'(' => depth += 1,
                b')' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        close = Some(i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let close = close?;
        if written[close + 1..].trim_start().starts_with("=>") {
            params = Some(&written[open + 1..close]);
            break;
        }
    }
    let parts = top_level_split(params?, ',');
    let part = parts
        .iter()
        .map(|p| p.trim())
        .filter(|p| !p.is_empty() && !p.starts_with("this:") && !p.starts_with("this :"))
        .nth(index as usize)?;
    let (_, ty) = part.split_once(':')?;
    let ty = ty.trim();
    (!ty.is_empty()).then(|| ty.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn function_type_parameters_leave_this_and_wrappers_out() {
        let init =
            "(liftedSource: Observable<T>, subscriber: Subscriber<R>) => (() => void) | void";
        assert_eq!(
            function_type_parameter(init, 1).as_deref(),
            Some("Subscriber<R>")
        );
        let subscribe = "(this: Observable<T>, subscriber: Subscriber<T>) => TeardownLogic";
        assert_eq!(
            function_type_parameter(subscribe, 0).as_deref(),
            Some("Subscriber<T>")
        );
        let optional = "((value: Map<K, V>, i: number) => void) | undefined";
        assert_eq!(
            function_type_parameter(optional, 0).as_deref(),
            Some("Map<K, V>")
        );
        assert_eq!(function_type_parameter(optional, 2), None);
        assert_eq!(function_type_parameter("Observer<T>", 0), None);
    }

    #[test]
    fn type_arguments_split_at_the_top_level() {
        assert_eq!(
            type_arguments("Base<A, B<C, D>, { k: E }>"),
            ["A", "B<C, D>", "{ k: E }"]
        );
        assert!(type_arguments("Base").is_empty());
        assert_eq!(param_name("T=ZodTypeAny"), "T");
        assert_eq!(param_fallback("T=ZodTypeAny"), Some("ZodTypeAny"));
        assert_eq!(param_fallback("U"), None);
    }

    #[test]
    fn optional_annotations_hold_their_type() {
        for (written, core) in [
            ("Context", "Context"),
            ("\"Context\"", "Context"),
            ("t.Optional[Context]", "Context"),
            ("t.Optional[\"Context\"]", "Context"),
            ("Optional[Dict[str, int]]", "Dict[str, int]"),
            ("Context | None", "Context"),
            ("None | Context", "Context"),
            ("typing.Union[Context, None]", "Context"),
            ("Union[A, B]", "Union[A, B]"),
            ("A | B", "A | B"),
            ("Session | undefined", "Session"),
        ] {
            assert_eq!(optional_core(written), core, "{written}");
        }
    }

    #[test]
    fn receivers_split_into_segments() {
        assert_eq!(segments("self.session"), ["self", "session"]);
        assert_eq!(segments("crate::a::B"), ["crate", "a", "B"]);
        assert_eq!(segments("foo(a, b.c).bar"), ["foo()", "bar"]);
        assert_eq!(segments("p->q"), ["p", "q"]);
        assert_eq!(segments("Vec::<u8>"), ["Vec"]);
        assert_eq!(
            segments("defer(() => source).subscribe"),
            ["defer()", "subscribe"]
        );
        assert_eq!(segments("f((a) => a.b, c).g"), ["f()", "g"]);
    }
}
