//! What each binary client is sent: the players in its area of interest,
//! within a byte budget, as a delta against the snapshot it acknowledged.
//!
//! - **Area of interest.** With an interest radius, a client sees the
//!   players within it, keeps seeing them until they are a margin beyond it
//!   (hysteresis, so a player on the border does not flicker), and always
//!   sees itself and anyone it hit or was hit by in the last
//!   [`InterestConfig::partner_memory_ticks`]. Found through a uniform grid
//!   of cells a quarter of the radius (`grid.rs`).
//! - **Budget.** A delta frame fits [`InterestConfig::budget`] bytes. When
//!   the changed players in view do not fit, a priority accumulator picks
//!   them: each tick a player is not refreshed its priority grows, faster
//!   when near and fast; a refreshed one starts from zero; one not refreshed
//!   for [`InterestConfig::max_stale_ticks`] goes first whatever the budget,
//!   so nobody in view starves. A player the prediction already gets right
//!   costs nothing and counts as refreshed.
//! - **Baselines.** Each viewer keeps the frames sent since its
//!   acknowledgement (at most [`KEPT_FRAMES`]). A frame carries what the
//!   next one is built from: its set (or, when it was the room's whole
//!   truth, only its tick: the set is in the room's ring of the last
//!   [`KEPT_FRAMES`] ticks) and the priorities of the players it left
//!   waiting. So the refresh order always follows what the client holds,
//!   and clients that see everyone and acknowledged the same frame get the
//!   same next frame, built once (`frames.rs`).

pub(crate) mod frames;
mod grid;

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use glam::Vec2;

pub(crate) use frames::{BuildScratch, SentFrame};
pub(crate) use grid::{Grid, Marks};

use crate::shared::compact::head_bytes;
use crate::shared::delta::Entity;
use crate::shared::fields::Fields;
use crate::shared::game::OwnState;
use crate::shared::state::PlayerId;
use crate::shared::tick::Tick;

/// How many sent frames (and room ticks) are kept to build deltas on.
pub const KEPT_FRAMES: usize = 32;

/// How interest and the byte budget are set.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct InterestConfig {
    /// Players farther than this are not sent; `None`: everyone is.
    pub radius: Option<f32>,
    /// How far beyond the radius a player seen stays seen.
    pub margin: f32,
    /// Bytes a binary snapshot frame may take, its head included (one
    /// datagram by default). Overdue refreshes go whatever it says, and
    /// so do the shared frames of a view past `max_budgeted_view` and the
    /// full frames of a room without a radius.
    pub budget: usize,
    /// A player in view is refreshed at least this often, budget or not.
    pub max_stale_ticks: u32,
    /// How long a hit keeps its shooter and target in each other's view.
    pub partner_memory_ticks: u32,
    /// Above this many players in view, a client that sees everyone gets
    /// the room's whole truth as a delta shared with every client on the
    /// same baseline, whatever its size, rather than a frame of its own
    /// within the budget: choosing per client costs the room a pass over
    /// every player for every client each tick, which a room of 400 to 800
    /// cannot afford at 20 Hz (see `docs/BENCHMARKS.md`).
    pub max_budgeted_view: usize,
}

impl InterestConfig {
    /// The default byte budget: a whole frame that goes as one datagram on
    /// any path. QUIC guarantees 1,200-byte packets; its header (with the
    /// client's connection ids of 8 bytes, quinn's default; longer ones
    /// leave less), the DATAGRAM frame's and HTTP/3's session id leave
    /// 1,161 bytes of payload (quinn's `max_datagram_size` before MTU
    /// discovery), and a frame past that goes on the reliable stream.
    pub const DATAGRAM_BUDGET: usize = 1150;
}

impl Default for InterestConfig {
    fn default() -> Self {
        InterestConfig {
            radius: None,
            margin: 100.0,
            budget: InterestConfig::DATAGRAM_BUDGET,
            max_stale_ticks: 5,
            partner_memory_ticks: 40,
            max_budgeted_view: 256,
        }
    }
}

/// What the room remembers of one binary client that acknowledges.
#[derive(Clone, Debug)]
pub(crate) struct Viewer<F> {
    acked: Option<Tick>,
    /// Frames sent since the acknowledged one (included), oldest first.
    sent: VecDeque<Arc<SentFrame<F>>>,
    /// Who was in view, in id order (a sorted list, refilled in place
    /// every tick: no allocation once it has grown).
    in_view: Vec<PlayerId>,
    /// Players this one hit or was hit by, until a tick.
    partners: BTreeMap<PlayerId, Tick>,
}

