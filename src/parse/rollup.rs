//! Rollup's CLI: an error stops the build, `[!] ` and its message, and a warning, `(!) ` and its
//! title, each followed by the place when the module has one.
//!
//! ```text
//! [!] RollupError: src/index.js (4:20): Expression expected         (Rollup 4: the place inline)
//! [!] (plugin babel) SyntaxError: /abs/src/index.js: Unexpected token (4:20)
//! [!] Error: Unexpected token                                        (Rollup 2; 3 says RollupError)
//! src/index.js (4:20)                                                (the place, under a URL line)
//! (!) [plugin typescript] ts/index.ts (4:14): @rollup/plugin-typescript TS2322: Type ...  (4)
//! (!) Plugin typescript: @rollup/plugin-typescript TS2322: Type ...  (Rollup 2 and 3)
//! ts/index.ts: (4:14)
//! ```
//!
//! vite, which builds with Rollup, prints its plugins' errors as Rollup 4 prints a plugin's
//! warning (`[vite:x] [plugin vite:x] index.js (1:0): message`) and an import Rollup could not
//! resolve as `[vite]: Rollup failed to resolve import "x" from "/w/index.js".`
//!
//! An import Rollup cannot resolve names the importing module and no line: its first line,
//! where imports stand, as for Node's unresolved ES module import. Rollup's own warnings
//! (circular dependencies, unresolved externals) are not read: they name no broken line.

use std::borrow::Cow;

use super::awaited::Awaited;
use super::look::Look;
use super::{Finding, Rank, Sink, has, split_word};
use crate::api::shared::ErrorType;

const ERROR: &str = "[!] ";
const WARNING: &str = "(!) ";
/// How vite, which builds with Rollup, begins the error it stops on: `[vite]: ` for its own,
/// `[vite:plugin] ` for one of its plugins'.
const VITE: &str = "[vite";
/// A plugin's error, as vite quotes it: `[plugin name] file (L:C): message`.
const PLUGIN: &str = "[plugin ";

/// Lines between a header and its place: Rollup's URL for the error's code, then the place.
const MAX_LINES_TO_PLACE: u16 = 3;

#[derive(Default)]
pub(crate) struct Rollup {
    header: Awaited<Header, MAX_LINES_TO_PLACE>,
    /// vite said `error during build:`: its next line is the error, a plugin's or Rollup's own
    /// (`o.js (4:0): Expected ',', got 'let'`).
    vite_error_due: bool,
}

/// How vite introduces the error its build stopped on.
const VITE_BUILD_ERROR: &str = "error during build:";

struct Header {
    message: String,
    warning: bool,
}

impl Rollup {
    /// Whether [`Rollup::line`] can do anything with the line: after a header, the lines up to
    /// its place; otherwise a header.
    #[inline]
    pub fn wants(&self, look: &Look<'_>) -> bool {
        self.header.is_waiting()
            || self.vite_error_due
            || match look.first {
                Some(b'e') => look.line == VITE_BUILD_ERROR,
                Some(b'[') => {
                    let line = look.line;
                    line.starts_with(ERROR) || line.starts_with(VITE) || line.starts_with(PLUGIN)
                }
                Some(b'(') => look.line.starts_with(WARNING),
                _ => false,
            }
    }

    pub fn line(&mut self, line: &str, sink: &mut Sink<'_>) {
        if line == VITE_BUILD_ERROR {
            self.vite_error_due = true;
            return;
        }
        if std::mem::take(&mut self.vite_error_due)
            && !line.starts_with(VITE)
            && !line.starts_with(PLUGIN)
            && let Some((module, n, message)) = inline_place(line)
        {
            // Rollup's own error, as vite prints it: the module and its place first.
            report(sink, module, n, message, false);
            return;
        }
        if line.starts_with(VITE) || line.starts_with(PLUGIN) {
            self.header.clear();
            vite_error(line, sink);
            return;
        }
        if let Some(message) = line.strip_prefix(ERROR) {
            self.header.clear();
            self.error(message, sink);
            return;
        }
        if let Some(title) = line.strip_prefix(WARNING) {
            self.header.clear();
            self.warning(title, sink);
            return;
        }
        if !self.header.is_waiting() {
            return;
        }
        if let Some((file, n)) = place_line(line)
            && let Some(header) = self.header.take()
        {
            report(sink, file, n, &header.message, header.warning);
        } else {
            self.header.missed();
        }
    }

