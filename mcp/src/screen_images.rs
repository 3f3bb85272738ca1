//! TickManage `screen`'s images: each image the program drew that the
//! screen keeps (the newest [`MAX_IMAGES`]), made into PNG and given as MCP
//! image content beside the screen's text, so an agent sees the chart the
//! person sees. An image that cannot be fetched or decoded is said in
//! words instead.

use crate::hosts::Hosts;
use base64::Engine;
use rmcp::model::ContentBlock;
use serde_json::Value;
use tickloop_proto::wire::{ClientRequest, ImageData};

/// The most images one screen read carries (the newest).
pub const MAX_IMAGES: usize = 4;

/// The image blocks for the images `screen` (its JSON) lists, and a line
/// of words for each.
pub async fn image_blocks(
    hosts: &Hosts,
    instance: &str,
    screen: &Value,
) -> (Vec<ContentBlock>, Vec<String>) {
    let listed = screen["images"].as_array().cloned().unwrap_or_default();
    let skipped = listed.len().saturating_sub(MAX_IMAGES);
    let mut blocks = Vec::new();
    let mut words = Vec::new();
    if skipped > 0 {
        words.push(format!(
            "({skipped} older image(s) not shown; `tickloop screen {instance} --image N` writes any as PNG)"
        ));
    }
    for image in listed.iter().skip(skipped) {
        let Some(index) = image["index"].as_u64().and_then(|i| u32::try_from(i).ok()) else {
            continue;
        };
        let place = format!(
            "image {index}: {} {}x{} px at row {}, column {} ({}x{} cells)",
            image["format"].as_str().unwrap_or("?"),
            image["width_px"],
            image["height_px"],
            image["row"],
            image["col"],
            image["cols"],
            image["rows"],
        );
        let request = ClientRequest::Screen {
            instance: instance.to_string(),
            history: 0,
            image: Some(index),
        };
        let png = match hosts.simple(request).await {
            Ok(value) => serde_json::from_value::<ImageData>(value)
                .map_err(|e| e.to_string())
                .and_then(|data| tickloop_images::to_png(&data).map_err(|e| e.to_string())),
            Err(refusal) => Err(refusal.message),
        };
        match png {
            Ok((png, _, _)) => {
                let encoded = base64::engine::general_purpose::STANDARD.encode(png);
                blocks.push(ContentBlock::image(encoded, "image/png"));
                words.push(format!("{place}: attached as PNG"));
            }
            Err(why) => words.push(format!("{place}: not attached: {why}")),
        }
    }
    (blocks, words)
}
