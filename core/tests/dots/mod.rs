//! A second game for the library's tests: a dot on a line that its input
//! nudges left or right, pushed back to 0 by the server past 1000, with
//! still pellets as the entities its snapshots carry. It implements every
//! trait a game implements (`Game`, `Visual`, `Offset`, `Replicated`,
//! `Applied`, `OwnState`, `Fields`, `Wired`, `Networked`, `ServerGame`)
//! and names none of the tank game's types.

// Each test file uses a part of it.
#![allow(dead_code)]

use std::time::Duration;

use skirmish_core::{
    Applied, Fields, Game, Offset, PlayerId, Replicated, Size, Stamp, Tick, Vec2, Visual, Width,
};

#[derive(Clone, Copy, Debug, PartialEq)]
/// The game.
pub struct Dots;

#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Dot(pub f32);

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Shift(pub f32);

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
    fn place(&self) -> Vec2 {
        Vec2::new(self.0, 0.0)
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
}

/// A dot as its own client gets it: who, when, where.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DotState {
    pub id: PlayerId,
    pub tick: Tick,
    pub ack: Option<Tick>,
    pub x: f32,
}

/// A dot pushed along by the server between its states.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Push {
    pub tick: Tick,
    pub dot: PlayerId,
    pub to: f32,
}

impl Applied for Push {
    type Key = (Tick, PlayerId);
    fn key(&self) -> (Tick, PlayerId) {
        (self.tick, self.dot)
    }
    fn tick(&self) -> Tick {
        self.tick
    }
    /// A push of dot 0 is the line's own (every page hears of it); a
    /// push of a thing's id is that thing's.
    fn target(&self) -> skirmish_core::Target {
        match self.dot.thing() {
            Some(thing) => skirmish_core::Target::Thing(thing),
            None if self.dot.0 == 0 => skirmish_core::Target::World,
            None => skirmish_core::Target::Player(self.dot),
        }
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

/// A thing in the world that never moves: two wide coordinates and a size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pellet {
    pub x: u16,
    pub y: u16,
    pub size: u8,
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

/// A dot's input as it travels: the tick it names and a step to take.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Nudge {
    pub tick: Tick,
    pub by: i8,
}

impl skirmish_core::Wired for Nudge {
    type Input = i8;
    fn input(&self) -> i8 {
        self.by
    }
    fn of(tick: Tick, by: i8, _: Option<f64>) -> Nudge {
        Nudge { tick, by }
    }
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
pub struct Line {
    pub length: f32,
}

impl skirmish_core::Codec for Line {
    fn write(&self, w: &mut skirmish_core::Writer) {
        w.f32(self.length);
    }
    fn read(r: &mut skirmish_core::Reader<'_>) -> Result<Line, skirmish_core::ReadError> {
        Ok(Line { length: r.f32()? })
    }
}

/// A line's length is the server's; the dots step without a configuration.
impl skirmish_core::Carries<()> for Line {
    fn config(&self) -> &() {
        &()
    }
}

impl skirmish_core::Networked for Dots {
    type Setup = Line;
    type Wire = Nudge;
    type Entity = Pellet;
    const EVENTS: &'static str = "pushes";

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

/// The server keeps a dot's x; its player gets it with who, when and
/// which input it includes.
impl skirmish_core::IntoOwn<DotState> for Dot {
    fn own(&self, id: PlayerId, stamp: Stamp) -> DotState {
        DotState {
            id,
            tick: stamp.tick,
            ack: stamp.ack,
            x: self.0,
        }
    }
}

impl skirmish_core::ServerGame for Dots {
    type Player = Dot;
    /// Pellets the server owns (none unless a test spawns them).
    type World = skirmish_core::Things<Pellet>;
    type Settings = Line;

    fn start(_: &Line) -> ((), skirmish_core::Things<Pellet>) {
        ((), skirmish_core::Things::new())
    }
    fn things(world: &skirmish_core::Things<Pellet>) -> &[skirmish_core::Thing<Pellet>] {
        world.as_slice()
    }
    /// A dot further along the line sees further: the radius grows by
    /// one unit in ten of its x.
    fn view_radius(own: &DotState, radius: f32) -> f32 {
        radius + own.x / 10.0
    }
    fn check(line: &Line) -> Result<(), String> {
        if line.length.is_finite() {
            Ok(())
        } else {
            Err("a line of no length".into())
        }
    }
    fn setup(_: &skirmish_core::Things<Pellet>, (): &()) -> Line {
        Line { length: 1000.0 }
    }
    fn position(own: &DotState) -> skirmish_core::Vec2 {
        skirmish_core::Vec2::new(own.x, 0.0)
    }
    fn extent((): &()) -> skirmish_core::Vec2 {
        skirmish_core::Vec2::new(1000.0, 1.0)
    }

