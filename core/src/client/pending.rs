//! The bounded buffer of predicted steps the server has not acknowledged.
//!
//! Ticks are strictly increasing. Acknowledging through tick `N` removes every
//! step with a tick `<= N`, also those the server never received: the server is
//! the authority, so an input it never applied must not be replayed (RS-3).
//! Replay only reads the buffer; nothing but an acknowledgement removes a step
//! (CPR-4).
//!
//! When the buffer is full (by default 128 steps, 6.4 s of play at 50 ms) the
//! client is that far ahead of every acknowledgement: the connection has
//! stalled. A new step is then refused with [`PushError::Full`] rather than
//! evicting an old one, because an evicted step would still be applied by the
//! server but no longer by replay, a silent divergence. The caller neither
//! predicts nor sends a refused step, so client and server stay in agreement,
//! and it counts and shows the refusal (RS-4).

use std::collections::VecDeque;

use crate::shared::input::PredictedStep;
use crate::shared::tick::Tick;

/// Why a step was not recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PushError {
    /// The step's tick is not after the newest recorded tick.
    #[error("tick {got} is not after the newest pending tick {last}")]
    NotIncreasing {
        /// The newest recorded tick.
        last: Tick,
        /// The tick that was refused.
        got: Tick,
    },
    /// The buffer holds `capacity` unacknowledged steps already.
    #[error("the pending-input buffer is full ({capacity} unacknowledged steps)")]
    Full {
        /// The buffer's capacity.
        capacity: usize,
    },
}

/// Unacknowledged predicted steps of a game whose controls are `I`,
/// oldest first.
#[derive(Clone, Debug)]
pub struct PendingInputs<I> {
    steps: VecDeque<PredictedStep<I>>,
    capacity: usize,
    newest: Option<Tick>,
}

impl<I: Copy> Default for PendingInputs<I> {
    fn default() -> Self {
        PendingInputs::with_capacity(DEFAULT_CAPACITY)
    }
}

/// 128 steps: 6.4 s of play at a 50 ms cadence.
const DEFAULT_CAPACITY: usize = 128;

impl<I> PendingInputs<I> {
    /// 128 steps: 6.4 s of play at a 50 ms cadence.
    pub const DEFAULT_CAPACITY: usize = DEFAULT_CAPACITY;
}

impl<I: Copy> PendingInputs<I> {
    /// An empty buffer holding at most `capacity` steps (at least one).
    pub fn with_capacity(capacity: usize) -> PendingInputs<I> {
        let capacity = capacity.max(1);
        PendingInputs {
            steps: VecDeque::with_capacity(capacity),
            capacity,
            newest: None,
        }
    }

    /// Records a step.
    ///
    /// # Errors
    /// [`PushError::NotIncreasing`] if its tick is not after every tick
    /// recorded before (acknowledged ones included), [`PushError::Full`] if the
    /// buffer is full. The buffer is unchanged either way.
    pub fn push(&mut self, step: PredictedStep<I>) -> Result<(), PushError> {
        if let Some(last) = self.newest {
            if step.tick <= last {
                return Err(PushError::NotIncreasing {
                    last,
                    got: step.tick,
                });
            }
        }
        if self.steps.len() >= self.capacity {
            return Err(PushError::Full {
                capacity: self.capacity,
            });
        }
        self.newest = Some(step.tick);
        self.steps.push_back(step);
        Ok(())
    }

    /// Removes every step with a tick `<= tick`; returns how many.
    pub fn ack_through(&mut self, tick: Tick) -> usize {
        let keep_from = self.steps.partition_point(|s| s.tick <= tick);
        self.steps.drain(..keep_from);
        keep_from
    }

    /// The steps, oldest first.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &PredictedStep<I>> + Clone {
        self.steps.iter()
    }

    /// The step inputs, oldest first; what a client resends.
    pub fn inputs(&self) -> impl ExactSizeIterator<Item = I> + '_ {
        self.steps.iter().map(|s| s.input)
    }

    /// How many steps are pending.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// Whether no step is pending.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// Whether the next push would be refused for lack of room.
    pub fn is_full(&self) -> bool {
        self.steps.len() >= self.capacity
    }

    /// The most steps the buffer holds.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The newest tick ever recorded, acknowledged or not.
    pub fn newest_tick(&self) -> Option<Tick> {
        self.newest
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A step of some input (a number) at `tick`.
    fn step(tick: u32) -> PredictedStep<u8> {
        PredictedStep::at(Tick(tick), 1, Duration::from_millis(50))
    }

    fn ticks(p: &PendingInputs<u8>) -> Vec<u32> {
        p.iter().map(|s| s.tick.0).collect()
    }

    #[test]
    fn ticks_must_increase() {
        let mut p: PendingInputs<u8> = PendingInputs::default();
        p.push(step(3)).unwrap();
        assert_eq!(
            p.push(step(3)),
            Err(PushError::NotIncreasing {
                last: Tick(3),
                got: Tick(3)
            })
        );
        assert!(p.push(step(2)).is_err());
        p.push(step(7)).unwrap();
        assert_eq!(ticks(&p), vec![3, 7]);
    }

    #[test]
    fn rs3_ack_removes_every_older_tick_even_unreceived_ones() {
        let mut p: PendingInputs<u8> = PendingInputs::default();
        for t in [1, 2, 3, 4, 5] {
            p.push(step(t)).unwrap();
        }
        // The server skipped tick 3 (lost) and acknowledges through 4.
        assert_eq!(p.ack_through(Tick(4)), 4);
        assert_eq!(ticks(&p), vec![5]);
        // An acknowledgement of a tick never sent still prunes what is older.
        assert_eq!(p.ack_through(Tick(100)), 1);
        assert!(p.is_empty());
        // A stale, smaller acknowledgement removes nothing.
        p.push(step(101)).unwrap();
        assert_eq!(p.ack_through(Tick(50)), 0);
        assert_eq!(ticks(&p), vec![101]);
    }

    #[test]
    fn ticks_stay_increasing_after_acknowledgement_empties_the_buffer() {
        let mut p: PendingInputs<u8> = PendingInputs::default();
        p.push(step(9)).unwrap();
        p.ack_through(Tick(9));
        assert!(matches!(
            p.push(step(9)),
            Err(PushError::NotIncreasing { .. })
        ));
    }

    #[test]
    fn rs4_full_buffer_refuses_and_keeps_everything() {
        let mut p: PendingInputs<u8> = PendingInputs::with_capacity(3);
        for t in 1..=3 {
            p.push(step(t)).unwrap();
        }
        assert!(p.is_full());
        assert_eq!(p.push(step(4)), Err(PushError::Full { capacity: 3 }));
        assert_eq!(ticks(&p), vec![1, 2, 3], "nothing evicted");
        // Room again after an acknowledgement; tick 4 was refused, never recorded.
        p.ack_through(Tick(1));
        p.push(step(4)).unwrap();
        assert_eq!(ticks(&p), vec![2, 3, 4]);
    }
}
