//! esbuild's messages, which the bundlers and build tools built on it print too (vite, tsup,
//! tsx): the terminal form, a header and, a blank line below it, the place indented —
//!
//! ```text
//! ✘ [ERROR] Expected ";" but found ")"
//!
//!     index.js:116:29:
//!       116 │     return Math.round(ms / d)) + 'd';
//! ```
//!
//! (`▲ [WARNING] ... [rule]` for a warning, `X [ERROR]` where the terminal has no Unicode) — and
//! the one-line form the tools built on it quote, `/abs/src/main.ts:3:10: ERROR: message`.
//! Rollup's error, which names the module and the place on its first line, is read here too:
//! `[!] RollupError: index.js (23:2): Expected ',', got 'let'`.

use std::borrow::Cow;

use super::look::Look;
use super::{Finding, Rank, Sink, has, split_location, trim_start};
use crate::api::shared::ErrorType;

/// How rollup's CLI begins an error.
const ROLLUP_ERROR: &str = "[!] RollupError: ";

/// Rollup's error with a place, `[!] RollupError: index.js (23:2): Expected ',', got 'let'`: the
/// module, the line and the message. A parse error is SYNTAX; an import of a name the module
/// does not export (`"x" is not exported by "a.js"`) IMPORT. An import Rollup could not resolve,
/// `Could not resolve "./x" from "index.js"`, names the importing module and no line: its first
/// line, where imports stand, as for Node's unresolved ES module import.
fn rollup_error(line: &str) -> Option<(&str, u32, &str)> {
    let rest = line.strip_prefix(ROLLUP_ERROR)?;
    if let Some(unresolved) = rest.strip_prefix("Could not resolve ") {
        let (_, importer) = unresolved.rsplit_once(" from \"")?;
        let importer = importer.strip_suffix('"')?;
        return (!importer.contains(char::is_whitespace)).then_some((importer, 1, rest));
    }
    let (module, rest) = rest.split_once(" (")?;
    let (place, message) = rest.split_once("): ")?;
    let (n, column) = place.split_once(':')?;
    if module.contains(char::is_whitespace) || !column.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((module, n.parse().ok()?, message))
}

/// Lines between a header and its place: a blank one, and one more for a plugin's note.
const MAX_LINES_TO_PLACE: u8 = 3;

#[derive(Default)]
pub(crate) struct Esbuild {
    /// A header read whose place has not come yet.
    header: Option<Header>,
}

struct Header {
    message: String,
    warning: bool,
    /// Lines read since the header.
    lines: u8,
}

impl Esbuild {
    /// Whether [`Esbuild::line`] can do anything with the line: after a header, the lines up to
    /// its place; otherwise a header (its first byte is `✘`'s, `▲`'s or `X`) or a one-line
    /// message (a place, then `ERROR: `).
    #[inline]
    pub fn wants(&self, look: &Look<'_>) -> bool {
        if self.header.is_some() {
            return true;
        }
        let one_line = || {
            look.colon.is_some_and(|c| {
                look.line.as_bytes().get(c + 1).is_some_and(u8::is_ascii_digit) && has(look.line, ": ERROR: ")
            })
        };
        match look.first {
            Some(0xe2 | b'X') => header(look.line).is_some() || one_line(),
            // Rollup's error, or a route file's one-line message (`[id].js:3:10: ERROR: ...`).
            Some(b'[') => look.line.starts_with(ROLLUP_ERROR) || one_line(),
            _ => one_line(),
        }
    }

    pub fn line(&mut self, line: &str, sink: &mut Sink<'_>) {
        if let Some((message, warning)) = header(line) {
            self.header = Some(Header {
                message: message.to_owned(),
                warning,
                lines: 0,
            });
            return;
        }
        if let Some(header) = self.header.as_mut() {
            header.lines += 1;
            let place = trim_start(line).strip_suffix(':').and_then(split_location);
            if let Some((file, n, _)) = place.filter(|_| line.starts_with(' ')) {
                let header = self.header.take().expect("a header");
                report(sink, file, n, &header.message, header.warning);
            } else if header.lines >= MAX_LINES_TO_PLACE {
                self.header = None;
            }
            return;
        }
        if let Some((file, n, message)) = rollup_error(line) {
            let error_type = if has(message, " is not exported by ") || message.starts_with("Could not resolve ") {
                ErrorType::Import
            } else {
                ErrorType::Syntax
            };
            sink.report(Finding {
                file,
                line: n,
                error_type,
                message: Cow::Owned(format!("RollupError: {message}")),
                test: None,
                confidence: 0.9,
                rank: Rank::Error,
                diagnostic: true,
            });
            return;
        }
        if let Some((file, n, rest)) = split_location(line)
            && let Some(message) = rest.strip_prefix("ERROR: ")
        {
            report(sink, file, n, message, false);
        }
    }
}

/// `✘ [ERROR] message` or `▲ [WARNING] message [rule]`: the message, and whether it is a
/// warning.
fn header(line: &str) -> Option<(&str, bool)> {
    let rest = line
        .strip_prefix("✘ ")
        .or_else(|| line.strip_prefix("▲ "))
        .or_else(|| line.strip_prefix("X "))?;
    if let Some(message) = rest.strip_prefix("[ERROR] ") {
        Some((message, false))
    } else {
        rest.strip_prefix("[WARNING] ").map(|message| (message, true))
    }
}

