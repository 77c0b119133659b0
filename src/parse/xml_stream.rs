//! An XML document cut into its markup constructs and text runs as its text arrives, in bounded
//! memory, so that each piece can be read by quick-xml on its own: a construct (a tag, comment,
//! CDATA section, processing instruction) is handed on once its end has arrived, at most
//! [`MAX_MARKUP`] bytes; text is handed on as it comes, less an unfinished reference (`&am`) or a
//! `\r` at the end of a piece, which wait for the next piece. Where the text was cut into pieces
//! changes nothing in what is handed on, but how it is split.

use quick_xml::parser::{ElementParser, Parser as _};

/// Longest markup construct read (a tag with its attributes, a comment); a longer one means the
/// text is not the document it looked like.
pub(crate) const MAX_MARKUP: usize = 1024 * 1024;
/// Longest reference (`&name;`, `&#x10FFFF;`) held back while its end has not arrived.
const MAX_REF: usize = 32;

/// What the stream hands on.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum XmlPiece<'a> {
    /// One whole markup construct, from its `<` to its `>`.
    Markup(&'a str),
    /// Text between constructs (possibly one run in several pieces).
    Text(&'a str),
    /// The text is not XML: a `<` that opens nothing, or a construct longer than [`MAX_MARKUP`].
    Invalid,
}

/// Whether the reader of the pieces wants more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    More,
    Stop,
}

#[derive(Debug, Clone, Copy)]
enum State {
    Text,
    /// After `<`, its kind not known yet.
    Open,
    /// A start or end tag, or a declaration such as `<!DOCTYPE ...>`: it ends at a `>` outside
    /// quotes.
    Tag(ElementParser),
    /// A construct that ends with `end`, which may not begin before `min` bytes into it
    /// (`<!-->` does not close the comment it opens).
    Until {
        end: &'static str,
        min: usize,
    },
}

pub(crate) struct XmlStream {
    state: State,
    /// The construct being read, from its `<`; or, in text, a held-back reference or `\r`.
    pending: String,
    stopped: bool,
    /// Bytes of the last piece fed that come after the construct on which the reader stopped:
    /// the text after a document's end, which is not the document's.
    unread: usize,
}

impl Default for XmlStream {
    fn default() -> Self {
        XmlStream {
            state: State::Text,
            pending: String::new(),
            stopped: false,
            unread: 0,
        }
    }
}

