//! The client's parts and the codecs run a game that is not the tank
//! game (`dots/mod.rs`): prediction, reconciliation and smoothing of a dot
//! on a line, interpolation, owned states and events, its pellets as
//! deltas, its inputs in the binary input message.

mod dots;

use std::time::Duration;

use skirmish_core::delta;
use skirmish_core::{
    Authority, CorrectionOutcome, InterpolationConfig, LocalPlayer, PlayerId, RemoteBuffer,
    RemoteSample, SampleKind, SmoothingConfig, Stamp, Tick,
};

use dots::*;

/// Player 1's dot at `x`.
fn own(x: f32) -> DotState {
    DotState {
        id: PlayerId(1),
        tick: Tick(0),
        ack: None,
        x,
    }
}

fn stamp(tick: u32, ack: u32) -> Stamp {
    Stamp {
        tick: Tick(tick),
        ack: Some(Tick(ack)),
    }
}

#[test]
fn a_dot_is_predicted_reconciled_and_smoothed_like_a_tank() {
    let mut p: LocalPlayer<Dots> = LocalPlayer::new((), SmoothingConfig::default(), Dot(0.0));
    p.accept(stamp(0, 0), &own(0.0)).expect("placed");
    for tick in 1..=4 {
        // Sanitized: 7 moves like 1.
        p.step(Tick(tick), 7, None).expect("room for it");
    }
    assert_eq!(p.predicted(), Dot(20.0));

    // The server applied ticks 1 and 2 but saw the dot 3 units behind.
    let report = p.accept(stamp(5, 2), &own(7.0)).expect("newer");
    assert_eq!((report.pruned, report.replayed), (2, 2));
    assert_eq!(p.predicted(), Dot(17.0), "rebuilt: 7 + two replayed steps");
    assert_eq!(report.outcome, CorrectionOutcome::Smoothed);
    assert_eq!(report.error, 3.0);
    assert_eq!(p.visible(1.0), Dot(20.0), "nothing jumps at once");
    for _ in 0..40 {
        p.advance_frame(1.0 / 60.0);
    }
    assert_eq!(p.visible(1.0), Dot(17.0), "the correction decayed away");
    assert_eq!(p.stats().corrections, 1);

    // A stale or invalid state changes nothing.
    assert!(p.accept(stamp(5, 4), &own(0.0)).is_err());
    assert!(p.accept(stamp(6, 4), &own(f32::NAN)).is_err());
    assert_eq!(p.predicted(), Dot(17.0));
    assert_eq!(p.authoritative(), Some(&own(7.0)));
}

#[test]
fn a_remote_dot_is_interpolated_extrapolated_and_held_across_a_death() {
    let config = InterpolationConfig::default();
    let tick = Duration::from_millis(50);
    let mut b: RemoteBuffer<Dot> = RemoteBuffer::default();
    let sample = |t: u32, x: f32, alive: bool| RemoteSample {
        tick: Tick(t),
        visual: Dot(x),
        velocity: Shift(200.0),
        alive,
    };
    assert!(b.add(sample(10, 100.0, true), &config));
    assert!(b.add(sample(11, 110.0, true), &config));
    assert!(!b.add(sample(11, 0.0, true), &config), "not newer");
    assert!(!b.add(sample(12, f32::NAN, true), &config), "not finite");
    assert_eq!(
        b.sample(10.5, tick, &config),
        Some((Dot(105.0), SampleKind::Interpolated))
    );
    // 50 ms past the newest at 200 u/s.
    let (ahead, kind) = b.sample(12.0, tick, &config).expect("samples");
    assert_eq!(kind, SampleKind::Extrapolated);
    assert!((ahead.0 - 120.0).abs() < 1e-3);
    // A death is not motion.
    assert!(b.add(sample(12, 500.0, false), &config));
    assert_eq!(
        b.sample(11.5, tick, &config),
        Some((Dot(110.0), SampleKind::Held))
    );
    assert_eq!(b.alive_at(12.0), Some(false));
}

#[test]
fn a_dots_states_are_owned_and_its_events_applied_once_and_never_undone() {
    let mut a: Authority<Dot> = Authority::default();
    let one = PlayerId(1);
    a.insert(one, Tick(10), &Dot(1.0)).expect("first");
    assert!(a.insert(one, Tick(10), &Dot(2.0)).is_err(), "not newer");
    let push = Push {
        tick: Tick(12),
        dot: one,
        to: 50.0,
    };
    assert!(a.apply(&push));
    assert!(!a.apply(&push), "once");
    assert_eq!(a.get(one), Some(&Dot(50.0)));
    // A state from before the push does not undo it; one after it rules.
    a.insert(one, Tick(11), &Dot(3.0)).expect("newer");
    assert_eq!(a.get(one), Some(&Dot(50.0)));
    a.insert(one, Tick(13), &Dot(4.0)).expect("newer");
    assert_eq!(a.get(one), Some(&Dot(4.0)));
    assert!(a.insert(PlayerId(2), Tick(1), &Dot(f32::NAN)).is_err());
    assert_eq!(a.len(), 1);
}

