//! Redaction, before anything leaves the executor: the exact values of every secret the run was
//! given, and the shapes of well-known credentials, become `[REDACTED:KIND]`.
//!
//! The shapes are a data table, [`RULES`]: one row per credential shape, with the literal
//! keywords one of which must occur for the shape to match. The providers are those gitleaks'
//! default configuration covers (<https://github.com/gitleaks/gitleaks>, `config/gitleaks.toml`,
//! MIT), written afresh for the `regex` crate (no look-around; ASCII word boundaries, which the
//! DFA can run over non-ASCII logs) and for logs rather than repositories: no entropy threshold,
//! so a token is redacted whatever its characters.
//!
//! Cost: one Aho-Corasick pass over the text for every rule's keywords finds the rules that could
//! match; only those run their pattern. A log with no credential-like keyword is read once by the
//! keyword pass and not again.

use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};
use regex::{Captures, Regex};

/// What a match must also pass to count as a secret, beyond its shape.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Check {
    /// The shape is specific enough.
    Shape,
    /// `name = value`: not a placeholder (`true`, `$VAR`, `***`), not code (`PASSWORD)`,
    /// `settings.TOKEN`, `headers[`), and the name is not the working directory (`PWD`, `OLDPWD`).
    Assignment,
    /// A header value: also not a plain word (`Bearer authentication`).
    Header,
}

#[derive(Clone, Copy, Debug)]
enum Shape {
    /// A pattern whose group `s`, if it has one, is the secret; otherwise the whole match is.
    Raw(&'static str),
    /// A value of the second pattern assigned to a name containing one of the words of the first
    /// (`DATADOG_API_KEY = "…"`, `"twilio_token": "…"`), for the providers whose secrets have no
    /// prefix of their own: gitleaks' "semi-generic" rules.
    Keyed(&'static str, &'static str),
}

#[derive(Clone, Copy, Debug)]
struct Rule {
    kind: &'static str,
    /// Lowercase literals, one of which (ASCII case-insensitively) every match contains.
    keywords: &'static [&'static str],
    shape: Shape,
    check: Check,
}

const fn raw(kind: &'static str, keywords: &'static [&'static str], pattern: &'static str) -> Rule {
    Rule {
        kind,
        keywords,
        shape: Shape::Raw(pattern),
        check: Check::Shape,
    }
}

const fn keyed(
    kind: &'static str,
    keywords: &'static [&'static str],
    names: &'static str,
    value: &'static str,
) -> Rule {
    Rule {
        kind,
        keywords,
        shape: Shape::Keyed(names, value),
        check: Check::Shape,
    }
}

const fn checked(check: Check, rule: Rule) -> Rule {
    Rule { check, ..rule }
}

