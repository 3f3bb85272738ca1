//! The kept images of one screen: placements (oldest first), the kitty
//! images transmitted by id (which a later `a=p` may show again), a kitty
//! transmission in chunks under way, and the memory bound.

use super::kitty::{self, Control};
use crate::emulator::image_cells::{CursorAfter, MarkSpan};
use crate::emulator::Emulator;
use base64::Engine;
use std::collections::HashSet;
use std::io::Write;
use std::sync::Arc;
use tickloop_proto::wire::{
    ImageData, ImageEncoding, ImageFormat, ImagePlacement, KittyPixels, NOMINAL_CELL_HEIGHT_PX,
    NOMINAL_CELL_WIDTH_PX,
};

/// Images dropped to stay under the limit (counts add up).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ImagesDropped {
    /// The oldest images dropped, and the bytes that freed.
    pub images: u64,
    pub bytes: u64,
    /// Images larger than the limit, never kept.
    pub too_large: u64,
}

impl ImagesDropped {
    /// These and `more`.
    pub fn plus(self, more: ImagesDropped) -> ImagesDropped {
        ImagesDropped {
            images: self.images + more.images,
            bytes: self.bytes + more.bytes,
            too_large: self.too_large + more.too_large,
        }
    }

    /// What was dropped since `earlier` (a total before this one).
    pub fn since(self, earlier: ImagesDropped) -> ImagesDropped {
        ImagesDropped {
            images: self.images.saturating_sub(earlier.images),
            bytes: self.bytes.saturating_sub(earlier.bytes),
            too_large: self.too_large.saturating_sub(earlier.too_large),
        }
    }
}

/// One image's bytes as the program sent them.
#[derive(Debug)]
pub struct Image {
    pub encoding: ImageEncoding,
    pub data: Vec<u8>,
    pub width_px: u32,
    pub height_px: u32,
}

impl Image {
    fn format(&self) -> ImageFormat {
        match self.encoding {
            ImageEncoding::Sixel => ImageFormat::Sixel,
            ImageEncoding::Kitty { .. } => ImageFormat::Kitty,
        }
    }
}

/// An image shown on the screen.
#[derive(Debug)]
struct Placed {
    index: u32,
    image: Arc<Image>,
    rows: u16,
    cols: u16,
    /// The cells marked for it; fewer found means some were written over.
    cells: usize,
    /// Drawn on the alternate screen.
    alt: bool,
    /// The kitty image id and placement id it shows.
    kitty: Option<(u32, u32)>,
    /// Where its cells were when last looked.
    span: Option<MarkSpan>,
}

/// A kitty image transmitted with an id or a number.
#[derive(Debug)]
struct KittyImage {
    id: u32,
    number: u32,
    image: Arc<Image>,
}

/// A kitty transmission in chunks (`m=1`) under way.
#[derive(Debug)]
struct Upload {
    control: Control,
    data: Vec<u8>,
}

/// The images one screen keeps.
#[derive(Debug)]
pub struct KeptImages {
    next_index: u32,
    placements: Vec<Placed>,
    kitty: Vec<KittyImage>,
    upload: Option<Upload>,
    /// Ids given to kitty images transmitted with a number only.
    next_kitty_id: u32,
    limit: u64,
    /// Images dropped to stay under the limit, and their bytes, not yet
    /// told ([`KeptImages::take_note`]).
    dropped: (u32, u64),
    /// Image sequences too long to keep, not yet told.
    too_long: u32,
}

impl KeptImages {
    pub fn new(limit: u64) -> Self {
        KeptImages {
            next_index: 1,
            placements: Vec::new(),
            kitty: Vec::new(),
            upload: None,
            next_kitty_id: 1 << 31,
            limit,
            dropped: (0, 0),
            too_long: 0,
        }
    }

    /// Whether any image is placed on a screen (either one).
    pub fn any_placed(&self) -> bool {
        !self.placements.is_empty()
    }

    /// The bytes all kept images hold (an image shown twice counts once),
    /// a transmission under way included.
    pub fn bytes(&self) -> u64 {
        let mut seen = HashSet::new();
        let shown = self.placements.iter().map(|p| &p.image);
        let stored = self.kitty.iter().map(|k| &k.image);
        let kept: u64 = shown
            .chain(stored)
            .filter(|image| seen.insert(Arc::as_ptr(image)))
            .map(|image| image.data.len() as u64)
            .sum();
        kept + self.upload.as_ref().map_or(0, |u| u.data.len() as u64)
    }

