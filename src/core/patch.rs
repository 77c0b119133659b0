//! A healer's answer as a patch: the unified diff that the executor applies (`git apply`), that a
//! CodeFixDDS carries for approval and that the Git agent commits, and its `sha256:` digest, to
//! which an approval is bound.

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};
use similar::TextDiff;

/// The unified diff (`a/` and `b/` prefixes, as `git apply` expects) that turns `before` into
/// `after`, file by file in path order. A path missing from `before` is a new file.
pub fn unified_diff(before: &BTreeMap<String, String>, after: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    for (path, new) in after {
        let old = before.get(path);
        let diff = TextDiff::from_lines(old.map(String::as_str).unwrap_or(""), new.as_str());
        if old.map(String::as_str) == Some(new.as_str()) {
            continue;
        }
        let from = if old.is_some() {
            format!("a/{path}")
        } else {
            "/dev/null".to_owned()
        };
        out.push_str(&format!("diff --git a/{path} b/{path}\n"));
        if old.is_none() {
            out.push_str("new file mode 100644\n");
        }
        out.push_str(
            &diff
                .unified_diff()
                .context_radius(3)
                .header(&from, &format!("b/{path}"))
                .to_string(),
        );
    }
    out
}

/// `sha256:` followed by the 64 lower-case hex digits of the patch's SHA-256.
pub fn digest(patch: &str) -> String {
    let hash = Sha256::digest(patch.as_bytes());
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(p, c)| (p.to_string(), c.to_string())).collect()
    }

    #[test]
    fn a_changed_file_becomes_a_git_style_hunk() {
        let diff = unified_diff(
            &files(&[("app/calc.py", "def add(a, b)\n    return a + b\n")]),
            &files(&[("app/calc.py", "def add(a, b):\n    return a + b\n")]),
        );
        assert!(diff.starts_with("diff --git a/app/calc.py b/app/calc.py\n--- a/app/calc.py\n+++ b/app/calc.py\n@@"));
        assert!(diff.contains("-def add(a, b)\n+def add(a, b):\n"), "{diff}");
    }

    #[test]
    fn an_unchanged_file_is_left_out_and_a_new_file_comes_from_dev_null() {
        let diff = unified_diff(
            &files(&[("same.py", "x = 1\n")]),
            &files(&[("same.py", "x = 1\n"), ("new.py", "y = 2\n")]),
        );
        assert!(!diff.contains("same.py"));
        assert!(
            diff.contains("new file mode 100644\n--- /dev/null\n+++ b/new.py\n"),
            "{diff}"
        );
    }

    #[test]
    fn the_digest_is_sha256_of_the_patch_text() {
        // sha256("") is well known.
        assert_eq!(
            digest(""),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_ne!(digest("a"), digest("b"));
    }
}