/// The credential shapes, applied in this order: structured and prefixed shapes first, then the
/// ones known by the name they are assigned to, then the generic ones, so that the most specific
/// kind names a secret, and a later rule finds `[REDACTED:…]` where an earlier one matched.
/// In patterns, `\b` is an ASCII word boundary.
const RULES: &[Rule] = &[
    // Keys and key files.
    raw(
        "GCP_SERVICE_ACCOUNT_KEY",
        &["\"private_key\""],
        r#""private_key"\s*:\s*"(?P<s>-----BEGIN[A-Z ]*PRIVATE KEY-----[^"]*)""#,
    ),
    raw(
        "PRIVATE_KEY",
        &["-----begin"],
        // The END line, or else (a truncated log) every base64-looking line after BEGIN.
        r"(?s)-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----(?:.*?-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s:,\\-]*)",
    ),
    raw(
        "AGE_SECRET_KEY",
        &["age-secret-key-1"],
        r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
    ),
    raw(
        "ONEPASSWORD_SECRET_KEY",
        &["a3-"],
        r"\bA3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}\b",
    ),
    raw(
        "ONEPASSWORD_SERVICE_ACCOUNT_TOKEN",
        &["ops_eyj"],
        r"\bops_eyJ[A-Za-z0-9+/]{250,}={0,3}",
    ),
    // Cloud.
    raw(
        "AWS_ACCESS_KEY",
        &["akia", "asia", "abia", "acca", "a3t"],
        r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b",
    ),
    raw(
        "AWS_SECRET_KEY",
        &["aws"],
        r#"(?i)aws[A-Za-z0-9_.-]{0,20}(?:secret|sk)[A-Za-z0-9_.-]{0,20}["']?[ \t]*(?:=|:|=>)[ \t]*["']?(?P<s>[A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)"#,
    ),
    raw(
        "AWS_SESSION_TOKEN",
        &["aws"],
        r#"(?i)aws[A-Za-z0-9_.-]{0,20}session[_-]?token["']?[ \t]*(?:=|:|=>)[ \t]*["']?(?P<s>[A-Za-z0-9/+=]{100,})"#,
    ),
    raw(
        "GCP_API_KEY",
        &["aiza"],
        r"\b(?P<s>AIza[A-Za-z0-9_-]{35})(?:[^A-Za-z0-9_-]|$)",
    ),
    raw("GOOGLE_OAUTH_TOKEN", &["ya29."], r"\bya29\.[A-Za-z0-9_-]{20,}"),
    raw(
        "GOOGLE_OAUTH_CLIENT_SECRET",
        &["gocspx-"],
        r"\b(?P<s>GOCSPX-[A-Za-z0-9_-]{28})(?:[^A-Za-z0-9_-]|$)",
    ),
    raw(
        "AZURE_STORAGE_KEY",
        &["accountkey="],
        r"(?i)AccountKey=(?P<s>[A-Za-z0-9+/]{86}==)",
    ),
    keyed(
        "AZURE_STORAGE_KEY",
        &["azure", "storage"],
        r"azure|storage",
        r"[A-Za-z0-9+/]{86}==",
    ),
    raw(
        "AZURE_SHARED_ACCESS_KEY",
        &["sharedaccesskey="],
        r"(?i)SharedAccessKey=(?P<s>[A-Za-z0-9+/]{42,44}=?)",
    ),
    raw(
        "AZURE_SAS_SIGNATURE",
        &["sig="],
        r"[?&;]sig=(?P<s>[A-Za-z0-9%+/]{40,}(?:%3[Dd]|=){0,2})",
    ),
    raw(
        "AZURE_AD_CLIENT_SECRET",
        &["q~"],
        r#"(?:^|[\\'"`\s>=:(,)])(?P<s>[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34})(?:$|[\\'"`\s<),])"#,
    ),
    raw(
        "DIGITALOCEAN_TOKEN",
        &["dop_v1_", "doo_v1_", "dor_v1_"],
        r"\bdo[opr]_v1_[a-f0-9]{64}\b",
    ),
    raw("HEROKU_API_KEY", &["hrku-aa"], r"\bHRKU-AA[A-Za-z0-9_-]{58}"),
    keyed(
        "HEROKU_API_KEY",
        &["heroku"],
        r"heroku",
        r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
    ),
    raw("ALIBABA_ACCESS_KEY_ID", &["ltai"], r"\bLTAI[A-Za-z0-9]{20}\b"),
    keyed(
        "ALIBABA_SECRET_KEY",
        &["alibaba", "aliyun"],
        r"alibaba|aliyun",
        r"[A-Za-z0-9]{30}",
    ),
    raw(
        "CLOUDFLARE_ORIGIN_CA_KEY",
        &["v1.0-"],
        r"\bv1\.0-[a-f0-9]{24}-[a-f0-9]{146}\b",
    ),
    keyed(
        "CLOUDFLARE_API_KEY",
        &["cloudflare", "cf_api"],
        r"cloudflare|cf_api",
        r"[A-Za-z0-9_-]{40}|[a-f0-9]{37}",
    ),
    raw(
        "FLYIO_TOKEN",
        &["fo1_", "fm1", "fm2_"],
        r"\b(?:fo1_[A-Za-z0-9_-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,}={0,3})",
    ),
    raw("SCALINGO_TOKEN", &["tk-us-"], r"\btk-us-[A-Za-z0-9_-]{48}\b"),
    raw("OPENSHIFT_TOKEN", &["sha256~"], r"\bsha256~[A-Za-z0-9_-]{43}\b"),
    raw("DATABRICKS_TOKEN", &["dapi"], r"\bdapi[a-f0-9]{32}(?:-[0-9])?\b"),
    raw(
        "PLANETSCALE_TOKEN",
        &["pscale_"],
        r"\bpscale_(?:tkn|oauth|pw)_[A-Za-z0-9_=.-]{32,64}",
    ),
    raw("PULUMI_TOKEN", &["pul-"], r"\bpul-[a-f0-9]{40}\b"),
    raw(
        "TERRAFORM_CLOUD_TOKEN",
        &[".atlasv1."],
        r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}",
    ),
    raw(
        "VAULT_TOKEN",
        &["hvs.", "hvb.", "hvr."],
        r"\bhv[sbr]\.[A-Za-z0-9_-]{24,}",
    ),
    raw(
        "DOPPLER_TOKEN",
        &["dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."],
        r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}\b",
    ),
    raw("INFRACOST_TOKEN", &["ico-"], r"\bico-[A-Za-z0-9]{32}\b"),
    // Source hosting and CI.
    raw(
        "GITHUB_TOKEN",
        &["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
        r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b",
    ),
    raw(
        "GITLAB_TOKEN",
        &[
            "glpat-",
            "gldt-",
            "glrt-",
            "glft-",
            "glsoat-",
            "glffct-",
            "glimt-",
            "gloas-",
            "glagent-",
            "glcbt-",
            "glptt-",
            "gr1348941",
        ],
        r"\b(?:gl(?:pat|dt|rt|ft|soat|ffct|imt|oas|agent)-[A-Za-z0-9_-]{20,300}(?:\.[0-9a-z]{9})?|glcbt-[A-Za-z0-9]{1,5}_[A-Za-z0-9_-]{20}|glptt-[0-9a-f]{40}|GR1348941[A-Za-z0-9_-]{20,})",
    ),
    raw(
        "GITLAB_SESSION_COOKIE",
        &["_gitlab_session="],
        r"_gitlab_session=(?P<s>[0-9a-z]{32})",
    ),
    raw("BITBUCKET_APP_PASSWORD", &["atbb"], r"\bATBB[A-Za-z0-9_=.-]{28,}"),
    raw("BITBUCKET_ACCESS_TOKEN", &["atctt3"], r"\bATCTT3[A-Za-z0-9_=-]{60,}"),
    keyed(
        "BITBUCKET_CLIENT_SECRET",
        &["bitbucket"],
        r"bitbucket",
        r"[A-Za-z0-9=_-]{64}|[A-Za-z0-9]{32}",
    ),
    raw("ATLASSIAN_API_TOKEN", &["atatt3"], r"\bATATT3[A-Za-z0-9_=-]{180,}"),
    keyed(
        "ATLASSIAN_API_TOKEN",
        &["atlassian", "confluence", "jira"],
        r"atlassian|confluence|jira",
        r"[A-Za-z0-9]{20}[A-Fa-f0-9]{4}",
    ),
    raw(
        "CIRCLECI_TOKEN",
        &["ccipat_", "cciprj_"],
        r"\bCCIP(?:AT|RJ)_[A-Za-z0-9]{22}_[a-f0-9]{40}\b",
    ),
    keyed("CIRCLECI_TOKEN", &["circle"], r"circle", r"[a-f0-9]{40}"),
    keyed("TRAVIS_TOKEN", &["travis"], r"travis", r"[A-Za-z0-9_-]{22}"),
    raw("BUILDKITE_TOKEN", &["bkua_"], r"\bbkua_[a-f0-9]{40}\b"),
    keyed("BUILDKITE_TOKEN", &["buildkite"], r"buildkite", r"[A-Za-z0-9]{40,64}"),
    raw("SONAR_TOKEN", &["squ_", "sqa_", "sqp_"], r"\bsq[uap]_[a-f0-9]{40}\b"),
    keyed(
        "SONAR_TOKEN",
        &["sonar"],
        r"sonar[_.-]?(?:login|token)",
        r"[A-Za-z0-9=_-]{40}",
    ),
    keyed(
        "SNYK_TOKEN",
        &["snyk"],
        r"snyk",
        r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
    ),
    keyed(
        "CODECOV_TOKEN",
        &["codecov"],
        r"codecov",
        r"[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}|[A-Za-z0-9]{32}",
    ),
    keyed("NETLIFY_TOKEN", &["netlify"], r"netlify", r"[A-Za-z0-9=_-]{40,46}"),
    // Chat.
    raw(
        "SLACK_TOKEN",
        &["xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-", "xoxe", "xapp-"],
        r"\b(?:xoxe\.xox[bp]-[0-9]-[A-Za-z0-9]{140,}|xox[abposre]-[A-Za-z0-9-]{10,}|xapp-[0-9]-[A-Z0-9]+-[0-9]+-[A-Za-z0-9]+)",
    ),
    raw(
        "SLACK_WEBHOOK_URL",
        &["hooks.slack.com"],
        r"(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}",
    ),
    raw(
        "DISCORD_WEBHOOK_URL",
        &["discord"],
        r"(?:https?://)?(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/(?:v[0-9]+/)?webhooks/[0-9]{17,20}/[A-Za-z0-9_-]{60,68}",
    ),
    raw(
        "DISCORD_BOT_TOKEN",
        &["discord", "bot"],
        // The token's shape alone is too loose: it must follow `discord…` or `bot…`
        // (`DISCORD_TOKEN=`, `Authorization: Bot `).
        r#"(?i:discord|bot)[A-Za-z0-9_ .:"'=-]{0,40}?\b(?P<s>[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40})(?:[^A-Za-z0-9_-]|$)"#,
    ),
    raw(
        "TEAMS_WEBHOOK_URL",
        &["office.com/webhook", "office365.com/webhook"],
        r"https://[A-Za-z0-9.-]*office(?:365)?\.com/webhook(?:b2)?/[A-Za-z0-9@/_-]{40,}",
    ),
    raw(
        "TELEGRAM_BOT_TOKEN",
        &[":a"],
        r"(?:\b|bot)(?P<s>[0-9]{5,16}:A[A-Za-z0-9_-]{34})(?:[^A-Za-z0-9_-]|$)",
    ),
    keyed("MATTERMOST_TOKEN", &["mattermost"], r"mattermost", r"[a-z0-9]{26}"),
    // Payment.
    raw(
        "STRIPE_SECRET_KEY",
        &["sk_live_", "sk_test_", "sk_prod_"],
        r"\bsk_(?:live|test|prod)_[A-Za-z0-9]{10,247}\b",
    ),
    raw(
        "STRIPE_RESTRICTED_KEY",
        &["rk_live_", "rk_test_", "rk_prod_"],
        r"\brk_(?:live|test|prod)_[A-Za-z0-9]{10,247}\b",
    ),
    raw("STRIPE_WEBHOOK_SECRET", &["whsec_"], r"\bwhsec_[A-Za-z0-9+/=]{32,}"),
    raw(
        "SQUARE_ACCESS_TOKEN",
        &["sq0atp-", "eaaa"],
        r"\b(?P<s>sq0atp-[A-Za-z0-9_-]{22}|EAAA[A-Za-z0-9_-]{60})(?:[^A-Za-z0-9_-]|$)",
    ),
    raw(
        "SQUARE_OAUTH_SECRET",
        &["sq0csp-"],
        r"\b(?P<s>sq0csp-[A-Za-z0-9_-]{43})(?:[^A-Za-z0-9_-]|$)",
    ),
    raw(
        "BRAINTREE_ACCESS_TOKEN",
        &["access_token$production$", "access_token$sandbox$"],
        r"access_token\$(?:production|sandbox)\$[a-z0-9]{16}(?:\$[a-f0-9]{32})?",
    ),
    raw(
        "SHOPIFY_ACCESS_TOKEN",
        &["shpat_", "shpca_", "shppa_"],
        r"\bshp(?:at|ca|pa)_[a-fA-F0-9]{32}\b",
    ),
    raw("SHOPIFY_SHARED_SECRET", &["shpss_"], r"\bshpss_[a-fA-F0-9]{32}\b"),
    raw(
        "FACEBOOK_ACCESS_TOKEN",
        &["eaam", "eaac"],
        r"\bEAA[MC][A-Za-z0-9]{100,}",
    ),
    raw(
        "DUFFEL_TOKEN",
        &["duffel_"],
        r"\bduffel_(?:test|live)_[A-Za-z0-9_=-]{43}",
    ),
    raw("EASYPOST_API_KEY", &["ezak", "eztk"], r"\bEZ[AT]K[A-Za-z0-9]{54}\b"),
    raw(
        "SHIPPO_TOKEN",
        &["shippo_"],
        r"\bshippo_(?:live|test)_[a-fA-F0-9]{40}\b",
    ),
    // Package registries.
    raw("NPM_TOKEN", &["npm_"], r"\bnpm_[A-Za-z0-9]{36}\b"),
    raw(
        "PYPI_TOKEN",
        &["pypi-ageichlwas5vcmc", "pypi-agendgvzdc5wexbplm9yzw"],
        r"\bpypi-AgE(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{50,}",
    ),
    raw("RUBYGEMS_API_KEY", &["rubygems_"], r"\brubygems_[a-f0-9]{48}\b"),
    raw("NUGET_API_KEY", &["oy2"], r"\boy2[a-z0-9]{43}\b"),
    raw(
        "DOCKER_HUB_TOKEN",
        &["dckr_pat_", "dckr_oat_"],
        r"\bdckr_(?:pat|oat)_[A-Za-z0-9_-]{27,}",
    ),
    raw("CRATES_IO_TOKEN", &["cio"], r"\bcio[A-Za-z0-9]{32}\b"),
    raw("CLOJARS_TOKEN", &["clojars_"], r"\bCLOJARS_[A-Za-z0-9]{60}\b"),
    raw("ARTIFACTORY_API_KEY", &["akcp"], r"\bAKCp[A-Za-z0-9]{69}\b"),
    // LLM APIs. Anthropic before OpenAI: both begin `sk-`.
    raw(
        "ANTHROPIC_API_KEY",
        &["sk-ant-api", "sk-ant-oat"],
        r"\bsk-ant-(?:api|oat)[0-9]{2}-[A-Za-z0-9_-]{80,}",
    ),
    raw(
        "ANTHROPIC_ADMIN_KEY",
        &["sk-ant-admin"],
        r"\bsk-ant-admin[0-9]{2}-[A-Za-z0-9_-]{80,}",
    ),
    raw(
        "OPENAI_API_KEY",
        &["sk-"],
        r"\b(?P<s>sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}|[A-Za-z0-9_-]*T3BlbkFJ[A-Za-z0-9_-]+|[A-Za-z0-9]{48}))(?:[^A-Za-z0-9_-]|$)",
    ),
    raw(
        "HUGGINGFACE_TOKEN",
        &["hf_", "api_org_"],
        r"\b(?:hf_|api_org_)[A-Za-z]{34}\b",
    ),
    raw("GROQ_API_KEY", &["gsk_"], r"\bgsk_[A-Za-z0-9]{48}\b"),
    raw("REPLICATE_API_TOKEN", &["r8_"], r"\br8_[A-Za-z0-9]{37}\b"),
    raw("PERPLEXITY_API_KEY", &["pplx-"], r"\bpplx-[A-Za-z0-9]{48}\b"),
    keyed(
        "COHERE_API_KEY",
        &["cohere", "co_api_key"],
        r"cohere|co_api_key",
        r"[A-Za-z0-9]{40}",
    ),
    // Mail, messaging, monitoring, productivity.
    raw(
        "SENDGRID_API_KEY",
        &["sg."],
        r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}",
    ),
    raw(
        "SENDINBLUE_API_KEY",
        &["xkeysib-", "xsmtpsib-"],
        r"\bx(?:keysib|smtpsib)-[a-f0-9]{64}-[A-Za-z0-9]{16}\b",
    ),
    keyed("TWILIO_API_KEY", &["twilio"], r"twilio", r"(?:SK|AC)?[a-f0-9]{32}"),
    keyed(
        "MAILGUN_API_KEY",
        &["mailgun"],
        r"mailgun",
        r"key-[a-f0-9]{32}|[a-f0-9]{32}-[a-f0-9]{8}-[a-f0-9]{8}",
    ),
    raw("MAILCHIMP_API_KEY", &["-us"], r"\b[0-9a-f]{32}-us[0-9]{1,2}\b"),
    raw(
        "NEW_RELIC_KEY",
        &["nrak-", "nrii-", "nrjs-"],
        r"\b(?:NRAK-[A-Z0-9]{27}|NRII-[A-Za-z0-9-]{32}|NRJS-[a-f0-9]{19})\b",
    ),
    keyed(
        "DATADOG_API_KEY",
        &["datadog", "dd_api", "dd_app", "dd-api", "dd-app"],
        r"datadog|dd[_-]api|dd[_-]app",
        r"[a-f0-9]{40}|[a-f0-9]{32}",
    ),
    raw(
        "SENTRY_TOKEN",
        &["sntrys_", "sntryu_"],
        r"\b(?:sntrys_eyJ[A-Za-z0-9+/=_-]{40,}|sntryu_[a-f0-9]{64}\b)",
    ),
    keyed("SENTRY_TOKEN", &["sentry"], r"sentry", r"[a-f0-9]{64}"),
    raw(
        "DYNATRACE_TOKEN",
        &["dt0c01."],
        r"\bdt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}\b",
    ),
    raw(
        "GRAFANA_TOKEN",
        &["glc_", "glsa_", "eyjrijoi"],
        r"\b(?:glc_[A-Za-z0-9+/]{32,400}={0,3}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b|eyJrIjoi[A-Za-z0-9]{70,400}={0,3})",
    ),
    keyed("OKTA_TOKEN", &["okta"], r"okta", r"00[A-Za-z0-9=_-]{40}"),
    raw("LINEAR_API_KEY", &["lin_api_"], r"\blin_api_[A-Za-z0-9]{40}\b"),
    raw(
        "NOTION_TOKEN",
        &["ntn_", "secret_"],
        r"\b(?:ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43})\b",
    ),
    raw("POSTMAN_API_KEY", &["pmak-"], r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b"),
    raw("README_API_KEY", &["rdme_"], r"\brdme_[a-z0-9]{70}\b"),
    raw("PREFECT_API_KEY", &["pnu_"], r"\bpnu_[A-Za-z0-9]{36}\b"),
    raw("TYPEFORM_TOKEN", &["tfp_"], r"\btfp_[A-Za-z0-9_.=-]{59}"),
    raw(
        "MAPBOX_SECRET_TOKEN",
        &["sk.eyj"],
        r"\bsk\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}",
    ),
    raw("FRAMEIO_TOKEN", &["fio-u-"], r"\bfio-u-[A-Za-z0-9_=-]{64}"),
    raw("ADOBE_CLIENT_SECRET", &["p8e-"], r"\bp8e-[A-Za-z0-9]{32}\b"),
    // Generic: tokens in transit and in assignments. JWT first: a Bearer token is often one.
    raw(
        "JWT",
        &["eyj"],
        r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]+)?",
    ),
    checked(
        Check::Header,
        raw(
            "BEARER_TOKEN",
            &["bearer"],
            r"(?i)\bbearer\s+(?P<s>[A-Za-z0-9._~+/-]{12,}=*)",
        ),
    ),
    checked(
        Check::Header,
        raw(
            "BASIC_AUTH",
            &["authorization"],
            r#"(?i)\bauthorization["']?\s*[:=]\s*["']?basic\s+(?P<s>[A-Za-z0-9+/]{8,}={0,2})"#,
        ),
    ),
    checked(
        Check::Assignment,
        raw(
            "BASIC_AUTH",
            &["curl"],
            r#"\bcurl\b[^\n]*?\s(?:-u|--user)[ =]["']?[^\s:"']+:(?P<s>[^\s"']{3,})"#,
        ),
    ),
    checked(
        Check::Header,
        raw(
            "API_KEY_HEADER",
            &["x-"],
            r#"(?i)\bx-(?:[a-z]+-)?(?:api-?)?(?:key|token|secret)["']?\s*[:=]\s*["']?(?P<s>[A-Za-z0-9._~+/=-]{12,})"#,
        ),
    ),
    checked(
        Check::Assignment,
        raw(
            "URL_PASSWORD",
            &["://"],
            r"[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@]+:(?P<s>[^\s@/]+)@",
        ),
    ),
    checked(
        Check::Assignment,
        raw(
            "PASSWORD",
            &[
                "password", "passwd", "pwd", "secret", "apikey", "api_key", "api-key", "token",
            ],
            // No leading word boundary: `DB_PASSWORD=` must match too; the trailing one keeps
            // `password_reset` out.
            r#"(?i)(?P<k>password|passwd|pwd|secret|api[_-]?key|token)\b["']?[ \t]*[=:][ \t]*["']?(?P<s>[^\s"'`,;]{4,})"#,
        ),
    ),
];

