//! Replaying an untrusted recording is bounded: whatever a file's header
//! and records say, a replay answers (replays, differs or refuses) within a
//! fixed time, and no frame runs more than
//! [`skirmish_core::MAX_STEPS_PER_FRAME`] fixed steps.
//!
//! The hostile headers here are the ones found by reading the code: a
//! longest frame of centuries (10^11 steps and more in one frame), a time
//! dilation of 1 or more (a division by zero) or of 10^30 (a zero step
//! period and a loop that never ends), and room configurations that ask
//! for a huge room, a zero tick or a grid of a million cells. Each case runs on a thread of its own and must answer
//! within [`BUDGET`], so a regression fails here instead of hanging.
//!
//! More cases: `PROPTEST_CASES=10000 cargo test --release -p skirmish-core
//! --test replay_bounds`.
#![cfg(not(target_arch = "wasm32"))]

use std::sync::mpsc::{channel, RecvTimeoutError};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use skirmish_core::{
    decode_client_frame, ClientMessage, ClientRecorder, ClientSession, FormatError, Frame,
    Incoming, Outbox, PlayerId, ReplayError, ReplayOptions, Room, RoomConfig, RoomRecorder,
    RoomReplayError, Seating, SessionConfig, MAGIC, PROTOCOL_VERSION,
};
use skirmish_tanks::{
    open_client, open_room, replay_client, replay_room, Controls, Pose, Tanks, WireInput,
};

/// The most one case (a replay, or a short live session and its replay)
/// may take, even in a debug build on a busy machine; an answer usually
/// comes in milliseconds.
const BUDGET: Duration = Duration::from_secs(2);

const FRAME: Duration = Duration::from_micros(16_667);
const TICK: Duration = Duration::from_millis(50);
const YEAR: Duration = Duration::from_secs(365 * 24 * 3600);

/// Runs `f` on a thread of its own and returns its answer, or fails the
/// test when there is none within `budget` (the thread is left behind).
fn within<T: Send + 'static>(
    budget: Duration,
    what: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = channel();
    let started = Instant::now();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(budget) {
        Ok(answer) => {
            let took = started.elapsed();
            assert!(took <= budget, "{what}: took {took:?}, over {budget:?}");
            answer
        }
        Err(RecvTimeoutError::Timeout) => panic!("{what}: no answer within {budget:?}"),
        Err(RecvTimeoutError::Disconnected) => panic!("{what}: panicked"),
    }
}

/// One recorded session (`rec`, protocol 2, compact) in a recorded room,
/// no latency, its frames at the times `frames` gives; returns both
/// recordings and the most steps (inputs made or refused) the live
/// session ran in one frame. The room ticks every 50 ms of the frames'
/// time, at most ten times per frame (a jump of years is not simulated).
fn play(
    config: SessionConfig,
    frames: impl IntoIterator<Item = Duration>,
) -> (Vec<u8>, Vec<u8>, u64) {
    let mut room =
        Room::<skirmish_tanks::Tanks>::recorded(RoomConfig::<skirmish_tanks::Tanks>::default());
    let mut out = Outbox::new();
    let id = PlayerId(1);
    let mut session = ClientSession::recorded(config, usize::MAX);
    let _ = session.hello();
    let seating = Seating {
        encoding: skirmish_core::Encoding::Compact,
        protocol: PROTOCOL_VERSION,
        datagrams: false,
        binary_control: false,
    };
    room.join(id, "rec", seating, &mut out).expect("join");
    let mut next_tick = TICK;
    let mut last_tick = Duration::ZERO;
    let mut inbox: Vec<ClientMessage<WireInput>> = Vec::new();
    let mut most = 0;
    for (k, now) in frames.into_iter().enumerate() {
        for _ in 0..10 {
            if next_tick > now {
                break;
            }
            for message in inbox.drain(..) {
                let since = next_tick.saturating_sub(last_tick) / 2;
                let _ = room.receive_at(id, &message, since, &mut out);
            }
            room.tick(&mut out);
            last_tick = next_tick;
            next_tick += TICK;
        }
        if next_tick <= now {
            next_tick = now + TICK;
        }
        let (frames, deliveries) = out.take();
        for (_, i) in deliveries {
            match &frames[i] {
                Frame::Text(text) => session.receive(Incoming::Text(text), now),
                Frame::Binary(bytes) => session.receive(Incoming::Binary(bytes), now),
            }
        }
        let t = k as f32 / 60.0;
        session.set_controls(Controls {
            turn: (t * 0.7).sin(),
            throttle: 1.0,
            fire: k % 40 == 0,
        });
        let before = steps_of(&session);
        for message in session.advance(now) {
            let (text, bytes) = match session.encode(&message) {
                Frame::Text(t) => (true, t.into_bytes()),
                Frame::Binary(b) => (false, b),
            };
            session.sent(bytes.len());
            inbox.push(decode_client_frame(text, &bytes).expect("own message decodes"));
        }
        most = most.max(steps_of(&session) - before);
        let _ = session.events().count();
    }
    let mut room_bytes = Vec::new();
    room.recorder().expect("recorded").take(&mut room_bytes);
    let client = session.recording().expect("recorded").bytes().to_vec();
    (client, room_bytes, most)
}

