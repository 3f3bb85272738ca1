//! The program's output read for agents, on the emulator thread beside the
//! screen: each chunk, once the emulator has applied it, goes to a
//! [`ShellReader`] (a shell's commands, [`tickloop_proto::shell`]), and the
//! waits registered here are answered the moment what they wait for
//! arrives, with the screen as it is then: text in the output, the shell's
//! prompt, the end of a command typed by `run`. Nothing is polled.
//!
//! The shell's state is published on a `watch` when it changes, for the
//! instance loop (status, `read`, deliveries).

use regex::Regex;
use std::sync::Arc;
use tickloop_proto::shell::ShellReader;
use tickloop_proto::wire::{ShellCommand, ShellState};
use tokio::sync::{oneshot, watch};

/// The shell's state as last published.
#[derive(Debug, Clone, Default)]
pub struct ShellNow {
    pub state: ShellState,
    /// Commands started and ended (one delivery each).
    pub updates: u64,
    /// A prompt mark was seen: the shell's integration works.
    pub marked: bool,
    /// When it last changed (RFC 3339).
    pub at: String,
}

/// What a wait got, with the screen at that moment.
#[derive(Debug, Clone, Default)]
pub struct Waited {
    /// `text`: what matched, and its line.
    pub matched: Option<(String, String)>,
    /// `prompt`: the shell's state.
    pub shell: Option<ShellState>,
    /// `run`: the command, ended; and the working directory after it.
    pub command: Option<ShellCommand>,
    pub cwd: Option<String>,
    pub screen: Vec<String>,
}

/// Why a `run` was not typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotTyped {
    /// No prompt mark was ever seen.
    NoIntegration,
    /// A command runs, or the prompt is not drawn yet.
    NotAtPrompt(Option<String>),
    /// Text is typed on the prompt already.
    LineNotEmpty(String),
    /// Another `run` is being typed.
    Busy,
    /// Not at an empty prompt, but input typed just before has had no
    /// answer yet, or the shell has not taken the line of an Enter typed:
    /// it may not have taken them (asked with [`Run::wait_for_answer`]).
    Unanswered,
}

/// What the instance asks of the emulator thread about its output.
pub enum ShellMsg {
    /// Answer when `regex` matches a line of output that arrives from now
    /// on (or, with `screen`, one on the screen now).
    Text {
        regex: Regex,
        screen: bool,
        reply: oneshot::Sender<Waited>,
    },
    /// Answer when the shell is at its prompt (at once if it is). With
    /// `hold_for_enter`, a prompt shown before the last Enter typed is not
    /// one: the shell has not taken that line yet (`keys ... Enter`, then
    /// `wait --prompt`), and a mark of the shell's after it is waited for.
    Prompt {
        hold_for_enter: bool,
        reply: oneshot::Sender<Waited>,
    },
    /// Type `bytes` (the command and Enter) if the shell is at an empty
    /// prompt: `typed` gets the number the command will have; `ended` its
    /// end. With `first_prompt` (the integration was injected), a shell
    /// that has not shown its first prompt yet is waited for.
    Run(Run),
    /// Command `n` as it is now (running with its output so far, or ended).
    Command {
        n: u64,
        reply: oneshot::Sender<Option<ShellCommand>>,
    },
}

/// A command to type at the prompt ([`ShellMsg::Run`]).
pub struct Run {
    pub bytes: Vec<u8>,
    pub first_prompt: bool,
    /// The integration's file that marks the command as an agent's (run
    /// with no pager): written with a new number just before it is typed.
    pub marker: Option<std::path::PathBuf>,
    /// When the prompt's state refuses the command while input typed
    /// before it is unanswered (`keys C-u`, then `run`), say
    /// [`NotTyped::Unanswered`], so that the caller asks again once the
    /// shell has answered it.
    pub wait_for_answer: bool,
    pub typed: oneshot::Sender<Result<u64, NotTyped>>,
    pub ended: oneshot::Sender<Waited>,
}

struct TextWait {
    regex: Regex,
    /// Characters of the line being written when the wait started: a match
    /// must end after them.
    skip: usize,
    /// `--screen`: a match on the screen counts, whenever it shows there
    /// (the program may draw its line in ways a line of output does not
    /// read as: a right prompt, cursor moves, a prompt with no newline).
    screen: bool,
    reply: oneshot::Sender<Waited>,
}