    fn spawn(spawn: skirmish_core::Spawn<'_, Dots>) -> Dot {
        Dot(100.0 * spawn.players.len() as f32)
    }

    fn step(step: skirmish_core::Step<'_, Dots>) {
        for (id, player) in step.players.iter_mut() {
            let (commands, dot) = player.commands_and_state();
            for command in commands {
                // A nudge arrives sanitized: -1, 0 or 1 unit.
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
        // A thing from x = BALLS on is a ball rolling at BALL_SPEED.
        let rolled = BALL_SPEED * 0.05;
        let balls: Vec<_> = step
            .world
            .as_slice()
            .iter()
            .filter(|t| t.at.x >= BALLS)
            .map(|t| t.id)
            .collect();
        for id in balls {
            if let Some(ball) = step.world.get_mut(id) {
                ball.at.x += rolled;
                ball.entity.x = ball.entity.x.saturating_add(rolled as u16);
            }
        }
        // A pellet of size 0 is knocked once: an event of the thing's, to
        // every page that sees it.
        let knocked: Vec<_> = step
            .world
            .as_slice()
            .iter()
            .filter(|t| t.entity.size == 0)
            .map(|t| t.id)
            .collect();
        for id in knocked {
            if let Some(thing) = step.world.get_mut(id) {
                thing.entity.size = 1;
                step.events.push(Push {
                    tick: step.tick,
                    dot: id.wire(),
                    to: f32::from(thing.entity.x),
                });
            }
        }
    }
}

/// The stick a dot's player holds: -1, 0 or 1, and a tap that jumps the
/// dot's next step by 1 once (latched like a tank's fire).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Stick {
    pub by: i8,
    pub tap: bool,
}

// Both in the form their serde derive describes.
impl skirmish_core::Codec for Stick {}
impl skirmish_core::Codec for Dot {}

/// What a dot's client keeps: a latched tap, and the pushes it saw.
#[derive(Clone, Debug, Default)]
pub struct DotClient {
    pub tapped: bool,
    pub taps: u32,
    pub pushes_seen: u32,
}

/// What a push meant to the own dot.
#[derive(Clone, Debug, PartialEq)]
pub enum DotNote {
    Pushed(f32),
}

impl skirmish_core::ClientState for DotClient {
    type Note = DotNote;
    /// How many pushes were seen: the one effect drawn.
    type Effects = u32;
}

/// Things from here on are balls: they roll along x at [`BALL_SPEED`]
/// and pages draw them predicted.
pub const BALLS: f32 = 2000.0;
/// Units a ball rolls a second (5 a tick).
pub const BALL_SPEED: f32 = 100.0;

impl skirmish_core::ClientGame for Dots {
    type Controls = Stick;
    type Client = DotClient;

    fn thing_motion(state: &DotState) -> skirmish_core::ThingMotion {
        if state.x >= BALLS {
            skirmish_core::ThingMotion::Predicted
        } else {
            skirmish_core::ThingMotion::Still
        }
    }

