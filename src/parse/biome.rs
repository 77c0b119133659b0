//! Biome's terminal reporter (`biome lint`, `biome check`, `biome ci`): a header with the place
//! and the diagnostic's category, ruled off to the line's end, and the message a line or two
//! below it after its severity's mark —
//!
//! ```text
//! index.js:31:19 lint/suspicious/noDoubleEquals  FIXABLE  ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━
//!
//!   × Using == may be unsafe if you are relying on type coercion.
//! ```
//!
//! A rule's category (`lint/...`, `assist/...`) is a linter finding, `parse` a syntax error; a
//! formatter's diff (`index.js format ━━━`) names no line and is not read.

use std::borrow::Cow;

use super::look::Look;
use super::{Finding, Rank, Sink, split_location, split_word, trim_start};
use crate::api::shared::ErrorType;

/// The header's rule, U+2501.
const RULE: char = '━';
/// Lines between a header and its message: a blank one, at most one more.
const MAX_LINES_TO_MESSAGE: u8 = 3;

#[derive(Default)]
pub(crate) struct Biome {
    /// A header read whose message has not come yet.
    header: Option<Header>,
}

struct Header {
    file: String,
    line: u32,
    error_type: ErrorType,
    category: String,
    /// Lines read since the header.
    lines: u8,
}

impl Biome {
    /// Whether [`Biome::line`] can do anything with the line: after a header, the lines up to its
    /// message; otherwise a header, which ends in the rule's character (its last byte, 0x81) and
    /// has a place.
    #[inline]
    pub fn wants(&self, look: &Look<'_>) -> bool {
        self.header.is_some() || look.last == 0x81 && look.colon.is_some() && look.line.ends_with(RULE)
    }

    pub fn line(&mut self, line: &str, sink: &mut Sink<'_>) {
        if let Some(header) = header(line) {
            self.header = Some(header);
            return;
        }
        let Some(header) = self.header.as_mut() else {
            return;
        };
        header.lines += 1;
        let message = ["× ", "! ", "i ", "ℹ "]
            .iter()
            .find_map(|mark| trim_start(line).strip_prefix(mark).filter(|_| line.starts_with(' ')));
        if let Some(message) = message {
            let header = self.header.take().expect("a header");
            sink.report(Finding {
                file: &header.file,
                line: header.line,
                error_type: header.error_type,
                message: Cow::Owned(format!("{} {message}", header.category)),
                test: None,
                confidence: 0.9,
                rank: Rank::of(header.error_type),
                diagnostic: true,
            });
        } else if header.lines >= MAX_LINES_TO_MESSAGE {
            self.header = None;
        }
    }
}

/// `path:line:col category [FIXABLE] ━━━`: the place, the category and its bug type.
fn header(line: &str) -> Option<Header> {
    let body = line.trim_end_matches(RULE).trim_end();
    if body.len() == line.len() {
        return None;
    }
    let (place, rest) = split_word(body);
    let (file, n, _) = split_location(place)?;
    let (category, _) = split_word(trim_start(rest));
    let error_type = category_type(category)?;
    Some(Header {
        file: file.to_owned(),
        line: n,
        error_type,
        category: category.to_owned(),
        lines: 0,
    })
}

