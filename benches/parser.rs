//! Parser throughput and memory, and the ratio against SWE-bench's pytest log parser.
//!
//!     cargo bench --bench parser            # 128 MiB log
//!     KUBEHEAL_BENCH_MIB=512 cargo bench --bench parser
//!
//! The log is every golden log in tests/fixtures/logs (the combined CI jobs, JSON, SARIF and
//! JUnit reports among them), concatenated with passing noise (pytest PASSED lines, pip install
//! output, cargo progress) until it reaches the size; it is written to target/ and streamed from
//! disk, so the peak resident memory is the parser's own. That every section is really read is
//! checked: the test outcomes the whole log counts must equal those of its pieces parsed one by
//! one. `grep -c -E '[A-Za-z0-9_./-]+:[0-9]+'` is timed on the same file, as the floor of reading
//! every line, taking turns with kubeheal for `KUBEHEAL_BENCH_ROUNDS` rounds (7): the machine's
//! speed drifts (it is shared), and a drift falls on both within a round, so the median of the
//! rounds' ratios is the steady figure. The peak is
//! read after a log of 1/8 the size and after the full one: the two should be the same. The peer
//! (`swebench.harness.log_parsers.python.parse_log_pytest`, PyPI `swebench`) is timed on the same
//! file by python3 (or the interpreter `KUBEHEAL_BENCH_PYTHON` names, such as a virtual
//! environment's), parsing only, when it is installed: the log is read into memory and decoded
//! before its clock starts. So kubeheal is timed that way too (the log in memory, its UTF-8 check
//! on the clock), beside the streamed figure, and both ratios are printed. Beside the wall time, the CPU time of the
//! same run is printed, for kubeheal, grep and the peer alike: on a shared machine it is the
//! steadier figure.
//!
//! A second figure is a log that is mostly one structured document: a 100 MiB JSON array of
//! ruff-shaped findings (`ruff check --output-format=json`) between a pytest failure before it and
//! another after it, which must be found. Each run parses it in a child process of its own, so the peak resident memory
//! (VmHWM) printed is that parse's alone.
//!
//!     KUBEHEAL_BENCH_JSON_MIB=100 cargo bench --bench parser   # the JSON array's size
//!     KUBEHEAL_BENCH_JSON_ONLY=1 cargo bench --bench parser    # only the JSON array figure
//!
//! `KUBEHEAL_BENCH_BIN=path` times a built `kubeheal` binary too (`image/pgo.sh bench` passes the
//! image's, built with profile-guided optimisation: its profile names this build's functions,
//! not the bench's own copy of the library), `kubeheal parse` of the same file as a child
//! process, in turns with grep, against grep and the peer.
//!
//! Redaction is timed on an 8 MiB pytest log (the pytest golden logs among passing pytest and pip
//! noise) with four secrets in it.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

#[path = "../tests/parser_fixtures/mod.rs"]
mod parser_fixtures;

use kubeheal::core::redact::redact;
use kubeheal::parse::{Workspace, parse_reader};

/// The allocator the `kubeheal` binary uses (src/main.rs), so the parse is timed as it runs there.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

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

/// Set in the child process that parses the JSON array log: the log's path.
const JSON_CHILD: &str = "KUBEHEAL_BENCH_JSON_CHILD";

