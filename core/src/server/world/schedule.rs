//! Command frames (protocol 2): every input names the server tick it is for,
//! and the server simulates it at that tick, never earlier, never later.
//!
//! - An input that arrives before its tick waits in the queue; its
//!   **slack** (how long before its tick is simulated it arrived) is
//!   measured on first arrival and reported back ([`InputTiming`]).
//! - An input that arrives after its tick is **late**: its movement is
//!   dropped and it is counted once (its resends are duplicates), and its
//!   negative slack is reported, so the client moves its inputs earlier.
//! - **A late input's shot is honoured**, once: the shooter's page drew its
//!   tracer, so a late input that fires shoots at the next tick simulated
//!   (after this tick's own input, if any, has moved the player), from the
//!   shooter's pose then, judged at the view it carried within the same
//!   rewind bounds as any shot (the round-trip one from its own arrival).
//!   Like any shot it needs the shooter alive, and off cooldown counted in
//!   the late input's own tick (the tick the page counted it in), so a
//!   shot honoured late never lets the page's next shot be refused; it
//!   also needs the shooter to have been alive since that tick (a shot from
//!   before a death never comes back with the respawn). Only the first
//!   late shot waiting is kept; resends are duplicates and never fire, and
//!   a repeat never fires. Counted in `late_shots_honoured` when it fires.
//! - A tick whose input is missing **repeats** the player's previous input
//!   (movement only, never a shot) and is counted. The snapshot still
//!   acknowledges the newest simulated tick, so the client prunes it and
//!   replays the rest from the authoritative state: a repeat that differed
//!   from the real input is a counted correction, never a silent one.
//! - Exactly one input per player per tick, so no client moves faster than
//!   the simulation, however it sends.
//! - An input more than [`MAX_AHEAD_TICKS`] ahead is dropped and counted.
//! - Each input message's `snapshot_ack` measures the player's round trip
//!   (`latency`), which bounds how far back its shots are judged: a fire
//!   input keeps the oldest view it may claim from its arrival.

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
    /// For queued fire inputs, by tick: the oldest view each may claim by
    /// the round trip measured when it arrived.
    oldest_views: VecDeque<(Tick, f64)>,
    /// A late input's shot, fired at the next tick simulated.
    late_shot: Option<LateShot>,
    /// Which numbered input messages arrived, reported with the timing.
    received: Option<Receipt>,
}

/// The shot of a late input, waiting for the next tick.
#[derive(Clone, Copy, Debug)]
struct LateShot {
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
            late_shot: None,
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