/// The bug type of a Biome diagnostic's category, wherever Biome prints it (its terminal header,
/// its GitHub annotation's title): a rule's (`lint/...`, `assist/...`) and the formatter's
/// (`format`) are linter findings, but for an undeclared variable (IMPORT, as
/// [`super::rust::is_unresolved_rule`] says), `parse` a syntax error; `None` for another category.
pub(crate) fn category_type(category: &str) -> Option<ErrorType> {
    if category == "parse" {
        Some(ErrorType::Syntax)
    } else if category.starts_with("lint/") && super::rust::is_unresolved_rule(category) {
        Some(ErrorType::Import)
    } else if category.starts_with("lint/") || category.starts_with("assist/") || category == "format" {
        Some(ErrorType::Linting)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use crate::parse::{Workspace, parse};

    #[test]
    fn a_biome_diagnostic_is_placed_by_its_header_and_typed_by_its_category() {
        // Biome 2.3's `biome check`: a rule's error with its code frame, a parse error, a
        // formatter's diff (no line: not read), and the run's summary.
        let log = "\
index.js:31:19 lint/suspicious/noDoubleEquals  FIXABLE  ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━

  × Using == may be unsafe if you are relying on type coercion.
  
    30 │   var type = typeof val;
  > 31 │   if (type == 'string' && val.length > 0) {
       │                   ^^

index.js:116:30 parse ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━

  × Expected a semicolon or an implicit semicolon after a statement, but found none

index.js format ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━

  × Formatter would have printed the following content:

check ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━

  × Some errors were emitted while running checks.
";
        let parsed = parse(log, &Workspace::new("/w"));
        let got = crate::parse::report_findings(&parsed);
        // Errors come before linter findings.
        assert_eq!(
            got,
            [
                (
                    "index.js",
                    116,
                    "Syntax".to_owned(),
                    "parse Expected a semicolon or an implicit semicolon after a statement, but found none"
                ),
                (
                    "index.js",
                    31,
                    "Linting".to_owned(),
                    "lint/suspicious/noDoubleEquals Using == may be unsafe if you are relying on type coercion."
                ),
            ]
        );
    }

    /// Biome's `noUndeclaredVariables` is a name that does not resolve, as Node's
    /// ReferenceError at run time: IMPORT, in its terminal reporter, its GitHub annotations and
    /// its SARIF report alike (Biome 2.6.8, `biome lint` with the rule enabled, each reporter).
    #[test]
    fn an_undeclared_variable_is_import_in_each_of_biome_s_reporters() {
        let terminal = "\
src/total.js:6:16 lint/correctness/noUndeclaredVariables ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━

  × The taxRate variable is undeclared.
  
    4 │     sum += item.price * item.qty;
    5 │   }
  > 6 │   return sum * taxRate;
      │                ^^^^^^^
    7 │ }
    8 │ 
  
  i Using an undeclared variable at runtime can throw a ReferenceError. It often points to a typo or a missing import.
  
  i Declare or import the variable, or fix its name.
  
  i By default, Biome recognizes browser and Node.js globals.
    You can ignore more globals using the javascript.globals configuration.
  

Checked 1 file in 3ms. No fixes applied.
Found 1 error.
lint ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━

  × Some errors were emitted while running checks.
  

";
        let github = "\
::error title=lint/correctness/noUndeclaredVariables,file=/w/src/total.js,line=6,endLine=6,col=16,endColumn=23::The taxRate variable is undeclared.
lint ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━

  × Some errors were emitted while running checks.
  

";
        let sarif = "\
{
  \"$schema\": \"https://json.schemastore.org/sarif-2.1.0.json\",
  \"version\": \"2.1.0\",
  \"runs\": [
    {
      \"tool\": {
        \"driver\": {
          \"name\": \"Biome\",
          \"informationUri\": \"https://biomejs.dev\",
          \"rules\": [
            {
              \"id\": \"lint/correctness/noUndeclaredVariables\",
              \"shortDescription\": {
                \"text\": \"Prevents the usage of variables that haven't been declared inside the document.\"
              },
              \"helpUri\": \"https://biomejs.dev/linter/rules/no-undeclared-variables\"
            }
          ]
        }
      },
      \"results\": [
        {
          \"ruleId\": \"lint/correctness/noUndeclaredVariables\",
          \"level\": \"error\",
          \"message\": {
            \"text\": \"The taxRate variable is undeclared.\"
          },
          \"locations\": [
            {
              \"physicalLocation\": {
                \"artifactLocation\": {
                  \"uri\": \"/w/src/total.js\"
                },
                \"region\": {
                  \"startLine\": 6,
                  \"startColumn\": 16,
                  \"endLine\": 6,
                  \"endColumn\": 23
                }
              }
            }
          ]
        }
      ]
    }
  ]
}
lint ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━

  × Some errors were emitted while running checks.
  

";
        for log in [terminal, github, sarif] {
            let parsed = parse(log, &Workspace::new("/w"));
            let got: Vec<_> = crate::parse::report_findings(&parsed)
                .into_iter()
                .map(|(file, line, kind, _)| (file, line, kind))
                .collect();
            assert_eq!(got, [("src/total.js", 6, "Import".to_owned())], "{log}");
        }
    }
}
