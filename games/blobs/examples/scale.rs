//! The blob arena at scale, in one process: `PLAYERS` players (default
//! 500), each seated binary all the way and acknowledging every snapshot
//! as a page does, steering a slow random walk, and `PELLETS` pellets
//! (default 5,000) at the game's default density (5,000 on a square of
//! 5,000 units, the side growing with the pellets, as `cargo xtask scale`
//! sets it) with the game's interest radius, for `TICKS` ticks (default 400, 20 s at 20 Hz). Prints the
//! room's tick time (world step and every snapshot encoded), CPU per
//! player at 20 Hz, and the bytes sent per snapshot and per entity in a
//! player's view. Then what each kind of change costs, apart: the
//! library's delta coder run on the pellets alone and on the blobs alone
//! of the first 50 players' views, tick to tick, bytes per pellet change
//! (an eaten one's removal or a new one's arrival) and per moving blob.
//!
//! `WORKERS` (default 1) spreads the snapshot phase over that many threads
//! ([`Room::spread_snapshots`]).
//!
//! `cargo run --release -p skirmish-blobs --example scale [PLAYERS PELLETS TICKS WORKERS]`

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use skirmish_blobs::{Arena, Bit, BlobSettings, Blobs, MOVE};
use skirmish_core::delta::{self, Entity};
use skirmish_core::{
    decode_inputs, encode_inputs, percentile, ClientMessage, Encoding, Frame, InterestConfig,
    Networked, Outbox, PlayerId, Room, RoomConfig, Seating, SeededRng, ServerGame, Tick, Ticked,
    Vec2,
};

fn arg(n: usize, default: usize) -> usize {
    std::env::args()
        .nth(n)
        .and_then(|a| a.parse().ok())
        .unwrap_or(default)
}

/// A room of `players` binary pages and `pellets` pellets at the default
/// density, with the game's interest radius.
fn arena(players: usize, pellets: usize, out: &mut Outbox) -> Result<Room<Blobs>, String> {
    let settings = BlobSettings {
        // 5,000 pellets on 5,000 x 5,000: 1 per 5,000 square units.
        side: (pellets as f32 * 5000.0).sqrt().round(),
        pellets: pellets as u32,
    };
    let mut room: Room<Blobs> = Room::new(RoomConfig {
        name: "scale".into(),
        capacity: usize::MAX,
        seed: 1,
        interest: InterestConfig {
            radius: Blobs::interest_radius(&settings),
            ..InterestConfig::default()
        },
        game: settings,
    });
    let seat = Seating {
        encoding: Encoding::Compact,
        protocol: 2,
        datagrams: false,
        binary_control: true,
    };
    for i in 1..=players {
        room.join(PlayerId(i as u32), &format!("b{i}"), seat, out)
            .map_err(|e| format!("player {i} cannot join: {e}"))?;
    }
    Ok(room)
}

fn main() {
    let (players, pellets, ticks) = (arg(1, 500), arg(2, 5000), arg(3, 400));
    let mut out = Outbox::new();
    let mut room = match arena(players, pellets, &mut out) {
        Ok(mut room) => {
            room.spread_snapshots(arg(4, 1));
            room
        }
        Err(e) => {
            eprintln!("scale: {e}");
            return;
        }
    };
    let mut rng = SeededRng::new(3);
    let mut angles: Vec<u16> = (0..players).map(|_| rng.below(65_536) as u16).collect();
    let mut last = Tick::ZERO;
    let mut times = Vec::with_capacity(ticks);
    let (mut bytes, mut frames, mut seen, mut other) = (0u64, 0u64, 0u64, 0u64);
    let mut message = Vec::new();
    let mut apart = Apart::default();
    let mut views = Vec::new();
    for _ in 0..ticks {
        out.clear();
        for (i, angle) in angles.iter_mut().enumerate() {
            *angle = angle.wrapping_add((rng.below(4001) as i32 - 2000) as u16);
            let steer = Ticked::new(Tick(last.0 + 1), (*angle, MOVE), None);
            message.clear();
            encode_inputs(&[steer], Some(last), None, &mut message);
            let decoded: ClientMessage<_> = match decode_inputs(&message) {
                Ok(m) => m,
                Err(e) => {
                    eprintln!("scale: an input does not decode: {e}");
                    return;
                }
            };
            let id = PlayerId(i as u32 + 1);
            let _ =
                room.receive_frame_at(id, &decoded, (false, &message), Duration::ZERO, &mut out);
        }
        out.clear();
        let started = Instant::now();
        last = room.tick(&mut out);
        times.push(started.elapsed().as_secs_f64() * 1000.0);
        for &(_, i) in out.deliveries() {
            match &out.frames()[i] {
                Frame::Binary(frame) if delta::frame_tick(frame).is_some() => {
                    bytes += frame.len() as u64;
                    frames += 1;
                }
                Frame::Binary(frame) => other += frame.len() as u64,
                Frame::Text(text) => other += text.len() as u64,
            }
        }
        // The first VIEWERS players' views stand for everyone's size:
        // measuring all of them every tick would cost more than the tick.
        let now = views_of(&room, VIEWERS);
        let sampled: u64 = now
            .iter()
            .map(|(blobs, pellets)| (1 + blobs.len() + pellets.len()) as u64)
            .sum();
        seen += sampled * players as u64 / now.len().max(1) as u64;
        if times.len() > ticks / 2 {
            for (before, after) in views.iter().zip(&now) {
                apart.add(before, after, *room.world().config());
            }
        }
        views = now;
    }
    // The first ticks fill the arena and send whole frames: the steady
    // state is from the second half on.
    let half = &times[times.len() / 2..];
    let mean = half.iter().sum::<f64>() / half.len() as f64;
    println!(
        "blobs at scale: {players} players, {} pellets, {ticks} ticks",
        room.world().game().pellets.len()
    );
    println!(
        "tick p50 {:.2} ms, p99 {:.2} ms, mean {mean:.2} ms (second half); CPU per player at 20 Hz: {:.4} % of a core",
        percentile(half, 50.0),
        percentile(half, 99.0),
        mean * 20.0 / 1000.0 * 100.0 / players as f64
    );
    println!(
        "{frames} snapshots, {:.0} B per snapshot, {:.3} B per entity in view per snapshot; \
         {:.1} B per player per tick of other messages (events, roster) (whole run)",
        bytes as f64 / frames.max(1) as f64,
        bytes as f64 / seen.max(1) as f64,
        other as f64 / (players * ticks).max(1) as f64
    );
    apart.print();
}

