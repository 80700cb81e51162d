//! Command frames (protocol 2): every input names the server tick it is for,
//! and the server simulates it at that tick, never earlier, never later.
//!
//! - An input that arrives before its tick waits in the queue; its
//!   **slack** (how long before its tick is simulated it arrived) is
//!   measured on first arrival and reported back ([`InputTiming`]).
//! - An input that arrives after its tick is **late**: it is dropped and
//!   counted once (its resends are duplicates), and its negative slack is
//!   reported, so the client moves its inputs earlier.
//! - A tick whose input is missing **repeats** the player's previous input
//!   (movement only, never a shot) and is counted. The snapshot still
//!   acknowledges the newest simulated tick, so the client prunes it and
//!   replays the rest from the authoritative state: a repeat that differed
//!   from the real input is a counted correction, never a silent one.
//! - Exactly one input per player per tick, so no client moves faster than
//!   the simulation, however it sends.
//! - An input more than [`MAX_AHEAD_TICKS`] ahead is dropped and counted.

use std::time::Duration;

use super::combat::Shot;
use super::{ServerPlayer, WorldStats};
use crate::server::world::queue::{apply_one, Received, MAX_QUEUED_INPUTS};
use crate::shared::config::SimConfig;
use crate::shared::protocol::WireInput;
use crate::shared::state::PlayerId;
use crate::shared::tick::Tick;
use crate::shared::timing::{slack_to_wire, InputTiming};

/// How far ahead of the server's tick an input may be (1.6 s at 50 ms).
pub const MAX_AHEAD_TICKS: u32 = MAX_QUEUED_INPUTS as u32;

/// Ticks back a repeat is remembered, to count its real input late once.
const REMEMBERED: u32 = 64;

/// The scheduled-input state of one protocol-2 player.
#[derive(Clone, Debug, Default)]
pub(super) struct Schedule {
    /// The newest input simulated, repeated when one is missing.
    last: Option<WireInput>,
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
}

impl Schedule {
    /// The state of a player joining at `tick`.
    pub(super) fn joined_at(tick: Tick) -> Schedule {
        Schedule {
            joined: tick,
            ..Schedule::default()
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

    /// This tick's feedback; the slack sample is reported once.
    pub(super) fn take_timing(&mut self) -> InputTiming {
        let sample = self.sample.take();
        InputTiming {
            tick: sample.map(|(t, _)| t),
            slack_ms: sample.map_or(0, |(_, s)| slack_to_wire(s)),
            late: self.late as u16,
            repeated: self.repeated as u16,
        }
    }
}

impl ServerPlayer {
    /// Takes inputs that name server ticks, `since` after server tick `now`
    /// was stepped.
    pub(super) fn schedule_inputs(
        &mut self,
        inputs: &[WireInput],
        now: Tick,
        since: Duration,
        sim: &SimConfig,
        stats: &mut WorldStats,
    ) -> Received {
        let mut out = Received::default();
        let tick_ms = f64::from(sim.tick_ms);
        let since_ms = since.as_secs_f64() * 1000.0;
        let ack = self.ack;
        let Some(schedule) = self.schedule.as_mut() else {
            return out;
        };
        for input in inputs {
            let t = input.tick;
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
                } else {
                    out.duplicates += 1;
                }
            } else if t.0 - now.0 > MAX_AHEAD_TICKS {
                out.dropped += 1;
            } else {
                let at = self.queue.partition_point(|q| q.tick < t);
                if self.queue.get(at).is_some_and(|q| q.tick == t) {
                    out.duplicates += 1;
                } else if self.queue.len() >= MAX_QUEUED_INPUTS {
                    out.dropped += 1;
                } else {
                    self.queue.insert(at, *input);
                    schedule.note(t, slack, false, stats);
                    out.queued += 1;
                }
            }
        }
        out
    }
}

