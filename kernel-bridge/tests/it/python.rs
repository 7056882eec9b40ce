//! Python kernels on a real interpreter: state, echo, output capture, rich output, await,
//! IPython idioms, the bridge, the inactivity budget, crashes and reset.

#![allow(clippy::unwrap_used)] // Tests unwrap freely: a panic is a failure.

use crate::common;

use std::time::Duration;

use cc_kernel_bridge::{CellRequest, KernelConfig, Language, StateStatus};
use common::{config, python, python_with, Kernels};

#[tokio::test]
async fn state_persists_and_the_last_expression_is_echoed() {
    let Some(python) = python() else { return };
    let kernels = Kernels::new(config(Some(python)));

    let first = kernels.py("x = 40\nimport math").await;
    assert_eq!(first.result, None);
    assert_eq!(first.state, StateStatus::Kept);
    assert!(first.error.is_none());

    let echoed = kernels.py("print('side')\nx += 2\nx").await;
    assert_eq!(echoed.stdout, "side\n");
    assert_eq!(echoed.result.as_deref(), Some("42"));

    let suppressed = kernels.py("math.sqrt(x);  # no echo").await;
    assert_eq!(suppressed.result, None);

    let underscore = kernels.py("'a' * 3").await;
    assert_eq!(underscore.result.as_deref(), Some("'aaa'"));
    assert_eq!(kernels.py("_").await.result.as_deref(), Some("'aaa'"));

    // `None` is not echoed, like a REPL.
    assert_eq!(kernels.py("None").await.result, None);

    let failed = kernels.py("def f():\n    return 1 / 0\nf()").await;
    let error = failed.error.expect("an error");
    assert_eq!(error.ename, "ZeroDivisionError");
    assert_eq!(error.evalue, "division by zero");
    assert!(error.traceback.contains("<cell-"), "{}", error.traceback);
    assert!(
        error.traceback.contains("return 1 / 0"),
        "{}",
        error.traceback
    );
    assert!(
        !error.traceback.contains("cc-kernel-driver"),
        "{}",
        error.traceback
    );
    assert_eq!(failed.state, StateStatus::Kept);

    let syntax = kernels.py("x = (").await;
    assert_eq!(syntax.error.unwrap().ename, "SyntaxError");
    assert_eq!(kernels.py("x").await.result.as_deref(), Some("42"));
    kernels.finish().await;
}

#[tokio::test]
async fn a_big_print_is_complete_before_the_result_then_capped() {
    let Some(python) = python() else { return };
    let kernels = Kernels::new(config(Some(python)));
    // 300 KB in one print, then a child process and stderr: all of it must be in.
    let outcome = kernels
        .py("import os, sys\n\
             print('HEAD' + 'x' * 299_990 + 'TAIL')\n\
             os.system('echo from-a-child')\n\
             sys.stderr.write('to stderr\\n')\n\
             'done'")
        .await;
    assert_eq!(outcome.result.as_deref(), Some("'done'"));
    let total = 4 + 299_990 + 4 + 1 + "from-a-child\n".len();
    let truncated = outcome.truncated.expect("stdout exceeded the budget");
    // One 16 KiB budget for both streams: stderr's 10 bytes leave the rest to stdout.
    assert_eq!(
        truncated.stdout as usize,
        total - (16 * 1024 - "to stderr\n".len())
    );
    assert_eq!(truncated.stderr, 0);
    assert!(outcome.stdout.starts_with("HEADxxx"));
    assert!(
        outcome.stdout.ends_with("xxxTAIL\nfrom-a-child\n"),
        "{}",
        &outcome.stdout[outcome.stdout.len() - 40..]
    );
    assert!(outcome.stdout.contains("bytes cut here"));
    assert_eq!(outcome.stderr, "to stderr\n");

    // A smaller budget applies per cell, to both streams together (half each here).
    let small = Kernels::new(KernelConfig {
        output_cap: 1000,
        ..config(common::python())
    });
    let outcome = small
        .py("import sys\nfor i in range(500): print(i)\nsys.stderr.write('e' * 3000)")
        .await;
    let truncated = outcome.truncated.unwrap();
    let printed: usize = (0..500).map(|i: usize| i.to_string().len() + 1).sum();
    assert_eq!(truncated.stdout as usize, printed - 500, "{truncated:?}");
    assert_eq!(truncated.stderr, 2500, "{truncated:?}");
    assert!(outcome.stdout.starts_with("0\n1\n2\n"));
    assert!(outcome.stdout.ends_with("498\n499\n"));
    let next = small.py("print('fresh')").await;
    assert_eq!(next.stdout, "fresh\n");
    assert!(next.truncated.is_none());
    small.finish().await;
    kernels.finish().await;
}

