use super::*;

const FILE: &str = "000012.blob";

fn header() -> Header {
    Header {
        compression: TYPE_LZ4,
        column_family: 0x0102_0304,
        file_number: 12,
    }
}

#[test]
fn constants_are_frozen() {
    assert_eq!(BLOB_MAGIC, 0x5348_424c);
    assert_eq!(BLOB_MAGIC.to_le_bytes(), *b"LBHS");
    assert_eq!(FORMAT_VERSION, 1);
    assert_eq!(HEADER_LEN, 24);
    assert_eq!(RECORD_HEADER_LEN, 13);
    assert_eq!(FOOTER_LEN, 28);
    assert_eq!((TYPE_NONE, TYPE_LZ4, TYPE_ZSTD), (0, 1, 2));
    assert!((0..=2).all(is_known_compression));
    assert!((3..=255).all(|c| !is_known_compression(c)));
}

#[test]
fn encoding_is_frozen() {
    // Golden bytes: if this changes, the on-disk format changed.
    let h = encode_header(&header());
    let mut want = vec![
        0x4c, 0x42, 0x48, 0x53, // magic "SHBL"
        1,    // format version
        1,    // compression LZ4
        0, 0, // reserved
        4, 3, 2, 1, // column family 0x01020304
        12, 0, 0, 0, 0, 0, 0, 0, // file number 12
    ];
    want.extend_from_slice(&mask_crc(crc32c(&want)).to_le_bytes());
    assert_eq!(h.to_vec(), want);
    assert_eq!(&h[20..], &[0x18, 0xcd, 0xff, 0xca]);

    // The record "k" => "vv" at offset 24 of file 12, stored as is.
    let rh = RecordHeader {
        key_len: 1,
        value_len: 2,
        compression: TYPE_NONE,
    };
    let crc = record_crc(12, 24, &rh, b"k", b"vv");
    let r = encode_record_header(crc, &rh);
    let mut covered = vec![12, 0, 0, 0, 0, 0, 0, 0, 24, 0, 0, 0, 0, 0, 0, 0];
    covered.extend_from_slice(&[1, 0, 0, 0, 2, 0, 0, 0, 0]);
    covered.extend_from_slice(b"kvv");
    assert_eq!(crc, mask_crc(crc32c(&covered)));
    assert_eq!(
        r,
        [
            0x44, 0xb6, 0x05, 0x2b, // masked crc
            1, 0, 0, 0, // key length
            2, 0, 0, 0, // value length
            0, // compression none
        ]
    );
    assert_eq!(decode_record_header(&r), Some((crc, rh)));
    assert_eq!(rh.record_len(), 16);

    let f = encode_footer(&Footer {
        record_count: 1,
        record_bytes: 16,
    });
    assert_eq!(
        f,
        [
            1, 0, 0, 0, 0, 0, 0, 0, // record count
            16, 0, 0, 0, 0, 0, 0, 0, // record bytes
            0xed, 0x52, 0xc3, 0xdf, // masked crc of the 16 bytes above
            0, 0, 0, 0, // reserved
            0x4c, 0x42, 0x48, 0x53, // magic
        ]
    );
    assert_eq!(&f[16..20], &mask_crc(crc32c(&f[..16])).to_le_bytes());
}

#[test]
fn header_and_footer_roundtrip() {
    let h = header();
    assert_eq!(decode_header(&encode_header(&h), FILE), Ok(h));
    for f in [
        Footer {
            record_count: 0,
            record_bytes: 0,
        },
        Footer {
            record_count: u64::MAX,
            record_bytes: u64::MAX - 1,
        },
    ] {
        assert_eq!(decode_footer(&encode_footer(&f), FILE, 77), Ok(f));
    }
}

fn corruption_at(r: Result<impl std::fmt::Debug>, offset: u64, what: &str) {
    match r {
        Err(Error::Corruption {
            file,
            offset: o,
            what: w,
        }) => {
            assert_eq!((file.as_str(), o), (FILE, offset), "{w}");
            assert!(w.contains(what), "{w:?} does not mention {what:?}");
        }
        other => panic!("expected corruption ({what}), got {other:?}"),
    }
}

/// Re-encodes a header's checksum after editing it by hand.
fn reseal_header(b: &mut [u8; HEADER_LEN]) {
    let crc = mask_crc(crc32c(&b[..HEADER_CRC_AT]));
    b[HEADER_CRC_AT..].copy_from_slice(&crc.to_le_bytes());
}

#[test]
fn every_header_check_fails_as_corruption_at_offset_0() {
    let good = encode_header(&header());
    corruption_at(decode_header(&good[..23], FILE), 0, "header is 23 bytes");
    corruption_at(decode_header(&[0; 25], FILE), 0, "header is 25 bytes");
    corruption_at(decode_header(&[], FILE), 0, "header is 0 bytes");
    let mut b = good;
    b[0] ^= 1;
    corruption_at(decode_header(&b, FILE), 0, "magic");
    for i in 4..HEADER_LEN {
        let mut b = good;
        b[i] ^= 0x40;
        corruption_at(decode_header(&b, FILE), 0, "checksum");
    }
    let mut b = good;
    b[4] = 2;
    reseal_header(&mut b);
    corruption_at(decode_header(&b, FILE), 0, "version 2");
    let mut b = good;
    b[7] = 1;
    reseal_header(&mut b);
    corruption_at(decode_header(&b, FILE), 0, "reserved");
    let mut b = good;
    b[5] = 3;
    reseal_header(&mut b);
    corruption_at(decode_header(&b, FILE), 0, "compression type 3");
}

#[test]
fn every_footer_check_fails_as_corruption_at_its_offset() {
    let good = encode_footer(&Footer {
        record_count: 3,
        record_bytes: 99,
    });
    corruption_at(decode_footer(&good[1..], FILE, 5), 5, "27 bytes");
    let mut b = good;
    b[27] ^= 0x80;
    corruption_at(decode_footer(&b, FILE, 5), 5, "magic");
    for i in 0..20 {
        let mut b = good;
        b[i] ^= 1;
        corruption_at(decode_footer(&b, FILE, 5), 5, "checksum");
    }
    for i in 20..24 {
        let mut b = good;
        b[i] = 1;
        corruption_at(decode_footer(&b, FILE, 5), 5, "reserved");
    }
}

#[test]
fn record_crc_is_bound_to_file_offset_and_every_byte() {
    let h = RecordHeader {
        key_len: 3,
        value_len: 5,
        compression: TYPE_NONE,
    };
    let base = record_crc(7, 100, &h, b"key", b"value");
    assert_ne!(base, record_crc(8, 100, &h, b"key", b"value"));
    assert_ne!(base, record_crc(7, 101, &h, b"key", b"value"));
    assert_ne!(base, record_crc(7, 100, &h, b"kez", b"value"));
    assert_ne!(base, record_crc(7, 100, &h, b"key", b"valuf"));
    let z = RecordHeader {
        compression: TYPE_ZSTD,
        ..h
    };
    assert_ne!(base, record_crc(7, 100, &z, b"key", b"value"));
    // The split between key and value is covered by the lengths only.
    assert_eq!(base, record_crc(7, 100, &h, b"keyva", b"lue"));
    assert_eq!(decode_record_header(&[0; 12]), None);
}
