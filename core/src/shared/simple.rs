//! Ready-made parts for a simple game, so that a small game writes only
//! its rules: a point on a plane as what is drawn ([`Visual`] and
//! [`Offset`] for [`Vec2`]) and as snapshots carry it ([`Spot`]), the
//! binary forms of plain types ([`Codec`] for `()`, `bool`, `u8`, `i8`,
//! `u16`, `f32`, [`Vec2`] and pairs), a game without events ([`NoEvent`])
//! or setup ([`NoSetup`]), and an input as it travels with its tick and
//! view ([`Ticked`]).

use std::fmt::Debug;
use std::marker::PhantomData;

use glam::Vec2;
use serde::{Deserialize, Serialize};

use crate::shared::bytes::{Codec, ReadError, Reader, Writer};
use crate::shared::fields::{Fields, Width};
use crate::shared::game::{Applied, Carries, Offset, Replicated, Size, Target, Visual};
use crate::shared::tick::Tick;
use crate::shared::wired::Wired;

/// A shift on the plane; its size is its length.
impl Offset for Vec2 {
    fn plus(&self, other: &Vec2) -> Vec2 {
        *self + *other
    }

    fn negated(&self) -> Vec2 {
        -*self
    }

    fn scaled(&self, factor: f32) -> Vec2 {
        *self * factor
    }

    fn size(&self) -> Size {
        Size {
            distance: self.length(),
            angle: 0.0,
        }
    }

    fn is_finite(&self) -> bool {
        Vec2::is_finite(*self)
    }
}

/// A point on the plane, drawn where it is.
impl Visual for Vec2 {
    type Offset = Vec2;

    fn lerp(&self, to: &Vec2, t: f32) -> Vec2 {
        *self + (*to - *self) * t
    }

    fn offset_to(&self, to: &Vec2) -> Vec2 {
        *to - *self
    }

    fn shifted(&self, offset: &Vec2) -> Vec2 {
        *self + *offset
    }

    fn is_finite(&self) -> bool {
        Vec2::is_finite(*self)
    }

    fn place(&self) -> Vec2 {
        *self
    }
}

/// A point as a player's whole own state: nothing happens to it between
/// states, and it is valid when finite.
impl Replicated for Vec2 {
    type Event = NoEvent;

    fn is_valid(&self) -> bool {
        Vec2::is_finite(*self)
    }

    fn apply(&mut self, event: &NoEvent) {
        match *event {}
    }
}

/// Nothing.
impl Codec for () {
    fn write(&self, _: &mut Writer) {}

    fn read(_: &mut Reader<'_>) -> Result<(), ReadError> {
        Ok(())
    }
}

/// A byte, 0 or 1 (any other is refused).
impl Codec for bool {
    fn write(&self, w: &mut Writer) {
        w.u8(u8::from(*self));
    }

    fn read(r: &mut Reader<'_>) -> Result<bool, ReadError> {
        r.bool()
    }
}

/// A byte.
impl Codec for u8 {
    fn write(&self, w: &mut Writer) {
        w.u8(*self);
    }

    fn read(r: &mut Reader<'_>) -> Result<u8, ReadError> {
        r.u8()
    }
}

/// A byte, two's complement.
impl Codec for i8 {
    fn write(&self, w: &mut Writer) {
        w.u8(*self as u8);
    }

    fn read(r: &mut Reader<'_>) -> Result<i8, ReadError> {
        Ok(r.u8()? as i8)
    }
}

/// Two bytes, little-endian.
impl Codec for u16 {
    fn write(&self, w: &mut Writer) {
        w.u16(*self);
    }

    fn read(r: &mut Reader<'_>) -> Result<u16, ReadError> {
        r.u16()
    }
}

/// Its bits, little-endian: exactly.
impl Codec for f32 {
    fn write(&self, w: &mut Writer) {
        w.f32(*self);
    }

    fn read(r: &mut Reader<'_>) -> Result<f32, ReadError> {
        r.f32()
    }
}

/// x then y, exactly.
impl Codec for Vec2 {
    fn write(&self, w: &mut Writer) {
        w.f32(self.x);
        w.f32(self.y);
    }

    fn read(r: &mut Reader<'_>) -> Result<Vec2, ReadError> {
        Ok(Vec2::new(r.f32()?, r.f32()?))
    }
}

/// Both, one after the other.
impl<A: Codec, B: Codec> Codec for (A, B) {
    fn write(&self, w: &mut Writer) {
        self.0.write(w);
        self.1.write(w);
    }