impl<F> Default for Viewer<F> {
    fn default() -> Self {
        Viewer {
            acked: None,
            sent: VecDeque::new(),
            in_view: Vec::new(),
            partners: BTreeMap::new(),
        }
    }
}

impl<F> Viewer<F> {
    /// Whether `id` is in view: within its reach at the last frame built
    /// for this client (sent, or left out for the byte budget), or a
    /// partner it keeps in view.
    pub(crate) fn sees(&self, id: PlayerId) -> bool {
        self.in_view.binary_search(&id).is_ok() || self.partners.contains_key(&id)
    }

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
    pub(crate) fn baseline(&self) -> Option<&Arc<SentFrame<F>>> {
        let acked = self.acked?;
        self.sent.iter().find(|s| s.tick == acked)
    }

    /// Remembers a frame sent.
    pub(crate) fn record(&mut self, sent: Arc<SentFrame<F>>) {
        if self.sent.len() >= KEPT_FRAMES {
            self.sent.pop_front();
        }
        self.sent.push_back(sent);
    }

    /// Remembers whom this tick's events paired `me` with (a shooting
    /// game's: whom it hit or was hit by).
    pub(crate) fn note_partners(
        &mut self,
        me: PlayerId,
        pairs: &[(PlayerId, PlayerId)],
        until: Tick,
    ) {
        for &(a, b) in pairs {
            let other = if a == me {
                b
            } else if b == me {
                a
            } else {
                continue;
            };
            self.partners.insert(other, until);
        }
    }
}

/// The room's truth at recent ticks, quantised, for complete baselines.
#[derive(Clone, Debug)]
pub(crate) struct Truths<F> {
    ring: VecDeque<(Tick, Vec<Entity<F>>)>,
}

impl<F> Default for Truths<F> {
    fn default() -> Self {
        Truths {
            ring: VecDeque::new(),
        }
    }
}

impl<F: Fields> Truths<F> {
    pub(crate) fn push(&mut self, tick: Tick, set: Vec<Entity<F>>) {
        if self.ring.len() >= KEPT_FRAMES {
            self.ring.pop_front();
        }
        self.ring.push_back((tick, set));
    }

    pub(crate) fn get(&self, tick: Tick) -> Option<&[Entity<F>]> {
        self.ring
            .iter()
            .find(|(t, _)| *t == tick)
            .map(|(_, s)| &s[..])
    }

    pub(crate) fn newest(&self) -> Option<&[Entity<F>]> {
        self.ring.back().map(|(_, s)| &s[..])
    }

    /// The set a sent frame stood for.
    pub(crate) fn set_of<'a>(&'a self, sent: &'a SentFrame<F>) -> Option<&'a [Entity<F>]> {
        match sent.partial() {
            Some(partial) => Some(partial),
            None => self.get(sent.tick),
        }
    }
}

/// Everything a viewer's frame is built from this tick: every player's
/// quantised truth, position and speed, by index, in id order.
pub(crate) struct Scene<'a, F: Fields> {
    pub(crate) tick: Tick,
    pub(crate) truth: &'a [Entity<F>],
    pub(crate) positions: &'a [Vec2],
    pub(crate) grid: Option<&'a Grid>,
    /// What the entities' motion is predicted with.
    pub(crate) fields: &'a F::Config,
    /// How far nearness counts without an interest radius (the world's
    /// diagonal).
    pub(crate) reach: f32,
    pub(crate) config: &'a InterestConfig,
    /// Each player's speed as a fraction of the top speed (at most 1).
    pub(crate) speed: Vec<f32>,
}

