//! The symbol table resolution reads: files, definitions by name and by id, each file's
//! imports and local bindings. It is filled either completely (a clean build, from the facts
//! just extracted) or on demand from the index (an incremental update re-resolving a few
//! files), and records every key a resolution read ([`Deps`]) so the index knows which files
//! to re-resolve when those keys change.

use std::collections::{BTreeSet, HashMap};
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex};

use cc_languages::{LanguageId, LanguageSpec};

use crate::model::{DefKind, Import, Local};
pub use crate::project::parent_dir;
use crate::project::Project;

/// Defines an id of the index: a row id that only compares with its own kind, stored and
/// serialized as the integer.
macro_rules! index_id {
    ($(#[doc = $doc:literal])+ $name:ident) => {
        $(#[doc = $doc])+
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default,
            serde::Serialize, serde::Deserialize, schemars::JsonSchema,
        )]
        #[serde(transparent)]
        pub struct $name(pub i64);

        impl rusqlite::ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
                self.0.to_sql()
            }
        }

        impl rusqlite::types::FromSql for $name {
            fn column_result(
                value: rusqlite::types::ValueRef<'_>,
            ) -> rusqlite::types::FromSqlResult<Self> {
                i64::column_result(value).map($name)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.0.fmt(f)
            }
        }
    };
}

index_id! {
    /// A file's id in the index.
    FileId
}

index_id! {
    /// A definition's id in the index (valid until the file it is in changes).
    DefId
}

/// What resolution needs of a definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefInfo {
    /// Its id in the index.
    pub id: DefId,
    /// The file it is in.
    pub file: FileId,
    /// Its name, unqualified.
    pub name: String,
    /// What it is.
    pub kind: DefKind,
    /// The innermost definition around it.
    pub parent: Option<DefId>,
    /// What most definitions lack (see [`DefDetail`]), in one allocation: a kernel-size
    /// tree's table holds millions of definitions.
    detail: Option<Box<str>>,
}

/// The parts of a definition most lack, to build a [`DefInfo`] with: its owner type, its
/// declared type, its return type, its receiver's name, its bases and its type parameters
/// (the last two one per line, as the index stores them; see
/// [`crate::model::Definition`]).
#[derive(Debug, Default, Clone, Copy)]
pub struct DefDetail<'a> {
    /// As [`DefInfo::owner`].
    pub owner: Option<&'a str>,
    /// As [`DefInfo::type_text`].
    pub type_text: Option<&'a str>,
    /// As [`DefInfo::returns`].
    pub returns: Option<&'a str>,
    /// As [`DefInfo::self_name`].
    pub self_name: Option<&'a str>,
    /// The bases, one per line (empty: none).
    pub bases: Option<&'a str>,
    /// The type parameters, one per line (empty: none).
    pub type_params: Option<&'a str>,
}

/// The detail's fields in their order; each is `\u{1}TEXT` when present, empty when not,
/// and they are separated by NUL.
const OWNER: usize = 0;
const TYPE_TEXT: usize = 1;
const RETURNS: usize = 2;
const SELF_NAME: usize = 3;
const BASES: usize = 4;
const TYPE_PARAMS: usize = 5;

impl DefInfo {
    /// A definition, its detail packed into one allocation (none when it has no part).
    pub fn new(
        id: DefId,
        file: FileId,
        name: String,
        kind: DefKind,
        parent: Option<DefId>,
        detail: DefDetail<'_>,
    ) -> Self {
        let fields = [
            detail.owner,
            detail.type_text,
            detail.returns,
            detail.self_name,
            detail.bases.filter(|b| !b.is_empty()),
            detail.type_params.filter(|t| !t.is_empty()),
        ];
        let detail = fields.iter().any(Option::is_some).then(|| {
            let mut packed = String::new();
            for (i, field) in fields.iter().enumerate() {
                if i > 0 {
                    packed.push('\0');
                }
                if let Some(text) = field {
                    packed.push('\u{1}');
                    // A NUL in source text would split a field in two.
                    packed.extend(text.chars().map(|c| if c == '\0' { ' ' } else { c }));
                }
            }
            packed.into_boxed_str()
        });
        DefInfo {
            id,
            file,
            name,
            kind,
            parent,
            detail,
        }
    }

