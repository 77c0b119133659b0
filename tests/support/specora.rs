//! Specora Core — seed 004's own implementation, `specora-core` from PyPI — in a virtualenv
//! built once under `~/.cache/kubeheal/specora-core-<version>/`: its contract meta-schemas, and
//! its `validate_contract`, whose messages become tickets and which judges the fixed contracts.
//! Nothing of it is in this repository: the contract fixes are tried on the real schemas and
//! judged by the real validator.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The release the tests use.
pub const VERSION: &str = "0.1.0";

pub struct Specora {
    python: PathBuf,
    /// `spec/meta/` as the package installs it.
    meta: PathBuf,
}

/// The cached virtualenv, built on first use (a machine without network to PyPI fails here,
/// saying so).
pub fn specora() -> &'static Specora {
    static SPECORA: OnceLock<Specora> = OnceLock::new();
    SPECORA.get_or_init(|| {
        let home = PathBuf::from(std::env::var("HOME").expect("HOME is set"));
        let venv = home.join(format!(".cache/kubeheal/specora-core-{VERSION}"));
        let python = venv.join("bin/python");
        if !python.exists() {
            build(&venv);
        }
        let meta = run(
            &python,
            "import forge.parser.validator as v; print(v._find_meta_dir())",
            None,
        );
        Specora {
            python,
            meta: PathBuf::from(meta.trim()),
        }
    })
}

/// A virtualenv with specora-core, made beside `venv` and renamed into place, so that another
/// test process never sees half of one.
fn build(venv: &Path) {
    let parent = venv.parent().expect("a cache folder");
    std::fs::create_dir_all(parent).expect("make the cache folder");
    let building = tempfile::tempdir_in(parent).expect("a folder to build in");
    let status = Command::new("python3")
        .args(["-m", "venv"])
        .arg(building.path())
        .status()
        .expect("python3 runs");
    assert!(status.success(), "python3 -m venv failed");
    let out = Command::new(building.path().join("bin/pip"))
        .args(["install", "--quiet", "--disable-pip-version-check"])
        .arg(format!("specora-core=={VERSION}"))
        .output()
        .expect("pip runs");
    assert!(
        out.status.success(),
        "pip install specora-core=={VERSION} failed (the tests need PyPI): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let built = building.keep();
    if std::fs::rename(&built, venv).is_err() {
        // Another process was first: its copy is used, this one thrown away.
        let _ = std::fs::remove_dir_all(&built);
    }
    assert!(venv.join("bin/python").exists(), "no virtualenv at {}", venv.display());
}

fn run(python: &Path, code: &str, stdin_file: Option<&Path>) -> String {
    let mut command = Command::new(python);
    command.args(["-c", code]);
    if let Some(file) = stdin_file {
        command.arg(file);
    }
    let out = command.output().expect("python runs");
    assert!(
        out.status.success(),
        "specora's python failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

impl Specora {
    /// The virtualenv's python, which runs Specora's CLI: `python -c 'from forge.cli.main
    /// import cli; cli()' forge ...` (the virtualenv's own `specora-core` script names the
    /// folder it was built in, before it was renamed into place).
    pub fn python(&self) -> &Path {
        &self.python
    }

    /// Specora's meta-schemas as files of a repository: (`spec/meta/<name>`, content).
    pub fn meta_files(&self) -> Vec<(String, String)> {
        let mut files: Vec<(String, String)> = std::fs::read_dir(&self.meta)
            .expect("specora's spec/meta")
            .flatten()
            .map(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                let text = std::fs::read_to_string(entry.path()).expect("a meta-schema");
                (format!("spec/meta/{name}"), text)
            })
            .filter(|(name, _)| name.ends_with(".meta.yaml"))
            .collect();
        files.sort();
        assert!(files.len() >= 5, "specora's meta-schemas are missing: {files:?}");
        files
    }

    /// What Specora's own `validate_contract` says of the contract `yaml`: (path, message),
    /// as its `healer validate` files them as tickets.
    pub fn validate(&self, yaml: &str) -> Vec<(String, String)> {
        let dir = tempfile::tempdir().expect("a temp dir");
        let file = dir.path().join("contract.yaml");
        std::fs::write(&file, yaml).expect("write the contract");
        let out = run(
            &self.python,
            "import json, sys, yaml\n\
             from forge.parser.validator import validate_contract\n\
             errors = validate_contract(yaml.safe_load(open(sys.argv[1])))\n\
             print(json.dumps([[e.path, e.message] for e in errors if e.severity == 'error']))",
            Some(&file),
        );
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("specora's answer is not JSON ({e}): {out}"))
    }
}
