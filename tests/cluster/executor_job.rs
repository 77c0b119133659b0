//! The Job executor against the real control plane, with the test node of
//! `tests/support/node.rs` playing the kubelet's part (it says exactly how). The Job, its Pod,
//! the deadline, the failure policy, the log proxying, the ConfigMaps and owner references are
//! the real API server and kube-controller-manager.

use std::path::Path;
use std::time::Duration;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::Resource;
use kube::api::{Api, DeleteParams, ListParams};
use kubeheal::api::HealRun;
use kubeheal::api::heal_run::ProjectType;
use kubeheal::api::shared::{ErrorClass, GitSource, RunStatus};
use kubeheal::executor::RunRequest;
use kubeheal::executor::job::{JobExecutor, JobRequest, kept_log};

use crate::support::cluster::control_plane;
use crate::support::git::git;
use crate::support::node::{kubelet, run_node};

/// A Git repository with a build script, as a `file://` source; returns (url, commit).
fn repository(dir: &Path, script: &str) -> (String, String) {
    let git = |args: &[&str]| git(dir, args);
    git(&["init", "-q"]);
    std::fs::write(dir.join("check.sh"), script).expect("write");
    std::fs::write(dir.join("greeting.txt"), "hello\n").expect("write");
    git(&["add", "."]);
    git(&["commit", "-qm", "initial"]);
    (format!("file://{}", dir.display()), git(&["rev-parse", "HEAD"]))
}

struct Setup {
    ns: crate::support::cluster::TestNamespace,
    client: kube::Client,
    request: JobRequest,
    _repo: tempfile::TempDir,
    node: tokio::task::JoinHandle<()>,
}