    /// `[!] (plugin name) Name: message`: placed now when the message holds its place, else by
    /// the place line below.
    fn error(&mut self, message: &str, sink: &mut Sink<'_>) {
        let message = without_plugin(message);
        if let Some(importer) = unresolved_importer(message) {
            report_import(sink, importer, message);
            return;
        }
        let own = message.strip_prefix("RollupError: ").unwrap_or(message);
        if let Some((module, n, rest)) = inline_place(own) {
            report(sink, module, n, &format!("RollupError: {rest}"), false);
            return;
        }
        // A plugin's parser quotes the module and the place: Babel's `/abs/a.js: msg (4:20)`.
        if let Some((module, n)) = quoted_place(message) {
            report(sink, module, n, message, false);
            return;
        }
        self.header.start(Header {
            message: message.to_owned(),
            warning: false,
        });
    }

    /// `(!) [plugin name] file (L:C): message` (Rollup 4) or `(!) Plugin name: message` and the
    /// place below (2 and 3). Only plugins' warnings are read: a type checker's, a linter's.
    fn warning(&mut self, title: &str, sink: &mut Sink<'_>) {
        if let Some(rest) = title.strip_prefix("[plugin ")
            && let Some((_, rest)) = rest.split_once("] ")
        {
            if let Some((module, n, message)) = inline_place(rest) {
                report(sink, module, n, message, true);
            }
            return;
        }
        if let Some(rest) = title.strip_prefix("Plugin ")
            && let Some((_, message)) = rest.split_once(": ")
        {
            self.header.start(Header {
                message: message.to_owned(),
                warning: true,
            });
        }
    }
}

/// vite's build error: `[vite]: Rollup failed to resolve import "x" from "/w/index.js".` (IMPORT
/// at the importer's first line), or a plugin's, `[vite:build-import-analysis] [plugin
/// vite:build-import-analysis] index.js (1:0): Failed to parse source ...`, placed as Rollup 4
/// places a plugin's.
fn vite_error(line: &str, sink: &mut Sink<'_>) {
    if let Some(message) = line.strip_prefix("[vite]: ") {
        let importer = message
            .strip_prefix("Rollup failed to resolve import ")
            .and_then(|rest| rest.rsplit_once(" from \""))
            .and_then(|(_, importer)| importer.strip_suffix("\".").or_else(|| importer.strip_suffix('"')));
        if let Some(importer) = importer.filter(|i| !i.is_empty() && !i.contains(char::is_whitespace)) {
            report_import(sink, importer, message);
        }
        return;
    }
    // `[vite:name] ` before the plugin's own `[plugin name] `.
    let rest = match line.strip_prefix(VITE) {
        Some(rest) => rest.split_once("] ").map_or("", |(_, rest)| rest),
        None => line,
    };
    if let Some((_, rest)) = rest.strip_prefix(PLUGIN).and_then(|r| r.split_once("] "))
        && let Some((module, n, message)) = inline_place(rest)
    {
        report(sink, module, n, message, false);
    }
}

/// The message without `(plugin name) `.
fn without_plugin(message: &str) -> &str {
    message
        .strip_prefix("(plugin ")
        .and_then(|rest| rest.split_once(") "))
        .map_or(message, |(_, rest)| rest)
}

