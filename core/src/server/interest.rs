//! What each binary client is sent: the players in its area of interest,
//! within a byte budget, as a delta against the snapshot it acknowledged.
//!
//! - **Area of interest.** With an interest radius, a client sees the
//!   players within it, keeps seeing them until they are a margin beyond it
//!   (hysteresis, so a player on the border does not flicker), and always
//!   sees itself and anyone it hit or was hit by in the last
//!   [`InterestConfig::combat_memory_ticks`]. Found through a uniform grid
//!   of radius-sized cells.
//! - **Budget.** A delta frame fits [`InterestConfig::budget`] bytes. When
//!   the changed players in view do not fit, a priority accumulator picks
//!   them: each tick a player is not refreshed its priority grows, faster
//!   when near and fast; a refreshed one starts from zero; one not refreshed
//!   for [`InterestConfig::max_stale_ticks`] goes first whatever the budget,
//!   so nobody in view starves. A player the prediction already gets right
//!   costs nothing and counts as refreshed.
//! - **Baselines.** Each viewer keeps the frames sent since its
//!   acknowledgement (at most [`KEPT_FRAMES`]); a frame that was the room's
//!   whole truth is kept as a mark only ([`Sent::complete`]), its set read
//!   from the room's own ring of the last [`KEPT_FRAMES`] ticks.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use glam::Vec2;

use crate::shared::compact::{Quantised, HEAD_BYTES};
use crate::shared::config::SimConfig;
use crate::shared::delta::{self, Entity};
use crate::shared::protocol::CombatEvent;
use crate::shared::state::{PlayerId, PlayerState};
use crate::shared::tick::Tick;

/// How many sent frames (and room ticks) are kept to build deltas on.
pub const KEPT_FRAMES: usize = 32;

/// How interest and the byte budget are set.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InterestConfig {
    /// Players farther than this are not sent; `None`: everyone is.
    pub radius: Option<f32>,
    /// How far beyond the radius a player seen stays seen.
    pub margin: f32,
    /// Bytes a delta frame may take (one datagram by default).
    pub budget: usize,
    /// A player in view is refreshed at least this often, budget or not.
    pub max_stale_ticks: u32,
    /// How long a hit keeps its shooter and target in each other's view.
    pub combat_memory_ticks: u32,
}

impl Default for InterestConfig {
    fn default() -> Self {
        InterestConfig {
            radius: None,
            margin: 100.0,
            budget: 1200,
            max_stale_ticks: 5,
            combat_memory_ticks: 40,
        }
    }
}

/// A frame sent to a viewer.
#[derive(Clone, Debug)]
pub(crate) struct Sent {
    pub(crate) tick: Tick,
    /// The set the frame stands for; `None` when it was the room's whole
    /// truth at that tick ([`Sent::complete`]).
    set: Option<Vec<Entity>>,
}

impl Sent {
    /// A frame that was the room's whole truth: only its tick is kept.
    pub(crate) fn complete(tick: Tick) -> Sent {
        Sent { tick, set: None }
    }

    /// A frame of a partial set.
    pub(crate) fn partial(tick: Tick, set: Vec<Entity>) -> Sent {
        Sent {
            tick,
            set: Some(set),
        }
    }

    pub(crate) fn is_complete(&self) -> bool {
        self.set.is_none()
    }
}

/// What the room remembers of one binary client that acknowledges.
#[derive(Clone, Debug, Default)]
pub(crate) struct Viewer {
    acked: Option<Tick>,
    sent: VecDeque<Sent>,
    in_view: BTreeSet<PlayerId>,
    /// Accumulated priority and the last tick refreshed, per player in view.
    priority: BTreeMap<PlayerId, (f32, Tick)>,
    /// Players this one hit or was hit by, until a tick.
    partners: BTreeMap<PlayerId, Tick>,
    /// When the last complete frame refreshed everyone at once.
    fresh_at: Option<Tick>,
}

impl Viewer {
    /// The client decoded the snapshot of `tick` (never later than `now`).
    pub(crate) fn acknowledge(&mut self, tick: Tick, now: Tick) {
        if tick > now || self.acked.is_some_and(|a| tick <= a) {
            return;
        }
        self.acked = Some(tick);
        while self.sent.front().is_some_and(|s| s.tick < tick) {
            self.sent.pop_front();
        }
    }

    /// The frame to build on: the acknowledged one, if still kept.
    pub(crate) fn baseline(&self) -> Option<&Sent> {
        let acked = self.acked?;
        self.sent.iter().find(|s| s.tick == acked)
    }

    /// Remembers a frame sent.
    pub(crate) fn record(&mut self, sent: Sent) {
        if self.sent.len() >= KEPT_FRAMES {
            self.sent.pop_front();
        }
        self.sent.push_back(sent);
    }

