//! Properties that hold for any repository an attacker can build, checked on generated trees and
//! paths (the cargo-fuzz targets `confined` and `heal_request` check the same with coverage
//! guidance): a confined read never returns what lies outside the tree, and a healer request
//! never carries a secret value.

use std::collections::BTreeMap;
use std::os::unix::fs::symlink;
use std::time::Duration;

use kubeheal::api::shared::{BugReport, ErrorType};
use kubeheal::confined::ConfinedDir;
use kubeheal::healer::{HealRequest, RequestInputs};
use proptest::prelude::*;

const OUTSIDE: &str = "OUTSIDE-THE-TREE-1b2c";

/// A path component an attacker might use.
fn component() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("..".to_owned()),
        Just(".".to_owned()),
        Just("a".to_owned()),
        Just("b".to_owned()),
        Just("link".to_owned()),
        Just("up".to_owned()),
        Just("abs".to_owned()),
        Just("file.py".to_owned()),
        Just("".to_owned()),
    ]
}

/// A symlink target: relative climbs, absolute paths, links through links.
fn target() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::collection::vec(component(), 1..5).prop_map(|c| c.join("/")),
        Just("/".to_owned()),
        Just("/proc/self/environ".to_owned()),
        Just("../outside.txt".to_owned()),
        Just("../../outside.txt".to_owned()),
        Just("a/../../outside.txt".to_owned()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn a_confined_read_never_returns_what_lies_outside_the_tree(
        links in prop::collection::vec((prop::collection::vec(component(), 1..3), target()), 0..6),
        reads in prop::collection::vec(prop::collection::vec(component(), 1..5), 1..8),
    ) {
        let base = tempfile::tempdir().unwrap();
        std::fs::write(base.path().join("outside.txt"), OUTSIDE).unwrap();
        let root = base.path().join("tree");
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("a/file.py"), "inside").unwrap();
        for (at, to) in &links {
            let path = root.join(at.join("/"));
            if path.starts_with(&root) && !path.exists() && path.parent().is_some_and(|p| p.is_dir()) {
                let _ = symlink(to, &path);
            }
        }
        let dir = ConfinedDir::open(&root).unwrap();
        for read in reads {
            let path = read.join("/");
            if let Ok(bytes) = dir.read(&path, 1 << 20) {
                prop_assert!(!String::from_utf8_lossy(&bytes).contains(OUTSIDE), "{path} read the outside file");
            }
            let _ = dir.write(&path, b"written");
            prop_assert_eq!(std::fs::read_to_string(base.path().join("outside.txt")).unwrap(), OUTSIDE);
        }
        let copy = base.path().join("copy");
        if dir.copy_tree(&copy, &[]).is_ok() {
            let copied = ConfinedDir::open(&copy).unwrap();
            prop_assert!(copied.copy_tree(&base.path().join("copy2"), &[]).unwrap().skipped_links.is_empty(),
                "a copy holds no link that leads out of it");
        }
    }

    #[test]
    fn a_healer_request_never_carries_a_secret_value(
        secret in "[A-Za-z0-9_+/=-]{8,40}",
        before in "[ -~\n]{0,200}",
        after in "[ -~\n]{0,200}",
        in_log in any::<bool>(),
        in_message in any::<bool>(),
    ) {
        let content = format!("{before}{secret}{after}");
        let files: BTreeMap<String, String> = BTreeMap::from([
            ("app.py".to_owned(), content.clone()),
            ("lib.py".to_owned(), format!("TOKEN = '{secret}'\n")),
        ]);
        let tracked: Vec<String> = files.keys().cloned().collect();
        let reports = vec![BugReport {
            file_path: "app.py".into(),
            line_number: 1,
            error_type: ErrorType::Syntax,
            message: if in_message { format!("bad {secret}") } else { "bad".into() },
            test_name: None,
            confidence_score: None,
        }];
        let log = if in_log { format!("E   {secret}\n") } else { String::new() };
        let secrets = vec![secret.clone()];
        let request = HealRequest::build(
            RequestInputs {
                // A work order's text (written by whoever may create a CodeFixDDS) is untrusted too.
                task: &log,
                project: "p",
                cycle: 1,
                reports: &reports,
                files: &tracked,
                secrets: &secrets,
                exit_code: 1,
                error_message: &log,
                log: &log,
                stderr: &log,
                history: Vec::new(),
                timeout: Duration::from_secs(30),
                allowed_paths: Vec::new(),
            },
            &|path: &str, _| files.get(path).cloned(),
        );
        let wire = format!("{request:?}");
        prop_assert!(!wire.contains(&secret), "the secret reached the request: {wire}");
        prop_assert!(request.failed_files.contains_key("app.py"));
    }
}
