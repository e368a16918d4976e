//! Java's `Integer.parseInt(String)`, which ZooKeeper uses to read the numbers of an `ip` ACL
//! (docs/protocol.md §12.3): an optional `+` or `-`, then one or more decimal digits, the value
//! within `i32`.
//!
//! Invariants: a digit is whatever `Character.digit(char, 10)` accepts, which is every Unicode
//! decimal digit (general category Nd) of the Basic Multilingual Plane, not only ASCII (a
//! supplementary-plane digit is a surrogate pair to Java, and no surrogate is a digit); the
//! table below is Java 17's, each entry the zero of a run of ten. Parsing is linear in the input
//! and allocates nothing.

/// The code points of the digit zero of every run of ten BMP decimal digits (Java 17, Unicode
/// 13), listed by enumerating `Character.digit(c, 10) == 0` over the BMP.
const DIGIT_ZEROS: [u32; 37] = [
    0x0030, 0x0660, 0x06F0, 0x07C0, 0x0966, 0x09E6, 0x0A66, 0x0AE6, 0x0B66, 0x0BE6, 0x0C66, 0x0CE6,
    0x0D66, 0x0DE6, 0x0E50, 0x0ED0, 0x0F20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80,
    0x1A90, 0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0,
    0xFF10,
];

/// `Character.digit(c, 10)`: the decimal value of a digit, or `None`.
fn digit(c: char) -> Option<u32> {
    let c = u32::from(c);
    // The zero at or below `c`; `c` is a digit when it is within nine of it.
    let i = DIGIT_ZEROS.partition_point(|&zero| zero <= c);
    let zero = *DIGIT_ZEROS.get(i.checked_sub(1)?)?;
    (c - zero < 10).then_some(c - zero)
}

/// `Integer.parseInt(s)`, `None` where Java throws `NumberFormatException`.
pub(crate) fn parse_int(s: &str) -> Option<i32> {
    let (negative, digits) = match s.chars().next()? {
        '-' => (true, &s[1..]),
        '+' => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() {
        return None;
    }
    // Accumulated as a magnitude in i64: |i32::MIN| fits, and anything past it fails at once.
    let limit = if negative {
        1_i64 << 31
    } else {
        (1_i64 << 31) - 1
    };
    let mut value: i64 = 0;
    for c in digits.chars() {
        value = value * 10 + i64::from(digit(c)?);
        if value > limit {
            return None;
        }
    }
    i32::try_from(if negative { -value } else { value }).ok()
}

#[cfg(test)]
mod tests {
    use super::parse_int;

    /// Each expectation is what `Integer.parseInt` gave on Java 17 for the same string.
    #[test]
    fn parses_as_java_does() {
        assert_eq!(parse_int("127"), Some(127));
        assert_eq!(parse_int("+127"), Some(127));
        assert_eq!(parse_int("-0"), Some(0));
        assert_eq!(parse_int("0127"), Some(127));
        assert_eq!(parse_int("\u{FF11}\u{FF12}\u{FF17}"), Some(127));
        assert_eq!(parse_int("\u{0661}\u{0660}"), Some(10));
        assert_eq!(parse_int("2147483647"), Some(i32::MAX));
        assert_eq!(parse_int("-2147483648"), Some(i32::MIN));
        assert_eq!(parse_int("2147483648"), None);
        assert_eq!(parse_int("-2147483649"), None);
        assert_eq!(parse_int("99999999999999999999"), None);
        for bad in [
            "",
            "+",
            "-",
            "+-1",
            " 1",
            "1 ",
            "1.0",
            "0x1",
            "\u{1D7CE}",
            "\u{2460}",
        ] {
            assert_eq!(parse_int(bad), None, "{bad:?}");
        }
    }
}
