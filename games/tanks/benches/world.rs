//! The server's per-tick cost: `World::step` with 16, 64 and 256 moving
//! players, and encoding one snapshot message for as many players.
//!
//! Run with `cargo bench -p skirmish-core --bench world`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use skirmish_core::{encode, InputMode, PlayerId, ServerMessage, Tick, World};
use skirmish_tanks::{Arena, SimConfig, Tanks, WireInput};

fn world_with(players: u32) -> World<Tanks> {
    let mut world = World::of(SimConfig::default(), Arena::default(), 7);
    for i in 1..=players {
        world
            .join_with(PlayerId(i), &format!("p{i}"), InputMode::Queued)
            .expect("fresh ids");
    }
    world
}

/// One input for every player: all move, some turn, a few fire.
fn feed(world: &mut World<Tanks>, players: u32, tick: u32) {
    for i in 1..=players {
        let input = WireInput {
            tick: Tick(tick),
            turn: if (i + tick / 20) % 3 == 0 { 0.7 } else { -0.3 },
            throttle: 1.0,
            fire: (i + tick) % 17 == 0,
            view_tick: Some(f64::from(world.tick().0) - 2.0),
        };
        world.receive(PlayerId(i), &[input]);
    }
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("world");
    for players in [16u32, 64, 256] {
        let mut world = world_with(players);
        let mut tick = 0;
        // Warm up: histories full, everyone spread out.
        for _ in 0..40 {
            tick += 1;
            feed(&mut world, players, tick);
            world.step();
        }
        group.bench_with_input(BenchmarkId::new("step", players), &players, |b, &n| {
            b.iter(|| {
                tick += 1;
                feed(&mut world, n, tick);
                black_box(world.step().len())
            });
        });
        let message = ServerMessage::<skirmish_tanks::Tanks>::Snapshot {
            server_tick: world.tick(),
            players: world.snapshot(),
        };
        let bytes = encode(&message).len();
        println!(
            "snapshot of {players} players: {bytes} bytes, {} bytes per player",
            bytes / players as usize
        );
        group.bench_with_input(
            BenchmarkId::new("encode snapshot", players),
            &players,
            |b, _| b.iter(|| black_box(encode(black_box(&message)).len())),
        );
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