/// `Could not resolve "./x" from "src/a.js"` (Rollup 3 and 4) or `... './x' from src/a.js` (2):
/// the importing module.
fn unresolved_importer(message: &str) -> Option<&str> {
    let message = message.split_once(": ").map_or(
        message,
        |(name, rest)| {
            if name.ends_with("Error") { rest } else { message }
        },
    );
    let unresolved = message.strip_prefix("Could not resolve ")?;
    let (_, importer) = unresolved.rsplit_once(" from ")?;
    let importer = importer
        .strip_prefix('"')
        .and_then(|i| i.strip_suffix('"'))
        .unwrap_or(importer);
    (!importer.is_empty() && !importer.contains(char::is_whitespace)).then_some(importer)
}

/// `module (L:C): message`: the module, the line and the message.
fn inline_place(text: &str) -> Option<(&str, u32, &str)> {
    let (module, rest) = split_word(text);
    let rest = rest.strip_prefix(" (")?;
    let (place, message) = rest.split_once("): ")?;
    Some((module, line_of(place)?, message))
}

/// A place line: `src/a.js (4:20)`, or `ts/a.ts: (4:14)` as Rollup 2 and 3 print a warning's.
fn place_line(line: &str) -> Option<(&str, u32)> {
    let (module, rest) = split_word(line);
    let module = module.strip_suffix(':').unwrap_or(module);
    let place = rest.strip_prefix(" (")?.strip_suffix(')')?;
    Some((module, line_of(place)?)).filter(|(m, _)| !m.is_empty())
}

/// `SyntaxError: /abs/a.js: Unexpected token (4:20)`: the module after the error's name, the
/// line at the end.
fn quoted_place(message: &str) -> Option<(&str, u32)> {
    let (name, rest) = message.split_once(": ")?;
    if !name.ends_with("Error") || name.contains(' ') {
        return None;
    }
    let (module, rest) = rest.split_once(": ")?;
    let (_, place) = rest.strip_suffix(')')?.rsplit_once(" (")?;
    (!module.contains(char::is_whitespace)).then_some((module, line_of(place)?))
}

/// `L:C`: the line.
fn line_of(place: &str) -> Option<u32> {
    let (n, column) = place.split_once(':')?;
    if n.is_empty() || column.is_empty() || !column.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    n.parse().ok()
}

fn report_import(sink: &mut Sink<'_>, importer: &str, message: &str) {
    sink.report(Finding {
        file: importer,
        line: 1,
        error_type: ErrorType::Import,
        message: Cow::Borrowed(message),
        test: None,
        confidence: 0.9,
        rank: Rank::Error,
        diagnostic: true,
    });
}

/// A message's type: a TypeScript plugin's by its code, as tsc's; a name the module does not
/// export IMPORT; what else stops a bundler is code it cannot parse; another plugin's warning
/// is lint.
fn report(sink: &mut Sink<'_>, file: &str, line: u32, message: &str, warning: bool) {
    let (error_type, rank) = if let Some(code) = ts_code(message) {
        super::js::ts_type(code, "error")
    } else if has(message, " is not exported by ") {
        (ErrorType::Import, Rank::Error)
    } else if warning {
        (ErrorType::Linting, Rank::Warning)
    } else {
        (ErrorType::Syntax, Rank::Error)
    };
    sink.report(Finding {
        file,
        line,
        error_type,
        message: Cow::Borrowed(message),
        test: None,
        confidence: 0.9,
        rank,
        diagnostic: true,
    });
}

/// `TS2322` in `@rollup/plugin-typescript TS2322: Type ...`.
fn ts_code(message: &str) -> Option<&str> {
    message
        .split(' ')
        .find_map(|word| word.strip_suffix(':').filter(|code| super::js::is_ts_code(code)))
}

#[cfg(test)]
mod tests {
    use crate::parse::{Workspace, parse};

    fn places(log: &str, workspace: &str) -> Vec<(String, u32, String)> {
        crate::parse::report_types(&parse(log, &Workspace::new(workspace)))
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
        let parsed = parse(log, &Workspace::new("/work/heldout14/projects/nanoid_syntax"));
        assert_eq!(
            crate::parse::report_findings(&parsed),
            [(
                "index.js",
                23,
                "Syntax".to_owned(),
                "RollupError: Expected ',', got 'let'"
            )]
        );
    }

