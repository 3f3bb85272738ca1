//! Every border of `tickloop_fuzz` under proptest: any bytes, and
//! mutations of the seed corpus (`fuzz/corpus/BORDER/`), for a bounded
//! number of cases each (`TICKLOOP_FUZZ_CASES`, 64 by default; CI runs
//! the default). Every file of the corpus, and every crash libFuzzer found
//! (`fuzz/corpus/BORDER/crash-*`, kept as tests once fixed), passes too.

use proptest::prelude::*;
use std::path::PathBuf;
use tickloop_fuzz::BORDERS;

/// The files of `fuzz/corpus/BORDER/`.
fn corpus(border: &str) -> Vec<Vec<u8>> {
    let folder = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(border);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&folder)
        .unwrap_or_else(|e| panic!("{}: {e}", folder.display()))
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .collect()
}

/// Any bytes, or a seed of `border` with bytes changed, cut or spliced.
fn input(border: &'static str) -> impl Strategy<Value = Vec<u8>> {
    let seeds = corpus(border);
    let count = seeds.len();
    prop_oneof![
        1 => proptest::collection::vec(any::<u8>(), 0..512),
        3 => (
            0..count,
            proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..8),
            any::<prop::sample::Index>(),
            proptest::collection::vec(any::<u8>(), 0..16),
        )
            .prop_map(move |(pick, edits, cut, splice)| {
                let mut data = seeds[pick].clone();
                for (at, byte) in edits {
                    if !data.is_empty() {
                        let i = at.index(data.len());
                        data[i] = byte;
                    }
                }
                if !data.is_empty() && !splice.is_empty() {
                    let i = cut.index(data.len());
                    data.splice(i..i, splice);
                }
                data
            }),
    ]
}

fn cases() -> u32 {
    std::env::var("TICKLOOP_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64)
}

fn border(name: &str) -> fn(&[u8]) {
    BORDERS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, f)| *f)
        .unwrap_or_else(|| panic!("no border {name}"))
}

macro_rules! border_test {
    ($name:ident) => {
        proptest! {
            #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]
            #[test]
            fn $name(data in input(stringify!($name))) {
                border(stringify!($name))(&data);
            }
        }
    };
}

border_test!(tick_stdout);
border_test!(attach_lines);
border_test!(pty_bytes);
border_test!(config_toml);
border_test!(mcp_lines);
border_test!(herdr_answer);

#[test]
fn every_file_of_the_corpus_passes_its_border() {
    for (name, run) in BORDERS {
        let files = corpus(name);
        assert!(!files.is_empty(), "no seeds for {name}");
        for data in files {
            run(&data);
        }
    }
}
