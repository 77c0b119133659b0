//! A JSON document read as its text arrives, in bounded memory: a small state machine follows the
//! document's structure (and checks it is JSON) and cuts out the values the caller asks for — each
//! element of a top-level array, each test result of a jest report — one at a time, each at most
//! [`MAX_ELEMENT`] bytes. Only the cut-out values are kept, so memory does not grow with the
//! document; serde_json reads each value on its own.

/// Largest value cut out of a document; a larger one is skipped.
pub(crate) const MAX_ELEMENT: usize = 1024 * 1024;
/// Deepest nesting followed (serde_json's own recursion limit).
const MAX_DEPTH: usize = 128;
/// Longest object key remembered; the keys that matter are short.
const MAX_KEY: usize = 32;

/// Which values of the document the caller wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// Each element of a top-level array (ruff, eslint and pylint JSON).
    Array,
    /// jest's `--json` report: each `testResults[].assertionResults[]` item, and each test
    /// result's `status` and `message`.
    Jest,
    /// A report object whose findings are in a list under a known key: SARIF
    /// (`runs[].results[]`), reviewdog's rdjson (`diagnostics[]`), pylint's `json2`
    /// (`messages[]`), eslint's `json-with-metadata` (`results[]`). Each finding is cut out as an
    /// [`Tag::Item`]; `go vet -json`'s (`<package>.<analyzer>[]`) as a [`Tag::VetFinding`].
    Report,
}

/// A container whose children the shape looks at, or what a container is to the shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// The top-level array of [`Shape::Array`].
    Items,
    /// The top-level object of a jest report.
    Report,
    /// `testResults`.
    Results,
    /// One test result (a test file).
    Suite,
    /// `assertionResults`.
    Assertions,
    /// Another object in a report: `go vet -json`'s package (`{"example.com/m": {"printf": [
    /// ... ]}}`), an object of analyzers, each a list of findings.
    Package,
    /// One analyzer's list of `go vet` findings.
    VetFindings,
    /// Inside a value being cut out.
    Inner,
    /// Inside a value nobody wants.
    Skip,
}

/// What a cut-out value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tag {
    Item,
    Assertion,
    SuiteStatus,
    SuiteMessage,
    /// A `go vet -json` finding: `{"posn": "/abs/a.go:9:2", "message": ...}`.
    VetFinding,
}

/// What the stream hands to its caller.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Piece<'a> {
    /// A complete value the shape asks for, as it is written in the document.
    Value(Tag, &'a str),
    /// A value the shape asks for that was longer than [`MAX_ELEMENT`]: skipped.
    Oversize(Tag),
    /// A container the shape looks into has closed.
    End(Role),
}

/// Where the document stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    Open,
    /// The top-level value is complete; what follows it is not read.
    Done,
    /// The text stopped being JSON: it was not (or no longer is) the document it looked like.
    Failed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// After `,` in an array, after `:` in an object.
    Value,
    /// After `[`.
    ValueOrClose,
    /// After `,` in an object.
    Key,
    /// After `{`.
    KeyOrClose,
    Colon,
    CommaOrClose,
}

#[derive(Debug, Clone, Copy)]
struct Frame {
    object: bool,
    role: Role,
    expect: Expect,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lex {
    /// Between tokens.
    Between,
    /// In a string (a key or a value); `escape` after a backslash.
    Str { key: bool, escape: bool },
    /// In a number or `true`/`false`/`null`.
    Scalar,
}

/// The value being cut out.
struct Capture {
    tag: Tag,
    /// The nesting depth the value sits at: it ends when a value completes at this depth.
    depth: usize,
    text: String,
    oversize: bool,
}

/// A number or literal being checked: the first bytes of a literal, or that it is a number.
#[derive(Default)]
struct ScalarCheck {
    literal: [u8; 5],
    len: usize,
    number: bool,
    bad: bool,
}

impl ScalarCheck {
    fn start(first: u8) -> Self {
        let mut check = ScalarCheck {
            number: first == b'-' || first.is_ascii_digit(),
            ..ScalarCheck::default()
        };
        check.push(first);
        check
    }

