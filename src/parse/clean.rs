//! Line cleaning: what a CI log adds around a tool's own output — ANSI colours, carriage-return
//! redraws, CRLF, timestamp prefixes, very long lines — is taken off before any format looks at a
//! line. Lines that need nothing are borrowed, not copied.

use std::borrow::Cow;

/// Longest line the parser looks at; the rest of a longer line is ignored (minified output,
/// base64 blobs), so one line can never cost more than this much matching.
pub const MAX_LINE: usize = 8 * 1024;

/// Cleans one raw line (without its `\n`).
pub fn clean_line(raw: &str) -> Cow<'_, str> {
    clean_line_noting_escapes(raw, true).0
}

/// Cleans one raw line (without its `\n`); tells whether taking escape sequences off its first
/// [`MAX_LINE`] bytes put side by side two bytes that stand side by side in a needle
/// ([`super::needles::adjacent_in_a_needle`]): only then can the cleaned line hold a needle the
/// raw line does not (every other cleaning step only cuts text off).
/// `escapes_or_returns` false says the line holds neither an escape nor a `\r` (a search of the
/// whole buffer found none), so it is not searched for them again.
pub(crate) fn clean_line_noting_escapes(raw: &str, escapes_or_returns: bool) -> (Cow<'_, str>, bool) {
    // Most lines need nothing: no colours or redraws, no timestamp or CI marker (which start
    // with a digit, `[` or `#`), and not too long.
    if !escapes_or_returns
        && raw.len() <= MAX_LINE
        && !raw
            .as_bytes()
            .first()
            .is_some_and(|b| b.is_ascii_digit() || matches!(b, b'[' | b'#'))
    {
        return (Cow::Borrowed(raw), false);
    }
    let mut line = Cow::Borrowed(raw.strip_suffix('\r').unwrap_or(raw));
    if line.len() > MAX_LINE {
        let end = cut(&line);
        line = match line {
            Cow::Borrowed(s) => Cow::Borrowed(&s[..end]),
            Cow::Owned(mut s) => {
                s.truncate(end);
                Cow::Owned(s)
            }
        };
    }
    let mut joined = false;
    // One scan tells whether the line has colours or redraws at all (most lines have neither).
    if escapes_or_returns && memchr::memchr2(0x1b, b'\r', line.as_bytes()).is_some() {
        if memchr::memchr(0x1b, line.as_bytes()).is_some() {
            let (stripped, j) = strip_ansi(&line);
            line = Cow::Owned(stripped);
            joined = j;
        }
        // A progress bar redraws the line after each `\r`; what a person sees is the last redraw.
        if let Some(pos) = memchr::memrchr(b'\r', line.as_bytes()) {
            line = cut_front(line, pos + 1);
        }
    }
    let start = trace_header(&line)
        .map(|_| TRACE_HEADER_LEN)
        .or_else(|| teamcity_prefix(&line))
        .or_else(|| strip_timestamp(&line))
        .unwrap_or(0);
    let start = start + ci_marker(&line[start..]);
    if start == 0 {
        return (line, joined);
    }
    (cut_front(line, start), joined)
}

