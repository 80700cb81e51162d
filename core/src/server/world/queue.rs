//! The per-player input queue: receiving inputs (duplicates, a full queue),
//! then applying them one server tick at a time (gaps, catch-up).
//!
//! A queue is kept sorted by input tick and holds no tick twice and none the
//! player's ack already covers. Each step applies the inputs at its front
//! through [`simulate`], at most [`MAX_INPUTS_PER_TICK`] of them.

use super::inputs::{Command, PlayerInputs, Wired};
use super::WorldStats;
use crate::shared::tick::Tick;

/// Most inputs a player's queue holds; more are dropped and counted.
pub const MAX_QUEUED_INPUTS: usize = 32;
/// The backlog catch-up works down to.
///
/// A tick applies two inputs instead of one only if it starts with more
/// than `CATCH_UP_ABOVE + 1` inputs queued (inputs behind a gap count too),
/// so a double step never leaves fewer than `CATCH_UP_ABOVE` queued: with
/// nothing new arriving, catch-up stops at `CATCH_UP_ABOVE` or
/// `CATCH_UP_ABOVE + 1` queued and the rest go one per tick. 16 queued are
/// applied 2, 2, 2, 2, 2, 2, then 1, 1, 1, 1. A gap still stops a tick early.
pub const CATCH_UP_ABOVE: usize = 4;
/// Never more inputs than this are applied to one player in one tick.
pub const MAX_INPUTS_PER_TICK: usize = 2;
/// Server ticks a missing input tick is waited for before it is skipped.
pub const GAP_WAIT_TICKS: u32 = 2;

/// What happened to one batch of received inputs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Received {
    /// Newly queued.
    pub queued: usize,
    /// Already applied or queued (normal: clients resend until acknowledged).
    pub duplicates: usize,
    /// Dropped because the queue was full (or, in protocol 2, the input
    /// was too far ahead).
    pub dropped: usize,
    /// Protocol 2: arrived after its tick was simulated (its movement
    /// dropped, its shot honoured at the next tick; counted once per
    /// input).
    pub late: usize,
}

impl<W: Wired> PlayerInputs<W> {
    /// Queues `inputs` in tick order; counts duplicates (acknowledged or
    /// already queued) and the inputs a full queue drops.
    pub(super) fn enqueue(&mut self, inputs: &[W]) -> Received {
        let mut out = Received::default();
        for input in inputs {
            let applied = self.ack.is_some_and(|ack| input.tick() <= ack);
            let at = self.queue.partition_point(|q| q.tick() < input.tick());
            let queued = self.queue.get(at).is_some_and(|q| q.tick() == input.tick());
            if applied || queued {
                out.duplicates += 1;
            } else if self.queue.len() >= MAX_QUEUED_INPUTS {
                out.dropped += 1;
            } else {
                self.queue.insert(at, *input);
                out.queued += 1;
            }
        }
        out
    }

