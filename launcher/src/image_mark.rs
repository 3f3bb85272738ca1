//! The mark on the cells an image covers ([`crate::emulator::image_cells`]):
//! a hyperlink whose id no program can write (it begins with a control
//! character, which OSC 8 cannot carry), naming the image's index. Apart,
//! so that what reads the screen ([`crate::screen_model`]) can leave marks
//! out without depending on the emulator.

use alacritty_terminal::term::cell::Hyperlink;

/// The start of every mark's id.
const MARK: &str = "\u{1}image:";

/// The mark of image `index`.
pub fn mark(index: u32) -> Hyperlink {
    Hyperlink::new(Some(format!("{MARK}{index}")), String::new())
}

/// Whether `link` is an image's mark rather than a program's hyperlink.
pub fn is_mark(link: &Hyperlink) -> bool {
    link.id().starts_with(MARK)
}

/// The index of the image `link` marks, if it is a mark.
pub fn mark_index(link: &Hyperlink) -> Option<u32> {
    link.id().strip_prefix(MARK)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mark_names_its_image_and_a_programs_link_is_no_mark() {
        assert_eq!(mark_index(&mark(42)), Some(42));
        assert!(is_mark(&mark(1)));
        let link = Hyperlink::new(Some("image:3"), "https://x".into());
        assert!(!is_mark(&link));
        assert_eq!(mark_index(&link), None);
    }
}
