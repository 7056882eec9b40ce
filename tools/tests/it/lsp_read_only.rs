//! Read-only surfaces (`plan`, `readonly_subagent`) run no workspace code: language servers
//! start without build scripts, proc macros, the project's own interpreter or TypeScript,
//! and a project check that would build the project is refused. Each case plants a marker
//! in what the workspace would run, on a real project from the registries, and checks it
//! stays untouched on the read-only surface — and is touched on the full surface, which
//! shows that the test would see it.
#![allow(clippy::unwrap_used)]

use crate::lsp_support;

use std::path::{Path, PathBuf};

use cc_test_support::require_peer;
use cc_tools::Surface;
use lsp_support::Setup;
use serde_json::{json, Value};

/// A folder outside the workspace for markers.
fn markers() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn setup(surface: Surface) -> Setup<'static> {
    Setup {
        surface,
        ..Setup::default()
    }
}

fn ok(result: &Value) {
    assert!(result.get("error").is_none(), "{result:#}");
}

/// A `.venv/bin/python` that leaves `marker` behind, then runs the real interpreter.
fn plant_python(ws: &Path, marker: &Path) {
    let real = cc_process::find_on_path("python3").unwrap();
    let bin = ws.join(".venv/bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(
        ws.join(".venv/pyvenv.cfg"),
        format!("home = {}\n", real.parent().unwrap().display()),
    )
    .unwrap();
    let script = format!(
        "#!/bin/sh\ntouch {}\nexec {} \"$@\"\n",
        marker.display(),
        real.display()
    );
    for name in ["python", "python3"] {
        let path = bin.join(name);
        std::fs::write(&path, &script).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

async fn hover(project: &lsp_support::Project, file: &str, line_of: &str, symbol: &str) -> Value {
    let line = project
        .read(file)
        .lines()
        .position(|l| l.contains(line_of))
        .unwrap()
        + 1;
    project
        .lsp(json!({"action": "hover", "file": file, "line": line, "symbol": symbol}))
        .await
}

#[tokio::test]
async fn python_servers_never_run_the_projects_own_interpreter_on_a_read_only_surface() {
    if require_peer("basedpyright-langserver").is_none() {
        return;
    }
    for (surface, expect_run) in [(Surface::Plan, false), (Surface::Full, true)] {
        let dir = markers();
        let marker = dir.path().join("python-ran");
        let Some(project) = setup(surface).real("requests", &[]) else {
            return;
        };
        plant_python(&project.ws, &marker);
        let out = hover(&project, "src/requests/api.py", "def request(", "request").await;
        ok(&out);
        assert!(
            out["hover"].as_str().unwrap().contains("request"),
            "{out:#}"
        );
        if surface == Surface::Plan {
            let status = project.lsp(json!({"action": "status"})).await;
            assert_eq!(status["trust"], "read_only", "{status:#}");
            let checked = project
                .lsp(json!({"action": "diagnostics", "file": "*", "language": "python"}))
                .await;
            ok(&checked);
        }
        assert_eq!(
            marker.exists(),
            expect_run,
            "{surface:?}: the workspace's python {}",
            if expect_run {
                "was not run (the test would not see it)"
            } else {
                "ran"
            }
        );
        project.shutdown().await;
    }
}

/// Puts a line at the start of semver's build script that leaves `marker` behind.
fn plant_build_script(ws: &Path, marker: &Path) {
    let path = ws.join("build.rs");
    let text = std::fs::read_to_string(&path).unwrap();
    let planted = text.replacen(
        "fn main() {",
        &format!(
            "fn main() {{\n    let _ = std::fs::write({:?}, \"ran\");",
            marker.display().to_string()
        ),
        1,
    );
    assert_ne!(planted, text);
    std::fs::write(&path, planted).unwrap();
}

#[tokio::test]
async fn rust_analyzer_runs_no_build_script_and_cargo_check_is_refused_on_a_read_only_surface() {
    if require_peer("rust-analyzer").is_none() {
        return;
    }
    let dir = markers();
    let marker = dir.path().join("build-script-ran");
    let Some(project) = setup(Surface::ReadonlySubagent).real("semver", &[]) else {
        return;
    };
    plant_build_script(&project.ws, &marker);
    let out = hover(&project, "src/lib.rs", "pub struct Version {", "Version").await;
    ok(&out);
    let file = project
        .lsp(json!({"action": "diagnostics", "file": "src/eval.rs"}))
        .await;
    ok(&file);
    let refused = project
        .lsp(json!({"action": "diagnostics", "file": "*", "language": "rust"}))
        .await;
    assert_eq!(
        refused["error"]["kind"], "needs_full_surface",
        "{refused:#}"
    );
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("build scripts"),
        "{refused:#}"
    );
    assert!(
        !marker.exists(),
        "the build script ran on a read-only surface"
    );
    project.shutdown().await;

    // The full surface does build the project: the marker shows the test would see it.
    let Some(project) = setup(Surface::Full).real("semver", &[]) else {
        return;
    };
    plant_build_script(&project.ws, &marker);
    let checked = project
        .lsp(json!({"action": "diagnostics", "file": "*", "language": "rust"}))
        .await;
    ok(&checked);
    assert!(
        marker.exists(),
        "cargo check on the full surface ran no build script?"
    );
    project.shutdown().await;
}

/// A `node_modules/typescript` in the workspace whose tsserver leaves `marker` behind, then
/// loads the real one.
fn plant_typescript(ws: &Path, marker: &Path) -> PathBuf {
    let real = cc_process::find_on_path("tsc")
        .and_then(|tsc| tsc.canonicalize().ok())
        .and_then(|tsc| {
            tsc.ancestors()
                .find(|d| d.file_name().is_some_and(|n| n == "typescript"))
                .map(Path::to_path_buf)
        })
        .unwrap();
    let fake = ws.join("node_modules/typescript");
    std::fs::create_dir_all(fake.join("lib")).unwrap();
    std::fs::copy(real.join("package.json"), fake.join("package.json")).unwrap();
    std::fs::write(
        fake.join("lib/tsserver.js"),
        format!(
            "require('fs').writeFileSync({:?}, 'ran');\nrequire({:?});\n",
            marker.display().to_string(),
            real.join("lib/tsserver.js").display().to_string()
        ),
    )
    .unwrap();
    fake
}

#[tokio::test]
async fn typescript_server_never_runs_the_projects_own_typescript_on_a_read_only_surface() {
    if require_peer("typescript-language-server").is_none() {
        return;
    }
    for (surface, expect_run) in [(Surface::Plan, false), (Surface::Full, true)] {
        let dir = markers();
        let marker = dir.path().join("tsserver-ran");
        let Some(project) = setup(surface).real("zod", &[]) else {
            return;
        };
        plant_typescript(&project.ws, &marker);
        let out = hover(
            &project,
            "src/v4/core/util.ts",
            "export function assignProp",
            "assignProp",
        )
        .await;
        ok(&out);
        assert_eq!(
            marker.exists(),
            expect_run,
            "{surface:?}: the workspace's tsserver {}",
            if expect_run {
                "was not run (the test would not see it)"
            } else {
                "ran"
            }
        );
        project.shutdown().await;
    }
}

/// intelephense reads PHP files and runs nothing of the workspace (no composer script, no
/// `php`), and `php -l` only parses: both are offered as they are on a read-only surface.
#[tokio::test]
async fn php_server_and_checker_are_offered_on_a_read_only_surface() {
    if require_peer("intelephense").is_none() || require_peer("php").is_none() {
        return;
    }
    let composer = [("composer.json", "{\"name\": \"symfony/console\"}\n")];
    let Some(project) = setup(Surface::Plan).real("symfony-console", &composer) else {
        return;
    };
    let out = hover(
        &project,
        "Formatter/OutputFormatter.php",
        "public static function escape(string $text)",
        "escape",
    )
    .await;
    ok(&out);
    assert!(out.to_string().contains("escape"), "{out:#}");
    let checked = project
        .lsp(json!({"action": "diagnostics", "file": "*", "language": "php"}))
        .await;
    ok(&checked);
    assert_eq!(checked["checks"][0]["errors"], 0, "{checked:#}");
    project.shutdown().await;
}

/// JDT LS imports no Gradle or Maven build on any surface (those run build scripts): its
/// project comes from the sources' package lines, so it is offered on a read-only surface as
/// it is, and the project's tree is left as it was.
#[tokio::test]
async fn java_server_is_offered_on_a_read_only_surface_and_writes_nothing_in_the_tree() {
    if require_peer("jdtls").is_none() {
        return;
    }
    let Some(project) = setup(Surface::Plan).real("expo-modules-core", &[]) else {
        return;
    };
    let before = lsp_support::tree(&project.ws);
    let out = hover(
        &project,
        "android/src/main/java/expo/modules/core/ModuleRegistry.java",
        "public <T> T getModule(Class<T> interfaceClass)",
        "getModule",
    )
    .await;
    ok(&out);
    assert!(out.to_string().contains("getModule"), "{out:#}");
    let status = project.lsp(json!({"action": "status"})).await;
    assert!(status.to_string().contains("jdtls"), "{status:#}");
    assert!(lsp_support::tree(&project.ws) == before, "the tree changed");
    project.shutdown().await;
}
