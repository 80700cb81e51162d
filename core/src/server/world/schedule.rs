//! Command frames (protocol 2): every input names the server tick it is for,
//! and the server simulates it at that tick, never earlier, never later.
//!
//! - An input that arrives before its tick waits in the queue; its
//!   **slack** (how long before its tick is simulated it arrived) is
//!   measured on first arrival and reported back ([`InputTiming`]).
//! - An input that arrives after its tick is **late**: its movement is
//!   dropped and it is counted once (its resends are duplicates), and its
//!   negative slack is reported, so the client moves its inputs earlier.
//! - **A late input's action is honoured**, once: an input that acts on
//!   the view it was made in ([`Wired::acts_on_view`]) was already shown
//!   on its player's page, so a late one is handed to the game again at
//!   the next tick simulated (after this tick's own input, if any, has
//!   been applied), to judge at the view it carried within the same
//!   rewind bounds as any other (the round-trip one from its own
//!   arrival). The game decides whether it still counts (a player dead
//!   since, an action still cooling down). Only the first late action
//!   waiting is kept; resends are duplicates and never act, and a repeat
//!   never acts. Counted in `late_actions_honoured` when the game takes it.
//! - A tick whose input is missing **repeats** the player's previous input
//!   (its lasting part only, never an action judged at a view) and is
//!   counted. The snapshot still
//!   acknowledges the newest simulated tick, so the client prunes it and
//!   replays the rest from the authoritative state: a repeat that differed
//!   from the real input is a counted correction, never a silent one.
//! - Exactly one input per player per tick, so no client moves faster than
//!   the simulation, however it sends.
//! - An input more than [`MAX_AHEAD_TICKS`] ahead is dropped and counted.
//! - Each input message's `snapshot_ack` measures the player's round trip
//!   (`latency`), which bounds how far back its actions are judged: an
//!   input that acts on its view keeps the oldest view it may claim from
//!   its arrival.

use std::collections::VecDeque;
use std::time::Duration;

use super::inputs::{Command, PlayerInputs, Wired};
use super::latency::RoundTrip;
use super::WorldStats;
use crate::server::world::queue::{Received, MAX_QUEUED_INPUTS};
use crate::shared::tick::Tick;
use crate::shared::timing::{slack_to_wire, InputTiming, Receipt};

/// How far ahead of the server's tick an input may be (1.6 s at 50 ms).
pub const MAX_AHEAD_TICKS: u32 = MAX_QUEUED_INPUTS as u32;

/// Ticks back a repeat is remembered, to count its real input late once.
const REMEMBERED: u32 = 64;

/// The scheduled-input state of one protocol-2 player.
#[derive(Clone, Debug)]
pub(crate) struct Schedule<W> {
    /// The newest input simulated, repeated when one is missing.
    last: Option<W>,
    /// Bit `i`: tick `ack - i` was a repeat whose real input has not been
    /// counted late yet.
    repeats: u64,
    /// Running counts, for the feedback.
    late: u32,
    repeated: u32,
    /// The smallest slack of an input first seen since the last feedback.
    sample: Option<(Tick, f64)>,
    /// The tick the player joined at: inputs for it or earlier name ticks
    /// it never played, and are never late.
    joined: Tick,
    /// Before its first input is simulated, the newest past tick counted
    /// late: each such tick is counted once, however often it is resent.
    late_before_first: Option<Tick>,
    /// The round trip measured from snapshot acknowledgements.
    rtt: RoundTrip,
    /// For queued inputs that act on their view, by tick: the oldest view
    /// each may claim by
    /// the round trip measured when it arrived.
    oldest_views: VecDeque<(Tick, f64)>,
    /// A late input's action, honoured at the next tick simulated.
    late_action: Option<LateAction>,
    /// Which numbered input messages arrived, reported with the timing.
    received: Option<Receipt>,
}