    fn field(&self, index: usize) -> Option<&str> {
        self.detail
            .as_deref()?
            .split('\0')
            .nth(index)?
            .strip_prefix('\u{1}')
    }

    /// The type a method or field belongs to when it is written outside it (`A::f`, Go's
    /// receiver type, Rust's `impl` type).
    pub fn owner(&self) -> Option<&str> {
        self.field(OWNER)
    }

    /// Its declared type, as written.
    pub fn type_text(&self) -> Option<&str> {
        self.field(TYPE_TEXT)
    }

    /// Its declared return type, as written.
    pub fn returns(&self) -> Option<&str> {
        self.field(RETURNS)
    }

    /// The name its methods' receiver has (`self`, Go's `(s *Server)`).
    pub fn self_name(&self) -> Option<&str> {
        self.field(SELF_NAME)
    }

    /// The bases it names, as written.
    pub fn bases(&self) -> impl Iterator<Item = &str> + '_ {
        self.field(BASES).into_iter().flat_map(|b| b.split('\n'))
    }

    /// As in [`crate::model::Definition::type_params`].
    pub fn type_params(&self) -> impl Iterator<Item = &str> + '_ {
        self.field(TYPE_PARAMS)
            .into_iter()
            .flat_map(|t| t.split('\n'))
    }
}

/// A shared definition (resolution passes them around a lot).
pub type Def = Arc<DefInfo>;

/// Definitions by name, each list found by the name its definitions carry (a kernel-size
/// tree has millions of names: no second copy of each as a key).
#[derive(Default)]
struct ByName {
    table: hashbrown::HashTable<Defs>,
    hasher: hashbrown::DefaultHashBuilder,
}

impl ByName {
    fn get(&self, name: &str) -> Option<&Defs> {
        let hash = self.hasher.hash_one(name);
        self.table
            .find(hash, |d| d.first().is_some_and(|f| f.name == name))
    }

    fn push(&mut self, def: Def) {
        let hash = self.hasher.hash_one(def.name.as_str());
        let same = |d: &Defs| d.first().is_some_and(|f| f.name == def.name);
        if let Some(defs) = self.table.find_mut(hash, same) {
            defs.push(def);
            return;
        }
        let hasher = &self.hasher;
        self.table.insert_unique(hash, Defs::One(def), |d| {
            d.first().map_or(0, |f| hasher.hash_one(f.name.as_str()))
        });
    }

    fn len(&self) -> usize {
        self.table.len()
    }
}

/// The definitions of one name, in id order: most names of a large tree have one, which
/// is held without a list of its own.
#[derive(Debug, Clone, Default)]
pub enum Defs {
    /// No definition.
    #[default]
    None,
    /// One definition (most names).
    One(Def),
    /// Two or more, in id order.
    Many(Arc<Vec<Def>>),
}

impl std::ops::Deref for Defs {
    type Target = [Def];

    fn deref(&self) -> &[Def] {
        match self {
            Defs::None => &[],
            Defs::One(def) => std::slice::from_ref(def),
            Defs::Many(defs) => defs,
        }
    }
}

impl Defs {
    fn push(&mut self, def: Def) {
        *self = match std::mem::take(self) {
            Defs::None => Defs::One(def),
            Defs::One(first) => Defs::Many(Arc::new(vec![first, def])),
            Defs::Many(mut defs) => {
                Arc::make_mut(&mut defs).push(def);
                Defs::Many(defs)
            }
        };
    }

    fn from_vec(mut defs: Vec<Def>) -> Self {
        match defs.len() {
            0 => Defs::None,
            1 => Defs::One(defs.remove(0)),
            _ => Defs::Many(Arc::new(defs)),
        }
    }
}

