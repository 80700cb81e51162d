//! The client's owned authoritative state: one [`PlayerState`] per known
//! player (CAPS-1).
//!
//! Rendering and the HUD read authoritative position, rotation, HP and
//! velocity from this [`Authority`] and from nowhere else. The rules:
//! - A `PlayerState` is accepted only if its server tick is newer than the one
//!   already owned for that player; an older or equal one never overwrites the
//!   owned snapshot (and the caller must not feed it to interpolation either,
//!   CAPS-6). Refusals are counted.
//! - A [`CombatEvent`] sets its target's HP (and death) until the next
//!   accepted `PlayerState` refreshes the full state (CAPS-8). An event is
//!   applied at most once, however often it arrives, and an event no newer
//!   than the owned snapshot changes nothing: that snapshot already holds it.
//! - A state older than a combat result already applied does not undo it:
//!   its HP (and death) give way to the result's until a state at or after
//!   the result's tick arrives, so HP never goes back.
//! - Players missing from a full snapshot have left and are forgotten.

use std::collections::VecDeque;

use crate::client::idmap::IdMap;

use crate::shared::game::{Applied, Replicated};
use crate::tanks::CombatEvent;

use crate::shared::state::PlayerId;
use crate::shared::state::PlayerState;
use crate::shared::tick::Tick;

/// How many recent combat events are remembered to refuse duplicates.
const REMEMBERED_EVENTS: usize = 256;

/// Why a `PlayerState` was not accepted.
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
    /// Combat events applied.
    pub events_applied: u64,
    /// Combat events ignored: duplicates, or already in the owned snapshot.
    pub events_ignored: u64,
}

/// One owned authoritative state per known player, of a game whose
/// players replicate as `S` (the tank game's [`PlayerState`] by default).
#[derive(Clone, Debug)]
pub struct Authority<S: Replicated = PlayerState> {
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

/// The tank game's calls: a [`PlayerState`] carries its player and tick.
impl Authority {
    /// Takes `state` as the owned snapshot of its player if it is newer.
    ///
    /// # Errors
    /// As [`Authority::insert`].
    pub fn accept(&mut self, state: &PlayerState) -> Result<(), Refused> {
        self.insert(state.id, state.tick, state)
    }

    /// Applies a combat result to its target; `true` if it changed the
    /// owned state.
    pub fn apply_combat(&mut self, event: &CombatEvent) -> bool {
        self.apply(event)
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
        self.players.retain(|id, _| present.contains(&id));
        self.results.retain(|id, _| present.contains(&id));
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
    use crate::shared::sim::Pose;
    use glam::Vec2;

    fn state(id: u32, tick: u32, x: f32, hp: u16) -> PlayerState {
        PlayerState {
            id: PlayerId(id),
            hp,
            velocity: Some(Vec2::new(1.0, 0.0)),
            ..PlayerState::at(Tick(tick), None, Pose::new(Vec2::new(x, 50.0), 0.5))
        }
    }

    fn hit(tick: u32, target: u32, hp: u16, killed: bool) -> CombatEvent {
        CombatEvent {
            server_tick: Tick(tick),
            attacker: PlayerId(9),
            target: PlayerId(target),
            damage: 20,
            hp,
            killed,
            from: Vec2::ZERO,
            to: Vec2::ONE,
        }
    }

    #[test]
    fn caps1_newer_state_replaces_the_owned_snapshot() {
        let mut authority = Authority::default();
        authority.accept(&state(1, 10, 100.0, 100)).unwrap();
        let newer = state(1, 11, 110.0, 80);
        authority.accept(&newer).unwrap();
        let owned = authority.get(PlayerId(1)).unwrap();
        assert_eq!(
            owned, &newer,
            "position, rotation, hp and velocity all from it"
        );
        assert_eq!(authority.stats().accepted, 2);
    }

    #[test]
    fn caps6_stale_state_never_overwrites() {
        let mut authority = Authority::default();
        authority.accept(&state(1, 10, 100.0, 100)).unwrap();
        assert!(matches!(
            authority.accept(&state(1, 9, 0.0, 5)),
            Err(Refused::Stale { .. })
        ));
        assert!(authority.accept(&state(1, 10, 0.0, 5)).is_err());
        assert_eq!(authority.get(PlayerId(1)).unwrap().position.x, 100.0);
        assert_eq!(authority.stats().stale, 2);
        // Another player's older tick is its own business.
        authority.accept(&state(2, 3, 0.0, 100)).unwrap();
    }

    #[test]
    fn caps8_combat_event_updates_hp_until_the_next_state() {
        let mut authority = Authority::default();
        authority.accept(&state(1, 10, 100.0, 100)).unwrap();
        assert!(authority.apply_combat(&hit(11, 1, 80, false)));
        assert_eq!(authority.get(PlayerId(1)).unwrap().hp, 80);
        // Arriving twice applies once.
        assert!(!authority.apply_combat(&hit(11, 1, 80, false)));
        assert_eq!(authority.stats().events_applied, 1);
        // A kill marks the player dead.
        assert!(authority.apply_combat(&hit(12, 1, 0, true)));
        assert!(!authority.get(PlayerId(1)).unwrap().alive);
        // A later full state refreshes everything.
        authority.accept(&state(1, 80, 300.0, 100)).unwrap();
        let owned = authority.get(PlayerId(1)).unwrap();
        assert!(owned.alive && owned.hp == 100);
        // An event the owned snapshot already includes changes nothing.
        assert!(!authority.apply_combat(&hit(80, 1, 60, false)));
        assert_eq!(authority.get(PlayerId(1)).unwrap().hp, 100);
        // An event for an unknown player is ignored.
        assert!(!authority.apply_combat(&hit(90, 7, 60, false)));
    }

    #[test]
    fn an_older_state_never_undoes_a_combat_result() {
        let mut a = Authority::default();
        a.accept(&state(2, 103, 0.0, 80)).unwrap();
        assert!(a.apply_combat(&hit(105, 2, 60, false)));
        // Tick 104 was sent before the hit: newer than the owned 103, but
        // its HP must not go back to 80.
        a.accept(&state(2, 104, 5.0, 80)).unwrap();
        assert_eq!(a.get(PlayerId(2)).unwrap().hp, 60);
        assert_eq!(
            a.get(PlayerId(2)).unwrap().position.x,
            5.0,
            "the rest is taken"
        );
        // From the result's tick on, states are the truth again.
        a.accept(&state(2, 106, 6.0, 100)).unwrap();
        assert_eq!(a.get(PlayerId(2)).unwrap().hp, 100);
    }

    #[test]
    fn players_missing_from_a_snapshot_are_forgotten() {
        let mut authority = Authority::default();
        for id in 1..=3 {
            authority.accept(&state(id, 1, 0.0, 100)).unwrap();
        }
        assert_eq!(authority.retain_present(&[PlayerId(3), PlayerId(1)]), 1);
        assert!(authority.get(PlayerId(2)).is_none());
        assert_eq!(authority.len(), 2);
    }

    #[test]
    fn non_finite_states_are_refused() {
        let mut authority = Authority::default();
        assert!(authority.accept(&state(1, 1, f32::NAN, 100)).is_err());
        assert!(authority.is_empty());
        assert_eq!(authority.stats().invalid, 1);
    }
}
