//! Reading a SCIP index and matching its occurrences with the index's definitions and
//! references, by place.
//!
//! A SCIP occurrence is a range and a symbol; a definition occurrence marks where the symbol
//! is defined. The index's definitions are keyed by where their names are, its references by
//! where the used names are, so a definition occurrence finds its definition, and a reference
//! occurrence its reference, by line and column (SCIP's columns are UTF-8, UTF-16 or UTF-32
//! offsets as the document says, converted to bytes with the file's own line).

use std::collections::{HashMap, HashSet};
use std::path::Path;

use protobuf::Message;
use rusqlite::{params, Connection, OptionalExtension};
use scip::types::{Index, PositionEncoding, SymbolRole};
use serde::Serialize;

use super::{literals, PrecisePlan};
use crate::table::{DefId, FileId};

/// What one import did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PreciseImport {
    /// Files whose references now carry the indexer's word.
    pub files: usize,
    /// References the indexer named a workspace definition for.
    pub edges: usize,
    /// Dispatch edges from the symbols it relates (implementations and what they implement).
    pub dispatch: usize,
    /// Function members of object literals linked to the interface member they implement
    /// (the literal passed where that interface is expected).
    pub implements: usize,
    /// References it said name nothing in the workspace (no edge).
    pub no_edge: usize,
    /// References of those files it did not see (their tree-sitter edges stay).
    pub unseen: usize,
    /// Files it read that changed since (left to tree-sitter until the next run).
    pub changed_since: Vec<String>,
    /// Whether the whole tree's kept ranks followed the import (it covers a small part of
    /// the tree: at most a quarter of its files and a thousand, and relates no new
    /// implementations); otherwise the next answer that ranks computes them whole again.
    pub ranks_followed: bool,
}

/// Parses a SCIP index.
pub(super) fn parse(bytes: &[u8]) -> Result<Index, String> {
    Index::parse_from_bytes(bytes).map_err(|e| format!("its output is not a SCIP index: {e}"))
}

/// Where a symbol is defined, as far as the index's definitions go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Def(DefId),
    /// Defined outside the workspace's indexed files, or a local: no edge.
    Nothing,
    /// Defined in a workspace file at a place the index has no definition for, or in a file
    /// changed since: nothing is said.
    Unknown,
}

/// What the indexer says of one place: the target, and the definitions its symbol is
/// related to (dispatch).
type Said = (Target, Vec<DefId>);

/// One document of the index, matched with the file it describes.
struct Doc<'a> {
    file: FileId,
    lines: Vec<&'a [u8]>,
    encoding: PositionEncoding,
}

impl Doc<'_> {
    /// The symbols of the occurrences at each place.
    fn symbols_at<'o>(
        &self,
        occurrences: &'o [scip::types::Occurrence],
    ) -> HashMap<(u32, u32), Vec<&'o str>> {
        let mut symbols_at: HashMap<(u32, u32), Vec<&str>> = HashMap::new();
        for occurrence in occurrences {
            if occurrence.range.len() >= 3 {
                if let Some(place) = self.byte_column(occurrence.range[0], occurrence.range[1]) {
                    symbols_at
                        .entry(place)
                        .or_default()
                        .push(&occurrence.symbol);
                }
            }
        }
        symbols_at
    }

    /// The 1-based byte column of a SCIP (0-based line, offset in the document's encoding).
    fn byte_column(&self, line: i32, offset: i32) -> Option<(u32, u32)> {
        let text = self.lines.get(usize::try_from(line).ok()?)?;
        let offset = usize::try_from(offset).ok()?;
        let byte = match self.encoding {
            PositionEncoding::UTF8CodeUnitOffsetFromLineStart => offset,
            PositionEncoding::UTF32CodeUnitOffsetFromLineStart => {
                let text = String::from_utf8_lossy(text);
                text.char_indices()
                    .nth(offset)
                    .map_or(text.len(), |(b, _)| b)
            }
            // scip-typescript and scip-python say nothing: both count UTF-16 units.
            _ => {
                let text = String::from_utf8_lossy(text);
                let mut units = 0;
                let mut at = text.len();
                for (b, c) in text.char_indices() {
                    if units >= offset {
                        at = b;
                        break;
                    }
                    units += c.len_utf16();
                }
                at
            }
        };
        Some((
            u32::try_from(line).ok()?.saturating_add(1),
            u32::try_from(byte).ok()?.saturating_add(1),
        ))
    }
}