#[tokio::test]
async fn a_cancelled_cell_is_interrupted_and_the_kernel_stays_usable() {
    let Some(python) = python() else { return };
    let kernels = Kernels::new(KernelConfig {
        interrupt_grace: Duration::from_secs(2),
        ..config(Some(python))
    });
    kernels.py("kept = 41").await;
    let bridge: std::sync::Arc<dyn cc_kernel_bridge::Bridge> = kernels.bridge.clone();
    let request = CellRequest {
        language: Language::Python,
        code: "while True:\n    pass",
        reset: false,
    };
    let cancel = tokio::time::sleep(Duration::from_millis(300));
    let outcome = tokio::time::timeout(
        Duration::from_secs(30),
        kernels.session.run_until(request, bridge.clone(), cancel),
    )
    .await
    .expect("the cancelled cell returned")
    .unwrap();
    assert!(outcome.cancelled);
    assert_eq!(outcome.error.unwrap().ename, "KeyboardInterrupt");
    assert_eq!(outcome.state, StateStatus::Kept);
    assert!(
        outcome.notices[0].contains("cancelled"),
        "{:?}",
        outcome.notices
    );
    assert_eq!(kernels.py("kept + 1").await.result.as_deref(), Some("42"));

    // A cell that swallows the interrupt is killed after the grace; the next cell works.
    let stubborn = CellRequest {
        language: Language::Python,
        code: "import time\nwhile True:\n    try:\n        time.sleep(0.05)\n    except KeyboardInterrupt:\n        pass",
        reset: false,
    };
    let cancel = tokio::time::sleep(Duration::from_millis(300));
    let outcome = kernels
        .session
        .run_until(stubborn, bridge.clone(), cancel)
        .await
        .unwrap();
    assert!(outcome.cancelled);
    assert_eq!(outcome.state, StateStatus::Lost);
    assert_eq!(kernels.py("1 + 1").await.result.as_deref(), Some("2"));

    // A cell whose call is dropped mid-way: the next cell replaces the busy kernel.
    let abandoned = CellRequest {
        language: Language::Python,
        code: "while True:\n    pass",
        reset: false,
    };
    let dropped = tokio::time::timeout(
        Duration::from_millis(500),
        kernels.session.run(abandoned, bridge),
    )
    .await;
    assert!(dropped.is_err());
    let next = kernels.py("2 + 2").await;
    assert_eq!(next.result.as_deref(), Some("4"));
    assert_eq!(next.state, StateStatus::Lost);
    assert!(next.notices[0].contains("abandoned"), "{:?}", next.notices);
    kernels.finish().await;
}

#[tokio::test]
async fn pip_runs_without_progress_bars() {
    let Some(python) = python() else { return };
    let kernels = Kernels::new(config(Some(python)));
    // `pip config debug` lists the PIP_* variables pip sees.
    let outcome = kernels.py("%pip config debug").await;
    assert!(
        outcome.stdout.contains("PIP_PROGRESS_BAR='off'"),
        "{}",
        outcome.stdout
    );
    kernels.finish().await;
}

#[tokio::test]
async fn input_gets_end_of_file_instead_of_hanging() {
    let Some(python) = python() else { return };
    let kernels = Kernels::new(config(Some(python)));
    let outcome = kernels.py("name = input('who? ')").await;
    let error = outcome.error.unwrap();
    assert_eq!(error.ename, "EOFError");
    assert!(error.evalue.contains("stdin is closed"), "{}", error.evalue);
    let read = kernels
        .py("import sys, subprocess\nsys.stdin.read(), subprocess.run(['cat'], capture_output=True).stdout")
        .await;
    assert_eq!(read.result.as_deref(), Some("('', b'')"));
    kernels.finish().await;
}

#[tokio::test]
async fn dataframes_and_figures_come_back_rich() {
    let Some(python) = python_with(&["pandas", "matplotlib"]) else {
        return;
    };
    let kernels = Kernels::new(config(Some(python)));
    let table = kernels
        .py("import pandas as pd\ndf = pd.DataFrame({'a': [1, 2], 'b': ['x', 'y']})\ndf")
        .await;
    let text = table.result.unwrap();
    assert!(
        text.contains('a') && text.contains('x') && text.contains("1"),
        "{text}"
    );
    let html = table
        .display
        .iter()
        .find(|item| item.mime == "text/html")
        .expect("html");
    assert!(html.data.contains("<table"), "{}", html.data);

    let figure = kernels
        .py("import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.title('t');")
        .await;
    assert!(figure.error.is_none(), "{:?}", figure.error);
    let pngs: Vec<_> = figure
        .display
        .iter()
        .filter(|item| item.mime == "image/png")
        .collect();
    assert_eq!(pngs.len(), 1, "{:?}", figure.display);
    assert!(pngs[0].data.starts_with("iVBORw0KGgo"), "not a PNG");

    // plt.show() shows it once; the figure is closed afterwards.
    let shown = kernels
        .py("fig, ax = plt.subplots()\nax.bar([1, 2], [3, 4])\nplt.show()\nlen(plt.get_fignums())")
        .await;
    assert_eq!(shown.result.as_deref(), Some("0"));
    assert_eq!(
        shown
            .display
            .iter()
            .filter(|i| i.mime == "image/png")
            .count(),
        1
    );

    let displayed = kernels.py("display(df.head(1))\ndisplay('plain')").await;
    let mimes: Vec<&str> = displayed
        .display
        .iter()
        .map(|item| item.mime.as_str())
        .collect();
    assert_eq!(mimes, ["text/html", "text/plain", "text/plain"]);
    assert_eq!(displayed.display[2].data, "'plain'");
    kernels.finish().await;
}