    /// This tick's inputs of a protocol-1 player, in order: the next
    /// queued one (two while catching up), after waiting for a missing tick
    /// a little. Each handed out is acknowledged and counted as applied.
    pub(super) fn due_queued(&mut self, stats: &mut WorldStats, out: &mut Vec<Command<W>>) {
        // See CATCH_UP_ABOVE: two only while a double step leaves at least that many.
        let budget = if self.queue.len() > CATCH_UP_ABOVE + 1 {
            MAX_INPUTS_PER_TICK
        } else {
            1
        };
        for _ in 0..budget {
            let Some(next) = self.queue.front() else {
                break;
            };
            let expected = self.ack.map(Tick::next);
            if expected.is_some_and(|e| next.tick() > e) {
                // A gap: wait for the missing tick a little, then skip it.
                if self.waited < GAP_WAIT_TICKS {
                    self.waited += 1;
                    break;
                }
                stats.skipped_ticks += u64::from(next.tick().0 - expected.map_or(0, |e| e.0));
            }
            let Some(input) = self.queue.pop_front() else {
                break;
            };
            self.waited = 0;
            self.ack = Some(input.tick());
            stats.applied_inputs += 1;
            out.push(Command::Apply {
                input,
                oldest_view: None,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use glam::Vec2;

    use super::*;
    use crate::server::world::World;
    use crate::shared::state::PlayerId;
    use crate::tanks::sim::Pose;
    use crate::tanks::world::tests::{at, input, open, place};

    /// A world with one player placed at `pose`.
    fn world_with(pose: Pose) -> (World<crate::tanks::Tanks>, PlayerId) {
        let mut w = World::new(open(), 7);
        let id = PlayerId(1);
        w.join(id, "a").unwrap();
        place(&mut w, id, pose);
        (w, id)
    }

    #[test]
    fn one_input_per_tick_and_ack_follows() {
        let (mut w, id) = world_with(at(500.0, 600.0, 0.0));
        w.receive(id, &[input(1, 1.0), input(2, 1.0)]);
        w.step();
        assert_eq!(w.player(id).unwrap().ack(), Some(Tick(1)));
        assert_eq!(w.player(id).unwrap().pose().position.x, 510.0);
        w.step();
        assert_eq!(w.player(id).unwrap().ack(), Some(Tick(2)));
        // Nothing queued: stands still, the ack stays.
        w.step();
        assert_eq!(w.player(id).unwrap().ack(), Some(Tick(2)));
        assert_eq!(w.player(id).unwrap().pose().position.x, 520.0);
        assert_eq!(w.state_of(id).unwrap().velocity, Some(Vec2::ZERO));
    }

    #[test]
    fn duplicates_are_ignored_and_full_queue_drops() {
        let (mut w, id) = world_with(at(500.0, 600.0, 0.0));
        let batch: Vec<_> = (1..=16).map(|t| input(t, 1.0)).collect();
        assert_eq!(w.receive(id, &batch).queued, 16);
        assert_eq!(w.receive(id, &batch).duplicates, 16);
        let more: Vec<_> = (17..=40).map(|t| input(t, 1.0)).collect();
        let r = w.receive(id, &more);
        assert_eq!((r.queued, r.dropped), (16, 8));
        assert_eq!(w.stats().dropped_inputs, 8);
        w.step();
        assert_eq!(w.receive(id, &[input(1, 1.0)]).duplicates, 1);
    }

    #[test]
    fn a_missing_tick_is_waited_for_twice_then_skipped() {
        let (mut w, id) = world_with(at(500.0, 600.0, 0.0));
        w.receive(id, &[input(1, 1.0)]);
        w.step();
        w.receive(id, &[input(3, 1.0)]);
        w.step();
        w.step();
        assert_eq!(w.player(id).unwrap().ack(), Some(Tick(1)), "waiting for 2");
        w.step();
        assert_eq!(w.player(id).unwrap().ack(), Some(Tick(3)), "2 skipped");
        assert_eq!(w.stats().skipped_ticks, 1);
    }

    #[test]
    fn a_late_tick_within_the_wait_is_applied_in_order() {
        let (mut w, id) = world_with(at(500.0, 600.0, 0.0));
        w.receive(id, &[input(1, 1.0)]);
        w.step();
        w.receive(id, &[input(3, 1.0)]);
        w.step();
        w.receive(id, &[input(2, 1.0)]);
        w.step();
        assert_eq!(w.player(id).unwrap().ack(), Some(Tick(2)));
        w.step();
        assert_eq!(w.player(id).unwrap().ack(), Some(Tick(3)));
        assert_eq!(w.stats().skipped_ticks, 0);
    }

    #[test]
    fn catch_up_applies_two_per_tick_never_more() {
        let (mut w, id) = world_with(at(300.0, 600.0, 0.0));
        let batch: Vec<_> = (1..=16).map(|t| input(t, 1.0)).collect();
        w.receive(id, &batch);
        let mut applied = Vec::new();
        let mut last = 0;
        for _ in 0..10 {
            w.step();
            let ack = w.player(id).unwrap().ack().unwrap().0;
            applied.push(ack - last);
            last = ack;
        }
        // 16 queued: two per tick while more than 4 + 1 are queued, which
        // takes the queue down to 4; then one per tick.
        assert_eq!(applied, vec![2, 2, 2, 2, 2, 2, 1, 1, 1, 1]);
        assert!(applied.iter().all(|&n| n as usize <= MAX_INPUTS_PER_TICK));
    }

    #[test]
    fn catch_up_never_leaves_fewer_than_catch_up_above() {
        // CATCH_UP_ABOVE + 3 queued: one double step leaves CATCH_UP_ABOVE + 1,
        // which is not more than CATCH_UP_ABOVE + 1, so the rest go one by one.
        let (mut w, id) = world_with(at(300.0, 600.0, 0.0));
        let n = CATCH_UP_ABOVE as u32 + 3;
        let batch: Vec<_> = (1..=n).map(|t| input(t, 1.0)).collect();
        w.receive(id, &batch);
        let mut left = Vec::new();
        for _ in 0..3 {
            w.step();
            left.push(w.player(id).unwrap().queued());
        }
        let c = CATCH_UP_ABOVE;
        assert_eq!(left, vec![c + 1, c, c - 1]);
    }
}
