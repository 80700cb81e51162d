//! Scenario tests for the visual correction of the controlled player
//! (LPR-3..5, CAPS-3, CAPS-4, RS-5, LPSS-4).

mod common;

use common::{at, forward, open};
use skirmish_core::{CorrectionOutcome, LocalPlayer, OwnState, SmoothingConfig, Tick, Vec2};
use skirmish_tanks::{simulate, PlayerState, Pose, Tanks};

const FRAME: f32 = 1.0 / 60.0;

/// A placed player at (500, 600) with ticks 1..=4 predicted (now at 540).
fn player() -> LocalPlayer<Tanks> {
    let mut p = LocalPlayer::new(open(), SmoothingConfig::default(), at(500.0, 600.0));
    let state = PlayerState::at(Tick(1), None, at(500.0, 600.0));
    p.accept(state.stamp(), &state).unwrap();
    for t in 1..=4 {
        p.step(Tick(t), forward(t), None).unwrap();
    }
    p
}

/// The server's view at ack 2, off by `dy` from the prediction (520, 600).
fn off_by(server_tick: u32, dy: f32) -> PlayerState {
    PlayerState::at(Tick(server_tick), Some(Tick(2)), at(520.0, 600.0 + dy))
}

#[test]
fn lpr3_smoothing_does_not_redefine_gameplay_truth() {
    let mut p = player();
    let state = off_by(5, 20.0);
    p.accept(state.stamp(), &state).unwrap();
    let truth = p.predicted();
    assert_eq!(truth.position, Vec2::new(540.0, 620.0));
    for _ in 0..10 {
        p.advance_frame(FRAME);
        assert!(p.predicted().bits_eq(&truth), "frames never move the truth");
        assert!(p.visible(1.0).position.distance(truth.position) > 0.0);
    }
    // Prediction continues from the rebuilt truth, not from what is drawn.
    p.step(Tick(5), forward(5), None).unwrap();
    assert_eq!(p.predicted().position, Vec2::new(550.0, 620.0));
}

#[test]
fn lpr4_small_residual_error_converges_through_interpolation() {
    let mut p = player();
    let state = off_by(5, 6.0);
    let report = p.accept(state.stamp(), &state).unwrap();
    assert_eq!(report.outcome, CorrectionOutcome::Smoothed);
    let truth = p.predicted();
    let mut distance = p.visible(1.0).position.distance(truth.position);
    assert!((distance - 6.0).abs() < 1e-4);
    let mut frames = 0;
    while distance > 0.0 {
        p.advance_frame(FRAME);
        let d = p.visible(1.0).position.distance(truth.position);
        assert!(d < distance, "strictly converging");
        distance = d;
        frames += 1;
        assert!(p.predicted().bits_eq(&truth));
    }
    assert!(frames > 3, "converged over several frames, not at once");
    assert_eq!(p.stats().snaps, 0);
}

#[test]
fn lpr5_large_divergence_snaps_visible_pose_and_clears_correction() {
    let mut p = player();
    let newer = off_by(5, 10.0);
    p.accept(newer.stamp(), &newer).unwrap();
    assert!(p.correction().is_active());
    let far = off_by(6, 150.0);
    let report = p.accept(far.stamp(), &far).unwrap();
    assert_eq!(report.outcome, CorrectionOutcome::Snapped);
    assert!(p.correction().is_zero(), "earlier smoothing state cleared");
    assert!(p.visible(1.0).bits_eq(&p.predicted()));
    assert_eq!(p.stats().snaps, 1);
    // Later prediction continues from the rebuilt baseline.
    let rebuilt = p.predicted();
    p.step(Tick(5), forward(5), None).unwrap();
    let expected = simulate(rebuilt, &forward(5), open().cadence(), &open());
    assert!(p.predicted().bits_eq(&expected));
}

#[test]
fn lpr5_large_rotation_divergence_snaps_too() {
    let mut p = player();
    let state = PlayerState::at(
        Tick(5),
        Some(Tick(4)),
        Pose::new(Vec2::new(540.0, 600.0), 2.5),
    );
    assert_eq!(
        p.accept(state.stamp(), &state).unwrap().outcome,
        CorrectionOutcome::Snapped
    );
    assert_eq!(p.visible(1.0).rotation, 2.5);
}

#[test]
fn caps3_consecutive_small_corrections_fold_into_active_correction() {
    let mut p = player();
    let state = off_by(5, 8.0);
    p.accept(state.stamp(), &state).unwrap();
    for _ in 0..3 {
        p.advance_frame(FRAME);
    }
    let visible_before = p.visible(1.0);
    let offset_before = p.correction().offset().position;
    let newer = off_by(6, 12.0);
    let report = p.accept(newer.stamp(), &newer).unwrap();
    assert_eq!(report.outcome, CorrectionOutcome::Smoothed);
    // Folded: the old offset plus this shift, so nothing jumps.
    assert!(p.visible(1.0).position.distance(visible_before.position) < 1e-4);
    let folded = offset_before + Vec2::new(0.0, -4.0);
    assert!(p.correction().offset().position.distance(folded) < 1e-4);
    // The target is the newest rebuild only, not a stale one.
    assert_eq!(p.rebuilt().position, Vec2::new(540.0, 612.0));
    assert_eq!(p.authoritative().unwrap().tick, Tick(6));
    assert_eq!(p.stats().corrections, 2);
}

