//! Keeping the Counters and the label in step with the server, in a task of
//! its own: however slow the sidecar is to take them, the health pings do
//! not wait behind these calls.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::{updates, Occupancy, Update, PLAYERS_COUNTER, ROOMS_COUNTER};
use crate::metrics::Metrics;

/// The longest one round of calls may take; what did not finish is sent
/// again at the next round.
const CALL_TIMEOUT: Duration = Duration::from_secs(1);
/// How often a round runs without a change, to retry what failed.
const RETRY_EVERY: Duration = Duration::from_secs(2);

/// Starts the publishing task: capacities first (until they succeed), then
/// the counts on every change of the server's occupancy, and again whenever
/// `shown` (the `rooms` count the `GameServer` shows) differs from the
/// server's own, as after an allocation Agones counted but the server did
/// not open a room for.
pub(super) fn start(
    sdk: &agones::Sdk,
    metrics: Arc<Metrics>,
    capacities: [(&'static str, i64); 2],
    mut shown: watch::Receiver<Option<i64>>,
) -> JoinHandle<()> {
    let mut publisher = Publisher {
        sdk: sdk.clone(),
        beta: sdk.beta().clone(),
        published: None,
        capacities: capacities.to_vec(),
        failing: BTreeSet::new(),
    };
    tokio::spawn(async move {
        let mut changed = metrics.watch_occupancy();
        let mut retry = tokio::time::interval(RETRY_EVERY);
        loop {
            let now = Occupancy {
                rooms: metrics.rooms() as i64,
                players: metrics.players() as i64,
            };
            if tokio::time::timeout(CALL_TIMEOUT, publisher.round(now))
                .await
                .is_err()
            {
                tracing::warn!("agones: the sidecar is slow to take counter updates; trying again");
            }
            tokio::select! {
                changed = changed.changed() => if changed.is_err() { return },
                _ = retry.tick() => {}
                seen = shown.changed() => {
                    if seen.is_err() {
                        return;
                    }
                    let rooms = *shown.borrow_and_update();
                    if rooms.is_some_and(|shown| Some(shown) != publisher.published.map(|p| p.rooms)) {
                        // Agones counts otherwise: say it all again.
                        publisher.published = None;
                    }
                }
            }
        }
    })
}

/// What has been told to Agones, and what is left to tell.
struct Publisher {
    sdk: agones::Sdk,
    beta: agones::beta::Beta,
    /// What Agones was last told successfully.
    published: Option<Occupancy>,
    /// Capacities not yet set.
    capacities: Vec<(&'static str, i64)>,
    /// Counters and labels whose last update failed (each logged once).
    failing: BTreeSet<&'static str>,
}

impl Publisher {
    /// Sets the capacities still to set, then sends what changed since the
    /// last complete publication.
    async fn round(&mut self, now: Occupancy) {
        let mut left = Vec::new();
        for (counter, capacity) in std::mem::take(&mut self.capacities) {
            let result = self.beta.set_counter_capacity(counter, capacity).await;
            if !self.outcome(counter, result) {
                left.push((counter, capacity));
            }
        }
        self.capacities = left;
        let mut complete = true;
        for update in updates(self.published, now) {
            let (key, result) = match update {
                Update::Count(counter, count) => {
                    (counter, self.beta.set_counter_count(counter, count).await)
                }
                Update::Label(label, value) => (label, self.sdk.set_label(label, value).await),
            };
            complete &= self.outcome(key, result);
        }
        if complete {
            self.published = Some(now);
        }
    }

    /// Logs a failure once per key (a Counter the `GameServer` does not
    /// declare fails every time); whether the call succeeded.
    fn outcome(&mut self, key: &'static str, result: agones::errors::Result<()>) -> bool {
        match result {
            Ok(()) => {
                self.failing.remove(key);
                true
            }
            Err(e) => {
                if self.failing.insert(key) {
                    tracing::warn!(
                        key,
                        "agones: cannot update `{key}` (is it declared in the GameServer's \
                         counters?): {e}"
                    );
                }
                false
            }
        }
    }
}

/// The counters a server of `max_rooms` rooms of `seats` publishes the
/// capacities of.
pub(super) fn capacities(max_rooms: usize, seats: usize) -> [(&'static str, i64); 2] {
    [
        (ROOMS_COUNTER, max_rooms as i64),
        (PLAYERS_COUNTER, (max_rooms * seats) as i64),
    ]
}
