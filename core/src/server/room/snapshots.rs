//! A tick's snapshot to every seat, in the encoding each chose.
//!
//! - JSON clients share one text frame.
//! - Binary clients that have not acknowledged a snapshot kept here get the
//!   full compact frame: one shared tail, each with its own exact head.
//! - Binary clients that acknowledge ([`Viewer`]) get a delta against the
//!   frame they acknowledged, or a full frame when it is no longer kept.
//!   Clients that see everyone and acknowledged the same frame get the same
//!   next frame, built once (the cost is per distinct baseline, not per
//!   client); with an interest radius each client's frame is its own.
//! - Binary clients on datagrams also get their head again, alone, half a
//!   tick later (an own echo, [`Outbox::later`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{Frame, Outbox, Room, RoomStats};
use crate::server::interest::{
    delta_head_bytes, frames, keep_nearest, max_view_radius, nearest_view, Grid, Scene, SentFrame,
    Truths, ViewScratch, Viewer, MAX_JSON_VIEW,
};
use crate::server::world::ServerGame;
use crate::shared::compact;
use crate::shared::delta::{self, Entity};
use crate::shared::fields::{full_bytes, Fields};
use crate::shared::game::OwnState;
use crate::shared::protocol::{encode, Encoding, ServerMessage};
use crate::shared::tick::Tick;
use crate::shared::timing::InputTiming;

impl<G: ServerGame> Room<G> {
    /// This tick's snapshot to every seat, each shared frame encoded once.
    pub(super) fn share_snapshot(&mut self, tick: Tick, out: &mut Outbox) {
        let json = self.seats.values().any(|s| s.encoding == Encoding::Json);
        let binary = self.seats.values().any(|s| s.encoding == Encoding::Compact);
        let things = G::things(self.world.game()).len();
        // JSON clients choose by position when the room has a radius or
        // more than a JSON view holds; viewers always do.
        let json_chooses =
            json && (self.interest.radius.is_some() || self.states.len() + things > MAX_JSON_VIEW);
        self.positions.clear();
        if json_chooses || (binary && !self.viewers.is_empty()) {
            self.positions.extend(self.states.iter().map(G::position));
            self.positions
                .extend(G::things(self.world.game()).iter().map(|t| t.at));
        }
        let grid = self
            .interest
            .radius
            .filter(|_| !self.positions.is_empty())
            .map(|r| Grid::new(&self.positions, r, G::extent(self.world.config())));
        if json {
            let view = if json_chooses {
                JsonView::Nearest(grid.as_ref())
            } else {
                JsonView::Whole
            };
            self.share_json(tick, view, out);
        }
        if binary {
            self.share_binary(tick, grid.as_ref(), out);
        }
    }

    /// JSON clients' snapshots: the players and things a binary client
    /// would see (within its view radius), at most [`MAX_JSON_VIEW`] of
    /// them, nearest first. One text shared by all when everyone sees the
    /// whole room.
    fn share_json(&mut self, tick: Tick, view: JsonView<'_>, out: &mut Outbox) {
        // Protocol-2 JSON clients get their input timing first.
        for (&id, seat) in &self.seats {
            if seat.encoding != Encoding::Json || !seat.scheduled {
                continue;
            }
            if let Some(timing) = self.world.take_timing(id) {
                let message = ServerMessage::<G>::Timing(timing);
                out.send(id, Frame::Text(encode(&message)), true);
            }
        }
        let config = self.world.config();
        let things = G::things(self.world.game());
        let count = self.states.len();
        // The world's things follow the players, as a binary client reads
        // them: quantised, then dequantised.
        let entity = |i: usize| -> G::Own {
            if let Some(own) = self.states.get(i) {
                *own
            } else {
                let t = &things[i - count];
                G::dequantise(&t.entity, t.id.wire(), tick, config)
            }
        };
        let json_seats = self
            .seats
            .iter()
            .filter(|(_, s)| s.encoding == Encoding::Json)
            .map(|(&id, _)| id);
        let before = out.deliveries().len();
        match view {
            JsonView::Whole => {
                let players = (0..count + things.len()).map(entity).collect();
                let text = encode(&ServerMessage::<G>::Snapshot {
                    server_tick: tick,
                    players,
                });
                out.share(json_seats, Frame::Text(text), true);
            }
            JsonView::Nearest(grid) => {
                let mut seen = Vec::new();
                for id in json_seats {
                    let Ok(at) = self.states.binary_search_by_key(&id, OwnState::id) else {
                        continue;
                    };
                    let radius = view_radius_of::<G>(&self.states[at], self.interest.radius);
                    nearest_view(&self.positions, grid, at, radius, MAX_JSON_VIEW, &mut seen);
                    let players = seen.iter().map(|&i| entity(i)).collect();
                    let text = encode(&ServerMessage::<G>::Snapshot {
                        server_tick: tick,
                        players,
                    });
                    out.send(id, Frame::Text(text), true);
                }
            }
        }
        self.stats.snapshots += (out.deliveries().len() - before) as u64;
    }

