//! ty, Astral's Python type checker. Its default (`full`) output is rustc's shape —
//!
//! ```text
//! error[unsupported-operator]: Unsupported `+` operation
//!    --> src/cachetools/__init__.py:229:28
//! ```
//!
//! — and its rules are named in kebab case; `concise` (`src/a.py:229:28: error[rule] message`,
//! read with the other one-line linters in [`super::lint`]), `github`, `gitlab`, `junit` and
//! `sarif` carry the same rule. What a rule's name says gives the bug type, as pyright's kinds do:
//! a name or module that does not resolve is IMPORT, a parser error SYNTAX, another error
//! TYPE_ERROR, a warning LINTING.

use std::borrow::Cow;

use super::awaited::Awaited;
use super::look::Look;
use super::{Finding, Rank, Sink, split_location, trim_start};
use crate::api::shared::ErrorType;

/// Rules for a name or module that does not resolve (pylint's symbols for them too: a GitLab
/// report names pylint's findings so).
const UNRESOLVED: &[&str] = &[
    "unresolved-import",
    "unresolved-reference",
    "import-not-found",
    "possibly-unresolved-reference",
    "undefined-variable",
    "import-error",
    "no-name-in-module",
];

/// The bug type of a Python checker's finding by its kebab-case rule and whether it is an error.
pub(crate) fn rule_type(rule: &str, error: bool) -> (ErrorType, Rank) {
    if !error {
        return (ErrorType::Linting, Rank::Warning);
    }
    let error_type = if UNRESOLVED.contains(&rule) {
        ErrorType::Import
    } else if rule == "invalid-syntax" || rule == "syntax-error" {
        ErrorType::Syntax
    } else {
        ErrorType::TypeError
    };
    (error_type, Rank::Error)
}

/// Whether `code` is a rule's name in kebab case (`invalid-assignment`), not a code (`E0308`).
pub(crate) fn is_rule_name(code: &str) -> bool {
    !code.is_empty()
        && code
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && code.as_bytes()[0].is_ascii_lowercase()
}

/// Whether `path` is a Python source's.
pub(crate) fn is_python_path(path: &str) -> bool {
    path.ends_with(".py") || path.ends_with(".pyi")
}

/// `error[rule]: message` (or `warning[rule]`, `error[rule] message` as `concise` and an Azure
/// problem matcher print it): whether an error, the rule and the message.
pub(crate) fn header(text: &str) -> Option<(bool, &str, &str)> {
    let (error, rest) = match text.strip_prefix("error[") {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix("warning[")?),
    };
    let (rule, message) = rest.split_once(']')?;
    let message = message.strip_prefix(':').unwrap_or(message).trim_start();
    is_rule_name(rule).then_some((error, rule, message))
}

/// Lines between a header and its place (`-->`): none in ty's output, a few allowed.
const MAX_LINES_TO_PLACE: u16 = 3;

#[derive(Default)]
pub(crate) struct Ty {
    header: Awaited<Header, MAX_LINES_TO_PLACE>,
}

struct Header {
    error: bool,
    rule: String,
    message: String,
}

impl Ty {
    /// Whether [`Ty::line`] can do anything with the line: the few after a header, or a header
    /// (`error[` or `warning[` at the line's start).
    #[inline]
    pub fn wants(&self, look: &Look<'_>) -> bool {
        self.header.is_waiting()
            || match look.first {
                Some(b'e') => look.line.starts_with("error["),
                Some(b'w') => look.line.starts_with("warning["),
                _ => false,
            }
    }