/// `line[start..]`, without a new string when the line is already one of its own.
pub(crate) fn cut_front(line: Cow<'_, str>, start: usize) -> Cow<'_, str> {
    match line {
        Cow::Borrowed(s) => Cow::Borrowed(&s[start..]),
        Cow::Owned(mut s) => {
            s.drain(..start);
            Cow::Owned(s)
        }
    }
}

/// Whether the raw line redrew itself (a `\r` before its end, not CRLF's): cleaned, it is its
/// last redraw, which starts where the terminal's line starts, not with the indentation or the
/// prefix the first text had.
pub(crate) fn redrawn(raw: &str) -> bool {
    let body = raw.strip_suffix('\r').unwrap_or(raw);
    memchr::memchr(b'\r', body.as_bytes()).is_some()
}

/// The length of a GitHub Actions log marker at the start of a line (`##[error]`, `##[group]`):
/// the runner writes annotations and groups this way, and what follows is the tool's own text.
fn ci_marker(line: &str) -> usize {
    let Some(rest) = line.strip_prefix("##[") else {
        return 0;
    };
    match memchr::memchr(b']', rest.as_bytes()) {
        Some(end) if rest[..end].bytes().all(|b| b.is_ascii_lowercase()) && end > 0 => end + 4,
        _ => 0,
    }
}

/// Where a line longer than [`MAX_LINE`] is cut: the last character boundary at or before it.
pub(crate) fn cut(line: &str) -> usize {
    let mut end = MAX_LINE.min(line.len());
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    end
}

/// What [`clean_line`] leaves out of a line longer than [`MAX_LINE`] (less the line's `\r`), as
/// it is: a structured document on one line (a jest report, a JUnit document from pytest) goes on
/// there.
pub(crate) fn rest_of_long_line(raw: &str) -> Option<&str> {
    let line = raw.strip_suffix('\r').unwrap_or(raw);
    (line.len() > MAX_LINE).then(|| &line[cut(line)..])
}

/// Removes the escape sequences of ECMA-48 and ECMA-35 as a terminal reads them — CSI (`ESC [`,
/// parameters, a final byte), the strings OSC, DCS, SOS, PM and APC (up to `BEL` or `ESC \`),
/// character-set designations and the other `ESC`-intermediates-final sequences (`ESC ( B`, which
/// xterm's `sgr0` and so mypy's colours print), the two-byte ones (`ESC =`, `ESC 7`) — and lone
/// escapes; tells whether a removal joined two bytes that are side by side in a needle. The
/// escapes are found by a vectorised search, not a byte at a time.
fn strip_ansi(s: &str) -> (String, bool) {
    let bytes = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut joined = false;
    let mut i = 0;
    let mut copied_from = 0;
    while let Some(k) = next_escape(&bytes[i..]) {
        i += k;
        push_joining(&mut out, &s[copied_from..i], &mut joined);
        i += 1;
        match bytes.get(i) {
            // CSI: parameter and intermediate bytes, then the final byte (a byte that can be
            // neither ends a malformed sequence and is kept, as a terminal prints it).
            Some(b'[') => {
                i += 1;
                i = skip_while_in(bytes, i, 0x20..=0x3f);
                if bytes.get(i).is_some_and(|b| (0x40..=0x7e).contains(b)) {
                    i += 1;
                }
            }
            // A control string: OSC (hyperlinks, titles), DCS, SOS, PM, APC.
            Some(b']' | b'P' | b'X' | b'^' | b'_') => {
                i += 1;
                while i < bytes.len() && bytes[i] != 0x07 && !(bytes[i] == 0x1b && bytes.get(i + 1) == Some(&b'\\')) {
                    i += 1;
                }
                i += if bytes.get(i) == Some(&0x07) { 1 } else { 2 };
            }
            // ECMA-35: intermediate bytes, then the final byte (`ESC ( B`, `ESC # 8`).
            Some(0x20..=0x2f) => {
                i = skip_while_in(bytes, i, 0x20..=0x2f);
                if bytes.get(i).is_some_and(|b| (0x30..=0x7e).contains(b)) {
                    i += 1;
                }
            }
            // The two-byte sequences (`ESC =`, `ESC 7`, `ESC M`).
            Some(0x30..=0x7e) => i += 1,
            // A lone escape: what follows it is text.
            Some(_) | None => {}
        }
        i = i.min(bytes.len());
        // Every sequence ends after an ASCII byte or at the end of the text: `i` is on a
        // character boundary.
        debug_assert!(s.is_char_boundary(i));
        copied_from = i;
    }
    push_joining(&mut out, &s[copied_from..], &mut joined);
    (out, joined)
}

/// Where the next escape is. Colours come close together (`ESC[32m.ESC[0m` for each dot of a
/// pytest progress line): the first bytes are looked at one by one, which costs less than
/// starting a vectorised search for a few bytes; a longer gap is searched.
fn next_escape(bytes: &[u8]) -> Option<usize> {
    const NEAR: usize = 16;
    match bytes.iter().take(NEAR).position(|&b| b == 0x1b) {
        Some(k) => Some(k),
        None if bytes.len() > NEAR => memchr::memchr(0x1b, &bytes[NEAR..]).map(|k| NEAR + k),
        None => None,
    }
}

/// The first index at or after `i` whose byte is not in `range`.
fn skip_while_in(bytes: &[u8], i: usize, range: std::ops::RangeInclusive<u8>) -> usize {
    i + bytes[i..].iter().take_while(|b| range.contains(b)).count()
}

/// Appends `piece` to the text cleaned so far, noting whether the byte it puts after the text's
/// last one makes a pair that some needle holds.
#[inline]
fn push_joining(out: &mut String, piece: &str, joined: &mut bool) {
    if let (Some(&a), Some(&b)) = (out.as_bytes().last(), piece.as_bytes().first()) {
        *joined |= super::needles::adjacent_in_a_needle(a, b);
    }
    out.push_str(piece);
}

/// The header GitLab Runner writes before each line of a job log when it timestamps the log
/// (`FF_TIMESTAMPS`, runner 17.0 and later): `2024-06-04T10:00:00.123456Z 01O ` is the time (always
/// six digits of microseconds), the stream's number in two hex digits (`00` the runner's own
/// lines, `01` the job's script, `0f` and up its services), `O` or `E` (stdout or stderr) and a
/// space, or `+` for a line that goes on with the last one of its stream: the runner ends a line
/// where a write ended in a `\r`, or without a newline past 8 KiB (a long JSON line comes in 32 KiB
/// lines).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TraceHeader {
    /// The stream's number and `O` or `E`.
    pub stream: [u8; 3],
    /// `+`: the line goes on with the last one of its stream.
    pub goes_on: bool,
}

