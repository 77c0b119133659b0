//! Seed 004's tier-1 contract normalisations, driven by the validator's own messages
//! (`<path>: '<value>' does not match '<pattern>'`): field names to snake_case, FQNs to lower
//! case, graph edges to SCREAMING_SNAKE_CASE, number prefixes to 2-6 upper-case letters. Each
//! message names the place and the value, so no contract layout is assumed; a value the
//! normaliser cannot make valid (a 9-letter prefix) is left for a person.

use std::sync::LazyLock;

use regex::Regex;
use serde_yaml_ng::Value;

/// Python's jsonschema quotes with `'`, Rust's with `"`: either is read.
static MESSAGE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"^(?:(\S*): )?['"]([^'"]*)['"] does not match ['"](.*)['"]$"#).expect("regex"));

/// The tier-1 error types of seed 004, by the pattern a value failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Normalisation {
    /// `^[a-z][a-z0-9_]*$`: a field name.
    Naming,
    /// `^(entity|workflow...`: a fully qualified name.
    FqnFormat,
    /// `^[A-Z][A-Z0-9_]*$`: a graph edge.
    GraphEdge,
    /// `^[A-Z]{2,6}$`: a number prefix.
    NumberPrefix,
}

impl Normalisation {
    /// The normalisation a failed pattern calls for, if it is one of tier 1's.
    pub fn for_pattern(pattern: &str) -> Option<Self> {
        match pattern {
            "^[a-z][a-z0-9_]*$" => Some(Normalisation::Naming),
            "^[A-Z][A-Z0-9_]*$" => Some(Normalisation::GraphEdge),
            "^[A-Z]{2,6}$" => Some(Normalisation::NumberPrefix),
            p if p.starts_with("^(entity|workflow") => Some(Normalisation::FqnFormat),
            _ => None,
        }
    }

    /// The value made valid, or `None` when there is no sure way to.
    pub fn apply(self, value: &str) -> Option<String> {
        let fixed = match self {
            Normalisation::Naming => words(value).join("_").to_lowercase(),
            Normalisation::GraphEdge => words(value).join("_").to_uppercase(),
            Normalisation::FqnFormat => value.to_lowercase(),
            Normalisation::NumberPrefix => {
                let letters: String = value
                    .chars()
                    .filter(char::is_ascii_alphabetic)
                    .collect::<String>()
                    .to_uppercase();
                if !(2..=6).contains(&letters.len()) {
                    return None;
                }
                letters
            }
        };
        (fixed != value && !fixed.is_empty()).then_some(fixed)
    }
}

/// `myField`, `My-Field`, `HTTPStatus`, `assigned to` → their words.
fn words(s: &str) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    let mut words = Vec::new();
    let mut current = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            continue;
        }
        let boundary = c.is_ascii_uppercase()
            && !current.is_empty()
            && (chars[i - 1].is_ascii_lowercase()
                || chars[i - 1].is_ascii_digit()
                || chars.get(i + 1).is_some_and(char::is_ascii_lowercase) && chars[i - 1].is_ascii_uppercase());
        if boundary {
            words.push(std::mem::take(&mut current));
        }
        current.push(c);
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

/// The value and the pattern a validator's `'<value>' does not match '<pattern>'` message names
/// (either quoting, with or without the path before it), if it is one.
pub fn violation(message: &str) -> Option<(String, String)> {
    let c = MESSAGE.captures(message.trim())?;
    Some((c[2].to_owned(), c[3].to_owned()))
}

/// The messages a tier-1 ticket is fixed by, when its `error` is a violation message (else
/// `None`: every error found is the ticket's): among the validators' messages `found`, those
/// naming the same value and pattern — the contract's other errors have tickets of their own. A
/// validator that words it its own way (a repository's command printing a line that quotes the
/// value and the pattern among other things) confirms the error is still there, and the ticket's
/// own message is used, at the `path` its context names when the message has none. Empty when no
/// validator finds the error any more.
pub fn own_violations(error: &str, path: Option<&str>, found: &[String]) -> Option<Vec<String>> {
    let reported = violation(error)?;
    let same: Vec<String> = found
        .iter()
        .filter(|e| violation(e).as_ref() == Some(&reported))
        .cloned()
        .collect();
    if !same.is_empty() {
        return Some(same);
    }
    let (value, pattern) = &reported;
    let quoted = [format!("'{value}'"), format!("\"{value}\"")];
    let still_there = found
        .iter()
        .any(|e| e.contains(pattern.as_str()) && quoted.iter().any(|q| e.contains(q.as_str())));
    if !still_there {
        return Some(Vec::new());
    }
    let message = error.trim();
    let has_path = MESSAGE.captures(message).and_then(|c| c.get(1)).is_some();
    Some(vec![match path.filter(|_| !has_path) {
        Some(path) => format!("{path}: {message}"),
        None => message.to_owned(),
    }])
}