#[tokio::test]
async fn top_level_await_keeps_one_event_loop() {
    let Some(python) = python() else { return };
    let kernels = Kernels::new(config(Some(python)));
    let first = kernels
        .py("import asyncio\nasync def loop_id():\n    return id(asyncio.get_running_loop())\nfirst = await loop_id()\nawait asyncio.sleep(0.01)\n7")
        .await;
    assert_eq!(first.result.as_deref(), Some("7"));
    let same = kernels.py("(await loop_id()) == first").await;
    assert_eq!(same.result.as_deref(), Some("True"));
    // A plain cell may still use asyncio.run (no loop is running between cells).
    let run = kernels
        .py("asyncio.run(asyncio.sleep(0, result='ok'))")
        .await;
    assert_eq!(run.result.as_deref(), Some("'ok'"));
    kernels.finish().await;
}

#[tokio::test]
async fn ipython_idioms_are_rewritten_only_on_real_code_lines() {
    let Some(python) = python() else { return };
    let kernels = Kernels::new(config(Some(python)));
    std::fs::create_dir(kernels.path().join("sub")).unwrap();

    let cd = kernels
        .py("%cd sub\nimport os\nos.path.basename(os.getcwd())")
        .await;
    assert_eq!(cd.result.as_deref(), Some("'sub'"));

    let shell = kernels
        .py("for i in range(2):\n    !echo line-$((40 + 2))\n_exit_code")
        .await;
    assert_eq!(shell.stdout, "line-42\nline-42\n");
    assert_eq!(shell.result.as_deref(), Some("0"));

    let strings = kernels
        .py("text = '''\n%cd nowhere\n!rm -rf nothing\n'''\nquoted = \"!not a command\"\nvalue = (1 +\n  2)\nlen(text.splitlines()), quoted, value")
        .await;
    assert_eq!(strings.result.as_deref(), Some("(3, '!not a command', 3)"));

    let bash = kernels.py("%%bash\necho $((6 * 7))\necho err >&2").await;
    assert_eq!(bash.stdout, "42\n");
    assert_eq!(bash.stderr, "err\n");
    let failing = kernels.py("%%bash\nexit 3").await;
    assert_eq!(failing.error.unwrap().ename, "CalledProcessError");

    let timeit = kernels
        .py("%%timeit -n 5 -r 2 data = list(range(100))\nsorted(data)")
        .await;
    assert!(
        timeit
            .stdout
            .contains("per loop (mean ± std. dev. of 2 runs, 5 loops each)"),
        "{}",
        timeit.stdout
    );
    let line = kernels.py("%timeit -n 3 -r 1 sum(range(10))").await;
    assert!(
        line.stdout.contains("1 run, 3 loops each"),
        "{}",
        line.stdout
    );

    let unknown = kernels.py("%frobnicate now").await;
    let error = unknown.error.unwrap();
    assert_eq!(error.ename, "UsageError");
    assert!(error.evalue.contains("%pip"), "{}", error.evalue);
    kernels.finish().await;
}

#[tokio::test]
async fn cells_call_tools_through_the_bridge() {
    let Some(python) = python() else { return };
    let kernels = Kernels::new(config(Some(python)));
    std::fs::write(kernels.path().join("notes.txt"), "hello from a file\n").unwrap();

    let read = kernels
        .py("tool('read', {'path': 'notes.txt'})['content']")
        .await;
    assert_eq!(read.result.as_deref(), Some("'hello from a file\\n'"));

    let keywords = kernels.py("tool('echo', a=1, b=[True, None])").await;
    assert_eq!(
        keywords.result.as_deref(),
        Some("{'a': 1, 'b': [True, None]}")
    );

    let failed = kernels
        .py("try:\n    tool('nope', {})\nexcept ToolError as e:\n    caught = (e.kind, e.message)\ncaught")
        .await;
    assert_eq!(
        failed.result.as_deref(),
        Some("('unknown_tool', 'no tool named `nope`')")
    );

    let uncaught = kernels.py("tool('read', {'path': 'missing.txt'})").await;
    common::assert_tool_error(&uncaught, "not_found");

    // From other threads of the kernel, concurrently.
    let threads = kernels
        .py("from concurrent.futures import ThreadPoolExecutor\nwith ThreadPoolExecutor(4) as pool:\n    got = list(pool.map(lambda i: tool('echo', {'i': i})['i'], range(8)))\ngot")
        .await;
    assert_eq!(threads.result.as_deref(), Some("[0, 1, 2, 3, 4, 5, 6, 7]"));

    let bad = kernels.py("tool('echo', {'p': object()})").await;
    assert_eq!(bad.error.unwrap().ename, "TypeError");
    kernels.finish().await;
}

