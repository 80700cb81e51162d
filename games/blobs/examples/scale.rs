//! The blob arena at scale, in one process: `PLAYERS` players (default
//! 500), each seated binary all the way and acknowledging every snapshot
//! as a page does, steering a slow random walk, and `PELLETS` pellets
//! (default 5,000) on a square of 5,000 units with the game's interest
//! radius, for `TICKS` ticks (default 400, 20 s at 20 Hz). Prints the
//! room's tick time (world step and every snapshot encoded), CPU per
//! player at 20 Hz, and the bytes sent per snapshot and per entity in a
//! player's view.
//!
//! `cargo run --release -p skirmish-blobs --example scale [PLAYERS PELLETS TICKS]`

use std::time::{Duration, Instant};

use skirmish_blobs::{BlobSettings, Blobs, MOVE};
use skirmish_core::{
    decode_inputs, encode_inputs, percentile, ClientMessage, Encoding, Frame, InterestConfig,
    Outbox, PlayerId, Room, RoomConfig, Seating, SeededRng, ServerGame, Tick, Ticked,
};

fn arg(n: usize, default: usize) -> usize {
    std::env::args()
        .nth(n)
        .and_then(|a| a.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let (players, pellets, ticks) = (arg(1, 500), arg(2, 5000), arg(3, 400));
    let settings = BlobSettings {
        side: 5000.0,
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
    let mut out = Outbox::new();
    let seat = Seating {
        encoding: Encoding::Compact,
        protocol: 2,
        datagrams: false,
        binary_control: true,
    };
    for i in 1..=players {
        if let Err(e) = room.join(PlayerId(i as u32), &format!("b{i}"), seat, &mut out) {
            eprintln!("scale: player {i} cannot join: {e}");
            return;
        }
    }
    let mut rng = SeededRng::new(3);
    let mut angles: Vec<u16> = (0..players).map(|_| rng.below(65_536) as u16).collect();
    let mut last = Tick::ZERO;
    let mut times = Vec::with_capacity(ticks);
    let (mut bytes, mut frames, mut seen) = (0u64, 0u64, 0u64);
    let mut message = Vec::new();
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
            if let Frame::Binary(frame) = &out.frames()[i] {
                bytes += frame.len() as u64;
                frames += 1;
            }
        }
        seen += in_view(&room);
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
        "{frames} frames, {:.0} B per snapshot, {:.3} B per entity in view per snapshot (whole run)",
        bytes as f64 / frames.max(1) as f64,
        bytes as f64 / seen.max(1) as f64
    );
}

/// Entities in every player's view this tick (within its radius).
fn in_view(room: &Room<Blobs>) -> u64 {
    let world = room.world();
    let radius = Blobs::interest_radius(&BlobSettings::default()).unwrap_or(f32::MAX);
    let blobs: Vec<_> = world
        .players()
        .filter_map(|(id, _)| world.state_of(id))
        .collect();
    let things = Blobs::things(world.game());
    blobs
        .iter()
        .map(|me| {
            let r = Blobs::view_radius(me, radius);
            let near = |at: skirmish_core::Vec2| at.distance(me.at) <= r;
            (blobs.iter().filter(|b| near(b.at)).count()
                + things.iter().filter(|t| near(t.at)).count()) as u64
        })
        .sum()
}
