//! Cross-crate tests for Skirmish: the tests live in `tests/tests/`.