/// The rules, compiled once: their patterns, and one Aho-Corasick automaton over all keywords.
struct Compiled {
    regexes: Vec<Regex>,
    /// Whether each pattern has a group `s`.
    grouped: Vec<bool>,
    keywords: AhoCorasick,
    /// For each keyword of `keywords`, the rules it belongs to.
    rules_of_keyword: Vec<Vec<usize>>,
}

static COMPILED: LazyLock<Compiled> = LazyLock::new(|| {
    let regexes: Vec<Regex> = RULES
        .iter()
        .map(|rule| Regex::new(&pattern(rule)).unwrap_or_else(|e| panic!("redaction rule {}: {e}", rule.kind)))
        .collect();
    let grouped = regexes
        .iter()
        .map(|re| re.capture_names().any(|n| n == Some("s")))
        .collect();
    let mut words: Vec<&str> = Vec::new();
    let mut rules_of_keyword: Vec<Vec<usize>> = Vec::new();
    for (i, rule) in RULES.iter().enumerate() {
        for &word in rule.keywords {
            match words.iter().position(|w| *w == word) {
                Some(k) => rules_of_keyword[k].push(i),
                None => {
                    words.push(word);
                    rules_of_keyword.push(vec![i]);
                }
            }
        }
    }
    // A DFA: about 1.7 times the default NFA's speed on a pytest log (each byte is one table
    // lookup), for a few hundred KiB.
    let keywords = AhoCorasickBuilder::new()
        .ascii_case_insensitive(true)
        .match_kind(MatchKind::Standard)
        .kind(Some(AhoCorasickKind::DFA))
        .build(&words)
        .expect("redaction keywords");
    Compiled {
        regexes,
        grouped,
        keywords,
        rules_of_keyword,
    }
});