    /// A sixel sequence the program drew at the cursor.
    pub fn sixel(&mut self, sequence: Vec<u8>, emulator: &mut Emulator) {
        let Some((width_px, height_px)) = super::sixel::size_px(&sequence) else {
            return;
        };
        let image = Arc::new(Image {
            encoding: ImageEncoding::Sixel,
            data: sequence,
            width_px,
            height_px,
        });
        self.place(image, (0, 0), CursorAfter::BelowAtLeft, None, emulator);
    }

    /// A sequence too long to keep was dropped.
    pub fn too_long(&mut self, _sixel: bool, _len: usize) {
        self.too_long += 1;
    }

    /// A kitty graphics command.
    pub fn kitty(&mut self, command: &[u8], emulator: &mut Emulator, answers: &mut dyn Write) {
        let Ok((control, payload)) = kitty::parse(command) else {
            // Nothing says whom to answer: kitty ignores it too.
            self.upload = None;
            return;
        };
        if let Some(mut upload) = self.upload.take() {
            // A later chunk carries `m` (and maybe `q`) only.
            let outcome = kitty::decode_chunk(payload, &mut upload.data).and_then(|()| {
                self.room_for(upload.data.len())
                    .map_err(|e| format!("ENOMEM:{e}"))
            });
            match outcome {
                Err(e) => answer(answers, &upload.control, &Err(e)),
                Ok(()) if control.more => {
                    // Room for it as it grows: the oldest images go first.
                    self.upload = Some(upload);
                    self.bound();
                }
                Ok(()) => self.transmitted(upload.control, upload.data, emulator, answers),
            }
            return;
        }
        match control.action {
            b't' | b'T' | b'q' => {
                if control.medium != b'd' {
                    let why = "ENOTSUPPORTED:only direct transmission (t=d) is kept; files, temporary files and shared memory are not read";
                    answer(answers, &control, &Err(why.into()));
                    return;
                }
                let mut data = Vec::new();
                if let Err(e) = kitty::decode_chunk(payload, &mut data) {
                    answer(answers, &control, &Err(e));
                } else if control.more {
                    self.upload = Some(Upload { control, data });
                } else {
                    self.transmitted(control, data, emulator, answers);
                }
            }
            b'p' => {
                let found = self.find_kitty(&control).map(|k| (k.id, k.image.clone()));
                let outcome = match found {
                    Some((id, image)) => {
                        self.show_kitty(id, image, &control, emulator);
                        Ok(())
                    }
                    None => Err("ENOENT:no image with this id or number".to_string()),
                };
                answer(answers, &control, &outcome);
            }
            b'd' => self.delete(&control),
            _ => answer(
                answers,
                &control,
                &Err("ENOTSUPPORTED:animation is not kept".into()),
            ),
        }
    }

    /// A whole kitty transmission: checked, answered, kept and shown as
    /// `a=` says.
    fn transmitted(
        &mut self,
        mut control: Control,
        data: Vec<u8>,
        emulator: &mut Emulator,
        answers: &mut dyn Write,
    ) {
        let checked = kitty_image(&control, data)
            .and_then(|image| self.room_for(image.data.len()).map(|()| image));
        let image = match checked {
            Ok(image) => image,
            Err(e) => return answer(answers, &control, &Err(e)),
        };
        if control.action == b'q' {
            return answer(answers, &control, &Ok(()));
        }
        if control.id == 0 && control.number != 0 {
            control.id = self.next_kitty_id;
            self.next_kitty_id = self.next_kitty_id.wrapping_add(1).max(1 << 31);
        }
        answer(answers, &control, &Ok(()));
        let image = Arc::new(image);
        if control.id != 0 {
            // A new image under an id replaces the old one and its places.
            let id = control.id;
            self.kitty.retain(|k| k.id != id);
            self.placements
                .retain(|p| p.kitty.is_none_or(|(shown, _)| shown != id));
            self.kitty.push(KittyImage {
                id,
                number: control.number,
                image: image.clone(),
            });
        }
        if control.action == b'T' {
            self.show_kitty(control.id, image, &control, emulator);
        }
        self.bound();
    }

    fn find_kitty(&self, control: &Control) -> Option<&KittyImage> {
        if control.id != 0 {
            self.kitty.iter().find(|k| k.id == control.id)
        } else if control.number != 0 {
            self.kitty.iter().rev().find(|k| k.number == control.number)
        } else {
            None
        }
    }

