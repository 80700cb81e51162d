//! Things: what a world holds that is not a player (pellets, pickups,
//! projectiles the server owns), replicated to every binary client in the
//! same snapshot sets as players, so that interest, the byte budget,
//! deltas and compact removals serve them as they serve players.
//!
//! A thing has an id of its own type ([`ThingId`], from
//! [`FIRST_THING`](crate::FIRST_THING) on the wire, so a snapshot set in
//! id order lists players first), where it is (for interest) and
//! what travels (the game's [`Networked::Entity`]). A game keeps its
//! things in a [`Things`] in its world, spawns and despawns them in bulk
//! in its step, and hands them to the room through
//! [`ServerGame::things`](crate::ServerGame::things).
//!
//! [`Networked::Entity`]: crate::Networked::Entity

use glam::Vec2;

use crate::shared::state::ThingId;

/// One thing: its id, where it is and what travels of it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Thing<E> {
    /// Its id.
    pub id: ThingId,
    /// Where it is, for interest.
    pub at: Vec2,
    /// What a snapshot carries of it.
    pub entity: E,
}

/// A world's things, in id order: spawned with increasing ids, despawned
/// one by one or in bulk, each in time proportional to the things held.
#[derive(Clone, Debug, PartialEq)]
pub struct Things<E> {
    items: Vec<Thing<E>>,
    /// The next id to give; `None`: the range is spent.
    next: Option<ThingId>,
}

impl<E> Default for Things<E> {
    fn default() -> Self {
        Things {
            items: Vec::new(),
            next: Some(ThingId::FIRST),
        }
    }
}

impl<E> Things<E> {
    /// No things.
    pub fn new() -> Self {
        Self::default()
    }

    /// Spawns a thing at `at`; its id.
    ///
    /// Ids only grow; when the range runs out (after 2^31 spawns) every
    /// thing held is numbered again from [`ThingId::FIRST`], which clients
    /// see as every thing despawned and spawned anew, once.
    pub fn spawn(&mut self, at: Vec2, entity: E) -> ThingId {
        let id = match self.next {
            Some(id) => id,
            None => self.renumber(),
        };
        self.next = id.next();
        self.items.push(Thing { id, at, entity });
        id
    }

    /// Spawns every `(at, entity)` of `many`, in order.
    pub fn spawn_many(&mut self, many: impl IntoIterator<Item = (Vec2, E)>) {
        for (at, entity) in many {
            self.spawn(at, entity);
        }
    }

    /// Despawns thing `id`; what it was, if held.
    pub fn despawn(&mut self, id: ThingId) -> Option<Thing<E>> {
        let at = self.items.binary_search_by_key(&id, |t| t.id).ok()?;
        Some(self.items.remove(at))
    }

    /// Despawns every thing `gone` says goes, in one pass; how many went.
    pub fn despawn_where(&mut self, mut gone: impl FnMut(&Thing<E>) -> bool) -> usize {
        let before = self.items.len();
        self.items.retain(|t| !gone(t));
        before - self.items.len()
    }

    /// Thing `id`, if held.
    pub fn get(&self, id: ThingId) -> Option<&Thing<E>> {
        let at = self.items.binary_search_by_key(&id, |t| t.id).ok()?;
        self.items.get(at)
    }

    /// Thing `id` to change in place (its id stays), if held.
    pub fn get_mut(&mut self, id: ThingId) -> Option<&mut Thing<E>> {
        let at = self.items.binary_search_by_key(&id, |t| t.id).ok()?;
        self.items.get_mut(at)
    }

    /// Every thing, in id order.
    pub fn as_slice(&self) -> &[Thing<E>] {
        &self.items
    }

    /// How many things are held.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether no thing is held.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Numbers every thing held again from the first id; the id to give
    /// next. (At most 2^31 things are held, so they fit.)
    fn renumber(&mut self) -> ThingId {
        let mut next = ThingId::FIRST;
        for thing in &mut self.items {
            thing.id = next;
            next = next.next().unwrap_or(next);
        }
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn things_keep_id_order_through_spawns_and_bulk_despawns() {
        let mut things = Things::new();
        things.spawn_many((0..10).map(|i| (Vec2::new(i as f32, 0.0), i)));
        assert_eq!(things.len(), 10);
        assert!(things.as_slice().iter().all(|t| t.id.wire().is_thing()));
        assert_eq!(things.despawn_where(|t| t.entity % 2 == 0), 5);
        let first = things.as_slice()[0].id;
        assert_eq!(things.despawn(first).map(|t| t.entity), Some(1));
        assert_eq!(things.despawn(first), None, "once");
        let late = things.spawn(Vec2::ZERO, 99);
        let ids: Vec<ThingId> = things.as_slice().iter().map(|t| t.id).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
        assert_eq!(things.get(late).map(|t| t.entity), Some(99));
        if let Some(t) = things.get_mut(late) {
            t.at = Vec2::ONE;
        }
        assert_eq!(things.get(late).map(|t| t.at), Some(Vec2::ONE));
        assert_eq!(crate::PlayerId(7).thing(), None);
        assert_eq!(late.wire().thing(), Some(late));
    }

    #[test]
    fn an_exhausted_range_numbers_the_things_again_in_order() {
        let mut things = Things::new();
        things.spawn(Vec2::ZERO, 'a');
        things.spawn(Vec2::ZERO, 'b');
        things.next = ThingId::nth(u32::MAX - crate::FIRST_THING);
        let last = things.spawn(Vec2::ZERO, 'z');
        assert_eq!(last.wire(), crate::PlayerId(u32::MAX));
        assert_eq!(things.despawn(last).map(|t| t.entity), Some('z'));
        let c = things.spawn(Vec2::ZERO, 'c');
        let ids: Vec<(u32, char)> = things
            .as_slice()
            .iter()
            .map(|t| (t.id.index(), t.entity))
            .collect();
        assert_eq!(ids, [(0, 'a'), (1, 'b'), (2, 'c')]);
        assert_eq!(Some(c), ThingId::nth(2));
    }
}
