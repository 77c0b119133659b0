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

use std::borrow::Cow;

use super::awaited::Awaited;
use super::look::Look;
use super::{Finding, Rank, Sink, has, split_location, trim_start};
use crate::api::shared::ErrorType;

/// Lines between a header and its place: a blank one, and one more for a plugin's note.
const MAX_LINES_TO_PLACE: u16 = 3;

#[derive(Default)]
pub(crate) struct Esbuild {
    header: Awaited<Header, MAX_LINES_TO_PLACE>,
}

struct Header {
    message: String,
    warning: bool,
}

impl Esbuild {
    /// Whether [`Esbuild::line`] can do anything with the line: after a header, the lines up to
    /// its place; otherwise a header (its first byte is `✘`'s, `▲`'s or `X`) or a one-line
    /// message (a place, then `ERROR: `).
    #[inline]
    pub fn wants(&self, look: &Look<'_>) -> bool {
        if self.header.is_waiting() {
            return true;
        }
        let one_line = || {
            look.colon.is_some_and(|c| {
                look.line.as_bytes().get(c + 1).is_some_and(u8::is_ascii_digit) && has(look.line, ": ERROR: ")
            })
        };
        match look.first {
            Some(0xe2 | b'X') => header(look.line).is_some() || one_line(),
            _ => one_line(),
        }
    }

    pub fn line(&mut self, line: &str, sink: &mut Sink<'_>) {
        if let Some((message, warning)) = header(line) {
            self.header.start(Header {
                message: message.to_owned(),
                warning,
            });
            return;
        }
        if self.header.is_waiting() {
            let place = trim_start(line).strip_suffix(':').and_then(split_location);
            if let Some((file, n, _)) = place.filter(|_| line.starts_with(' '))
                && let Some(header) = self.header.take()
            {
                report(sink, file, n, &header.message, header.warning);
            } else {
                self.header.missed();
            }
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

    fn places(log: &str) -> Vec<(String, u32, String)> {
        crate::parse::report_types(&parse(log, &Workspace::new("/w")))
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