    /// Keeps the oldest view the fire input for `tick` may claim (a resend
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
                    if input.acts_on_view() && schedule.late_shot.is_none() {
                        schedule.late_shot = Some(LateShot {
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
    /// then what a late input left to honour (its shot), which the game
    /// applies after this tick's move and before this tick's own shot.
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
        let late = schedule.late_shot.take();
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

#[cfg(test)]
mod tests {
    use glam::Vec2;

    use super::*;
    use crate::server::world::{InputMode, World};
    use crate::shared::state::PlayerId;
    use crate::tanks::world::tests::{at, fire, input, kill, open, place};

    const MS: fn(u64) -> Duration = Duration::from_millis;

    fn scheduled() -> (World<crate::tanks::Tanks>, PlayerId) {
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

    /// [`scheduled`] with a protocol-1 target (player 2) 300 u ahead of
    /// the shooter, which played tick 1 standing still and whose input for
    /// tick 2 was missing (a repeat).
    fn duel_with_a_missing_tick() -> (World<crate::tanks::Tanks>, PlayerId) {
        let (mut w, id) = scheduled();
        w.join(PlayerId(2), "target").unwrap();
        place(&mut w, PlayerId(2), at(800.0, 600.0, 0.0));
        w.receive_at(id, &[input(1, 0.0)], MS(0));
        w.step();
        w.step();
        assert_eq!(w.stats().repeated_inputs, 1);
        (w, id)
    }

    fn hp(w: &World<crate::tanks::Tanks>, id: PlayerId) -> u16 {
        w.player(id).unwrap().hp()
    }

    #[test]
    fn a_late_shot_fires_once_at_the_next_tick() {
        let (mut w, id) = duel_with_a_missing_tick();
        // Tick 2 fired on the shooter's page; its input arrives 10 ms after
        // tick 2 ran, with tick 3 moving the shooter forward.
        let late = [fire(2, None), input(3, 1.0)];
        let r = w.receive_at(id, &late, MS(10));
        assert_eq!((r.late, r.queued), (1, 1));
        // Resent once before the next tick and twice after: duplicates.
        assert_eq!(w.receive_at(id, &late, MS(30)).late, 0);
        let events = w.step().to_vec();
        assert_eq!(events.len(), 1, "honoured at tick 3");
        let e = events[0];
        assert_eq!(
            (e.server_tick, e.attacker, e.target),
            (Tick(3), id, PlayerId(2))
        );
        assert_eq!(e.from, Vec2::new(510.0, 600.0), "from the pose at tick 3");
        for _ in 0..2 {
            let r = w.receive_at(id, &[fire(2, None)], MS(10));
            assert_eq!((r.late, r.duplicates), (0, 1));
            assert!(w.step().is_empty(), "never fired again");
        }
        let stats = w.stats();
        assert_eq!(
            (stats.late_inputs, stats.late_shots_honoured, stats.shots),
            (1, 1, 1)
        );
        assert_eq!(hp(&w, PlayerId(2)), 80);
    }

    #[test]
    fn a_late_shot_counts_its_cooldown_from_its_own_tick() {
        // Honoured at tick 3 but counted at tick 2, as the page counted
        // it: the page's next shot, at tick 7 (250 ms = 5 ticks later),
        // fires too; one at tick 6 would not have.
        let (mut w, id) = duel_with_a_missing_tick();
        w.receive_at(id, &[fire(2, None)], MS(10));
        let rest: Vec<_> = (3..=7).map(|t| fire(t, None)).collect();
        w.receive_at(id, &rest, MS(10));
        let ticks: Vec<Tick> = (3..=7)
            .flat_map(|_| w.step().to_vec())
            .map(|e| e.server_tick)
            .collect();
        assert_eq!(ticks, [Tick(3), Tick(7)]);
        assert_eq!(w.stats().late_shots_honoured, 1);
    }

    #[test]
    fn a_late_shot_under_cooldown_does_not_fire() {
        let (mut w, id) = scheduled();
        w.join(PlayerId(2), "target").unwrap();
        place(&mut w, PlayerId(2), at(800.0, 600.0, 0.0));
        // Tick 1 fires in time; tick 2 is missing, and its late input fires
        // inside tick 1's cooldown.
        w.receive_at(id, &[fire(1, None)], MS(0));
        assert_eq!(w.step().len(), 1);
        w.step();
        assert_eq!(w.receive_at(id, &[fire(2, None)], MS(10)).late, 1);
        assert!(w.step().is_empty());
        assert!(w.step().is_empty(), "not kept for later");
        assert_eq!(w.stats().late_shots_honoured, 0);
        assert_eq!(hp(&w, PlayerId(2)), 80);
    }

    #[test]
    fn a_late_shot_from_a_dead_shooter_does_not_fire() {
        // Killed after tick 2 (until tick 100): its late shot of tick 2
        // never fires, not even after a respawn.
        let (mut w, id) = duel_with_a_missing_tick();
        kill(&mut w, id, Tick(100));
        assert_eq!(w.receive_at(id, &[fire(2, None)], MS(10)).late, 1);
        assert!(w.step().is_empty());
        assert_eq!(w.stats().late_shots_honoured, 0);

        // Alive at its tick, but killed and respawned before its input
        // arrived: a shot from before the death never comes back.
        let (mut w, id) = duel_with_a_missing_tick();
        kill(&mut w, id, Tick(3));
        w.step();
        assert!(w.player(id).unwrap().is_alive(), "respawned in tick 3");
        assert_eq!(w.receive_at(id, &[fire(2, None)], MS(10)).late, 1);
        assert!(w.step().is_empty());
        assert_eq!(w.stats().late_shots_honoured, 0);
        assert_eq!(hp(&w, PlayerId(2)), 100);
    }

    #[test]
    fn a_late_shot_before_the_first_input_fires_from_where_the_player_stands() {
        let (mut w, id) = scheduled();
        w.join(PlayerId(2), "target").unwrap();
        place(&mut w, PlayerId(2), at(800.0, 600.0, 0.0));
        w.step();
        assert_eq!(w.receive_at(id, &[fire(1, None)], MS(10)).late, 1);
        let events = w.step().to_vec();
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].from, Vec2::new(500.0, 600.0));
        assert_eq!(w.player(id).unwrap().ack(), None, "still nothing simulated");
    }

    #[test]
    fn a_repeat_never_fires() {
        let (mut w, id) = scheduled();
        w.receive_at(id, &[fire(1, None)], MS(0));
        w.step();
        w.step();
        assert_eq!(w.stats().repeated_inputs, 1);
        assert_eq!(w.stats().shots, 1, "only the real input fired");
    }
}
