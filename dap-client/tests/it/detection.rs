//! Detection (marker AND binary resolves AND runs), the python choice for debugpy, the
//! `dart` entry on a machine without the Dart SDK, and the launch request each adapter gets.

#![allow(clippy::unwrap_used)]

use cc_dap_client::testing as support;

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use cc_dap_client::detect::{path_without, pick_python, AdapterStatus, Environment};
use cc_dap_client::report::ProgramState;
use cc_dap_client::{launch_arguments, AdapterKind, DebugConfig, DebugSession};

fn root() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    (dir, root)
}

fn script(path: &Path, body: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A Python project whose `app.py` keeps `sys.prefix` in `prefix` (line 3 prints it).
fn prefix_app() -> (tempfile::TempDir, PathBuf) {
    let (dir, root) = root();
    std::fs::write(root.join("pyproject.toml"), "[project]\nname = \"app\"\n").unwrap();
    std::fs::write(
        root.join("app.py"),
        "import sys\nprefix = sys.prefix\nprint('prefix', prefix)\n",
    )
    .unwrap();
    (dir, root)
}

async fn status_of(debug: &DebugSession, name: &str) -> AdapterStatus {
    debug
        .adapters()
        .await
        .adapters
        .into_iter()
        .find(|a| a.name == name)
        .unwrap()
}

#[tokio::test]
async fn dart_with_its_marker_but_no_sdk_says_what_is_missing() {
    let (_dir, root) = root();
    std::fs::write(root.join("pubspec.yaml"), "name: app\n").unwrap();
    std::fs::create_dir_all(root.join("bin")).unwrap();
    std::fs::write(root.join("bin/main.dart"), "void main() {}\n").unwrap();
    let path = path_without(&std::env::var_os("PATH").unwrap_or_default(), "dart");
    let debug = DebugSession::new(&root, DebugConfig::default()).with_search_path(path);
    let dart = status_of(&debug, "dart").await;
    assert_eq!(dart.markers_found, ["pubspec.yaml"]);
    assert!(!dart.available && !dart.launchable);
    assert_eq!(dart.command, None);
    let reason = dart.reason.unwrap();
    assert!(reason.contains("no `dart` on PATH"), "{reason}");
    assert!(reason.contains("install the Dart SDK"), "{reason}");
    assert!(
        !reason.contains("marker"),
        "the marker half is present: {reason}"
    );

    // Launching a .dart program picks dart and says why it cannot start.
    let error = debug
        .launch(&root.join("bin/main.dart"), &[], None)
        .await
        .unwrap_err();
    assert_eq!(error.kind(), "adapter_unavailable", "{error}");
    assert!(
        error
            .to_string()
            .contains("`dart` debug adapter is not available"),
        "{error}"
    );
    assert_eq!(debug.status().await.position.state, ProgramState::None);
}

#[test]
fn the_launch_request_of_each_adapter() {
    let cwd = Path::new("/work/app");
    let args = ["--verbose".to_owned(), "input.txt".to_owned()];
    let dart = launch_arguments(
        AdapterKind::Dart,
        &cwd.join("bin/main.dart"),
        &args,
        cwd,
        None,
    );
    insta::assert_json_snapshot!("dart_launch_request", dart);
    let debugpy = launch_arguments(AdapterKind::Debugpy, &cwd.join("app.py"), &args, cwd, None);
    insta::assert_json_snapshot!("debugpy_launch_request", debugpy);
    let extra: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(r#"{"justMyCode": false, "env": {"X": "1"}}"#).unwrap();
    let overridden = launch_arguments(
        AdapterKind::Debugpy,
        &cwd.join("app.py"),
        &[],
        cwd,
        Some(&extra),
    );
    assert_eq!(overridden["justMyCode"], false);
    assert_eq!(overridden["env"]["X"], "1");
    let delve = launch_arguments(AdapterKind::Delve, cwd, &[], cwd, None);
    assert_eq!(
        (delve["mode"].as_str(), delve["program"].as_str()),
        (Some("debug"), Some("/work/app"))
    );
}

#[tokio::test]
async fn markers_and_commands_follow_the_overrides() {
    let (_dir, root) = root();
    let bin = root.join("tools-bin");
    script(&bin.join("lldb-dap-17"), "exit 0");
    script(&bin.join("lldb-dap-19"), "exit 0");
    script(&bin.join("lldb-vscode-14"), "exit 0");
    script(
        &bin.join("broken-dap"),
        "echo 'component not installed' >&2; exit 1",
    );
    std::fs::write(root.join("CMakeLists.txt"), "").unwrap();
    let search: OsString = bin.clone().into_os_string();

    // The default table: the highest versioned lldb-dap wins.
    let debug = DebugSession::new(&root, DebugConfig::default()).with_search_path(search.clone());
    let lldb = status_of(&debug, "lldb").await;
    assert!(lldb.available, "{lldb:?}");
    assert_eq!(
        lldb.command.unwrap(),
        [bin.join("lldb-dap-19").display().to_string()]
    );

    // Overrides: other markers, and a command that resolves but does not run.
    let section: toml::Value = toml::Value::Table(
        "[lldb]\ncommand = [\"broken-dap\"]\nmarkers = [\"meson.build\"]\n"
            .parse()
            .unwrap(),
    );
    let config = <DebugConfig as serde::Deserialize>::deserialize(section).unwrap();
    let debug = DebugSession::new(&root, config).with_search_path(search);
    let lldb = status_of(&debug, "lldb").await;
    assert!(!lldb.available && !lldb.launchable);
    assert_eq!(lldb.markers, ["meson.build"]);
    let reason = lldb.reason.unwrap();
    assert!(reason.contains("no root marker (meson.build)"), "{reason}");
    assert!(
        reason.contains("does not run") && reason.contains("component not installed"),
        "{reason}"
    );
}

#[tokio::test]
async fn an_invalid_debug_section_is_reported_and_refuses_launch() {
    let (_dir, root) = root();
    std::fs::create_dir_all(root.join(".cc")).unwrap();
    std::fs::write(root.join(".cc/tools.toml"), "[debug]\nttl = 5\n").unwrap();
    std::fs::write(root.join("a.py"), "pass\n").unwrap();
    // What the host does with the file's section.
    let text = std::fs::read_to_string(root.join(".cc/tools.toml")).unwrap();
    let table: toml::Table = text.parse().unwrap();
    let error =
        <DebugConfig as serde::Deserialize>::deserialize(table["debug"].clone()).unwrap_err();
    let place = cc_workspace::SettingsPlace::new("debug").in_file(".cc/tools.toml");
    let debug = DebugSession::broken(&root, cc_workspace::BrokenSection::new(place, error));
    let report = debug.adapters().await;
    let error = report.config_error.unwrap();
    assert!(
        error.contains("unknown key `ttl`") && error.contains("tools.toml"),
        "{error}"
    );
    let refused = debug
        .launch(&root.join("a.py"), &[], None)
        .await
        .unwrap_err();
    assert_eq!(refused.kind(), "invalid_config", "{refused}");
}

/// No Python here can import debugpy (the checkout's `.venv/bin/python` lacks it, and so
/// does every python on PATH): each is named, with the fix for the project's.
#[tokio::test]
async fn no_python_with_debugpy_names_each_and_the_fix() {
    let (_dir, root) = root();
    std::fs::write(root.join("requirements.txt"), "").unwrap();
    script(
        &root.join(".venv/bin/python"),
        "[ \"$1\" = -c ] && exit 1; exit 0",
    );
    std::fs::write(root.join(".venv/pyvenv.cfg"), "home = /usr/bin\n").unwrap();
    script(
        &root.join("bin/python3"),
        "[ \"$1\" = -c ] && exit 1; exit 0",
    );
    let debug = DebugSession::new(&root, DebugConfig::default())
        .with_search_path(root.join("bin").into_os_string());
    let debugpy = status_of(&debug, "debugpy").await;
    assert!(!debugpy.available);
    let reason = debugpy.reason.unwrap();
    let venv_python = root.join(".venv/bin/python").display().to_string();
    let path_python = root.join("bin/python3").display().to_string();
    assert!(
        reason.contains(&format!("`{venv_python}` ("))
            && reason.contains(&format!("`{path_python}` (")),
        "{reason}"
    );
    assert!(
        reason.contains(&format!(
            "install it with `{venv_python} -m pip install debugpy`"
        )),
        "{reason}"
    );
}

/// The program's interpreter: the checkout's `.venv/bin/python`, else `venv/bin/python`
/// (environments: folders with `pyvenv.cfg`), else `python3` on PATH.
#[test]
fn debugpy_prefers_the_checkouts_venvs_to_path() {
    let cases: [(&[&str], &str); 3] = [
        (
            &[".venv/bin/python", "venv/bin/python", "bin/python3"],
            ".venv/bin/python",
        ),
        (&["venv/bin/python", "bin/python3"], "venv/bin/python"),
        (&["bin/python3"], "bin/python3"),
    ];
    for (present, chosen) in cases {
        let (_dir, root) = root();
        for python in present {
            script(&root.join(python), "exit 0");
            if let Some(venv) = python.strip_suffix("/bin/python") {
                std::fs::write(root.join(venv).join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
            }
        }
        let mut env = Environment::new(&root);
        env.search_path = root.join("bin").into_os_string();
        assert_eq!(pick_python(&env), Ok(root.join(chosen)), "{present:?}");
        // The host's `[lsp.python] interpreter` comes first.
        script(&root.join("envs/p/bin/python"), "exit 0");
        env.python = Some("envs/p/bin/python".into());
        assert_eq!(pick_python(&env), Ok(root.join("envs/p/bin/python")));
    }
}

/// The checkout's `.venv/bin/python` has debugpy and PATH's python does not: debugpy is
/// available, runs on the venv's interpreter, and the program sees the venv.
#[tokio::test]
async fn debugpy_runs_on_the_checkouts_venv() {
    let Some(peer_python) = cc_test_support::require_peer("python3") else {
        return;
    };
    let site = std::process::Command::new(&peer_python)
        .args([
            "-c",
            "import debugpy, os; print(os.path.dirname(os.path.dirname(debugpy.__file__)))",
        ])
        .output()
        .unwrap();
    if !site.status.success() {
        cc_test_support::missing_peer("debugpy", "the peers' python3 cannot import debugpy");
        return;
    }
    let site = String::from_utf8(site.stdout).unwrap().trim().to_owned();
    // PATH for the debugger: system directories whose python3 lacks debugpy.
    let system_path = OsString::from("/usr/bin:/bin");
    let system_python = std::process::Command::new("/usr/bin/python3")
        .args(["-c", "import debugpy"])
        .env("PATH", &system_path)
        .stderr(std::process::Stdio::null())
        .status();
    if !system_python.is_ok_and(|s| !s.success()) {
        cc_test_support::missing_peer(
            "python3 without debugpy",
            "/usr/bin/python3 is needed as PATH's python without debugpy",
        );
        return;
    }

    let (_dir, root) = prefix_app();
    let tag = support::unique_tag("venv");
    let debug = || {
        DebugSession::new(&root, DebugConfig::default())
            .with_search_path(system_path.clone())
            .with_env(support::TAG_VAR, tag.clone())
    };

    // Without the venv, PATH's python is chosen and it has no debugpy.
    let before = status_of(&debug(), "debugpy").await;
    assert!(!before.available);
    let reason = before.reason.unwrap();
    assert!(
        reason.contains("no Python here can import debugpy")
            && reason.contains("`/usr/bin/python3` ("),
        "{reason}"
    );

    // A real venv (on the peers' interpreter) that sees debugpy through a .pth file.
    let made = std::process::Command::new(&peer_python)
        .args(["-m", "venv", "--without-pip"])
        .arg(root.join(".venv"))
        .status()
        .unwrap();
    assert!(made.success());
    let version = std::process::Command::new(root.join(".venv/bin/python"))
        .args([
            "-c",
            "import sys; print(f'python{sys.version_info[0]}.{sys.version_info[1]}')",
        ])
        .output()
        .unwrap();
    let version = String::from_utf8(version.stdout).unwrap().trim().to_owned();
    std::fs::write(
        root.join(".venv/lib")
            .join(version)
            .join("site-packages/peers.pth"),
        format!("{site}\n"),
    )
    .unwrap();

    let debug = debug();
    let after = status_of(&debug, "debugpy").await;
    assert!(after.available, "{after:?}");
    let venv_python = root.join(".venv/bin/python").display().to_string();
    assert_eq!(after.command.as_ref().unwrap()[0], venv_python);

    debug
        .set_breakpoints(&root.join("app.py"), &[3])
        .await
        .unwrap();
    let started = debug.launch(&root.join("app.py"), &[], None).await.unwrap();
    assert_eq!(started.position.state, ProgramState::Stopped, "{started:?}");
    let prefix = debug.evaluate("prefix", None).await.unwrap();
    assert_eq!(prefix.result, format!("'{}'", root.join(".venv").display()));
    debug.terminate().await;
    support::assert_no_tagged(&tag).await;
}

/// The project's Python runs the program, whatever runs the adapter: with the tools' own
/// environment (which has debugpy) first on PATH, as the README's configuration puts it, a
/// project `.venv` without debugpy runs the program, and without a `.venv` the `python3` on
/// PATH after the tools' environment does; the launch says which and why.
#[tokio::test]
async fn the_program_runs_on_the_projects_python_and_the_adapter_on_the_tools() {
    let Some(tools_python) = support::debugpy_python() else {
        return;
    };
    if !cc_workspace::python::is_tool_environment(&tools_python) {
        cc_test_support::missing_peer(
            "the peers' venv marked as the tools' environment",
            &format!(
                "{} has no {} beside its pyvenv.cfg (cargo xtask peers writes it)",
                tools_python.display(),
                cc_workspace::python::TOOL_ENVIRONMENT_MARKER
            ),
        );
        return;
    }
    let Some(system) = ["/usr/bin/python3", "/bin/python3"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
    else {
        cc_test_support::missing_peer("python3", "no /usr/bin/python3 outside the tools' venv");
        return;
    };
    let tools_bin = tools_python.parent().unwrap().to_path_buf();
    let search = std::env::join_paths([tools_bin.as_path(), system.parent().unwrap()]).unwrap();
    let system_prefix = std::process::Command::new(&system)
        .args(["-c", "import sys; print(sys.prefix)"])
        .output()
        .unwrap();
    let system_prefix = String::from_utf8(system_prefix.stdout)
        .unwrap()
        .trim()
        .to_owned();

    for with_venv in [true, false] {
        let (_dir, root) = prefix_app();
        if with_venv {
            let made = std::process::Command::new(&system)
                .args(["-m", "venv", "--without-pip"])
                .arg(root.join(".venv"))
                .status()
                .unwrap();
            assert!(made.success());
        }
        let tag = support::unique_tag("project-python");
        let debug = DebugSession::new(&root, DebugConfig::default())
            .with_search_path(search.clone())
            .with_env(support::TAG_VAR, tag.clone());
        let status = status_of(&debug, "debugpy").await;
        assert!(status.launchable, "{status:?}");
        assert_eq!(
            status.command.as_ref().unwrap()[0],
            tools_python.display().to_string(),
            "the adapter runs where debugpy is"
        );
        debug
            .set_breakpoints(&root.join("app.py"), &[3])
            .await
            .unwrap();
        let started = debug.launch(&root.join("app.py"), &[], None).await.unwrap();
        assert_eq!(started.position.state, ProgramState::Stopped, "{started:?}");
        let prefix = debug.evaluate("prefix", None).await.unwrap();
        let note = started.note.clone().unwrap_or_default();
        if with_venv {
            assert_eq!(prefix.result, format!("'{}'", root.join(".venv").display()));
            assert!(
                note.contains("python: .venv/bin/python (the project's .venv)"),
                "{note}"
            );
        } else {
            assert_eq!(prefix.result, format!("'{system_prefix}'"));
            assert!(
                note.contains(&format!("python: {}", system.display()))
                    && note.contains("after the tools' own environment"),
                "{note}"
            );
        }
        debug.terminate().await;
        support::assert_no_tagged(&tag).await;
    }
}