async fn setup(test: &str, script: &str, image: &str, timeout: Duration) -> Setup {
    let plane = control_plane();
    plane.ensure_controller_manager();
    let logs = kubelet(plane);
    let ns = plane.namespace(test);
    let client = plane.client().await;
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/healrun.yaml");
    let out = plane.kubectl([
        "apply",
        "--server-side",
        "-n",
        &ns.name,
        "-f",
        &path.display().to_string(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let run = Api::<HealRun>::namespaced(client.clone(), &ns.name)
        .get("payments-api")
        .await
        .expect("the HealRun");
    let repo = tempfile::tempdir().expect("a temp dir");
    let (url, commit) = repository(repo.path(), script);
    let request = JobRequest {
        name: format!("payments-api-c1-{}", &commit[..8]),
        labels: kubeheal::api::shared::heal_run_labels("payments-api"),
        owner: run.controller_owner_ref(&()).expect("an owner reference"),
        namespace: ns.name.clone(),
        commit: commit.clone(),
        run: RunRequest {
            cycle: 1,
            source: GitSource {
                url,
                ..GitSource::default()
            },
            revision: Some(commit),
            patches: vec!["--- a/greeting.txt\n+++ b/greeting.txt\n@@ -1 +1 @@\n-hello\n+hello, patched\n".into()],
            project_type: ProjectType::Auto,
            image: Some(image.into()),
            command: Some("sh ./check.sh".into()),
            timeout,
            secrets: vec!["s3cr3t-value-from-a-secret".into()],
            verify: None,
        },
        container: Default::default(),
        tool: None,
        probe_image: None,
    };
    let node = run_node(client.clone(), ns.name.clone(), logs);
    Setup {
        ns,
        client,
        request,
        _repo: repo,
        node,
    }
}

#[tokio::test]
async fn a_failing_build_in_a_job_gives_its_exit_code_and_a_redacted_log_that_survives_the_pod() {
    let script = "cat greeting.txt\necho 'token s3cr3t-value-from-a-secret'\necho 'FAILED tests/test_x.py::test_y' >&2\nexit 3\n";
    let s = setup(
        "job-failing-build",
        script,
        "python:3.12-slim",
        Duration::from_secs(120),
    )
    .await;
    let execution = JobExecutor::new(s.client.clone())
        .execute(&s.request)
        .await
        .expect("the Job runs");
    let e = &execution.envelope;
    assert_eq!(e.run_id, s.request.job_name());
    assert_eq!(e.status, RunStatus::Error, "{e:?}");
    assert_eq!(e.exit_code, Some(3));
    assert_eq!(e.error_class, Some(ErrorClass::RuntimeError));
    assert!(
        execution.log.contains("hello, patched"),
        "the patch was not applied: {}",
        execution.log
    );
    assert!(
        execution.log.contains("FAILED tests/test_x.py::test_y"),
        "{}",
        execution.log
    );
    assert!(
        !execution.log.contains("s3cr3t-value") && e.redactions_applied,
        "{}",
        execution.log
    );

    // The Job as the API server stored it: hardened, bounded, owned.
    let job = Api::<Job>::namespaced(s.client.clone(), &s.ns.name)
        .get(&s.request.job_name())
        .await
        .expect("the Job");
    let spec = job.spec.clone().expect("spec");
    assert_eq!(spec.backoff_limit, Some(0));
    assert_eq!(spec.active_deadline_seconds, Some(120));
    assert!(spec.ttl_seconds_after_finished.is_some() && spec.pod_failure_policy.is_some());
    let pod_spec = spec.template.spec.expect("pod spec");
    assert_eq!(pod_spec.automount_service_account_token, Some(false));
    for c in pod_spec
        .containers
        .iter()
        .chain(pod_spec.init_containers.iter().flatten())
    {
        let sc = c.security_context.clone().expect("a security context");
        assert_eq!(sc.run_as_non_root, Some(true));
        assert_eq!(sc.allow_privilege_escalation, Some(false));
        assert_eq!(sc.capabilities.and_then(|c| c.drop), Some(vec!["ALL".to_owned()]));
        assert_eq!(sc.seccomp_profile.map(|p| p.type_), Some("RuntimeDefault".to_owned()));
        assert!(
            c.resources
                .as_ref()
                .and_then(|r| r.limits.as_ref())
                .is_some_and(|l| l.contains_key("memory"))
        );
    }
    assert_eq!(job.metadata.owner_references.expect("owned")[0].name, "payments-api");

    // The kept log outlives the Pod.
    let pods: Api<Pod> = Api::namespaced(s.client.clone(), &s.ns.name);
    pods.delete_collection(&DeleteParams::default().grace_period(0), &ListParams::default())
        .await
        .expect("pods deleted");
    let kept = kept_log(s.client.clone(), &s.ns.name, &s.request.job_name())
        .await
        .expect("read")
        .expect("the log is kept");
    assert_eq!(kept, execution.log);
    s.node.abort();
}

#[tokio::test]
async fn the_same_execution_twice_reuses_its_job_and_a_passing_build_succeeds() {
    let s = setup(
        "job-idempotent",
        "cat greeting.txt\n",
        "python:3.12-slim",
        Duration::from_secs(120),
    )
    .await;
    let executor = JobExecutor::new(s.client.clone());
    let first = executor.execute(&s.request).await.expect("the Job runs");
    assert_eq!(first.envelope.status, RunStatus::Success, "{:?}", first.envelope);
    // The second time, as a restarted operator asks: the same name finds the same Job.
    let second = JobExecutor::new(s.client.clone())
        .execute(&s.request)
        .await
        .expect("the Job is found");
    assert_eq!(second.envelope.run_id, first.envelope.run_id);
    let jobs = Api::<Job>::namespaced(s.client.clone(), &s.ns.name)
        .list(&ListParams::default())
        .await
        .expect("list");
    assert_eq!(jobs.items.len(), 1, "a second Job was created");
    s.node.abort();
}

#[tokio::test]
async fn each_node_failure_reason_gives_its_error_class() {
    for (image, timeout, class) in [
        ("kubeheal-test/oom", Duration::from_secs(120), ErrorClass::OomKilled),
        ("kubeheal-test/missing", Duration::from_secs(120), ErrorClass::ImagePull),
        ("kubeheal-test/hang", Duration::from_secs(3), ErrorClass::Timeout),
    ] {
        let s = setup(
            &format!("job-{}", image.rsplit('/').next().unwrap_or("x")),
            "echo running\n",
            image,
            timeout,
        )
        .await;
        let execution = JobExecutor::new(s.client.clone())
            .execute(&s.request)
            .await
            .expect("the Job runs");
        assert_eq!(
            execution.envelope.error_class,
            Some(class),
            "{image}: {:?}",
            execution.envelope
        );
        assert!(execution.envelope.suggested_fix.is_some());
        s.node.abort();
    }
}

#[tokio::test]
async fn a_job_keeps_its_artifacts_and_tool_versions_and_its_envelope_passes_seed_003s_validator() {
    let script = "mkdir -p \"$KUBEHEAL_ARTIFACTS/reports\"\n\
        printf '<testsuite tests=\"1\"/>' > \"$KUBEHEAL_ARTIFACTS/reports/junit.xml\"\n\
        echo 'token s3cr3t-value-from-a-secret' > \"$KUBEHEAL_ARTIFACTS/notes.txt\"\n\
        echo built\n";
    let s = setup("job-artifacts", script, "python:3.12-slim", Duration::from_secs(120)).await;
    let execution = JobExecutor::new(s.client.clone())
        .execute(&s.request)
        .await
        .expect("the Job runs");
    let e = &execution.envelope;
    assert_eq!(e.status, RunStatus::Success, "{e:?}\n{}", execution.log);
    assert!(execution.log.contains("built"), "{}", execution.log);
    assert!(
        !execution.log.contains("@@kubeheal"),
        "kubeheal's sections are not the build's log: {}",
        execution.log
    );
    let names: Vec<&str> = e.artifacts.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["notes.txt", "reports/junit.xml"], "{e:?}");
    assert_eq!(e.artifacts[1].mime, "application/xml");
    assert!(e.redactions_applied, "the secret in notes.txt is redacted");
    // The artifacts are in a ConfigMap the run owns, where their URLs say.
    let url = &e.artifacts[0].url;
    let (cm_name, key) = url
        .strip_prefix(&format!("configmap://{}/", s.ns.name))
        .and_then(|rest| rest.split_once('/'))
        .unwrap_or_else(|| panic!("a configmap URL: {url}"));
    let cm = Api::<k8s_openapi::api::core::v1::ConfigMap>::namespaced(s.client.clone(), &s.ns.name)
        .get(cm_name)
        .await
        .expect("the artifacts ConfigMap");
    let notes = &cm.binary_data.expect("binary data")[key].0;
    assert_eq!(String::from_utf8_lossy(notes), "token [REDACTED:SECRET]\n");
    // The environment as the build container's shell saw it.
    let env = &e.environment_metadata;
    assert!(env.contains_key("python3") && env.contains_key("os"), "{env:?}");
    assert_eq!((e.http_status, e.content_type.as_str()), (200, "text/plain"));
    crate::support::seed003::assert_seed_envelopes(&[e.seed_json()]);
    s.node.abort();
}
