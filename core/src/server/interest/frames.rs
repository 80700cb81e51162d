//! A frame sent to binary clients and how the next one is built on it,
//! within the byte budget.
//!
//! The frame built on a baseline refreshes every player in view whose
//! baseline prediction is wrong, if all fit; otherwise players the client
//! holds but that were not refreshed for `max_stale_ticks - 1` ticks first
//! (whatever the budget),
//! then by priority (what they accumulated waiting plus their weight: 1,
//! plus up to 2 for nearness when there is a radius, plus up to 1 for
//! speed). A player left waiting keeps its predicted value in the set and
//! adds its weight to its priority; a refreshed one starts from zero.

use glam::Vec2;

use super::Scene;
use crate::shared::delta::{self, Entity};
use crate::shared::fields::Fields;
use crate::shared::state::PlayerId;
use crate::shared::tick::Tick;

/// A player left waiting for a refresh: its id, accumulated priority and
/// the tick it was last refreshed.
type Waiting = (PlayerId, f32, Tick);

/// A frame sent: what the next frame is built from.
#[derive(Clone, Debug)]
pub(crate) struct SentFrame<F> {
    pub(crate) tick: Tick,
    /// The set it stands for; `None` when it was the room's whole truth at
    /// its tick.
    set: Option<Vec<Entity<F>>>,
    /// Players it left waiting for a refresh, in id order: accumulated
    /// priority and the tick they were last refreshed.
    waiting: Vec<Waiting>,
    /// Every player in view not waiting was refreshed at this tick.
    fresh_at: Tick,
}

impl<F> SentFrame<F> {
    /// A full frame: everything it holds is fresh.
    pub(crate) fn full(tick: Tick, set: Option<Vec<Entity<F>>>) -> SentFrame<F> {
        SentFrame {
            tick,
            set,
            waiting: Vec::new(),
            fresh_at: tick,
        }
    }

    /// The set, when it was not the room's whole truth.
    pub(crate) fn partial(&self) -> Option<&[Entity<F>]> {
        self.set.as_deref()
    }

    /// Whether it was the room's whole truth, everyone fresh.
    pub(crate) fn is_complete(&self) -> bool {
        self.set.is_none() && self.waiting.is_empty()
    }
}

/// One player in view, while a frame is built.
struct Row<F> {
    /// Its index in the scene.
    at: u32,
    id: PlayerId,
    value: F,
    /// Its value if not refreshed (`None`: left out of the set).
    carried: Option<F>,
    /// Bytes refreshing it takes (0: the prediction is right).
    cost: usize,
    accumulated: f32,
    last: Tick,
    /// Its priority; weighed only when the budget must choose.
    key: f32,
    overdue: bool,
    refreshed: bool,
}

/// What building frames keeps between frames, for its allocations.
pub(crate) struct BuildScratch<F> {
    rows: Vec<Row<F>>,
    removed: Vec<usize>,
    stale: Vec<bool>,
    entries: Vec<(PlayerId, Option<F>, F)>,
}

impl<F> Default for BuildScratch<F> {
    fn default() -> Self {
        BuildScratch {
            rows: Vec::new(),
            removed: Vec::new(),
            stale: Vec::new(),
            entries: Vec::new(),
        }
    }
}

/// How much a player in view weighs when the budget chooses: 1, plus up
/// to 2 for nearness to `here`, plus up to 1 for speed.
struct Weights<'a, 's, F: Fields> {
    scene: &'a Scene<'s, F>,
    here: Option<Vec2>,
    reach2: f32,
}

impl<F: Fields> Weights<'_, '_, F> {
    fn of(&self, at: u32) -> f32 {
        let i = at as usize;
        let near = self.here.map_or(0.0, |h| {
            2.0 * (1.0 - (self.scene.positions[i].distance_squared(h) / self.reach2).min(1.0))
        });
        1.0 + near + self.scene.speed[i]
    }

    /// Every row's priority: what it accumulated and its weight, first of
    /// all when overdue.
    fn key(&self, rows: &mut [Row<F>]) {
        for row in rows {
            row.key = row.accumulated + self.of(row.at) + if row.overdue { 1e9 } else { 0.0 };
        }
    }
}

