//! The Agones SDK, driven: the calls the parent module describes, made to
//! the sidecar through the official `agones` crate.

use std::collections::BTreeSet;
use std::future::Future;
use std::time::Duration;

use anyhow::{anyhow, Context};
use tokio::sync::mpsc::error::TrySendError;
use tokio::time::{Instant, MissedTickBehavior};

use super::{
    allocated_room, healthy, updates, AgonesSettings, EmptyDrain, Occupancy, Update,
    PLAYERS_COUNTER, ROOMS_COUNTER,
};
use crate::RunningServer;

/// How often the drain condition and a broken watch are looked at.
const LOOK_EVERY: Duration = Duration::from_millis(250);
/// How long to wait before watching the `GameServer` again after the
/// stream broke.
const REWATCH_AFTER: Duration = Duration::from_secs(1);
/// The longest one round of calls to the sidecar may hold up the loop (the
/// health pings wait behind it); what did not finish is sent again later.
const CALL_TIMEOUT: Duration = Duration::from_secs(1);

/// A connection to the Agones SDK sidecar.
pub struct Agones {
    sdk: agones::Sdk,
    settings: AgonesSettings,
}

impl std::fmt::Debug for Agones {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agones")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl Agones {
    /// Connects to the sidecar on `localhost:<sdk_port>`, trying again
    /// until `connect_timeout` has passed.
    ///
    /// # Errors
    /// No sidecar answered in time; the message says where it looked.
    pub async fn connect(settings: &AgonesSettings) -> anyhow::Result<Agones> {
        let port = settings.sdk_port;
        let deadline = Instant::now() + settings.connect_timeout;
        let gave_up = || {
            anyhow!(
                "no Agones SDK sidecar answered on localhost:{port} within {:?}: run the server \
                 in an Agones GameServer pod, or start Agones' local SDK server for development \
                 (docs/DEPLOY.md)",
                settings.connect_timeout
            )
        };
        loop {
            // `Sdk::new` itself asks every 100 ms for at most 30 s.
            match tokio::time::timeout_at(deadline, agones::Sdk::new(Some(port), None)).await {
                Ok(Ok(sdk)) => {
                    tracing::info!(port, "agones: connected to the SDK sidecar");
                    return Ok(Agones {
                        sdk,
                        settings: settings.clone(),
                    });
                }
                Ok(Err(e)) if Instant::now() < deadline => {
                    tracing::info!(port, "agones: sidecar not there yet ({e}); trying again");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Ok(Err(_)) | Err(_) => return Err(gave_up()),
            }
        }
    }

    /// Marks the server `Ready`, then keeps Agones informed (health,
    /// counters, allocations) until `stop` resolves (SIGTERM) or the
    /// server drains when empty; then shuts the server down, telling its
    /// clients why, and calls `Shutdown`.
    ///
    /// # Errors
    /// `Ready` or `Shutdown` failed, or the server's task did.
    pub async fn run(
        mut self,
        server: RunningServer,
        stop: impl Future<Output = ()>,
    ) -> anyhow::Result<()> {
        self.sdk
            .ready()
            .await
            .context("agones: the sidecar refused Ready")?;
        tracing::info!(addr = %server.addr, "agones: Ready");
        let why = self.serve(&server, stop).await;
        tracing::info!("agones: {why}: telling clients and closing connections");
        server.shutdown().await?;
        self.sdk
            .shutdown()
            .await
            .context("agones: the sidecar refused Shutdown")?;
        tracing::info!("agones: Shutdown");
        Ok(())
    }

    /// Everything between `Ready` and the drain; why it ended.
    async fn serve(
        &mut self,
        server: &RunningServer,
        stop: impl Future<Output = ()>,
    ) -> &'static str {
        let rooms = server.state.rooms.clone();
        let metrics = server.state.metrics.clone();
        let mut publisher = Publisher::new(&self.sdk);
        let (max_rooms, seats) = rooms.limits();
        publisher.capacity(ROOMS_COUNTER, max_rooms as i64).await;
        publisher
            .capacity(PLAYERS_COUNTER, (max_rooms * seats) as i64)
            .await;
        let occupancy = || Occupancy {
            rooms: metrics.rooms() as i64,
            players: metrics.players() as i64,
        };
        publisher.publish(occupancy()).await;
        let mut changed = metrics.watch_occupancy();

        let mut health = self.sdk.health_check();
        let mut health_due = tokio::time::interval(self.settings.health_every);
        health_due.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let mut late = false;

        let mut watch = None;
        let mut rewatch_at = Instant::now();
        let mut allocation = Allocation::default();
        let mut drain = EmptyDrain::new(self.settings.shutdown_when_empty);
        let mut look = tokio::time::interval(LOOK_EVERY);
        tokio::pin!(stop);
        loop {
            tokio::select! {
                () = &mut stop => return "stopping on a signal",
                _ = health_due.tick() => {
                    let slowest = rooms.slowest_tick(Instant::now());
                    if healthy(slowest.as_ref().map(|s| s.1), self.settings.stall_after) {
                        if std::mem::take(&mut late) {
                            tracing::info!("agones: every room ticks on time again; health pings resume");
                        }
                        match health.try_send(()) {
                            Ok(()) | Err(TrySendError::Full(())) => {}
                            Err(TrySendError::Closed(())) => {
                                tracing::warn!("agones: the health stream broke; opening another");
                                health = self.sdk.health_check();
                                let _ = health.try_send(());
                            }
                        }
                    } else if !late {
                        late = true;
                        if let Some((room, behind)) = slowest {
                            tracing::error!(room, ?behind, "agones: a room's tick stalled; health pings stop");
                        }
                    }
                    // Also retries whatever could not be published before.
                    publisher.publish(occupancy()).await;
                }
                Ok(()) = changed.changed() => publisher.publish(occupancy()).await,
                next = next_state(&mut watch) => {
                    if let Ok(Some(gameserver)) = next {
                        allocation.seen(&gameserver, &rooms);
                    } else {
                        tracing::warn!("agones: the GameServer watch ended; watching again");
                        watch = None;
                        rewatch_at = Instant::now() + REWATCH_AFTER;
                    }
                }
                () = tokio::time::sleep_until(rewatch_at), if watch.is_none() => {
                    match tokio::time::timeout(CALL_TIMEOUT, self.sdk.watch_gameserver()).await {
                        Ok(Ok(stream)) => watch = Some(stream),
                        Ok(Err(e)) => {
                            tracing::warn!("agones: cannot watch the GameServer: {e}");
                            rewatch_at = Instant::now() + REWATCH_AFTER;
                        }
                        Err(_) => {
                            tracing::warn!("agones: the sidecar did not answer WatchGameServer in time");
                            rewatch_at = Instant::now() + REWATCH_AFTER;
                        }
                    }
                }
                _ = look.tick() => {
                    let now = Instant::now().into_std();
                    drain.observe(allocation.allocated, metrics.players() as i64, now);
                    if drain.due(now) {
                        return "allocated and empty for --agones-shutdown-when-empty";
                    }
                }
            }
        }
    }
}

