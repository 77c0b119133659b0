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
    /// The files' indices, ordered by their names read backwards: the files that end with a path
    /// are one range of it.
    by_ending: Vec<usize>,
    /// The workspace packages' names, each with its folder (`""` for the root), as their
    /// `package.json` files say, ordered by name: a name two manifests give is here twice.
    packages: Vec<(String, String)>,
    /// The Rust crates of the workspace's Cargo packages, by the name a backtrace's functions
    /// give them (`my_lib::parse`: the `[lib]` name, or the package's or a binary's with `-` as
    /// `_`), each with its package's folder (`""` for the root), ordered by name.
    crates: Vec<(String, String)>,
}

/// Most `package.json` (and, apart, `Cargo.toml`) files read for their names: a monorepo has tens
/// or hundreds of packages, and a repository that lists thousands (vendored fixtures) is not read
/// past this.
pub(crate) const MAX_PACKAGE_MANIFESTS: usize = 2_000;

/// Largest `package.json` or `Cargo.toml` read for its names; a larger one is skipped.
pub const MAX_PACKAGE_MANIFEST_BYTES: u64 = 1 << 20;

/// Whether the repository-relative `path` is a test file by the usual conventions of the four
/// ecosystems: the gate keeps fixes out of them, the parser places a failure at the test's frame.
pub fn is_test_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    path.starts_with("tests/")
        || path.starts_with("test/")
        || path.contains("/tests/")
        || path.contains("/test/")
        || path.contains("/__tests__/")
        || (name.starts_with("test_") && name.ends_with(".py"))
        || name == "conftest.py"
        || name.ends_with("_test.py")
        || name.ends_with("_test.go")
        || name.contains(".test.")
        || name.contains(".spec.")
}

/// A path as a tool printed it, without the spaces and quotes around it.
fn unquoted(path: &str) -> &str {
    path.trim().trim_matches(|c| c == '"' || c == '\'')
}

