//! `cc-harness list` and `cc-harness call`: output and exit statuses.

#![allow(clippy::unwrap_used)] // Tests unwrap freely: a panic is a failure.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

fn harness(args: &[&str], root: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cc-harness"))
        .args(args)
        .arg("--root")
        .arg(root)
        .output()
        .expect("run cc-harness")
}

/// `cc-harness status --json`, which must succeed.
fn status_json(root: &std::path::Path) -> Value {
    let output = harness(&["status", "--json"], root);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\nbeta\n").unwrap();
    dir
}

#[test]
fn list_on_plan_shows_no_write_or_exec_tool() {
    let dir = fixture();
    let output = harness(&["list", "--surface", "plan", "--json"], dir.path());
    assert!(output.status.success());
    let tools: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap();
    assert!(!tools.is_empty());
    for tool in &tools {
        assert_eq!(tool["tier"], "read", "{tool}");
    }
    let text = harness(&["list", "--surface", "plan"], dir.path());
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("read [read]"));
    assert!(
        !text.contains("[write]") && !text.contains("[exec]"),
        "{text}"
    );

    let full = harness(&["list", "--json"], dir.path());
    let full: Vec<Value> = serde_json::from_slice(&full.stdout).unwrap();
    assert!(full.iter().any(|tool| tool["tier"] == "write"));
}

#[test]
fn call_prints_the_result_and_exits_zero() {
    let dir = fixture();
    let output = harness(
        &["call", "read", r#"{"path": "a.txt", "offset": 2}"#],
        dir.path(),
    );
    assert_eq!(output.status.code(), Some(0));
    let value: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(value["content"], "beta\n");
}

#[test]
fn call_of_a_failing_tool_exits_one_with_the_error_on_stdout() {
    let dir = fixture();
    let output = harness(
        &["call", "write", r#"{"path": "../out.txt", "content": "x"}"#],
        dir.path(),
    );
    assert_eq!(output.status.code(), Some(1));
    let value: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(value["error"]["kind"], "outside_root");
    assert!(value["error"]["message"]
        .as_str()
        .unwrap()
        .contains("outside"));

    let plan = harness(
        &[
            "call",
            "write",
            r#"{"path": "b.txt", "content": "x"}"#,
            "--surface",
            "plan",
        ],
        dir.path(),
    );
    assert_eq!(plan.status.code(), Some(1));
    let value: Value = serde_json::from_slice(&plan.stdout).unwrap();
    assert_eq!(value["error"]["kind"], "not_available");
    assert!(!dir.path().join("b.txt").exists());
}

#[test]
fn usage_errors_exit_two() {
    let dir = fixture();
    let bad_json = harness(&["call", "read", "{not json"], dir.path());
    assert_eq!(bad_json.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad_json.stderr).contains("not valid JSON"));
    let bad_surface = harness(&["list", "--surface", "admin"], dir.path());
    assert_eq!(bad_surface.status.code(), Some(2));
    let missing_root = Command::new(env!("CARGO_BIN_EXE_cc-harness"))
        .args(["call", "read", "{}", "--root", "/definitely/not/here"])
        .output()
        .unwrap();
    assert_eq!(missing_root.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing_root.stderr).contains("not usable"));
}

#[test]
fn mcp_exits_soon_after_its_input_ends() {
    let dir = fixture();
    let mut child = Command::new(env!("CARGO_BIN_EXE_cc-harness"))
        .args(["mcp", "--root"])
        .arg(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        writeln!(
            stdin,
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"read","arguments":{{"path":"a.txt"}}}}}}"#
        )
        .unwrap();
    }
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "cc-harness mcp still running 5 s after its input ended"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success());
    let mut stdout = String::new();
    use std::io::Read;
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let response: Value = serde_json::from_str(stdout.lines().next().unwrap()).unwrap();
    assert_eq!(response["id"], 1);
    assert_eq!(
        response["result"]["structuredContent"]["content"],
        "alpha\nbeta\n"
    );
}

#[test]
fn status_mentions_the_code_graph_and_its_index() {
    let dir = fixture();
    let cache = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".cc")).unwrap();
    std::fs::write(
        dir.path().join(".cc/tools.toml"),
        format!(
            "[graph]\ncache_dir = {:?}\n",
            cache.path().display().to_string()
        ),
    )
    .unwrap();
    let status = status_json(dir.path());
    let graph = &status["families"]["code graph"];
    assert_eq!(graph["available"], true, "{graph}");
    assert_eq!(graph["index_exists"], false);
    assert!(graph["index_path"]
        .as_str()
        .unwrap()
        .starts_with(&*cache.path().to_string_lossy()));
    assert!(graph["languages"]
        .as_array()
        .unwrap()
        .iter()
        .any(|l| l == "python"));
    let text = harness(&["status"], dir.path());
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("code graph (graph): available: no index yet"),
        "{text}"
    );
    // Each indexer of the precise tier: where it is, or why not and how to install it. A
    // PATH without the peers has no scip-python.
    let precise = &graph["precise"]["scip-python"];
    assert_eq!(precise["languages"][0], "python", "{graph}");
    let bare = Command::new(env!("CARGO_BIN_EXE_cc-harness"))
        .args(["status", "--json", "--root"])
        .arg(dir.path())
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    let bare: Value = serde_json::from_slice(&bare.stdout).unwrap();
    let missing = &bare["families"]["code graph"]["precise"]["scip-python"];
    assert_eq!(missing["available"], false, "{missing}");
    assert!(
        missing["reason"]
            .as_str()
            .unwrap()
            .contains("npm install -g @sourcegraph/scip-python"),
        "{missing}"
    );
    assert!(text.contains("precise tier"), "{text}");
    // `[graph] precise = false` turns the tier off, and status says so.
    std::fs::write(
        dir.path().join(".cc/tools.toml"),
        format!(
            "[graph]\ncache_dir = {:?}\nprecise = false\n",
            cache.path().display().to_string()
        ),
    )
    .unwrap();
    let off = status_json(dir.path());
    assert_eq!(
        off["families"]["code graph"]["precise"],
        "off ([graph] precise = false)"
    );
    // A broken [graph] section is reported, not hidden.
    std::fs::write(dir.path().join(".cc/tools.toml"), "[graph]\ncache = 1\n").unwrap();
    let output = harness(&["status", "--json"], dir.path());
    let status: Value = serde_json::from_slice(&output.stdout).unwrap();
    let graph = &status["families"]["code graph"];
    assert_eq!(graph["available"], false);
    assert!(
        graph["reason"]
            .as_str()
            .unwrap()
            .contains("unknown key `cache`"),
        "{graph}"
    );
}

