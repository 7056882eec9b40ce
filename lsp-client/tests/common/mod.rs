//! Helpers shared by the integration tests: fixtures, supervisors with lenient caps, and
//! process-table checks.
#![allow(dead_code)]

pub mod fake;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cc_lsp_client::{CheckOutcome, Diagnostic, Ledger, LspConfig, Supervisor, SupervisorOptions};

pub struct Fixture {
    pub _dir: tempfile::TempDir,
    pub ws: PathBuf,
    pub sup: Arc<Supervisor>,
}

/// A workspace with `files`, and a supervisor configured by `config` (an `[lsp]` TOML
/// document). Caps are generous: machines running the suite are loaded.
pub fn fixture(files: &[(&str, &str)], config: &str) -> Fixture {
    fixture_with(files, config, SupervisorOptions::default())
}

pub fn fixture_with(files: &[(&str, &str)], config: &str, options: SupervisorOptions) -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let ws = dir.path().canonicalize().expect("canonical");
    for (name, content) in files {
        let path = ws.join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, content).expect("write fixture");
    }
    let table: toml::Table = config.parse().expect("config toml");
    let lsp = match table.get("lsp") {
        Some(section) => LspConfig::from_toml(section).expect("config"),
        None => LspConfig::default(),
    };
    let sup = Supervisor::new(&ws, lsp.table().expect("table"), options);
    Fixture { _dir: dir, ws, sup }
}

/// Lenient caps for every family, plus `extra` TOML lines.
pub fn lenient(families: &[&str], extra: &str) -> String {
    let mut out = String::new();
    for family in families {
        out.push_str(&format!(
            "[lsp.{family}]\ntimeout_ms = 60000\nindexing_timeout_ms = 120000\n"
        ));
    }
    out.push_str(extra);
    out
}

pub async fn check(sup: &Supervisor, path: &Path) -> CheckOutcome {
    let mut checks = sup.check_written(&[path.to_path_buf()]).await;
    assert_eq!(checks.len(), 1);
    checks.remove(0).outcome
}

/// Writes `content` and returns the file's errors and warnings, panicking unless checked.
pub async fn write_and_check(sup: &Supervisor, path: &Path, content: &str) -> Vec<Diagnostic> {
    std::fs::write(path, content).expect("write");
    match check(sup, path).await {
        CheckOutcome::Checked { diagnostics, .. } => diagnostics
            .into_iter()
            .filter(Diagnostic::is_problem)
            .collect(),
        other => panic!("expected diagnostics for {}, got {other:?}", path.display()),
    }
}

/// The four-step scenario of the issue: an error is new; moved down four lines it is not;
/// fixed nothing is new; broken again it is new again.
pub async fn new_moved_fixed_broken(
    fixture: &Fixture,
    file: &str,
    bad: &str,
    moved: &str,
    good: &str,
    expected: &str,
) {
    let path = fixture.ws.join(file);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let mut ledger = Ledger::default();
    let find = |list: &[Diagnostic]| list.iter().find(|d| d.message.contains(expected)).cloned();

    let all = write_and_check(&fixture.sup, &path, bad).await;
    let new = ledger.update(&path, all.clone());
    let first = find(&new).unwrap_or_else(|| panic!("`{expected}` is not new in {all:#?}"));

    let all = write_and_check(&fixture.sup, &path, moved).await;
    let moved_diag =
        find(&all).unwrap_or_else(|| panic!("`{expected}` vanished after the move: {all:#?}"));
    assert_eq!(moved_diag.line, first.line + 4, "moved down four lines");
    let new = ledger.update(&path, all);
    assert!(new.is_empty(), "nothing is new after a move, got {new:#?}");

    let all = write_and_check(&fixture.sup, &path, good).await;
    assert!(find(&all).is_none(), "fixed, yet still reported: {all:#?}");
    let new = ledger.update(&path, all);
    assert!(new.is_empty(), "nothing is new after the fix, got {new:#?}");

    let all = write_and_check(&fixture.sup, &path, bad).await;
    let new = ledger.update(&path, all.clone());
    assert!(find(&new).is_some(), "`{expected}` is new again: {all:#?}");
}

/// Pids of live processes whose process group is `pgid`.
pub fn group_members(pgid: u32) -> Vec<u32> {
    let mut members = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return members;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the command (which may hold spaces) start after the last ')'.
        let Some(rest) = stat.rsplit_once(')').map(|(_, rest)| rest) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // fields[0] = state, fields[2] = pgrp.
        if fields.get(2).and_then(|g| g.parse::<u32>().ok()) == Some(pgid) && fields[0] != "Z" {
            members.push(pid);
        }
    }
    members
}

/// Waits (up to 10 s) until no live process is left in group `pgid`.
pub async fn assert_group_gone(pgid: u32) {
    for _ in 0..100 {
        if group_members(pgid).is_empty() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!(
        "processes of group {pgid} survived: {:?}",
        group_members(pgid)
    );
}

/// Shuts the supervisor down and checks that every server it ran is gone with its group.
pub async fn shutdown_and_check(sup: &Supervisor) {
    let pids: Vec<u32> = sup.running().iter().filter_map(|s| s.pid()).collect();
    sup.shutdown().await;
    for pid in pids {
        assert_group_gone(pid).await;
    }
}
