//! The symbol table resolution reads: files, definitions by name and by id, each file's
//! imports and local bindings. It is filled either completely (a clean build, from the facts
//! just extracted) or on demand from the index (an incremental update re-resolving a few
//! files), and records every key a resolution read ([`Deps`]) so the index knows which files
//! to re-resolve when those keys change.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use cc_languages::LanguageSpec;

use crate::model::{DefKind, Import, Local};
pub use crate::project::parent_dir;
use crate::project::Project;

/// A file's id in the index.
pub type FileId = i64;
/// A definition's id in the index.
pub type DefId = i64;

/// What resolution needs of a definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefInfo {
    pub id: DefId,
    pub file: FileId,
    pub name: String,
    pub kind: DefKind,
    pub parent: Option<DefId>,
    pub owner: Option<String>,
    pub type_text: Option<String>,
    pub returns: Option<String>,
    pub bases: Vec<String>,
    pub self_name: Option<String>,
    /// As in [`crate::model::Definition::type_params`].
    pub type_params: Vec<String>,
}

/// A shared definition (resolution passes them around a lot).
pub type Def = Arc<DefInfo>;

/// What resolution needs of a file.
#[derive(Debug, Clone)]
pub struct FileInfo {
    pub id: FileId,
    /// Relative to the root, `/`-separated.
    pub path: String,
    pub language: &'static LanguageSpec,
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
    fn defs_named(&self, name: &str) -> Vec<DefInfo>;
    fn def(&self, id: DefId) -> Option<DefInfo>;
    /// The definitions directly inside interface `iface` (in its file).
    fn interface_members(&self, iface: &DefInfo) -> Vec<DefInfo>;
    fn imports_of(&self, file: FileId) -> Vec<Import>;
    fn locals_of(&self, file: FileId) -> Vec<(Local, Option<DefId>)>;
}

/// The keys one file's resolution read: `n:NAME` (definitions of a name), `p:PATH` (whether
/// a file exists there, and its imports), `d:DIR` (the files of a folder), `k:LANG:PACKAGE`
/// (the files of a package).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Deps {
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
    match language.name {
        "java" | "kotlin" => "jvm",
        "typescript" | "tsx" | "javascript" => "js",
        "c" | "cpp" => "c",
        // A spec's name is its own canonical name (no table lookup: this runs for every
        // candidate of every by-name resolution).
        _ => language.name,
    }
}

type Lazy<K, V> = Mutex<HashMap<K, Arc<V>>>;

