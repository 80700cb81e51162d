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

use std::sync::Arc;

use super::binary::{self, view_radius_of, Job, Shared};
use super::{Frame, Outbox, Room};
use crate::server::interest::{
    delta_head_bytes, nearest_view, Grid, Scene, SentFrame, MAX_JSON_VIEW,
};
use crate::server::world::ServerGame;
use crate::shared::compact;
use crate::shared::delta::Entity;
use crate::shared::game::OwnState;
use crate::shared::protocol::{encode, Encoding, ServerMessage};
use crate::shared::tick::Tick;

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
        let scene = Scene {
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
        };
        let made = {
            // Each binary client's job: its index, its viewer (walked beside
            // the seats, both in id order) and its input timing.
            let mut viewers = self.viewers.iter_mut().peekable();
            let mut jobs = Vec::with_capacity(self.seats.len());
            for (&id, seat) in &self.seats {
                while viewers.next_if(|(v, _)| **v < id).is_some() {}
                let viewer = viewers.next_if(|(v, _)| **v == id).map(|(_, v)| v);
                if seat.encoding != Encoding::Compact {
                    continue;
                }
                let Ok(at) = self.states.binary_search_by_key(&id, OwnState::id) else {
                    continue;
                };
                let timing = seat.scheduled.then(|| self.world.take_timing(id)).flatten();
                jobs.push(Job {
                    id,
                    at,
                    viewer,
                    timing,
                    echo: seat.echo,
                });
            }
            let shared = Shared::<G> {
                scene: &scene,
                states: &self.states,
                truths: &self.truths,
                tail: &self.tail,
                // The whole frame fits the budget: a protocol-2 head's
                // timing and receipt too (a frame past a datagram goes on
                // the stream).
                budget: (self.interest.budget)
                    .saturating_sub(delta_head_bytes::<G::Own>() + compact::TIMING_BYTES),
                complete: Arc::new(SentFrame::full(tick, None)),
            };
            let (made, counts) = binary::frames(jobs, &shared, self.workers);
            self.stats.add(&counts);
            made
        };
        for made in made {
            out.send(made.id, Frame::Binary(made.frame), true);
            if let Some(echo) = made.echo {
                out.send_later(made.id, Frame::Binary(echo));
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
