//! The host file tools under adversarial input: huge and sparse files, over-long lines,
//! FIFOs and devices, size caps, file modes, and the symlink flip race through the tools.

#![allow(clippy::unwrap_used)] // Tests unwrap freely: a panic is a failure.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use cc_tools::{Registry, Resources, Run};
use serde_json::{json, Value};

fn registry(dir: &Path) -> Registry {
    Resources {
        host_files: true,
        ..Default::default()
    }
    .build(Run::builder(dir).conversation("bounds").build())
}

async fn call(registry: &Registry, tool: &str, args: Value) -> Value {
    match registry.call(tool, args).await {
        Ok(output) => {
            cc_tools::testing::assert_typed_result(tool, &output.value, &output.render_text());
            output.value
        }
        Err(error) => error.to_envelope(),
    }
}

use cc_test_support::{peak_rss_kib, umask};

#[tokio::test]
async fn a_16_gb_sparse_file_reads_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let file = std::fs::File::create(dir.path().join("sparse.bin")).unwrap();
    file.set_len(16 << 30).unwrap();
    let registry = registry(dir.path());
    let started = Instant::now();
    let result = call(
        &registry,
        "read",
        json!({"path": "sparse.bin", "limit": 10}),
    )
    .await;
    let elapsed = started.elapsed();
    let rss = peak_rss_kib();
    eprintln!("16 GiB sparse read: {elapsed:?}, peak RSS {rss} KiB");
    // One line of NUL bytes: cut at the line cap, with where to continue, and no total.
    assert_eq!(result["bytes"], 16u64 << 30, "{result}");
    assert_eq!(result["total_lines"], Value::Null);
    assert_eq!(result["truncated"], true);
    assert_eq!(result["cut_lines"][0]["continue_at"], 16 * 1024);
    assert!(result["content"].as_str().unwrap().len() < 17 * 1024);
    assert!(rss < 200 * 1024, "peak RSS {rss} KiB");
    assert!(elapsed < Duration::from_secs(20), "{elapsed:?}");
    // `edit` refuses it by size before reading it.
    let edit = call(
        &registry,
        "edit",
        json!({"path": "sparse.bin", "old_text": "a", "new_text": "b"}),
    )
    .await;
    assert_eq!(edit["error"]["kind"], "too_large", "{edit}");
    assert!(peak_rss_kib() < 200 * 1024);
}

#[tokio::test]
async fn an_over_long_line_is_cut_with_an_offset_to_continue_from() {
    let dir = tempfile::tempdir().unwrap();
    let long = "x".repeat(2 * 1024 * 1024);
    std::fs::write(dir.path().join("min.js"), format!("a\n{long}\nb\n")).unwrap();
    let registry = registry(dir.path());
    let first = call(&registry, "read", json!({"path": "min.js"})).await;
    let content = first["content"].as_str().unwrap();
    assert!(content.starts_with("a\nxxxx"), "{}", &content[..20]);
    assert!(
        content.contains("continue with byte_offset: 16386"),
        "{first}"
    );
    assert!(
        content.ends_with("b\n"),
        "the lines after a cut line still come"
    );
    assert_eq!(first["total_lines"], 3);
    assert_eq!(first["end_line"], 3);
    assert_eq!(first["cut_lines"][0]["line"], 2);
    let next = call(
        &registry,
        "read",
        json!({"path": "min.js", "byte_offset": 16386, "limit": 1}),
    )
    .await;
    assert_eq!(next["byte_offset"], 16386);
    assert!(next["content"].as_str().unwrap().starts_with("xxxx"));
    assert_eq!(next["start_line"], Value::Null);
    // The byte cap: many long-ish lines stop at 256 KiB, never mid-line.
    let lines: String = (0..100)
        .map(|i| format!("{i} {}\n", "y".repeat(8000)))
        .collect();
    std::fs::write(dir.path().join("wide.txt"), &lines).unwrap();
    let wide = call(&registry, "read", json!({"path": "wide.txt"})).await;
    let text = wide["content"].as_str().unwrap();
    assert!(
        text.len() <= 256 * 1024 && text.ends_with('\n'),
        "{}",
        text.len()
    );
    assert_eq!(wide["truncated"], true);
    assert_eq!(wide["total_lines"], 100);
}

