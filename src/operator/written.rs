//! The HealRun statuses this process wrote a moment ago: a run read from the watch cache before
//! its own last status write is not driven from that older status.
//!
//! A reconcile gets its run from the controller's cache, which lags the operator's own writes: a
//! run woken by its Job's watch event can come out of the cache from before the status write that
//! launched the Job. Driven from that status, the loop redoes the steps since (every effect is
//! idempotent, so nothing is done twice) but writes the older status over the newer one: a running
//! run shown `Pending`, started again, its `Started` Event twice (13 runs of a burst of 1,000).
//! resourceVersions may not be compared for order (they are opaque), so what is kept is a digest
//! of the status as the API server stored it after this process's last write. Only the operator
//! writes a HealRun's status, so a cached copy with another status is older, and the reconcile
//! waits for the watch event that is on its way. After [`FENCE`] the cache is believed whatever
//! it says (someone else did write the status, or another replica leads now).

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::api::heal_run::HealRunStatus;

/// How long after a write a cached copy with another status counts as older than the write.
pub const FENCE: Duration = Duration::from_secs(10);

/// Above this many entries, those past the fence are dropped when one is recorded.
const PRUNE_ABOVE: usize = 1024;

/// The statuses written in the last [`FENCE`], by run uid (a run deleted and created again under
/// its name is another run).
#[derive(Default)]
pub struct WrittenStatuses {
    by_uid: Mutex<HashMap<String, (u64, Instant)>>,
}

impl WrittenStatuses {
    /// Records `stored`, the status the API server answered a write of run `uid` with.
    pub fn record(&self, uid: &str, stored: Option<&HealRunStatus>) {
        let written = digest(stored);
        let mut by_uid = self.by_uid.lock().unwrap_or_else(|e| e.into_inner());
        if by_uid.len() > PRUNE_ABOVE {
            by_uid.retain(|_, (_, at)| at.elapsed() < FENCE);
        }
        by_uid.insert(uid.to_owned(), (written, Instant::now()));
    }

    /// Whether `cached`, the status of run `uid` as the cache has it, is older than this
    /// process's write of a moment ago.
    pub fn is_behind(&self, uid: &str, cached: Option<&HealRunStatus>) -> bool {
        let recorded = self.by_uid.lock().unwrap_or_else(|e| e.into_inner()).get(uid).copied();
        recorded.is_some_and(|(written, at)| at.elapsed() < FENCE && written != digest(cached))
    }

    /// Drops run `uid`: deleted, or its last write failed (and may or may not have been stored,
    /// so that the status the cache will show cannot be told from an older one).
    pub fn forget(&self, uid: &str) {
        self.by_uid.lock().unwrap_or_else(|e| e.into_inner()).remove(uid);
    }
}

/// A digest of a status as serialized: two statuses the API server stored alike digest alike.
fn digest(status: Option<&HealRunStatus>) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    serde_json::to_vec(&status).unwrap_or_default().hash(&mut hasher);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::heal_run::HealRunPhase;

    fn status(phase: HealRunPhase) -> HealRunStatus {
        HealRunStatus {
            phase: Some(phase),
            ..HealRunStatus::default()
        }
    }

    #[test]
    fn a_cached_status_other_than_the_one_just_written_is_behind_until_the_fence() {
        let written = WrittenStatuses::default();
        let running = status(HealRunPhase::Running);
        // Never written by this process: the cache is all there is.
        assert!(!written.is_behind("u-1", None));
        written.record("u-1", Some(&running));
        assert!(written.is_behind("u-1", None), "the copy from before the first write");
        assert!(written.is_behind("u-1", Some(&status(HealRunPhase::Pending))));
        assert!(!written.is_behind("u-1", Some(&running)), "the cache has caught up");
        assert!(!written.is_behind("u-2", None), "another run");
        // Past the fence the cache is believed.
        written.by_uid.lock().unwrap().get_mut("u-1").unwrap().1 = Instant::now() - FENCE;
        assert!(!written.is_behind("u-1", None));
        written.record("u-1", Some(&running));
        written.forget("u-1");
        assert!(!written.is_behind("u-1", None));
    }
}