    pub fn line(&mut self, line: &str, sink: &mut Sink<'_>) {
        if let Some((error, rule, message)) = header(line) {
            self.header.start(Header {
                error,
                rule: rule.to_owned(),
                message: message.to_owned(),
            });
            return;
        }
        if !self.header.is_waiting() {
            return;
        }
        // A Python file's place: deno lint prints its findings so too, at JavaScript's.
        let place = trim_start(line)
            .strip_prefix("--> ")
            .and_then(split_location)
            .filter(|(file, ..)| is_python_path(file));
        if let Some((file, n, _)) = place
            && let Some(header) = self.header.take()
        {
            let (error_type, rank) = rule_type(&header.rule, header.error);
            sink.report(Finding {
                file,
                line: n,
                error_type,
                message: Cow::Owned(format!("{}: {}", header.rule, header.message)),
                test: None,
                confidence: 0.95,
                rank,
                diagnostic: true,
            });
        } else {
            self.header.missed();
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::parse::{Workspace, parse};

    fn places(log: &str) -> Vec<(String, u32, String)> {
        let files = [
            "src/cachetools/__init__.py",
            "src/cachetools/func.py",
            "src/cachetools/keys.py",
        ];
        let workspace =
            Workspace::new("/work/heldout16/projects/cachetools").with_files(files.map(str::to_owned).to_vec());
        crate::parse::report_types(&parse(log, &workspace))
    }

    /// ty 0.0.107's default `full` output on cachetools 5.5.2 with three bugs (the fifteenth
    /// outsider trial's, captured by running it; cut to the bugs' diagnostics and one warning): an
    /// unresolved name IMPORT, the other errors TYPE_ERROR, the warning LINTING.
    #[test]
    fn ty_s_full_output_is_typed_by_its_rules() {
        let log = "error[unsupported-operator]: Unsupported `+` operation
   --> src/cachetools/__init__.py:229:28
    |
229 |             raise KeyError(type(self).__name__ + \" is empty, size \" + len(self)) from None
    |                            ----------------------------------------^^^---------
    |                            |                                          |
    |                            |                                          Has type `int`
    |                            Has type `str`

warning[mismatched-type-name]: The name passed to `namedtuple` must match the variable it is assigned to
   --> src/cachetools/__init__.py:635:5
    |
635 |     \"CacheInfo\", [\"hits\", \"misses\", \"maxsize\", \"currsize\"]
    |     ^^^^^^^^^^^ Expected \"_CacheInfo\", got \"CacheInfo\"

error[unresolved-reference]: Name `timr` used when not defined
   --> src/cachetools/func.py:117:45
    |
117 |         return _cache(_UnboundTTLCache(ttl, timr), None, typed)
    |                                             ^^^^

error[invalid-assignment]: Object of type `None` is not assignable to `int`
  --> src/cachetools/keys.py:14:24
   |
14 |     __hashvalue: int = None
   |                  ---   ^^^^ Incompatible value of type `None`
   |                  |
   |                  Declared type

Found 23 diagnostics
";
        assert_eq!(
            places(log),
            [
                ("src/cachetools/__init__.py".to_owned(), 229, "TypeError".to_owned()),
                ("src/cachetools/func.py".to_owned(), 117, "Import".to_owned()),
                ("src/cachetools/keys.py".to_owned(), 14, "TypeError".to_owned()),
                ("src/cachetools/__init__.py".to_owned(), 635, "Linting".to_owned()),
            ]
        );
    }

    /// ty 0.0.107's `--output-format concise` on cachetools 5.5.2 with three bugs (the fifteenth
    /// outsider trial's, captured by running it; cut to the bugs' diagnostics and one warning): an
    /// unresolved name IMPORT, the other errors TYPE_ERROR, the warning LINTING.
    #[test]
    fn ty_s_concise_output_is_typed_by_its_rules() {
        let log = "src/cachetools/__init__.py:229:28: error[unsupported-operator] Operator `+` is not supported between objects of type `str` and `int`
src/cachetools/__init__.py:635:5: warning[mismatched-type-name] The name passed to `namedtuple` must match the variable it is assigned to: Expected \"_CacheInfo\", got \"CacheInfo\"
src/cachetools/func.py:117:45: error[unresolved-reference] Name `timr` used when not defined
src/cachetools/keys.py:14:24: error[invalid-assignment] Object of type `None` is not assignable to `int`
Found 23 diagnostics
";
        assert_eq!(
            places(log),
            [
                ("src/cachetools/__init__.py".to_owned(), 229, "TypeError".to_owned()),
                ("src/cachetools/func.py".to_owned(), 117, "Import".to_owned()),
                ("src/cachetools/keys.py".to_owned(), 14, "TypeError".to_owned()),
                ("src/cachetools/__init__.py".to_owned(), 635, "Linting".to_owned()),
            ]
        );
    }

    /// ty 0.0.107's `--output-format github` on cachetools 5.5.2 with three bugs (the fifteenth
    /// outsider trial's, captured by running it; cut to the bugs' diagnostics and one warning): an
    /// unresolved name IMPORT, the other errors TYPE_ERROR, the warning LINTING.
    #[test]
    fn ty_s_github_output_is_typed_by_its_rules() {
        let log = "::error title=ty (unsupported-operator),file=/work/heldout16/projects/cachetools/src/cachetools/__init__.py,line=229,col=28,endLine=229,endColumn=80::src/cachetools/__init__.py:229:28: unsupported-operator: Operator `+` is not supported between objects of type `str` and `int`%0A  src/cachetools/__init__.py:229:28: Has type `str`%0A  src/cachetools/__init__.py:229:71: Has type `int`
::warning title=ty (mismatched-type-name),file=/work/heldout16/projects/cachetools/src/cachetools/__init__.py,line=635,col=5,endLine=635,endColumn=16::src/cachetools/__init__.py:635:5: mismatched-type-name: The name passed to `namedtuple` must match the variable it is assigned to: Expected \"_CacheInfo\", got \"CacheInfo\"
::error title=ty (unresolved-reference),file=/work/heldout16/projects/cachetools/src/cachetools/func.py,line=117,col=45,endLine=117,endColumn=49::src/cachetools/func.py:117:45: unresolved-reference: Name `timr` used when not defined
::error title=ty (invalid-assignment),file=/work/heldout16/projects/cachetools/src/cachetools/keys.py,line=14,col=24,endLine=14,endColumn=28::src/cachetools/keys.py:14:24: invalid-assignment: Object of type `None` is not assignable to `int`%0A  src/cachetools/keys.py:14:18: Declared type
";
        assert_eq!(
            places(log),
            [
                ("src/cachetools/__init__.py".to_owned(), 229, "TypeError".to_owned()),
                ("src/cachetools/func.py".to_owned(), 117, "Import".to_owned()),
                ("src/cachetools/keys.py".to_owned(), 14, "TypeError".to_owned()),
                ("src/cachetools/__init__.py".to_owned(), 635, "Linting".to_owned()),
            ]
        );
    }

    /// ty 0.0.107's `--output-format junit` (the level in each case's `severity` property) on
    /// cachetools 5.5.2 with three bugs (the fifteenth outsider trial's, captured by running it;
    /// cut to the bugs' diagnostics and one warning): an unresolved name IMPORT, the other errors
    /// TYPE_ERROR, the warning LINTING.
    #[test]
    fn ty_s_junit_output_is_typed_by_its_rules() {
        let log = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>
<testsuites name=\"ty\" tests=\"23\" skipped=\"0\" failures=\"23\" errors=\"0\">
    <testsuite name=\"/work/heldout16/projects/cachetools/src/cachetools/__init__.py\" tests=\"11\" skipped=\"0\" errors=\"0\" failures=\"11\" package=\"org.ty\">
        <testcase name=\"org.ty.unsupported-operator\" classname=\"/work/heldout16/projects/cachetools/src/cachetools/__init__\" line=\"229\" column=\"28\">
            <properties>
                <property name=\"severity\" value=\"error\"/>
            </properties>
            <failure message=\"Operator `+` is not supported between objects of type `str` and `int`\">line 229, col 28, Operator `+` is not supported between objects of type `str` and `int`</failure>
        </testcase>
        <testcase name=\"org.ty.mismatched-type-name\" classname=\"/work/heldout16/projects/cachetools/src/cachetools/__init__\" line=\"635\" column=\"5\">
            <properties>
                <property name=\"severity\" value=\"warning\"/>
            </properties>
            <failure message=\"The name passed to `namedtuple` must match the variable it is assigned to: Expected &quot;_CacheInfo&quot;, got &quot;CacheInfo&quot;\">line 635, col 5, The name passed to `namedtuple` must match the variable it is assigned to: Expected &quot;_CacheInfo&quot;, got &quot;CacheInfo&quot;</failure>
        </testcase>
    </testsuite>
    <testsuite name=\"/work/heldout16/projects/cachetools/src/cachetools/func.py\" tests=\"2\" skipped=\"0\" errors=\"0\" failures=\"2\" package=\"org.ty\">
        <testcase name=\"org.ty.unresolved-reference\" classname=\"/work/heldout16/projects/cachetools/src/cachetools/func\" line=\"117\" column=\"45\">
            <properties>
                <property name=\"severity\" value=\"error\"/>
            </properties>
            <failure message=\"Name `timr` used when not defined\">line 117, col 45, Name `timr` used when not defined</failure>
        </testcase>
    </testsuite>
    <testsuite name=\"/work/heldout16/projects/cachetools/src/cachetools/keys.py\" tests=\"1\" skipped=\"0\" errors=\"0\" failures=\"1\" package=\"org.ty\">
        <testcase name=\"org.ty.invalid-assignment\" classname=\"/work/heldout16/projects/cachetools/src/cachetools/keys\" line=\"14\" column=\"24\">
            <properties>
                <property name=\"severity\" value=\"error\"/>
            </properties>
            <failure message=\"Object of type `None` is not assignable to `int`\">line 14, col 24, Object of type `None` is not assignable to `int`</failure>
        </testcase>
    </testsuite>
</testsuites>
";
        assert_eq!(
            places(log),
            [
                ("src/cachetools/__init__.py".to_owned(), 229, "TypeError".to_owned()),
                ("src/cachetools/func.py".to_owned(), 117, "Import".to_owned()),
                ("src/cachetools/keys.py".to_owned(), 14, "TypeError".to_owned()),
                ("src/cachetools/__init__.py".to_owned(), 635, "Linting".to_owned()),
            ]
        );
    }

    /// ty 0.0.107's `--output-format gitlab` (the level in `severity`: `major` an error, `minor` a
    /// warning) on cachetools 5.5.2 with three bugs (the fifteenth outsider trial's, captured by
    /// running it; cut to the bugs' diagnostics and one warning): an unresolved name IMPORT, the
    /// other errors TYPE_ERROR, the warning LINTING.
    #[test]
    fn ty_s_gitlab_output_is_typed_by_its_rules() {
        let log = "[
  {
    \"check_name\": \"unsupported-operator\",
    \"description\": \"unsupported-operator: Operator `+` is not supported between objects of type `str` and `int`\",
    \"severity\": \"major\",
    \"fingerprint\": \"1fcde23789d5387e\",
    \"location\": {
      \"path\": \"src/cachetools/__init__.py\",
      \"positions\": {
        \"begin\": {
          \"line\": 229,
          \"column\": 28
        },
        \"end\": {
          \"line\": 229,
          \"column\": 80
        }
      }
    }
  },
  {
    \"check_name\": \"mismatched-type-name\",
    \"description\": \"mismatched-type-name: The name passed to `namedtuple` must match the variable it is assigned to: Expected \\\"_CacheInfo\\\", got \\\"CacheInfo\\\"\",
    \"severity\": \"minor\",
    \"fingerprint\": \"b074a0e544910dfa\",
    \"location\": {
      \"path\": \"src/cachetools/__init__.py\",
      \"positions\": {
        \"begin\": {
          \"line\": 635,
          \"column\": 5
        },
        \"end\": {
          \"line\": 635,
          \"column\": 16
        }
      }
    }
  },
  {
    \"check_name\": \"unresolved-reference\",
    \"description\": \"unresolved-reference: Name `timr` used when not defined\",
    \"severity\": \"major\",
    \"fingerprint\": \"ea7557bf20f943df\",
    \"location\": {
      \"path\": \"src/cachetools/func.py\",
      \"positions\": {
        \"begin\": {
          \"line\": 117,
          \"column\": 45
        },
        \"end\": {
          \"line\": 117,
          \"column\": 49
        }
      }
    }
  },
  {
    \"check_name\": \"invalid-assignment\",
    \"description\": \"invalid-assignment: Object of type `None` is not assignable to `int`\",
    \"severity\": \"major\",
    \"fingerprint\": \"d90493b8acf9d963\",
    \"location\": {
      \"path\": \"src/cachetools/keys.py\",
      \"positions\": {
        \"begin\": {
          \"line\": 14,
          \"column\": 24
        },
        \"end\": {
          \"line\": 14,
          \"column\": 28
        }
      }
    }
  }
]
";
        assert_eq!(
            places(log),
            [
                ("src/cachetools/__init__.py".to_owned(), 229, "TypeError".to_owned()),
                ("src/cachetools/func.py".to_owned(), 117, "Import".to_owned()),
                ("src/cachetools/keys.py".to_owned(), 14, "TypeError".to_owned()),
                ("src/cachetools/__init__.py".to_owned(), 635, "Linting".to_owned()),
            ]
        );
    }

    /// ty's parser error, `invalid-syntax`, is SYNTAX.
    #[test]
    fn ty_s_syntax_error_is_syntax() {
        let log = "error[invalid-syntax]: Expected `:`, found newline
   --> src/cachetools/__init__.py:102:22
    |
102 |     def __len__(self)
    |                      ^
";
        assert_eq!(
            places(log),
            [("src/cachetools/__init__.py".to_owned(), 102, "Syntax".to_owned())]
        );
    }

    /// A Rust diagnostic's code (`E0308`) is no rule name, and deno lint's rule at a TypeScript
    /// file is not ty's.
    #[test]
    fn rustc_s_codes_and_deno_s_places_are_not_ty_s() {
        assert_eq!(super::header("error[E0308]: mismatched types"), None);
        let deno = "error[prefer-const]: `x` is never reassigned\n  --> /w/src/index.ts:14:7\n";
        let parsed = parse(deno, &Workspace::new("/w"));
        assert_eq!(crate::parse::report_findings(&parsed)[0].2, "Linting");
    }
    /// A suite named by a long absolute path (ty's and ruff's JUnit reports name a suite by its
    /// file): the path is kept whole, not cut at an element name's 64 bytes.
    #[test]
    fn a_junit_suite_s_long_path_is_kept_whole() {
        let log = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>
<testsuites name=\"ty\" tests=\"23\" skipped=\"0\" failures=\"23\" errors=\"0\">
    <testsuite name=\"/work/heldout16/projects/cachetools/src/cachetools/_decorators.py\" tests=\"9\" skipped=\"0\" errors=\"0\" failures=\"9\" package=\"org.ty\">
        <testcase name=\"org.ty.missing-attribute\" classname=\"/work/heldout16/projects/cachetools/src/cachetools/_decorators\" line=\"35\" column=\"5\">
            <properties>
                <property name=\"severity\" value=\"error\"/>
            </properties>
            <failure message=\"Unresolved attribute `cache_clear` on type `def wrapper(...) -&gt; Unknown`\">line 35, col 5, Unresolved attribute `cache_clear` on type `def wrapper(...) -&gt; Unknown`</failure>
        </testcase>
        <testcase name=\"org.ty.missing-attribute\" classname=\"/work/heldout16/projects/cachetools/src/cachetools/_decorators\" line=\"36\" column=\"5\">
            <properties>
                <property name=\"severity\" value=\"error\"/>
            </properties>
            <failure message=\"Unresolved attribute `cache_info` on type `def wrapper(...) -&gt; Unknown`\">line 36, col 5, Unresolved attribute `cache_info` on type `def wrapper(...) -&gt; Unknown`</failure>
        </testcase>
    </testsuite>
</testsuites>
";
        assert_eq!(
            places(log),
            [
                ("src/cachetools/_decorators.py".to_owned(), 35, "TypeError".to_owned()),
                ("src/cachetools/_decorators.py".to_owned(), 36, "TypeError".to_owned()),
            ]
        );
    }
}
