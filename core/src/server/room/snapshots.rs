//! A tick's snapshot to every seat, in the encoding each chose.
//!
//! - JSON clients share one text frame.
//! - Binary clients that have not acknowledged a snapshot kept here get the
//!   full compact frame: one shared tail, each with its own exact head.
//! - Binary clients that acknowledge ([`Viewer`]) get a delta against the
//!   frame they acknowledged, or a full frame when it is no longer kept.
//!   When everyone is in view and the acknowledged frame was the room's
//!   whole truth, clients with the same baseline share one encoded body
//!   (the cost is per distinct baseline, not per client) as long as it fits
//!   the budget; otherwise the body is built for the client, with interest
//!   and the budget's priorities.

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::{Frame, Outbox, Room, RoomStats};
use crate::server::interest::{Grid, Scene, Sent, Truths, Viewer, DELTA_HEAD_BYTES};
use crate::shared::compact;
use crate::shared::delta::{self, Entity};
use crate::shared::protocol::{encode, Encoding, ServerMessage};
use crate::shared::tick::Tick;

impl Room {
    /// This tick's snapshot to every seat, each shared frame encoded once.
    pub(super) fn share_snapshot(&mut self, tick: Tick, out: &mut Outbox) {
        if self.seats.values().any(|s| s.encoding == Encoding::Json) {
            let message = ServerMessage::Snapshot {
                server_tick: tick,
                players: std::mem::take(&mut self.states),
            };
            let text = encode(&message);
            if let ServerMessage::Snapshot { players, .. } = message {
                self.states = players;
            }
            let to = self
                .seats
                .iter()
                .filter(|(_, s)| s.encoding == Encoding::Json)
                .map(|(&id, _)| id);
            let before = out.deliveries.len();
            out.share(to, Frame::Text(text));
            self.stats.snapshots += (out.deliveries.len() - before) as u64;
        }
        if self.seats.values().any(|s| s.encoding == Encoding::Compact) {
            self.share_binary(tick, out);
        }
    }

    fn share_binary(&mut self, tick: Tick, out: &mut Outbox) {
        let sim = self.world.sim_config().clone();
        let truth = delta::quantise_all(&self.states, &sim);
        self.tail.clear();
        compact::encode_tail_quantised(&truth, &mut self.tail);
        self.truths.push(tick, truth);
        let Some(truth) = self.truths.newest() else {
            return;
        };
        let grid = self
            .interest
            .radius
            .map(|r| Grid::new(&self.states, r, sim.arena));
        let mut frames = Frames {
            scene: Scene {
                tick,
                states: &self.states,
                truth,
                grid: grid.as_ref(),
                sim: &sim,
                config: &self.interest,
            },
            truths: &self.truths,
            tail: &self.tail,
            budget: self.interest.budget.saturating_sub(DELTA_HEAD_BYTES),
            shared: BTreeMap::new(),
            stats: &mut self.stats,
        };
        for (&id, seat) in &self.seats {
            if seat.encoding != Encoding::Compact {
                continue;
            }
            let Ok(at) = self.states.binary_search_by_key(&id, |p| p.id) else {
                continue;
            };
            let frame = if let Some(viewer) = self.viewers.get_mut(&id) {
                frames.for_viewer(viewer, at)
            } else {
                let mut frame = Vec::with_capacity(compact::HEAD_BYTES + self.tail.len());
                compact::encode_head(tick, &self.states[at], &mut frame);
                frame.extend_from_slice(&self.tail);
                frame
            };
            frames.stats.binary_bytes += frame.len() as u64;
            frames.stats.snapshots += 1;
            out.send(id, Frame::Binary(frame));
        }
    }
}

/// What this tick's binary frames are built from.
struct Frames<'a> {
    scene: Scene<'a>,
    truths: &'a Truths,
    /// The full compact tail of everyone.
    tail: &'a [u8],
    /// Bytes a delta body may take.
    budget: usize,
    /// Bodies shared by clients whose baseline was the room's whole truth
    /// at a tick (`None`: over the budget, built per client).
    shared: BTreeMap<Tick, Option<Vec<u8>>>,
    stats: &'a mut RoomStats,
}

impl Frames<'_> {
    /// The frame for the viewer of the player at index `at`, recorded as
    /// sent.
    fn for_viewer(&mut self, viewer: &mut Viewer, at: usize) -> Vec<u8> {
        let scene = &self.scene;
        let tick = scene.tick;
        let own = &scene.states[at];
        let mut frame = Vec::with_capacity(compact::HEAD_BYTES + self.tail.len());
        let seen = viewer.view(at, scene);
        // A complete baseline is read from the room's ring; a partial one
        // is copied out of the viewer, which the delta then updates.
        let baseline = viewer.baseline().and_then(|sent| {
            let set: Cow<'_, [Entity]> = if sent.is_complete() {
                Cow::Borrowed(self.truths.get(sent.tick)?)
            } else {
                Cow::Owned(self.truths.set_of(sent)?.to_vec())
            };
            Some((sent.tick, sent.is_complete(), set))
        });
        let sent = match baseline {
            None => {
                // Nothing to build on: a full frame of what it sees.
                compact::encode_head(tick, own, &mut frame);
                viewer.refreshed_all(tick);
                if let Some(seen) = &seen {
                    let set: Vec<Entity> = seen.iter().map(|&i| scene.truth[i]).collect();
                    compact::encode_tail_quantised(&set, &mut frame);
                    Sent::partial(tick, set)
                } else {
                    frame.extend_from_slice(self.tail);
                    Sent::complete(tick)
                }
            }
            Some((base_tick, base_complete, base_set)) => {
                self.stats.deltas += 1;
                delta::encode_head(tick, base_tick, own, &mut frame);
                let budget = self.budget;
                let body = (seen.is_none() && base_complete)
                    .then(|| {
                        self.shared
                            .entry(base_tick)
                            .or_insert_with(|| {
                                let ticks = tick.0.saturating_sub(base_tick.0);
                                let mut body = Vec::new();
                                delta::encode_body(
                                    &base_set,
                                    scene.truth,
                                    ticks,
                                    scene.sim,
                                    &mut body,
                                );
                                (body.len() <= budget).then_some(body)
                            })
                            .as_deref()
                    })
                    .flatten();
                if let Some(body) = body {
                    frame.extend_from_slice(body);
                    viewer.refreshed_all(tick);
                    Sent::complete(tick)
                } else {
                    let (set, complete, body) =
                        viewer.delta(at, seen.as_deref(), &base_set, base_tick, budget, scene);
                    if body.len() > budget {
                        self.stats.over_budget += 1;
                    }
                    frame.extend_from_slice(&body);
                    if complete {
                        Sent::complete(tick)
                    } else {
                        Sent::partial(tick, set)
                    }
                }
            }
        };
        viewer.record(sent);
        frame
    }
}