/// The action of a late input, waiting for the next tick.
#[derive(Clone, Copy, Debug)]
struct LateAction {
    /// The tick the input named.
    tick: Tick,
    /// The view it carried.
    view_tick: Option<f64>,
    /// The oldest view its round trip allows, from its arrival.
    oldest_view: Option<f64>,
}

impl<W> Schedule<W> {
    /// The state of a player joining at `tick`.
    pub(super) fn joined_at(tick: Tick) -> Schedule<W> {
        Schedule {
            last: None,
            repeats: 0,
            late: 0,
            repeated: 0,
            sample: None,
            joined: tick,
            late_before_first: None,
            rtt: RoundTrip::default(),
            oldest_views: VecDeque::new(),
            late_action: None,
            received: None,
        }
    }

    /// An input for `tick` arrived for the first time with `slack_ms`:
    /// counted in the lateness histogram if `late`, else in the slack one,
    /// and reported if it is the tightest yet.
    fn note(&mut self, tick: Tick, slack_ms: f64, late: bool, stats: &mut WorldStats) {
        if late {
            stats.lateness.record((-slack_ms).max(0.0) as i32);
        } else {
            // Still in time when its tick runs behind (the slack then
            // measured from the tick's schedule is below zero).
            stats.slack.record(slack_ms.max(0.0) as i32);
        }
        if self.sample.is_none_or(|(_, s)| slack_ms < s) {
            self.sample = Some((tick, slack_ms));
        }
    }

    /// A message acknowledging the snapshot of `acked` arrived `since`
    /// after the step of `now`.
    pub(super) fn acknowledged(&mut self, acked: Tick, now: (Tick, Duration), tick_ms: u32) {
        self.rtt.acknowledged(acked, now, self.joined, tick_ms);
    }

    /// Input message `seq` arrived.
    pub(super) fn numbered(&mut self, seq: u16) {
        self.received = Some(Receipt::note(self.received, seq));
    }

    /// The measured round trip, if any.
    pub(super) fn round_trip(&self) -> Option<Duration> {
        self.rtt.get()
    }

    /// Keeps the oldest view the acting input for `tick` may claim (a resend
    /// after its queue was cleared replaces it).
    fn keep_oldest_view(&mut self, tick: Tick, oldest: f64) {
        let at = self.oldest_views.partition_point(|(t, _)| *t < tick);
        match self.oldest_views.get_mut(at) {
            Some(kept) if kept.0 == tick => kept.1 = oldest,
            _ => self.oldest_views.insert(at, (tick, oldest)),
        }
    }

    /// The oldest view kept for the input of `tick`, dropping older ones.
    fn take_oldest_view(&mut self, tick: Tick) -> Option<f64> {
        while self.oldest_views.front().is_some_and(|(t, _)| *t < tick) {
            self.oldest_views.pop_front();
        }
        self.oldest_views
            .front()
            .filter(|(t, _)| *t == tick)
            .map(|&(_, oldest)| oldest)
            .inspect(|_| {
                self.oldest_views.pop_front();
            })
    }

    /// This tick's feedback; the slack sample is reported once.
    pub(super) fn take_timing(&mut self) -> InputTiming {
        let sample = self.sample.take();
        InputTiming {
            tick: sample.map(|(t, _)| t),
            slack_ms: sample.map_or(0, |(_, s)| slack_to_wire(s)),
            late: self.late as u16,
            repeated: self.repeated as u16,
            received: self.received,
        }
    }
}