/// A document of the index whose file is as the plan saw it: (its place among the index's
/// documents, the file, its path, its hash, its bytes).
type Content = (usize, FileId, String, i64, Vec<u8>);

/// Replaces the precise rows of `plan`'s files with what `index` says (see the module docs).
pub(super) fn import(
    tx: &Connection,
    root: &Path,
    plan: &PrecisePlan,
    index: &Index,
    literals_found: &HashMap<String, (i64, Vec<literals::Literal>)>,
) -> rusqlite::Result<PreciseImport> {
    let mut out = PreciseImport::default();
    let contents = read_documents(tx, root, plan, index, &mut out.changed_since);
    let docs: Vec<Doc<'_>> = contents
        .iter()
        .map(|(n, file, _, _, bytes)| Doc {
            file: *file,
            lines: bytes.split(|b| *b == b'\n').collect(),
            encoding: index.documents[*n]
                .position_encoding
                .enum_value()
                .unwrap_or(PositionEncoding::UnspecifiedPositionEncoding),
        })
        .collect();
    let (defs_at, assigned_members) = definitions_at(tx, &docs)?;
    let defined_in = defined_in(index);
    let targets = symbol_targets(
        index,
        plan,
        &Described {
            contents: &contents,
            docs: &docs,
            defs_at: &defs_at,
            assigned_members: &assigned_members,
            defined_in: &defined_in,
        },
    );
    let related = related_symbols(index, plan);
    forget_precise(tx, plan)?;
    let mut writer = PreciseWriter::new(tx, plan)?;
    let mut modules = WorkspaceModules::new(plan.hashes.keys());
    // The dispatch targets of each symbol's group, computed once.
    let mut groups: HashMap<&str, Vec<DefId>> = HashMap::new();
    for (doc, (n, file, _, hash, _)) in docs.iter().zip(&contents) {
        let mut said = Sayings {
            targets: &targets,
            related: &related,
            modules: &mut modules,
            groups: &mut groups,
        };
        let seen = said.at_places(doc, &index.documents[*n].occurrences);
        writer.write_file(*file, *hash, &seen, &mut out)?;
    }
    // The files of its languages it did not read (outside its project), as they are now:
    // not "pending" (no run would read them), counted apart.
    let read: HashSet<FileId> = contents.iter().map(|c| c.1).collect();
    let changed: HashSet<&str> = out.changed_since.iter().map(String::as_str).collect();
    for (path, (file, hash)) in &plan.hashes {
        if !read.contains(file) && !changed.contains(path.as_str()) {
            writer.note_file(*file, *hash, false)?;
        }
    }
    if plan.indexer.relates_references() {
        let context = Context {
            index,
            defs_at: &defs_at,
            targets: &targets,
            defined_in: &defined_in,
            literals: literals_found,
        };
        out.implements = link_literals(tx, &context, &contents, &docs)?;
    }
    out.changed_since.sort();
    Ok(out)
}

/// The files the plan saw, read again: one changed since is left out (and named in
/// `changed_since`).
fn read_documents(
    tx: &Connection,
    root: &Path,
    plan: &PrecisePlan,
    index: &Index,
    changed_since: &mut Vec<String>,
) -> Vec<Content> {
    let mut contents = Vec::new();
    for (n, document) in index.documents.iter().enumerate() {
        let Some(&(file, hash)) = plan.hashes.get(&document.relative_path) else {
            continue;
        };
        let now: Option<i64> = tx
            .query_row("SELECT hash FROM files WHERE id = ?1", [file], |r| r.get(0))
            .ok();
        let bytes = std::fs::read(root.join(&document.relative_path)).ok();
        match bytes {
            Some(bytes) if now == Some(hash) && crate::index::hash(&bytes) == hash => {
                contents.push((n, file, document.relative_path.clone(), hash, bytes));
            }
            _ => changed_since.push(document.relative_path.clone()),
        }
    }
    contents
}

