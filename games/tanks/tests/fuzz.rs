//! Fuzzing with proptest: the message decoders (JSON text and binary
//! inputs), the binary snapshot decoder
//! (full and delta, against any baseline) and the world's input handling
//! never panic, and the world never holds a non-finite pose or a
//! player outside the arena, whatever arrives.
//!
//! CI runs a few thousand cases per property; for millions:
//! `PROPTEST_CASES=1000000 cargo test --release -p skirmish-tanks --test fuzz`.
#![cfg(not(target_arch = "wasm32"))]

use proptest::prelude::*;
use skirmish_core::delta::{self, Entity};
use skirmish_core::{
    compact, decode_client, decode_client_frame, ClientMessage, InputMode, PlayerId, Tick, World,
    MAX_INPUTS_PER_MESSAGE,
};
use skirmish_tanks::compact::Quantised;
use skirmish_tanks::{Arena, PlayerState, Pose, SimConfig, Tanks, WireInput};

/// Cases per property: `default`, or `PROPTEST_CASES` when set.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Any f32 at all, NaN and infinities included.
fn any_f32() -> impl Strategy<Value = f32> {
    prop_oneof![
        4 => -2.0f32..2.0,
        1 => prop::num::f32::ANY,
        1 => Just(f32::NAN),
        1 => Just(f32::INFINITY),
    ]
}

fn any_input() -> impl Strategy<Value = WireInput> {
    (
        0u32..400,
        any_f32(),
        any_f32(),
        any::<bool>(),
        prop::option::of(prop_oneof![
            3 => -10.0f64..500.0,
            1 => prop::num::f64::ANY,
        ]),
    )
        .prop_map(|(tick, turn, throttle, fire, view_tick)| WireInput {
            tick: Tick(tick),
            turn,
            throttle,
            fire,
            view_tick,
        })
}

/// A JSON number as text, including ones an f32 cannot hold.
fn json_number() -> impl Strategy<Value = String> {
    prop_oneof![
        (-2.0f64..2.0).prop_map(|v| v.to_string()),
        Just("1e40".to_string()),
        Just("-1e400".to_string()),
        Just("0.000000000000000000000000000000000000000000001".to_string()),
        any::<i64>().prop_map(|v| v.to_string()),
    ]
}