/// What the `GameServer` watch has shown of allocations.
#[derive(Debug, Default)]
struct Allocation {
    /// The server has been allocated.
    allocated: bool,
    /// The room of the last allocation acted on: every later change to the
    /// `GameServer` (a counter, a label) shows the same annotation again, and
    /// must not open that room again once it has closed.
    handled_room: Option<String>,
}

impl Allocation {
    fn seen(&mut self, gameserver: &agones::GameServer, rooms: &std::sync::Arc<crate::Rooms>) {
        self.allocated |= gameserver
            .status
            .as_ref()
            .is_some_and(|s| s.state == "Allocated");
        let annotations = gameserver.object_meta.as_ref().map(|m| &m.annotations);
        let Some(room) = annotations.and_then(|a| allocated_room(a.iter())) else {
            return;
        };
        if self.handled_room.as_deref() == Some(room) {
            return;
        }
        self.handled_room = Some(room.to_string());
        match rooms.open_named(room) {
            Ok(true) => tracing::info!(room, "agones: allocated; room opened"),
            Ok(false) => tracing::info!(room, "agones: allocated; the room is open already"),
            Err(e) => tracing::warn!(room, "agones: allocated, but cannot open the room: {e}"),
        }
    }
}

/// The next `GameServer` of the watch, or never without one.
async fn next_state(
    watch: &mut Option<tonic::Streaming<agones::GameServer>>,
) -> Result<Option<agones::GameServer>, tonic::Status> {
    match watch {
        Some(stream) => stream.message().await,
        None => std::future::pending().await,
    }
}

/// Keeps the Counters and the label in step with the server.
struct Publisher {
    sdk: agones::Sdk,
    beta: agones::beta::Beta,
    /// What Agones was last told successfully.
    published: Option<Occupancy>,
    /// Counters and labels whose last update failed (each logged once).
    failing: BTreeSet<&'static str>,
}

impl Publisher {
    fn new(sdk: &agones::Sdk) -> Publisher {
        Publisher {
            sdk: sdk.clone(),
            beta: sdk.beta().clone(),
            published: None,
            failing: BTreeSet::new(),
        }
    }

    /// Sets a Counter's capacity.
    async fn capacity(&mut self, counter: &'static str, capacity: i64) {
        let call = self.beta.set_counter_capacity(counter, capacity);
        if let Ok(result) = tokio::time::timeout(CALL_TIMEOUT, call).await {
            self.outcome(counter, result);
        } else {
            tracing::warn!(
                counter,
                "agones: the sidecar did not take the capacity in time"
            );
        }
    }

    /// Sends what changed since the last complete publication, for at most
    /// [`CALL_TIMEOUT`]; what failed or did not finish is sent again next
    /// time.
    async fn publish(&mut self, now: Occupancy) {
        if tokio::time::timeout(CALL_TIMEOUT, self.publish_all(now))
            .await
            .is_err()
        {
            tracing::warn!(
                "agones: the sidecar is slow to take counter updates; trying again later"
            );
        }
    }

    async fn publish_all(&mut self, now: Occupancy) {
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
