//! What comes down from the server on its way into the session: decoded
//! frames held by the conditioner, binary snapshots, full or delta,
//! decoded against the kept baselines and handed on as states, and what
//! each message does: `welcome` starts the phase machine, snapshots feed
//! the authority, reconciliation and interpolation, the game's events
//! the authority and the game's notes, `timing` the input pacing.

use std::time::Duration;

use super::{ClientSession, SessionEvent, State, Welcome, LOSS_MEMORY};
use crate::client::authority::Authority;
use crate::client::clock::ServerClock;
use crate::client::game::{cadence_of, ClientGame, ThingMotion};
use crate::client::interpolation::RemoteBuffer;
use crate::client::pacing::Pacing;
use crate::client::prediction::LocalPlayer;
use crate::shared::compact::{self, OwnEcho, QuantisedFrame};
use crate::shared::delta;
use crate::shared::game::{Applied, Networked, OwnState, Replicated, Target};
use crate::shared::protocol::{ErrorCode, ProtocolError, ServerMessage};
use crate::shared::state::PlayerId;
use crate::shared::tick::Tick;
use crate::shared::timing::InputTiming;

/// Which snapshot ticks arrived lately, to tell a lost snapshot from one
/// that is only late: a tick counts as lost once it is [`REORDER_TICKS`]
/// behind the newest and still missing (jitter reorders; only loss is a
/// reason to resend).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Arrivals {
    /// The first tick seen (nothing before it is judged) and the newest.
    span: Option<(Tick, Tick)>,
    /// Bit `i`: tick `newest - i` arrived.
    seen: u64,
}

/// How far behind the newest a missing snapshot may still arrive.
const REORDER_TICKS: u32 = 4;

impl Arrivals {
    /// Snapshot `tick` arrived; when ticks were judged now, how many of
    /// them were lost and how many were judged.
    pub(super) fn arrived(&mut self, tick: Tick) -> Option<(u32, u32)> {
        let Some((first, newest)) = self.span else {
            self.span = Some((tick, tick));
            self.seen = 1;
            return None;
        };
        if tick <= newest {
            let back = newest.0 - tick.0;
            if back < 64 {
                self.seen |= 1 << back;
            }
            return None;
        }
        let shift = tick.0 - newest.0;
        self.seen = if shift >= 64 {
            1
        } else {
            (self.seen << shift) | 1
        };
        self.span = Some((first, tick));
        // The ticks that are now REORDER_TICKS or more behind for the first
        // time are judged: arrived, or lost.
        let (mut lost, mut judged) = (0, 0);
        for q in REORDER_TICKS..REORDER_TICKS.saturating_add(shift).min(64) {
            if tick.0.checked_sub(q).is_none_or(|t| t < first.0) {
                continue;
            }
            judged += 1;
            if self.seen & (1 << q) == 0 {
                lost += 1;
            }
        }
        Some((lost, judged))
    }

    /// Forgets everything (a new connection).
    pub(super) fn clear(&mut self) {
        *self = Arrivals::default();
    }
}

/// A frame from the server, decoded, on its way through the conditioner.
#[derive(Clone, Debug)]
pub(super) enum Downlink<G: Networked> {
    /// A JSON message.
    Text(ServerMessage<G>),
    /// A binary snapshot, decoded.
    Binary(QuantisedFrame<G::Entity, G::Own>),
    /// An own echo: a snapshot's head again, half a tick later.
    Own(OwnEcho<G::Own>),
}

impl<G: ClientGame> ClientSession<G> {
    pub(super) fn decode_binary(
        &self,
        bytes: &[u8],
    ) -> Result<QuantisedFrame<G::Entity, G::Own>, ProtocolError> {
        let config = match &self.state {
            State::Joined(welcome) | State::Playing(welcome, _) => welcome.config(),
            State::Connecting => {
                return Err(ProtocolError::new(
                    ErrorCode::BadMessage,
                    "a binary frame before welcome",
                ))
            }
        };
        delta::decode(bytes, |tick| self.baselines.get(tick), config)
    }

    pub(super) fn decode_echo(&self, bytes: &[u8]) -> Result<OwnEcho<G::Own>, ProtocolError> {
        if self.welcome().is_none() {
            return Err(ProtocolError::new(
                ErrorCode::BadMessage,
                "a binary frame before welcome",
            ));
        }
        compact::decode_own(bytes)
    }

    /// An own echo came through: its own state and timing are taken if its
    /// snapshot's were not (the snapshot was lost, or is late). It is not a
    /// snapshot: no baseline, no remote players, nothing for the clock or
    /// the loss count.
    pub(super) fn on_echo(&mut self, echo: &OwnEcho<G::Own>) {
        let id = echo.own.id();
        if self.welcome().is_none_or(|w| w.id != id) {
            return;
        }
        if let Some(timing) = echo.timing {
            self.on_binary_timing(echo.server_tick, &timing);
        }
        if self
            .authority
            .insert(id, echo.own.stamp().tick, &echo.own)
            .is_ok()
        {
            self.stats.echoes_used += 1;
            self.on_own_state(&echo.own);
        }
    }

