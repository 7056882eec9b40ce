//! JavaScript kernels on a real node: the REPL context, await, output, the bridge and
//! interrupts from the watchdog thread.

#![allow(clippy::unwrap_used)] // Tests unwrap freely: a panic is a failure.

use crate::common;

use std::time::Duration;

use cc_kernel_bridge::{KernelConfig, StateStatus};
use common::{node, Kernels};

fn config() -> KernelConfig {
    KernelConfig {
        node: node(),
        inactivity_budget: Duration::from_secs(60),
        ..KernelConfig::default()
    }
}

#[tokio::test]
async fn a_persistent_context_with_redeclarations_and_echo() {
    let Some(_) = node() else { return };
    let kernels = Kernels::new(config());
    let first = kernels
        .js("let a = 1; const o = { list: [1, 2], name: 'n' }")
        .await;
    assert_eq!(first.result, None);
    assert!(first.error.is_none(), "{first:?}");
    let again = kernels
        .js("let a = 2; const o = { list: [3] }; a + o.list[0]")
        .await;
    assert!(again.error.is_none(), "{again:?}");
    assert_eq!(again.result.as_deref(), Some("5"));
    assert_eq!(
        kernels.js("o").await.result.as_deref(),
        Some("{ list: [ 3 ] }")
    );
    assert_eq!(kernels.js("'text'").await.result.as_deref(), Some("'text'"));
    assert_eq!(
        kernels.js("10n ** 3n").await.result.as_deref(),
        Some("1000n")
    );
    assert_eq!(kernels.js("null").await.result.as_deref(), Some("null"));
    assert_eq!(kernels.js("undefined").await.result, None);
    assert_eq!(
        kernels.js("function f() {}; f").await.result.as_deref(),
        Some("[Function: f]")
    );

    let thrown = kernels
        .js("function g() { throw new TypeError('bad input') }\ng()")
        .await;
    let error = thrown.error.unwrap();
    assert_eq!(error.ename, "TypeError");
    assert_eq!(error.evalue, "bad input");
    assert!(error.traceback.contains("at g"), "{}", error.traceback);
    assert!(
        !error.traceback.contains("cc-kernel-driver"),
        "{}",
        error.traceback
    );
    assert_eq!(thrown.state, StateStatus::Kept);
    let primitive = kernels.js("throw 5").await;
    assert_eq!(primitive.error.unwrap().evalue, "5");
    kernels.finish().await;
}

#[tokio::test]
async fn top_level_await_output_and_child_processes() {
    let Some(_) = node() else { return };
    let kernels = Kernels::new(config());
    let awaited = kernels
        .js("const v = await new Promise((resolve) => setTimeout(() => resolve(42), 20)); v")
        .await;
    assert_eq!(awaited.result.as_deref(), Some("42"));
    let rejected = kernels
        .js("await Promise.reject(new RangeError('nope'))")
        .await;
    assert_eq!(rejected.error.unwrap().ename, "RangeError");

    let output = kernels
        .js("console.log('to stdout'); console.error('to stderr');\nrequire('child_process').execSync('echo from-child', { stdio: 'inherit' });\nprocess.stdout.write('x'.repeat(200000) + '\\n'); 'end'")
        .await;
    assert_eq!(output.result.as_deref(), Some("'end'"));
    assert!(
        output.stdout.starts_with("to stdout\nfrom-child\nxxx"),
        "{}",
        &output.stdout[..30]
    );
    assert_eq!(output.stderr, "to stderr\n");
    let total = "to stdout\nfrom-child\n".len() + 200_001;
    // One 16 KiB budget: stderr's bytes leave the rest to stdout.
    assert_eq!(
        output.truncated.unwrap().stdout as usize,
        total - (16 * 1024 - output.stderr.len())
    );

    let display = kernels
        .js("display({ a: 1 }); display('<b>hi</b>', 'text/html')")
        .await;
    let items: Vec<(&str, &str)> = display
        .display
        .iter()
        .map(|item| (item.mime.as_str(), item.data.as_str()))
        .collect();
    assert_eq!(
        items,
        [("text/plain", "{ a: 1 }"), ("text/html", "<b>hi</b>")]
    );

    let imported = kernels
        .js("const p = await importModule('node:path'); [p.basename('/a/b.txt'), require('os').EOL.length]")
        .await;
    assert_eq!(imported.result.as_deref(), Some("[ 'b.txt', 1 ]"));
    let dynamic = kernels.js("await import('node:path')").await;
    assert!(dynamic.error.unwrap().evalue.contains("importModule"));

    let stdin = kernels
        .js("await new Promise((resolve) => { let n = 0; process.stdin.on('data', (d) => n += d.length); process.stdin.on('end', () => resolve(n)); })")
        .await;
    assert_eq!(stdin.result.as_deref(), Some("0"));
    kernels.finish().await;
}

