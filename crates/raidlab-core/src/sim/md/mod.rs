//! Linux md as the kernel runs it, beside the stateless planner: the raid4/5/6 stripe cache
//! (`stripe_cache`), whose heads keep their pages between requests, and the CPU of the threads
//! that handle them (`raid5d`).

pub mod raid5d;
pub mod stripe_cache;

pub use raid5d::{Raid5dCpu, Raid5dThreads};
pub use stripe_cache::{HeadIo, StripeCache, WriteBio};
