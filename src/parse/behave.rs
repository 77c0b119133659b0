//! behave, which runs Gherkin scenarios against Python step implementations. A step that fails
//! an assertion prints no traceback, only `ASSERT FAILED: message` under the step; where it
//! failed is what the step's line says, which differs with the formatter:
//!
//! ```text
//!   Scenario: ordinal suffix of thirteen  # features/inflection.feature:2
//!     Then the suffix is "th"             # features/steps/inflection_steps.py:16
//!       ASSERT FAILED: got 'rd'
//! ```
//!
//! — the pretty formatter (coloured too, each step redrawn with its time after it) names the
//! step's implementation, the place to look; a JUnit report's failure text names the step in the
//! feature file (`Location: features/inflection.feature:5`); the plain formatter names neither,
//! and the `Failing scenarios:` list at the end gives each failed scenario's line in its feature
//! file. A failed assertion is LOGIC, named after its scenario. A step that raised prints a
//! traceback (six spaces in under a pretty step): it is read by [`super::python`] as any other.

use super::look::Look;
use super::python::python_finding;
use super::{MAX_REPORTS, Sink, split_location, truncate};

/// What behave prints before a failed assertion's message.
const ASSERT_FAILED: &str = "ASSERT FAILED:";

/// The words a step starts with (English Gherkin).
const STEP_KEYWORDS: &[&str] = &["Given ", "When ", "Then ", "And ", "But ", "* "];

/// The words a scenario's line starts with.
const SCENARIO_KEYWORDS: &[&str] = &["Scenario: ", "Scenario Outline: ", "Scenario Template: ", "Example: "];

/// Longest scenario name kept (a name is a test's name).
const MAX_NAME: usize = 300;

#[derive(Default)]
pub(crate) struct Behave {
    /// The scenario being run: its failures are named after it.
    scenario: Option<String>,
    /// Where the step being run is: its implementation (pretty formatter) or its line in the
    /// feature file (a JUnit failure's `Location:`).
    step: Option<(String, u32)>,
    /// Failed assertions the log has not placed yet (plain formatter), each with its scenario:
    /// the `Failing scenarios:` list places them.
    unplaced: Vec<(String, String)>,
    /// Inside the `Failing scenarios:` list, with failures to place.
    in_failing_list: bool,
}

impl Behave {
    /// Whether [`Behave::line`] can do anything with the line: inside the failing scenarios' list
    /// every line; else, a line with a colon that may be a step with its place, a failed
    /// assertion, a scenario, a JUnit failure's `Location:` or the list's heading.
    #[inline]
    pub fn wants(&self, look: &Look<'_>) -> bool {
        if self.in_failing_list {
            return true;
        }
        if look.colon.is_none() {
            return false;
        }
        match look.first_after_indent() {
            // A step, whose place ends it (its time after it, once run in colour).
            Some(b'G' | b'W' | b'T' | b'A' | b'B' | b'*')
                if look.indented() && (look.last.is_ascii_digit() || look.last == b's') =>
            {
                true
            }
            Some(b'A') => look.trimmed().starts_with(ASSERT_FAILED),
            Some(b'S' | b'E') => look.indented() && SCENARIO_KEYWORDS.iter().any(|k| look.trimmed().starts_with(k)),
            Some(b'L') => !look.indented() && look.last.is_ascii_digit(),
            Some(b'F') => !look.indented() && look.last == b':',
            _ => false,
        }
    }

    pub fn line(&mut self, line: &str, sink: &mut Sink<'_>) {
        if self.in_failing_list {
            if self.failing_scenario(line, sink) {
                return;
            }
            self.in_failing_list = false;
        }
        let text = line.trim_start();
        if let Some(message) = text.strip_prefix(ASSERT_FAILED) {
            self.assert_failed(message.trim(), sink);
        } else if line == "Failing scenarios:" {
            self.in_failing_list = !self.unplaced.is_empty();
        } else if let Some(place) = line.strip_prefix("Location: ") {
            if let Some((file, n, "")) = split_location(place).filter(|(file, _, _)| file.ends_with(".feature")) {
                self.step = Some((file.to_owned(), n));
            }
        } else if !matches!(line.as_bytes().first(), Some(b' ' | b'\t')) {
            // Scenarios and steps are indented.
        } else if let Some(name) = scenario_name(text) {
            self.scenario = Some(truncate(name, MAX_NAME));
            self.step = None;
        } else if self.scenario.is_some()
            && let Some(place) = step_place(text)
        {
            self.step = Some(place);
        }
    }

