//! Fuzz target `write_batch`: a WAL payload (`WriteBatch` from_data + iter + validate), which must re-encode to the same entries.
//! All checks live in `shale_fuzz::write_batch`; any panic is an engine bug.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = shale_fuzz::write_batch(data);
});