/// Whether a path is absolute, on Unix (`/w/a.py`) or Windows (`C:\w\a.py`).
fn is_absolute(path: &str) -> bool {
    path.starts_with('/') || path.as_bytes().get(1) == Some(&b':')
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

/// All of [`FOREIGN`] in one automaton: a path is searched once, not once for each fragment
/// (paths are looked at for every frame of every traceback).
static FOREIGN_SCAN: std::sync::LazyLock<aho_corasick::AhoCorasick> =
    std::sync::LazyLock::new(|| aho_corasick::AhoCorasick::new(FOREIGN).expect("aho-corasick automaton"));

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
            by_ending: Vec::new(),
            packages: Vec::new(),
            crates: Vec::new(),
        }
    }

    /// Adds the repository's files (relative, forward slashes), used to resolve bare names.
    pub fn with_files(mut self, mut files: Vec<String>) -> Self {
        files.sort();
        files.dedup();
        self.by_ending = (0..files.len()).collect();
        self.by_ending
            .sort_unstable_by(|&a, &b| files[a].bytes().rev().cmp(files[b].bytes().rev()));
        self.files = files;
        self
    }

    /// The listed files that are `suffix` or end with `/` and `suffix`, found by a binary search
    /// of the reversed names rather than a look at every file (a repository lists up to 100,000,
    /// and a traceback may have dozens of frames under site-packages).
    fn ending_with<'a>(&'a self, suffix: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        let start = self
            .by_ending
            .partition_point(|&i| self.files[i].bytes().rev().lt(suffix.bytes().rev()));
        self.by_ending[start..]
            .iter()
            .map(|&i| self.files[i].as_str())
            .take_while(move |f| f.ends_with(suffix))
            .filter(move |f| f.len() == suffix.len() || f[..f.len() - suffix.len()].ends_with('/'))
    }

    /// The repository-relative form of `path`, or `None` when it is not the project's code.
    /// Whether `path` is absolute and names no code but the project's (no site-packages,
    /// registry, toolchain, ...): a file of the project's, when it is not under [`Workspace::root`],
    /// says the build ran elsewhere.
    pub fn is_absolute_project_path(path: &str) -> bool {
        let path = unquoted(path);
        is_absolute(path) && !FOREIGN_SCAN.is_match(&path.replace('\\', "/"))
    }

    pub fn relative(&self, path: &str) -> Option<String> {
        let path = unquoted(path);
        if path.is_empty() || path.starts_with('<') || path.starts_with("node:") || path.contains('\0') {
            return None;
        }
        let mut path = match path.strip_prefix("file://") {
            // A URI (SARIF's `artifactLocation.uri`) escapes non-ASCII and reserved bytes.
            Some(uri) => percent_decode(uri)?,
            None => path.to_owned(),
        };
        if path.contains('\\') {
            path = path.replace('\\', "/");
        }
        if let Some(installed) = self.installed_copy(&path) {
            return Some(installed);
        }
        if FOREIGN_SCAN.is_match(&path) {
            return None;
        }
        let relative = if is_absolute(&path) {
            match path.strip_prefix(&self.root).and_then(|rest| rest.strip_prefix('/')) {
                Some(rest) if !self.root.is_empty() && self.root != "/" => rest.to_owned(),
                _ => return self.by_suffix(&path),
            }
        } else {
            path
        };
        let Some(relative) = normalise(&relative) else {
            // `../pkg/a.py`: printed by a tool run in a subfolder, relative to it. Which subfolder
            // is not known, so the path names a file only when the listing holds the one it can be.
            return self.above_its_folder(&relative);
        };
        if self.files.is_empty() || self.files.binary_search(&relative).is_ok() {
            return Some(relative);
        }
        // A name the listing does not hold as is: a bare file name relative to a package folder.
        self.by_suffix(&relative).or(Some(relative))
    }

    /// The project's own package as an installer copied it into an environment (tox and nox
    /// install it into `.tox/py/lib/python3.11/site-packages/`, a non-editable `pip install .`
    /// into the interpreter's): the one listed file at the same package path
    /// (`site-packages/cachetools/keys.py` → `src/cachetools/keys.py`), whose package is a
    /// top-level one in the repository: the folder holding it is no package itself (a vendored
    /// copy, `src/pip/_vendor/rich/`, is another package's part, not the installed `rich`). A
    /// module at the top of site-packages is the project's only as a file at its root or under
    /// `src/`, so that a dependency's module is not taken for a same-named file deeper in the
    /// repository.
    fn installed_copy(&self, path: &str) -> Option<String> {
        if self.files.is_empty() {
            return None;
        }
        let installed = ["/site-packages/", "/dist-packages/"]
            .iter()
            .filter_map(|marker| path.rfind(marker).map(|at| &path[at + marker.len()..]))
            .min_by_key(|rest| rest.len())?;
        if installed.is_empty() {
            return None;
        }
        let nested = installed.contains('/');
        let mut found = self.ending_with(installed).filter(|f| {
            let folder = &f[..f.len() - installed.len()];
            let top_level = !self.lists(&format!("{folder}__init__.py"));
            top_level && (nested || folder.is_empty() || folder == "src/")
        });
        let first = found.next()?;
        found.next().is_none().then(|| first.to_owned())
    }

    /// Learns the workspace packages' names from their listed manifests (outside dependencies'
    /// folders, at most [`MAX_PACKAGE_MANIFESTS`] of each kind). `package.json`: npm, pnpm, yarn,
    /// turbo, lerna and nx name a package by its manifest's `name`, which need not be its
    /// folder's. `Cargo.toml`: a Rust backtrace prints the frames of the package whose test runs
    /// relative to that package's folder (`./src/lib.rs`), and names their crate
    /// (`my_lib::tests::name`), which need not be the folder's name either. `read` gives a file's
    /// bytes (the caller's I/O, confined to the repository and bounded by
    /// [`MAX_PACKAGE_MANIFEST_BYTES`]; the parser reads no file); a manifest it cannot give, or
    /// that does not parse, names nothing.
    pub fn with_package_manifests(mut self, mut read: impl FnMut(&str) -> Option<Vec<u8>>) -> Self {
        let mut packages = Vec::new();
        for file in self.manifests("package.json", |_| false) {
            let Some(name) = read(file).and_then(|bytes| npm_package_name(&bytes)) else {
                continue;
            };
            packages.push((name, manifest_folder(file, "package.json").to_owned()));
        }
        packages.sort();
        let mut crates = Vec::new();
        // `cargo package` leaves copies of the packages under `target/package/`.
        let packaged = |f: &str| f.starts_with("target/package/") || f.contains("/target/package/");
        for file in self.manifests("Cargo.toml", packaged) {
            let Some(names) = read(file).map(|bytes| cargo_crate_names(&bytes)) else {
                continue;
            };
            let folder = manifest_folder(file, "Cargo.toml");
            crates.extend(names.into_iter().map(|name| (name, folder.to_owned())));
        }
        crates.sort();
        crates.dedup();
        self.packages = packages;
        self.crates = crates;
        self
    }

    /// The listed manifests named `name` outside dependencies' folders and those `skipped`, at
    /// most [`MAX_PACKAGE_MANIFESTS`].
    fn manifests<'a>(
        &'a self,
        name: &'a str,
        skipped: impl Fn(&str) -> bool + 'a,
    ) -> impl Iterator<Item = &'a str> + 'a {
        self.ending_with(name)
            .filter(move |f| !FOREIGN_SCAN.is_match(f) && !skipped(f))
            .take(MAX_PACKAGE_MANIFESTS)
    }

    /// The folder of the Cargo package whose crate a backtrace names `name` (`my_lib`), with a
    /// `/` after it (`crates/my-lib/`; `""` for the root): the one package that gives the name.
    /// `None` when none or several do, or the manifests were not read.
    pub(crate) fn crate_folder(&self, name: &str) -> Option<String> {
        let mut named = folders_named(&self.crates, name);
        let folder = named.next()?;
        named.next().is_none().then(|| folder_prefix(folder))
    }

    /// The folder of the Cargo package that holds the test target `source` (`tests/api.rs`, as
    /// `cargo test`'s `Running tests/api.rs (target/debug/deps/api-…)` names it, relative to the
    /// package), with a `/` after it: the one listed `FOLDER/source` whose folder holds a listed
    /// `Cargo.toml`. `None` when there is none or several.
    pub(crate) fn cargo_package_holding(&self, source: &str) -> Option<String> {
        let source = source.trim_start_matches("./");
        let mut found = self.ending_with(source).filter_map(|f| {
            let folder = &f[..f.len() - source.len()];
            self.lists(&format!("{folder}Cargo.toml")).then_some(folder)
        });
        let first = found.next()?;
        found.next().is_none().then(|| first.to_owned())
    }

    /// The folder of the workspace package `name` (`@acme/calc`): the one whose manifest gives
    /// that name, when the manifests were read ([`Workspace::with_package_manifests`]) — of
    /// several manifests giving it (an example's copy), the one in the folder named as the
    /// package; otherwise the one listed folder named as the package without its scope that
    /// holds a `package.json` whose name is not known to be another's. `None` when there is no
    /// such folder, or several.
    pub(crate) fn package_folder(&self, name: &str) -> Option<String> {
        let bare = name.rsplit('/').next().unwrap_or(name);
        let named: Vec<&str> = folders_named(&self.packages, name).collect();
        match named[..] {
            [folder] => return Some(folder.to_owned()),
            [] => {}
            _ => {
                let folder = self.folder_named(bare)?;
                return named.contains(&folder.as_str()).then_some(folder);
            }
        }
        self.folder_named(bare)
            .filter(|folder| !self.packages.iter().any(|(_, f)| f == folder))
    }

    /// The one folder named `name` that holds a listed `package.json` (`calc`: `packages/calc`),
    /// outside dependencies' folders.
    fn folder_named(&self, name: &str) -> Option<String> {
        const MANIFEST: &str = "package.json";
        let file = format!("{name}/{MANIFEST}");
        let mut found = self
            .ending_with(&file)
            .filter(|f| !FOREIGN_SCAN.is_match(f))
            .map(|f| &f[..f.len() - MANIFEST.len() - 1]);
        let first = found.next()?;
        found.next().is_none().then(|| first.to_owned())
    }

    /// Whether `file` (repository-relative) is one of the project's files: listed, or anything
    /// when there is no listing.
    pub(crate) fn holds(&self, file: &str) -> bool {
        self.files.is_empty() || self.lists(file)
    }

    /// Whether the listing holds `file`.
    fn lists(&self, file: &str) -> bool {
        self.files.binary_search_by(|f| f.as_str().cmp(file)).is_ok()
    }

    /// The listed file that a path climbing above the folder it was printed in (`../pkg/a.py`)
    /// names: what it names below the climb, found as [`Workspace::by_suffix`] finds a path from
    /// a subfolder. `None` without a listing: nothing is guessed.
    fn above_its_folder(&self, path: &str) -> Option<String> {
        if self.files.is_empty() {
            return None;
        }
        self.by_suffix(&segments(path, Climb::Past)?)
    }

    /// The listed file that `path` names: the same path; or the longest listed file that the
    /// path ends with (an absolute path from another checkout root: `/ci/repo/backend/a.py` is
    /// `backend/a.py` even when `a.py` is listed too); or the one listed file that ends with it (a
    /// tool run in a subfolder prints `app/a.py` for `backend/app/a.py`). `None` when nothing
    /// matches or a subfolder path fits several files: it is never guessed.
    ///
    /// Both are binary searches, not a look at every listed file: the files `path` ends with are
    /// its own endings after each `/` that the listing holds, and the files that end with it one
    /// range of [`Workspace::ending_with`] (a log may hold thousands of paths, a repository list
    /// 100,000 files).
    fn by_suffix(&self, path: &str) -> Option<String> {
        let bare = path.trim_start_matches('/');
        // Longest first: the whole path less its leading `/`s, then what follows each `/` in it.
        let endings = std::iter::once(bare).chain(path.match_indices('/').map(|(at, _)| &path[at + 1..]));
        if let Some(longest) = endings.filter(|e| !e.is_empty()).find(|e| self.lists(e)) {
            return Some(longest.to_owned());
        }
        let mut found = self.ending_with(bare).filter(|f| f.len() > bare.len());
        let first = found.next()?;
        found.next().is_none().then(|| first.to_owned())
    }
}