    fn show_kitty(
        &mut self,
        id: u32,
        image: Arc<Image>,
        control: &Control,
        emulator: &mut Emulator,
    ) {
        if control.placement != 0 {
            let key = (id, control.placement);
            self.placements.retain(|p| p.kitty != Some(key));
        }
        let after = if control.cursor_stays {
            CursorAfter::Stays
        } else {
            CursorAfter::AfterLastRow
        };
        let cells = (control.rows, control.cols);
        self.place(image, cells, after, Some((id, control.placement)), emulator);
    }

    /// `a=d`: by id or number (`i`, `I`, `n`, `N`), else every placement;
    /// upper case frees the image's data too.
    fn delete(&mut self, control: &Control) {
        let free = control.delete.is_ascii_uppercase();
        let which = match control.delete.to_ascii_lowercase() {
            b'i' => Some(control.id),
            b'n' => self.find_kitty(control).map(|k| k.id),
            b'a' => None,
            // Deleting by cell, column, row or z-index: not kept apart.
            _ => return,
        };
        let placement = control.placement;
        self.placements.retain(|p| match (p.kitty, which) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some((id, place)), Some(wanted)) => {
                id != wanted || (placement != 0 && place != placement)
            }
        });
        if free {
            let shown: HashSet<u32> = self
                .placements
                .iter()
                .filter_map(|p| p.kitty)
                .map(|k| k.0)
                .collect();
            self.kitty
                .retain(|k| shown.contains(&k.id) || which.is_some_and(|w| w != k.id));
        }
    }

    /// Shows `image` at the cursor in `cells` (rows, cols; 0: from its
    /// pixels), making its space on the screen.
    fn place(
        &mut self,
        image: Arc<Image>,
        cells: (u32, u32),
        after: CursorAfter,
        kitty: Option<(u32, u32)>,
        emulator: &mut Emulator,
    ) {
        let rows = if cells.0 > 0 {
            cells.0
        } else {
            image.height_px.div_ceil(NOMINAL_CELL_HEIGHT_PX)
        };
        let cols = if cells.1 > 0 {
            cells.1
        } else {
            image.width_px.div_ceil(NOMINAL_CELL_WIDTH_PX)
        };
        let (screen_rows, screen_cols) = emulator.size();
        let rows = rows.clamp(1, u32::try_from(screen_rows).unwrap_or(u32::MAX));
        let cols = cols.clamp(1, u32::try_from(screen_cols).unwrap_or(u32::MAX));
        let index = self.next_index;
        self.next_index = self.next_index.wrapping_add(1).max(1);
        let marked = emulator.reserve_image(index, rows as usize, cols as usize, after);
        self.placements.push(Placed {
            index,
            image,
            rows: u16::try_from(rows).unwrap_or(u16::MAX),
            cols: u16::try_from(cols).unwrap_or(u16::MAX),
            cells: marked,
            alt: emulator.alt_screen(),
            kitty,
            span: None,
        });
        self.bound();
    }

    /// Whether `more` bytes fit under the limit at all.
    fn room_for(&self, more: usize) -> Result<(), String> {
        if more as u64 > self.limit {
            return Err(format!(
                "the image is larger than this instance keeps ({} MB, image_memory_mb)",
                self.limit / (1024 * 1024)
            ));
        }
        Ok(())
    }

    /// Drops the oldest images until the rest fit under the limit: kitty
    /// images not shown first, then the oldest placements.
    fn bound(&mut self) {
        loop {
            let bytes = self.bytes();
            if bytes <= self.limit {
                return;
            }
            let shown: HashSet<*const Image> = self
                .placements
                .iter()
                .map(|p| Arc::as_ptr(&p.image))
                .collect();
            let unshown = self
                .kitty
                .iter()
                .position(|k| !shown.contains(&Arc::as_ptr(&k.image)));
            let freed = if let Some(at) = unshown {
                self.kitty.remove(at).image.data.len() as u64
            } else if !self.placements.is_empty() {
                let gone = self.placements.remove(0);
                let still = self
                    .placements
                    .iter()
                    .any(|p| Arc::ptr_eq(&p.image, &gone.image))
                    || self
                        .kitty
                        .iter()
                        .any(|k| Arc::ptr_eq(&k.image, &gone.image));
                if still {
                    0
                } else {
                    gone.image.data.len() as u64
                }
            } else if !self.kitty.is_empty() {
                self.kitty.remove(0).image.data.len() as u64
            } else {
                // Only a transmission under way is left: it was checked
                // against the limit as it came.
                return;
            };
            self.dropped.0 += 1;
            self.dropped.1 += freed;
        }
    }

    /// Images dropped for the limit since the last call, if any.
    pub fn take_dropped(&mut self) -> Option<ImagesDropped> {
        let (images, bytes) = std::mem::take(&mut self.dropped);
        let too_large = u64::from(std::mem::take(&mut self.too_long));
        (images > 0 || too_large > 0).then_some(ImagesDropped {
            images: u64::from(images),
            bytes,
            too_large,
        })
    }

    /// The limit, in MB.
    pub fn limit_mb(&self) -> u64 {
        self.limit / (1024 * 1024)
    }

    /// Looks where each image's cells are now; drops those whose cells
    /// were written over, cleared or scrolled past the history. After a
    /// resize (`resized`), what is found is what counts from then on (a
    /// reflow may cut an image at the right edge).
    pub fn refresh(&mut self, emulator: &Emulator, resized: bool) {
        if self.placements.is_empty() {
            return;
        }
        let alt = emulator.alt_screen();
        let wanted: Vec<u32> = self
            .placements
            .iter()
            .filter(|p| p.alt == alt)
            .map(|p| p.index)
            .collect();
        let marks = emulator.image_marks(&wanted);
        self.placements.retain_mut(|p| {
            if p.alt != alt {
                // Normal-screen images wait behind the alternate screen;
                // the alternate screen's go when it closes.
                return !p.alt;
            }
            match marks.get(&p.index) {
                Some(span) if resized || span.cells >= p.cells => {
                    p.cells = p.cells.min(span.cells);
                    p.span = Some(*span);
                    true
                }
                _ => false,
            }
        });
    }

    /// The placements on the screen shown now, oldest first (after
    /// [`KeptImages::refresh`]).
    pub fn placements(&self, alt: bool) -> Vec<ImagePlacement> {
        self.placements
            .iter()
            .filter(|p| p.alt == alt)
            .filter_map(|p| {
                let span = p.span?;
                Some(ImagePlacement {
                    index: p.index,
                    row: span.row,
                    col: u16::try_from(span.col).unwrap_or(u16::MAX),
                    rows: p.rows,
                    cols: p.cols,
                    width_px: p.image.width_px,
                    height_px: p.image.height_px,
                    format: p.image.format(),
                    bytes: p.image.data.len() as u64,
                })
            })
            .collect()
    }

    /// Image `index`'s bytes, if it is shown now (after a refresh).
    pub fn data(&self, index: u32, alt: bool) -> Option<ImageData> {
        let placement = self
            .placements(alt)
            .into_iter()
            .find(|p| p.index == index)?;
        let placed = self.placements.iter().find(|p| p.index == index)?;
        Some(ImageData {
            placement,
            encoding: placed.image.encoding,
            data: base64::engine::general_purpose::STANDARD.encode(&placed.image.data),
        })
    }
}