/// The frame built on `base` (whose set is `base_set`) for the players
/// `seen` (indices into the scene, `None`: all), weighting nearness to
/// `here` when given, within `room` bytes of body: the frame and its body.
pub(crate) fn build<F: Fields>(
    base: &SentFrame<F>,
    base_set: &[Entity<F>],
    seen: Option<&[usize]>,
    here: Option<Vec2>,
    room: usize,
    scene: &Scene<'_, F>,
    scratch: &mut BuildScratch<F>,
) -> (SentFrame<F>, Vec<u8>) {
    let motion = F::motion(scene.tick.0.saturating_sub(base.tick.0), scene.fields);
    // A baseline that left players waiting was over the budget, and so is
    // the frame on it, most often (seven in eight, 1,000 bots over
    // sockets): the budget chooses at once, without a pass that fails.
    let over = !base.waiting.is_empty();
    (!over)
        .then(|| all_refreshed(base_set, seen, &motion, room, scene, scratch))
        .flatten()
        .unwrap_or_else(|| by_rows(base, base_set, seen, here, room, scene, scratch))
}

/// The frame [`build`] gives, weighing every player in view as a row:
/// what the budget chooses from when not everything fits.
fn by_rows<F: Fields>(
    base: &SentFrame<F>,
    base_set: &[Entity<F>],
    seen: Option<&[usize]>,
    here: Option<Vec2>,
    room: usize,
    scene: &Scene<'_, F>,
    scratch: &mut BuildScratch<F>,
) -> (SentFrame<F>, Vec<u8>) {
    let tick = scene.tick;
    let motion = F::motion(tick.0.saturating_sub(base.tick.0), scene.fields);
    let count = seen.map_or(scene.truth.len(), <[usize]>::len);
    let reach = scene.config.radius.unwrap_or(scene.reach).max(1.0);
    let weights = Weights {
        scene,
        here,
        reach2: reach * reach,
    };
    let stale_after = scene.config.max_stale_ticks.saturating_sub(1);
    // One pass over the players in view, the baseline and the waiting
    // list, all in id order.
    let BuildScratch {
        rows,
        removed,
        stale,
        entries,
    } = scratch;
    rows.clear();
    removed.clear();
    let mut old = base_set.iter().enumerate().peekable();
    let mut waiting = base.waiting.iter().peekable();
    for k in 0..count {
        let i = seen.map_or(k, |s| s[k]);
        let (id, value) = scene.truth[i];
        while let Some((gone, _)) = old.next_if(|(_, (b, _))| *b < id) {
            removed.push(gone);
        }
        let carried = old
            .next_if(|(_, (b, _))| *b == id)
            .map(|(_, (_, q))| q.moved(&motion));
        let cost = delta::entry_cost(carried.as_ref(), &value);
        while waiting.next_if(|(w, _, _)| *w < id).is_some() {}
        let (accumulated, last) = waiting
            .next_if(|(w, _, _)| *w == id)
            .map_or((0.0, base.fresh_at), |(_, a, l)| (*a, *l));
        // Only what the client draws can be stale: a player new to its set
        // comes within the budget, nearest first.
        let overdue = carried.is_some() && tick.0.saturating_sub(last.0) >= stale_after;
        rows.push(Row {
            at: i as u32,
            id,
            value,
            carried,
            cost,
            accumulated,
            last,
            key: 0.0,
            overdue,
            refreshed: cost == 0,
        });
    }
    removed.extend(old.map(|(gone, _)| gone));
    let fixed = fixed_bytes(removed, count);
    let (used, mut keyed) = choose(rows, room.saturating_sub(fixed), &weights);
    let mut body = Vec::with_capacity(used + fixed);
    let mut parts = split(rows, &weights, stale, entries);
    loop {
        body.clear();
        delta::write_body(removed, entries, stale, &mut body);
        // An entry's id gap was costed as one byte: should the gaps have
        // taken more, the chosen row of least priority waits for the next
        // frame, until the body fits (what is overdue goes regardless).
        if body.len() <= room {
            break;
        }
        if !keyed {
            weights.key(rows);
            keyed = true;
        }
        let Some(last) = rows
            .iter_mut()
            .filter(|r| r.refreshed && r.cost > 0 && !r.overdue)
            .min_by(|a, b| a.key.total_cmp(&b.key).then(b.id.cmp(&a.id)))
        else {
            break;
        };
        last.refreshed = false;
        parts = split(rows, &weights, stale, entries);
    }
    let (set, left) = parts;
    let complete = left.is_empty() && count == scene.truth.len();
    let frame = SentFrame {
        tick,
        set: (!complete).then_some(set),
        waiting: left,
        fresh_at: tick,
    };
    (frame, body)
}

