//! What an execution leaves behind, bounded: its output (a build that prints gigabytes must not
//! take the machine down: the first and the last bytes are kept in memory, the middle is counted
//! and said to be dropped) and its artifacts (seed 003: collected recursively, at most 50 files
//! and 50 MB; what is over is named in a warning, never silently lost).

use std::collections::VecDeque;
use std::path::Path;

use crate::api::shared::ArtifactRef;

/// Seed 003's artifact limits.
pub const MAX_ARTIFACTS: usize = 50;
pub const MAX_ARTIFACT_BYTES: u64 = 50 * 1024 * 1024;

/// The MIME type of an artifact, from its file name (a build's files carry no other label).
pub fn mime_of(name: &str) -> &'static str {
    let extension = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match extension.as_deref() {
        Some("xml") => "application/xml",
        Some("json") => "application/json",
        Some("html" | "htm") => "text/html",
        Some("txt" | "log") => "text/plain",
        Some("csv") => "text/csv",
        Some("md") => "text/markdown",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("svg") => "image/svg+xml",
        Some("pdf") => "application/pdf",
        Some("gz" | "tgz") => "application/gzip",
        Some("zip") => "application/zip",
        _ => "application/octet-stream",
    }
}

/// Counts artifacts against seed 003's limits, in the order they are offered.
#[derive(Debug, Default)]
pub struct ArtifactBudget {
    files: usize,
    bytes: u64,
}

impl ArtifactBudget {
    /// Takes a file of `size` bytes if it fits; otherwise says in `warnings` why it was left out.
    pub fn admit(&mut self, name: &str, size: u64, warnings: &mut Vec<String>) -> bool {
        if self.files >= MAX_ARTIFACTS {
            warnings.push(format!(
                "artifact {name} left out: an execution keeps at most {MAX_ARTIFACTS} files"
            ));
            return false;
        }
        if self.bytes + size > MAX_ARTIFACT_BYTES {
            warnings.push(format!(
                "artifact {name} ({size} bytes) left out: an execution keeps at most 50 MB of artifacts"
            ));
            return false;
        }
        self.files += 1;
        self.bytes += size;
        true
    }
}

/// The files under `dir`, recursively, in name order, within seed 003's limits; each named by its
/// path relative to `dir` and addressed by its local path. Links are not followed (a build could
/// point one at any file of the machine) and are named in a warning.
pub fn collect_artifacts(dir: &Path, warnings: &mut Vec<String>) -> Vec<ArtifactRef> {
    let mut files = Vec::new();
    walk(dir, dir, &mut files, warnings);
    files.sort();
    let mut budget = ArtifactBudget::default();
    let mut out = Vec::new();
    for (name, size) in files {
        if budget.admit(&name, size, warnings) {
            out.push(ArtifactRef {
                mime: mime_of(&name).to_owned(),
                url: dir.join(&name).display().to_string(),
                name,
                size,
            });
        }
    }
    out
}

fn walk(root: &Path, dir: &Path, files: &mut Vec<(String, u64)>, warnings: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = path
            .strip_prefix(root)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        match entry.file_type() {
            Ok(t) if t.is_dir() => walk(root, &path, files, warnings),
            Ok(t) if t.is_file() => files.push((name, entry.metadata().map(|m| m.len()).unwrap_or(0))),
            Ok(t) if t.is_symlink() => warnings.push(format!("artifact {name} left out: it is a link")),
            _ => {}
        }
    }
}

/// Keeps the first `head_max` and the last `tail_max` bytes written to it.
#[derive(Debug)]
pub struct BoundedLog {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    head_max: usize,
    tail_max: usize,
    total: u64,
}

impl BoundedLog {
    pub fn new(head_max: usize, tail_max: usize) -> Self {
        BoundedLog {
            head: Vec::new(),
            tail: VecDeque::new(),
            head_max,
            tail_max,
            total: 0,
        }
    }

    pub fn write(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        if self.head.len() < self.head_max {
            let take = bytes.len().min(self.head_max - self.head.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        if bytes.len() >= self.tail_max {
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - self.tail_max..]);
            return;
        }
        let overflow = (self.tail.len() + bytes.len()).saturating_sub(self.tail_max);
        self.tail.drain(..overflow);
        self.tail.extend(bytes);
    }

    /// Bytes written but not kept.
    pub fn dropped(&self) -> u64 {
        self.total - self.head.len() as u64 - self.tail.len() as u64
    }

    pub fn total(&self) -> u64 {
        self.total
    }

    /// The kept text, with a line saying how much was dropped between head and tail.
    pub fn text(&self) -> String {
        let mut out = String::from_utf8_lossy(&self.head).into_owned();
        let dropped = self.dropped();
        if dropped > 0 {
            out.push_str(&format!(
                "\n[... kubeheal dropped {dropped} bytes of output here ...]\n"
            ));
        }
        let (a, b) = self.tail.as_slices();
        let mut tail = Vec::with_capacity(a.len() + b.len());
        tail.extend_from_slice(a);
        tail.extend_from_slice(b);
        out.push_str(&String::from_utf8_lossy(&tail));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn artifacts_are_collected_recursively_within_fifty_files() {
        let dir = tempfile::tempdir().expect("a folder");
        std::fs::create_dir_all(dir.path().join("reports/junit")).expect("mkdir");
        std::fs::write(dir.path().join("reports/junit/result.xml"), "<testsuite/>").expect("write");
        for i in 0..55 {
            std::fs::write(dir.path().join(format!("out-{i:02}.csv")), "a,b\n").expect("write");
        }
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("passwd")).expect("link");
        let mut warnings = Vec::new();
        let artifacts = collect_artifacts(dir.path(), &mut warnings);
        assert_eq!(artifacts.len(), MAX_ARTIFACTS);
        assert_eq!(artifacts[0].name, "out-00.csv");
        assert_eq!(artifacts[0].mime, "text/csv");
        assert_eq!(artifacts[0].size, 4);
        assert!(
            !artifacts.iter().any(|a| a.name == "reports/junit/result.xml"),
            "sorted after the CSV files, the 56th file is over the limit"
        );
        assert_eq!(warnings.iter().filter(|w| w.contains("at most 50 files")).count(), 6);
        assert!(warnings.iter().any(|w| w.contains("passwd left out: it is a link")));
    }

    #[test]
    fn a_nested_artifact_is_named_by_its_relative_path() {
        let dir = tempfile::tempdir().expect("a folder");
        std::fs::create_dir_all(dir.path().join("a/b")).expect("mkdir");
        std::fs::write(dir.path().join("a/b/c.json"), "{}").expect("write");
        let artifacts = collect_artifacts(dir.path(), &mut Vec::new());
        assert_eq!(artifacts[0].name, "a/b/c.json");
        assert_eq!(artifacts[0].mime, "application/json");
        assert!(artifacts[0].url.ends_with("a/b/c.json"));
    }

    #[test]
    fn keeps_head_and_tail_and_counts_the_middle() {
        let mut log = BoundedLog::new(4, 4);
        for chunk in [&b"abc"[..], b"defgh", b"ijklmnop", b"q"] {
            log.write(chunk);
        }
        assert_eq!(log.total(), 17);
        assert_eq!(log.dropped(), 9);
        assert_eq!(
            log.text(),
            "abcd\n[... kubeheal dropped 9 bytes of output here ...]\nnopq"
        );
    }
}
