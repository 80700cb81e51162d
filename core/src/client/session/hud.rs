//! The numbers the HUD shows, assembled once per call from the session's
//! state and counters.

use std::time::Duration;

use super::{ClientSession, Phase};
use crate::client::conditioner::ConditionerStats;
use crate::client::game::ClientGame;
use crate::client::prediction::LocalPlayer;
use crate::shared::game::{OwnState, Replicated};
use crate::shared::protocol::ErrorCode;
use crate::shared::state::PlayerId;
use crate::shared::tick::Tick;

/// Counters of the session, for the HUD, the bots and tests.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SessionStats {
    /// Frames received.
    pub frames_received: u64,
    /// Bytes received.
    pub bytes_received: u64,
    /// Bytes the shell said it sent ([`ClientSession::sent`]).
    pub bytes_sent: u64,
    /// Frames that did not decode (and unusable `welcome`s).
    pub decode_errors: u64,
    /// `error` messages from the server.
    pub server_errors: u64,
    /// Snapshots handled.
    pub snapshots: u64,
    /// Inputs predicted and sent.
    pub inputs: u64,
    /// Input messages sent.
    pub input_messages: u64,
    /// Inputs refused because the pending buffer was full.
    pub inputs_refused: u64,
    /// The game's events received.
    pub events: u64,
    /// Respawns and other placements of the own player.
    pub placements: u64,
    /// Binary snapshots decoded as deltas.
    pub deltas: u64,
    /// Delta frames against a snapshot the session no longer (or never)
    /// held: refused, never drawn.
    pub missing_baselines: u64,
    /// Events dropped because the shell did not drain them.
    pub events_dropped: u64,
    /// Input messages sent again half a step later (while loss is seen).
    pub resends: u64,
    /// Snapshots that never arrived (a gap in the ticks).
    pub snapshot_gaps: u64,
    /// Own echoes that brought the own state before (or instead of) their
    /// snapshot (datagram transports: a lost or late snapshot covered).
    pub echoes_used: u64,
    /// Numbered input messages the server's receipts judged, and lost.
    pub uplink_judged: u64,
    /// See [`SessionStats::uplink_judged`].
    pub uplink_lost: u64,
    /// Times the loss cover stopped under heavy uplink loss.
    pub cover_breaks: u64,
    /// Protocol 2: steps skipped after a frame longer than `max_frame`
    /// (their ticks repeated by the server), so the schedule kept time.
    pub steps_skipped: u64,
}

/// How the inputs are paced (protocol 2), for the HUD and the bots.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PacingHud {
    /// Whether inputs name server ticks.
    pub scheduled: bool,
    /// The slack of the newest timing report, ms.
    pub slack_ms: Option<f64>,
    /// The slack the controller aims at, ms.
    pub target_slack_ms: Option<f64>,
    /// The change of step rate in force, in % (positive: faster).
    pub dilation_pct: f64,
    /// Inputs the server counted late.
    pub late: u64,
    /// Ticks the server simulated with a repeated input.
    pub repeated: u64,
    /// Jumps of the schedule after the first.
    pub resyncs: u64,
    /// How far back the server was asked to judge the last own action
    /// judged at its view.
    pub last_rewind: Option<Duration>,
    /// Input-to-acknowledgement over the newest 256 inputs: from the step
    /// that made an input to the first snapshot acknowledging it, median
    /// and 99th percentile.
    pub input_to_ack: Option<(Duration, Duration)>,
    /// The share of input messages lost on the way up lately (the server's
    /// receipts), in %; `None` before any receipt.
    pub uplink_loss_pct: Option<f64>,
    /// Whether the loss cover is stopped by heavy uplink loss.
    pub cover_broken: bool,
}

