//! Builds an answer key for the graph's accuracy tests from a real language server: every
//! function and method the server's `documentSymbol` lists in the project's files, and its
//! `references` restricted to call sites (the reference is followed by `(`, after optional
//! type arguments); for Go, a method also gets the call sites of the workspace interface
//! methods it implements (`textDocument/implementation`), and for Rust an impl's method those of
//! the trait method it implements (rust-analyzer answers `implementation` on the trait's
//! method with the impls' methods). Run through `cargo xtask graph-keys`, which writes
//! `graph/tests/keys/<project>.json`.
//!
//! ```text
//! cargo run --release -p cc-graph --example answer_key -- ROOT LANGUAGE OUT.json [LSP_TOML]
//! ```
//!
//! LSP_TOML is an `[lsp]` section (as in `.cc/tools.toml`) for the server: extra paths,
//! environment. The key records the server, the files and each definition with its callers
//! as `[path, line]` (1-based), paths relative to ROOT.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use cc_lsp_client::{PositionEncoding, ServerPool};
use serde_json::{json, Value};

const TIMEOUT: Duration = Duration::from_secs(120);

fn extensions(language: &str) -> &'static [&'static str] {
    match language {
        "python" => &["py"],
        "go" => &["go"],
        "typescript" => &["ts"],
        "rust" => &["rs"],
        _ => &[],
    }
}

/// Function-like symbol kinds: Method, Constructor, Function.
fn is_function(kind: u64) -> bool {
    matches!(kind, 6 | 9 | 12)
}

struct Def {
    name: String,
    path: String,
    line: u32,
    character: u32,
    /// For a constructor: where its class's name is (the class's call sites construct it).
    class: Option<(u32, u32)>,
}

/// Where every symbol's name is, (path, 0-based line, character): a reference there is a
/// declaration (an overload, a re-declaration), not a call.
type Declared = std::collections::HashSet<(String, u64, u64)>;

fn collect(
    symbols: &[Value],
    path: &str,
    out: &mut Vec<Def>,
    declared: &mut Declared,
    class: Option<(u32, u32)>,
) {
    for s in symbols {
        let kind = s["kind"].as_u64().unwrap_or(0);
        // DocumentSymbol (hierarchical) or SymbolInformation (flat).
        let range = if s.get("selectionRange").is_some() {
            &s["selectionRange"]
        } else {
            &s["location"]["range"]
        };
        declared.insert((
            path.to_owned(),
            range["start"]["line"].as_u64().unwrap_or(0),
            range["start"]["character"].as_u64().unwrap_or(0),
        ));
        if is_function(kind) {
            let raw = s["name"].as_str().unwrap_or("");
            // gopls names methods `(*T).M`; TypeScript servers `constructor`.
            let name = raw.rsplit('.').next().unwrap_or(raw).to_owned();
            let constructor = kind == 9 || name == "__init__";
            out.push(Def {
                name,
                path: path.to_owned(),
                line: range["start"]["line"].as_u64().unwrap_or(0) as u32,
                character: range["start"]["character"].as_u64().unwrap_or(0) as u32,
                class: if constructor { class } else { None },
            });
        }
        // Class (5) and struct (23): their constructors' call sites are the class's.
        let here = matches!(kind, 5 | 23).then(|| {
            (
                range["start"]["line"].as_u64().unwrap_or(0) as u32,
                range["start"]["character"].as_u64().unwrap_or(0) as u32,
            )
        });
        if let Some(children) = s["children"].as_array() {
            collect(children, path, out, declared, here);
        }
    }
}

/// Whether the text after a reference's range is a call: `(`, after blanks and type
/// arguments (`<T>`, `[T]`, `::<T>`).
fn is_call(line_text: &str, end_byte: usize) -> bool {
    let rest = line_text.get(end_byte..).unwrap_or("");
    let mut chars = rest.trim_start().chars().peekable();
    let rest = rest.trim_start();
    let rest = rest.strip_prefix("::").unwrap_or(rest);
    if rest.starts_with('(') {
        return true;
    }
    let _ = chars.next();
    for (open, close) in [('<', '>'), ('[', ']')] {
        if rest.starts_with(open) {
            let mut depth = 0;
            for (i, c) in rest.char_indices() {
                if c == open {
                    depth += 1;
                } else if c == close {
                    depth -= 1;
                    if depth == 0 {
                        return rest[i + 1..].trim_start().starts_with('(');
                    }
                }
            }
        }
    }
    false
}