/// The definitions of the read files by where their names are, and those that are
/// functions assigned to a member.
type DefinitionsAt = (HashMap<FileId, HashMap<(u32, u32), DefId>>, HashSet<DefId>);

fn definitions_at(tx: &Connection, docs: &[Doc<'_>]) -> rusqlite::Result<DefinitionsAt> {
    let mut defs_at: HashMap<FileId, HashMap<(u32, u32), DefId>> = HashMap::new();
    let mut assigned_members: HashSet<DefId> = HashSet::new();
    let mut stmt = tx.prepare_cached(
        "SELECT id, name_line, name_col, owner FROM defs WHERE file_id = ?1 ORDER BY id",
    )?;
    for doc in docs {
        let rows = stmt.query_map([doc.file], |r| {
            Ok((
                r.get::<_, DefId>(0)?,
                r.get::<_, u32>(1)?,
                r.get::<_, u32>(2)?,
                r.get::<_, Option<String>>(3)?,
            ))
        })?;
        let at = defs_at.entry(doc.file).or_default();
        for row in rows {
            let (id, line, col, owner) = row?;
            at.insert((line, col), id);
            if owner.as_deref() == Some(crate::extract::ASSIGNED_MEMBER) {
                assigned_members.insert(id);
            }
        }
    }
    Ok((defs_at, assigned_members))
}

/// The documents each symbol has a definition occurrence in.
fn defined_in(index: &Index) -> HashMap<&str, Vec<&str>> {
    let mut defined_in: HashMap<&str, Vec<&str>> = HashMap::new();
    for document in &index.documents {
        for occurrence in &document.occurrences {
            if occurrence.symbol_roles & SymbolRole::Definition as i32 != 0 {
                let docs = defined_in.entry(occurrence.symbol.as_str()).or_default();
                if !docs.contains(&document.relative_path.as_str()) {
                    docs.push(document.relative_path.as_str());
                }
            }
        }
    }
    defined_in
}

/// What is known of the read documents when their symbols' targets are decided.
struct Described<'d, 'a> {
    contents: &'d [Content],
    docs: &'d [Doc<'a>],
    defs_at: &'d HashMap<FileId, HashMap<(u32, u32), DefId>>,
    assigned_members: &'d HashSet<DefId>,
    defined_in: &'d HashMap<&'a str, Vec<&'a str>>,
}

