//! Inputs for one call, generated from the endpoint's schema the way seed 003's form generation
//! fills a form a person would submit unchanged: a field's default, else its first enum value,
//! else its example, else — only when the field is required — a placeholder of its type.
//! Optional fields with none of these are left out. Query, path and header parameters; a JSON
//! request body; objects nested to depth 2 (deeper ones are sent as `{}`, where the seed falls
//! back to a JSON editor); `$ref`s within the document.

use serde_json::{Map, Value, json};

use super::document::{Document, Endpoint};

/// Seed 003: nested objects are generated to this depth.
pub const MAX_DEPTH: usize = 2;

/// What one call sends.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Inputs {
    /// Path parameters by name, to fill the path template.
    pub path: Vec<(String, String)>,
    pub query: Vec<(String, String)>,
    pub headers: Vec<(String, String)>,
    /// The JSON request body.
    pub body: Option<Value>,
    /// What could not be generated as the document asks, said to the user.
    pub warnings: Vec<String>,
}

/// The inputs of `endpoint`. An error says why no call can be made (a reference that does not
/// resolve, a required parameter kubeheal cannot send).
pub fn build(doc: &Document, endpoint: &Endpoint) -> Result<Inputs, String> {
    let mut inputs = Inputs::default();
    let mut parameters: Vec<&Value> = Vec::new();
    // The operation's parameters override the path item's of the same name and place.
    let own: Vec<&Value> = endpoint.operation["parameters"]
        .as_array()
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    for parameter in endpoint.shared_parameters.iter().chain(own) {
        let parameter = doc.resolve(parameter)?;
        let key = (&parameter["name"], &parameter["in"]);
        parameters.retain(|p| (&p["name"], &p["in"]) != key);
        parameters.push(parameter);
    }
    for parameter in parameters {
        let name = parameter["name"]
            .as_str()
            .ok_or_else(|| format!("a parameter of {} has no name", endpoint.id))?;
        let place = parameter["in"].as_str().unwrap_or("");
        // Path parameters are always required (OpenAPI says so even when the document forgets).
        let required = place == "path" || parameter["required"].as_bool().unwrap_or(false);
        let mut generator = Generator {
            doc,
            warnings: &mut inputs.warnings,
        };
        let schema = parameter.get("schema").cloned().unwrap_or_else(|| json!({}));
        let value = match generator.value(&schema, required, 0, name)? {
            // A parameter's own example comes after its schema's default and enum.
            Some(v) if has_default_or_enum(doc, &schema) => Some(v),
            other => parameter.get("example").cloned().or(other),
        };
        let Some(value) = value else { continue };
        match place {
            "path" => inputs.path.push((name.to_owned(), scalar(&value, ","))),
            "query" => match value {
                Value::Array(items) => {
                    for item in items {
                        inputs.query.push((name.to_owned(), scalar(&item, ",")));
                    }
                }
                other => inputs.query.push((name.to_owned(), scalar(&other, ","))),
            },
            "header" => inputs.headers.push((name.to_owned(), scalar(&value, ","))),
            other if required => {
                return Err(format!(
                    "{} needs the {other} parameter {name}, which kubeheal probe cannot send (seed 003 supports query, path and header parameters)",
                    endpoint.id
                ));
            }
            other => inputs
                .warnings
                .push(format!("the optional {other} parameter {name} is not sent")),
        }
    }
    if let Some(body) = endpoint.operation.get("requestBody") {
        let body = doc.resolve(body)?;
        let required = body["required"].as_bool().unwrap_or(false);
        let content = body["content"].as_object();
        let json_schema = content.and_then(|c| {
            c.iter()
                .find(|(media, _)| is_json(media))
                .map(|(_, m)| m.get("schema").cloned().unwrap_or_else(|| json!({})))
        });
        match json_schema {
            Some(schema) => {
                let mut generator = Generator {
                    doc,
                    warnings: &mut inputs.warnings,
                };
                inputs.body = generator.value(&schema, true, 0, "the request body")?;
            }
            None => {
                let media: Vec<&String> = content.map(|c| c.keys().collect()).unwrap_or_default();
                let note = format!(
                    "the request body ({}) is not sent: seed 003 generates application/json bodies only",
                    media.iter().map(|m| m.as_str()).collect::<Vec<_>>().join(", ")
                );
                if required {
                    return Err(format!(
                        "{} requires a body kubeheal cannot generate: {note}",
                        endpoint.id
                    ));
                }
                inputs.warnings.push(note);
            }
        }
    }
    Ok(inputs)
}

