//! Runners' own text around a tool's lines, taken off after cleaning and before the formats see
//! a line. A monorepo's script runner names the package before each line of its output, and
//! several packages' lines interleave:
//!
//! | runner                              | the line that shows the prefix          | prefix          |
//! |-------------------------------------|------------------------------------------|-----------------|
//! | pnpm `-r` / `--filter`              | `packages/calc test$ node --test`        | `packages/calc test: ` |
//! | turbo                               | `calc:test: cache miss, executing 5a6b…`, or npm's header `calc:test: > calc@1.0.0 test` | `calc:test: ` |
//! | lerna and nx `--stream`             | `calc: > calc@1.0.0 test` (npm's header) | `calc: `        |
//! | yarn `workspaces foreach -p`        | `[calc]: ` and a package folder `calc/`  | `[calc]: `      |
//! | npm `--workspaces` / `-w`           | `> calc@1.0.0 test` (npm's header), no prefix: one package after another | none |
//! | concurrently, npm-run-all `--print-label` | `[lint] > lint` (npm's header of the script the process runs) | `[lint] `, `[0] ` |
//!
//! Log collectors name the container or the step before each line of its output, and several
//! containers' lines interleave as well: their prefixes are taken off the same way, from the
//! first line that shows one (the shapes below are the collectors' own, and tell themselves),
//! and a timestamp after one (`--timestamps`) with it.
//!
//! | collector                                | prefix                                   |
//! |------------------------------------------|------------------------------------------|
//! | `kubectl logs --prefix`                  | `[pod/api-7d9f8-x2x4k/test] `            |
//! | Tekton's `tkn pipelinerun logs`, `tkn taskrun logs` | `[unit-tests : pytest] `      |
//! | `docker compose up`, `docker compose logs` | `web-1    \| ` (the name padded to the longest name's width and one) |
//! | Google Cloud Build                       | `Step #1: `, `Step #1 - "pytest": `      |
//! | nektos/act (a GitHub Actions job run locally) | `[CI/test]   \| `                     |
//! | Argo Workflows' `argo logs`              | `ci-x7k2p-test-1200007919: ` (a workflow pod's name ends in a decimal hash) |
//! | stern (its default template)             | `api-7d9f8c6b5-x2x4k test ` (the pod's name ends in its 5-character hash) |
//!
//! A prefix is taken off only once the log showed it for what it is (a script starting, the
//! package manager's header naming the same package, turbo's cache line, or, for yarn, which
//! prints neither, a package of that name in the repository): a line that merely looks like one
//! (`tests/a.py failed: ...`, `error: ...`) keeps its text. The package's folder becomes the
//! sink's [`super::Sink::package`], so that a path its tool prints relative to the folder
//! resolves there first.
//!
//! cargo-nextest prints each failed test's captured output under a `  stdout ───` or
//! `  stderr ───` heading, every line indented by four spaces: the indentation comes off, so the
//! test's panic and backtrace read as libtest prints them, until nextest's next status line.
//!
//! Several packages' tools run at once and their lines interleave: the parser keeps each
//! package's text formats apart (`Parser::package_formats`), so that a failure block is read from
//! its own package's lines, and its paths resolve in its package's folder. The folder is the one
//! whose `package.json` gives the package's name, when the caller read the manifests
//! (`Workspace::with_package_manifests`: the parser reads no file); otherwise the one listed
//! folder named as the package that holds a `package.json`.

use std::borrow::Cow;

use super::clean::{cut_front, strip_timestamp};
use super::paths::Workspace;

/// Most workspace packages' prefixes kept: a monorepo's recursive run names each package once.
const MAX_RUNNER_PREFIXES: usize = 64;
/// Longest prefix kept (an npm package's name has at most 214 characters): every line is
/// compared with each prefix.
const MAX_PREFIX: usize = 256;

/// A package's prefix and the package's folder (empty when not known).
struct Prefix {
    text: String,
    folder: String,
    /// The package is named by npm's header before its script's output, not by a prefix on each
    /// line (`text` is its header): its lines are those up to the next header.
    headed: bool,
    /// A log collector's prefix: a timestamp may follow it.
    collector: bool,
}

#[derive(Default)]
pub(crate) struct Runners {
    prefixes: Vec<Prefix>,
    /// The first bytes of the prefixes learnt (not npm's headers), a bit each: a line that starts
    /// with none of them is compared with no prefix. Once a log showed a prefix, every line after
    /// it is asked, and most start with another byte.
    first_bytes: FirstBytes,
    /// The package whose script npm runs now (`npm test --workspaces`), by its header.
    headed: Option<usize>,
    /// Inside a test's output that cargo-nextest captured and indents.
    nextest_output: bool,
}

impl Runners {
    /// Learns the prefix `line` (cleaned, not yet stripped) shows, if it shows one: asked of the
    /// lines that hold a `$` (`script_start`: pnpm's script start has one, as the buffer's scan
    /// tells) and those [`may_show_a_prefix`] lets through.
    pub(crate) fn note(&mut self, line: &str, script_start: bool, workspace: &Workspace) {
        // A header switches to a package learnt before even when no more can be learnt.
        if line.starts_with("> ") {
            self.note_header(line, workspace);
            return;
        }
        if self.prefixes.len() >= MAX_RUNNER_PREFIXES {
            return;
        }
        if let Some(len) = collector_prefix(line) {
            self.learn(&line[..len], String::new(), true);
            return;
        }
        let pnpm = if script_start { pnpm_script_start(line) } else { None };
        let learnt = pnpm.or_else(|| match line.as_bytes().first() {
            Some(b'[') => yarn_prefix(line, workspace).or_else(|| label_prefix(line).map(|text| (text, String::new()))),
            _ => named_prefix(line).map(|(text, name)| (text, package_folder(workspace, name))),
        });
        if let Some((text, folder)) = learnt {
            self.learn(&text, folder, false);
        }
    }

    /// Keeps a prefix a line showed, unless it is kept already or longer than [`MAX_PREFIX`].
    fn learn(&mut self, text: &str, folder: String, collector: bool) {
        if text.len() <= MAX_PREFIX && !self.prefixes.iter().any(|p| p.text == text) {
            self.first_bytes.add(text);
            self.prefixes.push(Prefix {
                text: text.to_owned(),
                folder,
                headed: false,
                collector,
            });
        }
    }

