//! How a blob or a pellet travels in a snapshot set: x and y to a unit,
//! the mass to a unit, and what it is. Nothing moves between snapshots by
//! itself (a blob's next position is news, a pellet's never changes), so a
//! still pellet costs nothing in a delta, an eaten one is a removal and a
//! new one is its place (the pellet is the template).

use skirmish_core::{clamp, Fields, Vec2, Width};

use crate::Arena;

/// A living blob.
pub const BLOB: u8 = 0;
/// An eaten blob, coming back.
pub const DEAD: u8 = 1;
/// A pellet.
pub const PELLET: u8 = 2;

/// A blob or a pellet as snapshots carry it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bit {
    /// x, in units.
    pub x: u16,
    /// y, in units.
    pub y: u16,
    /// Mass, to a unit.
    pub mass: u16,
    /// [`BLOB`], [`DEAD`] or [`PELLET`].
    pub kind: u8,
}

impl Bit {
    /// A bit at `at` of `mass`, of `kind`.
    pub fn of(at: Vec2, mass: f32, kind: u8) -> Bit {
        let unit = |v: f32| clamp(v.round(), 0.0, 65_535.0) as u16;
        Bit {
            x: unit(at.x),
            y: unit(at.y),
            mass: unit(mass),
            kind,
        }
    }

    /// The point it stands at.
    pub fn point(&self) -> Vec2 {
        Vec2::new(f32::from(self.x), f32::from(self.y))
    }
}

impl Fields for Bit {
    type Config = Arena;
    type Motion = ();
    const WIDTHS: &'static [Width] = &[Width::Wide, Width::Wide, Width::Wide, Width::Byte];

    fn get(&self, i: usize) -> u16 {
        match i {
            0 => self.x,
            1 => self.y,
            2 => self.mass,
            _ => u16::from(self.kind),
        }
    }
    fn set(&mut self, i: usize, value: u16) {
        match i {
            0 => self.x = value,
            1 => self.y = value,
            2 => self.mass = value,
            _ => self.kind = value as u8,
        }
    }
    fn motion(_: u32, _: &Arena) {}
    fn moved(&self, (): &()) -> Bit {
        *self
    }
    /// Most new entries are pellets: a new one travels as its place alone
    /// (two varints) instead of in full.
    fn template() -> Option<Bit> {
        Some(Bit {
            x: 0,
            y: 0,
            mass: 1,
            kind: PELLET,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bit_rounds_to_a_unit_and_clamps() {
        let bit = Bit::of(Vec2::new(10.4, -3.0), 70_000.0, PELLET);
        assert_eq!((bit.x, bit.y, bit.mass, bit.kind), (10, 0, 65_535, PELLET));
        assert_eq!(bit.point(), Vec2::new(10.0, 0.0));
        let mut copy = Bit::default();
        for i in 0..Bit::WIDTHS.len() {
            copy.set(i, bit.get(i));
        }
        assert_eq!(copy, bit);
    }
}