#[test]
fn caps4_correction_beyond_snap_threshold_bypasses_smoothing() {
    let mut p = player();
    let state = off_by(5, 70.0);
    let report = p.accept(state.stamp(), &state).unwrap();
    assert_eq!(report.outcome, CorrectionOutcome::Snapped);
    assert!(p.visible(1.0).bits_eq(&p.predicted()));
    assert!(p.correction().is_zero());
}

#[test]
fn caps4_correction_that_cannot_converge_within_budget_snaps() {
    let config = SmoothingConfig::default();
    let mut p = player();
    let state = off_by(5, 40.0);
    p.accept(state.stamp(), &state).unwrap();
    let mut elapsed = 0.0;
    while p.correction().is_active() {
        p.advance_frame(FRAME);
        elapsed += FRAME;
        assert!(
            elapsed <= config.budget + FRAME,
            "the budget bounds the correction"
        );
    }
    // 40 u halves five times in 500 ms: still over a unit, so it snapped.
    assert_eq!(p.stats().snaps, 1);
    assert!(p.visible(1.0).bits_eq(&p.predicted()));
}

#[test]
fn caps4_fold_into_expired_correction_snaps_at_once() {
    let config = SmoothingConfig {
        half_life: 10.0,
        ..SmoothingConfig::default()
    };
    let mut p = player();
    p.set_smoothing_config(config);
    let state = off_by(5, 8.0);
    p.accept(state.stamp(), &state).unwrap();
    // Frames long enough to exhaust the budget do snap in advance_frame, so
    // fold a new correction in just before it runs out instead.
    for _ in 0..29 {
        p.advance_frame(FRAME);
    }
    assert!(p.correction().is_active());
    p.advance_frame(0.5 - 29.0 * FRAME - 0.001);
    assert!(p.correction().is_active());
    // The folded correction does not restart the budget: it ends with it.
    let newer = off_by(6, 12.0);
    p.accept(newer.stamp(), &newer).unwrap();
    p.advance_frame(0.002);
    assert!(!p.correction().is_active());
    assert_eq!(p.stats().snaps, 1);
}

#[test]
fn rs5_errors_below_dead_zone_cause_no_visible_correction() {
    let mut p = player();
    let visible = p.visible(1.0);
    let state = off_by(5, 0.3);
    let report = p.accept(state.stamp(), &state).unwrap();
    assert_eq!(report.outcome, CorrectionOutcome::Absorbed);
    assert!(p.visible(1.0).position.distance(visible.position) < 1e-4);
    assert_eq!(
        (p.stats().corrections, p.stats().snaps, p.stats().absorbed),
        (0, 0, 1)
    );
    assert_eq!(p.stats().last_correction, 0.0);

    // Alternating tiny errors every tick (each 0.4 u from the last prediction):
    // the drawn pose never jumps by as much as one error.
    let mut last = p.visible(1.0).position.y;
    for i in 0..40u32 {
        let server_tick = 6 + i;
        let dy = if i % 2 == 0 { 0.2 } else { -0.2 };
        let newer = off_by(server_tick, dy);
        p.accept(newer.stamp(), &newer).unwrap();
        for _ in 0..3 {
            p.advance_frame(FRAME);
            let y = p.visible(1.0).position.y;
            assert!((y - last).abs() < 0.2, "no visible jump: {last} -> {y}");
            last = y;
        }
    }
    assert_eq!(p.stats().corrections, 0);
    assert_eq!(p.stats().absorbed, 41);
}

#[test]
fn lpss4_presentation_target_is_stable_between_player_states() {
    let mut p = player();
    let state = off_by(5, 10.0);
    p.accept(state.stamp(), &state).unwrap();
    let target = p.rebuilt();
    let direction = p.correction().offset().position.normalize();
    let mut magnitude = p.correction().offset().position.length();
    for t in 5..=9 {
        // Live prediction keeps running; only frames pass for the correction.
        p.step(Tick(t), forward(t), None).unwrap();
        for _ in 0..3 {
            p.advance_frame(FRAME);
            assert!(p.rebuilt().bits_eq(&target), "target unchanged");
            let offset = p.correction().offset().position;
            if offset != Vec2::ZERO {
                assert!(offset.normalize().distance(direction) < 1e-5, "same target");
            }
            assert!(offset.length() <= magnitude, "the offset only decays");
            magnitude = offset.length();
        }
    }
    // Only a new PlayerState moves the target.
    let newer = PlayerState::at(Tick(20), Some(Tick(9)), at(600.0, 610.0));
    p.accept(newer.stamp(), &newer).unwrap();
    assert!(!p.rebuilt().bits_eq(&target));
}
