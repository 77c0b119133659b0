//! A tool's answer as a healer's: a tool (a CodeFixDDS's `tool: aider`) runs as an executor Job
//! that the operator launches and waits for; once the files it changed are read back, this
//! healer hands them to the cycle like any healer's answer, so the same validation, redaction
//! check, gate and repeated-patch rules apply to them.

use std::collections::BTreeMap;
use std::time::Duration;

use super::{HealFuture, HealRequest, HealResponse, Healer, validate};
use crate::api::heal_run::HealerOutcome;

/// The tool's result: the files it changed (full new texts), or why there is no fix.
pub struct ToolAnswer {
    pub result: Result<BTreeMap<String, String>, String>,
    /// How long the tool's Job ran.
    pub duration: Duration,
}

impl Healer for ToolAnswer {
    fn name(&self) -> &'static str {
        "tool"
    }

    fn heal<'a>(&'a self, request: &'a HealRequest) -> HealFuture<'a> {
        Box::pin(async move {
            let files = match &self.result {
                Ok(files) => files,
                Err(reason) => return HealResponse::failed(HealerOutcome::Error, reason.clone(), self.duration),
            };
            // Paths and sizes are checked here; whether the paths are ones the order allows is
            // the gate's to say, so that a tool that strays is refused with the violation.
            // The file count too is the gate's, held to the order's own limit.
            let limits = validate::Limits {
                allowed_paths: Vec::new(),
                max_files: usize::MAX,
                ..request.limits.clone()
            };
            match validate::validate(files, &limits) {
                Ok(files) => HealResponse {
                    outcome: HealerOutcome::Healed,
                    reason: None,
                    modified_files: files,
                    changes_summary: None,
                    // A tool reports no confidence: it executes an order a person approved, and
                    // its diff is held to the order's constraints by the gate.
                    confidence: 1.0,
                    duration: self.duration,
                    tokens_used: None,
                    answered_by: None,
                },
                Err(error) => HealResponse::failed(
                    HealerOutcome::Error,
                    format!("the tool's changes were rejected: {error}"),
                    self.duration,
                ),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::healer::ErrorContext;

    fn request(allowed: &[&str]) -> HealRequest {
        HealRequest {
            project_id: "calc".into(),
            cycle: 1,
            failed_files: BTreeMap::new(),
            reports: Vec::new(),
            error_context: ErrorContext::default(),
            history: Vec::new(),
            timeout: Duration::from_secs(60),
            limits: validate::Limits {
                allowed_paths: allowed.iter().map(|p| p.to_string()).collect(),
                ..validate::Limits::default()
            },
        }
    }

    fn answer(files: &[(&str, &str)]) -> ToolAnswer {
        ToolAnswer {
            result: Ok(files.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect()),
            duration: Duration::from_secs(3),
        }
    }

    #[tokio::test]
    async fn a_change_outside_the_allowed_paths_reaches_the_gate_and_a_malformed_path_does_not() {
        let strays = answer(&[("calc.py", "x = 1\n"), ("setup.py", "y = 2\n")]);
        let response = strays.heal(&request(&["calc.py"])).await;
        assert_eq!(response.outcome, HealerOutcome::Healed);
        assert_eq!(response.modified_files.len(), 2, "the gate says which path strays");
        assert_eq!(response.duration, Duration::from_secs(3));

        let escapes = answer(&[("../outside.py", "x = 1\n")]);
        let response = escapes.heal(&request(&[])).await;
        assert_eq!(response.outcome, HealerOutcome::Error);
        assert!(
            response
                .reason
                .unwrap_or_default()
                .starts_with("the tool's changes were rejected")
        );

        let failed = ToolAnswer {
            result: Err("tool sweep did not finish".into()),
            duration: Duration::ZERO,
        };
        let response = failed.heal(&request(&[])).await;
        assert_eq!(response.outcome, HealerOutcome::Error);
        assert_eq!(response.reason.as_deref(), Some("tool sweep did not finish"));
    }
}