struct PromptWait {
    hold_for_enter: bool,
    reply: oneshot::Sender<Waited>,
}

struct RunWait {
    n: u64,
    reply: oneshot::Sender<Waited>,
}

/// The emulator thread's reader of the output, and the waits on it.
pub struct ShellWatch {
    reader: ShellReader,
    texts: Vec<TextWait>,
    prompts: Vec<PromptWait>,
    runs: Vec<RunWait>,
    /// Runs waiting for the shell's first prompt.
    early_runs: Vec<Run>,
    published: watch::Sender<Arc<ShellNow>>,
    clock: fn() -> String,
    /// A shell's output: its marks are read. Otherwise (a Tick's terminal)
    /// the output is read only while a wait wants its text.
    reads_marks: bool,
    /// The input written before the last output was read in which the
    /// shell took a line or began a prompt: it has answered that much.
    marked_input: u64,
    /// `run`s typed: each marks its command with the next number.
    runs_typed: u64,
}

/// What the emulator thread hands the watch: the screen's lines, asked
/// for only when a wait is answered, and a way to type.
pub trait Terminal {
    fn lines(&mut self) -> Vec<String>;
    /// Whether bracketed paste is on (a `run`'s command is pasted then).
    fn bracketed_paste(&self) -> bool;
    fn type_bytes(&mut self, bytes: Vec<u8>);
    /// Whether input typed before has not been answered by any output yet.
    fn input_unanswered(&self) -> bool;
    /// Where the last input holding an Enter ends, counted in bytes of
    /// input as [`ShellWatch::output`]'s `input_before` is.
    fn last_enter_end(&self) -> u64;
}

impl ShellWatch {
    /// A watch publishing on `published`; `clock` gives the time at marks;
    /// `reads_marks` for a shell's output.
    pub fn new(
        published: watch::Sender<Arc<ShellNow>>,
        clock: fn() -> String,
        reads_marks: bool,
    ) -> ShellWatch {
        ShellWatch {
            reads_marks,
            reader: ShellReader::new(),
            texts: Vec::new(),
            prompts: Vec::new(),
            runs: Vec::new(),
            early_runs: Vec::new(),
            published,
            clock,
            marked_input: 0,
            runs_typed: 0,
        }
    }

    /// A chunk of output the emulator has just applied, read once
    /// `input_before` bytes of input had been written.
    pub fn output(&mut self, bytes: &[u8], input_before: u64, term: &mut dyn Terminal) {
        self.texts.retain(|w| !w.reply.is_closed());
        if !self.reads_marks && self.texts.is_empty() {
            return;
        }
        self.reader.collect_lines(!self.texts.is_empty());
        let mut clock = self.clock;
        let fed = self.reader.feed(bytes, &mut clock);
        if fed.changed {
            self.publish();
        }
        if fed.line_taken {
            self.marked_input = self.marked_input.max(input_before);
        }
        let mut screen: Option<Vec<String>> = None;
        let mut screen_now = |term: &mut dyn Terminal| -> Vec<String> {
            screen.get_or_insert_with(|| term.lines()).clone()
        };
        if !self.texts.is_empty() {
            let lines = self.reader.take_lines();
            let (partial, _) = self.reader.partial_line();
            for wait in std::mem::take(&mut self.texts) {
                let on_screen = || {
                    let lines = screen_now(term);
                    on_screen(&wait.regex, &lines)
                };
                match found(&wait, &lines, &partial)
                    .or_else(|| wait.screen.then(on_screen).flatten())
                {
                    Some(matched) => {
                        let _ = wait.reply.send(Waited {
                            matched: Some(matched),
                            screen: screen_now(term),
                            ..Waited::default()
                        });
                    }
                    // The line being written when the wait started ended:
                    // every line from now on is new.
                    None if !lines.is_empty() => self.texts.push(TextWait { skip: 0, ..wait }),
                    None => self.texts.push(wait),
                }
            }
        }
        if self.reader.at_prompt() && !self.prompts.is_empty() {
            let mut state = None;
            for wait in std::mem::take(&mut self.prompts) {
                if self.at_prompt_for(wait.hold_for_enter, term) {
                    let state = state.get_or_insert_with(|| self.reader.state());
                    let _ = wait.reply.send(Waited {
                        shell: Some(state.clone()),
                        screen: screen_now(term),
                        ..Waited::default()
                    });
                } else if !wait.reply.is_closed() {
                    self.prompts.push(wait);
                }
            }
        }
        if self.reader.marked() && !self.early_runs.is_empty() {
            for run in std::mem::take(&mut self.early_runs) {
                self.type_run(run, term);
            }
        }
        if !self.runs.is_empty() {
            for wait in std::mem::take(&mut self.runs) {
                // Answered once the shell is back at its prompt (its
                // working directory said, ready for the next command).
                let back = self.reader.at_prompt() || self.reader.running().is_some();
                match self.reader.finished(wait.n).filter(|_| back).cloned() {
                    Some(command) => {
                        let _ = wait.reply.send(Waited {
                            command: Some(command),
                            cwd: self.reader.cwd().map(str::to_string),
                            screen: screen_now(term),
                            ..Waited::default()
                        });
                    }
                    None if !wait.reply.is_closed() => self.runs.push(wait),
                    None => {}
                }
            }
        }
    }

