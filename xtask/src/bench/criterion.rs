//! Reading criterion's results from `target/criterion`.
//!
//! Criterion writes `<group dir>/<bench dir>/new/{benchmark,estimates}.json`, with directory
//! names derived from the ids (slashes and other characters replaced). Rather than guessing
//! that escaping, this walks the tree and keys each result by the `full_id` recorded in
//! `benchmark.json` (e.g. `decode/small/cc-framing`).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::SystemTime;

use crate::util::Result;

/// One benchmark's result.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// Mean time per iteration, in nanoseconds (criterion's mean point estimate).
    pub mean_ns: f64,
    /// `Throughput::Elements` per iteration, when the bench declared it.
    pub elements: Option<u64>,
    /// `Throughput::Bytes` per iteration, when the bench declared it.
    pub bytes: Option<u64>,
}

impl Estimate {
    /// Elements per second, when the bench declared `Throughput::Elements`.
    pub fn elements_per_sec(&self) -> Option<f64> {
        let n = self.elements? as f64;
        (self.mean_ns > 0.0).then(|| n / (self.mean_ns * 1e-9))
    }
}

/// Every result under `dir` (usually `target/criterion`) whose `estimates.json` was written at
/// or after `since` (pass `UNIX_EPOCH` for all), keyed by criterion's full id.
pub fn read_results(dir: &Path, since: SystemTime) -> Result<BTreeMap<String, Estimate>> {
    let mut out = BTreeMap::new();
    if dir.is_dir() {
        walk(dir, since, 0, &mut out)?;
    }
    Ok(out)
}

fn walk(
    dir: &Path,
    since: SystemTime,
    depth: usize,
    out: &mut BTreeMap<String, Estimate>,
) -> Result<()> {
    if depth > 8 {
        return Ok(());
    }
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    for entry in entries.filter_map(|e| e.ok()) {
        let path = entry.path();
        if !path.is_dir() {
            continue;
        }
        match entry.file_name().to_str() {
            Some("new") => {
                if let Some((id, est)) = read_one(&path, since)? {
                    out.insert(id, est);
                }
            }
            Some("base" | "change" | "report") => {}
            _ => walk(&path, since, depth + 1, out)?,
        }
    }
    Ok(())
}

fn read_one(new_dir: &Path, since: SystemTime) -> Result<Option<(String, Estimate)>> {
    let estimates = new_dir.join("estimates.json");
    let benchmark = new_dir.join("benchmark.json");
    if !estimates.is_file() || !benchmark.is_file() {
        return Ok(None);
    }
    let fresh = std::fs::metadata(&estimates)
        .and_then(|m| m.modified())
        .is_ok_and(|t| t >= since);
    if !fresh {
        return Ok(None);
    }
    let read = |p: &Path| -> Result<serde_json::Value> {
        let text =
            std::fs::read_to_string(p).map_err(|e| format!("cannot read {}: {e}", p.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: invalid JSON: {e}", p.display()))
    };
    let b = read(&benchmark)?;
    let e = read(&estimates)?;
    let id = b["full_id"]
        .as_str()
        .ok_or_else(|| format!("{}: no full_id", benchmark.display()))?
        .to_string();
    let mean_ns = e["mean"]["point_estimate"]
        .as_f64()
        .ok_or_else(|| format!("{}: no mean.point_estimate", estimates.display()))?;
    Ok(Some((
        id,
        Estimate {
            mean_ns,
            elements: b["throughput"]["Elements"].as_u64(),
            bytes: b["throughput"]["Bytes"].as_u64(),
        },
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_bench(root: &Path, dir: &str, id: &str, mean: f64, elements: u64) {
        let new = root.join(dir).join("new");
        std::fs::create_dir_all(&new).unwrap();
        std::fs::write(
            new.join("benchmark.json"),
            format!(
                r#"{{"group_id":"g","function_id":"f","value_str":null,"throughput":{{"Elements":{elements}}},"full_id":"{id}","directory_name":"{dir}","title":"{id}"}}"#
            ),
        )
        .unwrap();
        std::fs::write(
            new.join("estimates.json"),
            format!(r#"{{"mean":{{"point_estimate":{mean},"standard_error":1.0}}}}"#),
        )
        .unwrap();
    }

    #[test]
    fn reads_results_by_full_id() {
        let dir = tempfile::tempdir().unwrap();
        write_bench(
            dir.path(),
            "decode_small/cc-framing",
            "decode/small/cc-framing",
            1000.0,
            10,
        );
        write_bench(
            dir.path(),
            "decode_small/lsp-server",
            "decode/small/lsp-server",
            2000.0,
            10,
        );
        let r = read_results(dir.path(), SystemTime::UNIX_EPOCH).unwrap();
        assert_eq!(r.len(), 2);
        let ours = &r["decode/small/cc-framing"];
        assert_eq!(ours.elements, Some(10));
        // 10 messages per 1000 ns = 10 M/s.
        assert!((ours.elements_per_sec().unwrap() - 1e7).abs() < 1.0);
        // Results older than `since` are ignored.
        let later = SystemTime::now() + std::time::Duration::from_secs(3600);
        assert!(read_results(dir.path(), later).unwrap().is_empty());
        // A missing directory is no results, not an error.
        assert!(
            read_results(&dir.path().join("nope"), SystemTime::UNIX_EPOCH)
                .unwrap()
                .is_empty()
        );
    }
}
