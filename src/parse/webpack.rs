//! webpack's errors: the module and the place on the header, the message on the line below —
//!
//! ```text
//! ERROR in ./src/index.js 119:34
//! Module parse failed: Unexpected token (119:34)
//! ERROR in ./src/c.js 1:0-34
//! Module not found: Error: Can't resolve './utl.js' in '/w/src'
//! ERROR in ./src/index.js 3:21-25
//! export 'nope' (imported as 'nope') was not found in './util.js' (possible exports: helper)
//! ```
//!
//! The module is relative to webpack's context (the folder it ran in). An import of what does not
//! exist is IMPORT; a module that does not parse SYNTAX. A warning is read only when it is a
//! missing export (webpack warns of one in a module it does not know to be strict): its other
//! warnings (sizes, performance) name no broken line. A loader's own report under the header
//! (ts-loader's `[tsl] ERROR in ...`) is left to the format that reads it.

use std::borrow::Cow;

use super::look::Look;
use super::{Finding, Rank, Sink, has};
use crate::api::shared::ErrorType;

const ERROR: &str = "ERROR in ";
const WARNING: &str = "WARNING in ";

#[derive(Default)]
pub(crate) struct Webpack {
    /// The header just read: the message is the next line.
    header: Option<Header>,
}

struct Header {
    module: String,
    line: u32,
    warning: bool,
}

impl Webpack {
    /// Whether [`Webpack::line`] can do anything with the line: the one after a header, or a
    /// header (its first byte, then its last: a digit of its place).
    #[inline]
    pub fn wants(&self, look: &Look<'_>) -> bool {
        self.header.is_some()
            || match look.first {
                Some(b'E') => look.last.is_ascii_digit() && look.line.starts_with(ERROR),
                Some(b'W') => look.last.is_ascii_digit() && look.line.starts_with(WARNING),
                _ => false,
            }
    }

    pub fn line(&mut self, line: &str, sink: &mut Sink<'_>) {
        if let Some(header) = self.header.take() {
            report(sink, &header, line);
            return;
        }
        let (rest, warning) = match line.strip_prefix(ERROR) {
            Some(rest) => (rest, false),
            None => match line.strip_prefix(WARNING) {
                Some(rest) => (rest, true),
                None => return,
            },
        };
        if let Some((module, n)) = header_place(rest) {
            self.header = Some(Header {
                module: module.to_owned(),
                line: n,
                warning,
            });
        }
    }
}

/// `./src/index.js 119:34` (or `1:0-34`, `3:21-25`, `12:2-14:3`): the module and the line.
fn header_place(rest: &str) -> Option<(&str, u32)> {
    let (module, place) = rest.rsplit_once(' ')?;
    if module.contains(char::is_whitespace) || !module.contains('.') {
        return None;
    }
    let (n, rest) = place.split_once(':')?;
    if rest.is_empty() || !rest.bytes().all(|b| b.is_ascii_digit() || b == b'-' || b == b':') {
        return None;
    }
    Some((module, n.parse().ok()?))
}

fn report(sink: &mut Sink<'_>, header: &Header, message: &str) {
    let message = message.trim();
    let missing_export = has(message, " was not found in '");
    let missing = missing_export || message.starts_with("Module not found: ");
    // A module not found is only a warning where the code expects it may be missing (an optional
    // `require` in a `try`): the build passes.
    if header.warning && !missing_export || message.starts_with('[') {
        return;
    }
    let error_type = if missing {
        ErrorType::Import
    } else {
        // What else stops a bundler is a module it cannot parse.
        ErrorType::Syntax
    };
    sink.report(Finding {
        file: &header.module,
        line: header.line,
        error_type,
        message: Cow::Borrowed(message),
        test: None,
        confidence: 0.9,
        rank: Rank::Error,
        diagnostic: true,
    });
}

#[cfg(test)]
mod tests {
    use crate::parse::{Workspace, parse};

    fn places(log: &str, root: &str, files: &[&str]) -> Vec<(String, u32, String)> {
        let workspace = Workspace::new(root).with_files(files.iter().map(|f| (*f).to_owned()).collect());
        crate::parse::report_types(&parse(log, &workspace))
    }