/// The length of a [`TraceHeader`]; the tool's text starts after it.
pub(crate) const TRACE_HEADER_LEN: usize = 32;

/// The GitLab Runner header `line` starts with, if it starts with one.
pub(crate) fn trace_header(line: &str) -> Option<TraceHeader> {
    let b = line.as_bytes().get(..TRACE_HEADER_LEN)?;
    // The bytes after the time first: most lines with a timestamp have another (GitHub's seven
    // digits of the second put a digit where the `Z` would be).
    if &b[26..28] != b"Z " || !matches!(b[30], b'O' | b'E') || !matches!(b[31], b' ' | b'+') {
        return None;
    }
    let digits = |range: std::ops::Range<usize>| b[range].iter().all(u8::is_ascii_digit);
    let clock = digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19)
        && b[19] == b'.'
        && digits(20..26)
        && &b[26..28] == b"Z ";
    let stream = b[28..30].iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')) && matches!(b[30], b'O' | b'E');
    (clock && stream && matches!(b[31], b' ' | b'+')).then(|| TraceHeader {
        stream: [b[28], b[29], b[30]],
        goes_on: b[31] == b'+',
    })
}

/// Where the tool's text starts in a line of TeamCity's build log: the time, a status letter
/// (`i`, `W`, `E`, or a space), a colon, then either a space (the build's own messages) or tabs,
/// one per level of nesting, and the block the line belongs to: `[12:36:23] :\t [Step 1/1] `
/// before a build step's output, which follows as the tool printed it.
fn teamcity_prefix(line: &str) -> Option<usize> {
    let b = line.as_bytes();
    let clock = b.len() > 12
        && b[0] == b'['
        && [1, 2, 4, 5, 7, 8].iter().all(|&i| b[i].is_ascii_digit())
        && b[3] == b':'
        && b[6] == b':'
        && b[9] == b']'
        && (b[10] == b' ' || b[10].is_ascii_alphabetic())
        && b[11] == b':';
    if !clock {
        return None;
    }
    match b[12] {
        b' ' => Some(13),
        b'\t' => {
            let tabs = 12 + b[12..].iter().take_while(|&&c| c == b'\t').count();
            let block = line[tabs..].strip_prefix(" [")?;
            let end = block.find("] ")?;
            Some(line.len() - block.len() + end + 2)
        }
        _ => None,
    }
}

