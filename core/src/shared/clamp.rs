//! Clamping without a panic path.
//!
//! `f32::clamp` and `f64::clamp` assert that their bounds are ordered and
//! format both with `Debug` when they are not: that one assertion pulls the
//! whole float-formatting machinery (about 8 KB gzipped) into the browser
//! client, which otherwise prints no float with `{:?}`. [`clamp`] returns
//! exactly what they return for ordered bounds (a NaN stays NaN, -0.0 stays
//! -0.0) and has no assertion. Clippy refuses the float methods in this
//! workspace (`clippy.toml`).

/// `v` within `lo..=hi` (for `lo <= hi`): `lo` below it, `hi` above it,
/// else `v` itself, bit for bit (so NaN stays NaN).
pub fn clamp<T: PartialOrd>(v: T, lo: T, hi: T) -> T {
    if v < lo {
        lo
    } else if v > hi {
        hi
    } else {
        v
    }
}

#[cfg(test)]
mod tests {
    use super::clamp;

    #[test]
    #[allow(clippy::disallowed_methods)]
    fn clamp_matches_the_standard_one_bit_for_bit() {
        let values = [
            -2.0f32,
            -1.0,
            -0.0,
            0.0,
            0.5,
            1.0,
            3.0,
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
        ];
        for v in values {
            for (lo, hi) in [(-1.0f32, 1.0), (0.0, 0.0), (-0.0, 0.0), (0.0, 65535.0)] {
                assert_eq!(
                    clamp(v, lo, hi).to_bits(),
                    v.clamp(lo, hi).to_bits(),
                    "{v} in {lo}..={hi}"
                );
            }
        }
        assert_eq!(clamp(7.5f64, 0.0, 1.0), 1.0);
    }
}