async fn references(
    server: &cc_lsp_client::LanguageServer,
    uri: &str,
    line: u32,
    character: u32,
) -> Vec<Value> {
    use cc_lsp_client::lsp_types;
    let Ok(uri) = uri.parse::<lsp_types::Uri>() else {
        return Vec::new();
    };
    let params = lsp_types::ReferenceParams {
        text_document_position: lsp_types::TextDocumentPositionParams::new(
            lsp_types::TextDocumentIdentifier::new(uri),
            lsp_types::Position::new(line, character),
        ),
        context: lsp_types::ReferenceContext {
            include_declaration: false,
        },
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    };
    server
        .request_json::<lsp_types::request::References>(params, TIMEOUT)
        .await
        .ok()
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default()
}

/// The workspace places `textDocument/implementation` gives for a method (gopls: the
/// interface methods a concrete method implements), as (path, 1-based line).
async fn implementations(
    server: &cc_lsp_client::LanguageServer,
    uri: &str,
    line: u32,
    character: u32,
    root: &std::path::Path,
) -> Vec<(String, u64)> {
    use cc_lsp_client::lsp_types;
    let Ok(uri) = uri.parse::<lsp_types::Uri>() else {
        return Vec::new();
    };
    let params = lsp_types::request::GotoImplementationParams {
        text_document_position_params: lsp_types::TextDocumentPositionParams::new(
            lsp_types::TextDocumentIdentifier::new(uri),
            lsp_types::Position::new(line, character),
        ),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    };
    let found = server
        .request_json::<lsp_types::request::GotoImplementation>(params, TIMEOUT)
        .await
        .ok()
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default();
    found
        .iter()
        .filter_map(|l| {
            // A `Location` (gopls) or a `LocationLink` (rust-analyzer).
            let path = l["uri"]
                .as_str()
                .or_else(|| l["targetUri"].as_str())
                .and_then(cc_lsp_client::uri::uri_to_path)?;
            let inside = path.strip_prefix(root).ok()?;
            let range = if l["range"].is_object() {
                &l["range"]
            } else {
                &l["targetSelectionRange"]
            };
            let line = range["start"]["line"].as_u64()? + 1;
            Some((inside.to_string_lossy().replace('\\', "/"), line))
        })
        .collect()
}

fn byte_of(line: &str, character: u32, encoding: PositionEncoding) -> usize {
    cc_lsp_client::position::byte_offset(line, character, encoding)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [root, language, out, rest @ ..] = args.as_slice() else {
        return Err("usage: answer_key ROOT LANGUAGE OUT.json [LSP_TOML]".into());
    };
    let root = PathBuf::from(root).canonicalize()?;
    // LSP_TOML is the body of an `[lsp]` section.
    let config: cc_lsp_client::LspConfig = match rest.first() {
        Some(text) => toml::from_str(text)?,
        None => cc_lsp_client::LspConfig::default(),
    };
    let pool = ServerPool::from_config(&root, &config)?;
    let files = source_files(&root, language);
    let outlined = outline_files(&pool, &root, &files).await?;
    let mut keyed = Vec::new();
    // Per definition: the workspace interface methods it implements, (path, 1-based line).
    let mut dispatch_from: Vec<Vec<(String, u64)>> = Vec::new();
    for def in &outlined.defs {
        let file = root.join(&def.path);
        let server = pool.server_for(&file).await.map_err(|u| u.reason)?;
        let uri = cc_lsp_client::uri::path_to_uri(&file);
        let callers = call_sites(&server, &root, &uri, def, &outlined).await;
        // Go: a call of an interface method may run this method (issue 32 counts the
        // interface's call sites for each workspace method implementing it).
        let implemented = if language == "go" || language == "rust" {
            implementations(&server, &uri, def.line, def.character, &root).await
        } else {
            Vec::new()
        };
        dispatch_from.push(implemented);
        keyed.push(json!({
            "name": def.name,
            "path": def.path,
            "line": def.line + 1,
            "callers": callers,
        }));
    }
    add_dispatch_callers(&mut keyed, &dispatch_from, language);
    let key = json!({
        "language": language,
        "server": outlined.server_name,
        "files": files.len(),
        "definitions": keyed,
    });
    std::fs::write(out, serde_json::to_string_pretty(&key)? + "\n")?;
    eprintln!("wrote {out}: {} definitions", keyed.len());
    pool.shutdown().await;
    Ok(())
}

