//! The one place healers are made: from the kinds a cycle asks (`core::heal_run::healers`) and a
//! `HealerSpec`, for the operator, `kubeheal heal` and `healer serve` alike. The credentials the
//! spec's `secretRef`s name are resolved by the driver (from Secrets, or from the environment)
//! and handed in, so that this module never reads a Secret or an environment variable itself.

use crate::api::shared::HealerSpec;
use crate::core::heal_run::HealerKind;

use super::Healer;
use super::builtin::Builtin;
use super::code_healer_api::CodeHealerApi;
use super::openai::OpenAi;

/// What a driver resolved for the spec: secret values and its default service.
#[derive(Default, Clone)]
pub struct Credentials {
    /// The OpenAI-compatible endpoint's API key (`openAI.secretRef`), if any.
    pub openai_key: Option<String>,
    /// The Code Healer API's bearer token (`codeHealerApi.secretRef`), if any.
    pub code_healer_token: Option<String>,
    /// The Code Healer API asked when the spec names none (the operator's `CODE_HEALER_URL`,
    /// `kubeheal heal --healer-url`), with its token.
    pub default_code_healer: Option<(String, Option<String>)>,
}

/// The healers for `kinds`, in order. A Code Healer API the spec does not name and the driver has
/// no default for is left out; one the spec names without a URL anywhere is an error that says
/// what to set.
pub fn build(
    kinds: &[HealerKind],
    spec: &HealerSpec,
    credentials: &Credentials,
) -> Result<Vec<Box<dyn Healer>>, String> {
    let mut healers: Vec<Box<dyn Healer>> = Vec::new();
    for kind in kinds {
        match kind {
            HealerKind::Builtin => healers.push(Box::new(Builtin)),
            HealerKind::CodeHealerApi => {
                let named = spec.code_healer_api.as_ref();
                let (url, token) = match (named.and_then(|api| api.url.clone()), &credentials.default_code_healer) {
                    (Some(url), _) => (url, credentials.code_healer_token.clone()),
                    (None, Some((url, token))) => {
                        let token = if named.is_some_and(|api| api.secret_ref.is_some()) {
                            credentials.code_healer_token.clone()
                        } else {
                            token.clone()
                        };
                        (url.clone(), token)
                    }
                    (None, None) if named.is_some() => {
                        return Err(
                            "healer.codeHealerApi has no url and there is no default Code Healer API (the operator's CODE_HEALER_URL): set healer.codeHealerApi.url"
                                .into(),
                        );
                    }
                    (None, None) => continue,
                };
                healers.push(Box::new(CodeHealerApi::new(url, token)?));
            }
            HealerKind::OpenAi => {
                let ai = spec
                    .open_ai
                    .as_ref()
                    .ok_or("the openai healer is asked for but healer.openAI is not set")?;
                healers.push(Box::new(OpenAi::new(
                    &ai.base_url,
                    &ai.model,
                    credentials.openai_key.clone(),
                    ai.max_tokens,
                )?));
            }
            // A tool is no HTTP service: it runs as an executor Job, which only the operator
            // launches (its driver asks it before it would come here).
            HealerKind::Tool => {
                return Err(format!(
                    "healer.tool {:?} runs as an executor Job, which only kubeheal's operator launches: use codeHealerApi, openAI or builtin here",
                    spec.tool.as_ref().map(|t| t.name.as_str()).unwrap_or_default()
                ));
            }
        }
    }
    Ok(healers)
}

/// The URLs of the services `spec` names, for a driver's URL policy to check before [`build`].
pub fn service_urls(spec: &HealerSpec) -> impl Iterator<Item = &str> {
    [
        spec.open_ai.as_ref().map(|ai| ai.base_url.as_str()),
        spec.code_healer_api.as_ref().and_then(|api| api.url.as_deref()),
    ]
    .into_iter()
    .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::heal_run::HealRunSpec;
    use crate::api::shared::{BuiltinHealer, CodeHealerApiHealer, OpenAiHealer};
    use crate::core::heal_run::healers;

    fn spec(healer: HealerSpec) -> HealRunSpec {
        let mut spec: HealRunSpec =
            serde_json::from_value(serde_json::json!({"source": {"url": "https://example.com/r.git"}})).unwrap();
        spec.healer = Some(healer);
        spec
    }

    fn names(spec: &HealRunSpec, credentials: &Credentials) -> Result<Vec<(&'static str, bool)>, String> {
        let built = build(
            &healers(spec.healer.as_ref()),
            spec.healer.as_ref().unwrap(),
            credentials,
        )?;
        Ok(built.iter().map(|h| (h.name(), h.deterministic())).collect())
    }

    #[test]
    fn the_deterministic_fixers_come_first_then_every_named_service() {
        let both = spec(HealerSpec {
            code_healer_api: Some(CodeHealerApiHealer {
                url: Some("http://healer.example/api/heal".into()),
                secret_ref: None,
            }),
            open_ai: Some(OpenAiHealer {
                base_url: "https://api.example/v1".into(),
                model: "m".into(),
                secret_ref: None,
                max_tokens: 4096,
            }),
            builtin: None,
            tool: None,
        });
        assert_eq!(
            names(&both, &Credentials::default()).unwrap(),
            [("builtin", true), ("code-healer-api", false), ("openai", false)]
        );
    }

    #[test]
    fn an_unnamed_service_is_the_drivers_default_or_nothing() {
        let none = spec(HealerSpec::default());
        assert_eq!(names(&none, &Credentials::default()).unwrap(), [("builtin", true)]);
        let default = Credentials {
            default_code_healer: Some(("http://sam:3000/api/heal".into(), None)),
            ..Credentials::default()
        };
        assert_eq!(
            names(&none, &default).unwrap(),
            [("builtin", true), ("code-healer-api", false)]
        );
        let only_builtin = spec(HealerSpec {
            builtin: Some(BuiltinHealer {}),
            ..HealerSpec::default()
        });
        assert_eq!(names(&only_builtin, &default).unwrap(), [("builtin", true)]);
    }

    #[test]
    fn a_named_service_without_a_url_anywhere_says_what_to_set() {
        let named = spec(HealerSpec {
            code_healer_api: Some(CodeHealerApiHealer::default()),
            ..HealerSpec::default()
        });
        let error = names(&named, &Credentials::default()).unwrap_err();
        assert!(error.contains("set healer.codeHealerApi.url"), "{error}");
    }
}