    fn push(&mut self, b: u8) {
        if self.number {
            self.bad |= !(b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'));
        } else if self.len < self.literal.len() {
            self.literal[self.len] = b;
            self.len += 1;
        } else {
            self.bad = true;
        }
    }

    fn valid(&self) -> bool {
        !self.bad && (self.number || matches!(&self.literal[..self.len], b"true" | b"false" | b"null"))
    }
}

/// The stream: feed it the document's text in pieces (a `\n` between lines), in order.
pub(crate) struct JsonStream {
    shape: Shape,
    stack: Vec<Frame>,
    lex: Lex,
    /// The last object key read at a depth the shape looks at.
    key: String,
    key_long: bool,
    scalar: ScalarCheck,
    capture: Option<Capture>,
    started: bool,
    status: Status,
    /// Bytes of the last piece fed after the end of the document (another tool's output).
    unread: usize,
}

/// What to do with a value that starts.
#[derive(Clone, Copy)]
enum Action {
    Descend(Role),
    Capture(Tag),
    Skip,
}

impl JsonStream {
    pub fn new(shape: Shape) -> Self {
        JsonStream {
            shape,
            stack: Vec::new(),
            lex: Lex::Between,
            key: String::new(),
            key_long: false,
            scalar: ScalarCheck::default(),
            capture: None,
            started: false,
            status: Status::Open,
            unread: 0,
        }
    }

    /// The bytes held for the value being cut out (for tests of the bound).
    #[cfg(test)]
    fn held(&self) -> usize {
        self.capture.as_ref().map_or(0, |c| c.text.capacity())
    }

    /// What the shape wants of a value starting now (`open` is its first byte).
    fn action(&self, open: u8) -> Action {
        let parent = self.stack.last().map(|f| f.role);
        let key = if self.key_long { "" } else { self.key.as_str() };
        let want = match (self.shape, parent) {
            (_, Some(Role::Inner)) => return Action::Descend(Role::Inner),
            (_, Some(Role::Skip)) => return Action::Skip,
            (Shape::Array, None) => Action::Descend(Role::Items),
            (Shape::Array, Some(Role::Items)) => Action::Capture(Tag::Item),
            (Shape::Jest, None) => Action::Descend(Role::Report),
            (Shape::Jest, Some(Role::Report)) if key == "testResults" => Action::Descend(Role::Results),
            (Shape::Jest, Some(Role::Results)) => Action::Descend(Role::Suite),
            (Shape::Jest, Some(Role::Suite)) => match key {
                "assertionResults" => Action::Descend(Role::Assertions),
                "status" => Action::Capture(Tag::SuiteStatus),
                "message" => Action::Capture(Tag::SuiteMessage),
                _ => Action::Skip,
            },
            (Shape::Jest, Some(Role::Assertions)) => Action::Capture(Tag::Assertion),
            (Shape::Report, None) => Action::Descend(Role::Report),
            (Shape::Report, Some(Role::Report)) => match key {
                // eslint's `json-with-metadata` keeps its file list under `results`; pyright's
                // `--outputjson` its findings under `generalDiagnostics`, golangci-lint's `json` under
                // `Issues`; mocha's `--reporter json` its tests under `tests` (before a cut log's
                // end) and the failed ones again under `failures`.
                "diagnostics" | "messages" | "results" | "generalDiagnostics" | "Issues" | "tests" | "failures" => {
                    Action::Descend(Role::Items)
                }
                "runs" => Action::Descend(Role::Results),
                _ => Action::Skip,
            },
            (Shape::Report, Some(Role::Package)) => Action::Descend(Role::VetFindings),
            (Shape::Report, Some(Role::VetFindings)) => Action::Capture(Tag::VetFinding),
            // A SARIF run, and its results.
            (Shape::Report, Some(Role::Results)) => Action::Descend(Role::Suite),
            (Shape::Report, Some(Role::Suite)) if key == "results" => Action::Descend(Role::Items),
            (Shape::Report, Some(Role::Items)) => Action::Capture(Tag::Item),
            _ => Action::Skip,
        };
        // Any other object in a report, or one under a key a report keeps its list under: `go
        // vet -json` keys its findings by package (any import path), then analyzer; only `go
        // vet`'s findings are read from it.
        let want = match (want, parent) {
            (Action::Skip | Action::Descend(Role::Items), Some(Role::Report))
                if self.shape == Shape::Report && open == b'{' =>
            {
                Action::Descend(Role::Package)
            }
            _ => want,
        };
        // A container the shape descends into must be the kind it expects.
        match want {
            Action::Descend(role) => {
                let object = matches!(role, Role::Report | Role::Suite | Role::Package);
                if (object && open == b'{') || (!object && open == b'[') {
                    want
                } else {
                    Action::Skip
                }
            }
            other => other,
        }
    }