/// `application/json`, `application/problem+json` and the like.
pub fn is_json(media: &str) -> bool {
    let essence = media.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    essence == "application/json" || (essence.starts_with("application/") && essence.ends_with("+json"))
}

fn has_default_or_enum(doc: &Document, schema: &Value) -> bool {
    let schema = doc.resolve(schema).unwrap_or(schema);
    schema.get("default").is_some() || schema["enum"].as_array().is_some_and(|e| !e.is_empty())
}

/// A parameter's value as text: strings as they are, other JSON as JSON, arrays joined.
fn scalar(value: &Value, separator: &str) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .map(|i| scalar(i, separator))
            .collect::<Vec<_>>()
            .join(separator),
        other => other.to_string(),
    }
}

struct Generator<'a> {
    doc: &'a Document,
    warnings: &'a mut Vec<String>,
}

impl Generator<'_> {
    /// The value of a field with `schema`, or `None` when an optional field has nothing to offer.
    /// `what` names the field in warnings.
    fn value(&mut self, schema: &Value, required: bool, depth: usize, what: &str) -> Result<Option<Value>, String> {
        let schema = self.doc.resolve(schema)?;
        if let Some(parts) = schema["allOf"].as_array() {
            return self.value(&self.merge(parts)?, required, depth, what);
        }
        for key in ["oneOf", "anyOf"] {
            if let Some(choices) = schema[key].as_array() {
                // `anyOf: [X, {type: null}]` is how 3.1 and FastAPI write an optional X.
                let choice = choices
                    .iter()
                    .find(|c| self.doc.resolve(c).map(|c| c["type"] != "null").unwrap_or(false))
                    .or(choices.first());
                if let Some(choice) = choice {
                    if choices.len() > 1 && required {
                        self.warnings
                            .push(format!("{what}: generated from the first choice of its {key}"));
                    }
                    return self.value(choice, required, depth, what);
                }
            }
        }
        if let Some(v) = schema.get("default") {
            return Ok(Some(v.clone()));
        }
        if let Some(v) = schema["enum"].as_array().and_then(|e| e.first()) {
            return Ok(Some(v.clone()));
        }
        if let Some(v) = schema.get("const") {
            return Ok(Some(v.clone()));
        }
        if let Some(v) = schema.get("example") {
            return Ok(Some(v.clone()));
        }
        if let Some(v) = schema["examples"].as_array().and_then(|e| e.first()) {
            return Ok(Some(v.clone()));
        }
        let kind = type_of(schema);
        if kind == "object" {
            return self.object(schema, required, depth, what);
        }
        if !required {
            return Ok(None);
        }
        Ok(Some(match kind {
            "array" => {
                let min = schema["minItems"].as_u64().unwrap_or(0);
                match (min, schema.get("items")) {
                    (1.., Some(items)) => match self.value(items, true, depth + 1, what)? {
                        Some(item) => Value::Array(vec![item; min.min(100) as usize]),
                        None => json!([]),
                    },
                    _ => json!([]),
                }
            }
            "integer" => json!(integer_placeholder(schema)),
            "number" => json!(schema["minimum"].as_f64().unwrap_or(1.0)),
            "boolean" => json!(false),
            "null" => Value::Null,
            _ => json!(string_placeholder(schema)),
        }))
    }

    /// An object's required properties and those with a default, enum or example.
    fn object(&mut self, schema: &Value, required: bool, depth: usize, what: &str) -> Result<Option<Value>, String> {
        if depth > MAX_DEPTH {
            if !required {
                return Ok(None);
            }
            self.warnings.push(format!(
                "{what} is nested deeper than {MAX_DEPTH} objects; sent as {{}} (seed 003 hands such objects to a JSON editor)"
            ));
            return Ok(Some(json!({})));
        }
        let needed: Vec<&str> = schema["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut out = Map::new();
        if let Some(properties) = schema["properties"].as_object() {
            for (name, property) in properties {
                if let Some(v) = self.value(property, needed.contains(&name.as_str()), depth + 1, name)? {
                    out.insert(name.clone(), v);
                }
            }
        }
        if out.is_empty() && !required {
            return Ok(None);
        }
        Ok(Some(Value::Object(out)))
    }

    /// The schemas of an `allOf`, as one: their properties and required lists together.
    fn merge(&self, parts: &[Value]) -> Result<Value, String> {
        let mut merged = Map::new();
        let mut properties = Map::new();
        let mut required = Vec::new();
        for part in parts {
            let part = self.doc.resolve(part)?;
            let part = match part["allOf"].as_array() {
                Some(inner) => self.merge(inner)?,
                None => part.clone(),
            };
            if let Some(p) = part["properties"].as_object() {
                properties.extend(p.clone());
            }
            if let Some(r) = part["required"].as_array() {
                required.extend(r.iter().cloned());
            }
            if let Value::Object(fields) = part {
                for (k, v) in fields {
                    if k != "properties" && k != "required" {
                        merged.insert(k, v);
                    }
                }
            }
        }
        if !properties.is_empty() {
            merged.insert("properties".into(), Value::Object(properties));
            merged.insert("type".into(), json!("object"));
        }
        if !required.is_empty() {
            merged.insert("required".into(), Value::Array(required));
        }
        Ok(Value::Object(merged))
    }
}