/// Where each symbol is defined, as a definition of the index.
fn symbol_targets<'a>(
    index: &'a Index,
    plan: &PrecisePlan,
    described: &Described<'_, 'a>,
) -> HashMap<&'a str, Target> {
    let by_path: HashMap<&str, usize> = described
        .contents
        .iter()
        .enumerate()
        .map(|(d, (n, ..))| (index.documents[*n].relative_path.as_str(), d))
        .collect();
    let mut defined: HashMap<&str, (Option<FileId>, Target)> = HashMap::new();
    for document in &index.documents {
        let doc = by_path
            .get(document.relative_path.as_str())
            .map(|d| &described.docs[*d]);
        let workspace_file = plan.hashes.contains_key(&document.relative_path);
        for occurrence in &document.occurrences {
            if occurrence.symbol.starts_with("local ") || occurrence.range.len() < 3 {
                continue;
            }
            let at_def = doc.and_then(|doc| {
                let place = doc.byte_column(occurrence.range[0], occurrence.range[1])?;
                described.defs_at.get(&doc.file)?.get(&place).copied()
            });
            // scip-python marks only the first of a function's overloads a definition, the
            // rest (the body among them) references at the definitions' names: such a
            // reference defines the symbol too, in the file that defines it (elsewhere it is
            // a use, as an object literal's member names the interface member it fills).
            let definition = occurrence.symbol_roles & SymbolRole::Definition as i32 != 0;
            let defined_here = || {
                described
                    .defined_in
                    .get(occurrence.symbol.as_str())
                    .is_some_and(|docs| docs.contains(&document.relative_path.as_str()))
            };
            // A function assigned to a member (`inst.check = …`) only fills the member
            // the reference names.
            let assigned = at_def.is_some_and(|d| described.assigned_members.contains(&d));
            if !definition && (at_def.is_none() || assigned || !defined_here()) {
                continue;
            }
            let target = match (doc, at_def) {
                (_, Some(def)) => Target::Def(def),
                (Some(_), None) => Target::Unknown,
                // A workspace file changed since: nothing is said of what it defines.
                (None, _) if workspace_file => Target::Unknown,
                (None, _) => Target::Nothing,
            };
            // Several definitions of one symbol in one file (overload signatures and their
            // implementation): the last, the body calls run. In several files (rust-analyzer
            // names a function of each test crate alike): nothing is said.
            let file = doc.map(|d| d.file);
            match defined.entry(occurrence.symbol.as_str()) {
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert((file, target));
                }
                std::collections::hash_map::Entry::Occupied(mut e) => {
                    let (first_file, known) = *e.get();
                    if first_file != file {
                        e.insert((first_file, Target::Unknown));
                    } else if target != Target::Unknown || known == Target::Unknown {
                        e.insert((file, target));
                    }
                }
            }
        }
    }
    defined
        .into_iter()
        .map(|(symbol, (_, target))| (symbol, target))
        .collect()
}

/// Symbols related for "find references" (implementations and what they implement), each
/// way; none for an indexer whose relations mean something else.
fn related_symbols<'a>(index: &'a Index, plan: &PrecisePlan) -> HashMap<&'a str, Vec<&'a str>> {
    let mut related: HashMap<&str, Vec<&str>> = HashMap::new();
    let infos = index
        .documents
        .iter()
        .flat_map(|d| d.symbols.iter())
        .chain(index.external_symbols.iter())
        .filter(|_| plan.indexer.relates_references());
    for info in infos {
        for relationship in &info.relationships {
            if relationship.is_reference || relationship.is_implementation {
                related
                    .entry(info.symbol.as_str())
                    .or_default()
                    .push(relationship.symbol.as_str());
                related
                    .entry(relationship.symbol.as_str())
                    .or_default()
                    .push(info.symbol.as_str());
            }
        }
    }
    related
}

/// Forgets the precise rows of the plan's files.
fn forget_precise(tx: &Connection, plan: &PrecisePlan) -> rusqlite::Result<()> {
    let mut forget = tx.prepare_cached("DELETE FROM precise WHERE file_id = ?1")?;
    let mut forget_fanout = tx.prepare_cached("DELETE FROM precise_fanout WHERE file_id = ?1")?;
    let mut forget_implements =
        tx.prepare_cached("DELETE FROM precise_implements WHERE file_id = ?1")?;
    let mut forget_file = tx.prepare_cached("DELETE FROM precise_files WHERE file_id = ?1")?;
    for (file, _) in plan.hashes.values() {
        forget.execute([file])?;
        forget_fanout.execute([file])?;
        forget_implements.execute([file])?;
        forget_file.execute([file])?;
    }
    Ok(())
}

/// What the indexer says of each symbol, for the references of one document.
struct Sayings<'s, 'a> {
    targets: &'s HashMap<&'a str, Target>,
    related: &'s HashMap<&'a str, Vec<&'a str>>,
    modules: &'s mut WorkspaceModules,
    groups: &'s mut HashMap<&'a str, Vec<DefId>>,
}