impl<W: Wired> PlayerInputs<W> {
    /// Takes inputs that name server ticks, `since` after server tick `now`
    /// was stepped, with ticks of `tick_ms`.
    pub(super) fn schedule_inputs(
        &mut self,
        inputs: &[W],
        now: Tick,
        since: Duration,
        tick_ms: u32,
        stats: &mut WorldStats,
    ) -> Received {
        let mut out = Received::default();
        let (tick_ms, ms) = (f64::from(tick_ms), tick_ms);
        let since_ms = since.as_secs_f64() * 1000.0;
        let ack = self.ack;
        let Some(schedule) = self.schedule.as_mut() else {
            return out;
        };
        let oldest_view = schedule.rtt.oldest_view((now, since), ms);
        for input in inputs {
            let t = input.tick();
            let slack = (f64::from(t.0) - f64::from(now.0)) * tick_ms - since_ms;
            if t <= now {
                // Its tick is simulated already: late, unless it was
                // simulated as itself (a resend) or counted late before.
                let back = ack.map(|a| a.0.saturating_sub(t.0));
                let repeat = match back {
                    Some(b) if ack.is_some_and(|a| t <= a) => {
                        b < REMEMBERED && schedule.repeats & (1 << b) != 0
                    }
                    // Never simulated with an input of its own: before its
                    // first, late once if the player was there for it.
                    _ => {
                        ack.is_none()
                            && t > schedule.joined
                            && schedule.late_before_first.is_none_or(|l| t > l)
                    }
                };
                if repeat && ack.is_none() {
                    schedule.late_before_first = Some(t);
                }
                if repeat {
                    if let Some(b) = back.filter(|&b| b < REMEMBERED) {
                        schedule.repeats &= !(1 << b);
                    }
                    schedule.late = schedule.late.wrapping_add(1);
                    schedule.note(t, slack, true, stats);
                    stats.late_inputs += 1;
                    out.late += 1;
                    if input.acts_on_view() && schedule.late_action.is_none() {
                        schedule.late_action = Some(LateAction {
                            tick: t,
                            view_tick: input.view_tick(),
                            oldest_view,
                        });
                    }
                } else {
                    out.duplicates += 1;
                }
            } else if t.0 - now.0 > MAX_AHEAD_TICKS {
                out.dropped += 1;
            } else {
                let at = self.queue.partition_point(|q| q.tick() < t);
                if self.queue.get(at).is_some_and(|q| q.tick() == t) {
                    out.duplicates += 1;
                } else if self.queue.len() >= MAX_QUEUED_INPUTS {
                    out.dropped += 1;
                } else {
                    self.queue.insert(at, *input);
                    schedule.note(t, slack, false, stats);
                    if let Some(oldest) = oldest_view.filter(|_| input.acts_on_view()) {
                        schedule.keep_oldest_view(t, oldest);
                    }
                    out.queued += 1;
                }
            }
        }
        out
    }

    /// Tick `tick` of a protocol-2 player: its input for that tick, or
    /// its previous input again (counted), or nothing before its first;
    /// then what a late input left to honour (its action), which the game
    /// applies after this tick's input and before this tick's own action.
    pub(super) fn due_scheduled(
        &mut self,
        tick: Tick,
        stats: &mut WorldStats,
        out: &mut Vec<Command<W>>,
    ) {
        while self.queue.front().is_some_and(|q| q.tick() < tick) {
            self.queue.pop_front();
        }
        let own = self
            .queue
            .front()
            .filter(|q| q.tick() == tick)
            .copied()
            .inspect(|_| {
                self.queue.pop_front();
            });
        let Some(schedule) = self.schedule.as_mut() else {
            return;
        };
        let oldest_view = schedule.take_oldest_view(tick);
        let late = schedule.late_action.take();
        let applied = match (own, schedule.last) {
            (Some(input), _) => Some((input, false)),
            (None, Some(last)) => Some((last.repeated_at(tick), true)),
            // Nothing yet from this player: it stands still, unacknowledged.
            (None, None) => None,
        };
        if let Some((input, repeated)) = applied {
            schedule.last = Some(input);
            schedule.repeats = (schedule.repeats << 1) | u64::from(repeated);
            if repeated {
                schedule.repeated = schedule.repeated.wrapping_add(1);
                stats.repeated_inputs += 1;
            }
            self.ack = Some(tick);
            stats.applied_inputs += 1;
            out.push(Command::Apply { input, oldest_view });
        }
        if let Some(late) = late {
            out.push(Command::Late {
                tick: late.tick,
                view_tick: late.view_tick,
                oldest_view: late.oldest_view,
            });
        }
    }
}