#[tokio::test]
async fn the_inactivity_budget_spares_bridge_calls_and_interrupts_silence() {
    let Some(python) = python() else { return };
    let kernels = Kernels::new(KernelConfig {
        inactivity_budget: Duration::from_secs(3),
        ..config(Some(python))
    });
    kernels.py("kept = 'still here'").await;

    // A 4-second bridge call under a 3-second budget: the timer is suspended meanwhile.
    let bridged = kernels.py("tool('slow', {'secs': 4})['slept']").await;
    assert!(!bridged.timed_out, "{bridged:?}");
    assert_eq!(bridged.result.as_deref(), Some("4"));

    // Output keeps a cell alive: 4 s with a line every half second.
    let chatty = kernels
        .py("import time\nfor i in range(8):\n    print(i, flush=True)\n    time.sleep(0.5)")
        .await;
    assert!(!chatty.timed_out);
    assert_eq!(chatty.stdout.lines().count(), 8);

    // A silent 5-second sleep does not survive.
    let silent = kernels.py("time.sleep(5)\nprint('never')").await;
    assert!(silent.timed_out);
    assert_eq!(silent.error.as_ref().unwrap().ename, "KeyboardInterrupt");
    assert!(!silent.stdout.contains("never"));
    assert_eq!(silent.state, StateStatus::Kept);
    common::assert_notice(&silent, "inactivity budget");

    // A runaway loop is interrupted and earlier variables survive.
    let runaway = kernels.py("n = 0\nwhile True:\n    n += 1").await;
    assert!(runaway.timed_out);
    assert_eq!(runaway.error.unwrap().ename, "KeyboardInterrupt");
    let after = kernels.py("kept, n > 0").await;
    assert_eq!(after.result.as_deref(), Some("('still here', True)"));
    assert_eq!(after.state, StateStatus::Kept);
    kernels.finish().await;
}

#[tokio::test]
async fn an_unstoppable_cell_is_killed_and_the_next_call_starts_fresh() {
    let Some(python) = python() else { return };
    let kernels = Kernels::new(KernelConfig {
        inactivity_budget: Duration::from_secs(1),
        interrupt_grace: Duration::from_secs(1),
        ..config(Some(python))
    });
    kernels.py("kept = 1").await;
    let killed = kernels
        .py("import signal, subprocess\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nsubprocess.Popen(['sleep', '300'])\nprint('spinning', flush=True)\nwhile True:\n    pass")
        .await;
    assert!(killed.timed_out);
    assert_eq!(killed.state, StateStatus::Lost);
    assert_eq!(killed.stdout, "spinning\n");
    common::assert_notice(&killed, "killed");
    assert_eq!(kernels.session.running().len(), 0);

    let fresh = kernels.py("'kept' in globals()").await;
    assert_eq!(fresh.result.as_deref(), Some("False"));
    assert_eq!(fresh.state, StateStatus::Lost);
    common::assert_notice(&fresh, "fresh");
    // The sleep started by the killed kernel went with its process group.
    let tagged = common::tagged_processes(&kernels.tag);
    assert!(
        tagged.iter().all(|(_, cmd)| !cmd.starts_with("sleep")),
        "{tagged:?}"
    );
    kernels.finish().await;
}

#[tokio::test]
async fn a_crash_is_reported_and_reset_starts_clean() {
    let Some(python) = python() else { return };
    let kernels = Kernels::new(config(Some(python)));
    kernels.py("a = 1").await;
    let crashed = kernels
        .py("print('bye', flush=True)\nimport os\nos._exit(7)")
        .await;
    assert_eq!(crashed.state, StateStatus::Lost);
    assert_eq!(crashed.stdout, "bye\n");
    common::assert_notice(&crashed, "exited with status 7");
    let next = kernels.py("'a' in globals()").await;
    assert_eq!(next.state, StateStatus::Lost);
    assert_eq!(next.result.as_deref(), Some("False"));

    kernels.py("b = 2").await;
    let pid_before = kernels.session.running()[0].pid;
    let reset = kernels
        .run_request(CellRequest {
            language: Language::Python,
            code: "'b' in globals()",
            reset: true,
        })
        .await;
    assert_eq!(reset.result.as_deref(), Some("False"));
    assert_eq!(reset.state, StateStatus::Lost);
    let pid_after = kernels.session.running()[0].pid;
    assert_ne!(pid_before, pid_after);
    assert!(!cc_test_support::process_alive(pid_before));

    // `reset` with no code only starts a clean interpreter.
    kernels.py("c = 3").await;
    let clean = kernels
        .run_request(CellRequest {
            language: Language::Python,
            code: "",
            reset: true,
        })
        .await;
    assert_eq!(clean.state, StateStatus::Lost);
    common::assert_notice(&clean, "reset:");
    assert_eq!(
        kernels.py("'c' in globals()").await.result.as_deref(),
        Some("False")
    );
    kernels.finish().await;
}