    /// `ASSERT FAILED: message`: reported at the step's place, or kept for the failing
    /// scenarios' list when the log gave none.
    fn assert_failed(&mut self, message: &str, sink: &mut Sink<'_>) {
        let test = self.scenario.as_deref();
        match self.step.take() {
            Some((file, n)) => {
                sink.report(python_finding(&file, n, "AssertionError", message, test));
            }
            None => {
                if let Some(scenario) = self.scenario.clone()
                    && self.unplaced.len() < MAX_REPORTS
                {
                    self.unplaced.push((scenario, message.to_owned()));
                }
            }
        }
    }

    /// A line of the `Failing scenarios:` list, `  features/x.feature:2  name`: the failure kept
    /// for that scenario is reported at its line. Whether the line was one of the list's.
    fn failing_scenario(&mut self, line: &str, sink: &mut Sink<'_>) -> bool {
        if !line.starts_with(' ') {
            return false;
        }
        let Some((file, n, name)) = split_location(line.trim_start()).filter(|(f, _, _)| f.ends_with(".feature"))
        else {
            return false;
        };
        if let Some(at) = self
            .unplaced
            .iter()
            .position(|(scenario, _)| scenario == name.trim_end())
        {
            let (scenario, message) = self.unplaced.remove(at);
            sink.report(python_finding(file, n, "AssertionError", &message, Some(&scenario)));
        }
        !self.unplaced.is_empty()
    }
}

/// The name of the scenario a line begins (`Scenario: name  # features/x.feature:2`, the place
/// only in the pretty formatter's), if it begins one.
fn scenario_name(text: &str) -> Option<&str> {
    let name = SCENARIO_KEYWORDS.iter().find_map(|k| text.strip_prefix(k))?;
    let name = name.rsplit_once(" # ").map_or(name, |(name, _)| name);
    Some(name.trim())
}

/// The place of a step's implementation that the pretty formatter prints after the step,
/// `Then the suffix is "th"   # features/steps/s.py:16` (and the time it took, once it ran).
fn step_place(text: &str) -> Option<(String, u32)> {
    if !STEP_KEYWORDS.iter().any(|k| text.starts_with(k)) {
        return None;
    }
    let (_, place) = text.rsplit_once(" # ")?;
    let (file, n, _) = split_location(place)
        .filter(|(file, _, time)| file.ends_with(".py") && (time.is_empty() || time.ends_with('s')))?;
    Some((file.to_owned(), n))
}

#[cfg(test)]
mod tests {
    use super::super::{Workspace, parse};

    fn inflection() -> Workspace {
        Workspace::new("/work/heldout15/projects/inflection").with_files(
            [
                "features/inflection.feature",
                "features/steps/inflection_steps.py",
                "inflection/__init__.py",
            ]
            .map(str::to_owned)
            .to_vec(),
        )
    }

    fn places(log: &str) -> Vec<(String, u32, String, Option<String>)> {
        parse(log, &inflection())
            .reports
            .into_iter()
            .map(|r| (r.file_path, r.line_number, format!("{:?}", r.error_type), r.test_name))
            .collect()
    }

    fn place(file: &str, line: u32, error_type: &str, test: Option<&str>) -> (String, u32, String, Option<String>) {
        (file.to_owned(), line, error_type.to_owned(), test.map(str::to_owned))
    }