impl<'a> Sayings<'_, 'a> {
    /// What the document's reference occurrences say, by place (several symbols can stand
    /// at one place: a function and a type of one name).
    fn at_places(
        &mut self,
        doc: &Doc<'_>,
        occurrences: &'a [scip::types::Occurrence],
    ) -> HashMap<(u32, u32), Vec<Said>> {
        let mut seen: HashMap<(u32, u32), Vec<Said>> = HashMap::new();
        for occurrence in occurrences {
            if occurrence.symbol_roles & SymbolRole::Definition as i32 != 0
                || occurrence.range.len() < 3
            {
                continue;
            }
            let Some(place) = doc.byte_column(occurrence.range[0], occurrence.range[1]) else {
                continue;
            };
            let said = self.of_symbol(&occurrence.symbol);
            seen.entry(place).or_default().push(said);
        }
        seen
    }

    /// One symbol's target and dispatch targets.
    fn of_symbol(&mut self, symbol: &'a str) -> Said {
        // A document-local symbol is a local variable, a parameter, or a name bound inside
        // a function (an import there, a conditional definition): tree-sitter's scopes say
        // more of it than "local".
        let target = if symbol.starts_with("local ") {
            Target::Unknown
        } else {
            // A symbol defined nowhere in the index is a library's, unless the library is
            // named like a workspace module: the indexer's environment may hold an
            // installed copy of the workspace's own package (`import click` found in
            // site-packages beside `src/click`), and then tree-sitter's word stands.
            self.targets.get(symbol).copied().unwrap_or_else(|| {
                match self.modules.shadows(symbol) {
                    true => Target::Unknown,
                    false => Target::Nothing,
                }
            })
        };
        let Target::Def(def) = target else {
            return (target, Vec::new());
        };
        let (targets, related) = (self.targets, self.related);
        let fanout = self
            .groups
            .entry(symbol)
            .or_insert_with(|| {
                let mut defs: Vec<DefId> = Vec::new();
                for other in related_group(related, symbol) {
                    if let Some(Target::Def(d)) = targets.get(other) {
                        if *d != def && !defs.contains(d) {
                            defs.push(*d);
                        }
                    }
                }
                defs
            })
            .clone();
        (target, fanout)
    }
}

/// Writes the precise rows, its statements prepared once.
struct PreciseWriter<'c> {
    plan: &'c PrecisePlan,
    refs: rusqlite::CachedStatement<'c>,
    insert: rusqlite::CachedStatement<'c>,
    insert_fanout: rusqlite::CachedStatement<'c>,
    insert_file: rusqlite::CachedStatement<'c>,
}

