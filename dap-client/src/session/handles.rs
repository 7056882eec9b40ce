//! The handles a caller gets: frame ids and variables references are this session's own
//! numbers, never the adapter's, and each is valid only until the program next resumes.
//!
//! DAP references are valid only while the program stays stopped, and adapters reuse them:
//! delve hands out Locals reference 1000 at every stop, so an old 1000 passed back after a
//! step would silently read whatever 1000 names now. Our numbers only grow, so a number from
//! an earlier stop is always recognised and refused (`stale_reference`), never answered with
//! other data. Thread ids are the adapter's (they name a thread for its whole life), but one
//! not given out since the last resume is refused the same way.

use std::collections::{HashMap, HashSet};

use crate::error::DebugError;

/// What a handle names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    /// A stack frame (`stack`, `stopped.frame_id`).
    Frame,
    /// A variables container (a scope, a variable with children, an evaluated value).
    Variables,
}

impl Kind {
    fn noun(self) -> &'static str {
        match self {
            Kind::Frame => "frame",
            Kind::Variables => "reference",
        }
    }

    fn long(self) -> &'static str {
        match self {
            Kind::Frame => "a frame id",
            Kind::Variables => "a variables reference",
        }
    }

    fn remedy(self) -> &'static str {
        match self {
            Kind::Frame => "call stack again",
            Kind::Variables => "call stack/scopes (or locals) again",
        }
    }

    fn source(self) -> &'static str {
        match self {
            Kind::Frame => "frame ids come from `stack` or a stop's `frame`",
            Kind::Variables => "references come from `scopes`, `locals`, `variables` or `evaluate`",
        }
    }
}

/// Old thread ids remembered to tell "stale" from "never seen"; past this the memory is
/// dropped (such an id is then only "unknown").
const MAX_OLD_THREADS: usize = 4096;

/// The handles of the current stop, and how to recognise older ones.
#[derive(Debug)]
pub(crate) struct Handles {
    /// The resume count these handles belong to.
    epoch: u64,
    /// The next number to give out.
    next: i64,
    /// The first number given out in this epoch: below it (and above 0) is stale.
    first: i64,
    current: HashMap<i64, (Kind, i64)>,
    by_adapter: HashMap<(Kind, i64), i64>,
    /// Frames by (thread, depth): adapters such as delve give the same frame a new id in
    /// every `stackTrace` answer; the caller sees one number per frame.
    frames_at: HashMap<(i64, usize), i64>,
    threads: HashSet<i64>,
    old_threads: HashSet<i64>,
}

impl Default for Handles {
    fn default() -> Self {
        Handles {
            epoch: 0,
            next: 1,
            first: 1,
            current: HashMap::new(),
            by_adapter: HashMap::new(),
            frames_at: HashMap::new(),
            threads: HashSet::new(),
            old_threads: HashSet::new(),
        }
    }
}

impl Handles {
    /// Forgets every handle when the program has resumed since they were given out.
    pub(crate) fn sync(&mut self, epoch: u64) {
        if epoch == self.epoch {
            return;
        }
        self.epoch = epoch;
        self.first = self.next;
        self.current.clear();
        self.by_adapter.clear();
        self.frames_at.clear();
        if self.old_threads.len() + self.threads.len() > MAX_OLD_THREADS {
            self.old_threads.clear();
        }
        self.old_threads.extend(self.threads.drain());
    }

    /// Our number for the adapter's `id` (0, "no children", stays 0); the same number for
    /// the same id until the program resumes.
    pub(crate) fn issue(&mut self, kind: Kind, id: i64) -> i64 {
        if id <= 0 {
            return 0;
        }
        if let Some(ours) = self.by_adapter.get(&(kind, id)) {
            return *ours;
        }
        let ours = self.next;
        self.next += 1;
        self.current.insert(ours, (kind, id));
        self.by_adapter.insert((kind, id), ours);
        ours
    }

    /// Our number for the frame at `depth` (0: top) of `thread`, whose id in this answer is
    /// `id`: the same number for the same frame until the program resumes.
    pub(crate) fn issue_frame(&mut self, thread: i64, depth: usize, id: i64) -> i64 {
        if let Some(ours) = self.frames_at.get(&(thread, depth)) {
            return *ours;
        }
        let ours = self.issue(Kind::Frame, id);
        self.frames_at.insert((thread, depth), ours);
        ours
    }

