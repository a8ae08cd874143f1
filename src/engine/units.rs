//! Byte units: parsing and printing message sizes, and the one range of
//! message sizes the page, the links and `cclsim` accept.
//!
//! At the bottom of the engine: every other module may use it, it uses
//! nothing of the engine but [`DType`]'s element size.

use super::dtype::DType;

/// Smallest message size, bytes (one element of the smallest dtype).
pub const MIN_MESSAGE_BYTES: u64 = 1;
/// Largest message size, bytes (16 GiB): the largest size in public
/// nccl-tests runs (`-e 16G`, e.g. the AWS p5 log in `tests/fixtures`).
/// The model, the page and `cclsim` share it; the cost model counts
/// elements in 64 bits, so it holds in the browser's wasm32 too. (Real
/// runs and the compression what-if have their own, smaller caps.)
pub const MAX_MESSAGE_BYTES: u64 = 16 << 30;

/// The allowed message sizes in words, the same sentence everywhere.
pub fn message_range_phrase() -> String {
    format!(
        "a size from {} to {} ({} bytes), a whole number of elements",
        format_bytes(MIN_MESSAGE_BYTES),
        format_bytes(MAX_MESSAGE_BYTES),
        MAX_MESSAGE_BYTES
    )
}

/// Parses a byte size: an integer (`1048576`) or a number with a unit
/// (`B`, `KB` = 1e3, `KiB` / `K` = 1024, `MB`, `MiB` / `M`, `GB`, `GiB` /
/// `G`, `TB`, `TiB` / `T`; case-insensitive, spaces allowed: `1.5 MiB`,
/// `64MiB`, `2gb`). nccl-tests' `-b 8 -e 1G` spell `G` as GiB, as here.
///
/// Errors: a sentence saying what is allowed, if the text is not such a
/// size, is negative, too large for 64 bits, or not a whole number of bytes.
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len());
    let (num, unit) = (t[..split].trim(), t[split..].trim());
    let mult: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" => 1_000,
        "kib" | "k" => 1 << 10,
        "mb" => 1_000_000,
        "mib" | "m" => 1 << 20,
        "gb" => 1_000_000_000,
        "gib" | "g" => 1 << 30,
        "tb" => 1_000_000_000_000,
        "tib" | "t" => 1 << 40,
        _ => {
            return Err(format!(
                "unknown unit `{unit}`; allowed: B, KB, KiB, MB, MiB, GB, GiB, TB, TiB"
            ))
        }
    };
    if num.is_empty()
        || !num.chars().all(|c| c.is_ascii_digit() || c == '.')
        || num.matches('.').count() > 1
    {
        return Err(
            "a non-negative number, optionally with a unit (e.g. 4096, 64MiB, 1.5 GB)".into(),
        );
    }
    let v: f64 = num
        .parse()
        .map_err(|_| "a non-negative number (e.g. 4096, 64MiB)".to_string())?;
    let b = v * mult as f64;
    if !b.is_finite() || b > (1u64 << 62) as f64 {
        return Err(message_range_phrase());
    }
    if b.fract() != 0.0 {
        return Err(format!(
            "a whole number of bytes ({num} {unit} is {b} bytes)"
        ));
    }
    Ok(b as u64)
}

/// A message size for `dtype`: [`parse_bytes`], then within
/// [`MIN_MESSAGE_BYTES`]..=[`MAX_MESSAGE_BYTES`] and a whole number of
/// `dtype` elements. The page's size field, the `bytes=` link key and
/// `cclsim --bytes / -b / -e` all call it.
///
/// Errors: `(sentence, nearest valid size)`: what is wrong and allowed,
/// and the size a lenient caller may use instead (clamped into the range,
/// rounded down to whole elements, at least one element); `None` if the
/// text is not a size at all.
pub fn message_bytes(text: &str, dtype: DType) -> Result<u64, (String, Option<u64>)> {
    let es = dtype.size_bytes() as u64;
    let b = parse_bytes(text).map_err(|e| (e, None))?;
    let fix = |b: u64| {
        let c = b.clamp(MIN_MESSAGE_BYTES, MAX_MESSAGE_BYTES);
        (c - c % es).max(es)
    };
    if !(MIN_MESSAGE_BYTES..=MAX_MESSAGE_BYTES).contains(&b) {
        return Err((
            format!(
                "{b} bytes is out of range; allowed: {}",
                message_range_phrase()
            ),
            Some(fix(b)),
        ));
    }
    if b % es != 0 {
        return Err((
            format!(
                "{b} bytes is not a whole number of {dtype} elements ({es} bytes each); using {}",
                fix(b)
            ),
            Some(fix(b)),
        ));
    }
    Ok(b)
}

/// Formats a byte count with binary units (`64 MiB`, `1.50 KiB`, `100 B`).
pub fn format_bytes(b: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if b < 1024 {
        return format!("{b} B");
    }
    let mut v = b as f64;
    let mut u = "B";
    for unit in UNITS {
        if v < 1024.0 {
            break;
        }
        v /= 1024.0;
        u = unit;
    }
    if (v - v.round()).abs() < 1e-9 {
        format!("{} {u}", v.round())
    } else {
        format!("{v:.2} {u}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_like_nccl_tests_and_print_back() {
        assert_eq!(parse_bytes("8"), Ok(8));
        assert_eq!(parse_bytes("1G"), Ok(1 << 30));
        assert_eq!(parse_bytes("1.5 MiB"), Ok(3 << 19));
        assert_eq!(parse_bytes("2gb"), Ok(2_000_000_000));
        assert!(parse_bytes("-1").is_err());
        assert!(parse_bytes("1.3").is_err());
        assert!(parse_bytes("1e999").is_err());
        assert_eq!(format_bytes(64 << 20), "64 MiB");
        assert_eq!(format_bytes(1536), "1.50 KiB");
    }

    #[test]
    fn one_range_one_sentence() {
        assert_eq!(message_bytes("8", DType::Fp32), Ok(8));
        let (why, fix) = message_bytes("17GiB", DType::Fp32).unwrap_err();
        assert!(why.contains("from 1 B to 16 GiB"), "{why}");
        assert_eq!(fix, Some(16 << 30));
        let (why, fix) = message_bytes("6", DType::Fp32).unwrap_err();
        assert!(why.contains("whole number of fp32"), "{why}");
        assert_eq!(fix, Some(4));
        assert_eq!(message_bytes("2", DType::Fp32).unwrap_err().1, Some(4));
    }
}
