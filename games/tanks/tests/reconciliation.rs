//! Scenario tests for prediction and reconciliation of the controlled player
//! (LPR-1, LPR-2, LPSS-1..3, RS-1, RS-2, RS-4, RS-8, CAPS-2).

mod common;

use common::{at, forward, open};
use std::time::Duration;

use skirmish_core::{
    CorrectionOutcome, LocalPlayer, OwnState, PushError, ReconcileError, SmoothingConfig, Tick,
    Vec2,
};
use skirmish_tanks::{replay, simulate, MoveInput, PlayerState, Pose, SimConfig, Tanks};

/// A player at (500, 600) that has accepted a first state and predicted
/// `ticks` full-throttle steps.
fn player_with(ticks: u32) -> LocalPlayer<Tanks> {
    let mut p = LocalPlayer::new(open(), SmoothingConfig::default(), at(500.0, 600.0));
    let state = PlayerState::at(Tick(1), None, at(500.0, 600.0));
    p.accept(state.stamp(), &state).unwrap();
    for t in 1..=ticks {
        p.step(Tick(t), forward(t), None).unwrap();
    }
    p
}

fn pending_ticks(p: &LocalPlayer<Tanks>) -> Vec<u32> {
    p.pending().iter().map(|s| s.tick.0).collect()
}

#[test]
fn lpr1_acceptance_rebuilds_prediction_from_latest_baseline() {
    let mut p = player_with(5);
    assert_eq!(p.predicted().position, Vec2::new(550.0, 600.0));

    // The server saw the player a little short (515 instead of 520) at ack 2.
    let state = PlayerState::at(Tick(10), Some(Tick(2)), at(515.0, 600.0));
    let report = p.accept(state.stamp(), &state).unwrap();

    let expected = replay(state.pose(), p.pending().iter(), &open());
    assert_eq!(pending_ticks(&p), vec![3, 4, 5]);
    assert_eq!(report.replayed, 3);
    assert!(p.predicted().bits_eq(&expected));
    assert_eq!(p.predicted().position, Vec2::new(545.0, 600.0));
    // The replay result is the smoothing target: the visible pose converges to it.
    assert!(p.rebuilt().bits_eq(&expected));
    for _ in 0..60 {
        p.advance_frame(1.0 / 60.0);
    }
    assert!(p.visible(1.0).bits_eq(&expected));
}

#[test]
fn lpr2_repeated_updates_rebuild_without_consuming_pending_inputs() {
    let mut p = player_with(5);
    let first = PlayerState::at(Tick(10), Some(Tick(2)), at(520.0, 600.0));
    p.accept(first.stamp(), &first).unwrap();
    assert_eq!(pending_ticks(&p), vec![3, 4, 5]);
    let after_first = p.predicted();

    let second = PlayerState::at(Tick(11), Some(Tick(4)), at(538.0, 600.0));
    let report = p.accept(second.stamp(), &second).unwrap();
    assert_eq!(report.pruned, 2);
    assert_eq!(pending_ticks(&p), vec![5], "only ticks <= 4 are pruned");
    assert_eq!(after_first.position.x, 550.0);
    assert_eq!(
        p.predicted().position.x,
        548.0,
        "rebuilt from its own baseline"
    );

    // Tick 5 stays available for a third, later baseline.
    let third = PlayerState::at(Tick(12), Some(Tick(4)), at(530.0, 600.0));
    assert_eq!(p.accept(third.stamp(), &third).unwrap().replayed, 1);
    assert_eq!(p.predicted().position.x, 540.0);
}

#[test]
fn lpss1_authoritative_baseline_updates_on_player_state() {
    let mut p = player_with(3);
    let state = PlayerState::at(
        Tick(7),
        Some(Tick(3)),
        Pose::new(Vec2::new(531.0, 598.0), 0.25),
    );
    p.accept(state.stamp(), &state).unwrap();
    let baseline = p.authoritative().unwrap();
    assert_eq!(baseline.position, Vec2::new(531.0, 598.0));
    assert_eq!(baseline.rotation, 0.25);
    assert_eq!(baseline.ack_move_tick, Some(Tick(3)));
    assert_eq!(baseline.tick, Tick(7));
}

#[test]
fn lpss2_pending_inputs_pruned_on_acknowledgment() {
    let mut p = player_with(6);
    let state = PlayerState::at(Tick(9), Some(Tick(4)), at(540.0, 600.0));
    p.accept(state.stamp(), &state).unwrap();
    assert_eq!(pending_ticks(&p), vec![5, 6]);
    assert!(p.pending().iter().all(|s| s.tick > Tick(4)));
}

