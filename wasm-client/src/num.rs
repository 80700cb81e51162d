//! Numbers as the panel shows them, with a fixed count of decimals,
//! written with integer arithmetic: the standard float formatting
//! (Grisu and Dragon, about 10 % of the bundle) stays out of the page.
//!
//! Rounding is to the nearest, ties to even, of the float's exact value,
//! as `{:.N}` rounds (a test checks they agree); values whose scaled form
//! passes `u64` are shown without decimals, NaN and infinities as `NaN`
//! and `inf`.

/// `v` with `decimals` decimals (at most 6).
pub fn fixed(v: f64, decimals: u32) -> String {
    let decimals = decimals.min(6);
    if v.is_nan() {
        return "NaN".to_string();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    let scale = 10u64.pow(decimals);
    let Some(n) = scaled(v.abs(), scale) else {
        return format!("{}{}", if v < 0.0 { "-" } else { "" }, v.abs() as u64);
    };
    let sign = if v.is_sign_negative() { "-" } else { "" };
    let (whole, frac) = (n / scale, n % scale);
    if decimals == 0 {
        format!("{sign}{whole}")
    } else {
        format!("{sign}{whole}.{frac:0width$}", width = decimals as usize)
    }
}

/// `v` (finite, not negative) times `scale`, rounded to the nearest
/// integer, ties to even, computed exactly from the float's bits; `None`
/// past `u64`.
fn scaled(v: f64, scale: u64) -> Option<u64> {
    let bits = v.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1 << 52) - 1);
    let (mantissa, power) = if exponent == 0 {
        (fraction, -1074)
    } else {
        (fraction | 1 << 52, exponent - 1075)
    };
    let n = u128::from(mantissa) * u128::from(scale);
    if power >= 0 {
        return u64::try_from(n.checked_shl(power.unsigned_abs())?).ok();
    }
    let shift = power.unsigned_abs();
    if shift >= 127 {
        return Some(0);
    }
    let whole = n >> shift;
    let rest = n & ((1u128 << shift) - 1);
    let half = 1u128 << (shift - 1);
    let up = rest > half || (rest == half && whole & 1 == 1);
    u64::try_from(whole + u128::from(up)).ok()
}

/// [`fixed`] with a sign always (`+1.5`, `-0.3`, `+0.0`).
pub fn signed(v: f64, decimals: u32) -> String {
    let text = fixed(v, decimals);
    if text.starts_with('-') || text == "NaN" {
        text
    } else {
        format!("+{text}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_writes_what_the_standard_formatting_writes() {
        for v in [
            0.0, 1.0, -1.0, 0.04, 0.05, 0.15, 0.25, 1.25, -1.25, 2.5, 3.5, 12.345, 99.96, -0.04,
            1e9, 185.504, 1234.5678, -7.999,
        ] {
            for d in 0..=3 {
                assert_eq!(
                    fixed(v, d),
                    format!("{v:.prec$}", prec = d as usize),
                    "{v} {d}"
                );
            }
            assert_eq!(signed(v, 1), format!("{v:+.1}"), "{v}");
        }
        assert_eq!(fixed(f64::NAN, 1), "NaN");
        assert_eq!(fixed(f64::INFINITY, 1), "inf");
        assert_eq!(fixed(-f64::INFINITY, 0), "-inf");
    }
}
