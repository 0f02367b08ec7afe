//! PyO3 glue. (Being written.)