    /// npm's header of a script, `> calc@1.0.0 test`, with no runner's prefix before it: the
    /// lines after it, up to the next header, are that package's (`npm test --workspaces` runs
    /// one package's script after another). The root package's, one the repository does not
    /// name (or one past the packages kept), or npm's own error at the end of the run (`npm
    /// error`, `npm ERR!`) ends the last package's lines; a run whose last package passed has
    /// no end, and its lines reach to the log's end (a path there resolves in the package's
    /// folder first, and anywhere else when the folder has no such file).
    fn note_header(&mut self, line: &str, workspace: &Workspace) {
        // The command line under the header (`> jest --ci`) is no header.
        let Some(name) = npm_header_package(line) else {
            return;
        };
        let folder = workspace.package_folder(name).filter(|folder| !folder.is_empty());
        self.headed = folder.and_then(|folder| {
            if let Some(i) = self.prefixes.iter().position(|p| p.headed && p.folder == folder) {
                return Some(i);
            }
            (self.prefixes.len() < MAX_RUNNER_PREFIXES).then(|| {
                self.prefixes.push(Prefix {
                    text: line.to_owned(),
                    folder,
                    headed: true,
                    collector: false,
                });
                self.prefixes.len() - 1
            })
        });
    }

    /// Whether a line that starts with `first` has nothing of a runner's to take off unless it
    /// shows a prefix or starts nextest's output: no learnt prefix starts with that byte, no
    /// npm-headed package owns the lines, and no captured output of nextest's is being read.
    /// A log that showed a collector's prefix early (a kubectl section) keeps the lines of its
    /// other sections on the quick path.
    #[inline]
    pub(crate) fn passes_over(&self, first: Option<u8>) -> bool {
        !first.is_some_and(|b| self.first_bytes.holds(b)) && self.headed.is_none() && !self.nextest_output
    }

    /// `line` without a package's prefix and without nextest's indentation of a captured output,
    /// and the index of the package's prefix ([`Runners::folder`] gives its folder). `raw`: the
    /// line before cleaning.
    pub(crate) fn strip<'a>(&mut self, line: Cow<'a, str>, raw: &str) -> (Cow<'a, str>, Option<usize>) {
        if self.headed.is_some() && (line.starts_with("npm error ") || line.starts_with("npm ERR! ")) {
            self.headed = None;
        }
        let prefixed = line
            .as_bytes()
            .first()
            .filter(|&&b| self.first_bytes.holds(b))
            .and_then(|_| {
                self.prefixes
                    .iter()
                    .position(|p| !p.headed && line.starts_with(p.text.as_str()))
            });
        let line = match prefixed {
            Some(i) => {
                let prefix = &self.prefixes[i];
                let mut start = prefix.text.len();
                if prefix.collector {
                    start += strip_timestamp(&line[start..]).unwrap_or(0);
                }
                cut_front(line, start)
            }
            None => line,
        };
        (self.nextest(line, raw), prefixed.or(self.headed))
    }

    /// The folder of the package whose prefix is the `i`th learnt (empty when not known).
    pub(crate) fn folder(&self, i: usize) -> &str {
        self.prefixes.get(i).map_or("", |p| p.folder.as_str())
    }

    /// Takes nextest's four spaces off a captured output's lines; notes where one begins and
    /// ends. A captured line that redrew itself (a progress bar) is its last redraw, which
    /// nextest's indentation does not reach: it is still the test's output. `raw`: the line
    /// before cleaning, which tells a redraw ([`super::clean::redrawn`]).
    fn nextest<'a>(&mut self, line: Cow<'a, str>, raw: &str) -> Cow<'a, str> {
        let bytes = line.as_bytes();
        if self.nextest_output {
            if bytes.is_empty() {
                return line;
            }
            if bytes.starts_with(b"    ") && !is_nextest_status(&line[4..]) {
                return cut_front(line, 4);
            }
            if super::clean::redrawn(raw) && !is_nextest_status(&line) {
                return line;
            }
            self.nextest_output = false;
        }
        if may_be_nextest_heading(bytes) && is_nextest_heading(&line) {
            self.nextest_output = true;
        }
        line
    }
}

/// The first bytes of some texts, a bit each.
#[derive(Default)]
struct FirstBytes([u64; 4]);

impl FirstBytes {
    fn add(&mut self, text: &str) {
        if let Some(&b) = text.as_bytes().first() {
            self.0[usize::from(b) / 64] |= 1 << (b % 64);
        }
    }

    #[inline]
    fn holds(&self, b: u8) -> bool {
        self.0[usize::from(b) / 64] & (1 << (b % 64)) != 0
    }
}

/// Whether a line is as short as nextest's heading of a captured output, starts as it does and
/// ends as it does (`─` is `E2 94 80`): one look, as every line is asked.
#[inline]
pub(crate) fn may_be_nextest_heading(line: &[u8]) -> bool {
    (12..=24).contains(&line.len()) && line.starts_with(b"  ") && matches!(line.last(), Some(0x80 | b'-'))
}

/// Whether `line` may show a prefix other than pnpm's: yarn's, kubectl's and Tekton's start with
/// `[`; turbo's, lerna's and nx's with a package's name and a colon, then a space (`calc: >
/// calc@1.0.0 test`) or a task's name (`calc:test: `); docker compose's with a name, spaces and
/// `| ` (`pipe`: the line may hold a `|`, as the buffer's scan tells); Cloud Build's with `Step #`.
/// One look at the first byte rules out most lines; a pytest id (`tests/a.py::t`) or libtest's
/// line (`test a::b ... ok`) is ruled out at its first colon.
#[inline]
pub(crate) fn may_show_a_prefix(line: &[u8], pipe: bool) -> bool {
    match line.first() {
        Some(b'[') => true,
        Some(b'S') => line.starts_with(b"Step #"),
        Some(b'a'..=b'z' | b'0'..=b'9') if pipe && compose_prefix(line).is_some() || stern_prefix(line).is_some() => {
            true
        }
        // npm's header of a script: `> calc@1.0.0 test`.
        Some(b'>') => line.get(1) == Some(&b' ') && line.get(2).is_some_and(|&b| is_name_byte(b)),
        Some(b'a'..=b'z' | b'0'..=b'9' | b'@' | b'.') => memchr::memchr(b':', line).is_some_and(|c| {
            matches!(line.get(c + 1), Some(b' ' | b'a'..=b'z' | b'A'..=b'Z'))
                && line[..c].iter().all(|&b| is_name_byte(b))
        }),
        _ => false,
    }
}

/// A log collector's prefix at the start of `line` (the table in the module's documentation):
/// its length.
fn collector_prefix(line: &str) -> Option<usize> {
    let b = line.as_bytes();
    match b.first()? {
        b'[' => {
            let close = memchr::memchr(b']', b)?;
            if b.get(close + 1) != Some(&b' ') {
                return None;
            }
            let inside = &line[1..close];
            if line[close + 1..].starts_with("   | ") {
                // act: `[WORKFLOW/JOB]   | `, the job's raw output.
                return Some(close + 6);
            }
            let shown = if let Some(pod) = inside.strip_prefix("pod/") {
                // kubectl: `pod/NAME/CONTAINER`.
                pod.split_once('/')
                    .is_some_and(|(pod, container)| is_k8s_name(pod) && is_k8s_name(container))
            } else {
                // tkn: `TASK : STEP`.
                inside
                    .split_once(" : ")
                    .is_some_and(|(task, step)| is_k8s_name(task) && is_k8s_name(step))
            };
            shown.then_some(close + 2)
        }
        b'S' => {
            // Cloud Build: `Step #1: `, `Step #1 - "pytest": `.
            let rest = line.strip_prefix("Step #")?;
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            let after = &rest[digits..];
            let end = if after.starts_with(": ") {
                2
            } else {
                let id = after.strip_prefix(" - \"")?;
                id.find("\": ")? + 4 + 3
            };
            (digits > 0).then_some("Step #".len() + digits + end)
        }
        _ => compose_prefix(b).or_else(|| stern_prefix(b)).or_else(|| argo_prefix(b)),
    }
}