/// A rule's pattern as the `regex` crate takes it.
fn pattern(rule: &Rule) -> String {
    let p = match rule.shape {
        Shape::Raw(p) => p.to_owned(),
        Shape::Keyed(names, value) => [
            "(?i)(?:",
            names,
            r#")[A-Za-z0-9_ \t.-]{0,20}["'`\s]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[`'"\s=]{0,5}(?P<s>"#,
            value,
            r#")(?:[`'"\s;,)}\]]|\\[nr]|$)"#,
        ]
        .concat(),
    };
    // A Unicode word boundary stops the lazy DFA at the first non-ASCII byte of a log.
    p.replace(r"\b", r"(?-u:\b)")
}

impl Compiled {
    /// Which rules have a keyword in `text`: one pass, whatever the number of rules.
    fn candidates(&self, text: &str) -> Vec<bool> {
        let mut hit = vec![false; RULES.len()];
        for m in self.keywords.find_overlapping_iter(text) {
            for &i in &self.rules_of_keyword[m.pattern().as_usize()] {
                hit[i] = true;
            }
        }
        hit
    }

    /// `text` with rule `i`'s matches replaced, and how many, when there are any.
    fn apply(&self, i: usize, text: &str) -> Option<(String, usize)> {
        let (rule, re) = (&RULES[i], &self.regexes[i]);
        let mut out: Option<String> = None;
        let mut last = 0;
        let mut count = 0;
        let mut replace = |start: usize, end: usize| {
            let out = out.get_or_insert_with(|| String::with_capacity(text.len()));
            out.push_str(&text[last..start]);
            out.push_str("[REDACTED:");
            out.push_str(rule.kind);
            out.push(']');
            last = end;
            count += 1;
        };
        if self.grouped[i] {
            for caps in re.captures_iter(text) {
                let Some(m) = caps.name("s") else { continue };
                if is_secret(rule.check, text, &caps, m.as_str()) {
                    replace(m.start(), m.end());
                }
            }
        } else {
            for m in re.find_iter(text) {
                replace(m.start(), m.end());
            }
        }
        out.map(|mut out| {
            out.push_str(&text[last..]);
            (out, count)
        })
    }
}

/// Whether a value a rule matched is a secret rather than an earlier redaction, a placeholder
/// or code.
fn is_secret(check: Check, text: &str, caps: &Captures, value: &str) -> bool {
    if value.starts_with("[REDACTED:") {
        return false;
    }
    match check {
        Check::Shape => true,
        Check::Header => !value.bytes().all(|b| b.is_ascii_alphabetic()) && !placeholder(value),
        Check::Assignment => {
            if let Some(k) = caps.name("k") {
                // The whole name the keyword ends: `PWD` and `OLDPWD` hold the working directory.
                let before = text[..k.start()]
                    .bytes()
                    .rev()
                    .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
                    .count();
                let name = &text[k.start() - before..k.end()];
                if name.eq_ignore_ascii_case("pwd") || name.eq_ignore_ascii_case("oldpwd") {
                    return false;
                }
            }
            !placeholder(value) && !code(value)
        }
    }
}

/// `true`, `null`, `***`, `xxxx`, `$VAR`, `%VAR%`, `<token>`: not a value, a stand-in for one.
fn placeholder(value: &str) -> bool {
    const WORDS: &[&str] = &[
        "true",
        "false",
        "null",
        "none",
        "nil",
        "undefined",
        "empty",
        "redacted",
        "masked",
        "hidden",
        "required",
        "optional",
        "unset",
    ];
    WORDS.iter().any(|w| value.eq_ignore_ascii_case(w))
        || value.starts_with('$')
        || (value.starts_with('%') && value.ends_with('%'))
        || (value.starts_with('<') && value.ends_with('>'))
        || value
            .bytes()
            .all(|b| matches!(b, b'*' | b'x' | b'X' | b'.' | b'#' | b'-' | b'_'))
}

/// `PASSWORD)`, `settings.SECRET_KEY`, `request.headers[`: a traceback's source line, not a value.
fn code(value: &str) -> bool {
    let identifier = |s: &str| {
        s.bytes().next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
            && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    };
    value
        .bytes()
        .any(|b| matches!(b, b'(' | b')' | b'[' | b']' | b'{' | b'}'))
        || value.bytes().all(|b| b.is_ascii_uppercase() || b == b'_')
        || (value.contains('.') && value.split('.').all(identifier))
}

/// The values of `vars` whose names say they are secrets: what a process must never let out,
/// whichever way a build finds them (`/proc/<parent>/environ` included).
pub fn secret_values(vars: impl IntoIterator<Item = (String, String)>) -> Vec<String> {
    vars.into_iter()
        .filter(|(name, value)| looks_secret_name(name) && value.trim().len() >= 4)
        .map(|(_, value)| value)
        .collect()
}

/// Compiles the rules now instead of at the first redaction. The operator calls it at start:
/// the rules take tens of milliseconds to compile, which would otherwise be spent in the path
/// of the first run after every start or failover, between its status and its Job.
pub fn prepare() {
    LazyLock::force(&COMPILED);
}

/// What an exact secret value becomes.
pub const SECRET_PLACEHOLDER: &str = "[REDACTED:SECRET]";

/// Replaces every secret value (at least 4 characters) and every credential pattern in `text`.
/// Returns the text and how many replacements were made.
pub fn redact(text: &str, secret_values: &[String]) -> (String, usize) {
    let mut out = text.to_owned();
    let mut count = 0;
    // Exact values first, longest first, so that a value containing another is replaced whole.
    let mut values: Vec<&String> = secret_values.iter().filter(|v| v.trim().len() >= 4).collect();
    values.sort_by_key(|v| std::cmp::Reverse(v.len()));
    for value in values {
        // A value that ends with what the placeholder begins with (`…[`), or the reverse, can
        // form again across a placeholder's edge: a few more passes take it out. A value that is
        // part of the placeholder itself is no leak, and gets one pass.
        let passes = if SECRET_PLACEHOLDER.contains(value.as_str()) {
            1
        } else {
            8
        };
        for _ in 0..passes {
            let n = out.matches(value.as_str()).count();
            if n == 0 {
                break;
            }
            out = out.replace(value.as_str(), SECRET_PLACEHOLDER);
            count += n;
        }
    }
    let compiled = &*COMPILED;
    let candidates = compiled.candidates(&out);
    for (i, candidate) in candidates.into_iter().enumerate() {
        if candidate && let Some((next, n)) = compiled.apply(i, &out) {
            out = next;
            count += n;
        }
    }
    (out, count)
}

