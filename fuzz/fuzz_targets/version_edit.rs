//! Fuzz target `version_edit`: one MANIFEST record (`VersionEdit::decode`), which must round-trip.
//! All checks live in `shale_fuzz::version_edit`; any panic is an engine bug.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = shale_fuzz::version_edit(data);
});