    fn read(r: &mut Reader<'_>) -> Result<(A, B), ReadError> {
        Ok((A::read(r)?, B::read(r)?))
    }
}

/// What `welcome` tells a joiner of a game that has nothing to add to the
/// library's fields: nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoSetup {}

/// No setup gives the client no configuration beyond none.
impl Carries<()> for NoSetup {
    fn config(&self) -> &() {
        &()
    }
}

impl Codec for NoSetup {
    fn write(&self, _: &mut Writer) {}

    fn read(_: &mut Reader<'_>) -> Result<NoSetup, ReadError> {
        Ok(NoSetup {})
    }
}

/// A point on the plane as snapshots carry another player: x and y to a
/// unit, from 0 to 65,535 (clamped), still between snapshots. `C` is the
/// game's configuration, which it does not need.
pub struct Spot<C = ()> {
    /// x, in units.
    pub x: u16,
    /// y, in units.
    pub y: u16,
    config: PhantomData<fn() -> C>,
}

impl<C> Spot<C> {
    /// `point`, to the nearest unit.
    pub fn of(point: Vec2) -> Spot<C> {
        let unit = |v: f32| crate::shared::clamp::clamp(v.round(), 0.0, 65_535.0) as u16;
        Spot {
            x: unit(point.x),
            y: unit(point.y),
            config: PhantomData,
        }
    }

    /// The point it stands for.
    pub fn point(&self) -> Vec2 {
        Vec2::new(f32::from(self.x), f32::from(self.y))
    }
}

// By hand: derives would ask `C` for the same traits.
impl<C> Clone for Spot<C> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<C> Copy for Spot<C> {}

impl<C> Default for Spot<C> {
    fn default() -> Self {
        Spot::of(Vec2::ZERO)
    }
}

impl<C> PartialEq for Spot<C> {
    fn eq(&self, other: &Self) -> bool {
        (self.x, self.y) == (other.x, other.y)
    }
}

impl<C> Eq for Spot<C> {}

impl<C> Debug for Spot<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spot")
            .field("x", &self.x)
            .field("y", &self.y)
            .finish()
    }
}

/// Two wide fields; it never moves between snapshots.
impl<C> Fields for Spot<C> {
    type Config = C;
    type Motion = ();
    const WIDTHS: &'static [Width] = &[Width::Wide, Width::Wide];

    fn get(&self, i: usize) -> u16 {
        if i == 0 {
            self.x
        } else {
            self.y
        }
    }

    fn set(&mut self, i: usize, value: u16) {
        if i == 0 {
            self.x = value;
        } else {
            self.y = value;
        }
    }

    fn motion(_: u32, _: &C) {}

    fn moved(&self, (): &()) -> Spot<C> {
        *self
    }
}

/// The events of a game that has none: no value exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum NoEvent {}

impl Applied for NoEvent {
    type Key = ();

    fn key(&self) {
        match *self {}
    }

    fn tick(&self) -> Tick {
        match *self {}
    }

    fn target(&self) -> Target {
        match *self {}
    }
}

/// Never written; reading one is an error.
impl Codec for NoEvent {
    fn write(&self, _: &mut Writer) {
        match *self {}
    }

    fn read(r: &mut Reader<'_>) -> Result<NoEvent, ReadError> {
        Err(ReadError::Invalid {
            at: r.offset(),
            what: "an event of a game without events",
        })
    }
}

/// A game's input as it travels: the tick it is for, the input, and the
/// server tick the others were drawn at when it was made. The input's
/// binary form is its [`Codec`] after the library's envelope (no head
/// bits: an input with any is refused); it acts on nothing at its view,
/// and a repeat repeats it whole.
/// Its numbers are not checked here (none is refused as `non_finite`):
/// the game's `sanitize`, which every input goes through on both sides,
/// must replace what is not finite, as `Game::sanitize` asks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Ticked<I> {
    /// The tick it is for.
    pub tick: Tick,
    /// The game's input.
    pub input: I,
    /// The server tick, with fraction, the others were drawn at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view_tick: Option<f64>,
}

impl<I> Ticked<I> {
    /// `input` for `tick`, made while the others were drawn at `view_tick`.
    pub fn new(tick: Tick, input: I, view_tick: Option<f64>) -> Ticked<I> {
        Ticked {
            tick,
            input,
            view_tick,
        }
    }
}

impl<I: Copy + Debug + Codec + Send + Sync> Wired for Ticked<I> {
    type Input = I;

