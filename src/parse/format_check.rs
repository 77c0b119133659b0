//! Formatters' checks, which fail a build without a diagnostic line: the diffs they print
//! (`gofmt -d`, `black --diff`, `ruff format --diff`, `git diff` after a code generator, each a
//! unified diff; rustfmt's `cargo fmt --check`, `Diff in FILE:LINE:` and its lines), reported at
//! each hunk's first changed line, and the files they would reformat (`black --check`,
//! `ruff format --check` before 0.9, `prettier --check`) or whose imports isort would sort
//! (`isort --check-only`), reported at the file's first line: the log names no other. Each is a
//! LINTING finding.

use std::borrow::Cow;

use super::look::Look;
use super::{Finding, Rank, Sink, truncate_bytes};
use crate::api::shared::ErrorType;

/// Most bytes of a changed line kept in a report's message.
const MAX_CHANGE: usize = 160;

/// A diff being read: its file, and the hunk under way.
struct Diff {
    file: String,
    hunk: Option<Hunk>,
}

/// A hunk of a diff: where it starts in the old file, the context before its first change, the
/// lines it has left (a unified hunk's header counts them, so that a removed line that starts
/// `-- ` is not taken for the next file's `--- ` header; rustfmt's chunks have no count), and its
/// first change: the first run of removed lines, and the added line right after it.
struct Hunk {
    start: u32,
    context: u32,
    left: Option<(u32, u32)>,
    /// The first removed line, while the run of changes it begins goes on.
    removed: Option<String>,
    reported: bool,
}

impl Hunk {
    fn new(start: u32, left: Option<(u32, u32)>) -> Self {
        Hunk {
            start,
            context: 0,
            left,
            removed: None,
            reported: false,
        }
    }

    fn over(&self) -> bool {
        self.left == Some((0, 0))
    }

    /// The line of the hunk's first change.
    fn line(&self) -> u32 {
        (self.start + self.context).max(1)
    }

    /// Reads a context (` `), removed (`-`) or added (`+`) line; returns the message of the
    /// hunk's first change once it is whole: a removal and the addition right after it, a
    /// removal followed by context, or an addition alone.
    fn read(&mut self, mark: u8, text: &str) -> Option<String> {
        if let Some((old, new)) = self.left.as_mut() {
            match mark {
                b'-' => *old = old.saturating_sub(1),
                b'+' => *new = new.saturating_sub(1),
                _ => {
                    *old = old.saturating_sub(1);
                    *new = new.saturating_sub(1);
                }
            }
        }
        if self.reported {
            return None;
        }
        let text = truncate_bytes(text.trim(), MAX_CHANGE);
        let message = match (mark, self.removed.take()) {
            (b'-', None) => {
                self.removed = Some(text.to_owned());
                return None;
            }
            // Further removed lines of the same run.
            (b'-', removed) => {
                self.removed = removed;
                return None;
            }
            (b'+', Some(removed)) => format!("formatting differs: {} → {}", shown(&removed), shown(text)),
            (b'+', None) => format!("formatting differs: {} added", shown(text)),
            (_, Some(removed)) => format!("formatting differs: {} removed", shown(&removed)),
            (_, None) => {
                self.context += 1;
                return None;
            }
        };
        self.reported = true;
        Some(message)
    }

    /// The hunk's end: a removal still waiting for what follows it is the change.
    fn end(&mut self) -> Option<String> {
        let removed = self.removed.take().filter(|_| !self.reported)?;
        self.reported = true;
        Some(format!("formatting differs: {} removed", shown(&removed)))
    }
}

/// A changed line as a message shows it.
fn shown(line: &str) -> String {
    if line.is_empty() {
        "a blank line".to_owned()
    } else {
        format!("`{line}`")
    }
}

#[derive(Default)]
pub(crate) struct FormatCheck {
    /// A `--- old` header was the last line: the `+++ new` header may follow. Whether its path
    /// began `a/` (git's prefixes).
    minus: Option<bool>,
    diff: Option<Diff>,
    /// Files a diff was reported for (at most [`MAX_DIFFED`]): black's `would reformat` after
    /// a file's diff adds nothing.
    diffed: Vec<String>,
    /// A file isort's check found unsorted, not reported yet: under `--diff` the file's diff
    /// follows, and places it at its change instead.
    unsorted: Option<String>,
}

/// Most file names remembered as diffed.
const MAX_DIFFED: usize = 100;