/// Applies every tier-1 normalisation the validator's `errors` call for to the contract `yaml`.
/// Returns the new YAML and one line per change (`spec.fields.myField -> spec.fields.my_field`),
/// or `None` when no message is a tier-1 one the normaliser is sure of.
pub fn normalize_contract(yaml: &str, errors: &[String]) -> Result<Option<(String, Vec<String>)>, String> {
    let mut doc: Value = serde_yaml_ng::from_str(yaml).map_err(|e| format!("the contract is not YAML: {e}"))?;
    let mut changes = Vec::new();
    let mut replaced = Vec::new();
    for error in errors {
        let Some(c) = MESSAGE.captures(error.trim()) else {
            continue;
        };
        let path = c.get(1).map_or("", |m| m.as_str());
        let (value, pattern) = (&c[2], &c[3]);
        let Some(kind) = Normalisation::for_pattern(pattern) else {
            continue;
        };
        let Some(fixed) = kind.apply(value) else { continue };
        if let Some(change) = replace_at(&mut doc, path, value, &fixed) {
            changes.push(change);
            replaced.push((value.to_owned(), fixed));
        }
    }
    if changes.is_empty() {
        return Ok(None);
    }
    let text = match in_place(yaml, &replaced) {
        Some(text) if serde_yaml_ng::from_str::<Value>(&text).ok().as_ref() == Some(&doc) => text,
        _ => serde_yaml_ng::to_string(&doc).map_err(|e| format!("cannot write the contract: {e}"))?,
    };
    Ok(Some((text, changes)))
}

/// `yaml` with each `(from, to)` replaced where `from` stands as a whole word exactly once: the
/// contract keeps its comments, order and layout, and the diff shows only the fix. `None` when a
/// value appears more than once (the caller then writes the whole document anew).
fn in_place(yaml: &str, replaced: &[(String, String)]) -> Option<String> {
    let mut text = yaml.to_owned();
    for (from, to) in replaced {
        let word = Regex::new(&format!(r"(^|[^A-Za-z0-9_]){}([^A-Za-z0-9_]|$)", regex::escape(from))).ok()?;
        let mut found = word.captures_iter(&text);
        let only = found.next()?;
        if found.next().is_some() {
            return None;
        }
        let whole = only.get(0)?;
        let (before, after) = (&only[1], &only[2]);
        text = format!("{}{before}{to}{after}{}", &text[..whole.start()], &text[whole.end()..]);
    }
    Some(text)
}