fn main() {
    if let Some(path) = std::env::var_os(JSON_CHILD) {
        json_child(Path::new(&path));
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    if std::env::var_os("KUBEHEAL_BENCH_JSON_ONLY").is_none() {
        mixed_log(root);
    }
    json_array_log(root);
}

fn mixed_log(root: &Path) {
    let mib: u64 = std::env::var("KUBEHEAL_BENCH_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(128);
    let target = root.join("target");
    std::fs::create_dir_all(&target).expect("target/ can be created");
    let small = target.join("bench-parser-small.log");
    let large = target.join("bench-parser.log");
    write_log(&root.join("tests/fixtures/logs"), &small, mib * 1024 * 1024 / 8);
    let size = write_log(&root.join("tests/fixtures/logs"), &large, mib * 1024 * 1024);
    let workspace = Workspace::new("/tmp/kubeheal-fixtures/py_logic");

    let (_, _, small_reports, _) = run(&small, &workspace);
    let peak_small = peak_rss_kib();
    // kubeheal and grep take turns, so that a change in the machine's speed (it is shared) falls
    // on both: the ratio of each round is the figure, its median the one reported.
    let rounds: usize = std::env::var("KUBEHEAL_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(7);
    let (mut ours, mut ours_cpu, mut grep, mut grep_cpu, mut ratios) = (vec![], vec![], vec![], vec![], vec![]);
    let (mut reports, mut counted, mut grep_count) = (0, 0, None);
    for _ in 0..rounds {
        let (secs, cpu, n, outcomes) = run(&large, &workspace);
        ours.push(secs);
        ours_cpu.push(cpu);
        reports = n;
        counted = outcomes;
        if let Some((secs, g_cpu, count)) = grep_once(&large) {
            grep.push(secs);
            grep_cpu.push(g_cpu);
            ratios.push(cpu / g_cpu);
            grep_count = Some(count);
        }
    }
    let peak_large = peak_rss_kib();
    let mb = size as f64 / 1e6;
    let (best, best_cpu, median_cpu) = (min(&ours), min(&ours_cpu), median(&ours_cpu));
    println!(
        "log: {mb:.1} MB ({} lines of golden logs and noise), {reports} reports",
        count_lines(&large)
    );
    println!(
        "kubeheal parse, {rounds} rounds: best {best:.3} s, {:.0} MB/s on one core; CPU best {best_cpu:.3} s ({:.0} MB/s), median {median_cpu:.3} s ({:.0} MB/s)",
        mb / best,
        mb / best_cpu,
        mb / median_cpu
    );
    println!(
        "peak resident memory: {} KiB after a {:.1} MB log, {} KiB after the {mb:.1} MB log ({small_reports} / {reports} reports)",
        peak_small,
        mb / 8.0,
        peak_large
    );

    // Every section really read: the outcomes counted in the whole log are those of its units
    // parsed one by one.
    let alone = outcomes_alone(&root.join("tests/fixtures/logs"), mib * 1024 * 1024, &workspace);
    println!(
        "test outcomes counted: {counted} in the whole log, {alone} in its sections parsed one by one{}",
        if counted == alone {
            ""
        } else {
            " — SECTIONS WERE NOT READ"
        }
    );
    match grep_count {
        Some(count) => println!(
            "grep -c -E '[A-Za-z0-9_./-]+:[0-9]+' ({count} lines), taking turns with kubeheal: best {:.3} s, {:.0} MB/s; \
             CPU best {:.3} s, median {:.3} s; kubeheal takes {:.2}x grep's CPU time (the median of the {} rounds' ratios; \
             they ranged {:.2}x-{:.2}x)",
            min(&grep),
            mb / min(&grep),
            min(&grep_cpu),
            median(&grep_cpu),
            median(&ratios),
            ratios.len(),
            min(&ratios),
            ratios.iter().copied().fold(0.0, f64::max)
        ),
        None => println!("grep: not available"),
    }
    // The log in memory, as the peer has it when its clock starts.
    let (in_memory, in_memory_median) = in_memory_cpu(&large, &workspace, rounds);
    println!(
        "kubeheal parse of the log in memory, {rounds} rounds: CPU best {in_memory:.3} s ({:.0} MB/s), median {in_memory_median:.3} s",
        mb / in_memory
    );
    let binary = std::env::var_os("KUBEHEAL_BENCH_BIN").map(|bin| binary_in_turns(Path::new(&bin), &large, rounds));
    if std::env::var_os("KUBEHEAL_BENCH_NO_PEER").is_some() {
        println!("swebench parse_log_pytest: skipped (KUBEHEAL_BENCH_NO_PEER is set)");
    } else {
        match peer_seconds(&large) {
            Some((peer, peer_cpu)) => println!(
                "swebench parse_log_pytest (the log in memory), best of three: {peer:.3} s, {:.0} MB/s ({peer_cpu:.3} s of CPU); \
                 kubeheal is {:.1}x faster on the log in memory ({:.1}x by median), {:.1}x streaming it from the file \
                 ({:.1}x by best CPU time, {:.1}x by median)",
                mb / peer,
                peer_cpu / in_memory,
                peer_cpu / in_memory_median,
                peer / best,
                peer_cpu / best_cpu,
                peer_cpu / median_cpu
            ),
            None => println!("swebench parse_log_pytest: not available (pip install swebench to compare)"),
        }
    }
    if let Some((best, median)) = binary {
        println!(
            "the binary, streaming the file: CPU best {best:.3} s ({:.0} MB/s), median {median:.3} s",
            mb / best
        );
    }
    redaction(&root.join("tests/fixtures/logs"));
    path_resolution();
}

/// `kubeheal parse` of `log` by the binary `bin`, as a child process, in turns with grep for
/// `rounds` rounds; prints its ratio to grep's CPU time and returns its (best, median) CPU
/// seconds.
fn binary_in_turns(bin: &Path, log: &Path, rounds: usize) -> (f64, f64) {
    let (mut ours, mut ratios) = (vec![], vec![]);
    for _ in 0..rounds {
        let cpu = children_cpu_seconds();
        let status = Command::new(bin)
            .args(["parse", "--workspace", "/tmp/kubeheal-fixtures/py_logic"])
            .arg(log)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .expect("KUBEHEAL_BENCH_BIN runs");
        assert!(status.success(), "{} parse failed: {status}", bin.display());
        let used = children_cpu_seconds() - cpu;
        ours.push(used);
        if let Some((_, grep_cpu, _)) = grep_once(log) {
            ratios.push(used / grep_cpu);
        }
    }
    println!(
        "the binary {} (kubeheal parse as a child process), {rounds} rounds: CPU best {:.3} s, median {:.3} s; \
         it takes {:.2}x grep's CPU time (the median of the rounds' ratios; they ranged {:.2}x-{:.2}x)",
        bin.display(),
        min(&ours),
        median(&ours),
        median(&ratios),
        min(&ratios),
        ratios.iter().copied().fold(0.0, f64::max)
    );
    (min(&ours), median(&ours))
}

/// Paths a tool printed from a subfolder, or under another checkout's root, resolved against a
/// listing of 100,000 files (the most `kubeheal parse --workspace` reads): each is found by binary
/// searches, so the cost per path should not grow with the listing.
fn path_resolution() {
    for files in [1_000usize, 100_000] {
        let listing: Vec<String> = (0..files)
            .map(|i| format!("services/svc{}/pkg{}/module_{i}.py", i % 50, i % 997))
            .collect();
        let workspace = Workspace::new("/workspace/repo").with_files(listing);
        // Half printed from a subfolder (`pkg7/module_7.py` run in `services/svc7/`), half under
        // another root (`/ci/build/services/...`).
        let paths: Vec<String> = (0..20_000usize)
            .map(|n| {
                let i = n * 7919 % files;
                if n % 2 == 0 {
                    format!("pkg{}/module_{i}.py", i % 997)
                } else {
                    format!("/ci/build/services/svc{}/pkg{}/module_{i}.py", i % 50, i % 997)
                }
            })
            .collect();
        let mut best = f64::MAX;
        let mut resolved = 0;
        for _ in 0..3 {
            let start = Instant::now();
            resolved = paths
                .iter()
                .filter_map(|p| workspace.relative(p))
                .filter(|r| r.starts_with("services/"))
                .count();
            best = best.min(start.elapsed().as_secs_f64());
        }
        println!(
            "path resolution: {} paths against {files} listed files: {:.2} ms, {:.0} ns a path ({resolved} resolved to a listed file)",
            paths.len(),
            best * 1e3,
            best * 1e9 / paths.len() as f64
        );
    }
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

/// A pytest failure of `test`, asserted at `line` of tests/test_discount.py: one before the JSON
/// array and another after it, which must be found whatever the array.
fn pytest_failure(test: &str, line: u32) -> String {
    format!(
        "\
=================================== FAILURES ===================================
_________________________________ {test} _________________________________

    def {test}():
>       assert apply_discount(100, \"gold\") == 80
E       AssertionError: assert 120.0 == 80

tests/test_discount.py:{line}: AssertionError
=========================== short test summary info ============================
FAILED tests/test_discount.py::{test} - AssertionError: assert 12...
========================= 1 failed, 2 passed in 0.16s ==========================
"
    )
}

fn json_array_log(root: &Path) {
    let mib: u64 = std::env::var("KUBEHEAL_BENCH_JSON_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let path = root.join("target").join("bench-parser-json.log");
    let (size, elements) = write_json_log(&path, mib * 1024 * 1024);
    let mb = size as f64 / 1e6;
    let (mut best, mut best_cpu) = (f64::MAX, f64::MAX);
    let mut peak = 0u64;
    let mut outcome = String::new();
    for _ in 0..3 {
        let out = Command::new(std::env::current_exe().expect("the bench knows its own path"))
            .env(JSON_CHILD, &path)
            .output()
            .expect("the bench can run itself");
        assert!(out.status.success(), "the JSON array child failed: {out:?}");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let fields: Vec<&str> = text.split_whitespace().collect();
        let [secs, cpu, kib, reports, found] = fields[..] else {
            panic!("unexpected child output {text:?}");
        };
        best = best.min(secs.parse().expect("seconds"));
        best_cpu = best_cpu.min(cpu.parse().expect("seconds"));
        peak = peak.max(kib.parse().expect("KiB"));
        outcome = format!("{reports} reports, the pytest failure after the array found: {found}");
    }
    println!(
        "JSON array log: {mb:.1} MB ({elements} ruff findings in one array): {best:.3} s, {:.0} MB/s \
         ({best_cpu:.3} s of CPU: {:.0} MB/s); peak resident memory {:.1} MiB; {outcome}",
        mb / best,
        mb / best_cpu,
        peak as f64 / 1024.0
    );
}

/// Parses the JSON array log and prints `seconds cpu-seconds peak-KiB reports pytest-found`.
fn json_child(path: &Path) {
    let workspace = Workspace::new("/tmp/kubeheal-fixtures/py_logic");
    let file = std::fs::File::open(path).expect("the bench log exists");
    let (start, cpu) = (Instant::now(), cpu_seconds());
    let parsed =
        parse_reader(std::io::BufReader::with_capacity(1 << 20, file), &workspace).expect("the log is readable");
    let (secs, cpu) = (start.elapsed().as_secs_f64(), cpu_seconds() - cpu);
    let found = parsed
        .reports
        .iter()
        .any(|r| r.file_path == "tests/test_discount.py" && r.line_number == 24);
    println!("{secs} {cpu} {} {} {found}", peak_rss_kib(), parsed.reports.len());
}

/// Writes pytest output, a JSON array of ruff findings as `ruff check --output-format=json`
/// prints it, and the pytest output again. Returns (bytes, findings).
fn write_json_log(path: &Path, bytes: u64) -> (u64, u64) {
    let mut out = Counted {
        out: BufWriter::new(std::fs::File::create(path).expect("the bench log can be written")),
        written: 0,
    };
    out.put(&pytest_failure("test_gold_discount", 7));
    out.put("[\n");
    let mut n = 0u64;
    loop {
        let element = parser_fixtures::ruff_json_finding(n, "/tmp/kubeheal-fixtures/py_logic/pricing", 5000);
        n += 1;
        out.put(&element);
        if out.written >= bytes {
            out.put("\n]\n");
            break;
        }
        out.put(",\n");
    }
    out.put(&pytest_failure("test_label", 24));
    out.out.flush().expect("flush");
    (out.written, n)
}

/// A file written with a count of its bytes.
struct Counted {
    out: BufWriter<std::fs::File>,
    written: u64,
}

impl Counted {
    fn put(&mut self, s: &str) {
        self.out.write_all(s.as_bytes()).expect("write");
        self.written += s.len() as u64;
    }
}

/// Parses the log at `path`: (seconds, seconds of CPU, reports, test outcomes counted).
fn run(path: &PathBuf, workspace: &Workspace) -> (f64, f64, usize, u64) {
    let file = std::fs::File::open(path).expect("the bench log exists");
    let (start, cpu) = (Instant::now(), cpu_seconds());
    let parsed =
        parse_reader(std::io::BufReader::with_capacity(1 << 20, file), workspace).expect("the log is readable");
    let elapsed = start.elapsed().as_secs_f64();
    (
        elapsed,
        cpu_seconds() - cpu,
        parsed.reports.len(),
        outcomes(&parsed.summary),
    )
}

/// The log read into memory first, then parsed from there, `rounds` times: (best, median) CPU
/// seconds of the parse alone (its UTF-8 check included).
fn in_memory_cpu(path: &Path, workspace: &Workspace, rounds: usize) -> (f64, f64) {
    let log = std::fs::read(path).expect("the bench log exists");
    let times: Vec<f64> = (0..rounds)
        .map(|_| {
            let cpu = cpu_seconds();
            let parsed = parse_reader(log.as_slice(), workspace).expect("in memory");
            let used = cpu_seconds() - cpu;
            std::hint::black_box(parsed);
            used
        })
        .collect();
    (min(&times), median(&times))
}

/// CPU time this process has used, user and system.
fn cpu_seconds() -> f64 {
    used_cpu(nix::sys::resource::UsageWho::RUSAGE_SELF)
}

/// CPU time the children this process has waited for have used, user and system.
fn children_cpu_seconds() -> f64 {
    used_cpu(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
}

fn used_cpu(who: nix::sys::resource::UsageWho) -> f64 {
    let usage = nix::sys::resource::getrusage(who).expect("getrusage");
    let secs = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
    secs(usage.user_time()) + secs(usage.system_time())
}

/// Hands `unit` each piece of the bench log in order until `bytes` are given: 200 lines of
/// passing noise, then a golden log, round and round the golden logs.
fn for_each_unit(logs: &Path, bytes: u64, mut unit: impl FnMut(&[u8])) {
    let mut goldens: Vec<PathBuf> = std::fs::read_dir(logs)
        .expect("tests/fixtures/logs exists")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    goldens.sort();
    // Each golden log ends its last line, so that each unit is the same text alone as in the log
    // (a log without a final newline running into the next line is the combined-log tests' case).
    let texts: Vec<Vec<u8>> = goldens
        .iter()
        .map(|p| {
            let mut text = std::fs::read(p).expect("golden log");
            if !text.ends_with(b"\n") {
                text.push(b'\n');
            }
            text
        })
        .collect();
    let mut given = 0u64;
    let mut i = 0usize;
    let mut piece = Vec::new();
    while given < bytes {
        // Mostly passing noise, as in a real CI log, with a failure now and then.
        piece.clear();
        for n in 0..200 {
            piece.extend_from_slice(NOISE[(i + n) % NOISE.len()].as_bytes());
            piece.push(b'\n');
        }
        piece.extend_from_slice(&texts[i % texts.len()]);
        unit(&piece);
        given += piece.len() as u64;
        i += 1;
    }
}

fn write_log(logs: &Path, path: &Path, bytes: u64) -> u64 {
    let mut out = BufWriter::new(std::fs::File::create(path).expect("the bench log can be written"));
    let mut written = 0u64;
    for_each_unit(logs, bytes, |piece| {
        out.write_all(piece).expect("write");
        written += piece.len() as u64;
    });
    out.flush().expect("flush");
    written
}

/// Test outcomes the runners' summaries and reports add up to, each unit of the log parsed on
/// its own: what the whole log must give if every section in it is really read.
fn outcomes_alone(logs: &Path, bytes: u64, workspace: &Workspace) -> u64 {
    let mut total = 0u64;
    for_each_unit(logs, bytes, |piece| {
        let parsed = parse_reader(piece, workspace).expect("in memory");
        total += outcomes(&parsed.summary);
    });
    total
}

fn outcomes(summary: &kubeheal::parse::SuiteSummary) -> u64 {
    u64::from(summary.ran() + summary.skipped)
}

/// `grep -c -E '[A-Za-z0-9_./-]+:[0-9]+'` on the same file, once: what reading every line for
/// a `path:line` costs at the least. Returns (seconds, seconds of CPU, lines counted).
fn grep_once(path: &Path) -> Option<(f64, f64, String)> {
    let (start, cpu) = (Instant::now(), children_cpu_seconds());
    let out = Command::new("grep")
        .args(["-c", "-E", "[A-Za-z0-9_./-]+:[0-9]+"])
        .arg(path)
        .env("LC_ALL", "C")
        .output()
        .ok()?;
    let secs = start.elapsed().as_secs_f64();
    let cpu = children_cpu_seconds() - cpu;
    Some((secs, cpu, String::from_utf8_lossy(&out.stdout).trim().to_owned()))
}

fn min(figures: &[f64]) -> f64 {
    figures.iter().copied().fold(f64::MAX, f64::min)
}

/// The median of the figures (the mean of the middle two of an even number).
fn median(figures: &[f64]) -> f64 {
    let mut sorted = figures.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
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

/// SWE-bench's parser on the same file, parsing only, best of three: (seconds, seconds of CPU).
fn peer_seconds(path: &Path) -> Option<(f64, f64)> {
    let script = r#"
import sys, time
from swebench.harness.log_parsers.python import parse_log_pytest
log = open(sys.argv[1], encoding="utf-8", errors="replace").read()
best = best_cpu = None
for _ in range(3):
    start, cpu = time.perf_counter(), time.process_time()
    parse_log_pytest(log, None)
    elapsed, used = time.perf_counter() - start, time.process_time() - cpu
    best = elapsed if best is None else min(best, elapsed)
    best_cpu = used if best_cpu is None else min(best_cpu, used)
print(best, best_cpu)
"#;
    // The Python that has swebench: a virtual environment's, or python3 on the PATH.
    let python = std::env::var_os("KUBEHEAL_BENCH_PYTHON").unwrap_or_else(|| "python3".into());
    let out = Command::new(python).arg("-c").arg(script).arg(path).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut figures = text.split_whitespace().map(|f| f.parse::<f64>().ok());
    Some((figures.next()??, figures.next()??))
}
