//! Bounded output capture: a build that prints gigabytes must not take the machine down. The
//! first and the last bytes are kept in memory (nothing goes to disk); the middle is counted and
//! said to be dropped.

use std::collections::VecDeque;

/// Keeps the first `head_max` and the last `tail_max` bytes written to it.
#[derive(Debug)]
pub struct BoundedLog {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    head_max: usize,
    tail_max: usize,
    total: u64,
}

impl BoundedLog {
    pub fn new(head_max: usize, tail_max: usize) -> Self {
        BoundedLog {
            head: Vec::new(),
            tail: VecDeque::new(),
            head_max,
            tail_max,
            total: 0,
        }
    }

    pub fn write(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        if self.head.len() < self.head_max {
            let take = bytes.len().min(self.head_max - self.head.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        if bytes.len() >= self.tail_max {
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - self.tail_max..]);
            return;
        }
        let overflow = (self.tail.len() + bytes.len()).saturating_sub(self.tail_max);
        self.tail.drain(..overflow);
        self.tail.extend(bytes);
    }

    /// Bytes written but not kept.
    pub fn dropped(&self) -> u64 {
        self.total - self.head.len() as u64 - self.tail.len() as u64
    }

    pub fn total(&self) -> u64 {
        self.total
    }

    /// The kept text, with a line saying how much was dropped between head and tail.
    pub fn text(&self) -> String {
        let mut out = String::from_utf8_lossy(&self.head).into_owned();
        let dropped = self.dropped();
        if dropped > 0 {
            out.push_str(&format!(
                "\n[... kubeheal dropped {dropped} bytes of output here ...]\n"
            ));
        }
        let (a, b) = self.tail.as_slices();
        let mut tail = Vec::with_capacity(a.len() + b.len());
        tail.extend_from_slice(a);
        tail.extend_from_slice(b);
        out.push_str(&String::from_utf8_lossy(&tail));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::BoundedLog;

    #[test]
    fn keeps_head_and_tail_and_counts_the_middle() {
        let mut log = BoundedLog::new(4, 4);
        for chunk in [&b"abc"[..], b"defgh", b"ijklmnop", b"q"] {
            log.write(chunk);
        }
        assert_eq!(log.total(), 17);
        assert_eq!(log.dropped(), 9);
        assert_eq!(
            log.text(),
            "abcd\n[... kubeheal dropped 9 bytes of output here ...]\nnopq"
        );
    }
}
