//! A small map keyed by player id: a vector kept sorted by id, found by
//! binary search. The client keeps a few of these (names, remotes, owned
//! states); next to a `BTreeMap` it iterates in the same id order (what is
//! drawn and hashed does not change) and costs the page far less code,
//! one plain vector per value type instead of a tree's nodes.

use crate::shared::state::PlayerId;

/// Values by player id, in id order.
#[derive(Clone, Debug)]
pub struct IdMap<V> {
    entries: Vec<(PlayerId, V)>,
}

impl<V> Default for IdMap<V> {
    fn default() -> Self {
        IdMap {
            entries: Vec::new(),
        }
    }
}

impl<V> IdMap<V> {
    /// An empty map.
    pub fn new() -> IdMap<V> {
        IdMap::default()
    }

    fn find(&self, id: PlayerId) -> Result<usize, usize> {
        self.entries.binary_search_by_key(&id, |(k, _)| *k)
    }

    /// The value of `id`.
    pub fn get(&self, id: PlayerId) -> Option<&V> {
        self.find(id).ok().map(|i| &self.entries[i].1)
    }

    /// The value of `id`, to change.
    pub fn get_mut(&mut self, id: PlayerId) -> Option<&mut V> {
        self.find(id).ok().map(|i| &mut self.entries[i].1)
    }

    /// Sets the value of `id`; the value it had.
    pub fn insert(&mut self, id: PlayerId, value: V) -> Option<V> {
        match self.find(id) {
            Ok(i) => Some(std::mem::replace(&mut self.entries[i].1, value)),
            Err(i) => {
                self.entries.insert(i, (id, value));
                None
            }
        }
    }

    /// The value of `id`, made by `make` if there was none.
    pub fn get_or_insert_with(&mut self, id: PlayerId, make: impl FnOnce() -> V) -> &mut V {
        let i = match self.find(id) {
            Ok(i) => i,
            Err(i) => {
                self.entries.insert(i, (id, make()));
                i
            }
        };
        &mut self.entries[i].1
    }

    /// Takes the value of `id` out.
    pub fn remove(&mut self, id: PlayerId) -> Option<V> {
        self.find(id).ok().map(|i| self.entries.remove(i).1)
    }

    /// Keeps the entries `keep` says to keep.
    pub fn retain(&mut self, mut keep: impl FnMut(PlayerId, &V) -> bool) {
        self.entries.retain(|(id, v)| keep(*id, v));
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// Every entry, in id order.
    pub fn iter(&self) -> impl Iterator<Item = (PlayerId, &V)> {
        self.entries.iter().map(|(id, v)| (*id, v))
    }

    /// Every value, in id order.
    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.entries.iter().map(|(_, v)| v)
    }

    /// Every value, in id order, to change.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.entries.iter_mut().map(|(_, v)| v)
    }

    /// How many entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl<V> FromIterator<(PlayerId, V)> for IdMap<V> {
    /// The entries of `iter`; of two with one id, the later.
    fn from_iter<I: IntoIterator<Item = (PlayerId, V)>>(iter: I) -> IdMap<V> {
        let mut map = IdMap::new();
        for (id, v) in iter {
            map.insert(id, v);
        }
        map
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_keeps_id_order_and_one_value_per_id() {
        let mut m: IdMap<&str> = [(PlayerId(5), "e"), (PlayerId(1), "a"), (PlayerId(3), "c")]
            .into_iter()
            .collect();
        assert_eq!(m.insert(PlayerId(3), "C"), Some("c"));
        assert_eq!(m.insert(PlayerId(2), "b"), None);
        let ids: Vec<u32> = m.iter().map(|(id, _)| id.0).collect();
        assert_eq!(ids, [1, 2, 3, 5]);
        assert_eq!(m.get(PlayerId(3)), Some(&"C"));
        *m.get_or_insert_with(PlayerId(4), || "d") = "D";
        assert_eq!(m.get(PlayerId(4)), Some(&"D"));
        assert_eq!(m.remove(PlayerId(1)), Some("a"));
        m.retain(|id, _| id.0 % 2 == 0);
        assert_eq!(m.values().copied().collect::<Vec<_>>(), ["b", "D"]);
        assert_eq!((m.len(), m.get(PlayerId(9))), (2, None));
        m.clear();
        assert!(m.is_empty());
    }
}