/// The folders `name` has in a list of (name, folder) ordered by name: one binary search.
fn folders_named<'a>(list: &'a [(String, String)], name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    let start = list.partition_point(|(n, _)| n.as_str() < name);
    list[start..]
        .iter()
        .take_while(move |(n, _)| n == name)
        .map(|(_, folder)| folder.as_str())
}

/// The folder a manifest named `name` is in (`packages/calc`; `""` for the root).
fn manifest_folder<'a>(file: &'a str, name: &str) -> &'a str {
    file.strip_suffix(name).unwrap_or("").trim_end_matches('/')
}

/// `crates/a` → `crates/a/`, and the root `""` stays `""`: a folder ready to put before a path.
fn folder_prefix(folder: &str) -> String {
    if folder.is_empty() {
        String::new()
    } else {
        format!("{folder}/")
    }
}

/// A `package.json`'s `name`, when it is one npm would accept.
fn npm_package_name(bytes: &[u8]) -> Option<String> {
    /// The one field read; serde skips the rest of the manifest.
    #[derive(serde::Deserialize)]
    struct Manifest {
        name: Option<String>,
    }
    let name = serde_json::from_slice::<Manifest>(bytes).ok()?.name?;
    // npm's own bounds on a name: at most 214 characters, no whitespace or controls.
    (!name.is_empty() && name.len() <= 214 && !name.bytes().any(|b| b <= b' ')).then_some(name)
}