/// At `path` (dotted), renames the key `from` of a mapping, or replaces the string `from`.
fn replace_at(doc: &mut Value, path: &str, from: &str, to: &str) -> Option<String> {
    let mut node = doc;
    for part in path.split('.').filter(|p| !p.is_empty()) {
        node = match node {
            Value::Mapping(m) => m.get_mut(part)?,
            Value::Sequence(s) => s.get_mut(part.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    match node {
        Value::Mapping(m) => {
            let key = Value::String(from.to_owned());
            if m.contains_key(to) {
                return None; // renaming would overwrite another entry
            }
            // Rename in place, keeping the entry's position.
            let entries: Vec<(Value, Value)> = std::mem::take(m).into_iter().collect();
            for (k, v) in entries {
                m.insert(if k == key { Value::String(to.to_owned()) } else { k }, v);
            }
            Some(format!("{path}.{from} -> {path}.{to}"))
        }
        Value::String(s) if s == from => {
            *s = to.to_owned();
            Some(format!("{path}: {from} -> {to}"))
        }
        _ => None,
    }
}

/// The JSON Schema a repository's contracts must satisfy (seed 004's `validate_contract`), and
/// the messages it gives a contract in the validator's words, each prefixed by the dotted path
/// of the value it is about: `spec.fields: "myField" does not match "^[a-z][a-z0-9_]*$"` — the
/// form [`normalize_contract`] reads.
pub struct ContractSchema(jsonschema::Validator);

impl ContractSchema {
    /// The schema in `text` (JSON or YAML) from the file at `path`. It may refer to nothing
    /// outside itself: a `$ref` to another file or a URL is refused, never fetched.
    pub fn parse(text: &str, path: &str) -> Result<Self, String> {
        Self::parse_with(text, path, &[])
    }

    /// [`ContractSchema::parse`], where a `$ref` may also name the `$id` of one of `siblings`
    /// (path, text): the other schemas of the repository's schema folder, as Specora's own
    /// validator registers its meta-schemas. Nothing else is fetched or read.
    pub fn parse_with(text: &str, path: &str, siblings: &[(String, String)]) -> Result<Self, String> {
        let schema: serde_json::Value = serde_yaml_ng::from_str(text)
            .map_err(|e| format!("the contract schema {path} is neither JSON nor YAML: {e}"))?;
        let mut by_id = std::collections::BTreeMap::new();
        for (sibling, text) in siblings {
            let Ok(value) = serde_yaml_ng::from_str::<serde_json::Value>(text) else {
                continue; // not a schema: a `$ref` to it fails, saying so
            };
            if let Some(id) = value.get("$id").and_then(|i| i.as_str()) {
                by_id.insert(id.trim_end_matches('#').to_owned(), (sibling.clone(), value.clone()));
            }
        }
        jsonschema::options()
            .with_retriever(Siblings(by_id))
            .build(&schema)
            .map(ContractSchema)
            .map_err(|e| format!("the contract schema {path} is not a usable JSON Schema: {e}"))
    }

    /// What is wrong with the contract `yaml` (empty when it is valid); `Err` when it is not a
    /// YAML document at all.
    pub fn check(&self, yaml: &str) -> Result<Vec<String>, String> {
        let contract: serde_json::Value =
            serde_yaml_ng::from_str(yaml).map_err(|e| format!("the contract is not YAML: {e}"))?;
        Ok(self
            .0
            .iter_errors(&contract)
            .map(|error| {
                let path = dotted(error.instance_path().as_str());
                if path.is_empty() {
                    error.to_string()
                } else {
                    format!("{path}: {error}")
                }
            })
            .collect())
    }
}

/// Serves a `$ref` from the schema folder's documents by their `$id`, and refuses any other.
struct Siblings(std::collections::BTreeMap<String, (String, serde_json::Value)>);

impl jsonschema::Retrieve for Siblings {
    fn retrieve(
        &self,
        uri: &jsonschema::Uri<String>,
    ) -> Result<serde_json::Value, Box<dyn std::error::Error + Send + Sync>> {
        let wanted = uri.as_str().trim_end_matches('#');
        self.0.get(wanted).map(|(_, value)| value.clone()).ok_or_else(|| {
            format!("{wanted} is not the $id of a schema in the contract schema's folder, and nothing else is fetched")
                .into()
        })
    }
}

/// `/spec/fields/0` → `spec.fields.0` (a JSON pointer's escapes undone).
fn dotted(pointer: &str) -> String {
    pointer
        .split('/')
        .filter(|p| !p.is_empty())
        .map(|p| p.replace("~1", "/").replace("~0", "~"))
        .collect::<Vec<_>>()
        .join(".")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ticket_is_fixed_by_its_own_violation_however_the_validator_words_it() {
        let error = "'tkt' does not match '^[A-Z]{2,6}$'";
        // The schema's messages: the same violation, with its path; another ticket's is left.
        let schema = vec![
            "spec.number_prefix: 'tkt' does not match '^[A-Z]{2,6}$'".to_owned(),
            "spec.fields.Title: 'Title' does not match '^[a-z][a-z0-9_]*$'".to_owned(),
        ];
        assert_eq!(
            own_violations(error, Some("spec.number_prefix"), &schema),
            Some(vec![schema[0].clone()])
        );
        // A command's own wording: the ticket's message at its context's path.
        let command = vec![
            "Compilation failed:".to_owned(),
            r#"ContractValidationError(path='spec.number_prefix', message="'tkt' does not match '^[A-Z]{2,6}$'", severity='error')"#.to_owned(),
        ];
        assert_eq!(
            own_violations(error, Some("spec.number_prefix"), &command),
            Some(vec![
                "spec.number_prefix: 'tkt' does not match '^[A-Z]{2,6}$'".to_owned()
            ])
        );
        // Fixed already: no validator finds it.
        assert_eq!(
            own_violations(error, Some("spec.number_prefix"), &["Compilation failed:".to_owned()]),
            Some(vec![])
        );
        // Not a violation message: every error is the ticket's.
        assert_eq!(own_violations("KeyError: 'resolution'", None, &command), None);
    }

    const SCHEMA: &str = r#"
type: object
required: [apiVersion, kind, spec]
properties:
  kind: {enum: [Entity, Workflow]}
  spec:
    type: object
    properties:
      number_prefix: {type: string, pattern: "^[A-Z]{2,6}$"}
      fields:
        type: object
        propertyNames: {pattern: "^[a-z][a-z0-9_]*$"}
        additionalProperties:
          type: object
          required: [type]
"#;

    #[test]
    fn a_schema_s_messages_name_the_place_and_drive_the_normalisations() {
        let schema = ContractSchema::parse(SCHEMA, "contract.schema.yaml").expect("a schema");
        let contract = "apiVersion: specora.dev/v1\nkind: Entity\nspec:\n  number_prefix: tkt\n  fields:\n    myField: {type: string}\n    title: {type: string}\n";
        let errors = schema.check(contract).expect("YAML");
        assert!(
            errors.contains(&r#"spec.fields: "myField" does not match "^[a-z][a-z0-9_]*$""#.to_owned()),
            "{errors:?}"
        );
        let (fixed, changes) = normalize_contract(contract, &errors).expect("YAML").expect("a fix");
        assert_eq!(
            changes,
            [
                "spec.fields.myField -> spec.fields.my_field",
                "spec.number_prefix: tkt -> TKT"
            ],
            "in the validator's order: {errors:?}"
        );
        assert_eq!(schema.check(&fixed).expect("YAML"), Vec::<String>::new(), "{fixed}");
        // Only the two values changed: the contract's layout is kept.
        assert_eq!(
            fixed,
            contract.replace("tkt", "TKT").replace("myField", "my_field"),
            "{fixed}"
        );
        // A value that appears twice is not guessed at: the document is written anew.
        let twice = "apiVersion: v1\nkind: Entity\nspec:\n  number_prefix: tkt\n  fields: {title: {type: string, description: tkt}}\n";
        let errors = schema.check(twice).expect("YAML");
        let (fixed, _) = normalize_contract(twice, &errors).expect("YAML").expect("a fix");
        assert!(
            fixed.contains("number_prefix: TKT") && fixed.contains("description: tkt"),
            "{fixed}"
        );
        // A field without its type is a structural error: reported, not normalised.
        let missing = schema
            .check("apiVersion: v1\nkind: Entity\nspec: {fields: {title: {}}}")
            .expect("YAML");
        assert_eq!(missing, [r#"spec.fields.title: "type" is a required property"#]);
        assert!(schema.check("a: [").is_err(), "not YAML");
    }

    #[test]
    fn a_schema_that_refers_outside_itself_is_refused_not_fetched() {
        for target in [
            "http://169.254.169.254/latest/meta-data",
            "file:///etc/passwd",
            "other.json",
        ] {
            let schema = format!(r#"{{"$ref": "{target}"}}"#);
            let why = ContractSchema::parse(&schema, "s.json").err().expect("refused");
            assert!(why.contains("s.json is not a usable JSON Schema"), "{why}");
        }
        let why = ContractSchema::parse("[", "s.json").err().expect("refused");
        assert!(why.contains("neither JSON nor YAML"), "{why}");
        // A sibling's `$id` is served; the same reference without the sibling is refused.
        let main = r#"{"$ref": "https://schemas.example/name#/$defs/name"}"#;
        let sibling = (
            "name.yaml".to_owned(),
            "$id: https://schemas.example/name\n$defs: {name: {type: string, pattern: '^[a-z]+$'}}\n".to_owned(),
        );
        let schema = ContractSchema::parse_with(main, "main.json", &[sibling]).expect("resolved");
        assert_eq!(
            schema.check("Ticket").expect("YAML"),
            [r#""Ticket" does not match "^[a-z]+$""#]
        );
        assert!(ContractSchema::parse(main, "main.json").is_err());
    }

    #[test]
    fn names_become_snake_or_screaming_snake_case() {
        assert_eq!(Normalisation::Naming.apply("myField").as_deref(), Some("my_field"));
        assert_eq!(
            Normalisation::Naming.apply("HTTPStatus").as_deref(),
            Some("http_status")
        );
        assert_eq!(
            Normalisation::GraphEdge.apply("assigned_to").as_deref(),
            Some("ASSIGNED_TO")
        );
        assert_eq!(
            Normalisation::GraphEdge.apply("assignedTo").as_deref(),
            Some("ASSIGNED_TO")
        );
        assert_eq!(
            Normalisation::FqnFormat.apply("Entity/helpdesk/ticket").as_deref(),
            Some("entity/helpdesk/ticket")
        );
        assert_eq!(Normalisation::NumberPrefix.apply("tkt").as_deref(), Some("TKT"));
        assert_eq!(
            Normalisation::NumberPrefix.apply("ticketnumber"),
            None,
            "too long to abbreviate surely"
        );
    }
}