/// Well-formed-looking messages with arbitrary values.
fn message_text() -> impl Strategy<Value = String> {
    let input = (any::<u32>(), json_number(), json_number(), any::<bool>(), json_number())
        .prop_map(|(tick, turn, throttle, fire, view)| {
            format!(r#"{{"tick":{tick},"turn":{turn},"throttle":{throttle},"fire":{fire},"view_tick":{view}}}"#)
        });
    prop_oneof![
        prop::collection::vec(input, 0..20)
            .prop_map(|inputs| format!(r#"{{"type":"input","inputs":[{}]}}"#, inputs.join(","))),
        ("\\PC{0,40}", any::<u32>(), prop::option::of("\\PC{0,40}")).prop_map(
            |(name, protocol, room)| {
                let room = room.map_or(String::new(), |r| format!(r#","room":{r:?}"#));
                format!(r#"{{"type":"hello","name":{name:?},"protocol":{protocol}{room}}}"#)
            }
        ),
        any::<u64>().prop_map(|id| format!(r#"{{"type":"ping","id":{id}}}"#)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(2000)))]

    #[test]
    fn arbitrary_bytes_never_panic_the_decoder(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        let _ = decode_client::<WireInput>(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn arbitrary_binary_frames_never_panic_the_decoder(
        mut bytes in prop::collection::vec(any::<u8>(), 0..300),
        as_input in any::<bool>(),
    ) {
        // Half of them look like binary inputs, to get past the kind byte.
        if let (true, Some(first)) = (as_input, bytes.first_mut()) {
            *first = skirmish_core::BINARY_INPUT;
        }
        if let Ok(ClientMessage::Input { inputs, .. }) = decode_client_frame::<WireInput>(false, &bytes) {
            prop_assert!(!inputs.is_empty() && inputs.len() <= MAX_INPUTS_PER_MESSAGE);
            prop_assert!(inputs.iter().all(|i| i.turn.is_finite() && i.throttle.is_finite()));
            prop_assert!(inputs.windows(2).all(|p| p[0].tick < p[1].tick));
        }
    }

    #[test]
    fn decoded_messages_always_hold_their_limits(text in message_text()) {
        if let Ok(ClientMessage::Input { inputs, .. }) = decode_client::<WireInput>(&text) {
            prop_assert!(!inputs.is_empty() && inputs.len() <= MAX_INPUTS_PER_MESSAGE);
            prop_assert!(inputs.windows(2).all(|w| w[0].tick < w[1].tick));
            for i in &inputs {
                prop_assert!(i.turn.is_finite() && i.throttle.is_finite());
                prop_assert!(i.view_tick.is_none_or(f64::is_finite));
            }
        }
    }
}

/// A baseline set: up to 12 players with any quantised state.
fn any_baseline() -> impl Strategy<Value = Vec<Entity<Quantised>>> {
    prop::collection::vec((0u32..40, any::<[u8; 10]>()), 0..12).prop_map(|raw| {
        let mut set: Vec<Entity<Quantised>> = raw
            .into_iter()
            .map(|(id, b)| {
                let q = Quantised {
                    x: u16::from_le_bytes([b[0], b[1]]),
                    y: u16::from_le_bytes([b[2], b[3]]),
                    rotation: u16::from_le_bytes([b[4], b[5]]),
                    hp: b[6],
                    flags: b[7],
                    vx: b[8] as i8,
                    vy: b[9] as i8,
                };
                (PlayerId(id), q)
            })
            .collect();
        set.sort_by_key(|(id, _)| *id);
        set.dedup_by_key(|(id, _)| *id);
        set
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(2000)))]

    /// Any bytes, as a binary snapshot against any baseline, decode to a
    /// frame or an error, never a panic; so do real deltas cut or flipped.
    #[test]
    fn arbitrary_bytes_never_panic_the_binary_decoder(
        body in prop::collection::vec(any::<u8>(), 0..200),
        kind in prop_oneof![Just(1u8), Just(2u8), Just(3u8), any::<u8>()],
        base in any_baseline(),
        target in any_baseline(),
        flip in any::<(usize, u8)>(),
    ) {
        let sim = SimConfig::default();
        let mut bytes = vec![kind];
        bytes.extend_from_slice(&body);
        let _ = delta::decode::<_, PlayerState>(&bytes, |_| Some(&base[..]), &sim);
        let _ = delta::decode::<Quantised, PlayerState>(&bytes, |_| None, &sim);
        let _ = compact::decode_own::<PlayerState>(&bytes);
        let own = PlayerState::at(Tick(9), None, Pose::default());
        let mut real = delta::encode(Tick(9), Tick(5), &own, &base, &target, &sim);
        let decoded = delta::decode::<_, PlayerState>(&real, |_| Some(&base[..]), &sim);
        prop_assert_eq!(decoded.map(|f| f.players), Ok(target.clone()));
        let at = flip.0 % real.len();
        real[at] ^= flip.1;
        let _ = delta::decode::<_, PlayerState>(&real, |_| Some(&base[..]), &sim);
        let _ = delta::decode::<_, PlayerState>(&real[..at], |_| Some(&base[..]), &sim);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(300)))]

    /// Even inputs the decoder would refuse (NaN, unordered, duplicated)
    /// never break the world.
    #[test]
    fn the_world_survives_any_inputs(
        rounds in prop::collection::vec(
            prop::collection::vec((0u32..6, prop::collection::vec(any_input(), 0..20)), 0..6),
            1..60,
        ),
        seed in any::<u64>(),
    ) {
        let config = SimConfig::default();
        let mut world = World::<Tanks>::of(config.clone(), Arena::default(), seed);
        for id in 1..=5 {
            world.join_with(PlayerId(id), "fuzz", InputMode::Queued).expect("fresh ids");
        }
        let r = config.player_radius;
        for round in rounds {
            for (who, inputs) in round {
                world.receive(PlayerId(who), &inputs);
            }
            world.step();
            for state in world.snapshot() {
                prop_assert!(state.is_finite(), "{state:?}");
                prop_assert!(state.position.x >= r && state.position.x <= config.arena.x - r, "{state:?}");
                prop_assert!(state.position.y >= r && state.position.y <= config.arena.y - r, "{state:?}");
                prop_assert!(state.rotation > -std::f32::consts::PI && state.rotation <= std::f32::consts::PI);
                prop_assert!(state.hp <= 100);
            }
            for (_, player) in world.players() {
                prop_assert!(player.queued() <= skirmish_core::MAX_QUEUED_INPUTS);
            }
        }
    }
}