#[test]
fn entities_of_another_game_travel_as_deltas_through_the_same_coder() {
    let pellet = |id: u32, x: u16, size: u8| (PlayerId(id), Pellet { x, y: 7_000, size });
    let own = DotState {
        id: PlayerId(1),
        tick: Tick(20),
        ack: Some(Tick(19)),
        x: 9.5,
    };
    let baseline: Vec<_> = (1..=100).map(|id| pellet(id, 1_000, 3)).collect();
    // One eaten (removed), one grown, one nudged, one new; 96 unchanged.
    let mut target = baseline.clone();
    target.retain(|(id, _)| id.0 != 10);
    target[20].1.size = 4;
    target[30].1.x += 5;
    target.push(pellet(500, 60_000, 1));
    let bytes = delta::encode(Tick(20), Tick(18), &own, &baseline, &target, &());
    // The library's head, the dot's f32 and the baseline's tick.
    let head = skirmish_core::compact::LIBRARY_HEAD_BYTES + 4 + 4;
    let body = bytes.len() - head;
    // Counts and the stale mask 4 bytes; the removal a byte; the grown
    // and the nudged 3 each; the new one 2 + 5.
    assert_eq!(
        body,
        4 + 1 + 3 + 3 + 2 + 5,
        "unchanged pellets cost nothing"
    );
    let frame = delta::decode::<Pellet, DotState>(
        &bytes,
        |t| (t == Tick(18)).then_some(&baseline[..]),
        &(),
    )
    .expect("decodes against its baseline");
    assert_eq!(frame.players, target);
    assert_eq!(frame.own, own, "the own state exactly, with its stamp");
    // A change of a field a pellet lacks is refused: one grown pellet's
    // body is no removals, one entry (gap, mask, size), no stale mask.
    let mut grown = baseline.clone();
    grown[5].1.size = 9;
    let mut bad = delta::encode(Tick(20), Tick(18), &own, &baseline, &grown, &());
    let mask = bad.len() - 3;
    assert_eq!(bad[mask], 0b100, "the size's bit");
    assert!(delta::decode::<Pellet, DotState>(&bad, |_| Some(&baseline[..]), &()).is_ok());
    bad[mask] = 0b1000;
    let refused = delta::decode::<Pellet, DotState>(&bad, |_| Some(&baseline[..]), &());
    assert!(refused.is_err(), "{refused:?}");
}

#[test]
fn a_dots_inputs_travel_in_the_binary_input_message_with_its_own_bits() {
    let inputs = [
        Nudge {
            tick: Tick(7),
            by: 1,
        },
        Nudge {
            tick: Tick(8),
            by: -1,
        },
        Nudge {
            tick: Tick(12),
            by: 40,
        },
    ];
    let mut bytes = Vec::new();
    skirmish_core::encode_inputs(&inputs, Some(Tick(5)), Some(3), &mut bytes);
    // Kind, count, tick, ack, seq; then a head each, the gap of 4 and the
    // third nudge's byte.
    assert_eq!(bytes.len(), 1 + 1 + 4 + 4 + 2 + 3 + 1 + 1, "{bytes:?}");
    let decoded = skirmish_core::decode_inputs::<Nudge>(&bytes).expect("decodes");
    let skirmish_core::ClientMessage::Input {
        inputs: back,
        snapshot_ack,
        seq,
    } = decoded
    else {
        panic!("an input message");
    };
    assert_eq!(back, inputs);
    assert_eq!((snapshot_ack, seq), (Some(Tick(5)), Some(3)));
    // The game refuses its own unknown code; the library its reserved bit.
    let mut bad = bytes.clone();
    bad[12] = 4;
    let refused = skirmish_core::decode_inputs::<Nudge>(&bad).map_err(|e| e.code);
    assert_eq!(refused, Err(skirmish_core::ErrorCode::BadMessage));
    bad[12] = 0x80;
    assert!(skirmish_core::decode_inputs::<Nudge>(&bad).is_err());
}