    /// behave 1.3.3's pretty formatter (the fourteenth outsider trial's, on inflection 0.5.1): a
    /// failed assertion at its step's implementation, a NameError (its traceback six spaces in)
    /// at the project's frame that raised it.
    #[test]
    fn the_pretty_formatter_s_failures_are_placed_at_the_step_or_where_it_raised() {
        let log = r#"USING RUNNER: behave.runner:Runner
Feature: Inflecting words # features/inflection.feature:1

  Scenario: ordinal suffix of thirteen  # features/inflection.feature:2
    Given the number 13                 # features/steps/inflection_steps.py:6
    When I ask for its ordinal suffix   # features/steps/inflection_steps.py:11
    Then the suffix is "th"             # features/steps/inflection_steps.py:16
      ASSERT FAILED: got 'rd'


  Scenario: transliterate accents  # features/inflection.feature:12
    Given the word "älämölö"       # features/steps/inflection_steps.py:21
    When I transliterate it        # features/steps/inflection_steps.py:31
      Traceback (most recent call last):
        File "/work/heldout15/venv/lib/python3.11/site-packages/behave/model.py", line 1991, in run
          match.run(runner.context)
        File "features/steps/inflection_steps.py", line 33, in step_transliterate
          context.result = inflection.transliterate(context.word)
                           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
        File "/work/heldout15/projects/inflection/inflection/__init__.py", line 393, in transliterate
          normalized = unicodedat.normalize('NFKD', string)
                       ^^^^^^^^^^
      NameError: name 'unicodedat' is not defined

    Then the result is "alamolo"   # None

Failing scenarios:
  features/inflection.feature:2  ordinal suffix of thirteen

Errored scenarios:
  features/inflection.feature:12  transliterate accents
"#;
        assert_eq!(
            places(log),
            [
                place(
                    "features/steps/inflection_steps.py",
                    16,
                    "Logic",
                    Some("ordinal suffix of thirteen")
                ),
                place("inflection/__init__.py", 393, "Import", None),
            ]
        );
    }