/// The fixed steps a session has run that made (or were refused) an input.
fn steps_of(session: &ClientSession<Tanks>) -> u64 {
    let stats = session.hud().stats;
    stats.inputs + stats.inputs_refused
}

/// Frames every 1/60 s for `seconds`.
fn steady(seconds: u64) -> impl Iterator<Item = Duration> {
    let end = Duration::from_secs(seconds);
    (1..).map(|k| FRAME * k).take_while(move |t| *t <= end)
}

/// A recording of four seconds of steady play, and its room's.
fn recorded() -> &'static (Vec<u8>, Vec<u8>, u64) {
    use std::sync::OnceLock;
    static BYTES: OnceLock<(Vec<u8>, Vec<u8>, u64)> = OnceLock::new();
    BYTES.get_or_init(|| play(SessionConfig::default(), steady(4)))
}

/// `bytes` (a client recording) with its header's configuration changed by
/// `change`, and the records as they were.
fn with_session_config(bytes: &[u8], change: impl FnOnce(&mut SessionConfig)) -> Vec<u8> {
    let (mut config, _) = open_client(bytes).expect("opens");
    let header = ClientRecorder::<skirmish_tanks::Tanks>::new(&config, usize::MAX)
        .bytes()
        .len();
    change(&mut config);
    let mut out = ClientRecorder::<skirmish_tanks::Tanks>::new(&config, usize::MAX)
        .bytes()
        .to_vec();
    out.extend_from_slice(&bytes[header..]);
    out
}

/// `bytes` (a room recording) with its header's configuration changed.
fn with_room_config(bytes: &[u8], change: impl FnOnce(&mut RoomConfig<Tanks>)) -> Vec<u8> {
    let (mut config, calls) = open_room(bytes).expect("opens");
    let first = calls
        .map(|c| c.expect("reads").0)
        .next()
        .unwrap_or(bytes.len());
    change(&mut config);
    let (mut recorder, _) = RoomRecorder::new(config);
    let mut out = Vec::new();
    recorder.take(&mut out);
    out.extend_from_slice(&bytes[first..]);
    out
}

/// LEB128, for hand-made records.
fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// An `advance` record `later` after the previous one (any hash).
fn advance_later(bytes: &mut Vec<u8>, later: Duration) {
    bytes.push(8);
    let ns = u64::try_from(later.as_nanos()).expect("fits");
    varint(ns << 1, bytes);
    bytes.extend_from_slice(&[0; 8]);
    bytes.push(0);
}

/// Replays a client recording within the budget.
fn replay_within(
    bytes: Vec<u8>,
    what: &str,
) -> Result<skirmish_core::ClientReplay, ReplayError<Pose>> {
    within(BUDGET, what, move || {
        replay_client(&bytes, ReplayOptions::default())
    })
}

/// The `what` of a refused header, or a failure naming what happened.
fn damaged<T: std::fmt::Debug, E: Into<Refusal>>(result: Result<T, E>) -> String {
    match result.map_err(Into::into) {
        Err(Refusal(Some(FormatError::Damaged { what, .. }))) => what,
        other => panic!("expected a damaged header, got {other:?}"),
    }
}