/// What resolution needs of a file.
#[derive(Debug, Clone)]
pub struct FileInfo {
    /// Its id in the index.
    pub id: FileId,
    /// Relative to the root, `/`-separated.
    pub path: String,
    /// The language it is parsed as.
    pub language: &'static LanguageSpec,
    /// The package, module or namespace it declares ([`crate::model::FileFacts::package`]).
    pub package: Option<String>,
}

impl FileInfo {
    /// The folder the file is in (`""` at the root).
    pub fn dir(&self) -> &str {
        parent_dir(&self.path)
    }
}

/// Where the table gets what it does not hold yet (the index, during an update).
pub trait Backing {
    /// Every definition called `name`.
    fn defs_named(&self, name: &str) -> Vec<DefInfo>;
    /// The definition with id `id`, if there is one.
    fn def(&self, id: DefId) -> Option<DefInfo>;
    /// The definitions directly inside interface `iface` (in its file).
    fn interface_members(&self, iface: &DefInfo) -> Vec<DefInfo>;
    /// A file's imports.
    fn imports_of(&self, file: FileId) -> Vec<Import>;
    /// A file's local bindings, each with the definition it is local to.
    fn locals_of(&self, file: FileId) -> Vec<(Local, Option<DefId>)>;
}

/// The keys one file's resolution read: `n:NAME` (definitions of a name), `p:PATH` (whether
/// a file exists there, and its imports), `d:DIR` (the files of a folder), `b:NAME` (the
/// files of that name), `k:LANG:PACKAGE` (the files of a package).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Deps {
    /// The keys, each with its prefix.
    pub keys: BTreeSet<String>,
    buffer: String,
}

/// Marks a key that a C or C++ file's own includes were resolved with (`ip:src/buffer.h`):
/// when it changes, what the file's includes reach may change, and with it what every file
/// that includes it reaches (the index follows includers from there, so a file records the
/// keys of its own includes only, not those of every header it reaches).
pub const REACH: &str = "i";

impl Deps {
    /// Adds `other`'s keys as keys of this file's own includes ([`REACH`]).
    pub fn add_reach(&mut self, other: Deps) {
        for key in other.keys {
            self.keys.insert(format!("{REACH}{key}"));
        }
    }

    fn note(&mut self, prefix: &str, key: &str) {
        self.buffer.clear();
        self.buffer.push_str(prefix);
        self.buffer.push_str(key);
        if !self.keys.contains(&self.buffer) {
            self.keys.insert(self.buffer.clone());
        }
    }
}

/// A path's last segment (`src/html.h` → `html.h`).
pub fn file_name(path: &str) -> &str {
    path.rsplit_once('/').map_or(path, |(_, name)| name)
}

/// The language family a package key belongs to: Java and Kotlin share packages.
pub fn family(language: &LanguageSpec) -> &'static str {
    // Runs for every candidate of every by-name resolution: the graph's language table is
    // indexed by id, and a spec's name is its own canonical name.
    crate::language::of(language)
        .family
        .unwrap_or(language.name)
}

type Lazy<K, V> = Mutex<HashMap<K, Arc<V>>>;

/// A local binding and the definition it is local to.
pub type ScopedLocal = (Local, Option<DefId>);

/// No backing: everything is loaded (a table that can be shared between threads).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoBacking;

impl Backing for NoBacking {
    fn defs_named(&self, _: &str) -> Vec<DefInfo> {
        Vec::new()
    }
    fn def(&self, _: DefId) -> Option<DefInfo> {
        None
    }
    fn interface_members(&self, _: &DefInfo) -> Vec<DefInfo> {
        Vec::new()
    }
    fn imports_of(&self, _: FileId) -> Vec<Import> {
        Vec::new()
    }
    fn locals_of(&self, _: FileId) -> Vec<(Local, Option<DefId>)> {
        Vec::new()
    }
}