    /// Rollup 2.79: `[!] Error:` and the place on the line below. Captured by running it (ANSI as
    /// printed; the stack cut after two frames).
    #[test]
    fn r2_syntax() {
        let log = "\u{1b}[36m
\u{1b}[1msrc/index.js\u{1b}[22m → \u{1b}[1mdist/out.js\u{1b}[22m...\u{1b}[39m
\u{1b}[1m\u{1b}[31m[!] \u{1b}[1mError: Unexpected token\u{1b}[22m\u{1b}[1m\u{1b}[39m\u{1b}[22m
src/index.js (4:20)
\u{1b}[2m2: 
3: export function main(x) {
4:   return helper(x) +;
                       ^
5: }\u{1b}[22m
\u{1b}[2mError: Unexpected token
    at error (/tmp/rp/r2/node_modules/rollup/dist/shared/rollup.js:198:30)
    at Module.error (/tmp/rp/r2/node_modules/rollup/dist/shared/rollup.js:12567:16)

";
        assert_eq!(
            places(log, "/tmp/rp/r2"),
            [("src/index.js".to_owned(), 4, "Syntax".to_owned())]
        );
    }

    /// Rollup 2.79: a name the module does not export; a URL line before the place. Captured by
    /// running it (ANSI as printed; the stack cut after two frames).
    #[test]
    fn r2_export() {
        let log = "\u{1b}[36m
\u{1b}[1msrc/b.js\u{1b}[22m → \u{1b}[1mdist/b.js\u{1b}[22m...\u{1b}[39m
\u{1b}[1m\u{1b}[31m[!] \u{1b}[1mError: 'nope' is not exported by src/util.js, imported by src/b.js\u{1b}[22m\u{1b}[1m\u{1b}[39m\u{1b}[22m
\u{1b}[36mhttps://rollupjs.org/guide/en/#error-name-is-not-exported-by-module\u{1b}[39m
src/b.js (1:17)
\u{1b}[2m1: import { helper, nope } from \"./util.js\";
                    ^
2: 
3: export function main(x) {\u{1b}[22m
\u{1b}[2mError: 'nope' is not exported by src/util.js, imported by src/b.js
    at error (/tmp/rp/r2/node_modules/rollup/dist/shared/rollup.js:198:30)
    at Module.error (/tmp/rp/r2/node_modules/rollup/dist/shared/rollup.js:12567:16)

";
        assert_eq!(
            places(log, "/tmp/rp/r2"),
            [("src/b.js".to_owned(), 1, "Import".to_owned())]
        );
    }

    /// Rollup 2.79: an unresolved import names its importer unquoted, and no place. Captured by
    /// running it (ANSI as printed; the stack cut after two frames).
    #[test]
    fn r2_resolve() {
        let log = "\u{1b}[36m
\u{1b}[1msrc/c.js\u{1b}[22m → \u{1b}[1mdist/c.js\u{1b}[22m...\u{1b}[39m
\u{1b}[1m\u{1b}[31m[!] \u{1b}[1mError: Could not resolve './utl.js' from src/c.js\u{1b}[22m\u{1b}[1m\u{1b}[39m\u{1b}[22m
\u{1b}[2mError: Could not resolve './utl.js' from src/c.js
    at error (/tmp/rp/r2/node_modules/rollup/dist/shared/rollup.js:198:30)
    at ModuleLoader.handleResolveId (/tmp/rp/r2/node_modules/rollup/dist/shared/rollup.js:22317:24)

";
        assert_eq!(
            places(log, "/tmp/rp/r2"),
            [("src/c.js".to_owned(), 1, "Import".to_owned())]
        );
    }

    /// Rollup 3.29: `[!] RollupError:` and the place below. Captured by running it (ANSI as
    /// printed; the stack cut after two frames).
    #[test]
    fn r3_syntax() {
        let log = "\u{1b}[36m
\u{1b}[1msrc/index.js\u{1b}[22m → \u{1b}[1mdist/out.js\u{1b}[22m...\u{1b}[39m
\u{1b}[1m\u{1b}[31m[!] \u{1b}[1mRollupError: Unexpected token\u{1b}[22m\u{1b}[1m\u{1b}[39m\u{1b}[22m
src/index.js (4:20)
\u{1b}[2m2: 
3: export function main(x) {
4:   return helper(x) +;
                       ^
5: }\u{1b}[22m
\u{1b}[2m    at error (/tmp/rp/r3/node_modules/rollup/dist/shared/rollup.js:353:30)
    at Module.error (/tmp/rp/r3/node_modules/rollup/dist/shared/rollup.js:15243:16)


";
        assert_eq!(
            places(log, "/tmp/rp/r3"),
            [("src/index.js".to_owned(), 4, "Syntax".to_owned())]
        );
    }

    /// Rollup 3.29: a name the module does not export. Captured by running it (ANSI as printed; the
    /// stack cut after two frames).
    #[test]
    fn r3_export() {
        let log = "\u{1b}[36m
\u{1b}[1msrc/b.js\u{1b}[22m → \u{1b}[1mdist/b.js\u{1b}[22m...\u{1b}[39m
\u{1b}[1m\u{1b}[31m[!] \u{1b}[1mRollupError: \"nope\" is not exported by \"src/util.js\", imported by \"src/b.js\".\u{1b}[22m\u{1b}[1m\u{1b}[39m\u{1b}[22m
\u{1b}[36mhttps://rollupjs.org/troubleshooting/#error-name-is-not-exported-by-module\u{1b}[39m
src/b.js (1:17)
\u{1b}[2m1: import { helper, nope } from \"./util.js\";
                    ^
2: 
3: export function main(x) {\u{1b}[22m
\u{1b}[2m    at error (/tmp/rp/r3/node_modules/rollup/dist/shared/rollup.js:353:30)
    at Module.error (/tmp/rp/r3/node_modules/rollup/dist/shared/rollup.js:15243:16)


";
        assert_eq!(
            places(log, "/tmp/rp/r3"),
            [("src/b.js".to_owned(), 1, "Import".to_owned())]
        );
    }

    /// Rollup 3.29 with @rollup/plugin-babel: Babel's error quotes the absolute module and the
    /// place. Captured by running it (ANSI as printed; the stack cut after two frames).
    #[test]
    fn r3_babel() {
        let log = "\u{1b}[36m
\u{1b}[1msrc/index.js\u{1b}[22m → \u{1b}[1mdist/out.js\u{1b}[22m...\u{1b}[39m
\u{1b}[1m\u{1b}[31m[!] \u{1b}[1m(plugin babel) SyntaxError: /tmp/rp/r3/src/index.js: Unexpected token (4:20)

  2 |
  3 | export function main(x) {
> 4 |   return helper(x) +;
    |                     ^
  5 | }
  6 |\u{1b}[22m\u{1b}[1m\u{1b}[39m\u{1b}[22m
src/index.js (4:20)
\u{1b}[2m    at constructor (/tmp/rp/r3/node_modules/@babel/parser/lib/index.js:369:19)
    at Parser.raise (/tmp/rp/r3/node_modules/@babel/parser/lib/index.js:6643:19)


";
        assert_eq!(
            places(log, "/tmp/rp/r3"),
            [("src/index.js".to_owned(), 4, "Syntax".to_owned())]
        );
    }

    /// Rollup 3.29 with @rollup/plugin-typescript: a warning, `ts/index.ts: (4:14)` below it.
    /// Captured by running it (ANSI as printed; the stack cut after two frames).
    #[test]
    fn r3_ts() {
        let log = "\u{1b}[36m
\u{1b}[1mts/index.ts\u{1b}[22m → \u{1b}[1mdist/ts.js\u{1b}[22m...\u{1b}[39m
\u{1b}[1m\u{1b}[33m(!) Plugin typescript: @rollup/plugin-typescript TS2322: Type 'number' is not assignable to type 'string'.\u{1b}[39m\u{1b}[22m
\u{1b}[1mts/index.ts: (4:14)\u{1b}[22m
\u{1b}[90m
\u{1b}[7m4\u{1b}[0m export const bad: string = add(1, 2);
\u{1b}[7m \u{1b}[0m \u{1b}[91m             ~~~\u{1b}[0m
\u{1b}[39m
\u{1b}[32mcreated \u{1b}[1mdist/ts.js\u{1b}[22m in \u{1b}[1m658ms\u{1b}[22m\u{1b}[39m
";
        assert_eq!(
            places(log, "/tmp/rp/r3"),
            [("ts/index.ts".to_owned(), 4, "TypeError".to_owned())]
        );
    }

    /// Rollup 4 with @rollup/plugin-babel. Captured by running it (ANSI as printed; the stack cut
    /// after two frames).
    #[test]
    fn r4_babel() {
        let log = "\u{1b}[36m
\u{1b}[1msrc/index.js\u{1b}[22m → \u{1b}[1mdist/out.js\u{1b}[22m...\u{1b}[39m
\u{1b}[1m\u{1b}[31m[!] \u{1b}[1m(plugin babel) SyntaxError: /tmp/rp/r4/src/index.js: Unexpected token (4:20)

  2 |
  3 | export function main(x) {
> 4 |   return helper(x) +;
    |                     ^
  5 | }
  6 |\u{1b}[22m\u{1b}[1m\u{1b}[39m\u{1b}[22m
src/index.js (4:20)
\u{1b}[2m    at constructor (/tmp/rp/r4/node_modules/@babel/parser/lib/index.js:369:19)
    at Parser.raise (/tmp/rp/r4/node_modules/@babel/parser/lib/index.js:6643:19)


";
        assert_eq!(
            places(log, "/tmp/rp/r4"),
            [("src/index.js".to_owned(), 4, "Syntax".to_owned())]
        );
    }

    /// Rollup 4 with @rollup/plugin-typescript: the place inline. Captured by running it (ANSI as
    /// printed; the stack cut after two frames).
    #[test]
    fn r4_ts() {
        let log = "\u{1b}[36m
\u{1b}[1mts/index.ts\u{1b}[22m → \u{1b}[1mdist/ts.js\u{1b}[22m...\u{1b}[39m
\u{1b}[1m\u{1b}[33m(!) [plugin typescript] ts/index.ts (4:14): @rollup/plugin-typescript TS2322: Type 'number' is not assignable to type 'string'.\u{1b}[39m\u{1b}[22m
\u{1b}[1m/tmp/rp/r4/ts/index.ts:4:14\u{1b}[22m
\u{1b}[90m
\u{1b}[7m4\u{1b}[0m export const bad: string = add(1, 2);
\u{1b}[7m \u{1b}[0m \u{1b}[91m             ~~~\u{1b}[0m
\u{1b}[39m
\u{1b}[32mcreated \u{1b}[1mdist/ts.js\u{1b}[22m in \u{1b}[1m646ms\u{1b}[22m\u{1b}[39m
";
        assert_eq!(
            places(log, "/tmp/rp/r4"),
            [("ts/index.ts".to_owned(), 4, "TypeError".to_owned())]
        );
    }

    /// Rollup 4: an unresolved import, the importer alone on the line below. Captured by running it
    /// (ANSI as printed; the stack cut after two frames).
    #[test]
    fn r4_resolve() {
        let log = "\u{1b}[36m
\u{1b}[1msrc/c.js\u{1b}[22m → \u{1b}[1mdist/c.js\u{1b}[22m...\u{1b}[39m
\u{1b}[1m\u{1b}[31m[!] \u{1b}[1mRollupError: Could not resolve \"./utl.js\" from \"src/c.js\"\u{1b}[22m\u{1b}[1m\u{1b}[39m\u{1b}[22m
src/c.js
\u{1b}[2m    at getRollupError (/tmp/rp/r4/node_modules/rollup/dist/shared/parseAst.js:326:41)
    at Object.error (/tmp/rp/r4/node_modules/rollup/dist/shared/parseAst.js:322:42)


";
        assert_eq!(
            places(log, "/tmp/rp/r4"),
            [("src/c.js".to_owned(), 1, "Import".to_owned())]
        );
    }
    /// vite 6.4's build errors (the fifteenth outsider trial's, captured by running `vite build`;
    /// the stacks cut): a plugin's error placed as Rollup 4 places one (the module vite could not
    /// parse, at the place it names), and an import Rollup could not resolve, IMPORT at the
    /// importer's first line.
    #[test]
    fn vite_s_build_errors_are_placed() {
        let syntax = "vite v6.4.6 building for production...
✓ 0 modules transformed.
✗ Build failed in 15ms
error during build:
[vite:build-import-analysis] [plugin vite:build-import-analysis] index.js (1:0): Failed to parse source for import analysis because the content contains invalid JS syntax. If you are using JSX, make sure to name the file with the .jsx or .tsx extension.
file: /work/heldout16/projects/prettybytes_syntax/index.js:1:0

1: const BYTE_UNITS = [
   ^
2:   'B',
3:   'kB',

    at getRollupError (file:///work/heldout16/tools/js/node_modules/rollup/dist/es/shared/parseAst.js:355:41)
    at error (file:///work/heldout16/tools/js/node_modules/rollup/dist/es/shared/parseAst.js:351:42)
";
        let unresolved = "vite v6.4.6 building for production...
transforming...
✓ 1 modules transformed.
✗ Build failed in 21ms
error during build:
[vite]: Rollup failed to resolve import \"filesize-base\" from \"/work/heldout16/projects/prettybytes_dep/index.js\".
This is most likely unintended because it can break your application at runtime.
If you do want to externalize this module explicitly add it to
`build.rollupOptions.external`
    at viteLog (file:///work/heldout16/tools/js/node_modules/vite/dist/node/chunks/dep-Cohbwjf9.js:46698:15)
    at onRollupLog (file:///work/heldout16/tools/js/node_modules/vite/dist/node/chunks/dep-Cohbwjf9.js:46748:5)
";
        assert_eq!(
            places(syntax, "/work/heldout16/projects/prettybytes_syntax"),
            [("index.js".to_owned(), 1, "Syntax".to_owned())]
        );
        assert_eq!(
            places(unresolved, "/work/heldout16/projects/prettybytes_dep"),
            [("index.js".to_owned(), 1, "Import".to_owned())]
        );
    }
    /// From a review: vite 6.4's build stopped by Rollup's own error (not a plugin's): the
    /// module and its place first on the line after `error during build:`.
    #[test]
    fn vite_s_build_stopped_by_rollup_s_own_error_is_placed() {
        let syntax = "vite v6.4.6 building for production...
transforming...
✓ 4 modules transformed.
✗ Build failed in 33ms
error during build:
o.js (4:0): Expected ',', got 'let'
file: /w/o.js:4:0

2:   1,
3:   2
4: let b = 3;
   ^


";
        let export = "vite v6.4.6 building for production...
transforming...
✓ 4 modules transformed.
✗ Build failed in 48ms
error during build:
main.js (1:9): \"nope\" is not exported by \"u.js\", imported by \"main.js\".
file: /w/main.js:1:9

1: import { nope } from \"./u.js\";
            ^
2: console.log(nope);


";
        assert_eq!(places(syntax, "/w"), [("o.js".to_owned(), 4, "Syntax".to_owned())]);
        assert_eq!(places(export, "/w"), [("main.js".to_owned(), 1, "Import".to_owned())]);
    }
}