#[test]
fn lpss3_presentation_target_is_baseline_plus_replay_displacement() {
    let config = open();
    let mut p =
        LocalPlayer::<Tanks>::new(config.clone(), SmoothingConfig::default(), at(500.0, 600.0));
    let state = PlayerState::at(Tick(1), None, at(500.0, 600.0));
    p.accept(state.stamp(), &state).unwrap();
    let turning = |t| MoveInput {
        turn: 0.5,
        ..forward(t)
    };
    for t in 1..=4 {
        p.step(Tick(t), turning(t), None).unwrap();
    }
    let base = Pose::new(Vec2::new(505.0, 601.0), 0.1);
    let newer = PlayerState::at(Tick(5), Some(Tick(1)), base);
    p.accept(newer.stamp(), &newer).unwrap();

    // The displacement and rotation of replaying ticks 2..=4, measured from an
    // arbitrary origin far from walls, added to the baseline.
    let origin = Pose::new(Vec2::new(1000.0, 600.0), 0.1);
    let moved = (2..=4).fold(origin, |pose, t| {
        simulate(pose, &turning(t), Duration::from_millis(50), &config)
    });
    let target = p.rebuilt();
    let expected = base.position + (moved.position - origin.position);
    assert!(target.position.distance(expected) < 1e-3);
    assert!((target.rotation - (base.rotation + (moved.rotation - origin.rotation))).abs() < 1e-6);
    assert!(target.bits_eq(&p.predicted()));
}

#[test]
fn rs1_example_timeline_rewind_replay_lands_on_same_prediction() {
    // One step moves 5 u, as in the timeline: seq 1 -> 5, 2 -> 10, 3 -> 15.
    let config = SimConfig {
        speed: 100.0,
        ..open()
    };
    let origin = at(100.0, 100.0);
    let mut p = LocalPlayer::<Tanks>::new(config, SmoothingConfig::default(), origin);
    let state = PlayerState::at(Tick(1), None, origin);
    p.accept(state.stamp(), &state).unwrap();
    for seq in 1..=3 {
        p.step(Tick(seq), forward(seq), None).unwrap();
    }
    assert_eq!(p.predicted().position, Vec2::new(115.0, 100.0));

    let newer = PlayerState::at(Tick(2), Some(Tick(2)), at(110.0, 100.0));
    let report = p.accept(newer.stamp(), &newer).unwrap();
    assert_eq!(p.predicted().position, Vec2::new(115.0, 100.0));
    assert_eq!((report.pruned, report.replayed), (2, 1));
    assert_eq!(report.error, 0.0);
    assert_eq!(report.outcome, CorrectionOutcome::None);
    assert_eq!(pending_ticks(&p), vec![3]);
}

#[test]
fn rs2_prediction_error_rewinds_replays_and_corrects_smoothly() {
    let config = SimConfig {
        speed: 100.0,
        ..open()
    };
    let origin = at(100.0, 100.0);
    let mut p = LocalPlayer::<Tanks>::new(config, SmoothingConfig::default(), origin);
    let state = PlayerState::at(Tick(1), None, origin);
    p.accept(state.stamp(), &state).unwrap();
    for seq in 1..=3 {
        p.step(Tick(seq), forward(seq), None).unwrap();
    }
    // A collision stopped the server's player at 109 instead of 110.
    let newer = PlayerState::at(Tick(2), Some(Tick(2)), at(109.0, 100.0));
    let report = p.accept(newer.stamp(), &newer).unwrap();
    assert_eq!(p.predicted().position, Vec2::new(114.0, 100.0));
    assert_eq!(report.error, 1.0);
    assert_eq!(report.outcome, CorrectionOutcome::Smoothed);
    // The visible pose does not jump: it is still at 115, then glides to 114.
    assert!((p.visible(1.0).position.x - 115.0).abs() < 1e-4);
    let mut last = p.visible(1.0).position.x;
    for _ in 0..30 {
        p.advance_frame(1.0 / 60.0);
        let x = p.visible(1.0).position.x;
        assert!(x <= last && x >= 114.0, "monotonic, no overshoot: {x}");
        last = x;
    }
    assert_eq!(last, 114.0);
    assert_eq!((p.stats().corrections, p.stats().snaps), (1, 0));
}

