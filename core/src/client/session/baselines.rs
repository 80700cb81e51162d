//! The binary snapshots a session keeps so the server can build deltas on
//! them: the newest [`KEPT_BASELINES`] decoded sets, and the tick of the
//! newest one, which every input message acknowledges.

use std::collections::VecDeque;

use crate::shared::delta::Entity;
use crate::shared::tick::Tick;

/// How many decoded snapshots are kept, as many as the server may build on.
pub const KEPT_BASELINES: usize = 32;

/// Decoded snapshot sets by tick, oldest first.
#[derive(Clone, Debug)]
pub(crate) struct Baselines<F> {
    frames: VecDeque<(Tick, Vec<Entity<F>>)>,
    newest: Option<Tick>,
}

impl<F> Default for Baselines<F> {
    fn default() -> Self {
        Baselines {
            frames: VecDeque::new(),
            newest: None,
        }
    }
}

impl<F> Baselines<F> {
    /// The set of the snapshot of `tick`, if kept.
    pub(crate) fn get(&self, tick: Tick) -> Option<&[Entity<F>]> {
        self.frames
            .iter()
            .find(|(t, _)| *t == tick)
            .map(|(_, set)| &set[..])
    }

    /// Keeps the set of the snapshot of `tick` (a tick kept already is not
    /// replaced); the oldest goes beyond [`KEPT_BASELINES`].
    pub(crate) fn keep(&mut self, tick: Tick, set: Vec<Entity<F>>) {
        if self.get(tick).is_some() {
            return;
        }
        if self.frames.len() >= KEPT_BASELINES {
            self.frames.pop_front();
        }
        let at = self.frames.partition_point(|(t, _)| *t < tick);
        self.frames.insert(at, (tick, set));
        self.newest = self.newest.max(Some(tick));
    }

    /// The tick to acknowledge: the newest snapshot decoded.
    pub(crate) fn ack(&self) -> Option<Tick> {
        self.newest
    }

    /// Forgets everything (a new connection).
    pub(crate) fn clear(&mut self) {
        *self = Baselines::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_newest_in_tick_order_and_acks_the_newest() {
        let mut kept = Baselines::<()>::default();
        assert_eq!(kept.ack(), None);
        kept.keep(Tick(5), Vec::new());
        kept.keep(Tick(3), Vec::new());
        assert_eq!(
            kept.ack(),
            Some(Tick(5)),
            "a late older frame is kept, not acked"
        );
        assert!(kept.get(Tick(3)).is_some());
        for t in 10..10 + KEPT_BASELINES as u32 {
            kept.keep(Tick(t), Vec::new());
        }
        assert!(kept.get(Tick(3)).is_none() && kept.get(Tick(5)).is_none());
        assert_eq!(kept.ack(), Some(Tick(9 + KEPT_BASELINES as u32)));
        kept.clear();
        assert_eq!(kept.ack(), None);
    }
}