/// `argo logs`' prefix, `POD: ` (`fmt.Sprintf("%s: %s", pod, line)`), when the pod's name ends
/// in the decimal hash Argo gives a workflow's pods (`-1200007919`): its length.
fn argo_prefix(line: &[u8]) -> Option<usize> {
    let pod = hashed_pod_name(line, |hash| {
        (8..=10).contains(&hash.len()) && hash.iter().all(u8::is_ascii_digit)
    })?;
    (line.get(pod..pod + 2) == Some(b": ")).then_some(pod + 2)
}

/// stern's default prefix, `POD CONTAINER `, when the pod's name ends in the hash Kubernetes gives
/// a Job's or a ReplicaSet's pods (`-` and five of `bcdfghjklmnpqrstvwxz2456789`): its length.
/// Without that hash two words at a line's start are the tool's own text.
fn stern_prefix(line: &[u8]) -> Option<usize> {
    // A pod's name is at least `x-` and its hash: a line whose seventh byte ends a word is none.
    if !line.get(..7)?.iter().copied().all(is_k8s_name_byte) {
        return None;
    }
    let pod = hashed_pod_name(line, |hash| {
        hash.len() == 5 && hash.iter().all(|b| b"bcdfghjklmnpqrstvwxz2456789".contains(b))
    })?;
    if line.get(pod) != Some(&b' ') {
        return None;
    }
    let container = line[pod + 1..].iter().take_while(|&&b| is_k8s_name_byte(b)).count();
    (container > 0 && line.get(pod + 1 + container) == Some(&b' ')).then_some(pod + container + 2)
}

/// The length of the Kubernetes name `line` starts with, when it has a `-` and what follows its
/// last one is a hash `is_hash` takes (a controller's pods are named so).
#[inline]
fn hashed_pod_name(line: &[u8], is_hash: impl Fn(&[u8]) -> bool) -> Option<usize> {
    let pod = line.iter().take_while(|&&b| is_k8s_name_byte(b)).count();
    let dash = line[..pod].iter().rposition(|&b| b == b'-')?;
    (dash > 0 && is_hash(&line[dash + 1..pod])).then_some(pod)
}

/// docker compose's prefix, `NAME` padded with spaces to the longest name's width and one, then
/// ` | `: its length. At least two spaces stand before the bar.
fn compose_prefix(line: &[u8]) -> Option<usize> {
    let name = line
        .iter()
        .take_while(|&&b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        .count();
    let spaces = line[name..].iter().take_while(|&&b| b == b' ').count();
    let bar = name + spaces;
    (name > 0 && spaces >= 2 && line.get(bar..bar + 2) == Some(b"| ")).then_some(bar + 2)
}

/// A Kubernetes object's name as kubectl and tkn print it (a DNS label or subdomain).
fn is_k8s_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(is_k8s_name_byte)
}

/// A byte of a Kubernetes object's name.
#[inline]
fn is_k8s_name_byte(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'.')
}

/// nextest's heading of a test's captured output: `  stdout ───`, `  stderr ───`, `  output ───`.
fn is_nextest_heading(line: &str) -> bool {
    let Some(word) = line
        .strip_prefix("  ")
        .and_then(|l| l.strip_suffix(" ───").or_else(|| l.strip_suffix(" ---")))
    else {
        return false;
    };
    matches!(word, "stdout" | "stderr" | "output")
}

/// nextest's status of a test, indented: `    FAIL [   0.101s] ( 3/46) itoa::test test_min`,
/// `SIGABRT [`, `TRY 2 FAIL [`, `TIMEOUT [`: upper-case words, then the time in brackets.
fn is_nextest_status(text: &str) -> bool {
    let text = text.trim_start();
    let Some(open) = text.find(" [") else {
        return false;
    };
    let words = &text[..open];
    let Some(time) = text[open + 2..].split_once(']').map(|(t, _)| t.trim_start()) else {
        return false;
    };
    !words.is_empty()
        && words.as_bytes()[0].is_ascii_uppercase()
        && words
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b' ')
        && time
            .strip_suffix('s')
            .is_some_and(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit() || b == b'.') && t.contains('.'))
}

/// Whether `name` is made as a package script's or a turbo task's name is (`test`, `test:unit`).
fn is_script_name(name: &str) -> bool {
    name.bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b':' | b'-' | b'_' | b'.'))
}

/// A byte of an npm package's name (`calc`, `@acme/ui`, `lodash.kebabcase`).
fn is_name_byte(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'@' | b'/')
}

/// Whether `name` can be an npm package's name: `name` or `@scope/name`.
fn is_package_name(name: &str) -> bool {
    let bare = match name.strip_prefix('@') {
        Some(scoped) => match scoped.split_once('/') {
            Some((scope, bare)) if !scope.is_empty() => bare,
            _ => return false,
        },
        None => name,
    };
    !bare.is_empty() && !bare.contains(['@', '/']) && !bare.starts_with('.')
}

/// A prefix that starts with the package's name, shown by what follows it on the line: lerna's and
/// nx's `calc: ` before npm's header `> calc@1.0.0 test`; turbo's `calc:test: ` before its cache
/// line (`cache miss, executing 5a6b…`, `cache hit, replaying logs …`, `cache bypass, …`) or
/// npm's header. Returns the prefix and the package's name.
fn named_prefix(line: &str) -> Option<(String, &str)> {
    let end = line.bytes().position(|b| !is_name_byte(b))?;
    let name = &line[..end];
    if line.as_bytes()[end] != b':' || !is_package_name(name) {
        return None;
    }
    let rest = &line[end + 1..];
    let names_it = |text: &str| {
        text.strip_prefix("> ")
            .and_then(|header| header.strip_prefix(name))
            .is_some_and(|version| version.starts_with('@'))
    };
    if let Some(after) = rest.strip_prefix(' ')
        && names_it(after)
    {
        return Some((line[..end + 2].to_owned(), name));
    }
    // turbo: a task (`test`, `test:unit`), then `: `.
    let task_end = rest.find(": ")?;
    let task = &rest[..task_end];
    let after = &rest[task_end + 2..];
    let task_like = task.as_bytes().first().is_some_and(u8::is_ascii_alphabetic) && is_script_name(task);
    let shown = ["cache miss, ", "cache hit, ", "cache bypass, "]
        .iter()
        .any(|c| after.starts_with(c))
        || names_it(after);
    (task_like && shown).then(|| (line[..end + 1 + task_end + 2].to_owned(), name))
}

