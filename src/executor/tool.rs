//! A tool run as an executor Job (a CodeFixDDS's `tool: aider`): instead of a build that tests the
//! checkout, the Job runs the tool's image over it and reports what the tool changed.
//!
//! The Pod's steps: the fetch init container checks out the tree, records it (`git write-tree`)
//! and keeps a copy of the repository's `.git` in a volume of its own (`$KUBEHEAL_PRISTINE`) that
//! the tool's container does not mount; the tool runs as a second init container, with its
//! image's own entrypoint, in the checkout, with the task in `$KUBEHEAL_TASK`; the last container
//! (the git image) stages everything with that untouched copy (`--git-dir`) against the checkout
//! and prints, as the Job's artifacts, the `git diff --raw` of the tree against the recorded one
//! and the new text of every added or modified file. Nothing the tool wrote is configuration
//! there (no `.git/config`, hooks, filters or global config of its making runs). The operator
//! reads those back ([`changes`]) and the heal loop gates them like a healer's answer: the tool
//! never commits, pushes or holds a credential of the repository.

use std::collections::BTreeMap;

/// The pristine volume's mount point (what `$KUBEHEAL_PRISTINE` names in the Pod).
pub const PRISTINE_MOUNT: &str = "/kubeheal";
/// The artifact holding `git diff --raw` of the tool's changes.
pub const MANIFEST: &str = "changes.raw";
/// The folder (under the artifacts) holding each changed file's new text, at its path.
pub const FILES: &str = "files/";
/// Most changed files whose text is printed: the artifacts hold 50 files, one is the manifest.
pub const MAX_FILES: usize = 49;

/// What the fetch step adds in a tool's Job (in the repository): the tree the tool starts from,
/// and the copy of `.git` the tool never sees.
pub const RECORD_BASE: &str =
    r#"git add -A && git write-tree > "$KUBEHEAL_PRISTINE/base-tree" && cp -a .git "$KUBEHEAL_PRISTINE/git""#;

/// The last step's command, with `$KUBEHEAL_ARTIFACTS` set. Git reads only the untouched copy's
/// configuration: no global or system file, no hooks, fsmonitor or attributes file.
pub fn report_changes_script() -> String {
    format!(
        r#"cd "$WORKSPACE/src" || exit 1
kubeheal_git() {{ GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 git --git-dir="$KUBEHEAL_PRISTINE/git" --work-tree="$WORKSPACE/src" -c core.fsmonitor=false -c core.hooksPath=/dev/null -c core.attributesFile=/dev/null -c core.quotePath=false "$@"; }}
kubeheal_base=$(cat "$KUBEHEAL_PRISTINE/base-tree") || exit 1
kubeheal_git add -A || exit 1
mkdir -p "$KUBEHEAL_ARTIFACTS/{FILES}"
kubeheal_git diff --cached --no-renames --raw "$kubeheal_base" > "$KUBEHEAL_ARTIFACTS/{MANIFEST}" || exit 1
kubeheal_git diff --cached --no-renames --name-only --diff-filter=AM "$kubeheal_base" | head -n {MAX_FILES} | while IFS= read -r kubeheal_p; do
  mkdir -p "$KUBEHEAL_ARTIFACTS/{FILES}$(dirname "$kubeheal_p")"
  kubeheal_git show ":$kubeheal_p" > "$KUBEHEAL_ARTIFACTS/{FILES}$kubeheal_p" || exit 1
done"#
    )
}

/// The files a tool changed, as full new texts (what a healer answers), from its Job's
/// artifacts (`name → bytes`). Refused, with what the tool did and why kubeheal does not take
/// it: a deletion, a link or submodule, a binary file, a change that did not come back whole, or
/// no change at all.
pub fn changes(artifacts: &BTreeMap<String, Vec<u8>>) -> Result<BTreeMap<String, String>, String> {
    let files = changed_files(artifacts)?;
    if files.is_empty() {
        return Err("the tool changed no file".into());
    }
    Ok(files)
}

