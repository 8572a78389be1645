//! The binary's global allocator, which keeps the books of each thread apart: how many
//! allocations a thread made, and the bytes and blocks it allocated that are still live,
//! wherever they are freed.
//!
//! Every test of the binary runs beside the others, on threads of its own, so a test of
//! allocations or of live memory reads its own thread's books: what the other tests
//! allocate, and free, at the same time does not move them. A block freed on another
//! thread than the one that allocated it (the last clone of an `Arc` dropped elsewhere) is
//! taken off the books of the thread that allocated it: each block carries the number of
//! its thread's books in a header.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};

/// How many threads keep books at once; a thread past the last takes the first's again,
/// which only a binary of more than this many threads could notice.
const BOOKS: usize = 1 << 16;

/// The live bytes and blocks of one thread.
struct Books {
    bytes: AtomicI64,
    blocks: AtomicI64,
}

#[allow(clippy::declare_interior_mutable_const)] // the seed of the array, copied once per entry
const EMPTY: Books = Books {
    bytes: AtomicI64::new(0),
    blocks: AtomicI64::new(0),
};

static LEDGER: [Books; BOOKS] = [EMPTY; BOOKS];
static NEXT_BOOKS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// This thread's books in `LEDGER`, `usize::MAX` until its first allocation.
    static MINE: Cell<usize> = const { Cell::new(usize::MAX) };
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

/// This thread's books (assigned on first use, without allocating).
fn books() -> usize {
    MINE.try_with(|mine| {
        if mine.get() == usize::MAX {
            mine.set(NEXT_BOOKS.fetch_add(1, Ordering::Relaxed) % BOOKS);
        }
        mine.get()
    })
    // A thread whose locals are gone shares the last books, which no test reads.
    .unwrap_or(BOOKS - 1)
}

fn count_allocation() {
    // A thread whose locals are gone (it is exiting) counts for no one.
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

/// The header before each block: room for the books' number, keeping the block's alignment.
fn header(layout: Layout) -> usize {
    layout.align().max(size_of::<usize>())
}

/// The layout of a block of `size` bytes of `layout`'s alignment, with its header.
fn with_header(layout: Layout, size: usize) -> Option<Layout> {
    let header = header(layout);
    Layout::from_size_align(size.checked_add(header)?, header).ok()
}

fn enter(books: usize, bytes: usize) {
    LEDGER[books]
        .bytes
        .fetch_add(bytes as i64, Ordering::Relaxed);
    LEDGER[books].blocks.fetch_add(1, Ordering::Relaxed);
}

fn leave(books: usize, bytes: usize) {
    LEDGER[books]
        .bytes
        .fetch_sub(bytes as i64, Ordering::Relaxed);
    LEDGER[books].blocks.fetch_sub(1, Ordering::Relaxed);
}

struct Counting;

impl Counting {
    /// Writes the header of the block whose system allocation starts at `base`.
    ///
    /// # Safety
    /// `base` is null or the start of an allocation of `with_header(layout, _)`.
    unsafe fn open(base: *mut u8, layout: Layout) -> *mut u8 {
        if base.is_null() {
            return base;
        }
        let books = books();
        enter(books, layout.size());
        count_allocation();
        // SAFETY: the allocation has `header(layout)` bytes before the block, at least a
        // `usize`, and the block's start is aligned to the header's size, a multiple of
        // `usize`'s alignment.
        unsafe {
            let block = base.add(header(layout));
            block.cast::<usize>().sub(1).write(books);
            block
        }
    }

    /// The start of the system allocation of `block`, and the books it is on.
    ///
    /// # Safety
    /// `block` was returned by this allocator for `layout`.
    unsafe fn base(block: *mut u8, layout: Layout) -> (*mut u8, usize) {
        // SAFETY: `open` wrote the books before the block, `header(layout)` bytes in.
        unsafe {
            let books = block.cast::<usize>().sub(1).read();
            (block.sub(header(layout)), books)
        }
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let Some(full) = with_header(layout, layout.size()) else {
            return std::ptr::null_mut();
        };
        // SAFETY: `full` is not zero-sized (it has a header); `open` gets what it asks for.
        unsafe { Self::open(System.alloc(full), layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let Some(full) = with_header(layout, layout.size()) else {
            return std::ptr::null_mut();
        };
        // SAFETY: as in `alloc`.
        unsafe { Self::open(System.alloc_zeroed(full), layout) }
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let (Some(old), Some(new)) = (
            with_header(layout, layout.size()),
            with_header(layout, new_size),
        ) else {
            return std::ptr::null_mut();
        };
        // SAFETY: `block` is ours, of `layout`; the system allocation is `old`, and grows
        // or shrinks to `new.size()` with the same alignment, header included.
        unsafe {
            let (base, books) = Self::base(block, layout);
            let moved = System.realloc(base, old, new.size());
            if moved.is_null() {
                return moved;
            }
            leave(books, layout.size());
            let resized = Layout::from_size_align_unchecked(new_size, layout.align());
            Self::open(moved, resized)
        }
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        // SAFETY: `block` is ours, of `layout`, allocated with the layout `with_header` gives.
        unsafe {
            let (base, books) = Self::base(block, layout);
            leave(books, layout.size());
            System.dealloc(base, with_header(layout, layout.size()).unwrap());
        }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// What this thread allocated that is still live, wherever it is freed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Live {
    pub curr_bytes: i64,
    pub curr_blocks: i64,
}

/// This thread's live bytes and blocks.
pub fn live() -> Live {
    let books = &LEDGER[books()];
    Live {
        curr_bytes: books.bytes.load(Ordering::Relaxed),
        curr_blocks: books.blocks.load(Ordering::Relaxed),
    }
}

/// The allocations made on this thread by `f`.
pub fn allocations(f: impl FnOnce()) -> u64 {
    let before = ALLOCATIONS.with(Cell::get);
    f();
    ALLOCATIONS.with(Cell::get) - before
}
