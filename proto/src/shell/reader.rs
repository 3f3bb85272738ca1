//! A shell's output read into its state: the marks say where the prompt,
//! the command line and each command's output are; the text between them
//! is each command's line and output. Fed each chunk of the PTY's output in
//! order; no I/O, no clock (the caller says what time it is at a mark).

use super::lines::Lines;
use super::scan::{Control, Event, Mark, Scanner, Sink};
use super::{HEAD_BOUND, KEPT_COMMANDS, OUTPUT_BOUND};
use crate::wire::{OutputCut, RunningCommand, ShellCommand, ShellState};
use std::collections::VecDeque;

/// The longest command line kept from the screen (between `B` and `C`).
const COMMAND_LINE_MAX: usize = 4096;

/// Where the text of the line being written belongs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
    /// Text before any mark, or after a command's end: kept nowhere.
    Elsewhere,
    /// After `A`: the prompt, kept only to know where the command line
    /// starts on its last line.
    Prompt,
    /// After `B`: the command line being typed.
    CommandLine,
    /// After `C`: the running command's output.
    Output,
}

/// One command's output as it comes: its beginning, and its end (a buffer
/// cut back to whole lines at its front once it holds twice the bound, so
/// each byte is copied about twice whatever the output's length).
#[derive(Debug, Default)]
struct Output {
    head: String,
    /// The beginning is full: what comes now is kept at the end only.
    head_closed: bool,
    tail: String,
    cut_lines: u64,
    cut_bytes: u64,
}

/// The bytes kept from the end of a command's output.
const TAIL_BOUND: usize = OUTPUT_BOUND - HEAD_BOUND;

impl Output {
    /// A line of output, ended.
    fn line(&mut self, line: &str) {
        self.push(line, true);
    }

    /// `piece` of output, then a line feed when `ended`.
    fn push(&mut self, piece: &str, ended: bool) {
        let size = piece.len() + usize::from(ended);
        if !self.head_closed && self.head.len() + size <= HEAD_BOUND {
            self.head.push_str(piece);
            if ended {
                self.head.push('\n');
            }
            return;
        }
        self.head_closed = true;
        self.tail.push_str(piece);
        if ended {
            self.tail.push('\n');
        }
        if self.tail.len() > 2 * TAIL_BOUND {
            self.cut_to_bound();
        }
    }

    /// Cuts the front of the end kept to [`TAIL_BOUND`] bytes, at a line's
    /// start where there is one, counting what was cut.
    fn cut_to_bound(&mut self) {
        if self.tail.len() <= TAIL_BOUND {
            return;
        }
        let mut cut = self.tail.len() - TAIL_BOUND;
        while !self.tail.is_char_boundary(cut) {
            cut += 1;
        }
        // Whole lines are kept: the line the cut falls in goes too.
        if let Some(nl) = self.tail[cut..].find('\n') {
            if cut + nl + 1 < self.tail.len() {
                cut += nl + 1;
            }
        }
        let gone = &self.tail[..cut];
        self.cut_lines += gone.bytes().filter(|b| *b == b'\n').count() as u64;
        self.cut_bytes += cut as u64;
        self.tail.drain(..cut);
    }

    /// The output kept, with a line saying what was cut where it was.
    fn render(&mut self, command: u64) -> (String, Option<OutputCut>) {
        self.cut_to_bound();
        let mut text = self.head.clone();
        let cut = (self.cut_bytes > 0).then(|| {
            let note = format!(
                "{} lines ({} bytes) were cut from the middle of command {command}'s output (its first {} and last {} bytes are kept); the terminal's history has more: `tickloop screen ID --history N`",
                self.cut_lines,
                self.cut_bytes,
                self.head.len(),
                self.tail.len(),
            );
            text.push_str(&format!(
                "[tickloop: {} lines ({} bytes) cut here]\n",
                self.cut_lines, self.cut_bytes
            ));
            OutputCut {
                lines: self.cut_lines,
                bytes: self.cut_bytes,
                note,
            }
        });
        text.push_str(&self.tail);
        (text, cut)
    }
}