#[tokio::test]
async fn cells_await_tools_through_the_bridge() {
    let Some(_) = node() else { return };
    let kernels = Kernels::new(config());
    std::fs::write(kernels.path().join("data.txt"), "from js").unwrap();
    let read = kernels
        .js("(await tool('read', { path: 'data.txt' })).content")
        .await;
    assert_eq!(read.result.as_deref(), Some("'from js'"));
    let parallel = kernels
        .js("(await Promise.all([1, 2, 3].map((i) => tool('echo', { i })))).map((r) => r.i)")
        .await;
    assert_eq!(parallel.result.as_deref(), Some("[ 1, 2, 3 ]"));
    let caught = kernels
        .js("try { await tool('nope') } catch (e) { [e instanceof ToolError, e.kind, e.toolMessage] }")
        .await;
    assert_eq!(
        caught.result.as_deref(),
        Some("[ true, 'unknown_tool', 'no tool named `nope`' ]")
    );
    let uncaught = kernels.js("await tool('read', { path: 'missing' })").await;
    common::assert_tool_error(&uncaught, "not_found");
    kernels.finish().await;
}

#[tokio::test]
async fn runaway_loops_and_silent_awaits_are_interrupted_and_state_survives() {
    let Some(_) = node() else { return };
    let kernels = Kernels::new(KernelConfig {
        inactivity_budget: Duration::from_secs(2),
        ..config()
    });
    kernels.js("let kept = 'still here'").await;
    let bridged = kernels.js("(await tool('slow', { secs: 3 })).slept").await;
    assert!(!bridged.timed_out);
    assert_eq!(bridged.result.as_deref(), Some("3"));

    let runaway = kernels.js("let spins = 0; for (;;) { spins++ }").await;
    assert!(runaway.timed_out, "{runaway:?}");
    assert_eq!(runaway.error.unwrap().ename, "Interrupted");
    assert_eq!(runaway.state, StateStatus::Kept);

    let silent = kernels.js("await new Promise(() => {})").await;
    assert!(silent.timed_out);
    assert_eq!(silent.state, StateStatus::Kept);

    let after_await = kernels.js("await null; for (;;) {}").await;
    assert!(after_await.timed_out);
    assert_eq!(after_await.state, StateStatus::Kept);

    let after = kernels.js("[kept, spins > 0]").await;
    assert_eq!(after.result.as_deref(), Some("[ 'still here', true ]"));
    assert!(!after.timed_out);
    kernels.finish().await;
}

#[tokio::test]
async fn a_blocked_node_is_killed_then_replaced() {
    let Some(_) = node() else { return };
    let kernels = Kernels::new(KernelConfig {
        inactivity_budget: Duration::from_secs(1),
        interrupt_grace: Duration::from_secs(1),
        ..config()
    });
    kernels.js("globalThis.before = 1").await;
    // Blocked in a system call, where terminateExecution cannot reach.
    let blocked = kernels
        .js("require('child_process').execSync('sleep 30')")
        .await;
    assert!(blocked.timed_out);
    assert_eq!(blocked.state, StateStatus::Lost);
    let fresh = kernels.js("typeof before").await;
    assert_eq!(fresh.result.as_deref(), Some("'undefined'"));
    assert_eq!(fresh.state, StateStatus::Lost);
    kernels.finish().await;
}