impl FormatCheck {
    /// Whether [`FormatCheck::line`] can do anything with the line: inside a diff every line; else
    /// a diff's or rustfmt's header, or a formatter's `would reformat` line.
    #[inline]
    pub fn wants(&self, look: &Look<'_>) -> bool {
        if self.diff.is_some() || self.minus.is_some() || self.unsorted.is_some() {
            return true;
        }
        let line = look.line;
        match look.first {
            Some(b'-') => old_file_header(line).is_some(),
            Some(b'D') => line.starts_with("Diff in "),
            Some(b'w' | b'W') => line.starts_with("would reformat ") || line.starts_with("Would reformat: "),
            Some(b'[') => line.starts_with("[warn] ") || line.starts_with("[error] "),
            // isort's `ERROR: PATH Imports are incorrectly sorted and/or formatted.`
            Some(b'E') => look.last == b'.' && line.starts_with("ERROR: "),
            _ => false,
        }
    }

    pub fn line(&mut self, line: &str, sink: &mut Sink<'_>) {
        if let Some(file) = self.unsorted.take() {
            // isort's `--diff`: the file's diff places what it found.
            let its_diff_follows = line.strip_prefix("--- ").is_some_and(|path| header_path(path) == file);
            if !its_diff_follows {
                report(sink, &file, 1, UNSORTED.to_owned());
            }
        }
        if let Some(a_prefix) = self.minus.take()
            && let Some(path) = line.strip_prefix("+++ ")
        {
            let path = header_path(path);
            let path = if a_prefix {
                path.strip_prefix("b/").unwrap_or(path)
            } else {
                path
            };
            if path == "/dev/null" {
                // A file the change deletes: nothing of it is left to point at.
                return;
            }
            self.diff = Some(Diff {
                file: path.to_owned(),
                hunk: None,
            });
            return;
        }
        if let Some(diff) = self.diff.as_mut() {
            if diff_line(diff, line, sink) {
                return;
            }
            if let Some(hunk) = diff.hunk.as_mut()
                && let Some(message) = hunk.end()
            {
                report(sink, &diff.file, hunk.line(), message);
            }
            if self.diffed.len() < MAX_DIFFED {
                self.diffed.push(std::mem::take(&mut diff.file));
            }
            self.diff = None;
        }
        if let Some(path) = old_file_header(line) {
            // git's `a/` and `b/`; a file the change creates is `/dev/null` before it.
            let old = header_path(path);
            self.minus = Some(old.starts_with("a/") || old == "/dev/null");
        } else if let Some((file, n)) = rustfmt_header(line) {
            self.diff = Some(Diff {
                file: file.to_owned(),
                hunk: Some(Hunk::new(n, None)),
            });
        } else if let Some(file) = would_reformat(line)
            && !self.diffed.iter().any(|d| d == file)
        {
            report(sink, file, 1, "would be reformatted".to_owned());
        } else if let Some(file) = isort_unsorted(line) {
            self.unsorted = Some(file.to_owned());
        } else if let Some((file, n, message)) = prettier_syntax_error(line) {
            sink.report(Finding {
                file,
                line: n,
                error_type: ErrorType::Syntax,
                message: Cow::Borrowed(message),
                test: None,
                confidence: 0.9,
                rank: Rank::Error,
                diagnostic: true,
            });
        }
    }

    /// The log's end: a diff's last hunk is reported.
    pub fn finish(&mut self, sink: &mut Sink<'_>) {
        if let Some(file) = self.unsorted.take() {
            report(sink, &file, 1, UNSORTED.to_owned());
        }
        if let Some(Diff {
            file,
            hunk: Some(mut hunk),
        }) = self.diff.take()
            && let Some(message) = hunk.end()
        {
            report(sink, &file, hunk.line(), message);
        }
    }
}

/// The path of a diff's `--- PATH` header. Go's test results (`--- PASS: TestX (0.00s)`) are no
/// header.
fn old_file_header(line: &str) -> Option<&str> {
    let path = line.strip_prefix("--- ")?;
    (!matches!(path.as_bytes().get(..5), Some(b"PASS:" | b"FAIL:" | b"SKIP:"))).then_some(path)
}

