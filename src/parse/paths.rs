//! Path normalisation: every location a tool prints becomes a repository-relative path with
//! forward slashes, or is dropped when it is not the project's own code (the standard library,
//! site-packages, node_modules, the cargo registry, the Go root, the interpreter's internals).

/// The workspace a log came from: its root as the build saw it (e.g. `/workspace/repo`) and,
/// optionally, the repository's file list, which resolves the bare file names some tools print
/// (`go test` prints `x_test.go:12` relative to the package folder).
#[derive(Debug, Clone, Default)]
pub struct Workspace {
    root: String,
    files: Vec<String>,
}

/// Path fragments that mark code that is not the project's own.
const FOREIGN: &[&str] = &[
    "/site-packages/",
    "/dist-packages/",
    "node_modules/",
    "/.cargo/registry/",
    "/.cargo/git/",
    "/.rustup/",
    "/rustc/",
    "/usr/lib/",
    "/usr/local/lib/",
    "/usr/local/go/src/",
    "/go/pkg/mod/",
    "/.pyenv/",
    "/lib/python3",
    "/opt/hostedtoolcache/",
];

impl Workspace {
    /// A workspace rooted at `root` (absolute as the build saw it, or empty when unknown).
    pub fn new(root: impl Into<String>) -> Self {
        let mut root = root.into().replace('\\', "/");
        while root.len() > 1 && root.ends_with('/') {
            root.pop();
        }
        Workspace {
            root,
            files: Vec::new(),
        }
    }

    /// Adds the repository's files (relative, forward slashes), used to resolve bare names.
    pub fn with_files(mut self, mut files: Vec<String>) -> Self {
        files.sort();
        files.dedup();
        self.files = files;
        self
    }

    /// The repository-relative form of `path`, or `None` when it is not the project's code.
    pub fn relative(&self, path: &str) -> Option<String> {
        let path = path.trim().trim_matches(|c| c == '"' || c == '\'');
        if path.is_empty() || path.starts_with('<') || path.starts_with("node:") || path.contains('\0') {
            return None;
        }
        let path = path.strip_prefix("file://").unwrap_or(path).replace('\\', "/");
        if FOREIGN.iter().any(|f| path.contains(f)) {
            return None;
        }
        let absolute = path.starts_with('/') || path.as_bytes().get(1) == Some(&b':');
        let relative = if absolute {
            match path.strip_prefix(&self.root).and_then(|rest| rest.strip_prefix('/')) {
                Some(rest) if !self.root.is_empty() && self.root != "/" => rest.to_owned(),
                _ => return self.by_suffix(&path),
            }
        } else {
            path
        };
        let relative = normalise(&relative)?;
        if self.files.is_empty() || self.files.binary_search(&relative).is_ok() {
            return Some(relative);
        }
        // A name the listing does not hold as is: a bare file name relative to a package folder.
        self.by_suffix(&relative).or(Some(relative))
    }

    /// The one listed file that `path` names: the same path, an absolute path that ends with it,
    /// or a bare name it ends with (on a `/` boundary). `None` when none or several match.
    fn by_suffix(&self, path: &str) -> Option<String> {
        let bare = path.trim_start_matches('/');
        let mut found = self.files.iter().filter(|f| {
            let f = f.as_str();
            f == bare
                || path.strip_suffix(f).is_some_and(|head| head.ends_with('/'))
                || f.strip_suffix(bare).is_some_and(|head| head.ends_with('/'))
        });
        let first = found.next()?;
        found.next().is_none().then(|| first.clone())
    }
}

/// Removes `./` and `.` segments and resolves `..` inside the path; `None` if it leaves the root.
fn normalise(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::Workspace;

    #[test]
    fn paths_inside_the_workspace_become_relative() {
        let ws = Workspace::new("/workspace/repo/");
        assert_eq!(ws.relative("/workspace/repo/src/a.py").as_deref(), Some("src/a.py"));
        assert_eq!(ws.relative("./src/a.py").as_deref(), Some("src/a.py"));
        assert_eq!(ws.relative("src\\win\\a.py").as_deref(), Some("src/win/a.py"));
        assert_eq!(ws.relative("src/../lib/a.py").as_deref(), Some("lib/a.py"));
    }

    #[test]
    fn foreign_code_is_dropped() {
        let ws = Workspace::new("/workspace/repo");
        for path in [
            "/usr/local/lib/python3.12/site-packages/_pytest/python.py",
            "/root/.pyenv/versions/3.11.7/lib/python3.11/importlib/__init__.py",
            "../../node_modules/jest-circus/build/index.js",
            "/rustc/abc/library/core/src/panicking.rs",
            "/usr/local/go/src/testing/testing.go",
            "<frozen importlib._bootstrap>",
            "node:internal/modules/cjs/loader",
            "/etc/passwd",
            "../outside.py",
        ] {
            assert_eq!(ws.relative(path), None, "{path}");
        }
    }

    #[test]
    fn bare_names_resolve_through_the_file_list() {
        let ws = Workspace::new("/w").with_files(vec!["pkg/mathx/mathx_test.go".into(), "main.go".into()]);
        assert_eq!(ws.relative("mathx_test.go").as_deref(), Some("pkg/mathx/mathx_test.go"));
        assert_eq!(
            ws.relative("/elsewhere/build/pkg/mathx/mathx_test.go").as_deref(),
            Some("pkg/mathx/mathx_test.go")
        );
        assert_eq!(ws.relative("main.go").as_deref(), Some("main.go"));
    }
}