/// A local binding and the definition it is local to.
type ScopedLocal = (Local, Option<DefId>);

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
    pub project: Project,
    files: HashMap<FileId, FileInfo>,
    by_path: HashMap<String, FileId>,
    by_dir: HashMap<String, Vec<FileId>>,
    /// Files by their name without the folder (`html.h`), for C includes found by suffix.
    by_file_name: HashMap<String, Vec<FileId>>,
    by_package: HashMap<(&'static str, String), Vec<FileId>>,
    names: HashMap<String, Arc<Vec<Def>>>,
    defs: HashMap<DefId, Def>,
    /// The members of each interface of the loaded files (few: kept for Go's dispatch).
    interface_members: HashMap<DefId, Arc<Vec<Def>>>,
    imports: HashMap<FileId, Arc<Vec<Import>>>,
    locals: HashMap<FileId, Arc<Vec<ScopedLocal>>>,
    backing: Option<B>,
    lazy_names: Lazy<String, Vec<Def>>,
    lazy_defs: Mutex<HashMap<DefId, Option<Def>>>,
    lazy_members: Lazy<DefId, Vec<Def>>,
    lazy_imports: Lazy<FileId, Vec<Import>>,
    lazy_locals: Lazy<FileId, Vec<(Local, Option<DefId>)>>,
    /// C and C++: each file's own includes, resolved (the same whoever includes the file).
    include_children: std::sync::RwLock<HashMap<FileId, Arc<Vec<FileId>>>>,
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
    pub fn new(project: Project, files: Vec<FileInfo>, backing: Option<B>) -> Self {
        let mut table = Table {
            project,
            files: HashMap::new(),
            by_path: HashMap::new(),
            by_dir: HashMap::new(),
            by_file_name: HashMap::new(),
            by_package: HashMap::new(),
            names: HashMap::new(),
            defs: HashMap::new(),
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
        };
        for file in files {
            table.by_path.insert(file.path.clone(), file.id);
            table
                .by_dir
                .entry(file.dir().to_owned())
                .or_default()
                .push(file.id);
            table
                .by_file_name
                .entry(file_name(&file.path).to_owned())
                .or_default()
                .push(file.id);
            if let Some(package) = &file.package {
                table
                    .by_package
                    .entry((family(file.language), package.clone()))
                    .or_default()
                    .push(file.id);
            }
            table.files.insert(file.id, file);
        }
        for list in table
            .by_dir
            .values_mut()
            .chain(table.by_file_name.values_mut())
            .chain(table.by_package.values_mut())
        {
            list.sort_unstable();
        }
        table
    }

    /// Loads a file's facts completely (a clean build).
    pub fn add_facts(
        &mut self,
        file: FileId,
        defs: Vec<DefInfo>,
        imports: Vec<Import>,
        locals: Vec<(Local, Option<DefId>)>,
    ) {
        let interfaces: Vec<DefId> = defs
            .iter()
            .filter(|d| d.kind == crate::model::DefKind::Interface)
            .map(|d| d.id)
            .collect();
        for def in defs {
            let def = Arc::new(def);
            if let Some(parent) = def.parent.filter(|p| interfaces.contains(p)) {
                let members = self.interface_members.entry(parent).or_default();
                Arc::make_mut(members).push(def.clone());
            }
            let list = self.names.entry(def.name.clone()).or_default();
            Arc::make_mut(list).push(def.clone());
            self.defs.insert(def.id, def);
        }
        self.imports.insert(file, Arc::new(imports));
        self.locals.insert(file, Arc::new(locals));
    }

    /// Sorts every name's definitions by id, so that resolution does not depend on the order
    /// files were loaded in.
    pub fn finish(&mut self) {
        for list in self.names.values_mut() {
            Arc::make_mut(list).sort_by_key(|d| d.id);
        }
    }

    pub fn file(&self, id: FileId) -> Option<&FileInfo> {
        self.files.get(&id)
    }

    pub fn files(&self) -> impl Iterator<Item = &FileInfo> {
        self.files.values()
    }

    /// The file at `path`, if there is one.
    pub fn file_at(&self, path: &str, deps: &mut Deps) -> Option<FileId> {
        deps.note("p:", path);
        self.by_path.get(path).copied()
    }

    /// The files named `name` (without their folder), in any folder.
    pub fn files_named(&self, name: &str, deps: &mut Deps) -> &[FileId] {
        deps.note("b:", name);
        self.by_file_name.get(name).map_or(&[], Vec::as_slice)
    }

    /// The files of a folder.
    pub fn files_in_dir(&self, dir: &str, deps: &mut Deps) -> &[FileId] {
        deps.note("d:", dir);
        self.by_dir.get(dir).map_or(&[], Vec::as_slice)
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
        self.by_package
            .get(&(fam, package.to_owned()))
            .map_or(&[], Vec::as_slice)
    }

    /// Every definition called `name`, in id order.
    pub fn defs_named(&self, name: &str, deps: &mut Deps) -> Arc<Vec<Def>> {
        deps.note("n:", name);
        if let Some(found) = self.names.get(name) {
            return found.clone();
        }
        let Some(backing) = &self.backing else {
            return Arc::default();
        };
        let mut lazy = self.lazy_names.lock().unwrap_or_else(|p| p.into_inner());
        lazy.entry(name.to_owned())
            .or_insert_with(|| {
                let mut defs: Vec<Def> =
                    backing.defs_named(name).into_iter().map(Arc::new).collect();
                defs.sort_by_key(|d| d.id);
                Arc::new(defs)
            })
            .clone()
    }

    /// A definition by id (parents and enclosing definitions; no key is recorded: a
    /// definition's parent is in its own file, whose change re-resolves what used it).
    pub fn def(&self, id: DefId) -> Option<Def> {
        if let Some(found) = self.defs.get(&id) {
            return Some(found.clone());
        }
        let backing = self.backing.as_ref()?;
        let mut lazy = self.lazy_defs.lock().unwrap_or_else(|p| p.into_inner());
        lazy.entry(id)
            .or_insert_with(|| backing.def(id).map(Arc::new))
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
        if let Some(info) = self.files.get(&file) {
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
        if let Some(info) = self.files.get(&file) {
            deps.note("p:", &info.path);
        }
        if let Some(found) = self.locals.get(&file) {
            return found.clone();
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