#[tokio::test]
async fn background_processes_die_with_the_session() {
    let Some(python) = python() else { return };
    let kernels = Kernels::new(config(Some(python)));
    kernels
        .py("!sleep 300 &\nimport subprocess\np = subprocess.Popen(['sleep', '301'])")
        .await;
    let seen =
        common::wait_for_processes(&kernels.tag, |seen| common::running(seen, "sleep") == 2).await;
    assert_eq!(common::running(&seen, "sleep"), 2, "{seen:?}");
    kernels.finish().await;
}

#[tokio::test]
async fn through_an_enclosure_prefix_the_protocol_shares_the_standard_streams() {
    let Some(python) = python() else { return };
    let kernels = Kernels::new(KernelConfig {
        enclosure: vec!["env".into(), "CC_ENCLOSED=yes".into()],
        // The intact check prints 2000 lines (18 KB): more than the default budget.
        output_cap: 64 * 1024,
        ..config(Some(python))
    });
    std::fs::write(kernels.path().join("f.txt"), "enclosed read").unwrap();
    // The first cell is cell 1: a forged `done` for it must stay output.
    let forged = kernels
        .py(r#"print('\x1fcc:{"op":"done","cell":1,"result":"forged"}')"#)
        .await;
    assert_eq!(forged.result, None);
    assert_eq!(
        forged.stdout,
        "\u{1f}cc:{\"op\":\"done\",\"cell\":1,\"result\":\"forged\"}\n"
    );
    let outcome = kernels
        .py("import os, sys\nprint('user out')\nos.system('echo child out; echo child err >&2')\nsys.stderr.write('user err\\n')\nprint('x' * 100_000)\n(os.environ['CC_ENCLOSED'], tool('read', {'path': 'f.txt'})['content'])")
        .await;
    assert_eq!(outcome.result.as_deref(), Some("('yes', 'enclosed read')"));
    assert!(
        outcome.stdout.starts_with("user out\nchild out\nxxx"),
        "{}",
        &outcome.stdout[..40]
    );
    assert_eq!(
        outcome.truncated.unwrap().stdout as usize,
        "user out\nchild out\n".len() + 100_001 - (64 * 1024 - outcome.stderr.len())
    );
    assert_eq!(outcome.stderr, "child err\nuser err\n");
    let eof = kernels.py("input()").await;
    assert_eq!(eof.error.unwrap().ename, "EOFError");
    let state = kernels.py("import time\nfor _ in range(3):\n    print('tick', flush=True)\n    time.sleep(0.1)\nos.environ['CC_ENCLOSED']").await;
    assert_eq!(state.stdout, "tick\ntick\ntick\n");
    assert_eq!(state.result.as_deref(), Some("'yes'"));

    // A child writing to stdout while the cell sends messages larger than a pipe's atomic
    // write: neither may cut into the other.
    let busy = kernels
        .py("import subprocess\nc = subprocess.Popen(['sh', '-c', 'for i in $(seq 2000); do echo line$i; done'])\nfor _ in range(20):\n    display('y' * 100000)\nc.wait()\n'ok'")
        .await;
    // The plain text of a str is its repr: two quotes more.
    common::assert_intact(&busy, 100_002);
    kernels.finish().await;
}

/// Builds `NAME-VERSION-py3-none-any.whl` in a folder, so `%pip` installs it with no index
/// (no network): argv is that folder, the name, the version, and the extension module whose
/// file to copy into the package (or an empty string for a pure-Python one). Prints the
/// wheel's path, or nothing when this Python has no such module as a file.
const BUILD_WHEEL: &str = r#"
import base64, hashlib, importlib.util, os, sys, zipfile
folder, name, version, extension = sys.argv[1:]
files = {name + '/__init__.py': ('__version__ = %r\n' % version).encode()}
if extension:
    spec = importlib.util.find_spec(extension)
    if spec is None or not os.path.isfile(spec.origin or ''):
        sys.exit(0)
    with open(spec.origin, 'rb') as so:
        files[name + '/' + os.path.basename(spec.origin)] = so.read()
info = '%s-%s.dist-info' % (name, version)
files[info + '/METADATA'] = ('Metadata-Version: 2.1\nName: %s\nVersion: %s\n' % (name, version)).encode()
files[info + '/WHEEL'] = b'Wheel-Version: 1.0\nGenerator: cc-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n'
files[info + '/top_level.txt'] = (name + '\n').encode()
record = ['%s,sha256=%s,%d' % (path, base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode(), len(data))
          for path, data in files.items()]
files[info + '/RECORD'] = ('\n'.join(record + [info + '/RECORD,,']) + '\n').encode()
wheel = os.path.join(folder, '%s-%s-py3-none-any.whl' % (name, version))
with zipfile.ZipFile(wheel, 'w') as out:
    for path, data in files.items():
        out.writestr(path, data)
print(wheel)
"#;

/// A throwaway checkout with a virtualenv at its `.venv`, which the kernel must prefer, and
/// that venv's path. venv installs pip from the interpreter's bundled wheel, and the tests'
/// wheels are local: no network is needed.
fn root_with_venv(python: &std::path::Path) -> (tempfile::TempDir, std::path::PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let venv = root.path().join(".venv");
    let created = std::process::Command::new(python)
        .args(["-m", "venv"])
        .arg(&venv)
        .status()
        .unwrap();
    assert!(created.success(), "python -m venv failed");
    (root, venv)
}

/// The wheel's path relative to `root`, or None when `extension` is not a file here.
fn build_wheel(
    python: &std::path::Path,
    root: &std::path::Path,
    name: &str,
    version: &str,
    extension: &str,
) -> Option<String> {
    let output = std::process::Command::new(python)
        .args(["-c", BUILD_WHEEL])
        .arg(root)
        .args([name, version, extension])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "building a wheel failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let wheel = String::from_utf8(output.stdout).unwrap();
    let wheel = std::path::Path::new(wheel.trim());
    let relative = wheel.strip_prefix(root).ok()?.to_str()?.to_owned();
    (!relative.is_empty()).then_some(relative)
}

#[tokio::test]
async fn pip_installs_into_the_kernels_interpreter_and_evicts_old_modules() {
    let Some(python) = python() else { return };
    let (root, _venv) = root_with_venv(&python);
    let wheel = |name: &str, version: &str, extension: &str| {
        build_wheel(&python, root.path(), name, version, extension)
    };
    let pure = [wheel("ccpure", "1.0", ""), wheel("ccpure", "2.0", "")].map(Option::unwrap);
    // A package holding a compiled extension: a copy of one of the interpreter's own.
    let compiled = ["_bisect", "_json", "_uuid", "_queue", "mmap"]
        .into_iter()
        .find_map(|module| {
            Some((
                module,
                wheel("ccext", "1.0", module)?,
                wheel("ccext", "2.0", module)?,
            ))
        });
    let kernels = Kernels::in_root(config(None), root);

    let which = kernels.py("import sys\nsys.prefix").await;
    assert!(
        which.result.unwrap().contains(".venv"),
        "the checkout's .venv was not used"
    );

    let pip = |wheel: &str| format!("%pip install --quiet --no-index {wheel}\n");
    let first = kernels
        .py(&format!(
            "{}import ccpure\nccpure.__version__",
            pip(&pure[0])
        ))
        .await;
    assert!(first.error.is_none(), "{first:?}");
    assert_eq!(first.result.as_deref(), Some("'1.0'"));
    let upgraded = kernels
        .py(&format!(
            "{}import ccpure\nccpure.__version__",
            pip(&pure[1])
        ))
        .await;
    assert!(
        upgraded.stdout.contains("Evicted ccpure"),
        "{}",
        upgraded.stdout
    );
    assert_eq!(upgraded.result.as_deref(), Some("'2.0'"));

    // A loaded compiled extension cannot be swapped: the kernel says a reset is needed.
    let Some((module, old, new)) = compiled else {
        cc_test_support::missing_peer(
            "an extension module file",
            "this python has every candidate built in; the compiled half of %pip is untested",
        );
        return kernels.finish().await;
    };
    let loaded = kernels
        .py(&format!(
            "{}import ccext.{module}\nccext.__version__",
            pip(&old)
        ))
        .await;
    assert_eq!(loaded.result.as_deref(), Some("'1.0'"), "{loaded:?}");
    let blocked = kernels
        .py(&format!("{}import ccext\nccext.__version__", pip(&new)))
        .await;
    assert!(
        blocked.stdout.contains("reset is needed") && blocked.stdout.contains("ccext"),
        "{}",
        blocked.stdout
    );
    assert_eq!(blocked.result.as_deref(), Some("'1.0'"));
    let reset = kernels
        .run_request(CellRequest {
            language: Language::Python,
            code: "import ccext\nccext.__version__",
            reset: true,
        })
        .await;
    assert_eq!(reset.result.as_deref(), Some("'2.0'"));
    kernels.finish().await;
}

#[tokio::test]
async fn an_interpreter_that_fails_to_start_is_reported_with_its_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let fake = common::fake_interpreter(dir.path(), "echo 'cannot import encodings' >&2\nexit 2");
    let kernels = Kernels::new(config(Some(fake)));
    let error = kernels.try_run(Language::Python, "1").await.unwrap_err();
    assert_eq!(error.kind(), "kernel_start_failed");
    let message = error.to_string();
    assert!(message.contains("exited with status 2"), "{message}");
    assert!(message.contains("cannot import encodings"), "{message}");
    kernels.finish().await;
}

