//! Parser throughput and memory, and the ratio against SWE-bench's pytest log parser.
//!
//!     cargo bench --bench parser            # 128 MiB log
//!     KUBEHEAL_BENCH_MIB=512 cargo bench --bench parser
//!
//! The log is every golden log in tests/fixtures/logs, concatenated with passing noise (pytest
//! PASSED lines, pip install output, cargo progress) until it reaches the size; it is written
//! to target/ and streamed from disk, so the peak resident memory is the parser's own. The peak is
//! read after a log of 1/8 the size and after the full one: the two should be the same. The peer
//! (`swebench.harness.log_parsers.python.parse_log_pytest`, PyPI `swebench`) is timed on the same
//! file by python3, parsing only, when it is installed.
//!
//! Redaction is timed on an 8 MiB pytest log (the pytest golden logs among passing pytest and pip
//! noise) with four secrets in it.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use kubeheal::core::redact::redact;
use kubeheal::parse::{Workspace, parse_reader};

const NOISE: &[&str] = &[
    "tests/test_api.py::test_refund_happy_path PASSED                                 [ 42%]",
    "PASSED tests/test_models.py::TestInvoice::test_total_with_tax",
    "Collecting requests>=2.31 (from -r requirements.txt (line 3))",
    "  Downloading requests-2.32.3-py3-none-any.whl.metadata (4.6 kB)",
    "   Compiling serde_json v1.0.128",
    "test tests::parses_empty_input ... ok",
    "=== RUN   TestHandler/valid_request",
    "--- PASS: TestHandler/valid_request (0.00s)",
    "  ✓ renders the header (3 ms)",
    "2026-11-22T04:01:02.1234567Z ##[group]Run actions/checkout@v4",
    "\u{1b}[32m.\u{1b}[0m\u{1b}[32m.\u{1b}[0m\u{1b}[32m.\u{1b}[0m                                  [ 99%]",
];

fn main() {
    let mib: u64 = std::env::var("KUBEHEAL_BENCH_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(128);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target = root.join("target");
    std::fs::create_dir_all(&target).expect("target/ can be created");
    let small = target.join("bench-parser-small.log");
    let large = target.join("bench-parser.log");
    write_log(&root.join("tests/fixtures/logs"), &small, mib * 1024 * 1024 / 8);
    let size = write_log(&root.join("tests/fixtures/logs"), &large, mib * 1024 * 1024);
    let workspace = Workspace::new("/tmp/kubeheal-fixtures/py_logic");

    let (_, small_reports) = run(&small, &workspace);
    let peak_small = peak_rss_kib();
    // Best of three on the large log.
    let mut best = f64::MAX;
    let mut reports = 0;
    for _ in 0..3 {
        let (secs, n) = run(&large, &workspace);
        best = best.min(secs);
        reports = n;
    }
    let peak_large = peak_rss_kib();
    let mb = size as f64 / 1e6;
    let ours = mb / best;
    println!(
        "log: {mb:.1} MB ({} lines of golden logs and noise), {reports} reports",
        count_lines(&large)
    );
    println!("kubeheal parse: {best:.3} s, {ours:.0} MB/s on one core");
    println!(
        "peak resident memory: {} KiB after a {:.1} MB log, {} KiB after the {mb:.1} MB log ({small_reports} / {reports} reports)",
        peak_small,
        mb / 8.0,
        peak_large
    );

    let peer = if std::env::var_os("KUBEHEAL_BENCH_NO_PEER").is_some() {
        None
    } else {
        peer_seconds(&large)
    };
    match peer {
        Some(peer) => println!(
            "swebench parse_log_pytest: {peer:.3} s, {:.0} MB/s; kubeheal is {:.1}x faster",
            mb / peer,
            peer / best
        ),
        None => println!("swebench parse_log_pytest: not available (pip install swebench to compare)"),
    }
    redaction(&root.join("tests/fixtures/logs"));
}

/// Redaction throughput, best of three, over an 8 MiB pytest log with four secrets.
fn redaction(logs: &Path) {
    let mut goldens: Vec<PathBuf> = std::fs::read_dir(logs)
        .expect("tests/fixtures/logs exists")
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("py_") && n.ends_with(".log"))
        })
        .collect();
    goldens.sort();
    let texts: Vec<String> = goldens
        .iter()
        .map(|p| String::from_utf8_lossy(&std::fs::read(p).expect("golden log")).into_owned())
        .collect();
    let mut log = String::new();
    let mut i = 0usize;
    while log.len() < 8 << 20 {
        for n in 0..200 {
            log.push_str(NOISE[(i + n) % 4]);
            log.push('\n');
        }
        log.push_str(&texts[i % texts.len()]);
        i += 1;
    }
    // Built here rather than written out, so that the source holds no credential-shaped literal.
    let body = "k3Zq9LwXv2Rt7Ym4Pb8N".repeat(3);
    let secrets = [
        format!(
            "+ git remote set-url origin https://ci:{}@git.example.com/acme/app.git\n",
            &body[..20]
        ),
        format!("+ export GITHUB_TOKEN=ghp_{}\n", &body[..36]),
        format!("+ export AWS_ACCESS_KEY_ID=AKIA{}\n", body[..16].to_ascii_uppercase()),
        format!("DB_PASSWORD={}\n", &body[..16]),
    ];
    for (k, secret) in secrets.iter().enumerate() {
        let at = log.len() / 5 * (k + 1);
        let at = log[at..].find('\n').map_or(log.len(), |j| at + j + 1);
        log.insert_str(at, secret);
    }
    let mut best = f64::MAX;
    let mut count = 0;
    for _ in 0..3 {
        let start = Instant::now();
        let (_, n) = redact(&log, &[]);
        best = best.min(start.elapsed().as_secs_f64());
        count = n;
    }
    let mb = log.len() as f64 / 1e6;
    println!(
        "kubeheal redact: {best:.3} s, {:.0} MB/s on one core ({mb:.1} MB pytest log, {count} secrets redacted)",
        mb / best
    );
}