impl<F> Viewer<F> {
    /// Who `me` (at index `at` of the scene's states) sees this tick within
    /// `radius` (its own: see `ServerGame::view_radius`), into `seen` in id
    /// order, updating the hysteresis; `false` when it sees everyone.
    pub(crate) fn view(
        &mut self,
        me: usize,
        radius: Option<f32>,
        scene: &Scene<'_, F>,
        scratch: &mut ViewScratch,
        seen: &mut Vec<usize>,
    ) -> bool
    where
        F: Fields,
    {
        seen.clear();
        let (Some(radius), Some(grid)) = (radius, scene.grid) else {
            return false;
        };
        let here = scene.positions[me];
        self.partners.retain(|_, until| *until >= scene.tick);
        let keep = radius + scene.config.margin;
        let ViewScratch { marks, edge, ring } = scratch;
        marks.reset(scene.truth.len());
        edge.reset(scene.truth.len());
        ring.clear();
        grid.within(here, radius, keep, marks, edge);
        marks.set(me);
        // Between the radius and the margin: those it saw stay seen (both
        // in id order, walked side by side).
        edge.drain_into(ring);
        let mut saw = self.in_view.iter().peekable();
        for &i in ring.iter() {
            let id = scene.truth[i].0;
            while saw.next_if(|&&s| s < id).is_some() {}
            if saw.next_if(|&&s| s == id).is_some() {
                marks.set(i);
            }
        }
        // Partners, wherever they are.
        let partner_at = |id: &PlayerId| scene.truth.binary_search_by_key(id, |(i, _)| *i).ok();
        for i in self.partners.keys().filter_map(partner_at) {
            marks.set(i);
        }
        marks.drain_into(seen);
        // However wide the view, its stale mask fits the budget: the
        // nearest only (itself and its partners always).
        let cap = max_view(scene.config.budget);
        if seen.len() > cap {
            let partners: Vec<usize> = self.partners.keys().filter_map(partner_at).collect();
            keep_nearest(seen, scene.positions, me, &partners, cap);
        }
        // In index order, so in id order.
        self.in_view.clear();
        self.in_view.extend(seen.iter().map(|&i| scene.truth[i].0));
        true
    }
}

/// What finding views needs between viewers, kept for its allocations.
#[derive(Debug, Default)]
pub(crate) struct ViewScratch {
    marks: Marks,
    /// Those between the radius and the margin, marked.
    edge: Marks,
    ring: Vec<usize>,
}

/// Most players and things one JSON snapshot carries: the nearest of its
/// client's view. JSON has no deltas and no byte budget, so a crowded
/// view (an .io game's thousands of pellets) is cut here rather than
/// sent whole.
pub const MAX_JSON_VIEW: usize = 256;

/// How far any view reaches, for an interest radius of `radius`: a game's
/// [`view_radius`](crate::ServerGame::view_radius) (a heavy blob's wider
/// view) stops at three times the room's radius.
pub(crate) fn max_view_radius(radius: f32) -> f32 {
    3.0 * radius
}

/// Most entities a binary client's view holds within a byte budget of
/// `budget`: its stale mask (a bit each) takes at most a quarter of it.
pub(crate) fn max_view(budget: usize) -> usize {
    (budget / 4 * 8).max(8)
}

/// Of the entities at `positions` (by index, in id order), those the one
/// at `me` sees within `radius` (everyone without one or without a grid),
/// at most `cap` of them, nearest first, itself always, into `out` in
/// index order.
pub(crate) fn nearest_view(
    positions: &[Vec2],
    grid: Option<&Grid>,
    me: usize,
    radius: Option<f32>,
    cap: usize,
    out: &mut Vec<usize>,
) {
    let here = positions[me];
    if let (Some(radius), Some(grid)) = (radius, grid) {
        grid.near(here, radius, out);
        out.retain(|&i| i == me || positions[i].distance(here) <= radius);
    } else {
        out.clear();
        out.extend(0..positions.len());
    }
    keep_nearest(out, positions, me, &[], cap);
}

/// Cuts `seen` (indices) to the `cap` nearest to `me` (at least one),
/// keeping `me` and the `always` indices whatever their distance; leaves it
/// in index order.
pub(crate) fn keep_nearest(
    seen: &mut Vec<usize>,
    positions: &[Vec2],
    me: usize,
    always: &[usize],
    cap: usize,
) {
    let here = positions[me];
    if seen.len() > cap {
        let key = |i: usize| {
            if i == me || always.contains(&i) {
                -1.0
            } else {
                positions[i].distance_squared(here)
            }
        };
        let cap = cap.max(1);
        seen.select_nth_unstable_by(cap - 1, |&a, &b| key(a).total_cmp(&key(b)).then(a.cmp(&b)));
        seen.truncate(cap);
    }
    seen.sort_unstable();
}

/// Bytes a delta frame spends before its body, with an own state `O`:
/// the head and the baseline's tick.
pub(crate) const fn delta_head_bytes<O: OwnState>() -> usize {
    head_bytes::<O>() + 4
}