/// Views whose tick-to-tick changes are costed apart, and whose sizes
/// stand for every view's.
const VIEWERS: usize = 50;

/// One player's view: the blobs and the pellets in it, as snapshots
/// carry them, in id order.
type View = (Vec<Entity<Bit>>, Vec<Entity<Bit>>);

/// The first `viewers` players' views this tick (within their radius,
/// themselves left out).
fn views_of(room: &Room<Blobs>, viewers: usize) -> Vec<View> {
    let world = room.world();
    let config = world.config();
    let radius = Blobs::interest_radius(&BlobSettings::default()).unwrap_or(f32::MAX);
    let blobs: Vec<_> = world
        .players()
        .filter_map(|(id, _)| world.state_of(id))
        .collect();
    let things = Blobs::things(world.game());
    blobs
        .iter()
        .take(viewers)
        .map(|me| {
            let r = Blobs::view_radius(me, radius);
            let near = |at: Vec2| at.distance(me.at) <= r;
            let seen = blobs
                .iter()
                .filter(|b| b.id != me.id && near(b.at))
                .map(|b| (b.id, Blobs::quantise(b, config)))
                .collect();
            let pellets = things
                .iter()
                .filter(|t| near(t.at))
                .map(|t| (t.id.wire(), t.entity))
                .collect();
            (seen, pellets)
        })
        .collect()
}

/// Bytes of the delta coder's body for some changes, and how many.
#[derive(Clone, Copy, Default)]
struct Cost {
    bytes: u64,
    count: u64,
}

impl Cost {
    fn add(&mut self, bytes: u64, count: usize) {
        self.bytes += bytes;
        self.count += count as u64;
    }

    /// Bytes per change.
    fn per(self) -> f64 {
        self.bytes as f64 / self.count.max(1) as f64
    }
}

/// What each kind of change costs, the empty body's three counts left out.
#[derive(Default)]
struct Apart {
    pellets: Cost,
    blobs: Cost,
    gone: Cost,
    new: Cost,
}

impl Apart {
    fn print(&self) {
        let Apart {
            pellets,
            blobs,
            gone,
            new,
        } = self;
        println!(
            "apart (second half, {VIEWERS} views): {:.2} B per pellet change ({} changes), {:.2} B per moving blob ({} moves)",
            pellets.per(),
            pellets.count,
            blobs.per(),
            blobs.count
        );
        println!(
            "of which: {:.2} B per pellet gone ({}), {:.2} B per pellet new to a view ({})",
            gone.per(),
            gone.count,
            new.per(),
            new.count
        );
    }

    fn add(&mut self, before: &View, after: &View, arena: Arena) {
        let body = |a: &[Entity<Bit>], b: &[Entity<Bit>]| {
            let mut out = Vec::new();
            delta::encode_body(a, b, 1, &arena, &mut out);
            out.len().saturating_sub(3) as u64
        };
        let ids = |set: &[Entity<Bit>]| set.iter().map(|(id, _)| *id).collect::<BTreeSet<_>>();
        let (was, is) = (ids(&before.1), ids(&after.1));
        self.pellets.add(
            body(&before.1, &after.1),
            was.symmetric_difference(&is).count(),
        );
        // The same changes in two steps: the removals, then the arrivals.
        let stayed: Vec<Entity<Bit>> = before
            .1
            .iter()
            .filter(|(id, _)| is.contains(id))
            .copied()
            .collect();
        self.gone
            .add(body(&before.1, &stayed), was.difference(&is).count());
        self.new
            .add(body(&stayed, &after.1), is.difference(&was).count());
        // Blobs that stayed in view and moved; any other is not a move.
        let kept: Vec<Entity<Bit>> = before
            .0
            .iter()
            .filter(|(id, _)| after.0.iter().any(|(a, _)| a == id))
            .copied()
            .collect();
        let now: Vec<Entity<Bit>> = after
            .0
            .iter()
            .filter(|(id, _)| kept.iter().any(|(k, _)| k == id))
            .copied()
            .collect();
        let moved = kept.iter().zip(&now).filter(|(a, b)| a != b).count();
        self.blobs.add(body(&kept, &now), moved);
    }
}
