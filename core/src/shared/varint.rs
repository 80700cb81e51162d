//! LEB128 varints, once for every encoder and decoder (binary inputs,
//! delta snapshots, recordings): seven bits a byte, low first, the high bit
//! set on every byte but the last. A decoder refuses a varint whose bits go
//! past 64 (a tenth byte above 1, or an eleventh byte) rather than drop
//! them: the same bytes never decode to two different values.

/// Why a varint could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarintError {
    /// The bytes ended inside it.
    End,
    /// Its bits go past 64.
    TooLong,
}

/// Appends `v` to `out`.
pub fn write(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// How many bytes [`write`] takes for `v`.
pub fn len(v: u64) -> usize {
    let bits = 64 - v.leading_zeros() as usize;
    bits.div_ceil(7).max(1)
}

/// Reads one varint from the bytes `next` gives (`None`: no more).
///
/// # Errors
/// [`VarintError::End`] when the bytes end inside it,
/// [`VarintError::TooLong`] when its bits go past 64.
pub fn read(mut next: impl FnMut() -> Option<u8>) -> Result<u64, VarintError> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = next().ok_or(VarintError::End)?;
        let part = u64::from(byte & 0x7f);
        if shift == 63 && part > 1 {
            return Err(VarintError::TooLong);
        }
        v |= part << shift;
        if byte & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err(VarintError::TooLong)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(bytes: &[u8]) -> Result<u64, VarintError> {
        let mut it = bytes.iter().copied();
        read(|| it.next())
    }

    #[test]
    fn every_width_round_trips_and_bits_past_64_are_refused() {
        for v in [
            0,
            1,
            127,
            128,
            300,
            u64::from(u32::MAX),
            u64::MAX - 1,
            u64::MAX,
        ] {
            let mut out = Vec::new();
            write(v, &mut out);
            assert_eq!(out.len(), len(v), "{v}");
            assert_eq!(decode(&out), Ok(v), "{v}");
            assert_eq!(decode(&out[..out.len() - 1]), Err(VarintError::End));
        }
        // u64::MAX is nine bytes of 0xff and a tenth of 1; a tenth of 2
        // would be bit 64.
        let mut past = vec![0xff; 9];
        past.push(0x02);
        assert_eq!(decode(&past), Err(VarintError::TooLong));
        let mut eleven = vec![0x80; 10];
        eleven.push(0x00);
        assert_eq!(decode(&eleven), Err(VarintError::TooLong));
    }
}
