//! Helpers shared by the end-to-end tests: a private runtime directory and the tickloop binary.