    /// The same run with `--color=always` under Jenkins: each step is printed, then redrawn
    /// (`ESC[1A`) with its time after its place.
    #[test]
    fn the_coloured_pretty_formatter_s_redrawn_steps_are_read() {
        let log = "[2026-11-26T10:00:00.345Z]   Scenario: ordinal suffix of thirteen \x1b[90m # features/inflection.feature:2\x1b[0m
[2026-11-26T10:00:00.530Z]     \x1b[90mThen \x1b[0m\x1b[90mthe suffix is \"\x1b[0m\x1b[90m\x1b[1mth\x1b[0m\x1b[90m\"\x1b[0m\x1b[90m             # features/steps/inflection_steps.py:16\x1b[0m
[2026-11-26T10:00:00.567Z] \x1b[1A    \x1b[31mThen \x1b[0m\x1b[31mthe suffix is \"\x1b[0m\x1b[31m\x1b[1mth\x1b[0m\x1b[31m\"\x1b[0m\x1b[90m             # features/steps/inflection_steps.py:16 0.000s\x1b[0m
[2026-11-26T10:00:00.604Z]       ASSERT FAILED: got 'rd'
[2026-11-26T10:00:00.641Z] 
[2026-11-26T10:00:01.196Z]     \x1b[90mWhen \x1b[0m\x1b[90mI transliterate it\x1b[0m\x1b[90m        # features/steps/inflection_steps.py:31\x1b[0m
[2026-11-26T10:00:01.233Z] \x1b[1A    \x1b[31mWhen \x1b[0m\x1b[31mI transliterate it\x1b[0m\x1b[90m        # features/steps/inflection_steps.py:31\x1b[0m
[2026-11-26T10:00:01.270Z]       Traceback (most recent call last):
[2026-11-26T10:00:01.455Z]         File \"features/steps/inflection_steps.py\", line 33, in step_transliterate
[2026-11-26T10:00:01.492Z]           context.result = inflection.transliterate(context.word)
[2026-11-26T10:00:01.529Z]                            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
[2026-11-26T10:00:01.566Z]         File \"/work/heldout15/projects/inflection/inflection/__init__.py\", line 393, in transliterate
[2026-11-26T10:00:01.603Z]           normalized = unicodedat.normalize('NFKD', string)
[2026-11-26T10:00:01.640Z]                        ^^^^^^^^^^
[2026-11-26T10:00:01.677Z]       NameError: name 'unicodedat' is not defined
";
        assert_eq!(
            places(log),
            [
                place(
                    "features/steps/inflection_steps.py",
                    16,
                    "Logic",
                    Some("ordinal suffix of thirteen")
                ),
                place("inflection/__init__.py", 393, "Import", None),
            ]
        );
    }

    /// `behave -f plain`: no step names its place; the failing scenarios' list gives each
    /// failure's scenario line. The traceback, at column 0, is read as before.
    #[test]
    fn the_plain_formatter_s_failures_are_placed_by_the_failing_scenarios_list() {
        let log = r#"Feature: Inflecting words

  Scenario: ordinal suffix of thirteen
    Given the number 13 ... passed in 0.000s
    When I ask for its ordinal suffix ... passed in 0.000s
    Then the suffix is "th" ... failed in 0.000s
ASSERT FAILED: got 'rd'

  Scenario: humanize a foreign key column
    Given the word "author_id" ... passed in 0.000s
    When I humanize it ... passed in 0.000s
    Then the result is "Author" ... failed in 0.000s
ASSERT FAILED: got 'Author id'

  Scenario: transliterate accents
    When I transliterate it ... error in 0.000s
Traceback (most recent call last):
  File "features/steps/inflection_steps.py", line 33, in step_transliterate
    context.result = inflection.transliterate(context.word)
                     ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/work/heldout15/projects/inflection/inflection/__init__.py", line 393, in transliterate
    normalized = unicodedat.normalize('NFKD', string)
                 ^^^^^^^^^^
NameError: name 'unicodedat' is not defined


Failing scenarios:
  features/inflection.feature:2  ordinal suffix of thirteen
  features/inflection.feature:7  humanize a foreign key column

Errored scenarios:
  features/inflection.feature:12  transliterate accents

0 features passed, 1 failed, 0 skipped
"#;
        assert_eq!(
            places(log),
            [
                place("inflection/__init__.py", 393, "Import", None),
                place(
                    "features/inflection.feature",
                    2,
                    "Logic",
                    Some("ordinal suffix of thirteen")
                ),
                place(
                    "features/inflection.feature",
                    7,
                    "Logic",
                    Some("humanize a foreign key column")
                ),
            ]
        );
    }

    /// `behave --junit`: a failure's text names the failing step's line in its feature file; an
    /// error's holds the traceback, placed where it raised.
    #[test]
    fn a_junit_failure_is_placed_at_its_step_s_location() {
        let log = r#"<testsuite name="inflection.Inflecting words" tests="2" errors="1" failures="1" skipped="0" time="0.001113" timestamp="2026-11-26T23:06:34.048621" hostname="vm"><testcase classname="inflection.Inflecting words" name="ordinal suffix of thirteen" status="failed" time="0.000169"><failure type="AssertionError" message="got 'rd'">
<![CDATA[
Failing step: Then the suffix is "th" ... failed in 0.000s
Location: features/inflection.feature:5
ASSERT FAILED: got 'rd']]>
</failure></testcase><testcase classname="inflection.Inflecting words" name="transliterate accents" status="error" time="0.000519"><error type="NameError" message="name 'unicodedat' is not defined">
<![CDATA[
Failing step: When I transliterate it ... error in 0.000s
Location: features/inflection.feature:14
Traceback (most recent call last):
  File "features/steps/inflection_steps.py", line 33, in step_transliterate
    context.result = inflection.transliterate(context.word)
                     ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/work/heldout15/projects/inflection/inflection/__init__.py", line 393, in transliterate
    normalized = unicodedat.normalize('NFKD', string)
                 ^^^^^^^^^^
NameError: name 'unicodedat' is not defined
]]>
</error></testcase></testsuite>
"#;
        assert_eq!(
            places(log),
            [
                place(
                    "features/inflection.feature",
                    5,
                    "Logic",
                    Some("ordinal suffix of thirteen")
                ),
                place("inflection/__init__.py", 393, "Import", Some("transliterate accents")),
            ]
        );
    }
}
