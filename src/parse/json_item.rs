//! One element of a linter's JSON report (eslint, pylint, SARIF, reviewdog, GitLab, pyright,
//! ruff, golangci-lint, go vet), read into the few fields the parser uses: serde skips the rest of the element without
//! building a value of it, and the strings are borrowed from the log where they hold no escape.
//! Read into a whole `serde_json::Value`, an element cost ~25,000 instructions (a map and a string
//! for every field, then freeing them all).
//!
//! The reading is as lenient as looking fields up in a `Value`: a field of another JSON type than
//! the one used reads as absent ([`Str`], [`Count`], [`Array`], [`Object`]), and whether a field
//! is there at all, whatever it holds (`null` too), is kept apart where a format is told by it
//! ([`Field`]). One difference: an object that names a field twice fails to read (a `Value` keeps
//! the last); no tool writes one.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// The element in `text`, when it is a JSON object (any other JSON is no element of a report).
pub(crate) fn read(text: &str) -> Option<Item<'_>> {
    serde_json::from_str::<Object<Item>>(text).ok().and_then(|item| item.0)
}

/// A field that may be absent (`None`), whatever it holds when it is there.
#[derive(Debug, Default)]
pub(crate) struct Field<T>(pub Option<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Field<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::deserialize(d).map(|t| Field(Some(t)))
    }
}

/// A string, or `None` for any other JSON.
#[derive(Debug, Default)]
pub(crate) struct Str<'a>(pub Option<Cow<'a, str>>);

impl<'a> Str<'a> {
    /// The string, or `""` (as `str_of` gave it).
    pub fn text(&self) -> &str {
        self.0.as_deref().unwrap_or("")
    }
}

/// A non-negative integer, or `None` for any other JSON (as `Value::as_u64` reads it).
#[derive(Debug, Default)]
pub(crate) struct Count(pub Option<u64>);

/// Whether the JSON is `true`.
#[derive(Debug, Default)]
pub(crate) struct IsTrue(pub bool);

/// An array of `T`, or `None` for any other JSON.
#[derive(Debug)]
pub(crate) struct Array<T>(pub Option<Vec<T>>);

impl<T> Default for Array<T> {
    fn default() -> Self {
        Array(None)
    }
}

/// An object read as `T`, or `None` for any other JSON.
#[derive(Debug)]
pub(crate) struct Object<T>(pub Option<T>);

impl<T> Default for Object<T> {
    fn default() -> Self {
        Object(None)
    }
}

/// A field read as leniently as a `Value` lookup reads it: what it makes of each kind of JSON,
/// which is the default ("not of my type") unless it says otherwise. What it does not read is read
/// through: `null`, numbers that are not a `u64` (as `Value::as_u64` has it), arrays and objects.
trait Lenient<'de>: Default {
    fn string(_: Cow<'de, str>) -> Self {
        Self::default()
    }
    fn unsigned(_: u64) -> Self {
        Self::default()
    }
    fn boolean(_: bool) -> Self {
        Self::default()
    }
    fn array<A: SeqAccess<'de>>(seq: A) -> Result<Self, A::Error> {
        IgnoredAny.visit_seq(seq).map(|_| Self::default())
    }
    fn object<A: MapAccess<'de>>(map: A) -> Result<Self, A::Error> {
        IgnoredAny.visit_map(map).map(|_| Self::default())
    }
}

/// Deserializes any JSON as `L` reads it.
fn lenient<'de, L: Lenient<'de>, D: Deserializer<'de>>(d: D) -> Result<L, D::Error> {
    d.deserialize_any(LenientVisitor(PhantomData))
}

struct LenientVisitor<L>(PhantomData<L>);

impl<'de, L: Lenient<'de>> Visitor<'de> for LenientVisitor<L> {
    type Value = L;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<L, E> {
        Ok(L::string(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<L, E> {
        Ok(L::string(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E>(self, v: String) -> Result<L, E> {
        Ok(L::string(Cow::Owned(v)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<L, E> {
        Ok(L::unsigned(v))
    }
    /// serde_json gives a negative integer here: not a `u64`.
    fn visit_i64<E>(self, v: i64) -> Result<L, E> {
        Ok(u64::try_from(v).map_or_else(|_| L::default(), L::unsigned))
    }
    fn visit_f64<E>(self, _: f64) -> Result<L, E> {
        Ok(L::default())
    }
    fn visit_bool<E>(self, v: bool) -> Result<L, E> {
        Ok(L::boolean(v))
    }
    fn visit_unit<E>(self) -> Result<L, E> {
        Ok(L::default())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<L, A::Error> {
        L::array(seq)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<L, A::Error> {
        L::object(map)
    }
}

impl<'de> Lenient<'de> for Str<'de> {
    fn string(s: Cow<'de, str>) -> Self {
        Str(Some(s))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        lenient::<Str<'de>, D>(d)
    }
}

impl Lenient<'_> for Count {
    fn unsigned(n: u64) -> Self {
        Count(Some(n))
    }
}

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        lenient(d)
    }
}

impl Lenient<'_> for IsTrue {
    fn boolean(b: bool) -> Self {
        IsTrue(b)
    }
}

impl<'de> Deserialize<'de> for IsTrue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        lenient(d)
    }
}

impl<'de, T: Deserialize<'de>> Lenient<'de> for Array<T> {
    fn array<A: SeqAccess<'de>>(mut seq: A) -> Result<Self, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Array(Some(items)))
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Array<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        lenient(d)
    }
}

impl<'de, T: Deserialize<'de>> Lenient<'de> for Object<T> {
    fn object<A: MapAccess<'de>>(map: A) -> Result<Self, A::Error> {
        T::deserialize(de::value::MapAccessDeserializer::new(map)).map(|t| Object(Some(t)))
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        lenient(d)
    }
}