/// Like [`changes`], but no change at all is an answer too (empty): a regenerate command that
/// finds the generated code up to date.
pub fn changed_files(artifacts: &BTreeMap<String, Vec<u8>>) -> Result<BTreeMap<String, String>, String> {
    let manifest = artifacts
        .get(MANIFEST)
        .ok_or("the tool's Job reported no changes (its last step did not run to its end)")?;
    let manifest = String::from_utf8_lossy(manifest);
    let entries: Vec<&str> = manifest.lines().filter(|l| !l.is_empty()).collect();
    let mut files = BTreeMap::new();
    for entry in &entries {
        // `:<old mode> <new mode> <old sha> <new sha> <status>\t<path>`
        let (meta, path) = entry
            .split_once('\t')
            .ok_or_else(|| format!("the tool's change list has a line kubeheal cannot read: {entry:?}"))?;
        let fields: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
        let [_, new_mode, _, _, status] = fields[..] else {
            return Err(format!(
                "the tool's change list has a line kubeheal cannot read: {entry:?}"
            ));
        };
        if path.starts_with('"') {
            return Err(format!(
                "the tool wrote a file whose name holds control characters ({path}); kubeheal does not commit such names"
            ));
        }
        match status {
            "D" => {
                return Err(format!(
                    "the tool deleted {path}; kubeheal commits changed and new files only"
                ));
            }
            "A" | "M" => {}
            other => {
                return Err(format!(
                    "the tool changed {path} in a way kubeheal does not commit (git status {other})"
                ));
            }
        }
        if new_mode != "100644" && new_mode != "100755" {
            return Err(format!(
                "the tool made {path} a symbolic link or submodule (mode {new_mode}); kubeheal commits regular files only"
            ));
        }
        let Some(bytes) = artifacts.get(&format!("{FILES}{path}")) else {
            return Err(format!(
                "the tool changed {} files; kubeheal reads back at most {MAX_FILES}, and {path} did not come back",
                entries.len()
            ));
        };
        let text = String::from_utf8(bytes.clone())
            .map_err(|_| format!("the tool wrote {path} as a binary file; kubeheal commits text files only"))?;
        files.insert(path.to_owned(), text);
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

    fn line(old: &str, new: &str, status: &str, path: &str) -> String {
        format!(":{old} {new} {SHA} {SHA} {status}\t{path}\n")
    }

    fn artifacts(manifest: &str, files: &[(&str, &str)]) -> BTreeMap<String, Vec<u8>> {
        let mut all = BTreeMap::from([(MANIFEST.to_owned(), manifest.as_bytes().to_vec())]);
        for (path, text) in files {
            all.insert(format!("{FILES}{path}"), text.as_bytes().to_vec());
        }
        all
    }

    #[test]
    fn added_and_modified_files_come_back_with_their_text() {
        let manifest = line("100644", "100644", "M", "calc.py") + &line("000000", "100755", "A", "bin/run.sh");
        let got = changes(&artifacts(
            &manifest,
            &[
                ("calc.py", "def add(a, b):\n    return a + b\n"),
                ("bin/run.sh", "#!/bin/sh\n"),
            ],
        ))
        .unwrap();
        assert_eq!(got.keys().collect::<Vec<_>>(), ["bin/run.sh", "calc.py"]);
        assert_eq!(got["calc.py"], "def add(a, b):\n    return a + b\n");
    }

    #[test]
    fn what_kubeheal_does_not_commit_is_refused_saying_what_the_tool_did() {
        let cases = [
            (String::new(), "changed no file"),
            (line("100644", "000000", "D", "calc.py"), "deleted calc.py"),
            (line("100644", "120000", "T", "calc.py"), "git status T"),
            (line("000000", "120000", "A", "link"), "symbolic link"),
            (line("000000", "160000", "A", "vendor/lib"), "submodule"),
            (line("000000", "100644", "A", "\"a\\nb\""), "control characters"),
            (line("000000", "100644", "A", "lost.py"), "did not come back"),
            ("garbage\n".to_owned(), "cannot read"),
        ];
        for (manifest, said) in cases {
            let error = changes(&artifacts(&manifest, &[])).unwrap_err();
            assert!(error.contains(said), "{manifest:?}: {error}");
        }
        let binary = BTreeMap::from([
            (
                MANIFEST.to_owned(),
                line("000000", "100644", "A", "logo.png").into_bytes(),
            ),
            (format!("{FILES}logo.png"), vec![0x89, 0x50, 0xff, 0xfe]),
        ]);
        assert!(changes(&binary).unwrap_err().contains("binary"));
        assert!(
            changes(&BTreeMap::new())
                .unwrap_err()
                .contains("did not run to its end")
        );
    }

    #[test]
    fn no_change_is_an_answer_of_its_own_only_where_it_is_asked_for() {
        assert_eq!(changed_files(&artifacts("", &[])), Ok(BTreeMap::new()));
        assert!(changes(&artifacts("", &[])).unwrap_err().contains("changed no file"));
        assert!(
            changed_files(&BTreeMap::new())
                .unwrap_err()
                .contains("did not run to its end"),
            "a Job that did not report is not `no change`"
        );
        let deleted = line("100644", "000000", "D", "gen/old.py");
        assert!(
            changed_files(&artifacts(&deleted, &[]))
                .unwrap_err()
                .contains("deleted")
        );
    }
}