/// What a feed changed, for the caller's deliveries and waits.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Fed {
    /// A command started or ended (each is one delivery).
    pub updates: u64,
    /// Anything in the state changed (also the prompt or the directory).
    pub changed: bool,
    /// The shell took a command line or began a new prompt (OSC 133 `A`,
    /// `C` or `D`; not `B`, which a mere redraw of the prompt repeats, as
    /// fish's and zsh's do on a resize): it has answered an Enter typed
    /// before.
    pub line_taken: bool,
}

/// One feed's events going into the reader.
struct Feeding<'a, 'b> {
    reader: &'a mut ShellReader,
    now: &'a mut (dyn FnMut() -> String + 'b),
    fed: &'a mut Fed,
}

impl Sink for Feeding<'_, '_> {
    /// Lines are made only where they are kept: a command line, an output,
    /// or for a wait (a Tick's screen costs next to nothing more).
    fn wants_text(&self) -> bool {
        self.reader.wants_lines()
    }

    fn event(&mut self, event: Event<'_>) {
        let reader = &mut *self.reader;
        match event {
            Event::Text(_) | Event::Control(_) if !reader.wants_lines() => {}
            Event::Text(text) => {
                let mut lines = std::mem::take(&mut reader.lines);
                lines.text(text, &mut |l| reader.ended_line(l));
                reader.lines = lines;
            }
            Event::Control(control) => reader.control(control),
            Event::Mark(mark) => reader.mark(mark, self.now, self.fed),
        }
    }
}

/// A shell's state, kept from its output.
#[derive(Debug)]
pub struct ShellReader {
    scanner: Scanner,
    lines: Lines,
    route: Route,
    /// The command line typed since `B`.
    typed: String,
    /// The column where the command line starts on the line being written
    /// (the prompt's end), until that line ends.
    command_col: usize,
    /// The command line the shell said (`633;E`, `C`'s `cmdline`).
    said: Option<String>,
    output: Option<Output>,
    running: Option<RunningCommand>,
    commands: VecDeque<ShellCommand>,
    commands_total: u64,
    cwd: Option<String>,
    at_prompt: bool,
    /// A prompt mark was seen.
    marked: bool,
    /// The last command ended with a `D` that gave no status, and no prompt
    /// came since: a `D` with a status now is that command's (zsh's end
    /// mark before its PROMPT_SP, then its precmd's status).
    status_owed: bool,
    /// Start and end of commands since the start.
    updates: u64,
    /// Collect the lines of text for waits ([`Self::take_lines`]).
    collecting: bool,
    collected: Vec<String>,
}

impl Default for ShellReader {
    fn default() -> Self {
        Self::new()
    }
}

impl ShellReader {
    pub fn new() -> ShellReader {
        ShellReader {
            scanner: Scanner::new(),
            lines: Lines::new(),
            route: Route::Elsewhere,
            typed: String::new(),
            command_col: 0,
            said: None,
            output: None,
            running: None,
            commands: VecDeque::new(),
            commands_total: 0,
            cwd: None,
            at_prompt: false,
            marked: false,
            status_owed: false,
            updates: 0,
            collecting: false,
            collected: Vec::new(),
        }
    }

    /// Reads one chunk of output; `now` is asked for the time (RFC 3339)
    /// when a command starts or ends.
    pub fn feed(&mut self, bytes: &[u8], now: &mut dyn FnMut() -> String) -> Fed {
        let mut fed = Fed::default();
        let mut scanner = std::mem::take(&mut self.scanner);
        scanner.feed(
            bytes,
            &mut Feeding {
                reader: self,
                now,
                fed: &mut fed,
            },
        );
        self.scanner = scanner;
        fed
    }