    /// The adapter's id behind our number, or why it cannot be used.
    pub(crate) fn resolve(&self, kind: Kind, ours: i64) -> Result<i64, DebugError> {
        match self.current.get(&ours) {
            Some((found, id)) if *found == kind => Ok(*id),
            Some((found, _)) => Err(DebugError::InvalidArguments(format!(
                "{ours} is {}, not {}",
                found.long(),
                kind.long()
            ))),
            None if ours >= 1 && ours < self.first => Err(DebugError::StaleReference {
                what: format!("{} {ours}", kind.noun()),
                remedy: kind.remedy().into(),
            }),
            None => Err(DebugError::InvalidArguments(format!(
                "{} {ours} was never given out in this session; {}",
                kind.noun(),
                kind.source()
            ))),
        }
    }

    /// Records a thread id the caller was shown.
    pub(crate) fn note_thread(&mut self, thread: i64) {
        self.threads.insert(thread);
    }

    /// Whether `thread` may be used now.
    pub(crate) fn check_thread(&self, thread: i64) -> Result<(), DebugError> {
        if self.threads.contains(&thread) {
            return Ok(());
        }
        if self.old_threads.contains(&thread) {
            return Err(DebugError::StaleReference {
                what: format!("thread {thread}"),
                remedy: "call threads again, or leave `thread_id` out for the stopped thread"
                    .into(),
            });
        }
        Err(DebugError::InvalidArguments(format!(
            "thread {thread} was never given out in this session; `threads` lists them"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_expire_with_the_stop_even_when_the_adapter_reuses_its_own() {
        let mut handles = Handles::default();
        handles.sync(1);
        let locals = handles.issue(Kind::Variables, 1000);
        let frame = handles.issue(Kind::Frame, 1000);
        assert_ne!(locals, frame);
        assert_eq!(
            handles.issue(Kind::Variables, 1000),
            locals,
            "stable in a stop"
        );
        assert_eq!(handles.issue(Kind::Variables, 0), 0);
        assert_eq!(handles.resolve(Kind::Variables, locals).unwrap(), 1000);
        let wrong = handles.resolve(Kind::Variables, frame).unwrap_err();
        assert_eq!(wrong.kind(), "invalid_arguments");
        assert!(wrong.to_string().contains("is a frame id"), "{wrong}");
        handles.note_thread(7);
        handles.check_thread(7).unwrap();
        // The same frame under a new adapter id is the same number.
        let top = handles.issue_frame(7, 0, 2000);
        assert_eq!(handles.issue_frame(7, 0, 2001), top);
        assert_eq!(handles.resolve(Kind::Frame, top).unwrap(), 2000);
        assert_ne!(handles.issue_frame(7, 1, 2002), top);

        // The program ran: delve's 1000 is something else now, and ours says so.
        handles.sync(2);
        let fresh = handles.issue(Kind::Variables, 1000);
        assert!(fresh > locals);
        let stale = handles.resolve(Kind::Variables, locals).unwrap_err();
        assert_eq!(stale.kind(), "stale_reference");
        assert_eq!(
            stale.to_string(),
            format!(
                "reference {locals} is from before the program last resumed: the program has \
                 run since; call stack/scopes (or locals) again"
            )
        );
        let stale_frame = handles.resolve(Kind::Frame, frame).unwrap_err();
        assert_eq!(stale_frame.kind(), "stale_reference");
        assert_eq!(
            handles.check_thread(7).unwrap_err().kind(),
            "stale_reference"
        );
        let never = handles.resolve(Kind::Frame, 999).unwrap_err();
        assert_eq!(never.kind(), "invalid_arguments");
        assert!(never.to_string().contains("never given out"), "{never}");
        assert_eq!(
            handles.check_thread(8).unwrap_err().kind(),
            "invalid_arguments"
        );
        handles.sync(2);
        assert_eq!(handles.resolve(Kind::Variables, fresh).unwrap(), 1000);
    }
}
