//! What holds a shell's terminal while a command runs: the terminal's
//! foreground process group (the `tpgid` in the shell's `/proc/PID/stat`),
//! the names of its processes, and whether one of them is a pager or a
//! full-screen program known to wait for keys, with the keys that leave
//! it. Asked when an agent's `run` outlives its timeout, so that the
//! answer says what it waits in (`git log` in `less`: `q`).

use tickloop_proto::wire::{Foreground, ForegroundKind};

/// Programs that wait for keys, and the keys (by name) that leave them.
const KNOWN: &[(&str, ForegroundKind, &[&str])] = &[
    ("less", ForegroundKind::Pager, &["q"]),
    ("more", ForegroundKind::Pager, &["q"]),
    ("most", ForegroundKind::Pager, &["q"]),
    ("pg", ForegroundKind::Pager, &["q"]),
    ("lv", ForegroundKind::Pager, &["q"]),
    ("moar", ForegroundKind::Pager, &["q"]),
    ("moor", ForegroundKind::Pager, &["q"]),
    (
        "vim",
        ForegroundKind::FullScreen,
        &["Escape", ":", "q", "Enter"],
    ),
    (
        "vi",
        ForegroundKind::FullScreen,
        &["Escape", ":", "q", "Enter"],
    ),
    (
        "nvim",
        ForegroundKind::FullScreen,
        &["Escape", ":", "q", "Enter"],
    ),
    (
        "view",
        ForegroundKind::FullScreen,
        &["Escape", ":", "q", "Enter"],
    ),
    ("nano", ForegroundKind::FullScreen, &["C-x"]),
    ("pico", ForegroundKind::FullScreen, &["C-x"]),
    ("emacs", ForegroundKind::FullScreen, &["C-x", "C-c"]),
    ("top", ForegroundKind::FullScreen, &["q"]),
    ("htop", ForegroundKind::FullScreen, &["q"]),
    ("btop", ForegroundKind::FullScreen, &["q"]),
    ("atop", ForegroundKind::FullScreen, &["q"]),
    ("iotop", ForegroundKind::FullScreen, &["q"]),
    ("tig", ForegroundKind::FullScreen, &["q"]),
    ("lazygit", ForegroundKind::FullScreen, &["q"]),
    ("ranger", ForegroundKind::FullScreen, &["q"]),
    ("nnn", ForegroundKind::FullScreen, &["q"]),
    ("ncdu", ForegroundKind::FullScreen, &["q"]),
    ("mutt", ForegroundKind::FullScreen, &["q"]),
    ("neomutt", ForegroundKind::FullScreen, &["q"]),
    ("mc", ForegroundKind::FullScreen, &["F10"]),
    ("watch", ForegroundKind::FullScreen, &["C-c"]),
];

/// What holds the terminal of the shell `shell_pid` now, when it is a
/// known pager or full-screen program, or any program while the terminal
/// shows the alternate screen (`alt_screen`); `None` when the shell
/// itself is in the foreground, or the program is not one that waits for
/// keys as far as can be told.
pub fn holding(shell_pid: u32, alt_screen: bool) -> Option<Foreground> {
    let tpgid = stat(shell_pid)?.tpgid;
    if tpgid <= 0 || u32::try_from(tpgid).ok()? == shell_pid {
        return None;
    }
    let mut group: Vec<(u32, String)> = std::fs::read_dir("/proc")
        .ok()?
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let stat = stat(pid)?;
            (stat.pgrp == tpgid).then_some((pid, stat.comm))
        })
        .collect();
    group.sort();
    let names: Vec<&str> = group.iter().map(|(_, name)| name.as_str()).collect();
    let leader = group
        .iter()
        .find(|(pid, _)| i64::from(*pid) == tpgid)
        .or(group.first())
        .map(|(_, name)| name.clone())?;
    known(&names, alt_screen, leader)
}

/// The program of `names` (a process group's) that waits for keys: a
/// pager first (it shows the output of the others: `git log | less`),
/// then a full-screen program, then, on the alternate screen, the
/// `leader`.
fn known(names: &[&str], alt_screen: bool, leader: String) -> Option<Foreground> {
    let find = |kind: ForegroundKind| {
        names.iter().find_map(|name| {
            KNOWN
                .iter()
                .find(|(known, k, _)| known == name && *k == kind)
                .map(|(program, kind, keys)| Foreground {
                    program: program.to_string(),
                    kind: *kind,
                    keys: keys.iter().map(|k| k.to_string()).collect(),
                })
        })
    };
    find(ForegroundKind::Pager)
        .or_else(|| find(ForegroundKind::FullScreen))
        .or_else(|| {
            alt_screen.then(|| Foreground {
                program: leader,
                kind: ForegroundKind::FullScreen,
                keys: Vec::new(),
            })
        })
}

/// The fields of `/proc/PID/stat` read here.
struct Stat {
    comm: String,
    pgrp: i64,
    tpgid: i64,
}

fn stat(pid: u32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text)
}

/// `PID (COMM) STATE PPID PGRP SESSION TTY_NR TPGID ...`; COMM may hold
/// spaces and parentheses, so it ends at the last `)`.
fn parse_stat(text: &str) -> Option<Stat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?.to_string();
    let fields: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    Some(Stat {
        comm,
        pgrp: fields.get(2)?.parse().ok()?,
        tpgid: fields.get(5)?.parse().ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_are_read_past_a_name_with_spaces_and_parentheses() {
        let stat = parse_stat("42 (a (b) c) S 1 40 40 34816 41 4194304 0").expect("parsed");
        assert_eq!(
            (stat.comm.as_str(), stat.pgrp, stat.tpgid),
            ("a (b) c", 40, 41)
        );
        assert!(parse_stat("garbage").is_none());
    }

    #[test]
    fn a_pager_is_named_before_the_program_whose_output_it_shows() {
        let got = known(&["git", "less"], false, "git".into()).expect("less");
        assert_eq!(got.program, "less");
        assert_eq!(got.kind, ForegroundKind::Pager);
        assert_eq!(got.keys, ["q"]);
        let vim = known(&["vim"], true, "vim".into()).expect("vim");
        assert_eq!(vim.kind, ForegroundKind::FullScreen);
        assert_eq!(vim.keys, ["Escape", ":", "q", "Enter"]);
    }

    #[test]
    fn an_unknown_program_is_named_only_on_the_alternate_screen() {
        assert_eq!(known(&["sleep"], false, "sleep".into()), None);
        let got = known(&["myapp"], true, "myapp".into()).expect("full screen");
        assert_eq!(
            (got.program.as_str(), got.kind, got.keys.len()),
            ("myapp", ForegroundKind::FullScreen, 0)
        );
    }
}