    fn wants_lines(&self) -> bool {
        self.collecting || self.route != Route::Elsewhere
    }

    fn control(&mut self, control: Control) {
        let mut lines = std::mem::take(&mut self.lines);
        lines.control(control, &mut |l| self.ended_line(l));
        self.lines = lines;
    }

    /// A line ended: it goes where the marks say, and to the waits.
    fn ended_line(&mut self, line: &str) {
        match self.route {
            Route::Elsewhere | Route::Prompt => {}
            Route::CommandLine => {
                let skip = std::mem::take(&mut self.command_col);
                let line: String = line.chars().skip(skip).collect();
                if self.typed.len() + line.len() < COMMAND_LINE_MAX {
                    if !self.typed.is_empty() {
                        self.typed.push('\n');
                    }
                    self.typed.push_str(&line);
                }
            }
            Route::Output => {
                if let Some(output) = self.output.as_mut() {
                    output.line(line);
                }
            }
        }
        if self.collecting {
            self.collected.push(line.to_string());
        }
    }

    /// A mark ends the line written so far (it belonged to what came
    /// before the mark).
    fn cut_line(&mut self) {
        if self.lines.is_empty() {
            self.lines.take();
            return;
        }
        let line = self.lines.take();
        match self.route {
            Route::Output => {
                if let Some(output) = self.output.as_mut() {
                    output.push(&line, false);
                }
                if self.collecting {
                    self.collected.push(line);
                }
            }
            _ => self.ended_line(&line),
        }
    }

    fn mark(&mut self, mark: Mark, now: &mut dyn FnMut() -> String, fed: &mut Fed) {
        fed.line_taken |= matches!(
            mark,
            Mark::PromptStart | Mark::OutputStart(_) | Mark::CommandEnd(_)
        );
        match mark {
            Mark::PromptStart => {
                self.cut_line();
                self.marked = true;
                if self.running.is_some() {
                    // The shell never said how the command ended.
                    self.finish(None, now, fed);
                }
                self.route = Route::Prompt;
                self.typed.clear();
                self.status_owed = false;
                fed.changed |= !self.at_prompt;
                self.at_prompt = true;
            }
            Mark::CommandStart => {
                // The prompt's text is not the command's: the command line
                // starts where the prompt ends (known when `A` came first,
                // or when the shell draws its prompt again over the line).
                self.command_col = match self.route {
                    Route::Prompt | Route::CommandLine => self.lines.col(),
                    _ => {
                        self.lines.take();
                        0
                    }
                };
                self.marked = true;
                if self.running.is_none() {
                    self.route = Route::CommandLine;
                    self.typed.clear();
                    fed.changed |= !self.at_prompt;
                    self.at_prompt = true;
                }
            }
            Mark::CommandLine(line) => self.said = Some(line),
            Mark::OutputStart(line) => {
                if self.running.is_some() {
                    // A second mark for the same command (two integrations).
                    return;
                }
                if let Some(line) = line {
                    self.said = Some(line);
                }
                self.cut_line();
                let typed = std::mem::take(&mut self.typed);
                let command = self.said.take().unwrap_or(typed);
                self.commands_total += 1;
                self.running = Some(RunningCommand {
                    n: self.commands_total,
                    command: command.trim().to_string(),
                    started: now(),
                });
                self.output = Some(Output::default());
                self.status_owed = false;
                self.route = Route::Output;
                self.at_prompt = false;
                self.updates += 1;
                fed.updates += 1;
                fed.changed = true;
            }
            Mark::CommandEnd(status) => {
                if self.running.is_some() {
                    self.cut_line();
                    self.finish(status, now, fed);
                    self.route = Route::Elsewhere;
                    self.status_owed = status.is_none();
                } else if let (Some(code), true) = (status, self.status_owed) {
                    self.status_owed = false;
                    if let Some(last) = self.commands.back_mut() {
                        last.exit = Some(code);
                        fed.changed = true;
                    }
                }
            }
            Mark::Cwd(cwd) => {
                if self.cwd.as_deref() != Some(cwd.as_str()) {
                    self.cwd = Some(cwd);
                    fed.changed = true;
                }
            }
        }
    }