/// Simulates tick `tick` of one protocol-2 player: its input for that tick,
/// or its previous input again (counted), or nothing before its first.
pub(super) fn apply_scheduled(
    id: PlayerId,
    player: &mut ServerPlayer,
    tick: Tick,
    sim: &SimConfig,
    stats: &mut WorldStats,
    shots: &mut Vec<Shot>,
) {
    while player.queue.front().is_some_and(|q| q.tick < tick) {
        player.queue.pop_front();
    }
    let before = player.pose.position;
    let own = player
        .queue
        .front()
        .filter(|q| q.tick == tick)
        .copied()
        .inspect(|_| {
            player.queue.pop_front();
        });
    let Some(schedule) = player.schedule.as_mut() else {
        return;
    };
    let (input, repeated) = match (own, schedule.last) {
        (Some(input), _) => (input, false),
        (None, Some(last)) => (
            WireInput {
                tick,
                fire: false,
                view_tick: None,
                ..last
            },
            true,
        ),
        // Nothing yet from this player: it stands still, unacknowledged.
        (None, None) => {
            player.settle_velocity(before, sim);
            return;
        }
    };
    schedule.last = Some(input);
    schedule.repeats = (schedule.repeats << 1) | u64::from(repeated);
    if repeated {
        schedule.repeated = schedule.repeated.wrapping_add(1);
        stats.repeated_inputs += 1;
    }
    player.ack = Some(tick);
    apply_one(id, player, &input, sim, stats, shots);
    player.settle_velocity(before, sim);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::world::tests::{at, input, open, place};
    use crate::server::world::{InputMode, World};

    const MS: fn(u64) -> Duration = Duration::from_millis;

    fn scheduled() -> (World, PlayerId) {
        let mut w = World::new(open(), 7);
        let id = PlayerId(1);
        w.join_with(id, "a", InputMode::Scheduled).unwrap();
        place(&mut w, id, at(500.0, 600.0, 0.0));
        (w, id)
    }

    #[test]
    fn an_input_is_simulated_at_the_tick_it_names() {
        let (mut w, id) = scheduled();
        // At tick 0, 10 ms in: input for tick 3 is 140 ms early.
        let r = w.receive_at(id, &[input(3, 1.0)], MS(10));
        assert_eq!(r.queued, 1);
        let timing = w.take_timing(id).unwrap();
        assert_eq!((timing.tick, timing.slack_ms), (Some(Tick(3)), 140));
        assert_eq!(w.take_timing(id).unwrap().tick, None, "reported once");
        w.step();
        w.step();
        assert_eq!(
            w.player(id).unwrap().ack(),
            None,
            "nothing before its first"
        );
        assert_eq!(w.player(id).unwrap().pose().position.x, 500.0);
        w.step();
        assert_eq!(w.player(id).unwrap().ack(), Some(Tick(3)));
        assert_eq!(w.player(id).unwrap().pose().position.x, 510.0);
    }

    #[test]
    fn a_missing_input_repeats_the_last_and_its_late_arrival_is_counted_once() {
        let (mut w, id) = scheduled();
        w.receive_at(id, &[input(1, 1.0)], MS(0));
        w.step();
        w.step(); // tick 2 is missing: repeated
        assert_eq!(w.player(id).unwrap().ack(), Some(Tick(2)));
        assert_eq!(w.player(id).unwrap().pose().position.x, 520.0);
        assert_eq!(w.stats().repeated_inputs, 1);
        // Its input arrives 20 ms after tick 2 was simulated: late.
        let r = w.receive_at(id, &[input(2, 0.0), input(3, 1.0)], MS(20));
        assert_eq!((r.late, r.queued), (1, 1));
        let timing = w.take_timing(id).unwrap();
        assert_eq!((timing.tick, timing.slack_ms), (Some(Tick(2)), -20));
        assert_eq!((timing.late, timing.repeated), (1, 1));
        // Its lateness apart from the slack of the inputs in time (1 and 3).
        let stats = w.stats();
        assert_eq!((stats.lateness.count(), stats.lateness.sum_ms), (1, 20));
        assert_eq!((stats.slack.count(), stats.slack.sum_ms), (2, 50 + 30));
        // Resent: a duplicate now, not late again.
        let r = w.receive_at(id, &[input(2, 0.0)], MS(30));
        assert_eq!((r.late, r.duplicates), (0, 1));
        assert_eq!(w.stats().late_inputs, 1);
        // Tick 1 was simulated as itself: a resend is a duplicate.
        assert_eq!(w.receive_at(id, &[input(1, 1.0)], MS(30)).duplicates, 1);
    }

    #[test]
    fn inputs_before_the_first_are_late_once_and_never_before_the_join() {
        let mut w = World::new(open(), 1);
        // The world runs 10 ticks before the player joins at tick 10.
        for _ in 0..10 {
            w.step();
        }
        let id = PlayerId(7);
        w.join_with(id, "late", InputMode::Scheduled).unwrap();
        for _ in 0..5 {
            w.step();
        }
        // Ticks before the join are never late; 11..=15 once each, however
        // often they are resent before the first input is simulated.
        let old: Vec<_> = (1..=10).map(|t| input(t, 0.0)).collect();
        assert_eq!(w.receive_at(id, &old, MS(10)).late, 0);
        let past: Vec<_> = (11..=15).map(|t| input(t, 0.0)).collect();
        assert_eq!(w.receive_at(id, &past, MS(10)).late, 5);
        for _ in 0..100 {
            assert_eq!(w.receive_at(id, &past, MS(10)).late, 0);
        }
        assert_eq!(w.stats().late_inputs, 5);
    }

    #[test]
    fn an_input_in_time_for_a_tick_running_behind_has_zero_slack_not_lateness() {
        let (mut w, id) = scheduled();
        // 70 ms after tick 0, tick 1 (due at 50 ms) has not run yet.
        let r = w.receive_at(id, &[input(1, 1.0)], MS(70));
        assert_eq!((r.queued, r.late), (1, 0));
        assert_eq!(
            w.take_timing(id).unwrap().slack_ms,
            -20,
            "the clock hears it"
        );
        let stats = w.stats();
        assert_eq!((stats.slack.count(), stats.slack.sum_ms), (1, 0));
        assert_eq!(stats.lateness.count(), 0);
    }

    #[test]
    fn one_input_per_tick_however_many_arrive() {
        let (mut w, id) = scheduled();
        let batch: Vec<_> = (1..=10).map(|t| input(t, 1.0)).collect();
        w.receive_at(id, &batch, MS(0));
        for t in 1..=10 {
            w.step();
            assert_eq!(w.player(id).unwrap().ack(), Some(Tick(t)));
        }
        assert_eq!(w.player(id).unwrap().pose().position.x, 600.0);
        assert_eq!(w.stats().repeated_inputs, 0);
    }

    #[test]
    fn inputs_too_far_ahead_are_dropped() {
        let (mut w, id) = scheduled();
        let r = w.receive_at(id, &[input(MAX_AHEAD_TICKS + 1, 1.0)], MS(0));
        assert_eq!(r.dropped, 1);
        assert_eq!(w.stats().dropped_inputs, 1);
    }

    #[test]
    fn a_repeat_never_fires() {
        let (mut w, id) = scheduled();
        w.receive_at(id, &[crate::server::world::tests::fire(1, None)], MS(0));
        w.step();
        w.step();
        assert_eq!(w.stats().repeated_inputs, 1);
        assert_eq!(w.stats().shots, 1, "only the real input fired");
    }
}
