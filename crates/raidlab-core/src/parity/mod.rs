//! Parity maths: XOR P and RAID6 Q over GF(2^8). (Being written.)