    /// Feeds the next piece of the document's text. `out` gets each value the shape asks for, as
    /// soon as it is complete. Returns where the document stands; once it is not
    /// [`Status::Open`], further text is ignored.
    pub fn feed(&mut self, text: &str, out: &mut impl FnMut(Piece<'_>)) -> Status {
        if self.status != Status::Open {
            return self.status;
        }
        let bytes = text.as_bytes();
        // Where the text of the value being cut out starts in this piece.
        let mut copy_from = match &self.capture {
            Some(c) if !c.oversize => Some(0),
            _ => None,
        };
        let mut i = 0;
        while i < bytes.len() && self.status == Status::Open {
            match self.lex {
                Lex::Str { key, escape } => {
                    if escape {
                        if key {
                            self.key_long = true;
                        }
                        self.lex = Lex::Str { key, escape: false };
                        // The escaped character (serde_json tells a bad escape later).
                        i += 1;
                        while !text.is_char_boundary(i) {
                            i += 1;
                        }
                        continue;
                    }
                    let Some(off) = memchr::memchr3(b'"', b'\\', b'\n', &bytes[i..]) else {
                        if key {
                            self.push_key(&text[i..]);
                        }
                        i = bytes.len();
                        continue;
                    };
                    let j = i + off;
                    if key {
                        self.push_key(&text[i..j]);
                    }
                    match bytes[j] {
                        b'\\' => self.lex = Lex::Str { key, escape: true },
                        b'"' => {
                            self.lex = Lex::Between;
                            if key {
                                self.set_expect(Expect::Colon);
                            } else {
                                self.value_done(text, j + 1, &mut copy_from, out);
                            }
                        }
                        // A string does not go on to the next line in JSON.
                        _ => return self.fail(),
                    }
                    i = j + 1;
                }
                Lex::Scalar => {
                    let b = bytes[i];
                    if b.is_ascii_alphanumeric() || matches!(b, b'.' | b'+' | b'-') {
                        self.scalar.push(b);
                        i += 1;
                        continue;
                    }
                    if !self.scalar.valid() {
                        return self.fail();
                    }
                    self.lex = Lex::Between;
                    // The byte that ended the scalar is read again, between tokens.
                    self.value_done(text, i, &mut copy_from, out);
                }
                Lex::Between => {
                    let b = bytes[i];
                    if matches!(b, b' ' | b'\t' | b'\r' | b'\n') {
                        i += 1;
                        continue;
                    }
                    let expect = self.stack.last().map(|f| f.expect);
                    let wants_value = matches!(expect, Some(Expect::Value | Expect::ValueOrClose))
                        || (expect.is_none() && !self.started);
                    match b {
                        b'{' | b'[' | b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n' if wants_value => {
                            self.started = true;
                            if !self.start_value(b, i, &mut copy_from) {
                                return self.fail();
                            }
                        }
                        b'"' if matches!(expect, Some(Expect::Key | Expect::KeyOrClose)) => {
                            self.key.clear();
                            self.key_long = false;
                            self.lex = Lex::Str {
                                key: true,
                                escape: false,
                            };
                        }
                        b'}' | b']' => {
                            let object = b == b'}';
                            let closes = match self.stack.last() {
                                Some(f) if f.object == object => {
                                    matches!(f.expect, Expect::CommaOrClose)
                                        || (object && f.expect == Expect::KeyOrClose)
                                        || (!object && f.expect == Expect::ValueOrClose)
                                }
                                _ => false,
                            };
                            if !closes {
                                return self.fail();
                            }
                            let frame = self.stack.pop().expect("a frame to close");
                            if !matches!(frame.role, Role::Inner | Role::Skip) {
                                out(Piece::End(frame.role));
                            }
                            self.value_done(text, i + 1, &mut copy_from, out);
                        }
                        b',' if expect == Some(Expect::CommaOrClose) => {
                            let object = self.stack.last().is_some_and(|f| f.object);
                            self.set_expect(if object { Expect::Key } else { Expect::Value });
                        }
                        b':' if expect == Some(Expect::Colon) => self.set_expect(Expect::Value),
                        _ => return self.fail(),
                    }
                    i += 1;
                }
            }
        }
        if self.status == Status::Done {
            self.unread = bytes.len() - i;
        }
        // The rest of this piece belongs to the value being cut out.
        if let Some(from) = copy_from
            && self.status == Status::Open
        {
            self.copy(&text[from..]);
        }
        self.status
    }

