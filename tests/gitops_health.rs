//! The GitOps health checks in `integrations/`: Argo CD's `health.lua` of each kind run by a real
//! Lua 5.1 interpreter (Argo CD's gopher-lua speaks 5.1) over the cases of its `health_test.yaml`
//! — Argo CD's own test format — and Flux's `healthCheckExprs` evaluated by a CEL interpreter
//! over the same objects, each giving the state the Argo CD case implies.

use std::path::{Path, PathBuf};

use serde_json::Value;

fn customizations() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("integrations/argocd/resource_customizations/kubeheal.dev")
}

/// Each kind's cases: (object, expected Argo CD status, expected message).
fn cases(kind: &str) -> Vec<(Value, String, String)> {
    let dir = customizations().join(kind);
    let tests: Value =
        serde_yaml_ng::from_str(&std::fs::read_to_string(dir.join("health_test.yaml")).expect("health_test.yaml"))
            .expect("YAML");
    tests["tests"]
        .as_array()
        .expect("a list of tests")
        .iter()
        .map(|t| {
            let input = dir.join(t["inputPath"].as_str().expect("inputPath"));
            let object: Value =
                serde_yaml_ng::from_str(&std::fs::read_to_string(&input).expect("the input")).expect("YAML");
            (
                object,
                t["healthStatus"]["status"].as_str().expect("status").to_owned(),
                t["healthStatus"]["message"].as_str().expect("message").to_owned(),
            )
        })
        .collect()
}

const KINDS: [&str; 3] = ["HealRun", "CodeFixDDS", "HealerTicket"];

#[test]
fn each_argo_cd_health_script_gives_the_status_and_message_of_its_test_cases() {
    for kind in KINDS {
        let script = std::fs::read_to_string(customizations().join(kind).join("health.lua")).expect("health.lua");
        let cases = cases(kind);
        assert!(cases.len() >= 5, "{kind}: too few cases");
        for (object, status, message) in cases {
            let lua = mlua::Lua::new();
            let obj = mlua::LuaSerdeExt::to_value(&lua, &object).expect("a Lua value");
            lua.globals().set("obj", obj).expect("obj");
            let hs: mlua::Table = lua
                .load(&script)
                .set_name(format!("{kind}/health.lua"))
                .eval()
                .unwrap_or_else(|e| panic!("{kind}: the script fails: {e}"));
            let got: (String, String) = (hs.get("status").expect("status"), hs.get("message").expect("message"));
            assert_eq!(got, (status, message), "{kind}: {object}");
        }
    }
}

/// What Flux decides from a kind's expressions: `failed` first, then `current`; otherwise the
/// resource is still in progress.
fn flux_state(exprs: &Value, object: &Value) -> &'static str {
    let mut context = cel_interpreter::Context::default();
    for (name, value) in object.as_object().expect("an object") {
        context.add_variable(name.as_str(), value.clone()).expect("a CEL value");
    }
    let holds = |key: &str| {
        exprs[key].as_str().is_some_and(|source| {
            let program = cel_interpreter::Program::compile(source).unwrap_or_else(|e| panic!("{source}: {e}"));
            match program.execute(&context) {
                Ok(cel_interpreter::Value::Bool(b)) => b,
                // A field the object does not have yet: Flux waits, as for in progress.
                Ok(other) => panic!("{source} gave {other:?}, not a bool"),
                Err(_) => false,
            }
        })
    };
    if holds("failed") {
        "Failed"
    } else if holds("current") {
        "Current"
    } else {
        "InProgress"
    }
}

#[test]
fn the_flux_health_expressions_agree_with_the_argo_cd_checks() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("integrations/flux/health-checks.yaml");
    let kustomization: Value =
        serde_yaml_ng::from_str(&std::fs::read_to_string(file).expect("health-checks.yaml")).expect("YAML");
    let exprs = kustomization["spec"]["healthCheckExprs"]
        .as_array()
        .expect("healthCheckExprs");
    for kind in KINDS {
        let kind_exprs = exprs.iter().find(|e| e["kind"] == kind).expect("an entry per kind");
        for (object, argo, _) in cases(kind) {
            let expected = match argo.as_str() {
                "Healthy" => "Current",
                "Degraded" => "Failed",
                _ => "InProgress",
            };
            assert_eq!(flux_state(kind_exprs, &object), expected, "{kind}: {object}");
        }
    }
}