/// The files under `root` in `language` (no TypeScript declaration files), in path order.
fn source_files(root: &Path, language: &str) -> Vec<PathBuf> {
    let exts = extensions(language);
    let mut files: Vec<PathBuf> = ignore::WalkBuilder::new(root)
        .build()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .map(|e| e.into_path())
        .filter(|p| {
            p.extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| exts.contains(&e))
                && !p.to_string_lossy().ends_with(".d.ts")
        })
        .collect();
    files.sort();
    files
}

/// `p` relative to `root` with `/` separators (`p` itself when outside it).
fn rel(root: &Path, p: &Path) -> String {
    p.strip_prefix(root)
        .unwrap_or(p)
        .to_string_lossy()
        .replace('\\', "/")
}

/// What the servers' `documentSymbol` gave for the project's files.
struct Outlined {
    /// Each file's text, by relative path.
    texts: BTreeMap<String, String>,
    /// The functions and methods, file by file.
    defs: Vec<Def>,
    /// Where every symbol's name is.
    declared: Declared,
    /// The server that answered for the last file.
    server_name: String,
}

/// Opens each file in its server and collects its functions and declarations.
async fn outline_files(
    pool: &ServerPool,
    root: &Path,
    files: &[PathBuf],
) -> Result<Outlined, Box<dyn std::error::Error>> {
    let mut texts: BTreeMap<String, String> = BTreeMap::new();
    let mut defs = Vec::new();
    let mut declared = Declared::new();
    let mut server_name = String::new();
    for file in files {
        let text = std::fs::read_to_string(file)?;
        let (family, _) = pool.route(file).map_err(|u| u.reason)?;
        let language_id = family.language_id(file);
        let server = pool.server_for(file).await.map_err(|u| u.reason)?;
        server_name = server.name().to_owned();
        server.ensure_synced(file, &text, &language_id)?;
        server.wait_ready(TIMEOUT).await;
        let symbols = server
            .request_json::<cc_lsp_client::lsp_types::request::DocumentSymbolRequest>(
                cc_lsp_client::lsp_types::DocumentSymbolParams {
                    text_document: cc_lsp_client::lsp_types::TextDocumentIdentifier::new(
                        cc_lsp_client::uri::file_uri(file),
                    ),
                    work_done_progress_params: Default::default(),
                    partial_result_params: Default::default(),
                },
                TIMEOUT,
            )
            .await?;
        let mut found = Vec::new();
        collect(
            symbols.as_array().map(Vec::as_slice).unwrap_or_default(),
            &rel(root, file),
            &mut found,
            &mut declared,
            None,
        );
        eprintln!("{}: {} functions", rel(root, file), found.len());
        defs.extend(found);
        texts.insert(rel(root, file), text);
    }
    Ok(Outlined {
        texts,
        defs,
        declared,
        server_name,
    })
}

/// The call sites of `def` (at `uri`), as sorted `[path, line]`: its references (its class's
/// too, for a constructor, and an alias's) that are calls and not declarations.
async fn call_sites(
    server: &cc_lsp_client::LanguageServer,
    root: &Path,
    uri: &str,
    def: &Def,
    outlined: &Outlined,
) -> Vec<Value> {
    let encoding = server.encoding();
    let mut refs = references(server, uri, def.line, def.character).await;
    if let Some((line, character)) = def.class {
        refs.extend(references(server, uri, line, character).await);
    }
    let mut all = with_alias_references(server, refs, encoding).await;
    let mut seen = std::collections::HashSet::new();
    all.retain(|r| seen.insert((r["uri"].to_string(), r["range"]["start"].to_string())));
    let mut callers = Vec::new();
    for r in &all {
        let Some(path) = r["uri"].as_str().and_then(cc_lsp_client::uri::uri_to_path) else {
            continue;
        };
        let Ok(inside) = path.strip_prefix(root) else {
            continue;
        };
        let rel_path = inside.to_string_lossy().replace('\\', "/");
        let start = (
            rel_path.clone(),
            r["range"]["start"]["line"].as_u64().unwrap_or(0),
            r["range"]["start"]["character"].as_u64().unwrap_or(0),
        );
        if outlined.declared.contains(&start) {
            continue;
        }
        let line = r["range"]["end"]["line"].as_u64().unwrap_or(0) as usize;
        let character = r["range"]["end"]["character"].as_u64().unwrap_or(0) as u32;
        let text = match outlined.texts.get(&rel_path) {
            Some(t) => t.clone(),
            None => match std::fs::read_to_string(&path) {
                Ok(t) => t,
                Err(_) => continue,
            },
        };
        let Some(line_text) = text.lines().nth(line) else {
            continue;
        };
        if is_call(line_text, byte_of(line_text, character, encoding)) {
            callers.push(json!([rel_path, line + 1]));
        }
    }
    callers.sort_by_key(|c| c.to_string());
    callers
}