    fn share_binary(&mut self, tick: Tick, grid: Option<&Grid>, out: &mut Outbox) {
        let config = self.world.config().clone();
        let config = &config;
        // Players, then the world's things (ids of their own range, so the
        // set stays in id order).
        let things = G::things(self.world.game());
        let truth: Vec<Entity<G::Entity>> = self
            .states
            .iter()
            .map(|s| (s.id(), G::quantise(s, config)))
            .chain(things.iter().map(|t| (t.id.wire(), t.entity)))
            .collect();
        // The whole room's tail goes to a client that sees everyone or
        // does not acknowledge; a room whose every binary client has a
        // view (an .io game) never sends it, so it is not encoded.
        let whole = grid.is_none()
            || self.interest.radius.is_none()
            || self.seats.iter().any(|(id, seat)| {
                seat.encoding == Encoding::Compact && !self.viewers.contains_key(id)
            });
        self.tail.clear();
        if whole {
            compact::encode_tail_quantised(&truth, &mut self.tail);
        }
        self.truths.push(tick, truth);
        let Some(truth) = self.truths.newest() else {
            return;
        };
        // Only clients that acknowledge (viewers) are chosen for: without
        // any, no grid and no speeds are needed this tick.
        let viewing = !self.viewers.is_empty();
        let extent = G::extent(config);
        let grid = grid.filter(|_| viewing);
        let mut frames = Frames::<G> {
            scene: Scene {
                tick,
                truth,
                positions: &self.positions,
                grid,
                fields: config,
                reach: extent.length(),
                config: &self.interest,
                // Things stand still: only players have a speed.
                speed: if viewing {
                    self.states
                        .iter()
                        .map(|s| G::speed(s, config))
                        .chain(things.iter().map(|_| 0.0))
                        .collect()
                } else {
                    Vec::new()
                },
            },
            truths: &self.truths,
            tail: &self.tail,
            // The whole frame fits the budget: a protocol-2 head's timing
            // and receipt too (a frame past a datagram goes on the stream).
            budget: (self.interest.budget)
                .saturating_sub(delta_head_bytes::<G::Own>() + compact::TIMING_BYTES),
            shared: BTreeMap::new(),
            complete: Arc::new(SentFrame::full(tick, None)),
            stats: &mut self.stats,
            scratch: ViewScratch::default(),
            seen: Vec::new(),
        };
        for (&id, seat) in &self.seats {
            if seat.encoding != Encoding::Compact {
                continue;
            }
            let Ok(at) = self.states.binary_search_by_key(&id, OwnState::id) else {
                continue;
            };
            let timing = seat.scheduled.then(|| self.world.take_timing(id)).flatten();
            let frame = if let Some(viewer) = self.viewers.get_mut(&id) {
                frames.for_viewer(viewer, at, &self.states[at], timing.as_ref())
            } else {
                let mut frame =
                    Vec::with_capacity(compact::head_bytes::<G::Own>() + self.tail.len());
                compact::encode_head(tick, &self.states[at], timing.as_ref(), &mut frame);
                frame.extend_from_slice(&self.tail);
                frame
            };
            frames.stats.binary_bytes += frame.len() as u64;
            frames.stats.snapshots += 1;
            out.send(id, Frame::Binary(frame), true);
            if seat.echo {
                let mut echo =
                    Vec::with_capacity(compact::head_bytes::<G::Own>() + compact::TIMING_BYTES);
                compact::encode_own(tick, &self.states[at], timing.as_ref(), &mut echo);
                frames.stats.binary_bytes += echo.len() as u64;
                out.send_later(id, Frame::Binary(echo));
            }
        }
    }
}

/// What JSON clients are sent this tick.
#[derive(Clone, Copy)]
enum JsonView<'a> {
    /// The whole room, one text shared by all.
    Whole,
    /// Each its nearest, within its view radius when the room has a grid.
    Nearest(Option<&'a Grid>),
}

/// A frame built this tick and its body.
type Built<F> = (Arc<SentFrame<F>>, Vec<u8>);

/// What this tick's binary frames are built from.
struct Frames<'a, G: ServerGame> {
    scene: Scene<'a, G::Entity>,
    truths: &'a Truths<G::Entity>,
    /// The full compact tail of everyone.
    tail: &'a [u8],
    /// Bytes a delta body may take.
    budget: usize,
    /// Frames built this tick for clients that see everyone, by the
    /// baseline frame they build on (its address): built once, shared.
    shared: BTreeMap<usize, Built<G::Entity>>,
    /// This tick's frame that is the room's whole truth: every complete
    /// frame is this one, so the clients that got one share what follows.
    complete: Arc<SentFrame<G::Entity>>,
    stats: &'a mut RoomStats,
    /// Kept between viewers for their allocations.
    scratch: ViewScratch,
    seen: Vec<usize>,
}

