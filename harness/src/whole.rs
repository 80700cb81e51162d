//! The whole game, checked from a seeded world: every form a game gives
//! its messages round-trips, and the server's step is re-simulated.
//!
//! [`round_trips`] plays a seeded world of the game (its own seeded
//! inputs, [`Harness::seeded_input`]) and sends every value the game
//! produces through each of its forms, comparing what comes back, value
//! and bytes: the own states (binary and JSON), the events, the setup, the
//! inputs as they travel, what snapshots carry of the others (each field
//! within its width) and what is drawn. A game writes its binary forms by
//! hand; this is what keeps them in step with its types.
//!
//! [`sync_test`] is a sync test, as GGRS's `SyncTestSession` runs one: every
//! tick, the world is saved, stepped a few ticks ahead, restored and
//! stepped again with the same inputs; the two runs must give the same
//! hash, every tick. A step that reads anything outside its world (a
//! global, a clock, a counter kept elsewhere) or leaves part of its state
//! out of the world diverges, and the check names the tick and the part.

use std::fmt::Debug;

use serde::de::DeserializeOwned;
use serde::Serialize;
use skirmish_core::determinism::Fnv64;
use skirmish_core::{
    decode_inputs, encode_inputs, ClientGame, ClientMessage, Codec, EventOf, Fields, Harness,
    InputMode, OwnState, PlayerId, Reader, SeededRng, ServerGame, Tick, Width, Wired, World,
    Writer,
};

/// How many values of each kind [`round_trips`] checked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RoundTrips {
    /// Own states, in binary and JSON.
    pub own_states: u64,
    /// Events, in binary and JSON.
    pub events: u64,
    /// Inputs as they travel, in the binary input message and JSON.
    pub inputs: u64,
    /// Snapshot entities (players and things), field by field.
    pub entities: u64,
    /// Drawn states, in binary.
    pub visuals: u64,
}

/// A seeded world of `G` with `players` players, stepped by its own
/// seeded inputs: what both checks play.
struct Seeded<G: ServerGame + Harness> {
    world: World<G>,
    rng: SeededRng,
    ids: Vec<PlayerId>,
    last: Vec<G::Input>,
    step: u32,
}

impl<G: ServerGame + Harness> Seeded<G> {
    fn new(settings: &G::Settings, seed: u64, players: u32) -> Seeded<G> {
        let (config, game) = <G as ServerGame>::start(settings);
        let mut world = World::<G>::of(config, game, seed);
        let ids: Vec<PlayerId> = (1..=players).map(PlayerId).collect();
        for id in &ids {
            // Fresh ids in an empty world: a join cannot be refused.
            let _ = world.join_with(*id, "seeded", InputMode::Scheduled);
        }
        Seeded {
            world,
            rng: SeededRng::new(seed ^ 0x5eed),
            last: vec![G::Input::default(); ids.len()],
            ids,
            step: 0,
        }
    }

    /// Every player's next input, for `tick`, as it travels.
    fn inputs(&mut self, tick: u32) -> Vec<(PlayerId, G::Wire)> {
        let tick = Tick(tick);
        let mut out = Vec::with_capacity(self.ids.len());
        for (i, id) in self.ids.iter().enumerate() {
            let input = G::seeded_input(&mut self.rng, self.step, self.last[i]);
            self.last[i] = input;
            out.push((*id, G::Wire::of(tick, input, None)));
        }
        self.step += 1;
        out
    }
}

/// Plays a seeded world of `G` set up by `settings` (`players` players,
/// `ticks` ticks) and round-trips every value it produces through each
/// of its forms.
///
/// # Errors
/// The first value that does not come back as it went, with the tick and
/// what it was.
pub fn round_trips<G>(
    settings: &G::Settings,
    seed: u64,
    players: u32,
    ticks: u32,
) -> Result<RoundTrips, String>
where
    G: ServerGame + ClientGame + Harness,
{
    let mut seeded = Seeded::<G>::new(settings, seed, players);
    let mut counts = RoundTrips::default();
    let setup = G::setup(seeded.world.game(), seeded.world.config());
    both_forms(&setup, "the setup")?;
    for _ in 0..ticks {
        let tick = seeded.world.tick().next();
        for (id, wire) in seeded.inputs(tick.0) {
            input_forms::<G>(&wire).map_err(|e| format!("tick {tick}: {e}"))?;
            counts.inputs += 1;
            seeded.world.receive(id, &[wire]);
        }
        let events: Vec<EventOf<G>> = seeded.world.step().to_vec();
        for event in &events {
            both_forms(event, "an event").map_err(|e| format!("tick {tick}: {e}"))?;
            counts.events += 1;
        }
        let config = seeded.world.config().clone();
        for own in seeded.world.snapshot() {
            let at = |e: String| format!("tick {tick}, player {}: {e}", own.id());
            own_forms(&own).map_err(at)?;
            counts.own_states += 1;
            entity_fields(&G::quantise(&own, &config)).map_err(at)?;
            counts.entities += 1;
            codec(&G::local(&own), "its drawn state").map_err(at)?;
            counts.visuals += 1;
        }
        for thing in G::things(seeded.world.game()) {
            entity_fields(&thing.entity)
                .map_err(|e| format!("tick {tick}, thing {}: {e}", thing.id))?;
            counts.entities += 1;
        }
    }
    Ok(counts)
}

