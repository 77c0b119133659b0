//! Fuzzes the log parser: any bytes, parsed whole and streamed, must give the same valid output
//! and never panic.
//!
//!     cargo +nightly fuzz run parse -- -max_total_time=60

#![no_main]

use kubeheal::parse::{MAX_REPORTS, Workspace, parse, parse_reader};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let workspace = Workspace::new("/w").with_files(vec!["src/a.py".into(), "pkg/x_test.go".into()]);
    let whole = parse(&String::from_utf8_lossy(data), &workspace);
    let streamed = parse_reader(std::io::BufReader::with_capacity(16, data), &workspace).expect("in memory");
    assert_eq!(whole, streamed);
    assert!(whole.reports.len() <= MAX_REPORTS);
    for r in &whole.reports {
        assert!(r.line_number >= 1);
        assert!(!r.file_path.starts_with('/') && !r.file_path.split('/').any(|s| s == ".."));
    }
});
