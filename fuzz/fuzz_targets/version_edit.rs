//! Fuzz target `version_edit`: one MANIFEST record (`VersionEdit::decode`), which must round-trip.
//! All checks live in `shale::fuzz_api::version_edit`; any panic is an engine bug.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = shale::fuzz_api::version_edit(data);
});
