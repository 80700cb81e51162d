//! Property tests: for every input sequence and every acknowledgement point,
//! replay from the server's pose equals live prediction bit for bit, stays
//! the same across repeated rebuilds, and never consumes unacknowledged steps
//! (CAPS-5, CPR-4, CPR-5, CPR-6).
#![cfg(not(target_arch = "wasm32"))]

use proptest::prelude::*;
use skirmish_core::{CorrectionOutcome, LocalPlayer, OwnState, SmoothingConfig, Tick, Vec2};
use skirmish_tanks::{simulate, MoveInput, PlayerState, Pose, SimConfig, Tanks};

/// Any control value, including the ones `sanitize` must clean up.
fn control() -> impl Strategy<Value = f32> {
    prop_oneof![
        8 => -1.0f32..=1.0,
        1 => Just(1.0f32),
        1 => prop::num::f32::ANY,
    ]
}

fn inputs() -> impl Strategy<Value = Vec<MoveInput>> {
    prop::collection::vec((control(), control(), any::<bool>()), 1..64).prop_map(|v| {
        v.into_iter()
            .enumerate()
            .map(|(i, (turn, throttle, fire))| MoveInput {
                tick: Tick(i as u32 + 1),
                turn,
                throttle,
                fire,
            })
            .collect()
    })
}

fn start() -> impl Strategy<Value = Pose> {
    (20.0f32..1980.0, 20.0f32..1180.0, -3.1f32..3.1)
        .prop_map(|(x, y, r)| Pose::new(Vec2::new(x, y), r))
}

/// What the server computes: one cadence of each input, in order.
fn server_pose(start: Pose, inputs: &[MoveInput], config: &SimConfig) -> Pose {
    inputs
        .iter()
        .fold(start, |p, i| simulate(p, i, config.cadence(), config))
}

fn placed(config: &SimConfig, start: Pose) -> LocalPlayer<Tanks> {
    let mut p = LocalPlayer::new(config.clone(), SmoothingConfig::default(), start);
    let first = PlayerState::at(Tick(1), None, start);
    p.accept(first.stamp(), &first)
        .expect("first state is accepted");
    p
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// CAPS-5, CPR-5, CPR-4: replay from the server's pose at any ack point
    /// lands exactly on live prediction, again and again, and the
    /// unacknowledged steps stay pending.
    #[test]
    fn replay_equals_live_prediction_bit_for_bit(
        inputs in inputs(), start in start(), ack_at in any::<prop::sample::Index>(), repeats in 1usize..4,
    ) {
        let config = SimConfig::default();
        let mut p = placed(&config, start);
        for input in &inputs {
            p.step(input.tick, *input, None).expect("fewer steps than the buffer holds");
        }
        let live = p.predicted();
        let k = ack_at.index(inputs.len() + 1);
        let server = server_pose(start, &inputs[..k], &config);
        let ack = (k > 0).then_some(Tick(k as u32));

        for r in 0..repeats {
            let truth = PlayerState::at(Tick(2 + r as u32), ack, server);
            let report = p.accept(truth.stamp(), &truth).unwrap();
            prop_assert!(p.predicted().bits_eq(&live), "{:?} != {:?}", p.predicted(), live);
            prop_assert_eq!(report.error, 0.0);
            prop_assert_eq!(report.outcome, CorrectionOutcome::None);
            prop_assert_eq!(report.replayed, inputs.len() - k);
            let pending: Vec<Tick> = p.pending().iter().map(|s| s.tick).collect();
            let expected: Vec<Tick> = inputs[k..].iter().map(|i| i.tick).collect();
            prop_assert_eq!(pending, expected);
        }
        prop_assert_eq!(p.stats().corrections + p.stats().snaps, 0);
    }

    /// CPR-6: increasing baselines, arbitrary poses, the same later inputs
    /// still pending: each rebuild equals an independent replay from that
    /// baseline, and two players fed the same messages agree bit for bit.
    #[test]
    fn repeated_rebuilds_are_deterministic_per_baseline(
        inputs in inputs(),
        start in start(),
        baselines in prop::collection::vec((start(), any::<prop::sample::Index>()), 1..6),
    ) {
        let config = SimConfig::default();
        let mut a = placed(&config, start);
        let mut b = placed(&config, start);
        for input in &inputs {
            a.step(input.tick, *input, None).unwrap();
            b.step(input.tick, *input, None).unwrap();
        }
        let mut acks: Vec<usize> = baselines.iter().map(|(_, i)| i.index(inputs.len() + 1)).collect();
        acks.sort_unstable();
        for (n, ((base, _), k)) in baselines.iter().zip(acks).enumerate() {
            let state = PlayerState::at(Tick(10 + n as u32), (k > 0).then_some(Tick(k as u32)), *base);
            a.accept(state.stamp(), &state).unwrap();
            b.accept(state.stamp(), &state).unwrap();
            let expected = server_pose(*base, &inputs[k..], &config);
            prop_assert!(a.predicted().bits_eq(&expected));
            prop_assert!(b.predicted().bits_eq(&expected));
            prop_assert_eq!(a.pending().len(), inputs.len() - k);
        }
    }

    /// Whatever the inputs, the pose stays finite and inside the arena.
    #[test]
    fn poses_stay_finite_and_inside_the_arena(inputs in inputs(), start in start()) {
        let config = SimConfig::default();
        let r = config.player_radius;
        let mut pose = start;
        for input in &inputs {
            pose = simulate(pose, input, config.cadence(), &config);
            prop_assert!(pose.is_finite());
            prop_assert!(pose.position.x >= r && pose.position.x <= config.arena.x - r);
            prop_assert!(pose.position.y >= r && pose.position.y <= config.arena.y - r);
            prop_assert!(pose.rotation > -std::f32::consts::PI && pose.rotation <= std::f32::consts::PI);
        }
    }
}
