//! Member I/O plans. (Being written.)