/// The symbol table.
pub struct Table<B = NoBacking> {
    /// What the configuration files say (how imports resolve).
    pub project: Project,
    files: Arc<FileIndex>,
    names: ByName,
    /// In id order (found by binary search: a kernel-size tree has millions, and a map
    /// would hold twice their pointers).
    defs: Vec<Def>,
    /// The members of each interface of the loaded files (few: kept for Go's dispatch).
    interface_members: HashMap<DefId, Arc<Vec<Def>>>,
    imports: HashMap<FileId, Arc<Vec<Import>>>,
    /// Packed ([`crate::packed`]): a kernel-size tree has millions, and a resolution reads
    /// those of its own file and of a few others.
    locals: HashMap<FileId, Box<[u8]>>,
    backing: Option<B>,
    lazy_names: Mutex<HashMap<String, Defs>>,
    lazy_defs: Mutex<HashMap<DefId, Option<Def>>>,
    lazy_members: Lazy<DefId, Vec<Def>>,
    lazy_imports: Lazy<FileId, Vec<Import>>,
    lazy_locals: Lazy<FileId, Vec<(Local, Option<DefId>)>>,
    /// C and C++: each file's own includes, resolved (the same whoever includes the file).
    include_children: std::sync::RwLock<HashMap<FileId, Arc<Vec<FileId>>>>,
}

/// The index's files and their lookups by path, folder, name and package: the same for
/// every resolution until a file is added or removed or changes its package, so an index
/// keeps one between updates (a kernel-size tree has tens of thousands of files).
#[derive(Debug, Default)]
pub struct FileIndex {
    files: HashMap<FileId, FileInfo>,
    by_path: HashMap<String, FileId>,
    by_dir: HashMap<String, Vec<FileId>>,
    /// Files by their name without the folder (`html.h`), for C includes found by suffix.
    by_file_name: HashMap<String, Vec<FileId>>,
    by_package: HashMap<(&'static str, String), Vec<FileId>>,
}

impl FileIndex {
    /// The lookups of `files`.
    pub fn new(files: Vec<FileInfo>) -> Self {
        let mut index = FileIndex::default();
        for file in files {
            index.by_path.insert(file.path.clone(), file.id);
            index
                .by_dir
                .entry(file.dir().to_owned())
                .or_default()
                .push(file.id);
            index
                .by_file_name
                .entry(file_name(&file.path).to_owned())
                .or_default()
                .push(file.id);
            if let Some(package) = &file.package {
                index
                    .by_package
                    .entry((family(file.language), package.clone()))
                    .or_default()
                    .push(file.id);
            }
            index.files.insert(file.id, file);
        }
        for list in index
            .by_dir
            .values_mut()
            .chain(index.by_file_name.values_mut())
            .chain(index.by_package.values_mut())
        {
            list.sort_unstable();
        }
        index
    }

    /// How many files it holds.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether it holds no file.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Whether it holds the file `id`.
    pub fn contains(&self, id: FileId) -> bool {
        self.files.contains_key(&id)
    }

    /// Every file's id, in no particular order.
    pub fn ids(&self) -> impl Iterator<Item = FileId> + '_ {
        self.files.keys().copied()
    }
}

impl<B> std::fmt::Debug for Table<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table")
            .field("files", &self.files.len())
            .field("names", &self.names.len())
            .finish_non_exhaustive()
    }
}

impl<B: Backing> Table<B> {
    /// A table of `files`, with nothing else loaded yet.
    pub fn new(project: Project, files: Arc<FileIndex>, backing: Option<B>) -> Self {
        Table {
            project,
            files,
            names: ByName::default(),
            defs: Vec::new(),
            interface_members: HashMap::new(),
            imports: HashMap::new(),
            locals: HashMap::new(),
            backing,
            lazy_names: Mutex::default(),
            lazy_defs: Mutex::default(),
            lazy_members: Mutex::default(),
            lazy_imports: Mutex::default(),
            lazy_locals: Mutex::default(),
            include_children: std::sync::RwLock::default(),
        }
    }

    /// Whether a definition takes part in resolution. C and C++ object-like macros and
    /// enumerators (`#define NAME value`, `enum { NAME }`) do not: a C reference is a call
    /// or a type use, neither of which can name one, and they are most of a kernel-size
    /// tree's definitions (2.8 of Linux's 4.6 million). Both a whole table and a lazy one
    /// leave them out, so an update resolves as a clean build does.
    fn resolvable(&self, def: &DefInfo) -> bool {
        def.kind != DefKind::Constant
            || !self
                .file(def.file)
                .is_some_and(|f| matches!(f.language.id, LanguageId::C | LanguageId::Cpp))
    }