impl XmlStream {
    /// Feeds the next piece of the document's text. Returns [`Flow::Stop`] once `out` did, or
    /// the text was not XML; further text is then ignored.
    pub fn feed(&mut self, text: &str, out: &mut impl FnMut(XmlPiece<'_>) -> Flow) -> Flow {
        if self.stopped {
            return Flow::Stop;
        }
        let flow = self.read(text, out);
        if flow == Flow::Stop {
            self.stopped = true;
            self.pending = String::new();
        }
        flow
    }

    /// How many bytes at the end of the last piece fed were not read because the reader stopped
    /// (after the construct that ended the document).
    pub fn unread(&self) -> usize {
        self.unread
    }

    /// The bytes held for the construct being read (for tests of the bound).
    #[cfg(test)]
    fn held(&self) -> usize {
        self.pending.capacity()
    }

    fn read(&mut self, mut rest: &str, out: &mut impl FnMut(XmlPiece<'_>) -> Flow) -> Flow {
        while !rest.is_empty() {
            match self.state {
                State::Text if !self.pending.is_empty() => {
                    if self.pending == "\r" {
                        // A held-back `\r`: a `\n` after it makes one line end, as in one piece.
                        self.pending.clear();
                        if !rest.starts_with('\n') && out(XmlPiece::Text("\r")) == Flow::Stop {
                            return Flow::Stop;
                        }
                        continue;
                    }
                    // A held-back reference: complete it with the next text, up to its `;`.
                    let bytes = rest.as_bytes();
                    let room = MAX_REF.saturating_sub(self.pending.len()).min(bytes.len());
                    let stop = memchr::memchr2(b';', b'<', &bytes[..room]);
                    let take = match stop {
                        Some(i) if bytes[i] == b';' => i + 1,
                        Some(i) => i,
                        None => room,
                    };
                    let take = floor_boundary(rest, take);
                    self.pending.push_str(&rest[..take]);
                    rest = &rest[take..];
                    if stop.is_none() && rest.is_empty() && self.pending.len() < MAX_REF {
                        return Flow::More;
                    }
                    let held = std::mem::take(&mut self.pending);
                    if out(XmlPiece::Text(&held)) == Flow::Stop {
                        return Flow::Stop;
                    }
                }
                State::Text => {
                    let bytes = rest.as_bytes();
                    let lt = memchr::memchr(b'<', bytes);
                    let mut run = lt.unwrap_or(bytes.len());
                    if lt.is_none() {
                        // The run may go on in the next piece: hold back what could change.
                        let semi = memchr::memrchr(b';', bytes).map_or(0, |i| i + 1);
                        match memchr::memrchr(b'&', &bytes[semi..]) {
                            Some(amp) if bytes.len() - (semi + amp) < MAX_REF => run = semi + amp,
                            _ if bytes.last() == Some(&b'\r') => run = bytes.len() - 1,
                            _ => {}
                        }
                        self.pending.push_str(&rest[run..]);
                    }
                    if run > 0 && out(XmlPiece::Text(&rest[..run])) == Flow::Stop {
                        return Flow::Stop;
                    }
                    match lt {
                        Some(lt) => {
                            self.pending.push('<');
                            self.state = State::Open;
                            rest = &rest[lt + 1..];
                        }
                        None => rest = "",
                    }
                }
                State::Open => {
                    // Take one character at a time until the construct's kind is known.
                    let ch = rest.chars().next().expect("text is not empty");
                    self.pending.push(ch);
                    rest = &rest[ch.len_utf8()..];
                    let after = &self.pending[1..];
                    self.state = match classify(after) {
                        None => continue,
                        Some(Err(())) => {
                            out(XmlPiece::Invalid);
                            return Flow::Stop;
                        }
                        Some(Ok(State::Tag(mut parser))) => {
                            // What was taken to tell the kind is inside the tag, a `>` aside.
                            if let Some(end) = parser.feed(after.as_bytes()) {
                                debug_assert_eq!(end + 1, after.len());
                                let markup = std::mem::take(&mut self.pending);
                                self.state = State::Text;
                                if out(XmlPiece::Markup(&markup)) == Flow::Stop {
                                    self.unread = rest.len();
                                    return Flow::Stop;
                                }
                                continue;
                            }
                            State::Tag(parser)
                        }
                        Some(Ok(state)) => state,
                    };
                }
                State::Tag(mut parser) => {
                    let found = parser.feed(rest.as_bytes());
                    self.state = State::Tag(parser);
                    if self.close_or_hold(&mut rest, found, out) == Flow::Stop {
                        return Flow::Stop;
                    }
                }
                State::Until { end, min } => {
                    let last = *end.as_bytes().last().expect("a terminator");
                    let bytes = rest.as_bytes();
                    let found = memchr::memchr_iter(last, bytes).find(|&i| {
                        // The terminator may begin in what is held already.
                        let start = self.pending.len() + i + 1;
                        start >= min + end.len() && {
                            let before = &end.as_bytes()[..end.len() - 1];
                            let k = before.len();
                            let tail_in_rest = i.min(k);
                            let head_len = k - tail_in_rest;
                            self.pending.as_bytes().ends_with(&before[..head_len])
                                && bytes[i - tail_in_rest..i] == before[head_len..]
                        }
                    });
                    if self.close_or_hold(&mut rest, found, out) == Flow::Stop {
                        return Flow::Stop;
                    }
                }
            }
        }
        Flow::More
    }

    /// Keeps the unfinished construct's text; `false` (after telling `out`) when it is too long.
    /// The construct being held ends at `rest[end]`: hands it out whole (or `Invalid` when it
    /// is longer than [`MAX_MARKUP`]) and goes back to text after it.
    /// The construct in progress ends at `found` of `rest` (closed, and `rest` moves past it), or
    /// goes on past `rest` (all of it held for the next chunk, and `rest` is emptied).
    fn close_or_hold(
        &mut self,
        rest: &mut &str,
        found: Option<usize>,
        out: &mut impl FnMut(XmlPiece<'_>) -> Flow,
    ) -> Flow {
        match found {
            Some(end) => {
                if self.close_markup(rest, end, out) == Flow::Stop {
                    self.unread = rest.len();
                    return Flow::Stop;
                }
            }
            None => {
                if !self.hold(rest, out) {
                    return Flow::Stop;
                }
                *rest = "";
            }
        }
        Flow::More
    }

    fn close_markup(&mut self, rest: &mut &str, end: usize, out: &mut impl FnMut(XmlPiece<'_>) -> Flow) -> Flow {
        if self.pending.len() + end + 1 > MAX_MARKUP {
            out(XmlPiece::Invalid);
            return Flow::Stop;
        }
        self.pending.push_str(&rest[..=end]);
        *rest = &rest[end + 1..];
        let markup = std::mem::take(&mut self.pending);
        self.state = State::Text;
        out(XmlPiece::Markup(&markup))
    }

    fn hold(&mut self, rest: &str, out: &mut impl FnMut(XmlPiece<'_>) -> Flow) -> bool {
        if self.pending.len() + rest.len() > MAX_MARKUP {
            out(XmlPiece::Invalid);
            return false;
        }
        self.pending.push_str(rest);
        true
    }
}

/// The kind of construct whose text after `<` starts with `after`: `None` while that is not
/// known yet, `Err` when `<` opens nothing.
fn classify(after: &str) -> Option<Result<State, ()>> {
    let first = after.chars().next()?;
    Some(Ok(match first {
        '/' => State::Tag(ElementParser::default()),
        '?' => State::Until { end: "?>", min: 2 },
        '!' => {
            for (open, end) in [("!--", "-->"), ("![CDATA[", "]]>")] {
                if after.starts_with(open) {
                    return Some(Ok(State::Until {
                        end,
                        min: open.len() + 1,
                    }));
                }
                if open.starts_with(after) {
                    return None;
                }
            }
            State::Tag(ElementParser::default())
        }
        c if c.is_alphabetic() || c == '_' || c == ':' => State::Tag(ElementParser::default()),
        _ => return Some(Err(())),
    }))
}

/// The largest character boundary of `s` at or before `i`.
fn floor_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pieces, with consecutive text joined and its line ends as XML reads them (how text is
    /// split into pieces does not matter).
    fn run(pieces: &[&str]) -> Vec<String> {
        let mut stream = XmlStream::default();
        let mut got: Vec<String> = Vec::new();
        let mut text = String::new();
        for p in pieces {
            stream.feed(p, &mut |piece| {
                match piece {
                    XmlPiece::Text(t) => text.push_str(t),
                    other => {
                        if !text.is_empty() {
                            got.push(format!("Text({:?})", text.replace("\r\n", "\n")));
                            text.clear();
                        }
                        got.push(format!("{other:?}"));
                    }
                }
                Flow::More
            });
        }
        if !text.is_empty() {
            got.push(format!("Text({:?})", text.replace("\r\n", "\n")));
        }
        got
    }

    fn same_in_any_cut(text: &str) -> Vec<String> {
        let whole = run(&[text]);
        for a in (0..=text.len()).filter(|&c| text.is_char_boundary(c)) {
            assert_eq!(run(&[&text[..a], &text[a..]]), whole, "cut at {a} of {text:?}");
            for b in (a..=text.len()).filter(|&c| text.is_char_boundary(c)).step_by(3) {
                assert_eq!(
                    run(&[&text[..a], &text[a..b], &text[b..]]),
                    whole,
                    "cut at {a} and {b} of {text:?}"
                );
            }
        }
        whole
    }

    #[test]
    fn a_document_is_cut_into_constructs_and_text() {
        let got = same_in_any_cut(
            "<?xml version=\"1.0\"?>\n<testsuite name=\"a>b\"><!-- x -- y --><testcase/>\
             <failure message='1 &lt; 2'>E  &amp; é\r\n<![CDATA[a ]] < b]]></failure></testsuite>",
        );
        assert_eq!(
            got,
            vec![
                r#"Markup("<?xml version=\"1.0\"?>")"#,
                r#"Text("\n")"#,
                r#"Markup("<testsuite name=\"a>b\">")"#,
                r#"Markup("<!-- x -- y -->")"#,
                r#"Markup("<testcase/>")"#,
                r#"Markup("<failure message='1 &lt; 2'>")"#,
                r#"Text("E  &amp; é\n")"#,
                r#"Markup("<![CDATA[a ]] < b]]>")"#,
                r#"Markup("</failure>")"#,
                r#"Markup("</testsuite>")"#,
            ]
        );
    }

    #[test]
    fn a_lone_angle_bracket_is_not_xml() {
        assert_eq!(
            same_in_any_cut("<testsuite>\nif a < b:"),
            vec![r#"Markup("<testsuite>")"#, r#"Text("\nif a ")"#, "Invalid",]
        );
    }

    #[test]
    fn held_back_text_never_splits_a_reference_or_a_line_end() {
        let mut pieces = Vec::new();
        let mut stream = XmlStream::default();
        for p in ["a &am", "p; b\r", "\nc &#x4", "1;\r", "d"] {
            stream.feed(p, &mut |piece| {
                pieces.push(format!("{piece:?}"));
                Flow::More
            });
        }
        assert_eq!(
            pieces,
            vec![
                r#"Text("a ")"#,
                r#"Text("&amp;")"#,
                r#"Text(" b")"#,
                r#"Text("\nc ")"#,
                r#"Text("&#x41;")"#,
                r#"Text("\r")"#,
                r#"Text("d")"#,
            ]
        );
    }

    #[test]
    fn an_endless_construct_is_bounded() {
        let mut stream = XmlStream::default();
        let mut invalid = false;
        stream.feed("<testcase name=\"", &mut |_| Flow::More);
        let line = "x".repeat(8 * 1024);
        for _ in 0..200 {
            let flow = stream.feed(&line, &mut |p| {
                invalid |= p == XmlPiece::Invalid;
                Flow::More
            });
            assert!(stream.held() <= 2 * MAX_MARKUP);
            if flow == Flow::Stop {
                break;
            }
        }
        assert!(invalid);
    }
}