/// A schema's type: the first that is not `null` of a 3.1 type list; `object` for a schema with
/// properties and no type.
fn type_of(schema: &Value) -> &str {
    match &schema["type"] {
        Value::String(t) => t,
        Value::Array(types) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ if schema.get("properties").is_some() => "object",
        _ => "string",
    }
}

fn integer_placeholder(schema: &Value) -> i64 {
    let mut value = match (schema["minimum"].as_i64(), schema["exclusiveMinimum"].as_i64()) {
        (_, Some(min)) => min + 1,
        (Some(min), None) => min,
        _ => 1,
    };
    if let Some(max) = schema["maximum"].as_i64() {
        value = value.min(max);
    }
    value
}

/// A string a server would take for `schema`'s format, padded to its `minLength`.
fn string_placeholder(schema: &Value) -> String {
    let mut text = match schema["format"].as_str().unwrap_or("") {
        "date" => "2024-01-01",
        "date-time" => "2024-01-01T00:00:00Z",
        "time" => "00:00:00",
        "email" => "user@example.com",
        "uuid" => "00000000-0000-4000-8000-000000000000",
        "uri" | "url" => "https://example.com/",
        "hostname" => "example.com",
        "ipv4" => "192.0.2.1",
        "ipv6" => "2001:db8::1",
        "byte" => "c3RyaW5n",
        _ => "string",
    }
    .to_owned();
    let min = schema["minLength"].as_u64().unwrap_or(0) as usize;
    while text.len() < min.min(10_000) {
        text.push('x');
    }
    if let Some(max) = schema["maxLength"].as_u64() {
        text.truncate(max as usize);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint_inputs(operation: Value) -> Result<Inputs, String> {
        let doc = Document::parse(
            &json!({
                "openapi": "3.0.3",
                "paths": {"/items/{id}": {"post": operation}},
                "components": {"schemas": {
                    "Owner": {"type": "object", "required": ["name"], "properties": {
                        "name": {"type": "string"},
                        "address": {"type": "object", "required": ["city"], "properties": {
                            "city": {"type": "string", "default": "Ghent"},
                            "geo": {"type": "object", "required": ["lat"], "properties": {"lat": {"type": "number"}}}
                        }}
                    }}
                }}
            })
            .to_string(),
            "doc",
        )
        .expect("a document");
        let endpoint = doc.endpoints().remove(0);
        build(&doc, &endpoint)
    }

    #[test]
    fn parameters_take_default_then_first_enum_then_example_then_a_placeholder_when_required() {
        let inputs = endpoint_inputs(json!({"parameters": [
            {"name": "id", "in": "path", "schema": {"type": "integer", "minimum": 5}},
            {"name": "sort", "in": "query", "required": true, "schema": {"type": "string", "enum": ["asc", "desc"]}},
            {"name": "limit", "in": "query", "schema": {"type": "integer", "default": 10}},
            {"name": "q", "in": "query", "example": "lamp", "schema": {"type": "string"}},
            {"name": "page", "in": "query", "schema": {"type": "integer"}},
            {"name": "tags", "in": "query", "schema": {"type": "array", "default": ["a", "b"]}},
            {"name": "X-Trace", "in": "header", "required": true, "schema": {"type": "string", "format": "uuid"}}
        ]}))
        .expect("inputs");
        assert_eq!(inputs.path, [("id".to_owned(), "5".to_owned())]);
        let query: Vec<(&str, &str)> = inputs.query.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(
            query,
            [
                ("sort", "asc"),
                ("limit", "10"),
                ("q", "lamp"),
                ("tags", "a"),
                ("tags", "b")
            ],
            "the optional page has nothing to offer and is left out"
        );
        assert_eq!(inputs.headers[0].1, "00000000-0000-4000-8000-000000000000");
    }

    #[test]
    fn a_json_body_has_its_required_fields_and_nested_objects_to_depth_two() {
        let inputs = endpoint_inputs(
            json!({"requestBody": {"required": true, "content": {"application/json": {"schema": {
                "type": "object", "required": ["title", "count", "owner", "kind"],
                "properties": {
                    "title": {"type": "string", "minLength": 8},
                    "count": {"type": "integer"},
                    "kind": {"type": "string", "enum": ["book", "lamp"]},
                    "note": {"type": "string"},
                    "owner": {"$ref": "#/components/schemas/Owner"}
                }
            }}}}}),
        )
        .expect("inputs");
        assert_eq!(
            inputs.body,
            Some(json!({
                "title": "stringxx", "count": 1, "kind": "book",
                "owner": {"name": "string", "address": {"city": "Ghent"}}
            })),
            "depth 0 body, 1 owner, 2 address; the optional geo (depth 3) is left out"
        );
    }

    #[test]
    fn a_required_object_deeper_than_two_is_sent_empty_with_a_warning() {
        let inputs = endpoint_inputs(json!({"requestBody": {"content": {"application/json": {"schema": {
            "type": "object", "required": ["a"], "properties": {"a": {"type": "object", "required": ["b"], "properties": {
                "b": {"type": "object", "required": ["c"], "properties": {"c": {"type": "object", "required": ["d"], "properties": {"d": {"type": "string"}}}}}
            }}}
        }}}}}))
        .expect("inputs");
        assert_eq!(inputs.body, Some(json!({"a": {"b": {"c": {}}}})));
        assert!(
            inputs.warnings[0].contains("c is nested deeper than 2"),
            "{:?}",
            inputs.warnings
        );
    }

    #[test]
    fn all_of_is_merged_and_any_of_with_null_takes_the_other_choice() {
        let inputs = endpoint_inputs(json!({"requestBody": {"content": {"application/json": {"schema": {
            "allOf": [
                {"type": "object", "required": ["a"], "properties": {"a": {"type": "boolean"}}},
                {"type": "object", "required": ["b"], "properties": {"b": {"anyOf": [{"type": "null"}, {"type": "integer"}]}}}
            ]
        }}}}}))
        .expect("inputs");
        assert_eq!(inputs.body, Some(json!({"a": false, "b": 1})));
    }

    #[test]
    fn a_required_form_body_or_cookie_cannot_be_sent_and_says_why() {
        let err = endpoint_inputs(json!({"requestBody": {"required": true, "content": {"multipart/form-data": {}}}}))
            .unwrap_err();
        assert!(err.contains("multipart/form-data"), "{err}");
        let err =
            endpoint_inputs(json!({"parameters": [{"name": "sid", "in": "cookie", "required": true}]})).unwrap_err();
        assert!(err.contains("cookie parameter sid"), "{err}");
    }
}