    /// Adds a definition (a table filled completely: a clean build, or a large update).
    pub fn add_def(&mut self, def: DefInfo) {
        if !self.resolvable(&def) {
            return;
        }
        let def = Arc::new(def);
        self.names.push(def.clone());
        self.defs.push(def);
    }

    /// Sets a file's imports (a table filled completely).
    pub fn set_imports(&mut self, file: FileId, imports: Vec<Import>) {
        self.imports.insert(file, Arc::new(imports));
    }

    /// Sets a file's local bindings, each with the definition it is local to (a table filled
    /// completely).
    pub fn set_locals(&mut self, file: FileId, locals: &[(Local, Option<DefId>)]) {
        self.locals.insert(
            file,
            crate::packed::encode_locals(locals.iter().map(|(l, s)| (l, *s))),
        );
    }

    /// Sets a file's local bindings as [`crate::packed::encode_locals`] encoded them (the
    /// index stores them so).
    pub(crate) fn set_packed_locals(&mut self, file: FileId, packed: Box<[u8]>) {
        self.locals.insert(file, packed);
    }

    /// Ends filling: every name's definitions sorted by id (so that resolution does not
    /// depend on the order they were added in), and each interface's members gathered.
    pub fn finish(&mut self) {
        for list in self.names.table.iter_mut() {
            if let Defs::Many(defs) = list {
                let defs = Arc::make_mut(defs);
                defs.sort_by_key(|d| d.id);
                defs.shrink_to_fit();
            }
        }
        if !self.defs.is_sorted_by_key(|d| d.id) {
            self.defs.sort_unstable_by_key(|d| d.id);
        }
        self.defs.shrink_to_fit();
        let mut members: Vec<(DefId, Def)> = Vec::new();
        for def in &self.defs {
            let Some(parent) = def.parent else { continue };
            if self
                .loaded_def(parent)
                .is_some_and(|p| p.kind == crate::model::DefKind::Interface && p.file == def.file)
            {
                members.push((parent, def.clone()));
            }
        }
        members.sort_by_key(|(parent, def)| (*parent, def.id));
        for (parent, def) in members {
            let list = self.interface_members.entry(parent).or_default();
            Arc::make_mut(list).push(def);
        }
    }

    fn loaded_def(&self, id: DefId) -> Option<&Def> {
        let at = self.defs.binary_search_by_key(&id, |d| d.id).ok()?;
        self.defs.get(at)
    }

    /// A file by id.
    pub fn file(&self, id: FileId) -> Option<&FileInfo> {
        self.files.files.get(&id)
    }

    /// Every file, in no particular order.
    pub fn files(&self) -> impl Iterator<Item = &FileInfo> {
        self.files.files.values()
    }

    /// The file at `path`, if there is one.
    pub fn file_at(&self, path: &str, deps: &mut Deps) -> Option<FileId> {
        deps.note("p:", path);
        self.files.by_path.get(path).copied()
    }

    /// The files named `name` (without their folder), in any folder.
    pub fn files_named(&self, name: &str, deps: &mut Deps) -> &[FileId] {
        deps.note("b:", name);
        self.files.by_file_name.get(name).map_or(&[], Vec::as_slice)
    }

    /// The files of a folder.
    pub fn files_in_dir(&self, dir: &str, deps: &mut Deps) -> &[FileId] {
        deps.note("d:", dir);
        self.files.by_dir.get(dir).map_or(&[], Vec::as_slice)
    }

    /// The files of a package.
    pub fn files_in_package(
        &self,
        language: &LanguageSpec,
        package: &str,
        deps: &mut Deps,
    ) -> &[FileId] {
        let fam = family(language);
        deps.note("k:", &format!("{fam}:{package}"));
        self.files
            .by_package
            .get(&(fam, package.to_owned()))
            .map_or(&[], Vec::as_slice)
    }

