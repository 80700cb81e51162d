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
//! - A state older than an event already applied does not undo it: the
//!   event is applied to it again until a state at or after the event's
//!   tick arrives, so what an event did never goes back.
//! - Players missing from a full snapshot have left and are forgotten.

use std::collections::VecDeque;

use crate::client::idmap::IdMap;
use crate::shared::game::{Applied, Replicated};
use crate::shared::state::PlayerId;
use crate::shared::tick::Tick;

/// How many recent events are remembered to refuse duplicates.
const REMEMBERED_EVENTS: usize = 256;

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
    /// The newest event applied per target.
    results: IdMap<S::Event>,
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
        match self.results.get(id) {
            Some(event) if event.tick() > tick => state.apply(event),
            Some(_) => {
                self.results.remove(id);
            }
            None => {}
        }
        self.players.insert(id, (tick, state));
        self.stats.accepted += 1;
        Ok(())
    }

    /// Applies an event to its target once; `true` if it changed the
    /// owned state (a copy seen before, an event the owned state already
    /// includes and one for an unknown player change nothing).
    pub fn apply(&mut self, event: &S::Event) -> bool {
        let key = event.key();
        let target = event.target();
        let owned = self.players.get_mut(target);
        let fresh = !self.seen_events.contains(&key);
        let applies = fresh && owned.as_ref().is_some_and(|(tick, _)| event.tick() > *tick);
        if fresh {
            if self.seen_events.len() >= REMEMBERED_EVENTS {
                self.seen_events.pop_front();
            }
            self.seen_events.push_back(key);
        }
        match owned {
            Some((_, state)) if applies => {
                let newer = self
                    .results
                    .get(target)
                    .is_none_or(|result| event.tick() >= result.tick());
                if newer {
                    self.results.insert(target, event.clone());
                }
                state.apply(event);
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
