//! Issue 26: the first build of a big index is cancellable and resumes on the next open, and
//! what it ends with equals a clean build. On a real project (rxjs, 1,000+ TypeScript files).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use cc_graph::{Graph, GraphError};

use crate::common;

#[test]
fn a_cancelled_first_build_keeps_what_it_read_and_the_next_open_finishes_it() {
    let Some(project) = cc_test_support::copy_project("rxjs") else {
        return;
    };
    let root = project.path();
    let cache = tempfile::tempdir().unwrap();
    let config = common::config(cache.path());

    // Raised from the progress report once a few hundred files were read.
    let cancel = Arc::new(AtomicBool::new(false));
    let total = Arc::new(AtomicUsize::new(0));
    let (flag, seen_total) = (cancel.clone(), total.clone());
    let progress: cc_graph::ProgressFn = Arc::new(move |done, of| {
        seen_total.store(of, Ordering::Relaxed);
        if done >= 300 {
            flag.store(true, Ordering::Relaxed);
        }
    });
    let first = Graph::open_cancellable(root, config.clone(), Some(progress), Some(cancel));
    let done = match first {
        Err(GraphError::Cancelled { done, total }) => {
            assert!(done >= 300 && done < total, "{done} of {total}");
            done
        }
        other => panic!("the build was not cancelled: {other:?}"),
    };
    let files = total.load(Ordering::Relaxed);
    assert!(files > 1_000, "rxjs has {files} indexed files");

    // The next open reads only the rest, and ends where a clean build ends.
    let (resumed, stats) = Graph::open_with(root, config).unwrap();
    assert!(
        stats.extracted <= files - done && stats.extracted > 0,
        "resumed by extracting {} of {files} (cancelled after {done})",
        stats.extracted
    );
    let clean_cache = tempfile::tempdir().unwrap();
    let (clean, _) = Graph::open_with(root, common::config(clean_cache.path())).unwrap();
    assert!(
        resumed.snapshot().unwrap() == clean.snapshot().unwrap(),
        "the resumed index differs from a clean build"
    );
    // The mark that asked for a full resolution is gone: a third open does nothing.
    drop(resumed);
    let (_, again) = Graph::open_with(root, common::config(cache.path())).unwrap();
    assert_eq!(
        (again.extracted, again.re_resolved),
        (0, 0),
        "a settled index is not resolved again"
    );
}
