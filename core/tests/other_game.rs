//! The client's prediction, reconciliation and smoothing run a game that is
//! not the tank game: a dot on a line, its input a speed, its state a
//! position without heading.

use std::time::Duration;

use skirmish_core::{delta, Fields, Width};
use skirmish_core::{
    Applied, Authority, CorrectionOutcome, Game, InterpolationConfig, LocalPlayer, Offset,
    PlayerId, RemoteBuffer, RemoteSample, Replicated, SampleKind, Size, SmoothingConfig, Stamp,
    Tick, Visual,
};

#[derive(Clone, Copy, Debug, PartialEq)]
struct Dots;

#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Dot(f32);

#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Shift(f32);

impl Offset for Shift {
    fn plus(&self, other: &Shift) -> Shift {
        Shift(self.0 + other.0)
    }
    fn negated(&self) -> Shift {
        Shift(-self.0)
    }
    fn scaled(&self, factor: f32) -> Shift {
        Shift(self.0 * factor)
    }
    fn size(&self) -> Size {
        Size {
            distance: self.0.abs(),
            angle: 0.0,
        }
    }
    fn is_finite(&self) -> bool {
        self.0.is_finite()
    }
}

impl Visual for Dot {
    type Offset = Shift;
    fn lerp(&self, to: &Dot, t: f32) -> Dot {
        Dot(self.0 + (to.0 - self.0) * t)
    }
    fn offset_to(&self, to: &Dot) -> Shift {
        Shift(to.0 - self.0)
    }
    fn shifted(&self, offset: &Shift) -> Dot {
        Dot(self.0 + offset.0)
    }
    fn is_finite(&self) -> bool {
        self.0.is_finite()
    }
}

impl Game for Dots {
    const NAME: &'static str = "dots";
    const VERSION: u32 = 1;
    type Config = ();
    type Input = i8;
    type Own = DotState;
    type Local = Dot;

    fn cadence((): &()) -> Duration {
        Duration::from_millis(50)
    }
    fn sanitize(input: i8) -> i8 {
        input.clamp(-1, 1)
    }
    fn predict(local: Dot, input: &i8, duration: Duration, (): &()) -> Dot {
        Dot(local.0 + f32::from(*input) * 100.0 * duration.as_secs_f32())
    }
    fn local(own: &DotState) -> Dot {
        Dot(own.x)
    }
    fn is_valid(own: &DotState) -> bool {
        own.x.is_finite()
    }
}

/// A dot as its own client gets it: who, when, where.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct DotState {
    id: PlayerId,
    tick: Tick,
    ack: Option<Tick>,
    x: f32,
}

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

/// A dot pushed along by the server between its states.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct Push {
    tick: Tick,
    dot: PlayerId,
    to: f32,
}

impl Applied for Push {
    type Key = (Tick, PlayerId);
    fn key(&self) -> (Tick, PlayerId) {
        (self.tick, self.dot)
    }
    fn tick(&self) -> Tick {
        self.tick
    }
    fn target(&self) -> PlayerId {
        self.dot
    }
}

impl Replicated for Dot {
    type Event = Push;
    fn is_valid(&self) -> bool {
        self.0.is_finite()
    }
    fn apply(&mut self, event: &Push) {
        self.0 = event.to;
    }
}

impl Replicated for DotState {
    type Event = Push;
    fn is_valid(&self) -> bool {
        self.x.is_finite()
    }
    fn apply(&mut self, event: &Push) {
        self.x = event.to;
    }
}

/// A push in binary: varint tick and dot, the f32 it goes to.
impl skirmish_core::Codec for Push {
    fn write(&self, w: &mut skirmish_core::Writer) {
        w.varint(u64::from(self.tick.0));
        w.varint(u64::from(self.dot.0));
        w.f32(self.to);
    }
    fn read(r: &mut skirmish_core::Reader<'_>) -> Result<Push, skirmish_core::ReadError> {
        Ok(Push {
            tick: Tick(r.varint32()?),
            dot: PlayerId(r.varint32()?),
            to: r.f32()?,
        })
    }
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

/// A thing in the world that never moves: two wide coordinates and a size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Pellet {
    x: u16,
    y: u16,
    size: u8,
}

impl Fields for Pellet {
    type Config = ();
    type Motion = ();
    const WIDTHS: &'static [Width] = &[Width::Wide, Width::Wide, Width::Byte];

