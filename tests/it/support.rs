//! What the tests share: the allocator, the log capture, the fleet's servers, the browser.

pub mod cluster;
pub mod fleet;
pub mod heap;
pub mod logs;
pub mod markdown;
pub mod pki;
pub mod process;
pub mod sentinel;
pub mod text_codec;
pub mod wait;
pub mod webdriver;
