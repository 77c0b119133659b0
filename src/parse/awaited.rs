//! A header whose place comes on one of the next few lines — esbuild's `✘ [ERROR] message`, ty's
//! and deno's `error[rule]: message` before their `-->` line, Rollup's `[!] Error` before its
//! `file (L:C)` — held by its reader until the place comes or the header has waited too long:
//! a header whose place never comes (another tool's output after it) cannot place a line far
//! below it.

/// A header read, waiting at most `REACH` lines for its place.
pub(crate) struct Awaited<H, const REACH: u16> {
    header: Option<H>,
    /// Lines read since the header that were not its place.
    missed: u16,
}

impl<H, const REACH: u16> Default for Awaited<H, REACH> {
    fn default() -> Self {
        Awaited {
            header: None,
            missed: 0,
        }
    }
}

impl<H, const REACH: u16> Awaited<H, REACH> {
    /// A header read: it waits for its place from the next line.
    pub(crate) fn start(&mut self, header: H) {
        self.header = Some(header);
        self.missed = 0;
    }

    pub(crate) fn is_waiting(&self) -> bool {
        self.header.is_some()
    }

    /// The header waiting, to read a line after it with.
    pub(crate) fn get_mut(&mut self) -> Option<&mut H> {
        self.header.as_mut()
    }

    /// The header, when the line is its place (or something else ends it).
    pub(crate) fn take(&mut self) -> Option<H> {
        self.header.take()
    }

    /// Something else ended the wait (another header).
    pub(crate) fn clear(&mut self) {
        self.header = None;
    }

    /// The line read after the header was not its place: after `REACH` such lines it has none.
    pub(crate) fn missed(&mut self) {
        self.missed += 1;
        if self.missed >= REACH {
            self.header = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Awaited;

    #[test]
    fn a_header_waits_its_reach_and_no_more() {
        let mut awaited: Awaited<&str, 3> = Awaited::default();
        awaited.start("error");
        awaited.missed();
        awaited.missed();
        assert!(awaited.is_waiting());
        awaited.missed();
        assert!(!awaited.is_waiting());
        // A header read again waits its whole reach again.
        awaited.start("error");
        awaited.missed();
        awaited.missed();
        awaited.start("another");
        awaited.missed();
        awaited.missed();
        assert_eq!(awaited.take(), Some("another"));
    }
}