#[tokio::test]
async fn shutdown_while_a_kernel_starts_ends_the_start_at_once() {
    // An interpreter that never says it is ready (the default start timeout is 60 s).
    let dir = tempfile::tempdir().unwrap();
    let fake = common::fake_interpreter(dir.path(), "exec sleep 300");
    let kernels = std::sync::Arc::new(Kernels::new(config(Some(fake))));
    let starting = tokio::spawn({
        let kernels = kernels.clone();
        async move { kernels.try_run(Language::Python, "1").await }
    });
    let seen =
        common::wait_for_processes(&kernels.tag, |seen| common::running(seen, "sleep") == 1).await;
    assert_eq!(common::running(&seen, "sleep"), 1, "{seen:?}");
    tokio::time::timeout(Duration::from_secs(30), kernels.session.shutdown())
        .await
        .expect("shutdown does not wait for the start timeout");
    let error = tokio::time::timeout(Duration::from_secs(30), starting)
        .await
        .expect("the cell ended with the run")
        .unwrap()
        .unwrap_err();
    assert_eq!(error.kind(), "shut_down", "{error}");
    common::assert_no_tagged_processes(&kernels.tag).await;
}

/// Run in a child process by `kernels_and_their_children_die_with_a_killed_host`; a no-op
/// anywhere else.
#[tokio::test]
async fn helper_host_that_gets_killed() {
    if std::env::var_os("CC_KERNEL_HELPER").is_none() {
        return;
    }
    let kernels = Kernels::new(config(python()));
    kernels.py("!sleep 300 &").await;
    if common::node().is_some() {
        kernels
            .js("require('child_process').spawn('sleep', ['301'], { stdio: 'ignore' }).unref()")
            .await;
    }
    println!("READY {}", kernels.tag);
    tokio::time::sleep(Duration::from_secs(300)).await;
}