    /// The running command ended with `status`.
    fn finish(&mut self, status: Option<i32>, now: &mut dyn FnMut() -> String, fed: &mut Fed) {
        let Some(running) = self.running.take() else {
            return;
        };
        let (output, output_cut) = self
            .output
            .take()
            .map(|mut o| o.render(running.n))
            .unwrap_or_default();
        self.commands.push_back(ShellCommand {
            n: running.n,
            command: running.command,
            exit: status,
            started: running.started,
            ended: Some(now()),
            output,
            output_cut,
        });
        while self.commands.len() > KEPT_COMMANDS {
            self.commands.pop_front();
        }
        self.updates += 1;
        fed.updates += 1;
        fed.changed = true;
    }

    /// The state as `read` and deliveries show it.
    pub fn state(&self) -> ShellState {
        ShellState {
            cwd: self.cwd.clone(),
            at_prompt: self.at_prompt,
            running: self.running.clone(),
            commands: self.commands.iter().cloned().collect(),
            commands_total: self.commands_total,
        }
    }

    /// Whether the shell shows its prompt and runs nothing.
    pub fn at_prompt(&self) -> bool {
        self.at_prompt
    }

    /// Whether a prompt mark was ever seen (the integration works).
    pub fn marked(&self) -> bool {
        self.marked
    }

    /// Commands started and ended since the start.
    pub fn updates(&self) -> u64 {
        self.updates
    }

    /// The running command's number.
    pub fn running(&self) -> Option<&RunningCommand> {
        self.running.as_ref()
    }

    /// Command `n`, if it ended and is still kept.
    pub fn ended(&self, n: u64) -> Option<&ShellCommand> {
        self.commands.iter().rev().find(|c| c.n == n)
    }

    /// Command `n` once it ended and its status is known (or will not
    /// come: the prompt is back, or another command started).
    pub fn finished(&self, n: u64) -> Option<&ShellCommand> {
        let command = self.ended(n)?;
        let last = self.commands.back().is_some_and(|c| c.n == n);
        (command.exit.is_some() || !last || !self.status_owed).then_some(command)
    }

    /// The running command as a [`ShellCommand`] so far (output included).
    pub fn running_so_far(&mut self) -> Option<ShellCommand> {
        let running = self.running.as_ref()?;
        let (output, output_cut) = self
            .output
            .as_mut()
            .map(|o| o.render(running.n))
            .unwrap_or_default();
        Some(ShellCommand {
            n: running.n,
            command: running.command.clone(),
            exit: None,
            started: running.started.clone(),
            ended: None,
            output,
            output_cut,
        })
    }

    /// The number the next command will get.
    pub fn next_command(&self) -> u64 {
        self.commands_total + 1
    }

    /// The working directory last reported.
    pub fn cwd(&self) -> Option<&str> {
        self.cwd.as_deref()
    }

    /// Keep the lines of text from now on for [`Self::take_lines`] (while
    /// someone waits for text), or stop.
    pub fn collect_lines(&mut self, on: bool) {
        if on && !self.wants_lines() {
            // Not kept up while nobody wanted it: start a fresh line.
            self.lines.take();
        }
        self.collecting = on;
        if !on {
            self.collected.clear();
        }
    }

    /// The lines ended since the last call (while collecting).
    pub fn take_lines(&mut self) -> Vec<String> {
        std::mem::take(&mut self.collected)
    }

