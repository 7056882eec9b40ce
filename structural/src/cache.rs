//! A bounded cache of parsed trees for a long-lived run: a repeated search over files that
//! did not change does not parse them again.
//!
//! Keyed by path and language, and valid only for the exact bytes it was parsed from (their
//! length and xxh3 hash, checked on every lookup, so a rewrite within the clock's resolution
//! is never served a stale tree). Least recently used trees go first once the estimated
//! memory passes the budget. tree-sitter does not report a tree's size: it is estimated as
//! [`BYTES_PER_NODE`] per syntax node.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The estimated memory of one syntax node of a cached tree (measured: a search of the
/// CPython standard library holding every tree took about 128 bytes of RSS per node).
pub const BYTES_PER_NODE: usize = 128;

/// The default budget: 256 MiB of estimated tree memory.
pub const DEFAULT_TREE_CACHE_BYTES: usize = 256 * 1024 * 1024;

struct Entry {
    len: usize,
    hash: u64,
    parsed: crate::find::ParsedSource,
    cost: usize,
    tick: u64,
}

#[derive(Default)]
struct Inner {
    entries: HashMap<(PathBuf, String), Entry>,
    /// Last use → key, oldest first.
    order: BTreeMap<u64, (PathBuf, String)>,
    used: usize,
    tick: u64,
    hits: u64,
    misses: u64,
}

/// What the cache holds and how it has done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TreeCacheStats {
    /// Trees held.
    pub trees: usize,
    /// Estimated bytes held.
    pub bytes: usize,
    /// The budget, in estimated bytes.
    pub budget: usize,
    /// Lookups that found the tree of the same bytes.
    pub hits: u64,
    /// Lookups that found none, or one of other bytes.
    pub misses: u64,
}

/// Parsed trees by file, within a memory budget. Shared by the searches of one run.
pub struct TreeCache {
    budget: usize,
    inner: Mutex<Inner>,
}

impl std::fmt::Debug for TreeCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TreeCache")
            .field("stats", &self.stats())
            .finish()
    }
}

impl Default for TreeCache {
    fn default() -> Self {
        TreeCache::new(DEFAULT_TREE_CACHE_BYTES)
    }
}

fn hash(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytes)
}

impl TreeCache {
    /// A cache holding at most `budget` estimated bytes of trees (0: caches nothing).
    pub fn new(budget: usize) -> Self {
        TreeCache {
            budget,
            inner: Mutex::new(Inner::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The tree of `path` parsed as `language` from exactly `source`, if cached.
    pub fn get(
        &self,
        path: &Path,
        language: &str,
        source: &[u8],
    ) -> Option<crate::find::ParsedSource> {
        let digest = hash(source);
        let mut inner = self.lock();
        let key = (path.to_path_buf(), language.to_owned());
        inner.tick += 1;
        let tick = inner.tick;
        let fresh = match inner.entries.get_mut(&key) {
            Some(e) if e.len == source.len() && e.hash == digest => {
                let old = e.tick;
                e.tick = tick;
                Some((old, e.parsed.clone()))
            }
            _ => None,
        };
        match fresh {
            Some((old, tree)) => {
                inner.order.remove(&old);
                inner.order.insert(tick, key);
                inner.hits += 1;
                Some(tree)
            }
            None => {
                inner.misses += 1;
                None
            }
        }
    }

    /// Keeps `tree`, parsed from `source`, for `path`; evicts the least recently used trees
    /// past the budget. A tree larger than the whole budget is not kept.
    pub fn insert(
        &self,
        path: &Path,
        language: &str,
        source: &[u8],
        parsed: &crate::find::ParsedSource,
    ) {
        let cost = parsed
            .tree
            .root_node()
            .descendant_count()
            .saturating_mul(BYTES_PER_NODE);
        if cost > self.budget {
            return;
        }
        let digest = hash(source);
        let mut inner = self.lock();
        inner.tick += 1;
        let tick = inner.tick;
        let key = (path.to_path_buf(), language.to_owned());
        if let Some(old) = inner.entries.remove(&key) {
            inner.order.remove(&old.tick);
            inner.used -= old.cost;
        }
        while inner.used + cost > self.budget {
            let Some((_, oldest)) = inner.order.pop_first() else {
                break;
            };
            if let Some(gone) = inner.entries.remove(&oldest) {
                inner.used -= gone.cost;
            }
        }
        inner.used += cost;
        inner.order.insert(tick, key.clone());
        inner.entries.insert(
            key,
            Entry {
                len: source.len(),
                hash: digest,
                parsed: parsed.clone(),
                cost,
                tick,
            },
        );
    }

    /// How many trees, how much memory (estimated), the budget, hits and misses.
    pub fn stats(&self) -> TreeCacheStats {
        let inner = self.lock();
        TreeCacheStats {
            trees: inner.entries.len(),
            bytes: inner.used,
            budget: self.budget,
            hits: inner.hits,
            misses: inner.misses,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(source: &str) -> crate::find::ParsedSource {
        let spec = cc_languages::by_name("python").unwrap();
        let mut parser = tree_sitter::Parser::new();
        parser.set_language(&spec.grammar()).unwrap();
        crate::find::ParsedSource {
            tree: parser.parse(source, None).unwrap(),
            set_aside: Vec::new(),
        }
    }

    #[test]
    fn hits_only_for_the_same_bytes_and_evicts_the_oldest() {
        let a = "def f():\n    return 1\n";
        let tree = parse(a);
        let cost = tree.tree.root_node().descendant_count() * BYTES_PER_NODE;
        let cache = TreeCache::new(cost * 2);
        cache.insert(Path::new("a.py"), "python", a.as_bytes(), &tree);
        assert!(cache
            .get(Path::new("a.py"), "python", a.as_bytes())
            .is_some());
        // Same length, other bytes: not served.
        let b = "def g():\n    return 1\n";
        assert!(cache
            .get(Path::new("a.py"), "python", b.as_bytes())
            .is_none());
        assert!(cache.get(Path::new("a.py"), "go", a.as_bytes()).is_none());
        cache.insert(Path::new("b.py"), "python", b.as_bytes(), &parse(b));
        // a.py was used more recently than b.py was inserted? No: b is newest, a next.
        cache.get(Path::new("a.py"), "python", a.as_bytes());
        cache.insert(Path::new("c.py"), "python", a.as_bytes(), &tree);
        let stats = cache.stats();
        assert_eq!(stats.trees, 2);
        assert!(stats.bytes <= stats.budget);
        assert!(cache
            .get(Path::new("b.py"), "python", b.as_bytes())
            .is_none());
        assert!(cache
            .get(Path::new("a.py"), "python", a.as_bytes())
            .is_some());
        // A tree over the whole budget is not kept.
        let small = TreeCache::new(1);
        small.insert(Path::new("a.py"), "python", a.as_bytes(), &tree);
        assert_eq!(small.stats().trees, 0);
    }
}