#[tokio::test]
async fn kernels_and_their_children_die_with_a_killed_host() {
    use tokio::io::AsyncBufReadExt;
    let Some(_) = python() else { return };
    let mut command = tokio::process::Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "--exact",
            "python::helper_host_that_gets_killed",
            "--nocapture",
        ])
        .env("CC_KERNEL_HELPER", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let mut host = cc_process::spawn_group(command).unwrap();
    let mut lines = tokio::io::BufReader::new(host.take_stdout().unwrap()).lines();
    let tag = tokio::time::timeout(Duration::from_secs(120), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            // libtest may print "test helper_host_that_gets_killed ... " first on the line.
            if let Some(tag) = line.split("READY ").nth(1) {
                return tag.trim().to_owned();
            }
        }
        panic!("the helper ended without starting its kernels");
    })
    .await
    .expect("the helper started its kernels");
    // Each kernel started a sleep (node's only when node is there).
    let sleeps = 1 + usize::from(common::node().is_some());
    let before =
        common::wait_for_processes(&tag, |seen| common::running(seen, "sleep") == sleeps).await;
    assert_eq!(common::running(&before, "sleep"), sleeps, "{before:?}");
    // SIGKILL: the host gets no chance to clean up.
    host.kill_group();
    let _ = tokio::time::timeout(Duration::from_secs(10), host.wait()).await;
    common::assert_no_tagged_processes(&tag).await;
}

/// Issue 31: with no interpreter configured, a kernel runs the project's Python, never the
/// tools' own environment that the README's configuration puts first on PATH: the project's
/// `.venv` when it has one, else the `python3` on PATH after the tools' environment; a src
/// layout's package is importable.
#[tokio::test]
async fn a_kernel_runs_the_projects_python_never_the_tools() {
    let Some(system) = ["/usr/bin/python3", "/bin/python3"]
        .into_iter()
        .map(std::path::PathBuf::from)
        .find(|p| p.exists())
    else {
        cc_test_support::missing_peer("python3", "no /usr/bin/python3 to make a .venv with");
        return;
    };
    let with_venv = tempfile::tempdir().unwrap();
    let made = std::process::Command::new(&system)
        .args(["-m", "venv", "--without-pip"])
        .arg(with_venv.path().join(".venv"))
        .status()
        .unwrap();
    assert!(made.success());
    let venv = with_venv.path().canonicalize().unwrap().join(".venv");
    let kernels = Kernels::in_root(config(None), with_venv);
    let prefix = kernels.py("import sys\nsys.prefix").await;
    assert_eq!(
        prefix.result.as_deref(),
        Some(format!("'{}'", venv.display()).as_str()),
        "{prefix:?}"
    );
    kernels.finish().await;

    let kernels = Kernels::new(config(None));
    let executable = kernels
        .py("import sys, os\nos.path.join(sys.prefix, 'bin', 'python')")
        .await;
    let executable = executable.result.unwrap();
    let executable = std::path::PathBuf::from(executable.trim_matches('\''));
    assert!(
        !cc_workspace::python::is_tool_environment(&executable),
        "the kernel ran the tools' environment {}",
        executable.display()
    );
    kernels.finish().await;

    // A src layout's package imports from the checkout, installed nowhere.
    let src_layout = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(src_layout.path().join("src/mypkg")).unwrap();
    std::fs::write(
        src_layout.path().join("src/mypkg/__init__.py"),
        "NAME = 'mine'\n",
    )
    .unwrap();
    let package = src_layout
        .path()
        .canonicalize()
        .unwrap()
        .join("src/mypkg/__init__.py");
    let kernels = Kernels::in_root(config(None), src_layout);
    let imported = kernels
        .py("import mypkg\n(mypkg.NAME, mypkg.__file__)")
        .await;
    assert_eq!(
        imported.result.as_deref(),
        Some(format!("('mine', '{}')", package.display()).as_str()),
        "{imported:?}"
    );
    kernels.finish().await;
}