/// Where the tool's text starts after a CI timestamp prefix: GitHub Actions / GitLab
/// (`2024-01-02T03:04:05.1234567Z `), Jenkins timestamper (`[2024-01-02T03:04:05.123Z] ` in a
/// Pipeline, and its console's clock, `21:51:15  `, with two spaces) and clock prefixes with
/// seconds (`[03:04:05] `, `03:04:05 `).
pub(crate) fn strip_timestamp(line: &str) -> Option<usize> {
    let b = line.as_bytes();
    let digit = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    let (offset, bracket) = if b.first() == Some(&b'[') {
        (1, true)
    } else {
        (0, false)
    };
    let mut i = offset;
    let dated = digit(i) && digit(i + 1) && digit(i + 2) && digit(i + 3) && b.get(i + 4) == Some(&b'-');
    if dated {
        // ISO date and time.
        if !(digit(i + 5) && digit(i + 6) && b.get(i + 7) == Some(&b'-') && digit(i + 8) && digit(i + 9)) {
            return None;
        }
        if !matches!(b.get(i + 10), Some(b'T' | b' ')) {
            return None;
        }
        i += 11;
    }
    if !(digit(i) && digit(i + 1) && b.get(i + 2) == Some(&b':') && digit(i + 3) && digit(i + 4)) {
        return None;
    }
    i += 5;
    if !(b.get(i) == Some(&b':') && digit(i + 1) && digit(i + 2)) {
        return None;
    }
    i += 3;
    while i < b.len() && (b[i].is_ascii_digit() || matches!(b[i], b'.' | b',' | b'Z' | b'+' | b':')) {
        i += 1;
    }
    if bracket {
        if b.get(i) != Some(&b']') {
            return None;
        }
        i += 1;
    }
    if b.get(i) == Some(&b' ') {
        // Jenkins' Timestamper puts two spaces after a bare clock (`21:51:15  Started by`): both
        // come off, and what the tool indented keeps its indentation.
        let second = !dated && !bracket && b.get(i + 1) == Some(&b' ');
        Some(i + 1 + usize::from(second))
    } else if i == b.len() {
        Some(i)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::clean_line;

    #[test]
    fn colours_redraws_crlf_and_timestamps_come_off() {
        assert_eq!(
            clean_line("\x1b[31mFAILED\x1b[0m tests/a.py::t\r"),
            "FAILED tests/a.py::t"
        );
        assert_eq!(clean_line("Downloading 10%\rDownloading 100%"), "Downloading 100%");
        assert_eq!(
            clean_line("2026-11-22T04:01:02.1234567Z E   KeyError: 'x'"),
            "E   KeyError: 'x'"
        );
        assert_eq!(clean_line("[2026-11-22T04:01:02.123Z] ok"), "ok");
        assert_eq!(clean_line("[04:01:02] ok"), "ok");
        assert_eq!(clean_line("\x1b]8;;http://x\x07link\x1b]8;;\x07"), "link");
        assert_eq!(
            clean_line("2026-11-22T04:01:02.1234567Z ##[error]a.py:2:8: F401 `os` imported but unused"),
            "a.py:2:8: F401 `os` imported but unused"
        );
        assert_eq!(clean_line("##[group]Run pytest"), "Run pytest");
        assert_eq!(
            clean_line("\x1b[0Ksection_start:1700000000:test_job\r\x1b[0K$ pytest"),
            "$ pytest"
        );
    }

    /// Jenkins' Timestamper, as its documentation shows its console (`21:51:15  Started by user
    /// anonymous`): two spaces after the clock, both taken off; a tool's indentation kept.
    #[test]
    fn jenkins_timestamper_s_clock_and_its_two_spaces_come_off() {
        assert_cleaned(&[
            ("21:51:15  Started by user anonymous", "Started by user anonymous"),
            (
                "03:04:05  idna/codec.py:11:4: W0237: Parameter 'input' has been renamed",
                "idna/codec.py:11:4: W0237: Parameter 'input' has been renamed",
            ),
            ("03:04:08      at ./lib.rs:164:9", "    at ./lib.rs:164:9"),
            // A third space is the tool's; one space after a clock, or two after a date or a
            // bracket, take one off.
            ("03:04:05   indented", " indented"),
            ("03:04:05 ok", "ok"),
            ("[03:04:05]  indented", " indented"),
            ("2026-11-22T04:01:02.1234567Z  indented", " indented"),
        ]);
    }

    /// Each raw line and what cleaning leaves of it.
    fn assert_cleaned(cases: &[(&str, &str)]) {
        for (raw, cleaned) in cases {
            assert_eq!(clean_line(raw), *cleaned, "{raw:?}");
        }
    }

    #[test]
    fn every_kind_of_escape_sequence_comes_off() {
        assert_cleaned(&[
            // mypy's colours (terminfo's sgr0 for xterm: a character-set designation, then SGR).
            (
                "a.py:3: \x1b[1m\x1b[31merror:\x1b(B\x1b[m Name \x1b[1m\"x\"\x1b(B\x1b[m is not defined  \x1b(B\x1b[m\x1b[33m[name-defined]\x1b(B\x1b[m",
                "a.py:3: error: Name \"x\" is not defined  [name-defined]",
            ),
            // Two-byte sequences, other designations, control strings ended by ST or BEL.
            ("\x1b=\x1b7ok\x1b8\x1b>", "ok"),
            ("\x1b)0\x1b#8\x1b%Gok", "ok"),
            ("\x1bPtmux;x\x1b\\ok\x1b_kitty\x07!", "ok!"),
            // What follows a lone or malformed escape is text, as a terminal prints it.
            ("a\x1b\u{e9}b", "a\u{e9}b"),
            ("a\x1b[3\u{e9}b", "a\u{e9}b"),
            ("a\x1b", "a"),
        ]);
    }

    /// As TeamCity's downloaded build log shows a build step's output, its own messages and a
    /// nested block's.
    #[test]
    fn teamcity_prefixes_come_off() {
        assert_cleaned(&[
            ("[17:40:48] :\t [Step 1/2]  ---> 8e75cbc5b25c", " ---> 8e75cbc5b25c"),
            (
                "[04:01:25] :\t [Step 1/1]   File \"/w/a.py\", line 3, in f",
                "  File \"/w/a.py\", line 3, in f",
            ),
            ("[12:36:23]W: Step 1/1: Maven (18s)", "Step 1/1: Maven (18s)"),
            (
                "[14:36:30]i:\t\t\t\t [/usr/bin/git fetch origin +refs/tags/0.0.61:refs/tags/0.0.61] remote: done.",
                "remote: done.",
            ),
            ("[17:40:46] :\t [Step 1/2] ", ""),
            // Not TeamCity's: kept as they are, or as the clock prefix alone comes off.
            ("[17:40:46] :\t no block", ":\t no block"),
            ("[17:40:46] a.py:3: error", "a.py:3: error"),
        ]);
    }

    /// As GitLab Runner's own build logger writes a job log with `FF_TIMESTAMPS` (captured by
    /// running it: `tests/fixtures/logs/gitlab_trace_*`).
    #[test]
    fn gitlab_runner_s_line_headers_come_off() {
        assert_cleaned(&[
            (
                "2026-11-27T15:19:43.655396Z 01O tests/a.py:3: error",
                "tests/a.py:3: error",
            ),
            ("2026-11-27T15:19:43.756627Z 01E E   assert 1 == 2", "E   assert 1 == 2"),
            ("2026-11-27T15:19:43.756652Z 01O+def", "def"),
            ("2026-11-27T15:19:43.756652Z 0fO   indented", "  indented"),
            (
                "2026-11-27T15:19:43.654439Z 00O \x1b[0KRunning with gitlab-runner\x1b[0;m",
                "Running with gitlab-runner",
            ),
            ("2026-11-27T15:19:43.655396Z 01O abc\r", "abc"),
            ("2026-11-27T15:19:43.655396Z 01O ", ""),
            // The timestamp of another CI, then text that only looks like a stream.
            ("2026-11-27T15:19:43.6553961Z 01O x", "01O x"),
            ("2026-11-27T15:19:43.655396Z 01X x", "01X x"),
        ]);
        assert_eq!(
            super::trace_header("2026-11-27T15:19:43.756652Z 01O+def"),
            Some(super::TraceHeader {
                stream: *b"01O",
                goes_on: true
            })
        );
        assert_eq!(super::trace_header("2026-11-27T15:19:43.756652Z 01O"), None);
    }

    #[test]
    fn text_that_only_looks_like_a_timestamp_is_kept() {
        assert_eq!(clean_line("2026-11-22 is the date"), "2026-11-22 is the date");
        assert_eq!(clean_line("12:30 lunch"), "12:30 lunch");
        assert_eq!(clean_line("10:5: error"), "10:5: error");
    }
}
