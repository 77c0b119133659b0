//! Fuzzes the confined file access: a tree whose links and read paths come from the input must
//! never give back the file that lies outside it.
//!
//!     cargo +nightly fuzz run confined -- -max_total_time=60

#![no_main]

use std::os::unix::fs::symlink;

use kubeheal::confined::ConfinedDir;
use libfuzzer_sys::fuzz_target;

const OUTSIDE: &str = "OUTSIDE-THE-TREE";

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let base = tempfile::tempdir().expect("a temp dir");
    std::fs::write(base.path().join("outside.txt"), OUTSIDE).expect("write");
    let root = base.path().join("tree");
    std::fs::create_dir_all(root.join("a/b")).expect("mkdir");
    // Lines `name -> target` make links; other lines are paths to read and write.
    let mut reads = Vec::new();
    for line in text.lines().take(16) {
        match line.split_once(" -> ") {
            Some((name, target)) if !name.contains("..") && !name.starts_with('/') && !name.is_empty() => {
                let _ = symlink(target, root.join(name));
            }
            _ => reads.push(line.to_owned()),
        }
    }
    let dir = ConfinedDir::open(&root).expect("the tree opens");
    for path in reads {
        if let Ok(bytes) = dir.read(&path, 1 << 16) {
            assert!(!String::from_utf8_lossy(&bytes).contains(OUTSIDE), "{path}");
        }
        let _ = dir.write(&path, b"x");
        assert_eq!(std::fs::read_to_string(base.path().join("outside.txt")).unwrap(), OUTSIDE);
    }
});