/// Whether an environment variable of this name holds a secret, so that its value is redacted
/// wherever it appears: a word of the name (split at `_`, `-`, `.`) is, or ends with, a
/// credential word (`TOKEN`, `GITHUBTOKEN`, `DB_PASSWORD`, `CLIENT_SECRET`, `SENTRY_DSN`), or
/// two words name a key (`API_KEY`, `ACCESS_KEY`, `PRIVATE_KEY`, `SESSION_KEY`), a connection
/// string or a webhook URL; unless the last word says the value is about the secret rather than
/// the secret (`…_FILE`, `…_PATH`, `…_ID`, `…_URL`, `…_USER`), and never the working directory
/// (`PWD`, `OLDPWD`). `TOKENIZERS_PARALLELISM`, `GIT_AUTHOR_NAME` and `SSH_AUTH_SOCK` are not
/// secrets.
pub fn looks_secret_name(name: &str) -> bool {
    const ENDINGS: &[&str] = &[
        "TOKEN",
        "SECRET",
        "SECRETS",
        "PASSWORD",
        "PASSWD",
        "PASSPHRASE",
        "CREDENTIAL",
        "CREDENTIALS",
        "CREDS",
        "APIKEY",
        "ACCESSKEY",
        "PRIVATEKEY",
        "SECRETKEY",
        "SESSIONKEY",
        "SIGNINGKEY",
        "AUTH",
        "AUTHORIZATION",
        "PWD",
        "DSN",
        "CONNECTIONSTRING",
        "CONNSTR",
        "WEBHOOK",
        "WEBHOOKURL",
    ];
    const WHOLE: &[&str] = &["PASS", "PAT", "COOKIE"];
    const KEYS: &[&str] = &[
        "API",
        "ACCESS",
        "PRIVATE",
        "SECRET",
        "SESSION",
        "SIGNING",
        "ENCRYPTION",
        "MASTER",
        "ACCOUNT",
        "AUTH",
        "SSH",
        "DEPLOY",
        "LICENSE",
    ];
    const ABOUT: &[&str] = &[
        "FILE",
        "PATH",
        "DIR",
        "NAME",
        "ID",
        "TYPE",
        "URL",
        "URI",
        "ENDPOINT",
        "HOST",
        "PORT",
        "USER",
        "USERNAME",
        "LENGTH",
        "LEN",
        "SIZE",
        "TTL",
        "EXPIRY",
        "EXPIRES",
        "EXPIRATION",
        "TIMEOUT",
        "ENABLED",
        "DISABLED",
        "MODE",
        "HELPER",
        "PROVIDER",
        "SOCK",
        "SOCKET",
        "VERSION",
        "REGION",
        "METHOD",
        "HEADER",
    ];
    let upper = name.to_ascii_uppercase();
    if upper == "PWD" || upper == "OLDPWD" {
        return false;
    }
    let words: Vec<&str> = upper.split(['_', '-', '.']).filter(|w| !w.is_empty()).collect();
    let Some(&last) = words.last() else { return false };
    let phrase = |a: &str, b: &[&str]| words.windows(2).any(|w| w[0] == a && b.contains(&w[1]));
    if ABOUT.contains(&last) && !(last == "URL" && upper.contains("WEBHOOK")) {
        return false;
    }
    words
        .iter()
        .any(|w| *w != "OLDPWD" && (WHOLE.contains(w) || ENDINGS.iter().any(|e| w.ends_with(e))))
        || KEYS.iter().any(|k| phrase(k, &["KEY", "KEYS"]))
        || phrase("CONNECTION", &["STRING"])
        || phrase("CONN", &["STRING", "STR"])
        || phrase("WEBHOOK", &["URL"])
}

#[cfg(test)]
mod tests {
    use super::{COMPILED, RULES, looks_secret_name, redact};
    use proptest::prelude::*;

    #[test]
    fn secrets_and_credential_shapes_are_redacted() {
        let text = "\
token=ghp_abcdefghijklmnopqrstuvwxyz0123456789AB
AKIAABCDEFGHIJKLMNOP and aws_secret_access_key = abcdefghijklmnopqrstuvwxyz0123456789ABCD
glpat-abcdefghij0123456789 xoxb-1234567890-abcdef
Authorization: Bearer abc.def-ghi_jkl012
eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcdefghijklmnop
git clone https://deploy:hunter2secret@git.example.com/acme/repo.git
DB_PASSWORD=correcthorsebattery
-----BEGIN RSA PRIVATE KEY-----
MIIEowIBAAKCAQEA
-----END RSA PRIVATE KEY-----
my value is s3cr3t-from-secretRef
";
        let (out, count) = redact(text, &["s3cr3t-from-secretRef".into()]);
        for leaked in [
            "ghp_abcdef",
            "AKIAABCD",
            "abcdefghijklmnopqrstuvwxyz0123456789ABCD",
            "glpat-",
            "xoxb-",
            "abc.def-ghi",
            "eyJhbGci",
            "hunter2secret",
            "correcthorsebattery",
            "MIIEowIBAAKCAQEA",
            "s3cr3t-from-secretRef",
        ] {
            assert!(!out.contains(leaked), "{leaked} leaked:\n{out}");
        }
        assert!(
            out.contains("https://deploy:[REDACTED:URL_PASSWORD]@git.example.com"),
            "{out}"
        );
        assert!(out.contains("DB_PASSWORD=[REDACTED:PASSWORD]"), "{out}");
        assert!(count >= 11, "{count}");
    }

    #[test]
    fn ordinary_output_is_left_alone() {
        let text = "collected 8 items\ntests/test_a.py::test_password_reset PASSED\nkey = value\n";
        assert_eq!(redact(text, &[]), (text.to_owned(), 0));
    }

    /// Deterministic random-looking bodies: real-shaped, never a real secret, and never a
    /// credential-shaped literal in the source for a scanner to flag.
    struct Bodies(u64);

    const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    const UPPER_NUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    const LOWER_NUM: &str = "abcdefghijklmnopqrstuvwxyz0123456789";
    const LETTERS: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    const HEX: &str = "0123456789abcdef";
    const DIGITS: &str = "0123456789";
    const URL64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const BECH32: &str = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L";

    impl Bodies {
        fn next(&mut self) -> u64 {
            // SplitMix64.
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }

        fn of(&mut self, n: usize, set: &str) -> String {
            let set = set.as_bytes();
            (0..n)
                .map(|_| set[(self.next() % set.len() as u64) as usize] as char)
                .collect()
        }
    }