    /// A request from the instance.
    pub fn ask(&mut self, msg: ShellMsg, term: &mut dyn Terminal) {
        match msg {
            ShellMsg::Text {
                regex,
                screen,
                reply,
            } => {
                if screen {
                    let lines = term.lines();
                    if let Some(matched) = on_screen(&regex, &lines) {
                        let _ = reply.send(Waited {
                            matched: Some(matched),
                            screen: lines,
                            ..Waited::default()
                        });
                        return;
                    }
                }
                let (_, skip) = self.reader.partial_line();
                self.texts.push(TextWait {
                    regex,
                    skip,
                    screen,
                    reply,
                });
                self.reader.collect_lines(true);
            }
            ShellMsg::Prompt {
                hold_for_enter,
                reply,
            } => {
                if self.at_prompt_for(hold_for_enter, term) {
                    let _ = reply.send(Waited {
                        shell: Some(self.reader.state()),
                        screen: term.lines(),
                        ..Waited::default()
                    });
                } else {
                    self.prompts.retain(|w| !w.reply.is_closed());
                    self.prompts.push(PromptWait {
                        hold_for_enter,
                        reply,
                    });
                }
            }
            ShellMsg::Run(run) => {
                if run.first_prompt && !self.reader.marked() {
                    self.early_runs.retain(|r| !r.typed.is_closed());
                    self.early_runs.push(run);
                } else {
                    self.type_run(run, term);
                }
            }
            ShellMsg::Command { n, reply } => {
                let now = self
                    .reader
                    .ended(n)
                    .cloned()
                    .or_else(|| self.reader.running_so_far().filter(|c| c.n == n));
                let _ = reply.send(now);
            }
        }
    }

    /// Types `run`'s command and Enter, if it may be typed now (pasted when
    /// the shell takes bracketed paste, so that its text is never read as
    /// editing keys), and waits for its end.
    fn type_run(&mut self, run: Run, term: &mut dyn Terminal) {
        // A run whose caller gave up (at its timeout) keeps no other out: a
        // shell that kept its line and never started it (fish, after a
        // syntax error) refused every run after it until its next output.
        self.runs.retain(|r| !r.reply.is_closed());
        if let Err(why) = self.may_type() {
            let for_the_prompt =
                matches!(why, NotTyped::NotAtPrompt(_) | NotTyped::LineNotEmpty(_));
            let unanswered = term.input_unanswered() || !self.enter_taken(term);
            let why = if for_the_prompt && run.wait_for_answer && unanswered {
                NotTyped::Unanswered
            } else {
                why
            };
            let _ = run.typed.send(Err(why));
            return;
        }
        let n = self.reader.next_command();
        self.runs_typed += 1;
        if let Some(marker) = &run.marker {
            // Without it the command runs all the same, with the person's
            // pagers.
            if let Err(e) = crate::shell_integration::mark_run(marker, self.runs_typed) {
                eprintln!("launcher: cannot mark the run in {}: {e}", marker.display());
            }
        }
        let mut input = Vec::new();
        if term.bracketed_paste() {
            input.extend(b"\x1b[200~");
            input.extend(run.bytes.iter().filter(|b| **b != 0x1b));
            input.extend(b"\x1b[201~");
        } else {
            input.extend(&run.bytes);
        }
        input.push(b'\r');
        term.type_bytes(input);
        self.runs.push(RunWait {
            n,
            reply: run.ended,
        });
        let _ = run.typed.send(Ok(n));
    }

