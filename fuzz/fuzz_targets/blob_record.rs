//! Fuzz target `blob_record`: blob indexes, blob file headers, records and footers, and whole blob files (`BlobFileReader::open`, `read`, `verify_all`); raw and with checksums repaired.
//! All checks live in `shale_fuzz::blob_record`; any panic is an engine bug.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = shale_fuzz::blob_record(data);
});