    /// (kind, a log line carrying a secret, the secret).
    fn samples(seed: u64) -> Vec<(&'static str, String, String)> {
        let mut r = Bodies(seed);
        let mut v: Vec<(&'static str, String, String)> = Vec::new();
        // A line that is the secret itself, with some context around it.
        let mut bare = |kind: &'static str, secret: String| {
            v.push((kind, format!("+ echo {secret} # done"), secret));
        };
        let uuid = |r: &mut Bodies| {
            format!(
                "{}-{}-{}-{}-{}",
                r.of(8, HEX),
                r.of(4, HEX),
                r.of(4, HEX),
                r.of(4, HEX),
                r.of(12, HEX)
            )
        };
        bare("AGE_SECRET_KEY", format!("AGE-SECRET-KEY-1{}", r.of(58, BECH32)));
        bare(
            "ONEPASSWORD_SECRET_KEY",
            format!(
                "A3-{}-{}-{}-{}-{}",
                r.of(6, UPPER_NUM),
                r.of(11, UPPER_NUM),
                r.of(5, UPPER_NUM),
                r.of(5, UPPER_NUM),
                r.of(5, UPPER_NUM)
            ),
        );
        bare(
            "ONEPASSWORD_SERVICE_ACCOUNT_TOKEN",
            format!("ops_eyJ{}", r.of(300, B64)),
        );
        bare(
            "AWS_ACCESS_KEY",
            format!("AKIA{}", r.of(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")),
        );
        bare("GCP_API_KEY", format!("AIzaSy{}", r.of(33, URL64)));
        bare("GOOGLE_OAUTH_TOKEN", format!("ya29.a0{}", r.of(120, URL64)));
        bare("GOOGLE_OAUTH_CLIENT_SECRET", format!("GOCSPX-{}", r.of(28, ALNUM)));
        bare(
            "AZURE_AD_CLIENT_SECRET",
            format!("{}8Q~{}", r.of(3, ALNUM), r.of(34, ALNUM)),
        );
        bare("DIGITALOCEAN_TOKEN", format!("dop_v1_{}", r.of(64, HEX)));
        bare("HEROKU_API_KEY", format!("HRKU-AA{}", r.of(58, URL64)));
        bare("ALIBABA_ACCESS_KEY_ID", format!("LTAI{}", r.of(20, ALNUM)));
        bare(
            "CLOUDFLARE_ORIGIN_CA_KEY",
            format!("v1.0-{}-{}", r.of(24, HEX), r.of(146, HEX)),
        );
        bare("FLYIO_TOKEN", format!("fm2_{}", r.of(160, B64)));
        bare("SCALINGO_TOKEN", format!("tk-us-{}", r.of(48, ALNUM)));
        bare("OPENSHIFT_TOKEN", format!("sha256~{}", r.of(43, ALNUM)));
        bare("DATABRICKS_TOKEN", format!("dapi{}", r.of(32, HEX)));
        bare("PLANETSCALE_TOKEN", format!("pscale_tkn_{}", r.of(43, ALNUM)));
        bare("PULUMI_TOKEN", format!("pul-{}", r.of(40, HEX)));
        bare(
            "TERRAFORM_CLOUD_TOKEN",
            format!("{}.atlasv1.{}", r.of(14, ALNUM), r.of(67, ALNUM)),
        );
        bare("VAULT_TOKEN", format!("hvs.CAES{}", r.of(92, URL64)));
        bare("DOPPLER_TOKEN", format!("dp.pt.{}", r.of(43, ALNUM)));
        bare("INFRACOST_TOKEN", format!("ico-{}", r.of(32, ALNUM)));
        bare("GITHUB_TOKEN", format!("ghp_{}", r.of(36, ALNUM)));
        bare("GITHUB_TOKEN", format!("ghs_{}", r.of(36, ALNUM)));
        bare(
            "GITHUB_TOKEN",
            format!("github_pat_11{}_{}", r.of(20, UPPER_NUM), r.of(59, ALNUM)),
        );
        bare("GITLAB_TOKEN", format!("glpat-{}", r.of(20, URL64)));
        bare(
            "GITLAB_TOKEN",
            format!("glrt-t1_{}.01{}", r.of(27, ALNUM), r.of(7, LOWER_NUM)),
        );
        bare("GITLAB_TOKEN", format!("GR1348941{}", r.of(20, ALNUM)));
        bare("BITBUCKET_APP_PASSWORD", format!("ATBB{}", r.of(32, ALNUM)));
        bare("BITBUCKET_ACCESS_TOKEN", format!("ATCTT3xFfGN0{}", r.of(180, URL64)));
        bare("ATLASSIAN_API_TOKEN", format!("ATATT3xFfGF0{}", r.of(180, URL64)));
        bare(
            "CIRCLECI_TOKEN",
            format!("CCIPAT_{}_{}", r.of(22, ALNUM), r.of(40, HEX)),
        );
        bare("BUILDKITE_TOKEN", format!("bkua_{}", r.of(40, HEX)));
        bare("SONAR_TOKEN", format!("squ_{}", r.of(40, HEX)));
        bare(
            "SLACK_TOKEN",
            format!("xoxb-{}-{}-{}", r.of(12, DIGITS), r.of(13, DIGITS), r.of(24, ALNUM)),
        );
        bare(
            "SLACK_TOKEN",
            format!("xapp-1-A{}-{}-{}", r.of(10, UPPER_NUM), r.of(13, DIGITS), r.of(64, HEX)),
        );
        bare(
            "SLACK_WEBHOOK_URL",
            format!(
                "https://hooks.slack.com/services/T{}/B{}/{}",
                r.of(10, UPPER_NUM),
                r.of(10, UPPER_NUM),
                r.of(24, ALNUM)
            ),
        );
        bare(
            "DISCORD_WEBHOOK_URL",
            format!(
                "https://discord.com/api/webhooks/{}/{}",
                r.of(19, DIGITS),
                r.of(68, URL64)
            ),
        );
        bare(
            "TEAMS_WEBHOOK_URL",
            format!(
                "https://acme.webhook.office.com/webhookb2/{}@{}/IncomingWebhook/{}/{}",
                uuid(&mut r),
                uuid(&mut r),
                r.of(32, HEX),
                uuid(&mut r)
            ),
        );
        bare("STRIPE_SECRET_KEY", format!("sk_live_51{}", r.of(97, ALNUM)));
        bare("STRIPE_SECRET_KEY", format!("sk_test_4eC39{}", r.of(19, ALNUM)));
        bare("STRIPE_RESTRICTED_KEY", format!("rk_live_51{}", r.of(97, ALNUM)));
        bare("STRIPE_WEBHOOK_SECRET", format!("whsec_{}", r.of(32, ALNUM)));
        bare("SQUARE_ACCESS_TOKEN", format!("EAAA{}", r.of(60, URL64)));
        bare("SQUARE_ACCESS_TOKEN", format!("sq0atp-{}", r.of(22, URL64)));
        bare("SQUARE_OAUTH_SECRET", format!("sq0csp-{}", r.of(43, URL64)));
        bare(
            "BRAINTREE_ACCESS_TOKEN",
            format!("access_token$production${}${}", r.of(16, LOWER_NUM), r.of(32, HEX)),
        );
        bare("SHOPIFY_ACCESS_TOKEN", format!("shpat_{}", r.of(32, HEX)));
        bare("SHOPIFY_SHARED_SECRET", format!("shpss_{}", r.of(32, HEX)));
        bare("FACEBOOK_ACCESS_TOKEN", format!("EAAC{}", r.of(180, ALNUM)));
        bare("DUFFEL_TOKEN", format!("duffel_live_{}", r.of(43, ALNUM)));
        bare("EASYPOST_API_KEY", format!("EZAK{}", r.of(54, ALNUM)));
        bare("SHIPPO_TOKEN", format!("shippo_live_{}", r.of(40, HEX)));
        bare("NPM_TOKEN", format!("npm_{}", r.of(36, ALNUM)));
        bare("PYPI_TOKEN", format!("pypi-AgEIcHlwaS5vcmc{}", r.of(150, URL64)));
        bare("RUBYGEMS_API_KEY", format!("rubygems_{}", r.of(48, HEX)));
        bare("NUGET_API_KEY", format!("oy2{}", r.of(43, LOWER_NUM)));
        bare("DOCKER_HUB_TOKEN", format!("dckr_pat_{}", r.of(27, URL64)));
        bare("CRATES_IO_TOKEN", format!("cio{}", r.of(32, ALNUM)));
        bare("CLOJARS_TOKEN", format!("CLOJARS_{}", r.of(60, LOWER_NUM)));
        bare("ARTIFACTORY_API_KEY", format!("AKCp{}", r.of(69, ALNUM)));
        bare("ANTHROPIC_API_KEY", format!("sk-ant-api03-{}AA", r.of(93, URL64)));
        bare("ANTHROPIC_ADMIN_KEY", format!("sk-ant-admin01-{}AA", r.of(93, URL64)));
        bare(
            "OPENAI_API_KEY",
            format!("sk-proj-{}T3BlbkFJ{}", r.of(74, URL64), r.of(74, URL64)),
        );
        bare("OPENAI_API_KEY", format!("sk-svcacct-{}", r.of(120, URL64)));
        bare(
            "OPENAI_API_KEY",
            format!("sk-{}T3BlbkFJ{}", r.of(20, ALNUM), r.of(20, ALNUM)),
        );
        bare("OPENAI_API_KEY", format!("sk-{}", r.of(48, ALNUM)));
        bare("HUGGINGFACE_TOKEN", format!("hf_{}", r.of(34, LETTERS)));
        bare("GROQ_API_KEY", format!("gsk_{}", r.of(48, ALNUM)));
        bare("REPLICATE_API_TOKEN", format!("r8_{}", r.of(37, ALNUM)));
        bare("PERPLEXITY_API_KEY", format!("pplx-{}", r.of(48, ALNUM)));
        bare(
            "SENDGRID_API_KEY",
            format!("SG.{}.{}", r.of(22, URL64), r.of(43, URL64)),
        );
        bare(
            "SENDINBLUE_API_KEY",
            format!("xkeysib-{}-{}", r.of(64, HEX), r.of(16, ALNUM)),
        );
        bare("MAILCHIMP_API_KEY", format!("{}-us{}", r.of(32, HEX), r.of(2, DIGITS)));
        bare("NEW_RELIC_KEY", format!("NRAK-{}", r.of(27, UPPER_NUM)));
        bare("SENTRY_TOKEN", format!("sntryu_{}", r.of(64, HEX)));
        bare(
            "SENTRY_TOKEN",
            format!(
                "sntrys_eyJpYXQiOjE3{}LCJyZWdpb25fdXJs{}_{}",
                r.of(40, ALNUM),
                r.of(40, ALNUM),
                r.of(43, ALNUM)
            ),
        );
        bare(
            "DYNATRACE_TOKEN",
            format!("dt0c01.{}.{}", r.of(24, UPPER_NUM), r.of(64, UPPER_NUM)),
        );
        bare("GRAFANA_TOKEN", format!("glc_{}", r.of(80, ALNUM)));
        bare("GRAFANA_TOKEN", format!("glsa_{}_{}", r.of(32, ALNUM), r.of(8, HEX)));
        bare("LINEAR_API_KEY", format!("lin_api_{}", r.of(40, ALNUM)));
        bare("NOTION_TOKEN", format!("ntn_{}{}", r.of(11, DIGITS), r.of(35, ALNUM)));
        bare("NOTION_TOKEN", format!("secret_{}", r.of(43, ALNUM)));
        bare("POSTMAN_API_KEY", format!("PMAK-{}-{}", r.of(24, HEX), r.of(34, HEX)));
        bare("README_API_KEY", format!("rdme_{}", r.of(70, LOWER_NUM)));
        bare("PREFECT_API_KEY", format!("pnu_{}", r.of(36, ALNUM)));
        bare("TYPEFORM_TOKEN", format!("tfp_{}", r.of(59, ALNUM)));
        bare(
            "MAPBOX_SECRET_TOKEN",
            format!("sk.eyJ1{}.{}", r.of(60, ALNUM), r.of(22, ALNUM)),
        );
        bare("FRAMEIO_TOKEN", format!("fio-u-{}", r.of(64, URL64)));
        bare("ADOBE_CLIENT_SECRET", format!("p8e-{}", r.of(32, ALNUM)));
        bare(
            "JWT",
            format!("eyJhbGciOiJSUzI1NiJ9.eyJ{}.{}", r.of(60, URL64), r.of(86, URL64)),
        );

        // Shapes that need the context they are found in.
        let mut line = |kind: &'static str, before: &str, secret: String, after: &str| {
            v.push((kind, format!("{before}{secret}{after}"), secret));
        };
        let pem = format!(
            "-----BEGIN PRIVATE KEY-----\\n{}\\n{}\\n-----END PRIVATE KEY-----\\n",
            r.of(64, B64),
            r.of(64, B64)
        );
        line(
            "GCP_SERVICE_ACCOUNT_KEY",
            "{\"type\": \"service_account\", \"project_id\": \"acme-ci\", \"private_key\": \"",
            pem,
            "\", \"client_email\": \"ci@acme-ci.iam.gserviceaccount.com\"}",
        );
        let pem = format!(
            "-----BEGIN OPENSSH PRIVATE KEY-----\n{}\n{}\n-----END OPENSSH PRIVATE KEY-----",
            r.of(70, B64),
            r.of(70, B64)
        );
        line("PRIVATE_KEY", "key:\n", pem, "\ndone");
        let pem = format!("-----BEGIN EC PRIVATE KEY-----\n{}\n{}", r.of(64, B64), r.of(40, B64));
        line("PRIVATE_KEY", "truncated:\n", pem, "");
        line("AWS_SECRET_KEY", "export AWS_SECRET_ACCESS_KEY=", r.of(40, B64), "\n");
        line(
            "AWS_SESSION_TOKEN",
            "aws_session_token = ",
            format!("IQoJb3JpZ2luX2Vj{}", r.of(300, B64)),
            "\n",
        );
        line(
            "AZURE_STORAGE_KEY",
            "DefaultEndpointsProtocol=https;AccountName=acmeci;AccountKey=",
            format!("{}==", r.of(86, B64)),
            ";EndpointSuffix=core.windows.net",
        );
        line(
            "AZURE_STORAGE_KEY",
            "AZURE_STORAGE_KEY=",
            format!("{}==", r.of(86, B64)),
            "\n",
        );
        line(
            "AZURE_SHARED_ACCESS_KEY",
            "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=",
            format!("{}=", r.of(43, B64)),
            "\n",
        );
        line(
            "AZURE_SAS_SIGNATURE",
            "https://acmeci.blob.core.windows.net/logs/run.txt?sv=2022-11-02&se=2031-01-01&sp=r&sig=",
            format!("{}%3D", r.of(43, ALNUM)),
            " ",
        );
        line("HEROKU_API_KEY", "HEROKU_API_KEY=", uuid(&mut r), "\n");
        line(
            "ALIBABA_SECRET_KEY",
            "alibaba_access_key_secret: ",
            r.of(30, ALNUM),
            "\n",
        );
        line("CLOUDFLARE_API_KEY", "CLOUDFLARE_API_TOKEN=\"", r.of(40, URL64), "\"");
        line(
            "BITBUCKET_CLIENT_SECRET",
            "bitbucket_client_secret = '",
            r.of(64, ALNUM),
            "'",
        );
        line(
            "ATLASSIAN_API_TOKEN",
            "JIRA_API_TOKEN=",
            format!("{}{}", r.of(20, ALNUM), r.of(4, HEX)),
            "\n",
        );
        line("CIRCLECI_TOKEN", "CIRCLE_TOKEN=", r.of(40, HEX), "\n");
        line("TRAVIS_TOKEN", "travis_api_token: ", r.of(22, ALNUM), "\n");
        line("BUILDKITE_TOKEN", "BUILDKITE_AGENT_TOKEN=", r.of(50, LOWER_NUM), "\n");
        line("SONAR_TOKEN", "sonar.login=", r.of(40, LOWER_NUM), "\n");
        line("SNYK_TOKEN", "SNYK_TOKEN=", uuid(&mut r), "\n");
        line("CODECOV_TOKEN", "CODECOV_TOKEN=", uuid(&mut r), "\n");
        line("NETLIFY_TOKEN", "NETLIFY_AUTH_TOKEN=", r.of(43, URL64), "\n");
        line(
            "DISCORD_BOT_TOKEN",
            "-H 'Authorization: Bot ",
            format!("MT{}.{}.{}", r.of(24, ALNUM), r.of(6, URL64), r.of(38, URL64)),
            "'",
        );
        line(
            "DISCORD_BOT_TOKEN",
            "DISCORD_TOKEN=",
            format!("OD{}.{}.{}", r.of(22, ALNUM), r.of(6, URL64), r.of(27, URL64)),
            "\n",
        );
        line(
            "TELEGRAM_BOT_TOKEN",
            "POST https://api.telegram.org/bot",
            format!("{}:AA{}", r.of(10, DIGITS), r.of(33, URL64)),
            "/sendMessage",
        );
        line("MATTERMOST_TOKEN", "MATTERMOST_TOKEN=", r.of(26, LOWER_NUM), "\n");
        line("COHERE_API_KEY", "CO_API_KEY=", r.of(40, ALNUM), "\n");
        line("TWILIO_API_KEY", "TWILIO_API_KEY=SK", r.of(32, HEX), "\n");
        line("TWILIO_API_KEY", "twilio_auth_token: \"", r.of(32, HEX), "\"");
        line("MAILGUN_API_KEY", "MAILGUN_API_KEY=key-", r.of(32, HEX), "\n");
        line("DATADOG_API_KEY", "DD_API_KEY=", r.of(32, HEX), "\n");
        line("DATADOG_API_KEY", "datadog_app_key: ", r.of(40, HEX), "\n");
        line("SENTRY_TOKEN", "SENTRY_AUTH_TOKEN=", r.of(64, HEX), "\n");
        line("OKTA_TOKEN", "OKTA_API_TOKEN=00", r.of(40, URL64), "\n");
        line(
            "GITLAB_SESSION_COOKIE",
            "Cookie: _gitlab_session=",
            r.of(32, LOWER_NUM),
            "; path=/",
        );
        line("BEARER_TOKEN", "Authorization: Bearer ", r.of(40, URL64), "\n");
        line(
            "BASIC_AUTH",
            "-H \"Authorization: Basic ",
            format!("{}==", r.of(30, B64)),
            "\"",
        );
        line(
            "BASIC_AUTH",
            "+ curl -fsS -u deploy:",
            r.of(16, ALNUM),
            " https://example.com/upload",
        );
        line("API_KEY_HEADER", "-H 'X-Api-Key: ", r.of(32, ALNUM), "'");
        line(
            "URL_PASSWORD",
            "Cloning into 'app'... https://ci:",
            r.of(20, ALNUM),
            "@git.example.com/acme/app.git",
        );
        line("PASSWORD", "DB_PASSWORD=", r.of(16, ALNUM), "\n");
        line("PASSWORD", "  \"client_secret\": \"", r.of(24, ALNUM), "\",");
        line("PASSWORD", "INTERNAL_API_TOKEN: ", r.of(24, ALNUM), "\n");
        v
    }

    #[test]
    fn every_rule_redacts_a_real_shaped_sample_as_its_kind() {
        for seed in [1, 2, 3] {
            for (kind, line, secret) in samples(seed) {
                let (out, count) = redact(&line, &[]);
                assert!(
                    out.contains(&format!("[REDACTED:{kind}]")),
                    "{kind} not found (seed {seed}):\n{line}\n{out}"
                );
                assert!(!out.contains(&secret), "{kind} leaked (seed {seed}):\n{out}");
                assert!(count >= 1);
            }
        }
    }

    #[test]
    fn every_rule_has_a_sample_and_its_keywords_are_needed() {
        let compiled = &*COMPILED;
        let samples = samples(7);
        for (i, rule) in RULES.iter().enumerate() {
            assert!(
                rule.keywords
                    .iter()
                    .all(|k| !k.is_empty() && k.to_ascii_lowercase() == *k)
            );
            let mut covered = false;
            for (kind, line, _) in &samples {
                if compiled.regexes[i].is_match(line) {
                    // The keyword prefilter must never hide a match.
                    let lower = line.to_ascii_lowercase();
                    assert!(
                        rule.keywords.iter().any(|k| lower.contains(k)),
                        "rule {} matches without a keyword: {line}",
                        rule.kind
                    );
                    covered |= *kind == rule.kind;
                }
            }
            assert!(covered, "no sample for rule {i} ({})", rule.kind);
        }
    }

    const NEAR_MISSES: &[&str] = &[
        "pip install scikit-learn  # sk-learn",
        "task-12 finished; subtask-123456789012345678901234567890 queued",
        "from huggingface_hub import hf_hub_download",
        "npm_config_cache=/home/runner/.npm",
        "HEAD is now at 3f786850e387550fdab836ed7e6dc881de23001b Fix the refund rounding",
        "request-id: 123e4567-e89b-12d3-a456-426614174000",
        "the docs show AIzaSyShort123 as an example",
        "tests/test_auth.py::test_password_reset PASSED                            [ 12%]",
        "key = value",
        "ghp_tooShort123",
        "export PWD=/builds/acme/app OLDPWD=/home/runner",
        "password: ${DB_PASSWORD}",
        "    assert login(user, password=PASSWORD)",
        "    token = request.headers[\"Authorization\"]",
        "E       AssertionError: expected settings.SECRET_KEY to be set",
        "secret_key = settings.SECRET_KEY",
        "GITHUB_TOKEN: ***",
        "Bearer authentication is required for this endpoint",
        "max_tokens=1024 TOKENIZERS_PARALLELISM=false",
        "docker login --password-stdin registry.example.com",
        "E   payload = 'aGVsbG8gd29ybGQsIHRoaXMgaXMgYSBub3JtYWwgdGVzdCBwYXlsb2FkIGZvciBiYXNlNjQ='",
        "Downloading https://files.pythonhosted.org/packages/ab/cd/requests-2.32.3-py3-none-any.whl (64 kB)",
        "Collecting git+https://github.com/acme/lib.git@v1.2",
        "  Using cached python@sha256:3f786850e387550fdab836ed7e6dc881de23001b3f786850e387550fdab836ed",
        "x-request-id: 5f1d7c2a-0b44-4c3e-9a55-d4e1c1f0e2aa",
        "the precious associative suspicion of precision",
        "============================= test session starts ==============================",
        "platform linux -- Python 3.12.1, pytest-8.0.0, pluggy-1.4.0 -- /usr/bin/python3",
        "rootdir: /builds/acme/app, configfile: pyproject.toml",
        "collected 42 items / 1 error",
        "FAILED tests/test_models.py::TestInvoice::test_total - AssertionError: assert 3 == 4",
        "E       assert 3 == 4",
        "=========================== short test summary info ============================",
        "tests/test_api.py::test_token_refresh[expired] FAILED                    [ 50%]",
        "   Compiling serde_json v1.0.128",
        "2026-11-22T04:01:02.1234567Z ##[group]Run actions/checkout@v4",
    ];

    #[test]
    fn near_misses_are_left_alone() {
        for line in NEAR_MISSES {
            assert_eq!(redact(line, &[]), ((*line).to_owned(), 0), "{line}");
        }
        let all = NEAR_MISSES.join("\n");
        assert_eq!(redact(&all, &[]), (all.clone(), 0));
    }

    #[test]
    fn pytest_fixture_logs_pass_through_unchanged() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/logs");
        for entry in std::fs::read_dir(dir).expect("tests/fixtures/logs").flatten() {
            let path = entry.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            if name.starts_with("py_") && name.ends_with(".log") {
                let text = String::from_utf8_lossy(&std::fs::read(&path).expect("a fixture")).into_owned();
                let (out, count) = redact(&text, &[]);
                assert_eq!(count, 0, "{name}:\n{out}");
            }
        }
    }