/// A string, or an object's string field (SARIF's `message.text`, reviewdog's `code.value`), each
/// read as its own: the formats that share a field name give it either shape.
#[derive(Debug, Default)]
pub(crate) struct StrOrObject<'a> {
    pub string: Str<'a>,
    pub inner: Str<'a>,
}

impl<'a> StrOrObject<'a> {
    fn string(s: Cow<'a, str>) -> Self {
        StrOrObject {
            string: Str(Some(s)),
            inner: Str(None),
        }
    }

    /// The object's `key` field, read as a [`Str`]; the rest is read through.
    fn object<'de: 'a, A: MapAccess<'de>>(mut map: A, key: &'static str) -> Result<Self, A::Error> {
        let mut inner = None;
        while let Some(k) = map.next_key::<Str<'de>>()? {
            if k.text() != key {
                map.next_value::<IgnoredAny>()?;
            } else if inner.is_some() {
                return Err(de::Error::duplicate_field(key));
            } else {
                inner = Some(map.next_value::<Str<'de>>()?);
            }
        }
        Ok(StrOrObject {
            string: Str(None),
            inner: inner.unwrap_or_default(),
        })
    }
}

/// [`StrOrObject`] whose object's field is `text` (SARIF's message).
#[derive(Debug, Default)]
pub(crate) struct TextOrObject<'a>(pub StrOrObject<'a>);

impl<'de> Lenient<'de> for TextOrObject<'de> {
    fn string(s: Cow<'de, str>) -> Self {
        TextOrObject(StrOrObject::string(s))
    }
    fn object<A: MapAccess<'de>>(map: A) -> Result<Self, A::Error> {
        StrOrObject::object(map, "text").map(TextOrObject)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for TextOrObject<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        lenient::<TextOrObject<'de>, D>(d)
    }
}

/// [`StrOrObject`] whose object's field is `value` (reviewdog's code).
#[derive(Debug, Default)]
pub(crate) struct ValueOrObject<'a>(pub StrOrObject<'a>);

impl<'de> Lenient<'de> for ValueOrObject<'de> {
    fn string(s: Cow<'de, str>) -> Self {
        ValueOrObject(StrOrObject::string(s))
    }
    fn object<A: MapAccess<'de>>(map: A) -> Result<Self, A::Error> {
        StrOrObject::object(map, "value").map(ValueOrObject)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for ValueOrObject<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        lenient::<ValueOrObject<'de>, D>(d)
    }
}

