//! The client's owned authoritative state: one replicated state per known
//! player (CAPS-1).
//!
//! Rendering and the HUD read the authoritative state of every player from
//! this [`Authority`] and from nowhere else. The rules:
//! - A state is accepted only if its server tick is newer than the one
//!   already owned for that player; an older or equal one never overwrites the
//!   owned snapshot (and the caller must not feed it to interpolation either,
//!   CAPS-6). Refusals are counted.
//! - An event ([`Replicated::Event`]) changes its target's state until the
//!   next accepted state refreshes it (CAPS-8). An event is applied at most
//!   once, however often it arrives, and an event no newer than the owned
//!   snapshot changes nothing: that snapshot already holds it.
//! - A state older than an event already applied does not undo it: every
//!   event applied after the state's tick is applied to it again, in tick
//!   order, until a state at or after the event's tick arrives, so what an
//!   event did never goes back. That is right for an event that sets a
//!   value (hit points: the newest wins) and for one that adds to it (a
//!   blob grew: each counts once). At most [`KEPT_EVENTS`] per player are
//!   kept for this; older ones are dropped first.
//! - Players missing from a full snapshot have left and are forgotten.

use std::collections::VecDeque;

use crate::client::idmap::IdMap;
use crate::shared::game::{Applied, Replicated};
use crate::shared::state::PlayerId;
use crate::shared::tick::Tick;

/// How many recent events are remembered to refuse duplicates.
const REMEMBERED_EVENTS: usize = 256;

/// How many applied events are kept per player to apply again to an
/// older state that arrives after them.
pub const KEPT_EVENTS: usize = 32;

/// Why a state was not accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// Not newer than the owned snapshot.
    #[error("stale state for player {id}: tick {got}, owned {owned}")]
    Stale {
        /// Whose.
        id: PlayerId,
        /// The owned snapshot's tick.
        owned: Tick,
        /// The refused state's tick.
        got: Tick,
    },
    /// NaN or infinite numbers.
    #[error("state for player {0} has non-finite numbers")]
    NonFinite(PlayerId),
}

/// Counters of the roster.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AuthorityStats {
    /// States accepted.
    pub accepted: u64,
    /// States refused as stale.
    pub stale: u64,
    /// States refused as non-finite.
    pub invalid: u64,
    /// Events applied.
    pub events_applied: u64,
    /// Events ignored: duplicates, or already in the owned snapshot.
    pub events_ignored: u64,
}

/// One owned authoritative state per known player, of a game whose
/// players replicate as `S`.
#[derive(Clone, Debug)]
pub struct Authority<S: Replicated> {
    players: IdMap<(Tick, S)>,
    seen_events: VecDeque<<S::Event as Applied>::Key>,
    /// The events applied per target since its owned state, in tick
    /// order (at most [`KEPT_EVENTS`]).
    results: IdMap<Vec<S::Event>>,
    stats: AuthorityStats,
}

impl<S: Replicated> Default for Authority<S> {
    fn default() -> Self {
        Authority {
            players: IdMap::new(),
            seen_events: VecDeque::new(),
            results: IdMap::new(),
            stats: AuthorityStats::default(),
        }
    }
}

impl<S: Replicated> Authority<S> {
    /// Takes `state`, true at server tick `tick`, as the owned state of
    /// player `id` if it is newer than the one owned; an event applied
    /// after `tick` is applied to it again, so that it is never undone.
    ///
    /// # Errors
    /// [`Refused`] if it is not newer or not valid; nothing changes then.
    pub fn insert(&mut self, id: PlayerId, tick: Tick, state: &S) -> Result<(), Refused> {
        if !state.is_valid() {
            self.stats.invalid += 1;
            return Err(Refused::NonFinite(id));
        }
        if let Some(&(owned, _)) = self.players.get(id) {
            if tick <= owned {
                self.stats.stale += 1;
                return Err(Refused::Stale {
                    id,
                    owned,
                    got: tick,
                });
            }
        }
        let mut state = *state;
        if let Some(applied) = self.results.get_mut(id) {
            // What the state already holds goes; the rest is applied to it.
            applied.retain(|event| event.tick() > tick);
            for event in applied.iter() {
                state.apply(event);
            }
            if applied.is_empty() {
                self.results.remove(id);
            }
        }
        self.players.insert(id, (tick, state));
        self.stats.accepted += 1;
        Ok(())
    }