    /// What is typed on the command line so far (after `B`; empty when the
    /// shell does not mark where its command line starts): on the cursor's
    /// line, up to the cursor, as what a shell draws past it is not typed
    /// (zsh's RPROMPT, fish's right prompt and autosuggestion).
    pub fn typed_so_far(&self) -> String {
        if self.route != Route::CommandLine {
            return String::new();
        }
        let mut typed = self.typed.clone();
        let upto = self.lines.col().saturating_sub(self.command_col);
        let partial: String = self
            .lines
            .partial()
            .chars()
            .skip(self.command_col)
            .take(upto)
            .collect();
        typed.push_str(&partial);
        typed
    }

    /// The line being written now, and how many characters it holds.
    pub fn partial_line(&self) -> (String, usize) {
        (self.lines.partial(), self.lines.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn clock() -> impl FnMut() -> String {
        let mut t = 0;
        move || {
            t += 1;
            format!("t{t}")
        }
    }

    fn read(chunks: &[&[u8]]) -> ShellReader {
        let mut reader = ShellReader::new();
        let mut now = clock();
        for chunk in chunks {
            reader.feed(chunk, &mut now);
        }
        reader
    }

    const PROMPT: &[u8] = b"\x1b]133;A\x07user@box:~$ \x1b]133;B\x07";

    #[test]
    fn the_command_line_is_what_follows_the_prompt_on_its_row() {
        // readline erasing a line: back to the row's start, over the prompt,
        // erase to the end; then the new text.
        let reader = read(&[
            b"\x1b]133;A\x07root@vm:/tmp# \x1b]133;B\x07",
            b"echo $PROMPT_COMMAND\\r",
            b"\r\x1b[14C\x1b[K",
            b"ls /",
            b"\r\n\x1b]133;C\x07",
        ]);
        assert_eq!(reader.running().map(|r| r.command.as_str()), Some("ls /"));
    }

    #[test]
    fn what_is_typed_is_the_command_line_up_to_the_cursor() {
        // An empty line with a right prompt drawn past the cursor (zsh's
        // RPROMPT: forward, the text, back to the command line).
        let reader = read(&[PROMPT, b"\x1b[60Cright-side\x1b[70D"]);
        assert_eq!(reader.typed_so_far(), "");
        // Typed text, then fish's autosuggestion after it, cursor put back.
        let reader = read(&[PROMPT, b"ec", b"ho hello\x1b[8D"]);
        assert_eq!(reader.typed_so_far(), "ec");
        // The prompt drawn again over the line (a redraw), its end marked
        // again, then the typed text: the line is what follows the prompt.
        let reader = read(&[PROMPT, b"ls", b"\r", &PROMPT[8..], b"ls -l"]);
        assert_eq!(reader.typed_so_far(), "ls -l");
    }

    #[test]
    fn a_typed_command_its_output_and_status_become_state() {
        let reader = read(&[
            PROMPT,
            b"lx\x08s -l\r\n",
            b"\x1b]133;C\x07",
            b"\x1b[1mtotal 0\x1b[0m\r\nfile\r\n",
            b"\x1b]133;D;2\x07\x1b]7;file://box/tmp\x07",
            PROMPT,
        ]);
        let state = reader.state();
        assert!(state.at_prompt);
        assert!(state.running.is_none());
        assert_eq!(state.cwd.as_deref(), Some("/tmp"));
        assert_eq!(state.commands.len(), 1);
        let command = &state.commands[0];
        assert_eq!(command.command, "ls -l");
        assert_eq!(command.exit, Some(2));
        assert_eq!(command.output, "total 0\nfile\n");
        assert_eq!(command.started, "t1");
        assert_eq!(command.ended.as_deref(), Some("t2"));
        assert_eq!(reader.updates(), 2);
    }

    #[test]
    fn the_shells_own_command_line_wins_and_doubled_marks_count_once() {
        // Two integrations at once (the person's prompt marks, and ours).
        let reader = read(&[
            PROMPT,
            b"printf x\r\n\x1b]633;E;printf x\x07\x1b]133;C\x07\x1b]133;C\x07x",
            b"\x1b]133;D;0\x07\x1b]133;D;0\x07",
            PROMPT,
            PROMPT,
        ]);
        let state = reader.state();
        assert_eq!(state.commands.len(), 1);
        assert_eq!(state.commands[0].command, "printf x");
        assert_eq!(state.commands[0].output, "x");
        assert_eq!(state.commands_total, 1);
    }

    #[test]
    fn a_feed_says_whether_the_shell_took_a_line_or_began_a_prompt() {
        let mut reader = ShellReader::new();
        let mut now = clock();
        assert!(reader.feed(PROMPT, &mut now).line_taken);
        // A prompt redrawn (its end again), echo and a directory are no
        // answer of the shell's to an Enter.
        assert!(!reader.feed(b"\r$ \x1b]133;B\x07ls", &mut now).line_taken);
        assert!(!reader.feed(b"\r\n", &mut now).line_taken);
        assert!(
            !reader
                .feed(b"\x1b]7;file://box/tmp\x07", &mut now)
                .line_taken
        );
        assert!(reader.feed(b"\x1b]133;C\x07", &mut now).line_taken);
        assert!(!reader.feed(b"out\r\n", &mut now).line_taken);
        assert!(reader.feed(b"\x1b]133;D;0\x07", &mut now).line_taken);
    }

    #[test]
    fn a_running_command_is_state_until_it_ends() {
        let mut reader = ShellReader::new();
        let mut now = clock();
        let fed = reader.feed(PROMPT, &mut now);
        assert!(fed.changed);
        assert_eq!(fed.updates, 0);
        let fed = reader.feed(b"sleep 100\r\n\x1b]133;C\x07", &mut now);
        assert_eq!(fed.updates, 1);
        let state = reader.state();
        assert!(!state.at_prompt);
        let running = state.running.expect("running");
        assert_eq!((running.n, running.command.as_str()), (1, "sleep 100"));
        let fed = reader.feed(b"^C\r\n\x1b]133;D;130\x07", &mut now);
        assert_eq!(fed.updates, 1);
        assert_eq!(reader.ended(1).and_then(|c| c.exit), Some(130));
        // A prompt with no end mark before it ends the command, status unknown.
        reader.feed(b"\x1b]133;C\x07", &mut now);
        reader.feed(PROMPT, &mut now);
        assert_eq!(reader.state().commands[1].exit, None);
    }

    #[test]
    fn a_long_output_keeps_its_beginning_and_end_and_says_what_was_cut() {
        let mut chunks: Vec<Vec<u8>> = vec![PROMPT.to_vec(), b"seq\r\n\x1b]133;C\x07".to_vec()];
        for n in 1..=10_000 {
            chunks.push(format!("{n}\r\n").into_bytes());
        }
        chunks.push(b"\x1b]133;D;0\x07".to_vec());
        let refs: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
        let state = read(&refs).state();
        let command = &state.commands[0];
        assert!(
            command.output.len() <= OUTPUT_BOUND + 200,
            "{}",
            command.output.len()
        );
        assert!(command.output.starts_with("1\n2\n3\n"));
        assert!(command.output.ends_with("9999\n10000\n"));
        let cut = command.output_cut.as_ref().expect("cut");
        assert!(cut.note.contains("cut from the middle"), "{}", cut.note);
        let kept = command
            .output
            .lines()
            .filter(|l| !l.starts_with('['))
            .count() as u64;
        assert_eq!(kept + cut.lines, 10_000);
        assert!(command
            .output
            .contains(&format!("[tickloop: {} lines", cut.lines)));
    }

    #[test]
    fn a_status_after_an_end_without_one_is_that_commands() {
        // zsh: the end mark in front of PROMPT_SP, then precmd's status.
        let mut reader = ShellReader::new();
        let mut now = clock();
        reader.feed(PROMPT, &mut now);
        reader.feed(
            b"printf x\r\n\x1b]133;C\x07x\x1b]133;D\x07%   \r \r",
            &mut now,
        );
        assert_eq!(reader.ended(1).map(|c| c.output.as_str()), Some("x"));
        assert!(reader.finished(1).is_none(), "the status is still owed");
        reader.feed(b"\x1b]133;D;3\x07", &mut now);
        assert_eq!(reader.finished(1).and_then(|c| c.exit), Some(3));
        reader.feed(PROMPT, &mut now);
        // A later stray status changes nothing.
        reader.feed(b"\x1b]133;D;9\x07", &mut now);
        assert_eq!(reader.ended(1).and_then(|c| c.exit), Some(3));
    }

    #[test]
    fn a_long_output_of_wide_characters_is_cut_between_characters_and_lines() {
        let mut chunks: Vec<Vec<u8>> = vec![PROMPT.to_vec(), b"x\r\n\x1b]133;C\x07".to_vec()];
        for n in 1..=5_000 {
            chunks.push(format!("é€{n}😀\r\n").into_bytes());
        }
        chunks.push(b"\x1b]133;D;0\x07".to_vec());
        let refs: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
        let state = read(&refs).state();
        let output = &state.commands[0].output;
        assert!(output.ends_with("é€5000😀\n"));
        let kept = output.lines().filter(|l| !l.starts_with('[')).count() as u64;
        let cut = state.commands[0].output_cut.as_ref().expect("cut");
        assert_eq!(kept + cut.lines, 5_000);
        assert!(output
            .lines()
            .all(|l| l.starts_with("é€") || l.starts_with("[tickloop")));
    }

    #[test]
    fn only_the_last_commands_are_kept() {
        let mut chunks: Vec<Vec<u8>> = Vec::new();
        for n in 0..(KEPT_COMMANDS + 5) {
            chunks.push(PROMPT.to_vec());
            chunks.push(format!("echo {n}\r\n\x1b]133;C\x07{n}\r\n\x1b]133;D;0\x07").into_bytes());
        }
        let refs: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
        let state = read(&refs).state();
        assert_eq!(state.commands.len(), KEPT_COMMANDS);
        assert_eq!(state.commands_total, (KEPT_COMMANDS + 5) as u64);
        assert_eq!(
            state.commands.last().map(|c| c.output.as_str()),
            Some(format!("{}\n", KEPT_COMMANDS + 4).as_str())
        );
    }

    #[test]
    fn waits_see_each_line_and_the_one_being_written() {
        let mut reader = ShellReader::new();
        let mut now = clock();
        reader.collect_lines(true);
        reader.feed(b"one\r\ntw", &mut now);
        assert_eq!(reader.take_lines(), ["one"]);
        assert_eq!(reader.partial_line().0, "tw");
        reader.feed(b"o\x1b]133;A\x07", &mut now);
        assert_eq!(reader.take_lines(), ["two"]);
    }

    proptest! {
        #[test]
        fn any_split_of_a_session_reads_the_same(
            cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..8),
        ) {
            let session: Vec<u8> = [
                PROMPT,
                b"make\r\n\x1b]133;C\x07building\r\n\x1b[31merror\x1b[0m\r\n\x1b]133;D;2\x07",
                b"\x1b]7;file://h/src\x07",
                PROMPT,
                b"echo \xc3\xa9\r\n\x1b]133;C\x07\xc3\xa9\r\n\x1b]133;D;0\x07",
                PROMPT,
            ]
            .concat();
            let whole = read(&[&session]).state();
            let mut at: Vec<usize> = cuts.iter().map(|i| i.index(session.len() + 1)).collect();
            at.sort_unstable();
            let mut chunks: Vec<&[u8]> = Vec::new();
            let mut from = 0;
            for cut in at {
                chunks.push(&session[from..cut]);
                from = cut;
            }
            chunks.push(&session[from..]);
            let split = read(&chunks).state();
            prop_assert_eq!(split.commands.len(), 2);
            prop_assert_eq!(&split, &whole);
        }
    }
}