    /// A binary frame's timing report for `tick`, read once (a snapshot and
    /// its echo carry the same report).
    fn on_binary_timing(&mut self, tick: Tick, timing: &InputTiming) {
        if self.timing_through.is_none_or(|t| tick > t) {
            self.timing_through = Some(tick);
            self.on_timing(timing);
        }
    }

    /// A binary snapshot came through: kept as a baseline for deltas (and
    /// acknowledged with the next input), then handled as any snapshot with
    /// the own state exact.
    pub(super) fn on_binary(&mut self, frame: QuantisedFrame<G::Entity, G::Own>, at: Duration) {
        let Some(welcome) = self.welcome() else {
            return;
        };
        let config = welcome.config();
        let own = frame.own.id();
        // Players left out for the budget are in the set but not news.
        let present: Vec<PlayerId> = frame.players.iter().map(|(id, _)| *id).collect();
        let mut players: Vec<G::Own> = frame
            .players
            .iter()
            .filter(|(id, _)| frame.stale.binary_search(id).is_err())
            .map(|(id, q)| {
                if *id == own {
                    frame.own
                } else {
                    G::dequantise(q, *id, frame.server_tick, config)
                }
            })
            .collect();
        // The head always carries the own state, whether or not the set
        // has its entry yet.
        if !players.iter().any(|p| p.id() == own) {
            players.push(frame.own);
        }
        if let Some(timing) = frame.timing {
            self.on_binary_timing(frame.server_tick, &timing);
        }
        self.baselines.keep(frame.server_tick, frame.players);
        self.on_snapshot(frame.server_tick, &players, Some(&present), at);
    }

    /// Handles what the conditioner holds that is due by `now`, each at
    /// the time it was due (never later than `now`): under added latency a
    /// frame's arrival is when the network would have brought it, not the
    /// next look at it.
    pub(super) fn deliver_incoming(&mut self, now: Duration) {
        let mut floor = Duration::ZERO;
        while let Some((due, message)) = self.down.deliver_timed(now) {
            let at = due.clamp(floor, now);
            floor = at;
            match message {
                Downlink::Text(message) => self.handle(message, at),
                Downlink::Binary(frame) => self.on_binary(frame, at),
                Downlink::Own(echo) => self.on_echo(&echo),
            }
        }
    }

    pub(super) fn handle(&mut self, message: ServerMessage<G>, at: Duration) {
        match message {
            ServerMessage::Welcome {
                player_id,
                room,
                setup,
                protocol,
                ..
            } => self.on_welcome(Welcome {
                id: player_id,
                room,
                cadence: cadence_of::<G>(&setup),
                setup,
                protocol,
            }),
            ServerMessage::Timing(timing) => self.on_timing(&timing),
            ServerMessage::Snapshot {
                server_tick,
                players,
            } => self.on_snapshot(server_tick, &players, None, at),
            ServerMessage::Roster { players } => {
                self.names = players.into_iter().map(|e| (e.id, e.name)).collect();
            }
            ServerMessage::Events { events } => {
                let me = self.welcome().map(|w| w.id);
                for event in events {
                    self.stats.events += 1;
                    let took = self.authority.apply(&event);
                    if event.target() == Target::World && !took {
                        // The world's, heard before: told once.
                        continue;
                    }
                    // What an event means to the own player needs to know
                    // who that is: nothing before `welcome`.
                    let note = me.and_then(|me| G::event(&mut self.game, &event, me, at));
                    if let Some(note) = note {
                        self.push_event(SessionEvent::Note(note));
                    }
                }
            }
            ServerMessage::Pong { id, .. } => {
                if let Some(rtt) = self.clock.on_pong(id, at) {
                    self.push_event(SessionEvent::Pong { rtt });
                }
            }
            ServerMessage::Error { code, message } => {
                self.stats.server_errors += 1;
                self.last_error = Some((code, message.clone()));
                self.push_event(SessionEvent::ServerError { code, message });
            }
        }
    }

    fn on_welcome(&mut self, welcome: Welcome<G>) {
        if let Err(message) = G::check_setup(&welcome.setup) {
            self.refuse(ProtocolError::new(ErrorCode::BadMessage, message));
            return;
        }
        self.clock = ServerClock::new(welcome.cadence);
        self.pacing = Pacing::new(self.config.pacing, welcome.cadence);
        self.period = welcome.cadence;
        self.hold = 0;
        self.resend_at = None;
        self.cover.restart();
        self.forget_world(false);
        self.push_event(SessionEvent::Joined {
            id: welcome.id,
            room: welcome.room.clone(),
        });
        self.state = State::Joined(welcome);
    }

    /// Forgets every player and the clock's snapshot history, for a new
    /// connection or a new welcome.
    pub(super) fn forget_world(&mut self, connection_lost: bool) {
        self.authority = Authority::default();
        self.remotes.clear();
        self.timeline.reset();
        self.arrivals.clear();
        self.accumulator = Duration::ZERO;
        self.last_snapshot = None;
        self.timing_through = None;
        G::forget(&mut self.game, connection_lost);
    }