#[tokio::test]
async fn fifos_devices_and_sockets_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(dir.path().join("pipe"))
        .status()
        .unwrap();
    assert!(status.success());
    let _socket = std::os::unix::net::UnixListener::bind(dir.path().join("sock")).unwrap();
    let mut names = vec!["pipe", "sock"];
    // Making a device node needs root; CI runs as root.
    let made = std::process::Command::new("mknod")
        .args([dir.path().join("zero").to_str().unwrap(), "c", "1", "5"])
        .status()
        .is_ok_and(|s| s.success());
    if made {
        names.push("zero");
    } else {
        eprintln!("not root: the character device case is left out");
    }
    let registry = registry(dir.path());
    for name in names {
        for (tool, args) in [
            ("read", json!({"path": name})),
            (
                "edit",
                json!({"path": name, "old_text": "a", "new_text": "b"}),
            ),
            ("write", json!({"path": name, "content": "x"})),
        ] {
            let started = Instant::now();
            let result = tokio::time::timeout(Duration::from_secs(10), call(&registry, tool, args))
                .await
                .unwrap_or_else(|_| panic!("{tool} {name} hung"));
            assert_eq!(
                result["error"]["kind"], "not_a_regular_file",
                "{tool} {name}: {result}"
            );
            assert!(started.elapsed() < Duration::from_secs(5));
        }
    }
}

#[tokio::test]
async fn write_refuses_content_over_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(dir.path());
    let big = "z".repeat(16 * 1024 * 1024 + 1);
    let result = call(
        &registry,
        "write",
        json!({"path": "big.txt", "content": big}),
    )
    .await;
    assert_eq!(result["error"]["kind"], "too_large");
    assert!(!dir.path().join("big.txt").exists());
}

#[tokio::test]
async fn new_files_get_the_umask_and_replaced_files_keep_their_mode() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(dir.path());
    let expected = 0o666 & !umask();
    let mode = |name: &str| {
        std::fs::metadata(dir.path().join(name))
            .unwrap()
            .permissions()
            .mode()
            & 0o7777
    };
    call(
        &registry,
        "write",
        json!({"path": "w.txt", "content": "w\n"}),
    )
    .await;
    assert_eq!(mode("w.txt"), expected, "write");
    let patch = "--- /dev/null\n+++ b/p.txt\n@@ -0,0 +1 @@\n+p\n";
    let result = call(&registry, "apply_patch", json!({"patch": patch})).await;
    assert!(result.get("error").is_none(), "{result}");
    assert_eq!(mode("p.txt"), expected, "apply_patch create");
    std::fs::set_permissions(
        dir.path().join("p.txt"),
        std::fs::Permissions::from_mode(0o740),
    )
    .unwrap();
    let patch = "--- a/p.txt\n+++ b/p.txt\n@@ -1 +1 @@\n-p\n+q\n";
    call(&registry, "apply_patch", json!({"patch": patch})).await;
    assert_eq!(mode("p.txt"), 0o740, "apply_patch replace");
    call(
        &registry,
        "edit",
        json!({"path": "p.txt", "old_text": "q", "new_text": "r"}),
    )
    .await;
    assert_eq!(mode("p.txt"), 0o740, "edit");
}

/// The flip race through the tools: `race/` flips between a folder and a symlink out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_flip_race_never_escapes_through_read_or_write() {
    const ITERATIONS: usize = 10_000;
    let mut race = cc_test_support::FlipRace::start();
    let root = race.root().to_path_buf();
    let registry = registry(&root);
    let (mut read_inside, mut read_escapes, mut written) = (0, 0, 0);
    let (started, mut i) = (Instant::now(), 0);
    // Past ITERATIONS until the flipper has flipped often enough (a busy machine starves it).
    while (i < ITERATIONS || race.flips() < 1000) && started.elapsed() < Duration::from_secs(60) {
        i += 1;
        let read = call(&registry, "read", json!({"path": "race/secret.txt"})).await;
        match read["content"].as_str() {
            Some("outside") => read_escapes += 1,
            Some(_) => read_inside += 1,
            None => {}
        }
        let write = call(
            &registry,
            "write",
            json!({"path": format!("race/w{}", i % 5), "content": "ours"}),
        )
        .await;
        if write.get("error").is_none() {
            written += 1;
        }
    }
    let (flips, stray) = race.finish();
    eprintln!(
        "tools flip race: {i} reads ({read_inside} inside, {read_escapes} escapes), {i} writes \
         ({written} written), {flips} flips, outside holds {stray:?}"
    );
    assert_eq!(read_escapes, 0);
    assert_eq!(stray, ["secret.txt"], "stray files outside");
    assert!(read_inside > 0 && written > 0);
}
