//! The Tick protocol 3 host session, with no I/O: see `API.md` beside this file.