/// The names a `Cargo.toml`'s crates have in a backtrace: its `[lib]` name, or else its
/// package's, and each `[[bin]]`'s, with `-` as `_` (rustc's crate names). A workspace's root
/// manifest without a `[package]` names none.
fn cargo_crate_names(bytes: &[u8]) -> Vec<String> {
    /// The fields read; serde skips the rest of the manifest.
    #[derive(serde::Deserialize)]
    struct Manifest {
        package: Option<Named>,
        lib: Option<Named>,
        #[serde(default)]
        bin: Vec<Named>,
    }
    #[derive(serde::Deserialize)]
    struct Named {
        name: Option<String>,
    }
    let Some(manifest) = std::str::from_utf8(bytes)
        .ok()
        .and_then(|text| toml::from_str::<Manifest>(text).ok())
    else {
        return Vec::new();
    };
    let package = manifest.package.and_then(|p| p.name);
    let lib = manifest.lib.and_then(|l| l.name).or_else(|| package.clone());
    let bins = manifest.bin.into_iter().filter_map(|b| b.name);
    let mut names: Vec<String> = lib
        .into_iter()
        .chain(package)
        .chain(bins)
        .map(|name| name.replace('-', "_"))
        // A crate name is an identifier: anything else names no crate a backtrace prints.
        .filter(|name| {
            !name.is_empty() && name.len() <= 64 && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

/// `%C3%A4` → `ä`; `None` when the bytes are not UTF-8.
fn percent_decode(uri: &str) -> Option<String> {
    let b = uri.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (
            b[i],
            b.get(i + 1).copied().and_then(hex),
            b.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(hi), Some(lo)) => {
                out.push((hi * 16 + lo) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// Removes `./` and `.` segments and resolves `..` inside the path; `None` if it leaves the root.
fn normalise(path: &str) -> Option<String> {
    segments(path, Climb::Within)
}

/// What a `..` that climbs above the path's own start means.
#[derive(Clone, Copy, PartialEq)]
enum Climb {
    /// Nothing: the path leaves the folder it was printed in.
    Within,
    /// The climb is dropped: what is below it is what the path names.
    Past,
}

/// `path` with `.` and `..` resolved and `/`s single, or `None` when nothing is left (or, climbing
/// [`Climb::Within`], when a `..` climbs above the start).
fn segments(path: &str, climb: Climb) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() && climb == Climb::Within {
                    return None;
                }
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
        assert_eq!(
            ws.relative("file:///workspace/repo/tests/test_w%C3%A4hrung.py")
                .as_deref(),
            Some("tests/test_währung.py")
        );
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

    /// Whether `long` is `short` below a folder: what the scans below look for in each name.
    fn ends_below_a_folder(long: &str, short: &str) -> bool {
        long.strip_suffix(short).is_some_and(|head| head.ends_with('/'))
    }

    proptest::proptest! {
        /// The binary search of the reversed names finds exactly the files a look at each finds.
        #[test]
        fn the_files_ending_with_a_path_are_those_a_scan_finds(
            files in proptest::collection::vec("[ab/é]{1,6}", 0..12),
            suffix in "[ab/é]{1,4}",
        ) {
            let ws = Workspace::new("/w").with_files(files);
            let mut found: Vec<String> = ws.ending_with(&suffix).map(str::to_owned).collect();
            found.sort();
            let scanned: Vec<String> = ws
                .files
                .iter()
                .filter(|f| f.as_str() == suffix || ends_below_a_folder(f, &suffix))
                .cloned()
                .collect();
            proptest::prop_assert_eq!(found, scanned);
        }
    }

    /// The listed file a path names, found by binary searches, is the one a look at every
    /// listed file finds (as `by_suffix` found it before the searches).
    fn by_suffix_by_scan(files: &[String], path: &str) -> Option<String> {
        let bare = path.trim_start_matches('/');
        if let Some(longest) = files
            .iter()
            .filter(|f| f.as_str() == bare || ends_below_a_folder(path, f))
            .max_by_key(|f| f.len())
        {
            return Some(longest.clone());
        }
        let mut found = files.iter().filter(|f| ends_below_a_folder(f, bare));
        let first = found.next()?;
        found.next().is_none().then(|| first.clone())
    }

    proptest::proptest! {
        #[test]
        fn the_file_a_path_names_is_the_one_a_scan_finds(
            // Listed names are relative, with no empty segment (`git ls-files`, the folder's
            // walk); the path is anything a log prints.
            files in proptest::collection::vec("([abé]{1,2}/){0,2}[abé]{1,2}", 0..14),
            path in "[ab/é]{0,8}",
        ) {
            let ws = Workspace::new("/w").with_files(files);
            proptest::prop_assert_eq!(ws.by_suffix(&path), by_suffix_by_scan(&ws.files, &path));
        }
    }

    /// tox installs the project into its environment: its frames there are the project's files.
    #[test]
    fn the_projects_own_installed_package_is_its_source() {
        let ws = Workspace::new("/w").with_files(vec![
            "src/cachetools/keys.py".into(),
            "src/six.py".into(),
            "vendor/attr.py".into(),
            "tests/test_keys.py".into(),
            "src/pip/__init__.py".into(),
            "src/pip/_vendor/__init__.py".into(),
            "src/pip/_vendor/rich/console.py".into(),
        ]);
        for (printed, file) in [
            (
                ".tox/py/lib/python3.11/site-packages/cachetools/keys.py",
                Some("src/cachetools/keys.py"),
            ),
            (
                "/w/.nox/tests/lib/python3.12/site-packages/cachetools/keys.py",
                Some("src/cachetools/keys.py"),
            ),
            ("/usr/lib/python3/dist-packages/six.py", Some("src/six.py")),
            // A dependency: not in the project, or a module whose namesake lies deeper.
            (".tox/py/lib/python3.11/site-packages/requests/models.py", None),
            (".tox/py/lib/python3.11/site-packages/attr.py", None),
            // A vendored copy of a dependency is part of another package, not that dependency.
            (".tox/py/lib/python3.11/site-packages/rich/console.py", None),
            ("/usr/lib/python3.11/json/decoder.py", None),
        ] {
            assert_eq!(ws.relative(printed).as_deref(), file, "{printed}");
        }
        // Without the file list nothing tells the project's package from a dependency.
        let bare = Workspace::new("/w");
        assert_eq!(
            bare.relative(".tox/py/lib/python3.11/site-packages/cachetools/keys.py"),
            None
        );
    }

    /// A Cargo package's crate is named by its `[lib]` name, or its package's or a binary's name
    /// with `-` as `_`; a workspace's root manifest names none, nor does a manifest that does not
    /// parse; a name two packages give names no folder.
    #[test]
    fn cargo_manifests_name_their_packages_crates() {
        let manifests = [
            ("Cargo.toml", "[workspace]\nmembers = [\"crates/*\"]\n"),
            (
                "crates/slug/Cargo.toml",
                "[package]\nname = \"slug-tools\"\nversion = \"0.1.0\"\n",
            ),
            (
                "crates/core/Cargo.toml",
                "[package]\nname = \"acme-core\"\n[lib]\nname = \"acme\"\n[[bin]]\nname = \"acme-cli\"\npath = \"src/main.rs\"\n",
            ),
            ("crates/broken/Cargo.toml", "[package\nname = \"broken\"\n"),
            ("examples/a/Cargo.toml", "[package]\nname = \"demo\"\n"),
            ("examples/b/Cargo.toml", "[package]\nname = \"demo\"\n"),
            (
                "target/package/slug-tools-0.1.0/Cargo.toml",
                "[package]\nname = \"packed\"\n",
            ),
        ];
        let ws = crate::parse::workspace_with_manifests(&manifests, &[]);
        assert_eq!(ws.crate_folder("slug_tools").as_deref(), Some("crates/slug/"));
        assert_eq!(ws.crate_folder("slug-tools"), None, "a crate's name has no `-`");
        assert_eq!(ws.crate_folder("acme").as_deref(), Some("crates/core/"));
        assert_eq!(ws.crate_folder("acme_core").as_deref(), Some("crates/core/"));
        assert_eq!(ws.crate_folder("acme_cli").as_deref(), Some("crates/core/"));
        assert_eq!(ws.crate_folder("broken"), None);
        assert_eq!(ws.crate_folder("demo"), None, "two packages give it");
        assert_eq!(ws.crate_folder("packed"), None, "cargo package's copy under target/");
    }

    /// An integration test's package is the one folder that holds both the test's file and a
    /// `Cargo.toml`.
    #[test]
    fn a_test_target_s_package_is_the_one_that_holds_it() {
        let ws = Workspace::new("/w").with_files(
            [
                "Cargo.toml",
                "crates/a/Cargo.toml",
                "crates/a/tests/api.rs",
                "crates/b/Cargo.toml",
                "crates/b/tests/api.rs",
                "crates/b/tests/cli.rs",
                "docs/tests/cli.rs",
                "tests/root.rs",
            ]
            .map(String::from)
            .to_vec(),
        );
        assert_eq!(ws.cargo_package_holding("tests/cli.rs").as_deref(), Some("crates/b/"));
        assert_eq!(ws.cargo_package_holding("tests/root.rs").as_deref(), Some(""));
        assert_eq!(ws.cargo_package_holding("tests/api.rs"), None, "two packages hold one");
        assert_eq!(ws.cargo_package_holding("tests/none.rs"), None);
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

    #[test]
    fn paths_from_a_subfolder_resolve_to_the_one_file_they_name() {
        let ws = Workspace::new("").with_files(vec![
            "backend/app/models.py".into(),
            "app/models.py".into(),
            "backend/ledger/fx.py".into(),
            "web/src/cart.js".into(),
            "backend/tests/__init__.py".into(),
            "web/tests/__init__.py".into(),
        ]);
        // Run in backend/: relative to it.
        assert_eq!(ws.relative("ledger/fx.py").as_deref(), Some("backend/ledger/fx.py"));
        assert_eq!(ws.relative("src/cart.js").as_deref(), Some("web/src/cart.js"));
        // An absolute path: the longest listed suffix, not the shorter file that also matches.
        assert_eq!(
            ws.relative("/ci/checkout/backend/app/models.py").as_deref(),
            Some("backend/app/models.py")
        );
        // Two files fit: not guessed (the path stays as printed, and is not a listed file).
        assert_eq!(ws.relative("tests/__init__.py").as_deref(), Some("tests/__init__.py"));
        // Run in backend/tests/: `../ledger/fx.py` climbs out of it to a listed file.
        assert_eq!(ws.relative("../ledger/fx.py").as_deref(), Some("backend/ledger/fx.py"));
        assert_eq!(ws.relative("../../web/src/cart.js").as_deref(), Some("web/src/cart.js"));
        // Climbing to a file the listing does not hold, or to one of two: nothing.
        assert_eq!(ws.relative("../ledger/missing.py"), None);
        assert_eq!(ws.relative("../tests/__init__.py"), None);
        assert_eq!(ws.relative("../.."), None);
    }
}