#[test]
fn rs4_full_pending_buffer_refuses_counts_and_recovers() {
    let mut p = LocalPlayer::<Tanks>::with_pending_capacity(
        open(),
        SmoothingConfig::default(),
        at(500.0, 600.0),
        4,
    );
    for t in 1..=4 {
        p.step(Tick(t), forward(t), None).unwrap();
    }
    let before = p.predicted();
    assert_eq!(
        p.step(Tick(5), forward(5), None),
        Err(PushError::Full { capacity: 4 })
    );
    assert_eq!(p.stats().pending_full, 1);
    assert!(
        p.predicted().bits_eq(&before),
        "a refused step is not predicted"
    );
    assert_eq!(pending_ticks(&p), vec![1, 2, 3, 4], "nothing evicted");

    let state = PlayerState::at(Tick(3), Some(Tick(2)), at(520.0, 600.0));
    p.accept(state.stamp(), &state).unwrap();
    p.step(Tick(6), forward(6), None).unwrap();
    assert_eq!(pending_ticks(&p), vec![3, 4, 6]);
}

#[test]
fn rs8_reconciliation_reports_error_and_replayed_inputs() {
    let mut p = player_with(6);
    let newer = PlayerState::at(Tick(5), Some(Tick(3)), at(526.0, 603.0));
    let report = p.accept(newer.stamp(), &newer).unwrap();
    assert_eq!(report.server_tick, Tick(5));
    assert_eq!(report.ack, Some(Tick(3)));
    assert_eq!((report.pruned, report.replayed), (3, 3));
    assert!(
        (report.error - 5.0).abs() < 1e-4,
        "old 560,600 vs new 556,603"
    );
    assert_eq!(report.outcome, CorrectionOutcome::Smoothed);
    let stats = p.stats();
    assert_eq!(stats.replayed_steps, 3);
    assert_eq!(stats.corrections, 1);
    assert!((stats.last_correction - 5.0).abs() < 1e-4);
    assert_eq!(stats.max_correction, stats.last_correction);
}

#[test]
fn caps2_authoritative_state_applies_at_once_and_presentation_converges() {
    let mut p = player_with(4);
    let state = PlayerState {
        hp: 80,
        velocity: Some(Vec2::new(200.0, 0.0)),
        ..PlayerState::at(Tick(6), Some(Tick(4)), at(536.0, 600.0))
    };
    p.accept(state.stamp(), &state).unwrap();
    assert_eq!(
        p.authoritative(),
        Some(&state),
        "hp and velocity too, at once"
    );
    assert_eq!(p.predicted().position, Vec2::new(536.0, 600.0));
    assert!(
        p.visible_error() > 0.0,
        "visible differs only through the correction"
    );
    for _ in 0..60 {
        p.advance_frame(1.0 / 60.0);
    }
    assert!(p.visible(1.0).bits_eq(&state.pose()));
}

#[test]
fn stale_and_non_finite_states_are_rejected_and_counted() {
    let mut p = player_with(3);
    let first = PlayerState::at(Tick(8), Some(Tick(1)), at(510.0, 600.0));
    p.accept(first.stamp(), &first).unwrap();
    let before = (p.predicted(), pending_ticks(&p));
    let stale = PlayerState::at(Tick(8), Some(Tick(3)), at(0.0, 0.0));
    assert_eq!(
        p.accept(stale.stamp(), &stale),
        Err(ReconcileError::Stale {
            accepted: Tick(8),
            got: Tick(8)
        })
    );
    let broken = PlayerState::at(Tick(9), Some(Tick(3)), at(f32::NAN, 0.0));
    assert!(p.accept(broken.stamp(), &broken).is_err());
    assert_eq!((p.predicted(), pending_ticks(&p)), before);
    assert_eq!(
        (p.stats().rejected_stale, p.stats().rejected_invalid),
        (1, 1)
    );
    assert_eq!(p.authoritative().unwrap().tick, Tick(8));
}

#[test]
fn render_interpolation_is_continuous_across_reconciliation() {
    let mut p = player_with(4);
    assert_eq!(p.visible(0.5).position.x, 535.0);
    let before: Vec<_> = [0.0, 0.25, 0.5, 1.0].map(|a| p.visible(a)).to_vec();
    let state = PlayerState::at(Tick(6), Some(Tick(2)), at(517.0, 602.0));
    p.accept(state.stamp(), &state).unwrap();
    for (a, old) in [0.0, 0.25, 0.5, 1.0].iter().zip(before) {
        assert!(p.visible(*a).position.distance(old.position) < 1e-3);
    }
}
