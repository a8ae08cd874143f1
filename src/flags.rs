//! The machine flags the native command lines share (`cclsim`, `cclrun`):
//! `--topo`, `--topology FILE` and `--profile FILE` become the keys of a
//! page link, and the link goes through [`Config::from_query`], so both
//! binaries read a machine the way the page does, cap the files they read
//! alike, and name the flag a bad value came from.
//!
//! It lives beside the engine, not in it: files on disk and flag names are
//! the command line's concern, and the engine only ever sees the query.

use crate::engine::calibrate::Profile;
use crate::engine::config::{Config, MEASURED};
use crate::engine::custom_topology::{self, CustomTopology, CUSTOM};
use form_urlencoded::Serializer;
use std::path::Path;

/// Largest profile file read, bytes. A fit of 100 000 rows is about 20 MB
/// of JSON, so any real profile fits, while a wrong path (`/dev/zero`, a
/// disk image) is refused after this many bytes instead of filling memory.
pub const MAX_PROFILE_BYTES: usize = 64 << 20;

/// Largest custom topology file read, bytes: the page's paste cap, so a
/// file the command line reads is one the page would take, and reading
/// stops where [`CustomTopology::parse`] would refuse the text anyway.
pub const MAX_TOPOLOGY_FILE_BYTES: usize = custom_topology::MAX_JSON_CHARS;

/// Reads a text file of at most `cap` bytes. Above it: `FILE is larger
/// than N bytes (the cap for a WHAT)`, after reading at most `cap + 1`
/// bytes, so a file that never ends (`/dev/zero`) still ends the read; a
/// file that is not UTF-8 gets an error naming the first bad byte.
pub fn read_capped(p: &Path, cap: usize, what: &str) -> Result<String, String> {
    use std::io::Read;
    let file =
        std::fs::File::open(p).map_err(|e| format!("cannot read {what} {}: {e}", p.display()))?;
    let mut buf = Vec::new();
    file.take(cap as u64 + 1)
        .read_to_end(&mut buf)
        .map_err(|e| format!("cannot read {what} {}: {e}", p.display()))?;
    if buf.len() > cap {
        return Err(format!(
            "{} is larger than {cap} bytes (the cap for a {what})",
            p.display()
        ));
    }
    String::from_utf8(buf).map_err(|e| {
        format!(
            "{} is not UTF-8 text (the byte at offset {} is not valid UTF-8); a {what} is text",
            p.display(),
            e.utf8_error().valid_up_to()
        )
    })
}

/// A profile written by `cclsim fit`, read (capped) and validated; every
/// error names the file.
pub fn load_profile(p: &Path) -> Result<Profile, String> {
    let text = read_capped(p, MAX_PROFILE_BYTES, "profile")?;
    let prof: Profile = serde_json::from_str(&text)
        .map_err(|e| format!("profile {} is not a cclsim profile: {e}", p.display()))?;
    prof.validate()
        .map_err(|e| format!("profile {}: {e}", p.display()))?;
    Ok(prof)
}

/// A custom topology file (docs/custom-topology.md), read (capped) and
/// parsed; a parse error names `--topology` and the file.
pub fn read_topology(p: &Path) -> Result<CustomTopology, String> {
    let text = read_capped(p, MAX_TOPOLOGY_FILE_BYTES, "custom topology")?;
    CustomTopology::parse(&text).map_err(|e| format!("--topology {}: {e}", p.display()))
}

/// The flags that name the machine, as given. `--topo` wins over
/// `--topology`, which wins over `--profile` as the machine's name; a
/// profile given beside either still lends its link figures.
#[derive(Clone, Copy, Debug, Default)]
pub struct MachineFlags<'a> {
    /// `--topo`: a preset's name (or `custom` / `measured`).
    pub topo: Option<&'a str>,
    /// `--topology`: a custom topology JSON file.
    pub topology: Option<&'a Path>,
    /// `--profile`: a profile from `cclsim fit`.
    pub profile: Option<&'a Path>,
}

