//! Every healer response is checked before anything is written: each path relative,
//! normalised, inside the allowed paths, without `..`, drive letters or NUL; each content UTF-8
//! text without NUL bytes; sizes and counts bounded. One bad file rejects the whole response, so
//! nothing partial is ever applied.

use std::collections::BTreeMap;

use crate::core::gate::allowed;

/// What a response may change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Files or folders (ending in `/`) a fix may change; empty means the whole repository.
    pub allowed_paths: Vec<String>,
    pub max_files: usize,
    pub max_file_bytes: usize,
    pub max_total_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            allowed_paths: Vec::new(),
            max_files: 20,
            max_file_bytes: 1024 * 1024,
            max_total_bytes: 4 * 1024 * 1024,
        }
    }
}

/// Checks `files` against `limits`; returns them with normalised paths, or says what was wrong.
pub fn validate(files: &BTreeMap<String, String>, limits: &Limits) -> Result<BTreeMap<String, String>, String> {
    if files.is_empty() {
        return Err("the healer returned no files".into());
    }
    if files.len() > limits.max_files {
        return Err(format!(
            "the healer returned {} files; at most {} are allowed",
            files.len(),
            limits.max_files
        ));
    }
    let mut total = 0usize;
    let mut out = BTreeMap::new();
    for (path, content) in files {
        let normalised = check_path(path)?;
        if !allowed(&normalised, &limits.allowed_paths) {
            return Err(format!(
                "{normalised} is outside the allowed paths ({})",
                limits.allowed_paths.join(", ")
            ));
        }
        if content.len() > limits.max_file_bytes {
            return Err(format!(
                "{normalised} is {} bytes; at most {} are allowed per file",
                content.len(),
                limits.max_file_bytes
            ));
        }
        if content.contains('\0') {
            return Err(format!(
                "{normalised} is binary (it contains NUL bytes); only text files can be changed"
            ));
        }
        total += content.len();
        if total > limits.max_total_bytes {
            return Err(format!(
                "the files add up to more than {} bytes",
                limits.max_total_bytes
            ));
        }
        if out.insert(normalised.clone(), content.clone()).is_some() {
            return Err(format!("{normalised} is named twice"));
        }
    }
    Ok(out)
}

fn check_path(path: &str) -> Result<String, String> {
    let shown: String = path.chars().take(200).collect::<String>().escape_debug().to_string();
    if path.is_empty() || path.len() > 1024 {
        return Err(format!("invalid path {shown:?}: empty or longer than 1024 bytes"));
    }
    if path.contains('\0') || path.chars().any(char::is_control) {
        return Err(format!("invalid path {shown:?}: it contains control characters"));
    }
    if path.starts_with('/') || path.starts_with('\\') || path.as_bytes().get(1) == Some(&b':') {
        return Err(format!("invalid path {shown:?}: absolute paths are not allowed"));
    }
    if path.contains('\\') {
        return Err(format!("invalid path {shown:?}: use forward slashes"));
    }
    let mut parts = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err(format!("invalid path {shown:?}: '..' is not allowed")),
            p => parts.push(p),
        }
    }
    if parts.is_empty() {
        return Err(format!("invalid path {shown:?}: it names no file"));
    }
    if parts[0] == ".git" {
        return Err(format!("invalid path {shown:?}: the .git folder cannot be changed"));
    }
    Ok(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(path: &str, content: &str) -> BTreeMap<String, String> {
        BTreeMap::from([(path.to_owned(), content.to_owned())])
    }

    #[test]
    fn bad_paths_and_contents_are_rejected_with_the_reason() {
        let limits = Limits {
            allowed_paths: vec!["src/".into(), "app.py".into()],
            ..Limits::default()
        };
        for (path, content, reason) in [
            ("../../etc/passwd", "x", "'..' is not allowed"),
            ("/etc/passwd", "x", "absolute paths"),
            ("C:/Windows/x", "x", "absolute paths"),
            ("src\\a.py", "x", "forward slashes"),
            ("src/a\0.py", "x", "control characters"),
            ("lib/a.py", "x", "outside the allowed paths"),
            ("src/a.bin", "a\0b", "binary"),
            (".git/config", "x", ".git folder"),
        ] {
            let err = validate(&one(path, content), &limits).expect_err(path);
            assert!(err.contains(reason), "{path}: {err}");
        }
    }

    #[test]
    fn good_paths_are_normalised() {
        let ok = validate(&one("./src//a.py", "print(1)\n"), &Limits::default()).expect("valid");
        assert_eq!(ok.keys().collect::<Vec<_>>(), ["src/a.py"]);
    }

    #[test]
    fn sizes_and_counts_are_bounded() {
        let limits = Limits {
            max_files: 1,
            max_file_bytes: 10,
            max_total_bytes: 15,
            ..Limits::default()
        };
        assert!(
            validate(&one("a.py", &"x".repeat(11)), &limits)
                .unwrap_err()
                .contains("per file")
        );
        let two = BTreeMap::from([("a.py".to_owned(), "x".to_owned()), ("b.py".to_owned(), "y".to_owned())]);
        assert!(validate(&two, &limits).unwrap_err().contains("at most 1"));
    }
}
