//! Seed 004's tier-1 contract normalisations, driven by the validator's own messages
//! (`<path>: '<value>' does not match '<pattern>'`): field names to snake_case, FQNs to lower
//! case, graph edges to SCREAMING_SNAKE_CASE, number prefixes to 2-6 upper-case letters. Each
//! message names the place and the value, so no contract layout is assumed; a value the
//! normaliser cannot make valid (a 9-letter prefix) is left for a person.

use std::sync::LazyLock;

use regex::Regex;
use serde_yaml_ng::Value;

static MESSAGE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?:(\S*): )?'([^']*)' does not match '([^']*)'$").expect("regex"));

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

/// Applies every tier-1 normalisation the validator's `errors` call for to the contract `yaml`.
/// Returns the new YAML and one line per change (`spec.fields.myField -> spec.fields.my_field`),
/// or `None` when no message is a tier-1 one the normaliser is sure of.
pub fn normalize_contract(yaml: &str, errors: &[String]) -> Result<Option<(String, Vec<String>)>, String> {
    let mut doc: Value = serde_yaml_ng::from_str(yaml).map_err(|e| format!("the contract is not YAML: {e}"))?;
    let mut changes = Vec::new();
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
        }
    }
    if changes.is_empty() {
        return Ok(None);
    }
    let text = serde_yaml_ng::to_string(&doc).map_err(|e| format!("cannot write the contract: {e}"))?;
    Ok(Some((text, changes)))
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

#[cfg(test)]
mod tests {
    use super::*;

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