impl<'c> PreciseWriter<'c> {
    fn new(tx: &'c Connection, plan: &'c PrecisePlan) -> rusqlite::Result<Self> {
        Ok(PreciseWriter {
            plan,
            // A reference tree-sitter resolved to a member of the type the indexer names (a
            // class's construction resolved to its constructor) keeps that member: the same
            // call, said more closely.
            refs: tx.prepare_cached(
                "SELECT r.ord, r.line, r.col, r.target_id, d.parent_id FROM refs r
                 LEFT JOIN defs d ON d.id = r.target_id WHERE r.file_id = ?1",
            )?,
            insert: tx.prepare_cached(
                "INSERT INTO precise(file_id, ord, target_id) VALUES (?1, ?2, ?3)",
            )?,
            insert_fanout: tx.prepare_cached(
                "INSERT OR IGNORE INTO precise_fanout(file_id, ord, target_id) VALUES (?1, ?2, ?3)",
            )?,
            insert_file: tx.prepare_cached(
                "INSERT OR REPLACE INTO precise_files(file_id, hash, indexer, run_key, read)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?,
        })
    }

    /// Each of the file's references at a place the indexer saw gets the indexer's word.
    fn write_file(
        &mut self,
        file: FileId,
        hash: i64,
        seen: &HashMap<(u32, u32), Vec<Said>>,
        out: &mut PreciseImport,
    ) -> rusqlite::Result<()> {
        let rows = self.refs.query_map([file], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, u32>(1)?,
                r.get::<_, u32>(2)?,
                r.get::<_, Option<DefId>>(3)?,
                r.get::<_, Option<DefId>>(4)?,
            ))
        })?;
        for row in rows {
            let (ord, line, col, own, own_parent) = row?;
            let here = seen.get(&(line, col)).map(|at| choose(at, own, own_parent));
            match here {
                Some((Target::Def(def), fanout)) => {
                    let def = match own {
                        Some(member) if own_parent == Some(def) => member,
                        _ => def,
                    };
                    self.insert.execute(params![file, ord, def])?;
                    out.edges += 1;
                    for d in fanout {
                        self.insert_fanout.execute(params![file, ord, d])?;
                        out.dispatch += 1;
                    }
                }
                Some((Target::Nothing, _)) => {
                    self.insert
                        .execute(params![file, ord, Option::<DefId>::None])?;
                    out.no_edge += 1;
                }
                Some((Target::Unknown, _)) | None => out.unseen += 1,
            }
        }
        self.note_file(file, hash, true)?;
        out.files += 1;
        Ok(())
    }

    /// Records the file as this run saw it (`read`: the indexer read it).
    fn note_file(&mut self, file: FileId, hash: i64, read: bool) -> rusqlite::Result<()> {
        self.insert_file.execute(params![
            file,
            hash,
            self.plan.indexer.name(),
            self.plan.key,
            i64::from(read)
        ])?;
        Ok(())
    }
}

/// What the import learned of the index, for the literal links.
struct Context<'a> {
    index: &'a Index,
    defs_at: &'a HashMap<FileId, HashMap<(u32, u32), DefId>>,
    targets: &'a HashMap<&'a str, Target>,
    /// The documents each symbol has a definition occurrence in.
    defined_in: &'a HashMap<&'a str, Vec<&'a str>>,
    /// Object-literal arguments found before the import, by path (with the bytes' hash).
    literals: &'a HashMap<String, (i64, Vec<literals::Literal>)>,
}