fn run(path: &PathBuf, workspace: &Workspace) -> (f64, usize) {
    let file = std::fs::File::open(path).expect("the bench log exists");
    let start = Instant::now();
    let parsed =
        parse_reader(std::io::BufReader::with_capacity(1 << 20, file), workspace).expect("the log is readable");
    (start.elapsed().as_secs_f64(), parsed.reports.len())
}

fn write_log(logs: &Path, path: &Path, bytes: u64) -> u64 {
    let mut goldens: Vec<PathBuf> = std::fs::read_dir(logs)
        .expect("tests/fixtures/logs exists")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    goldens.sort();
    let texts: Vec<Vec<u8>> = goldens.iter().map(|p| std::fs::read(p).expect("golden log")).collect();
    let mut out = BufWriter::new(std::fs::File::create(path).expect("the bench log can be written"));
    let mut written = 0u64;
    let mut i = 0usize;
    while written < bytes {
        // Mostly passing noise, as in a real CI log, with a failure now and then.
        for n in 0..200 {
            let line = NOISE[(i + n) % NOISE.len()];
            out.write_all(line.as_bytes())
                .and_then(|_| out.write_all(b"\n"))
                .expect("write");
            written += line.len() as u64 + 1;
        }
        let text = &texts[i % texts.len()];
        out.write_all(text).expect("write");
        written += text.len() as u64;
        i += 1;
    }
    out.flush().expect("flush");
    written
}

fn count_lines(path: &Path) -> usize {
    std::fs::read(path)
        .map(|b| memchr::memchr_iter(b'\n', &b).count())
        .unwrap_or(0)
}

/// Peak resident set size of this process (VmHWM), in KiB.
fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

fn peer_seconds(path: &Path) -> Option<f64> {
    let script = r#"
import sys, time
from swebench.harness.log_parsers.python import parse_log_pytest
log = open(sys.argv[1], encoding="utf-8", errors="replace").read()
best = None
for _ in range(3):
    start = time.perf_counter()
    parse_log_pytest(log, None)
    elapsed = time.perf_counter() - start
    best = elapsed if best is None else min(best, elapsed)
print(best)
"#;
    let out = Command::new("python3").arg("-c").arg(script).arg(path).output().ok()?;
    if !out.status.success() {
        return None;
    }
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}