    /// Whether the shell is at its prompt; with `hold_for_enter`, at one
    /// it began after the last Enter typed (or took that line since).
    fn at_prompt_for(&self, hold_for_enter: bool, term: &dyn Terminal) -> bool {
        self.reader.at_prompt() && (!hold_for_enter || self.enter_taken(term))
    }

    /// Whether the shell took the line of the last Enter typed, or began a
    /// prompt since it was written.
    fn enter_taken(&self, term: &dyn Terminal) -> bool {
        term.last_enter_end() <= self.marked_input
    }

    /// Whether a command may be typed now: the integration works, the
    /// shell is at its prompt with nothing typed, and no other `run` is
    /// being typed.
    fn may_type(&self) -> Result<(), NotTyped> {
        if !self.reader.marked() {
            return Err(NotTyped::NoIntegration);
        }
        if !self.reader.at_prompt() {
            let running = self.reader.running().map(|r| r.command.clone());
            return Err(NotTyped::NotAtPrompt(running));
        }
        if self.runs.iter().any(|r| r.n >= self.reader.next_command()) {
            return Err(NotTyped::Busy);
        }
        let typed = self.reader.typed_so_far();
        if !typed.trim().is_empty() {
            return Err(NotTyped::LineNotEmpty(typed));
        }
        Ok(())
    }

    fn publish(&self) {
        self.published.send_replace(Arc::new(ShellNow {
            state: self.reader.state(),
            updates: self.reader.updates(),
            marked: self.reader.marked(),
            at: (self.clock)(),
        }));
    }
}

/// The first match of `wait`'s expression in `lines` (ended since the last
/// look) or in the line being written, that ends past what was there when
/// the wait started.
/// The first match of `regex` on the screen's `lines`, with its line.
fn on_screen(regex: &Regex, lines: &[String]) -> Option<(String, String)> {
    lines
        .iter()
        .find_map(|l| regex.find(l).map(|m| (m.as_str().to_string(), l.clone())))
}

