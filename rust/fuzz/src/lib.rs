//! Values built from fuzz bytes, shared by the fuzz targets: a small stack
//! machine whose opcodes push leaves (ints, floats from raw bits, strings,
//! bytes, None, bools) and combine the top of the stack into Arrays, Lists
//! and Maps, nest deeply, or close a cycle by appending a value to a List
//! made earlier. The same program run twice builds two distinct but
//! structurally identical values, which is what the structural target
//! compares. Every List made is remembered so the cycles can be cut when
//! the value is dropped (a cycle would otherwise leak and trip
//! LeakSanitizer).

use tether_core::{Any, Array, Error, List, Map};

pub mod graph;

/// Depth a single opcode may add, so one input cannot ask for gigabytes.
const MAX_NEST: usize = 4096;
/// Items a single container opcode may take from the stack.
const MAX_TAKE: usize = 8;

/// A value built by [`build`] and the Lists inside it, unlinked on drop.
pub struct Built {
    pub value: Any,
    lists: Vec<List>,
}

impl Drop for Built {
    fn drop(&mut self) {
        for l in &self.lists {
            l.clear();
        }
    }
}

struct Program<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Program<'_> {
    fn byte(&mut self) -> Option<u8> {
        let b = *self.data.get(self.pos)?;
        self.pos += 1;
        Some(b)
    }

    fn take(&mut self, n: usize) -> &[u8] {
        let end = self.pos.saturating_add(n).min(self.data.len());
        let out = &self.data[self.pos..end];
        self.pos = end;
        out
    }

    fn u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        let t = self.take(8);
        b[..t.len()].copy_from_slice(t);
        u64::from_le_bytes(b)
    }
}

fn pop_n(stack: &mut Vec<Any>, n: usize) -> Vec<Any> {
    let n = n.min(stack.len());
    stack.split_off(stack.len() - n)
}

/// Run the program in `data`; the value is the Array of what is left on the
/// stack (so every pushed value takes part).
pub fn build(data: &[u8]) -> Result<Built, Error> {
    let mut p = Program { data, pos: 0 };
    let mut stack: Vec<Any> = Vec::new();
    let mut lists: Vec<List> = Vec::new();
    while let Some(op) = p.byte() {
        match op % 14 {
            0 => stack.push(Any::from(p.byte().unwrap_or(0) as i64 - 128)),
            1 => stack.push(Any::from(p.u64() as i64)),
            2 => stack.push(Any::from(f64::from_bits(p.u64()))),
            3 => stack.push(Any::from((p.byte().unwrap_or(0) as f64) / 4.0 - 8.0)),
            4 => {
                let n = p.byte().unwrap_or(0) as usize % 16;
                let s = String::from_utf8_lossy(p.take(n)).into_owned();
                stack.push(Any::string(&s)?);
            }
            5 => {
                let n = p.byte().unwrap_or(0) as usize % 16;
                let b = p.take(n).to_vec();
                stack.push(Any::bytes(&b)?);
            }
            6 => stack.push(Any::from(())),
            7 => stack.push(Any::from(p.byte().unwrap_or(0) & 1 == 1)),
            8 => {
                let n = p.byte().unwrap_or(0) as usize % (MAX_TAKE + 1);
                let items = pop_n(&mut stack, n);
                stack.push(Any::from_object(Array::new(items)?.into_object()));
            }
            9 => {
                let n = p.byte().unwrap_or(0) as usize % (MAX_TAKE + 1);
                let items = pop_n(&mut stack, n);
                let l = List::new(items)?;
                stack.push(Any::from_object(l.clone().into_object()));
                lists.push(l);
            }
            10 => {
                let n = p.byte().unwrap_or(0) as usize % (MAX_TAKE / 2 + 1);
                let items = pop_n(&mut stack, 2 * n);
                let pairs = items.chunks(2).filter(|c| c.len() == 2).map(|c| (c[0].clone(), c[1].clone())).collect();
                stack.push(Any::from_object(Map::new(pairs)?.into_object()));
            }
            11 => {
                // Nest the top value in single-element Lists or Arrays.
                let depth = (p.u64() as usize) % MAX_NEST;
                let as_list = p.byte().unwrap_or(0) & 1 == 1;
                let mut v = stack.pop().unwrap_or_else(|| Any::from(()));
                for _ in 0..depth {
                    v = if as_list {
                        let l = List::new(vec![v])?;
                        let any = Any::from_object(l.clone().into_object());
                        lists.push(l);
                        any
                    } else {
                        Any::from_object(Array::new(vec![v])?.into_object())
                    };
                }
                stack.push(v);
            }
            12 => {
                // Close a cycle: append the top value to an earlier List.
                if let (Some(top), false) = (stack.last().cloned(), lists.is_empty()) {
                    let i = p.byte().unwrap_or(0) as usize % lists.len();
                    lists[i].push(top)?;
                }
            }
            _ => {
                if let Some(top) = stack.last().cloned() {
                    stack.push(top);
                }
            }
        }
    }
    let value = Any::from_object(Array::new(stack)?.into_object());
    Ok(Built { value, lists })
}