/// A broken section of each family is said the same way: `status` shows it as the family's
/// `broken`, and a call of that family fails with the same words (the tool is not hidden and
/// the defaults are not used).
#[test]
fn a_broken_section_of_each_family_is_reported_the_same_way() {
    let dir = fixture();
    std::fs::write(dir.path().join("a.py"), "x = 1\n").unwrap();
    std::fs::create_dir_all(dir.path().join(".cc")).unwrap();
    std::fs::write(
        dir.path().join(".cc/tools.toml"),
        "[lsp.pyhton]\nenabled = false\n[debug]\nttl = 5\n[kernel]\npyhton = \"x\"\n\
         [graph]\ncache = 1\n[structural]\ntree_cache = 1\n",
    )
    .unwrap();
    let status = status_json(dir.path());
    let text = String::from_utf8(harness(&["status"], dir.path()).stdout).unwrap();
    for (family, section, needle, tool, args) in [
        (
            "language servers",
            "lsp",
            "not a built-in family",
            "lsp",
            r#"{"action": "diagnostics", "file": "a.py"}"#,
        ),
        (
            "debugger",
            "debug",
            "unknown key `ttl`",
            "debug",
            r#"{"op": "launch", "program": "a.py"}"#,
        ),
        (
            "kernels",
            "kernel",
            "pyhton",
            "eval",
            r#"{"code": "1", "description": "a cell"}"#,
        ),
        (
            "code graph",
            "graph",
            "unknown key `cache`",
            "graph",
            r#"{"action": "symbols", "query": "x"}"#,
        ),
        (
            "structural",
            "structural",
            "unknown field `tree_cache`",
            "ast_grep",
            r#"{"pattern": "x", "language": "python"}"#,
        ),
    ] {
        let entry = &status["families"][family];
        assert_eq!(entry["available"], false, "{family}: {entry}");
        let broken = entry["broken"]
            .as_str()
            .unwrap_or_else(|| panic!("{entry}"));
        let prefix = format!("[{section}] in .cc/tools.toml: ");
        assert!(broken.starts_with(&prefix), "{broken}");
        assert!(broken.contains(needle), "{broken}");
        assert!(
            broken.contains(&format!("; fix the [{section}] section and ")),
            "{broken}"
        );
        assert!(
            text.contains(broken),
            "{family} not in the text status:\n{text}"
        );
        let call = harness(&["call", tool, args], dir.path());
        assert_eq!(call.status.code(), Some(1), "{tool}");
        let value: Value = serde_json::from_slice(&call.stdout).unwrap();
        let message = value["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(broken), "{tool}: {value}");
        // The kernels keep the kind their crate has always given a broken configuration.
        let kind = if tool == "eval" {
            "misconfigured"
        } else {
            "invalid_config"
        };
        assert_eq!(value["error"]["kind"], kind, "{tool}: {value}");
    }
}

/// Issue 31: `[lsp.python] interpreter` is the project's Python for every mechanism; the
/// kernels run it (status says so) unless `[kernel] python` names another.
#[test]
fn the_configured_project_python_is_the_kernels_too() {
    use std::os::unix::fs::PermissionsExt;
    let dir = fixture();
    let python = dir.path().join("envs/project/bin/python");
    std::fs::create_dir_all(python.parent().unwrap()).unwrap();
    std::fs::write(&python, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::create_dir_all(dir.path().join(".cc")).unwrap();
    let config = dir.path().join(".cc/tools.toml");
    std::fs::write(
        &config,
        "[lsp.python]\ninterpreter = \"envs/project/bin/python\"\n",
    )
    .unwrap();
    let interpreter = |status: &Value| status["families"]["kernels"]["kernels"][0].clone();
    let kernel = interpreter(&status_json(dir.path()));
    assert_eq!(kernel["available"], true, "{kernel}");
    assert_eq!(
        kernel["interpreter"].as_str(),
        Some(python.to_str().unwrap()),
        "{kernel}"
    );
    std::fs::write(
        &config,
        "[lsp.python]\ninterpreter = \"envs/project/bin/python\"\n[kernel]\npython = \"/bin/sh\"\n",
    )
    .unwrap();
    let kernel = interpreter(&status_json(dir.path()));
    assert_eq!(kernel["interpreter"], "/bin/sh", "{kernel}");
}