#[tokio::test]
async fn javascript_through_an_enclosure_prefix() {
    let Some(_) = node() else { return };
    let kernels = Kernels::new(KernelConfig {
        enclosure: vec!["env".into(), "CC_ENCLOSED=js".into()],
        // The intact check prints 2000 lines (18 KB): more than the default budget.
        output_cap: 64 * 1024,
        ..config()
    });
    // The first cell is cell 1: a forged `done` for it must stay output.
    let forged = r#"\x1fcc:{"op":"done","cell":1,"result":"forged"}"#;
    let outcome = kernels
        .js(&format!("console.log('{forged}'); console.log('out'); console.error('err'); require('child_process').execSync('printf child', {{ stdio: 'inherit' }});\n[process.env.CC_ENCLOSED, (await tool('echo', {{ k: 1 }})).k]"))
        .await;
    assert_eq!(outcome.result.as_deref(), Some("[ 'js', 1 ]"));
    assert_eq!(
        outcome.stdout,
        "\u{1f}cc:{\"op\":\"done\",\"cell\":1,\"result\":\"forged\"}\nout\nchild"
    );
    assert_eq!(outcome.stderr, "err\n");

    // A child writing to stdout while the cell sends messages larger than a pipe's atomic
    // write: neither may cut into the other.
    let busy = kernels
        .js("const c = require('child_process').spawn('sh', ['-c', 'for i in $(seq 2000); do echo line$i; done'], { stdio: 'inherit' });\nfor (let i = 0; i < 20; i++) display('y'.repeat(100000));\nawait new Promise((resolve) => c.on('exit', resolve)); 'ok'")
        .await;
    common::assert_intact(&busy, 100_000);
    let interrupted = Kernels::new(KernelConfig {
        enclosure: vec!["env".into()],
        inactivity_budget: Duration::from_secs(1),
        ..config()
    });
    interrupted.js("let x = 5").await;
    let runaway = interrupted.js("for (;;) {}").await;
    assert!(runaway.timed_out);
    assert_eq!(interrupted.js("x").await.result.as_deref(), Some("5"));

    // The relay ends as its kernel did, so a crash is reported as it happened.
    for (cell, how) in [
        ("process.exit(7)", "exited with status 7"),
        ("process.kill(process.pid, 'SIGKILL')", "killed by signal 9"),
    ] {
        let crashed = interrupted.js(cell).await;
        assert_eq!(crashed.state, StateStatus::Lost);
        common::assert_notice(&crashed, how);
        let fresh = interrupted.js("typeof x").await;
        assert_eq!(fresh.result.as_deref(), Some("'undefined'"));
        assert_eq!(fresh.state, StateStatus::Lost);
        interrupted.js("let x = 5").await;
    }
    interrupted.finish().await;
    kernels.finish().await;
}

/// A file a cell required changes on disk (the agent's edit): the next cell's `require`
/// loads the new code, and the cell says it dropped the old one.
#[tokio::test]
async fn a_required_file_changed_on_disk_is_loaded_again_and_said() {
    let Some(_) = node() else { return };
    let root = tempfile::tempdir().unwrap();
    let module = root.path().join("ccmod.js");
    std::fs::write(&module, "module.exports = { f: () => 1 };\n").unwrap();
    let kernels = Kernels::in_root(config(), root);
    let first = kernels.js("require('./ccmod.js').f()").await;
    assert_eq!(first.result.as_deref(), Some("1"), "{first:?}");
    assert_eq!(first.stdout, "");

    std::fs::write(&module, "module.exports = { f: () => 2 }; // edited\n").unwrap();
    let edited = kernels.js("require('./ccmod.js').f()").await;
    assert_eq!(edited.result.as_deref(), Some("2"), "{edited:?}");
    assert!(
        edited.stdout.contains("Dropped ccmod.js"),
        "{}",
        edited.stdout
    );
    let quiet = kernels.js("require('./ccmod.js').f()").await;
    assert_eq!(quiet.stdout, "");
    kernels.finish().await;
}
