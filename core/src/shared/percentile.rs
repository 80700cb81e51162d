//! One percentile for every figure Skirmish reports: the HUD, the bots,
//! the stepper's matrix and the relay runs all take the **nearest rank**
//! (the smallest value with at least `p` % of the values at or below it),
//! so a number in `docs/QUALITY.md` means the same wherever it came from.
//! The median of `[1, 2, 3, 4]` is 2; its 99th percentile is 4.

use crate::shared::clamp::clamp;

/// The index (0-based) of the `p`th percentile (0 to 100) among `len`
/// sorted values by nearest rank; `None` when there are none.
pub fn nearest_rank(len: usize, p: f64) -> Option<usize> {
    let last = len.checked_sub(1)?;
    let p = if p.is_nan() {
        0.0
    } else {
        clamp(p, 0.0, 100.0)
    };
    let rank = (p / 100.0 * len as f64).ceil() as usize;
    Some(rank.saturating_sub(1).min(last))
}

/// The `p`th percentile (0 to 100) of `values` by nearest rank; 0 when
/// there are none.
pub fn percentile(values: &[f64], p: f64) -> f64 {
    let mut sorted = values.to_vec();
    // Values equal under `total_cmp` are the same bits, so an unstable
    // sort gives the same order.
    sorted.sort_unstable_by(f64::total_cmp);
    nearest_rank(sorted.len(), p).map_or(0.0, |i| sorted[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_rank_of_small_and_odd_sets() {
        let v = [4.0, 1.0, 3.0, 2.0];
        assert_eq!(percentile(&v, 50.0), 2.0);
        assert_eq!(percentile(&v, 99.0), 4.0);
        assert_eq!(percentile(&v, 0.0), 1.0);
        assert_eq!(percentile(&v, 25.0), 1.0);
        assert_eq!(percentile(&v, 26.0), 2.0);
        assert_eq!(percentile(&[1.0, 2.0, 3.0], 50.0), 2.0);
        assert_eq!(percentile(&[], 50.0), 0.0);
        // 100 values: p99 is the 99th, not the largest.
        let hundred: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&hundred, 99.0), 99.0);
        assert_eq!(percentile(&hundred, f64::NAN), 1.0);
    }
}
