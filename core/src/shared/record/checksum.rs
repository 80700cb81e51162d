//! CRC-32C (Castagnoli), the recordings' checksum, from the `crc` crate:
//! a 16-table form natively (the room checksums every tick's bytes) and
//! the table-less form in the page's bundle, where a recording's few
//! hundred kilobytes take a millisecond and 8 KiB of tables would take 8
//! KiB of the page's 100 KB budget.

use crc::{Crc, CRC_32_ISCSI};

#[cfg(not(target_arch = "wasm32"))]
const CASTAGNOLI: Crc<u32, crc::Table<16>> = Crc::<u32, crc::Table<16>>::new(&CRC_32_ISCSI);
#[cfg(target_arch = "wasm32")]
const CASTAGNOLI: Crc<u32, crc::NoTable> = Crc::<u32, crc::NoTable>::new(&CRC_32_ISCSI);

/// The CRC-32C of `bytes`.
pub(crate) fn crc32c(bytes: &[u8]) -> u32 {
    CASTAGNOLI.checksum(bytes)
}

/// The CRC-32C of what `crc` was the CRC-32C of, followed by `bytes`.
pub(crate) fn crc32c_append(crc: u32, bytes: &[u8]) -> u32 {
    // The register after `crc` is its complement (CRC-32C ends with an
    // xor of all ones); the crate takes an initial register unreflected.
    let mut digest = CASTAGNOLI.digest_with_initial((!crc).reverse_bits());
    digest.update(bytes);
    digest.finalize()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_check_value_and_appending_agree() {
        assert_eq!(crc32c(b"123456789"), 0xe306_9283);
        assert_eq!(crc32c(b""), 0);
        let whole = crc32c(b"hello, world");
        assert_eq!(crc32c_append(crc32c(b"hello"), b", world"), whole);
        assert_eq!(crc32c_append(crc32c(b""), b"hello, world"), whole);
        assert_eq!(crc32c_append(0, b""), 0);
    }
}