    #[test]
    fn pwd_is_the_working_directory_but_db_pwd_is_a_password() {
        let (out, count) = redact("PWD=/work OLDPWD=/tmp DB_PWD=Zr8qLw2vXk", &[]);
        assert_eq!(out, "PWD=/work OLDPWD=/tmp DB_PWD=[REDACTED:PASSWORD]");
        assert_eq!(count, 1);
    }

    fn fragments() -> Vec<String> {
        let mut all: Vec<String> = samples(11).into_iter().map(|(_, line, _)| line).collect();
        all.extend(NEAR_MISSES.iter().map(|s| (*s).to_owned()));
        all.extend(
            [
                "[REDACTED:SECRET]",
                "password=",
                "Bearer ",
                "https://u:",
                "@",
                "=",
                ":",
                " ",
                "\n",
            ]
            .map(String::from),
        );
        all
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn redaction_is_idempotent(
            parts in prop::collection::vec(
                prop_oneof![
                    3 => prop::sample::select(fragments()),
                    1 => "[ -~]{0,24}",
                    1 => "[a-z0-9]{8,16}",
                ],
                0..12,
            ),
            values in prop::collection::vec("[a-z0-9]{8,16}", 0..3),
        ) {
            let text = parts.concat();
            let (once, _) = redact(&text, &values);
            let (twice, again) = redact(&once, &values);
            prop_assert_eq!(again, 0, "{}\n-> {}\n-> {}", text, once, twice);
            prop_assert_eq!(&twice, &once);
        }
    }

