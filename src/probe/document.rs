//! Seed 003's "OpenAPI in": read a document (JSON or YAML, from a file or a URL), refuse what is
//! not OpenAPI 3.x with non-empty `paths` (the seed's `validateOpenAPI`), list its endpoints by
//! seed 003's endpoint ID (`METHOD /path`), and resolve the `$ref`s inside it.
//!
//! The document stays a `serde_json::Value`: the maintained typed crate (`openapiv3`) reads 3.0
//! only and refuses 3.1's JSON Schema (`type: [string, "null"]`); the 3.1 crates say they are not
//! stable yet. Probing needs only a few fields, read leniently, for both versions.

use serde_json::Value;

use super::ProbeError;

/// The HTTP methods an OpenAPI path item may hold, in the order endpoints are listed.
const METHODS: &[&str] = &["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/// A `$ref` chain longer than this is a cycle (`A → B → A`) or a mistake.
const MAX_REF_HOPS: usize = 32;

/// A validated OpenAPI 3.x document.
#[derive(Debug, Clone)]
pub struct Document {
    root: Value,
}

/// One operation of the document.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// Seed 003's endpoint ID: `GET /items/{id}`.
    pub id: String,
    /// Upper-case method.
    pub method: String,
    /// The path template, as the document writes it.
    pub path: String,
    /// The operation object.
    pub operation: Value,
    /// Parameters declared on the path item, shared by its operations.
    pub shared_parameters: Vec<Value>,
}

impl Document {
    /// Parses and validates `text`, read from `origin` (named in messages).
    pub fn parse(text: &str, origin: &str) -> Result<Document, ProbeError> {
        let root: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(json) => serde_yaml_ng::from_str(text).map_err(|yaml| {
                let trimmed = text.trim_start();
                let why = if trimmed.starts_with('{') || trimmed.starts_with('[') {
                    json.to_string()
                } else {
                    yaml.to_string()
                };
                ProbeError::Document(format!(
                    "{origin} is neither JSON nor YAML ({why}); give an OpenAPI 3.x document"
                ))
            })?,
        };
        validate(&root).map_err(|why| ProbeError::Document(format!("{origin} {why}")))?;
        Ok(Document { root })
    }

    /// The title and version the document gives itself, for messages.
    pub fn title(&self) -> String {
        let info = &self.root["info"];
        format!(
            "{} {}",
            info["title"].as_str().unwrap_or("(untitled)"),
            info["version"].as_str().unwrap_or("")
        )
        .trim()
        .to_owned()
    }

    /// Every operation, paths in name order (a JSON object keeps no order that serde_json would
    /// preserve), methods in [`METHODS`] order.
    pub fn endpoints(&self) -> Vec<Endpoint> {
        let mut out = Vec::new();
        let Some(paths) = self.root["paths"].as_object() else {
            return out;
        };
        for (path, item) in paths {
            // A path item may itself be a `$ref`; one that does not resolve has no operations.
            let Ok(item) = self.resolve(item) else { continue };
            let shared: Vec<Value> = item["parameters"].as_array().cloned().unwrap_or_default();
            for method in METHODS {
                if let Some(operation) = item.get(*method).filter(|o| o.is_object()) {
                    out.push(Endpoint {
                        id: format!("{} {path}", method.to_ascii_uppercase()),
                        method: method.to_ascii_uppercase(),
                        path: path.clone(),
                        operation: operation.clone(),
                        shared_parameters: shared.clone(),
                    });
                }
            }
        }
        out
    }

    /// `value`, or what its `$ref` (`#/components/...`, within this document) points at, followed
    /// through chains of references.
    pub fn resolve<'a>(&'a self, mut value: &'a Value) -> Result<&'a Value, String> {
        for _ in 0..MAX_REF_HOPS {
            let Some(reference) = value.get("$ref").and_then(Value::as_str) else {
                return Ok(value);
            };
            let Some(pointer) = reference.strip_prefix('#') else {
                return Err(format!(
                    "$ref {reference} points outside the document; kubeheal probe resolves only references within it (#/...)"
                ));
            };
            // A JSON pointer's `~1` is `/` and `~0` is `~`; `pointer` does that decoding.
            value = self
                .root
                .pointer(pointer)
                .ok_or_else(|| format!("$ref {reference} points at nothing in the document"))?;
        }
        Err(format!("a $ref chain is longer than {MAX_REF_HOPS} hops (a cycle?)"))
    }
}