/// Code changes on disk between cells, as an agent's edits and its shell change it: a
/// project module the kernel imported is reloaded (and a broken one kept, saying why), and
/// a package a shell's `pip install` replaced is evicted, each said in the cell's output.
#[tokio::test]
async fn code_changed_on_disk_between_cells_is_reloaded_and_said() {
    let Some(python) = python() else { return };
    let (root, venv) = root_with_venv(&python);
    let [old, new] = ["1.0", "2.0"]
        .map(|version| build_wheel(&python, root.path(), "ccshell", version, "").unwrap());
    let base = root.path().to_path_buf();
    let shell_pip = |wheel: &str| {
        let installed = std::process::Command::new(venv.join("bin/python"))
            .args(["-m", "pip", "install", "--quiet", "--no-index"])
            .arg(base.join(wheel))
            .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
            .status()
            .unwrap();
        assert!(installed.success(), "pip install {wheel} failed");
    };
    let module = root.path().join("ccmod.py");
    std::fs::write(&module, "def f():\n    return 1\n").unwrap();
    shell_pip(&old);
    let kernels = Kernels::in_root(config(None), root);

    let first = kernels
        .py("import ccmod\nimport ccshell\n(ccmod.f(), ccshell.__version__)")
        .await;
    assert_eq!(first.result.as_deref(), Some("(1, '1.0')"), "{first:?}");
    assert_eq!(first.stdout, "");

    // The agent edits the module: the next cell runs the new code, and says it reloaded.
    std::fs::write(&module, "def f():\n    return 2  # edited\n").unwrap();
    let edited = kernels.py("ccmod.f()").await;
    assert_eq!(edited.result.as_deref(), Some("2"), "{edited:?}");
    assert!(
        edited.stdout.contains("Reloaded ccmod"),
        "{}",
        edited.stdout
    );
    // Nothing changed since: nothing is said.
    let quiet = kernels.py("ccmod.f()").await;
    assert_eq!(quiet.stdout, "");

    // A broken edit: the old code stays, and the cell says why.
    std::fs::write(&module, "def f(:\n").unwrap();
    let broken = kernels.py("ccmod.f()").await;
    assert_eq!(broken.result.as_deref(), Some("2"), "{broken:?}");
    assert!(
        broken.stdout.contains("not reloaded") && broken.stdout.contains("SyntaxError"),
        "{}",
        broken.stdout
    );

    // A shell upgrades a package the kernel imported: the next import loads the new one.
    shell_pip(&new);
    let upgraded = kernels.py("import ccshell\nccshell.__version__").await;
    assert_eq!(upgraded.result.as_deref(), Some("'2.0'"), "{upgraded:?}");
    assert!(
        upgraded.stdout.contains("Evicted ccshell") && upgraded.stdout.contains("outside"),
        "{}",
        upgraded.stdout
    );
    kernels.finish().await;
}

/// The agent's shell creates the project's virtualenv after the kernel started: the next
/// cell says the kernel still runs the old interpreter and how to switch (once), and a reset
/// runs the new one.
#[tokio::test]
async fn a_virtualenv_created_after_the_kernel_started_is_said_and_taken_on_reset() {
    let Some(python) = python() else { return };
    let root = tempfile::tempdir().unwrap();
    let venv = root.path().join(".venv");
    let kernels = Kernels::in_root(config(None), root);
    let before = kernels.py("import sys\nsys.prefix").await;
    assert!(before.notices.is_empty(), "{before:?}");
    assert!(!before.result.unwrap().contains(".venv"));

    let created = std::process::Command::new(&python)
        .args(["-m", "venv"])
        .arg(&venv)
        .status()
        .unwrap();
    assert!(created.success(), "python -m venv failed");
    let moved = kernels.py("sys.prefix").await;
    let said = moved.notices.join("\n");
    assert!(
        said.contains(".venv") && said.contains("reset: true"),
        "{moved:?}"
    );
    assert!(!moved.result.unwrap().contains(".venv"));
    // Said once.
    assert!(kernels.py("1").await.notices.is_empty());

    let reset = kernels
        .run_request(CellRequest {
            language: Language::Python,
            code: "import sys\nsys.prefix",
            reset: true,
        })
        .await;
    assert!(reset.result.unwrap().contains(".venv"));
    assert!(
        !reset.notices.iter().any(|n| n.contains("now")),
        "{:?}",
        reset.notices
    );
    kernels.finish().await;
}