    /// A snapshot of `players`; `present` lists everyone still in the
    /// room's picture when it is more than `players` (binary frames with
    /// players left out for the budget).
    fn on_snapshot(
        &mut self,
        server_tick: Tick,
        players: &[G::Own],
        present: Option<&[PlayerId]>,
        at: Duration,
    ) {
        let Some(me) = self.welcome().map(|w| w.id) else {
            return;
        };
        self.stats.snapshots += 1;
        self.push_event(SessionEvent::Snapshot { server_tick });
        let lost = self.arrivals.arrived(server_tick);
        if let Some((lost, counted)) = lost.filter(|(_, judged)| *judged > 0) {
            // Snapshot loss, as a moving average over about 100 ticks.
            for gone in (0..counted).map(|i| if i < lost { 1.0 } else { 0.0 }) {
                self.loss += (gone - self.loss) / 100.0;
            }
            self.pacing.set_loss(self.loss);
            if lost > 0 {
                self.stats.snapshot_gaps += u64::from(lost);
                self.losing_until = Some(at + LOSS_MEMORY);
            }
        }
        if self.last_snapshot.is_none_or(|t| server_tick > t) {
            // Only the newest snapshot so far says anything about the clock.
            self.clock.on_snapshot(server_tick, at);
            self.last_snapshot = Some(server_tick);
            let mut ids: Vec<PlayerId> = present.map_or_else(
                || players.iter().map(OwnState::id).collect(),
                <[PlayerId]>::to_vec,
            );
            self.authority.retain_present(&ids);
            ids.sort_unstable();
            self.remotes.retain(|id, _| ids.binary_search(&id).is_ok());
        }
        let interpolation = self.config.interpolation;
        for state in players {
            let id = state.id();
            if self
                .authority
                .insert(id, state.stamp().tick, state)
                .is_err()
            {
                continue;
            }
            if id == me {
                self.on_own_state(state);
            } else if !id.is_thing() || G::thing_motion(state) == ThingMotion::Interpolated {
                // A still or predicted thing keeps no samples: it is drawn
                // from its newest state (`view.rs`).
                self.remotes
                    .get_or_insert_with(id, RemoteBuffer::default)
                    .add(G::sample(state), &interpolation);
            }
        }
    }

    /// The own player's newest state: its first places it; so does one
    /// whose life differs from the last accepted (a new life, or an end the
    /// page could not foresee: the server's word, not a misprediction);
    /// any other corrects the prediction.
    fn on_own_state(&mut self, state: &G::Own) {
        match std::mem::replace(&mut self.state, State::Connecting) {
            // Unreachable: a snapshot is only read once welcomed.
            State::Connecting => {}
            State::Joined(welcome) => {
                // Protocol 2: the schedule starts with the first step that
                // knows the round trip (uplink.rs).
                self.schedule_started = false;
                let mut local = Box::new(LocalPlayer::new(
                    welcome.config().clone(),
                    self.config.smoothing,
                    G::local(state),
                ));
                self.stats.placements += 1;
                match local.accept_placed(state.stamp(), state) {
                    Ok(report) => {
                        self.state = State::Playing(welcome, local);
                        self.set_toggles(self.toggles);
                        self.push_event(SessionEvent::Reconciled {
                            report,
                            placed: true,
                        });
                    }
                    // A state that cannot place the player: still waiting
                    // for a usable one.
                    Err(_) => self.state = State::Joined(welcome),
                }
            }
            State::Playing(welcome, mut local) => {
                let placed = local
                    .authoritative()
                    .is_some_and(|last| last.alive() != state.alive());
                let result = if placed {
                    self.stats.placements += 1;
                    local.accept_placed(state.stamp(), state)
                } else {
                    local.accept(state.stamp(), state)
                };
                self.state = State::Playing(welcome, local);
                if let Ok(report) = result {
                    self.push_event(SessionEvent::Reconciled { report, placed });
                }
            }
        }
    }

    /// The server's report of how early our inputs arrive.
    fn on_timing(&mut self, timing: &InputTiming) {
        // Late and repeated inputs are counted by the controller; they do
        // not start resends: lateness from jitter or a congested path is
        // not cured by sending more.
        self.pacing.on_timing(timing);
        if let Some(receipt) = timing.received {
            let now = self.now();
            self.cover.on_receipt(receipt, now);
        }
        self.push_event(SessionEvent::Timing(*timing));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reordered_snapshot_is_not_lost_a_missing_one_is() {
        let mut a = Arrivals::default();
        assert_eq!(a.arrived(Tick(10)), None);
        // 12 before 11: reordered, nothing judged lost yet.
        for t in [12, 11, 13, 14] {
            a.arrived(Tick(t));
        }
        // 15 is never sent; 16 to 20 arrive: when 15 falls 4 behind, lost.
        let mut lost = 0;
        for t in 16..=20 {
            if let Some((l, _)) = a.arrived(Tick(t)) {
                lost += l;
            }
        }
        assert_eq!(lost, 1);
        // Nothing before the first tick counts.
        let mut b = Arrivals::default();
        b.arrived(Tick(100));
        assert_eq!(b.arrived(Tick(101)), Some((0, 0)));
    }
}