    /// How many bytes at the end of the piece that completed the document come after it.
    pub fn unread(&self) -> usize {
        self.unread
    }

    fn fail(&mut self) -> Status {
        self.status = Status::Failed;
        self.capture = None;
        self.stack = Vec::new();
        self.status
    }

    fn set_expect(&mut self, expect: Expect) {
        if let Some(f) = self.stack.last_mut() {
            f.expect = expect;
        }
    }

    fn push_key(&mut self, s: &str) {
        if self.key.len() + s.len() > MAX_KEY {
            self.key_long = true;
        } else if !self.key_long {
            self.key.push_str(s);
        }
    }

    /// Starts the value whose first byte is `b` at `i`; `false` when nesting is too deep.
    fn start_value(&mut self, b: u8, i: usize, copy_from: &mut Option<usize>) -> bool {
        let role = match self.action(b) {
            Action::Descend(role) => role,
            Action::Capture(tag) => {
                self.capture = Some(Capture {
                    tag,
                    depth: self.stack.len(),
                    text: String::new(),
                    oversize: false,
                });
                *copy_from = Some(i);
                Role::Inner
            }
            Action::Skip => Role::Skip,
        };
        match b {
            b'{' | b'[' => {
                if self.stack.len() >= MAX_DEPTH {
                    return false;
                }
                let object = b == b'{';
                self.stack.push(Frame {
                    object,
                    role,
                    expect: if object {
                        Expect::KeyOrClose
                    } else {
                        Expect::ValueOrClose
                    },
                });
            }
            b'"' => {
                self.lex = Lex::Str {
                    key: false,
                    escape: false,
                }
            }
            _ => {
                self.scalar = ScalarCheck::start(b);
                self.lex = Lex::Scalar;
            }
        }
        true
    }

