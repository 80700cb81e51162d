//! What the determinism checks of every game share: the seeded step
//! lengths and the hash of a step's bits (the harness's `trace` runs
//! them).

use std::time::Duration;

use crate::shared::rng::SeededRng;

/// How long a seeded step lasts: one cadence mostly; 2.4 cadences, 0.4
/// of one and three now and then (each cut into substeps the same way on
/// every target). The determinism checks of every game draw it so.
pub fn seeded_duration(rng: &mut SeededRng, cadence: Duration) -> Duration {
    match rng.below(8) {
        0 => cadence * 12 / 5,
        1 => cadence * 2 / 5,
        2 => cadence * 3,
        _ => cadence,
    }
}

/// FNV-1a, 64 bits: simple and identical everywhere. The determinism
/// checks hash the bits of every step's state with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fnv64(u64);

impl Default for Fnv64 {
    fn default() -> Self {
        Fnv64::new()
    }
}

impl Fnv64 {
    /// The hash of nothing.
    pub fn new() -> Fnv64 {
        Fnv64(0xcbf2_9ce4_8422_2325)
    }

    /// Folds in `bytes`.
    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// Folds in the bits of a float, little-endian.
    pub fn f32(&mut self, v: f32) {
        self.write(&v.to_bits().to_le_bytes());
    }

    /// The hash so far.
    pub fn finish(&self) -> u64 {
        self.0
    }
}
