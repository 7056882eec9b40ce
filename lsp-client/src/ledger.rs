//! Which diagnostics were already reported, per file, so that only new ones are returned.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::diagnostic::{Diagnostic, DiagnosticKey};

/// A per-run record of the diagnostics currently reported for each file, as a multiset of
/// (severity, code, message) keys — position deliberately excluded, so a diagnostic that moved
/// four lines down is not new. A diagnostic that disappears leaves the ledger: if it comes
/// back, it is new again, unless the file already had it before the run changed anything
/// (its [`Ledger::seed`]ed baseline). Servers hide some findings while a file has errors
/// (gopls drops its vet findings from a package that does not type-check), so a warning
/// the code always had is not new when a fix brings it back.
///
/// ```
/// use cc_lsp_client::{Diagnostic, Ledger, Severity};
/// let diag = |line| Diagnostic {
///     line, character: 0, end_line: line, severity: Severity::Error,
///     code: Some("E1".into()), message: "boom".into(), source: None,
///     unnecessary: false, deprecated: false,
/// };
/// let mut ledger = Ledger::default();
/// let path = std::path::Path::new("/w/a.py");
/// assert_eq!(ledger.update(path, vec![diag(3)]).len(), 1); // new
/// assert!(ledger.update(path, vec![diag(7)]).is_empty()); // moved: not new
/// assert!(ledger.update(path, vec![]).is_empty()); // fixed
/// assert_eq!(ledger.update(path, vec![diag(7)]).len(), 1); // back: new again
/// ```
#[derive(Debug, Default, Clone)]
pub struct Ledger {
    files: HashMap<PathBuf, HashMap<DiagnosticKey, usize>>,
    /// What each seeded file reported before the run changed it: never new.
    baseline: HashMap<PathBuf, HashMap<DiagnosticKey, usize>>,
    /// Files whose diagnostics the ledger knows (with none, too): a file not here has no
    /// baseline yet, so everything it reports would look new.
    known: std::collections::HashSet<PathBuf>,
}

impl Ledger {
    /// Records `current` as what `path` reports now, and returns those of them that are new:
    /// for each key, the occurrences beyond both the count the ledger held and the count of
    /// the file's baseline (the later ones by position).
    pub fn update(&mut self, path: &Path, current: Vec<Diagnostic>) -> Vec<Diagnostic> {
        self.update_split(path, current).0
    }

    /// [`Ledger::update`], and the rest of `current` too: `(new, older)`, where `older` are
    /// the occurrences the ledger or the baseline already held (a file that reports them is
    /// not clean, though nothing in it is new).
    pub fn update_split(
        &mut self,
        path: &Path,
        mut current: Vec<Diagnostic>,
    ) -> (Vec<Diagnostic>, Vec<Diagnostic>) {
        self.known.insert(path.to_path_buf());
        current.sort_by_key(|d| (d.line, d.character));
        let before = self.files.remove(path).unwrap_or_default();
        let baseline = self.baseline.get(path);
        let mut now: HashMap<DiagnosticKey, usize> = HashMap::new();
        let mut new = Vec::new();
        let mut older = Vec::new();
        for diagnostic in current {
            let key = diagnostic.key();
            let seen = now.entry(key.clone()).or_insert(0);
            *seen += 1;
            let held = before.get(&key).copied().unwrap_or(0);
            let had = baseline.and_then(|b| b.get(&key)).copied().unwrap_or(0);
            if *seen > held.max(had) {
                new.push(diagnostic);
            } else {
                older.push(diagnostic);
            }
        }
        if !now.is_empty() {
            self.files.insert(path.to_path_buf(), now);
        }
        (new, older)
    }

    /// Records `current` as what `path` already reports, before a change: the baseline that
    /// later [`Ledger::update`]s are compared with. Nothing is returned as new.
    pub fn seed(&mut self, path: &Path, current: Vec<Diagnostic>) {
        let _ = self.update(path, current);
        let held = self.files.get(path).cloned().unwrap_or_default();
        self.baseline.insert(path.to_path_buf(), held);
    }