/// Links each function member of an object literal passed where a workspace interface (or
/// class) is expected to that type's member of its name (see [`super::literals`]).
fn link_literals(
    tx: &Connection,
    context: &Context<'_>,
    contents: &[Content],
    docs: &[Doc<'_>],
) -> rusqlite::Result<usize> {
    let Context {
        index,
        defs_at,
        targets,
        defined_in,
        literals: found_before,
    } = *context;
    let parameters = literals::parameters(index);
    let documentation: HashMap<&str, &str> = index
        .documents
        .iter()
        .flat_map(|d| d.symbols.iter())
        .filter_map(|s| Some((s.symbol.as_str(), s.documentation.first()?.as_str())))
        .collect();
    let types = workspace_types(targets, defined_in);
    let mut member_of =
        tx.prepare_cached("SELECT id FROM defs WHERE parent_id = ?1 AND name = ?2 LIMIT 1")?;
    let mut bases_of = tx.prepare_cached("SELECT IFNULL(bases, '') FROM defs WHERE id = ?1")?;
    let mut insert = tx.prepare_cached(
        "INSERT OR IGNORE INTO precise_implements(file_id, def_id, implemented_id)
         VALUES (?1, ?2, ?3)",
    )?;
    let mut parser = cc_languages::Parser::new();
    let mut linked = 0;
    for (doc, (n, file, rel, hash, bytes)) in docs.iter().zip(contents) {
        // Found before the import when the bytes are the same (they are, unless the file
        // changed in between: then parsed now).
        let found = match found_before.get(rel) {
            Some((h, literals)) if h == hash => literals.clone(),
            _ => match literals::of_file(&mut parser, rel, bytes) {
                Some(literals) => literals,
                None => continue,
            },
        };
        if found.is_empty() {
            continue;
        }
        let symbols_at = doc.symbols_at(&index.documents[*n].occurrences);
        for literal in found {
            let mut expected: Vec<DefId> = Vec::new();
            for symbol in symbols_at.get(&literal.callee).into_iter().flatten() {
                let Some(callable) = literals::callable_symbol(symbol) else {
                    continue;
                };
                // A type name as the callee's file sees it: of several types of the name
                // (a declaration file's copy), the source nearest the callee's.
                let near = defined_in
                    .get(callable.as_str())
                    .and_then(|docs| docs.first())
                    .copied()
                    .unwrap_or("");
                let unique = |name: &str| nearest(types.get(name)?, near);
                let parameter = parameters
                    .get(callable.as_str())
                    .and_then(|p| p.get(literal.argument));
                let Some(text) = parameter.and_then(|p| documentation.get(p)) else {
                    continue;
                };
                for name in literals::parameter_types(text) {
                    if let Some(def) = unique(&name).filter(|d| !expected.contains(d)) {
                        expected.push(def);
                    }
                }
            }
            let unique = |name: &str| nearest(types.get(name)?, "");
            for (name, place) in &literal.members {
                let Some(member) = defs_at.get(file).and_then(|m| m.get(place)) else {
                    continue;
                };
                for ty in &expected {
                    if let Some(implemented) =
                        member_named(&mut member_of, &mut bases_of, &unique, *ty, name)?
                    {
                        linked += insert.execute(params![file, member, implemented])?;
                    }
                }
            }
        }
    }
    Ok(linked)
}

/// Workspace types by name, with the file each is defined in.
fn workspace_types<'a>(
    targets: &HashMap<&'a str, Target>,
    defined_in: &HashMap<&'a str, Vec<&'a str>>,
) -> HashMap<String, Vec<(DefId, &'a str)>> {
    let mut types: HashMap<String, Vec<(DefId, &str)>> = HashMap::new();
    for (symbol, target) in targets {
        if let (true, Target::Def(def)) = (symbol.ends_with('#'), target) {
            let name = scip::symbol::parse_symbol(symbol)
                .ok()
                .and_then(|s| s.descriptors.last().map(|d| d.name.clone()));
            let file = defined_in.get(symbol).and_then(|docs| docs.first());
            if let (Some(name), Some(file)) = (name, file) {
                types.entry(name).or_default().push((*def, *file));
            }
        }
    }
    types
}

/// Of several types of one name, the one defined in a source file (not a `.d.ts`) whose
/// path shares the most folders with `near`; `None` on a tie.
fn nearest(candidates: &[(DefId, &str)], near: &str) -> Option<DefId> {
    let shared = |path: &str| {
        path.split('/')
            .zip(near.split('/'))
            .take_while(|(a, b)| a == b)
            .count()
    };
    let mut best: Vec<(usize, DefId)> = candidates
        .iter()
        .filter(|(_, path)| !path.ends_with(".d.ts") && !path.ends_with(".d.cts"))
        .map(|(def, path)| (shared(path), *def))
        .collect();
    best.sort_by_key(|b| std::cmp::Reverse(b.0));
    match best.as_slice() {
        [(_, one)] => Some(*one),
        [(a, one), (b, _), ..] if a > b => Some(*one),
        _ => None,
    }
}

/// The member `name` of the type `ty` or of its bases (a few levels up).
fn member_named(
    member_of: &mut rusqlite::CachedStatement<'_>,
    bases_of: &mut rusqlite::CachedStatement<'_>,
    unique: &dyn Fn(&str) -> Option<DefId>,
    ty: DefId,
    name: &str,
) -> rusqlite::Result<Option<DefId>> {
    let mut queue = vec![ty];
    let mut next = 0;
    while next < queue.len() && queue.len() < 16 {
        let current = queue[next];
        next += 1;
        let found: Option<DefId> = member_of
            .query_row(params![current, name], |r| r.get(0))
            .optional()?;
        if found.is_some() {
            return Ok(found);
        }
        let bases: String = bases_of
            .query_row([current], |r| r.get(0))
            .optional()?
            .unwrap_or_default();
        for base in bases.lines() {
            let base = base.split('<').next().unwrap_or("").trim();
            if let Some(def) = unique(base).filter(|d| !queue.contains(d)) {
                queue.push(def);
            }
        }
    }
    Ok(None)
}