    /// Every definition called `name`, in id order.
    pub fn defs_named(&self, name: &str, deps: &mut Deps) -> Defs {
        deps.note("n:", name);
        if let Some(found) = self.names.get(name) {
            return found.clone();
        }
        let Some(backing) = &self.backing else {
            return Defs::None;
        };
        let mut lazy = self.lazy_names.lock().unwrap_or_else(|p| p.into_inner());
        lazy.entry(name.to_owned())
            .or_insert_with(|| {
                let mut defs: Vec<Def> = backing
                    .defs_named(name)
                    .into_iter()
                    .filter(|d| self.resolvable(d))
                    .map(Arc::new)
                    .collect();
                defs.sort_by_key(|d| d.id);
                Defs::from_vec(defs)
            })
            .clone()
    }

    /// A definition by id (parents and enclosing definitions; no key is recorded: a
    /// definition's parent is in its own file, whose change re-resolves what used it).
    pub fn def(&self, id: DefId) -> Option<Def> {
        if let Some(found) = self.loaded_def(id) {
            return Some(found.clone());
        }
        let backing = self.backing.as_ref()?;
        let mut lazy = self.lazy_defs.lock().unwrap_or_else(|p| p.into_inner());
        lazy.entry(id)
            .or_insert_with(|| backing.def(id).filter(|d| self.resolvable(d)).map(Arc::new))
            .clone()
    }

    /// The definitions directly inside interface `iface`.
    pub fn interface_members(&self, iface: &DefInfo) -> Arc<Vec<Def>> {
        if self.imports.contains_key(&iface.file) {
            // Its file's facts are loaded here.
            return self
                .interface_members
                .get(&iface.id)
                .cloned()
                .unwrap_or_default();
        }
        let Some(backing) = &self.backing else {
            return Arc::default();
        };
        let mut lazy = self.lazy_members.lock().unwrap_or_else(|p| p.into_inner());
        lazy.entry(iface.id)
            .or_insert_with(|| {
                Arc::new(
                    backing
                        .interface_members(iface)
                        .into_iter()
                        .map(Arc::new)
                        .collect(),
                )
            })
            .clone()
    }

    /// A file's imports.
    pub fn imports_of(&self, file: FileId, deps: &mut Deps) -> Arc<Vec<Import>> {
        if let Some(info) = self.files.files.get(&file) {
            deps.note("p:", &info.path);
        }
        if let Some(found) = self.imports.get(&file) {
            return found.clone();
        }
        let Some(backing) = &self.backing else {
            return Arc::default();
        };
        let mut lazy = self.lazy_imports.lock().unwrap_or_else(|p| p.into_inner());
        lazy.entry(file)
            .or_insert_with(|| Arc::new(backing.imports_of(file)))
            .clone()
    }

    /// C and C++: the files `file`'s own includes name, resolved by `resolve` the first time
    /// (no key is recorded: a file records the keys of its own includes only, see
    /// [`REACH`]).
    pub fn include_children(
        &self,
        file: FileId,
        resolve: impl FnOnce() -> Vec<FileId>,
    ) -> Arc<Vec<FileId>> {
        let known = self
            .include_children
            .read()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(found) = known.get(&file) {
            return found.clone();
        }
        drop(known);
        let found = Arc::new(resolve());
        self.include_children
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(file, found.clone());
        found
    }

    /// A file's local bindings, with the id of the definition each is local to.
    pub fn locals_of(&self, file: FileId, deps: &mut Deps) -> Arc<Vec<(Local, Option<DefId>)>> {
        if let Some(info) = self.files.files.get(&file) {
            deps.note("p:", &info.path);
        }
        if let Some(found) = self.locals.get(&file) {
            return Arc::new(crate::packed::decode_locals(found));
        }
        let Some(backing) = &self.backing else {
            return Arc::default();
        };
        let mut lazy = self.lazy_locals.lock().unwrap_or_else(|p| p.into_inner());
        lazy.entry(file)
            .or_insert_with(|| Arc::new(backing.locals_of(file)))
            .clone()
    }
}
