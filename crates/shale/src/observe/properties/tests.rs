use super::*;

#[test]
fn number_formats() {
    assert_eq!(fmt_count(9999), "9999");
    assert_eq!(fmt_count(1_566_000), "1566K");
    assert_eq!(fmt_count(12_000_000), "12M");
    assert_eq!(fmt_size(0), "0.00 KB");
    assert_eq!(fmt_size(3_365_000), "3.21 MB");
}