    /// Takes `path`'s baseline again after the file (or one it depends on) changed outside the
    /// run: `current` is what it reports now; returns what is new in it since the ledger last
    /// looked (what the outside change brought), and records `current` as a baseline too, so
    /// none of it is ever new for a later write.
    pub fn rebase(&mut self, path: &Path, current: Vec<Diagnostic>) -> Vec<Diagnostic> {
        let added = self.update(path, current);
        let held = self.files.get(path).cloned().unwrap_or_default();
        let baseline = self.baseline.entry(path.to_path_buf()).or_default();
        for (key, count) in held {
            let kept = baseline.entry(key).or_insert(0);
            *kept = (*kept).max(count);
        }
        added
    }

    /// Whether the ledger has a baseline for `path` (seeded or updated before).
    pub fn is_known(&self, path: &Path) -> bool {
        self.known.contains(path)
    }

    /// After `old` was renamed to `new` everywhere: the diagnostics already reported now
    /// speak of `new` (a message naming the symbol changes with it), so the recorded
    /// messages are renamed too, whole words only. Otherwise every old diagnostic that
    /// mentions the symbol would come back as new.
    pub fn rename_symbol(&mut self, old: &str, new: &str) {
        if old.is_empty() || old == new {
            return;
        }
        for keys in self.files.values_mut().chain(self.baseline.values_mut()) {
            let renamed: Vec<(DiagnosticKey, usize)> = keys
                .drain()
                .map(|((severity, code, message), count)| {
                    ((severity, code, replace_word(&message, old, new)), count)
                })
                .collect();
            for (key, count) in renamed {
                *keys.entry(key).or_insert(0) += count;
            }
        }
    }

    /// Records that `path` is gone: it reports nothing now, and its baseline stays, so a file
    /// deleted and written back (by the run, by `git checkout`) with the problems it always
    /// had brings nothing new.
    pub fn removed(&mut self, path: &Path) {
        let _ = self.update(path, Vec::new());
    }

    /// Forgets `path` entirely (its baseline too).
    pub fn forget(&mut self, path: &Path) {
        self.files.remove(path);
        self.baseline.remove(path);
        self.known.remove(path);
    }

    /// How many diagnostics the ledger holds for `path`.
    pub fn count(&self, path: &Path) -> usize {
        self.files.get(path).map_or(0, |keys| keys.values().sum())
    }
}