/// yarn's `[calc]: ` (`yarn workspaces foreach -p`), which no line announces: taken when the
/// repository has the package's folder, with the package's folder.
fn yarn_prefix(line: &str, workspace: &Workspace) -> Option<(String, String)> {
    let close = line.find("]: ")?;
    let name = &line[1..close];
    if !name.bytes().all(is_name_byte) || !is_package_name(name) {
        return None;
    }
    let folder = package_folder(workspace, name);
    (!folder.is_empty()).then(|| (line[..close + 3].to_owned(), folder))
}

/// A process's label before each line of its output, as concurrently prints it (`[lint] `, or
/// the process's index, `[0] `) and npm-run-all's `--print-label` (`[lint] `, padded to the
/// longest label's width): shown by npm's header of the script the process runs after it
/// (`[lint] > lint`, `[test] > calc@1.0.0 test`). The processes' lines interleave; the paths they
/// print are the scripts' own (no package folder is known).
fn label_prefix(line: &str) -> Option<String> {
    let close = line.find("] > ")?;
    let label = &line[1..close];
    let header_starts = line.as_bytes().get(close + 4).is_some_and(|&b| is_name_byte(b));
    (header_starts && !label.trim().is_empty() && label.len() <= MAX_LABEL && !label.contains('['))
        .then(|| line[..close + 2].to_owned())
}

/// Longest process label kept ([`label_prefix`]): concurrently's default is the command itself.
const MAX_LABEL: usize = 64;

/// The folder of the repository's package `name` ([`Workspace::package_folder`]); empty when
/// not known.
fn package_folder(workspace: &Workspace, name: &str) -> String {
    workspace.package_folder(name).unwrap_or_default()
}

/// The package npm's header of a script names: `> calc@1.0.0 test`, `> @acme/ui@2.1.0-rc.1
/// test:unit` (not its command line, `> jest --ci`, nor pytest's `>` before a failing line).
fn npm_header_package(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("> ")?;
    let at = rest.get(1..)?.find('@')? + 1;
    let (name, rest) = (&rest[..at], &rest[at + 1..]);
    let (version, script) = rest.split_once(' ')?;
    let version_like = version.as_bytes().first().is_some_and(u8::is_ascii_digit) && !version.contains(' ');
    let script = script.trim_end();
    (is_package_name(name) && version_like && !script.is_empty() && is_script_name(script)).then_some(name)
}

