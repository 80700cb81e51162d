//! Reconciliation cost: `reconcile` with 32 pending steps (the seed's worst
//! case) next to 32 single live-prediction steps.
//!
//! Run with `cargo bench -p skirmish-core --bench reconcile`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use skirmish_core::{LocalPlayer, OwnState, SmoothingConfig, Tick, Vec2};
use skirmish_tanks::{simulate, MoveInput, PlayerState, Pose, SimConfig, Tanks};

const PENDING: u32 = 32;

fn input(tick: u32) -> MoveInput {
    MoveInput {
        tick: Tick(tick),
        turn: if tick % 7 < 3 { 0.6 } else { -0.2 },
        throttle: 1.0,
        fire: false,
    }
}

fn bench(c: &mut Criterion) {
    let config = SimConfig::default();
    let start = Pose::new(Vec2::new(300.0, 600.0), 0.0);

    let mut group = c.benchmark_group("prediction");
    group.bench_function("32 single steps", |b| {
        b.iter(|| {
            let mut pose = start;
            for t in 1..=PENDING {
                pose = simulate(pose, &input(t), config.cadence(), &config);
            }
            black_box(pose)
        });
    });

    let mut player = LocalPlayer::<Tanks>::new(config.clone(), SmoothingConfig::default(), start);
    for t in 1..=PENDING {
        player
            .step(Tick(t), input(t), None)
            .expect("the buffer holds 32 steps");
    }
    let mut server_tick = 0;
    group.bench_function("reconcile with 32 pending", |b| {
        b.iter(|| {
            server_tick += 1;
            let state = PlayerState {
                id: skirmish_core::PlayerId(1),
                tick: Tick(server_tick),
                ack_move_tick: None,
                position: start.position,
                rotation: 0.0,
                hp: 100,
                alive: true,
                velocity: None,
            };
            let state = black_box(&state);
            black_box(player.accept(state.stamp(), state))
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