    /// Applies an event to its target once; `true` if it changed the
    /// owned state (a copy seen before, an event the owned state already
    /// includes and one for an unknown player change nothing), or, for an
    /// event of the world's, the first time it is seen.
    pub fn apply(&mut self, event: &S::Event) -> bool {
        let key = event.key();
        let fresh = !self.seen_events.contains(&key);
        if fresh {
            if self.seen_events.len() >= REMEMBERED_EVENTS {
                self.seen_events.pop_front();
            }
            self.seen_events.push_back(key);
        }
        let Some(target) = event.target().id() else {
            // The world's: no state to change, told once.
            if fresh {
                self.stats.events_applied += 1;
            } else {
                self.stats.events_ignored += 1;
            }
            return fresh;
        };
        match self.players.get_mut(target) {
            Some((tick, state)) if fresh && event.tick() > *tick => {
                state.apply(event);
                let applied = self.results.get_or_insert_with(target, Vec::new);
                // In tick order; one of the same tick after those before.
                let at = applied.partition_point(|e| e.tick() <= event.tick());
                applied.insert(at, event.clone());
                if applied.len() > KEPT_EVENTS {
                    applied.remove(0);
                }
                self.stats.events_applied += 1;
                true
            }
            _ => {
                self.stats.events_ignored += 1;
                false
            }
        }
    }

    /// Forgets every player not in `present` (a full snapshot's ids, sorted
    /// or not); returns how many were forgotten.
    pub fn retain_present(&mut self, present: &[PlayerId]) -> usize {
        let before = self.players.len();
        // Thousands of things in a snapshot: look them up, never scan.
        let mut sorted = present.to_vec();
        sorted.sort_unstable();
        let present = |id: PlayerId| sorted.binary_search(&id).is_ok();
        self.players.retain(|id, _| present(id));
        self.results.retain(|id, _| present(id));
        before - self.players.len()
    }

    /// The owned state of `id`.
    pub fn get(&self, id: PlayerId) -> Option<&S> {
        self.players.get(id).map(|(_, s)| s)
    }

    /// Every owned state, in id order.
    pub fn iter(&self) -> impl Iterator<Item = &S> {
        self.players.values().map(|(_, s)| s)
    }

    /// Every owned state with its player, in id order.
    pub fn iter_ids(&self) -> impl Iterator<Item = (PlayerId, &S)> {
        self.players.iter().map(|(id, (_, s))| (id, s))
    }

    /// How many players are known.
    pub fn len(&self) -> usize {
        self.players.len()
    }

    /// Whether no player is known.
    pub fn is_empty(&self) -> bool {
        self.players.is_empty()
    }