/// `text` with every whole-word `old` replaced by `new`.
fn replace_word(text: &str, old: &str, new: &str) -> String {
    let is_word = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(old) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + old.len()..].chars().next();
        out.push_str(&rest[..at]);
        if before.is_some_and(is_word) || after.is_some_and(is_word) {
            out.push_str(old);
        } else {
            out.push_str(new);
        }
        rest = &rest[at + old.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn diag(line: u32, message: &str) -> Diagnostic {
        crate::diagnostic::test_error(line, message)
    }

    #[test]
    fn multiset_counts_duplicates() {
        let mut ledger = Ledger::default();
        let path = Path::new("/a");
        assert_eq!(ledger.update(path, vec![diag(1, "x")]).len(), 1);
        let new = ledger.update(path, vec![diag(1, "x"), diag(9, "x")]);
        assert_eq!(new, vec![diag(9, "x")]);
        assert!(ledger
            .update(path, vec![diag(4, "x"), diag(5, "x")])
            .is_empty());
        assert_eq!(ledger.count(path), 2);
        ledger.forget(path);
        assert!(!ledger.is_known(path));
        assert_eq!(ledger.update(path, vec![diag(4, "x")]).len(), 1);
    }

    /// What is not new is handed back as older, occurrence by occurrence: two held and a
    /// third added of one message are two older and one new.
    #[test]
    fn a_split_keeps_what_was_held_apart_from_what_is_new() {
        let mut ledger = Ledger::default();
        let path = Path::new("/s");
        ledger.seed(path, vec![diag(1, "x"), diag(2, "x"), diag(3, "y")]);
        let (new, older) =
            ledger.update_split(path, vec![diag(1, "x"), diag(5, "x"), diag(6, "x")]);
        assert_eq!(new, vec![diag(6, "x")]);
        assert_eq!(older, vec![diag(1, "x"), diag(5, "x")]);
    }

    #[test]
    fn a_rename_carries_the_recorded_messages_along() {
        let mut ledger = Ledger::default();
        let path = Path::new("/r");
        ledger.seed(
            path,
            vec![diag(1, "\"to_native\" is not exported; to_native_x stays")],
        );
        ledger.rename_symbol("to_native", "to_str");
        assert!(ledger
            .update(
                path,
                vec![diag(1, "\"to_str\" is not exported; to_native_x stays")]
            )
            .is_empty());
        assert_eq!(replace_word("a ab a_b a", "a", "z"), "z ab a_b z");
    }

    #[test]
    fn a_seeded_file_reports_only_what_is_added() {
        let mut ledger = Ledger::default();
        let path = Path::new("/b");
        assert!(!ledger.is_known(path));
        ledger.seed(path, vec![diag(1, "old"), diag(2, "old")]);
        assert!(ledger.is_known(path));
        assert_eq!(
            ledger.update(path, vec![diag(5, "old"), diag(6, "old"), diag(7, "new")]),
            vec![diag(7, "new")]
        );
        // Seeding with nothing still records a baseline.
        let clean = Path::new("/c");
        ledger.seed(clean, Vec::new());
        assert!(ledger.is_known(clean));
    }

    #[test]
    fn a_baseline_finding_hidden_while_broken_is_not_new_when_it_returns() {
        let mut ledger = Ledger::default();
        let path = Path::new("/d");
        ledger.seed(path, vec![diag(9, "vet")]);
        // Broken: the server hides the vet finding and reports the error.
        assert_eq!(
            ledger.update(path, vec![diag(3, "err")]),
            vec![diag(3, "err")]
        );
        // Fixed: the vet finding is back, the code always had it.
        assert!(ledger.update(path, vec![diag(9, "vet")]).is_empty());
        // What the run itself added and fixed is new again when it comes back.
        assert!(ledger.update(path, vec![diag(9, "vet")]).is_empty());
        assert!(ledger.update(path, vec![]).is_empty());
        assert_eq!(
            ledger.update(path, vec![diag(3, "err")]),
            vec![diag(3, "err")]
        );
        // A second copy beyond the baseline's count is new.
        assert_eq!(
            ledger.update(path, vec![diag(3, "err"), diag(9, "vet"), diag(10, "vet")]),
            vec![diag(10, "vet")]
        );
        ledger.forget(path);
        assert_eq!(ledger.update(path, vec![diag(9, "vet")]).len(), 1);
    }

    fn arb_diags() -> impl Strategy<Value = Vec<Diagnostic>> {
        prop::collection::vec((0u32..50, 0usize..4), 0..8).prop_map(|items| {
            items
                .into_iter()
                .map(|(line, m)| diag(line, ["a", "b", "c", "d"][m]))
                .collect()
        })
    }

    proptest! {
        /// Reporting the same set twice (in any order, at any positions) yields nothing new;
        /// the new ones are exactly the multiset difference.
        #[test]
        fn new_is_the_multiset_difference(before in arb_diags(), after in arb_diags()) {
            let mut ledger = Ledger::default();
            let path = Path::new("/p");
            ledger.update(path, before.clone());
            let new = ledger.update(path, after.clone());
            for message in ["a", "b", "c", "d"] {
                let count = |list: &[Diagnostic]| list.iter().filter(|d| d.message == message).count();
                prop_assert_eq!(count(&new), count(&after).saturating_sub(count(&before)));
            }
            let mut moved = after.clone();
            for d in &mut moved { d.line += 4; }
            prop_assert!(ledger.update(path, moved).is_empty());
        }
    }
}
