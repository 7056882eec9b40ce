//! Code the server reports as inactive for this build configuration (`#[cfg(feature =
//! "serde")]` in Rust): it has no meaning to the server, so navigation there answers nothing
//! and a rename cannot reach it. Answers say so instead of an unexplained empty result.

use std::path::Path;

use cc_lsp_client::LanguageServer;

/// rust-analyzer's diagnostic code for code under a disabled `#[cfg]`.
const INACTIVE_CODE: &str = "inactive-code";

/// Why 0-based `line0` of `path` is inactive, when the server has said so: `inactive for
/// this configuration: feature = "serde" is disabled`. A Rust file whose `mod` declaration is
/// inactive is not analyzed at all: the declaration's reason is given.
pub async fn reason(server: &LanguageServer, path: &Path, line0: u64) -> Option<String> {
    if let Some(why) = inactive_at(server, path, line0).await {
        return Some(why);
    }
    if server.family() != "rust" {
        return None;
    }
    let (parent, line) = module_declaration(path)?;
    let why = inactive_at(server, &parent, line).await?;
    Some(format!(
        "{why} (its module is declared inactive in {}:{})",
        parent.file_name()?.to_string_lossy(),
        line + 1
    ))
}

/// Where the Rust module file `path` is declared: the parent module's file and the 0-based
/// line of `mod name;`.
fn module_declaration(path: &Path) -> Option<(std::path::PathBuf, u64)> {
    let stem = path.file_stem()?.to_str()?;
    let dir = path.parent()?;
    let (name, parents) = if stem == "mod" {
        let name = dir.file_name()?.to_str()?;
        let up = dir.parent()?;
        (
            name,
            vec![
                up.join("lib.rs"),
                up.join("main.rs"),
                up.join("mod.rs"),
                up.with_extension("rs"),
            ],
        )
    } else {
        (
            stem,
            vec![
                dir.join("lib.rs"),
                dir.join("main.rs"),
                dir.join("mod.rs"),
                dir.with_extension("rs"),
            ],
        )
    };
    for parent in parents {
        let Ok(text) = std::fs::read_to_string(&parent) else {
            continue;
        };
        let line = text.lines().position(|line| {
            let line = line
                .trim_start()
                .trim_start_matches("pub ")
                .trim_start_matches("pub ");
            line.strip_prefix("mod ")
                .and_then(|rest| rest.strip_prefix(name))
                .is_some_and(|rest| rest.trim_start().starts_with(';'))
        });
        if let Some(line) = line {
            return Some((parent, u64::try_from(line).ok()?));
        }
    }
    None
}

/// The inactive-code diagnostic of the server that covers 0-based `line0` of `path`.
async fn inactive_at(server: &LanguageServer, path: &Path, line0: u64) -> Option<String> {
    let text = match server.synced_text(path) {
        Some(text) => text,
        None => std::fs::read_to_string(path).ok()?,
    };
    let family = server.family().to_owned();
    let ticket = server.sync(path, &text, &family).ok()?;
    let _ = server.diagnostics(&ticket).await;
    let line = u32::try_from(line0 + 1).ok()?;
    server
        .last_known(path)?
        .into_iter()
        .find(|d| d.code.as_deref() == Some(INACTIVE_CODE) && d.line <= line && line <= d.end_line)
        .map(|d| {
            let why = d
                .message
                .split_once(": ")
                .map_or(d.message.as_str(), |(_, why)| why);
            format!("inactive for this configuration: {why}")
        })
}