/// pnpm's `<package folder> <script>$ <command>`: the prefix `<package folder> <script>: ` of the
/// script's output, and the folder. The folder is a relative path (`packages/calc`, or `.` for
/// the root).
fn pnpm_script_start(line: &str) -> Option<(String, String)> {
    let (folder, rest) = line.split_once(' ')?;
    let (script, command) = rest.split_once("$ ")?;
    // A relative folder (`packages/calc`, `.`), not a file's path (`tests/a.py`).
    let last = folder.rsplit('/').next().unwrap_or(folder);
    let folder_like = folder == "."
        || folder.contains('/') && !folder.starts_with('/') && !folder.contains(':') && !last.contains('.');
    let script_like = !script.is_empty() && is_script_name(script);
    let package = if folder == "." { "" } else { folder };
    let inside = !folder.split('/').any(|segment| segment == "..");
    (folder_like && inside && script_like && !command.trim().is_empty())
        .then(|| (format!("{folder} {script}: "), package.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{ParseOutput, report_findings};

    /// Each report's file and line.
    fn places(parsed: &ParseOutput) -> Vec<(&str, u32)> {
        parsed
            .reports
            .iter()
            .map(|r| (r.file_path.as_str(), r.line_number))
            .collect()
    }
    #[test]
    fn a_workspace_package_s_prefix_is_taken_off_once_its_script_started() {
        // pnpm 10 `pnpm -r test`: two packages' scripts start, their lines interleave (node's
        // TAP in one); a line shaped like a prefix that no script started keeps its text.
        let log = "\
Scope: 2 of 3 workspace projects
packages/calc test$ node --test test.js
packages/ms test$ node --test
packages/calc test: TAP version 13
packages/calc test: not ok 1 - clamp keeps values inside the range
packages/ms test: TAP version 13
packages/calc test:   ---
packages/calc test:   location: '/w/packages/calc/test.js:6:1'
packages/calc test:   failureType: 'testCodeFailure'
packages/calc test:   error: 'Expected values to be strictly equal'
packages/calc test:   stack: |-
packages/calc test:     TestContext.<anonymous> (/w/packages/calc/test.js:7:10)
packages/calc test:   ...
packages/calc test: 1..1
packages/calc test: Failed
";
        let parsed = crate::parse::parse(log, &crate::parse::Workspace::new("/w"));
        assert_eq!(places(&parsed), [("packages/calc/test.js", 7)], "{:#?}", parsed.reports);

        // A path a package's tool prints relative to the package's folder is that folder's file,
        // though another package has a file of that name too.
        let log = "\
packages/ms lint$ eslint --format unix test.js
packages/ms lint: test.js:9:5: 'mn' is not defined. [Error/no-undef]
packages/calc lint$ eslint --format unix test.js
packages/calc lint: test.js:3:1: Unexpected console statement. [Error/no-console]
test.js:4:2: Printed outside any package. [Error/no-console]
";
        let files = vec!["packages/calc/test.js".to_owned(), "packages/ms/test.js".to_owned()];
        let parsed = crate::parse::parse(log, &crate::parse::Workspace::new("/w").with_files(files));
        assert_eq!(
            places(&parsed),
            [("packages/ms/test.js", 9), ("packages/calc/test.js", 3), ("test.js", 4)],
            "{:#?}",
            parsed.reports
        );

        let workspace = Workspace::new("/w");
        let mut runners = Runners::default();
        let strip = |runners: &mut Runners, line: &'static str| {
            runners.note(line, line.contains('$'), &workspace);
            let (line, package) = runners.strip(Cow::Borrowed(line), line);
            let folder = package.map_or_else(String::new, |i| runners.folder(i).to_owned());
            (line.into_owned(), folder)
        };
        assert_eq!(
            strip(&mut runners, "packages/calc test: ok 1"),
            ("packages/calc test: ok 1".to_owned(), String::new())
        );
        for line in [
            "packages/calc test$ node --test test.js",
            "tests/a.py failed$ not a script",
            "/abs/dir test$ not a package folder",
            "../../etc test$ a folder outside the repository",
        ] {
            strip(&mut runners, line);
        }
        assert_eq!(
            strip(&mut runners, "packages/calc test: ok 1"),
            ("ok 1".to_owned(), "packages/calc".to_owned())
        );
        for kept in ["tests/a.py failed: x", "/abs/dir test: x", "../../etc test: x"] {
            assert_eq!(strip(&mut runners, kept), (kept.to_owned(), String::new()));
        }
    }

    /// Two packages of a monorepo, each with a `test/` folder of the same shape.
    fn monorepo() -> Workspace {
        let files = ["camelcase", "decamelize", "kleur"]
            .iter()
            .flat_map(|p| {
                [
                    format!("packages/{p}/package.json"),
                    format!("packages/{p}/index.js"),
                    format!("packages/{p}/test/{p}.test.js"),
                ]
            })
            .chain(["package.json".to_owned()])
            .collect();
        Workspace::new("/w").with_files(files)
    }

    /// `turbo run test --continue` (turbo 2.11, jest 29 and vitest 2 in the packages, npm
    /// workspaces): every line of a package's task is `pkg:task: `, the tasks' lines interleave,
    /// and each tool prints paths relative to its package's folder.
    #[test]
    fn turbo_s_task_prefixes_come_off_and_paths_resolve_in_the_package() {
        let log = "\
   • Running test in 3 packages
camelcase:test: cache bypass, force executing 5565ae94ec170cb9
kleur:test: cache miss, executing be303226bc7941cf
kleur:test: > kleur@4.1.5 test
kleur:test:  ❯ test/kleur.test.js (5 tests | 1 failed) 18ms
camelcase:test: > camelcase@6.3.0 test
camelcase:test: FAIL test/camelcase.test.js
camelcase:test:   ● camelCase › pascalCase option
camelcase:test: 
camelcase:test:     expect(received).toBe(expected) // Object.is equality
camelcase:test: 
camelcase:test:       at Object.toBe (test/camelcase.test.js:15:52)
camelcase:test: 
camelcase:test: Test Suites: 1 failed, 1 total
kleur:test: FAIL  test/kleur.test.js > kleur > background color
kleur:test: AssertionError: expected '\\u001b[44mx' to be '\\u001b[44mx\\u001b[49m' // Object.is equality
kleur:test:  ❯ test/kleur.test.js:17:29
kleur:test: 
";
        let parsed = crate::parse::parse(log, &monorepo());
        assert_eq!(
            places(&parsed),
            [
                ("packages/camelcase/test/camelcase.test.js", 15),
                ("packages/kleur/test/kleur.test.js", 17)
            ],
            "{:#?}",
            parsed.reports
        );
    }

    /// yarn 4's `workspaces foreach -p -v run test` prints `[pkg]: ` and no line that starts a
    /// package; lerna's and nx's `--stream` print `pkg: `, shown by npm's header for the package.
    #[test]
    fn yarn_s_and_lerna_s_prefixes_come_off() {
        let log = "\
[decamelize]: FAIL test/decamelize.test.js
[decamelize]:   ● decamelize › single word
[decamelize]: 
[decamelize]:     expect(received).toBe(expected) // Object.is equality
[decamelize]: 
[decamelize]:       at Object.toBe (test/decamelize.test.js:20:27)
[decamelize]: 
kleur: > kleur@4.1.5 test
kleur: FAIL  test/kleur.test.js > kleur > background color
kleur: AssertionError: expected 'x' to be 'y' // Object.is equality
kleur:  ❯ test/kleur.test.js:17:29
kleur: 
";
        let parsed = crate::parse::parse(log, &monorepo());
        assert_eq!(
            places(&parsed),
            [
                ("packages/decamelize/test/decamelize.test.js", 20),
                ("packages/kleur/test/kleur.test.js", 17)
            ],
            "{:#?}",
            parsed.reports
        );
    }

    /// Text shaped like a prefix that nothing showed to be one keeps its words.
    #[test]
    fn a_prefix_is_taken_off_only_once_the_log_showed_it() {
        let workspace = monorepo();
        let mut runners = Runners::default();
        for line in [
            // Not npm's header for this package, nor turbo's cache line.
            "kleur: > camelcase@6.3.0 test",
            "error: could not compile `calc` (lib) due to 1 previous error",
            "camelcase:test: some output",
            "note: > kleur@4.1.5 test",
            // No package of this name in the repository, or no package's name at all.
            "[ms]: ok",
            "[INFO]: Scanning for projects",
            "[a b]: x",
        ] {
            runners.note(line, false, &workspace);
        }
        assert!(
            runners.prefixes.is_empty(),
            "{:?}",
            runners.prefixes.iter().map(|p| &p.text).collect::<Vec<_>>()
        );
        runners.note("@acme/kleur:build: cache hit, replaying logs 5a6b", false, &workspace);
        runners.note("camelcase: > camelcase@6.3.0 test", false, &workspace);
        let (line, package) = runners.strip(Cow::Borrowed("@acme/kleur:build: x"), "");
        assert_eq!(
            (line.as_ref(), package.map(|i| runners.folder(i))),
            ("x", Some("packages/kleur"))
        );
        let (line, package) = runners.strip(Cow::Borrowed("camelcase: y"), "");
        assert_eq!(
            (line.as_ref(), package.map(|i| runners.folder(i))),
            ("y", Some("packages/camelcase"))
        );
    }

    /// `cargo nextest run` (nextest 0.9) indents each failed test's captured output under its
    /// `stdout ───` and `stderr ───` headings: the panic there is libtest's, read as it prints
    /// it, up to nextest's next status line.
    #[test]
    fn nextest_s_captured_output_is_read_as_libtest_prints_it() {
        let log = "\
        FAIL [   0.101s] ( 3/46) itoa::test test_i16_min
  stdout ───

    running 1 test
    test test_i16_min ... FAILED

  stderr ───

    thread 'test_i16_min' (3787) panicked at crates/itoa/tests/test.rs:16:1:
    assertion `left == right` failed
      left: \"+32768\"
     right: \"-32768\"

        PASS [   0.006s] ( 4/46) itoa::test test_i16_0
    thread 'not_a_test_output' panicked at crates/itoa/src/lib.rs:3:1:
";
        let files = vec![
            "crates/itoa/tests/test.rs".to_owned(),
            "crates/itoa/src/lib.rs".to_owned(),
        ];
        let parsed = crate::parse::parse(log, &Workspace::new("/w").with_files(files));
        assert_eq!(
            report_findings(&parsed),
            [(
                "crates/itoa/tests/test.rs",
                16,
                "Logic".to_owned(),
                "panicked: assertion `left == right` failed"
            )]
        );
        assert_eq!(parsed.reports[0].test_name.as_deref(), Some("test_i16_min"));
        for status in [
            "FAIL [   0.101s] ( 3/46) a b",
            "SIGABRT [   1.0s] x",
            "TRY 2 FAIL [ 0.5s] x",
        ] {
            assert!(is_nextest_status(status), "{status}");
        }
        for text in ["FAIL [x] a", "thread 'a' panicked", "Fail [ 0.1s] x", "[ 0.1s]"] {
            assert!(!is_nextest_status(text), "{text}");
        }
    }

    /// A test's captured output that redraws a line (a progress bar's `\r`) is cleaned to the
    /// last redraw, which nextest's four spaces do not reach: the output goes on, and the panic
    /// after it is read, plain or under a CI's timestamps.
    #[test]
    fn a_redrawn_line_in_nextest_s_captured_output_does_not_end_it() {
        let log = "\
        FAIL [   0.101s] ( 3/46) itoa::test test_i16_min
  stderr ───

    downloading 10%\rdownloading 100%
    thread 'test_i16_min' (3787) panicked at crates/itoa/tests/test.rs:16:1:
    assertion `left == right` failed
      left: \"+32768\"
     right: \"-32768\"

        PASS [   0.006s] ( 4/46) itoa::test test_i16_0
";
        let stamped: String = log
            .lines()
            .map(|l| format!("2026-11-26T10:00:00.1370000Z {l}\n"))
            .collect();
        let files = vec!["crates/itoa/tests/test.rs".to_owned()];
        for log in [log, stamped.as_str()] {
            let parsed = crate::parse::parse(log, &Workspace::new("/w").with_files(files.clone()));
            assert_eq!(places(&parsed), [("crates/itoa/tests/test.rs", 16)], "{log}");
        }
    }

    /// A package is found by the name its `package.json` gives, not by its folder's name: lerna's
    /// `@acme/utils: ` prefix is the package in `packages/shared`, although `packages/utils`
    /// exists too (another package's). Without the manifests read, the folder named as the
    /// package is all there is to go on; a folder whose manifest names another package is not it.
    #[test]
    fn a_package_s_folder_is_the_one_its_manifest_names() {
        let manifests = [
            (
                "packages/shared/package.json",
                r#"{"name": "@acme/utils", "version": "1.0.0"}"#,
            ),
            ("packages/utils/package.json", r#"{"name": "@acme/legacy-utils"}"#),
            (
                "package.json",
                r#"{"name": "acme", "private": true, "workspaces": ["packages/*"]}"#,
            ),
            ("packages/broken/package.json", "{ not json"),
        ];
        let files: Vec<String> = manifests
            .iter()
            .map(|(path, _)| (*path).to_owned())
            .chain(["packages/shared/src/sum.js", "packages/utils/src/sum.js"].map(str::to_owned))
            .collect();
        let log = "\
@acme/utils: > @acme/utils@1.0.0 test
@acme/utils: > node src/sum.js
@acme/utils: src/sum.js:3
@acme/utils:   return a +* b;
@acme/utils:            ^
@acme/utils: 
@acme/utils: SyntaxError: Unexpected token '*'
";
        let read = |path: &str| {
            manifests
                .iter()
                .find(|(p, _)| *p == path)
                .map(|(_, text)| text.as_bytes().to_vec())
        };
        let workspace = Workspace::new("/w")
            .with_files(files.clone())
            .with_package_manifests(read);
        assert_eq!(
            workspace.package_folder("@acme/utils").as_deref(),
            Some("packages/shared")
        );
        assert_eq!(workspace.package_folder("acme").as_deref(), Some(""));
        // The folder named `utils` is another package's; `broken` named nothing readable.
        assert_eq!(workspace.package_folder("utils"), None);
        assert_eq!(workspace.package_folder("broken").as_deref(), Some("packages/broken"));
        let parsed = crate::parse::parse(log, &workspace);
        assert_eq!(
            crate::parse::report_places(&parsed),
            [("packages/shared/src/sum.js", 3, None)]
        );

        // Without the manifests, the folder named as the package (unscoped) is taken.
        let by_folder = Workspace::new("/w").with_files(files);
        assert_eq!(
            by_folder.package_folder("@acme/utils").as_deref(),
            Some("packages/utils")
        );
        let parsed = crate::parse::parse(log, &by_folder);
        assert_eq!(
            crate::parse::report_places(&parsed),
            [("packages/utils/src/sum.js", 3, None)]
        );

        // Two manifests giving one name: the one in the folder named as the package (an
        // example's copy elsewhere), else neither.
        let twice = |_: &str| Some(br#"{"name": "@acme/utils"}"#.to_vec());
        let both = Workspace::new("/w")
            .with_files(vec!["a/package.json".to_owned(), "b/package.json".to_owned()])
            .with_package_manifests(twice);
        assert_eq!(both.package_folder("@acme/utils"), None);
        let with_example = Workspace::new("/w")
            .with_files(vec![
                "packages/utils/package.json".to_owned(),
                "examples/demo/package.json".to_owned(),
            ])
            .with_package_manifests(twice);
        assert_eq!(
            with_example.package_folder("@acme/utils").as_deref(),
            Some("packages/utils")
        );
    }

    /// `npm test --workspaces` (npm 11, an outsider trial's monorepo of leven 3.1.0 and
    /// word-wrap 1.2.5 in `packages/wordwrap`): no prefix on any line, only npm's header before each
    /// package's script. The lines after a header are that package's, so `index.js`, which both
    /// packages have, resolves in the package the header names (by its manifest).
    #[test]
    fn npm_s_workspace_headers_place_the_package_s_paths() {
        let log = "\
> leven@3.1.0 test
> jest --rootDir .

FAIL test/leven.test.js
  leven
    ✓ identical strings (2 ms)
    ✕ leven(a, b) is 1 (1 ms)
    ✕ leven(ab, ac) is 1 (1 ms)
    ✕ leven(kitten, sitting) is 3
    ✕ leven(xabxcdxxefxgx, 1ab2cd34ef5g6) is 6
    ✓ empty string

  ● leven › leven(a, b) is 1

    expect(received).toBe(expected) // Object.is equality

    Expected: 1
    Received: 2

      12 |     ['xabxcdxxefxgx', '1ab2cd34ef5g6', 6],
      13 |   ])('leven(%s, %s) is %i', (a, b, expected) => {
    > 14 |     expect(leven(a, b)).toBe(expected);
         |                         ^
      15 |   });
      16 |
      17 |   test('empty string', () => {

      at toBe (test/leven.test.js:14:25)

> word-wrap@1.2.5 test
> jest --rootDir .

FAIL test/wrap.test.js
  wrap
    ✓ wraps at the width (2 ms)
    ✕ trims trailing spaces
    ✕ keeps explicit newlines (1 ms)
    ✓ escapes each line

  ● wrap › trims trailing spaces

    TypeError: str.substring is not a function

      12 |     lastChar = str[--lastCharPos];
      13 |   }
    > 14 |   return str.substring(0, lastCharPos + 1);
         |              ^
      15 | }
      16 |
      17 | function trimTabAndSpaces(str) {

      at substring (index.js:14:14)
      at trimEnd (index.js:19:44)
          at Array.map (<anonymous>)
      at map (index.js:19:30)
      at trimTabAndSpaces (index.js:54:14)
      at Object.wrap (test/wrap.test.js:10:17)

  ● wrap › keeps explicit newlines

    ReferenceError: stripNewline is not defined

      46 |   var result = indent + lines.map(function(line) {
      47 |     if (line.slice(-1) === '\\n') {
    > 48 |       line = stripNewline(line);
         |       ^
      49 |     }
      50 |     return escape(line);
      51 |   }).join(newline);

      at line (index.js:48:7)
          at Array.map (<anonymous>)
      at map (index.js:46:31)
      at Object.wrap (test/wrap.test.js:15:17)

Test Suites: 1 failed, 1 total
Tests:       2 failed, 2 passed, 4 total
Snapshots:   0 total
Time:        0.247 s
Ran all test suites.
npm error Lifecycle script `test` failed with error:
npm error code 1
npm error path /work/heldout17/projects/jsmono/packages/wordwrap
npm error workspace word-wrap@1.2.5
";
        let files: Vec<String> = [
            "package.json",
            "packages/leven/package.json",
            "packages/leven/index.js",
            "packages/leven/test/leven.test.js",
            "packages/wordwrap/package.json",
            "packages/wordwrap/index.js",
            "packages/wordwrap/test/wrap.test.js",
        ]
        .map(str::to_owned)
        .to_vec();
        let read = |path: &str| {
            let name = match path {
                "package.json" => "jsmono",
                "packages/leven/package.json" => "leven",
                "packages/wordwrap/package.json" => "word-wrap",
                _ => return None,
            };
            Some(format!(r#"{{"name": "{name}"}}"#).into_bytes())
        };
        let workspace = Workspace::new("/w").with_files(files).with_package_manifests(read);
        let parsed = crate::parse::parse(log, &workspace);
        // Each package's formats hold their own failure open until its end (order aside).
        let mut got = places(&parsed);
        got.sort_unstable();
        assert_eq!(
            got,
            [
                ("packages/leven/test/leven.test.js", 14),
                ("packages/wordwrap/index.js", 14),
                ("packages/wordwrap/index.js", 48),
                ("packages/wordwrap/test/wrap.test.js", 10),
                ("packages/wordwrap/test/wrap.test.js", 15)
            ],
            "{:#?}",
            parsed.reports
        );
        // npm's command line under a header, and pytest's `>` before a failing line, name none.
        assert_eq!(super::npm_header_package("> jest --rootDir ."), None);
        assert_eq!(super::npm_header_package(">       assert total(1) == 2"), None);
        assert_eq!(
            super::npm_header_package("> @acme/ui@2.1.0-rc.1 test:unit"),
            Some("@acme/ui")
        );
    }

    /// `npm test --workspaces`, then the root's own pytest (a reviewer's monorepo: the root and
    /// both packages have `calc.py` and `test_calc.py`): npm's error at the end of the last
    /// package's run ends its lines, so the root's failure is placed at the root's files.
    #[test]
    fn npm_s_error_ends_the_last_package_s_lines() {
        let log = "\n\
> pkg-a@1.2.3 test
> python3 -m pytest -p no:cacheprovider -q

F                                                                        [100%]
=================================== FAILURES ===================================
__________________________________ test_div_a __________________________________

    def test_div_a():
>       assert div(1, 0)
               ^^^^^^^^^

test_calc.py:5: 
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 

a = 1, b = 0

    def div(a, b):
>       return a / b
               ^^^^^
E       ZeroDivisionError: division by zero

calc.py:3: ZeroDivisionError
=========================== short test summary info ============================
FAILED test_calc.py::test_div_a - ZeroDivisionError: division by zero
1 failed in 0.01s
npm error Lifecycle script `test` failed with error:
npm error code 1
npm error path /tmp/review2/js/packages/a
npm error workspace pkg-a@1.2.3
npm error location /tmp/review2/js/packages/a
npm error command failed
npm error command sh -c python3 -m pytest -p no:cacheprovider -q


> pkg-b@1.2.3 test
> python3 -m pytest -p no:cacheprovider -q

F                                                                        [100%]
=================================== FAILURES ===================================
__________________________________ test_div_b __________________________________

    def test_div_b():
>       assert div(1, 0)
               ^^^^^^^^^

test_calc.py:5: 
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 

a = 1, b = 0

    def div(a, b):
>       return a / b
               ^^^^^
E       ZeroDivisionError: division by zero

calc.py:3: ZeroDivisionError
=========================== short test summary info ============================
FAILED test_calc.py::test_div_b - ZeroDivisionError: division by zero
1 failed in 0.01s
npm error Lifecycle script `test` failed with error:
npm error code 1
npm error path /tmp/review2/js/packages/b
npm error workspace pkg-b@1.2.3
npm error location /tmp/review2/js/packages/b
npm error command failed
npm error command sh -c python3 -m pytest -p no:cacheprovider -q
F                                                                        [100%]
=================================== FAILURES ===================================
__________________________________ test_root ___________________________________

    def test_root():
>       assert div(2, 0)
               ^^^^^^^^^

test_calc.py:5: 
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 

a = 2, b = 0

    def div(a, b):
>       return a / b
               ^^^^^
E       ZeroDivisionError: division by zero

calc.py:3: ZeroDivisionError
=========================== short test summary info ============================
FAILED test_calc.py::test_root - ZeroDivisionError: division by zero
1 failed in 0.01s
";
        let mut files: Vec<String> = ["package.json", "calc.py", "test_calc.py"].map(str::to_owned).to_vec();
        for package in ["a", "b"] {
            for file in ["package.json", "calc.py", "test_calc.py"] {
                files.push(format!("packages/{package}/{file}"));
            }
        }
        let read = |path: &str| {
            let name = match path {
                "package.json" => "mono",
                "packages/a/package.json" => "pkg-a",
                "packages/b/package.json" => "pkg-b",
                _ => return None,
            };
            Some(format!(r#"{{"name": "{name}"}}"#).into_bytes())
        };
        let workspace = Workspace::new("/tmp/review2/js")
            .with_files(files)
            .with_package_manifests(read);
        let parsed = crate::parse::parse(log, &workspace);
        let mut got = places(&parsed);
        got.sort_unstable();
        assert_eq!(
            got,
            [
                ("calc.py", 3),
                ("packages/a/calc.py", 3),
                ("packages/a/test_calc.py", 5),
                ("packages/b/calc.py", 3),
                ("packages/b/test_calc.py", 5),
                ("test_calc.py", 5)
            ]
        );
    }

    /// Two packages' jest failure blocks interleave (turbo runs their tasks at once), each with
    /// a `test/index.test.js`: each failure is read from its own package's lines, named by its
    /// own test, at its own package's file, whichever line ends it.
    #[test]
    fn interleaved_packages_failures_are_each_read_from_their_own_lines() {
        let files = ["a", "b"]
            .iter()
            .flat_map(|p| {
                [
                    format!("packages/{p}/package.json"),
                    format!("packages/{p}/test/index.test.js"),
                ]
            })
            .collect();
        let workspace = Workspace::new("/w").with_files(files);
        let interleaved = "\
a:test: cache miss, executing 1111
b:test: cache miss, executing 2222
a:test: FAIL test/index.test.js
a:test:   ● adds
a:test: 
a:test:     expect(received).toBe(expected) // Object.is equality
a:test: 
b:test: FAIL test/index.test.js
b:test:   ● subtracts
b:test: 
b:test:     expect(received).toBe(expected) // Object.is equality
b:test: 
a:test:       at Object.toBe (test/index.test.js:5:10)
b:test:       at Object.toBe (test/index.test.js:9:10)
a:test: 
b:test: 
";
        let parsed = crate::parse::parse(interleaved, &workspace);
        assert_eq!(
            crate::parse::report_places(&parsed),
            [
                ("packages/a/test/index.test.js", 5, Some("adds")),
                ("packages/b/test/index.test.js", 9, Some("subtracts"))
            ],
            "{:#?}",
            parsed.reports
        );
        // A block that ends on the other package's line.
        let ended_by_another = "\
a:test: cache miss, executing 1111
b:test: cache miss, executing 2222
a:test:   ● adds
a:test: 
a:test:     expect(received).toBe(expected) // Object.is equality
a:test: 
a:test:       at Object.toBe (test/index.test.js:5:10)
b:test: ok
";
        let parsed = crate::parse::parse(ended_by_another, &workspace);
        assert_eq!(
            crate::parse::report_places(&parsed),
            [("packages/a/test/index.test.js", 5, Some("adds"))],
            "{:#?}",
            parsed.reports
        );
    }

    /// A long line (an eslint JSON report on one line, under turbo's prefix) that reaches the
    /// parser in pieces, across a reader's buffer, is read as the same line whole.
    #[test]
    fn a_long_prefixed_line_read_in_pieces_is_read_as_whole() {
        let files = vec!["packages/calc/package.json".to_owned(), "packages/calc/a.js".to_owned()];
        let workspace = Workspace::new("/w").with_files(files);
        let message = r#"{"ruleId":"no-unused-vars","severity":2,"message":"'x' is assigned a value but never used.","line":LINE,"column":7}"#;
        let messages: Vec<String> = (1..=120).map(|n| message.replace("LINE", &n.to_string())).collect();
        let log = format!(
            "calc:lint: cache miss, executing 5a6b\ncalc:lint: [{{\"filePath\":\"/w/packages/calc/a.js\",\"messages\":[{}]}}]\n",
            messages.join(",")
        );
        assert!(log.len() > crate::parse::clean::MAX_LINE);
        let whole = crate::parse::parse(&log, &workspace);
        let pieces = crate::parse::parse_reader(std::io::BufReader::with_capacity(1000, log.as_bytes()), &workspace)
            .expect("read");
        assert_eq!(
            whole.reports.len(),
            crate::parse::MAX_DOCUMENT_WARNINGS,
            "{:#?}",
            whole.reports.first()
        );
        assert_eq!(whole.reports[0].file_path, "packages/calc/a.js");
        assert_eq!(pieces.reports, whole.reports);
    }

    /// pnpm names a package by its folder, whatever its first character.
    #[test]
    fn a_pnpm_folder_may_start_with_any_character() {
        let workspace = Workspace::new("/w");
        let mut runners = Runners::default();
        for line in ["Apps/web lint$ eslint --format unix .", "_tools/gen build$ node gen.js"] {
            runners.note(line, true, &workspace);
        }
        for (line, stripped, want) in [
            ("Apps/web lint: a.js:9:5: x", "a.js:9:5: x", "Apps/web"),
            ("_tools/gen build: ok", "ok", "_tools/gen"),
        ] {
            let (text, package) = runners.strip(Cow::Borrowed(line), line);
            assert_eq!(
                (text.as_ref(), package.map(|i| runners.folder(i))),
                (stripped, Some(want))
            );
        }
    }

    /// Each collector's prefix as the collector prints it, and lines that only look like one.
    #[test]
    fn a_process_label_is_known_by_npm_s_header_after_it() {
        for (line, prefix) in [
            ("[lint] > lint", Some("[lint] ")),
            ("[test] > calc@1.0.0 test", Some("[test] ")),
            ("[0] > @acme/ui@2.1.0 test:unit", Some("[0] ")),
            // npm-run-all pads its labels to the longest one's width.
            ("[lint    ] > lint", Some("[lint    ] ")),
            // Not a label: no header after it, or not npm's.
            ("[lint] eslint lib", None),
            (
                "[INFO] >>> maven-source-plugin:3.2.1:jar (attach-sources) > generate-sources @ app >>>",
                None,
            ),
            ("[vite] > (hmr update)", None),
            ("[] > lint", None),
            ("[  ] > lint", None),
        ] {
            assert_eq!(label_prefix(line).as_deref(), prefix, "{line:?}");
        }
    }

    #[test]
    fn collector_prefixes_are_known_by_their_shapes() {
        for (line, prefix) in [
            (
                "[pod/heal-7d9f8-x2x4k/tests] E   assert 1 == 2",
                Some("[pod/heal-7d9f8-x2x4k/tests] "),
            ),
            (
                "[unit-tests : pytest] E   assert 1 == 2",
                Some("[unit-tests : pytest] "),
            ),
            ("web-1     | E   assert 1 == 2", Some("web-1     | ")),
            ("Step #1 - \"pytest\": E   assert", Some("Step #1 - \"pytest\": ")),
            ("Step #0: ok", Some("Step #0: ")),
            ("[CI/test (3.11)]   | --- FAIL: TestA", Some("[CI/test (3.11)]   | ")),
            ("api-7d9f8c6b5-x2x4k test E   assert", Some("api-7d9f8c6b5-x2x4k test ")),
            (
                "ci-x7k2p-jest-1200000000: FAIL test/a.test.js",
                Some("ci-x7k2p-jest-1200000000: "),
            ),
            ("ci-x7k2p-1200000000: ok", Some("ci-x7k2p-1200000000: ")),
            // Not a collector's.
            ("web-1 | one space before the bar", None),
            ("pre-commit-hooks check passed", None),
            ("heal-run-7 tests no pod hash", None),
            ("[calc]: yarn's prefix", None),
            ("[pod/x] no container", None),
            ("Step #: no number", None),
            ("build-2024: a year is no hash", None),
            ("12345678: no name", None),
        ] {
            assert_eq!(collector_prefix(line).map(|n| &line[..n]), prefix, "{line:?}");
        }
    }
}