/// Bytes of a body besides its entries: the removals exactly, the
/// entries' count and the stale mask (one bit per player in view).
fn fixed_bytes(removed: &[usize], count: usize) -> usize {
    delta::removals_bytes(removed) + 4 + count.div_ceil(8)
}

/// The frame that refreshes every player in view, when it fits in `room`
/// bytes of body (as most do): one pass, no rows, no priorities. `None`
/// when it does not fit, and the budget must choose. The bytes are those
/// the rows would give, as every row would be refreshed.
fn all_refreshed<F: Fields>(
    base_set: &[Entity<F>],
    seen: Option<&[usize]>,
    motion: &F::Motion,
    room: usize,
    scene: &Scene<'_, F>,
    scratch: &mut BuildScratch<F>,
) -> Option<(SentFrame<F>, Vec<u8>)> {
    let BuildScratch {
        removed, entries, ..
    } = scratch;
    removed.clear();
    entries.clear();
    let count = seen.map_or(scene.truth.len(), <[usize]>::len);
    let mut set = Vec::with_capacity(count);
    let mut cost = 0;
    let mut old = base_set.iter().enumerate().peekable();
    for k in 0..count {
        let (id, value) = scene.truth[seen.map_or(k, |s| s[k])];
        while let Some((gone, _)) = old.next_if(|(_, (b, _))| *b < id) {
            removed.push(gone);
        }
        let carried = old
            .next_if(|(_, (b, _))| *b == id)
            .map(|(_, (_, q))| q.moved(motion));
        let costs = delta::entry_cost(carried.as_ref(), &value);
        if costs > 0 {
            cost += costs;
            if cost > room {
                // Past the budget before the fixed bytes are even counted.
                return None;
            }
            entries.push((id, carried, value));
        }
        set.push((id, value));
    }
    removed.extend(old.map(|(gone, _)| gone));
    let fixed = fixed_bytes(removed, count);
    if cost > room.saturating_sub(fixed) {
        return None;
    }
    let mut body = Vec::with_capacity(cost + fixed);
    delta::write_body(removed, entries, &[], &mut body);
    if body.len() > room {
        return None;
    }
    let complete = count == scene.truth.len();
    Some((
        SentFrame {
            tick: scene.tick,
            set: (!complete).then_some(set),
            waiting: Vec::new(),
            fresh_at: scene.tick,
        },
        body,
    ))
}

/// A frame's rows as the set the client holds after it (id order) and the
/// rows left waiting (id, priority, last refresh); into `stale` which of
/// the set's entries are stale (not refreshed), into `entries` those
/// written (id, the baseline's prediction, the value).
fn split<F: Fields>(
    rows: &[Row<F>],
    weights: &Weights<'_, '_, F>,
    stale: &mut Vec<bool>,
    entries: &mut Vec<(PlayerId, Option<F>, F)>,
) -> (Vec<Entity<F>>, Vec<Waiting>) {
    let mut set = Vec::with_capacity(rows.len());
    let mut left = Vec::new();
    stale.clear();
    entries.clear();
    for row in rows {
        if row.refreshed {
            set.push((row.id, row.value));
            stale.push(false);
            if row.cost > 0 {
                entries.push((row.id, row.carried, row.value));
            }
        } else {
            left.push((row.id, row.accumulated + weights.of(row.at), row.last));
            if let Some(carried) = row.carried {
                set.push((row.id, carried));
                stale.push(true);
            }
        }
    }
    (set, left)
}