/// A value's JSON and binary forms both give it back, and writing it again
/// gives the same text and bytes.
fn both_forms<T>(value: &T, what: &str) -> Result<(), String>
where
    T: Serialize + DeserializeOwned + Codec + PartialEq + Debug,
{
    json(value, what)?;
    codec(value, what)
}

fn json<T: Serialize + DeserializeOwned + PartialEq + Debug>(
    value: &T,
    what: &str,
) -> Result<(), String> {
    let text =
        serde_json::to_string(value).map_err(|e| format!("{what} {value:?}: no JSON: {e}"))?;
    let back: T = serde_json::from_str(&text)
        .map_err(|e| format!("{what}: its JSON {text} reads not: {e}"))?;
    let again = serde_json::to_string(&back).unwrap_or_default();
    if back != *value || again != text {
        return Err(format!(
            "{what} {value:?} came back from JSON {text} as {back:?}"
        ));
    }
    Ok(())
}

fn codec<T: Codec + PartialEq + Debug>(value: &T, what: &str) -> Result<(), String> {
    let mut w = Writer::default();
    value.write(&mut w);
    let mut r = Reader::new(&w.bytes);
    let back = T::read(&mut r)
        .map_err(|e| format!("{what} {value:?}: its bytes read not: {}", e.what()))?;
    if !r.is_empty() {
        return Err(format!(
            "{what} {value:?}: {} of its bytes are left unread",
            r.remaining()
        ));
    }
    let mut again = Writer::default();
    back.write(&mut again);
    if back != *value || again.bytes != w.bytes {
        return Err(format!(
            "{what} {value:?} came back from its bytes as {back:?}"
        ));
    }
    Ok(())
}

/// An own state's binary form (after the library's head) and its JSON.
fn own_forms<O: OwnState>(own: &O) -> Result<(), String> {
    json(own, "its own state")?;
    let mut w = Writer::default();
    own.write(&mut w);
    let mut r = Reader::new(&w.bytes);
    let back = O::read(own.id(), own.stamp(), &mut r)
        .map_err(|e| format!("its own state {own:?}: its bytes read not: {}", e.what()))?;
    if !r.is_empty() {
        return Err(format!(
            "its own state {own:?}: {} of its {} bytes are left unread",
            r.remaining(),
            w.bytes.len()
        ));
    }
    if back != *own {
        return Err(format!(
            "its own state {own:?} came back from its bytes as {back:?}"
        ));
    }
    if !back.is_valid() {
        return Err(format!("its own state {own:?} is not valid to its page"));
    }
    Ok(())
}

/// An input in the binary input message and in JSON.
fn input_forms<G: ServerGame>(wire: &G::Wire) -> Result<(), String> {
    let text =
        serde_json::to_string(wire).map_err(|e| format!("an input {wire:?}: no JSON: {e}"))?;
    let back: G::Wire = serde_json::from_str(&text)
        .map_err(|e| format!("an input: its JSON {text} reads not: {e}"))?;
    if serde_json::to_string(&back).ok().as_deref() != Some(&text[..]) {
        return Err(format!(
            "the input {wire:?} came back from JSON {text} as {back:?}"
        ));
    }
    let mut bytes = Vec::new();
    encode_inputs(std::slice::from_ref(wire), None, None, &mut bytes);
    match decode_inputs::<G::Wire>(&bytes) {
        Ok(ClientMessage::Input { inputs, .. })
            if inputs.len() == 1
                && inputs[0].tick() == wire.tick()
                && inputs[0].input() == wire.input() =>
        {
            Ok(())
        }
        other => Err(format!(
            "the input {wire:?} came back from its bytes as {other:?}"
        )),
    }
}

