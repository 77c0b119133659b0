//! The committed CRD YAML (crds/ and the Helm chart's copy) must be what the Rust types render.

#[test]
fn committed_crds_match_the_rust_types() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    if let Err(stale) = kubeheal::crdgen::check(root) {
        panic!("{stale}");
    }
}