    fn get(&self, i: usize) -> u16 {
        match i {
            0 => self.x,
            1 => self.y,
            _ => u16::from(self.size),
        }
    }
    fn set(&mut self, i: usize, value: u16) {
        match i {
            0 => self.x = value,
            1 => self.y = value,
            _ => self.size = value as u8,
        }
    }
    fn motion(_: u32, (): &()) {}
    fn moved(&self, (): &()) -> Pellet {
        *self
    }
}

/// A dot's own state in binary: its x, exactly.
impl skirmish_core::OwnState for DotState {
    const BYTES: usize = 4;
    fn id(&self) -> PlayerId {
        self.id
    }
    fn stamp(&self) -> Stamp {
        Stamp {
            tick: self.tick,
            ack: self.ack,
        }
    }
    fn write(&self, w: &mut skirmish_core::Writer) {
        w.f32(self.x);
    }
    fn read(
        id: PlayerId,
        stamp: Stamp,
        r: &mut skirmish_core::Reader<'_>,
    ) -> Result<DotState, skirmish_core::ReadError> {
        Ok(DotState {
            id,
            tick: stamp.tick,
            ack: stamp.ack,
            x: r.f32()?,
        })
    }
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

/// A dot's input as it travels: the tick it names and a step to take.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct Nudge {
    tick: Tick,
    by: i8,
}

impl skirmish_core::Wired for Nudge {
    fn tick(&self) -> Tick {
        self.tick
    }
    fn view_tick(&self) -> Option<f64> {
        None
    }
    fn acts_on_view(&self) -> bool {
        false
    }
    fn repeated_at(&self, tick: Tick) -> Nudge {
        Nudge { tick, ..*self }
    }
    fn with_view(self, _: Option<f64>) -> Nudge {
        self
    }
    fn is_finite(&self) -> bool {
        true
    }
    /// A step of -1, 0 or 1 in the head's bits, any other in a byte.
    fn write_bits(&self, out: &mut Vec<u8>) -> u8 {
        match self.by {
            -1..=1 => (self.by + 1) as u8,
            by => {
                out.push(by as u8);
                3
            }
        }
    }
    fn read_bits(
        head: u8,
        r: &mut skirmish_core::Reader<'_>,
        tick: Tick,
    ) -> Result<Nudge, skirmish_core::ReadError> {
        let by = match head {
            0..=2 => head as i8 - 1,
            3 => r.u8()? as i8,
            _ => {
                return Err(skirmish_core::ReadError::Invalid {
                    at: r.offset(),
                    what: "a nudge's unknown code",
                })
            }
        };
        Ok(Nudge { tick, by })
    }
}

/// What `welcome` tells a dot: how long its line is.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
struct Line {
    length: f32,
}

impl skirmish_core::Codec for Line {
    fn write(&self, w: &mut skirmish_core::Writer) {
        w.f32(self.length);
    }
    fn read(r: &mut skirmish_core::Reader<'_>) -> Result<Line, skirmish_core::ReadError> {
        Ok(Line { length: r.f32()? })
    }
}

impl skirmish_core::Networked for Dots {
    type Setup = Line;
    type Wire = Nudge;
    type Entity = Pellet;
    const EVENTS: &'static str = "pushes";

    fn config(_: &Line) -> &() {
        &()
    }
    /// A remote dot: its x to a unit, on a line of 65,535.
    fn quantise(own: &DotState, (): &()) -> Pellet {
        Pellet {
            x: skirmish_core::clamp(own.x, 0.0, 65_535.0) as u16,
            y: 0,
            size: 1,
        }
    }
    fn dequantise(p: &Pellet, id: PlayerId, tick: Tick, (): &()) -> DotState {
        DotState {
            id,
            tick,
            ack: None,
            x: f32::from(p.x),
        }
    }
}

impl skirmish_core::ServerGame for Dots {
    type Player = Dot;
    type World = ();
    type Settings = Line;

    fn start(_: &Line) -> ((), ()) {
        ((), ())
    }
    fn check(line: &Line) -> Result<(), String> {
        if line.length.is_finite() {
            Ok(())
        } else {
            Err("a line of no length".into())
        }
    }
    fn setup((): &(), (): &()) -> Line {
        Line { length: 1000.0 }
    }
    fn position(own: &DotState) -> skirmish_core::Vec2 {
        skirmish_core::Vec2::new(own.x, 0.0)
    }
    fn extent((): &()) -> skirmish_core::Vec2 {
        skirmish_core::Vec2::new(1000.0, 1.0)
    }

    fn spawn(
        (): &(),
        (): &(),
        players: &std::collections::BTreeMap<PlayerId, skirmish_core::ServerPlayer<Dots>>,
        _: Tick,
        _: &mut skirmish_core::SeededRng,
    ) -> Dot {
        Dot(100.0 * players.len() as f32)
    }