    /// webpack 5.113 on a module importing a package that is not installed (the fourteenth outsider
    /// trial's). Captured by running it.
    #[test]
    fn a_missing_package_is_placed_at_the_module_s_line() {
        let log = "asset main.js 5.68 KiB [emitted] (name: main)
./index.js 3.01 KiB [built] [code generated]

ERROR in ./index.js 11:12-28
Module not found: Error: Can't resolve 'debug' in '/work/heldout15/projects/ms_dep'
resolve 'debug' in '/work/heldout15/projects/ms_dep'
  Parsed request is a module
  using description file: /work/heldout15/projects/ms_dep/package.json (relative path: .)
    Field 'browser' doesn't contain a valid alias configuration
    resolve as module
      /work/heldout15/projects/ms_dep/node_modules doesn't exist or is not a directory
      /work/heldout15/projects/node_modules doesn't exist or is not a directory
      /work/heldout15/node_modules doesn't exist or is not a directory
      /work/node_modules doesn't exist or is not a directory
      /node_modules doesn't exist or is not a directory

webpack 5.113.0 compiled with 1 error in 96 ms
";
        assert_eq!(
            places(log, "/work/heldout15/projects/ms_dep", &["index.js"]),
            [("index.js".to_owned(), 11, "Import".to_owned())]
        );
    }

    /// webpack 5.113 on a module that does not parse (the fourteenth outsider trial's). Captured by
    /// running it.
    #[test]
    fn a_module_that_does_not_parse_is_placed_at_the_module_s_line() {
        let log = "asset main.js 1.58 KiB [emitted] (name: main)
./index.js 2.95 KiB [built] [code generated] [1 error]

ERROR in ./index.js 119:34
Module parse failed: Unexpected token (119:34)
File was parsed as module type 'javascript/auto'.
You may need an appropriate loader to handle this file type, currently no loaders are configured to process this file. See https://webpack.js.org/concepts#loaders
  118 |   if (msAbs >= h) {
> 119 |     return Math.round(ms / h + 'h';
      |                                   ^
  120 |   }

webpack 5.113.0 compiled with 1 error in 68 ms
";
        assert_eq!(
            places(log, "/work/heldout15/projects/ms_syntax", &["index.js"]),
            [("index.js".to_owned(), 119, "Syntax".to_owned())]
        );
    }

    /// webpack 5.113 on an import of a name the module does not export. Captured by running it.
    #[test]
    fn a_missing_export_is_placed_at_the_module_s_line() {
        let log = "asset main.js 4.32 KiB [emitted] (name: main)
runtime modules 587 bytes 3 modules
cacheable modules 143 bytes
  ./src/index.js 97 bytes [built] [code generated]
  ./src/util.js 46 bytes [built] [code generated]

ERROR in ./src/index.js 3:21-25
export 'nope' (imported as 'nope') was not found in './util.js' (possible exports: helper)

webpack 5.113.0 compiled with 1 error in 79 ms
";
        assert_eq!(
            places(log, "/tmp/rp/wp", &["src/index.js"]),
            [("src/index.js".to_owned(), 3, "Import".to_owned())]
        );
    }

    /// webpack 5.113 (`--mode production`) on a relative import of a file that does not exist; its
    /// resolution trace cut. Captured by running it.
    #[test]
    fn a_missing_relative_module_is_placed_at_the_module_s_line() {
        let log = "assets by status 240 bytes [cached] 1 asset
./src/c.js 63 bytes [built] [code generated]

ERROR in ./src/c.js 1:0-34
Module not found: Error: Can't resolve './utl.js' in '/tmp/rp/wp/src'
Did you mean './util.js'?
'util.js' is the closest name in that directory. It differs from the request by 1 character, ignoring case and file extension.
resolve './utl.js' in '/tmp/rp/wp/src'
  using description file: /tmp/rp/wp/package.json (relative path: ./src)
    Field 'browser' doesn't contain a valid alias configuration
    aliased from extension alias with mapping '.js' to '.js'
      using description file: /tmp/rp/wp/package.json (relative path: ./src/utl.js)
";
        assert_eq!(
            places(log, "/tmp/rp/wp", &["src/c.js"]),
            [("src/c.js".to_owned(), 1, "Import".to_owned())]
        );
    }

    /// A header with no place, and warnings that are not a missing export (sizes, a dependency
    /// expressed as an expression, an optional `require` in a `try` not found), give no report.
    #[test]
    fn a_size_warning_and_a_header_without_a_place_are_not_reports() {
        let log = "WARNING in asset size limit: The following asset(s) exceed the recommended size limit (244 KiB).\n\
                   WARNING in ./src/a.js 2:0-14\n\
                   Critical dependency: the request of a dependency is an expression\n\
                   ERROR in main\n\
                   Module not found: Error: Can't resolve './src' in '/w'\n\
                   WARNING in ./src/a.js 3:14-35\n\
                   Module not found: Error: Can't resolve 'optional-native' in '/w/src'\n";
        assert_eq!(places(log, "/w", &["src/a.js"]), []);
    }
}