/// A replay error reduced to its format error, if it is one.
#[derive(Debug)]
struct Refusal(Option<FormatError>);

impl From<ReplayError<Pose>> for Refusal {
    fn from(e: ReplayError<Pose>) -> Refusal {
        match e {
            ReplayError::Format(f) => Refusal(Some(f)),
            ReplayError::Diverged(_) => Refusal(None),
        }
    }
}

impl From<RoomReplayError> for Refusal {
    fn from(e: RoomReplayError) -> Refusal {
        match e {
            RoomReplayError::Format(f) => Refusal(Some(f)),
            RoomReplayError::Diverged(_) => Refusal(None),
        }
    }
}

#[test]
fn a_longest_frame_of_centuries_is_refused_not_stepped() {
    let mut bytes = with_session_config(&recorded().0, |c| c.max_frame = YEAR * 1000);
    // A frame 500 years on: with the header taken at its word, 3 x 10^11
    // steps of 50 ms.
    advance_later(&mut bytes, YEAR * 500);
    let what = damaged(replay_within(bytes, "max_frame of 1000 years"));
    assert!(what.contains("longest frame"), "{what}");
}

#[test]
fn a_dilation_outside_its_range_is_refused() {
    for bad in [1.0, 1e30, f64::NAN, f64::INFINITY, 0.75, -0.1] {
        let bytes = with_session_config(&recorded().0, |c| c.pacing.max_dilation = bad);
        let what = damaged(replay_within(bytes, &format!("max_dilation {bad}")));
        assert!(what.contains("dilation"), "{bad}: {what}");
    }
}

/// A hostile room configuration: its name, how it is made and a word its
/// refusal must name.
type Hostile = (&'static str, fn(&mut RoomConfig<Tanks>), &'static str);

#[test]
fn hostile_room_configurations_are_refused() {
    let room = &recorded().1;
    let cases: [Hostile; 8] = [
        (
            "capacity 10^12",
            |c| c.capacity = 1_000_000_000_000,
            "capacity",
        ),
        ("tick of 0 ms", |c| c.game.sim.tick_ms = 0, "tick_ms"),
        (
            "history of 49 days",
            |c| {
                c.game.sim.tick_ms = 1;
                c.game.rules.history_ms = u32::MAX;
            },
            "history",
        ),
        (
            "interest radius of 0",
            |c| c.interest.radius = Some(0.0),
            "radius",
        ),
        (
            "interest radius of 10^-30 (a grid of a million cells)",
            |c| c.interest.radius = Some(1e-30),
            "radius",
        ),
        ("arena of 10^30", |c| c.game.sim.arena.x = 1e30, "arena"),
        ("a negative range", |c| c.game.rules.range = -1.0, "range"),
        ("no name", |c| c.name = String::new(), "name"),
    ];
    for (name, change, named) in cases {
        let bytes = with_room_config(room, change);
        let result = within(BUDGET, name, move || replay_room(&bytes));
        let what = damaged(result);
        assert!(what.contains(named), "{name}: {what}");
    }
}

/// What the server, its benchmarks and the tests run with passes.
#[test]
fn usual_room_configurations_validate() {
    let mut bench: RoomConfig<Tanks> = RoomConfig {
        capacity: 800,
        ..RoomConfig::default()
    };
    bench.game.sim.arena = skirmish_core::Vec2::new(8000.0, 8000.0);
    bench.interest.radius = Some(1000.0);
    let mut fast: RoomConfig<Tanks> = RoomConfig::default();
    fast.game.sim.tick_ms = 1;
    for config in [RoomConfig::default(), bench, fast] {
        assert_eq!(config.validate(), Ok(()), "{config:?}");
    }
}

#[test]
fn the_fixture_session_replays_unchanged() {
    let (client, room, _) = recorded().clone();
    let replay = replay_within(client, "the unchanged session").expect("replays");
    assert!(replay.summary.frames > 200, "{:?}", replay.summary);
    let s = within(BUDGET, "the unchanged room", move || replay_room(&room)).expect("replays");
    assert!(s.ticks > 70, "{s:?}");
}