fn report(sink: &mut Sink<'_>, file: &str, line: u32, message: &str, warning: bool) {
    let error_type = if warning {
        ErrorType::Linting
    } else if message.starts_with("Could not resolve ")
        || message.starts_with("No matching export ")
        || message.contains(" is not exported by ")
    {
        ErrorType::Import
    } else {
        // What else stops esbuild is code it cannot parse (for its target).
        ErrorType::Syntax
    };
    sink.report(Finding {
        file,
        line,
        error_type,
        message: Cow::Borrowed(message),
        test: None,
        confidence: 0.9,
        rank: Rank::of(error_type),
        diagnostic: true,
    });
}

#[cfg(test)]
mod tests {
    use crate::parse::{Workspace, parse};

    /// From a review: a route file's one-line message starts with `[`, as Rollup's error does.
    #[test]
    fn a_one_line_message_of_a_bracketed_file_is_read() {
        let log = "[id].js:3:10: ERROR: Expected \";\" but found \")\"\n";
        let parsed = super::super::parse(log, &super::super::Workspace::new("/w"));
        assert_eq!(super::super::report_places(&parsed), [("[id].js", 3, None)]);
    }

    /// Rollup 4.68's error on a module it cannot parse (the thirteenth outsider trial's, on
    /// nanoid 5.0.9 with a `)` missing): SYNTAX at the module's line.
    #[test]
    fn rollup_s_parse_error_is_placed_at_its_module_s_line() {
        let log = "\u{1b}[36m
\u{1b}[1mindex.js\u{1b}[22m → \u{1b}[1m../../../../tmp/out_ns.js\u{1b}[22m...\u{1b}[39m
\u{1b}[1m\u{1b}[31m[!] \u{1b}[1mRollupError: index.js (23:2): Expected ',', got 'let'\u{1b}[22m\u{1b}[1m\u{1b}[39m\u{1b}[22m
index.js (23:2)
\u{1b}[2m21: export function customRandom(alphabet, defaultSize, getRandom) {
22:   let mask = (2 << (31 - Math.clz32((alphabet.length - 1) | 1)) - 1
23:   let step = Math.ceil((1.6 * mask * defaultSize) / alphabet.length)
      ^
24:   return (size = defaultSize) => {
25:     let id = ''\u{1b}[22m
\u{1b}[2m    at Object.getRollupError (/work/heldout14/tools/node_modules/rollup/dist/shared/parseAst.js:326:41)
    at ParseError.initialise (/work/heldout14/tools/node_modules/rollup/dist/shared/rollup.js:18155:40)
    at convertNode (/work/heldout14/tools/node_modules/rollup/dist/shared/rollup.js:19628:10)
    at convertProgram (/work/heldout14/tools/node_modules/rollup/dist/shared/rollup.js:18864:12)
    at Module.setSource (/work/heldout14/tools/node_modules/rollup/dist/shared/rollup.js:20683:24)
    at async ModuleLoader.addModuleSource (/work/heldout14/tools/node_modules/rollup/dist/shared/rollup.js:24705:9)\u{1b}[22m
";
        let parsed = super::super::parse(
            log,
            &super::super::Workspace::new("/work/heldout14/projects/nanoid_syntax"),
        );
        assert_eq!(
            super::super::report_findings(&parsed),
            [(
                "index.js",
                23,
                "Syntax".to_owned(),
                "RollupError: Expected ',', got 'let'"
            )]
        );
    }

    fn places(log: &str) -> Vec<(String, u32, String)> {
        parse(log, &Workspace::new("/w"))
            .reports
            .iter()
            .map(|r| (r.file_path.clone(), r.line_number, format!("{:?}", r.error_type)))
            .collect()
    }

    #[test]
    fn an_esbuild_error_is_placed_where_its_indented_place_says() {
        // esbuild 0.25 through `npm run build`; a missing module, then a warning with its rule.
        let log = "\
> ms-heldout@2.1.3 build
> esbuild index.js --bundle --platform=node --outfile=dist/ms.js

✘ [ERROR] Expected \";\" but found \")\"

    index.js:116:29:
      116 │     return Math.round(ms / d)) + 'd';
          │                              ^
          ╵                              ;

X [ERROR] Could not resolve \"./missing\"

    src/app.js:2:18:
      2 │ import { x } from './missing';
        ╵                   ~~~~~~~~~~~

▲ [WARNING] Comparison with -0 using the \"===\" operator will also match 0 [equals-negative-zero]

    src/app.js:7:12:
      7 │   if (x === -0) {
        ╵             ~~

✘ [ERROR] The header alone, its place never printed

1 error
";
        assert_eq!(
            places(log),
            [
                ("index.js".to_owned(), 116, "Syntax".to_owned()),
                ("src/app.js".to_owned(), 2, "Import".to_owned()),
                ("src/app.js".to_owned(), 7, "Linting".to_owned()),
            ]
        );
    }

    #[test]
    fn the_one_line_form_a_bundler_quotes_is_read() {
        // vite 6's build error quotes esbuild's message in one line; the `file:` line after it
        // repeats the place.
        let log = "\
error during build:
[vite:esbuild] Transform failed with 1 error:
/w/src/main.ts:3:10: ERROR: Expected \";\" but found \"x\"
file: /w/src/main.ts:3:10
";
        assert_eq!(places(log), [("src/main.ts".to_owned(), 3, "Syntax".to_owned())]);
    }
}
