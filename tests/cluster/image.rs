//! The operator's image, as far as it can be proven on machines that cannot pull a base image:
//! the runtime root the Dockerfile assembles (`image/rootfs.sh`: Debian's git and CA
//! certificates, their libraries, no shell), with this build's `kubeheal` in it, run in a chroot
//! as user 65532 (the chart's `runAsUser`) under the chart's ServiceAccount. It heals a run whose
//! source is on a forge that demands a token: the Git agent's fetch, commit and push work with
//! the image's git, its credentials reach git without a shell, and the operator writes nowhere
//! but its work dir and `/tmp`.
//!
//! Needs root (chroot) and `mmdebstrap` with a Debian mirror (`.ci/run` installs it). The root
//! is built once per version of `image/rootfs.sh`, under `~/.cache/kubeheal/rootfs/`.

use std::process::Command;

use kubeheal::api::heal_run::HealRunPhase;
use serde_json::json;

use crate::heal_run::{Heal, LOGIC_FIXED, logic_healer, logic_project, status};
use crate::support::cluster::{RELEASE_NAMESPACE, spawn_watched};
use crate::support::git::{FORGE_TOKEN, forge};
use crate::support::image::{assemble_image, chroot, run};
use crate::support::node::Hold;

/// Fails the test unless it runs as root, saying `why` it must.
pub(crate) fn assert_root(why: &str) {
    let uid = Command::new("id").arg("-u").output().expect("id runs");
    assert_eq!(
        String::from_utf8_lossy(&uid.stdout).trim(),
        "0",
        "{why}, which needs root"
    );
}

/// The test's repository served by a forge that refuses anyone without the token, and the
/// Secret `forge` holding the token in the test's namespace: a HealRun's `spec.source`.
pub(crate) async fn forge_source(heal: &Heal) -> serde_json::Value {
    let (url, _) = forge(heal.origin.parent().expect("the origin's folder")).await;
    let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "forge"},
                        "stringData": {"token": FORGE_TOKEN}});
    let file = heal.work.path().join("secret.json");
    std::fs::write(&file, secret.to_string()).expect("write the Secret");
    let out = heal
        .plane
        .kubectl(["apply", "-n", &heal.ns.name, "-f", &file.display().to_string()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    json!({"url": url, "revision": "main", "secretRef": {"name": "forge"}})
}

/// Applies the logic project's run with `source` and the `healer`, and waits until an operator
/// has healed it in one cycle with the healer's fix on the heal branch.
pub(crate) async fn heals_from(heal: &Heal, healer: &str, source: serde_json::Value) {
    let mut spec = heal.spec(healer, json!({}));
    spec["source"] = source;
    heal.apply(spec);
    let run = heal.wait_phase(HealRunPhase::Healed).await;
    assert_eq!(status(&run).cycles.len(), 1, "{:?}", status(&run).message);
    assert_eq!(heal.file_on_branch("kubeheal/calc", "calc.py"), LOGIC_FIXED.trim_end());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_operator_heals_a_run_from_the_images_runtime_root_with_no_shell_as_user_65532() {
    assert_root("the image test runs the operator in a chroot");
    let (healer, _) = logic_healer().await;
    let mut heal = Heal::new("image-runtime", &logic_project(), Hold::default()).await;

    // The image: the runtime root with this build's binary, as the Dockerfile copies it.
    let image = heal.work.path().join("image");
    assemble_image(&image);
    // The whole root is the operator's user's to write, so that a write outside its work dir (an
    // emptyDir in the chart) and /tmp would happen here instead of failing on a read-only root,
    // and be found below.
    run(Command::new("chown").args(["-R", "65532:65532"]).arg(&image));

    // The chart's ServiceAccount, as the Pod would mount it.
    let token = heal.plane.service_account_token(RELEASE_NAMESPACE, "kubeheal");
    let kubeconfig =
        std::fs::read_to_string(heal.plane.kubeconfig_with_token("image-operator", &token)).expect("a kubeconfig");
    let ca = kubeconfig
        .lines()
        .find_map(|l| l.trim().strip_prefix("certificate-authority: "))
        .expect("the kubeconfig names its CA file");
    std::fs::create_dir_all(image.join("etc/kubeheal")).expect("mkdir");
    std::fs::copy(ca, image.join("etc/kubeheal/ca.crt")).expect("copy the CA");
    std::fs::write(
        image.join("etc/kubeheal/kubeconfig"),
        kubeconfig.replace(ca, "/etc/kubeheal/ca.crt"),
    )
    .expect("write the kubeconfig");

    // The source is on a forge that refuses anyone without the token.
    let source = forge_source(&heal).await;
    // Named by its path: the operator's environment (its PATH among it) is the image's.
    let mut operator = Command::new(chroot());
    operator
        .arg("--userspec=65532:65532")
        .arg(&image)
        .args(["/usr/local/bin/kubeheal", "operator", "--namespace", &heal.ns.name])
        .args(["--listen", "127.0.0.1:0", "--work-dir", "/var/cache/kubeheal"])
        .arg("--allow-cluster-internal-healers")
        .env_clear()
        .env("HOME", "/tmp")
        .env("PATH", "/usr/local/bin:/usr/bin")
        .env("KUBECONFIG", "/etc/kubeheal/kubeconfig")
        .env("KUBEHEAL_HEALER_LISTEN", "off")
        .env("RUST_LOG", "info,kube_client=warn,kube_runtime=warn");
    let before = heal.work.path().join("before-the-operator");
    std::fs::write(&before, "").expect("a marker");
    heal.operator =
        Some(spawn_watched(heal.work.path(), "operator-image", &mut operator, None).expect("the operator starts"));

    heals_from(&heal, &healer, source).await;
    // It wrote in its work dir, and nowhere else in the image.
    let written = Command::new("find")
        .arg(&image)
        .arg("-newer")
        .arg(&before)
        .args(["-not", "-path"])
        .arg(format!("{}/var/cache/kubeheal*", image.display()))
        .args(["-not", "-path"])
        .arg(format!("{}/tmp*", image.display()))
        .output()
        .expect("find runs");
    assert_eq!(
        String::from_utf8_lossy(&written.stdout).trim(),
        "",
        "files the operator wrote outside its work dir"
    );
    assert!(
        std::fs::read_dir(image.join("var/cache/kubeheal"))
            .expect("the work dir")
            .next()
            .is_some(),
        "the operator kept its clone in its work dir"
    );
}
