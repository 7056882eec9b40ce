//! Issue 32 on a real TypeScript project (rxjs 7.8.2): a class method is found through `this`,
//! and through a parameter typed by an interface the class implements (a dispatch edge).

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

use cc_graph::{Graph, DEFAULT_MIN_CONFIDENCE};

use crate::common;

/// The call sites of every callable `name` defined in `path` (an overloaded method has a
/// definition per signature).
fn callers(graph: &Graph, name: &str, path: &str) -> Vec<String> {
    let defs = graph.find(name, Some(path)).unwrap();
    assert!(
        defs.iter().any(|d| d.kind.is_callable()),
        "{name} not found in {path}: {defs:?}"
    );
    let mut out: Vec<String> = Vec::new();
    for def in defs.iter().filter(|d| d.kind.is_callable()) {
        let found = graph.callers(def.id, DEFAULT_MIN_CONFIDENCE).unwrap();
        out.extend(
            found
                .value
                .sites
                .iter()
                .map(|s| format!("{}:{} {}", s.path, s.line, s.rung.as_str())),
        );
    }
    out.sort();
    out
}

#[test]
fn typescript_rxjs_calls_through_this_and_interface_typed_parameters() {
    let Some(project) = cc_test_support::copy_project("rxjs") else {
        return;
    };
    let cache = tempfile::tempdir().unwrap();
    let (graph, _) = Graph::open_with(project.path(), common::config(cache.path())).unwrap();

    // `this._next(value!)` in `Subscriber.next`.
    let next = callers(&graph, "_next", "src/internal/Subscriber.ts");
    assert!(
        next.contains(&"src/internal/Subscriber.ts:71 exact".to_owned()),
        "{next:?}"
    );

    // `scheduler.schedule(…)` with `scheduler: SchedulerLike`: the interface's method, and
    // the class implementing it may run.
    let site = "src/internal/util/executeSchedule.ts:26";
    let on_interface = callers(&graph, "schedule", "src/internal/types.ts");
    assert!(
        on_interface.contains(&format!("{site} exact")),
        "{on_interface:?}"
    );
    let on_class = callers(&graph, "schedule", "src/internal/Scheduler.ts");
    assert!(
        on_class.contains(&format!("{site} dispatch")),
        "{on_class:?}"
    );
}

/// An overload signature (`export function innerFrom<O …>(input: O): …;`, no body) has its
/// implementation's callers: calls resolve to the body, and asking about any signature of the
/// function means those calls.
#[test]
fn typescript_rxjs_an_overload_signature_has_its_implementations_callers() {
    let Some(project) = cc_test_support::copy_project("rxjs") else {
        return;
    };
    let cache = tempfile::tempdir().unwrap();
    let (graph, _) = Graph::open_with(project.path(), common::config(cache.path())).unwrap();
    let path = "src/internal/observable/innerFrom.ts";
    let defs = graph.find("innerFrom", Some(path)).unwrap();
    let signature = defs.iter().find(|d| d.line == 15).unwrap();
    let body = defs.iter().find(|d| d.line == 16).unwrap();
    let sites = |id| {
        let answer = graph.callers(id, DEFAULT_MIN_CONFIDENCE).unwrap();
        answer
            .value
            .sites
            .iter()
            .map(|s| format!("{}:{}", s.path, s.line))
            .collect::<Vec<_>>()
    };
    let of_body = sites(body.id);
    assert!(
        of_body.contains(&"src/internal/observable/defer.ts:54".to_owned()),
        "{of_body:?}"
    );
    assert_eq!(sites(signature.id), of_body);
}

/// A receiver typed by a union of a class and the interface it implements (`destination:
/// Subscriber<any> | Observer<any>`) is the interface: `this.destination.next(value)` calls
/// `Observer.next` (a member of function type) and may run each implementation. A `super`
/// call runs the base's method only: `super.next(value)` in `BehaviorSubject` is no caller of
/// `AsyncSubject.next`, another subclass's override.
#[test]
fn typescript_rxjs_union_receivers_and_super_calls() {
    let Some(project) = cc_test_support::copy_project("rxjs") else {
        return;
    };
    let cache = tempfile::tempdir().unwrap();
    let (graph, _) = Graph::open_with(project.path(), common::config(cache.path())).unwrap();
    let consumer = callers(&graph, "next", "src/internal/Subscriber.ts");
    assert!(
        consumer.contains(&"src/internal/Subscriber.ts:113 dispatch".to_owned()),
        "{consumer:?}"
    );
    let async_next = callers(&graph, "next", "src/internal/AsyncSubject.ts");
    assert!(
        !async_next
            .iter()
            .any(|s| s.starts_with("src/internal/BehaviorSubject.ts:")),
        "{async_next:?}"
    );
}