/// A still dot (an .io game's pellet) sends the same sample every
/// snapshot: its buffer keeps two, and draws what it would with all.
#[test]
fn a_still_remote_keeps_two_samples_and_draws_the_same() {
    let config = InterpolationConfig::default();
    let tick = Duration::from_millis(50);
    let still = |t: u32, x: f32| RemoteSample {
        tick: Tick(t),
        visual: Dot(x),
        velocity: Shift(0.0),
        alive: true,
    };
    let mut b: RemoteBuffer<Dot> = RemoteBuffer::default();
    for t in 1..=20 {
        assert!(b.add(still(t, 7.0), &config));
    }
    assert_eq!(b.len(), 2, "the first and the newest");
    assert_eq!(b.newest_tick(), Some(Tick(20)));
    assert_eq!(b.sample(19.5, tick, &config).map(|s| s.0), Some(Dot(7.0)));
    assert!(!b.add(still(20, 7.0), &config), "not newer");
    // When it moves, it is interpolated from where it stood at tick 20.
    assert!(b.add(still(21, 17.0), &config));
    assert_eq!(
        b.sample(20.5, tick, &config),
        Some((Dot(12.0), SampleKind::Interpolated))
    );
}

/// A `hello` naming a game 7,900 bytes long is told `wrong_game` with the
/// start of that name only, as text and in binary.
#[test]
fn wrong_game_quotes_a_short_prefix_of_the_game_named() {
    let name = "x".repeat(7_900);
    let text = serde_json::json!({
        "type": "hello", "name": "ana", "protocol": 2,
        "game": {"name": name, "version": 1},
    })
    .to_string();
    let binary =
        skirmish_core::control::encode_client::<Nudge>(&skirmish_core::ClientMessage::Hello {
            name: "ana".into(),
            protocol: 2,
            room: None,
            encoding: skirmish_core::Encoding::Compact,
            game: Some(skirmish_core::GameId {
                name,
                version: 1,
                shape: None,
            }),
        })
        .expect("a binary hello");
    for (is_text, frame) in [(true, text.as_bytes()), (false, &binary[..])] {
        let e = skirmish_core::decode_client_frame_of::<Dots>(is_text, frame).unwrap_err();
        assert_eq!(e.code, skirmish_core::ErrorCode::WrongGame);
        let quoted = format!("not {}… 1", "x".repeat(skirmish_core::protocol::ECHO_CHARS));
        assert!(e.message.ends_with(&quoted), "{}", e.message);
        assert!(e.message.len() < 100, "{} bytes", e.message.len());
    }
}

/// The identity is computed from the game's wire types: a page of the
/// same game and version whose messages have another shape (a field
/// added without a new version) is refused by name, with both shapes, as
/// text and in binary; one that says no shape (an outside tool) is taken;
/// a recording of another shape is refused too.
#[test]
fn a_hello_or_a_recording_of_another_wire_shape_is_refused_naming_both() {
    use skirmish_core::{protocol, ClientMessage, Encoding, GameId, Kind, Reader, RecordWriter};
    let ours = GameId::of::<Dots>();
    let shape = ours.shape.expect("computed");
    assert_eq!(shape, protocol::shape::<Dots>());
    let other = GameId {
        shape: Some(shape ^ 1),
        ..ours.clone()
    };
    let hello = |game: &GameId| ClientMessage::<Nudge>::Hello {
        name: "ana".into(),
        protocol: 2,
        room: None,
        encoding: Encoding::Compact,
        game: Some(game.clone()),
    };
    let text = serde_json::to_string(&hello(&other)).expect("JSON");
    let binary = skirmish_core::control::encode_client(&hello(&other)).expect("binary");
    for (is_text, frame) in [(true, text.as_bytes()), (false, &binary[..])] {
        let e = skirmish_core::decode_client_frame_of::<Dots>(is_text, frame).unwrap_err();
        assert_eq!(e.code, skirmish_core::ErrorCode::WrongGame);
        for (side, beside) in [(&ours, &other), (&other, &ours)] {
            let named = side.told(beside);
            assert!(named.ends_with(&format!("(wire shape {:08x})", side.shape.unwrap_or(0))));
            assert!(e.message.contains(&named), "{}", e.message);
        }
        assert!(e.message.contains("messages differ"), "{}", e.message);
    }
    for game in [
        &ours,
        &GameId {
            shape: None,
            ..ours.clone()
        },
    ] {
        let binary = skirmish_core::control::encode_client(&hello(game)).expect("binary");
        assert!(skirmish_core::decode_client_frame_of::<Dots>(false, &binary).is_ok());
    }
    let recording = RecordWriter::new(Kind::Room, &other, b"{}")
        .bytes()
        .to_vec();
    let why = Reader::open(&recording, Kind::Room, &ours)
        .map(|_| ())
        .unwrap_err();
    assert!(why.to_string().contains(&format!("{shape:08x}")), "{why}");
    assert!(Reader::open(&recording, Kind::Room, &other).is_ok());
}
