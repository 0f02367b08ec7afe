//! Linux md as the kernel runs it, beside the stateless planner: the raid4/5/6 stripe cache
//! (`stripe_cache`), whose heads keep their pages between requests.

pub mod stripe_cache;

pub use stripe_cache::{HeadIo, StripeCache, WriteBio};