    /// A frame refreshed every player in view at `tick`.
    pub(crate) fn refreshed_all(&mut self, tick: Tick) {
        self.priority.clear();
        self.fresh_at = Some(tick);
    }

    /// A player's accumulated priority and the tick it was last refreshed.
    fn standing(&self, id: PlayerId, now: Tick) -> (f32, Tick) {
        self.priority
            .get(&id)
            .copied()
            .unwrap_or((0.0, self.fresh_at.unwrap_or(now)))
    }

    /// Remembers who `me` fought this tick.
    pub(crate) fn note_combat(&mut self, me: PlayerId, events: &[CombatEvent], until: Tick) {
        for e in events {
            let other = if e.attacker == me {
                e.target
            } else if e.target == me {
                e.attacker
            } else {
                continue;
            };
            self.partners.insert(other, until);
        }
    }
}

/// The room's truth at recent ticks, quantised, for complete baselines.
#[derive(Clone, Debug, Default)]
pub(crate) struct Truths {
    ring: VecDeque<(Tick, Vec<Entity>)>,
}

impl Truths {
    pub(crate) fn push(&mut self, tick: Tick, set: Vec<Entity>) {
        if self.ring.len() >= KEPT_FRAMES {
            self.ring.pop_front();
        }
        self.ring.push_back((tick, set));
    }

    pub(crate) fn get(&self, tick: Tick) -> Option<&[Entity]> {
        self.ring
            .iter()
            .find(|(t, _)| *t == tick)
            .map(|(_, s)| &s[..])
    }

    pub(crate) fn newest(&self) -> Option<&[Entity]> {
        self.ring.back().map(|(_, s)| &s[..])
    }

    /// The set a sent frame stood for.
    pub(crate) fn set_of<'a>(&'a self, sent: &'a Sent) -> Option<&'a [Entity]> {
        match &sent.set {
            Some(partial) => Some(partial),
            None => self.get(sent.tick),
        }
    }
}

/// Players near each other, by radius-sized cells.
pub(crate) struct Grid {
    cell: f32,
    columns: usize,
    rows: usize,
    cells: Vec<Vec<usize>>,
}

impl Grid {
    /// The players of `states` (by index) in cells of `cell` units.
    pub(crate) fn new(states: &[PlayerState], cell: f32, arena: Vec2) -> Grid {
        let cell = cell.max(1.0);
        let columns = ((arena.x / cell).ceil() as usize).clamp(1, 1024);
        let rows = ((arena.y / cell).ceil() as usize).clamp(1, 1024);
        let mut grid = Grid {
            cell,
            columns,
            rows,
            cells: vec![Vec::new(); columns * rows],
        };
        for (i, s) in states.iter().enumerate() {
            let (c, r) = grid.cell_of(s.position);
            grid.cells[r * columns + c].push(i);
        }
        grid
    }

    fn cell_of(&self, p: Vec2) -> (usize, usize) {
        let c = (p.x / self.cell).floor().max(0.0) as usize;
        let r = (p.y / self.cell).floor().max(0.0) as usize;
        (c.min(self.columns - 1), r.min(self.rows - 1))
    }

    /// Indices of the players in the cells `reach` around `at` covers.
    pub(crate) fn near(&self, at: Vec2, reach: f32, out: &mut Vec<usize>) {
        out.clear();
        let (c0, r0) = self.cell_of(at - Vec2::splat(reach));
        let (c1, r1) = self.cell_of(at + Vec2::splat(reach));
        for r in r0..=r1 {
            for c in c0..=c1 {
                out.extend_from_slice(&self.cells[r * self.columns + c]);
            }
        }
    }
}

/// Everything a viewer's frame is built from this tick.
pub(crate) struct Scene<'a> {
    pub(crate) tick: Tick,
    pub(crate) states: &'a [PlayerState],
    pub(crate) truth: &'a [Entity],
    pub(crate) grid: Option<&'a Grid>,
    pub(crate) sim: &'a SimConfig,
    pub(crate) config: &'a InterestConfig,
}

impl Viewer {
    /// Who `me` (at index `at` of the scene's states) sees this tick, in id
    /// order, updating the hysteresis; `None` when it sees everyone.
    pub(crate) fn view(&mut self, me: usize, scene: &Scene<'_>) -> Option<Vec<usize>> {
        let (Some(radius), Some(grid)) = (scene.config.radius, scene.grid) else {
            return None;
        };
        let me_state = &scene.states[me];
        self.partners.retain(|_, until| *until >= scene.tick);
        let keep = radius + scene.config.margin;
        let mut near = Vec::new();
        grid.near(me_state.position, keep, &mut near);
        let mut seen: Vec<usize> = near
            .into_iter()
            .filter(|&i| {
                let s = &scene.states[i];
                let d = s.position.distance(me_state.position);
                i == me
                    || d <= radius
                    || (d <= keep && self.in_view.contains(&s.id))
                    || self.partners.contains_key(&s.id)
            })
            .collect();
        // Partners out of the grid's reach.
        for id in self.partners.keys() {
            if let Ok(i) = scene.states.binary_search_by_key(id, |s| s.id) {
                seen.push(i);
            }
        }
        seen.sort_unstable();
        seen.dedup();
        self.in_view = seen.iter().map(|&i| scene.states[i].id).collect();
        Some(seen)
    }