/// The numbers the HUD shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Hud {
    /// Where the session is.
    pub phase: Phase,
    /// The own player's id and room, once joined.
    pub joined: Option<(PlayerId, String)>,
    /// Whether the own player is alive.
    pub alive: bool,
    /// Smoothed round-trip time.
    pub rtt: Option<Duration>,
    /// Estimated server time in ticks.
    pub server_tick: Option<f64>,
    /// Newest snapshot tick received.
    pub last_snapshot: Option<Tick>,
    /// Newest own input tick the server has acknowledged.
    pub ack: Option<Tick>,
    /// The tick of the newest input made (protocol 2: a server tick).
    pub last_input: Option<Tick>,
    /// Inputs not yet acknowledged.
    pub pending: usize,
    /// Size of the last counted correction.
    pub last_correction: f32,
    /// Corrections counted (smoothed or snapped).
    pub corrections: u64,
    /// Snaps.
    pub snaps: u64,
    /// Errors absorbed below the dead zone.
    pub absorbed: u64,
    /// The visible error right now.
    pub visible_error: f32,
    /// How far behind the server remote players are drawn.
    pub interpolation_delay: Duration,
    /// The last error from the server, or about what it sent.
    pub last_error: Option<(ErrorCode, String)>,
    /// Bytes per second received, over the last whole second.
    pub down_rate: f64,
    /// Bytes per second sent, over the last whole second.
    pub up_rate: f64,
    /// Session counters.
    pub stats: SessionStats,
    /// Input pacing.
    pub pacing: PacingHud,
    /// Client to server conditioner counters.
    pub up: ConditionerStats,
    /// Server to client conditioner counters.
    pub down: ConditionerStats,
    /// The round trip the conditioners add (both ways' latency), beside
    /// the measured [`Hud::rtt`] that includes it.
    pub added_rtt: Duration,
}

/// Bytes per second each way, measured over whole seconds.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Rates {
    since: Option<Duration>,
    down_at: u64,
    up_at: u64,
    pub(crate) down: f64,
    pub(crate) up: f64,
}

impl Rates {
    /// Closes the window at `now` once a second has passed.
    pub(crate) fn update(&mut self, now: Duration, stats: &SessionStats) {
        let since = *self.since.get_or_insert(now);
        let span = now.saturating_sub(since).as_secs_f64();
        if span >= 1.0 {
            self.down = stats.bytes_received.saturating_sub(self.down_at) as f64 / span;
            self.up = stats.bytes_sent.saturating_sub(self.up_at) as f64 / span;
            self.since = Some(now);
            self.down_at = stats.bytes_received;
            self.up_at = stats.bytes_sent;
        }
    }
}

impl<G: ClientGame> ClientSession<G> {
    /// The shell sent `bytes` to the server (for the up rate).
    pub fn sent(&mut self, bytes: usize) {
        self.record(&crate::client::record::Call::Sent(bytes as u64));
        self.stats.bytes_sent = self.stats.bytes_sent.saturating_add(bytes as u64);
    }

    /// The numbers for the HUD.
    pub fn hud(&self) -> Hud {
        let welcome = self.welcome();
        let own = welcome.and_then(|w| self.authority.get(w.id));
        let local = self.local();
        let stats = local.map(|l| *l.stats()).unwrap_or_default();
        Hud {
            phase: self.phase(),
            joined: welcome.map(|w| (w.id, w.room.clone())),
            alive: own.is_some_and(Replicated::alive),
            rtt: self.clock.rtt(),
            server_tick: self.clock.server_ticks(self.now()),
            last_snapshot: self.last_snapshot,
            ack: local
                .and_then(|l| l.authoritative())
                .and_then(|s| s.stamp().ack),
            last_input: (self.stats.inputs > 0).then_some(self.next_tick),
            pending: local.map_or(0, |l| l.pending().len()),
            last_correction: stats.last_correction,
            corrections: stats.corrections,
            snaps: stats.snaps,
            absorbed: stats.absorbed,
            visible_error: local.map_or(0.0, LocalPlayer::visible_error),
            interpolation_delay: self.interpolation_delay(),
            last_error: self.last_error.clone(),
            down_rate: self.rates.down,
            up_rate: self.rates.up,
            stats: SessionStats {
                uplink_judged: self.cover.judged,
                uplink_lost: self.cover.lost,
                cover_breaks: self.cover.breaks,
                ..self.stats
            },
            pacing: PacingHud {
                scheduled: self.scheduled(),
                slack_ms: self.pacing.measured_slack_ms(),
                target_slack_ms: self.pacing.target_slack_ms(),
                dilation_pct: self.pacing.dilation() * 100.0,
                late: self.pacing.late(),
                repeated: self.pacing.repeated(),
                resyncs: self.pacing.resyncs(),
                last_rewind: self.last_rewind,
                input_to_ack: self.acks.p50_p99(),
                uplink_loss_pct: self.cover.loss().map(|l| l * 100.0),
                cover_broken: self.cover.broken(),
            },
            up: self.up.stats(),
            down: self.down.stats(),
            added_rtt: Duration::from_secs_f64(
                f64::from(self.up.conditions().latency_ms + self.down.conditions().latency_ms)
                    / 1000.0,
            ),
        }
    }
}
