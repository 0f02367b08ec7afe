//! A slab: values addressed by a reusable `u32` index, so hot paths allocate nothing once warm.

pub struct Slab<T> {
    items: Vec<Option<T>>,
    free: Vec<u32>,
    live: usize,
}

impl<T> Slab<T> {
    pub fn with_capacity(capacity: usize) -> Slab<T> {
        Slab { items: Vec::with_capacity(capacity), free: Vec::with_capacity(capacity), live: 0 }
    }

    pub fn insert(&mut self, value: T) -> u32 {
        self.live += 1;
        if let Some(index) = self.free.pop() {
            debug_assert!(self.items[index as usize].is_none());
            self.items[index as usize] = Some(value);
            return index;
        }
        self.items.push(Some(value));
        u32::try_from(self.items.len() - 1).expect("slab index fits u32")
    }

    pub fn remove(&mut self, index: u32) -> T {
        let value = self.items[index as usize].take().expect("slab entry is live");
        self.free.push(index);
        self.live -= 1;
        value
    }

    pub fn get(&self, index: u32) -> &T {
        self.items[index as usize].as_ref().expect("slab entry is live")
    }

    pub fn get_mut(&mut self, index: u32) -> &mut T {
        self.items[index as usize].as_mut().expect("slab entry is live")
    }

    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        self.live
    }

}