    /// A value has ended just before `end` in `text`.
    fn value_done(&mut self, text: &str, end: usize, copy_from: &mut Option<usize>, out: &mut impl FnMut(Piece<'_>)) {
        if self.capture.as_ref().is_some_and(|c| c.depth == self.stack.len()) {
            if let Some(from) = copy_from.take() {
                self.copy(&text[from..end]);
            }
            let capture = self.capture.take().expect("a capture");
            if capture.oversize {
                out(Piece::Oversize(capture.tag));
            } else {
                out(Piece::Value(capture.tag, &capture.text));
            }
        }
        if self.stack.is_empty() {
            self.status = Status::Done;
        } else {
            self.set_expect(Expect::CommaOrClose);
        }
    }

    /// Adds text to the value being cut out, or gives the value up when it grows too long.
    fn copy(&mut self, s: &str) {
        let Some(capture) = self.capture.as_mut() else {
            return;
        };
        if capture.oversize {
            return;
        }
        if capture.text.len() + s.len() > MAX_ELEMENT {
            capture.oversize = true;
            capture.text = String::new();
        } else {
            capture.text.push_str(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(shape: Shape, pieces: &[&str]) -> (Vec<String>, Status) {
        let mut stream = JsonStream::new(shape);
        let mut got = Vec::new();
        let mut status = Status::Open;
        for p in pieces {
            status = stream.feed(p, &mut |piece| got.push(format!("{piece:?}")));
        }
        (got, status)
    }

    /// Every way of cutting `text` in two gives the same pieces.
    fn same_in_any_cut(shape: Shape, text: &str) -> (Vec<String>, Status) {
        let whole = run(shape, &[text]);
        for cut in (0..=text.len()).filter(|&c| text.is_char_boundary(c)) {
            assert_eq!(
                run(shape, &[&text[..cut], &text[cut..]]),
                whole,
                "cut at {cut} of {text:?}"
            );
        }
        whole
    }

    #[test]
    fn an_array_is_cut_into_its_elements() {
        let (got, status) = same_in_any_cut(
            Shape::Array,
            "[\n  {\"a\": [1, {\"b\": \"x]}\\\"\"}]},\n  2.5e3, \"s\", true, null, []\n]\ntrailing",
        );
        assert_eq!(status, Status::Done);
        assert_eq!(
            got,
            vec![
                r#"Value(Item, "{\"a\": [1, {\"b\": \"x]}\\\"\"}]}")"#,
                r#"Value(Item, "2.5e3")"#,
                r#"Value(Item, "\"s\"")"#,
                r#"Value(Item, "true")"#,
                r#"Value(Item, "null")"#,
                r#"Value(Item, "[]")"#,
                "End(Items)",
            ]
        );
    }

    #[test]
    fn text_that_is_not_json_fails_the_document() {
        for text in [
            "[\nFAILED tests/test_x.py::test_a - assert 1 == 2\n",
            "[\n  {\"a\": 1},\n  {\"b\": \n= 1 failed in 0.1s =\n",
            "[\n\"an open string\n\"",
            "[1 2]",
            "[1,,2]",
            "[{\"a\" 1}]",
            "[tru]",
            "[nulls]",
            "[1-x]",
            "[}",
            "[{]",
        ] {
            let (_, status) = same_in_any_cut(Shape::Array, text);
            assert_eq!(status, Status::Failed, "{text:?}");
        }
    }

    #[test]
    fn jest_results_are_cut_into_assertions_and_suite_fields() {
        let text = r#"{"numFailedTests":1,"testResults":[{"assertionResults":[{"fullName":"a","status":"passed"},{"fullName":"b","status":"failed"}],"message":"boom","name":"x.test.js","status":"failed"},{"assertionResults":[],"status":"passed"}],"wasInterrupted":false}"#;
        let (got, status) = same_in_any_cut(Shape::Jest, text);
        assert_eq!(status, Status::Done);
        assert_eq!(
            got,
            vec![
                r#"Value(Assertion, "{\"fullName\":\"a\",\"status\":\"passed\"}")"#,
                r#"Value(Assertion, "{\"fullName\":\"b\",\"status\":\"failed\"}")"#,
                "End(Assertions)",
                r#"Value(SuiteMessage, "\"boom\"")"#,
                r#"Value(SuiteStatus, "\"failed\"")"#,
                "End(Suite)",
                "End(Assertions)",
                r#"Value(SuiteStatus, "\"passed\"")"#,
                "End(Suite)",
                "End(Results)",
                "End(Report)",
            ]
        );
    }

    #[test]
    fn an_oversize_element_is_skipped_and_memory_stays_bounded() {
        let mut stream = JsonStream::new(Shape::Array);
        let mut got = Vec::new();
        let big = format!("\"{}\"", "x".repeat(64 * 1024));
        stream.feed("[{\"a\": [", &mut |p| got.push(format!("{p:?}")));
        for _ in 0..40 {
            stream.feed(&big, &mut |p| got.push(format!("{p:?}")));
            stream.feed(",\n", &mut |p| got.push(format!("{p:?}")));
            assert!(stream.held() <= 2 * MAX_ELEMENT);
        }
        let status = stream.feed("1]}, 7]", &mut |p| got.push(format!("{p:?}")));
        assert_eq!(status, Status::Done);
        assert_eq!(got, vec!["Oversize(Item)", r#"Value(Item, "7")"#, "End(Items)"]);
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = "[".repeat(MAX_DEPTH + 1);
        assert_eq!(run(Shape::Array, &[&deep]).1, Status::Failed);
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert_eq!(run(Shape::Array, &[&ok]).1, Status::Done);
    }
}
