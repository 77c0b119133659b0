//! A build that prints 2 GB must not take the machine down: `kubeheal exec` keeps the first and
//! last 4 MiB, says how much it dropped, and its peak memory stays small. Alone in its test binary
//! so that the peak memory of this process's children is the executor's own.

use nix::sys::resource::{UsageWho, getrusage};

#[test]
fn a_command_that_prints_2_gb_is_kept_to_its_head_and_tail_in_bounded_memory() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kubeheal"))
        .args(["exec", &dir.path().display().to_string(), "--timeout", "300", "--command"])
        .arg("echo first line; yes 'a line of build output that goes on and on' | head -c 2000000000; echo; echo last line")
        .output()
        .expect("kubeheal exec runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let envelope: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the envelope is JSON");
    assert_eq!(envelope["status"], "success", "{envelope}");
    let warning = envelope["warnings"][0].as_str().unwrap_or_default();
    assert!(warning.contains("the build printed 20000000"), "{warning}");
    let excerpt = envelope["log_excerpt"].as_str().unwrap_or_default();
    assert!(
        excerpt.starts_with("first line") && excerpt.trim_end().ends_with("last line"),
        "{excerpt:.200}"
    );

    let peak_kib = getrusage(UsageWho::RUSAGE_CHILDREN).expect("getrusage").max_rss();
    assert!(peak_kib < 150 * 1024, "kubeheal exec peaked at {} MiB", peak_kib / 1024);
}
