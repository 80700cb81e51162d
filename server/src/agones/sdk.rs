//! The Agones SDK, driven: the calls the parent module describes, made to
//! the sidecar through the official `agones` crate.

use std::future::Future;
use std::time::Duration;

use anyhow::anyhow;
use tokio::sync::mpsc::error::TrySendError;
use tokio::sync::watch;
use tokio::time::{Instant, MissedTickBehavior};

use super::{
    allocated_game, allocated_room, healthy, publish, AgonesSettings, EmptyDrain, ROOMS_COUNTER,
};
use crate::server::RunningServer;

/// How often the drain condition and a broken watch are looked at.
const LOOK_EVERY: Duration = Duration::from_millis(250);
/// How long to wait before watching the `GameServer` again after the
/// stream broke.
const REWATCH_AFTER: Duration = Duration::from_secs(1);
/// The longest a call in the watching loop may hold it up (the health pings
/// wait behind it).
const CALL_TIMEOUT: Duration = Duration::from_secs(1);
/// How long `Ready` and `Shutdown` may take before the server gives up on
/// the sidecar.
const SIDECAR_PATIENCE: Duration = Duration::from_secs(10);

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
    /// `Ready` or `Shutdown` failed or timed out, or the server's task
    /// failed.
    pub async fn run(
        mut self,
        server: RunningServer,
        stop: impl Future<Output = ()>,
    ) -> anyhow::Result<()> {
        tokio::pin!(stop);
        let ready = tokio::select! {
            ready = tokio::time::timeout(SIDECAR_PATIENCE, self.sdk.ready()) => Some(ready),
            () = &mut stop => None,
        };
        let signalled = ready.is_none();
        let failed = match ready {
            // A signal (Agones is taking the pod away: drain and say
            // Shutdown all the same), or Ready.
            None | Some(Ok(Ok(()))) => None,
            Some(Ok(Err(e))) => Some(anyhow!("agones: the sidecar refused Ready: {e}")),
            Some(Err(_)) => Some(anyhow!(
                "agones: the sidecar did not answer Ready within {SIDECAR_PATIENCE:?}"
            )),
        };
        if let Some(e) = failed {
            server.shutdown().await?;
            return Err(e);
        }
        let why = if signalled {
            "stopping on a signal before Ready"
        } else {
            tracing::info!(addr = %server.addr, "agones: Ready");
            self.serve(&server, stop).await
        };
        tracing::info!("agones: {why}: telling clients and closing connections");
        server.shutdown().await?;
        match tokio::time::timeout(SIDECAR_PATIENCE, self.sdk.shutdown()).await {
            Ok(Ok(())) => {
                tracing::info!("agones: Shutdown");
                Ok(())
            }
            Ok(Err(e)) => Err(anyhow!("agones: the sidecar refused Shutdown: {e}")),
            Err(_) => Err(anyhow!(
                "agones: the sidecar did not answer Shutdown within {SIDECAR_PATIENCE:?}"
            )),
        }
    }

    /// Everything between `Ready` and the drain; why it ended. On the way
    /// out the `rooms` capacity drops to the rooms open, so that no
    /// allocation picks a server that is going away.
    async fn serve(
        &mut self,
        server: &RunningServer,
        stop: impl Future<Output = ()>,
    ) -> &'static str {
        let metrics = server.state.metrics.clone();
        let settings = &server.state.config.rooms;
        let (max_rooms, seats) = (settings.max_rooms, settings.capacity);
        let (shown, shown_rooms) = watch::channel(None);
        let publisher = publish::start(
            &self.sdk,
            metrics.clone(),
            publish::capacities(max_rooms, seats),
            shown_rooms,
        );
        let why = self.watch(server, &shown, stop).await;
        publisher.abort();
        let mut beta = self.sdk.beta().clone();
        let closing = beta.set_counter_capacity(ROOMS_COUNTER, metrics.rooms() as i64);
        if !matches!(
            tokio::time::timeout(CALL_TIMEOUT, closing).await,
            Ok(Ok(()))
        ) {
            tracing::warn!("agones: could not close the rooms capacity before draining");
        }
        why
    }

    /// Health pings, the `GameServer` watch and the drain condition, until
    /// `stop` or the drain; why it ended.
    async fn watch(
        &mut self,
        server: &RunningServer,
        shown: &watch::Sender<Option<i64>>,
        stop: impl Future<Output = ()>,
    ) -> &'static str {
        let rooms = &server.state.rooms;
        let metrics = server.state.metrics.clone();
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
                }
                next = next_state(&mut watch) => {
                    if let Ok(Some(gameserver)) = next {
                        if allocation.seen(&gameserver, rooms) {
                            drain.allocated_again();
                        }
                        shown.send_replace(counted_rooms(&gameserver));
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

/// The `rooms` count the `GameServer` shows, if it has the Counter.
fn counted_rooms(gameserver: &agones::GameServer) -> Option<i64> {
    gameserver
        .status
        .as_ref()
        .and_then(|s| s.counters.get(ROOMS_COUNTER))
        .map(|c| c.count)
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
    /// Notes what the watch showed; whether it was a new allocation.
    fn seen(&mut self, gameserver: &agones::GameServer, games: &crate::rooms::Games) -> bool {
        self.allocated |= gameserver
            .status
            .as_ref()
            .is_some_and(|s| s.state == "Allocated");
        let annotations = gameserver.object_meta.as_ref().map(|m| &m.annotations);
        let Some(room) = annotations.and_then(|a| allocated_room(a.iter())) else {
            return false;
        };
        if self.handled_room.as_deref() == Some(room) {
            return false;
        }
        self.handled_room = Some(room.to_string());
        let game = annotations.and_then(|a| allocated_game(a.iter()));
        let Some(rooms) = games.named(game) else {
            tracing::warn!(
                room,
                game,
                "agones: allocated for a game this server does not host"
            );
            return true;
        };
        match rooms.clone().open_named(room) {
            Ok(true) => tracing::info!(room, "agones: allocated; room opened"),
            Ok(false) => tracing::info!(room, "agones: allocated; the room is open already"),
            Err(e) => tracing::warn!(room, "agones: allocated, but cannot open the room: {e}"),
        }
        true
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
