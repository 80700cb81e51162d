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
//! [`sync_test`] is the library's (`skirmish_core::sync_test`), re-exported:
//! a sync test of the server's step, as GGRS's `SyncTestSession` runs one,
//! which a game's page tests run in headless Chromium too.

use std::fmt::Debug;

use serde::de::DeserializeOwned;
use serde::Serialize;
use skirmish_core::{
    decode_inputs, encode_inputs, ClientGame, ClientMessage, Codec, EventOf, Fields, Harness,
    OwnState, Reader, SeededWorld, ServerGame, Width, Wired, Writer,
};

pub use skirmish_core::{sync_test, Desync, SyncReport};

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
    let mut seeded = SeededWorld::<G>::new(settings, seed, players);
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