    #[test]
    fn secret_names() {
        for name in [
            "TOKEN",
            "GITHUB_TOKEN",
            "githubToken",
            "CI_JOB_TOKEN",
            "NPM_AUTH_TOKEN",
            "HF_TOKEN",
            "DB_PASSWORD",
            "dbPassword",
            "SMTP_PASS",
            "MYSQL_PWD",
            "REDIS_PASSWD",
            "GPG_PASSPHRASE",
            "CLIENT_SECRET",
            "AWS_SECRET_ACCESS_KEY",
            "OPENAI_API_KEY",
            "STRIPE_APIKEY",
            "SPACES_ACCESS_KEY",
            "SSH_PRIVATE_KEY",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "DOCKER_CREDENTIAL",
            "NPM_CONFIG__AUTH",
            "HTTP_AUTHORIZATION",
            "FLASK_SESSION_KEY",
            "SENTRY_DSN",
            "AZURE_STORAGE_CONNECTION_STRING",
            "SLACK_WEBHOOK_URL",
            "TEAMS_WEBHOOK",
            "GH_PAT",
            "SECRET_KEY_BASE",
        ] {
            assert!(looks_secret_name(name), "{name}");
        }
    }

    #[test]
    fn ordinary_names() {
        for name in [
            "PWD",
            "OLDPWD",
            "pwd",
            "PATH",
            "HOME",
            "LANG",
            "CI",
            "GIT_AUTHOR_NAME",
            "GIT_AUTHOR_EMAIL",
            "TOKENIZERS_PARALLELISM",
            "MAX_TOKENS",
            "SSH_AUTH_SOCK",
            "AWS_ACCESS_KEY_ID",
            "AWS_REGION",
            "PASSWORD_FILE",
            "KUBEHEAL_SECRET_NAME",
            "ACTIONS_ID_TOKEN_REQUEST_URL",
            "CACHE_KEY",
            "PRIMARY_KEY",
            "KEYBOARD",
            "PASSED",
            "XAUTHORITY",
            "",
            "_",
        ] {
            assert!(!looks_secret_name(name), "{name}");
        }
    }

    #[test]
    fn a_secret_that_would_form_again_across_a_placeholder_edge_is_taken_out() {
        // Found by the heal_request fuzz target: `abc` before `[REDACTED…` is `abc[` again.
        let (out, _) = redact("abcabc[", &["abc[".to_owned()]);
        assert!(!out.contains("abc["), "{out}");
        let (out, _) = redact("T]abab", &["T]ab".to_owned()]);
        assert!(!out.contains("T]ab"), "{out}");
        // A value inside the placeholder itself is no leak and does not loop.
        assert_eq!(redact("ACTED", &["ACTED".to_owned()]).0, super::SECRET_PLACEHOLDER);
    }
}
