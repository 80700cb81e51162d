//! The binary form a type's serde description gives it: [`Codec`]'s
//! default, so a game that derives `Serialize` and `Deserialize` for its
//! JSON gets its binary form from the same lines (`impl Codec for X {}`).
//!
//! The form is postcard's: a byte as itself, wider integers as varints
//! (signed ones zigzag-coded), floats their little-endian bits exactly, a
//! flag or an `Option`'s presence as 0 or 1, an enum's variant as its
//! index, a sequence or a string as its length then its items, struct
//! fields and tuple items in order with no names. It cannot carry what
//! only a self-describing format can: an internally tagged or untagged
//! enum (`#[serde(tag = "...")]`, `untagged`), a field skipped when
//! serialised (`skip_serializing_if`) or flattened. A type that needs one
//! of those for its JSON writes its binary form by hand; the harness's
//! round trip ([`Codec`]'s contract) tells which.
//!
//! [`Codec`]: crate::shared::bytes::Codec

use postcard::ser_flavors::Flavor;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::shared::bytes::{ReadError, Reader, Writer};

/// Appends to a writer's buffer in place.
struct Append<'a>(&'a mut Vec<u8>);

impl Flavor for Append<'_> {
    type Output = ();

    fn try_push(&mut self, data: u8) -> postcard::Result<()> {
        self.0.push(data);
        Ok(())
    }

    fn try_extend(&mut self, data: &[u8]) -> postcard::Result<()> {
        self.0.extend_from_slice(data);
        Ok(())
    }

    fn finalize(self) -> postcard::Result<()> {
        Ok(())
    }
}

impl Writer {
    /// Appends `value` in the form its serde description gives it.
    ///
    /// A description the form cannot carry (a sequence of unknown length,
    /// a `Serialize` that fails) appends nothing, and reading it back
    /// fails: the harness's round trip names the type.
    pub fn described<T: Serialize + ?Sized>(&mut self, value: &T) {
        let start = self.bytes.len();
        if postcard::serialize_with_flavor(value, Append(&mut self.bytes)).is_err() {
            self.bytes.truncate(start);
        }
    }
}

impl Reader<'_> {
    /// Reads a value written by [`Writer::described`].
    ///
    /// # Errors
    /// Bytes that end early ([`ReadError::End`]) or do not form a `T`
    /// ([`ReadError::Invalid`] at the value's first byte).
    pub fn described<T: DeserializeOwned>(&mut self) -> Result<T, ReadError> {
        let at = self.offset();
        let rest = self.rest();
        match postcard::take_from_bytes::<T>(rest) {
            Ok((value, left)) => {
                self.skip(rest.len() - left.len());
                Ok(value)
            }
            Err(postcard::Error::DeserializeUnexpectedEnd) => Err(ReadError::End { at }),
            Err(e) => Err(ReadError::Invalid { at, what: why(&e) }),
        }
    }
}

/// What a postcard error means, for a person.
fn why(e: &postcard::Error) -> &'static str {
    match e {
        postcard::Error::DeserializeBadVarint => "a varint past its type's width",
        postcard::Error::DeserializeBadBool => "a flag that is neither 0 nor 1",
        postcard::Error::DeserializeBadChar => "a character that is not one",
        postcard::Error::DeserializeBadUtf8 => "a string that is not UTF-8",
        postcard::Error::DeserializeBadOption => "an option that is neither 0 nor 1",
        postcard::Error::DeserializeBadEnum | postcard::Error::SerdeDeCustom => {
            "a value the type does not take (an unknown variant?)"
        }
        postcard::Error::WontImplement => {
            "a form only a self-describing format carries (a tagged enum?)"
        }
        _ => "bytes that do not form the value",
    }
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};

    use crate::shared::bytes::{Codec, ReadError, Reader, Writer};
    use crate::shared::state::PlayerId;
    use crate::shared::tick::Tick;

    #[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
    enum Told {
        Goal { tick: Tick, by: PlayerId },
        Over(f32),
    }
    impl Codec for Told {}

    #[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(tag = "what")]
    enum Tagged {
        Goal { by: u32 },
    }
    impl Codec for Tagged {}

    fn bytes<T: Codec>(v: &T) -> Vec<u8> {
        let mut w = Writer::default();
        v.write(&mut w);
        w.bytes
    }

    #[test]
    fn a_described_type_round_trips_in_its_compact_form() {
        let goal = Told::Goal {
            tick: Tick(300),
            by: PlayerId(2),
        };
        // The variant's index, then each field as a varint.
        assert_eq!(bytes(&goal), [0, 0xac, 0x02, 2]);
        let over = Told::Over(-0.0);
        for told in [goal, over] {
            let b = bytes(&told);
            let mut r = Reader::new(&b);
            assert_eq!(Told::read(&mut r), Ok(told));
            assert!(r.is_empty());
        }
        assert_eq!(bytes(&over)[1..], (-0.0f32).to_bits().to_le_bytes());
    }

    #[test]
    fn bad_bytes_are_errors_at_the_values_first_byte() {
        let mut r = Reader::at(&[9, 9, 7], 2);
        assert_eq!(
            Told::read(&mut r),
            Err(ReadError::Invalid {
                at: 2,
                what: "a value the type does not take (an unknown variant?)"
            })
        );
        let mut r = Reader::new(&[0, 0xac]);
        assert_eq!(Told::read(&mut r), Err(ReadError::End { at: 0 }));
        assert_eq!(r.offset(), 0);
    }

    #[test]
    fn a_tagged_enum_does_not_round_trip() {
        let b = bytes(&Tagged::Goal { by: 1 });
        assert!(Tagged::read(&mut Reader::new(&b)).is_err());
    }
}