/// A line inside a diff; whether it was one (any other, or a `--- ` header after a hunk that
/// is over, ends the diff).
fn diff_line(diff: &mut Diff, line: &str, sink: &mut Sink<'_>) -> bool {
    let first = line.as_bytes().first().copied();
    if first == Some(b'@') {
        let Some((start, left)) = hunk_header(line) else {
            return false;
        };
        if let Some(hunk) = diff.hunk.as_mut()
            && let Some(message) = hunk.end()
        {
            report(sink, &diff.file, hunk.line(), message);
        }
        diff.hunk = Some(Hunk::new(start, Some(left)));
        return true;
    }
    let Some(hunk) = diff.hunk.as_mut() else {
        return false;
    };
    // rustfmt's chunk has no length: a `--- ` line after it is the next tool's diff header
    // (`cargo fmt --check` then `ruff format --diff`), not a removed `-- ` line of Rust.
    if hunk.over() || hunk.left.is_none() && line.starts_with("--- ") {
        return false;
    }
    let message = match first {
        // `\ No newline at end of file`.
        Some(b'\\') => None,
        // rustfmt's and some tools' empty context lines lose their space.
        None => hunk.read(b' ', ""),
        Some(mark @ (b' ' | b'-' | b'+')) => hunk.read(mark, &line[1..]),
        Some(_) => return false,
    };
    if let Some(message) = message {
        report(sink, &diff.file, hunk.line(), message);
        if hunk.left.is_none() {
            // rustfmt's chunk has no length: its change is read, and what follows it may be
            // another tool's output that happens to start with a space, `-` or `+`.
            diff.hunk = None;
        }
    }
    true
}

fn report(sink: &mut Sink<'_>, file: &str, line: u32, message: String) {
    sink.report(Finding {
        file,
        line,
        error_type: ErrorType::Linting,
        message: Cow::Owned(message),
        test: None,
        confidence: 0.8,
        rank: Rank::Warning,
        diagnostic: false,
    });
}

/// The path of a diff header, less what follows it after a tab (black's and diff's timestamps)
/// and isort's `:before` and `:after` after it (`--- /abs/a.py:before\t2026-11-26 23:03:59`).
fn header_path(text: &str) -> &str {
    let path = text.split('\t').next().unwrap_or(text).trim_end();
    path.strip_suffix(":before")
        .or_else(|| path.strip_suffix(":after"))
        .unwrap_or(path)
}

/// What isort's check says of a file whose imports it would sort.
const UNSORTED: &str = "Imports are incorrectly sorted and/or formatted";

/// The file of isort's `ERROR: /abs/a.py Imports are incorrectly sorted and/or formatted.`
/// (`... incorrectly sorted.` before isort 5).
fn isort_unsorted(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("ERROR: ")?;
    let (file, _) = rest.split_once(" Imports are incorrectly sorted")?;
    (!file.is_empty()).then_some(file)
}

/// A hunk's header, `@@ -64,7 +64,8 @@`: the old file's first line, and the old and new lines
/// it holds (a count left out is 1).
fn hunk_header(line: &str) -> Option<(u32, (u32, u32))> {
    let ranges = line.strip_prefix("@@ -")?;
    let (old, rest) = ranges.split_once(" +")?;
    let new = rest.split_once(" @@")?.0;
    let range = |r: &str| -> Option<(u32, u32)> {
        match r.split_once(',') {
            Some((start, count)) => Some((start.parse().ok()?, count.parse().ok()?)),
            None => Some((r.parse().ok()?, 1)),
        }
    };
    let ((start, old_count), (_, new_count)) = (range(old)?, range(new)?);
    Some((start, (old_count, new_count)))
}

/// rustfmt's `Diff in /abs/src/lib.rs:228:` (or `Diff in /abs/src/lib.rs at line 228:`, before
/// 1.4.38).
fn rustfmt_header(line: &str) -> Option<(&str, u32)> {
    let rest = line.strip_prefix("Diff in ")?.strip_suffix(':')?;
    let (file, n) = rest.rsplit_once(" at line ").or_else(|| rest.rsplit_once(':'))?;
    Some((file, n.parse().ok()?))
}

/// prettier's `[error] index.js: SyntaxError: Unexpected token, expected "," (23:3)`: a file it
/// could not parse, the place at the message's end. Returns the file, the line and the message.
fn prettier_syntax_error(line: &str) -> Option<(&str, u32, &str)> {
    let (file, message) = line.strip_prefix("[error] ")?.split_once(": ")?;
    if !message.starts_with("SyntaxError: ") || file.contains(char::is_whitespace) {
        return None;
    }
    let (_, place) = message.strip_suffix(')')?.rsplit_once(" (")?;
    let (n, column) = place.split_once(':')?;
    if !column.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((file, n.parse().ok()?, message))
}

