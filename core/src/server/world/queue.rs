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
    /// Protocol 2: arrived after its tick was simulated (its lasting part
    /// dropped, an action judged at its view honoured at the next tick;
    /// counted once per input).
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