/// Marks the rows to refresh within `room` bytes: all when they fit;
/// otherwise overdue ones first, then by priority. The bytes used, and
/// whether the rows were weighed.
fn choose<F: Fields>(
    rows: &mut [Row<F>],
    room: usize,
    weights: &Weights<'_, '_, F>,
) -> (usize, bool) {
    let total: usize = rows.iter().map(|r| r.cost).sum();
    if total <= room {
        for row in rows.iter_mut() {
            row.refreshed = true;
        }
        return (total, false);
    }
    weights.key(rows);
    let mut order: Vec<usize> = (0..rows.len()).filter(|&r| rows[r].cost > 0).collect();
    let first = |a: &usize, b: &usize| {
        rows[*b]
            .key
            .total_cmp(&rows[*a].key)
            .then(rows[*a].id.cmp(&rows[*b].id))
    };
    // Only the head of the order matters: select about as many as the room
    // holds (twice the mean cost's worth), sort those, and leave the tail
    // unsorted for the small ones that still fit.
    let mean = (total / order.len().max(1)).max(1);
    let head = (2 * room / mean).min(order.len());
    if head < order.len() {
        order.select_nth_unstable_by(head, first);
    }
    order[..head].sort_unstable_by(first);
    let mut used = 0;
    for r in order {
        if used + rows[r].cost <= room || rows[r].overdue {
            used += rows[r].cost;
            rows[r].refreshed = true;
        }
    }
    (used, true)
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::server::interest::InterestConfig;
    use crate::shared::fields::Width;

    /// A point that drifts `vx` a tick: what a baseline predicts matters.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    struct Drift {
        x: u16,
        y: u16,
        vx: u8,
    }

    impl Fields for Drift {
        type Config = ();
        type Motion = u16;
        const WIDTHS: &'static [Width] = &[Width::Wide, Width::Wide, Width::Byte];
        fn get(&self, i: usize) -> u16 {
            [self.x, self.y, u16::from(self.vx)][i.min(2)]
        }
        fn set(&mut self, i: usize, value: u16) {
            match i {
                0 => self.x = value,
                1 => self.y = value,
                _ => self.vx = value as u8,
            }
        }
        fn motion(ticks: u32, (): &()) -> u16 {
            ticks as u16
        }
        fn moved(&self, ticks: &u16) -> Drift {
            let x = self.x.wrapping_add(u16::from(self.vx).wrapping_mul(*ticks));
            Drift { x, ..*self }
        }
    }

    fn drift() -> impl Strategy<Value = Drift> {
        (0..4u16, 0..4u16, 0..3u8).prop_map(|(x, y, vx)| Drift { x, y, vx })
    }

    proptest! {
        /// The one-pass frame, when it is taken, is the frame the rows
        /// give, byte for byte and set for set, whatever the view, the
        /// baseline (its age, its waiting players) and the budget.
        #[test]
        fn the_one_pass_frame_is_the_rows_frame(
            truth in prop::collection::vec((any::<bool>(), drift()), 1..60),
            base in prop::collection::vec((0..3u8, drift(), any::<bool>(), 0..4u32), 0..60),
            seen_mask in prop::collection::vec(any::<bool>(), 60),
            everyone in any::<bool>(),
            age in 1..6u32,
            room in 0..200usize,
        ) {
            let truth: Vec<Entity<Drift>> = truth
                .iter()
                .enumerate()
                .filter(|(_, (keep, _))| *keep)
                .map(|(i, (_, d))| (PlayerId(i as u32 * 2 + 1), *d))
                .collect();
            let tick = Tick(100);
            let base_tick = Tick(100 - age);
            // The baseline holds some of the truth's ids and some gone.
            let held: Vec<Entity<Drift>> = base
                .iter()
                .enumerate()
                .filter(|(_, (what, _, _, _))| *what > 0)
                .map(|(i, (what, d, _, _))| (PlayerId(i as u32 * 2 + u32::from(*what % 2)), *d))
                .collect();
            let waiting: Vec<Waiting> = base
                .iter()
                .enumerate()
                .filter(|(_, (_, _, waits, _))| *waits)
                .map(|(i, (_, _, _, late))| (PlayerId(i as u32 * 2 + 1), 1.5, Tick(base_tick.0 - late)))
                .collect();
            let frame = SentFrame { tick: base_tick, set: Some(held.clone()), waiting, fresh_at: base_tick };
            let seen: Vec<usize> = (0..truth.len()).filter(|&i| seen_mask[i]).collect();
            let seen = (!everyone).then_some(&seen[..]);
            let positions: Vec<Vec2> = truth.iter().map(|(_, d)| Vec2::new(f32::from(d.x), f32::from(d.y))).collect();
            let config = InterestConfig { radius: Some(3.0), ..InterestConfig::default() };
            let scene = Scene {
                tick,
                truth: &truth,
                positions: &positions,
                grid: None,
                fields: &(),
                reach: 6.0,
                config: &config,
                speed: truth.iter().map(|(_, d)| f32::from(d.vx)).collect(),
            };
            let here = Some(Vec2::new(1.0, 1.0));
            let mut scratch = BuildScratch::default();
            let (one, one_body) = build(&frame, &held, seen, here, room, &scene, &mut scratch);
            let (rows, rows_body) = by_rows(&frame, &held, seen, here, room, &scene, &mut scratch);
            prop_assert_eq!(one_body, rows_body);
            prop_assert_eq!(one.tick, rows.tick);
            prop_assert_eq!(one.set, rows.set);
            prop_assert_eq!(one.waiting, rows.waiting);
            prop_assert_eq!(one.fresh_at, rows.fresh_at);
        }
    }
}
