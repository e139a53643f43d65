//! Fuzz target `block`: an SST block (data, index, metaindex or properties): forward, backward and seeks, checked against a reference decoder.
//! All checks live in `shale_fuzz::block`; any panic is an engine bug.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = shale_fuzz::block(data);
});
