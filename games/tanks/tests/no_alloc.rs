//! Steady-state prediction and reconciliation allocate nothing on the heap.
//!
//! This file is its own test binary with a single test, so the counting
//! allocator sees almost only this test's allocations: the harness's own
//! thread may allocate at any moment, so a measurement is taken up to three
//! times and one clean run passes (code that allocates does so every time,
//! the harness does not).
#![cfg(not(target_arch = "wasm32"))]

use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};
use std::alloc::System;

use skirmish_core::{LocalPlayer, OwnState, SmoothingConfig, Tick, Vec2};
use skirmish_tanks::{MoveInput, PlayerState, Pose, SimConfig, Tanks};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

fn input(tick: u32) -> MoveInput {
    MoveInput {
        tick: Tick(tick),
        turn: if tick % 7 < 3 { 0.6 } else { -0.2 },
        throttle: 1.0,
        fire: tick % 5 == 0,
    }
}

#[test]
fn predict_reconcile_and_frames_allocate_nothing_in_steady_state() {
    let spawn = Pose::new(Vec2::new(300.0, 600.0), 0.0);
    let mut player = LocalPlayer::new(SimConfig::default(), SmoothingConfig::default(), spawn);
    let mut tick = 0;
    let mut server_tick = 0;
    let mut cycle = |player: &mut LocalPlayer<Tanks>| {
        tick += 1;
        server_tick += 1;
        player
            .step(Tick(tick), input(tick), None)
            .expect("the buffer never fills");
        // The server is 32 steps behind and sees the player slightly off, so
        // every reconciliation replays 32 steps and corrects a little.
        let ack = tick.checked_sub(32).map(Tick);
        let offset = if server_tick % 3 == 0 { 2.0 } else { 0.0 };
        let state = PlayerState::at(
            Tick(server_tick),
            ack,
            Pose::new(spawn.position + Vec2::new(offset, 0.0), 0.0),
        );
        let report = player
            .accept(state.stamp(), &state)
            .expect("states are newer");
        for _ in 0..3 {
            player.advance_frame(1.0 / 60.0);
            std::hint::black_box(player.visible(0.5));
        }
        report
    };
    for _ in 0..64 {
        cycle(&mut player);
    }

    let mut measured = Vec::new();
    for _ in 0..3 {
        let region = Region::new(GLOBAL);
        let mut replayed = 0;
        for _ in 0..1000 {
            replayed += cycle(&mut player).replayed;
        }
        let stats = region.change();
        assert_eq!(replayed, 32 * 1000, "every reconciliation replays 32 steps");
        if (stats.allocations, stats.reallocations) == (0, 0) {
            return;
        }
        measured.push(stats);
    }
    panic!("steady state allocates: {measured:?}");
}