/// The flag names whose key in the link is not simply `--KEY`: each
/// binary spells the size and the rank count its own way.
#[derive(Clone, Copy, Debug)]
pub struct FlagNames<'a> {
    /// The flag the `bytes` value came from (`--bytes`, `-b`, `-e`).
    pub bytes: &'a str,
    /// What sets the rank count (`--ranks`; for `cclrun`, mpirun's `-np`).
    pub ranks: &'a str,
}

impl FlagNames<'_> {
    /// The flag that sets the link's `key`.
    pub fn flag(&self, key: &str) -> String {
        match key {
            "bytes" => self.bytes.to_string(),
            "ranks" => self.ranks.to_string(),
            k => format!("--{k}"),
        }
    }
}

/// Appends the machine's keys to a link being built: `topo`, and
/// `topology` / `profile` from their files (the profile without its
/// measured rows, which the link never carries). The profile is read
/// first, so its errors come before any other.
///
/// With none of the three flags, the binaries differ on purpose, so the
/// caller says what happens: `otherwise` returns the JSON of its default
/// custom topology, or the error asking for a machine.
pub fn append_machine(
    q: &mut Serializer<'_, String>,
    m: &MachineFlags<'_>,
    otherwise: impl FnOnce() -> Result<String, String>,
) -> Result<(), String> {
    let profile = match m.profile {
        Some(p) => Some(load_profile(p)?),
        None => None,
    };
    let topo = match (m.topo, m.topology, &profile) {
        (Some(t), _, _) => t,
        (None, Some(_), _) => CUSTOM,
        (None, None, Some(_)) => MEASURED,
        (None, None, None) => {
            q.append_pair("topology", &otherwise()?);
            CUSTOM
        }
    };
    q.append_pair("topo", topo);
    if let Some(path) = m.topology {
        q.append_pair("topology", &read_topology(path)?.to_json());
    }
    if let Some(p) = &profile {
        let mut lean = p.clone();
        lean.rows.clear();
        q.append_pair(
            "profile",
            &serde_json::to_string(&lean).map_err(|e| e.to_string())?,
        );
    }
    Ok(())
}

/// The configuration of a link built from flags, through
/// [`Config::from_query`] as a page link; its first error (notices pass)
/// as `FLAG "VALUE": ALLOWED`, naming the flag rather than the link key.
pub fn config_of_query(query: &str, names: &FlagNames<'_>) -> Result<Config, String> {
    let (c, errors) = Config::from_query(query);
    match errors.iter().find(|e| !e.is_notice()) {
        Some(e) => Err(format!(
            "{} {:?}: {}",
            names.flag(&e.key),
            e.value,
            e.allowed
        )),
        None => Ok(c),
    }
}