/// Seed 003's `validateOpenAPI`, with a message for each way to fail it.
fn validate(root: &Value) -> Result<(), String> {
    let Some(object) = root.as_object() else {
        return Err("is not an OpenAPI document: its top level is not an object".to_owned());
    };
    if let Some(version) = object.get("swagger") {
        return Err(format!(
            "is a Swagger {} document; kubeheal probe reads OpenAPI 3.x: convert it first (for example \
             with `npx swagger2openapi FILE`, or export OpenAPI 3 from the framework)",
            version
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| version.to_string())
        ));
    }
    let version = match object.get("openapi") {
        Some(Value::String(v)) => v,
        Some(other) => {
            return Err(format!(
                "has \"openapi\": {other}, which is not a version string such as \"3.0.3\""
            ));
        }
        None => {
            return Err(
                "has no \"openapi\" field; an OpenAPI 3.x document starts with \"openapi\": \"3.x.y\"".to_owned(),
            );
        }
    };
    if !version.starts_with("3.") {
        return Err(format!(
            "is OpenAPI {version}; kubeheal probe reads OpenAPI 3.x documents"
        ));
    }
    match object.get("paths") {
        Some(Value::Object(paths)) if !paths.is_empty() => Ok(()),
        Some(Value::Object(_)) => Err("has no endpoints: its \"paths\" object is empty".to_owned()),
        _ => Err("has no \"paths\" object, so no endpoints to call".to_owned()),
    }
}

/// Seed 003's endpoint ID from what a person typed: `get  /items/{id}` → `GET /items/{id}`.
pub fn endpoint_id(text: &str) -> Result<String, ProbeError> {
    let mut words = text.split_whitespace();
    match (words.next(), words.next(), words.next()) {
        (Some(method), Some(path), None)
            if path.starts_with('/') && method.chars().all(|c| c.is_ascii_alphabetic()) =>
        {
            Ok(format!("{} {path}", method.to_ascii_uppercase()))
        }
        _ => Err(ProbeError::Usage(format!(
            "--endpoint {text:?} is not an endpoint ID; write it as \"METHOD /path\", e.g. \"GET /items/{{id}}\""
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> Result<Document, ProbeError> {
        Document::parse(text, "api.json")
    }

    #[test]
    fn a_swagger_2_document_is_refused_with_what_to_do() {
        let err = doc(r#"{"swagger": "2.0", "paths": {"/a": {"get": {}}}}"#).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("api.json is a Swagger 2.0 document"), "{text}");
        assert!(text.contains("convert it"), "{text}");
    }

    #[test]
    fn malformed_or_empty_documents_are_refused_each_with_its_reason() {
        for (text, expected) in [
            ("{\"openapi\": ", "is neither JSON nor YAML"),
            ("[1, 2]", "top level is not an object"),
            (r#"{"paths": {"/a": {}}}"#, "has no \"openapi\" field"),
            (r#"{"openapi": 3.0, "paths": {"/a": {}}}"#, "not a version string"),
            (r#"{"openapi": "2.0", "paths": {"/a": {}}}"#, "is OpenAPI 2.0"),
            (r#"{"openapi": "3.0.0", "paths": {}}"#, "\"paths\" object is empty"),
            (r#"{"openapi": "3.0.0"}"#, "no \"paths\" object"),
        ] {
            let err = doc(text).expect_err(text).to_string();
            assert!(err.contains(expected), "{text}: {err}");
        }
    }

    #[test]
    fn yaml_and_3_1_documents_are_read_and_endpoints_listed_by_id() {
        let d = doc("openapi: 3.1.0\ninfo: {title: T, version: '1'}\npaths:\n  /items/{id}:\n    parameters: [{name: id, in: path, required: true}]\n    get: {}\n    delete: {}\n  /health:\n    get: {}\n")
            .expect("a document");
        let ids: Vec<String> = d.endpoints().into_iter().map(|e| e.id).collect();
        assert_eq!(ids, ["GET /health", "GET /items/{id}", "DELETE /items/{id}"]);
        assert_eq!(d.endpoints()[1].shared_parameters.len(), 1);
        assert_eq!(d.title(), "T 1");
    }

    #[test]
    fn references_resolve_through_chains_and_cycles_are_reported() {
        let d = doc(r##"{"openapi": "3.0.3", "paths": {"/a": {"get": {}}},
            "components": {"schemas": {"A": {"$ref": "#/components/schemas/B"}, "B": {"type": "string"},
                                       "C": {"$ref": "#/components/schemas/C"}, "a/b": {"type": "integer"}}}}"##)
        .expect("a document");
        let a = serde_json::json!({"$ref": "#/components/schemas/A"});
        assert_eq!(d.resolve(&a).expect("resolves")["type"], "string");
        let slash = serde_json::json!({"$ref": "#/components/schemas/a~1b"});
        assert_eq!(d.resolve(&slash).expect("resolves")["type"], "integer");
        assert!(
            d.resolve(&serde_json::json!({"$ref": "#/components/schemas/C"}))
                .unwrap_err()
                .contains("cycle")
        );
        assert!(
            d.resolve(&serde_json::json!({"$ref": "other.json#/x"}))
                .unwrap_err()
                .contains("outside")
        );
    }

    #[test]
    fn endpoint_ids_are_normalised_and_nonsense_is_refused() {
        assert_eq!(endpoint_id("get   /items/{id}").expect("an id"), "GET /items/{id}");
        assert!(endpoint_id("/items").is_err());
        assert!(endpoint_id("GET items").is_err());
    }
}