/// Each field of a snapshot entity within its width (a byte field over
/// 255 would lose its high bits on the wire), and set back, the same.
fn entity_fields<E: Fields>(entity: &E) -> Result<(), String> {
    let mut copy = E::default();
    for (i, width) in E::WIDTHS.iter().enumerate() {
        let value = entity.get(i);
        if *width == Width::Byte && value > 0xff {
            return Err(format!(
                "{entity:?}: field {i} is a byte field holding {value}"
            ));
        }
        copy.set(i, value);
    }
    if copy != *entity {
        return Err(format!("{entity:?} came back from its fields as {copy:?}"));
    }
    Ok(())
}

/// Where a [`sync_test`] found the two runs apart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Divergence {
    /// The tick.
    pub tick: Tick,
    /// What differed: a player's own state, a thing, the events.
    pub what: String,
}

/// Steps a seeded world of `G` set up by `settings` (`players` players,
/// `ticks` ticks); at every tick saves it, steps it `ahead` ticks, restores the save and
/// steps those ticks again with the same inputs, and compares the hash
/// of every re-simulated tick. Returns the number of ticks compared.
///
/// # Errors
/// The first tick whose re-simulation differed, and what differed.
pub fn sync_test<G>(
    settings: &G::Settings,
    seed: u64,
    (players, ticks, ahead): (u32, u32, u32),
) -> Result<u64, Divergence>
where
    G: ServerGame + Harness + Clone,
{
    let mut seeded = Seeded::<G>::new(settings, seed, players);
    let mut compared = 0;
    for _ in 0..ticks {
        let saved = seeded.world.clone();
        let window: Vec<_> = (0..ahead.max(1))
            .map(|j| seeded.inputs(saved.tick().0 + 1 + j))
            .collect();
        let mut first = saved.clone();
        let mut next = None;
        let mut expected = Vec::with_capacity(window.len());
        for wires in &window {
            feed(&mut first, wires);
            first.step();
            expected.push(hashes(&first));
            next.get_or_insert_with(|| first.clone());
        }
        let mut again = saved;
        for (wires, expected) in window.iter().zip(&expected) {
            feed(&mut again, wires);
            again.step();
            compared += 1;
            if let Some(what) = first_difference(expected, &hashes(&again)) {
                return Err(Divergence {
                    tick: again.tick(),
                    what,
                });
            }
        }
        // On from the window's first tick (its later ticks are drawn again).
        if let Some(next) = next {
            seeded.world = next;
        }
    }
    Ok(compared)
}

fn feed<G: ServerGame>(world: &mut World<G>, wires: &[(PlayerId, G::Wire)]) {
    for (id, wire) in wires {
        world.receive(*id, std::slice::from_ref(wire));
    }
}

/// The hash of each part of a world after a step: every player's own
/// state (by id), every thing (by id), the step's events.
fn hashes<G: ServerGame>(world: &World<G>) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    for own in world.snapshot() {
        let mut w = Writer::default();
        own.write(&mut w);
        let stamp = own.stamp();
        out.push((
            format!(
                "player {}'s own state (tick {}, ack {:?})",
                own.id(),
                stamp.tick,
                stamp.ack
            ),
            fnv(&w.bytes),
        ));
    }
    for thing in G::things(world.game()) {
        let fields: Vec<u8> = (0..<G::Entity as Fields>::WIDTHS.len())
            .flat_map(|i| thing.entity.get(i).to_le_bytes())
            .collect();
        out.push((format!("thing {}", thing.id), fnv(&fields)));
    }
    let mut w = Writer::default();
    for event in world.events() {
        event.write(&mut w);
    }
    out.push(("the step's events".to_string(), fnv(&w.bytes)));
    out
}

fn fnv(bytes: &[u8]) -> u64 {
    let mut hash = Fnv64::new();
    hash.write(bytes);
    hash.finish()
}

/// What differs first between two runs' hashes of a tick.
fn first_difference(a: &[(String, u64)], b: &[(String, u64)]) -> Option<String> {
    for (x, y) in a.iter().zip(b) {
        if x != y {
            return Some(if x.0 == y.0 {
                x.0.clone()
            } else {
                format!("{} (then {})", x.0, y.0)
            });
        }
    }
    (a.len() != b.len()).then(|| format!("{} parts, then {}", a.len(), b.len()))
}
