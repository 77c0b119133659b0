//! A HealRun's healer when it is a tool (`spec.healer.tool`, the CodeFixDDS's `tool`): the
//! operator runs the tool's image in an executor Job over the checkout (`executor::tool`), waits
//! for it like an execution, and reads back the files it changed as the healer's answer.

use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;

use super::{ClusterWorld, Error, JOB_RECHECK};
use crate::core::drive::Ready;
use crate::core::redact::redact;
use crate::core::step::HealerQuestion;
use crate::executor::job::{TOOL_CONTAINER, ToolStep, container_log_tail, kept_artifacts};
use crate::executor::tool;
use crate::healer::tool::ToolAnswer;

/// The Secret of the run's namespace whose keys become tool `name`'s environment.
pub fn env_secret(name: &str) -> String {
    format!("kubeheal-tool-{name}")
}

/// Lines of the tool's own output quoted when it fails.
const FAILURE_LINES: i64 = 20;

impl ClusterWorld {
    /// Runs tool `name` for `question`'s cycle: launches its Job once, and once the Job has
    /// ended returns the files the tool changed, or why there is no fix.
    pub(super) async fn run_tool(&self, question: &HealerQuestion, name: &str) -> Result<Ready<ToolAnswer>, Error> {
        // The API server refuses such a run (CEL); a run from before that rule still gets no tool.
        if self.run.spec.work_order.is_none() {
            return Ok(Ready::Now(ToolAnswer {
                result: Err(format!(
                    "healer.tool {name:?} runs only for an approved work order (spec.workOrder, set by kubeheal's operator)"
                )),
                duration: Duration::ZERO,
            }));
        }
        let Some(image) = self.ctx.settings.tools.get(name) else {
            return Ok(Ready::Now(ToolAnswer {
                result: Err(format!(
                    "tool {name:?} is not configured in this operator: start it with --tool {name}=IMAGE (the chart's tools.{name})"
                )),
                duration: Duration::ZERO,
            }));
        };
        let order = &question.checkout;
        let timeout = Duration::from_secs(u64::from(self.run.spec.executor.timeout_seconds));
        let ended = self.ctx.jobs.ended(&self.namespace, &order.key, timeout).await?;
        if ended == Some(false) {
            return Ok(Ready::Later(JOB_RECHECK));
        }
        // The patches are read only to launch the Job; the tool's secrets only to redact what
        // it reported.
        let launch = ended.is_none();
        let mut request = self.job_request(order, launch).await?;
        request.tool = Some(self.tool_step(name, image).await?);
        if launch {
            self.ctx.jobs.launch(&request).await?;
            return Ok(Ready::Later(JOB_RECHECK));
        }
        request.run.secrets.extend(self.tool_secrets(name).await?);
        let Some(execution) = self.ctx.jobs.collect(&request).await? else {
            return Ok(Ready::Later(JOB_RECHECK));
        };
        let duration = Duration::from_millis(execution.envelope.duration_ms);
        let artifacts = kept_artifacts(self.ctx.client.clone(), &self.namespace, &execution.envelope).await?;
        let result = match tool::changes(&artifacts) {
            // What the tool changed counts only when the Job ran to its end.
            Ok(files) if execution.envelope.exit_code == Some(0) => Ok(files),
            _ => {
                let said = container_log_tail(
                    self.ctx.client.clone(),
                    &self.namespace,
                    &order.key,
                    TOOL_CONTAINER,
                    FAILURE_LINES,
                )
                .await?
                .map(|log| redact(&log, &request.run.secrets).0)
                .unwrap_or_default();
                let how = execution
                    .envelope
                    .error_message
                    .clone()
                    .unwrap_or_else(|| "its Job failed".into());
                let changes = tool::changes(&artifacts).err().unwrap_or_default();
                Err(format!(
                    "tool {name} did not finish ({how}){}{}; look at Job {}",
                    if changes.is_empty() {
                        String::new()
                    } else {
                        format!("; {changes}")
                    },
                    if said.trim().is_empty() {
                        String::new()
                    } else {
                        format!("; it printed: {}", said.trim())
                    },
                    order.key
                ))
            }
        };
        Ok(Ready::Now(ToolAnswer { result, duration }))
    }

    /// What the tool's container is given: its image, the order's task (redacted), the Secret
    /// with its environment.
    async fn tool_step(&self, name: &str, image: &str) -> Result<ToolStep, Error> {
        let task = self.work_order_task().await?;
        Ok(ToolStep {
            image: image.to_owned(),
            task: redact(&task, &[]).0,
            command: None,
            env: Vec::new(),
            env_secret: Some(env_secret(name)),
        })
    }

    /// The values of the tool's Secret: never printed in what the Job reports.
    async fn tool_secrets(&self, name: &str) -> Result<Vec<String>, Error> {
        Ok(self
            .api::<Secret>()
            .get_opt(&env_secret(name))
            .await?
            .and_then(|s| s.data)
            .into_iter()
            .flatten()
            .map(|(_, v)| String::from_utf8_lossy(&v.0).into_owned())
            .collect())
    }
}