/// The session itself, configured by hand (no header checks it), never
/// runs more than its cap in a frame: a longest frame of centuries with a
/// frame 500 years on, and a pacing whose bound and error would make a
/// step period of nothing.
#[test]
fn a_live_session_runs_a_bounded_number_of_steps_per_frame() {
    let centuries = SessionConfig {
        max_frame: YEAR * 1000,
        ..SessionConfig::default()
    };
    let mut zero_period = SessionConfig::default();
    zero_period.pacing.max_dilation = 1e30;
    zero_period.pacing.time_constant = Duration::from_millis(1);
    zero_period.pacing.safety_ms = 1e12;
    zero_period.pacing.resync_ms = 1e300;
    for (what, config) in [("centuries", centuries), ("a zero period", zero_period)] {
        let frames: Vec<Duration> = steady(2)
            .chain([YEAR * 500])
            .chain(steady(1).map(|t| YEAR * 500 + t))
            .collect();
        let (client, _, most) = within(BUDGET, what, move || play(config, frames));
        let cap = u64::from(skirmish_core::MAX_STEPS_PER_FRAME);
        assert!(most <= cap, "{what}: {most} steps in a frame");
        // The header is refused, but had it not been, the replay would
        // have been bounded by the same cap.
        let refused = damaged(replay_within(client, what));
        assert!(
            refused.starts_with("the session configuration in the header: a"),
            "{what}: {refused}"
        );
    }
}

/// Cases per property: `default`, or `PROPTEST_CASES` when set.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Mostly `usual`, else an edge or anything a varint holds.
fn any_duration(usual: Duration) -> impl Strategy<Value = Duration> {
    prop_oneof![
        40 => Just(usual),
        1 => Just(Duration::ZERO),
        1 => Just(Duration::from_millis(1)),
        1 => Just(Duration::from_secs(2)),
        1 => Just(Duration::from_secs(3)),
        1 => Just(YEAR * 100),
        1 => any::<u64>().prop_map(Duration::from_nanos),
    ]
}

/// Mostly `usual`, else an edge or any bits at all.
fn any_f64(usual: f64) -> impl Strategy<Value = f64> {
    prop_oneof![
        60 => Just(usual),
        1 => Just(0.0),
        1 => Just(0.5),
        1 => Just(0.75),
        1 => Just(1.0),
        1 => Just(-0.1),
        1 => Just(1e12),
        1 => Just(1e30),
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => any::<f64>(),
    ]
}

/// Mostly `usual`, else anything up to `most`.
fn any_count(usual: usize, most: usize) -> impl Strategy<Value = usize> {
    prop_oneof![8 => Just(usual), 1 => 0..=most]
}

/// A session configuration with hostile values where a header could hold
/// them.
fn any_config() -> impl Strategy<Value = SessionConfig> {
    let usual = SessionConfig::default();
    let p = usual.pacing;
    (
        (
            any_duration(usual.max_frame),
            any_duration(usual.ping_interval),
            any_duration(p.time_constant),
            any_duration(p.integral_time),
        ),
        (
            any_f64(p.max_dilation),
            any_f64(p.safety_ms),
            any_f64(p.initial_spread_ms),
            any_f64(p.resync_ms),
            any_f64(p.late_target),
        ),
        (
            any_count(p.level_samples, 2000),
            any_count(p.spread_samples, 70_000),
            any_count(usual.interpolation.capacity, 100),
            0u32..4,
        ),
    )
        .prop_map(|(times, floats, counts)| {
            let mut c = SessionConfig {
                name: "rec".to_string(),
                resends: counts.3,
                ..SessionConfig::default()
            };
            (c.max_frame, c.ping_interval) = (times.0, times.1);
            (c.pacing.time_constant, c.pacing.integral_time) = (times.2, times.3);
            c.pacing.max_dilation = floats.0;
            c.pacing.safety_ms = floats.1;
            c.pacing.initial_spread_ms = floats.2;
            c.pacing.resync_ms = floats.3;
            c.pacing.late_target = floats.4;
            c.pacing.level_samples = counts.0;
            c.pacing.spread_samples = counts.1;
            c.interpolation.capacity = counts.2;
            c
        })
}