fn found(wait: &TextWait, lines: &[String], partial: &str) -> Option<(String, String)> {
    let mut skip = wait.skip;
    for line in lines
        .iter()
        .map(String::as_str)
        .chain(std::iter::once(partial))
    {
        let from = line.char_indices().nth(skip).map_or(line.len(), |(i, _)| i);
        skip = 0;
        let hit = wait
            .regex
            .find_iter(line)
            .find(|m| m.end() > from || (m.start() == m.end() && m.start() >= from));
        if let Some(m) = hit {
            return Some((m.as_str().to_string(), line.to_string()));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The emulator's side as the watch sees it: a screen of one prompt,
    /// and what was typed.
    #[derive(Default)]
    struct Screen {
        typed: Vec<u8>,
        paste: bool,
        unanswered: bool,
        /// Where the last Enter typed ends in `typed`.
        enter_end: u64,
        /// The screen's rows, when not one prompt.
        shown: Option<Vec<String>>,
    }

    impl Screen {
        /// What was written of the input: all that was typed.
        fn written(&self) -> u64 {
            self.typed.len() as u64
        }
    }

    impl Terminal for Screen {
        fn lines(&mut self) -> Vec<String> {
            self.shown.clone().unwrap_or_else(|| vec!["$".into()])
        }
        fn bracketed_paste(&self) -> bool {
            self.paste
        }
        fn type_bytes(&mut self, bytes: Vec<u8>) {
            self.typed.extend(bytes);
        }
        fn input_unanswered(&self) -> bool {
            self.unanswered
        }
        fn last_enter_end(&self) -> u64 {
            self.enter_end
        }
    }

    const PROMPT: &[u8] = b"\x1b]133;A\x07$ \x1b]133;B\x07";

    fn watch() -> (ShellWatch, watch::Receiver<Arc<ShellNow>>) {
        let (tx, rx) = watch::channel(Arc::new(ShellNow::default()));
        (ShellWatch::new(tx, || "now".into(), true), rx)
    }

    type Asked = (
        ShellMsg,
        oneshot::Receiver<Result<u64, NotTyped>>,
        oneshot::Receiver<Waited>,
    );

    fn run(command: &str, first_prompt: bool) -> Asked {
        run_asking(command, first_prompt, false)
    }

    fn run_asking(command: &str, first_prompt: bool, wait_for_answer: bool) -> Asked {
        let (typed, typed_rx) = oneshot::channel();
        let (ended, ended_rx) = oneshot::channel();
        let msg = ShellMsg::Run(Run {
            bytes: command.as_bytes().to_vec(),
            first_prompt,
            marker: None,
            wait_for_answer,
            typed,
            ended,
        });
        (msg, typed_rx, ended_rx)
    }

    #[test]
    fn a_run_is_answered_once_the_prompt_is_back_with_the_new_directory() {
        let (mut w, published) = watch();
        let mut screen = Screen::default();
        w.output(PROMPT, screen.written(), &mut screen);
        assert!(published.borrow().marked);
        let (msg, mut typed, mut ended) = run("cd /tmp", false);
        w.ask(msg, &mut screen);
        assert_eq!(typed.try_recv().ok(), Some(Ok(1)));
        assert_eq!(screen.typed, b"cd /tmp\r");
        // Its end, but no prompt yet: the directory may still change.
        w.output(
            b"cd /tmp\r\n\x1b]133;C\x07\x1b]133;D;0\x07",
            screen.written(),
            &mut screen,
        );
        assert!(ended.try_recv().is_err(), "answered before the prompt");
        w.output(b"\x1b]7;file://h/tmp\x07", screen.written(), &mut screen);
        w.output(PROMPT, screen.written(), &mut screen);
        let got = ended.try_recv().expect("answered at the prompt");
        assert_eq!(got.cwd.as_deref(), Some("/tmp"));
        let command = got.command.expect("the command");
        assert_eq!(
            (command.command.as_str(), command.exit),
            ("cd /tmp", Some(0))
        );
        assert_eq!(published.borrow().updates, 2);
    }

    #[test]
    fn nothing_is_typed_unless_the_shell_waits_at_an_empty_prompt() {
        let (mut w, _published) = watch();
        let mut screen = Screen::default();
        // No prompt mark yet, and the integration was not injected.
        let (msg, mut typed, _ended) = run("true", false);
        w.ask(msg, &mut screen);
        assert_eq!(typed.try_recv().ok(), Some(Err(NotTyped::NoIntegration)));
        // Text on the command line already.
        w.output(PROMPT, screen.written(), &mut screen);
        w.output(b"ls -", screen.written(), &mut screen);
        let (msg, mut typed, _ended) = run("true", false);
        w.ask(msg, &mut screen);
        assert_eq!(
            typed.try_recv().ok(),
            Some(Err(NotTyped::LineNotEmpty("ls -".into())))
        );
        // A command running.
        w.output(b"\r\n\x1b]133;C\x07", screen.written(), &mut screen);
        let (msg, mut typed, _ended) = run("true", false);
        w.ask(msg, &mut screen);
        assert_eq!(
            typed.try_recv().ok(),
            Some(Err(NotTyped::NotAtPrompt(Some("ls -".into()))))
        );
        // A run typed and not started yet keeps a second one out.
        w.output(b"\x1b]133;D;0\x07", screen.written(), &mut screen);
        w.output(PROMPT, screen.written(), &mut screen);
        let (first, mut typed, _ended) = run("sleep 1", false);
        w.ask(first, &mut screen);
        assert_eq!(typed.try_recv().ok(), Some(Ok(2)));
        let (second, mut typed, _ended) = run("true", false);
        w.ask(second, &mut screen);
        assert_eq!(typed.try_recv().ok(), Some(Err(NotTyped::Busy)));
        assert_eq!(screen.typed, b"sleep 1\r", "only the first was typed");
    }

    /// fish does not run a line it cannot parse: it says why and shows the
    /// prompt again with the line kept for editing, and no command starts.
    /// Once the caller of that run has given up, the next run is refused
    /// for the line on the prompt (which the agent can clear), not as busy
    /// for ever.
    #[test]
    fn a_run_the_shell_never_started_keeps_others_out_only_while_awaited() {
        let (mut w, _published) = watch();
        let mut screen = Screen::default();
        w.output(PROMPT, screen.written(), &mut screen);
        let (first, mut typed, ended) = run("echo $((6*7))", false);
        w.ask(first, &mut screen);
        assert_eq!(typed.try_recv().ok(), Some(Ok(1)));
        w.output(
            b"echo $((6*7))\r\nfish: command substitutions not allowed here\r\n",
            screen.written(),
            &mut screen,
        );
        w.output(PROMPT, screen.written(), &mut screen);
        w.output(b"echo $((6*7))", screen.written(), &mut screen);
        // While its caller waits, the first run keeps a second one out.
        let (second, mut typed, _ended) = run("true", false);
        w.ask(second, &mut screen);
        assert_eq!(typed.try_recv().ok(), Some(Err(NotTyped::Busy)));
        // Its caller gave up; nothing more is printed.
        drop(ended);
        let (third, mut typed, _ended) = run("true", false);
        w.ask(third, &mut screen);
        assert_eq!(
            typed.try_recv().ok(),
            Some(Err(NotTyped::LineNotEmpty("echo $((6*7))".into())))
        );
        assert_eq!(screen.typed, b"echo $((6*7))\r", "only the first was typed");
    }

    #[test]
    fn a_refusal_for_the_prompts_state_waits_while_typed_input_is_unanswered() {
        let (mut w, _published) = watch();
        let mut screen = Screen::default();
        w.output(PROMPT, screen.written(), &mut screen);
        w.output(b"ecxz", screen.written(), &mut screen);
        // `keys C-u` went in, and the shell has not redrawn its line yet.
        screen.unanswered = true;
        let (msg, mut typed, _ended) = run_asking("echo clean", false, true);
        w.ask(msg, &mut screen);
        assert_eq!(typed.try_recv().ok(), Some(Err(NotTyped::Unanswered)));
        // Asked without waiting, the refusal is the prompt's own.
        let (msg, mut typed, _ended) = run_asking("echo clean", false, false);
        w.ask(msg, &mut screen);
        assert_eq!(
            typed.try_recv().ok(),
            Some(Err(NotTyped::LineNotEmpty("ecxz".into())))
        );
        // Answered: the line as it is now decides.
        screen.unanswered = false;
        let (msg, mut typed, _ended) = run_asking("echo clean", false, true);
        w.ask(msg, &mut screen);
        assert_eq!(
            typed.try_recv().ok(),
            Some(Err(NotTyped::LineNotEmpty("ecxz".into())))
        );
        // An empty prompt is typed into whatever is unanswered.
        w.output(
            b"\r\x1b[K\x1b]133;A\x07$ \x1b]133;B\x07",
            screen.written(),
            &mut screen,
        );
        screen.unanswered = true;
        let (msg, mut typed, _ended) = run_asking("echo clean", false, true);
        w.ask(msg, &mut screen);
        assert_eq!(typed.try_recv().ok(), Some(Ok(1)));
        assert_eq!(screen.typed, b"echo clean\r", "nothing typed before");
    }

    /// A watch at a prompt where `keys l s Enter` was typed, and `echo`
    /// came back: the shell has not taken the line yet.
    fn enter_typed(echo: &[u8]) -> (ShellWatch, Screen) {
        let (mut w, _published) = watch();
        let mut screen = Screen::default();
        w.output(PROMPT, screen.written(), &mut screen);
        screen.type_bytes(b"ls\r".to_vec());
        screen.enter_end = screen.written();
        w.output(echo, screen.written(), &mut screen);
        (w, screen)
    }

    #[test]
    fn a_prompt_wait_held_for_an_enter_is_answered_by_a_prompt_after_it() {
        let (mut w, mut screen) = enter_typed(b"ls");
        let prompt = |w: &mut ShellWatch, screen: &mut Screen, hold_for_enter| {
            let (reply, answer) = oneshot::channel();
            let msg = ShellMsg::Prompt {
                hold_for_enter,
                reply,
            };
            w.ask(msg, screen);
            answer
        };
        let mut held = prompt(&mut w, &mut screen, true);
        assert!(held.try_recv().is_err(), "the prompt before the Enter");
        // Not held, the prompt shown is the answer.
        let mut now = prompt(&mut w, &mut screen, false);
        assert!(now.try_recv().is_ok());
        // A prompt drawn before the Enter was written, read only after it.
        w.output(PROMPT, 0, &mut screen);
        assert!(held.try_recv().is_err(), "a mark from before the Enter");
        // The prompt redrawn (a resize) after it: the line is not taken.
        w.output(b"\r$ \x1b]133;B\x07ls", screen.written(), &mut screen);
        assert!(held.try_recv().is_err(), "a redraw of the prompt");
        // The command the Enter started, its end, and the prompt after.
        w.output(b"\r\n\x1b]133;C;ls\x07", screen.written(), &mut screen);
        w.output(b"a b\r\n\x1b]133;D;0\x07", screen.written(), &mut screen);
        assert!(held.try_recv().is_err(), "answered before the prompt");
        w.output(PROMPT, screen.written(), &mut screen);
        let got = held.try_recv().expect("the prompt after the Enter");
        let shell = got.shell.expect("the shell's state");
        assert_eq!((shell.commands_total, shell.at_prompt), (1, true));
        // Asked again with nothing typed since, it answers at once.
        let mut again = prompt(&mut w, &mut screen, true);
        assert!(again.try_recv().is_ok());
    }

    #[test]
    fn a_run_right_after_an_enter_waits_for_the_shell_to_take_that_line() {
        // Echoed with its newline, and the shell's hooks run before it
        // marks the command's start.
        let (mut w, mut screen) = enter_typed(b"ls\r\n");
        let (msg, mut typed, _ended) = run_asking("pwd", false, true);
        w.ask(msg, &mut screen);
        assert_eq!(typed.try_recv().ok(), Some(Err(NotTyped::Unanswered)));
        // The command ran and the prompt is back: typed then.
        w.output(
            b"\x1b]133;C\x07a\r\n\x1b]133;D;0\x07",
            screen.written(),
            &mut screen,
        );
        w.output(PROMPT, screen.written(), &mut screen);
        let (msg, mut typed, _ended) = run_asking("pwd", false, true);
        w.ask(msg, &mut screen);
        assert_eq!(typed.try_recv().ok(), Some(Ok(2)));
    }

    #[test]
    fn a_run_before_an_injected_shells_first_prompt_waits_for_it_and_is_pasted() {
        let (mut w, _published) = watch();
        let mut screen = Screen {
            paste: true,
            ..Screen::default()
        };
        let (msg, mut typed, _ended) = run("echo \x1bhi", true);
        w.ask(msg, &mut screen);
        assert!(typed.try_recv().is_err(), "not answered before the prompt");
        assert!(screen.typed.is_empty());
        w.output(PROMPT, screen.written(), &mut screen);
        assert_eq!(typed.try_recv().ok(), Some(Ok(1)));
        // Bracketed paste: the text is never taken for editing keys, and an
        // ESC in it cannot end the paste.
        assert_eq!(screen.typed, b"\x1b[200~echo hi\x1b[201~\r");
    }

    #[test]
    fn each_run_typed_marks_its_command_with_a_new_number_and_a_refused_one_none() {
        let dir = tempfile::tempdir().expect("dir");
        // The folder is made again when it was removed.
        let marker = dir.path().join("gone/agent-run");
        let marked = |command: &str| {
            let (typed, typed_rx) = oneshot::channel();
            let (ended, ended_rx) = oneshot::channel();
            let msg = ShellMsg::Run(Run {
                bytes: command.as_bytes().to_vec(),
                first_prompt: false,
                marker: Some(marker.clone()),
                wait_for_answer: false,
                typed,
                ended,
            });
            (msg, typed_rx, ended_rx)
        };
        let (mut w, _published) = watch();
        let mut screen = Screen::default();
        // Not at a prompt: refused, and nothing marked.
        let (msg, mut typed, _ended) = marked("true");
        w.ask(msg, &mut screen);
        assert!(matches!(typed.try_recv(), Ok(Err(NotTyped::NoIntegration))));
        assert!(!marker.exists(), "a refused run marks nothing");
        w.output(PROMPT, screen.written(), &mut screen);
        let (msg, mut typed, _ended) = marked("git log");
        w.ask(msg, &mut screen);
        assert_eq!(typed.try_recv().ok(), Some(Ok(1)));
        let first = std::fs::read_to_string(&marker).expect("marked");
        w.output(
            b"git log\r\n\x1b]133;C\x07\x1b]133;D;0\x07",
            screen.written(),
            &mut screen,
        );
        w.output(PROMPT, screen.written(), &mut screen);
        let (msg, mut typed, _ended) = marked("man ls");
        w.ask(msg, &mut screen);
        assert_eq!(typed.try_recv().ok(), Some(Ok(2)));
        let second = std::fs::read_to_string(&marker).expect("marked again");
        assert_eq!((first.as_str(), second.as_str()), ("1\n", "2\n"));
    }

    #[test]
    fn a_ticks_output_is_read_only_while_a_wait_wants_its_text() {
        let (tx, published) = watch::channel(Arc::new(ShellNow::default()));
        let mut w = ShellWatch::new(tx, || "now".into(), false);
        let mut screen = Screen::default();
        // Marks in a Tick's output are no shell's.
        w.output(PROMPT, screen.written(), &mut screen);
        assert!(!published.borrow().marked);
        let (reply, mut answer) = oneshot::channel();
        let regex = Regex::new("ready").expect("regex");
        w.ask(
            ShellMsg::Text {
                regex,
                screen: false,
                reply,
            },
            &mut screen,
        );
        w.output(b"\x1b[32mready\x1b[0m", screen.written(), &mut screen);
        let got = answer.try_recv().expect("matched");
        assert_eq!(got.matched, Some(("ready".into(), "ready".into())));
    }

    #[test]
    fn a_screen_text_wait_started_before_the_text_matches_it_when_the_screen_shows_it() {
        // A REPL's prompt comes with no newline and a trailing space: read as
        // output, `>>> ` is no match for `^>>>$`; the screen's row is.
        let (mut w, _published) = watch();
        let mut screen = Screen::default();
        let (reply, mut answer) = oneshot::channel();
        let regex = Regex::new("^>>>$").expect("regex");
        w.ask(
            ShellMsg::Text {
                regex,
                screen: true,
                reply,
            },
            &mut screen,
        );
        assert!(answer.try_recv().is_err(), "matched an empty screen");
        screen.shown = Some(vec![">>>".into()]);
        w.output(b">>> ", screen.written(), &mut screen);
        let got = answer.try_recv().expect("the screen's row matched");
        assert_eq!(got.matched, Some((">>>".into(), ">>>".into())));
    }

    #[test]
    fn a_text_wait_takes_only_what_comes_after_it_started() {
        let (mut w, _published) = watch();
        let mut screen = Screen::default();
        // A command runs: its output's lines are kept as they come.
        w.output(PROMPT, screen.written(), &mut screen);
        w.output(
            b"make\r\n\x1b]133;C\x07build: step 1 of",
            screen.written(),
            &mut screen,
        );
        let (reply, mut answer) = oneshot::channel();
        let regex = Regex::new(r"step \d").expect("regex");
        w.ask(
            ShellMsg::Text {
                regex,
                screen: false,
                reply,
            },
            &mut screen,
        );
        // The line goes on, but `step 1` was there before the wait.
        w.output(b" 3", screen.written(), &mut screen);
        w.output(b"\r\n", screen.written(), &mut screen);
        assert!(answer.try_recv().is_err(), "an old match was taken");
        w.output(b"build: step 2 of 3\r\n", screen.written(), &mut screen);
        let got = answer.try_recv().expect("the new line matched");
        assert_eq!(
            got.matched,
            Some(("step 2".into(), "build: step 2 of 3".into()))
        );
    }
}