/// A kitty image from a whole transmission, checked as kitty checks it.
fn kitty_image(control: &Control, data: Vec<u8>) -> Result<Image, String> {
    let (pixels, bytes_per_pixel) = match control.format {
        24 => (KittyPixels::Rgb, 3),
        32 => (KittyPixels::Rgba, 4),
        100 => (KittyPixels::Png, 0),
        other => return Err(format!("EINVAL:unknown format f={other}")),
    };
    let (width_px, height_px) = if pixels == KittyPixels::Png && !control.zlib {
        tickloop_proto::wire::png_size(&data)
            .ok_or_else(|| "EBADPNG:not a PNG image".to_string())?
    } else {
        (control.width, control.height)
    };
    if width_px == 0 || height_px == 0 {
        return Err("EINVAL:the image's size (s= and v=) is missing".into());
    }
    let wanted = u64::from(width_px) * u64::from(height_px) * bytes_per_pixel;
    if bytes_per_pixel > 0 && !control.zlib && (data.len() as u64) < wanted {
        return Err(format!(
            "ENODATA:insufficient image data: {} bytes, {wanted} wanted",
            data.len()
        ));
    }
    Ok(Image {
        encoding: ImageEncoding::Kitty {
            pixels,
            zlib: control.zlib,
        },
        data,
        width_px,
        height_px,
    })
}

fn answer(answers: &mut dyn Write, control: &Control, outcome: &Result<(), String>) {
    if let Some(reply) = kitty::reply(control, outcome) {
        // The PTY's input queue takes it or drops it, as typed input.
        let _ = answers.write_all(&reply);
    }
}