/// A file a formatter's check would reformat: black's `would reformat PATH`, ruff's
/// `Would reformat: PATH`, prettier's `[warn] PATH` (not its `[warn] Code style issues ...`).
fn would_reformat(line: &str) -> Option<&str> {
    let path = line
        .strip_prefix("would reformat ")
        .or_else(|| line.strip_prefix("Would reformat: "))
        .or_else(|| line.strip_prefix("[warn] "))?
        .trim();
    (!path.is_empty() && !path.contains(char::is_whitespace) && path.contains('.')).then_some(path)
}

#[cfg(test)]
mod tests {
    use super::super::{Workspace, parse, report_findings, report_messages};

    /// prettier 3.10's `--check` on a file it cannot parse, then two it would reformat (the
    /// thirteenth outsider trial's, on nanoid 5.0.9): the syntax error at its line.
    #[test]
    fn prettier_s_syntax_error_is_placed_at_its_line() {
        let log = "Checking formatting...
[error] index.js: SyntaxError: Unexpected token, expected \",\" (23:3)
[error]   21 | export function customRandom(alphabet, defaultSize, getRandom) {
[error]   22 |   let mask = (2 << (31 - Math.clz32((alphabet.length - 1) | 1)) - 1
[error] > 23 |   let step = Math.ceil((1.6 * mask * defaultSize) / alphabet.length)
[error]      |   ^
[error]   24 |   return (size = defaultSize) => {
[error]   25 |     let id = ''
[error]   26 |     while (true) {
[warn] url-alphabet/index.js
[warn] non-secure/index.js
Error occurred when checking code style in the above file.
";
        assert_eq!(
            places(log),
            [
                (
                    "index.js".to_owned(),
                    23,
                    "SyntaxError: Unexpected token, expected \",\" (23:3)".to_owned()
                ),
                ("url-alphabet/index.js".to_owned(), 1, "would be reformatted".to_owned()),
                ("non-secure/index.js".to_owned(), 1, "would be reformatted".to_owned()),
            ]
        );
    }

    fn places(log: &str) -> Vec<(String, u32, String)> {
        let parsed = parse(log, &Workspace::new("/w"));
        report_messages(&parsed)
            .into_iter()
            .map(|(file, line, message)| (file.to_owned(), line, message.to_owned()))
            .collect()
    }

    /// `gofmt -d` (go 1.26): each hunk at its first changed line.
    #[test]
    fn a_unified_diff_is_reported_at_each_hunks_first_change() {
        let log = "\
diff shlex.go.orig shlex.go
--- shlex.go.orig
+++ shlex.go
@@ -64,7 +64,7 @@
 \tif t.tokenType != t.tokenType {
 \t\treturn false
 \t}
-\treturn t.value==a.value
+\treturn t.value == a.value
 }
 
 const (
@@ -150,7 +150,7 @@
 \t\tc := r
 
 \t\tswitch {
-\t\tcase c==' ':
+\t\tcase c == ' ':
 \t\t\treturn spaceRuneClass
 \t\tdefault:
 \t\t\treturn unknownRuneClass
";
        assert_eq!(
            places(log),
            [
                (
                    "shlex.go".to_owned(),
                    67,
                    "formatting differs: `return t.value==a.value` → `return t.value == a.value`".to_owned()
                ),
                (
                    "shlex.go".to_owned(),
                    153,
                    "formatting differs: `case c==' ':` → `case c == ' ':`".to_owned()
                ),
            ]
        );
    }

    /// isort 9.0.2's `--check-only` (the fourteenth outsider trial's, on inflection 0.5.1): the
    /// file at its first line; with `--diff` (under GitHub Actions, CRLF), at the diff's change,
    /// its `:before` and `:after` off the file's name, and once.
    #[test]
    fn isort_s_unsorted_file_is_placed_at_its_diff_s_change_or_its_first_line() {
        let inflection = Workspace::new("/work/heldout15/projects/inflection");
        let check = "\
ERROR: /work/heldout15/projects/inflection/inflection/__init__.py Imports are incorrectly sorted and/or formatted.
";
        let parsed = parse(check, &inflection);
        assert_eq!(
            report_findings(&parsed),
            [(
                "inflection/__init__.py",
                1,
                "Linting".to_owned(),
                "Imports are incorrectly sorted and/or formatted"
            )]
        );
        let diff = "\
2026-11-26T10:00:00.3084561Z ERROR: /work/heldout15/projects/inflection/inflection/__init__.py Imports are incorrectly sorted and/or formatted.\r
2026-11-26T10:00:00.3454561Z --- /work/heldout15/projects/inflection/inflection/__init__.py:before\t2026-11-26 23:03:59.554665\r
2026-11-26T10:00:00.3824561Z +++ /work/heldout15/projects/inflection/inflection/__init__.py:after\t2026-11-26 23:06:34.489919\r
2026-11-26T10:00:00.4194561Z @@ -9,8 +9,8 @@\r
2026-11-26T10:00:00.4564561Z  \r
2026-11-26T10:00:00.4934561Z      :license: MIT, see LICENSE for more details.\r
2026-11-26T10:00:00.5304561Z  \"\"\"\r
2026-11-26T10:00:00.5674561Z +import re\r
2026-11-26T10:00:00.6044561Z  import unicodedata\r
2026-11-26T10:00:00.6414561Z -import re\r
2026-11-26T10:00:00.6784561Z  \r
2026-11-26T10:00:00.7154561Z  __version__ = '0.5.1'\r
2026-11-26T10:00:00.7524561Z  \r
2026-11-26T10:00:00.7894561Z ##[error]Process completed with exit code 1.\r
";
        let parsed = parse(diff, &inflection);
        assert_eq!(
            report_findings(&parsed),
            [(
                "inflection/__init__.py",
                12,
                "Linting".to_owned(),
                "formatting differs: `import re` added"
            )]
        );
    }

    /// rustfmt's check, black's `would reformat`, prettier's `[warn]`, git's `a/` and `b/`.
    #[test]
    fn formatters_checks_name_their_files() {
        let log = "\
Diff in /w/src/lib.rs:228:
     }
 
-    fn f(){}
+    fn f() {}
would reformat /w/src/pkg/_json.py
Oh no! 💥 💔 💥
[warn] app/src/main.ts
[warn] Code style issues found in 2 files. Run Prettier with --write to fix.
--- a/gen/api.go
+++ b/gen/api.go
@@ -1,3 +1,3 @@
-package api
+package apiv2
";
        let got: Vec<(String, u32)> = places(log).into_iter().map(|(f, n, _)| (f, n)).collect();
        assert_eq!(
            got,
            [
                ("src/lib.rs".to_owned(), 230),
                ("src/pkg/_json.py".to_owned(), 1),
                ("app/src/main.ts".to_owned(), 1),
                ("gen/api.go".to_owned(), 1),
            ]
        );
    }

    /// rustfmt's chunk cut before its change (a log cut short), then `ruff format --diff` (found
    /// by the `parse_after` fuzz target): the chunk has no length, and the next tool's `--- `
    /// header is not a removed line of it, so the Python file's hunk is that file's.
    #[test]
    fn a_diff_right_after_a_cut_rustfmt_chunk_is_its_own_files() {
        let log = "\
Diff in /w/src/lib.rs:447:
 {
     type Target = T;
--- ledger/accounts.py
+++ ledger/accounts.py
@@ -1,4 +1,5 @@
 \"\"\"Accounts and transfers between them.\"\"\"
+
 from ledger.errors import Frozen, InsufficientFunds
 
 
";
        let got: Vec<(String, u32)> = places(log).into_iter().map(|(f, n, _)| (f, n)).collect();
        assert_eq!(got, [("ledger/accounts.py".to_owned(), 2)]);
    }

    /// A change is its first run of removed lines and the line added right after them, not an
    /// addition further on; a new file's diff names it without git's `b/`; what follows
    /// rustfmt's chunk is not read as the chunk's.
    #[test]
    fn a_change_is_one_run_and_a_diff_ends_where_its_lines_do() {
        let log = "\
--- a/src/a.go
+++ b/src/a.go
@@ -10,4 +10,4 @@
-
 package a
 
 import \"os\"
+var x = 1
--- /dev/null
+++ b/gen/api_new.go
@@ -0,0 +1,2 @@
+package api
+
Diff in /w/src/lib.rs:10:
 fn a() {}
-
-
 fn b() {}
+ cargo test --all
   Compiling demo v0.1.0 (/w)
";
        assert_eq!(
            places(log),
            [
                (
                    "src/a.go".to_owned(),
                    10,
                    "formatting differs: a blank line removed".to_owned()
                ),
                (
                    "gen/api_new.go".to_owned(),
                    1,
                    "formatting differs: `package api` added".to_owned()
                ),
                (
                    "src/lib.rs".to_owned(),
                    11,
                    "formatting differs: a blank line removed".to_owned()
                ),
            ]
        );
    }
}