/// The fields of every format's element that the parser reads.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Item<'a> {
    /// eslint: the file's messages.
    #[serde(borrow)]
    pub messages: Array<Object<EslintMessage<'a>>>,
    /// Cucumber's JSON report (cucumber-js, pytest-bdd): a feature's scenarios. (behave's `-f json`
    /// puts each feature at column 0, which ends the array unread: not read yet.)
    #[serde(borrow)]
    pub elements: Array<Object<CucumberScenario<'a>>>,
    #[serde(borrow, rename = "filePath")]
    pub file_path: Str<'a>,
    /// pylint `json`.
    #[serde(borrow, rename = "message-id")]
    pub message_id: Field<Str<'a>>,
    /// pylint `json2`.
    #[serde(borrow, rename = "messageId")]
    pub message_id_json2: Field<Str<'a>>,
    #[serde(borrow)]
    pub symbol: Str<'a>,
    /// A string (pylint, reviewdog, pyright, ruff) or SARIF's `{"text": ...}`.
    #[serde(borrow)]
    pub message: TextOrObject<'a>,
    #[serde(borrow)]
    pub path: Str<'a>,
    pub line: Count,
    /// SARIF.
    #[serde(borrow)]
    pub locations: Array<Object<SarifLocation<'a>>>,
    #[serde(borrow, rename = "ruleId")]
    pub rule_id: Str<'a>,
    /// reviewdog's, GitLab's and ruff's place.
    #[serde(borrow)]
    pub location: Field<Object<Location<'a>>>,
    /// reviewdog's `{"value": ...}`, ruff's string.
    #[serde(borrow)]
    pub code: Field<ValueOrObject<'a>>,
    /// GitLab code quality.
    #[serde(borrow)]
    pub check_name: Str<'a>,
    #[serde(borrow)]
    pub description: Str<'a>,
    /// pyright.
    pub range: Field<Object<Range>>,
    pub file: Field<Str<'a>>,
    #[serde(borrow)]
    pub severity: Str<'a>,
    #[serde(borrow)]
    pub rule: Str<'a>,
    /// ruff: told by the field's presence (bandit and `deno lint` name their file so too).
    pub filename: Field<Str<'a>>,
    /// bandit: told by the field's presence; its finding's rule name, message and line.
    #[serde(borrow)]
    pub test_id: Field<Str<'a>>,
    #[serde(borrow)]
    pub test_name: Str<'a>,
    #[serde(borrow)]
    pub issue_text: Str<'a>,
    pub line_number: Count,
    /// mocha's `--reporter json`: a test (under `tests` or `failures`), failed when its `err`
    /// has a stack.
    #[serde(borrow, rename = "fullTitle")]
    pub full_title: Field<Str<'a>>,
    #[serde(borrow)]
    pub err: Object<MochaError<'a>>,
    /// golangci-lint: told by the field's presence.
    #[serde(borrow, rename = "FromLinter")]
    pub from_linter: Field<Str<'a>>,
    #[serde(borrow, rename = "Text")]
    pub text: Str<'a>,
    #[serde(borrow, rename = "Pos")]
    pub pos: Field<Object<GoPosition<'a>>>,
}

/// The error of a mocha test (`{}` when it passed): Node's stack, its message on its first line.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct MochaError<'a> {
    #[serde(borrow)]
    pub stack: Str<'a>,
}

/// A scenario of a Cucumber feature: its name and its steps.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct CucumberScenario<'a> {
    #[serde(borrow)]
    pub name: Str<'a>,
    #[serde(borrow)]
    pub steps: Array<Object<CucumberStep<'a>>>,
}

/// A step's result: `passed`, `failed` (with the failure's text), `skipped`, ...
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct CucumberStep<'a> {
    #[serde(borrow)]
    pub result: Object<CucumberResult<'a>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct CucumberResult<'a> {
    #[serde(borrow)]
    pub status: Str<'a>,
    #[serde(borrow)]
    pub error_message: Str<'a>,
}

/// A `go vet -json` finding: its place (`/abs/basic.go:59:68`) and message.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct VetFinding<'a> {
    #[serde(borrow)]
    pub posn: Str<'a>,
    #[serde(borrow)]
    pub message: Str<'a>,
}

/// golangci-lint's place of an issue.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct GoPosition<'a> {
    #[serde(borrow, rename = "Filename")]
    pub filename: Str<'a>,
    #[serde(rename = "Line")]
    pub line: Count,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct EslintMessage<'a> {
    pub fatal: IsTrue,
    pub line: Count,
    #[serde(borrow)]
    pub message: Str<'a>,
    #[serde(borrow, rename = "ruleId")]
    pub rule_id: Str<'a>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct SarifLocation<'a> {
    #[serde(borrow, rename = "physicalLocation")]
    pub physical_location: Field<Object<PhysicalLocation<'a>>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct PhysicalLocation<'a> {
    pub region: Object<Region>,
    #[serde(borrow, rename = "artifactLocation")]
    pub artifact_location: Object<ArtifactLocation<'a>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Region {
    #[serde(rename = "startLine")]
    pub start_line: Count,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ArtifactLocation<'a> {
    #[serde(borrow)]
    pub uri: Str<'a>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Location<'a> {
    /// reviewdog: `range.start.line`.
    pub range: Field<Object<Range>>,
    #[serde(borrow)]
    pub path: Str<'a>,
    /// GitLab: `positions.begin.line`, or `lines.begin`.
    pub positions: Field<Object<Positions>>,
    pub lines: Object<Lines>,
    /// ruff.
    pub row: Count,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Range {
    pub start: Object<LineOf>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Positions {
    pub begin: Object<LineOf>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct LineOf {
    pub line: Count,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Lines {
    pub begin: Count,
}

/// One test's result in jest's `--json` report.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct JestAssertion<'a> {
    #[serde(borrow, rename = "fullName")]
    pub full_name: Str<'a>,
    #[serde(borrow)]
    pub status: Str<'a>,
    #[serde(borrow, rename = "failureMessages")]
    pub failure_messages: Array<Str<'a>>,
}

/// The test result in `text`: any JSON that is not an object is one with no fields, as `Value`
/// lookups read it; text that is not JSON is none.
pub(crate) fn read_jest_assertion(text: &str) -> Option<JestAssertion<'_>> {
    serde_json::from_str::<Object<JestAssertion>>(text)
        .ok()
        .map(|a| a.0.unwrap_or_default())
}