    fn input(&self) -> I {
        self.input
    }

    fn of(tick: Tick, input: I, view_tick: Option<f64>) -> Ticked<I> {
        Ticked::new(tick, input, view_tick)
    }

    fn tick(&self) -> Tick {
        self.tick
    }

    fn view_tick(&self) -> Option<f64> {
        self.view_tick
    }

    fn with_view(self, view_tick: Option<f64>) -> Ticked<I> {
        Ticked { view_tick, ..self }
    }

    fn acts_on_view(&self) -> bool {
        false
    }

    fn repeated_at(&self, tick: Tick) -> Ticked<I> {
        Ticked { tick, ..*self }
    }

    fn is_finite(&self) -> bool {
        true
    }

    fn write_bits(&self, out: &mut Vec<u8>) -> u8 {
        let mut w = Writer {
            bytes: std::mem::take(out),
        };
        self.input.write(&mut w);
        *out = w.bytes;
        0
    }

    fn read_bits(head: u8, r: &mut Reader<'_>, tick: Tick) -> Result<Ticked<I>, ReadError> {
        if head != 0 {
            return Err(ReadError::Invalid {
                at: r.offset(),
                what: "head bits set in an input whose game uses none",
            });
        }
        Ok(Ticked {
            tick,
            input: I::read(r)?,
            view_tick: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<T: Codec + PartialEq + Debug>(value: &T) {
        let mut w = Writer::default();
        value.write(&mut w);
        let mut r = Reader::new(&w.bytes);
        assert_eq!(&T::read(&mut r).expect("reads back"), value);
        assert_eq!(r.remaining(), 0, "{value:?}: nothing left");
        for cut in 0..w.bytes.len() {
            assert!(T::read(&mut Reader::new(&w.bytes[..cut])).is_err());
        }
    }

    #[test]
    fn plain_types_read_back_exactly_and_refuse_short_bytes() {
        round_trip(&());
        round_trip(&true);
        round_trip(&200u8);
        round_trip(&-3i8);
        round_trip(&60_000u16);
        round_trip(&-0.0f32);
        round_trip(&Vec2::new(1.5, f32::MIN_POSITIVE));
        round_trip(&(-1i8, 2u16));
        round_trip(&NoSetup {});
        assert!(bool::read(&mut Reader::new(&[2])).is_err(), "2 is no bool");
        assert!(NoEvent::read(&mut Reader::new(&[])).is_err());
    }

    #[test]
    fn a_point_lerps_shifts_and_measures_like_a_visual() {
        let (a, b) = (Vec2::new(0.0, 0.0), Vec2::new(3.0, 4.0));
        assert_eq!(Visual::lerp(&a, &b, 0.5), Vec2::new(1.5, 2.0));
        let offset = a.offset_to(&b);
        assert_eq!(offset.size().distance, 5.0);
        assert_eq!(a.shifted(&offset), b);
        assert_eq!(offset.plus(&offset.negated()), Vec2::ZERO);
        assert!(!Visual::is_finite(&Vec2::new(f32::NAN, 0.0)));
    }

    #[test]
    fn a_spot_is_a_point_to_a_unit_clamped_and_two_wide_fields() {
        let spot: Spot = Spot::of(Vec2::new(12.4, 70_000.0));
        assert_eq!((spot.x, spot.y), (12, 65_535));
        assert_eq!(spot.point(), Vec2::new(12.0, 65_535.0));
        let mut other = Spot::<()>::default();
        other.set(0, spot.get(0));
        other.set(1, spot.get(1));
        assert_eq!(other, spot);
        assert_eq!(spot.moved(&()), spot, "still");
        assert_eq!(Spot::<()>::of(Vec2::new(f32::NAN, -5.0)), Spot::default());
    }

    #[test]
    fn a_ticked_input_travels_with_its_codec_and_repeats_whole() {
        let input = Ticked::new(Tick(7), -1i8, Some(5.5));
        let mut out = vec![9];
        assert_eq!(input.write_bits(&mut out), 0, "no head bits");
        assert_eq!(out, [9, 0xff], "after what was there");
        let back = Ticked::<i8>::read_bits(0, &mut Reader::new(&out[1..]), Tick(7)).expect("reads");
        assert_eq!(back, Ticked::new(Tick(7), -1, None));
        assert_eq!(back.with_view(Some(5.5)), input);
        assert_eq!(input.repeated_at(Tick(8)).tick, Tick(8));
        assert!(!input.acts_on_view());
    }
}