    /// This tick's delta body against `baseline` (the set of the frame of
    /// `baseline_tick`) for the players `seen` (indices, `None`: all), within
    /// `room` bytes: the set the frame stands for, whether it is the whole
    /// truth, and the body.
    pub(crate) fn delta(
        &mut self,
        me: usize,
        seen: Option<&[usize]>,
        baseline: &[Entity],
        baseline_tick: Tick,
        room: usize,
        scene: &Scene<'_>,
    ) -> (Vec<Entity>, bool, Vec<u8>) {
        let ticks = scene.tick.0.saturating_sub(baseline_tick.0);
        let all: Vec<usize>;
        let seen = if let Some(seen) = seen {
            seen
        } else {
            all = (0..scene.states.len()).collect();
            &all
        };
        let here = scene.states[me].position;
        let me_id = scene.states[me].id;
        let reach = scene
            .config
            .radius
            .unwrap_or(scene.sim.arena.length())
            .max(1.0);
        // Each player in view: its value if refreshed, its predicted value
        // if not (None: left out of the set), what refreshing it costs, and
        // how much it gains priority a tick.
        let mut rows: Vec<(PlayerId, Quantised, Option<Quantised>, usize, f32)> =
            Vec::with_capacity(seen.len());
        for &i in seen {
            let (id, value) = scene.truth[i];
            let base = delta::lookup(baseline, id);
            let carried = base.map(|b| b.predicted(ticks, scene.sim));
            let cost = if carried == Some(value) {
                0
            } else {
                delta::entry_cost(base.as_ref(), &value, ticks, scene.sim)
            };
            let s = &scene.states[i];
            let near = 1.0 - (s.position.distance(here) / reach).min(1.0);
            let fast = s.velocity.unwrap_or(Vec2::ZERO).length() / scene.sim.speed.max(1e-6);
            let weight = 1.0 + 2.0 * near + fast.min(1.0);
            rows.push((id, value, carried, cost, weight));
        }
        // The order to refresh in: overdue first, then by priority.
        let stale_after = scene.config.max_stale_ticks.saturating_sub(1);
        let keys: Vec<(bool, f32)> = rows
            .iter()
            .map(|(id, _, _, _, weight)| {
                let (p, last) = self.standing(*id, scene.tick);
                (
                    scene.tick.0.saturating_sub(last.0) >= stale_after,
                    p + weight,
                )
            })
            .collect();
        let mut order: Vec<usize> = (0..rows.len()).filter(|&r| rows[r].3 > 0).collect();
        order.sort_by(|&a, &b| {
            keys[b]
                .partial_cmp(&keys[a])
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(rows[a].0.cmp(&rows[b].0))
        });
        // The two counts of the body take up to two varint bytes each.
        let room = room.saturating_sub(4);
        let mut refreshed = vec![false; rows.len()];
        let mut used = 0;
        for r in order {
            if used + rows[r].3 <= room || keys[r].0 || rows[r].0 == me_id {
                used += rows[r].3;
                refreshed[r] = true;
            }
        }
        let mut set = Vec::with_capacity(rows.len());
        let mut complete = seen.len() == scene.states.len();
        for (r, (id, value, carried, cost, weight)) in rows.iter().enumerate() {
            let fresh = *cost == 0 || refreshed[r];
            if fresh {
                set.push((*id, *value));
                self.priority.insert(*id, (0.0, scene.tick));
            } else {
                complete = false;
                let (p, last) = self.standing(*id, scene.tick);
                self.priority.insert(*id, (p + weight, last));
                if let Some(carried) = carried {
                    set.push((*id, *carried));
                }
            }
        }
        let in_view: BTreeSet<PlayerId> = rows.iter().map(|r| r.0).collect();
        self.priority.retain(|id, _| in_view.contains(id));
        if complete {
            self.refreshed_all(scene.tick);
        }
        let mut body = Vec::with_capacity(used + 8);
        delta::encode_body(baseline, &set, ticks, scene.sim, &mut body);
        (set, complete, body)
    }
}

/// Bytes a delta frame spends before its body.
pub(crate) const DELTA_HEAD_BYTES: usize = HEAD_BYTES + 4;