impl<G: ServerGame> Frames<'_, G> {
    /// The frame for the viewer of the player at index `at`, recorded as
    /// sent.
    fn for_viewer(
        &mut self,
        viewer: &mut Viewer<G::Entity>,
        at: usize,
        own: &G::Own,
        timing: Option<&InputTiming>,
    ) -> Vec<u8> {
        let scene = &self.scene;
        let tick = scene.tick;
        let radius = view_radius_of::<G>(own, scene.config.radius);
        let mut seen = std::mem::take(&mut self.seen);
        let viewing = viewer.view(at, radius, scene, &mut self.scratch, &mut seen);
        // A view's frame keeps to the byte budget (roughly: a late
        // refresh may go past it); only a frame of everyone is the tail.
        let body = if viewing {
            self.budget + self.budget / 4
        } else {
            self.tail.len()
        };
        let mut frame =
            Vec::with_capacity(delta_head_bytes::<G::Own>() + compact::TIMING_BYTES + body);
        // A baseline whose set is no longer known (older than the room's
        // ring) is as good as none.
        let truths = self.truths;
        let base = viewer
            .baseline()
            .filter(|b| truths.set_of(b).is_some())
            .cloned();
        let sent = if let Some(base) = base {
            self.stats.deltas += 1;
            delta::encode_head(tick, base.tick, own, timing, &mut frame);
            let base_set = truths.set_of(&base).unwrap_or_default();
            let budget = self.budget;
            let (sent, body_len) = if viewing {
                let (next, body) = frames::build(
                    &base,
                    base_set,
                    Some(&seen),
                    Some(scene.positions[at]),
                    budget,
                    scene,
                );
                frame.extend_from_slice(&body);
                (Arc::new(next), body.len())
            } else {
                let key = Arc::as_ptr(&base) as usize;
                let complete = &self.complete;
                let bodies = &mut self.stats.delta_bodies;
                // A view too large to choose from per client: the whole
                // truth, shared.
                let room = if scene.truth.len() > scene.config.max_budgeted_view {
                    usize::MAX
                } else {
                    budget
                };
                let (sent, body) = self.shared.entry(key).or_insert_with(|| {
                    *bodies += 1;
                    let (next, body) = frames::build(&base, base_set, None, None, room, scene);
                    let next = if next.is_complete() {
                        complete.clone()
                    } else {
                        Arc::new(next)
                    };
                    (next, body)
                });
                frame.extend_from_slice(body);
                (sent.clone(), body.len())
            };
            if body_len > budget {
                self.stats.over_budget += 1;
            }
            sent
        } else {
            // Nothing to build on: a full frame of what it sees, nearest
            // first within the byte budget; a crowded view fills in over
            // the deltas that follow (a whole view of a thousand things
            // each tick would not drain through a lossy path).
            compact::encode_head(tick, own, timing, &mut frame);
            let set = if viewing {
                let chosen = nearest_within(&seen, at, self.budget, scene);
                let set: Vec<Entity<G::Entity>> = chosen.iter().map(|&i| scene.truth[i]).collect();
                compact::encode_tail_quantised(&set, &mut frame);
                Some(set)
            } else {
                frame.extend_from_slice(self.tail);
                None
            };
            match set {
                None => self.complete.clone(),
                set => Arc::new(SentFrame::full(tick, set)),
            }
        };
        viewer.record(sent);
        self.seen = seen;
        frame
    }
}

/// Of `seen` (indices into the scene, in id order), those a full frame of
/// `budget` bytes holds: all when they fit, else the nearest to the viewer
/// at `me` (always itself), in id order.
fn nearest_within<F: Fields>(
    seen: &[usize],
    me: usize,
    budget: usize,
    scene: &Scene<'_, F>,
) -> Vec<usize> {
    // A full frame's entry: the id (4 bytes) and every field.
    let room = budget.saturating_sub(2) / (4 + full_bytes::<F>());
    let mut chosen = seen.to_vec();
    keep_nearest(&mut chosen, scene.positions, me, &[], room);
    chosen
}

/// The radius `own` sees within, for the room's interest radius: the
/// game's [`view_radius`](ServerGame::view_radius), at most
/// [`max_view_radius`].
fn view_radius_of<G: ServerGame>(own: &G::Own, radius: Option<f32>) -> Option<f32> {
    radius.map(|r| G::view_radius(own, r).min(max_view_radius(r)))
}