/// The one path from flags to a [`Config`]: the caller's own keys in `q`
/// (op, dtype, bytes, ranks, ...), then the machine's
/// ([`append_machine`]), then [`config_of_query`].
pub fn machine_config(
    mut q: Serializer<'_, String>,
    m: &MachineFlags<'_>,
    otherwise: impl FnOnce() -> Result<String, String>,
    names: &FlagNames<'_>,
) -> Result<Config, String> {
    append_machine(&mut q, m, otherwise)?;
    config_of_query(&q.finish(), names)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// A file in the temp directory, unique to this process and test,
    /// removed when dropped.
    struct TempFile(PathBuf);

    impl TempFile {
        fn new(name: &str, contents: &[u8]) -> TempFile {
            let p = std::env::temp_dir().join(format!("ccl-flags-{}-{name}", std::process::id()));
            std::fs::write(&p, contents).expect("the temp directory is writable");
            TempFile(p)
        }
    }

    impl Drop for TempFile {
        fn drop(&mut self) {
            std::fs::remove_file(&self.0).ok();
        }
    }

    const CCLSIM: FlagNames<'static> = FlagNames {
        bytes: "--bytes",
        ranks: "--ranks",
    };

    fn query(bytes: &str) -> Serializer<'static, String> {
        let mut q = Serializer::new(String::new());
        q.append_pair("v", "1")
            .append_pair("op", "allreduce")
            .append_pair("bytes", bytes);
        q
    }

    fn no_default() -> Result<String, String> {
        Err("name a machine".into())
    }

    #[test]
    fn a_file_over_the_cap_is_refused_naming_the_file_and_the_cap() {
        let f = TempFile::new("over-cap.json", &[b'{'; 11]);
        let err = read_capped(&f.0, 10, "profile").expect_err("11 bytes > 10");
        assert_eq!(
            err,
            format!(
                "{} is larger than 10 bytes (the cap for a profile)",
                f.0.display()
            )
        );
        assert_eq!(
            read_capped(&f.0, 11, "profile").as_deref(),
            Ok("{{{{{{{{{{{")
        );
    }

    #[test]
    fn a_profile_that_is_not_json_names_the_file() {
        let f = TempFile::new(
            "not-json-profile.json",
            b"# nccl-tests log, not a profile\n",
        );
        let err = load_profile(&f.0).expect_err("not JSON");
        assert!(
            err.starts_with(&format!(
                "profile {} is not a cclsim profile: ",
                f.0.display()
            )),
            "{err}"
        );
        let m = MachineFlags {
            profile: Some(&f.0),
            ..MachineFlags::default()
        };
        let through = machine_config(query("1MiB"), &m, no_default, &CCLSIM);
        assert_eq!(through.err(), Some(err));
    }

    #[test]
    fn a_bad_bytes_value_names_the_callers_flag() {
        let m = MachineFlags {
            topo: Some("h100-8"),
            ..MachineFlags::default()
        };
        for flag in ["--bytes", "-b", "-e"] {
            let names = FlagNames {
                bytes: flag,
                ..CCLSIM
            };
            let err = machine_config(query("1Q"), &m, no_default, &names).expect_err("1Q");
            assert!(err.starts_with(&format!("{flag} \"1Q\": ")), "{err}");
        }
        let c = machine_config(query("1MiB"), &m, no_default, &CCLSIM).expect("valid flags");
        assert_eq!((c.topo.as_str(), c.bytes), ("h100-8", 1 << 20));
    }

    #[test]
    fn other_keys_name_their_flag_and_ranks_the_callers() {
        let cclrun = FlagNames {
            bytes: "-b",
            ranks: "-np (mpirun)",
        };
        assert_eq!(cclrun.flag("ranks"), "-np (mpirun)");
        assert_eq!(CCLSIM.flag("ranks"), "--ranks");
        assert_eq!(cclrun.flag("root"), "--root");
        let m = MachineFlags {
            topo: Some("nope-8"),
            ..MachineFlags::default()
        };
        let err = machine_config(query("1MiB"), &m, no_default, &cclrun).expect_err("no preset");
        assert!(err.starts_with("--topo \"nope-8\": one of "), "{err}");
    }

    #[test]
    fn without_machine_flags_the_callers_default_decides() {
        let none = MachineFlags::default();
        let err = machine_config(query("1MiB"), &none, no_default, &CCLSIM).expect_err("none");
        assert_eq!(err, "name a machine");
    }

    #[test]
    fn a_missing_topology_file_names_the_file() {
        let p = std::env::temp_dir().join(format!("ccl-flags-{}-absent.json", std::process::id()));
        let m = MachineFlags {
            topology: Some(&p),
            ..MachineFlags::default()
        };
        let err = machine_config(query("1MiB"), &m, no_default, &CCLSIM).expect_err("absent");
        assert!(
            err.starts_with(&format!("cannot read custom topology {}: ", p.display())),
            "{err}"
        );
    }
}