/// Most symbols one reference group reaches (an interface method, the methods implementing
/// it, the interfaces those implement): a bound on the work for a hub.
const GROUP_LIMIT: usize = 256;

/// Every symbol related to `symbol`, directly or through others (the methods implementing one
/// interface method are one group, as "find references" takes them), without `symbol`.
fn related_group<'a>(related: &HashMap<&'a str, Vec<&'a str>>, symbol: &'a str) -> Vec<&'a str> {
    let mut group = vec![symbol];
    let mut next = 0;
    while next < group.len() && group.len() < GROUP_LIMIT {
        for other in related.get(group[next]).into_iter().flatten() {
            if !group.contains(other) {
                group.push(other);
            }
        }
        next += 1;
    }
    group.remove(0);
    group
}

/// The module paths of the workspace's files, every trailing part of each (`src/click/core.py`
/// gives `src/click/core`, `click/core`, `core`), to tell a library symbol that names a
/// workspace module.
struct WorkspaceModules {
    suffixes: std::collections::HashSet<String>,
    known: HashMap<String, bool>,
}

impl WorkspaceModules {
    fn new<'a>(paths: impl Iterator<Item = &'a String>) -> Self {
        let mut suffixes = std::collections::HashSet::new();
        for path in paths {
            let stem = path
                .rsplit_once('.')
                .map_or(path.as_str(), |(stem, _)| stem);
            let stem = stem.strip_suffix("/__init__").unwrap_or(stem);
            let mut rest = stem;
            loop {
                suffixes.insert(rest.to_owned());
                match rest.split_once('/') {
                    Some((_, tail)) => rest = tail,
                    None => break,
                }
            }
        }
        WorkspaceModules {
            suffixes,
            known: HashMap::new(),
        }
    }

    /// Whether `symbol`'s module (its first descriptor: a dotted module or a file path) is
    /// a workspace module's name.
    fn shadows(&mut self, symbol: &str) -> bool {
        if let Some(known) = self.known.get(symbol) {
            return *known;
        }
        let module = scip::symbol::parse_symbol(symbol)
            .ok()
            .and_then(|parsed| parsed.descriptors.first().map(|d| d.name.clone()))
            .unwrap_or_default();
        let module = module
            .rsplit_once('.')
            .map_or(module.clone(), |(stem, ext)| {
                // A file path keeps its folders; a dotted module name becomes one.
                if [
                    "ts", "tsx", "js", "mjs", "cjs", "mts", "cts", "py", "pyi", "rs",
                ]
                .contains(&ext)
                {
                    stem.to_owned()
                } else {
                    module.replace('.', "/")
                }
            });
        let shadows = !module.is_empty() && self.suffixes.contains(&module);
        self.known.insert(symbol.to_owned(), shadows);
        shadows
    }
}

/// What the indexer says of a reference where `at` holds its symbols: the definition
/// tree-sitter also found (or whose member it found) when one of them is it, else the first
/// definition, else "unknown" when any symbol is, else "nothing".
fn choose(at: &[Said], own: Option<DefId>, own_parent: Option<DefId>) -> (Target, &[DefId]) {
    let defs = || {
        at.iter().filter_map(|(t, fanout)| match t {
            Target::Def(d) => Some((*d, fanout.as_slice())),
            _ => None,
        })
    };
    if let Some((d, fanout)) = defs().find(|(d, _)| Some(*d) == own || Some(*d) == own_parent) {
        return (Target::Def(d), fanout);
    }
    if let Some((d, fanout)) = defs().next() {
        return (Target::Def(d), fanout);
    }
    if at.iter().any(|(t, _)| *t == Target::Unknown) {
        return (Target::Unknown, &[]);
    }
    (Target::Nothing, &[])
}