/// `refs` followed by the references of each name a reference is imported as.
async fn with_alias_references(
    server: &cc_lsp_client::LanguageServer,
    refs: Vec<Value>,
    encoding: PositionEncoding,
) -> Vec<Value> {
    // An import that renames the function (`import f as g`, `{ f as g }`): the uses of
    // the new name are the function's uses too.
    let mut all = refs.clone();
    for r in &refs {
        let Some(path) = r["uri"].as_str().and_then(cc_lsp_client::uri::uri_to_path) else {
            continue;
        };
        let line = r["range"]["end"]["line"].as_u64().unwrap_or(0);
        let end = r["range"]["end"]["character"].as_u64().unwrap_or(0) as u32;
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let Some(line_text) = text.lines().nth(line as usize) else {
            continue;
        };
        let after = &line_text[byte_of(line_text, end, encoding).min(line_text.len())..];
        let Some(alias) = after.trim_start().strip_prefix("as ") else {
            continue;
        };
        let alias = alias.trim_start();
        let alias_start = line_text.len() - alias.len();
        let character = cc_lsp_client::position::units(&line_text[..alias_start], encoding);
        let alias_uri = cc_lsp_client::uri::path_to_uri(&path);
        all.extend(references(server, &alias_uri, line as u32, character).await);
    }
    all
}

/// Adds to each entry of `keyed` the callers of the methods it may be dispatched from:
/// for Go the interface methods in `dispatch_from`, for Rust the trait method whose
/// `dispatch_from` lists it; then sorts and dedups each entry's callers.
fn add_dispatch_callers(keyed: &mut [Value], dispatch_from: &[Vec<(String, u64)>], language: &str) {
    let by_place: std::collections::HashMap<(String, u64), Vec<Value>> = keyed
        .iter()
        .map(|k| {
            (
                (
                    k["path"].as_str().unwrap_or("").to_owned(),
                    k["line"].as_u64().unwrap_or(0),
                ),
                k["callers"].as_array().cloned().unwrap_or_default(),
            )
        })
        .collect();
    // Rust: the places `implementation` gave for a trait's method are its impls' methods,
    // which get the trait method's call sites (Go's are the interface methods a method
    // implements, whose call sites it gets).
    let mut implemented_by: std::collections::HashMap<(String, u64), Vec<(String, u64)>> =
        Default::default();
    if language == "rust" {
        for (entry, impls) in keyed.iter().zip(dispatch_from) {
            let trait_place = (
                entry["path"].as_str().unwrap_or("").to_owned(),
                entry["line"].as_u64().unwrap_or(0),
            );
            // Asked on an impl's method, rust-analyzer lists every impl of that trait method
            // (that one among them): only a trait's own method relates.
            if impls.contains(&trait_place) {
                continue;
            }
            for place in impls {
                implemented_by
                    .entry(place.clone())
                    .or_default()
                    .push(trait_place.clone());
            }
        }
    }
    for (entry, interfaces) in keyed.iter_mut().zip(dispatch_from) {
        let mut callers = entry["callers"].as_array().cloned().unwrap_or_default();
        let place = (
            entry["path"].as_str().unwrap_or("").to_owned(),
            entry["line"].as_u64().unwrap_or(0),
        );
        let from: Vec<(String, u64)> = if language == "rust" {
            implemented_by.get(&place).cloned().unwrap_or_default()
        } else {
            interfaces.clone()
        };
        for place in &from {
            callers.extend(by_place.get(place).cloned().unwrap_or_default());
        }
        callers.sort_by_key(|c| c.to_string());
        callers.dedup();
        entry["callers"] = Value::from(callers);
    }
}