    /// The counters.
    pub fn stats(&self) -> &AuthorityStats {
        &self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shared::game::Target;

    /// A counter with two kinds of events: one adds to it, one sets it.
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Counter(i32);

    #[derive(Clone, Debug, PartialEq)]
    enum Change {
        Add { tick: Tick, by: i32, key: u32 },
        Set { tick: Tick, to: i32, key: u32 },
    }

    impl Applied for Change {
        type Key = u32;
        fn key(&self) -> u32 {
            match *self {
                Change::Add { key, .. } | Change::Set { key, .. } => key,
            }
        }
        fn tick(&self) -> Tick {
            match *self {
                Change::Add { tick, .. } | Change::Set { tick, .. } => tick,
            }
        }
        fn target(&self) -> Target {
            Target::Player(PlayerId(1))
        }
    }

    impl Replicated for Counter {
        type Event = Change;
        fn is_valid(&self) -> bool {
            true
        }
        fn apply(&mut self, change: &Change) {
            match *change {
                Change::Add { by, .. } => self.0 += by,
                Change::Set { to, .. } => self.0 = to,
            }
        }
    }

    const ME: PlayerId = PlayerId(1);

    fn now(a: &Authority<Counter>) -> i32 {
        a.get(ME).map_or(i32::MIN, |c| c.0)
    }

    /// Regression: only the newest event was applied again to an older
    /// state arriving late, so of two additions the first was lost.
    #[test]
    fn a_late_older_state_gets_every_addition_after_it_once() {
        let mut a = Authority::default();
        a.insert(ME, Tick(10), &Counter(10)).expect("first");
        for (tick, by, key) in [(12, 1, 1), (13, 2, 2)] {
            assert!(a.apply(&Change::Add {
                tick: Tick(tick),
                by,
                key
            }));
        }
        assert_eq!(now(&a), 13);
        // A state of tick 11, delayed: it holds neither addition.
        a.insert(ME, Tick(11), &Counter(10)).expect("newer than 10");
        assert_eq!(now(&a), 13, "both additions, once each");
        // Tick 12's state holds the first: only the second is added.
        a.insert(ME, Tick(12), &Counter(11)).expect("newer");
        assert_eq!(now(&a), 13);
        // A copy of an event already applied changes nothing.
        assert!(!a.apply(&Change::Add {
            tick: Tick(13),
            by: 2,
            key: 2
        }));
        // Tick 13's holds both: taken as it is, nothing kept to apply.
        a.insert(ME, Tick(13), &Counter(13)).expect("newer");
        a.insert(ME, Tick(14), &Counter(20)).expect("newer");
        assert_eq!(now(&a), 20);
    }

    #[test]
    fn a_late_older_state_gets_the_newest_of_the_values_set_after_it() {
        let mut a = Authority::default();
        a.insert(ME, Tick(10), &Counter(100)).expect("first");
        // Arriving out of their order: tick 13's, then tick 12's.
        assert!(a.apply(&Change::Set {
            tick: Tick(13),
            to: 50,
            key: 1
        }));
        assert!(a.apply(&Change::Set {
            tick: Tick(12),
            to: 80,
            key: 2
        }));
        a.insert(ME, Tick(11), &Counter(100))
            .expect("newer than 10");
        assert_eq!(now(&a), 50, "the value set last in the game's time");
        // Mixed: an addition after a value set, both after the state.
        assert!(a.apply(&Change::Add {
            tick: Tick(14),
            by: 5,
            key: 3
        }));
        a.insert(ME, Tick(12), &Counter(80)).expect("newer");
        assert_eq!(now(&a), 55);
    }
}

#[cfg(test)]
mod world_tests {
    use super::*;
    use crate::shared::game::Target;

    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Score(u32);

    /// A goal: the world's, no player's.
    #[derive(Clone, Debug, PartialEq)]
    struct Goal(u32);

    impl Applied for Goal {
        type Key = u32;
        fn key(&self) -> u32 {
            self.0
        }
        fn tick(&self) -> Tick {
            Tick(self.0)
        }
        fn target(&self) -> Target {
            Target::World
        }
    }

    impl Replicated for Score {
        type Event = Goal;
        fn is_valid(&self) -> bool {
            true
        }
        fn apply(&mut self, _: &Goal) {
            self.0 += 1;
        }
    }

    #[test]
    fn a_world_event_is_taken_once_and_changes_no_players_state() {
        let mut a = Authority::default();
        a.insert(PlayerId(1), Tick(1), &Score(0)).expect("first");
        assert!(a.apply(&Goal(5)), "new: told");
        assert!(!a.apply(&Goal(5)), "a copy: not told again");
        assert_eq!(a.get(PlayerId(1)), Some(&Score(0)));
        assert_eq!((a.stats().events_applied, a.stats().events_ignored), (1, 1));
    }
}
