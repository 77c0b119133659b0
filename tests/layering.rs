//! The layers only look down: `api` ← `parse` ← `core` ← `healer` / `executor` / `git` /
//! `probe` / `intake` / `decision` ← `operator` / `local` / `decide` / `ticket` ← `main` (with `confined`, the one door to repository
//! files, beside `api` at the bottom). A `use` of a layer above fails this test with the file and line.

use std::path::Path;

/// Each layer and the modules it must never name.
const RULES: &[(&str, &[&str])] = &[
    (
        "api",
        &[
            "parse", "core", "healer", "executor", "git", "operator", "local", "confined", "probe",
        ],
    ),
    (
        "confined",
        &[
            "api", "parse", "core", "healer", "executor", "git", "operator", "local", "probe",
        ],
    ),
    (
        "parse",
        &[
            "core", "healer", "executor", "git", "operator", "local", "confined", "probe",
        ],
    ),
    (
        "core",
        &["healer", "executor", "git", "operator", "local", "confined", "probe"],
    ),
    ("healer", &["executor", "git", "operator", "local"]),
    ("executor", &["healer", "git", "operator", "local"]),
    ("git", &["healer", "executor", "operator", "local"]),
    ("probe", &["healer", "executor", "git", "operator", "local"]),
    // The one write of an ingested error, shared by the operator's /healer API and `kubeheal ticket`.
    (
        "intake",
        &[
            "healer", "executor", "git", "operator", "local", "probe", "decide", "ticket",
        ],
    ),
    // A person's decision on a ticket, shared by the operator's /healer API and `kubeheal ticket`.
    (
        "decision",
        &[
            "healer", "executor", "git", "operator", "local", "probe", "decide", "ticket", "intake",
        ],
    ),
    ("local", &["operator", "decide", "ticket"]),
    ("operator", &["local", "decide", "ticket"]),
    // `kubeheal approve|reject`: a client of the API, nothing of the operator's.
    (
        "decide",
        &["healer", "executor", "git", "operator", "local", "probe", "ticket"],
    ),
    // `kubeheal ticket`: the same, over HealerTickets.
    ("ticket", &["healer", "executor", "git", "operator", "local", "probe"]),
];

fn sources(path: &Path, out: &mut Vec<std::path::PathBuf>) {
    if path.is_dir() {
        for entry in std::fs::read_dir(path).expect("a source folder").flatten() {
            sources(&entry.path(), out);
        }
    } else if path.is_file() && path.extension().is_some_and(|e| e == "rs") {
        out.push(path.to_owned());
    }
}

#[test]
fn no_module_imports_from_a_layer_above_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut violations = Vec::new();
    for (layer, forbidden) in RULES {
        let mut files = Vec::new();
        sources(&src.join(layer), &mut files);
        sources(&src.join(format!("{layer}.rs")), &mut files);
        assert!(!files.is_empty(), "no sources for the layer {layer}");
        for file in files {
            let text = std::fs::read_to_string(&file).expect("a source file");
            for (n, line) in text.lines().enumerate() {
                for above in *forbidden {
                    if line.contains(&format!("crate::{above}::")) || line.contains(&format!("crate::{above};")) {
                        violations.push(format!(
                            "{}:{}: {layer} names {above}: {}",
                            file.display(),
                            n + 1,
                            line.trim()
                        ));
                    }
                }
            }
        }
    }
    assert!(
        violations.is_empty(),
        "imports from a layer above:\n{}",
        violations.join("\n")
    );
}