/// Frame times: 1.5 s of steady frames with up to three jumps (a second,
/// an hour, a century) at random frames.
fn any_frames() -> impl Strategy<Value = Vec<Duration>> {
    let jump = prop_oneof![
        Just(Duration::from_secs(1)),
        Just(Duration::from_secs(3600)),
        Just(YEAR * 100),
    ];
    prop::collection::vec((0usize..90, jump), 0..4).prop_map(|jumps| {
        let mut shift = Duration::ZERO;
        (1..=90u32)
            .map(|k| {
                for (at, by) in &jumps {
                    if *at == k as usize {
                        shift += *by;
                    }
                }
                FRAME * k + shift
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(48)))]

    /// Any configuration and any frame times: the live session is bounded
    /// by its cap, and its recording either replays bit for bit (within
    /// the budget and the cap) or is refused for its header. Nothing else.
    #[test]
    fn any_configuration_plays_and_replays_within_bounds(
        config in any_config(),
        frames in any_frames(),
    ) {
        let cap = u64::from(skirmish_core::MAX_STEPS_PER_FRAME);
        let (client, _, most) = within(BUDGET, "the live session", move || play(config, frames));
        prop_assert!(most <= cap, "live: {} steps in a frame", most);
        let started = Instant::now();
        let result = replay_within(client, "its replay");
        let took = started.elapsed();
        prop_assert!(took <= BUDGET, "the replay took {:?}", took);
        match result {
            Ok(replay) => prop_assert!(replay.summary.most_steps <= cap, "{:?}", replay.summary),
            Err(ReplayError::Format(FormatError::Damaged { .. })) => {}
            Err(other) => prop_assert!(false, "neither a match nor a refused header: {}", other),
        }
    }

    /// Any bytes in the configuration of a real header (a client's binary
    /// one, a room's JSON) replay, differ or are refused within the
    /// budget.
    #[test]
    fn a_mutated_header_replays_within_bounds(
        changes in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        room in any::<bool>(),
    ) {
        let (client, room_bytes, _) = recorded();
        let (bytes, header) = if room {
            let (config, _) = open_room(room_bytes).expect("opens");
            let (mut recorder, _) = RoomRecorder::new(config);
            let mut header = Vec::new();
            recorder.take(&mut header);
            (room_bytes, header.len())
        } else {
            let (config, _) = open_client(client).expect("opens");
            (client, ClientRecorder::<skirmish_tanks::Tanks>::new(&config, usize::MAX).bytes().len())
        };
        // Past the magic: the kind, the versions, the build and (most of
        // the header) the configuration.
        let mut bytes = bytes.clone();
        for (at, byte) in &changes {
            let i = MAGIC.len() + at.index(header - MAGIC.len());
            bytes[i] = *byte;
        }
        let cap = u64::from(skirmish_core::MAX_STEPS_PER_FRAME);
        let started = Instant::now();
        if room {
            let _ = within(BUDGET, "a room", move || replay_room(&bytes));
        } else if let Ok(replay) = replay_within(bytes, "a client") {
            prop_assert!(replay.summary.most_steps <= cap, "{:?}", replay.summary);
        }
        prop_assert!(started.elapsed() <= BUDGET);
    }

    /// Any room configuration a JSON header can hold replays, differs or is
    /// refused within the budget.
    #[test]
    fn any_room_configuration_replays_within_bounds(
        capacity in prop_oneof![Just(0usize), Just(64), Just(4097), any::<usize>()],
        tick_ms in prop_oneof![Just(0u32), Just(1), Just(50), any::<u32>()],
        history_ms in prop_oneof![Just(1000u32), Just(60_000), any::<u32>()],
        radius in prop::option::of(prop_oneof![Just(0.0f32), Just(1e-30), Just(100.0), Just(-5.0), any::<f32>()]),
        arena in prop_oneof![Just(2000.0f32), Just(1e7), Just(41.0)],
    ) {
        let bytes = with_room_config(&recorded().1, |c| {
            c.capacity = capacity;
            c.game.sim.tick_ms = tick_ms;
            c.game.sim.arena.x = arena;
            c.game.rules.history_ms = history_ms;
            c.interest.radius = radius;
        });
        let started = Instant::now();
        let _ = within(BUDGET, "a room", move || replay_room(&bytes));
        prop_assert!(started.elapsed() <= BUDGET);
    }
}