    fn step(step: skirmish_core::Step<'_, Dots>) {
        for (id, player) in step.players.iter_mut() {
            let (commands, dot) = player.commands_and_state();
            for command in commands {
                if let skirmish_core::Command::Apply { input, .. } = command {
                    dot.0 += f32::from(input.by);
                }
            }
            if dot.0 > 1000.0 {
                step.events.push(Push {
                    tick: step.tick,
                    dot: *id,
                    to: 0.0,
                });
                dot.0 = 0.0;
            }
        }
    }

    fn own(
        (): &(),
        player: &skirmish_core::ServerPlayer<Dots>,
        id: PlayerId,
        tick: Tick,
    ) -> DotState {
        DotState {
            id,
            tick,
            ack: player.ack(),
            x: player.state.0,
        }
    }
}

#[test]
fn a_dot_world_takes_its_inputs_at_the_ticks_they_name_like_the_tanks() {
    use skirmish_core::{InputMode, World};
    let mut w: World<Dots> = World::of((), (), 1);
    let (a, b) = (PlayerId(1), PlayerId(2));
    let x = |joined: Result<DotState, _>| joined.map(|d| d.x);
    assert_eq!(x(w.join_with(a, "a", InputMode::Scheduled)), Ok(0.0));
    assert_eq!(x(w.join_with(b, "b", InputMode::Queued)), Ok(100.0));
    assert!(w.join_with(a, "again", InputMode::Queued).is_err());
    let nudge = |t: u32, by: i8| Nudge { tick: Tick(t), by };
    // Scheduled: tick 1's and tick 3's inputs; tick 2's is missing and
    // repeats tick 1's; queued: two inputs, one per tick.
    w.receive(a, &[nudge(1, 5), nudge(3, 7)]);
    w.receive(b, &[nudge(1, 1), nudge(2, 1)]);
    for _ in 0..3 {
        w.step();
    }
    assert_eq!(w.state_of(a).map(|d| d.x), Some(5.0 + 5.0 + 7.0));
    assert_eq!(w.state_of(b).map(|d| d.x), Some(102.0));
    assert_eq!(w.stats().repeated_inputs, 1);
    assert_eq!(
        w.player(a).and_then(skirmish_core::ServerPlayer::ack),
        Some(Tick(3))
    );
    // Tick 2's input arriving now is late: counted, never applied.
    assert_eq!(w.receive(a, &[nudge(2, 100)]).late, 1);
    w.step();
    assert_eq!(w.stats().late_inputs, 1);
    // Events come back from the step that made them.
    w.receive(b, &[nudge(3, 127)]);
    for t in 4..=20 {
        w.receive(b, &[nudge(t, 127)]);
        if !w.step().is_empty() {
            assert_eq!(w.events()[0].dot, b);
            return;
        }
    }
    panic!("the dot never went past 1000");
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

/// The frames `id` got in `out`, in order.
fn frames_for(out: &skirmish_core::Outbox, id: PlayerId) -> Vec<skirmish_core::Frame> {
    out.deliveries()
        .iter()
        .filter(|(to, _)| *to == id)
        .map(|&(_, i)| out.frames()[i].clone())
        .collect()
}

/// A recorded room of dots with a JSON seat (player 1) and a binary one
/// (player 2), and what it sent them.
fn dot_room() -> (skirmish_core::Room<Dots>, skirmish_core::Outbox) {
    use skirmish_core::{Encoding, Outbox, Room, RoomConfig, Seating};
    let mut room: Room<Dots> = Room::recorded(RoomConfig {
        name: "line".into(),
        ..RoomConfig::default()
    });
    let mut out = Outbox::new();
    let seat = |encoding, binary_control| Seating {
        encoding,
        protocol: 2,
        datagrams: false,
        binary_control,
    };
    room.join(TEXT, "text", seat(Encoding::Json, false), &mut out)
        .expect("a seat");
    room.join(BINARY, "binary", seat(Encoding::Compact, true), &mut out)
        .expect("a seat");
    (room, out)
}

const TEXT: PlayerId = PlayerId(1);
const BINARY: PlayerId = PlayerId(2);

/// The binary dot's nudge of 127 at `tick`, in the binary input message,
/// into the room.
fn nudge_in(room: &mut skirmish_core::Room<Dots>, tick: u32, out: &mut skirmish_core::Outbox) {
    let nudge = Nudge {
        tick: Tick(tick),
        by: 127,
    };
    let mut bytes = Vec::new();
    skirmish_core::encode_inputs(&[nudge], None, Some(0), &mut bytes);
    let message: skirmish_core::ClientMessage<Nudge> =
        skirmish_core::decode_inputs(&bytes).expect("the dot's inputs decode");
    room.receive_frame_at(BINARY, &message, (false, &bytes), Duration::ZERO, out)
        .expect("taken");
}

#[test]
fn a_room_of_dots_welcomes_and_snapshots_like_a_room_of_tanks() {
    use skirmish_core::{compact, control, decode_server, Frame, ServerMessage};
    let (mut room, mut out) = dot_room();
    // Each is welcomed in its own form, with the dot game's setup.
    let Frame::Text(welcome) = &frames_for(&out, TEXT)[0] else {
        panic!("a JSON welcome");
    };
    assert!(welcome.contains(r#""length":1000.0"#), "{welcome}");
    let Frame::Binary(welcome) = &frames_for(&out, BINARY)[0] else {
        panic!("a binary welcome");
    };
    let Ok(ServerMessage::<Dots>::Welcome { setup, .. }) = control::decode_server(welcome) else {
        panic!("a dot welcome");
    };
    assert_eq!(setup, Line { length: 1000.0 });
    out.clear();
    // The snapshot the binary dot gets holds its own state exactly and
    // the other quantised.
    nudge_in(&mut room, 1, &mut out);
    room.tick(&mut out);
    let snapshot = frames_for(&out, BINARY)
        .into_iter()
        .find_map(|f| match f {
            Frame::Binary(b) if b[0] == compact::SNAPSHOT => Some(b),
            _ => None,
        })
        .expect("a compact snapshot");
    let frame = compact::decode_frame::<Pellet, DotState>(&snapshot).expect("decodes");
    assert_eq!(frame.own.x, 100.0 + 127.0, "the second dot, nudged once");
    assert_eq!(frame.own.ack, Some(Tick(1)));
    assert_eq!(frame.players.len(), 2);
    assert_eq!(frame.players[0].1.x, 0, "the first dot, quantised");
    let json = frames_for(&out, TEXT)
        .into_iter()
        .find_map(|f| match f {
            Frame::Text(t) if t.contains("snapshot") => Some(t),
            _ => None,
        })
        .expect("a JSON snapshot");
    let Ok(ServerMessage::<Dots>::Snapshot { players, .. }) = decode_server(&json) else {
        panic!("a dot snapshot: {json}");
    };
    assert_eq!(players[1].x, 227.0);
}

#[test]
fn a_room_of_dots_tells_its_events_and_records_itself_like_a_room_of_tanks() {
    use skirmish_core::{control, decode_server, Frame, ServerMessage};
    let (mut room, mut out) = dot_room();
    // Past 1000 the dot is pushed back: an event, under the game's name in
    // JSON and as binary events for the binary seat.
    let pushed = (1..=12).find(|&t| {
        out.clear();
        nudge_in(&mut room, t, &mut out);
        room.tick(&mut out);
        room.stats().events > 0
    });
    assert!(pushed.is_some(), "the dot was never pushed");
    let events = frames_for(&out, TEXT)
        .into_iter()
        .find_map(|f| match f {
            Frame::Text(t) if t.starts_with(r#"{"type":"pushes""#) => Some(t),
            _ => None,
        })
        .expect("the pushes in JSON");
    let Ok(ServerMessage::<Dots>::Events { events }) = decode_server(&events) else {
        panic!("dot events: {events}");
    };
    assert_eq!((events[0].dot, events[0].to), (BINARY, 0.0));
    let binary_events = frames_for(&out, BINARY)
        .into_iter()
        .find_map(|f| match f {
            Frame::Binary(b) if b[0] == control::EVENTS => Some(b),
            _ => None,
        })
        .expect("the pushes in binary");
    assert_eq!(
        control::decode_server::<Dots>(&binary_events),
        Ok(ServerMessage::Events { events })
    );
    // The room recorded itself: the recording replays bit for bit, and is
    // refused as a recording of the tank game.
    let mut recording = Vec::new();
    room.recorder().expect("recorded").take(&mut recording);
    let summary =
        skirmish_core::replay_room_of::<Dots>(&recording, |_, _| {}).expect("a dot room replays");
    assert_eq!((summary.joins, summary.events), (2, 1));
    let refused = skirmish_core::replay_room(&recording).map(|_| ());
    let why = refused.expect_err("another game").to_string();
    assert!(why.contains("dots 1"), "names the game: {why}");
}