    fn check_setup(line: &Line) -> Result<(), String> {
        if line.length.is_finite() {
            Ok(())
        } else {
            Err("a line of no length".into())
        }
    }
    fn latch(client: &mut DotClient, stick: &Stick) -> bool {
        client.tapped |= stick.tap;
        stick.tap
    }
    fn input(client: &mut DotClient, stick: &Stick, _: bool, _: Tick) -> i8 {
        let by = if std::mem::take(&mut client.tapped) {
            1
        } else {
            stick.by
        };
        by.clamp(-1, 1)
    }
    fn stepped(client: &mut DotClient, step: &skirmish_core::Stepped<'_, Dots>) -> bool {
        if *step.input != 0 {
            client.taps += 1;
        }
        false
    }
    fn event(client: &mut DotClient, push: &Push, me: PlayerId, _: Duration) -> Option<DotNote> {
        client.pushes_seen += 1;
        (push.dot == me).then_some(DotNote::Pushed(push.to))
    }
    fn sample(own: &DotState) -> skirmish_core::RemoteSample<Dot> {
        skirmish_core::RemoteSample {
            tick: own.tick,
            visual: Dot(own.x),
            velocity: Shift(if own.x >= BALLS { BALL_SPEED } else { 0.0 }),
            alive: true,
        }
    }
    fn prune(_: &mut DotClient, _: Duration) {}
    fn effects(client: &DotClient, _: Duration) -> u32 {
        client.pushes_seen
    }
    fn forget(client: &mut DotClient, connection_lost: bool) {
        if connection_lost {
            client.pushes_seen = 0;
        }
    }
    fn hash_visual(dot: &Dot, h: &mut skirmish_core::StateHash) {
        h.f32(dot.0);
    }
    fn hash_state(own: &DotState, alive: bool) -> u64 {
        u64::from(own.x.to_bits()) | u64::from(alive) << 32
    }
    fn hash_note(note: &DotNote, h: &mut skirmish_core::StateHash) {
        let DotNote::Pushed(to) = note;
        h.word(12);
        h.f32(*to);
    }
    fn hash_effects(seen: &u32, h: &mut skirmish_core::StateHash) {
        h.word(u64::from(*seen));
    }
}

/// The seat of the JSON dot in the rooms of the tests.
pub const TEXT: PlayerId = PlayerId(1);
/// The seat of the binary dot.
pub const BINARY: PlayerId = PlayerId(2);

/// A room of dots with a JSON seat ([`TEXT`]) and a binary one
/// ([`BINARY`]), recorded if `recorded`, and what it sent them.
pub fn dot_room(recorded: bool) -> (skirmish_core::Room<Dots>, skirmish_core::Outbox) {
    dot_room_with(recorded, None)
}

/// [`dot_room`] with an interest radius.
pub fn dot_room_with(
    recorded: bool,
    radius: Option<f32>,
) -> (skirmish_core::Room<Dots>, skirmish_core::Outbox) {
    use skirmish_core::{Encoding, InterestConfig, Outbox, Room, RoomConfig, Seating};
    let config = RoomConfig {
        name: "line".into(),
        interest: InterestConfig {
            radius,
            ..InterestConfig::default()
        },
        ..RoomConfig::default()
    };
    let mut room: Room<Dots> = if recorded {
        Room::recorded(config)
    } else {
        Room::new(config)
    };
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

/// A room of dots and the two sessions in it, moved by one clock.
pub struct Pages {
    pub room: skirmish_core::Room<Dots>,
    pub out: skirmish_core::Outbox,
    pub text: skirmish_core::ClientSession<Dots>,
    pub binary: skirmish_core::ClientSession<Dots>,
    pub now: Duration,
    pub last_tick: Duration,
}

impl Pages {
    /// The room (its interest radius `radius`, if any) with both pages
    /// welcomed.
    pub fn new(radius: bool) -> Pages {
        let (room, out) = dot_room_with(false, radius.then_some(100.0));
        let config = |encoding| skirmish_core::SessionConfig {
            encoding,
            ..skirmish_core::SessionConfig::default()
        };
        let mut line = Pages {
            room,
            out,
            text: skirmish_core::ClientSession::new(config(skirmish_core::Encoding::Json)),
            binary: skirmish_core::ClientSession::recorded(
                config(skirmish_core::Encoding::Compact),
                usize::MAX,
            ),
            now: Duration::ZERO,
            last_tick: Duration::ZERO,
        };
        line.deliver();
        line
    }

    /// What the room sent, to its sessions, at once.
    pub fn deliver(&mut self) {
        for &(to, i) in self.out.deliveries() {
            let session = if to == TEXT {
                &mut self.text
            } else {
                &mut self.binary
            };
            match &self.out.frames()[i] {
                skirmish_core::Frame::Text(text) => {
                    session.receive(skirmish_core::Incoming::Text(text), self.now);
                }
                skirmish_core::Frame::Binary(bytes) => {
                    session.receive(skirmish_core::Incoming::Binary(bytes), self.now);
                }
            }
        }
        self.out.clear();
    }

    /// One 10 ms frame of both pages, and the room's tick when due.
    pub fn frame(&mut self) {
        self.now += Duration::from_millis(10);
        for id in [TEXT, BINARY] {
            let session = if id == TEXT {
                &mut self.text
            } else {
                &mut self.binary
            };
            for message in session.advance(self.now) {
                let (text, bytes) = match session.encode(&message) {
                    skirmish_core::Frame::Text(text) => (true, text.into_bytes()),
                    skirmish_core::Frame::Binary(bytes) => (false, bytes),
                };
                let message = skirmish_core::decode_client_frame::<Nudge>(text, &bytes)
                    .expect("the session sends what the server reads");
                let since = self.now.saturating_sub(self.last_tick);
                let _ = self.room.receive_at(id, &message, since, &mut self.out);
            }
        }
        self.deliver();
        if self.now.saturating_sub(self.last_tick) >= Duration::from_millis(50) {
            self.last_tick = self.now;
            self.room.tick(&mut self.out);
            self.deliver();
        }
    }

    pub fn run(&mut self, span: Duration) {
        let end = self.now + span;
        while self.now < end {
            self.frame();
        }
    }
}
